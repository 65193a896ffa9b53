//! The UCI protocol text: `position`/`go` commands, `option` and `info` lines, `bestmove`.

use std::time::Duration;

use engine::position::{Position, STARTPOS_FEN};
use engine::search::{Limits, Score};
use engine::types::Move;

use crate::engines::player::{MoveReply, PlayerError};

/// An option the engine announced in its `uci` answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UciOption {
    /// Name, as the engine spells it (may contain spaces).
    pub name: String,
    /// Type: `check`, `spin`, `combo`, `button` or `string`.
    pub kind: String,
    /// Default value, if announced.
    pub default: Option<String>,
    /// `min` of a `spin`, if announced.
    pub min: Option<i64>,
    /// `max` of a `spin`, if announced.
    pub max: Option<i64>,
}

/// The `position` command: `position startpos …` for the standard start, else `position fen …`.
pub fn position_command(start_fen: &str, moves: &[Move], chess960: bool) -> String {
    let is_start = start_fen
        .split_whitespace()
        .eq(STARTPOS_FEN.split_whitespace());
    let mut s = if is_start {
        "position startpos".to_string()
    } else {
        format!("position fen {}", start_fen.trim())
    };
    if !moves.is_empty() {
        s.push_str(" moves");
        for m in moves {
            s.push(' ');
            s.push_str(&m.to_uci(chess960));
        }
    }
    s
}

/// The `go` command for the limits: clocks and `movestogo` in milliseconds, `nodes`, `depth`,
/// `movetime`, `infinite`.
pub fn go_command(limits: &Limits) -> String {
    let mut s = "go".to_string();
    let ms = |d: Duration| d.as_millis();
    for (key, value) in [
        ("wtime", limits.wtime),
        ("btime", limits.btime),
        ("winc", limits.winc),
        ("binc", limits.binc),
    ] {
        if let Some(v) = value {
            s.push_str(&format!(" {key} {}", ms(v)));
        }
    }
    if let Some(m) = limits.movestogo {
        s.push_str(&format!(" movestogo {m}"));
    }
    if let Some(n) = limits.nodes {
        s.push_str(&format!(" nodes {n}"));
    }
    if let Some(d) = limits.depth {
        s.push_str(&format!(" depth {d}"));
    }
    if let Some(t) = limits.movetime {
        s.push_str(&format!(" movetime {}", ms(t).max(1)));
    }
    if limits.infinite {
        s.push_str(" infinite");
    }
    s
}

/// Parses an `option name <name> type <type> [default <value>] …` line.
pub(super) fn parse_option(line: &str) -> Option<UciOption> {
    let rest = line
        .trim()
        .strip_prefix("option")?
        .trim_start()
        .strip_prefix("name ")?;
    let (name, after) = match rest.find(" type ") {
        Some(i) => (&rest[..i], &rest[i + " type ".len()..]),
        None => (rest, ""),
    };
    let mut words = after.split_whitespace();
    let kind = words.next().unwrap_or("").to_string();
    let default = after.find(" default").map(|i| {
        let v = after[i + " default".len()..].trim_start();
        // The default ends where the next keyword starts (spin: min/max; combo: var).
        let end = [" min ", " max ", " var "]
            .iter()
            .filter_map(|k| v.find(k))
            .min()
            .unwrap_or(v.len());
        v[..end].trim().to_string()
    });
    let bound = |key: &str| {
        let mut w = after.split_whitespace();
        w.position(|x| x == key)?;
        w.next()?.parse::<i64>().ok()
    };
    let (min, max) = if kind == "spin" {
        (bound("min"), bound("max"))
    } else {
        (None, None)
    };
    let name = name.trim();
    (!name.is_empty()).then(|| UciOption {
        name: name.to_string(),
        kind,
        default,
        min,
        max,
    })
}

/// Score, depth, selective depth and nodes from the `info` lines of one search.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct SearchInfo {
    pub(super) score: Option<Score>,
    /// Whether `score` is exact (not a `lowerbound`/`upperbound`).
    pub(super) exact: bool,
    pub(super) depth: i32,
    pub(super) seldepth: i32,
    pub(super) nodes: u64,
}

impl SearchInfo {
    /// Digests one line; returns the move text of a `bestmove` line.
    pub(super) fn take_line(&mut self, line: &str) -> Option<String> {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("info") => {
                self.parse_info(words);
                None
            }
            Some("bestmove") => Some(words.next().unwrap_or("(none)").to_string()),
            _ => None,
        }
    }

    /// Keeps the last depth, selective depth, nodes and score seen. A bound score (`lowerbound`/`upperbound`)
    /// is kept only while no exact score has been seen.
    pub(super) fn parse_info<'a>(&mut self, words: impl Iterator<Item = &'a str>) {
        let mut words = words.peekable();
        while let Some(word) = words.next() {
            match word {
                "depth" => {
                    if let Some(d) = words.next().and_then(|v| v.parse().ok()) {
                        self.depth = d;
                    }
                }
                "seldepth" => {
                    if let Some(d) = words.next().and_then(|v| v.parse().ok()) {
                        self.seldepth = d;
                    }
                }
                "nodes" => {
                    if let Some(n) = words.next().and_then(|v| v.parse().ok()) {
                        self.nodes = n;
                    }
                }
                "score" => {
                    let kind = words.next();
                    let value = words.next().and_then(|v| v.parse::<i32>().ok());
                    let score = match (kind, value) {
                        (Some("cp"), Some(v)) => Some(Score::Cp(v)),
                        (Some("mate"), Some(v)) => Some(Score::Mate(v)),
                        _ => None,
                    };
                    let bound = matches!(words.peek(), Some(&"lowerbound") | Some(&"upperbound"));
                    if bound {
                        words.next();
                    }
                    if let Some(score) = score {
                        if !bound {
                            self.score = Some(score);
                            self.exact = true;
                        } else if !self.exact {
                            self.score = Some(score);
                        }
                    }
                }
                // Everything after these is free text or moves.
                "string" | "pv" | "refutation" | "currline" => break,
                _ => {}
            }
        }
    }
}

pub(super) fn answer_to_reply(
    mv: &str,
    position: &Position,
    info: SearchInfo,
) -> Result<MoveReply, PlayerError> {
    if mv == "(none)" || mv == "0000" {
        return Err(PlayerError::IllegalMove(format!("bestmove {mv}")));
    }
    match position.parse_uci_move(mv) {
        Some(m) => Ok(MoveReply {
            mv: m,
            score: info.score,
            depth: info.depth,
            seldepth: info.seldepth,
            nodes: info.nodes,
        }),
        None => Err(PlayerError::IllegalMove(mv.to_string())),
    }
}
