//! BZIP2 (5): each part is one bzip2 stream, block size = level, work factor 30, as
//! `BZ2_bzBuffToBuffCompress` writes it (docs/FORMAT.md §5.6).
//!
//! Writing uses this crate's encoder (`codecs::bzip2::encode`), whose bytes equal
//! libbzip2 1.0.8's and which sorts blocks with a linear-time suffix sorter; a block it
//! cannot order as libbzip2 does (one equal to a proper rotation of itself) sends the part to
//! libbzip2 itself. Reading uses this crate's decoder (`codecs::bzip2::decode`), which checks
//! every block CRC and the stream CRC, with libbzip2 behind it for streams it rejects.

use crate::codecs::bzip2::encode::Encoder;
use crate::error::{Error, Result};
use crate::mem::OutBuf;
use bzip2::{Action, Compress, Compression, Decompress, Status};

/// Reusable bzip2 state of one thread.
#[derive(Default)]
pub struct Bzip2Contexts {
    encoder: Encoder,
}

/// Maps a stored level as TileDB does: below 1 → 1, 1–9 as is, above 9 an error.
pub fn effective_level(level: i32) -> Result<u32> {
    match level {
        l if l < 1 => Ok(1),
        l @ 1..=9 => Ok(l as u32),
        l => Err(Error::invalid(format!("invalid compression level {l}"))),
    }
}

/// Appends the bzip2 stream of `src` to `out`, byte for byte libbzip2's.
pub fn compress(ctxs: &mut Bzip2Contexts, level: i32, src: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let level = effective_level(level)?;
    match ctxs.encoder.compress(level, src, out) {
        Ok(()) => Ok(()),
        Err(_) => compress_libbzip2(level, src, out),
    }
}

/// Appends the bzip2 stream of `src` to `out` through libbzip2.
pub fn compress_libbzip2(level: u32, src: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let mut c = Compress::new(Compression::new(level), 30);
    out.reserve(src.len() + src.len() / 100 + 600);
    loop {
        let consumed = c.total_in() as usize;
        let status = c
            .compress_vec(&src[consumed..], out, Action::Finish)
            .map_err(|e| Error::Internal(format!("bzip2 compression failed: {e}")))?;
        match status {
            Status::StreamEnd => return Ok(()),
            _ => out.reserve(out.capacity().max(4096)),
        }
    }
}

/// Decompresses the bzip2 stream `src` into exactly `dst.len()` bytes. This crate's decoder
/// runs first; a stream it rejects (damaged, or a randomised block from bzip2 0.9) goes to
/// libbzip2, which reads it or gives the error.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<()> {
    OutBuf::over(dst, |o| decompress_into(src, o))
}

/// [`decompress`] into exactly the unwritten rest of `dst` (which may not be initialised).
/// The native decoder writes it directly; the rare streams that go to libbzip2 get the window
/// zero-filled first (its API takes `&mut [u8]`).
pub fn decompress_into(src: &[u8], dst: &mut OutBuf<'_>) -> Result<()> {
    match dst.attempt(|o| crate::codecs::bzip2::decode::decompress_into(src, o)) {
        Ok(()) => Ok(()),
        Err(_) => dst.init_with(dst.remaining(), |buf| decompress_libbzip2(src, buf)),
    }
}

/// Decompresses the bzip2 stream `src` into exactly `dst.len()` bytes through libbzip2.
pub fn decompress_libbzip2(src: &[u8], dst: &mut [u8]) -> Result<()> {
    let mut d = Decompress::new(false);
    let status = d
        .decompress(src, dst)
        .map_err(|e| Error::corrupt(format!("compressed data is corrupt: {e}")))?;
    if status != Status::StreamEnd {
        return Err(Error::corrupt(format!(
            "bzip2 stream does not end within the expected {} bytes",
            dst.len()
        )));
    }
    if d.total_out() as usize != dst.len() {
        return Err(Error::corrupt(format!(
            "bzip2 stream holds {} bytes, expected {}",
            d.total_out(),
            dst.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_level() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 97 + i / 1000) as u8).collect();
        // Periodic: every block equals a rotation of itself, so libbzip2 writes it.
        let periodic: Vec<u8> = (0..200_000u32).map(|i| (i % 97) as u8).collect();
        let mut ctxs = Bzip2Contexts::default();
        for level in [-1, 1, 5, 9] {
            for input in [&data[..], &periodic[..], &[], &[3]] {
                let mut z = Vec::new();
                compress(&mut ctxs, level, input, &mut z).unwrap();
                let mut reference = Vec::new();
                compress_libbzip2(effective_level(level).unwrap(), input, &mut reference).unwrap();
                assert_eq!(z, reference, "level {level}, {} bytes", input.len());
                assert!(z.starts_with(b"BZh"));
                let mut back = vec![0u8; input.len()];
                decompress(&z, &mut back).unwrap();
                assert_eq!(back, input);
            }
        }
        assert!(effective_level(10).is_err());
        assert_eq!(effective_level(0).unwrap(), 1);
    }

    #[test]
    fn corrupt_streams_fail() {
        let mut z = Vec::new();
        compress(&mut Bzip2Contexts::default(), 9, &[1u8; 1000], &mut z).unwrap();
        let mut back = vec![0u8; 999];
        assert!(decompress(&z, &mut back).is_err());
        let mut back = vec![0u8; 1001];
        assert!(decompress(&z, &mut back).is_err());
        let mut back = vec![0u8; 1000];
        assert!(decompress(&z[..z.len() - 4], &mut back).is_err());
    }
}
