//! A sparse read computed slab by slab: consecutive intervals of the slowest dimension, whose
//! results concatenated are the whole result in its order. Row-major and col-major: the first
//! or the last dimension. Global order and unordered: the dimension the tile order compares
//! first, with every slab ending on a space-tile boundary, since the tile index of that
//! dimension is the most significant part of the global order (docs/ARRAY.md §5); unordered
//! results come in global order, each cell once. The interval width comes from the
//! fragments' cell counts and the budget, and adapts to the cells each slab held.

use super::filter::CellFilter;
use super::ranges::MultiRange;
use super::{QueryLayout, QueryStats, sparse};
use crate::array::geometry::DimGrid;
use crate::array::schema::{Layout, Range, VAR_NUM};
use crate::array::{Array, FieldData, value};
use crate::error::Result;

/// A sparse read still to compute, slab by slab.
pub(crate) struct SparseSlabs<'a> {
    array: &'a Array,
    pub(crate) names: Vec<String>,
    ranges: MultiRange,
    layout: QueryLayout,
    filter: Option<&'a dyn CellFilter>,
    /// The slowest dimension.
    outer: usize,
    /// The next value of `outer` to read from, and the last.
    next: i128,
    hi: i128,
    /// Values of `outer` per slab.
    width: i128,
    /// Global order and unordered: the space-tile grid of `outer`, on whose boundaries every
    /// slab ends.
    grid: Option<DimGrid>,
    /// Bytes a slab should hold at most.
    target: u64,
    /// What the slabs' reads did.
    pub(crate) stats: QueryStats,
}

impl<'a> SparseSlabs<'a> {
    /// The slabs of a sparse read of `names` over `ranges` in `layout` within about half of
    /// `budget` bytes each; `None` when the slowest dimension is not an integer one, or, for
    /// global order and unordered, when the cell order is Hilbert or that dimension has no
    /// tile extent (the read is then computed whole).
    pub(crate) fn new(
        array: &'a Array,
        names: Vec<String>,
        ranges: MultiRange,
        layout: QueryLayout,
        filter: Option<&'a dyn CellFilter>,
        budget: u64,
    ) -> Option<SparseSlabs<'a>> {
        let schema = array.schema();
        let last = schema.dimensions.len() - 1;
        let (outer, tiled) = match layout {
            QueryLayout::RowMajor => (0, false),
            QueryLayout::ColMajor => (last, false),
            QueryLayout::GlobalOrder | QueryLayout::Unordered => {
                if schema.cell_order == Layout::Hilbert {
                    return None;
                }
                let outer = if schema.tile_order == Layout::ColMajor {
                    last
                } else {
                    0
                };
                (outer, true)
            }
        };
        let d = &schema.dimensions[outer];
        if d.is_var() {
            return None;
        }
        let grid = if tiled && !cell_order_within_tiles(array, &ranges, outer) {
            Some(DimGrid::of(d).ok()?)
        } else {
            None
        };
        let int = |b: &[u8]| value::as_i128(d.datatype, b).ok();
        let (mut lo, mut hi) = match array.non_empty_domain() {
            Some(ned) => match &ned[outer] {
                Range::Fixed(l, h) => (int(l)?, int(h)?),
                Range::Var(..) => return None,
            },
            // Nothing written: one empty slab.
            None => (0, -1),
        };
        let added = ranges.ranges(outer);
        if !added.is_empty() {
            let mut rlo = i128::MAX;
            let mut rhi = i128::MIN;
            for r in added {
                let Range::Fixed(l, h) = r else { return None };
                rlo = rlo.min(int(l)?);
                rhi = rhi.max(int(h)?);
            }
            lo = lo.max(rlo);
            hi = hi.min(rhi);
        }
        let per_cell: u64 = names
            .iter()
            .map(
                |n| match (schema.attribute_index(n), schema.dimension_index(n)) {
                    (Some(i), _) => {
                        let a = &schema.attributes[i];
                        // Var-size cells: their offset and a guess of 8 bytes of values.
                        a.cell_size().map_or(16, |s| s as u64) + u64::from(a.nullable)
                    }
                    (None, Some(j)) => {
                        let d = &schema.dimensions[j];
                        d.coord_size().map_or(16, |s| s as u64)
                    }
                    _ => 0,
                },
            )
            .sum::<u64>()
            .max(1);
        let cells: u64 = array.fragments().iter().map(|f| f.meta.cell_num()).sum();
        let target = (budget / 2).max(1);
        let slabs = (cells.saturating_mul(per_cell) / target + 1) as i128;
        let span = (hi - lo + 1).max(1);
        let width = (span + slabs - 1) / slabs;
        Some(SparseSlabs {
            array,
            names,
            ranges,
            layout,
            filter,
            outer,
            next: lo,
            hi,
            width: width.max(1),
            grid,
            target,
            stats: QueryStats::default(),
        })
    }

    /// Whether slabs remain.
    pub(crate) fn more(&self) -> bool {
        self.next <= self.hi
    }

    /// The next slab's fields (`None` when every slab was read; a slab may be empty).
    pub(crate) fn next_slab(&mut self) -> Result<Option<Vec<FieldData>>> {
        if !self.more() {
            return Ok(None);
        }
        let schema = self.array.schema();
        let d = &schema.dimensions[self.outer];
        let mut b = self.next.saturating_add(self.width - 1);
        if let Some(g) = self.grid {
            // The end of the space tile holding `b`.
            b = g.tile_lo(g.tile_of(b)).saturating_add(g.extent - 1);
        }
        let (a, b) = (self.next, b.min(self.hi));
        self.next = b + 1;
        let bytes = |v: i128| value::from_i128(d.datatype, v);
        let added = self.ranges.ranges(self.outer);
        let clipped: Vec<Range> = if added.is_empty() {
            vec![Range::Fixed(bytes(a), bytes(b))]
        } else {
            added
                .iter()
                .filter_map(|r| {
                    let Range::Fixed(l, h) = r else { return None };
                    let l = value::as_i128(d.datatype, l).ok()?.max(a);
                    let h = value::as_i128(d.datatype, h).ok()?.min(b);
                    (l <= h).then(|| Range::Fixed(bytes(l), bytes(h)))
                })
                .collect()
        };
        let fields = if clipped.is_empty() {
            Vec::new()
        } else {
            let mut mr = self.ranges.clone();
            mr.set(self.outer, clipped);
            sparse::read(
                self.array,
                &self.names,
                &mr,
                self.layout,
                self.filter,
                &mut self.stats,
            )?
        };
        // Adapt the width to what the slab held.
        let held: u64 = fields.iter().map(held_bytes).sum();
        if held > self.target && self.width > 1 {
            self.width = (self.width / 2).max(1);
        } else if held < self.target / 4 {
            self.width = self.width.saturating_mul(2);
        }
        Ok(Some(fields))
    }
}

/// Whether the global order over the query's box is the cell order with `outer` compared
/// first: the cell order starts with `outer` and every other dimension's part of the box
/// (its ranges' hull within the non-empty domain) lies in one space tile. Slabs may then end
/// anywhere, not only on `outer`'s tile boundaries.
fn cell_order_within_tiles(array: &Array, ranges: &MultiRange, outer: usize) -> bool {
    let schema = array.schema();
    let last = schema.dimensions.len() - 1;
    let first = match schema.cell_order {
        Layout::RowMajor => 0,
        Layout::ColMajor => last,
        _ => return false,
    };
    if first != outer {
        return false;
    }
    let Some(ned) = array.non_empty_domain() else {
        return true;
    };
    schema.dimensions.iter().enumerate().all(|(j, d)| {
        if j == outer || d.tile_extent.is_none() {
            return true;
        }
        let (Ok(g), Range::Fixed(l, h)) = (DimGrid::of(d), &ned[j]) else {
            return false;
        };
        let int = |b: &[u8]| value::as_i128(d.datatype, b).ok();
        let (Some(mut lo), Some(mut hi)) = (int(l), int(h)) else {
            return false;
        };
        let added = ranges.ranges(j);
        if !added.is_empty() {
            let bounds: Option<Vec<(i128, i128)>> = added
                .iter()
                .map(|r| Some((int(r.lo())?, int(r.hi())?)))
                .collect();
            let Some(bounds) = bounds else {
                return false;
            };
            lo = lo.max(bounds.iter().map(|b| b.0).min().unwrap_or(lo));
            hi = hi.min(bounds.iter().map(|b| b.1).max().unwrap_or(hi));
        }
        lo > hi || g.tile_of(lo) == g.tile_of(hi)
    })
}

/// The bytes a field's cells take.
fn held_bytes(f: &FieldData) -> u64 {
    let offsets = if f.cell_val_num == VAR_NUM {
        8 * f.cell_count
    } else {
        0
    };
    f.data.len() as u64 + offsets + f.validity.as_ref().map_or(0, |v| v.len() as u64)
}
