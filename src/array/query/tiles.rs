//! Reading a query's fragment tiles one by one: per-tile metadata (sums, min/max, null
//! counts) loaded on demand, the statistics a condition prunes tiles with, a tile's fields
//! decoded, and MBR tests against multi-range subarrays.

use super::aggregate::{Accumulator, TileFacts};
use super::ranges::MultiRange;
use crate::array::condition::TileStats;
use crate::array::fragment_metadata::{FieldSlot, ListKind};
use crate::array::schema::{Range, VAR_NUM};
use crate::array::{Array, FieldData};
use crate::error::Result;
use crate::format::datatype::Datatype;
use std::collections::HashMap;

/// One field's per-tile metadata in one fragment.
pub(crate) struct FieldTiles {
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
pub(crate) struct MetaCache<'a> {
    array: &'a Array,
    loaded: HashMap<(usize, String), Option<FieldTiles>>,
}

impl<'a> MetaCache<'a> {
    /// An empty cache over `array`.
    pub(crate) fn new(array: &'a Array) -> MetaCache<'a> {
        MetaCache {
            array,
            loaded: HashMap::new(),
        }
    }

    /// The statistics of field `name` over tile `t` (`cells` cells) of fragment `fi` for
    /// condition pruning: dimensions from the tile's MBR, attributes from the fragment's
    /// tile min/max (where TileDB writes them: one value per cell, or ASCII strings) and null
    /// counts; `None` when nothing is known.
    pub(crate) fn condition_stats(
        &mut self,
        fi: usize,
        t: u64,
        cells: u64,
        name: &str,
        mbr: Option<&[Range]>,
    ) -> Option<TileStats> {
        let schema = self.array.schema();
        if let Some(j) = schema.dimension_index(name) {
            let r = mbr?.get(j)?;
            return Some(TileStats {
                min: Some(r.lo().to_vec()),
                max: Some(r.hi().to_vec()),
                null_count: Some(0),
                cell_count: cells,
            });
        }
        let a = &schema.attributes[schema.attribute_index(name)?];
        let min_max_written = if a.is_var() {
            matches!(a.datatype, Datatype::StringAscii | Datatype::Char)
        } else {
            a.cell_val_num == 1
        };
        let m = self.get(fi, name).ok()??;
        let k = t as usize;
        let (min, max) = if min_max_written {
            (m.mins.get(k).cloned(), m.maxs.get(k).cloned())
        } else {
            (None, None)
        };
        Some(TileStats {
            min,
            max,
            null_count: match &m.nulls {
                Some(n) => Some(*n.get(k)?),
                None => Some(0),
            },
            cell_count: cells,
        })
    }

    pub(crate) fn get(&mut self, fi: usize, name: &str) -> Result<Option<&FieldTiles>> {
        let k = (fi, name.to_string());
        if !self.loaded.contains_key(&k) {
            let v = field_tiles(self.array, fi, name)?;
            self.loaded.insert(k.clone(), v);
        }
        Ok(self.loaded[&k].as_ref())
    }

    /// Adds tile `tile` of fragment `fi` (`cells` cells) to every accumulator if the metadata
    /// answers them all; false (nothing added) otherwise.
    pub(crate) fn try_tile(
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

/// Attribute `name`'s tile `t` (`cells` cells) read with `reader` (`None`: the fragment
/// predates the attribute, its cells hold the fill value); with `runs` (cell ranges) only
/// the filter chunks holding those cells are unfiltered (the other cells mean nothing, see
/// [`TileReader::decode_cells`](crate::array::read::tiles::TileReader::decode_cells)). With
/// the bytes unfiltered.
pub(crate) fn attribute_tile(
    array: &Array,
    reader: Option<&crate::array::read::tiles::TileReader<'_>>,
    name: &str,
    t: u64,
    cells: u64,
    runs: Option<&[std::ops::Range<u64>]>,
) -> Result<(FieldData, u64)> {
    let schema = array.schema();
    let i = schema
        .attribute_index(name)
        .expect("query fields are checked");
    let a = &schema.attributes[i];
    // The bytes unfiltered when only some chunks were (else those of the field).
    let mut bytes = None;
    let (data, offsets, validity) = match reader {
        Some(r) => {
            let tile = match runs {
                Some(runs) => {
                    let (tile, done) = r.decode_cells(t, runs)?;
                    bytes = Some(done);
                    tile
                }
                None => r.decode(t)?,
            };
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
    let f = FieldData {
        name: name.into(),
        datatype: a.datatype,
        cell_val_num: a.cell_val_num,
        data,
        offsets,
        validity,
        cell_count: cells,
    };
    let bytes = bytes.unwrap_or_else(|| decoded_bytes(&f));
    Ok((f, bytes))
}

/// Whether an MBR meets some cell of the ranges (per dimension, one of its ranges).
pub(crate) fn overlaps(array: &Array, mbr: &[Range], mr: &MultiRange) -> bool {
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

/// The bytes of a decoded field: data, offsets (8 bytes each) and validity.
pub(crate) fn decoded_bytes(f: &FieldData) -> u64 {
    (f.data.len()
        + f.offsets.as_ref().map_or(0, |o| o.len() * 8)
        + f.validity.as_ref().map_or(0, Vec::len)) as u64
}
