//! An engine process with reader threads for its stdout and stderr, so every wait has a
//! deadline and end-of-file shows up at once.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::*;

pub(super) enum Recv {
    Line(String),
    Eof,
    Timeout,
}

/// A running engine process with its reader threads.
pub(super) struct Process {
    pub(super) child: Child,
    pub(super) stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
}

impl Process {
    pub(super) fn spawn(
        name: &str,
        cmd: &Path,
        args: &[String],
        dir: Option<&Path>,
    ) -> Result<Process, String> {
        let mut command = Command::new(cmd);
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        // Its own process group: a kill reaches whatever the engine started too (a wrapper
        // script's real engine), and a terminal's Ctrl-C reaches spar alone, which then
        // shuts the engines down itself.
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        let mut child = command.spawn().map_err(|e| {
            format!(
                "engine '{name}': cannot start '{}'{}: {e} (check cmd=, args= and dir=)",
                cmd.display(),
                dir.map(|d| format!(" in {}", d.display()))
                    .unwrap_or_default()
            )
        })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, lines) = mpsc::channel();
        // Reader threads are detached: a killed engine's orphaned children may keep the pipes
        // open, and nobody must wait for them.
        thread::Builder::new()
            .name("uci-stdout".into())
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    match reader.read_until(b'\n', &mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            let line = String::from_utf8_lossy(&buf);
                            if tx
                                .send(line.trim_end_matches(['\n', '\r']).to_string())
                                .is_err()
                            {
                                break;
                            }
                        }
                    }
                }
            })
            .map_err(|e| format!("engine '{name}': cannot start a reader thread: {e}"))?;
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail = stderr_tail.clone();
        thread::Builder::new()
            .name("uci-stderr".into())
            .spawn(move || {
                let reader = BufReader::new(stderr);
                for line in reader.split(b'\n') {
                    let Ok(line) = line else { break };
                    let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
                    if tail.len() == STDERR_TAIL {
                        tail.pop_front();
                    }
                    tail.push_back(String::from_utf8_lossy(&line).trim_end().to_string());
                }
            })
            .map_err(|e| format!("engine '{name}': cannot start a reader thread: {e}"))?;
        Ok(Process {
            child,
            stdin,
            lines,
            stderr_tail,
        })
    }

    pub(super) fn send(&mut self, line: &str) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        stdin.write_all(line.as_bytes())?;
        stdin.write_all(b"\n")?;
        stdin.flush()
    }

    pub(super) fn recv(&mut self, deadline: Instant) -> Recv {
        let timeout = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Recv::Line(line),
            Err(RecvTimeoutError::Timeout) => Recv::Timeout,
            Err(RecvTimeoutError::Disconnected) => Recv::Eof,
        }
    }

    /// ` (exit status …); stderr: …` for messages, waiting briefly for the exit.
    pub(super) fn exit_description(&mut self) -> String {
        let until = Instant::now() + Duration::from_millis(100);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < until => thread::sleep(Duration::from_millis(2)),
                _ => break None,
            }
        };
        let mut s = match status {
            Some(status) => format!(" ({status})"),
            None => String::new(),
        };
        // Give the stderr thread a moment to catch the last words.
        thread::sleep(Duration::from_millis(5));
        let tail = self.stderr_tail.lock().unwrap_or_else(|e| e.into_inner());
        if !tail.is_empty() {
            s.push_str("; stderr: ");
            s.push_str(&tail.iter().cloned().collect::<Vec<_>>().join(" | "));
        }
        s
    }

    /// Kills the process and everything in its process group (if still running) and reaps
    /// it.
    pub(super) fn kill(&mut self) {
        self.stdin = None;
        if let Ok(None) = self.child.try_wait() {
            kill_group(&mut self.child);
        }
        let _ = self.child.wait();
    }
}

/// SIGKILL to the child's process group (it leads one: see [`Process::spawn`]); the child
/// alone where groups do not exist.
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    {
        use nix::sys::signal::{killpg, Signal};
        use nix::unistd::Pid;
        if let Ok(pid) = i32::try_from(child.id()) {
            if killpg(Pid::from_raw(pid), Signal::SIGKILL).is_ok() {
                return;
            }
        }
    }
    let _ = child.kill();
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}
