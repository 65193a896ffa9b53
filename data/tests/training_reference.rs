//! The training formats against the reference implementations: the `viriformat` crate
//! (Viridithas's own reader and writer, which bullet uses) and `bulletformat` (bullet's text
//! parser). Games come from random play (biased towards castling, en passant and
//! promotions) from the standard start, tactical middlegames and DFRC starts.

use std::path::PathBuf;

use data::training::dfrc::{dfrc_position, frc_back_rank};
use data::training::text::{format_line, parse_line};
use data::training::viriformat::{
    decode_game, encode_game, encode_move, result_from_wdl_byte, GameReader,
};
use data::training::{ScoredMove, TrainingGame};
use engine::position::Position;
use engine::rng::SplitMix64;
use engine::types::{CastleSide, Color, GameResult, PieceType};

use viriformat::chess::board::{Board, DrawType, GameOutcome, WinType};
use viriformat::chess::chessmove::Move as VMove;
use viriformat::chess::piece::Colour as VColour;
use viriformat::dataformat::Game as VGame;

fn golden_bytes() -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/viriformat/golden.hex");
    let hex = std::fs::read_to_string(path).unwrap();
    let hex = hex.trim();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn golden_game_written_by_the_crate_decodes() {
    let bytes = golden_bytes();
    assert_eq!(bytes.len(), 56);
    let game = decode_game(&bytes).unwrap();
    assert_eq!(game.start, Position::startpos());
    assert_eq!(game.result, GameResult::WhiteWins);
    let moves: Vec<String> = game.moves.iter().map(|m| m.mv.to_uci(false)).collect();
    assert_eq!(moves, ["e2e4", "e7e5", "d1h5", "e8e7", "h5e5"]);
    let scores: Vec<i16> = game.moves.iter().map(|m| m.score).collect();
    assert_eq!(scores, [10, 20, -30, 32767, 32767]);
    let mut again = Vec::new();
    encode_game(&game, &mut again);
    assert_eq!(again, bytes, "re-encoding gives the crate's bytes");
}

/// A FEN whose castling field names the rook files (what the crate reads unambiguously).
fn shredder_fen(pos: &Position) -> String {
    let fen = pos.to_fen();
    let fields: Vec<&str> = fen.split(' ').collect();
    let mut castling = String::new();
    for color in Color::ALL {
        for side in CastleSide::ALL {
            if let Some(sq) = pos.castling_rook(color, side) {
                let c = sq.file().char();
                castling.push(if color == Color::White {
                    c.to_ascii_uppercase()
                } else {
                    c
                });
            }
        }
    }
    if castling.is_empty() {
        castling.push('-');
    }
    format!(
        "{} {} {} {} {} {}",
        fields[0], fields[1], castling, fields[3], fields[4], fields[5]
    )
}

fn crate_board(pos: &Position) -> Board {
    let mut board = Board::new();
    board.set_from_fen(&shredder_fen(pos), true).unwrap();
    board
}

/// Random play, preferring castling, en passant and promotions when they are legal.
fn random_game(start: Position, rng: &mut SplitMix64, max_plies: usize) -> TrainingGame {
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for _ in 0..max_plies {
        let legal = pos.legal_moves();
        if legal.is_empty() || pos.halfmove_clock() >= 100 {
            break;
        }
        let special: Vec<_> = legal
            .as_slice()
            .iter()
            .copied()
            .filter(|m| m.is_castle() || m.is_en_passant() || m.is_promotion())
            .collect();
        let mv = if !special.is_empty() && rng.below(2) == 0 {
            special[rng.below(special.len())]
        } else {
            legal.as_slice()[rng.below(legal.len())]
        };
        let score = (rng.next_u64() % 4001) as i16 - 2000;
        moves.push(ScoredMove { mv, score });
        pos = pos.play(mv);
    }
    TrainingGame {
        start,
        moves,
        result: result_from_wdl_byte(rng.below(3) as u8).unwrap(),
    }
}

fn starts() -> Vec<Position> {
    let mut v: Vec<Position> = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
        "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1",
        "4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 40",
    ]
    .iter()
    .map(|f| Position::from_fen(f).unwrap())
    .collect();
    v.extend(
        [(0, 959), (518, 100), (333, 777), (959, 0), (100, 100)].map(|(w, b)| dfrc_position(w, b)),
    );
    v
}

fn games() -> Vec<TrainingGame> {
    let mut rng = SplitMix64::new(2024);
    let mut games = Vec::new();
    for start in starts() {
        for _ in 0..6 {
            let plies = 1 + rng.below(160);
            games.push(random_game(start.clone(), &mut rng, plies));
        }
    }
    games
}

/// The same game written by the reference crate.
fn crate_game(game: &TrainingGame) -> VGame {
    let mut g = VGame::new(&crate_board(&game.start));
    for m in &game.moves {
        g.add_move(VMove::from_raw(encode_move(m.mv)).unwrap(), m.score);
    }
    g.set_outcome(match game.result {
        GameResult::WhiteWins => GameOutcome::WhiteWin(WinType::Mate),
        GameResult::BlackWins => GameOutcome::BlackWin(WinType::Adjudication),
        GameResult::Draw => GameOutcome::Draw(DrawType::Adjudication),
    });
    g
}

#[test]
fn our_bytes_are_the_crates_bytes() {
    let (mut castles, mut frc_castles, mut en_passant, mut promotions) = (0, 0, 0, 0);
    for game in games() {
        let mut ours = Vec::new();
        encode_game(&game, &mut ours);
        let mut theirs = Vec::new();
        crate_game(&game).serialise_into(&mut theirs).unwrap();
        assert_eq!(ours, theirs, "game from {}", game.start.to_fen());
        for m in &game.moves {
            castles += m.mv.is_castle() as u32;
            frc_castles += (m.mv.is_castle() && game.start.is_chess960()) as u32;
            en_passant += m.mv.is_en_passant() as u32;
            promotions += m.mv.is_promotion() as u32;
        }
        // And the crate's bytes decode to the same game here.
        assert_eq!(decode_game(&theirs).unwrap(), game);
    }
    assert!(
        castles >= 10 && frc_castles >= 5,
        "castling covered: {castles} ({frc_castles} Chess960)"
    );
    assert!(en_passant >= 3, "en passant covered: {en_passant}");
    assert!(promotions >= 10, "promotions covered: {promotions}");
}

#[test]
fn the_crate_reads_our_files_back_exactly() {
    let games = games();
    let mut file = Vec::new();
    for g in &games {
        encode_game(g, &mut file);
    }
    let mut reader = std::io::BufReader::new(file.as_slice());
    for game in &games {
        let read = VGame::deserialise_from(&mut reader, Vec::new()).unwrap();
        let expected_wdl = match game.result {
            GameResult::WhiteWins => viriformat::dataformat::WDL::Win,
            GameResult::Draw => viriformat::dataformat::WDL::Draw,
            GameResult::BlackWins => viriformat::dataformat::WDL::Loss,
        };
        assert_eq!(read.outcome(), expected_wdl);
        assert_eq!(read.len(), game.moves.len());
        let mut board = read.initial_position();
        let mut pos = game.start.clone();
        let mut evals = Vec::new();
        read.visit_positions(|_, eval| evals.push(eval));
        for ((mv, m), eval) in read.moves().zip(&game.moves).zip(evals) {
            assert_same_position(&board, &pos);
            assert_eq!(eval, i32::from(m.score));
            assert!(
                board.legal_moves().contains(&mv),
                "{mv:?} is legal for the crate in {}",
                pos.to_fen()
            );
            assert_eq!(mv.is_castle(), m.mv.is_castle());
            assert!(board.make_move_simple(mv));
            pos = pos.play(m.mv);
        }
        assert_same_position(&board, &pos);
    }
    assert!(
        VGame::deserialise_from(&mut reader, Vec::new()).is_err(),
        "nothing left"
    );
}

fn assert_same_position(board: &Board, pos: &Position) {
    let theirs = board.to_string();
    let ours = pos.to_fen();
    let t: Vec<&str> = theirs.split(' ').collect();
    let o: Vec<&str> = ours.split(' ').collect();
    // Placement, side to move, halfmove clock and fullmove number. (The crate keeps an
    // en-passant square after every double push; ours only when a capture is possible.)
    for i in [0, 1, 4, 5] {
        assert_eq!(t[i], o[i], "field {i}: crate {theirs} vs ours {ours}");
    }
    let rights = board.castling_rights();
    for (colour, color) in [
        (VColour::White, Color::White),
        (VColour::Black, Color::Black),
    ] {
        let theirs_k = rights.kingside(colour).map(|s| s.inner());
        let theirs_q = rights.queenside(colour).map(|s| s.inner());
        let ours_k = pos.castling_rook(color, CastleSide::King).map(|s| s as u8);
        let ours_q = pos.castling_rook(color, CastleSide::Queen).map(|s| s as u8);
        assert_eq!((theirs_k, theirs_q), (ours_k, ours_q), "castling in {ours}");
    }
}

#[test]
fn chess960_castling_is_king_takes_rook() {
    // King on e1 between rooks on b1 and g1: both castlings are legal at once.
    let start =
        Position::from_fen("1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1").unwrap();
    let oo = start.parse_uci_move("e1g1").unwrap();
    assert!(oo.is_castle());
    let after = start.play(oo);
    let ooo = after.parse_uci_move("e8b8").unwrap();
    assert!(ooo.is_castle());
    let game = TrainingGame {
        start: start.clone(),
        moves: vec![
            ScoredMove { mv: oo, score: 15 },
            ScoredMove { mv: ooo, score: -7 },
        ],
        result: GameResult::Draw,
    };
    let mut bytes = Vec::new();
    encode_game(&game, &mut bytes);
    // e1 = 4, g1 = 6: 4 | 6 << 6 | 2 << 14; e8 = 60, b8 = 57.
    assert_eq!(&bytes[32..34], &(4u16 | 6 << 6 | 2 << 14).to_le_bytes());
    assert_eq!(&bytes[36..38], &(60u16 | 57 << 6 | 2 << 14).to_le_bytes());
    // The unmoved rooks carry the rights: nibble 6 (white) and 14 (black).
    let nibbles: Vec<u8> = (0..32)
        .map(|i| (bytes[8 + i / 2] >> (4 * (i % 2))) & 15)
        .collect();
    assert_eq!(
        &nibbles[..4],
        &[6, 5, 6, 0],
        "b1 rook, e1 king, g1 rook, a2 pawn"
    );
    let read = VGame::deserialise_from(&mut bytes.as_slice(), Vec::new()).unwrap();
    let mut board = read.initial_position();
    let moves: Vec<VMove> = read.moves().collect();
    assert!(moves[0].is_castle() && moves[1].is_castle());
    assert!(board.make_move_simple(moves[0]));
    assert!(board.make_move_simple(moves[1]));
    assert_eq!(
        board.to_string().split(' ').next().unwrap(),
        "2kr2r1/pppppppp/8/8/8/8/PPPPPPPP/1R3RK1"
    );
    assert_eq!(decode_game(&bytes).unwrap(), game);
}

#[test]
fn frc_numbering_matches_the_crate() {
    for n in 0..960 {
        let ours = frc_back_rank(n).map(|p| p as u8);
        let theirs = Board::get_scharnagl_backrank(n as usize).map(|p| p.inner());
        assert_eq!(ours, theirs, "Chess960 position {n}");
    }
}

#[test]
fn bullet_parses_our_text_lines() {
    use std::str::FromStr;
    for game in games().iter().take(30) {
        for p in game.positions() {
            let l = &p.labelled;
            let line = format_line(&l.position, l.score, l.result);
            let parsed = bulletformat::ChessBoard::from_str(&line).unwrap();
            let pos = &l.position;
            let mut bbs = [0u64; 8];
            bbs[0] = pos.color(Color::White).0;
            bbs[1] = pos.color(Color::Black).0;
            for (i, kind) in PieceType::ALL.iter().enumerate() {
                bbs[2 + i] = pos.pieces(*kind).0;
            }
            let expected = bulletformat::ChessBoard::from_raw(
                bbs,
                pos.side_to_move() as usize,
                l.score,
                l.result.white_points(),
            )
            .unwrap();
            assert_eq!(parsed, expected, "{line}");
            let back = parse_line(&line).unwrap();
            assert_eq!(back, *l);
        }
    }
}

#[test]
fn reader_reports_corrupt_records_with_their_offset() {
    let games = games();
    let mut bytes = Vec::new();
    encode_game(&games[0], &mut bytes);
    let second = bytes.len() as u64;
    encode_game(&games[1], &mut bytes);
    // An illegal move in the second game: from = to's square set to an empty one.
    let mut bad = bytes.clone();
    let first_move = second as usize + 32;
    bad[first_move] = 0x3f; // from h8 … to whatever: not legal
    bad[first_move + 1] = 0x0f;
    let results: Vec<_> = GameReader::new(bad.as_slice()).collect();
    assert_eq!(results.len(), 2);
    assert!(results[0].is_ok());
    let err = results[1].as_ref().unwrap_err();
    assert_eq!(err.offset, second);
    assert!(err.message.contains("not a legal move"), "{err}");
    // A bad result byte.
    let mut bad = bytes.clone();
    bad[30] = 7;
    let err = GameReader::new(bad.as_slice()).next().unwrap().unwrap_err();
    assert_eq!(err.offset, 0);
    assert!(err.message.contains("result byte 7"), "{err}");
    // Cut short.
    let cut = &bytes[..bytes.len() - 2];
    let results: Vec<_> = GameReader::new(cut).collect();
    assert!(results[0].is_ok());
    let err = results[1].as_ref().unwrap_err();
    assert!(err.message.starts_with("truncated"), "{err}");
}
