//! AVX-512 (VBMI + GFNI) bit transposition kernels (docs/FORMAT.md §5.14), bit for bit identical
//! to [`scalar::bitshuffle_block`] / [`scalar::bitunshuffle_block`], for element sizes 1, 2,
//! 4 and 8 (other sizes use the scalar code, blocks of fewer than 512 elements the AVX2
//! kernel).
//!
//! # Method
//!
//! With `N` elements transposed and `R = N/8` bytes per bit row, byte `g` of row `8b + k`
//! holds bit `k` of byte `b` of elements `8g..8g+8`.
//!
//! *8×8 bit transpose*: `gf2p8affine_epi64_epi8(C, A)` with `C` = `0x8040201008040201`
//! (byte `k` = `1 << k`) sets bit `i` of byte `k` of each 64-bit lane to bit `k` of byte
//! `7 − i` of the lane of `A`: a bit transpose of `A` with its bytes reversed. So the bytes
//! of every lane are reversed by the permutations around it, or (single-byte forward) the
//! bits of every result byte by a second affine step, `gf2p8affine(x, C)`.
//!
//! *Forward*, 512 elements at a time: for each byte plane, 8 vectors (`m`) of 64 bytes
//! become, after the affine step, byte `k` of row group `8m + g` in byte `8g + k`; three
//! rounds of two-source byte permutations (`permutex2var_epi8`, pairing the vectors that
//! differ in one bit of `m` and exchanging it for a bit of `k`) leave row `k`'s 64 bytes in
//! vector `k`, stored with one write per row. Wider elements are first split into byte
//! planes in registers, two planes at a time: `log2 T` rounds of two-source permutations,
//! each keeping the half of the element width that leads to those planes (the last round
//! keeps both, reversing bytes within lanes).
//!
//! *Reverse*: the mirror rounds on 8 row vectors (the byte reversal folded into the last
//! round's indices), then the affine step, rebuild 512 bytes of a plane. For 2-byte elements
//! both planes stay in registers and one permutation round interleaves them; for 4 and 8
//! bytes, the planes of up to `8192/T` elements go to a scratch buffer, interleaved from
//! there by `log2 T` inverse rounds.
//!
//! Steps that do not divide the count are re-run ending at it, overlapping the previous step
//! and rewriting identical bytes.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use super::RawKernel;
use super::bitshuffle_x86::{bitshuffle_avx2, bitunshuffle_avx2};
use super::prefetch_x86::prefetch_l2;
use super::{Dst, scalar};
use crate::mem::uninit::write_slice;

/// Fewest elements a block needs for these kernels (one single-byte step).
const MIN_ELEMENTS: usize = 512;

/// Scratch bytes for the byte planes of one chunk of elements.
const SCRATCH: usize = 8192;

/// The 8×8 bit matrix whose byte `k` is `1 << k`, the constant operand of the affine step.
const SELECT_BITS: i64 = 0x8040_2010_0804_0201_u64 as i64;

// ---------------------------------------------------------------------------------------------
// Permutation tables, computed at compile time
// ---------------------------------------------------------------------------------------------

/// A layout of the 512 bytes of 8 vectors: for each of the 9 bits of `(vector << 6) | byte`
/// (bits 0..6 the byte, 6..9 the vector), which bit of the address `(m << 6) | (g << 3) | k`
/// it holds (`k` bits 0..3, `g` 3..6, `m` 6..9), and a mask XORed into the address.
type Layout = ([u8; 9], u16);

/// Address held by byte `pos` of vector `reg` in layout `l`.
const fn decode(l: &Layout, reg: usize, pos: usize) -> u16 {
    let v = pos | (reg << 6);
    let mut a = 0u16;
    let mut i = 0;
    while i < 9 {
        a |= (((v >> i) & 1) as u16) << l.0[i];
        i += 1;
    }
    a ^ l.1
}

/// `(reg << 6) | pos` holding address `a` in layout `l`.
const fn encode(l: &Layout, a: u16) -> usize {
    let a = a ^ l.1;
    let mut v = 0usize;
    let mut i = 0;
    while i < 9 {
        v |= (((a >> l.0[i]) & 1) as usize) << i;
        i += 1;
    }
    v
}

/// The index tables (low and high output) of the rounds from `layouts[0]` to `layouts[3]`;
/// round `s` (0..3) pairs the vectors differing in bit `s` of their number.
const fn round_tables(layouts: &[Layout; 4]) -> [[[u8; 64]; 2]; 3] {
    let mut t = [[[0u8; 64]; 2]; 3];
    let mut s = 0;
    while s < 3 {
        let bit = 1usize << s;
        let mut h = 0;
        while h < 2 {
            let mut p = 0;
            while p < 64 {
                let a = decode(&layouts[s + 1], h * bit, p);
                let v = encode(&layouts[s], a);
                let (reg, pos) = (v >> 6, v & 63);
                assert!(reg & !bit == 0, "a round exchanges one vector bit");
                t[s][h][p] = (pos | if reg != 0 { 64 } else { 0 }) as u8;
                p += 1;
            }
            h += 1;
        }
        s += 1;
    }
    t
}

/// Forward rounds: from vector `m`, byte `8g + k` (after the affine step) to vector `k`, byte
/// `8m + g` (row `k`), exchanging bit `s` of `m` for bit `s` of `k` in round `s`.
const FORWARD_ROUNDS: [[[u8; 64]; 2]; 3] = round_tables(&[
    ([0, 1, 2, 3, 4, 5, 6, 7, 8], 0),
    ([6, 1, 2, 3, 4, 5, 0, 7, 8], 0),
    ([6, 7, 2, 3, 4, 5, 0, 1, 8], 0),
    ([3, 4, 5, 6, 7, 8, 0, 1, 2], 0),
]);

/// Reverse rounds: from vector `k`, byte `8m + g` (row `k`) to vector `m`, byte
/// `8g + (7 − k)`, the input of the affine step.
const REVERSE_ROUNDS: [[[u8; 64]; 2]; 3] = round_tables(&[
    ([3, 4, 5, 6, 7, 8, 0, 1, 2], 0),
    ([3, 4, 5, 0, 7, 8, 6, 1, 2], 0),
    ([3, 4, 5, 0, 1, 8, 6, 7, 2], 0),
    ([0, 1, 2, 3, 4, 5, 6, 7, 8], 7),
]);

/// Splitting tables, `[log2 w − 1][half]`: from two vectors of `w`-byte elements, the low
/// (`half` 0) or high halves of all `128/w` elements, in order; for `w = 2` (always the last
/// round) with the bytes of every 64-bit lane reversed.
const SPLIT: [[[u8; 64]; 2]; 3] = {
    let mut t = [[[0u8; 64]; 2]; 3];
    let mut lg = 0;
    while lg < 3 {
        let w = 2usize << lg;
        let hw = w / 2;
        let mut h = 0;
        while h < 2 {
            let mut p = 0;
            while p < 64 {
                let q = if w == 2 { p ^ 7 } else { p };
                t[lg][h][p] = ((q / hw) * w + h * hw + q % hw) as u8;
                p += 1;
            }
            h += 1;
        }
        lg += 1;
    }
    t
};

/// Merging tables, `[log2 w − 1][out]`, the inverse of [`SPLIT`] without the reversal: from
/// the low and high halves of `128/w` elements, elements `out·64/w..` of `w` bytes.
const MERGE: [[[u8; 64]; 2]; 3] = {
    let mut t = [[[0u8; 64]; 2]; 3];
    let mut lg = 0;
    while lg < 3 {
        let w = 2usize << lg;
        let hw = w / 2;
        let mut o = 0;
        while o < 2 {
            let mut p = 0;
            while p < 64 {
                let e = o * (64 / w) + p / w;
                let c = p % w;
                t[lg][o][p] = if c < hw {
                    e * hw + c
                } else {
                    64 + e * hw + c - hw
                } as u8;
                p += 1;
            }
            o += 1;
        }
        lg += 1;
    }
    t
};

// ---------------------------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------------------------

/// AVX-512 bitshuffle of one block, same contract as [`scalar::bitshuffle_block`]. Blocks of
/// fewer than 512 elements go to the AVX2 kernel.
///
/// # Safety
///
/// The CPU supports AVX-512 F, BW, VL and VBMI, GFNI, AVX2 and SSE2.
pub(super) unsafe fn bitshuffle_avx512(t: usize, src: &[u8], dst: &mut Dst) {
    // SAFETY: the caller's features are the ones `run_block` requires.
    unsafe { run_block(&FORWARD, t, src, dst) }
}

/// AVX-512 bitunshuffle of one block, same contract as [`scalar::bitunshuffle_block`].
/// Blocks of fewer than 512 elements go to the AVX2 kernel.
///
/// # Safety
///
/// The CPU supports AVX-512 F, BW, VL and VBMI, GFNI, AVX2 and SSE2.
pub(super) unsafe fn bitunshuffle_avx512(t: usize, src: &[u8], dst: &mut Dst) {
    // SAFETY: as in `bitshuffle_avx512`.
    unsafe { run_block(&REVERSE, t, src, dst) }
}

/// One direction of the transposition: its body per element size 1, 2, 4, 8 (elements
/// counted, `n`), and the kernels that take the blocks the bodies do not.
struct Direction {
    bodies: [RawKernel; 4],
    avx2: RawKernel,
    scalar: fn(usize, &[u8], &mut Dst),
}

const FORWARD: Direction = Direction {
    bodies: [
        bitshuffle_body::<1>,
        bitshuffle_body::<2>,
        bitshuffle_body::<4>,
        bitshuffle_body::<8>,
    ],
    avx2: bitshuffle_avx2,
    scalar: scalar::bitshuffle_block_uninit,
};

const REVERSE: Direction = Direction {
    bodies: [
        bitunshuffle_body::<1>,
        bitunshuffle_body::<2>,
        bitunshuffle_body::<4>,
        bitunshuffle_body::<8>,
    ],
    avx2: bitunshuffle_avx2,
    scalar: scalar::bitunshuffle_block_uninit,
};

/// Runs one block in direction `d`: element sizes other than 1, 2, 4, 8 by the scalar code,
/// fewer than 512 elements by the AVX2 kernel, else the body on the first `n` elements (a
/// multiple of 8) and a copy of the bytes after them.
///
/// # Safety
///
/// The CPU supports AVX-512 F, BW, VL and VBMI, GFNI, AVX2 and SSE2.
unsafe fn run_block(d: &Direction, t: usize, src: &[u8], dst: &mut Dst) {
    assert_eq!(src.len(), dst.len());
    if !matches!(t, 1 | 2 | 4 | 8) {
        (d.scalar)(t, src, dst);
        return;
    }
    let n = (src.len() / t) & !7;
    if n < MIN_ELEMENTS {
        // SAFETY: the caller guarantees AVX2 and SSE2.
        unsafe { (d.avx2)(t, src, dst) };
        return;
    }
    // SAFETY: the caller guarantees the features; n ≥ 512, n is a multiple of 8 and both
    // slices hold at least n·t bytes, as the body functions require. Index log2 t picks the
    // body for this element size.
    unsafe { (d.bodies[t.trailing_zeros() as usize])(n, src, dst) };
    write_slice(&mut dst[n * t..], &src[n * t..]);
}

// ---------------------------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------------------------

/// Calls `f(i)` for `i = 0, step, 2·step, …` while `i + step ≤ count`, then once more at
/// `count − step` if that left a remainder. Requires `count ≥ step`.
#[inline(always)]
fn for_steps(count: usize, step: usize, mut f: impl FnMut(usize)) {
    debug_assert!(count >= step);
    let mut i = 0;
    while i + step <= count {
        f(i);
        i += step;
    }
    if i < count {
        f(count - step);
    }
}

/// Forward transposition of the first `n` elements.
///
/// # Safety
///
/// The CPU supports AVX-512 F/BW/VBMI and GFNI; `n ≥ 512` is a multiple of 8; `src` and `dst`
/// hold at least `n·T` bytes.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
unsafe fn bitshuffle_body<const T: usize>(n: usize, src: &[u8], dst: &mut Dst) {
    debug_assert!(
        n >= MIN_ELEMENTS && n.is_multiple_of(8) && src.len() >= n * T && dst.len() >= n * T
    );
    let r = n / 8;
    // The next block of the part starts where this one ends: each step prefetches the lines
    // of that block that it reads in this one (see `prefetch_x86`).
    let ahead = src.len();
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr().cast::<u8>());
    if T == 1 {
        // SAFETY: every step at i (a multiple of 8, i + 512 ≤ n) reads src[i, i + 512) and
        // writes dst[k·r + i/8, k·r + i/8 + 64) for k < 8, all below n = 8r. Features per
        // the caller.
        for_steps(n, 512, |i| unsafe {
            bytes_to_bits_step(sp, dp, r, i, ahead)
        });
        return;
    }
    // SAFETY: every step at i (a multiple of 8, i + 512 ≤ n) reads src[i·T, (i + 512)·T)
    // and writes dst[k·r + i/8, k·r + i/8 + 64) for k < 8T, all below n·T = 8T·r. Features
    // per the caller.
    for_steps(n, 512, |i| unsafe {
        elements_to_bits_step::<T>(sp, dp, r, i, ahead)
    });
}

/// Reverse transposition of the first `n` elements.
///
/// # Safety
///
/// The CPU supports AVX-512 F/BW/VBMI and GFNI; `n ≥ 512` is a multiple of 8; `src` and `dst`
/// hold at least `n·T` bytes.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
unsafe fn bitunshuffle_body<const T: usize>(n: usize, src: &[u8], dst: &mut Dst) {
    debug_assert!(
        n >= MIN_ELEMENTS && n.is_multiple_of(8) && src.len() >= n * T && dst.len() >= n * T
    );
    let r = n / 8;
    // As in `bitshuffle_body`: prefetch the next block's lines.
    let ahead = src.len();
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr().cast::<u8>());
    if T == 1 {
        // SAFETY: every step at i (a multiple of 8, i + 512 ≤ n) reads src[k·r + i/8,
        // k·r + i/8 + 64) for k < 8 and writes dst[i, i + 512), all below n = 8r. Features per
        // the caller.
        for_steps(n, 512, |i| unsafe {
            bits_to_bytes_step(sp, r, dp, i, ahead)
        });
        return;
    }
    if T == 2 {
        // SAFETY: every step at i (a multiple of 8, i + 512 ≤ n) reads src[k·r + i/8,
        // k·r + i/8 + 64) for k < 16 and writes dst[2i, 2i + 1024), all below 2n = 16r.
        // Features per the caller.
        for_steps(n, 512, |i| unsafe {
            bits_to_pairs_step(sp, r, dp, i, ahead)
        });
        return;
    }
    let cnt = (SCRATCH / T).min(n); // a multiple of 8, ≥ 512
    let mut scratch = MaybeUninit::<[u8; SCRATCH]>::uninit();
    let tp = scratch.as_mut_ptr().cast::<u8>();
    let mut start = 0;
    loop {
        let c0 = start.min(n - cnt);
        // SAFETY: features per the caller. c0 + cnt ≤ n, both multiples of 8. Each row step
        // at i (i + 512 ≤ cnt) reads row 8b + k at byte offsets (c0 + i)/8 .. + 64 ≤ r, inside
        // src[0, n·T), and writes scratch[b·cnt + i, b·cnt + i + 512) inside T·cnt ≤ SCRATCH;
        // the steps cover every plane byte [0, cnt) before the merge steps read them. Each
        // merge step at e (e + 64 ≤ cnt) reads scratch[b·cnt + e, b·cnt + e + 64) for b < T
        // and writes dst[(c0 + e)·T, (c0 + e + 64)·T) ⊂ dst[0, n·T).
        unsafe {
            for b in 0..T {
                let rows = sp.add(8 * b * r + c0 / 8);
                let plane = tp.add(b * cnt);
                for_steps(cnt, 512, |i| bits_to_bytes_step(rows, r, plane, i, ahead));
            }
            for_steps(cnt, 64, |e| merge_step::<T>(tp, cnt, dp.add(c0 * T), e));
        }
        start = c0 + cnt;
        if start >= n {
            break;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Steps
// ---------------------------------------------------------------------------------------------

/// The three rounds of `tables` on the 8 vectors `v`: round `s` replaces the pair
/// `(v[j], v[j | 1 << s])` (bit `s` of `j` clear) by its two permutations. Callable only
/// where AVX-512 F/BW/VBMI are enabled.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn rounds8(v: &mut [__m512i; 8], tables: &[[[u8; 64]; 2]; 3]) {
    for (s, pair) in tables.iter().enumerate() {
        // SAFETY: each table is 64 readable bytes.
        let (lo, hi) = unsafe {
            (
                _mm512_loadu_si512(pair[0].as_ptr().cast()),
                _mm512_loadu_si512(pair[1].as_ptr().cast()),
            )
        };
        let bit = 1 << s;
        for j in (0..8).filter(|j| j & bit == 0) {
            let (a, b) = (v[j], v[j | bit]);
            v[j] = _mm512_permutex2var_epi8(a, lo, b);
            v[j | bit] = _mm512_permutex2var_epi8(a, hi, b);
        }
    }
}

/// Single bytes `i..i+512` of `src` to bytes `i/8..i/8+64` of the 8 rows `rows + k·stride`,
/// prefetching the source lines `ahead` bytes on.
/// The affine step on unreversed bytes leaves the bits of every byte reversed; a second one
/// (`gf2p8affine(x, C)`, the bit reversal) puts them right.
///
/// # Safety
///
/// The CPU supports AVX-512 F/BW/VBMI and GFNI; `src[i, i + 512)` is readable and
/// `rows + k·stride + [i/8, i/8 + 64)` writable for `k < 8`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
unsafe fn bytes_to_bits_step(src: *const u8, rows: *mut u8, stride: usize, i: usize, ahead: usize) {
    let c = _mm512_set1_epi64(SELECT_BITS);
    let mut v = [_mm512_setzero_si512(); 8];
    for (m, x) in v.iter_mut().enumerate() {
        prefetch_l2(src.wrapping_add(i + 64 * m), ahead);
        // SAFETY: src[i + 64m, i + 64m + 64) ⊂ src[i, i + 512), readable per the caller.
        let y = unsafe { _mm512_loadu_si512(src.add(i + 64 * m).cast()) };
        let z = _mm512_gf2p8affine_epi64_epi8::<0>(c, y);
        *x = _mm512_gf2p8affine_epi64_epi8::<0>(z, c);
    }
    rounds8(&mut v, &FORWARD_ROUNDS);
    for (k, x) in v.iter().enumerate() {
        // SAFETY: row k's bytes [i/8, i/8 + 64) are writable per the caller.
        unsafe { _mm512_storeu_si512(rows.add(k * stride + i / 8).cast(), *x) };
    }
}

/// Bytes `i/8..i/8+64` of the 8 rows `rows + k·stride` to single bytes `i..i+512` of `out`,
/// prefetching the row lines `ahead` bytes on.
///
/// # Safety
///
/// The CPU supports AVX-512 F/BW/VBMI and GFNI; `rows + k·stride + [i/8, i/8 + 64)` is
/// readable for `k < 8` and `out[i, i + 512)` writable.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
unsafe fn bits_to_bytes_step(rows: *const u8, stride: usize, out: *mut u8, i: usize, ahead: usize) {
    let c = _mm512_set1_epi64(SELECT_BITS);
    // SAFETY: the caller's ranges.
    let v = unsafe { rows_to_bytes(rows, stride, i, ahead) };
    for (m, x) in v.iter().enumerate() {
        let y = _mm512_gf2p8affine_epi64_epi8::<0>(c, *x);
        // SAFETY: out[i + 64m, i + 64m + 64) ⊂ out[i, i + 512), writable per the caller.
        unsafe { _mm512_storeu_si512(out.add(i + 64 * m).cast(), y) };
    }
}

/// Bytes `i/8..i/8+64` of the 8 rows `rows + k·stride` as 8 vectors of 64 bytes (`i + 64m`)
/// each, before the affine step of [`bits_to_bytes_step`]; prefetches those lines `ahead`
/// bytes on.
///
/// # Safety
///
/// The CPU supports AVX-512 F/BW/VBMI; `rows + k·stride + [i/8, i/8 + 64)` is readable for
/// `k < 8`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn rows_to_bytes(rows: *const u8, stride: usize, i: usize, ahead: usize) -> [__m512i; 8] {
    let mut v = [_mm512_setzero_si512(); 8];
    for (k, x) in v.iter_mut().enumerate() {
        prefetch_l2(rows.wrapping_add(k * stride + i / 8), ahead);
        // SAFETY: row k's bytes [i/8, i/8 + 64) are readable per the caller.
        *x = unsafe { _mm512_loadu_si512(rows.add(k * stride + i / 8).cast()) };
    }
    rounds8(&mut v, &REVERSE_ROUNDS);
    v
}

/// Elements `i..i+512` of `src` (`T` bytes each, `T` ≥ 2) to bytes `i/8..i/8+64` of the
/// `8T` rows `rows + k·stride`, two byte planes at a time: for planes `2f, 2f + 1`, the split
/// rounds keep only the halves leading to them, and the two planes (reversed in lanes) go
/// straight into the affine step and the forward rounds, without a scratch buffer. The
/// source lines `ahead` bytes on are prefetched.
///
/// # Safety
///
/// The CPU supports AVX-512 F/BW/VBMI and GFNI; `src[i·T, (i + 512)·T)` is readable and
/// `rows + k·stride + [i/8, i/8 + 64)` writable for `k < 8T`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
unsafe fn elements_to_bits_step<const T: usize>(
    src: *const u8,
    rows: *mut u8,
    stride: usize,
    i: usize,
    ahead: usize,
) {
    let c = _mm512_set1_epi64(SELECT_BITS);
    // SAFETY: 64-byte tables.
    let load = |t: &[u8; 64]| unsafe { _mm512_loadu_si512(t.as_ptr().cast()) };
    for f in 0..T / 2 {
        let mut p0 = [_mm512_setzero_si512(); 8];
        let mut p1 = [_mm512_setzero_si512(); 8];
        for m in 0..8 {
            let mut v = [_mm512_setzero_si512(); T];
            // The step's 8T source lines, two per (f, m), spread over the step: a burst of
            // prefetches stalls the loads behind it.
            let line = 2 * (8 * f + m);
            prefetch_l2(src.wrapping_add(i * T + 64 * line), ahead);
            prefetch_l2(src.wrapping_add(i * T + 64 * (line + 1)), ahead);
            for (q, x) in v.iter_mut().enumerate() {
                // SAFETY: src[(i + 64m)·T + 64q, … + 64) ⊂ src[i·T, (i + 512)·T) for q < T.
                *x = unsafe { _mm512_loadu_si512(src.add((i + 64 * m) * T + 64 * q).cast()) };
            }
            // Round of width w keeps the half selecting bit log2(w) − 1 of the plane, i.e.
            // bit log2(w) − 2 of f; `len` vectors remain.
            let mut len = T;
            while len > 2 {
                let lg = len.trailing_zeros() as usize;
                let idx = load(&SPLIT[lg - 1][(f >> (lg - 2)) & 1]);
                for p in 0..len / 2 {
                    v[p] = _mm512_permutex2var_epi8(v[2 * p], idx, v[2 * p + 1]);
                }
                len /= 2;
            }
            let lo = _mm512_permutex2var_epi8(v[0], load(&SPLIT[0][0]), v[1]);
            let hi = _mm512_permutex2var_epi8(v[0], load(&SPLIT[0][1]), v[1]);
            p0[m] = _mm512_gf2p8affine_epi64_epi8::<0>(c, lo);
            p1[m] = _mm512_gf2p8affine_epi64_epi8::<0>(c, hi);
        }
        rounds8(&mut p0, &FORWARD_ROUNDS);
        rounds8(&mut p1, &FORWARD_ROUNDS);
        for k in 0..8 {
            // SAFETY: rows 16f + k and 16f + 8 + k (< 8T) at [i/8, i/8 + 64) are writable
            // per the caller.
            unsafe {
                let row = rows.add((16 * f + k) * stride + i / 8);
                _mm512_storeu_si512(row.cast(), p0[k]);
                _mm512_storeu_si512(row.add(8 * stride).cast(), p1[k]);
            }
        }
    }
}

/// Bytes `i/8..i/8+64` of the 16 rows `rows + k·stride` to two-byte elements `i..i+512` of
/// `out`: both byte planes rebuilt in registers, then interleaved. The row lines `ahead`
/// bytes on are prefetched.
///
/// # Safety
///
/// The CPU supports AVX-512 F/BW/VBMI and GFNI; `rows + k·stride + [i/8, i/8 + 64)` is
/// readable for `k < 16` and `out[2i, 2i + 1024)` writable.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
unsafe fn bits_to_pairs_step(rows: *const u8, stride: usize, out: *mut u8, i: usize, ahead: usize) {
    let c = _mm512_set1_epi64(SELECT_BITS);
    // SAFETY: rows 0..8 and 8..16 at [i/8, i/8 + 64) are readable per the caller.
    let (p0, p1) = unsafe {
        (
            rows_to_bytes(rows, stride, i, ahead),
            rows_to_bytes(rows.add(8 * stride), stride, i, ahead),
        )
    };
    // SAFETY: 64-byte tables.
    let (lo, hi) = unsafe {
        (
            _mm512_loadu_si512(MERGE[0][0].as_ptr().cast()),
            _mm512_loadu_si512(MERGE[0][1].as_ptr().cast()),
        )
    };
    for m in 0..8 {
        let x0 = _mm512_gf2p8affine_epi64_epi8::<0>(c, p0[m]);
        let x1 = _mm512_gf2p8affine_epi64_epi8::<0>(c, p1[m]);
        // SAFETY: out[2(i + 64m), 2(i + 64m) + 128) ⊂ out[2i, 2i + 1024).
        unsafe {
            let p = out.add(2 * (i + 64 * m));
            _mm512_storeu_si512(p.cast(), _mm512_permutex2var_epi8(x0, lo, x1));
            _mm512_storeu_si512(p.add(64).cast(), _mm512_permutex2var_epi8(x0, hi, x1));
        }
    }
}

/// Bytes `e..e+64` of the `T` planes `planes + b·stride` to elements `e..e+64` of `out`, the
/// inverse of the split rounds of [`elements_to_bits_step`] (without the reversal).
///
/// # Safety
///
/// The CPU supports AVX-512 F/BW/VBMI; `planes + b·stride + [e, e + 64)` is readable for
/// `b < T` and `out[e·T, (e + 64)·T)` writable.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn merge_step<const T: usize>(planes: *const u8, stride: usize, out: *mut u8, e: usize) {
    let mut v = [_mm512_setzero_si512(); T];
    for (b, x) in v.iter_mut().enumerate() {
        // SAFETY: plane b's bytes [e, e + 64) are readable per the caller.
        *x = unsafe { _mm512_loadu_si512(planes.add(b * stride + e).cast()) };
    }
    // Merging into width w: T/w families of w vectors from 2T/w families of w/2 vectors.
    let mut w = 2;
    while w <= T {
        let tables = &MERGE[w.trailing_zeros() as usize - 1];
        // SAFETY: each table is 64 readable bytes.
        let (lo, hi) = unsafe {
            (
                _mm512_loadu_si512(tables[0].as_ptr().cast()),
                _mm512_loadu_si512(tables[1].as_ptr().cast()),
            )
        };
        let old = v;
        let half = w / 2;
        for f in 0..T / w {
            for p in 0..half {
                let (l, h) = (old[2 * f * half + p], old[(2 * f + 1) * half + p]);
                v[f * w + 2 * p] = _mm512_permutex2var_epi8(l, lo, h);
                v[f * w + 2 * p + 1] = _mm512_permutex2var_epi8(l, hi, h);
            }
        }
        w *= 2;
    }
    for (q, x) in v.iter().enumerate() {
        // SAFETY: out[e·T + 64q, e·T + 64q + 64) ⊂ out[e·T, (e + 64)·T) for q < T.
        unsafe { _mm512_storeu_si512(out.add(e * T + 64 * q).cast(), *x) };
    }
}
