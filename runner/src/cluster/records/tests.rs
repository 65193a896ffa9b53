//! The records read from shard files: complete pairs, deduplication, conflicts, refusals,
//! incremental reads, and what an SPRT counts.

use super::*;

const HEAD: &str = "pair,game,opening,seed,white,black,result,termination,plies,white_nodes,black_nodes,duration_ms\n";

fn row(pair: u64, game: u8, result: &str) -> String {
    let (w, b) = if game == 0 { ("a", "b") } else { ("b", "a") };
    format!("{pair},{game},{pair},9,{w},{b},{result},checkmate,40,100,100,5\n")
}

#[test]
fn only_complete_pairs_count() {
    let text = format!(
        "{HEAD}{}{}{}{}",
        row(3, 0, "1-0"),
        row(3, 1, "1-0"),
        row(7, 0, "1/2-1/2"),
        "7,1,7,9,b,a,1-"
    );
    let pairs = complete_rows(&text, Path::new("r.csv")).unwrap();
    assert_eq!(pairs.len(), 1);
    assert_eq!(pairs[0].0[1].pair, 3);
    let (a, b) = pairs[0].1;
    assert_eq!(
        &text[a as usize..b as usize],
        row(3, 0, "1-0") + &row(3, 1, "1-0")
    );
}

/// Records of `shards` shards in `dir` (nothing read yet), for engines a and b.
fn records(dir: &Path, shards: usize, total: Option<u64>) -> Records {
    Records {
        dir: dir.to_path_buf(),
        keep_text: false,
        games: None,
        names: ["a".into(), "b".into()],
        total,
        shards: vec![ShardRecord::default(); shards],
        all: BTreeMap::new(),
        conflicts: Vec::new(),
        counted: Counted::new(None),
    }
}

/// Records of an SPRT run: [0, 100] logistic, 5 % errors.
fn sprt_records(dir: &Path, shards: usize) -> Records {
    let mut r = records(dir, shards, None);
    r.counted = Counted::new(Some(sprt()));
    r
}

/// The SPRT of the records' tests: logistic Elo 0 against 100, α = β = 0.05.
pub(super) fn sprt() -> sprt::Sprt {
    crate::cli::SprtBounds {
        elo0: 0.0,
        elo1: 100.0,
        alpha: 0.05,
        beta: 0.05,
        model: "logistic".into(),
    }
    .check_options()
    .unwrap()
}

/// Pair `k` won twice by engine a.
fn won(k: u64) -> String {
    row(k, 0, "1-0") + &row(k, 1, "0-1")
}

/// Pair `k` lost twice by engine a.
fn lost(k: u64) -> String {
    row(k, 0, "0-1") + &row(k, 1, "1-0")
}

/// The pair at which a local SPRT of these pairs (in pair order) decides, and how.
fn local_decision(pair: impl Fn(u64) -> bool) -> (u64, Decision) {
    let s = sprt();
    let mut t = Tally::default();
    let dir = tempfile::tempdir().unwrap();
    for k in 0..1000 {
        let text = format!("{HEAD}{}", if pair(k) { won(k) } else { lost(k) });
        let ([a, b], _) = complete_rows(&text, dir.path()).unwrap().remove(0);
        let p = Path::new("x");
        t.add_pair([
            summary_of(&a, "a", p).unwrap(),
            summary_of(&b, "a", p).unwrap(),
        ]);
        let st = s.status(&crate::summary::sample(&t, &s)).unwrap();
        if st.decision != Decision::Continue {
            return (k, st.decision);
        }
    }
    panic!("no decision")
}

fn write_shard(dir: &Path, i: u64, body: String) {
    let p = super::super::shard_results(dir, i);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, format!("{HEAD}{body}")).unwrap();
}

#[test]
fn a_pair_recorded_twice_counts_once_and_differences_are_conflicts() {
    let dir = tempfile::tempdir().unwrap();
    // Shard 0 has pair 0 again (same games, another duration) and a different pair 2.
    write_shard(
        dir.path(),
        0,
        row(0, 0, "1-0")
            + &row(0, 1, "1-0")
            + &row(2, 0, "1-0")
            + &row(2, 1, "0-1")
            + &row(0, 0, "1-0").replace(",5\n", ",7\n")
            + &row(0, 1, "1-0")
            + &row(2, 0, "0-1")
            + &row(2, 1, "0-1"),
    );
    write_shard(dir.path(), 1, row(1, 0, "1-0") + &row(1, 1, "0-1"));
    let mut records = records(dir.path(), 2, None);
    assert!(records.refresh().unwrap());
    assert!(!records.refresh().unwrap(), "nothing new");
    let (pairs, conflicts) = records.pairs();
    assert_eq!(pairs.len(), 3);
    assert_eq!(
        conflicts,
        [Conflict {
            pair: 2,
            kept: 0,
            other: 0
        }]
    );
    let t = records.tally();
    assert_eq!(t.pairs.pairs(), 3);
    assert_eq!(t.games.wins + t.games.losses + t.games.draws, 6);
}

#[test]
fn records_that_are_not_the_runs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (body, total, why) in [
        // Pair 1 belongs to shard 1 of 2.
        (
            row(1, 0, "1-0") + &row(1, 1, "1-0"),
            None,
            "not one of shard 0's pairs",
        ),
        // The run has 4 pairs.
        (
            row(4, 0, "1-0") + &row(4, 1, "1-0"),
            Some(4),
            "beyond the run's 4 pairs",
        ),
        (
            row(0, 0, "1-0") + &row(0, 1, "1-0").replace(",b,a,", ",b,x,"),
            None,
            "b vs x, not a game between the run's engines a and b",
        ),
    ] {
        write_shard(dir.path(), 0, body);
        let mut records = records(dir.path(), 2, total);
        let err = records.refresh().unwrap_err();
        assert_eq!(err.code, 1);
        assert!(
            err.message.contains(why) && err.message.contains("not a record of this run"),
            "{}",
            err.message
        );
    }
    let p = super::super::shard_results(dir.path(), 0);
    std::fs::remove_file(&p).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
    let err = records(dir.path(), 2, None).refresh().unwrap_err();
    assert!(
        err.message.contains("not a regular file"),
        "{}",
        err.message
    );
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// A shard record cut anywhere, with bytes flipped or garbage appended, read
        /// fresh and incrementally: an error or a count, never a panic; only the run's
        /// own pairs are counted.
        #[test]
        fn damaged_shard_records_are_errors_not_panics(
            cut in 0usize..2000,
            flips in proptest::collection::vec((0usize..2000, any::<u8>()), 0..4),
            tail in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut text = String::from(HEAD);
            for k in [0u64, 2, 4, 6] {
                text += &(row(k, 0, "1-0") + &row(k, 1, "1/2-1/2"));
            }
            let mut bytes = text.into_bytes();
            write_shard(dir.path(), 0, String::new());
            let p = super::super::super::shard_results(dir.path(), 0);
            let mut r = records(dir.path(), 2, Some(8));
            for (i, b) in &flips {
                let n = bytes.len();
                bytes[i % n] ^= b;
            }
            bytes.truncate(cut.min(bytes.len()));
            std::fs::write(&p, &bytes).unwrap();
            let _ = r.refresh();
            bytes.extend_from_slice(&tail);
            std::fs::write(&p, &bytes).unwrap();
            if r.refresh().is_ok() {
                let (pairs, _) = r.pairs();
                prop_assert!(pairs.keys().all(|k| k % 2 == 0 && *k < 8));
            }
        }
    }
}

#[test]
fn appended_rows_are_read_incrementally_and_a_cut_file_again() {
    let dir = tempfile::tempdir().unwrap();
    let p = super::super::shard_results(dir.path(), 0);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let mut records = records(dir.path(), 1, None);
    let mut text = format!("{HEAD}{}", row(0, 0, "1-0"));
    std::fs::write(&p, &text).unwrap();
    records.refresh().unwrap();
    assert_eq!(records.shards[0].done, 0, "half a pair");
    text += &(row(0, 1, "1-0") + &row(1, 0, "0-1") + "1,1,1,9,b,a,0");
    std::fs::write(&p, &text).unwrap();
    records.refresh().unwrap();
    assert_eq!(records.shards[0].done, 1);
    text += "-1,checkmate,40,100,100,5\n";
    std::fs::write(&p, &text).unwrap();
    records.refresh().unwrap();
    assert_eq!(records.shards[0].done, 2);
    assert_eq!(records.tally().pairs.pairs(), 2);
    let (a, b) = records.shards[0].pairs[1].rows;
    assert_eq!(
        &text[a as usize..b as usize],
        row(1, 0, "0-1") + &row(1, 1, "0-1")
    );
    // Cut back (a resume repaired it) and rewritten: read from the start.
    std::fs::write(
        &p,
        format!("{HEAD}{}{}", row(0, 0, "1/2-1/2"), row(0, 1, "1/2-1/2")),
    )
    .unwrap();
    records.refresh().unwrap();
    assert_eq!(records.shards[0].done, 1);
    assert_eq!(records.tally().games.draws, 2);
}

/// The pairs of shard `i` of `n` below `end`, won unless `lose` says so.
fn shard_body(i: u64, n: u64, end: u64, lose: impl Fn(u64) -> bool) -> String {
    (i..end)
        .step_by(n as usize)
        .map(|k| if lose(k) { lost(k) } else { won(k) })
        .collect()
}

#[test]
fn an_sprt_counts_its_shards_pairs_in_pair_order_up_to_the_crossing() {
    // Engine a loses pairs 0 and 1, then wins: H1 after a few pairs more.
    let lose = |k: u64| k < 2;
    let (k, decision) = local_decision(|k| !lose(k));
    assert_eq!(decision, Decision::H1);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut r = sprt_records(d, 2);
    // Shard 0 is far ahead, shard 1 has recorded nothing: only pair 0 counts.
    write_shard(d, 0, shard_body(0, 2, k + 10, lose));
    r.refresh().unwrap();
    assert_eq!(r.counted_pairs(), 1);
    assert_eq!(r.tally().pairs.pairs(), 1);
    assert_eq!(r.decided(), None);
    let waiting = r.uncounted().unwrap();
    assert_eq!(waiting.why, NotCounted::Waiting { pair: 1, shard: 1 });
    assert_eq!(waiting.pairs, r.pairs().0.len() as u64 - 1);
    assert!(
        waiting
            .describe(Some("PENDING"))
            .contains("beyond pair 1, which shard 1 (PENDING) has not recorded yet"),
        "{}",
        waiting.describe(Some("PENDING"))
    );
    // Shard 1 catches up past the crossing: the count stops at pair k, as a local run.
    write_shard(d, 1, shard_body(1, 2, k + 6, lose));
    r.refresh().unwrap();
    assert_eq!(r.decided(), Some((k, Decision::H1)));
    assert_eq!(r.counted_pairs(), k + 1);
    let counted: Vec<u64> = r.counted().map(|p| p.pair).collect();
    assert_eq!(counted, (0..=k).collect::<Vec<_>>());
    let recorded = r.pairs().0.len() as u64;
    assert_eq!(
        r.uncounted(),
        Some(Uncounted {
            pairs: recorded - (k + 1),
            why: NotCounted::Decided { at: k, decision }
        })
    );
    // Pairs played after the decision are kept, never counted, even losses that would
    // pull the LLR back inside its bounds.
    write_shard(
        d,
        1,
        shard_body(1, 2, k + 6, lose) + &(k + 7..k + 60).step_by(2).map(lost).collect::<String>(),
    );
    r.refresh().unwrap();
    assert_eq!(r.decided(), Some((k, Decision::H1)));
    assert_eq!(r.counted_pairs(), k + 1);
    assert!(r.uncounted().unwrap().pairs > 20);
    // Read again from the start (a rewritten file, or a merge that keeps the text): the
    // same count.
    for keep in [false, true] {
        let mut again = sprt_records(d, 2);
        if keep {
            again = again.keep_text();
        }
        again.refresh().unwrap();
        assert_eq!(again.decided(), Some((k, Decision::H1)));
        assert_eq!(again.counted_pairs(), k + 1);
        assert_eq!(again.tally().pairs.0, r.tally().pairs.0);
    }
    let p = super::super::shard_results(d, 0);
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(d.join("new"), &text).unwrap();
    std::fs::rename(d.join("new"), &p).unwrap();
    r.refresh().unwrap();
    assert_eq!(
        (r.counted_pairs(), r.decided()),
        (k + 1, Some((k, Decision::H1)))
    );
}

#[test]
fn a_match_counts_every_complete_pair_whatever_the_gaps() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_shard(d, 0, shard_body(0, 2, 20, |_| false));
    let mut r = records(d, 2, None);
    r.refresh().unwrap();
    assert_eq!(r.counted_pairs(), 10);
    assert_eq!(r.tally().pairs.pairs(), 10);
    assert_eq!(r.counted().count(), 10);
    assert_eq!((r.uncounted(), r.decided()), (None, None));
}
