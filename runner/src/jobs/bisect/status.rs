//! Where a bisect stands (`spar status RUN_DIR`, its `--html` page, a server's run page):
//! the tree of its steps — each step's interval of commits, the commit it tested and what
//! its SPRT found — the step in play with its SPRT's numbers, and the answer.

use std::fmt::Write as _;
use std::path::Path;

use super::record::{self, Answer, Outcome, Plan, Role, State, Step};
use crate::cluster::status::Snapshot;
use crate::error::CliResult;
use crate::html::chart::{self, Area, Plot, Range};
use crate::html::esc;
use crate::job::StatusView;

/// A bisect's state as its files tell it.
#[derive(Clone)]
pub struct BisectStatus {
    /// The plan.
    pub plan: Plan,
    /// The finished steps.
    pub steps: Vec<Step>,
    /// Their replay.
    pub state: State,
    /// The step in play: its directory (relative to the run's) and its SPRT's lines.
    pub playing: Option<(String, Vec<String>)>,
    /// Whether a spar plays it now (its step's results file is locked).
    pub live: bool,
}

/// The status of the bisect in `dir` (`Ok(None)`: `dir` holds no bisect plan), with the
/// step in play's SPRT lines read from its files.
pub fn of_dir(dir: &Path) -> CliResult<Option<BisectStatus>> {
    of_dir_with(dir, |step| {
        step_snapshot(step).map_or_else(Vec::new, |s| s.lines())
    })
}

/// [`of_dir`] with the step in play's lines given by `lines_of` (a live reader's own,
/// kept up to date from the bytes appended: no whole read of the step's file).
pub fn of_dir_with(
    dir: &Path,
    lines_of: impl FnOnce(&Path) -> Vec<String>,
) -> CliResult<Option<BisectStatus>> {
    let Some((plan, steps, state)) = record::load(dir)? else {
        return Ok(None);
    };
    let playing = playing_dir(dir, &steps, &state).map(|rel| {
        let lines = lines_of(&dir.join(&rel));
        (rel, lines)
    });
    let live = playing
        .as_ref()
        .is_some_and(|(rel, _)| crate::files::lock::is_held(&dir.join(rel).join("results.csv")));
    Ok(Some(BisectStatus {
        plan,
        steps,
        state,
        playing,
        live,
    }))
}

/// The directory of the step in play, relative to `dir`: the last one under `steps/` that
/// no finished step names (none once the bisect is over).
pub fn playing_dir(dir: &Path, steps: &[Step], state: &State) -> Option<String> {
    if state.next.is_final() {
        return None;
    }
    let mut names: Vec<String> = std::fs::read_dir(dir.join("steps"))
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| format!("steps/{}", e.file_name().to_string_lossy()))
        .filter(|rel| steps.iter().all(|s| &s.dir != rel))
        .collect();
    names.sort();
    names.pop()
}

/// The snapshot of a step's SPRT in `step` (its local results CSV, or the cluster run it
/// is), when there is one.
pub fn step_snapshot(step: &Path) -> Option<Snapshot> {
    let csv = step.join("results.csv");
    if crate::cluster::manifest::Manifest::path(step).is_file() {
        let (m, kind) = crate::jobs::read(step).ok()?;
        crate::cluster::status::of_run(step, &m, kind).ok()
    } else if csv.is_file() {
        crate::cluster::csv_tail::of_csv(&csv).ok()
    } else {
        None
    }
}

impl BisectStatus {
    fn commit_label(&self, i: usize) -> String {
        let c = &self.plan.commits[i];
        format!("{} {:?}", c.short(), c.subject)
    }

    /// The title: what is bisected.
    pub fn title(&self) -> String {
        format!(
            "spar bisect {}: {} commits from {} to {}",
            self.plan.name,
            self.plan.commits.len() - 1,
            self.plan.commits[0].short(),
            self.plan.commits[self.plan.commits.len() - 1].short()
        )
    }

    /// Games played by the finished steps.
    pub fn games(&self) -> u64 {
        self.steps.iter().map(|s| s.games).sum()
    }

    /// The answer's line.
    pub fn answer(&self) -> String {
        let c = &self.plan.commits;
        match &self.state.next {
            Answer::Gate => format!(
                "Checking that {} is at least {} worse than {}",
                c[c.len() - 1].short(),
                self.plan.drop,
                c[0].short()
            ),
            Answer::NoRegression => format!(
                "No regression of at least {} ({}) between {} and {}: nothing to bisect",
                self.plan.drop,
                self.plan.model,
                c[0].short(),
                c[c.len() - 1].short()
            ),
            Answer::Test(i) => {
                let (lo, hi) = self.state.search.bounds();
                format!(
                    "Searching: the first bad commit is one of {}..={} ({} commits); testing {}",
                    lo + 1,
                    hi,
                    hi - lo,
                    self.commit_label(*i)
                )
            }
            Answer::Found(i) => format!(
                "First bad commit: {} {:?} (commit {i} of {})",
                c[*i].sha,
                c[*i].subject,
                c.len() - 1
            ),
            Answer::Untestable { first, last } => format!(
                "The first bad commit is one of {first}..={last} ({} to {}): those before {} could not be tested",
                c[*first].short(),
                c[*last].short(),
                c[*last].short()
            ),
        }
    }

    /// A step's line as the command printed it (`answer::step_line`), after the interval a
    /// search step searched, indented by its depth: the tree of the search.
    fn step_line(&self, k: usize, s: &Step, interval: Option<(usize, usize)>) -> String {
        let tree = interval.map_or(String::new(), |(lo, hi)| {
            format!("{}[{lo}..{hi}] ", "  ".repeat(k.saturating_sub(1)))
        });
        format!("{tree}{}", super::answer::step_line(&self.plan, k, s))
    }

    /// Each finished step's line, with the interval it searched.
    pub fn step_lines(&self) -> Vec<String> {
        let n = self.plan.commits.len() - 1;
        let (mut lo, mut hi) = (0, n);
        let mut k = 0;
        let mut out = Vec::new();
        for s in &self.steps {
            match s.role {
                Role::Gate => out.push(self.step_line(0, s, None)),
                Role::Search => {
                    k += 1;
                    out.push(self.step_line(k, s, Some((lo, hi))));
                    match s.outcome {
                        Outcome::Good => lo = s.commit,
                        Outcome::Bad => hi = s.commit,
                        Outcome::Skip => {}
                    }
                }
            }
        }
        out
    }
}

impl StatusView for BisectStatus {
    fn lines(&self) -> Vec<String> {
        let p = &self.plan;
        let mut out = vec![
            self.title(),
            format!(
                "Drop {} ({}), alpha {}, beta {}; built with {}{}",
                p.drop,
                p.model,
                p.alpha,
                p.beta,
                p.build,
                if p.known_bad { "; bad known bad" } else { "" }
            ),
        ];
        out.extend(self.step_lines());
        if let Some((rel, lines)) = &self.playing {
            out.push(format!("Playing {rel}:"));
            out.extend(lines.iter().map(|l| format!("  {l}")));
        }
        out.push(format!("Games: {}", self.games()));
        out.push(self.answer());
        if let Answer::Found(i) = self.state.next {
            out.extend(super::answer::spread(
                &self.plan,
                &self.state,
                &self.steps,
                i,
            ));
        }
        out
    }

    fn page(&self) -> String {
        let mut page = crate::cluster::html::page_start(
            &self.title(),
            self.live,
            "td:nth-child(3){text-align:left}.good{color:#080}.bad{color:#b00;font-weight:bold}\
             .found{background:#fde}svg{display:block;margin:1em 0}",
            if self.state.next.is_final() {
                "Finished."
            } else {
                "Not running."
            },
            &self.lines().join("\n"),
        );
        page.push_str(&self.section());
        page.push_str("</body></html>\n");
        page
    }
}

impl BisectStatus {
    /// The page's body without its head: the chart of the tested commits and the table of
    /// the steps (a server's run page shows it as the kind's section).
    pub fn section(&self) -> String {
        let mut s = String::new();
        s.push_str(&self.chart());
        s.push_str(
            "<table><tr><th>Step</th><th>Commit</th><th>Subject</th><th>Games</th><th>Elo</th>\
             <th>LLR</th><th>Found</th></tr>",
        );
        let found = match self.state.next {
            Answer::Found(i) => Some(i),
            _ => None,
        };
        let mut k = 0;
        for st in &self.steps {
            let step = match st.role {
                Role::Gate => "gate".to_string(),
                Role::Search => {
                    k += 1;
                    k.to_string()
                }
            };
            let c = &self.plan.commits[st.commit];
            let (class, what) = match st.outcome {
                Outcome::Good => ("good", "good".to_string()),
                Outcome::Bad => ("bad", "bad".to_string()),
                Outcome::Skip => ("", format!("skipped: {}", st.why.as_deref().unwrap_or(""))),
            };
            let numbers = |x: String| {
                if st.outcome == Outcome::Skip {
                    String::new()
                } else {
                    x
                }
            };
            let _ =
                write!(
                s,
                "<tr{}><td>{step}</td><td title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td class=\"{class}\">{}</td></tr>",
                if found == Some(st.commit) { " class=\"found\"" } else { "" },
                esc(&c.sha),
                esc(c.short()),
                esc(&c.subject),
                numbers(st.games.to_string()),
                numbers(format!("{:+.1} ± {:.1}", st.elo, st.elo_pm)),
                numbers(format!("{:.2} [{:.2}, {:.2}]", st.llr, st.lower, st.upper)),
                esc(&what)
            );
        }
        s.push_str("</table>");
        let _ = write!(s, "<p><b>{}</b></p>", esc(&self.answer()));
        s
    }

    /// The tested commits along the line: each step's Elo against the good commit with its
    /// margin, coloured by what it found; the answer marked.
    fn chart(&self) -> String {
        let n = self.plan.commits.len() - 1;
        let tested: Vec<&Step> = self
            .steps
            .iter()
            .filter(|s| s.outcome != Outcome::Skip)
            .collect();
        let (w, h) = (640.0, 240.0);
        let area = Area::inset(w, h, 56.0, 16.0, 16.0, 36.0);
        let y = Range::of(
            tested
                .iter()
                .flat_map(|s| [s.elo - s.elo_pm, s.elo + s.elo_pm]),
        )
        .with(0.0)
        .with(-self.plan.drop)
        .padded(0.08);
        let plot = Plot {
            x: Range::new(0.0, n as f64).padded(0.03),
            y,
            area,
        };
        let mut s = chart::open(
            Some("bisect-chart"),
            w,
            h,
            "",
            Some("Elo of each tested commit against the good one"),
        );
        s.push_str(&area.frame("#fff", "#999"));
        s.push_str(&plot.rule(0.0, "stroke=\"#888\""));
        s.push_str(&plot.rule(-self.plan.drop, "stroke=\"#b00\" stroke-dasharray=\"4 3\""));
        for v in y.ticks(5) {
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\">{}</text>",
                area.x0 - 4.0,
                plot.py(v) + 4.0,
                chart::tick(v, (y.hi - y.lo) / 5.0)
            );
        }
        if let Answer::Found(i) = self.state.next {
            let _ = write!(
                s,
                "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#c0c\" stroke-width=\"2\"/>",
                area.y0,
                area.y1,
                x = plot.px(i as f64 - 0.5)
            );
        }
        for st in tested {
            let x = plot.px(st.commit as f64);
            let colour = if st.outcome == Outcome::Good {
                "#080"
            } else {
                "#b00"
            };
            let _ = write!(
                s,
                "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{colour}\"/>\
                 <circle cx=\"{x:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{colour}\"><title>{}</title></circle>",
                plot.py(st.elo - st.elo_pm),
                plot.py(st.elo + st.elo_pm),
                plot.py(st.elo),
                esc(&format!(
                    "{} {}: Elo {:+.1} ± {:.1}",
                    self.plan.commits[st.commit].short(),
                    self.plan.commits[st.commit].subject,
                    st.elo,
                    st.elo_pm
                ))
            );
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\">commits 0 (good) to {n} (bad)</text></svg>",
            (area.x0 + area.x1) / 2.0,
            h - 10.0
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::bisect::record::tests::{plan, step};

    #[test]
    fn the_status_shows_the_tree_of_steps_the_step_in_play_and_the_answer() {
        let dir = tempfile::tempdir().unwrap();
        let p = plan(16, false);
        p.write(dir.path()).unwrap();
        for (role, i, o) in [
            (Role::Gate, 16, Outcome::Bad),
            (Role::Search, 8, Outcome::Bad),
            (Role::Search, 4, Outcome::Good),
        ] {
            let mut s = step(&p, role, i, o);
            s.dir = record::step_dir(i, &p.commits[i].sha);
            record::append_step(dir.path(), &s).unwrap();
        }
        std::fs::create_dir_all(dir.path().join("steps/03-000000000000")).unwrap();
        let st = of_dir(dir.path()).unwrap().unwrap();
        let lines = st.lines();
        assert!(
            lines[0].starts_with("spar bisect eng: 16 commits"),
            "{lines:?}"
        );
        assert!(lines
            .iter()
            .any(|l| l.starts_with("gate: ") && l.ends_with(": regression")));
        assert!(
            lines.iter().any(|l| l.starts_with("  [0..8] step 2: ")),
            "{lines:?}"
        );
        assert!(lines.contains(&"Playing steps/03-000000000000:".to_string()));
        assert_eq!(
            lines.last().unwrap(),
            &format!(
            "Searching: the first bad commit is one of 5..=8 (4 commits); testing {} \"commit 6\"",
            &p.commits[6].sha[..12]
        )
        );
        let page = st.page();
        assert!(page.contains("<svg id=\"bisect-chart\"") && page.ends_with("</html>\n"));
        // Over: the answer, and no step in play.
        for (i, o) in [(6, Outcome::Bad), (5, Outcome::Good)] {
            record::append_step(dir.path(), &step(&p, Role::Search, i, o)).unwrap();
        }
        let st = of_dir(dir.path()).unwrap().unwrap();
        assert!(st.playing.is_none());
        assert!(st.answer().starts_with(&format!(
            "First bad commit: {} \"commit 6\"",
            p.commits[6].sha
        )));
        assert!(st.section().contains("<tr class=\"found\">"));
        assert!(of_dir(&dir.path().join("steps")).unwrap().is_none());
    }
}
