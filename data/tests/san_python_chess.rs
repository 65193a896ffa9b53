//! Our SAN must match python-chess's for every move of the reference games in
//! `tests/data/san_games.txt` (made by `tests/gen_san.py`), and read each back.

use data::san::{parse_san, to_san};
use engine::position::Position;

#[test]
fn san_matches_python_chess() {
    let text = include_str!("data/san_games.txt");
    let mut checked = 0;
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(';').collect();
        assert_eq!(fields.len(), 4, "line {}", n + 1);
        let mut pos = Position::from_fen(fields[1]).unwrap();
        if fields[0] == "1" {
            pos.set_chess960(true);
        }
        let ucis: Vec<&str> = fields[2].split_whitespace().collect();
        let sans: Vec<&str> = fields[3].split_whitespace().collect();
        assert_eq!(ucis.len(), sans.len());
        for (ply, (uci, san)) in ucis.iter().zip(&sans).enumerate() {
            let mv = pos.parse_uci_move(uci).unwrap_or_else(|| {
                panic!(
                    "line {} ply {ply}: {uci} illegal in {}",
                    n + 1,
                    pos.to_fen()
                )
            });
            assert_eq!(
                to_san(&pos, mv),
                *san,
                "line {} ply {ply} in {}",
                n + 1,
                pos.to_fen()
            );
            assert_eq!(parse_san(&pos, san), Ok(mv), "line {} ply {ply}", n + 1);
            assert_eq!(parse_san(&pos, uci), Ok(mv), "line {} ply {ply}", n + 1);
            pos.play_mut(mv);
            checked += 1;
        }
    }
    assert!(checked > 10_000, "only {checked} moves checked");
}
