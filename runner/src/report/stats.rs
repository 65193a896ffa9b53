//! The statistics of a `spar report` run as data: per variant, per site, the summary numbers
//! and the histogram; built from the engine's registry, written to and read from JSON
//! (lossless, mergeable) and CSV (the summary and the bucket counts).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use engine::track::{self, Accumulator, GameSums, Site, VariantTotals};
use serde::{Deserialize, Serialize};

/// The `format` field of a statistics JSON file.
pub const FORMAT: &str = "spar-track-stats";
/// The version of the JSON layout.
pub const VERSION: u32 = 1;

/// One histogram bucket: values `lo..=hi` were recorded `count` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    /// Smallest value of the bucket.
    pub lo: i64,
    /// Largest value of the bucket.
    pub hi: i64,
    /// Records in it.
    pub count: u64,
}

/// Exact sums (as decimal strings: they may exceed 64 bits), which make files mergeable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExactSums {
    /// Σx.
    pub sum: String,
    /// Σ|x|.
    pub sum_abs: String,
    /// Σx².
    pub sum_sq: String,
}

/// Per-game sums of a site (see [`engine::track::GameSums`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PerGame {
    /// Σ n_g (records per game).
    pub n: f64,
    /// Σ n_g².
    pub n2: f64,
    /// Σ s_g (value sum per game).
    pub s: f64,
    /// Σ s_g².
    pub s2: f64,
    /// Σ n_g·s_g.
    pub ns: f64,
}

/// One site of one variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SiteStats {
    /// The site's label: its name, plus ` @ file:line` when two sites share a name.
    pub site: String,
    /// `file:line` of the `track!` call (empty when unknown, e.g. from CSV).
    #[serde(default)]
    pub location: String,
    /// Number of records.
    pub count: u64,
    /// Mean.
    pub mean: f64,
    /// Mean of absolute values.
    pub mean_abs: f64,
    /// Standard deviation (population).
    pub stddev: f64,
    /// Smallest record.
    pub min: i64,
    /// Largest record.
    pub max: i64,
    /// Exact sums (absent in files converted from CSV).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<ExactSums>,
    /// Per-game sums (absent when games were not delimited, e.g. UCI dumps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_game: Option<PerGame>,
    /// Occupied histogram buckets, in value order.
    pub buckets: Vec<Bucket>,
}

/// Every site of one variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantStats {
    /// Variant name.
    pub name: String,
    /// Games this variant played (one side of a game counts once; 0 when unknown).
    pub games: u64,
    /// Sites with at least one record, sorted by label.
    pub sites: Vec<SiteStats>,
}

/// A statistics file: one or more variants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatsFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// Layout version ([`VERSION`]).
    pub version: u32,
    /// The variants.
    pub variants: Vec<VariantStats>,
}

impl StatsFile {
    /// A file holding these variants.
    pub fn new(variants: Vec<VariantStats>) -> StatsFile {
        StatsFile {
            format: FORMAT.to_string(),
            version: VERSION,
            variants,
        }
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("statistics serialise");
        s.push('\n');
        s
    }

    /// Parses JSON written by [`StatsFile::to_json`].
    pub fn from_json(text: &str) -> Result<StatsFile, String> {
        let file: StatsFile = serde_json::from_str(text).map_err(|e| {
            format!("not a spar statistics file ({e}); expected the stats.json of `spar report --out` or a TrackFile dump")
        })?;
        if file.format != FORMAT {
            return Err(format!("format is '{}', expected '{FORMAT}'", file.format));
        }
        if file.version != VERSION {
            return Err(format!(
                "layout version {} is not supported (this spar reads version {VERSION})",
                file.version
            ));
        }
        Ok(file)
    }

    /// Reads a `.json` or `.csv` statistics file.
    pub fn read(path: &Path) -> Result<StatsFile, String> {
        let text = data::text::read_whole(path).map_err(|e| format!("cannot read {e}"))?;
        let is_csv = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        let parsed = if is_csv {
            from_csv(&text)
        } else {
            StatsFile::from_json(&text)
        };
        parsed.map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The CSV form: one row per variant and site.
    pub fn to_csv(&self) -> String {
        to_csv(self)
    }
}

impl SiteStats {
    /// The summary of an accumulator (which must hold records).
    pub fn from_accumulator(
        label: String,
        location: String,
        acc: &Accumulator,
        per_game: Option<&GameSums>,
    ) -> SiteStats {
        SiteStats {
            site: label,
            location,
            count: acc.count(),
            mean: acc.mean(),
            mean_abs: acc.mean_abs(),
            stddev: acc.stddev(),
            min: acc.min().unwrap_or(0),
            max: acc.max().unwrap_or(0),
            exact: Some(ExactSums {
                sum: acc.sum().to_string(),
                sum_abs: acc.sum_abs().to_string(),
                sum_sq: acc.sum_sq().to_string(),
            }),
            per_game: per_game.map(|g| PerGame {
                n: g.n,
                n2: g.n2,
                s: g.s,
                s2: g.s2,
                ns: g.ns,
            }),
            buckets: acc
                .nonzero_buckets()
                .map(|(b, count)| {
                    let (lo, hi) = track::bucket_range(b);
                    Bucket { lo, hi, count }
                })
                .collect(),
        }
    }

    /// The accumulator back (needs the exact sums and the engine's bucket layout).
    pub fn to_accumulator(&self) -> Result<Accumulator, String> {
        let exact = self.exact.as_ref().ok_or_else(|| {
            format!(
                "site '{}' has no exact sums (a CSV conversion?); only JSON files can be merged",
                self.site
            )
        })?;
        let bad = |what: &str| format!("site '{}': {what} is not an integer", self.site);
        let sum: i128 = exact.sum.parse().map_err(|_| bad("sum"))?;
        let sum_abs: u128 = exact.sum_abs.parse().map_err(|_| bad("sum_abs"))?;
        let sum_sq: u128 = exact.sum_sq.parse().map_err(|_| bad("sum_sq"))?;
        let mut buckets = Vec::with_capacity(self.buckets.len());
        for b in &self.buckets {
            let i = track::bucket_of(b.lo);
            if track::bucket_range(i) != (b.lo, b.hi) {
                return Err(format!(
                    "site '{}': bucket {}..={} does not match this spar's histogram layout",
                    self.site, b.lo, b.hi
                ));
            }
            buckets.push((i, b.count));
        }
        Accumulator::from_parts(
            self.count, sum, sum_abs, sum_sq, self.min, self.max, &buckets,
        )
        .map_err(|e| format!("site '{}': {e}", self.site))
    }

    /// Whether every record is 0 or 1 (a `bool` site).
    pub fn is_flag(&self) -> bool {
        self.min >= 0 && self.max <= 1
    }
}

/// Labels for sites: the name, or `name @ file:line` when names repeat.
fn labels(sites: &[Site]) -> Vec<String> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for s in sites {
        *seen.entry(s.name).or_default() += 1;
    }
    sites
        .iter()
        .map(|s| {
            let name: String = s.name.split_whitespace().collect::<Vec<_>>().join(" ");
            if seen[s.name] > 1 {
                format!("{name} @ {}", s.location())
            } else {
                name
            }
        })
        .collect()
}

impl VariantStats {
    /// The statistics of one variant from the engine's registry (`totals` may be missing
    /// when the variant recorded nothing). `games` overrides the registry's game count when
    /// given (external engines, whose games the engine cannot see).
    pub fn from_totals(
        name: &str,
        totals: Option<&VariantTotals>,
        games: Option<u64>,
    ) -> VariantStats {
        let sites = track::sites();
        let labels = labels(sites);
        let mut out = Vec::new();
        if let Some(t) = totals {
            for (i, acc) in t.sites.iter().enumerate() {
                if acc.count() == 0 || i >= sites.len() {
                    continue;
                }
                let per_game = (t.games >= 1).then(|| &t.per_game[i]);
                out.push(SiteStats::from_accumulator(
                    labels[i].clone(),
                    sites[i].location(),
                    acc,
                    per_game,
                ));
            }
        }
        out.sort_by(|a, b| a.site.cmp(&b.site));
        VariantStats {
            name: name.to_string(),
            games: games.unwrap_or(totals.map_or(0, |t| t.games)),
            sites: out,
        }
    }

    /// Adds the records of `other` (same engine build, e.g. dumps of several processes).
    /// Sites are matched by label; per-game sums are kept only when both sides have them.
    pub fn merge(&mut self, other: &VariantStats) -> Result<(), String> {
        let mut by_label: BTreeMap<String, SiteStats> =
            self.sites.drain(..).map(|s| (s.site.clone(), s)).collect();
        for s in &other.sites {
            match by_label.get_mut(&s.site) {
                None => {
                    by_label.insert(s.site.clone(), s.clone());
                }
                Some(mine) => {
                    let mut acc = mine.to_accumulator()?;
                    acc.merge(&s.to_accumulator()?);
                    let per_game = match (mine.per_game, s.per_game) {
                        (Some(a), Some(b)) => Some(GameSums {
                            n: a.n + b.n,
                            n2: a.n2 + b.n2,
                            s: a.s + b.s,
                            s2: a.s2 + b.s2,
                            ns: a.ns + b.ns,
                        }),
                        _ => None,
                    };
                    *mine = SiteStats::from_accumulator(
                        mine.site.clone(),
                        mine.location.clone(),
                        &acc,
                        per_game.as_ref(),
                    );
                }
            }
        }
        self.sites = by_label.into_values().collect();
        self.games += other.games;
        Ok(())
    }

    /// The site with this label.
    pub fn site(&self, label: &str) -> Option<&SiteStats> {
        self.sites.iter().find(|s| s.site == label)
    }
}

/// Bucket column label: `v` for a one-value bucket, `lo..hi` otherwise.
fn bucket_label(lo: i64, hi: i64) -> String {
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}..{hi}")
    }
}

fn parse_bucket_label(label: &str) -> Option<(i64, i64)> {
    // `-5..-3`: split at the `..` that follows the first number.
    match label.find("..") {
        Some(i) => Some((label[..i].parse().ok()?, label[i + 2..].parse().ok()?)),
        None => {
            let v = label.parse().ok()?;
            Some((v, v))
        }
    }
}

/// The fixed CSV columns, before the bucket columns.
pub const CSV_COLUMNS: [&str; 8] = [
    "variant", "site", "count", "mean", "mean_abs", "stddev", "min", "max",
];

fn to_csv(file: &StatsFile) -> String {
    let mut ranges: Vec<(i64, i64)> = file
        .variants
        .iter()
        .flat_map(|v| v.sites.iter())
        .flat_map(|s| s.buckets.iter().map(|b| (b.lo, b.hi)))
        .collect();
    ranges.sort();
    ranges.dedup();
    let column: HashMap<(i64, i64), usize> =
        ranges.iter().enumerate().map(|(i, &r)| (r, i)).collect();
    let mut w = csv::Writer::from_writer(Vec::new());
    let header: Vec<String> = CSV_COLUMNS
        .iter()
        .map(|s| s.to_string())
        .chain(ranges.iter().map(|&(lo, hi)| bucket_label(lo, hi)))
        .collect();
    w.write_record(&header).expect("write to memory");
    for v in &file.variants {
        for s in &v.sites {
            let mut counts = vec![0u64; ranges.len()];
            for b in &s.buckets {
                counts[column[&(b.lo, b.hi)]] += b.count;
            }
            let mut row = vec![
                v.name.clone(),
                s.site.clone(),
                s.count.to_string(),
                s.mean.to_string(),
                s.mean_abs.to_string(),
                s.stddev.to_string(),
                s.min.to_string(),
                s.max.to_string(),
            ];
            row.extend(counts.iter().map(u64::to_string));
            w.write_record(&row).expect("write to memory");
        }
    }
    String::from_utf8(w.into_inner().expect("flush to memory")).expect("CSV is UTF-8")
}

/// Parses the CSV of [`StatsFile::to_csv`] (no exact sums, per-game sums or game counts).
pub fn from_csv(text: &str) -> Result<StatsFile, String> {
    let mut r = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let header = r
        .headers()
        .map_err(|e| format!("bad CSV header: {e}"))?
        .clone();
    if header.len() < CSV_COLUMNS.len() || header.iter().zip(CSV_COLUMNS).any(|(h, c)| h != c) {
        return Err(format!(
            "the CSV header must start with {}",
            CSV_COLUMNS.join(",")
        ));
    }
    let ranges: Vec<(i64, i64)> = header
        .iter()
        .skip(CSV_COLUMNS.len())
        .map(|h| {
            parse_bucket_label(h)
                .ok_or_else(|| format!("bad bucket column '{h}' (expected v or lo..hi)"))
        })
        .collect::<Result<_, _>>()?;
    let mut variants: Vec<VariantStats> = Vec::new();
    for (line, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| format!("CSV row {}: {e}", line + 2))?;
        let bad = |col: &str| {
            format!(
                "CSV row {}: bad {col} '{}'",
                line + 2,
                rec.get(CSV_COLUMNS.iter().position(|c| *c == col).unwrap())
                    .unwrap_or("")
            )
        };
        let field = |i: usize| rec.get(i).unwrap_or("");
        let buckets = ranges
            .iter()
            .enumerate()
            .filter_map(|(k, &(lo, hi))| {
                let text = field(CSV_COLUMNS.len() + k);
                match text.parse::<u64>() {
                    Ok(0) => None,
                    Ok(count) => Some(Ok(Bucket { lo, hi, count })),
                    Err(_) => Some(Err(format!(
                        "CSV row {}: bad bucket count '{text}'",
                        line + 2
                    ))),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let site = SiteStats {
            site: field(1).to_string(),
            location: String::new(),
            count: field(2).parse().map_err(|_| bad("count"))?,
            mean: field(3).parse().map_err(|_| bad("mean"))?,
            mean_abs: field(4).parse().map_err(|_| bad("mean_abs"))?,
            stddev: field(5).parse().map_err(|_| bad("stddev"))?,
            min: field(6).parse().map_err(|_| bad("min"))?,
            max: field(7).parse().map_err(|_| bad("max"))?,
            exact: None,
            per_game: None,
            buckets,
        };
        let name = field(0);
        match variants.iter_mut().find(|v| v.name == name) {
            Some(v) => v.sites.push(site),
            None => variants.push(VariantStats {
                name: name.to_string(),
                games: 0,
                sites: vec![site],
            }),
        }
    }
    Ok(StatsFile::new(variants))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn acc(values: &[i64]) -> Accumulator {
        let mut a = Accumulator::new();
        values.iter().for_each(|&x| a.add(x));
        a
    }

    pub(crate) fn sample_file() -> StatsFile {
        let mut g = GameSums::default();
        g.add_game(3, 10);
        g.add_game(2, -4);
        let a = SiteStats::from_accumulator(
            "rfp/margin".into(),
            "engine/src/search/alphabeta.rs:470".into(),
            &acc(&[0, 5, 70, 5658, -3]),
            Some(&g),
        );
        let b = SiteStats::from_accumulator("rfp".into(), String::new(), &acc(&[0, 1, 1]), None);
        let c = SiteStats::from_accumulator(
            "eval".into(),
            "x.rs:1".into(),
            &acc(&[-1000, 20, i64::MIN, i64::MAX]),
            None,
        );
        StatsFile::new(vec![
            VariantStats {
                name: "dev, \"quoted\"".into(),
                games: 2,
                sites: vec![b.clone(), a],
            },
            VariantStats {
                name: "base".into(),
                games: 0,
                sites: vec![b, c],
            },
        ])
    }

    #[test]
    fn json_round_trip_is_lossless() {
        let file = sample_file();
        let back = StatsFile::from_json(&file.to_json()).unwrap();
        assert_eq!(back, file);
        let acc_back = back.variants[0].sites[1].to_accumulator().unwrap();
        assert_eq!(acc_back, acc(&[0, 5, 70, 5658, -3]));
        assert!(StatsFile::from_json("{}")
            .unwrap_err()
            .contains("not a spar statistics file"));
        let other = file.to_json().replace(FORMAT, "something-else");
        assert!(StatsFile::from_json(&other).unwrap_err().contains("format"));
    }

    #[test]
    fn csv_round_trip_keeps_the_summary_and_buckets() {
        let file = sample_file();
        let csv = file.to_csv();
        let header = csv.lines().next().unwrap();
        assert!(
            header.starts_with("variant,site,count,mean,mean_abs,stddev,min,max,"),
            "{header}"
        );
        assert!(
            header.contains(",-3,") && header.contains(",64..79,") && header.contains("5120..6143"),
            "{header}"
        );
        let back = from_csv(&csv).unwrap();
        assert_eq!(back.variants.len(), 2);
        for (v, w) in file.variants.iter().zip(&back.variants) {
            assert_eq!(v.name, w.name);
            for (s, t) in v.sites.iter().zip(&w.sites) {
                assert_eq!(
                    (&s.site, s.count, s.mean, s.mean_abs, s.stddev, s.min, s.max, &s.buckets),
                    (&t.site, t.count, t.mean, t.mean_abs, t.stddev, t.min, t.max, &t.buckets)
                );
                assert!(t.exact.is_none() && t.per_game.is_none());
            }
        }
        assert!(from_csv("a,b\n1,2\n").unwrap_err().contains("header"));
        let broken = csv.replacen(",5,", ",five,", 1);
        assert!(from_csv(&broken).is_err());
    }

    #[test]
    fn merging_files_equals_recording_once() {
        let mut a = VariantStats {
            name: "x".into(),
            games: 1,
            sites: vec![SiteStats::from_accumulator(
                "s".into(),
                "f:1".into(),
                &acc(&[1, 2, 300]),
                None,
            )],
        };
        let b = VariantStats {
            name: "x".into(),
            games: 2,
            sites: vec![
                SiteStats::from_accumulator("s".into(), "f:1".into(), &acc(&[-7, 2]), None),
                SiteStats::from_accumulator("t".into(), "f:2".into(), &acc(&[1]), None),
            ],
        };
        a.merge(&b).unwrap();
        assert_eq!(a.games, 3);
        assert_eq!(a.sites.len(), 2);
        assert_eq!(
            a.site("s").unwrap().to_accumulator().unwrap(),
            acc(&[1, 2, 300, -7, 2])
        );
        let mut no_exact = a.clone();
        no_exact.sites[0].exact = None;
        assert!(no_exact.merge(&b).unwrap_err().contains("exact sums"));
    }

    #[test]
    fn bucket_labels_parse_back() {
        for (lo, hi) in [(0, 0), (-5, -5), (64, 79), (-79, -64), (i64::MIN, -100)] {
            assert_eq!(parse_bucket_label(&bucket_label(lo, hi)), Some((lo, hi)));
        }
        assert_eq!(parse_bucket_label("x"), None);
    }
}
