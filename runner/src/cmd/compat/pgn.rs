//! The PGN a personality writes: fastchess's (its `pgn_builder.cpp` and `pgn_gen.hpp` at
//! 1.8.1) or cutechess-cli's (`PgnGame::write`, `ChessGame`'s move comments at 1.5.1)
//! tags, move comments and layout, where `spar match` writes its own (data::pgn). The
//! golden fixtures in runner/tests/data/compat/ pin both.
//!
//! What spar cannot reproduce: fastchess's `ECO`/`Opening` tags (from its table of named
//! openings; spar writes none), and the clock values (`Date`, `GameStartTime`,
//! `GameEndTime` are spar's, in UTC, for the game's end as spar knows it).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use data::pgn::{pgn_date, result_text};
use data::san::to_san;
use engine::position::{Position, STARTPOS_FEN};
use engine::search::Score;
use engine::types::Color;

use super::game_lines::Lines;
use super::report::reason;
use super::Tool;
use crate::engines::variant::{MoveLimits, Variant};
use crate::play::game::{PlayedGame, Termination};
use crate::play::schedule::PairOutcome;

/// How a personality's PGN is laid out, as the hidden `--game-lines` word carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolPgn {
    /// fastchess's or cutechess-cli's PGN.
    pub tool: Tool,
    /// Games per round (the `Round` tag counts rounds): 2 for fastchess, cutechess's `-games`.
    pub games_per_round: u64,
    /// fastchess `-pgnout nodes=true`: `n=` in the move comments.
    pub nodes: bool,
    /// fastchess `-pgnout seldepth=true`: `sd=` in the move comments.
    pub seldepth: bool,
    /// cutechess with an EPD book: the FEN's clocks restart at `0 1` (cutechess reads an
    /// EPD's four fields only).
    pub epd: bool,
}

impl Lines {
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
}

/// One game as a tool's PGN tells it: the game, its round, its engines and its times.
struct OneGame<'a> {
    game: &'a PlayedGame,
    round: u64,
    white: &'a Variant,
    black: &'a Variant,
    started: SystemTime,
    ended: SystemTime,
}

impl OneGame<'_> {
    /// The seven tag roster: `event`, an unknown site, the date the game started, its
    /// round, its engines and `result`.
    fn roster(&self, event: &str, result: &str) -> Vec<(&'static str, String)> {
        vec![
            ("Event", event.to_string()),
            ("Site", "?".to_string()),
            ("Date", pgn_date(unix_seconds(self.started))),
            ("Round", self.round.to_string()),
            ("White", self.white.name.clone()),
            ("Black", self.black.name.clone()),
            ("Result", result.to_string()),
        ]
    }
}

/// The time control tags: one `TimeControl` when both engines have the same, else one for
/// each colour.
fn time_controls(tags: &mut Vec<(&str, String)>, white: String, black: String) {
    if white == black {
        tags.push(("TimeControl", white));
    } else {
        tags.push(("WhiteTimeControl", white));
        tags.push(("BlackTimeControl", black));
    }
}

impl ToolPgn {
    /// One game of a pair (`g` 0 or 1) as the tool writes it, ending with a blank line;
    /// `ended` is when the game ended.
    pub fn format(
        &self,
        pair: &PairOutcome,
        g: usize,
        white: &Variant,
        black: &Variant,
        ended: SystemTime,
    ) -> Result<String, String> {
        let game = &pair.games[g];
        let index = 2 * pair.pair + g as u64;
        let round = index / self.games_per_round.max(1) + 1;
        let started = ended.checked_sub(game.duration).unwrap_or(ended);
        let one = OneGame {
            game,
            round,
            white,
            black,
            started,
            ended,
        };
        match self.tool {
            Tool::Fastchess => self.fastchess(&one),
            Tool::Cutechess => self.cutechess(&one),
        }
    }

    fn fastchess(&self, one: &OneGame) -> Result<String, String> {
        let game = one.game;
        let mut pos = start_position(game)?;
        let fen = pos.to_fen();
        let result = result_text(Some(game.outcome));
        let mut tags = one.roster("Fastchess Tournament", result);
        if fen != STARTPOS_FEN || game.chess960 {
            tags.push(("SetUp", "1".into()));
            tags.push(("FEN", fen));
        }
        if game.chess960 {
            tags.push(("Variant", "Chess960".into()));
        }
        tags.push(("GameDuration", hh_mm_ss(game.duration)));
        tags.push(("GameStartTime", iso_time(one.started)));
        tags.push(("GameEndTime", iso_time(one.ended)));
        tags.push(("PlyCount", game.moves.len().to_string()));
        tags.push((
            "Termination",
            fastchess_termination(game.termination).into(),
        ));
        time_controls(
            &mut tags,
            fastchess_tc(&one.white.limits),
            fastchess_tc(&one.black.limits),
        );
        let mut out = String::new();
        for (name, value) in tags.iter().filter(|(_, v)| !v.is_empty()) {
            out.push_str(&format!("[{name} \"{value}\"]\n"));
        }
        out.push('\n');

        // pgn_gen.hpp: each move with its number and comment is one unit, wrapped at 80
        // columns; Black's move gets a number only as the first move.
        let why = reason(Tool::Fastchess, game);
        let mut line = 0;
        let mut append = |out: &mut String, text: &str| {
            if line > 0 && line + text.len() + 1 > 80 {
                out.push('\n');
                line = 0;
            }
            if line > 0 {
                out.push(' ');
                line += 1;
            }
            out.push_str(text);
            line += text.len();
        };
        for (i, m) in game.moves.iter().enumerate() {
            let san = san_of(&pos, m.mv, i)?;
            let mut unit = if pos.side_to_move() == Color::White {
                format!("{}. {san}", pos.fullmove_number())
            } else if i == 0 {
                format!("{}... {san}", pos.fullmove_number())
            } else {
                san
            };
            let comment = if m.book {
                "book".to_string()
            } else {
                let (score, depth, seldepth, nodes) = match m.score {
                    Some(s) => (fastchess_score(s), m.depth.max(0), m.seldepth, m.nodes),
                    // fastchess's move data without an engine score: `0.00`, depth 0.
                    None => ("0.00".to_string(), 0, 0, 0),
                };
                let mut parts = vec![format!("{score}/{depth} {}", seconds_3(m.time))];
                if self.nodes {
                    parts.push(format!("n={nodes}"));
                }
                if self.seldepth {
                    parts.push(format!("sd={seldepth}"));
                }
                if i + 1 == game.moves.len() && !why.is_empty() {
                    parts.push(why.clone());
                }
                parts.join(", ")
            };
            unit.push_str(&format!(" {{{comment}}}"));
            append(&mut out, &unit);
            pos.play_mut(m.mv);
        }
        append(&mut out, result);
        out.push_str("\n\n");
        Ok(out)
    }

    fn cutechess(&self, one: &OneGame) -> Result<String, String> {
        let game = one.game;
        let mut pos = start_position(game)?;
        let mut fen = pos.to_fen();
        if self.epd {
            let fields: Vec<&str> = fen.split(' ').take(4).collect();
            fen = format!("{} 0 1", fields.join(" "));
        }
        let result = result_text(Some(game.outcome));
        let mut out = String::new();
        let roster = one.roster("?", result);
        // The other tags in alphabetical order (cutechess keeps them in a QMap).
        let mut rest: Vec<(&str, String)> = Vec::new();
        if fen != STARTPOS_FEN || game.chess960 {
            rest.push(("FEN", fen));
            rest.push(("SetUp", "1".into()));
        }
        if game.chess960 {
            rest.push(("Variant", "fischerandom".into()));
        }
        rest.push(("GameDuration", hh_mm_ss(game.duration)));
        rest.push(("GameEndTime", cutechess_time(one.ended)));
        rest.push(("GameStartTime", cutechess_time(one.started)));
        rest.push(("PlyCount", game.moves.len().to_string()));
        if let Some(t) = cutechess_termination(game.termination) {
            rest.push(("Termination", t.into()));
        }
        time_controls(
            &mut rest,
            cutechess_tc(&one.white.limits),
            cutechess_tc(&one.black.limits),
        );
        rest.sort_by(|a, b| a.0.cmp(b.0));
        for (name, value) in roster.iter().chain(rest.iter()) {
            out.push_str(&format!("[{name} \"{value}\"]\n"));
        }

        // PgnGame::write: moves numbered from 1 whatever the FEN says, a new line before
        // a unit that would reach column 80.
        let why = reason(Tool::Cutechess, game);
        let mut line = 0;
        let mut number = 0;
        for (i, m) in game.moves.iter().enumerate() {
            let san = san_of(&pos, m.mv, i)?;
            let mut unit = if i == 0 && pos.side_to_move() == Color::Black {
                number += 1;
                format!("{number}... {san}")
            } else if pos.side_to_move() == Color::White {
                number += 1;
                format!("{number}. {san}")
            } else {
                san
            };
            let mut comment = if m.book {
                "book".to_string()
            } else {
                // ChessGame's evalString: nothing for an empty evaluation (MoveEvaluation::
                // isEmpty: no score, depth or nodes and under half a second).
                let depth = m.depth.max(0);
                let empty = m.score.is_none()
                    && depth == 0
                    && m.nodes == 0
                    && m.time < Duration::from_millis(500);
                if empty {
                    String::new()
                } else {
                    let mut c = m.score.map_or(String::new(), |s| cutechess_score(s, depth));
                    if depth > 0 {
                        c.push_str(&format!("/{depth} "));
                    }
                    c + &cutechess_seconds(m.time)
                }
            };
            if i + 1 == game.moves.len() && !why.is_empty() {
                if !comment.is_empty() {
                    comment.push_str(", ");
                }
                comment.push_str(&why);
            }
            if !comment.is_empty() {
                unit.push_str(&format!(" {{{comment}}}"));
            }
            if line == 0 || line + unit.len() >= 80 {
                out.push('\n');
                out.push_str(&unit);
                line = unit.len();
            } else {
                out.push(' ');
                out.push_str(&unit);
                line += unit.len() + 1;
            }
            pos.play_mut(m.mv);
        }
        if line + result.len() >= 80 {
            out.push('\n');
        } else {
            out.push(' ');
        }
        out.push_str(result);
        out.push_str("\n\n");
        Ok(out)
    }
}

fn start_position(game: &PlayedGame) -> Result<Position, String> {
    let mut pos = Position::from_fen(&game.start_fen)
        .map_err(|e| format!("game record has a bad start position: {e}"))?;
    if game.chess960 {
        pos.set_chess960(true);
    }
    Ok(pos)
}

fn san_of(pos: &Position, mv: engine::types::Move, ply: usize) -> Result<String, String> {
    if !pos.is_legal(mv) {
        return Err(format!(
            "game record move {} ({}) is illegal in {}",
            ply + 1,
            mv.to_uci(pos.is_chess960()),
            pos.to_fen()
        ));
    }
    Ok(to_san(pos, mv))
}

fn unix_seconds(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// `HH:MM:SS` (fastchess's and cutechess's `GameDuration`).
fn hh_mm_ss(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// The UTC clock time of `t`: `YYYY-MM-DD` and `HH:MM:SS`.
fn date_and_clock(t: SystemTime) -> (String, String) {
    let secs = unix_seconds(t);
    let date = pgn_date(secs).replace('.', "-");
    let day = secs % 86_400;
    (
        date,
        format!("{:02}:{:02}:{:02}", day / 3600, day / 60 % 60, day % 60),
    )
}

/// fastchess's `GameStartTime`/`GameEndTime`: `2026-11-24T06:50:00 +0000` (spar: UTC).
fn iso_time(t: SystemTime) -> String {
    let (date, clock) = date_and_clock(t);
    format!("{date}T{clock} +0000")
}

/// cutechess's `GameStartTime`/`GameEndTime`: `2026-11-24T06:50:00.000 UTC`.
fn cutechess_time(t: SystemTime) -> String {
    let (date, clock) = date_and_clock(t);
    let ms = t
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_millis());
    format!("{date}T{clock}.{ms:03} UTC")
}

/// fastchess's score text: centipawns as `+0.25`, `-1.05`, `0.00` (no sign at zero); a
/// mate in plies (`+M3` for the engine's mate in 2 moves, `-M2` for mated in 1).
pub fn fastchess_score(score: Score) -> String {
    match score {
        Score::Cp(cp) => {
            let sign = match cp.signum() {
                1 => "+",
                -1 => "-",
                _ => "",
            };
            let abs = cp.unsigned_abs();
            format!("{sign}{}.{:02}", abs / 100, abs % 100)
        }
        Score::Mate(n) if n > 0 => format!("+M{}", 2 * i64::from(n) - 1),
        Score::Mate(n) => format!("-M{}", -2 * i64::from(n)),
    }
}

/// cutechess's score text (MoveEvaluation::scoreText): as fastchess's, but nothing at
/// depth 0.
fn cutechess_score(score: Score, depth: i32) -> String {
    if depth > 0 {
        fastchess_score(score)
    } else {
        String::new()
    }
}

/// `0.123s` (fastchess's formatTime).
fn seconds_3(d: Duration) -> String {
    let ms = d.as_millis();
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}

/// cutechess's move time: `0s`, `0.012s` under 0.1 s, `0.12s` under 1 s, `1.2s` under
/// 10 s, `12s` from there.
fn cutechess_seconds(d: Duration) -> String {
    let ms = d.as_millis() as u64;
    let precision = match ms {
        0 => return "0s".to_string(),
        1..=99 => 3,
        100..=999 => 2,
        1000..=9999 => 1,
        _ => 0,
    };
    format!("{:.*}s", precision, ms as f64 / 1000.0)
}

/// fastchess's `Termination` (convertMatchTermination).
fn fastchess_termination(t: Termination) -> &'static str {
    match t {
        Termination::Stall => "abandoned",
        other => other.pgn(),
    }
}

/// cutechess's `Termination`: none for a game the rules ended.
fn cutechess_termination(t: Termination) -> Option<&'static str> {
    match t.pgn() {
        "normal" => None,
        other => Some(other),
    }
}

/// A number as C++'s default stream (and Qt's `QString::number`) write it: up to six
/// significant digits, no trailing zeros.
fn plain_number(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// fastchess's `TimeControl`: `-` without a clock, `40/60+0.6`, `0.5/move`.
fn fastchess_tc(l: &MoveLimits) -> String {
    if let Some(t) = l.movetime {
        return format!("{}/move", plain_number(t.as_secs_f64()));
    }
    match l.tc {
        Some(tc) if !(tc.base.is_zero() && tc.increment.is_zero() && tc.moves.is_none()) => {
            tc.pgn()
        }
        _ => "-".to_string(),
    }
}

/// cutechess's `TimeControl`: `inf` without a clock, `40/60+0.6`, `0.5/move`.
fn cutechess_tc(l: &MoveLimits) -> String {
    match fastchess_tc(l).as_str() {
        "-" => "inf".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_in_the_tools_words() {
        assert_eq!(fastchess_score(Score::Cp(25)), "+0.25");
        assert_eq!(fastchess_score(Score::Cp(-105)), "-1.05");
        assert_eq!(fastchess_score(Score::Cp(0)), "0.00");
        // Mate in moves (UCI) is mate in plies in both tools.
        assert_eq!(fastchess_score(Score::Mate(2)), "+M3");
        assert_eq!(fastchess_score(Score::Mate(1)), "+M1");
        assert_eq!(fastchess_score(Score::Mate(-1)), "-M2");
        assert_eq!(cutechess_score(Score::Cp(3), 0), "");
    }

    #[test]
    fn times_in_the_tools_words() {
        assert_eq!(seconds_3(Duration::from_millis(3)), "0.003s");
        assert_eq!(seconds_3(Duration::from_millis(12_345)), "12.345s");
        assert_eq!(cutechess_seconds(Duration::ZERO), "0s");
        assert_eq!(cutechess_seconds(Duration::from_millis(3)), "0.003s");
        assert_eq!(cutechess_seconds(Duration::from_millis(123)), "0.12s");
        assert_eq!(cutechess_seconds(Duration::from_millis(1234)), "1.2s");
        assert_eq!(cutechess_seconds(Duration::from_millis(12_345)), "12s");
        assert_eq!(hh_mm_ss(Duration::from_secs(3725)), "01:02:05");
        let t = UNIX_EPOCH + Duration::from_millis(1_700_000_000_250);
        assert_eq!(iso_time(t), "2023-11-14T22:13:20 +0000");
        assert_eq!(cutechess_time(t), "2023-11-14T22:13:20.250 UTC");
    }

    #[test]
    fn time_controls_in_the_tools_words() {
        let none = MoveLimits::default();
        assert_eq!(fastchess_tc(&none), "-");
        assert_eq!(cutechess_tc(&none), "inf");
        let st = MoveLimits {
            movetime: Some(Duration::from_millis(500)),
            ..MoveLimits::default()
        };
        assert_eq!(fastchess_tc(&st), "0.5/move");
    }
}
