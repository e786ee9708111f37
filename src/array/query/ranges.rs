//! Subarrays with several ranges per dimension (TileDB's multi-range subarrays): ranges are
//! checked against the dimension's type and domain as they are added; a dimension without
//! ranges stands for its whole domain.

use crate::array::schema::{ArraySchema, Range};
use crate::array::value;
use crate::error::{Error, Result};
use crate::format::datatype::Datatype;

/// A value that can bound a range of a dimension of a matching type.
pub trait RangeValue {
    /// The value's bytes, if it fits a dimension of `datatype` (`None`: wrong type).
    fn bytes_for(&self, datatype: Datatype) -> Option<Vec<u8>>;
}

macro_rules! number_range_value {
    ($($t:ty => $d:ident, $times:expr);* $(;)?) => {$(
        impl RangeValue for $t {
            fn bytes_for(&self, datatype: Datatype) -> Option<Vec<u8>> {
                let ok = datatype == Datatype::$d
                    || ($times && (datatype.is_datetime() || datatype.is_time()));
                ok.then(|| self.to_le_bytes().to_vec())
            }
        }
    )*};
}

// Datetime and time dimensions take i64 counts of their unit.
number_range_value! {
    i8 => Int8, false; u8 => Uint8, false; i16 => Int16, false; u16 => Uint16, false;
    i32 => Int32, false; u32 => Uint32, false; i64 => Int64, true; u64 => Uint64, false;
    f32 => Float32, false; f64 => Float64, false;
}

impl RangeValue for &str {
    fn bytes_for(&self, datatype: Datatype) -> Option<Vec<u8>> {
        (datatype == Datatype::StringAscii).then(|| self.as_bytes().to_vec())
    }
}

impl RangeValue for String {
    fn bytes_for(&self, datatype: Datatype) -> Option<Vec<u8>> {
        self.as_str().bytes_for(datatype)
    }
}

/// Per dimension of a schema, the ranges added to it, in the order they were added.
#[derive(Clone, Debug, PartialEq)]
pub struct MultiRange {
    ranges: Vec<Vec<Range>>,
}

impl MultiRange {
    /// No range on any dimension (the whole domain).
    pub fn new(schema: &ArraySchema) -> MultiRange {
        MultiRange {
            ranges: vec![Vec::new(); schema.dimensions.len()],
        }
    }

    /// Adds the inclusive range [`lo`, `hi`] (bytes in the dimension's type) to dimension
    /// `dim`. A reversed range, a range outside the domain, a NaN bound or bytes of the wrong
    /// size are `InvalidArgument`, naming the dimension.
    pub fn add(&mut self, schema: &ArraySchema, dim: &str, lo: Vec<u8>, hi: Vec<u8>) -> Result<()> {
        let j = schema
            .dimension_index(dim)
            .ok_or_else(|| Error::invalid(format!("'{dim}' is not a dimension of the array")))?;
        let d = &schema.dimensions[j];
        let range = match d.coord_size() {
            None => {
                if lo > hi {
                    return Err(Error::invalid(format!(
                        "range ['{}', '{}'] of dimension {dim} is reversed",
                        String::from_utf8_lossy(&lo),
                        String::from_utf8_lossy(&hi)
                    )));
                }
                Range::Var(lo, hi)
            }
            Some(n) => {
                if lo.len() != n || hi.len() != n {
                    return Err(Error::invalid(format!(
                        "a range of dimension {dim} ({}) needs {n}-byte bounds, got {} and {}",
                        d.datatype,
                        lo.len(),
                        hi.len()
                    )));
                }
                let text = |b: &[u8]| value::format_value(d.datatype, b);
                if d.datatype.is_real()
                    && (value::as_f64(d.datatype, &lo)?.is_nan()
                        || value::as_f64(d.datatype, &hi)?.is_nan())
                {
                    return Err(Error::invalid(format!("a range of dimension {dim} is NaN")));
                }
                if crate::array::order::compare(d.datatype, &lo, &hi).is_gt() {
                    return Err(Error::invalid(format!(
                        "range [{}, {}] of dimension {dim} is reversed",
                        text(&lo),
                        text(&hi)
                    )));
                }
                if let Some((dlo, dhi)) = &d.domain
                    && (crate::array::order::compare(d.datatype, &lo, dlo).is_lt()
                        || crate::array::order::compare(d.datatype, &hi, dhi).is_gt())
                {
                    return Err(Error::invalid(format!(
                        "range [{}, {}] of dimension {dim} is outside its domain [{}, {}]",
                        text(&lo),
                        text(&hi),
                        text(dlo),
                        text(dhi)
                    )));
                }
                Range::Fixed(lo, hi)
            }
        };
        self.ranges[j].push(range);
        Ok(())
    }

    /// Adds [`lo`, `hi`] given as Rust values of the dimension's type (`i64` for datetime and
    /// time dimensions, `&str` for string dimensions).
    pub fn add_typed<T: RangeValue>(
        &mut self,
        schema: &ArraySchema,
        dim: &str,
        lo: T,
        hi: T,
    ) -> Result<()> {
        let d = schema
            .dimensions
            .iter()
            .find(|d| d.name == dim)
            .ok_or_else(|| Error::invalid(format!("'{dim}' is not a dimension of the array")))?;
        let wrong = || {
            Error::invalid(format!(
                "a range of type {} does not fit dimension {dim} ({})",
                std::any::type_name::<T>(),
                d.datatype
            ))
        };
        let lo = lo.bytes_for(d.datatype).ok_or_else(wrong)?;
        let hi = hi.bytes_for(d.datatype).ok_or_else(wrong)?;
        self.add(schema, dim, lo, hi)
    }

    /// The ranges of dimension `j` (empty: the whole domain).
    pub fn ranges(&self, j: usize) -> &[Range] {
        &self.ranges[j]
    }

    /// Replaces the ranges of dimension `j` (already checked against the schema).
    pub(crate) fn set(&mut self, j: usize, ranges: Vec<Range>) {
        self.ranges[j] = ranges;
    }

    /// Whether no dimension has a range.
    pub fn is_empty(&self) -> bool {
        self.ranges.iter().all(Vec::is_empty)
    }

    /// Whether some dimension has more than one range.
    pub fn is_multi(&self) -> bool {
        self.ranges.iter().any(|r| r.len() > 1)
    }

    /// The ranges of every dimension sorted, overlapping (and, on integer dimensions,
    /// adjacent) ranges merged: what TileDB reads in global order.
    pub fn merged(&self, schema: &ArraySchema) -> MultiRange {
        let ranges = schema
            .dimensions
            .iter()
            .zip(&self.ranges)
            .map(|(d, rs)| {
                let var = d.is_var();
                let cmp = |a: &[u8], b: &[u8]| {
                    if var {
                        a.cmp(b)
                    } else {
                        crate::array::order::compare(d.datatype, a, b)
                    }
                };
                let integer = !var && !d.datatype.is_real();
                let mut sorted = rs.clone();
                sorted.sort_by(|a, b| cmp(a.lo(), b.lo()));
                let mut out: Vec<Range> = Vec::new();
                for r in sorted {
                    if let Some(last) = out.last_mut() {
                        let touches = cmp(r.lo(), last.hi()).is_le()
                            || (integer
                                && value::as_i128(d.datatype, last.hi())
                                    .and_then(|h| Ok(value::as_i128(d.datatype, r.lo())? == h + 1))
                                    .unwrap_or(false));
                        if touches {
                            if cmp(r.hi(), last.hi()).is_gt() {
                                let lo = last.lo().to_vec();
                                *last = match r {
                                    Range::Var(_, hi) => Range::Var(lo, hi),
                                    Range::Fixed(_, hi) => Range::Fixed(lo, hi),
                                };
                            }
                            continue;
                        }
                    }
                    out.push(r);
                }
                out
            })
            .collect();
        MultiRange { ranges }
    }

    /// Dense arrays: per dimension the integer ranges, the domain for a dimension without any.
    pub(crate) fn dense_ranges(&self, schema: &ArraySchema) -> Result<Vec<Vec<(i128, i128)>>> {
        schema
            .dimensions
            .iter()
            .zip(&self.ranges)
            .map(|(d, rs)| {
                if rs.is_empty() {
                    let (lo, hi) = d.domain.as_ref().ok_or_else(|| {
                        Error::corrupt(format!("dense dimension {} has no domain", d.name))
                    })?;
                    return Ok(vec![(
                        value::as_i128(d.datatype, lo)?,
                        value::as_i128(d.datatype, hi)?,
                    )]);
                }
                rs.iter()
                    .map(|r| {
                        Ok((
                            value::as_i128(d.datatype, r.lo())?,
                            value::as_i128(d.datatype, r.hi())?,
                        ))
                    })
                    .collect()
            })
            .collect()
    }
}

/// Whether coordinate `v` of a dimension of `datatype` (`var`: a string dimension) lies in `r`.
pub(crate) fn contains(datatype: Datatype, var: bool, r: &Range, v: &[u8]) -> bool {
    if var {
        v >= r.lo() && v <= r.hi()
    } else {
        crate::array::order::compare(datatype, v, r.lo()).is_ge()
            && crate::array::order::compare(datatype, v, r.hi()).is_le()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Pipeline;
    use crate::array::schema::Dimension;

    pub(crate) fn schema_1d(datatype: Datatype, lo: i32, hi: i32) -> ArraySchema {
        ArraySchema {
            name: "__test".into(),
            version: 22,
            allows_dups: false,
            array_type: crate::array::schema::ArrayType::Dense,
            tile_order: crate::array::schema::Layout::RowMajor,
            cell_order: crate::array::schema::Layout::RowMajor,
            capacity: 10000,
            coords_filters: Pipeline::new(),
            offsets_filters: Pipeline::new(),
            validity_filters: Pipeline::new(),
            dimensions: vec![Dimension {
                name: "x".into(),
                datatype,
                cell_val_num: 1,
                filters: Pipeline::new(),
                uses_coords_filters: false,
                domain: Some((lo.to_le_bytes().to_vec(), hi.to_le_bytes().to_vec())),
                tile_extent: Some(2i32.to_le_bytes().to_vec()),
            }],
            attributes: Vec::new(),
            labels: Vec::new(),
            enumerations: Vec::new(),
            loaded_enumerations: Vec::new(),
            current_domain: None,
        }
    }

    #[test]
    fn ranges_are_checked_as_added() {
        let s = schema_1d(Datatype::Int32, 1, 10);
        let mut m = MultiRange::new(&s);
        m.add_typed(&s, "x", 2, 3).unwrap();
        m.add_typed(&s, "x", 1, 1).unwrap();
        assert!(m.is_multi());
        assert_eq!(m.dense_ranges(&s).unwrap(), vec![vec![(2, 3), (1, 1)]]);
        let e = m.add_typed(&s, "x", 4, 3).unwrap_err();
        assert!(e.message().contains("reversed"), "{e}");
        let e = m.add_typed(&s, "x", 0, 3).unwrap_err();
        assert!(e.message().contains("outside its domain [1, 10]"), "{e}");
        let e = m.add_typed(&s, "x", 1i64, 3i64).unwrap_err();
        assert!(
            e.message().contains("does not fit dimension x (INT32)"),
            "{e}"
        );
        let e = m.add_typed(&s, "y", 1, 3).unwrap_err();
        assert!(e.message().contains("'y' is not a dimension"), "{e}");
        let mut g = MultiRange::new(&s);
        for (lo, hi) in [(5, 6), (1, 2), (3, 3), (2, 3), (9, 9), (7, 8)] {
            g.add_typed(&s, "x", lo, hi).unwrap();
        }
        // Overlapping and adjacent ranges merge; 4 is in none.
        assert_eq!(
            g.merged(&s).dense_ranges(&s).unwrap(),
            vec![vec![(1, 3), (5, 9)]]
        );
        let whole = MultiRange::new(&s);
        assert!(whole.is_empty());
        assert_eq!(whole.dense_ranges(&s).unwrap(), vec![vec![(1, 10)]]);
    }
}
