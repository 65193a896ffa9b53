//! The one live progress display of long runs (indicatif, on stderr): a bar of games,
//! positions or iterations with a status message. Off with `--quiet`; when stderr is not a
//! terminal, a plain line is printed every 10 s instead.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often the plain (non-terminal) display prints a line.
const PLAIN_EVERY: Duration = Duration::from_secs(10);

/// A progress display. Shared by reference: every method takes `&self`.
pub struct Progress {
    bar: Option<ProgressBar>,
    plain: bool,
    unit: &'static str,
    started: Instant,
    last_plain: Mutex<Instant>,
    position: AtomicU64,
    at_start: u64,
    total: Option<u64>,
}

impl Progress {
    /// A display counting `unit`s (e.g. "games") up to `total` (`None`: unbounded), with
    /// `already` of them done before this run.
    pub fn new(quiet: bool, unit: &'static str, total: Option<u64>, already: u64) -> Progress {
        let tty = std::io::stderr().is_terminal();
        let bar = (!quiet && tty).then(|| {
            let bar = match total {
                Some(t) => ProgressBar::new(t),
                None => ProgressBar::new_spinner(),
            };
            bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
            let template = if total.is_some() {
                format!("{{spinner}} [{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} {unit} ({{per_sec}}) {{msg}}")
            } else {
                format!("{{spinner}} [{{elapsed_precise}}] {{pos}} {unit} ({{per_sec}}) {{msg}}")
            };
            bar.set_style(
                ProgressStyle::with_template(&template)
                    .expect("template")
                    .progress_chars("=> "),
            );
            bar.set_position(already);
            bar.reset_eta();
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        Progress {
            bar,
            plain: !quiet && !tty,
            unit,
            started: Instant::now(),
            last_plain: Mutex::new(Instant::now()),
            position: AtomicU64::new(already),
            at_start: already,
            total,
        }
    }

    /// One more unit done.
    pub fn inc(&self) {
        let n = self.position.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(bar) = &self.bar {
            bar.set_position(n);
        }
    }

    /// Units done so far.
    pub fn set_position(&self, n: u64) {
        self.position.store(n, Ordering::Relaxed);
        if let Some(bar) = &self.bar {
            bar.set_position(n);
        }
    }

    /// A new status message; the plain display prints it at most every 10 s.
    pub fn set_message(&self, line: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(line.to_string());
        } else if self.plain {
            let mut last = self.last_plain.lock().unwrap_or_else(|e| e.into_inner());
            if last.elapsed() >= PLAIN_EVERY {
                *last = Instant::now();
                eprintln!("{}", self.plain_line(line));
            }
        }
    }

    fn plain_line(&self, line: &str) -> String {
        let n = self.position.load(Ordering::Relaxed);
        let secs = self.started.elapsed().as_secs_f64();
        let rate = (n - self.at_start.min(n)) as f64 / secs.max(1e-9);
        let total = self.total.map_or(String::new(), |t| format!("/{t}"));
        format!("[{secs:.0}s] {n}{total} {} ({rate:.2}/s) {line}", self.unit)
    }

    /// Prints a line on stderr above the bar (unless quiet).
    pub fn println(&self, line: &str) {
        if let Some(bar) = &self.bar {
            bar.println(line);
        } else if self.plain {
            eprintln!("{line}");
        }
    }

    /// Prints a warning on stderr: above the bar, or plainly when there is none (also when
    /// quiet).
    pub fn warn(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_line_counts_from_the_start_of_this_run() {
        let p = Progress::new(true, "games", Some(100), 40);
        p.inc();
        p.inc();
        let line = p.plain_line("W-L-D 1-1-0");
        assert!(line.contains("42/100 games"), "{line}");
        assert!(line.ends_with("W-L-D 1-1-0"), "{line}");
    }
}
