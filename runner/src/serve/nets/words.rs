//! A run's nets in its engine words: `net=NAME` in an `--engine`'s words becomes
//! `option.EvalFile=DATA/nets/SHA`, and an `--engine` of an engine with a default net that
//! names no net (no `net=`, no `option.EvalFile=`, no `option.Eval=` other than `nnue`)
//! gets `option.EvalFile=` of that default. Called by the one submit path (API, form,
//! `spar submit`) before the registered engines are expanded, so `engine=NAME` still says
//! which engine a side is.

use super::{file_of, EMBEDDED};
use crate::serve::db::nets::RunNet;
use crate::serve::engine_words::{groups, key_value, last_value as value};
use crate::serve::state::AppState;

/// Why the words were refused (400).
pub type Refusal = String;

/// Whether a group's words choose the evaluation or the net themselves.
fn chooses_eval(group: &[String]) -> bool {
    value(group, "option.EvalFile").is_some()
        || value(group, "option.Eval").is_some_and(|v| !v.eq_ignore_ascii_case("nnue"))
}

/// The words with each `net=NAME` replaced and each default net added, and the nets the
/// run uses (one row per `--engine` that has one). Refused: an unknown net, `net=` beside
/// `option.EvalFile=`, `net=` in `--each`.
pub fn expand(st: &AppState, words: &[String]) -> Result<(Vec<String>, Vec<RunNet>), Refusal> {
    let (engines, each) = groups(words);
    let mut each_chooses = false;
    for g in &each {
        let group = &words[g.clone()];
        if let Some(n) = value(group, "net") {
            return Err(format!(
                "--each net={n}: name the net in each --engine (net=NAME), not in --each"
            ));
        }
        each_chooses |= chooses_eval(group);
    }
    let mut out = words.to_vec();
    let mut rows = Vec::new();
    let mut splices = Vec::new();
    for (position, g) in engines.iter().enumerate() {
        let group = &words[g.clone()];
        let variant = value(group, "name").unwrap_or_else(|| format!("engine {}", position + 1));
        let (net, how) = match value(group, "net") {
            Some(name) => {
                if value(group, "option.EvalFile").is_some() {
                    return Err(format!(
                        "--engine {}: net={name} and option.EvalFile= both name a net: keep one",
                        group.join(" ")
                    ));
                }
                let net = st.store.blocking(|db| db.net(&name))?.ok_or_else(|| {
                    format!("net={name}: no net '{name}' is uploaded (upload it on /nets)")
                })?;
                (net, "named")
            }
            None => {
                let external = value(group, "cmd").is_some() || value(group, "git").is_some();
                let engine =
                    value(group, "engine").or_else(|| (!external).then(|| EMBEDDED.to_string()));
                let default = match engine {
                    Some(e) if !chooses_eval(group) && !each_chooses => {
                        st.store.blocking(|db| db.default_net(&e))?
                    }
                    _ => None,
                };
                match default {
                    Some(n) => (n, "default"),
                    None => continue,
                }
            }
        };
        let eval_file = format!("option.EvalFile={}", file_of(st, &net.sha).display());
        let mut replaced: Vec<String> = Vec::with_capacity(group.len() + 1);
        for w in group {
            match key_value(w) {
                Some(("net", _)) if w.starts_with("--engine=") => {
                    replaced.push(format!("--engine={eval_file}"))
                }
                Some(("net", _)) => replaced.push(eval_file.clone()),
                _ => replaced.push(w.clone()),
            }
        }
        if how == "default" {
            replaced.push(eval_file);
        }
        splices.push((g.clone(), replaced));
        rows.push(RunNet {
            position: position as i64,
            variant,
            net: net.name,
            sha: net.sha,
            how: how.into(),
        });
    }
    for (g, replaced) in splices.into_iter().rev() {
        out.splice(g, replaced);
    }
    Ok((out, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_side_that_chooses_its_evaluation_gets_no_default() {
        assert!(chooses_eval(&w("name=a option.EvalFile=x.nnue")));
        assert!(chooses_eval(&w("name=a option.Eval=hce")));
        assert!(!chooses_eval(&w("name=a option.Eval=NNUE")));
        assert!(!chooses_eval(&w("name=a option.Hash=16")));
        assert_eq!(value(&w("name=a net=x net=y"), "net").as_deref(), Some("y"));
    }
}
