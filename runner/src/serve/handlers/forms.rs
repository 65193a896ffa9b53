//! The pages' forms (POST, then a redirect to the page: the browser's back and reload do
//! not post again). A refusal shows the page again with the message and a 4xx.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use super::blocking;
use super::pages::index_with;
use crate::serve::accounts::run_access::OwnRun;
use crate::serve::accounts::Caller;
use crate::serve::actions::{self, Refusal, Submit};
use crate::serve::form_words::{engine_words, EngineFields};
use crate::serve::pages::html::{esc, layout, Page};
use crate::serve::pages::index::FormState;
use crate::serve::pages::split_words;
use crate::serve::state::Shared;

/// The new-run form's fields.
#[derive(Deserialize)]
pub struct NewRunForm {
    pub kind: String,
    pub words: String,
    #[serde(default)]
    pub priority: String,
    #[serde(default)]
    pub throughput: String,
    #[serde(default)]
    pub note: String,
    /// The engine fields (OpenBench's dev and base): empty, `:spar` or a registered name.
    #[serde(default)]
    pub engine: String,
    #[serde(default)]
    pub dev_rev: String,
    #[serde(default)]
    pub dev_bench: String,
    #[serde(default)]
    pub dev_words: String,
    #[serde(default)]
    pub base_rev: String,
    #[serde(default)]
    pub base_bench: String,
    #[serde(default)]
    pub base_words: String,
}

impl NewRunForm {
    /// The run's words: the engine fields' engines, then the words field's words.
    fn words(&self) -> Result<Vec<String>, String> {
        let side =
            |what: &str, text: &str| split_words(text).map_err(|e| format!("{what} words: {e}"));
        let fields = EngineFields {
            engine: self.engine.trim().to_string(),
            dev_rev: self.dev_rev.trim().to_string(),
            dev_bench: self.dev_bench.trim().to_string(),
            dev_words: side("dev", &self.dev_words)?,
            base_rev: self.base_rev.trim().to_string(),
            base_bench: self.base_bench.trim().to_string(),
            base_words: side("base", &self.base_words)?,
        };
        engine_words(&fields, split_words(&self.words)?)
    }
}

fn number(field: &str, text: &str) -> Result<Option<i64>, Refusal> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    t.parse()
        .map(Some)
        .map_err(|_| Refusal::Bad(format!("{field} '{t}': not a whole number")))
}

fn status(r: &Refusal) -> StatusCode {
    StatusCode::from_u16(r.status()).unwrap_or(StatusCode::BAD_REQUEST)
}

/// A refusal of an action on a run's page: the message, a link back, the status.
fn refused(page: &Page, id: i64, r: &Refusal) -> Response {
    let body = format!(
        "<p class=\"err\" id=\"error\">{}</p><p><a href=\"/runs/{id}\">Back to run {id}</a></p>",
        esc(r.message())
    );
    (status(r), Html(layout(page, "Refused", &body, ""))).into_response()
}

/// `POST /runs`: a new run from the index's form.
pub async fn submit(
    State(st): State<Shared>,
    caller: Caller,
    Form(f): Form<NewRunForm>,
) -> Response {
    let parsed = (|| {
        Ok::<_, Refusal>(Submit {
            kind: f.kind.clone(),
            words: f.words().map_err(Refusal::Bad)?,
            priority: number("priority", &f.priority)?,
            throughput: number("throughput", &f.throughput)?,
            note: Some(f.note.clone()),
            owner: caller.name().map(String::from),
        })
    })();
    let result = match parsed {
        Ok(s) => blocking(&st, move |st| actions::submit(st, &s)).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(run) => Redirect::to(&format!("/runs/{}", run.id)).into_response(),
        Err(r) => {
            let form = FormState {
                kind: f.kind,
                words: f.words,
                priority: f.priority,
                throughput: f.throughput,
                note: f.note,
                engine: f.engine,
                dev_rev: f.dev_rev,
                dev_bench: f.dev_bench,
                dev_words: f.dev_words,
                base_rev: f.base_rev,
                base_bench: f.base_bench,
                base_words: f.base_words,
                error: Some(r.message().to_string()),
            };
            index_with(&st, &Page::of(&caller), &form, status(&r))
        }
    }
}

fn back(c: &Caller, id: i64, r: Result<impl Sized, Refusal>) -> Response {
    match r {
        Ok(_) => Redirect::to(&format!("/runs/{id}")).into_response(),
        Err(e) => refused(&Page::of(c), id, &e),
    }
}

/// `POST /runs/{id}/approve` (approvers and admins, never the run's owner).
pub async fn approve(State(st): State<Shared>, OwnRun { id, caller: c }: OwnRun) -> Response {
    back(&c, id, actions::approve(&st, id, &c))
}

/// `POST /runs/{id}/stop`.
pub async fn stop(State(st): State<Shared>, OwnRun { id, caller: c }: OwnRun) -> Response {
    back(&c, id, actions::stop(&st, id, c.name()))
}

/// `POST /runs/{id}/resume`.
pub async fn resume(State(st): State<Shared>, OwnRun { id, caller: c }: OwnRun) -> Response {
    back(&c, id, actions::resume(&st, id, c.name()))
}

/// The priority form's fields.
#[derive(Deserialize)]
pub struct PriorityForm {
    pub priority: String,
    pub throughput: String,
}

/// `POST /runs/{id}/priority`.
pub async fn priority(
    State(st): State<Shared>,
    OwnRun { id, caller: c }: OwnRun,
    Form(f): Form<PriorityForm>,
) -> Response {
    let r = (|| {
        let p = number("priority", &f.priority)?.unwrap_or(0);
        let t = number("throughput", &f.throughput)?.unwrap_or(actions::DEFAULT_THROUGHPUT);
        actions::priority(&st, id, p, t, c.name())
    })();
    back(&c, id, r)
}

/// The note form's field.
#[derive(Deserialize)]
pub struct NoteForm {
    pub note: String,
}

/// `POST /runs/{id}/note`.
pub async fn note(
    State(st): State<Shared>,
    OwnRun { id, caller: c }: OwnRun,
    Form(f): Form<NoteForm>,
) -> Response {
    back(&c, id, actions::note(&st, id, &f.note, c.name()))
}

/// `POST /runs/{id}/delete`: then to the index (the run's page is gone).
pub async fn delete(State(st): State<Shared>, OwnRun { id, caller: c }: OwnRun) -> Response {
    let by = c.name().map(String::from);
    match blocking(&st, move |st| actions::delete(st, id, by.as_deref())).await {
        Ok(_) => Redirect::to("/").into_response(),
        Err(e) => refused(&Page::of(&c), id, &e),
    }
}
