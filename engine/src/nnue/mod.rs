//! The efficiently updatable neural network (NNUE) evaluation.
//!
//! - [`network`]: the quantised layout, file format and feature indices shared with the
//!   trainer (`spar train`).
//! - [`net`]: a network ready for inference ([`Net`]) and the forward pass.
//! - [`simd`]: the accumulator-update and output kernels, scalar and AVX2 (chosen at run time).
//! - [`accumulator`]: the incrementally updated accumulators along the search path.
//! - [`embedded`]: the default net compiled into the binary.
//! - [`placeholder`]: a hand-built material net of any width, for tests and benchmarks.
//! - [`rule`]: the one rule for the `Eval` and `EvalFile` options, and its message.
pub mod accumulator;
pub mod embedded;
pub mod net;
pub mod network;
pub mod placeholder;
pub mod rule;
pub mod simd;

#[cfg(test)]
mod tests;

pub use accumulator::AccumulatorStack;
pub use embedded::default_net;
pub use net::Net;
pub use network::{feature_index, Layout, Network, INPUTS, QA, QB, SCALE};
