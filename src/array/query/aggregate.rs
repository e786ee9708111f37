//! Aggregates (count, sum, min, max, mean, null_count) with TileDB's result types: integer
//! sums as int64 or uint64, float sums and means as float64, min and max in the field's type.
//! Cells are added from decoded fields (with an optional per-cell filter) or whole tiles from
//! fragment tile metadata.

use crate::array::schema::{ArraySchema, VAR_NUM};
use crate::array::{FieldData, value};
use crate::error::{Error, Result};
use crate::format::datatype::Datatype;
use std::cmp::Ordering;

/// An aggregate operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggregateOp {
    /// Number of cells (dense: every cell of the ranges, the condition ignored).
    Count,
    /// Sum of the non-null values.
    Sum,
    /// Smallest non-null value.
    Min,
    /// Largest non-null value.
    Max,
    /// Mean of the non-null values.
    Mean,
    /// Number of null cells (nullable attributes only).
    NullCount,
}

impl AggregateOp {
    /// TileDB-Py's name (`count`, `sum`, `min`, `max`, `mean`, `null_count`).
    pub fn name(self) -> &'static str {
        match self {
            AggregateOp::Count => "count",
            AggregateOp::Sum => "sum",
            AggregateOp::Min => "min",
            AggregateOp::Max => "max",
            AggregateOp::Mean => "mean",
            AggregateOp::NullCount => "null_count",
        }
    }

    /// The operation named `name` (TileDB-Py's names).
    pub fn parse(name: &str) -> Result<AggregateOp> {
        Ok(match name {
            "count" => AggregateOp::Count,
            "sum" => AggregateOp::Sum,
            "min" => AggregateOp::Min,
            "max" => AggregateOp::Max,
            "mean" => AggregateOp::Mean,
            "null_count" => AggregateOp::NullCount,
            _ => {
                return Err(Error::invalid(format!(
                    "unknown aggregate '{name}' (count, sum, min, max, mean, null_count)"
                )));
            }
        })
    }
}

/// One aggregate of a query: an operation on a field (`count` takes none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aggregate {
    /// The operation.
    pub op: AggregateOp,
    /// The attribute or dimension (`None` for `count`).
    pub field: Option<String>,
}

impl Aggregate {
    /// `count`.
    pub fn count() -> Aggregate {
        Aggregate {
            op: AggregateOp::Count,
            field: None,
        }
    }

    /// `op` on `field`.
    pub fn of(op: AggregateOp, field: &str) -> Aggregate {
        Aggregate {
            op,
            field: Some(field.to_string()),
        }
    }

    /// The result's name: `count`, or `op(field)` (e.g. `sum(a)`).
    pub fn label(&self) -> String {
        match &self.field {
            None => self.op.name().to_string(),
            Some(f) => format!("{}({f})", self.op.name()),
        }
    }
}

/// An aggregate's result.
#[derive(Clone, Debug, PartialEq)]
pub enum AggregateValue {
    /// A count (`count`, `null_count`).
    Count(u64),
    /// The sum of a signed integer field.
    Int(i64),
    /// The sum of an unsigned integer field.
    UInt(u64),
    /// A float sum or a mean (NaN for the mean of no value).
    Float(f64),
    /// No value: the sum or mean of a nullable field without a valid cell (TileDB returns
    /// null there; 0 or NaN for fields that are not nullable).
    Null,
    /// A min or max: one value of `datatype` (`None` when no value was aggregated; float
    /// fields give NaN then, as TileDB).
    Value {
        /// The field's type.
        datatype: Datatype,
        /// The value's bytes.
        bytes: Option<Vec<u8>>,
    },
}

/// Whole-tile facts from fragment metadata.
pub(crate) struct TileFacts<'a> {
    /// Cells of the tile.
    pub cells: u64,
    /// Null cells.
    pub nulls: u64,
    /// The tile sum (int64, uint64 or float64 bytes by type).
    pub sum: Option<[u8; 8]>,
    /// The tile's min and max value.
    pub min: Option<&'a [u8]>,
    /// See `min`.
    pub max: Option<&'a [u8]>,
}

/// The state of one aggregate.
#[derive(Clone, Debug)]
pub(crate) struct Accumulator {
    op: AggregateOp,
    datatype: Datatype,
    var: bool,
    nullable: bool,
    cells: u64,
    valid: u64,
    nulls: u64,
    isum: i128,
    fsum: f64,
    min: Option<Vec<u8>>,
    max: Option<Vec<u8>>,
    field: String,
}

/// Whether `datatype` is a text type (no sum or mean).
fn is_text(datatype: Datatype) -> bool {
    datatype.is_string()
        || datatype == Datatype::Char
        || datatype.is_byte()
        || datatype == Datatype::Any
}

impl Accumulator {
    /// The accumulator of `agg` over `schema`, refusing what TileDB refuses: null_count on a
    /// non-nullable field, sum or mean on strings, aggregates of multi-value cells.
    pub(crate) fn new(schema: &ArraySchema, agg: &Aggregate) -> Result<Accumulator> {
        let Some(field) = &agg.field else {
            if agg.op != AggregateOp::Count {
                return Err(Error::invalid(format!("{} needs a field", agg.op.name())));
            }
            return Ok(Accumulator::empty(
                agg.op,
                Datatype::Uint64,
                false,
                "count".into(),
            ));
        };
        let (datatype, cvn, nullable) =
            match (schema.attribute_index(field), schema.dimension_index(field)) {
                (Some(i), _) => {
                    let a = &schema.attributes[i];
                    (a.datatype, a.cell_val_num, a.nullable)
                }
                (None, Some(j)) => {
                    let d = &schema.dimensions[j];
                    (d.datatype, d.cell_val_num, false)
                }
                _ => {
                    return Err(Error::invalid(format!(
                        "'{field}' is not an attribute or dimension of the array"
                    )));
                }
            };
        let text = is_text(datatype);
        let label = agg.label();
        match agg.op {
            AggregateOp::NullCount if !nullable => {
                return Err(Error::invalid(format!(
                    "{label}: null_count takes a nullable attribute; {field} is not nullable"
                )));
            }
            AggregateOp::Sum | AggregateOp::Mean if text => {
                return Err(Error::invalid(format!(
                    "{label}: {} is not defined on strings ({field} is {datatype})",
                    agg.op.name()
                )));
            }
            AggregateOp::Sum | AggregateOp::Mean | AggregateOp::Min | AggregateOp::Max
                if cvn != 1 && !(text && cvn == VAR_NUM) =>
            {
                return Err(Error::invalid(format!(
                    "{label}: {field} has several values per cell; {} takes one",
                    agg.op.name()
                )));
            }
            _ => {}
        }
        let mut acc = Accumulator::empty(agg.op, datatype, cvn == VAR_NUM, label);
        acc.nullable = nullable;
        Ok(acc)
    }

    fn empty(op: AggregateOp, datatype: Datatype, var: bool, field: String) -> Accumulator {
        Accumulator {
            op,
            datatype,
            var,
            nullable: false,
            cells: 0,
            valid: 0,
            nulls: 0,
            isum: 0,
            fsum: 0.0,
            min: None,
            max: None,
            field,
        }
    }

    /// Adds `n` cells to a count.
    pub(crate) fn add_count(&mut self, n: u64) {
        self.cells += n;
    }

    /// Adds the cells of `f` whose `pass` flag is set (all without a filter): numbers of one
    /// value per cell in a loop monomorphised per type, text cell by cell without copies.
    pub(crate) fn add_cells(&mut self, f: &FieldData, pass: Option<&[bool]>) -> Result<()> {
        let n = f.cell_count as usize;
        if pass.is_some_and(|p| p.len() < n) || f.validity.as_ref().is_some_and(|v| v.len() < n) {
            return Err(Error::Internal(format!(
                "{}: flags for fewer than the {n} cells",
                self.field
            )));
        }
        let pass = pass.map(|p| &p[..n]);
        let validity = f.validity.as_deref().map(|v| &v[..n]);
        if matches!(self.op, AggregateOp::Count | AggregateOp::NullCount) {
            let (cells, nulls) = count_cells(validity, pass, n);
            self.cells += cells;
            self.nulls += nulls;
            self.valid += cells - nulls;
            return Ok(());
        }
        let numeric = !self.var && f.offsets.is_none() && f.cell_val_num == 1;
        if numeric {
            use Datatype::*;
            let d = self.datatype;
            let done = match d {
                Int8 => self.fold::<i8>(&f.data, validity, pass, n),
                Uint8 | Bool => self.fold::<u8>(&f.data, validity, pass, n),
                Int16 => self.fold::<i16>(&f.data, validity, pass, n),
                Uint16 => self.fold::<u16>(&f.data, validity, pass, n),
                Int32 => self.fold::<i32>(&f.data, validity, pass, n),
                Uint32 => self.fold::<u32>(&f.data, validity, pass, n),
                Uint64 => self.fold::<u64>(&f.data, validity, pass, n),
                Float32 => self.fold::<f32>(&f.data, validity, pass, n),
                Float64 => self.fold::<f64>(&f.data, validity, pass, n),
                d if d == Int64 || d.is_datetime() || d.is_time() => {
                    self.fold::<i64>(&f.data, validity, pass, n)
                }
                _ => false,
            };
            if done {
                return Ok(());
            }
        }
        // Text (and any other type): cell by cell, the best cell remembered by reference.
        let mut best: Option<&[u8]> = None;
        for i in 0..n {
            if pass.is_some_and(|p| !p[i]) {
                continue;
            }
            self.cells += 1;
            if validity.is_some_and(|v| v[i] == 0) {
                self.nulls += 1;
                continue;
            }
            let v = f.cell(i);
            match self.op {
                AggregateOp::Min | AggregateOp::Max => {
                    self.valid += 1;
                    let better = match best {
                        None => true,
                        Some(b) if self.op == AggregateOp::Min => self.less(v, b),
                        Some(b) => self.less(b, v),
                    };
                    if better {
                        best = Some(v);
                    }
                }
                _ => self.add_value(v)?,
            }
        }
        if let Some(b) = best {
            // `valid` was counted above; add_value's compare only.
            let slot = if self.op == AggregateOp::Min {
                &self.min
            } else {
                &self.max
            };
            let better = match slot.as_deref() {
                None => true,
                Some(m) if self.op == AggregateOp::Min => self.less(b, m),
                Some(m) => self.less(m, b),
            };
            if better {
                let v = Some(b.to_vec());
                if self.op == AggregateOp::Min {
                    self.min = v;
                } else {
                    self.max = v;
                }
            }
        }
        Ok(())
    }

    /// The typed loop of [`add_cells`](Self::add_cells) for cells of type `T` (false: the
    /// data does not hold `n` values of `T`). Sums add each value in order to the running
    /// sum (as cell-by-cell adding does); min and max keep the first of equal values, as
    /// [`less`](Self::less) orders them (a NaN first value stays, as there).
    fn fold<T: Num>(
        &mut self,
        data: &[u8],
        validity: Option<&[u8]>,
        pass: Option<&[bool]>,
        n: usize,
    ) -> bool {
        if data.len() != n * T::SIZE {
            return false;
        }
        let (cells, nulls) = count_cells(validity, pass, n);
        self.cells += cells;
        self.nulls += nulls;
        self.valid += cells - nulls;
        // The cells to aggregate: passing and valid (one mask, built once per call).
        let combined: Option<Vec<bool>> = validity.map(|v| match pass {
            Some(p) => v.iter().zip(p).map(|(v, p)| *p && *v != 0).collect(),
            None => v.iter().map(|v| *v != 0).collect(),
        });
        let mask: Option<&[bool]> = combined.as_deref().or(pass);
        let values = data.chunks_exact(T::SIZE).map(T::load);
        match self.op {
            AggregateOp::Sum | AggregateOp::Mean => {
                if T::FLOAT {
                    // Adding +0.0 for a skipped cell leaves the sum as it is (the running
                    // sum starts at +0.0 and so is never -0.0).
                    let mut s = self.fsum;
                    match mask {
                        None => values.for_each(|v| s += v.as_f64()),
                        Some(m) => values
                            .zip(m)
                            .for_each(|(v, k)| s += if *k { v.as_f64() } else { 0.0 }),
                    }
                    self.fsum = s;
                } else {
                    let mut s: i128 = 0;
                    match mask {
                        None => values.for_each(|v| s += v.as_i128()),
                        Some(m) => values
                            .zip(m)
                            .for_each(|(v, k)| s += if *k { v.as_i128() } else { 0 }),
                    }
                    self.isum += s;
                }
            }
            AggregateOp::Min | AggregateOp::Max => {
                let min = self.op == AggregateOp::Min;
                let slot = if min { &mut self.min } else { &mut self.max };
                let mut m: Option<T> = slot.as_deref().map(T::load);
                let better = |v: T, m: T| if min { v.lt(m) } else { m.lt(v) };
                let mut changed = false;
                let mut step = |v: T| match m {
                    Some(b) => {
                        if better(v, b) {
                            m = Some(v);
                            changed = true;
                        }
                    }
                    None => {
                        m = Some(v);
                        changed = true;
                    }
                };
                match mask {
                    None => values.for_each(&mut step),
                    Some(k) => values
                        .zip(k)
                        .filter(|(_, k)| **k)
                        .for_each(|(v, _)| step(v)),
                }
                if changed {
                    *slot = m.map(T::store);
                }
            }
            AggregateOp::Count | AggregateOp::NullCount => {}
        }
        true
    }

    fn add_value(&mut self, v: &[u8]) -> Result<()> {
        self.valid += 1;
        match self.op {
            AggregateOp::Sum | AggregateOp::Mean => {
                if self.datatype.is_real() {
                    self.fsum += value::as_f64(self.datatype, v)?;
                } else {
                    self.isum += value::as_i128(self.datatype, v)?;
                }
            }
            AggregateOp::Min => {
                if self.min.as_deref().is_none_or(|m| self.less(v, m)) {
                    self.min = Some(v.to_vec());
                }
            }
            AggregateOp::Max => {
                if self.max.as_deref().is_none_or(|m| self.less(m, v)) {
                    self.max = Some(v.to_vec());
                }
            }
            AggregateOp::Count | AggregateOp::NullCount => {}
        }
        Ok(())
    }

    fn less(&self, a: &[u8], b: &[u8]) -> bool {
        if self.var || is_text(self.datatype) {
            a < b
        } else {
            crate::array::order::compare(self.datatype, a, b) == Ordering::Less
        }
    }

    /// Whether a tile's metadata answers this aggregate (`has_sum`, `has_min_max`: what the
    /// fragment metadata holds for the field).
    pub(crate) fn tile_answerable(&self, has_sum: bool, has_min_max: bool) -> bool {
        match self.op {
            AggregateOp::Count | AggregateOp::NullCount => true,
            AggregateOp::Sum | AggregateOp::Mean => has_sum,
            AggregateOp::Min | AggregateOp::Max => has_min_max,
        }
    }

    /// Adds a whole tile from its metadata.
    pub(crate) fn add_tile(&mut self, t: &TileFacts<'_>) -> Result<()> {
        self.cells += t.cells;
        self.nulls += t.nulls;
        let valid = t.cells - t.nulls.min(t.cells);
        self.valid += valid;
        if valid == 0 {
            return Ok(());
        }
        let missing = || Error::Internal("tile metadata missing for an aggregate".into());
        match self.op {
            AggregateOp::Sum | AggregateOp::Mean => {
                let s = t.sum.ok_or_else(missing)?;
                if self.datatype.is_real() {
                    self.fsum += f64::from_le_bytes(s);
                } else if is_unsigned(self.datatype) {
                    self.isum += u64::from_le_bytes(s) as i128;
                } else {
                    self.isum += i64::from_le_bytes(s) as i128;
                }
            }
            AggregateOp::Min => {
                let v = t.min.ok_or_else(missing)?;
                if self.min.as_deref().is_none_or(|m| self.less(v, m)) {
                    self.min = Some(v.to_vec());
                }
            }
            AggregateOp::Max => {
                let v = t.max.ok_or_else(missing)?;
                if self.max.as_deref().is_none_or(|m| self.less(m, v)) {
                    self.max = Some(v.to_vec());
                }
            }
            AggregateOp::Count | AggregateOp::NullCount => {}
        }
        Ok(())
    }

    /// The result.
    pub(crate) fn finish(&self) -> Result<AggregateValue> {
        let nan = || match self.datatype {
            Datatype::Float32 => f32::NAN.to_le_bytes().to_vec(),
            _ => f64::NAN.to_le_bytes().to_vec(),
        };
        Ok(match self.op {
            AggregateOp::Sum | AggregateOp::Mean if self.nullable && self.valid == 0 => {
                AggregateValue::Null
            }
            AggregateOp::Count => AggregateValue::Count(self.cells),
            AggregateOp::NullCount => AggregateValue::Count(self.nulls),
            AggregateOp::Sum if self.datatype.is_real() => AggregateValue::Float(self.fsum),
            AggregateOp::Sum if is_unsigned(self.datatype) => {
                AggregateValue::UInt(u64::try_from(self.isum).map_err(|_| self.overflow("UINT64"))?)
            }
            AggregateOp::Sum => {
                AggregateValue::Int(i64::try_from(self.isum).map_err(|_| self.overflow("INT64"))?)
            }
            AggregateOp::Mean => AggregateValue::Float(if self.valid == 0 {
                f64::NAN
            } else if self.datatype.is_real() {
                self.fsum / self.valid as f64
            } else {
                self.isum as f64 / self.valid as f64
            }),
            AggregateOp::Min | AggregateOp::Max => {
                let v = if self.op == AggregateOp::Min {
                    &self.min
                } else {
                    &self.max
                };
                AggregateValue::Value {
                    datatype: self.datatype,
                    bytes: match v {
                        Some(v) => Some(v.clone()),
                        None if self.datatype.is_real() => Some(nan()),
                        None => None,
                    },
                }
            }
        })
    }

    fn overflow(&self, ty: &str) -> Error {
        Error::invalid(format!("{}: the sum overflows {ty}", self.field))
    }
}

/// Unsigned integer types (sums as uint64).
fn is_unsigned(datatype: Datatype) -> bool {
    matches!(
        datatype,
        Datatype::Uint8 | Datatype::Uint16 | Datatype::Uint32 | Datatype::Uint64 | Datatype::Bool
    )
}

/// The cells `pass` selects (all without it) and the null ones among them.
fn count_cells(validity: Option<&[u8]>, pass: Option<&[bool]>, n: usize) -> (u64, u64) {
    match (validity, pass) {
        (None, None) => (n as u64, 0),
        (None, Some(p)) => (p.iter().filter(|x| **x).count() as u64, 0),
        (Some(v), None) => (n as u64, v.iter().filter(|x| **x == 0).count() as u64),
        (Some(v), Some(p)) => {
            let (mut c, mut z) = (0u64, 0u64);
            for (x, y) in v.iter().zip(p) {
                c += u64::from(*y);
                z += u64::from(*y && *x == 0);
            }
            (c, z)
        }
    }
}

/// A number type of one-value cells, as [`Accumulator::less`] orders and sums it.
trait Num: Copy {
    /// Bytes per value.
    const SIZE: usize;
    /// Whether sums are float64.
    const FLOAT: bool;
    /// The value of little-endian `b` (exactly `SIZE` bytes).
    fn load(b: &[u8]) -> Self;
    /// Its little-endian bytes.
    fn store(self) -> Vec<u8>;
    /// `self < o` (floats: false when either is NaN).
    fn lt(self, o: Self) -> bool;
    /// As an integer sum term.
    fn as_i128(self) -> i128;
    /// As a float sum term.
    fn as_f64(self) -> f64;
}

macro_rules! num {
    ($($t:ty, $float:expr);* $(;)?) => {$(
        impl Num for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            const FLOAT: bool = $float;
            #[inline]
            fn load(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().expect("SIZE bytes"))
            }
            fn store(self) -> Vec<u8> {
                self.to_le_bytes().to_vec()
            }
            #[inline]
            fn lt(self, o: Self) -> bool {
                self < o
            }
            #[inline]
            #[allow(clippy::unnecessary_cast, clippy::cast_lossless)]
            fn as_i128(self) -> i128 {
                self as i128
            }
            #[inline]
            #[allow(clippy::unnecessary_cast, clippy::cast_lossless)]
            fn as_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}

num! {
    i8, false; u8, false; i16, false; u16, false; i32, false; u32, false; i64, false;
    u64, false; f32, true; f64, true;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[i32], validity: Option<Vec<u8>>) -> FieldData {
        FieldData {
            name: "a".into(),
            datatype: Datatype::Int32,
            cell_val_num: 1,
            data: v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            offsets: None,
            validity,
            cell_count: v.len() as u64,
        }
    }

    fn acc(op: AggregateOp, datatype: Datatype) -> Accumulator {
        Accumulator::empty(op, datatype, false, "x".into())
    }

    #[test]
    fn results_and_empty_results_have_tiledb_types() {
        let f = ints(&[3, -7, 5, 100], Some(vec![1, 1, 1, 0]));
        let pass = [true, true, true, true];
        let mut sum = acc(AggregateOp::Sum, Datatype::Int32);
        sum.add_cells(&f, Some(&pass)).unwrap();
        assert_eq!(sum.finish().unwrap(), AggregateValue::Int(1));
        let mut mean = acc(AggregateOp::Mean, Datatype::Int32);
        mean.add_cells(&f, Some(&[true, false, true, true]))
            .unwrap();
        assert_eq!(mean.finish().unwrap(), AggregateValue::Float(4.0));
        let mut nulls = acc(AggregateOp::NullCount, Datatype::Int32);
        nulls.add_cells(&f, None).unwrap();
        assert_eq!(nulls.finish().unwrap(), AggregateValue::Count(1));
        let mut min = acc(AggregateOp::Min, Datatype::Int32);
        min.add_cells(&f, None).unwrap();
        min.add_tile(&TileFacts {
            cells: 4,
            nulls: 0,
            sum: None,
            min: Some(&(-9i32).to_le_bytes()),
            max: None,
        })
        .unwrap();
        assert_eq!(
            min.finish().unwrap(),
            AggregateValue::Value {
                datatype: Datatype::Int32,
                bytes: Some((-9i32).to_le_bytes().to_vec())
            }
        );
        // Empty: sum 0, integer min None, float max NaN, mean NaN.
        assert_eq!(
            acc(AggregateOp::Sum, Datatype::Uint8).finish().unwrap(),
            AggregateValue::UInt(0)
        );
        assert_eq!(
            acc(AggregateOp::Min, Datatype::Int64).finish().unwrap(),
            AggregateValue::Value {
                datatype: Datatype::Int64,
                bytes: None
            }
        );
        let AggregateValue::Value { bytes: Some(b), .. } =
            acc(AggregateOp::Max, Datatype::Float64).finish().unwrap()
        else {
            panic!("float max of nothing is NaN");
        };
        assert!(f64::from_le_bytes(b.try_into().unwrap()).is_nan());
        let AggregateValue::Float(m) = acc(AggregateOp::Mean, Datatype::Int8).finish().unwrap()
        else {
            panic!("mean is a float");
        };
        assert!(m.is_nan());
    }

    #[test]
    fn nullable_sums_of_no_value_are_null() {
        let mut s = acc(AggregateOp::Sum, Datatype::Int32);
        s.nullable = true;
        s.add_cells(&ints(&[4], Some(vec![0])), None).unwrap();
        assert_eq!(s.finish().unwrap(), AggregateValue::Null);
        s.add_cells(&ints(&[4], Some(vec![1])), None).unwrap();
        assert_eq!(s.finish().unwrap(), AggregateValue::Int(4));
    }

    #[test]
    fn overflowing_sums_are_errors() {
        let mut s = acc(AggregateOp::Sum, Datatype::Int64);
        let big = FieldData {
            datatype: Datatype::Int64,
            data: [i64::MAX, 1].iter().flat_map(|x| x.to_le_bytes()).collect(),
            cell_count: 2,
            ..ints(&[], None)
        };
        s.add_cells(&big, None).unwrap();
        assert!(
            s.finish()
                .unwrap_err()
                .message()
                .contains("overflows INT64")
        );
    }
}
