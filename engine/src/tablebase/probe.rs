//! The probing rules on top of the raw tables: captures are searched before the table is
//! read (the tables store a position's value as if captures did not exist when one of them
//! is at least as good), en passant is resolved by playing it, and DTZ is found from the
//! DTZ table, or from WDL and one ply of search where the table stores only the other side
//! to move. The rules and their order are those of the reference probers, so that values
//! agree exactly with python-chess's `chess.syzygy` (itself following Stockfish).
//!
//! Values are `i32` from -2 (loss) to 2 (win) while searching; nothing here allocates.

use super::material::MaterialKey;
use super::table::{Kind, Raw};
use super::{Tablebases, TbError};
use crate::position::Position;
use crate::types::{Move, PieceType};

/// Why a probe gave no value.
pub(super) enum Fail {
    /// A table the probe needs is not in the set.
    Missing,
    /// A table the probe needs is damaged or unreadable.
    Error(TbError),
}

impl From<TbError> for Fail {
    fn from(e: TbError) -> Fail {
        Fail::Error(e)
    }
}

/// A probe result inside the search.
type Probe<T> = Result<T, Fail>;

/// The public form of a probe result: a missing table is `Ok(None)`.
pub(super) fn finish<T>(result: Probe<T>) -> Result<Option<T>, TbError> {
    match result {
        Ok(v) => Ok(Some(v)),
        Err(Fail::Missing) => Ok(None),
        Err(Fail::Error(e)) => Err(e),
    }
}

/// How `probe_ab` found its value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Found {
    /// From the table (or a capture no better than it).
    Table,
    /// A capture is the best move (a zeroing move wins or is the best try).
    Capture,
}

/// DTZ probes recurse through at most two plies of quiet moves on valid tables; deeper
/// means the tables' side-to-move flags contradict each other.
const MAX_DTZ_DEPTH: u32 = 8;

/// DTZ of a position whose best move zeroes the 50-move counter, by WDL value.
fn before_zeroing(wdl: i32) -> i32 {
    match wdl {
        2 => 1,
        1 => 101,
        -1 => -101,
        -2 => -1,
        _ => 0,
    }
}

/// Whether a move zeroes the 50-move counter (a capture or a pawn move).
#[inline]
fn zeroing(pos: &Position, mv: Move) -> bool {
    mv.is_capture() || mv.is_en_passant() || pos.moved(mv) == PieceType::Pawn
}

impl Tablebases {
    /// The value the WDL table stores for `pos` (no captures considered).
    fn table_wdl(&self, pos: &Position) -> Probe<i32> {
        if pos.occupied() == pos.pieces(PieceType::King) {
            return Ok(0);
        }
        let key = MaterialKey::of_position(pos);
        let slot = &self.slots[*self.index.get(&key).ok_or(Fail::Missing)?];
        let table = slot
            .wdl
            .as_ref()
            .ok_or(Fail::Missing)?
            .get(&slot.name, Kind::Wdl)?;
        match table.probe(pos, key, 0)? {
            Raw::Value(v) => Ok(v),
            Raw::OtherSide => Err(Fail::Missing),
        }
    }

    /// The value the DTZ table stores for `pos`, whose WDL value is `wdl`.
    fn table_dtz(&self, pos: &Position, wdl: i32) -> Probe<Raw> {
        let key = MaterialKey::of_position(pos);
        let slot = &self.slots[*self.index.get(&key).ok_or(Fail::Missing)?];
        let table = slot
            .dtz
            .as_ref()
            .ok_or(Fail::Missing)?
            .get(&slot.name, Kind::Dtz)?;
        Ok(table.probe(pos, key, wdl)?)
    }

    /// Alpha-beta over captures (not en passant), then the table: the value of `pos`
    /// ignoring en passant, and whether a capture gave it.
    fn probe_ab(&self, pos: &Position, mut alpha: i32, beta: i32) -> Probe<(i32, Found)> {
        if pos.occupied().count() > 8 {
            return Err(Fail::Missing);
        }
        let moves = pos.legal_moves();
        for &mv in moves.as_slice() {
            if !mv.is_capture() || mv.is_en_passant() {
                continue;
            }
            let mut child = pos.clone();
            child.play_mut(mv);
            let v = -self.probe_ab(&child, -beta, -alpha)?.0;
            if v > alpha {
                if v >= beta {
                    return Ok((v, Found::Capture));
                }
                alpha = v;
            }
        }
        let v = self.table_wdl(pos)?;
        if alpha >= v {
            Ok((
                alpha,
                if alpha > 0 {
                    Found::Capture
                } else {
                    Found::Table
                },
            ))
        } else {
            Ok((v, Found::Table))
        }
    }

    /// The best value of the en-passant captures in `pos`, if it has any (-3 if not).
    fn best_en_passant(&self, pos: &Position) -> Probe<i32> {
        let mut best = -3;
        if pos.en_passant().is_none() {
            return Ok(best);
        }
        let moves = pos.legal_moves();
        for &mv in moves.as_slice() {
            if !mv.is_en_passant() {
                continue;
            }
            let mut child = pos.clone();
            child.play_mut(mv);
            best = best.max(-self.probe_ab(&child, -2, 2)?.0);
        }
        Ok(best)
    }

    /// Whether every legal move of `pos` is an en-passant capture.
    fn only_en_passant(pos: &Position) -> bool {
        pos.legal_moves()
            .as_slice()
            .iter()
            .all(|mv| mv.is_en_passant())
    }

    /// The WDL value of `pos`, en passant included.
    pub(super) fn wdl(&self, pos: &Position) -> Probe<i32> {
        let mut v = self.probe_ab(pos, -2, 2)?.0;
        let ep = self.best_en_passant(pos)?;
        if ep > -3 && (ep >= v || (v == 0 && Self::only_en_passant(pos))) {
            v = ep;
        }
        Ok(v)
    }

    /// The DTZ value of `pos`, en passant included.
    pub(super) fn dtz(&self, pos: &Position, depth: u32) -> Probe<i32> {
        let mut v = self.dtz_no_ep(pos, depth)?;
        let ep = self.best_en_passant(pos)?;
        if ep > -3 {
            let ep = before_zeroing(ep);
            let take = if v < -100 {
                ep >= 0
            } else if v < 0 {
                !(-100..0).contains(&ep)
            } else if v > 100 {
                ep > 0
            } else if v > 0 {
                ep == 1
            } else {
                ep >= 0 || Self::only_en_passant(pos)
            };
            if take {
                v = ep;
            }
        }
        Ok(v)
    }

    /// The DTZ value of `pos`, ignoring its en-passant captures.
    fn dtz_no_ep(&self, pos: &Position, depth: u32) -> Probe<i32> {
        let (wdl, found) = self.probe_ab(pos, -2, 2)?;
        if wdl == 0 {
            return Ok(0);
        }
        if found == Found::Capture {
            return Ok(before_zeroing(wdl));
        }
        let moves = pos.legal_moves();
        if wdl > 0 {
            // A pawn push that keeps the win zeroes at once.
            for &mv in moves.as_slice() {
                if pos.moved(mv) != PieceType::Pawn || mv.is_capture() || mv.is_en_passant() {
                    continue;
                }
                let mut child = pos.clone();
                child.play_mut(mv);
                if -self.wdl(&child)? == wdl {
                    return Ok(if wdl == 2 { 1 } else { 101 });
                }
            }
        }
        if let Raw::Value(dtz) = self.table_dtz(pos, wdl)? {
            return Ok(before_zeroing(wdl) + if wdl > 0 { dtz } else { -dtz });
        }
        // The table holds the other side to move: one ply of search.
        if depth >= MAX_DTZ_DEPTH {
            return Err(self.inconsistent(pos));
        }
        if wdl > 0 {
            let mut best = 0xFFFF;
            for &mv in moves.as_slice() {
                if zeroing(pos, mv) {
                    continue;
                }
                let mut child = pos.clone();
                child.play_mut(mv);
                let v = -self.dtz(&child, depth + 1)?;
                if v == 1 && child.in_check() && !child.has_legal_move() {
                    best = 1;
                } else if v > 0 && v + 1 < best {
                    best = v + 1;
                }
            }
            Ok(best)
        } else {
            let mut best = -1;
            for &mv in moves.as_slice() {
                let mut child = pos.clone();
                child.play_mut(mv);
                let v = if zeroing(pos, mv) {
                    if wdl == -2 {
                        -1
                    } else if self.probe_ab(&child, 1, 2)?.0 == 2 {
                        0
                    } else {
                        -101
                    }
                } else {
                    -self.dtz(&child, depth + 1)? - 1
                };
                best = best.min(v);
            }
            Ok(best)
        }
    }

    /// The error for DTZ tables whose side-to-move flags send the search round in circles.
    fn inconsistent(&self, pos: &Position) -> Fail {
        let key = MaterialKey::of_position(pos);
        let path = self
            .index
            .get(&key)
            .and_then(|&i| self.slots[i].dtz.as_ref())
            .map(|t| t.path.clone())
            .unwrap_or_default();
        Fail::Error(TbError::Corrupt {
            path,
            reason: "side-to-move flags of the DTZ tables contradict each other".to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtz_before_a_zeroing_move() {
        assert_eq!([-2, -1, 0, 1, 2].map(before_zeroing), [-1, -101, 0, 101, 1]);
    }

    #[test]
    fn zeroing_moves() {
        let pos = Position::from_fen("4k3/8/8/3pP3/8/8/8/4K2R w - d6 0 1").unwrap();
        let uci = |s: &str| pos.parse_uci_move(s).unwrap();
        assert!(zeroing(&pos, uci("e5d6")));
        assert!(zeroing(&pos, uci("e5e6")));
        assert!(!zeroing(&pos, uci("h1h2")));
    }
}
