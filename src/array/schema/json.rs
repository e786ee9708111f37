//! The JSON description of an array schema (docs/ARRAYS.md): the `schema` member
//! `tdbf array info --json` prints, read back by `tdbf array create --schema` and
//! [`crate::array::create`], so an existing array's schema can be cloned.
//!
//! ```
//! use tdbfilter::array::schema::ArraySchema;
//! let s = ArraySchema::from_json(r#"{
//!     "sparse": false,
//!     "dimensions": [{"name": "x", "type": "INT32", "domain": [0, 99], "tile": 10}],
//!     "attributes": [{"name": "a", "type": "FLOAT64", "filters": "zstd:3"}]
//! }"#).unwrap();
//! assert_eq!(s.attributes[0].fill_value, f64::NAN.to_le_bytes());
//! assert_eq!(ArraySchema::from_json(&s.to_json().to_string()).unwrap().to_json(), s.to_json());
//! ```
//!
//! Values: integer, datetime and time values are JSON integers; floats are numbers, or the
//! strings `"NaN"`, `"inf"`, `"-inf"`; the other types (strings, CHAR, BLOB, ANY, …) are a
//! string when their bytes are UTF-8 and a list of byte values otherwise. A cell of several
//! numbers is a list. Pipelines are specs (`"bitshuffle,zstd:3"`, see `pipeline::spec`), or
//! `{"filters": spec, "max_chunk_size": n}` when the chunk size is not TileDB's 65536; a
//! dimension's own pipeline that equals the coords filters carries `"own": true` (without it,
//! such a dimension is stored as using the coords filters, as TileDB stores dimensions
//! created without filters).
//! Members a schema to create may leave out take TileDB's defaults.

use super::check::{integer_range, null_extent_fill};
use super::{
    ArraySchema, ArrayType, Attribute, Dimension, Enumeration, Layout, Range, VAR_NUM,
    default_fill_value,
};
use crate::array::value;
use crate::error::{Error, Result};
use crate::filters::config::Filter;
use crate::format::chunking::CHUNK_SIZE;
use crate::format::datatype::Datatype;
use crate::format::filter_type::FilterType;
use crate::format::format_version::FORMAT_VERSION;
use crate::pipeline::{Pipeline, spec};
use serde_json::{Map, Number, Value};

/// TileDB's default tile capacity of sparse arrays (`constants::capacity`).
pub const DEFAULT_CAPACITY: u64 = 10_000;

impl ArraySchema {
    /// The schema as JSON, member for member what `tdbf array info --json` prints as
    /// `schema`. Enumerations whose values are loaded print as objects with their values
    /// (otherwise by name); a non-empty current domain, a non-default attribute order and a
    /// pipeline chunk size other than 65536 print only where present.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), self.name.clone().into());
        m.insert("version".into(), self.version.into());
        m.insert("sparse".into(), (!self.is_dense()).into());
        m.insert("allows_duplicates".into(), self.allows_dups.into());
        m.insert("tile_order".into(), self.tile_order.name().into());
        m.insert("cell_order".into(), self.cell_order.name().into());
        m.insert("capacity".into(), self.capacity.into());
        m.insert("coords_filters".into(), pipeline_json(&self.coords_filters));
        m.insert(
            "offsets_filters".into(),
            pipeline_json(&self.offsets_filters),
        );
        m.insert(
            "validity_filters".into(),
            pipeline_json(&self.validity_filters),
        );
        let dims = self
            .dimensions
            .iter()
            .map(|d| dimension_json(d, &self.coords_filters))
            .collect();
        m.insert("dimensions".into(), Value::Array(dims));
        let attrs = self.attributes.iter().map(attribute_json).collect();
        m.insert("attributes".into(), Value::Array(attrs));
        m.insert("dimension_labels".into(), self.labels.len().into());
        let enums = self
            .enumerations
            .iter()
            .map(
                |(name, _)| match self.loaded_enumerations.iter().find(|e| &e.name == name) {
                    Some(e) => enumeration_json(e),
                    None => name.clone().into(),
                },
            )
            .collect();
        m.insert("enumerations".into(), Value::Array(enums));
        if let Some(ranges) = &self.current_domain {
            let rs = ranges
                .iter()
                .zip(&self.dimensions)
                .map(|(r, d)| range_json(d.datatype, r))
                .collect();
            m.insert("current_domain".into(), Value::Array(rs));
        }
        Value::Object(m)
    }

    /// Reads a schema description: the JSON of [`ArraySchema::to_json`], or the whole output
    /// of `tdbf array info --json` (its `schema` member is taken). Members left out take
    /// TileDB's defaults; unknown members are refused; the schema is then checked with
    /// [`ArraySchema::check`] (TileDB's rules and reasons). Enumerations keep no file name:
    /// [`crate::array::create`] names their files.
    pub fn from_json(json: &str) -> Result<ArraySchema> {
        let v: Value =
            serde_json::from_str(json).map_err(|e| Error::invalid(format!("schema JSON: {e}")))?;
        ArraySchema::from_json_value(&v)
    }

    /// [`ArraySchema::from_json`] on parsed JSON.
    pub fn from_json_value(v: &Value) -> Result<ArraySchema> {
        let obj = v
            .as_object()
            .ok_or_else(|| Error::invalid("schema JSON: not an object"))?;
        let obj = match obj.get("schema") {
            Some(Value::Object(inner)) if !obj.contains_key("dimensions") => inner,
            _ => obj,
        };
        let schema = schema_from_json(obj).map_err(|e| e.context("schema JSON"))?;
        schema.check()?;
        Ok(schema)
    }
}

// ---- Values ----

/// Types whose values are numbers in JSON.
fn is_numeric(t: Datatype) -> bool {
    t.is_integer() || t.is_real() || t.is_datetime() || t.is_time()
}

/// Types whose whole cell is one string (as `tdbf array cat` prints them).
fn is_text(t: Datatype) -> bool {
    matches!(
        t,
        Datatype::Char | Datatype::StringAscii | Datatype::StringUtf8 | Datatype::Any
    ) || t.is_byte()
}

/// Bytes as a string when they are UTF-8, else as a list of byte values.
fn bytes_json(b: &[u8]) -> Value {
    match std::str::from_utf8(b) {
        Ok(s) => s.into(),
        Err(_) => Value::Array(b.iter().map(|&x| x.into()).collect()),
    }
}

fn bytes_from_json(v: &Value, what: &str) -> Result<Vec<u8>> {
    match v {
        Value::String(s) => Ok(s.as_bytes().to_vec()),
        Value::Array(items) => items
            .iter()
            .map(|i| {
                i.as_u64()
                    .and_then(|b| u8::try_from(b).ok())
                    .ok_or_else(|| Error::invalid(format!("{what}: {i} is not a byte value")))
            })
            .collect(),
        _ => Err(Error::invalid(format!(
            "{what}: expected a string or a list of byte values, got {v}"
        ))),
    }
}

/// A float as JSON: integral values as integers (as Rust prints them), others in their
/// shortest round-trip form, non-finite ones as `"NaN"`, `"inf"`, `"-inf"`.
fn float_json(v: f64, text: String) -> Value {
    if !v.is_finite() {
        return text.into();
    }
    if v.fract() == 0.0 && v.abs() < 9.0e15 && !(v == 0.0 && v.is_sign_negative()) {
        return (v as i64).into();
    }
    // `text` is the shortest decimal that reads back as the value in its own type (f32 or
    // f64); as an f64 it prints with the same digits.
    let shortest: f64 = text.parse().unwrap_or(v);
    Number::from_f64(shortest).map_or_else(|| text.into(), Value::Number)
}

/// One value of `t` as JSON.
fn value_json(t: Datatype, b: &[u8]) -> Value {
    match t {
        Datatype::Float32 => {
            let v = f32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
            float_json(v as f64, format!("{v}"))
        }
        Datatype::Float64 => {
            let v = f64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
            float_json(v, format!("{v}"))
        }
        t if is_numeric(t) => match value::as_i128(t, b) {
            Ok(v) if v < 0 => (v as i64).into(),
            Ok(v) => (v as u64).into(),
            Err(_) => Value::Null,
        },
        _ => bytes_json(b),
    }
}

/// One value of `t` from JSON (`what` names it in errors).
fn value_from_json(t: Datatype, v: &Value, what: &str) -> Result<Vec<u8>> {
    let bad = || Error::invalid(format!("{what}: {v} is not a {t} value"));
    match t {
        Datatype::Float32 | Datatype::Float64 => {
            let f = match v {
                Value::Number(n) => n.as_f64().ok_or_else(bad)?,
                Value::String(s) => match s.as_str() {
                    "NaN" => f64::NAN,
                    "inf" => f64::INFINITY,
                    "-inf" => f64::NEG_INFINITY,
                    _ => return Err(bad()),
                },
                _ => return Err(bad()),
            };
            Ok(if t == Datatype::Float32 {
                (f as f32).to_le_bytes().to_vec()
            } else {
                f.to_le_bytes().to_vec()
            })
        }
        t if is_numeric(t) => {
            let n = match v {
                Value::Number(n) => n
                    .as_i64()
                    .map(i128::from)
                    .or_else(|| n.as_u64().map(i128::from))
                    .ok_or_else(bad)?,
                _ => return Err(bad()),
            };
            let (min, max) = integer_range(t);
            if n < min || n > max {
                return Err(Error::invalid(format!(
                    "{what}: {n} is outside the range of {t} ({min} to {max})"
                )));
            }
            Ok(value::from_i128(t, n))
        }
        t => {
            let b = bytes_from_json(v, what)?;
            if b.len() != t.size() {
                return Err(Error::invalid(format!(
                    "{what}: {} bytes for one {t} value of {} bytes",
                    b.len(),
                    t.size()
                )));
            }
            Ok(b)
        }
    }
}

/// A cell (fill value, enumeration value) of `cell_val_num` values of `t`, as JSON.
fn cell_json(t: Datatype, cell_val_num: u32, cell: &[u8]) -> Value {
    let size = t.size();
    if !is_numeric(t) {
        if is_text(t) || cell_val_num == 1 || cell_val_num == VAR_NUM {
            return bytes_json(cell);
        }
        return Value::Array(cell.chunks(size).map(bytes_json).collect());
    }
    let mut values: Vec<Value> = cell.chunks(size).map(|v| value_json(t, v)).collect();
    if values.len() == 1 && (cell_val_num == 1 || cell_val_num == VAR_NUM) {
        values.remove(0)
    } else {
        Value::Array(values)
    }
}

/// A cell of `cell_val_num` values of `t` from JSON (the inverse of [`cell_json`]); the
/// caller checks the size of fixed-size cells.
fn cell_from_json(t: Datatype, cell_val_num: u32, v: &Value, what: &str) -> Result<Vec<u8>> {
    let size = t.size();
    let bytes = if !is_numeric(t) {
        if is_text(t) || cell_val_num == 1 || cell_val_num == VAR_NUM {
            bytes_from_json(v, what)?
        } else {
            let items = v.as_array().ok_or_else(|| {
                Error::invalid(format!("{what}: expected a list of {cell_val_num} values"))
            })?;
            let mut out = Vec::new();
            for i in items {
                out.extend(value_from_json(t, i, what)?);
            }
            out
        }
    } else {
        match v {
            Value::Array(items) if cell_val_num != 1 => {
                let mut out = Vec::new();
                for i in items {
                    out.extend(value_from_json(t, i, what)?);
                }
                out
            }
            _ => value_from_json(t, v, what)?,
        }
    };
    if bytes.len() % size != 0 {
        return Err(Error::invalid(format!(
            "{what}: {} bytes are not whole {t} values",
            bytes.len()
        )));
    }
    Ok(bytes)
}

fn range_json(t: Datatype, r: &Range) -> Value {
    match r {
        Range::Fixed(lo, hi) => Value::Array(vec![value_json(t, lo), value_json(t, hi)]),
        Range::Var(lo, hi) => Value::Array(vec![bytes_json(lo), bytes_json(hi)]),
    }
}

/// A `[lo, hi]` pair of values of `t`.
fn pair_from_json(t: Datatype, v: &Value, what: &str) -> Result<(Vec<u8>, Vec<u8>)> {
    match v.as_array().map(Vec::as_slice) {
        Some([lo, hi]) => Ok((value_from_json(t, lo, what)?, value_from_json(t, hi, what)?)),
        _ => Err(Error::invalid(format!(
            "{what}: expected [low, high], got {v}"
        ))),
    }
}

// ---- Pipelines ----

fn pipeline_json(p: &Pipeline) -> Value {
    // A lone NONE filter prints as the spec "none", which reads back as no filter at all: it
    // is written as a list of filter specs instead.
    let filters: Value =
        if p.filters().len() == 1 && p.filters()[0].filter_type() == FilterType::None {
            Value::Array(vec!["none".into()])
        } else {
            spec::to_spec(p).into()
        };
    if u64::from(p.max_chunk_size()) == CHUNK_SIZE {
        return filters;
    }
    let mut m = Map::new();
    m.insert("filters".into(), filters);
    m.insert("max_chunk_size".into(), p.max_chunk_size().into());
    Value::Object(m)
}

/// A pipeline: a spec string, a list of one spec per filter, or an object with `filters` (one
/// of those) and `max_chunk_size`.
fn pipeline_from_json(v: &Value, what: &str) -> Result<Pipeline> {
    let (filters, chunk) = match v {
        Value::Object(m) => {
            known_members(m, &["filters", "max_chunk_size"], what)?;
            let filters = m
                .get("filters")
                .ok_or_else(|| Error::invalid(format!("{what}: 'filters' is missing")))?;
            let chunk = match m.get("max_chunk_size") {
                None => None,
                Some(c) => Some(c.as_u64().and_then(|c| u32::try_from(c).ok()).ok_or_else(
                    || Error::invalid(format!("{what}: max_chunk_size {c} is not a u32")),
                )?),
            };
            (filters, chunk)
        }
        _ => (v, None),
    };
    let mut p = match filters {
        Value::String(text) => spec::parse(text).map_err(|e| e.context(what))?,
        Value::Array(items) => {
            let mut p = Pipeline::new();
            for (i, item) in items.iter().enumerate() {
                let text = item.as_str().ok_or_else(|| {
                    Error::invalid(format!("{what}: filter {i} is not a filter spec: {item}"))
                })?;
                let f = spec::parse_filter(text)
                    .map_err(|e| e.context(format!("{what}: filter {i} ('{text}')")))?;
                p.push(f)?;
            }
            p
        }
        _ => {
            return Err(Error::invalid(format!(
                "{what}: expected a pipeline spec, got {v}"
            )));
        }
    };
    if let Some(c) = chunk {
        p.set_max_chunk_size(c);
    }
    Ok(p)
}

/// A pipeline of one filter with TileDB's default options (the default schema pipelines).
fn default_pipeline(t: FilterType) -> Pipeline {
    let mut p = Pipeline::new();
    p.push(Filter::new(t))
        .expect("compression filters are always available");
    p
}

fn same_pipeline(a: &Pipeline, b: &Pipeline) -> bool {
    a.filters() == b.filters() && a.max_chunk_size() == b.max_chunk_size()
}

// ---- Schema parts ----

fn dimension_json(d: &Dimension, coords_filters: &Pipeline) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), d.name.clone().into());
    m.insert("type".into(), d.datatype.name().into());
    m.insert("var".into(), d.is_var().into());
    m.insert(
        "domain".into(),
        d.domain.as_ref().map_or(Value::Null, |(lo, hi)| {
            Value::Array(vec![value_json(d.datatype, lo), value_json(d.datatype, hi)])
        }),
    );
    m.insert(
        "tile".into(),
        d.tile_extent
            .as_ref()
            .map_or(Value::Null, |e| value_json(d.datatype, e)),
    );
    let mut filters = pipeline_json(&d.filters);
    if !d.uses_coords_filters && same_pipeline(&d.filters, coords_filters) {
        // Its own pipeline, equal to the coords filters: marked, or it would read back as
        // inheriting them (stored empty).
        if let Value::String(spec) = filters {
            let mut o = Map::new();
            o.insert("filters".into(), spec.into());
            filters = Value::Object(o);
        }
        if let Value::Object(o) = &mut filters {
            o.insert("own".into(), true.into());
        }
    }
    m.insert("filters".into(), filters);
    Value::Object(m)
}

fn attribute_json(a: &Attribute) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), a.name.clone().into());
    m.insert("type".into(), a.datatype.name().into());
    m.insert("cell_val_num".into(), cell_val_num_json(a.cell_val_num));
    m.insert("nullable".into(), a.nullable.into());
    m.insert(
        "fill".into(),
        cell_json(a.datatype, a.cell_val_num, &a.fill_value),
    );
    m.insert("fill_validity".into(), a.fill_validity.into());
    m.insert("filters".into(), pipeline_json(&a.filters));
    m.insert(
        "enumeration".into(),
        a.enumeration.clone().map_or(Value::Null, Value::String),
    );
    if a.order != 0 {
        m.insert("order".into(), order_name(a.order).into());
    }
    Value::Object(m)
}

/// A count, or `"var"`.
fn cell_val_num_json(cell_val_num: u32) -> Value {
    if cell_val_num == VAR_NUM {
        "var".into()
    } else {
        cell_val_num.into()
    }
}

fn order_name(order: u8) -> &'static str {
    match order {
        1 => "increasing",
        2 => "decreasing",
        _ => "unordered",
    }
}

fn enumeration_json(e: &Enumeration) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), e.name.clone().into());
    m.insert("type".into(), e.datatype.name().into());
    m.insert("cell_val_num".into(), cell_val_num_json(e.cell_val_num));
    m.insert("ordered".into(), e.ordered.into());
    let values = (0..e.len())
        .map(|i| cell_json(e.datatype, e.cell_val_num, e.value(i).unwrap_or_default()))
        .collect();
    m.insert("values".into(), Value::Array(values));
    Value::Object(m)
}

/// Refuses members other than `known` (typos would otherwise silently take defaults).
fn known_members(m: &Map<String, Value>, known: &[&str], what: &str) -> Result<()> {
    match m.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(Error::invalid(format!("{what}: unknown member '{k}'"))),
        None => Ok(()),
    }
}

fn get_bool(m: &Map<String, Value>, key: &str, default: bool, what: &str) -> Result<bool> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => Err(Error::invalid(format!(
            "{what}: '{key}' must be true or false, not {v}"
        ))),
    }
}

fn get_str<'a>(m: &'a Map<String, Value>, key: &str, what: &str) -> Result<Option<&'a str>> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(Error::invalid(format!(
            "{what}: '{key}' must be a string, not {v}"
        ))),
    }
}

fn datatype_from_json(m: &Map<String, Value>, what: &str) -> Result<Datatype> {
    let name = get_str(m, "type", what)?
        .ok_or_else(|| Error::invalid(format!("{what}: 'type' is missing")))?;
    Datatype::from_name(name)
        .ok_or_else(|| Error::invalid(format!("{what}: unknown datatype '{name}'")))
}

/// `cell_val_num`: a positive count or `"var"` (`default` when absent).
fn cell_val_num_from_json(m: &Map<String, Value>, default: u32, what: &str) -> Result<u32> {
    match m.get("cell_val_num") {
        None | Some(Value::Null) => Ok(default),
        Some(Value::String(s)) if s == "var" => Ok(VAR_NUM),
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n != VAR_NUM)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "{what}: cell_val_num must be a count or \"var\", not {v}"
                ))
            }),
    }
}

fn layout_from_json(m: &Map<String, Value>, key: &str) -> Result<Layout> {
    let Some(name) = get_str(m, key, "schema")? else {
        return Ok(Layout::RowMajor);
    };
    [
        Layout::RowMajor,
        Layout::ColMajor,
        Layout::GlobalOrder,
        Layout::Unordered,
        Layout::Hilbert,
    ]
    .into_iter()
    .find(|l| l.name() == name)
    .ok_or_else(|| {
        Error::invalid(format!(
            "{key}: unknown layout '{name}' (row-major, col-major or hilbert)"
        ))
    })
}

fn schema_from_json(m: &Map<String, Value>) -> Result<ArraySchema> {
    known_members(
        m,
        &[
            "name",
            "version",
            "sparse",
            "allows_duplicates",
            "tile_order",
            "cell_order",
            "capacity",
            "coords_filters",
            "offsets_filters",
            "validity_filters",
            "dimensions",
            "attributes",
            "dimension_labels",
            "enumerations",
            "current_domain",
        ],
        "schema",
    )?;
    let sparse = get_bool(m, "sparse", false, "schema")?;
    let pipeline_or = |key: &str, default: FilterType| -> Result<Pipeline> {
        match m.get(key) {
            None | Some(Value::Null) => Ok(default_pipeline(default)),
            Some(v) => pipeline_from_json(v, key),
        }
    };
    let coords_filters = pipeline_or("coords_filters", FilterType::Zstd)?;
    let offsets_filters = pipeline_or("offsets_filters", FilterType::Zstd)?;
    let validity_filters = pipeline_or("validity_filters", FilterType::Rle)?;
    let capacity = match m.get("capacity") {
        None | Some(Value::Null) => DEFAULT_CAPACITY,
        Some(v) => v.as_u64().ok_or_else(|| {
            Error::invalid(format!("capacity: {v} is not a non-negative integer"))
        })?,
    };
    let cell_order = layout_from_json(m, "cell_order")?;
    let dims = m
        .get("dimensions")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::invalid("'dimensions' must be a list"))?;
    let mut dimensions = Vec::with_capacity(dims.len());
    for (i, d) in dims.iter().enumerate() {
        let what = format!("dimension {i}");
        dimensions.push(
            dimension_from_json(d, &coords_filters, cell_order, &what)
                .map_err(|e| e.context(&what))?,
        );
    }
    let attrs = match m.get("attributes") {
        None | Some(Value::Null) => &Vec::new(),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(Error::invalid("'attributes' must be a list")),
    };
    let mut attributes = Vec::with_capacity(attrs.len());
    for (i, a) in attrs.iter().enumerate() {
        let what = format!("attribute {i}");
        attributes.push(attribute_from_json(a, &what).map_err(|e| e.context(&what))?);
    }
    match m.get("dimension_labels") {
        None | Some(Value::Null) => {}
        Some(v) if v.as_u64() == Some(0) => {}
        Some(v) => {
            return Err(Error::Unsupported(format!(
                "dimension_labels is {v}: tdbfilter does not create dimension label arrays"
            )));
        }
    }
    let mut enumerations = Vec::new();
    let mut loaded_enumerations = Vec::new();
    if let Some(list) = m.get("enumerations").filter(|v| !v.is_null()) {
        let list = list
            .as_array()
            .ok_or_else(|| Error::invalid("'enumerations' must be a list"))?;
        for (i, e) in list.iter().enumerate() {
            let what = format!("enumeration {i}");
            let e = enumeration_from_json(e, &what).map_err(|e| e.context(&what))?;
            enumerations.push((e.name.clone(), String::new()));
            loaded_enumerations.push(e);
        }
    }
    let current_domain = match m.get("current_domain") {
        None | Some(Value::Null) => None,
        Some(v) => Some(current_domain_from_json(v, &dimensions)?),
    };
    Ok(ArraySchema {
        name: String::new(),
        version: FORMAT_VERSION,
        allows_dups: get_bool(m, "allows_duplicates", false, "schema")?,
        array_type: if sparse {
            ArrayType::Sparse
        } else {
            ArrayType::Dense
        },
        tile_order: layout_from_json(m, "tile_order")?,
        cell_order,
        capacity,
        coords_filters,
        offsets_filters,
        validity_filters,
        dimensions,
        attributes,
        labels: Vec::new(),
        enumerations,
        loaded_enumerations,
        current_domain,
    })
}

fn dimension_from_json(
    v: &Value,
    coords_filters: &Pipeline,
    cell_order: Layout,
    what: &str,
) -> Result<Dimension> {
    let m = v
        .as_object()
        .ok_or_else(|| Error::invalid("not an object"))?;
    known_members(
        m,
        &[
            "name", "type", "var", "domain", "tile", "filters", "nullable",
        ],
        what,
    )?;
    if get_bool(m, "nullable", false, what)? {
        return Err(Error::invalid(
            "dimensions cannot be nullable (TileDB has no nullable dimensions: only attributes \
             have validity)",
        ));
    }
    let name = get_str(m, "name", what)?
        .ok_or_else(|| Error::invalid("'name' is missing"))?
        .to_string();
    let datatype = datatype_from_json(m, what)?;
    let var = get_bool(m, "var", datatype.is_string(), what)?;
    let domain = match m.get("domain") {
        None | Some(Value::Null) => None,
        Some(d) => Some(pair_from_json(datatype, d, "domain")?),
    };
    let mut tile_extent = match m.get("tile") {
        None | Some(Value::Null) => None,
        Some(t) => Some(value_from_json(datatype, t, "tile")?),
    };
    if tile_extent.is_none()
        && cell_order != Layout::Hilbert
        && let Some((lo, hi)) = &domain
        && is_numeric(datatype)
    {
        tile_extent = Some(domain_range_extent(datatype, lo, hi)?);
    }
    let (own, marked_own) = match m.get("filters") {
        None | Some(Value::Null) => (None, false),
        Some(Value::Object(o)) if o.contains_key("own") => {
            let marked = get_bool(o, "own", false, "filters")?;
            let mut rest = o.clone();
            rest.remove("own");
            let p = pipeline_from_json(&Value::Object(rest), "filters")?;
            (Some(p), marked)
        }
        Some(f) => (Some(pipeline_from_json(f, "filters")?), false),
    };
    // An empty pipeline, or the coords filters themselves unless marked `"own": true`, is
    // stored empty: the dimension uses the coords filters (docs/ARRAY.md §3).
    let uses_coords_filters = own.as_ref().is_none_or(|p| {
        p.filters().is_empty() || (!marked_own && same_pipeline(p, coords_filters))
    });
    Ok(Dimension {
        name,
        datatype,
        cell_val_num: if var { VAR_NUM } else { 1 },
        filters: match own {
            Some(p) if !uses_coords_filters => p,
            _ => coords_filters.clone(),
        },
        uses_coords_filters,
        domain,
        tile_extent,
    })
}

/// TileDB's `set_null_tile_extent_to_range`, which refuses full-range integer domains.
fn domain_range_extent(t: Datatype, lo: &[u8], hi: &[u8]) -> Result<Vec<u8>> {
    if !t.is_real() {
        let (min, max) = integer_range(t);
        if value::as_i128(t, lo)? == min && value::as_i128(t, hi)? == max {
            return Err(Error::invalid(
                "Cannot set null tile extent to domain range; Domain range exceeds domain type max numeric limit",
            ));
        }
    }
    Ok(null_extent_fill(t, lo, hi))
}

fn attribute_from_json(v: &Value, what: &str) -> Result<Attribute> {
    let m = v
        .as_object()
        .ok_or_else(|| Error::invalid("not an object"))?;
    known_members(
        m,
        &[
            "name",
            "type",
            "cell_val_num",
            "nullable",
            "fill",
            "fill_validity",
            "filters",
            "enumeration",
            "order",
        ],
        what,
    )?;
    let name = get_str(m, "name", what)?
        .ok_or_else(|| Error::invalid("'name' is missing"))?
        .to_string();
    let datatype = datatype_from_json(m, what)?;
    let default_cvn = if datatype == Datatype::Any {
        VAR_NUM
    } else {
        1
    };
    let cell_val_num = cell_val_num_from_json(m, default_cvn, what)?;
    // Before the default fill value (a whole cell) is made.
    super::check_cell_size(&name, datatype, cell_val_num)?;
    let nullable = get_bool(m, "nullable", false, what)?;
    let fill_value = match m.get("fill") {
        None | Some(Value::Null) => {
            let n = if cell_val_num == VAR_NUM {
                1
            } else {
                cell_val_num as usize
            };
            default_fill_value(datatype).repeat(n)
        }
        Some(f) => {
            let fill = cell_from_json(datatype, cell_val_num, f, "fill")?;
            if cell_val_num != VAR_NUM
                && fill.len() as u64 != datatype.size() as u64 * u64::from(cell_val_num)
            {
                return Err(Error::invalid(format!(
                    "fill: Cannot set fill value; Input size is not the same as cell size \
                     ({} bytes for cells of {cell_val_num} {datatype} values)",
                    fill.len()
                )));
            }
            fill
        }
    };
    let fill_validity = match m.get("fill_validity") {
        None | Some(Value::Null) => 0,
        Some(Value::Bool(b)) => u8::from(*b),
        Some(f) => f
            .as_u64()
            .and_then(|x| u8::try_from(x).ok())
            .ok_or_else(|| Error::invalid(format!("fill_validity: {f} is not 0 or 1")))?,
    };
    let order = match get_str(m, "order", what)? {
        None | Some("unordered") => 0,
        Some("increasing") => 1,
        Some("decreasing") => 2,
        Some(o) => {
            return Err(Error::invalid(format!(
                "order: unknown order '{o}' (unordered, increasing or decreasing)"
            )));
        }
    };
    let filters = match m.get("filters") {
        None | Some(Value::Null) => Pipeline::new(),
        Some(f) => pipeline_from_json(f, "filters")?,
    };
    Ok(Attribute {
        name,
        datatype,
        cell_val_num,
        filters,
        fill_value,
        nullable,
        fill_validity,
        order,
        enumeration: get_str(m, "enumeration", what)?.map(str::to_string),
    })
}

fn enumeration_from_json(v: &Value, what: &str) -> Result<Enumeration> {
    let m = match v {
        Value::Object(m) => m,
        Value::String(name) => {
            return Err(Error::invalid(format!(
                "'{name}' names an enumeration without its values: give an object with name, \
                 type, cell_val_num, ordered and values (as `tdbf array info --json` prints)"
            )));
        }
        _ => return Err(Error::invalid("not an object")),
    };
    known_members(
        m,
        &["name", "type", "cell_val_num", "ordered", "values"],
        what,
    )?;
    let name = get_str(m, "name", what)?
        .ok_or_else(|| Error::invalid("'name' is missing"))?
        .to_string();
    let datatype = datatype_from_json(m, what)?;
    let default_cvn = if datatype.is_string() { VAR_NUM } else { 1 };
    let cell_val_num = cell_val_num_from_json(m, default_cvn, what)?;
    let values = m
        .get("values")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::invalid("'values' must be a list"))?;
    let mut data = Vec::new();
    let mut offsets = Vec::new();
    for (i, v) in values.iter().enumerate() {
        let cell = cell_from_json(datatype, cell_val_num, v, &format!("value {i}"))?;
        if cell_val_num != VAR_NUM
            && cell.len() as u64 != datatype.size() as u64 * u64::from(cell_val_num)
        {
            return Err(Error::invalid(format!(
                "value {i}: {} bytes for a value of {cell_val_num} {datatype}",
                cell.len()
            )));
        }
        if cell_val_num == VAR_NUM {
            offsets.push(data.len() as u64);
        }
        data.extend(cell);
    }
    Ok(Enumeration {
        name,
        path_name: String::new(),
        datatype,
        cell_val_num,
        ordered: get_bool(m, "ordered", false, what)?,
        data,
        offsets,
    })
}

fn current_domain_from_json(v: &Value, dims: &[Dimension]) -> Result<Vec<Range>> {
    let list = v
        .as_array()
        .ok_or_else(|| Error::invalid("current_domain: expected one [low, high] per dimension"))?;
    if list.len() != dims.len() {
        return Err(Error::invalid(
            "The array current domain and the array schema have a non-equal number of dimensions",
        ));
    }
    list.iter()
        .zip(dims)
        .map(|(r, d)| {
            let what = format!("current_domain of dimension '{}'", d.name);
            if d.is_var() {
                match r.as_array().map(Vec::as_slice) {
                    Some([lo, hi]) => Ok(Range::Var(
                        bytes_from_json(lo, &what)?,
                        bytes_from_json(hi, &what)?,
                    )),
                    _ => Err(Error::invalid(format!("{what}: expected [low, high]"))),
                }
            } else {
                let (lo, hi) = pair_from_json(d.datatype, r, &what)?;
                Ok(Range::Fixed(lo, hi))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
