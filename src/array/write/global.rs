//! Global-order writes (TileDB's `GlobalOrderWriter`): batches of cells already in the
//! array's global order streamed into one fragment, cut into whole tiles (dense: space tiles
//! of a tile-aligned box; sparse: `capacity` cells with one MBR each); the cells short of a
//! tile wait in [`Pending`] for the next batch or `finalize`. Sparse batches are checked
//! (domain, order, duplicates, continuity with the previous batch).

use super::Writer;
use super::batch::{Input, cell_bytes, var_cell};
use super::dense::{DenseTiler, RawTile};
use super::fragment::generator;
use super::tile_metadata::TileCells;
use crate::array::field::FieldInfo;
use crate::array::order::check;
use crate::array::order::global::DimCoords;
use crate::array::rtree::{self, Mbr};
use crate::array::schema::{ArraySchema, Layout};
use crate::error::{Error, Result};
use std::borrow::Cow;

impl Writer {
    /// A global-order sparse batch: coordinates inside the domain, sorted, after the last cell
    /// of the previous batch, and without duplicates unless the schema allows them (TileDB
    /// checks duplicates within a batch; a duplicate of the previous batch's last cell is
    /// refused here too, as it would make the fragment hold two equal cells).
    pub(super) fn check_sparse_batch(&mut self, inputs: &[Input<'_>], cells: u64) -> Result<()> {
        if cells == 0 {
            return Ok(());
        }
        let coords = self.coords(inputs);
        check::check_domain(&self.schema, &coords)?;
        let prev: Option<Vec<DimCoords<'_>>> = self.last_cell.as_ref().map(|l| {
            l.iter()
                .map(|c| match c {
                    (data, true) => DimCoords::Var {
                        offsets: &[0],
                        data,
                    },
                    (data, false) => DimCoords::Fixed(data),
                })
                .collect()
        });
        check::check_global_order(&self.schema, &coords, prev.as_deref())?;
        if self.check_coord_dups {
            let identity: Vec<u64> = (0..cells).collect();
            check::check_duplicates(&self.schema, &coords, &identity)?;
        }
        let a = self.schema.attributes.len();
        let dims = &self.fields[a..];
        let first: Vec<Vec<u8>> = coords
            .iter()
            .zip(dims)
            .map(|(c, f)| cell_bytes(c, 0, f.value_size()))
            .collect();
        if !self.schema.allows_dups
            && self.check_coord_dups
            && let Some(l) = &self.last_cell
            && l.iter().zip(&first).all(|((a, _), b)| a == b)
        {
            return Err(Error::invalid(
                "Duplicate coordinates: the batch's first cell repeats the previous batch's \
                 last cell",
            ));
        }
        let last = (cells - 1) as usize;
        let last_cell = coords
            .iter()
            .zip(dims)
            .map(|(c, f)| (cell_bytes(c, last, f.value_size()), f.is_var()))
            .collect();
        self.last_cell = Some(last_cell);
        Ok(())
    }

    /// Cells per tile of global-order writes: dense, a space tile; sparse, the capacity.
    pub(super) fn global_tile_cells(&self) -> Result<u64> {
        if self.schema.is_dense() {
            self.schema.cells_per_tile()
        } else if self.schema.capacity == 0 {
            Err(Error::invalid("the schema's capacity is 0"))
        } else {
            Ok(self.schema.capacity)
        }
    }

    /// A global-order batch: the cells left over from earlier batches and these ones, cut
    /// into whole tiles; what does not fill a tile waits for the next batch or finalize.
    pub(super) fn write_global(&mut self, inputs: &[Input<'_>], cells: u64) -> Result<()> {
        let dense = self.schema.is_dense();
        if dense {
            let bounds = self.dense_box()?;
            self.check_tile_aligned(&bounds)?;
            let tiler = DenseTiler::new(&self.schema, &bounds, Layout::RowMajor)?;
            if self.cells_written + self.pending_cells + cells > tiler.cell_num() {
                return Err(Error::invalid(format!(
                    "the batches hold more cells than the box's {}",
                    tiler.cell_num()
                )));
            }
        }
        let per_tile = self.global_tile_cells()?;
        let schema = self.schema.clone();
        let fields = self.fields.clone();
        (|| -> Result<()> {
            // Fill the pending tile first.
            let mut start = 0u64;
            if self.pending_cells > 0 {
                let take = (per_tile - self.pending_cells).min(cells);
                for (f, input) in inputs.iter().enumerate() {
                    append_cells(&mut self.pending[f], input, &fields[f], 0, take);
                }
                self.pending_cells += take;
                start = take;
                if self.pending_cells == per_tile {
                    let pending = std::mem::take(&mut self.pending);
                    self.pending = vec![Pending::default(); fields.len()];
                    self.pending_cells = 0;
                    let p: Vec<Input<'_>> = pending.iter().map(Pending::as_input).collect();
                    self.write_tiles(
                        1,
                        |_, f| Ok(slice_tile(&fields[f], &p[f], 0, per_tile)),
                        |_| self_mbr(&schema, &fields, &p, 0, per_tile),
                    )?;
                    self.cells_written += per_tile;
                }
            }
            let whole = (cells - start) / per_tile;
            if whole > 0 {
                self.write_tiles(
                    whole,
                    |t, f| {
                        Ok(slice_tile(
                            &fields[f],
                            &inputs[f],
                            start + t * per_tile,
                            per_tile,
                        ))
                    },
                    |t| self_mbr(&schema, &fields, inputs, start + t * per_tile, per_tile),
                )?;
                self.cells_written += whole * per_tile;
            }
            let rest = start + whole * per_tile;
            if rest < cells {
                for (f, input) in inputs.iter().enumerate() {
                    append_cells(&mut self.pending[f], input, &fields[f], rest, cells - rest);
                }
                self.pending_cells += cells - rest;
            }
            Ok(())
        })()
    }
}

/// Appends cells `first..first + n` of `input` to a pending tile.
pub(super) fn append_cells(p: &mut Pending, input: &Input<'_>, f: &FieldInfo, first: u64, n: u64) {
    let data = input.data.as_deref().unwrap_or(&[]);
    let (a, b) = (first as usize, (first + n) as usize);
    match input.offsets.as_deref() {
        Some(o) if f.is_var() => {
            for c in a..b {
                p.offsets.push(p.data.len() as u64);
                p.data.extend_from_slice(var_cell(data, o, c));
            }
        }
        _ => p
            .data
            .extend_from_slice(&data[a * f.value_size()..b * f.value_size()]),
    }
    if let Some(v) = &input.validity {
        p.validity.extend_from_slice(&v[a..b]);
    }
}

/// The tile of cells `first..first + n` of an input (global order: every cell written) and
/// its metadata over all its cells.
pub(super) fn slice_tile(f: &FieldInfo, input: &Input<'_>, first: u64, n: u64) -> (RawTile, u64) {
    let data = input.data.as_deref().unwrap_or(&[]);
    let (a, b) = (first as usize, (first + n) as usize);
    let (tile_data, offsets) = match input.offsets.as_deref() {
        Some(o) if f.is_var() => {
            let start = o.get(a).map_or(0, |x| *x);
            let end = o.get(b).map_or(data.len() as u64, |x| *x);
            let offs: Vec<u64> = o[a..b].iter().map(|x| x - start).collect();
            (data[start as usize..end as usize].to_vec(), Some(offs))
        }
        _ => (data[a * f.value_size()..b * f.value_size()].to_vec(), None),
    };
    let validity = if f.nullable {
        input.validity.as_ref().map(|v| v[a..b].to_vec())
    } else {
        None
    };
    let view = TileCells {
        data: &tile_data,
        offsets: offsets.as_deref(),
        validity: validity.as_deref(),
        cell_num: n,
    };
    let mut g = generator(f);
    g.process(&view, 0, n);
    let meta = g.finish();
    (
        RawTile {
            data: tile_data,
            offsets,
            validity,
            meta,
        },
        n,
    )
}

/// The MBR of cells `first..first + n` of the inputs (sparse: the dimensions follow the
/// attributes in `fields`); `None` for dense fragments.
pub(super) fn self_mbr(
    schema: &ArraySchema,
    fields: &[FieldInfo],
    inputs: &[Input<'_>],
    first: u64,
    n: u64,
) -> Result<Option<Mbr>> {
    if schema.is_dense() {
        return Ok(None);
    }
    let coords: Vec<DimCoords<'_>> = fields
        .iter()
        .zip(inputs)
        .filter(|(f, _)| f.is_dim())
        .map(|(f, i)| {
            let data = i.data.as_deref().unwrap_or(&[]);
            match (i.offsets.as_deref(), f.is_var()) {
                (Some(o), true) => DimCoords::Var { offsets: o, data },
                _ => DimCoords::Fixed(data),
            }
        })
        .collect();
    rtree::tile_mbr(schema, &coords, first as usize..(first + n) as usize).map(Some)
}

impl Pending {
    pub(super) fn as_input(&self) -> Input<'_> {
        Input {
            data: Some(Cow::Borrowed(&self.data)),
            offsets: Some(Cow::Borrowed(&self.offsets)),
            validity: Some(Cow::Borrowed(&self.validity)),
        }
    }
}

/// A field's cells not yet in a whole tile (global-order streaming).
#[derive(Clone, Debug, Default)]
pub(super) struct Pending {
    pub data: Vec<u8>,
    pub offsets: Vec<u64>,
    pub validity: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::field::FieldRef;

    fn var_schema() -> ArraySchema {
        ArraySchema::from_json(
            r#"{"sparse": true, "capacity": 2,
                "dimensions": [{"name": "d", "type": "INT32", "domain": [0, 9], "tile": 5}],
                "attributes": [{"name": "s", "type": "STRING_ASCII", "cell_val_num": "var",
                                "nullable": true}]}"#,
        )
        .unwrap()
    }

    #[test]
    fn pending_cells_and_tile_slices_rebase_offsets() {
        let s = FieldRef::Attribute(0).info(&var_schema());
        let input = Input {
            data: Some(Cow::Borrowed(b"abbccc")),
            offsets: Some(Cow::Owned(vec![0, 1, 3])),
            validity: Some(Cow::Owned(vec![1, 0, 1])),
        };
        // Cells 1..3 as one tile: offsets from 0, its validity, null count 1.
        let (tile, n) = slice_tile(&s, &input, 1, 2);
        assert_eq!((tile.data.as_slice(), n), (&b"bbccc"[..], 2));
        assert_eq!(tile.offsets.as_deref(), Some(&[0u64, 2][..]));
        assert_eq!(tile.validity.as_deref(), Some(&[0u8, 1][..]));
        assert_eq!(tile.meta.null_count, 1);
        // Pending cells accumulate batch after batch.
        let mut p = Pending::default();
        append_cells(&mut p, &input, &s, 2, 1);
        append_cells(&mut p, &input, &s, 0, 1);
        assert_eq!(
            (p.data.as_slice(), p.offsets.as_slice()),
            (&b"ccca"[..], &[0u64, 3][..])
        );
        assert_eq!(p.validity, [1, 1]);
        let again = p.as_input();
        assert_eq!(slice_tile(&s, &again, 0, 2).0.data, b"ccca");
    }

    #[test]
    fn sparse_tiles_get_the_mbr_of_their_cells() {
        let schema = var_schema();
        let fields: Vec<FieldInfo> = [FieldRef::Attribute(0), FieldRef::Dimension(0)]
            .iter()
            .map(|r| r.info(&schema))
            .collect();
        let inputs = [
            Input {
                data: Some(Cow::Borrowed(b"abc")),
                offsets: Some(Cow::Owned(vec![0, 1, 2])),
                validity: Some(Cow::Owned(vec![1, 1, 1])),
            },
            Input {
                data: Some(Cow::Owned([7i32, 2, 5].map(i32::to_le_bytes).concat())),
                offsets: None,
                validity: None,
            },
        ];
        let mbr = self_mbr(&schema, &fields, &inputs, 1, 2).unwrap().unwrap();
        let expected = rtree::tile_mbr(
            &schema,
            &[DimCoords::Fixed(&[2i32, 5].map(i32::to_le_bytes).concat())],
            0..2,
        )
        .unwrap();
        assert_eq!(mbr, expected);
    }
}
