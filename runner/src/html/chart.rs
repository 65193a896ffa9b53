//! The scaffolding of every SVG chart spar draws (the status pages' LLR, Elo and θ charts,
//! a tune's charts on its run page and in `spar tune --svg`, a report's histograms): the
//! `<svg>` element, the data [`Range`]s with their padding and ticks, the [`Plot`] that maps
//! data to pixels inside its [`Area`] (frame, clip, grid and rule lines, polyline points,
//! bands), tick labels, the thinning of long lines and the palette. Each chart keeps its
//! own layout, texts and colours; every text in a chart goes through [`esc`].

use super::esc;

/// Colours of lines and bars drawn in turn (colour-blind safe).
pub const COLOURS: [&str; 6] = [
    "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00", "#56b4e9",
];

/// The opening `<svg>` tag of a `w` × `h` chart: `id` when given, then its size and view
/// box, then `attrs` (each with its leading space), then its `<title>` (escaped) when given.
pub fn open(id: Option<&str>, w: f64, h: f64, attrs: &str, title: Option<&str>) -> String {
    format!(
        r#"<svg{} xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}"{attrs}>{}"#,
        id.map_or(String::new(), |id| format!(r#" id="{}""#, esc(id))),
        title.map_or(String::new(), |t| format!("<title>{}</title>", esc(t)))
    )
}

/// A range of data values, `lo` to `hi`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// The lowest value.
    pub lo: f64,
    /// The highest value.
    pub hi: f64,
}

impl Range {
    /// The range of no value: widened by the first value [`Range::with`] is given.
    pub const EMPTY: Range = Range {
        lo: f64::INFINITY,
        hi: f64::NEG_INFINITY,
    };

    /// The range from `lo` to `hi`.
    pub fn new(lo: f64, hi: f64) -> Range {
        Range { lo, hi }
    }

    /// The smallest range holding every value ([`Range::EMPTY`] for none).
    pub fn of(values: impl IntoIterator<Item = f64>) -> Range {
        values.into_iter().fold(Range::EMPTY, Range::with)
    }

    /// This range widened to hold `v`.
    pub fn with(self, v: f64) -> Range {
        Range {
            lo: self.lo.min(v),
            hi: self.hi.max(v),
        }
    }

    /// Whether both ends are finite (false for an empty range).
    pub fn is_finite(&self) -> bool {
        self.lo.is_finite() && self.hi.is_finite()
    }

    /// This range widened by `fraction` of its width at each end.
    pub fn padded(self, fraction: f64) -> Range {
        let pad = fraction * (self.hi - self.lo);
        Range {
            lo: self.lo - pad,
            hi: self.hi + pad,
        }
    }

    /// `n + 1` evenly spaced values from `lo` to `hi`, both included.
    pub fn ticks(self, n: usize) -> impl Iterator<Item = f64> {
        (0..=n).map(move |k| self.lo + (self.hi - self.lo) * k as f64 / n as f64)
    }
}

/// A rectangle of the chart in pixels: left `x0`, top `y0`, right `x1`, bottom `y1`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Area {
    /// The left edge.
    pub x0: f64,
    /// The top edge.
    pub y0: f64,
    /// The right edge.
    pub x1: f64,
    /// The bottom edge.
    pub y1: f64,
}

impl Area {
    /// The area of a `w` × `h` chart inside the margins `left`, `top`, `right` and
    /// `bottom`.
    pub const fn inset(w: f64, h: f64, left: f64, top: f64, right: f64, bottom: f64) -> Area {
        Area {
            x0: left,
            y0: top,
            x1: w - right,
            y1: h - bottom,
        }
    }

    /// The same area `dy` lower (a panel below others).
    pub fn lower(self, dy: f64) -> Area {
        Area {
            y0: self.y0 + dy,
            y1: self.y1 + dy,
            ..self
        }
    }

    /// The area as an SVG `<rect>` with these `fill` and `stroke` colours.
    pub fn frame(&self, fill: &str, stroke: &str) -> String {
        format!(
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}" stroke="{stroke}"/>"#,
            self.x0,
            self.y0,
            self.x1 - self.x0,
            self.y1 - self.y0
        )
    }

    /// A clip path `id` of the area and the opening of a group it clips: what is drawn in
    /// the group stays inside the area. The caller closes the group (`</g>`).
    pub fn clip(&self, id: &str) -> String {
        format!(
            r#"<clipPath id="{id}"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath><g clip-path="url(#{id})">"#,
            self.x0,
            self.y0,
            self.x1 - self.x0,
            self.y1 - self.y0
        )
    }
}

/// A plot: the data ranges `x` (left to right) and `y` (bottom to top) drawn in `area`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plot {
    /// Where it is drawn.
    pub area: Area,
    /// The data range across.
    pub x: Range,
    /// The data range up.
    pub y: Range,
}

impl Plot {
    /// The pixel column of data value `x`.
    pub fn px(&self, x: f64) -> f64 {
        let a = &self.area;
        a.x0 + (a.x1 - a.x0) * (x - self.x.lo) / (self.x.hi - self.x.lo)
    }

    /// The pixel row of data value `y` (rows grow downwards).
    pub fn py(&self, y: f64) -> f64 {
        let a = &self.area;
        a.y1 - (a.y1 - a.y0) * (y - self.y.lo) / (self.y.hi - self.y.lo)
    }

    /// The `points` attribute of a polyline through the data points `xy`.
    pub fn points(&self, xy: impl IntoIterator<Item = (f64, f64)>) -> String {
        let pts: Vec<String> = xy
            .into_iter()
            .map(|(x, y)| format!("{:.1},{:.1}", self.px(x), self.py(y)))
            .collect();
        pts.join(" ")
    }

    /// The `points` attribute of a polygon around a band: each `(x, low, high)`'s high end
    /// left to right, then its low end back.
    pub fn band(&self, band: &[(f64, f64, f64)]) -> String {
        self.points(
            band.iter()
                .map(|b| (b.0, b.2))
                .chain(band.iter().rev().map(|b| (b.0, b.1))),
        )
    }

    /// A horizontal line across the area at data value `y`, with `attrs` (stroke, dashes).
    pub fn rule(&self, y: f64, attrs: &str) -> String {
        let a = &self.area;
        format!(
            r#"<line x1="{}" x2="{}" y1="{2:.1}" y2="{2:.1}" {attrs}/>"#,
            a.x0,
            a.x1,
            self.py(y)
        )
    }
}

/// The number of decimals a tick spacing of `step` needs: none from 5 up, one from 0.5 up,
/// else two.
pub fn decimals(step: f64) -> usize {
    if step >= 5.0 {
        0
    } else if step >= 0.5 {
        1
    } else {
        2
    }
}

/// A tick label of `v` with as many decimals as a spacing of `step` needs; no "-0".
pub fn tick(v: f64, step: f64) -> String {
    let s = format!("{v:.0$}", decimals(step));
    let unsigned = s.trim_start_matches('-');
    if unsigned.chars().all(|c| c == '0' || c == '.') {
        unsigned.to_string()
    } else {
        s
    }
}

/// At most about `most` of `items`, evenly spaced, always with the last one: what a line
/// of a long run draws.
pub fn thinned<T>(items: &[T], most: usize) -> impl Iterator<Item = &T> {
    let stride = items.len().div_ceil(most.max(1)).max(1);
    let n = items.len();
    items
        .iter()
        .enumerate()
        .filter(move |(k, _)| k % stride == 0 || k + 1 == n)
        .map(|(_, item)| item)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plot() -> Plot {
        Plot {
            area: Area {
                x0: 50.0,
                y0: 10.0,
                x1: 150.0,
                y1: 110.0,
            },
            x: Range::new(0.0, 10.0),
            y: Range::new(-1.0, 1.0),
        }
    }

    #[test]
    fn the_svg_tag_has_its_size_and_an_escaped_title_and_id() {
        assert_eq!(
            open(None, 640.0, 260.0, r#" role="img""#, Some("Elo <x> & 'y'")),
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="640" height="260" viewBox="0 0 640 260" role="img"><title>Elo &lt;x&gt; &amp; &#39;y&#39;</title>"#
        );
        assert_eq!(
            open(Some("a\"b"), 1.5, 2.0, "", None),
            r#"<svg id="a&quot;b" xmlns="http://www.w3.org/2000/svg" width="1.5" height="2" viewBox="0 0 1.5 2">"#
        );
    }

    #[test]
    fn ranges_hold_their_values_pad_and_tick() {
        assert_eq!(Range::of([3.0, -2.0, 7.0]), Range::new(-2.0, 7.0));
        assert!(!Range::of([]).is_finite());
        assert_eq!(Range::of([]).with(4.0), Range::new(4.0, 4.0));
        assert_eq!(Range::new(0.0, 10.0).padded(0.05), Range::new(-0.5, 10.5));
        let ticks: Vec<f64> = Range::new(-1.0, 1.0).ticks(4).collect();
        assert_eq!(ticks, [-1.0, -0.5, 0.0, 0.5, 1.0]);
        assert_eq!(
            Range::new(0.0, 8.0).ticks(2).collect::<Vec<_>>(),
            [0.0, 4.0, 8.0]
        );
    }

    #[test]
    fn the_plot_maps_data_into_its_area_upwards() {
        let p = plot();
        assert_eq!((p.px(0.0), p.px(10.0), p.px(5.0)), (50.0, 150.0, 100.0));
        // The lowest value at the bottom, the highest at the top.
        assert_eq!((p.py(-1.0), p.py(1.0), p.py(0.0)), (110.0, 10.0, 60.0));
        assert_eq!(
            p.points([(0.0, -1.0), (10.0, 1.0)]),
            "50.0,110.0 150.0,10.0"
        );
        assert_eq!(
            p.band(&[(0.0, -1.0, 0.0), (10.0, 0.0, 1.0)]),
            "50.0,60.0 150.0,10.0 150.0,60.0 50.0,110.0"
        );
        assert_eq!(
            p.rule(0.0, r##"stroke="#666""##),
            r##"<line x1="50" x2="150" y1="60.0" y2="60.0" stroke="#666"/>"##
        );
        assert_eq!(
            p.area.frame("none", "#888"),
            r##"<rect x="50" y="10" width="100" height="100" fill="none" stroke="#888"/>"##
        );
        assert_eq!(Area::inset(200.0, 120.0, 50.0, 10.0, 50.0, 10.0), p.area);
        assert_eq!(p.area.lower(5.0).y0, 15.0);
        assert_eq!(p.area.lower(5.0).y1, 115.0);
        let clip = p.area.clip("c1");
        assert!(clip.starts_with(r#"<clipPath id="c1"><rect x="50" y="10" width="100""#));
        assert!(clip.ends_with(r#"<g clip-path="url(#c1)">"#));
    }

    #[test]
    fn tick_labels_have_the_decimals_of_their_spacing_and_no_negative_zero() {
        assert_eq!(tick(224.44, 0.6), "224.4");
        assert_eq!(tick(3.0, 0.125), "3.00");
        assert_eq!(tick(1234.5, 250.0), "1234");
        assert_eq!(tick(-0.001, 0.1), "0.00");
        assert_eq!(tick(-0.4, 10.0), "0");
        assert_eq!(tick(-2.5, 1.0), "-2.5");
        assert_eq!((decimals(5.0), decimals(0.5), decimals(0.49)), (0, 1, 2));
    }

    #[test]
    fn long_lines_are_thinned_evenly_and_keep_their_last_point() {
        let items: Vec<usize> = (0..10).collect();
        let kept: Vec<usize> = thinned(&items, 4).copied().collect();
        assert_eq!(kept, [0, 3, 6, 9]);
        let kept: Vec<usize> = thinned(&items, 3).copied().collect();
        assert_eq!(kept, [0, 4, 8, 9]);
        assert_eq!(thinned(&items, 100).count(), 10);
        assert_eq!(thinned(&items, 0).count(), 2);
        assert_eq!(thinned::<usize>(&[], 5).count(), 0);
    }
}
