//! Tuned values in forms people paste elsewhere: OpenBench `name, value` lines (which
//! `--engine … params=FILE` loads), UCI `setoption` lines, Rust constants, and whole
//! `tunable!` declarations for the evaluation tables.

use std::fmt::Write;

use engine::params::{Params, TUNABLES};

use super::average;
use super::trajectory::Row;

/// `name, value` lines, one per parameter.
pub fn openbench_lines(values: &[(String, i64)]) -> String {
    values.iter().map(|(n, v)| format!("{n}, {v}\n")).collect()
}

/// `setoption name <name> value <v>` lines.
pub fn setoption_lines(values: &[(String, i64)]) -> String {
    values
        .iter()
        .map(|(n, v)| format!("setoption name {n} value {v}\n"))
        .collect()
}

/// `const NAME: i32 = v;` lines.
pub fn rust_constants(values: &[(String, i64)]) -> String {
    values
        .iter()
        .map(|(n, v)| format!("const {}: i32 = {v};\n", n.to_uppercase()))
        .collect()
}

/// The values printed at the end of `spar tune`: the table of the averaged θ beside the
/// last iterate ([`average`]), the averaged θ rounded as OpenBench lines, `setoption` lines
/// and (for spar's own engine, not an `external` one) Rust constants, then the last
/// iterate's OpenBench lines. `rows` is the whole trajectory (row 0 the start). Returns the
/// text and the averaged values (what `--out` writes).
pub fn tune_values(
    names: &[String],
    start: &[f64],
    rows: &[Row],
    external: bool,
) -> (String, Vec<(String, i64)>) {
    let last: Vec<(String, i64)> = match rows.last() {
        Some(r) => names
            .iter()
            .zip(&r.theta)
            .map(|(n, &t)| (n.clone(), t.round() as i64))
            .collect(),
        None => Vec::new(),
    };
    let Some(avg) = average::average(rows) else {
        return (String::new(), last);
    };
    let finals = avg.rounded(names);
    let mut text = String::from("\n");
    for line in average::table(names, start, &avg) {
        text.push_str(&line);
        text.push('\n');
    }
    let form = if external {
        "`name, value`"
    } else {
        "OpenBench, `--engine … params=FILE`"
    };
    let _ = write!(
        text,
        "\nParameter values, averaged ({form}; what --out writes):\n{}\nUCI:\n{}",
        openbench_lines(&finals),
        setoption_lines(&finals)
    );
    // An external engine takes the values as UCI options (the Rust form is spar's).
    if !external {
        let _ = write!(text, "\nRust:\n{}", rust_constants(&finals));
    }
    let _ = write!(
        text,
        "\nLast iterate (iteration {}):\n{}",
        avg.to,
        openbench_lines(&last)
    );
    (text, finals)
}

/// `crate::tunable!` declarations with the values of `params` as defaults, for every
/// registered array or scalar that `include` accepts (by its `eval` flag and name), in name
/// order. 64-entry tables are laid out as in the source: eight per line, rank 1 first.
pub fn rust_tunables(params: &Params, include: impl Fn(bool, &str) -> bool) -> String {
    let mut tunables: Vec<_> = TUNABLES
        .iter()
        .filter(|t| include(t.eval, t.name))
        .collect();
    tunables.sort_by_key(|t| t.name);
    let mut s = String::new();
    for t in tunables {
        let values = params.array(t);
        let kind = if t.eval { "eval" } else { "search" };
        let ident = t.name.to_uppercase();
        let tail = format!(
            "{}..={}, c_end {:?}, r_end {:?}",
            t.min, t.max, t.c_end, t.r_end
        );
        if values.len() == 1 && t.defaults.len() == 1 {
            let _ = writeln!(
                s,
                "crate::tunable!(\n    pub {ident} = {kind} \"{}\": {}, {tail}\n);",
                t.name, values[0]
            );
        } else if values.len() == 64 {
            let _ = writeln!(
                s,
                "crate::tunable!(\n    pub {ident} = {kind} \"{}\": [",
                t.name
            );
            for rank in values.chunks(8) {
                let line: Vec<String> = rank.iter().map(|v| format!("{v:>5},")).collect();
                let _ = writeln!(s, "       {}", line.join(""));
            }
            let _ = writeln!(s, "    ], {tail}\n);");
        } else {
            let list: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            let names = if t.names.is_empty() {
                String::new()
            } else {
                format!(" names [{}]", t.names.join(", "))
            };
            let _ = writeln!(
                s,
                "crate::tunable!(\n    pub {ident} = {kind} \"{}\": [{}]{names}, {tail}\n);",
                t.name,
                list.join(", ")
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_forms() {
        let v = vec![("rfp_margin".to_string(), 81), ("lmr_base".to_string(), -3)];
        assert_eq!(openbench_lines(&v), "rfp_margin, 81\nlmr_base, -3\n");
        assert_eq!(
            setoption_lines(&v),
            "setoption name rfp_margin value 81\nsetoption name lmr_base value -3\n"
        );
        assert_eq!(
            rust_constants(&v),
            "const RFP_MARGIN: i32 = 81;\nconst LMR_BASE: i32 = -3;\n"
        );
    }

    #[test]
    fn tunable_declarations_carry_the_values() {
        let mut p = Params::defaults();
        p.set("material_mg_knight", 350).unwrap();
        p.set("pst_knight_mg_e4", 41).unwrap();
        let src = rust_tunables(&p, |eval, _| eval);
        assert!(
            src.contains(
                "pub MATERIAL_MG = eval \"material_mg\": [82, 350, 365, 477, 1025, 0] \
                 names [pawn, knight, bishop, rook, queen, king], 0..=2500"
            ),
            "{src}"
        );
        assert!(src.contains("0..=2500, c_end 8.0, r_end 0.002"));
        // e4 is index 28: rank 4 (fourth line of the table), fifth column.
        let table = src.split("\"pst_knight_mg\": [\n").nth(1).unwrap();
        let rank4 = table.lines().nth(3).unwrap();
        assert_eq!(rank4.split(',').nth(4).unwrap().trim(), "41");
        assert!(!src.contains("rfp_margin"));
    }
}
