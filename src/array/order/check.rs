//! The checks of a batch of sparse coordinates before it is written, in TileDB's words: every
//! coordinate inside the domain and current domain, no duplicates unless allowed, and cells
//! of a global-order write already in global order.

use super::global::{Cells, DimCoords, Order, format_coord};
use super::{Kind, StringOrder, cmp_strings};
use crate::array::schema::ArraySchema;
use crate::error::{Error, Result};
use rayon::prelude::*;

/// Checks that every coordinate lies inside its dimension's domain, and inside the current
/// domain when the schema has one (string dimensions have no domain; NaN is outside every
/// domain). The error names the dimension, the value and the bounds, in TileDB's words.
pub fn check_domain(schema: &ArraySchema, coords: &[DimCoords<'_>]) -> Result<()> {
    let cells = Cells::new(schema, coords)?;
    check_cells_domain(&cells)
}

pub(crate) fn check_cells_domain(cells: &Cells<'_>) -> Result<()> {
    let current = cells.schema.current_domain.as_deref();
    for (d, v) in cells.dims.iter().enumerate() {
        let digits = match v.kind {
            Kind::F32 => 7,
            Kind::F64 => 16,
            _ => 6,
        };
        if v.kind != Kind::Str {
            let (lo, hi) = v.dim.domain.as_ref().expect("checked in Cells::new");
            let (wl, wh) = (v.kind.order_word(lo), v.kind.order_word(hi));
            let bad = (0..cells.n).into_par_iter().find_first(|&i| {
                let c = v.cell(i);
                let w = v.kind.order_word(c);
                w < wl || w > wh || (v.kind.is_float() && v.kind.float(c).is_nan())
            });
            if let Some(i) = bad {
                return Err(Error::invalid(format!(
                    "Coordinate {} is out of domain bounds [{}, {}] on dimension '{}'",
                    format_coord(v.kind, v.cell(i), digits),
                    format_coord(v.kind, lo, digits),
                    format_coord(v.kind, hi, digits),
                    v.dim.name
                )));
            }
        }
        if let Some(range) = current.and_then(|c| c.get(d)) {
            let (lo, hi) = (range.lo(), range.hi());
            // TileDB checks the non-empty domain against it (`CurrentDomain::includes`):
            // numbers numerically, strings as `std::string_view`, by unsigned bytes.
            let cmp = |a: &[u8], b: &[u8]| match v.kind {
                Kind::Str => cmp_strings(a, b, StringOrder::UnsignedBytes),
                k => k.cmp(a, b),
            };
            let bad = (0..cells.n).into_par_iter().find_first(|&i| {
                let c = v.cell(i);
                cmp(c, lo).is_lt() || cmp(c, hi).is_gt()
            });
            if let Some(i) = bad {
                return Err(Error::invalid(format!(
                    "Cells are written outside of the defined current domain: coordinate {} is \
                     outside [{}, {}] on dimension '{}'",
                    format_coord(v.kind, v.cell(i), digits),
                    format_coord(v.kind, lo, digits),
                    format_coord(v.kind, hi, digits),
                    v.dim.name
                )));
            }
        }
    }
    Ok(())
}

/// Refuses duplicate coordinates when the schema does not allow them: `order` is the cells'
/// global order ([`global_order`], or the identity for cells written in global order). The
/// error names the first duplicate in TileDB's words: `Duplicate coordinates (3, 0.5) are not
/// allowed`.
pub fn check_duplicates(
    schema: &ArraySchema,
    coords: &[DimCoords<'_>],
    order: &[u64],
) -> Result<()> {
    if schema.allows_dups {
        return Ok(());
    }
    let cells = Cells::new(schema, coords)?;
    if order.len() != cells.n {
        return Err(Error::invalid(format!(
            "an order of {} cells for {} cells",
            order.len(),
            cells.n
        )));
    }
    if let Some(&bad) = order.iter().find(|&&i| i as usize >= cells.n) {
        return Err(Error::invalid(format!(
            "the order names cell {bad} of {}",
            cells.n
        )));
    }
    let same_bytes = |a: usize, b: usize| cells.dims.iter().all(|v| v.cell(a) == v.cell(b));
    let dup = (1..order.len())
        .into_par_iter()
        .find_first(|&k| same_bytes(order[k - 1] as usize, order[k] as usize));
    if let Some(k) = dup {
        return Err(duplicate_error(&cells, order[k] as usize));
    }
    // Cells equal as numbers but not as bytes (`-0.0`, `0.0`) may stand between two identical
    // ones (TileDB's order among them is its sort's); look inside such runs.
    if cells.dims.iter().any(|v| v.kind.is_float()) {
        let same_value = |a: usize, b: usize| {
            cells.dims.iter().all(|v| match v.kind {
                Kind::Str => v.cell(a) == v.cell(b),
                k => k.order_word(v.cell(a)) == k.order_word(v.cell(b)),
            })
        };
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            while end < order.len() && same_value(order[start] as usize, order[end] as usize) {
                end += 1;
            }
            if end - start > 2 {
                let mut run: Vec<usize> = order[start..end].iter().map(|&i| i as usize).collect();
                let bytes = |i: usize| cells.dims.iter().map(move |v| v.cell(i));
                run.sort_by(|&a, &b| bytes(a).cmp(bytes(b)));
                if let Some(w) = run.windows(2).find(|w| same_bytes(w[0], w[1])) {
                    return Err(duplicate_error(&cells, w[1]));
                }
            }
            start = end;
        }
    }
    Ok(())
}

pub(crate) fn duplicate_error(cells: &Cells<'_>, i: usize) -> Error {
    Error::invalid(format!(
        "Duplicate coordinates {} are not allowed",
        cells.describe(i)
    ))
}

/// Checks that cells given in global order (a global-order write) are sorted, and that the
/// first comes after the last cell of the previous batch (`previous`, one cell per dimension).
/// Errors use TileDB's words (`GlobalOrderWriter::check_global_order`): for Hilbert cell
/// order only the Hilbert values are checked, as TileDB does.
pub fn check_global_order(
    schema: &ArraySchema,
    coords: &[DimCoords<'_>],
    previous: Option<&[DimCoords<'_>]>,
) -> Result<()> {
    let cells = Cells::new(schema, coords)?;
    if cells.n == 0 {
        return Ok(());
    }
    let order = Order::new(&cells)?;
    let hilbert = order.hilbert.is_some();
    let what = if hilbert { "hilbert" } else { "global" };
    if let Some(prev) = previous {
        let prev_cells = Cells::new(schema, prev)?;
        if prev_cells.n != 1 {
            return Err(Error::invalid(format!(
                "the previous batch's last cell has {} cells per dimension, not 1",
                prev_cells.n
            )));
        }
        let prev_order = Order::new(&prev_cells)?;
        let (tile, fail) = if hilbert {
            let (p, h) = (
                prev_order.hilbert.as_ref().expect("hilbert")[0],
                order.hilbert.as_ref().expect("hilbert")[0],
            );
            (false, p > h)
        } else {
            let (last, first) = ((&prev_cells, 0), (&cells, 0));
            let t = order.cmp_tiles(last, first);
            (
                t.is_gt(),
                t.is_gt() || (t.is_eq() && order.cmp_coords(last, first).is_gt()),
            )
        };
        if fail {
            let coord = if hilbert { "Coordinates" } else { "Coordinate" };
            return Err(Error::invalid(format!(
                "Write failed; {coord} {} comes before last written coordinate in the {what} \
                 order{}",
                cells.describe(0),
                if tile {
                    " due to writes across tiles"
                } else {
                    ""
                }
            )));
        }
    }
    let bad = (0..cells.n - 1).into_par_iter().find_first(|&i| {
        if let Some(h) = &order.hilbert {
            h[i] > h[i + 1]
        } else {
            order.cmp(i, i + 1).is_gt()
        }
    });
    if let Some(i) = bad {
        let across = !hilbert && order.cmp_tiles((&cells, i), (&cells, i + 1)).is_gt();
        return Err(Error::invalid(format!(
            "Write failed; Coordinates {} succeed {} in the {what} order{}",
            cells.describe(i),
            cells.describe(i + 1),
            if across {
                " due to writes across tiles"
            } else {
                ""
            }
        )));
    }
    Ok(())
}
