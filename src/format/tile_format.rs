//! The filtered tile layout (docs/FORMAT.md §4.1): `u64 num_chunks`, then per chunk
//! `u32 original_length, u32 filtered_length, u32 metadata_length, metadata, data`.

use crate::error::{Error, Result};
use crate::format::byte_reader::ByteReader;

/// Bytes of a chunk header.
pub const CHUNK_HEADER_SIZE: usize = 12;

/// One chunk of a filtered tile, borrowed from the tile bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkRef<'a> {
    /// Unfiltered length of the chunk.
    pub original_length: u32,
    /// The final stage's metadata, concatenated.
    pub metadata: &'a [u8],
    /// The final stage's data, concatenated.
    pub data: &'a [u8],
}

/// A parsed, validated chunk table.
#[derive(Clone, Debug)]
pub struct ChunkTable<'a> {
    /// The chunks in order.
    pub chunks: Vec<ChunkRef<'a>>,
    /// Bytes the filtered tile occupies.
    pub tile_size: usize,
    /// Sum of the chunks' original lengths.
    pub unfiltered_size: u64,
}

fn read_num_chunks(r: &mut ByteReader<'_>, available: usize) -> Result<usize> {
    let n = r.u64()?;
    // Every chunk needs at least its 12-byte header.
    let max = (available.saturating_sub(8) / CHUNK_HEADER_SIZE) as u64;
    if n > max {
        return Err(Error::corrupt(format!(
            "filtered tile claims {n} chunks but {available} bytes hold at most {max}"
        )));
    }
    Ok(n as usize)
}

/// Parses the chunk table of the filtered tile at the start of `bytes`, checking every length
/// against the buffer. Bytes after the tile are not examined.
pub fn parse(bytes: &[u8]) -> Result<ChunkTable<'_>> {
    let mut r = ByteReader::new(bytes, "filtered tile");
    let n = read_num_chunks(&mut r, bytes.len())?;
    let mut chunks = Vec::with_capacity(n);
    let mut unfiltered_size = 0u64;
    for i in 0..n {
        let chunk = (|| {
            let original_length = r.u32()?;
            let filtered = r.u32()? as usize;
            let md = r.u32()? as usize;
            let metadata = r.take(md)?;
            let data = r.take(filtered)?;
            Ok::<_, Error>(ChunkRef {
                original_length,
                metadata,
                data,
            })
        })()
        .map_err(|e| e.context(format!("chunk {i}")))?;
        unfiltered_size += chunk.original_length as u64;
        chunks.push(chunk);
    }
    Ok(ChunkTable {
        chunks,
        tile_size: r.position(),
        unfiltered_size,
    })
}

/// The size of the filtered tile at the start of `bytes`, without reading chunk contents.
pub fn filtered_tile_size(bytes: &[u8]) -> Result<u64> {
    let mut r = ByteReader::new(bytes, "filtered tile");
    let n = read_num_chunks(&mut r, bytes.len())?;
    for i in 0..n {
        (|| {
            r.u32()?;
            let filtered = r.u32()? as usize;
            let md = r.u32()? as usize;
            r.take(md)?;
            r.take(filtered)?;
            Ok::<_, Error>(())
        })()
        .map_err(|e| e.context(format!("chunk {i}")))?;
    }
    Ok(r.position() as u64)
}

/// Appends a chunk header to `out`.
pub fn write_chunk_header(out: &mut Vec<u8>, original: u32, filtered: u32, metadata: u32) {
    out.extend_from_slice(&chunk_header(original, filtered, metadata));
}

/// A chunk header's 12 bytes: original, filtered and metadata lengths, little-endian.
pub fn chunk_header(original: u32, filtered: u32, metadata: u32) -> [u8; CHUNK_HEADER_SIZE] {
    let mut h = [0u8; CHUNK_HEADER_SIZE];
    h[0..4].copy_from_slice(&original.to_le_bytes());
    h[4..8].copy_from_slice(&filtered.to_le_bytes());
    h[8..12].copy_from_slice(&metadata.to_le_bytes());
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tiledb_byteshuffle_vector() {
        // docs/FORMAT.md §9.2: BYTESHUFFLE of INT32 [1..8].
        let mut bytes = 1u64.to_le_bytes().to_vec();
        write_chunk_header(&mut bytes, 32, 32, 8);
        bytes.extend_from_slice(&[1, 0, 0, 0, 32, 0, 0, 0]);
        bytes.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        bytes.extend_from_slice(&[0; 24]);
        let mut padded = bytes.clone();
        padded.extend_from_slice(b"trailing");
        let t = parse(&padded).unwrap();
        assert_eq!(t.tile_size, bytes.len());
        assert_eq!(t.unfiltered_size, 32);
        assert_eq!(t.chunks.len(), 1);
        assert_eq!(t.chunks[0].metadata.len(), 8);
        assert_eq!(filtered_tile_size(&padded).unwrap(), bytes.len() as u64);
        for cut in 0..bytes.len() {
            let e = parse(&bytes[..cut]).unwrap_err();
            assert!(matches!(e, Error::CorruptData(_)), "cut {cut}: {e:?}");
            assert!(filtered_tile_size(&bytes[..cut]).is_err());
        }
    }

    #[test]
    fn absurd_chunk_counts_are_rejected_before_allocating() {
        let mut b = u64::MAX.to_le_bytes().to_vec();
        b.extend_from_slice(&[0; 12]);
        let e = parse(&b).unwrap_err();
        assert!(e.message().contains("chunks"));
        assert_eq!(parse(&[0; 8]).unwrap().chunks.len(), 0);
    }
}
