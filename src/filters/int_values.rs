//! Integer values inside filter parts, shared by the delta and bit-width filters: reading an
//! `N`-byte little-endian element, widening it as `T` does, ordering it without 128-bit
//! arithmetic, and TileDB's windows for the windowed filters.

use crate::engine::parts::Parts;

/// Reads the `N`-byte little-endian element at the start of `b` as raw bits.
#[inline(always)]
pub(crate) fn load<const N: usize>(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a[..N].copy_from_slice(&b[..N]);
    u64::from_le_bytes(a)
}

/// Sign- (for `SIGNED`) or zero-extends the `bytes`-byte value in the low bits of `raw` to
/// 64 bits.
#[inline(always)]
pub(crate) fn extend<const SIGNED: bool>(raw: u64, bytes: usize) -> u64 {
    if SIGNED && bytes < 8 {
        let shift = 64 - 8 * bytes as u32;
        (((raw << shift) as i64) >> shift) as u64
    } else {
        raw
    }
}

/// An order-preserving unsigned key of the `N`-byte raw bits `raw`: for signed types the sign
/// bit of the sign-extended value is flipped, so `u64` comparisons order keys as `T` orders
/// values.
#[inline(always)]
pub(crate) fn order_key<const N: usize, const SIGNED: bool>(raw: u64) -> u64 {
    let v = extend::<SIGNED>(raw, N);
    if SIGNED { v ^ (1 << 63) } else { v }
}

/// The value of `T` whose [`order_key`] is `k`, widened to `i128`.
#[inline(always)]
pub(crate) fn key_value<const SIGNED: bool>(k: u64) -> i128 {
    if SIGNED {
        (k ^ (1 << 63)) as i64 as i128
    } else {
        k as i128
    }
}

/// The `N`-byte element at the start of `b`, sign- or zero-extended to `i64` bits (for
/// unsigned 8-byte values at or above 2^63, the wrapped `i64`).
#[inline(always)]
pub(crate) fn as_i64<const N: usize, const SIGNED: bool>(b: &[u8]) -> i64 {
    extend::<SIGNED>(load::<N>(b), N) as i64
}

/// The `N`-byte element at the start of `b` as a value of `T`, widened to `i128`.
#[inline(always)]
pub(crate) fn value<const N: usize, const SIGNED: bool>(b: &[u8]) -> i128 {
    key_value::<SIGNED>(order_key::<N, SIGNED>(load::<N>(b)))
}

/// The window size in bytes for a part of `len` bytes of `s`-byte values with a maximum
/// window of `max_window` bytes (0 only for an empty part).
pub(crate) fn window_size(len: usize, max_window: u32, s: usize) -> usize {
    let w = len.min(max_window as usize) / s * s;
    if w > 0 {
        w
    } else if len < s {
        // TileDB divides by zero here; one raw window covers the short part.
        len
    } else {
        // `max_window < s`: TileDB divides by zero; use one value per window.
        s
    }
}

/// How many windows [`windows`] yields.
pub(crate) fn window_count(data: Parts<'_>, max_window: u32, s: usize) -> usize {
    data.iter()
        .map(|p| match window_size(p.len(), max_window, s) {
            0 => 0,
            w => p.len().div_ceil(w),
        })
        .sum()
}

/// Every window of every part of `data`, in order: each part cut into [`window_size`] pieces,
/// the last possibly shorter; an empty part has none.
pub(crate) fn windows<'a>(
    data: Parts<'a>,
    max_window: u32,
    s: usize,
) -> impl Iterator<Item = &'a [u8]> {
    data.iter().flat_map(move |part| {
        // `chunks` needs a non-zero size; an empty part yields nothing with any size.
        part.chunks(window_size(part.len(), max_window, s).max(1))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_as_the_type_does() {
        let signed = [i16::MIN, -2, -1, 0, 1, i16::MAX];
        let keys: Vec<u64> = signed
            .iter()
            .map(|v| order_key::<2, true>(load::<2>(&v.to_le_bytes())))
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
        for v in signed {
            assert_eq!(value::<2, true>(&v.to_le_bytes()), v as i128);
        }
        let unsigned = [0u64, 1, 1 << 63, u64::MAX];
        let keys: Vec<u64> = unsigned.iter().map(|&v| order_key::<8, false>(v)).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(value::<8, false>(&u64::MAX.to_le_bytes()), u64::MAX as i128);
        assert_eq!(value::<8, true>(&i64::MIN.to_le_bytes()), i64::MIN as i128);
        assert_eq!(extend::<true>(0x80, 1), u64::MAX - 0x7F);
        assert_eq!(extend::<false>(0x80, 1), 0x80);
    }

    #[test]
    fn window_sizes() {
        assert_eq!(window_size(0, 256, 8), 0);
        assert_eq!(window_size(1000, 256, 8), 256);
        assert_eq!(window_size(1000, 250, 8), 248);
        assert_eq!(window_size(5, 256, 8), 5);
        assert_eq!(window_size(64, 4, 8), 8);
    }

    #[test]
    fn windows_of_parts() {
        let bytes = [7u8; 22];
        let lens = [10usize, 0, 1, 3, 8];
        let parts = Parts::new(&bytes, &lens);
        let got: Vec<usize> = windows(parts, 4, 2).map(<[u8]>::len).collect();
        // 10 bytes in windows of 4; the empty part none; 1 byte (under one value) one raw
        // window; 3 bytes in windows of 2 (whole values); 8 bytes two.
        assert_eq!(got, [4, 4, 2, 1, 2, 1, 4, 4]);
        assert_eq!(window_count(parts, 4, 2), got.len());
    }
}
