//! Writing arrays: the code that writes on top of the on-disk structures of `array/`
//! (docs/ARRAY.md §7). [`Writer`] writes one fragment into an existing array of format
//! version 22 exactly as TileDB 2.30 writes it: the same data tiles, the same
//! `__fragment_metadata.tdb`, committed last.
//!
//! ```no_run
//! use tdbfilter::array::{Writer, WriteLayout};
//! # fn main() -> tdbfilter::Result<()> {
//! let config = tdbfilter::storage::StorageConfig::new();
//! let mut w = Writer::open("my_dense_array", None, Some(5), &config)?;
//! w.set_layout(WriteLayout::RowMajor)?;
//! // Rows 0..=1, columns 0..=2 of an int32 domain.
//! let bounds: Vec<u8> = [0i32, 1, 0, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
//! w.set_subarray(&bounds)?;
//! let a: Vec<u8> = (0..6).flat_map(|v: i32| v.to_le_bytes()).collect();
//! w.set_data("a", &a)?;
//! w.submit()?;
//! let fragment = w.finalize()?;
//! # Ok(()) }
//! ```
//!
//! Dense writes: a box (`set_subarray`, default the whole domain) of cells in row- or
//! col-major order, one batch, re-tiled into whole space tiles; or, in global order, whole
//! tiles of a tile-aligned box in tile order, streamed over any number of batches. Sparse
//! writes: cells in global order over any number of batches, cut into tiles of `capacity`
//! cells with one MBR each; or unordered, any number of batches kept until finalize and
//! sorted together into one fragment (memory holds every batch's cells). Peak memory of a
//! streamed write is the current batch plus a few tiles per thread: tiles are filtered in
//! parallel and appended to their files as soon as a batch of them is done.

mod batch;
pub mod create;
pub mod dense;
pub mod fragment;
mod global;
mod ordered;
mod unordered;

pub mod tile_metadata;

#[cfg(all(test, feature = "object-store"))]
mod commit_order_tests;

use crate::array::directory::{ArrayDirectory, names};
use crate::array::field::FieldInfo;
use crate::array::order::global::DimCoords;
use crate::array::rtree::Mbr;
use crate::array::schema::{ArraySchema, Layout, Range};
use crate::array::value;
use crate::engine::threads;
use crate::error::{Error, Result};
pub use batch::FieldBuffers;
use batch::{Input, coords_of};
use dense::{DenseTiler, RawTile};
use fragment::{FilteredTile, FragmentWriter, SharedPipelines};
use global::{Pending, self_mbr, slice_tile};
use rayon::prelude::*;
use std::borrow::Cow;
use std::sync::Arc;
use unordered::Unordered;
use zeroize::Zeroizing;

/// The order of the cells given to a [`Writer`] (TileDB's query layouts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteLayout {
    /// Dense: the box's cells in row-major order (the last dimension fastest).
    RowMajor,
    /// Dense: the box's cells in col-major order (the first dimension fastest).
    ColMajor,
    /// The array's global order: dense, whole tiles of a tile-aligned box in tile order;
    /// sparse, cells sorted by tile and cell order. Several batches stream into one fragment.
    GlobalOrder,
    /// Sparse: coordinates in any order. Several batches are sorted together at finalize into
    /// one fragment, the same as one batch of all their cells.
    Unordered,
}

/// What a consolidation's fragment needs beyond a global-order write (TileDB's write query
/// with `disable_checks_consolidation`): see [`Writer::set_consolidation`].
#[derive(Clone, Debug)]
pub(crate) struct Consolidation {
    /// The timestamp range of the fragment's name: the first merged fragment's start, the last
    /// one's end.
    pub timestamps: (u64, u64),
    /// Sparse: per-cell timestamps (`t.tdb`) are written, given as field
    /// [`fragment::TIMESTAMPS`].
    pub with_timestamps: bool,
    /// Dense: the non-empty domain recorded (the union of the merged fragments'), inside the
    /// tile-aligned box whose whole tiles are written.
    pub non_empty_domain: Option<Vec<Range>>,
    /// The markers of the delete and update commits the fragment counts as processed.
    pub processed_conditions: Vec<String>,
    /// Sparse, with timestamps: per-cell delete metadata (`dt.tdb`, `dci.tdb`) is written,
    /// given as fields [`fragment::DELETE_TIMESTAMPS`] and
    /// [`fragment::DELETE_CONDITION_INDEX`] (a consolidation without purge when deletes
    /// apply).
    pub delete_meta: bool,
}

/// Writes one fragment into an array (see the module documentation).
pub struct Writer {
    storage: crate::storage::Storage,
    root: crate::storage::Uri,
    schema: Arc<ArraySchema>,
    key: Option<Zeroizing<Vec<u8>>>,
    timestamp: u64,
    layout: WriteLayout,
    subarray: Option<Vec<(i128, i128)>>,
    threads: usize,
    /// Fields written: every attribute, then (sparse) every dimension.
    fields: Vec<FieldInfo>,
    /// The same with pipelines using every thread, for batches of fewer tiles than threads.
    wide_fields: Vec<FieldInfo>,
    shared: SharedPipelines,
    wide_shared: SharedPipelines,
    inputs: Vec<Input<'static>>,
    fragment: Option<FragmentWriter>,
    pending: Vec<Pending>,
    pending_cells: u64,
    /// Sparse global order: the previous batch's last cell (bytes, var-size) per dimension.
    last_cell: Option<Vec<(Vec<u8>, bool)>>,
    cells_written: u64,
    submits: u64,
    /// Sparse unordered: the cells of the batches so far (each batch sorted as it comes),
    /// sorted as a whole at finalize.
    unordered: Option<Unordered>,
    failed: Option<String>,
    consolidation: Option<Consolidation>,
    /// Sparse arrays without duplicates: refuse duplicate coordinates (TileDB's
    /// `sm.check_coord_dups`, default true).
    check_coord_dups: bool,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("root", &self.root)
            .field("timestamp", &self.timestamp)
            .field("layout", &self.layout)
            .finish()
    }
}

impl Writer {
    /// Opens the array at `uri` (a local folder, `file://` or object-store URI; `config` and
    /// the environment configure object stores) for writing one fragment at `timestamp`
    /// (milliseconds; `None` or 0: now, as TileDB). The fragment is written with the array's
    /// latest schema, whatever the timestamp (TileDB 2.30 opens arrays for writing with the
    /// newest schema: a write at an early timestamp after an evolution has the evolved
    /// fields); `key` is the AES-256-GCM key of an encrypted array.
    pub fn open(
        uri: &str,
        key: Option<&[u8]>,
        timestamp: Option<u64>,
        config: &crate::storage::StorageConfig,
    ) -> Result<Writer> {
        let dir = ArrayDirectory::open(uri, config)?;
        let timestamp = names::write_timestamp(timestamp, "the writer's")?;
        if let Some(k) = key {
            crate::engine::encryption_key::EncryptionKey::new(k)?;
        }
        let file = dir.latest_schema(u64::MAX);
        let schema = Arc::new(dir.load_schema(file, key)?);
        let version = crate::array::fragment::metadata::MAX_FRAGMENT_VERSION;
        if schema.version != version || file.timestamps.is_none() {
            return Err(Error::Unsupported(format!(
                "the array's schema {} has format version {}: TileDB 2.30 writes fragments of \
                 that version into it, this writer writes version {version} only",
                file.name, schema.version
            )));
        }
        let dense = schema.is_dense();
        let threads = 0;
        let (fields, shared) = fragment::fields_of(&schema, dense, false, false, key, 1)?;
        let (wide_fields, wide_shared) =
            fragment::fields_of(&schema, dense, false, false, key, threads)?;
        let n = fields.len();
        Ok(Writer {
            storage: dir.storage().clone(),
            root: dir.root().clone(),
            key: key.map(|k| Zeroizing::new(k.to_vec())),
            timestamp,
            layout: if dense {
                WriteLayout::RowMajor
            } else {
                WriteLayout::Unordered
            },
            subarray: None,
            threads,
            fields,
            wide_fields,
            shared,
            wide_shared,
            inputs: vec![Input::default(); n],
            fragment: None,
            pending: vec![Pending::default(); n],
            pending_cells: 0,
            last_cell: None,
            unordered: None,
            cells_written: 0,
            submits: 0,
            failed: None,
            consolidation: None,
            check_coord_dups: true,
            schema,
        })
    }

    /// The schema the fragment is written with.
    pub fn schema(&self) -> &ArraySchema {
        &self.schema
    }

    /// The fragment's timestamp (ms).
    pub fn timestamp(&self) -> u64 {
        self.timestamp
    }

    /// Threads filtering tiles (0, the default: every core).
    pub fn set_threads(&mut self, threads: usize) -> Result<()> {
        let key = self.key.as_ref().map(|k| k.as_slice());
        let dense = self.schema.is_dense();
        let ts = self.with_timestamps();
        let dm = ts && self.consolidation.as_ref().is_some_and(|c| c.delete_meta);
        let (wide_fields, wide_shared) =
            fragment::fields_of(&self.schema, dense, ts, dm, key, threads)?;
        self.wide_fields = wide_fields;
        self.wide_shared = wide_shared;
        self.threads = threads;
        Ok(())
    }

    fn with_timestamps(&self) -> bool {
        self.consolidation
            .as_ref()
            .is_some_and(|c| c.with_timestamps && !self.schema.is_dense())
    }

    /// Makes this write a consolidation's (before the first batch): the layout becomes global
    /// order, the fragment is named for `c.timestamps`, sparse batches are taken as merged
    /// (equal coordinates of different timestamps kept, no order check: the merge orders
    /// them) with per-cell timestamps when `c.with_timestamps`, and a dense fragment records
    /// `c.non_empty_domain` while its box (set with [`Writer::set_subarray`]) covers whole
    /// tiles.
    pub(crate) fn set_consolidation(&mut self, c: Consolidation) -> Result<()> {
        self.check_usable()?;
        if self.submits > 0 {
            return Err(Error::invalid(
                "a consolidation is set before the first batch",
            ));
        }
        if c.timestamps.0 > c.timestamps.1 {
            return Err(Error::invalid(format!(
                "the timestamp range [{}, {}] is reversed",
                c.timestamps.0, c.timestamps.1
            )));
        }
        self.layout = WriteLayout::GlobalOrder;
        self.consolidation = Some(c);
        let key = self.key.as_ref().map(|k| k.as_slice());
        let dense = self.schema.is_dense();
        let ts = self.with_timestamps();
        let dm = ts && self.consolidation.as_ref().is_some_and(|c| c.delete_meta);
        let (fields, shared) = fragment::fields_of(&self.schema, dense, ts, dm, key, 1)?;
        let (wide_fields, wide_shared) =
            fragment::fields_of(&self.schema, dense, ts, dm, key, self.threads)?;
        let n = fields.len();
        self.fields = fields;
        self.shared = shared;
        self.wide_fields = wide_fields;
        self.wide_shared = wide_shared;
        self.inputs = vec![Input::default(); n];
        self.pending = vec![Pending::default(); n];
        Ok(())
    }

    /// Whether duplicate coordinates are refused in a sparse array that does not allow them
    /// (TileDB's `sm.check_coord_dups`, default true). With `false` the caller promises there
    /// are none, as in TileDB: cells are written as given, duplicates included, and a read of
    /// that fragment alone returns them all (TileDB's readers deduplicate across fragments
    /// only).
    pub fn set_check_coord_dups(&mut self, check: bool) -> Result<()> {
        self.check_usable()?;
        self.check_coord_dups = check;
        Ok(())
    }

    /// Sets the order of the cells (default: row-major for dense arrays, unordered for sparse
    /// ones), before the first batch.
    pub fn set_layout(&mut self, layout: WriteLayout) -> Result<()> {
        self.check_usable()?;
        if self.submits > 0 {
            return Err(Error::invalid(
                "the layout cannot change after a batch was submitted",
            ));
        }
        let dense = self.schema.is_dense();
        match (dense, layout) {
            (true, WriteLayout::Unordered) => {
                return Err(Error::invalid(
                    "unordered writes are only possible for sparse arrays (TileDB 2.30 refuses \
                     them on dense arrays)",
                ));
            }
            (false, WriteLayout::RowMajor | WriteLayout::ColMajor) => {
                return Err(Error::invalid(
                    "sparse writes take the unordered or global-order layout",
                ));
            }
            _ => {}
        }
        self.layout = layout;
        Ok(())
    }

    /// Sets the dense box: `[lo, hi]` per dimension, packed in the dimensions' types
    /// (default: the whole domain; in a consolidation, whole tiles, which may reach past the
    /// end of a domain that is not a whole number of tiles). Refused for sparse arrays, as
    /// TileDB does.
    pub fn set_subarray(&mut self, subarray: &[u8]) -> Result<()> {
        self.check_usable()?;
        if !self.schema.is_dense() {
            return Err(Error::invalid(
                "a subarray is not supported in sparse writes (the coordinates place the cells)",
            ));
        }
        if self.submits > 0 {
            return Err(Error::invalid(
                "the subarray cannot change after a batch was submitted",
            ));
        }
        let mut ranges = Vec::new();
        let mut at = 0;
        for d in &self.schema.dimensions {
            let n = d.datatype.size();
            let b = subarray.get(at..at + 2 * n).ok_or_else(|| {
                Error::invalid(format!(
                    "the subarray has {} bytes; {} dimensions of these types need {}",
                    subarray.len(),
                    self.schema.dimensions.len(),
                    self.schema
                        .dimensions
                        .iter()
                        .map(|d| 2 * d.datatype.size())
                        .sum::<usize>()
                ))
            })?;
            ranges.push(Range::Fixed(b[..n].to_vec(), b[n..].to_vec()));
            at += 2 * n;
        }
        if at != subarray.len() {
            return Err(Error::invalid(format!(
                "the subarray has {} bytes, {at} expected",
                subarray.len()
            )));
        }
        self.subarray = Some(if self.consolidation.is_some() {
            dense::consolidation_box_bounds(&self.schema, &ranges)?
        } else {
            dense::box_bounds(&self.schema, &ranges)?
        });
        Ok(())
    }

    /// The index of `field` (any attribute or dimension) in the writer's batch.
    pub fn field_index(&self, field: &str) -> Result<usize> {
        if let Some(i) = self.fields.iter().position(|f| f.name == field) {
            return Ok(i);
        }
        if self.schema.dimension_index(field).is_some() {
            return Err(Error::invalid(format!(
                "'{field}' is a dimension: dense writes take a subarray, not coordinates"
            )));
        }
        Err(Error::invalid(format!(
            "the array has no attribute or dimension '{field}'"
        )))
    }

    /// Sets the cell values of `field` for the next batch: fixed-size cells, or the
    /// concatenated values of var-size cells.
    pub fn set_data(&mut self, field: &str, data: &[u8]) -> Result<()> {
        self.check_usable()?;
        let i = self.field_index(field)?;
        self.inputs[i].data = Some(Cow::Owned(data.to_vec()));
        Ok(())
    }

    /// [`Writer::set_data`] without a copy: the writer takes `data`.
    pub fn set_data_owned(&mut self, field: &str, data: Vec<u8>) -> Result<()> {
        self.check_usable()?;
        let i = self.field_index(field)?;
        self.inputs[i].data = Some(Cow::Owned(data));
        Ok(())
    }

    /// Sets the byte offset of each cell in the data of var-size `field` (one per cell, no
    /// extra element).
    pub fn set_offsets(&mut self, field: &str, offsets: &[u64]) -> Result<()> {
        self.set_offsets_owned(field, offsets.to_vec())
    }

    /// [`Writer::set_offsets`] without a copy: the writer takes `offsets`.
    pub fn set_offsets_owned(&mut self, field: &str, offsets: Vec<u64>) -> Result<()> {
        self.check_usable()?;
        let i = self.var_field_index(field)?;
        self.inputs[i].offsets = Some(Cow::Owned(offsets));
        Ok(())
    }

    /// Sets the validity of nullable `field` (one byte per cell, 0 null).
    pub fn set_validity(&mut self, field: &str, validity: &[u8]) -> Result<()> {
        self.check_usable()?;
        let i = self.nullable_field_index(field)?;
        self.inputs[i].validity = Some(Cow::Owned(validity.to_vec()));
        Ok(())
    }

    /// The index of var-size `field`.
    pub fn var_field_index(&self, field: &str) -> Result<usize> {
        let i = self.field_index(field)?;
        if !self.fields[i].is_var() {
            return Err(Error::invalid(format!(
                "field {field} has fixed-size cells: it takes no offsets"
            )));
        }
        Ok(i)
    }

    /// The index of nullable `field`.
    pub fn nullable_field_index(&self, field: &str) -> Result<usize> {
        let i = self.field_index(field)?;
        if !self.fields[i].nullable {
            return Err(Error::invalid(format!(
                "field {field} is not nullable: it takes no validity"
            )));
        }
        Ok(i)
    }

    fn check_usable(&self) -> Result<()> {
        match &self.failed {
            Some(why) => Err(Error::invalid(format!(
                "the writer failed earlier ({why}); nothing was committed"
            ))),
            None => Ok(()),
        }
    }

    /// Writes the batch set since the last submit. Dense row- and col-major writes take one
    /// batch (the whole box); global-order and sparse writes take any number: global-order
    /// batches stream into the fragment, unordered ones are kept (each checked and sorted
    /// when submitted) and sorted together into one fragment at finalize, as if they were one
    /// batch. On error the fragment is abandoned: nothing is committed and later calls fail.
    pub fn submit(&mut self) -> Result<()> {
        self.submit_fields(&[])
    }

    /// [`Writer::submit`] of a batch whose buffers are borrowed for the call, without a copy
    /// (with the buffers set by `set_data`, `set_offsets` and `set_validity`, which these
    /// replace field by field). The C API and the bindings write through this.
    pub fn submit_fields(&mut self, fields: &[(&str, FieldBuffers<'_>)]) -> Result<()> {
        self.check_usable()?;
        let mut inputs: Vec<Input<'_>> = std::mem::take(&mut self.inputs);
        self.inputs = vec![Input::default(); self.fields.len()];
        let r = self
            .borrow_fields(&mut inputs, fields)
            .and_then(|()| self.submit_inner(inputs));
        if let Err(e) = &r {
            self.failed = Some(e.message().to_string());
            self.fragment = None;
        }
        r
    }

    /// Puts the borrowed buffers of `fields` into the batch's inputs.
    fn borrow_fields<'a>(
        &self,
        inputs: &mut [Input<'a>],
        fields: &[(&str, FieldBuffers<'a>)],
    ) -> Result<()> {
        for (name, b) in fields {
            let i = self.field_index(name)?;
            inputs[i].data = Some(Cow::Borrowed(b.data));
            if let Some(o) = b.offsets {
                inputs[self.var_field_index(name)?].offsets = Some(Cow::Borrowed(o));
            }
            if let Some(v) = b.validity {
                inputs[self.nullable_field_index(name)?].validity = Some(Cow::Borrowed(v));
            }
        }
        Ok(())
    }

    fn submit_inner(&mut self, mut inputs: Vec<Input<'_>>) -> Result<()> {
        let dense = self.schema.is_dense();
        let cells = self.batch_cells(&inputs)?;
        self.check_attribute_order(&inputs)?;
        match (dense, self.layout) {
            (true, WriteLayout::RowMajor | WriteLayout::ColMajor) => {
                if self.submits > 0 {
                    return Err(Error::invalid(
                        "a row- or col-major dense write is one batch (one box); stream whole \
                         tiles in global order instead, or write another fragment",
                    ));
                }
                self.submits += 1;
                self.write_dense_box(&inputs, cells)
            }
            (true, WriteLayout::GlobalOrder) => {
                self.submits += 1;
                self.write_global(&inputs, cells)
            }
            (false, WriteLayout::GlobalOrder) => {
                if self.consolidation.is_none() {
                    self.check_sparse_batch(&inputs, cells)?;
                }
                self.submits += 1;
                self.write_global(&inputs, cells)
            }
            (false, _) => {
                // Each batch is checked and sorted now (so that its errors come with it), and
                // kept: the batches are sorted together and written at finalize.
                self.sort_sparse_batch(&mut inputs)?;
                self.submits += 1;
                self.collect_unordered(inputs, cells);
                Ok(())
            }
            (true, WriteLayout::Unordered) => unreachable!("refused by set_layout"),
        }
    }

    /// Checks the batch's buffers against each other and the fields; returns its cell count.
    fn batch_cells(&self, inputs: &[Input<'_>]) -> Result<u64> {
        let mut cells: Option<(u64, &str)> = None;
        for (f, input) in self.fields.iter().zip(inputs) {
            let name = f.name.as_str();
            let data = input.data.as_ref().ok_or_else(|| {
                Error::invalid(format!(
                    "field {name} has no data: every attribute{} must be written",
                    if self.schema.is_dense() {
                        ""
                    } else {
                        " and dimension"
                    }
                ))
            })?;
            let n = if f.is_var() {
                let o = input.offsets.as_ref().ok_or_else(|| {
                    Error::invalid(format!("var-size field {name} has no offsets"))
                })?;
                for (i, w) in o.windows(2).enumerate() {
                    if w[1] < w[0] {
                        return Err(Error::invalid(format!(
                            "field {name}: offset {} ({}) is below offset {i} ({})",
                            i + 1,
                            w[1],
                            w[0]
                        )));
                    }
                }
                if let Some(&last) = o.last()
                    && last > data.len() as u64
                {
                    return Err(Error::invalid(format!(
                        "field {name}: the last offset ({last}) is past the {} bytes of data",
                        data.len()
                    )));
                }
                o.len() as u64
            } else {
                if data.len() % f.value_size() != 0 {
                    return Err(Error::invalid(format!(
                        "field {name}: {} bytes is not a whole number of {}-byte cells",
                        data.len(),
                        f.value_size()
                    )));
                }
                (data.len() / f.value_size()) as u64
            };
            match (&input.validity, f.nullable) {
                (Some(v), true) if v.len() as u64 != n => {
                    return Err(Error::invalid(format!(
                        "field {name}: {} validity bytes for {n} cells",
                        v.len()
                    )));
                }
                (None, true) => {
                    return Err(Error::invalid(format!(
                        "nullable field {name} has no validity"
                    )));
                }
                _ => {}
            }
            match cells {
                Some((c, other)) if c != n => {
                    return Err(Error::invalid(format!(
                        "field {name} has {n} cells, field {other} {c}"
                    )));
                }
                _ => cells = Some((n, name)),
            }
        }
        Ok(cells.map_or(0, |c| c.0))
    }

    /// TileDB's `check_attr_order`: the cells of an attribute declared increasing or
    /// decreasing must be in that order.
    fn check_attribute_order(&self, inputs: &[Input<'_>]) -> Result<()> {
        for (i, a) in self.schema.attributes.iter().enumerate() {
            if a.order == 0 {
                continue;
            }
            let input = &inputs[i];
            let data = input.data.as_deref().unwrap_or(&[]);
            let cells: Vec<&[u8]> = match &input.offsets {
                Some(o) => (0..o.len())
                    .map(|c| {
                        let end = o.get(c + 1).map_or(data.len(), |e| *e as usize);
                        &data[o[c] as usize..end]
                    })
                    .collect(),
                None => data.chunks(self.fields[i].value_size()).collect(),
            };
            let increasing = a.order == 1;
            let sorted = cells.windows(2).all(|w| {
                let o = crate::array::order::compare(a.datatype, w[0], w[1]);
                if increasing { o.is_le() } else { o.is_ge() }
            });
            if !sorted {
                return Err(Error::invalid(format!(
                    "the data for attribute '{}' is not in the expected order",
                    a.name
                )));
            }
        }
        Ok(())
    }

    /// The batch's coordinates, one buffer per dimension.
    fn coords<'b>(&self, inputs: &'b [Input<'_>]) -> Vec<DimCoords<'b>> {
        coords_of(&self.schema, &self.fields, inputs)
    }

    fn ensure_fragment(&mut self) -> Result<()> {
        if self.fragment.is_none() {
            self.fragment = Some(FragmentWriter::create(
                &self.storage,
                &self.root,
                &self.schema,
                self.fields.clone(),
                self.schema.is_dense(),
                self.consolidation
                    .as_ref()
                    .map_or((self.timestamp, self.timestamp), |c| c.timestamps),
            )?);
        }
        Ok(())
    }

    /// Builds, filters and appends `tile_count` tiles of every field, `build(t, f)` making
    /// tile `t` of field `f` (raw tile and cells) and `mbr(t)` its MBR (sparse), a batch at a
    /// time.
    fn write_tiles<B, M>(&mut self, tile_count: u64, build: B, mbr: M) -> Result<()>
    where
        B: Fn(u64, usize) -> Result<(RawTile, u64)> + Sync,
        M: Fn(u64) -> Result<Option<Mbr>>,
    {
        self.ensure_fragment()?;
        let threads = threads::effective_threads(self.threads);
        let nf = self.fields.len() as u64;
        // A batch keeps every thread busy with a few tiles; fewer jobs than threads use the
        // threads inside each tile instead.
        let per_batch = ((2 * threads as u64).div_ceil(nf)).max(1);
        let pool = threads::pool(threads)?;
        let mut t0 = 0;
        while t0 < tile_count {
            let n = per_batch.min(tile_count - t0);
            let jobs = n * nf;
            let wide = jobs < threads as u64;
            let (fields, shared) = if wide {
                (&self.wide_fields, &self.wide_shared)
            } else {
                (&self.fields, &self.shared)
            };
            let job = |j: u64| -> Result<FilteredTile> {
                let (t, f) = (t0 + j / nf, (j % nf) as usize);
                let (raw, cell_num) = build(t, f)?;
                fragment::filter(&fields[f], shared, raw, cell_num)
            };
            let done: Vec<Result<FilteredTile>> = if wide {
                (0..jobs).map(job).collect()
            } else {
                pool.install(|| (0..jobs).into_par_iter().map(job).collect())
            };
            let mut it = done.into_iter();
            let frag = self.fragment.as_mut().expect("created above");
            for t in t0..t0 + n {
                let tiles: Vec<FilteredTile> =
                    (&mut it).take(nf as usize).collect::<Result<_>>()?;
                frag.append(tiles, mbr(t)?)?;
            }
            t0 += n;
        }
        Ok(())
    }

    /// Writes what is left, the fragment metadata, and commits (see [`FragmentWriter`]).
    /// Returns the fragment's name. On error nothing is committed.
    pub fn finalize(self) -> Result<String> {
        self.finalize_with(|_| Ok(()))
    }

    /// [`Writer::finalize`], calling `before_commit` with the fragment's name once everything
    /// but the commit is written (the commit follows only when it succeeds): consolidation
    /// writes what must exist before the fragment becomes visible.
    pub(crate) fn finalize_with(
        mut self,
        before_commit: impl FnOnce(&str) -> Result<()>,
    ) -> Result<String> {
        self.check_usable()?;
        if self.submits == 0 {
            return Err(Error::invalid(
                "nothing was submitted: no fragment to commit",
            ));
        }
        let dense = self.schema.is_dense();
        self.write_unordered()?;
        let fields = self.fields.clone();
        if self.pending_cells > 0 {
            if dense {
                return Err(Error::invalid(format!(
                    "the global-order batches end inside a tile ({} cells of {} left over)",
                    self.pending_cells,
                    self.schema.cells_per_tile()?
                )));
            }
            let pending = std::mem::take(&mut self.pending);
            let p: Vec<Input<'_>> = pending.iter().map(Pending::as_input).collect();
            let n = self.pending_cells;
            let schema = self.schema.clone();
            self.write_tiles(
                1,
                |_, f| Ok(slice_tile(&fields[f], &p[f], 0, n)),
                |_| self_mbr(&schema, &fields, &p, 0, n),
            )?;
            self.cells_written += n;
        }
        let ned = if dense {
            let bounds = self.dense_box()?;
            let tiler = DenseTiler::new(&self.schema, &bounds, Layout::RowMajor)?;
            if self.cells_written != tiler.cell_num() {
                return Err(Error::invalid(format!(
                    "{} cells were written, the box has {}",
                    self.cells_written,
                    tiler.cell_num()
                )));
            }
            match self
                .consolidation
                .as_ref()
                .and_then(|c| c.non_empty_domain.clone())
            {
                Some(ned) => Some(ned),
                None => Some(
                    self.schema
                        .dimensions
                        .iter()
                        .zip(&bounds)
                        .map(|(d, &(lo, hi))| {
                            Range::Fixed(
                                value::from_i128(d.datatype, lo),
                                value::from_i128(d.datatype, hi),
                            )
                        })
                        .collect(),
                ),
            }
        } else {
            None
        };
        let mut frag = self
            .fragment
            .take()
            .ok_or_else(|| Error::invalid("no cells were written: no fragment to commit"))?;
        if let Some(c) = self.consolidation.take() {
            frag.set_processed_conditions(c.processed_conditions);
        }
        before_commit(frag.name())?;
        let key = self.key.as_ref().map(|k| k.as_slice());
        frag.commit(&self.schema, ned, key)
            .map_err(|e| e.context("committing the fragment"))
    }
}

/// Writes `changes` to the array metadata of the array at `uri` (a local folder, `file://` or
/// object-store URI; `config` and the environment configure object stores) as one new `__meta` file at
/// `timestamp` (milliseconds; `None` or 0: now), as TileDB does when an array opened for
/// writing closes. `key` must open the array (the latest schema is decrypted with it first),
/// so that no file is written that the array's readers cannot decrypt. Returns the file's
/// name (`None` for no changes).
pub fn write_metadata(
    uri: &str,
    key: Option<&[u8]>,
    timestamp: Option<u64>,
    changes: &[crate::array::metadata::MetadataChange],
    config: &crate::storage::StorageConfig,
) -> Result<Option<String>> {
    let dir = ArrayDirectory::open(uri, config)?;
    if let Some(k) = key {
        crate::engine::encryption_key::EncryptionKey::new(k)?;
    }
    let t = names::write_timestamp(timestamp, "the array metadata")?;
    dir.load_schema(dir.latest_schema(t), key)?;
    crate::array::metadata::write(dir.storage(), dir.root(), key, Some(t), changes)
}
