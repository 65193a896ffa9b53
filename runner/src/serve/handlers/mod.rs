//! The HTTP handlers, one file per area: the JSON API of runs ([`api`]), the pages'
//! forms ([`forms`]), the pages ([`pages`]) and a run's files ([`files`]).

pub mod accounts;
pub mod api;
pub mod engines;
pub mod files;
pub mod forms;
pub mod index_stream;
pub mod machines;
pub mod nets;
pub mod ops;
pub mod pages;
pub mod stream;
pub mod watch;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::actions::Refusal;
use super::state::Shared;

/// A refusal as the API answers it: its status and `{"error": message}`.
pub struct ApiError(pub Refusal);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.0.status()).unwrap_or(StatusCode::BAD_REQUEST);
        (code, Json(serde_json::json!({ "error": self.0.message() }))).into_response()
    }
}

impl From<Refusal> for ApiError {
    fn from(r: Refusal) -> Self {
        ApiError(r)
    }
}

/// Runs a blocking action off the async threads.
pub async fn blocking<T: Send + 'static>(
    st: &Shared,
    f: impl FnOnce(&super::state::AppState) -> Result<T, Refusal> + Send + 'static,
) -> Result<T, Refusal> {
    let st = st.clone();
    tokio::task::spawn_blocking(move || f(&st))
        .await
        .map_err(|e| Refusal::Internal(format!("the action failed: {e}")))?
}
