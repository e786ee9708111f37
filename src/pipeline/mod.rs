//! A filter pipeline: ordered filters plus the settings that drive filtering, and the
//! tile-level filter/unfilter entry points (chunking, threads, the chunk table). Section
//! numbers (§) in this folder are those of docs/FORMAT.md.

mod forward;
pub mod generic_tile;
mod outer_digest;
mod reverse;
mod serialize;
pub mod spec;

pub use crate::engine::threads::{
    Executor, ExecutorHandle, MAX_THREADS, check_threads, pools_built,
};
pub use crate::format::format_version::FORMAT_VERSION;

use crate::engine::encryption_key::EncryptionKey;
use crate::engine::threads;
use crate::engine::tile::Tile;
use crate::error::{Error, Result};
use crate::filters;
use crate::filters::config::Filter;
use crate::format::chunking;
use crate::format::datatype::Datatype;
use crate::format::filter_type::FilterType;
use crate::format::format_version;
use crate::mem;
use std::sync::Arc;

/// The settings every chunk needs, fixed for one tile.
#[derive(Clone, Copy)]
pub(crate) struct ChunkSettings<'a> {
    pub filters: &'a [Filter],
    /// Filter data type of each stage (§4.8).
    pub types: &'a [Datatype],
    pub cell_size: u64,
    pub version: u32,
    pub skip_checksum_validation: bool,
    /// Forward, var-string path: the tile's cell offsets, handed to every stage (§5.8).
    pub offsets: Option<&'a [u64]>,
    /// Reverse, var-string path: the first filter rebuilds the offsets from the data.
    pub rebuild_offsets: bool,
    /// The AES-256-GCM cipher when an encryption key is set.
    pub cipher: Option<&'a aes_gcm::Aes256Gcm>,
    /// Write GZIP with zlib (TileDB's exact bytes) instead of libdeflate.
    pub gzip_identical: bool,
    /// The host's executor for chunk jobs, instead of the shared pools.
    pub executor: Option<&'a ExecutorHandle>,
    /// The most bytes one unfilter call may allocate for its output (None: no limit).
    pub memory_limit: Option<u64>,
}

/// An ordered list of filters with TileDB's pipeline settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Pipeline {
    filters: Vec<Filter>,
    max_chunk_size: u32,
    threads: usize,
    skip_checksum_validation: bool,
    format_version: u32,
    encryption_key: Option<EncryptionKey>,
    gzip_identical: bool,
    executor: Option<ExecutorHandle>,
    memory_limit: Option<u64>,
}

impl Default for Pipeline {
    fn default() -> Self {
        Pipeline::new()
    }
}

impl Pipeline {
    /// An empty pipeline: no filters, `max_chunk_size` 65536, all cores, format version 22.
    pub fn new() -> Pipeline {
        Pipeline {
            filters: Vec::new(),
            max_chunk_size: chunking::CHUNK_SIZE as u32,
            threads: 0,
            skip_checksum_validation: false,
            format_version: FORMAT_VERSION,
            encryption_key: None,
            gzip_identical: true,
            executor: None,
            memory_limit: None,
        }
    }

    /// Appends a filter of type `t` with default options.
    pub fn add_filter(&mut self, t: FilterType) -> Result<()> {
        self.push(Filter::new(t))
    }

    /// Appends a configured filter. The internal AES filter is refused with `InvalidArgument`:
    /// set an encryption key instead.
    pub fn push(&mut self, filter: Filter) -> Result<()> {
        check_filter(&filter)?;
        self.filters.push(filter);
        Ok(())
    }

    /// The filters in forward order.
    pub fn filters(&self) -> &[Filter] {
        &self.filters
    }

    /// The filter at `index`.
    pub fn filter(&self, index: usize) -> Result<&Filter> {
        let n = self.filters.len();
        self.filters.get(index).ok_or_else(|| {
            Error::invalid(format!(
                "filter index {index} out of range (pipeline has {n} filters)"
            ))
        })
    }

    /// The filter at `index`, for setting options.
    pub fn filter_mut(&mut self, index: usize) -> Result<&mut Filter> {
        let n = self.filters.len();
        self.filters.get_mut(index).ok_or_else(|| {
            Error::invalid(format!(
                "filter index {index} out of range (pipeline has {n} filters)"
            ))
        })
    }

    /// The stored `max_chunk_size`; on write only 0 matters (0 = the whole tile is one chunk).
    pub fn max_chunk_size(&self) -> u32 {
        self.max_chunk_size
    }

    /// Sets `max_chunk_size` (stored and serialized as given).
    pub fn set_max_chunk_size(&mut self, size: u32) {
        self.max_chunk_size = size;
    }

    /// Threads used per tile (0 = all cores).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Sets the threads used per tile (0 = all cores).
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads;
    }

    /// Runs the chunk jobs of every tile on `executor` (the host's threads) instead of
    /// tdbfilter's own pool; `None` goes back to the pool. The thread count still decides how
    /// many jobs a tile is split into. Results are the same either way.
    pub fn set_executor(&mut self, executor: Option<Arc<dyn Executor>>) {
        self.executor = executor.map(ExecutorHandle);
    }

    /// Limits the output one unfilter call may allocate to `limit` bytes (`None`: no limit
    /// beyond the format's own bounds). A tile that would need more fails with
    /// `OutOfMemory` naming the size and the limit, before anything is allocated.
    pub fn set_memory_limit(&mut self, limit: Option<u64>) {
        self.memory_limit = limit;
    }

    /// The memory limit of unfilter calls, if any.
    pub fn memory_limit(&self) -> Option<u64> {
        self.memory_limit
    }

    /// Whether the pipeline runs its chunk jobs on a host executor.
    pub fn has_executor(&self) -> bool {
        self.executor.is_some()
    }

    /// Whether checksum filters skip verification on read.
    pub fn skip_checksum_validation(&self) -> bool {
        self.skip_checksum_validation
    }

    /// Sets whether checksum filters skip verification on read.
    pub fn set_skip_checksum_validation(&mut self, skip: bool) {
        self.skip_checksum_validation = skip;
    }

    /// Chooses GZIP's writer: `true` (the default) = the bytes of zlib 1.3.1 called as TileDB
    /// calls it (from the zlib-identical deflate in `codecs::deflate`), so every byte equals
    /// TileDB's; `false` = libdeflate, faster still, valid zlib streams TileDB reads, but
    /// sometimes a few percent larger. Reading is the same either way.
    pub fn set_gzip_identical(&mut self, identical: bool) {
        self.gzip_identical = identical;
    }

    /// Whether GZIP writes TileDB's exact bytes (zlib) rather than libdeflate's.
    pub fn gzip_identical(&self) -> bool {
        self.gzip_identical
    }

    /// Sets the AES-256-GCM key (32 bytes). As in TileDB, the encryption filter is then
    /// appended at run time to every filter and unfilter call and is never serialized.
    pub fn set_encryption_key(&mut self, key: &[u8]) -> Result<()> {
        self.encryption_key = Some(EncryptionKey::new(key)?);
        Ok(())
    }

    /// Removes the encryption key (its bytes are zeroed).
    pub fn clear_encryption_key(&mut self) {
        self.encryption_key = None;
    }

    /// Whether an encryption key is set.
    pub fn has_encryption_key(&self) -> bool {
        self.encryption_key.is_some()
    }

    /// The filters that run: the stored ones, plus the AES filter when a key is set and the
    /// pipeline does not already end with it (generic-tile pipelines store it).
    fn run_filters(&self) -> std::borrow::Cow<'_, [Filter]> {
        if self.encryption_key.is_some() && self.filters.last() != Some(&Filter::Aes256Gcm) {
            let mut v = self.filters.clone();
            v.push(Filter::Aes256Gcm);
            std::borrow::Cow::Owned(v)
        } else {
            std::borrow::Cow::Borrowed(&self.filters)
        }
    }

    /// The format version of the tiles this pipeline reads and writes: the version it was
    /// deserialized with, else 22 (TileDB 2.30). It decides the per-stage datatypes (§4.8:
    /// chained from version 20 on, the tile's datatype at every stage before), the var-size
    /// string handling of RLE/DICTIONARY, and what BIT_WIDTH_REDUCTION and POSITIVE_DELTA do
    /// with date/time types.
    pub fn format_version(&self) -> u32 {
        self.format_version
    }

    /// Sets the format version of the tiles this pipeline reads and writes (1 to 23); for a
    /// fragment of an older TileDB, its version (the suffix of the fragment's name). The
    /// serialized form does not change (it always has the layout of version 22).
    pub fn set_format_version(&mut self, version: u32) -> Result<()> {
        serialize::check_version(version)?;
        self.format_version = version;
        Ok(())
    }

    /// The filter data type of every stored filter's stage for a tile of `base` type (§4.8),
    /// under this pipeline's format version.
    pub fn stage_datatypes(&self, base: Datatype) -> Vec<Datatype> {
        stage_datatypes(&self.filters, base, self.format_version)
    }

    fn settings<'a>(
        &'a self,
        filters: &'a [Filter],
        types: &'a [Datatype],
        cell_size: u64,
    ) -> ChunkSettings<'a> {
        ChunkSettings {
            filters,
            types,
            cell_size,
            version: self.format_version,
            skip_checksum_validation: self.skip_checksum_validation,
            offsets: None,
            rebuild_offsets: false,
            cipher: self.encryption_key.as_ref().map(|k| k.cipher()),
            gzip_identical: self.gzip_identical,
            executor: self.executor.as_ref(),
            memory_limit: self.memory_limit,
        }
    }

    /// The filter data type of each stage of `filters` for a tile of `base` type.
    fn types_of(&self, filters: &[Filter], base: Datatype) -> Vec<Datatype> {
        stage_datatypes(filters, base, self.format_version)
    }

    fn has(&self, t: FilterType) -> bool {
        self.filters.iter().any(|f| f.filter_type() == t)
    }

    /// TileDB's `skip_offsets_filtering`: var-size STRING_ASCII/UTF8 data through RLE or
    /// DICTIONARY carries its offsets inside the data tile, and the offsets tile is the 8-byte
    /// empty marker (§5.8, §7.1). Depends on the format version.
    pub fn skips_offsets(&self, datatype: Datatype) -> bool {
        let v = self.format_version;
        let (ascii, utf8) = (
            datatype == Datatype::StringAscii,
            datatype == Datatype::StringUtf8,
        );
        (self.has(FilterType::Rle) && ((v >= 12 && ascii) || (v >= 17 && utf8)))
            || (self.has(FilterType::Dictionary) && ((v >= 13 && ascii) || (v >= 17 && utf8)))
    }

    /// A STRING_UTF8 tile of format version 12–16 whose offsets are folded into the data
    /// although its version says otherwise: TileDB 2.14 gated UTF8 like ASCII (RLE from 12,
    /// DICTIONARY from 13) and wrote fragments of older arrays with their versions; 2.15 moved
    /// the gate to 17. The offsets tile is then the 8-byte empty marker, which a normally
    /// filtered offsets tile (at least one cell, so at least one chunk) never is.
    fn folded_by_2_14(&self, datatype: Datatype, filtered_offsets: &[u8]) -> bool {
        let v = self.format_version;
        datatype == Datatype::StringUtf8
            && (12..17).contains(&v)
            && (self.has(FilterType::Rle) || (v >= 13 && self.has(FilterType::Dictionary)))
            && filtered_offsets == [0u8; 8]
    }

    /// TileDB's `use_tile_chunking` (§4.4) for a tile of `datatype`, var-size or not.
    fn uses_tile_chunking(&self, is_var: bool, datatype: Datatype) -> bool {
        if self.max_chunk_size == 0 {
            return false;
        }
        let v = self.format_version;
        if is_var && filters::is_var_string_type(datatype) {
            return !((v >= 12 && self.has(FilterType::Rle))
                || (v >= 13 && self.has(FilterType::Dictionary)));
        }
        !self.has(FilterType::Webp)
    }

    /// TileDB's schema-time type checks (`check_filter_types`) for a tile of `base` type:
    /// what TileDB refuses when a schema is created is refused here before writing.
    pub fn check_types(&self, base: Datatype, is_var: bool) -> Result<()> {
        if is_var && filters::is_var_string_type(base) && self.filters.len() > 1 {
            for t in [FilterType::Rle, FilterType::Dictionary] {
                if self.has(t) && self.filters[0].filter_type() != t {
                    return Err(Error::Unsupported(format!(
                        "{} must be the first filter when used on a variable length string attribute",
                        t.name()
                    )));
                }
            }
        }
        if let Some(i) = self
            .filters
            .iter()
            .position(|f| f.filter_type() == FilterType::Webp)
            && i != 0
        {
            return Err(Error::Unsupported(format!(
                "WEBP must be the first filter (it is filter {i}): TileDB decodes it straight into the tile"
            )));
        }
        if self.format_version < format_version::CHAINED_STAGE_TYPES_VERSION {
            // TileDB before 2.17 had no schema-time type checks: BIT_WIDTH_REDUCTION and
            // POSITIVE_DELTA passed other types through, and the filters that cannot handle a
            // type fail on their own while filtering, here as there.
            return Ok(());
        }
        let types = self.stage_datatypes(base);
        for (i, (f, &t)) in self.filters.iter().zip(&types).enumerate() {
            if let Some(why) = rejects_input(f, t) {
                return Err(Error::Unsupported(format!(
                    "filter {i} ({}) does not accept input type {t}: {why}",
                    f.name()
                )));
            }
        }
        Ok(())
    }

    /// Filters a fixed-size tile into TileDB's filtered tile bytes (§4.1). Also used for
    /// offsets tiles (UINT64, cell size 8) and validity tiles (UINT8, cell size 1).
    pub fn filter_tile(&self, tile: &Tile) -> Result<Vec<u8>> {
        let n = tile.data().len();
        let mut out = Vec::with_capacity(8 + n + n / 8 + 64 * (n / 32768 + 2));
        self.filter_fixed(tile, &mut out)?;
        Ok(out)
    }

    /// Filters a fixed-size tile into a caller's buffer; returns the bytes written. A buffer of
    /// [`Pipeline::filtered_size_bound`] bytes always suffices; a smaller one that turns out too
    /// small gives `BufferTooSmall` (with that bound as the needed size).
    pub fn filter_tile_into(&self, tile: &Tile, out: &mut [u8]) -> Result<usize> {
        if tile.offsets().is_some() {
            return Err(Error::invalid(
                "tile is var-size: filter it with a data and an offsets pipeline",
            ));
        }
        self.filter_cells_into(tile.datatype(), tile.cell_size(), tile.data(), out)
    }

    /// [`Pipeline::filter_tile_into`] of fixed-size cells of `datatype` (`cell_size` bytes
    /// each) borrowed from the caller, without first copying them into a [`Tile`].
    pub fn filter_cells_into(
        &self,
        datatype: Datatype,
        cell_size: u64,
        data: &[u8],
        out: &mut [u8],
    ) -> Result<usize> {
        crate::engine::tile::check_cell_size(datatype, cell_size)?;
        if !(data.len() as u64).is_multiple_of(cell_size) {
            return Err(Error::invalid(format!(
                "{} bytes is not a whole number of {cell_size}-byte cells",
                data.len()
            )));
        }
        let mut sink = forward::SliceSink {
            buf: out,
            pos: 0,
            bound: self.filtered_size_bound(data.len()),
        };
        self.filter_cells(datatype, cell_size, data, &mut sink)?;
        Ok(sink.pos)
    }

    /// An upper bound on the filtered size of a fixed-size tile of `size` bytes, whatever its
    /// datatype and contents.
    pub fn filtered_size_bound(&self, size: usize) -> usize {
        // Every chunk but the last holds at least 32769 bytes (§4.3).
        let chunks = size / 32769 + 2;
        let per_chunk_slack = self
            .run_filters()
            .iter()
            .fold(0usize, |acc, f| filters::fixed_tile_bound(f, acc));
        let body = self
            .run_filters()
            .iter()
            .fold(size, |acc, f| filters::fixed_tile_bound(f, acc));
        8usize
            .saturating_add(chunks.saturating_mul(12 + per_chunk_slack))
            .saturating_add(body)
    }

    fn filter_fixed(&self, tile: &Tile, out: &mut impl forward::ChunkSink) -> Result<()> {
        if tile.offsets().is_some() {
            return Err(Error::invalid(
                "tile is var-size: filter it with a data and an offsets pipeline",
            ));
        }
        self.filter_cells(tile.datatype(), tile.cell_size(), tile.data(), out)
    }

    /// Filters fixed-size cells (checked by the caller) into `out`.
    fn filter_cells(
        &self,
        datatype: Datatype,
        cell_size: u64,
        data: &[u8],
        out: &mut impl forward::ChunkSink,
    ) -> Result<()> {
        self.check_types(datatype, false)?;
        let chunking = self.uses_tile_chunking(false, datatype);
        let chunks = chunking::fixed_chunks(data.len(), cell_size, chunking)?;
        let run = self.run_filters();
        let types = self.types_of(&run, datatype);
        forward::filter_chunks(
            &self.settings(&run, &types, cell_size),
            data,
            &chunks,
            threads::effective_threads(self.threads),
            out,
        )
    }

    /// Unfilters one filtered tile into a caller's buffer; returns the bytes written (the sum of
    /// the chunks' original lengths). A buffer that is too small gives `BufferTooSmall` with the
    /// exact size needed, before any decoding.
    pub fn unfilter_tile_into(
        &self,
        filtered: &[u8],
        datatype: Datatype,
        cell_size: u64,
        out: &mut [u8],
    ) -> Result<usize> {
        crate::engine::tile::check_cell_size(datatype, cell_size)?;
        self.unfilter_as_into(filtered, datatype, cell_size, out)
    }

    /// Unfilters a nullable attribute's validity tile (one byte per cell) of a fragment of
    /// this pipeline's format version (set it first) into a caller's buffer; returns the
    /// bytes written. `attribute` is the attribute's datatype and `dense` whether the fragment
    /// is dense: dense fragments of versions 9–14 (TileDB 2.3–2.10) were filtered as the
    /// attribute's datatype, everything else as UINT8
    /// ([`format_version::validity_filter_datatype`]). A buffer that is too small gives
    /// `BufferTooSmall` with the exact size needed.
    pub fn unfilter_validity_tile_into(
        &self,
        filtered: &[u8],
        attribute: Datatype,
        dense: bool,
        out: &mut [u8],
    ) -> Result<usize> {
        self.unfilter_as_into(filtered, self.validity_base(attribute, dense), 1, out)
            .map_err(|e| e.context("validity tile"))
    }

    /// Unfilters a validity tile as [`Pipeline::unfilter_validity_tile_into`] does, into a new
    /// UINT8 tile.
    pub fn unfilter_validity_tile(
        &self,
        filtered: &[u8],
        attribute: Datatype,
        dense: bool,
    ) -> Result<Tile> {
        let data = self
            .unfilter_as(filtered, self.validity_base(attribute, dense), 1)
            .map_err(|e| e.context("validity tile"))?;
        Tile::new(Datatype::Uint8, 1, data)
    }

    /// Unfilters only the chunks of a filtered tile that hold a byte of `wanted` (byte ranges
    /// of the unfiltered tile, in any order, each within it) into a new buffer of the whole
    /// unfiltered size, which must be `size` (a corrupt-data error before anything is
    /// allocated otherwise): the bytes of the other chunks are zero. Returns the buffer and
    /// the bytes unfiltered. Every filter reverses each chunk on its own (§4.7), so the bytes of
    /// the chunks unfiltered equal those of [`Pipeline::unfilter_tile`]; a checksum filter
    /// verifies only those chunks. For a fixed-size tile, cell `c` is bytes
    /// `c * cell_size..(c + 1) * cell_size`.
    pub fn unfilter_tile_ranges(
        &self,
        filtered: &[u8],
        datatype: Datatype,
        cell_size: u64,
        size: usize,
        wanted: &[std::ops::Range<usize>],
    ) -> Result<(Vec<u8>, usize)> {
        crate::engine::tile::check_cell_size(datatype, cell_size)?;
        self.unfilter_ranges_as(filtered, datatype, cell_size, size, wanted)
    }

    /// [`Pipeline::unfilter_tile_ranges`] for a validity tile (one byte per cell; `attribute`
    /// and `dense` as for [`Pipeline::unfilter_validity_tile_into`]).
    pub fn unfilter_validity_tile_ranges(
        &self,
        filtered: &[u8],
        attribute: Datatype,
        dense: bool,
        size: usize,
        wanted: &[std::ops::Range<usize>],
    ) -> Result<(Vec<u8>, usize)> {
        self.unfilter_ranges_as(
            filtered,
            self.validity_base(attribute, dense),
            1,
            size,
            wanted,
        )
        .map_err(|e| e.context("validity tile"))
    }

    fn unfilter_ranges_as(
        &self,
        filtered: &[u8],
        base: Datatype,
        cell_size: u64,
        size: usize,
        wanted: &[std::ops::Range<usize>],
    ) -> Result<(Vec<u8>, usize)> {
        let run = self.run_filters();
        let types = self.types_of(&run, base);
        let settings = self.settings(&run, &types, cell_size);
        let (chunks, total) = reverse::parse_tile(&settings, filtered)?;
        if total != size {
            return Err(Error::corrupt(format!(
                "the tile unfilters to {total} bytes, {size} expected"
            )));
        }
        if let Some(limit) = self.memory_limit
            && total as u64 > limit
        {
            return Err(Error::OutOfMemory(format!(
                "unfiltering the tile needs {total} bytes, over the memory limit of {limit} bytes"
            )));
        }
        // Chunk k's window starts at starts[k] (starts[n] = total).
        let mut starts = Vec::with_capacity(chunks.len() + 1);
        let mut at = 0usize;
        starts.push(0);
        for c in &chunks {
            at += c.original_length as usize;
            starts.push(at);
        }
        let mut flags = vec![false; chunks.len()];
        for r in wanted {
            if r.start > r.end || r.end > total {
                return Err(Error::invalid(format!(
                    "byte range {}..{} is not within the {total}-byte tile",
                    r.start, r.end
                )));
            }
            if r.is_empty() {
                continue;
            }
            // The last chunk starting at or before r.start, then every chunk starting before
            // r.end (empty chunks included: they cost nothing).
            let mut k = starts.partition_point(|&s| s <= r.start) - 1;
            while k < chunks.len() && starts[k] < r.end {
                flags[k] = true;
                k += 1;
            }
        }
        let threads = threads::effective_threads(self.threads);
        let mut out = Vec::new();
        out.try_reserve_exact(total).map_err(|_| {
            Error::OutOfMemory(format!(
                "cannot allocate {total} bytes for the unfiltered tile"
            ))
        })?;
        let unfiltered = if flags.iter().all(|f| *f) {
            mem::fill_range(&mut out, 0, total, |buf| {
                reverse::unfilter_chunks_into(&settings, &chunks, threads, buf)
            })?;
            total
        } else {
            mem::fill_range(&mut out, 0, total, |buf| {
                reverse::unfilter_some_chunks_into(&settings, &chunks, &flags, threads, buf)
            })?
        };
        Ok((out, unfiltered))
    }

    fn validity_base(&self, attribute: Datatype, dense: bool) -> Datatype {
        format_version::validity_filter_datatype(self.format_version, dense, attribute)
    }

    /// Unfilters with `base` as the pipeline's base type and `cell_size` for chunking, without
    /// checking that the cell size fits the base type (validity tiles of old dense fragments).
    fn unfilter_as_into(
        &self,
        filtered: &[u8],
        base: Datatype,
        cell_size: u64,
        out: &mut [u8],
    ) -> Result<usize> {
        let run = self.run_filters();
        let types = self.types_of(&run, base);
        let settings = self.settings(&run, &types, cell_size);
        let (chunks, total) = reverse::parse_tile(&settings, filtered)?;
        if total > out.len() {
            return Err(Error::BufferTooSmall {
                needed: total,
                message: format!(
                    "the tile unfilters to {total} bytes, the buffer holds {}",
                    out.len()
                ),
            });
        }
        reverse::unfilter_chunks_into(
            &settings,
            &chunks,
            threads::effective_threads(self.threads),
            &mut crate::mem::OutBuf::from_init(&mut out[..total]),
        )?;
        Ok(total)
    }

    /// Filters a var-size tile: returns (filtered offsets tile, filtered data tile). The data
    /// goes through this pipeline, the offsets through `offsets_pipeline` (TileDB's schema
    /// offsets pipeline, default [ZSTD]); with RLE or DICTIONARY on strings the offsets are
    /// folded into the data and the offsets tile is the 8-byte empty marker (§5.8, §7.1).
    pub fn filter_var(
        &self,
        offsets_pipeline: &Pipeline,
        tile: &Tile,
    ) -> Result<(Vec<u8>, Vec<u8>)> {
        let offsets = tile
            .offsets()
            .ok_or_else(|| Error::invalid("tile is not var-size"))?;
        let dt = tile.datatype();
        self.check_types(dt, true)?;
        let run = self.run_filters();
        let types = self.types_of(&run, dt);
        let cell_size = dt.size() as u64;
        let mut settings = self.settings(&run, &types, cell_size);
        let skip = self.skips_offsets(dt);
        let chunking = self.uses_tile_chunking(true, dt);
        let mut chunks = chunking::var_chunks(tile.data().len(), cell_size, offsets, chunking)?;
        if skip {
            settings.offsets = Some(offsets);
        }
        if !self.filters.iter().all(filters::encodes_empty_part) {
            // TileDB would write an unreadable empty chunk here (the trailing one of §4.5, or
            // the only one of an all-empty tile); TileDB reads any chunk split, including
            // zero chunks, so leave it out.
            chunks.retain(|c| !c.is_empty());
        }
        let threads = threads::effective_threads(self.threads);
        let mut data = Vec::with_capacity(tile.data().len() + 64 * chunks.len() + 8);
        forward::filter_chunks(&settings, tile.data(), &chunks, threads, &mut data)?;
        let offsets_tile = if skip {
            0u64.to_le_bytes().to_vec()
        } else {
            let bytes: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
            offsets_pipeline
                .filter_tile(&Tile::new(Datatype::Uint64, 8, bytes)?)
                .map_err(|e| e.context("offsets tile"))?
        };
        Ok((offsets_tile, data))
    }

    /// Unfilters a var-size tile from its filtered offsets and data tiles.
    pub fn unfilter_var(
        &self,
        offsets_pipeline: &Pipeline,
        filtered_offsets: &[u8],
        filtered_data: &[u8],
        datatype: Datatype,
    ) -> Result<Tile> {
        let run = self.run_filters();
        let types = self.types_of(&run, datatype);
        let cell_size = datatype.size() as u64;
        let mut settings = self.settings(&run, &types, cell_size);
        let threads = threads::effective_threads(self.threads);
        if self.skips_offsets(datatype) || self.folded_by_2_14(datatype, filtered_offsets) {
            // The offsets tile is only a marker; the offsets come from the data tile.
            let marker = crate::format::tile_format::parse(filtered_offsets)
                .map_err(|e| e.context("offsets tile"))?;
            if marker.tile_size != filtered_offsets.len() {
                return Err(Error::corrupt(
                    "offsets tile: bytes follow the filtered tile",
                ));
            }
            settings.rebuild_offsets = true;
            let (data, offsets) = reverse::unfilter_chunks(&settings, filtered_data, threads)?;
            let offsets = offsets.unwrap_or_default();
            crate::engine::tile::check_offsets(&offsets, data.len())
                .map_err(|m| Error::corrupt(format!("rebuilt offsets: {m}")))?;
            return Tile::new_var(datatype, offsets, data);
        }
        let offsets_tile = offsets_pipeline
            .unfilter_tile(filtered_offsets, Datatype::Uint64, 8)
            .map_err(|e| e.context("offsets tile"))?;
        if offsets_tile.data().len() % 8 != 0 {
            return Err(Error::corrupt(format!(
                "offsets tile: {} bytes is not a whole number of u64 offsets",
                offsets_tile.data().len()
            )));
        }
        let offsets: Vec<u64> = offsets_tile
            .data()
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let (data, _) = reverse::unfilter_chunks(&settings, filtered_data, threads)?;
        crate::engine::tile::check_offsets(&offsets, data.len())
            .map_err(|m| Error::corrupt(format!("offsets tile: {m}")))?;
        Tile::new_var(datatype, offsets, data)
    }

    /// Unfilters TileDB's filtered tile bytes (exactly one tile) of `datatype` cells of
    /// `cell_size` bytes. The result is as long as the sum of the chunks' original lengths.
    pub fn unfilter_tile(
        &self,
        filtered: &[u8],
        datatype: Datatype,
        cell_size: u64,
    ) -> Result<Tile> {
        crate::engine::tile::check_cell_size(datatype, cell_size)?;
        let data = self.unfilter_as(filtered, datatype, cell_size)?;
        Tile::new(datatype, cell_size, data)
    }

    /// Unfilters into a new buffer with `base` as the pipeline's base type (see
    /// [`Pipeline::unfilter_as_into`]).
    fn unfilter_as(&self, filtered: &[u8], base: Datatype, cell_size: u64) -> Result<Vec<u8>> {
        let run = self.run_filters();
        let types = self.types_of(&run, base);
        let (data, _) = reverse::unfilter_chunks(
            &self.settings(&run, &types, cell_size),
            filtered,
            threads::effective_threads(self.threads),
        )?;
        Ok(data)
    }
}

/// Why filter `f` does not accept input of type `t` (TileDB's `accepts_input_datatype`).
fn rejects_input(f: &Filter, t: Datatype) -> Option<&'static str> {
    use crate::format::filter_type::Compressor;
    match f {
        Filter::Compression(c)
            if matches!(c.compressor, Compressor::Delta | Compressor::DoubleDelta) =>
        {
            let e = if c.reinterpret == Datatype::Any {
                t
            } else {
                c.reinterpret
            };
            if e.is_real() {
                Some(
                    "delta filters do not accept floating-point types (set an integer reinterpret datatype)",
                )
            } else if c.reinterpret != Datatype::Any
                && !t.size().is_multiple_of(c.reinterpret.size())
            {
                Some("the reinterpret datatype's size does not divide the input type's size")
            } else {
                None
            }
        }
        Filter::BitWidthReduction { .. } | Filter::PositiveDelta { .. } => {
            if t.is_integer() || t.is_datetime() || t.is_time() || t.is_byte() {
                None
            } else {
                Some("only integer, date/time and byte types are accepted")
            }
        }
        Filter::ScaleFloat(_) if !matches!(t.size(), 4 | 8) => {
            Some("the type size must be 4 or 8 bytes")
        }
        Filter::Xor if !matches!(t.size(), 1 | 2 | 4 | 8) => {
            Some("the type size must be 1, 2, 4 or 8")
        }
        Filter::Webp(_) if t != Datatype::Uint8 => Some("WEBP only accepts UINT8"),
        _ => None,
    }
}

/// Refuses the internal AES-256-GCM filter, which a pipeline gets only from its key.
fn check_filter(filter: &Filter) -> Result<()> {
    let t = filter.filter_type();
    if t == FilterType::Aes256Gcm {
        return Err(Error::invalid(
            "AES_256_GCM is TileDB's internal encryption filter and cannot be added to a pipeline",
        ));
    }
    Ok(())
}

/// The datatype each of `filters` works on, in forward order, for a tile whose pipeline base
/// type is `base`, as the TileDB release that wrote format version `version` filtered it.
fn stage_datatypes(filters: &[Filter], base: Datatype, version: u32) -> Vec<Datatype> {
    if version < format_version::CHAINED_STAGE_TYPES_VERSION {
        return vec![base; filters.len()];
    }
    let mut t = base;
    filters
        .iter()
        .map(|f| {
            let this = t;
            t = f.output_datatype(t);
            this
        })
        .collect()
}

#[cfg(test)]
mod stage_datatype_tests {
    use super::*;
    use crate::filters::config::ScaleFloatOptions;

    #[test]
    fn stage_types_before_and_after_2_17() {
        let sf = Filter::ScaleFloat(ScaleFloatOptions {
            factor: 0.5,
            offset: 0.0,
            byte_width: 2,
        });
        let filters = [sf, Filter::new(FilterType::Byteshuffle), Filter::Xor];
        use Datatype::*;
        for v in [15, 19] {
            assert_eq!(
                stage_datatypes(&filters, Float64, v),
                [Float64, Float64, Float64]
            );
        }
        for v in [20, 22] {
            assert_eq!(
                stage_datatypes(&filters, Float64, v),
                [Float64, Int16, Int16]
            );
        }
        assert!(stage_datatypes(&[], Float64, 5).is_empty());
    }
}

#[cfg(test)]
mod tests;
