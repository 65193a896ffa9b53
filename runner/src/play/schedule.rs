//! The pair scheduler: game pairs run on a rayon pool, results come back to the calling
//! thread, which accounts for them **in pair order**.
//!
//! Pair k always plays opening k of the (seeded) order, once with each colour, on whichever
//! worker takes it. Because results are counted (and written) strictly in pair order, a run
//! with a node limit produces the same files and the same SPRT stopping point at any
//! concurrency. Pairs that finish out of order wait in a small buffer; if the run is cut
//! short they are dropped and replayed on `--resume`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use engine::position::Position;
use engine::types::Move;

use super::adjudication::Adjudication;
use super::game::{play_game, GameSetup, PlayedGame};
use crate::engines::player::Player;
use crate::engines::variant::Variant;

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

/// What to do after a pair has been accounted for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Keep going.
    Continue,
    /// Stop: abandon games in flight.
    Stop,
}

/// The seed of pair `k` of a run: a SplitMix64 mix of both, independent of scheduling.
pub fn pair_seed(run_seed: u64, pair: u64) -> u64 {
    let mut z = run_seed ^ pair.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A match to play.
pub struct Schedule<'a> {
    /// The two variants.
    pub variants: &'a [Variant; 2],
    /// Pair indices `first_pair..end_pair` are played (`None`: until stopped).
    pub first_pair: u64,
    /// One past the last pair.
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
    pub make_player: &'a (dyn Fn(usize) -> Result<Box<dyn Player>, String> + Sync),
    /// Set from outside (Ctrl-C) to abandon games in flight.
    pub abort: &'a AtomicBool,
}

enum Message {
    Pair(Box<PairOutcome>),
    Game,
    Failed(String),
}

/// Plays pairs in parallel; `on_game` is told of every finished game (progress), `on_pair`
/// receives pairs in index order. Returns an error if a player could not be created.
pub fn run(
    schedule: &Schedule,
    mut on_game: impl FnMut(),
    mut on_pair: impl FnMut(PairOutcome) -> Control,
) -> Result<(), String> {
    let next = AtomicU64::new(schedule.first_pair);
    let stop = Arc::new(AtomicBool::new(false));
    let stop_flags: Mutex<Vec<Arc<AtomicBool>>> = Mutex::new(Vec::new());
    let (tx, rx) = mpsc::channel::<Message>();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(schedule.concurrency.max(1))
        .thread_name(|i| format!("spar-worker-{i}"))
        .build()
        .map_err(|e| format!("cannot start worker threads: {e}"))?;

    let halt = |stop_flags: &Mutex<Vec<Arc<AtomicBool>>>| {
        stop.store(true, Ordering::SeqCst);
        for f in stop_flags.lock().expect("stop flags").iter() {
            f.store(true, Ordering::SeqCst);
        }
    };

    let mut failure = None;
    std::thread::scope(|scope| {
        let worker_tx = tx.clone();
        let stop_w = &stop;
        let next = &next;
        let stop_flags_ref = &stop_flags;
        let pool = &pool;
        scope.spawn(move || {
            pool.broadcast(|_| {
                let tx = worker_tx.clone();
                worker(schedule, next, stop_w, stop_flags_ref, &tx);
            });
            drop(worker_tx);
        });
        drop(tx);

        let mut buffer: BTreeMap<u64, PairOutcome> = BTreeMap::new();
        let mut expected = schedule.first_pair;
        let mut stopped = false;
        loop {
            // Wake up now and then to notice an abort even while games run.
            let msg = match rx.recv_timeout(std::time::Duration::from_millis(50)) {
                Ok(m) => m,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if schedule.abort.load(Ordering::Relaxed) && !stopped {
                        stopped = true;
                        halt(&stop_flags);
                    }
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            match msg {
                Message::Game => {
                    if !stopped {
                        on_game()
                    }
                }
                Message::Failed(e) => {
                    failure.get_or_insert(e);
                    if !stopped {
                        stopped = true;
                        halt(&stop_flags);
                    }
                }
                Message::Pair(p) => {
                    if stopped {
                        continue;
                    }
                    buffer.insert(p.pair, *p);
                    while let Some(p) = buffer.remove(&expected) {
                        expected += 1;
                        if on_pair(p) == Control::Stop {
                            stopped = true;
                            halt(&stop_flags);
                            break;
                        }
                    }
                }
            }
        }
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn worker(
    schedule: &Schedule,
    next: &AtomicU64,
    stop: &AtomicBool,
    stop_flags: &Mutex<Vec<Arc<AtomicBool>>>,
    tx: &mpsc::Sender<Message>,
) {
    if stop.load(Ordering::SeqCst) {
        return;
    }
    let mut players: Vec<Box<dyn Player>> = Vec::with_capacity(2);
    for i in 0..2 {
        match (schedule.make_player)(i) {
            Ok(p) => {
                if let Some(f) = p.stop_flag() {
                    stop_flags.lock().expect("stop flags").push(f);
                }
                players.push(p);
            }
            Err(e) => {
                let _ = tx.send(Message::Failed(format!(
                    "engine '{}': {e}",
                    schedule.variants[i].name
                )));
                for p in &mut players {
                    p.shutdown();
                }
                return;
            }
        }
    }
    // A late-created player must see a stop that happened while it was being made.
    if stop.load(Ordering::SeqCst) {
        for p in &mut players {
            p.shutdown();
        }
        return;
    }
    // `stop` is raised by the accounting thread on a decision, a failure, or an abort
    // (Ctrl-C), so it is the one flag games watch.
    loop {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let k = next.fetch_add(1, Ordering::SeqCst);
        if schedule.end_pair.is_some_and(|end| k >= end) {
            break;
        }
        let opening = (schedule.opening)(k);
        let mut games = Vec::with_capacity(2);
        for g in 0..2 {
            let (first, second) = players.split_at_mut(1);
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
                adjudication: schedule.adjudication,
            };
            match play_game([white, black], &setup, stop) {
                Some(game) => {
                    games.push(game);
                    let _ = tx.send(Message::Game);
                }
                None => break,
            }
        }
        if games.len() < 2 {
            break;
        }
        let games: [PlayedGame; 2] = games.try_into().expect("two games");
        let outcome = PairOutcome {
            pair: k,
            opening: opening.index,
            seed: pair_seed(schedule.seed, k),
            games,
        };
        if tx.send(Message::Pair(Box::new(outcome))).is_err() {
            break;
        }
    }
    for p in &mut players {
        p.shutdown();
    }
}
