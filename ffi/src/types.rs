//! The calls without a handle: the library names its own types (datatype sizes and names,
//! filter type names, status names; names are the lower-case names of pipeline specs and the
//! CLI, as static strings) and its version.

use super::constants::{STATUSES, status_c_name, tdb_datatype_t, tdb_filter_type_t, tdb_status_t};
use super::error::tdb_error_t;
use super::guard::{self, Out, guard, infallible};
use std::ffi::{CStr, CString, c_char};
use std::sync::OnceLock;
use tdbfilter::error::Error;
use tdbfilter::{Datatype, FilterType};

/// Lower-case C strings of `names`, in order.
fn lower_c_names(names: impl Iterator<Item = &'static str>) -> Vec<CString> {
    names
        .map(|n| CString::new(n.to_ascii_lowercase()).expect("names hold no NUL"))
        .collect()
}

/// The lower-case name of a datatype as a static C string (`"int32"`, `"string_utf8"`).
pub(crate) fn datatype_c_name(d: Datatype) -> &'static CStr {
    static NAMES: OnceLock<Vec<CString>> = OnceLock::new();
    let names = NAMES.get_or_init(|| lower_c_names(Datatype::ALL.iter().map(|d| d.name())));
    // Datatype::ALL holds every datatype at the index of its value.
    &names[d as usize]
}

/// The spec name of a filter type as a static C string (`"gzip"`, `"dictionary"`).
pub(crate) fn filter_type_c_name(t: FilterType) -> &'static CStr {
    static NAMES: OnceLock<Vec<CString>> = OnceLock::new();
    let names = NAMES.get_or_init(|| lower_c_names(FilterType::ALL.iter().map(|t| t.spec_name())));
    let index = FilterType::ALL
        .iter()
        .position(|x| *x == t)
        .expect("FilterType::ALL holds every filter type");
    &names[index]
}

/// The size in bytes of one value of `datatype`, as TileDB's `tiledb_datatype_size` (INT64 8,
/// STRING_UTF16 2, DATETIME_* 8, BLOB/BOOL/CHAR/ANY/GEOM_* 1, ...). An unknown datatype is
/// `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_datatype_size(
    datatype: tdb_datatype_t,
    size: *mut u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(size, "size")?;
        out.set(Datatype::try_from_u32(datatype)?.size() as u64);
        Ok(())
    })
}

/// The lower-case name of `datatype` (`"int32"`, `"float64"`, `"string_utf8"`,
/// `"datetime_ns"`, `"blob"`, ...): a static string, never freed. An unknown datatype is
/// `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_datatype_name(
    datatype: tdb_datatype_t,
    name: *mut *const c_char,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(name, "name")?;
        out.set(datatype_c_name(Datatype::try_from_u32(datatype)?).as_ptr());
        Ok(())
    })
}

/// The datatype named `name`, case-insensitively: `tdb_datatype_name`'s names and TileDB's own
/// spellings (`"INT64"`, `"TILEDB_INT64"`). An unknown name is `TDB_ERR_INVALID_ARGUMENT`
/// naming it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_datatype_from_name(
    name: *const c_char,
    datatype: *mut tdb_datatype_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(datatype, "datatype")?;
        let text = guard::c_str(name, "name")?;
        let d = Datatype::from_name(text)
            .ok_or_else(|| Error::invalid(format!("unknown datatype name '{text}'")))?;
        out.set(d as tdb_datatype_t);
        Ok(())
    })
}

/// The lower-case name of filter type `type`, as in pipeline specs (`"none"`, `"gzip"`,
/// `"bit_width_reduction"`, `"dictionary"`, `"aes_256_gcm"`, ...): a static string, never
/// freed. An unknown filter type is `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_filter_type_name(
    r#type: tdb_filter_type_t,
    name: *mut *const c_char,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(name, "name")?;
        out.set(filter_type_c_name(FilterType::from_u32(r#type)?).as_ptr());
        Ok(())
    })
}

/// The filter type named `name`, case-insensitively: `tdb_filter_type_name`'s names and
/// TileDB's own spellings (`"GZIP"`, `"DICTIONARY_ENCODING"`, `"FILTER_GZIP"`,
/// `"TILEDB_FILTER_GZIP"`). An unknown name is `TDB_ERR_INVALID_ARGUMENT` naming it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_filter_type_from_name(
    name: *const c_char,
    r#type: *mut tdb_filter_type_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(r#type, "type")?;
        let text = guard::c_str(name, "name")?;
        let t = FilterType::from_name(text)
            .ok_or_else(|| Error::invalid(format!("unknown filter type name '{text}'")))?;
        out.set(t as tdb_filter_type_t);
        Ok(())
    })
}

/// The name of a status: `"TDB_OK"`, `"TDB_ERR_INVALID_ARGUMENT"`, ...; any other value gives
/// `"TDB_ERR_UNKNOWN"`. A static string, never NULL and never freed.
#[unsafe(no_mangle)]
pub extern "C" fn tdb_status_name(status: i32) -> *const c_char {
    infallible(c"TDB_ERR_UNKNOWN", || {
        STATUSES
            .iter()
            .find(|s| **s as i32 == status)
            .map_or(c"TDB_ERR_UNKNOWN", |s| status_c_name(*s))
    })
    .as_ptr()
}

/// The library version, e.g. `"0.3.0"`.
#[unsafe(no_mangle)]
pub extern "C" fn tdb_version() -> *const c_char {
    static VERSION: &std::ffi::CStr = match std::ffi::CStr::from_bytes_with_nul(
        concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes(),
    ) {
        Ok(v) => v,
        Err(_) => c"unknown",
    };
    VERSION.as_ptr()
}
