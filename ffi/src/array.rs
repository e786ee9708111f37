//! `tdb_array_t`: opening TileDB array folders, reading cells, schema introspection,
//! fragment listing and tile-level access (src/array/).

use super::config::{config_of, tdb_config_t};
use super::constants::{tdb_datatype_t, tdb_status_t};
use super::error::tdb_error_t;
use super::guard::{self, OptOut, Out, arg, guard};
use super::pipeline::tdb_pipeline_t;
use super::result::tdb_result_t;
use std::ffi::{CString, c_char, c_void};
use tdbfilter::Pipeline;
use tdbfilter::array::read::tiles::{DecodedTile, TileKind};
use tdbfilter::array::schema::{Attribute, Dimension, Range};
use tdbfilter::array::subarray::SubarrayLayout;
use tdbfilter::array::{Array, FieldData, OpenOptions};
use tdbfilter::error::{Error, Result};

/// An opened TileDB array: its schema and the fragments visible at the open timestamps.
/// Reading from several threads through a `const` handle is safe.
pub struct tdb_array_t {
    pub(crate) inner: Array,
    /// The array metadata with C-string keys, loaded on first use.
    metadata: std::sync::OnceLock<Vec<(CString, tdbfilter::array::metadata::MetadataEntry)>>,
    /// Field names as C strings, attributes then dimensions (valid while the array lives).
    attr_names: Vec<CString>,
    dim_names: Vec<CString>,
    frag_names: Vec<CString>,
}

fn open(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamps: Option<(u64, u64)>,
    config: *const tdb_config_t,
    array: *mut *mut tdb_array_t,
) -> Result<()> {
    let out = Out::new(array, "array")?;
    let path = guard::c_str(path, "path")?;
    let key = guard::bytes(key.cast(), key_len, "key")?;
    let options = OpenOptions {
        key: (!key.is_empty()).then(|| key.to_vec()),
        timestamp_start: timestamps.map_or(0, |t| t.0),
        timestamp_end: timestamps.map(|t| t.1),
        threads: 0,
        memory_limit: None,
        config: config_of(config)?,
    };
    open_with(path, &options, out)
}

/// Opens the array at `path` with `options` into `out` (`tdb_array_open_with_options`).
pub(crate) fn open_with(
    path: &str,
    options: &OpenOptions,
    out: Out<*mut tdb_array_t>,
) -> Result<()> {
    let inner = Array::open(path, options)?;
    let s = inner.schema();
    let attr_names = s
        .attributes
        .iter()
        .map(|a| guard::c_string(&a.name))
        .collect();
    let dim_names = s
        .dimensions
        .iter()
        .map(|d| guard::c_string(&d.name))
        .collect();
    let frag_names = inner
        .fragments()
        .iter()
        .map(|f| guard::c_string(f.name()))
        .collect();
    out.set(guard::new_handle(tdb_array_t {
        inner,
        metadata: std::sync::OnceLock::new(),
        attr_names,
        dim_names,
        frag_names,
    }));
    Ok(())
}

/// Opens the array at `path` (a local path, `file://` URI, or `s3://`, `azure://`, `gs://`
/// URI configured from the environment) for reading at the current time, as TileDB opens it.
/// `key`/`key_len`: the 32-byte AES-256-GCM key of an encrypted array, or NULL and 0. Other
/// schemes, and object stores in a build without them, are `TDB_ERR_UNSUPPORTED`; a folder
/// that is not an array is `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_open(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    array: *mut *mut tdb_array_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        open(path, key, key_len, None, std::ptr::null(), array)
    })
}

/// [`tdb_array_open`] with object-store options (`config` may be NULL: the environment only).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_open_with_config(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    config: *const tdb_config_t,
    array: *mut *mut tdb_array_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || open(path, key, key_len, None, config, array))
}

/// Opens the array at `path` with the fragments of the timestamp range
/// [`timestamp_start`, `timestamp_end`] (milliseconds, inclusive) visible, as TileDB's
/// time travelling does.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_open_at(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamp_start: u64,
    timestamp_end: u64,
    array: *mut *mut tdb_array_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        open(
            path,
            key,
            key_len,
            Some((timestamp_start, timestamp_end)),
            std::ptr::null(),
            array,
        )
    })
}

/// [`tdb_array_open_at`] with object-store options (`config` may be NULL: the environment
/// only).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_open_at_with_config(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamp_start: u64,
    timestamp_end: u64,
    config: *const tdb_config_t,
    array: *mut *mut tdb_array_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        open(
            path,
            key,
            key_len,
            Some((timestamp_start, timestamp_end)),
            config,
            array,
        )
    })
}

/// Frees an array. NULL is a no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_free(array: *mut tdb_array_t) {
    // SAFETY: the caller passes NULL or an array from this library, not yet freed.
    unsafe { guard::free_handle(array) }
}

/// Sets how many threads decode the tiles of one read: 0 = all cores (the default), else 1
/// to 256; more is `TDB_ERR_INVALID_ARGUMENT`. Every array and pipeline with the same count
/// shares one thread pool, started on first use and kept for the process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_set_threads(
    array: *mut tdb_array_t,
    threads: u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = guard::arg_mut(array, "array")?;
        a.inner
            .set_threads(tdbfilter::pipeline::check_threads(threads.into())?);
        Ok(())
    })
}

/// Sets the most bytes one field's result may take (0 = no limit, the default). A read
/// needing more fails with `TDB_ERR_OUT_OF_MEMORY` naming the size and the limit, before
/// allocating. Set it when reading arrays from untrusted sources: damaged fragment metadata
/// or a damaged non-empty domain can otherwise claim results of any size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_set_memory_limit(
    array: *mut tdb_array_t,
    bytes: u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        guard::arg_mut(array, "array")?
            .inner
            .set_memory_limit((bytes != 0).then_some(bytes));
        Ok(())
    })
}

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

impl tdb_array_t {
    fn metadata(&self) -> Result<&[(CString, tdbfilter::array::metadata::MetadataEntry)]> {
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

/// The number of visible fragments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_fragment_count(
    array: *const tdb_array_t,
    count: *mut u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = arg(array, "array")?;
        Out::new(count, "count")?.set(a.inner.fragments().len() as u32);
        Ok(())
    })
}

/// Fragment `index` (oldest first; later fragments win in merges): its folder name (valid
/// while the array lives), timestamp range, format version, whether it is dense, its cells
/// (dense: including the padding of edge tiles) and tiles. Any output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_fragment(
    array: *const tdb_array_t,
    index: u32,
    name: *mut *const c_char,
    timestamp_start: *mut u64,
    timestamp_end: *mut u64,
    version: *mut u32,
    dense: *mut bool,
    cell_count: *mut u64,
    tile_count: *mut u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = arg(array, "array")?;
        let f = frag_at(a, index)?;
        let (t1, t2) = f.timestamps();
        OptOut::new(name).set(a.frag_names[index as usize].as_ptr());
        OptOut::new(timestamp_start).set(t1);
        OptOut::new(timestamp_end).set(t2);
        OptOut::new(version).set(f.meta.version);
        OptOut::new(dense).set(f.meta.dense);
        OptOut::new(cell_count).set(f.meta.cell_num());
        OptOut::new(tile_count).set(f.meta.tile_num());
        Ok(())
    })
}

fn frag_at(a: &tdb_array_t, index: u32) -> Result<&tdbfilter::array::Fragment> {
    a.inner.fragments().get(index as usize).ok_or_else(|| {
        Error::invalid(format!(
            "fragment index {index} out of range ({} fragments)",
            a.inner.fragments().len()
        ))
    })
}

/// Writes range `r`'s bounds (pointers into `r`, and their sizes) to the four outputs, all
/// checked non-NULL before any is written.
fn set_range(
    r: &Range,
    lo: *mut *const c_void,
    lo_size: *mut usize,
    hi: *mut *const c_void,
    hi_size: *mut usize,
) -> Result<()> {
    let (lo, lo_size, hi, hi_size) = (
        Out::new(lo, "lo")?,
        Out::new(lo_size, "lo_size")?,
        Out::new(hi, "hi")?,
        Out::new(hi_size, "hi_size")?,
    );
    lo.set(r.lo().as_ptr().cast());
    lo_size.set(r.lo().len());
    hi.set(r.hi().as_ptr().cast());
    hi_size.set(r.hi().len());
    Ok(())
}

/// Fragment `index`'s non-empty domain on dimension `dim`: `lo` (`*lo_size` bytes) and `hi`
/// (`*hi_size` bytes), valid while the array lives.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_fragment_non_empty_domain(
    array: *const tdb_array_t,
    index: u32,
    dim: u32,
    lo: *mut *const c_void,
    lo_size: *mut usize,
    hi: *mut *const c_void,
    hi_size: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let f = frag_at(arg(array, "array")?, index)?;
        let r = f
            .meta
            .non_empty_domain
            .as_ref()
            .and_then(|n| n.get(dim as usize))
            .ok_or_else(|| Error::invalid(format!("no non-empty domain for dimension {dim}")))?;
        set_range(r, lo, lo_size, hi, hi_size)
    })
}

/// The tile kinds of a field: `TDB_TILE_FIXED` (fixed data or var offsets), `TDB_TILE_VAR`,
/// `TDB_TILE_VALIDITY`.
pub type tdb_tile_kind_t = u32;
/// Fixed-size data, or the offsets tile of a var-size field (`a<i>.tdb`).
pub const TDB_TILE_FIXED: tdb_tile_kind_t = 0;
/// Var-size data (`a<i>_var.tdb`).
pub const TDB_TILE_VAR: tdb_tile_kind_t = 1;
/// Validity (`a<i>_validity.tdb`).
pub const TDB_TILE_VALIDITY: tdb_tile_kind_t = 2;

/// The array reader's tile kind for a C tile kind.
pub(super) fn tile_kind(k: tdb_tile_kind_t) -> Result<TileKind> {
    Ok(match k {
        TDB_TILE_FIXED => TileKind::Fixed,
        TDB_TILE_VAR => TileKind::Var,
        TDB_TILE_VALIDITY => TileKind::Validity,
        k => return Err(Error::invalid(format!("unknown tile kind {k}"))),
    })
}

/// The number of tiles of fragment `fragment`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_tile_count(
    array: *const tdb_array_t,
    fragment: u32,
    count: *mut u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let f = frag_at(arg(array, "array")?, fragment)?;
        Out::new(count, "count")?.set(f.meta.tile_num());
        Ok(())
    })
}

/// The number of cells of tile `tile` of fragment `fragment` (dense fragments: the full space
/// tile, padding included). A tile index at or past the fragment's tile count is
/// `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_tile_cell_count(
    array: *const tdb_array_t,
    fragment: u32,
    tile: u64,
    count: *mut u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let f = frag_at(arg(array, "array")?, fragment)?;
        let out = Out::new(count, "count")?;
        let n = f.meta.tile_num();
        if tile >= n {
            return Err(Error::invalid(format!(
                "tile {tile} of fragment {fragment} out of range ({n} tiles)"
            )));
        }
        out.set(f.meta.cell_num_of_tile(tile));
        Ok(())
    })
}

/// The minimum bounding rectangle (the R-tree leaf) of tile `tile` of sparse fragment
/// `fragment` on dimension `dim`: `lo` (`*lo_size` bytes) and `hi` (`*hi_size` bytes) in the
/// dimension's type (strings for string dimensions), valid while the array lives. A dense
/// fragment (no R-tree) or an index out of range is `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_tile_mbr(
    array: *const tdb_array_t,
    fragment: u32,
    tile: u64,
    dim: u32,
    lo: *mut *const c_void,
    lo_size: *mut usize,
    hi: *mut *const c_void,
    hi_size: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = arg(array, "array")?;
        let f = frag_at(a, fragment)?;
        if f.meta.dense {
            return Err(Error::invalid(format!(
                "fragment {fragment} ({}) is dense: it has no R-tree",
                f.name()
            )));
        }
        let mbrs = f.meta.mbrs(&f.schema, a.inner.key())?;
        let mbr = mbrs.get(tile as usize).ok_or_else(|| {
            Error::invalid(format!(
                "tile {tile} of fragment {fragment} out of range ({} R-tree leaves)",
                mbrs.len()
            ))
        })?;
        let r = mbr.get(dim as usize).ok_or_else(|| {
            Error::invalid(format!(
                "dimension {dim} out of range ({} dimensions)",
                mbr.len()
            ))
        })?;
        set_range(r, lo, lo_size, hi, hi_size)
    })
}

/// Where tile `tile` of kind `kind` of `field` in fragment `fragment` is stored: the file's
/// path as a NUL-terminated string in `path` (`capacity` bytes; `*path_size` receives the
/// length including the NUL, and a NULL or small buffer gives `TDB_ERR_BUFFER_TOO_SMALL`), the
/// byte offset and the filtered size. A field the fragment predates is `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_tile_location(
    array: *const tdb_array_t,
    fragment: u32,
    field: *const c_char,
    tile: u64,
    kind: tdb_tile_kind_t,
    path: *mut c_char,
    capacity: usize,
    path_size: *mut usize,
    offset: *mut u64,
    size: *mut u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = &arg(array, "array")?.inner;
        let name = guard::c_str(field, "field")?;
        let path_size = Out::new(path_size, "path_size")?;
        let (offset, size) = (Out::new(offset, "offset")?, Out::new(size, "size")?);
        let reader = a
            .tile_reader(fragment as usize, name)?
            .ok_or_else(|| Error::invalid(format!("the fragment predates field {name}")))?;
        let (p, off, n) = reader.location(tile, tile_kind(kind)?)?;
        guard::copy_c_string_out(p.as_str(), path, capacity, path_size, "the path")?;
        offset.set(off);
        size.set(n);
        Ok(())
    })
}

/// Reads and unfilters tile `tile` of `field` in fragment `fragment` with the right pipelines
/// (the schema's, at the fragment's format version, with the array's key): a result holding
/// the tile's cells in the fragment's order (dense fragments: the full space tile, padding
/// included), its offsets when var-size and validity when nullable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_tile_read(
    array: *const tdb_array_t,
    fragment: u32,
    field: *const c_char,
    tile: u64,
    result: *mut *mut tdb_result_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = &arg(array, "array")?.inner;
        let name = guard::c_str(field, "field")?;
        let out = Out::new(result, "result")?;
        let reader = a
            .tile_reader(fragment as usize, name)?
            .ok_or_else(|| Error::invalid(format!("the fragment predates field {name}")))?;
        if tile >= reader.tile_num() {
            return Err(Error::invalid(format!(
                "tile {tile} out of range ({} tiles)",
                reader.tile_num()
            )));
        }
        let DecodedTile {
            data,
            offsets,
            validity,
            cells,
        } = reader.decode(tile)?;
        let s = a.schema();
        let cvn = s
            .attributes
            .iter()
            .find(|x| x.name == name)
            .map(|x| x.cell_val_num)
            .or_else(|| {
                s.dimensions
                    .iter()
                    .find(|d| d.name == name)
                    .map(|d| d.cell_val_num)
            })
            .unwrap_or(1);
        out.set(tdb_result_t::new_raw(FieldData {
            name: name.to_string(),
            datatype: reader.datatype,
            cell_val_num: cvn,
            data,
            offsets,
            validity,
            cell_count: cells,
        }));
        Ok(())
    })
}
