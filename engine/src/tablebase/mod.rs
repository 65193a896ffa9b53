//! Syzygy endgame tablebases: win/draw/loss (`.rtbw`) and distance-to-zeroing (`.rtbz`)
//! probing from the engine's own [`Position`].
//!
//! [`Tablebases::open`] scans a colon-separated list of directories for table files and
//! records which materials they cover; each file is memory-mapped and its header read on the
//! first probe that needs it (once, thread-safely), so one `Tablebases` can be shared by
//! every search thread through an `Arc`. Probes allocate nothing. A damaged file makes the
//! probes that need it return [`TbError::Corrupt`] naming the file, never a panic.
//!
//! The tables hold positions without castling rights or en passant; [`Tablebases::probe_wdl`]
//! and [`Tablebases::probe_dtz`] resolve captures and en passant by a small search before
//! reading the tables, as the reference probers do, so their answers match python-chess's
//! `chess.syzygy` (and Stockfish's): see `engine/tests/tablebase.rs`.
//!
//! ```no_run
//! use engine::position::Position;
//! use engine::tablebase::{Tablebases, Wdl};
//!
//! let tb = Tablebases::open("/data/syzygy/3-4-5:/more/syzygy").expect("tables");
//! let pos = Position::from_fen("8/8/8/4k3/8/8/8/4K2R w - - 0 1").unwrap();
//! assert_eq!(tb.probe_wdl(&pos).unwrap(), Some(Wdl::Win));
//! ```

mod bytes;
mod encoding;
mod error;
mod material;
mod pairs;
mod probe;
mod table;

use std::collections::HashMap;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use error::TbError;

use material::{MaterialKey, TableName};
use table::{Kind, Table};

use crate::position::Position;

/// Where `.ci/setup` puts the 3-4-piece tables, if they are there: `$SPAR_SYZYGY`, else
/// `${XDG_CACHE_HOME:-$HOME/.cache}/spar/syzygy/3-4` (a directory holding `KRvK.rtbw`). The
/// tests find their tables here.
pub fn cached_tables() -> Option<PathBuf> {
    let dir = match std::env::var_os("SPAR_SYZYGY") {
        Some(d) => PathBuf::from(d),
        None => std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?
            .join("spar")
            .join("syzygy")
            .join("3-4"),
    };
    dir.join("KRvK.rtbw").is_file().then_some(dir)
}

/// A game-theoretic value from the side to move's point of view, under the 50-move rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(i8)]
pub enum Wdl {
    /// Lost.
    Loss = -2,
    /// Lost, but the 50-move rule saves the draw.
    BlessedLoss = -1,
    /// Drawn.
    Draw = 0,
    /// Won, but the 50-move rule spoils the win.
    CursedWin = 1,
    /// Won.
    Win = 2,
}

impl Wdl {
    /// The value for -2..=2 (values outside are clamped).
    pub fn from_i32(v: i32) -> Wdl {
        match v {
            i32::MIN..=-2 => Wdl::Loss,
            -1 => Wdl::BlessedLoss,
            0 => Wdl::Draw,
            1 => Wdl::CursedWin,
            _ => Wdl::Win,
        }
    }

    /// -2 (loss) to 2 (win).
    pub fn to_i32(self) -> i32 {
        self as i32
    }
}

/// A table file found on disk, opened on first use.
struct LazyTable {
    path: PathBuf,
    table: OnceLock<Result<Table, TbError>>,
}

impl LazyTable {
    fn new(path: PathBuf) -> LazyTable {
        LazyTable {
            path,
            table: OnceLock::new(),
        }
    }

    /// The table, mapped and parsed on the first call.
    #[inline]
    fn get(&self, name: &TableName, kind: Kind) -> Result<&Table, TbError> {
        match self
            .table
            .get_or_init(|| Table::open(&self.path, name, kind))
        {
            Ok(t) => Ok(t),
            Err(e) => Err(e.clone()),
        }
    }
}

/// One material (such as `KRvK`): its WDL and DTZ files, where present.
struct Slot {
    name: TableName,
    wdl: Option<LazyTable>,
    dtz: Option<LazyTable>,
}

/// A set of Syzygy tables: open once, share with an `Arc`, probe from any thread.
pub struct Tablebases {
    slots: Vec<Slot>,
    /// Material (both colour orders) to slot.
    index: HashMap<MaterialKey, usize>,
    max_pieces: u32,
    files: usize,
}

impl std::fmt::Debug for Tablebases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tablebases")
            .field("files", &self.files)
            .field("materials", &self.slots.len())
            .field("max_pieces", &self.max_pieces)
            .finish()
    }
}

const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<Tablebases>();
};

impl Tablebases {
    /// Finds the tables in `path`, a list of directories separated by `:` (as UCI's
    /// `SyzygyPath`). Files are only listed here; each is mapped and checked on first use.
    ///
    /// Errors: an empty list, a missing directory, an entry that is a file, an unreadable
    /// directory, a table name that is not a regular file (a directory, or a FIFO whose open
    /// would block for ever), or no `*.rtbw` / `*.rtbz` table in any of the directories.
    pub fn open(path: &str) -> Result<Tablebases, TbError> {
        let dirs: Vec<&str> = path.split(':').filter(|d| !d.trim().is_empty()).collect();
        if dirs.is_empty() {
            return Err(TbError::EmptyPath);
        }
        let mut slots: Vec<Slot> = Vec::new();
        let mut by_name: HashMap<String, usize> = HashMap::new();
        let mut files = 0;
        for dir in dirs {
            let dir = Path::new(dir);
            let io = |e: std::io::Error| TbError::Io {
                path: dir.to_path_buf(),
                message: e.to_string(),
            };
            match fs::metadata(dir) {
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    return Err(TbError::NoSuchDirectory {
                        path: dir.to_path_buf(),
                    })
                }
                Err(e) => return Err(io(e)),
                Ok(m) if !m.is_dir() => {
                    return Err(TbError::NotADirectory {
                        path: dir.to_path_buf(),
                    })
                }
                Ok(_) => {}
            }
            let mut entries: Vec<PathBuf> = fs::read_dir(dir)
                .map_err(io)?
                .map(|e| e.map(|e| e.path()).map_err(io))
                .collect::<Result<_, _>>()?;
            entries.sort();
            for file in entries {
                let (Some(stem), Some(ext)) = (
                    file.file_stem().and_then(|s| s.to_str()),
                    file.extension().and_then(|s| s.to_str()),
                ) else {
                    continue;
                };
                let kind = match ext {
                    "rtbw" => Kind::Wdl,
                    "rtbz" => Kind::Dtz,
                    _ => continue,
                };
                let Some(name) = TableName::parse(stem) else {
                    continue;
                };
                let i = *by_name.entry(name.name.clone()).or_insert_with(|| {
                    slots.push(Slot {
                        name,
                        wdl: None,
                        dtz: None,
                    });
                    slots.len() - 1
                });
                let entry = match kind {
                    Kind::Wdl => &mut slots[i].wdl,
                    Kind::Dtz => &mut slots[i].dtz,
                };
                // The first directory that has a file wins.
                if entry.is_none() {
                    table::check_regular(&file)?;
                    *entry = Some(LazyTable::new(file));
                    files += 1;
                }
            }
        }
        if files == 0 {
            return Err(TbError::NoTables {
                path: path.to_string(),
            });
        }
        let mut index = HashMap::with_capacity(2 * slots.len());
        for (i, slot) in slots.iter().enumerate() {
            index.insert(slot.name.key, i);
            index.insert(slot.name.key.mirrored(), i);
        }
        let max_pieces = slots
            .iter()
            .filter(|s| s.wdl.is_some())
            .map(|s| s.name.key.total())
            .max()
            .unwrap_or(0);
        Ok(Tablebases {
            slots,
            index,
            max_pieces,
            files,
        })
    }

    /// The most pieces (kings included) of any WDL table found: positions with more are not
    /// probed.
    pub fn max_pieces(&self) -> u32 {
        self.max_pieces
    }

    /// How many table files (`.rtbw` and `.rtbz`) were found.
    pub fn file_count(&self) -> usize {
        self.files
    }

    /// Maps and checks every table found (its magic, header and section sizes), so that a
    /// damaged or truncated file is reported now rather than at the first probe that needs
    /// it; the first error, naming its file.
    pub fn verify(&self) -> Result<(), TbError> {
        for slot in &self.slots {
            if let Some(t) = &slot.wdl {
                t.get(&slot.name, Kind::Wdl)?;
            }
            if let Some(t) = &slot.dtz {
                t.get(&slot.name, Kind::Dtz)?;
            }
        }
        Ok(())
    }

    /// Every table file in use (the first found of each name), with its size in bytes, by
    /// path: what a cluster run pins so that every node probes the same tables.
    pub fn files(&self) -> Vec<(PathBuf, u64)> {
        let mut files: Vec<(PathBuf, u64)> = self
            .slots
            .iter()
            .flat_map(|s| [&s.wdl, &s.dtz])
            .flatten()
            .map(|t| {
                let len = fs::metadata(&t.path).map_or(0, |m| m.len());
                (t.path.clone(), len)
            })
            .collect();
        files.sort();
        files
    }

    /// Whether a WDL table (and a DTZ table too, if `dtz`) covers the position's material.
    fn covers(&self, pos: &Position, dtz: bool) -> bool {
        let pieces = pos.occupied().count();
        if !pos.castling().is_empty() || pieces > self.max_pieces {
            return false;
        }
        if pieces == 2 {
            return true;
        }
        let Some(&i) = self.index.get(&MaterialKey::of_position(pos)) else {
            return false;
        };
        let slot = &self.slots[i];
        slot.wdl.is_some() && (!dtz || slot.dtz.is_some())
    }

    /// The win/draw/loss value of `pos` for the side to move, assuming the position was
    /// reached by a capture or pawn move (50-move counter at zero).
    ///
    /// `Ok(None)` when the tables do not cover the position (material not found, castling
    /// rights, more than [`Tablebases::max_pieces`] pieces); `Err` when a table it needs is
    /// damaged or unreadable.
    pub fn probe_wdl(&self, pos: &Position) -> Result<Option<Wdl>, TbError> {
        if !self.covers(pos, false) {
            return Ok(None);
        }
        probe::finish(self.wdl(pos).map(Wdl::from_i32))
    }

    /// The distance to zeroing (the next capture or pawn move) in plies with the sign of the
    /// side to move's result, as python-chess's `probe_dtz` and Stockfish report it: 0 for a
    /// draw; `1..=100` a win, `> 100` a cursed win; `-100..=-1` a loss, `< -100` a blessed
    /// loss. The value may be one ply too large (the tables round), never too small.
    ///
    /// `Ok(None)` when the WDL or DTZ tables do not cover the position; `Err` when a table
    /// it needs is damaged or unreadable.
    pub fn probe_dtz(&self, pos: &Position) -> Result<Option<i32>, TbError> {
        if !self.covers(pos, true) {
            return Ok(None);
        }
        probe::finish(self.dtz(pos, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("spar-tb-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn open_reports_bad_paths() {
        assert_eq!(Tablebases::open("").err(), Some(TbError::EmptyPath));
        assert_eq!(Tablebases::open("::").err(), Some(TbError::EmptyPath));
        let missing = "/no/such/syzygy/dir";
        assert_eq!(
            Tablebases::open(missing).err(),
            Some(TbError::NoSuchDirectory {
                path: missing.into()
            })
        );
        let dir = temp_dir("bad-paths");
        let file = dir.join("KRvK.rtbw");
        fs::write(&file, b"x").unwrap();
        let file = file.to_str().unwrap();
        assert_eq!(
            Tablebases::open(file).err(),
            Some(TbError::NotADirectory { path: file.into() })
        );
        let empty = temp_dir("empty");
        fs::write(empty.join("README.txt"), b"no tables here").unwrap();
        let err = Tablebases::open(empty.to_str().unwrap()).err().unwrap();
        assert!(matches!(err, TbError::NoTables { .. }), "{err}");
        assert!(err.to_string().contains(empty.to_str().unwrap()));
        let _ = fs::remove_dir_all(dir);
        let _ = fs::remove_dir_all(empty);
    }

    #[test]
    fn a_table_name_that_is_no_regular_file_is_refused_before_any_open() {
        // A directory named like a table.
        let dir = temp_dir("not-a-file");
        fs::write(dir.join("KQvK.rtbw"), vec![0x55u8; 64 + 16]).unwrap();
        fs::create_dir(dir.join("KRvK.rtbw")).unwrap();
        let err = Tablebases::open(dir.to_str().unwrap()).unwrap_err();
        assert_eq!(
            err,
            TbError::NotAFile {
                path: dir.join("KRvK.rtbw")
            }
        );
        assert!(err.to_string().contains("not a regular file"), "{err}");
        fs::remove_dir(dir.join("KRvK.rtbw")).unwrap();
        // A FIFO: opening it would block for ever.
        #[cfg(unix)]
        {
            let fifo = dir.join("KPvK.rtbz");
            let made = std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .is_ok_and(|s| s.success());
            if made {
                let err = Tablebases::open(dir.to_str().unwrap()).unwrap_err();
                assert_eq!(err, TbError::NotAFile { path: fifo.clone() });
                // The same check guards the open of a table found earlier.
                let name = TableName::parse("KPvK").unwrap();
                assert!(matches!(
                    Table::open(&fifo, &name, Kind::Dtz),
                    Err(TbError::NotAFile { .. })
                ));
            }
        }
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn garbage_and_truncated_files_are_errors_naming_the_file() {
        let dir = temp_dir("garbage");
        // Right size, wrong magic.
        fs::write(dir.join("KRvK.rtbw"), vec![0x55u8; 64 + 16]).unwrap();
        // Right magic, truncated.
        fs::write(dir.join("KQvK.rtbw"), [0x71, 0xE8, 0x23, 0x5D, 0, 0]).unwrap();
        let tb = Tablebases::open(dir.to_str().unwrap()).unwrap();
        assert_eq!((tb.max_pieces(), tb.file_count()), (3, 2));
        assert_eq!(
            format!("{tb:?}"),
            "Tablebases { files: 2, materials: 2, max_pieces: 3 }"
        );
        for (fen, file) in [
            ("8/8/8/4k3/8/8/8/4K2R w - - 0 1", "KRvK.rtbw"),
            ("8/8/8/4k3/8/8/8/4K2Q b - - 0 1", "KQvK.rtbw"),
        ] {
            let pos = Position::from_fen(fen).unwrap();
            let err = tb.probe_wdl(&pos).unwrap_err();
            assert!(matches!(err, TbError::Corrupt { .. }), "{err}");
            assert!(err.to_string().contains(file), "{err}");
            // The error sticks.
            assert_eq!(tb.probe_wdl(&pos).unwrap_err(), err);
        }
        // Materials without a table, castling rights and KvK.
        let pos = Position::from_fen("8/8/8/4k3/8/8/8/4K2B w - - 0 1").unwrap();
        assert_eq!(tb.probe_wdl(&pos), Ok(None));
        let pos = Position::from_fen("8/8/8/4k3/8/8/8/4K2R w K - 0 1").unwrap();
        assert_eq!(tb.probe_wdl(&pos), Ok(None));
        let pos = Position::from_fen("8/8/8/4k3/8/8/8/4K3 w - - 0 1").unwrap();
        assert_eq!(tb.probe_wdl(&pos), Ok(Some(Wdl::Draw)));
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn wdl_values() {
        for v in -2..=2 {
            assert_eq!(Wdl::from_i32(v).to_i32(), v);
        }
        assert_eq!(Wdl::from_i32(7), Wdl::Win);
    }
}
