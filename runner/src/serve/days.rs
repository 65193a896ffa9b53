//! Days as the search forms give them (`YYYY-MM-DD`, UTC), turned into Unix times: the
//! actions log's and the runs' date ranges share them.

/// `from` and `to` (each a UTC day `YYYY-MM-DD`, or empty for no bound) as Unix times:
/// `(since, until)`, `until` the last second of its day. `Err` names the bad field and what
/// to give.
pub fn window(from: &str, to: &str) -> Result<(Option<i64>, Option<i64>), String> {
    let day = |field: &str, text: &str| -> Result<Option<i64>, String> {
        let t = text.trim();
        if t.is_empty() {
            return Ok(None);
        }
        day_start(t)
            .map(Some)
            .ok_or_else(|| format!("{field} '{t}': give a day as YYYY-MM-DD"))
    };
    let since = day("from", from)?;
    let until = day("to", to)?.map(|d| d + 86_399);
    Ok((since, until))
}

/// The Unix time at which the UTC day `YYYY-MM-DD` starts.
pub fn day_start(text: &str) -> Option<i64> {
    let mut parts = text.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (y, m, d): (i64, i64, i64) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    // Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some((era * 146_097 + doe - 719_468) * 86_400)
}
