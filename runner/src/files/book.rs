//! The opening book of a match: `--book FILE [format=…] [order=…] [plies=N] [start=K]`, or
//! the built-in book; pair k plays opening k of the (seeded) order.

use data::book::{Book, BookOptions, BookOrder};
use data::quote::Quoted;

use crate::play::schedule::OpeningStart;

/// The openings of a match and how they are ordered.
#[derive(Clone)]
pub struct OpeningBook {
    book: Book,
    describe: String,
}

impl OpeningBook {
    /// Loads `--book FILE [format=…] [order=…] [plies=N] [start=K]`, or the built-in book in
    /// random order when `words` is `None`. `seed` orders a random book.
    pub fn load(words: Option<&[String]>, seed: u64) -> Result<OpeningBook, String> {
        let mut options = BookOptions {
            seed,
            order: BookOrder::Random,
            ..BookOptions::default()
        };
        let Some(words) = words else {
            let book = Book::builtin_with(&options).map_err(|e| e.to_string())?;
            return Ok(OpeningBook {
                describe: format!("built-in book {}", book.name()),
                book,
            });
        };
        let mut file = None;
        for (i, w) in words.iter().enumerate() {
            match w.split_once('=') {
                Some(("file", f)) => file = Some(f.to_string()),
                Some((k, v)) => options.set(k, v).map_err(|e| format!("--book: {e}"))?,
                None if i == 0 => file = Some(w.clone()),
                None => {
                    return Err(format!(
                        "--book: '{w}' is not key=value (format=, order=, plies=, start=)"
                    ))
                }
            }
        }
        let file = file.ok_or(
            "--book needs a file: --book FILE [format=epd|pgn] [order=random|sequential] [plies=N]",
        )?;
        if !words.iter().any(|w| w.starts_with("order=")) {
            options.order = BookOrder::Random;
        }
        let book = Book::load(&file, &options).map_err(|e| format!("--book: {e}"))?;
        if book.is_empty() {
            return Err(format!("--book {file}: no openings in the file"));
        }
        // start=K past the end would silently wrap around to another opening.
        if options.start > book.len() {
            return Err(format!(
                "--book {file} start={}: the book has {} openings: give start=1 to start={}",
                options.start,
                book.len(),
                book.len()
            ));
        }
        // A position where the game is already over would be counted as a 0-move result.
        for k in 0..book.len() {
            let o = book.opening(k);
            let pos = o.position();
            if !pos.has_legal_move() {
                return Err(format!(
                    "--book {file}:{}: the game is already over in {} ({}): remove the line",
                    o.line(),
                    Quoted(&pos.to_fen()),
                    if pos.in_check() {
                        "checkmate"
                    } else {
                        "stalemate"
                    }
                ));
            }
        }
        Ok(OpeningBook {
            describe: file,
            book,
        })
    }

    /// The opening of pair `k`.
    pub fn opening(&self, k: u64) -> OpeningStart {
        let o = self.book.opening(k as usize);
        OpeningStart {
            index: o.index(),
            position: o.start_position(),
            moves: o.moves().to_vec(),
        }
    }

    /// For the summary header.
    pub fn describe(&self) -> &str {
        &self.describe
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_past_the_end_of_the_book_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.epd");
        std::fs::write(
            &path,
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n\
             rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -\n",
        )
        .unwrap();
        let words = |start: &str| [path.display().to_string(), format!("start={start}")];
        for ok in ["0", "1", "2"] {
            assert!(OpeningBook::load(Some(&words(ok)), 1).is_ok(), "start={ok}");
        }
        let err = OpeningBook::load(Some(&words("3")), 1).err().unwrap();
        assert!(
            err.ends_with("start=3: the book has 2 openings: give start=1 to start=2"),
            "{err}"
        );
    }

    #[test]
    fn a_book_position_with_no_legal_move_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.epd");
        std::fs::write(
            &path,
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n7k/5Q2/6K1/8/8/8/8/8 b - -\n",
        )
        .unwrap();
        let words = [path.display().to_string()];
        let err = OpeningBook::load(Some(&words), 1).err().unwrap();
        assert!(err.contains(":2: the game is already over"), "{err}");
        assert!(err.contains("stalemate"), "{err}");
    }
}
