//! `tdb_writer_t`: writing one fragment into an array (src/array/write/), and the array-level
//! writes without a handle: `tdb_array_create` and the array metadata's put and delete.

use super::config::{config_of, tdb_config_t};
use super::constants::{tdb_datatype_t, tdb_layout_t, tdb_status_t, write_layout};
use super::error::tdb_error_t;
use super::guard::{self, Out, arg, arg_mut, guard};
use std::ffi::{CString, c_char, c_void};
use tdbfilter::Datatype;
use tdbfilter::array::metadata::{MetadataChange, MetadataEntry};
use tdbfilter::array::schema::ArraySchema;
use tdbfilter::array::{FieldBuffers, Writer};
use tdbfilter::error::{Error, Result};

/// Creates the array `path` from `schema_json` (the JSON `tdbf array info --json` prints, whole
/// or its `schema` member), as TileDB 2.30 creates it: the schema is checked with TileDB's
/// rules (a refusal is `TDB_ERR_INVALID_ARGUMENT` with TileDB's reason) and written in format
/// version 22. `key`/`key_len`: a 32-byte AES-256-GCM key to encrypt the array with, or NULL
/// and 0. An existing array is refused and left untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_create(
    path: *const c_char,
    schema_json: *const c_char,
    key: *const c_void,
    key_len: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        create(path, schema_json, key, key_len, std::ptr::null())
    })
}

/// [`tdb_array_create`] at a local path or object-store URI (`s3://`, `azure://`, `gs://`)
/// with object-store options (`config` may be NULL: the environment only).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_create_with_config(
    path: *const c_char,
    schema_json: *const c_char,
    key: *const c_void,
    key_len: usize,
    config: *const tdb_config_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || create(path, schema_json, key, key_len, config))
}

fn create(
    path: *const c_char,
    schema_json: *const c_char,
    key: *const c_void,
    key_len: usize,
    config: *const tdb_config_t,
) -> Result<()> {
    let path = guard::c_str(path, "path")?;
    let json = guard::c_str(schema_json, "schema_json")?;
    let key = optional_key(key, key_len)?;
    let schema = ArraySchema::from_json(json)?;
    tdbfilter::array::create(path, &schema, key, &config_of(config)?)
}

/// The key argument: NULL and 0 for none.
fn optional_key<'a>(key: *const c_void, key_len: usize) -> Result<Option<&'a [u8]>> {
    let key = guard::bytes(key.cast(), key_len, "key")?;
    Ok((!key.is_empty()).then_some(key))
}

/// Writes one array metadata entry into the array at `path`: `value_count` values of `type`
/// in `value` (`value_size` bytes, exactly `value_count` × the type's size), as one new
/// `__meta` file at `timestamp` (milliseconds; 0: now; UINT64_MAX is
/// `TDB_ERR_INVALID_ARGUMENT`), as TileDB writes it when an array
/// opened for writing closes. The entry replaces an earlier value of `name`. `key`/`key_len`:
/// the array's AES-256-GCM key, or NULL and 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_metadata_put(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamp: u64,
    name: *const c_char,
    r#type: tdb_datatype_t,
    value_count: u32,
    value: *const c_void,
    value_size: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let change = put_change(name, r#type, value_count, value, value_size)?;
        write_metadata(path, key, key_len, timestamp, change, std::ptr::null())
    })
}

/// [`tdb_array_metadata_put`] with object-store options (`config` may be NULL).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_metadata_put_with_config(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamp: u64,
    name: *const c_char,
    r#type: tdb_datatype_t,
    value_count: u32,
    value: *const c_void,
    value_size: usize,
    config: *const tdb_config_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let change = put_change(name, r#type, value_count, value, value_size)?;
        write_metadata(path, key, key_len, timestamp, change, config)
    })
}

/// Writes `count` array metadata changes into the array at `path` as ONE new `__meta` file at
/// `timestamp` (milliseconds; 0: now; UINT64_MAX is `TDB_ERR_INVALID_ARGUMENT`), as TileDB
/// writes the changes made while an array is open for writing when it closes. Change `i`
/// deletes `names[i]` when `deletes[i]` is non-zero (its type, count and value are then not
/// read), else puts `value_counts[i]` values of `types[i]` from `values[i]`
/// (`value_sizes[i]` bytes, exactly the count × the type's size). Later changes of a name win
/// over earlier ones. `count` 0 writes nothing. `key`/`key_len`: the array's AES-256-GCM key,
/// or NULL and 0; `config` (may be NULL): object-store options. A bad change is
/// `TDB_ERR_INVALID_ARGUMENT` and nothing is written.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tdb_array_metadata_write(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamp: u64,
    names: *const *const c_char,
    types: *const tdb_datatype_t,
    value_counts: *const u32,
    values: *const *const c_void,
    value_sizes: *const usize,
    deletes: *const u8,
    count: usize,
    config: *const tdb_config_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let names = guard::slice(names, count, "names")?;
        let types = guard::slice(types, count, "types")?;
        let value_counts = guard::slice(value_counts, count, "value_counts")?;
        let values = guard::slice(values, count, "values")?;
        let value_sizes = guard::slice(value_sizes, count, "value_sizes")?;
        let deletes = guard::slice(deletes, count, "deletes")?;
        let mut changes = Vec::with_capacity(count);
        for i in 0..count {
            changes.push(if deletes[i] != 0 {
                MetadataChange::Delete(guard::c_str(names[i], "names")?.to_string())
            } else {
                put_change(
                    names[i],
                    types[i],
                    value_counts[i],
                    values[i],
                    value_sizes[i],
                )?
            });
        }
        write_changes(path, key, key_len, timestamp, &changes, config)
    })
}

fn put_change(
    name: *const c_char,
    r#type: tdb_datatype_t,
    value_count: u32,
    value: *const c_void,
    value_size: usize,
) -> Result<MetadataChange> {
    let name = guard::c_str(name, "name")?;
    let datatype = Datatype::try_from_u32(r#type)?;
    let value = guard::bytes(value.cast(), value_size, "value")?;
    Ok(MetadataChange::Put(MetadataEntry::new(
        name,
        datatype,
        value_count,
        value,
    )?))
}

/// Deletes the array metadata entry `name` of the array at `path`: one new `__meta` file at
/// `timestamp` (milliseconds; 0: now; UINT64_MAX is `TDB_ERR_INVALID_ARGUMENT`) holding the
/// deletion, as TileDB writes it. Deleting a
/// key that has no value is not an error (TileDB's behaviour).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_metadata_delete(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamp: u64,
    name: *const c_char,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let name = guard::c_str(name, "name")?;
        let change = MetadataChange::Delete(name.to_string());
        write_metadata(path, key, key_len, timestamp, change, std::ptr::null())
    })
}

/// [`tdb_array_metadata_delete`] with object-store options (`config` may be NULL).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_metadata_delete_with_config(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamp: u64,
    name: *const c_char,
    config: *const tdb_config_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let name = guard::c_str(name, "name")?;
        let change = MetadataChange::Delete(name.to_string());
        write_metadata(path, key, key_len, timestamp, change, config)
    })
}

fn write_metadata(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamp: u64,
    change: MetadataChange,
    config: *const tdb_config_t,
) -> Result<()> {
    write_changes(path, key, key_len, timestamp, &[change], config)
}

fn write_changes(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamp: u64,
    changes: &[MetadataChange],
    config: *const tdb_config_t,
) -> Result<()> {
    let path = guard::c_str(path, "path")?;
    let key = optional_key(key, key_len)?;
    tdbfilter::array::write_metadata(path, key, Some(timestamp), changes, &config_of(config)?)?;
    Ok(())
}

/// A caller buffer set for the next `tdb_writer_submit`: its address and length, read only
/// inside that call (the caller keeps it alive until then, as with TileDB's query buffers).
#[derive(Clone, Copy)]
struct Borrowed<T> {
    ptr: *const T,
    len: usize,
}

impl<T> Borrowed<T> {
    /// Checks the pointer and length (NULL only with 0, aligned) now, at `set` time.
    fn new(ptr: *const T, len: usize, name: &str) -> Result<Borrowed<T>> {
        guard::slice(ptr, len, name)?;
        Ok(Borrowed { ptr, len })
    }

    /// The caller's items.
    ///
    /// # Safety
    /// The caller of the `set` function keeps the buffer alive and unchanged until
    /// `tdb_writer_submit` returns (the documented contract of the C API).
    unsafe fn get<'a>(&self, name: &str) -> Result<&'a [T]> {
        guard::slice(self.ptr, self.len, name)
    }
}

/// One field's buffers of the next batch.
#[derive(Default)]
struct FieldBatch {
    data: Option<Borrowed<u8>>,
    offsets: Option<Borrowed<u64>>,
    validity: Option<Borrowed<u8>>,
}

/// A writer of one fragment: opened on an array, given a batch of buffers per field, submitted
/// any number of times (see `tdb_writer_submit`), then committed by `tdb_writer_finalize`.
/// Freeing it without finalizing commits nothing. Not for use from several threads at once.
pub struct tdb_writer_t {
    /// `None` after `tdb_writer_finalize` (successful or not).
    inner: Option<Writer>,
    /// The buffers set since the last submit, by field name.
    batch: Vec<(String, FieldBatch)>,
    /// The committed fragment's name, after a successful finalize.
    fragment: Option<CString>,
}

impl tdb_writer_t {
    fn writer(&mut self) -> Result<&mut Writer> {
        self.inner
            .as_mut()
            .ok_or_else(|| Error::invalid("the writer was finalized: open a new one"))
    }

    /// The batch entry of `field`, checked against the schema now: `check` is the writer's
    /// check of the buffer kind (a field, a var-size field, a nullable field).
    fn field(
        &mut self,
        field: *const c_char,
        check: fn(&Writer, &str) -> Result<usize>,
    ) -> Result<&mut FieldBatch> {
        let name = guard::c_str(field, "field")?;
        check(self.writer()?, name)?;
        let i = match self.batch.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                self.batch.push((name.to_string(), FieldBatch::default()));
                self.batch.len() - 1
            }
        };
        Ok(&mut self.batch[i].1)
    }
}

/// Opens the array at `path` for writing one fragment at `timestamp` (milliseconds; 0: now,
/// as TileDB; UINT64_MAX, which no reader shows, is `TDB_ERR_INVALID_ARGUMENT`), with the array's latest schema at that time. `key`/`key_len`: the array's
/// AES-256-GCM key, or NULL and 0. Arrays whose schema is older than format version 22 are
/// `TDB_ERR_UNSUPPORTED`. The default layout is row-major for dense arrays, unordered for
/// sparse ones.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_writer_open(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamp: u64,
    writer: *mut *mut tdb_writer_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        writer_open(path, key, key_len, timestamp, std::ptr::null(), writer)
    })
}

/// [`tdb_writer_open`] at a local path or object-store URI with object-store options
/// (`config` may be NULL: the environment only). In an object store the fragment's files are
/// uploaded (multipart when large) and the commit object is written last by
/// `tdb_writer_finalize`. `sm.check_coord_dups` `false` in `config` writes sparse cells
/// without the duplicate check (see `tdb_config_set`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_writer_open_with_config(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamp: u64,
    config: *const tdb_config_t,
    writer: *mut *mut tdb_writer_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        writer_open(path, key, key_len, timestamp, config, writer)
    })
}

fn writer_open(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamp: u64,
    config: *const tdb_config_t,
    writer: *mut *mut tdb_writer_t,
) -> Result<()> {
    let out = Out::new(writer, "writer")?;
    let path = guard::c_str(path, "path")?;
    let key = optional_key(key, key_len)?;
    let mut inner = Writer::open(path, key, Some(timestamp), &config_of(config)?)?;
    if !config.is_null() && arg(config, "config")?.check_coord_dups == Some(false) {
        inner.set_check_coord_dups(false)?;
    }
    out.set(guard::new_handle(tdb_writer_t {
        inner: Some(inner),
        batch: Vec::new(),
        fragment: None,
    }));
    Ok(())
}

/// Frees a writer. A writer not finalized commits nothing: its partial fragment folder is
/// removed. NULL is a no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_writer_free(writer: *mut tdb_writer_t) {
    // SAFETY: the caller passes NULL or a writer from this library, not yet freed.
    unsafe { guard::free_handle(writer) }
}

/// Sets the order of the cells given (`TDB_ROW_MAJOR`, `TDB_COL_MAJOR`, `TDB_GLOBAL_ORDER`
/// for dense arrays; `TDB_UNORDERED`, `TDB_GLOBAL_ORDER` for sparse ones), before the first
/// submit.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_writer_set_layout(
    writer: *mut tdb_writer_t,
    layout: tdb_layout_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let layout = write_layout(layout)?;
        arg_mut(writer, "writer")?.writer()?.set_layout(layout)
    })
}

/// Sets how many threads filter the tiles: 0 = all cores (the default), else 1 to 256.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_writer_set_threads(
    writer: *mut tdb_writer_t,
    threads: u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let threads = tdbfilter::pipeline::check_threads(threads.into())?;
        arg_mut(writer, "writer")?.writer()?.set_threads(threads)
    })
}

/// Sets the box of a dense write: `[low, high]` of each dimension in order, each bound of the
/// dimension's type, packed (`subarray_size` bytes, checked against the dimensions). Without
/// it the box is the whole domain. A box outside the domain is `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_writer_set_subarray(
    writer: *mut tdb_writer_t,
    subarray: *const c_void,
    subarray_size: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let w = arg_mut(writer, "writer")?;
        let bytes = guard::bytes(subarray.cast(), subarray_size, "subarray")?;
        w.writer()?.set_subarray(bytes)
    })
}

/// Sets the cell values of `field` (an attribute, or a dimension of a sparse array) for the
/// next submit: fixed-size cells, or the concatenated values of var-size cells; `data_size`
/// bytes. The buffer is read by `tdb_writer_submit` (not copied): keep it alive and unchanged
/// until then.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_writer_set_data(
    writer: *mut tdb_writer_t,
    field: *const c_char,
    data: *const c_void,
    data_size: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let b = Borrowed::new(data.cast::<u8>(), data_size, "data")?;
        arg_mut(writer, "writer")?
            .field(field, Writer::field_index)?
            .data = Some(b);
        Ok(())
    })
}

/// Sets the start of each var-size cell of `field` in its data, in bytes (`offset_count`
/// offsets, one per cell, no extra element), for the next submit; read by
/// `tdb_writer_submit`, not copied.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_writer_set_offsets(
    writer: *mut tdb_writer_t,
    field: *const c_char,
    offsets: *const u64,
    offset_count: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let b = Borrowed::new(offsets, offset_count, "offsets")?;
        arg_mut(writer, "writer")?
            .field(field, Writer::var_field_index)?
            .offsets = Some(b);
        Ok(())
    })
}

/// Sets the validity of nullable `field` (one byte per cell, 0 null; `validity_size` bytes)
/// for the next submit; read by `tdb_writer_submit`, not copied.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_writer_set_validity(
    writer: *mut tdb_writer_t,
    field: *const c_char,
    validity: *const u8,
    validity_size: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let b = Borrowed::new(validity, validity_size, "validity")?;
        arg_mut(writer, "writer")?
            .field(field, Writer::nullable_field_index)?
            .validity = Some(b);
        Ok(())
    })
}

/// Writes the batch set since the last submit: every attribute (and, sparse, every dimension)
/// with the same cell count, offsets for var-size and validity for nullable fields. Dense
/// row- and col-major writes take one batch (the whole box); global-order and sparse writes
/// any number into one fragment: global-order batches are streamed, unordered ones kept and
/// sorted together at `tdb_writer_finalize` (as one batch of all their cells would be;
/// duplicates across batches the schema does not allow fail the finalize). Wrong sizes or cell counts, coordinates outside
/// the domain, duplicates the schema does not allow, or a missing field fail the call, and the
/// writer: nothing is committed, and later calls fail too.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_writer_submit(
    writer: *mut tdb_writer_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let w = arg_mut(writer, "writer")?;
        let batch = std::mem::take(&mut w.batch);
        let mut fields = Vec::with_capacity(batch.len());
        for (name, b) in &batch {
            // SAFETY: the buffers were checked when set, and the caller keeps them alive and
            // unchanged until this call returns (the contract of the `set` functions).
            let buffers = unsafe {
                FieldBuffers {
                    data: match &b.data {
                        Some(d) => d.get("data")?,
                        None => {
                            return Err(Error::invalid(format!(
                                "field {name} has offsets or validity but no data"
                            )));
                        }
                    },
                    offsets: b.offsets.map(|o| o.get("offsets")).transpose()?,
                    validity: b.validity.map(|v| v.get("validity")).transpose()?,
                }
            };
            fields.push((name.as_str(), buffers));
        }
        w.writer()?.submit_fields(&fields)
    })
}

/// Writes what is left and the fragment metadata, syncs them, then commits the fragment (its
/// `__commits/<name>.wrt` file, written last). On error nothing is committed. Either way the
/// writer is done: free it with `tdb_writer_free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_writer_finalize(
    writer: *mut tdb_writer_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let w = arg_mut(writer, "writer")?;
        let inner = w
            .inner
            .take()
            .ok_or_else(|| Error::invalid("the writer was finalized already"))?;
        let name = inner.finalize()?;
        w.fragment = Some(guard::c_string(&name));
        Ok(())
    })
}

/// The name of the fragment a successful `tdb_writer_finalize` committed
/// (`__<t>_<t>_<label>_22`), valid while the writer lives; before that,
/// `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_writer_fragment_name(
    writer: *const tdb_writer_t,
    name: *mut *const c_char,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(name, "name")?;
        let f = arg(writer, "writer")?
            .fragment
            .as_ref()
            .ok_or_else(|| Error::invalid("the writer has not committed a fragment"))?;
        out.set(f.as_ptr());
        Ok(())
    })
}
