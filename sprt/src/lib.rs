//! Match statistics for spar: counts of games and game pairs, Elo / LOS / normalized Elo
//! estimates, the generalized SPRT of fishtest, forecasts of the remaining games, output
//! lines in the formats of cutechess and fastchess, and an SPRT simulator.
//!
//! ```
//! use sprt::{Model, Pentanomial, Sample, Sprt};
//!
//! let pairs = Pentanomial::new([365, 16618, 36229, 16974, 390]);
//! let estimate = pairs.estimate();
//! assert!((estimate.elo - 0.9993).abs() < 1e-4);
//!
//! let sprt = Sprt::new(0.0, 2.0, 0.05, 0.05, Model::Normalized).unwrap();
//! let status = sprt.status(&Sample::from(pairs)).unwrap();
//! assert!((status.llr - 2.2504).abs() < 1e-4);
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod bisect;
pub mod counts;
pub mod elo;
pub mod forecast;
pub mod format;
pub mod llr;
mod mle;
pub mod simulate;
pub mod simulate_bisect;
pub mod sprt;

pub use counts::{CountError, Pentanomial, PlayerResult, Sample, Trinomial};
pub use elo::Estimate;
pub use forecast::Forecast;
pub use llr::Model;
pub use sprt::{Decision, Sprt, SprtError, SprtStatus};
