//! What a match produces: trinomial counts of single games and pentanomial counts of
//! game pairs, both from the point of view of the tested engine.

use std::fmt;
use std::ops::{Add, AddAssign};

/// Counts whose totals do not fit in 64 bits: the numbers given and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountError {
    /// The counts as given, in order.
    pub counts: Vec<u64>,
    /// What cannot be counted (`games`, `pairs`, `games (2 per pair)`).
    pub total: &'static str,
}

impl fmt::Display for CountError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let counts: Vec<String> = self.counts.iter().map(u64::to_string).collect();
        write!(
            f,
            "counts {} add up to more {} than fit in 64 bits (at most {}): check the numbers",
            counts.join(" "),
            self.total,
            u64::MAX
        )
    }
}

impl std::error::Error for CountError {}

/// The result of one game for the tested engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlayerResult {
    /// The tested engine won (1 point).
    Win,
    /// The game was drawn (½ point).
    Draw,
    /// The tested engine lost (0 points).
    Loss,
}

impl PlayerResult {
    /// Points scored by the tested engine, in half points: 2 for a win, 1 for a draw, 0 for a loss.
    pub fn half_points(self) -> usize {
        match self {
            PlayerResult::Win => 2,
            PlayerResult::Draw => 1,
            PlayerResult::Loss => 0,
        }
    }

    /// The same game seen from the opponent's side.
    pub fn flipped(self) -> PlayerResult {
        match self {
            PlayerResult::Win => PlayerResult::Loss,
            PlayerResult::Draw => PlayerResult::Draw,
            PlayerResult::Loss => PlayerResult::Win,
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

    /// Counts from wins, draws and losses, refused if the number of games would not fit in
    /// a `u64` (use this for counts from outside: a command line, a file).
    ///
    /// ```
    /// use sprt::Trinomial;
    /// assert_eq!(Trinomial::try_new(1, 2, 3).unwrap().games(), 6);
    /// assert!(Trinomial::try_new(u64::MAX, 1, 0).is_err());
    /// ```
    pub fn try_new(wins: u64, draws: u64, losses: u64) -> Result<Self, CountError> {
        let counts = Trinomial::new(wins, draws, losses);
        counts.checked_games().ok_or_else(|| CountError {
            counts: vec![wins, draws, losses],
            total: "games",
        })?;
        Ok(counts)
    }

    /// Number of games, `None` if it does not fit in a `u64`.
    pub fn checked_games(&self) -> Option<u64> {
        self.wins
            .checked_add(self.draws)
            .and_then(|n| n.checked_add(self.losses))
    }

    /// Number of games (saturating at `u64::MAX`; [`Trinomial::try_new`] refuses counts
    /// where that would happen).
    pub fn games(&self) -> u64 {
        self.checked_games().unwrap_or(u64::MAX)
    }

    /// The sum of two counts, `None` if a count would overflow.
    pub fn checked_add(&self, rhs: &Trinomial) -> Option<Trinomial> {
        let sum = Trinomial::new(
            self.wins.checked_add(rhs.wins)?,
            self.draws.checked_add(rhs.draws)?,
            self.losses.checked_add(rhs.losses)?,
        );
        sum.checked_games().map(|_| sum)
    }

    /// Points of the tested engine: wins + draws / 2.
    pub fn points(&self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }

    /// Counts one more game.
    pub fn record(&mut self, result: PlayerResult) {
        match result {
            PlayerResult::Win => self.wins += 1,
            PlayerResult::Draw => self.draws += 1,
            PlayerResult::Loss => self.losses += 1,
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

impl FromIterator<PlayerResult> for Trinomial {
    fn from_iter<I: IntoIterator<Item = PlayerResult>>(iter: I) -> Self {
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
    pub fn bucket(first: PlayerResult, second: PlayerResult) -> usize {
        first.half_points() + second.half_points()
    }

    /// Counts one more pair of games.
    pub fn record(&mut self, first: PlayerResult, second: PlayerResult) {
        self.0[Self::bucket(first, second)] += 1;
    }

    /// Counts from the five buckets, refused if the number of games (two per pair) would
    /// not fit in a `u64` (use this for counts from outside: a command line, a file).
    ///
    /// ```
    /// use sprt::Pentanomial;
    /// assert_eq!(Pentanomial::try_new([1, 2, 3, 4, 5]).unwrap().games(), 30);
    /// assert!(Pentanomial::try_new([u64::MAX, 0, 0, 0, 0]).is_err());
    /// ```
    pub fn try_new(counts: [u64; 5]) -> Result<Self, CountError> {
        let p = Pentanomial(counts);
        p.checked_games().ok_or_else(|| CountError {
            counts: counts.to_vec(),
            total: "games (2 per pair)",
        })?;
        Ok(p)
    }

    /// Number of pairs, `None` if it does not fit in a `u64`.
    pub fn checked_pairs(&self) -> Option<u64> {
        self.0.iter().try_fold(0u64, |sum, &n| sum.checked_add(n))
    }

    /// Number of games (two per pair), `None` if it does not fit in a `u64`.
    pub fn checked_games(&self) -> Option<u64> {
        self.checked_pairs().and_then(|n| n.checked_mul(2))
    }

    /// Number of pairs (saturating at `u64::MAX`; [`Pentanomial::try_new`] refuses counts
    /// where that would happen).
    pub fn pairs(&self) -> u64 {
        self.checked_pairs().unwrap_or(u64::MAX)
    }

    /// Number of games, two per pair (saturating at `u64::MAX`; [`Pentanomial::try_new`]
    /// refuses counts where that would happen).
    pub fn games(&self) -> u64 {
        self.checked_games().unwrap_or(u64::MAX)
    }

    /// The sum of two counts, `None` if the games would overflow.
    pub fn checked_add(&self, rhs: &Pentanomial) -> Option<Pentanomial> {
        let mut sum = [0u64; 5];
        for (i, out) in sum.iter_mut().enumerate() {
            *out = self.0[i].checked_add(rhs.0[i])?;
        }
        let sum = Pentanomial(sum);
        sum.checked_games().map(|_| sum)
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

impl FromIterator<(PlayerResult, PlayerResult)> for Pentanomial {
    fn from_iter<I: IntoIterator<Item = (PlayerResult, PlayerResult)>>(iter: I) -> Self {
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
    use PlayerResult::*;

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
    fn totals_that_overflow_are_refused_not_wrapped() {
        // `spar stats --wdl 18446744073709551615 1 0` used to wrap to 0 games.
        let e = Trinomial::try_new(u64::MAX, 1, 0).unwrap_err();
        assert!(
            e.to_string().contains("more games than fit in 64 bits"),
            "{e}"
        );
        assert!(Trinomial::try_new(u64::MAX, 0, 0).is_ok());
        assert_eq!(Trinomial::new(u64::MAX, 1, 1).games(), u64::MAX);
        assert!(Trinomial::new(u64::MAX, 0, 0)
            .checked_add(&Trinomial::new(0, 1, 0))
            .is_none());
        // Pairs: the sum of the buckets and twice it (games) must both fit.
        assert!(Pentanomial::try_new([u64::MAX, 1, 0, 0, 0]).is_err());
        assert!(Pentanomial::try_new([u64::MAX / 2 + 1, 0, 0, 0, 0]).is_err());
        let max = Pentanomial::try_new([u64::MAX / 2, 0, 0, 0, 0]).unwrap();
        assert_eq!(max.games(), u64::MAX - 1);
        assert_eq!(Pentanomial::new([u64::MAX, 1, 0, 0, 0]).games(), u64::MAX);
        assert!(max
            .checked_add(&Pentanomial::new([0, 0, 1, 0, 0]))
            .is_none());
        assert_eq!(
            Pentanomial::new([1, 0, 0, 0, 0]).checked_add(&Pentanomial::new([0, 1, 0, 0, 0])),
            Some(Pentanomial::new([1, 1, 0, 0, 0]))
        );
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
