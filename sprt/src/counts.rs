//! What a match produces: trinomial counts of single games and pentanomial counts of
//! game pairs, both from the point of view of the tested engine.

use std::ops::{Add, AddAssign};

/// The result of one game for the tested engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// The tested engine won (1 point).
    Win,
    /// The game was drawn (½ point).
    Draw,
    /// The tested engine lost (0 points).
    Loss,
}

impl GameResult {
    /// Points scored by the tested engine, in half points: 2 for a win, 1 for a draw, 0 for a loss.
    pub fn half_points(self) -> usize {
        match self {
            GameResult::Win => 2,
            GameResult::Draw => 1,
            GameResult::Loss => 0,
        }
    }

    /// The same game seen from the opponent's side.
    pub fn flipped(self) -> GameResult {
        match self {
            GameResult::Win => GameResult::Loss,
            GameResult::Draw => GameResult::Draw,
            GameResult::Loss => GameResult::Win,
        }
    }
}

/// Counts of single games: wins, draws and losses of the tested engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Trinomial {
    /// Games won by the tested engine.
    pub wins: u64,
    /// Games drawn.
    pub draws: u64,
    /// Games lost by the tested engine.
    pub losses: u64,
}

impl Trinomial {
    /// Counts from wins, draws and losses (in that order).
    pub fn new(wins: u64, draws: u64, losses: u64) -> Self {
        Trinomial {
            wins,
            draws,
            losses,
        }
    }

    /// Number of games.
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// Points of the tested engine: wins + draws / 2.
    pub fn points(&self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }

    /// Counts one more game.
    pub fn record(&mut self, result: GameResult) {
        match result {
            GameResult::Win => self.wins += 1,
            GameResult::Draw => self.draws += 1,
            GameResult::Loss => self.losses += 1,
        }
    }

    /// The same counts from the opponent's side (wins and losses swapped).
    pub fn flipped(&self) -> Self {
        Trinomial {
            wins: self.losses,
            draws: self.draws,
            losses: self.wins,
        }
    }

    /// Frequencies ordered by score (losses, draws, wins), as fishtest lists them.
    pub fn by_score(&self) -> [u64; 3] {
        [self.losses, self.draws, self.wins]
    }
}

impl Add for Trinomial {
    type Output = Trinomial;
    fn add(mut self, rhs: Trinomial) -> Trinomial {
        self += rhs;
        self
    }
}

impl AddAssign for Trinomial {
    fn add_assign(&mut self, rhs: Trinomial) {
        self.wins += rhs.wins;
        self.draws += rhs.draws;
        self.losses += rhs.losses;
    }
}

impl FromIterator<GameResult> for Trinomial {
    fn from_iter<I: IntoIterator<Item = GameResult>>(iter: I) -> Self {
        let mut counts = Trinomial::default();
        for result in iter {
            counts.record(result);
        }
        counts
    }
}

/// Counts of game pairs (one opening, colours swapped) by the points the tested engine
/// scored in the pair: index 0 = 0 points (LL), 1 = ½ (LD, DL), 2 = 1 (WL, LW, DD),
/// 3 = 1½ (WD, DW), 4 = 2 (WW). This is fastchess's `Ptnml(0-2)` order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Pentanomial(pub [u64; 5]);

impl Pentanomial {
    /// Counts from the five buckets, ordered from 0 to 2 points.
    pub fn new(counts: [u64; 5]) -> Self {
        Pentanomial(counts)
    }

    /// The bucket (0..=4) a pair of games falls into: its points in half points.
    pub fn bucket(first: GameResult, second: GameResult) -> usize {
        first.half_points() + second.half_points()
    }

    /// Counts one more pair of games.
    pub fn record(&mut self, first: GameResult, second: GameResult) {
        self.0[Self::bucket(first, second)] += 1;
    }

    /// Number of pairs.
    pub fn pairs(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Number of games (two per pair).
    pub fn games(&self) -> u64 {
        2 * self.pairs()
    }

    /// Points of the tested engine over all pairs.
    pub fn points(&self) -> f64 {
        self.0
            .iter()
            .enumerate()
            .map(|(i, &n)| 0.5 * i as f64 * n as f64)
            .sum()
    }

    /// The same counts from the opponent's side (buckets reversed).
    pub fn flipped(&self) -> Self {
        let mut counts = self.0;
        counts.reverse();
        Pentanomial(counts)
    }
}

impl Add for Pentanomial {
    type Output = Pentanomial;
    fn add(mut self, rhs: Pentanomial) -> Pentanomial {
        self += rhs;
        self
    }
}

impl AddAssign for Pentanomial {
    fn add_assign(&mut self, rhs: Pentanomial) {
        for (mine, theirs) in self.0.iter_mut().zip(rhs.0) {
            *mine += theirs;
        }
    }
}

impl FromIterator<(GameResult, GameResult)> for Pentanomial {
    fn from_iter<I: IntoIterator<Item = (GameResult, GameResult)>>(iter: I) -> Self {
        let mut counts = Pentanomial::default();
        for (first, second) in iter {
            counts.record(first, second);
        }
        counts
    }
}

/// A sample to analyse: single games or game pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sample {
    /// Counts of single games.
    Trinomial(Trinomial),
    /// Counts of game pairs.
    Pentanomial(Pentanomial),
}

impl Sample {
    /// Number of games in the sample.
    pub fn games(&self) -> u64 {
        match self {
            Sample::Trinomial(t) => t.games(),
            Sample::Pentanomial(p) => p.games(),
        }
    }

    /// Frequencies ordered by score, lowest first (3 or 5 entries), as fishtest lists them.
    pub fn by_score(&self) -> Vec<u64> {
        match self {
            Sample::Trinomial(t) => t.by_score().to_vec(),
            Sample::Pentanomial(p) => p.0.to_vec(),
        }
    }
}

impl From<Trinomial> for Sample {
    fn from(counts: Trinomial) -> Self {
        Sample::Trinomial(counts)
    }
}

impl From<Pentanomial> for Sample {
    fn from(counts: Pentanomial) -> Self {
        Sample::Pentanomial(counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use GameResult::*;

    #[test]
    fn pair_buckets_follow_points() {
        assert_eq!(Pentanomial::bucket(Loss, Loss), 0);
        assert_eq!(Pentanomial::bucket(Loss, Draw), 1);
        assert_eq!(Pentanomial::bucket(Draw, Loss), 1);
        assert_eq!(Pentanomial::bucket(Win, Loss), 2);
        assert_eq!(Pentanomial::bucket(Loss, Win), 2);
        assert_eq!(Pentanomial::bucket(Draw, Draw), 2);
        assert_eq!(Pentanomial::bucket(Win, Draw), 3);
        assert_eq!(Pentanomial::bucket(Draw, Win), 3);
        assert_eq!(Pentanomial::bucket(Win, Win), 4);
    }

    #[test]
    fn counts_add() {
        let a = Trinomial::new(1, 2, 3);
        let b = Trinomial::new(10, 20, 30);
        assert_eq!(a + b, Trinomial::new(11, 22, 33));
        let p = Pentanomial::new([1, 2, 3, 4, 5]) + Pentanomial::new([1, 1, 1, 1, 1]);
        assert_eq!(p, Pentanomial::new([2, 3, 4, 5, 6]));
        assert_eq!(p.games(), 40);
    }
}
