//! Sparse multi-range reads: the visible cells of the ranges' bounding box are read with
//! [`Array::read`] (global order, de-duplicated), then kept by the ranges. Unordered and
//! global-order results hold each cell once; row-major and column-major results hold a cell
//! once per combination of ranges containing it (as TileDB 2.30 returns them), sorted by
//! coordinates.

use super::filter::{self, CellFilter};
use super::gather::gather;
use super::ranges::{MultiRange, contains};
use super::tiles::{MetaCache, decoded_bytes, overlaps, tile_field};
use super::{QueryLayout, QueryStats};
use crate::array::condition::Tri;
use crate::array::order::Kind;
use crate::array::schema::{ArraySchema, Range, VAR_NUM};
use crate::array::{Array, FieldData};
use crate::error::Result;
use rayon::prelude::*;
use std::cell::RefCell;
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

/// Per cell of a tile's (or read's) dimensions: the number of range combinations of `mr`
/// containing it.
fn multiplicity(array: &Array, mr: &MultiRange, dims: &[&FieldData], n: usize) -> Result<Vec<u64>> {
    let schema = array.schema();
    let mut times = vec![1u64; n];
    for (j, d) in schema.dimensions.iter().enumerate() {
        let rs = mr.ranges(j);
        if rs.is_empty() {
            continue;
        }
        // Integer coordinates: the ranges as order words, the cells counted in parallel.
        let kind = Kind::fixed(d.datatype).filter(|k| {
            !k.is_float()
                && d.coord_size() == Some(k.size())
                && dims[j].data.len() == n * k.size()
                && rs
                    .iter()
                    .all(|r| r.lo().len() == k.size() && r.hi().len() == k.size())
        });
        if let Some(k) = kind {
            let words: Vec<(u64, u64)> = rs
                .iter()
                .map(|r| (k.order_word(r.lo()), k.order_word(r.hi())))
                .collect();
            const CHUNK: usize = 1 << 12;
            let (data, size) = (&dims[j].data, k.size());
            let pool = crate::array::open::pool(array.threads())?;
            pool.install(|| {
                times
                    .par_chunks_mut(CHUNK)
                    .enumerate()
                    .for_each(|(ci, chunk)| {
                        for (o, t) in chunk.iter_mut().enumerate() {
                            if *t == 0 {
                                continue;
                            }
                            let at = (ci * CHUNK + o) * size;
                            let v = k.order_word(&data[at..at + size]);
                            *t *= words.iter().filter(|(l, h)| *l <= v && v <= *h).count() as u64;
                        }
                    });
            });
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
    Ok(times)
}

/// Selects the cells of `mr` passing `filter`, reading `fields` and the dimensions. With a
/// condition, where tiles can be read one by one (and, for `global` order, one fragment
/// holds them all), tiles the condition cannot hold in are skipped undecoded.
pub(crate) fn select(
    array: &Array,
    fields: &[String],
    mr: &MultiRange,
    filter: Option<&dyn CellFilter>,
    global: bool,
    stats: &mut QueryStats,
) -> Result<Selection> {
    let schema = array.schema();
    let ffields = filter.map(|f| f.fields()).unwrap_or_default();
    let names = names_read(schema, fields, &ffields);
    if let Some(f) = filter
        && tiles_apply(array)
        && (!global || array.fragments().len() <= 1)
        && let Some(sel) = select_tiles(array, names.clone(), mr, f, stats)?
    {
        return Ok(sel);
    }
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
    let mut times = multiplicity(array, mr, &dims, n)?;
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

/// The tile path of [`select`]: every tile of every fragment meeting `mr`, in fragment
/// order, skipped when `filter` cannot hold in it (by its MBR and tile metadata), else
/// decoded and filtered. `None` when a fragment lacks separate coordinate tiles.
fn select_tiles(
    array: &Array,
    names: Vec<String>,
    mr: &MultiRange,
    filter: &dyn CellFilter,
    stats: &mut QueryStats,
) -> Result<Option<Selection>> {
    let schema = array.schema();
    let ffields = filter.fields();
    let cache = RefCell::new(MetaCache::new(array));
    let mut parts: Vec<Vec<FieldData>> = Vec::new();
    let mut picks: Vec<(u32, u64)> = Vec::new();
    let mut times: Vec<u64> = Vec::new();
    let (mut pruned, mut decoded, mut bytes) = (0u64, 0u64, 0u64);
    for (fi, f) in array.fragments().iter().enumerate() {
        for d in &schema.dimensions {
            if array.tile_reader(fi, &d.name)?.is_none() {
                return Ok(None);
            }
        }
        let mbrs = f.meta.mbrs(&f.schema, array.key())?;
        for (t, mbr) in mbrs.iter().enumerate() {
            if !overlaps(array, mbr, mr) {
                continue;
            }
            let t = t as u64;
            let cells = f.meta.cell_num_of_tile(t);
            let tri = filter.prune(&|name| {
                cache
                    .borrow_mut()
                    .condition_stats(fi, t, cells, name, Some(mbr))
            });
            if tri == Tri::Never {
                pruned += 1;
                continue;
            }
            decoded += 1;
            let mut dims = Vec::with_capacity(schema.dimensions.len());
            for d in &schema.dimensions {
                let r = array.tile_reader(fi, &d.name)?.expect("checked above");
                dims.push(r.decode(t)?);
            }
            let data: Vec<FieldData> = names
                .iter()
                .map(|n| tile_field(array, fi, t, n, &dims, cells))
                .collect::<Result<_>>()?;
            bytes += data.iter().map(decoded_bytes).sum::<u64>();
            let at = |name: &String| &data[names.iter().position(|x| x == name).expect("read")];
            let dim_cells: Vec<&FieldData> =
                schema.dimensions.iter().map(|d| at(&d.name)).collect();
            let mut tt = multiplicity(array, mr, &dim_cells, cells as usize)?;
            if tri == Tri::Maybe {
                let fcells: Vec<FieldData> = ffields.iter().map(|n| at(n).clone()).collect();
                let pass = filter::run(filter, &fcells, cells)?;
                for (t, p) in tt.iter_mut().zip(pass) {
                    if !p {
                        *t = 0;
                    }
                }
            }
            let part = parts.len() as u32;
            for (c, k) in tt.into_iter().enumerate() {
                if k > 0 {
                    picks.push((part, c as u64));
                    times.push(k);
                }
            }
            parts.push(data);
        }
    }
    stats.tiles_pruned += pruned;
    stats.tiles_decoded += decoded;
    stats.bytes_decoded += bytes;
    let fields = names
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let ps: Vec<&FieldData> = parts.iter().map(|p| &p[k]).collect();
            match ps.first() {
                Some(first) => gather(first, &ps, &picks),
                None => empty_field(schema, name),
            }
        })
        .collect();
    Ok(Some(Selection {
        names,
        fields,
        times,
    }))
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
    let sel = select(array, fields, mr, filter, global, stats)?;
    // Every cell read kept once, in the order read: the fields as they are (no copy).
    if matches!(layout, QueryLayout::GlobalOrder | QueryLayout::Unordered)
        && sel.times.iter().all(|t| *t == 1)
    {
        let mut out = sel.fields;
        out.truncate(fields.len());
        return Ok(out);
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
