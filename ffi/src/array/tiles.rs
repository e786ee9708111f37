//! Tile-level access to a `tdb_array_t`'s fragments: tile counts, cells, MBRs, file locations
//! and raw or unfiltered tile bytes.

use super::fragments::{frag_at, set_range};
use super::tdb_array_t;
use crate::constants::tdb_status_t;
use crate::error::tdb_error_t;
use crate::guard::{self, Out, arg, guard};
use crate::result::tdb_result_t;
use std::ffi::{c_char, c_void};
use tdbfilter::array::FieldData;
use tdbfilter::array::read::tiles::{DecodedTile, TileKind};
use tdbfilter::error::{Error, Result};

/// The tile kinds of a field: `TDB_TILE_FIXED` (fixed data or var offsets), `TDB_TILE_VAR`,
/// `TDB_TILE_VALIDITY`.
pub type tdb_tile_kind_t = u32;
/// Fixed-size data, or the offsets tile of a var-size field (`a<i>.tdb`).
pub const TDB_TILE_FIXED: tdb_tile_kind_t = 0;
/// Var-size data (`a<i>_var.tdb`).
pub const TDB_TILE_VAR: tdb_tile_kind_t = 1;
/// Validity (`a<i>_validity.tdb`).
pub const TDB_TILE_VALIDITY: tdb_tile_kind_t = 2;

/// The array reader's tile kind for a C tile kind.
pub(crate) fn tile_kind(k: tdb_tile_kind_t) -> Result<TileKind> {
    Ok(match k {
        TDB_TILE_FIXED => TileKind::Fixed,
        TDB_TILE_VAR => TileKind::Var,
        TDB_TILE_VALIDITY => TileKind::Validity,
        k => return Err(Error::invalid(format!("unknown tile kind {k}"))),
    })
}

/// The number of tiles of fragment `fragment`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_tile_count(
    array: *const tdb_array_t,
    fragment: u32,
    count: *mut u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let f = frag_at(arg(array, "array")?, fragment)?;
        Out::new(count, "count")?.set(f.meta.tile_num());
        Ok(())
    })
}

/// The number of cells of tile `tile` of fragment `fragment` (dense fragments: the full space
/// tile, padding included). A tile index at or past the fragment's tile count is
/// `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_tile_cell_count(
    array: *const tdb_array_t,
    fragment: u32,
    tile: u64,
    count: *mut u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let f = frag_at(arg(array, "array")?, fragment)?;
        let out = Out::new(count, "count")?;
        let n = f.meta.tile_num();
        if tile >= n {
            return Err(Error::invalid(format!(
                "tile {tile} of fragment {fragment} out of range ({n} tiles)"
            )));
        }
        out.set(f.meta.cell_num_of_tile(tile));
        Ok(())
    })
}

/// The minimum bounding rectangle (the R-tree leaf) of tile `tile` of sparse fragment
/// `fragment` on dimension `dim`: `lo` (`*lo_size` bytes) and `hi` (`*hi_size` bytes) in the
/// dimension's type (strings for string dimensions), valid while the array lives. A dense
/// fragment (no R-tree) or an index out of range is `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_tile_mbr(
    array: *const tdb_array_t,
    fragment: u32,
    tile: u64,
    dim: u32,
    lo: *mut *const c_void,
    lo_size: *mut usize,
    hi: *mut *const c_void,
    hi_size: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = arg(array, "array")?;
        let f = frag_at(a, fragment)?;
        if f.meta.dense {
            return Err(Error::invalid(format!(
                "fragment {fragment} ({}) is dense: it has no R-tree",
                f.name()
            )));
        }
        let mbrs = f.meta.mbrs(&f.schema, a.inner.key())?;
        let mbr = mbrs.get(tile as usize).ok_or_else(|| {
            Error::invalid(format!(
                "tile {tile} of fragment {fragment} out of range ({} R-tree leaves)",
                mbrs.len()
            ))
        })?;
        let r = mbr.get(dim as usize).ok_or_else(|| {
            Error::invalid(format!(
                "dimension {dim} out of range ({} dimensions)",
                mbr.len()
            ))
        })?;
        set_range(r, lo, lo_size, hi, hi_size)
    })
}

/// Where tile `tile` of kind `kind` of `field` in fragment `fragment` is stored: the file's
/// path as a NUL-terminated string in `path` (`capacity` bytes; `*path_size` receives the
/// length including the NUL, and a NULL or small buffer gives `TDB_ERR_BUFFER_TOO_SMALL`), the
/// byte offset and the filtered size. A field the fragment predates is `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_tile_location(
    array: *const tdb_array_t,
    fragment: u32,
    field: *const c_char,
    tile: u64,
    kind: tdb_tile_kind_t,
    path: *mut c_char,
    capacity: usize,
    path_size: *mut usize,
    offset: *mut u64,
    size: *mut u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = &arg(array, "array")?.inner;
        let name = guard::c_str(field, "field")?;
        let path_size = Out::new(path_size, "path_size")?;
        let (offset, size) = (Out::new(offset, "offset")?, Out::new(size, "size")?);
        let reader = a
            .tile_reader(fragment as usize, name)?
            .ok_or_else(|| Error::invalid(format!("the fragment predates field {name}")))?;
        let (p, off, n) = reader.location(tile, tile_kind(kind)?)?;
        guard::copy_c_string_out(p.as_str(), path, capacity, path_size, "the path")?;
        offset.set(off);
        size.set(n);
        Ok(())
    })
}

/// Reads and unfilters tile `tile` of `field` in fragment `fragment` with the right pipelines
/// (the schema's, at the fragment's format version, with the array's key): a result holding
/// the tile's cells in the fragment's order (dense fragments: the full space tile, padding
/// included), its offsets when var-size and validity when nullable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_tile_read(
    array: *const tdb_array_t,
    fragment: u32,
    field: *const c_char,
    tile: u64,
    result: *mut *mut tdb_result_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = &arg(array, "array")?.inner;
        let name = guard::c_str(field, "field")?;
        let out = Out::new(result, "result")?;
        let reader = a
            .tile_reader(fragment as usize, name)?
            .ok_or_else(|| Error::invalid(format!("the fragment predates field {name}")))?;
        if tile >= reader.tile_num() {
            return Err(Error::invalid(format!(
                "tile {tile} out of range ({} tiles)",
                reader.tile_num()
            )));
        }
        let DecodedTile {
            data,
            offsets,
            validity,
            cells,
        } = reader.decode(tile)?;
        let s = a.schema();
        let cvn = s
            .attributes
            .iter()
            .find(|x| x.name == name)
            .map(|x| x.cell_val_num)
            .or_else(|| {
                s.dimensions
                    .iter()
                    .find(|d| d.name == name)
                    .map(|d| d.cell_val_num)
            })
            .unwrap_or(1);
        out.set(tdb_result_t::new_raw(FieldData {
            name: name.to_string(),
            datatype: reader.datatype,
            cell_val_num: cvn,
            data,
            offsets,
            validity,
            cell_count: cells,
        }));
        Ok(())
    })
}
