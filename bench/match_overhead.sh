#!/usr/bin/env bash
# Share of CPU time a builtin `spar match` spends OUTSIDE the search (target: < 5 % at
# nodes=1000 and above): game loop, rules and legality checks, adjudication, clocks, hash
# clearing between games, scheduling, result accounting, start-up.
#
# Usage: bench/match_overhead.sh [options]
#   --nodes LIST     node limits per move, comma-separated (default 1000,5000)
#   --games N        games per perf run (even; default 100)
#   --cg-games N     games per callgrind run (even; default 20: callgrind is ~50x slower)
#   --concurrency C  games at once (default 1)
#   --method M       perf, callgrind or both (default both; a method whose tool is missing
#                    is skipped with a NOTICE)
#   --spar PATH      profile this spar binary instead of building one (it needs symbols;
#                    frame pointers make the perf call stacks reliable)
#   --rev REV        build spar from the committed revision REV instead of the work tree
#   --keep DIR       keep the raw profiles (perf.data, callgrind.out) in DIR
# Environment: CARGO_TARGET_DIR (default target/bench-profile: a separate build with
# `-C force-frame-pointers=yes`, otherwise the release profile: fat LTO, symbols kept).
#
# What counts as search: every sample (perf) or instruction (callgrind) spent inside
# `<BuiltinPlayer as Player>::go`, the runner's one call into the engine per move, which
# does nothing but call `Searcher::search` and wrap its result (if the compiler inlines
# `go` away, `engine::search::Searcher::search` is used instead). Everything else in the
# process is overhead — including `Searcher::clear` at each new game, which is hash-table
# work but not search.
#
# * perf: `perf record -e cpu-clock -g` (a software clock, so it works in VMs without
#   hardware counters), frame-pointer call stacks, all threads; a sample is "search" if
#   any frame of its stack is the search entry point. Wall-clock sampling: load from other
#   processes does not move the share much, but small shares carry ±1/sqrt(samples) noise.
# * callgrind: inclusive instruction counts (Ir) of the entry point over the program
#   total. Deterministic and insensitive to machine load; instructions are not cycles
#   (memory stalls, e.g. in hash clearing, weigh more in time than in Ir).
# Each method runs the match twice, with 2 games and with N games, and reports the share
# outside the search for the whole N-game run and for the steady state, i.e. the difference
# of the two runs: (outside(N) - outside(2)) / (total(N) - total(2)), which removes the
# fixed start-up cost (reading the 34,700-position book, allocating hash tables, starting
# threads) that a long run amortises. The top non-search symbols (self cost) are listed,
# to show where the overhead goes.
set -euo pipefail

nodes_list="1000,5000"
games=100
cg_games=20
conc=1
method=both
spar=""
rev=""
keep=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --nodes) nodes_list="${2:?--nodes needs a list}"; shift 2 ;;
        --games) games="${2:?--games needs a number}"; shift 2 ;;
        --cg-games) cg_games="${2:?--cg-games needs a number}"; shift 2 ;;
        --concurrency) conc="${2:?--concurrency needs a number}"; shift 2 ;;
        --method) method="${2:?--method needs perf, callgrind or both}"; shift 2 ;;
        --spar) spar="${2:?--spar needs a path}"; shift 2 ;;
        --rev) rev="${2:?--rev needs a git revision}"; shift 2 ;;
        --keep) keep="${2:?--keep needs a directory}"; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $1 (try --help)" >&2; exit 2 ;;
    esac
done
for v in games cg_games; do
    [[ "${!v}" =~ ^[1-9][0-9]*$ && $((${!v} % 2)) -eq 0 ]] || { echo "--${v/_/-} must be a positive even number" >&2; exit 2; }
done
[[ "$conc" =~ ^[1-9][0-9]*$ ]] || { echo "--concurrency must be a positive integer" >&2; exit 2; }
[[ "$nodes_list" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { echo "--nodes: comma-separated positive numbers" >&2; exit 2; }
case "$method" in perf|callgrind|both) ;; *) echo "--method: perf, callgrind or both" >&2; exit 2 ;; esac

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
book="$repo/data/books/8moves_v3.epd"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/match-overhead.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
[[ -z "$keep" ]] || mkdir -p "$keep"

if [[ -z "$spar" ]]; then
    src="$repo"
    locked=(--locked)
    target="${CARGO_TARGET_DIR:-$repo/target/bench-profile}"
    if [[ -n "$rev" ]]; then
        src="$tmp/spar-src"
        locked=()
        mkdir -p "$src"
        git -C "$repo" archive "$rev" | tar -x -C "$src"
    fi
    echo "== building spar with frame pointers from $src into $target" >&2
    (cd "$src" && RUSTFLAGS="${RUSTFLAGS:-} -C force-frame-pointers=yes" \
        CARGO_PROFILE_RELEASE_STRIP=none \
        CARGO_TARGET_DIR="$target" cargo build --release "${locked[@]}" -p runner --bin spar)
    spar="$target/release/spar"
fi
[[ -x "$spar" ]] || { echo "spar not executable: $spar" >&2; exit 2; }

do_perf=0; do_cg=0
if [[ $method != callgrind ]]; then
    if command -v perf >/dev/null && perf stat -e cpu-clock true >/dev/null 2>&1; then do_perf=1
    else echo "NOTICE: perf method skipped: perf missing or not permitted (apt-get install linux-perf; kernel.perf_event_paranoid)"; fi
fi
if [[ $method != perf ]]; then
    if command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null; then do_cg=1
    else echo "NOTICE: callgrind method skipped: valgrind not installed (apt-get install valgrind)"; fi
fi

match_args() { # nodes games
    echo match --engine name=a --engine name=b --each "nodes=$1" --games "$2" \
        --concurrency "$conc" --book "$book" order=sequential --quiet
}
# A stack frame (perf) or function (callgrind) that is the search entry point. (The binary
# crate is `spar`, its library code `runner`; accept both.)
entry_re='BuiltinPlayer as [a-z_]+::engines::player::Player>::go|engine::search::Searcher::search'

# perf_profile NODES GAMES TAG: prints "total_samples search_samples", leaves the top
# non-search symbols in $tmp/perf-top-TAG.txt and the run's output in $tmp/out-TAG.
perf_profile() {
    # shellcheck disable=SC2046
    perf record -q -e cpu-clock -F 4000 -g -o "$tmp/perf-$3.data" -- \
        /usr/bin/time -f '%e %U %S' -o "$tmp/time-$3" \
        "$spar" $(match_args "$1" "$2") >"$tmp/out-$3" 2>"$tmp/err-$3" \
        || { echo "perf run failed" >&2; cat "$tmp/err-$3" >&2; exit 1; }
    # One block per sample: a header line, then one line per frame (leaf first).
    perf script -i "$tmp/perf-$3.data" -F comm,tid,ip,sym 2>/dev/null | awk -v re="$entry_re" -v top="$tmp/perf-top-$3.txt" '
        function flush() {
            if (nlines == 0) return
            total++
            if (in_search) search++; else outside[leaf]++
            nlines = 0; in_search = 0; leaf = ""
        }
        /^[^ \t]/ { flush(); nlines = 1; next }
        /^[ \t]*$/ { flush(); next }
        {
            line = $0; sub(/^[ \t]*[0-9a-f]+ /, "", line); sub(/\+0x[0-9a-f]+$/, "", line)
            if (nlines == 1) leaf = line
            nlines++
            if (line ~ re) in_search = 1
        }
        END {
            flush()
            print total + 0, search + 0
            for (s in outside) printf "%8d %6.2f %%  %s\n", outside[s], 100 * outside[s] / total, s | ("sort -rn | head -12 >" top)
        }'
}

# callgrind_profile NODES GAMES TAG: prints "total_Ir search_Ir", leaves the self-cost
# listing in $tmp/cg-self-TAG.txt.
callgrind_profile() {
    # shellcheck disable=SC2046
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg-$3.out" \
        "$spar" $(match_args "$1" "$2") >"$tmp/out-$3" 2>"$tmp/err-$3" \
        || { echo "callgrind run failed" >&2; tail "$tmp/err-$3" >&2; exit 1; }
    callgrind_annotate --inclusive=no --threshold=99 "$tmp/cg-$3.out" >"$tmp/cg-self-$3.txt" 2>/dev/null
    callgrind_annotate --inclusive=yes --threshold=100 "$tmp/cg-$3.out" 2>/dev/null | awk -v re="$entry_re" '
        /PROGRAM TOTALS/ { v = $1; gsub(",", "", v); total = v; next }
        /^ *[0-9,]+ +\(/ {
            v = $1; gsub(",", "", v)
            fn = $0; sub(/^ *[0-9,]+ +\([^)]*\) +/, "", fn); sub(/^[^:]*:/, "", fn); sub(/ \[[^]]*\]$/, "", fn)
            if (fn ~ re) incl[fn] += v   # one function may be split over several source files
        }
        END { best = 0; for (f in incl) if (incl[f] > best) best = incl[f]; printf "%.0f %.0f\n", total, best }'
}

# report LABEL UNIT small_total small_search big_total big_search
report() {
    awk -v l="$1" -v u="$2" -v st="$3" -v ss="$4" -v bt="$5" -v bs="$6" -v g="$games_now" 'BEGIN {
        printf "   %d games: %s %.0f, in search %.0f: outside the search %.2f %%\n", g, u, bt, bs, 100 * (bt - bs) / bt
        printf "   2 games (start-up + 2 games): %s %.0f, outside %.0f (%.2f %%)\n", u, st, st - ss, 100 * (st - ss) / st
        if (bt > st) printf "   steady state (the %d-game run minus the 2-game run): outside the search %.2f %%\n", g, 100 * ((bt - bs) - (st - ss)) / (bt - st)
    }' | tee "$tmp/report.txt"
    results+=("nodes=$n $1: whole run $(sed -n 1p "$tmp/report.txt" | sed 's/.*outside the search //'), steady state $(sed -n 3p "$tmp/report.txt" | sed 's/.*outside the search //')")
}

echo "== $(date -u '+%Y-%m-%d %H:%M UTC'); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
echo "== spar: $spar ($("$spar" --version)); concurrency $conc"
echo "== load before: $(uptime | sed 's/.*load average/load average/')"
IFS=, read -r -a nodes_arr <<<"$nodes_list"
results=()
for n in "${nodes_arr[@]}"; do
    if ((do_perf)); then
        echo
        echo "-- perf: nodes=$n, runs of 2 and $games games"
        read -r st ss < <(perf_profile "$n" 2 small)
        read -r bt bs < <(perf_profile "$n" "$games" big)
        grep -E '^Score of ' "$tmp/out-big" | sed 's/^/   /' || true
        read -r wall user sys <"$tmp/time-big"
        echo "   spar itself (GNU time): wall ${wall}s, user ${user}s, sys ${sys}s"
        games_now=$games report "perf ($games games, cpu-clock samples)" samples "$st" "$ss" "$bt" "$bs"
        echo "   top self symbols outside the search ($games-game run; samples, share of all samples):"
        sed 's/^/   /' "$tmp/perf-top-big.txt"
        [[ -z "$keep" ]] || cp "$tmp/perf-big.data" "$keep/perf-nodes$n.data"
    fi
    if ((do_cg)); then
        echo
        echo "-- callgrind: nodes=$n, runs of 2 and $cg_games games"
        read -r st ss < <(callgrind_profile "$n" 2 small)
        read -r bt bs < <(callgrind_profile "$n" "$cg_games" big)
        grep -E '^Score of ' "$tmp/out-big" | sed 's/^/   /' || true
        games_now=$cg_games report "callgrind ($cg_games games, instructions)" Ir "$st" "$ss" "$bt" "$bs"
        echo "   top self-cost functions of the $cg_games-game run (share of all Ir; search functions included):"
        awk '/^ *[0-9,]+ +\(/ && !/PROGRAM TOTALS/' "$tmp/cg-self-big.txt" | head -12 \
            | sed -E 's/ \[[^]]*\]$//; s/^ *[0-9,]+ +\( *([0-9.]+%)\) +[^:]*:/   \1  /'
        [[ -z "$keep" ]] || cp "$tmp/cg-big.out" "$keep/callgrind-nodes$n.out"
    fi
done
echo
printf '%s\n' "${results[@]}"
echo "== load after: $(uptime | sed 's/.*load average/load average/')"
