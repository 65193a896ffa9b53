//! The options each tool has (mapped, honoured without effect, or refused with a reason;
//! docs/compat.md lists them all), so that a misspelt one is answered with the option meant:
//! `unknown option -concurency; did you mean -concurrency?`, as fastchess 1.8.2 answers.

use super::Tool;

/// fastchess's options, as `spar fastchess` reads them (without the leading dash).
const FASTCHESS: &[&str] = &[
    "engine",
    "each",
    "concurrency",
    "force-concurrency",
    "rounds",
    "games",
    "repeat",
    "openings",
    "srand",
    "sprt",
    "resign",
    "draw",
    "maxmoves",
    "recover",
    "variant",
    "pgnout",
    "epdout",
    "tb",
    "tbpieces",
    "tbadjudicate",
    "tbignore50",
    "output",
    "tournament",
    "wait",
    "ratinginterval",
    "scoreinterval",
    "autosaveinterval",
    "noswap",
    "reverse",
    "log",
    "config",
    "report",
    "event",
    "site",
    "seeds",
    "quick",
    "testEnv",
    "strict",
    "debug",
    "crc32",
    "check-mate-pvs",
    "show-latency",
    "use-affinity",
    "startup-ms",
    "ucinewgame-ms",
    "ping-ms",
    "compliance",
    "help",
    "version",
];

/// cutechess-cli's options, as `spar cutechess` reads them (without the leading dash).
const CUTECHESS: &[&str] = &[
    "engine",
    "each",
    "concurrency",
    "rounds",
    "games",
    "repeat",
    "openings",
    "srand",
    "sprt",
    "resign",
    "draw",
    "maxmoves",
    "recover",
    "variant",
    "pgnout",
    "epdout",
    "tb",
    "tbpieces",
    "tbignore50",
    "tournament",
    "wait",
    "ratinginterval",
    "outcomeinterval",
    "bookmode",
    "noswap",
    "reverse",
    "event",
    "site",
    "seeds",
    "resultformat",
    "engines",
    "debug",
    "help",
    "version",
];

/// The options of `tool` (without the leading dash).
pub fn known(tool: Tool) -> &'static [&'static str] {
    match tool {
        Tool::Fastchess => FASTCHESS,
        Tool::Cutechess => CUTECHESS,
    }
}

/// The option of `tool` that `unknown` most likely misspells: the closest by edit distance
/// (ignoring case), if it is at most 2 edits away and not as far as the word is long.
pub fn suggest(tool: Tool, unknown: &str) -> Option<&'static str> {
    let word = unknown.to_ascii_lowercase();
    known(tool)
        .iter()
        .map(|o| (distance(&word, &o.to_ascii_lowercase()), *o))
        .filter(|&(d, _)| d <= 2 && d < word.chars().count())
        .min_by_key(|&(d, _)| d)
        .map(|(_, o)| o)
}

/// The Levenshtein distance: insertions, deletions and substitutions of characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("concurency", "concurrency"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("same", "same"), 0);
    }

    #[test]
    fn misspellings_find_the_option_meant() {
        assert_eq!(suggest(Tool::Fastchess, "concurency"), Some("concurrency"));
        assert_eq!(suggest(Tool::Fastchess, "round"), Some("rounds"));
        assert_eq!(suggest(Tool::Fastchess, "pgnot"), Some("pgnout"));
        assert_eq!(suggest(Tool::Fastchess, "TESTENV"), Some("testEnv"));
        assert_eq!(
            suggest(Tool::Cutechess, "outcomeintervall"),
            Some("outcomeinterval")
        );
        // fastchess's option is not cutechess's, and nonsense has no suggestion.
        assert_eq!(suggest(Tool::Cutechess, "scoreinterval"), None);
        assert_eq!(suggest(Tool::Fastchess, "bogus"), None);
        assert_eq!(suggest(Tool::Fastchess, "x"), None);
    }
}
