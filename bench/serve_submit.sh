#!/usr/bin/env bash
# `spar submit` of a run whose registered engine needs a long build (docs/serve.md, "Nothing is
# built in the request"): the submit's wall time, then how long the scheduler's builder took
# to make the run play. Not a timed test.
#
#   bench/serve_submit.sh SPAR [BUILD_SECS] [TRIES]
#
# A tiny engine repository is made under mktemp -d: its Makefile sleeps BUILD_SECS (default
# 60) and copies a script that answers `bench` with `1000 nodes 1000 nps` and otherwise runs
# SPAR as its UCI engine. A server (no accounts) registers it; each try submits an SPRT of a
# new commit of that engine against its first (so each try needs a fresh build), times
# `spar submit` (target: < 1 s), then waits for the run to leave its build and reports when it
# started playing. The load average is printed before and after.
set -euo pipefail
spar=$(realpath "$1"); build=${2:-60}; tries=${3:-3}
tmp=$(mktemp -d); server=""
cleanup() {
  if [ -n "$server" ]; then kill -INT "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
load() { echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; }
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@b GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@b
repo="$tmp/slow"; mkdir -p "$repo"; cd "$repo"
git init --quiet --initial-branch=main
printf 'EXE ?= slow\n$(EXE): engine.sh\n\tsleep %s\n\tcp engine.sh $(EXE)\n\tchmod +x $(EXE)\n' "$build" > Makefile
printf '#!/bin/sh\nif [ "$1" = bench ]; then echo "1000 nodes 1000 nps"; exit 0; fi\nexec %s uci\n' "$spar" > engine.sh
git add . && git commit --quiet -m "the first engine" && git branch base
cd "$tmp"
"$spar" serve --bind 127.0.0.1:0 --cores 2 --data-dir "$tmp/data" >"$tmp/url.txt" 2>>"$tmp/serve.log" &
server=$!
for _ in $(seq 100); do grep -q http "$tmp/url.txt" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o 'http://[^/]*' "$tmp/url.txt")
curl -sf -X POST "$url/api/engines" -H 'Content-Type: application/json' \
  -d "{\"name\":\"slow\",\"repo\":\"$repo\",\"build\":\"make\"}" >/dev/null
echo "== spar submit of a run whose engine builds for ${build} s ($tries tries)"; load
echo "try,submit_s,run,until_playing_s"
for t in $(seq "$tries"); do
  (cd "$repo" && echo "# try $t" >> engine.sh && git commit --quiet -am "try $t")
  t0=$(date +%s.%N)
  out=$("$spar" submit --server "$url" sprt --engine name=dev engine=slow rev=main \
        --engine name=base engine=slow rev=base --each nodes=500 --elo0 0 --elo1 5 --games 4)
  t1=$(date +%s.%N)
  id=$(grep -o '/runs/[0-9]*' <<<"$out" | head -1 | cut -d/ -f3)
  # Until the run's child plays: its state is running and its engines have a binary.
  while :; do
    j=$(curl -sf "$url/api/runs/$id")
    python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if j.get("state") in ("running","finished","failed") and all(e.get("binary") for e in j.get("engines",[])) else 1)' <<<"$j" && break
    sleep 0.5
  done
  t2=$(date +%s.%N)
  printf '%s,%.3f,%s,%.1f\n' "$t" "$(echo "$t1 - $t0" | bc)" "$id" "$(echo "$t2 - $t0" | bc)"
  curl -sf -X POST "$url/api/runs/$id/stop" >/dev/null || true
done
load
