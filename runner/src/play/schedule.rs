//! The pair scheduler: game pairs run on a pool of workers ([`super::ordered`]), results
//! come back to the calling thread, which accounts for them **in pair order**.
//!
//! Pair k always plays opening k of the (seeded) order, once with each colour, on whichever
//! worker takes it. Because results are counted (and written) strictly in pair order, a run
//! with a node limit produces the same files and the same SPRT stopping point at any
//! concurrency. Pairs that finish out of order wait in a small buffer; if the run is cut
//! short they are dropped and replayed on `--resume`.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use engine::position::Position;
use engine::rng::pair_seed;
use engine::types::Move;

use super::adjudication::{Adjudication, MatchAdjudicator};
use super::game::{play_game, GameSetup, PlayedGame, Seats};
pub use super::ordered::Control;
pub use super::ordered::Stride;
use super::ordered::{self, Jobs, Worker};
use crate::engines::player::Player;
use crate::engines::variant::Variant;
use crate::error::CliResult;

/// The start of a pair's games: a position and book moves to play from it.
#[derive(Clone, Debug)]
pub struct OpeningStart {
    /// Index of the opening in the book file (for CSV and PGN).
    pub index: usize,
    /// Position to start from.
    pub position: Position,
    /// Book moves played before the engines take over.
    pub moves: Vec<Move>,
}

/// A finished pair: game 0 has the first variant as White, game 1 as Black.
#[derive(Clone, Debug)]
pub struct PairOutcome {
    /// Pair index (0-based).
    pub pair: u64,
    /// The opening.
    pub opening: usize,
    /// The pair's seed, H(run seed, pair).
    pub seed: u64,
    /// The two games.
    pub games: [PlayedGame; 2],
}

/// A match to play.
pub struct Schedule<'a> {
    /// The two variants.
    pub variants: &'a [Variant; 2],
    /// Which pairs are played: all of them, or every Nth (a shard of a cluster run).
    /// `first_pair` and `end_pair` count the pairs of this stride.
    pub stride: Stride,
    /// Pairs `first_pair..end_pair` of the stride are played (`None`: until stopped).
    pub first_pair: u64,
    /// One past the last pair of the stride.
    pub end_pair: Option<u64>,
    /// Worker threads.
    pub concurrency: usize,
    /// Run seed.
    pub seed: u64,
    /// Adjudication rules.
    pub adjudication: &'a Adjudication,
    /// Opening of pair k.
    pub opening: &'a (dyn Fn(u64) -> OpeningStart + Sync),
    /// Makes the player of variant `i` for a worker.
    pub make_player: &'a (dyn Fn(usize) -> CliResult<Box<dyn Player>> + Sync),
    /// Set from outside (Ctrl-C) to abandon games in flight.
    pub abort: &'a AtomicBool,
    /// Whether pair k may start now (`None`: every pair; a shard: the SPRT's horizon).
    pub admit: Option<&'a (dyn Fn(u64) -> bool + Sync)>,
}

/// Plays pairs in parallel; `on_game` is told of every finished game (progress), `on_pair`
/// receives pairs in index order. Returns a usage error if a player could not be created.
pub fn run(
    schedule: &Schedule,
    on_game: impl FnMut(),
    on_pair: impl FnMut(PairOutcome) -> Control,
) -> CliResult {
    let jobs = Jobs {
        stride: schedule.stride,
        first: schedule.first_pair,
        end: schedule.end_pair,
        concurrency: schedule.concurrency,
        abort: schedule.abort,
        admit: schedule.admit,
    };
    let make_worker = || -> CliResult<PairWorker> {
        let mut players: Vec<Box<dyn Player>> = Vec::with_capacity(2);
        for i in 0..2 {
            match (schedule.make_player)(i) {
                Ok(p) => players.push(p),
                Err(e) => {
                    for p in &mut players {
                        p.shutdown();
                    }
                    return Err(e);
                }
            }
        }
        Ok(PairWorker { schedule, players })
    };
    ordered::run(&jobs, &make_worker, on_game, on_pair)
}

/// A worker's two players.
struct PairWorker<'a> {
    schedule: &'a Schedule<'a>,
    players: Vec<Box<dyn Player>>,
}

impl Worker for PairWorker<'_> {
    type Output = PairOutcome;

    fn run(
        &mut self,
        k: u64,
        stop: &AtomicBool,
        tick: &dyn Fn(),
    ) -> CliResult<Option<PairOutcome>> {
        let schedule = self.schedule;
        let opening = (schedule.opening)(k);
        let mut games = Vec::with_capacity(2);
        for g in 0..2 {
            let (first, second) = self.players.split_at_mut(1);
            let (a, b) = (&mut first[0], &mut second[0]);
            // Game 0: variant 0 is White; game 1: colours swapped.
            let (white, black, wi, bi): (&mut dyn Player, &mut dyn Player, usize, usize) = if g == 0
            {
                (a.as_mut(), b.as_mut(), 0, 1)
            } else {
                (b.as_mut(), a.as_mut(), 1, 0)
            };
            let v = schedule.variants;
            let setup = GameSetup {
                start: &opening.position,
                book_moves: &opening.moves,
                limits: [&v[wi].limits, &v[bi].limits],
                time_margin: [v[wi].time_margin, v[bi].time_margin],
                max_moves: schedule.adjudication.max_moves,
            };
            let mut adjudicator = MatchAdjudicator::new(schedule.adjudication);
            match play_game(Seats::Two([white, black]), &setup, &mut adjudicator, stop) {
                Some(game) => {
                    games.push(game);
                    tick();
                }
                None => return Ok(None),
            }
        }
        let games: [PlayedGame; 2] = games.try_into().expect("two games");
        Ok(Some(PairOutcome {
            pair: k,
            opening: opening.index,
            seed: pair_seed(schedule.seed, k),
            games,
        }))
    }

    fn stop_flags(&self) -> Vec<Arc<AtomicBool>> {
        self.players.iter().filter_map(|p| p.stop_flag()).collect()
    }

    fn shutdown(&mut self) {
        for p in &mut self.players {
            p.shutdown();
        }
    }
}
