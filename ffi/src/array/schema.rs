//! Schema introspection of a `tdb_array_t`: the schema JSON and facts, dimensions,
//! attributes, fill values and filter pipelines.

use super::tdb_array_t;
use crate::constants::{tdb_datatype_t, tdb_status_t};
use crate::error::tdb_error_t;
use crate::guard::{self, OptOut, Out, arg, guard};
use crate::pipeline::tdb_pipeline_t;
use std::ffi::{c_char, c_void};
use tdbfilter::Pipeline;
use tdbfilter::array::schema::{Attribute, Dimension};
use tdbfilter::error::{Error, Result};

/// The array's schema as JSON (what `tdbf array info --json` prints as `schema`, README
/// "Creating arrays": filters as specs, enumerations with their values, the current domain),
/// NUL-terminated, into `buffer` (`capacity` bytes). `*size` receives the length including the
/// NUL; when `buffer` is NULL or too small, `*size` is still set and the call returns
/// `TDB_ERR_BUFFER_TOO_SMALL`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_schema_json(
    array: *const tdb_array_t,
    buffer: *mut c_char,
    capacity: usize,
    size: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = &arg(array, "array")?.inner;
        let size = Out::new(size, "size")?;
        let mut s = a.schema().clone();
        for (name, _) in &a.schema().enumerations {
            s.loaded_enumerations.push(a.enumeration(name)?);
        }
        let text = s.to_json().to_string();
        guard::copy_c_string_out(&text, buffer, capacity, size, "the schema JSON")
    })
}

/// The array's schema facts: `array_type` 0 dense / 1 sparse, TileDB's layout numbers for
/// the tile and cell orders (0 row-major, 1 col-major, 4 Hilbert), the sparse tile capacity,
/// whether duplicates are allowed and the schema's format version. Any output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_schema_info(
    array: *const tdb_array_t,
    array_type: *mut u8,
    tile_order: *mut u8,
    cell_order: *mut u8,
    capacity: *mut u64,
    allows_dups: *mut bool,
    version: *mut u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let s = arg(array, "array")?.inner.schema();
        OptOut::new(array_type).set(s.array_type as u8);
        OptOut::new(tile_order).set(s.tile_order as u8);
        OptOut::new(cell_order).set(s.cell_order as u8);
        OptOut::new(capacity).set(s.capacity);
        OptOut::new(allows_dups).set(s.allows_dups);
        OptOut::new(version).set(s.version);
        Ok(())
    })
}

/// The number of dimensions.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_dimension_count(
    array: *const tdb_array_t,
    count: *mut u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let s = arg(array, "array")?.inner.schema();
        Out::new(count, "count")?.set(s.dimensions.len() as u32);
        Ok(())
    })
}

/// The number of attributes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_attribute_count(
    array: *const tdb_array_t,
    count: *mut u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let s = arg(array, "array")?.inner.schema();
        Out::new(count, "count")?.set(s.attributes.len() as u32);
        Ok(())
    })
}

fn dim_at(a: &tdb_array_t, index: u32) -> Result<&Dimension> {
    a.inner
        .schema()
        .dimensions
        .get(index as usize)
        .ok_or_else(|| Error::invalid(format!("dimension index {index} out of range")))
}

fn attr_at(a: &tdb_array_t, index: u32) -> Result<&Attribute> {
    a.inner
        .schema()
        .attributes
        .get(index as usize)
        .ok_or_else(|| Error::invalid(format!("attribute index {index} out of range")))
}

/// Dimension `index`: its name (valid while the array lives), datatype and cell_val_num
/// (`UINT32_MAX` for string dimensions). Any output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_dimension(
    array: *const tdb_array_t,
    index: u32,
    name: *mut *const c_char,
    datatype: *mut tdb_datatype_t,
    cell_val_num: *mut u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = arg(array, "array")?;
        let d = dim_at(a, index)?;
        OptOut::new(name).set(a.dim_names[index as usize].as_ptr());
        OptOut::new(datatype).set(d.datatype as tdb_datatype_t);
        OptOut::new(cell_val_num).set(d.cell_val_num);
        Ok(())
    })
}

/// Dimension `index`'s domain (`lo`, `hi`, each `*size` bytes) and tile extent (`*extent`
/// NULL when it has none); string dimensions have no domain (NULLs and 0). Any output may be
/// NULL. The pointers are valid while the array lives.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_dimension_domain(
    array: *const tdb_array_t,
    index: u32,
    lo: *mut *const c_void,
    hi: *mut *const c_void,
    size: *mut usize,
    extent: *mut *const c_void,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let d = dim_at(arg(array, "array")?, index)?;
        let (l, h, n) = match &d.domain {
            Some((l, h)) => (l.as_ptr().cast(), h.as_ptr().cast(), l.len()),
            None => (std::ptr::null(), std::ptr::null(), 0),
        };
        let e = d
            .tile_extent
            .as_ref()
            .map_or(std::ptr::null(), |e| e.as_ptr().cast());
        OptOut::new(lo).set(l);
        OptOut::new(hi).set(h);
        OptOut::new(size).set(n);
        OptOut::new(extent).set(e);
        Ok(())
    })
}

/// Attribute `index`: name (valid while the array lives), datatype, cell_val_num
/// (`UINT32_MAX` = var-size) and nullability. Any output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_attribute(
    array: *const tdb_array_t,
    index: u32,
    name: *mut *const c_char,
    datatype: *mut tdb_datatype_t,
    cell_val_num: *mut u32,
    nullable: *mut bool,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = arg(array, "array")?;
        let at = attr_at(a, index)?;
        OptOut::new(name).set(a.attr_names[index as usize].as_ptr());
        OptOut::new(datatype).set(at.datatype as tdb_datatype_t);
        OptOut::new(cell_val_num).set(at.cell_val_num);
        OptOut::new(nullable).set(at.nullable);
        Ok(())
    })
}

/// Attribute `index`'s fill value (`*size` bytes, valid while the array lives) and the
/// validity of fill cells (0 null, 1 valid). Any output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_attribute_fill_value(
    array: *const tdb_array_t,
    index: u32,
    value: *mut *const c_void,
    size: *mut usize,
    validity: *mut u8,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let at = attr_at(arg(array, "array")?, index)?;
        OptOut::new(value).set(at.fill_value.as_ptr().cast());
        OptOut::new(size).set(at.fill_value.len());
        OptOut::new(validity).set(at.fill_validity);
        Ok(())
    })
}

/// Which schema-wide pipeline `tdb_array_pipeline` returns for a field-less call.
pub type tdb_array_pipeline_kind_t = u32;
/// The field's own filters (attributes; dimensions with their effective filters).
pub const TDB_ARRAY_PIPELINE_FIELD: tdb_array_pipeline_kind_t = 0;
/// The schema's offsets filters (var-size offsets tiles).
pub const TDB_ARRAY_PIPELINE_OFFSETS: tdb_array_pipeline_kind_t = 1;
/// The schema's validity filters.
pub const TDB_ARRAY_PIPELINE_VALIDITY: tdb_array_pipeline_kind_t = 2;
/// The schema's coordinate filters.
pub const TDB_ARRAY_PIPELINE_COORDS: tdb_array_pipeline_kind_t = 3;

/// A new copy of a filter pipeline of the schema (free it with `tdb_pipeline_free`): the
/// filters of `field` for `TDB_ARRAY_PIPELINE_FIELD`, else the schema-wide pipeline `kind`
/// (`field` ignored). The pipeline has the schema's format version.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_pipeline(
    array: *const tdb_array_t,
    field: *const c_char,
    kind: tdb_array_pipeline_kind_t,
    pipeline: *mut *mut tdb_pipeline_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let s = arg(array, "array")?.inner.schema();
        let out = Out::new(pipeline, "pipeline")?;
        let p: Pipeline = match kind {
            TDB_ARRAY_PIPELINE_FIELD => {
                let name = guard::c_str(field, "field")?;
                if let Some(a) = s.attributes.iter().find(|a| a.name == name) {
                    a.filters.clone()
                } else if let Some(d) = s.dimensions.iter().find(|d| d.name == name) {
                    d.filters.clone()
                } else {
                    return Err(Error::invalid(format!("no field '{name}'")));
                }
            }
            TDB_ARRAY_PIPELINE_OFFSETS => s.offsets_filters.clone(),
            TDB_ARRAY_PIPELINE_VALIDITY => s.validity_filters.clone(),
            TDB_ARRAY_PIPELINE_COORDS => s.coords_filters.clone(),
            k => return Err(Error::invalid(format!("unknown pipeline kind {k}"))),
        };
        out.set(tdb_pipeline_t::new_raw(p));
        Ok(())
    })
}
