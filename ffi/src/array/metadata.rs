//! The array metadata (`__meta` entries) of a `tdb_array_t`.

use super::tdb_array_t;
use crate::constants::{tdb_datatype_t, tdb_status_t};
use crate::error::tdb_error_t;
use crate::guard::{self, OptOut, Out, arg, guard};
use std::ffi::{CString, c_char, c_void};
use tdbfilter::error::{Error, Result};

/// The number of array metadata (`__meta`) entries visible at the open timestamps; read them
/// one by one with `tdb_array_metadata_entry`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_metadata_count(
    array: *const tdb_array_t,
    count: *mut u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = arg(array, "array")?;
        Out::new(count, "count")?.set(a.metadata()?.len() as u32);
        Ok(())
    })
}

/// Array metadata entry `index` (entries sorted by key): its key (NUL-terminated), datatype,
/// number of values and the values (`value_count × datatype size` bytes). The pointers are
/// valid while the array lives. Any output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_metadata_entry(
    array: *const tdb_array_t,
    index: u32,
    key: *mut *const c_char,
    datatype: *mut tdb_datatype_t,
    value_count: *mut u32,
    value: *mut *const c_void,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = arg(array, "array")?;
        let entries = a.metadata()?;
        let (k, e) = entries
            .get(index as usize)
            .ok_or_else(|| Error::invalid(format!("metadata index {index} out of range")))?;
        OptOut::new(key).set(k.as_ptr());
        OptOut::new(datatype).set(e.datatype as tdb_datatype_t);
        OptOut::new(value_count).set(e.value_num);
        OptOut::new(value).set(e.value.as_ptr().cast());
        Ok(())
    })
}

impl tdb_array_t {
    pub(super) fn metadata(
        &self,
    ) -> Result<&[(CString, tdbfilter::array::metadata::MetadataEntry)]> {
        if let Some(m) = self.metadata.get() {
            return Ok(m);
        }
        let loaded = self
            .inner
            .metadata()?
            .into_iter()
            .map(|e| (guard::c_string(&e.key), e))
            .collect();
        Ok(self.metadata.get_or_init(|| loaded))
    }
}
