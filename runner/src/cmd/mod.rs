//! One module per `spar` subcommand: its clap arguments and its `run` function.

pub mod bench;
pub mod compat;
pub mod datagen;
pub mod matches;
pub mod merge;
pub mod params;
pub mod perft;
pub mod report;
pub mod shard;
pub mod sim;
pub mod stats;
pub mod status;
pub mod texel;
pub mod train;
pub mod tune;
pub mod tune_cluster;
pub mod uci;

/// Engine or book words as a resume record compares them: every file a word names
/// (`params=FILE`, `option.EvalFile=FILE`; with `book`, the book file) stands as
/// `sha256:HEX` of its bytes, so a byte-identical copy at another path is the same run and
/// a changed file at the same path is not. `None` when no word names a file (the words are
/// then compared as given, as records of older spars hold them).
pub(crate) fn words_by_content(words: &[String], book: bool) -> Option<Vec<String>> {
    use crate::cluster::manifest::sha256_file;
    let by_content = |file: &str| {
        sha256_file(std::path::Path::new(file))
            .map_or_else(|_| file.to_string(), |h| format!("sha256:{h}"))
    };
    let mut any = false;
    let out = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let file = match w.split_once('=') {
                None if book && i == 0 => Some(("file", w.as_str())),
                Some(("file", f)) if book => Some(("file", f)),
                Some((k @ ("params" | "option.EvalFile"), f))
                    if !book && !engine::nnue::rule::is_embedded(f) =>
                {
                    Some((k, f))
                }
                _ => None,
            };
            match file {
                Some((k, f)) => {
                    any = true;
                    format!("{k}={}", by_content(f))
                }
                None => w.clone(),
            }
        })
        .collect();
    any.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::words_by_content;

    #[test]
    fn files_in_words_stand_by_their_content() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
        std::fs::write(&a, "rfp_margin, 80\n").unwrap();
        std::fs::write(&b, "rfp_margin, 80\n").unwrap();
        let words =
            |f: &std::path::Path| vec!["name=x".to_string(), format!("params={}", f.display())];
        let wa = words_by_content(&words(&a), false).unwrap();
        assert_eq!(wa, words_by_content(&words(&b), false).unwrap());
        assert!(wa[1].starts_with("params=sha256:"), "{wa:?}");
        std::fs::write(&b, "rfp_margin, 81\n").unwrap();
        assert_ne!(wa, words_by_content(&words(&b), false).unwrap());
        let plain = vec![
            "name=x".to_string(),
            "option.EvalFile=<embedded>".to_string(),
        ];
        assert!(words_by_content(&plain, false).is_none());
        let book = vec![a.display().to_string(), "start=2".to_string()];
        let bb = words_by_content(&book, true).unwrap();
        assert!(
            bb[0].starts_with("file=sha256:") && bb[1] == "start=2",
            "{bb:?}"
        );
    }
}
