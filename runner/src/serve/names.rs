//! The one rule of the names a server is given (an engine's, a net's, an account's, a
//! machine's): short, plain ASCII that can name a directory, a file or a make variable and
//! be shown anywhere without quoting. Each caller sets its length and says its own error.

/// Whether `name` is 1 to `most` ASCII letters, digits, `_`, `-` or `.`, and does not start
/// with any of `not_first`.
pub fn is_plain(name: &str, most: usize, not_first: &[char]) -> bool {
    !name.is_empty()
        && name.len() <= most
        && !name.starts_with(not_first)
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_short_ascii_words_not_starting_with_a_dash() {
        for ok in ["dev", "Stockfish_17.1", "a-b", "x"] {
            assert!(is_plain(ok, 64, &['-', '.']), "{ok}");
        }
        for bad in ["", "-x", ".hidden", "a b", "a/b", "é", "a\nb", "a;b"] {
            assert!(!is_plain(bad, 64, &['-', '.']), "{bad:?}");
        }
        assert!(is_plain(".dot", 64, &['-']));
        assert!(is_plain(&"a".repeat(32), 32, &['-']));
        assert!(!is_plain(&"a".repeat(33), 32, &['-']));
    }
}
