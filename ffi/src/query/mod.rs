//! `tdb_query_t`: a query over an opened array (several ranges per dimension, TileDB's
//! result layouts, a condition in TileDB-Py's syntax, aggregates), built step by step and
//! submitted for its fields' cells (`tdb_result_t`, one per field) or its aggregates, or
//! read in bounded batches into caller buffers (batch.rs).

mod batch;
pub use batch::*;

use super::array::tdb_array_t;
use super::constants::{
    TDB_AGG_COUNT, TDB_AGG_MAX, TDB_AGG_MEAN, TDB_AGG_MIN, TDB_AGG_NULL_COUNT, TDB_AGG_SUM,
    TDB_COL_MAJOR, TDB_GLOBAL_ORDER, TDB_QUERY_UNINITIALIZED, TDB_ROW_MAJOR, TDB_UNORDERED,
    tdb_aggregate_op_t, tdb_datatype_t, tdb_layout_t, tdb_query_status_t, tdb_status_t,
};
use super::error::tdb_error_t;
use super::guard::{self, OptOut, Out, guard};
use super::result::tdb_result_t;
use std::ffi::{CString, c_char, c_void};
use tdbfilter::Datatype;
use tdbfilter::array::query::{
    Aggregate, AggregateOp, AggregateValue, CellFilter, MultiRange, Query, QueryCondition,
    QueryLayout, QueryStats,
};
use tdbfilter::error::{Error, Result};

/// One computed aggregate as C sees it.
struct AggregateOut {
    label: CString,
    datatype: Datatype,
    bytes: Option<Vec<u8>>,
}

impl AggregateOut {
    fn new(label: &str, value: &AggregateValue) -> AggregateOut {
        let (datatype, bytes) = match value {
            AggregateValue::Count(n) => (Datatype::Uint64, Some(n.to_le_bytes().to_vec())),
            AggregateValue::Int(n) => (Datatype::Int64, Some(n.to_le_bytes().to_vec())),
            AggregateValue::UInt(n) => (Datatype::Uint64, Some(n.to_le_bytes().to_vec())),
            AggregateValue::Float(x) => (Datatype::Float64, Some(x.to_le_bytes().to_vec())),
            AggregateValue::Null => (Datatype::Float64, None),
            AggregateValue::Value { datatype, bytes } => (*datatype, bytes.clone()),
        };
        AggregateOut {
            label: guard::c_string(label),
            datatype,
            bytes,
        }
    }
}

/// A query being built over an array. The array must outlive the query.
pub struct tdb_query_t {
    /// The batch read in progress. Declared first so that it is dropped before the
    /// condition it borrows.
    running: Option<batch::Running>,
    /// The status of the batch read.
    status: tdb_query_status_t,
    /// The caller buffers of the next batch, one per field in the order first set.
    buffers: Vec<batch::FieldBuffer>,
    array: *const tdb_array_t,
    fields: Vec<String>,
    ranges: MultiRange,
    layout: QueryLayout,
    /// Boxed: a running batch read borrows it at a stable address.
    condition: Option<Box<QueryCondition>>,
    aggregates: Vec<Aggregate>,
    /// The aggregates of the last submit.
    results: Vec<AggregateOut>,
    stats: QueryStats,
}

impl tdb_query_t {
    fn array(&self) -> Result<&tdb_array_t> {
        guard::arg(self.array, "the query's array")
    }

    /// Drops the batch read in progress: the query changed.
    fn restart(&mut self) {
        self.running = None;
        self.status = TDB_QUERY_UNINITIALIZED;
    }
}

/// Creates a query over `array`: every field, the whole array, row-major, no condition. The
/// array must stay open until the query is freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_create(
    array: *const tdb_array_t,
    query: *mut *mut tdb_query_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(query, "query")?;
        let a = guard::arg(array, "array")?;
        out.set(guard::new_handle(tdb_query_t {
            running: None,
            status: TDB_QUERY_UNINITIALIZED,
            buffers: Vec::new(),
            array,
            fields: Vec::new(),
            ranges: MultiRange::new(a.inner.schema()),
            layout: QueryLayout::RowMajor,
            condition: None,
            aggregates: Vec::new(),
            results: Vec::new(),
            stats: QueryStats::default(),
        }));
        Ok(())
    })
}

/// Frees a query. NULL is a no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_free(query: *mut tdb_query_t) {
    // SAFETY: the caller passes NULL or a query from this library, not yet freed.
    unsafe { guard::free_handle(query) }
}

/// Sets the result layout (TileDB's numbers: 0 row-major, 1 col-major, 2 global order,
/// 3 unordered). Anything else is `TDB_ERR_INVALID_ARGUMENT`; what TileDB refuses for the
/// array (unordered dense reads, multi-range global order) fails at submit.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_set_layout(
    query: *mut tdb_query_t,
    layout: tdb_layout_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let q = guard::arg_mut(query, "query")?;
        q.restart();
        q.layout = match layout {
            TDB_ROW_MAJOR => QueryLayout::RowMajor,
            TDB_COL_MAJOR => QueryLayout::ColMajor,
            TDB_GLOBAL_ORDER => QueryLayout::GlobalOrder,
            TDB_UNORDERED => QueryLayout::Unordered,
            other => {
                return Err(Error::invalid(format!(
                    "layout {other} is not a read layout (0 row-major, 1 col-major, 2 global \
                     order, 3 unordered)"
                )));
            }
        };
        Ok(())
    })
}

/// Adds the inclusive range [`lo`, `hi`] to dimension `dim_index` (values in the dimension's
/// type: `lo_size` and `hi_size` its size; any sizes for string dimensions). Several ranges
/// per dimension may be added; a dimension without one spans its domain. A bad index, size or
/// a range out of the domain is `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_add_range(
    query: *mut tdb_query_t,
    dim_index: u32,
    lo: *const c_void,
    lo_size: usize,
    hi: *const c_void,
    hi_size: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let q = guard::arg_mut(query, "query")?;
        let lo = guard::bytes(lo.cast(), lo_size, "lo")?;
        let hi = guard::bytes(hi.cast(), hi_size, "hi")?;
        let a = q.array()?;
        let schema = a.inner.schema();
        let d = schema.dimensions.get(dim_index as usize).ok_or_else(|| {
            Error::invalid(format!(
                "dimension index {dim_index} is out of range (the array has {})",
                schema.dimensions.len()
            ))
        })?;
        let mut ranges = q.ranges.clone();
        ranges.add(schema, &d.name, lo.to_vec(), hi.to_vec())?;
        q.restart();
        q.ranges = ranges;
        Ok(())
    })
}

/// Sets the condition (TileDB-Py's syntax, e.g. `a < 5 and s == 'x'`; NUL-terminated UTF-8),
/// typed against the array's schema now: bad text is `TDB_ERR_INVALID_ARGUMENT` naming the
/// column. NULL removes the condition. Dense reads give failing cells the fill value (null
/// where nullable), sparse reads drop them; aggregates take the passing cells (a dense
/// `count` counts every cell, as TileDB).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_set_condition(
    query: *mut tdb_query_t,
    text: *const c_char,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let q = guard::arg_mut(query, "query")?;
        if text.is_null() {
            q.restart();
            q.condition = None;
            return Ok(());
        }
        let text = guard::c_str(text, "text")?;
        let c = QueryCondition::parse(&q.array()?.inner, text)?;
        q.restart();
        q.condition = Some(Box::new(c));
        Ok(())
    })
}

/// Adds a field (attribute or dimension) to read; `tdb_query_submit` returns one result per
/// field, in the order added (none added: every dimension, then every attribute).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_add_field(
    query: *mut tdb_query_t,
    name: *const c_char,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let q = guard::arg_mut(query, "query")?;
        let name = guard::c_str(name, "name")?;
        let schema = q.array()?.inner.schema();
        if schema.attribute_index(name).is_none() && schema.dimension_index(name).is_none() {
            return Err(Error::invalid(format!(
                "'{name}' is not an attribute or dimension of the array"
            )));
        }
        q.fields.push(name.to_string());
        Ok(())
    })
}

/// Asks for an aggregate (`TDB_AGG_*`) of attribute `field` (NULL for `TDB_AGG_COUNT`)
/// instead of cells; repeatable. The values come from `tdb_query_aggregate` after submit.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_add_aggregate(
    query: *mut tdb_query_t,
    op: tdb_aggregate_op_t,
    field: *const c_char,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let q = guard::arg_mut(query, "query")?;
        let op = match op {
            TDB_AGG_SUM => AggregateOp::Sum,
            TDB_AGG_MIN => AggregateOp::Min,
            TDB_AGG_MAX => AggregateOp::Max,
            TDB_AGG_MEAN => AggregateOp::Mean,
            TDB_AGG_NULL_COUNT => AggregateOp::NullCount,
            TDB_AGG_COUNT => {
                if !field.is_null() {
                    return Err(Error::invalid("count takes no field (pass NULL)"));
                }
                q.aggregates.push(Aggregate::count());
                return Ok(());
            }
            other => {
                return Err(Error::invalid(format!(
                    "aggregate operator {other} is unknown (0 sum, 1 min, 2 max, 3 mean, \
                     4 null_count, 5 count)"
                )));
            }
        };
        let field = guard::c_str(field, "field")?;
        q.aggregates.push(Aggregate::of(op, field));
        Ok(())
    })
}

/// Runs the query. Reads: `results` (`result_count` slots, one per field: those added, else
/// every dimension then every attribute) receive the fields' cells, each freed with
/// `tdb_result_free`; a different count is `TDB_ERR_INVALID_ARGUMENT`. Aggregate queries take
/// NULL and 0 and keep their values for `tdb_query_aggregate`. What TileDB refuses (unordered
/// dense reads, multi-range global order) is `TDB_ERR_INVALID_ARGUMENT` with its reason.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_submit(
    query: *mut tdb_query_t,
    results: *mut *mut tdb_result_t,
    result_count: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let q = guard::arg_mut(query, "query")?;
        let array = &q.array()?.inner;
        let schema = array.schema();
        let names: Vec<String> = if q.fields.is_empty() {
            schema
                .dimensions
                .iter()
                .map(|d| d.name.clone())
                .chain(schema.attributes.iter().map(|a| a.name.clone()))
                .collect()
        } else {
            q.fields.clone()
        };
        let expected = if q.aggregates.is_empty() {
            names.len()
        } else {
            0
        };
        if result_count != expected {
            return Err(Error::invalid(format!(
                "the query returns {expected} results, result_count is {result_count}"
            )));
        }
        let slots = guard::out_slots(results, result_count, "results")?;
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut builder = Query::new(array)
            .ranges(q.ranges.clone())
            .layout(q.layout)
            .condition(q.condition.as_deref().map(|c| c as &dyn CellFilter));
        if q.aggregates.is_empty() {
            builder = builder.fields(&refs);
        }
        for a in &q.aggregates {
            builder = builder.aggregate(a.clone());
        }
        let r = builder.submit()?;
        q.stats = r.stats;
        q.results = r
            .aggregates
            .iter()
            .map(|(label, v)| AggregateOut::new(label, v))
            .collect();
        for (slot, f) in slots.iter_mut().zip(r.fields) {
            slot.write(tdb_result_t::new_raw(f));
        }
        Ok(())
    })
}

/// The number of aggregates computed by the last submit.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_aggregate_count(
    query: *const tdb_query_t,
    count: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let q = guard::arg(query, "query")?;
        Out::new(count, "count")?.set(q.results.len());
        Ok(())
    })
}

/// Aggregate `index` of the last submit: its label (`sum(a)`, `count`; NUL-terminated), the
/// value's datatype (UINT64 for counts, INT64/UINT64/FLOAT64 for sums, FLOAT64 for means, the
/// field's type for min and max) and bytes (`*size` bytes), and `*valid` 0 when there is no
/// value (the sum or mean of a nullable field without a valid cell, the min or max of nothing;
/// then `*value` is NULL and `*size` 0). Pointers stay valid until the next submit or free.
/// Any output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_aggregate(
    query: *const tdb_query_t,
    index: usize,
    label: *mut *const c_char,
    datatype: *mut tdb_datatype_t,
    value: *mut *const u8,
    size: *mut usize,
    valid: *mut u8,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let q = guard::arg(query, "query")?;
        let a = q.results.get(index).ok_or_else(|| {
            Error::invalid(format!(
                "aggregate index {index} is out of range (the query has {})",
                q.results.len()
            ))
        })?;
        OptOut::new(label).set(a.label.as_ptr());
        OptOut::new(datatype).set(a.datatype as tdb_datatype_t);
        OptOut::new(value).set(a.bytes.as_ref().map_or(std::ptr::null(), |b| b.as_ptr()));
        OptOut::new(size).set(a.bytes.as_ref().map_or(0, Vec::len));
        OptOut::new(valid).set(u8::from(a.bytes.is_some()));
        Ok(())
    })
}

/// What the last submit did: tiles answered from fragment metadata, tiles decoded, tiles the
/// condition pruned undecoded, and the bytes of decoded tiles (in the query's tile paths).
/// A batch read reports what its slabs computed so far (sparse slabs decode the tiles they
/// cross, some more than once; dense slabs report nothing). Any output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_query_stats(
    query: *const tdb_query_t,
    tiles_from_metadata: *mut u64,
    tiles_decoded: *mut u64,
    tiles_pruned: *mut u64,
    bytes_decoded: *mut u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let s = guard::arg(query, "query")?.stats;
        OptOut::new(tiles_from_metadata).set(s.tiles_from_metadata);
        OptOut::new(tiles_decoded).set(s.tiles_decoded);
        OptOut::new(tiles_pruned).set(s.tiles_pruned);
        OptOut::new(bytes_decoded).set(s.bytes_decoded);
        Ok(())
    })
}
