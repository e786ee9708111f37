//! Evaluating a condition over decoded cells, as TileDB 2.30's `QueryCondition` does: numbers
//! compare in the field's type (floats as C++ compares them: NaN fails all but `!=`), strings
//! bytewise as unsigned bytes with a shorter prefix first, set membership by the cell's bytes;
//! a null cell fails every comparison (`!=` and `not in` included) and passes only `== None`.
//! Also tile pruning: whether a condition can hold in a tile, from its min/max/null count.

use super::ast::{Combination, Condition, Op, Operand};
use crate::array::schema::ArraySchema;
use crate::error::{Error, Result};
use crate::format::datatype::Datatype;
use std::cmp::Ordering;

/// The decoded cells of one field.
#[derive(Clone, Copy, Debug)]
pub struct Column<'a> {
    /// Cell values, concatenated.
    pub data: &'a [u8],
    /// Var-size fields: each cell's start offset in `data` (one per cell).
    pub offsets: Option<&'a [u64]>,
    /// Nullable fields: one byte per cell, 0 for null.
    pub validity: Option<&'a [u8]>,
}

/// What evaluation needs of a field: its type, fixed cell size (`None`: var-size), nullability.
#[derive(Clone, Copy, Debug)]
struct FieldType {
    datatype: Datatype,
    cell_size: Option<usize>,
    nullable: bool,
}

fn field_type(schema: &ArraySchema, name: &str) -> Result<FieldType> {
    if let Some(i) = schema.attribute_index(name) {
        let a = &schema.attributes[i];
        return Ok(FieldType {
            datatype: a.datatype,
            cell_size: a.cell_size(),
            nullable: a.nullable,
        });
    }
    if let Some(j) = schema.dimension_index(name) {
        let d = &schema.dimensions[j];
        return Ok(FieldType {
            datatype: d.datatype,
            cell_size: d.coord_size(),
            nullable: false,
        });
    }
    Err(Error::invalid(format!(
        "condition field '{name}' is not an attribute or dimension of the schema"
    )))
}

fn is_string(d: Datatype) -> bool {
    matches!(
        d,
        Datatype::Char | Datatype::StringAscii | Datatype::StringUtf8
    )
}

/// Evaluates `cond` over `cell_count` cells: `columns(name)` gives each field's cells.
/// Returns one bool per cell. Fails when a field is missing, its buffers do not hold
/// `cell_count` cells, or a value does not fit the field (as TileDB's checks refuse).
pub fn evaluate<'a>(
    cond: &Condition,
    schema: &ArraySchema,
    cell_count: usize,
    columns: &dyn Fn(&str) -> Option<Column<'a>>,
) -> Result<Vec<bool>> {
    match cond {
        Condition::Expr { op, children } => {
            let mut acc: Option<Vec<bool>> = None;
            for c in children {
                let r = evaluate(c, schema, cell_count, columns)?;
                acc = Some(match acc {
                    None => r,
                    Some(mut a) => {
                        for (x, y) in a.iter_mut().zip(r) {
                            *x = match op {
                                Combination::And => *x && y,
                                Combination::Or => *x || y,
                            };
                        }
                        a
                    }
                });
            }
            Ok(acc.unwrap_or_else(|| vec![*op == Combination::And; cell_count]))
        }
        Condition::Value { field, op, operand } => {
            let t = field_type(schema, field)?;
            match op {
                Op::AlwaysTrue => return Ok(vec![true; cell_count]),
                Op::AlwaysFalse => return Ok(vec![false; cell_count]),
                _ => {}
            }
            let col = columns(field).ok_or_else(|| {
                Error::invalid(format!("condition field '{field}': no cells given"))
            })?;
            check_column(field, &t, &col, cell_count)?;
            let cell = |i: usize| -> Option<&[u8]> {
                if let Some(v) = col.validity
                    && v[i] == 0
                {
                    return None;
                }
                Some(match (col.offsets, t.cell_size) {
                    (Some(o), _) => {
                        let end = o.get(i + 1).map_or(col.data.len(), |e| *e as usize);
                        &col.data[o[i] as usize..end]
                    }
                    (None, Some(n)) => &col.data[i * n..(i + 1) * n],
                    (None, None) => unreachable!("checked"),
                })
            };
            let matcher = Matcher::new(field, &t, *op, operand)?;
            if let (Operand::Value(v), None) = (operand, col.offsets)
                && let Some(pass) = compare_column(t.datatype, *op, col.data, v, col.validity)
            {
                return Ok(pass);
            }
            Ok((0..cell_count).map(|i| matcher.matches(cell(i))).collect())
        }
    }
}

/// Evaluates `cond` over fields as the array reader returns them.
pub fn evaluate_fields(
    cond: &Condition,
    schema: &ArraySchema,
    fields: &[crate::array::FieldData],
) -> Result<Vec<bool>> {
    let n = fields.first().map_or(0, |f| f.cell_count as usize);
    evaluate(cond, schema, n, &|name| {
        fields.iter().find(|f| f.name == name).map(|f| Column {
            data: &f.data,
            offsets: f.offsets.as_deref(),
            validity: f.validity.as_deref(),
        })
    })
}

fn check_column(field: &str, t: &FieldType, c: &Column<'_>, n: usize) -> Result<()> {
    let bad = |m: String| Error::invalid(format!("condition field '{field}': {m}"));
    match (t.cell_size, c.offsets) {
        (None, Some(o)) => {
            if o.len() != n {
                return Err(bad(format!("{} offsets for {n} cells", o.len())));
            }
            crate::engine::tile::check_offsets(o, c.data.len()).map_err(bad)?;
        }
        (Some(s), None) => {
            if c.data.len() != s * n {
                return Err(bad(format!(
                    "{} bytes for {n} cells of {s} bytes",
                    c.data.len()
                )));
            }
        }
        (None, None) => return Err(bad("var-size cells need offsets".into())),
        (Some(_), Some(_)) => return Err(bad("fixed-size cells take no offsets".into())),
    }
    match c.validity {
        Some(v) if v.len() != n => Err(bad(format!("{} validity bytes for {n} cells", v.len()))),
        None if t.nullable => Err(bad("nullable cells need validity".into())),
        _ => Ok(()),
    }
}

/// A value node ready to test cells.
struct Matcher<'c> {
    op: Op,
    kind: Kind,
    operand: &'c Operand,
}

#[derive(Clone, Copy)]
enum Kind {
    Bytes,
    Int(Datatype),
    Float32,
    Float64,
}

impl<'c> Matcher<'c> {
    fn new(field: &str, t: &FieldType, op: Op, operand: &'c Operand) -> Result<Matcher<'c>> {
        let d = t.datatype;
        let kind = if is_string(d) {
            Kind::Bytes
        } else if t.cell_size != Some(d.size()) {
            return Err(Error::invalid(format!(
                "condition field '{field}' of type {d} holds more than one value per cell"
            )));
        } else {
            match d {
                Datatype::Float32 => Kind::Float32,
                Datatype::Float64 => Kind::Float64,
                _ => Kind::Int(d),
            }
        };
        match (operand, kind) {
            (Operand::Value(v), Kind::Int(_) | Kind::Float32 | Kind::Float64)
                if v.len() != d.size() =>
            {
                return Err(Error::invalid(format!(
                    "condition on '{field}': value size mismatch: {} != {}",
                    d.size(),
                    v.len()
                )));
            }
            (Operand::Set(m), Kind::Int(_) | Kind::Float32 | Kind::Float64)
                if m.iter().any(|x| x.len() != d.size()) =>
            {
                return Err(Error::invalid(format!(
                    "condition on '{field}': set member size mismatch (cells of {} bytes)",
                    d.size()
                )));
            }
            (Operand::Null, _) if !matches!(op, Op::Eq | Op::Ne) => {
                return Err(Error::invalid(format!(
                    "condition on '{field}': a null value can only be compared with '==' or '!='"
                )));
            }
            (Operand::Set(_), _) if !op.is_set() => {
                return Err(Error::invalid(format!(
                    "condition on '{field}': a set needs 'in'"
                )));
            }
            (Operand::Value(_), _) if op.is_set() => {
                return Err(Error::invalid(format!(
                    "condition on '{field}': 'in' needs a set"
                )));
            }
            _ => {}
        }
        Ok(Matcher { op, kind, operand })
    }

    fn matches(&self, cell: Option<&[u8]>) -> bool {
        match self.operand {
            Operand::Null => match self.op {
                Op::Eq => cell.is_none(),
                _ => cell.is_some(),
            },
            Operand::Set(m) => match cell {
                None => false,
                Some(c) => m.iter().any(|x| x.as_slice() == c) == (self.op == Op::In),
            },
            Operand::Value(v) => match cell {
                None => false,
                Some(c) => match compare(self.kind, c, v) {
                    None => self.op == Op::Ne,
                    Some(o) => test(self.op, o),
                },
            },
        }
    }
}

fn test(op: Op, o: Ordering) -> bool {
    match op {
        Op::Lt => o.is_lt(),
        Op::Le => o.is_le(),
        Op::Gt => o.is_gt(),
        Op::Ge => o.is_ge(),
        Op::Eq => o.is_eq(),
        Op::Ne => o.is_ne(),
        Op::AlwaysTrue => true,
        _ => false,
    }
}

/// `a` against `b` (`None`: unordered, a NaN).
fn compare(kind: Kind, a: &[u8], b: &[u8]) -> Option<Ordering> {
    match kind {
        Kind::Bytes => Some(a.cmp(b)),
        Kind::Float32 => {
            let f = |x: &[u8]| f32::from_le_bytes(x.try_into().expect("4 bytes"));
            f(a).partial_cmp(&f(b))
        }
        Kind::Float64 => {
            let f = |x: &[u8]| f64::from_le_bytes(x.try_into().expect("8 bytes"));
            f(a).partial_cmp(&f(b))
        }
        Kind::Int(d) => {
            let x = crate::array::value::as_i128(d, a).ok()?;
            let y = crate::array::value::as_i128(d, b).ok()?;
            Some(x.cmp(&y))
        }
    }
}

/// A fixed-size numeric value as stored (little-endian), for [`compare_column`]'s typed loops.
trait Native: Copy + PartialOrd + Send + Sync {
    const SIZE: usize;
    fn read(bytes: &[u8]) -> Self;
}

macro_rules! native {
    ($($t:ty)*) => {$(
        impl Native for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn read(bytes: &[u8]) -> $t {
                <$t>::from_le_bytes(bytes.try_into().expect("one value"))
            }
        }
    )*};
}
native!(i8 u8 i16 u16 i32 u32 i64 u64 f32 f64);

/// Cells of one value each compared with `value` in a typed loop (in parallel over large
/// columns): the answers [`Matcher::matches`] gives cell by cell — floats by Rust's partial
/// order (NaN passes only `!=`), null cells fail. `None` for the types and operators it does
/// not cover (the per-cell path answers those).
fn compare_column(
    datatype: Datatype,
    op: Op,
    data: &[u8],
    value: &[u8],
    validity: Option<&[u8]>,
) -> Option<Vec<bool>> {
    use Datatype::*;
    let mut pass = match datatype {
        Int8 => typed::<i8>(op, data, value),
        Uint8 | Bool => typed::<u8>(op, data, value),
        Int16 => typed::<i16>(op, data, value),
        Uint16 => typed::<u16>(op, data, value),
        Int32 => typed::<i32>(op, data, value),
        Uint32 => typed::<u32>(op, data, value),
        Uint64 => typed::<u64>(op, data, value),
        Float32 => typed::<f32>(op, data, value),
        Float64 => typed::<f64>(op, data, value),
        d if d == Int64 || d.is_datetime() || d.is_time() => typed::<i64>(op, data, value),
        _ => None,
    }?;
    if let Some(v) = validity {
        for (p, v) in pass.iter_mut().zip(v) {
            *p &= *v != 0;
        }
    }
    Some(pass)
}

/// [`compare_column`] for cells of type `T`.
fn typed<T: Native>(op: Op, data: &[u8], value: &[u8]) -> Option<Vec<bool>> {
    if value.len() != T::SIZE || !data.len().is_multiple_of(T::SIZE) {
        return None;
    }
    let v = T::read(value);
    Some(match op {
        Op::Lt => each(data, |x: T| x < v),
        Op::Le => each(data, |x: T| x <= v),
        Op::Gt => each(data, |x: T| x > v),
        Op::Ge => each(data, |x: T| x >= v),
        Op::Eq => each(data, |x: T| x == v),
        Op::Ne => each(data, |x: T| x != v),
        _ => return None,
    })
}

/// `test` of every `T` in `data`, in parallel blocks.
fn each<T: Native, F: Fn(T) -> bool + Sync>(data: &[u8], test: F) -> Vec<bool> {
    use rayon::prelude::*;
    data.par_chunks_exact(T::SIZE)
        .with_min_len(1 << 15)
        .map(|c| test(T::read(c)))
        .collect()
}

/// Whether a condition holds in a tile: surely not, maybe, or surely for every cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tri {
    /// No cell of the tile can pass: the tile can be skipped.
    Never,
    /// Some cells may pass.
    Maybe,
    /// Every cell passes.
    Always,
}

/// A field's statistics over one tile.
#[derive(Clone, Debug, Default)]
pub struct TileStats {
    /// Smallest non-null value (`None`: unknown).
    pub min: Option<Vec<u8>>,
    /// Largest non-null value (`None`: unknown).
    pub max: Option<Vec<u8>>,
    /// Null cells (`None`: unknown; 0 for non-nullable fields).
    pub null_count: Option<u64>,
    /// Cells in the tile.
    pub cell_count: u64,
}

/// Whether `cond` can hold in a tile whose fields have the statistics `stats(name)` gives
/// (`None`: nothing known). Never answers [`Tri::Never`] or [`Tri::Always`] wrongly: floats
/// never give `Always` (a NaN cell is not in min/max), unknowns give `Maybe`.
pub fn prune(
    cond: &Condition,
    schema: &ArraySchema,
    stats: &dyn Fn(&str) -> Option<TileStats>,
) -> Tri {
    match cond {
        Condition::Expr { op, children } => {
            let rs: Vec<Tri> = children.iter().map(|c| prune(c, schema, stats)).collect();
            match op {
                Combination::And if rs.contains(&Tri::Never) => Tri::Never,
                Combination::And if rs.iter().all(|r| *r == Tri::Always) => Tri::Always,
                Combination::Or if rs.contains(&Tri::Always) => Tri::Always,
                Combination::Or if rs.iter().all(|r| *r == Tri::Never) => Tri::Never,
                _ => Tri::Maybe,
            }
        }
        Condition::Value { field, op, operand } => {
            match op {
                Op::AlwaysTrue => return Tri::Always,
                Op::AlwaysFalse => return Tri::Never,
                _ => {}
            }
            let (Ok(t), Some(s)) = (field_type(schema, field), stats(field)) else {
                return Tri::Maybe;
            };
            let nulls = if t.nullable { s.null_count } else { Some(0) };
            if let Operand::Null = operand {
                return match (nulls, *op == Op::Eq) {
                    (Some(0), true) => Tri::Never,
                    (Some(0), false) => Tri::Always,
                    (Some(n), true) if n == s.cell_count => Tri::Always,
                    (Some(n), false) if n == s.cell_count => Tri::Never,
                    _ => Tri::Maybe,
                };
            }
            if nulls == Some(s.cell_count) && s.cell_count > 0 {
                return Tri::Never;
            }
            let kind = if is_string(t.datatype) {
                Kind::Bytes
            } else {
                match t.datatype {
                    Datatype::Float32 => Kind::Float32,
                    Datatype::Float64 => Kind::Float64,
                    d if t.cell_size == Some(d.size()) => Kind::Int(d),
                    _ => return Tri::Maybe,
                }
            };
            let (Some(min), Some(max)) = (&s.min, &s.max) else {
                return Tri::Maybe;
            };
            let sizes_ok = |v: &[u8]| matches!(kind, Kind::Bytes) || v.len() == t.datatype.size();
            if !sizes_ok(min) || !sizes_ok(max) {
                return Tri::Maybe;
            }
            let exact = matches!(kind, Kind::Int(_) | Kind::Bytes) && nulls == Some(0);
            let cmp = |a: &[u8], b: &[u8]| compare(kind, a, b);
            let range = |v: &[u8]| -> Tri {
                if !sizes_ok(v) {
                    return Tri::Maybe;
                }
                let (Some(lo), Some(hi)) = (cmp(min, v), cmp(max, v)) else {
                    return Tri::Maybe;
                };
                let (never, always) = match op {
                    Op::Lt => (lo.is_ge(), hi.is_lt()),
                    Op::Le => (lo.is_gt(), hi.is_le()),
                    Op::Gt => (hi.is_le(), lo.is_gt()),
                    Op::Ge => (hi.is_lt(), lo.is_ge()),
                    Op::Eq | Op::In => (lo.is_gt() || hi.is_lt(), lo.is_eq() && hi.is_eq()),
                    Op::Ne | Op::NotIn => (false, lo.is_gt() || hi.is_lt()),
                    _ => (false, false),
                };
                if never && !matches!(op, Op::Ne | Op::NotIn) {
                    Tri::Never
                } else if always && exact {
                    Tri::Always
                } else {
                    Tri::Maybe
                }
            };
            match operand {
                Operand::Value(v) => {
                    if *op == Op::Ne
                        && exact
                        && cmp(min, v) == Some(Ordering::Equal)
                        && cmp(max, v) == Some(Ordering::Equal)
                    {
                        return Tri::Never;
                    }
                    range(v)
                }
                Operand::Set(m) => {
                    let rs: Vec<Tri> = m.iter().map(|v| range(v)).collect();
                    if *op == Op::In {
                        if rs.iter().all(|r| *r == Tri::Never) {
                            Tri::Never
                        } else if rs.contains(&Tri::Always) {
                            Tri::Always
                        } else {
                            Tri::Maybe
                        }
                    } else if (rs.iter().all(|r| *r == Tri::Always) && !m.is_empty())
                        || (m.is_empty() && exact)
                    {
                        Tri::Always
                    } else {
                        Tri::Maybe
                    }
                }
                Operand::Null => Tri::Maybe,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of every width's extremes, zero, neighbours and (floats) NaN and infinities.
    fn samples(d: Datatype) -> Vec<Vec<u8>> {
        let ints: [i128; 9] = [i128::MIN, -129, -1, 0, 1, 2, 127, 255, i128::MAX];
        match d {
            Datatype::Float32 => [f32::NAN, f32::NEG_INFINITY, -1.5, -0.0, 0.0, 2.25, f32::MAX]
                .iter()
                .map(|v| v.to_le_bytes().to_vec())
                .collect(),
            Datatype::Float64 => [
                f64::NAN,
                f64::NEG_INFINITY,
                -1.5,
                -0.0,
                0.0,
                2.25,
                f64::INFINITY,
            ]
            .iter()
            .map(|v| v.to_le_bytes().to_vec())
            .collect(),
            _ => ints
                .iter()
                .map(|&v| v.to_le_bytes()[..d.size()].to_vec())
                .collect(),
        }
    }

    #[test]
    fn typed_loops_answer_as_the_per_cell_matcher() {
        let types = [
            Datatype::Int8,
            Datatype::Uint8,
            Datatype::Bool,
            Datatype::Int16,
            Datatype::Uint16,
            Datatype::Int32,
            Datatype::Uint32,
            Datatype::Int64,
            Datatype::Uint64,
            Datatype::DatetimeMs,
            Datatype::TimeNs,
            Datatype::Float32,
            Datatype::Float64,
        ];
        let ops = [Op::Lt, Op::Le, Op::Gt, Op::Ge, Op::Eq, Op::Ne];
        for d in types {
            let values = samples(d);
            // Every sample against every sample, many times over (past one parallel block).
            let cells: Vec<&Vec<u8>> = values.iter().cycle().take(70_001).collect();
            let data: Vec<u8> = cells.iter().flat_map(|c| c.iter().copied()).collect();
            let validity: Vec<u8> = (0..cells.len()).map(|i| (i % 5 != 0) as u8).collect();
            let kind = match d {
                Datatype::Float32 => Kind::Float32,
                Datatype::Float64 => Kind::Float64,
                _ => Kind::Int(d),
            };
            for op in ops {
                for v in &values {
                    let operand = Operand::Value(v.clone());
                    let m = Matcher {
                        op,
                        kind,
                        operand: &operand,
                    };
                    for valid in [None, Some(validity.as_slice())] {
                        let got = compare_column(d, op, &data, v, valid).expect("typed");
                        let want: Vec<bool> = cells
                            .iter()
                            .enumerate()
                            .map(|(i, c)| {
                                let null = valid.is_some_and(|x| x[i] == 0);
                                m.matches((!null).then_some(c.as_slice()))
                            })
                            .collect();
                        assert!(got == want, "{d} {op:?} {v:?} nullable {}", valid.is_some());
                    }
                }
            }
        }
    }

    #[test]
    fn typed_loops_leave_other_types_and_operators_to_the_matcher() {
        assert!(compare_column(Datatype::StringAscii, Op::Lt, b"ab", b"a", None).is_none());
        assert!(compare_column(Datatype::Int32, Op::In, &[0; 8], &[0; 4], None).is_none());
        assert!(compare_column(Datatype::Int32, Op::Lt, &[0; 8], &[0; 8], None).is_none());
    }
}
