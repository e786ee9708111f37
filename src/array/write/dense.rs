//! Dense writes of a box of cells in row- or col-major order (docs/ARRAY.md §5.3; TileDB's
//! query/writers/dense_tiler.cc): the box is cut into the space tiles it intersects, in tile
//! order, each tile whole (cells outside the box are padding: zero bytes, one zero element per
//! var-size cell, validity 0), and the tile metadata of each tile is computed over its written
//! cells in the order TileDB visits them (the "copy plan"), so float sums and saturated
//! integer sums come out as TileDB's.

use super::tile_metadata::{TileCells, TileMetadata, TileMetadataGenerator};
use crate::array::geometry::{DimGrid, strides};
use crate::array::schema::{ArraySchema, Layout, Range};
use crate::array::value;
use crate::error::{Error, Result};

/// One dimension of the box: its grid and the box's bounds, as integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DimBox {
    grid: DimGrid,
    lo: i128,
    hi: i128,
}

impl DimBox {
    fn tile_num(&self) -> u64 {
        self.grid.tile_count(self.lo, self.hi)
    }

    fn len(&self) -> u64 {
        (self.hi - self.lo + 1) as u64
    }
}

/// How TileDB copies a box's cells into one tile (`DenseTiler::CopyPlan`): runs ("slabs") of
/// `copy_el` cells, contiguous in both the box buffer and the tile.
#[derive(Clone, Debug, PartialEq, Eq)]
struct CopyPlan {
    sub_start_el: u64,
    tile_start_el: u64,
    copy_el: u64,
    dim_ranges: Vec<u64>,
    first_d: usize,
}

/// The tiles of a dense write of one box.
#[derive(Clone, Debug)]
pub(crate) struct DenseTiler {
    dims: Vec<DimBox>,
    cell_order: Layout,
    sub_layout: Layout,
    tile_num: u64,
    cells_per_tile: u64,
    first_tile: Vec<i128>,
    sub_tile_strides: Vec<u64>,
    tile_order: Layout,
    tile_strides_el: Vec<u64>,
    sub_strides_el: Vec<u64>,
}

/// A dense box's bounds as integers, checked against the domain (and the current domain).
pub(crate) fn box_bounds(schema: &ArraySchema, subarray: &[Range]) -> Result<Vec<(i128, i128)>> {
    bounds_within(schema, subarray, false)
}

/// A consolidation's dense box (TileDB's write with `disable_checks_consolidation`): whole
/// tiles, so its last tile may reach past a domain that is not a whole number of tiles; it is
/// checked against the domain expanded to whole tiles only.
pub(crate) fn consolidation_box_bounds(
    schema: &ArraySchema,
    subarray: &[Range],
) -> Result<Vec<(i128, i128)>> {
    bounds_within(schema, subarray, true)
}

fn bounds_within(
    schema: &ArraySchema,
    subarray: &[Range],
    whole_tiles: bool,
) -> Result<Vec<(i128, i128)>> {
    if subarray.len() != schema.dimensions.len() {
        return Err(Error::invalid(format!(
            "the subarray has {} ranges, the array {} dimensions",
            subarray.len(),
            schema.dimensions.len()
        )));
    }
    let mut out = Vec::new();
    for (j, (d, r)) in schema.dimensions.iter().zip(subarray).enumerate() {
        let (dlo, dhi) = d
            .domain
            .as_ref()
            .ok_or_else(|| Error::invalid(format!("dimension {} has no domain", d.name)))?;
        let v = |b: &[u8]| value::as_i128(d.datatype, b);
        let (lo, hi) = (v(r.lo())?, v(r.hi())?);
        if lo > hi {
            return Err(Error::invalid(format!(
                "subarray range {lo}..{hi} of dimension {} is reversed",
                d.name
            )));
        }
        let mut top = v(dhi)?;
        if whole_tiles {
            let g = DimGrid::of(d)?;
            top = g.tile_lo(g.tile_of(top) + 1) - 1;
        }
        if lo < v(dlo)? || hi > top {
            return Err(Error::invalid(format!(
                "subarray range [{lo}, {hi}] of dimension {} is outside its domain [{}, {}]",
                d.name,
                v(dlo)?,
                v(dhi)?
            )));
        }
        if let Some(cd) = schema.current_domain.as_ref().filter(|_| !whole_tiles) {
            let (clo, chi) = (v(cd[j].lo())?, v(cd[j].hi())?);
            if lo < clo || hi > chi {
                return Err(Error::invalid(format!(
                    "subarray range [{lo}, {hi}] of dimension {} is outside the current domain \
                     [{clo}, {chi}] (TileDB: cells are written outside of the defined current \
                     domain)",
                    d.name
                )));
            }
        }
        out.push((lo, hi));
    }
    Ok(out)
}

impl DenseTiler {
    /// The tiler of a write of `bounds` (checked by [`box_bounds`]) with the cells given in
    /// `layout` (row- or col-major) order.
    pub(crate) fn new(
        schema: &ArraySchema,
        bounds: &[(i128, i128)],
        layout: Layout,
    ) -> Result<DenseTiler> {
        let mut dims = Vec::new();
        for (d, &(lo, hi)) in schema.dimensions.iter().zip(bounds) {
            dims.push(DimBox {
                grid: DimGrid::of(d)?,
                lo,
                hi,
            });
        }
        let n = dims.len();
        // TileDB's `optimize_layout_for_1D`: a 1-D ordered write uses the cell order.
        let sub_layout = if n == 1 { schema.cell_order } else { layout };
        let cell_order = schema.cell_order;
        let tile_order = schema.tile_order;
        let mut tile_num: u64 = 1;
        for d in &dims {
            tile_num = tile_num
                .checked_mul(d.tile_num())
                .ok_or_else(|| Error::invalid("the box's tile count overflows"))?;
        }
        let cells_per_tile = schema.cells_per_tile()?;
        let tile_nums: Vec<u64> = dims.iter().map(DimBox::tile_num).collect();
        let extents: Vec<u64> = dims.iter().map(|d| d.grid.extent as u64).collect();
        let lens: Vec<u64> = dims.iter().map(DimBox::len).collect();
        Ok(DenseTiler {
            first_tile: dims.iter().map(|d| d.grid.tile_of(d.lo)).collect(),
            sub_tile_strides: strides(&tile_nums, tile_order),
            tile_strides_el: strides(&extents, cell_order),
            sub_strides_el: strides(&lens, sub_layout),
            dims,
            cell_order,
            sub_layout,
            tile_num,
            cells_per_tile,
            tile_order,
        })
    }

    /// Tiles of the box (all of them whole space tiles).
    pub(crate) fn tile_num(&self) -> u64 {
        self.tile_num
    }

    /// Cells per tile.
    pub(crate) fn cells_per_tile(&self) -> u64 {
        self.cells_per_tile
    }

    /// Cells in the box.
    pub(crate) fn cell_num(&self) -> u64 {
        self.dims.iter().map(DimBox::len).product()
    }

    /// The space tile `id` (in tile order) as cell bounds per dimension.
    fn tile_box(&self, id: u64) -> Vec<(i128, i128)> {
        let n = self.dims.len();
        let mut coords = vec![0u64; n];
        let mut rest = id;
        let order: Vec<usize> = if self.tile_order == Layout::ColMajor {
            (0..n).rev().collect()
        } else {
            (0..n).collect()
        };
        for d in order {
            coords[d] = rest / self.sub_tile_strides[d];
            rest %= self.sub_tile_strides[d];
        }
        self.dims
            .iter()
            .zip(coords)
            .zip(&self.first_tile)
            .map(|((d, c), f)| {
                let lo = d.grid.tile_lo(c as i128 + f);
                (lo, lo + d.grid.extent - 1)
            })
            .collect()
    }

    fn copy_plan(&self, id: u64) -> CopyPlan {
        let n = self.dims.len();
        let tile = self.tile_box(id);
        let inter: Vec<(i128, i128)> = self
            .dims
            .iter()
            .zip(&tile)
            .map(|(d, t)| (d.lo.max(t.0), d.hi.min(t.1)))
            .collect();
        let len = |d: usize| (inter[d].1 - inter[d].0 + 1) as u64;
        let mut sub_start_el = 0;
        let mut tile_start_el = 0;
        for d in 0..n {
            sub_start_el += (inter[d].0 - self.dims[d].lo) as u64 * self.sub_strides_el[d];
            tile_start_el += (inter[d].0 - tile[d].0) as u64 * self.tile_strides_el[d];
        }
        // A dimension the box covers with exactly one whole tile merges into the runs.
        let whole = |d: usize| {
            len(d) == self.dims[d].grid.extent as u64
                && inter[d].0 == self.dims[d].lo
                && inter[d].1 == self.dims[d].hi
        };
        let ranges = |ds: std::ops::Range<usize>| ds.map(|d| len(d) - 1).collect::<Vec<u64>>();
        let (copy_el, dim_ranges, first_d) = if n == 1 {
            (len(0), vec![0], 0)
        } else if self.sub_layout != self.cell_order {
            (1, ranges(0..n), 0)
        } else if self.cell_order != Layout::ColMajor {
            let mut copy = len(n - 1);
            let mut last: isize = n as isize - 2;
            while last >= 0 && whole(last as usize + 1) {
                copy *= len(last as usize);
                last -= 1;
            }
            if last < 0 {
                (copy, vec![0], 0)
            } else {
                (copy, ranges(0..last as usize + 1), 0)
            }
        } else {
            let mut copy = len(0);
            let mut last = 1;
            while last < n && whole(last - 1) {
                copy *= len(last);
                last += 1;
            }
            if last == n {
                (copy, vec![0], n - 1)
            } else {
                (copy, ranges(last..n), last)
            }
        };
        CopyPlan {
            sub_start_el,
            tile_start_el,
            copy_el,
            dim_ranges,
            first_d,
        }
    }

    /// The runs of tile `id` in TileDB's order: (first cell in the box buffer, first cell in
    /// the tile, cells).
    pub(crate) fn slabs(&self, id: u64) -> Vec<(u64, u64, u64)> {
        let p = self.copy_plan(id);
        let n = p.dim_ranges.len();
        let mut coords = vec![0u64; n];
        let mut tile_off = vec![p.tile_start_el; n];
        let mut sub_off = vec![p.sub_start_el; n];
        let mut out = Vec::new();
        loop {
            out.push((sub_off[n - 1], tile_off[n - 1], p.copy_el));
            let mut last = n as isize - 1;
            while last >= 0 {
                let l = last as usize;
                coords[l] += 1;
                if coords[l] > p.dim_ranges[l] {
                    coords[l] = 0;
                    last -= 1;
                } else {
                    break;
                }
            }
            if last < 0 {
                break;
            }
            let l = last as usize;
            tile_off[l] += self.tile_strides_el[l + p.first_d];
            sub_off[l] += self.sub_strides_el[l + p.first_d];
            for i in l + 1..n {
                tile_off[i] = tile_off[i - 1];
                sub_off[i] = sub_off[i - 1];
            }
        }
        out
    }
}

/// A field's cells in the box, as the caller gave them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BoxCells<'a> {
    /// Fixed-size cells, or the var-size data.
    pub data: &'a [u8],
    /// Var-size: the byte offset of each cell in `data`.
    pub offsets: Option<&'a [u64]>,
    /// Nullable: one byte per cell.
    pub validity: Option<&'a [u8]>,
    /// Bytes per fixed-size cell; for var-size fields, bytes of one value (the padding).
    pub cell_size: usize,
}

/// A whole unfiltered tile and its metadata.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RawTile {
    /// Fixed-size cells, or var-size data.
    pub data: Vec<u8>,
    /// Var-size: each cell's offset in `data`.
    pub offsets: Option<Vec<u64>>,
    /// Nullable: one byte per cell.
    pub validity: Option<Vec<u8>>,
    /// Tile metadata.
    pub meta: TileMetadata,
}

impl DenseTiler {
    /// Builds tile `id` of a field from the box's cells (`DenseTiler::get_tile`), computing
    /// its metadata with `generator` over the written cells in TileDB's order.
    pub(crate) fn tile(
        &self,
        id: u64,
        cells: &BoxCells<'_>,
        mut generator: TileMetadataGenerator,
    ) -> RawTile {
        let n = self.cells_per_tile as usize;
        let slabs = self.slabs(id);
        let validity = cells.validity.map(|v| {
            let mut t = vec![0u8; n];
            for &(s, d, c) in &slabs {
                let (s, d, c) = (s as usize, d as usize, c as usize);
                t[d..d + c].copy_from_slice(&v[s..s + c]);
            }
            t
        });
        let (data, offsets) = match cells.offsets {
            None => {
                let cs = cells.cell_size;
                let mut t = vec![0u8; n * cs];
                for &(s, d, c) in &slabs {
                    let (s, d, c) = (s as usize * cs, d as usize * cs, c as usize * cs);
                    t[d..d + c].copy_from_slice(&cells.data[s..s + c]);
                }
                (t, None)
            }
            Some(user) => {
                let mut pos = vec![u64::MAX; n];
                for &(s, d, c) in &slabs {
                    for k in 0..c {
                        pos[(d + k) as usize] = s + k;
                    }
                }
                let mut data = Vec::new();
                let mut offsets = Vec::with_capacity(n);
                for p in pos {
                    offsets.push(data.len() as u64);
                    if p == u64::MAX {
                        data.extend(std::iter::repeat_n(0u8, cells.cell_size));
                    } else {
                        let p = p as usize;
                        let start = user[p] as usize;
                        let end = user.get(p + 1).map_or(cells.data.len(), |e| *e as usize);
                        data.extend_from_slice(&cells.data[start..end]);
                    }
                }
                (data, Some(offsets))
            }
        };
        let view = TileCells {
            data: &data,
            offsets: offsets.as_deref(),
            validity: validity.as_deref(),
            cell_num: self.cells_per_tile,
        };
        for &(_, d, c) in &slabs {
            generator.process(&view, d, d + c);
        }
        let meta = generator.finish();
        RawTile {
            data,
            offsets,
            validity,
            meta,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::schema::{ArrayType, Attribute, Dimension};
    use crate::format::datatype::Datatype;
    use crate::pipeline::Pipeline;

    fn schema(extents: &[(i32, i32, i32)], cell: Layout, tile: Layout) -> ArraySchema {
        ArraySchema {
            name: "__1_1_x".into(),
            version: 22,
            allows_dups: false,
            array_type: ArrayType::Dense,
            tile_order: tile,
            cell_order: cell,
            capacity: 10000,
            coords_filters: Pipeline::new(),
            offsets_filters: Pipeline::new(),
            validity_filters: Pipeline::new(),
            dimensions: extents
                .iter()
                .enumerate()
                .map(|(i, &(lo, hi, e))| Dimension {
                    name: format!("d{i}"),
                    datatype: Datatype::Int32,
                    cell_val_num: 1,
                    filters: Pipeline::new(),
                    uses_coords_filters: true,
                    domain: Some((lo.to_le_bytes().to_vec(), hi.to_le_bytes().to_vec())),
                    tile_extent: Some(e.to_le_bytes().to_vec()),
                })
                .collect(),
            attributes: vec![Attribute {
                name: "a".into(),
                datatype: Datatype::Int32,
                cell_val_num: 1,
                filters: Pipeline::new(),
                fill_value: vec![0; 4],
                nullable: false,
                fill_validity: 0,
                order: 0,
                enumeration: None,
            }],
            labels: vec![],
            enumerations: vec![],
            loaded_enumerations: vec![],
            current_domain: None,
        }
    }

    fn i32s(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn boxes_are_cut_into_whole_tiles_with_padding() {
        // 2-D 6x6, tiles 3x3; box rows 1..=3, cols 1..=3 touches 4 tiles.
        let s = schema(&[(0, 5, 3), (0, 5, 3)], Layout::RowMajor, Layout::RowMajor);
        let t = DenseTiler::new(&s, &[(1, 3), (1, 3)], Layout::RowMajor).unwrap();
        assert_eq!((t.tile_num(), t.cells_per_tile(), t.cell_num()), (4, 9, 9));
        let data = i32s(&(1..=9).collect::<Vec<_>>());
        let cells = BoxCells {
            data: &data,
            offsets: None,
            validity: None,
            cell_size: 4,
        };
        let g = || TileMetadataGenerator::new(Datatype::Int32, false, false, 4, 1);
        // Tile 0 = rows 0..=2, cols 0..=2: box cells (1,1) (1,2) (2,1) (2,2) = 1 2 4 5.
        let t0 = t.tile(0, &cells, g());
        assert_eq!(t0.data, i32s(&[0, 0, 0, 0, 1, 2, 0, 4, 5]));
        assert_eq!(i64::from_le_bytes(t0.meta.sum), 12);
        assert_eq!(t0.meta.min, 1i32.to_le_bytes());
        // Tile 3 = rows 3..=5, cols 3..=5: cell (3,3) = 9.
        let t3 = t.tile(3, &cells, g());
        assert_eq!(t3.data, i32s(&[9, 0, 0, 0, 0, 0, 0, 0, 0]));
        // Col-major input: the same cells given column by column.
        let colmajor = i32s(&[1, 4, 7, 2, 5, 8, 3, 6, 9]);
        let tc = DenseTiler::new(&s, &[(1, 3), (1, 3)], Layout::ColMajor).unwrap();
        let c = BoxCells {
            data: &colmajor,
            ..cells
        };
        assert_eq!(tc.tile(0, &c, g()).data, t0.data);
        assert_eq!(tc.tile(3, &c, g()).data, t3.data);
    }

    #[test]
    fn var_cells_and_padding() {
        let s = schema(&[(0, 7, 4)], Layout::RowMajor, Layout::RowMajor);
        let t = DenseTiler::new(&s, &[(2, 4)], Layout::RowMajor).unwrap();
        assert_eq!(t.tile_num(), 2);
        let offsets = [0u64, 1, 3];
        let cells = BoxCells {
            data: b"abcd",
            offsets: Some(&offsets),
            validity: None,
            cell_size: 1,
        };
        let g = || TileMetadataGenerator::new(Datatype::StringAscii, false, true, 8, u32::MAX);
        let t0 = t.tile(0, &cells, g());
        // Cells 0, 1 padding (one zero byte each), 2 = "a", 3 = "bc".
        assert_eq!(t0.data, b"\0\0abc");
        assert_eq!(t0.offsets.as_deref(), Some(&[0u64, 1, 2, 3][..]));
        assert_eq!((t0.meta.min, t0.meta.max), (b"a".to_vec(), b"bc".to_vec()));
        let t1 = t.tile(1, &cells, g());
        assert_eq!(t1.data, b"d\0\0\0");
    }

    #[test]
    fn slab_order_follows_tiledb() {
        // 3-D col-major cells, a box inside one tile: runs along dim 0, visited with the
        // last dimension fastest (TileDB's loop), so tile offsets are not increasing.
        let s = schema(
            &[(0, 3, 4), (0, 3, 4), (0, 3, 4)],
            Layout::ColMajor,
            Layout::ColMajor,
        );
        let t = DenseTiler::new(&s, &[(0, 1), (0, 1), (0, 1)], Layout::ColMajor).unwrap();
        let slabs: Vec<u64> = t.slabs(0).iter().map(|s| s.1).collect();
        assert_eq!(slabs, [0, 16, 4, 20]);
        // Whole tiles in row-major: one run.
        let s = schema(&[(0, 3, 2), (0, 3, 2)], Layout::RowMajor, Layout::RowMajor);
        let t = DenseTiler::new(&s, &[(0, 1), (0, 3)], Layout::RowMajor).unwrap();
        assert_eq!(t.slabs(0), [(0, 0, 2), (4, 2, 2)]);
        let t = DenseTiler::new(&s, &[(0, 1), (2, 3)], Layout::RowMajor).unwrap();
        assert_eq!(t.slabs(0), [(0, 0, 4)]);
    }
}
