//! Players: whatever answers "your move" in a game. The builtin engine plays in-process;
//! external UCI engines (and spar builds) are driven over pipes by [`super::uci`].

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use engine::position::Position;
use engine::search::{Limits, Score, Searcher};
use engine::types::Move;

use super::variant::Variant;
use crate::error::{CliError, CliResult};

/// What a player is asked at each move.
pub struct MoveRequest<'a> {
    /// FEN of the game's start position (after any book moves: those are in `moves`).
    pub start_fen: &'a str,
    /// Moves since the start position.
    pub moves: &'a [Move],
    /// The current position.
    pub position: &'a Position,
    /// Keys of every earlier position of the game, oldest first.
    pub history: &'a [u64],
    /// Limits for this move (node/depth/movetime and the clocks).
    pub limits: &'a Limits,
}

/// A player's answer.
#[derive(Clone, Debug)]
pub struct MoveReply {
    /// The move (legality is checked by the game loop).
    pub mv: Move,
    /// The last score the engine reported, from its own point of view.
    pub score: Option<Score>,
    /// Depth reached.
    pub depth: i32,
    /// Selective depth reached (deepest ply; 0 when the engine did not say).
    pub seldepth: i32,
    /// Nodes searched.
    pub nodes: u64,
}

/// Why a player failed to produce a move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerError {
    /// The process died or could not be started.
    Crashed(String),
    /// No answer within the watchdog time.
    Stalled(String),
    /// The answer was not a legal move (text of the answer).
    IllegalMove(String),
}

impl std::fmt::Display for PlayerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlayerError::Crashed(s) => write!(f, "crashed: {s}"),
            PlayerError::Stalled(s) => write!(f, "stopped answering: {s}"),
            PlayerError::IllegalMove(s) => write!(f, "illegal move: {s}"),
        }
    }
}

/// Anything that can play a game of chess.
pub trait Player: Send {
    /// Prepares for a new game (clears hash tables and histories; restarts a crashed engine).
    fn new_game(&mut self, chess960: bool) -> Result<(), PlayerError>;
    /// Chooses a move.
    fn go(&mut self, request: &MoveRequest) -> Result<MoveReply, PlayerError>;
    /// A flag that, once set, makes a running search return as soon as it can.
    fn stop_flag(&self) -> Option<Arc<AtomicBool>> {
        None
    }
    /// Ends the player (quit an external engine). Called once, possibly in parallel.
    fn shutdown(&mut self) {}
}

/// The embedded engine, searching in-process with the variant's parameters.
pub struct BuiltinPlayer {
    searcher: Searcher,
}

impl BuiltinPlayer {
    /// A builtin player for a variant; a usage error if its hash table cannot be allocated.
    pub fn new(variant: &Variant) -> CliResult<BuiltinPlayer> {
        let mut searcher = Searcher::new(variant.params.clone());
        searcher.set_evaluation(variant.evaluation);
        if let Some(net) = &variant.net {
            searcher.set_net(Arc::clone(net));
        }
        searcher.set_tablebases(variant.tablebases.clone());
        searcher.set_syzygy(variant.syzygy);
        searcher.try_set_hash_mb(variant.hash_mb).map_err(|e| {
            CliError::usage(format!(
                "engine '{}': option.Hash={}: {e} (lower option.Hash or --concurrency)",
                variant.name, variant.hash_mb
            ))
        })?;
        Ok(BuiltinPlayer { searcher })
    }

    /// Replaces the parameter values (between games: the next `new_game` clears the state).
    pub fn set_params(&mut self, params: engine::params::Params) {
        self.searcher.set_params(params);
    }
}

impl Player for BuiltinPlayer {
    fn new_game(&mut self, _chess960: bool) -> Result<(), PlayerError> {
        self.searcher.clear();
        Ok(())
    }

    fn go(&mut self, request: &MoveRequest) -> Result<MoveReply, PlayerError> {
        let result = self.searcher.search(
            request.position,
            request.history,
            request.limits,
            &mut |_| {},
        );
        let mv = result
            .best_move
            .ok_or_else(|| PlayerError::IllegalMove("the search returned no move".to_string()))?;
        Ok(MoveReply {
            mv,
            score: Some(result.score),
            depth: result.depth,
            seldepth: result.seldepth,
            nodes: result.nodes,
        })
    }

    fn stop_flag(&self) -> Option<Arc<AtomicBool>> {
        Some(self.searcher.stop_flag())
    }
}
