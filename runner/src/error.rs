//! The error every `spar` command returns: one line for the user and an exit code.

use std::fmt;

/// A user-facing failure: printed as `spar: error: <message>` on stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    /// What went wrong, naming the input and the fix.
    pub message: String,
    /// Process exit code: 2 for bad input, 1 for a failed check or a runtime failure.
    pub code: i32,
}

impl CliError {
    /// Bad input (arguments, files, values): exit code 2.
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: 2,
        }
    }

    /// A run stopped by Ctrl-C after writing what it had: exit code 130.
    pub fn interrupted() -> Self {
        CliError {
            message: "interrupted".to_string(),
            code: 130,
        }
    }

    /// Standard output was closed by the reader: exit code 141, no message.
    pub fn broken_pipe() -> Self {
        CliError {
            message: String::new(),
            code: 141,
        }
    }

    /// A check that ran and failed, or a runtime failure: exit code 1.
    pub fn failure(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: 1,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

/// The result of a command.
pub type CliResult<T = ()> = Result<T, CliError>;
