//! Packed subarrays: per dimension an inclusive [low, high] pair in the dimension's type,
//! packed in dimension order (the layout the C API's `tdb_array_read` takes).

use super::schema::{Dimension, Range};
use crate::error::{Error, Result};
use std::fmt;

/// The byte layout of a packed subarray of an array's dimensions.
#[derive(Clone, Debug)]
pub struct SubarrayLayout<'a> {
    dims: &'a [Dimension],
    size: usize,
}

impl<'a> SubarrayLayout<'a> {
    /// The layout for `dims`. A string dimension (var-size coordinates) cannot be packed and
    /// is `Unsupported`, naming it.
    pub fn of(dims: &'a [Dimension]) -> Result<SubarrayLayout<'a>> {
        let mut size = 0;
        for d in dims {
            let n = d.coord_size().ok_or_else(|| {
                Error::Unsupported(format!(
                    "subarrays on string dimension '{}' ({}) are not supported through \
                     packed subarrays",
                    d.name, d.datatype
                ))
            })?;
            size += 2 * n;
        }
        Ok(SubarrayLayout { dims, size })
    }

    /// The bytes a packed subarray takes: the sum over dimensions of 2 × the coordinate size.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Splits a packed subarray into one range per dimension. A size other than
    /// [`size`](Self::size) is `InvalidArgument` naming the dimensions and their types.
    pub fn split(&self, bytes: &[u8]) -> Result<Vec<Range>> {
        if bytes.len() != self.size {
            return Err(Error::invalid(format!(
                "subarray is {} bytes; {self}",
                bytes.len()
            )));
        }
        let mut rest = bytes;
        let mut out = Vec::with_capacity(self.dims.len());
        for d in self.dims {
            let n = d.coord_size().expect("checked by SubarrayLayout::of");
            let (lo, tail) = rest.split_at(n);
            let (hi, tail) = tail.split_at(n);
            out.push(Range::Fixed(lo.to_vec(), hi.to_vec()));
            rest = tail;
        }
        Ok(out)
    }
}

/// What the layout needs, e.g. `the array's 2 dimensions need 32: [low, high] of 'rows'
/// (INT64, 8 bytes each), [low, high] of 'cols' (INT64, 8 bytes each)`.
impl fmt::Display for SubarrayLayout<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.dims.len();
        let (noun, verb) = if n == 1 {
            ("dimension", "needs")
        } else {
            ("dimensions", "need")
        };
        write!(f, "the array's {n} {noun} {verb} {}:", self.size)?;
        for (i, d) in self.dims.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let each = d.coord_size().expect("checked by SubarrayLayout::of");
            let unit = if each == 1 { "byte" } else { "bytes" };
            write!(
                f,
                "{sep} [low, high] of '{}' ({}, {each} {unit} each)",
                d.name, d.datatype
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Datatype, Pipeline};

    fn dim(name: &str, datatype: Datatype, cell_val_num: u32) -> Dimension {
        Dimension {
            name: name.into(),
            datatype,
            cell_val_num,
            filters: Pipeline::new(),
            uses_coords_filters: false,
            domain: None,
            tile_extent: None,
        }
    }

    #[test]
    fn sizes_and_messages_name_every_dimension() {
        let dims = [
            dim("rows", Datatype::Int64, 1),
            dim("cols", Datatype::Int32, 1),
        ];
        let layout = SubarrayLayout::of(&dims).unwrap();
        assert_eq!(layout.size(), 24);
        let bytes: Vec<u8> = (0..24).collect();
        let ranges = layout.split(&bytes).unwrap();
        assert_eq!(ranges[0], Range::Fixed((0..8).collect(), (8..16).collect()));
        assert_eq!(
            ranges[1],
            Range::Fixed((16..20).collect(), (20..24).collect())
        );
        let e = layout.split(&bytes[..16]).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)));
        assert_eq!(
            e.message(),
            "subarray is 16 bytes; the array's 2 dimensions need 24: [low, high] of 'rows' \
             (INT64, 8 bytes each), [low, high] of 'cols' (INT32, 4 bytes each)"
        );
        let one = [dim("x", Datatype::Uint8, 1)];
        assert_eq!(
            SubarrayLayout::of(&one).unwrap().to_string(),
            "the array's 1 dimension needs 2: [low, high] of 'x' (UINT8, 1 byte each)"
        );
    }

    #[test]
    fn string_dimensions_are_unsupported() {
        let dims = [
            dim("d", Datatype::Int32, 1),
            dim("s", Datatype::StringAscii, super::super::schema::VAR_NUM),
        ];
        let e = SubarrayLayout::of(&dims).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{e}");
        assert!(e.message().contains("'s' (STRING_ASCII)"), "{e}");
    }
}
