//! Bounds-checked reads of little- and big-endian numbers from a table file's bytes.
//!
//! Every read returns `None` past the end of the slice instead of panicking; the callers
//! turn that into a [`Corrupt`](super::error::Corrupt) finding.

/// The byte at `at`.
#[inline]
pub(super) fn u8_at(data: &[u8], at: usize) -> Option<u8> {
    data.get(at).copied()
}

/// The little-endian `u16` at `at`.
#[inline]
pub(super) fn u16_le(data: &[u8], at: usize) -> Option<u16> {
    let bytes = data.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes(bytes.try_into().ok()?))
}

/// The little-endian `u32` at `at`.
#[inline]
pub(super) fn u32_le(data: &[u8], at: usize) -> Option<u32> {
    let bytes = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

/// The big-endian `u32` at `at`, with bytes past the end of `data` read as zero (the Huffman
/// decoder looks ahead a few bytes beyond the last code of a block).
#[inline]
pub(super) fn u32_be_padded(data: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    for (i, b) in word.iter_mut().enumerate() {
        *b = at
            .checked_add(i)
            .and_then(|j| data.get(j))
            .copied()
            .unwrap_or(0);
    }
    u32::from_be_bytes(word)
}

/// The big-endian `u64` at `at`, with bytes past the end of `data` read as zero.
#[inline]
pub(super) fn u64_be_padded(data: &[u8], at: usize) -> u64 {
    (u64::from(u32_be_padded(data, at)) << 32) | u64::from(u32_be_padded(data, at.wrapping_add(4)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_in_range_and_refuses_past_the_end() {
        let data = [0x01, 0x02, 0x03, 0x04, 0x05];
        assert_eq!(u8_at(&data, 4), Some(5));
        assert_eq!(u8_at(&data, 5), None);
        assert_eq!(u16_le(&data, 3), Some(0x0504));
        assert_eq!(u16_le(&data, 4), None);
        assert_eq!(u16_le(&data, usize::MAX), None);
        assert_eq!(u32_le(&data, 1), Some(0x0504_0302));
        assert_eq!(u32_le(&data, 2), None);
    }

    #[test]
    fn padded_reads_fill_with_zeros() {
        let data = [0x01, 0x02, 0x03, 0x04, 0x05];
        assert_eq!(u32_be_padded(&data, 0), 0x0102_0304);
        assert_eq!(u32_be_padded(&data, 3), 0x0405_0000);
        assert_eq!(u32_be_padded(&data, usize::MAX), 0);
        assert_eq!(u64_be_padded(&data, 1), 0x0203_0405_0000_0000);
    }
}
