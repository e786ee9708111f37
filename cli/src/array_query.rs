//! `tdbf array cat --range/--layout` and `tdbf array agg`: queries with several ranges per
//! dimension, TileDB's result layouts and aggregates (src/array/query/).

use crate::common::{CliResult, Failure, parse_coordinate, print_json};
use clap::Args;
use serde::{Serialize, Serializer};
use std::io::Write;
use tdbfilter::array::query::{
    Aggregate, AggregateOp, AggregateValue, CellFilter, Query, QueryCondition, QueryLayout,
    QueryStats,
};
use tdbfilter::array::schema::ArraySchema;
use tdbfilter::array::{Array, FieldData};

/// `tdbf array agg`.
#[derive(Debug, Args)]
pub struct AggArgs {
    #[command(flatten)]
    pub open: crate::array::OpenArgs,
    /// An aggregate FUNC:FIELD (count, sum, min, max, mean, null_count; `count` alone counts
    /// cells); repeat for several.
    #[arg(long = "agg", value_name = "FUNC:FIELD", required = true)]
    pub aggs: Vec<String>,
    /// A range DIM=LO:HI (repeatable, several per dimension; a dimension without one: its
    /// whole domain).
    #[arg(long = "range", value_name = "DIM=LO:HI")]
    pub ranges: Vec<String>,
    /// A query condition in TileDB-Py's syntax: aggregates over the passing cells (a dense
    /// `count` counts every cell, as TileDB).
    #[arg(long, value_name = "EXPR")]
    pub cond: Option<String>,
    /// Also print, on standard error, how many tiles were answered from fragment metadata,
    /// decoded and pruned by the condition, and the bytes decoded.
    #[arg(long)]
    pub stats: bool,
}

/// Parses `--layout`.
pub fn parse_layout(text: &str) -> CliResult<QueryLayout> {
    QueryLayout::parse(text).map_err(|e| Failure::from(e).context("--layout"))
}

/// Adds the `--range DIM=LO:HI` options to `q`.
fn with_ranges<'a>(
    schema: &ArraySchema,
    mut q: Query<'a>,
    ranges: &[String],
) -> CliResult<Query<'a>> {
    for r in ranges {
        let bad = || Failure::new(format!("--range: '{r}' is not DIM=LO:HI"));
        let (dim, span) = r.split_once('=').ok_or_else(bad)?;
        let d = schema
            .dimensions
            .iter()
            .find(|d| d.name == dim)
            .ok_or_else(|| Failure::new(format!("--range: '{dim}' is not a dimension")))?;
        let (lo, hi) = span.split_once(':').ok_or_else(bad)?;
        if d.is_var() {
            q = q.add_range_bytes(dim, lo.as_bytes(), hi.as_bytes());
        } else {
            q = q.add_range_bytes(
                dim,
                &parse_coordinate("--range", d.datatype, lo)?,
                &parse_coordinate("--range", d.datatype, hi)?,
            );
        }
    }
    Ok(q)
}

/// Parses `--cond` against the array.
fn parse_cond(array: &Array, text: Option<&str>) -> CliResult<Option<QueryCondition>> {
    text.map(|t| QueryCondition::parse(array, t).map_err(|e| Failure::from(e).context("--cond")))
        .transpose()
}

/// Prints the query's statistics as one JSON line on standard error.
fn print_stats(stats: &QueryStats) {
    eprintln!(
        "{{\"tiles_from_metadata\":{},\"tiles_decoded\":{},\"tiles_pruned\":{},\"bytes_decoded\":{}}}",
        stats.tiles_from_metadata, stats.tiles_decoded, stats.tiles_pruned, stats.bytes_decoded
    );
}

/// `tdbf array cat` with `--range`, `--layout` or `--cond`: the fields' cells as the query
/// returns them.
pub fn read(
    array: &Array,
    fields: &[&str],
    ranges: &[String],
    layout: Option<&str>,
    cond: Option<&str>,
    stats: bool,
) -> CliResult<Vec<FieldData>> {
    let cond = parse_cond(array, cond)?;
    let mut q = Query::new(array)
        .fields(fields)
        .condition(cond.as_ref().map(|c| c as &dyn CellFilter));
    if let Some(l) = layout {
        q = q.layout(parse_layout(l)?);
    }
    let q = with_ranges(array.schema(), q, ranges)?;
    let result = q.submit()?;
    if stats {
        print_stats(&result.stats);
    }
    Ok(result.fields)
}

/// `tdbf array agg`: one JSON object, label → value (`count`, `sum(a)`, …); NaN prints as
/// `"NaN"`, a min or max of no value as `null`.
pub fn agg(args: &AggArgs, out: &mut impl Write) -> CliResult<()> {
    let array = args.open.open()?;
    let cond = parse_cond(&array, args.cond.as_deref())?;
    let mut q = Query::new(&array).condition(cond.as_ref().map(|c| c as &dyn CellFilter));
    for a in &args.aggs {
        let agg = match a.split_once(':') {
            None if a == "count" => Aggregate::count(),
            Some(("count", _)) => Aggregate::count(),
            Some((op, field)) => Aggregate::of(AggregateOp::parse(op)?, field),
            None => {
                return Err(Failure::new(format!("--agg: '{a}' is not FUNC:FIELD")));
            }
        };
        q = q.aggregate(agg);
    }
    let q = with_ranges(array.schema(), q, &args.ranges)?;
    let result = q.submit()?;
    print_json(out, &AggJson(&result.aggregates))?;
    if args.stats {
        print_stats(&result.stats);
    }
    Ok(())
}

/// The aggregates as one JSON object.
struct AggJson<'a>(&'a [(String, AggregateValue)]);

impl Serialize for AggJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, ValueJson(v))))
    }
}

struct ValueJson<'a>(&'a AggregateValue);

impl Serialize for ValueJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let float = |s: S, x: f64| {
            if x.is_nan() {
                s.serialize_str("NaN")
            } else if x.is_infinite() {
                s.serialize_str(if x > 0.0 { "inf" } else { "-inf" })
            } else {
                s.serialize_f64(x)
            }
        };
        match self.0 {
            AggregateValue::Count(n) => s.serialize_u64(*n),
            AggregateValue::Int(n) => s.serialize_i64(*n),
            AggregateValue::UInt(n) => s.serialize_u64(*n),
            AggregateValue::Float(x) => float(s, *x),
            AggregateValue::Value { bytes: None, .. } | AggregateValue::Null => s.serialize_none(),
            AggregateValue::Value {
                datatype,
                bytes: Some(b),
            } => crate::array::JsonValue {
                datatype: *datatype,
                bytes: b,
            }
            .serialize(s),
        }
    }
}
