//! Generic tiles (docs/FORMAT.md §6): reading and writing TileDB's self-describing tiles
//! (schemas, fragment metadata sections, array metadata), plain or AES-256-GCM encrypted.

use super::constants::tdb_status_t;
use super::error::tdb_error_t;
use super::guard::{self, Out, arg, guard};
use super::pipeline::tdb_pipeline_t;
use super::tile::tdb_tile_t;
use super::{tdb_datatype_t, tdb_filter_type_t};
use tdbfilter::Tile;
use tdbfilter::error::Error;
use tdbfilter::pipeline::generic_tile::{self, GenericTileHeader};

/// A TileDB encryption type (`tiledb_encryption_type_t` values), as stored in a generic-tile
/// header.
pub type tdb_encryption_type_t = u32;
/// Not encrypted.
pub const TDB_NO_ENCRYPTION: tdb_encryption_type_t = 0;
/// AES-256-GCM (32-byte key).
pub const TDB_AES_256_GCM: tdb_encryption_type_t = 1;

/// TileDB's internal AES-256-GCM filter type. It cannot be added to a pipeline (set a key
/// with `tdb_pipeline_set_encryption_key` instead), but it is the last filter of the pipeline
/// of an encrypted generic tile, as returned by `tdb_generic_tile_pipeline`.
pub const TDB_FILTER_AES_256_GCM: tdb_filter_type_t = 11;

/// Bytes of the fixed part of a generic-tile header (before the serialized pipeline).
pub const TDB_GENERIC_TILE_HEADER_BASE_SIZE: usize = 34;

const _: () = assert!(TDB_GENERIC_TILE_HEADER_BASE_SIZE == generic_tile::HEADER_BASE_SIZE);

/// The header of a generic tile: every stored field, plus the derived sizes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct tdb_generic_tile_header_t {
    /// Format version of the header and its pipeline (22 for TileDB 2.30).
    pub version: u32,
    /// Bytes of the filtered tile that follows the pipeline.
    pub persisted_size: u64,
    /// Bytes of the unfiltered tile.
    pub tile_size: u64,
    /// Datatype of the tile's cells (TileDB writes `TDB_CHAR`).
    pub datatype: tdb_datatype_t,
    /// Bytes per cell (TileDB writes 1).
    pub cell_size: u64,
    /// `TDB_NO_ENCRYPTION` or `TDB_AES_256_GCM`.
    pub encryption_type: tdb_encryption_type_t,
    /// Bytes of the serialized pipeline.
    pub filter_pipeline_size: u32,
    /// Bytes before the filtered tile: 34 + `filter_pipeline_size`.
    pub header_size: u64,
    /// Bytes of the whole generic tile: `header_size + persisted_size`.
    pub total_size: u64,
}

impl tdb_generic_tile_header_t {
    fn of(h: &GenericTileHeader) -> tdb_generic_tile_header_t {
        tdb_generic_tile_header_t {
            version: h.version,
            persisted_size: h.persisted_size,
            tile_size: h.tile_size,
            datatype: h.datatype as u32,
            cell_size: h.cell_size,
            encryption_type: h.encryption_type as u32,
            filter_pipeline_size: h.filter_pipeline_size,
            header_size: h.header_size() as u64,
            total_size: h.total_size(),
        }
    }
}

/// The key argument: NULL with length 0 is "no key"; anything else must be 32 bytes.
fn key_arg<'a>(key: *const u8, key_len: usize) -> tdbfilter::Result<Option<&'a [u8]>> {
    if key.is_null() && key_len == 0 {
        return Ok(None);
    }
    let k = guard::bytes(key, key_len, "key")?;
    if k.len() != 32 {
        return Err(Error::invalid(format!(
            "AES-256-GCM keys are 32 bytes, got {}",
            k.len()
        )));
    }
    Ok(Some(k))
}

/// Reads the generic tile at the start of `bytes` (`size` bytes; bytes after the tile are
/// ignored) and unfilters it into a new tile of the header's datatype and cell size.
/// `*consumed` receives the bytes the generic tile occupies, so consecutive generic tiles
/// (e.g. the sections of a `__fragment_metadata.tdb`) can be walked.
///
/// `key` is NULL (with `key_len` 0) for an unencrypted tile, or the 32-byte AES-256-GCM key
/// of an encrypted one (TileDB's `sm.encryption_key` string is used as raw bytes).
/// Errors: truncated or inconsistent bytes are `TDB_ERR_CORRUPT_DATA`; an encrypted tile
/// without a key, a wrong key or tampered ciphertext are `TDB_ERR_DECRYPTION_FAILED`; a key
/// for an unencrypted tile or a key that is not 32 bytes is `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_generic_tile_read(
    bytes: *const u8,
    size: usize,
    key: *const u8,
    key_len: usize,
    tile: *mut *mut tdb_tile_t,
    consumed: *mut u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out_tile = Out::new(tile, "tile")?;
        let out_consumed = Out::new(consumed, "consumed")?;
        let input = guard::bytes(bytes, size, "bytes")?;
        let key = key_arg(key, key_len)?;
        let (_, t, used) = generic_tile::read(input, key)?;
        out_tile.set(tdb_tile_t::new_raw(t));
        out_consumed.set(used as u64);
        Ok(())
    })
}

/// Parses and validates the header of the generic tile at the start of `bytes` without
/// unfiltering it (no key needed): the fields, the pipeline, the filtered tile's chunk table
/// against `persisted_size` and `tile_size`. Malformed bytes are `TDB_ERR_CORRUPT_DATA`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_generic_tile_header(
    bytes: *const u8,
    size: usize,
    header: *mut tdb_generic_tile_header_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(header, "header")?;
        let h = generic_tile::read_header(guard::bytes(bytes, size, "bytes")?)?;
        out.set(tdb_generic_tile_header_t::of(&h));
        Ok(())
    })
}

/// The pipeline stored in the header of the generic tile at the start of `bytes`, as a new
/// pipeline. An encrypted tile's pipeline ends with `TDB_FILTER_AES_256_GCM`; set the key
/// on it to write generic tiles with the same header.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_generic_tile_pipeline(
    bytes: *const u8,
    size: usize,
    pipeline: *mut *mut tdb_pipeline_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(pipeline, "pipeline")?;
        let h = generic_tile::read_header(guard::bytes(bytes, size, "bytes")?)?;
        out.set(tdb_pipeline_t::new_raw(h.pipeline));
        Ok(())
    })
}

/// Writes the fixed-size `tile` as a generic tile through `pipeline`; `*generic` receives the
/// generic tile's bytes as a new tile (read them with `tdb_tile_data`). The header gets
/// format version 22 and the tile's datatype and cell size (TileDB writes `TDB_CHAR` and 1;
/// the cell size drives chunking). With an encryption key set on the pipeline the tile is
/// encrypted and the header stores the pipeline with `TDB_FILTER_AES_256_GCM` appended and
/// encryption type `TDB_AES_256_GCM`. For TileDB's own generic tiles use
/// `tdb_generic_tile_default_pipeline`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_generic_tile_write(
    pipeline: *const tdb_pipeline_t,
    tile: *const tdb_tile_t,
    generic: *mut *mut tdb_tile_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg(pipeline, "pipeline")?;
        let t = arg(tile, "tile")?;
        let out = Out::new(generic, "generic")?;
        let bytes = generic_tile::write(p.pipeline(), t.tile())?;
        out.set(tdb_tile_t::new_raw(Tile::new(
            t.tile().datatype(),
            t.tile().cell_size(),
            bytes,
        )?));
        Ok(())
    })
}

/// Creates TileDB's generic-tile pipeline: [GZIP level 1], max chunk size 65536. Set an
/// encryption key on it for TileDB's encrypted generic tiles ([GZIP level 1, AES-256-GCM]).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_generic_tile_default_pipeline(
    pipeline: *mut *mut tdb_pipeline_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(pipeline, "pipeline")?;
        out.set(tdb_pipeline_t::new_raw(generic_tile::default_pipeline()));
        Ok(())
    })
}
