//! Texel tuning of the evaluation weights.
//!
//! - [`load`]: positions from `spar datagen` files.
//! - [`dataset`]: the positions' feature counts, packed, and the linear model over them.
//! - [`optim`]: the K fit, the error, its gradient and the Adam loop.

pub mod dataset;
pub mod load;
pub mod optim;

#[cfg(test)]
mod tests;
