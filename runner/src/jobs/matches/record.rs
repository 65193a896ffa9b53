//! What defines a match for `--resume`: the fields of its run record, which a local run
//! writes beside its results CSV and a cluster run's merge beside the merged one.

use std::path::PathBuf;

use crate::files::position_dump::DumpSpec;
use crate::files::run_record::Field;
use crate::jobs::record_fields::{book_field, engine_field, tables_field};
use crate::plan::MatchPlan;

/// What defines a match for `--resume`: the engines, seed, book, adjudication and SPRT of
/// the plan, the Syzygy table files it probes (`tables`: path and size), and which files it
/// writes (not the concurrency, the number of games or the failure policy, which may change
/// between sessions).
pub fn record_fields(
    plan: &MatchPlan,
    pgnout: bool,
    dump: Option<&DumpSpec>,
    tables: &[(PathBuf, u64)],
) -> Vec<Field> {
    // Files by their bytes (engine executables, parameter files, networks, the book).
    let mut fields: Vec<Field> = plan
        .engines
        .iter()
        .enumerate()
        .map(|(i, e)| engine_field(&format!("engine {}", i + 1), "--engine", &e.words))
        .collect();
    fields.push(Field::new("seed", "--seed", plan.seed.into()));
    fields.push(book_field(plan.book.as_deref()));
    fields.push(Field::new(
        "adjudication",
        "--resign/--draw/--maxmoves/--tb",
        json(&plan.adjudication),
    ));
    let shown = plan
        .adjudication
        .tb
        .as_ref()
        .map_or("option.SyzygyPath", |t| t.dirs.as_str());
    fields.push(tables_field(tables, shown));
    fields.push(Field::new(
        "sprt",
        "--elo0/--elo1/--alpha/--beta/--model",
        json(&plan.sprt),
    ));
    fields.push(Field::new("pgnout", "--pgnout", pgnout.into()));
    let dump = dump.map(|d| {
        let f = &d.filter;
        format!(
            "format={} min-ply={} max-score={} keep-check={} keep-tactical={}",
            d.format.name(),
            f.min_ply,
            f.max_score,
            !f.skip_in_check,
            !f.skip_tactical
        )
    });
    fields.push(Field::new(
        "dump-positions",
        "--dump-positions",
        json(&dump),
    ));
    fields
}

/// A part of the plan as JSON.
pub(super) fn json<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).expect("plan parts are json")
}
