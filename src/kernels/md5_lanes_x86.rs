//! AVX2 multi-buffer MD5: 8 messages per 256-bit register (one per 32-bit lane), one or two
//! registers' worth (8 or 16 lanes) at a time.
//!
//! A scheduler keeps up to 16 lanes busy. Each lane hashes its message's whole 64-byte blocks
//! straight from the message, then 1 or 2 padded final blocks built in a 128-byte buffer of
//! its own. A *batch* runs the compression on all lanes for as many blocks as every active
//! lane still has in its current phase (body or padding); afterwards finished lanes yield
//! their digest and take the next message. Idle lanes re-read another lane's data and their
//! result is ignored. With at most 8 lanes active they are moved into the first register and
//! only that one is computed.

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use std::cmp::Reverse;

/// Lanes per register.
const W: usize = 8;
/// Lanes of the scheduler (two registers).
const LANES: usize = 2 * W;
/// The initial MD5 state `A, B, C, D` (RFC 1321 §3.3).
const IV: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];
/// A lane without a message.
const IDLE: usize = usize::MAX;
/// Fewer messages than this (after moving long ones to the scalar code) are hashed by
/// `md5::Md5` one by one.
const MIN_MESSAGES: usize = 3;

/// The sine table `T[i] = ⌊2³² · |sin(i + 1)|⌋` (RFC 1321 §3.4).
const K: [u32; 64] = [
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
];

// Relative costs, measured on AMD Zen 4 (only their ratios matter):
/// one block hashed by `md5::Md5` (assembly),
const COST_SCALAR: u64 = 10;
/// one block in each of 8 lanes ([`compress`] with `G = 1`),
const COST_STEP_8: u64 = 10;
/// one block in each of 16 lanes (`G = 2`).
const COST_STEP_16: u64 = 14;

/// Estimated cost of hashing messages of `max` blocks at most and `total` blocks in all,
/// `count` of them, in lanes.
fn lanes_cost(count: usize, max: u64, total: u64) -> u64 {
    let (lanes, step) = if count > W {
        (LANES as u64, COST_STEP_16)
    } else {
        (W as u64, COST_STEP_8)
    };
    max.max(total.div_ceil(lanes)) * step
}

/// Blocks hashed for a message of `len` bytes (with padding).
fn blocks(len: usize) -> u64 {
    (len as u64 + 8) / 64 + 1
}

/// `digests[i]` = MD5(`messages[i]`), using AVX2 lanes where that pays off.
///
/// # Safety
///
/// The CPU supports AVX2.
///
/// # Panics
///
/// If the two slices differ in length.
pub(super) unsafe fn md5_many_avx2(messages: &[&[u8]], digests: &mut [[u8; 16]]) {
    assert_eq!(messages.len(), digests.len());
    // Longest first, so that lanes finish at about the same time.
    let mut order: Vec<usize> = (0..messages.len()).collect();
    order.sort_by_key(|&i| Reverse(messages[i].len()));
    // Hash the longest message alone while that is cheaper than the lanes' wait for it.
    let mut total: u64 = order.iter().map(|&i| blocks(messages[i].len())).sum();
    let mut first = 0;
    while order.len() - first >= MIN_MESSAGES {
        let max = blocks(messages[order[first]].len());
        let next = order
            .get(first + 1)
            .map_or(0, |&i| blocks(messages[i].len()));
        let count = order.len() - first;
        let keep = lanes_cost(count, max, total);
        let peel = lanes_cost(count - 1, next, total - max) + max * COST_SCALAR;
        if peel >= keep {
            break;
        }
        digests[order[first]] = super::digest_one(messages[order[first]]);
        total -= max;
        first += 1;
    }
    let order = &order[first..];
    if order.len() < MIN_MESSAGES {
        for &i in order {
            digests[i] = super::digest_one(messages[i]);
        }
        return;
    }
    // SAFETY: the caller guarantees AVX2.
    unsafe { hash_lanes(messages, order, digests) }
}

/// One lane of the scheduler.
struct Lane {
    /// Index of the message, or [`IDLE`].
    msg: usize,
    /// Offset of the next whole block of the message.
    body: usize,
    /// End of the message's whole blocks.
    body_end: usize,
    /// Whether the body is done and the padded final blocks in `tail` are being hashed.
    in_tail: bool,
    /// The message's last `len % 64` bytes, padding and bit length: 1 or 2 blocks.
    tail: [u8; 128],
    /// Offset of the next block in `tail`.
    tail_pos: usize,
    /// End of the blocks in `tail` (64 or 128).
    tail_end: usize,
}

impl Lane {
    const IDLE: Lane = Lane {
        msg: IDLE,
        body: 0,
        body_end: 0,
        in_tail: false,
        tail: [0; 128],
        tail_pos: 0,
        tail_end: 0,
    };

    fn is_active(&self) -> bool {
        self.msg != IDLE
    }

    /// Takes message number `msg`, `m`.
    fn start(&mut self, msg: usize, m: &[u8]) {
        self.msg = msg;
        self.body = 0;
        self.body_end = m.len() & !63;
        self.in_tail = false;
        if self.body_end == 0 {
            self.enter_tail(m);
        }
    }

    /// Builds the padded final blocks of `m` (RFC 1321 §3.1, §3.2) and switches to them.
    fn enter_tail(&mut self, m: &[u8]) {
        let rest = &m[self.body_end..];
        self.tail = [0; 128];
        self.tail[..rest.len()].copy_from_slice(rest);
        self.tail[rest.len()] = 0x80;
        self.tail_end = if rest.len() < 56 { 64 } else { 128 };
        let bits = (m.len() as u64).wrapping_mul(8);
        self.tail[self.tail_end - 8..self.tail_end].copy_from_slice(&bits.to_le_bytes());
        self.tail_pos = 0;
        self.in_tail = true;
    }

    /// The blocks left in the current phase (≥ 1 while active).
    fn data<'a>(&'a self, messages: &[&'a [u8]]) -> &'a [u8] {
        if self.in_tail {
            &self.tail[self.tail_pos..self.tail_end]
        } else {
            &messages[self.msg][self.body..self.body_end]
        }
    }

    /// Records `k` hashed blocks; returns whether the message is done.
    fn advance(&mut self, k: usize, m: &[u8]) -> bool {
        if self.in_tail {
            self.tail_pos += 64 * k;
            self.tail_pos == self.tail_end
        } else {
            self.body += 64 * k;
            if self.body == self.body_end {
                self.enter_tail(m);
            }
            false
        }
    }
}

/// The chaining values of 16 lanes: `[register][A, B, C, D][lane]`.
type State = [[[u32; W]; 4]; 2];

/// Sets lane `l` of `st` to the initial value.
fn reset(st: &mut State, l: usize) {
    for (w, iv) in IV.into_iter().enumerate() {
        st[l / W][w][l % W] = iv;
    }
}

/// Hashes the messages `order` (indices into `messages`) in AVX2 lanes, in that order,
/// storing their digests in `digests`.
///
/// # Safety
///
/// The CPU supports AVX2.
///
/// # Panics
///
/// If an index is out of bounds of `messages` or `digests`.
pub(super) unsafe fn hash_lanes(messages: &[&[u8]], order: &[usize], digests: &mut [[u8; 16]]) {
    let mut lanes = [Lane::IDLE; LANES];
    let mut st: State = [[[0; W]; 4]; 2];
    let mut queue = order.iter().copied();
    for (l, lane) in lanes.iter_mut().enumerate() {
        if let Some(i) = queue.next() {
            lane.start(i, messages[i]);
            reset(&mut st, l);
        }
    }
    loop {
        let active = lanes.iter().filter(|l| l.is_active()).count();
        if active == 0 {
            break;
        }
        if active <= W {
            // Move the active lanes into the first register.
            for hi in W..LANES {
                if lanes[hi].is_active() {
                    let lo = (0..W).find(|&l| !lanes[l].is_active()).unwrap();
                    lanes.swap(lo, hi);
                    let [st0, st1] = &mut st;
                    for (to, from) in st0.iter_mut().zip(st1.iter()) {
                        to[lo] = from[hi - W];
                    }
                }
            }
        }
        let k = lanes
            .iter()
            .filter(|l| l.is_active())
            .map(|l| l.data(messages).len() / 64)
            .min()
            .unwrap();
        let filler = lanes.iter().find(|l| l.is_active()).unwrap().data(messages);
        let mut data: [[&[u8]; W]; 2] = [[filler; W]; 2];
        for (l, lane) in lanes.iter().enumerate() {
            if lane.is_active() {
                data[l / W][l % W] = lane.data(messages);
            }
        }
        if active <= W {
            let (st0, data0) = (
                std::array::from_mut(&mut st[0]),
                std::array::from_ref(&data[0]),
            );
            // SAFETY: the caller guarantees AVX2.
            unsafe { compress::<1>(st0, data0, k) };
        } else {
            // SAFETY: the caller guarantees AVX2.
            unsafe { compress::<2>(&mut st, &data, k) };
        }
        for (l, lane) in lanes.iter_mut().enumerate() {
            if lane.is_active() && lane.advance(k, messages[lane.msg]) {
                let d = &mut digests[lane.msg];
                for w in 0..4 {
                    d[4 * w..4 * w + 4].copy_from_slice(&st[l / W][w][l % W].to_le_bytes());
                }
                match queue.next() {
                    Some(i) => {
                        lane.start(i, messages[i]);
                        reset(&mut st, l);
                    }
                    None => *lane = Lane::IDLE,
                }
            }
        }
    }
}

/// `rotl(x, s)` of each 32-bit lane.
macro_rules! rotl {
    ($x:expr, $s:literal) => {{
        let x = $x;
        _mm256_or_si256(
            _mm256_slli_epi32::<$s>(x),
            _mm256_srli_epi32::<{ 32 - $s }>(x),
        )
    }};
}

/// `x + F(b, c, d)`, `F = (b ∧ c) ∨ (¬b ∧ d) = d ⊕ (b ∧ (c ⊕ d))`.
macro_rules! f_add {
    ($x:expr, $b:expr, $c:expr, $d:expr, $ones:expr) => {
        _mm256_add_epi32(
            $x,
            _mm256_xor_si256($d, _mm256_and_si256($b, _mm256_xor_si256($c, $d))),
        )
    };
}

/// `x + G(b, c, d)`, `G = (b ∧ d) ∨ (c ∧ ¬d)`: the two terms share no bits, so they are
/// added one after the other, `c ∧ ¬d` first (it does not wait for `b`).
macro_rules! g_add {
    ($x:expr, $b:expr, $c:expr, $d:expr, $ones:expr) => {
        _mm256_add_epi32(
            _mm256_add_epi32($x, _mm256_andnot_si256($d, $c)),
            _mm256_and_si256($b, $d),
        )
    };
}

/// `x + H(b, c, d)`, `H = b ⊕ c ⊕ d`.
macro_rules! h_add {
    ($x:expr, $b:expr, $c:expr, $d:expr, $ones:expr) => {
        _mm256_add_epi32($x, _mm256_xor_si256($b, _mm256_xor_si256($c, $d)))
    };
}

/// `x + I(b, c, d)`, `I = c ⊕ (b ∨ ¬d)`.
macro_rules! i_add {
    ($x:expr, $b:expr, $c:expr, $d:expr, $ones:expr) => {
        _mm256_add_epi32(
            $x,
            _mm256_xor_si256($c, _mm256_or_si256($b, _mm256_xor_si256($d, $ones))),
        )
    };
}

/// Transposes 8 vectors of 8 words: word `j` of vector `i` goes to word `i` of vector `j`.
///
/// # Safety
///
/// The CPU supports AVX2.
#[inline]
#[target_feature(enable = "avx2")]
#[allow(unused_unsafe)] // the intrinsics are `unsafe fn` on toolchains before Rust 1.87
unsafe fn transpose8(r: [__m256i; 8]) -> [__m256i; 8] {
    // SAFETY: register-only AVX2 intrinsics; AVX2 is enabled on this function and the caller
    // guarantees that the CPU supports it.
    unsafe {
        // Pairs of rows interleaved: words (0 1 4 5) and (2 3 6 7) of rows 2i, 2i + 1.
        let t0 = _mm256_unpacklo_epi32(r[0], r[1]);
        let t1 = _mm256_unpackhi_epi32(r[0], r[1]);
        let t2 = _mm256_unpacklo_epi32(r[2], r[3]);
        let t3 = _mm256_unpackhi_epi32(r[2], r[3]);
        let t4 = _mm256_unpacklo_epi32(r[4], r[5]);
        let t5 = _mm256_unpackhi_epi32(r[4], r[5]);
        let t6 = _mm256_unpacklo_epi32(r[6], r[7]);
        let t7 = _mm256_unpackhi_epi32(r[6], r[7]);
        // Word j (low half) and j + 4 (high half) of rows 0..4, resp. 4..8.
        let u0 = _mm256_unpacklo_epi64(t0, t2);
        let u1 = _mm256_unpackhi_epi64(t0, t2);
        let u2 = _mm256_unpacklo_epi64(t1, t3);
        let u3 = _mm256_unpackhi_epi64(t1, t3);
        let u4 = _mm256_unpacklo_epi64(t4, t6);
        let u5 = _mm256_unpackhi_epi64(t4, t6);
        let u6 = _mm256_unpacklo_epi64(t5, t7);
        let u7 = _mm256_unpackhi_epi64(t5, t7);
        [
            _mm256_permute2x128_si256::<0x20>(u0, u4),
            _mm256_permute2x128_si256::<0x20>(u1, u5),
            _mm256_permute2x128_si256::<0x20>(u2, u6),
            _mm256_permute2x128_si256::<0x20>(u3, u7),
            _mm256_permute2x128_si256::<0x31>(u0, u4),
            _mm256_permute2x128_si256::<0x31>(u1, u5),
            _mm256_permute2x128_si256::<0x31>(u2, u6),
            _mm256_permute2x128_si256::<0x31>(u3, u7),
        ]
    }
}

/// Runs the MD5 compression function over `blocks` blocks of `8·G` lanes: lane `i` of
/// register `g` (state words `state[g][0..4][i]`) hashes `data[g][i][0..64·blocks]`.
///
/// # Safety
///
/// The CPU supports AVX2.
///
/// # Panics
///
/// If a slice of `data` is shorter than `64·blocks` bytes.
#[target_feature(enable = "avx2")]
#[allow(unused_unsafe)] // the intrinsics are `unsafe fn` on toolchains before Rust 1.87
unsafe fn compress<const G: usize>(
    state: &mut [[[u32; W]; 4]; G],
    data: &[[&[u8]; W]; G],
    blocks: usize,
) {
    let len = blocks.checked_mul(64).unwrap();
    assert!(data.iter().flatten().all(|d| d.len() >= len));
    // SAFETY: AVX2 is enabled on this function and the caller guarantees that the CPU supports
    // it. State loads and stores access the 32 bytes of one `[u32; 8]`. Block `n < blocks`
    // of a lane reads bytes [64n, 64n + 64) of its slice, within the `64·blocks` bytes
    // asserted above.
    unsafe {
        let zero = _mm256_setzero_si256();
        let ones = _mm256_set1_epi32(-1);
        let mut a = [zero; G];
        let mut b = [zero; G];
        let mut c = [zero; G];
        let mut d = [zero; G];
        for g in 0..G {
            a[g] = _mm256_loadu_si256(state[g][0].as_ptr().cast());
            b[g] = _mm256_loadu_si256(state[g][1].as_ptr().cast());
            c[g] = _mm256_loadu_si256(state[g][2].as_ptr().cast());
            d[g] = _mm256_loadu_si256(state[g][3].as_ptr().cast());
        }
        let mut ptr = [[std::ptr::null::<u8>(); W]; G];
        for g in 0..G {
            for i in 0..W {
                ptr[g][i] = data[g][i].as_ptr();
            }
        }
        for n in 0..blocks {
            let off = 64 * n;
            let mut m = [[zero; 16]; G];
            for g in 0..G {
                for half in 0..2 {
                    let mut r = [zero; 8];
                    for i in 0..W {
                        r[i] = _mm256_loadu_si256(ptr[g][i].add(off + 32 * half).cast());
                    }
                    let t = transpose8(r);
                    m[g][8 * half..8 * half + 8].copy_from_slice(&t);
                }
            }
            let (a0, b0, c0, d0) = (a, b, c, d);

            // One step: a = b + rotl(a + f(b, c, d) + m[j] + K[i], s).
            macro_rules! step {
                ($f:ident, $a:ident, $b:ident, $c:ident, $d:ident, $j:literal, $i:expr, $s:literal) => {
                    for g in 0..G {
                        let x = _mm256_add_epi32(m[g][$j], _mm256_set1_epi32(K[$i] as i32));
                        let x = $f!(_mm256_add_epi32($a[g], x), $b[g], $c[g], $d[g], ones);
                        $a[g] = _mm256_add_epi32($b[g], rotl!(x, $s));
                    }
                };
            }
            // Four steps with the roles of a, b, c, d rotating.
            macro_rules! steps4 {
                ($f:ident, $i:expr, [$j0:literal, $j1:literal, $j2:literal, $j3:literal],
                 [$s0:literal, $s1:literal, $s2:literal, $s3:literal]) => {
                    step!($f, a, b, c, d, $j0, $i, $s0);
                    step!($f, d, a, b, c, $j1, $i + 1, $s1);
                    step!($f, c, d, a, b, $j2, $i + 2, $s2);
                    step!($f, b, c, d, a, $j3, $i + 3, $s3);
                };
            }
            steps4!(f_add, 0, [0, 1, 2, 3], [7, 12, 17, 22]);
            steps4!(f_add, 4, [4, 5, 6, 7], [7, 12, 17, 22]);
            steps4!(f_add, 8, [8, 9, 10, 11], [7, 12, 17, 22]);
            steps4!(f_add, 12, [12, 13, 14, 15], [7, 12, 17, 22]);
            steps4!(g_add, 16, [1, 6, 11, 0], [5, 9, 14, 20]);
            steps4!(g_add, 20, [5, 10, 15, 4], [5, 9, 14, 20]);
            steps4!(g_add, 24, [9, 14, 3, 8], [5, 9, 14, 20]);
            steps4!(g_add, 28, [13, 2, 7, 12], [5, 9, 14, 20]);
            steps4!(h_add, 32, [5, 8, 11, 14], [4, 11, 16, 23]);
            steps4!(h_add, 36, [1, 4, 7, 10], [4, 11, 16, 23]);
            steps4!(h_add, 40, [13, 0, 3, 6], [4, 11, 16, 23]);
            steps4!(h_add, 44, [9, 12, 15, 2], [4, 11, 16, 23]);
            steps4!(i_add, 48, [0, 7, 14, 5], [6, 10, 15, 21]);
            steps4!(i_add, 52, [12, 3, 10, 1], [6, 10, 15, 21]);
            steps4!(i_add, 56, [8, 15, 6, 13], [6, 10, 15, 21]);
            steps4!(i_add, 60, [4, 11, 2, 9], [6, 10, 15, 21]);

            for g in 0..G {
                a[g] = _mm256_add_epi32(a[g], a0[g]);
                b[g] = _mm256_add_epi32(b[g], b0[g]);
                c[g] = _mm256_add_epi32(c[g], c0[g]);
                d[g] = _mm256_add_epi32(d[g], d0[g]);
            }
        }
        for g in 0..G {
            _mm256_storeu_si256(state[g][0].as_mut_ptr().cast(), a[g]);
            _mm256_storeu_si256(state[g][1].as_mut_ptr().cast(), b[g]);
            _mm256_storeu_si256(state[g][2].as_mut_ptr().cast(), c[g]);
            _mm256_storeu_si256(state[g][3].as_mut_ptr().cast(), d[g]);
        }
    }
}
