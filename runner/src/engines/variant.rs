//! Engine variants from fastchess-style `key=value` words (`--engine name=dev
//! option.rfp_margin=90 nodes=5000`, `--each tc=10+0.1`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use engine::nnue::rule;
use engine::nnue::Net;
use engine::params::Params;
use engine::search::{Evaluation, SyzygyConfig};
use engine::tablebase::Tablebases;

/// The builtin engine's `option.Hash` (and datagen's `--hash`) range, MiB: up to 1 TiB.
pub const HASH_MB: std::ops::RangeInclusive<usize> = 1..=1 << 20;

/// Where a variant's moves come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// The embedded engine, in-process, with these parameter values.
    Builtin,
    /// An external UCI engine: executable, arguments, working directory.
    Uci {
        /// Path or command name of the executable.
        cmd: String,
        /// Command-line arguments.
        args: Vec<String>,
        /// Working directory.
        dir: Option<PathBuf>,
    },
    /// spar itself built at a git revision and/or with cargo features, run over UCI.
    Build {
        /// Git revision (branch, tag, commit); `None` = the working tree's HEAD.
        git: Option<String>,
        /// Cargo features of the `runner` crate (e.g. `kindergarten`).
        features: Vec<String>,
    },
}

/// A time control: `moves/base+inc` (seconds), e.g. `40/60+0.6` or `10+0.1`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeControl {
    /// Moves per period (`None`: the whole game).
    pub moves: Option<u32>,
    /// Time per period.
    pub base: Duration,
    /// Increment per move.
    pub increment: Duration,
}

impl TimeControl {
    /// Parses `moves/base+inc`, `base+inc`, `base` (seconds, decimals allowed; base may be `m:ss`).
    pub fn parse(text: &str) -> Result<TimeControl, String> {
        let bad = || {
            format!("bad tc '{text}': expected moves/base+inc in seconds, e.g. 40/60+0.6 or 10+0.1")
        };
        let (moves, rest) = match text.split_once('/') {
            Some((m, rest)) => (
                Some(m.parse::<u32>().ok().filter(|&m| m > 0).ok_or_else(bad)?),
                rest,
            ),
            None => (None, text),
        };
        let (base, inc) = match rest.split_once('+') {
            Some((b, i)) => (b, Some(i)),
            None => (rest, None),
        };
        let seconds = |s: &str| -> Option<f64> {
            let v = match s.split_once(':') {
                Some((m, s)) => m.parse::<f64>().ok()? * 60.0 + s.parse::<f64>().ok()?,
                None => s.parse::<f64>().ok()?,
            };
            (v.is_finite() && v >= 0.0).then_some(v)
        };
        let base = seconds(base).ok_or_else(bad)?;
        let increment = match inc {
            Some(i) => seconds(i).ok_or_else(bad)?,
            None => 0.0,
        };
        if base <= 0.0 && increment <= 0.0 {
            return Err(format!("bad tc '{text}': no time at all"));
        }
        Ok(TimeControl {
            moves,
            base: Duration::from_secs_f64(base),
            increment: Duration::from_secs_f64(increment),
        })
    }

    /// The PGN `TimeControl` tag value (`40/60+0.6` style, seconds).
    pub fn pgn(&self) -> String {
        let base = trim_float(self.base.as_secs_f64());
        let inc = self.increment.as_secs_f64();
        let mut s = match self.moves {
            Some(m) => format!("{m}/{base}"),
            None => base,
        };
        if inc > 0.0 {
            s.push('+');
            s.push_str(&trim_float(inc));
        }
        s
    }
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// How long a variant may think per move.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MoveLimits {
    /// Node limit per move.
    pub nodes: Option<u64>,
    /// Depth limit per move.
    pub depth: Option<i32>,
    /// Fixed time per move.
    pub movetime: Option<Duration>,
    /// A game clock.
    pub tc: Option<TimeControl>,
}

impl MoveLimits {
    /// Whether any limit is set.
    pub fn is_set(&self) -> bool {
        self.nodes.is_some() || self.depth.is_some() || self.movetime.is_some() || self.tc.is_some()
    }

    /// Readable form for PGN `TimeControl` and messages.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(tc) = self.tc {
            parts.push(tc.pgn());
        }
        if let Some(t) = self.movetime {
            parts.push(format!("movetime={}ms", t.as_millis()));
        }
        if let Some(n) = self.nodes {
            parts.push(format!("nodes={n}"));
        }
        if let Some(d) = self.depth {
            parts.push(format!("depth={d}"));
        }
        if parts.is_empty() {
            "-".to_string()
        } else {
            parts.join(" ")
        }
    }
}

/// One engine configuration of a match.
#[derive(Clone, Debug)]
pub struct Variant {
    /// Display name (PGN tags, CSV, summary).
    pub name: String,
    /// Where the moves come from.
    pub source: Source,
    /// UCI options (`option.Name=value`), in the order given. For builtin variants, tunable
    /// parameters go to `params`, and `Hash`/`Threads`/`Eval`/`EvalFile` and the `Syzygy…`
    /// options are applied to the searcher.
    pub options: Vec<(String, String)>,
    /// Parameter values of a builtin variant (defaults plus overrides).
    pub params: Params,
    /// Per-move limits.
    pub limits: MoveLimits,
    /// Extra time a clock may overrun before a time forfeit.
    pub time_margin: Duration,
    /// Transposition-table size (MiB) of a builtin variant.
    pub hash_mb: usize,
    /// Static evaluation of a builtin variant (`option.Eval=hce|nnue`).
    pub evaluation: Evaluation,
    /// Network of a builtin variant loaded by `option.EvalFile=PATH` (`None`: the embedded net).
    pub net: Option<Arc<Net>>,
    /// Syzygy tables of a builtin variant (`option.SyzygyPath=DIRS`), shared by every
    /// engine that names the same path.
    pub tablebases: Option<Arc<Tablebases>>,
    /// How a builtin variant probes them (`option.SyzygyProbeDepth`, `SyzygyProbeLimit`,
    /// `Syzygy50MoveRule`).
    pub syzygy: SyzygyConfig,
}

/// The refusal of a handcrafted-evaluation weight for an engine that evaluates with the
/// network, where it would change nothing; `fix` says where `option.Eval=hce` goes.
pub fn unused_weight(weight: &str, fix: &str) -> String {
    format!(
        "{weight} is a weight of the handcrafted evaluation, which this engine does not use \
         (it evaluates with NNUE): add option.Eval=hce {fix}"
    )
}

/// Parses one `--engine` value (its words joined with `--each` words; engine words win).
pub fn parse_variant(
    engine_words: &[String],
    each_words: &[String],
    index: usize,
) -> Result<Variant, String> {
    let mut kv: Vec<(String, String)> = Vec::new();
    for word in each_words.iter().chain(engine_words) {
        let (k, v) = word.split_once('=').ok_or_else(|| {
            format!("engine word '{word}' is not key=value (e.g. name=dev, cmd=/usr/games/stockfish, nodes=5000, option.Hash=16)")
        })?;
        if k.is_empty() {
            return Err(format!("engine word '{word}' has an empty key"));
        }
        // Later words override earlier ones (so an engine's own words beat --each).
        if let Some(slot) = kv.iter_mut().find(|(key, _)| key == k) {
            slot.1 = v.to_string();
        } else {
            kv.push((k.to_string(), v.to_string()));
        }
    }
    let mut name = None;
    let mut cmd = None;
    let mut args = Vec::new();
    let mut dir = None;
    let mut git = None;
    let mut features = Vec::new();
    let mut options = Vec::new();
    let mut params = Params::defaults();
    let mut params_file = None;
    let mut limits = MoveLimits::default();
    let mut time_margin = Duration::from_millis(100);
    let mut hash_mb = 16;
    let mut evaluation = Evaluation::DEFAULT;
    let mut net = None;
    let mut net_file: Option<String> = None;
    let mut tablebases = None;
    let mut syzygy = SyzygyConfig::default();
    let num = |k: &str, v: &str| -> Result<u64, String> {
        v.parse::<u64>()
            .map_err(|_| format!("engine word {k}={v}: expected a non-negative integer"))
    };
    for (k, v) in &kv {
        match k.as_str() {
            "name" if v.trim().is_empty() => {
                return Err("engine word 'name=' is empty: give the engine a name, e.g. name=dev".to_string())
            }
            "name" => name = Some(v.clone()),
            "cmd" => cmd = Some(v.clone()),
            "args" => args = split_args(v)?,
            "dir" => dir = Some(PathBuf::from(v)),
            "git" => git = Some(v.clone()),
            "features" => features = v.split([',', ' ']).filter(|f| !f.is_empty()).map(String::from).collect(),
            "params" => params_file = Some(PathBuf::from(v)),
            "nodes" => limits.nodes = Some(positive(k, v, num(k, v)?, u64::MAX)?),
            "depth" => limits.depth = Some(positive(k, v, num(k, v)?, MAX_DEPTH)? as i32),
            "movetime" | "st" => {
                let ms = if k == "st" {
                    v.parse::<f64>()
                        .ok()
                        .filter(|s| s.is_finite() && *s >= 0.0)
                        .map(|s| (s * 1000.0).round() as u64)
                        .ok_or_else(|| format!("engine word st={v}: expected seconds, e.g. st=0.5"))?
                } else {
                    num(k, v)?
                };
                let ms = positive(k, v, ms, u64::MAX).map_err(|e| {
                    if k == "st" {
                        format!("{e} (st= is seconds; the smallest move time is 1 ms)")
                    } else {
                        e
                    }
                })?;
                limits.movetime = Some(Duration::from_millis(ms));
            }
            "tc" => limits.tc = Some(TimeControl::parse(v)?),
            "timemargin" => time_margin = Duration::from_millis(num(k, v)?),
            "proto" if v == "uci" => {}
            "proto" => return Err(format!("engine word proto={v}: only uci is supported")),
            key if key.starts_with("option.") => {
                let opt = &key["option.".len()..];
                if opt.is_empty() {
                    return Err("engine word 'option.=…' names no option".to_string());
                }
                options.push((opt.to_string(), v.clone()));
            }
            _ => {
                return Err(format!(
                    "unknown engine key '{k}' in '{k}={v}' (known: name, cmd, args, dir, git, features, params, \
                     nodes, depth, movetime, st, tc, timemargin, proto, option.<Name>)"
                ))
            }
        }
    }
    let source = match (cmd, git.is_some() || !features.is_empty()) {
        (Some(_), true) => {
            return Err("an engine takes cmd= or git=/features=, not both".to_string())
        }
        (Some(cmd), false) => Source::Uci { cmd, args, dir },
        (None, true) => Source::Build { git, features },
        (None, false) => Source::Builtin,
    };
    let name = name.unwrap_or_else(|| match &source {
        Source::Builtin => format!("spar{}", index + 1),
        Source::Uci { cmd, .. } => std::path::Path::new(cmd)
            .file_name()
            .map_or(cmd.clone(), |f| f.to_string_lossy().into_owned()),
        Source::Build { git, features } => {
            let mut n = git.clone().unwrap_or_else(|| "HEAD".to_string());
            if !features.is_empty() {
                n = format!("{n}+{}", features.join("+"));
            }
            n
        }
    });
    if let Some(file) = &params_file {
        if source != Source::Builtin {
            return Err(format!("engine '{name}': params= is for builtin engines; give external engines option.<Name>=<value>"));
        }
        load_params_file(file, &mut params).map_err(|e| format!("engine '{name}': {e}"))?;
    }
    if source == Source::Builtin {
        let mut kept = Vec::new();
        for (opt, value) in options {
            match opt.as_str() {
                "Hash" => {
                    hash_mb = value
                        .parse::<usize>()
                        .ok()
                        .filter(|m| HASH_MB.contains(m))
                        .ok_or_else(|| format!("engine '{name}': option.Hash={value}: expected MiB from {} to {}", HASH_MB.start(), HASH_MB.end()))?
                }
                "Eval" => {
                    evaluation = Evaluation::parse(&value).map_err(|_| {
                        format!("engine '{name}': option.Eval={value}: expected hce or nnue")
                    })?
                }
                "EvalFile" if rule::is_embedded(&value) => {
                    net = None;
                    net_file = None;
                }
                "EvalFile" => {
                    let loaded = Net::load(Path::new(&value))
                        .map_err(|e| format!("engine '{name}': option.EvalFile: {e}"))?;
                    net = Some(Arc::new(loaded));
                    net_file = Some(value);
                }
                "SyzygyPath" | "SyzygyProbeDepth" | "SyzygyProbeLimit" | "Syzygy50MoveRule" => {
                    set_syzygy(&opt, &value, &mut tablebases, &mut syzygy)
                        .map_err(|e| format!("engine '{name}': option.{opt}={value}: {e}"))?
                }
                "Threads" if value == "1" => {}
                "Threads" => {
                    return Err(format!(
                        "engine '{name}': builtin engines search with one thread each (games run in parallel instead); \
                         drop option.Threads={value}"
                    ))
                }
                _ => {
                    if engine::params::spec(&opt).is_some() && value.trim().parse::<i64>().is_err() {
                        return Err(format!(
                            "engine '{name}': option.{opt}={value}: expected an integer (parameters are integers)"
                        ));
                    }
                    params.set_str(&opt, &value).map_err(|e| format!("engine '{name}': option.{opt}: {e}"))?;
                    kept.push((opt, value));
                }
            }
        }
        options = kept;
        rule::check(evaluation, net_file.as_deref(), &rule::ENGINE_WORDS)
            .map_err(|e| format!("engine '{name}': {e}"))?;
        if evaluation == Evaluation::Nnue {
            if let Some((spec, _)) = params.changed().find(|(spec, _)| spec.eval) {
                return Err(format!(
                    "engine '{name}': {}",
                    unused_weight(&spec.name, "to it (or to --each)")
                ));
            }
        }
    }
    if !limits.is_set() {
        return Err(format!("engine '{name}' has no limit: add nodes=, depth=, movetime= or tc= (to it or to --each)"));
    }
    if limits.tc.is_some()
        && (limits.nodes.is_some() || limits.depth.is_some() || limits.movetime.is_some())
    {
        return Err(format!(
            "engine '{name}' has a clock (tc=) and a per-move limit (nodes=, depth= or movetime=): \
             give one kind, e.g. tc=10+0.1 or nodes=5000 (set the other per engine, not in --each)"
        ));
    }
    Ok(Variant {
        name,
        source,
        options,
        params,
        limits,
        time_margin,
        hash_mb,
        evaluation,
        net,
        tablebases,
        syzygy,
    })
}

/// Applies one Syzygy option of a builtin engine.
fn set_syzygy(
    opt: &str,
    value: &str,
    tablebases: &mut Option<Arc<Tablebases>>,
    syzygy: &mut SyzygyConfig,
) -> Result<(), String> {
    let range = |lo: i64, hi: i64| {
        value
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|v| (lo..=hi).contains(v))
            .ok_or_else(|| format!("expected an integer from {lo} to {hi}"))
    };
    match opt {
        "SyzygyPath" if value.trim().is_empty() || value == "<empty>" => *tablebases = None,
        "SyzygyPath" => *tablebases = Some(super::tablebases::open_shared(value)?),
        "SyzygyProbeDepth" => syzygy.probe_depth = range(1, 100)? as i32,
        "SyzygyProbeLimit" => syzygy.probe_limit = range(0, 7)? as u32,
        _ => {
            syzygy.rule50 = match value.trim().to_ascii_lowercase().as_str() {
                "true" => true,
                "false" => false,
                _ => return Err("expected true or false".to_string()),
            }
        }
    }
    Ok(())
}

/// The deepest `depth=` limit.
const MAX_DEPTH: u64 = 200;

/// `value` (parsed from `key=text`) checked to be within 1..=max.
fn positive(key: &str, text: &str, value: u64, max: u64) -> Result<u64, String> {
    if value == 0 {
        Err(format!(
            "engine word {key}={text}: must be at least 1 (0 would not search at all)"
        ))
    } else if value > max {
        Err(format!("engine word {key}={text}: at most {max}"))
    } else {
        Ok(value)
    }
}

/// Loads a parameter file (`name, value` lines, or OpenBench SPSA input lines whose value is
/// the start) into `params`: see [`data::params_file`].
pub fn load_params_file(path: &std::path::Path, params: &mut Params) -> Result<(), String> {
    data::params_file::load(path, params).map_err(|e| e.to_string())
}

/// Splits an `args=` value on spaces, honouring double quotes.
pub fn split_args(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if quoted {
        return Err(format!("args={text}: unbalanced double quote"));
    }
    if any {
        out.push(cur);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn time_controls() {
        let tc = TimeControl::parse("40/60+0.6").unwrap();
        assert_eq!(tc.moves, Some(40));
        assert_eq!(tc.base, Duration::from_secs(60));
        assert_eq!(tc.increment, Duration::from_millis(600));
        assert_eq!(tc.pgn(), "40/60+0.6");
        assert_eq!(
            TimeControl::parse("1:30+1").unwrap().base,
            Duration::from_secs(90)
        );
        assert_eq!(TimeControl::parse("10").unwrap().pgn(), "10");
        for bad in ["", "x", "0/10", "10+x", "-5", "0+0", "40/"] {
            assert!(TimeControl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn builtin_with_overrides_and_each() {
        let v = parse_variant(&words("name=dev option.Hash=8"), &words("nodes=5000"), 0).unwrap();
        assert_eq!(v.name, "dev");
        assert_eq!(v.source, Source::Builtin);
        assert_eq!(v.limits.nodes, Some(5000));
        assert_eq!(v.hash_mb, 8);
        let own = parse_variant(&words("nodes=100"), &words("nodes=5000"), 1).unwrap();
        assert_eq!(own.limits.nodes, Some(100));
        assert_eq!(own.name, "spar2");
    }

    #[test]
    fn external_and_build_sources() {
        let v = parse_variant(
            &words("cmd=/usr/games/stockfish option.Hash=16 tc=10+0.1"),
            &[],
            0,
        )
        .unwrap();
        assert_eq!(v.name, "stockfish");
        assert!(matches!(v.source, Source::Uci { .. }));
        assert_eq!(v.options, vec![("Hash".to_string(), "16".to_string())]);
        let b = parse_variant(&words("git=main features=kindergarten depth=3"), &[], 0).unwrap();
        assert_eq!(
            b.source,
            Source::Build {
                git: Some("main".into()),
                features: vec!["kindergarten".into()]
            }
        );
        assert_eq!(split_args("-a \"b c\" d").unwrap(), vec!["-a", "b c", "d"]);
    }

    #[test]
    fn builtin_eval_options_select_the_evaluation_and_net() {
        let v = parse_variant(&words("nodes=5"), &[], 0).unwrap();
        assert_eq!(v.evaluation, Evaluation::DEFAULT);
        let v = parse_variant(&words("nodes=5 option.Eval=nnue"), &[], 0).unwrap();
        assert_eq!((v.evaluation, v.net.is_none()), (Evaluation::Nnue, true));
        assert!(v.options.is_empty());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("net.nnue");
        std::fs::write(
            &file,
            engine::nnue::placeholder::material_network(32).to_bytes(),
        )
        .unwrap();
        let word = format!("option.EvalFile={}", file.display());
        let v = parse_variant(&words(&format!("nodes=5 option.Eval=NNUE {word}")), &[], 0).unwrap();
        assert_eq!(v.net.map(|n| n.hidden()), Some(32));
        // One rule with UCI: an empty EvalFile is the embedded net; a file needs NNUE.
        let v = parse_variant(&words("nodes=5 option.EvalFile="), &[], 0).unwrap();
        assert!(v.net.is_none());
        let v = parse_variant(&words("nodes=5 option.Eval=hce option.EvalFile="), &[], 0).unwrap();
        assert_eq!(v.evaluation, Evaluation::Hce);
        let err =
            parse_variant(&words(&format!("nodes=5 option.Eval=hce {word}")), &[], 0).unwrap_err();
        assert!(
            err.contains("option.EvalFile") && err.contains("is a network, which only the NNUE"),
            "{err}"
        );
        // External engines get them as UCI options.
        let v = parse_variant(&words("cmd=x nodes=5 option.Eval=nnue"), &[], 0).unwrap();
        assert_eq!(v.options, vec![("Eval".to_string(), "nnue".to_string())]);
    }

    #[test]
    fn bad_words_are_clear_errors() {
        for (w, needle) in [
            ("name=x", "no limit"),
            ("nodes=5 frobnicate=1", "unknown engine key 'frobnicate'"),
            ("nodes=abc", "nodes=abc"),
            ("nodes=5 novalue", "not key=value"),
            ("nodes=5 option.Threads=4", "one thread"),
            (
                "nodes=5 option.no_such_param=3",
                "unknown parameter 'no_such_param'",
            ),
            ("nodes=5 cmd=x git=y", "not both"),
            ("nodes=5 tc=abc", "bad tc"),
            (
                "nodes=5 params=/nonexistent/file",
                "cannot read parameter file",
            ),
            ("nodes=0", "nodes=0: must be at least 1"),
            ("depth=0", "depth=0: must be at least 1"),
            ("depth=201", "at most 200"),
            ("movetime=0", "movetime=0: must be at least 1"),
            ("st=0", "st= is seconds"),
            ("st=-1", "expected seconds"),
            ("tc=10+0.1 nodes=5000", "give one kind"),
            ("name= nodes=5", "'name=' is empty"),
            ("nodes=5 option.rfp_margin=80.5", "expected an integer"),
            (
                "nodes=5 option.Eval=nn",
                "option.Eval=nn: expected hce or nnue",
            ),
            (
                "nodes=5 option.SyzygyPath=/nonexistent/syzygy",
                "option.SyzygyPath=/nonexistent/syzygy: tablebase directory /nonexistent/syzygy does not exist",
            ),
            (
                "nodes=5 option.SyzygyProbeLimit=8",
                "option.SyzygyProbeLimit=8: expected an integer from 0 to 7",
            ),
            (
                "nodes=5 option.SyzygyProbeDepth=0",
                "expected an integer from 1 to 100",
            ),
            ("nodes=5 option.Syzygy50MoveRule=yes", "expected true or false"),
            (
                "nodes=5 option.EvalFile=/nonexistent/x.nnue",
                "option.EvalFile: /nonexistent/x.nnue: ",
            ),
            (
                "nodes=5 option.Eval=nnue option.material_mg_knight=150",
                "material_mg_knight is a weight of the handcrafted evaluation, which this engine does not use",
            ),
            (
                "nodes=5 option.material_mg_knight=150",
                "does not use (it evaluates with NNUE): add option.Eval=hce to it (or to --each)",
            ),
        ] {
            let err = parse_variant(&words(w), &[], 0).unwrap_err();
            assert!(err.contains(needle), "{w}: {err}");
        }
    }

    fn params_file(text: &[u8]) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.txt");
        std::fs::write(&path, text).unwrap();
        let word = format!("params={}", path.display());
        (dir, word)
    }

    #[test]
    fn parameter_files_are_checked() {
        let (_d, ok) = params_file(b"\xEF\xBB\xBFrfp_margin, 81\n");
        let v = parse_variant(&words(&format!("nodes=5 {ok}")), &[], 0).unwrap();
        assert_eq!(
            v.params.get_by_name("rfp_margin"),
            Some(81),
            "a BOM is skipped"
        );
        for (text, needle) in [
            (&b""[..], "sets no parameter"),
            (&b"# only a comment\n"[..], "sets no parameter"),
            (
                &b"rfp_margin, 80\nrfp_margin, 90\n"[..],
                "rfp_margin is set again (first on line 1)",
            ),
            (&b"rfp_margin, \xFF\n"[..], "not UTF-8"),
            (&b"rfp_margin, 80.5x\n"[..], ":1:"),
        ] {
            let (_d, w) = params_file(text);
            let err = parse_variant(&words(&format!("nodes=5 {w}")), &[], 0).unwrap_err();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }
}
