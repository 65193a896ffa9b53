#!/usr/bin/env bash
# Byte-identity evidence for the cluster paths (issue 30): the same node-limited runs as
# `--slurm --shards 3` jobs on a real Slurm, their merges and status views, next to the
# local runs they must equal. Run it with the old and the new binary, then `diff -r`:
#
#   eval "$(ci/slurm-local.sh up)"           # a local single-node Slurm (root, apt)
#   bench/identity_cluster.sh /path/to/old/spar /tmp/idc-old [OLD_TRACK_SPAR]
#   bench/identity_cluster.sh target/release/spar /tmp/idc-new [NEW_TRACK_SPAR]
#   diff -r -x '*.lock' -x '*.run.json' -x logs -x jobs.json -x manifest.json /tmp/idc-old /tmp/idc-new
#
# Inside one folder, the script itself checks what must be equal whatever the binary:
# a sharded tune's trajectory and values are the local tune's (`--delay 2`), a sharded
# datagen file is the local one, a sharded match's results and PGN are the local ones, and
# (when the binary has it: `spar report --slurm`) a sharded report's statistics counts are
# the local report's. It prints one line per check and fails on the first difference.
# Wall-clock fields (elapsed, ETA, ages, games/s, dates, move times) are blanked in the
# status views and in the copies compared (`*.cmp`). The report needs a spar built with
# `--features track` (TRACK_SPAR, the third argument; without it the report is skipped).
set -euo pipefail
spar=$(realpath "$1")
out=$2
track=${3:+$(realpath "$3")}
[ -n "${SLURM_CONF:-}" ] || { echo "SLURM_CONF is not set: eval \"\$(ci/slurm-local.sh up)\" first" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out"
cd "$out"
same() { # label a b
  if cmp -s "$2" "$3"; then echo "same: $1"; else echo "DIFFERENT: $1 ($2 vs $3)"; diff "$2" "$3" | head -20; exit 1; fi
}
blank_times() { # file...: wall-clock numbers out
  sed -E -i 's/(^| )[0-9]+\.[0-9]{3}s,/\1T,/g; s/^\[Date "[0-9.]+"\]$/[Date "D"]/;
    s/[0-9]+(\.[0-9]+)? (games|pairs)\/s/R \2\/s/g; s/(elapsed|ETA|eta|ago|age|running for|took)[^,;)]*/\1 T/g;
    s/[0-9]+(\.[0-9]+)? ?(s|min|h) (ago|left)/T \3/g' "$@"
}
strip_json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [d.pop(k,None) for k in ("duration_seconds","command_line")]; json.dump(d,open(sys.argv[1],"w"),indent=1,sort_keys=True)' "$1"; }
strip_csv() { for f in "$@"; do [ "$(head -c 4 "$f")" = pair ] && sed -E -i 's/,[0-9]+$/,T/' "$f"; done; }
cmp_copy() { # file...: FILE.cmp with wall-clock fields blanked
  for f in "$@"; do
    cp "$f" "$f.cmp"
    case "$f" in
      *.json) strip_json "$f.cmp" ;;
      *.csv) strip_csv "$f.cmp" ;;
      *.pgn) blank_times "$f.cmp" ;;
    esac
  done
}

# Tune: local with --delay 2, and the same as 3 shards (verification included).
TUNE="tune --param rfp_margin --param lmr_base --iterations 6 --pairs-per-iteration 2 --each nodes=600 --seed 4 --delay 2 --verify-games 40 --quiet"
"$spar" $TUNE --concurrency 2 --csv tl.csv --out tl.txt >tl.stdout
"$spar" $TUNE --slurm --run-dir tune-run --shards 3 --csv ts.csv --out ts.txt >ts.stdout
same "tune trajectory, local --delay 2 = 3 shards" tl.csv ts.csv
same "tune values, local = 3 shards" tl.txt ts.txt
cmp_copy tl.csv.verify.csv tl.csv.verify.json

# Datagen: local and 3 shards.
"$spar" datagen --out dl.vf --games 12 --nodes 800 --seed 9 --concurrency 2 --format both --quiet >/dev/null
"$spar" datagen --out ds.vf --games 12 --nodes 800 --seed 9 --format both --slurm --run-dir datagen-run --shards 3 --quiet >ds.stdout
same "datagen viriformat, local = 3 shards" dl.vf ds.vf
same "datagen text, local = 3 shards" dl.vf.txt ds.vf.txt

# Match and SPRT: local and 3 shards.
MATCH="match --engine name=dev option.rfp_margin=60 --engine name=base --each nodes=1500 --games 24 --seed 7 --quiet"
"$spar" $MATCH --concurrency 2 --results ml.csv --pgnout ml.pgn --json ml.json >ml.stdout
"$spar" $MATCH --slurm --run-dir match-run --shards 3 --results ms.csv --pgnout ms.pgn --json ms.json >ms.stdout
cmp_copy ml.json ms.json ml.csv ms.csv ml.pgn ms.pgn
same "match results, local = 3 shards" ml.csv.cmp ms.csv.cmp
same "match PGN, local = 3 shards" ml.pgn.cmp ms.pgn.cmp
# An SPRT's shards play ahead of its decision, so which pairs a sharded SPRT that decides has
# recorded when it stops depends on timing: this one has --games 24 and bounds it cannot
# reach in 12 pairs, so its games are fixed.
"$spar" sprt --engine name=dev option.rfp_margin=60 --engine name=base --each nodes=1000 \
  --elo0 0 --elo1 2 --games 24 --seed 3 --slurm --run-dir sprt-run --shards 3 --results ss.csv --json ss.json --quiet >ss.stdout
cmp_copy ss.json ss.csv

# Report: local, and 3 shards when this spar has it.
REPORT="report --engine name=dev option.rfp_margin=60 --engine name=base --each nodes=800 --games 12 --seed 5 --quiet"
if [ -n "$track" ] && "$track" $REPORT --out rl >/dev/null 2>rl.err; then
  python3 - rl/stats.json >rl.counts <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for v in d["variants"]:
    for s in v["sites"]:
        print(v["name"], json.dumps({k: s[k] for k in sorted(s) if k not in ("mean", "mean_abs", "stddev")}, sort_keys=True))
PY
  if "$track" report --help | grep -q -- --slurm; then
    "$track" $REPORT --slurm --run-dir report-run --shards 3 --out rs >/dev/null
    python3 - rs/stats.json >rs.counts <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for v in d["variants"]:
    for s in v["sites"]:
        print(v["name"], json.dumps({k: s[k] for k in sorted(s) if k not in ("mean", "mean_abs", "stddev")}, sort_keys=True))
PY
    same "report statistics counts, local = 3 shards" rl.counts rs.counts
    rm -rf rs report-run
  fi
else
  echo "report: skipped (no TRACK_SPAR given, or: $(head -1 rl.err 2>/dev/null))"
fi

# Status views of every run directory and local file, text and page.
for r in tune-run datagen-run match-run sprt-run ml.csv tl.csv; do
  "$spar" status "$r" --html "status-$r.html" >"status-$r.txt"
  blank_times "status-$r.txt" "status-$r.html"
done
# What the merges print again (they must not change a finished run's files).
for r in tune-run datagen-run match-run sprt-run; do
  "$spar" merge "$r" >"merge-$r.txt"
done
cmp_copy ms.csv ms.json
same "match results after a second merge" ml.csv.cmp ms.csv.cmp
rm -rf */logs
ls
