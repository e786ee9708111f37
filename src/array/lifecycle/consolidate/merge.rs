//! The sparse merge of a fragments consolidation: the cells of the merged fragments in
//! TileDB's global order, streamed tile by tile from each fragment (one decoded tile per
//! field and fragment in memory) into the writer in batches of at most `buffer_size` bytes
//! per field.
//!
//! As TileDB's reader in consolidation-with-timestamps mode: nothing is de-duplicated (older
//! values stay for reads at older timestamps), each cell carries its timestamp (per-cell
//! `t.tdb` of an already consolidated fragment, else its fragment's start), and equal
//! coordinates come newest first: by (timestamp, fragment order) descending when the array
//! does not allow duplicates, by fragment order descending when it does.
//!
//! With [`Deletes::Purge`] (`sm.consolidation.purge_deleted_cells`), the cells the delete
//! commits of the open range delete are left out (each cell version judged on its own values,
//! as TileDB's consolidation reader does), and so are the cells a merged fragment's delete
//! metadata (`dt.tdb`) marks deleted. With [`Deletes::Meta`] (no purge, deletes apply) every
//! cell stays and carries delete metadata, as TileDB's consolidation without purge writes it:
//! the timestamp and the index (in the open range's delete commits, which the new fragment
//! lists as processed) of the first delete, in that order, that applies to the cell and whose
//! condition fails on it, `u64::MAX` for both when none does; a cell of a fragment with delete
//! metadata keeps its recorded delete unless a newly applied one is earlier (its index
//! translated through the fragment's processed conditions).

use crate::array::condition::{Column, evaluate};
use crate::array::order::hilbert::{coords_to_hilbert, hilbert_bits, map_to_uint64};
use crate::array::order::{Kind, tile_index};
use crate::array::read::deletes::{Delete, Scope, scopes};
use crate::array::read::tiles::{DecodedTile, TileField, TileReader};
use crate::array::schema::{ArraySchema, Layout, VAR_NUM};
use crate::array::write::Writer;
use crate::array::{Array, Fragment};
use crate::error::Result;
use std::cmp::Ordering;

/// One merged fragment's position: its current tile of every field.
struct Source<'a> {
    frag: &'a Fragment,
    /// Attributes of the latest schema (`None`: the fragment predates it), then dimensions.
    readers: Vec<Option<TileReader<'a>>>,
    timestamps: Option<TileReader<'a>>,
    /// Purging or delete metadata: the fragment's delete timestamps (`dt.tdb`), when it has
    /// them.
    delete_timestamps: Option<TileReader<'a>>,
    /// Delete metadata: the fragment's delete-condition indices (`dci.tdb`), when it has them.
    delete_indices: Option<TileReader<'a>>,
    /// Delete metadata: the fragment's processed conditions as indices of the deletes
    /// (TileDB's map lookup: 0 for a marker no longer among them).
    index_map: Vec<u64>,
    /// Purging or delete metadata: the scope of each delete in this fragment.
    scopes: Vec<Scope>,
    next_tile: u64,
    tiles: Vec<DecodedTile>,
    stamps: Vec<u64>,
    /// Purging: the cells of the current tile left out.
    gone: Vec<bool>,
    /// Delete metadata: the current tile's per-cell delete timestamps and indices.
    meta_dt: Vec<u64>,
    meta_dci: Vec<u64>,
    hilbert: Vec<u64>,
    /// The current tile's cells' order keys ([`Order::words`] per cell), when every cell has
    /// one.
    keys: Option<Vec<u64>>,
    pos: usize,
    len: usize,
}

/// A field's output batch.
#[derive(Default)]
struct Out {
    data: Vec<u8>,
    offsets: Vec<u64>,
    validity: Vec<u8>,
}

/// The comparison of cells in TileDB's global order.
struct Order<'s> {
    schema: &'s ArraySchema,
    tile_dims: Vec<usize>,
    cell_dims: Vec<usize>,
    hilbert: bool,
    /// The words of a cell's order key (tile indices, then coordinates as order words), whose
    /// lexicographic order is [`Order::cmp_cells`]'s: `None` when a dimension has no order
    /// word (strings) or the cell order is Hilbert.
    words: Option<Vec<Word<'s>>>,
}

/// One word of a cell's order key.
#[derive(Clone, Copy)]
enum Word<'s> {
    /// The space tile index on dimension `d` (domain low end, extent).
    Tile(usize, Kind, &'s [u8], &'s [u8]),
    /// Dimension `d`'s coordinate as an order word.
    Coord(usize, Kind),
}

impl<'s> Order<'s> {
    fn new(schema: &'s ArraySchema) -> Order<'s> {
        let n = schema.dimensions.len();
        let dims = |l: Layout| -> Vec<usize> {
            if l == Layout::ColMajor {
                (0..n).rev().collect()
            } else {
                (0..n).collect()
            }
        };
        let hilbert = schema.cell_order == Layout::Hilbert;
        let tile_dims = dims(schema.tile_order);
        let cell_dims = dims(if hilbert {
            Layout::RowMajor
        } else {
            schema.cell_order
        });
        let kind = |d: usize| {
            let dim = &schema.dimensions[d];
            Kind::fixed(dim.datatype)
                .filter(|k| !dim.is_var() && dim.coord_size() == Some(k.size()))
        };
        let words = (!hilbert)
            .then(|| {
                let mut words = Vec::new();
                for &d in &tile_dims {
                    let dim = &schema.dimensions[d];
                    // As cmp_cells: a dimension without a tiling adds no tile index.
                    if let (Some((lo, _)), Some(e), false) =
                        (&dim.domain, &dim.tile_extent, dim.is_var())
                    {
                        let k = kind(d)?;
                        if lo.len() < k.size() || e.len() < k.size() {
                            return None;
                        }
                        words.push(Word::Tile(d, k, lo, e));
                    }
                }
                for &d in &cell_dims {
                    words.push(Word::Coord(d, kind(d)?));
                }
                Some(words)
            })
            .flatten();
        Order {
            schema,
            tile_dims,
            cell_dims,
            hilbert,
            words,
        }
    }

    /// The order keys of a source's current tile (`None`: a NaN coordinate, which compares
    /// equal to everything in [`Order::cmp_cells`] and has no word).
    fn keys(&self, tiles: &[DecodedTile], cells: usize) -> Option<Vec<u64>> {
        let words = self.words.as_ref()?;
        let a = self.schema.attributes.len();
        let mut keys = Vec::with_capacity(words.len() * cells);
        for c in 0..cells {
            for w in words {
                keys.push(match *w {
                    Word::Tile(d, k, lo, e) => k.tile_index(tiles[a + d].cell(c, k.size()), lo, e),
                    Word::Coord(d, k) => {
                        let v = tiles[a + d].cell(c, k.size());
                        if k.is_float() && k.float(v).is_nan() {
                            return None;
                        }
                        k.order_word(v)
                    }
                });
            }
        }
        Some(keys)
    }

    fn coord<'t>(&self, s: &'t Source<'_>, d: usize) -> &'t [u8] {
        let a = self.schema.attributes.len();
        let size = self.schema.dimensions[d].coord_size().unwrap_or(0);
        s.tiles[a + d].cell(s.pos, size)
    }

    fn cmp_cells(&self, x: &Source<'_>, y: &Source<'_>) -> Ordering {
        if let (Some(kx), Some(ky), Some(words)) = (&x.keys, &y.keys, &self.words) {
            let n = words.len();
            return kx[x.pos * n..(x.pos + 1) * n].cmp(&ky[y.pos * n..(y.pos + 1) * n]);
        }
        if self.hilbert {
            let o = x.hilbert[x.pos].cmp(&y.hilbert[y.pos]);
            if o != Ordering::Equal {
                return o;
            }
        } else {
            for &d in &self.tile_dims {
                let dim = &self.schema.dimensions[d];
                if let (Some((lo, _)), Some(e), false) =
                    (&dim.domain, &dim.tile_extent, dim.is_var())
                {
                    let tx = tile_index(dim.datatype, self.coord(x, d), lo, e);
                    let ty = tile_index(dim.datatype, self.coord(y, d), lo, e);
                    if tx != ty {
                        return tx.cmp(&ty);
                    }
                }
            }
        }
        for &d in &self.cell_dims {
            let dim = &self.schema.dimensions[d];
            let (a, b) = (self.coord(x, d), self.coord(y, d));
            let o = if dim.is_var() {
                a.cmp(b)
            } else {
                crate::array::order::compare(dim.datatype, a, b)
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }

    /// Whether source `i`'s cell comes before source `j`'s.
    fn before(&self, sources: &[Source<'_>], i: usize, j: usize) -> bool {
        match self.cmp_cells(&sources[i], &sources[j]) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal if self.schema.allows_dups => i > j,
            Ordering::Equal => {
                let (a, b) = (&sources[i], &sources[j]);
                (a.stamps[a.pos], i) > (b.stamps[b.pos], j)
            }
        }
    }
}

impl<'a> Source<'a> {
    fn new(array: &'a Array, frag: &'a Fragment, deletes: Deletes<'_>) -> Result<Source<'a>> {
        let schema = array.schema();
        let mut readers = Vec::new();
        let fi = array
            .fragments()
            .iter()
            .position(|f| std::ptr::eq(f, frag))
            .expect("a fragment of the array");
        for i in 0..schema.attributes.len() {
            readers.push(array.tile_reader_field(fi, TileField::Attribute(i))?);
        }
        for j in 0..schema.dimensions.len() {
            readers.push(array.tile_reader_field(fi, TileField::Dimension(j))?);
        }
        let timestamps = array.tile_reader_field(fi, TileField::Timestamps)?;
        let (delete_timestamps, scopes) = match deletes.list() {
            Some(deletes) => (
                array.tile_reader_field(fi, TileField::DeleteTimestamps)?,
                scopes(array, frag, deletes)?,
            ),
            None => (None, Vec::new()),
        };
        let (delete_indices, index_map) = match deletes {
            Deletes::Meta(list) if frag.meta.has_delete_meta => {
                let processed = frag
                    .meta
                    .processed_conditions(array.key())
                    .map_err(|e| e.context(format!("fragment {}", frag.name())))?;
                (
                    array.tile_reader_field(fi, TileField::DeleteConditionIndex)?,
                    processed
                        .iter()
                        .map(|m| list.iter().position(|d| &d.marker == m).unwrap_or(0) as u64)
                        .collect(),
                )
            }
            _ => (None, Vec::new()),
        };
        Ok(Source {
            frag,
            readers,
            timestamps,
            delete_timestamps,
            delete_indices,
            index_map,
            scopes,
            next_tile: 0,
            tiles: Vec::new(),
            stamps: Vec::new(),
            gone: Vec::new(),
            meta_dt: Vec::new(),
            meta_dci: Vec::new(),
            hilbert: Vec::new(),
            keys: None,
            pos: 0,
            len: 0,
        })
    }

    /// For each cell of the current tile, the first of `deletes` (in their order) whose scope
    /// covers the cell and whose keep condition fails on it.
    fn first_deletes(
        &self,
        schema: &ArraySchema,
        deletes: &[Delete],
    ) -> Result<Vec<Option<usize>>> {
        let cells = self.len;
        let mut first = vec![None; cells];
        let a = schema.attributes.len();
        let tiles = &self.tiles;
        let column = |name: &str| {
            let k = match schema.attribute_index(name) {
                Some(i) => i,
                None => a + schema.dimension_index(name)?,
            };
            Some(Column {
                data: &tiles[k].data,
                offsets: tiles[k].offsets.as_deref(),
                validity: tiles[k].validity.as_deref(),
            })
        };
        for (i, (d, scope)) in deletes.iter().zip(&self.scopes).enumerate() {
            if *scope == Scope::Nothing {
                continue;
            }
            let keep = evaluate(&d.keep, schema, cells, &column)
                .map_err(|e| e.context(format!("delete commit {}", d.marker)))?;
            for (c, k) in keep.iter().enumerate() {
                if !k && first[c].is_none() && scope.covers(Some(self.stamps[c])) {
                    first[c] = Some(i);
                }
            }
        }
        Ok(first)
    }

    /// Marks the cells of the current tile that purging leaves out: deleted by a delete
    /// whose scope covers them, or by the fragment's delete metadata at or before `end`.
    fn mark_gone(&mut self, schema: &ArraySchema, deletes: &[Delete], end: u64) -> Result<()> {
        let cells = self.len;
        self.gone = match &self.delete_timestamps {
            Some(r) => r
                .decode_u64(self.next_tile - 1)?
                .iter()
                .map(|d| *d <= end)
                .collect(),
            None => vec![false; cells],
        };
        for (c, f) in self.first_deletes(schema, deletes)?.into_iter().enumerate() {
            self.gone[c] |= f.is_some();
        }
        Ok(())
    }

    /// Computes the current tile's delete metadata (see the module documentation).
    fn mark_meta(&mut self, schema: &ArraySchema, deletes: &[Delete]) -> Result<()> {
        let first = self.first_deletes(schema, deletes)?;
        let computed = first.iter().map(|f| match f {
            Some(i) => (deletes[*i].timestamp, *i as u64),
            None => (u64::MAX, u64::MAX),
        });
        let tile = self.next_tile - 1;
        let recorded = match (&self.delete_timestamps, &self.delete_indices) {
            (Some(t), Some(i)) => Some((t.decode_u64(tile)?, i.decode_u64(tile)?)),
            _ => None,
        };
        self.meta_dt.clear();
        self.meta_dci.clear();
        for (c, (ts, idx)) in computed.enumerate() {
            let (ts, idx) = match &recorded {
                Some((dt, dci)) if ts >= dt[c] => {
                    let converted = if dci[c] == u64::MAX {
                        u64::MAX
                    } else {
                        self.index_map.get(dci[c] as usize).copied().unwrap_or(0)
                    };
                    (dt[c], converted)
                }
                _ => (ts, idx),
            };
            self.meta_dt.push(ts);
            self.meta_dci.push(idx);
        }
        Ok(())
    }

    /// Loads the next tile (with its cells' order keys); `false` when the fragment is
    /// exhausted.
    fn load(&mut self, schema: &ArraySchema, order: &Order<'_>) -> Result<bool> {
        let meta = &self.frag.meta;
        while self.next_tile < meta.tile_num() {
            let t = self.next_tile;
            self.next_tile += 1;
            let cells = meta.cell_num_of_tile(t) as usize;
            if cells == 0 {
                continue;
            }
            self.tiles.clear();
            for (k, r) in self.readers.iter().enumerate() {
                self.tiles.push(match r {
                    Some(r) => r.decode(t)?,
                    None => fill_tile(schema, k, cells),
                });
            }
            self.stamps = match &self.timestamps {
                Some(r) => r.decode_u64(t)?,
                None => vec![self.frag.timestamps().0; cells],
            };
            if schema.cell_order == Layout::Hilbert {
                let bits = hilbert_bits(schema.dimensions.len())?;
                let a = schema.attributes.len();
                let mut x = vec![0u64; schema.dimensions.len()];
                self.hilbert = (0..cells)
                    .map(|c| {
                        for (j, d) in schema.dimensions.iter().enumerate() {
                            let coord = self.tiles[a + j].cell(c, d.coord_size().unwrap_or(0));
                            x[j] = map_to_uint64(d, coord, bits)?;
                        }
                        Ok(coords_to_hilbert(&mut x, bits))
                    })
                    .collect::<Result<_>>()?;
            }
            self.keys = order.keys(&self.tiles, cells);
            self.pos = 0;
            self.len = cells;
            return Ok(true);
        }
        Ok(false)
    }
}

/// A tile of `cells` fill values of attribute `k` (a fragment written before it existed).
fn fill_tile(schema: &ArraySchema, k: usize, cells: usize) -> DecodedTile {
    let a = &schema.attributes[k];
    let v = &a.fill_value;
    let mut data = Vec::with_capacity(v.len() * cells);
    let mut offsets = Vec::new();
    for _ in 0..cells {
        if a.cell_val_num == VAR_NUM {
            offsets.push(data.len() as u64);
        }
        data.extend_from_slice(v);
    }
    DecodedTile {
        data,
        offsets: (a.cell_val_num == VAR_NUM).then_some(offsets),
        validity: a.nullable.then(|| vec![a.fill_validity; cells]),
        cells: cells as u64,
    }
}

/// Min-heap of source indices under `order`.
fn sift_down(heap: &mut [usize], mut i: usize, order: &Order<'_>, sources: &[Source<'_>]) {
    loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let mut m = i;
        if l < heap.len() && order.before(sources, heap[l], heap[m]) {
            m = l;
        }
        if r < heap.len() && order.before(sources, heap[r], heap[m]) {
            m = r;
        }
        if m == i {
            return;
        }
        heap.swap(i, m);
        i = m;
    }
}

/// What a merge does with delete commits.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Deletes<'d> {
    /// Nothing (none applies, or the purge finds nothing to purge).
    Ignore,
    /// Leaves out the cells these deletes (or the fragments' delete metadata) delete.
    Purge(&'d [Delete]),
    /// Keeps every cell and writes delete metadata for these deletes (the writer is set up
    /// with [`crate::array::write::Consolidation::delete_meta`]).
    Meta(&'d [Delete]),
}

impl<'d> Deletes<'d> {
    fn list(self) -> Option<&'d [Delete]> {
        match self {
            Deletes::Ignore => None,
            Deletes::Purge(d) | Deletes::Meta(d) => Some(d),
        }
    }
}

/// Merges the cells of every fragment of `array` into `writer` (set up for a consolidation
/// with per-cell timestamps), submitting a batch whenever a field's buffer reaches
/// `buffer_size` bytes, doing with delete commits what `deletes` says.
pub(crate) fn run(
    array: &Array,
    writer: &mut Writer,
    buffer_size: u64,
    deletes: Deletes<'_>,
) -> Result<u64> {
    let purge = match deletes {
        Deletes::Purge(d) => Some(d),
        _ => None,
    };
    let meta = match deletes {
        Deletes::Meta(d) => Some(d),
        _ => None,
    };
    let schema = array.schema();
    let order = Order::new(schema);
    let end = array.timestamps().1;
    let mut sources = Vec::new();
    for f in array.fragments() {
        sources.push(Source::new(array, f, deletes)?);
    }
    let load = |s: &mut Source<'_>| -> Result<bool> {
        if !s.load(schema, &order)? {
            return Ok(false);
        }
        if let Some(deletes) = purge {
            s.mark_gone(schema, deletes, end)?;
        }
        if let Some(deletes) = meta {
            s.mark_meta(schema, deletes)?;
        }
        Ok(true)
    };
    let advance = |s: &mut Source<'_>| -> Result<bool> {
        s.pos += 1;
        if s.pos < s.len {
            return Ok(true);
        }
        load(s)
    };
    let mut heap = Vec::new();
    for (i, s) in sources.iter_mut().enumerate() {
        if load(s)? {
            heap.push(i);
        }
    }
    for i in (0..heap.len() / 2).rev() {
        sift_down(&mut heap, i, &order, &sources);
    }
    let nf = schema.attributes.len() + schema.dimensions.len();
    let mut outs: Vec<Out> = (0..nf).map(|_| Out::default()).collect();
    let mut stamps: Vec<u64> = Vec::new();
    let mut dmeta: Option<(Vec<u64>, Vec<u64>)> = meta.map(|_| (Vec::new(), Vec::new()));
    let sizes: Vec<Option<usize>> = schema
        .attributes
        .iter()
        .map(|a| a.cell_size())
        .chain(schema.dimensions.iter().map(|d| d.coord_size()))
        .collect();
    let limit = buffer_size.max(1) as usize;
    let mut total = 0u64;
    // Purging without duplicates: the coordinates of the last cell and whether a version of
    // them was deleted (the older versions, coming after it, go too).
    let mut prev: Option<(Vec<Vec<u8>>, bool)> = None;
    let a = schema.attributes.len();
    while let Some(&top) = heap.first() {
        let s = &sources[top];
        let mut full = false;
        let mut gone = s.gone.get(s.pos).copied().unwrap_or(false);
        if purge.is_some() && !schema.allows_dups {
            let coords = || -> Vec<Vec<u8>> {
                schema
                    .dimensions
                    .iter()
                    .enumerate()
                    .map(|(j, d)| {
                        s.tiles[a + j]
                            .cell(s.pos, d.coord_size().unwrap_or(0))
                            .to_vec()
                    })
                    .collect()
            };
            match &mut prev {
                Some((p, deleted))
                    if p.iter().enumerate().all(|(j, v)| {
                        v.as_slice()
                            == s.tiles[a + j]
                                .cell(s.pos, schema.dimensions[j].coord_size().unwrap_or(0))
                    }) =>
                {
                    gone |= *deleted;
                    *deleted = gone;
                }
                _ => prev = Some((coords(), gone)),
            }
        }
        if gone {
            if advance(&mut sources[top])? {
                sift_down(&mut heap, 0, &order, &sources);
            } else {
                let last = heap.len() - 1;
                heap.swap(0, last);
                heap.pop();
                sift_down(&mut heap, 0, &order, &sources);
            }
            continue;
        }
        for (k, out) in outs.iter_mut().enumerate() {
            let t = &s.tiles[k];
            if sizes[k].is_none() {
                out.offsets.push(out.data.len() as u64);
            }
            out.data
                .extend_from_slice(t.cell(s.pos, sizes[k].unwrap_or(0)));
            if let Some(v) = &t.validity {
                out.validity.push(v[s.pos]);
            }
            full |= out.data.len() >= limit || out.offsets.len() * 8 >= limit;
        }
        stamps.push(s.stamps[s.pos]);
        if let Some((dt, dci)) = dmeta.as_mut() {
            dt.push(s.meta_dt[s.pos]);
            dci.push(s.meta_dci[s.pos]);
        }
        full |= stamps.len() * 8 >= limit;
        total += 1;
        if advance(&mut sources[top])? {
            sift_down(&mut heap, 0, &order, &sources);
        } else {
            let last = heap.len() - 1;
            heap.swap(0, last);
            heap.pop();
            sift_down(&mut heap, 0, &order, &sources);
        }
        if full {
            submit(writer, schema, &mut outs, &mut stamps, dmeta.as_mut())?;
        }
    }
    if !stamps.is_empty() {
        submit(writer, schema, &mut outs, &mut stamps, dmeta.as_mut())?;
    }
    Ok(total)
}

fn submit(
    writer: &mut Writer,
    schema: &ArraySchema,
    outs: &mut [Out],
    stamps: &mut Vec<u64>,
    delete_meta: Option<&mut (Vec<u64>, Vec<u64>)>,
) -> Result<()> {
    let names = schema
        .attributes
        .iter()
        .map(|a| (a.name.as_str(), a.is_var(), a.nullable))
        .chain(
            schema
                .dimensions
                .iter()
                .map(|d| (d.name.as_str(), d.is_var(), false)),
        );
    for ((name, var, nullable), out) in names.zip(outs.iter_mut()) {
        let out = std::mem::take(out);
        writer.set_data_owned(name, out.data)?;
        if var {
            writer.set_offsets_owned(name, out.offsets)?;
        }
        if nullable {
            writer.set_validity(name, &out.validity)?;
        }
    }
    let ts: Vec<u8> = stamps.iter().flat_map(|t| t.to_le_bytes()).collect();
    stamps.clear();
    writer.set_data_owned(crate::array::write::fragment::TIMESTAMPS, ts)?;
    if let Some((dt, dci)) = delete_meta {
        let bytes = |v: &mut Vec<u64>| -> Vec<u8> {
            let b = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            v.clear();
            b
        };
        use crate::array::write::fragment::{DELETE_CONDITION_INDEX, DELETE_TIMESTAMPS};
        writer.set_data_owned(DELETE_TIMESTAMPS, bytes(dt))?;
        writer.set_data_owned(DELETE_CONDITION_INDEX, bytes(dci))?;
    }
    writer.submit()
}
