//! A run's files: downloads confined to its directory (plain names of regular files that
//! are in it, nothing else), and the status page of its file.

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};

use crate::serve::accounts::run_access::RunId;
use crate::serve::actions;
use crate::serve::live;
use crate::serve::state::Shared;

/// Whether `name` is a plain file name: no separator, not `.`/`..`, not hidden, no quote
/// and no control character (it goes into a header).
pub fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && !name.contains(['/', '\\', '"'])
        && !name.chars().any(char::is_control)
        && name.len() <= 255
}

/// The regular files of a run directory, by name (links and folders left out).
pub fn listing(dir: &std::path::Path) -> Vec<(String, u64)> {
    let mut files: Vec<(String, u64)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let meta = e.metadata().ok()?; // does not follow links
            let name = e.file_name().into_string().ok()?;
            (meta.is_file() && plain_name(&name)).then_some((name, meta.len()))
        })
        .collect();
    files.sort();
    files
}

fn refuse(code: StatusCode, msg: String) -> Response {
    (code, msg).into_response()
}

/// `GET /runs/{id}/files/{name}`.
pub async fn download(
    State(st): State<Shared>,
    RunId(id): RunId,
    Path((_, name)): Path<(String, String)>,
) -> Response {
    let run = match actions::get(&st, id) {
        Ok(r) => r,
        Err(e) => return refuse(StatusCode::NOT_FOUND, e.message().to_string()),
    };
    if !plain_name(&name) {
        return refuse(
            StatusCode::BAD_REQUEST,
            format!("'{name}': only a plain file name of the run's directory"),
        );
    }
    let dir = std::path::Path::new(&run.dir);
    if !listing(dir).iter().any(|(n, _)| *n == name) {
        return refuse(
            StatusCode::NOT_FOUND,
            format!("run {id} has no file '{name}'"),
        );
    }
    let path = dir.join(&name);
    let read = tokio::task::spawn_blocking(move || std::fs::read(path)).await;
    match read.unwrap_or_else(|e| Err(std::io::Error::other(e.to_string()))) {
        Ok(bytes) => {
            let kind = if name.ends_with(".json") {
                "application/json"
            } else {
                "text/plain; charset=utf-8"
            };
            let text_like = [".csv", ".pgn", ".json", ".log", ".txt"]
                .iter()
                .any(|s| name.ends_with(s));
            let kind = if text_like {
                kind
            } else {
                "application/octet-stream"
            };
            (
                [
                    (header::CONTENT_TYPE, kind.to_string()),
                    (
                        header::CONTENT_DISPOSITION,
                        format!("inline; filename=\"{name}\""),
                    ),
                    (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_string()),
                ],
                bytes,
            )
                .into_response()
        }
        Err(e) => refuse(StatusCode::INTERNAL_SERVER_ERROR, format!("{name}: {e}")),
    }
}

/// `GET /runs/{id}/status.html`: the page `spar status FILE --html` writes for the run's
/// file.
pub async fn status_page(State(st): State<Shared>, RunId(id): RunId) -> Response {
    let run = match actions::get(&st, id) {
        Ok(r) => r,
        Err(e) => return refuse(StatusCode::NOT_FOUND, e.message().to_string()),
    };
    match live::page(&run.kind, &run.words, std::path::Path::new(&run.dir)) {
        Some(page) => Html(page).into_response(),
        None => refuse(
            StatusCode::NOT_FOUND,
            format!("run {id} has no status page yet (no games recorded)"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_are_downloads() {
        assert!(plain_name("results.csv"));
        for bad in [
            "",
            "..",
            ".",
            "../x",
            "a/b",
            "/etc/passwd",
            ".hidden",
            "a\\b",
            "a\0",
        ] {
            assert!(!plain_name(bad), "{bad:?}");
        }
    }
}
