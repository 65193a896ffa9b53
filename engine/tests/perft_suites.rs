//! The perft suites from `tests/perft/` (standard chess and Chess960), every depth whose
//! expected leaf count is under a cap so the whole run stays short in the optimised test
//! profile. Deeper lines are for `spar perft --suite` and the benchmark.

use engine::perft::{parse_suite_line, perft};
use engine::position::Position;

const NODE_CAP: u64 = 2_000_000;

fn run_suite(text: &str, chess960: bool) -> usize {
    let mut checked = 0;
    for line in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let entry = parse_suite_line(line).unwrap();
        let pos = Position::from_fen(&entry.fen).unwrap_or_else(|e| panic!("{}: {e}", entry.fen));
        assert!(chess960 || !pos.is_chess960(), "{}", entry.fen);
        for (depth, expected) in entry.depths {
            if expected > NODE_CAP {
                continue;
            }
            assert_eq!(perft(&pos, depth), expected, "{} depth {depth}", entry.fen);
            checked += 1;
        }
    }
    checked
}

#[test]
fn standard_suite() {
    let checked = run_suite(include_str!("perft/standard.epd"), false);
    assert!(checked > 500, "only {checked} entries checked");
}

#[test]
fn chess960_suite() {
    let checked = run_suite(include_str!("perft/frc.epd"), true);
    assert!(checked >= 960 * 3, "only {checked} entries checked");
}
