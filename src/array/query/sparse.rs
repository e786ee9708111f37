//! Sparse multi-range reads. Where a sparse array's tiles can be read one by one (one
//! fragment, or duplicates allowed, without per-cell timestamps or deletes), each tile's MBR
//! is classified against the ranges: disjoint tiles are skipped, tiles inside them are taken
//! whole, and only the cells of partial tiles are checked (a binary search in each
//! dimension's ranges, skipped while cells stay in one range or gap); tiles are decoded in
//! parallel. Otherwise the visible cells of the ranges' bounding box are read with
//! [`Array::read`] (global order, de-duplicated), then kept by the ranges. Unordered and
//! global-order results hold each cell once; row-major and column-major results hold a cell
//! once per combination of ranges containing it (as TileDB 2.30 returns them), sorted by
//! coordinates.

use super::classify::{Class, Selector};
use super::filter::{self, CellFilter};
use super::gather::gather;
use super::ranges::MultiRange;
use super::tiles::{MetaCache, attribute_tile, decoded_bytes, overlaps};
use super::{QueryLayout, QueryStats};
use crate::array::condition::Tri;
use crate::array::read::tiles::TileReader;
use crate::array::schema::{ArraySchema, Range, VAR_NUM};
use crate::array::{Array, FieldData};
use crate::error::Result;
use rayon::prelude::*;
use std::cell::RefCell;
use std::cmp::Ordering;
use std::ops::Range as Span;

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

/// Whether a sparse array's tiles can be read one by one, every visible cell of a tile in
/// the result: no de-duplication across fragments (one fragment, or duplicates allowed), no
/// per-cell timestamps, delete metadata or delete commits.
pub(crate) fn tiles_apply(array: &Array) -> bool {
    let frags = array.fragments();
    (frags.len() <= 1 || array.schema().allows_dups)
        && frags
            .iter()
            .all(|f| !f.meta.dense && !f.meta.has_timestamps && !f.meta.has_delete_meta)
        && array.condition_commits().is_empty()
}

/// The requested fields, then the dimensions and the condition's fields missing.
fn names_read(schema: &ArraySchema, fields: &[String], ffields: &[String]) -> Vec<String> {
    let mut names: Vec<String> = fields.to_vec();
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
    names
}

/// Per cell of a read's dimensions: the number of range combinations of `sel` containing it.
fn multiplicity(array: &Array, sel: &Selector, dims: &[&FieldData], n: usize) -> Result<Vec<u64>> {
    let mut times = vec![1u64; n];
    let pool = crate::array::open::pool(array.threads())?;
    const CHUNK: usize = 1 << 14;
    for (j, f) in dims.iter().enumerate() {
        if sel.is_all(j) {
            continue;
        }
        match &f.offsets {
            Some(o) => sel.multiply(j, &f.data, Some(o), &mut times),
            None => {
                let size = f.datatype.size() * f.cell_val_num as usize;
                if f.data.len() != n * size {
                    return Err(crate::error::Error::Internal(format!(
                        "dimension {} holds {} bytes for {n} cells",
                        f.name,
                        f.data.len()
                    )));
                }
                pool.install(|| {
                    times
                        .par_chunks_mut(CHUNK)
                        .enumerate()
                        .for_each(|(ci, chunk)| {
                            let at = ci * CHUNK * size;
                            sel.multiply(j, &f.data[at..at + chunk.len() * size], None, chunk);
                        });
                });
            }
        }
    }
    Ok(times)
}

/// Selects the cells of `mr` passing `filter`, reading `fields` (and the dimensions when
/// `with_dims`: the selection is then sorted by coordinates). Where tiles can be read one by
/// one (without a condition: one fragment at most; for `global` order: one fragment), tiles
/// are classified against the ranges: disjoint ones skipped, ones inside taken whole, only
/// cells of partial ones checked; with a condition, tiles it cannot hold in are skipped
/// undecoded.
pub(crate) fn select(
    array: &Array,
    fields: &[String],
    mr: &MultiRange,
    filter: Option<&dyn CellFilter>,
    global: bool,
    with_dims: bool,
    stats: &mut QueryStats,
) -> Result<Selection> {
    let schema = array.schema();
    let ffields = filter.map(|f| f.fields()).unwrap_or_default();
    let frags = array.fragments().len();
    let tiles_ok = tiles_apply(array)
        && if filter.is_some() {
            !global || frags <= 1
        } else {
            frags <= 1
        };
    if tiles_ok && let Some(mut plan) = TilePlan::new(array, mr, filter, stats)? {
        let mut out: Vec<String> = fields.to_vec();
        if with_dims {
            for d in &schema.dimensions {
                if !out.contains(&d.name) {
                    out.push(d.name.clone());
                }
            }
        }
        plan.prepare(&out)?;
        return select_tiles(&plan, out, stats);
    }
    let names = names_read(schema, fields, &ffields);
    for f in array.fragments() {
        let mbrs = f.meta.mbrs(&f.schema, array.key())?;
        stats.tiles_decoded += mbrs.iter().filter(|m| overlaps(array, m, mr)).count() as u64;
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
    let mut times = multiplicity(array, &Selector::new(schema, mr), &dims, n)?;
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

/// A tile a query reads: where it is, how the ranges meet its MBR and what the condition's
/// statistics say of it.
pub(crate) struct Candidate {
    /// Fragment index.
    pub fi: usize,
    /// Tile index in the fragment.
    pub t: u64,
    /// The tile's cell count.
    pub cells: u64,
    /// How the ranges meet the tile's MBR (never disjoint here).
    pub class: Class,
    /// The dimensions whose cells must be checked against the ranges.
    partial: Vec<usize>,
    /// The times the other dimensions' ranges count every cell.
    factor: u64,
    /// What the condition's tile statistics say (`Always` without a condition).
    pub tri: Tri,
}

/// Readers of the fields a tile plan decodes, per fragment.
type Readers<'a> = Vec<Vec<(String, Option<TileReader<'a>>)>>;

/// The tiles of a sparse query read one by one (see [`tiles_apply`]): every tile of every
/// fragment meeting the ranges, in fragment order, classified against the ranges and the
/// condition's tile statistics; tiles the condition cannot hold in are counted as pruned and
/// left out.
pub(crate) struct TilePlan<'a> {
    array: &'a Array,
    sel: Selector,
    filter: Option<&'a dyn CellFilter>,
    ffields: Vec<String>,
    readers: Readers<'a>,
    /// The tiles to read.
    pub tiles: Vec<Candidate>,
}

impl<'a> TilePlan<'a> {
    /// The plan of `mr` and `filter` over `array` (whose tiles must be readable one by one);
    /// `None` when a fragment lacks separate coordinate tiles. Pruned tiles are counted in
    /// `stats`.
    pub(crate) fn new(
        array: &'a Array,
        mr: &MultiRange,
        filter: Option<&'a dyn CellFilter>,
        stats: &mut QueryStats,
    ) -> Result<Option<TilePlan<'a>>> {
        let schema = array.schema();
        let sel = Selector::new(schema, mr);
        let cache = RefCell::new(MetaCache::new(array));
        let mut tiles = Vec::new();
        let mut readers: Readers<'a> = Vec::new();
        let mut pruned = 0;
        for (fi, f) in array.fragments().iter().enumerate() {
            let mut rs = Vec::new();
            for d in &schema.dimensions {
                match array.tile_reader(fi, &d.name)? {
                    Some(r) => rs.push((d.name.clone(), Some(r))),
                    None => return Ok(None),
                }
            }
            readers.push(rs);
            let mbrs = f.meta.mbrs(&f.schema, array.key())?;
            for (t, mbr) in mbrs.iter().enumerate() {
                let (class, partial, factor) = sel.classify(mbr);
                if class == Class::Disjoint {
                    continue;
                }
                let t = t as u64;
                let cells = f.meta.cell_num_of_tile(t);
                let tri = filter.map_or(Tri::Always, |f| {
                    f.prune(&|name| {
                        cache
                            .borrow_mut()
                            .condition_stats(fi, t, cells, name, Some(mbr))
                    })
                });
                if tri == Tri::Never {
                    pruned += 1;
                    continue;
                }
                tiles.push(Candidate {
                    fi,
                    t,
                    cells,
                    class,
                    partial,
                    factor,
                    tri,
                });
            }
        }
        stats.tiles_pruned += pruned;
        Ok(Some(TilePlan {
            array,
            sel,
            filter,
            ffields: filter.map(|f| f.fields()).unwrap_or_default(),
            readers,
            tiles,
        }))
    }

    /// Makes readers for `names` (attributes or dimensions) in every fragment.
    pub(crate) fn prepare(&mut self, names: &[String]) -> Result<()> {
        let all: Vec<String> = names.iter().chain(&self.ffields).cloned().collect();
        for (fi, rs) in self.readers.iter_mut().enumerate() {
            for n in &all {
                if !rs.iter().any(|(m, _)| m == n) {
                    rs.push((n.clone(), self.array.tile_reader(fi, n)?));
                }
            }
        }
        Ok(())
    }

    /// Field `name` of tile `c` decoded into `got` (once; its bytes unfiltered added to
    /// `bytes`); its index there. With `runs` (cell ranges), a fixed-size field's filter
    /// chunks holding none of those cells are not unfiltered: its other cells mean nothing.
    fn field(
        &self,
        c: &Candidate,
        name: &str,
        got: &mut Vec<FieldData>,
        runs: Option<&[Span<u64>]>,
        bytes: &mut u64,
    ) -> Result<usize> {
        if let Some(k) = got.iter().position(|f| f.name == name) {
            return Ok(k);
        }
        let schema = self.array.schema();
        let reader = self.readers[c.fi]
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, r)| r.as_ref())
            .ok_or_else(|| {
                crate::error::Error::Internal(format!("no reader prepared for {name}"))
            })?;
        let f = match schema.dimension_index(name) {
            Some(j) => {
                let d = &schema.dimensions[j];
                let reader = reader.expect("sparse fragments store coordinates");
                let (tile, done) = match runs {
                    Some(runs) => {
                        let (tile, done) = reader.decode_cells(c.t, runs)?;
                        (tile, Some(done))
                    }
                    None => (reader.decode(c.t)?, None),
                };
                let f = FieldData {
                    name: name.into(),
                    datatype: d.datatype,
                    cell_val_num: d.cell_val_num,
                    data: tile.data,
                    offsets: tile.offsets,
                    validity: None,
                    cell_count: c.cells,
                };
                *bytes += done.unwrap_or_else(|| decoded_bytes(&f));
                f
            }
            None => {
                let (f, done) = attribute_tile(self.array, reader, name, c.t, c.cells, runs)?;
                *bytes += done;
                f
            }
        };
        got.push(f);
        Ok(got.len() - 1)
    }

    /// Decodes tile `c`: per cell the number of times the query selects it (0: not
    /// selected; the ranges' combinations holding it, 0 when it fails the condition), and
    /// the cells of `names` (prepared with [`prepare`](Self::prepare)), not decoded when no
    /// cell is selected; with the bytes unfiltered. Of fields not needed to select the cells,
    /// only the filter chunks holding selected cells are unfiltered: their cells with a
    /// time of 0 mean nothing.
    pub(crate) fn decode(
        &self,
        c: &Candidate,
        names: &[String],
    ) -> Result<(Vec<u64>, Option<Vec<FieldData>>, u64)> {
        let schema = self.array.schema();
        let mut got: Vec<FieldData> = Vec::new();
        let mut bytes = 0u64;
        let n = c.cells as usize;
        let mut times = vec![c.factor; n];
        for &j in &c.partial {
            let k = self.field(c, &schema.dimensions[j].name, &mut got, None, &mut bytes)?;
            let f = &got[k];
            if f.offsets.is_none() && f.data.len() != n * f.datatype.size() {
                return Err(crate::error::Error::corrupt(format!(
                    "tile {} of dimension {} holds {} bytes for {n} cells",
                    c.t,
                    f.name,
                    f.data.len()
                )));
            }
            self.sel
                .multiply(j, &f.data, f.offsets.as_deref(), &mut times);
        }
        if let Some(filter) = self.filter
            && c.tri == Tri::Maybe
            && times.iter().any(|t| *t > 0)
        {
            // The condition's fields are lent to it, then kept for the output.
            let mut fcells: Vec<FieldData> = Vec::with_capacity(self.ffields.len());
            for name in &self.ffields {
                let k = self.field(c, name, &mut got, None, &mut bytes)?;
                fcells.push(got.swap_remove(k));
            }
            let pass = filter::run(filter, &fcells, c.cells)?;
            got.extend(fcells);
            for (t, p) in times.iter_mut().zip(pass) {
                if !p {
                    *t = 0;
                }
            }
        }
        if times.iter().all(|t| *t == 0) {
            return Ok((times, None, bytes));
        }
        let runs = selected_runs(&times);
        for name in names {
            self.field(c, name, &mut got, runs.as_deref(), &mut bytes)?;
        }
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            let k = got.iter().position(|f| f.name == *name).expect("decoded");
            // A name asked for twice is cloned; otherwise the decoded field is moved out.
            if names.iter().filter(|m| *m == name).count() > 1 {
                out.push(got[k].clone());
            } else {
                out.push(got.swap_remove(k));
            }
        }
        Ok((times, Some(out), bytes))
    }
}

/// The runs of cells whose time is positive, `None` when every cell's is.
fn selected_runs(times: &[u64]) -> Option<Vec<Span<u64>>> {
    if times.iter().all(|t| *t > 0) {
        return None;
    }
    let mut runs = Vec::new();
    let mut i = 0;
    while i < times.len() {
        if times[i] == 0 {
            i += 1;
            continue;
        }
        let a = i;
        while i < times.len() && times[i] > 0 {
            i += 1;
        }
        runs.push(a as u64..i as u64);
    }
    Some(runs)
}

/// The tile path of [`select`]: each tile of `plan` decoded (in parallel), its selected
/// cells of `names` kept (runs copied), then the tiles' cells concatenated in order.
fn select_tiles(
    plan: &TilePlan<'_>,
    names: Vec<String>,
    stats: &mut QueryStats,
) -> Result<Selection> {
    let array = plan.array;
    let schema = array.schema();
    let pool = crate::array::open::pool(array.threads())?;
    let parts: Vec<(Vec<u64>, Option<Vec<FieldData>>, u64)> = pool.install(|| {
        plan.tiles
            .par_iter()
            .map(|c| {
                let (times, fields, bytes) = plan.decode(c, &names)?;
                let Some(fields) = fields else {
                    return Ok((Vec::new(), None, bytes));
                };
                let Some(runs) = selected_runs(&times) else {
                    return Ok((times, Some(fields), bytes));
                };
                let n = times.len();
                let kept: Vec<FieldData> =
                    fields.into_iter().map(|f| compact(f, n, &runs)).collect();
                let times: Vec<u64> = times.into_iter().filter(|t| *t > 0).collect();
                Ok((times, Some(kept), bytes))
            })
            .collect::<Result<_>>()
    })?;
    stats.tiles_decoded += plan.tiles.len() as u64;
    stats.bytes_decoded += parts.iter().map(|p| p.2).sum::<u64>();
    let mut times: Vec<u64> = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
    let mut columns: Vec<Vec<FieldData>> = vec![Vec::new(); names.len()];
    for (t, fields, _) in parts {
        let Some(fields) = fields else { continue };
        times.extend(t);
        for (k, f) in fields.into_iter().enumerate() {
            columns[k].push(f);
        }
    }
    let fields = names
        .iter()
        .zip(columns)
        .map(|(name, col)| {
            if col.is_empty() {
                empty_field(schema, name)
            } else {
                concat(col)
            }
        })
        .collect();
    Ok(Selection {
        names,
        fields,
        times,
    })
}

/// The cells `runs` (cell ranges, in order) of `f` (`n` cells): each run moved down within
/// `f`'s own buffers, which are then cut to the kept cells (no second copy of the tile is
/// ever held).
fn compact(mut f: FieldData, n: usize, runs: &[Span<u64>]) -> FieldData {
    let keep: usize = runs.iter().map(|r| (r.end - r.start) as usize).sum();
    match f.offsets.as_mut() {
        Some(o) => {
            let total = f.data.len() as u64;
            let (mut w, mut k) = (0usize, 0usize);
            for r in runs {
                let (a, i) = (r.start as usize, r.end as usize);
                // Read before this run's moves: they only write offsets below `i`.
                let base = o[a];
                let end = o.get(i).map_or(total, |e| *e);
                let shift = w as u64;
                for j in a..i {
                    o[k] = o[j] - base + shift;
                    k += 1;
                }
                f.data.copy_within(base as usize..end as usize, w);
                w += (end - base) as usize;
            }
            o.truncate(keep);
            o.shrink_to_fit();
            f.data.truncate(w);
        }
        None => {
            let cs = f.data.len().checked_div(n).unwrap_or(0);
            move_runs_down(&mut f.data, cs, runs);
        }
    }
    f.data.shrink_to_fit();
    if let Some(v) = f.validity.as_mut() {
        move_runs_down(v, 1, runs);
        v.shrink_to_fit();
    }
    f.cell_count = keep as u64;
    f
}

/// Moves the cells `runs` (`unit` bytes each, in order) of `buf` to its front and cuts it
/// to them.
fn move_runs_down(buf: &mut Vec<u8>, unit: usize, runs: &[Span<u64>]) {
    let mut w = 0;
    for r in runs {
        let (a, i) = (r.start as usize, r.end as usize);
        buf.copy_within(a * unit..i * unit, w);
        w += (i - a) * unit;
    }
    buf.truncate(w);
}

/// The cells of `parts` (reads of one field) one after another.
fn concat(mut parts: Vec<FieldData>) -> FieldData {
    if parts.len() == 1 {
        return parts.pop().expect("one part");
    }
    let cells: u64 = parts.iter().map(|p| p.cell_count).sum();
    let bytes: usize = parts.iter().map(|p| p.data.len()).sum();
    let first = &parts[0];
    let mut out = FieldData {
        name: first.name.clone(),
        datatype: first.datatype,
        cell_val_num: first.cell_val_num,
        // Large results are written once into fresh memory: huge pages fault far less.
        data: crate::mem::hugepages::with_capacity(bytes),
        offsets: first
            .offsets
            .as_ref()
            .map(|_| crate::mem::hugepages::with_capacity(cells as usize)),
        validity: first
            .validity
            .as_ref()
            .map(|_| crate::mem::hugepages::with_capacity(cells as usize)),
        cell_count: cells,
    };
    for p in &parts {
        if let (Some(o), Some(po)) = (out.offsets.as_mut(), p.offsets.as_ref()) {
            let shift = out.data.len() as u64;
            o.extend(po.iter().map(|x| x + shift));
        }
        out.data.extend_from_slice(&p.data);
        if let (Some(v), Some(pv)) = (out.validity.as_mut(), p.validity.as_ref()) {
            v.extend_from_slice(pv);
        }
    }
    out
}

/// Field `name` (a dimension or attribute of `schema`) without cells.
fn empty_field(schema: &ArraySchema, name: &str) -> FieldData {
    let (datatype, cell_val_num, nullable) = match schema.dimension_index(name) {
        Some(j) => {
            let d = &schema.dimensions[j];
            (d.datatype, d.cell_val_num, false)
        }
        None => {
            let a = &schema.attributes[schema.attribute_index(name).expect("checked")];
            (a.datatype, a.cell_val_num, a.nullable)
        }
    };
    FieldData {
        name: name.into(),
        datatype,
        cell_val_num,
        data: Vec::new(),
        offsets: (cell_val_num == VAR_NUM).then(Vec::new),
        validity: nullable.then(Vec::new),
        cell_count: 0,
    }
}

/// Reads `fields` over `mr` in `layout`.
pub(crate) fn read(
    array: &Array,
    fields: &[String],
    mr: &MultiRange,
    layout: QueryLayout,
    filter: Option<&dyn CellFilter>,
    stats: &mut QueryStats,
) -> Result<Vec<FieldData>> {
    let schema = array.schema();
    let global = matches!(layout, QueryLayout::GlobalOrder);
    let sorted = matches!(layout, QueryLayout::RowMajor | QueryLayout::ColMajor);
    let mut sel = select(array, fields, mr, filter, global, sorted, stats)?;
    // Every selected cell once, in the order selected: the fields as they are.
    if !sorted && sel.times.iter().all(|t| *t > 0) {
        sel.fields.truncate(fields.len());
        return Ok(sel.fields);
    }
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
