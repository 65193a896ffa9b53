//! What a bisect prints: a line per step as it ends, and the answer — every step in a
//! table, the total games, the first bad commit with its subject, a note when the numbers
//! say the drop is spread over several commits ([`spread`]), and last the first bad
//! commit's full hash alone (for scripts).

use super::record::{Answer, Outcome, Plan, Role, State, Step};

/// A step's line: `step 2: abc123def456 "subject": 24 games, Elo -180.3 ± 90.1, LLR -3.01
/// [-2.94, 2.94]: bad` (the gate is `gate`; a skip says why).
pub fn step_line(plan: &Plan, k: usize, s: &Step) -> String {
    let c = &plan.commits[s.commit];
    let who = match s.role {
        Role::Gate => "gate".to_string(),
        Role::Search => format!("step {k}"),
    };
    let head = format!("{who}: {} \"{}\"", c.short(), c.subject);
    match s.outcome {
        Outcome::Skip => format!(
            "{head}: skipped ({})",
            s.why.as_deref().unwrap_or("not testable")
        ),
        o => format!(
            "{head}: {} games, Elo {:.1} ± {:.1}, LLR {:.2} [{:.2}, {:.2}]: {}",
            s.games,
            s.elo,
            s.elo_pm,
            s.llr,
            s.lower,
            s.upper,
            verdict(s.role, o)
        ),
    }
}

/// A verdict's word: the gate's `regression` or `no regression`, a step's `good` or `bad`.
fn verdict(role: Role, o: Outcome) -> &'static str {
    match (role, o) {
        (Role::Gate, Outcome::Bad) => "regression",
        (Role::Gate, _) => "no regression",
        (_, Outcome::Good) => "good",
        (_, Outcome::Bad) => "bad",
        (_, Outcome::Skip) => "skipped",
    }
}

/// The table of every step.
pub fn table(plan: &Plan, steps: &[Step]) -> Vec<String> {
    let mut lines = vec![format!(
        "{:<6} {:>4} {:<12} {:>7} {:>14} {:>16} {:>8}  {}",
        "step", "#", "commit", "games", "W-L-D", "Elo", "LLR", "verdict"
    )];
    let mut k = 0;
    for s in steps {
        let step = match s.role {
            Role::Gate => "gate".to_string(),
            Role::Search => {
                k += 1;
                k.to_string()
            }
        };
        let c = &plan.commits[s.commit];
        let (wld, elo, llr) = if s.outcome == Outcome::Skip {
            ("-".to_string(), "-".to_string(), "-".to_string())
        } else {
            (
                format!("{}-{}-{}", s.wins, s.losses, s.draws),
                format!("{:.1} ± {:.1}", s.elo, s.elo_pm),
                format!("{:.2}", s.llr),
            )
        };
        let why = s
            .why
            .as_deref()
            .map_or(String::new(), |w| format!(" ({w})"));
        lines.push(format!(
            "{step:<6} {:>4} {:<12} {:>7} {wld:>14} {elo:>16} {llr:>8}  {}{why}",
            s.commit,
            c.short(),
            s.games,
            verdict(s.role, s.outcome)
        ));
    }
    lines
}

/// The note when the drop looks spread over several commits, by this rule (`drop` is the
/// plan's): a part of at least `drop / 2` outside the first bad commit, and outside its 95 %
/// margin — either the last commit found good is at least `drop / 2` worse than good with
/// its whole margin below 0 (part of the drop came before the first bad commit), or the
/// bad commit (the gate) is at least `drop / 2` worse than the first bad commit, beyond the
/// margin of their difference (part of it came after). `None` when neither holds or the
/// numbers are missing.
pub fn spread(plan: &Plan, state: &State, steps: &[Step], found: usize) -> Option<String> {
    let half = plan.drop / 2.0;
    let (lo, _) = state.search.bounds();
    let measured = |i: usize| {
        steps
            .iter()
            .rev()
            .find(|s| s.commit == i && s.outcome != Outcome::Skip)
    };
    let mut notes = Vec::new();
    if let Some(g) = measured(lo).filter(|_| lo > 0) {
        if g.elo <= -half && g.elo + g.elo_pm < 0.0 {
            notes.push(format!(
                "the last good commit {} is itself {:.1} ± {:.1} Elo against good: part of the \
                 drop came before the first bad commit",
                plan.commits[lo].short(),
                g.elo,
                g.elo_pm
            ));
        }
    }
    let n = plan.commits.len() - 1;
    let first = steps
        .iter()
        .rev()
        .find(|s| s.commit == found && s.role == Role::Search && s.outcome == Outcome::Bad);
    if let (Some(b), Some(f)) = (state.gate.as_ref().filter(|_| found < n), first) {
        let gap = f.elo - b.elo;
        let margin = (f.elo_pm.powi(2) + b.elo_pm.powi(2)).sqrt();
        if gap >= half && gap > margin {
            notes.push(format!(
                "the bad commit is {:.1} ± {:.1} Elo against good, the first bad commit {:.1} \
                 ± {:.1}: part of the drop came after it",
                b.elo, b.elo_pm, f.elo, f.elo_pm
            ));
        }
    }
    (!notes.is_empty()).then(|| {
        format!(
            "Note: the drop looks spread over several commits: {}",
            notes.join("; ")
        )
    })
}

/// The answer's lines (after the steps' lines), the last one for scripts: the first bad
/// commit's full hash, or the gate's finding; with them, for an untestable range (its
/// candidates listed in the lines), the error the command ends with.
pub fn answer(plan: &Plan, steps: &[Step], state: &State) -> (Vec<String>, Option<String>) {
    let mut lines = vec![String::new()];
    lines.extend(table(plan, steps));
    let games: u64 = steps.iter().map(|s| s.games).sum();
    let sprts = steps.iter().filter(|s| s.outcome != Outcome::Skip).count();
    lines.push(format!("Total: {games} games in {sprts} SPRTs"));
    match state.next {
        Answer::NoRegression => {
            let good = &plan.commits[0];
            let bad = &plan.commits[plan.commits.len() - 1];
            lines.push(format!(
                "no regression of at least {} between good {} and bad {}",
                plan.drop,
                good.short(),
                bad.short()
            ));
            (lines, None)
        }
        Answer::Found(i) => {
            let c = &plan.commits[i];
            lines.push(format!("First bad commit: {} \"{}\"", c.sha, c.subject));
            if let Some(note) = spread(plan, state, steps, i) {
                lines.push(note);
            }
            lines.push(c.sha.clone());
            (lines, None)
        }
        Answer::Untestable { first, last } => {
            lines.push(format!(
                "The first bad commit is one of these {} (the earlier ones could not be tested):",
                last - first + 1
            ));
            for c in &plan.commits[first..=last] {
                lines.push(format!("  {} \"{}\"", c.sha, c.subject));
            }
            let e = format!(
                "the first bad commit is one of {}..{} (commits {first} to {last}): every commit \
                 before {} in that range was skipped",
                plan.commits[first].short(),
                plan.commits[last].short(),
                plan.commits[last].short()
            );
            (lines, Some(e))
        }
        Answer::Gate | Answer::Test(_) => (lines, None),
    }
}

#[cfg(test)]
mod tests {
    use super::super::record::tests::{plan, step};
    use super::super::record::{replay, Role};
    use super::*;

    #[test]
    fn the_answer_ends_with_the_hash_and_notes_a_spread_drop() {
        let p = plan(4, false);
        let mut gate = step(&p, Role::Gate, 4, Outcome::Bad);
        gate.elo = -40.0;
        gate.elo_pm = 5.0;
        let mut s2 = step(&p, Role::Search, 2, Outcome::Good);
        s2.elo = -1.0;
        let mut s3 = step(&p, Role::Search, 3, Outcome::Bad);
        s3.elo = -12.0;
        s3.elo_pm = 5.0;
        let steps = vec![gate, s2, s3];
        let state = replay(&p, &steps).unwrap();
        let (lines, e) = answer(&p, &steps, &state);
        assert!(e.is_none());
        assert_eq!(lines.last().unwrap(), &p.commits[3].sha);
        assert!(lines
            .iter()
            .any(|l| l.contains("Total: 120 games in 3 SPRTs")));
        let note = lines
            .iter()
            .find(|l| l.starts_with("Note:"))
            .expect("a note");
        assert!(note.contains("part of the drop came after it"), "{note}");
        // The first bad commit explains the whole drop: no note.
        let mut steps2 = steps.clone();
        steps2[2].elo = -38.0;
        let (lines, _) = answer(&p, &steps2, &state);
        assert!(!lines.iter().any(|l| l.starts_with("Note:")), "{lines:?}");
        // The last good commit already lost most of the drop.
        let mut steps3 = steps.clone();
        steps3[1].elo = -20.0;
        steps3[1].elo_pm = 8.0;
        steps3[2].elo = -38.0;
        let (lines, _) = answer(&p, &steps3, &state);
        let note = lines
            .iter()
            .find(|l| l.starts_with("Note:"))
            .expect("a note");
        assert!(note.contains("before the first bad commit"), "{note}");
        let line = step_line(&p, 2, &steps[2]);
        assert!(line.starts_with("step 2: 000000000000 \"commit 3\": 40 games, Elo -12.0 ± 5.0, LLR -3.00 [-2.90, 2.90]: bad"), "{line}");
    }

    #[test]
    fn no_regression_and_an_untestable_range_are_said() {
        let p = plan(4, false);
        let gate = step(&p, Role::Gate, 4, Outcome::Good);
        let steps = vec![gate];
        let state = replay(&p, &steps).unwrap();
        let (lines, e) = answer(&p, &steps, &state);
        assert!(e.is_none());
        assert!(lines
            .last()
            .unwrap()
            .starts_with("no regression of at least 10 between good"));
        let p = plan(2, true);
        let mut skip = step(&p, Role::Search, 1, Outcome::Skip);
        skip.why = Some("the build failed".into());
        let steps = vec![skip];
        let state = replay(&p, &steps).unwrap();
        let (lines, e) = answer(&p, &steps, &state);
        assert!(e
            .unwrap()
            .contains("one of 000000000000..000000000000 (commits 1 to 2)"));
        assert!(
            lines
                .iter()
                .any(|l| l.contains("skipped (the build failed)")),
            "{lines:?}"
        );
    }
}
