#!/bin/sh
# Step 4 preflight of issue 34: one probe per parameter, 10000 games each (5000 pairs).
set -e
SPAR=${1:-spar}
for p in rfp_margin lmr_divisor corr_weight; do
  grep "^$p," params.txt > "params-$p.txt"
  "$SPAR" tune --params "params-$p.txt" --each nodes=5000 --probe --probe-games 10000 \
    --concurrency 2 --seed 21 > "probe-$p.txt" 2> "probe-$p.log"
done
