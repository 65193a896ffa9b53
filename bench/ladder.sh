#!/usr/bin/env bash
# The Elo ladder of issue 34: spar's embedded engine against Stockfish limited by
# UCI_LimitStrength / UCI_Elo, at 5+0.05, the built-in book, Threads=1 on both sides, one
# `spar match` per level. Every level is its own results file in OUT, so an interrupted
# ladder continues where it stopped (--resume) and a finished level is not played again.
#
#   bench/ladder.sh SPAR STOCKFISH OUT [LEVELS] [GAMES] [ENGINE WORDS...]
#
# Defaults: levels "2600 2700 2800 2850", 100 games each, concurrency 1 (CONCURRENCY env).
# ENGINE WORDS are added to spar's engine (e.g. option.EvalFile=old.nnue to measure a
# candidate). Prints each level's summary line and, last, the pooled line of every level's
# games in OUT (`spar stats` on the summed wins, draws and losses); appends them to
# OUT/ladder.txt.
set -euo pipefail
spar=$(realpath "$1"); sf=$(realpath "$2"); out=$3; levels=${4:-2600 2700 2800 2850}
games=${5:-100}; shift $(( $# < 5 ? $# : 5 ))
conc=${CONCURRENCY:-1}
mkdir -p "$out"
echo "spar $("$spar" --version 2>/dev/null | head -1) bench: $("$spar" bench 2>&1 | tail -1)" >>"$out/ladder.txt"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/ladder.txt"
for elo in $levels; do
  res="$out/sf$elo.csv"
  resume=(); [ -s "$res" ] && resume=(--resume)
  "$spar" match --engine name=spar "$@" --engine name="sf$elo" cmd="$sf" \
    option.UCI_LimitStrength=true option.UCI_Elo="$elo" option.Hash=16 \
    --each tc=5+0.05 option.Threads=1 --games "$games" --concurrency "$conc" --seed "$elo" \
    --results "$res" --pgnout "$out/sf$elo.pgn" --quiet "${resume[@]}" >"$out/sf$elo.txt" 2>&1 || {
      echo "level $elo: spar match failed (see $out/sf$elo.txt)" >&2; exit 1; }
  echo "UCI_Elo $elo: $(grep -m1 'Elo difference' "$out/sf$elo.txt")" | tee -a "$out/ladder.txt"
done
# Every level in OUT pooled: spar's wins, draws and losses from the results files (columns
# white, black and result).
wdl=$(awk -F, 'FNR > 1 {
    if ($7 == "1/2-1/2") d++
    else if (($7 == "1-0") == ($5 == "spar")) w++
    else l++
  } END { print w + 0, d + 0, l + 0 }' "$out"/sf*.csv)
echo "all levels: $("$spar" stats --wdl $wdl --names spar stockfish | sed -n 2p) ($wdl W D L)" |
  tee -a "$out/ladder.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/ladder.txt"
