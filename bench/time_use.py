#!/usr/bin/env python3
"""How each player of a spar PGN used its clock.

    bench/time_use.py GAMES.pgn [MORE.pgn ...]

spar's PGN move comments carry each move's time (`{+0.39/19 0.175s, n=380312}`) and the
`TimeControl` header the clock (`5+0.05`). For every player this prints the mean time a
move, and the mean and least time left on its clock when its games ended (the base time plus
an increment per move, less the time its moves took). Needs python-chess (`pip install chess`).
"""

import re
import statistics
import sys
from collections import defaultdict

import chess.pgn

TIME = re.compile(r"(\d+(?:\.\d+)?)s\b")


def clock(header):
    """(base seconds, increment seconds) of a `TimeControl` header such as `5+0.05`."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(?:\+(\d+(?:\.\d+)?))?", header or "")
    if not m:
        return None
    return float(m.group(1)), float(m.group(2) or 0)


def main(paths):
    per_move = defaultdict(list)
    left = defaultdict(list)
    for path in paths:
        with open(path, encoding="utf-8") as f:
            while (game := chess.pgn.read_game(f)) is not None:
                tc = clock(game.headers.get("TimeControl"))
                if tc is None:
                    sys.exit(f"{path}: a game without a clock TimeControl header "
                             f"({game.headers.get('TimeControl')!r}); this script reads clock games")
                names = {chess.WHITE: game.headers["White"], chess.BLACK: game.headers["Black"]}
                used = {chess.WHITE: 0.0, chess.BLACK: 0.0}
                moves = {chess.WHITE: 0, chess.BLACK: 0}
                for node in game.mainline():
                    mover = not node.board().turn
                    m = TIME.search(node.comment or "")
                    if m:
                        used[mover] += float(m.group(1))
                        moves[mover] += 1
                for side in (chess.WHITE, chess.BLACK):
                    if moves[side]:
                        per_move[names[side]].append(used[side] / moves[side])
                    left[names[side]].append(tc[0] + tc[1] * moves[side] - used[side])
    print(f"{'player':<16} {'games':>6} {'s/move':>8} {'left at end':>12} {'least left':>11}")
    for name in sorted(left):
        print(f"{name:<16} {len(left[name]):>6} {statistics.mean(per_move[name]):>8.3f} "
              f"{statistics.mean(left[name]):>12.2f} {min(left[name]):>11.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
