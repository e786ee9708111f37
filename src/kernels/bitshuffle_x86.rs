//! SSE2 and AVX2 bit transposition kernels (docs/FORMAT.md §5.14), bit for bit identical to
//! [`scalar::bitshuffle_block`] / [`scalar::bitunshuffle_block`], for element sizes 1, 2, 4
//! and 8 (other sizes use the scalar code).
//!
//! # Method
//!
//! With `N` elements transposed and `R = N/8` bytes per bit row, bit `k` of byte `b` of
//! element `i` goes to bit `i mod 8` of byte `⌊i/8⌋` of row `8b + k`.
//!
//! *Forward*, `E` elements at a time (`E = 16` for SSE2, `32` for AVX2): the `E·t` bytes are
//! byte-transposed in registers with the unpack network of the byte shuffle (one vector per
//! byte position `b`, lane-split for AVX2), then `movemask_epi8` collects the top bit of every
//! byte — bit 7 of byte `b` of the `E` elements, i.e. `E/8` bytes of row `8b + 7` — and adding
//! the vector to itself moves the next bit up, for rows `8b + 6`, …, `8b`. With `t = 1`, 128
//! (SSE2) or 256 (AVX2) elements at a time go through the mirror image of the reverse step
//! below instead. With AVX2, blocks of 4- and 8-byte elements are written to an L1-resident
//! stage and copied out whole, because the row stores of a step land on up to 64 lines.
//!
//! *Reverse*: one byte position `b` at a time, 128 (SSE2) or 256 (AVX2) bytes are rebuilt
//! from 16 or 32 bytes of each of the 8 rows `8b..8b+8`: three unpack rounds put byte `q` of
//! the 8 rows in one 64-bit lane, and an 8×8 bit transpose within each lane (three delta
//! swaps, as in the scalar `transpose8`) yields bytes `8q..8q+8`. They go to a scratch buffer
//! (byte `b` of a chunk of elements, contiguous) that the byte unshuffle of the same level
//! interleaves into elements. Short rows gather 2 or 4 bytes per row instead.
//!
//! Steps that do not divide `N` are re-run ending at `N` (they overlap the previous step and
//! rewrite identical bytes). Blocks with fewer elements than one step go to the narrower
//! kernel (AVX2 → SSE2 → scalar).

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::byteshuffle_x86::{
    load_block_avx2, rounds_avx2, rounds_sse2, unshuffle_pow2_avx2, unshuffle_pow2_sse2,
};
use super::{Dst, scalar};
use crate::mem::uninit::write_slice;
use std::mem::MaybeUninit;

// ---------------------------------------------------------------------------------------------
// SSE2
// ---------------------------------------------------------------------------------------------

/// SSE2 bitshuffle of one block, same contract as [`scalar::bitshuffle_block`].
///
/// # Safety
///
/// The CPU supports SSE2.
pub(super) unsafe fn bitshuffle_sse2(t: usize, src: &[u8], dst: &mut Dst) {
    assert_eq!(src.len(), dst.len());
    if !matches!(t, 1 | 2 | 4 | 8) {
        scalar::bitshuffle_block_uninit(t, src, dst);
        return;
    }
    let n = (src.len() / t) & !7;
    if n < 16 {
        scalar::bitshuffle_block_uninit(t, src, dst);
        return;
    }
    // SAFETY: the caller guarantees SSE2; n ≥ 16, n is a multiple of 8 and both slices hold
    // at least n·t bytes, as the body function requires.
    unsafe {
        match t {
            1 => bitshuffle_body_sse2::<1>(n, src, dst),
            2 => bitshuffle_body_sse2::<2>(n, src, dst),
            4 => bitshuffle_body_sse2::<4>(n, src, dst),
            _ => bitshuffle_body_sse2::<8>(n, src, dst),
        }
    }
    write_slice(&mut dst[n * t..], &src[n * t..]);
}

/// SSE2 bitunshuffle of one block, same contract as [`scalar::bitunshuffle_block`].
///
/// # Safety
///
/// The CPU supports SSE2.
pub(super) unsafe fn bitunshuffle_sse2(t: usize, src: &[u8], dst: &mut Dst) {
    assert_eq!(src.len(), dst.len());
    if !matches!(t, 1 | 2 | 4 | 8) {
        scalar::bitunshuffle_block_uninit(t, src, dst);
        return;
    }
    let n = (src.len() / t) & !7;
    if n < 16 {
        scalar::bitunshuffle_block_uninit(t, src, dst);
        return;
    }
    // SAFETY: the caller guarantees SSE2; n ≥ 16, n is a multiple of 8 and both slices hold
    // at least n·t bytes, as the body function requires.
    unsafe {
        match t {
            1 => bitunshuffle_body_sse2::<1>(n, src, dst),
            2 => bitunshuffle_body_sse2::<2>(n, src, dst),
            4 => bitunshuffle_body_sse2::<4>(n, src, dst),
            _ => bitunshuffle_body_sse2::<8>(n, src, dst),
        }
    }
    write_slice(&mut dst[n * t..], &src[n * t..]);
}

/// 8×8 bit transpose within each 64-bit lane (byte `j` bit `k` ↔ byte `k` bit `j`).
///
/// # Safety
///
/// The CPU supports SSE2.
#[inline]
#[target_feature(enable = "sse2")]
#[allow(unused_unsafe)] // the intrinsics are `unsafe fn` on toolchains before Rust 1.87
unsafe fn transpose8_sse2(x: __m128i) -> __m128i {
    // SAFETY: register-only SSE2 intrinsics; SSE2 is enabled on this function and the caller
    // guarantees that the CPU supports it.
    unsafe {
        let m = _mm_set1_epi64x(0x00AA_00AA_00AA_00AA);
        let t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64::<7>(x)), m);
        let x = _mm_xor_si128(_mm_xor_si128(x, t), _mm_slli_epi64::<7>(t));
        let m = _mm_set1_epi64x(0x0000_CCCC_0000_CCCC);
        let t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64::<14>(x)), m);
        let x = _mm_xor_si128(_mm_xor_si128(x, t), _mm_slli_epi64::<14>(t));
        let m = _mm_set1_epi64x(0x0000_0000_F0F0_F0F0);
        let t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64::<28>(x)), m);
        _mm_xor_si128(_mm_xor_si128(x, t), _mm_slli_epi64::<28>(t))
    }
}

/// Forward transposition of the first `n` elements.
///
/// # Safety
///
/// The CPU supports SSE2; `n ≥ 16` is a multiple of 8; `src` and `dst` hold at least `n·T`
/// bytes.
#[target_feature(enable = "sse2")]
unsafe fn bitshuffle_body_sse2<const T: usize>(n: usize, src: &[u8], dst: &mut Dst) {
    debug_assert!(n >= 16 && n.is_multiple_of(8) && src.len() >= n * T && dst.len() >= n * T);
    let r = n / 8;
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr().cast::<u8>());
    let mut i = 0;
    if T == 1 && n >= 128 {
        // Single bytes: the transpose-based step is faster than `movemask`.
        while i + 128 <= n {
            // SAFETY: i + 128 ≤ n and i is a multiple of 8, so the step reads src[i, i+128)
            // and writes 16 bytes at k·r + i/8 ≤ k·r + r − 16 of each row k < 8: all below
            // n. SSE2 per the caller.
            unsafe { bytes_to_bits_step128_sse2(sp, dp, r, i) };
            i += 128;
        }
        if i < n {
            // SAFETY: as above for the block n − 128 (a multiple of 8, ≥ 0); it rewrites
            // identical bytes.
            unsafe { bytes_to_bits_step128_sse2(sp, dp, r, n - 128) };
        }
        return;
    }
    while i + 16 <= n {
        // SAFETY: i + 16 ≤ n and i is a multiple of 8, so the step reads src[i·T, (i+16)·T)
        // and writes 2 bytes at row·r + i/8 ≤ row·r + r − 2 of each row < 8·T: all below
        // n·T. SSE2 per the caller.
        unsafe { bitshuffle_step_sse2::<T>(r, sp, dp, i) };
        i += 16;
    }
    if i < n {
        // SAFETY: as above for the block n − 16 (a multiple of 8, ≥ 0); it rewrites
        // identical bytes.
        unsafe { bitshuffle_step_sse2::<T>(r, sp, dp, n - 16) };
    }
}

/// Elements `i..i+16` (`i` a multiple of 8).
///
/// # Safety
///
/// The CPU supports SSE2; `src[i·T, (i+16)·T)` is readable and the 2 bytes at
/// `(8b+k)·r + i/8` of `dst` writable for every `b < T`, `k < 8`.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn bitshuffle_step_sse2<const T: usize>(r: usize, sp: *const u8, dp: *mut u8, i: usize) {
    // SAFETY: the ranges accessed are exactly those the caller guarantees; the row stores are
    // unaligned writes.
    unsafe {
        let mut v = [_mm_setzero_si128(); T];
        for (k, x) in v.iter_mut().enumerate() {
            *x = _mm_loadu_si128(sp.add(i * T + 16 * k).cast());
        }
        rounds_sse2(&mut v, 4);
        for (b, &x) in v.iter().enumerate() {
            let row0 = dp.add(8 * b * r + i / 8);
            let mut x = x;
            for k in (0..8).rev() {
                let m = _mm_movemask_epi8(x) as u16;
                row0.add(k * r).cast::<u16>().write_unaligned(m.to_le());
                x = _mm_add_epi8(x, x);
            }
        }
    }
}

/// Single-byte elements `i..i+128`, the mirror of [`bits_to_bytes_step128_sse2`]: an 8×8 bit
/// transpose per 64-bit lane turns bytes `8q..8q+8` into byte `q` of the 8 bit rows, and four
/// unpack rounds gather each row's 16 bytes into one vector.
///
/// # Safety
///
/// The CPU supports SSE2; `src[i, i + 128)` is readable and `rows + k·stride + [i/8, i/8 + 16)`
/// writable for `k < 8`.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn bytes_to_bits_step128_sse2(src: *const u8, rows: *mut u8, stride: usize, i: usize) {
    // SAFETY: the ranges accessed are exactly those the caller guarantees.
    unsafe {
        let mut v = [_mm_setzero_si128(); 8];
        for (m, x) in v.iter_mut().enumerate() {
            *x = transpose8_sse2(_mm_loadu_si128(src.add(i + 16 * m).cast()));
        }
        rounds_sse2(&mut v, 4);
        for (k, x) in v.iter().enumerate() {
            _mm_storeu_si128(rows.add(k * stride + i / 8).cast(), *x);
        }
    }
}

/// Reverse transposition of the first `n` elements, as in [`bitunshuffle_body_avx2`]: byte
/// positions rebuilt into a scratch buffer, then interleaved by the byte unshuffle.
///
/// # Safety
///
/// The CPU supports SSE2; `n ≥ 16` is a multiple of 8; `src` and `dst` hold at least `n·T`
/// bytes.
#[target_feature(enable = "sse2")]
unsafe fn bitunshuffle_body_sse2<const T: usize>(n: usize, src: &[u8], dst: &mut Dst) {
    debug_assert!(n >= 16 && n.is_multiple_of(8) && src.len() >= n * T && dst.len() >= n * T);
    let r = n / 8;
    let sp = src.as_ptr();
    if T == 1 {
        // SAFETY: rows k < 8 of r bytes lie in src[0, n); dst[0, n) is writable; n ≥ 16 is a
        // multiple of 8. SSE2 per the caller.
        unsafe { bits_to_bytes_sse2(sp, r, dst.as_mut_ptr().cast::<u8>(), n) };
        return;
    }
    const SCRATCH: usize = 8192;
    let chunk = SCRATCH / T; // 1024..4096 elements, a multiple of 128
    let cnt = chunk.min(n);
    let mut scratch = MaybeUninit::<[u8; SCRATCH]>::uninit();
    let tp = scratch.as_mut_ptr().cast::<u8>();
    let mut start = 0;
    loop {
        // The last chunk ends at n, overlapping the previous one (same bytes rewritten).
        let c0 = start.min(n - cnt);
        // SAFETY: SSE2 per the caller. c0 and cnt are multiples of 8 with c0 + cnt ≤ n and
        // cnt ≥ 16, so row 8b+k (b < T, k < 8) is read at byte offsets c0/8 .. (c0+cnt)/8 ≤ r,
        // inside src; scratch rows b·cnt .. (b+1)·cnt lie within its T·cnt ≤ SCRATCH bytes and
        // are all written before the slice over them is formed; dst[c0·T, (c0+cnt)·T) lies
        // within n·T.
        unsafe {
            for b in 0..T {
                bits_to_bytes_sse2(sp.add(8 * b * r + c0 / 8), r, tp.add(b * cnt), cnt);
            }
            let rows = std::slice::from_raw_parts(tp, T * cnt);
            unshuffle_pow2_sse2::<T>(cnt, rows, &mut dst[c0 * T..(c0 + cnt) * T]);
        }
        start = c0 + cnt;
        if start >= n {
            break;
        }
    }
}

/// Rebuilds `count` bytes at `out` from the 8 bit rows `rows + k·stride` (`k < 8`).
///
/// # Safety
///
/// The CPU supports SSE2; `count ≥ 16` is a multiple of 8; `rows + k·stride + [0, count/8)`
/// is readable for `k < 8` and `out[0, count)` writable.
#[target_feature(enable = "sse2")]
unsafe fn bits_to_bytes_sse2(rows: *const u8, stride: usize, out: *mut u8, count: usize) {
    debug_assert!(count >= 16 && count.is_multiple_of(8));
    // SAFETY (every step): the step at i (a multiple of 8) with i + 128 ≤ count, resp.
    // i + 16 ≤ count, reads row bytes [i/8, i/8 + 16), resp. [i/8, i/8 + 2), below count/8,
    // and writes out[i, i + 128), resp. out[i, i + 16): inside the caller's ranges. The last
    // step is re-run at count − 128 (resp. − 16), overlapping and rewriting the same bytes.
    unsafe {
        let mut i = 0;
        if count >= 128 {
            while i + 128 <= count {
                bits_to_bytes_step128_sse2(rows, stride, out, i);
                i += 128;
            }
            if i < count {
                bits_to_bytes_step128_sse2(rows, stride, out, count - 128);
            }
        } else {
            while i + 16 <= count {
                bits_to_bytes_step16_sse2(rows, stride, out, i);
                i += 16;
            }
            if i < count {
                bits_to_bytes_step16_sse2(rows, stride, out, count - 16);
            }
        }
    }
}

/// Bytes `i..i+128`: 16 bytes of each of the 8 rows, three unpack rounds (vector `m` then
/// holds byte `q = 2m + h` of the 8 rows in 64-bit lane `h`), and an 8×8 bit transpose per
/// lane, giving bytes `16m..16m+16`.
///
/// # Safety
///
/// The CPU supports SSE2; `rows + k·stride + [i/8, i/8 + 16)` is readable for `k < 8` and
/// `out[i, i + 128)` writable.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn bits_to_bytes_step128_sse2(rows: *const u8, stride: usize, out: *mut u8, i: usize) {
    // SAFETY: the ranges accessed are exactly those the caller guarantees.
    unsafe {
        let mut v = [_mm_setzero_si128(); 8];
        for (k, x) in v.iter_mut().enumerate() {
            *x = _mm_loadu_si128(rows.add(k * stride + i / 8).cast());
        }
        rounds_sse2(&mut v, 3);
        for (m, x) in v.iter().enumerate() {
            _mm_storeu_si128(out.add(i + 16 * m).cast(), transpose8_sse2(*x));
        }
    }
}

/// Bytes `i..i+16`: 2 bytes of each of the 8 rows gathered so that 64-bit lane `q` holds byte
/// `q` of the 8 rows, then an 8×8 bit transpose per lane.
///
/// # Safety
///
/// The CPU supports SSE2; `rows + k·stride + [i/8, i/8 + 2)` is readable for `k < 8` and
/// `out[i, i + 16)` writable.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn bits_to_bytes_step16_sse2(rows: *const u8, stride: usize, out: *mut u8, i: usize) {
    // SAFETY: the ranges accessed are exactly those the caller guarantees; the row loads are
    // unaligned reads.
    unsafe {
        let row0 = rows.add(i / 8);
        let g = |k: usize| u16::from_le(row0.add(k * stride).cast::<u16>().read_unaligned()) as i16;
        // Word k = bytes q = 0, 1 of row k.
        let w = _mm_setr_epi16(g(0), g(1), g(2), g(3), g(4), g(5), g(6), g(7));
        // Lane q = byte q of rows 0..8.
        let low_bytes = _mm_set1_epi16(0x00FF);
        let lanes = _mm_packus_epi16(_mm_and_si128(w, low_bytes), _mm_srli_epi16::<8>(w));
        _mm_storeu_si128(out.add(i).cast(), transpose8_sse2(lanes));
    }
}

// ---------------------------------------------------------------------------------------------
// AVX2
// ---------------------------------------------------------------------------------------------

/// AVX2 bitshuffle of one block, same contract as [`scalar::bitshuffle_block`]. Blocks of
/// fewer than 32 elements go to the SSE2 kernel.
///
/// # Safety
///
/// The CPU supports AVX2 and SSE2.
pub(super) unsafe fn bitshuffle_avx2(t: usize, src: &[u8], dst: &mut Dst) {
    assert_eq!(src.len(), dst.len());
    if !matches!(t, 1 | 2 | 4 | 8) {
        scalar::bitshuffle_block_uninit(t, src, dst);
        return;
    }
    let n = (src.len() / t) & !7;
    if n < 32 {
        // SAFETY: the caller guarantees SSE2.
        unsafe { bitshuffle_sse2(t, src, dst) };
        return;
    }
    let bytes = n * t;
    if t >= 4 && bytes <= STAGE_BYTES {
        // The row steps scatter 4-byte stores over 8·t rows at once; into a destination that
        // is not in cache (a fresh output tile) they miss on up to 64 lines at a time. They go
        // to an L1-resident stage instead, copied out in whole lines: 1.2–1.7× for t = 8 and
        // 1.3× for t = 4 on fresh 1 MiB outputs (interleaved A/B, Zen 3); no gain for t = 2.
        let mut stage = MaybeUninit::<[u8; STAGE_BYTES]>::uninit();
        let stage = stage.as_mut_ptr().cast::<u8>();
        // SAFETY: AVX2 per the caller; the stage holds bytes ≥ n·t writable bytes. The body
        // writes every byte of stage[0, n·t) (each row byte belongs to one step), so the slice
        // formed over them afterwards is initialised.
        unsafe {
            bitshuffle_body_dispatch_avx2(t, n, src, stage);
            write_slice(&mut dst[..bytes], std::slice::from_raw_parts(stage, bytes));
        }
    } else {
        // SAFETY: AVX2 per the caller; dst holds n·t writable bytes.
        unsafe { bitshuffle_body_dispatch_avx2(t, n, src, dst.as_mut_ptr().cast::<u8>()) };
    }
    write_slice(&mut dst[bytes..], &src[bytes..]);
}

/// Bytes of the stage [`bitshuffle_avx2`] writes a block into: one bitshuffle block.
const STAGE_BYTES: usize = 8192;

/// [`bitshuffle_body_avx2`] for element size `t` (1, 2, 4 or 8).
///
/// # Safety
///
/// As for [`bitshuffle_body_avx2`].
#[inline]
unsafe fn bitshuffle_body_dispatch_avx2(t: usize, n: usize, src: &[u8], dp: *mut u8) {
    // SAFETY: the caller's contract is the body's.
    unsafe {
        match t {
            1 => bitshuffle_body_avx2::<1>(n, src, dp),
            2 => bitshuffle_body_avx2::<2>(n, src, dp),
            4 => bitshuffle_body_avx2::<4>(n, src, dp),
            _ => bitshuffle_body_avx2::<8>(n, src, dp),
        }
    }
}

/// AVX2 bitunshuffle of one block, same contract as [`scalar::bitunshuffle_block`]. Blocks of
/// fewer than 32 elements go to the SSE2 kernel.
///
/// # Safety
///
/// The CPU supports AVX2 and SSE2.
pub(super) unsafe fn bitunshuffle_avx2(t: usize, src: &[u8], dst: &mut Dst) {
    assert_eq!(src.len(), dst.len());
    if !matches!(t, 1 | 2 | 4 | 8) {
        scalar::bitunshuffle_block_uninit(t, src, dst);
        return;
    }
    let n = (src.len() / t) & !7;
    if n < 32 {
        // SAFETY: the caller guarantees SSE2.
        unsafe { bitunshuffle_sse2(t, src, dst) };
        return;
    }
    // SAFETY: the caller guarantees AVX2; n ≥ 32, n is a multiple of 8 and both slices hold
    // at least n·t bytes, as the body function requires.
    unsafe {
        match t {
            1 => bitunshuffle_body_avx2::<1>(n, src, dst),
            2 => bitunshuffle_body_avx2::<2>(n, src, dst),
            4 => bitunshuffle_body_avx2::<4>(n, src, dst),
            _ => bitunshuffle_body_avx2::<8>(n, src, dst),
        }
    }
    write_slice(&mut dst[n * t..], &src[n * t..]);
}

/// 8×8 bit transpose within each 64-bit lane (byte `j` bit `k` ↔ byte `k` bit `j`).
///
/// # Safety
///
/// The CPU supports AVX2.
#[inline]
#[target_feature(enable = "avx2")]
#[allow(unused_unsafe)] // the intrinsics are `unsafe fn` on toolchains before Rust 1.87
unsafe fn transpose8_avx2(x: __m256i) -> __m256i {
    // SAFETY: register-only AVX2 intrinsics; AVX2 is enabled on this function and the caller
    // guarantees that the CPU supports it.
    unsafe {
        let m = _mm256_set1_epi64x(0x00AA_00AA_00AA_00AA);
        let t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64::<7>(x)), m);
        let x = _mm256_xor_si256(_mm256_xor_si256(x, t), _mm256_slli_epi64::<7>(t));
        let m = _mm256_set1_epi64x(0x0000_CCCC_0000_CCCC);
        let t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64::<14>(x)), m);
        let x = _mm256_xor_si256(_mm256_xor_si256(x, t), _mm256_slli_epi64::<14>(t));
        let m = _mm256_set1_epi64x(0x0000_0000_F0F0_F0F0);
        let t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64::<28>(x)), m);
        _mm256_xor_si256(_mm256_xor_si256(x, t), _mm256_slli_epi64::<28>(t))
    }
}

/// Forward transposition of the first `n` elements.
///
/// # Safety
///
/// The CPU supports AVX2; `n ≥ 32` is a multiple of 8; `src` holds at least `n·T` bytes and
/// `dp[0, n·T)` is writable (it may be uninitialised: every byte of it is written).
#[target_feature(enable = "avx2")]
unsafe fn bitshuffle_body_avx2<const T: usize>(n: usize, src: &[u8], dp: *mut u8) {
    debug_assert!(n >= 32 && n.is_multiple_of(8) && src.len() >= n * T);
    let r = n / 8;
    let sp = src.as_ptr();
    let mut i = 0;
    if T == 1 && n >= 256 {
        // Single bytes: the transpose-based step is a little faster than `movemask`.
        while i + 256 <= n {
            // SAFETY: i + 256 ≤ n and i is a multiple of 8, so the step reads src[i, i+256)
            // and writes 32 bytes at k·r + i/8 ≤ k·r + r − 32 of each row k < 8: all below
            // n. AVX2 per the caller.
            unsafe { bytes_to_bits_step256_avx2(sp, dp, r, i) };
            i += 256;
        }
        if i < n {
            // SAFETY: as above for the block n − 256 (a multiple of 8, ≥ 0); it rewrites
            // identical bytes.
            unsafe { bytes_to_bits_step256_avx2(sp, dp, r, n - 256) };
        }
        return;
    }
    while i + 32 <= n {
        // SAFETY: i + 32 ≤ n and i is a multiple of 8, so the step reads src[i·T, (i+32)·T)
        // and writes 4 bytes at row·r + i/8 ≤ row·r + r − 4 of each row < 8·T: all below
        // n·T. AVX2 per the caller.
        unsafe { bitshuffle_step_avx2::<T>(r, sp, dp, i) };
        i += 32;
    }
    if i < n {
        // SAFETY: as above for the block n − 32 (a multiple of 8, ≥ 0); it rewrites
        // identical bytes.
        unsafe { bitshuffle_step_avx2::<T>(r, sp, dp, n - 32) };
    }
}

/// Elements `i..i+32` (`i` a multiple of 8).
///
/// # Safety
///
/// The CPU supports AVX2; `src[i·T, (i+32)·T)` is readable and the 4 bytes at
/// `(8b+k)·r + i/8` of `dst` writable for every `b < T`, `k < 8`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn bitshuffle_step_avx2<const T: usize>(r: usize, sp: *const u8, dp: *mut u8, i: usize) {
    // SAFETY: the ranges accessed are exactly those the caller guarantees; the row stores are
    // unaligned writes.
    unsafe {
        let mut v = [_mm256_setzero_si256(); T];
        if T == 1 {
            v[0] = _mm256_loadu_si256(sp.add(i).cast());
        } else {
            v = load_block_avx2::<T>(sp.add(i * T));
            rounds_avx2(&mut v, 4);
        }
        for (b, &x) in v.iter().enumerate() {
            let row0 = dp.add(8 * b * r + i / 8);
            let mut x = x;
            for k in (0..8).rev() {
                let m = _mm256_movemask_epi8(x) as u32;
                row0.add(k * r).cast::<u32>().write_unaligned(m.to_le());
                x = _mm256_add_epi8(x, x);
            }
        }
    }
}

/// Reverse transposition of the first `n` elements. `T = 1` is rebuilt directly from the 8
/// bit rows; for larger `T`, chunks of elements are rebuilt one byte position at a time into
/// a scratch buffer (byte `b` of every element of the chunk, contiguous), which the byte
/// unshuffle then interleaves into elements.
///
/// # Safety
///
/// The CPU supports AVX2; `n ≥ 32` is a multiple of 8; `src` and `dst` hold at least `n·T`
/// bytes.
#[target_feature(enable = "avx2")]
unsafe fn bitunshuffle_body_avx2<const T: usize>(n: usize, src: &[u8], dst: &mut Dst) {
    debug_assert!(n >= 32 && n.is_multiple_of(8) && src.len() >= n * T && dst.len() >= n * T);
    let r = n / 8;
    let sp = src.as_ptr();
    if T == 1 {
        // SAFETY: rows k < 8 of r bytes lie in src[0, n); dst[0, n) is writable; n ≥ 32 is a
        // multiple of 8. AVX2 per the caller.
        unsafe { bits_to_bytes_avx2(sp, r, dst.as_mut_ptr().cast::<u8>(), n) };
        return;
    }
    const SCRATCH: usize = 8192;
    let chunk = SCRATCH / T; // 1024..4096 elements, a multiple of 256
    let cnt = chunk.min(n);
    let mut scratch = MaybeUninit::<[u8; SCRATCH]>::uninit();
    let tp = scratch.as_mut_ptr().cast::<u8>();
    let mut start = 0;
    loop {
        // The last chunk ends at n, overlapping the previous one (same bytes rewritten).
        let c0 = start.min(n - cnt);
        // SAFETY: AVX2 per the caller. c0 and cnt are multiples of 8 with c0 + cnt ≤ n and
        // cnt ≥ 32, so row 8b+k (b < T, k < 8) is read at byte offsets c0/8 .. (c0+cnt)/8 ≤ r,
        // inside src; scratch rows b·cnt .. (b+1)·cnt lie within its T·cnt ≤ SCRATCH bytes and
        // are all written before the slice over them is formed; dst[c0·T, (c0+cnt)·T) lies
        // within n·T.
        unsafe {
            for b in 0..T {
                bits_to_bytes_avx2(sp.add(8 * b * r + c0 / 8), r, tp.add(b * cnt), cnt);
            }
            let rows = std::slice::from_raw_parts(tp, T * cnt);
            unshuffle_pow2_avx2::<T>(cnt, rows, &mut dst[c0 * T..(c0 + cnt) * T]);
        }
        start = c0 + cnt;
        if start >= n {
            break;
        }
    }
}

/// Rebuilds `count` bytes at `out` from the 8 bit rows `rows + k·stride` (`k < 8`; row `k`
/// holds bit `k` of byte `i` at bit `i mod 8` of its byte `⌊i/8⌋`).
///
/// # Safety
///
/// The CPU supports AVX2; `count ≥ 32` is a multiple of 8; `rows + k·stride + [0, count/8)`
/// is readable for `k < 8` and `out[0, count)` writable.
#[target_feature(enable = "avx2")]
unsafe fn bits_to_bytes_avx2(rows: *const u8, stride: usize, out: *mut u8, count: usize) {
    debug_assert!(count >= 32 && count.is_multiple_of(8));
    // SAFETY (every step): the step at i (a multiple of 8) with i + 256 ≤ count, resp.
    // i + 32 ≤ count, reads row bytes [i/8, i/8 + 32), resp. [i/8, i/8 + 4), below count/8,
    // and writes out[i, i + 256), resp. out[i, i + 32): inside the caller's ranges. The last
    // step is re-run at count − 256 (resp. − 32), overlapping and rewriting the same bytes.
    unsafe {
        let mut i = 0;
        if count >= 256 {
            while i + 256 <= count {
                bits_to_bytes_step256_avx2(rows, stride, out, i);
                i += 256;
            }
            if i < count {
                bits_to_bytes_step256_avx2(rows, stride, out, count - 256);
            }
        } else {
            while i + 32 <= count {
                bits_to_bytes_step32_avx2(rows, stride, out, i);
                i += 32;
            }
            if i < count {
                bits_to_bytes_step32_avx2(rows, stride, out, count - 32);
            }
        }
    }
}

/// Bytes `i..i+256`: 32 bytes of each of the 8 rows, three in-lane unpack rounds (vector `m`
/// then holds, in 64-bit lane `h` of 128-bit lane `l`, byte `q = 16l + 2m + h` of the 8 rows),
/// an 8×8 bit transpose per 64-bit lane (giving bytes `8q..8q+8`), and lane permutes to store
/// 32 contiguous bytes at a time.
///
/// # Safety
///
/// The CPU supports AVX2; `rows + k·stride + [i/8, i/8 + 32)` is readable for `k < 8` and
/// `out[i, i + 256)` writable.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn bits_to_bytes_step256_avx2(rows: *const u8, stride: usize, out: *mut u8, i: usize) {
    // SAFETY: the ranges accessed are exactly those the caller guarantees.
    unsafe {
        let mut v = [_mm256_setzero_si256(); 8];
        for (k, x) in v.iter_mut().enumerate() {
            *x = _mm256_loadu_si256(rows.add(k * stride + i / 8).cast());
        }
        rounds_avx2(&mut v, 3);
        for x in v.iter_mut() {
            *x = transpose8_avx2(*x);
        }
        // Vector m: bytes 16m..16m+16 (low lane) and 128+16m..128+16m+16 (high lane).
        for p in 0..4 {
            let lo = _mm256_permute2x128_si256::<0x20>(v[2 * p], v[2 * p + 1]);
            let hi = _mm256_permute2x128_si256::<0x31>(v[2 * p], v[2 * p + 1]);
            _mm256_storeu_si256(out.add(i + 32 * p).cast(), lo);
            _mm256_storeu_si256(out.add(i + 128 + 32 * p).cast(), hi);
        }
    }
}

/// Bytes `i..i+32`: 4 bytes of each of the 8 rows gathered so that 64-bit lane `q` holds byte
/// `q` of the 8 rows, then an 8×8 bit transpose per lane.
///
/// # Safety
///
/// The CPU supports AVX2; `rows + k·stride + [i/8, i/8 + 4)` is readable for `k < 8` and
/// `out[i, i + 32)` writable.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn bits_to_bytes_step32_avx2(rows: *const u8, stride: usize, out: *mut u8, i: usize) {
    // SAFETY: the ranges accessed are exactly those the caller guarantees; the row loads are
    // unaligned reads.
    unsafe {
        // Within each 128-bit lane: dword a = byte a of the lane's 4 rows.
        let by_byte = _mm256_setr_epi8(
            0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, //
            0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
        );
        // Qword q = (byte q of rows 0..4, byte q of rows 4..8).
        let pair = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        let row0 = rows.add(i / 8);
        let g = |k: usize| u32::from_le(row0.add(k * stride).cast::<u32>().read_unaligned()) as i32;
        // Dword k = bytes 0..4 of row k.
        let w = _mm256_setr_epi32(g(0), g(1), g(2), g(3), g(4), g(5), g(6), g(7));
        let lanes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(w, by_byte), pair);
        _mm256_storeu_si256(out.add(i).cast(), transpose8_avx2(lanes));
    }
}

/// Single-byte elements `i..i+256`, the mirror of [`bits_to_bytes_step256_avx2`]: lane
/// permutes put bytes `8q..8q+8` with `q = 16l + 2m + h` in 64-bit lane `h` of 128-bit lane
/// `l` of vector `m`, an 8×8 bit transpose per 64-bit lane turns them into byte `q` of the 8
/// bit rows, and four in-lane unpack rounds gather each row's 32 bytes into one vector.
///
/// # Safety
///
/// The CPU supports AVX2; `src[i, i + 256)` is readable and `rows + k·stride + [i/8, i/8 + 32)`
/// writable for `k < 8`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn bytes_to_bits_step256_avx2(src: *const u8, rows: *mut u8, stride: usize, i: usize) {
    // SAFETY: the ranges accessed are exactly those the caller guarantees.
    unsafe {
        let mut a = [_mm256_setzero_si256(); 8];
        for (p, x) in a.iter_mut().enumerate() {
            *x = _mm256_loadu_si256(src.add(i + 32 * p).cast());
        }
        let mut v = [_mm256_setzero_si256(); 8];
        for p in 0..4 {
            v[2 * p] = transpose8_avx2(_mm256_permute2x128_si256::<0x20>(a[p], a[4 + p]));
            v[2 * p + 1] = transpose8_avx2(_mm256_permute2x128_si256::<0x31>(a[p], a[4 + p]));
        }
        rounds_avx2(&mut v, 4);
        for (k, x) in v.iter().enumerate() {
            _mm256_storeu_si256(rows.add(k * stride + i / 8).cast(), *x);
        }
    }
}
