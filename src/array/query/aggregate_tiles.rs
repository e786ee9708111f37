//! Running aggregates over a query: tiles lying wholly inside the subarray, with no
//! condition, answered from fragment tile metadata (count, null count, sum, min, max) without
//! decoding when only that tile provides their cells; every other cell decoded.

use super::QueryStats;
use super::aggregate::{Accumulator, TileFacts};
use super::dense::{self, Cube};
use super::filter::CellFilter;
use super::ranges::{MultiRange, contains};
use super::sparse;
use crate::array::fragment_metadata::{FieldSlot, ListKind};
use crate::array::geometry::dense_grid;
use crate::array::schema::{Layout, Range, VAR_NUM};
use crate::array::{Array, FieldData, value};
use crate::error::Result;
use std::collections::HashMap;

/// One field's per-tile metadata in one fragment.
struct FieldTiles {
    /// Tile sums (empty when absent).
    sums: Vec<[u8; 8]>,
    /// Per-tile min and max values (empty when absent).
    mins: Vec<Vec<u8>>,
    maxs: Vec<Vec<u8>>,
    /// Per-tile null counts (`None` for non-nullable fields).
    nulls: Option<Vec<u64>>,
}

/// Splits a [`TileMinMax`](crate::array::fragment_metadata::TileMinMax) into per-tile values;
/// empty when it does not hold `tiles` values.
fn split_min_max(
    mm: &crate::array::fragment_metadata::TileMinMax,
    tiles: usize,
    cell_size: Option<usize>,
) -> Vec<Vec<u8>> {
    match cell_size {
        Some(cs) if mm.fixed.len() == tiles * cs => {
            mm.fixed.chunks(cs).map(<[u8]>::to_vec).collect()
        }
        None if mm.fixed.len() == tiles * 8 => {
            let offs: Vec<usize> = mm
                .fixed
                .chunks(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8")) as usize)
                .collect();
            let mut out = Vec::with_capacity(tiles);
            for k in 0..tiles {
                let end = offs.get(k + 1).copied().unwrap_or(mm.var.len());
                match mm.var.get(offs[k]..end) {
                    Some(v) => out.push(v.to_vec()),
                    None => return Vec::new(),
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// Loads the tile metadata of attribute `name` in fragment `fi` (`None`: the fragment
/// predates it or its type differs).
fn field_tiles(array: &Array, fi: usize, name: &str) -> Result<Option<FieldTiles>> {
    let latest = array.schema();
    let frag = &array.fragments()[fi];
    let (Some(li), Some(i)) = (
        latest.attribute_index(name),
        frag.schema.attribute_index(name),
    ) else {
        return Ok(None);
    };
    let (la, a) = (&latest.attributes[li], &frag.schema.attributes[i]);
    if la.datatype != a.datatype || la.cell_val_num != a.cell_val_num || la.nullable != a.nullable {
        return Ok(None);
    }
    let Some(slot) = frag.meta.slot(FieldSlot::Attribute(i)) else {
        return Ok(None);
    };
    let key = array.key();
    let tiles = frag.meta.tile_num() as usize;
    let cs = (a.cell_val_num != VAR_NUM).then(|| a.datatype.size() * a.cell_val_num as usize);
    let mut sums = frag.meta.tile_sums(slot, key)?;
    if sums.len() != tiles {
        sums.clear();
    }
    let mut mins = split_min_max(&frag.meta.tile_min_max(slot, false, key)?, tiles, cs);
    let mut maxs = split_min_max(&frag.meta.tile_min_max(slot, true, key)?, tiles, cs);
    if mins.len() != maxs.len() {
        mins.clear();
        maxs.clear();
    }
    let nulls = if a.nullable {
        let n = frag.meta.list(slot, ListKind::TileNullCounts, key)?;
        if n.len() != tiles {
            return Ok(None);
        }
        Some(n.to_vec())
    } else {
        None
    };
    Ok(Some(FieldTiles {
        sums,
        mins,
        maxs,
        nulls,
    }))
}

/// Tile metadata loaded on demand, per (fragment, field).
struct MetaCache<'a> {
    array: &'a Array,
    loaded: HashMap<(usize, String), Option<FieldTiles>>,
}

impl<'a> MetaCache<'a> {
    fn get(&mut self, fi: usize, name: &str) -> Result<Option<&FieldTiles>> {
        let k = (fi, name.to_string());
        if !self.loaded.contains_key(&k) {
            let v = field_tiles(self.array, fi, name)?;
            self.loaded.insert(k.clone(), v);
        }
        Ok(self.loaded[&k].as_ref())
    }

    /// Adds tile `tile` of fragment `fi` (`cells` cells) to every accumulator if the metadata
    /// answers them all; false (nothing added) otherwise.
    fn try_tile(
        &mut self,
        fi: usize,
        tile: u64,
        cells: u64,
        fields: &[Option<String>],
        accs: &mut [Accumulator],
    ) -> Result<bool> {
        let t = tile as usize;
        for (acc, f) in accs.iter().zip(fields) {
            let Some(f) = f else { continue };
            let Some(m) = self.get(fi, f)? else {
                return Ok(false);
            };
            if !acc.tile_answerable(!m.sums.is_empty(), !m.mins.is_empty()) {
                return Ok(false);
            }
        }
        for (acc, f) in accs.iter_mut().zip(fields) {
            let Some(f) = f else {
                acc.add_count(cells);
                continue;
            };
            let m = self.get(fi, f)?.expect("checked above");
            let facts = TileFacts {
                cells,
                nulls: m.nulls.as_ref().map_or(0, |n| n[t]),
                sum: m.sums.get(t).copied(),
                min: m.mins.get(t).map(Vec::as_slice),
                max: m.maxs.get(t).map(Vec::as_slice),
            };
            acc.add_tile(&facts)?;
        }
        Ok(true)
    }
}

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
    let mut cache = MetaCache {
        array,
        loaded: HashMap::new(),
    };
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
    let use_meta = filter.is_none() && array.fragments().iter().all(|f| f.meta.dense);
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
                match metadata_tile(array, &neds, &tile, t, &mut cache, fields, accs) {
                    Ok(true) => {
                        stats.tiles_from_metadata += 1;
                        any_meta = true;
                        return;
                    }
                    Ok(false) => {}
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
/// covering any of it covers all of it (no padding, no older cells showing through).
fn metadata_tile(
    array: &Array,
    neds: &[Option<Cube>],
    tile: &Cube,
    t: &[i128],
    cache: &mut MetaCache<'_>,
    fields: &[Option<String>],
    accs: &mut [Accumulator],
) -> Result<bool> {
    let Some((fi, ned)) = neds.iter().enumerate().rev().find_map(|(fi, n)| {
        n.as_ref()
            .filter(|n| intersect(n, tile).is_some())
            .map(|n| (fi, n))
    }) else {
        return Ok(false);
    };
    if intersect(ned, tile).as_ref() != Some(tile) {
        return Ok(false);
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
        return Ok(false);
    }
    let cells = dense::cells(tile)?;
    if frag.meta.cell_num_of_tile(pos) != cells {
        return Ok(false);
    }
    cache.try_tile(fi, pos, cells, fields, accs)
}

/// Whether the sparse tile path applies: every visible cell of a fragment's tiles is in the
/// result (no de-duplication across fragments, no per-cell timestamps or deletes), one range
/// at most per dimension, no condition.
fn sparse_tiles_apply(array: &Array, mr: &MultiRange, filter: Option<&dyn CellFilter>) -> bool {
    let frags = array.fragments();
    filter.is_none()
        && !mr.is_multi()
        && (frags.len() <= 1 || array.schema().allows_dups)
        && frags
            .iter()
            .all(|f| !f.meta.dense && !f.meta.has_timestamps && !f.meta.has_delete_meta)
        && array.condition_commits().is_empty()
}

/// Sparse aggregates: each selected cell once.
pub(crate) fn sparse(
    array: &Array,
    mr: &MultiRange,
    fields: &[Option<String>],
    accs: &mut [Accumulator],
    filter: Option<&dyn CellFilter>,
    stats: &mut QueryStats,
) -> Result<()> {
    let schema = array.schema();
    let names = needed(fields);
    if !sparse_tiles_apply(array, mr, filter) {
        let sel = sparse::select(array, &names, mr, filter)?;
        let pass: Vec<bool> = sel.times.iter().map(|t| *t > 0).collect();
        let selected = pass.iter().filter(|p| **p).count() as u64;
        add_decoded(accs, fields, &sel.names, &sel.fields, Some(&pass), selected)?;
        for f in array.fragments() {
            let mbrs = f.meta.mbrs(&f.schema, array.key())?;
            stats.tiles_decoded += mbrs.iter().filter(|m| overlaps(array, m, mr)).count() as u64;
        }
        return Ok(());
    }
    let mut cache = MetaCache {
        array,
        loaded: HashMap::new(),
    };
    for (fi, f) in array.fragments().iter().enumerate() {
        let mbrs = f.meta.mbrs(&f.schema, array.key())?;
        for (t, mbr) in mbrs.iter().enumerate() {
            if !overlaps(array, mbr, mr) {
                continue;
            }
            let t = t as u64;
            let cells = f.meta.cell_num_of_tile(t);
            if inside(array, mbr, mr) && cache.try_tile(fi, t, cells, fields, accs)? {
                stats.tiles_from_metadata += 1;
                continue;
            }
            stats.tiles_decoded += 1;
            let mut dims = Vec::with_capacity(schema.dimensions.len());
            for d in &schema.dimensions {
                let r = array
                    .tile_reader(fi, &d.name)?
                    .expect("every sparse fragment stores its coordinates");
                dims.push(r.decode(t)?);
            }
            let mut pass = vec![true; cells as usize];
            for (j, d) in schema.dimensions.iter().enumerate() {
                let Some(r) = mr.ranges(j).first() else {
                    continue;
                };
                let cs = d.coord_size().unwrap_or(0);
                for (c, p) in pass.iter_mut().enumerate() {
                    *p = *p && contains(d.datatype, d.is_var(), r, dims[j].cell(c, cs));
                }
            }
            let mut data = Vec::with_capacity(names.len());
            for name in &names {
                data.push(tile_field(array, fi, t, name, &dims, cells)?);
            }
            let selected = pass.iter().filter(|p| **p).count() as u64;
            add_decoded(accs, fields, &names, &data, Some(&pass), selected)?;
        }
    }
    Ok(())
}

/// Field `name` of tile `t` of fragment `fi` as a field (the fill value for cells of an
/// attribute the fragment predates).
fn tile_field(
    array: &Array,
    fi: usize,
    t: u64,
    name: &str,
    dims: &[crate::array::read::tiles::DecodedTile],
    cells: u64,
) -> Result<FieldData> {
    let schema = array.schema();
    if let Some(j) = schema.dimension_index(name) {
        let d = &schema.dimensions[j];
        let tile = &dims[j];
        return Ok(FieldData {
            name: name.into(),
            datatype: d.datatype,
            cell_val_num: d.cell_val_num,
            data: tile.data.clone(),
            offsets: tile.offsets.clone(),
            validity: None,
            cell_count: cells,
        });
    }
    let i = schema
        .attribute_index(name)
        .expect("aggregate fields are checked");
    let a = &schema.attributes[i];
    let (data, offsets, validity) = match array.tile_reader(fi, name)? {
        Some(r) => {
            let tile = r.decode(t)?;
            (tile.data, tile.offsets, tile.validity)
        }
        None => {
            let n = cells as usize;
            let data = a.fill_value.repeat(n);
            let offsets = a.is_var().then(|| {
                (0..n as u64)
                    .map(|k| k * a.fill_value.len() as u64)
                    .collect()
            });
            (data, offsets, a.nullable.then(|| vec![a.fill_validity; n]))
        }
    };
    Ok(FieldData {
        name: name.into(),
        datatype: a.datatype,
        cell_val_num: a.cell_val_num,
        data,
        offsets,
        validity,
        cell_count: cells,
    })
}

/// Whether an MBR meets some cell of the ranges (per dimension, one of its ranges).
fn overlaps(array: &Array, mbr: &[Range], mr: &MultiRange) -> bool {
    array.schema().dimensions.iter().enumerate().all(|(j, d)| {
        let rs = mr.ranges(j);
        rs.is_empty()
            || rs.iter().any(|r| {
                let le = |a: &[u8], b: &[u8]| {
                    if d.is_var() {
                        a <= b
                    } else {
                        crate::array::order::compare(d.datatype, a, b).is_le()
                    }
                };
                le(mbr[j].lo(), r.hi()) && le(r.lo(), mbr[j].hi())
            })
    })
}

/// Whether an MBR lies inside the (single) range of every dimension with one.
fn inside(array: &Array, mbr: &[Range], mr: &MultiRange) -> bool {
    array.schema().dimensions.iter().enumerate().all(|(j, d)| {
        mr.ranges(j).first().is_none_or(|r| {
            contains(d.datatype, d.is_var(), r, mbr[j].lo())
                && contains(d.datatype, d.is_var(), r, mbr[j].hi())
        })
    })
}
