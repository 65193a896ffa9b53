//! Self-play games for training data: a random opening checked by a first search, then
//! the shared game loop with one builtin player on both sides and datagen's adjudication.
//!
//! Game k depends only on (seed, k) and the options: its opening comes from a generator
//! seeded with H(seed, k), and each game starts with an emptied hash table and histories.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use data::book::Book;
use data::training::dfrc::{dfrc_position_from_index, DFRC_POSITIONS};
use data::training::{white_score, ScoredMove, TrainingGame};
use engine::position::Position;
use engine::rng::{mix_seed, SplitMix64};
use engine::search::Limits;
use engine::types::Move;

use crate::engines::player::{BuiltinPlayer, MoveRequest, Player};
use crate::engines::variant::Variant;
use crate::error::{CliError, CliResult};
use crate::play::adjudication::{TrainingAdjudicator, TrainingRules};
use crate::play::game::{play_game, rules_verdict, GameSetup, Seats, Termination};
use crate::play::ordered::Worker;
use crate::play::tablebase::TablebaseRule;

/// Where the random plies start.
pub enum Source {
    /// The standard start position.
    StartPosition,
    /// Random positions of a book.
    Book(Book),
    /// Random double-Fischer-random start positions.
    Dfrc,
}

/// How each game is played.
pub struct GameOptions {
    /// Where the random plies start.
    pub source: Source,
    /// Random legal plies before the engine takes over.
    pub random_plies: u32,
    /// Largest |score| of the first search that accepts an opening.
    pub opening_limit: i32,
    /// The self-play engine: builtin defaults, the node limit, the hash size.
    pub variant: Variant,
    /// When games end early.
    pub adjudication: TrainingRules,
    /// `--tb`: a game ends at its first position the tables cover, with their result (which
    /// then labels every position of the game).
    pub tablebase: Option<TablebaseRule>,
    /// Run seed.
    pub seed: u64,
}

/// A finished game and what it cost.
pub struct Played {
    /// The game.
    pub game: TrainingGame,
    /// Time spent searching.
    pub search_time: Duration,
    /// Time the game took.
    pub total_time: Duration,
}

/// A worker: one builtin player that plays both sides of its games.
pub struct GameWorker<'a> {
    /// How games are played.
    pub options: &'a GameOptions,
    /// The player of both sides.
    pub player: BuiltinPlayer,
}

impl Worker for GameWorker<'_> {
    type Output = Played;

    fn run(&mut self, k: u64, stop: &AtomicBool, _tick: &dyn Fn()) -> CliResult<Option<Played>> {
        play_training_game(&mut self.player, self.options, k, stop)
    }

    fn stop_flags(&self) -> Vec<Arc<AtomicBool>> {
        self.player.stop_flag().into_iter().collect()
    }
}

/// Openings tried before giving up (a limit far below what any reasonable setting needs).
const MAX_OPENING_TRIES: u32 = 10_000;

/// Plays game `k` through the shared game loop; `None` if stopped.
///
/// The opening: random plies from the start (chosen by a generator seeded with
/// H(seed, k)), then a search from an emptied hash table that must find the position
/// within --opening-limit. The game loop then plays from there with the same player on
/// both sides and datagen's adjudication; its first search repeats the check's search
/// (same empty state, same result).
pub fn play_training_game(
    player: &mut BuiltinPlayer,
    options: &GameOptions,
    k: u64,
    stop: &AtomicBool,
) -> CliResult<Option<Played>> {
    let started = Instant::now();
    let limits = &options.variant.limits;
    let search_limits = Limits {
        nodes: limits.nodes,
        ..Limits::default()
    };
    let mut rng = SplitMix64::new(mix_seed(options.seed, k));
    let mut opening_search = Duration::ZERO;
    let mut tries = 0;
    let (origin, plies, start) = loop {
        tries += 1;
        if tries > MAX_OPENING_TRIES {
            // The options ask for what cannot be found: bad input.
            return Err(CliError::usage(format!(
                "no opening scored within --opening-limit {} cp in {MAX_OPENING_TRIES} tries; \
                 raise --opening-limit or lower --random-plies",
                options.opening_limit
            )));
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let Some((origin, plies, pos, history)) = random_opening(options, &mut rng) else {
            continue;
        };
        // An opening already inside the tables (`--tb`) would be a game without a move.
        if options
            .tablebase
            .as_ref()
            .is_some_and(|t| t.judge(&pos).is_some())
        {
            continue;
        }
        player
            .new_game(pos.is_chess960())
            .map_err(|e| CliError::failure(e.to_string()))?;
        let t0 = Instant::now();
        let first = player.go(&MoveRequest {
            start_fen: "",
            moves: &[],
            position: &pos,
            history: &history,
            limits: &search_limits,
        });
        opening_search += t0.elapsed();
        if first.is_ok_and(|r| {
            r.score
                .is_some_and(|s| s.as_cp().abs() <= options.opening_limit)
        }) {
            break (origin, plies, pos);
        }
    };
    let setup = GameSetup {
        start: &origin,
        book_moves: &plies,
        limits: [limits, limits],
        time_margin: [options.variant.time_margin; 2],
        max_moves: None,
    };
    let mut adjudicator =
        TrainingAdjudicator::new(options.adjudication).with_tablebase(options.tablebase.clone());
    let Some(game) = play_game(Seats::Same(player), &setup, &mut adjudicator, stop) else {
        return Ok(None);
    };
    if matches!(
        game.termination,
        Termination::IllegalMove | Termination::Crash | Termination::Stall
    ) {
        return Err(CliError::failure(format!(
            "the search found no move in a game from {}: {}",
            start.to_fen(),
            game.reason
        )));
    }
    let mut side = start.side_to_move();
    let mut moves: Vec<ScoredMove> = Vec::with_capacity(game.moves.len());
    let mut search_time = opening_search;
    for m in game.moves.iter().filter(|m| !m.book) {
        let score = m
            .score
            .ok_or_else(|| CliError::failure("the builtin engine reported no score"))?;
        moves.push(ScoredMove {
            mv: m.mv,
            score: white_score(score, side),
        });
        search_time += m.time;
        side = !side;
    }
    let result = game.outcome;
    Ok(Some(Played {
        game: TrainingGame {
            start,
            moves,
            result,
        },
        search_time,
        total_time: started.elapsed(),
    }))
}

/// A start position, the random plies after it, the position they reach and the keys of
/// the positions before it (for repetitions); `None` if the plies ended the game.
fn random_opening(
    options: &GameOptions,
    rng: &mut SplitMix64,
) -> Option<(Position, Vec<Move>, Position, Vec<u64>)> {
    let origin = match &options.source {
        Source::StartPosition => Position::startpos(),
        Source::Book(book) => book.opening(rng.below(book.len())).position(),
        Source::Dfrc => dfrc_position_from_index(rng.below(DFRC_POSITIONS as usize) as u32),
    };
    let mut pos = origin.clone();
    let mut plies = Vec::with_capacity(options.random_plies as usize);
    let mut history = Vec::with_capacity(256);
    for _ in 0..options.random_plies {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            return None;
        }
        let mv = legal.as_slice()[rng.below(legal.len())];
        history.push(pos.key());
        plies.push(mv);
        pos.play_mut(mv);
    }
    rules_verdict(&pos, &history)
        .is_none()
        .then_some((origin, plies, pos, history))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> GameOptions {
        let each = ["nodes=300", "option.Hash=1"].map(String::from);
        GameOptions {
            source: Source::Dfrc,
            random_plies: 4,
            opening_limit: 300,
            variant: crate::engines::variant::parse_variant(&[], &each, 0).unwrap(),
            adjudication: TrainingRules::default(),
            tablebase: None,
            seed: 7,
        }
    }

    #[test]
    fn games_are_deterministic_and_balanced() {
        let options = options();
        let stop = AtomicBool::new(false);
        let mut p1 = BuiltinPlayer::new(&options.variant).unwrap();
        let mut p2 = BuiltinPlayer::new(&options.variant).unwrap();
        let a = play_training_game(&mut p1, &options, 3, &stop)
            .unwrap()
            .unwrap();
        // A player that played another game first gives the same game: fresh state.
        play_training_game(&mut p2, &options, 4, &stop)
            .unwrap()
            .unwrap();
        let b = play_training_game(&mut p2, &options, 3, &stop)
            .unwrap()
            .unwrap();
        assert_eq!(a.game, b.game);
        assert!(i32::from(a.game.moves[0].score).abs() <= 300);
        assert!(a.search_time <= a.total_time);
    }

    #[test]
    fn a_raised_stop_abandons_the_game() {
        let options = options();
        let stop = AtomicBool::new(true);
        let mut p = BuiltinPlayer::new(&options.variant).unwrap();
        assert!(play_training_game(&mut p, &options, 0, &stop)
            .unwrap()
            .is_none());
    }
}
