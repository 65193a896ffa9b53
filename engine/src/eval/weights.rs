//! The evaluation weights other than material and piece-square tables, the layout of the
//! evaluation's *features*, and [`EvalWeights`], the plain copy of all weights that the hot
//! path reads.
//!
//! Every weight is a pair of tunable parameters, `<name>_mg` and `<name>_eg`, one element per
//! feature. A feature is an integer count (for example "pawns that are isolated", or "knights
//! with exactly 5 safe squares"); the evaluation is the sum of weight × (White's count −
//! Black's count), tapered between the midgame and endgame sums by the game phase.

use super::pesto::*;
use crate::params::{Params, Tunable};
use crate::types::{Color, PieceType};

crate::tunable!(
    /// Midgame bonus by the number of safe squares a knight attacks (0..=8).
    pub MOBILITY_KNIGHT_MG = eval "mobility_knight_mg": [-35, -20, -8, -2, 3, 8, 13, 17, 21], -200..=200, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Endgame bonus by the number of safe squares a knight attacks (0..=8).
    pub MOBILITY_KNIGHT_EG = eval "mobility_knight_eg": [-45, -28, -14, -5, 2, 8, 12, 15, 17], -200..=200, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Midgame bonus by the number of safe squares a bishop attacks (0..=13).
    pub MOBILITY_BISHOP_MG = eval "mobility_bishop_mg": [-30, -18, -8, -2, 3, 8, 12, 15, 18, 20, 22, 24, 26, 28], -200..=200, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Endgame bonus by the number of safe squares a bishop attacks (0..=13).
    pub MOBILITY_BISHOP_EG = eval "mobility_bishop_eg": [-40, -25, -14, -6, 0, 5, 10, 14, 17, 20, 22, 24, 26, 28], -200..=200, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Midgame bonus by the number of safe squares a rook attacks (0..=14).
    pub MOBILITY_ROOK_MG = eval "mobility_rook_mg": [-25, -15, -8, -4, -1, 1, 3, 6, 9, 11, 13, 15, 16, 17, 18], -200..=200, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Endgame bonus by the number of safe squares a rook attacks (0..=14).
    pub MOBILITY_ROOK_EG = eval "mobility_rook_eg": [-40, -25, -14, -6, 0, 6, 12, 17, 22, 26, 30, 33, 35, 37, 38], -200..=200, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Midgame bonus by the number of safe squares a queen attacks (0..=27).
    pub MOBILITY_QUEEN_MG = eval "mobility_queen_mg": [
        -20, -14, -10, -7, -5, -3, -2, -1, 0, 1, 2, 3, 4, 5,
        6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
    ], -200..=200, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Endgame bonus by the number of safe squares a queen attacks (0..=27).
    pub MOBILITY_QUEEN_EG = eval "mobility_queen_eg": [
        -30, -22, -16, -12, -9, -6, -3, -1, 1, 3, 5, 7, 9, 11,
        13, 15, 17, 19, 21, 23, 25, 26, 27, 28, 29, 30, 31, 32,
    ], -200..=200, c_end 2.0, r_end 0.002
);

crate::tunable!(
    /// Midgame bonus for a passed pawn by its rank from its owner's side (index 0 = first rank).
    pub PASSED_MG = eval "passed_mg": [0, -5, -5, 0, 10, 25, 45, 0], -200..=400, c_end 3.0, r_end 0.002
);
crate::tunable!(
    /// Endgame bonus for a passed pawn by its rank from its owner's side (index 0 = first rank).
    pub PASSED_EG = eval "passed_eg": [0, 5, 10, 20, 35, 60, 90, 0], -200..=400, c_end 3.0, r_end 0.002
);
crate::tunable!(
    /// Midgame weight per square of distance from a passed pawn's stop square to its own king.
    pub PASSED_OWN_KING_DIST_MG = eval "passed_own_king_dist_mg": 0, -50..=50, c_end 1.0, r_end 0.002
);
crate::tunable!(
    /// Endgame weight per square of distance from a passed pawn's stop square to its own king.
    pub PASSED_OWN_KING_DIST_EG = eval "passed_own_king_dist_eg": -4, -50..=50, c_end 1.0, r_end 0.002
);
crate::tunable!(
    /// Midgame weight per square of distance from a passed pawn's stop square to the enemy king.
    pub PASSED_ENEMY_KING_DIST_MG = eval "passed_enemy_king_dist_mg": 0, -50..=50, c_end 1.0, r_end 0.002
);
crate::tunable!(
    /// Endgame weight per square of distance from a passed pawn's stop square to the enemy king.
    pub PASSED_ENEMY_KING_DIST_EG = eval "passed_enemy_king_dist_eg": 8, -50..=50, c_end 1.0, r_end 0.002
);
crate::tunable!(
    /// Midgame weight of a pawn with no friendly pawn on an adjacent file.
    pub ISOLATED_MG = eval "isolated_mg": -8, -100..=100, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Endgame weight of a pawn with no friendly pawn on an adjacent file.
    pub ISOLATED_EG = eval "isolated_eg": -12, -100..=100, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Midgame weight of a pawn with a friendly pawn in front of it on its file.
    pub DOUBLED_MG = eval "doubled_mg": -8, -100..=100, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Endgame weight of a pawn with a friendly pawn in front of it on its file.
    pub DOUBLED_EG = eval "doubled_eg": -20, -100..=100, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Midgame weight of a backward pawn (not isolated, no friendly pawn beside or behind it on
    /// an adjacent file, stop square attacked by an enemy pawn).
    pub BACKWARD_MG = eval "backward_mg": -6, -100..=100, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Endgame weight of a backward pawn.
    pub BACKWARD_EG = eval "backward_eg": -8, -100..=100, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Midgame weight of a pawn defended by a friendly pawn.
    pub PAWN_SUPPORTED_MG = eval "pawn_supported_mg": 6, -100..=100, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Endgame weight of a pawn defended by a friendly pawn.
    pub PAWN_SUPPORTED_EG = eval "pawn_supported_eg": 4, -100..=100, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Midgame weight of a pawn with a friendly pawn beside it on the same rank.
    pub PAWN_PHALANX_MG = eval "pawn_phalanx_mg": 4, -100..=100, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Endgame weight of a pawn with a friendly pawn beside it on the same rank.
    pub PAWN_PHALANX_EG = eval "pawn_phalanx_eg": 3, -100..=100, c_end 2.0, r_end 0.002
);

crate::tunable!(
    /// Midgame weight per attack on a square of the enemy king zone (the king's square and its
    /// neighbours), by attacker: knight, bishop, rook, queen.
    pub KING_ZONE_ATTACK_MG = eval "king_zone_attack_mg": [8, 6, 6, 5] names [knight, bishop, rook, queen], -100..=200, c_end 1.0, r_end 0.002
);
crate::tunable!(
    /// Endgame weight per attack on a square of the enemy king zone (knight, bishop, rook, queen).
    pub KING_ZONE_ATTACK_EG = eval "king_zone_attack_eg": [0, 0, 0, 0] names [knight, bishop, rook, queen], -100..=200, c_end 1.0, r_end 0.002
);
crate::tunable!(
    /// Midgame bonus by the number of pieces (knights, bishops, rooks, queens; capped at 7)
    /// attacking the enemy king zone.
    pub KING_ATTACKERS_MG = eval "king_attackers_mg": [0, 0, 8, 25, 45, 60, 70, 75], -200..=400, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Endgame bonus by the number of pieces attacking the enemy king zone (capped at 7).
    pub KING_ATTACKERS_EG = eval "king_attackers_eg": [0, 0, 0, 0, 0, 0, 0, 0], -200..=400, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Midgame weight of a friendly pawn on the three files around the king, one rank (`near`)
    /// or two ranks (`far`) in front of it.
    pub KING_SHIELD_MG = eval "king_shield_mg": [12, 6] names [near, far], -100..=100, c_end 1.0, r_end 0.002
);
crate::tunable!(
    /// Endgame weight of a pawn-shield pawn one (`near`) or two (`far`) ranks in front.
    pub KING_SHIELD_EG = eval "king_shield_eg": [0, 0] names [near, far], -100..=100, c_end 1.0, r_end 0.002
);
crate::tunable!(
    /// Midgame weight of each file among the king's and its neighbours with no friendly pawn.
    pub KING_OPEN_FILE_MG = eval "king_open_file_mg": -15, -100..=100, c_end 1.0, r_end 0.002
);
crate::tunable!(
    /// Endgame weight of each file around the king with no friendly pawn.
    pub KING_OPEN_FILE_EG = eval "king_open_file_eg": 0, -100..=100, c_end 1.0, r_end 0.002
);

crate::tunable!(
    /// Midgame bonus for having two or more bishops.
    pub BISHOP_PAIR_MG = eval "bishop_pair_mg": 25, -100..=200, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Endgame bonus for having two or more bishops.
    pub BISHOP_PAIR_EG = eval "bishop_pair_eg": 50, -100..=200, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Midgame bonus of a rook on a file without pawns.
    pub ROOK_OPEN_FILE_MG = eval "rook_open_file_mg": 25, -100..=200, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Endgame bonus of a rook on a file without pawns.
    pub ROOK_OPEN_FILE_EG = eval "rook_open_file_eg": 8, -100..=200, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Midgame bonus of a rook on a file with enemy pawns only.
    pub ROOK_SEMI_OPEN_FILE_MG = eval "rook_semi_open_file_mg": 12, -100..=200, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Endgame bonus of a rook on a file with enemy pawns only.
    pub ROOK_SEMI_OPEN_FILE_EG = eval "rook_semi_open_file_eg": 6, -100..=200, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Midgame bonus per enemy piece (not pawn, not king) attacked by a pawn.
    pub THREAT_BY_PAWN_MG = eval "threat_by_pawn_mg": 40, -100..=300, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Endgame bonus per enemy piece (not pawn, not king) attacked by a pawn.
    pub THREAT_BY_PAWN_EG = eval "threat_by_pawn_eg": 25, -100..=300, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Midgame bonus per enemy rook or queen attacked by a knight or bishop.
    pub THREAT_BY_MINOR_MG = eval "threat_by_minor_mg": 25, -100..=300, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Endgame bonus per enemy rook or queen attacked by a knight or bishop.
    pub THREAT_BY_MINOR_EG = eval "threat_by_minor_eg": 20, -100..=300, c_end 2.0, r_end 0.002
);
crate::tunable!(
    /// Midgame bonus for the side to move.
    pub TEMPO_MG = eval "tempo_mg": 15, -50..=100, c_end 1.0, r_end 0.002
);
crate::tunable!(
    /// Endgame bonus for the side to move.
    pub TEMPO_EG = eval "tempo_eg": 5, -50..=100, c_end 1.0, r_end 0.002
);

/// Feature indices: where each weight lives in [`EvalWeights`] and in an `EvalTrace`
/// before it is mapped to parameter indices.
pub(crate) mod feature {
    /// Material, by piece type.
    pub const MATERIAL: usize = 0;
    /// Piece-square tables: `PST + piece_type * 64 + square from the owner's view`.
    pub const PST: usize = MATERIAL + 6;
    /// Knight mobility by safe-square count.
    pub const MOB_KNIGHT: usize = PST + 6 * 64;
    /// Bishop mobility by count.
    pub const MOB_BISHOP: usize = MOB_KNIGHT + 9;
    /// Rook mobility by count.
    pub const MOB_ROOK: usize = MOB_BISHOP + 14;
    /// Queen mobility by count.
    pub const MOB_QUEEN: usize = MOB_ROOK + 15;
    /// Passed pawns by relative rank.
    pub const PASSED: usize = MOB_QUEEN + 28;
    /// Sum of own-king distances to passed pawns' stop squares.
    pub const PASSED_OWN_KING_DIST: usize = PASSED + 8;
    /// Sum of enemy-king distances to passed pawns' stop squares.
    pub const PASSED_ENEMY_KING_DIST: usize = PASSED_OWN_KING_DIST + 1;
    /// Isolated pawns.
    pub const ISOLATED: usize = PASSED_ENEMY_KING_DIST + 1;
    /// Doubled pawns (the rear ones).
    pub const DOUBLED: usize = ISOLATED + 1;
    /// Backward pawns.
    pub const BACKWARD: usize = DOUBLED + 1;
    /// Pawns defended by pawns.
    pub const SUPPORTED: usize = BACKWARD + 1;
    /// Pawns with a neighbour on the same rank.
    pub const PHALANX: usize = SUPPORTED + 1;
    /// Attacks on the enemy king zone by knight, bishop, rook, queen.
    pub const KING_ZONE_ATTACK: usize = PHALANX + 1;
    /// Number of pieces attacking the enemy king zone (indicator per count 0..=7).
    pub const KING_ATTACKERS: usize = KING_ZONE_ATTACK + 4;
    /// Pawn shield one and two ranks in front of the king.
    pub const KING_SHIELD: usize = KING_ATTACKERS + 8;
    /// Files around the king without own pawns.
    pub const KING_OPEN_FILE: usize = KING_SHIELD + 2;
    /// Bishop pair.
    pub const BISHOP_PAIR: usize = KING_OPEN_FILE + 1;
    /// Rooks on open files.
    pub const ROOK_OPEN: usize = BISHOP_PAIR + 1;
    /// Rooks on semi-open files.
    pub const ROOK_SEMI_OPEN: usize = ROOK_OPEN + 1;
    /// Enemy pieces attacked by pawns.
    pub const THREAT_BY_PAWN: usize = ROOK_SEMI_OPEN + 1;
    /// Enemy rooks and queens attacked by minors.
    pub const THREAT_BY_MINOR: usize = THREAT_BY_PAWN + 1;
    /// Side to move.
    pub const TEMPO: usize = THREAT_BY_MINOR + 1;
    /// Number of features.
    pub const COUNT: usize = TEMPO + 1;
}

/// One block of consecutive features and the midgame / endgame parameters holding its weights.
pub(crate) struct Block {
    /// First feature index.
    pub start: usize,
    /// Midgame weights.
    pub mg: &'static Tunable,
    /// Endgame weights.
    pub eg: &'static Tunable,
}

/// Every feature block in feature order (the PST block is one per piece type).
pub(crate) static BLOCKS: [Block; 29] = {
    use feature::*;
    [
        Block {
            start: MATERIAL,
            mg: &MATERIAL_MG,
            eg: &MATERIAL_EG,
        },
        Block {
            start: PST,
            mg: &PST_PAWN_MG,
            eg: &PST_PAWN_EG,
        },
        Block {
            start: PST + 64,
            mg: &PST_KNIGHT_MG,
            eg: &PST_KNIGHT_EG,
        },
        Block {
            start: PST + 128,
            mg: &PST_BISHOP_MG,
            eg: &PST_BISHOP_EG,
        },
        Block {
            start: PST + 192,
            mg: &PST_ROOK_MG,
            eg: &PST_ROOK_EG,
        },
        Block {
            start: PST + 256,
            mg: &PST_QUEEN_MG,
            eg: &PST_QUEEN_EG,
        },
        Block {
            start: PST + 320,
            mg: &PST_KING_MG,
            eg: &PST_KING_EG,
        },
        Block {
            start: MOB_KNIGHT,
            mg: &MOBILITY_KNIGHT_MG,
            eg: &MOBILITY_KNIGHT_EG,
        },
        Block {
            start: MOB_BISHOP,
            mg: &MOBILITY_BISHOP_MG,
            eg: &MOBILITY_BISHOP_EG,
        },
        Block {
            start: MOB_ROOK,
            mg: &MOBILITY_ROOK_MG,
            eg: &MOBILITY_ROOK_EG,
        },
        Block {
            start: MOB_QUEEN,
            mg: &MOBILITY_QUEEN_MG,
            eg: &MOBILITY_QUEEN_EG,
        },
        Block {
            start: PASSED,
            mg: &PASSED_MG,
            eg: &PASSED_EG,
        },
        Block {
            start: PASSED_OWN_KING_DIST,
            mg: &PASSED_OWN_KING_DIST_MG,
            eg: &PASSED_OWN_KING_DIST_EG,
        },
        Block {
            start: PASSED_ENEMY_KING_DIST,
            mg: &PASSED_ENEMY_KING_DIST_MG,
            eg: &PASSED_ENEMY_KING_DIST_EG,
        },
        Block {
            start: ISOLATED,
            mg: &ISOLATED_MG,
            eg: &ISOLATED_EG,
        },
        Block {
            start: DOUBLED,
            mg: &DOUBLED_MG,
            eg: &DOUBLED_EG,
        },
        Block {
            start: BACKWARD,
            mg: &BACKWARD_MG,
            eg: &BACKWARD_EG,
        },
        Block {
            start: SUPPORTED,
            mg: &PAWN_SUPPORTED_MG,
            eg: &PAWN_SUPPORTED_EG,
        },
        Block {
            start: PHALANX,
            mg: &PAWN_PHALANX_MG,
            eg: &PAWN_PHALANX_EG,
        },
        Block {
            start: KING_ZONE_ATTACK,
            mg: &KING_ZONE_ATTACK_MG,
            eg: &KING_ZONE_ATTACK_EG,
        },
        Block {
            start: KING_ATTACKERS,
            mg: &KING_ATTACKERS_MG,
            eg: &KING_ATTACKERS_EG,
        },
        Block {
            start: KING_SHIELD,
            mg: &KING_SHIELD_MG,
            eg: &KING_SHIELD_EG,
        },
        Block {
            start: KING_OPEN_FILE,
            mg: &KING_OPEN_FILE_MG,
            eg: &KING_OPEN_FILE_EG,
        },
        Block {
            start: BISHOP_PAIR,
            mg: &BISHOP_PAIR_MG,
            eg: &BISHOP_PAIR_EG,
        },
        Block {
            start: ROOK_OPEN,
            mg: &ROOK_OPEN_FILE_MG,
            eg: &ROOK_OPEN_FILE_EG,
        },
        Block {
            start: ROOK_SEMI_OPEN,
            mg: &ROOK_SEMI_OPEN_FILE_MG,
            eg: &ROOK_SEMI_OPEN_FILE_EG,
        },
        Block {
            start: THREAT_BY_PAWN,
            mg: &THREAT_BY_PAWN_MG,
            eg: &THREAT_BY_PAWN_EG,
        },
        Block {
            start: THREAT_BY_MINOR,
            mg: &THREAT_BY_MINOR_MG,
            eg: &THREAT_BY_MINOR_EG,
        },
        Block {
            start: TEMPO,
            mg: &TEMPO_MG,
            eg: &TEMPO_EG,
        },
    ]
};

/// A midgame / endgame pair of values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct S {
    /// Midgame value.
    pub mg: i32,
    /// Endgame value.
    pub eg: i32,
}

impl core::ops::AddAssign for S {
    #[inline(always)]
    fn add_assign(&mut self, o: S) {
        self.mg += o.mg;
        self.eg += o.eg;
    }
}

impl core::ops::Mul<i32> for S {
    type Output = S;
    #[inline(always)]
    fn mul(self, k: i32) -> S {
        S {
            mg: self.mg * k,
            eg: self.eg * k,
        }
    }
}

/// Evaluation weights copied out of a [`Params`] table once per searcher: plain arrays, so
/// the evaluation never looks a parameter up.
#[derive(Clone, Debug)]
pub struct EvalWeights {
    /// Weight of each feature, in [`feature`] order.
    pub(crate) s: [S; feature::COUNT],
    /// Material plus piece-square value of each piece on each square, already signed
    /// (negative for Black) and mirrored for Black: `psqt[color][piece_type][square]`.
    pub(crate) psqt: [[[S; 64]; 6]; 2],
}

impl Default for EvalWeights {
    /// The weights at their default values.
    fn default() -> Self {
        EvalWeights::new(&Params::defaults())
    }
}

impl EvalWeights {
    /// The weights in a parameter table.
    ///
    /// ```
    /// use engine::eval::{evaluate, EvalWeights};
    /// use engine::params::Params;
    /// use engine::position::Position;
    /// let w = EvalWeights::new(&Params::defaults());
    /// assert!(evaluate(&Position::startpos(), &w).abs() < 40);
    /// ```
    pub fn new(params: &Params) -> EvalWeights {
        let mut s = [S::default(); feature::COUNT];
        for block in &BLOCKS {
            let mg = params.array(block.mg);
            let eg = params.array(block.eg);
            for (i, (&m, &e)) in mg.iter().zip(eg).enumerate() {
                s[block.start + i] = S { mg: m, eg: e };
            }
        }
        let mut psqt = [[[S::default(); 64]; 6]; 2];
        for color in Color::ALL {
            for kind in PieceType::ALL {
                let value = s[feature::MATERIAL + kind as usize];
                let table = &s[feature::PST + kind as usize * 64..][..64];
                for (sq, slot) in psqt[color as usize][kind as usize].iter_mut().enumerate() {
                    let p = table[sq ^ (56 * color as usize)];
                    *slot = S {
                        mg: value.mg + p.mg,
                        eg: value.eg + p.eg,
                    } * color.sign();
                }
            }
        }
        EvalWeights { s, psqt }
    }
}
