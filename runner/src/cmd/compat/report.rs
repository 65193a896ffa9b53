//! What a personality prints as a match goes: each game's `Started`/`Finished` lines in the
//! tool's words, the tool's periodic reports and its final report (fastchess's results
//! blocks, cutechess-cli's score lines, results and outcomes).

use engine::types::GameResult;
use sprt::{Decision, Pentanomial, Sprt, Trinomial};

use super::numbers::{fixed, g3, g_digits, qt_fixed, CutechessElo, CutechessSprt};
use super::{Lines, Tool};
use crate::engines::variant::Variant;
use crate::error::{CliError, CliResult};
use crate::play::game::{PlayedGame, Termination};
use crate::play::schedule::PairOutcome;
use crate::play::tally::Tally;
use crate::summary::{self, MatchInfo};

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
                if self.lines.output == Tool::Fastchess {
                    out.extend(self.fastchess_failures(tally));
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

    /// fastchess's count of each engine's lost games by time-out and by crash (a crash or
    /// a stalled connection), for the engines that had any, between blank lines (fastchess
    /// keeps them in a hash map; spar lists them in engine order).
    fn fastchess_failures(&self, tally: &Tally) -> Vec<String> {
        let mut out = Vec::new();
        for (i, name) in self.names.iter().enumerate() {
            let f = &tally.failures[i];
            if f.time_forfeits + f.crashes + f.stalls > 0 {
                out.push(format!("Player: {name}"));
                out.push(format!("  Timeouts: {}", f.time_forfeits));
                out.push(format!("  Crashed: {}", f.crashes + f.stalls));
            }
        }
        if !out.is_empty() {
            out.insert(0, String::new());
            out.push(String::new());
        }
        out
    }

    /// fastchess's results block: the Elo, LOS, games and pentanomial lines between
    /// dashes (fastchess's `-output format=cutechess`: cutechess's Elo difference line).
    fn fastchess_block(&self, sprt: Option<&Sprt>) -> CliResult<Vec<String>> {
        let t = &self.tally;
        let rule = "-".repeat(50);
        let mut out = Vec::new();
        if self.lines.output == Tool::Cutechess {
            let g = &self.running;
            // sprt's estimate is fastchess's EloWDL, operation for operation.
            let e = g.estimate();
            out.push(format!(
                "Elo difference: {} +/- {}, LOS: {} %, DrawRatio: {} %",
                fixed(e.elo, 2),
                fixed(e.elo_error, 2),
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
        // sprt's estimate is fastchess's EloPentanomial, operation for operation (even its
        // NaNs' signs, which `fixed` prints as fastchess does).
        let e = p.estimate();
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
            fixed(e.elo, 2),
            fixed(e.elo_error, 2),
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
