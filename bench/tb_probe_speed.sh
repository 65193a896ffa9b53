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
#
# With FATHOM_SRC=DIR (a checkout of https://github.com/jdart1/Fathom, e.g. in /tmp; never
# commit it) Fathom, the C prober derived from Stockfish's, is built with `cc -O3` and
# measured the same way.
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

if [[ -n "${FATHOM_SRC:-}" ]]; then
    cat >"$tmp/fathom_speed.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tbprobe.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct { uint64_t w, b, k, q, r, bi, n, p; int turn; } Pos;

static int parse(const char *fen, Pos *p) {
    memset(p, 0, sizeof *p);
    int rank = 7, file = 0;
    for (; *fen && *fen != ' '; fen++) {
        char c = *fen;
        if (c == '/') { rank--; file = 0; continue; }
        if (c >= '1' && c <= '8') { file += c - '0'; continue; }
        uint64_t bit = 1ULL << (rank * 8 + file++);
        if (c >= 'a') p->b |= bit; else p->w |= bit;
        switch (c | 32) {
        case 'k': p->k |= bit; break; case 'q': p->q |= bit; break;
        case 'r': p->r |= bit; break; case 'b': p->bi |= bit; break;
        case 'n': p->n |= bit; break; case 'p': p->p |= bit; break;
        default: return 0;
        }
    }
    p->turn = fen[0] == ' ' && fen[1] == 'w';
    return 1;
}

static long long pass(Pos *ps, int n) {
    long long sum = 0;
    for (int i = 0; i < n; i++) {
        unsigned r = tb_probe_wdl(ps[i].w, ps[i].b, ps[i].k, ps[i].q, ps[i].r, ps[i].bi,
                                  ps[i].n, ps[i].p, 0, 0, 0, ps[i].turn);
        if (r != TB_RESULT_FAILED) sum += (long long)r - 2;
    }
    return sum;
}

int main(int argc, char **argv) {
    if (argc < 4 || !tb_init(argv[1]) || TB_LARGEST == 0) { fprintf(stderr, "tb_init failed\n"); return 2; }
    FILE *f = fopen(argv[2], "r");
    int rounds = atoi(argv[3]), n = 0, cap = 1 << 20;
    Pos *ps = malloc(sizeof(Pos) * cap);
    char line[256];
    while (fgets(line, sizeof line, f) && n < cap) if (parse(line, &ps[n])) n++;
    long long check = pass(ps, n);
    double best = 1e30;
    for (int i = 0; i < rounds; i++) {
        double t = now();
        long long s = pass(ps, n);
        t = now() - t;
        if (t < best) best = t;
        if (s != check) { fprintf(stderr, "checksum changed\n"); return 1; }
    }
    printf("fathom %lld probes/s (best of %d rounds of %d positions) checksum %lld\n",
           (long long)(n / best), rounds, n, check);
    return 0;
}
C
    cc -O3 -std=gnu11 -I "$FATHOM_SRC/src" "$tmp/fathom_speed.c" "$FATHOM_SRC/src/tbprobe.c" \
        -o "$tmp/fathom_speed" -lpthread
    "${pin[@]}" "$tmp/fathom_speed" "$dir" "$tmp/positions.fen" "$rounds"
fi
