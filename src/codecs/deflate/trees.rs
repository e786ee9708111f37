//! Block encoding as zlib 1.3.1 does it: the symbol buffer and its frequency counts, Huffman
//! trees built with zlib's heap (ties broken by subtree depth) and its length-overflow repair,
//! the run-length coded tree description, the choice between stored, fixed and dynamic
//! blocks, and an LSB-first bit writer.
//!
//! Every decision here must equal zlib's, since one different code length changes all later
//! bytes; the data structures are free (the bit writer holds 64 bits instead of 16, symbols
//! are one `u32` each instead of three bytes).

/// Literal byte values.
const LITERALS: usize = 256;
/// Length codes (257..=285).
const LENGTH_CODES: usize = 29;
/// Literal/length alphabet size.
const L_CODES: usize = LITERALS + 1 + LENGTH_CODES;
/// Distance alphabet size.
const D_CODES: usize = 30;
/// Code-length alphabet size.
const BL_CODES: usize = 19;
/// Heap capacity zlib uses for every tree (its value matters: `gen_bitlen` walks to it).
const HEAP_SIZE: usize = 2 * L_CODES + 1;
/// Longest literal/length or distance code.
const MAX_BITS: usize = 15;
/// Longest code-length code.
const MAX_BL_BITS: usize = 7;
/// End-of-block symbol.
const END_BLOCK: usize = 256;
/// Repeat the previous length 3–6 times.
const REP_3_6: usize = 16;
/// Repeat a zero length 3–10 times.
const REPZ_3_10: usize = 17;
/// Repeat a zero length 11–138 times.
const REPZ_11_138: usize = 18;
/// Symbol buffer size (`1 << (memLevel + 6)` with memLevel 8).
const LIT_BUFSIZE: usize = 1 << 14;
/// A block is flushed when it holds this many symbols (zlib's `sym_end`, in symbols).
pub(super) const SYM_END: usize = LIT_BUFSIZE - 1;

/// Extra bits of each length code.
const EXTRA_LBITS: [u8; LENGTH_CODES] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
/// Extra bits of each distance code.
const EXTRA_DBITS: [u8; D_CODES] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];
/// Extra bits of each code-length code.
const EXTRA_BLBITS: [u8; BL_CODES] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7];
/// Order in which code-length code lengths are sent.
const BL_ORDER: [u8; BL_CODES] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// Fixed lookup tables of the deflate format.
struct Tables {
    /// Length − 3 → length code (0..=28).
    length_code: [u8; 256],
    /// Distance − 1 → distance code: direct below 256, else at `256 + (d >> 7)`.
    dist_code: [u8; 512],
    /// First length − 3 of each length code.
    base_length: [u16; LENGTH_CODES],
    /// First distance − 1 of each distance code.
    base_dist: [u16; D_CODES],
    /// Fixed literal/length code lengths (288 codes).
    static_llen: [u8; L_CODES + 2],
    /// Fixed literal/length codes, bit-reversed.
    static_lcode: [u16; L_CODES + 2],
    /// Fixed distance codes, bit-reversed (all 5 bits long).
    static_dcode: [u16; D_CODES],
}

/// Reverses the low `len` bits of `code`.
const fn bit_reverse(code: u32, len: u32) -> u32 {
    code.reverse_bits() >> (32 - len)
}

const fn build_tables() -> Tables {
    let mut t = Tables {
        length_code: [0; 256],
        dist_code: [0; 512],
        base_length: [0; LENGTH_CODES],
        base_dist: [0; D_CODES],
        static_llen: [0; L_CODES + 2],
        static_lcode: [0; L_CODES + 2],
        static_dcode: [0; D_CODES],
    };
    let mut length = 0usize;
    let mut code = 0usize;
    while code < LENGTH_CODES - 1 {
        t.base_length[code] = length as u16;
        let mut n = 0;
        while n < (1 << EXTRA_LBITS[code]) {
            t.length_code[length] = code as u8;
            length += 1;
            n += 1;
        }
        code += 1;
    }
    // Length 258 has its own code (285) rather than 284 with extra bits 31.
    t.length_code[255] = code as u8;
    let mut dist = 0usize;
    code = 0;
    while code < 16 {
        t.base_dist[code] = dist as u16;
        let mut n = 0;
        while n < (1 << EXTRA_DBITS[code]) {
            t.dist_code[dist] = code as u8;
            dist += 1;
            n += 1;
        }
        code += 1;
    }
    dist >>= 7;
    while code < D_CODES {
        t.base_dist[code] = (dist << 7) as u16;
        let mut n = 0;
        while n < (1 << (EXTRA_DBITS[code] - 7)) {
            t.dist_code[256 + dist] = code as u8;
            dist += 1;
            n += 1;
        }
        code += 1;
    }
    let mut bl_count = [0u16; MAX_BITS + 1];
    let mut n = 0;
    while n < L_CODES + 2 {
        let len = if n <= 143 {
            8
        } else if n <= 255 {
            9
        } else if n <= 279 {
            7
        } else {
            8
        };
        t.static_llen[n] = len;
        bl_count[len as usize] += 1;
        n += 1;
    }
    let mut next_code = [0u16; MAX_BITS + 1];
    let mut c = 0u32;
    let mut bits = 1;
    while bits <= MAX_BITS {
        c = (c + bl_count[bits - 1] as u32) << 1;
        next_code[bits] = c as u16;
        bits += 1;
    }
    n = 0;
    while n < L_CODES + 2 {
        let len = t.static_llen[n] as usize;
        t.static_lcode[n] = bit_reverse(next_code[len] as u32, len as u32) as u16;
        next_code[len] += 1;
        n += 1;
    }
    n = 0;
    while n < D_CODES {
        t.static_dcode[n] = bit_reverse(n as u32, 5) as u16;
        n += 1;
    }
    t
}

static TABLES: Tables = build_tables();

/// Distance code of `dist` = distance − 1.
#[inline(always)]
fn d_code(dist: usize) -> usize {
    if dist < 256 {
        TABLES.dist_code[dist] as usize
    } else {
        TABLES.dist_code[(256 + (dist >> 7)) & 511] as usize
    }
}

/// LSB-first bit writer appending whole bytes to a `Vec<u8>`.
#[derive(Default)]
pub(super) struct BitWriter {
    bits: u64,
    n: u32,
}

impl BitWriter {
    /// Appends the low `len` (≤ 32) bits of `v`.
    #[inline(always)]
    pub(super) fn put(&mut self, out: &mut Vec<u8>, v: u64, len: u32) {
        self.bits |= v << self.n;
        self.n += len;
        if self.n >= 32 {
            out.extend_from_slice(&(self.bits as u32).to_le_bytes());
            self.bits >>= 32;
            self.n -= 32;
        }
    }

    /// Pads with zero bits to a byte boundary and writes out everything held.
    pub(super) fn windup(&mut self, out: &mut Vec<u8>) {
        while self.n > 0 {
            out.push(self.bits as u8);
            self.bits >>= 8;
            self.n = self.n.saturating_sub(8);
        }
        self.bits = 0;
        self.n = 0;
    }
}

/// One Huffman tree under construction: leaves first, then internal nodes, plus one guard
/// slot (zlib's `scan_tree` writes a guard length after the last used code).
struct Tree {
    freq: Vec<u32>,
    dad: Vec<u16>,
    len: Vec<u16>,
    code: Vec<u16>,
    /// Largest code with non-zero frequency (after forcing at least two codes).
    max_code: usize,
}

impl Tree {
    fn new(elems: usize) -> Self {
        let n = 2 * elems + 2;
        Tree {
            freq: vec![0; n],
            dad: vec![0; n],
            len: vec![0; n],
            code: vec![0; n],
            max_code: 0,
        }
    }
}

/// Fixed description of one tree kind.
struct TreeDesc {
    /// Leaf count.
    elems: usize,
    /// Code lengths of the fixed tree, if there is one (for `static_len`).
    static_len: Option<&'static [u8]>,
    /// Extra bits of leaves `extra_base..`.
    extra: &'static [u8],
    extra_base: usize,
    max_length: usize,
}

static L_DESC: TreeDesc = TreeDesc {
    elems: L_CODES,
    static_len: Some(&TABLES.static_llen),
    extra: &EXTRA_LBITS,
    extra_base: LITERALS + 1,
    max_length: MAX_BITS,
};
static D_DESC: TreeDesc = TreeDesc {
    elems: D_CODES,
    static_len: Some(&[5; D_CODES]),
    extra: &EXTRA_DBITS,
    extra_base: 0,
    max_length: MAX_BITS,
};
static BL_DESC: TreeDesc = TreeDesc {
    elems: BL_CODES,
    static_len: None,
    extra: &EXTRA_BLBITS,
    extra_base: 0,
    max_length: MAX_BL_BITS,
};

/// Heap and counters shared by the three tree builds.
struct Heap {
    heap: [u16; HEAP_SIZE],
    depth: [u8; HEAP_SIZE],
    heap_len: usize,
    heap_max: usize,
    bl_count: [u16; MAX_BITS + 1],
    /// Bit length of the block with the dynamic trees (zlib's `opt_len`; wrapping like its
    /// unsigned long).
    opt_len: u64,
    /// Bit length of the block with the fixed trees.
    static_len: u64,
}

/// zlib's `smaller`: lower frequency first, equal frequencies by smaller-or-equal depth.
#[inline(always)]
fn smaller(freq: &[u32], depth: &[u8; HEAP_SIZE], n: usize, m: usize) -> bool {
    freq[n] < freq[m] || (freq[n] == freq[m] && depth[n] <= depth[m])
}

impl Heap {
    fn down(&mut self, freq: &[u32], mut k: usize) {
        let v = self.heap[k] as usize;
        let mut j = k << 1;
        while j <= self.heap_len {
            if j < self.heap_len
                && smaller(
                    freq,
                    &self.depth,
                    self.heap[j + 1] as usize,
                    self.heap[j] as usize,
                )
            {
                j += 1;
            }
            if smaller(freq, &self.depth, v, self.heap[j] as usize) {
                break;
            }
            self.heap[k] = self.heap[j];
            k = j;
            j <<= 1;
        }
        self.heap[k] = v as u16;
    }

    /// Builds the Huffman tree of `t.freq[..elems]`: lengths, codes and `max_code`; adds to
    /// `opt_len` and `static_len` as zlib's `build_tree` does.
    fn build_tree(&mut self, t: &mut Tree, desc: &TreeDesc) {
        let elems = desc.elems;
        self.heap_len = 0;
        self.heap_max = HEAP_SIZE;
        let mut max_code: isize = -1;
        for n in 0..elems {
            if t.freq[n] != 0 {
                self.heap_len += 1;
                self.heap[self.heap_len] = n as u16;
                max_code = n as isize;
                self.depth[n] = 0;
            } else {
                t.len[n] = 0;
            }
        }
        // At least two codes, so that every tree sends at least one bit per symbol.
        while self.heap_len < 2 {
            let node = if max_code < 2 {
                max_code += 1;
                max_code as usize
            } else {
                0
            };
            self.heap_len += 1;
            self.heap[self.heap_len] = node as u16;
            t.freq[node] = 1;
            self.depth[node] = 0;
            self.opt_len = self.opt_len.wrapping_sub(1);
            if let Some(st) = desc.static_len {
                self.static_len = self.static_len.wrapping_sub(st[node] as u64);
            }
        }
        let max_code = max_code as usize;
        t.max_code = max_code;
        for n in (1..=self.heap_len / 2).rev() {
            self.down(&t.freq, n);
        }
        let mut node = elems;
        loop {
            let n = self.heap[1] as usize;
            self.heap[1] = self.heap[self.heap_len];
            self.heap_len -= 1;
            self.down(&t.freq, 1);
            let m = self.heap[1] as usize;
            self.heap_max -= 1;
            self.heap[self.heap_max] = n as u16;
            self.heap_max -= 1;
            self.heap[self.heap_max] = m as u16;
            t.freq[node] = t.freq[n] + t.freq[m];
            self.depth[node] = self.depth[n].max(self.depth[m]) + 1;
            t.dad[n] = node as u16;
            t.dad[m] = node as u16;
            self.heap[1] = node as u16;
            node += 1;
            self.down(&t.freq, 1);
            if self.heap_len < 2 {
                break;
            }
        }
        self.heap_max -= 1;
        self.heap[self.heap_max] = self.heap[1];
        self.gen_bitlen(t, desc);
        gen_codes(t, &self.bl_count);
    }

    /// Code lengths from the tree shape, capped at `max_length` with zlib's repair.
    fn gen_bitlen(&mut self, t: &mut Tree, desc: &TreeDesc) {
        let max_code = t.max_code;
        let max_length = desc.max_length;
        self.bl_count = [0; MAX_BITS + 1];
        t.len[self.heap[self.heap_max] as usize] = 0;
        let mut overflow: i32 = 0;
        for h in self.heap_max + 1..HEAP_SIZE {
            let n = self.heap[h] as usize;
            let mut bits = t.len[t.dad[n] as usize] as usize + 1;
            if bits > max_length {
                bits = max_length;
                overflow += 1;
            }
            t.len[n] = bits as u16;
            if n > max_code {
                continue;
            }
            self.bl_count[bits] += 1;
            let xbits = if n >= desc.extra_base {
                desc.extra[n - desc.extra_base] as u64
            } else {
                0
            };
            let f = t.freq[n] as u64;
            self.opt_len = self.opt_len.wrapping_add(f * (bits as u64 + xbits));
            if let Some(st) = desc.static_len {
                self.static_len = self.static_len.wrapping_add(f * (st[n] as u64 + xbits));
            }
        }
        if overflow == 0 {
            return;
        }
        #[cfg(test)]
        OVERFLOWS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        loop {
            let mut bits = max_length - 1;
            while self.bl_count[bits] == 0 {
                bits -= 1;
            }
            self.bl_count[bits] -= 1;
            self.bl_count[bits + 1] += 2;
            self.bl_count[max_length] -= 1;
            overflow -= 2;
            if overflow <= 0 {
                break;
            }
        }
        let mut h = HEAP_SIZE;
        for bits in (1..=max_length).rev() {
            let mut n = self.bl_count[bits];
            while n != 0 {
                h -= 1;
                let m = self.heap[h] as usize;
                if m > max_code {
                    continue;
                }
                if t.len[m] as usize != bits {
                    let delta = (bits as u64).wrapping_sub(t.len[m] as u64);
                    self.opt_len = self
                        .opt_len
                        .wrapping_add(delta.wrapping_mul(t.freq[m] as u64));
                    t.len[m] = bits as u16;
                }
                n -= 1;
            }
        }
    }
}

/// Canonical codes (bit-reversed) for the lengths of `t`.
fn gen_codes(t: &mut Tree, bl_count: &[u16; MAX_BITS + 1]) {
    let mut next_code = [0u32; MAX_BITS + 1];
    let mut code = 0u32;
    for bits in 1..=MAX_BITS {
        code = (code + bl_count[bits - 1] as u32) << 1;
        next_code[bits] = code;
    }
    for n in 0..=t.max_code {
        let len = t.len[n] as usize;
        if len == 0 {
            continue;
        }
        t.code[n] = bit_reverse(next_code[len], len as u32) as u16;
        next_code[len] += 1;
    }
}

/// Run-length steps of a code-length sequence, as zlib's `scan_tree`/`send_tree` walk it.
enum Run {
    /// `count` plain lengths `len`.
    Plain { len: usize, count: usize },
    /// Optionally one plain `len` (when it differs from the previous run), then code 16.
    Repeat {
        len: usize,
        lead: bool,
        count: usize,
    },
    /// Code 17 (3–10 zeros).
    Zeros3 { count: usize },
    /// Code 18 (11–138 zeros).
    Zeros11 { count: usize },
}

/// Walks the lengths of codes `0..=max_code` of `len` (with `len[max_code + 1]` the guard) and
/// calls `f` for each run.
fn walk_runs(len: &[u16], max_code: usize, mut f: impl FnMut(Run)) {
    let mut prevlen: isize = -1;
    let mut nextlen = len[0] as isize;
    let mut count = 0usize;
    let (mut max_count, mut min_count) = if nextlen == 0 { (138, 3) } else { (7, 4) };
    for n in 0..=max_code {
        let curlen = nextlen;
        nextlen = if n + 1 == max_code + 1 {
            0xffff
        } else {
            len[n + 1] as isize
        };
        count += 1;
        if count < max_count && curlen == nextlen {
            continue;
        } else if count < min_count {
            f(Run::Plain {
                len: curlen as usize,
                count,
            });
        } else if curlen != 0 {
            f(Run::Repeat {
                len: curlen as usize,
                lead: curlen != prevlen,
                count,
            });
        } else if count <= 10 {
            f(Run::Zeros3 { count });
        } else {
            f(Run::Zeros11 { count });
        }
        count = 0;
        prevlen = curlen;
        (max_count, min_count) = if nextlen == 0 {
            (138, 3)
        } else if curlen == nextlen {
            (6, 3)
        } else {
            (7, 4)
        };
    }
}

/// Symbols and counts of the block being collected, and the machinery to write it.
pub(super) struct Block {
    /// One symbol each: literal byte (distance 0), or `distance << 8 | (length − 3)`.
    syms: Box<[u32]>,
    /// Symbols held.
    n: usize,
    lfreq: [u32; L_CODES],
    dfreq: [u32; D_CODES],
    ltree: Tree,
    dtree: Tree,
    bltree: Tree,
    heap: Box<Heap>,
}

impl Block {
    pub(super) fn new() -> Self {
        let mut b = Block {
            syms: vec![0; LIT_BUFSIZE].into_boxed_slice(),
            n: 0,
            lfreq: [0; L_CODES],
            dfreq: [0; D_CODES],
            ltree: Tree::new(L_CODES),
            dtree: Tree::new(D_CODES),
            bltree: Tree::new(BL_CODES),
            heap: Box::new(Heap {
                heap: [0; HEAP_SIZE],
                depth: [0; HEAP_SIZE],
                heap_len: 0,
                heap_max: 0,
                bl_count: [0; MAX_BITS + 1],
                opt_len: 0,
                static_len: 0,
            }),
        };
        b.reset();
        b
    }

    /// Starts an empty block (zlib's `init_block`).
    pub(super) fn reset(&mut self) {
        self.n = 0;
        self.lfreq = [0; L_CODES];
        self.dfreq = [0; D_CODES];
        self.lfreq[END_BLOCK] = 1;
    }

    /// Records a literal; true when the block is full.
    #[inline(always)]
    pub(super) fn tally_lit(&mut self, c: u8) -> bool {
        self.syms[self.n & (LIT_BUFSIZE - 1)] = c as u32;
        self.n += 1;
        self.lfreq[c as usize] += 1;
        self.n == SYM_END
    }

    /// Records a match of distance `dist` (1..=32768) and length `lc + 3`; true when the
    /// block is full.
    #[inline(always)]
    pub(super) fn tally_dist(&mut self, dist: usize, lc: usize) -> bool {
        self.syms[self.n & (LIT_BUFSIZE - 1)] = ((dist << 8) | lc) as u32;
        self.n += 1;
        self.lfreq[TABLES.length_code[lc & 255] as usize + LITERALS + 1] += 1;
        self.dfreq[d_code(dist - 1)] += 1;
        self.n == SYM_END
    }

    /// Writes the block (zlib's `_tr_flush_block`): `buf` is the block's input if it is
    /// still in the window (else a stored block is impossible), `stored_len` its length.
    pub(super) fn flush(
        &mut self,
        bw: &mut BitWriter,
        out: &mut Vec<u8>,
        buf: Option<&[u8]>,
        stored_len: usize,
        last: bool,
    ) {
        let h = &mut *self.heap;
        h.opt_len = 0;
        h.static_len = 0;
        self.ltree.freq[..L_CODES].copy_from_slice(&self.lfreq);
        self.dtree.freq[..D_CODES].copy_from_slice(&self.dfreq);
        h.build_tree(&mut self.ltree, &L_DESC);
        h.build_tree(&mut self.dtree, &D_DESC);
        // build_bl_tree
        self.bltree.freq[..BL_CODES].fill(0);
        for t in [&self.ltree, &self.dtree] {
            let bl = &mut self.bltree.freq;
            walk_runs(&t.len, t.max_code, |r| match r {
                Run::Plain { len, count } => bl[len] += count as u32,
                Run::Repeat { len, lead, .. } => {
                    if lead {
                        bl[len] += 1;
                    }
                    bl[REP_3_6] += 1;
                }
                Run::Zeros3 { .. } => bl[REPZ_3_10] += 1,
                Run::Zeros11 { .. } => bl[REPZ_11_138] += 1,
            });
        }
        h.build_tree(&mut self.bltree, &BL_DESC);
        let mut max_blindex = BL_CODES - 1;
        while max_blindex >= 3 {
            if self.bltree.len[BL_ORDER[max_blindex] as usize] != 0 {
                break;
            }
            max_blindex -= 1;
        }
        h.opt_len = h
            .opt_len
            .wrapping_add(3 * (max_blindex as u64 + 1) + 5 + 5 + 4);
        let mut opt_lenb = h.opt_len.wrapping_add(3 + 7) >> 3;
        let static_lenb = h.static_len.wrapping_add(3 + 7) >> 3;
        if static_lenb <= opt_lenb {
            opt_lenb = static_lenb;
        }
        match buf {
            Some(data) if stored_len as u64 + 4 <= opt_lenb => {
                stored_block(bw, out, data, last);
            }
            _ if static_lenb == opt_lenb => {
                bw.put(out, 2 + last as u64, 3);
                out.reserve(((h.static_len >> 3) as usize) + 16);
                self.compress_block(bw, out, None);
            }
            _ => {
                bw.put(out, 4 + last as u64, 3);
                out.reserve(((h.opt_len >> 3) as usize) + 16);
                self.send_all_trees(bw, out, max_blindex + 1);
                self.compress_block(bw, out, Some(()));
            }
        }
        self.reset();
        if last {
            bw.windup(out);
        }
    }

    fn send_all_trees(&self, bw: &mut BitWriter, out: &mut Vec<u8>, blcodes: usize) {
        let lcodes = self.ltree.max_code + 1;
        let dcodes = self.dtree.max_code + 1;
        bw.put(out, (lcodes - 257) as u64, 5);
        bw.put(out, (dcodes - 1) as u64, 5);
        bw.put(out, (blcodes - 4) as u64, 4);
        for &o in &BL_ORDER[..blcodes] {
            bw.put(out, self.bltree.len[o as usize] as u64, 3);
        }
        let bl = &self.bltree;
        for t in [&self.ltree, &self.dtree] {
            let mut put = |v: usize, l: u32| bw.put(out, v as u64, l);
            let code = |c: usize| (bl.code[c] as usize, bl.len[c] as u32);
            walk_runs(&t.len, t.max_code, |r| match r {
                Run::Plain { len, count } => {
                    for _ in 0..count {
                        let (v, l) = code(len);
                        put(v, l);
                    }
                }
                Run::Repeat { len, lead, count } => {
                    let mut count = count;
                    if lead {
                        let (v, l) = code(len);
                        put(v, l);
                        count -= 1;
                    }
                    let (v, l) = code(REP_3_6);
                    put(v, l);
                    put(count - 3, 2);
                }
                Run::Zeros3 { count } => {
                    let (v, l) = code(REPZ_3_10);
                    put(v, l);
                    put(count - 3, 3);
                }
                Run::Zeros11 { count } => {
                    let (v, l) = code(REPZ_11_138);
                    put(v, l);
                    put(count - 11, 7);
                }
            });
        }
    }

    /// Writes the block's symbols and the end-of-block code with the dynamic trees
    /// (`Some`) or the fixed ones (`None`).
    fn compress_block(&self, bw: &mut BitWriter, out: &mut Vec<u8>, dynamic: Option<()>) {
        let (lcode, llen, dcode, dlen): (&[u16], &[u16], &[u16], &[u16]);
        let static_llen16: [u16; L_CODES + 2];
        static FIVE: [u16; D_CODES] = [5; D_CODES];
        if dynamic.is_some() {
            lcode = &self.ltree.code;
            llen = &self.ltree.len;
            dcode = &self.dtree.code;
            dlen = &self.dtree.len;
        } else {
            static_llen16 = TABLES.static_llen.map(|l| l as u16);
            lcode = &TABLES.static_lcode;
            llen = &static_llen16;
            dcode = &TABLES.static_dcode;
            dlen = &FIVE;
        }
        // Length symbol + extra bits, combined per length − 3.
        let mut lenc = [(0u32, 0u32); 256];
        for (lc, slot) in lenc.iter_mut().enumerate() {
            let code = TABLES.length_code[lc] as usize;
            let sym = code + LITERALS + 1;
            let extra = EXTRA_LBITS[code] as u32;
            let l = llen[sym] as u32;
            let xv = (lc as u32 - TABLES.base_length[code] as u32) & ((1 << extra) - 1);
            let v = lcode[sym] as u32 | (xv << l);
            *slot = (v, l + extra);
        }
        let lcode = &lcode[..L_CODES];
        let llen = &llen[..L_CODES];
        let dcode = &dcode[..D_CODES];
        let dlen = &dlen[..D_CODES];
        for &s in &self.syms[..self.n] {
            let dist = (s >> 8) as usize;
            let lc = (s & 255) as usize;
            if dist == 0 {
                bw.put(out, lcode[lc] as u64, llen[lc] as u32);
            } else {
                let (v, l) = lenc[lc];
                bw.put(out, v as u64, l);
                let d = dist - 1;
                let code = d_code(d);
                let dl = dlen[code] as u32;
                let v = dcode[code] as u64 | (((d - TABLES.base_dist[code] as usize) as u64) << dl);
                bw.put(out, v, dl + EXTRA_DBITS[code] as u32);
            }
        }
        bw.put(out, lcode[END_BLOCK] as u64, llen[END_BLOCK] as u32);
    }
}

/// Writes a stored block holding `data` (≤ 65535 bytes).
pub(super) fn stored_block(bw: &mut BitWriter, out: &mut Vec<u8>, data: &[u8], last: bool) {
    bw.put(out, last as u64, 3);
    bw.windup(out);
    let len = data.len() as u16;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    out.extend_from_slice(data);
}

/// Times the length-overflow repair ran (tests check that they exercise it).
#[cfg(test)]
pub(super) static OVERFLOWS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);
