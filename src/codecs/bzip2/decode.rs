//! bzip2 decoder: reads the first stream of a buffer into a buffer of the expected size.
//!
//! Per block: Huffman decoding through a 10-bit lookup per table (canonical limits for longer
//! codes); zero runs and MTF, with the MTF list cut into rows whose sizes are kept in 16-bit
//! lanes, so that moving a far entry to the front needs no data-dependent loop; the BWT's
//! last column is stored with each byte's rank, so LF needs no counting-sort pass; the inverse
//! BWT follows LF backwards along up to 64 arcs of its cycle at once (their dependent loads
//! overlap) into segments that are then put in order; finally the RLE1 runs are expanded into
//! the output and the block CRC is computed over it.
//!
//! Whenever this decoder returns `Ok`, the bytes are the ones libbzip2 1.0.8 produces. Inputs
//! libbzip2 might read differently (randomised blocks, over-subscribed Huffman codes in a used
//! table, LF cycles whose length does not divide the block length) are reported as errors,
//! so that the caller can fall back to libbzip2.
//!
//! Buffers are kept per thread between calls: about 6 bytes per byte of the largest block
//! size seen (5.4 MB after a level-9 stream, 0.6 MB after level 1).

use super::crc::{Crc, combine};
use super::{BLOCK_MAGIC, END_MAGIC, GROUP_SIZE, MAX_ALPHA, MAX_TABLES, RUNA, RUNB};
use crate::mem::OutBuf;
use std::cell::RefCell;
use std::fmt;

/// Why a stream could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The stream does not start with "BZh" and a block-size digit 1–9.
    BadHeader,
    /// A block starts with neither the block magic nor the end-of-stream magic.
    BadBlockMagic,
    /// The block is randomised (written only by bzip2 0.9.0); not supported here.
    Randomised,
    /// The symbol map of a block lists no byte value.
    NoSymbols,
    /// The number of Huffman tables is outside 2..=6.
    BadTableCount,
    /// A block declares no selectors.
    NoSelectors,
    /// A selector's MTF index is not below the number of tables.
    BadSelector,
    /// A Huffman code length leaves 1..=20.
    BadCodeLength,
    /// A used Huffman table's code lengths over-subscribe the code space.
    BadHuffmanTable,
    /// The input holds a bit pattern that is no code of the current table.
    BadHuffmanCode,
    /// The block's symbols need more selectors than it declares.
    SelectorsExhausted,
    /// A block holds more bytes than its block size allows.
    BlockTooLong,
    /// The BWT origin pointer is not below the block's length.
    BadOrigPtr,
    /// The BWT links do not lead back to the origin after one pass over the block.
    BadLinks,
    /// A run of four equal bytes ends a block without its count byte.
    MissingRunLength,
    /// A block's stored CRC differs from the CRC of its decoded bytes.
    BlockCrc {
        /// CRC stored in the stream.
        stored: u32,
        /// CRC of the decoded bytes.
        computed: u32,
    },
    /// The stored combined CRC differs from the one computed from the block CRCs.
    StreamCrc {
        /// CRC stored in the stream.
        stored: u32,
        /// CRC combined from the blocks.
        computed: u32,
    },
    /// The input ends before the end-of-stream marker and its CRC.
    Truncated,
    /// The stream decodes to more bytes than the output buffer holds.
    OutputTooLong,
    /// The stream decodes to fewer bytes than the output buffer holds.
    OutputTooShort {
        /// Bytes the stream holds.
        written: usize,
        /// Size of the output buffer.
        expected: usize,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DecodeError::BadHeader => f.write_str("bzip2: bad stream header"),
            DecodeError::BadBlockMagic => f.write_str("bzip2: bad block magic"),
            DecodeError::Randomised => f.write_str("bzip2: randomised block not supported"),
            DecodeError::NoSymbols => f.write_str("bzip2: block uses no byte values"),
            DecodeError::BadTableCount => f.write_str("bzip2: bad number of Huffman tables"),
            DecodeError::NoSelectors => f.write_str("bzip2: block has no selectors"),
            DecodeError::BadSelector => f.write_str("bzip2: bad selector"),
            DecodeError::BadCodeLength => f.write_str("bzip2: bad Huffman code length"),
            DecodeError::BadHuffmanTable => f.write_str("bzip2: over-subscribed Huffman table"),
            DecodeError::BadHuffmanCode => f.write_str("bzip2: invalid Huffman code"),
            DecodeError::SelectorsExhausted => f.write_str("bzip2: block runs past its selectors"),
            DecodeError::BlockTooLong => f.write_str("bzip2: block longer than the block size"),
            DecodeError::BadOrigPtr => f.write_str("bzip2: bad BWT origin pointer"),
            DecodeError::BadLinks => f.write_str("bzip2: BWT links do not form a cycle"),
            DecodeError::MissingRunLength => f.write_str("bzip2: block ends inside a run"),
            DecodeError::BlockCrc { stored, computed } => write!(
                f,
                "bzip2: block CRC mismatch (stored {stored:#010x}, computed {computed:#010x})"
            ),
            DecodeError::StreamCrc { stored, computed } => write!(
                f,
                "bzip2: stream CRC mismatch (stored {stored:#010x}, computed {computed:#010x})"
            ),
            DecodeError::Truncated => f.write_str("bzip2: stream is truncated"),
            DecodeError::OutputTooLong => {
                f.write_str("bzip2: stream holds more bytes than expected")
            }
            DecodeError::OutputTooShort { written, expected } => write!(
                f,
                "bzip2: stream holds {written} bytes, expected {expected}"
            ),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Decodes one bzip2 stream from `src` into exactly `dst` (its length is the expected
/// decompressed size). Bytes after the end of the first stream are ignored.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<(), DecodeError> {
    decompress_into(src, &mut OutBuf::from_init(dst))
}

/// [`decompress`] into exactly the unwritten rest of `dst` (which may not be initialised).
/// On error part of it may have been written.
pub fn decompress_into(src: &[u8], dst: &mut OutBuf<'_>) -> Result<(), DecodeError> {
    if src.len() < 4 || &src[..3] != b"BZh" || !(b'1'..=b'9').contains(&src[3]) {
        return Err(DecodeError::BadHeader);
    }
    let capacity = 100_000 * usize::from(src[3] - b'0');
    let mut scratch = SCRATCH
        .try_with(|s| s.borrow_mut().take())
        .ok()
        .flatten()
        .unwrap_or_else(Scratch::new_boxed);
    let result = decode_stream(&mut scratch, &src[4..], capacity, dst);
    let _ = SCRATCH.try_with(|s| *s.borrow_mut() = Some(scratch));
    result
}

thread_local! {
    /// Buffers kept between calls on one thread (taken out while in use).
    static SCRATCH: RefCell<Option<Box<Scratch>>> = const { RefCell::new(None) };
}

fn decode_stream(
    s: &mut Scratch,
    src: &[u8],
    capacity: usize,
    dst: &mut OutBuf<'_>,
) -> Result<(), DecodeError> {
    let mut br = Bits::new(src);
    let (begin, expected) = (dst.filled(), dst.remaining());
    let mut combined = 0u32;
    loop {
        let magic = (u64::from(br.get(24)) << 24) | u64::from(br.get(24));
        if magic == BLOCK_MAGIC {
            let stored = br.get(32);
            let start = dst.filled();
            s.block(&mut br, capacity, dst)?;
            let mut crc = Crc::new();
            crc.update(&dst.written()[start..]);
            let computed = crc.finish();
            if computed != stored {
                return Err(DecodeError::BlockCrc { stored, computed });
            }
            combined = combine(combined, computed);
        } else if magic == END_MAGIC {
            let stored = br.get(32);
            if br.overrun() {
                return Err(DecodeError::Truncated);
            }
            if stored != combined {
                return Err(DecodeError::StreamCrc {
                    stored,
                    computed: combined,
                });
            }
            if !dst.is_full() {
                return Err(DecodeError::OutputTooShort {
                    written: dst.filled() - begin,
                    expected,
                });
            }
            return Ok(());
        } else if br.overrun() {
            return Err(DecodeError::Truncated);
        } else {
            return Err(DecodeError::BadBlockMagic);
        }
    }
}

/// MSB-first bit reader over a byte slice; reads past the end yield zero bits and are
/// detected afterwards with [`Bits::overrun`].
#[derive(Clone, Copy)]
struct Bits<'a> {
    src: &'a [u8],
    /// Next byte to load (may pass `src.len()` by the virtual zero padding).
    pos: usize,
    /// Valid bits at the top; the bits below are zero or the stream's next bits.
    buf: u64,
    /// Number of valid bits in `buf`.
    count: u32,
}

impl<'a> Bits<'a> {
    fn new(src: &'a [u8]) -> Self {
        Bits {
            src,
            pos: 0,
            buf: 0,
            count: 0,
        }
    }

    /// Tops `buf` up to at least 56 valid bits.
    #[inline(always)]
    fn refill(&mut self) {
        if let Some(chunk) = self.src.get(self.pos..self.pos + 8) {
            let w = u64::from_be_bytes(chunk.try_into().unwrap());
            self.buf |= w >> self.count;
            self.pos += ((63 - self.count) >> 3) as usize;
            self.count |= 56;
        } else {
            (self.pos, self.buf, self.count) =
                refill_tail(self.src, self.pos, self.buf, self.count);
        }
    }

    #[inline(always)]
    fn peek(&self, n: u32) -> u32 {
        (self.buf >> (64 - n)) as u32
    }

    #[inline(always)]
    fn consume(&mut self, n: u32) {
        self.buf <<= n;
        self.count -= n;
    }

    /// Reads `n` bits, 1 ≤ n ≤ 32.
    #[inline]
    fn get(&mut self, n: u32) -> u32 {
        if self.count < n {
            self.refill();
        }
        let v = self.peek(n);
        self.consume(n);
        v
    }

    /// Whether more bits were consumed than the input holds.
    fn overrun(&self) -> bool {
        (self.pos as u64) * 8 - u64::from(self.count) > (self.src.len() as u64) * 8
    }
}

/// Byte-wise refill near the end of the input, padding with zero bytes.
#[cold]
#[inline(never)]
fn refill_tail(src: &[u8], mut pos: usize, mut buf: u64, mut count: u32) -> (usize, u64, u32) {
    while count <= 56 {
        let b = src.get(pos).copied().unwrap_or(0);
        buf |= u64::from(b) << (56 - count);
        pos += 1;
        count += 8;
    }
    (pos, buf, count)
}

/// Bits resolved by one lookup in a table's fast index.
const FAST_BITS: u32 = 10;
/// Longest code length the format allows.
const MAX_LEN: usize = 20;
/// Most selectors that can address symbols: a full 900k block plus EOB, in groups of 50.
const MAX_SELECTORS: usize = 2 + 900_000 / GROUP_SIZE;
/// Most chains followed at once in the inverse BWT.
const MAX_LANES: usize = 64;
/// Block bytes per chain (fewer chains for smaller blocks).
const BYTES_PER_LANE: usize = 1024;
/// Bytes per output segment of a chain.
const SEG: usize = 512;
/// Marks the rows where chains start.
const START: u32 = 1 << 31;
/// Row bits of a link (rows < 900 000 < 2^20).
const ROW_MASK: u32 = (1 << 20) - 1;

/// One Huffman table: a `FAST_BITS` lookup (symbol | length << 9, 0 = longer code or no
/// code) and canonical-code limits for the rest.
struct Table {
    fast: [u16; 1 << FAST_BITS],
    /// Exclusive upper bound of the codes of length ≤ L, left-justified to 20 bits.
    limit: [u32; MAX_LEN + 1],
    /// Index in `perm` of a code of length L, minus the code.
    delta: [i32; MAX_LEN + 1],
    /// Symbols sorted by (length, symbol).
    perm: [u16; MAX_ALPHA],
    max_len: u32,
    /// False if the code lengths over-subscribe the code space.
    ok: bool,
}

impl Table {
    fn new() -> Self {
        Table {
            fast: [0; 1 << FAST_BITS],
            limit: [0; MAX_LEN + 1],
            delta: [0; MAX_LEN + 1],
            perm: [0; MAX_ALPHA],
            max_len: 0,
            ok: false,
        }
    }

    /// Builds the table from code lengths, each in 1..=20.
    fn build(&mut self, lens: &[u8]) {
        let mut count = [0u32; MAX_LEN + 2];
        for &l in lens {
            count[usize::from(l)] += 1;
        }
        let kraft: u32 = (1..=MAX_LEN).map(|l| count[l] << (MAX_LEN - l)).sum();
        self.ok = kraft <= 1 << MAX_LEN;
        if !self.ok {
            return;
        }
        let mut start = [0u32; MAX_LEN + 2];
        for l in 1..=MAX_LEN {
            start[l + 1] = start[l] + count[l];
        }
        let mut next = start;
        for (sym, &l) in lens.iter().enumerate() {
            let l = usize::from(l);
            self.perm[next[l] as usize] = sym as u16;
            next[l] += 1;
        }
        let mut code = 0u32;
        self.max_len = 0;
        for l in 1..=MAX_LEN {
            self.limit[l] = (code + count[l]) << (MAX_LEN - l);
            self.delta[l] = start[l] as i32 - code as i32;
            code = (code + count[l]) << 1;
            if count[l] != 0 {
                self.max_len = l as u32;
            }
        }
        let mut k = 0usize;
        for l in 1..=FAST_BITS as usize {
            let span = 1usize << (FAST_BITS as usize - l);
            for &sym in &self.perm[start[l] as usize..start[l + 1] as usize] {
                self.fast[k..k + span].fill(sym | (l as u16) << 9);
                k += span;
            }
        }
        self.fast[k..].fill(0);
    }

    /// Decodes a code longer than `FAST_BITS` (or reports a pattern that is no code).
    #[cold]
    #[inline(never)]
    fn decode_long(&self, v: u32) -> Option<(u16, u32)> {
        for l in FAST_BITS as usize + 1..=self.max_len as usize {
            if v < self.limit[l] {
                let idx = (v >> (MAX_LEN - l)) as i32 + self.delta[l];
                let sym = *self.perm.get(usize::try_from(idx).ok()?)?;
                return Some((sym, l as u32));
            }
        }
        None
    }
}

/// Buffers reused across blocks and calls.
struct Scratch {
    tables: Vec<Table>,
    selectors: Vec<u8>,
    /// The block's bytes after the inverse BWT (still RLE1-coded).
    l: Vec<u8>,
    /// The BWT's last column L with ranks: entry i is (rank of L[i] at i) << 8 | L[i].
    tt: Vec<u32>,
    /// Segments the inverse BWT's chains write to.
    pool: Vec<u8>,
    /// Filled segments: (chain, first byte, end) in pool.
    segs: Vec<(u32, u32, u32)>,
}

impl Scratch {
    fn new_boxed() -> Box<Scratch> {
        Box::new(Scratch {
            tables: (0..MAX_TABLES).map(|_| Table::new()).collect(),
            selectors: vec![0; MAX_SELECTORS],
            l: Vec::new(),
            tt: Vec::new(),
            pool: Vec::new(),
            segs: Vec::new(),
        })
    }

    /// Decodes one block (after its magic and CRC), appending it to `dst`.
    fn block(
        &mut self,
        br: &mut Bits,
        capacity: usize,
        dst: &mut OutBuf<'_>,
    ) -> Result<(), DecodeError> {
        if br.get(1) != 0 {
            return Err(DecodeError::Randomised);
        }
        let orig_ptr = br.get(24) as usize;

        // Symbol map.
        let mut symbols = [0u8; 256];
        let mut n_in_use = 0usize;
        let used16 = br.get(16);
        for i in 0..16 {
            if used16 & (0x8000 >> i) != 0 {
                let bits = br.get(16);
                for j in 0..16 {
                    if bits & (0x8000 >> j) != 0 {
                        symbols[n_in_use] = (i * 16 + j) as u8;
                        n_in_use += 1;
                    }
                }
            }
        }
        if n_in_use == 0 {
            return Err(DecodeError::NoSymbols);
        }
        let alpha = n_in_use + 2;
        let eob = (n_in_use + 1) as u16;

        // Selectors, MTF-coded in unary.
        let n_groups = br.get(3) as usize;
        if !(2..=MAX_TABLES).contains(&n_groups) {
            return Err(DecodeError::BadTableCount);
        }
        let n_sel = br.get(15) as usize;
        if n_sel == 0 {
            return Err(DecodeError::NoSelectors);
        }
        let mut order = [0u8, 1, 2, 3, 4, 5];
        for i in 0..n_sel {
            if br.count < 8 {
                br.refill();
            }
            let ones = (!(br.peek(8) as u8)).leading_zeros() as usize;
            if ones >= n_groups {
                return Err(DecodeError::BadSelector);
            }
            br.consume(ones as u32 + 1);
            let t = order[ones];
            order.copy_within(0..ones, 1);
            order[0] = t;
            if i < MAX_SELECTORS {
                self.selectors[i] = t;
            }
        }
        let n_sel = n_sel.min(MAX_SELECTORS);

        // Code lengths, delta-coded.
        let mut lens = [0u8; MAX_ALPHA];
        for t in 0..n_groups {
            let mut curr = br.get(5);
            for len in &mut lens[..alpha] {
                loop {
                    if !(1..=MAX_LEN as u32).contains(&curr) {
                        return Err(DecodeError::BadCodeLength);
                    }
                    if br.count < 2 {
                        br.refill();
                    }
                    let two = br.peek(2);
                    if two < 2 {
                        br.consume(1);
                        break;
                    }
                    br.consume(2);
                    if two == 2 {
                        curr += 1;
                    } else {
                        curr -= 1;
                    }
                }
                *len = curr as u8;
            }
            self.tables[t].build(&lens[..alpha]);
        }

        // Huffman + zero runs + MTF into the BWT's last column, with each byte's rank.
        if self.tt.len() < capacity {
            self.tt.resize(capacity, 0);
        }
        let mut counts = [0u32; 256];
        let n = decode_symbols(
            br,
            &self.tables,
            &self.selectors[..n_sel],
            &symbols,
            eob,
            &mut self.tt[..capacity],
            &mut counts,
        )?;
        if br.overrun() {
            return Err(DecodeError::Truncated);
        }
        if orig_ptr >= n {
            return Err(DecodeError::BadOrigPtr);
        }

        // Inverse BWT: LF(i) = (bytes below L[i]) + rank of L[i] at i, followed from the
        // origin row, yields the block's bytes last to first.
        let mut below = [0u32; 256];
        let mut sum = 0u32;
        for (c, &k) in below.iter_mut().zip(counts.iter()) {
            *c = sum;
            sum += k;
        }
        if self.l.len() < n {
            self.l.resize(n, 0);
        }
        inverse_bwt(
            &mut self.tt[..n],
            &below,
            orig_ptr,
            &mut self.pool,
            &mut self.segs,
            &mut self.l[..n],
        )?;
        let raw = &self.l[..n];
        unrle(raw, dst)
    }
}

/// Decodes a block's symbols (Huffman, zero runs, MTF) into `tt`: entry i is the rank of
/// L[i] among the equal bytes before it, shifted left by 8, or'ed with L[i] (L being the
/// BWT's last column). Counts each byte value; returns the number of bytes.
#[inline(never)]
fn decode_symbols(
    reader: &mut Bits,
    tables: &[Table],
    selectors: &[u8],
    symbols: &[u8; 256],
    eob: u16,
    tt: &mut [u32],
    counts: &mut [u32; 256],
) -> Result<usize, DecodeError> {
    // A local copy keeps the reader in registers.
    let mut bits = *reader;
    let br = &mut bits;
    let capacity = tt.len();
    let mut mtf = Mtf::new(symbols, usize::from(eob) - 1);
    let mut n = 0usize;
    let mut run = 0usize;
    let mut run_shift = 0u32;
    for &sel in selectors {
        let table = &tables[usize::from(sel)];
        if !table.ok {
            return Err(DecodeError::BadHuffmanTable);
        }
        for _ in 0..GROUP_SIZE {
            if br.count < MAX_LEN as u32 {
                br.refill();
            }
            let e = table.fast[br.peek(FAST_BITS) as usize];
            let sym = if e != 0 {
                br.consume(u32::from(e >> 9));
                e & 0x1FF
            } else {
                let (sym, len) = table
                    .decode_long(br.peek(MAX_LEN as u32))
                    .ok_or(DecodeError::BadHuffmanCode)?;
                br.consume(len);
                sym
            };
            if sym <= RUNB {
                run += usize::from(sym + 1 - RUNA) << run_shift;
                run_shift += 1;
                if run > capacity {
                    return Err(DecodeError::BlockTooLong);
                }
                continue;
            }
            if run != 0 {
                if run > capacity - n {
                    return Err(DecodeError::BlockTooLong);
                }
                let b = mtf.first();
                let c = &mut counts[usize::from(b)];
                let base = (*c << 8) | u32::from(b);
                for (t, e) in tt[n..n + run].iter_mut().enumerate() {
                    *e = base + ((t as u32) << 8);
                }
                *c += run as u32;
                n += run;
                run = 0;
                run_shift = 0;
            }
            if sym == eob {
                *reader = bits;
                return Ok(n);
            }
            if n >= capacity {
                return Err(DecodeError::BlockTooLong);
            }
            let b = mtf.take(usize::from(sym - 1));
            let c = &mut counts[usize::from(b)];
            tt[n] = (*c << 8) | u32::from(b);
            *c += 1;
            n += 1;
        }
    }
    Err(DecodeError::SelectorsExhausted)
}

/// Row slots of the MTF list.
const SLOTS: usize = 32;
/// High bit of each 16-bit lane.
const LANE_HIGH: u64 = 0x8000_8000_8000_8000;
/// Low bit of each 16-bit lane.
const LANE_ONES: u64 = 0x0001_0001_0001_0001;
/// Lane value of an unused slot (never at most an index).
const UNUSED: u64 = 0x7FFF;

/// The MTF list, cut into rows of up to 16 entries (entry j of a row in byte j of a `u128`)
/// so that moving an entry to the front touches only its row and the front row. The front
/// row (`front`, `f` entries) is kept apart for the common small indices. The other rows
/// are in `rows`, the front's slot being `top` and the next row's `top - 1`, and so on; `q`
/// holds, in 16-bit lanes per slot, the number of entries up to and including that row, so
/// the row holding an index is found by counting lanes without a data-dependent loop. When
/// the front row fills, it is split into a new front row; when the slots run out, the rows
/// are laid out afresh.
struct Mtf {
    front: u128,
    f: usize,
    rows: [u128; SLOTS],
    q: [u64; SLOTS / 4],
    top: usize,
    len: usize,
}

impl Mtf {
    /// A list holding `symbols[..len]` in order (1 ≤ len ≤ 256).
    fn new(symbols: &[u8; 256], len: usize) -> Self {
        let mut list = [0u8; 256 + 16];
        list[..256].copy_from_slice(symbols);
        let mut m = Mtf {
            front: 0,
            f: 0,
            rows: [0; SLOTS],
            q: [0; SLOTS / 4],
            top: 0,
            len,
        };
        m.lay_out(&list);
        m
    }

    /// Lays `list[..len]` out with 8 entries in the front row and 16 in each other.
    fn lay_out(&mut self, list: &[u8; 256 + 16]) {
        let len = self.len;
        self.f = len.min(8);
        let mask = u128::MAX >> (128 - 8 * self.f);
        self.front = u128::from_le_bytes(list[..16].try_into().unwrap()) & mask;
        let k = (len - self.f).div_ceil(16);
        self.top = k;
        self.q = [UNUSED * LANE_ONES; SLOTS / 4];
        self.set_lane(k, self.f);
        for j in 1..=k {
            let at = self.f + 16 * (j - 1);
            self.rows[k - j] = u128::from_le_bytes(list[at..at + 16].try_into().unwrap());
            self.set_lane(k - j, (at + 16).min(len));
        }
    }

    fn lane(&self, slot: usize) -> usize {
        (self.q[slot / 4] >> (16 * (slot % 4)) & 0xFFFF) as usize
    }

    fn set_lane(&mut self, slot: usize, v: usize) {
        let sh = 16 * (slot % 4);
        let w = &mut self.q[slot / 4];
        *w = (*w & !(0xFFFF << sh)) | (v as u64) << sh;
    }

    #[inline(always)]
    fn first(&self) -> u8 {
        self.front as u8
    }

    /// Removes entry `idx` (< len) and puts it first; returns it.
    #[inline(always)]
    fn take(&mut self, idx: usize) -> u8 {
        if idx < self.f {
            let off = 8 * idx as u32;
            let below = (1u128 << off) - 1;
            let keep = !((below << 8) | 0xFF);
            let c = self.front;
            let b = (c >> off) as u8;
            self.front = (c & keep) | ((c & below) << 8) | u128::from(b);
            return b;
        }
        // Rows whose count is at most idx come before the one holding it; each of them
        // (the front row included) is one entry further from the start afterwards.
        let idx_lanes = (idx as u64 * LANE_ONES) | LANE_HIGH;
        let mut ones = 0u64;
        let mut q = self.q;
        for w in &mut q {
            let one = (idx_lanes.wrapping_sub(*w) & LANE_HIGH) >> 15;
            ones += one;
            *w += one;
        }
        let before = (ones.wrapping_mul(LANE_ONES) >> 48) as usize;
        let slot = self.top - before;
        let off = 8 * (idx - self.lane(slot + 1)) as u32;
        self.q = q;
        let c = self.rows[slot];
        let b = (c >> off) as u8;
        let below = (1u128 << off) - 1;
        self.rows[slot] = (c & below) | ((c >> 8) & !below);
        self.front = (self.front << 8) | u128::from(b);
        self.f += 1;
        if self.f == 16 {
            self.split_front();
        }
        b
    }

    /// Moves the last 8 entries of the full front row into a row of their own.
    #[inline(always)]
    fn split_front(&mut self) {
        if self.top + 1 == SLOTS {
            self.compact();
            return;
        }
        self.rows[self.top] = self.front >> 64;
        self.front &= u128::from(u64::MAX);
        self.f = 8;
        self.top += 1;
        self.set_lane(self.top, 8);
    }

    /// Lays the list out afresh (the front row being full).
    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        let mut list = [0u8; 256 + 16];
        list[..16].copy_from_slice(&self.front.to_le_bytes());
        let mut at = 16;
        for slot in (0..self.top).rev() {
            list[at..at + 16].copy_from_slice(&self.rows[slot].to_le_bytes());
            at += self.lane(slot) - self.lane(slot + 1);
        }
        self.lay_out(&list);
    }
}

/// LF of a `tt` entry (rank << 8 | byte, maybe with [`START`]): the byte's rank plus the
/// number of smaller bytes in the block.
#[inline(always)]
fn lf(below: &[u32; 256], e: u32) -> u32 {
    below[(e & 0xFF) as usize] + ((e >> 8) & ROW_MASK)
}

/// Follows LF (see [`lf`]) from `orig_ptr` through the entries of `tt`, writing the bytes
/// met, reversed, to `raw`: the block's bytes in order. The rows are cut at up to 63 more
/// starting rows into arcs that are followed at once, so that the dependent loads of
/// different arcs overlap; each arc writes its bytes backwards into 512-byte segments of
/// `pool`, which are put in order at the end. Fails where libbzip2's forward walk could
/// produce other bytes (LF's cycle through `orig_ptr` not dividing the block).
#[inline(never)]
fn inverse_bwt(
    tt: &mut [u32],
    below: &[u32; 256],
    orig_ptr: usize,
    pool: &mut Vec<u8>,
    segs: &mut Vec<(u32, u32, u32)>,
    raw: &mut [u8],
) -> Result<(), DecodeError> {
    let n = tt.len();
    let lanes = (n / BYTES_PER_LANE).clamp(1, MAX_LANES);
    // Arc j starts at row starts[j]; arc 0 at the origin.
    let mut starts = [0u32; MAX_LANES];
    for (j, s) in starts[..lanes].iter_mut().enumerate() {
        *s = ((orig_ptr + j * (n / lanes)) % n) as u32;
        tt[*s as usize] |= START;
    }
    let max_segs = n / SEG + 2 * lanes + 1;
    if pool.len() < max_segs * SEG {
        pool.resize(max_segs * SEG, 0);
    }
    // A plain slice: byte stores through the Vec would make its length reload each step.
    let pool = &mut pool[..];
    segs.clear();

    // Lanes [0, active) are running; a lane's next byte goes to pool[w - 1], and its
    // segment is exhausted when w is a multiple of SEG.
    #[derive(Clone, Copy, Default)]
    struct Lane {
        row: u32,
        w: u32,
        arc: u32,
    }
    let seg_end = |w: u32| (w & !(SEG as u32 - 1)) + SEG as u32;
    let mut lane = [Lane::default(); MAX_LANES];
    let mut ends = [0u32; MAX_LANES];
    let mut lens = [0usize; MAX_LANES];
    for (l, ln) in lane[..lanes].iter_mut().enumerate() {
        let e = tt[starts[l] as usize];
        let w = ((l + 1) * SEG - 1) as u32;
        pool[w as usize] = e as u8;
        *ln = Lane {
            row: lf(below, e),
            w,
            arc: l as u32,
        };
    }
    let mut next_seg = lanes;
    let mut active = lanes;
    // Every round each running lane takes a step or ends, and LF is a permutation, so the
    // lanes never take more than n steps in all; the round limit only guards that.
    let mut rounds = 0;
    while active > 0 {
        rounds += 1;
        if rounds > n {
            return Err(DecodeError::BadLinks);
        }
        let mut stalled = false;
        for ln in &mut lane[..active] {
            let e = tt[ln.row as usize];
            if e & START != 0 || ln.w % SEG as u32 == 0 {
                stalled = true;
                continue;
            }
            ln.w -= 1;
            pool[ln.w as usize] = e as u8;
            ln.row = lf(below, e);
        }
        if stalled {
            // Lanes that reached an arc start end; lanes with a full segment get a new one
            // and take their step now.
            let mut l = 0;
            while l < active {
                let ln = &mut lane[l];
                let e = tt[ln.row as usize];
                if e & START != 0 {
                    let a = ln.arc as usize;
                    ends[a] = ln.row;
                    lens[a] += (seg_end(ln.w) - ln.w) as usize;
                    segs.push((ln.arc, ln.w, seg_end(ln.w)));
                    active -= 1;
                    lane[l] = lane[active];
                    continue;
                }
                if ln.w % SEG as u32 == 0 {
                    lens[ln.arc as usize] += SEG;
                    segs.push((ln.arc, ln.w, ln.w + SEG as u32));
                    if next_seg >= max_segs {
                        return Err(DecodeError::BadLinks);
                    }
                    ln.w = ((next_seg + 1) * SEG - 1) as u32;
                    next_seg += 1;
                    pool[ln.w as usize] = e as u8;
                    ln.row = lf(below, e);
                }
                l += 1;
            }
        }
    }

    // Chain the arcs from the origin's around its cycle. A cycle shorter than the block
    // (a periodic block) is walked repeatedly by libbzip2; its bytes then repeat here too,
    // which is the same only if the cycle length divides the block length.
    let mut order = [0u32; MAX_LANES];
    let mut count = 0;
    let mut a = 0usize;
    let mut cycle = 0usize;
    loop {
        if count == lanes {
            return Err(DecodeError::BadLinks);
        }
        order[count] = a as u32;
        count += 1;
        cycle += lens[a];
        a = starts[..lanes]
            .iter()
            .position(|&s| s == ends[a])
            .ok_or(DecodeError::BadLinks)?;
        if a == 0 {
            break;
        }
    }
    if cycle == 0 || !n.is_multiple_of(cycle) {
        return Err(DecodeError::BadLinks);
    }
    // Walk order is reverse text order: last arc first, and within an arc, the segments
    // filled last first (each segment holds its bytes in text order).
    let mut at = n - cycle;
    for &a in order[..count].iter().rev() {
        for &(sa, from, to) in segs.iter().rev() {
            if sa == a {
                let piece = &pool[from as usize..to as usize];
                raw.get_mut(at..at + piece.len())
                    .ok_or(DecodeError::BadLinks)?
                    .copy_from_slice(piece);
                at += piece.len();
            }
        }
    }
    for i in (0..n - cycle).rev() {
        raw[i] = raw[i + cycle];
    }
    Ok(())
}

/// Expands the RLE1 runs of `raw` (four equal bytes then a count 0–255 of further copies)
/// appending them to `dst`.
fn unrle(raw: &[u8], dst: &mut OutBuf<'_>) -> Result<(), DecodeError> {
    let n = raw.len();
    let mut i = 0;
    while i < n {
        let j = find_run(raw, i);
        let seg = &raw[i..j];
        if seg.len() > dst.remaining() {
            return Err(DecodeError::OutputTooLong);
        }
        dst.put(seg);
        if j == n {
            break;
        }
        let Some(&extra) = raw.get(j + 4) else {
            return Err(DecodeError::MissingRunLength);
        };
        let run = 4 + usize::from(extra);
        if run > dst.remaining() {
            return Err(DecodeError::OutputTooLong);
        }
        dst.fill(raw[j], run);
        i = j + 5;
    }
    Ok(())
}

/// First position ≥ `p` where four equal bytes start, or `raw.len()`.
#[inline]
fn find_run(raw: &[u8], mut p: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // High bits of bytes 0..=4: the starts whose four bytes lie in the loaded word.
    const HIGH5: u64 = 0x0000_0080_8080_8080;
    while let Some(w) = raw.get(p..p + 8) {
        let x = u64::from_le_bytes(w.try_into().unwrap());
        let y = x ^ (x >> 8);
        let z = y | (y >> 8) | (y >> 16);
        let t = z.wrapping_sub(ONES) & !z & HIGH5;
        if t != 0 {
            return p + (t.trailing_zeros() / 8) as usize;
        }
        p += 5;
    }
    while p + 3 < raw.len() {
        let b = raw[p];
        if raw[p + 1] == b && raw[p + 2] == b && raw[p + 3] == b {
            return p;
        }
        p += 1;
    }
    raw.len()
}

#[cfg(test)]
mod tests {
    use super::super::libbzip2_compress as bz;
    use super::*;
    use crate::codecs::test_data::*;
    use bzip2::{Decompress, Status};
    use std::time::Instant;

    /// libbzip2's reading, as the BZIP2 filter does it: `None` where it fails.
    fn unbz(src: &[u8], len: usize) -> Option<Vec<u8>> {
        let mut d = Decompress::new(false);
        let mut out = vec![0u8; len];
        match d.decompress(src, &mut out) {
            Ok(Status::StreamEnd) if d.total_out() as usize == len => Some(out),
            _ => None,
        }
    }

    fn ours(src: &[u8], len: usize) -> Result<Vec<u8>, DecodeError> {
        let mut out = vec![0u8; len];
        decompress(src, &mut out).map(|()| out)
    }

    /// The error of a decode (keeps assertion messages short).
    fn err(r: Result<Vec<u8>, DecodeError>) -> Option<DecodeError> {
        r.err()
    }

    fn float_walk(n: usize, seed: u64) -> Vec<u8> {
        let mut r = Rng(seed);
        let mut x = 100.0f64;
        let mut v = Vec::with_capacity(n * 8);
        for _ in 0..n {
            x += (r.next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            v.extend_from_slice(&x.to_le_bytes());
        }
        v
    }

    /// Bytes with a steep (geometric) distribution, so some codes get long.
    fn skewed(n: usize, seed: u64) -> Vec<u8> {
        let mut r = Rng(seed);
        (0..n)
            .map(|_| {
                let x = r.next();
                ((x as u32).leading_zeros() * 8 + (x >> 40) as u32 % 8).min(255) as u8
            })
            .collect()
    }

    fn inputs() -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<(String, Vec<u8>)> = vec![
            ("empty".into(), vec![]),
            ("one byte".into(), vec![42]),
            ("all byte values".into(), (0..=255u8).collect()),
            (
                "all byte values x40".into(),
                (0..10240u32).map(|i| (i * 7) as u8).collect(),
            ),
            ("random 1000".into(), random_bytes(1000, 1)),
            ("random 65536".into(), random_bytes(65536, 2)),
            ("text 20000".into(), text(20000, 3)),
            ("timestamps 8192".into(), timestamps(8192 * 8, 4)),
            ("small ints 16384".into(), small_ints(16384 * 4, 5)),
            ("float walk 8192".into(), float_walk(8192, 6)),
            ("skewed 100000".into(), skewed(100_000, 7)),
            (
                "runs".into(),
                (0..30000u32).map(|i| (i / 37 % 5) as u8).collect(),
            ),
            (
                "period 3".into(),
                (0..50000u32).map(|i| (i % 3) as u8).collect(),
            ),
            (
                "period 4096".into(),
                (0..65536u32).map(|i| (i % 4096 * 13 / 7) as u8).collect(),
            ),
            (
                "period 12 x 8191".into(),
                (0..12 * 8191u32).map(|i| (i % 12 * 5) as u8).collect(),
            ),
            (
                "almost periodic".into(),
                (0..65537u32).map(|i| (i % 4096 * 13 / 7) as u8).collect(),
            ),
            ("zeros 99999".into(), vec![0; 99_999]),
        ];
        for len in [2usize, 3, 4, 5, 6, 8, 9, 255, 256, 259, 260, 1000, 5000] {
            v.push((format!("run of {len}"), vec![b'x'; len]));
            let mut framed = vec![b'a'];
            framed.extend(std::iter::repeat_n(b'b', len));
            framed.push(b'c');
            v.push((format!("framed run of {len}"), framed));
        }
        // Blocks ending on a run of exactly four (RLE1 count at the very end).
        v.push(("ends aaaa".into(), b"xyzaaaa".to_vec()));
        v
    }

    #[test]
    fn round_trips() {
        for (name, data) in inputs() {
            for level in [1, 5, 9] {
                let z = bz(level, &data);
                assert!(
                    ours(&z, data.len()).as_deref() == Ok(&data[..]),
                    "{name} level {level}"
                );
            }
        }
    }

    #[test]
    fn round_trips_multi_block() {
        for (data, level) in [
            (text(250_000, 11), 1),
            (small_ints(240_000, 12), 1),
            (vec![7u8; 1_500_000], 1),
            (
                (0..700_000u32).map(|i| (i % 1000 * 7 / 3) as u8).collect(),
                2,
            ),
            (timestamps(2_000_000, 13), 9),
        ] {
            let z = bz(level, &data);
            assert!(
                ours(&z, data.len()).as_deref() == Ok(&data[..]),
                "level {level}"
            );
        }
    }

    /// nGroups of the first block of a stream.
    fn table_count(z: &[u8]) -> u32 {
        let mut br = Bits::new(&z[4..]);
        br.get(24);
        br.get(24);
        br.get(32);
        br.get(25);
        let used = br.get(16);
        for _ in 0..used.count_ones() {
            br.get(16);
        }
        br.get(3)
    }

    #[test]
    fn every_table_count() {
        let mut seen = [false; 7];
        for n in [10usize, 100, 300, 500, 900, 1500, 2500, 5000, 50_000] {
            let data = random_bytes(n, n as u64);
            let z = bz(9, &data);
            seen[table_count(&z) as usize] = true;
            assert!(ours(&z, n).as_deref() == Ok(&data[..]), "n={n}");
        }
        assert_eq!(seen, [false, false, true, true, true, true, true]);
    }

    #[test]
    fn wrong_sizes_fail() {
        for (name, data) in inputs() {
            let z = bz(9, &data);
            assert!(
                matches!(
                    ours(&z, data.len() + 1),
                    Err(DecodeError::OutputTooShort { .. })
                ),
                "{name}"
            );
            if !data.is_empty() {
                assert_eq!(
                    err(ours(&z, data.len() - 1)),
                    Some(DecodeError::OutputTooLong),
                    "{name}"
                );
            }
        }
        let data = text(250_000, 21);
        let z = bz(1, &data);
        assert_eq!(err(ours(&z, 100_000)), Some(DecodeError::OutputTooLong));
        assert_eq!(err(ours(&z, 0)), Some(DecodeError::OutputTooLong));
    }

    #[test]
    fn header_and_trailing_bytes() {
        let data = text(5000, 31);
        let mut z = bz(3, &data);
        for bad in [&b""[..], b"BZh", b"BZh0", b"BZha", b"BZx9", b"bZh9"] {
            assert_eq!(err(ours(bad, 0)), Some(DecodeError::BadHeader));
        }
        let mut wrong = z.clone();
        wrong[3] = b'0';
        assert_eq!(err(ours(&wrong, data.len())), Some(DecodeError::BadHeader));
        z.extend_from_slice(b"trailing garbage, even another BZh9 stream");
        assert!(ours(&z, data.len()).as_deref() == Ok(&data[..]));
        let empty = bz(9, &[]);
        assert_eq!(ours(&empty, 0), Ok(vec![]));
        assert_eq!(
            ours(&empty, 1),
            Err(DecodeError::OutputTooShort {
                written: 0,
                expected: 1
            })
        );
    }

    #[test]
    fn randomised_block_is_reported() {
        let data = text(1000, 41);
        let mut z = bz(9, &data);
        // Header 32 bits, magic 48, CRC 32: the randomised bit is bit 112.
        z[14] |= 0x80;
        assert_eq!(err(ours(&z, data.len())), Some(DecodeError::Randomised));
    }

    #[test]
    fn crc_fields_are_checked() {
        let data = text(3000, 51);
        let z = bz(9, &data);
        for bit in 80..112 {
            let mut c = z.clone();
            c[bit / 8] ^= 0x80 >> (bit % 8);
            assert!(
                matches!(ours(&c, data.len()), Err(DecodeError::BlockCrc { .. })),
                "bit {bit}"
            );
        }
        // The combined CRC follows the end magic, which ends 32 bits before the padding.
        let bit_at = |i: usize| u64::from(z[i / 8] >> (7 - i % 8) & 1);
        let total_bits = z.len() * 8;
        let end = (total_bits - 7..=total_bits)
            .find(|&end| (end - 80..end - 32).fold(0, |a, i| a << 1 | bit_at(i)) == END_MAGIC)
            .unwrap();
        for bit in end - 32..end {
            let mut c = z.clone();
            c[bit / 8] ^= 0x80 >> (bit % 8);
            assert!(
                matches!(ours(&c, data.len()), Err(DecodeError::StreamCrc { .. })),
                "bit {bit}"
            );
        }
        for bit in end..total_bits {
            let mut c = z.clone();
            c[bit / 8] ^= 0x80 >> (bit % 8);
            assert!(
                ours(&c, data.len()).as_deref() == Ok(&data[..]),
                "padding bit {bit}"
            );
        }
    }

    /// Checks a damaged stream: ours may fail, but if it succeeds, libbzip2 must agree.
    fn check_damaged(z: &[u8], original: &[u8]) -> bool {
        match ours(z, original.len()) {
            Ok(v) => {
                assert!(v == original, "decoded wrong bytes");
                assert!(unbz(z, original.len()).as_deref() == Some(original));
                true
            }
            Err(_) => false,
        }
    }

    fn damaged_streams() -> Vec<(Vec<u8>, Vec<u8>)> {
        [
            (text(4000, 61), 9),
            (small_ints(12_000, 62), 1),
            (timestamps(8000, 63), 5),
            (vec![b'q'; 3000], 9),
            ((0..30_000u32).map(|i| (i % 300) as u8).collect(), 9),
            (text(120_000, 64), 1),
        ]
        .into_iter()
        .map(|(d, level)| (bz(level, &d), d))
        .collect()
    }

    #[test]
    fn truncations_fail() {
        for (z, d) in damaged_streams() {
            let step = (z.len() / 300).max(1);
            for cut in (0..z.len()).step_by(step).chain(z.len() - 8..z.len()) {
                assert!(!check_damaged(&z[..cut], &d), "cut at {cut} of {}", z.len());
            }
        }
    }

    #[test]
    fn bit_flips_never_give_wrong_bytes() {
        let mut accepted = 0;
        let mut tried = 0;
        for (z, d) in damaged_streams() {
            let bits = z.len() * 8;
            // Fewer flips in the large stream: each costs two blocks (slow in debug builds).
            let flips = if z.len() > 8000 { 150 } else { 800 };
            let step = (bits / flips).max(1);
            for bit in (0..bits).step_by(step).chain(bits - 40..bits) {
                let mut c = z.clone();
                c[bit / 8] ^= 0x80 >> (bit % 8);
                tried += 1;
                if check_damaged(&c, &d) {
                    accepted += 1;
                }
            }
        }
        // Only flips in the final byte's padding can be harmless.
        assert!(
            accepted * 50 < tried,
            "{accepted} of {tried} flips accepted"
        );
    }

    #[test]
    fn fuzzed_streams_agree_with_libbzip2() {
        let streams = damaged_streams();
        let mut r = Rng(0x9E37_79B9_7F4A_7C15);
        for round in 0..800 {
            let (z, d) = &streams[r.below(streams.len() as u64) as usize];
            let mut c = z.clone();
            for _ in 0..1 + r.below(4) {
                let at = r.below(c.len() as u64) as usize;
                match r.below(5) {
                    0 => c[at] ^= 1 << r.below(8),
                    1 => c[at] = r.next() as u8,
                    2 => c[at] = 0,
                    3 => c[at] = 0xFF,
                    _ => {
                        let len = (r.below(8) as usize).min(c.len() - at);
                        c.drain(at..at + len);
                        if c.len() < 5 {
                            c = z.clone();
                        }
                    }
                }
            }
            let len = match r.below(8) {
                0 => d.len().saturating_sub(1),
                1 => d.len() + 1,
                _ => d.len(),
            };
            if let Ok(v) = ours(&c, len) {
                assert!(Some(v) == unbz(&c, len), "round {round}");
            }
        }
    }

    /// Encodes symbols with the canonical code of `lens`, MSB first.
    fn canonical_encode(lens: &[u8], syms: &[u16]) -> Vec<u8> {
        let mut codes = vec![0u32; lens.len()];
        let mut code = 0u32;
        for l in 1..=20u8 {
            for (s, &sl) in lens.iter().enumerate() {
                if sl == l {
                    codes[s] = code;
                    code += 1;
                }
            }
            code <<= 1;
        }
        let (mut acc, mut live, mut out) = (0u64, 0u32, Vec::new());
        for &s in syms {
            acc = (acc << lens[s as usize]) | u64::from(codes[s as usize]);
            live += u32::from(lens[s as usize]);
            while live >= 8 {
                live -= 8;
                out.push((acc >> live) as u8);
            }
        }
        if live > 0 {
            out.push((acc << (8 - live)) as u8);
        }
        out
    }

    fn table_decode(t: &Table, br: &mut Bits) -> Option<u16> {
        if br.count < 20 {
            br.refill();
        }
        let e = t.fast[br.peek(FAST_BITS) as usize];
        if e != 0 {
            br.consume(u32::from(e >> 9));
            return Some(e & 0x1FF);
        }
        let (s, l) = t.decode_long(br.peek(20))?;
        br.consume(l);
        Some(s)
    }

    #[test]
    fn long_and_incomplete_codes() {
        // A complete code with lengths 1..=20 (20 twice), symbols in scrambled order.
        let mut lens: Vec<u8> = (1..=20).chain([20]).collect();
        lens.reverse();
        lens.swap(3, 17);
        let mut t = Table::new();
        t.build(&lens);
        assert!(t.ok);
        let syms: Vec<u16> = (0..lens.len() as u16)
            .chain((0..lens.len() as u16).rev())
            .collect();
        let z = canonical_encode(&lens, &syms);
        let mut br = Bits::new(&z);
        for &s in &syms {
            assert_eq!(table_decode(&t, &mut br), Some(s));
        }
        assert!(!br.overrun());

        // Incomplete: one code each of lengths 2, 3 and 13; unused patterns are rejected.
        let lens = [2u8, 13, 3];
        t.build(&lens);
        assert!(t.ok);
        let syms = [1u16, 0, 2, 1, 2, 0];
        let z = canonical_encode(&lens, &syms);
        let mut br = Bits::new(&z);
        for &s in &syms {
            assert_eq!(table_decode(&t, &mut br), Some(s));
        }
        for pattern in [0xFFFFu32 << 16, 0x7000_0000, 0x6008_0000] {
            let bytes = pattern.to_be_bytes();
            let mut br = Bits::new(&bytes);
            assert_eq!(table_decode(&t, &mut br), None, "{pattern:#x}");
        }

        // Over-subscribed.
        t.build(&[1, 1, 1]);
        assert!(!t.ok);
        t.build(&[1, 2, 2, 20]);
        assert!(!t.ok);
    }

    #[test]
    fn run_finder_matches_scalar() {
        let mut r = Rng(77);
        for _ in 0..2000 {
            let n = r.below(40) as usize;
            let raw: Vec<u8> = (0..n).map(|_| r.below(2) as u8).collect();
            for from in 0..=n {
                let expect = (from..n.saturating_sub(3))
                    .find(|&p| raw[p..p + 4].iter().all(|&b| b == raw[p]))
                    .unwrap_or(n);
                assert_eq!(find_run(&raw, from), expect, "{raw:?} from {from}");
            }
        }
        let mut dst = [0u8; 16];
        let unrle_at_0 = |raw: &[u8], dst: &mut [u8]| {
            let mut o = OutBuf::from_init(dst);
            unrle(raw, &mut o).map(|()| o.filled())
        };
        assert_eq!(unrle_at_0(b"abbbb\x02c", &mut dst), Ok(8));
        assert_eq!(&dst[..8], b"abbbbbbc");
        assert_eq!(
            unrle_at_0(b"abbbb", &mut dst),
            Err(DecodeError::MissingRunLength)
        );
        assert_eq!(
            unrle_at_0(b"bbbb\x0d", &mut dst),
            Err(DecodeError::OutputTooLong)
        );
        assert_eq!(unrle_at_0(b"bbbb\x00bbbb\x01", &mut dst), Ok(9));
    }

    #[test]
    fn mtf_matches_naive() {
        let mut r = Rng(5);
        for trial in 0..200 {
            let len = 1 + r.below(256) as usize;
            let mut symbols = [0u8; 256];
            for (i, s) in symbols.iter_mut().enumerate() {
                *s = (i as u8).wrapping_mul(37).wrapping_add(trial as u8);
            }
            let mut naive: Vec<u8> = symbols[..len].to_vec();
            let mut mtf = Mtf::new(&symbols, len);
            for step in 0..3000 {
                let idx = match r.below(3) {
                    0 => r.below(4),
                    1 => r.below(20),
                    _ => r.below(256),
                } as usize
                    % len;
                let b = naive.remove(idx);
                naive.insert(0, b);
                let got = if idx == 0 { mtf.first() } else { mtf.take(idx) };
                assert_eq!(got, b, "trial {trial} step {step} idx {idx}");
                assert_eq!(mtf.first(), naive[0]);
            }
        }
    }

    /// The inverse BWT against libbzip2's forward walk on random last columns (most of
    /// them not a BWT: LF then has several cycles).
    #[test]
    fn inverse_bwt_matches_forward_walk() {
        let mut r = Rng(99);
        let (mut pool, mut segs) = (Vec::new(), Vec::new());
        let mut accepted = 0;
        for trial in 0..300 {
            let n = match trial % 4 {
                0 => 1 + r.below(50) as usize,
                1 => 1 + r.below(5000) as usize,
                _ => 1 + r.below(80_000) as usize,
            };
            let alphabet = 1 + r.below(if trial % 3 == 0 { 3 } else { 256 }) as u32;
            let l: Vec<u8> = (0..n).map(|_| (r.next() as u32 % alphabet) as u8).collect();
            let orig = r.below(n as u64) as usize;
            let mut counts = [0u32; 256];
            let mut tt: Vec<u32> = l
                .iter()
                .map(|&b| {
                    let c = &mut counts[usize::from(b)];
                    *c += 1;
                    ((*c - 1) << 8) | u32::from(b)
                })
                .collect();
            let mut below = [0u32; 256];
            let mut sum = 0;
            for (c, &k) in below.iter_mut().zip(&counts) {
                *c = sum;
                sum += k;
            }
            // libbzip2: psi = LF^-1, output L[psi(p)] stepping from the origin, n times.
            let lf_of: Vec<usize> = tt.iter().map(|&e| lf(&below, e) as usize).collect();
            let mut psi = vec![0usize; n];
            for (i, &j) in lf_of.iter().enumerate() {
                psi[j] = i;
            }
            let mut expect = vec![0u8; n];
            let mut p = orig;
            for e in &mut expect {
                p = psi[p];
                *e = l[p];
            }
            let mut cycle = 1;
            let mut p = lf_of[orig];
            while p != orig {
                p = lf_of[p];
                cycle += 1;
            }
            let mut raw = vec![0u8; n];
            let got = inverse_bwt(&mut tt, &below, orig, &mut pool, &mut segs, &mut raw);
            if n % cycle == 0 {
                assert!(
                    got.is_ok() && raw == expect,
                    "trial {trial}: n={n} cycle={cycle}"
                );
                accepted += 1;
            } else {
                assert_eq!(got, Err(DecodeError::BadLinks), "trial {trial}");
            }
        }
        assert!(accepted > 30, "{accepted}");
    }

    #[test]
    fn errors_display() {
        let e = DecodeError::OutputTooShort {
            written: 3,
            expected: 4,
        };
        assert_eq!(e.to_string(), "bzip2: stream holds 3 bytes, expected 4");
        assert!(DecodeError::Randomised.to_string().contains("randomised"));
    }

    /// `cargo test --release --lib codecs::bzip2::decode -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn speed_vs_libbzip2() {
        const TOTAL: usize = 64 << 20;
        let sets: [(&str, Vec<u8>); 3] = [
            ("timestamps i64", timestamps(TOTAL, 1)),
            ("float64 walk", float_walk(TOTAL / 8, 2)),
            ("int32 0..16", small_ints(TOTAL, 3)),
        ];
        // (level, part size, bytes of the data set used)
        let cases = [
            (1u32, 64 << 10, TOTAL),
            (9, 64 << 10, TOTAL),
            (9, 4 << 20, 16 << 20),
        ];
        for (name, data) in &sets {
            for (level, chunk, total) in cases {
                let data = &data[..total];
                let streams: Vec<Vec<u8>> = data.chunks(chunk).map(|c| bz(level, c)).collect();
                let zlen: usize = streams.iter().map(Vec::len).sum();
                let mut out = vec![0u8; chunk];
                let mut best = [f64::MAX; 2];
                for _ in 0..3 {
                    let t = Instant::now();
                    for (z, c) in streams.iter().zip(data.chunks(chunk)) {
                        decompress(z, &mut out[..c.len()]).unwrap();
                    }
                    best[0] = best[0].min(t.elapsed().as_secs_f64());
                    let t = Instant::now();
                    for (z, c) in streams.iter().zip(data.chunks(chunk)) {
                        let mut d = Decompress::new(false);
                        let s = d.decompress(z, &mut out[..c.len()]).unwrap();
                        assert_eq!(s, Status::StreamEnd);
                    }
                    best[1] = best[1].min(t.elapsed().as_secs_f64());
                }
                for (z, c) in streams.iter().zip(data.chunks(chunk)) {
                    decompress(z, &mut out[..c.len()]).unwrap();
                    assert!(&out[..c.len()] == c);
                }
                let mb = total as f64 / 1e6;
                println!(
                    "{name:14} level {level} parts {:4} KiB: ratio {:.3}  ours {:6.1} MB/s  \
                     libbzip2 {:6.1} MB/s  x{:.2}",
                    chunk >> 10,
                    zlen as f64 / total as f64,
                    mb / best[0],
                    mb / best[1],
                    best[1] / best[0]
                );
            }
        }
    }
}
