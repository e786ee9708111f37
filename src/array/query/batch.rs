//! Results in bounded batches: a query's cells handed out in pieces of at most a byte budget
//! (data, offsets and validity of every field), never splitting a cell, as TileDB hands out
//! an incomplete query's results buffer by buffer. Reads are computed slab by slab (dense: a
//! run of positions of the slowest dimension at a time, whole tiles of it in global order;
//! sparse: an interval of the slowest integer dimension, see sparse_slabs.rs), so memory
//! stays near one slab. Only sparse reads whose slowest dimension is a string or a float one,
//! or whose cell order is Hilbert (global order, unordered), are computed whole and handed
//! out in pieces.
//!
//! Batches come either as owned [`Batch`]es of at most the budget ([`Batches::next_batch`])
//! or written into caller buffers ([`Batches::next_into`]): as many whole cells as every
//! buffer of every field holds, across slabs, the next call continuing where this one
//! stopped.

use super::dense;
use super::filter::CellFilter;
use super::gather::{self, gather};
use super::sparse_slabs::SparseSlabs;
use super::{QueryLayout, QueryStats};
use crate::array::geometry::DimGrid;
use crate::array::schema::{Layout, VAR_NUM};
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

/// Caller buffers for one field of [`Batches::next_into`].
#[derive(Debug)]
pub struct BatchBuffers<'b> {
    /// The cells' values.
    pub data: &'b mut [u8],
    /// Var-size fields (required for them, refused otherwise): one little-endian `u64` per
    /// cell, the byte offset of the cell in `data` (the first cell of a batch at 0).
    pub offsets: Option<&'b mut [u8]>,
    /// Nullable fields (required for them, refused otherwise): one byte per cell (0 null).
    pub validity: Option<&'b mut [u8]>,
}

/// The bytes [`Batches::next_into`] wrote into one field's buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchSizes {
    /// Bytes of values.
    pub data: u64,
    /// Bytes of offsets (8 per cell of a var-size field, else 0).
    pub offsets: u64,
    /// Bytes of validity (1 per cell of a nullable field, else 0).
    pub validity: u64,
}

/// What one [`Batches::next_into`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filled {
    /// Cells written (the same for every field).
    pub cells: u64,
    /// Bytes written per field, in the buffers' order.
    pub sizes: Vec<BatchSizes>,
    /// Whether every cell has now been handed out (TileDB's "complete"; otherwise
    /// "incomplete": call again for the rest).
    pub complete: bool,
}

/// Checks that `b` suits field `f`: offsets exactly for var-size fields, validity exactly for
/// nullable ones.
fn check_buffers(f: &FieldData, b: &BatchBuffers<'_>) -> Result<()> {
    let var = f.cell_val_num == VAR_NUM;
    match (var, b.offsets.is_some()) {
        (true, false) => {
            return Err(Error::invalid(format!(
                "field '{}' is var-sized: it needs an offsets buffer",
                f.name
            )));
        }
        (false, true) => {
            return Err(Error::invalid(format!(
                "field '{}' has fixed-size cells: it takes no offsets buffer",
                f.name
            )));
        }
        _ => {}
    }
    match (f.validity.is_some(), b.validity.is_some()) {
        (true, false) => Err(Error::invalid(format!(
            "field '{}' is nullable: it needs a validity buffer",
            f.name
        ))),
        (false, true) => Err(Error::invalid(format!(
            "field '{}' is not nullable: it takes no validity buffer",
            f.name
        ))),
        _ => Ok(()),
    }
}

/// The byte range of cells `s..e` of `f` in its data.
fn data_span(f: &FieldData, s: usize, e: usize) -> (usize, usize) {
    match &f.offsets {
        Some(o) => {
            let end = o.get(e).map_or(f.data.len(), |x| *x as usize);
            (o[s] as usize, end)
        }
        None => {
            let cs = gather::cell_size(f);
            (s * cs, e * cs)
        }
    }
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
    /// The tile grid of `outer`, to end slabs on tile boundaries (each tile decoded once).
    grid: Option<DimGrid>,
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

    /// How many positions before `to` lie past the last tile boundary of `outer` within the
    /// same range (0 when that would leave the slab empty or without a grid).
    fn past_boundary(&self, to: u64) -> u64 {
        let Some(g) = self.grid else {
            return 0;
        };
        let mut pos = 0u64;
        for &(l, h) in &self.ranges[self.outer] {
            let w = (h - l + 1) as u64;
            if to <= pos + w {
                let last = l + (to - 1 - pos) as i128;
                let past = ((last - g.lo + 1).rem_euclid(g.extent)) as u64;
                let in_range = to - pos;
                return if past < in_range && to - past > self.next {
                    past
                } else {
                    0
                };
            }
            pos += w;
        }
        0
    }

    /// The next slab's fields (`None` when every slab was read).
    fn next_slab(&mut self) -> Result<Option<Vec<FieldData>>> {
        if self.next >= self.len {
            return Ok(None);
        }
        let mut to = (self.next + self.step).min(self.len);
        if to < self.len {
            to -= self.past_boundary(to);
        }
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
    slabs: Option<Slabs<'a>>,
    /// The number of fields of each batch.
    field_count: usize,
    stats: QueryStats,
}

/// A read computed slab by slab.
enum Slabs<'a> {
    Dense(DenseSlabs<'a>),
    Sparse(SparseSlabs<'a>),
}

impl Slabs<'_> {
    fn next_slab(&mut self) -> Result<Option<Vec<FieldData>>> {
        match self {
            Slabs::Dense(d) => d.next_slab(),
            Slabs::Sparse(s) => s.next_slab(),
        }
    }

    fn more(&self) -> bool {
        match self {
            Slabs::Dense(d) => d.next < d.len,
            Slabs::Sparse(s) => s.more(),
        }
    }
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
    pub(crate) fn new(fields: Vec<FieldData>, budget: u64, stats: QueryStats) -> Batches<'a> {
        Batches {
            field_count: fields.len(),
            fields,
            next: 0,
            budget,
            done: false,
            slabs: None,
            stats,
        }
    }

    /// Batches of a sparse row-major or col-major read computed slab by slab (see
    /// [`SparseSlabs`]).
    pub(crate) fn sparse(slabs: SparseSlabs<'a>, budget: u64) -> Batches<'a> {
        Batches {
            field_count: slabs.names.len(),
            fields: Vec::new(),
            next: 0,
            budget,
            done: false,
            slabs: Some(Slabs::Sparse(slabs)),
            stats: QueryStats::default(),
        }
    }

    /// What computing the result did so far (dense slabs report nothing).
    pub fn stats(&self) -> QueryStats {
        match &self.slabs {
            Some(Slabs::Sparse(s)) => s.stats,
            _ => self.stats,
        }
    }

    /// Batches of a dense read, computed slab by slab: as many positions of the slowest
    /// dimension (global order: the one the tile order compares first) as half the budget
    /// allows in fixed-size bytes, ending on tile boundaries when a slab spans tiles (global
    /// order: always whole tiles, at least one).
    pub(crate) fn dense(
        array: &'a Array,
        names: Vec<String>,
        ranges: Vec<Vec<(i128, i128)>>,
        layout: QueryLayout,
        filter: Option<&'a dyn CellFilter>,
        budget: u64,
    ) -> Batches<'a> {
        let schema = array.schema();
        let last = ranges.len() - 1;
        let outer = match layout {
            QueryLayout::ColMajor => last,
            QueryLayout::GlobalOrder if schema.tile_order == Layout::ColMajor => last,
            _ => 0,
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
        // Reading a slab holds its cells and, meanwhile, its tiles' bytes: half the budget
        // each.
        let mut step = (budget / 2 / inner.saturating_mul(per_cell).max(1)).max(1);
        let grid = DimGrid::of(&schema.dimensions[outer]).ok();
        if layout == QueryLayout::GlobalOrder
            && let Some(g) = grid
        {
            // Global order: whole tiles of `outer` per slab (the tile order compares it
            // first), however small the budget.
            step = step.max(g.extent as u64);
        }
        let grid = grid.filter(|g| step >= g.extent as u64);
        Batches {
            field_count: names.len(),
            fields: Vec::new(),
            next: 0,
            budget,
            done: false,
            slabs: Some(Slabs::Dense(DenseSlabs {
                array,
                names,
                len: width(&ranges[outer]),
                ranges,
                layout,
                filter,
                outer,
                next: 0,
                step,
                grid,
            })),
            stats: QueryStats::default(),
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

    /// Dense slabs: reads the next slab once this one is handed out (empty slabs skipped).
    fn load(&mut self) -> Result<()> {
        while self.next >= self.cells()
            && let Some(slabs) = self.slabs.as_mut()
        {
            match slabs.next_slab()? {
                Some(fields) => {
                    self.fields = fields;
                    self.next = 0;
                }
                None => {
                    if let Some(Slabs::Sparse(s)) = &self.slabs {
                        self.stats = s.stats;
                    }
                    self.slabs = None;
                    break;
                }
            }
        }
        Ok(())
    }

    /// Whether cells remain after the current slab's.
    fn more_slabs(&self) -> bool {
        self.slabs.as_ref().is_some_and(Slabs::more)
    }

    /// The number of fields a batch has (what [`next_into`](Self::next_into) takes buffers
    /// for).
    pub fn field_count(&self) -> usize {
        self.field_count
    }

    /// Whether every cell has been handed out.
    pub fn is_complete(&self) -> bool {
        self.done
    }

    /// Writes the next cells into `buffers` (one per field, in the query's field order): as
    /// many whole cells as every buffer holds, continuing across dense slabs; the next call
    /// continues after them. A cell that fits no buffer while cells remain is
    /// [`Error::BufferTooSmall`] naming the field and the bytes needed; nothing is consumed
    /// then, so the call may be repeated with larger buffers. After the complete batch, calls
    /// write nothing and say complete.
    pub fn next_into(&mut self, buffers: &mut [BatchBuffers<'_>]) -> Result<Filled> {
        if buffers.len() != self.field_count() {
            return Err(Error::invalid(format!(
                "the query has {} fields, {} buffers were given",
                self.field_count(),
                buffers.len()
            )));
        }
        let mut sizes = vec![BatchSizes::default(); buffers.len()];
        let mut cells = 0u64;
        while !self.done {
            self.load()?;
            let total = self.cells();
            if self.next >= total {
                self.done = true;
                break;
            }
            for (f, b) in self.fields.iter().zip(buffers.iter()) {
                check_buffers(f, b)?;
            }
            let start = self.next as usize;
            let end = self.fitting(start, total as usize, buffers, &sizes);
            if end == start {
                if cells > 0 {
                    break;
                }
                return Err(self.too_small(start, buffers));
            }
            for ((f, b), sz) in self.fields.iter().zip(buffers.iter_mut()).zip(&mut sizes) {
                copy_cells(f, start, end, b, sz);
            }
            cells += (end - start) as u64;
            self.next = end as u64;
            if self.next < total {
                break;
            }
            self.done = !self.more_slabs();
        }
        Ok(Filled {
            cells,
            sizes,
            complete: self.done,
        })
    }

    /// The end of the run of cells from `start` that fits the buffers' room after `used`.
    fn fitting(
        &self,
        start: usize,
        total: usize,
        buffers: &[BatchBuffers<'_>],
        used: &[BatchSizes],
    ) -> usize {
        let mut end = total;
        for ((f, b), u) in self.fields.iter().zip(buffers).zip(used) {
            let room_data = (b.data.len() as u64 - u.data) as usize;
            let by_cells = match (&f.offsets, &b.offsets) {
                (Some(o), Some(ob)) => {
                    let room = ((ob.len() as u64 - u.offsets) / 8) as usize;
                    let mut e = start;
                    let base = o[start] as usize;
                    while e < end.min(start + room) {
                        let cell_end = o.get(e + 1).map_or(f.data.len(), |x| *x as usize);
                        if cell_end - base > room_data {
                            break;
                        }
                        e += 1;
                    }
                    e
                }
                _ => start + room_data / gather::cell_size(f).max(1),
            };
            end = end.min(by_cells);
            if let Some(v) = &b.validity {
                end = end.min(start + (v.len() as u64 - u.validity) as usize);
            }
        }
        end
    }

    /// The error for cell `i` fitting none of its buffers.
    fn too_small(&self, i: usize, buffers: &[BatchBuffers<'_>]) -> Error {
        for (f, b) in self.fields.iter().zip(buffers) {
            let data = f.cell(i).len();
            let parts = [
                ("data", data, b.data.len()),
                (
                    "offsets",
                    8,
                    b.offsets.as_ref().map_or(usize::MAX, |o| o.len()),
                ),
                (
                    "validity",
                    1,
                    b.validity.as_ref().map_or(usize::MAX, |v| v.len()),
                ),
            ];
            for (what, needed, have) in parts {
                if needed > have {
                    return Error::BufferTooSmall {
                        needed,
                        message: format!(
                            "the next cell of field '{}' takes {needed} bytes of {what}, its \
                             {what} buffer has {have}",
                            f.name
                        ),
                    };
                }
            }
        }
        Error::Internal("no cell fits, yet every buffer has room for one".into())
    }

    /// The next batch (`None` after the complete one). A single cell over the budget is
    /// [`Error::BufferTooSmall`].
    pub fn next_batch(&mut self) -> Result<Option<Batch>> {
        if self.done {
            return Ok(None);
        }
        self.load()?;
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
        self.done = end == total && !self.more_slabs();
        Ok(Some(Batch {
            fields,
            complete: self.done,
        }))
    }
}

/// Copies cells `s..e` of `f` after what `sz` says was written, and counts them in `sz`.
fn copy_cells(f: &FieldData, s: usize, e: usize, b: &mut BatchBuffers<'_>, sz: &mut BatchSizes) {
    let (ds, de) = data_span(f, s, e);
    let at = sz.data as usize;
    b.data[at..at + de - ds].copy_from_slice(&f.data[ds..de]);
    if let (Some(o), Some(ob)) = (&f.offsets, b.offsets.as_deref_mut()) {
        let mut at = sz.offsets as usize;
        for x in &o[s..e] {
            let rel = x - ds as u64 + sz.data;
            ob[at..at + 8].copy_from_slice(&rel.to_le_bytes());
            at += 8;
        }
        sz.offsets = at as u64;
    }
    if let (Some(v), Some(vb)) = (&f.validity, b.validity.as_deref_mut()) {
        let at = sz.validity as usize;
        vb[at..at + e - s].copy_from_slice(&v[s..e]);
        sz.validity += (e - s) as u64;
    }
    sz.data += (de - ds) as u64;
}

impl Iterator for Batches<'_> {
    type Item = Result<Batch>;

    fn next(&mut self) -> Option<Result<Batch>> {
        self.next_batch().transpose()
    }
}
