//! The live reader of a match or SPRT (the job contract's `live_reader`): a local run's
//! results CSV followed as it grows (`cluster::csv_tail`: only the rows appended since the
//! last read are parsed and counted), a cluster run's records through the shared cluster
//! reader; the numbers are `spar status`'s, from the same snapshot and totals.

use std::path::PathBuf;

use crate::cluster::csv_tail::{Following, Update};
use crate::job::Job;
use crate::live::{Live, LiveReader, LiveRun, Reading};
use crate::live_files::{numbers, ClusterReader};

/// The reader of the match or SPRT `kind` whose files are where `run` says.
pub fn reader(kind: &'static dyn Job, run: &LiveRun) -> Box<dyn LiveReader> {
    match &run.cluster {
        Some(rd) => Box::new(ClusterReader::new(
            rd,
            kind,
            Box::new(|_, _, snap, out| numbers(snap, &snap.tally(), &mut out.live)),
        )),
        None => Box::new(CsvReader {
            path: run.file.clone(),
            follow: Following::new(&run.file),
            running: None,
            shown: None,
        }),
    }
}

/// A local run's results CSV, followed.
struct CsvReader {
    path: PathBuf,
    follow: Following,
    /// Whether a spar held the file's lock at the last reading.
    running: Option<bool>,
    /// Whether the last reading had numbers (`None`: none given yet).
    shown: Option<bool>,
}

impl LiveReader for CsvReader {
    fn update(&mut self) -> Option<Reading> {
        let found = self.follow.update();
        let running = crate::files::lock::is_held(&self.path);
        let tail = match (found, self.follow.tail()) {
            (Update::Unreadable, _) | (_, None) => {
                // No numbers (no file yet, or not one `spar status` reads).
                let again = self.shown == Some(false);
                self.shown = Some(false);
                return (!again).then(Reading::default);
            }
            (Update::Same, Some(_))
                if self.shown == Some(true) && self.running == Some(running) =>
            {
                return None;
            }
            (_, Some(tail)) => tail,
        };
        (self.shown, self.running) = (Some(true), Some(running));
        let (snap, tally) = tail.snapshot(running);
        let mut live = Live {
            lines: snap.lines_of(tally),
            ..Live::default()
        };
        numbers(snap, tally, &mut live);
        Some(Reading { live, view: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::matches::job::SPRT;
    use std::io::Write;

    const HEAD: &str = "pair,game,opening,seed,white,black,result,termination,plies,white_nodes,black_nodes,duration_ms\n";

    fn row(pair: u64, game: u8, result: &str) -> String {
        let (w, b) = if game == 0 {
            ("dev", "base")
        } else {
            ("base", "dev")
        };
        format!("{pair},{game},{pair},7,{w},{b},{result},checkmate,80,1000,1000,500\n")
    }

    fn whole(path: &std::path::Path) -> Live {
        let mut r = reader(&SPRT, &run(path));
        r.update().expect("a first reading").live
    }

    fn run(path: &std::path::Path) -> LiveRun {
        LiveRun {
            file: path.to_path_buf(),
            cluster: None,
            words: Vec::new(),
        }
    }

    #[test]
    fn appended_rows_give_the_numbers_of_a_whole_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.csv");
        std::fs::write(&path, HEAD).unwrap();
        let mut r = reader(&SPRT, &run(&path));
        assert_eq!(r.update().unwrap().live.games, Some(0));
        assert!(r.update().is_none(), "nothing changed");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        for k in 0..40u64 {
            let res = ["1-0", "0-1", "1/2-1/2"][(k % 3) as usize];
            f.write_all(row(k, 0, res).as_bytes()).unwrap();
            // Half a row: not counted yet.
            let second = row(k, 1, "1-0");
            let (a, b) = second.split_at(10);
            f.write_all(a.as_bytes()).unwrap();
            let mid = r.update().map(|x| x.live);
            if let Some(mid) = mid {
                assert_eq!(mid, whole(&path), "pair {k}, half written");
            }
            f.write_all(b.as_bytes()).unwrap();
            let now = r.update().expect("a new pair").live;
            assert_eq!(now, whole(&path), "after pair {k}");
            assert_eq!(now.games, Some(2 * (k + 1)));
        }
    }

    #[test]
    fn a_file_rewritten_or_cut_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.csv");
        let rows: String = (0..10)
            .flat_map(|k| [row(k, 0, "1-0"), row(k, 1, "1-0")])
            .collect();
        std::fs::write(&path, format!("{HEAD}{rows}")).unwrap();
        let mut r = reader(&SPRT, &run(&path));
        assert_eq!(r.update().unwrap().live.games, Some(20));
        // Cut back to 4 pairs (a resume that keeps fewer games).
        let short: String = (0..4)
            .flat_map(|k| [row(k, 0, "0-1"), row(k, 1, "0-1")])
            .collect();
        std::fs::write(&path, format!("{HEAD}{short}")).unwrap();
        let now = r.update().unwrap().live;
        assert_eq!(now.games, Some(8));
        assert_eq!(now, whole(&path));
        // Rewritten longer with other games: the bytes where the read ended differ.
        let other: String = (0..12)
            .flat_map(|k| [row(k, 0, "1/2-1/2"), row(k, 1, "0-1")])
            .collect();
        std::fs::write(&path, format!("{HEAD}{other}")).unwrap();
        let now = r.update().unwrap().live;
        assert_eq!(now, whole(&path));
        assert_eq!((now.games, now.wins), (Some(24), Some(12)));
        // Gone: no numbers; back: read again.
        std::fs::remove_file(&path).unwrap();
        assert_eq!(r.update().unwrap().live, Live::default());
        std::fs::write(&path, format!("{HEAD}{short}")).unwrap();
        assert_eq!(r.update().unwrap().live.games, Some(8));
    }

    #[test]
    fn a_bad_row_shows_no_numbers_as_spar_status_shows_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.csv");
        std::fs::write(&path, format!("{HEAD}{}", row(0, 0, "1-0"))).unwrap();
        let mut r = reader(&SPRT, &run(&path));
        assert_eq!(r.update().unwrap().live.games, Some(0));
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"not,a,row\n").unwrap();
        assert!(crate::cluster::csv_tail::of_csv(&path).is_err());
        assert_eq!(r.update().unwrap().live, Live::default());
        assert!(r.update().is_none(), "the same bad file is not read again");
    }
}
