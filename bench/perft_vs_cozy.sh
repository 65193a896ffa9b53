#!/usr/bin/env bash
# Perft speed of spar versus the cozy-chess crate (crates.io, newest version).
#
# Builds `spar` in release mode, then builds a small bulk-counting perft driver on top of
# cozy-chess in a temporary directory with the same release profile (fat LTO, codegen-units=1,
# panic=abort) and the same RUSTFLAGS, runs both on the start position (depth 6) and Kiwipete
# (depth 5), alternating the two engines, and prints nodes/second from the BEST (minimum) wall
# time of each engine per position. Wall time is measured outside the process, identically for
# both engines (process start to exit, so it includes start-up and table initialisation).
#
# Usage: bench/perft_vs_cozy.sh [--runs N] [--native] [--rev REV]
#   --runs N   timed runs per engine and position (default 3)
#   --rev REV  build spar from the committed revision REV (`git archive` into the temporary
#              directory) instead of the work tree; useful while others edit the tree.
#              Its target dir is then $CARGO_TARGET_DIR or a throw-away one in the temp dir.
#   --native   build both with `-C target-cpu=native` (appended to $RUSTFLAGS); spar then
#              goes to $CARGO_TARGET_DIR or target/bench-native so the normal release
#              build in target/ is not invalidated.
# Environment: RUSTFLAGS (applied to both builds), CARGO_TARGET_DIR (spar's target dir).
set -euo pipefail

runs=3
native=0
rev=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --runs) runs="${2:?--runs needs a number}"; shift 2 ;;
        --runs=*) runs="${1#--runs=}"; shift ;;
        --native) native=1; shift ;;
        --rev) rev="${2:?--rev needs a git revision}"; shift 2 ;;
        --rev=*) rev="${1#--rev=}"; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $1 (try --help)" >&2; exit 2 ;;
    esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "--runs must be a positive integer" >&2; exit 2; }

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
flags="${RUSTFLAGS:-}"
if [[ $native -eq 1 ]]; then
    flags="${flags:+$flags }-C target-cpu=native"
    spar_target="${CARGO_TARGET_DIR:-$repo/target/bench-native}"
else
    spar_target="${CARGO_TARGET_DIR:-$repo/target}"
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/perft-vs-cozy.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

src="$repo"
# The work tree is shared: never let the benchmark rewrite its Cargo.lock. A --rev copy is ours,
# so there cargo may bring a stale committed lock file up to date.
locked=(--locked)
label="$(git -C "$repo" describe --always --dirty 2>/dev/null || echo '?') (work tree)"
if [[ -n "$rev" ]]; then
    src="$tmp/spar-src"
    locked=()
    mkdir -p "$src"
    git -C "$repo" archive "$rev" | tar -x -C "$src"
    label="$(git -C "$repo" rev-parse --short "$rev^{commit}") (--rev $rev)"
    spar_target="${CARGO_TARGET_DIR:-$tmp/spar-target}"
fi

echo "== building spar $label (release, RUSTFLAGS='${flags}', target dir $spar_target)" >&2
(cd "$src" && RUSTFLAGS="$flags" CARGO_TARGET_DIR="$spar_target" \
    cargo build --release "${locked[@]}" -p runner --bin spar)
spar="$spar_target/release/spar"

echo "== building cozy-chess perft driver in $tmp" >&2
mkdir -p "$tmp/cozy-perft/src"
cat >"$tmp/cozy-perft/Cargo.toml" <<'EOF'
[package]
name = "cozy-perft"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
cozy-chess = "*"

# Same as spar's release profile.
[profile.release]
lto = "fat"
codegen-units = 1
panic = "abort"

# Stand-alone: never join an enclosing workspace.
[workspace]
EOF
cat >"$tmp/cozy-perft/src/main.rs" <<'EOF'
// Bulk-counting perft over cozy-chess, counted the same way as cozy-chess's perft example:
// legal moves come grouped per piece (`PieceMoves`); at the last ply only their `len()` is summed.
use cozy_chess::Board;

fn perft(board: &Board, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut nodes = 0u64;
    if depth == 1 {
        board.generate_moves(|piece_moves| {
            nodes += piece_moves.len() as u64;
            false
        });
    } else {
        board.generate_moves(|piece_moves| {
            for mv in piece_moves {
                let mut child = board.clone();
                child.play_unchecked(mv);
                nodes += perft(&child, depth - 1);
            }
            false
        });
    }
    nodes
}

fn main() {
    let mut args = std::env::args().skip(1);
    let depth: u32 = args
        .next()
        .and_then(|d| d.parse().ok())
        .expect("usage: cozy-perft DEPTH [FEN]");
    let board = match args.next() {
        Some(fen) => Board::from_fen(&fen, false).expect("invalid FEN"),
        None => Board::default(),
    };
    println!("Nodes searched: {}", perft(&board, depth));
}
EOF
(cd "$tmp/cozy-perft" && RUSTFLAGS="$flags" CARGO_TARGET_DIR="$tmp/target" \
    cargo build --release --quiet)
cozy="$tmp/target/release/cozy-perft"
cozy_version="$(awk '/^name = "cozy-chess"$/ { getline; gsub(/[^0-9.]/, ""); print }' "$tmp/cozy-perft/Cargo.lock")"

startpos="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
kiwipete="r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
names=("startpos" "kiwipete")
fens=("$startpos" "$kiwipete")
depths=(6 5)
expected=(119060324 193690690)

# run_timed ENGINE DEPTH FEN: runs one perft, sets $nodes and $secs (wall clock).
run_timed() {
    local engine="$1" depth="$2" fen="$3" t0 t1 out
    t0="$(date +%s.%N)"
    if [[ "$engine" == spar ]]; then
        out="$("$spar" perft --depth "$depth" --fen "$fen")"
    else
        out="$("$cozy" "$depth" "$fen")"
    fi
    t1="$(date +%s.%N)"
    nodes="$(sed -n 's/^Nodes searched: //p' <<<"$out")"
    secs="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')"
}

min() { tr ' ' '\n' | sort -g | head -n1; }

# Our own builds are finished here, so any rustc still running belongs to someone else. (The
# load averages still include our build for a minute or so; the rustc count is what matters.)
echo "== load before runs: $(uptime); other rustc processes: $(pgrep -c -x rustc || true)" >&2
declare -a rows
for i in "${!names[@]}"; do
    name="${names[$i]}" fen="${fens[$i]}" depth="${depths[$i]}" want="${expected[$i]}"
    spar_times="" cozy_times=""
    for ((r = 1; r <= runs; r++)); do
        # Alternate engines, and alternate which one goes first, to spread drift evenly.
        if ((r % 2)); then order=(spar cozy); else order=(cozy spar); fi
        for engine in "${order[@]}"; do
            run_timed "$engine" "$depth" "$fen"
            if [[ "$nodes" != "$want" ]]; then
                echo "ERROR: $engine $name depth $depth: $nodes nodes, expected $want" >&2
                exit 1
            fi
            printf '  %-8s %-5s run %d: %s nodes in %ss\n' "$name" "$engine" "$r" "$nodes" "$secs" >&2
            if [[ "$engine" == spar ]]; then spar_times+=" $secs"; else cozy_times+=" $secs"; fi
        done
    done
    spar_best="$(min <<<"${spar_times# }")"
    cozy_best="$(min <<<"${cozy_times# }")"
    rows+=("$(awk -v p="$name d$depth" -v n="$want" -v s="$spar_best" -v c="$cozy_best" 'BEGIN {
        printf "%-12s %11d %9.3f %9.3f %14.0f %14.0f %8.3f", p, n, s, c, n / s, n / c, (n / s) / (n / c) }')")
done
echo "== load after runs: $(uptime); other rustc processes: $(pgrep -c -x rustc || true)" >&2

echo
echo "spar $label vs cozy-chess $cozy_version;" \
    "RUSTFLAGS='${flags}'; best of $runs wall-clock runs"
printf '%-12s %11s %9s %9s %14s %14s %8s\n' position nodes spar_s cozy_s spar_nps cozy_nps spar/cozy
printf '%s\n' "${rows[@]}"
