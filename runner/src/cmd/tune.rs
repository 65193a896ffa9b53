//! `spar tune`: SPSA tuning of the builtin engine's parameters by self-play, and
//! `spar tune --plot` to draw a run's trajectory. The arguments and the run are the tune
//! job's ([`crate::jobs::tune`]).

use std::path::Path;

use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::paths::PathCheck;
pub use crate::jobs::tune::args::TuneArgs;
use crate::stdout;
use crate::tune::{plot, trajectory};

/// Runs `spar tune`.
pub fn run(args: TuneArgs) -> CliResult {
    if let Some(csv) = &args.plot {
        return run_plot(csv, args.svg.as_deref());
    }
    crate::jobs::tune::run(args)
}

fn run_plot(csv: &Path, svg: Option<&Path>) -> CliResult {
    let out = svg.map_or_else(|| csv.with_extension("svg"), Path::to_path_buf);
    PathCheck::new()
        .input("--plot", csv)
        .output("--svg", &out)
        .check()?;
    let contents = trajectory::read(csv).map_err(|e| CliError::usage(format!("--plot: {e}")))?;
    if contents.rows.is_empty() {
        return Err(CliError::usage(format!(
            "--plot {}: no rows to draw",
            csv.display()
        )));
    }
    let title = format!(
        "SPSA trajectory: {} ({} iterations)",
        csv.file_name()
            .map_or(String::new(), |f| f.to_string_lossy().into_owned()),
        contents.rows.last().map_or(0, |r| r.iteration)
    );
    write_atomically(&out, &plot::svg(&contents, &title))
        .map_err(|e| CliError::failure(format!("cannot write {}: {e}", out.display())))?;
    stdout::print(&format!("Wrote {}\n", out.display()))
}
