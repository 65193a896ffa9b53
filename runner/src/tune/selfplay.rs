//! Game pairs between two parameter sets of the builtin engine, on a thread pool that lives
//! for the whole tuning run.
//!
//! `spar match` builds its pool and its players (with their transposition tables) once per
//! match; an SPSA iteration is a tiny match with new parameters, so here each pool thread
//! keeps its two searchers and only swaps their parameter tables between pairs. The pairs of
//! an iteration run in parallel; results are summed in pair order, and each game starts from
//! a cleared searcher, so under node or depth limits the outcome does not depend on the
//! number of threads.

use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

use engine::params::Params;
use engine::types::Color;
use rayon::prelude::*;
use sprt::Trinomial;

use crate::engines::player::{BuiltinPlayer, Player};
use crate::engines::variant::Variant;
use crate::error::{CliError, CliResult};
use crate::files::book::OpeningBook;
use crate::play::adjudication::{Adjudication, MatchAdjudicator};
use crate::play::game::{play_game, GameSetup, Seats};

/// A pool of workers, each with a dev and a base searcher.
pub struct SelfPlay {
    pool: rayon::ThreadPool,
    players: Vec<Mutex<[BuiltinPlayer; 2]>>,
    variant: Variant,
    adjudication: Adjudication,
    book: OpeningBook,
}

impl SelfPlay {
    /// Starts `threads` workers. `variant` gives the limits, hash size and the values of the
    /// parameters that are not tuned.
    pub fn new(
        threads: usize,
        variant: Variant,
        adjudication: Adjudication,
        book: OpeningBook,
    ) -> CliResult<SelfPlay> {
        let threads = threads.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("spar-tune-{i}"))
            .build()
            .map_err(|e| CliError::failure(format!("cannot start worker threads: {e}")))?;
        Ok(SelfPlay {
            pool,
            players: (0..threads)
                .map(|_| {
                    Ok(Mutex::new([
                        BuiltinPlayer::new(&variant)?,
                        BuiltinPlayer::new(&variant)?,
                    ]))
                })
                .collect::<CliResult<_>>()?,
            variant,
            adjudication,
            book,
        })
    }

    /// The parameter table of the engine that is not tuned (limits and fixed overrides).
    pub fn base_params(&self) -> &Params {
        &self.variant.params
    }

    /// Plays pairs `pairs` (global pair indices: pair k plays opening k, once per colour)
    /// between `dev` and `base`, in parallel. `on_game` is called (on worker threads) after
    /// each game. Returns dev's wins, draws and losses, or `None` if `abort` was raised
    /// before all games finished.
    pub fn play(
        &self,
        pairs: std::ops::Range<u64>,
        dev: &Params,
        base: &Params,
        abort: &AtomicBool,
        on_game: &(dyn Fn() + Sync),
    ) -> Option<Trinomial> {
        self.pool.install(|| {
            let tallies: Option<Vec<Trinomial>> = pairs
                .into_par_iter()
                .map(|k| self.play_pair(k, dev, base, abort, on_game))
                .collect();
            tallies.map(|v| {
                v.into_iter()
                    .fold(Trinomial::default(), |total, t| total + t)
            })
        })
    }

    fn play_pair(
        &self,
        k: u64,
        dev: &Params,
        base: &Params,
        abort: &AtomicBool,
        on_game: &(dyn Fn() + Sync),
    ) -> Option<Trinomial> {
        let index = rayon::current_thread_index().unwrap_or(0) % self.players.len();
        let mut slot = self.players[index]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let players = &mut *slot;
        players[0].set_params(dev.clone());
        players[1].set_params(base.clone());
        let opening = self.book.opening(k);
        let limits = &self.variant.limits;
        let margin = self.variant.time_margin;
        let mut tally = Trinomial::default();
        let [dev_player, base_player] = players;
        for dev_is_white in [true, false] {
            let setup = GameSetup {
                start: &opening.position,
                book_moves: &opening.moves,
                limits: [limits, limits],
                time_margin: [margin, margin],
                max_moves: self.adjudication.max_moves,
            };
            let seats: [&mut dyn Player; 2] = if dev_is_white {
                [&mut *dev_player, &mut *base_player]
            } else {
                [&mut *base_player, &mut *dev_player]
            };
            let mut adjudicator = MatchAdjudicator::new(&self.adjudication);
            let game = play_game(Seats::Two(seats), &setup, &mut adjudicator, abort)?;
            on_game();
            let dev = if dev_is_white {
                Color::White
            } else {
                Color::Black
            };
            tally.record(match game.outcome.half_points(dev) {
                2 => sprt::PlayerResult::Win,
                1 => sprt::PlayerResult::Draw,
                _ => sprt::PlayerResult::Loss,
            });
        }
        Some(tally)
    }
}
