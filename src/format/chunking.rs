//! How TileDB 2.30 cuts a tile into chunks (docs/FORMAT.md §4.3–§4.5).

use crate::error::{Error, Result};
use std::ops::Range;

/// The only chunk size TileDB uses for chunking (not the pipeline's `max_chunk_size`).
pub const CHUNK_SIZE: u64 = 65536;

/// The fixed-size chunk size: `min(64 KiB, tile)` rounded down to whole cells, at least one cell.
pub fn fixed_chunk_size(tile_size: u64, cell_size: u64) -> Result<u64> {
    if cell_size == 0 {
        return Err(Error::invalid("cell size must be greater than 0"));
    }
    let cs = (CHUNK_SIZE.min(tile_size) / cell_size * cell_size).max(cell_size);
    if cs > u32::MAX as u64 {
        return Err(Error::invalid("chunk size exceeds uint32_t"));
    }
    Ok(cs)
}

/// Byte ranges of the chunks of a fixed-size tile. With `chunking == false` the whole tile is
/// one chunk (an empty tile then still has one empty chunk).
pub fn fixed_chunks(tile_size: usize, cell_size: u64, chunking: bool) -> Result<Vec<Range<usize>>> {
    if !chunking {
        if tile_size as u64 > u32::MAX as u64 {
            return Err(Error::invalid(
                "tile larger than 4 GiB cannot be written as one chunk",
            ));
        }
        return Ok(std::iter::once(0..tile_size).collect());
    }
    let cs = fixed_chunk_size(tile_size as u64, cell_size)? as usize;
    if tile_size == cs {
        return Ok(std::iter::once(0..tile_size).collect());
    }
    Ok((0..tile_size.div_ceil(cs))
        .map(|i| i * cs..((i + 1) * cs).min(tile_size))
        .collect())
}

/// Byte ranges of the chunks of a var-size data tile, by TileDB's heuristic (§4.5): cells are
/// never split; a chunk may grow to 1.5 × the chunk size; the last cell closing a chunk leaves
/// a trailing empty chunk. `offsets` are the cells' start offsets into the tile.
pub fn var_chunks(
    tile_size: usize,
    datatype_size: u64,
    offsets: &[u64],
    chunking: bool,
) -> Result<Vec<Range<usize>>> {
    let cs = if chunking {
        fixed_chunk_size(tile_size as u64, datatype_size)?
    } else {
        if tile_size as u64 > u32::MAX as u64 {
            return Err(Error::invalid(
                "tile larger than 4 GiB cannot be written as one chunk",
            ));
        }
        tile_size as u64
    };
    if tile_size as u64 == cs {
        return Ok(std::iter::once(0..tile_size).collect());
    }
    let (lo, hi) = (cs / 2, cs + cs / 2);
    let mut starts = vec![0u64];
    let mut cur = 0u64;
    let n = offsets.len();
    for c in 0..n {
        let off = offsets[c];
        let end = if c + 1 < n {
            offsets[c + 1]
        } else {
            tile_size as u64
        };
        let s = end - off;
        let new = cur + s;
        if new > cs {
            if cur <= lo || new <= hi {
                if new > u32::MAX as u64 {
                    return Err(Error::invalid("chunk size exceeds uint32_t"));
                }
                starts.push(off + s);
                cur = 0;
            } else {
                starts.push(off);
                if s > cs {
                    if s > u32::MAX as u64 {
                        return Err(Error::invalid("cell larger than 4 GiB cannot be chunked"));
                    }
                    if c + 1 < n {
                        starts.push(off + s);
                    }
                    cur = 0;
                } else {
                    cur = s;
                }
            }
        } else {
            cur += s;
        }
    }
    let mut ranges = Vec::with_capacity(starts.len());
    for (i, &s) in starts.iter().enumerate() {
        let e = starts.get(i + 1).copied().unwrap_or(tile_size as u64);
        ranges.push(s as usize..e as usize);
    }
    Ok(ranges)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lens(r: &[Range<usize>]) -> Vec<usize> {
        r.iter().map(|r| r.len()).collect()
    }

    #[test]
    fn fixed_examples_from_tiledb() {
        assert_eq!(
            lens(&fixed_chunks(200_000, 4, true).unwrap()),
            [65536, 65536, 65536, 3392]
        );
        assert_eq!(fixed_chunk_size(1_000_000, 12).unwrap(), 65532);
        assert_eq!(lens(&fixed_chunks(70_000, 1, true).unwrap()), [65536, 4464]);
        assert_eq!(lens(&fixed_chunks(3, 4, true).unwrap()), [3]);
        assert_eq!(lens(&fixed_chunks(65536, 8, true).unwrap()), [65536]);
        assert_eq!(lens(&fixed_chunks(65537, 1, true).unwrap()), [65536, 1]);
        assert!(fixed_chunks(0, 4, true).unwrap().is_empty());
        assert_eq!(lens(&fixed_chunks(0, 4, false).unwrap()), [0]);
        assert_eq!(lens(&fixed_chunks(200_000, 4, false).unwrap()), [200_000]);
        assert!(fixed_chunks(10, 0, true).is_err());
    }

    fn offsets_of(sizes: &[u64]) -> Vec<u64> {
        let mut o = Vec::new();
        let mut acc = 0;
        for s in sizes {
            o.push(acc);
            acc += s;
        }
        o
    }

    #[test]
    fn var_examples_from_tiledb() {
        let o = offsets_of(&[40_000, 40_000]);
        assert_eq!(lens(&var_chunks(80_000, 1, &o, true).unwrap()), [80_000, 0]);
        let sizes = [30_000, 30_000, 30_000, 100_000, 10, 70_000];
        let total: u64 = sizes.iter().sum();
        let o = offsets_of(&sizes);
        assert_eq!(
            lens(&var_chunks(total as usize, 1, &o, true).unwrap()),
            [90_000, 100_000, 70_010, 0]
        );
        // An all-empty var tile is one empty chunk.
        assert_eq!(lens(&var_chunks(0, 1, &[0, 0, 0], true).unwrap()), [0]);
        // Small tiles are one chunk.
        assert_eq!(lens(&var_chunks(5, 1, &[0, 2, 2], true).unwrap()), [5]);
    }
}
