//! An unfiltered tile: its datatype, cell size and bytes (and, for var-size tiles, offsets).

use crate::datatype::Datatype;
use crate::error::{Error, Result};

/// An unfiltered tile of cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tile {
    datatype: Datatype,
    cell_size: u64,
    data: Vec<u8>,
}

impl Tile {
    /// A tile of `datatype` cells of `cell_size` bytes (cell_val_num × datatype size).
    pub fn new(datatype: Datatype, cell_size: u64, data: Vec<u8>) -> Result<Tile> {
        check_cell_size(datatype, cell_size)?;
        Ok(Tile {
            datatype,
            cell_size,
            data,
        })
    }

    /// The tile's datatype.
    pub fn datatype(&self) -> Datatype {
        self.datatype
    }

    /// Bytes per cell.
    pub fn cell_size(&self) -> u64 {
        self.cell_size
    }

    /// The tile's bytes.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Takes the tile's bytes.
    pub fn into_data(self) -> Vec<u8> {
        self.data
    }
}

/// Checks that a cell size is positive and a whole number of datatype values.
pub fn check_cell_size(datatype: Datatype, cell_size: u64) -> Result<()> {
    if cell_size == 0 || cell_size % datatype.size() as u64 != 0 {
        return Err(Error::invalid(format!(
            "cell size {cell_size} is not a positive multiple of the {datatype} size {}",
            datatype.size()
        )));
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
        assert_eq!(t.into_data(), vec![1, 2]);
    }
}
