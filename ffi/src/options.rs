//! `tdb_options_t`: how an array is opened (encryption key, timestamps, object-store
//! configuration, threads, memory limit), for `tdb_array_open_with_options`.

use super::array::{open_with, tdb_array_t};
use super::config::tdb_config_t;
use super::constants::tdb_status_t;
use super::error::tdb_error_t;
use super::guard::{self, Out, guard};
use std::ffi::{c_char, c_void};
use tdbfilter::array::OpenOptions;
use tdbfilter::error::Error;

/// Options for opening an array; every option starts unset (no key, opened at the current
/// time, the environment's object-store settings, all cores, no memory limit).
pub struct tdb_options_t {
    inner: OpenOptions,
}

/// Creates options with every option unset.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_options_create(
    options: *mut *mut tdb_options_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        Out::new(options, "options")?.set(guard::new_handle(tdb_options_t {
            inner: OpenOptions::default(),
        }));
        Ok(())
    })
}

/// Frees options. NULL is a no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_options_free(options: *mut tdb_options_t) {
    // SAFETY: the caller passes NULL or options from this library, not yet freed.
    unsafe { guard::free_handle(options) }
}

/// Sets the AES-256-GCM key of an encrypted array (`key_len` 32), or clears it (NULL and 0).
/// Another length is `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_options_set_key(
    options: *mut tdb_options_t,
    key: *const c_void,
    key_len: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let o = guard::arg_mut(options, "options")?;
        o.inner.key = guard::aes_key(key, key_len)?;
        Ok(())
    })
}

/// Opens at the timestamp range [`start`, `end`] (milliseconds, inclusive), as TileDB's time
/// travelling does. `start` after `end` is `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_options_set_timestamps(
    options: *mut tdb_options_t,
    start: u64,
    end: u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let o = guard::arg_mut(options, "options")?;
        if start > end {
            return Err(Error::invalid(format!(
                "timestamp start {start} is after the end {end}"
            )));
        }
        o.inner.timestamp_start = start;
        o.inner.timestamp_end = Some(end);
        Ok(())
    })
}

/// Uses a copy of `config`'s object-store settings (NULL: the environment's only).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_options_set_config(
    options: *mut tdb_options_t,
    config: *const tdb_config_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let o = guard::arg_mut(options, "options")?;
        o.inner.config = super::config::config_of(config)?;
        Ok(())
    })
}

/// Sets how many threads decode tiles: 0 = all cores, else 1 to 256 (more is
/// `TDB_ERR_INVALID_ARGUMENT`), as `tdb_array_set_threads`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_options_set_threads(
    options: *mut tdb_options_t,
    threads: u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let o = guard::arg_mut(options, "options")?;
        o.inner.threads = tdbfilter::pipeline::check_threads(threads.into())?;
        Ok(())
    })
}

/// Sets the most bytes one field's result may take (0 = no limit), as
/// `tdb_array_set_memory_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_options_set_memory_limit(
    options: *mut tdb_options_t,
    bytes: u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let o = guard::arg_mut(options, "options")?;
        o.inner.memory_limit = (bytes != 0).then_some(bytes);
        Ok(())
    })
}

/// Opens the array at `path` (as `tdb_array_open`) with `options` (NULL: every option
/// unset). The options may be freed or reused afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_open_with_options(
    path: *const c_char,
    options: *const tdb_options_t,
    array: *mut *mut tdb_array_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(array, "array")?;
        let path = guard::c_str(path, "path")?;
        if options.is_null() {
            return open_with(path, &OpenOptions::default(), out);
        }
        open_with(path, &guard::arg(options, "options")?.inner, out)
    })
}
