//! The incremental Zobrist key equals a from-scratch key along random games, and play/FEN
//! round trips hold at every ply.

use engine::position::Position;

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

#[test]
fn incremental_key_matches_scratch_key_along_random_games() {
    let starts = [
        engine::position::STARTPOS_FEN,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    ];
    let mut seed = 0xDEADBEEFu64;
    let mut plies = 0;
    for fen in starts {
        for _ in 0..50 {
            let mut pos = Position::from_fen(fen).unwrap();
            for _ in 0..200 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let mv = moves[(xorshift(&mut seed) % moves.len() as u64) as usize];
                pos = pos.play(mv);
                plies += 1;
                assert_eq!(
                    pos.key(),
                    pos.compute_key(),
                    "after {mv} in {}",
                    pos.to_fen()
                );
                let reparsed = Position::from_fen(&pos.to_fen()).unwrap();
                assert_eq!(reparsed.key(), pos.key(), "{}", pos.to_fen());
                assert_eq!(reparsed.legal_moves().len(), moves_len(&pos));
            }
        }
    }
    assert!(plies > 10_000);
}

fn moves_len(pos: &Position) -> usize {
    pos.legal_moves().len()
}

#[test]
fn transpositions_have_equal_keys() {
    let a = ["g1f3", "g8f6", "b1c3", "b8c6"];
    let b = ["b1c3", "b8c6", "g1f3", "g8f6"];
    let play = |moves: &[&str]| {
        moves.iter().fold(Position::startpos(), |p, m| {
            let mv = p.parse_uci_move(m).unwrap();
            p.play(mv)
        })
    };
    assert_eq!(play(&a).key(), play(&b).key());
    // Same placement, different castling rights: different keys.
    let c = play(&["g1f3", "g8f6", "h1g1", "h8g8", "g1h1", "g8h8"]);
    let d = play(&["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6"]);
    assert_ne!(c.key(), d.key());
}
