//! A zlib stream writer producing exactly the bytes of zlib 1.3.1 called as
//! `deflateInit(level)` + one `deflate(Z_FINISH)` with enough output space (windowBits 15,
//! memLevel 8, default strategy), for every level 0–9 — only faster.
//!
//! Same decisions, different machinery: hash chains are followed along two interleaved
//! halves (two memory loads in flight), matches are compared eight bytes at a time without
//! bounds checks, hash values are computed from the three bytes they depend on, the bit
//! writer holds 64 bits and Adler-32 runs sixteen lanes wide. The parse
//! ([`matcher`]) and the block encoder ([`trees`]) follow zlib's algorithms step by step,
//! including its window sliding, chain limits, lazy evaluation, block-size limit and the
//! stored/fixed/dynamic choice; the tests compare with the C zlib byte for byte.

mod matcher;
mod trees;

use matcher::{CONFIG, Chains, Lz};
use trees::{BitWriter, Block};

/// Reusable state of the writer: window, hash heads, chain links and the symbol buffer
/// (about 400 KiB), so that compressing many parts allocates nothing.
pub struct ZlibEncoder {
    chains: Chains,
    block: Box<Block>,
}

impl Default for ZlibEncoder {
    fn default() -> Self {
        Self::new()
    }
}

impl ZlibEncoder {
    /// A new writer.
    pub fn new() -> Self {
        ZlibEncoder {
            chains: Chains::new(),
            block: Box::new(Block::new()),
        }
    }

    /// Appends to `out` the zlib stream of `src` at `level` (0–9; zlib's default −1 is 6),
    /// byte for byte what zlib 1.3.1 writes. Panics if `level > 9`.
    pub fn compress(&mut self, level: u32, src: &[u8], out: &mut Vec<u8>) {
        assert!(level <= 9, "zlib level {level} out of range 0..=9");
        out.reserve(src.len() / 2 + 64);
        out.extend_from_slice(&header(level).to_be_bytes());
        if level == 0 {
            stored(src, out);
        } else {
            let c = CONFIG[level as usize];
            let mut lz = Lz::new(src, &mut self.chains, &mut self.block, out);
            if level <= 3 {
                lz.deflate_fast(c);
            } else {
                lz.deflate_slow(c);
            }
        }
        out.extend_from_slice(&adler32(src).to_be_bytes());
    }
}

/// Appends to `out` the zlib stream of `src` at `level` (0–9), exactly as zlib 1.3.1's
/// `deflateInit(level)` + `deflate(Z_FINISH)` write it. Panics if `level > 9`. Allocates
/// a [`ZlibEncoder`]; keep one to compress many inputs.
pub fn zlib_compress(level: u32, src: &[u8], out: &mut Vec<u8>) {
    ZlibEncoder::new().compress(level, src, out);
}

/// The two-byte zlib header zlib writes for `level` (32 KiB window, no dictionary).
fn header(level: u32) -> u16 {
    let flags = match level {
        0 | 1 => 0,
        2..=5 => 1,
        6 => 2,
        _ => 3,
    };
    let h = (0x78u16 << 8) | (flags << 6);
    h + (31 - h % 31)
}

/// Level 0 (`deflate_stored` with all input and enough output at once): stored blocks of
/// 65535 bytes, the last one holding the rest; an empty input gives one empty block.
fn stored(src: &[u8], out: &mut Vec<u8>) {
    let mut bw = BitWriter::default();
    if src.is_empty() {
        trees::stored_block(&mut bw, out, src, true);
        return;
    }
    out.reserve(src.len() + src.len() / 65535 * 5 + 5);
    let mut chunks = src.chunks(65535).peekable();
    while let Some(c) = chunks.next() {
        trees::stored_block(&mut bw, out, c, chunks.peek().is_none());
    }
}

/// Adler-32 of `data` (RFC 1950), sixteen byte lanes at a time.
pub fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    /// Most bytes before the sums must be reduced (zlib's NMAX, a multiple of 16).
    const NMAX: usize = 5552;
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(NMAX) {
        let mut wide = chunk.chunks_exact(16);
        let mut s1 = [0u32; 16];
        let mut s2 = [0u32; 16];
        for block in wide.by_ref() {
            for j in 0..16 {
                s2[j] += s1[j];
                s1[j] += block[j] as u32;
            }
        }
        let n = (chunk.len() / 16 * 16) as u64;
        let mut bb = b as u64 + n * a as u64;
        let mut aa = a as u64;
        for j in 0..16 {
            bb += 16 * s2[j] as u64 + (16 - j as u64) * s1[j] as u64;
            aa += s1[j] as u64;
        }
        for &x in wide.remainder() {
            aa += x as u64;
            bb += aa;
        }
        a = (aa % MOD as u64) as u32;
        b = (bb % MOD as u64) as u32;
    }
    (b << 16) | a
}

#[cfg(test)]
mod tests;
