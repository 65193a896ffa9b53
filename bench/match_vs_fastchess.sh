#!/usr/bin/env bash
# Games per second of `spar match` (builtin engine, in-process) versus fastchess driving
# `spar uci` against `spar uci` over pipes — the same engine, node limit, book, opening
# order and concurrency, so both play (nearly) the same games.
#
# Usage: bench/match_vs_fastchess.sh FASTCHESS_PATH [options]
#   --games N         games per run (even; default 100)
#   --nodes LIST      node limits per move, comma-separated (default 1000,5000)
#   --concurrency LIST  games at once, comma-separated (default 1,2)
#   --runs N          timed runs per tool and setting, alternating the tools; the best
#                     (shortest wall time) run is reported (default 1)
#   --book FILE       EPD book, played in sequential order by both (default: the repo's
#                     data/books/8moves_v3.epd)
#   --spar PATH       use this spar binary instead of building one
#   --rev REV         build spar from the committed revision REV (`git archive` into a
#                     temporary directory) instead of the work tree
#   --nice N          run each timed command at priority N (N < 0 needs root), see below
# Environment: CARGO_TARGET_DIR (spar's target dir when building).
#
# Each run is timed with GNU time (`/usr/bin/time`, Debian package `time`): wall seconds
# and user+sys CPU seconds of the whole process tree (fastchess's engine processes are its
# children and are waited for, so their CPU time is included). Printed per setting:
# games/s of each tool, CPU seconds per game, CPU utilisation (CPU seconds / wall seconds,
# i.e. cores kept busy, and as a share of the requested concurrency) and the ratio
# builtin/fastchess of games/s (> 1: spar match is faster). The machine load (uptime) is
# printed before and after, because on a shared machine it decides the numbers.
#
# Scheduling on a shared machine: Linux with autogroup scheduling (the default,
# /proc/sys/kernel/sched_autogroup_enabled = 1) shares the CPU fairly between sessions,
# not between processes, so a benchmark competing with other people's builds gets a
# fraction of a core however it is written. Each timed command therefore runs in a session
# of its own (`setsid`), so both tools are treated alike; with --nice N, that session's
# autogroup nice value (/proc/self/autogroup) and the processes' nice value are set to N,
# e.g. --nice -15 gives the benchmark nearly the whole machine for its duration, which is
# what a quiet machine would show. CPU seconds per game are much less sensitive to load
# than games/s.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

[[ $# -ge 1 ]] || { usage >&2; exit 2; }
case "$1" in -h|--help) usage; exit 0 ;; esac
fastchess="$1"; shift
games=100
nodes_list="1000,5000"
conc_list="1,2"
runs=1
book=""
spar=""
rev=""
nice_n=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --games) games="${2:?--games needs a number}"; shift 2 ;;
        --nodes) nodes_list="${2:?--nodes needs a list}"; shift 2 ;;
        --concurrency) conc_list="${2:?--concurrency needs a list}"; shift 2 ;;
        --runs) runs="${2:?--runs needs a number}"; shift 2 ;;
        --book) book="${2:?--book needs a file}"; shift 2 ;;
        --spar) spar="${2:?--spar needs a path}"; shift 2 ;;
        --rev) rev="${2:?--rev needs a git revision}"; shift 2 ;;
        --nice) nice_n="${2:?--nice needs a number}"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "unknown argument: $1 (try --help)" >&2; exit 2 ;;
    esac
done
[[ "$games" =~ ^[1-9][0-9]*$ && $((games % 2)) -eq 0 ]] || { echo "--games must be a positive even number" >&2; exit 2; }
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "--runs must be a positive integer" >&2; exit 2; }
[[ "$nodes_list" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { echo "--nodes: comma-separated positive numbers" >&2; exit 2; }
[[ "$conc_list" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { echo "--concurrency: comma-separated positive numbers" >&2; exit 2; }
[[ -x "$fastchess" ]] || { echo "fastchess not executable: $fastchess" >&2; exit 2; }
fastchess="$(cd "$(dirname "$fastchess")" && pwd)/$(basename "$fastchess")"
[[ -z "$nice_n" || "$nice_n" =~ ^-?[0-9]+$ ]] || { echo "--nice needs an integer" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 2; }

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
book="${book:-$repo/data/books/8moves_v3.epd}"
[[ -r "$book" ]] || { echo "cannot read book $book" >&2; exit 2; }
book="$(cd "$(dirname "$book")" && pwd)/$(basename "$book")"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/match-vs-fastchess.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

if [[ -z "$spar" ]]; then
    src="$repo"
    locked=(--locked)
    target="${CARGO_TARGET_DIR:-$repo/target}"
    if [[ -n "$rev" ]]; then
        src="$tmp/spar-src"
        locked=()
        mkdir -p "$src"
        git -C "$repo" archive "$rev" | tar -x -C "$src"
        target="${CARGO_TARGET_DIR:-$tmp/spar-target}"
    fi
    echo "== building spar (release) from $src into $target" >&2
    (cd "$src" && CARGO_TARGET_DIR="$target" cargo build --release "${locked[@]}" -p runner --bin spar)
    spar="$target/release/spar"
fi
[[ -x "$spar" ]] || { echo "spar not executable: $spar" >&2; exit 2; }
spar="$(cd "$(dirname "$spar")" && pwd)/$(basename "$spar")"

# Runs a command under GNU time in $tmp/run; prints "wall cpu games" (games parsed from the
# cutechess-style "Score of … N" line both tools print).
timed() {
    rm -rf "$tmp/run"; mkdir -p "$tmp/run"
    # A session (and so an autogroup) of its own, optionally at priority $nice_n.
    (cd "$tmp/run" && NICE_N="$nice_n" setsid -w sh -c '
        if [ -n "$NICE_N" ]; then
            echo "$NICE_N" >/proc/self/autogroup 2>/dev/null || true
            exec nice -n "$NICE_N" "$@"
        fi
        exec "$@"' sh /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err") || {
        echo "command failed: $*" >&2; tail -20 "$tmp/out" "$tmp/err" >&2; exit 1; }
    local played
    played="$(grep -E '^Score of ' "$tmp/out" | tail -1 | awk '{print $NF}')"
    [[ -n "$played" ]] || { echo "no 'Score of' line from: $*" >&2; tail -20 "$tmp/out" >&2; exit 1; }
    read -r wall user sys <"$tmp/time"
    awk -v w="$wall" -v u="$user" -v s="$sys" -v g="$played" 'BEGIN { printf "%.3f %.3f %d\n", w, u + s, g }'
}

run_builtin() { # nodes concurrency
    timed "$spar" match --engine name=a --engine name=b --each "nodes=$1" \
        --games "$games" --concurrency "$2" --book "$book" order=sequential --quiet
}

run_fastchess() { # nodes concurrency
    timed "$fastchess" -engine cmd="$spar" args=uci name=a -engine cmd="$spar" args=uci name=b \
        -each proto=uci "nodes=$1" tc=inf -rounds $((games / 2)) -games 2 -repeat \
        -concurrency "$2" -openings file="$book" format=epd order=sequential \
        -output format=cutechess -autosaveinterval 0
}

echo "== $(date -u '+%Y-%m-%d %H:%M UTC'); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
echo "== spar: $spar ($("$spar" --version))"
echo "== fastchess: $fastchess ($("$fastchess" --version 2>/dev/null | head -1 || echo '?'))"
echo "== book: $book (sequential); games per run: $games; runs per setting: $runs${nice_n:+; nice -n $nice_n}"
echo "== load before: $(uptime | sed 's/.*load average/load average/')"
printf '\n%-6s %-5s %-10s %6s %8s %8s %10s %9s %9s\n' nodes conc tool games wall_s games/s cpu_s/game cpu_cores util%
IFS=, read -r -a nodes_arr <<<"$nodes_list"
IFS=, read -r -a conc_arr <<<"$conc_list"
summary=()
for n in "${nodes_arr[@]}"; do
    for c in "${conc_arr[@]}"; do
        best_b=""; best_f=""
        for ((r = 1; r <= runs; r++)); do
            # Alternate which tool goes first, so a load change hits both alike.
            if ((r % 2)); then order=(b f); else order=(f b); fi
            for t in "${order[@]}"; do
                if [[ $t == b ]]; then
                    res="$(run_builtin "$n" "$c")"
                    echo "   run $r builtin   nodes=$n conc=$c: wall/cpu/games $res" >&2
                    if [[ -z "$best_b" ]] || awk -v a="${res%% *}" -v b="${best_b%% *}" 'BEGIN{exit !(a<b)}'; then best_b="$res"; fi
                else
                    res="$(run_fastchess "$n" "$c")"
                    echo "   run $r fastchess nodes=$n conc=$c: wall/cpu/games $res" >&2
                    if [[ -z "$best_f" ]] || awk -v a="${res%% *}" -v b="${best_f%% *}" 'BEGIN{exit !(a<b)}'; then best_f="$res"; fi
                fi
            done
        done
        for pair in "builtin:$best_b" "fastchess:$best_f"; do
            tool="${pair%%:*}"; read -r wall cpu played <<<"${pair#*:}"
            awk -v n="$n" -v c="$c" -v t="$tool" -v w="$wall" -v u="$cpu" -v g="$played" 'BEGIN {
                printf "%-6s %-5s %-10s %6d %8.2f %8.2f %10.4f %9.2f %9.0f\n",
                    n, c, t, g, w, g / w, u / g, u / w, 100 * u / w / c }'
        done
        read -r wb _ gb <<<"$best_b"; read -r wf _ gf <<<"$best_f"
        summary+=("$(awk -v n="$n" -v c="$c" -v wb="$wb" -v gb="$gb" -v wf="$wf" -v gf="$gf" \
            'BEGIN { printf "nodes=%-6s conc=%-3s builtin/fastchess games/s = %.2f", n, c, (gb / wb) / (gf / wf) }')")
    done
done
echo
printf '%s\n' "${summary[@]}"
echo "== load after: $(uptime | sed 's/.*load average/load average/')"
