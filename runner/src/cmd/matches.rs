//! `spar match` and `spar sprt`: parallel self-play between two engine variants. The
//! arguments and the run are the match job's ([`crate::jobs::matches`]); here the lines of
//! `--game-lines` (the personalities `spar fastchess`, `spar cutechess`) are made from the
//! tools' code in [`super::compat`].

use sprt::Sprt;

use super::compat::{fastchess_header, Lines, Report};
use crate::engines::variant::Variant;
use crate::error::CliResult;
use crate::files::match_files::PgnFormat;
pub use crate::jobs::matches::args::MatchArgs;
use crate::jobs::matches::lines::{GameLines, GameReport};
use crate::play::schedule::PairOutcome;
use crate::play::tally::Tally;
use crate::summary::MatchInfo;

/// Runs `spar match` (`is_sprt = false`) or `spar sprt`.
pub fn run(args: MatchArgs, is_sprt: bool) -> CliResult {
    let lines = args.game_lines.clone().map(ToolLines);
    crate::jobs::matches::run(args, is_sprt, lines.as_ref().map(|l| l as &dyn GameLines))
}

/// The lines of a `--game-lines` word, read from the word each time they are asked for.
struct ToolLines(String);

impl GameLines for ToolLines {
    fn check(&self) -> CliResult {
        Lines::parse(&self.0).map(|_| ())
    }

    fn pgn(&self) -> CliResult<PgnFormat> {
        let layout = Lines::parse(&self.0)?.pgn();
        Ok(Box::new(move |pair, g, white, black, ended| {
            layout.format(pair, g, white, black, ended)
        }))
    }

    fn report<'a>(
        &self,
        names: [&'a str; 2],
        games: Option<u64>,
        variants: &[Variant; 2],
        book: Option<&String>,
    ) -> CliResult<Box<dyn GameReport + 'a>> {
        Ok(Box::new(Report::new(
            Lines::parse(&self.0)?,
            names,
            games,
            fastchess_header(variants, book),
        )))
    }
}

impl GameReport for Report<'_> {
    fn start(&self) -> Vec<String> {
        Report::start(self)
    }

    fn pair(&mut self, pair: &PairOutcome, sprt: Option<&Sprt>) -> CliResult<Vec<String>> {
        Report::pair(self, pair, sprt)
    }

    fn stop(&self) -> bool {
        Report::stop(self)
    }

    fn finish(&self, info: &MatchInfo, tally: &Tally) -> CliResult<Vec<String>> {
        Report::finish(self, info, tally)
    }
}
