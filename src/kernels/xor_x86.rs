//! SSE2 and AVX2 kernels of the XOR filter (docs/FORMAT.md §5.18), bit for bit identical to
//! [`scalar::xor_encode`] / [`scalar::xor_decode`].
//!
//! # Method
//!
//! Encoding, `y[i] = x[i] ^ x[i-s]`, has no dependency between outputs: each 32-byte vector is
//! its source XOR the source loaded `s` bytes earlier (AVX2; SSE2 uses the scalar loop, which
//! LLVM vectorises for the SSE2 baseline).
//!
//! Decoding is a running XOR over elements of `s` ∈ {1, 2, 4, 8} bytes, a prefix sum in which
//! XOR is the addition. Within a vector it takes `log2(width / s)` steps: `v ^= v << s`,
//! `v ^= v << 2s`, … (byte shifts towards higher addresses). With AVX2 those shifts stay
//! within each 128-bit lane, so the low lane's last element, broadcast, is then XORed into the
//! high lane. Across vectors a *carry* holds the previous vector's last decoded element in
//! every lane; since a broadcast distributes over XOR, the next carry is this carry XOR the
//! broadcast of the vector's own prefix, computed off the dependency chain: the chain from one
//! vector to the next is one XOR. The bytes after the last whole vector are done by the
//! scalar code, continuing from the decoded ones.

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::{Dst, scalar};

// ---------------------------------------------------------------------------------------------
// SSE2
// ---------------------------------------------------------------------------------------------

/// SSE2 XOR decoding, same contract as [`scalar::xor_decode`].
///
/// # Safety
///
/// The CPU supports SSE2.
#[target_feature(enable = "sse2")]
pub(super) unsafe fn xor_decode_sse2(s: usize, src: &[u8], dst: &mut Dst) {
    assert_eq!(src.len(), dst.len());
    assert!(s > 0, "XOR element width 0");
    // SAFETY: SSE2 is supported (the caller's guarantee); the slices have equal lengths.
    let done = unsafe {
        match s {
            1 => decode_sse2::<1>(src, dst),
            2 => decode_sse2::<2>(src, dst),
            4 => decode_sse2::<4>(src, dst),
            8 => decode_sse2::<8>(src, dst),
            _ => 0,
        }
    };
    // SAFETY: the vector loop wrote dst[..done].
    unsafe { scalar::xor_decode_from(s, src, dst, done) };
}

/// The in-vector running XOR of the `16 / S` elements of `v`.
///
/// # Safety
///
/// The CPU supports SSE2.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn prefix_sse2<const S: usize>(mut v: __m128i) -> __m128i {
    // Each step doubles the span already summed: after the step shifting by k bytes, byte i
    // holds the XOR of bytes i, i-S, …, i-(2k-S) (those at non-negative positions).
    if S <= 1 {
        v = _mm_xor_si128(v, _mm_slli_si128::<1>(v));
    }
    if S <= 2 {
        v = _mm_xor_si128(v, _mm_slli_si128::<2>(v));
    }
    if S <= 4 {
        v = _mm_xor_si128(v, _mm_slli_si128::<4>(v));
    }
    _mm_xor_si128(v, _mm_slli_si128::<8>(v))
}

/// The last `S`-byte element of `v` repeated over the whole vector.
///
/// # Safety
///
/// The CPU supports SSE2.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn broadcast_last_sse2<const S: usize>(v: __m128i) -> __m128i {
    match S {
        1 => {
            let w = _mm_unpackhi_epi8(v, v); // 16-bit words: byte 15 doubled is the last
            let w = _mm_shufflehi_epi16::<0xFF>(w);
            _mm_unpackhi_epi64(w, w)
        }
        2 => {
            let w = _mm_shufflehi_epi16::<0xFF>(v);
            _mm_unpackhi_epi64(w, w)
        }
        4 => _mm_shuffle_epi32::<0xFF>(v),
        _ => _mm_unpackhi_epi64(v, v),
    }
}

/// Decodes the whole 16-byte vectors of `src` into `dst`; returns how many bytes that was.
///
/// # Safety
///
/// The CPU supports SSE2; `dst.len() == src.len()`.
#[target_feature(enable = "sse2")]
unsafe fn decode_sse2<const S: usize>(src: &[u8], dst: &mut Dst) -> usize {
    let n = src.len() / 16 * 16;
    let mut carry = _mm_setzero_si128();
    let mut i = 0;
    while i < n {
        // SAFETY: i + 16 ≤ n ≤ src.len() = dst.len(); the loads and stores are unaligned.
        unsafe {
            let v = prefix_sse2::<S>(_mm_loadu_si128(src.as_ptr().add(i).cast()));
            let b = broadcast_last_sse2::<S>(v);
            _mm_storeu_si128(
                dst.as_mut_ptr().cast::<u8>().add(i).cast(),
                _mm_xor_si128(v, carry),
            );
            carry = _mm_xor_si128(carry, b);
        }
        i += 16;
    }
    n
}

// ---------------------------------------------------------------------------------------------
// AVX2
// ---------------------------------------------------------------------------------------------

/// AVX2 XOR encoding, same contract as [`scalar::xor_encode`].
///
/// # Safety
///
/// The CPU supports AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn xor_encode_avx2(s: usize, src: &[u8], dst: &mut Dst) {
    assert_eq!(src.len(), dst.len());
    assert!(s > 0, "XOR element width 0");
    let len = src.len();
    if s > 32 || len < 64 {
        scalar::xor_encode_uninit(s, src, dst);
        return;
    }
    // The first 32 bytes (which include the `s` copied ones) by the scalar code; then every
    // vector starting at i ≥ 32 ≥ s reads its predecessor at i - s.
    scalar::xor_encode_from(s, &src[..32], &mut dst[..32], 0);
    let n = len / 32 * 32;
    let mut i = 32;
    while i < n {
        // SAFETY: AVX2 is supported (the caller's guarantee); s ≤ 32 ≤ i and i + 32 ≤ n ≤ len,
        // so both loads and the store are in bounds; all are unaligned.
        unsafe {
            let cur = _mm256_loadu_si256(src.as_ptr().add(i).cast());
            let prev = _mm256_loadu_si256(src.as_ptr().add(i - s).cast());
            _mm256_storeu_si256(
                dst.as_mut_ptr().cast::<u8>().add(i).cast(),
                _mm256_xor_si256(cur, prev),
            );
        }
        i += 32;
    }
    scalar::xor_encode_from(s, src, dst, n);
}

/// AVX2 XOR decoding, same contract as [`scalar::xor_decode`].
///
/// # Safety
///
/// The CPU supports AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn xor_decode_avx2(s: usize, src: &[u8], dst: &mut Dst) {
    assert_eq!(src.len(), dst.len());
    assert!(s > 0, "XOR element width 0");
    // SAFETY: AVX2 is supported (the caller's guarantee); the slices have equal lengths.
    let done = unsafe {
        match s {
            1 => decode_avx2::<1>(src, dst),
            2 => decode_avx2::<2>(src, dst),
            4 => decode_avx2::<4>(src, dst),
            8 => decode_avx2::<8>(src, dst),
            _ => 0,
        }
    };
    // SAFETY: the vector loop wrote dst[..done].
    unsafe { scalar::xor_decode_from(s, src, dst, done) };
}

/// The `pshufb` control repeating each 128-bit lane's last `S`-byte element over the lane.
const fn lane_broadcast_mask<const S: usize>() -> [u8; 32] {
    let mut m = [0u8; 32];
    let mut k = 0;
    while k < 32 {
        m[k] = (16 - S + k % S) as u8;
        k += 1;
    }
    m
}

/// Decodes the whole 32-byte vectors of `src` into `dst`; returns how many bytes that was.
///
/// # Safety
///
/// The CPU supports AVX2; `dst.len() == src.len()`.
#[target_feature(enable = "avx2")]
unsafe fn decode_avx2<const S: usize>(src: &[u8], dst: &mut Dst) -> usize {
    let n = src.len() / 32 * 32;
    let mask_bytes = const { lane_broadcast_mask::<S>() };
    // SAFETY: the mask array holds 32 readable bytes; the load is unaligned.
    let mask = unsafe { _mm256_loadu_si256(mask_bytes.as_ptr().cast()) };
    let mut carry = _mm256_setzero_si256();
    let mut i = 0;
    while i < n {
        // SAFETY: i + 32 ≤ n ≤ src.len() = dst.len(); the loads and stores are unaligned.
        unsafe {
            let mut v = _mm256_loadu_si256(src.as_ptr().add(i).cast());
            // In-lane prefix (the shifts of `_mm256_slli_si256` stay within 128-bit lanes).
            if S <= 1 {
                v = _mm256_xor_si256(v, _mm256_slli_si256::<1>(v));
            }
            if S <= 2 {
                v = _mm256_xor_si256(v, _mm256_slli_si256::<2>(v));
            }
            if S <= 4 {
                v = _mm256_xor_si256(v, _mm256_slli_si256::<4>(v));
            }
            v = _mm256_xor_si256(v, _mm256_slli_si256::<8>(v));
            // The low lane's last element into every element of the high lane (low lane: 0).
            let lanes = _mm256_shuffle_epi8(v, mask);
            v = _mm256_xor_si256(v, _mm256_permute2x128_si256::<0x08>(lanes, lanes));
            // This vector's last element everywhere, for the carry.
            let b = _mm256_permute4x64_epi64::<0xFF>(_mm256_shuffle_epi8(v, mask));
            _mm256_storeu_si256(
                dst.as_mut_ptr().cast::<u8>().add(i).cast(),
                _mm256_xor_si256(v, carry),
            );
            carry = _mm256_xor_si256(carry, b);
        }
        i += 32;
    }
    n
}
