//! `tdb_result_t`: the cells of one field read from an array, or of one decoded tile.

use super::constants::{tdb_datatype_t, tdb_status_t};
use super::error::tdb_error_t;
use super::guard::{self, Out, arg, guard};
use tdbfilter::array::FieldData;

/// The cells of one field read from an array (or one decoded tile).
pub struct tdb_result_t {
    inner: FieldData,
}

impl tdb_result_t {
    /// A new result handle holding `inner`.
    pub(crate) fn new_raw(inner: FieldData) -> *mut tdb_result_t {
        guard::new_handle(tdb_result_t { inner })
    }
}

/// The cell values of a result, concatenated (valid until the result is freed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_result_data(
    result: *const tdb_result_t,
    data: *mut *const u8,
    size: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let r = &arg(result, "result")?.inner;
        Out::new(data, "data")?.set_slice(Some(&r.data), Out::new(size, "size")?);
        Ok(())
    })
}

/// Var-size fields: one u64 byte offset into the data per cell (`*count` = cells); fixed-size
/// fields give NULL and 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_result_offsets(
    result: *const tdb_result_t,
    offsets: *mut *const u64,
    count: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let r = &arg(result, "result")?.inner;
        Out::new(offsets, "offsets")?.set_slice(r.offsets.as_deref(), Out::new(count, "count")?);
        Ok(())
    })
}

/// Nullable attributes: one byte per cell, 0 null and 1 valid (`*count` = cells); other fields
/// give NULL and 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_result_validity(
    result: *const tdb_result_t,
    validity: *mut *const u8,
    count: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let r = &arg(result, "result")?.inner;
        Out::new(validity, "validity")?.set_slice(r.validity.as_deref(), Out::new(count, "count")?);
        Ok(())
    })
}

/// The number of cells of a result.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_result_cell_count(
    result: *const tdb_result_t,
    count: *mut u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let r = &arg(result, "result")?.inner;
        Out::new(count, "count")?.set(r.cell_count);
        Ok(())
    })
}

/// The datatype and cell_val_num (`UINT32_MAX` = var-size) of a result's field.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_result_type(
    result: *const tdb_result_t,
    datatype: *mut tdb_datatype_t,
    cell_val_num: *mut u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let r = &arg(result, "result")?.inner;
        let (d, c) = (
            Out::new(datatype, "datatype")?,
            Out::new(cell_val_num, "cell_val_num")?,
        );
        d.set(r.datatype as tdb_datatype_t);
        c.set(r.cell_val_num);
        Ok(())
    })
}

/// Frees a result. NULL is a no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_result_free(result: *mut tdb_result_t) {
    // SAFETY: the caller passes NULL or a result from this library, not yet freed.
    unsafe { guard::free_handle(result) }
}
