//! The wrapper every entry point runs in: catches panics, maps errors to statuses and
//! reports them through the `error` out-parameter.

use super::constants::tdb_status_t;
use super::error::{status_of, tdb_error_t};
use crate::error::{Error, Result};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `body`; on failure stores a new error in `*error` (when `error` is not NULL).
pub(crate) fn guard(
    error: *mut *mut tdb_error_t,
    body: impl FnOnce() -> Result<()>,
) -> tdb_status_t {
    let result = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Err(Error::Internal(format!("internal error (panic): {what}")))
    });
    let (status, err) = match result {
        Ok(()) => (tdb_status_t::TDB_OK, std::ptr::null_mut()),
        Err(e) => (
            status_of(&e),
            Box::into_raw(Box::new(tdb_error_t::from_error(&e))),
        ),
    };
    if !error.is_null() {
        // SAFETY: the caller passes NULL (checked above) or a valid, writable `tdb_error_t *` slot.
        unsafe { *error = err };
    } else if !err.is_null() {
        // SAFETY: `err` was just created by Box::into_raw and nobody else holds it.
        drop(unsafe { Box::from_raw(err) });
    }
    status
}

/// A shared reference from a caller pointer, or `InvalidArgument` naming the argument.
pub(crate) fn arg<'a, T>(ptr: *const T, name: &str) -> Result<&'a T> {
    // SAFETY: callers pass NULL or a valid pointer to a live object (the C API contract).
    unsafe { ptr.as_ref() }.ok_or_else(|| Error::invalid(format!("{name} is NULL")))
}

/// A mutable reference from a caller pointer, or `InvalidArgument` naming the argument.
pub(crate) fn arg_mut<'a, T>(ptr: *mut T, name: &str) -> Result<&'a mut T> {
    // SAFETY: callers pass NULL or a valid, exclusive pointer to a live object (the C API contract).
    unsafe { ptr.as_mut() }.ok_or_else(|| Error::invalid(format!("{name} is NULL")))
}

/// A byte slice from a caller pointer and length (NULL allowed only with length 0).
pub(crate) fn bytes<'a>(ptr: *const u8, len: usize, name: &str) -> Result<&'a [u8]> {
    if ptr.is_null() {
        if len == 0 {
            return Ok(&[]);
        }
        return Err(Error::invalid(format!(
            "{name} is NULL but its size is {len}"
        )));
    }
    // SAFETY: the caller guarantees `ptr` points to `len` readable bytes (the C API contract).
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// A writable byte slice from a caller pointer and capacity (NULL allowed only with 0).
pub(crate) fn bytes_mut<'a>(ptr: *mut u8, len: usize, name: &str) -> Result<&'a mut [u8]> {
    if ptr.is_null() {
        if len == 0 {
            return Ok(&mut []);
        }
        return Err(Error::invalid(format!(
            "{name} is NULL but its capacity is {len}"
        )));
    }
    // SAFETY: the caller guarantees `ptr` points to `len` writable bytes that nothing else
    // accesses during the call (the C API contract).
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// A slice of `len` items from a caller pointer (NULL allowed only with length 0).
pub(crate) fn slice<'a, T>(ptr: *const T, len: usize, name: &str) -> Result<&'a [T]> {
    if ptr.is_null() {
        if len == 0 {
            return Ok(&[]);
        }
        return Err(Error::invalid(format!(
            "{name} is NULL but its count is {len}"
        )));
    }
    if !ptr.is_aligned() {
        return Err(Error::invalid(format!("{name} is not aligned")));
    }
    // SAFETY: non-NULL and aligned (checked); the caller guarantees `len` readable items.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Copies `bytes` into the caller's `buffer` of `capacity` bytes and sets `*size` to their
/// length. A NULL or too small buffer still gets `*size` set, and the error is
/// `BufferTooSmall` naming `what` (the size query convention of the C API).
pub(crate) fn copy_out(
    bytes: &[u8],
    buffer: *mut u8,
    capacity: usize,
    size: Out<usize>,
    what: &str,
) -> Result<()> {
    let needed = bytes.len();
    size.set(needed);
    if buffer.is_null() || capacity < needed {
        return Err(Error::BufferTooSmall {
            needed,
            message: format!("{what} needs {needed} bytes, buffer has {capacity}"),
        });
    }
    // SAFETY: `buffer` is non-NULL and the caller guarantees `capacity` (>= needed) writable
    // bytes that do not overlap `bytes`, which this library owns.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buffer, needed) };
    Ok(())
}

/// A checked, non-NULL output parameter; written only on success.
pub(crate) struct Out<T>(std::ptr::NonNull<T>);

impl<T> Out<T> {
    /// Checks that the output pointer `name` is not NULL.
    pub(crate) fn new(ptr: *mut T, name: &str) -> Result<Out<T>> {
        std::ptr::NonNull::new(ptr)
            .map(Out)
            .ok_or_else(|| Error::invalid(format!("{name} is NULL")))
    }

    /// Writes the output value.
    pub(crate) fn set(self, value: T) {
        // SAFETY: the pointer is non-NULL and the caller guarantees it is writable and aligned.
        unsafe { self.0.as_ptr().write(value) }
    }
}
