//! The router: every route of the server, in one place, all behind the body limits and the
//! accounts guard.

use axum::routing::{get, post};
use axum::{middleware, Router};

use super::accounts::guard;
use super::handlers::{
    accounts, api, engines, files, forms, index_stream, machines, nets, ops, pages, stream, watch,
};
use super::limits;
use super::state::Shared;

/// The server's routes.
pub fn build(state: Shared) -> Router {
    Router::new()
        // Pages.
        .route("/", get(pages::index))
        .route("/search", get(pages::search))
        .route("/runs", post(forms::submit))
        .route("/runs/{id}", get(pages::run))
        .route("/runs/{id}/row", get(pages::row))
        .route("/runs/{id}/status.html", get(files::status_page))
        .route("/runs/{id}/files/{name}", get(files::download))
        .route("/runs/{id}/approve", post(forms::approve))
        .route("/runs/{id}/stop", post(forms::stop))
        .route("/runs/{id}/resume", post(forms::resume))
        .route("/runs/{id}/priority", post(forms::priority))
        .route("/runs/{id}/note", post(forms::note))
        .route("/runs/{id}/delete", post(forms::delete))
        .route("/engines", get(engines::index).post(engines::submit))
        .route("/engines/{name}/edit", post(engines::edit_form))
        .route("/engines/{name}/remove", post(engines::remove_form))
        .route("/engines/{name}/approve", post(engines::approve_form))
        .route(
            "/engines/{name}/watch",
            get(watch::settings_page).post(watch::settings_form),
        )
        .route("/engines/{name}/unwatch", post(watch::unwatch_form))
        .route("/engines/{name}/progression", get(watch::progression_page))
        .route("/nets", get(nets::index).post(nets::upload_form))
        .route("/nets/default", post(nets::default_form))
        .route("/nets/{name}/remove", post(nets::remove_form))
        .route("/events", get(ops::events))
        .route("/actions", get(ops::actions))
        .route("/machines", get(ops::machines))
        .route("/machines/{name}/exclude", post(machines::exclude_form))
        // The JSON API.
        .route("/api/runs", get(api::list).post(api::submit))
        .route("/api/runs/{id}", get(api::get).delete(api::delete))
        .route("/api/runs/{id}/events", get(stream::events))
        .route("/api/runs/{id}/approve", post(api::approve))
        .route("/api/runs/{id}/stop", post(api::stop))
        .route("/api/runs/{id}/resume", post(api::resume))
        .route("/api/runs/{id}/priority", post(api::priority))
        .route("/api/runs/{id}/note", post(api::note))
        .route("/api/engines", get(engines::list).post(engines::register))
        .route(
            "/api/engines/{name}",
            get(engines::get)
                .patch(engines::patch)
                .delete(engines::remove),
        )
        .route("/api/engines/{name}/approve", post(engines::approve))
        .route("/api/engines/{name}/net", post(nets::set_default))
        .route(
            "/api/engines/{name}/watch",
            get(watch::get).put(watch::put).delete(watch::delete),
        )
        .route("/api/engines/{name}/push", post(watch::push))
        .route(
            "/api/engines/{name}/progression",
            get(watch::api_progression),
        )
        .route("/api/nets", get(nets::list).post(nets::upload))
        .route("/api/nets/{name}", get(nets::get).delete(nets::remove))
        .route("/api/events", get(ops::api_events))
        .route("/api/events/runs", get(index_stream::events))
        .route("/api/actions", get(ops::api_actions))
        .route("/api/machines", get(ops::api_machines))
        .route("/api/machines/{name}/exclude", post(machines::exclude))
        // Accounts.
        .route("/favicon.ico", get(pages::favicon))
        .route("/login", get(accounts::login_form).post(accounts::login))
        .route("/logout", post(accounts::logout))
        .route("/signup", get(accounts::signup_form).post(accounts::signup))
        .route("/account", get(accounts::account))
        .route("/account/tokens", post(accounts::new_token))
        .route("/account/tokens/{id}/revoke", post(accounts::revoke_token))
        .route("/users", get(accounts::users))
        .route("/users/{name}/accept", post(accounts::accept))
        .route("/users/{name}/reject", post(accounts::reject))
        .route("/users/{name}/trust", post(accounts::trust))
        // Every request, of every route above and of any added later, passes the guard:
        // the caller, and on a server with accounts sign-in and CSRF (a run's owner is checked
        // by the run routes' extractor, serve/accounts/run_access.rs).
        .layer(middleware::from_fn_with_state(state.clone(), guard::guard))
        // Every request body bounded by its route's class, before anything (the guard
        // included) reads it; no NUL byte or invalid UTF-8 in what it says.
        .layer(middleware::from_fn(limits::bound))
        // Every refusal of the API as JSON, its message bounded (serve/api_errors.rs).
        .layer(middleware::from_fn(super::api_errors::json_refusals))
        // Around everything: the security headers of every answer (serve/headers.rs).
        .layer(middleware::from_fn(super::headers::secure))
        .with_state(state)
}
