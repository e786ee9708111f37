//! LZ4 (3): each part is one raw LZ4 block (no frame, no size prefix), decodable by
//! liblz4's `LZ4_decompress_safe` as TileDB uses it (FORMAT.md §5.5). The level is ignored.
//! Encoded with lz4_flex: valid blocks, not always liblz4 1.10's exact bytes.

use crate::error::{Error, Result};

/// Appends the LZ4 block of `src` to `out`. Empty input gives the one-byte block `00`.
pub fn compress(src: &[u8], out: &mut Vec<u8>) -> Result<()> {
    if src.is_empty() {
        out.push(0);
        return Ok(());
    }
    let start = out.len();
    out.resize(
        start + lz4_flex::block::get_maximum_output_size(src.len()),
        0,
    );
    let n = lz4_flex::block::compress_into(src, &mut out[start..])
        .map_err(|e| Error::Internal(format!("LZ4 compression failed: {e}")))?;
    out.truncate(start + n);
    Ok(())
}

/// Decodes the LZ4 block `src` into exactly `dst.len()` bytes.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<()> {
    if dst.is_empty() && src == [0] {
        return Ok(());
    }
    let n = lz4_flex::block::decompress_into(src, dst)
        .map_err(|e| Error::corrupt(format!("compressed data is corrupt: {e}")))?;
    if n != dst.len() {
        return Err(Error::corrupt(format!(
            "LZ4 block holds {n} bytes, expected {}",
            dst.len()
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
            let mut z = Vec::new();
            compress(input, &mut z).unwrap();
            let mut back = vec![0u8; input.len()];
            decompress(&z, &mut back).unwrap();
            assert_eq!(back, input);
        }
        let mut z = Vec::new();
        compress(&[], &mut z).unwrap();
        assert_eq!(z, [0]);
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
