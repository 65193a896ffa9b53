//! The fastchess personality: `spar fastchess ARGS…`, or spar run under a name that starts
//! with `fastchess` (e.g. a symlink `fastchess-ob`), reads fastchess's single-dash command
//! line and turns it into the argv of `spar match` or `spar sprt` (docs/compat.md lists
//! every option: mapped, honoured without effect, or refused).

use engine::types::GameResult;

use crate::error::{CliError, CliResult};
use crate::play::game::{PlayedGame, Termination};
use crate::play::schedule::PairOutcome;

/// What a fastchess command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Translation {
    /// `-version`: print [`version_line`] and exit.
    Version,
    /// Run spar with these arguments (without the program name): `match …` or `sprt …`.
    Run(Vec<String>),
}

/// The version line of the personality: fastchess's own format (`fastchess X.Y.Z`), so that
/// a tool checking for fastchess ≥ 1.8.1 accepts it, followed by the spar build.
pub fn version_line() -> String {
    format!(
        "fastchess 1.8.1 (spar {} speaking fastchess; see docs/compat.md)",
        env!("CARGO_PKG_VERSION")
    )
}

/// Whether a program name (argv[0]) selects the personality: its file name starts with
/// `fastchess`.
pub fn is_personality(argv0: &str) -> bool {
    std::path::Path::new(argv0)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("fastchess"))
}

fn refuse<T>(option: &str, why: &str) -> CliResult<T> {
    Err(CliError::usage(format!(
        "fastchess option -{option} is not supported by spar: {why} (see docs/compat.md)"
    )))
}

/// Splits `key=value`, refusing a word without `=`.
fn key_value<'a>(option: &str, word: &'a str) -> CliResult<(&'a str, &'a str)> {
    word.split_once('=').ok_or_else(|| {
        CliError::usage(format!(
            "fastchess -{option}: '{word}' is not key=value (see docs/compat.md)"
        ))
    })
}

/// Exactly one value of `-option`.
fn single<'a>(option: &str, values: &'a [String]) -> CliResult<&'a str> {
    match values {
        [v] => Ok(v),
        _ => Err(CliError::usage(format!(
            "fastchess -{option} takes one value, got {}",
            values.len()
        ))),
    }
}

/// No value for a flag.
fn flag(option: &str, values: &[String]) -> CliResult {
    if values.is_empty() {
        Ok(())
    } else {
        Err(CliError::usage(format!(
            "fastchess -{option} takes no value, got '{}'",
            values.join(" ")
        )))
    }
}

fn number<T: std::str::FromStr>(option: &str, text: &str) -> CliResult<T> {
    text.parse().map_err(|_| {
        CliError::usage(format!(
            "fastchess -{option}: '{text}' is not a valid number"
        ))
    })
}

/// Engine words of `-engine`/`-each`: fastchess's keys in spar's words (`plies=` is
/// `depth=`, `restart=off` is what spar does anyway); the rest pass through to spar's checks.
fn engine_words(option: &str, values: &[String]) -> CliResult<Vec<String>> {
    let mut words = Vec::new();
    for w in values {
        let (k, v) = key_value(option, w)?;
        match k {
            "plies" => words.push(format!("depth={v}")),
            "restart" if v == "off" => {}
            "restart" => {
                return refuse(
                    option,
                    "restart=on: spar keeps one engine process per worker and sends ucinewgame",
                )
            }
            _ => words.push(w.clone()),
        }
    }
    Ok(words)
}

/// Translates fastchess's arguments (after the program name).
pub fn translate(args: &[String]) -> CliResult<Translation> {
    // Group the words: an option (one or two leading dashes, not a number) and its values.
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
            return Err(CliError::usage(format!(
                "fastchess: '{a}' comes before any option (options start with '-')"
            )));
        }
    }
    if groups.iter().any(|(o, _)| o == "version" || o == "v") {
        return Ok(Translation::Version);
    }
    let mut out: Vec<String> = Vec::new();
    let mut engines = 0;
    // fastchess plays one game at a time unless told otherwise.
    let mut concurrency: usize = 1;
    let mut rounds: u64 = 2;
    let mut games: u64 = 2;
    let mut sprt: Option<Vec<String>> = None;
    let mut recover = false;
    let mut output = "fastchess".to_string();
    let mut tb: Option<String> = None;
    let mut tb_words: Vec<String> = Vec::new();
    let mut openings = false;
    let mut fischer = false;
    let push = |out: &mut Vec<String>, flag: &str, values: Vec<String>| {
        out.push(flag.to_string());
        out.extend(values);
    };
    for (option, values) in &groups {
        let o = option.as_str();
        match o {
            "engine" => {
                engines += 1;
                push(&mut out, "--engine", engine_words(o, values)?);
            }
            "each" => push(&mut out, "--each", engine_words(o, values)?),
            "concurrency" => {
                concurrency = number(o, single(o, values)?)?;
            }
            "force-concurrency" => flag(o, values)?,
            "rounds" => rounds = number(o, single(o, values)?)?,
            "games" => games = number(o, single(o, values)?)?,
            "repeat" => {
                if !values.is_empty() {
                    games = number(o, single(o, values)?)?;
                } else {
                    games = 2;
                }
            }
            "openings" => {
                let mut file = None;
                let mut words = Vec::new();
                let mut order = "sequential".to_string();
                for w in values {
                    let (k, v) = key_value(o, w)?;
                    match k {
                        "file" => file = Some(v.to_string()),
                        "format" | "start" | "plies" => words.push(w.clone()),
                        "order" => order = v.to_string(),
                        "policy" if v == "default" || v == "round" => {}
                        "policy" => {
                            return refuse(
                                o,
                                &format!("policy={v}: spar gives pair k opening k (policy=round)"),
                            )
                        }
                        _ => {
                            return Err(CliError::usage(format!(
                                "fastchess -openings: unknown key '{k}' (file=, format=, order=, start=, plies=, policy=)"
                            )))
                        }
                    }
                }
                let file =
                    file.ok_or_else(|| CliError::usage("fastchess -openings needs file=NAME"))?;
                let mut book = vec![file, format!("order={order}")];
                book.extend(words);
                push(&mut out, "--book", book);
                openings = true;
            }
            "srand" => {
                let s: u64 = number(o, single(o, values)?)?;
                push(&mut out, "--seed", vec![s.to_string()]);
            }
            "sprt" => {
                let mut words = Vec::new();
                for w in values {
                    let (k, v) = key_value(o, w)?;
                    match k {
                        "elo0" | "elo1" | "alpha" | "beta" | "model" => {
                            words.push(format!("--{k}"));
                            words.push(v.to_string());
                        }
                        _ => {
                            return Err(CliError::usage(format!(
                                "fastchess -sprt: unknown key '{k}' (elo0=, elo1=, alpha=, beta=, model=)"
                            )))
                        }
                    }
                }
                sprt = Some(words);
            }
            "resign" => push(&mut out, "--resign", values.clone()),
            "draw" => push(&mut out, "--draw", values.clone()),
            "maxmoves" => {
                let n: u32 = number(o, single(o, values)?)?;
                push(&mut out, "--maxmoves", vec![n.to_string()]);
            }
            "recover" => {
                flag(o, values)?;
                recover = true;
            }
            "variant" => match single(o, values)? {
                "standard" => {}
                "fischerandom" => fischer = true,
                v => {
                    return Err(CliError::usage(format!(
                        "fastchess -variant: '{v}' is not standard or fischerandom"
                    )))
                }
            },
            "pgnout" => {
                let mut file = None;
                for w in values {
                    let (k, v) = key_value(o, w)?;
                    match (k, v) {
                        ("file", _) => file = Some(v.to_string()),
                        ("notation", "san") | ("append", "true") => {}
                        (
                            "nodes" | "seldepth" | "nps" | "hashfull" | "tbhits" | "pv"
                            | "timeleft" | "latency" | "min",
                            "false",
                        ) => {}
                        ("match_line", _) => {
                            return refuse(o, "match_line=: spar's PGN has no engine-output lines")
                        }
                        _ => {
                            return refuse(
                                o,
                                &format!(
                                "{k}={v}: spar's PGN is SAN, appended, with its own move comments"
                            ),
                            )
                        }
                    }
                }
                let file = file.ok_or_else(|| {
                    CliError::usage(
                        "fastchess -pgnout needs file=NAME (spar makes up no file name)",
                    )
                })?;
                push(&mut out, "--pgnout", vec![file]);
            }
            "tb" => tb = Some(single(o, values)?.to_string()),
            "tbpieces" => tb_words.push(format!("pieces={}", single(o, values)?)),
            "tbadjudicate" => tb_words.push(format!(
                "adjudicate={}",
                single(o, values)?.to_ascii_lowercase()
            )),
            "tbignore50" => {
                flag(o, values)?;
                tb_words.push("ignore50=true".to_string());
            }
            "output" => {
                for w in values {
                    match key_value(o, w)? {
                        ("format", v @ ("fastchess" | "cutechess")) => output = v.to_string(),
                        _ => {
                            return Err(CliError::usage(format!(
                            "fastchess -output: '{w}' is not format=fastchess or format=cutechess"
                        )))
                        }
                    }
                }
            }
            "tournament" => match single(o, values)? {
                "roundrobin" => {}
                v => return refuse(o, &format!("{v}: spar plays two engines, one pairing")),
            },
            "wait" => match single(o, values)? {
                "0" => {}
                _ => return refuse(o, "spar starts the next game at once"),
            },
            "ratinginterval" | "scoreinterval" => {
                let _: u64 = number(o, single(o, values)?)?;
            }
            "autosaveinterval" => {
                let _: u64 = number(o, single(o, values)?)?;
            }
            "help" => return refuse(o, "run `spar match --help`, or read docs/compat.md"),
            "noswap" | "reverse" => {
                return refuse(
                    o,
                    "spar plays every opening once with each colour, in pairs",
                )
            }
            "log" => {
                return refuse(
                    o,
                    "spar writes no log file; use --results FILE with `spar match`",
                )
            }
            "config" => {
                return refuse(
                    o,
                    "spar reads no JSON config; give the options on the command line",
                )
            }
            "epdout" => return refuse(o, "spar writes no EPD of final positions"),
            "report" => return refuse(o, "spar's summary always shows the pentanomial counts"),
            "event" | "site" => return refuse(o, "spar writes its own PGN Event and Site tags"),
            "seeds" => return refuse(o, "spar plays two engines, no gauntlet"),
            "quick" => return refuse(o, "give -engine, -each, -rounds and -openings instead"),
            "testEnv" | "strict" | "debug" | "crc32" | "check-mate-pvs" | "show-latency"
            | "use-affinity" | "startup-ms" | "ucinewgame-ms" | "ping-ms" | "compliance" => {
                return refuse(o, "spar has no such feature")
            }
            _ => {
                return Err(CliError::usage(format!(
                    "fastchess: unknown option -{o} (see docs/compat.md)"
                )))
            }
        }
    }
    if games != 2 {
        return refuse(
            "games",
            &format!(
                "{games}: spar plays every opening once with each colour, so -games must be 2 (or -repeat)"
            ),
        );
    }
    if rounds == 0 {
        return Err(CliError::usage("fastchess -rounds must be at least 1"));
    }
    if engines != 2 {
        return Err(CliError::usage(format!(
            "fastchess: spar plays two engines, got {engines} -engine"
        )));
    }
    if fischer && !openings {
        return Err(CliError::usage(
            "fastchess -variant fischerandom needs -openings with Chess960 positions (spar's built-in book is standard chess)",
        ));
    }
    if let Some(dir) = tb {
        let mut words = vec![dir];
        words.extend(tb_words);
        push(&mut out, "--tb", words);
    } else if !tb_words.is_empty() {
        return Err(CliError::usage(
            "fastchess -tbpieces/-tbadjudicate/-tbignore50 need -tb DIR",
        ));
    }
    let total = rounds
        .checked_mul(games)
        .ok_or_else(|| CliError::usage("fastchess -rounds × -games is too large"))?;
    let mut argv = vec![if sprt.is_some() { "sprt" } else { "match" }.to_string()];
    argv.extend(out);
    argv.extend(["--games".to_string(), total.to_string()]);
    argv.extend(["--concurrency".to_string(), concurrency.to_string()]);
    argv.extend(["--output".to_string(), output]);
    argv.push(if recover { "--recover" } else { "--no-recover" }.to_string());
    argv.push("--game-lines".to_string());
    if let Some(words) = sprt {
        argv.extend(words);
    }
    Ok(Translation::Run(argv))
}

/// The reason of a game's end in fastchess's words (`White mates`, `Draw by 3-fold
/// repetition`, `Black wins by adjudication`, `White loses on time`, …).
pub fn reason(game: &PlayedGame) -> String {
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
        Termination::DrawAdjudication | Termination::MaxMoves => "Draw by adjudication".to_string(),
        // Already in fastchess's words (`… by adjudication: SyzygyTB`).
        Termination::TablebaseAdjudication => game.reason.clone(),
        Termination::TimeForfeit => format!("{loser} loses on time"),
        Termination::Crash => format!("{loser} disconnects"),
        Termination::Stall => format!("{loser}'s connection stalls"),
        Termination::IllegalMove => format!("{loser} makes an illegal move"),
    }
}

/// fastchess's lines for the two games of a pair, numbered as fastchess numbers them (round
/// k + 1 plays games 2k + 1 and 2k + 2, the first with `names[0]` as White):
/// `Started game N of M (A vs B)` and `Finished game N (A vs B): RESULT {reason}`.
pub fn game_lines(pair: &PairOutcome, names: [&str; 2], total: Option<u64>) -> Vec<String> {
    let mut lines = Vec::new();
    for (g, game) in pair.games.iter().enumerate() {
        let n = 2 * pair.pair + g as u64 + 1;
        let (white, black) = if g == 0 {
            (names[0], names[1])
        } else {
            (names[1], names[0])
        };
        let of = total.map_or_else(|| "?".to_string(), |t| t.to_string());
        lines.push(format!("Started game {n} of {of} ({white} vs {black})"));
        lines.push(format!(
            "Finished game {n} ({white} vs {black}): {} {{{}}}",
            game.outcome.pgn(),
            reason(game)
        ));
    }
    lines
}

/// Prints the version line, or hands the translated argv to `run` (spar's own parser and
/// commands).
pub fn run(args: &[String], run: impl FnOnce(Vec<String>) -> CliResult) -> CliResult {
    match translate(args)? {
        Translation::Version => {
            println!("{}", version_line());
            Ok(())
        }
        Translation::Run(argv) => run(argv),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(line: &str) -> CliResult<Translation> {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        translate(&args)
    }

    #[test]
    fn a_match_line_becomes_spar_match() {
        let got =
            t("-engine name=a plies=3 -engine name=b -each nodes=100 -rounds 3 -repeat -srand 5")
                .unwrap();
        let want = "match --engine name=a depth=3 --engine name=b --each nodes=100 --seed 5 \
                    --games 6 --concurrency 1 --output fastchess --no-recover --game-lines";
        assert_eq!(
            got,
            Translation::Run(want.split_whitespace().map(String::from).collect())
        );
    }

    #[test]
    fn sprt_and_tb_map() {
        let Translation::Run(argv) = t(
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
        assert_eq!(t("-version").unwrap(), Translation::Version);
        assert_eq!(t("--version").unwrap(), Translation::Version);
        assert!(version_line().starts_with("fastchess 1.8.1 "));
        assert!(is_personality("/usr/bin/fastchess-ob"));
        assert!(is_personality("fastchess"));
        assert!(!is_personality("/usr/bin/spar"));
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
            assert_eq!(reason(&game(outcome, termination)), want);
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
            let e = t(line).unwrap_err();
            assert_eq!(e.code, 2, "{line}");
            assert!(!e.message.contains('\n'), "{line}");
        }
    }
}
