//! A tool's options translated into `spar match`/`spar sprt` arguments: each option mapped,
//! honoured without effect, or refused with its reason (docs/compat.md), the relative
//! `cmd=` of an engine found in its `dir=`, and the hidden `--game-lines` word that makes
//! `spar match` print the tool's lines.

use super::command_line::{groups, Reader};
use super::game_lines::Lines;
use super::options;
use super::Tool;
use crate::cli::SprtBounds;
use crate::error::{CliError, CliResult};

/// What a tool's command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Translation {
    /// `-version`: print the tool's version line and exit.
    Version,
    /// Run spar with these arguments (without the program name): `match …` or `sprt …`.
    Run(Vec<String>),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::all_cores;

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
}
