//! Writing results to standard output without panicking: a closed pipe (`spar … | head`)
//! ends spar quietly with exit code 141, as it does for other Unix tools; any other write
//! error (a full disk) is one error line and exit code 1.

use std::io::{self, Write};

use crate::error::{CliError, CliResult};

/// Writes `text` to stdout and flushes it.
pub fn print(text: &str) -> CliResult {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(write_error)
}

/// Writes each line with a newline.
pub fn print_lines<S: AsRef<str>>(lines: &[S]) -> CliResult {
    let mut text = String::new();
    for l in lines {
        text.push_str(l.as_ref());
        text.push('\n');
    }
    print(&text)
}

/// Progress lines of a long run (train, texel): a failed write (`| head` closed the pipe)
/// does not stop the run, whose files still get written; the first error is kept and
/// returned at the end by [`Lines::finish`].
#[derive(Default)]
pub struct Lines {
    error: Option<CliError>,
}

impl Lines {
    /// Prints `text` and a newline, unless an earlier write failed.
    pub fn say(&mut self, text: String) {
        if self.error.is_none() {
            if let Err(e) = print(&(text + "\n")) {
                self.error = Some(e);
            }
        }
    }

    /// The first write error, if any.
    pub fn finish(self) -> CliResult {
        self.error.map_or(Ok(()), Err)
    }

    /// The first write error, or else `otherwise`.
    pub fn error_or(self, otherwise: CliError) -> CliError {
        self.error.unwrap_or(otherwise)
    }
}

/// The error for a failed write to stdout.
pub fn write_error(e: io::Error) -> CliError {
    if e.kind() == io::ErrorKind::BrokenPipe {
        CliError::broken_pipe()
    } else {
        CliError::failure(format!("cannot write to standard output: {e}"))
    }
}
