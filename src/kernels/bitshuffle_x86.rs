//! SSE2 and AVX2 bit transposition kernels (FORMAT.md §5.14), bit for bit identical to
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
//! the vector to itself moves the next bit up, for rows `8b + 6`, …, `8b`.
//!
//! *Reverse*: for each byte position `b`, the `E/8` bytes at offset `i/8` of the 8 rows
//! `8b..8b+8` are gathered and arranged so that each 64-bit lane holds byte `q` of all 8 rows;
//! an 8×8 bit transpose within each lane (three delta swaps, as in the scalar `transpose8`)
//! yields byte `b` of the `E` elements; the byte shuffle network then interleaves the `t`
//! vectors back into elements.
//!
//! Blocks step by `E` elements; when `N` is not a multiple of `E`, the last block is re-run at
//! `N − E` (it overlaps and rewrites identical bytes). Blocks with `N < E` go to the narrower
//! kernel (AVX2 → SSE2 → scalar).

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::byteshuffle_x86::{load_block_avx2, rounds_avx2, rounds_sse2, store_block_avx2};
use super::scalar;

// ---------------------------------------------------------------------------------------------
// SSE2
// ---------------------------------------------------------------------------------------------

/// SSE2 bitshuffle of one block, same contract as [`scalar::bitshuffle_block`].
///
/// # Safety
///
/// The CPU supports SSE2.
pub(super) unsafe fn bitshuffle_sse2(t: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len());
    if !matches!(t, 1 | 2 | 4 | 8) {
        scalar::bitshuffle_block(t, src, dst);
        return;
    }
    let n = (src.len() / t) & !7;
    if n < 16 {
        scalar::bitshuffle_block(t, src, dst);
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
    dst[n * t..].copy_from_slice(&src[n * t..]);
}

/// SSE2 bitunshuffle of one block, same contract as [`scalar::bitunshuffle_block`].
///
/// # Safety
///
/// The CPU supports SSE2.
pub(super) unsafe fn bitunshuffle_sse2(t: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len());
    if !matches!(t, 1 | 2 | 4 | 8) {
        scalar::bitunshuffle_block(t, src, dst);
        return;
    }
    let n = (src.len() / t) & !7;
    if n < 16 {
        scalar::bitunshuffle_block(t, src, dst);
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
    dst[n * t..].copy_from_slice(&src[n * t..]);
}

/// 8×8 bit transpose within each 64-bit lane (byte `j` bit `k` ↔ byte `k` bit `j`).
///
/// # Safety
///
/// The CPU supports SSE2.
#[inline]
#[target_feature(enable = "sse2")]
#[allow(unused_unsafe)] // the intrinsics are `unsafe fn` on older toolchains (MSRV 1.85)
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
unsafe fn bitshuffle_body_sse2<const T: usize>(n: usize, src: &[u8], dst: &mut [u8]) {
    debug_assert!(n >= 16 && n % 8 == 0 && src.len() >= n * T && dst.len() >= n * T);
    let r = n / 8;
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr());
    let mut i = 0;
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

/// Reverse transposition of the first `n` elements.
///
/// # Safety
///
/// The CPU supports SSE2; `n ≥ 16` is a multiple of 8; `src` and `dst` hold at least `n·T`
/// bytes.
#[target_feature(enable = "sse2")]
unsafe fn bitunshuffle_body_sse2<const T: usize>(n: usize, src: &[u8], dst: &mut [u8]) {
    debug_assert!(n >= 16 && n % 8 == 0 && src.len() >= n * T && dst.len() >= n * T);
    let r = n / 8;
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr());
    let mut i = 0;
    while i + 16 <= n {
        // SAFETY: i + 16 ≤ n and i is a multiple of 8, so the step reads 2 bytes at
        // row·r + i/8 ≤ row·r + r − 2 of each row < 8·T and writes dst[i·T, (i+16)·T): all
        // below n·T. SSE2 per the caller.
        unsafe { bitunshuffle_step_sse2::<T>(r, sp, dp, i) };
        i += 16;
    }
    if i < n {
        // SAFETY: as above for the block n − 16; it rewrites identical bytes.
        unsafe { bitunshuffle_step_sse2::<T>(r, sp, dp, n - 16) };
    }
}

/// Elements `i..i+16` (`i` a multiple of 8).
///
/// # Safety
///
/// The CPU supports SSE2; the 2 bytes at `(8b+k)·r + i/8` of `src` are readable for every
/// `b < T`, `k < 8`, and `dst[i·T, (i+16)·T)` is writable.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn bitunshuffle_step_sse2<const T: usize>(r: usize, sp: *const u8, dp: *mut u8, i: usize) {
    // SAFETY: the ranges accessed are exactly those the caller guarantees; the row loads are
    // unaligned reads.
    unsafe {
        let low_bytes = _mm_set1_epi16(0x00FF);
        let mut v = [_mm_setzero_si128(); T];
        for (b, x) in v.iter_mut().enumerate() {
            let row0 = sp.add(8 * b * r + i / 8);
            let g = |k: usize| u16::from_le(row0.add(k * r).cast::<u16>().read_unaligned()) as i16;
            // Word k = bytes q = 0, 1 of row k.
            let w = _mm_setr_epi16(g(0), g(1), g(2), g(3), g(4), g(5), g(6), g(7));
            // Lane q = byte q of rows 0..8.
            let lanes = _mm_packus_epi16(_mm_and_si128(w, low_bytes), _mm_srli_epi16::<8>(w));
            *x = transpose8_sse2(lanes);
        }
        rounds_sse2(&mut v, T.trailing_zeros());
        for (k, x) in v.iter().enumerate() {
            _mm_storeu_si128(dp.add(i * T + 16 * k).cast(), *x);
        }
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
pub(super) unsafe fn bitshuffle_avx2(t: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len());
    if !matches!(t, 1 | 2 | 4 | 8) {
        scalar::bitshuffle_block(t, src, dst);
        return;
    }
    let n = (src.len() / t) & !7;
    if n < 32 {
        // SAFETY: the caller guarantees SSE2.
        unsafe { bitshuffle_sse2(t, src, dst) };
        return;
    }
    // SAFETY: the caller guarantees AVX2; n ≥ 32, n is a multiple of 8 and both slices hold
    // at least n·t bytes, as the body function requires.
    unsafe {
        match t {
            1 => bitshuffle_body_avx2::<1>(n, src, dst),
            2 => bitshuffle_body_avx2::<2>(n, src, dst),
            4 => bitshuffle_body_avx2::<4>(n, src, dst),
            _ => bitshuffle_body_avx2::<8>(n, src, dst),
        }
    }
    dst[n * t..].copy_from_slice(&src[n * t..]);
}

/// AVX2 bitunshuffle of one block, same contract as [`scalar::bitunshuffle_block`]. Blocks of
/// fewer than 32 elements go to the SSE2 kernel.
///
/// # Safety
///
/// The CPU supports AVX2 and SSE2.
pub(super) unsafe fn bitunshuffle_avx2(t: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len());
    if !matches!(t, 1 | 2 | 4 | 8) {
        scalar::bitunshuffle_block(t, src, dst);
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
    dst[n * t..].copy_from_slice(&src[n * t..]);
}

/// 8×8 bit transpose within each 64-bit lane (byte `j` bit `k` ↔ byte `k` bit `j`).
///
/// # Safety
///
/// The CPU supports AVX2.
#[inline]
#[target_feature(enable = "avx2")]
#[allow(unused_unsafe)] // the intrinsics are `unsafe fn` on older toolchains (MSRV 1.85)
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
/// The CPU supports AVX2; `n ≥ 32` is a multiple of 8; `src` and `dst` hold at least `n·T`
/// bytes.
#[target_feature(enable = "avx2")]
unsafe fn bitshuffle_body_avx2<const T: usize>(n: usize, src: &[u8], dst: &mut [u8]) {
    debug_assert!(n >= 32 && n % 8 == 0 && src.len() >= n * T && dst.len() >= n * T);
    let r = n / 8;
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr());
    let mut i = 0;
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

/// Reverse transposition of the first `n` elements.
///
/// # Safety
///
/// The CPU supports AVX2; `n ≥ 32` is a multiple of 8; `src` and `dst` hold at least `n·T`
/// bytes.
#[target_feature(enable = "avx2")]
unsafe fn bitunshuffle_body_avx2<const T: usize>(n: usize, src: &[u8], dst: &mut [u8]) {
    debug_assert!(n >= 32 && n % 8 == 0 && src.len() >= n * T && dst.len() >= n * T);
    let r = n / 8;
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr());
    let mut i = 0;
    while i + 32 <= n {
        // SAFETY: i + 32 ≤ n and i is a multiple of 8, so the step reads 4 bytes at
        // row·r + i/8 ≤ row·r + r − 4 of each row < 8·T and writes dst[i·T, (i+32)·T): all
        // below n·T. AVX2 per the caller.
        unsafe { bitunshuffle_step_avx2::<T>(r, sp, dp, i) };
        i += 32;
    }
    if i < n {
        // SAFETY: as above for the block n − 32; it rewrites identical bytes.
        unsafe { bitunshuffle_step_avx2::<T>(r, sp, dp, n - 32) };
    }
}

/// Elements `i..i+32` (`i` a multiple of 8).
///
/// # Safety
///
/// The CPU supports AVX2; the 4 bytes at `(8b+k)·r + i/8` of `src` are readable for every
/// `b < T`, `k < 8`, and `dst[i·T, (i+32)·T)` is writable.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn bitunshuffle_step_avx2<const T: usize>(r: usize, sp: *const u8, dp: *mut u8, i: usize) {
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
        let mut v = [_mm256_setzero_si256(); T];
        for (b, x) in v.iter_mut().enumerate() {
            let row0 = sp.add(8 * b * r + i / 8);
            let g = |k: usize| u32::from_le(row0.add(k * r).cast::<u32>().read_unaligned()) as i32;
            // Dword k = bytes q = 0..4 of row k.
            let w = _mm256_setr_epi32(g(0), g(1), g(2), g(3), g(4), g(5), g(6), g(7));
            let lanes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(w, by_byte), pair);
            *x = transpose8_avx2(lanes);
        }
        if T == 1 {
            _mm256_storeu_si256(dp.add(i).cast(), v[0]);
        } else {
            rounds_avx2(&mut v, T.trailing_zeros());
            store_block_avx2(dp.add(i * T), &v);
        }
    }
}
