//! Parameter tuning: SPSA on any tunable parameter by self-play (`spar tune`) and Texel
//! tuning of the evaluation weights by regression on scored positions (`spar texel`).
//!
//! - [`spsa_params`]: the parameters to tune, from OpenBench / fishtest input lines or from
//!   the registry.
//! - [`gains`]: OpenBench's SPSA schedule of perturbation sizes `c_k` and learning rates `r_k`.
//! - [`spsa`]: the perturbation and update rule, independent of how results are obtained.
//! - [`selfplay`]: game pairs of perturbed engines on a persistent thread pool.
//! - [`trajectory`]: the CSV trajectory (`--csv`) that `--resume` continues from.
//! - [`plot`]: an SVG of each parameter's trajectory.
//! - [`report`]: final values as OpenBench lines, `setoption` lines and Rust source.
//! - [`average`]: the averaged θ over the last part of a run, with batch-means error bars.
//! - `spar status` of a tune (text and HTML page, a signal measure per parameter) is the tune
//!   job's: [`crate::jobs::tune::status`].
//! - [`probe`]: `spar tune --probe`, the preflight match of θ + c_end against θ − c_end.
//! - [`texel`]: positions, the linear evaluation model, the K fit and the Adam optimiser.

pub mod average;
pub mod crash;
pub mod driver;
pub mod gains;
pub mod plot;
pub mod probe;
pub mod report;
pub mod schedule;
pub mod selfplay;
pub mod spsa;
pub mod spsa_params;
pub mod texel;
pub mod trajectory;
