//! Adjudication options with fastchess's words and meaning:
//! `--resign movecount=3 score=600 [twosided=true]`, `--draw movenumber=34 movecount=8 score=20`,
//! `--maxmoves N`, and tablebase adjudication `--tb DIR [pieces=N] [adjudicate=…]`
//! ([`super::tablebase`]).

use engine::position::Position;
use engine::search::Score;
use engine::types::{Color, GameResult};
use serde::{Deserialize, Serialize};

use super::tablebase::TablebaseRule;

/// Resign adjudication: a side whose engine reports a score of `-score` or worse for
/// `movecount` consecutive moves of its own loses; with `twosided`, the opponent must also
/// have reported `+score` or better for its last `movecount` moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resign {
    /// Consecutive moves.
    pub movecount: u32,
    /// Score threshold in centipawns.
    pub score: i32,
    /// Both engines must agree.
    pub twosided: bool,
}

/// Draw adjudication: from full move `movenumber` on, when both engines' scores stay within
/// ±`score` for `movecount` consecutive moves each (2 × movecount plies, counted afresh after
/// every capture or pawn move), the game is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Draw {
    /// First full move at which the rule applies.
    pub movenumber: u32,
    /// Consecutive moves per side.
    pub movecount: u32,
    /// Score threshold in centipawns.
    pub score: i32,
}

/// All adjudication settings of a match.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adjudication {
    /// Resign rule.
    pub resign: Option<Resign>,
    /// Draw rule.
    pub draw: Option<Draw>,
    /// Draw after this many full moves.
    pub max_moves: Option<u32>,
    /// Tablebase adjudication (`--tb`); absent from the JSON when not given, so plans and
    /// run records without it read as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tb: Option<TablebaseRule>,
}

fn parse_words<'a>(
    flag: &str,
    words: &'a [String],
    known: &[&str],
) -> Result<Vec<(&'a str, &'a str)>, String> {
    words
        .iter()
        .map(|w| {
            let (k, v) = w.split_once('=').ok_or_else(|| {
                format!(
                    "{flag}: '{w}' is not key=value (known keys: {})",
                    known.join(", ")
                )
            })?;
            if !known.contains(&k) {
                return Err(format!(
                    "{flag}: unknown key '{k}' (known keys: {})",
                    known.join(", ")
                ));
            }
            Ok((k, v))
        })
        .collect()
}

fn number<T: std::str::FromStr>(flag: &str, k: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{flag}: {k}={v} is not a valid number"))
}

impl Resign {
    /// Parses `movecount=3 score=600 [twosided=true]`.
    pub fn parse(words: &[String]) -> Result<Resign, String> {
        let mut r = Resign {
            movecount: 3,
            score: 600,
            twosided: false,
        };
        for (k, v) in parse_words("--resign", words, &["movecount", "score", "twosided"])? {
            match k {
                "movecount" => r.movecount = number("--resign", k, v)?,
                "score" => r.score = number("--resign", k, v)?,
                _ => r.twosided = number("--resign", k, v)?,
            }
        }
        if r.movecount == 0 || r.score <= 0 {
            return Err("--resign: movecount and score must be positive".to_string());
        }
        Ok(r)
    }
}

impl Draw {
    /// Parses `movenumber=34 movecount=8 score=20`.
    pub fn parse(words: &[String]) -> Result<Draw, String> {
        let mut d = Draw {
            movenumber: 34,
            movecount: 8,
            score: 20,
        };
        for (k, v) in parse_words("--draw", words, &["movenumber", "movecount", "score"])? {
            match k {
                "movenumber" => d.movenumber = number("--draw", k, v)?,
                "movecount" => d.movecount = number("--draw", k, v)?,
                _ => d.score = number("--draw", k, v)?,
            }
        }
        if d.movecount == 0 || d.score < 0 {
            return Err("--draw: movecount must be positive and score non-negative".to_string());
        }
        Ok(d)
    }
}

impl Adjudication {
    /// Builds the rules from the `--resign`, `--draw`, `--maxmoves` and `--tb` options
    /// (shared by `spar match`, `spar sprt`, `spar report` and `spar tune`); `--tb` opens and
    /// checks its tables here, before any game.
    pub fn from_words(
        resign: Option<&[String]>,
        draw: Option<&[String]>,
        max_moves: Option<u32>,
        tb: Option<&[String]>,
    ) -> Result<Adjudication, String> {
        Ok(Adjudication {
            resign: resign.map(Resign::parse).transpose()?,
            draw: draw.map(Draw::parse).transpose()?,
            max_moves: match max_moves {
                Some(0) => return Err("--maxmoves must be at least 1".to_string()),
                m => m,
            },
            tb: tb.map(|w| TablebaseRule::open("--tb", w)).transpose()?,
        })
    }
}

/// What adjudication decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// This side loses by resignation.
    Resign(Color),
    /// Drawn by agreement.
    Draw,
}

/// What an adjudicator is told after each engine move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveScore {
    /// The side that moved.
    pub mover: Color,
    /// The score its engine reported, from its own point of view.
    pub score: Option<Score>,
    /// The full move number of the position the move was played in.
    pub fullmove_before: u32,
    /// The full move number after the move.
    pub fullmove_after: u32,
    /// Whether the move was a capture or a pawn move.
    pub irreversible: bool,
}

/// Decides games early from the engines' scores: the game loop asks it after every engine
/// move. Matches use fastchess's rules ([`MatchAdjudicator`]), datagen its own
/// ([`TrainingAdjudicator`]).
pub trait Adjudicator {
    /// Records one move; a verdict ends the game.
    fn update(&mut self, m: &MoveScore) -> Option<Verdict>;

    /// Looks at the position before its side to move is asked for a move (after the
    /// rules' checks): a result and its reason end the game by tablebase adjudication.
    fn position(&mut self, _pos: &Position) -> Option<(GameResult, String)> {
        None
    }
}

/// The `--resign`/`--draw` rules of a match with the running counters of one game.
pub struct MatchAdjudicator<'a> {
    rules: &'a Adjudication,
    tracker: Tracker,
}

impl<'a> MatchAdjudicator<'a> {
    /// Fresh counters for a new game under `rules`.
    pub fn new(rules: &'a Adjudication) -> MatchAdjudicator<'a> {
        MatchAdjudicator {
            rules,
            tracker: Tracker::default(),
        }
    }
}

impl Adjudicator for MatchAdjudicator<'_> {
    fn update(&mut self, m: &MoveScore) -> Option<Verdict> {
        self.tracker.update(
            self.rules,
            m.mover,
            m.score,
            m.fullmove_after,
            m.irreversible,
        )
    }

    fn position(&mut self, pos: &Position) -> Option<(GameResult, String)> {
        self.rules.tb.as_ref()?.judge(pos)
    }
}

/// Datagen's adjudication, on White-relative scores after every ply: a win when the score
/// stays at ±`win_score` or beyond for `win_plies` plies in a row (one sign), a draw when
/// it stays within ±`draw_score` for `draw_plies` plies in a row, counted from full move
/// `draw_move` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrainingRules {
    /// Win threshold (centipawns, White-relative).
    pub win_score: i32,
    /// Plies in a row at or beyond it.
    pub win_plies: u32,
    /// Draw band (centipawns).
    pub draw_score: i32,
    /// Plies in a row within it.
    pub draw_plies: u32,
    /// First full move at which draw plies count.
    pub draw_move: u32,
}

impl Default for TrainingRules {
    fn default() -> TrainingRules {
        TrainingRules {
            win_score: 2500,
            win_plies: 4,
            draw_score: 4,
            draw_plies: 12,
            draw_move: 40,
        }
    }
}

/// [`TrainingRules`] with the running counters of one game, and datagen's `--tb`.
pub struct TrainingAdjudicator {
    rules: TrainingRules,
    /// Ends the game at the first position the tables cover, with their result.
    tb: Option<TablebaseRule>,
    /// Consecutive plies at ±`win_score` or beyond, with the sign of the last one.
    win: (i32, u32),
    /// Consecutive plies within ±`draw_score` from `draw_move` on.
    draw: u32,
}

impl TrainingAdjudicator {
    /// Fresh counters for a new game.
    pub fn new(rules: TrainingRules) -> TrainingAdjudicator {
        TrainingAdjudicator {
            rules,
            tb: None,
            win: (0, 0),
            draw: 0,
        }
    }

    /// Adds tablebase adjudication (`spar datagen --tb`).
    pub fn with_tablebase(mut self, tb: Option<TablebaseRule>) -> TrainingAdjudicator {
        self.tb = tb;
        self
    }

    /// Records the White-relative score of the move played in full move `fullmove`.
    fn record(&mut self, white_cp: i32, fullmove: u32) -> Option<Verdict> {
        let r = &self.rules;
        let sign = if white_cp >= r.win_score {
            1
        } else if white_cp <= -r.win_score {
            -1
        } else {
            0
        };
        self.win = match (sign, self.win) {
            (0, _) => (0, 0),
            (s, (last, n)) if s == last => (s, n + 1),
            (s, _) => (s, 1),
        };
        if fullmove >= r.draw_move && white_cp.abs() <= r.draw_score {
            self.draw += 1;
        } else {
            self.draw = 0;
        }
        if self.win.1 >= r.win_plies {
            Some(Verdict::Resign(if self.win.0 > 0 {
                Color::Black
            } else {
                Color::White
            }))
        } else if self.draw >= r.draw_plies {
            Some(Verdict::Draw)
        } else {
            None
        }
    }
}

impl Adjudicator for TrainingAdjudicator {
    fn update(&mut self, m: &MoveScore) -> Option<Verdict> {
        let cp = m.score.map_or(0, Score::as_cp);
        self.record(cp * m.mover.sign(), m.fullmove_before)
    }

    fn position(&mut self, pos: &Position) -> Option<(GameResult, String)> {
        self.tb.as_ref()?.judge(pos)
    }
}

/// Running counters of one game.
#[derive(Clone, Debug, Default)]
pub struct Tracker {
    losing: [u32; 2],
    winning: [u32; 2],
    draw_plies: u32,
}

impl Tracker {
    /// Records the score `mover`'s engine reported for the move just played.
    pub fn update(
        &mut self,
        rules: &Adjudication,
        mover: Color,
        score: Option<Score>,
        fullmove: u32,
        irreversible: bool,
    ) -> Option<Verdict> {
        let m = mover as usize;
        if let Some(r) = rules.resign {
            match score {
                Some(s) if s.as_cp() <= -r.score => {
                    self.losing[m] += 1;
                    self.winning[m] = 0;
                }
                Some(s) if s.as_cp() >= r.score => {
                    self.winning[m] += 1;
                    self.losing[m] = 0;
                }
                _ => {
                    self.losing[m] = 0;
                    self.winning[m] = 0;
                }
            }
            if self.losing[m] >= r.movecount && (!r.twosided || self.winning[1 - m] >= r.movecount)
            {
                return Some(Verdict::Resign(mover));
            }
        }
        if let Some(d) = rules.draw {
            if irreversible {
                self.draw_plies = 0;
            }
            match score {
                Some(Score::Cp(cp)) if cp.abs() <= d.score => self.draw_plies += 1,
                _ => self.draw_plies = 0,
            }
            if fullmove >= d.movenumber && self.draw_plies >= 2 * d.movecount {
                return Some(Verdict::Draw);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_fastchess_words() {
        assert_eq!(
            Resign::parse(&w("movecount=3 score=600 twosided=true")).unwrap(),
            Resign {
                movecount: 3,
                score: 600,
                twosided: true
            }
        );
        assert_eq!(
            Draw::parse(&w("movenumber=40 movecount=4 score=10")).unwrap(),
            Draw {
                movenumber: 40,
                movecount: 4,
                score: 10
            }
        );
        assert!(Resign::parse(&w("movecount=x"))
            .unwrap_err()
            .contains("movecount=x"));
        assert!(Draw::parse(&w("bogus=1"))
            .unwrap_err()
            .contains("unknown key 'bogus'"));
        assert!(Draw::parse(&w("movecount=0")).is_err());
    }

    /// Resign rules of `movecount` moves beyond 500 cp.
    fn resign(movecount: u32, twosided: bool) -> Adjudication {
        Adjudication {
            resign: Some(Resign {
                movecount,
                score: 500,
                twosided,
            }),
            ..Default::default()
        }
    }

    /// The verdicts of one tracker after each move (mover, score, full move, irreversible).
    fn verdicts(rules: &Adjudication, moves: &[(Color, Score, u32, bool)]) -> Vec<Option<Verdict>> {
        let mut t = Tracker::default();
        moves
            .iter()
            .map(|&(mover, score, fullmove, irreversible)| {
                t.update(rules, mover, Some(score), fullmove, irreversible)
            })
            .collect()
    }

    #[test]
    fn resign_needs_consecutive_moves() {
        let (w, b) = (Color::White, Color::Black);
        assert_eq!(
            verdicts(
                &resign(2, false),
                &[
                    (w, Score::Cp(-600), 10, false),
                    (b, Score::Cp(600), 10, false),
                    (w, Score::Cp(-100), 11, false),
                    (w, Score::Cp(-600), 12, false),
                    (w, Score::Mate(-3), 13, false),
                ]
            ),
            [None, None, None, None, Some(Verdict::Resign(w))]
        );
    }

    #[test]
    fn twosided_resign_needs_the_winner_to_agree() {
        let (w, b) = (Color::White, Color::Black);
        assert_eq!(
            verdicts(
                &resign(1, true),
                &[
                    (w, Score::Cp(-600), 10, false),
                    (b, Score::Cp(600), 10, false),
                    (w, Score::Cp(-600), 11, false),
                ]
            ),
            [None, None, Some(Verdict::Resign(w))]
        );
    }

    #[test]
    fn draw_counts_plies_after_movenumber_and_resets() {
        let rules = Adjudication {
            draw: Some(Draw {
                movenumber: 10,
                movecount: 2,
                score: 20,
            }),
            ..Default::default()
        };
        let (w, b) = (Color::White, Color::Black);
        let quiet = Score::Cp(5);
        assert_eq!(
            verdicts(
                &rules,
                &[
                    (w, quiet, 12, false),
                    (b, quiet, 12, false),
                    (w, quiet, 12, false),
                    // A capture resets the count (and this ply counts as the first again).
                    (b, quiet, 12, true),
                    (w, quiet, 13, false),
                    (b, quiet, 13, false),
                    (w, quiet, 14, false),
                ]
            ),
            [None, None, None, None, None, None, Some(Verdict::Draw)]
        );
        // Too early in the game: no verdict.
        let early: Vec<_> = (0..10)
            .map(|ply| (Color::from_index(ply), Score::Cp(0), 5, false))
            .collect();
        assert!(verdicts(&rules, &early).iter().all(Option::is_none));
    }

    #[test]
    fn training_win_needs_four_plies_on_one_side() {
        let mut a = TrainingAdjudicator::new(TrainingRules::default());
        assert_eq!(a.record(2600, 10), None);
        assert_eq!(a.record(2500, 10), None);
        assert_eq!(a.record(-2600, 11), None, "a swing restarts the count");
        assert_eq!(a.record(-2600, 11), None);
        assert_eq!(a.record(-2700, 12), None);
        assert_eq!(
            a.record(-29999, 12),
            Some(Verdict::Resign(Color::White)),
            "Black wins"
        );
        let mut b = TrainingAdjudicator::new(TrainingRules::default());
        for _ in 0..3 {
            assert_eq!(b.record(3000, 20), None);
        }
        assert_eq!(b.record(3000, 21), Some(Verdict::Resign(Color::Black)));
    }

    #[test]
    fn training_draw_needs_twelve_quiet_plies_from_move_40() {
        let mut a = TrainingAdjudicator::new(TrainingRules::default());
        for _ in 0..30 {
            assert_eq!(a.record(0, 39), None, "too early");
        }
        for i in 0..11 {
            assert_eq!(a.record(if i % 2 == 0 { 4 } else { -4 }, 40), None);
        }
        assert_eq!(a.record(0, 41), Some(Verdict::Draw));
        let mut b = TrainingAdjudicator::new(TrainingRules::default());
        for _ in 0..11 {
            b.record(1, 50);
        }
        assert_eq!(
            b.record(5, 50),
            None,
            "one score beyond ±4 restarts the count"
        );
        for _ in 0..11 {
            assert_eq!(b.record(-2, 51), None);
        }
        assert_eq!(b.record(3, 52), Some(Verdict::Draw));
    }

    #[test]
    fn training_scores_are_turned_white_relative() {
        let mut a = TrainingAdjudicator::new(TrainingRules::default());
        let ply = |mover, cp| MoveScore {
            mover,
            score: Some(Score::Cp(cp)),
            fullmove_before: 10,
            fullmove_after: 10,
            irreversible: false,
        };
        // Black's engine says +2600 for Black: White-relative -2600.
        for _ in 0..2 {
            assert_eq!(a.update(&ply(Color::White, -2600)), None);
            let v = a.update(&ply(Color::Black, 2600));
            if v.is_some() {
                assert_eq!(v, Some(Verdict::Resign(Color::White)));
                return;
            }
        }
        panic!("four plies at -2600 for White must end the game");
    }
}
