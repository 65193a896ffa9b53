//! The password hashes of sign-ins and sign-ups, computed on a small pool of their own.
//!
//! An argon2id hash takes 19 MiB of memory and tens of milliseconds of a core. Computed on
//! any thread, 32 sign-ins at once took the server from 280 MiB to 1.4 GiB, and it stayed
//! there (each thread's allocator kept its block). Here at most [`THREADS`] hashes run at
//! once, on the same threads every time, and at most [`QUEUE`] wait; a sign-in beyond that
//! is answered at once with "busy" (503) instead of growing the server.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex, OnceLock};

/// The hashes computed at once.
pub const THREADS: usize = 2;

/// The hashes waiting for a thread; one more is refused.
pub const QUEUE: usize = 64;

/// The pool was full (or is gone): the caller answers 503.
#[derive(Debug)]
pub struct Busy;

/// What a sign-in refused as [`Busy`] is told.
pub const BUSY: &str = "the server is busy checking other sign-ins: try again in a few seconds";

type Job = Box<dyn FnOnce() + Send>;

fn pool() -> &'static SyncSender<Job> {
    static POOL: OnceLock<SyncSender<Job>> = OnceLock::new();
    POOL.get_or_init(|| {
        let (tx, rx) = sync_channel::<Job>(QUEUE);
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..THREADS {
            let rx = rx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("password-hash-{i}"))
                .spawn(move || work(&rx));
            if let Err(e) = spawned {
                eprintln!("spar serve: cannot start a password-hash thread: {e}");
            }
        }
        tx
    })
}

fn work(rx: &Mutex<Receiver<Job>>) {
    loop {
        let job = match rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

/// Runs `f` (a hash or its check) on the pool: its value, or [`Busy`] when [`QUEUE`]
/// others wait already.
pub async fn run<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, Busy> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _ = tx.send(f());
    });
    pool().try_send(job).map_err(|_| Busy)?;
    rx.await.map_err(|_| Busy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_at_most_threads_at_once_and_the_queue_is_bounded() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let (hold_tx, hold_rx) = std::sync::mpsc::channel::<()>();
            let hold = Arc::new(Mutex::new(hold_rx));
            let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let mut waiting = Vec::new();
            let mut busy = 0;
            for _ in 0..THREADS + QUEUE + 10 {
                let (hold, running, most) = (hold.clone(), running.clone(), most.clone());
                let job = move || {
                    use std::sync::atomic::Ordering::SeqCst;
                    let now = running.fetch_add(1, SeqCst) + 1;
                    most.fetch_max(now, SeqCst);
                    let _ = hold.lock().unwrap().recv();
                    running.fetch_sub(1, SeqCst);
                };
                let (tx, rx) = tokio::sync::oneshot::channel();
                let boxed: Job = Box::new(move || {
                    job();
                    let _ = tx.send(());
                });
                match pool().try_send(boxed) {
                    Ok(()) => waiting.push(rx),
                    Err(_) => busy += 1,
                }
            }
            // The threads take at most THREADS jobs off the queue: 10 are always refused.
            assert!(busy >= 10, "{busy}");
            assert!(waiting.len() <= THREADS + QUEUE, "{}", waiting.len());
            for _ in 0..waiting.len() {
                hold_tx.send(()).unwrap();
            }
            for rx in waiting {
                rx.await.unwrap();
            }
            let most = most.load(std::sync::atomic::Ordering::SeqCst);
            assert!((1..=THREADS).contains(&most), "{most}");
            assert_eq!(run(|| 6 * 7).await.unwrap(), 42);
        });
    }
}
