#!/usr/bin/env bash
# Games per second of `spar tune` (issue 21's targets), measured, never asserted:
#   1. a local tune against `spar match` at the same node limit and concurrency
#      (target: tune >= 95 % of match), for --delay 0 (sequential SPSA: each iteration
#      waits for the one before) and --delay D (iterations overlap);
#   2. a tune on Slurm (--shards C --cpus-per-shard 1) against the same tune run locally
#      at --concurrency C (target: sharded >= 90 % of local), wall clock of the whole
#      command: submission, shards, merge. Needs a Slurm cluster (`ci/slurm-local.sh up`
#      and SLURM_CONF); skipped with a NOTICE without one.
# Each run lasts about --seconds (default 120): the number of games is calibrated first.
#
# Usage: bench/tune_throughput.sh [--spar PATH] [--nodes N] [--concurrency C]
#                                 [--seconds S] [--delay D] [--pairs P] [--no-slurm]
# Report the machine's load next to the numbers (other processes steal games/s).
set -euo pipefail

spar=""
nodes=2000
conc=2
seconds=120
delay=4
pairs=8
slurm=1
while [ $# -gt 0 ]; do
    case "$1" in
        --spar) spar="$2"; shift 2 ;;
        --nodes) nodes="$2"; shift 2 ;;
        --concurrency) conc="$2"; shift 2 ;;
        --seconds) seconds="$2"; shift 2 ;;
        --delay) delay="$2"; shift 2 ;;
        --pairs) pairs="$2"; shift 2 ;;
        --no-slurm) slurm=0; shift ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
if [ -z "$spar" ]; then
    cargo build --release -p runner >&2
    spar="$(cd "$(dirname "$0")/.." && pwd)/target/release/spar"
fi
spar="$(realpath "$spar")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

now() { date +%s.%N; }
rate() { python3 -c "print(f'{$1 / ($3 - $2):.2f}')"; }

echo "spar: $spar ($("$spar" --version)), nodes=$nodes, concurrency $conc, ~${seconds}s a run"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# Calibrate: games/s of a short match.
t0=$(now)
"$spar" match --engine name=a --engine name=b --each nodes="$nodes" --games 40 \
    --concurrency "$conc" --seed 1 --quiet >/dev/null
t1=$(now)
per_sec=$(python3 -c "print(40 / ($t1 - $t0))")
games=$(python3 -c "g = int($per_sec * $seconds); print(max(g - g % (2 * $pairs), 2 * $pairs))")
iterations=$((games / (2 * pairs)))
echo "calibrated: ${games} games a run (${iterations} iterations of ${pairs} pairs)"

t0=$(now)
"$spar" match --engine name=a --engine name=b --each nodes="$nodes" --games "$games" \
    --concurrency "$conc" --seed 1 --quiet >/dev/null
t1=$(now)
match=$(rate "$games" "$t0" "$t1")
echo "match:                    $match games/s"

# nmp_verify_depth's ±1 perturbations change no move at these node limits: dev and base
# play what two identical engines play, the games of the match (same book, same seed).
tune() {
    "$spar" tune --no-verify --param nmp_verify_depth \
        --each nodes="$nodes" --iterations "$iterations" --pairs-per-iteration "$pairs" \
        --seed 1 --quiet "$@" >/dev/null
}
for d in 0 "$delay"; do
    t0=$(now)
    tune --delay "$d" --concurrency "$conc" --csv "local$d.csv"
    t1=$(now)
    r=$(rate "$games" "$t0" "$t1")
    pct=$(python3 -c "print(f'{100 * $r / $match:.1f}')")
    echo "tune --delay $d:            $r games/s  (${pct} % of match)"
    [ "$d" = "$delay" ] && local_rate=$r
done

if [ "$slurm" = 1 ] && command -v sbatch >/dev/null && sinfo >/dev/null 2>&1; then
    t0=$(now)
    tune --delay "$delay" --slurm --run-dir run --shards "$conc" --cpus-per-shard 1 --csv sharded.csv
    t1=$(now)
    r=$(rate "$games" "$t0" "$t1")
    pct=$(python3 -c "print(f'{100 * $r / $local_rate:.1f}')")
    echo "tune --slurm --shards $conc:  $r games/s  (${pct} % of the local tune --delay $delay)"
    if cmp -s "local$delay.csv" sharded.csv; then
        echo "trajectories: identical (sharded = local, byte for byte)"
    else
        echo "trajectories: DIFFER"
    fi
else
    echo "NOTICE: no Slurm cluster (ci/slurm-local.sh up; SLURM_CONF): sharded run skipped"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
