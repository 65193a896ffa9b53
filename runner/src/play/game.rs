//! One game between two players: rules, clocks, adjudication and failures.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use engine::position::Position;
use engine::search::{Limits, Score};
use engine::types::{Color, GameResult, Move, PieceType};

use super::adjudication::{Adjudicator, MoveScore, Verdict};
use crate::engines::player::{MoveReply, MoveRequest, Player, PlayerError};
use crate::engines::variant::MoveLimits;

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Termination {
    /// Checkmate.
    Checkmate,
    /// Stalemate.
    Stalemate,
    /// Threefold repetition.
    Repetition,
    /// Fifty-move rule.
    FiftyMoves,
    /// Insufficient material.
    InsufficientMaterial,
    /// Resign adjudication.
    ResignAdjudication,
    /// Draw adjudication.
    DrawAdjudication,
    /// Tablebase adjudication (`--tb`): a position the tables cover.
    TablebaseAdjudication,
    /// `--maxmoves` reached.
    MaxMoves,
    /// A clock ran out.
    TimeForfeit,
    /// An engine crashed.
    Crash,
    /// An engine stopped answering.
    Stall,
    /// An engine played an illegal move.
    IllegalMove,
}

impl Termination {
    /// Every kind, in summary order.
    pub const ALL: [Termination; 13] = [
        Termination::Checkmate,
        Termination::Stalemate,
        Termination::Repetition,
        Termination::FiftyMoves,
        Termination::InsufficientMaterial,
        Termination::ResignAdjudication,
        Termination::DrawAdjudication,
        Termination::TablebaseAdjudication,
        Termination::MaxMoves,
        Termination::TimeForfeit,
        Termination::Crash,
        Termination::Stall,
        Termination::IllegalMove,
    ];

    /// The name in the results CSV and JSON summary.
    pub fn key(self) -> &'static str {
        match self {
            Termination::Checkmate => "checkmate",
            Termination::Stalemate => "stalemate",
            Termination::Repetition => "threefold_repetition",
            Termination::FiftyMoves => "fifty_moves",
            Termination::InsufficientMaterial => "insufficient_material",
            Termination::ResignAdjudication => "resign_adjudication",
            Termination::DrawAdjudication => "draw_adjudication",
            Termination::TablebaseAdjudication => "tablebase_adjudication",
            Termination::MaxMoves => "max_moves",
            Termination::TimeForfeit => "time_forfeit",
            Termination::Crash => "crash",
            Termination::Stall => "stall",
            Termination::IllegalMove => "illegal_move",
        }
    }

    /// Parses [`Termination::key`].
    pub fn from_key(key: &str) -> Option<Termination> {
        Termination::ALL.into_iter().find(|t| t.key() == key)
    }

    /// The PGN `Termination` tag value (the PGN standard's words, as cutechess writes them).
    pub fn pgn(self) -> &'static str {
        match self {
            Termination::ResignAdjudication
            | Termination::DrawAdjudication
            | Termination::TablebaseAdjudication
            | Termination::MaxMoves => "adjudication",
            Termination::TimeForfeit => "time forfeit",
            Termination::Crash => "abandoned",
            Termination::Stall => "stalled connection",
            Termination::IllegalMove => "illegal move",
            _ => "normal",
        }
    }
}

/// One move of a game with what the engine said about it.
#[derive(Clone, Debug)]
pub struct PlayedMove {
    /// The move.
    pub mv: Move,
    /// Engine score from the mover's point of view (`None` for book moves).
    pub score: Option<Score>,
    /// Depth reached.
    pub depth: i32,
    /// Selective depth reached (0: the engine did not say, or a book move).
    pub seldepth: i32,
    /// Nodes searched.
    pub nodes: u64,
    /// Thinking time.
    pub time: Duration,
    /// Whether the move came from the opening book.
    pub book: bool,
}

/// A finished game.
#[derive(Clone, Debug)]
pub struct PlayedGame {
    /// FEN the game (including book moves) starts from.
    pub start_fen: String,
    /// Whether the game is Chess960.
    pub chess960: bool,
    /// Every move, book moves first.
    pub moves: Vec<PlayedMove>,
    /// The result.
    pub outcome: GameResult,
    /// Why the game ended.
    pub termination: Termination,
    /// A readable reason ("White mates", "black engine crashed: …").
    pub reason: String,
    /// Nodes searched by White's and Black's engine.
    pub nodes: [u64; 2],
    /// Wall time of the game.
    pub duration: Duration,
}

/// Everything about a game except the players.
pub struct GameSetup<'a> {
    /// Start position of the opening.
    pub start: &'a Position,
    /// Book moves to play first.
    pub book_moves: &'a [Move],
    /// Limits of White's and Black's engine.
    pub limits: [&'a MoveLimits; 2],
    /// Clock overrun allowed before a forfeit, per side.
    pub time_margin: [Duration; 2],
    /// Draw after this many full moves of the engines (`--maxmoves`).
    pub max_moves: Option<u32>,
}

/// Who plays a game: two players, or one that plays both colours (datagen's self-play,
/// where one searcher keeps its hash table across both sides' moves).
pub enum Seats<'a> {
    /// White's and Black's player.
    Two([&'a mut dyn Player; 2]),
    /// One player for both colours.
    Same(&'a mut dyn Player),
}

impl Seats<'_> {
    fn player(&mut self, side: Color) -> &mut dyn Player {
        match self {
            Seats::Two(p) => &mut *p[side as usize],
            Seats::Same(p) => &mut **p,
        }
    }

    /// Prepares each distinct player for a new game; the first failure names its side.
    fn new_game(&mut self, chess960: bool) -> Result<(), (Color, PlayerError)> {
        match self {
            Seats::Two(p) => {
                for (i, player) in p.iter_mut().enumerate() {
                    player
                        .new_game(chess960)
                        .map_err(|e| (Color::from_index(i), e))?;
                }
                Ok(())
            }
            Seats::Same(p) => p.new_game(chess960).map_err(|e| (Color::White, e)),
        }
    }
}

struct Clock {
    remaining: Duration,
    moves_in_period: u32,
}

/// Plays one game, asking `adjudicator` about every position before its move (tablebases)
/// and after every engine move (scores). Returns `None` if `abort`
/// was set (the game is abandoned and must not be counted).
pub fn play_game(
    mut seats: Seats,
    setup: &GameSetup,
    adjudicator: &mut dyn Adjudicator,
    abort: &AtomicBool,
) -> Option<PlayedGame> {
    let started = Instant::now();
    let mut pos = setup.start.clone();
    let start_fen = pos.to_fen();
    let chess960 = pos.is_chess960();
    let mut history: Vec<u64> = Vec::with_capacity(256);
    let mut moves: Vec<Move> = Vec::with_capacity(256);
    let mut played: Vec<PlayedMove> = Vec::with_capacity(256);
    let mut nodes = [0u64; 2];

    let finish = |outcome, termination, reason: String, played, nodes| {
        Some(PlayedGame {
            start_fen: start_fen.clone(),
            chess960,
            moves: played,
            outcome,
            termination,
            reason,
            nodes,
            duration: started.elapsed(),
        })
    };

    if let Err((side, e)) = seats.new_game(chess960) {
        return finish(
            GameResult::win_for(!side),
            termination_of(&e),
            format!("{} engine {e}", side_name(side)),
            played,
            nodes,
        );
    }

    for &mv in setup.book_moves {
        history.push(pos.key());
        moves.push(mv);
        pos = pos.play(mv);
        played.push(PlayedMove {
            mv,
            score: None,
            depth: 0,
            seldepth: 0,
            nodes: 0,
            time: Duration::ZERO,
            book: true,
        });
    }

    let mut clocks = [0, 1].map(|i| Clock {
        remaining: setup.limits[i].tc.map_or(Duration::ZERO, |tc| tc.base),
        moves_in_period: 0,
    });

    loop {
        if let Some((outcome, termination, reason)) = rules_verdict(&pos, &history) {
            return finish(outcome, termination, reason, played, nodes);
        }
        // Tablebase adjudication comes first among the adjudications (its result is exact).
        if let Some((outcome, termination, reason)) = tablebase_end(adjudicator, &pos) {
            return finish(outcome, termination, reason, played, nodes);
        }
        if let Some(max) = setup.max_moves {
            let engine_plies = played.iter().filter(|m| !m.book).count() as u32;
            if engine_plies >= 2 * max {
                return finish(
                    GameResult::Draw,
                    Termination::MaxMoves,
                    format!("draw after {max} moves"),
                    played,
                    nodes,
                );
            }
        }
        if abort.load(Ordering::Relaxed) {
            return None;
        }

        let side = pos.side_to_move();
        let s = side as usize;
        let limits = search_limits(setup.limits[s], &clocks, side);
        let request = MoveRequest {
            start_fen: &start_fen,
            moves: &moves,
            position: &pos,
            history: &history,
            limits: &limits,
        };
        let t0 = Instant::now();
        let reply = seats.player(side).go(&request);
        let elapsed = t0.elapsed();
        if abort.load(Ordering::Relaxed) {
            return None;
        }
        let checked = judge_reply(
            reply,
            &pos,
            elapsed,
            setup.limits[s],
            setup.time_margin[s],
            &mut clocks[s],
            &mut nodes[s],
        );
        let reply = match checked {
            Ok(r) => r,
            Err((termination, why)) => {
                let reason = format!("{} {why}", side_name(side));
                return finish(
                    GameResult::win_for(!side),
                    termination,
                    reason,
                    played,
                    nodes,
                );
            }
        };

        let irreversible = reply.mv.is_capture() || pos.moved(reply.mv) == PieceType::Pawn;
        let fullmove_before = pos.fullmove_number() as u32;
        history.push(pos.key());
        moves.push(reply.mv);
        pos = pos.play(reply.mv);
        played.push(PlayedMove {
            mv: reply.mv,
            score: reply.score,
            depth: reply.depth,
            seldepth: reply.seldepth,
            nodes: reply.nodes,
            time: elapsed,
            book: false,
        });

        let verdict = adjudicator.update(&MoveScore {
            mover: side,
            score: reply.score,
            fullmove_before,
            fullmove_after: pos.fullmove_number() as u32,
            irreversible,
        });
        if verdict.is_some() {
            // Where the tables cover the position they come before the score rules, as in
            // fastchess (their result is exact). Without `--tb` this never ends a game.
            if let Some((outcome, termination, reason)) = tablebase_end(adjudicator, &pos) {
                return finish(outcome, termination, reason, played, nodes);
            }
        }
        match verdict {
            Some(Verdict::Resign(loser)) => {
                return finish(
                    GameResult::win_for(!loser),
                    Termination::ResignAdjudication,
                    format!("{} resigns (adjudication)", side_name(loser)),
                    played,
                    nodes,
                )
            }
            Some(Verdict::Draw) => {
                return finish(
                    GameResult::Draw,
                    Termination::DrawAdjudication,
                    "draw by adjudication".to_string(),
                    played,
                    nodes,
                )
            }
            None => {}
        }
    }
}

/// Checks a player's answer: an error, an illegal move or an overrun clock forfeits (the
/// termination and the reason, without the side's name); otherwise the clock is updated and
/// the reply returned. The searched nodes are counted either way.
fn judge_reply(
    reply: Result<MoveReply, PlayerError>,
    pos: &Position,
    elapsed: Duration,
    limits: &MoveLimits,
    margin: Duration,
    clock: &mut Clock,
    nodes: &mut u64,
) -> Result<MoveReply, (Termination, String)> {
    let reply = reply.map_err(|e| (termination_of(&e), format!("engine {e}")))?;
    *nodes += reply.nodes;
    if !pos.is_legal(reply.mv) {
        let text = reply.mv.to_uci(pos.is_chess960());
        return Err((
            Termination::IllegalMove,
            format!("engine played an illegal move: {text}"),
        ));
    }
    // Clocks are measured by the runner, not trusted from the engine.
    if let Some(tc) = limits.tc {
        if elapsed > clock.remaining + margin {
            return Err((Termination::TimeForfeit, "loses on time".to_string()));
        }
        clock.remaining = clock.remaining.saturating_sub(elapsed) + tc.increment;
        clock.moves_in_period += 1;
        if tc.moves == Some(clock.moves_in_period) {
            clock.moves_in_period = 0;
            clock.remaining += tc.base;
        }
    } else if limits.movetime.is_some_and(|mt| elapsed > mt + margin) {
        return Err((
            Termination::TimeForfeit,
            "exceeded its move time".to_string(),
        ));
    }
    Ok(reply)
}

fn side_name(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

fn termination_of(e: &PlayerError) -> Termination {
    match e {
        PlayerError::Crashed(_) => Termination::Crash,
        PlayerError::Stalled(_) => Termination::Stall,
        PlayerError::IllegalMove(_) => Termination::IllegalMove,
    }
}

fn search_limits(lim: &MoveLimits, clocks: &[Clock; 2], side: Color) -> Limits {
    let mut limits = Limits {
        nodes: lim.nodes,
        depth: lim.depth,
        movetime: lim.movetime,
        ..Default::default()
    };
    if let Some(tc) = lim.tc {
        // Both clocks are sent, as GUIs do; each side's own tc applies to its clock.
        let (w, b) = (&clocks[0], &clocks[1]);
        limits.wtime = Some(w.remaining);
        limits.btime = Some(b.remaining);
        limits.winc = Some(tc.increment);
        limits.binc = Some(tc.increment);
        limits.movestogo = tc.moves.map(|m| m - clocks[side as usize].moves_in_period);
    }
    limits
}

/// `adjudicator`'s tablebase verdict on `pos`, as a game end.
fn tablebase_end(
    adjudicator: &mut dyn Adjudicator,
    pos: &Position,
) -> Option<(GameResult, Termination, String)> {
    adjudicator
        .position(pos)
        .map(|(outcome, reason)| (outcome, Termination::TablebaseAdjudication, reason))
}

/// Game end by the rules: mate, stalemate, insufficient material, fifty moves, threefold.
pub fn rules_verdict(pos: &Position, history: &[u64]) -> Option<(GameResult, Termination, String)> {
    if !pos.has_legal_move() {
        return Some(if pos.in_check() {
            let winner = !pos.side_to_move();
            (
                GameResult::win_for(winner),
                Termination::Checkmate,
                format!("{} mates", side_name(winner)),
            )
        } else {
            (
                GameResult::Draw,
                Termination::Stalemate,
                "stalemate".to_string(),
            )
        });
    }
    if pos.is_insufficient_material() {
        return Some((
            GameResult::Draw,
            Termination::InsufficientMaterial,
            "insufficient material".to_string(),
        ));
    }
    if pos.halfmove_clock() >= 100 {
        return Some((
            GameResult::Draw,
            Termination::FiftyMoves,
            "fifty-move rule".to_string(),
        ));
    }
    let window = (pos.halfmove_clock() as usize).min(history.len());
    let key = pos.key();
    let repeats = history[history.len() - window..]
        .iter()
        .rev()
        .skip(1)
        .step_by(2)
        .filter(|&&k| k == key)
        .count();
    if repeats >= 2 {
        return Some((
            GameResult::Draw,
            Termination::Repetition,
            "threefold repetition".to_string(),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_detect_mate_stalemate_and_material() {
        let mate = Position::from_fen("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1").unwrap();
        assert_eq!(rules_verdict(&mate, &[]).unwrap().1, Termination::Checkmate);
        assert_eq!(rules_verdict(&mate, &[]).unwrap().0, GameResult::WhiteWins);
        let stale = Position::from_fen("7k/8/6QK/8/8/8/8/8 b - - 0 1").unwrap();
        assert_eq!(
            rules_verdict(&stale, &[]).unwrap().1,
            Termination::Stalemate
        );
        let kk = Position::from_fen("7k/8/8/8/8/8/8/K7 w - - 0 1").unwrap();
        assert_eq!(
            rules_verdict(&kk, &[]).unwrap().1,
            Termination::InsufficientMaterial
        );
        let fifty = Position::from_fen("7k/8/8/8/8/8/8/KR6 w - - 100 80").unwrap();
        assert_eq!(
            rules_verdict(&fifty, &[]).unwrap().1,
            Termination::FiftyMoves
        );
        assert!(rules_verdict(&Position::startpos(), &[]).is_none());
    }

    #[test]
    fn threefold_repetition() {
        let mut pos = Position::startpos();
        let mut history = Vec::new();
        for (i, m) in [
            "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8",
        ]
        .iter()
        .enumerate()
        {
            assert!(
                rules_verdict(&pos, &history).is_none(),
                "too early at ply {i}"
            );
            let mv = pos.parse_uci_move(m).unwrap();
            history.push(pos.key());
            pos = pos.play(mv);
        }
        assert_eq!(
            rules_verdict(&pos, &history).unwrap().1,
            Termination::Repetition
        );
    }
}
