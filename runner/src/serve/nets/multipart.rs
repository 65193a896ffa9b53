//! A streaming reader of a `multipart/form-data` body (RFC 7578), enough for the nets
//! page's upload form: small text fields are kept, the bytes of the file field go to a
//! sink as they arrive (never all in memory). Bounded: a part's headers at most 8 KiB, a
//! text field at most 4 KiB, at most 16 parts.

use std::collections::HashMap;

const MAX_HEADERS: usize = 8 << 10;
const MAX_FIELD: usize = 4 << 10;
const MAX_PARTS: usize = 16;

enum State {
    /// Before the first delimiter.
    Preamble,
    /// Right after a delimiter: `--` (the end) or CRLF (a part's headers).
    AfterDelimiter,
    Headers,
    /// A part's body: a text field's name, or `None` for the file.
    Body(Option<String>),
    Done,
}

/// The reader: feed it the body's chunks, then [`Multipart::finish`].
pub struct Multipart {
    /// `CRLF--BOUNDARY`.
    delimiter: Vec<u8>,
    buf: Vec<u8>,
    state: State,
    parts: usize,
    field: Vec<u8>,
    fields: HashMap<String, String>,
}

/// The boundary of a `multipart/form-data` content type.
pub fn boundary(content_type: &str) -> Option<String> {
    let (kind, params) = content_type.split_once(';')?;
    if !kind.trim().eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    params
        .split(';')
        .filter_map(|p| p.trim().split_once('='))
        .find(|(k, _)| k.eq_ignore_ascii_case("boundary"))
        .map(|(_, v)| v.trim_matches('"').to_string())
        .filter(|b| !b.is_empty() && b.len() <= 70)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The `name` and whether there is a `filename` in a part's headers.
fn disposition(headers: &str) -> Option<(String, bool)> {
    let line = headers.lines().find(|l| {
        l.split(':')
            .next()
            .is_some_and(|h| h.trim().eq_ignore_ascii_case("content-disposition"))
    })?;
    let mut name = None;
    let mut file = false;
    for p in line.split(';').skip(1) {
        if let Some((k, v)) = p.trim().split_once('=') {
            match k.trim() {
                "name" => name = Some(v.trim().trim_matches('"').to_string()),
                "filename" => file = true,
                _ => {}
            }
        }
    }
    Some((name?, file))
}

impl Multipart {
    /// A reader for parts separated by `boundary`.
    pub fn new(boundary: &str) -> Multipart {
        Multipart {
            delimiter: format!("\r\n--{boundary}").into_bytes(),
            // The first delimiter has no CRLF before it: one is put there.
            buf: b"\r\n".to_vec(),
            state: State::Preamble,
            parts: 0,
            field: Vec::new(),
            fields: HashMap::new(),
        }
    }

    /// Reads a chunk: the file's bytes go to `file` (an `Err` of it stops the reading and
    /// is returned as it is); `Err(Ok(message))` is a malformed body.
    pub fn feed<E>(
        &mut self,
        chunk: &[u8],
        file: &mut dyn FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), Result<String, E>> {
        self.buf.extend_from_slice(chunk);
        let bad = |m: &str| Err(Ok(format!("the form's body: {m}")));
        loop {
            match &self.state {
                State::Done => {
                    self.buf.clear();
                    return Ok(());
                }
                State::Preamble => match find(&self.buf, &self.delimiter) {
                    Some(at) => {
                        self.buf.drain(..at + self.delimiter.len());
                        self.state = State::AfterDelimiter;
                    }
                    None => {
                        let keep = self.buf.len().min(self.delimiter.len());
                        self.buf.drain(..self.buf.len() - keep);
                        return Ok(());
                    }
                },
                State::AfterDelimiter => {
                    if self.buf.len() < 2 {
                        return Ok(());
                    }
                    if self.buf.starts_with(b"--") {
                        self.state = State::Done;
                    } else if self.buf.starts_with(b"\r\n") {
                        self.buf.drain(..2);
                        self.parts += 1;
                        if self.parts > MAX_PARTS {
                            return bad("too many parts");
                        }
                        self.state = State::Headers;
                    } else {
                        return bad("a boundary is not followed by a line end");
                    }
                }
                State::Headers => {
                    let Some(end) = find(&self.buf, b"\r\n\r\n") else {
                        if self.buf.len() > MAX_HEADERS {
                            return bad("a part's headers are too long");
                        }
                        return Ok(());
                    };
                    let headers = String::from_utf8_lossy(&self.buf[..end]).into_owned();
                    self.buf.drain(..end + 4);
                    let Some((name, is_file)) = disposition(&headers) else {
                        return bad("a part has no Content-Disposition name");
                    };
                    self.field.clear();
                    self.state = State::Body((!is_file).then_some(name));
                }
                State::Body(field) => {
                    let field = field.clone();
                    let found = find(&self.buf, &self.delimiter);
                    let upto = match found {
                        Some(at) => at,
                        None => self.buf.len().saturating_sub(self.delimiter.len() - 1),
                    };
                    let bytes: Vec<u8> = self.buf.drain(..upto).collect();
                    match &field {
                        Some(_) => {
                            self.field.extend_from_slice(&bytes);
                            if self.field.len() > MAX_FIELD {
                                return bad("a text field is longer than 4 KiB");
                            }
                        }
                        None => file(&bytes).map_err(Err)?,
                    }
                    if found.is_none() {
                        return Ok(());
                    }
                    self.buf.drain(..self.delimiter.len());
                    if let Some(name) = field {
                        let value = String::from_utf8_lossy(&self.field).into_owned();
                        self.fields.insert(name.clone(), value);
                    }
                    self.state = State::AfterDelimiter;
                }
            }
        }
    }

    /// The text fields, once the body ended with its closing delimiter.
    pub fn finish(self) -> Result<HashMap<String, String>, String> {
        match self.state {
            State::Done => Ok(self.fields),
            _ => Err("the form's body ended before its closing boundary".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body() -> Vec<u8> {
        let mut b = b"--XyZ\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nnet-1\r\n\
              --XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.nnue\"\r\n\
              Content-Type: application/octet-stream\r\n\r\n"
            .to_vec();
        b.extend((0..5000u32).map(|i| (i % 251) as u8));
        b.extend_from_slice(b"\r\n--XyZ--\r\n");
        b
    }

    #[test]
    fn fields_and_the_file_are_read_in_chunks_of_any_size() {
        let want: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        for size in [1, 3, 7, 64, 100_000] {
            let mut m = Multipart::new("XyZ");
            let mut got = Vec::new();
            for c in body().chunks(size) {
                m.feed::<()>(c, &mut |b| {
                    got.extend_from_slice(b);
                    Ok(())
                })
                .unwrap();
            }
            let fields = m.finish().unwrap();
            assert_eq!(fields["name"], "net-1");
            assert_eq!(got, want, "chunks of {size}");
        }
    }

    #[test]
    fn a_cut_body_and_bad_content_types_are_refused() {
        let b = body();
        let mut m = Multipart::new("XyZ");
        m.feed::<()>(&b[..b.len() - 12], &mut |_| Ok(())).unwrap();
        assert!(m.finish().is_err());
        assert_eq!(
            boundary("multipart/form-data; boundary=\"ab c\"").as_deref(),
            Some("ab c")
        );
        assert_eq!(boundary("application/json"), None);
        assert_eq!(boundary("multipart/form-data"), None);
    }
}
