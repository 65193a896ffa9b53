//! The one rule for the `Eval` and `EvalFile` options, used by every surface that takes
//! them (engine words `option.Eval=`/`option.EvalFile=`, `spar bench --eval/--eval-file`,
//! `spar datagen --eval/--eval-file`, and `setoption` in `spar uci`), with one message:
//!
//! - an `EvalFile` value that is empty or [`EMBEDDED_NAME`] means the embedded network;
//! - a network file is used only by the NNUE evaluation, so a file together with
//!   `Eval=hce` is refused (it would silently change nothing).

use super::embedded::EMBEDDED_NAME;
use crate::search::Evaluation;

/// How one surface spells the two options in its messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvalNames {
    /// The network option as the user writes it (`option.EvalFile`, `--eval-file`).
    pub file: &'static str,
    /// How the user selects NNUE there (`option.Eval=nnue`, `--eval nnue`).
    pub nnue: &'static str,
    /// How the user selects the embedded net there.
    pub embedded: &'static str,
}

/// Engine words (`--engine`, `--each`).
pub const ENGINE_WORDS: EvalNames = EvalNames {
    file: "option.EvalFile",
    nnue: "option.Eval=nnue",
    embedded: "drop option.EvalFile",
};

/// `spar bench` and `spar datagen` flags.
pub const FLAGS: EvalNames = EvalNames {
    file: "--eval-file",
    nnue: "--eval nnue",
    embedded: "drop --eval-file",
};

/// The UCI options of `spar uci`.
pub const UCI: EvalNames = EvalNames {
    file: "EvalFile",
    nnue: "setoption name Eval value nnue",
    embedded: "setoption name EvalFile value <embedded>",
};

/// Whether an `EvalFile` value means the embedded network (empty, or [`EMBEDDED_NAME`]).
pub fn is_embedded(value: &str) -> bool {
    let v = value.trim();
    v.is_empty() || v == EMBEDDED_NAME
}

/// Checks that `evaluation` can use the network file `file` (`None`, empty or
/// [`EMBEDDED_NAME`]: the embedded net, always fine). The error is one line in `names`.
///
/// ```
/// use engine::nnue::rule::{check, FLAGS};
/// use engine::search::Evaluation;
/// assert!(check(Evaluation::Nnue, Some("x.nnue"), &FLAGS).is_ok());
/// assert!(check(Evaluation::Hce, Some(""), &FLAGS).is_ok());
/// let e = check(Evaluation::Hce, Some("x.nnue"), &FLAGS).unwrap_err();
/// assert!(e.starts_with("--eval-file x.nnue is a network"), "{e}");
/// ```
pub fn check(evaluation: Evaluation, file: Option<&str>, names: &EvalNames) -> Result<(), String> {
    match file {
        Some(f) if !is_embedded(f) && evaluation == Evaluation::Hce => Err(format!(
            "{} {} is a network, which only the NNUE evaluation uses, but the evaluation is hce: \
             {} to use it, or {}",
            names.file,
            f.trim(),
            names.nnue,
            names.embedded
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_values_and_the_one_message() {
        assert!(is_embedded("") && is_embedded(" <embedded> ") && !is_embedded("a.nnue"));
        for names in [ENGINE_WORDS, FLAGS, UCI] {
            assert!(check(Evaluation::Hce, None, &names).is_ok());
            assert!(check(Evaluation::Hce, Some(EMBEDDED_NAME), &names).is_ok());
            assert!(check(Evaluation::Nnue, Some("n.nnue"), &names).is_ok());
            let e = check(Evaluation::Hce, Some("n.nnue"), &names).unwrap_err();
            assert!(e.contains(names.file) && e.contains(names.nnue), "{e}");
        }
    }
}
