//! A hand-built network that approximates material plus simple piece-square values, made
//! without training, of any width: tests and width benchmarks use it (it was the default net
//! before the first trained one; the ignored test `write_placeholder_net` writes one to a file).
//!
//! Each pair of hidden neurons `(2j, 2j+1)` starts at `b = 127` and adds `±s_j · x`, where
//! `x` is the perspective's material balance in centipawns; with output weights `+w_j, −w_j`
//! the pair contributes `w_j·((b + s_j x)² − (b − s_j x)²) = 4·b·w_j·s_j·x`, linear in `x`
//! while `|s_j x| ≤ b`. Scales `s_j` run from fine (a linear range of ±8 pawns) to coarse
//! (±40 pawns), so small balances are exact and large ones are squashed smoothly. The other
//! perspective's half adds the same with signs reversed, so the net is colour-symmetric.

use super::network::{feature_index, Layout, Network, QA, QB, SCALE};
use crate::types::{Color, PieceType, Square};

/// Value in centipawns of a piece of `kind` on `sq`, seen from its owner's side (rank 1 is
/// its back rank).
fn piece_value(kind: PieceType, sq: Square) -> f64 {
    let f = sq.index() % 8;
    let r = sq.index() / 8;
    let centre = |x: usize| 3.5 - (x as f64 - 3.5).abs(); // 0.5 at the edge, 3.5 in the middle
    let central = centre(f) + centre(r) - 4.0; // −3 (corner) … +3 (centre)
    match kind {
        PieceType::Pawn => {
            let advance = [0.0, 0.0, 4.0, 8.0, 16.0, 30.0, 55.0, 0.0][r];
            let middle = if (3..=4).contains(&f) && (2..=4).contains(&r) {
                8.0
            } else {
                0.0
            };
            100.0 + advance + middle
        }
        PieceType::Knight => 320.0 + 6.0 * central,
        PieceType::Bishop => 330.0 + 3.0 * central,
        PieceType::Rook => 500.0 + if r == 6 { 15.0 } else { 0.0 },
        PieceType::Queen => 900.0 + 2.0 * central,
        PieceType::King => match r {
            0 if f <= 2 || f >= 6 => 15.0,
            0 => 0.0,
            _ => -8.0 * r as f64,
        },
    }
}

/// The placeholder network of width `hidden` (a multiple of 16): the evaluation is about
/// the material and piece-square balance in centipawns, from the side to move.
pub fn material_network(hidden: usize) -> Network {
    let mut net = Network::zeroed(hidden, Layout::PLAIN);
    let pairs = hidden / 2;
    let bias = 127i32;
    // Want Σ_j 8·b·w_j·s_j · SCALE / (QA · QA·QB) = 1 (both halves give 4·b·w·s·x each).
    let target = f64::from(QA * QA * QB) / (8.0 * f64::from(bias) * f64::from(SCALE));
    let per_pair = target / pairs as f64;
    for j in 0..pairs {
        // Linear range from ±8 pawns to ±40 pawns, geometric.
        let t = if pairs > 1 {
            j as f64 / (pairs - 1) as f64
        } else {
            0.0
        };
        let range = 800.0 * 5f64.powf(t);
        let s = f64::from(bias) / range;
        let w = (per_pair / s).round().clamp(1.0, 127.0) as i16;
        // Feature weights are shared by both perspectives: fill them from White's.
        for color in Color::ALL {
            for kind in PieceType::ALL {
                for i in 0..64 {
                    let sq = Square::from_index(i);
                    // The owner's view of its square: rank-flipped for Black.
                    let (owner_sq, sign) = if color == Color::White {
                        (sq, s)
                    } else {
                        (sq.flip_rank(), -s)
                    };
                    let v = (piece_value(kind, owner_sq) * sign).round() as i16;
                    let idx = feature_index(Color::White, color, kind, sq);
                    net.feature_weights[idx * hidden + 2 * j] = v;
                    net.feature_weights[idx * hidden + 2 * j + 1] = -v;
                }
            }
        }
        net.feature_bias[2 * j] = bias as i16;
        net.feature_bias[2 * j + 1] = bias as i16;
        net.output_weights[2 * j] = w;
        net.output_weights[2 * j + 1] = -w;
        net.output_weights[hidden + 2 * j] = -w;
        net.output_weights[hidden + 2 * j + 1] = w;
    }
    net
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nnue::Net;
    use crate::position::Position;

    #[test]
    fn the_placeholder_counts_material() {
        let net = Net::new(&material_network(128));
        let eval = |fen: &str| net.evaluate(&Position::from_fen(fen).unwrap());
        assert_eq!(eval(crate::position::STARTPOS_FEN), 0);
        // White a queen up, White to move: about +900; Black to move: about −900.
        let up = eval("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        assert!((700..1100).contains(&up), "{up}");
        let down = eval("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1");
        assert_eq!(down, -up);
        let pawn = eval("rnbqkbnr/ppppppp1/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        assert!((70..140).contains(&pawn), "{pawn}");
    }

    /// Writes the placeholder net: `SPAR_WRITE_NET=engine/nets/default.nnue SPAR_NET_WIDTH=128
    /// cargo test -p engine --profile ci write_placeholder_net -- --ignored`.
    #[test]
    #[ignore]
    fn write_placeholder_net() {
        let Ok(path) = std::env::var("SPAR_WRITE_NET") else {
            return;
        };
        let width = std::env::var("SPAR_NET_WIDTH")
            .ok()
            .and_then(|w| w.parse().ok())
            .unwrap_or(128);
        std::fs::write(&path, material_network(width).to_bytes()).unwrap();
    }
}
