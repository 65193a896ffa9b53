#!/usr/bin/env python3
"""How `spar datagen --tb` changes the labels: compares two runs of the same seed and
options, one without `--tb` (PLAIN) and one with it (TB), game by game.

    python3 bench/tb_labels.py PLAIN.vf TB.vf [PLAIN.vf.txt TB.vf.txt]

Game k of both runs is the same game up to the position where the `--tb` run reached the
tables and stopped, so the `--tb` run's positions of game k are a prefix of the plain run's.
A position's label is its game's result. Printed: games that reached the tables, games whose
result changed, positions (labels) that changed, positions the plain run has after the
tables were reached (dropped by --tb); for viriformat (every position) and, given the text
files with their `.idx` indexes, for the filtered text lines too.
"""

import sys

BOARD = 32  # marlinformat PackedBoard; byte 30 is the result (0 Black wins, 1 draw, 2 White)


def vf_games(path):
    """(result, number of positions) per game of a viriformat file."""
    data = open(path, "rb").read()
    games, at = [], 0
    while at < len(data):
        result = data[at + 30]
        at += BOARD
        n = 0
        while data[at : at + 4] != b"\0\0\0\0":
            n += 1
            at += 4
        at += 4
        games.append((result, n))
    return games


def text_games(path):
    """(result, number of lines) per game of a text file, through its `.idx` index."""
    ends = [tuple(map(int, l.split())) for l in open(path + ".idx")]
    lines = open(path, encoding="utf-8").read().splitlines()
    games, first = [], 0
    for _, end in ends:
        mine = lines[first:end]
        result = mine[0].rsplit("|", 1)[1].strip() if mine else None
        games.append((result, len(mine)))
        first = end
    return games


def compare(what, plain, tb):
    assert len(plain) == len(tb), f"{what}: {len(plain)} games vs {len(tb)}"
    reached = changed_games = changed = dropped = 0
    total = sum(n for _, n in plain)
    for (r0, n0), (r1, n1) in zip(plain, tb):
        assert n1 <= n0, f"{what}: a --tb game is longer than the plain one"
        if n1 < n0:
            reached += 1
            dropped += n0 - n1
        if r0 != r1 and n1 > 0:
            changed_games += 1
            changed += n1
    kept = sum(n for _, n in tb)
    print(
        f"{what}: {len(plain)} games, {reached} ended early in the tables, {changed_games} "
        f"changed result; positions: {total} without --tb, {kept} with it ({dropped} dropped "
        f"after the tables were reached, {100 * dropped / max(total, 1):.1f} %), "
        f"{changed} relabelled ({100 * changed / max(kept, 1):.2f} % of those kept)"
    )


def main():
    if len(sys.argv) not in (3, 5):
        sys.exit(__doc__)
    compare("viriformat", vf_games(sys.argv[1]), vf_games(sys.argv[2]))
    if len(sys.argv) == 5:
        compare("text", text_games(sys.argv[3]), text_games(sys.argv[4]))


if __name__ == "__main__":
    main()
