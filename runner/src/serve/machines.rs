//! Machines you can trust (issue 32): the server's own host (its name, its `spar bench`
//! speed measured once at start, in the background), the machines an admin excluded
//! (checked names: an excluded local host starts nothing; excluded Slurm nodes go to
//! `sbatch --exclude`), and the flags of a run's residuals ([`super::residuals`]) written
//! to the event log once.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use super::residuals::Machines;
use super::store::Store;

/// The server's host name: the local backend's one machine.
pub fn host() -> String {
    crate::cluster::machine_name(&|_| None)
}

/// Checks a machine's name (a host or Slurm node name): 1 to 64 letters, digits, `.`,
/// `_`, `-`, not starting with `-`.
pub fn check_name(name: &str) -> Result<(), String> {
    super::names::is_plain(name, 64, &['-'])
        .then_some(())
        .ok_or_else(|| {
            format!(
                "machine '{}': not a machine name (1 to 64 letters, digits, '.', '_' or '-', \
                 as the machines page or `sinfo -N` lists them)",
                name.chars().take(80).collect::<String>()
            )
        })
}

/// Whether an admin excluded the server's host.
pub fn local_excluded(store: &Store) -> bool {
    store
        .blocking(|db| db.is_excluded(&host()))
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

/// Set while this start's measure of the host's speed runs (a `--scale-nps` run waits
/// for it).
static MEASURING: AtomicBool = AtomicBool::new(false);

/// The test hook that fixes the host's speed without a bench: read by the server only,
/// for tests of clock scaling that must not depend on this machine's speed.
pub const HOST_NPS_ENV: &str = "SPAR_SERVE_HOST_NPS";

/// Whether the host's speed is being measured now.
pub fn measuring() -> bool {
    MEASURING.load(Ordering::SeqCst)
}

/// The host's bench speed as recorded (`None`: never measured, or its bench failed).
pub fn local_nps(store: &Store) -> Option<u64> {
    let host = host();
    let machines = store.blocking(|db| db.machines()).ok()?;
    machines.into_iter().find(|m| m.name == host)?.nps
}

/// Measures this host's `spar bench` speed once, on a thread of its own (the spar that
/// runs the server, an argument vector), and records it; a bench that fails leaves it
/// unknown (`–` on the machines page). With [`HOST_NPS_ENV`] set to a number, that number
/// is recorded and no bench runs.
pub fn measure_local(store: Store) {
    MEASURING.store(true, Ordering::SeqCst);
    std::thread::spawn(move || {
        let host = host();
        let fixed = std::env::var(HOST_NPS_ENV)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|&n| n > 0);
        let nps = fixed.or_else(|| {
            let out = std::env::current_exe().and_then(|exe| {
                Command::new(exe)
                    .arg("bench")
                    .stdin(Stdio::null())
                    .stderr(Stdio::null())
                    .output()
            });
            out.ok()
                .and_then(|o| parse_nps(&String::from_utf8_lossy(&o.stdout)))
        });
        // Stored quietly (the machines page shows it): the event log is for what happens
        // to runs and to the server's machines' standing.
        if let Some(nps) = nps {
            let _ = store.blocking(|db| db.set_nps(&host, nps));
        }
        MEASURING.store(false, Ordering::SeqCst);
    });
}

/// Stores the bench speed each shard of the cluster run in `run_dir` measured on its node
/// (`shards/I/node` and `shards/I/nps`, written when the server's coordinator asked),
/// when it differs from the one stored.
pub fn note_shard_nps(store: &Store, run_dir: &std::path::Path, shards: u64) {
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok();
    let known = store.blocking(|db| db.machines()).unwrap_or_default();
    for i in 0..shards {
        let node = read(crate::cluster::shard_node(run_dir, i));
        let nps = read(crate::cluster::shard_nps(run_dir, i));
        let (Some(node), Some(nps)) = (node, nps) else {
            continue;
        };
        let (node, nps) = (node.trim(), nps.trim().parse::<u64>().ok());
        let Some(nps) = nps.filter(|&n| n > 0) else {
            continue;
        };
        let same = known.iter().any(|m| m.name == node && m.nps == Some(nps));
        if check_name(node).is_ok() && !same {
            let _ = store.blocking(|db| db.set_nps(node, nps));
        }
    }
}

/// Writes each flagged shard and machine of run `run` to the event log, once.
pub fn note_flags(store: &Store, run: i64, m: &Machines) {
    let _ = store.blocking(|db| {
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
        Ok::<(), String>(())
    });
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
