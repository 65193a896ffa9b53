#!/usr/bin/env bash
# spar as OpenBench's match runner, driven by OpenBench's own client code. Not the whole
# loop (a server handing out a workload, the client downloading engines and books from
# GitHub and reporting back: see bench/README.md for why not, here): this runs the part of
# the client that touches the match runner, unmodified, from a checkout of OpenBench.
#
#   1. Client/worker.py's compare_versions() accepts `fastchess-ob` (a symlink to spar) as
#      fastchess >= 1.8.1, as server_configure_match_runner() does before using it.
#   2. build_runner_command() builds the match runner's command line from a workload (an
#      SPRT, N= node time control, win/draw adjudication, an EPD book in random order),
#      exactly as for fastchess.
#   3. run_and_parse_runner() starts `./fastchess-ob …` with it and parses its stdout with
#      update_results() into the trinomial, pentanomial, crash and time-loss counts it
#      reports to the server (collected here from its results queue).
#   4. MatchRunner.kill_everything() ends the runner with `pkill -KILL -f fastchess-ob` (and
#      the engines' names): a `pkill` shim first on PATH only logs what it is asked, so
#      nothing is ended by name; this script ends only what it started.
#   5. The counts are compared with the games spar wrote to the PGN the client named.
#
# Usage: bench/openbench_loop.sh OPENBENCH_DIR [--spar PATH] [--rounds N] [--nodes N]
#                                [--python PYTHON]
#   OPENBENCH_DIR  a checkout of github:AndyGrant/OpenBench (outside this repository)
#   --python       a python3 with OpenBench's client requirements (requests, psutil,
#                  py-cpuinfo) and python-chess (default: python3)
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
[ $# -ge 1 ] || { usage; exit 2; }
case "$1" in -h|--help) usage; exit 0 ;; esac
OB=$(realpath "$1"); shift
[ -f "$OB/Client/worker.py" ] || { echo "openbench_loop.sh: $OB/Client/worker.py not found: give a checkout of OpenBench" >&2; exit 2; }
ROUNDS=16 NODES=1000 SPAR="" PY=python3
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) ROUNDS=$2; shift 2 ;;
        --nodes) NODES=$2; shift 2 ;;
        --spar) SPAR=$(realpath "$2"); shift 2 ;;
        --python) PY=$2; shift 2 ;;
        *) echo "openbench_loop.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "$SPAR" ]; then
    SPAR="${CARGO_TARGET_DIR:-$root/target}/release/spar"
    [ -x "$SPAR" ] || (cd "$root" && cargo build --release -p runner)
fi
"$PY" -c 'import requests, psutil, cpuinfo, chess' 2>/dev/null || {
    echo "openbench_loop.sh: $PY lacks OpenBench's client requirements or python-chess (pip install requests psutil py-cpuinfo chess)" >&2
    exit 2
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$OB/Client" "$work/Client"
cd "$work/Client"
mkdir -p Engines Books PGNs "$work/shim"
ln -s "$SPAR" fastchess-ob
# The two engines OpenBench would have built: spar's UCI engine, dev with a patch.
printf '#!/bin/sh\nexec "%s" uci\n' "$SPAR" >Engines/dev
printf '#!/bin/sh\nexec "%s" uci\n' "$SPAR" >Engines/base
chmod +x Engines/dev Engines/base
cp "$root/data/books/8moves_v3.epd" Books/spar.epd
# pkill: log, never kill.
cat >"$work/shim/pkill" <<'EOF'
#!/bin/sh
echo "pkill $*" >>"$PKILL_LOG"
EOF
chmod +x "$work/shim/pkill"
export PKILL_LOG="$work/pkill.log"
: >"$PKILL_LOG"

PATH="$work/shim:$PATH" ROUNDS=$ROUNDS NODES=$NODES "$PY" - <<'EOF'
import os, queue, re, sys, threading, time, types
sys.path.insert(0, os.getcwd())
import worker  # OpenBench's Client/worker.py, unmodified

found = worker.compare_versions(os.path.abspath('fastchess-ob'), '1.8.1')
print(f"1. compare_versions(fastchess-ob, '1.8.1'): {found!r} (the version line: "
      f"{os.popen('./fastchess-ob --version').read().strip()!r})")
assert found, 'OpenBench would not accept spar as fastchess-ob'

rounds, nodes = int(os.environ['ROUNDS']), int(os.environ['NODES'])
engine = lambda opts: {'engine': 'spar', 'options': opts, 'time_control': f'N={nodes}'}
config = types.SimpleNamespace(workload={
    'test': {'id': 7, 'type': 'SPRT', 'book': {'name': 'spar.epd'}, 'book_index': 3,
             'book_seed': 4242, 'win_adj': 'movecount=3 score=400',
             'draw_adj': 'movenumber=40 movecount=8 score=10', 'syzygy_adj': 'DISABLED',
             'syzygy_wdl': 'DISABLED',
             'dev': engine('Threads=1 Hash=16 rfp_margin=40'), 'base': engine('Threads=1 Hash=16')},
    'distribution': {'concurrency-per': 2, 'rounds-per-runner': rounds},
    'result': {'id': 9}})
timestamp = int(time.time())
command = worker.build_runner_command(config, 'dev', 'base', 1.0, timestamp, 0)
print(f"2. build_runner_command: {command}")

results, abort = queue.Queue(), threading.Event()
worker.run_and_parse_runner(config, command, 0, results, abort)
got = {'trinomial': [0] * 3, 'pentanomial': [0] * 5, 'crashes': 0, 'timelosses': 0, 'illegals': 0}
while not results.empty():
    r = results.get()
    for k in ('trinomial', 'pentanomial'):
        got[k] = [a + b for a, b in zip(got[k], r[k])]
    for k in ('crashes', 'timelosses', 'illegals'):
        got[k] += r[k]
print(f"3. run_and_parse_runner reported: {got}")

worker.MatchRunner.kill_everything('dev', 'base')
print(f"4. kill_everything asked: {open(os.environ['PKILL_LOG']).read().strip().splitlines()}")

# What spar wrote: the PGN the client named, in rounds (Round "k.1"/"k.2").
import chess.pgn
pgn = worker.MatchRunner.pgn_name(config, timestamp, 0)
games = []
with open(pgn) as f:
    while (g := chess.pgn.read_game(f)) is not None:
        games.append(g.headers)
lookup = {'0-1': 0, '1/2-1/2': 1, '1-0': 2}
want = {'trinomial': [0] * 3, 'pentanomial': [0] * 5, 'crashes': 0, 'timelosses': 0, 'illegals': 0}
by_round = {}
for h in games:
    by_round.setdefault(int(h['Round'].split('.')[0]), []).append(h)
for rnd, (a, b) in sorted(by_round.items()):
    # The dev engine is named `spar-dev` (engine-branch); it is White in a round's first game.
    first, second = (a, b) if a['White'].endswith('-dev') else (b, a)
    r1, r2 = lookup[first['Result']], lookup[second['Result']]
    want['trinomial'][r1] += 1
    want['trinomial'][2 - r2] += 1
    want['pentanomial'][r1 + 2 - r2] += 1
for h in games:
    t = h.get('Termination', '')
    want['crashes'] += t in ('abandoned', 'stalled connection')
    want['timelosses'] += t == 'time forfeit'
    want['illegals'] += t == 'illegal move'
print(f"5. spar's PGN {pgn}: {len(games)} games, {want}")
assert got == want, f'OpenBench counted {got}, spar recorded {want}'
print("OpenBench's client counted what spar recorded.")
EOF
