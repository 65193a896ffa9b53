//! What defines a datagen run for `--resume`: the fields of the run record beside its
//! `--out` file.

use super::args::DatagenArgs;
use super::plan::{net_file, Plan};
use crate::files::run_record::Field;
use crate::jobs::record_fields::{table_files, tables_field, words_by_content};

/// What defines a datagen run for `--resume` (not the target, the concurrency or --quiet).
pub(super) fn record_fields(args: &DatagenArgs, plan: &Plan) -> Vec<Field> {
    use serde_json::Value::Null;
    let f = &plan.filter;
    vec![
        Field::new("nodes", "--nodes", args.nodes.into()),
        Field::new("seed", "--seed", plan.game.seed.into()),
        Field::new("random-plies", "--random-plies", args.random_plies.into()),
        Field::new(
            "opening-limit",
            "--opening-limit",
            args.opening_limit.into(),
        ),
        // The book by its bytes; a record of an older spar may hold its path.
        match &args.book {
            Some(b) => {
                let path = b.display().to_string();
                Field::input(
                    "book by content",
                    "--book",
                    words_by_content(std::slice::from_ref(&path), true)
                        .and_then(|w| w.into_iter().next())
                        .into(),
                    path.clone().into(),
                )
                .or_older("book", path.into())
            }
            None => Field::input("book", "--book", Null, Null).or_older("book by content", Null),
        },
        Field::new("dfrc", "--dfrc", args.dfrc.into()),
        Field::new(
            "tb",
            "--tb",
            plan.game
                .tablebase
                .as_ref()
                .map_or(serde_json::Value::Null, |t| {
                    serde_json::to_value(t).expect("json")
                }),
        ),
        tables_field(
            &table_files(
                plan.game.tablebase.as_ref(),
                std::slice::from_ref(&plan.game.variant),
            ),
            plan.game
                .tablebase
                .as_ref()
                .map_or("option.SyzygyPath", |t| t.dirs.as_str()),
        ),
        Field::new("format", "--format", plan.format.name().into()),
        Field::new("min-ply", "--min-ply", f.min_ply.into()),
        Field::new("max-score", "--max-score", f.max_score.into()),
        Field::new("keep-check", "--keep-check", (!f.skip_in_check).into()),
        Field::new(
            "keep-tactical",
            "--keep-tactical",
            (!f.skip_tactical).into(),
        ),
        Field::new("hash", "--hash", args.hash.into()),
        // Before --eval, datagen played with the handcrafted evaluation.
        Field::new("eval", "--eval", args.eval.clone().into()).absent_as("hce".into()),
        Field::input(
            "eval-file-sha256",
            "--eval-file",
            plan.net_sha256.clone().into(),
            net_file(args).map(|f| f.display().to_string()).into(),
        )
        .or_older("eval-file", net_identity_before(args).into()),
    ]
}

/// The network as records of older spars named it (key `eval-file`): its path and the
/// checksum in its last 8 bytes (`None`: the embedded net).
fn net_identity_before(args: &DatagenArgs) -> Option<String> {
    let path = args.eval_file.as_ref()?;
    // Bounded, and a regular file only (a network is a few MiB).
    let bytes = crate::files::input::read_bounded(path, "--eval-file", 1 << 32).ok()?;
    let sum = bytes.len().checked_sub(8).map(|at| &bytes[at..])?;
    let hex: String = sum.iter().rev().map(|b| format!("{b:02x}")).collect();
    Some(format!("{} (checksum {hex})", path.display()))
}
