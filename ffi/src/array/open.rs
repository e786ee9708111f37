//! Opening a `tdb_array_t`: the open entry points (timestamps, key, object-store config),
//! `free`, and the handle's read settings (threads, memory limit).

use super::tdb_array_t;
use crate::config::{config_of, tdb_config_t};
use crate::constants::tdb_status_t;
use crate::error::tdb_error_t;
use crate::guard::{self, Out, guard};
use std::ffi::{c_char, c_void};
use tdbfilter::array::{Array, OpenOptions};
use tdbfilter::error::Result;

fn open(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamps: Option<(u64, u64)>,
    config: *const tdb_config_t,
    array: *mut *mut tdb_array_t,
) -> Result<()> {
    let out = Out::new(array, "array")?;
    let path = guard::c_str(path, "path")?;
    let key = guard::bytes(key.cast(), key_len, "key")?;
    let options = OpenOptions {
        key: (!key.is_empty()).then(|| key.to_vec()),
        timestamp_start: timestamps.map_or(0, |t| t.0),
        timestamp_end: timestamps.map(|t| t.1),
        threads: 0,
        memory_limit: None,
        config: config_of(config)?,
    };
    open_with(path, &options, out)
}

/// Opens the array at `path` with `options` into `out` (`tdb_array_open_with_options`).
pub(crate) fn open_with(
    path: &str,
    options: &OpenOptions,
    out: Out<*mut tdb_array_t>,
) -> Result<()> {
    let inner = Array::open(path, options)?;
    let s = inner.schema();
    let attr_names = s
        .attributes
        .iter()
        .map(|a| guard::c_string(&a.name))
        .collect();
    let dim_names = s
        .dimensions
        .iter()
        .map(|d| guard::c_string(&d.name))
        .collect();
    let frag_names = inner
        .fragments()
        .iter()
        .map(|f| guard::c_string(f.name()))
        .collect();
    let frag_schema_names = inner
        .fragments()
        .iter()
        .map(|f| guard::c_string(&f.meta.schema_name))
        .collect();
    out.set(guard::new_handle(tdb_array_t {
        inner,
        metadata: std::sync::OnceLock::new(),
        attr_names,
        dim_names,
        frag_names,
        frag_schema_names,
        frag_consolidated: std::sync::OnceLock::new(),
    }));
    Ok(())
}

/// Opens the array at `path` (a local path, `file://` URI, or `s3://`, `azure://`, `gs://`
/// URI configured from the environment) for reading at the current time, as TileDB opens it.
/// `key`/`key_len`: the 32-byte AES-256-GCM key of an encrypted array, or NULL and 0. Other
/// schemes, and object stores in a build without them, are `TDB_ERR_UNSUPPORTED`; a folder
/// that is not an array is `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_open(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    array: *mut *mut tdb_array_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        open(path, key, key_len, None, std::ptr::null(), array)
    })
}

/// [`tdb_array_open`] with object-store options (`config` may be NULL: the environment only).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_open_with_config(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    config: *const tdb_config_t,
    array: *mut *mut tdb_array_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || open(path, key, key_len, None, config, array))
}

/// Opens the array at `path` with the fragments of the timestamp range
/// [`timestamp_start`, `timestamp_end`] (milliseconds, inclusive) visible, as TileDB's
/// time travelling does.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_open_at(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamp_start: u64,
    timestamp_end: u64,
    array: *mut *mut tdb_array_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        open(
            path,
            key,
            key_len,
            Some((timestamp_start, timestamp_end)),
            std::ptr::null(),
            array,
        )
    })
}

/// [`tdb_array_open_at`] with object-store options (`config` may be NULL: the environment
/// only).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_open_at_with_config(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamp_start: u64,
    timestamp_end: u64,
    config: *const tdb_config_t,
    array: *mut *mut tdb_array_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        open(
            path,
            key,
            key_len,
            Some((timestamp_start, timestamp_end)),
            config,
            array,
        )
    })
}

/// Frees an array. NULL is a no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_free(array: *mut tdb_array_t) {
    // SAFETY: the caller passes NULL or an array from this library, not yet freed.
    unsafe { guard::free_handle(array) }
}

/// Sets how many threads decode the tiles of one read: 0 = all cores (the default), else 1
/// to 256; more is `TDB_ERR_INVALID_ARGUMENT`. Every array and pipeline with the same count
/// shares one thread pool, started on first use and kept for the process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_set_threads(
    array: *mut tdb_array_t,
    threads: u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = guard::arg_mut(array, "array")?;
        a.inner
            .set_threads(tdbfilter::pipeline::check_threads(threads.into())?);
        Ok(())
    })
}

/// Sets the most bytes one field's result may take (0 = no limit, the default). A read
/// needing more fails with `TDB_ERR_OUT_OF_MEMORY` naming the size and the limit, before
/// allocating. Set it when reading arrays from untrusted sources: damaged fragment metadata
/// or a damaged non-empty domain can otherwise claim results of any size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_set_memory_limit(
    array: *mut tdb_array_t,
    bytes: u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        guard::arg_mut(array, "array")?
            .inner
            .set_memory_limit((bytes != 0).then_some(bytes));
        Ok(())
    })
}
