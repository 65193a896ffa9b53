#!/bin/sh
# Regenerates the golden fixtures of this directory from real fastchess and cutechess-cli
# builds (see README.md).
# usage: runner/tests/data/compat/regen.sh SPAR FASTCHESS CUTECHESS_CLI
#   (either tool may be '-' to leave its fixtures as they are; run from anywhere)
set -eu
SPAR=$(realpath "$1")
FASTCHESS=$2
CUTECHESS=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/book.epd" "$work/"
for case in "$here"/*.args; do
    name=$(basename "$case" .args)
    case "$name" in
        fastchess_*) tool=$FASTCHESS; pgnout="-pgnout file=games.pgn" ;;
        cutechess_*) tool=$CUTECHESS; pgnout="-pgnout games.pgn" ;;
        *) continue ;;
    esac
    [ "$tool" = - ] && continue
    tool=$(realpath "$tool")
    # {SPAR} in the arguments is the engine: spar's own UCI engine (`spar uci`), {NET} the
    # net it plays with (gen1.nnue here, the embedded net when the fixtures were made).
    args=$(sed -e "s|{SPAR}|$SPAR|g" -e "s|{NET}|$here/gen1.nnue|g" "$case")
    # shellcheck disable=SC2086
    (cd "$work" && rm -f games.pgn && QT_QPA_PLATFORM=offscreen $tool $args $pgnout >stdout.txt 2>/dev/null) || true
    # fastchess's diagnostics of the engine's output (`Warning; Bestmove does not match …`
    # and its Info/Position/Moves lines) are not part of its format; the total time is the
    # clock's.
    grep -v -e '^Warning; ' -e '^Info; ' -e '^Position; ' -e '^Moves; ' "$work/stdout.txt" |
        sed -E 's/^Total Time: [0-9]{2}:[0-9]{2}:[0-9]{2} /Total Time: HH:MM:SS /' >"$here/$name.stdout"
    # The PGN without the clock: dates, start/end times, durations and per-move times.
    sed -E -e 's/^\[Date "[^"]*"\]/[Date "?"]/' \
        -e 's/^\[(GameStartTime|GameEndTime|GameDuration|Time) "[^"]*"\]/[\1 "?"]/' \
        -e 's/ [0-9]+(\.[0-9]+)?s([,}])/ ?s\2/g' "$work/games.pgn" >"$here/$name.pgn"
done
