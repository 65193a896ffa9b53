//! Machines you can trust (issue 32): the server's own host (its name, its `spar bench`
//! speed measured once at start, in the background), the machines an admin excluded
//! (checked names: an excluded local host starts nothing; excluded Slurm nodes go to
//! `sbatch --exclude`), and the flags of a run's residuals ([`super::residuals`]) written
//! to the event log once.

use std::process::{Command, Stdio};
use std::sync::Mutex;

use super::db::Db;
use super::residuals::Machines;

/// The server's host name: the local backend's one machine.
pub fn host() -> String {
    crate::cluster::machine_name(&|_| None)
}

/// Checks a machine's name (a host or Slurm node name): 1 to 64 letters, digits, `.`,
/// `_`, `-`, not starting with `-`.
pub fn check_name(name: &str) -> Result<(), String> {
    let plain = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if plain {
        Ok(())
    } else {
        Err(format!(
            "machine '{}': not a machine name (1 to 64 letters, digits, '.', '_' or '-', as \
             the machines page or `sinfo -N` lists them)",
            name.chars().take(80).collect::<String>()
        ))
    }
}

/// Whether an admin excluded the server's host.
pub fn local_excluded(db: &Mutex<Db>) -> bool {
    db.lock()
        .expect("db lock")
        .is_excluded(&host())
        .unwrap_or(false)
}

/// Reads `N nodes M nps` (the last line of `spar bench`): M.
pub fn parse_nps(text: &str) -> Option<u64> {
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?;
    let w: Vec<&str> = line.split_whitespace().collect();
    match w.as_slice() {
        [_, "nodes", nps, "nps"] => nps.parse().ok(),
        _ => None,
    }
}

/// Measures this host's `spar bench` speed once, on a thread of its own (the spar that
/// runs the server, an argument vector), and records it; a bench that fails leaves it
/// unknown (`–` on the machines page).
pub fn measure_local(db: std::sync::Arc<Mutex<Db>>) {
    std::thread::spawn(move || {
        let host = host();
        let out = std::env::current_exe().and_then(|exe| {
            Command::new(exe)
                .arg("bench")
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .output()
        });
        // Stored quietly (the machines page shows it): the event log is for what happens
        // to runs and to the server's machines' standing.
        if let Some(nps) = out
            .ok()
            .and_then(|o| parse_nps(&String::from_utf8_lossy(&o.stdout)))
        {
            let _ = db.lock().expect("db lock").set_nps(&host, nps);
        }
    });
}

/// Writes each flagged shard and machine of run `run` to the event log, once.
pub fn note_flags(db: &Mutex<Db>, run: i64, m: &Machines) {
    let db = db.lock().expect("db lock");
    for r in m.flagged() {
        let what = match r.shard {
            Some(i) => format!("shard {i}"),
            None => format!("machine {}", r.machine),
        };
        if db.flag_once(run, &what).unwrap_or(false) {
            let on = r
                .shard
                .map_or(String::new(), |_| format!(" (on {})", r.machine));
            let _ = db.event(
                Some(run),
                "machine",
                &format!(
                    "run {run}: {what}{on} flagged: residual {:.2} over {} games, score {:.3}",
                    r.residual.unwrap_or(0.0),
                    r.games,
                    r.score.unwrap_or(0.0)
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_and_the_bench_line_read() {
        assert!(check_name("node-1.cluster_a").is_ok());
        for bad in ["", "-x", "a b", "a,b", "a;rm", &"n".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_nps("386615 nodes 2560134 nps\n"), Some(2560134));
        assert_eq!(parse_nps("x\n386615 nodes 12 nps\n\n"), Some(12));
        assert_eq!(parse_nps("nothing"), None);
        assert!(!host().is_empty());
    }
}
