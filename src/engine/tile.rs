//! An unfiltered tile: its datatype, cell size and bytes, and for var-size tiles the cells'
//! offsets (u64, tile-relative, one per cell, no extra element — docs/FORMAT.md §4.2, §7.1).

use crate::error::{Error, Result};
use crate::format::datatype::Datatype;

/// An unfiltered tile of cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tile {
    datatype: Datatype,
    cell_size: u64,
    data: Vec<u8>,
    offsets: Option<Vec<u64>>,
}

impl Tile {
    /// A fixed-size tile of `datatype` cells of `cell_size` bytes (cell_val_num × datatype size).
    pub fn new(datatype: Datatype, cell_size: u64, data: Vec<u8>) -> Result<Tile> {
        check_cell_size(datatype, cell_size)?;
        Ok(Tile {
            datatype,
            cell_size,
            data,
            offsets: None,
        })
    }

    /// A var-size tile: cell `i` spans `data[offsets[i]..offsets[i+1]]`, the last cell runs to
    /// the end. Offsets must start at 0, never decrease and never pass the data.
    pub fn new_var(datatype: Datatype, offsets: Vec<u64>, data: Vec<u8>) -> Result<Tile> {
        check_offsets(&offsets, data.len()).map_err(Error::InvalidArgument)?;
        Ok(Tile {
            datatype,
            cell_size: datatype.size() as u64,
            data,
            offsets: Some(offsets),
        })
    }

    /// The tile's datatype.
    pub fn datatype(&self) -> Datatype {
        self.datatype
    }

    /// Bytes per cell (for a var-size tile: the datatype size, as TileDB's chunking uses it).
    pub fn cell_size(&self) -> u64 {
        self.cell_size
    }

    /// The tile's bytes (for a var-size tile: the concatenated cell values).
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The cells' start offsets, for a var-size tile.
    pub fn offsets(&self) -> Option<&[u64]> {
        self.offsets.as_deref()
    }

    /// Takes the tile's bytes.
    pub fn into_data(self) -> Vec<u8> {
        self.data
    }
}

/// Checks that a cell size is positive and a whole number of datatype values.
pub fn check_cell_size(datatype: Datatype, cell_size: u64) -> Result<()> {
    if cell_size == 0 || !cell_size.is_multiple_of(datatype.size() as u64) {
        return Err(Error::invalid(format!(
            "cell size {cell_size} is not a positive multiple of the {datatype} size {}",
            datatype.size()
        )));
    }
    Ok(())
}

/// Checks var-size offsets against `data_len` bytes of data; the message says what is wrong.
pub fn check_offsets(offsets: &[u64], data_len: usize) -> std::result::Result<(), String> {
    match offsets.first() {
        None if data_len != 0 => {
            return Err(format!("{data_len} bytes of data but no cells"));
        }
        Some(&first) if first != 0 => {
            return Err(format!("the first offset is {first}, not 0"));
        }
        _ => {}
    }
    for (i, w) in offsets.windows(2).enumerate() {
        if w[1] < w[0] {
            return Err(format!(
                "offset {} ({}) is below offset {i} ({})",
                i + 1,
                w[1],
                w[0]
            ));
        }
    }
    if let Some(&last) = offsets.last()
        && last > data_len as u64
    {
        return Err(format!(
            "offset {} ({last}) points past the {data_len} bytes of data",
            offsets.len() - 1
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_size_is_validated() {
        assert!(Tile::new(Datatype::Int32, 12, vec![0; 24]).is_ok());
        assert!(Tile::new(Datatype::Int32, 6, vec![]).is_err());
        assert!(Tile::new(Datatype::Uint8, 0, vec![]).is_err());
        let t = Tile::new(Datatype::Uint8, 1, vec![1, 2]).unwrap();
        assert_eq!(t.offsets(), None);
        assert_eq!(t.into_data(), vec![1, 2]);
    }

    #[test]
    fn offsets_are_validated() {
        let t = Tile::new_var(Datatype::StringAscii, vec![0, 2, 2], b"abc".to_vec()).unwrap();
        assert_eq!(t.offsets(), Some(&[0u64, 2, 2][..]));
        assert_eq!(t.cell_size(), 1);
        assert!(Tile::new_var(Datatype::StringAscii, vec![], vec![]).is_ok());
        for (offsets, len) in [
            (vec![], 1usize),
            (vec![1], 3),
            (vec![0, 2, 1], 3),
            (vec![0, 4], 3),
        ] {
            let e =
                Tile::new_var(Datatype::StringAscii, offsets.clone(), vec![0; len]).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument(_)), "{offsets:?}");
        }
    }
}
