//! Training data: positions packed into 32 bytes, converted once from viriformat or bullet
//! text files into an unnamed temporary file, then streamed back in shuffled chunks.
//!
//! Memory stays bounded whatever the data size: one chunk of [`CHUNK_POSITIONS`] positions
//! (32 MiB) and one batch are in memory at a time; the packed file lives on disk (and in the
//! page cache).

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use data::training::inspect::{detect, FileKind};
use data::training::{text, viriformat, FormatError, TrainingPosition};
use engine::nnue::network::{Layout, View};
use engine::position::Position;
use engine::rng::{mix_seed, SplitMix64};
use engine::types::{Color, Move, PieceType, Square};

/// Bytes of one packed position.
pub const PACKED_BYTES: usize = 32;

/// Positions per shuffled chunk: 1 Mi positions, 32 MiB.
pub const CHUNK_POSITIONS: usize = 1 << 20;

/// The most pieces a position may hold.
pub const MAX_PIECES: usize = 32;

/// A position as the trainer needs it: the pieces, the side to move, and the labels from the
/// side to move's view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Packed {
    /// Occupied squares (a1 = bit 0).
    pub occupancy: u64,
    /// One nibble per occupied square in ascending square order: `colour << 3 | piece type`.
    pub pieces: [u8; 16],
    /// Search score in centipawns, side to move's view.
    pub score: i16,
    /// Game result for the side to move: 0 loss, 1 draw, 2 win.
    pub wdl: u8,
    /// The side to move: 0 White, 1 Black.
    pub stm: u8,
}

impl Packed {
    /// Packs `pos` with a White-relative `score` and the game's `result`.
    pub fn new(pos: &Position, white_score: i16, result: engine::types::GameResult) -> Packed {
        let stm = pos.side_to_move();
        let mut packed = Packed {
            occupancy: pos.occupied().0,
            pieces: [0; 16],
            score: (i32::from(white_score) * stm.sign()).clamp(-32767, 32767) as i16,
            wdl: result.half_points(stm) as u8,
            stm: stm as u8,
        };
        for (i, sq) in pos.occupied().enumerate().take(MAX_PIECES) {
            let piece = pos.piece_on(sq).expect("occupied square holds a piece");
            let nibble = (piece.color() as u8) << 3 | piece.kind() as u8;
            packed.pieces[i / 2] |= nibble << (4 * (i % 2));
        }
        packed
    }

    /// The 32 bytes, little-endian.
    pub fn to_bytes(self) -> [u8; PACKED_BYTES] {
        let mut out = [0u8; PACKED_BYTES];
        out[..8].copy_from_slice(&self.occupancy.to_le_bytes());
        out[8..24].copy_from_slice(&self.pieces);
        out[24..26].copy_from_slice(&self.score.to_le_bytes());
        out[26] = self.wdl;
        out[27] = self.stm;
        out
    }

    /// Reads back [`Packed::to_bytes`].
    pub fn from_bytes(b: &[u8]) -> Packed {
        Packed {
            occupancy: u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
            pieces: b[8..24].try_into().expect("16 bytes"),
            score: i16::from_le_bytes([b[24], b[25]]),
            wdl: b[26],
            stm: b[27],
        }
    }

    /// Writes the feature indices of both perspectives (side to move first) in `layout` and
    /// returns how many each has. The same indices as the engine's
    /// ([`engine::nnue::network::Layout::view`]; [`engine::nnue::network::feature_index`] for
    /// the plain layout).
    #[inline(always)]
    pub fn features(
        &self,
        layout: Layout,
        us: &mut [u16; MAX_PIECES],
        them: &mut [u16; MAX_PIECES],
    ) -> usize {
        let stm = if self.stm == 0 {
            Color::White
        } else {
            Color::Black
        };
        let (view_us, view_them) = if layout.king_buckets == 1 {
            (View::plain(stm), View::plain(!stm))
        } else {
            let kings = self.kings();
            (
                layout.view(stm, kings[stm as usize]),
                layout.view(!stm, kings[!stm as usize]),
            )
        };
        let mut occ = self.occupancy;
        let mut n = 0;
        while occ != 0 && n < MAX_PIECES {
            let sq = Square::from_index(occ.trailing_zeros() as usize);
            occ &= occ - 1;
            let nibble = self.pieces[n / 2] >> (4 * (n % 2)) & 15;
            let own = nibble >> 3 == self.stm;
            let kind = PieceType::from_index(usize::from(nibble & 7));
            us[n] = view_us.index(own, kind, sq) as u16;
            them[n] = view_them.index(!own, kind, sq) as u16;
            n += 1;
        }
        n
    }

    /// The king squares, White's first (a1 when a side has none, which a legal position
    /// never lacks).
    fn kings(&self) -> [Square; 2] {
        let mut kings = [Square::from_index(0); 2];
        let mut occ = self.occupancy;
        let mut n = 0;
        while occ != 0 && n < MAX_PIECES {
            let sq = occ.trailing_zeros() as usize;
            occ &= occ - 1;
            let nibble = self.pieces[n / 2] >> (4 * (n % 2)) & 15;
            if nibble & 7 == PieceType::King as u8 {
                kings[usize::from(nibble >> 3 & 1)] = Square::from_index(sq);
            }
            n += 1;
        }
        kings
    }

    /// The output bucket of this position in `layout` (by its number of pieces).
    #[inline(always)]
    pub fn output_bucket(&self, layout: Layout) -> usize {
        layout.output_bucket(self.occupancy.count_ones())
    }

    /// The training target: `λ·WDL + (1 − λ)·sigmoid(score / 400)`.
    #[inline(always)]
    pub fn target(&self, wdl_weight: f32) -> f32 {
        let eval = sigmoid(f32::from(self.score) / 400.0);
        wdl_weight * f32::from(self.wdl) / 2.0 + (1.0 - wdl_weight) * eval
    }
}

/// The logistic function.
#[inline(always)]
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// Which positions are kept (the documented defaults of `spar train`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Filter {
    /// Positions whose |score| is at least this are dropped (mates are ±(32000 − plies)).
    pub max_score: i16,
}

/// What the filter dropped and kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Positions read.
    pub read: u64,
    /// Positions kept.
    pub kept: u64,
    /// Dropped for |score| at or above the limit.
    pub big_score: u64,
    /// Dropped for being in check.
    pub in_check: u64,
    /// Dropped because the move played was a capture or a promotion.
    pub noisy: u64,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        self.read += other.read;
        self.kept += other.kept;
        self.big_score += other.big_score;
        self.in_check += other.in_check;
        self.noisy += other.noisy;
    }

    /// One line: kept of read and why the others were dropped.
    pub fn summary(&self) -> String {
        format!(
            "{} positions kept of {} (dropped: {} with |score| over the limit, {} in check, {} with a capture or promotion played)",
            self.kept, self.read, self.big_score, self.in_check, self.noisy
        )
    }
}

impl Filter {
    /// Whether to keep a position; counts the reason when not.
    fn keeps(&self, p: &TrainingPosition, mv: Option<Move>, counts: &mut Counts) -> bool {
        counts.read += 1;
        if p.score.unsigned_abs() >= self.max_score.unsigned_abs() {
            counts.big_score += 1;
        } else if p.position.in_check() {
            counts.in_check += 1;
        } else if mv.is_some_and(|m| m.is_noisy()) {
            counts.noisy += 1;
        } else {
            counts.kept += 1;
            return true;
        }
        false
    }
}

/// Packed positions in an unnamed temporary file (deleted by the system when the process
/// ends, even after `kill -9`).
pub struct PackedFile {
    file: File,
    len: usize,
}

/// The error of a data file: names the file, the byte offset (and line) and the fix.
fn format_error(flag: &str, path: &Path, e: &FormatError) -> String {
    let line = e.line.map_or(String::new(), |l| format!(" (line {l})"));
    format!(
        "{flag} {}: byte {}{line}: {}; the file is damaged or not spar training data (regenerate it with `spar datagen`, or cut it before that byte)",
        path.display(),
        e.offset,
        e.message
    )
}

impl PackedFile {
    /// Converts `paths` (viriformat or bullet text, detected per file) into packed positions
    /// in a temporary file in `dir`, keeping those `filter` keeps. `flag` names the option in
    /// errors.
    pub fn convert(
        flag: &str,
        paths: &[std::path::PathBuf],
        filter: Filter,
        dir: &Path,
    ) -> Result<(PackedFile, Counts), String> {
        let file = tempfile::tempfile_in(dir)
            .map_err(|e| format!("cannot create a temporary file in {}: {e}", dir.display()))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let mut total = Counts::default();
        let io_err = |path: &Path, e: io::Error| format!("{flag} {}: {e}", path.display());
        let write_err = |e: io::Error| format!("writing the temporary data file: {e}");
        for path in paths {
            let mut counts = Counts::default();
            let mut put = |p: &TrainingPosition, mv: Option<Move>| -> io::Result<()> {
                if filter.keeps(p, mv, &mut counts) {
                    out.write_all(&Packed::new(&p.position, p.score, p.result).to_bytes())?;
                }
                Ok(())
            };
            match detect(path).map_err(|e| io_err(path, e))? {
                FileKind::Viriformat => {
                    for game in viriformat::read_games(path).map_err(|e| io_err(path, e))? {
                        let game = game.map_err(|e| format_error(flag, path, &e))?;
                        for p in game.positions() {
                            put(&p.labelled, Some(p.mv)).map_err(write_err)?;
                        }
                    }
                }
                FileKind::Text => {
                    for p in text::read_positions(path).map_err(|e| io_err(path, e))? {
                        let p = p.map_err(|e| format_error(flag, path, &e))?;
                        put(&p, None).map_err(write_err)?;
                    }
                }
            }
            total.add(&counts);
        }
        let file = out.into_inner().map_err(|e| write_err(e.into_error()))?;
        Ok((
            PackedFile {
                file,
                len: total.kept as usize,
            },
            total,
        ))
    }

    /// Packed positions given directly (tests, synthetic problems).
    #[cfg(test)]
    pub fn from_positions(positions: &[Packed], dir: &Path) -> io::Result<PackedFile> {
        let mut out = BufWriter::new(tempfile::tempfile_in(dir)?);
        for p in positions {
            out.write_all(&p.to_bytes())?;
        }
        Ok(PackedFile {
            file: out.into_inner().map_err(|e| e.into_error())?,
            len: positions.len(),
        })
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of chunks.
    pub fn chunks(&self) -> usize {
        self.len.div_ceil(CHUNK_POSITIONS)
    }

    /// Reads chunk `i` (positions `i·CHUNK .. (i+1)·CHUNK`) into `buf`.
    pub fn read_chunk(&self, i: usize, buf: &mut Vec<Packed>) -> io::Result<()> {
        let start = i * CHUNK_POSITIONS;
        let n = CHUNK_POSITIONS.min(self.len - start);
        let mut bytes = vec![0u8; n * PACKED_BYTES];
        let mut f = &self.file;
        f.seek(SeekFrom::Start((start * PACKED_BYTES) as u64))?;
        f.read_exact(&mut bytes)?;
        buf.clear();
        buf.extend(bytes.chunks_exact(PACKED_BYTES).map(Packed::from_bytes));
        Ok(())
    }

    /// Calls `f` on every batch of `batch` positions of one epoch: chunks in an order and
    /// positions within a chunk shuffled by `(seed, epoch)` (`shuffle` false: file order).
    /// Stops early, returning `Ok(false)`, when `f` returns false.
    pub fn for_each_batch(
        &self,
        batch: usize,
        shuffle: Option<(u64, u64)>,
        mut f: impl FnMut(&[Packed]) -> bool,
    ) -> io::Result<bool> {
        let mut order: Vec<usize> = (0..self.chunks()).collect();
        let mut rng = shuffle.map(|(seed, epoch)| SplitMix64::new(mix_seed(seed, epoch)));
        if let Some(rng) = &mut rng {
            rng.shuffle(&mut order);
        }
        let mut chunk = Vec::new();
        let mut pending: Vec<Packed> = Vec::with_capacity(batch);
        for i in order {
            self.read_chunk(i, &mut chunk)?;
            if let Some(rng) = &mut rng {
                rng.shuffle(&mut chunk);
            }
            let mut rest = &chunk[..];
            while !rest.is_empty() {
                let take = (batch - pending.len()).min(rest.len());
                if pending.is_empty() && take == batch {
                    if !f(&rest[..take]) {
                        return Ok(false);
                    }
                } else {
                    pending.extend_from_slice(&rest[..take]);
                    if pending.len() == batch {
                        if !f(&pending) {
                            return Ok(false);
                        }
                        pending.clear();
                    }
                }
                rest = &rest[take..];
            }
        }
        if !pending.is_empty() && !f(&pending) {
            return Ok(false);
        }
        Ok(true)
    }

    /// The first `n` positions (fewer if the file holds fewer).
    pub fn head(&self, n: usize) -> io::Result<Vec<Packed>> {
        let mut chunk = Vec::new();
        if self.len == 0 {
            return Ok(chunk);
        }
        self.read_chunk(0, &mut chunk)?;
        chunk.truncate(n);
        Ok(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::nnue::network::feature_index;
    use engine::types::GameResult;

    #[test]
    fn features_match_the_network_indices_and_bytes_round_trip() {
        for fen in [
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        ] {
            let pos = Position::from_fen(fen).unwrap();
            let p = Packed::new(&pos, 50, GameResult::WhiteWins);
            assert_eq!(Packed::from_bytes(&p.to_bytes()), p);
            let stm = pos.side_to_move();
            assert_eq!(p.stm, stm as u8);
            assert_eq!(p.score, 50 * stm.sign() as i16);
            assert_eq!(p.wdl, if stm == Color::White { 2 } else { 0 });
            let (mut us, mut them) = ([0; 32], [0; 32]);
            let n = p.features(Layout::PLAIN, &mut us, &mut them);
            let mut want_us = Vec::new();
            let mut want_them = Vec::new();
            for sq in pos.occupied() {
                let piece = pos.piece_on(sq).unwrap();
                want_us.push(feature_index(stm, piece.color(), piece.kind(), sq) as u16);
                want_them.push(feature_index(!stm, piece.color(), piece.kind(), sq) as u16);
            }
            assert_eq!(&us[..n], &want_us[..]);
            assert_eq!(&them[..n], &want_them[..]);
            // Bucketed: the engine's views of each side's own king.
            let layout = Layout::new(4, 8).unwrap();
            let n = p.features(layout, &mut us, &mut them);
            let (vu, vt) = (
                layout.view(stm, pos.king(stm)),
                layout.view(!stm, pos.king(!stm)),
            );
            let want: Vec<(u16, u16)> = pos
                .occupied()
                .map(|sq| {
                    let piece = pos.piece_on(sq).unwrap();
                    let own = piece.color() == stm;
                    (
                        vu.index(own, piece.kind(), sq) as u16,
                        vt.index(!own, piece.kind(), sq) as u16,
                    )
                })
                .collect();
            let got: Vec<(u16, u16)> = us[..n]
                .iter()
                .copied()
                .zip(them[..n].iter().copied())
                .collect();
            assert_eq!(got, want);
            assert_eq!(p.output_bucket(layout), 7);
        }
    }

    #[test]
    fn batches_cover_every_position_once_in_a_seeded_order() {
        let dir = tempfile::tempdir().unwrap();
        let positions: Vec<Packed> = (0..1000)
            .map(|i| Packed {
                score: i as i16,
                ..Packed::default()
            })
            .collect();
        let file = PackedFile::from_positions(&positions, dir.path()).unwrap();
        let collect = |shuffle| {
            let mut seen = Vec::new();
            file.for_each_batch(64, shuffle, |b| {
                assert!(b.len() <= 64);
                seen.extend(b.iter().map(|p| p.score));
                true
            })
            .unwrap();
            seen
        };
        let a = collect(Some((1, 0)));
        assert_eq!(a, collect(Some((1, 0))));
        assert_ne!(a, collect(Some((1, 1))));
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..1000).collect::<Vec<i16>>());
        assert_eq!(collect(None), (0..1000).collect::<Vec<i16>>());
    }
}
