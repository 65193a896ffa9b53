//! Game pairs between two parameter sets of the builtin engine or of an external UCI engine,
//! on a thread pool that lives for the whole tuning run.
//!
//! `spar match` builds its pool and its players (with their transposition tables) once per
//! match; an SPSA iteration is a tiny match with new parameters, so here each pool thread
//! keeps its two searchers and only swaps their parameter tables between pairs. The pairs of
//! an iteration run in parallel; results are summed in pair order, and each game starts from
//! a cleared searcher, so under node or depth limits the outcome does not depend on the
//! number of threads.
//!
//! An external engine keeps one process per seat and pool thread; before each game it gets
//! `setoption name X value V` for every tuned parameter, then `ucinewgame`.

use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::Duration;

use engine::params::Params;
use engine::types::Color;
use sprt::Trinomial;

use crate::engines::player::{BuiltinPlayer, Player};
use crate::engines::uci::UciPlayer;
use crate::engines::variant::{Source, Variant};
use crate::error::{CliError, CliResult};
use crate::files::book::OpeningBook;
use crate::play::adjudication::{Adjudication, MatchAdjudicator};
use crate::play::game::{play_game, GameSetup, PlayedGame, Seats};

/// One side of a worker: the builtin searcher or an external engine's process.
#[allow(clippy::large_enum_variant)] // a few per thread, made once
enum Seat {
    Builtin(BuiltinPlayer),
    Uci(UciPlayer),
}

impl Seat {
    fn start(variant: &Variant, stall_timeout: Duration) -> CliResult<Seat> {
        Ok(match variant.source {
            Source::Uci { .. } => Seat::Uci(
                UciPlayer::new(variant, stall_timeout)
                    .map_err(|e| CliError::usage(format!("engine '{}': {e}", variant.name)))?,
            ),
            _ => Seat::Builtin(BuiltinPlayer::new(variant)?),
        })
    }

    fn set(&mut self, values: &Values) {
        match (self, values) {
            (Seat::Builtin(p), Values::Builtin(params)) => p.set_params(params.clone()),
            (Seat::Uci(p), Values::Uci(options)) => p.set_per_game_options(options.clone()),
            _ => unreachable!("values of the other kind of engine"),
        }
    }

    fn player(&mut self) -> &mut dyn Player {
        match self {
            Seat::Builtin(p) => p,
            Seat::Uci(p) => p,
        }
    }
}

/// The tuned values of one side in the form its engine takes them.
pub enum Values {
    /// The builtin engine's whole parameter table.
    Builtin(Params),
    /// An external engine's tuned UCI options, as (name, value).
    Uci(Vec<(String, String)>),
}

/// A pool of workers, each with a dev and a base engine.
pub struct SelfPlay {
    players: Vec<Mutex<[Seat; 2]>>,
    variant: Variant,
    adjudication: Adjudication,
    book: OpeningBook,
}

impl SelfPlay {
    /// Starts `threads` workers. `variant` gives the engine (builtin or external UCI), the
    /// limits, hash size and the values of the parameters that are not tuned;
    /// `stall_timeout` is the watchdog of an external engine under node or depth limits.
    pub fn new(
        threads: usize,
        variant: Variant,
        adjudication: Adjudication,
        book: OpeningBook,
        stall_timeout: Duration,
    ) -> CliResult<SelfPlay> {
        let threads = threads.max(1);
        Ok(SelfPlay {
            players: (0..threads)
                .map(|_| {
                    Ok(Mutex::new([
                        Seat::start(&variant, stall_timeout)?,
                        Seat::start(&variant, stall_timeout)?,
                    ]))
                })
                .collect::<CliResult<_>>()?,
            variant,
            adjudication,
            book,
        })
    }

    /// The values of one side: for the builtin engine its parameter table (limits and fixed
    /// overrides) with `names` set to `values`; for an external engine the options.
    pub fn values(&self, names: &[String], values: &[i64]) -> CliResult<Values> {
        if matches!(self.variant.source, Source::Uci { .. }) {
            return Ok(Values::Uci(
                names
                    .iter()
                    .zip(values)
                    .map(|(n, v)| (n.clone(), v.to_string()))
                    .collect(),
            ));
        }
        let mut p = self.variant.params.clone();
        for (n, &v) in names.iter().zip(values) {
            p.set(n, v).map_err(|e| CliError::failure(e.to_string()))?;
        }
        Ok(Values::Builtin(p))
    }

    /// Plays pairs `pairs` (global pair indices: pair k plays opening k, once per colour)
    /// between `dev` and `base`, in parallel on the workers. `on_game` is called (on worker
    /// threads) after each game. Returns dev's wins, draws and losses, or `None` if `abort`
    /// was raised before all games finished.
    #[allow(dead_code)] // the probe's (--probe) way in
    pub fn play(
        &self,
        pairs: std::ops::Range<u64>,
        dev: &Values,
        base: &Values,
        abort: &AtomicBool,
        on_game: &(dyn Fn() + Sync),
    ) -> Option<Trinomial> {
        let next = std::sync::atomic::AtomicU64::new(pairs.start);
        let total = Mutex::new(Some(Trinomial::default()));
        std::thread::scope(|scope| {
            for worker in 0..self.workers() {
                let (next, total) = (&next, &total);
                scope.spawn(move || loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    if k >= pairs.end {
                        return;
                    }
                    let games = self.play_on(worker, k, dev, base, abort, on_game);
                    let mut t = total.lock().unwrap_or_else(|e| e.into_inner());
                    match (games, t.as_mut()) {
                        (Some(g), Some(sum)) => *sum += tally(&g),
                        _ => *t = None,
                    }
                });
            }
        });
        total.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    /// Worker threads (each with its own pair of engines).
    pub fn workers(&self) -> usize {
        self.players.len()
    }

    /// Plays pair `k` (opening `k`, dev White first) on worker `worker`'s engines, from any
    /// thread; `None` if `abort` was raised first.
    pub fn play_on(
        &self,
        worker: usize,
        k: u64,
        dev: &Values,
        base: &Values,
        abort: &AtomicBool,
        on_game: &(dyn Fn() + Sync),
    ) -> Option<[PlayedGame; 2]> {
        let mut slot = self.players[worker % self.players.len()]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let players = &mut *slot;
        players[0].set(dev);
        players[1].set(base);
        let opening = self.book.opening(k);
        let limits = &self.variant.limits;
        let margin = self.variant.time_margin;
        let [dev_player, base_player] = players;
        let mut games = Vec::with_capacity(2);
        for dev_is_white in [true, false] {
            let setup = GameSetup {
                start: &opening.position,
                book_moves: &opening.moves,
                limits: [limits, limits],
                time_margin: [margin, margin],
                max_moves: self.adjudication.max_moves,
            };
            let seats: [&mut dyn Player; 2] = if dev_is_white {
                [dev_player.player(), base_player.player()]
            } else {
                [base_player.player(), dev_player.player()]
            };
            let mut adjudicator = MatchAdjudicator::new(&self.adjudication);
            let game = play_game(Seats::Two(seats), &setup, &mut adjudicator, abort)?;
            on_game();
            games.push(game);
        }
        let [a, b]: [PlayedGame; 2] = games.try_into().ok()?;
        Some([a, b])
    }
}

/// Dev's wins, draws and losses in a pair played by [`SelfPlay::play_on`] (dev White in the
/// first game).
pub fn tally(games: &[PlayedGame; 2]) -> Trinomial {
    let mut t = Trinomial::default();
    for (g, game) in games.iter().enumerate() {
        let dev = if g == 0 { Color::White } else { Color::Black };
        t.record(match game.outcome.half_points(dev) {
            2 => sprt::PlayerResult::Win,
            1 => sprt::PlayerResult::Draw,
            _ => sprt::PlayerResult::Loss,
        });
    }
    t
}
