//! Handcrafted evaluation (being written): the interface the search uses.

use crate::params::Params;
use crate::position::Position;
use crate::types::{Color, PieceType};

/// Evaluation weights copied out of a [`Params`] table once per searcher.
#[derive(Clone, Debug)]
pub struct EvalWeights {
    material: [i32; 6],
}

impl EvalWeights {
    /// The weights in a parameter table.
    pub fn new(_params: &Params) -> EvalWeights {
        EvalWeights { material: [100, 320, 330, 500, 900, 0] }
    }
}

/// The static evaluation in centipawns from the side to move's point of view.
pub fn evaluate(pos: &Position, w: &EvalWeights) -> i32 {
    let mut score = 0;
    for kind in PieceType::ALL {
        let n = pos.colored(Color::White, kind).count() as i32 - pos.colored(Color::Black, kind).count() as i32;
        score += n * w.material[kind as usize];
    }
    score * pos.side_to_move().sign()
}
