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

/// The days of month `m` (1–12) of year `y` in the Gregorian calendar.
fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The Unix time at which the UTC day `YYYY-MM-DD` starts; `None` for anything but four,
/// two and two ASCII digits naming a day that exists (`2025-02-31` and `+123-01-01` are
/// not days).
pub fn day_start(text: &str) -> Option<i64> {
    let mut parts = text.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if parts.next().is_some() || !digits(y, 4) || !digits(m, 2) || !digits(d, 2) {
        return None;
    }
    let (y, m, d): (i64, i64, i64) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    if !(1..=12).contains(&m) || !(1..=days_in_month(y, m)).contains(&d) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_days_that_exist_are_days() {
        assert_eq!(day_start("1970-01-01"), Some(0));
        assert_eq!(day_start("2024-02-29"), Some(1_709_164_800));
        assert_eq!(day_start("2000-02-29"), Some(951_782_400));
        assert_eq!(day_start("2025-12-31"), Some(1_767_139_200));
        for bad in [
            "2025-02-29",
            "2025-02-30",
            "2025-02-31",
            "1900-02-29",
            "2025-04-31",
            "2025-06-31",
            "2025-09-31",
            "2025-11-31",
            "2025-00-10",
            "2025-13-01",
            "2025-01-00",
            "+123-01-01",
            "-123-01-01",
            "2025-+1-01",
            "2025-1-01",
            "2025-01-1",
            "２０２５-01-01",
            "2025-01-01-",
            "",
            "2025/01/01",
        ] {
            assert_eq!(day_start(bad), None, "{bad}");
        }
        let e = window("2025-02-31", "").unwrap_err();
        assert!(e.starts_with("from '2025-02-31'"), "{e}");
        let e = window("", "2025-02-30").unwrap_err();
        assert!(e.starts_with("to '2025-02-30'"), "{e}");
        assert_eq!(window("", "1970-01-01").unwrap(), (None, Some(86_399)));
    }
}
