//! Reading cells of a `tdb_array_t`: one field or several over a subarray, and the values of
//! an enumeration.

use super::tdb_array_t;
use crate::constants::tdb_status_t;
use crate::error::tdb_error_t;
use crate::guard::{self, Out, arg, guard};
use crate::result::tdb_result_t;
use std::ffi::{c_char, c_void};
use tdbfilter::array::schema::Range;
use tdbfilter::array::subarray::SubarrayLayout;
use tdbfilter::array::{Array, FieldData};
use tdbfilter::error::{Error, Result};

/// The subarray of a read: NULL and 0 for the whole non-empty domain, else per dimension an
/// inclusive [low, high] pair in the dimension's type, packed in dimension order
/// (`subarray_size` bytes, checked against the dimensions).
fn subarray(a: &Array, subarray: *const c_void, size: usize) -> Result<Option<Vec<Range>>> {
    if subarray.is_null() && size == 0 {
        return Ok(None);
    }
    let layout = SubarrayLayout::of(&a.schema().dimensions)?;
    if subarray.is_null() {
        return Err(Error::invalid(format!(
            "subarray is NULL but subarray_size is {size} (pass NULL and 0 to read the whole \
             non-empty domain); {layout}"
        )));
    }
    if size == 0 {
        return Err(Error::invalid(format!(
            "subarray_size is 0 but subarray is not NULL (pass NULL and 0 to read the whole \
             non-empty domain); {layout}"
        )));
    }
    let bytes = guard::bytes(subarray.cast(), size, "subarray")?;
    layout.split(bytes).map(Some)
}

/// Reads `field` (an attribute or dimension name) over `subarray`: NULL with `subarray_size` 0
/// for the whole non-empty domain, else an inclusive [low, high] pair per dimension in the
/// dimension's type, packed in dimension order, `subarray_size` bytes (the sum over dimensions
/// of 2 × the dimension's datatype size). A size that does not match, NULL with a non-zero
/// size or non-NULL with size 0 is `TDB_ERR_INVALID_ARGUMENT` naming the dimensions and their
/// types; a subarray on an array with a string dimension is `TDB_ERR_UNSUPPORTED`.
/// Dense arrays: the cells of the box in row-major order, fill values where nothing was
/// written. Sparse arrays: the visible cells in global order, after de-duplication. What this
/// reader cannot read exactly as TileDB would (delete conditions still to be applied, update
/// commits, sparse fragments in dense arrays) is `TDB_ERR_UNSUPPORTED` naming the feature.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_read(
    array: *const tdb_array_t,
    field: *const c_char,
    subarray: *const c_void,
    subarray_size: usize,
    result: *mut *mut tdb_result_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = &arg(array, "array")?.inner;
        let out = Out::new(result, "result")?;
        let field = guard::c_str(field, "field")?;
        let s = self::subarray(a, subarray, subarray_size)?;
        let inner = a.read(&[field], s.as_deref())?.remove(0);
        out.set(tdb_result_t::new_raw(inner));
        Ok(())
    })
}

/// Reads `field_count` fields in one pass (coordinates and tiles are located once): on success
/// `results[i]` (`field_count` slots) receives the result of `fields[i]`. Same subarray rules
/// and cell order as `tdb_array_read`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_read_fields(
    array: *const tdb_array_t,
    fields: *const *const c_char,
    field_count: usize,
    subarray: *const c_void,
    subarray_size: usize,
    results: *mut *mut tdb_result_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = &arg(array, "array")?.inner;
        let ptrs = guard::slice(fields, field_count, "fields")?;
        let names: Vec<&str> = ptrs
            .iter()
            .map(|p| guard::c_str(*p, "field"))
            .collect::<Result<_>>()?;
        let slots = guard::out_slots(results, field_count, "results")?;
        let s = self::subarray(a, subarray, subarray_size)?;
        let data = a.read(&names, s.as_deref())?;
        for (slot, inner) in slots.iter_mut().zip(data) {
            slot.write(tdb_result_t::new_raw(inner));
        }
        Ok(())
    })
}

/// The values of enumeration `name` (attribute cells of an attribute with this enumeration hold
/// indices into them) as a result: one cell per value, with offsets when the values are
/// var-size (strings). Free it with `tdb_result_free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_enumeration(
    array: *const tdb_array_t,
    name: *const c_char,
    values: *mut *mut tdb_result_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = &arg(array, "array")?.inner;
        let out = Out::new(values, "values")?;
        let name = guard::c_str(name, "name")?;
        let e = a.enumeration(name)?;
        let var = e.cell_val_num == tdbfilter::array::schema::VAR_NUM;
        let inner = FieldData {
            name: e.name.clone(),
            datatype: e.datatype,
            cell_val_num: e.cell_val_num,
            cell_count: e.len() as u64,
            offsets: var.then(|| e.offsets.clone()),
            validity: None,
            data: e.data,
        };
        out.set(tdb_result_t::new_raw(inner));
        Ok(())
    })
}
