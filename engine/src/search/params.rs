//! The search's tunable parameters, registered with [`tunable!`](crate::tunable) so that
//! SPSA can tune them, and copied into a plain [`SearchParams`] struct for the hot path.

use crate::params::Params;

use super::timeman::TimeShares;

crate::tunable!(
    /// Initial half-width of the aspiration window (cp).
    pub ASP_WINDOW = search "asp_window": 20, 5..=100, c_end 2.0, r_end 0.002);
crate::tunable!(
    /// Deepest depth at which reverse futility pruning applies.
    pub RFP_DEPTH = search "rfp_depth": 8, 1..=14, c_end 0.5, r_end 0.002);
crate::tunable!(
    /// Reverse futility margin per ply of depth (cp).
    pub RFP_MARGIN = search "rfp_margin": 75, 20..=200, c_end 6.0, r_end 0.002);
crate::tunable!(
    /// Null-move reduction: base.
    pub NMP_BASE = search "nmp_base": 3, 1..=6, c_end 0.5, r_end 0.002);
crate::tunable!(
    /// Null-move reduction: one more ply per this many plies of depth.
    pub NMP_DIVISOR = search "nmp_divisor": 3, 2..=8, c_end 0.5, r_end 0.002);
crate::tunable!(
    /// Null-move reduction: one more ply per this much eval above beta (cp).
    pub NMP_EVAL_DIVISOR = search "nmp_eval_divisor": 200, 50..=600, c_end 15.0, r_end 0.002);
crate::tunable!(
    /// Depth from which a null-move cutoff is verified by a reduced search.
    pub NMP_VERIFY_DEPTH = search "nmp_verify_depth": 14, 6..=30, c_end 1.0, r_end 0.002);
crate::tunable!(
    /// Late-move reduction table: base, in hundredths of a ply.
    pub LMR_BASE = search "lmr_base": 75, 0..=200, c_end 8.0, r_end 0.002);
crate::tunable!(
    /// Late-move reduction table: divisor of ln(depth)·ln(moves), in hundredths.
    pub LMR_DIVISOR = search "lmr_divisor": 225, 100..=500, c_end 12.0, r_end 0.002);
crate::tunable!(
    /// History needed for one ply less of late-move reduction.
    pub LMR_HISTORY_DIVISOR = search "lmr_history_divisor": 8192, 1024..=32768, c_end 512.0, r_end 0.002);
crate::tunable!(
    /// Late move pruning: quiet moves searched before the rest are skipped is
    /// `(lmp_base + depth²) / (2 − improving)`.
    pub LMP_BASE = search "lmp_base": 3, 0..=12, c_end 0.5, r_end 0.002);
crate::tunable!(
    /// Deepest (reduced) depth at which futility pruning of quiet moves applies.
    pub FUTILITY_DEPTH = search "futility_depth": 8, 1..=14, c_end 0.5, r_end 0.002);
crate::tunable!(
    /// Futility margin: base (cp).
    pub FUTILITY_BASE = search "futility_base": 80, 0..=300, c_end 8.0, r_end 0.002);
crate::tunable!(
    /// Futility margin per ply of reduced depth (cp).
    pub FUTILITY_MARGIN = search "futility_margin": 90, 20..=300, c_end 8.0, r_end 0.002);
crate::tunable!(
    /// SEE pruning of quiet moves: threshold is `-see_quiet_margin · lmr_depth²`.
    pub SEE_QUIET_MARGIN = search "see_quiet_margin": 25, 0..=150, c_end 3.0, r_end 0.002);
crate::tunable!(
    /// SEE pruning of captures: threshold is `-see_noisy_margin · depth`.
    pub SEE_NOISY_MARGIN = search "see_noisy_margin": 100, 0..=300, c_end 8.0, r_end 0.002);
crate::tunable!(
    /// Quiescence delta pruning margin (cp).
    pub QS_FUTILITY_MARGIN = search "qs_futility_margin": 150, 0..=500, c_end 10.0, r_end 0.002);
crate::tunable!(
    /// Depth from which internal iterative reduction applies.
    pub IIR_DEPTH = search "iir_depth": 4, 2..=10, c_end 0.5, r_end 0.002);
crate::tunable!(
    /// History bonus per ply of depth.
    pub HISTORY_BONUS_MULT = search "history_bonus_mult": 300, 50..=800, c_end 20.0, r_end 0.002);
crate::tunable!(
    /// History bonus offset.
    pub HISTORY_BONUS_BASE = search "history_bonus_base": -250, -1000..=500, c_end 25.0, r_end 0.002);
crate::tunable!(
    /// Largest history bonus.
    pub HISTORY_BONUS_MAX = search "history_bonus_max": 2400, 500..=6000, c_end 100.0, r_end 0.002);
crate::tunable!(
    /// Static-evaluation correction history: how much of the learnt correction is applied,
    /// in 256ths (0: none).
    pub CORR_WEIGHT = search "corr_weight": 256, 0..=512, c_end 16.0, r_end 0.002);

crate::tunable!(
    /// History pruning of quiet moves: deepest depth at which a quiet move with a bad
    /// history is skipped (0: off, the default until its SPRT passes).
    pub HIST_PRUNE_DEPTH = search "hist_prune_depth": 0, 0..=6, c_end 0.5, r_end 0.002);
crate::tunable!(
    /// History pruning of quiet moves: a quiet move whose history is below
    /// `-hist_prune_margin · depth` is skipped.
    pub HIST_PRUNE_MARGIN = search "hist_prune_margin": 3000, 500..=10000, c_end 250.0, r_end 0.002);
crate::tunable!(
    /// ProbCut: shallowest depth at which it is tried (100: off, the default until its
    /// SPRT passes).
    pub PROBCUT_DEPTH = search "probcut_depth": 100, 3..=100, c_end 0.5, r_end 0.002);
crate::tunable!(
    /// ProbCut: how far above beta (cp) a capture must score, in quiescence and then in a
    /// search 4 plies shallower, to cut the node.
    pub PROBCUT_MARGIN = search "probcut_margin": 200, 50..=500, c_end 15.0, r_end 0.002);

/// Largest depth and move count in the reduction table.
const LMR_SIZE: usize = 64;

/// The search parameters as plain integers, plus derived tables.
#[derive(Clone, Debug)]
pub struct SearchParams {
    /// See [`ASP_WINDOW`].
    pub asp_window: i32,
    /// See [`RFP_DEPTH`].
    pub rfp_depth: i32,
    /// See [`RFP_MARGIN`].
    pub rfp_margin: i32,
    /// See [`NMP_BASE`].
    pub nmp_base: i32,
    /// See [`NMP_DIVISOR`].
    pub nmp_divisor: i32,
    /// See [`NMP_EVAL_DIVISOR`].
    pub nmp_eval_divisor: i32,
    /// See [`NMP_VERIFY_DEPTH`].
    pub nmp_verify_depth: i32,
    /// See [`LMR_HISTORY_DIVISOR`].
    pub lmr_history_divisor: i32,
    /// See [`LMP_BASE`].
    pub lmp_base: i32,
    /// See [`FUTILITY_DEPTH`].
    pub futility_depth: i32,
    /// See [`FUTILITY_BASE`].
    pub futility_base: i32,
    /// See [`FUTILITY_MARGIN`].
    pub futility_margin: i32,
    /// See [`SEE_QUIET_MARGIN`].
    pub see_quiet_margin: i32,
    /// See [`SEE_NOISY_MARGIN`].
    pub see_noisy_margin: i32,
    /// See [`QS_FUTILITY_MARGIN`].
    pub qs_futility_margin: i32,
    /// See [`IIR_DEPTH`].
    pub iir_depth: i32,
    /// See [`HISTORY_BONUS_MULT`].
    pub history_bonus_mult: i32,
    /// See [`HISTORY_BONUS_BASE`].
    pub history_bonus_base: i32,
    /// See [`HISTORY_BONUS_MAX`].
    pub history_bonus_max: i32,
    /// See [`CORR_WEIGHT`].
    pub corr_weight: i32,
    /// See [`HIST_PRUNE_DEPTH`].
    pub hist_prune_depth: i32,
    /// See [`HIST_PRUNE_MARGIN`].
    pub hist_prune_margin: i32,
    /// See [`PROBCUT_DEPTH`].
    pub probcut_depth: i32,
    /// See [`PROBCUT_MARGIN`].
    pub probcut_margin: i32,
    /// The clock's shares (time management).
    pub time: TimeShares,
    /// `lmr[depth][moves]`: the base late-move reduction in plies.
    lmr: Box<[[i32; LMR_SIZE]; LMR_SIZE]>,
}

impl SearchParams {
    /// Copies the search parameters out of a table.
    pub fn new(p: &Params) -> SearchParams {
        let base = p.get(&LMR_BASE) as f64 / 100.0;
        let divisor = p.get(&LMR_DIVISOR) as f64 / 100.0;
        let mut lmr = Box::new([[0i32; LMR_SIZE]; LMR_SIZE]);
        for (d, row) in lmr.iter_mut().enumerate().skip(1) {
            for (m, r) in row.iter_mut().enumerate().skip(1) {
                *r = (base + (d as f64).ln() * (m as f64).ln() / divisor).max(0.0) as i32;
            }
        }
        SearchParams {
            asp_window: p.get(&ASP_WINDOW),
            rfp_depth: p.get(&RFP_DEPTH),
            rfp_margin: p.get(&RFP_MARGIN),
            nmp_base: p.get(&NMP_BASE),
            nmp_divisor: p.get(&NMP_DIVISOR),
            nmp_eval_divisor: p.get(&NMP_EVAL_DIVISOR),
            nmp_verify_depth: p.get(&NMP_VERIFY_DEPTH),
            lmr_history_divisor: p.get(&LMR_HISTORY_DIVISOR),
            lmp_base: p.get(&LMP_BASE),
            futility_depth: p.get(&FUTILITY_DEPTH),
            futility_base: p.get(&FUTILITY_BASE),
            futility_margin: p.get(&FUTILITY_MARGIN),
            see_quiet_margin: p.get(&SEE_QUIET_MARGIN),
            see_noisy_margin: p.get(&SEE_NOISY_MARGIN),
            qs_futility_margin: p.get(&QS_FUTILITY_MARGIN),
            iir_depth: p.get(&IIR_DEPTH),
            history_bonus_mult: p.get(&HISTORY_BONUS_MULT),
            history_bonus_base: p.get(&HISTORY_BONUS_BASE),
            history_bonus_max: p.get(&HISTORY_BONUS_MAX),
            corr_weight: p.get(&CORR_WEIGHT),
            hist_prune_depth: p.get(&HIST_PRUNE_DEPTH),
            hist_prune_margin: p.get(&HIST_PRUNE_MARGIN),
            probcut_depth: p.get(&PROBCUT_DEPTH),
            probcut_margin: p.get(&PROBCUT_MARGIN),
            time: TimeShares::new(p),
            lmr,
        }
    }

    /// The base late-move reduction at `depth` for the `moves`-th move.
    #[inline(always)]
    pub fn lmr(&self, depth: i32, moves: usize) -> i32 {
        self.lmr[(depth.max(0) as usize).min(LMR_SIZE - 1)][moves.min(LMR_SIZE - 1)]
    }

    /// The history bonus for a cutoff at `depth`.
    #[inline(always)]
    pub fn history_bonus(&self, depth: i32) -> i32 {
        (self.history_bonus_mult * depth + self.history_bonus_base).clamp(0, self.history_bonus_max)
    }
}
