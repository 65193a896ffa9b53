//! What the fastchess and cutechess-cli personalities share: their single-dash command line
//! read into option groups, the options both tools have translated into `spar match`/`spar
//! sprt` words, and their per-game lines and reports on stdout (docs/compat.md lists every
//! option of both tools: mapped, honoured without effect, or refused).
//!
//! [`translate`] turns a tool's arguments into spar's argv; the hidden `--game-lines TOOL…`
//! word it adds makes `spar match` print the tool's lines through a [`Report`].

use engine::types::GameResult;
use sprt::{Decision, Pentanomial, Sprt, Trinomial};

use crate::engines::variant::Variant;
use crate::error::{CliError, CliResult};
use crate::play::game::{PlayedGame, Termination};
use crate::play::schedule::PairOutcome;
use crate::play::tally::Tally;
use crate::summary::{self, MatchInfo};

/// The tool a personality speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// fastchess (`spar fastchess`, a `fastchess*` program name).
    Fastchess,
    /// cutechess-cli (`spar cutechess`, a `cutechess*` program name).
    Cutechess,
}

impl Tool {
    /// The tool's name as its messages and the hidden `--game-lines` word say it.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Fastchess => "fastchess",
            Tool::Cutechess => "cutechess",
        }
    }

    /// The tool whose name starts a program name (argv[0]'s file name), if any.
    pub fn of_program(argv0: &str) -> Option<Tool> {
        let name = std::path::Path::new(argv0).file_name()?.to_str()?;
        [Tool::Fastchess, Tool::Cutechess]
            .into_iter()
            .find(|t| name.starts_with(t.name()))
    }

    /// The version line: the tool's own `NAME X.Y.Z` form, so that a tool checking the
    /// version accepts it, followed by the spar build.
    pub fn version_line(self) -> String {
        let (tool, version) = match self {
            Tool::Fastchess => ("fastchess", "1.8.1"),
            Tool::Cutechess => ("cutechess-cli", "1.5.1"),
        };
        format!(
            "{tool} {version} (spar {} speaking {}; see docs/compat.md)",
            env!("CARGO_PKG_VERSION"),
            self.name()
        )
    }
}

/// What a tool's command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Translation {
    /// `-version`: print the tool's version line and exit.
    Version,
    /// Run spar with these arguments (without the program name): `match …` or `sprt …`.
    Run(Vec<String>),
}

/// Reads one tool's options: the errors name the tool and the option.
struct Reader {
    tool: Tool,
}

impl Reader {
    fn usage<T>(&self, text: String) -> CliResult<T> {
        Err(CliError::usage(format!("{}: {text}", self.tool.name())))
    }

    fn refuse<T>(&self, option: &str, why: &str) -> CliResult<T> {
        Err(CliError::usage(format!(
            "{} option -{option} is not supported by spar: {why} (see docs/compat.md)",
            self.tool.name()
        )))
    }

    /// Splits `key=value`, refusing a word without `=`.
    fn key_value<'a>(&self, option: &str, word: &'a str) -> CliResult<(&'a str, &'a str)> {
        match word.split_once('=') {
            Some(kv) => Ok(kv),
            None => self.usage(format!(
                "-{option}: '{word}' is not key=value (see docs/compat.md)"
            )),
        }
    }

    /// Exactly one value of `-option`.
    fn single<'a>(&self, option: &str, values: &'a [String]) -> CliResult<&'a str> {
        match values {
            [v] => Ok(v),
            _ => self.usage(format!("-{option} takes one value, got {}", values.len())),
        }
    }

    /// No value for a flag.
    fn flag(&self, option: &str, values: &[String]) -> CliResult {
        if values.is_empty() {
            Ok(())
        } else {
            self.usage(format!(
                "-{option} takes no value, got '{}'",
                values.join(" ")
            ))
        }
    }

    fn number<T: std::str::FromStr>(&self, option: &str, text: &str) -> CliResult<T> {
        match text.parse() {
            Ok(n) => Ok(n),
            Err(_) => self.usage(format!("-{option}: '{text}' is not a valid number")),
        }
    }

    /// Engine words of `-engine`/`-each` in spar's words: `plies=` is `depth=`, `tc=inf` is no
    /// clock, cutechess's `arg=` words gather into one `args=`, `restart=off`/`auto` are what spar does
    /// anyway; the keys neither tool shares with spar are refused; the rest pass through
    /// to spar's own checks.
    fn engine_words(&self, option: &str, values: &[String]) -> CliResult<Vec<String>> {
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
fn groups(reader: &Reader, args: &[String]) -> CliResult<Vec<(String, Vec<String>)>> {
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

/// Translates a tool's arguments (after the program name) into spar's argv.
pub fn translate(tool: Tool, args: &[String]) -> CliResult<Translation> {
    let r = Reader { tool };
    let groups = groups(&r, args)?;
    if groups
        .iter()
        .any(|(o, _)| o == "version" || o == "v" || (tool == Tool::Fastchess && o == "V"))
    {
        return Ok(Translation::Version);
    }
    let fastchess = tool == Tool::Fastchess;
    let mut out: Vec<String> = Vec::new();
    let mut engines = 0;
    // Both tools play one game at a time unless told otherwise.
    let mut concurrency: usize = 1;
    // fastchess: 2 rounds of 2 games; cutechess: 1 round of 1 game.
    let (mut rounds, mut games): (u64, u64) = if fastchess { (2, 2) } else { (1, 1) };
    // cutechess: how many times each opening is played (-repeat), and whether -openings
    // policy=round gives every round its own opening.
    let mut repeat: u64 = 1;
    let mut round_policy = false;
    let mut sprt: Option<Vec<String>> = None;
    let mut cutechess_sprt: Option<[f64; 4]> = None;
    let mut recover = false;
    let mut output = tool.name().to_string();
    let mut tb: Option<String> = None;
    let mut tb_words: Vec<String> = Vec::new();
    let mut openings = false;
    let mut shuffled = false;
    let mut fischer = false;
    let mut rating_interval: u64 = if fastchess { 10 } else { 0 };
    let mut second_interval: u64 = if fastchess { 1 } else { 0 };
    let push = |out: &mut Vec<String>, flag: &str, values: Vec<String>| {
        out.push(flag.to_string());
        out.extend(values);
    };
    for (option, values) in &groups {
        let o = option.as_str();
        match o {
            "engine" => {
                engines += 1;
                push(&mut out, "--engine", r.engine_words(o, values)?);
            }
            "each" => push(&mut out, "--each", r.engine_words(o, values)?),
            "concurrency" => concurrency = r.number(o, r.single(o, values)?)?,
            "force-concurrency" if fastchess => r.flag(o, values)?,
            "rounds" => rounds = r.number(o, r.single(o, values)?)?,
            "games" => games = r.number(o, r.single(o, values)?)?,
            "repeat" => {
                let n = match values.as_slice() {
                    [] => 2,
                    _ => r.number(o, r.single(o, values)?)?,
                };
                if fastchess {
                    games = n;
                } else {
                    repeat = n;
                }
            }
            "openings" => {
                let mut file = None;
                let mut words = Vec::new();
                let mut order = "sequential".to_string();
                // cutechess's default format is pgn; fastchess's is the file's extension,
                // as spar's.
                let mut format = (!fastchess).then(|| "pgn".to_string());
                for w in values {
                    let (k, v) = r.key_value(o, w)?;
                    match k {
                        "file" => file = Some(v.to_string()),
                        "format" => format = Some(v.to_string()),
                        "start" | "plies" => words.push(w.clone()),
                        "order" => {
                            order = v.to_string();
                            shuffled = v == "random";
                        }
                        "policy" if v == "default" => {}
                        "policy" if v == "round" => round_policy = true,
                        "policy" => {
                            return r.refuse(
                                o,
                                &format!("policy={v}: spar gives pair k opening k (policy=round)"),
                            )
                        }
                        _ => {
                            return r.usage(format!(
                                "-openings: unknown key '{k}' (file=, format=, order=, start=, plies=, policy=)"
                            ))
                        }
                    }
                }
                let Some(file) = file else {
                    return r.usage("-openings needs file=NAME".to_string());
                };
                let mut book = vec![file];
                book.extend(format.map(|f| format!("format={f}")));
                book.push(format!("order={order}"));
                book.extend(words);
                push(&mut out, "--book", book);
                openings = true;
            }
            "srand" => {
                let s: u64 = r.number(o, r.single(o, values)?)?;
                push(&mut out, "--seed", vec![s.to_string()]);
            }
            "sprt" => {
                let mut words = Vec::new();
                for w in values {
                    let (k, v) = r.key_value(o, w)?;
                    match k {
                        "elo0" | "elo1" | "alpha" | "beta" => {}
                        "model" if fastchess => {}
                        _ => {
                            let keys = if fastchess {
                                "elo0=, elo1=, alpha=, beta=, model="
                            } else {
                                "elo0=, elo1=, alpha=, beta="
                            };
                            return r.usage(format!("-sprt: unknown key '{k}' ({keys})"));
                        }
                    }
                    words.push(format!("--{k}"));
                    words.push(v.to_string());
                }
                if fastchess {
                    sprt = Some(words);
                } else {
                    // cutechess-cli's own test, run by the report (docs/compat.md).
                    let mut bounds = [0.0, 0.0, 0.05, 0.05];
                    for pair in words.chunks(2) {
                        let i = ["--elo0", "--elo1", "--alpha", "--beta"]
                            .iter()
                            .position(|k| *k == pair[0])
                            .expect("a -sprt key");
                        bounds[i] = r.number(o, &pair[1])?;
                    }
                    let [_, _, alpha, beta] = bounds;
                    if !(alpha > 0.0 && alpha < 1.0 && beta > 0.0 && beta < 1.0) {
                        return r.usage(format!(
                            "-sprt: alpha and beta must be between 0 and 1, got {alpha} and {beta}"
                        ));
                    }
                    cutechess_sprt = Some(bounds);
                }
            }
            "resign" => push(&mut out, "--resign", values.clone()),
            "draw" => push(&mut out, "--draw", values.clone()),
            "maxmoves" => {
                let n: u32 = r.number(o, r.single(o, values)?)?;
                push(&mut out, "--maxmoves", vec![n.to_string()]);
            }
            "recover" => {
                r.flag(o, values)?;
                recover = true;
            }
            "variant" => match r.single(o, values)? {
                "standard" => {}
                "fischerandom" => fischer = true,
                v => return r.usage(format!("-variant: '{v}' is not standard or fischerandom")),
            },
            "pgnout" if fastchess => {
                push(&mut out, "--pgnout", vec![fastchess_pgnout(&r, values)?])
            }
            "pgnout" => {
                // cutechess: -pgnout FILE [min] [fi]
                let Some((file, rest)) = values.split_first() else {
                    return r.usage("-pgnout needs a file name".to_string());
                };
                for w in rest {
                    match w.as_str() {
                        // spar writes the games that ended, never an unfinished one.
                        "fi" => {}
                        "min" => {
                            return r.refuse(
                                o,
                                "min: spar's PGN always has its move comments (score/depth, time, nodes)",
                            )
                        }
                        _ => return r.usage(format!("-pgnout: '{w}' is neither min nor fi")),
                    }
                }
                push(&mut out, "--pgnout", vec![file.clone()]);
            }
            // cutechess separates its table directories with ';', spar with ':'.
            "tb" if fastchess => tb = Some(r.single(o, values)?.to_string()),
            "tb" => tb = Some(r.single(o, values)?.replace(';', ":")),
            "tbpieces" => tb_words.push(format!("pieces={}", r.single(o, values)?)),
            "tbadjudicate" if fastchess => tb_words.push(format!(
                "adjudicate={}",
                r.single(o, values)?.to_ascii_lowercase()
            )),
            "tbignore50" => {
                r.flag(o, values)?;
                tb_words.push("ignore50=true".to_string());
            }
            "output" if fastchess => {
                for w in values {
                    match r.key_value(o, w)? {
                        ("format", v @ ("fastchess" | "cutechess")) => output = v.to_string(),
                        _ => {
                            return r.usage(format!(
                                "-output: '{w}' is not format=fastchess or format=cutechess"
                            ))
                        }
                    }
                }
            }
            "tournament" => match r.single(o, values)? {
                "roundrobin" | "round-robin" => {}
                v => return r.refuse(o, &format!("{v}: spar plays two engines, one pairing")),
            },
            "wait" => match r.single(o, values)? {
                "0" => {}
                _ => return r.refuse(o, "spar starts the next game at once"),
            },
            "ratinginterval" => rating_interval = r.number(o, r.single(o, values)?)?,
            "scoreinterval" if fastchess => second_interval = r.number(o, r.single(o, values)?)?,
            "outcomeinterval" if !fastchess => {
                second_interval = r.number(o, r.single(o, values)?)?;
            }
            "autosaveinterval" if fastchess => {
                let _: u64 = r.number(o, r.single(o, values)?)?;
            }
            "bookmode" if !fastchess => match r.single(o, values)? {
                "ram" | "disk" => {}
                v => return r.usage(format!("-bookmode: '{v}' is not ram or disk")),
            },
            "help" => return r.refuse(o, "run `spar match --help`, or read docs/compat.md"),
            "noswap" | "reverse" => {
                return r.refuse(
                    o,
                    "spar plays every opening once with each colour, in pairs",
                )
            }
            "log" if fastchess => {
                return r.refuse(
                    o,
                    "spar writes no log file; use --results FILE with `spar match`",
                )
            }
            "config" if fastchess => {
                return r.refuse(
                    o,
                    "spar reads no JSON config; give the options on the command line",
                )
            }
            "epdout" => return r.refuse(o, "spar writes no EPD of final positions"),
            "report" if fastchess => {
                return r.refuse(o, "spar's summary always shows the pentanomial counts")
            }
            "event" | "site" => return r.refuse(o, "spar writes its own PGN Event and Site tags"),
            "seeds" => return r.refuse(o, "spar plays two engines, no gauntlet"),
            "quick" if fastchess => {
                return r.refuse(o, "give -engine, -each, -rounds and -openings instead")
            }
            "resultformat" if !fastchess => {
                return r.refuse(o, "spar prints cutechess's two-player result lines only")
            }
            "engines" if !fastchess => return r.refuse(o, "spar has no engine configuration file"),
            // fastchess joins multi-line engine errors with ` :: ` under -testEnv; spar's
            // messages are one line anyway.
            "testEnv" if fastchess => r.flag(o, values)?,
            "strict" | "debug" | "crc32" | "check-mate-pvs" | "show-latency" | "use-affinity"
            | "startup-ms" | "ucinewgame-ms" | "ping-ms" | "compliance" => {
                return r.refuse(o, "spar has no such feature")
            }
            _ => return r.usage(format!("unknown option -{o} (see docs/compat.md)")),
        }
    }
    if rounds == 0 || games == 0 {
        return r.usage("-rounds and -games must be at least 1".to_string());
    }
    let total = rounds.checked_mul(games).ok_or_else(|| {
        CliError::usage(format!("{}: -rounds × -games is too large", tool.name()))
    })?;
    if fastchess && games != 2 {
        return r.refuse(
            "games",
            &format!(
                "{games}: spar plays every opening once with each colour, so -games must be 2 (or -repeat)"
            ),
        );
    }
    if !fastchess {
        // cutechess swaps colours after every game of the pairing and changes the opening
        // after -repeat games (or each round with policy=round): spar's pairs are
        // -repeat 2, or policy=round with -games 2.
        let pairs = (repeat == 2 && !round_policy) || (round_policy && games == 2);
        if !pairs {
            return r.refuse(
                "repeat",
                "spar plays every opening once with each colour: give -repeat (2), or -openings policy=round with -games 2",
            );
        }
        if total % 2 != 0 {
            return r.refuse(
                "games",
                &format!("-rounds × -games is {total}: spar plays pairs, so it must be even"),
            );
        }
    }
    if engines != 2 {
        return r.usage(format!("spar plays two engines, got {engines} -engine"));
    }
    if fischer && !openings {
        return r.usage(
            "-variant fischerandom needs -openings with Chess960 positions (spar's built-in book is standard chess)"
                .to_string(),
        );
    }
    if let Some(dir) = tb {
        let mut words = vec![dir];
        words.extend(tb_words);
        push(&mut out, "--tb", words);
    } else if !tb_words.is_empty() {
        return r.usage("-tbpieces/-tbadjudicate/-tbignore50 need -tb DIR".to_string());
    }
    resolve_cmd_in_dir(&mut out);
    let mut argv = vec![if sprt.is_some() { "sprt" } else { "match" }.to_string()];
    argv.extend(out);
    argv.extend(["--games".to_string(), total.to_string()]);
    argv.extend(["--concurrency".to_string(), concurrency.to_string()]);
    argv.extend(["--output".to_string(), output.clone()]);
    argv.push(if recover { "--recover" } else { "--no-recover" }.to_string());
    argv.push("--game-lines".to_string());
    argv.push(
        Lines {
            tool,
            output: if output == "cutechess" {
                Tool::Cutechess
            } else {
                Tool::Fastchess
            },
            rating_interval,
            second_interval,
            shuffled,
            sprt: cutechess_sprt,
        }
        .word(),
    );
    if let Some(words) = sprt {
        argv.extend(words);
    }
    Ok(Translation::Run(argv))
}

/// What fastchess's `Results of A vs B (…):` says in parentheses: the limits, threads and
/// hash of the engines (one value when both have the same, else `A - B`) and the book's
/// file name. Threads and Hash are the engines' `option.Threads=`/`option.Hash=`, else 1
/// and 16 (spar's engine's defaults; fastchess asks the engine for its own).
pub fn fastchess_header(variants: &[Variant; 2], book: Option<&String>) -> String {
    let both = |f: &dyn Fn(&Variant) -> String| {
        let (a, b) = (f(&variants[0]), f(&variants[1]));
        if a == b {
            a
        } else {
            format!("{a} - {b}")
        }
    };
    let option = |v: &Variant, name: &str, default: &str| {
        v.options
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map_or(default.to_string(), |(_, x)| x.clone())
    };
    let limits = both(&|v| {
        let l = &v.limits;
        if let Some(tc) = &l.tc {
            let moves = tc.moves.map_or(String::new(), |m| format!("{m}/"));
            let inc = if tc.increment.is_zero() {
                String::new()
            } else {
                format!("+{}", g_digits(tc.increment.as_secs_f64(), 2))
            };
            format!("{moves}{}{inc}", tc.base.as_secs_f64())
        } else if let Some(t) = l.movetime {
            format!("{}/move", t.as_secs_f64())
        } else if let Some(d) = l.depth {
            format!("{d} plies")
        } else if let Some(n) = l.nodes {
            format!("{n} nodes")
        } else {
            String::new()
        }
    });
    let threads = both(&|v| format!("{}t", option(v, "Threads", "1")));
    let hash = both(&|v| format!("{}MB", option(v, "Hash", "16")));
    let mut header = format!("{limits}, {threads}, {hash}");
    if let Some(file) = book {
        let short = file.rsplit(['/', '\\']).next().unwrap_or(file);
        header.push_str(&format!(", {short}"));
    }
    header
}

/// `{:.Ng}` of fmt/printf: `digits` significant digits, no trailing zeros.
fn g_digits(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return sprt::format::number(x, 0);
    }
    let exp = x.abs().log10().floor() as i32;
    let decimals = (digits - 1 - exp).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Both tools start an engine in its `dir=` and look a relative `cmd=` up there (fastchess:
/// `chdir` then `posix_spawnp`; OpenBench passes `dir=Engines/ cmd=./dev`), where spar looks
/// `cmd=` up from its own working directory: a `cmd=` with a `/` that is not absolute
/// becomes `DIR/CMD` (made absolute), with the engine's `dir=` or else `-each`'s. A bare
/// name is looked up on PATH by all three.
fn resolve_cmd_in_dir(out: &mut [String]) {
    // The word runs of each --engine and of --each, as index ranges into `out`.
    let mut runs: Vec<(bool, std::ops::Range<usize>)> = Vec::new();
    let mut i = 0;
    while i < out.len() {
        let flag = out[i].clone();
        let start = i + 1;
        i = start;
        while i < out.len() && !out[i].starts_with("--") {
            i += 1;
        }
        if flag == "--engine" || flag == "--each" {
            runs.push((flag == "--each", start..i));
        }
    }
    let value = |out: &[String], r: &std::ops::Range<usize>, key: &str| {
        out[r.clone()]
            .iter()
            .rev()
            .find_map(|w| w.strip_prefix(key).map(str::to_string))
    };
    let each_dir = runs
        .iter()
        .filter(|(each, _)| *each)
        .find_map(|(_, r)| value(out, r, "dir="));
    for (_, r) in runs.iter().filter(|(each, _)| !*each) {
        let Some(dir) = value(out, r, "dir=").or_else(|| each_dir.clone()) else {
            continue;
        };
        for w in &mut out[r.clone()] {
            if let Some(cmd) = w.strip_prefix("cmd=") {
                let path = std::path::Path::new(cmd);
                if cmd.contains('/') && path.is_relative() {
                    let joined = std::path::Path::new(&dir).join(path);
                    let resolved = std::path::absolute(&joined).unwrap_or(joined);
                    *w = format!("cmd={}", resolved.display());
                }
            }
        }
    }
}

/// fastchess's `-pgnout file=F [key=value…]`: the file, or a refusal of what spar's PGN
/// cannot be.
fn fastchess_pgnout(r: &Reader, values: &[String]) -> CliResult<String> {
    let o = "pgnout";
    let mut file = None;
    for w in values {
        let (k, v) = r.key_value(o, w)?;
        match (k, v) {
            ("file", _) => file = Some(v.to_string()),
            ("notation", "san") | ("append", "true") => {}
            // spar's comments always carry the nodes (`n=`).
            ("nodes", "true" | "false") => {}
            (
                "seldepth" | "nps" | "hashfull" | "tbhits" | "pv" | "timeleft" | "latency" | "min",
                "false",
            ) => {}
            // What OpenBench's client passes: accepted so that spar drops in as its
            // fastchess-ob, with a note on stderr (OpenBench reads stdout only).
            ("seldepth", "true") | ("match_line", _) => eprintln!(
                "spar: note: fastchess -pgnout {k}={v} has no effect: spar's PGN has no sd= and no engine-output lines (docs/compat.md)"
            ),
            _ => {
                return r.refuse(
                    o,
                    &format!("{k}={v}: spar's PGN is SAN, appended, with its own move comments"),
                )
            }
        }
    }
    file.ok_or_else(|| {
        CliError::usage("fastchess -pgnout needs file=NAME (spar makes up no file name)")
    })
}

/// Which lines a personality prints, as the hidden `--game-lines` word carries them:
/// `TOOL[:OUTPUT][:rating=N][:every=N]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lines {
    /// The tool whose per-game lines these are (their reason wording).
    pub tool: Tool,
    /// The tool whose report format the blocks follow (fastchess's `-output format=`).
    pub output: Tool,
    /// fastchess: a results block every N pairs; cutechess: the ranking every N games (0:
    /// only at the end).
    pub rating_interval: u64,
    /// fastchess's `-scoreinterval` (cutechess output's `Score of` line every N games);
    /// cutechess's `-outcomeinterval` (the outcomes every N games; 0: only at the end).
    pub second_interval: u64,
    /// fastchess shuffles its book (`-openings order=random`) and says so first.
    pub shuffled: bool,
    /// cutechess-cli's `-sprt elo0 elo1 alpha beta`, run by the report as cutechess runs it.
    pub sprt: Option<[f64; 4]>,
}

impl Lines {
    /// The word of the hidden `--game-lines` flag.
    pub fn word(&self) -> String {
        let sprt = self.sprt.map_or(String::new(), |[e0, e1, a, b]| {
            format!(":sprt={e0},{e1},{a},{b}")
        });
        format!(
            "{}:{}:rating={}:every={}{}{sprt}",
            self.tool.name(),
            self.output.name(),
            self.rating_interval,
            self.second_interval,
            if self.shuffled { ":shuffled" } else { "" }
        )
    }

    /// Reads [`Lines::word`]; `fastchess` alone is the fastchess personality's defaults.
    pub fn parse(word: &str) -> CliResult<Lines> {
        let bad = || {
            CliError::usage(format!(
                "--game-lines: '{word}' is not TOOL[:OUTPUT][:rating=N][:every=N] (TOOL fastchess or cutechess)"
            ))
        };
        let tool_of = |s: &str| match s {
            "fastchess" => Some(Tool::Fastchess),
            "cutechess" => Some(Tool::Cutechess),
            _ => None,
        };
        let mut parts = word.split(':');
        let tool = parts.next().and_then(tool_of).ok_or_else(bad)?;
        let fastchess = tool == Tool::Fastchess;
        let mut lines = Lines {
            tool,
            output: tool,
            rating_interval: if fastchess { 10 } else { 0 },
            second_interval: if fastchess { 1 } else { 0 },
            shuffled: false,
            sprt: None,
        };
        for p in parts {
            match p.split_once('=') {
                None if p == "shuffled" => lines.shuffled = true,
                None => lines.output = tool_of(p).ok_or_else(bad)?,
                Some(("rating", n)) => lines.rating_interval = n.parse().map_err(|_| bad())?,
                Some(("every", n)) => lines.second_interval = n.parse().map_err(|_| bad())?,
                Some(("sprt", v)) => {
                    let x: Vec<f64> = v
                        .split(',')
                        .map(str::parse)
                        .collect::<Result<_, _>>()
                        .map_err(|_| bad())?;
                    lines.sprt = Some(x.try_into().map_err(|_| bad())?);
                }
                Some(_) => return Err(bad()),
            }
        }
        Ok(lines)
    }
}

/// The reason of a game's end in the tool's words (`White mates`, `Draw by 3-fold
/// repetition`, `Black wins by adjudication`, `White loses on time`, …). The two tools
/// differ only where a game reached `-maxmoves`: cutechess says why it adjudicated.
pub fn reason(tool: Tool, game: &PlayedGame) -> String {
    let (winner, loser) = match game.outcome {
        GameResult::WhiteWins => ("White", "Black"),
        GameResult::BlackWins => ("Black", "White"),
        GameResult::Draw => ("", ""),
    };
    match game.termination {
        Termination::Checkmate => format!("{winner} mates"),
        Termination::Stalemate => "Draw by stalemate".to_string(),
        Termination::Repetition => "Draw by 3-fold repetition".to_string(),
        Termination::FiftyMoves => "Draw by fifty moves rule".to_string(),
        Termination::InsufficientMaterial => "Draw by insufficient mating material".to_string(),
        Termination::ResignAdjudication => format!("{winner} wins by adjudication"),
        Termination::MaxMoves if tool == Tool::Cutechess => {
            "Draw by adjudication: maximal game length".to_string()
        }
        Termination::DrawAdjudication | Termination::MaxMoves => "Draw by adjudication".to_string(),
        // Already in both tools' words (`… by adjudication: SyzygyTB`).
        Termination::TablebaseAdjudication => game.reason.clone(),
        Termination::TimeForfeit => format!("{loser} loses on time"),
        Termination::Crash => format!("{loser} disconnects"),
        Termination::Stall => format!("{loser}'s connection stalls"),
        Termination::IllegalMove => format!("{loser} makes an illegal move"),
    }
}

/// The two games of a pair as the tool numbers them (round k + 1 plays games 2k + 1 and
/// 2k + 2, the first with the first engine as White): each game's number, White, Black.
fn numbered<'n>(pair: &PairOutcome, names: [&'n str; 2]) -> [(u64, &'n str, &'n str); 2] {
    [0, 1].map(|g| {
        let n = 2 * pair.pair + g as u64 + 1;
        if g == 0 {
            (n, names[0], names[1])
        } else {
            (n, names[1], names[0])
        }
    })
}

/// `Started game N of M (A vs B)` and `Finished game N (A vs B): RESULT {reason}` of both
/// games of a pair, in the tool's words.
pub fn game_lines(
    tool: Tool,
    pair: &PairOutcome,
    names: [&str; 2],
    total: Option<u64>,
) -> Vec<String> {
    let of = total.map_or_else(|| "?".to_string(), |t| t.to_string());
    let mut lines = Vec::new();
    for (game, (n, white, black)) in pair.games.iter().zip(numbered(pair, names)) {
        lines.push(format!("Started game {n} of {of} ({white} vs {black})"));
        lines.push(format!(
            "Finished game {n} ({white} vs {black}): {} {{{}}}",
            game.outcome.pgn(),
            reason(tool, game)
        ));
    }
    lines
}

/// What a personality prints on stdout as a match goes: the per-game lines, the periodic
/// reports, and the final report in place of spar's summary.
pub struct Report<'a> {
    lines: Lines,
    names: [&'a str; 2],
    total: Option<u64>,
    /// The pairs so far, from the first engine's side.
    tally: Tally,
    /// The games so far (ahead of `tally` by the first game of a pair in progress).
    running: Trinomial,
    /// Pairs of a win and a loss, and of two draws (fastchess's `WL/DD Ratio`).
    wl_dd: [u64; 2],
    /// fastchess's matchup in its results header: `(LIMITS, THREADS, HASH, BOOK)`.
    header: String,
    /// When the match began (fastchess's `Total Time`).
    started: std::time::Instant,
    /// cutechess's outcome counts per engine: `"Win: White mates"`, `"Draw by …"`, ….
    outcomes: [std::collections::BTreeMap<String, u64>; 2],
    /// cutechess: each engine's W/L/D with White and with Black.
    sides: [[Trinomial; 2]; 2],
    /// cutechess-cli's test decided (H0 or H1): the match stops after this pair.
    decided: bool,
}

impl<'a> Report<'a> {
    /// A report of `total` games (unknown for an open-ended SPRT) between `names`.
    /// `header` is what fastchess's `Results of A vs B (…):` line says in parentheses.
    pub fn new(
        lines: Lines,
        names: [&'a str; 2],
        total: Option<u64>,
        header: String,
    ) -> Report<'a> {
        Report {
            lines,
            names,
            total,
            tally: Tally::default(),
            running: Trinomial::default(),
            wl_dd: [0, 0],
            header,
            started: std::time::Instant::now(),
            outcomes: Default::default(),
            sides: Default::default(),
            decided: false,
        }
    }

    /// The lines before the first game: `Indexing opening suite...` when the tool shuffles
    /// the book (both tools say it).
    pub fn start(&self) -> Vec<String> {
        if self.lines.shuffled {
            vec!["Indexing opening suite...".to_string()]
        } else {
            Vec::new()
        }
    }

    /// The lines of a finished pair (pairs come in order): both games' lines, and the
    /// reports due after them.
    pub fn pair(&mut self, pair: &PairOutcome, sprt: Option<&Sprt>) -> CliResult<Vec<String>> {
        let mut out = Vec::new();
        let summaries = summary::pair_summaries(pair);
        let numbered = numbered(pair, self.names);
        let game_lines = game_lines(self.lines.tool, pair, self.names, self.total);
        for g in 0..2 {
            out.extend(game_lines[2 * g..2 * g + 2].iter().cloned());
            self.running.record(summaries[g].first_result());
            self.count_outcome(g, &pair.games[g]);
            let n = numbered[g].0;
            let last = self.total == Some(n);
            match (self.lines.tool, self.lines.output) {
                (Tool::Cutechess, _) => {
                    let st = self.cutechess_sprt();
                    self.decided |= st.decision != Decision::Continue;
                    out.push(sprt::format::cutechess_score(
                        &self.running,
                        self.names[0],
                        self.names[1],
                    ));
                    let every = |i: u64| i != 0 && n.is_multiple_of(i);
                    if every(self.lines.rating_interval) {
                        out.extend(self.cutechess_results()?);
                    }
                    if every(self.lines.second_interval) {
                        out.extend(self.cutechess_outcomes());
                    }
                }
                (Tool::Fastchess, Tool::Cutechess) => {
                    // fastchess counts games here, not pairs (no pentanomial report).
                    let every = |i: u64| (i != 0 && n.is_multiple_of(i)) || last;
                    if every(self.lines.second_interval) {
                        out.push(sprt::format::cutechess_score(
                            &self.running,
                            self.names[0],
                            self.names[1],
                        ));
                    }
                    if every(self.lines.rating_interval) {
                        out.extend(self.fastchess_block(sprt)?);
                    }
                }
                (Tool::Fastchess, Tool::Fastchess) => {}
            }
        }
        self.tally.add_pair(summaries);
        use sprt::PlayerResult::{Draw, Loss, Win};
        match summaries.map(|s| s.first_result()) {
            [Win, Loss] | [Loss, Win] => self.wl_dd[0] += 1,
            [Draw, Draw] => self.wl_dd[1] += 1,
            _ => {}
        }
        if self.lines.tool == Tool::Fastchess && self.lines.output == Tool::Fastchess {
            let k = pair.pair + 1;
            let every = self.lines.rating_interval;
            let last = self.total == Some(2 * k);
            if (every != 0 && k.is_multiple_of(every)) || last {
                out.extend(self.fastchess_block(sprt)?);
            }
        }
        Ok(out)
    }

    /// Whether the match should stop after this pair: cutechess-cli's test decided.
    pub fn stop(&self) -> bool {
        self.decided
    }

    /// cutechess-cli's SPRT of the games so far (without `-sprt`: its null test, LLR 0
    /// between infinite bounds, which cutechess prints all the same).
    fn cutechess_sprt(&self) -> CutechessSprt {
        let [elo0, elo1, alpha, beta] = self.lines.sprt.unwrap_or([0.0; 4]);
        // cutechess counts games for its test only when there is one.
        let g = if self.lines.sprt.is_some() {
            self.running
        } else {
            Trinomial::default()
        };
        CutechessSprt::status(g.wins, g.losses, g.draws, elo0, elo1, alpha, beta)
    }

    fn count_outcome(&mut self, g: usize, game: &PlayedGame) {
        let reason = reason(Tool::Cutechess, game);
        // Game 0 of a pair has the first engine as White.
        let (white, black) = if g == 0 { (0, 1) } else { (1, 0) };
        let record = |t: &mut Trinomial, r: sprt::PlayerResult| t.record(r);
        match game.outcome {
            GameResult::Draw => {
                for i in [white, black] {
                    *self.outcomes[i].entry(reason.clone()).or_default() += 1;
                }
                record(&mut self.sides[white][0], sprt::PlayerResult::Draw);
                record(&mut self.sides[black][1], sprt::PlayerResult::Draw);
            }
            outcome => {
                let (winner, loser) = if outcome == GameResult::WhiteWins {
                    (white, black)
                } else {
                    (black, white)
                };
                *self.outcomes[winner]
                    .entry(format!("Win: {reason}"))
                    .or_default() += 1;
                *self.outcomes[loser]
                    .entry(format!("Loss: {reason}"))
                    .or_default() += 1;
                let white_wins = outcome == GameResult::WhiteWins;
                let (w, b) = if white_wins {
                    (sprt::PlayerResult::Win, sprt::PlayerResult::Loss)
                } else {
                    (sprt::PlayerResult::Loss, sprt::PlayerResult::Win)
                };
                record(&mut self.sides[white][0], w);
                record(&mut self.sides[black][1], b);
            }
        }
    }

    /// The final report, in place of spar's summary.
    pub fn finish(&self, info: &MatchInfo, tally: &Tally) -> CliResult<Vec<String>> {
        let sprt = info.sprt;
        let mut out = Vec::new();
        let n = tally.games.games();
        match self.lines.tool {
            Tool::Cutechess => {
                let every = |i: u64| i != 0 && n.is_multiple_of(i);
                if !every(self.lines.rating_interval) {
                    out.extend(self.cutechess_results()?);
                }
                if !every(self.lines.second_interval) {
                    out.extend(self.cutechess_outcomes());
                }
                out.push("Finished match".to_string());
            }
            Tool::Fastchess => {
                let pairs = tally.pairs.pairs();
                let decided = sprt.and_then(|s| {
                    let st = s.status(&summary::sample(tally, s)).ok()?;
                    (st.decision != Decision::Continue || self.total == Some(n)).then_some(st)
                });
                if let Some(st) = decided {
                    // fastchess prints the block again with the verdict.
                    let s = sprt.expect("decided");
                    if self.lines.output == Tool::Cutechess {
                        out.push(sprt::format::cutechess_score(
                            &tally.games,
                            self.names[0],
                            self.names[1],
                        ));
                    }
                    out.extend(self.fastchess_block(sprt)?);
                    let h = if st.decision == Decision::H1 {
                        "H1"
                    } else {
                        "H0"
                    };
                    let verdict = format!(
                        "SPRT ([{:.2}, {:.2}]) completed - {h} was accepted",
                        s.elo0(),
                        s.elo1()
                    );
                    out.push(if self.lines.output == Tool::Cutechess {
                        "Tournament finished".to_string()
                    } else {
                        verdict
                    });
                } else if self.total != Some(2 * pairs) {
                    // Stopped before the last game (a crash without -recover): the
                    // results so far.
                    out.extend(self.fastchess_block(sprt)?);
                }
                out.push("Finished match".to_string());
                let t = self.started.elapsed().as_secs();
                out.push(format!(
                    "Total Time: {:02}:{:02}:{:02} (hours:minutes:seconds)",
                    t / 3600,
                    t / 60 % 60,
                    t % 60
                ));
                out.push(String::new());
            }
        }
        Ok(out)
    }

    /// fastchess's results block: the Elo, LOS, games and pentanomial lines between
    /// dashes (fastchess's `-output format=cutechess`: cutechess's Elo difference line).
    fn fastchess_block(&self, sprt: Option<&Sprt>) -> CliResult<Vec<String>> {
        let t = &self.tally;
        let rule = "-".repeat(50);
        let mut out = Vec::new();
        if self.lines.output == Tool::Cutechess {
            let g = &self.running;
            let e = FastchessElo::wdl(g);
            out.push(format!(
                "Elo difference: {} +/- {}, LOS: {} %, DrawRatio: {} %",
                fixed(e.diff, 2),
                fixed(e.error, 2),
                fixed(e.los * 100.0, 2),
                fixed(100.0 * g.draws as f64 / g.games() as f64, 2)
            ));
            if let Some(s) = sprt {
                let llr = s.llr_trinomial(g);
                let (lo, hi) = (s.lower_bound(), s.upper_bound());
                let pct = if llr < 0.0 { llr / lo } else { llr / hi } * 100.0;
                let verdict = if llr >= hi {
                    " - H1 was accepted"
                } else if llr < lo {
                    " - H0 was accepted"
                } else {
                    ""
                };
                out.push(format!(
                    "SPRT: llr {llr:.2} ({pct:.1}%), lbound {lo:.2}, ubound {hi:.2}{verdict}"
                ));
            }
            return Ok(out);
        }
        let p: &Pentanomial = &t.pairs;
        let g = &t.games;
        let e = FastchessElo::pentanomial(p);
        let [_, _, _, wd, ww] = p.0;
        let [ll, ld, _, _, _] = p.0;
        let pairs_ratio = (ww + wd) as f64 / (ld + ll) as f64;
        let draw_ratio = ((self.wl_dd[0] + self.wl_dd[1]) as f64 / p.pairs() as f64) * 100.0;
        let points = g.wins as f64 + g.draws as f64 / 2.0;
        out.push(rule.clone());
        out.push(format!(
            "Results of {} vs {} ({}):",
            self.names[0], self.names[1], self.header
        ));
        out.push(format!(
            "Elo: {} +/- {}, nElo: {} +/- {}",
            fixed(e.diff, 2),
            fixed(e.error, 2),
            fixed(e.nelo, 2),
            fixed(e.nelo_error, 2)
        ));
        out.push(format!(
            "LOS: {} %, DrawRatio: {} %, PairsRatio: {}",
            fixed(e.los * 100.0, 2),
            fixed(draw_ratio, 2),
            fixed(pairs_ratio, 2)
        ));
        out.push(format!(
            "Games: {}, Wins: {}, Losses: {}, Draws: {}, Points: {} ({} %)",
            g.games(),
            g.wins,
            g.losses,
            g.draws,
            fixed(points, 1),
            fixed(points / g.games() as f64 * 100.0, 2)
        ));
        out.push(format!(
            "{}, WL/DD Ratio: {}",
            sprt::format::fastchess_ptnml(p),
            fixed(self.wl_dd[0] as f64 / self.wl_dd[1] as f64, 2)
        ));
        if let Some(s) = sprt {
            let llr = s
                .llr_pentanomial(p)
                .map_err(|e| CliError::failure(e.to_string()))?;
            out.push(sprt::format::fastchess_llr(s, llr));
        }
        out.push(rule);
        Ok(out)
    }

    /// cutechess's two-player results: each side's record, the Elo difference, the SPRT.
    fn cutechess_results(&self) -> CliResult<Vec<String>> {
        let mut out = Vec::new();
        let name = self.names[0];
        let [white, black] = self.sides[0];
        let side = |what: &str, t: &Trinomial| {
            format!(
                "...      {name} playing {what}: {} - {} - {}  [{}] {}",
                t.wins,
                t.losses,
                t.draws,
                sprt::format::number(t.points() / t.games() as f64, 3),
                t.games()
            )
        };
        if white.games() > 0 {
            out.push(side("White", &white));
        }
        if black.games() > 0 {
            out.push(side("Black", &black));
        }
        let games = white.games() + black.games();
        if games > 0 {
            // White's wins: the first engine's wins with White and losses with Black.
            let w = white.wins + black.losses;
            let l = white.losses + black.wins;
            let d = white.draws + black.draws;
            let score = (2 * w + d) as f64 / (2 * games) as f64;
            out.push(format!(
                "...      White vs Black: {w} - {l} - {d}  [{}] {games}",
                sprt::format::number(score, 3)
            ));
        }
        let g = &self.running;
        let elo = CutechessElo::new(g.wins, g.losses, g.draws);
        out.push(format!(
            "Elo difference: {} +/- {}, LOS: {} %, DrawRatio: {} %",
            qt_fixed(elo.diff(), 1),
            qt_fixed(elo.error_margin(), 1),
            qt_fixed(elo.los(), 1),
            qt_fixed(elo.draw_ratio() * 100.0, 1)
        ));
        // cutechess appends it to the Elo line after a newline (no blank line), with or
        // without -sprt (then LLR 0 between infinite bounds).
        let st = self.cutechess_sprt();
        let verdict = match st.decision {
            Decision::H1 => " - H1 was accepted",
            Decision::H0 => " - H0 was accepted",
            Decision::Continue => "",
        };
        out.push(format!(
            "SPRT: llr {} ({}%), lbound {}, ubound {}{verdict}",
            g3(st.llr),
            fixed(st.llr / st.upper * 100.0, 1),
            g3(st.lower),
            g3(st.upper)
        ));
        Ok(out)
    }

    /// cutechess's outcomes: per engine, each way its games ended and how often (sorted).
    fn cutechess_outcomes(&self) -> Vec<String> {
        let mut out = Vec::new();
        // cutechess starts each player with a newline: a blank line before the first only.
        out.push(String::new());
        for (i, name) in self.names.iter().enumerate() {
            out.push(format!("Player: {name}"));
            for (what, n) in &self.outcomes[i] {
                out.push(format!("   \"{what}\": {n}"));
            }
        }
        out
    }
}

/// `x` with `decimals` digits as C++ streams and fmt print it on x86-64 Linux: a NaN
/// keeps its sign (`-nan` for 0/0), infinities are `inf`/`-inf`.
fn fixed(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        if x.is_sign_negative() { "-nan" } else { "nan" }.to_string()
    } else {
        sprt::format::number(x, decimals)
    }
}

/// Qt's `QString::arg(x, 0, 'f', decimals)`: as C's `%.Nf`, but a zero (even -0.0) has no
/// sign, and NaN is `nan`.
fn qt_fixed(x: f64, decimals: usize) -> String {
    sprt::format::number(if x == 0.0 { 0.0 } else { x }, decimals)
}

/// fastchess's Elo estimates (`EloPentanomial`, `EloWDL`), computed in its order of
/// operations so that even its NaNs come out with the same sign.
struct FastchessElo {
    diff: f64,
    error: f64,
    nelo: f64,
    nelo_error: f64,
    los: f64,
}

impl FastchessElo {
    const CI95ZSCORE: f64 = 1.959963984540054;

    fn score_to_elo(score: f64) -> f64 {
        -400.0 * (1.0 / score - 1.0).log10()
    }

    /// From the score, its variance per observation, the number of observations, and the
    /// factor nElo divides the variance by (2 for pairs).
    fn new(score: f64, variance: f64, n: f64, nelo_var_factor: f64) -> FastchessElo {
        let per = variance / n;
        let upper = score + Self::CI95ZSCORE * per.sqrt();
        let lower = score - Self::CI95ZSCORE * per.sqrt();
        let nelo = |s: f64| {
            (s - 0.5) / (nelo_var_factor * variance).sqrt() * (800.0 / std::f64::consts::LN_10)
        };
        FastchessElo {
            diff: Self::score_to_elo(score),
            error: (Self::score_to_elo(upper) - Self::score_to_elo(lower)) / 2.0,
            nelo: nelo(score),
            nelo_error: (nelo(upper) - nelo(lower)) / 2.0,
            los: (1.0 - erf(-(score - 0.5) / (2.0 * per).sqrt())) / 2.0,
        }
    }

    fn pentanomial(p: &Pentanomial) -> FastchessElo {
        let pairs = p.pairs() as f64;
        let [ll, ld, wl_dd, wd, ww] = p.0.map(|n| n as f64 / pairs);
        let score = ww + 0.75 * wd + 0.5 * wl_dd + 0.25 * ld;
        let variance = ww * (1.0 - score).powi(2)
            + wd * (0.75 - score).powi(2)
            + wl_dd * (0.5 - score).powi(2)
            + ld * (0.25 - score).powi(2)
            + ll * (0.0 - score).powi(2);
        Self::new(score, variance, pairs, 2.0)
    }

    fn wdl(t: &Trinomial) -> FastchessElo {
        let games = t.games() as f64;
        let (w, d, l) = (
            t.wins as f64 / games,
            t.draws as f64 / games,
            t.losses as f64 / games,
        );
        let score = w + 0.5 * d;
        let variance =
            w * (1.0 - score).powi(2) + d * (0.5 - score).powi(2) + l * (0.0 - score).powi(2);
        Self::new(score, variance, games, 1.0)
    }
}

/// Qt's `QString::arg(x, 0, 'g', 3)`: three significant digits, no trailing zeros.
pub fn g3(x: f64) -> String {
    if !x.is_finite() {
        return sprt::format::number(x, 0);
    }
    if x == 0.0 {
        return "0".to_string();
    }
    let exp = x.abs().log10().floor() as i32;
    if !(-5..3).contains(&exp) {
        let s = format!("{x:.2e}");
        // Rust writes 1.23e5; Qt writes 1.23e+05.
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = m.trim_end_matches('0').trim_end_matches('.');
        let e: i32 = e.parse().unwrap_or(0);
        return format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    g_digits(x, 3)
}

/// cutechess-cli's SPRT (projects/lib/src/sprt.cpp): a trinomial test whose Elo bounds
/// are scaled by the draw Elo estimated from the sample (with half a game added to each
/// outcome).
struct CutechessSprt {
    llr: f64,
    lower: f64,
    upper: f64,
    decision: Decision,
}

impl CutechessSprt {
    fn status(
        wins: u64,
        losses: u64,
        draws: u64,
        elo0: f64,
        elo1: f64,
        alpha: f64,
        beta: f64,
    ) -> CutechessSprt {
        let (w, l, d) = (wins as f64 + 0.5, losses as f64 + 0.5, draws as f64 + 0.5);
        // Probabilities of the sample, its BayesElo and draw Elo.
        let count = w + l + d;
        let (pw, pl) = (w / count, l / count);
        let draw_elo = 200.0 * ((1.0 - pl) / pl * (1.0 - pw) / pw).log10();
        let x = 10f64.powf(-draw_elo / 400.0);
        let scale = 4.0 * x / ((1.0 + x) * (1.0 + x));
        // Win/loss/draw probabilities of a BayesElo at that draw Elo.
        let probs = |belo: f64| {
            let pw = 1.0 / (1.0 + 10f64.powf((draw_elo - belo) / 400.0));
            let pl = 1.0 / (1.0 + 10f64.powf((draw_elo + belo) / 400.0));
            (pw, pl, 1.0 - pw - pl)
        };
        let (w0, l0, d0) = probs(elo0 / scale);
        let (w1, l1, d1) = probs(elo1 / scale);
        let llr = w * (w1 / w0).ln() + l * (l1 / l0).ln() + d * (d1 / d0).ln();
        let lower = (beta / (1.0 - alpha)).ln();
        let upper = ((1.0 - beta) / alpha).ln();
        let decision = if llr >= upper {
            Decision::H1
        } else if llr <= lower {
            Decision::H0
        } else {
            Decision::Continue
        };
        CutechessSprt {
            llr,
            lower,
            upper,
            decision,
        }
    }
}

/// cutechess's `Elo` class: the score's mean and deviation from W/L/D, its Elo
/// difference, error margin (its own inverse-erf approximation) and LOS.
struct CutechessElo {
    wins: f64,
    losses: f64,
    draws: f64,
    mu: f64,
    stdev: f64,
}

impl CutechessElo {
    fn new(wins: u64, losses: u64, draws: u64) -> CutechessElo {
        let (wins, losses, draws) = (wins as f64, losses as f64, draws as f64);
        let n = wins + losses + draws;
        let (w, l, d) = (wins / n, losses / n, draws / n);
        let mu = w + d / 2.0;
        let dev = w * (1.0 - mu).powi(2) + l * (0.0 - mu).powi(2) + d * (0.5 - mu).powi(2);
        CutechessElo {
            wins,
            losses,
            draws,
            mu,
            stdev: dev.sqrt() / n.sqrt(),
        }
    }

    fn diff_of(p: f64) -> f64 {
        -400.0 * (1.0 / p - 1.0).log10()
    }

    fn diff(&self) -> f64 {
        Self::diff_of(self.mu)
    }

    fn erf_inv(x: f64) -> f64 {
        // cutechess's own truncated π, kept so that its error margins come out the same.
        #[allow(clippy::approx_constant)]
        let pi = 3.1415926535897;
        let a = 8.0 * (pi - 3.0) / (3.0 * pi * (4.0 - pi));
        let y = (1.0 - x * x).ln();
        let z = 2.0 / (pi * a) + y / 2.0;
        let ret = ((z * z - y / a).sqrt() - z).sqrt();
        if x < 0.0 {
            -ret
        } else {
            ret
        }
    }

    fn phi_inv(p: f64) -> f64 {
        std::f64::consts::SQRT_2 * Self::erf_inv(2.0 * p - 1.0)
    }

    fn error_margin(&self) -> f64 {
        let lo = self.mu + Self::phi_inv(0.025) * self.stdev;
        let hi = self.mu + Self::phi_inv(0.975) * self.stdev;
        (Self::diff_of(hi) - Self::diff_of(lo)) / 2.0
    }

    fn los(&self) -> f64 {
        let x = (self.wins - self.losses) / (2.0 * (self.wins + self.losses)).sqrt();
        100.0 * (0.5 + 0.5 * erf(x))
    }

    fn draw_ratio(&self) -> f64 {
        self.draws / (self.wins + self.losses + self.draws)
    }
}

/// The error function (Abramowitz–Stegun 7.1.26 is too coarse for one decimal of LOS near
/// 50 %; this is the series/continued-fraction pair, good to 1e-15).
fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let t = x.abs();
    let v = if t < 2.5 {
        // Taylor series.
        let mut sum = t;
        let mut term = t;
        let mut k = 0.0;
        loop {
            k += 1.0;
            term *= -t * t / k;
            let add = term / (2.0 * k + 1.0);
            sum += add;
            if add.abs() < 1e-17 {
                break;
            }
        }
        2.0 / std::f64::consts::PI.sqrt() * sum
    } else {
        // Continued fraction of erfc.
        let mut f = 0.0;
        for k in (1..60).rev() {
            f = (k as f64 / 2.0) / (t + f);
        }
        1.0 - (-t * t).exp() / std::f64::consts::PI.sqrt() / (t + f)
    };
    if x < 0.0 {
        -v
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    fn fc(line: &str) -> CliResult<Translation> {
        translate(Tool::Fastchess, &words(line))
    }

    fn cc(line: &str) -> CliResult<Translation> {
        translate(Tool::Cutechess, &words(line))
    }

    /// A refusal: exit code 2, one line naming the tool.
    fn refused(result: CliResult<Translation>, tool: &str, line: &str) {
        let e = result.unwrap_err();
        assert_eq!(e.code, 2, "{line}");
        assert!(!e.message.contains('\n'), "{line}");
        assert!(e.message.starts_with(tool), "{line}: {}", e.message);
    }

    #[test]
    fn a_match_line_becomes_spar_match() {
        let got =
            fc("-engine name=a plies=3 -engine name=b -each nodes=100 -rounds 3 -repeat -srand 5")
                .unwrap();
        let want = "match --engine name=a depth=3 --engine name=b --each nodes=100 --seed 5 \
                    --games 6 --concurrency 1 --output fastchess --no-recover --game-lines fastchess:fastchess:rating=10:every=1";
        assert_eq!(
            got,
            Translation::Run(want.split_whitespace().map(String::from).collect())
        );
    }

    #[test]
    fn sprt_and_tb_map() {
        let Translation::Run(argv) = fc(
            "-engine name=a -engine name=b -sprt elo0=-5 elo1=0 -tb /t -tbpieces 5 -tbadjudicate WIN_LOSS -recover",
        )
        .unwrap() else {
            panic!()
        };
        let line = argv.join(" ");
        assert!(line.starts_with("sprt "), "{line}");
        assert!(
            line.contains("--tb /t pieces=5 adjudicate=win_loss"),
            "{line}"
        );
        assert!(line.contains("--elo0 -5 --elo1 0"), "{line}");
        assert!(line.contains("--recover"), "{line}");
    }

    #[test]
    fn version_and_names() {
        assert_eq!(fc("-version").unwrap(), Translation::Version);
        assert_eq!(fc("--version").unwrap(), Translation::Version);
        assert!(Tool::Fastchess
            .version_line()
            .starts_with("fastchess 1.8.1 "));
        assert!(Tool::of_program("/usr/bin/fastchess-ob") == Some(Tool::Fastchess));
        assert!(Tool::of_program("fastchess") == Some(Tool::Fastchess));
        assert!(Tool::of_program("/usr/bin/spar").is_none());
    }

    #[test]
    fn reasons_in_fastchess_words() {
        let game = |outcome, termination| PlayedGame {
            start_fen: String::new(),
            chess960: false,
            moves: Vec::new(),
            outcome,
            termination,
            reason: "Draw by adjudication: SyzygyTB".to_string(),
            nodes: [0, 0],
            duration: std::time::Duration::ZERO,
        };
        let (w, b, d) = (
            GameResult::WhiteWins,
            GameResult::BlackWins,
            GameResult::Draw,
        );
        for (outcome, termination, want) in [
            (b, Termination::Checkmate, "Black mates"),
            (d, Termination::Stalemate, "Draw by stalemate"),
            (d, Termination::Repetition, "Draw by 3-fold repetition"),
            (d, Termination::FiftyMoves, "Draw by fifty moves rule"),
            (
                d,
                Termination::InsufficientMaterial,
                "Draw by insufficient mating material",
            ),
            (
                w,
                Termination::ResignAdjudication,
                "White wins by adjudication",
            ),
            (d, Termination::DrawAdjudication, "Draw by adjudication"),
            (d, Termination::MaxMoves, "Draw by adjudication"),
            (
                d,
                Termination::TablebaseAdjudication,
                "Draw by adjudication: SyzygyTB",
            ),
            (w, Termination::TimeForfeit, "Black loses on time"),
            (b, Termination::Crash, "White disconnects"),
            (w, Termination::Stall, "Black's connection stalls"),
            (b, Termination::IllegalMove, "White makes an illegal move"),
        ] {
            assert_eq!(reason(Tool::Fastchess, &game(outcome, termination)), want);
        }
    }

    #[test]
    fn refusals_are_one_line() {
        for line in [
            "-engine name=a -engine name=b -games 1",
            "-engine name=a -engine name=b -noswap",
            "-engine name=a -engine name=b -log file=x",
            "-engine name=a -engine name=b -bogus",
        ] {
            refused(fc(line), "fastchess", line);
        }
    }

    #[test]
    fn a_relative_cmd_is_found_in_the_engine_dir() {
        let Translation::Run(argv) =
            fc("-engine dir=Engines/ cmd=./dev name=d -engine cmd=./base name=b -each dir=/opt/e")
                .unwrap()
        else {
            panic!()
        };
        let cwd = std::env::current_dir().unwrap();
        let dev = format!("cmd={}", cwd.join("Engines/dev").display());
        assert!(argv.contains(&dev), "{argv:?}");
        assert!(argv.contains(&"cmd=/opt/e/base".to_string()), "{argv:?}");
        // A bare name is looked up on PATH, an absolute path is kept.
        let Translation::Run(argv) =
            fc("-engine dir=/x cmd=stockfish -engine dir=/x cmd=/usr/bin/e").unwrap()
        else {
            panic!()
        };
        assert!(argv.contains(&"cmd=stockfish".to_string()), "{argv:?}");
        assert!(argv.contains(&"cmd=/usr/bin/e".to_string()), "{argv:?}");
    }

    #[test]
    fn a_cutechess_line_becomes_spar_match() {
        let got = cc("-engine cmd=/e arg=uci name=a -engine name=b -each nodes=100 tc=inf \
                     -games 2 -rounds 3 -repeat -srand 5 -pgnout out.pgn fi -openings file=b.epd format=epd")
        .unwrap();
        let want = "match --engine cmd=/e name=a args=uci --engine name=b --each nodes=100 \
                    --seed 5 --pgnout out.pgn --book b.epd format=epd order=sequential --games 6 \
                    --concurrency 1 --output cutechess --no-recover --game-lines cutechess:cutechess:rating=0:every=0";
        assert_eq!(
            got,
            Translation::Run(want.split_whitespace().map(String::from).collect())
        );
    }

    #[test]
    fn cutechess_sprt_is_cutechess_own_and_needs_pairs() {
        let Translation::Run(argv) =
            cc("-engine name=a -engine name=b -games 200 -repeat -sprt elo0=0 elo1=5 alpha=0.05 beta=0.1")
                .unwrap()
        else {
            panic!()
        };
        let line = argv.join(" ");
        // A match that the report stops when cutechess's own test decides.
        assert!(line.starts_with("match "), "{line}");
        assert!(line.contains("--games 200 "), "{line}");
        assert!(
            line.ends_with("--game-lines cutechess:cutechess:rating=0:every=0:sprt=0,5,0.05,0.1"),
            "{line}"
        );
        assert!(cc(
            "-engine name=a -engine name=b -games 2 -repeat -sprt elo0=0 elo1=5 alpha=0 beta=0.05"
        )
        .is_err());
        // Without -repeat every game has its own opening; an odd total leaves a game unpaired.
        for bad in [
            "-engine name=a -engine name=b -games 10",
            "-engine name=a -engine name=b -games 3 -repeat",
            "-engine name=a -engine name=b -games 4 -repeat 4",
            "-engine name=a -engine name=b -games 2 -repeat -openings file=x.pgn policy=encounter",
        ] {
            refused(cc(bad), "cutechess", bad);
        }
        // policy=round with two games a round is pairs too.
        assert!(cc(
            "-engine name=a -engine name=b -games 2 -rounds 5 -openings file=x.pgn policy=round"
        )
        .is_ok());
    }

    #[test]
    fn cutechess_version() {
        assert_eq!(cc("-version").unwrap(), Translation::Version);
        assert!(Tool::Cutechess
            .version_line()
            .starts_with("cutechess-cli 1.5.1 (spar "));
    }

    #[test]
    fn qt_g3_numbers() {
        assert_eq!(g3(2.9444389791664403), "2.94");
        assert_eq!(g3(-2.9444389791664403), "-2.94");
        assert_eq!(g3(0.0123456), "0.0123");
        assert_eq!(g3(12.5), "12.5");
        assert_eq!(g3(1.5), "1.5");
        assert_eq!(g3(0.0), "0");
    }

    #[test]
    fn cutechess_elo_matches_its_formulas() {
        // 136 - 96 - 111: cutechess prints 40.7 +/- 30.4, LOS 99.6 %, DrawRatio 32.4 %.
        let e = CutechessElo::new(136, 96, 111);
        assert_eq!(format!("{:.1}", e.diff()), "40.7");
        assert_eq!(format!("{:.1}", e.error_margin()), "30.4");
        assert_eq!(format!("{:.1}", e.los()), "99.6");
        assert_eq!(format!("{:.1}", e.draw_ratio() * 100.0), "32.4");
        assert!((erf(0.5) - 0.520_499_877_813_046_5).abs() < 1e-14);
        assert!((erf(3.0) - 0.999_977_909_503_001_4).abs() < 1e-14);
    }

    #[test]
    fn lines_words_round_trip() {
        let l = Lines {
            tool: Tool::Cutechess,
            output: Tool::Cutechess,
            rating_interval: 4,
            second_interval: 0,
            shuffled: true,
            sprt: Some([0.0, 5.0, 0.05, 0.1]),
        };
        assert_eq!(Lines::parse(&l.word()).unwrap(), l);
        let f = Lines::parse("fastchess").unwrap();
        assert_eq!(
            (f.tool, f.output, f.rating_interval),
            (Tool::Fastchess, Tool::Fastchess, 10)
        );
        assert!(Lines::parse("stockfish").is_err());
        assert!(Lines::parse("fastchess:rating=x").is_err());
    }

    #[test]
    fn program_names() {
        assert_eq!(
            Tool::of_program("/usr/bin/fastchess-ob"),
            Some(Tool::Fastchess)
        );
        assert_eq!(Tool::of_program("cutechess-cli"), Some(Tool::Cutechess));
        assert_eq!(Tool::of_program("/usr/bin/spar"), None);
    }
}
