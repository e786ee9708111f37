//! Portable scalar kernels: the reference every SIMD kernel is tested against, and the fallback
//! on CPUs (and targets) without SIMD support.
//!
//! The public functions write initialised slices; the `*_uninit` ones, which the kernel tables
//! hold, write destinations that may not be initialised yet ([`Dst`]), every byte of them.

use super::Dst;
use crate::mem::uninit::{as_uninit_mut, write_slice};

/// Byte shuffle (docs/FORMAT.md §5.15): `dst[j·n + i] = src[i·t + j]` with `n = ⌊len/t⌋`, the
/// `len mod t` trailing bytes copied. `t ≤ 1` is the identity.
///
/// # Panics
///
/// If `src` and `dst` differ in length.
pub fn shuffle(t: usize, src: &[u8], dst: &mut [u8]) {
    // SAFETY: the kernel writes only initialised bytes into `dst`.
    shuffle_uninit(t, src, unsafe { as_uninit_mut(dst) });
}

/// [`shuffle`] into a destination that may not be initialised yet (it writes every byte).
pub(crate) fn shuffle_uninit(t: usize, src: &[u8], dst: &mut Dst) {
    assert_eq!(src.len(), dst.len());
    let n = if t > 1 { src.len() / t } else { 0 };
    if n == 0 {
        write_slice(dst, src);
        return;
    }
    let body = n * t;
    match t {
        2 => shuffle_fixed::<2>(&src[..body], &mut dst[..body]),
        4 => shuffle_fixed::<4>(&src[..body], &mut dst[..body]),
        8 => shuffle_fixed::<8>(&src[..body], &mut dst[..body]),
        _ => shuffle_elements(t, n, src, dst, 0, n),
    }
    write_slice(&mut dst[body..], &src[body..]);
}

/// Reverses [`shuffle`].
///
/// # Panics
///
/// If `src` and `dst` differ in length.
pub fn unshuffle(t: usize, src: &[u8], dst: &mut [u8]) {
    // SAFETY: the kernel writes only initialised bytes into `dst`.
    unshuffle_uninit(t, src, unsafe { as_uninit_mut(dst) });
}

/// [`unshuffle`] into a destination that may not be initialised yet (it writes every byte).
pub(crate) fn unshuffle_uninit(t: usize, src: &[u8], dst: &mut Dst) {
    assert_eq!(src.len(), dst.len());
    let n = if t > 1 { src.len() / t } else { 0 };
    if n == 0 {
        write_slice(dst, src);
        return;
    }
    let body = n * t;
    match t {
        2 => unshuffle_fixed::<2>(&src[..body], &mut dst[..body]),
        4 => unshuffle_fixed::<4>(&src[..body], &mut dst[..body]),
        8 => unshuffle_fixed::<8>(&src[..body], &mut dst[..body]),
        _ => unshuffle_elements(t, n, src, dst, 0, n),
    }
    write_slice(&mut dst[body..], &src[body..]);
}

/// The shuffle of elements `i0..i1` only, for a part of `n` elements of `t` bytes (the tail of
/// the SIMD kernels).
pub(crate) fn shuffle_elements(
    t: usize,
    n: usize,
    src: &[u8],
    dst: &mut Dst,
    i0: usize,
    i1: usize,
) {
    for i in i0..i1 {
        for (j, &b) in src[i * t..(i + 1) * t].iter().enumerate() {
            dst[j * n + i].write(b);
        }
    }
}

/// The unshuffle of elements `i0..i1` only (see [`shuffle_elements`]).
pub(crate) fn unshuffle_elements(
    t: usize,
    n: usize,
    src: &[u8],
    dst: &mut Dst,
    i0: usize,
    i1: usize,
) {
    for i in i0..i1 {
        for (j, b) in dst[i * t..(i + 1) * t].iter_mut().enumerate() {
            b.write(src[j * n + i]);
        }
    }
}

fn shuffle_fixed<const T: usize>(src: &[u8], dst: &mut Dst) {
    let n = src.len() / T;
    for j in 0..T {
        let row = &mut dst[j * n..(j + 1) * n];
        for (d, elem) in row.iter_mut().zip(src.chunks_exact(T)) {
            d.write(elem[j]);
        }
    }
}

fn unshuffle_fixed<const T: usize>(src: &[u8], dst: &mut Dst) {
    let n = src.len() / T;
    for (i, elem) in dst.chunks_exact_mut(T).enumerate() {
        let mut e = [0u8; T];
        for (j, b) in e.iter_mut().enumerate() {
            *b = src[j * n + i];
        }
        write_slice(elem, &e);
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

/// blosc2_bitshuffle of one block (docs/FORMAT.md §5.14): the first `N` elements (N = ⌊len/t⌋
/// rounded down to a multiple of 8) are bit-transposed, the remaining bytes copied.
///
/// # Panics
///
/// If `src` and `dst` differ in length, or if `t == 0`.
pub fn bitshuffle_block(t: usize, src: &[u8], dst: &mut [u8]) {
    // SAFETY: the kernel writes only initialised bytes into `dst`.
    bitshuffle_block_uninit(t, src, unsafe { as_uninit_mut(dst) });
}

/// [`bitshuffle_block`] into a destination that may not be initialised yet (it writes every byte).
pub(crate) fn bitshuffle_block_uninit(t: usize, src: &[u8], dst: &mut Dst) {
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
                dst[(8 * b + k) * r + g].write(y[k]);
            }
        }
    }
    write_slice(&mut dst[n * t..], &src[n * t..]);
}

/// Reverses [`bitshuffle_block`].
///
/// # Panics
///
/// If `src` and `dst` differ in length, or if `t == 0`.
pub fn bitunshuffle_block(t: usize, src: &[u8], dst: &mut [u8]) {
    // SAFETY: the kernel writes only initialised bytes into `dst`.
    bitunshuffle_block_uninit(t, src, unsafe { as_uninit_mut(dst) });
}

/// [`bitunshuffle_block`] into a destination that may not be initialised yet (it writes every byte).
pub(crate) fn bitunshuffle_block_uninit(t: usize, src: &[u8], dst: &mut Dst) {
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
                dst[(8 * g + j) * t + b].write(y[j]);
            }
        }
    }
    write_slice(&mut dst[n * t..], &src[n * t..]);
}

/// XOR encoding (docs/FORMAT.md §5.18) of bytes with element width `s`: `dst[i] = src[i] ^
/// src[i-s]`
/// for `i ≥ s`, `dst[i] = src[i]` below. On bytes, XOR of element `j` with element `j-1` is the
/// XOR of byte `i` with byte `i-s`, whatever the length.
///
/// # Panics
///
/// If `src` and `dst` differ in length, or if `s == 0`.
pub fn xor_encode(s: usize, src: &[u8], dst: &mut [u8]) {
    // SAFETY: the kernel writes only initialised bytes into `dst`.
    xor_encode_uninit(s, src, unsafe { as_uninit_mut(dst) });
}

/// [`xor_encode`] into a destination that may not be initialised yet (it writes every byte).
pub(crate) fn xor_encode_uninit(s: usize, src: &[u8], dst: &mut Dst) {
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
    // SAFETY: the kernel writes only initialised bytes into `dst`.
    xor_decode_uninit(s, src, unsafe { as_uninit_mut(dst) });
}

/// [`xor_decode`] into a destination that may not be initialised yet (it writes every byte).
pub(crate) fn xor_decode_uninit(s: usize, src: &[u8], dst: &mut Dst) {
    assert_eq!(src.len(), dst.len());
    assert!(s > 0, "XOR element width 0");
    // SAFETY: `from` is 0: there is no decoded prefix to rely on.
    unsafe { xor_decode_from(s, src, dst, 0) };
}

/// [`xor_encode`] of bytes `from..` only (the tail of the SIMD kernels).
pub(crate) fn xor_encode_from(s: usize, src: &[u8], dst: &mut Dst, from: usize) {
    let head = s.min(src.len()).max(from);
    write_slice(&mut dst[from..head], &src[from..head]);
    // Past `head` (when anything is left there) `head ≥ s`, so the subtraction is exact.
    for ((d, &cur), &prev) in dst[head..]
        .iter_mut()
        .zip(&src[head..])
        .zip(&src[head.saturating_sub(s)..])
    {
        d.write(cur ^ prev);
    }
}

/// [`xor_decode`] of bytes `from..` only, `dst[..from]` being decoded already (the tail of the
/// SIMD kernels).
///
/// # Safety
///
/// `dst[..from]` has been written.
pub(crate) unsafe fn xor_decode_from(s: usize, src: &[u8], dst: &mut Dst, from: usize) {
    let head = s.min(src.len()).max(from);
    write_slice(&mut dst[from..head], &src[from..head]);
    for i in head..src.len() {
        // SAFETY: `i - s < i` was written: below `from` by the caller (this function's
        // contract), from `from` on by this function (the copy above, or an earlier turn).
        let prev = unsafe { dst[i - s].assume_init() };
        dst[i].write(src[i] ^ prev);
    }
}
