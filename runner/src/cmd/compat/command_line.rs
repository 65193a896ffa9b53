//! A tool's single-dash command line read: its words grouped by option, each option's
//! values checked (one value, a flag, `key=value`, numbers, `-sprt` bounds,
//! `-concurrency`, engine words), the errors naming the tool and the option.

use super::Tool;
use crate::cli::{all_cores, SprtBounds};
use crate::error::{CliError, CliResult};

/// Reads one tool's options: the errors name the tool and the option.
pub(super) struct Reader {
    /// The tool whose options these are.
    pub(super) tool: Tool,
}

impl Reader {
    /// A usage error (exit code 2) naming the tool.
    pub(super) fn usage<T>(&self, text: String) -> CliResult<T> {
        Err(CliError::usage(format!("{}: {text}", self.tool.name())))
    }

    /// The refusal of an option spar does not support, with the reason why.
    pub(super) fn refuse<T>(&self, option: &str, why: &str) -> CliResult<T> {
        Err(CliError::usage(format!(
            "{} option -{option} is not supported by spar: {why} (see docs/compat.md)",
            self.tool.name()
        )))
    }

    /// Splits `key=value`, refusing a word without `=`.
    pub(super) fn key_value<'a>(
        &self,
        option: &str,
        word: &'a str,
    ) -> CliResult<(&'a str, &'a str)> {
        match word.split_once('=') {
            Some(kv) => Ok(kv),
            None => self.usage(format!(
                "-{option}: '{word}' is not key=value (see docs/compat.md)"
            )),
        }
    }

    /// Exactly one value of `-option`.
    pub(super) fn single<'a>(&self, option: &str, values: &'a [String]) -> CliResult<&'a str> {
        match values {
            [v] => Ok(v),
            _ => self.usage(format!("-{option} takes one value, got {}", values.len())),
        }
    }

    /// No value for a flag.
    pub(super) fn flag(&self, option: &str, values: &[String]) -> CliResult {
        if values.is_empty() {
            Ok(())
        } else {
            self.usage(format!(
                "-{option} takes no value, got '{}'",
                values.join(" ")
            ))
        }
    }

    /// `-sprt KEY=VALUE…`, read and checked as `spar sprt` checks its options
    /// ([`SprtBounds`]): elo0 < elo1, 0 < alpha < 1, 0 < beta < 1, alpha + beta < 1, a
    /// known model (fastchess's `model=`; cutechess has none).
    pub(super) fn sprt(&self, values: &[String]) -> CliResult<SprtBounds> {
        let keys: &[&str] = match self.tool {
            Tool::Fastchess => &["elo0=", "elo1=", "alpha=", "beta=", "model="],
            Tool::Cutechess => &["elo0=", "elo1=", "alpha=", "beta="],
        };
        let bounds =
            SprtBounds::from_words(values, keys).or_else(|e| self.usage(format!("-sprt: {e}")))?;
        match bounds.check() {
            Ok(_) => Ok(bounds),
            Err(e) => self.usage(format!("-sprt {}: {e}", values.join(" "))),
        }
    }

    /// `-concurrency N`: at least 1 in both tools; fastchess (from 1.8.1) also takes 0, all
    /// hardware threads, and -N, all of them but N (at least 1). spar counts the threads it
    /// may use ([`all_cores`]: its CPU affinity and quota), as its own default does.
    pub(super) fn concurrency(&self, text: &str) -> CliResult<usize> {
        let n: i64 = self.number("concurrency", text)?;
        match (self.tool, n) {
            (_, 1..) => Ok(n as usize),
            (Tool::Fastchess, _) => {
                let all = all_cores() as u64;
                Ok(all.saturating_sub(n.unsigned_abs()).max(1) as usize)
            }
            (Tool::Cutechess, _) => self.usage(format!(
                "-concurrency {n}: give the number of games played at once, at least 1"
            )),
        }
    }

    /// `-option`'s value read as a number.
    pub(super) fn number<T: std::str::FromStr>(&self, option: &str, text: &str) -> CliResult<T> {
        match text.parse() {
            Ok(n) => Ok(n),
            Err(_) => self.usage(format!("-{option}: '{text}' is not a valid number")),
        }
    }

    /// Engine words of `-engine`/`-each` in spar's words: `plies=` is `depth=`, `tc=inf` is no
    /// clock, cutechess's `arg=` words gather into one `args=`, `restart=off`/`auto` are what spar does
    /// anyway; the keys neither tool shares with spar are refused; the rest pass through
    /// to spar's own checks.
    pub(super) fn engine_words(&self, option: &str, values: &[String]) -> CliResult<Vec<String>> {
        let mut words = Vec::new();
        let mut args: Vec<String> = Vec::new();
        for w in values {
            if self.tool == Tool::Cutechess && w == "trust" {
                // spar checks every claim itself: the engine's claims never decide.
                continue;
            }
            if self.tool == Tool::Cutechess && ["whitepov", "ponder", "debug"].contains(&w.as_str())
            {
                return self.refuse(option, &format!("{w}: spar has no such engine mode"));
            }
            let (k, v) = self.key_value(option, w)?;
            match (self.tool, k) {
                (_, "plies") => words.push(format!("depth={v}")),
                (_, "restart") if v == "off" || (v == "auto" && self.tool == Tool::Cutechess) => {}
                (_, "restart") => {
                    return self.refuse(
                        option,
                        &format!(
                        "restart={v}: spar keeps one engine process per worker and sends ucinewgame"
                    ),
                    )
                }
                (Tool::Cutechess, "arg") => args.push(v.to_string()),
                // No clock (both tools; OpenBench's `tc=inf nodes=N`): the other limits
                // (nodes=, depth=) rule, as in spar.
                (_, "tc") if v == "inf" => {}
                (Tool::Cutechess, "tscale") => {}
                (Tool::Cutechess, "conf" | "stderr" | "initstr" | "book" | "bookdepth") => {
                    return self.refuse(
                        option,
                        &format!(
                            "{k}=: spar has no engine configuration file, stderr capture, init string or engine book"
                        ),
                    )
                }
                _ => words.push(w.clone()),
            }
        }
        if !args.is_empty() {
            if args.iter().any(|a| a.contains(char::is_whitespace)) {
                return self.refuse(option, "arg= with a space: spar splits args= at spaces");
            }
            words.push(format!("args={}", args.join(" ")));
        }
        Ok(words)
    }
}

/// The words of a command line grouped by option: an option (one or two leading dashes,
/// not a number) and the values after it.
pub(super) fn groups(reader: &Reader, args: &[String]) -> CliResult<Vec<(String, Vec<String>)>> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for a in args {
        let is_option = a.starts_with('-')
            && a.len() > 1
            && !a[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.');
        if is_option {
            groups.push((a.trim_start_matches('-').to_string(), Vec::new()));
        } else if let Some((_, values)) = groups.last_mut() {
            values.push(a.clone());
        } else {
            return reader.usage(format!(
                "'{a}' comes before any option (options start with '-')"
            ));
        }
    }
    Ok(groups)
}
