//! The opening book of a match: `--book FILE [format=…] [order=…] [plies=N] [start=K]`, or
//! the built-in book; pair k plays opening k of the (seeded) order.

use data::book::{Book, BookOptions, BookOrder};

use crate::play::schedule::OpeningStart;

/// The openings of a match and how they are ordered.
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
