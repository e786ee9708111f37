//! Results in bounded batches: a query's cells handed out in pieces of at most a byte budget
//! (data, offsets and validity of every field), never splitting a cell, as TileDB hands out
//! an incomplete query's results buffer by buffer. Dense row-major and col-major reads are
//! computed slab by slab (a run of positions of the slowest dimension at a time), so memory
//! stays near one slab; other reads are computed whole and handed out in pieces.

use super::QueryLayout;
use super::dense;
use super::filter::CellFilter;
use super::gather::gather;
use crate::array::schema::VAR_NUM;
use crate::array::{Array, FieldData};
use crate::error::{Error, Result};

/// One batch of cells.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    /// The fields' cells of this batch.
    pub fields: Vec<FieldData>,
    /// Whether this is the last batch (TileDB's "complete"; otherwise "incomplete").
    pub complete: bool,
}

/// A dense row-major or col-major read still to compute, slab by slab.
struct DenseSlabs<'a> {
    array: &'a Array,
    names: Vec<String>,
    ranges: Vec<Vec<(i128, i128)>>,
    layout: QueryLayout,
    filter: Option<&'a dyn CellFilter>,
    /// The slowest dimension (0 row-major, the last col-major).
    outer: usize,
    /// Next position in the concatenated ranges of `outer`.
    next: u64,
    /// Positions in the concatenated ranges of `outer`.
    len: u64,
    /// Positions per slab.
    step: u64,
}

impl DenseSlabs<'_> {
    /// The ranges of `outer` covering positions `from..to` of its concatenated ranges.
    fn slab_ranges(&self, from: u64, to: u64) -> Vec<(i128, i128)> {
        let mut out = Vec::new();
        let mut pos = 0u64;
        for &(l, h) in &self.ranges[self.outer] {
            let w = (h - l + 1) as u64;
            let (a, b) = (from.max(pos), to.min(pos + w));
            if a < b {
                out.push((l + (a - pos) as i128, l + (b - pos) as i128 - 1));
            }
            pos += w;
        }
        out
    }

    /// The next slab's fields (`None` when every slab was read).
    fn next_slab(&mut self) -> Result<Option<Vec<FieldData>>> {
        if self.next >= self.len {
            return Ok(None);
        }
        let to = (self.next + self.step).min(self.len);
        let mut ranges = self.ranges.clone();
        ranges[self.outer] = self.slab_ranges(self.next, to);
        self.next = to;
        dense::read(self.array, &self.names, &ranges, self.layout, self.filter).map(Some)
    }
}

/// The batches of a query's result.
pub struct Batches<'a> {
    fields: Vec<FieldData>,
    next: u64,
    budget: u64,
    done: bool,
    slabs: Option<DenseSlabs<'a>>,
}

impl std::fmt::Debug for Batches<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batches")
            .field("budget", &self.budget)
            .field("next", &self.next)
            .field("done", &self.done)
            .finish()
    }
}

impl<'a> Batches<'a> {
    /// Batches of an already computed result.
    pub(crate) fn new(fields: Vec<FieldData>, budget: u64) -> Batches<'a> {
        Batches {
            fields,
            next: 0,
            budget,
            done: false,
            slabs: None,
        }
    }

    /// Batches of a dense row-major or col-major read, computed slab by slab: as many
    /// positions of the slowest dimension as the fixed-size part of the budget allows.
    pub(crate) fn dense(
        array: &'a Array,
        names: Vec<String>,
        ranges: Vec<Vec<(i128, i128)>>,
        layout: QueryLayout,
        filter: Option<&'a dyn CellFilter>,
        budget: u64,
    ) -> Batches<'a> {
        let schema = array.schema();
        let outer = if layout == QueryLayout::ColMajor {
            ranges.len() - 1
        } else {
            0
        };
        let width = |rs: &[(i128, i128)]| rs.iter().map(|(l, h)| (h - l + 1) as u64).sum::<u64>();
        let inner: u64 = ranges
            .iter()
            .enumerate()
            .filter(|(d, _)| *d != outer)
            .map(|(_, rs)| width(rs))
            .product();
        // Bytes per cell known before reading (var-size cells count their offsets only).
        let per_cell: u64 = names
            .iter()
            .map(
                |n| match (schema.attribute_index(n), schema.dimension_index(n)) {
                    (Some(i), _) => {
                        let a = &schema.attributes[i];
                        a.cell_size().unwrap_or(8) as u64 + u64::from(a.nullable)
                    }
                    (None, Some(j)) => schema.dimensions[j].datatype.size() as u64,
                    _ => 0,
                },
            )
            .sum();
        let step = (budget / inner.saturating_mul(per_cell).max(1)).max(1);
        Batches {
            fields: Vec::new(),
            next: 0,
            budget,
            done: false,
            slabs: Some(DenseSlabs {
                array,
                names,
                len: width(&ranges[outer]),
                ranges,
                layout,
                filter,
                outer,
                next: 0,
                step,
            }),
        }
    }

    fn cells(&self) -> u64 {
        self.fields.first().map_or(0, |f| f.cell_count)
    }

    /// The bytes cell `i` takes in a batch.
    fn cost(&self, i: usize) -> u64 {
        self.fields
            .iter()
            .map(|f| {
                let data = if f.cell_val_num == VAR_NUM {
                    8 + f.cell(i).len() as u64
                } else {
                    (f.datatype.size() * f.cell_val_num as usize) as u64
                };
                data + u64::from(f.validity.is_some())
            })
            .sum()
    }

    /// The next batch (`None` after the complete one). A single cell over the budget is
    /// [`Error::BufferTooSmall`].
    pub fn next_batch(&mut self) -> Result<Option<Batch>> {
        if self.done {
            return Ok(None);
        }
        // Dense slabs: read the next slab once this one is handed out (empty slabs skipped).
        while self.next >= self.cells()
            && let Some(slabs) = self.slabs.as_mut()
        {
            match slabs.next_slab()? {
                Some(fields) => {
                    self.fields = fields;
                    self.next = 0;
                }
                None => {
                    self.slabs = None;
                    break;
                }
            }
        }
        let total = self.cells();
        let start = self.next;
        let mut end = start;
        let mut used = 0u64;
        while end < total {
            let c = self.cost(end as usize);
            if used + c > self.budget {
                break;
            }
            used += c;
            end += 1;
        }
        if end == start && start < total {
            let needed = self.cost(start as usize);
            return Err(Error::BufferTooSmall {
                needed: needed as usize,
                message: format!(
                    "cell {start} takes {needed} bytes, over the batch budget of {} bytes",
                    self.budget
                ),
            });
        }
        let picks: Vec<(u32, u64)> = (start..end).map(|c| (0, c)).collect();
        let fields = self
            .fields
            .iter()
            .map(|f| gather(f, &[f], &picks))
            .collect();
        self.next = end;
        let more_slabs = self.slabs.as_ref().is_some_and(|s| s.next < s.len);
        self.done = end == total && !more_slabs;
        Ok(Some(Batch {
            fields,
            complete: self.done,
        }))
    }
}

impl Iterator for Batches<'_> {
    type Item = Result<Batch>;

    fn next(&mut self) -> Option<Result<Batch>> {
        self.next_batch().transpose()
    }
}
