//! `GET /api/events/runs`: the index's live updates as Server-Sent Events — each queued or
//! running run's JSON (what `GET /api/runs/{id}` answers) whenever it changes, checked
//! every second (the first look sends them all), and a run's last event when it leaves the
//! queue (finished, stopped, failed; `{"id": ID, "state": "deleted"}` when deleted). Runs
//! submitted later appear as they come. The stream lives until the client leaves or the
//! server stops; it takes one of the same [`super::stream::MAX_STREAMS`] places as a run's
//! stream.

use std::collections::{HashMap, HashSet, VecDeque};
use std::convert::Infallible;
use std::sync::atomic::Ordering;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::api::run_json;
use super::stream::{open, Slot, EVERY};
use crate::serve::actions;
use crate::serve::state::Shared;

/// The index stream's state between its events.
struct Watch {
    slot: Slot,
    /// The JSON last sent of each run still queued or running.
    sent: HashMap<i64, String>,
    /// Events found by the last look, not sent yet.
    queue: VecDeque<String>,
    first: bool,
}

/// The JSON of every queued or running run now and of the runs in `known` that left the
/// queue since (`None`: deleted), oldest first.
fn look(st: &Shared, known: &[i64]) -> Vec<(i64, bool, String)> {
    let active = st.store.blocking(|db| db.active()).unwrap_or_default();
    let ids: HashSet<i64> = active.iter().map(|r| r.id).collect();
    let mut out: Vec<(i64, bool, String)> = active
        .iter()
        .map(|r| (r.id, true, run_json(st, r).to_string()))
        .collect();
    for &id in known.iter().filter(|id| !ids.contains(id)) {
        let text = match actions::get(st, id) {
            Ok(r) => run_json(st, &r).to_string(),
            Err(_) => json!({ "id": id, "state": "deleted" }).to_string(),
        };
        out.push((id, false, text));
    }
    out.sort_by_key(|x| x.0);
    out
}

/// The next event of `w`, or `None` when the server stops.
async fn next(mut w: Watch) -> Option<(Result<Event, Infallible>, Watch)> {
    loop {
        if let Some(text) = w.queue.pop_front() {
            return Some((Ok(Event::default().data(text)), w));
        }
        if !w.first {
            tokio::time::sleep(EVERY).await;
        }
        w.first = false;
        if w.slot.0.closing.load(Ordering::SeqCst) {
            return None;
        }
        let st = w.slot.0.clone();
        let known: Vec<i64> = w.sent.keys().copied().collect();
        let now = tokio::task::spawn_blocking(move || look(&st, &known))
            .await
            .unwrap_or_default();
        for (id, plays, text) in now {
            if !plays {
                w.sent.remove(&id);
                w.queue.push_back(text);
            } else if w.sent.get(&id) != Some(&text) {
                w.sent.insert(id, text.clone());
                w.queue.push_back(text);
            }
        }
    }
}

/// `GET /api/events/runs` (`text/event-stream`).
pub async fn events(State(st): State<Shared>) -> Response {
    let slot = match open(&st, "/api/runs?state=running") {
        Ok(slot) => slot,
        Err(refused) => return *refused,
    };
    let w = Watch {
        slot,
        sent: HashMap::new(),
        queue: VecDeque::new(),
        first: true,
    };
    Sse::new(futures_util::stream::unfold(w, next))
        .keep_alive(KeepAlive::default())
        .into_response()
}
