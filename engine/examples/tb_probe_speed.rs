//! WDL probes per second of `engine::tablebase` on one thread, over the positions of a FEN
//! file (one per line): `cargo run --release -p engine --example tb_probe_speed -- DIRS FENS
//! [ROUNDS]`. Prints the probes per second of the best round and the sum of the WDL values
//! (a checksum to compare with another prober). Used by `bench/tb_probe_speed.sh`.

use std::time::Instant;

use engine::position::Position;
use engine::tablebase::Tablebases;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: tb_probe_speed DIRS FENS [ROUNDS]");
        std::process::exit(2);
    }
    let rounds: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(3);
    let tb = Tablebases::open(&args[1]).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let text = std::fs::read_to_string(&args[2]).unwrap_or_else(|e| {
        eprintln!("{}: {e}", args[2]);
        std::process::exit(2)
    });
    let positions: Vec<Position> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| Position::from_fen(l.trim()).expect("a valid FEN"))
        .collect();
    // Map every table the positions need before timing, as the python-chess run does.
    let mut checksum = 0i64;
    for p in &positions {
        checksum += tb.probe_wdl(p).ok().flatten().map_or(0, |w| w.to_i32()) as i64;
    }
    let mut best = f64::INFINITY;
    for _ in 0..rounds {
        let start = Instant::now();
        let mut sum = 0i64;
        for p in &positions {
            sum += tb.probe_wdl(p).ok().flatten().map_or(0, |w| w.to_i32()) as i64;
        }
        best = best.min(start.elapsed().as_secs_f64());
        assert_eq!(sum, checksum);
    }
    println!(
        "spar {} probes/s (best of {rounds} rounds of {} positions) checksum {checksum}",
        (positions.len() as f64 / best) as u64,
        positions.len()
    );
}
