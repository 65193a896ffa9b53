//! The player wrapper that attributes `track!` records to variants and delimits games.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use engine::track::{self, GamePart};

use crate::engines::player::{MoveReply, MoveRequest, Player, PlayerError};

/// Wraps an in-process player: before each search the thread's current variant is set, after
/// it the records are flushed into the registry (and counted for this game), and at the end
/// of each game the per-game sums are registered.
pub struct TrackedPlayer {
    inner: Box<dyn Player>,
    variant: usize,
    part: GamePart,
}

impl TrackedPlayer {
    /// Records of `inner`'s searches go to statistics slot `variant`.
    pub fn new(inner: Box<dyn Player>, variant: usize) -> TrackedPlayer {
        TrackedPlayer {
            inner,
            variant,
            part: GamePart::new(),
        }
    }

    fn end_game(&mut self) {
        if !self.part.is_empty() {
            track::end_game(self.variant, &mut self.part);
        }
    }
}

impl Player for TrackedPlayer {
    fn new_game(&mut self, chess960: bool) -> Result<(), PlayerError> {
        self.end_game();
        self.inner.new_game(chess960)
    }

    fn go(&mut self, request: &MoveRequest) -> Result<MoveReply, PlayerError> {
        track::set_variant(self.variant);
        let reply = self.inner.go(request);
        track::flush_counted(&mut self.part);
        reply
    }

    fn stop_flag(&self) -> Option<Arc<AtomicBool>> {
        self.inner.stop_flag()
    }

    fn shutdown(&mut self) {
        self.end_game();
        self.inner.shutdown();
    }
}
