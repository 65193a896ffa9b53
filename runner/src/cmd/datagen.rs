//! `spar datagen`: training positions from self-play of the builtin engine, and
//! `spar datagen --inspect` to look inside the files. The arguments and the run are the
//! datagen job's ([`crate::jobs::datagen`]).

use data::training::inspect::{self, FileKind};

use crate::error::{CliError, CliResult};
pub use crate::jobs::datagen::args::DatagenArgs;
use crate::stdout;

/// Runs `spar datagen`.
pub fn run(args: DatagenArgs) -> CliResult {
    if let Some(path) = &args.inspect {
        return run_inspect(path, args.format.as_deref(), args.samples);
    }
    crate::jobs::datagen::run(args)
}

fn run_inspect(path: &std::path::Path, format: Option<&str>, samples: usize) -> CliResult {
    let shown = path.display();
    // Read twice (the format guess, then the records): a regular file only.
    crate::files::input::regular(path, "--inspect")?;
    let kind = match format {
        None => {
            inspect::detect(path).map_err(|e| CliError::usage(format!("--inspect {shown}: {e}")))?
        }
        Some("viriformat" | "vf") => FileKind::Viriformat,
        Some("text" | "txt") => FileKind::Text,
        Some(other) => {
            return Err(CliError::usage(format!(
                "--format {other}: --inspect reads viriformat or text"
            )))
        }
    };
    let summary = inspect::inspect(path, kind, samples)
        .map_err(|e| CliError::usage(format!("--inspect {shown}: {e}")))?;
    let mut lines = vec![format!("File: {shown}")];
    lines.extend(summary.report());
    if summary.error.is_none() {
        lines.push("Valid: every record decodes".to_string());
    }
    stdout::print_lines(&lines)?;
    match &summary.error {
        None => Ok(()),
        Some(e) => Err(CliError::failure(format!(
            "{shown}: corrupt record at {e} (the counts above cover the records before it)"
        ))),
    }
}
