//! Garbage in, errors out: mutated and random inputs never make a reader panic.

use std::path::Path;

use data::book::{parse_epd, parse_pgn, BookOptions};
use data::pgn::read_games;
use data::results::parse_results;
use data::san::parse_san;
use engine::position::Position;
use engine::rng::SplitMix64;

const PGN: &str = "[Event \"x\"]\n[FEN \"4k3/8/8/8/8/8/8/4K2R w K - 0 1\"]\n\n1. O-O {c} Kd7 (1... Ke7) $1 2. Rf2 ; x\nKe6 *\n";
const EPD: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\r\nbqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9 bm e4;\n";
const CSV: &str = "pair,game,opening,seed,white,black,result,termination,plies,white_nodes,black_nodes,duration_ms\n0,0,1,2,a,b,1-0,normal,3,4,5,6\n";

/// `text` with a few bytes replaced, inserted or deleted, as (lossy) UTF-8.
fn mutate(text: &str, rng: &mut SplitMix64) -> String {
    const ALPHABET: &[u8] = b" \n\r\t{}()[];$\"\\/.-=+#!?0123456789abcdefghxKQRBNPkqrbnpwO*%";
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(4) {
        let i = rng.below(bytes.len() + 1);
        let c = ALPHABET[rng.below(ALPHABET.len())];
        match rng.below(3) {
            0 if i < bytes.len() => bytes[i] = c,
            1 => bytes.insert(i, c),
            _ if i < bytes.len() => {
                bytes.remove(i);
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn mutated_inputs_give_errors_not_panics() {
    let mut rng = SplitMix64::new(1);
    let opts = BookOptions::default();
    let start = Position::startpos();
    for _ in 0..20_000 {
        let _ = read_games(&mutate(PGN, &mut rng));
        let _ = parse_pgn(&mutate(PGN, &mut rng), "m.pgn", &opts);
        let _ = parse_epd(&mutate(EPD, &mut rng), "m.epd", false);
        let _ = parse_results(&mutate(CSV, &mut rng), Path::new("m.csv"));
        let _ = parse_san(&start, &mutate("Nf3", &mut rng));
        let _ = parse_san(&start, &mutate("e2e4", &mut rng));
    }
}
