//! What the fastchess and cutechess-cli personalities share: their single-dash command line
//! read into option groups, the options both tools have translated into `spar match`/`spar
//! sprt` words, and their per-game lines and reports on stdout (docs/compat.md lists every
//! option of both tools: mapped, honoured without effect, or refused).
//!
//! [`translate`] turns a tool's arguments into spar's argv; the hidden `--game-lines TOOL…`
//! word it adds makes `spar match` print the tool's lines through a [`Report`].

mod book;
mod numbers;
mod options;
mod pgn;
mod report;

pub use pgn::ToolPgn;
pub use report::{fastchess_header, Report};

use crate::cli::{all_cores, SprtBounds};
use crate::error::{CliError, CliResult};

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

    /// `-sprt KEY=VALUE…`, read and checked as `spar sprt` checks its options
    /// ([`SprtBounds`]): elo0 < elo1, 0 < alpha < 1, 0 < beta < 1, alpha + beta < 1, a
    /// known model (fastchess's `model=`; cutechess has none).
    fn sprt(&self, values: &[String]) -> CliResult<SprtBounds> {
        let keys: &[&str] = match self.tool {
            Tool::Fastchess => &["elo0=", "elo1=", "alpha=", "beta=", "model="],
            Tool::Cutechess => &["elo0=", "elo1=", "alpha=", "beta="],
        };
        let bounds =
            SprtBounds::from_words(values, keys).or_else(|e| self.usage(format!("-sprt: {e}")))?;
        match bounds.check() {
            Ok(_) => Ok(bounds),
            Err(e) => self.usage(format!("-sprt {}: {e}", values.join(" "))),
        }
    }

    /// `-concurrency N`: at least 1 in both tools; fastchess (from 1.8.1) also takes 0, all
    /// hardware threads, and -N, all of them but N (at least 1). spar counts the threads it
    /// may use ([`all_cores`]: its CPU affinity and quota), as its own default does.
    fn concurrency(&self, text: &str) -> CliResult<usize> {
        let n: i64 = self.number("concurrency", text)?;
        match (self.tool, n) {
            (_, 1..) => Ok(n as usize),
            (Tool::Fastchess, _) => {
                let all = all_cores() as u64;
                Ok(all.saturating_sub(n.unsigned_abs()).max(1) as usize)
            }
            (Tool::Cutechess, _) => self.usage(format!(
                "-concurrency {n}: give the number of games played at once, at least 1"
            )),
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

/// Runs a tool's command line: prints the version line, or hands the translated argv to
/// `run` (spar's own parser and commands) — for fastchess with a random EPD book, a
/// temporary copy of the book in fastchess's order, kept until `run` returns.
pub fn run(tool: Tool, args: &[String], run: impl FnOnce(Vec<String>) -> CliResult) -> CliResult {
    match translate(tool, args)? {
        Translation::Version => {
            println!("{}", tool.version_line());
            Ok(())
        }
        Translation::Run(mut argv) => {
            let _book = match tool {
                Tool::Fastchess => book::fastchess_random_book(&mut argv)?,
                Tool::Cutechess => None,
            };
            run(argv)
        }
    }
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
    // The PGN's `n=` (fastchess `-pgnout nodes=true`); cutechess's book is an EPD file.
    let mut pgn_nodes = false;
    let mut pgn_seldepth = false;
    let mut epd_book = false;
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
            "concurrency" => concurrency = r.concurrency(r.single(o, values)?)?,
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
                epd_book = format.as_deref() == Some("epd");
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
                let bounds = r.sprt(values)?;
                if fastchess {
                    sprt = Some(sprt_words(&bounds));
                } else {
                    // cutechess-cli's own test, run by the report (docs/compat.md).
                    cutechess_sprt = Some([bounds.elo0, bounds.elo1, bounds.alpha, bounds.beta]);
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
                let (file, nodes, seldepth) = fastchess_pgnout(&r, values)?;
                pgn_nodes = nodes;
                pgn_seldepth = seldepth;
                push(&mut out, "--pgnout", vec![file])
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
            // fastchess's default; spar's report always has the pentanomial counts.
            "report" if fastchess => match r.single(o, values)? {
                "penta=true" => {}
                "penta=false" => {
                    return r.refuse(
                        o,
                        "penta=false: spar's report always shows the pentanomial counts",
                    )
                }
                v => return r.usage(format!("-report: '{v}' is not penta=true or penta=false")),
            },
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
            "strict" if fastchess => {
                return r.refuse(
                    o,
                    "it is fastchess 1.8.2's (spar speaks 1.8.1) and makes fastchess's `Warning;` lines fatal, which spar does not print",
                )
            }
            "strict" | "debug" | "crc32" | "check-mate-pvs" | "show-latency" | "use-affinity"
            | "startup-ms" | "ucinewgame-ms" | "ping-ms" | "compliance" => {
                return r.refuse(o, no_such_feature(o))
            }
            _ => return r.usage(unknown_option(tool, o)),
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
            games_per_round: if fastchess { 2 } else { games },
            pgn_nodes,
            pgn_seldepth,
            epd: !fastchess && epd_book,
        }
        .word(),
    );
    if let Some(words) = sprt {
        argv.extend(words);
    }
    Ok(Translation::Run(argv))
}

/// Why spar refuses one of fastchess's options that it has no feature for.
fn no_such_feature(option: &str) -> &'static str {
    match option {
        "crc32" => "spar prints no CRC-32 of its PGN",
        "check-mate-pvs" => "spar does not check the mate PVs engines send",
        "show-latency" => "spar's PGN has no latency comments",
        "use-affinity" => "spar does not pin games to CPUs",
        "startup-ms" | "ucinewgame-ms" | "ping-ms" => {
            "spar's engine time-outs are its own (`spar match --stall-timeout`)"
        }
        _ => "spar has no such feature",
    }
}

/// The message for an option the tool does not have, with the one most likely meant.
fn unknown_option(tool: Tool, option: &str) -> String {
    match options::suggest(tool, option) {
        Some(meant) => {
            format!("unknown option -{option}; did you mean -{meant}? (see docs/compat.md)")
        }
        None => format!("unknown option -{option} (see docs/compat.md)"),
    }
}

/// `spar sprt`'s options for checked fastchess `-sprt` bounds (`--elo0=-5`: a negative
/// number stays the option's value).
fn sprt_words(b: &SprtBounds) -> Vec<String> {
    vec![
        format!("--elo0={}", b.elo0),
        format!("--elo1={}", b.elo1),
        format!("--alpha={}", b.alpha),
        format!("--beta={}", b.beta),
        format!("--model={}", b.model),
    ]
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

/// fastchess's `-pgnout file=F [key=value…]`: the file and whether the move comments
/// carry `n=` (`nodes=true`) and `sd=` (`seldepth=true`), or a refusal of what spar's PGN
/// cannot be.
fn fastchess_pgnout(r: &Reader, values: &[String]) -> CliResult<(String, bool, bool)> {
    let o = "pgnout";
    let mut file = None;
    let mut nodes = false;
    let mut seldepth = false;
    for w in values {
        let (k, v) = r.key_value(o, w)?;
        match (k, v) {
            ("file", _) => file = Some(v.to_string()),
            ("notation", "san") | ("append", "true") => {}
            ("nodes", "true" | "false") => nodes = v == "true",
            ("seldepth", "true" | "false") => seldepth = v == "true",
            (
                "nps" | "hashfull" | "tbhits" | "pv" | "timeleft" | "latency" | "min",
                "false",
            ) => {}
            // What OpenBench's client passes: accepted so that spar drops in as its
            // fastchess-ob, with a note on stderr (OpenBench reads stdout only).
            ("match_line", _) => eprintln!(
                "spar: note: fastchess -pgnout {k}={v} has no effect: spar's PGN has no engine-output lines (docs/compat.md)"
            ),
            _ => {
                return r.refuse(
                    o,
                    &format!("{k}={v}: spar's PGN is SAN, appended, with its own move comments"),
                )
            }
        }
    }
    let file = file.ok_or_else(|| {
        CliError::usage("fastchess -pgnout needs file=NAME (spar makes up no file name)")
    })?;
    Ok((file, nodes, seldepth))
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
    /// Games per round, as the tool's PGN `Round` tag counts them (fastchess: 2;
    /// cutechess: `-games`): `:round=N` in the word, when not 2.
    pub games_per_round: u64,
    /// fastchess `-pgnout nodes=true`: `n=` in the PGN's move comments (`:pgn=n`).
    pub pgn_nodes: bool,
    /// fastchess `-pgnout seldepth=true`: `sd=` in the PGN's move comments (`:pgn=sd`;
    /// both: `:pgn=n,sd`).
    pub pgn_seldepth: bool,
    /// cutechess read its openings from an EPD file (`:epd`): its PGN's FEN clocks are
    /// `0 1`.
    pub epd: bool,
}

impl Lines {
    /// The word of the hidden `--game-lines` flag.
    pub fn word(&self) -> String {
        let sprt = self.sprt.map_or(String::new(), |[e0, e1, a, b]| {
            format!(":sprt={e0},{e1},{a},{b}")
        });
        let round = if self.games_per_round == 2 {
            String::new()
        } else {
            format!(":round={}", self.games_per_round)
        };
        format!(
            "{}:{}:rating={}:every={}{}{sprt}{round}{}{}",
            self.tool.name(),
            self.output.name(),
            self.rating_interval,
            self.second_interval,
            if self.shuffled { ":shuffled" } else { "" },
            match (self.pgn_nodes, self.pgn_seldepth) {
                (true, true) => ":pgn=n,sd",
                (true, false) => ":pgn=n",
                (false, true) => ":pgn=sd",
                (false, false) => "",
            },
            if self.epd { ":epd" } else { "" },
        )
    }

    /// The tool's PGN layout (the personality writes it in place of spar's).
    pub fn pgn(&self) -> ToolPgn {
        ToolPgn {
            tool: self.tool,
            games_per_round: self.games_per_round,
            nodes: self.pgn_nodes,
            seldepth: self.pgn_seldepth,
            epd: self.epd,
        }
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
            games_per_round: 2,
            pgn_nodes: false,
            pgn_seldepth: false,
            epd: false,
        };
        for p in parts {
            match p.split_once('=') {
                None if p == "shuffled" => lines.shuffled = true,
                None if p == "epd" => lines.epd = true,
                Some(("pgn", fields)) => {
                    for f in fields.split(',') {
                        match f {
                            "n" => lines.pgn_nodes = true,
                            "sd" => lines.pgn_seldepth = true,
                            _ => return Err(bad()),
                        }
                    }
                }
                Some(("round", n)) => {
                    lines.games_per_round = n.parse().map_err(|_| bad())?;
                    if lines.games_per_round == 0 {
                        return Err(bad());
                    }
                }
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
        assert!(line.contains("--elo0=-5 --elo1=0 --alpha=0.05"), "{line}");
        assert!(line.contains("--recover"), "{line}");
    }

    #[test]
    fn both_tools_check_sprt_bounds_as_spar_sprt_does() {
        let e = "-engine name=a -engine name=b";
        for (tool, extra) in [("fastchess", ""), ("cutechess", "-games 2 -repeat")] {
            let t = |l: &str| {
                let line = format!("{e} {extra} -sprt {l}");
                if tool == "fastchess" {
                    fc(&line)
                } else {
                    cc(&line)
                }
            };
            for (bad, key) in [
                ("elo0=5 elo1=5", "elo0 (5)"),
                ("elo0=5 elo1=0", "elo0 (5)"),
                ("elo0=0 elo1=5 beta=-0.1", "beta (-0.1)"),
                ("elo0=0 elo1=5 alpha=1.5", "alpha (1.5)"),
                ("elo0=0 elo1=5 alpha=0.5 beta=0.5", "alpha + beta"),
                ("elo0=x elo1=5", "elo0=x"),
                ("elo0=1", "elo0= needs elo1="),
            ] {
                let err = t(bad).unwrap_err();
                assert_eq!(err.code, 2, "{tool} {bad}");
                assert!(
                    err.message.starts_with(tool) && err.message.contains(key),
                    "{tool} {bad}: {}",
                    err.message
                );
            }
            assert!(t("elo0=-3 elo1=-1 alpha=0.1 beta=0.2").is_ok(), "{tool}");
        }
        assert!(fc(&format!("{e} -sprt model=nonsense")).is_err());
        assert!(cc(&format!("{e} -games 2 -repeat -sprt model=normalized")).is_err());
    }

    #[test]
    fn fastchess_concurrency_counts_back_from_all_threads() {
        let concurrency = |line: &str| {
            let Translation::Run(argv) = fc(line).unwrap() else {
                panic!()
            };
            let at = argv.iter().position(|w| w == "--concurrency").unwrap();
            argv[at + 1].parse::<usize>().unwrap()
        };
        let e = "-engine name=a -engine name=b -concurrency";
        let all = all_cores();
        assert_eq!(concurrency(&format!("{e} 3")), 3);
        assert_eq!(concurrency(&format!("{e} 0")), all);
        assert_eq!(concurrency(&format!("{e} -1")), (all - 1).max(1));
        assert_eq!(concurrency(&format!("{e} -100000")), 1);
        // cutechess-cli has neither.
        for n in ["0", "-1"] {
            let line = format!("-engine name=a -engine name=b -games 2 -repeat -concurrency {n}");
            refused(cc(&line), "cutechess", &line);
        }
    }

    #[test]
    fn a_misspelt_option_is_answered_with_the_one_meant() {
        let e = fc("-engine name=a -engine name=b -concurency 2").unwrap_err();
        assert!(
            e.message
                .contains("unknown option -concurency; did you mean -concurrency?"),
            "{}",
            e.message
        );
        let e = cc("-engine name=a -engine name=b -rouns 2").unwrap_err();
        assert!(e.message.contains("did you mean -rounds?"), "{}", e.message);
        let e = fc("-engine name=a -engine name=b -bogus").unwrap_err();
        assert!(!e.message.contains("did you mean"), "{}", e.message);
    }

    /// Every option the suggestions know is one the translator knows (mapped or refused
    /// with its reason), never an unknown one.
    #[test]
    fn every_known_option_is_read() {
        for (tool, run) in [
            (Tool::Fastchess, fc as fn(&str) -> CliResult<Translation>),
            (Tool::Cutechess, cc),
        ] {
            for o in options::known(tool) {
                if let Err(e) = run(&format!("-{o}")) {
                    assert!(!e.message.contains("unknown option"), "{o}: {}", e.message);
                }
            }
        }
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
                    --concurrency 1 --output cutechess --no-recover --game-lines cutechess:cutechess:rating=0:every=0:epd";
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
            line.ends_with(
                "--game-lines cutechess:cutechess:rating=0:every=0:sprt=0,5,0.05,0.1:round=200"
            ),
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
    fn lines_words_round_trip() {
        let l = Lines {
            tool: Tool::Cutechess,
            output: Tool::Cutechess,
            rating_interval: 4,
            second_interval: 0,
            shuffled: true,
            sprt: Some([0.0, 5.0, 0.05, 0.1]),
            games_per_round: 6,
            pgn_nodes: true,
            pgn_seldepth: true,
            epd: true,
        };
        assert_eq!(Lines::parse(&l.word()).unwrap(), l);
        assert!(Lines::parse("cutechess:round=0").is_err());
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
