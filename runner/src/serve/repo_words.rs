//! A run that names a registered engine's repository (`--repo NAME`, as a watched branch's
//! bisect does), generically on the flag, never on the kind: at submit, NAME must be a
//! registered engine (a path or a URL is refused: the repositories a run reads are the
//! registered ones), and such a run is stored unbuilt; the builder then replaces `--repo
//! NAME` by `--repo SOURCE --name NAME --build BUILD --builds DATA/builds/NAME`, SOURCE the
//! git directory the server builds from (the registered path, or its mirror of a URL,
//! fetched first) and BUILD the engine's `make` or `spar`: the run builds the commits it
//! plays with the server's build cache. `--name`, `--build` and `--builds` are the
//! server's (`serve/words.rs`, `OWNED`).

use super::builds::{self, is_url};
use super::engines::Refused;
use super::state::AppState;

/// The flag that names a registered engine's repository.
pub const REPO: &str = "--repo";

/// Where `--repo`'s value is in `words`: the index of the word that holds it, and whether it
/// is in the flag's own word (`--repo=NAME`).
fn repo_values(words: &[String]) -> Vec<(usize, bool)> {
    let mut found = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if w == REPO {
            found.push((i + 1, false));
        } else if w.starts_with("--repo=") {
            found.push((i, true));
        }
    }
    found
}

/// Whether `words` name a repository (`--repo …`): such a run is built by the builder.
pub fn names_repo(words: &[String]) -> bool {
    !repo_values(words).is_empty()
}

/// `words` with each `--repo NAME` expanded for the registered engine NAME (refused: a
/// value that is no registered engine's name, a removed engine, a `--repo` without a
/// value); `fetch`: a URL's mirror is fetched first (the builder; never a request).
pub fn expand(st: &AppState, words: &[String], fetch: bool) -> Result<Vec<String>, Refused> {
    expanded(words, &st.data_dir, |name| {
        let e = match super::engines::get(st, name) {
            Ok(e) if e.removed.is_none() => e,
            Ok(_) | Err(Refused::NotFound(_)) => return Err(not_registered(name)),
            Err(e) => return Err(e),
        };
        if fetch && is_url(&e.repo) {
            let source = std::path::Path::new(&e.source);
            builds::git(source, &["fetch", "--quiet", "--prune", "origin"]).map_err(|m| {
                Refused::Bad(format!(
                    "engine {name}: git fetch of its mirror failed: {m}"
                ))
            })?;
        }
        Ok((e.source, e.build))
    })
}

fn not_registered(name: &str) -> Refused {
    Refused::Bad(format!(
        "{REPO} {name}: a registered engine's name (a run reads only the registered \
         repositories; register it on /engines)"
    ))
}

/// `words` with each `--repo NAME` replaced by `--repo SOURCE --name NAME --build BUILD
/// --builds DATA/builds/NAME`, `engine` giving NAME's source and build (or its refusal).
fn expanded(
    words: &[String],
    data: &std::path::Path,
    mut engine: impl FnMut(&str) -> Result<(String, String), Refused>,
) -> Result<Vec<String>, Refused> {
    let mut out = words.to_vec();
    // From the last, so that the earlier indices stay valid.
    for (at, inline) in repo_values(words).into_iter().rev() {
        let Some(word) = words.get(at) else {
            return Err(Refused::Bad(format!(
                "{REPO}: give a registered engine's name"
            )));
        };
        let name = if inline {
            word.trim_start_matches("--repo=")
        } else {
            word.as_str()
        };
        builds::check_name(name).map_err(|_| not_registered(name))?;
        let (source, build) = engine(name)?;
        let cache = data.join("builds").join(name);
        let replaced = [
            REPO.to_string(),
            source,
            "--name".into(),
            name.to_string(),
            "--build".into(),
            build,
            "--builds".into(),
            cache.to_string_lossy().into_owned(),
        ];
        let span = if inline { at..at + 1 } else { at - 1..at + 1 };
        out.splice(span, replaced);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn repositories_are_found_in_both_spellings() {
        assert!(names_repo(&w("--repo tiny --good a --bad b")));
        assert!(names_repo(&w("--good a --repo=tiny")));
        assert!(!names_repo(&w("--engine name=a --each nodes=5")));
        assert_eq!(
            repo_values(&w("--repo tiny --repo=x")),
            vec![(1, false), (2, true)]
        );
    }

    #[test]
    fn a_registered_repository_becomes_its_source_build_and_cache() {
        let data = std::path::Path::new("/data");
        let engine = |name: &str| match name {
            "tiny" => Ok(("/srv/tiny".to_string(), "make".to_string())),
            _ => Err(not_registered(name)),
        };
        let got = expanded(&w("--repo tiny --good a --bad b"), data, engine).unwrap();
        assert_eq!(
            got.join(" "),
            "--repo /srv/tiny --name tiny --build make --builds /data/builds/tiny --good a --bad b"
        );
        let got = expanded(&w("--good a --repo=tiny"), data, engine).unwrap();
        assert_eq!(got[2..4].join(" "), "--repo /srv/tiny");
        assert_eq!(got.len(), 10);
        for bad in [
            "--repo /etc --good a",
            "--repo ../x",
            "--repo nobody",
            "--good a --repo",
        ] {
            let e = expanded(&w(bad), data, engine).unwrap_err();
            assert!(matches!(e, Refused::Bad(_)), "{bad}");
        }
        assert_eq!(
            expanded(&w("--each nodes=5"), data, engine).unwrap(),
            w("--each nodes=5")
        );
    }
}
