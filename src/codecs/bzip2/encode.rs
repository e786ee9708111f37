//! bzip2 encoder whose bytes equal libbzip2 1.0.8's (`BZ2_bzBuffToBuffCompress`, any block
//! size, work factor 30, everything in one `BZ_FINISH` call).
//!
//! libbzip2's decisions are reproduced step by step: the run-length (RLE1) coding and the
//! points where a block is full, the MTF and zero-run coding, the initial split of the
//! alphabet between coding tables, the four refinement passes, its Huffman code-length
//! algorithm (heap order and the depth tie-break included) and the order of every field. Only
//! the Burrows–Wheeler sort differs: libbzip2 sorts rotations with its own
//! quicksort/radix/fallback machinery; here the block is rotated to its least rotation (a
//! Lyndon word when the block is primitive, whose suffix order is its rotation order) and
//! suffix-sorted by libsais in linear time. For a primitive block the sorted order of
//! rotations is unique, so both give the same transform. A periodic block has equal
//! rotations whose order libbzip2 leaves to its sorting details; for those `compress` reports
//! [`Unsupported::PeriodicBlock`] and the caller uses libbzip2.

use super::bit_writer::BitWriter;
use super::crc::{Crc, combine};
use super::{BLOCK_MAGIC, END_MAGIC, GROUP_SIZE, MAX_ALPHA, MAX_CODE_LEN, MAX_TABLES, RUNA, RUNB};
use libsais::SuffixArrayConstruction;
use libsais::context::Context;
use libsais::typestate::SingleThreaded;

/// Why a stream cannot be written here (the caller then uses libbzip2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsupported {
    /// A block equals one of its own proper rotations.
    PeriodicBlock,
    /// The block-size level is outside 1–9.
    Level,
    /// libsais could not sort the block (it reports this only for invalid arguments).
    SuffixSort,
}

/// libbzip2's refinement passes over the coding tables.
const ITERATIONS: usize = 4;
/// Initial cost of a symbol outside a table's share of the alphabet.
const GREATER_COST: u8 = 15;
/// Initial cost of a symbol inside it.
const LESSER_COST: u8 = 0;
/// Suffix-array entries an encoder keeps between calls (enough for level-1 blocks).
const KEEP_CAPACITY: usize = 128 << 10;

/// Reusable buffers of one encoding thread.
#[derive(Default)]
pub struct Encoder {
    /// libsais's reusable working memory (made on first use).
    sais: Option<Context<u8, i32, SingleThreaded>>,
    block: Vec<u8>,
    lyndon: Vec<u8>,
    sa: Vec<i32>,
    mtfv: Vec<u16>,
    selectors: Vec<u8>,
}

/// One block's RLE1 bytes and their bookkeeping.
struct BlockInfo {
    crc: u32,
    in_use: [bool; 256],
}

impl Encoder {
    /// An encoder with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the bzip2 stream of `src` at block-size `level` (1–9) to `out`, byte for byte
    /// what libbzip2 writes. On `Err`, `out` is as it was.
    pub fn compress(
        &mut self,
        level: u32,
        src: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), Unsupported> {
        if !(1..=9).contains(&level) {
            return Err(Unsupported::Level);
        }
        let start = out.len();
        let result = self.compress_stream(level, src, out);
        if result.is_err() {
            out.truncate(start);
        }
        if self.sa.capacity() > KEEP_CAPACITY {
            // A large part (big blocks): do not keep megabytes per thread afterwards.
            *self = Encoder::default();
        }
        result
    }

    fn compress_stream(
        &mut self,
        level: u32,
        src: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), Unsupported> {
        let block_max = super::block_capacity(level) - 19;
        // A refused call may have left a block behind.
        self.block.clear();
        out.reserve(src.len() / 2 + 64);
        let mut w = BitWriter::new(out);
        w.put(24, u32::from_be_bytes([0, b'B', b'Z', b'h']));
        w.put(8, b'0' as u32 + level);
        let mut combined = 0u32;

        let mut rle = Rle1::new(block_max);
        let mut pos = 0;
        loop {
            let (consumed, full) = rle.fill(&mut self.block, &src[pos..]);
            pos += consumed;
            if full && pos < src.len() {
                // libbzip2 compresses a full block only when more input follows; at the end
                // of input the pending run is flushed into the last block first.
                let info = rle.take_block(src);
                combined = combine(combined, info.crc);
                self.write_block(&info, &mut w)?;
                self.block.clear();
                continue;
            }
            rle.flush_run(&mut self.block);
            let info = rle.take_block(src);
            if !self.block.is_empty() {
                combined = combine(combined, info.crc);
                self.write_block(&info, &mut w)?;
                self.block.clear();
            }
            break;
        }
        w.put48(END_MAGIC);
        w.put(32, combined);
        w.finish();
        Ok(())
    }

    /// Sorts, codes and writes the block in `self.block`.
    fn write_block(&mut self, info: &BlockInfo, w: &mut BitWriter) -> Result<(), Unsupported> {
        let n = self.block.len();
        self.lyndon.clear();
        self.lyndon.extend_from_slice(&self.block);
        self.lyndon.extend_from_slice(&self.block);
        let rot = least_rotation(&self.lyndon).ok_or(Unsupported::PeriodicBlock)?;
        self.lyndon.copy_within(rot..rot + n, 0);
        self.lyndon.truncate(n);
        self.sa.clear();
        self.sa.resize(n, 0);
        if n == 1 {
            self.sa[0] = 0;
        } else {
            let sais = self.sais.get_or_insert_with(Context::new_single_threaded);
            SuffixArrayConstruction::for_text(&self.lyndon[..])
                .in_borrowed_buffer(&mut self.sa[..])
                .single_threaded()
                .with_context(sais)
                .run()
                .map_err(|_| Unsupported::SuffixSort)?;
        }
        // Rotation 0 of the block is the Lyndon word's rotation starting at n - rot.
        let origin = ((n - rot) % n) as i32;

        let mut seq = [0u8; 256];
        let mut n_in_use = 0usize;
        for (b, &used) in info.in_use.iter().enumerate() {
            if used {
                seq[b] = n_in_use as u8;
                n_in_use += 1;
            }
        }
        let mut mtf_freq = [0u32; MAX_ALPHA];
        let orig_ptr = mtf_encode(
            &self.lyndon,
            &self.sa,
            origin,
            &seq,
            n_in_use,
            &mut self.mtfv,
            &mut mtf_freq,
        );

        w.put48(BLOCK_MAGIC);
        w.put(32, info.crc);
        w.put(1, 0);
        w.put(24, orig_ptr as u32);
        send_mtf_values(
            &self.mtfv,
            &mtf_freq,
            n_in_use + 2,
            &info.in_use,
            &mut self.selectors,
            w,
        );
        Ok(())
    }
}

/// The start of the least rotation of the block whose doubled form (`block ++ block`) is
/// `ss`, or `None` when two distinct rotations are equal (the block is a power of a shorter
/// string).
fn least_rotation(ss: &[u8]) -> Option<usize> {
    let n = ss.len() / 2;
    if n <= 1 {
        return Some(0);
    }
    let (mut i, mut j) = (0usize, 1usize);
    while i < n && j < n {
        // Length of the common prefix of the rotations at i and j (at most n).
        let (x, y) = (ss[i], ss[j]);
        let (k, greater) = if x != y {
            (0, x > y)
        } else {
            let (a, b) = (&ss[i..i + n], &ss[j..j + n]);
            let k = common_prefix(a, b);
            if k == n {
                return None;
            }
            (k, a[k] > b[k])
        };
        if greater {
            i += k + 1;
        } else {
            j += k + 1;
        }
        if i == j {
            j += 1;
        }
    }
    Some(i.min(j))
}

/// Length of the common prefix of two equally long slices, eight bytes at a time.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let mut k = 0;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        let d =
            u64::from_le_bytes(x.try_into().unwrap()) ^ u64::from_le_bytes(y.try_into().unwrap());
        if d != 0 {
            return k + (d.trailing_zeros() / 8) as usize;
        }
        k += 8;
    }
    k + a[k..]
        .iter()
        .zip(&b[k..])
        .take_while(|(x, y)| x == y)
        .count()
}

/// Position of byte `c` in `order` (which holds it), eight bytes at a time.
#[inline]
fn find_byte(order: &[u8; 256], c: u8) -> usize {
    let pattern = u64::from_le_bytes([c; 8]);
    for (w, chunk) in order.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(chunk.try_into().unwrap()) ^ pattern;
        let zero = x.wrapping_sub(0x0101_0101_0101_0101) & !x & 0x8080_8080_8080_8080;
        if zero != 0 {
            return w * 8 + (zero.trailing_zeros() / 8) as usize;
        }
    }
    0
}

/// libbzip2's input stage: runs of 4–255 equal bytes become 4 bytes and a count; a block is
/// full once it holds `block_max` bytes (a run still open then carries into the next block).
struct Rle1 {
    block_max: usize,
    ch: u16,
    len: usize,
    in_use: [bool; 256],
    /// Input offset where the current block's first byte came from.
    block_start: usize,
    /// Input offset just past the last byte flushed into a block.
    flushed: usize,
}

impl Rle1 {
    fn new(block_max: usize) -> Self {
        Rle1 {
            block_max,
            ch: 256,
            len: 0,
            in_use: [false; 256],
            block_start: 0,
            flushed: 0,
        }
    }

    fn add_run(&mut self, block: &mut Vec<u8>) {
        let c = self.ch as u8;
        self.in_use[c as usize] = true;
        match self.len {
            1 => block.push(c),
            2 => block.extend_from_slice(&[c, c]),
            3 => block.extend_from_slice(&[c, c, c]),
            l => {
                let extra = (l - 4) as u8;
                self.in_use[extra as usize] = true;
                block.extend_from_slice(&[c, c, c, c, extra]);
            }
        }
        self.flushed += self.len;
    }

    /// Adds bytes of `src` until it is used up or the block is full (checked before each
    /// byte, as libbzip2 does). Returns the bytes consumed and whether the block is full.
    fn fill(&mut self, block: &mut Vec<u8>, src: &[u8]) -> (usize, bool) {
        let mut i = 0;
        while i < src.len() {
            if block.len() >= self.block_max {
                return (i, true);
            }
            let b = src[i] as u16;
            if b != self.ch && self.len == 1 {
                let c = self.ch as u8;
                self.in_use[c as usize] = true;
                block.push(c);
                self.flushed += 1;
                self.ch = b;
            } else if b != self.ch || self.len == 255 {
                if self.ch < 256 {
                    self.add_run(block);
                }
                self.ch = b;
                self.len = 1;
            } else {
                self.len += 1;
            }
            i += 1;
        }
        (i, block.len() >= self.block_max)
    }

    /// Flushes the open run at the end of input.
    fn flush_run(&mut self, block: &mut Vec<u8>) {
        if self.ch < 256 {
            self.add_run(block);
        }
        self.ch = 256;
        self.len = 0;
    }

    /// Closes the current block: its CRC covers the input bytes flushed into it.
    fn take_block(&mut self, src: &[u8]) -> BlockInfo {
        let mut crc = Crc::new();
        crc.update(&src[self.block_start..self.flushed]);
        self.block_start = self.flushed;
        let in_use = std::mem::replace(&mut self.in_use, [false; 256]);
        BlockInfo {
            crc: crc.finish(),
            in_use,
        }
    }
}

/// MTF and zero-run codes the BWT of the block (read off the Lyndon word's suffix array)
/// into `mtfv`, counting symbol frequencies. Returns the origin pointer.
fn mtf_encode(
    text: &[u8],
    sa: &[i32],
    origin: i32,
    seq: &[u8; 256],
    n_in_use: usize,
    mtfv: &mut Vec<u16>,
    freq: &mut [u32; MAX_ALPHA],
) -> usize {
    let n = text.len();
    let eob = (n_in_use + 1) as u16;
    mtfv.clear();
    mtfv.reserve(n + 1);
    let mut order = [0u8; 256];
    for (i, o) in order.iter_mut().enumerate().take(n_in_use) {
        *o = i as u8;
    }
    let mut orig_ptr = 0;
    let mut zeros = 0u32;
    for (k, &p) in sa.iter().enumerate() {
        if p == origin {
            orig_ptr = k;
        }
        let prev = if p == 0 { n - 1 } else { p as usize - 1 };
        let c = seq[text[prev] as usize];
        if order[0] == c {
            zeros += 1;
            continue;
        }
        if zeros > 0 {
            push_zero_run(zeros, mtfv, freq);
            zeros = 0;
        }
        // Move `c` to the front; its old position j ≥ 1 is coded as j + 1.
        let j = find_byte(&order, c);
        if j <= 16 {
            for m in (1..=j).rev() {
                order[m] = order[m - 1];
            }
        } else {
            order.copy_within(0..j, 1);
        }
        order[0] = c;
        mtfv.push(j as u16 + 1);
        freq[j + 1] += 1;
    }
    if zeros > 0 {
        push_zero_run(zeros, mtfv, freq);
    }
    mtfv.push(eob);
    freq[eob as usize] += 1;
    orig_ptr
}

/// Writes a run of `zeros` MTF zeros in bijective base 2 (RUNA = 1, RUNB = 2 per digit).
fn push_zero_run(zeros: u32, mtfv: &mut Vec<u16>, freq: &mut [u32; MAX_ALPHA]) {
    let mut z = zeros - 1;
    loop {
        let sym = if z & 1 == 1 { RUNB } else { RUNA };
        mtfv.push(sym);
        freq[sym as usize] += 1;
        if z < 2 {
            break;
        }
        z = (z - 2) / 2;
    }
}

/// Chooses coding tables and selectors as libbzip2 does and writes the block's symbol map,
/// tables, selectors and coded symbols.
fn send_mtf_values(
    mtfv: &[u16],
    mtf_freq: &[u32; MAX_ALPHA],
    alpha_size: usize,
    in_use: &[bool; 256],
    selectors: &mut Vec<u8>,
    w: &mut BitWriter,
) {
    let n_mtf = mtfv.len();
    let n_groups = match n_mtf {
        0..200 => 2,
        200..600 => 3,
        600..1200 => 4,
        1200..2400 => 5,
        _ => 6,
    };
    let mut len = [[GREATER_COST; MAX_ALPHA]; MAX_TABLES];

    // Initial tables: consecutive slices of the alphabet with about equal total frequency.
    {
        let mut parts_left = n_groups;
        let mut remaining = n_mtf as i64;
        let mut gs: i64 = 0;
        while parts_left > 0 {
            let target = remaining / parts_left as i64;
            let mut ge = gs - 1;
            let mut acc: i64 = 0;
            while acc < target && ge < alpha_size as i64 - 1 {
                ge += 1;
                acc += mtf_freq[ge as usize] as i64;
            }
            if ge > gs
                && parts_left != n_groups
                && parts_left != 1
                && (n_groups - parts_left) % 2 == 1
            {
                acc -= mtf_freq[ge as usize] as i64;
                ge -= 1;
            }
            let t = parts_left - 1;
            for (v, l) in len[t][..alpha_size].iter_mut().enumerate() {
                let v = v as i64;
                *l = if v >= gs && v <= ge {
                    LESSER_COST
                } else {
                    GREATER_COST
                };
            }
            parts_left -= 1;
            gs = ge + 1;
            remaining -= acc;
        }
    }

    // Refinement: give each group of 50 symbols the cheapest table, then rebuild the tables
    // from the symbols they were given.
    let mut rfreq = [[0u32; MAX_ALPHA]; MAX_TABLES];
    for _ in 0..ITERATIONS {
        for f in rfreq.iter_mut().take(n_groups) {
            f[..alpha_size].fill(0);
        }
        selectors.clear();
        // Each symbol's cost under all six tables, 16 bits per table: a group's sums stay
        // below 50 × 17, so the lanes never carry into each other.
        let mut packed = [0u128; MAX_ALPHA];
        for (v, p) in packed[..alpha_size].iter_mut().enumerate() {
            *p = (0..n_groups).fold(0u128, |acc, t| acc | (len[t][v] as u128) << (16 * t));
        }
        for group in mtfv.chunks(GROUP_SIZE) {
            let sum = group.iter().fold(0u128, |acc, &s| acc + packed[s as usize]);
            let cost: [u32; MAX_TABLES] =
                std::array::from_fn(|t| (sum >> (16 * t)) as u32 & 0xFFFF);
            let mut best = 0;
            for t in 1..n_groups {
                if cost[t] < cost[best] {
                    best = t;
                }
            }
            selectors.push(best as u8);
            for &s in group {
                rfreq[best][s as usize] += 1;
            }
        }
        for t in 0..n_groups {
            make_code_lengths(
                &mut len[t][..alpha_size],
                &rfreq[t][..alpha_size],
                MAX_CODE_LEN,
            );
        }
    }

    let mut code = [[0u32; MAX_ALPHA]; MAX_TABLES];
    for t in 0..n_groups {
        assign_codes(&mut code[t][..alpha_size], &len[t][..alpha_size]);
    }

    // Symbol map: which 16-value ranges are used, then the used values of each.
    let mut ranges = 0u32;
    for r in 0..16 {
        if in_use[r * 16..r * 16 + 16].iter().any(|&u| u) {
            ranges |= 1 << (15 - r);
        }
    }
    w.put(16, ranges);
    for r in 0..16 {
        if ranges & (1 << (15 - r)) != 0 {
            let mut bits = 0u32;
            for j in 0..16 {
                if in_use[r * 16 + j] {
                    bits |= 1 << (15 - j);
                }
            }
            w.put(16, bits);
        }
    }

    // Selectors, MTF coded, in unary.
    w.put(3, n_groups as u32);
    w.put(15, selectors.len() as u32);
    let mut order: [u8; MAX_TABLES] = [0, 1, 2, 3, 4, 5];
    for &s in selectors.iter() {
        let j = order.iter().position(|&o| o == s).unwrap_or(0);
        order.copy_within(0..j, 1);
        order[0] = s;
        // j ones then a zero (j ≤ 5).
        w.put(j as u32 + 1, ((1u32 << j) - 1) << 1);
    }

    // Code lengths, delta coded.
    for lens in len.iter().take(n_groups) {
        let mut cur = lens[0] as i32;
        w.put(5, cur as u32);
        for &l in &lens[..alpha_size] {
            let l = l as i32;
            while cur < l {
                w.put(2, 2);
                cur += 1;
            }
            while cur > l {
                w.put(2, 3);
                cur -= 1;
            }
            w.put(1, 0);
        }
    }

    // The symbols.
    for (group, &sel) in mtfv.chunks(GROUP_SIZE).zip(selectors.iter()) {
        let (lens, codes) = (&len[sel as usize], &code[sel as usize]);
        for &s in group {
            w.put(lens[s as usize] as u32, codes[s as usize]);
        }
    }
}

/// libbzip2's Huffman code lengths: a heap of (weight, depth) nodes, depth breaking weight
/// ties, rebuilt with halved weights until no code is longer than `max_len`.
fn make_code_lengths(len: &mut [u8], freq: &[u32], max_len: u8) {
    let alpha = freq.len();
    let mut heap = [0usize; MAX_ALPHA + 2];
    let mut weight = [0u32; MAX_ALPHA * 2];
    let mut parent = [0i32; MAX_ALPHA * 2];
    for i in 0..alpha {
        weight[i + 1] = freq[i].max(1) << 8;
    }
    loop {
        let mut n_nodes = alpha;
        let mut n_heap = 0usize;
        heap[0] = 0;
        weight[0] = 0;
        parent[0] = -2;
        parent[1..=alpha].fill(-1);
        for i in 1..=alpha {
            n_heap += 1;
            heap[n_heap] = i;
            up_heap(&mut heap, &weight, n_heap);
        }
        while n_heap > 1 {
            let n1 = heap[1];
            heap[1] = heap[n_heap];
            n_heap -= 1;
            down_heap(&mut heap, &weight, n_heap);
            let n2 = heap[1];
            heap[1] = heap[n_heap];
            n_heap -= 1;
            down_heap(&mut heap, &weight, n_heap);
            n_nodes += 1;
            parent[n1] = n_nodes as i32;
            parent[n2] = n_nodes as i32;
            let (a, b) = (weight[n1], weight[n2]);
            weight[n_nodes] =
                ((a & 0xFFFF_FF00) + (b & 0xFFFF_FF00)) | (1 + (a & 0xFF).max(b & 0xFF));
            parent[n_nodes] = -1;
            n_heap += 1;
            heap[n_heap] = n_nodes;
            up_heap(&mut heap, &weight, n_heap);
        }
        let mut too_long = false;
        for i in 1..=alpha {
            let mut depth = 0u32;
            let mut k = i;
            while parent[k] >= 0 {
                k = parent[k] as usize;
                depth += 1;
            }
            len[i - 1] = depth.min(255) as u8;
            too_long |= depth > max_len as u32;
        }
        if !too_long {
            return;
        }
        for wt in weight[1..=alpha].iter_mut() {
            let f = *wt >> 8;
            *wt = (1 + f / 2) << 8;
        }
    }
}

fn up_heap(heap: &mut [usize], weight: &[u32], mut z: usize) {
    let tmp = heap[z];
    while weight[tmp] < weight[heap[z >> 1]] {
        heap[z] = heap[z >> 1];
        z >>= 1;
    }
    heap[z] = tmp;
}

fn down_heap(heap: &mut [usize], weight: &[u32], n_heap: usize) {
    let mut z = 1;
    let tmp = heap[z];
    loop {
        let mut y = z << 1;
        if y > n_heap {
            break;
        }
        if y < n_heap && weight[heap[y + 1]] < weight[heap[y]] {
            y += 1;
        }
        if weight[tmp] < weight[heap[y]] {
            break;
        }
        heap[z] = heap[y];
        z = y;
    }
    heap[z] = tmp;
}

/// Canonical codes: by length, then by symbol.
fn assign_codes(code: &mut [u32], len: &[u8]) {
    let min = len.iter().copied().min().unwrap_or(1);
    let max = len.iter().copied().max().unwrap_or(1);
    let mut next = 0u32;
    for l in min..=max {
        for (c, &sl) in code.iter_mut().zip(len) {
            if sl == l {
                *c = next;
                next += 1;
            }
        }
        next <<= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::libbzip2_compress as reference;
    use super::*;
    use crate::codecs::test_data::{Rng, random_walk, small_ints, timestamps};

    /// Compares with libbzip2; returns false when the encoder refused a periodic block.
    fn check(level: u32, src: &[u8], what: &str) -> bool {
        let mut ours = Vec::new();
        match Encoder::new().compress(level, src, &mut ours) {
            Ok(()) => {
                let theirs = reference(level, src);
                if ours != theirs {
                    let at = ours.iter().zip(&theirs).position(|(a, b)| a != b);
                    panic!(
                        "{what} (level {level}, {} bytes): differs at {at:?}, lengths {} vs {}",
                        src.len(),
                        ours.len(),
                        theirs.len()
                    );
                }
                true
            }
            Err(Unsupported::PeriodicBlock) => {
                assert!(ours.is_empty(), "{what}: output left behind");
                false
            }
            Err(e) => panic!("{what}: {e:?}"),
        }
    }

    #[test]
    fn small_and_edge_inputs_match_libbzip2() {
        assert!(check(9, &[], "empty"));
        assert!(check(1, &[7], "one byte"));
        assert!(check(1, &[1, 2], "two bytes"));
        for run in [1, 2, 3, 4, 5, 6, 254, 255, 256, 257, 258, 259, 510, 1000] {
            let mut v = vec![1u8, 2, 3];
            v.extend(std::iter::repeat_n(9u8, run));
            v.extend_from_slice(&[4, 5]);
            assert!(check(1, &v, &format!("run of {run}")));
            // A lone run is periodic (refused) only when its RLE1 form repeats.
            let periodic = (2..=3).contains(&run) || run % 255 == 0 && run > 255;
            assert_eq!(
                check(1, &vec![9u8; run], &format!("only a run of {run}")),
                !periodic,
                "{run}"
            );
        }
        let all: Vec<u8> = (0..=255u8).collect();
        assert!(check(3, &all, "all byte values"));
        assert!(check(3, b"banana", "banana"));
        assert!(check(3, b"abracadabra abracadabra", "text"));
    }

    #[test]
    fn data_sets_match_libbzip2() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for size in [100, 199, 200, 600, 1200, 2400, 5000, 65536] {
            let random: Vec<u8> = (0..size).map(|_| rng.next() as u8).collect();
            assert!(check(1, &random, "random"));
            let seed = size as u64;
            assert!(check(1, &small_ints(size, seed), "small-range int32"));
            assert!(check(1, &timestamps(size, seed), "timestamps"));
            assert!(check(1, &random_walk(size, seed), "random walk"));
            let text: Vec<u8> = (0..size)
                .map(|_| b"  etaoinshrdlucmfw\n"[(rng.next() % 19) as usize])
                .collect();
            assert!(check(9, &text, "text"));
        }
    }

    #[test]
    fn multi_block_streams_match_libbzip2() {
        let mut rng = Rng(42);
        // Runs across the block boundary, at level 1 (99 981-byte blocks).
        let mut v = Vec::new();
        while v.len() < 260_000 {
            let b = rng.next() as u8;
            let n = (rng.next() % 300) as usize;
            v.extend(std::iter::repeat_n(b, n.max(1)));
        }
        assert!(check(1, &v, "runs over blocks"));
        let ts = timestamps(320_000, 8);
        assert!(check(1, &ts, "timestamps over blocks"));
        let random: Vec<u8> = (0..250_000).map(|_| rng.next() as u8).collect();
        assert!(check(2, &random, "random over blocks"));
    }

    #[test]
    fn block_boundary_offsets_match_libbzip2() {
        // The block fills at 99 981 bytes; a run may straddle that point by any amount.
        let mut rng = Rng(7);
        for shift in 0..12usize {
            let mut v: Vec<u8> = (0..99_975 + shift)
                .map(|_| (rng.next() % 200) as u8 + 1)
                .collect();
            v.extend(std::iter::repeat_n(0u8, 40));
            v.extend((0..50).map(|_| rng.next() as u8));
            assert!(check(1, &v, &format!("boundary shift {shift}")));
        }
    }

    #[test]
    fn periodic_blocks_are_refused() {
        let mut out = vec![1, 2, 3];
        assert_eq!(
            Encoder::new().compress(1, &[1, 2, 1, 2, 1, 2, 1, 2], &mut out),
            Err(Unsupported::PeriodicBlock)
        );
        assert_eq!(out, [1, 2, 3]);
        // The encoder that refused stays usable: its next stream is libbzip2's.
        let mut enc = Encoder::new();
        assert!(enc.compress(1, &[7, 7, 7], &mut Vec::new()).is_err());
        let mut again = Vec::new();
        enc.compress(1, b"abc", &mut again).unwrap();
        assert_eq!(again, reference(1, b"abc"));
        assert_eq!(least_rotation(b"abababab"), None);
        assert_eq!(least_rotation(b"baabbaab"), Some(1));
        assert_eq!(least_rotation(b"xx"), Some(0));
        let long: Vec<u8> = (0..40).map(|i| if i == 37 { 0 } else { 5 }).collect();
        let doubled = [long.clone(), long].concat();
        assert_eq!(least_rotation(&doubled), Some(37));
        assert_eq!(
            Encoder::new().compress(0, b"a", &mut out),
            Err(Unsupported::Level)
        );
    }

    #[test]
    fn random_structures_match_libbzip2() {
        let mut rng = Rng(12345);
        let mut enc = Encoder::new();
        let mut compared = 0;
        for case in 0..150 {
            let len = (rng.next() % 20_000) as usize;
            let alphabet = 1 + (rng.next() % 255) as u8;
            let mut v = Vec::with_capacity(len);
            while v.len() < len {
                match rng.next() % 4 {
                    0 if v.len() > 10 => {
                        let back = 1 + (rng.next() as usize % v.len().min(5000));
                        let n = (rng.next() % 40) as usize;
                        for _ in 0..n {
                            v.push(v[v.len() - back]);
                        }
                    }
                    1 => {
                        let n = (rng.next() % 300) as usize;
                        v.extend(std::iter::repeat_n(rng.next() as u8 % alphabet, n));
                    }
                    _ => v.push(rng.next() as u8 % alphabet),
                }
            }
            v.truncate(len);
            let level = 1 + (rng.next() % 9) as u32;
            let mut ours = Vec::new();
            if enc.compress(level, &v, &mut ours).is_ok() {
                assert_eq!(ours, reference(level, &v), "case {case}");
                compared += 1;
            }
        }
        assert!(
            compared >= 145,
            "only {compared} of 150 cases were compared"
        );
    }

    #[test]
    fn large_level_9_stream_matches_libbzip2() {
        let ts = timestamps(2_000_000, 99);
        assert!(check(9, &ts, "2 MB of timestamps"));
    }

    /// Speed against libbzip2 on 64 KiB chunks (`cargo test --release -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn speed_against_libbzip2() {
        let n = 16 << 20;
        let (ts, walk, small) = (timestamps(n, 5), random_walk(n, 6), small_ints(n, 7));
        let mut enc = Encoder::new();
        for (name, data) in [
            ("timestamps", &ts),
            ("random walk", &walk),
            ("small int32", &small),
        ] {
            let mut out = Vec::new();
            let t = std::time::Instant::now();
            for c in data.chunks(65536) {
                out.clear();
                enc.compress(1, c, &mut out).unwrap();
            }
            let ours = t.elapsed().as_secs_f64();
            let t = std::time::Instant::now();
            for c in data.chunks(65536) {
                std::hint::black_box(reference(1, c));
            }
            let theirs = t.elapsed().as_secs_f64();
            let mib = data.len() as f64 / (1 << 20) as f64;
            println!(
                "{name}: ours {:.1} MiB/s, libbzip2 {:.1} MiB/s, {:.2}x",
                mib / ours,
                mib / theirs,
                theirs / ours
            );
        }
    }
}
