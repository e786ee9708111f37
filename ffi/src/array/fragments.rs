//! The visible fragments of a `tdb_array_t`: names, timestamps, cell counts and non-empty
//! domains.

use super::tdb_array_t;
use crate::constants::tdb_status_t;
use crate::error::tdb_error_t;
use crate::guard::{OptOut, Out, arg, guard};
use std::ffi::{c_char, c_void};
use tdbfilter::array::schema::Range;
use tdbfilter::error::{Error, Result};

/// The number of visible fragments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_fragment_count(
    array: *const tdb_array_t,
    count: *mut u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = arg(array, "array")?;
        Out::new(count, "count")?.set(a.inner.fragments().len() as u32);
        Ok(())
    })
}

/// Fragment `index` (oldest first; later fragments win in merges): its folder name (valid
/// while the array lives), timestamp range, format version, whether it is dense, its cells
/// (dense: including the padding of edge tiles) and tiles. Any output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_fragment(
    array: *const tdb_array_t,
    index: u32,
    name: *mut *const c_char,
    timestamp_start: *mut u64,
    timestamp_end: *mut u64,
    version: *mut u32,
    dense: *mut bool,
    cell_count: *mut u64,
    tile_count: *mut u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = arg(array, "array")?;
        let f = frag_at(a, index)?;
        let (t1, t2) = f.timestamps();
        OptOut::new(name).set(a.frag_names[index as usize].as_ptr());
        OptOut::new(timestamp_start).set(t1);
        OptOut::new(timestamp_end).set(t2);
        OptOut::new(version).set(f.meta.version);
        OptOut::new(dense).set(f.meta.dense);
        OptOut::new(cell_count).set(f.meta.cell_num());
        OptOut::new(tile_count).set(f.meta.tile_num());
        Ok(())
    })
}

/// The name of the schema fragment `index` was written with: its file in `__schema/`
/// (`__array_schema.tdb` for fragments before format version 10), valid while the array
/// lives (TileDB's `tiledb_fragment_info_get_array_schema_name`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_fragment_schema_name(
    array: *const tdb_array_t,
    index: u32,
    name: *mut *const c_char,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = arg(array, "array")?;
        frag_at(a, index)?;
        Out::new(name, "name")?.set(a.frag_schema_names[index as usize].as_ptr());
        Ok(())
    })
}

/// Whether fragment `index`'s footer is held by a consolidated fragment metadata file
/// (the `.meta` files of `__fragment_meta/` inside the open range; TileDB's
/// `tiledb_fragment_info_get_has_consolidated_metadata`). The files are read on the first call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_fragment_has_consolidated_metadata(
    array: *const tdb_array_t,
    index: u32,
    has: *mut bool,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = arg(array, "array")?;
        frag_at(a, index)?;
        let out = Out::new(has, "has")?;
        let flags = match a.frag_consolidated.get() {
            Some(f) => f,
            None => {
                let names = a.inner.consolidated_footers()?;
                let loaded = a
                    .inner
                    .fragments()
                    .iter()
                    .map(|f| names.contains(f.name()))
                    .collect();
                a.frag_consolidated.get_or_init(|| loaded)
            }
        };
        out.set(flags[index as usize]);
        Ok(())
    })
}

pub(super) fn frag_at(a: &tdb_array_t, index: u32) -> Result<&tdbfilter::array::Fragment> {
    a.inner.fragments().get(index as usize).ok_or_else(|| {
        Error::invalid(format!(
            "fragment index {index} out of range ({} fragments)",
            a.inner.fragments().len()
        ))
    })
}

/// Writes range `r`'s bounds (pointers into `r`, and their sizes) to the four outputs, all
/// checked non-NULL before any is written.
pub(super) fn set_range(
    r: &Range,
    lo: *mut *const c_void,
    lo_size: *mut usize,
    hi: *mut *const c_void,
    hi_size: *mut usize,
) -> Result<()> {
    let (lo, lo_size, hi, hi_size) = (
        Out::new(lo, "lo")?,
        Out::new(lo_size, "lo_size")?,
        Out::new(hi, "hi")?,
        Out::new(hi_size, "hi_size")?,
    );
    lo.set(r.lo().as_ptr().cast());
    lo_size.set(r.lo().len());
    hi.set(r.hi().as_ptr().cast());
    hi_size.set(r.hi().len());
    Ok(())
}

/// Fragment `index`'s non-empty domain on dimension `dim`: `lo` (`*lo_size` bytes) and `hi`
/// (`*hi_size` bytes), valid while the array lives.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_fragment_non_empty_domain(
    array: *const tdb_array_t,
    index: u32,
    dim: u32,
    lo: *mut *const c_void,
    lo_size: *mut usize,
    hi: *mut *const c_void,
    hi_size: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let f = frag_at(arg(array, "array")?, index)?;
        let r = f
            .meta
            .non_empty_domain
            .as_ref()
            .and_then(|n| n.get(dim as usize))
            .ok_or_else(|| Error::invalid(format!("no non-empty domain for dimension {dim}")))?;
        set_range(r, lo, lo_size, hi, hi_size)
    })
}
