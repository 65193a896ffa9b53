//! `spar report`: play games with `track!` recording on, then show each site's statistics
//! (terminal, CSV, JSON, HTML), side by side for two variants; or re-render saved runs.
//! The job itself is `jobs/report/`.

pub use crate::jobs::report::args::ReportArgs;

use crate::error::CliResult;

/// Runs `spar report`.
pub fn run(args: ReportArgs) -> CliResult {
    crate::jobs::report::run(args)
}
