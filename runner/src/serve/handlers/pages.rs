//! The pages' handlers: index, search, run.

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};

use super::files::listing;
use super::ApiError;
use crate::serve::accounts::run_access::RunId;
use crate::serve::db::runs::{Filter, Run, State as RunState};
use crate::serve::live::{self, Live};
use crate::serve::pages::html::Page;
use crate::serve::pages::{self, index::FormState};
use crate::serve::state::Shared;
use crate::serve::{actions, engines, words};

/// The runs of `f`, each with its live numbers.
fn with_live(st: &Shared, f: &Filter) -> Result<Vec<(Run, Live)>, String> {
    let runs = st.store.blocking(|db| db.list(f))?;
    Ok(runs
        .into_iter()
        .map(|r| {
            let l = live::of(&st.cache, &st.store, &r);
            (r, l)
        })
        .collect())
}

fn internal(e: String) -> Response {
    (StatusCode::INTERNAL_SERVER_ERROR, e).into_response()
}

/// The index page for `page`'s caller with the form as given (`code`: 200, or the
/// refusal's status).
pub fn index_with(st: &Shared, page: &Page, form: &FormState, code: StatusCode) -> Response {
    let f = Filter {
        limit: Some(200),
        ..Filter::default()
    };
    let engines = st.store.blocking(|db| db.engines()).map(|all| {
        all.into_iter()
            .filter(|e| e.removed.is_none())
            .map(|e| e.name)
            .collect::<Vec<_>>()
    });
    match with_live(st, &f).and_then(|runs| Ok((runs, engines?))) {
        Ok((runs, engines)) => (
            code,
            Html(pages::index::page(
                page,
                &runs,
                &words::kinds(),
                &engines,
                st.sched.cores(),
                form,
                &pages::index::Notices {
                    disk: st.sched.space().banner(),
                    unrecorded: st.sched.unrecorded(),
                },
            )),
        )
            .into_response(),
        Err(e) => internal(e),
    }
}

/// `GET /`.
pub async fn index(State(st): State<Shared>, page: Page) -> Response {
    let form = FormState {
        kind: words::kinds()
            .first()
            .map_or(String::new(), |k| k.to_string()),
        priority: "0".into(),
        throughput: actions::DEFAULT_THROUGHPUT.to_string(),
        ..FormState::default()
    };
    index_with(&st, &page, &form, StatusCode::OK)
}

/// `GET /favicon.ico`: nothing (204), so a browser's request for it is no 404 in the log;
/// the pages name an empty icon (`<link rel="icon" href="data:,">`) and do not ask.
pub async fn favicon() -> StatusCode {
    StatusCode::NO_CONTENT
}

/// `GET /search?kind=&state=&q=&engine=&branch=&author=&verdict=&from=&to=`: a bad filter
/// is a 400 with the search form and the message.
pub async fn search(State(st): State<Shared>, pg: Page, Query(f): Query<Filter>) -> Response {
    let engines = registered(&st);
    if let Err(e) = f.check() {
        let page = pages::search::page(&pg, &f, &words::kinds(), &engines, &[], Some(&e));
        return (StatusCode::BAD_REQUEST, Html(page)).into_response();
    }
    match with_live(&st, &f) {
        Ok(runs) => Html(pages::search::page(
            &pg,
            &f,
            &words::kinds(),
            &engines,
            &runs,
            None,
        ))
        .into_response(),
        Err(e) => internal(e),
    }
}

/// The registered engines' names (removed ones too: their runs are still found).
fn registered(st: &Shared) -> Vec<String> {
    let all = st.store.blocking(|db| db.engines());
    all.map(|all| all.into_iter().map(|e| e.name).collect())
        .unwrap_or_default()
}

/// `GET /runs/{id}/row`: the run's row of the index (`<tr id="run-ID">`, as the index
/// renders it), for the index's live script to add a run submitted after the page loaded.
pub async fn row(State(st): State<Shared>, RunId(id): RunId) -> Response {
    match actions::get(&st, id) {
        Ok(run) => {
            let live = live::of(&st.cache, &st.store, &run);
            Html(pages::rows(&[(run, live)])).into_response()
        }
        Err(e) => ApiError::from(e).into_response(),
    }
}

/// `GET /runs/{id}`.
pub async fn run(State(st): State<Shared>, page: Page, RunId(id): RunId) -> Response {
    let run = match actions::get(&st, id) {
        Ok(r) => r,
        Err(e) => return (StatusCode::NOT_FOUND, e.message().to_string()).into_response(),
    };
    let dir = std::path::Path::new(&run.dir);
    // One read of the run's files for the whole page: its numbers, its status lines and a
    // tune's section are of one moment.
    let crate::live::Reading { live: l, view } = live::reading(&st.cache, &st.store, &run);
    let cluster = crate::serve::slurm::is_cluster_run(dir);
    let has_page = cluster
        || (run.kind.served_page().status_page
            && words::primary(&*run.kind, dir, &run.words).is_file());
    let command = match st.sched.slurm() {
        Some(s) => {
            let mut w = run.words.clone();
            let shards = crate::serve::slurm::shards_of(dir)
                .or(st.sched.cores_of(id).map(|n| n as u64))
                .unwrap_or(s.shards);
            w.extend(crate::serve::slurm::flags(dir, s, shards));
            words::command_line(&*run.kind, &w, dir)
        }
        None => words::command_line(&*run.kind, &run.words, dir),
    };
    let (st2, queued) = (st.clone(), run.state == RunState::Queued);
    let build_log = dir.join(crate::serve::builder::BUILD_LOG);
    let engines = tokio::task::spawn_blocking(move || {
        let rows = st2
            .store
            .blocking(|db| db.run_engines(id))
            .unwrap_or_default();
        let diff = engines::diff(&st2, &rows);
        let nets = st2.store.blocking(|db| db.run_nets(id));
        let log = std::fs::read_to_string(&build_log).unwrap_or_default();
        pages::engines::run_section(&rows, diff.as_ref(), queued, &log)
            + &pages::nets::run_section(&nets.unwrap_or_default())
    })
    .await
    .unwrap_or_default();
    let (kind, d) = (run.kind, dir.to_path_buf());
    let (st3, run3, l3) = (st.clone(), run.clone(), l.clone());
    let special = tokio::task::spawn_blocking(move || {
        let machines = super::machines::of_run(&st3, &run3, &l3);
        let special = kind.served_section(id, &d, view.as_deref());
        special + &machines.map_or(String::new(), |m| pages::ops::run_machines(&m))
    })
    .await
    .unwrap_or_default();
    Html(pages::run::page(
        &page,
        &run,
        &l,
        &listing(dir),
        &command,
        st.sched.cores_of(id),
        has_page,
        &(engines + &special),
    ))
    .into_response()
}
