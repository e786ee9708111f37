//! A filter pipeline: ordered filters plus the settings that drive filtering, and the
//! tile-level filter/unfilter entry points (chunking, threads, the chunk table).

mod forward;
mod reverse;
mod serialize;
mod threads;

pub use serialize::FORMAT_VERSION;

use crate::chunking;
use crate::datatype::Datatype;
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::filter_type::FilterType;
use crate::filters;

/// The settings every chunk needs, fixed for one tile.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChunkSettings<'a> {
    pub filters: &'a [Filter],
    /// Filter data type of each stage (§4.8).
    pub types: &'a [Datatype],
    pub cell_size: u64,
    pub version: u32,
    pub skip_checksum_validation: bool,
}

/// An ordered list of filters with TileDB's pipeline settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Pipeline {
    filters: Vec<Filter>,
    max_chunk_size: u32,
    threads: usize,
    skip_checksum_validation: bool,
    format_version: u32,
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
        }
    }

    /// Appends a filter of type `t` with default options.
    pub fn add_filter(&mut self, t: FilterType) -> Result<()> {
        self.push(Filter::new(t))
    }

    /// Appends a configured filter. Filters this build does not implement are refused with
    /// `Unsupported`; the internal AES filter with `InvalidArgument`.
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

    /// Whether checksum filters skip verification on read.
    pub fn skip_checksum_validation(&self) -> bool {
        self.skip_checksum_validation
    }

    /// Sets whether checksum filters skip verification on read.
    pub fn set_skip_checksum_validation(&mut self, skip: bool) {
        self.skip_checksum_validation = skip;
    }

    /// The format version of the tiles this pipeline reads and writes.
    pub fn format_version(&self) -> u32 {
        self.format_version
    }

    /// The filter data type of every stage for a tile of `base` type (§4.8).
    pub fn stage_datatypes(&self, base: Datatype) -> Vec<Datatype> {
        let mut t = base;
        self.filters
            .iter()
            .map(|f| {
                let this = t;
                t = f.output_datatype(t);
                this
            })
            .collect()
    }

    /// Whether fixed-size tiles are cut into chunks (§4.4).
    fn uses_chunking(&self) -> bool {
        self.max_chunk_size != 0
            && !self
                .filters
                .iter()
                .any(|f| f.filter_type() == FilterType::Webp)
    }

    fn settings<'a>(&'a self, types: &'a [Datatype], cell_size: u64) -> ChunkSettings<'a> {
        ChunkSettings {
            filters: &self.filters,
            types,
            cell_size,
            version: self.format_version,
            skip_checksum_validation: self.skip_checksum_validation,
        }
    }

    /// Filters a fixed-size tile into TileDB's filtered tile bytes (§4.1).
    pub fn filter_tile(&self, tile: &crate::tile::Tile) -> Result<Vec<u8>> {
        let chunks =
            chunking::fixed_chunks(tile.data().len(), tile.cell_size(), self.uses_chunking())?;
        let types = self.stage_datatypes(tile.datatype());
        forward::filter_chunks(
            &self.settings(&types, tile.cell_size()),
            tile.data(),
            &chunks,
            threads::effective_threads(self.threads),
        )
    }

    /// Unfilters TileDB's filtered tile bytes (exactly one tile) of `datatype` cells of
    /// `cell_size` bytes. The result is as long as the sum of the chunks' original lengths.
    pub fn unfilter_tile(
        &self,
        filtered: &[u8],
        datatype: Datatype,
        cell_size: u64,
    ) -> Result<crate::tile::Tile> {
        crate::tile::check_cell_size(datatype, cell_size)?;
        let types = self.stage_datatypes(datatype);
        let data = reverse::unfilter_chunks(
            &self.settings(&types, cell_size),
            filtered,
            threads::effective_threads(self.threads),
        )?;
        crate::tile::Tile::new(datatype, cell_size, data)
    }
}

/// Refuses filters that cannot be part of a pipeline in this build.
fn check_filter(filter: &Filter) -> Result<()> {
    let t = filter.filter_type();
    if t == FilterType::Aes256Gcm {
        return Err(Error::invalid(
            "AES_256_GCM is TileDB's internal encryption filter and cannot be added to a pipeline",
        ));
    }
    if !filters::is_implemented(t) {
        return Err(Error::Unsupported(format!(
            "filter {} is not supported by this version of tdbfilter",
            t.name()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
