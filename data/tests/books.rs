//! Book files on disk: CRLF EPD, the builtin book, errors naming file:line.

use std::path::PathBuf;

use data::book::{Book, BookError, BookFormat, BookOptions, BookOrder};

fn books_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("books")
}

#[test]
fn crlf_epd_book_loads() {
    let path = books_dir().join("8mvs_+90_+99.epd");
    let raw = std::fs::read(&path).unwrap();
    assert!(
        raw.windows(2).any(|w| w == b"\r\n"),
        "the test book has CRLF endings"
    );
    let book = Book::load(&path, &BookOptions::default()).unwrap();
    assert_eq!(book.len(), 8_533);
    assert_eq!(book.name(), "8mvs_+90_+99.epd");
    for o in book.iter() {
        assert!(!o.fen().contains('\r'));
        assert!(!o.position().legal_moves().is_empty());
    }
    assert_eq!(
        book.opening(0).fen(),
        "r1bq1rk1/pp1nppbp/3p1np1/8/2PNP3/2N5/PP2BPPP/R1BQ1RK1 w - - 4 9"
    );
}

#[test]
fn builtin_shuffle_is_stable_and_start_offsets() {
    let opts = |seed, start| BookOptions {
        order: BookOrder::Random,
        seed,
        start,
        ..Default::default()
    };
    let a = Book::builtin_with(&opts(99, 1)).unwrap();
    let b = Book::builtin_with(&opts(99, 1)).unwrap();
    let c = Book::builtin_with(&opts(99, 11)).unwrap();
    for k in [0, 1, 17, 34_699, 34_700, 100_000] {
        assert_eq!(a.opening(k).index(), b.opening(k).index());
        assert_eq!(a.opening(k + 10).index(), c.opening(k).index());
    }
    // Pinned so that a change to the shuffle (which would silently change which openings a
    // resumed run plays) fails here.
    let first: Vec<usize> = (0..4).map(|k| a.opening(k).index()).collect();
    assert_eq!(first, [30500, 26343, 4925, 938]);
}

#[test]
fn load_errors_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let epd = dir.path().join("broken.epd");
    std::fs::write(
        &epd,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\r\n\r\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1\r\n",
    )
    .unwrap();
    let err = Book::load(&epd, &BookOptions::default()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("broken.epd:3: bad FEN placement"), "{msg}");
    assert!(
        msg.contains("'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1'"),
        "{msg}"
    );
    assert_eq!(msg.lines().count(), 1, "{msg}");

    let pgn = dir.path().join("broken.pgn");
    std::fs::write(
        &pgn,
        "[Event \"x\"]\n\n1. e4 e5 2. Nf3 Nc6\n3. Bb5 a6 4. Bxc7 *\n",
    )
    .unwrap();
    let msg = Book::load(&pgn, &BookOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("broken.pgn:4:") && msg.contains("'Bxc7'"),
        "{msg}"
    );
    // With plies=6 the bad move is never reached.
    let opts = BookOptions {
        plies: Some(6),
        ..Default::default()
    };
    assert_eq!(Book::load(&pgn, &opts).unwrap().opening(0).moves().len(), 6);

    let missing = Book::load(dir.path().join("nope.epd"), &BookOptions::default()).unwrap_err();
    assert!(matches!(missing, BookError::Io { .. }));
    assert!(missing.to_string().contains("nope.epd"));

    // A PGN file forced to be read as EPD fails cleanly instead of panicking.
    let forced = BookOptions {
        format: Some(BookFormat::Epd),
        ..Default::default()
    };
    assert!(Book::load(&pgn, &forced).is_err());
}
