//! Reading a query in bounded batches into caller buffers, as TileDB's incomplete queries do:
//! the caller sets each field's data (and offsets, validity) buffer, each submit fills what
//! fits with whole cells and says whether the read is complete, the next continues after it.

use super::tdb_query_t;
use crate::constants::{
    TDB_QUERY_COMPLETED, TDB_QUERY_INCOMPLETE, TDB_QUERY_UNINITIALIZED, tdb_query_status_t,
    tdb_status_t,
};
use crate::error::tdb_error_t;
use crate::guard::{self, OptOut, Out, guard};
use std::ffi::{c_char, c_void};
use tdbfilter::array::Array;
use tdbfilter::array::query::{BatchBuffers, Batches, CellFilter, Filled, Query};
use tdbfilter::error::{Error, Result};

/// A caller buffer: a pointer and its capacity in items, checked when set.
struct Raw<T> {
    ptr: *mut T,
    len: usize,
}

impl<T> Raw<T> {
    /// Checks the pointer and length now (NULL only with 0, aligned).
    fn new(ptr: *mut T, len: usize, name: &str) -> Result<Raw<T>> {
        guard::slice(ptr.cast_const(), len, name)?;
        Ok(Raw { ptr, len })
    }

    /// The capacity in bytes.
    fn bytes(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// The buffer as writable bytes.
    ///
    /// # Safety
    /// The caller of the `set` function keeps the buffer alive, writable and used by nothing
    /// else until `tdb_query_submit_batch` returns (the documented contract of the C API).
    unsafe fn get<'a>(&self, name: &str) -> Result<&'a mut [u8]> {
        guard::bytes_mut(self.ptr.cast::<u8>(), self.bytes(), name)
    }
}

/// One field's buffers for the next batch.
pub(super) struct FieldBuffer {
    name: String,
    data: Option<Raw<u8>>,
    offsets: Option<Raw<u64>>,
    validity: Option<Raw<u8>>,
}

/// A batch read in progress.
pub(super) struct Running {
    /// Borrows the array (which outlives the query, the C contract) and the query's boxed
    /// condition (dropped only after this: see `tdb_query_t::restart` and the field order).
    batches: Batches<'static>,
    /// Its fields, in order.
    fields: Vec<String>,
    /// What the last batch wrote.
    last: Filled,
}

/// The buffers entry of `field` in `q` (added, and any batch read restarted, when `field`
/// is new), after checking it names an attribute or dimension.
fn entry(q: &mut tdb_query_t, field: *const c_char) -> Result<&mut FieldBuffer> {
    let name = guard::c_str(field, "field")?;
    let schema = q.array()?.inner.schema();
    if schema.attribute_index(name).is_none() && schema.dimension_index(name).is_none() {
        return Err(Error::invalid(format!(
            "'{name}' is not an attribute or dimension of the array"
        )));
    }
    let i = match q.buffers.iter().position(|b| b.name == name) {
        Some(i) => i,
        None => {
            q.restart();
            q.buffers.push(FieldBuffer {
                name: name.to_string(),
                data: None,
                offsets: None,
                validity: None,
            });
            q.buffers.len() - 1
        }
    };
    Ok(&mut q.buffers[i])
}

/// Sets the buffer receiving the values of `field` (an attribute or dimension; fixed-size
/// cells, or the concatenated values of var-size cells), `data_size` bytes, for the next
/// `tdb_query_submit_batch`. Batches read the fields given buffers, in the order first set
/// (`tdb_query_add_field` is for `tdb_query_submit`); a field new to a batch read in
/// progress restarts it. The buffer is written by the submits (not copied): keep it alive
/// and unused by anything else until then; no two buffers of a query may overlap. Setting it again (another pointer or size) is
/// how a read continues into fresh buffers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_set_data_buffer(
    query: *mut tdb_query_t,
    field: *const c_char,
    data: *mut c_void,
    data_size: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let b = Raw::new(data.cast::<u8>(), data_size, "data")?;
        entry(guard::arg_mut(query, "query")?, field)?.data = Some(b);
        Ok(())
    })
}

/// Sets the buffer receiving the start of each var-size cell of `field` in its data buffer
/// (`offset_count` slots; one offset per cell, the first cell of each batch at 0, no extra
/// element), for the next `tdb_query_submit_batch`; required for var-size fields, refused at
/// submit for others. Written by the submits, not copied.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_set_offsets_buffer(
    query: *mut tdb_query_t,
    field: *const c_char,
    offsets: *mut u64,
    offset_count: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let b = Raw::new(offsets, offset_count, "offsets")?;
        entry(guard::arg_mut(query, "query")?, field)?.offsets = Some(b);
        Ok(())
    })
}

/// Sets the buffer receiving the validity of nullable `field` (one byte per cell, 0 null;
/// `validity_size` bytes), for the next `tdb_query_submit_batch`; required for nullable
/// fields, refused at submit for others. Written by the submits, not copied.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_set_validity_buffer(
    query: *mut tdb_query_t,
    field: *const c_char,
    validity: *mut u8,
    validity_size: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let b = Raw::new(validity, validity_size, "validity")?;
        entry(guard::arg_mut(query, "query")?, field)?.validity = Some(b);
        Ok(())
    })
}

/// Starts the batch read of `q` over the fields given buffers.
fn start(q: &tdb_query_t) -> Result<Running> {
    if !q.aggregates.is_empty() {
        return Err(Error::invalid(
            "aggregates come as one result from tdb_query_submit, not in batches",
        ));
    }
    // The slab budget of dense reads: the caller's buffers, so that what is computed ahead
    // stays near what one batch hands out.
    let budget: usize = q
        .buffers
        .iter()
        .map(|b| {
            b.data.as_ref().map_or(0, Raw::bytes)
                + b.offsets.as_ref().map_or(0, Raw::bytes)
                + b.validity.as_ref().map_or(0, Raw::bytes)
        })
        .sum();
    let fields: Vec<String> = q.buffers.iter().map(|b| b.name.clone()).collect();
    let refs: Vec<&str> = fields.iter().map(String::as_str).collect();
    let array: *const Array = &q.array()?.inner;
    // SAFETY: the array outlives the query (the C contract of tdb_query_create), so the
    // reference stays valid as long as the batches, which the query owns.
    let array: &'static Array = unsafe { &*array };
    let condition = q.condition.as_deref().map(|c| {
        let c: *const dyn CellFilter = c;
        // SAFETY: the condition is boxed (a stable address) and only replaced or dropped
        // after `restart` dropped the batches borrowing it; the query drops its batches
        // first (field order).
        unsafe { &*c }
    });
    let batches = Query::new(array)
        .fields(&refs)
        .ranges(q.ranges.clone())
        .layout(q.layout)
        .condition(condition)
        .submit_batches(budget as u64)?;
    Ok(Running {
        batches,
        fields,
        last: Filled::default(),
    })
}

/// Reads the next batch into the buffers set with `tdb_query_set_*_buffer` (every field
/// given any buffer needs a data buffer): as many whole cells as every buffer holds (a
/// var-size cell is never split), continuing after the previous batch; then
/// `tdb_query_status` says `TDB_QUERY_INCOMPLETE` (submit again, with the same or fresh
/// buffers) or `TDB_QUERY_COMPLETED`, and `tdb_query_result_size` what each field received.
/// Submitting a completed read starts it again. Reads are computed slab by slab, each within
/// about half the buffers' total size (global order and unordered: whole space tiles of the
/// dimension the tile order compares first), so the library holds about that and a few
/// tiles; sparse reads whose slowest dimension is a string or float one, or with Hilbert
/// cells in global order or unordered, are computed whole at the first submit. A next cell
/// larger than its buffer is `TDB_ERR_BUFFER_TOO_SMALL` naming the field and the bytes needed, with nothing consumed: retry with larger buffers. Changing
/// the layout, ranges or condition restarts the read. Aggregates are refused.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_submit_batch(
    query: *mut tdb_query_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let q = guard::arg_mut(query, "query")?;
        if q.buffers.is_empty() {
            return Err(Error::invalid(
                "no buffers are set (tdb_query_set_data_buffer)",
            ));
        }
        for b in &q.buffers {
            if b.data.is_none() {
                return Err(Error::invalid(format!(
                    "field '{}' has no data buffer",
                    b.name
                )));
            }
        }
        if q.running.is_none() || q.status == TDB_QUERY_COMPLETED {
            q.running = None;
            let r = start(q)?;
            q.stats = r.batches.stats();
            q.running = Some(r);
        }
        let mut bufs: Vec<BatchBuffers<'_>> = Vec::with_capacity(q.buffers.len());
        for b in &q.buffers {
            // SAFETY: the buffers were set for this submit; the caller keeps them alive and
            // unused by anything else until it returns (the contract of the set functions).
            let buffer = unsafe {
                BatchBuffers {
                    data: b.data.as_ref().expect("checked above").get("data")?,
                    offsets: b.offsets.as_ref().map(|o| o.get("offsets")).transpose()?,
                    validity: b.validity.as_ref().map(|v| v.get("validity")).transpose()?,
                }
            };
            bufs.push(buffer);
        }
        let running = q.running.as_mut().expect("started above");
        let filled = running.batches.next_into(&mut bufs);
        q.stats = running.batches.stats();
        let filled = filled?;
        q.status = if filled.complete {
            TDB_QUERY_COMPLETED
        } else {
            TDB_QUERY_INCOMPLETE
        };
        running.last = filled;
        Ok(())
    })
}

/// The status of the query's batch read: `TDB_QUERY_UNINITIALIZED` before the first
/// `tdb_query_submit_batch` (and after a change restarted it), `TDB_QUERY_INCOMPLETE` while
/// cells remain, `TDB_QUERY_COMPLETED` once every cell was handed out.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_status(
    query: *const tdb_query_t,
    status: *mut tdb_query_status_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let q = guard::arg(query, "query")?;
        Out::new(status, "status")?.set(q.status);
        Ok(())
    })
}

/// What the last `tdb_query_submit_batch` wrote for `field`: its cells (the same for every
/// field), bytes of data, offsets (one per cell of a var-size field, else 0) and validity
/// bytes (one per cell of a nullable field, else 0). Any output may be NULL. Before a batch
/// or for a field without buffers: `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_result_size(
    query: *const tdb_query_t,
    field: *const c_char,
    cell_count: *mut u64,
    data_size: *mut usize,
    offset_count: *mut usize,
    validity_size: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let q = guard::arg(query, "query")?;
        let name = guard::c_str(field, "field")?;
        let r = q
            .running
            .as_ref()
            .filter(|_| q.status != TDB_QUERY_UNINITIALIZED);
        let Some(r) = r else {
            return Err(Error::invalid(
                "no batch was read yet (tdb_query_submit_batch)",
            ));
        };
        let i = r
            .fields
            .iter()
            .position(|f| f == name)
            .ok_or_else(|| Error::invalid(format!("the batch read has no field '{name}'")))?;
        let s = r.last.sizes.get(i).copied().unwrap_or_default();
        OptOut::new(cell_count).set(r.last.cells);
        OptOut::new(data_size).set(s.data as usize);
        OptOut::new(offset_count).set((s.offsets / 8) as usize);
        OptOut::new(validity_size).set(s.validity as usize);
        Ok(())
    })
}
