//! Pipeline specs (`"bitshuffle,zstd:3"`, the grammar of `tdbf --filters`) through the C API,
//! so that every binding parses and prints specs the same way.

use super::constants::tdb_status_t;
use super::error::tdb_error_t;
use super::guard::{self, Out, arg, guard};
use super::pipeline::tdb_pipeline_t;
use crate::error::Error;
use std::ffi::{CStr, c_char};

/// Builds a pipeline from a spec: a comma-separated list of TileDB filter names in lower case,
/// each optionally followed by `:LEVEL` (or `:WINDOW`) and `:option=value` pairs, e.g.
/// `"bitshuffle,zstd:3"`, `"gzip:level=9"`, `"scale_float:factor=0.5:offset=0:byte_width=4"`.
/// `"none"` or `""` is the empty pipeline. A malformed spec is `TDB_ERR_INVALID_ARGUMENT`
/// naming the filter or option that failed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_from_spec(
    spec: *const c_char,
    pipeline: *mut *mut tdb_pipeline_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(pipeline, "pipeline")?;
        if spec.is_null() {
            return Err(Error::invalid("spec is NULL"));
        }
        // SAFETY: the caller passes a NUL-terminated string (checked non-NULL above).
        let text = unsafe { CStr::from_ptr(spec) }
            .to_str()
            .map_err(|_| Error::invalid("spec is not valid UTF-8"))?;
        let inner = crate::pipeline::spec::parse(text)?;
        out.set(tdb_pipeline_t::new_raw(inner));
        Ok(())
    })
}

/// Writes the pipeline's spec (the inverse of `tdb_pipeline_from_spec`) as a NUL-terminated
/// string into `buffer` (`capacity` bytes). `*size` receives the length including the NUL;
/// when `buffer` is NULL or too small, `*size` is still set and the call returns
/// `TDB_ERR_BUFFER_TOO_SMALL`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_to_spec(
    pipeline: *const tdb_pipeline_t,
    buffer: *mut c_char,
    capacity: usize,
    size: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg(pipeline, "pipeline")?;
        let size = Out::new(size, "size")?;
        let mut text = crate::pipeline::spec::to_spec(p.pipeline()).into_bytes();
        text.push(0);
        guard::copy_out(&text, buffer.cast::<u8>(), capacity, size, "pipeline spec")
    })
}
