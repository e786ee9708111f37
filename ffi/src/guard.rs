//! The one helper set every C entry point uses: the wrappers that catch panics and report
//! errors, owned handles, caller pointers (objects, C strings, sized buffers) and output
//! parameters that are written only on success.

use super::constants::tdb_status_t;
use super::error::{status_of, tdb_error_t};
use std::ffi::{CStr, CString, c_char};
use std::mem::MaybeUninit;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::NonNull;
use tdbfilter::error::{Error, Result};

/// The text of a caught panic.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Runs the body of a fallible entry point: a panic becomes `TDB_ERR_INTERNAL`; on failure a
/// new error is stored in `*error` (when `error` is not NULL), on success `*error` is NULL.
pub(crate) fn guard(
    error: *mut *mut tdb_error_t,
    body: impl FnOnce() -> Result<()>,
) -> tdb_status_t {
    let result = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|panic| {
        Err(Error::Internal(format!(
            "internal error (panic): {}",
            panic_text(&*panic)
        )))
    });
    let (status, err) = match result {
        Ok(()) => (tdb_status_t::TDB_OK, std::ptr::null_mut()),
        Err(e) => (status_of(&e), new_handle(tdb_error_t::from_error(&e))),
    };
    if !error.is_null() {
        // SAFETY: the caller passes NULL (checked above) or a valid, writable `tdb_error_t *` slot.
        unsafe { *error = err };
    } else if !err.is_null() {
        // SAFETY: `err` was just created by `new_handle` and nobody else holds it.
        unsafe { free_handle(err) };
    }
    status
}

/// Runs the body of an entry point that has no status to report (getters of static strings,
/// error accessors): a panic gives `fallback` instead of crossing the boundary.
pub(crate) fn infallible<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// A new owned handle for C (`*_free` releases it with [`free_handle`]).
pub(crate) fn new_handle<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// Releases a handle made by [`new_handle`]; NULL is a no-op and a panic while dropping is
/// caught (the handle is gone either way).
///
/// # Safety
/// `ptr` is NULL or a handle of type `T` from [`new_handle`], not yet freed.
pub(crate) unsafe fn free_handle<T>(ptr: *mut T) {
    if !ptr.is_null() {
        // SAFETY: a non-NULL `ptr` came from Box::into_raw in `new_handle` and is freed once
        // (the caller's contract).
        let owned = unsafe { Box::from_raw(ptr) };
        let _ = catch_unwind(AssertUnwindSafe(move || drop(owned)));
    }
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

/// A NUL-terminated caller string as UTF-8, or `InvalidArgument` naming the argument when it
/// is NULL or not UTF-8.
pub(crate) fn c_str<'a>(ptr: *const c_char, name: &str) -> Result<&'a str> {
    if ptr.is_null() {
        return Err(Error::invalid(format!("{name} is NULL")));
    }
    // SAFETY: the caller passes a NUL-terminated string (checked non-NULL above).
    unsafe { CStr::from_ptr(ptr) }
        .to_str()
        .map_err(|_| Error::invalid(format!("{name} is not valid UTF-8")))
}

/// An owned C copy of `text`, with any NUL byte written as `\0` so nothing is cut off.
pub(crate) fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "\\0")).expect("no NUL bytes are left")
}

/// A byte slice from a caller pointer and length (NULL allowed only with length 0).
pub(crate) fn bytes<'a>(ptr: *const u8, len: usize, name: &str) -> Result<&'a [u8]> {
    from_parts(ptr, len, name, "size")
}

/// An optional AES-256-GCM key from a caller pointer and length: `None` for length 0, else
/// exactly 32 bytes.
pub(crate) fn aes_key(ptr: *const std::ffi::c_void, len: usize) -> Result<Option<Vec<u8>>> {
    let key = bytes(ptr.cast(), len, "key")?;
    if !key.is_empty() && key.len() != 32 {
        return Err(Error::invalid(format!(
            "an AES-256-GCM key has 32 bytes, not {}",
            key.len()
        )));
    }
    Ok((!key.is_empty()).then(|| key.to_vec()))
}

/// A slice of `len` items from a caller pointer (NULL allowed only with count 0).
pub(crate) fn slice<'a, T>(ptr: *const T, len: usize, name: &str) -> Result<&'a [T]> {
    from_parts(ptr, len, name, "count")
}

/// `len` output slots from a caller pointer (NULL allowed only with 0), for results written
/// only on success.
pub(crate) fn out_slots<'a, T>(
    ptr: *mut T,
    len: usize,
    name: &str,
) -> Result<&'a mut [MaybeUninit<T>]> {
    if ptr.is_null() {
        if len == 0 {
            return Ok(&mut []);
        }
        return Err(Error::invalid(format!(
            "{name} is NULL but its count is {len}"
        )));
    }
    if !ptr.is_aligned() {
        return Err(Error::invalid(format!("{name} is not aligned")));
    }
    // SAFETY: non-NULL and aligned (checked); the caller guarantees `len` writable slots that
    // nothing else accesses during the call. MaybeUninit makes no claim on their contents.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<T>>(), len) })
}

/// A writable byte slice from a caller pointer and capacity (NULL allowed only with 0).
pub(crate) fn bytes_mut<'a>(ptr: *mut u8, len: usize, name: &str) -> Result<&'a mut [u8]> {
    if ptr.is_null() {
        if len == 0 {
            return Ok(&mut []);
        }
        return Err(Error::invalid(format!(
            "{name} is NULL but its size is {len}"
        )));
    }
    // SAFETY: the caller guarantees `ptr` points to `len` writable bytes that nothing else
    // accesses during the call (the C API contract).
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// `len` items at a caller pointer; NULL is allowed only with `len` 0, else the error names
/// the argument and its `len_word` ("size", "count").
fn from_parts<'a, T>(ptr: *const T, len: usize, name: &str, len_word: &str) -> Result<&'a [T]> {
    if ptr.is_null() {
        if len == 0 {
            return Ok(&[]);
        }
        return Err(Error::invalid(format!(
            "{name} is NULL but its {len_word} is {len}"
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
            message: format!("{what} needs {needed} bytes, the buffer has {capacity}"),
        });
    }
    bytes_mut(buffer, needed, what)?.copy_from_slice(bytes);
    Ok(())
}

/// Copies `text` with a terminating NUL into the caller's `buffer` of `capacity` bytes, as
/// [`copy_out`] does (`*size` counts the NUL).
pub(crate) fn copy_c_string_out(
    text: &str,
    buffer: *mut c_char,
    capacity: usize,
    size: Out<usize>,
    what: &str,
) -> Result<()> {
    let mut bytes = Vec::with_capacity(text.len() + 1);
    bytes.extend_from_slice(text.as_bytes());
    bytes.push(0);
    copy_out(&bytes, buffer.cast(), capacity, size, what)
}

/// A checked, non-NULL output parameter; written only on success.
pub(crate) struct Out<T>(NonNull<T>);

impl<T> Out<T> {
    /// Checks that the output pointer `name` is not NULL.
    pub(crate) fn new(ptr: *mut T, name: &str) -> Result<Out<T>> {
        NonNull::new(ptr)
            .map(Out)
            .ok_or_else(|| Error::invalid(format!("{name} is NULL")))
    }

    /// Writes the output value.
    pub(crate) fn set(self, value: T) {
        // SAFETY: the pointer is non-NULL and the caller guarantees it is writable and aligned.
        unsafe { self.0.as_ptr().write(value) }
    }
}

impl<T> Out<*const T> {
    /// Writes a borrowed slice as its pointer and length (`count`), or NULL and 0 for `None`.
    pub(crate) fn set_slice(self, items: Option<&[T]>, count: Out<usize>) {
        self.set(items.map_or(std::ptr::null(), |v| v.as_ptr()));
        count.set(items.map_or(0, |v| v.len()));
    }
}

/// An output parameter the caller may pass as NULL (not wanted); written only on success.
pub(crate) struct OptOut<T>(Option<NonNull<T>>);

impl<T> OptOut<T> {
    /// Takes the output pointer (NULL: the value is not wanted).
    pub(crate) fn new(ptr: *mut T) -> OptOut<T> {
        OptOut(NonNull::new(ptr))
    }

    /// Writes the output value unless the caller passed NULL.
    pub(crate) fn set(self, value: T) {
        if let Some(p) = self.0 {
            // SAFETY: a non-NULL pointer is writable and aligned (the C API contract).
            unsafe { p.as_ptr().write(value) }
        }
    }
}
