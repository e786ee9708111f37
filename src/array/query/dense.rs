//! Dense multi-range reads: every combination of one range per dimension is a box read with
//! [`Array::read`]; the cells come back in row-major or column-major order over the
//! concatenated ranges of each dimension (overlapping ranges repeat cells), or, for one box,
//! in the array's global order (tile order, then cell order inside each space tile).

use super::QueryLayout;
use super::filter::{self, CellFilter};
use super::gather::{fill_failing, gather};
use crate::array::geometry::dense_grid;
use crate::array::schema::{ArraySchema, Layout, Range};
use crate::array::{Array, FieldData, value};
use crate::error::{Error, Result};

/// An inclusive integer box, one (low, high) pair per dimension.
pub(crate) type Cube = Vec<(i128, i128)>;

/// Cells of a box.
pub(crate) fn cells(b: &[(i128, i128)]) -> Result<u64> {
    b.iter().try_fold(1u64, |n, (l, h)| {
        n.checked_mul(u64::try_from(h - l + 1).map_err(|_| Error::invalid("empty range"))?)
            .ok_or_else(|| Error::invalid("the subarray has more than 2^64 cells"))
    })
}

/// The boxes of every combination of one range per dimension, the last dimension's range
/// varying fastest.
pub(crate) fn boxes(ranges: &[Vec<(i128, i128)>]) -> Vec<Cube> {
    let mut out = vec![Vec::new()];
    for rs in ranges {
        out = out
            .into_iter()
            .flat_map(|b: Cube| {
                rs.iter().map(move |r| {
                    let mut b = b.clone();
                    b.push(*r);
                    b
                })
            })
            .collect();
    }
    out
}

/// A box as subarray ranges of `schema`'s dimension types.
pub(crate) fn as_ranges(schema: &ArraySchema, b: &[(i128, i128)]) -> Vec<Range> {
    schema
        .dimensions
        .iter()
        .zip(b)
        .map(|(d, (l, h))| {
            Range::Fixed(
                value::from_i128(d.datatype, *l),
                value::from_i128(d.datatype, *h),
            )
        })
        .collect()
}

/// Reads `names` (attributes or dimensions) over box `b`, cells in row-major order.
pub(crate) fn read_box(
    array: &Array,
    names: &[String],
    b: &[(i128, i128)],
) -> Result<Vec<FieldData>> {
    let schema = array.schema();
    let attrs: Vec<&str> = names
        .iter()
        .filter(|n| schema.attribute_index(n).is_some())
        .map(String::as_str)
        .collect();
    let mut read = if attrs.is_empty() {
        Vec::new()
    } else {
        array.read(&attrs, Some(&as_ranges(schema, b)))?
    }
    .into_iter();
    let n = cells(b)?;
    names
        .iter()
        .map(|name| match schema.dimension_index(name) {
            Some(j) => Ok(coordinates(schema, j, b, n)),
            None if schema.attribute_index(name).is_some() => {
                Ok(read.next().expect("one result per attribute"))
            }
            None => Err(Error::invalid(format!(
                "'{name}' is not an attribute or dimension of the array"
            ))),
        })
        .collect()
}

/// The coordinates of dimension `j` of the cells of box `b` in row-major order.
fn coordinates(schema: &ArraySchema, j: usize, b: &[(i128, i128)], n: u64) -> FieldData {
    let d = &schema.dimensions[j];
    let inner: u64 = b[j + 1..].iter().map(|(l, h)| (h - l + 1) as u64).product();
    let width = (b[j].1 - b[j].0 + 1) as u64;
    let mut data = Vec::with_capacity(n as usize * d.datatype.size());
    for k in 0..n {
        let v = b[j].0 + ((k / inner) % width) as i128;
        data.extend_from_slice(&value::from_i128(d.datatype, v));
    }
    FieldData {
        name: d.name.clone(),
        datatype: d.datatype,
        cell_val_num: 1,
        data,
        offsets: None,
        validity: None,
        cell_count: n,
    }
}

/// The fields of one box of a dense query, failing cells already filled, and the condition's
/// flags.
pub(crate) struct BoxResult {
    /// The requested fields over the box (row-major).
    pub fields: Vec<FieldData>,
    /// Which cells passed the condition (`None`: no condition).
    pub pass: Option<Vec<bool>>,
}

/// Reads `fields` over box `b` and applies `filter`.
pub(crate) fn read_filtered_box(
    array: &Array,
    fields: &[String],
    b: &[(i128, i128)],
    filter: Option<&dyn CellFilter>,
) -> Result<BoxResult> {
    let Some(filter) = filter else {
        return Ok(BoxResult {
            fields: read_box(array, fields, b)?,
            pass: None,
        });
    };
    let ffields = filter.fields();
    let mut names: Vec<String> = fields.to_vec();
    for f in &ffields {
        if !names.contains(f) {
            names.push(f.clone());
        }
    }
    let all = read_box(array, &names, b)?;
    let fcells: Vec<FieldData> = ffields
        .iter()
        .map(|f| all[names.iter().position(|n| n == f).expect("added")].clone())
        .collect();
    let n = cells(b)?;
    let pass = filter::run(filter, &fcells, n)?;
    let schema = array.schema();
    let mut out: Vec<FieldData> = all.into_iter().take(fields.len()).collect();
    for f in &mut out {
        if let Some(i) = schema.attribute_index(&f.name) {
            let a = &schema.attributes[i];
            fill_failing(f, &pass, &a.fill_value, 0);
        }
    }
    Ok(BoxResult {
        fields: out,
        pass: Some(pass),
    })
}

/// Reads `fields` over the per-dimension `ranges` in `layout`.
pub(crate) fn read(
    array: &Array,
    fields: &[String],
    ranges: &[Vec<(i128, i128)>],
    layout: QueryLayout,
    filter: Option<&dyn CellFilter>,
) -> Result<Vec<FieldData>> {
    let schema = array.schema();
    let bs = boxes(ranges);
    let total = bs.iter().try_fold(0u64, |t, b| {
        t.checked_add(cells(b)?)
            .ok_or_else(|| Error::invalid("the subarray has more than 2^64 cells"))
    })?;
    let per_cell = |f: &String| match (schema.attribute_index(f), schema.dimension_index(f)) {
        (Some(i), _) => {
            let a = &schema.attributes[i];
            a.cell_size().unwrap_or(8) as u64 + u64::from(a.nullable)
        }
        (None, Some(j)) => schema.dimensions[j].datatype.size() as u64,
        _ => 0,
    };
    for f in fields {
        array.check_result_size(f, total.saturating_mul(per_cell(f)))?;
    }
    // Boxes that share space tiles are read as their bounding box, each tile decoded once
    // (not once per box), when that box's result fits the memory limit.
    let ordered = matches!(layout, QueryLayout::RowMajor | QueryLayout::ColMajor);
    if ordered
        && bs.len() > 1
        && let Some(bb) = shared_bounding_box(schema, &bs)?
    {
        let n = cells(&bb)?;
        if fields.iter().all(|f| {
            array
                .check_result_size(f, n.saturating_mul(per_cell(f)))
                .is_ok()
        }) {
            let whole = read_filtered_box(array, fields, &bb, filter)?;
            let picks = bounding_order(ranges, &bb, layout == QueryLayout::ColMajor);
            return Ok(whole
                .fields
                .iter()
                .map(|f| gather(f, &[f], &picks))
                .collect());
        }
    }
    let mut parts: Vec<BoxResult> = bs
        .iter()
        .map(|b| read_filtered_box(array, fields, b, filter))
        .collect::<Result<_>>()?;
    // One box read row-major is already in its order: no copy.
    if layout == QueryLayout::RowMajor && parts.len() == 1 {
        return Ok(parts.pop().expect("one part").fields);
    }
    // Several ranges on the dimension that varies slowest only (the first in row-major, the
    // last in column-major): the boxes' row-major results one after the other are the
    // product order (a box read is row-major, so column-major needs one dimension).
    let slowest_only = |d: usize| {
        ranges
            .iter()
            .enumerate()
            .all(|(j, rs)| j == d || rs.len() == 1)
    };
    let concatenated = (layout == QueryLayout::RowMajor && slowest_only(0))
        || (layout == QueryLayout::ColMajor && ranges.len() == 1);
    if concatenated && !parts.is_empty() {
        let mut columns: Vec<Vec<FieldData>> = fields.iter().map(|_| Vec::new()).collect();
        for p in parts {
            for (c, f) in columns.iter_mut().zip(p.fields) {
                c.push(f);
            }
        }
        return Ok(columns.into_iter().map(concat).collect());
    }
    let picks = match layout {
        QueryLayout::RowMajor => product_order(ranges, false),
        QueryLayout::ColMajor => product_order(ranges, true),
        QueryLayout::GlobalOrder => {
            let [b] = bs.as_slice() else {
                return Err(Error::invalid(
                    "a dense read in global order takes one range per dimension",
                ));
            };
            global_order(schema, b)?
        }
        QueryLayout::Unordered => {
            return Err(Error::invalid(
                "unordered reads are not supported on dense arrays",
            ));
        }
    };
    Ok((0..fields.len())
        .map(|k| {
            let ps: Vec<&FieldData> = parts.iter().map(|p| &p.fields[k]).collect();
            gather(ps[0], &ps, &picks)
        })
        .collect())
}

/// The space tiles of `schema`'s grid that box `b` intersects.
fn tiles_of(grid: &[(i128, i128)], b: &[(i128, i128)]) -> u128 {
    grid.iter().zip(b).fold(1u128, |n, ((lo, e), (l, h))| {
        n.saturating_mul(((h - lo).div_euclid(*e) - (l - lo).div_euclid(*e) + 1) as u128)
    })
}

/// The bounding box of boxes `bs` when it intersects no more space tiles than the boxes do
/// one by one (they share tiles), else `None`.
fn shared_bounding_box(schema: &ArraySchema, bs: &[Cube]) -> Result<Option<Cube>> {
    let mut grid = Vec::with_capacity(schema.dimensions.len());
    for d in &schema.dimensions {
        let (lo, e) = dense_grid(d)?;
        grid.push((
            value::as_i128(d.datatype, lo)?,
            value::as_u64_extent(d.datatype, e)? as i128,
        ));
    }
    let Some(first) = bs.first() else {
        return Ok(None);
    };
    let mut bb = first.clone();
    for b in &bs[1..] {
        for (r, (l, h)) in bb.iter_mut().zip(b) {
            r.0 = r.0.min(*l);
            r.1 = r.1.max(*h);
        }
    }
    let apart = bs
        .iter()
        .fold(0u128, |n, b| n.saturating_add(tiles_of(&grid, b)));
    Ok((tiles_of(&grid, &bb) <= apart).then_some(bb))
}

/// (0, cell of bounding box `bb` in row-major order) of every result cell in row-major (`col`
/// false) or column-major order over the concatenated ranges of each dimension.
fn bounding_order(ranges: &[Vec<(i128, i128)>], bb: &[(i128, i128)], col: bool) -> Vec<(u32, u64)> {
    let n = ranges.len();
    let mut strides = vec![1u64; n];
    for d in (0..n.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * (bb[d + 1].1 - bb[d + 1].0 + 1) as u64;
    }
    // Per dimension: the offset in `bb` (times its stride) of each position of the
    // concatenation.
    let flat: Vec<Vec<u64>> = ranges
        .iter()
        .zip(bb)
        .zip(&strides)
        .map(|((rs, (bl, _)), s)| {
            rs.iter()
                .flat_map(|(l, h)| (*l..=*h).map(move |v| (v - bl) as u64 * s))
                .collect()
        })
        .collect();
    let total: usize = flat.iter().map(Vec::len).product();
    let mut out = Vec::with_capacity(total);
    if total == 0 {
        return out;
    }
    let dims: Vec<usize> = if col {
        (0..n).collect()
    } else {
        (0..n).rev().collect()
    };
    let mut pos = vec![0usize; n];
    loop {
        out.push((0, (0..n).map(|d| flat[d][pos[d]]).sum()));
        let mut k = 0;
        loop {
            if k == n {
                return out;
            }
            let d = dims[k];
            pos[d] += 1;
            if pos[d] < flat[d].len() {
                break;
            }
            pos[d] = 0;
            k += 1;
        }
    }
}

/// The cells of `parts` (one field's results of consecutive boxes) one after the other.
fn concat(parts: Vec<FieldData>) -> FieldData {
    let mut out: Option<FieldData> = None;
    for p in parts {
        let Some(o) = out.as_mut() else {
            out = Some(p);
            continue;
        };
        if let (Some(oo), Some(po)) = (o.offsets.as_mut(), p.offsets.as_ref()) {
            let base = o.data.len() as u64;
            oo.extend(po.iter().map(|x| x + base));
        }
        if let (Some(ov), Some(pv)) = (o.validity.as_mut(), p.validity.as_ref()) {
            ov.extend_from_slice(pv);
        }
        o.data.extend_from_slice(&p.data);
        o.cell_count += p.cell_count;
    }
    out.expect("at least one box")
}

/// (box, cell in box) of every result cell in row-major (`col` false) or column-major order
/// over the concatenated ranges of each dimension.
pub(crate) fn product_order(ranges: &[Vec<(i128, i128)>], col: bool) -> Vec<(u32, u64)> {
    let n = ranges.len();
    // Per dimension: (range index, offset in range) of each position of the concatenation.
    let flat: Vec<Vec<(usize, u64)>> = ranges
        .iter()
        .map(|rs| {
            rs.iter()
                .enumerate()
                .flat_map(|(r, (l, h))| (0..(h - l + 1) as u64).map(move |o| (r, o)))
                .collect()
        })
        .collect();
    let total: usize = flat.iter().map(Vec::len).product();
    let mut out = Vec::with_capacity(total);
    if total == 0 {
        return out;
    }
    let dims: Vec<usize> = if col {
        (0..n).collect()
    } else {
        (0..n).rev().collect()
    };
    let mut pos = vec![0usize; n];
    loop {
        let (mut bx, mut cell) = (0u64, 0u64);
        for d in 0..n {
            let (r, o) = flat[d][pos[d]];
            let (l, h) = ranges[d][r];
            bx = bx * ranges[d].len() as u64 + r as u64;
            cell = cell * (h - l + 1) as u64 + o;
        }
        out.push((bx as u32, cell));
        // Advance the odometer, the fastest dimension first.
        let mut k = 0;
        loop {
            if k == n {
                return out;
            }
            let d = dims[k];
            pos[d] += 1;
            if pos[d] < flat[d].len() {
                break;
            }
            pos[d] = 0;
            k += 1;
        }
    }
}

/// The cells of box `b` (as row-major offsets in it) in the schema's global order: space tiles
/// in tile order, cells in cell order inside each.
pub(crate) fn global_order(schema: &ArraySchema, b: &[(i128, i128)]) -> Result<Vec<(u32, u64)>> {
    let n = b.len();
    let mut dom_lo = Vec::with_capacity(n);
    let mut ext = Vec::with_capacity(n);
    for d in &schema.dimensions {
        let (lo, e) = dense_grid(d)?;
        dom_lo.push(value::as_i128(d.datatype, lo)?);
        ext.push(value::as_u64_extent(d.datatype, e)? as i128);
    }
    let widths: Vec<u64> = b.iter().map(|(l, h)| (h - l + 1) as u64).collect();
    let mut bstrides = vec![1u64; n];
    for d in (0..n.saturating_sub(1)).rev() {
        bstrides[d] = bstrides[d + 1] * widths[d + 1];
    }
    let tiles: Cube = (0..n)
        .map(|d| {
            (
                (b[d].0 - dom_lo[d]).div_euclid(ext[d]),
                (b[d].1 - dom_lo[d]).div_euclid(ext[d]),
            )
        })
        .collect();
    let mut out = Vec::with_capacity(cells(b)? as usize);
    for_each_point(&tiles, schema.tile_order == Layout::ColMajor, |t| {
        let sub: Cube = (0..n)
            .map(|d| {
                let lo = dom_lo[d] + t[d] * ext[d];
                (lo.max(b[d].0), (lo + ext[d] - 1).min(b[d].1))
            })
            .collect();
        for_each_point(&sub, schema.cell_order == Layout::ColMajor, |p| {
            let off: u64 = (0..n).map(|d| (p[d] - b[d].0) as u64 * bstrides[d]).sum();
            out.push((0, off));
        });
    });
    Ok(out)
}

/// Calls `f` for every point of box `c`, row-major (last dimension fastest) or column-major.
pub(crate) fn for_each_point(c: &[(i128, i128)], col: bool, mut f: impl FnMut(&[i128])) {
    let n = c.len();
    if c.iter().any(|(l, h)| l > h) {
        return;
    }
    let mut p: Vec<i128> = c.iter().map(|(l, _)| *l).collect();
    loop {
        f(&p);
        let mut k = 0;
        loop {
            if k == n {
                return;
            }
            let d = if col { k } else { n - 1 - k };
            if p[d] < c[d].1 {
                p[d] += 1;
                break;
            }
            p[d] = c[d].0;
            k += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_orders_follow_the_concatenated_ranges() {
        // Rows [4,5],[1,2]; columns [3,3],[1,1] (TileDB returns (4,3),(4,1),(5,3),(5,1),…).
        let ranges = vec![vec![(4, 5), (1, 2)], vec![(3, 3), (1, 1)]];
        let bs = boxes(&ranges);
        assert_eq!(bs[1], vec![(4, 5), (1, 1)]);
        let row = product_order(&ranges, false);
        assert_eq!(
            row,
            [
                (0, 0),
                (1, 0),
                (0, 1),
                (1, 1),
                (2, 0),
                (3, 0),
                (2, 1),
                (3, 1)
            ]
        );
        let col = product_order(&ranges, true);
        assert_eq!(
            col,
            [
                (0, 0),
                (0, 1),
                (2, 0),
                (2, 1),
                (1, 0),
                (1, 1),
                (3, 0),
                (3, 1)
            ]
        );
        // Overlapping ranges repeat cells.
        let o = product_order(&[vec![(1, 2), (2, 3)]], false);
        assert_eq!(o, [(0, 0), (0, 1), (1, 0), (1, 1)]);
    }

    #[test]
    fn points_in_both_orders() {
        let mut row = Vec::new();
        for_each_point(&[(1, 2), (5, 6)], false, |p| row.push(p.to_vec()));
        assert_eq!(row, [[1, 5], [1, 6], [2, 5], [2, 6]]);
        let mut col = Vec::new();
        for_each_point(&[(1, 2), (5, 6)], true, |p| col.push(p.to_vec()));
        assert_eq!(col, [[1, 5], [2, 5], [1, 6], [2, 6]]);
    }
}
