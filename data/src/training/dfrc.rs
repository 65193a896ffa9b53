//! Double-Fischer-random (DFRC) start positions: each side's back rank is one of the 960
//! Chess960 arrangements, chosen independently, so there are 960 × 960 = 921 600 starts.
//! Arrangements are numbered as Scharnagl numbered them (518 is the standard one).

use engine::position::Position;
use engine::types::PieceType;

/// Number of Chess960 back ranks.
pub const FRC_POSITIONS: u32 = 960;
/// Number of DFRC start positions.
pub const DFRC_POSITIONS: u32 = FRC_POSITIONS * FRC_POSITIONS;

/// The back rank (a-file first) of Chess960 position `n` (0..960) in Scharnagl's numbering.
///
/// ```
/// use data::training::dfrc::frc_back_rank;
/// use engine::types::PieceType::*;
/// assert_eq!(frc_back_rank(518), [Rook, Knight, Bishop, Queen, King, Bishop, Knight, Rook]);
/// assert_eq!(frc_back_rank(0), [Bishop, Bishop, Queen, Knight, Knight, Rook, King, Rook]);
/// ```
pub fn frc_back_rank(n: u32) -> [PieceType; 8] {
    assert!(n < FRC_POSITIONS, "Chess960 positions are numbered 0..960");
    const KNIGHTS: [(usize, usize); 10] = [
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (1, 2),
        (1, 3),
        (1, 4),
        (2, 3),
        (2, 4),
        (3, 4),
    ];
    let mut rank: [Option<PieceType>; 8] = [None; 8];
    let n = n as usize;
    rank[2 * (n % 4) + 1] = Some(PieceType::Bishop);
    let n = n / 4;
    rank[2 * (n % 4)] = Some(PieceType::Bishop);
    let n = n / 4;
    let place = |rank: &mut [Option<PieceType>; 8], nth: usize, piece: PieceType| {
        let file = (0..8)
            .filter(|&f| rank[f].is_none())
            .nth(nth)
            .expect("an empty square");
        rank[file] = Some(piece);
    };
    place(&mut rank, n % 6, PieceType::Queen);
    let (k1, k2) = KNIGHTS[n / 6];
    // The second knight's index counts the empty squares before the first was placed.
    place(&mut rank, k2, PieceType::Knight);
    place(&mut rank, k1, PieceType::Knight);
    for piece in [PieceType::Rook, PieceType::King, PieceType::Rook] {
        place(&mut rank, 0, piece);
    }
    rank.map(|p| p.expect("all eight squares filled"))
}

/// The DFRC start position with White's back rank `white` and Black's `black` (0..960 each),
/// with all four castling rights (as Shredder-FEN rook files).
///
/// ```
/// use data::training::dfrc::dfrc_position;
/// assert_eq!(
///     dfrc_position(518, 518).to_fen(),
///     "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
/// );
/// let pos = dfrc_position(0, 959);
/// assert!(pos.is_chess960());
/// assert_eq!(pos.legal_moves().len(), 20);
/// ```
pub fn dfrc_position(white: u32, black: u32) -> Position {
    let w = frc_back_rank(white);
    let b = frc_back_rank(black);
    let row = |rank: &[PieceType; 8], upper: bool| -> String {
        rank.iter()
            .map(|p| {
                if upper {
                    p.char().to_ascii_uppercase()
                } else {
                    p.char()
                }
            })
            .collect()
    };
    let rook_files = |rank: &[PieceType; 8], upper: bool| -> String {
        (0..8)
            .rev()
            .filter(|&f| rank[f] == PieceType::Rook)
            .map(|f| {
                let c = (b'a' + f as u8) as char;
                if upper {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect()
    };
    let fen = format!(
        "{}/pppppppp/8/8/8/8/PPPPPPPP/{} w {}{} - 0 1",
        row(&b, false),
        row(&w, true),
        rook_files(&w, true),
        rook_files(&b, false)
    );
    Position::from_fen(&fen).expect("a DFRC start position is valid")
}

/// DFRC position number `index` (0..921 600): White's back rank `index / 960`, Black's
/// `index % 960`.
pub fn dfrc_position_from_index(index: u32) -> Position {
    let index = index % DFRC_POSITIONS;
    dfrc_position(index / FRC_POSITIONS, index % FRC_POSITIONS)
}
