//! `tdb_error_t`: an owned error carrying a status and a message.

use super::constants::tdb_status_t;
use super::guard::{self, infallible};
use std::ffi::{CString, c_char};
use tdbfilter::error::Error;

/// An error returned through a `tdb_error_t **error` out-parameter. Free it with `tdb_error_free`.
pub struct tdb_error_t {
    status: tdb_status_t,
    message: CString,
}

impl tdb_error_t {
    pub(crate) fn from_error(e: &Error) -> tdb_error_t {
        tdb_error_t {
            status: status_of(e),
            message: guard::c_string(e.message()),
        }
    }
}

/// The status code of an error.
pub(crate) fn status_of(e: &Error) -> tdb_status_t {
    match e {
        Error::InvalidArgument(_) => tdb_status_t::TDB_ERR_INVALID_ARGUMENT,
        Error::CorruptData(_) => tdb_status_t::TDB_ERR_CORRUPT_DATA,
        Error::ChecksumMismatch(_) => tdb_status_t::TDB_ERR_CHECKSUM_MISMATCH,
        Error::DecryptionFailed(_) => tdb_status_t::TDB_ERR_DECRYPTION_FAILED,
        Error::Unsupported(_) => tdb_status_t::TDB_ERR_UNSUPPORTED,
        Error::BufferTooSmall { .. } => tdb_status_t::TDB_ERR_BUFFER_TOO_SMALL,
        Error::OutOfMemory(_) => tdb_status_t::TDB_ERR_OUT_OF_MEMORY,
        Error::Internal(_) => tdb_status_t::TDB_ERR_INTERNAL,
        Error::Io { .. } => tdb_status_t::TDB_ERR_IO,
    }
}

/// The status of an error; `TDB_OK` for NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_error_status(error: *const tdb_error_t) -> tdb_status_t {
    infallible(tdb_status_t::TDB_ERR_INTERNAL, || {
        guard::arg(error, "error").map_or(tdb_status_t::TDB_OK, |e| e.status)
    })
}

/// The error's message, valid until the error is freed; `""` for NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_error_message(error: *const tdb_error_t) -> *const c_char {
    infallible(c"".as_ptr(), || {
        guard::arg(error, "error").map_or(c"".as_ptr(), |e| e.message.as_ptr())
    })
}

/// Frees an error. NULL is a no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_error_free(error: *mut tdb_error_t) {
    // SAFETY: the caller passes NULL or an error from this library, not yet freed.
    unsafe { guard::free_handle(error) }
}
