//! BZIP2 (5): each part is one bzip2 stream, block size = level, work factor 30, as
//! `BZ2_bzBuffToBuffCompress` writes it (FORMAT.md §5.6).

use crate::error::{Error, Result};
use bzip2::{Action, Compress, Compression, Decompress, Status};

/// Maps a stored level as TileDB does: below 1 → 1, 1–9 as is, above 9 an error.
pub fn effective_level(level: i32) -> Result<u32> {
    match level {
        l if l < 1 => Ok(1),
        l @ 1..=9 => Ok(l as u32),
        l => Err(Error::invalid(format!("invalid compression level {l}"))),
    }
}

/// Appends the bzip2 stream of `src` to `out`.
pub fn compress(level: i32, src: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let mut c = Compress::new(Compression::new(effective_level(level)?), 30);
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

/// Decompresses the bzip2 stream `src` into exactly `dst.len()` bytes.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<()> {
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
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 97) as u8).collect();
        for level in [-1, 1, 5, 9] {
            for input in [&data[..], &[], &[3]] {
                let mut z = Vec::new();
                compress(level, input, &mut z).unwrap();
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
        compress(9, &[1u8; 1000], &mut z).unwrap();
        let mut back = vec![0u8; 999];
        assert!(decompress(&z, &mut back).is_err());
        let mut back = vec![0u8; 1001];
        assert!(decompress(&z, &mut back).is_err());
        let mut back = vec![0u8; 1000];
        assert!(decompress(&z[..z.len() - 4], &mut back).is_err());
    }
}
