#!/usr/bin/env python3
"""How many training labels Syzygy rescoring changes: two viriformat files of
`spar datagen` with the same seed and options, one without and one with `--tb`.

    python3 bench/tb_labels.py plain.vf tb.vf

With the same seed each game of the --tb file is a prefix of the same game of the plain
file (it ends at the first position the tables cover); its result labels every position.
Prints the games that reached the tables, the positions whose label (the game result)
changed, and the positions no longer in the file (played after the tables were reached).
"""
import struct
import sys


def games(path):
    """(result byte, [move records]) per game: a 32-byte marlinformat header (the WDL
    byte at offset 30: 0 black won, 1 draw, 2 white won), 4-byte (move, score) records,
    4 zero bytes."""
    data = open(path, "rb").read()
    i = 0
    while i < len(data):
        header = data[i : i + 32]
        if len(header) < 32:
            raise SystemExit(f"{path}: torn game at byte {i}")
        i += 32
        moves = []
        while True:
            rec = data[i : i + 4]
            if len(rec) < 4:
                raise SystemExit(f"{path}: torn game at byte {i}")
            i += 4
            if rec == b"\0\0\0\0":
                break
            moves.append(rec)
        yield header[30], header[:30], moves


def main(plain, tb):
    reached = relabelled = dropped = total_plain = total_tb = 0
    changed_games = 0
    n = 0
    for (ra, ha, ma), (rb, hb, mb) in zip(games(plain), games(tb), strict=True):
        n += 1
        if ha != hb or [m[:2] for m in ma[: len(mb)]] != [m[:2] for m in mb]:
            raise SystemExit(f"game {n}: the --tb game is not a prefix of the plain one")
        total_plain += len(ma)
        total_tb += len(mb)
        if len(mb) < len(ma) or ra != rb:
            reached += 1
        if ra != rb:
            changed_games += 1
            relabelled += len(mb)
        dropped += len(ma) - len(mb)
    print(f"games: {n}; reached the tables: {reached}; result changed: {changed_games}")
    print(f"positions: {total_plain} without --tb, {total_tb} with")
    print(
        f"labels changed: {relabelled} positions ({100.0 * relabelled / max(total_tb, 1):.2f} % of the --tb file)"
    )
    print(f"positions after the tables were reached (not in the --tb file): {dropped}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2])
