//! Sparse multi-range reads: the visible cells of the ranges' bounding box are read with
//! [`Array::read`] (global order, de-duplicated), then kept by the ranges. Unordered and
//! global-order results hold each cell once; row-major and column-major results hold a cell
//! once per combination of ranges containing it (as TileDB 2.30 returns them), sorted by
//! coordinates.

use super::QueryLayout;
use super::filter::{self, CellFilter};
use super::gather::gather;
use super::ranges::{MultiRange, contains};
use crate::array::schema::{ArraySchema, Range};
use crate::array::{Array, FieldData};
use crate::error::Result;
use std::cmp::Ordering;

/// The cells a sparse query selects: every field read, and per cell how many times it comes
/// back (0: not selected).
pub(crate) struct Selection {
    /// The names read: the requested fields, then the dimensions and condition fields missing.
    pub names: Vec<String>,
    /// Their cells over the bounding box, in global order.
    pub fields: Vec<FieldData>,
    /// Per cell: the number of range combinations containing it, 0 when outside or failing
    /// the condition.
    pub times: Vec<u64>,
}

/// The ranges' bounding box (a dimension without ranges: the non-empty domain): `Some(None)`
/// when no dimension has a range (the whole array), `None` when no fragment is visible.
fn bounding_box(array: &Array, mr: &MultiRange) -> Option<Option<Vec<Range>>> {
    if mr.is_empty() {
        return Some(None);
    }
    let schema = array.schema();
    let ned = array.non_empty_domain()?;
    let boxed = schema
        .dimensions
        .iter()
        .enumerate()
        .map(|(j, d)| {
            let rs = mr.ranges(j);
            if rs.is_empty() {
                return ned[j].clone();
            }
            let less = |a: &[u8], b: &[u8]| {
                if d.is_var() {
                    a < b
                } else {
                    crate::array::order::compare(d.datatype, a, b).is_lt()
                }
            };
            let mut lo = rs[0].lo();
            let mut hi = rs[0].hi();
            for r in &rs[1..] {
                if less(r.lo(), lo) {
                    lo = r.lo();
                }
                if less(hi, r.hi()) {
                    hi = r.hi();
                }
            }
            match rs[0] {
                Range::Var(..) => Range::Var(lo.to_vec(), hi.to_vec()),
                Range::Fixed(..) => Range::Fixed(lo.to_vec(), hi.to_vec()),
            }
        })
        .collect();
    Some(Some(boxed))
}

/// Selects the cells of `mr` passing `filter`, reading `fields` and the dimensions.
pub(crate) fn select(
    array: &Array,
    fields: &[String],
    mr: &MultiRange,
    filter: Option<&dyn CellFilter>,
) -> Result<Selection> {
    let schema = array.schema();
    let mut names: Vec<String> = fields.to_vec();
    let ffields = filter.map(|f| f.fields()).unwrap_or_default();
    for n in schema
        .dimensions
        .iter()
        .map(|d| &d.name)
        .chain(ffields.iter())
    {
        if !names.contains(n) {
            names.push(n.clone());
        }
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let fields_read = match bounding_box(array, mr) {
        Some(bbox) => array.read(&refs, bbox.as_deref())?,
        // No fragment: nothing to select (read over nothing to get typed empty fields).
        None => array.read(&refs, None)?,
    };
    let n = fields_read.first().map_or(0, |f| f.cell_count) as usize;
    let dims: Vec<&FieldData> = schema
        .dimensions
        .iter()
        .map(|d| &fields_read[names.iter().position(|x| *x == d.name).expect("added")])
        .collect();
    let mut times = vec![1u64; n];
    for (j, d) in schema.dimensions.iter().enumerate() {
        let rs = mr.ranges(j);
        if rs.is_empty() {
            continue;
        }
        for (i, t) in times.iter_mut().enumerate() {
            if *t == 0 {
                continue;
            }
            let v = dims[j].cell(i);
            *t *= rs
                .iter()
                .filter(|r| contains(d.datatype, d.is_var(), r, v))
                .count() as u64;
        }
    }
    if let Some(filter) = filter {
        let fcells: Vec<FieldData> = ffields
            .iter()
            .map(|f| fields_read[names.iter().position(|x| x == f).expect("added")].clone())
            .collect();
        let pass = filter::run(filter, &fcells, n as u64)?;
        for (t, p) in times.iter_mut().zip(pass) {
            if !p {
                *t = 0;
            }
        }
    }
    Ok(Selection {
        names,
        fields: fields_read,
        times,
    })
}

/// Reads `fields` over `mr` in `layout`.
pub(crate) fn read(
    array: &Array,
    fields: &[String],
    mr: &MultiRange,
    layout: QueryLayout,
    filter: Option<&dyn CellFilter>,
) -> Result<Vec<FieldData>> {
    let schema = array.schema();
    let sel = select(array, fields, mr, filter)?;
    let picks: Vec<(u32, u64)> = match layout {
        QueryLayout::GlobalOrder | QueryLayout::Unordered => sel
            .times
            .iter()
            .enumerate()
            .filter(|(_, t)| **t > 0)
            .map(|(i, _)| (0, i as u64))
            .collect(),
        QueryLayout::RowMajor | QueryLayout::ColMajor => {
            let mut cells: Vec<u64> = sel
                .times
                .iter()
                .enumerate()
                .flat_map(|(i, t)| std::iter::repeat_n(i as u64, *t as usize))
                .collect();
            let dims: Vec<&FieldData> = schema
                .dimensions
                .iter()
                .map(|d| &sel.fields[sel.names.iter().position(|x| *x == d.name).expect("read")])
                .collect();
            let order: Vec<usize> = if layout == QueryLayout::ColMajor {
                (0..dims.len()).rev().collect()
            } else {
                (0..dims.len()).collect()
            };
            cells.sort_by(|a, b| compare_coords(schema, &dims, &order, *a as usize, *b as usize));
            cells.into_iter().map(|c| (0, c)).collect()
        }
    };
    Ok((0..fields.len())
        .map(|k| gather(&sel.fields[k], &[&sel.fields[k]], &picks))
        .collect())
}

/// Compares cells `a` and `b` by their coordinates, dimensions in `order`.
fn compare_coords(
    schema: &ArraySchema,
    dims: &[&FieldData],
    order: &[usize],
    a: usize,
    b: usize,
) -> Ordering {
    for &j in order {
        let d = &schema.dimensions[j];
        let (x, y) = (dims[j].cell(a), dims[j].cell(b));
        let o = if d.is_var() {
            x.cmp(y)
        } else {
            crate::array::order::compare(d.datatype, x, y)
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}
