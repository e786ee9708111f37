//! The LZ77 parse of zlib 1.3.1 (`deflate_fast` for levels 1–3, `deflate_slow` for 4–9) with
//! its exact window model: a 64 KiB window filled as `fill_window` fills it, slid by 32 KiB
//! (positions falling to window index 0 become "no match", as zlib's `slide_hash` makes
//! them), 15-bit hash chains of `u16` window indices, and `longest_match`'s candidate order,
//! chain limits and acceptance rule.
//!
//! The window is copied and slid as zlib copies and slides it (so the "window index 0 is no
//! match" rule and the slide timing are zlib's), into a buffer read through a power-of-two
//! mask so that match comparisons need no bounds checks. zlib compares up to 258 bytes even
//! past the end of the input (into stale or zeroed window bytes) and then clamps to the
//! lookahead; here comparison results are clamped to the lookahead, which yields the same
//! lengths and the same candidate choices (a candidate that reaches the end of the input
//! reaches `nice_match`, which zlib also clamps to the lookahead, and ends the search either
//! way). Hash chains are walked two candidates at a time (see [`Chains`]), visiting exactly
//! zlib's candidates in zlib's order.

use super::trees::{BitWriter, Block};

/// Window size (windowBits 15).
pub(super) const WSIZE: usize = 1 << 15;
const WMASK: usize = WSIZE - 1;
/// Hash table size (memLevel 8 → 15 hash bits).
pub(super) const HASH_SIZE: usize = 1 << 15;
const HASH_MASK: usize = HASH_SIZE - 1;
const MIN_MATCH: usize = 3;
const MAX_MATCH: usize = 258;
/// Lookahead kept while input remains: a longest match plus a string to insert after it.
const MIN_LOOKAHEAD: usize = MAX_MATCH + MIN_MATCH + 1;
/// Farthest match distance zlib allows.
const MAX_DIST: usize = WSIZE - MIN_LOOKAHEAD;
/// Length-3 matches farther than this are dropped by the lazy matcher.
const TOO_FAR: usize = 4096;
const WINDOW_SIZE: usize = 2 * WSIZE;

/// One row of zlib's configuration table.
#[derive(Clone, Copy)]
pub(super) struct Config {
    /// Quarter the chain when the previous match is at least this long.
    pub good: usize,
    /// `deflate_slow`: no lazy search after a match this long; `deflate_fast`: longest
    /// match whose strings are inserted into the hash table.
    pub lazy: usize,
    /// Stop searching at a match this long.
    pub nice: usize,
    /// Most chain entries examined.
    pub chain: usize,
}

/// zlib's `configuration_table` for levels 1–9 (index = level).
pub(super) const CONFIG: [Config; 10] = [
    cfg(0, 0, 0, 0),
    cfg(4, 4, 8, 4),
    cfg(4, 5, 16, 8),
    cfg(4, 6, 32, 32),
    cfg(4, 4, 16, 16),
    cfg(8, 16, 32, 32),
    cfg(8, 16, 128, 128),
    cfg(8, 32, 128, 256),
    cfg(32, 128, 258, 1024),
    cfg(32, 258, 258, 4096),
];

const fn cfg(good: usize, lazy: usize, nice: usize, chain: usize) -> Config {
    Config {
        good,
        lazy,
        nice,
        chain,
    }
}

/// Hash of the three bytes at `p` (zlib's rolling `UPDATE_HASH` depends on exactly these).
#[inline(always)]
fn hash3(win: &Window, p: usize) -> usize {
    let p = p & WBMASK;
    let b = &win[p..p + 3];
    (((b[0] as usize) << 10) ^ ((b[1] as usize) << 5) ^ (b[2] as usize)) & HASH_MASK
}

/// Window bytes addressed through a power-of-two mask, with slack after the mask so that
/// reads of up to 16 bytes at a masked index need no bounds check. Only the first
/// `WINDOW_SIZE` bytes (plus what matching reads past the data) are ever used.
const WBMASK: usize = (1 << 17) - 1;
type Window = [u8; WBMASK + 1 + 16];

#[inline(always)]
fn load16(w: &Window, i: usize) -> u16 {
    let i = i & WBMASK;
    u16::from_le_bytes([w[i], w[i + 1]])
}

#[inline(always)]
fn load64(w: &Window, i: usize) -> u64 {
    let i = i & WBMASK;
    u64::from_le_bytes(w[i..i + 8].try_into().unwrap())
}

/// Length of the common prefix of the strings at `a` and `b`, at most `max` (≤ 258).
#[inline(always)]
fn common_prefix_at(w: &Window, a: usize, b: usize, max: usize) -> usize {
    let mut i = 0;
    while i < max {
        let x = load64(w, a + i) ^ load64(w, b + i);
        if x != 0 {
            return (i + (x.trailing_zeros() / 8) as usize).min(max);
        }
        i += 8;
    }
    max
}

/// The window, hash heads and chain links. `prev2` links each position to the second-next
/// one on its chain (`prev[prev[p]]`, kept at insertion for the price of one more load and
/// store), so a search can follow two interleaved halves of a chain and keep two memory
/// loads in flight instead of one.
pub(super) struct Chains {
    window: Box<Window>,
    head: Box<[u16; HASH_SIZE]>,
    prev: Box<[u16; WSIZE]>,
    prev2: Box<[u16; WSIZE]>,
}

fn zeroed<const N: usize>() -> Box<[u16; N]> {
    vec![0u16; N].into_boxed_slice().try_into().unwrap()
}

impl Chains {
    pub(super) fn new() -> Self {
        Chains {
            window: vec![0u8; WBMASK + 1 + 16]
                .into_boxed_slice()
                .try_into()
                .unwrap(),
            head: zeroed(),
            prev: zeroed(),
            prev2: zeroed(),
        }
    }

    /// Inserts the string at `p` (zlib's `INSERT_STRING`); returns the previous head of its
    /// chain (0: none).
    #[inline(always)]
    fn insert(&mut self, p: usize) -> usize {
        let h = hash3(&self.window, p);
        let old = self.head[h] as usize;
        let old2 = if old != 0 { self.prev[old & WMASK] } else { 0 };
        self.prev[p & WMASK] = old as u16;
        self.prev2[p & WMASK] = old2;
        self.head[h] = p as u16;
        old
    }

    /// zlib's `slide_hash`: window indices drop by 32 KiB, those below become "none".
    fn slide(&mut self) {
        for v in self.head.iter_mut() {
            *v = v.saturating_sub(WSIZE as u16);
        }
        for v in self.prev.iter_mut() {
            *v = v.saturating_sub(WSIZE as u16);
        }
        for v in self.prev2.iter_mut() {
            *v = v.saturating_sub(WSIZE as u16);
        }
    }
}

/// The parse state of one stream (zlib's `deflate_state` minus the output side).
pub(super) struct Lz<'a> {
    src: &'a [u8],
    /// `src` index of window index 0.
    base: usize,
    /// Bytes of `src` read into the window so far.
    read: usize,
    strstart: usize,
    lookahead: usize,
    /// Window index where the current block starts (negative once slid out).
    block_start: isize,
    /// Start of the last match found (wraps like zlib's unsigned when slid below 0).
    match_start: usize,
    ch: &'a mut Chains,
    block: &'a mut Block,
    bw: BitWriter,
    out: &'a mut Vec<u8>,
}

impl<'a> Lz<'a> {
    pub(super) fn new(
        src: &'a [u8],
        ch: &'a mut Chains,
        block: &'a mut Block,
        out: &'a mut Vec<u8>,
    ) -> Self {
        ch.head.fill(0);
        block.reset();
        Lz {
            src,
            base: 0,
            read: 0,
            strstart: 0,
            lookahead: 0,
            block_start: 0,
            match_start: 0,
            ch,
            block,
            bw: BitWriter::default(),
            out,
        }
    }

    /// zlib's `fill_window` for input that is all available at once.
    #[inline(never)]
    fn fill_window(&mut self) {
        loop {
            let mut more = WINDOW_SIZE - self.lookahead - self.strstart;
            if self.strstart >= WSIZE + MAX_DIST {
                let upper = self.strstart + self.lookahead - WSIZE;
                self.ch.window.copy_within(WSIZE..WSIZE + upper, 0);
                self.base += WSIZE;
                self.match_start = self.match_start.wrapping_sub(WSIZE);
                self.strstart -= WSIZE;
                self.block_start -= WSIZE as isize;
                self.ch.slide();
                more += WSIZE;
            }
            let avail = self.src.len() - self.read;
            if avail == 0 {
                break;
            }
            let n = more.min(avail);
            let at = self.strstart + self.lookahead;
            self.ch.window[at..at + n].copy_from_slice(&self.src[self.read..self.read + n]);
            self.read += n;
            self.lookahead += n;
            if self.lookahead >= MIN_LOOKAHEAD || self.read == self.src.len() {
                break;
            }
        }
    }

    /// Writes the current block (`FLUSH_BLOCK_ONLY`).
    fn flush_block(&mut self, last: bool) {
        let stored_len = (self.strstart as isize - self.block_start) as usize;
        let buf = if self.block_start >= 0 {
            let s = self.base + self.block_start as usize;
            Some(&self.src[s..s + stored_len])
        } else {
            None
        };
        self.block
            .flush(&mut self.bw, self.out, buf, stored_len, last);
        self.block_start = self.strstart as isize;
    }

    /// zlib's `deflate_fast` run to the end of the input (levels 1–3), final block included.
    pub(super) fn deflate_fast(&mut self, c: Config) {
        let mut match_length = MIN_MATCH - 1;
        loop {
            if self.lookahead < MIN_LOOKAHEAD {
                self.fill_window();
                if self.lookahead == 0 {
                    break;
                }
            }
            let mut strstart = self.strstart;
            let mut lookahead = self.lookahead;
            let ch = &mut *self.ch;
            let mut flush;
            // Steps until the lookahead needs refilling or a block is full.
            loop {
                let mut hash_head = 0;
                if lookahead >= MIN_MATCH {
                    hash_head = ch.insert(strstart);
                }
                if hash_head != 0 && strstart - hash_head <= MAX_DIST {
                    match_length = longest_match(
                        ch,
                        strstart,
                        hash_head,
                        MIN_MATCH - 1,
                        lookahead,
                        &c,
                        &mut self.match_start,
                    );
                }
                if match_length >= MIN_MATCH {
                    flush = self.block.tally_dist(
                        strstart.wrapping_sub(self.match_start),
                        match_length - MIN_MATCH,
                    );
                    lookahead -= match_length;
                    if match_length <= c.lazy && lookahead >= MIN_MATCH {
                        for _ in 1..match_length {
                            strstart += 1;
                            ch.insert(strstart);
                        }
                        strstart += 1;
                    } else {
                        strstart += match_length;
                    }
                    match_length = 0;
                } else {
                    flush = self.block.tally_lit(ch.window[strstart & WBMASK]);
                    lookahead -= 1;
                    strstart += 1;
                }
                if flush || lookahead < MIN_LOOKAHEAD {
                    break;
                }
            }
            self.strstart = strstart;
            self.lookahead = lookahead;
            if flush {
                self.flush_block(false);
            }
        }
        self.flush_block(true);
    }

    /// zlib's `deflate_slow` run to the end of the input (levels 4–9), final block included.
    pub(super) fn deflate_slow(&mut self, c: Config) {
        let mut match_length = MIN_MATCH - 1;
        let mut match_available = false;
        let mut prev_match;
        loop {
            if self.lookahead < MIN_LOOKAHEAD {
                self.fill_window();
                if self.lookahead == 0 {
                    break;
                }
            }
            let mut strstart = self.strstart;
            let mut lookahead = self.lookahead;
            let ch = &mut *self.ch;
            let mut flush;
            // A literal that fills the block is flushed before `strstart` moves past it.
            let mut step_after_flush = false;
            loop {
                let mut hash_head = 0;
                if lookahead >= MIN_MATCH {
                    hash_head = ch.insert(strstart);
                }
                let prev_length = match_length;
                prev_match = self.match_start;
                match_length = MIN_MATCH - 1;
                if hash_head != 0 && prev_length < c.lazy && strstart - hash_head <= MAX_DIST {
                    match_length = longest_match(
                        ch,
                        strstart,
                        hash_head,
                        prev_length,
                        lookahead,
                        &c,
                        &mut self.match_start,
                    );
                    if match_length == MIN_MATCH
                        && strstart.wrapping_sub(self.match_start) > TOO_FAR
                    {
                        match_length = MIN_MATCH - 1;
                    }
                }
                if prev_length >= MIN_MATCH && match_length <= prev_length {
                    let max_insert = strstart + lookahead - MIN_MATCH;
                    flush = self.block.tally_dist(
                        (strstart - 1).wrapping_sub(prev_match),
                        prev_length - MIN_MATCH,
                    );
                    lookahead -= prev_length - 1;
                    for _ in 0..prev_length - 2 {
                        strstart += 1;
                        if strstart <= max_insert {
                            ch.insert(strstart);
                        }
                    }
                    match_available = false;
                    match_length = MIN_MATCH - 1;
                    strstart += 1;
                } else if match_available {
                    flush = self.block.tally_lit(ch.window[(strstart - 1) & WBMASK]);
                    if flush {
                        step_after_flush = true;
                    } else {
                        strstart += 1;
                        lookahead -= 1;
                    }
                } else {
                    flush = false;
                    match_available = true;
                    strstart += 1;
                    lookahead -= 1;
                }
                if flush || lookahead < MIN_LOOKAHEAD {
                    break;
                }
            }
            self.strstart = strstart;
            self.lookahead = lookahead;
            if flush {
                self.flush_block(false);
                if step_after_flush {
                    self.strstart += 1;
                    self.lookahead -= 1;
                }
            }
        }
        if match_available {
            let c = self.src[self.base + self.strstart - 1];
            self.block.tally_lit(c);
        }
        self.flush_block(true);
    }
}

/// zlib's `longest_match`: walks the chain from `cur` (most recent first), accepting only
/// strictly longer matches, and returns the best length (at least `prev_length`, at most the
/// lookahead); `match_start` is set to the accepted candidate.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn longest_match(
    ch: &Chains,
    strstart: usize,
    cur: usize,
    prev_length: usize,
    lookahead: usize,
    c: &Config,
    match_start: &mut usize,
) -> usize {
    let mut chain = c.chain;
    let mut best_len = prev_length;
    if prev_length >= c.good {
        chain >>= 2;
    }
    let nice = c.nice.min(lookahead);
    let max_len = MAX_MATCH.min(lookahead);
    if best_len >= max_len {
        // No candidate can be strictly longer within the input (zlib may "find" one in the
        // bytes past the end, but then returns the lookahead just the same, and the caller
        // emits the previous match regardless).
        return best_len.min(lookahead);
    }
    let limit = strstart.saturating_sub(MAX_DIST);
    let w = &*ch.window;
    let mut scan_end = load16(w, strstart + best_len - 1);
    let scan_start = load16(w, strstart);
    let prev2 = &*ch.prev2;
    // Candidates c1, c2, c3, ... in chain order: `a` walks the odd ones, `b` the even ones,
    // so that two chain loads are in flight at a time.
    let mut a = cur;
    let mut b = ch.prev[a & WMASK] as usize;
    macro_rules! visit {
        ($m:expr) => {{
            let m = $m;
            if load16(w, m + best_len - 1) == scan_end && load16(w, m) == scan_start {
                let len = common_prefix_at(w, strstart, m, max_len);
                if len > best_len {
                    *match_start = m;
                    best_len = len;
                    if len >= nice {
                        break;
                    }
                    scan_end = load16(w, strstart + best_len - 1);
                }
            }
        }};
    }
    loop {
        visit!(a);
        chain -= 1;
        if b <= limit || chain == 0 {
            break;
        }
        let na = prev2[a & WMASK] as usize;
        visit!(b);
        chain -= 1;
        if na <= limit || chain == 0 {
            break;
        }
        let nb = prev2[b & WMASK] as usize;
        a = na;
        b = nb;
    }
    best_len.min(lookahead)
}
