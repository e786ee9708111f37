//! Locating and decoding the tiles of one field of one fragment (docs/ARRAY.md §5.1): positioned
//! reads of the filtered bytes, unfiltered with the latest schema's pipelines at the
//! fragment's format version (and the array's key), straight into caller buffers where the
//! layout allows.

use crate::array::fragment::metadata::{FieldSlot, FragmentMetadata, ListKind};
use crate::array::open::{Array, Fragment};
use crate::array::schema::VAR_NUM;
use crate::error::{Error, Result};
use crate::format::datatype::Datatype;
use crate::pipeline::Pipeline;
use crate::storage::{FileReader, Uri};
use std::cell::Cell;
use std::ops::Range;

/// Read buffers up to this size are kept per thread between tiles.
const MAX_KEPT_READ_BUFFER: usize = 256 << 20;

thread_local! {
    /// Each thread's buffer for filtered tile bytes (see [`TileReader::with_filtered`]).
    static READ_BUFFER: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// A field to read from fragments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileField {
    /// Attribute `i` of the latest schema.
    Attribute(usize),
    /// Dimension `j`.
    Dimension(usize),
    /// Per-cell timestamps of consolidated fragments.
    Timestamps,
    /// Per-cell delete timestamps.
    DeleteTimestamps,
    /// Per-cell delete-condition indices.
    DeleteConditionIndex,
}

/// Which file of a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileKind {
    /// Fixed-size data, or the offsets of a var-size field (`a<i>.tdb`).
    Fixed = 0,
    /// Var-size data (`a<i>_var.tdb`).
    Var = 1,
    /// Validity (`a<i>_validity.tdb`).
    Validity = 2,
}

/// One decoded tile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecodedTile {
    /// Cells (fixed-size) or var-size data.
    pub data: Vec<u8>,
    /// Var-size fields: byte offset of each cell in `data`.
    pub offsets: Option<Vec<u64>>,
    /// Nullable fields: one byte per cell.
    pub validity: Option<Vec<u8>>,
    /// Number of cells.
    pub cells: u64,
}

impl DecodedTile {
    /// The bytes of cell `c`.
    pub fn cell(&self, c: usize, cell_size: usize) -> &[u8] {
        match &self.offsets {
            Some(o) => {
                let end = o.get(c + 1).map_or(self.data.len(), |e| *e as usize);
                &self.data[o[c] as usize..end]
            }
            None => &self.data[c * cell_size..(c + 1) * cell_size],
        }
    }
}

/// The reader of one field's tiles in one fragment.
pub struct TileReader<'a> {
    frag: &'a Fragment,
    /// Field name (for messages).
    pub name: String,
    slot: usize,
    /// Value type.
    pub datatype: Datatype,
    /// Bytes per cell of a fixed-size field.
    pub cell_size: Option<usize>,
    /// Whether the field is nullable.
    pub nullable: bool,
    data: Pipeline,
    offsets_pipeline: Pipeline,
    validity: Pipeline,
    paths: [Uri; 3],
    files: [Option<FileReader>; 3],
    offsets: [&'a [u64]; 3],
    var_sizes: &'a [u64],
    sizes: [u64; 3],
    /// The files' actual lengths (reads never size a buffer past them).
    lengths: [u64; 3],
    /// Whether the files are local (no prefetching).
    local: bool,
}

impl std::fmt::Debug for TileReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TileReader")
            .field("fragment", &self.frag.name())
            .field("field", &self.name)
            .finish()
    }
}

fn with_version(p: &Pipeline, version: u32, key: Option<&[u8]>) -> Result<Pipeline> {
    let mut p = p.clone();
    p.set_format_version(version)?;
    p.set_threads(1);
    if let Some(k) = key {
        p.set_encryption_key(k)?;
    }
    Ok(p)
}

impl<'a> TileReader<'a> {
    /// The reader of `field` in `frag`, or `None` when the fragment does not have the field
    /// (an attribute added after the fragment was written, or dropped and added again with
    /// another definition; per-cell timestamps of a fragment without them).
    pub fn new(array: &'a Array, frag: &'a Fragment, field: TileField) -> Result<Option<Self>> {
        let latest = array.schema();
        let fs = &frag.schema;
        let meta = &frag.meta;
        let (name, datatype, cvn, nullable, filters, slot) = match field {
            TileField::Attribute(i) => {
                let a = &latest.attributes[i];
                let Some(fi) = fs.attribute_index(&a.name) else {
                    return Ok(None);
                };
                // An attribute dropped and added again with another type, cell size or
                // nullability: the fragment's cells belong to the old attribute, and the new
                // one reads its fill value there (TileDB 2.30 reinterprets the old bytes).
                let old = &fs.attributes[fi];
                if (old.datatype, old.cell_val_num, old.nullable)
                    != (a.datatype, a.cell_val_num, a.nullable)
                {
                    return Ok(None);
                }
                (
                    a.name.clone(),
                    a.datatype,
                    a.cell_val_num,
                    a.nullable,
                    &a.filters,
                    FieldSlot::Attribute(fi),
                )
            }
            TileField::Dimension(j) => {
                let d = &latest.dimensions[j];
                let fj = fs.dimension_index(&d.name).ok_or_else(|| {
                    Error::corrupt(format!(
                        "fragment {} lacks dimension {}",
                        frag.name(),
                        d.name
                    ))
                })?;
                (
                    d.name.clone(),
                    d.datatype,
                    d.cell_val_num,
                    false,
                    &d.filters,
                    FieldSlot::Dimension(fj),
                )
            }
            TileField::Timestamps
            | TileField::DeleteTimestamps
            | TileField::DeleteConditionIndex => {
                let (slot, name) = match field {
                    TileField::Timestamps => (FieldSlot::Timestamps, "__timestamps"),
                    TileField::DeleteTimestamps => {
                        (FieldSlot::DeleteTimestamps, "__delete_timestamps")
                    }
                    _ => (FieldSlot::DeleteConditionIndex, "__delete_condition_index"),
                };
                (
                    name.to_string(),
                    Datatype::Uint64,
                    1,
                    false,
                    &latest.coords_filters,
                    slot,
                )
            }
        };
        let Some(s) = meta.slot(slot) else {
            return Ok(None);
        };
        let fname = match slot {
            FieldSlot::Attribute(i) => fs.attributes[i].name.clone(),
            FieldSlot::Dimension(j) => fs.dimensions[j].name.clone(),
            _ => name.clone(),
        };
        let key = array.key();
        let v = meta.version;
        let paths = meta.files(slot, &fname);
        let var = cvn == VAR_NUM;
        // The sizes the fragment metadata records: an object store needs no HEAD request per
        // file (a damaged size makes reads past the real end fail, naming the object).
        let recorded = [
            meta.file_sizes.get(s).copied().unwrap_or(0),
            meta.file_var_sizes.get(s).copied().unwrap_or(0),
            meta.file_validity_sizes.get(s).copied().unwrap_or(0),
        ];
        let open = |k: usize| array.storage().open_file_sized(&paths[k], recorded[k]);
        let files = [
            Some(open(0)?),
            if var { Some(open(1)?) } else { None },
            if nullable { Some(open(2)?) } else { None },
        ];
        let ctx = |e: Error| e.context(format!("fragment {} field {name}", frag.name()));
        let offsets = [
            meta.list(s, ListKind::TileOffsets, key).map_err(ctx)?,
            if var {
                meta.list(s, ListKind::TileVarOffsets, key).map_err(ctx)?
            } else {
                &[]
            },
            if nullable {
                meta.list(s, ListKind::TileValidityOffsets, key)
                    .map_err(ctx)?
            } else {
                &[]
            },
        ];
        let var_sizes = if var {
            meta.list(s, ListKind::TileVarSizes, key).map_err(ctx)?
        } else {
            &[]
        };
        let n = meta.tile_num() as usize;
        for (k, o) in offsets.iter().enumerate() {
            let needed = k == 0 || (k == 1 && var) || (k == 2 && nullable);
            if needed && o.len() < n {
                return Err(ctx(Error::corrupt(format!(
                    "{} tile offsets listed for {n} tiles",
                    o.len()
                ))));
            }
        }
        let sizes = recorded;
        let mut lengths = [0u64; 3];
        for (k, f) in files.iter().enumerate() {
            if let Some(f) = f {
                lengths[k] = f.len();
            }
        }
        let reader = TileReader {
            frag,
            name,
            slot: s,
            datatype,
            cell_size: (!var).then(|| datatype.size() * cvn as usize),
            nullable,
            data: with_version(filters, v, key)?,
            offsets_pipeline: with_version(&latest.offsets_filters, v, key)?,
            validity: with_version(&latest.validity_filters, v, key)?,
            paths,
            files,
            offsets,
            var_sizes,
            sizes,
            lengths,
            local: array.storage().is_local(),
        };
        reader
            .check_claims()
            .map_err(|e| e.context(format!("fragment {} field {}", frag.name(), reader.name)))?;
        Ok(Some(reader))
    }

    /// Checks every tile's claimed contents against its stored bytes before anything is
    /// allocated for them: the cells of a tile (and a var tile's data size) cannot exceed
    /// what its filtered bytes expand to at the pipeline's largest ratio. Damaged fragment
    /// metadata claiming billions of cells is refused here instead of sizing a result.
    fn check_claims(&self) -> Result<()> {
        let ratio = |p: &Pipeline| crate::filters::reverse_max_ratio_of(p.filters());
        let (data_ratio, offsets_ratio, validity_ratio) = (
            ratio(&self.data),
            ratio(&self.offsets_pipeline),
            ratio(&self.validity),
        );
        // Chunk headers and filter metadata: a generous allowance per tile.
        let bound = |stored: u64, r: u64| stored.saturating_mul(r).saturating_add(1 << 16);
        // What tile i of `kind` really has on disk (the metadata's file size may be damaged).
        let stored = |i: u64, kind: TileKind| -> Result<u64> {
            let (_, off, size) = self.location(i, kind)?;
            Ok(size.min(self.lengths[kind as usize].saturating_sub(off)))
        };
        for i in 0..self.tile_num() {
            let cells = self.cell_num(i);
            let fixed = stored(i, TileKind::Fixed)?;
            let (claim, r) = match self.cell_size {
                Some(cs) => (cells.saturating_mul(cs as u64), data_ratio),
                None => (cells.saturating_mul(8), offsets_ratio),
            };
            if claim > bound(fixed, r) {
                return Err(Error::corrupt(format!(
                    "tile {i}: {cells} cells ({claim} bytes) cannot come from {fixed} stored bytes"
                )));
            }
            if self.cell_size.is_none()
                && let Some(size) = self.var_size(i)
            {
                let var = stored(i, TileKind::Var)?;
                if size > bound(var, data_ratio) {
                    return Err(Error::corrupt(format!(
                        "tile {i}: {size} bytes of var data cannot come from {var} stored bytes"
                    )));
                }
            }
            if self.nullable {
                let v = stored(i, TileKind::Validity)?;
                if cells > bound(v, validity_ratio) {
                    return Err(Error::corrupt(format!(
                        "tile {i}: {cells} validity values cannot come from {v} stored bytes"
                    )));
                }
            }
        }
        Ok(())
    }

    /// The fragment.
    pub fn fragment(&self) -> &'a Fragment {
        self.frag
    }

    /// The field's slot in the fragment metadata.
    pub fn slot(&self) -> usize {
        self.slot
    }

    /// Number of tiles.
    pub fn tile_num(&self) -> u64 {
        self.frag.meta.tile_num()
    }

    /// Cells in tile `i`.
    pub fn cell_num(&self, i: u64) -> u64 {
        self.frag.meta.cell_num_of_tile(i)
    }

    /// Whether the field is var-size.
    pub fn is_var(&self) -> bool {
        self.cell_size.is_none()
    }

    /// The file, byte offset and persisted size of tile `i` of `kind`.
    pub fn location(&self, i: u64, kind: TileKind) -> Result<(Uri, u64, u64)> {
        let k = kind as usize;
        if self.files[k].is_none() {
            return Err(Error::invalid(format!(
                "field {} has no {kind:?} tiles",
                self.name
            )));
        }
        let (off, size) = FragmentMetadata::tile_extent(self.offsets[k], i, self.sizes[k])?;
        Ok((self.paths[k].clone(), off, size))
    }

    /// The file of `kind` and its size recorded in the fragment metadata (`None` when the
    /// field has no such file).
    pub fn file_and_size(&self, kind: TileKind) -> Option<(Uri, u64)> {
        let k = kind as usize;
        self.files[k]
            .as_ref()
            .map(|_| (self.paths[k].clone(), self.sizes[k]))
    }

    /// Fetches the filtered bytes of `tiles` (every file of the field) ahead of decoding them:
    /// from an object store, in few merged ranged requests, many in flight; locally nothing
    /// happens (tiles are read with positioned reads as they are decoded).
    pub fn prefetch(&self, tiles: &[u64]) -> Result<()> {
        if self.local {
            return Ok(());
        }
        for kind in [TileKind::Fixed, TileKind::Var, TileKind::Validity] {
            let Some(file) = &self.files[kind as usize] else {
                continue;
            };
            let ranges = tiles
                .iter()
                .map(|&i| self.location(i, kind).map(|(_, off, size)| off..off + size))
                .collect::<Result<Vec<_>>>()?;
            file.prefetch(&ranges).map_err(|e| {
                e.context(format!("fragment {} field {}", self.frag.name(), self.name))
            })?;
        }
        Ok(())
    }

    /// The actual length of the file of `kind` (0 when the field has none).
    pub fn file_length(&self, kind: TileKind) -> u64 {
        self.lengths[kind as usize]
    }

    /// The filtered bytes of tile `i` of `kind` (a positioned read).
    pub fn read_filtered(&self, i: u64, kind: TileKind) -> Result<Vec<u8>> {
        self.with_filtered(i, kind, |b| Ok(b.to_vec()))
    }

    /// Calls `f` with the filtered bytes of tile `i` of `kind`: locally a positioned read into
    /// this thread's reusable buffer (no allocation or zero-filling per tile once the buffer
    /// has grown to the largest tile); from an object store the prefetched bytes (or one
    /// ranged request).
    pub fn with_filtered<R>(
        &self,
        i: u64,
        kind: TileKind,
        f: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R> {
        let (path, off, size) = self.location(i, kind)?;
        let file = self.files[kind as usize]
            .as_ref()
            .expect("checked by location");
        if off.saturating_add(size) > self.lengths[kind as usize] {
            return Err(Error::corrupt(format!(
                "{}: a {size}-byte tile at offset {off} is past the end of the {}-byte file",
                path.display(),
                self.lengths[kind as usize]
            )));
        }
        let size = usize::try_from(size).map_err(|_| Error::corrupt("tile size"))?;
        // Taken out of the thread-local slot while in use: a nested read on this thread (rayon
        // may run another tile's job while this one waits) finds it empty and allocates.
        let mut buf = READ_BUFFER.with(|b| b.take());
        let result = file.with_range(off, size, &mut buf, f);
        if buf.len() <= MAX_KEPT_READ_BUFFER {
            READ_BUFFER.with(|b| {
                let mut slot = b.take();
                if slot.len() < buf.len() {
                    slot = buf;
                }
                b.set(slot);
            });
        }
        result
    }

    fn ctx(&self, i: u64) -> impl Fn(Error) -> Error + '_ {
        move |e: Error| {
            e.context(format!(
                "fragment {} field {} tile {i}",
                self.frag.name(),
                self.name
            ))
        }
    }

    /// Unfilters fixed-size tile `i` into `out` (exactly `cell_num × cell_size` bytes).
    pub fn decode_fixed_into(&self, i: u64, out: &mut [u8]) -> Result<()> {
        let cell_size = self
            .cell_size
            .ok_or_else(|| Error::invalid("var-size field"))?;
        let n = self
            .with_filtered(i, TileKind::Fixed, |filtered| {
                self.data
                    .unfilter_tile_into(filtered, self.datatype, cell_size as u64, out)
            })
            .map_err(|e| match e {
                Error::BufferTooSmall { needed, .. } => Error::corrupt(format!(
                    "the tile unfilters to {needed} bytes, {} expected",
                    out.len()
                )),
                e => e,
            })
            .map_err(self.ctx(i))?;
        if n != out.len() {
            return Err(self.ctx(i)(Error::corrupt(format!(
                "the tile unfilters to {n} bytes, {} expected",
                out.len()
            ))));
        }
        Ok(())
    }

    /// Unfilters the validity tile `i` into `out` (one byte per cell).
    pub fn decode_validity_into(&self, i: u64, out: &mut [u8]) -> Result<()> {
        let n = self
            .with_filtered(i, TileKind::Validity, |filtered| {
                self.validity.unfilter_validity_tile_into(
                    filtered,
                    self.datatype,
                    self.frag.meta.dense,
                    out,
                )
            })
            .map_err(self.ctx(i))?;
        if n != out.len() {
            return Err(self.ctx(i)(Error::corrupt(format!(
                "the validity tile unfilters to {n} bytes, {} expected",
                out.len()
            ))));
        }
        Ok(())
    }

    /// Unfilters var-size tile `i`: (offsets, data).
    pub fn decode_var(&self, i: u64) -> Result<(Vec<u64>, Vec<u8>)> {
        let ctx = self.ctx(i);
        let fo = self.read_filtered(i, TileKind::Fixed).map_err(&ctx)?;
        let fd = self.read_filtered(i, TileKind::Var).map_err(&ctx)?;
        let tile = self
            .data
            .unfilter_var(&self.offsets_pipeline, &fo, &fd, self.datatype)
            .map_err(&ctx)?;
        let cells = self.cell_num(i);
        let offsets = tile.offsets().unwrap_or(&[]).to_vec();
        if offsets.len() as u64 != cells {
            return Err(ctx(Error::corrupt(format!(
                "{} offsets for {cells} cells",
                offsets.len()
            ))));
        }
        if let Some(&want) = self.var_sizes.get(i as usize)
            && want != tile.data().len() as u64
        {
            return Err(ctx(Error::corrupt(format!(
                "the var tile unfilters to {} bytes, the metadata says {want}",
                tile.data().len()
            ))));
        }
        Ok((offsets, tile.into_data()))
    }

    /// The unfiltered size of var-size tile `i`'s data as the fragment metadata records it.
    pub fn var_size(&self, i: u64) -> Option<u64> {
        self.var_sizes.get(i as usize).copied()
    }

    /// Decodes tile `i`: data (and offsets), validity when nullable.
    pub fn decode(&self, i: u64) -> Result<DecodedTile> {
        self.decode_some(i, None).map(|(t, _)| t)
    }

    /// Decodes the cells `runs` (cell ranges of tile `i`) of tile `i`: for a fixed-size field
    /// only the filter chunks holding them are unfiltered (data and validity), every other
    /// cell reads as zero and means nothing; a var-size field's tile is decoded whole.
    /// Returns the tile and the bytes unfiltered (offsets counted 8 bytes each).
    pub fn decode_cells(&self, i: u64, runs: &[Range<u64>]) -> Result<(DecodedTile, u64)> {
        let cells = self.cell_num(i);
        if let Some(r) = runs.iter().find(|r| r.start > r.end || r.end > cells) {
            return Err(self.ctx(i)(Error::invalid(format!(
                "cells {}..{} are not within the tile's {cells} cells",
                r.start, r.end
            ))));
        }
        self.decode_some(i, Some(runs))
    }

    /// Decodes tile `i`, of a fixed-size field only the chunks holding `runs` (all of it
    /// without); with the bytes unfiltered.
    fn decode_some(&self, i: u64, runs: Option<&[Range<u64>]>) -> Result<(DecodedTile, u64)> {
        let cells = self.cell_num(i);
        let n = usize::try_from(cells).map_err(|_| Error::corrupt("cell count"))?;
        // The byte ranges of `runs` for a field of `size` bytes per cell (the whole tile
        // without runs).
        let wanted = |size: usize| -> Vec<Range<usize>> {
            match runs {
                Some(rs) => rs
                    .iter()
                    .map(|r| r.start as usize * size..r.end as usize * size)
                    .collect(),
                None => std::iter::once(0..n * size).collect(),
            }
        };
        let mut bytes = 0u64;
        let (data, offsets) = match self.cell_size {
            Some(cs) => {
                let len = n
                    .checked_mul(cs)
                    .ok_or_else(|| Error::corrupt("tile size overflows"))?;
                let (data, done) = self
                    .with_filtered(i, TileKind::Fixed, |filtered| {
                        self.data.unfilter_tile_ranges(
                            filtered,
                            self.datatype,
                            cs as u64,
                            len,
                            &wanted(cs),
                        )
                    })
                    .map_err(self.ctx(i))?;
                if data.len() != len {
                    return Err(self.ctx(i)(Error::corrupt(format!(
                        "the tile unfilters to {} bytes, {len} expected",
                        data.len()
                    ))));
                }
                bytes += done as u64;
                (data, None)
            }
            None => {
                let (o, d) = self.decode_var(i)?;
                bytes += (d.len() + 8 * o.len()) as u64;
                (d, Some(o))
            }
        };
        let validity = if self.nullable {
            let (v, done) = self
                .with_filtered(i, TileKind::Validity, |filtered| {
                    self.validity.unfilter_validity_tile_ranges(
                        filtered,
                        self.datatype,
                        self.frag.meta.dense,
                        n,
                        &wanted(1),
                    )
                })
                .map_err(self.ctx(i))?;
            if v.len() != n {
                return Err(self.ctx(i)(Error::corrupt(format!(
                    "the validity tile unfilters to {} bytes, {n} expected",
                    v.len()
                ))));
            }
            bytes += done as u64;
            Some(v)
        } else {
            None
        };
        let tile = DecodedTile {
            data,
            offsets,
            validity,
            cells,
        };
        Ok((tile, bytes))
    }

    /// Decodes a u64 field's tile (timestamps) as values.
    pub fn decode_u64(&self, i: u64) -> Result<Vec<u64>> {
        let t = self.decode(i)?;
        Ok(t.data
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect())
    }
}
