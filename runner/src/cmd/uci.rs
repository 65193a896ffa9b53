//! `spar uci`: the embedded engine as a UCI engine on stdin/stdout.

use std::io::{BufRead, Cursor, Read};

use crate::error::{CliError, CliResult};

/// Speak UCI on stdin/stdout (for GUIs, fastchess, cutechess, python-chess).
///
///   spar uci --setoption Eval=hce --setoption Hash=64
///
/// Each --setoption is sent to the engine as `setoption name NAME value VALUE` before the
/// first line read from stdin: a script "engine" (a repository's `make` output) can fix
/// its settings in its own command line.
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct UciArgs {
    /// A UCI option set before the first command, as NAME=VALUE (repeatable).
    #[arg(long = "setoption", value_name = "NAME=VALUE")]
    setoption: Vec<String>,
}

/// The `setoption` lines of `--setoption` words: a word without `=` or with an empty name
/// is refused with the fix.
fn setoption_lines(words: &[String]) -> CliResult<String> {
    let mut lines = String::new();
    for w in words {
        match w.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() => {
                lines.push_str(&format!(
                    "setoption name {} value {}\n",
                    name.trim(),
                    value.trim()
                ));
            }
            _ => {
                return Err(CliError::usage(format!(
                    "--setoption {w}: give NAME=VALUE (e.g. --setoption Eval=hce)"
                )))
            }
        }
    }
    Ok(lines)
}

/// Runs `spar uci`.
pub fn run(args: UciArgs) -> CliResult {
    let first = setoption_lines(&args.setoption)?;
    let input = Cursor::new(first.into_bytes()).chain(std::io::stdin().lock());
    let input: Box<dyn BufRead> = Box::new(std::io::BufReader::new(input));
    engine::uci::run(
        input,
        Box::new(std::io::stdout()),
        Some(crate::track_dump::quit_hook()),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setoption_words_become_uci_lines_and_a_bad_word_is_refused() {
        let w = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            setoption_lines(&w(&["Eval=hce", "Hash=64"])).unwrap(),
            "setoption name Eval value hce\nsetoption name Hash value 64\n"
        );
        let e = setoption_lines(&w(&["Eval"])).unwrap_err().to_string();
        assert!(e.contains("--setoption Eval: give NAME=VALUE"), "{e}");
        assert!(setoption_lines(&w(&["=x"])).is_err());
    }
}
