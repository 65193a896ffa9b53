//! Everything a tune needs, checked before any engine starts: its parameters, gains,
//! schedule and plan ([`Setup`]), its engine against the parameters, its files; and the
//! final values of a trajectory.

use std::time::Duration;

use engine::search::Evaluation;

use super::args::TuneArgs;
use super::verdict::verify_files;
use crate::cli::EngineArgs;
use crate::cluster::manifest::MAX_TOTAL;
use crate::engines::uci::UciPlayer;
use crate::engines::variant::{self, Source, Variant};
use crate::error::{CliError, CliResult};
use crate::files::paths::PathCheck;
use crate::files::run_record::{self, Field};
use crate::jobs::record_fields::{book_field, engine_field, table_files, tables_field};
use crate::plan::{MatchPlan, PlanRequest, Run};
use crate::tune::crash::crash_file;
use crate::tune::gains::Gains;
use crate::tune::report;
use crate::tune::schedule::{Schedule, Tuner};
use crate::tune::spsa::Spsa;
use crate::tune::spsa_params::{self, SpsaParam};
use crate::tune::trajectory::Row;

/// Everything a tune needs, checked, before any engine starts.
pub(crate) struct Setup {
    /// The tuned parameters.
    pub params: Vec<SpsaParam>,
    /// Their names.
    pub names: Vec<String>,
    /// The gain schedule.
    pub gains: Gains,
    /// Iterations, pairs per iteration, delay.
    pub schedule: Schedule,
    /// The plan (one engine: both sides run it).
    pub plan: MatchPlan,
    /// The engine, book and watchdog.
    pub run: Run,
    /// What `--resume` compares.
    pub fields: Vec<Field>,
}

impl Setup {
    /// A new run's state at its start values.
    pub fn tuner(&self) -> Tuner {
        Tuner::new(
            Spsa::new(self.params.clone(), self.gains, self.plan.seed),
            self.schedule,
        )
    }

    /// The run continued from its trajectory rows.
    pub fn resumed(&self, rows: &[Row]) -> Tuner {
        Tuner::resume(
            Spsa::new(self.params.clone(), self.gains, self.plan.seed),
            self.schedule,
            rows,
        )
    }

    /// Whether the tuned engine is an external UCI engine (parameters are its options).
    pub fn external(&self) -> bool {
        matches!(self.run.variants[0].source, Source::Uci { .. })
    }
}

/// Reads the parameters and checks the options and the plan; nothing is started.
pub(crate) fn setup(args: &TuneArgs) -> CliResult<Setup> {
    // An external engine's parameters are its UCI options, checked against its `uci` answer
    // once the engine is known; the builtin engine's (and a spar build's) are registered.
    let external = args
        .each
        .iter()
        .chain(&args.engine)
        .any(|w| w.starts_with("cmd="));
    let mut params: Vec<SpsaParam> = match &args.params {
        Some(path) => spsa_params::load(path, external).map_err(CliError::usage)?,
        None => Vec::new(),
    };
    for name in &args.param {
        if params.iter().any(|p| &p.name == name) {
            return Err(CliError::usage(format!(
                "--param {name}: already listed (in --params or an earlier --param)"
            )));
        }
        params.push(SpsaParam::from_registry(name).map_err(CliError::usage)?);
    }
    if params.is_empty() {
        return Err(CliError::usage(
            "nothing to tune: give --params FILE (OpenBench SPSA lines) or --param NAME (e.g. --param rfp_margin)",
        ));
    }
    let gains = Gains {
        iterations: args.iterations,
        alpha: args.alpha,
        gamma: args.gamma,
        a_ratio: args.a_ratio,
    };
    gains.check().map_err(CliError::usage)?;
    let pairs_per = args.pairs_per_iteration;
    if pairs_per == 0 {
        return Err(CliError::usage("--pairs-per-iteration must be at least 1"));
    }
    let total = args
        .iterations
        .checked_mul(pairs_per)
        .filter(|&t| t <= MAX_TOTAL);
    if total.is_none() {
        return Err(CliError::usage(format!(
            "--iterations {} × --pairs-per-iteration {pairs_per} is more pairs than a run can have ({MAX_TOTAL})",
            args.iterations
        )));
    }
    if args.delay >= args.iterations {
        return Err(CliError::usage(format!(
            "--delay {}: must be below --iterations {} (a few iterations: e.g. --delay 4)",
            args.delay, args.iterations
        )));
    }
    let schedule = Schedule {
        iterations: args.iterations,
        pairs_per_iteration: pairs_per,
        delay: args.delay,
    };
    let engines = EngineArgs {
        engines: if args.engine.is_empty() {
            Vec::new()
        } else {
            vec![args.engine.clone()]
        },
        each: args.each.clone(),
    };
    let (plan, run) = MatchPlan::build(&PlanRequest {
        engines: &engines,
        seats: 0..=1,
        example: "--each nodes=5000",
        run: &args.run,
        games: None,
        default_games: None,
        book: &args.book,
        adjudication: args.adjudication.rules()?,
        failure: None,
        recover_by_default: false,
        sprt: None,
    })?;
    let fields = {
        let params: Vec<String> = params
            .iter()
            .map(|p| {
                format!(
                    "{} {} {} {} {} {}",
                    p.name, p.start, p.min, p.max, p.c_end, p.r_end
                )
            })
            .collect();
        vec![
            Field::new("params", "--params/--param", params.into()),
            Field::new("iterations", "--iterations", args.iterations.into()),
            Field::new(
                "pairs-per-iteration",
                "--pairs-per-iteration",
                pairs_per.into(),
            ),
            Field::new("alpha", "--alpha", args.alpha.into()),
            Field::new("gamma", "--gamma", args.gamma.into()),
            Field::new("a-ratio", "--a-ratio", args.a_ratio.into()),
            // Before --delay, every tune was sequential.
            Field::new("delay", "--delay", args.delay.into()).absent_as(0.into()),
            Field::new("seed", "--seed", plan.seed.into()),
            // Files by their bytes (executables, parameter files, networks, the book).
            engine_field(
                "each",
                if args.engine.is_empty() {
                    "--each"
                } else {
                    "--engine"
                },
                &plan.engines[0].words,
            ),
            book_field(plan.book.as_deref()),
            Field::new(
                "adjudication",
                "--resign/--draw/--maxmoves/--tb",
                serde_json::to_value(&plan.adjudication).expect("json"),
            ),
            tables_field(
                &table_files(plan.adjudication.tb.as_ref(), &run.variants),
                plan.adjudication
                    .tb
                    .as_ref()
                    .map_or("option.SyzygyPath", |t| t.dirs.as_str()),
            ),
        ]
    };
    let names = params.iter().map(|p| p.name.clone()).collect();
    Ok(Setup {
        params,
        names,
        gains,
        schedule,
        plan,
        run,
        fields,
    })
}

/// Checks the engine against the parameters: an external engine's `uci` options, the
/// builtin engine's evaluation.
pub(crate) fn check_engine(s: &Setup) -> CliResult {
    let variant = &s.run.variants[0];
    let fixed = variant
        .options
        .iter()
        .find(|(o, _)| s.params.iter().any(|p| p.name.eq_ignore_ascii_case(o)));
    if let (Source::Uci { .. }, Some((name, value))) = (&variant.source, fixed) {
        return Err(CliError::usage(format!(
            "option.{name}={value} fixes a parameter that is tuned: drop the word or the parameter"
        )));
    }
    match &variant.source {
        Source::Uci { .. } => check_uci_options(variant, &s.params, s.run.stall_timeout),
        _ if variant.evaluation == Evaluation::Nnue => {
            match s
                .params
                .iter()
                .find(|p| engine::params::spec(&p.name).is_some_and(|s| s.eval))
            {
                Some(p) => Err(CliError::usage(variant::unused_weight(
                    &p.name,
                    "to --each",
                ))),
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

/// Starts the external engine once and checks that every tuned parameter is one of its
/// `spin` options and that the parameter's range lies within the option's.
fn check_uci_options(variant: &Variant, params: &[SpsaParam], stall: Duration) -> CliResult {
    let engine = UciPlayer::new(variant, stall).map_err(CliError::usage)?;
    let offered = engine.offered_options();
    let spins = || {
        let names: Vec<&str> = offered
            .iter()
            .filter(|o| o.kind == "spin")
            .map(|o| o.name.as_str())
            .collect();
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    for p in params {
        let name = &p.name;
        let Some(o) = offered.iter().find(|o| o.name.eq_ignore_ascii_case(name)) else {
            return Err(CliError::usage(format!(
                "parameter '{name}': engine '{}' has no UCI option '{name}'; tune one of its spin options: {}",
                variant.name,
                spins()
            )));
        };
        if o.kind != "spin" {
            return Err(CliError::usage(format!(
                "parameter '{name}': engine '{}' offers '{}' as a '{}' option, and SPSA tunes integer (spin) options only; drop it from --params/--param (its spin options: {})",
                variant.name,
                o.name,
                o.kind,
                spins()
            )));
        }
        let (Some(lo), Some(hi)) = (o.min, o.max) else {
            return Err(CliError::usage(format!(
                "parameter '{name}': engine '{}' announces spin option '{}' without min and max; spar cannot check the range",
                variant.name, o.name
            )));
        };
        if p.min < lo as f64 || p.max > hi as f64 {
            return Err(CliError::usage(format!(
                "parameter '{name}': range {}..{} is outside engine '{}''s spin option '{}' (min {lo}, max {hi}); narrow it in --params to lie within {lo}..{hi}",
                p.min, p.max, variant.name, o.name
            )));
        }
    }
    Ok(())
}

/// The files a tune reads and writes, checked before anything is read.
pub(crate) fn check_paths(args: &TuneArgs) -> CliResult {
    let mut check = PathCheck::new();
    if let Some(p) = &args.params {
        check.input("--params", p);
    }
    check.engine(&args.engine, &args.each);
    check.book_words(args.book.book.as_deref());
    check.tb_words(args.adjudication.tb.as_deref());
    if let Some(dir) = args.slurm.run_dir.as_ref().filter(|_| args.slurm.slurm) {
        check.run_dir(dir);
    }
    if let Some(c) = &args.csv {
        check.record("--csv", c).locked("--csv", c);
        check.record("--csv record", run_record::path_for(c));
        check.record("--csv crash record", crash_file(c));
        if !args.verify.no_verify {
            let v = verify_files(c);
            check.record("--csv verification", &v.results);
            check.output("--csv verification summary", &v.json);
        }
    }
    if let Some(o) = &args.out {
        check.output("--out", o);
    }
    check.check()
}

/// The final values of a run whose trajectory is `rows` (row 0 the start): the text printed
/// at the end (the averaged θ beside the last iterate, see [`report::tune_values`]) and the
/// averaged values, rounded — what `--out` writes and the verification plays.
pub(crate) fn tuned_values(s: &Setup, rows: &[Row]) -> (String, Vec<(String, i64)>) {
    let starts: Vec<f64> = s.params.iter().map(|p| p.start).collect();
    report::tune_values(&s.names, &starts, rows, s.external())
}
