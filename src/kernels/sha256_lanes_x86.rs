//! SHA-NI SHA-256 over `N` interleaved messages (x86-64 only).
//!
//! One SHA-NI stream is bound by the latency of `sha256rnds2`; `N` independent streams whose
//! instructions are interleaved keep the SHA unit busy. Each message is seen as a sequence of
//! 64-byte blocks in two segments: its whole blocks (borrowed from the message) and a tail of
//! one or two blocks (the partial block, `0x80`, zeros and the 64-bit length, FIPS 180-4 §5.1).
//! Messages are sorted by length and grouped `W` at a time; within a group the widest core
//! that fits the unfinished messages runs for as many blocks as every one of them has left in
//! its current segment, until all are done.

use std::arch::x86_64::*;

/// Round constants K (FIPS 180-4 §4.2.2).
static K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// Initial hash value H(0) (FIPS 180-4 §5.3.3).
const H0: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// Whether the CPU has everything the SHA-NI cores use.
pub(super) fn supported() -> bool {
    is_x86_feature_detected!("sha")
        && is_x86_feature_detected!("sse2")
        && is_x86_feature_detected!("ssse3")
        && is_x86_feature_detected!("sse4.1")
}

/// One message in flight: its whole blocks, its padded tail and its running state.
struct Stream<'a> {
    /// The message's whole 64-byte blocks.
    full: &'a [u8],
    /// The rest of the message followed by the padding, `tail_len` bytes used.
    tail: [u8; 128],
    /// 64 or 128.
    tail_len: usize,
    /// Bytes of `full` then `tail` already compressed.
    pos: usize,
    /// The hash state a..h.
    state: [u32; 8],
}

impl<'a> Stream<'a> {
    fn new(msg: &'a [u8]) -> Self {
        let whole = msg.len() - msg.len() % 64;
        let (full, rest) = msg.split_at(whole);
        let mut tail = [0u8; 128];
        tail[..rest.len()].copy_from_slice(rest);
        tail[rest.len()] = 0x80;
        let tail_len = if rest.len() + 9 <= 64 { 64 } else { 128 };
        let bits = (msg.len() as u64).wrapping_mul(8);
        tail[tail_len - 8..tail_len].copy_from_slice(&bits.to_be_bytes());
        Stream {
            full,
            tail,
            tail_len,
            pos: 0,
            state: H0,
        }
    }

    /// The blocks not yet compressed in the current segment (a multiple of 64 bytes, empty
    /// when done).
    fn segment(&self) -> &[u8] {
        if self.pos < self.full.len() {
            &self.full[self.pos..]
        } else {
            &self.tail[self.pos - self.full.len()..self.tail_len]
        }
    }

    fn done(&self) -> bool {
        self.pos == self.full.len() + self.tail_len
    }

    fn digest(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (o, w) in out.chunks_exact_mut(4).zip(self.state) {
            o.copy_from_slice(&w.to_be_bytes());
        }
        out
    }
}

/// SHA-256 of every message, `W` (1, 2 or 4) interleaved streams at a time.
///
/// # Safety
///
/// The CPU supports SHA, SSE2, SSSE3 and SSE4.1 ([`supported`]).
///
/// # Panics
///
/// If the slices differ in length.
pub(super) unsafe fn sha256_many<const W: usize>(messages: &[&[u8]], digests: &mut [[u8; 32]]) {
    assert_eq!(messages.len(), digests.len(), "one digest per message");
    assert!(W == 1 || W == 2 || W == 4, "W is 1, 2 or 4");
    // Similar lengths side by side leave the least work to narrower cores.
    let mut order: Vec<usize> = (0..messages.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(messages[i].len()));
    for group in order.chunks(W) {
        let mut streams: [Stream; W] =
            std::array::from_fn(|l| Stream::new(group.get(l).map_or(&[][..], |&i| messages[i])));
        let streams = &mut streams[..group.len()];
        loop {
            let mut act = [0usize; 4];
            let mut na = 0;
            for (l, s) in streams.iter().enumerate() {
                if !s.done() && na < 4 {
                    act[na] = l;
                    na += 1;
                }
            }
            // SAFETY (all three): the caller guarantees the CPU features; the indices are
            // distinct and below `streams.len()`.
            match na {
                0 => break,
                1 => unsafe { step::<1>(streams, [act[0]]) },
                2 | 3 => unsafe { step::<2>(streams, [act[0], act[1]]) },
                _ => unsafe { step::<4>(streams, act) },
            }
        }
        for (s, &i) in streams.iter().zip(group) {
            digests[i] = s.digest();
        }
    }
}

/// Advances the streams `idx` (distinct, unfinished) together by the largest number of blocks
/// that each has left in its current segment.
///
/// # Safety
///
/// The CPU supports SHA, SSE2, SSSE3 and SSE4.1.
#[inline]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
unsafe fn step<const N: usize>(streams: &mut [Stream], idx: [usize; N]) {
    let k = idx
        .iter()
        .map(|&l| streams[l].segment().len())
        .min()
        .unwrap_or(0);
    let mut states = idx.map(|l| streams[l].state);
    let data = idx.map(|l| &streams[l].segment()[..k]);
    // SAFETY: the caller guarantees the CPU features; `compress` checks the lengths.
    unsafe { compress::<N>(&mut states, data) };
    for (&l, st) in idx.iter().zip(states) {
        streams[l].state = st;
        streams[l].pos += k;
    }
}

/// Compresses `data[l]` into `states[l]` for every lane `l`, the `N` lanes interleaved.
///
/// # Safety
///
/// The CPU supports SHA, SSE2, SSSE3 and SSE4.1.
///
/// # Panics
///
/// Unless all `data[l]` have the same length, a multiple of 64.
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
#[allow(unused_unsafe)] // the intrinsics are `unsafe fn` on toolchains before Rust 1.87
unsafe fn compress<const N: usize>(states: &mut [[u32; 8]; N], data: [&[u8]; N]) {
    let len = data[0].len();
    assert!(len.is_multiple_of(64) && data.iter().all(|d| d.len() == len));
    // SAFETY: the caller guarantees the CPU features; every load reads 16 bytes inside a
    // `&[u8; 64]` (offsets 0, 16, 32, 48) or a bounds-checked 4-word slice of `K`.
    unsafe {
        // Byte swap of each 32-bit word: the message words are big-endian.
        let bswap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
        // sha256rnds2 keeps the state as ABEF and CDGH (A, C in the top word).
        let mut abef = [_mm_setzero_si128(); N];
        let mut cdgh = [_mm_setzero_si128(); N];
        for l in 0..N {
            let s = states[l].map(|w| w as i32);
            abef[l] = _mm_set_epi32(s[0], s[1], s[4], s[5]);
            cdgh[l] = _mm_set_epi32(s[2], s[3], s[6], s[7]);
        }
        for off in (0..len).step_by(64) {
            let (save_abef, save_cdgh) = (abef, cdgh);
            let mut w = [[_mm_setzero_si128(); N]; 4];
            for l in 0..N {
                let block: &[u8; 64] = data[l][off..off + 64].try_into().unwrap();
                let p = block.as_ptr();
                for (j, wj) in w.iter_mut().enumerate() {
                    wj[l] = _mm_shuffle_epi8(_mm_loadu_si128(p.add(16 * j).cast()), bswap);
                }
            }
            let [mut w0, mut w1, mut w2, mut w3] = w;
            rounds4(&mut abef, &mut cdgh, &w0, 0);
            rounds4(&mut abef, &mut cdgh, &w1, 1);
            rounds4(&mut abef, &mut cdgh, &w2, 2);
            rounds4(&mut abef, &mut cdgh, &w3, 3);
            for i in 4..16 {
                // W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16], four at a time:
                // msg1 adds σ0, alignr picks W[t-7..t-3], msg2 adds σ1 (serially).
                let mut wn = [_mm_setzero_si128(); N];
                for l in 0..N {
                    let x = _mm_sha256msg1_epu32(w0[l], w1[l]);
                    let x = _mm_add_epi32(x, _mm_alignr_epi8::<4>(w3[l], w2[l]));
                    wn[l] = _mm_sha256msg2_epu32(x, w3[l]);
                }
                rounds4(&mut abef, &mut cdgh, &wn, i);
                (w0, w1, w2, w3) = (w1, w2, w3, wn);
            }
            for l in 0..N {
                abef[l] = _mm_add_epi32(abef[l], save_abef[l]);
                cdgh[l] = _mm_add_epi32(cdgh[l], save_cdgh[l]);
            }
        }
        for l in 0..N {
            states[l] = [
                _mm_extract_epi32::<3>(abef[l]) as u32,
                _mm_extract_epi32::<2>(abef[l]) as u32,
                _mm_extract_epi32::<3>(cdgh[l]) as u32,
                _mm_extract_epi32::<2>(cdgh[l]) as u32,
                _mm_extract_epi32::<1>(abef[l]) as u32,
                _mm_extract_epi32::<0>(abef[l]) as u32,
                _mm_extract_epi32::<1>(cdgh[l]) as u32,
                _mm_extract_epi32::<0>(cdgh[l]) as u32,
            ];
        }
    }
}

/// Rounds `4i..4i+4` of every lane, with message words `w[l]` = W[4i..4i+4].
///
/// # Safety
///
/// The CPU supports SHA and SSE2; `i < 16`.
#[inline]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
#[allow(unused_unsafe)] // the intrinsics are `unsafe fn` on toolchains before Rust 1.87
unsafe fn rounds4<const N: usize>(
    abef: &mut [__m128i; N],
    cdgh: &mut [__m128i; N],
    w: &[__m128i; N],
    i: usize,
) {
    // SAFETY: the caller guarantees the CPU features; the load reads the bounds-checked slice
    // `K[4i..4i+4]`.
    unsafe {
        let k = _mm_loadu_si128(K[4 * i..4 * i + 4].as_ptr().cast());
        for l in 0..N {
            let wk = _mm_add_epi32(w[l], k);
            // Two rounds with the low two words, then two with the high two; after each the
            // new CDGH is the previous ABEF.
            let mid = _mm_sha256rnds2_epu32(cdgh[l], abef[l], wk);
            let end = _mm_sha256rnds2_epu32(abef[l], mid, _mm_shuffle_epi32::<0x0E>(wk));
            cdgh[l] = mid;
            abef[l] = end;
        }
    }
}
