//! SSE2 and AVX2 byte shuffle kernels (docs/FORMAT.md §5.15), bit for bit identical to
//! [`scalar::shuffle`] / [`scalar::unshuffle`].
//!
//! # Method
//!
//! A block of `E` elements of `t` bytes (`E = 16` for SSE2, `32` for AVX2) is loaded into
//! registers and transposed with an *unpack network*: for `T` 16-byte vectors `V`, one round
//! computes `W[2k] = unpacklo_epi8(V[k], V[k + T/2])`, `W[2k+1] = unpackhi_epi8(V[k], V[k + T/2])`.
//! Numbering the `16·T` bytes `v·16 + b`, a round rotates the bits of that position left by
//! one. The shuffle maps position `i·T + j` (element `i < 16`, byte `j < T`) to `j·16 + i`, a
//! rotation by 4 bits, so it is 4 rounds; the unshuffle is the rotation by `log2 T` bits.
//!
//! AVX2 runs the same network on 256-bit registers: `unpack*_epi8` works within each 128-bit
//! lane, so the low lanes hold elements `0..16` of the block and the high lanes elements
//! `16..32` (one lane permute per vector on the element side; on the byte-row side each row's
//! 32 bytes are already split that way).
//!
//! Element sizes 2, 4, 8 and 16 use that network directly. When the row stride makes more
//! than 4 of the rows share an L1 set (64 KiB parts of 8- or 16-byte elements: n = 8192 or
//! 4096), the shuffle makes 2 or 4 passes, each writing only some rows ([`row_passes`]); the
//! AVX2 one also writes 64 bytes of each row per step. This doubles the speed of 8-byte
//! elements on TileDB's default 64 KiB chunks. Other sizes are transposed in tiles
//! of `E` elements × 16 bytes (16×16 byte transposes, 4 rounds over 16 vectors); columns past
//! the element (t < 16) are discarded on the way out, and for t > 16 the last column tile
//! overlaps the previous one. The elements left over at the end of a part are done by the
//! scalar code (element sizes 2, 4, 8 and 16 re-run one overlapping SIMD block instead).

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::prefetch_x86::prefetch_l2;
use super::{Dst, scalar};
use crate::mem::uninit::write_slice;

// ---------------------------------------------------------------------------------------------
// Shared building blocks (also used by the bitshuffle kernels)
// ---------------------------------------------------------------------------------------------

/// `rounds` rounds of the unpack network over `T` SSE2 vectors (see the module docs).
///
/// # Safety
///
/// The CPU supports SSE2.
#[inline]
#[target_feature(enable = "sse2")]
#[allow(unused_unsafe)] // the intrinsics are `unsafe fn` on toolchains before Rust 1.87
pub(super) unsafe fn rounds_sse2<const T: usize>(v: &mut [__m128i; T], rounds: u32) {
    // SAFETY: register-only SSE2 intrinsics; SSE2 is enabled on this function and the caller
    // guarantees that the CPU supports it.
    unsafe {
        for _ in 0..rounds {
            let u = *v;
            for k in 0..T / 2 {
                v[2 * k] = _mm_unpacklo_epi8(u[k], u[k + T / 2]);
                v[2 * k + 1] = _mm_unpackhi_epi8(u[k], u[k + T / 2]);
            }
        }
    }
}

/// `rounds` rounds of the unpack network over `T` AVX2 vectors, within each 128-bit lane.
///
/// # Safety
///
/// The CPU supports AVX2.
#[inline]
#[target_feature(enable = "avx2")]
#[allow(unused_unsafe)] // the intrinsics are `unsafe fn` on toolchains before Rust 1.87
pub(super) unsafe fn rounds_avx2<const T: usize>(v: &mut [__m256i; T], rounds: u32) {
    // SAFETY: register-only AVX2 intrinsics; AVX2 is enabled on this function and the caller
    // guarantees that the CPU supports it.
    unsafe {
        for _ in 0..rounds {
            let u = *v;
            for k in 0..T / 2 {
                v[2 * k] = _mm256_unpacklo_epi8(u[k], u[k + T / 2]);
                v[2 * k + 1] = _mm256_unpackhi_epi8(u[k], u[k + T / 2]);
            }
        }
    }
}

/// Loads 16 bytes at `lo` into the low lane and 16 bytes at `hi` into the high lane.
///
/// # Safety
///
/// The CPU supports AVX2; `lo..lo+16` and `hi..hi+16` are readable.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn load2(lo: *const u8, hi: *const u8) -> __m256i {
    // SAFETY: the caller guarantees both 16-byte ranges are readable and AVX2 is supported;
    // unaligned loads have no alignment requirement.
    unsafe {
        let l = _mm_loadu_si128(lo.cast());
        let h = _mm_loadu_si128(hi.cast());
        _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(l), h)
    }
}

/// Loads the `32·T` bytes at `p` (32 elements of `T` bytes) lane-split: vector `k` holds
/// bytes `16k..16k+16` of elements 0..16 in its low lane and of elements 16..32 in its high
/// lane (full 32-byte loads, then one lane permute per vector).
///
/// # Safety
///
/// The CPU supports AVX2; `T` is even; `p..p+32·T` is readable.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn load_block_avx2<const T: usize>(p: *const u8) -> [__m256i; T] {
    // SAFETY: the caller guarantees the 32·T bytes are readable and AVX2 is supported; the
    // loads are unaligned.
    unsafe {
        let mut a = [_mm256_setzero_si256(); T];
        for (m, x) in a.iter_mut().enumerate() {
            *x = _mm256_loadu_si256(p.add(32 * m).cast());
        }
        // 16-byte chunk c is lane c % 2 of a[c / 2]; vector k takes chunks k and T + k.
        let mut v = [_mm256_setzero_si256(); T];
        for (k, x) in v.iter_mut().enumerate() {
            *x = if k % 2 == 0 {
                _mm256_permute2x128_si256::<0x20>(a[k / 2], a[T / 2 + k / 2])
            } else {
                _mm256_permute2x128_si256::<0x31>(a[k / 2], a[T / 2 + k / 2])
            };
        }
        v
    }
}

/// Stores `T` lane-split vectors (the inverse of [`load_block_avx2`]) as the `32·T` bytes at
/// `p`, with 32-byte stores.
///
/// # Safety
///
/// The CPU supports AVX2; `T` is even; `p..p+32·T` is writable.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn store_block_avx2<const T: usize>(p: *mut u8, v: &[__m256i; T]) {
    // SAFETY: the caller guarantees the 32·T bytes are writable and AVX2 is supported; the
    // stores are unaligned.
    unsafe {
        for m in 0..T / 2 {
            let lo = _mm256_permute2x128_si256::<0x20>(v[2 * m], v[2 * m + 1]);
            let hi = _mm256_permute2x128_si256::<0x31>(v[2 * m], v[2 * m + 1]);
            _mm256_storeu_si256(p.add(32 * m).cast(), lo);
            _mm256_storeu_si256(p.add(16 * T + 32 * m).cast(), hi);
        }
    }
}

/// The start of each 16-byte column tile of a `t`-byte element: `0, 16, …` and, when `t` is
/// not a multiple of 16, a last tile at `t − 16` overlapping the previous one. For `t < 16`
/// there is one tile at 0 (only its first `t` columns are meaningful).
fn next_column(t: usize, j0: usize) -> Option<usize> {
    if j0 + 16 >= t {
        None
    } else {
        Some((j0 + 16).min(t - 16))
    }
}

/// Into how many passes (1, 2 or 4, each writing one contiguous group of rows) to split a
/// shuffle of `t` rows `n` bytes apart so that no pass writes more than 4 rows into one L1
/// set.
///
/// x86 L1 data caches have 4096 bytes per way (32 KiB 8-way, 48 KiB 12-way): rows whose
/// offsets `j·n` agree modulo 4096 land in the same set. With 64 KiB parts of 8-byte elements
/// (n = 8192) all 8 rows do, and writing them together runs at half speed.
pub(super) fn row_passes(t: usize, n: usize) -> usize {
    if t <= 4 {
        return 1;
    }
    // Rows p apart nearly coincide modulo 4096 (within a line): every p-th row shares a set.
    let period = (1..t)
        .find(|&p| !(64..=4096 - 64).contains(&(p * n % 4096)))
        .unwrap_or(t);
    match t.div_ceil(period) {
        0..=4 => 1,
        5..=8 => 2,
        _ => 4,
    }
}

// ---------------------------------------------------------------------------------------------
// SSE2
// ---------------------------------------------------------------------------------------------

/// SSE2 shuffle, same contract as [`scalar::shuffle`].
///
/// # Safety
///
/// The CPU supports SSE2.
pub(super) unsafe fn shuffle_sse2(t: usize, src: &[u8], dst: &mut Dst) {
    assert_eq!(src.len(), dst.len());
    let n = if t > 1 { src.len() / t } else { 0 };
    if n < 16 {
        scalar::shuffle_uninit(t, src, dst);
        return;
    }
    // SAFETY: the caller guarantees SSE2; n ≥ 16 and both slices hold at least n·t bytes, as
    // each body function requires.
    unsafe {
        match t {
            2 => shuffle_pow2_sse2::<2>(n, src, dst),
            4 => shuffle_pow2_sse2::<4>(n, src, dst),
            8 => shuffle_pow2_sse2::<8>(n, src, dst),
            16 => shuffle_pow2_sse2::<16>(n, src, dst),
            _ => shuffle_generic_sse2(t, n, src, dst),
        }
    }
    let body = n * t;
    write_slice(&mut dst[body..], &src[body..]);
}

/// SSE2 unshuffle, same contract as [`scalar::unshuffle`].
///
/// # Safety
///
/// The CPU supports SSE2.
pub(super) unsafe fn unshuffle_sse2(t: usize, src: &[u8], dst: &mut Dst) {
    assert_eq!(src.len(), dst.len());
    let n = if t > 1 { src.len() / t } else { 0 };
    if n < 16 {
        scalar::unshuffle_uninit(t, src, dst);
        return;
    }
    // SAFETY: the caller guarantees SSE2; n ≥ 16 and both slices hold at least n·t bytes, as
    // each body function requires.
    unsafe {
        match t {
            2 => unshuffle_pow2_sse2::<2>(n, src, dst),
            4 => unshuffle_pow2_sse2::<4>(n, src, dst),
            8 => unshuffle_pow2_sse2::<8>(n, src, dst),
            16 => unshuffle_pow2_sse2::<16>(n, src, dst),
            _ => unshuffle_generic_sse2(t, n, src, dst),
        }
    }
    let body = n * t;
    write_slice(&mut dst[body..], &src[body..]);
}

/// Shuffle of the `n·T`-byte body, `T ∈ {2, 4, 8, 16}`.
///
/// # Safety
///
/// The CPU supports SSE2; `n ≥ 16`; `src` and `dst` hold at least `n·T` bytes.
#[target_feature(enable = "sse2")]
unsafe fn shuffle_pow2_sse2<const T: usize>(n: usize, src: &[u8], dst: &mut Dst) {
    debug_assert!(n >= 16 && src.len() >= n * T && dst.len() >= n * T);
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr().cast::<u8>());
    // SAFETY (all passes): each pass writes, for every 16-element block i + 16 ≤ n, the rows
    // dst[j·n + i, j·n + i + 16) of its row group and reads src[i·T, (i+16)·T), all below
    // n·T; SSE2 per the caller.
    unsafe {
        match (T, if T >= 8 { row_passes(T, n) } else { 1 }) {
            (8, 2) => {
                shuffle_pass_sse2::<8, 0, 4>(n, sp, dp);
                shuffle_pass_sse2::<8, 4, 4>(n, sp, dp);
            }
            (16, 2) => {
                shuffle_pass_sse2::<16, 0, 8>(n, sp, dp);
                shuffle_pass_sse2::<16, 8, 8>(n, sp, dp);
            }
            (16, 4) => {
                shuffle_pass_sse2::<16, 0, 4>(n, sp, dp);
                shuffle_pass_sse2::<16, 4, 4>(n, sp, dp);
                shuffle_pass_sse2::<16, 8, 4>(n, sp, dp);
                shuffle_pass_sse2::<16, 12, 4>(n, sp, dp);
            }
            _ => shuffle_pass_sse2::<T, 0, T>(n, sp, dp),
        }
    }
    if !n.is_multiple_of(16) {
        // SAFETY: the block n − 16 ≥ 0 (n ≥ 16) reads src[(n−16)·T, n·T) and writes
        // dst[j·n + n − 16, j·n + n) for j < T; it overlaps the last block and rewrites the
        // same bytes. SSE2 per the caller.
        unsafe { shuffle_step_sse2::<T, 0, T>(n, sp, dp, n - 16) };
    }
}

/// One pass over the 16-element blocks `i + 16 ≤ n`, writing rows `J0..J0+G` only (see
/// [`row_passes`]).
///
/// # Safety
///
/// The CPU supports SSE2; `src` and `dst` hold at least `n·T` bytes; `J0 + G ≤ T`.
#[target_feature(enable = "sse2")]
unsafe fn shuffle_pass_sse2<const T: usize, const J0: usize, const G: usize>(
    n: usize,
    sp: *const u8,
    dp: *mut u8,
) {
    let mut i = 0;
    while i + 16 <= n {
        // SAFETY: the caller's bounds, for the block i + 16 ≤ n.
        unsafe { shuffle_step_sse2::<T, J0, G>(n, sp, dp, i) };
        i += 16;
    }
}

/// Elements `i..i+16`: `T` loads, 4 rounds, stores of rows `J0..J0+G` (the unused rows' work
/// is dead code the compiler drops).
///
/// # Safety
///
/// The CPU supports SSE2; `src[i·T, (i+16)·T)` is readable and `dst[j·n + i, j·n + i + 16)`
/// writable for every `j` in `J0..J0+G`, `J0 + G ≤ T`.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn shuffle_step_sse2<const T: usize, const J0: usize, const G: usize>(
    n: usize,
    sp: *const u8,
    dp: *mut u8,
    i: usize,
) {
    // SAFETY: the ranges accessed are exactly those the caller guarantees; unaligned
    // loads/stores have no alignment requirement.
    unsafe {
        let mut v = [_mm_setzero_si128(); T];
        for (k, x) in v.iter_mut().enumerate() {
            *x = _mm_loadu_si128(sp.add(i * T + 16 * k).cast());
        }
        rounds_sse2(&mut v, 4);
        for (j, x) in v.iter().enumerate().skip(J0).take(G) {
            _mm_storeu_si128(dp.add(j * n + i).cast(), *x);
        }
    }
}

/// Unshuffle of the `n·T`-byte body, `T ∈ {2, 4, 8, 16}`.
///
/// # Safety
///
/// The CPU supports SSE2; `n ≥ 16`; `src` and `dst` hold at least `n·T` bytes.
#[target_feature(enable = "sse2")]
pub(super) unsafe fn unshuffle_pow2_sse2<const T: usize>(n: usize, src: &[u8], dst: &mut Dst) {
    debug_assert!(n >= 16 && src.len() >= n * T && dst.len() >= n * T);
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr().cast::<u8>());
    let mut i = 0;
    while i + 16 <= n {
        // SAFETY: i + 16 ≤ n, so the step reads src[j·n + i, j·n + i + 16) for j < T and
        // writes dst[i·T, (i+16)·T), all below n·T; SSE2 per the caller.
        unsafe { unshuffle_step_sse2::<T>(n, sp, dp, i) };
        i += 16;
    }
    if i < n {
        // SAFETY: as above for the block n − 16 ≥ 0; it rewrites identical bytes.
        unsafe { unshuffle_step_sse2::<T>(n, sp, dp, n - 16) };
    }
}

/// Elements `i..i+16`: `T` row loads, `log2 T` rounds, `T` stores.
///
/// # Safety
///
/// The CPU supports SSE2; `src[j·n + i, j·n + i + 16)` is readable for every `j < T` and
/// `dst[i·T, (i+16)·T)` writable.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn unshuffle_step_sse2<const T: usize>(n: usize, sp: *const u8, dp: *mut u8, i: usize) {
    // SAFETY: the ranges accessed are exactly those the caller guarantees.
    unsafe {
        let mut v = [_mm_setzero_si128(); T];
        for (j, x) in v.iter_mut().enumerate() {
            *x = _mm_loadu_si128(sp.add(j * n + i).cast());
        }
        rounds_sse2(&mut v, T.trailing_zeros());
        for (k, x) in v.iter().enumerate() {
            _mm_storeu_si128(dp.add(i * T + 16 * k).cast(), *x);
        }
    }
}

/// Shuffle of the `n·t`-byte body for any `t ≥ 3` by 16×16 tiles; scalar for the last
/// elements.
///
/// # Safety
///
/// The CPU supports SSE2; `n ≥ 1`; `src` and `dst` hold at least `n·t` bytes and have the
/// same length.
#[target_feature(enable = "sse2")]
unsafe fn shuffle_generic_sse2(t: usize, n: usize, src: &[u8], dst: &mut Dst) {
    debug_assert!(t >= 3 && src.len() >= n * t && dst.len() == src.len());
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr().cast::<u8>());
    let w = t.min(16);
    let mut i = 0;
    // For t < 16 the 16-byte load of the block's last element runs past it: require it to
    // stay inside `src`.
    while i + 16 <= n && (t >= 16 || (i + 15) * t + 16 <= src.len()) {
        let mut j0 = 0;
        loop {
            // SAFETY: SSE2 per the caller. Loads: src[(i+e)·t + j0, +16) for e < 16 lies
            // inside element i+e when t ≥ 16 (j0 ≤ t − 16), else inside src by the loop
            // condition. Stores: dst[(j0+k)·n + i, +16) for k < w, with j0 + k < t and
            // i + 16 ≤ n, lies below n·t.
            unsafe {
                let mut v = [_mm_setzero_si128(); 16];
                for (e, x) in v.iter_mut().enumerate() {
                    *x = _mm_loadu_si128(sp.add((i + e) * t + j0).cast());
                }
                rounds_sse2(&mut v, 4);
                for (k, x) in v.iter().enumerate().take(w) {
                    _mm_storeu_si128(dp.add((j0 + k) * n + i).cast(), *x);
                }
            }
            match next_column(t, j0) {
                Some(j) => j0 = j,
                None => break,
            }
        }
        i += 16;
    }
    scalar::shuffle_elements(t, n, src, dst, i, n);
}

/// Unshuffle of the `n·t`-byte body for any `t ≥ 3` by 16×16 tiles; scalar for the last
/// elements. For t < 16 each element store writes 16 bytes; the excess lands on later
/// elements (or the trailing bytes), which are written afterwards.
///
/// # Safety
///
/// The CPU supports SSE2; `n ≥ 1`; `src` and `dst` hold at least `n·t` bytes and have the
/// same length.
#[target_feature(enable = "sse2")]
unsafe fn unshuffle_generic_sse2(t: usize, n: usize, src: &[u8], dst: &mut Dst) {
    debug_assert!(t >= 3 && src.len() >= n * t && dst.len() == src.len());
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr().cast::<u8>());
    let w = t.min(16);
    let mut i = 0;
    while i + 16 <= n && (t >= 16 || (i + 15) * t + 16 <= dst.len()) {
        let mut j0 = 0;
        loop {
            // SAFETY: SSE2 per the caller. Loads: src[(j0+k)·n + i, +16) for k < w, with
            // j0 + k < t and i + 16 ≤ n, lies below n·t. Stores: dst[(i+e)·t + j0, +16) lies
            // inside element i+e when t ≥ 16, else inside dst by the loop condition; stores go
            // in increasing element order so each excess is overwritten later.
            unsafe {
                let mut v = [_mm_setzero_si128(); 16];
                for (k, x) in v.iter_mut().enumerate().take(w) {
                    *x = _mm_loadu_si128(sp.add((j0 + k) * n + i).cast());
                }
                rounds_sse2(&mut v, 4);
                for (e, x) in v.iter().enumerate() {
                    _mm_storeu_si128(dp.add((i + e) * t + j0).cast(), *x);
                }
            }
            match next_column(t, j0) {
                Some(j) => j0 = j,
                None => break,
            }
        }
        i += 16;
    }
    scalar::unshuffle_elements(t, n, src, dst, i, n);
}

// ---------------------------------------------------------------------------------------------
// AVX2
// ---------------------------------------------------------------------------------------------

/// AVX2 shuffle, same contract as [`scalar::shuffle`]. Parts of fewer than 32 elements go to
/// the SSE2 kernel.
///
/// # Safety
///
/// The CPU supports AVX2 and SSE2.
pub(super) unsafe fn shuffle_avx2(t: usize, src: &[u8], dst: &mut Dst) {
    assert_eq!(src.len(), dst.len());
    let n = if t > 1 { src.len() / t } else { 0 };
    if n < 32 {
        // SAFETY: the caller guarantees SSE2.
        unsafe { shuffle_sse2(t, src, dst) };
        return;
    }
    // SAFETY: the caller guarantees AVX2; n ≥ 32 and both slices hold at least n·t bytes, as
    // each body function requires.
    unsafe {
        match t {
            2 => shuffle_pow2_avx2::<2>(n, src, dst),
            4 => shuffle_pow2_avx2::<4>(n, src, dst),
            8 => shuffle_pow2_avx2::<8>(n, src, dst),
            16 => shuffle_pow2_avx2::<16>(n, src, dst),
            _ => shuffle_generic_avx2(t, n, src, dst),
        }
    }
    let body = n * t;
    write_slice(&mut dst[body..], &src[body..]);
}

/// AVX2 unshuffle, same contract as [`scalar::unshuffle`]. Parts of fewer than 32 elements go
/// to the SSE2 kernel.
///
/// # Safety
///
/// The CPU supports AVX2 and SSE2.
pub(super) unsafe fn unshuffle_avx2(t: usize, src: &[u8], dst: &mut Dst) {
    assert_eq!(src.len(), dst.len());
    let n = if t > 1 { src.len() / t } else { 0 };
    if n < 32 {
        // SAFETY: the caller guarantees SSE2.
        unsafe { unshuffle_sse2(t, src, dst) };
        return;
    }
    // SAFETY: the caller guarantees AVX2; n ≥ 32 and both slices hold at least n·t bytes, as
    // each body function requires.
    unsafe {
        match t {
            2 => unshuffle_pow2_avx2::<2>(n, src, dst),
            4 => unshuffle_pow2_avx2::<4>(n, src, dst),
            8 => unshuffle_pow2_avx2::<8>(n, src, dst),
            16 => unshuffle_pow2_avx2::<16>(n, src, dst),
            _ => unshuffle_generic_avx2(t, n, src, dst),
        }
    }
    let body = n * t;
    write_slice(&mut dst[body..], &src[body..]);
}

/// Shuffle of the `n·T`-byte body, `T ∈ {2, 4, 8, 16}`.
///
/// # Safety
///
/// The CPU supports AVX2; `n ≥ 32`; `src` and `dst` hold at least `n·T` bytes.
#[target_feature(enable = "avx2")]
unsafe fn shuffle_pow2_avx2<const T: usize>(n: usize, src: &[u8], dst: &mut Dst) {
    debug_assert!(n >= 32 && src.len() >= n * T && dst.len() >= n * T);
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr().cast::<u8>());
    // SAFETY (all passes): each pass writes, for every 64-element block i + 64 ≤ n, the rows
    // dst[j·n + i, j·n + i + 64) of its row group and reads src[i·T, (i+64)·T), all below n·T;
    // AVX2 per the caller.
    unsafe {
        match (T, if T >= 8 { row_passes(T, n) } else { 1 }) {
            (8, 2) => {
                shuffle_pass64_avx2::<8, 0, 4>(n, sp, dp);
                shuffle_pass64_avx2::<8, 4, 4>(n, sp, dp);
            }
            (16, 2) => {
                shuffle_pass64_avx2::<16, 0, 8>(n, sp, dp);
                shuffle_pass64_avx2::<16, 8, 8>(n, sp, dp);
            }
            (16, 4) => {
                shuffle_pass64_avx2::<16, 0, 4>(n, sp, dp);
                shuffle_pass64_avx2::<16, 4, 4>(n, sp, dp);
                shuffle_pass64_avx2::<16, 8, 4>(n, sp, dp);
                shuffle_pass64_avx2::<16, 12, 4>(n, sp, dp);
            }
            _ => shuffle_pass64_avx2::<T, 0, T>(n, sp, dp),
        }
    }
    let mut i = n / 64 * 64;
    while i + 32 <= n {
        // SAFETY: i + 32 ≤ n, so the step reads src[i·T, (i+32)·T) and writes
        // dst[j·n + i, j·n + i + 32) for j < T, all below n·T; AVX2 per the caller.
        unsafe { shuffle_step_avx2::<T>(n, sp, dp, i) };
        i += 32;
    }
    if i < n {
        // SAFETY: as above for the block n − 32 ≥ 0; it rewrites identical bytes.
        unsafe { shuffle_step_avx2::<T>(n, sp, dp, n - 32) };
    }
}

/// How far ahead of its reads the AVX2 shuffle prefetches its source: 8 and 16 KiB were
/// equally good for 4- and 8-byte elements, 4 KiB slower, 2 KiB no gain.
const SHUFFLE_PREFETCH: usize = 16384;

/// One pass over the 64-element blocks `i + 64 ≤ n`, writing rows `J0..J0+G` only (see
/// [`row_passes`]); each row gets whole 64-byte runs.
///
/// # Safety
///
/// The CPU supports AVX2; `src` and `dst` hold at least `n·T` bytes; `J0 + G ≤ T`.
#[target_feature(enable = "avx2")]
unsafe fn shuffle_pass64_avx2<const T: usize, const J0: usize, const G: usize>(
    n: usize,
    sp: *const u8,
    dp: *mut u8,
) {
    let mut i = 0;
    while i + 64 <= n {
        if J0 == 0 {
            // The source lines of a later step (the pass over the first rows reads the
            // source from memory; later passes find it in cache).
            for l in 0..T {
                prefetch_l2(sp.wrapping_add(i * T + 64 * l), SHUFFLE_PREFETCH);
            }
        }
        // SAFETY: the caller's bounds, for the block i + 64 ≤ n.
        unsafe { shuffle_step64_avx2::<T, J0, G>(n, sp, dp, i) };
        i += 64;
    }
}

/// Elements `i..i+32`: `T` split loads (low lanes: elements `i..i+16`, high lanes:
/// `i+16..i+32`), 4 in-lane rounds, `T` 32-byte row stores.
///
/// # Safety
///
/// The CPU supports AVX2; `src[i·T, (i+32)·T)` is readable and `dst[j·n + i, j·n + i + 32)`
/// writable for every `j < T`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn shuffle_step_avx2<const T: usize>(n: usize, sp: *const u8, dp: *mut u8, i: usize) {
    // SAFETY: the ranges accessed are exactly those the caller guarantees.
    unsafe {
        let mut v = load_block_avx2::<T>(sp.add(i * T));
        rounds_avx2(&mut v, 4);
        for (j, x) in v.iter().enumerate() {
            _mm256_storeu_si256(dp.add(j * n + i).cast(), *x);
        }
    }
}

/// Elements `i..i+64` as two 32-element halves; rows `J0..J0+G` are written, each as one
/// 64-byte run (the unused rows' work is dead code the compiler drops).
///
/// # Safety
///
/// The CPU supports AVX2; `src[i·T, (i+64)·T)` is readable and `dst[j·n + i, j·n + i + 64)`
/// writable for every `j` in `J0..J0+G`, `J0 + G ≤ T`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn shuffle_step64_avx2<const T: usize, const J0: usize, const G: usize>(
    n: usize,
    sp: *const u8,
    dp: *mut u8,
    i: usize,
) {
    // SAFETY: the ranges accessed are exactly those the caller guarantees.
    unsafe {
        let mut a = load_block_avx2::<T>(sp.add(i * T));
        let mut b = load_block_avx2::<T>(sp.add((i + 32) * T));
        rounds_avx2(&mut a, 4);
        rounds_avx2(&mut b, 4);
        for j in J0..J0 + G {
            _mm256_storeu_si256(dp.add(j * n + i).cast(), a[j]);
            _mm256_storeu_si256(dp.add(j * n + i + 32).cast(), b[j]);
        }
    }
}

/// Unshuffle of the `n·T`-byte body, `T ∈ {2, 4, 8, 16}`.
///
/// # Safety
///
/// The CPU supports AVX2; `n ≥ 32`; `src` and `dst` hold at least `n·T` bytes.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn unshuffle_pow2_avx2<const T: usize>(n: usize, src: &[u8], dst: &mut Dst) {
    debug_assert!(n >= 32 && src.len() >= n * T && dst.len() >= n * T);
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr().cast::<u8>());
    let mut i = 0;
    while i + 32 <= n {
        // SAFETY: i + 32 ≤ n, so the step reads src[j·n + i, j·n + i + 32) for j < T and
        // writes dst[i·T, (i+32)·T), all below n·T; AVX2 per the caller.
        unsafe { unshuffle_step_avx2::<T>(n, sp, dp, i) };
        i += 32;
    }
    if i < n {
        // SAFETY: as above for the block n − 32 ≥ 0; it rewrites identical bytes.
        unsafe { unshuffle_step_avx2::<T>(n, sp, dp, n - 32) };
    }
}

/// Elements `i..i+32`: `T` 32-byte row loads, `log2 T` in-lane rounds, `T` split stores.
///
/// # Safety
///
/// The CPU supports AVX2; `src[j·n + i, j·n + i + 32)` is readable for every `j < T` and
/// `dst[i·T, (i+32)·T)` writable.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn unshuffle_step_avx2<const T: usize>(n: usize, sp: *const u8, dp: *mut u8, i: usize) {
    // SAFETY: the ranges accessed are exactly those the caller guarantees.
    unsafe {
        let mut v = [_mm256_setzero_si256(); T];
        for (j, x) in v.iter_mut().enumerate() {
            *x = _mm256_loadu_si256(sp.add(j * n + i).cast());
        }
        rounds_avx2(&mut v, T.trailing_zeros());
        store_block_avx2(dp.add(i * T), &v);
    }
}

/// Shuffle of the `n·t`-byte body for any `t ≥ 3` by tiles of 32 elements × 16 bytes;
/// scalar for the last elements.
///
/// # Safety
///
/// The CPU supports AVX2; `src` and `dst` hold at least `n·t` bytes and have the same length.
#[target_feature(enable = "avx2")]
unsafe fn shuffle_generic_avx2(t: usize, n: usize, src: &[u8], dst: &mut Dst) {
    debug_assert!(t >= 3 && src.len() >= n * t && dst.len() == src.len());
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr().cast::<u8>());
    let w = t.min(16);
    let mut i = 0;
    while i + 32 <= n && (t >= 16 || (i + 31) * t + 16 <= src.len()) {
        let mut j0 = 0;
        loop {
            // SAFETY: AVX2 per the caller. Loads: src[(i+e)·t + j0, +16) for e < 32 lies
            // inside element i+e when t ≥ 16 (j0 ≤ t − 16), else inside src by the loop
            // condition. Stores: dst[(j0+k)·n + i, +32) for k < w, with j0 + k < t and
            // i + 32 ≤ n, lies below n·t.
            unsafe {
                let mut v = [_mm256_setzero_si256(); 16];
                for (e, x) in v.iter_mut().enumerate() {
                    *x = load2(sp.add((i + e) * t + j0), sp.add((i + 16 + e) * t + j0));
                }
                rounds_avx2(&mut v, 4);
                for (k, x) in v.iter().enumerate().take(w) {
                    _mm256_storeu_si256(dp.add((j0 + k) * n + i).cast(), *x);
                }
            }
            match next_column(t, j0) {
                Some(j) => j0 = j,
                None => break,
            }
        }
        i += 32;
    }
    scalar::shuffle_elements(t, n, src, dst, i, n);
}

/// Unshuffle of the `n·t`-byte body for any `t ≥ 3` by tiles of 32 elements × 16 bytes;
/// scalar for the last elements. For t < 16 each element store writes 16 bytes; the excess
/// lands on later elements (or the trailing bytes), which are written afterwards.
///
/// # Safety
///
/// The CPU supports AVX2; `src` and `dst` hold at least `n·t` bytes and have the same length.
#[target_feature(enable = "avx2")]
unsafe fn unshuffle_generic_avx2(t: usize, n: usize, src: &[u8], dst: &mut Dst) {
    debug_assert!(t >= 3 && src.len() >= n * t && dst.len() == src.len());
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr().cast::<u8>());
    let w = t.min(16);
    let mut i = 0;
    while i + 32 <= n && (t >= 16 || (i + 31) * t + 16 <= dst.len()) {
        let mut j0 = 0;
        loop {
            // SAFETY: AVX2 per the caller. Loads: src[(j0+k)·n + i, +32) for k < w, with
            // j0 + k < t and i + 32 ≤ n, lies below n·t. Stores: dst[(i+e)·t + j0, +16) for
            // e < 32 lies inside element i+e when t ≥ 16, else inside dst by the loop
            // condition; stores go in increasing element order (all low lanes, elements
            // i..i+16, then all high lanes) so each excess is overwritten later.
            unsafe {
                let mut v = [_mm256_setzero_si256(); 16];
                for (k, x) in v.iter_mut().enumerate().take(w) {
                    *x = _mm256_loadu_si256(sp.add((j0 + k) * n + i).cast());
                }
                rounds_avx2(&mut v, 4);
                for (e, x) in v.iter().enumerate() {
                    _mm_storeu_si128(dp.add((i + e) * t + j0).cast(), _mm256_castsi256_si128(*x));
                }
                for (e, x) in v.iter().enumerate() {
                    _mm_storeu_si128(
                        dp.add((i + 16 + e) * t + j0).cast(),
                        _mm256_extracti128_si256::<1>(*x),
                    );
                }
            }
            match next_column(t, j0) {
                Some(j) => j0 = j,
                None => break,
            }
        }
        i += 32;
    }
    scalar::unshuffle_elements(t, n, src, dst, i, n);
}
