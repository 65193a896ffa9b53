//! The engine words that name a registered engine in a run (`engine=NAME rev=REV
//! bench=N`): checked without git when the run is submitted ([`plan`]), built and replaced
//! by the build's `cmd=` by the scheduler's builder once the run is queued ([`build`]).

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::builds::{self, is_url, BuildLog};
use super::db::engines::{Engine, RunEngine};
use super::engines::{get, Refused};
use super::state::AppState;

/// The words that name a registered engine in an `--engine`'s words.
pub const KEYS: &[&str] = &["engine", "rev", "bench"];

/// The spans of the engine groups of some words: for each `--engine`, the range of its
/// values (up to the next word that starts with `--`). `--each` groups come back apart.
pub fn groups(words: &[String]) -> (Vec<std::ops::Range<usize>>, Vec<std::ops::Range<usize>>) {
    let (mut engines, mut each) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let flag = w.split('=').next().unwrap_or(w);
        if flag == "--engine" || flag == "--each" {
            // `--engine=name=dev`: the first value is in the flag's word.
            let start = if w.contains('=') { i } else { i + 1 };
            let mut end = i + 1;
            while end < words.len() && !words[end].starts_with("--") {
                end += 1;
            }
            if flag == "--engine" {
                engines.push(start..end);
            } else {
                each.push(start..end);
            }
            i = end;
        } else {
            i += 1;
        }
    }
    (engines, each)
}

/// The value of the last word `key=` of a group (an engine's words).
pub fn last_value(group: &[String], key: &str) -> Option<String> {
    group
        .iter()
        .filter_map(|w| key_value(w))
        .filter(|(k, _)| *k == key)
        .map(|(_, v)| v.to_string())
        .next_back()
}

/// The key and value of an engine word (`key=value`, `--engine=key=value`).
pub fn key_value(word: &str) -> Option<(&str, &str)> {
    let word = word
        .strip_prefix("--engine=")
        .or_else(|| word.strip_prefix("--each="))
        .unwrap_or(word);
    word.split_once('=')
}

/// One `--engine` that names a registered engine, as the words give it (checked without
/// git or a build).
struct Named {
    /// Which `--engine`, from 0.
    position: usize,
    /// Its `name=` (or `engine N`).
    variant: String,
    engine: Engine,
    rev: String,
    /// The bench it must print (`bench=`), when given.
    bench: Option<u64>,
    /// The span of its words, and whether the first is `--engine=…`.
    span: Range<usize>,
    inline: bool,
}

/// The `--engine`s of `words` that name a registered engine, checked without git or a
/// build: refused, an unknown or removed engine, a missing or bad revision name, a bench
/// that is no number, `engine=` words beside `cmd=`/`git=` or in `--each`.
fn named(st: &AppState, words: &[String]) -> Result<Vec<Named>, Refused> {
    let (engines, each) = groups(words);
    for g in &each {
        for w in &words[g.clone()] {
            if let Some((k, _)) = key_value(w) {
                if KEYS.contains(&k) {
                    return Err(Refused::Bad(format!(
                        "--each {w}: a registered engine is named in each --engine \
                         (engine=NAME rev=REV bench=N)"
                    )));
                }
            }
        }
    }
    let mut named = Vec::new();
    for (position, g) in engines.iter().enumerate() {
        let group = &words[g.clone()];
        let get = |key: &str| last_value(group, key);
        let (engine, rev, bench) = (get("engine"), get("rev"), get("bench"));
        let Some(engine) = engine else {
            if rev.is_some() || bench.is_some() {
                return Err(Refused::Bad(format!(
                    "--engine {}: rev= and bench= belong to a registered engine: add \
                     engine=NAME",
                    group.join(" ")
                )));
            }
            continue;
        };
        for other in ["cmd", "git", "features", "args", "dir"] {
            if get(other).is_some() {
                return Err(Refused::Bad(format!(
                    "--engine {}: engine={engine} is built by the server: leave {other}= out",
                    group.join(" ")
                )));
            }
        }
        let e = get_engine_for_run(st, &engine)?;
        let rev = rev.ok_or_else(|| {
            Refused::Bad(format!(
                "--engine {}: engine={engine} needs rev= (a branch, tag or sha)",
                group.join(" ")
            ))
        })?;
        builds::check_rev(&rev).map_err(|m| Refused::Bad(format!("engine {engine}: {m}")))?;
        let bench = match &bench {
            Some(b) => Some(b.parse::<u64>().map_err(|_| {
                Refused::Bad(format!("bench={b}: the bench's node count, a whole number"))
            })?),
            None => None,
        };
        let variant = get("name").unwrap_or_else(|| format!("engine {}", position + 1));
        named.push(Named {
            position,
            variant,
            engine: e,
            rev,
            bench,
            span: g.clone(),
            inline: words[g.start].starts_with("--engine="),
        });
    }
    Ok(named)
}

/// `words` with each named engine's `engine=`, `rev=`, `bench=` replaced by `cmd=BINARY`
/// (and `args=uci` for a spar build), `binaries` in the order of `named`.
fn spliced(words: &[String], named: &[Named], binaries: &[String]) -> Vec<String> {
    let mut out = words.to_vec();
    // From the last group, so that the earlier spans stay valid.
    for (n, binary) in named.iter().zip(binaries).rev() {
        let group = &words[n.span.clone()];
        let mut replaced: Vec<String> = Vec::new();
        if n.inline {
            replaced.push("--engine".into());
        }
        replaced.extend(
            group
                .iter()
                .map(|w| w.strip_prefix("--engine=").unwrap_or(w))
                .filter(|w| !key_value(w).is_some_and(|(k, _)| KEYS.contains(&k)))
                .map(String::from),
        );
        replaced.push(format!("cmd={binary}"));
        if n.engine.build == "spar" {
            replaced.push("args=uci".into());
        }
        out.splice(n.span.clone(), replaced);
    }
    out
}

/// The registered engines of a run's words, checked without git, a build or an engine
/// process (what a run that waits for approval may have done to it): the words the CLI's
/// check reads, each registered engine standing in as `cmd=STAND_IN` (a binary that
/// exists; the check does not start it), and the rows the run keeps until its engines are
/// built (the revision as given, no commit yet: `sha` and `binary` empty, `bench` the one
/// given or 0). Refused as [`named`] refuses, and for a `--repo` that names no registered
/// engine (`super::repo_words`, expanded in the checked words as the builder will).
pub fn plan(
    st: &AppState,
    words: &[String],
    stand_in: &Path,
) -> Result<(Vec<String>, Vec<RunEngine>), Refused> {
    let named = named(st, words)?;
    let stand_in = stand_in.to_string_lossy().into_owned();
    let binaries = vec![stand_in; named.len()];
    // A registered repository (`--repo NAME`) as the builder will give it, without a fetch.
    let checked = super::repo_words::expand(st, &spliced(words, &named, &binaries), false)?;
    let rows = named
        .iter()
        .map(|n| RunEngine {
            position: n.position as i64,
            variant: n.variant.clone(),
            engine: n.engine.name.clone(),
            rev: n.rev.clone(),
            sha: String::new(),
            bench: n.bench.unwrap_or(0),
            binary: String::new(),
            words: words[n.span.clone()].to_vec(),
        })
        .collect();
    Ok((checked, rows))
}

/// The words with every registered engine replaced by its build (`cmd=BINARY`, and
/// `args=uci` for a spar build), each revision resolved (a URL's mirror fetched first) and
/// built (or found in the cache) and its bench checked against `bench=`; the rows the run
/// keeps. The scheduler's builder calls it once a run is queued (approved), never an HTTP
/// request. Refused as [`plan`] refuses, and: an unknown revision, a failed build (its last
/// lines), a bench that differs (both numbers). Each step of a build goes to `log`. A
/// registered repository (`--repo NAME`) is expanded too (`super::repo_words`).
pub fn build(
    st: &AppState,
    words: &[String],
    log: BuildLog,
) -> Result<(Vec<String>, Vec<RunEngine>), Refused> {
    let named = named(st, words)?;
    let mut rows = Vec::new();
    let mut binaries = Vec::new();
    // Resolved and built in the order of the words: a refusal names the first engine that
    // fails.
    for n in &named {
        let (engine, rev) = (n.engine.name.as_str(), n.rev.as_str());
        let source = PathBuf::from(&n.engine.source);
        let sha =
            builds::resolve(engine, &source, rev, is_url(&n.engine.repo)).map_err(Refused::Bad)?;
        let built = builds::ensure(&st.data_dir, engine, &n.engine.build, &source, &sha, log)
            .map_err(Refused::Bad)?;
        if let Some(x) = n.bench {
            if x != built.bench {
                return Err(Refused::Bad(format!(
                    "engine {engine} at {rev} ({}): its bench is {}, not bench={x} as given \
                     (wrong revision or bench?)",
                    &sha[..12],
                    built.bench
                )));
            }
        }
        let binary = built.binary.to_string_lossy().into_owned();
        rows.push(RunEngine {
            position: n.position as i64,
            variant: n.variant.clone(),
            engine: engine.to_string(),
            rev: rev.to_string(),
            sha,
            bench: built.bench,
            binary: binary.clone(),
            words: words[n.span.clone()].to_vec(),
        });
        binaries.push(binary);
    }
    let words = super::repo_words::expand(st, &spliced(words, &named, &binaries), true)?;
    Ok((words, rows))
}

fn get_engine_for_run(st: &AppState, name: &str) -> Result<Engine, Refused> {
    match get(st, name) {
        Ok(e) if e.removed.is_some() => Err(Refused::Bad(format!(
            "engine={name}: engine '{name}' was removed (register it again on /engines)"
        ))),
        Ok(e) => Ok(e),
        Err(Refused::NotFound(_)) => Err(Refused::Bad(format!(
            "engine={name}: no engine '{name}' is registered (register it on /engines)"
        ))),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn engine_groups_end_at_the_next_flag() {
        let words =
            w("--engine name=dev engine=x rev=a --engine=name=base --each nodes=5 --games 2");
        let (engines, each) = groups(&words);
        assert_eq!(engines, vec![1..4, 4..5]);
        assert_eq!(each, vec![6..7]);
        assert_eq!(key_value("--engine=name=base"), Some(("name", "base")));
    }
}
