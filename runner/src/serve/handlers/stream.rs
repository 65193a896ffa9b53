//! `GET /api/runs/{id}/events`: a run's live updates as Server-Sent Events — its JSON
//! (what `GET /api/runs/{id}` answers) whenever it changes, checked every second, with a
//! keep-alive; the stream ends once the run is finished, stopped, failed or deleted (or the
//! server stops). At most [`MAX_STREAMS`] streams are open at once; beyond, a 503.

use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::api::run_json;
use super::ApiError;
use crate::serve::accounts::run_access::RunId;
use crate::serve::actions;
use crate::serve::state::Shared;

/// The most live streams open at once.
pub const MAX_STREAMS: usize = 256;

/// How often a stream looks at its run.
pub(super) const EVERY: Duration = Duration::from_secs(1);

/// One open stream, counted in `AppState::streams` while it lives.
pub(super) struct Slot(pub(super) Shared);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.streams.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A stream's state between its events.
struct Watch {
    slot: Slot,
    id: i64,
    /// The JSON last sent.
    last: Option<String>,
    first: bool,
    done: bool,
}

/// Whether a run in `state` still changes.
fn plays(state: &str) -> bool {
    matches!(state, "queued" | "running")
}

/// The run's JSON now (`None`: no such run, or deleted).
async fn look(st: &Shared, id: i64) -> Option<serde_json::Value> {
    let st = st.clone();
    tokio::task::spawn_blocking(move || actions::get(&st, id).ok().map(|r| run_json(&st, &r)))
        .await
        .ok()
        .flatten()
}

/// The next event of `w`, or `None` when the stream ends.
async fn next(mut w: Watch) -> Option<(Result<Event, Infallible>, Watch)> {
    if w.done {
        return None;
    }
    loop {
        if !w.first {
            tokio::time::sleep(EVERY).await;
        }
        w.first = false;
        if w.slot.0.closing.load(Ordering::SeqCst) {
            return None;
        }
        let Some(v) = look(&w.slot.0, w.id).await else {
            w.done = true;
            let gone = json!({ "id": w.id, "state": "deleted" }).to_string();
            return Some((Ok(Event::default().data(gone)), w));
        };
        let text = v.to_string();
        let ended = !plays(v["state"].as_str().unwrap_or(""));
        if ended || w.last.as_deref() != Some(text.as_str()) {
            w.done = ended;
            let event = Event::default().data(&text);
            w.last = Some(text);
            return Some((Ok(event), w));
        }
    }
}

/// Takes one of the [`MAX_STREAMS`] places (held while the [`Slot`] lives), or answers the
/// 503 that says to poll `poll` instead.
pub(super) fn open(st: &Shared, poll: &str) -> Result<Slot, Box<Response>> {
    if st.streams.fetch_add(1, Ordering::SeqCst) >= MAX_STREAMS {
        st.streams.fetch_sub(1, Ordering::SeqCst);
        let message = format!("too many live streams open ({MAX_STREAMS}); poll {poll}");
        return Err(Box::new(
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "error": message })),
            )
                .into_response(),
        ));
    }
    Ok(Slot(st.clone()))
}

/// `GET /api/runs/{id}/events` (`text/event-stream`).
pub async fn events(State(st): State<Shared>, RunId(id): RunId) -> Response {
    if let Err(e) = actions::get(&st, id) {
        return ApiError(e).into_response();
    }
    let slot = match open(&st, &format!("/api/runs/{id}")) {
        Ok(slot) => slot,
        Err(refused) => return *refused,
    };
    let w = Watch {
        slot,
        id,
        last: None,
        first: true,
        done: false,
    };
    Sse::new(futures_util::stream::unfold(w, next))
        .keep_alive(KeepAlive::default())
        .into_response()
}
