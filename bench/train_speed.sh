#!/usr/bin/env bash
# Training speed of `spar train`: positions per second of one epoch, per thread count.
#
# Builds spar (release profile), then for each thread count runs one epoch over the given
# viriformat/text files (each named --repeat times, to reach a larger epoch) and prints the
# epoch's positions/s (from spar's own `epoch 1/1 ... positions/s` line, which times the
# epoch only: not the conversion of the files, not the quantisation), the wall time of the
# whole command and the machine load (`uptime`) before and after.
#
# Usage: bench/train_speed.sh [--threads "1 2"] [--hidden H] [--repeat K] FILE...
#   --threads LIST  thread counts to measure (default "1 2")
#   --hidden H      hidden width (default 128)
#   --repeat K      name every file K times (default 1)
# Example: bench/train_speed.sh --repeat 3 /work/nnue-data/*.vf     # ~11 M positions
set -euo pipefail

threads="1 2"
hidden=128
repeat=1
files=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --threads) threads="${2:?--threads needs a list}"; shift 2 ;;
        --hidden) hidden="${2:?--hidden needs a number}"; shift 2 ;;
        --repeat) repeat="${2:?--repeat needs a number}"; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "unknown argument: $1 (try --help)" >&2; exit 2 ;;
        *) files+=("$1"); shift ;;
    esac
done
[[ ${#files[@]} -gt 0 ]] || { echo "give the training files (try --help)" >&2; exit 2; }
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || { echo "--repeat must be a positive integer" >&2; exit 2; }

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(cd "$repo" && cargo build --release --locked -p runner --bin spar >&2)
spar="${CARGO_TARGET_DIR:-$repo/target}/release/spar"

data=()
for ((i = 0; i < repeat; i++)); do data+=("${files[@]}"); done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
for t in $threads; do
    echo "load before: $(uptime | sed 's/.*load average/load average/')"
    start=$(date +%s.%N)
    out="$("$spar" train --data "${data[@]}" --out "$work/net.nnue" --hidden "$hidden" \
        --epochs 1 --threads "$t" --quiet)"
    end=$(date +%s.%N)
    rm -f "$work/net.nnue" "$work/net.nnue.ckpt"
    positions=$(sed -n 's/^data: \([0-9]*\) positions kept.*/\1/p' <<<"$out")
    rate=$(sed -n 's/^epoch 1\/1 .*  \([0-9]*\) positions\/s .*/\1/p' <<<"$out")
    epoch_s=$(sed -n 's/^epoch 1\/1 .*positions\/s  \([0-9.]*\) s$/\1/p' <<<"$out")
    printf 'threads %s  hidden %s  positions %s  epoch %s s  %s positions/s  (%s per thread)  whole command %.1f s\n' \
        "$t" "$hidden" "$positions" "$epoch_s" "$rate" "$((rate / t))" "$(echo "$end - $start" | bc)"
    echo "load after: $(uptime | sed 's/.*load average/load average/')"
done
