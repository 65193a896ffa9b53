#!/usr/bin/env python3
"""python-chess as a UCI client of `spar uci` (run by runner/tests/uci_session.rs).

Usage: uci_python_client.py PATH_TO_SPAR

Exits non-zero (with a traceback) on the first failed check; prints ALL OK at the end.
python-chess parses everything the engine says and raises on protocol errors, and it
validates every move the engine plays against its own move generator.
"""

import sys
import time

import chess
import chess.engine


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def main():
    spar = sys.argv[1]
    engine = chess.engine.SimpleEngine.popen_uci([spar, "uci"], timeout=20)
    try:
        check(engine.id.get("name", "").startswith("spar"), f"id name: {engine.id}")
        for name in ("Hash", "Threads", "UCI_Chess960", "rfp_margin"):
            check(name in engine.options, f"option {name} missing")
        check(engine.options["Hash"].type == "spin", "Hash is a spin")
        engine.configure({"Hash": 8, "rfp_margin": 80})

        # analyse: score, depth, pv all parsed; the pv is legal (python-chess checks).
        board = chess.Board()
        board.push_uci("e2e4")
        info = engine.analyse(board, chess.engine.Limit(depth=8))
        check(info.get("depth") == 8, f"depth {info.get('depth')}")
        check("score" in info and "pv" in info and info["pv"], f"analyse: {info}")
        check(info["nodes"] > 0 and "nps" in info and "seldepth" in info, f"{info}")
        check(0 <= info.get("hashfull", 0) <= 1000, f"{info}")
        check(abs(info["score"].white().score()) < 300, f"score {info['score']}")
        print(f"analyse 1.e4 depth 8: {info['score'].white()} pv "
              f"{' '.join(m.uci() for m in info['pv'])}")

        # Mate in 2 (1. Ra6 bxa6 2. b7#).
        board = chess.Board("kbK5/pp6/1P6/8/8/8/8/R7 w - - 0 1")
        info = engine.analyse(board, chess.engine.Limit(depth=10))
        check(info["score"].white().mate() == 2, f"mate in 2: {info['score']}")
        check(info["pv"][0] == chess.Move.from_uci("a1a6"), f"pv {info['pv']}")
        print("mate in 2 found:", info["score"].white())

        # Infinite analysis, stopped by the client.
        board = chess.Board()
        with engine.analysis(board) as analysis:
            deepest = 0
            for i in analysis:
                deepest = max(deepest, i.get("depth", 0))
                if deepest >= 8:
                    break
            t0 = time.monotonic()
            analysis.stop()
            best = analysis.wait()
            stop_ms = (time.monotonic() - t0) * 1000
        check(best.move in board.legal_moves, f"bestmove {best.move}")
        print(f"infinite analysis to depth {deepest}, stop answered in {stop_ms:.0f} ms")

        # A short game against itself: node limits, then a clock.
        board = chess.Board()
        engine.configure({"Clear Hash": None})
        while not board.is_game_over(claim_draw=True) and board.ply() < 60:
            if board.ply() < 30:
                limit = chess.engine.Limit(nodes=3000)
            else:
                limit = chess.engine.Limit(white_clock=1.0, black_clock=1.0,
                                           white_inc=0.01, black_inc=0.01)
            result = engine.play(board, limit, info=chess.engine.INFO_ALL)
            check(result.move in board.legal_moves, f"illegal {result.move} in {board.fen()}")
            board.push(result.move)
        print(f"self-play game: {board.ply()} plies, {chess.Board().variation_san(board.move_stack)}")

        # Chess960: python-chess sets UCI_Chess960 and expects king-takes-rook castling.
        board = chess.Board.from_chess960_pos(518 - 100)
        moves_960 = 0
        castled = False
        while not board.is_game_over() and board.ply() < 40:
            result = engine.play(board, chess.engine.Limit(nodes=2000))
            check(result.move in board.legal_moves, f"960: illegal {result.move} in {board.fen()}")
            castled |= board.is_castling(result.move)
            board.push(result.move)
            moves_960 += 1
        print(f"chess960 game: {moves_960} plies, castled: {castled}, final {board.fen()}")
        # Castling in the move list python-chess sends (king takes rook): the engine must
        # take it, or it would answer with a move for the wrong side.
        for castle in ("b1h1", "b1a1"):
            board = chess.Board("rk5r/8/8/8/8/8/8/RK5R w HAha - 0 1", chess960=True)
            move = chess.Move.from_uci(castle)
            check(board.is_castling(move), f"{castle} is castling here")
            board.push(move)
            result = engine.play(board, chess.engine.Limit(depth=4))
            check(result.move in board.legal_moves, f"after {castle}: {result.move}")
            board.push(result.move)
            reply = engine.play(board, chess.engine.Limit(depth=4))
            check(reply.move in board.legal_moves, f"after {castle}: {reply.move}")
    finally:
        t0 = time.monotonic()
        engine.quit()
        print(f"quit took {(time.monotonic() - t0) * 1000:.0f} ms")
    print("ALL OK")


if __name__ == "__main__":
    main()
