//! A sparse row-major or col-major read computed slab by slab: consecutive intervals of the
//! slowest dimension (the first row-major, the last col-major), whose results concatenated
//! are the whole result in its order. The interval width comes from the fragments' cell
//! counts and the budget, and adapts to the cells each slab held.

use super::filter::CellFilter;
use super::ranges::MultiRange;
use super::{QueryLayout, QueryStats, sparse};
use crate::array::schema::{Range, VAR_NUM};
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
    /// Bytes a slab should hold at most.
    target: u64,
    /// What the slabs' reads did.
    pub(crate) stats: QueryStats,
}

impl<'a> SparseSlabs<'a> {
    /// The slabs of a sparse row- or col-major read of `names` over `ranges` within about half
    /// of `budget` bytes each; `None` when the slowest dimension is not an integer one (the
    /// read is then computed whole).
    pub(crate) fn new(
        array: &'a Array,
        names: Vec<String>,
        ranges: MultiRange,
        layout: QueryLayout,
        filter: Option<&'a dyn CellFilter>,
        budget: u64,
    ) -> Option<SparseSlabs<'a>> {
        let schema = array.schema();
        let outer = match layout {
            QueryLayout::RowMajor => 0,
            QueryLayout::ColMajor => schema.dimensions.len() - 1,
            _ => return None,
        };
        let d = &schema.dimensions[outer];
        if d.is_var() {
            return None;
        }
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
        let (a, b) = (self.next, (self.next + self.width - 1).min(self.hi));
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

/// The bytes a field's cells take.
fn held_bytes(f: &FieldData) -> u64 {
    let offsets = if f.cell_val_num == VAR_NUM {
        8 * f.cell_count
    } else {
        0
    };
    f.data.len() as u64 + offsets + f.validity.as_ref().map_or(0, |v| v.len() as u64)
}
