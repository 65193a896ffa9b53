//! The hidden `--game-lines` word: which lines a personality prints (the tool's per-game
//! lines, its report's format and intervals, its cutechess SPRT, its PGN's fields), written
//! by the translation and read by `spar match`.

use super::Tool;
use crate::error::{CliError, CliResult};

/// Which lines a personality prints, as the hidden `--game-lines` word carries them:
/// `TOOL[:OUTPUT][:rating=N][:every=N]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lines {
    /// The tool whose per-game lines these are (their reason wording).
    pub tool: Tool,
    /// The tool whose report format the blocks follow (fastchess's `-output format=`).
    pub output: Tool,
    /// fastchess: a results block every N pairs; cutechess: the ranking every N games (0:
    /// only at the end).
    pub rating_interval: u64,
    /// fastchess's `-scoreinterval` (cutechess output's `Score of` line every N games);
    /// cutechess's `-outcomeinterval` (the outcomes every N games; 0: only at the end).
    pub second_interval: u64,
    /// fastchess shuffles its book (`-openings order=random`) and says so first.
    pub shuffled: bool,
    /// cutechess-cli's `-sprt elo0 elo1 alpha beta`, run by the report as cutechess runs it.
    pub sprt: Option<[f64; 4]>,
    /// Games per round, as the tool's PGN `Round` tag counts them (fastchess: 2;
    /// cutechess: `-games`): `:round=N` in the word, when not 2.
    pub games_per_round: u64,
    /// fastchess `-pgnout nodes=true`: `n=` in the PGN's move comments (`:pgn=n`).
    pub pgn_nodes: bool,
    /// fastchess `-pgnout seldepth=true`: `sd=` in the PGN's move comments (`:pgn=sd`;
    /// both: `:pgn=n,sd`).
    pub pgn_seldepth: bool,
    /// cutechess read its openings from an EPD file (`:epd`): its PGN's FEN clocks are
    /// `0 1`.
    pub epd: bool,
}

impl Lines {
    /// The word of the hidden `--game-lines` flag.
    pub fn word(&self) -> String {
        let sprt = self.sprt.map_or(String::new(), |[e0, e1, a, b]| {
            format!(":sprt={e0},{e1},{a},{b}")
        });
        let round = if self.games_per_round == 2 {
            String::new()
        } else {
            format!(":round={}", self.games_per_round)
        };
        format!(
            "{}:{}:rating={}:every={}{}{sprt}{round}{}{}",
            self.tool.name(),
            self.output.name(),
            self.rating_interval,
            self.second_interval,
            if self.shuffled { ":shuffled" } else { "" },
            match (self.pgn_nodes, self.pgn_seldepth) {
                (true, true) => ":pgn=n,sd",
                (true, false) => ":pgn=n",
                (false, true) => ":pgn=sd",
                (false, false) => "",
            },
            if self.epd { ":epd" } else { "" },
        )
    }

    /// Reads [`Lines::word`]; `fastchess` alone is the fastchess personality's defaults.
    pub fn parse(word: &str) -> CliResult<Lines> {
        let bad = || {
            CliError::usage(format!(
                "--game-lines: '{word}' is not TOOL[:OUTPUT][:rating=N][:every=N] (TOOL fastchess or cutechess)"
            ))
        };
        let tool_of = |s: &str| match s {
            "fastchess" => Some(Tool::Fastchess),
            "cutechess" => Some(Tool::Cutechess),
            _ => None,
        };
        let mut parts = word.split(':');
        let tool = parts.next().and_then(tool_of).ok_or_else(bad)?;
        let fastchess = tool == Tool::Fastchess;
        let mut lines = Lines {
            tool,
            output: tool,
            rating_interval: if fastchess { 10 } else { 0 },
            second_interval: if fastchess { 1 } else { 0 },
            shuffled: false,
            sprt: None,
            games_per_round: 2,
            pgn_nodes: false,
            pgn_seldepth: false,
            epd: false,
        };
        for p in parts {
            match p.split_once('=') {
                None if p == "shuffled" => lines.shuffled = true,
                None if p == "epd" => lines.epd = true,
                Some(("pgn", fields)) => {
                    for f in fields.split(',') {
                        match f {
                            "n" => lines.pgn_nodes = true,
                            "sd" => lines.pgn_seldepth = true,
                            _ => return Err(bad()),
                        }
                    }
                }
                Some(("round", n)) => {
                    lines.games_per_round = n.parse().map_err(|_| bad())?;
                    if lines.games_per_round == 0 {
                        return Err(bad());
                    }
                }
                None => lines.output = tool_of(p).ok_or_else(bad)?,
                Some(("rating", n)) => lines.rating_interval = n.parse().map_err(|_| bad())?,
                Some(("every", n)) => lines.second_interval = n.parse().map_err(|_| bad())?,
                Some(("sprt", v)) => {
                    let x: Vec<f64> = v
                        .split(',')
                        .map(str::parse)
                        .collect::<Result<_, _>>()
                        .map_err(|_| bad())?;
                    lines.sprt = Some(x.try_into().map_err(|_| bad())?);
                }
                Some(_) => return Err(bad()),
            }
        }
        Ok(lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_words_round_trip() {
        let l = Lines {
            tool: Tool::Cutechess,
            output: Tool::Cutechess,
            rating_interval: 4,
            second_interval: 0,
            shuffled: true,
            sprt: Some([0.0, 5.0, 0.05, 0.1]),
            games_per_round: 6,
            pgn_nodes: true,
            pgn_seldepth: true,
            epd: true,
        };
        assert_eq!(Lines::parse(&l.word()).unwrap(), l);
        assert!(Lines::parse("cutechess:round=0").is_err());
        let f = Lines::parse("fastchess").unwrap();
        assert_eq!(
            (f.tool, f.output, f.rating_interval),
            (Tool::Fastchess, Tool::Fastchess, 10)
        );
        assert!(Lines::parse("stockfish").is_err());
        assert!(Lines::parse("fastchess:rating=x").is_err());
    }
}
