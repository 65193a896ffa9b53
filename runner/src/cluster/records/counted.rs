//! Which of a run's recorded pairs it counts. A match counts every complete pair. An SPRT
//! counts as a local SPRT does: in pair order from pair 0, checking the test after each
//! pair, and it stops counting at the first pair that decides it. A pair recorded beyond a
//! gap (a pair not recorded yet: a slow or pending shard's) waits for it; a pair recorded
//! after the decision stays in its shard's records but is never counted. So a sharded SPRT
//! decides at the pair, with the LLR, that the local SPRT of the same seed does, whatever
//! the timing of its shards.
//!
//! Each pair is counted once, when it becomes counted: a poll costs O(new pairs), with one
//! SPRT status per pair counted, as in the local run.

use std::collections::BTreeMap;
use std::ops::Bound;

use sprt::{Decision, Sprt};

use super::PairRecord;
use crate::play::tally::Tally;
use crate::summary;

/// An SPRT's count in pair order.
#[derive(Clone, Debug)]
struct InOrder {
    sprt: Sprt,
    /// The first pair not counted: pairs 0..next are.
    next: u64,
    /// The pair that decided the SPRT, and its decision (never `Continue`).
    decided: Option<(u64, Decision)>,
}

/// What a run counts of its recorded pairs (see the module documentation).
#[derive(Clone, Debug)]
pub struct Counted {
    /// An SPRT's count; `None` for a match, which counts every pair.
    in_order: Option<InOrder>,
    /// The totals of the pairs counted.
    tally: Tally,
    /// Pairs counted.
    len: u64,
}

/// Why recorded pairs are not counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotCounted {
    /// The SPRT decided at pair `at`: the pairs recorded after it are kept in the shards'
    /// records, never counted.
    Decided {
        /// The pair whose result crossed a bound.
        at: u64,
        /// H0 or H1.
        decision: Decision,
    },
    /// Pair `pair`, shard `shard`'s, is not recorded yet: the pairs after it wait for it.
    Waiting {
        /// The first pair not recorded.
        pair: u64,
        /// The shard that plays it.
        shard: u64,
    },
}

/// Recorded pairs that a run does not count (yet), and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Uncounted {
    /// How many.
    pub pairs: u64,
    /// Why.
    pub why: NotCounted,
}

impl Uncounted {
    /// One line that says which pairs are not counted and why (the summary's note, the
    /// status line); `state` is the waited-for shard's queue state, when known.
    pub fn describe(&self, state: Option<&str>) -> String {
        let n = self.pairs;
        let pairs = if n == 1 { "pair" } else { "pairs" };
        match self.why {
            NotCounted::Decided { at, decision } => format!(
                "Not counted: {n} {pairs} played after the SPRT decided ({}) at pair {at}; they \
                 stay in the shards' records (an SPRT counts in pair order up to its decision, \
                 as a local run does)",
                decision.name()
            ),
            NotCounted::Waiting { pair, shard } => {
                let state = state.map_or(String::new(), |s| format!(" ({s})"));
                format!(
                    "Not counted yet: {n} {pairs} recorded beyond pair {pair}, which shard \
                     {shard}{state} has not recorded yet: an SPRT counts in pair order, so they \
                     wait for it"
                )
            }
        }
    }
}

impl Counted {
    /// Nothing counted yet; `sprt`: the run's SPRT, which counts in pair order.
    pub fn new(sprt: Option<Sprt>) -> Counted {
        Counted {
            in_order: sprt.map(|sprt| InOrder {
                sprt,
                next: 0,
                decided: None,
            }),
            tally: Tally::default(),
            len: 0,
        }
    }

    /// Forgets what was counted (the records are read again from the start).
    pub fn reset(&mut self) {
        *self = Counted::new(self.in_order.as_ref().map(|o| o.sprt));
    }

    /// A pair recorded for the first time: a match counts it now (an SPRT in
    /// [`Counted::advance`]).
    pub fn recorded(&mut self, p: &PairRecord) {
        if self.in_order.is_none() {
            self.tally.add_pair(p.games);
            self.len += 1;
        }
    }

    /// An SPRT counts the pairs that now follow the counted ones without a gap, checking
    /// the test after each, up to the first that decides it.
    pub fn advance(&mut self, all: &BTreeMap<u64, PairRecord>) {
        let Some(o) = &mut self.in_order else {
            return;
        };
        while o.decided.is_none() {
            let Some(p) = all.get(&o.next) else { break };
            self.tally.add_pair(p.games);
            self.len += 1;
            // As the local run: a status that cannot be computed decides nothing.
            if let Ok(st) = o.sprt.status(&summary::sample(&self.tally, &o.sprt)) {
                if st.decision != Decision::Continue {
                    o.decided = Some((o.next, st.decision));
                }
            }
            o.next += 1;
        }
    }

    /// The totals of the pairs counted.
    pub fn tally(&self) -> &Tally {
        &self.tally
    }

    /// How many pairs are counted.
    pub fn pairs(&self) -> u64 {
        self.len
    }

    /// The pair indices counted: all of them (a match), or those below the first pair not
    /// counted (an SPRT).
    pub fn range(&self) -> (Bound<u64>, Bound<u64>) {
        match &self.in_order {
            None => (Bound::Unbounded, Bound::Unbounded),
            Some(o) => (Bound::Unbounded, Bound::Excluded(o.next)),
        }
    }

    /// The SPRT's decision and the pair that made it, once it decided.
    pub fn decided(&self) -> Option<(u64, Decision)> {
        self.in_order.as_ref().and_then(|o| o.decided)
    }

    /// The recorded pairs (`recorded` of them, by a run of `shards` shards) not counted,
    /// and why; `None` when every one is.
    pub fn uncounted(&self, recorded: u64, shards: u64) -> Option<Uncounted> {
        let o = self.in_order.as_ref()?;
        let pairs = recorded.checked_sub(self.len).filter(|&n| n > 0)?;
        let why = match o.decided {
            Some((at, decision)) => NotCounted::Decided { at, decision },
            None => NotCounted::Waiting {
                pair: o.next,
                shard: o.next % shards.max(1),
            },
        };
        Some(Uncounted { pairs, why })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::sprt;
    use super::*;
    use crate::play::game::Termination;
    use crate::play::tally::GameSummary;
    use engine::types::GameResult;

    /// A pair the first engine wins twice.
    fn won(pair: u64) -> PairRecord {
        let game = |first_is_white| GameSummary {
            first_is_white,
            outcome: if first_is_white {
                GameResult::WhiteWins
            } else {
                GameResult::BlackWins
            },
            termination: Termination::Checkmate,
        };
        PairRecord {
            pair,
            shard: (pair % 4) as u32,
            position: 0,
            games: [game(true), game(false)],
            fingerprint: pair,
            rows: (0, 0),
        }
    }

    /// The pair at which a local SPRT of won pairs decides.
    fn local_decision() -> u64 {
        let s = sprt();
        let mut t = Tally::default();
        (0..1000)
            .find(|&k| {
                t.add_pair(won(k).games);
                s.status(&summary::sample(&t, &s))
                    .is_ok_and(|st| st.decision == Decision::H1)
            })
            .expect("won pairs decide")
    }

    #[test]
    fn an_sprt_counts_in_pair_order_up_to_its_first_crossing() {
        let k = local_decision();
        assert!(k >= 3, "decides after a few pairs, not at once: {k}");
        let mut c = Counted::new(Some(sprt()));
        let mut all = BTreeMap::new();
        // Pairs 1..=k+5 recorded, pair 0 not: nothing counted, everything waits for it.
        for p in 1..=k + 5 {
            all.insert(p, won(p));
            c.recorded(&won(p));
        }
        c.advance(&all);
        assert_eq!(c.pairs(), 0);
        assert_eq!(
            c.uncounted(all.len() as u64, 4),
            Some(Uncounted {
                pairs: k + 5,
                why: NotCounted::Waiting { pair: 0, shard: 0 }
            })
        );
        // Pair 0 arrives: the count runs to the crossing at pair k, and no further.
        all.insert(0, won(0));
        c.advance(&all);
        assert_eq!(c.pairs(), k + 1);
        assert_eq!(c.tally().pairs.pairs(), k + 1);
        assert_eq!(c.decided(), Some((k, Decision::H1)));
        assert_eq!(c.range(), (Bound::Unbounded, Bound::Excluded(k + 1)));
        let after = c
            .uncounted(all.len() as u64, 4)
            .expect("pairs after the decision");
        assert_eq!(after.pairs, 5);
        assert_eq!(
            after.why,
            NotCounted::Decided {
                at: k,
                decision: Decision::H1
            }
        );
        assert!(after.describe(None).contains("after the SPRT decided (H1)"));
        // Later pairs never count, and the decision stays.
        for p in k + 6..k + 20 {
            all.insert(p, won(p));
            c.recorded(&won(p));
        }
        c.advance(&all);
        assert_eq!(c.pairs(), k + 1);
        assert_eq!(c.decided(), Some((k, Decision::H1)));
        // Read again from the start: the same count.
        c.reset();
        assert_eq!((c.pairs(), c.decided()), (0, None));
        c.advance(&all);
        assert_eq!((c.pairs(), c.decided()), (k + 1, Some((k, Decision::H1))));
    }

    #[test]
    fn a_match_counts_every_recorded_pair() {
        let mut c = Counted::new(None);
        for p in [5, 1, 9] {
            c.recorded(&won(p));
        }
        c.advance(&BTreeMap::new());
        assert_eq!(c.pairs(), 3);
        assert_eq!(c.range(), (Bound::Unbounded, Bound::Unbounded));
        assert_eq!(c.uncounted(3, 4), None);
        assert_eq!(c.decided(), None);
    }
}
