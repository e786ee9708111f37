//! `tdb_tile_t`: an owned tile (unfiltered cells or filtered bytes) and the tile-format helpers.

use super::constants::tdb_status_t;
use super::error::tdb_error_t;
use super::guard::{self, Out, arg, guard};
use super::tdb_datatype_t;
use tdbfilter::{Datatype, Tile};

/// An owned tile: unfiltered cells, or the bytes of a filtered tile.
pub struct tdb_tile_t {
    inner: Tile,
}

impl tdb_tile_t {
    /// A new tile handle holding `inner`.
    pub(crate) fn new_raw(inner: Tile) -> *mut tdb_tile_t {
        guard::new_handle(tdb_tile_t { inner })
    }

    pub(crate) fn tile(&self) -> &Tile {
        &self.inner
    }
}

/// Creates a tile by copying `size` bytes of `datatype` cells of `cell_size` bytes
/// (cell_val_num × datatype size).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_tile_create(
    datatype: tdb_datatype_t,
    cell_size: u64,
    data: *const std::ffi::c_void,
    size: usize,
    tile: *mut *mut tdb_tile_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(tile, "tile")?;
        let datatype = Datatype::try_from_u32(datatype)?;
        let data = guard::bytes(data.cast(), size, "data")?;
        out.set(tdb_tile_t::new_raw(Tile::new(
            datatype,
            cell_size,
            copy_vec(data)?,
        )?));
        Ok(())
    })
}

/// Creates a var-size tile by copying `cell_count` u64 offsets (tile-relative byte offsets of
/// each cell's start, the first 0, never decreasing, no extra final element) and `size` bytes of
/// concatenated cell values. Bad offsets are `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_tile_create_var(
    datatype: tdb_datatype_t,
    offsets: *const u64,
    cell_count: usize,
    data: *const std::ffi::c_void,
    size: usize,
    tile: *mut *mut tdb_tile_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(tile, "tile")?;
        let datatype = Datatype::try_from_u32(datatype)?;
        let offsets = guard::slice(offsets, cell_count, "offsets")?;
        let data = guard::bytes(data.cast(), size, "data")?;
        out.set(tdb_tile_t::new_raw(Tile::new_var(
            datatype,
            copy_vec(offsets)?,
            copy_vec(data)?,
        )?));
        Ok(())
    })
}

fn copy_vec<T: Copy>(items: &[T]) -> tdbfilter::Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(items.len()).map_err(|_| {
        tdbfilter::Error::OutOfMemory(format!(
            "cannot allocate {} items for the tile",
            items.len()
        ))
    })?;
    v.extend_from_slice(items);
    Ok(v)
}

/// The offsets of a var-size tile (`*cell_count` u64 offsets), borrowed: valid until the tile
/// is freed. A fixed-size tile is `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_tile_offsets(
    tile: *const tdb_tile_t,
    offsets: *mut *const u64,
    cell_count: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let t = arg(tile, "tile")?;
        let (offsets, count) = (
            Out::new(offsets, "offsets")?,
            Out::new(cell_count, "cell_count")?,
        );
        let o = t.inner.offsets().ok_or_else(|| {
            tdbfilter::Error::invalid(format!(
                "tile is not var-size (a fixed-size {} tile has no offsets)",
                t.inner.datatype()
            ))
        })?;
        offsets.set_slice(Some(o), count);
        Ok(())
    })
}

/// The tile's bytes (`*size` bytes), borrowed: valid until the tile is freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_tile_data(
    tile: *const tdb_tile_t,
    data: *mut *const u8,
    size: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let t = arg(tile, "tile")?;
        Out::new(data, "data")?.set_slice(Some(t.inner.data()), Out::new(size, "size")?);
        Ok(())
    })
}

/// Frees a tile. NULL is a no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_tile_free(tile: *mut tdb_tile_t) {
    // SAFETY: the caller passes NULL or a tile from this library, not yet freed.
    unsafe { guard::free_handle(tile) }
}

/// The size in bytes of the filtered tile at the start of `bytes` (tiles are self-delimiting),
/// checking that all of it lies within `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_filtered_tile_size(
    bytes: *const u8,
    size: usize,
    tile_size: *mut u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(tile_size, "tile_size")?;
        out.set(tdbfilter::format::tile_format::filtered_tile_size(
            guard::bytes(bytes, size, "bytes")?,
        )?);
        Ok(())
    })
}
