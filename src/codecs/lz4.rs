//! LZ4 (3): each part is one raw LZ4 block (no frame, no size prefix), made by liblz4 1.10.0's
//! `LZ4_compress_default` and read with `LZ4_decompress_safe`, as TileDB 2.30 does, so the
//! bytes match (docs/FORMAT.md §5.5). The level is ignored.

use crate::error::{Error, Result};
use crate::mem::{OutBuf, codec_out};

/// Parts of 2 GiB or more do not fit liblz4's `int` sizes.
const MAX_PART: usize = i32::MAX as usize;

/// Appends the LZ4 block of `src` to `out`. Empty input gives the one-byte block `00`.
pub fn compress(src: &[u8], out: &mut Vec<u8>) -> Result<()> {
    if src.len() > MAX_PART {
        return Err(Error::invalid("LZ4 input of 2 GiB or more"));
    }
    let start = out.len();
    let bound = lz4::block::compress_bound(src.len())
        .map_err(|e| Error::Internal(format!("LZ4 bound: {e}")))?;
    out.resize(start + bound, 0);
    let n = lz4::block::compress_to_buffer(src, None, false, &mut out[start..])
        .map_err(|e| Error::Internal(format!("LZ4 compression failed: {e}")))?;
    out.truncate(start + n);
    Ok(())
}

/// Decodes the LZ4 block `src` into exactly `dst.len()` bytes.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<()> {
    OutBuf::over(dst, |o| decompress_into(src, o))
}

/// Decodes the LZ4 block `src` into exactly the unwritten rest of `dst` (which may not be
/// initialised: liblz4 writes it directly).
pub fn decompress_into(src: &[u8], dst: &mut OutBuf<'_>) -> Result<()> {
    let len = dst.remaining();
    if len > MAX_PART || src.len() > MAX_PART {
        return Err(Error::corrupt("LZ4 part of 2 GiB or more"));
    }
    let n = codec_out::lz4_decompress(src, dst, len).ok_or_else(|| {
        Error::corrupt(format!(
            "compressed data is corrupt: not an LZ4 block of at most {len} bytes"
        ))
    })?;
    if n != len {
        return Err(Error::corrupt(format!(
            "LZ4 block holds {n} bytes, expected {len}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let data: Vec<u8> = (0..70_000u32)
            .map(|i| (i % 251) as u8 ^ (i / 1000) as u8)
            .collect();
        for input in [
            &data[..],
            &[],
            &[1],
            &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
        ] {
            let mut z = vec![0xEE];
            compress(input, &mut z).unwrap();
            assert_eq!(z[0], 0xEE, "compress must append");
            let mut back = vec![0u8; input.len()];
            decompress(&z[1..], &mut back).unwrap();
            assert_eq!(back, input);
        }
        let mut z = Vec::new();
        compress(&[], &mut z).unwrap();
        assert_eq!(z, [0]);
    }

    #[test]
    fn matches_tiledb_vector() {
        // docs/FORMAT.md §9.2: LZ4 of "abcde" is 50 6162636465.
        let mut z = Vec::new();
        compress(b"abcde", &mut z).unwrap();
        assert_eq!(z, [0x50, b'a', b'b', b'c', b'd', b'e']);
    }

    #[test]
    fn corrupt_blocks_fail() {
        let mut z = Vec::new();
        compress(&[7u8; 5000], &mut z).unwrap();
        let mut back = vec![0u8; 4999];
        assert!(decompress(&z, &mut back).is_err());
        let mut back = vec![0u8; 5001];
        assert!(decompress(&z, &mut back).is_err());
        let mut back = vec![0u8; 5000];
        assert!(decompress(&z[..z.len() - 2], &mut back).is_err());
        assert!(decompress(&[0xff; 16], &mut back).is_err());
    }
}
