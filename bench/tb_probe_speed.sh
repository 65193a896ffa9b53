#!/usr/bin/env bash
# WDL probes per second on one core: spar's prober (engine::tablebase) against python-chess's
# chess.syzygy, over the same random positions covered by the tables.
#
#   bench/tb_probe_speed.sh DIR [POSITIONS] [ROUNDS]
#
# DIR: the Syzygy tables (e.g. ~/.cache/spar/syzygy/3-4); POSITIONS: how many random legal
# positions with 3 to max-pieces pieces (default 100000); ROUNDS: timed passes, the best is
# reported (default 3). Both probers map the tables they need in an untimed first pass, run
# pinned to CPU 0 (taskset) when it is available, and print the sum of the WDL values, which
# must agree. Needs python3 with python-chess and cargo.
set -euo pipefail
dir=${1:?usage: bench/tb_probe_speed.sh DIR [POSITIONS] [ROUNDS]}
n=${2:-100000}
rounds=${3:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pin=()
if command -v taskset >/dev/null; then pin=(taskset -c 0); fi

python3 - "$dir" "$n" "$tmp/positions.fen" <<'PY'
import random, sys, chess, chess.syzygy
dir, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
tb = chess.syzygy.open_tablebase(dir)
rng = random.Random(2024)
pieces = "QRBNPqrbnp"
fens = []
while len(fens) < n:
    b = chess.Board(None)
    squares = rng.sample(range(64), 4)
    b.set_piece_at(squares[0], chess.Piece(chess.KING, chess.WHITE))
    b.set_piece_at(squares[1], chess.Piece(chess.KING, chess.BLACK))
    for sq in squares[2:2 + rng.randint(1, 2)]:
        p = chess.Piece.from_symbol(rng.choice(pieces))
        if p.piece_type == chess.PAWN and chess.square_rank(sq) in (0, 7):
            break
        b.set_piece_at(sq, p)
    b.turn = rng.random() < 0.5
    if not b.is_valid():
        continue
    try:
        tb.probe_wdl(b)
    except KeyError:
        continue
    fens.append(b.fen())
open(out, "w").write("\n".join(fens) + "\n")
PY

cargo build --quiet --release -p engine --example tb_probe_speed --manifest-path "$root/Cargo.toml"
target=${CARGO_TARGET_DIR:-$root/target}
"${pin[@]}" "$target/release/examples/tb_probe_speed" "$dir" "$tmp/positions.fen" "$rounds"

"${pin[@]}" python3 - "$dir" "$tmp/positions.fen" "$rounds" <<'PY'
import sys, time, chess, chess.syzygy
dir, path, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
tb = chess.syzygy.open_tablebase(dir)
boards = [chess.Board(l.strip()) for l in open(path) if l.strip()]
checksum = sum(tb.probe_wdl(b) for b in boards)
best = float("inf")
for _ in range(rounds):
    t = time.perf_counter()
    s = sum(tb.probe_wdl(b) for b in boards)
    best = min(best, time.perf_counter() - t)
    assert s == checksum
print(f"python-chess {chess.__version__} {int(len(boards) / best)} probes/s "
      f"(best of {rounds} rounds of {len(boards)} positions) checksum {checksum}")
PY
