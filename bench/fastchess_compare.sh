#!/usr/bin/env bash
# Does `spar fastchess` play what fastchess plays for the same command line? Runs one
# node-limited command line (spar's own engine, `spar uci`, on both sides) through a real
# fastchess and through `spar fastchess`, then compares the two PGNs with python-chess:
# the number of games, each game's FEN tag (its opening), its White and Black (colours),
# the pair structure (round k's two games: the same opening, the engines' colours swapped)
# and, where the openings agree, whether the moves and results agree.
#
# Usage: bench/fastchess_compare.sh FASTCHESS_PATH [options]
#   --rounds N     rounds of 2 games (default 20)
#   --nodes N      node limit per move (default 1000)
#   --order O      -openings order=sequential|random (default: both, one after the other)
#   --concurrency N  (default 2)
#   --spar PATH    the spar binary (default: target/release/spar, built if missing)
# Needs python3 with python-chess (`pip install chess`). Never run in CI (it needs a
# fastchess build; see runner/tests/data/compat/README.md for how one was made).
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
[ $# -ge 1 ] || { usage; exit 2; }
case "$1" in -h|--help) usage; exit 0 ;; esac
FASTCHESS=$(realpath "$1"); shift
[ -x "$FASTCHESS" ] || { echo "fastchess_compare.sh: $FASTCHESS is not an executable: give a fastchess build" >&2; exit 2; }
ROUNDS=20 NODES=1000 ORDERS="sequential random" CONC=2 SPAR=""
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) ROUNDS=$2; shift 2 ;;
        --nodes) NODES=$2; shift 2 ;;
        --order) ORDERS=$2; shift 2 ;;
        --concurrency) CONC=$2; shift 2 ;;
        --spar) SPAR=$(realpath "$2"); shift 2 ;;
        *) echo "fastchess_compare.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "$SPAR" ]; then
    SPAR="${CARGO_TARGET_DIR:-$root/target}/release/spar"
    [ -x "$SPAR" ] || (cd "$root" && cargo build --release -p runner)
fi
python3 -c 'import chess.pgn' 2>/dev/null || { echo "fastchess_compare.sh: needs python-chess (pip install chess)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -n 200 "$root/data/books/8moves_v3.epd" >"$work/book.epd"

echo "fastchess: $("$FASTCHESS" -version 2>/dev/null | head -n 1)"
echo "spar:      $("$SPAR" fastchess -version)"
for order in $ORDERS; do
    args="-engine cmd=$SPAR args=uci name=dev option.rfp_margin=40 -engine cmd=$SPAR args=uci name=base
          -each proto=uci nodes=$NODES -rounds $ROUNDS -games 2 -repeat -concurrency $CONC
          -openings file=book.epd format=epd order=$order start=5 -srand 123"
    # shellcheck disable=SC2086
    (cd "$work" && rm -f fc.pgn sp.pgn &&
        "$FASTCHESS" $args -pgnout file=fc.pgn >fc.out 2>&1 &&
        "$SPAR" fastchess $args -pgnout file=sp.pgn >sp.out 2>sp.err)
    echo
    echo "== order=$order: -rounds $ROUNDS -games 2 -repeat, nodes=$NODES, concurrency $CONC, start=5, -srand 123"
    python3 - "$work/fc.pgn" "$work/sp.pgn" <<'EOF'
import sys, chess.pgn

def games(path):
    # In game order: fastchess writes games as they end (out of order with concurrency);
    # its Round tag is the round k (spar's is "k.1"/"k.2"), and within a round the game
    # with the first engine (dev) as White is the first, as both number them.
    out = []
    with open(path) as f:
        while (g := chess.pgn.read_game(f)) is not None:
            h = g.headers
            rnd = int(h["Round"].split(".")[0])
            out.append((rnd, h["White"] != "dev", h.get("FEN", "startpos"), h["White"],
                        h["Black"], h["Result"], [m.uci() for m in g.mainline_moves()]))
    out.sort(key=lambda g: (g[0], g[1]))
    rounds = [g[0] for g in out]
    assert rounds == [k // 2 + 1 for k in range(len(out))], f"{path}: rounds {rounds}"
    return [g[2:] for g in out]

fc, sp = games(sys.argv[1]), games(sys.argv[2])
print(f"games: fastchess {len(fc)}, spar {len(sp)}")
def pairs_ok(gs):
    # Games 2k-1 and 2k: one opening, colours swapped, first engine White in the odd game.
    return all(gs[i][0] == gs[i + 1][0] and gs[i][1] == gs[i + 1][2] == "dev"
               and gs[i][2] == gs[i + 1][1] == "base" for i in range(0, len(gs) - 1, 2))
print(f"pair structure (same FEN, colours swapped, dev White first): fastchess {pairs_ok(fc)}, spar {pairs_ok(sp)}")
n = min(len(fc), len(sp))
same_fen = sum(fc[i][0] == sp[i][0] for i in range(n))
same_colours = sum(fc[i][1:3] == sp[i][1:3] for i in range(n))
same_moves = sum(fc[i][0] == sp[i][0] and fc[i][4] == sp[i][4] for i in range(n))
same_result = sum(fc[i][0] == sp[i][0] and fc[i][3] == sp[i][3] for i in range(n))
print(f"game k has the same FEN: {same_fen}/{n}; same White/Black: {same_colours}/{n}")
print(f"same FEN and the same moves: {same_moves}/{n}; same FEN and the same result: {same_result}/{n}")
fc_set, sp_set = {g[0] for g in fc}, {g[0] for g in sp}
print(f"distinct openings: fastchess {len(fc_set)}, spar {len(sp_set)}, in both {len(fc_set & sp_set)}")
EOF
done
