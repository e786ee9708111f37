//! Walking a data file: a plain concatenation of filtered tiles (docs/FORMAT.md §4.1).

use crate::common::{CliResult, Failure};
use tdbfilter::format::tile_format;

/// One filtered tile found in a data file.
#[derive(Clone, Copy, Debug)]
pub struct TileSpan<'a> {
    /// The tile's position in the file, from 0.
    pub index: usize,
    /// Byte offset of the tile in the file.
    pub offset: usize,
    /// The tile's filtered bytes (exactly one tile).
    pub bytes: &'a [u8],
}

/// Iterates the filtered tiles of a data file in order. Stops after the first error, which
/// names the tile index and its byte offset.
#[derive(Clone, Debug)]
pub struct Tiles<'a> {
    data: &'a [u8],
    offset: usize,
    index: usize,
    failed: bool,
}

impl<'a> Tiles<'a> {
    /// The tiles of `data`, which must be a sequence of whole filtered tiles.
    pub fn new(data: &'a [u8]) -> Tiles<'a> {
        Tiles {
            data,
            offset: 0,
            index: 0,
            failed: false,
        }
    }
}

impl<'a> Iterator for Tiles<'a> {
    type Item = CliResult<TileSpan<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.offset >= self.data.len() {
            return None;
        }
        let rest = &self.data[self.offset..];
        let size = match tile_format::filtered_tile_size(rest) {
            Ok(size) => usize::try_from(size)
                .ok()
                .filter(|s| *s <= rest.len())
                .ok_or_else(|| format!("tile size {size} exceeds the file")),
            Err(e) => Err(e.to_string()),
        };
        let size = match size {
            Ok(size) => size,
            Err(reason) => {
                self.failed = true;
                return Some(Err(Failure::new(format!(
                    "not a sequence of filtered tiles: tile {} at byte offset {} \
                     ({} of {} bytes left): {reason}",
                    self.index,
                    self.offset,
                    rest.len(),
                    self.data.len()
                ))));
            }
        };
        let span = TileSpan {
            index: self.index,
            offset: self.offset,
            bytes: &rest[..size],
        };
        self.offset += size;
        self.index += 1;
        Some(Ok(span))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_tiles_and_names_the_bad_offset() {
        // Two empty tiles, then a tile claiming one chunk with nothing behind it.
        let mut data = vec![0u8; 16];
        data.extend_from_slice(&1u64.to_le_bytes());
        let spans: Vec<_> = Tiles::new(&data).collect();
        assert_eq!(spans.len(), 3);
        assert_eq!(spans[1].as_ref().map(|s| s.offset).ok(), Some(8));
        let e = spans[2].as_ref().unwrap_err();
        assert!(
            e.message().unwrap_or("").contains("byte offset 16"),
            "{e:?}"
        );
        assert_eq!(Tiles::new(&[]).count(), 0);
    }
}
