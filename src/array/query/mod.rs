//! Queries over an opened [`Array`]: subarrays with several ranges per dimension, TileDB's
//! result layouts (row-major, col-major, global order, unordered), a per-cell condition hook,
//! aggregates answered from tile metadata where they can be, and results in bounded batches.
//! Built on the array core's public reads; see docs/ARRAY.md and TileDB 2.30's semantics.
//!
//! ```no_run
//! use tdbfilter::array::{Array, OpenOptions};
//! use tdbfilter::array::query::{Query, QueryLayout, Aggregate, AggregateOp};
//! let array = Array::open("my_array", &OpenOptions::default()).unwrap();
//! let cells = Query::new(&array)
//!     .fields(&["a"])
//!     .add_range("x", 1i32, 4i32)
//!     .add_range("x", 8i32, 9i32)
//!     .layout(QueryLayout::ColMajor)
//!     .submit()
//!     .unwrap();
//! let sums = Query::new(&array)
//!     .aggregate(Aggregate::of(AggregateOp::Sum, "a"))
//!     .submit()
//!     .unwrap();
//! ```

pub mod aggregate;
mod aggregate_tiles;
pub mod batch;
mod classify;
pub mod condition;
mod dense;
pub mod filter;
mod gather;
pub mod ranges;
mod sparse;
mod sparse_slabs;
mod tiles;

pub use aggregate::{Aggregate, AggregateOp, AggregateValue};
pub use batch::{BatchBuffers, BatchSizes, Batches, Filled};
pub use condition::QueryCondition;
pub use filter::{CellFilter, FnFilter};
pub use ranges::{MultiRange, RangeValue};

use crate::array::{Array, FieldData};
use crate::error::{Error, Result};
use aggregate::Accumulator;

/// The order of a query's result cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueryLayout {
    /// Row-major over the subarray (dense: over the concatenated ranges of each dimension;
    /// sparse: sorted by coordinates).
    #[default]
    RowMajor,
    /// Column-major over the subarray.
    ColMajor,
    /// The array's global order (one range per dimension).
    GlobalOrder,
    /// Any order (sparse arrays only); here the global order.
    Unordered,
}

impl QueryLayout {
    /// Parses `row`, `col`, `global` or `unordered` (or TileDB's names `row-major`,
    /// `col-major`, `global-order`).
    pub fn parse(text: &str) -> Result<QueryLayout> {
        Ok(match text {
            "row" | "row-major" => QueryLayout::RowMajor,
            "col" | "col-major" => QueryLayout::ColMajor,
            "global" | "global-order" => QueryLayout::GlobalOrder,
            "unordered" => QueryLayout::Unordered,
            _ => {
                return Err(Error::invalid(format!(
                    "unknown layout '{text}' (row, col, global, unordered)"
                )));
            }
        })
    }
}

/// What a query did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryStats {
    /// Tiles whose aggregates came from fragment metadata, without decoding.
    pub tiles_from_metadata: u64,
    /// Fragment tiles decoded by the query's tile paths (aggregates; sparse reads with a
    /// condition).
    pub tiles_decoded: u64,
    /// Fragment tiles skipped undecoded because the condition cannot hold in them (their
    /// min/max/null counts say so).
    pub tiles_pruned: u64,
    /// Bytes of decoded tiles (data, offsets, validity) in those tile paths.
    pub bytes_decoded: u64,
}

/// A query's answer: the fields' cells (reads) or the aggregates' values (when aggregates
/// were asked for).
#[derive(Clone, Debug, PartialEq)]
pub struct QueryResult {
    /// The requested fields' cells, in the requested order (empty for aggregate queries).
    pub fields: Vec<FieldData>,
    /// The aggregates: (label such as `sum(a)`, value), in the order asked for.
    pub aggregates: Vec<(String, AggregateValue)>,
    /// What the query did.
    pub stats: QueryStats,
}

/// A query being built over an array. Errors in the building steps (an unknown dimension, a
/// range out of its domain) are kept and returned by [`submit`](Query::submit).
pub struct Query<'a> {
    array: &'a Array,
    fields: Option<Vec<String>>,
    ranges: MultiRange,
    layout: QueryLayout,
    condition: Option<&'a dyn CellFilter>,
    aggregates: Vec<Aggregate>,
    error: Option<Error>,
}

impl<'a> Query<'a> {
    /// A query over the whole array, every field, row-major.
    pub fn new(array: &'a Array) -> Query<'a> {
        Query {
            array,
            fields: None,
            ranges: MultiRange::new(array.schema()),
            layout: QueryLayout::default(),
            condition: None,
            aggregates: Vec::new(),
            error: None,
        }
    }

    /// The fields (attributes or dimensions) to read, in this order (default: every
    /// dimension, then every attribute). Dense arrays compute dimension coordinates.
    pub fn fields(mut self, names: &[&str]) -> Self {
        self.fields = Some(names.iter().map(|s| s.to_string()).collect());
        self
    }

    /// Adds the inclusive range [`lo`, `hi`] to dimension `dim` (values of its type: `i64`
    /// for datetimes, `&str` for strings). Several ranges per dimension may be added.
    pub fn add_range<T: RangeValue>(mut self, dim: &str, lo: T, hi: T) -> Self {
        if self.error.is_none()
            && let Err(e) = self.ranges.add_typed(self.array.schema(), dim, lo, hi)
        {
            self.error = Some(e);
        }
        self
    }

    /// Adds a range given as bytes of the dimension's type.
    pub fn add_range_bytes(mut self, dim: &str, lo: &[u8], hi: &[u8]) -> Self {
        if self.error.is_none()
            && let Err(e) = self
                .ranges
                .add(self.array.schema(), dim, lo.to_vec(), hi.to_vec())
        {
            self.error = Some(e);
        }
        self
    }

    /// Sets every range at once.
    pub fn ranges(mut self, ranges: MultiRange) -> Self {
        self.ranges = ranges;
        self
    }

    /// The result layout.
    pub fn layout(mut self, layout: QueryLayout) -> Self {
        self.layout = layout;
        self
    }

    /// Filters cells by a condition (dense: failing cells read as fill values; sparse:
    /// dropped).
    pub fn condition(mut self, filter: Option<&'a dyn CellFilter>) -> Self {
        self.condition = filter;
        self
    }

    /// Asks for an aggregate instead of cells (repeatable).
    pub fn aggregate(mut self, agg: Aggregate) -> Self {
        self.aggregates.push(agg);
        self
    }

    /// Refuses what TileDB refuses, with its reasons (global order: after merging
    /// overlapping and adjacent ranges, as TileDB does).
    fn check(&self) -> Result<()> {
        let dense = self.array.schema().is_dense();
        if !self.aggregates.is_empty() {
            return Ok(());
        }
        match self.layout {
            QueryLayout::Unordered if dense => Err(Error::invalid(
                "unordered reads are not supported on dense arrays (TileDB: \
                 TILEDB_UNORDERED read is not supported for dense arrays)",
            )),
            QueryLayout::GlobalOrder if self.ranges.merged(self.array.schema()).is_multi() => Err(
                Error::invalid("multi-range reads are not supported on a global order query"),
            ),
            _ => Ok(()),
        }
    }

    fn field_names(&self) -> Vec<String> {
        match &self.fields {
            Some(f) => f.clone(),
            None => {
                let s = self.array.schema();
                s.dimensions
                    .iter()
                    .map(|d| d.name.clone())
                    .chain(s.attributes.iter().map(|a| a.name.clone()))
                    .collect()
            }
        }
    }

    /// Runs the query.
    pub fn submit(mut self) -> Result<QueryResult> {
        if let Some(e) = self.error {
            return Err(e);
        }
        self.check()?;
        let array = self.array;
        let schema = array.schema();
        if self.layout == QueryLayout::GlobalOrder {
            self.ranges = self.ranges.merged(schema);
        }
        let mut stats = QueryStats::default();
        if !self.aggregates.is_empty() {
            let mut accs: Vec<Accumulator> = self
                .aggregates
                .iter()
                .map(|a| Accumulator::new(schema, a))
                .collect::<Result<_>>()?;
            let fields: Vec<Option<String>> =
                self.aggregates.iter().map(|a| a.field.clone()).collect();
            if schema.is_dense() {
                let ranges = self.ranges.dense_ranges(schema)?;
                aggregate_tiles::dense(
                    array,
                    &ranges,
                    &fields,
                    &mut accs,
                    self.condition,
                    &mut stats,
                )?;
            } else {
                aggregate_tiles::sparse(
                    array,
                    &self.ranges,
                    &fields,
                    &mut accs,
                    self.condition,
                    &mut stats,
                )?;
            }
            let aggregates = self
                .aggregates
                .iter()
                .zip(&accs)
                .map(|(a, acc)| Ok((a.label(), acc.finish()?)))
                .collect::<Result<_>>()?;
            return Ok(QueryResult {
                fields: Vec::new(),
                aggregates,
                stats,
            });
        }
        let names = self.field_names();
        for n in &names {
            if schema.attribute_index(n).is_none() && schema.dimension_index(n).is_none() {
                return Err(Error::invalid(format!(
                    "'{n}' is not an attribute or dimension of the array"
                )));
            }
        }
        let fields = if schema.is_dense() {
            let ranges = self.ranges.dense_ranges(schema)?;
            dense::read(array, &names, &ranges, self.layout, self.condition)?
        } else {
            sparse::read(
                array,
                &names,
                &self.ranges,
                self.layout,
                self.condition,
                &mut stats,
            )?
        };
        Ok(QueryResult {
            fields,
            aggregates: Vec::new(),
            stats,
        })
    }

    /// Runs the query and hands its cells out in batches of at most `budget` bytes each
    /// (data, offsets and validity of every field), never splitting a cell. Reads are
    /// computed slab by slab as the batches are taken, each slab of about half the budget
    /// (dense: in fixed-size bytes, ending on tile boundaries; sparse: an interval of an
    /// integer slowest dimension sized from the fragments' cell counts and adapted to what
    /// each slab held; global order and unordered: whole space tiles of the dimension the
    /// tile order compares first), so memory stays near the budget and a few tiles. Sparse
    /// reads over a string or float slowest dimension, or in global order with Hilbert cells,
    /// are computed whole first. [`Batches::next_into`] writes batches into caller buffers
    /// instead.
    pub fn submit_batches(mut self, budget: u64) -> Result<Batches<'a>> {
        if !self.aggregates.is_empty() {
            return Err(Error::invalid(
                "aggregates come as one result, not in batches",
            ));
        }
        if let Some(e) = self.error {
            return Err(e);
        }
        self.check()?;
        let schema = self.array.schema();
        if self.layout == QueryLayout::GlobalOrder {
            self.ranges = self.ranges.merged(schema);
        }
        if schema.is_dense() && self.layout != QueryLayout::Unordered {
            let names = self.field_names();
            for n in &names {
                if schema.attribute_index(n).is_none() && schema.dimension_index(n).is_none() {
                    return Err(Error::invalid(format!(
                        "'{n}' is not an attribute or dimension of the array"
                    )));
                }
            }
            let ranges = self.ranges.dense_ranges(schema)?;
            return Ok(Batches::dense(
                self.array,
                names,
                ranges,
                self.layout,
                self.condition,
                budget,
            ));
        }
        if !schema.is_dense()
            && let Some(slabs) = sparse_slabs::SparseSlabs::new(
                self.array,
                self.field_names(),
                self.ranges.clone(),
                self.layout,
                self.condition,
                budget,
            )
        {
            let names = self.field_names();
            for n in &names {
                if schema.attribute_index(n).is_none() && schema.dimension_index(n).is_none() {
                    return Err(Error::invalid(format!(
                        "'{n}' is not an attribute or dimension of the array"
                    )));
                }
            }
            return Ok(Batches::sparse(slabs, budget));
        }
        let r = self.submit()?;
        Ok(Batches::new(r.fields, budget, r.stats))
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_random;
