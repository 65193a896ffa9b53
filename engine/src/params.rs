//! The registry of tunable parameters: search margins and evaluation weights that SPSA and
//! Texel tuning may change.
//!
//! A parameter is declared once with [`tunable!`](crate::tunable), which places a static
//! [`Tunable`] in the [`TUNABLES`] distributed slice (linkme). A parameter is a scalar or an
//! array (a piece-square table); array elements are addressed as `name_<i>` or, for 64-entry
//! tables, `name_<square>` (`pst_knight_mg_e4`).
//!
//! Values live in a [`Params`] table owned by each searcher (no globals, no locks), so two
//! variants with different values can play each other in one process. The search and the
//! evaluation copy what they need out of it into plain structs when a searcher is made.

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use crate::types::Square;

/// A declared parameter (scalar or array) with its range and SPSA step sizes.
#[derive(Debug)]
pub struct Tunable {
    /// Name as used on the command line, in UCI options and parameter files.
    pub name: &'static str,
    /// Default value(s): one for a scalar, one per element for an array.
    pub defaults: &'static [i32],
    /// Smallest allowed value.
    pub min: i32,
    /// Largest allowed value.
    pub max: i32,
    /// SPSA perturbation size at the end of a run (OpenBench `c_end`).
    pub c_end: f64,
    /// SPSA learning rate at the end of a run (OpenBench `r_end`).
    pub r_end: f64,
    /// Whether this is an evaluation weight (Texel-tunable) or a search parameter.
    pub eval: bool,
    /// Element names of an array (`material_mg_knight`); empty: elements are named by index,
    /// or by square for 64-entry tables.
    pub names: &'static [&'static str],
}

/// Every parameter linked into the program.
#[linkme::distributed_slice]
pub static TUNABLES: [Tunable];

/// Declares a tunable parameter and registers it.
///
/// ```ignore
/// tunable!(pub RFP_MARGIN = search "rfp_margin": 75, 0..=300, c_end 8.0, r_end 0.002);
/// tunable!(pub PST_KNIGHT_MG = eval "pst_knight_mg": [0; 64], -300..=300, c_end 4.0, r_end 0.002);
/// // Elements named `king_shield_mg_near` and `king_shield_mg_far` (otherwise `_0`, `_1`):
/// tunable!(pub KING_SHIELD_MG = eval "king_shield_mg": [12, 6] names [near, far], -100..=100, c_end 1.0, r_end 0.002);
/// ```
#[macro_export]
macro_rules! tunable {
    ($(#[$meta:meta])* $vis:vis $ident:ident = $kind:ident $name:literal : [$($value:expr),* $(,)?] names [$($label:ident),* $(,)?], $min:literal ..= $max:literal, c_end $c:literal, r_end $r:literal) => {
        $crate::tunable!(@register $(#[$meta])* $vis $ident, $kind, $name, &[$($value),*], &[$(stringify!($label)),*], $min, $max, $c, $r);
        const _: () = assert!(
            [$(stringify!($label)),*].len() == [$($value),*].len(),
            "one name per element"
        );
    };
    ($(#[$meta:meta])* $vis:vis $ident:ident = $kind:ident $name:literal : [$($value:expr),* $(,)?], $min:literal ..= $max:literal, c_end $c:literal, r_end $r:literal) => {
        $crate::tunable!(@register $(#[$meta])* $vis $ident, $kind, $name, &[$($value),*], &[], $min, $max, $c, $r);
    };
    ($(#[$meta:meta])* $vis:vis $ident:ident = $kind:ident $name:literal : [$value:expr; $n:literal], $min:literal ..= $max:literal, c_end $c:literal, r_end $r:literal) => {
        $crate::tunable!(@register $(#[$meta])* $vis $ident, $kind, $name, &[$value; $n], &[], $min, $max, $c, $r);
    };
    ($(#[$meta:meta])* $vis:vis $ident:ident = $kind:ident $name:literal : $value:literal, $min:literal ..= $max:literal, c_end $c:literal, r_end $r:literal) => {
        $crate::tunable!($(#[$meta])* $vis $ident = $kind $name: [$value], $min..=$max, c_end $c, r_end $r);
    };
    (@register $(#[$meta:meta])* $vis:vis $ident:ident, $kind:ident, $name:literal, $defaults:expr, $names:expr, $min:literal, $max:literal, $c:literal, $r:literal) => {
        $(#[$meta])*
        #[linkme::distributed_slice($crate::params::TUNABLES)]
        $vis static $ident: $crate::params::Tunable = $crate::params::Tunable {
            name: $name,
            defaults: $defaults,
            min: $min,
            max: $max,
            c_end: $c,
            r_end: $r,
            eval: $crate::tunable!(@kind $kind),
            names: $names,
        };
    };
    (@kind eval) => { true };
    (@kind search) => { false };
}

/// One scalar parameter as users see it (an array contributes one per element).
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    /// Element name (`rfp_margin`, `pst_knight_mg_e4`).
    pub name: String,
    /// Default value.
    pub default: i32,
    /// Smallest allowed value.
    pub min: i32,
    /// Largest allowed value.
    pub max: i32,
    /// SPSA `c_end`.
    pub c_end: f64,
    /// SPSA `r_end`.
    pub r_end: f64,
    /// Whether it is an evaluation weight.
    pub eval: bool,
}

/// A parameter name or value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamError {
    /// No parameter has this name.
    Unknown(String),
    /// The value is outside the parameter's range.
    OutOfRange {
        /// The parameter.
        name: String,
        /// The value asked for.
        value: i64,
        /// Smallest allowed.
        min: i32,
        /// Largest allowed.
        max: i32,
    },
    /// The value is not an integer.
    NotANumber {
        /// The parameter.
        name: String,
        /// The text given.
        text: String,
    },
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::Unknown(name) => {
                write!(
                    f,
                    "unknown parameter '{name}' (`spar params` lists them all)"
                )?;
                let close = suggestions(name);
                if !close.is_empty() {
                    write!(f, "; did you mean {}?", close.join(", "))?;
                }
                Ok(())
            }
            ParamError::OutOfRange {
                name,
                value,
                min,
                max,
            } => {
                write!(
                    f,
                    "parameter '{name}' = {value} is out of range: allowed {min}..={max}"
                )
            }
            ParamError::NotANumber { name, text } => {
                write!(f, "parameter '{name}' needs an integer value, got '{text}'")
            }
        }
    }
}

impl std::error::Error for ParamError {}

/// Known names close to an unknown one: the elements of the array it names an element of
/// (`material_mg_1` → `material_mg_pawn`, …), else up to four names with its first word.
fn suggestions(name: &str) -> Vec<String> {
    let specs = &layout().specs;
    if let Some((base, _)) = name.rsplit_once('_') {
        let prefix = format!("{base}_");
        let elements: Vec<String> = specs
            .iter()
            .filter(|s| s.name.starts_with(&prefix) && !s.name[prefix.len()..].contains('_'))
            .map(|s| s.name.clone())
            .collect();
        if (1..=8).contains(&elements.len()) {
            return elements;
        }
    }
    let stem = name.split('_').next().unwrap_or(name);
    specs
        .iter()
        .filter(|s| !stem.is_empty() && s.name.starts_with(stem) && s.name.len() < 40)
        .take(4)
        .map(|s| s.name.clone())
        .collect()
}

struct Layout {
    /// Flat offset of each tunable, by position in `TUNABLES`.
    offsets: Vec<usize>,
    /// Flattened specs in offset order (tunables sorted by name).
    specs: Vec<ParamSpec>,
    by_name: HashMap<String, usize>,
}

fn element_name(base: &str, names: &[&str], len: usize, i: usize) -> String {
    if len == 1 {
        base.to_string()
    } else if let Some(label) = names.get(i) {
        format!("{base}_{label}")
    } else if len == 64 {
        format!("{base}_{}", Square::from_index(i))
    } else {
        format!("{base}_{i}")
    }
}

fn layout() -> &'static Layout {
    static LAYOUT: OnceLock<Layout> = OnceLock::new();
    LAYOUT.get_or_init(|| {
        let mut order: Vec<usize> = (0..TUNABLES.len()).collect();
        order.sort_by_key(|&i| TUNABLES[i].name);
        let mut offsets = vec![0; TUNABLES.len()];
        let mut specs = Vec::new();
        for i in order {
            let t = &TUNABLES[i];
            offsets[i] = specs.len();
            for (k, &default) in t.defaults.iter().enumerate() {
                specs.push(ParamSpec {
                    name: element_name(t.name, t.names, t.defaults.len(), k),
                    default,
                    min: t.min,
                    max: t.max,
                    c_end: t.c_end,
                    r_end: t.r_end,
                    eval: t.eval,
                });
            }
        }
        let by_name = specs
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i))
            .collect();
        Layout {
            offsets,
            specs,
            by_name,
        }
    })
}

fn slice_index(t: &'static Tunable) -> usize {
    let base = TUNABLES.as_ptr() as usize;
    let i = (t as *const Tunable as usize).wrapping_sub(base) / core::mem::size_of::<Tunable>();
    assert!(
        i < TUNABLES.len() && std::ptr::eq(&TUNABLES[i], t),
        "tunable {} is not registered",
        t.name
    );
    i
}

/// Every parameter element, sorted by name (arrays in element order).
pub fn specs() -> &'static [ParamSpec] {
    &layout().specs
}

/// The spec of a parameter element by name.
pub fn spec(name: &str) -> Option<&'static ParamSpec> {
    let l = layout();
    l.by_name.get(name).map(|&i| &l.specs[i])
}

/// A full set of parameter values (one per element), starting from the defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    values: Box<[i32]>,
}

impl Default for Params {
    fn default() -> Self {
        Params::defaults()
    }
}

impl Params {
    /// Every parameter at its default.
    pub fn defaults() -> Params {
        Params {
            values: layout().specs.iter().map(|s| s.default).collect(),
        }
    }

    /// The value of a scalar parameter (the first element of an array).
    pub fn get(&self, t: &'static Tunable) -> i32 {
        self.values[layout().offsets[slice_index(t)]]
    }

    /// The values of an array parameter.
    pub fn array(&self, t: &'static Tunable) -> &[i32] {
        let start = layout().offsets[slice_index(t)];
        &self.values[start..start + t.defaults.len()]
    }

    /// The value of an element by name.
    pub fn get_by_name(&self, name: &str) -> Option<i32> {
        layout().by_name.get(name).map(|&i| self.values[i])
    }

    /// Sets an element by name, checking the range.
    pub fn set(&mut self, name: &str, value: i64) -> Result<(), ParamError> {
        let l = layout();
        let &i = l
            .by_name
            .get(name)
            .ok_or_else(|| ParamError::Unknown(name.to_string()))?;
        let s = &l.specs[i];
        if value < s.min as i64 || value > s.max as i64 {
            return Err(ParamError::OutOfRange {
                name: name.to_string(),
                value,
                min: s.min,
                max: s.max,
            });
        }
        self.values[i] = value as i32;
        Ok(())
    }

    /// Sets an element from text (an integer; a float is rounded, as SPSA files may hold).
    pub fn set_str(&mut self, name: &str, text: &str) -> Result<(), ParamError> {
        let text = text.trim();
        let value = text.parse::<i64>().ok().or_else(|| {
            text.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && v.abs() < 1e15)
                .map(|v| v.round() as i64)
        });
        match value {
            Some(v) => self.set(name, v),
            None => {
                if spec(name).is_none() {
                    Err(ParamError::Unknown(name.to_string()))
                } else {
                    Err(ParamError::NotANumber {
                        name: name.to_string(),
                        text: text.to_string(),
                    })
                }
            }
        }
    }

    /// `(spec, value)` for every element, in [`specs`] order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static ParamSpec, i32)> + '_ {
        layout().specs.iter().zip(self.values.iter().copied())
    }

    /// The elements whose value differs from the default.
    pub fn changed(&self) -> impl Iterator<Item = (&'static ParamSpec, i32)> + '_ {
        self.iter().filter(|(s, v)| s.default != *v)
    }

    /// Raw values in [`specs`] order (Texel tuning works on this vector).
    pub fn values(&self) -> &[i32] {
        &self.values
    }

    /// Replaces every value (clamped into range) from a vector in [`specs`] order.
    pub fn set_values(&mut self, values: &[i32]) {
        for ((slot, &v), s) in self.values.iter_mut().zip(values).zip(specs()) {
            *slot = v.clamp(s.min, s.max);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::tunable!(TEST_SCALAR = search "zz_test_scalar": 7, 0..=10, c_end 1.0, r_end 0.002);
    crate::tunable!(TEST_TABLE = eval "zz_test_table": [3; 64], -5..=5, c_end 1.0, r_end 0.002);
    crate::tunable!(TEST_NAMED = eval "zz_test_named": [1, 2] names [low, high], 0..=5, c_end 1.0, r_end 0.002);

    #[test]
    fn registry_holds_declared_parameters() {
        let p = Params::defaults();
        assert_eq!(p.get(&TEST_SCALAR), 7);
        assert_eq!(p.array(&TEST_TABLE).len(), 64);
        assert_eq!(p.get_by_name("zz_test_table_e4"), Some(3));
        let s = spec("zz_test_scalar").unwrap();
        assert_eq!((s.min, s.max, s.eval), (0, 10, false));
        assert!(spec("zz_test_table_h8").unwrap().eval);
    }

    #[test]
    fn set_checks_names_and_ranges() {
        let mut p = Params::defaults();
        p.set("zz_test_scalar", 9).unwrap();
        assert_eq!(p.get(&TEST_SCALAR), 9);
        p.set_str("zz_test_table_a1", "-4.6").unwrap();
        assert_eq!(p.array(&TEST_TABLE)[0], -5);
        assert!(matches!(
            p.set("zz_test_scalar", 11),
            Err(ParamError::OutOfRange { .. })
        ));
        assert!(matches!(
            p.set("no_such_param", 1),
            Err(ParamError::Unknown(_))
        ));
        assert!(matches!(
            p.set_str("zz_test_scalar", "abc"),
            Err(ParamError::NotANumber { .. })
        ));
        let msg = p.set("zz_test_scalar", 11).unwrap_err().to_string();
        assert!(
            msg.contains("zz_test_scalar") && msg.contains("0..=10"),
            "{msg}"
        );
        assert_eq!(p.changed().count(), 2);
    }

    #[test]
    fn named_elements_and_suggestions() {
        assert_eq!(spec("zz_test_named_low").unwrap().default, 1);
        assert_eq!(spec("zz_test_named_high").unwrap().default, 2);
        assert!(spec("zz_test_named_0").is_none());
        // An index where names are used points at the names.
        let msg = Params::defaults()
            .set("zz_test_named_1", 1)
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("did you mean zz_test_named_low, zz_test_named_high?"),
            "{msg}"
        );
        let msg = Params::defaults()
            .set("material_mg_1", 1)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("material_mg_knight"), "{msg}");
    }
}
