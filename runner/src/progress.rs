//! The live progress display of long runs (indicatif, on stderr): games done/total, games
//! per second, W-L-D, Elo ± error, nElo, LLR with bounds, pentanomial counts and the
//! expected games to a decision. Off with `--quiet`; when stderr is not a terminal, a
//! plain status line is printed every so often instead.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sprt::{Decision, Sample, Sprt};

use crate::play::tally::Tally;

/// Progress of a match.
pub struct Progress {
    bar: Option<ProgressBar>,
    plain: bool,
    started: Instant,
    last_plain: Instant,
    played: u64,
    total: Option<u64>,
}

impl Progress {
    /// A display for `total` games (`None`: unbounded), `already` of them done before.
    pub fn new(quiet: bool, total: Option<u64>, already: u64) -> Progress {
        let tty = std::io::stderr().is_terminal();
        let bar = (!quiet && tty).then(|| {
            let bar = match total {
                Some(t) => ProgressBar::new(t),
                None => ProgressBar::new_spinner(),
            };
            bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
            let template = if total.is_some() {
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} games ({per_sec}) {msg}"
            } else {
                "{spinner} [{elapsed_precise}] {pos} games ({per_sec}) {msg}"
            };
            bar.set_style(
                ProgressStyle::with_template(template)
                    .expect("template")
                    .progress_chars("=> "),
            );
            bar.set_position(already);
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        Progress {
            bar,
            plain: !quiet && !tty,
            started: Instant::now(),
            last_plain: Instant::now(),
            played: already,
            total,
        }
    }

    /// A game finished (counted or still waiting for its pair).
    pub fn game_finished(&mut self) {
        self.played += 1;
        if let Some(bar) = &self.bar {
            bar.set_position(self.played);
        }
    }

    /// New totals after a pair was counted.
    pub fn update(&mut self, tally: &Tally, sprt: Option<&Sprt>, names: [&str; 2]) {
        let line = status_line(tally, sprt, names);
        if let Some(bar) = &self.bar {
            bar.set_message(line);
        } else if self.plain && self.last_plain.elapsed() >= Duration::from_secs(10) {
            self.last_plain = Instant::now();
            let rate = self.played as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
            let total = self.total.map_or(String::new(), |t| format!("/{t}"));
            eprintln!(
                "[{:.0}s] {}{total} games ({rate:.2}/s) {line}",
                self.started.elapsed().as_secs_f64(),
                self.played
            );
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `W-L-D 10-8-12  Elo 23.2 ± 45.1  nElo 30.1 ± 58.8  LLR 0.41 [-2.94, 2.94]  Ptnml [..]  ~1200 games to go, P(pass) 0.71`
pub fn status_line(tally: &Tally, sprt: Option<&Sprt>, names: [&str; 2]) -> String {
    let sample = match sprt {
        Some(s) if s.model() == sprt::Model::Bayesian => Sample::Trinomial(tally.games),
        _ => Sample::Pentanomial(tally.pairs),
    };
    let e = sample.estimate();
    let g = &tally.games;
    let mut s = format!(
        "{} vs {}: W-L-D {}-{}-{}  Elo {} ± {}  nElo {} ± {}  Ptnml {:?}",
        names[0],
        names[1],
        g.wins,
        g.losses,
        g.draws,
        sprt::format::number(e.elo, 1),
        sprt::format::number(e.elo_error, 1),
        sprt::format::number(e.nelo, 1),
        sprt::format::number(e.nelo_error, 1),
        tally.pairs.0
    );
    if let Some(sp) = sprt {
        if let Ok(f) = sp.forecast(&sample) {
            s.push_str(&format!(
                "  LLR {:.2} [{:.2}, {:.2}]",
                f.llr,
                sp.lower_bound(),
                sp.upper_bound()
            ));
            if sp.decide(f.llr) == Decision::Continue && f.expected_games.is_finite() {
                s.push_str(&format!(
                    "  ~{:.0} games to go, P(pass) {:.2}",
                    f.expected_games, f.pass_probability
                ));
            }
        }
    }
    s
}
