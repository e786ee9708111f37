//! bzip2 streams as libbzip2 1.0.8 writes them (`BZ2_bzBuffToBuffCompress`, work factor 30),
//! byte for byte, and a decoder for any bzip2 stream.
//!
//! Format: "BZh" + block-size digit; per block a 48-bit magic, the block CRC, a randomised
//! bit, the BWT origin pointer, the symbol map, Huffman tables with MTF-coded selectors and
//! the MTF/zero-run coded BWT of the run-length (RLE1) coded input; after the last block the
//! end magic and the combined CRC.

pub mod bit_writer;
pub mod crc;
pub mod decode;
pub mod encode;
pub mod libbzip2;

/// First 48 bits of every block: the BCD digits of pi.
pub const BLOCK_MAGIC: u64 = 0x3141_5926_5359;
/// First 48 bits after the last block: the BCD digits of sqrt(pi).
pub const END_MAGIC: u64 = 0x1772_4538_5090;
/// Symbols per selector group.
pub const GROUP_SIZE: usize = 50;
/// Most Huffman tables in a block.
pub const MAX_TABLES: usize = 6;
/// Largest alphabet: 256 byte values, RUNA/RUNB replace MTF index 0, plus end-of-block.
pub const MAX_ALPHA: usize = 258;
/// Longest code length libbzip2 writes (it reads up to 20).
pub const MAX_CODE_LEN: u8 = 17;
/// Zero-run symbols.
pub const RUNA: u16 = 0;
/// Zero-run symbols.
pub const RUNB: u16 = 1;

/// Bytes of one block for a block-size level 1–9 (before the 19-byte safety margin).
pub fn block_capacity(level: u32) -> usize {
    100_000 * level as usize
}

/// libbzip2 1.0.8's stream of `src` at `level`, work factor 30: the reference of the tests.
#[cfg(test)]
pub(crate) fn libbzip2_compress(level: u32, src: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    crate::codecs::bzip2::libbzip2::compress_libbzip2(level, src, &mut out).unwrap();
    out
}
