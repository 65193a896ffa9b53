#!/usr/bin/env bash
# Before/after speed of two spar binaries on the self-play hot paths: `spar match`
# (builtin engines, node limit), `spar datagen`, and (issue 30: the job contract) an SPRT
# and an SPSA tune of GAMES games each. Runs alternate between the binaries so
# that load drifts hit both alike; reports wall games/s and CPU seconds per game (user+sys,
# less sensitive to other load than wall time), best and median of the runs.
#
#   bench/before_after.sh OLD_SPAR NEW_SPAR [RUNS] [GAMES]
#
# Defaults: 3 runs of 200 games at nodes=5000, concurrency 2; datagen 40 games. JOBS (env)
# picks the jobs: default "match datagen sprt tune". At 200 games each run of the four takes
# about 1 to 2 minutes on 2 cores.
set -euo pipefail
old=$(realpath "$1"); new=$(realpath "$2"); runs=${3:-3}; games=${4:-200}
jobs=${JOBS:-match datagen sprt tune}
has() { case " $jobs " in *" $1 "*) return 0;; esac; return 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
measure() { # label binary command...
  local label=$1 bin=$2; shift 2
  local t0 t1 u
  t0=$(date +%s.%N)
  /usr/bin/time -o cpu.txt -f '%U %S' "$bin" "$@" >/dev/null 2>&1
  u=$(tail -1 cpu.txt)
  t1=$(date +%s.%N)
  echo "$label $(echo "$t1 - $t0" | bc) $(echo "$u" | awk '{print $1+$2}')"
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$runs"); do
  for which in old new; do
    bin=$old; [ $which = new ] && bin=$new
    rm -f d.vf* t.csv* t.txt
    has match && measure "match-$which" "$bin" match --engine name=a --engine name=b --each nodes=5000 \
      --games "$games" --concurrency 2 --seed "$i" --quiet
    has datagen && measure "datagen-$which" "$bin" datagen --out d.vf --games 40 --nodes 5000 --seed "$i" \
      --concurrency 2 --quiet
    has sprt && measure "sprt-$which" "$bin" sprt --engine name=dev option.rfp_margin=60 --engine name=base \
      --each nodes=5000 --elo0 0 --elo1 5 --games "$games" --concurrency 2 --seed "$i" --quiet
    has tune && measure "tune-$which" "$bin" tune --param rfp_margin --param lmr_base --each nodes=5000 \
      --iterations $((games / 4)) --pairs-per-iteration 2 --no-verify --concurrency 2 --seed "$i" \
      --csv t.csv --out t.txt --quiet
    true
  done
done | awk -v games="$games" '
  { wall[$1]=wall[$1] " " $2; cpu[$1]=cpu[$1] " " $3; n[$1]++ }
  END {
    for (k in wall) {
      g = (k ~ /^datagen/) ? 40 : games
      split(wall[k], w, " "); split(cpu[k], c, " ")
      best=1e9; bc=1e9
      for (i in w) { if (w[i] < best) best = w[i]; if (c[i] < bc) bc = c[i] }
      printf "%-14s best %7.2f games/s   best %.3f CPU s/game   (%d runs)\n", k, g/best, bc/g, n[k]
    }
  }' | sort
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
