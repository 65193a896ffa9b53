//! Sizes as people write them (`1G`, `512M`, `8MiB`, `1.5G`, `4096`, `0`) and as the
//! server shows them (`7.9 MiB`): the units are binary (K = 1024 bytes), a plain number is
//! bytes.

/// The units a size may end with, and their bytes.
const UNITS: &[(char, u64)] = &[
    ('K', 1 << 10),
    ('M', 1 << 20),
    ('G', 1 << 30),
    ('T', 1 << 40),
    ('P', 1 << 50),
];

/// What a size looks like, for the messages that refuse one.
pub const SIZE_FORM: &str = "a size such as 1G, 512M, 8MiB or 0 (binary units K, M, G, T, P; \
                             a plain number is bytes)";

/// The bytes of `text`: a number (decimals allowed with a unit) and an optional unit K,
/// M, G, T or P (any case, `B`, `iB` after it or not); `Err` says what is wrong.
pub fn parse(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let number_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(number_end);
    if number.is_empty() || number.matches('.').count() > 1 || number.ends_with('.') {
        return Err(format!("'{text}': not a size"));
    }
    let unit = unit.trim();
    let upper = unit.to_ascii_uppercase();
    let bare = upper
        .strip_suffix("IB")
        .or_else(|| upper.strip_suffix('B'))
        .unwrap_or(&upper);
    let scale = match bare.chars().collect::<Vec<_>>().as_slice() {
        [] if upper.is_empty() || upper == "B" => 1,
        [c] => match UNITS.iter().find(|(u, _)| u == c) {
            Some((_, bytes)) => *bytes,
            None => return Err(format!("'{text}': unknown unit '{unit}'")),
        },
        _ => return Err(format!("'{text}': unknown unit '{unit}'")),
    };
    match number.split_once('.') {
        None => number
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(scale))
            .ok_or_else(|| format!("'{text}': too large")),
        Some(_) if scale == 1 => Err(format!("'{text}': a number of bytes is whole")),
        Some(_) => {
            let x: f64 = number
                .parse()
                .map_err(|_| format!("'{text}': not a size"))?;
            let bytes = (x * scale as f64).round();
            if bytes >= u64::MAX as f64 {
                return Err(format!("'{text}': too large"));
            }
            Ok(bytes as u64)
        }
    }
}

/// `bytes` for people: `0 B`, `512 B`, `8.0 KiB`, `7.9 MiB`, `1.0 GiB`.
pub fn show(bytes: u64) -> String {
    let Some((unit, scale)) = UNITS.iter().rev().find(|(_, s)| bytes >= *s) else {
        return format!("{bytes} B");
    };
    format!("{:.1} {unit}iB", bytes as f64 / *scale as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_parsed_with_binary_units() {
        for (text, bytes) in [
            ("0", 0),
            ("4096", 4096),
            ("1G", 1 << 30),
            ("1g", 1 << 30),
            ("512M", 512 << 20),
            ("512MB", 512 << 20),
            ("8MiB", 8 << 20),
            (" 8 MiB ", 8 << 20),
            ("64k", 64 << 10),
            ("1.5G", 3 << 29),
            ("2T", 2 << 40),
            ("1P", 1 << 50),
            ("100B", 100),
        ] {
            assert_eq!(parse(text), Ok(bytes), "{text}");
        }
    }

    #[test]
    fn bad_sizes_are_refused_with_what_is_wrong() {
        for (text, why) in [
            ("", "not a size"),
            ("G", "not a size"),
            ("-1G", "not a size"),
            ("1.2.3G", "not a size"),
            ("1.G", "not a size"),
            ("12X", "unknown unit 'X'"),
            ("1GG", "unknown unit 'GG'"),
            ("1 gigabyte", "unknown unit 'gigabyte'"),
            ("1.5", "whole"),
            ("99999999999999999999", "too large"),
            ("20000P", "too large"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
            assert!(e.contains(&format!("'{text}'")), "{text}: {e}");
        }
    }

    #[test]
    fn sizes_are_shown_in_the_largest_unit_they_reach() {
        assert_eq!(show(0), "0 B");
        assert_eq!(show(1023), "1023 B");
        assert_eq!(show(8 << 10), "8.0 KiB");
        assert_eq!(show((79 << 20) / 10), "7.9 MiB");
        assert_eq!(show(1 << 30), "1.0 GiB");
    }
}
