#!/usr/bin/env python3
"""The independent oracle for engine/tests/tablebase.rs: python-chess's Syzygy prober.

Usage: tablebase_oracle.py DIRECTORY < fens

Reads one FEN per line on stdin and prints, per line, "WDL DTZ" as
chess.syzygy.Tablebase.probe_wdl / probe_dtz give them, with "none" for either when
python-chess raises KeyError (MissingTableError included: material not in the tables,
castling rights, too many pieces).
"""

import sys

import chess
import chess.syzygy


def probe(fn, board):
    try:
        return str(fn(board))
    except KeyError:
        return "none"


def main():
    directory = sys.argv[1]
    out = []
    with chess.syzygy.open_tablebase(directory) as tablebase:
        for line in sys.stdin:
            fen = line.strip()
            if not fen:
                continue
            board = chess.Board(fen)
            wdl = probe(tablebase.probe_wdl, board)
            dtz = probe(tablebase.probe_dtz, board)
            out.append(f"{wdl} {dtz}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
