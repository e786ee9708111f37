//! A batch's buffers as the writer holds them: each field's cell values, offsets and validity,
//! owned or borrowed from the caller ([`Input`], [`FieldBuffers`]), and views of them
//! (the coordinates of the dimensions, one cell's bytes).

use crate::array::field::FieldInfo;
use crate::array::order::global::DimCoords;
use crate::array::schema::ArraySchema;
use std::borrow::Cow;

/// The batch's coordinates, one buffer per dimension (the fields after the attributes).
pub(super) fn coords_of<'b>(
    schema: &ArraySchema,
    fields: &[FieldInfo],
    inputs: &'b [Input<'_>],
) -> Vec<DimCoords<'b>> {
    let a = schema.attributes.len();
    fields[a..]
        .iter()
        .zip(&inputs[a..])
        .map(|(f, i)| {
            let data = i.data.as_deref().unwrap_or(&[]);
            match (i.offsets.as_deref(), f.is_var()) {
                (Some(o), true) => DimCoords::Var { offsets: o, data },
                _ => DimCoords::Fixed(data),
            }
        })
        .collect()
}

/// The bytes of cell `c` of one dimension's coordinates.
pub(super) fn cell_bytes(c: &DimCoords<'_>, i: usize, cell_size: usize) -> Vec<u8> {
    match *c {
        DimCoords::Var { offsets, data } => var_cell(data, offsets, i).to_vec(),
        DimCoords::Fixed(data) => data[i * cell_size..(i + 1) * cell_size].to_vec(),
    }
}

/// The bytes of var-size cell `c` of an input.
pub(super) fn var_cell<'a>(data: &'a [u8], offsets: &[u64], c: usize) -> &'a [u8] {
    let end = offsets.get(c + 1).map_or(data.len(), |e| *e as usize);
    &data[offsets[c] as usize..end]
}

/// One field's buffers of the current batch: owned (given to `set_data` and the like) or
/// borrowed from the caller for one [`Writer::submit_fields`].
#[derive(Clone, Debug, Default)]
pub(super) struct Input<'a> {
    pub data: Option<Cow<'a, [u8]>>,
    pub offsets: Option<Cow<'a, [u64]>>,
    pub validity: Option<Cow<'a, [u8]>>,
}

/// One field's cells for [`Writer::submit_fields`], borrowed for the call: the cell values
/// (fixed-size cells, or the concatenated values of var-size cells), the byte offset of each
/// var-size cell (one per cell, no extra element) and the validity of a nullable field (one
/// byte per cell, 0 null).
#[derive(Clone, Copy, Debug, Default)]
pub struct FieldBuffers<'a> {
    /// Cell values.
    pub data: &'a [u8],
    /// Offsets of var-size cells.
    pub offsets: Option<&'a [u64]>,
    /// Validity of nullable cells.
    pub validity: Option<&'a [u8]>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_of_var_and_fixed_buffers() {
        let (data, offsets) = (b"abcdef".as_slice(), [0u64, 1, 4]);
        assert_eq!(var_cell(data, &offsets, 0), b"a");
        assert_eq!(var_cell(data, &offsets, 1), b"bcd");
        assert_eq!(var_cell(data, &offsets, 2), b"ef");
        let var = DimCoords::Var {
            offsets: &offsets,
            data,
        };
        assert_eq!(cell_bytes(&var, 1, 1), b"bcd");
        let fixed = DimCoords::Fixed(&[1, 0, 2, 0, 3, 0]);
        assert_eq!(cell_bytes(&fixed, 2, 2), [3, 0]);
    }
}
