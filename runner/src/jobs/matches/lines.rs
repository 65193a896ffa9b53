//! What a personality (`spar fastchess`, `spar cutechess`: `--game-lines`) adds to a match:
//! the tool's PGN in place of spar's, and the tool's per-game lines and reports in place of
//! spar's summary. The match knows them only through these traits; `cmd/` makes them from
//! the tools' own code.

use sprt::Sprt;

use crate::engines::variant::Variant;
use crate::error::CliResult;
use crate::files::match_files::PgnFormat;
use crate::play::schedule::PairOutcome;
use crate::play::tally::Tally;
use crate::summary::MatchInfo;

/// A personality's lines, as `--game-lines` names them.
pub trait GameLines {
    /// Checks the word: before the plan is made, so a bad word opens no file.
    fn check(&self) -> CliResult;

    /// The tool's PGN layout, in place of spar's own.
    fn pgn(&self) -> CliResult<PgnFormat>;

    /// The report of `games` games (unknown for an open-ended SPRT) between `names`, the
    /// match's `variants` from `book` (its first `--book` word).
    fn report<'a>(
        &self,
        names: [&'a str; 2],
        games: Option<u64>,
        variants: &[Variant; 2],
        book: Option<&String>,
    ) -> CliResult<Box<dyn GameReport + 'a>>;
}

/// What a personality prints on stdout as a match goes.
pub trait GameReport {
    /// The lines before the first game.
    fn start(&self) -> Vec<String>;

    /// The lines of a finished pair (its games, and a periodic report when one is due).
    fn pair(&mut self, pair: &PairOutcome, sprt: Option<&Sprt>) -> CliResult<Vec<String>>;

    /// Whether the tool's own test has decided: the match stops after this pair.
    fn stop(&self) -> bool;

    /// The final report, in place of spar's summary.
    fn finish(&self, info: &MatchInfo, tally: &Tally) -> CliResult<Vec<String>>;
}
