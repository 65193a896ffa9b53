//! Running totals of a match from the first engine's point of view: W/D/L, pentanomial
//! pairs, terminations, and each engine's failures.

use std::collections::BTreeMap;

use engine::types::{Color, GameResult};
use sprt::{Pentanomial, Trinomial};

use super::game::Termination;

/// One game as the tally sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameSummary {
    /// Whether the first engine had White.
    pub first_is_white: bool,
    /// The result.
    pub outcome: GameResult,
    /// How it ended.
    pub termination: Termination,
}

impl GameSummary {
    /// The first engine's result.
    pub fn first_result(&self) -> sprt::PlayerResult {
        let color = if self.first_is_white {
            Color::White
        } else {
            Color::Black
        };
        match self.outcome.half_points(color) {
            2 => sprt::PlayerResult::Win,
            1 => sprt::PlayerResult::Draw,
            _ => sprt::PlayerResult::Loss,
        }
    }

    /// Index (0 = first engine, 1 = second) of the engine that lost, if any.
    pub fn loser(&self) -> Option<usize> {
        match self.first_result() {
            sprt::PlayerResult::Win => Some(1),
            sprt::PlayerResult::Loss => Some(0),
            sprt::PlayerResult::Draw => None,
        }
    }
}

/// Failures of one engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Failures {
    /// Crashes (process died).
    pub crashes: u64,
    /// Watchdog timeouts (stopped answering).
    pub stalls: u64,
    /// Time forfeits.
    pub time_forfeits: u64,
    /// Illegal moves.
    pub illegal_moves: u64,
}

/// The totals.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Games from the first engine's view.
    pub games: Trinomial,
    /// Pairs from the first engine's view.
    pub pairs: Pentanomial,
    /// Games by how they ended.
    pub terminations: BTreeMap<Termination, u64>,
    /// Failures of the first and second engine.
    pub failures: [Failures; 2],
}

impl Tally {
    /// Adds a pair (game 0: first engine White; game 1: Black).
    pub fn add_pair(&mut self, games: [GameSummary; 2]) {
        for g in &games {
            self.games.record(g.first_result());
            *self.terminations.entry(g.termination).or_default() += 1;
            if let Some(loser) = g.loser() {
                let f = &mut self.failures[loser];
                match g.termination {
                    Termination::Crash => f.crashes += 1,
                    Termination::Stall => f.stalls += 1,
                    Termination::TimeForfeit => f.time_forfeits += 1,
                    Termination::IllegalMove => f.illegal_moves += 1,
                    _ => {}
                }
            }
        }
        self.pairs
            .record(games[0].first_result(), games[1].first_result());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_counted_from_the_first_engine() {
        let mut t = Tally::default();
        let win_as_white = GameSummary {
            first_is_white: true,
            outcome: GameResult::WhiteWins,
            termination: Termination::Checkmate,
        };
        let draw_as_black = GameSummary {
            first_is_white: false,
            outcome: GameResult::Draw,
            termination: Termination::Repetition,
        };
        let crash_loss = GameSummary {
            first_is_white: false,
            outcome: GameResult::BlackWins,
            termination: Termination::Crash,
        };
        t.add_pair([win_as_white, draw_as_black]);
        // First engine is Black and Black wins because White (the second engine) crashed.
        t.add_pair([win_as_white, crash_loss]);
        assert_eq!(t.games, Trinomial::new(3, 1, 0));
        assert_eq!(t.pairs.0, [0, 0, 0, 1, 1]);
        assert_eq!(t.failures[1].crashes, 1);
        assert_eq!(t.failures[0].crashes, 0);
        assert_eq!(t.terminations[&Termination::Checkmate], 2);
    }
}
