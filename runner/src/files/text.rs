//! Reading the small text files a user hands spar (parameter files, SPSA inputs, perft
//! suites, saved statistics, trajectories): whole, but bounded, so `/dev/zero` or a wrong
//! multi-gigabyte file is an error rather than unbounded memory; a UTF-8 byte-order mark is
//! dropped; bad UTF-8 is an error naming the line.

use std::io::Read;
use std::path::Path;

/// The largest text input read whole.
pub const MAX_TEXT_INPUT: u64 = 64 << 20;

/// Reads `path` (given to `flag`) as UTF-8 text, without a leading byte-order mark.
pub fn read_input(path: &Path, flag: &str) -> Result<String, String> {
    read_bounded(path, flag, MAX_TEXT_INPUT)
}

fn read_bounded(path: &Path, flag: &str, max: u64) -> Result<String, String> {
    let shown = path.display();
    let file =
        std::fs::File::open(path).map_err(|e| format!("{flag} {shown}: cannot read: {e}"))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(format!("{flag} {shown}: is a directory; give a file"));
    }
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{flag} {shown}: cannot read: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "{flag} {shown}: longer than {} MiB; is it the right file?",
            max >> 20
        ));
    }
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    match std::str::from_utf8(body) {
        Ok(text) => Ok(text.to_string()),
        Err(e) => {
            let line = body[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            Err(format!(
                "{flag} {shown}:{line}: not UTF-8 text (byte {}); is it the right file?",
                e.valid_up_to()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, bytes).unwrap();
        f
    }

    #[test]
    fn a_byte_order_mark_is_dropped() {
        let f = file(b"\xEF\xBB\xBFrfp_margin, 80\n");
        assert_eq!(read_input(f.path(), "params=").unwrap(), "rfp_margin, 80\n");
    }

    #[test]
    fn bad_utf8_names_the_line() {
        let f = file(b"a, 1\nb, \xFF\n");
        let e = read_input(f.path(), "--params").unwrap_err();
        assert!(e.contains(":2: not UTF-8"), "{e}");
    }

    #[test]
    fn endless_input_is_cut_off() {
        let e = read_bounded(Path::new("/dev/zero"), "--suite", 1 << 20).unwrap_err();
        assert!(e.contains("longer than 1 MiB"), "{e}");
        let e = read_input(Path::new("/"), "--from").unwrap_err();
        assert!(
            e.contains("is a directory") || e.contains("cannot read"),
            "{e}"
        );
    }
}
