#!/usr/bin/env bash
# Byte-identity evidence for refactors: runs node-limited matches (concurrency 1 and 2),
# an SPRT, datagen, a short SPSA run and (with `track`) a report with one spar binary and writes every output file
# into OUT_DIR. Run it with the old and the new binary, then `diff -r` the two folders.
# Fields that legitimately change between runs (wall time, command line) are removed from
# the JSON summaries.
#
#   bench/identity.sh /path/to/old/spar /tmp/id-old
#   bench/identity.sh target/release/spar /tmp/id-new
#   diff -r /tmp/id-old /tmp/id-new && echo identical
set -euo pipefail
spar=$(realpath "$1")
out=$2
rm -rf "$out"
mkdir -p "$out"
cd "$out"
strip_json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [d.pop(k,None) for k in ("duration_seconds","command_line")]; json.dump(d,open(sys.argv[1],"w"),indent=1,sort_keys=True)' "$1"; }
for c in 1 2; do
  "$spar" match --engine name=dev option.rfp_margin=60 --engine name=base --each nodes=2000 \
    --games 24 --seed 7 --concurrency $c --quiet --pgnout m$c.pgn --results m$c.csv --json m$c.json \
    --dump-positions m$c.vf format=both >m$c.txt
  strip_json m$c.json
done
"$spar" sprt --engine name=dev option.material_mg_knight=150 option.Eval=hce --engine name=base --each nodes=1500 \
  --elo0 0 --elo1 10 --seed 3 --concurrency 2 --quiet --results s.csv --json s.json >s.txt
strip_json s.json
"$spar" match --engine name=a --engine name=b --each nodes=1000 --games 8 --seed 5 --concurrency 2 \
  --quiet --maxmoves 40 --resign movecount=3 score=500 --draw movenumber=20 movecount=4 score=10 \
  --pgnout adj.pgn --results adj.csv >adj.txt
for c in 1 2; do
  "$spar" datagen --out d$c.vf --games 12 --nodes 1000 --seed 9 --concurrency $c --format both --quiet >/dev/null
done
"$spar" tune --param rfp_margin --param lmr_base --iterations 4 --pairs-per-iteration 2 --each nodes=800 \
  --seed 4 --concurrency 2 --quiet --csv t.csv --out t.txt >/dev/null
strip_json t.csv.verify.json
# The track! report, with a spar built with `track` (skipped otherwise): its counts, and,
# with a spar whose report shards (`--slurm --plan-only`), the merge of 3 shards played by
# hand, which must be the local report byte for byte (only the local one is kept).
rep="report --engine name=dev option.rfp_margin=40 --engine name=base --each nodes=400 --games 12 --seed 3 --quiet --no-build"
if "$spar" $rep --concurrency 2 --out r >r.txt 2>/dev/null; then
  if "$spar" report --help | grep -q -- --plan-only; then
    "$spar" $rep --slurm --plan-only --shards 3 --run-dir r-run --out r-merged >/dev/null
    for i in 0 1 2; do "$spar" shard r-run --index $i --concurrency 2; done
    "$spar" merge r-run >r-merged.txt 2>/dev/null
    cmp r.txt r-merged.txt
    for f in stats.csv stats.json report.html; do cmp r/$f r-merged/$f; done
    rm -rf r-run r-merged r-merged.txt
  fi
fi
# Wall-clock fields vary run to run: PGN move times, the CSV's duration_ms column.
for f in *.pgn; do sed -E -i 's/(^| )[0-9]+\.[0-9]{3}s,/\1T,/g; s/^\[Date "[0-9.]+"\]$/[Date "D"]/' "$f"; done
for f in *.csv; do [ "$(head -c 4 "$f")" = pair ] && sed -E -i 's/,[0-9]+$/,T/' "$f"; done
ls -l
