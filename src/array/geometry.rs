//! The geometry of dense arrays (docs/ARRAY.md §5.3): the space-tile grid of the integer
//! dimensions, boxes of cells, and the strides of a box laid out in row- or col-major order.
//! Readers, writers and the fragment metadata (a dense fragment's tile count) all cut the
//! domain with this one grid.
//!
//! A dense grid's tile of coordinate `v` is `floor((v - lo) / extent)`; inside the domain
//! (`v >= lo`, all TileDB writes and reads) that is TileDB's `Dimension::tile_idx`, which the
//! sparse global order uses in its own form ([`crate::array::order::tile_index`]).

use crate::array::schema::{ArraySchema, Dimension, Layout, Range};
use crate::array::value;
use crate::error::{Error, Result};

/// A dense dimension's grid: (domain low bytes, extent bytes).
pub fn dense_grid(dim: &Dimension) -> Result<(&[u8], &[u8])> {
    let lo = dim
        .domain
        .as_ref()
        .map(|(lo, _)| lo.as_slice())
        .ok_or_else(|| Error::corrupt(format!("dimension {} has no domain", dim.name)))?;
    let ext = dim
        .tile_extent
        .as_deref()
        .ok_or_else(|| Error::corrupt(format!("dimension {} has no tile extent", dim.name)))?;
    Ok((lo, ext))
}

/// One integer dimension's tile grid: the domain's low bound and the tile extent (> 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DimGrid {
    /// The domain's low bound.
    pub lo: i128,
    /// Cells per tile along the dimension.
    pub extent: i128,
}

impl DimGrid {
    /// The grid of dense dimension `dim` (an integer, datetime or time type).
    pub(crate) fn of(dim: &Dimension) -> Result<DimGrid> {
        let (lo, ext) = dense_grid(dim)?;
        Ok(DimGrid {
            lo: value::as_i128(dim.datatype, lo)?,
            extent: value::as_u64_extent(dim.datatype, ext)? as i128,
        })
    }

    /// The index of the tile holding coordinate `v` (floored: tiles below the domain's low
    /// bound are negative).
    pub(crate) fn tile_of(&self, v: i128) -> i128 {
        (v - self.lo).div_euclid(self.extent)
    }

    /// The first coordinate of tile `t`.
    pub(crate) fn tile_lo(&self, t: i128) -> i128 {
        self.lo + t * self.extent
    }

    /// The tiles `[lo, hi]` intersects.
    pub(crate) fn tile_count(&self, lo: i128, hi: i128) -> u64 {
        (self.tile_of(hi) - self.tile_of(lo) + 1) as u64
    }
}

/// An inclusive box of integer coordinates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cube {
    /// Low corner.
    pub lo: Vec<i128>,
    /// High corner.
    pub hi: Vec<i128>,
}

impl Cube {
    /// The common part of two boxes, if any.
    pub(crate) fn intersect(&self, other: &Cube) -> Option<Cube> {
        let lo: Vec<i128> = self
            .lo
            .iter()
            .zip(&other.lo)
            .map(|(a, b)| *a.max(b))
            .collect();
        let hi: Vec<i128> = self
            .hi
            .iter()
            .zip(&other.hi)
            .map(|(a, b)| *a.min(b))
            .collect();
        lo.iter()
            .zip(&hi)
            .all(|(l, h)| l <= h)
            .then_some(Cube { lo, hi })
    }

    /// `self` minus `inner` (which lies inside `self`) as disjoint boxes.
    pub(crate) fn subtract(&self, inner: &Cube) -> Vec<Cube> {
        let mut out = Vec::new();
        let mut cur = self.clone();
        for d in 0..cur.lo.len() {
            if cur.lo[d] < inner.lo[d] {
                let mut p = cur.clone();
                p.hi[d] = inner.lo[d] - 1;
                out.push(p);
                cur.lo[d] = inner.lo[d];
            }
            if cur.hi[d] > inner.hi[d] {
                let mut p = cur.clone();
                p.lo[d] = inner.hi[d] + 1;
                out.push(p);
                cur.hi[d] = inner.hi[d];
            }
        }
        out
    }

    /// The number of cells (an error past 2^64, or for a reversed box).
    pub(crate) fn cells(&self) -> Result<u64> {
        let mut n: u64 = 1;
        for (l, h) in self.lo.iter().zip(&self.hi) {
            let w = u64::try_from(h - l + 1).map_err(|_| Error::invalid("empty box"))?;
            n = n
                .checked_mul(w)
                .ok_or_else(|| Error::invalid("the box has more than 2^64 cells"))?;
        }
        Ok(n)
    }

    /// The extent of the box along each dimension.
    pub(crate) fn widths(&self) -> Vec<u64> {
        self.lo
            .iter()
            .zip(&self.hi)
            .map(|(l, h)| (h - l + 1) as u64)
            .collect()
    }
}

/// Integer ranges → a box.
pub fn cube_of(schema: &ArraySchema, ranges: &[Range]) -> Result<Cube> {
    let mut lo = Vec::new();
    let mut hi = Vec::new();
    for (d, r) in schema.dimensions.iter().zip(ranges) {
        lo.push(value::as_i128(d.datatype, r.lo())?);
        hi.push(value::as_i128(d.datatype, r.hi())?);
    }
    Ok(Cube { lo, hi })
}

/// The space-tile grid of a dense schema: one [`DimGrid`] per dimension, the tile order and
/// the cell order.
#[derive(Clone, Debug)]
pub(crate) struct Grid {
    /// Each dimension's grid.
    pub dims: Vec<DimGrid>,
    /// The order of the tiles.
    pub tile_order: Layout,
    /// The order of the cells inside a tile.
    pub cell_order: Layout,
}

impl Grid {
    /// The grid of dense `schema`.
    pub(crate) fn new(schema: &ArraySchema) -> Result<Grid> {
        Ok(Grid {
            dims: schema
                .dimensions
                .iter()
                .map(DimGrid::of)
                .collect::<Result<_>>()?,
            tile_order: schema.tile_order,
            cell_order: schema.cell_order,
        })
    }

    /// The tile extents.
    pub(crate) fn extents(&self) -> Vec<u64> {
        self.dims.iter().map(|d| d.extent as u64).collect()
    }

    /// The cells of the tile at absolute tile coordinates `t`.
    pub(crate) fn tile_cube(&self, t: &[i128]) -> Cube {
        let lo: Vec<i128> = self
            .dims
            .iter()
            .zip(t)
            .map(|(g, t)| g.tile_lo(*t))
            .collect();
        let hi: Vec<i128> = self
            .dims
            .iter()
            .zip(&lo)
            .map(|(g, l)| l + g.extent - 1)
            .collect();
        Cube { lo, hi }
    }

    /// The box of tile coordinates covering `c`.
    pub(crate) fn tiles_of(&self, c: &Cube) -> Cube {
        Cube {
            lo: self
                .dims
                .iter()
                .zip(&c.lo)
                .map(|(g, v)| g.tile_of(*v))
                .collect(),
            hi: self
                .dims
                .iter()
                .zip(&c.hi)
                .map(|(g, v)| g.tile_of(*v))
                .collect(),
        }
    }

    /// Strides of cells inside a tile, in the cell order.
    pub(crate) fn cell_strides(&self) -> Vec<u64> {
        strides(&self.extents(), self.cell_order)
    }

    /// The number of tiles a box intersects (a dense fragment's tile count over its non-empty
    /// domain).
    pub(crate) fn tile_count(&self, c: &Cube) -> Result<u64> {
        let mut n: u64 = 1;
        for ((g, lo), hi) in self.dims.iter().zip(&c.lo).zip(&c.hi) {
            if hi < lo {
                return Err(Error::corrupt("the non-empty domain's bounds are reversed"));
            }
            n = n
                .checked_mul(g.tile_count(*lo, *hi))
                .ok_or_else(|| Error::corrupt("tile count overflows"))?;
        }
        Ok(n)
    }
}

/// Strides of a box of `widths` laid out in `order` (row-major: last dimension fastest;
/// col-major: first dimension fastest).
pub(crate) fn strides(widths: &[u64], order: Layout) -> Vec<u64> {
    let n = widths.len();
    let mut s = vec![1u64; n];
    if order == Layout::ColMajor {
        for d in 1..n {
            s[d] = s[d - 1] * widths[d - 1];
        }
    } else {
        for d in (0..n.saturating_sub(1)).rev() {
            s[d] = s[d + 1] * widths[d + 1];
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube(lo: &[i128], hi: &[i128]) -> Cube {
        Cube {
            lo: lo.to_vec(),
            hi: hi.to_vec(),
        }
    }

    #[test]
    fn subtraction_partitions_the_box() {
        let outer = cube(&[1, 1], &[10, 5]);
        let inner = cube(&[3, 2], &[4, 4]);
        let parts = outer.subtract(&inner);
        let total: u64 = parts.iter().map(|p| p.cells().unwrap()).sum();
        assert_eq!(total + inner.cells().unwrap(), outer.cells().unwrap());
        for (a, p) in parts.iter().enumerate() {
            assert!(p.intersect(&inner).is_none());
            for q in &parts[a + 1..] {
                assert!(p.intersect(q).is_none());
            }
        }
    }

    #[test]
    fn strides_in_both_orders() {
        assert_eq!(strides(&[3, 4, 5], Layout::RowMajor), [20, 5, 1]);
        assert_eq!(strides(&[3, 4, 5], Layout::ColMajor), [1, 3, 12]);
        assert_eq!(strides(&[], Layout::RowMajor), Vec::<u64>::new());
    }

    #[test]
    fn tiles_of_a_negative_domain() {
        // Domain [-7, 8], extent 4: tiles [-7,-4] [-3,0] [1,4] [5,8].
        let g = DimGrid { lo: -7, extent: 4 };
        assert_eq!(
            [-7, -4, -3, 0, 1, 8].map(|v| g.tile_of(v)),
            [0, 0, 1, 1, 2, 3]
        );
        assert_eq!((g.tile_lo(2), g.tile_count(-4, 1)), (1, 3));
        let grid = Grid {
            dims: vec![g, DimGrid { lo: 0, extent: 3 }],
            tile_order: Layout::RowMajor,
            cell_order: Layout::ColMajor,
        };
        let c = cube(&[-5, 2], &[2, 3]);
        assert_eq!(grid.tiles_of(&c), cube(&[0, 0], &[2, 1]));
        assert_eq!(grid.tile_count(&c).unwrap(), 6);
        assert_eq!(grid.tile_cube(&[1, 1]), cube(&[-3, 3], &[0, 5]));
        assert_eq!(grid.cell_strides(), [1, 4]);
        assert!(grid.tile_count(&cube(&[2, 0], &[1, 0])).is_err());
    }
}
