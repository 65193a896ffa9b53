//! The terminal form of a report: one block per site, one row per variant with a compact
//! Unicode histogram, and with two variants the differences and their significance.

use std::fmt::Write;

use super::bins::{self, Scale};
use super::compare::{self, Test};
use super::stats::{SiteStats, VariantStats};

const BARS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// `18 964 497`.
pub fn group_digits(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    let first = match s.len() % 3 {
        0 => 3,
        r => r,
    };
    for (i, c) in s.chars().enumerate() {
        if i >= first && (i - first) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// A real number with a precision that suits its size (`201.2`, `2.83`, `0.600`,
/// `12 345`).
pub fn real(x: f64) -> String {
    if !x.is_finite() {
        return "-".to_string();
    }
    let a = x.abs();
    if a >= 10_000.0 {
        let s = group_digits(a.round() as u64);
        return if x < 0.0 { format!("-{s}") } else { s };
    }
    let decimals = if a >= 100.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    format!("{x:.decimals$}")
}

/// A signed difference (`+1.25`, `-0.003`).
fn signed(x: f64) -> String {
    let s = real(x);
    if x >= 0.0 {
        format!("+{s}")
    } else {
        s
    }
}

/// Every site label of the variants, sorted.
pub fn labels(variants: &[VariantStats]) -> Vec<String> {
    let mut labels: Vec<String> = variants
        .iter()
        .flat_map(|v| v.sites.iter().map(|s| s.site.clone()))
        .collect();
    labels.sort();
    labels.dedup();
    labels
}

/// The histogram bars of each variant for one site, on bins common to all of them, each
/// normalised to its own total (so variants with different counts compare).
pub fn histograms(sites: &[Option<&SiteStats>]) -> (Scale, Vec<bins::Bin>, Vec<Vec<f64>>) {
    let present: Vec<&SiteStats> = sites.iter().flatten().copied().collect();
    let min = present.iter().map(|s| s.min).min().unwrap_or(0);
    let max = present.iter().map(|s| s.max).max().unwrap_or(0);
    let (scale, bins) = bins::bins(min, max);
    let fractions = sites
        .iter()
        .map(|s| match s {
            Some(s) if s.count > 0 => bins::fill(&bins, &s.buckets)
                .iter()
                .map(|&c| c as f64 / s.count as f64)
                .collect(),
            _ => vec![0.0; bins.len()],
        })
        .collect();
    (scale, bins, fractions)
}

fn sparkline(fractions: &[f64], top: f64) -> String {
    fractions
        .iter()
        .map(|&f| {
            if f <= 0.0 || top <= 0.0 {
                BARS[0]
            } else {
                let level = ((f / top) * 8.0).round().clamp(1.0, 8.0) as usize;
                BARS[level]
            }
        })
        .collect()
}

fn describe_test(t: &Option<Test>) -> String {
    match t {
        Some(t) => {
            let p = if t.p < 0.0001 {
                "p < 0.0001".to_string()
            } else {
                format!("p = {:.4}", t.p)
            };
            format!(
                "({p}){}",
                if t.stars().is_empty() {
                    String::new()
                } else {
                    format!(" {}", t.stars())
                }
            )
        }
        None => "(no test)".to_string(),
    }
}

/// Renders the report for one or more variants (differences are shown for the first two).
pub fn render(variants: &[VariantStats]) -> String {
    let mut out = String::new();
    let names: Vec<String> = variants
        .iter()
        .map(|v| {
            if v.games > 0 {
                format!("{} ({} games)", v.name, v.games)
            } else {
                v.name.clone()
            }
        })
        .collect();
    let labels = labels(variants);
    let _ = writeln!(
        out,
        "track! statistics: {} site{}; {}",
        labels.len(),
        if labels.len() == 1 { "" } else { "s" },
        names.join(" vs ")
    );
    if labels.is_empty() {
        let _ = writeln!(
            out,
            "no site recorded anything (was the engine built with the `track` feature?)"
        );
        return out;
    }
    let width = variants
        .iter()
        .map(|v| v.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(7);
    for label in &labels {
        let sites: Vec<Option<&SiteStats>> = variants.iter().map(|v| v.site(label)).collect();
        let location = sites
            .iter()
            .flatten()
            .map(|s| s.location.as_str())
            .find(|l| !l.is_empty())
            .unwrap_or("");
        let flag = sites.iter().flatten().all(|s| s.is_flag());
        let (scale, bins, fractions) = histograms(&sites);
        let top = fractions
            .iter()
            .flat_map(|f| f.iter().copied())
            .fold(0.0, f64::max);
        let _ = writeln!(out);
        let range = match (bins.first(), bins.last()) {
            (Some(a), Some(b)) => format!(
                "{} … {}{}",
                a.lo,
                b.hi,
                match scale {
                    Scale::Exact => "",
                    Scale::Log2 => ", powers of 2",
                }
            ),
            _ => String::new(),
        };
        let _ = writeln!(out, "{label}    {location}");
        let _ = writeln!(
            out,
            "  {:<width$} {:>14} {:>11} {:>9} {:>9} {:>9} {:>7} {:>7}  histogram [{range}]",
            "", "N", "N/game", "μ", "|μ|", "σ", "LO", "HI"
        );
        for ((v, s), f) in variants.iter().zip(&sites).zip(&fractions) {
            let per_game =
                compare::per_game_count(*s, v.games).map_or("-".to_string(), |e| real(e.value));
            match s {
                Some(s) => {
                    let (abs, sd, lo, hi) = if flag {
                        (String::new(), String::new(), String::new(), String::new())
                    } else {
                        (
                            real(s.mean_abs),
                            real(s.stddev),
                            s.min.to_string(),
                            s.max.to_string(),
                        )
                    };
                    let _ = writeln!(
                        out,
                        "  {:<width$} {:>14} {:>11} {:>9} {:>9} {:>9} {:>7} {:>7}  {}",
                        v.name,
                        group_digits(s.count),
                        per_game,
                        real(s.mean),
                        abs,
                        sd,
                        lo,
                        hi,
                        sparkline(f, top)
                    );
                }
                None => {
                    let _ = writeln!(out, "  {:<width$} {:>14} {:>11}", v.name, 0, per_game);
                }
            }
        }
        if variants.len() >= 2 {
            let c = compare::compare(label, &variants[0], &variants[1]);
            let per_game = match (c.per_game_ratio, &c.per_game) {
                (Some(r), t) => format!("{:+.1} % {}", 100.0 * r, describe_test(t)),
                (None, Some(t)) => format!("{} {}", signed(t.diff), describe_test(&Some(*t))),
                (None, None) => "-".to_string(),
            };
            let mean = match &c.mean {
                Some(t) => format!("{} {}", signed(t.diff), describe_test(&Some(*t))),
                None => "-".to_string(),
            };
            let _ = writeln!(
                out,
                "  Δ {} − {}: N/game {per_game}, μ {mean}",
                variants[1].name, variants[0].name
            );
        }
    }
    if variants.len() >= 2 {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "Δ: Welch's t-test with games as the independent units; * p < 0.05, ** p < 0.01, *** p < 0.001 \
             (one test per line: expect 1 in 20 lines flagged * by chance)"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(group_digits(18_964_497), "18 964 497");
        assert_eq!(group_digits(497), "497");
        assert_eq!(group_digits(1000), "1 000");
        assert_eq!(real(201.23), "201.2");
        assert_eq!(real(2.834), "2.83");
        assert_eq!(real(0.6), "0.600");
        assert_eq!(real(-12_345.4), "-12 345");
        assert_eq!(real(f64::NAN), "-");
        assert_eq!(signed(1.5), "+1.50");
    }

    #[test]
    fn sparkline_levels() {
        assert_eq!(sparkline(&[0.0, 0.5, 1.0, 0.01], 1.0), " ▄█▁");
    }

    #[test]
    fn renders_blocks_and_differences() {
        let file = crate::report::stats::tests::sample_file();
        let text = render(&file.variants);
        assert!(text.contains("3 sites"), "{text}");
        assert!(
            text.contains("rfp/margin    engine/src/search/alphabeta.rs:470"),
            "{text}"
        );
        assert!(text.contains("Δ base − dev"), "{text}");
        assert!(text.contains("powers of 2"), "{text}");
        assert!(text.contains('█'), "{text}");
        let one = render(&file.variants[..1]);
        assert!(!one.contains('Δ'), "{one}");
        let empty = render(&[VariantStats {
            name: "x".into(),
            games: 0,
            sites: vec![],
        }]);
        assert!(empty.contains("`track` feature"), "{empty}");
    }
}
