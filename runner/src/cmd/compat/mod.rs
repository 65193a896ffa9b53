//! What the fastchess and cutechess-cli personalities share: their single-dash command line
//! read into option groups, the options both tools have translated into `spar match`/`spar
//! sprt` words, and their per-game lines and reports on stdout (docs/compat.md lists every
//! option of both tools: mapped, honoured without effect, or refused).
//!
//! [`translate`] turns a tool's arguments into spar's argv; the hidden `--game-lines TOOL…`
//! word it adds makes `spar match` print the tool's lines through a [`Report`].
//!
//! The rooms: `command_line.rs` (the tool's words grouped by option, each value checked),
//! `translation.rs` (the options in spar's words), `options.rs` (every option of each tool,
//! for the option meant by a misspelt one), `game_lines.rs` (the hidden `--game-lines`
//! word), `book.rs` (fastchess's random opening order), `report.rs` (the per-game lines
//! and reports), `numbers.rs` (the reports' numbers as each tool computes and prints them),
//! `pgn.rs` (the tool's PGN).

mod book;
mod command_line;
mod game_lines;
mod numbers;
mod options;
mod pgn;
mod report;
mod translation;

pub use game_lines::Lines;
pub use report::{fastchess_header, Report};

use crate::error::CliResult;
use translation::{translate, Translation};

/// The tool a personality speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// fastchess (`spar fastchess`, a `fastchess*` program name).
    Fastchess,
    /// cutechess-cli (`spar cutechess`, a `cutechess*` program name).
    Cutechess,
}

impl Tool {
    /// The tool's name as its messages and the hidden `--game-lines` word say it.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Fastchess => "fastchess",
            Tool::Cutechess => "cutechess",
        }
    }

    /// The tool whose name starts a program name (argv[0]'s file name), if any.
    pub fn of_program(argv0: &str) -> Option<Tool> {
        let name = std::path::Path::new(argv0).file_name()?.to_str()?;
        [Tool::Fastchess, Tool::Cutechess]
            .into_iter()
            .find(|t| name.starts_with(t.name()))
    }

    /// The version line: the tool's own `NAME X.Y.Z` form, so that a tool checking the
    /// version accepts it, followed by the spar build.
    pub fn version_line(self) -> String {
        let (tool, version) = match self {
            Tool::Fastchess => ("fastchess", "1.8.1"),
            Tool::Cutechess => ("cutechess-cli", "1.5.1"),
        };
        format!(
            "{tool} {version} (spar {} speaking {}; see docs/compat.md)",
            env!("CARGO_PKG_VERSION"),
            self.name()
        )
    }
}

/// Runs a tool's command line: prints the version line, or hands the translated argv to
/// `run` (spar's own parser and commands) — for fastchess with a random EPD book, a
/// temporary copy of the book in fastchess's order, kept until `run` returns.
pub fn run(tool: Tool, args: &[String], run: impl FnOnce(Vec<String>) -> CliResult) -> CliResult {
    match translate(tool, args)? {
        Translation::Version => {
            println!("{}", tool.version_line());
            Ok(())
        }
        Translation::Run(mut argv) => {
            let _book = match tool {
                Tool::Fastchess => book::fastchess_random_book(&mut argv)?,
                Tool::Cutechess => None,
            };
            run(argv)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_names() {
        assert_eq!(
            Tool::of_program("/usr/bin/fastchess-ob"),
            Some(Tool::Fastchess)
        );
        assert_eq!(Tool::of_program("cutechess-cli"), Some(Tool::Cutechess));
        assert_eq!(Tool::of_program("/usr/bin/spar"), None);
    }
}
