//! The efficiently updatable neural network (NNUE) evaluation.
//!
//! - [`network`]: the quantised layout, file format and feature indices shared with the
//!   trainer (`spar train`).
pub mod network;

pub use network::{feature_index, Network, INPUTS, QA, QB, SCALE};
