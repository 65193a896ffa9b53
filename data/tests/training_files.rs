//! Training files on disk: round trips of both formats, the text filter, resuming after a
//! crash at any byte, and the inspection summary.

use std::path::Path;

use data::training::files::{Format, TrainingWriter};
use data::training::filter::TextFilter;
use data::training::inspect::{detect, inspect, FileKind};
use data::training::{text, viriformat, ScoredMove, TrainingGame};
use engine::position::Position;
use engine::rng::SplitMix64;
use engine::types::GameResult;

fn random_games(n: usize, seed: u64) -> Vec<TrainingGame> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            let start = Position::startpos();
            let mut pos = start.clone();
            let mut moves = Vec::new();
            for _ in 0..10 + rng.below(60) {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let mv = legal.as_slice()[rng.below(legal.len())];
                let score = (rng.next_u64() % 5001) as i16 - 2500;
                moves.push(ScoredMove { mv, score });
                pos = pos.play(mv);
            }
            TrainingGame {
                start,
                moves,
                result: viriformat::result_from_wdl_byte(rng.below(3) as u8).unwrap(),
            }
        })
        .collect()
}

fn write_all(path: &Path, format: Format, games: &[TrainingGame]) {
    let (mut w, resumed) =
        TrainingWriter::open(path, format, TextFilter::default(), false, None).unwrap();
    assert_eq!(resumed.games, 0);
    for g in games {
        w.write_game(g).unwrap();
    }
    w.sync().unwrap();
}

#[test]
fn both_formats_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("games.vf");
    let games = random_games(20, 1);
    write_all(&path, Format::Both, &games);

    let read: Vec<TrainingGame> = viriformat::read_games(&path)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(read, games);
    let positions: Vec<_> = viriformat::read_positions(&path)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let all: Vec<_> = games
        .iter()
        .flat_map(|g| g.positions().map(|p| p.labelled))
        .collect();
    assert_eq!(positions, all);

    let lines: Vec<_> = text::read_positions(dir.path().join("games.vf.txt"))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let filter = TextFilter::default();
    let kept: Vec<_> = games
        .iter()
        .flat_map(|g| g.positions())
        .filter(|p| filter.keeps(&p.labelled.position, p.mv, p.labelled.score))
        .map(|p| p.labelled)
        .collect();
    assert!(!kept.is_empty() && kept.len() < all.len());
    assert_eq!(lines, kept);
}

#[test]
fn text_filter_drops_checks_tactics_big_scores_and_early_plies() {
    // 1. e4 f6 2. Qh5+ g6 3. Qxg6+ hxg6 4. Nf3, with a 4000 cp score on 2. Qh5+.
    let start = Position::startpos();
    let mut pos = start.clone();
    let mut moves = Vec::new();
    let plan = [
        ("e2e4", 10),
        ("f7f6", 20),
        ("d1h5", 4000),
        ("g7g6", 40),
        ("h5g6", 50),
        ("h7g6", 60),
        ("g1f3", 70),
    ];
    for (uci, score) in plan {
        let mv = pos.parse_uci_move(uci).unwrap();
        moves.push(ScoredMove { mv, score });
        pos = pos.play(mv);
    }
    let game = TrainingGame {
        start,
        moves,
        result: GameResult::WhiteWins,
    };
    let kept = |f: TextFilter| {
        let mut out = Vec::new();
        text::encode_game(&game, &f, &mut out);
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| text::parse_line(l).unwrap().score)
            .collect::<Vec<i16>>()
    };
    assert_eq!(kept(TextFilter::NONE), [10, 20, 4000, 40, 50, 60, 70]);
    let base = TextFilter {
        min_ply: 0,
        ..TextFilter::default()
    };
    // 4000 is above 3000, Black is in check at 40 and 60, the moves at 50 and 60 capture.
    assert_eq!(kept(base), [10, 20, 70]);
    assert_eq!(
        kept(TextFilter {
            skip_tactical: false,
            ..base
        }),
        [10, 20, 50, 70]
    );
    assert_eq!(
        kept(TextFilter {
            skip_in_check: false,
            ..base
        }),
        [10, 20, 40, 70]
    );
    assert_eq!(
        kept(TextFilter {
            max_score: 5000,
            ..base
        }),
        [10, 20, 4000, 70]
    );
    assert_eq!(kept(TextFilter { min_ply: 2, ..base }), [70]);
    assert_eq!(kept(TextFilter::default()), Vec::<i16>::new());

    let mut f = TextFilter::default();
    f.set("min-ply", "4").unwrap();
    f.set("max-score", "100").unwrap();
    f.set("keep-check", "true").unwrap();
    f.set("keep-tactical", "false").unwrap();
    assert_eq!(
        f,
        TextFilter {
            min_ply: 4,
            max_score: 100,
            skip_in_check: false,
            skip_tactical: true
        }
    );
    assert!(f
        .set("keep-check", "yes")
        .unwrap_err()
        .contains("true or false"));
    assert!(f.set("min-plies", "3").unwrap_err().contains("min-ply"));
}

/// The lengths of the (viriformat, text, index) files after each game.
fn lengths_after_each_game(dir: &Path, format: Format, games: &[TrainingGame]) -> Vec<[u64; 3]> {
    let path = dir.join(format!("lengths.{}", format.name()));
    let (mut w, _) =
        TrainingWriter::open(&path, format, TextFilter::default(), false, None).unwrap();
    let paths = format.paths(&path);
    let len = |p: &Option<std::path::PathBuf>| {
        p.as_ref()
            .map_or(0, |p| std::fs::metadata(p).unwrap().len())
    };
    let mut out = vec![[0; 3]];
    for g in games {
        w.write_game(g).unwrap();
        out.push([len(&paths.viriformat), len(&paths.text), len(&paths.index)]);
    }
    out
}

#[test]
fn resume_after_a_kill_at_any_byte_keeps_complete_games() {
    let games = random_games(6, 7);
    let dir = tempfile::tempdir().unwrap();
    for format in [Format::Viriformat, Format::Text, Format::Both] {
        let reference = dir.path().join(format!("reference.{}", format.name()));
        write_all(&reference, format, &games);
        let ref_paths = format.paths(&reference);
        let ref_files = [&ref_paths.viriformat, &ref_paths.text, &ref_paths.index];
        // Each game is written file after file: viriformat, text, index. A kill after `cut`
        // bytes of that log leaves a prefix of each file.
        let lengths = lengths_after_each_game(dir.path(), format, &games);
        let mut log = Vec::new(); // (file, from length, to length)
        let mut game_done = Vec::new(); // log position at which game k is complete
        let mut total = 0;
        for k in 1..lengths.len() {
            for (f, (&a, &b)) in lengths[k - 1].iter().zip(&lengths[k]).enumerate() {
                if b > a {
                    log.push((f, a, b));
                    total += b - a;
                }
            }
            game_done.push(total);
        }
        for cut in (0..=total)
            .step_by(211)
            .chain(game_done.iter().flat_map(|&d| [d - 1, d, d + 1]))
        {
            let cut = cut.min(total);
            let mut file_len = [0u64; 3];
            let mut left = cut;
            for &(f, a, b) in &log {
                if left == 0 {
                    break;
                }
                let n = left.min(b - a);
                file_len[f] = a + n;
                left -= n;
            }
            let path = dir.path().join("run");
            let paths = format.paths(&path);
            let run_files = [&paths.viriformat, &paths.text, &paths.index];
            for ((from, to), len) in ref_files.iter().zip(run_files).zip(file_len) {
                if let (Some(from), Some(to)) = (from, to) {
                    let mut bytes = std::fs::read(from).unwrap();
                    bytes.truncate(len as usize);
                    std::fs::write(to, bytes).unwrap();
                }
            }
            let complete = game_done.iter().filter(|&&d| d <= cut).count() as u64;
            if cut > 0 {
                assert!(
                    TrainingWriter::open(&path, format, TextFilter::default(), false, None)
                        .err()
                        .is_some_and(|e| e.contains("--resume")),
                    "refuses to overwrite without --resume"
                );
            }
            let (mut w, resumed) =
                TrainingWriter::open(&path, format, TextFilter::default(), true, None).unwrap();
            assert_eq!(resumed.games, complete, "{format:?} cut at {cut}");
            for g in &games[complete as usize..] {
                w.write_game(g).unwrap();
            }
            drop(w);
            for (a, b) in ref_files.iter().zip(run_files) {
                if let (Some(a), Some(b)) = (a, b) {
                    assert_eq!(
                        std::fs::read(a).unwrap(),
                        std::fs::read(b).unwrap(),
                        "{format:?} cut at {cut}: {} is whole again",
                        b.display()
                    );
                }
            }
        }
    }
}

#[test]
fn resume_can_cut_back_to_a_match_record() {
    let games = random_games(5, 3);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dump.vf");
    write_all(&path, Format::Both, &games);
    let (w, resumed) =
        TrainingWriter::open(&path, Format::Both, TextFilter::default(), true, Some(3)).unwrap();
    assert_eq!((resumed.games, w.games()), (3, 3));
    drop(w);
    let read: Vec<_> = viriformat::read_games(&path)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(read, games[..3]);
    let index = std::fs::read_to_string(dir.path().join("dump.vf.txt.idx")).unwrap();
    assert_eq!(index.lines().count(), 3);

    // Killed while writing game 3's text: the viriformat file holds it, the text file half
    // of it, the index only half its line. Both files go back to 2 games.
    let path = dir.path().join("killed.vf");
    write_all(&path, Format::Both, &games[..3]);
    let text = dir.path().join("killed.vf.txt");
    let index_path = dir.path().join("killed.vf.txt.idx");
    let index = std::fs::read_to_string(&index_path).unwrap();
    let entry = |k: usize| -> u64 {
        let line = index.lines().nth(k).unwrap();
        line.split(' ').next().unwrap().parse().unwrap()
    };
    let set_len = |p: &Path, len: u64| {
        let f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
        f.set_len(len).unwrap();
    };
    set_len(&text, (entry(1) + entry(2)) / 2);
    let two_lines = index.lines().take(2).map(|l| l.len() + 1).sum::<usize>() as u64;
    set_len(&index_path, two_lines + 3);
    let (w, resumed) =
        TrainingWriter::open(&path, Format::Both, TextFilter::default(), true, None).unwrap();
    assert_eq!((resumed.games, w.games()), (2, 2));
    assert_eq!(std::fs::metadata(&text).unwrap().len(), entry(1));
    assert_eq!(std::fs::metadata(&index_path).unwrap().len(), two_lines);
    let read: Vec<_> = viriformat::read_games(&path)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(read, games[..2]);
}

#[test]
fn inspect_counts_and_validates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("games.vf");
    let games = random_games(10, 5);
    write_all(&path, Format::Both, &games);
    let text_path = dir.path().join("games.vf.txt");
    assert_eq!(detect(&path).unwrap(), FileKind::Viriformat);
    assert_eq!(detect(&text_path).unwrap(), FileKind::Text);

    let s = inspect(&path, FileKind::Viriformat, 5).unwrap();
    assert!(s.error.is_none());
    assert_eq!(s.games, Some(10));
    let positions: usize = games.iter().map(|g| g.moves.len()).sum();
    assert_eq!(s.positions, positions as u64);
    assert_eq!(s.histogram.iter().sum::<u64>() + s.mates, s.positions);
    assert_eq!(s.game_results.iter().sum::<u64>(), 10);
    assert_eq!(s.samples.len(), 5);
    let report = s.report().join("\n");
    assert!(report.contains("Games: 10"), "{report}");

    let t = inspect(&text_path, FileKind::Text, 3).unwrap();
    assert!(t.error.is_none());
    assert_eq!(t.games, None);

    // A corrupt byte in the 4th game: counts cover the first three, the error has its offset.
    let mut bytes = std::fs::read(&path).unwrap();
    let mut offset = 0;
    for g in &games[..3] {
        offset += 32 + 4 * (g.moves.len() + 1);
    }
    bytes[offset + 30] = 9;
    std::fs::write(&path, &bytes).unwrap();
    let s = inspect(&path, FileKind::Viriformat, 0).unwrap();
    assert_eq!(s.games, Some(3));
    assert_eq!(s.error.unwrap().offset, offset as u64);

    // A bad text line.
    let mut text = std::fs::read_to_string(&text_path).unwrap();
    text.push_str("not a fen | 1 | 0.5\n");
    std::fs::write(&text_path, text).unwrap();
    let t = inspect(&text_path, FileKind::Text, 0).unwrap();
    let err = t.error.unwrap();
    assert_eq!(err.line, Some(t.positions + 1));
}

#[test]
fn resume_refuses_files_that_do_not_belong_together() {
    let games = random_games(5, 9);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.vf");
    write_all(&path, Format::Viriformat, &games);
    let before = std::fs::read(&path).unwrap();
    // Resumed as `both`: the text file is missing, so all 5 games would have to go.
    let err = TrainingWriter::open(&path, Format::Both, TextFilter::default(), true, None)
        .err()
        .unwrap();
    assert!(err.contains("would delete games"), "{err}");
    // A match whose results file holds fewer pairs than the dump by more than one pair.
    let err = TrainingWriter::open(
        &path,
        Format::Viriformat,
        TextFilter::default(),
        true,
        Some(2),
    )
    .err()
    .unwrap();
    assert!(err.contains("holds 5 complete games"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing was cut");
    let (w, _) = TrainingWriter::open(
        &path,
        Format::Viriformat,
        TextFilter::default(),
        true,
        Some(3),
    )
    .unwrap();
    assert_eq!(w.games(), 3);
}

/// The counts `game_ends` gives of the files of `format` at `path`: (games every file
/// holds, positions (else lines) up to the last of them).
fn whole_count(path: &Path, format: Format) -> (u64, u64) {
    let ends = data::training::files::game_ends(path, format).unwrap();
    let paths = format.paths(path);
    let mut games = u64::MAX;
    if paths.viriformat.is_some() {
        games = games.min(ends.viriformat.len() as u64);
    }
    if paths.text.is_some() {
        games = games.min(ends.text.len() as u64);
    }
    let counted = if paths.viriformat.is_some() {
        &ends.viriformat
    } else {
        &ends.text
    };
    let positions = (games as usize).checked_sub(1).map_or(0, |g| counted[g].1);
    (games, positions)
}

#[test]
fn a_counter_reads_only_what_was_appended_and_counts_again_after_a_cut_or_a_replacement() {
    use data::training::counter::GameCounter;
    use std::io::Write;
    for format in [Format::Viriformat, Format::Text, Format::Both] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.vf");
        let games = random_games(30, 7);
        let mut counter = GameCounter::new(&path, format);
        // No file yet.
        let c = counter.count().unwrap();
        assert_eq!((c.games, c.positions), (0, 0), "{format:?}");
        let (mut w, _) =
            TrainingWriter::open(&path, format, TextFilter::default(), false, None).unwrap();
        for (i, g) in games.iter().enumerate() {
            w.write_game(g).unwrap();
            w.sync().unwrap();
            if i % 7 == 3 {
                let c = counter.count().unwrap();
                assert_eq!(
                    (c.games, c.positions),
                    whole_count(&path, format),
                    "{format:?} {i}"
                );
            }
        }
        drop(w);
        let c = counter.count().unwrap();
        assert_eq!(
            (c.games, c.positions),
            whole_count(&path, format),
            "{format:?}"
        );
        assert_eq!(c.games, 30);
        // A half-written game: not counted.
        let file = format
            .paths(&path)
            .viriformat
            .or(format.paths(&path).index)
            .unwrap();
        // (A viriformat header's first bytes; an index entry without its newline.)
        let partial = match format.paths(&path).viriformat {
            Some(_) => std::fs::read(&file).unwrap()[..9].to_vec(),
            None => b"99".to_vec(),
        };
        std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap()
            .write_all(&partial)
            .unwrap();
        let c = counter.count().unwrap();
        assert_eq!(
            (c.games, c.positions),
            whole_count(&path, format),
            "{format:?} partial"
        );
        // Cut back to 10 games (what --resume does): counted again from the start.
        data::training::files::cut_to_games(&path, format, 10).unwrap();
        let c = counter.count().unwrap();
        assert_eq!(c.games, 10, "{format:?}");
        assert_eq!(
            (c.games, c.positions),
            whole_count(&path, format),
            "{format:?} cut"
        );
        // Replaced by other games of the same length or longer: counted again.
        std::fs::remove_dir_all(dir.path()).unwrap();
        std::fs::create_dir_all(dir.path()).unwrap();
        write_all(&path, format, &random_games(25, 8));
        let c = counter.count().unwrap();
        assert_eq!(
            (c.games, c.positions),
            whole_count(&path, format),
            "{format:?} new"
        );
    }
}
