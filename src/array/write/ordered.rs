//! Dense row- and col-major writes (TileDB's `OrderedWriter`): one batch holding the cells of
//! one box (default: the whole domain), re-tiled into the whole space tiles it intersects by
//! [`super::dense::DenseTiler`]; and the box checks global-order dense writes share.

use super::dense::{self, BoxCells, DenseTiler};
use super::fragment::generator;
use super::{Input, WriteLayout, Writer};
use crate::array::geometry::DimGrid;
use crate::array::schema::{Layout, Range};
use crate::error::{Error, Result};

impl Writer {
    /// The box of a dense write (the whole domain when none was set).
    pub(super) fn dense_box(&self) -> Result<Vec<(i128, i128)>> {
        match &self.subarray {
            Some(b) => Ok(b.clone()),
            None => {
                let ranges: Vec<Range> = self
                    .schema
                    .dimensions
                    .iter()
                    .map(|d| {
                        let (lo, hi) = d.domain.clone().ok_or_else(|| {
                            Error::invalid(format!("dimension {} has no domain", d.name))
                        })?;
                        Ok(Range::Fixed(lo, hi))
                    })
                    .collect::<Result<_>>()?;
                dense::box_bounds(&self.schema, &ranges)
            }
        }
    }

    /// A dense row- or col-major write of one box.
    pub(super) fn write_dense_box(&mut self, inputs: &[Input<'_>], cells: u64) -> Result<()> {
        let bounds = self.dense_box()?;
        let layout = if self.layout == WriteLayout::ColMajor {
            Layout::ColMajor
        } else {
            Layout::RowMajor
        };
        let tiler = DenseTiler::new(&self.schema, &bounds, layout)?;
        if cells != tiler.cell_num() {
            return Err(Error::invalid(format!(
                "the batch has {cells} cells, the box {} ",
                tiler.cell_num()
            )));
        }
        let fields = self.fields.clone();
        let per_tile = tiler.cells_per_tile();
        let r = self.write_tiles(
            tiler.tile_num(),
            |t, f| {
                let field = &fields[f];
                let input = &inputs[f];
                let cells = BoxCells {
                    data: input.data.as_deref().unwrap_or(&[]),
                    offsets: input.offsets.as_deref(),
                    validity: input.validity.as_deref(),
                    cell_size: field.value_size(),
                };
                Ok((tiler.tile(t, &cells, generator(field)), per_tile))
            },
            |_| Ok(None),
        );
        r?;
        self.cells_written = cells;
        Ok(())
    }

    /// TileDB's `check_subarray`: a dense global-order box must coincide with tile bounds.
    pub(super) fn check_tile_aligned(&self, bounds: &[(i128, i128)]) -> Result<()> {
        for (d, &(lo, hi)) in self.schema.dimensions.iter().zip(bounds) {
            let DimGrid {
                lo: dlo,
                extent: ext,
            } = DimGrid::of(d)?;
            if (lo - dlo) % ext != 0 || (hi - dlo + 1) % ext != 0 {
                return Err(Error::invalid(format!(
                    "in global writes for dense arrays the subarray must coincide with the tile \
                     bounds: dimension {} [{lo}, {hi}] does not (extent {ext})",
                    d.name
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::schema::ArraySchema;
    use crate::storage::StorageConfig;

    #[test]
    fn boxes_default_to_the_domain_and_global_boxes_align_to_tiles() {
        let dir = std::env::temp_dir().join(format!("tdbf_write_ordered_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let uri = dir.to_str().unwrap();
        let schema = ArraySchema::from_json(
            r#"{"sparse": false,
                "dimensions": [{"name": "d", "type": "INT32", "domain": [-7, 8], "tile": 4}],
                "attributes": [{"name": "a", "type": "INT32"}]}"#,
        )
        .unwrap();
        crate::array::write::create::create(uri, &schema, None, &StorageConfig::new()).unwrap();
        let mut w = Writer::open(uri, None, Some(1), &StorageConfig::new()).unwrap();
        assert_eq!(w.dense_box().unwrap(), [(-7, 8)]);
        let bounds = |lo: i32, hi: i32| [lo, hi].map(i32::to_le_bytes).concat();
        w.set_subarray(&bounds(-3, 4)).unwrap();
        assert_eq!(w.dense_box().unwrap(), [(-3, 4)]);
        // Tiles [-7,-4] [-3,0] [1,4] [5,8]: [-3, 4] is two whole tiles, [-3, 3] is not.
        w.check_tile_aligned(&[(-3, 4)]).unwrap();
        let e = w.check_tile_aligned(&[(-3, 3)]).unwrap_err();
        assert!(
            e.to_string().contains("coincide with the tile bounds"),
            "{e}"
        );
        // A box of 8 cells takes exactly 8.
        let cells: Vec<u8> = (0..7).flat_map(|v: i32| v.to_le_bytes()).collect();
        let e = w.write_dense_box(
            &[Input {
                data: Some(std::borrow::Cow::Borrowed(&cells)),
                offsets: None,
                validity: None,
            }],
            7,
        );
        assert!(e.unwrap_err().to_string().contains("the box 8"));
        drop(w);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
