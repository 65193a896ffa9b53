#!/bin/sh
# Regenerates the golden fixtures of this directory from a real fastchess build (see README.md).
# usage: runner/tests/data/compat/regen.sh FASTCHESS SPAR   (run from anywhere; writes here)
set -eu
FASTCHESS=$(realpath "$1")
SPAR=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/book.epd" "$work/"
for case in "$here"/*.args; do
    name=$(basename "$case" .args)
    # {SPAR} in the arguments is the engine: spar's own UCI engine (`spar uci`).
    args=$(sed "s|{SPAR}|$SPAR|g" "$case")
    (cd "$work" && rm -f games.pgn && $FASTCHESS $args -pgnout file=games.pgn >stdout.txt 2>/dev/null) || true
    # fastchess's diagnostics of the engine's output (`Warning; Bestmove does not match …`
    # and its Info/Position/Moves lines) are not part of its format; the total time is the
    # clock's.
    grep -v -e '^Warning; ' -e '^Info; ' -e '^Position; ' -e '^Moves; ' "$work/stdout.txt" |
        sed -E 's/^Total Time: [0-9]{2}:[0-9]{2}:[0-9]{2} /Total Time: HH:MM:SS /' >"$here/$name.stdout"
    # The PGN without the clock: dates, start/end times, durations and per-move times.
    sed -E -e 's/^\[Date "[^"]*"\]/[Date "?"]/' \
        -e 's/^\[(GameStartTime|GameEndTime|GameDuration) "[^"]*"\]/[\1 "?"]/' \
        -e 's/ [0-9]+\.[0-9]{3}s([,}])/ ?s\1/g' "$work/games.pgn" >"$here/$name.pgn"
done
