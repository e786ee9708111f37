//! Dense reads (docs/ARRAY.md §5.3): the cells of a box in row-major order. Every visible fragment
//! covers its non-empty domain with complete space tiles (tile order over the fragment's tile
//! box, cell order inside a tile); for each cell the last fragment whose non-empty domain
//! covers it wins; cells no fragment covers get the attribute's fill value.

use super::tiles::{DecodedTile, TileField, TileReader};
use crate::array::field::{FieldData, FieldRef};
pub use crate::array::geometry::{Cube, cube_of};
use crate::array::geometry::{Grid, strides};
use crate::array::open::Array;
use crate::array::schema::{ArraySchema, Layout, Range};
use crate::array::value;
use crate::error::{Error, Result};
use crate::mem::hugepages;
use rayon::prelude::*;
use std::collections::BTreeMap;

/// Calls `f(coords)` for every point of `c` in row-major order.
fn for_each_point(c: &Cube, mut f: impl FnMut(&[i128])) {
    let n = c.lo.len();
    let mut p = c.lo.clone();
    loop {
        f(&p);
        let mut d = n;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            if p[d] < c.hi[d] {
                p[d] += 1;
                break;
            }
            p[d] = c.lo[d];
        }
    }
}

/// A run of cells copied from a tile to the result: `len` cells starting at result cell
/// `dst` (consecutive) and tile cell `src` with step `step`.
#[derive(Clone, Copy, Debug)]
struct Run {
    dst: u64,
    src: u64,
    len: u64,
    step: u64,
}

/// The runs copying `sub` (inside both the query box and the tile) from a tile whose first
/// cell is at `tile_lo` to the row-major result of `query`.
fn runs(
    sub: &Cube,
    query: &Cube,
    out_strides: &[u64],
    tile_lo: &[i128],
    tstrides: &[u64],
) -> Vec<Run> {
    let n = sub.lo.len();
    let last = n - 1;
    let mut rows = sub.clone();
    rows.hi[last] = rows.lo[last];
    let len = (sub.hi[last] - sub.lo[last] + 1) as u64;
    let mut out: Vec<Run> = Vec::new();
    for_each_point(&rows, |p| {
        let mut dst = 0u64;
        let mut src = 0u64;
        for d in 0..n {
            dst += (p[d] - query.lo[d]) as u64 * out_strides[d];
            src += (p[d] - tile_lo[d]) as u64 * tstrides[d];
        }
        let step = tstrides[last];
        // Rows that continue each other in both the tile and the result make one run.
        if let Some(prev) = out.last_mut()
            && step == 1
            && prev.step == 1
            && prev.dst + prev.len == dst
            && prev.src + prev.len == src
        {
            prev.len += len;
            return;
        }
        out.push(Run {
            dst,
            src,
            len,
            step,
        });
    });
    out
}

/// The pieces of `query` each visible fragment provides (newest first wins), and the rest.
/// (fragment index, piece) pairs, and the pieces no fragment covers.
type Assignment = (Vec<(usize, Cube)>, Vec<Cube>);

fn assign(array: &Array, query: &Cube) -> Result<Assignment> {
    let schema = array.schema();
    let mut remaining = vec![query.clone()];
    let mut assigned = Vec::new();
    for (fi, f) in array.fragments().iter().enumerate().rev() {
        if !f.meta.dense {
            return Err(Error::Unsupported(format!(
                "sparse fragments in dense arrays (fragment {}) are not read",
                f.name()
            )));
        }
        let Some(ned) = &f.meta.non_empty_domain else {
            continue;
        };
        let ned = cube_of(schema, ned)?;
        let mut next = Vec::new();
        for r in remaining {
            match r.intersect(&ned) {
                Some(x) => {
                    next.extend(r.subtract(&x));
                    assigned.push((fi, x));
                }
                None => next.push(r),
            }
        }
        remaining = next;
    }
    Ok((assigned, remaining))
}

/// One tile to decode and the runs it feeds.
struct TileJob {
    tile: u64,
    runs: Vec<Run>,
}

impl TileJob {
    /// The result cell the whole tile lands on in order, when it does (one run over every
    /// cell): then the tile is unfiltered straight into the result.
    fn direct(&self, cells: u64) -> Option<u64> {
        match self.runs.as_slice() {
            [r] if r.step == 1 && r.src == 0 && r.len == cells => Some(r.dst),
            _ => None,
        }
    }
}

/// What one fragment provides to a read: its pieces of the query box and the tiles to decode.
struct Plan {
    frag: usize,
    pieces: Vec<Cube>,
    jobs: Vec<TileJob>,
}

/// The geometry of a read: the query box, its row-major strides and cell count.
struct Query {
    cube: Cube,
    strides: Vec<u64>,
    cells: usize,
}

/// The tiles of fragment `fi` intersecting its pieces, with their copy runs.
fn jobs(
    array: &Array,
    fi: usize,
    pieces: &[&Cube],
    query: &Cube,
    out_strides: &[u64],
) -> Result<Vec<TileJob>> {
    let frag = &array.fragments()[fi];
    let grid = Grid::new(&frag.schema)?;
    let ned = cube_of(
        &frag.schema,
        frag.meta.non_empty_domain.as_ref().expect("assigned"),
    )?;
    let fbox = grid.tiles_of(&ned);
    let fwidths = fbox.widths();
    let tile_strides = strides(&fwidths, grid.tile_order);
    let tstrides = grid.cell_strides();
    let mut by_tile: BTreeMap<u64, Vec<Run>> = BTreeMap::new();
    for piece in pieces {
        let tiles = grid.tiles_of(piece);
        for_each_point(&tiles, |t| {
            let pos: u64 = (0..t.len())
                .map(|d| (t[d] - fbox.lo[d]) as u64 * tile_strides[d])
                .sum();
            let tc = grid.tile_cube(t);
            if let Some(sub) = piece.intersect(&tc) {
                by_tile.entry(pos).or_default().extend(runs(
                    &sub,
                    query,
                    out_strides,
                    &tc.lo,
                    &tstrides,
                ));
            }
        });
    }
    if let Some((&last, _)) = by_tile.last_key_value()
        && last >= frag.meta.tile_num()
    {
        return Err(Error::corrupt(format!(
            "fragment {}: tile {last} is beyond its {} tiles",
            frag.name(),
            frag.meta.tile_num()
        )));
    }
    Ok(by_tile
        .into_iter()
        .map(|(tile, runs)| TileJob { tile, runs })
        .collect())
}

/// Decodes jobs in parallel, in batches of about `budget` bytes, handing each decoded tile
/// to `sink` in job order.
fn decode_batches(
    reader: &TileReader<'_>,
    jobs: &[&TileJob],
    mut sink: impl FnMut(&TileJob, DecodedTile) -> Result<()>,
) -> Result<()> {
    let threads = rayon::current_num_threads().max(1);
    let batch = (threads * 4).max(8);
    for chunk in jobs.chunks(batch) {
        let decoded: Vec<DecodedTile> = chunk
            .par_iter()
            .map(|j| reader.decode(j.tile))
            .collect::<Result<_>>()?;
        for (j, t) in chunk.iter().zip(decoded) {
            sink(j, t)?;
        }
    }
    Ok(())
}

/// For tile `tile` of dense fragment `frag`: which of its cells (in the tile's cell order) lie
/// in the fragment's non-empty domain; the others are padding.
pub fn written_cells(frag: &crate::array::Fragment, tile: u64) -> Result<Vec<bool>> {
    let grid = Grid::new(&frag.schema)?;
    let ned = cube_of(
        &frag.schema,
        frag.meta
            .non_empty_domain
            .as_ref()
            .ok_or_else(|| Error::corrupt("a dense fragment without a non-empty domain"))?,
    )?;
    let fbox = grid.tiles_of(&ned);
    let n = fbox.lo.len();
    let fwidths = fbox.widths();
    let tile_strides = strides(&fwidths, grid.tile_order);
    let t: Vec<i128> = (0..n)
        .map(|d| fbox.lo[d] + ((tile / tile_strides[d]) % fwidths[d]) as i128)
        .collect();
    let tc = grid.tile_cube(&t);
    let tstrides = grid.cell_strides();
    let cells = frag.meta.cell_num_of_tile(tile) as usize;
    let mut mask = vec![false; cells];
    if let Some(sub) = ned.intersect(&tc) {
        for_each_point(&sub, |p| {
            let c: u64 = (0..n).map(|d| (p[d] - tc.lo[d]) as u64 * tstrides[d]).sum();
            mask[c as usize] = true;
        });
    }
    Ok(mask)
}

/// Reads `refs` over `subarray` (default: the non-empty domain).
pub(crate) fn read(
    array: &Array,
    refs: &[FieldRef],
    subarray: Option<&[Range]>,
) -> Result<Vec<FieldData>> {
    let schema = array.schema();
    // A fragment's tiles cover its non-empty domain: a domain claiming more cells than its
    // tiles hold is damaged metadata (and would size the result of a whole-array read).
    for f in array.fragments() {
        if let Some(ned) = f.meta.non_empty_domain.as_ref() {
            let cells = cube_of(&f.schema, ned)?.cells()?;
            let room = f.meta.tile_num().saturating_mul(f.meta.cell_num_of_tile(0));
            if f.meta.dense && cells > room {
                return Err(Error::corrupt(format!(
                    "fragment {}: a non-empty domain of {cells} cells for {} tiles of {} cells",
                    f.name(),
                    f.meta.tile_num(),
                    f.meta.cell_num_of_tile(0)
                )));
            }
        }
    }
    let query = match subarray {
        Some(s) => Some(cube_of(schema, s)?),
        None => match array.non_empty_domain() {
            Some(ned) => Some(cube_of(schema, &ned)?),
            None => None,
        },
    };
    let Some(query) = query else {
        return Ok(refs.iter().map(|r| r.info(schema).empty()).collect());
    };
    let cells = query.cells()?;
    // Planning takes memory in proportion to the box too: check the limit first.
    for r in refs {
        r.info(schema).check_result(array, cells)?;
    }
    let out_strides = strides(&query.widths(), Layout::RowMajor);
    let (assigned, unwritten) = assign(array, &query)?;
    let mut by_frag: BTreeMap<usize, Vec<&Cube>> = BTreeMap::new();
    for (fi, c) in &assigned {
        by_frag.entry(*fi).or_default().push(c);
    }
    let mut plans = Vec::new();
    for (fi, pieces) in &by_frag {
        plans.push(Plan {
            frag: *fi,
            jobs: jobs(array, *fi, pieces, &query, &out_strides)?,
            pieces: pieces.iter().map(|c| (*c).clone()).collect(),
        });
    }
    let n = usize::try_from(cells).map_err(|_| Error::invalid("too many cells"))?;
    let q = Query {
        cube: query,
        strides: out_strides,
        cells: n,
    };
    refs.iter()
        .map(|r| match r {
            FieldRef::Dimension(j) => Ok(coordinates(schema, *j, &q.cube, n)),
            FieldRef::Attribute(i) => read_attribute(array, *i, &plans, &unwritten, &q),
            FieldRef::Timestamps | FieldRef::DeleteTimestamps | FieldRef::DeleteConditionIndex => {
                Err(Error::invalid(
                    "dense fragments have no per-cell timestamps or delete metadata",
                ))
            }
        })
        .collect()
}

/// The coordinates of dimension `j` for every cell of `query` in row-major order.
fn coordinates(schema: &ArraySchema, j: usize, query: &Cube, n: usize) -> FieldData {
    let d = &schema.dimensions[j];
    let size = d.datatype.size();
    let mut data = Vec::with_capacity(n * size);
    for_each_point(query, |p| {
        data.extend_from_slice(&value::from_i128(d.datatype, p[j]))
    });
    FieldData {
        name: d.name.clone(),
        datatype: d.datatype,
        cell_val_num: 1,
        data,
        offsets: None,
        validity: None,
        cell_count: n as u64,
    }
}

fn read_attribute(
    array: &Array,
    i: usize,
    plans: &[Plan],
    unwritten: &[Cube],
    q: &Query,
) -> Result<FieldData> {
    let attr = &array.schema().attributes[i];
    let n = q.cells;
    let mut validity = attr.nullable.then(|| hugepages::zeroed(n));
    let (data, offsets) = match attr.cell_size() {
        Some(cs) => {
            if attr.fill_value.len() != cs {
                return Err(Error::corrupt(format!(
                    "attribute {}: fill value of {} bytes for {cs}-byte cells",
                    attr.name,
                    attr.fill_value.len()
                )));
            }
            // Zeroed pages cost nothing until written; only cells no fragment provides are
            // filled.
            let mut data = hugepages::zeroed(n * cs);
            let mut fill_boxes: Vec<&Cube> = unwritten.iter().collect();
            for plan in plans {
                let frag = &array.fragments()[plan.frag];
                match TileReader::new(array, frag, TileField::Attribute(i))? {
                    Some(reader) => {
                        reader.prefetch(&plan_tiles(plan))?;
                        read_fixed(&reader, plan, cs, &mut data, validity.as_mut())?
                    }
                    None => fill_boxes.extend(&plan.pieces),
                }
            }
            for c in fill_boxes {
                for r in runs(c, &q.cube, &q.strides, &c.lo, &vec![0; c.lo.len()]) {
                    fill_run(&mut data, &attr.fill_value, r);
                    if let Some(v) = validity.as_mut() {
                        fill_run(v, &[attr.fill_validity], r);
                    }
                }
            }
            (data, None)
        }
        None => {
            if let Some(v) = validity.as_mut() {
                v.fill(attr.fill_validity);
            }
            let (d, o) = read_var(array, i, plans, n, validity.as_mut())?;
            (d, Some(o))
        }
    };
    Ok(FieldData {
        name: attr.name.clone(),
        datatype: attr.datatype,
        cell_val_num: attr.cell_val_num,
        data,
        offsets,
        validity,
        cell_count: n as u64,
    })
}

/// The tiles a plan reads (what an object store is asked for at once).
fn plan_tiles(plan: &Plan) -> Vec<u64> {
    plan.jobs.iter().map(|j| j.tile).collect()
}

/// Writes the fill value into the result cells of a run (zero fills are already there).
fn fill_run(out: &mut [u8], fill: &[u8], r: Run) {
    if fill.iter().all(|b| *b == 0) {
        return;
    }
    let cs = fill.len();
    for k in 0..r.len as usize {
        let at = (r.dst as usize + k) * cs;
        out[at..at + cs].copy_from_slice(fill);
    }
}

/// Fixed-size cells of one fragment: tiles that land whole and in order in the result are
/// unfiltered straight into it, in parallel; the others are decoded and copied run by run.
fn read_fixed(
    reader: &TileReader<'_>,
    plan: &Plan,
    cs: usize,
    data: &mut [u8],
    mut validity: Option<&mut Vec<u8>>,
) -> Result<()> {
    let cells = reader.cell_num(0);
    let mut direct: Vec<(u64, u64)> = Vec::new();
    let mut copied: Vec<&TileJob> = Vec::new();
    for job in &plan.jobs {
        match job.direct(cells) {
            Some(dst) => direct.push((dst, job.tile)),
            None => copied.push(job),
        }
    }
    direct.sort_unstable();
    let slices = disjoint_slices(data, &direct, cells as usize, cs);
    let vslices: Vec<Option<&mut [u8]>> = match validity.as_deref_mut() {
        Some(v) => disjoint_slices(v, &direct, cells as usize, 1)
            .into_iter()
            .map(Some)
            .collect(),
        None => (0..direct.len()).map(|_| None).collect(),
    };
    direct
        .par_iter()
        .zip(slices)
        .zip(vslices)
        .try_for_each(|((&(_, tile), out), vout)| {
            reader.decode_fixed_into(tile, out)?;
            match vout {
                Some(v) => reader.decode_validity_into(tile, v),
                None => Ok(()),
            }
        })?;
    decode_batches(reader, &copied, |job, tile| {
        for r in &job.runs {
            copy_fixed(data, &tile.data, cs, r);
            if let (Some(v), Some(tv)) = (validity.as_deref_mut(), tile.validity.as_ref()) {
                copy_fixed(v, tv, 1, r);
            }
        }
        Ok(())
    })
}

/// Disjoint slices of `buf` of `cells × unit` bytes at the (sorted, non-overlapping) result
/// cells `starts[k].0`.
fn disjoint_slices<'b>(
    buf: &'b mut [u8],
    starts: &[(u64, u64)],
    cells: usize,
    unit: usize,
) -> Vec<&'b mut [u8]> {
    let mut out = Vec::with_capacity(starts.len());
    let mut rest = buf;
    let mut pos = 0usize;
    for &(dst, _) in starts {
        let start = dst as usize * unit;
        let (_, tail) = rest.split_at_mut(start - pos);
        let (mine, tail) = tail.split_at_mut(cells * unit);
        out.push(mine);
        rest = tail;
        pos = start + cells * unit;
    }
    out
}

fn copy_fixed(out: &mut [u8], tile: &[u8], cs: usize, r: &Run) {
    let dst = r.dst as usize * cs;
    let src = r.src as usize * cs;
    let len = r.len as usize;
    if r.step == 1 {
        out[dst..dst + len * cs].copy_from_slice(&tile[src..src + len * cs]);
    } else {
        let step = r.step as usize * cs;
        for k in 0..len {
            let s = src + k * step;
            out[dst + k * cs..dst + (k + 1) * cs].copy_from_slice(&tile[s..s + cs]);
        }
    }
}

/// Var-size attribute: keeps the decoded tiles, records each result cell's source, then
/// concatenates.
fn read_var(
    array: &Array,
    i: usize,
    plans: &[Plan],
    n: usize,
    mut validity: Option<&mut Vec<u8>>,
) -> Result<(Vec<u8>, Vec<u64>)> {
    if let Some(out) = read_var_in_order(array, i, plans, n, validity.as_deref_mut())? {
        return Ok(out);
    }
    const FILL: (u32, u32) = (u32::MAX, 0);
    let attr = &array.schema().attributes[i];
    let mut source = vec![FILL; n];
    let mut tiles: Vec<DecodedTile> = Vec::new();
    for plan in plans {
        let frag = &array.fragments()[plan.frag];
        let Some(reader) = TileReader::new(array, frag, TileField::Attribute(i))? else {
            continue;
        };
        reader.prefetch(&plan_tiles(plan))?;
        let jobs: Vec<&TileJob> = plan.jobs.iter().collect();
        decode_batches(&reader, &jobs, |job, tile| {
            let id = u32::try_from(tiles.len()).map_err(|_| Error::invalid("too many tiles"))?;
            for r in &job.runs {
                for k in 0..r.len {
                    let cell = r.src + k * r.step;
                    source[(r.dst + k) as usize] = (id, cell as u32);
                }
                if let (Some(v), Some(tv)) = (validity.as_deref_mut(), tile.validity.as_ref()) {
                    copy_fixed(v, tv, 1, r);
                }
            }
            tiles.push(tile);
            Ok(())
        })?;
    }
    let mut total = 0usize;
    for &(t, c) in &source {
        total += if t == u32::MAX {
            attr.fill_value.len()
        } else {
            tiles[t as usize].cell(c as usize, 0).len()
        };
    }
    let mut data = hugepages::with_capacity(total);
    let mut offsets = hugepages::with_capacity(n);
    for &(t, c) in &source {
        offsets.push(data.len() as u64);
        if t == u32::MAX {
            data.extend_from_slice(&attr.fill_value);
        } else {
            data.extend_from_slice(tiles[t as usize].cell(c as usize, 0));
        }
    }
    Ok((data, offsets))
}

/// The common case of a var-size read: every tile lands whole and in order and together they
/// cover the result (no fill values). Tiles are decoded in parallel batches and appended as
/// they come, so the peak is the result plus one batch of tiles (the result's size is known
/// from the fragment metadata when it records var sizes). `None` when the read is not of
/// this shape.
fn read_var_in_order(
    array: &Array,
    i: usize,
    plans: &[Plan],
    n: usize,
    mut validity: Option<&mut Vec<u8>>,
) -> Result<Option<(Vec<u8>, Vec<u64>)>> {
    let mut readers = Vec::with_capacity(plans.len());
    let mut order: Vec<(u64, usize, u64)> = Vec::new(); // (result cell, reader, tile)
    for plan in plans {
        let frag = &array.fragments()[plan.frag];
        let Some(reader) = TileReader::new(array, frag, TileField::Attribute(i))? else {
            return Ok(None);
        };
        reader.prefetch(&plan_tiles(plan))?;
        for job in &plan.jobs {
            match job.direct(reader.cell_num(job.tile)) {
                Some(dst) => order.push((dst, readers.len(), job.tile)),
                None => return Ok(None),
            }
        }
        readers.push(reader);
    }
    order.sort_unstable();
    let mut next = 0u64;
    let mut total = Some(0u64);
    for &(dst, r, tile) in &order {
        if dst != next {
            return Ok(None);
        }
        next += readers[r].cell_num(tile);
        total = total.and_then(|t| Some(t + readers[r].var_size(tile)?));
    }
    if next != n as u64 {
        return Ok(None);
    }
    let mut data = match total.and_then(|t| usize::try_from(t).ok()) {
        Some(t) => hugepages::with_capacity(t),
        None => Vec::new(),
    };
    let mut offsets = hugepages::with_capacity(n);
    let batch = (rayon::current_num_threads() * 2).max(4);
    for chunk in order.chunks(batch) {
        let decoded: Vec<DecodedTile> = chunk
            .par_iter()
            .map(|&(_, r, tile)| readers[r].decode(tile))
            .collect::<Result<_>>()?;
        for (&(dst, _, _), tile) in chunk.iter().zip(decoded) {
            let base = data.len() as u64;
            offsets.extend(
                tile.offsets
                    .as_deref()
                    .unwrap_or(&[])
                    .iter()
                    .map(|o| o + base),
            );
            data.extend_from_slice(&tile.data);
            if let (Some(v), Some(tv)) = (validity.as_deref_mut(), tile.validity.as_ref()) {
                v[dst as usize..dst as usize + tv.len()].copy_from_slice(tv);
            }
        }
    }
    Ok(Some((data, offsets)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube(lo: &[i128], hi: &[i128]) -> Cube {
        Cube {
            lo: lo.to_vec(),
            hi: hi.to_vec(),
        }
    }

    #[test]
    fn runs_merge_rows() {
        // A 2x2 tile at (1,1) of a 4x4 query, col-major cells.
        let q = cube(&[1, 1], &[4, 4]);
        let r = runs(&cube(&[1, 1], &[2, 2]), &q, &[4, 1], &[1, 1], &[1, 2]);
        assert_eq!(r.len(), 2);
        assert_eq!((r[1].dst, r[1].src, r[1].len, r[1].step), (4, 1, 2, 2));
    }
}
