#!/usr/bin/env bash
# Perft speed of spar for each slider-attack backend.
#
# Builds `spar` (release: fat LTO, codegen-units=1, panic=abort) four times, each into its own
# target dir so the builds do not invalidate each other:
#   magic          default features (compile-time fixed-shift magics)
#   magic_runtime  --features magic_runtime
#   kindergarten   --features kindergarten
#   pext           --features pext, RUSTFLAGS += "-C target-feature=+bmi2"
# then runs each on the start position (depth 6) and Kiwipete (depth 5) and prints nodes/second
# from the BEST (minimum) wall time of N runs, timed outside the process. The runs are
# interleaved (run 1 of every backend, then run 2, ...) so slow drift hits all backends alike.
#
# Usage: bench/perft_backends.sh [--runs N] [--rev REV]
#   --runs N   timed runs per backend and position (default 3)
#   --rev REV  build the committed revision REV (`git archive` into a temporary directory,
#              removed on exit) instead of the work tree; useful while others edit the tree.
# Environment: RUSTFLAGS (applied to all four builds), BENCH_TARGET_ROOT (parent of the four
# target dirs; default target/bench-backends in the repo: kept, so re-runs are incremental).
set -euo pipefail

runs=3
rev=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --runs) runs="${2:?--runs needs a number}"; shift 2 ;;
        --runs=*) runs="${1#--runs=}"; shift ;;
        --rev) rev="${2:?--rev needs a git revision}"; shift 2 ;;
        --rev=*) rev="${1#--rev=}"; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $1 (try --help)" >&2; exit 2 ;;
    esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "--runs must be a positive integer" >&2; exit 2; }

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
root="${BENCH_TARGET_ROOT:-$repo/target/bench-backends}"
base_flags="${RUSTFLAGS:-}"

src="$repo"
# The work tree is shared: never let the benchmark rewrite its Cargo.lock. A --rev copy is ours,
# so there cargo may bring a stale committed lock file up to date.
locked=(--locked)
label="$(git -C "$repo" describe --always --dirty 2>/dev/null || echo '?') (work tree)"
if [[ -n "$rev" ]]; then
    tmp="$(mktemp -d "${TMPDIR:-/tmp}/perft-backends.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    src="$tmp/spar-src"
    locked=()
    mkdir -p "$src"
    git -C "$repo" archive "$rev" | tar -x -C "$src"
    label="$(git -C "$repo" rev-parse --short "$rev^{commit}") (--rev $rev)"
fi

backends=(magic magic_runtime kindergarten pext)
declare -A bin
for b in "${backends[@]}"; do
    flags="$base_flags" features=()
    case "$b" in
        magic) ;;
        pext) features=(--features pext); flags="${flags:+$flags }-C target-feature=+bmi2" ;;
        *) features=(--features "$b") ;;
    esac
    echo "== building spar $label [$b] (RUSTFLAGS='$flags', target dir $root/$b)" >&2
    (cd "$src" && RUSTFLAGS="$flags" CARGO_TARGET_DIR="$root/$b" \
        cargo build --release "${locked[@]}" -p runner --bin spar "${features[@]}")
    bin[$b]="$root/$b/release/spar"
done

# Sanity check that the pext build really contains PEXT instructions.
if command -v objdump >/dev/null; then
    n_pext="$(objdump -d --no-show-raw-insn "${bin[pext]}" | grep -c $'\tpext' || true)"
    echo "== pext build: $n_pext PEXT instructions in the binary" >&2
    [[ "$n_pext" -gt 0 ]] || echo "WARNING: pext build has no PEXT instructions (fell back to magic?)" >&2
fi

names=("startpos" "kiwipete")
fens=("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
      "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
depths=(6 5)
expected=(119060324 193690690)

# Our own builds are finished here, so any rustc still running belongs to someone else. (The
# load averages still include our build for a minute or so; the rustc count is what matters.)
echo "== load before runs: $(uptime); other rustc processes: $(pgrep -c -x rustc || true)" >&2
declare -A best
for i in "${!names[@]}"; do
    for ((r = 1; r <= runs; r++)); do
        for b in "${backends[@]}"; do
            t0="$(date +%s.%N)"
            out="$("${bin[$b]}" perft --depth "${depths[$i]}" --fen "${fens[$i]}")"
            t1="$(date +%s.%N)"
            nodes="$(sed -n 's/^Nodes searched: //p' <<<"$out")"
            if [[ "$nodes" != "${expected[$i]}" ]]; then
                echo "ERROR: [$b] ${names[$i]}: $nodes nodes, expected ${expected[$i]}" >&2
                exit 1
            fi
            secs="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')"
            printf '  %-8s %-13s run %d: %ss\n' "${names[$i]}" "$b" "$r" "$secs" >&2
            key="$b/$i"
            if [[ -z "${best[$key]:-}" ]] || awk -v s="$secs" -v m="${best[$key]}" 'BEGIN { exit !(s < m) }'; then
                best[$key]="$secs"
            fi
        done
    done
done
echo "== load after runs: $(uptime); other rustc processes: $(pgrep -c -x rustc || true)" >&2

echo
echo "spar $label perft by backend;" \
    "RUSTFLAGS='${base_flags}' (+bmi2 for pext); best of $runs wall-clock runs"
printf '%-14s %15s %15s %12s %12s\n' backend "startpos d6" "kiwipete d5" "start vs magic" "kiwi vs magic"
for b in "${backends[@]}"; do
    awk -v b="$b" -v n0="${expected[0]}" -v n1="${expected[1]}" \
        -v s0="${best[$b/0]}" -v s1="${best[$b/1]}" -v m0="${best[magic/0]}" -v m1="${best[magic/1]}" \
        'BEGIN { printf "%-14s %11.0f n/s %11.0f n/s %14.3f %12.3f\n", b, n0 / s0, n1 / s1, m0 / s0, m1 / s1 }'
done
