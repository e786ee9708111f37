//! Sparse reads (docs/ARRAY.md §5.4): the visible cells in global order. Each fragment's cells are
//! in global order already; several fragments are merged (a k-way merge of the fragments' sorted
//! runs by packed keys, else a stable sort of the concatenated runs), cells outside the subarray or (for consolidated fragments) outside the open time
//! range are dropped, equal coordinates are de-duplicated when the array does not allow
//! duplicates (the newest by per-cell timestamp, else fragment timestamp, then fragment
//! order, wins), and cells deleted at or before the open timestamp are dropped afterwards.

use super::deletes::{Delete, Scope, scopes};
use super::tiles::{DecodedTile, TileField, TileReader};
use crate::array::condition::{Column, evaluate};
use crate::array::field::{FieldData, FieldRef};
use crate::array::fragment::metadata::ListKind;
use crate::array::open::{Array, Fragment};
use crate::array::order::{
    self, Kind,
    hilbert::{coords_to_hilbert, hilbert_bits, map_to_uint64},
};
use crate::array::schema::{ArraySchema, Layout, Range};
use crate::error::{Error, Result};
use crate::format::datatype::Datatype;
use rayon::prelude::*;
use std::cmp::Ordering;
use std::collections::HashMap;

/// The decoded coordinates (and timestamps) of one tile.
struct CoordTile {
    frag: usize,
    tile: u64,
    dims: Vec<DecodedTile>,
    timestamps: Option<Vec<u64>>,
    delete_timestamps: Option<Vec<u64>>,
    hilbert: Option<Vec<u64>>,
}

/// A candidate cell: coordinate tile index and cell.
#[derive(Clone, Copy, Debug)]
struct Cell {
    ct: u32,
    cell: u32,
}

/// TileDB's global order for the array's domain.
struct GlobalOrder {
    dims: Vec<DimOrder>,
    cell_order: Layout,
}

struct DimOrder {
    datatype: Datatype,
    size: usize,
    /// (domain low, extent) when the dimension takes part in the tile order.
    tiling: Option<(Vec<u8>, Vec<u8>)>,
    /// The domain (low, high).
    domain: Option<(Vec<u8>, Vec<u8>)>,
}

impl GlobalOrder {
    fn new(schema: &ArraySchema) -> GlobalOrder {
        let dims = schema
            .dimensions
            .iter()
            .map(|d| DimOrder {
                datatype: d.datatype,
                size: d.coord_size().unwrap_or(0),
                tiling: match (&d.domain, &d.tile_extent) {
                    (Some((lo, _)), Some(e)) if !d.is_var() => Some((lo.clone(), e.clone())),
                    _ => None,
                },
                domain: d.domain.clone(),
            })
            .collect();
        GlobalOrder {
            dims,
            cell_order: schema.cell_order,
        }
    }

    fn order(&self, layout: Layout) -> Vec<usize> {
        let n = self.dims.len();
        if layout == Layout::ColMajor {
            (0..n).rev().collect()
        } else {
            (0..n).collect()
        }
    }

    fn coord(tiles: &[CoordTile], c: Cell, d: usize, size: usize) -> &[u8] {
        tiles[c.ct as usize].dims[d].cell(c.cell as usize, size)
    }

    fn cmp_coords(&self, tiles: &[CoordTile], a: Cell, b: Cell, dims: &[usize]) -> Ordering {
        for &d in dims {
            let o = &self.dims[d];
            let (x, y) = (
                Self::coord(tiles, a, d, o.size),
                Self::coord(tiles, b, d, o.size),
            );
            let r = if o.size == 0 {
                order::cmp_strings(x, y, order::StringOrder::UnsignedBytes)
            } else {
                order::compare(o.datatype, x, y)
            };
            if r != Ordering::Equal {
                return r;
            }
        }
        Ordering::Equal
    }

    fn cmp(
        &self,
        tiles: &[CoordTile],
        a: Cell,
        b: Cell,
        tile_dims: &[usize],
        cell_dims: &[usize],
    ) -> Ordering {
        if self.cell_order == Layout::Hilbert {
            let h = |c: Cell| {
                tiles[c.ct as usize]
                    .hilbert
                    .as_ref()
                    .map_or(0, |h| h[c.cell as usize])
            };
            return h(a)
                .cmp(&h(b))
                .then_with(|| self.cmp_coords(tiles, a, b, cell_dims));
        }
        for &d in tile_dims {
            let o = &self.dims[d];
            if let Some((lo, e)) = &o.tiling {
                let ta = crate::array::order::tile_index(
                    o.datatype,
                    Self::coord(tiles, a, d, o.size),
                    lo,
                    e,
                );
                let tb = crate::array::order::tile_index(
                    o.datatype,
                    Self::coord(tiles, b, d, o.size),
                    lo,
                    e,
                );
                if ta != tb {
                    return ta.cmp(&tb);
                }
            }
        }
        self.cmp_coords(tiles, a, b, cell_dims)
    }
}

/// One word of a cell's global-order key (see [`merge`](super::merge)).
enum Word<'o> {
    /// The cell's Hilbert value.
    Hilbert,
    /// The space tile index on dimension `dim` (domain low bound, extent).
    Tile(usize, Kind, &'o [u8], &'o [u8]),
    /// The coordinate on dimension `dim` as an order word, minus `base` (the domain's low
    /// bound's word: integer coordinates in a small domain make narrow words).
    Coord(usize, Kind, u64),
}

/// The bits `v` needs.
fn bits(v: u64) -> u32 {
    64 - v.leading_zeros()
}

impl GlobalOrder {
    /// The words of the cells' keys and their widths in bits: `None` when a dimension's
    /// coordinates have no order word (var-size strings).
    fn words(&self, tile_dims: &[usize], cell_dims: &[usize]) -> Option<(Vec<Word<'_>>, Vec<u32>)> {
        let kind = |d: usize| {
            let o = &self.dims[d];
            Kind::fixed(o.datatype).filter(|k| o.size == k.size())
        };
        // An integer dimension's domain (low, high) as order words.
        let domain = |d: usize, k: Kind| {
            let (lo, hi) = self.dims[d].domain.as_ref()?;
            (!k.is_float() && lo.len() == k.size() && hi.len() == k.size())
                .then(|| (k.order_word(lo), k.order_word(hi)))
                .filter(|(l, h)| l <= h)
        };
        let (mut words, mut widths) = (Vec::new(), Vec::new());
        if self.cell_order == Layout::Hilbert {
            words.push(Word::Hilbert);
            widths.push(64);
        } else {
            for &d in tile_dims {
                let k = kind(d)?;
                // Without a usable tiling every cell is in tile 0: no word.
                if let Some((lo, e)) = &self.dims[d].tiling
                    && lo.len() >= k.size()
                    && e.len() >= k.size()
                {
                    // Integer tile indices grow with the coordinate: the domain's high end
                    // has the largest (real ones may wrap to 0 in C++'s conversion).
                    let width = match (domain(d, k), &self.dims[d].domain) {
                        (Some(_), Some((_, hi))) => bits(k.tile_index(hi, lo, e)),
                        _ => 64,
                    };
                    words.push(Word::Tile(d, k, lo, e));
                    widths.push(width);
                }
            }
        }
        for &d in cell_dims {
            let k = kind(d)?;
            let (base, width) = domain(d, k).map_or((0, 64), |(l, h)| (l, bits(h - l)));
            words.push(Word::Coord(d, k, base));
            widths.push(width);
        }
        Some((words, widths))
    }

    /// `cells` (per fragment in global order, fragments oldest first) merged into global
    /// order by keys, equal coordinates in input order; `None` when the coordinates have no
    /// keys (string dimensions, NaN coordinates, coordinates outside the domain): then
    /// [`GlobalOrder::cmp`] sorts.
    fn merge(
        &self,
        tiles: &[CoordTile],
        cells: &[Cell],
        tile_dims: &[usize],
        cell_dims: &[usize],
    ) -> Option<super::merge::Merged> {
        let (words, widths) = self.words(tile_dims, cell_dims)?;
        super::merge::merge(cells.len(), &widths, |i, key| {
            let c = cells[i];
            let t = &tiles[c.ct as usize];
            for (w, k) in words.iter().zip(key.iter_mut()) {
                *k = match *w {
                    Word::Hilbert => t.hilbert.as_ref().map_or(0, |h| h[c.cell as usize]),
                    Word::Tile(d, kind, lo, e) => {
                        kind.tile_index(t.dims[d].cell(c.cell as usize, kind.size()), lo, e)
                    }
                    Word::Coord(d, kind, base) => {
                        let v = t.dims[d].cell(c.cell as usize, kind.size());
                        // NaN compares equal to everything in the comparison sort: no key.
                        if kind.is_float() && kind.float(v).is_nan() {
                            return false;
                        }
                        match kind.order_word(v).checked_sub(base) {
                            Some(w) => w,
                            None => return false,
                        }
                    }
                };
            }
            true
        })
    }
}

impl GlobalOrder {
    /// `cells` (per fragment in global order, fragments oldest first) merged into global
    /// order as sorted runs, one per fragment, by packed keys (see
    /// [`merge_runs`](super::merge::merge_runs)); `None` when the keys do not pack into 128
    /// bits, a cell has no key or a fragment's cells are not sorted (then [`Self::merge`]).
    fn merge_runs(
        &self,
        tiles: &[CoordTile],
        cells: &[Cell],
        tile_dims: &[usize],
        cell_dims: &[usize],
    ) -> Option<super::merge::Merged> {
        let (words, widths) = self.words(tile_dims, cell_dims)?;
        let total: u32 = widths.iter().sum();
        if words.is_empty() || widths.iter().any(|w| *w > 64) {
            return None;
        }
        // A run per fragment: where the fragment of the cells' tiles changes.
        let mut bounds = vec![0];
        bounds.extend(
            (1..cells.len()).filter(|&i| {
                tiles[cells[i].ct as usize].frag != tiles[cells[i - 1].ct as usize].frag
            }),
        );
        bounds.push(cells.len());
        if total <= u64::BITS {
            let keys = packed_keys::<u64>(&words, &widths, tiles, cells)?;
            super::merge::merge_runs(&keys, &bounds)
        } else if total <= u128::BITS {
            let keys = packed_keys::<u128>(&words, &widths, tiles, cells)?;
            super::merge::merge_runs(&keys, &bounds)
        } else {
            None
        }
    }
}

/// The packed keys of `cells` (`words`, `widths` bits each, the first in the highest bits),
/// built word by word over each tile's cells in parallel: `None` when a cell has no key (a
/// NaN coordinate, a word outside its width).
fn packed_keys<K: super::merge::Packed>(
    words: &[Word<'_>],
    widths: &[u32],
    tiles: &[CoordTile],
    cells: &[Cell],
) -> Option<Vec<K>> {
    let mut keys = vec![K::default(); cells.len()];
    let ok = keys
        .par_chunks_mut(1 << 13)
        .zip(cells.par_chunks(1 << 13))
        .all(|(keys, cells)| {
            let mut start = 0;
            while start < cells.len() {
                let ct = cells[start].ct;
                let mut end = start + 1;
                while end < cells.len() && cells[end].ct == ct {
                    end += 1;
                }
                let t = &tiles[ct as usize];
                let (ks, cs) = (&mut keys[start..end], &cells[start..end]);
                for (w, &bits) in words.iter().zip(widths) {
                    if !push_word(ks, cs, t, w, bits) {
                        return false;
                    }
                }
                start = end;
            }
            true
        });
    ok.then_some(keys)
}

/// Appends word `w` (`bits` bits) of each of `cells` (all of tile `t`) to its key.
fn push_word<K: super::merge::Packed>(
    keys: &mut [K],
    cells: &[Cell],
    t: &CoordTile,
    w: &Word<'_>,
    bits: u32,
) -> bool {
    match *w {
        Word::Hilbert => {
            let Some(h) = &t.hilbert else { return false };
            for (k, c) in keys.iter_mut().zip(cells) {
                *k = k.push(bits, h[c.cell as usize]);
            }
            true
        }
        Word::Tile(d, kind, lo, e) if !kind.is_float() => {
            // Integers: a division only where a cell leaves the last cell's space tile (the
            // cells of a data tile mostly share one).
            let (data, size) = (&t.dims[d].data, kind.size());
            let zero = [0u8; 8];
            let ext = kind.tile_offset(e, &zero);
            if ext == 0 {
                return false;
            }
            // The offsets of the current space tile: first..=last, its index.
            let (mut first, mut last, mut index) = (1u64, 0u64, 0u64);
            for (k, c) in keys.iter_mut().zip(cells) {
                let at = c.cell as usize * size;
                let off = kind.tile_offset(&data[at..at + size], lo);
                if off < first || off > last {
                    index = off / ext;
                    if !fits(index, bits) {
                        return false;
                    }
                    first = index * ext;
                    last = first.saturating_add(ext - 1);
                }
                *k = k.push(bits, index);
            }
            true
        }
        Word::Tile(d, kind, lo, e) => {
            let (data, size) = (&t.dims[d].data, kind.size());
            for (k, c) in keys.iter_mut().zip(cells) {
                let at = c.cell as usize * size;
                let v = kind.tile_index(&data[at..at + size], lo, e);
                if !fits(v, bits) {
                    return false;
                }
                *k = k.push(bits, v);
            }
            true
        }
        Word::Coord(d, kind, base) => {
            let (data, size) = (&t.dims[d].data, kind.size());
            for (k, c) in keys.iter_mut().zip(cells) {
                let at = c.cell as usize * size;
                let v = &data[at..at + size];
                // NaN compares equal to everything in the comparison sort: no key.
                if kind.is_float() && kind.float(v).is_nan() {
                    return false;
                }
                match kind.order_word(v).checked_sub(base) {
                    Some(x) if fits(x, bits) => *k = k.push(bits, x),
                    _ => return false,
                }
            }
            true
        }
    }
}

/// Whether `w` fits `bits` bits.
fn fits(w: u64, bits: u32) -> bool {
    bits >= 64 || w >> bits == 0
}

/// TileDB's Hilbert value of each cell (the writer's mapping, `array::write::global_order`).
fn hilbert_values(schema: &ArraySchema, dims: &[DecodedTile], cells: usize) -> Result<Vec<u64>> {
    let bits = hilbert_bits(schema.dimensions.len())?;
    let mut x = vec![0u64; dims.len()];
    (0..cells)
        .map(|c| {
            for ((d, t), v) in schema.dimensions.iter().zip(dims).zip(x.iter_mut()) {
                *v = map_to_uint64(d, t.cell(c, d.coord_size().unwrap_or(0)), bits)?;
            }
            Ok(coords_to_hilbert(&mut x, bits))
        })
        .collect()
}

/// Whether cell coordinates `coords` (one slice per dimension) lie in `subarray`.
fn inside(schema: &ArraySchema, coords: &[&[u8]], subarray: &[Range]) -> bool {
    schema
        .dimensions
        .iter()
        .zip(coords)
        .zip(subarray)
        .all(|((d, v), r)| {
            if d.is_var() {
                *v >= r.lo() && *v <= r.hi()
            } else {
                order::compare(d.datatype, v, r.lo()).is_ge()
                    && order::compare(d.datatype, v, r.hi()).is_le()
            }
        })
}

/// Whether `test` holds on every dimension for its MBR side and subarray range, given the
/// dimension's order (bytes for var-size strings, the datatype's otherwise).
fn all_dims(
    schema: &ArraySchema,
    mbr: &[Range],
    subarray: &[Range],
    test: impl Fn(&Range, &Range, &dyn Fn(&[u8], &[u8]) -> Ordering) -> bool,
) -> bool {
    schema
        .dimensions
        .iter()
        .zip(mbr)
        .zip(subarray)
        .all(|((d, m), r)| {
            let cmp = |a: &[u8], b: &[u8]| {
                if d.is_var() {
                    a.cmp(b)
                } else {
                    order::compare(d.datatype, a, b)
                }
            };
            test(m, r, &cmp)
        })
}

/// Whether an MBR intersects the subarray.
fn overlaps(schema: &ArraySchema, mbr: &[Range], subarray: &[Range]) -> bool {
    all_dims(schema, mbr, subarray, |m, r, cmp| {
        cmp(m.lo(), r.hi()).is_le() && cmp(r.lo(), m.hi()).is_le()
    })
}

/// Whether an MBR lies inside the subarray (every cell of its tile does).
fn contained(schema: &ArraySchema, mbr: &[Range], subarray: &[Range]) -> bool {
    all_dims(schema, mbr, subarray, |m, r, cmp| {
        cmp(m.lo(), r.lo()).is_ge() && cmp(m.hi(), r.hi()).is_le()
    })
}

/// The tiles of `frag` a read over `subarray` needs, each with whether its MBR lies inside
/// `subarray` (its cells need no check).
fn selected_tiles(
    array: &Array,
    frag: &Fragment,
    subarray: Option<&[Range]>,
) -> Result<Vec<(u64, bool)>> {
    let n = frag.meta.tile_num();
    // The footer's tile count is only a number: the tile offsets listed for the fragment's
    // first field are what justify it (before anything is sized by it).
    let listed = frag
        .meta
        .list(0, ListKind::TileOffsets, array.key())
        .map_err(|e| e.context(format!("fragment {}", frag.name())))?
        .len() as u64;
    if listed < n {
        return Err(Error::corrupt(format!(
            "fragment {}: {n} tiles, {listed} tile offsets listed",
            frag.name()
        )));
    }
    let Some(s) = subarray else {
        return Ok((0..n).map(|t| (t, true)).collect());
    };
    let mbrs = frag.meta.mbrs(&frag.schema, array.key())?;
    if mbrs.len() as u64 != n {
        return Err(Error::corrupt(format!(
            "fragment {}: {} MBRs for {n} tiles",
            frag.name(),
            mbrs.len()
        )));
    }
    Ok((0..n)
        .filter(|&t| overlaps(&frag.schema, &mbrs[t as usize], s))
        .map(|t| (t, contained(&frag.schema, &mbrs[t as usize], s)))
        .collect())
}

/// Reads `refs` of the cells in `subarray`.
pub(crate) fn read(
    array: &Array,
    refs: &[FieldRef],
    subarray: Option<&[Range]>,
) -> Result<Vec<FieldData>> {
    let schema = array.schema();
    for f in array.fragments() {
        if f.meta.dense {
            return Err(Error::corrupt(format!(
                "dense fragment {} in a sparse array",
                f.name()
            )));
        }
    }
    let frags = array.fragments();
    let deletes = super::deletes::load(array)?;
    let simple = frags.len() == 1
        && deletes.is_empty()
        && subarray.is_none()
        && !frags[0].meta.has_timestamps
        && !frags[0].meta.has_delete_meta;
    if simple || frags.is_empty() {
        return refs.iter().map(|r| read_whole(array, r, None)).collect();
    }
    if subarray.is_none()
        && let Some(fields) = read_one_fragment(array, refs, &deletes)?
    {
        return Ok(fields);
    }
    // Coordinates of every needed tile (each fragment's metadata loaded in parallel).
    let selected: Vec<Vec<(u64, bool)>> = frags
        .par_iter()
        .map(|f| selected_tiles(array, f, subarray))
        .collect::<Result<_>>()?;
    let per_frag: Vec<Vec<u64>> = selected
        .iter()
        .map(|ts| ts.iter().map(|&(t, _)| t).collect())
        .collect();
    let wanted: Vec<(usize, u64)> = per_frag
        .iter()
        .enumerate()
        .flat_map(|(fi, ts)| ts.iter().map(move |&t| (fi, t)))
        .collect();
    // Tiles whose MBR lies inside the subarray: their cells are not checked one by one.
    let inside_tile: Vec<bool> = selected.iter().flatten().map(|&(_, c)| c).collect();
    let (t_start, t_end) = array.timestamps();
    let readers = per_frag
        .par_iter()
        .enumerate()
        .map(|(fi, tiles)| CoordReaders::new(array, fi, tiles))
        .collect::<Result<Vec<_>>>()?;
    let coord_tiles: Vec<CoordTile> = wanted
        .par_iter()
        .map(|&(fi, t)| load_coords(array, &readers[fi], fi, t))
        .collect::<Result<_>>()?;
    // Candidates, per fragment in global order.
    let mut cells = Vec::new();
    let mut coords: Vec<&[u8]> = Vec::new();
    for (ct, tile) in coord_tiles.iter().enumerate() {
        let n = tile.dims.first().map_or(0, |d| d.cells) as usize;
        for c in 0..n {
            if let Some(ts) = &tile.timestamps
                && (ts[c] < t_start || ts[c] > t_end)
            {
                continue;
            }
            if let Some(s) = subarray
                && !inside_tile[ct]
            {
                coords.clear();
                for (d, dt) in schema.dimensions.iter().zip(&tile.dims) {
                    coords.push(dt.cell(c, d.coord_size().unwrap_or(0)));
                }
                if !inside(schema, &coords, s) {
                    continue;
                }
            }
            cells.push(Cell {
                ct: ct as u32,
                cell: c as u32,
            });
        }
    }
    let order = GlobalOrder::new(schema);
    let tile_dims = order.order(schema.tile_order);
    let cell_dims = order.order(if schema.cell_order == Layout::Hilbert {
        Layout::RowMajor
    } else {
        schema.cell_order
    });
    let mut same: Option<Vec<bool>> = None;
    if frags.len() > 1 {
        let merged = order
            .merge_runs(&coord_tiles, &cells, &tile_dims, &cell_dims)
            .or_else(|| order.merge(&coord_tiles, &cells, &tile_dims, &cell_dims));
        match merged {
            Some(m) => {
                if !m.in_input_order {
                    cells = m.order.par_iter().map(|&i| cells[i as usize]).collect();
                }
                same = Some(m.same_as_previous);
            }
            None => {
                cells.par_sort_by(|a, b| order.cmp(&coord_tiles, *a, *b, &tile_dims, &cell_dims))
            }
        }
    }
    if !schema.allows_dups {
        let same = same.unwrap_or_else(|| {
            (0..cells.len())
                .into_par_iter()
                .map(|i| {
                    i > 0
                        && order.cmp_coords(&coord_tiles, cells[i - 1], cells[i], &cell_dims)
                            == Ordering::Equal
                })
                .collect()
        });
        cells = dedup(array, &coord_tiles, cells, &same);
    }
    if !deletes.is_empty() {
        cells = apply_deletes(array, &deletes, &coord_tiles, cells)?;
    }
    cells.retain(|c| {
        let t = &coord_tiles[c.ct as usize];
        match &t.delete_timestamps {
            None => true,
            Some(dt) => {
                let d = dt[c.cell as usize];
                if t_end == u64::MAX {
                    d >= t_end
                } else {
                    d > t_end
                }
            }
        }
    });
    refs.iter()
        .map(|r| gather(array, r, &coord_tiles, &cells))
        .collect()
}

/// The whole of a single fragment whose cells all lie in the open time range (a fragment
/// written at once, or a consolidated one with per-cell timestamps inside the range), its
/// fields read tile by tile in parallel as [`read_whole`] reads them, then the cells a delete
/// commit hides dropped: no coordinate tiles, merge or gather. `None` (the general read then)
/// when the array has other fragments, the fragment carries delete metadata or reaches
/// outside the open range, or, holding per-cell timestamps in an array without duplicates,
/// it keeps several versions of a cell (adjacent equal coordinates: de-duplication needed).
fn read_one_fragment(
    array: &Array,
    refs: &[FieldRef],
    deletes: &[Delete],
) -> Result<Option<Vec<FieldData>>> {
    let schema = array.schema();
    let [frag] = array.fragments() else {
        return Ok(None);
    };
    let (t_start, t_end) = array.timestamps();
    let (f1, f2) = frag.timestamps();
    if frag.meta.has_delete_meta || f1 < t_start || f2 > t_end {
        return Ok(None);
    }
    let dedup = frag.meta.has_timestamps && !schema.allows_dups;
    let scopes = scopes(array, frag, deletes)?;
    let active: Vec<usize> = (0..deletes.len())
        .filter(|&k| scopes[k] != Scope::Nothing)
        .collect();
    let mut names: Vec<&str> = Vec::new();
    for &k in &active {
        for f in deletes[k].keep.fields() {
            if !names.contains(&f) {
                names.push(f);
            }
        }
    }
    let condition_refs = names
        .iter()
        .map(|name| {
            array
                .field(name)
                .map_err(|e| e.context("a delete condition"))
        })
        .collect::<Result<Vec<FieldRef>>>()?;
    let per_cell_time = active.iter().any(|&k| matches!(scopes[k], Scope::UpTo(_)));
    // The fields that decide which cells are kept are read first, whole.
    let mut wanted: Vec<FieldRef> = Vec::new();
    if dedup {
        wanted.extend((0..schema.dimensions.len()).map(FieldRef::Dimension));
    }
    wanted.extend(&condition_refs);
    if per_cell_time {
        wanted.push(FieldRef::Timestamps);
    }
    let mut unique: Vec<FieldRef> = Vec::new();
    for r in wanted {
        if !unique.contains(&r) {
            unique.push(r);
        }
    }
    let mut read = unique
        .iter()
        .map(|r| Ok((*r, read_whole(array, r, None)?)))
        .collect::<Result<Vec<(FieldRef, FieldData)>>>()?;
    let of = |read: &[(FieldRef, FieldData)], r: FieldRef| -> usize {
        read.iter().position(|(x, _)| *x == r).expect("read")
    };
    if dedup {
        let dims: Vec<&FieldData> = (0..schema.dimensions.len())
            .map(|j| &read[of(&read, FieldRef::Dimension(j))].1)
            .collect();
        if has_adjacent_duplicates(&dims) {
            return Ok(None);
        }
    }
    let n = read
        .first()
        .map_or(frag.meta.cell_num(), |(_, f)| f.cell_count) as usize;
    let mut keep: Option<Vec<bool>> = None;
    if !active.is_empty() {
        let timestamps: Option<Vec<u64>> = per_cell_time.then(|| {
            read[of(&read, FieldRef::Timestamps)]
                .1
                .data
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect()
        });
        let column = |name: &str| {
            let k = names.iter().position(|n| *n == name)?;
            let f = &read[of(&read, condition_refs[k])].1;
            Some(Column {
                data: &f.data,
                offsets: f.offsets.as_deref(),
                validity: f.validity.as_deref(),
            })
        };
        for &k in &active {
            let d = &deletes[k];
            let kept = evaluate(&d.keep, schema, n, &column)
                .map_err(|e| e.context(format!("delete commit {}", d.marker)))?;
            keep = Some(match (keep, timestamps.as_ref()) {
                // One delete of every cell's time: its condition's flags are the mask.
                (None, None) if scopes[k].covers(None) => kept,
                (keep, times) => {
                    let mut keep = keep.unwrap_or_else(|| vec![true; n]);
                    for (i, (cell, kept)) in keep.iter_mut().zip(kept).enumerate() {
                        if !kept && scopes[k].covers(times.map(|t| t[i])) {
                            *cell = false;
                        }
                    }
                    keep
                }
            });
        }
    }
    let keep = keep.filter(|k| k.par_iter().any(|k| !*k));
    // The results: the fields read above moved out at their last use (copied before), then
    // compacted; the others read with only their kept cells (a field asked for twice read
    // once, then copied).
    let mut fields: Vec<(FieldData, bool)> = Vec::with_capacity(refs.len());
    let mut kept_read: Vec<(FieldRef, FieldData)> = Vec::new();
    for (i, r) in refs.iter().enumerate() {
        let last = !refs[i + 1..].contains(r);
        if let Some(at) = read.iter().position(|(x, _)| x == r) {
            let f = if last {
                read.swap_remove(at).1
            } else {
                read[at].1.clone()
            };
            fields.push((f, false));
            continue;
        }
        let f = match kept_read.iter().position(|(x, _)| x == r) {
            Some(at) if last => kept_read.swap_remove(at).1,
            Some(at) => kept_read[at].1.clone(),
            None => {
                let f = read_whole(array, r, keep.as_deref())?;
                if !last {
                    kept_read.push((*r, f.clone()));
                }
                f
            }
        };
        fields.push((f, true));
    }
    if let Some(keep) = &keep {
        fields
            .par_iter_mut()
            .filter(|(_, compacted)| !*compacted)
            .for_each(|(f, _)| retain_cells(f, keep));
    }
    Ok(Some(fields.into_iter().map(|(f, _)| f).collect()))
}

/// Whether two adjacent cells have the same coordinates (`dims`: every dimension's cells).
fn has_adjacent_duplicates(dims: &[&FieldData]) -> bool {
    let n = dims.first().map_or(0, |d| d.cell_count) as usize;
    if n < 2 {
        return false;
    }
    // Fixed-size first dimension: its equal neighbours (rare) found in one pass over its
    // bytes, the other dimensions checked only there.
    if let Some(first) = dims.first()
        && first.offsets.is_none()
    {
        let cs = first.data.len() / n;
        let data = &first.data;
        return (1..n).into_par_iter().with_min_len(1 << 14).any(|i| {
            data[i * cs..(i + 1) * cs] == data[(i - 1) * cs..i * cs]
                && dims[1..].iter().all(|d| d.cell(i) == d.cell(i - 1))
        });
    }
    (1..n)
        .into_par_iter()
        .with_min_len(1 << 14)
        .any(|i| dims.iter().all(|d| d.cell(i) == d.cell(i - 1)))
}

/// Keeps the cells `i` of `f` with `keep[i]`, in order.
fn retain_cells(f: &mut FieldData, keep: &[bool]) {
    let n = f.cell_count as usize;
    let kept = keep.iter().filter(|k| **k).count();
    if kept == n {
        return;
    }
    match f.offsets.take() {
        Some(offsets) => {
            let mut data = Vec::new();
            let mut out = Vec::with_capacity(kept);
            for i in (0..n).filter(|&i| keep[i]) {
                let end = offsets.get(i + 1).map_or(f.data.len(), |e| *e as usize);
                out.push(data.len() as u64);
                data.extend_from_slice(&f.data[offsets[i] as usize..end]);
            }
            f.data = data;
            f.offsets = Some(out);
        }
        None => {
            let cs = f.data.len() / n.max(1);
            if n >= 1 << 18 && cs > 0 && f.data.len() == n * cs {
                f.data = compact_parallel(&f.data, cs, keep, kept);
            } else {
                compact_runs(&mut f.data, cs, keep);
            }
        }
    }
    if let Some(v) = f.validity.as_mut() {
        compact_runs(v, 1, keep);
    }
    f.cell_count = kept as u64;
}

/// The cells of `data` (`size` bytes each) whose flag in `keep` is set (`kept` of them), in
/// order, copied in parallel into a new buffer: each block of cells to its place.
fn compact_parallel(data: &[u8], size: usize, keep: &[bool], kept: usize) -> Vec<u8> {
    const BLOCK: usize = 1 << 14;
    let counts: Vec<usize> = keep
        .par_chunks(BLOCK)
        .map(|k| k.iter().filter(|x| **x).count())
        .collect();
    let mut out = crate::mem::hugepages::zeroed(kept * size);
    let slices = split(&mut out, &counts, size);
    slices
        .into_par_iter()
        .zip(keep.par_chunks(BLOCK))
        .zip(data.par_chunks(BLOCK * size))
        .for_each(|((dest, k), src)| copy_runs(src, k, size, dest));
    out
}

/// Moves the runs of kept cells (`size` bytes each) of `data` to its front, in order, and
/// truncates it to them.
fn compact_runs(data: &mut Vec<u8>, size: usize, keep: &[bool]) {
    let mut w = 0;
    for r in kept_runs(keep) {
        if w != r.start {
            data.copy_within(r.start * size..r.end * size, w * size);
        }
        w += r.len();
    }
    data.truncate(w * size);
}

/// The runs of consecutive set flags of `keep`, in order.
fn kept_runs(keep: &[bool]) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < keep.len() && !keep[i] {
            i += 1;
        }
        let start = i;
        while i < keep.len() && keep[i] {
            i += 1;
        }
        (start < i).then_some(start..i)
    })
}

/// Drops the cells a delete of `deletes` applies to and whose keep condition fails.
fn apply_deletes(
    array: &Array,
    deletes: &[Delete],
    tiles: &[CoordTile],
    cells: Vec<Cell>,
) -> Result<Vec<Cell>> {
    let scopes = array
        .fragments()
        .iter()
        .map(|f| scopes(array, f, deletes))
        .collect::<Result<Vec<_>>>()?;
    let stamp = |c: &Cell| {
        let t = &tiles[c.ct as usize];
        t.timestamps.as_ref().map(|ts| ts[c.cell as usize])
    };
    // The cells some delete applies to: only their condition fields are gathered.
    let subject: Vec<usize> = cells
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            let ts = stamp(c);
            scopes[tiles[c.ct as usize].frag]
                .iter()
                .any(|s| s.covers(ts))
        })
        .map(|(i, _)| i)
        .collect();
    if subject.is_empty() {
        return Ok(cells);
    }
    let sub: Vec<Cell> = subject.iter().map(|&i| cells[i]).collect();
    let mut names: Vec<&str> = Vec::new();
    for d in deletes {
        for f in d.keep.fields() {
            if !names.contains(&f) {
                names.push(f);
            }
        }
    }
    let columns = names
        .iter()
        .map(|n| {
            let r = array
                .field(n)
                .map_err(|e| e.context("a delete condition"))?;
            gather(array, &r, tiles, &sub)
        })
        .collect::<Result<Vec<FieldData>>>()?;
    let column = |name: &str| {
        names.iter().position(|n| *n == name).map(|k| Column {
            data: &columns[k].data,
            offsets: columns[k].offsets.as_deref(),
            validity: columns[k].validity.as_deref(),
        })
    };
    let mut deleted = vec![false; sub.len()];
    for (k, d) in deletes.iter().enumerate() {
        let keep = evaluate(&d.keep, array.schema(), sub.len(), &column)
            .map_err(|e| e.context(format!("delete commit {}", d.marker)))?;
        for (i, c) in sub.iter().enumerate() {
            if !keep[i] && scopes[tiles[c.ct as usize].frag][k].covers(stamp(c)) {
                deleted[i] = true;
            }
        }
    }
    let mut gone = subject
        .iter()
        .zip(&deleted)
        .filter(|(_, d)| **d)
        .map(|(i, _)| *i)
        .peekable();
    let mut out = Vec::with_capacity(cells.len());
    for (i, c) in cells.into_iter().enumerate() {
        if gone.peek() == Some(&i) {
            gone.next();
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

/// Keeps, of every run of equal coordinates (`same[i]`: cell `i` has the coordinates of
/// cell `i - 1`), the newest cell.
fn dedup(array: &Array, tiles: &[CoordTile], cells: Vec<Cell>, same: &[bool]) -> Vec<Cell> {
    let stamp = |c: Cell| {
        let t = &tiles[c.ct as usize];
        let ts = match &t.timestamps {
            Some(ts) => ts[c.cell as usize],
            None => array.fragments()[t.frag].timestamps().0,
        };
        (ts, t.frag)
    };
    let mut out: Vec<Cell> = Vec::with_capacity(cells.len());
    for (c, &same) in cells.into_iter().zip(same) {
        if same && let Some(last) = out.last_mut() {
            if stamp(c) > stamp(*last) {
                *last = c;
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// The readers of one fragment's coordinates and per-cell timestamps.
struct CoordReaders<'a> {
    dims: Vec<TileReader<'a>>,
    timestamps: Option<TileReader<'a>>,
    delete_timestamps: Option<TileReader<'a>>,
}

impl<'a> CoordReaders<'a> {
    /// The readers of fragment `fi`, with `tiles` prefetched (from an object store, in few
    /// requests); no readers are made when no tile is wanted.
    fn new(array: &'a Array, fi: usize, tiles: &[u64]) -> Result<CoordReaders<'a>> {
        let mut out = CoordReaders {
            dims: Vec::new(),
            timestamps: None,
            delete_timestamps: None,
        };
        if tiles.is_empty() {
            return Ok(out);
        }
        let frag = &array.fragments()[fi];
        for j in 0..array.schema().dimensions.len() {
            let r = TileReader::new(array, frag, TileField::Dimension(j))?.ok_or_else(|| {
                Error::corrupt(format!("fragment {} has no coordinates", frag.name()))
            })?;
            r.prefetch(tiles)?;
            out.dims.push(r);
        }
        out.timestamps = TileReader::new(array, frag, TileField::Timestamps)?;
        out.delete_timestamps = TileReader::new(array, frag, TileField::DeleteTimestamps)?;
        for r in [&out.timestamps, &out.delete_timestamps]
            .into_iter()
            .flatten()
        {
            r.prefetch(tiles)?;
        }
        Ok(out)
    }
}

fn load_coords(array: &Array, readers: &CoordReaders<'_>, fi: usize, t: u64) -> Result<CoordTile> {
    let schema = array.schema();
    let dims = readers
        .dims
        .iter()
        .map(|r| r.decode(t))
        .collect::<Result<Vec<_>>>()?;
    let timestamps = readers
        .timestamps
        .as_ref()
        .map(|r| r.decode_u64(t))
        .transpose()?;
    let delete_timestamps = readers
        .delete_timestamps
        .as_ref()
        .map(|r| r.decode_u64(t))
        .transpose()?;
    let hilbert = (schema.cell_order == Layout::Hilbert)
        .then(|| hilbert_values(schema, &dims, dims.first().map_or(0, |d| d.cells) as usize))
        .transpose()?;
    Ok(CoordTile {
        frag: fi,
        tile: t,
        dims,
        timestamps,
        delete_timestamps,
        hilbert,
    })
}

fn tile_field(r: &FieldRef) -> TileField {
    match r {
        FieldRef::Attribute(i) => TileField::Attribute(*i),
        FieldRef::Dimension(j) => TileField::Dimension(*j),
        FieldRef::Timestamps => TileField::Timestamps,
        FieldRef::DeleteTimestamps => TileField::DeleteTimestamps,
        FieldRef::DeleteConditionIndex => TileField::DeleteConditionIndex,
    }
}

/// One fragment: every tile in order, fixed-size tiles unfiltered in parallel straight into
/// the result. With `keep` (one flag per cell of the fragment), only the kept cells: a
/// fixed-size tile is unfiltered into scratch memory and its kept cells copied out while it
/// is in cache (a tile keeping every cell straight into the result, one keeping none not
/// read); var-size fields are compacted after.
fn read_whole(array: &Array, r: &FieldRef, keep: Option<&[bool]>) -> Result<FieldData> {
    let schema = array.schema();
    let info = r.info(schema);
    let cell_size = info.cell_size;
    let Some(frag) = array.fragments().first() else {
        return Ok(info.empty());
    };
    let n = frag.meta.cell_num();
    let cells = usize::try_from(n).map_err(|_| Error::invalid("too many cells"))?;
    info.check_result(array, n)?;
    let reader = TileReader::new(array, frag, tile_field(r))?;
    let mut out = info.empty();
    out.cell_count = n;
    let Some(reader) = reader else {
        // An attribute added after the fragment: its cell count is justified by the
        // fragment's coordinate tiles (checked against their stored bytes).
        if !schema.dimensions.is_empty() {
            TileReader::new(array, frag, TileField::Dimension(0))?;
        }
        fill_missing(schema, r, &mut out, cells);
        return Ok(out);
    };
    // TileReader::new checked that the fragment lists an offset for each of its tiles.
    let tiles: Vec<u64> = (0..frag.meta.tile_num()).collect();
    let counts: Vec<usize> = tiles
        .iter()
        .map(|&t| frag.meta.cell_num_of_tile(t) as usize)
        .collect();
    if let Some(keep) = keep {
        if keep.len() != cells || counts.iter().sum::<usize>() != cells {
            return Err(Error::corrupt(format!(
                "fragment {}: its tiles hold {} cells, {cells} expected",
                frag.name(),
                counts.iter().sum::<usize>()
            )));
        }
        if let Some(cs) = cell_size {
            return read_whole_kept(&reader, &tiles, &counts, keep, cs, out);
        }
    }
    reader.prefetch(&tiles)?;
    if let Some(v) = out.validity.as_mut() {
        v.resize(cells, 0);
        let slices = split(v, &counts, 1);
        tiles
            .par_iter()
            .zip(slices)
            .try_for_each(|(&t, s)| reader.decode_validity_into(t, s))?;
    }
    match cell_size {
        Some(cs) => {
            out.data = crate::mem::hugepages::zeroed(cells * cs);
            let slices = split(&mut out.data, &counts, cs);
            tiles
                .par_iter()
                .zip(slices)
                .try_for_each(|(&t, s)| reader.decode_fixed_into(t, s))?;
        }
        None => {
            let offsets = out.offsets.as_mut().expect("var field");
            offsets.reserve(cells);
            let threads = rayon::current_num_threads().max(1);
            for chunk in tiles.chunks(threads * 4) {
                let decoded: Vec<(Vec<u64>, Vec<u8>)> = chunk
                    .par_iter()
                    .map(|&t| reader.decode_var(t))
                    .collect::<Result<_>>()?;
                for (o, d) in decoded {
                    let base = out.data.len() as u64;
                    offsets.extend(o.iter().map(|x| x + base));
                    out.data.extend_from_slice(&d);
                }
            }
            if let Some(keep) = keep {
                retain_cells(&mut out, keep);
            }
        }
    }
    Ok(out)
}

thread_local! {
    /// Each thread's buffer for a tile whose kept cells [`read_whole_kept`] copies out.
    static KEPT_SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Copies the cells of `src` (`unit` bytes each) whose flag in `keep` is set to the front of
/// `dest`, a run of kept cells at a time.
fn copy_runs(src: &[u8], keep: &[bool], unit: usize, dest: &mut [u8]) {
    let mut w = 0;
    for r in kept_runs(keep) {
        let len = r.len() * unit;
        dest[w..w + len].copy_from_slice(&src[r.start * unit..r.end * unit]);
        w += len;
    }
}

/// [`read_whole`] of a fixed-size field (`cs` bytes a cell) keeping the cells of `keep`:
/// `out` (the empty result) gets the kept cells of `tiles` (`counts` cells each).
fn read_whole_kept(
    reader: &TileReader<'_>,
    tiles: &[u64],
    counts: &[usize],
    keep: &[bool],
    cs: usize,
    mut out: FieldData,
) -> Result<FieldData> {
    // Each tile's flags and kept cells.
    let mut flags = Vec::with_capacity(tiles.len());
    let mut rest = keep;
    for &c in counts {
        let (f, r) = rest.split_at(c);
        flags.push(f);
        rest = r;
    }
    let kept: Vec<usize> = flags
        .par_iter()
        .map(|f| f.iter().filter(|k| **k).count())
        .collect();
    let total: usize = kept.iter().sum();
    let wanted: Vec<u64> = tiles
        .iter()
        .zip(&kept)
        .filter(|(_, k)| **k > 0)
        .map(|(t, _)| *t)
        .collect();
    reader.prefetch(&wanted)?;
    // Tile `t` unfiltered by `decode` (into a slice of `count * unit` bytes), its kept cells
    // copied to `dest`.
    let copy_kept = |f: &[bool],
                     dest: &mut [u8],
                     unit: usize,
                     decode: &dyn Fn(&mut [u8]) -> Result<()>|
     -> Result<()> {
        if dest.is_empty() {
            return Ok(());
        }
        if dest.len() == f.len() * unit {
            return decode(dest);
        }
        KEPT_SCRATCH.with(|cell| {
            // This thread's buffer, zero-filled only where it grows (re-entered: a fresh one).
            let mut own = Vec::new();
            let mut borrowed = cell.try_borrow_mut();
            let scratch = match borrowed.as_mut() {
                Ok(b) => &mut **b,
                Err(_) => &mut own,
            };
            if scratch.len() < f.len() * unit {
                scratch.resize(f.len() * unit, 0);
            }
            let scratch = &mut scratch[..f.len() * unit];
            decode(scratch)?;
            copy_runs(scratch, f, unit, dest);
            Ok(())
        })
    };
    if let Some(v) = out.validity.as_mut() {
        v.resize(total, 0);
        let slices = split(v, &kept, 1);
        tiles
            .par_iter()
            .zip(&flags)
            .zip(slices)
            .try_for_each(|((&t, f), s)| {
                copy_kept(f, s, 1, &|b| reader.decode_validity_into(t, b))
            })?;
    }
    out.data = crate::mem::hugepages::zeroed(total * cs);
    let slices = split(&mut out.data, &kept, cs);
    tiles
        .par_iter()
        .zip(&flags)
        .zip(slices)
        .try_for_each(|((&t, f), s)| copy_kept(f, s, cs, &|b| reader.decode_fixed_into(t, b)))?;
    out.cell_count = total as u64;
    Ok(out)
}

/// Splits `buf` into consecutive slices of `counts[i] × unit` bytes.
fn split<'b>(buf: &'b mut [u8], counts: &[usize], unit: usize) -> Vec<&'b mut [u8]> {
    let mut rest = buf;
    let mut out = Vec::with_capacity(counts.len());
    for &c in counts {
        let (a, b) = rest.split_at_mut(c * unit);
        out.push(a);
        rest = b;
    }
    out
}

/// An attribute added after the fragment was written: every cell is the fill value.
fn fill_missing(schema: &ArraySchema, r: &FieldRef, out: &mut FieldData, cells: usize) {
    if let FieldRef::Attribute(i) = r {
        let a = &schema.attributes[*i];
        if let Some(o) = out.offsets.as_mut() {
            *o = (0..cells as u64)
                .map(|k| k * a.fill_value.len() as u64)
                .collect();
        }
        out.data = a.fill_value.repeat(cells);
        if let Some(v) = out.validity.as_mut() {
            *v = vec![a.fill_validity; cells];
        }
    }
}

/// Gathers field `r` for the selected cells.
fn gather(array: &Array, r: &FieldRef, tiles: &[CoordTile], cells: &[Cell]) -> Result<FieldData> {
    let schema = array.schema();
    let info = r.info(schema);
    let (cell_size, nullable) = (info.cell_size, info.nullable);
    let n = cells.len();
    // Source tiles: the coordinate tiles for dimensions, decoded attribute tiles otherwise.
    let decoded: Vec<Option<DecodedTile>>;
    let sources: Vec<Option<&DecodedTile>> = match r {
        FieldRef::Dimension(j) => tiles.iter().map(|t| Some(&t.dims[*j])).collect(),
        FieldRef::Attribute(_)
        | FieldRef::Timestamps
        | FieldRef::DeleteTimestamps
        | FieldRef::DeleteConditionIndex => {
            let mut used = vec![false; tiles.len()];
            for c in cells {
                used[c.ct as usize] = true;
            }
            let mut wanted: HashMap<usize, Vec<u64>> = HashMap::new();
            for (k, t) in tiles.iter().enumerate() {
                if used[k] {
                    wanted.entry(t.frag).or_default().push(t.tile);
                }
            }
            // The fragments' readers (their tile metadata loaded) in parallel.
            let readers: HashMap<usize, Option<TileReader<'_>>> = wanted
                .par_iter()
                .map(|(&f, ts)| {
                    let frag = &array.fragments()[f];
                    let reader = TileReader::new(array, frag, tile_field(r))?;
                    if let Some(reader) = &reader {
                        reader.prefetch(ts)?;
                    }
                    Ok((f, reader))
                })
                .collect::<Result<_>>()?;
            decoded = tiles
                .par_iter()
                .enumerate()
                .map(|(k, t)| match readers.get(&t.frag) {
                    Some(Some(reader)) if used[k] => reader.decode(t.tile).map(Some),
                    _ => Ok(None),
                })
                .collect::<Result<_>>()?;
            decoded.iter().map(|d| d.as_ref()).collect()
        }
    };
    let fill = match r {
        FieldRef::Attribute(i) => Some(&schema.attributes[*i]),
        _ => None,
    };
    let cs = cell_size.unwrap_or(0);
    info.check_result(array, n as u64)?;
    if let Some(cs) = cell_size {
        return gather_fixed(info, fill, &sources, cells, cs);
    }
    let mut data = Vec::with_capacity(n * cs.max(1));
    let mut offsets = cell_size.is_none().then(|| Vec::with_capacity(n));
    let mut validity = nullable.then(|| Vec::with_capacity(n));
    for c in cells {
        if let Some(o) = offsets.as_mut() {
            o.push(data.len() as u64);
        }
        match sources[c.ct as usize] {
            Some(t) => {
                data.extend_from_slice(t.cell(c.cell as usize, cs));
                if let Some(v) = validity.as_mut() {
                    v.push(t.validity.as_ref().map_or(1, |tv| tv[c.cell as usize]));
                }
            }
            None => {
                let a = fill.ok_or_else(|| {
                    Error::invalid(format!("field {}: a fragment does not store it", info.name))
                })?;
                data.extend_from_slice(&a.fill_value);
                if let Some(v) = validity.as_mut() {
                    v.push(a.fill_validity);
                }
            }
        }
    }
    Ok(FieldData {
        data,
        offsets,
        validity,
        cell_count: n as u64,
        ..info.empty()
    })
}

/// Copies `cells` of `N` bytes each into `out` (a copy the compiler sees the size of).
fn copy_cells<const N: usize>(
    out: &mut [u8],
    cells: &[Cell],
    sources: &[Option<&DecodedTile>],
    fill_value: &[u8],
) {
    for (o, c) in out.chunks_exact_mut(N).zip(cells) {
        let from = match sources[c.ct as usize] {
            Some(t) => {
                let at = c.cell as usize * N;
                &t.data[at..at + N]
            }
            None => fill_value,
        };
        o.copy_from_slice(from);
    }
}

/// [`gather`] of a fixed-size field (`cs` bytes a cell): the cells copied in parallel.
fn gather_fixed(
    info: crate::array::field::FieldInfo,
    fill: Option<&crate::array::schema::Attribute>,
    sources: &[Option<&DecodedTile>],
    cells: &[Cell],
    cs: usize,
) -> Result<FieldData> {
    if cells.iter().any(|c| sources[c.ct as usize].is_none()) {
        match fill {
            None => {
                return Err(Error::invalid(format!(
                    "field {}: a fragment does not store it",
                    info.name
                )));
            }
            Some(a) if a.fill_value.len() != cs => {
                return Err(Error::corrupt(format!(
                    "attribute {}: a fill value of {} bytes for {cs}-byte cells",
                    info.name,
                    a.fill_value.len()
                )));
            }
            Some(_) => {}
        }
    }
    const CHUNK: usize = 1 << 14;
    let n = cells.len();
    let mut data = crate::mem::hugepages::zeroed(n * cs);
    let fill_value = fill.map_or(&[][..], |a| &a.fill_value[..]);
    data.par_chunks_mut(CHUNK * cs.max(1))
        .zip(cells.par_chunks(CHUNK))
        .for_each(|(out, cells)| match cs {
            1 => copy_cells::<1>(out, cells, sources, fill_value),
            2 => copy_cells::<2>(out, cells, sources, fill_value),
            4 => copy_cells::<4>(out, cells, sources, fill_value),
            8 => copy_cells::<8>(out, cells, sources, fill_value),
            16 => copy_cells::<16>(out, cells, sources, fill_value),
            _ => {
                for (o, c) in out.chunks_exact_mut(cs.max(1)).zip(cells) {
                    match sources[c.ct as usize] {
                        Some(t) => o.copy_from_slice(t.cell(c.cell as usize, cs)),
                        None => o.copy_from_slice(fill_value),
                    }
                }
            }
        });
    let validity = info.nullable.then(|| {
        cells
            .par_iter()
            .with_min_len(CHUNK)
            .map(|c| match sources[c.ct as usize] {
                Some(t) => t.validity.as_ref().map_or(1, |tv| tv[c.cell as usize]),
                None => fill.expect("checked above").fill_validity,
            })
            .collect()
    });
    Ok(FieldData {
        data,
        offsets: None,
        validity,
        cell_count: n as u64,
        ..info.empty()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hilbert_of_a_2d_grid_is_a_curve() {
        // With 2 bits per dimension, the 16 cells of a 4x4 grid get distinct values 0..16
        // and neighbours along the curve are adjacent cells.
        let mut seen = vec![None; 16];
        for x in 0..4u64 {
            for y in 0..4u64 {
                let h = coords_to_hilbert(&mut [x, y], 2) as usize;
                assert!(seen[h].is_none());
                seen[h] = Some((x as i64, y as i64));
            }
        }
        for w in seen.windows(2) {
            let (a, b) = (w[0].unwrap(), w[1].unwrap());
            assert_eq!((a.0 - b.0).abs() + (a.1 - b.1).abs(), 1);
        }
        assert_eq!(coords_to_hilbert(&mut [0, 0], 2), 0);
    }

    fn field(
        data: Vec<u8>,
        offsets: Option<Vec<u64>>,
        validity: Option<Vec<u8>>,
        n: u64,
    ) -> FieldData {
        FieldData {
            name: "f".into(),
            datatype: Datatype::Int16,
            cell_val_num: 1,
            data,
            offsets,
            validity,
            cell_count: n,
        }
    }

    #[test]
    fn adjacent_duplicates_need_every_dimension_equal() {
        let n = 40_000u64;
        let x: Vec<u8> = (0..n)
            .flat_map(|i| ((i / 2) as u16).to_le_bytes())
            .collect();
        let y_distinct: Vec<u8> = (0..n).flat_map(|i| (i as u16).to_le_bytes()).collect();
        let mut y_dup = y_distinct.clone();
        // Cells 33 334 and 33 335 share x (both 16 667) and now y.
        y_dup[2 * 33_335..2 * 33_336].copy_from_slice(&33_334u16.to_le_bytes());
        let (x, yd, yu) = (
            field(x, None, None, n),
            field(y_distinct, None, None, n),
            field(y_dup, None, None, n),
        );
        assert!(!has_adjacent_duplicates(&[&x, &yd]));
        assert!(has_adjacent_duplicates(&[&x, &yu]));
        assert!(has_adjacent_duplicates(&[&x]));
        // A var-size first dimension.
        let s = field(b"aabbb".to_vec(), Some(vec![0, 1, 2, 3, 4]), None, 5);
        assert!(has_adjacent_duplicates(&[&s]));
        let s = field(b"abcab".to_vec(), Some(vec![0, 1, 2, 3, 4]), None, 5);
        assert!(!has_adjacent_duplicates(&[&s]));
    }

    #[test]
    fn retained_cells_keep_their_order_offsets_and_validity() {
        let keep = [true, false, false, true, true, false];
        let mut f = field(
            (0u16..6).flat_map(|v| v.to_le_bytes()).collect(),
            None,
            Some(vec![1, 0, 1, 0, 1, 1]),
            6,
        );
        retain_cells(&mut f, &keep);
        assert_eq!(
            f.data,
            [0u16, 3, 4]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>()
        );
        assert_eq!(f.validity, Some(vec![1, 0, 1]));
        assert_eq!(f.cell_count, 3);
        let mut v = field(
            b"abbcccdddd".to_vec(),
            Some(vec![0, 1, 3, 6, 6, 10]),
            None,
            6,
        );
        v.data.extend_from_slice(b"ee");
        retain_cells(&mut v, &keep);
        // Cells 0, 3 (empty) and 4 of "a", "bb", "ccc", "", "dddd", "ee".
        assert_eq!(v.data, b"adddd".to_vec());
        assert_eq!(v.offsets, Some(vec![0, 1, 1]));
    }

    #[test]
    fn large_fields_compact_in_parallel_blocks_like_one_pass() {
        // 300 000 cells (the parallel copy), kept in runs of every length across blocks:
        // whole blocks dropped, whole blocks kept, single cells.
        let n = 300_000usize;
        let keep: Vec<bool> = (0..n)
            .map(|i| match i {
                20_000..40_000 => false,
                50_000..70_000 => true,
                _ => (i * 2_654_435_761) % 7 < 3,
            })
            .collect();
        let data: Vec<u8> = (0..n as u32).flat_map(|v| v.to_le_bytes()).collect();
        let validity: Vec<u8> = (0..n).map(|i| (i % 3 != 0) as u8).collect();
        let mut f = field(data.clone(), None, Some(validity.clone()), n as u64);
        retain_cells(&mut f, &keep);
        let mut want = data;
        let mut want_validity = validity;
        compact_runs(&mut want, 4, &keep);
        compact_runs(&mut want_validity, 1, &keep);
        let kept = keep.iter().filter(|k| **k).count();
        assert!(kept > 100_000 && kept < n - 20_000);
        assert_eq!(f.cell_count as usize, kept);
        assert_eq!(f.data, want);
        assert_eq!(f.validity, Some(want_validity));
    }
}
