#!/usr/bin/env bash
# Cluster runs on the local single-node Slurm (ci/slurm-local.sh), three measurements:
#
# 1. games/s of a sharded `spar match --slurm` against the same `spar match` run locally,
#    at the same total concurrency (SHARDS tasks x 1 CPU against --concurrency SHARDS), each
#    run long enough to take >= 2 minutes; the load average before and after each run.
# 2. the coordinator's CPU while it waits (user+sys seconds over wall seconds of the
#    `--slurm` process: it submits, polls and merges, the games are played by the tasks).
# 3. `spar status` and `spar merge` of a synthetic run of 1000 shards x 1000 pairs (2 000 000
#    result rows, written by this script next to a real manifest).
#
#   bench/cluster.sh SPAR [GAMES] [NODES] [SHARDS]
#
# Defaults: 600 games at nodes=5000 on 2 shards. Needs root for the cluster (it is started
# if SLURM_CONF does not point at a running one, and then stopped at the end).
set -euo pipefail
spar=$(realpath "$1"); games=${2:-600}; nodes=${3:-5000}; shards=${4:-2}
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); started_cluster=false
cleanup() {
  rm -rf "$tmp"
  if $started_cluster; then "$repo/ci/slurm-local.sh" down >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
if ! { [ -n "${SLURM_CONF:-}" ] && sinfo >/dev/null 2>&1; }; then
  # Stopped at the end only if this script started it.
  "$repo/ci/slurm-local.sh" status 2>/dev/null | grep -q '^up:' || started_cluster=true
  eval "$("$repo/ci/slurm-local.sh" up)"
fi
cd "$tmp"
load() { cut -d' ' -f1-3 /proc/loadavg; }
timed() { # label command... -> "label wall cpu"
  local label=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -o cpu.txt -f '%U %S' "$@" >/dev/null 2>err.txt || { cat err.txt >&2; exit 1; }
  t1=$(date +%s.%N)
  echo "$label $(echo "$t1 - $t0" | bc) $(tail -1 cpu.txt | awk '{print $1+$2}')"
}
match="match --engine name=dev option.rfp_margin=60 --engine name=base --each nodes=$nodes --games $games --seed 1 --quiet"

echo "== 1. games/s, $games games at nodes=$nodes, total concurrency $shards"
echo "load before local: $(load)"
read -r _ lw lc < <(timed local "$spar" $match --concurrency "$shards" --results l.csv)
echo "load before sharded: $(load)"
read -r _ sw sc < <(timed sharded "$spar" $match --slurm --run-dir run --shards "$shards" --results s.csv)
echo "load after: $(load)"
cmp <(cut -d, -f1-11 l.csv) <(cut -d, -f1-11 s.csv) && echo "same games: yes"
awk -v g="$games" -v lw="$lw" -v sw="$sw" 'BEGIN {
  printf "local:   %.1f s, %.3f games/s\n", lw, g / lw;
  printf "sharded: %.1f s, %.3f games/s (%.1f %% of local)\n", sw, g / sw, 100 * lw / sw }'

echo "== 2. coordinator CPU while waiting"
awk -v c="$sc" -v w="$sw" 'BEGIN { printf "coordinator: %.2f CPU s over %.1f s wall = %.2f %% of a core\n", c, w, 100 * c / w }'

echo "== 3. status and merge of 1000 shards x 1000 pairs (synthetic)"
syn=synthetic
mkdir -p "$syn"
python3 - "$tmp/run/manifest.json" "$syn" <<'EOF'
import json, os, sys
src, out = sys.argv[1], sys.argv[2]
m = json.load(open(src))
n, per = 1000, 1000
m["shards"] = n
m["total"] = n * per
m["plan"]["pairs"] = n * per
m["args"]["games"] = 2 * n * per
m["args"]["files"] = {"dump_positions": None, "json": None, "pgnout": None, "results": None, "resume": False}
m["cwd"] = os.path.abspath(out)
json.dump(m, open(os.path.join(out, "manifest.json"), "w"), indent=1)
head = "pair,game,opening,seed,white,black,result,termination,plies,white_nodes,black_nodes,duration_ms\n"
results = ["1-0", "0-1", "1/2-1/2"]
for i in range(n):
    d = os.path.join(out, "shards", str(i))
    os.makedirs(d)
    rows = [head]
    for j in range(per):
        k = i + n * j
        r0, r1 = results[k % 3], results[(k // 3) % 3]
        rows.append(f"{k},0,{k},{k * 7919},dev,base,{r0},checkmate,80,400000,400000,900\n")
        rows.append(f"{k},1,{k},{k * 7919},base,dev,{r1},checkmate,80,400000,400000,900\n")
    open(os.path.join(d, "results.csv"), "w").write("".join(rows))
EOF
du -sh "$syn" | awk '{print "synthetic records: " $1}'
read -r _ tw tc < <(timed status "$spar" status "$syn")
"$spar" status "$syn" | sed -n 2,5p
read -r _ mw mc < <(timed merge "$spar" merge "$syn" --results merged.csv)
echo "merged rows: $(($(wc -l < merged.csv) - 1))"
awk -v tw="$tw" -v mw="$mw" 'BEGIN { printf "status: %.2f s, merge (summary + 2 000 000-row CSV): %.2f s\n", tw, mw }'
echo "load at the end: $(load)"
