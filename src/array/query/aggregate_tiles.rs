//! Running aggregates over a query: tiles lying wholly inside the subarray answered from
//! fragment tile metadata (count, null count, sum, min, max) without decoding when only that
//! tile provides their cells and the condition (if any) holds for all of them; tiles where
//! the condition cannot hold skipped; every other cell decoded.

use super::QueryStats;
use super::aggregate::Accumulator;
use super::classify::Class;
use super::dense::{self, Cube};
use super::filter::CellFilter;
use super::ranges::MultiRange;
use super::sparse;
use super::tiles::MetaCache;
use crate::array::condition::Tri;
use crate::array::geometry::dense_grid;
use crate::array::schema::Layout;
use crate::array::{Array, FieldData, value};
use crate::error::Result;
use rayon::prelude::*;
use std::cell::RefCell;

/// The distinct fields the accumulators read.
fn needed(fields: &[Option<String>]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in fields.iter().flatten() {
        if !out.contains(f) {
            out.push(f.clone());
        }
    }
    out
}

/// Adds decoded cells to the accumulators (`count` adds `count_cells`: a dense count counts
/// every cell, the condition ignored).
fn add_decoded(
    accs: &mut [Accumulator],
    fields: &[Option<String>],
    names: &[String],
    data: &[FieldData],
    pass: Option<&[bool]>,
    count_cells: u64,
) -> Result<()> {
    for (acc, f) in accs.iter_mut().zip(fields) {
        match f {
            None => acc.add_count(count_cells),
            Some(f) => {
                let k = names.iter().position(|n| n == f).expect("read");
                acc.add_cells(&data[k], pass)?;
            }
        }
    }
    Ok(())
}

/// Dense aggregates over every box of `ranges`.
pub(crate) fn dense(
    array: &Array,
    ranges: &[Vec<(i128, i128)>],
    fields: &[Option<String>],
    accs: &mut [Accumulator],
    filter: Option<&dyn CellFilter>,
    stats: &mut QueryStats,
) -> Result<()> {
    let schema = array.schema();
    let names = needed(fields);
    let cache = RefCell::new(MetaCache::new(array));
    let n = schema.dimensions.len();
    let mut dom_lo = Vec::with_capacity(n);
    let mut ext = Vec::with_capacity(n);
    for d in &schema.dimensions {
        let (lo, e) = dense_grid(d)?;
        dom_lo.push(value::as_i128(d.datatype, lo)?);
        ext.push(value::as_u64_extent(d.datatype, e)? as i128);
    }
    let neds: Vec<Option<Cube>> = array
        .fragments()
        .iter()
        .map(|f| {
            f.meta.non_empty_domain.as_ref().map(|ned| {
                schema
                    .dimensions
                    .iter()
                    .zip(ned)
                    .map(|(d, r)| {
                        Ok((
                            value::as_i128(d.datatype, r.lo())?,
                            value::as_i128(d.datatype, r.hi())?,
                        ))
                    })
                    .collect::<Result<Cube>>()
            })
        })
        .map(Option::transpose)
        .collect::<Result<_>>()?;
    // Sparse fragments in a dense array are refused by the read; no shortcut around that.
    let use_meta = array.fragments().iter().all(|f| f.meta.dense);
    for b in dense::boxes(ranges) {
        let tiles: Cube = (0..n)
            .map(|d| {
                (
                    (b[d].0 - dom_lo[d]).div_euclid(ext[d]),
                    (b[d].1 - dom_lo[d]).div_euclid(ext[d]),
                )
            })
            .collect();
        let mut pieces: Vec<Cube> = Vec::new();
        let mut any_meta = false;
        let mut result: Result<()> = Ok(());
        dense::for_each_point(&tiles, false, |t| {
            if result.is_err() {
                return;
            }
            let tile: Cube = (0..n)
                .map(|d| {
                    let lo = dom_lo[d] + t[d] * ext[d];
                    (lo, lo + ext[d] - 1)
                })
                .collect();
            let sub: Cube = (0..n)
                .map(|d| (tile[d].0.max(b[d].0), tile[d].1.min(b[d].1)))
                .collect();
            if use_meta && sub == tile {
                match metadata_tile(array, &neds, &tile, t, &cache, fields, accs, filter) {
                    Ok(Some(Tri::Never)) => {
                        stats.tiles_pruned += 1;
                        any_meta = true;
                        return;
                    }
                    Ok(Some(_)) => {
                        stats.tiles_from_metadata += 1;
                        any_meta = true;
                        return;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        result = Err(e);
                        return;
                    }
                }
            }
            stats.tiles_decoded += decoded_tiles(&neds, &sub);
            pieces.push(sub);
        });
        result?;
        // Without any tile from metadata the box is read at once.
        let reads = if any_meta { pieces } else { vec![b.clone()] };
        for piece in reads {
            if names.is_empty() && filter.is_none() {
                add_decoded(accs, fields, &names, &[], None, dense::cells(&piece)?)?;
                continue;
            }
            let r = dense::read_filtered_box(array, &names, &piece, filter)?;
            add_decoded(
                accs,
                fields,
                &names,
                &r.fields,
                r.pass.as_deref(),
                dense::cells(&piece)?,
            )?;
        }
    }
    Ok(())
}

/// The fragment tiles a read of `piece` decodes: newer fragments hide older ones.
fn decoded_tiles(neds: &[Option<Cube>], piece: &Cube) -> u64 {
    let mut remaining = vec![piece.clone()];
    let mut count = 0;
    for ned in neds.iter().rev().flatten() {
        let mut next = Vec::new();
        let mut hit = false;
        for r in remaining {
            match intersect(&r, ned) {
                Some(x) => {
                    hit = true;
                    next.extend(subtract(&r, &x));
                }
                None => next.push(r),
            }
        }
        count += u64::from(hit);
        remaining = next;
    }
    count
}

fn intersect(a: &Cube, b: &Cube) -> Option<Cube> {
    let c: Cube = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x.0.max(y.0), x.1.min(y.1)))
        .collect();
    c.iter().all(|(l, h)| l <= h).then_some(c)
}

/// `outer` minus `inner` (inside it) as disjoint boxes.
fn subtract(outer: &Cube, inner: &Cube) -> Vec<Cube> {
    let mut out = Vec::new();
    let mut cur = outer.clone();
    for d in 0..cur.len() {
        if cur[d].0 < inner[d].0 {
            let mut p = cur.clone();
            p[d].1 = inner[d].0 - 1;
            out.push(p);
            cur[d].0 = inner[d].0;
        }
        if cur[d].1 > inner[d].1 {
            let mut p = cur.clone();
            p[d].0 = inner[d].1 + 1;
            out.push(p);
            cur[d].1 = inner[d].1;
        }
    }
    out
}

/// Answers the space tile `tile` (tile coordinates `t`) from metadata when the newest fragment
/// covering any of it covers all of it (no padding, no older cells showing through):
/// `Some(Tri::Never)` when the condition holds in no cell (only `count` counts them, as a
/// dense count counts every cell), `Some(Tri::Always)` when the tile metadata answered every
/// aggregate, `None` when the tile must be decoded.
#[allow(clippy::too_many_arguments)]
fn metadata_tile(
    array: &Array,
    neds: &[Option<Cube>],
    tile: &Cube,
    t: &[i128],
    cache: &RefCell<MetaCache<'_>>,
    fields: &[Option<String>],
    accs: &mut [Accumulator],
    filter: Option<&dyn CellFilter>,
) -> Result<Option<Tri>> {
    let Some((fi, pos, cells)) = covering_tile(array, neds, tile, t)? else {
        return Ok(None);
    };
    let tri = filter.map_or(Tri::Always, |f| {
        f.prune(&|name| {
            cache
                .borrow_mut()
                .condition_stats(fi, pos, cells, name, None)
        })
    });
    match tri {
        Tri::Never => {
            for (acc, f) in accs.iter_mut().zip(fields) {
                if f.is_none() {
                    acc.add_count(cells);
                }
            }
            Ok(Some(Tri::Never))
        }
        Tri::Always => Ok(cache
            .borrow_mut()
            .try_tile(fi, pos, cells, fields, accs)?
            .then_some(Tri::Always)),
        Tri::Maybe => Ok(None),
    }
}

/// The fragment and tile position holding all of space tile `tile` (tile coordinates `t`),
/// and its cell count: the newest fragment covering any of it must cover all of it.
fn covering_tile(
    array: &Array,
    neds: &[Option<Cube>],
    tile: &Cube,
    t: &[i128],
) -> Result<Option<(usize, u64, u64)>> {
    let Some((fi, ned)) = neds.iter().enumerate().rev().find_map(|(fi, n)| {
        n.as_ref()
            .filter(|n| intersect(n, tile).is_some())
            .map(|n| (fi, n))
    }) else {
        return Ok(None);
    };
    if intersect(ned, tile).as_ref() != Some(tile) {
        return Ok(None);
    }
    let frag = &array.fragments()[fi];
    let schema = array.schema();
    // The tile's position among the fragment's tiles (tile order over its tile box).
    let n = t.len();
    let mut fbox = Vec::with_capacity(n);
    for (d, dim) in schema.dimensions.iter().enumerate() {
        let (lo, e) = dense_grid(dim)?;
        let (lo, e) = (
            value::as_i128(dim.datatype, lo)?,
            value::as_u64_extent(dim.datatype, e)? as i128,
        );
        fbox.push(((ned[d].0 - lo).div_euclid(e), (ned[d].1 - lo).div_euclid(e)));
    }
    let widths: Vec<u64> = fbox.iter().map(|(l, h)| (h - l + 1) as u64).collect();
    let mut strides = vec![1u64; n];
    if schema.tile_order == Layout::ColMajor {
        for d in 1..n {
            strides[d] = strides[d - 1] * widths[d - 1];
        }
    } else {
        for d in (0..n.saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * widths[d + 1];
        }
    }
    let pos: u64 = (0..n).map(|d| (t[d] - fbox[d].0) as u64 * strides[d]).sum();
    if pos >= frag.meta.tile_num() {
        return Ok(None);
    }
    let cells = dense::cells(tile)?;
    if frag.meta.cell_num_of_tile(pos) != cells {
        return Ok(None);
    }
    Ok(Some((fi, pos, cells)))
}

/// Sparse aggregates: each selected cell once. Where tiles can be read one by one (see
/// [`sparse::tiles_apply`]), tiles are classified against the ranges and the condition's tile
/// statistics: disjoint and never-passing tiles skipped, tiles inside the ranges where the
/// condition holds for every cell answered from tile metadata when it has the answers, the
/// others decoded (in parallel, a few at a time) and added in tile order.
pub(crate) fn sparse(
    array: &Array,
    mr: &MultiRange,
    fields: &[Option<String>],
    accs: &mut [Accumulator],
    filter: Option<&dyn CellFilter>,
    stats: &mut QueryStats,
) -> Result<()> {
    let names = needed(fields);
    let plan = if sparse::tiles_apply(array) {
        sparse::TilePlan::new(array, mr, filter, stats)?
    } else {
        None
    };
    let Some(mut plan) = plan else {
        let sel = sparse::select(array, &names, mr, filter, false, false, stats)?;
        let pass: Vec<bool> = sel.times.iter().map(|t| *t > 0).collect();
        let selected = pass.iter().filter(|p| **p).count() as u64;
        add_decoded(accs, fields, &sel.names, &sel.fields, Some(&pass), selected)?;
        return Ok(());
    };
    plan.prepare(&names)?;
    let mut cache = MetaCache::new(array);
    let mut todo = Vec::new();
    for c in &plan.tiles {
        if matches!(c.class, Class::Inside(_))
            && c.tri == Tri::Always
            && cache.try_tile(c.fi, c.t, c.cells, fields, accs)?
        {
            stats.tiles_from_metadata += 1;
            continue;
        }
        todo.push(c);
    }
    let pool = crate::array::open::pool(array.threads())?;
    let batch = 4 * pool.current_num_threads().max(1);
    for chunk in todo.chunks(batch) {
        let decoded: Vec<(Vec<u64>, Option<Vec<FieldData>>, u64)> = pool.install(|| {
            chunk
                .par_iter()
                .map(|c| plan.decode(c, &names))
                .collect::<Result<_>>()
        })?;
        for (times, data, bytes) in decoded {
            stats.tiles_decoded += 1;
            stats.bytes_decoded += bytes;
            let Some(data) = data else { continue };
            let all = times.iter().all(|t| *t > 0);
            let pass: Option<Vec<bool>> = (!all).then(|| times.iter().map(|t| *t > 0).collect());
            let selected = times.iter().filter(|t| **t > 0).count() as u64;
            add_decoded(accs, fields, &names, &data, pass.as_deref(), selected)?;
        }
    }
    Ok(())
}
