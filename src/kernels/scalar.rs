//! Portable scalar kernels: the reference every SIMD kernel is tested against, and the fallback
//! on CPUs (and targets) without SIMD support.

/// Byte shuffle (FORMAT.md §5.15): `dst[j·n + i] = src[i·t + j]` with `n = ⌊len/t⌋`, the
/// `len mod t` trailing bytes copied. `t ≤ 1` is the identity.
///
/// # Panics
///
/// If `src` and `dst` differ in length.
pub fn shuffle(t: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len());
    let n = if t > 1 { src.len() / t } else { 0 };
    if n == 0 {
        dst.copy_from_slice(src);
        return;
    }
    let body = n * t;
    match t {
        2 => shuffle_fixed::<2>(&src[..body], &mut dst[..body]),
        4 => shuffle_fixed::<4>(&src[..body], &mut dst[..body]),
        8 => shuffle_fixed::<8>(&src[..body], &mut dst[..body]),
        _ => shuffle_elements(t, n, src, dst, 0, n),
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// Reverses [`shuffle`].
///
/// # Panics
///
/// If `src` and `dst` differ in length.
pub fn unshuffle(t: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len());
    let n = if t > 1 { src.len() / t } else { 0 };
    if n == 0 {
        dst.copy_from_slice(src);
        return;
    }
    let body = n * t;
    match t {
        2 => unshuffle_fixed::<2>(&src[..body], &mut dst[..body]),
        4 => unshuffle_fixed::<4>(&src[..body], &mut dst[..body]),
        8 => unshuffle_fixed::<8>(&src[..body], &mut dst[..body]),
        _ => unshuffle_elements(t, n, src, dst, 0, n),
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// The shuffle of elements `i0..i1` only, for a part of `n` elements of `t` bytes (the tail of
/// the SIMD kernels).
pub(crate) fn shuffle_elements(
    t: usize,
    n: usize,
    src: &[u8],
    dst: &mut [u8],
    i0: usize,
    i1: usize,
) {
    for i in i0..i1 {
        for (j, &b) in src[i * t..(i + 1) * t].iter().enumerate() {
            dst[j * n + i] = b;
        }
    }
}

/// The unshuffle of elements `i0..i1` only (see [`shuffle_elements`]).
pub(crate) fn unshuffle_elements(
    t: usize,
    n: usize,
    src: &[u8],
    dst: &mut [u8],
    i0: usize,
    i1: usize,
) {
    for i in i0..i1 {
        for (j, b) in dst[i * t..(i + 1) * t].iter_mut().enumerate() {
            *b = src[j * n + i];
        }
    }
}

fn shuffle_fixed<const T: usize>(src: &[u8], dst: &mut [u8]) {
    let n = src.len() / T;
    for j in 0..T {
        let row = &mut dst[j * n..(j + 1) * n];
        for (d, elem) in row.iter_mut().zip(src.chunks_exact(T)) {
            *d = elem[j];
        }
    }
}

fn unshuffle_fixed<const T: usize>(src: &[u8], dst: &mut [u8]) {
    let n = src.len() / T;
    for (i, elem) in dst.chunks_exact_mut(T).enumerate() {
        let mut e = [0u8; T];
        for (j, b) in e.iter_mut().enumerate() {
            *b = src[j * n + i];
        }
        elem.copy_from_slice(&e);
    }
}

/// Transposes the 8×8 bit matrix held in `x` (byte j = row j): bit `8j+k` ↔ bit `8k+j`.
#[inline]
pub(crate) fn transpose8(mut x: u64) -> u64 {
    let t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x = x ^ t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x = x ^ t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^ t ^ (t << 28)
}

/// blosc2_bitshuffle of one block (FORMAT.md §5.14): the first `N` elements (N = ⌊len/t⌋
/// rounded down to a multiple of 8) are bit-transposed, the remaining bytes copied.
///
/// # Panics
///
/// If `src` and `dst` differ in length, or if `t == 0`.
pub fn bitshuffle_block(t: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len());
    let n = (src.len() / t) & !7;
    let r = n / 8;
    for b in 0..t {
        for g in 0..r {
            let mut x = 0u64;
            for j in 0..8 {
                x |= (src[(8 * g + j) * t + b] as u64) << (8 * j);
            }
            let y = transpose8(x).to_le_bytes();
            for k in 0..8 {
                dst[(8 * b + k) * r + g] = y[k];
            }
        }
    }
    dst[n * t..].copy_from_slice(&src[n * t..]);
}

/// Reverses [`bitshuffle_block`].
///
/// # Panics
///
/// If `src` and `dst` differ in length, or if `t == 0`.
pub fn bitunshuffle_block(t: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len());
    let n = (src.len() / t) & !7;
    let r = n / 8;
    for b in 0..t {
        for g in 0..r {
            let mut x = 0u64;
            for k in 0..8 {
                x |= (src[(8 * b + k) * r + g] as u64) << (8 * k);
            }
            let y = transpose8(x).to_le_bytes();
            for j in 0..8 {
                dst[(8 * g + j) * t + b] = y[j];
            }
        }
    }
    dst[n * t..].copy_from_slice(&src[n * t..]);
}

/// XOR encoding (FORMAT.md §5.18) of bytes with element width `s`: `dst[i] = src[i] ^ src[i-s]`
/// for `i ≥ s`, `dst[i] = src[i]` below. On bytes, XOR of element `j` with element `j-1` is the
/// XOR of byte `i` with byte `i-s`, whatever the length.
///
/// # Panics
///
/// If `src` and `dst` differ in length, or if `s == 0`.
pub fn xor_encode(s: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len());
    assert!(s > 0, "XOR element width 0");
    xor_encode_from(s, src, dst, 0);
}

/// Reverses [`xor_encode`]: the running XOR `dst[i] = src[i] ^ dst[i-s]`.
///
/// # Panics
///
/// If `src` and `dst` differ in length, or if `s == 0`.
pub fn xor_decode(s: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len());
    assert!(s > 0, "XOR element width 0");
    xor_decode_from(s, src, dst, 0);
}

/// [`xor_encode`] of bytes `from..` only (the tail of the SIMD kernels).
pub(crate) fn xor_encode_from(s: usize, src: &[u8], dst: &mut [u8], from: usize) {
    let head = s.min(src.len()).max(from);
    dst[from..head].copy_from_slice(&src[from..head]);
    // Past `head` (when anything is left there) `head ≥ s`, so the subtraction is exact.
    for ((d, &cur), &prev) in dst[head..]
        .iter_mut()
        .zip(&src[head..])
        .zip(&src[head.saturating_sub(s)..])
    {
        *d = cur ^ prev;
    }
}

/// [`xor_decode`] of bytes `from..` only, `dst[..from]` being decoded already (the tail of the
/// SIMD kernels).
pub(crate) fn xor_decode_from(s: usize, src: &[u8], dst: &mut [u8], from: usize) {
    let head = s.min(src.len()).max(from);
    dst[from..head].copy_from_slice(&src[from..head]);
    for i in head..src.len() {
        dst[i] = src[i] ^ dst[i - s];
    }
}
