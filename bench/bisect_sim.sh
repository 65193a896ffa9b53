#!/usr/bin/env bash
# Not a speed test: the error and the cost of `spar bisect`, simulated with `spar sim --bisect`
# (issue 55). Whole bisects over 8 to 128 commits, the drop looked for D = 5 and 10
# normalized Elo, the culprit's true drop 0.5 to 3 times D, alpha = beta = 0.05, a random
# culprit per run; then a drop spread half and half over two adjacent commits. Writes
# bench/results/bisect_sim.csv and bisect_sim_spread.csv and prints the tables
# (summarised in bench/README.md and docs/bisect.md). Deterministic for the seed.
#
#   bench/bisect_sim.sh [SPAR] [RUNS]      (defaults: target/ci/spar, 2000 runs a row)
set -euo pipefail
spar=${1:-target/ci/spar}
runs=${2:-2000}
out=bench/results
mkdir -p "$out"
uptime
time "$spar" sim --bisect --commits 8,16,32,64,128 --drop 5,10 \
  --true-drop 0.5x,0.75x,1x,1.5x,2x,3x --runs "$runs" --csv "$out/bisect_sim.csv"
time "$spar" sim --bisect --commits 16,64 --drop 10 --true-drop 1x,2x --spread 0.5 \
  --runs "$runs" --csv "$out/bisect_sim_spread.csv"
uptime
