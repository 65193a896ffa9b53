//! A run's files: downloads confined to its directory (plain names of regular files that
//! are in it, nothing else), streamed from the file with range requests (`curl -C -`
//! resumes), and the status page of its file.

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
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
    headers: HeaderMap,
) -> Response {
    let range = headers
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .map(String::from);
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
    send_file(&dir.join(&name), &name, range).await
}

/// The bytes a `Range` header asks of a file of `len` bytes: `Ok(None)` for the whole file
/// (no header, a unit other than bytes, several ranges: answered whole, as RFC 9110
/// allows), `Ok(Some((first, last)))` for one range (inclusive), `Err(())` for a range that
/// no byte of the file satisfies (416).
pub fn byte_range(header: Option<&str>, len: u64) -> Result<Option<(u64, u64)>, ()> {
    let Some(spec) = header.and_then(|h| h.trim().strip_prefix("bytes=")) else {
        return Ok(None);
    };
    if spec.contains(',') {
        return Ok(None);
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return Ok(None);
    };
    let number = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let range = match (number(first), number(last), first.is_empty()) {
        // `bytes=-N`: the last N bytes.
        (None, Some(n), true) if n > 0 && len > 0 => (len.saturating_sub(n), len - 1),
        (None, Some(_), true) => return Err(()),
        // `bytes=A-` and `bytes=A-B`.
        (Some(a), None, _) if last.is_empty() && a < len => (a, len - 1),
        (Some(a), Some(b), _) if a <= b && a < len => (a, b.min(len - 1)),
        (Some(a), Some(b), _) if a <= b => return Err(()),
        (Some(_), None, _) if last.is_empty() => return Err(()),
        // Malformed: ignored, the whole file.
        _ => return Ok(None),
    };
    Ok(Some(range))
}

/// A file streamed from disk in chunks (memory flat whatever its size), whole or the one
/// range asked, with its length and `Accept-Ranges: bytes`.
async fn send_file(path: &std::path::Path, name: &str, range: Option<String>) -> Response {
    use tokio::io::{AsyncReadExt, AsyncSeekExt};
    let failed = |e: std::io::Error| {
        refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("{name}: cannot read it: {}", e.kind()),
        )
    };
    let mut file = match tokio::fs::File::open(path).await {
        Ok(f) => f,
        Err(e) => return failed(e),
    };
    let len = match file.metadata().await {
        Ok(m) => m.len(),
        Err(e) => return failed(e),
    };
    let (code, first, count) = match byte_range(range.as_deref(), len) {
        Ok(None) => (StatusCode::OK, 0, len),
        Ok(Some((a, b))) => (StatusCode::PARTIAL_CONTENT, a, b - a + 1),
        Err(()) => {
            return (
                StatusCode::RANGE_NOT_SATISFIABLE,
                [(header::CONTENT_RANGE, format!("bytes */{len}"))],
                format!("{name} has {len} bytes: the range asked is beyond them"),
            )
                .into_response();
        }
    };
    if first > 0 {
        if let Err(e) = file.seek(std::io::SeekFrom::Start(first)).await {
            return failed(e);
        }
    }
    let stream = tokio_util::io::ReaderStream::with_capacity(file.take(count), 64 << 10);
    let mut response = Response::builder()
        .status(code)
        .header(header::CONTENT_TYPE, content_type(name))
        .header(
            header::CONTENT_DISPOSITION,
            format!("inline; filename=\"{name}\""),
        )
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::ACCEPT_RANGES, "bytes")
        .header(header::CONTENT_LENGTH, count);
    if code == StatusCode::PARTIAL_CONTENT {
        let last = first + count - 1;
        response = response.header(header::CONTENT_RANGE, format!("bytes {first}-{last}/{len}"));
    }
    response
        .body(axum::body::Body::from_stream(stream))
        .unwrap_or_else(|e| refuse(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
}

/// The content type a download is served with: JSON, text, or bytes.
fn content_type(name: &str) -> &'static str {
    if name.ends_with(".json") {
        "application/json"
    } else if [".csv", ".pgn", ".log", ".txt"]
        .iter()
        .any(|s| name.ends_with(s))
    {
        "text/plain; charset=utf-8"
    } else {
        "application/octet-stream"
    }
}

/// `GET /runs/{id}/status.html`: the page `spar status FILE --html` writes for the run's
/// file.
pub async fn status_page(State(st): State<Shared>, RunId(id): RunId) -> Response {
    let run = match actions::get(&st, id) {
        Ok(r) => r,
        Err(e) => return refuse(StatusCode::NOT_FOUND, e.message().to_string()),
    };
    match live::page(
        run.kind.as_str(),
        &run.words,
        std::path::Path::new(&run.dir),
    ) {
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
    fn byte_ranges_are_read_as_rfc_9110_says() {
        let r = |h: &str, len| byte_range(Some(h), len);
        assert_eq!(byte_range(None, 10), Ok(None));
        assert_eq!(r("bytes=0-0", 10), Ok(Some((0, 0))));
        assert_eq!(r("bytes=2-5", 10), Ok(Some((2, 5))));
        assert_eq!(r("bytes=2-", 10), Ok(Some((2, 9))));
        assert_eq!(r("bytes=2-100", 10), Ok(Some((2, 9))));
        assert_eq!(r("bytes=-3", 10), Ok(Some((7, 9))));
        assert_eq!(r("bytes=-30", 10), Ok(Some((0, 9))));
        assert_eq!(r("bytes=10-", 10), Err(()));
        assert_eq!(r("bytes=10-20", 10), Err(()));
        assert_eq!(r("bytes=-0", 10), Err(()));
        assert_eq!(r("bytes=0-", 0), Err(()));
        // Not one satisfiable byte range in bytes: the whole file.
        for whole in [
            "items=0-1",
            "bytes=5-2",
            "bytes=0-1,4-5",
            "bytes=a-b",
            "bytes=",
            "bytes=+1-2",
        ] {
            assert_eq!(r(whole, 10), Ok(None), "{whole}");
        }
    }

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
