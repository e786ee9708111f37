//! Fragment metadata (docs/ARRAY.md §4): the footer of `__fragment_metadata.tdb` and the generic
//! tiles it points to (tile offsets, var offsets and sizes, validity offsets, R-tree, tile and
//! fragment min/max/sum/null counts, processed delete conditions), for fragment format
//! versions 5 to 22 (TileDB 2.0 to 2.30).
//!
//! The footer is parsed at load; every generic tile is decoded on first use, so a damaged
//! section fails only the reads that need it.

use crate::array::directory::{FragmentDir, names};
use crate::array::geometry::{Grid, cube_of};
use crate::array::rtree::{self, RTree};
use crate::array::schema::{ArraySchema, Range};
use crate::error::{Error, Result};
use crate::format::byte_reader::ByteReader;
use crate::format::datatype::Datatype;
use crate::pipeline::generic_tile;
use crate::storage::{Storage, Uri};
use std::sync::OnceLock;

/// The oldest fragment format version read (TileDB 2.0).
pub const MIN_FRAGMENT_VERSION: u32 = 5;
/// The newest fragment format version read (TileDB 2.30): the version it writes.
pub const MAX_FRAGMENT_VERSION: u32 = crate::format::format_version::FORMAT_VERSION;

/// The kinds of per-field lists in the metadata file, in file order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListKind {
    /// Byte offsets of the fixed (or offsets) tiles in the data file.
    TileOffsets = 0,
    /// Byte offsets of the var tiles in the `_var` file.
    TileVarOffsets = 1,
    /// Unfiltered sizes of the var tiles.
    TileVarSizes = 2,
    /// Byte offsets of the validity tiles in the `_validity` file.
    TileValidityOffsets = 3,
    /// Tile null counts (nullable attributes, v11+).
    TileNullCounts = 4,
}

/// A field's tile mins or maxes: fixed-size values (or u64 offsets into `var` for var-size
/// strings) and the var-size bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TileMinMax {
    /// Fixed-size part.
    pub fixed: Vec<u8>,
    /// Var-size part.
    pub var: Vec<u8>,
}

/// A field's fragment-level min, max, sum and null count (v12+).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSummary {
    /// Minimum value bytes (empty when not computed).
    pub min: Vec<u8>,
    /// Maximum value bytes (empty when not computed).
    pub max: Vec<u8>,
    /// Sum (int64, uint64 or double bytes by type).
    pub sum: [u8; 8],
    /// Null count.
    pub null_count: u64,
}

/// Offsets of the generic tiles inside the metadata file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct TileOffsets {
    rtree: u64,
    lists: [Vec<u64>; 4],
    mins: Vec<u64>,
    maxs: Vec<u64>,
    sums: Vec<u64>,
    null_counts: Vec<u64>,
    fragment_summary: Option<u64>,
    processed_conditions: Option<u64>,
}

/// A field of a fragment: where its data lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldSlot {
    /// Attribute `i` of the fragment's schema.
    Attribute(usize),
    /// Dimension `j`.
    Dimension(usize),
    /// Per-cell timestamps of consolidated sparse fragments (`t.tdb`).
    Timestamps,
    /// Per-cell delete timestamps (`dt.tdb`).
    DeleteTimestamps,
    /// Per-cell delete-condition indices (`dci.tdb`).
    DeleteConditionIndex,
}

/// The metadata of one fragment, parsed with the fragment's own schema.
#[derive(Debug)]
pub struct FragmentMetadata {
    /// The fragment folder and name.
    pub dir: FragmentDir,
    /// Format version from the footer.
    pub version: u32,
    /// Name of the fragment's schema in `__schema/` (`__array_schema.tdb` before v10).
    pub schema_name: String,
    /// Whether the fragment is dense.
    pub dense: bool,
    /// Non-empty domain, one range per dimension (`None` when the footer says null).
    pub non_empty_domain: Option<Vec<Range>>,
    /// Sparse tiles (0 for dense fragments).
    pub sparse_tile_num: u64,
    /// Cells in the last sparse tile.
    pub last_tile_cell_num: u64,
    /// Whether per-cell timestamps (`t.tdb`) exist.
    pub has_timestamps: bool,
    /// Whether delete metadata (`dt.tdb`, `dci.tdb`) exists.
    pub has_delete_meta: bool,
    /// Bytes of each slot's data file (offsets file for var fields).
    pub file_sizes: Vec<u64>,
    /// Bytes of each slot's `_var` file.
    pub file_var_sizes: Vec<u64>,
    /// Bytes of each slot's `_validity` file (v7+).
    pub file_validity_sizes: Vec<u64>,
    /// Offset of the footer in the metadata file.
    pub footer_offset: u64,
    /// Bytes of the footer.
    pub footer_size: u64,
    attribute_num: usize,
    dim_num: usize,
    tile_num: u64,
    cells_per_dense_tile: u64,
    capacity: u64,
    gt: TileOffsets,
    bytes: Vec<u8>,
    lists: Vec<[OnceLock<Vec<u64>>; 5]>,
    mbrs: OnceLock<Vec<Vec<Range>>>,
}

/// Decodes the generic tile at `offset` of the metadata bytes.
fn generic_at(bytes: &[u8], offset: u64, key: Option<&[u8]>, what: &str) -> Result<Vec<u8>> {
    let start = usize::try_from(offset)
        .ok()
        .filter(|o| *o <= bytes.len())
        .ok_or_else(|| Error::corrupt(format!("{what}: offset {offset} is past the file end")))?;
    let (_, tile, _) =
        generic_tile::read(&bytes[start..], key).map_err(|e| e.context(what.to_string()))?;
    Ok(tile.into_data())
}

fn u64_list(payload: &[u8], what: &str) -> Result<Vec<u64>> {
    let mut r = ByteReader::new(payload, "u64 list");
    let n = r.u64()?;
    let n = usize::try_from(n)
        .ok()
        .filter(|n| n.checked_mul(8).is_some_and(|b| b <= r.remaining()))
        .ok_or_else(|| Error::corrupt(format!("{what}: {n} entries do not fit")))?;
    (0..n).map(|_| r.u64()).collect()
}

fn u64s(r: &mut ByteReader<'_>, n: usize) -> Result<Vec<u64>> {
    (0..n).map(|_| r.u64()).collect()
}

impl FragmentMetadata {
    /// Loads the footer of the fragment in `dir`. `schema_of` gives the schema a footer names
    /// (`__array_schema.tdb` for fragments before v10).
    pub fn load<'s>(
        storage: &Storage,
        dir: &FragmentDir,
        schema_of: impl Fn(&str) -> Option<&'s ArraySchema>,
    ) -> Result<FragmentMetadata> {
        let path = dir.path.join(names::FRAGMENT_METADATA_FILE);
        let bytes = storage.read(&path)?;
        Self::parse(dir, bytes, schema_of)
            .map_err(|e| e.context(format!("fragment {}", dir.name.name)))
    }

    fn parse<'s>(
        dir: &FragmentDir,
        bytes: Vec<u8>,
        schema_of: impl Fn(&str) -> Option<&'s ArraySchema>,
    ) -> Result<FragmentMetadata> {
        let name_version = dir.name.name_version;
        if name_version < MIN_FRAGMENT_VERSION {
            return Err(Error::Unsupported(format!(
                "fragment format version {name_version} (TileDB before 2.0)"
            )));
        }
        let (footer_offset, footer_size) = if name_version < 10 {
            let schema = schema_of(names::LEGACY_SCHEMA_FILE).ok_or_else(|| {
                Error::corrupt(format!("the array has no {}", names::LEGACY_SCHEMA_FILE))
            })?;
            if schema.dimensions.iter().any(|d| d.is_var()) {
                stored_footer_extent(&bytes)?
            } else {
                let size = computed_footer_size(schema, name_version);
                let off = (bytes.len() as u64).checked_sub(size).ok_or_else(|| {
                    Error::corrupt("the metadata file is shorter than its footer")
                })?;
                (off, size)
            }
        } else {
            stored_footer_extent(&bytes)?
        };
        let footer = &bytes[footer_offset as usize..(footer_offset + footer_size) as usize];
        let mut r = ByteReader::new(footer, "fragment footer");
        let version = r.u32()?;
        if !(MIN_FRAGMENT_VERSION..=MAX_FRAGMENT_VERSION).contains(&version) {
            return Err(Error::Unsupported(format!(
                "fragment format version {version} (this reader reads {MIN_FRAGMENT_VERSION} to \
                 {MAX_FRAGMENT_VERSION})"
            )));
        }
        let schema_name = if version >= 10 {
            let n = r.u64()?;
            let n = usize::try_from(n).map_err(|_| Error::corrupt("schema name size"))?;
            if n == 0 {
                return Err(Error::corrupt("the footer's schema name is empty"));
            }
            String::from_utf8_lossy(r.take(n)?).into_owned()
        } else {
            names::LEGACY_SCHEMA_FILE.to_string()
        };
        let schema = schema_of(&schema_name).ok_or_else(|| {
            Error::corrupt(format!(
                "the footer names schema {schema_name}, which the array lacks"
            ))
        })?;
        let dense = r.u8()? != 0;
        let non_empty_domain = if r.u8()? == 0 {
            let mut v = Vec::new();
            for d in &schema.dimensions {
                v.push(Range::read(&mut r, d.coord_size())?);
            }
            Some(v)
        } else {
            None
        };
        let sparse_tile_num = r.u64()?;
        let last_tile_cell_num = r.u64()?;
        let has_timestamps = version >= 14 && r.u8()? != 0;
        let has_delete_meta = version >= 15 && r.u8()? != 0;
        let (a, d) = (schema.attributes.len(), schema.dimensions.len());
        let num = a + 1 + d + usize::from(has_timestamps) + 2 * usize::from(has_delete_meta);
        let file_sizes = u64s(&mut r, num)?;
        let file_var_sizes = u64s(&mut r, num)?;
        let file_validity_sizes = if version >= 7 {
            u64s(&mut r, num)?
        } else {
            vec![0; num]
        };
        let mut gt = TileOffsets {
            rtree: r.u64()?,
            ..TileOffsets::default()
        };
        for (k, list) in gt.lists.iter_mut().enumerate() {
            *list = if k < 3 || version >= 7 {
                u64s(&mut r, num)?
            } else {
                Vec::new()
            };
        }
        if version >= 11 {
            gt.mins = u64s(&mut r, num)?;
            gt.maxs = u64s(&mut r, num)?;
            gt.sums = u64s(&mut r, num)?;
            gt.null_counts = u64s(&mut r, num)?;
        }
        if version >= 12 {
            gt.fragment_summary = Some(r.u64()?);
        }
        if version >= 16 {
            gt.processed_conditions = Some(r.u64()?);
        }
        if r.remaining() != 0 {
            return Err(Error::corrupt(format!(
                "{} bytes follow the fields of the {footer_size}-byte footer",
                r.remaining()
            )));
        }
        let cells_per_dense_tile = if dense { schema.cells_per_tile()? } else { 0 };
        let mut m = FragmentMetadata {
            dir: dir.clone(),
            version,
            schema_name,
            dense,
            non_empty_domain,
            sparse_tile_num,
            last_tile_cell_num,
            has_timestamps,
            has_delete_meta,
            file_sizes,
            file_var_sizes,
            file_validity_sizes,
            footer_offset,
            footer_size,
            attribute_num: a,
            dim_num: d,
            tile_num: sparse_tile_num,
            cells_per_dense_tile,
            capacity: schema.capacity,
            gt,
            bytes,
            lists: (0..num).map(|_| Default::default()).collect(),
            mbrs: OnceLock::new(),
        };
        if dense {
            m.tile_num = m.dense_tile_num(schema)?;
        }
        Ok(m)
    }

    /// Dense: the number of space tiles intersecting the non-empty domain.
    fn dense_tile_num(&self, schema: &ArraySchema) -> Result<u64> {
        let ned = self
            .non_empty_domain
            .as_ref()
            .ok_or_else(|| Error::corrupt("a dense fragment without a non-empty domain"))?;
        Grid::new(schema)?.tile_count(&cube_of(schema, ned)?)
    }

    /// Number of tiles of every field.
    pub fn tile_num(&self) -> u64 {
        self.tile_num
    }

    /// Cells in tile `i`.
    pub fn cell_num_of_tile(&self, i: u64) -> u64 {
        if self.dense {
            self.cells_per_dense_tile
        } else if i + 1 == self.tile_num {
            self.last_tile_cell_num
        } else {
            self.capacity
        }
    }

    /// Cells in the fragment (dense: including padding of edge tiles).
    pub fn cell_num(&self) -> u64 {
        if self.tile_num == 0 {
            0
        } else if self.dense {
            self.tile_num * self.cells_per_dense_tile
        } else {
            (self.tile_num - 1) * self.capacity + self.last_tile_cell_num
        }
    }

    /// The fragment's format version decides file names; this is the slot of `field`.
    pub fn slot(&self, field: FieldSlot) -> Option<usize> {
        let base = self.attribute_num + 1 + self.dim_num;
        let slot = match field {
            FieldSlot::Attribute(i) if i < self.attribute_num => i,
            FieldSlot::Dimension(j) if j < self.dim_num => self.attribute_num + 1 + j,
            FieldSlot::Timestamps if self.has_timestamps => base,
            FieldSlot::DeleteTimestamps if self.has_delete_meta => {
                base + usize::from(self.has_timestamps)
            }
            FieldSlot::DeleteConditionIndex if self.has_delete_meta => {
                base + usize::from(self.has_timestamps) + 1
            }
            _ => return None,
        };
        Some(slot)
    }

    /// The base file name (without `.tdb`) of `field`, whose name in the fragment's schema
    /// is `name`: `a<i>`/`d<j>` from v9, the percent-encoded name in v8, the name before.
    pub fn file_stem(&self, field: FieldSlot, name: &str) -> String {
        match field {
            FieldSlot::Timestamps => return "t".into(),
            FieldSlot::DeleteTimestamps => return "dt".into(),
            FieldSlot::DeleteConditionIndex => return "dci".into(),
            _ => {}
        }
        if self.version >= 9 {
            match field {
                FieldSlot::Attribute(i) => format!("a{i}"),
                FieldSlot::Dimension(j) => format!("d{j}"),
                _ => unreachable!("handled above"),
            }
        } else if self.version == 8 {
            percent_encode(name)
        } else {
            name.to_string()
        }
    }

    /// Paths of the fixed (or offsets), var and validity files of `field` named `name`.
    pub fn files(&self, field: FieldSlot, name: &str) -> [Uri; 3] {
        let stem = self.file_stem(field, name);
        let p = &self.dir.path;
        [
            p.join(format!("{stem}.tdb")),
            p.join(format!("{stem}_var.tdb")),
            p.join(format!("{stem}_validity.tdb")),
        ]
    }

    /// The list `kind` of `slot` (decoded on first use).
    pub fn list(&self, slot: usize, kind: ListKind, key: Option<&[u8]>) -> Result<&[u64]> {
        let cell = &self
            .lists
            .get(slot)
            .ok_or_else(|| Error::invalid(format!("slot {slot} out of range")))?[kind as usize];
        if let Some(v) = cell.get() {
            return Ok(v);
        }
        let offset = match kind {
            ListKind::TileNullCounts => self.gt.null_counts.get(slot).copied(),
            k => self.gt.lists[k as usize].get(slot).copied(),
        };
        let v = match offset {
            None => Vec::new(),
            Some(off) => {
                let what = format!("{kind:?} of slot {slot}");
                u64_list(&generic_at(&self.bytes, off, key, &what)?, &what)?
            }
        };
        Ok(cell.get_or_init(|| v))
    }

    /// Where tile `i` of `slot` is in a file of `file_size` bytes, given that file's tile
    /// offsets: (offset, persisted size).
    pub fn tile_extent(offsets: &[u64], i: u64, file_size: u64) -> Result<(u64, u64)> {
        let i = usize::try_from(i).map_err(|_| Error::invalid("tile index"))?;
        let off = *offsets
            .get(i)
            .ok_or_else(|| Error::corrupt(format!("tile {i}: no tile offset")))?;
        let end = offsets.get(i + 1).copied().unwrap_or(file_size);
        if end < off || end > file_size {
            return Err(Error::corrupt(format!(
                "tile {i}: offsets {off}..{end} do not fit a {file_size}-byte file"
            )));
        }
        Ok((off, end - off))
    }

    /// The R-tree's leaves: one MBR per sparse tile (empty for dense fragments).
    pub fn mbrs(&self, schema: &ArraySchema, key: Option<&[u8]>) -> Result<&[Vec<Range>]> {
        if let Some(v) = self.mbrs.get() {
            return Ok(v);
        }
        let payload = generic_at(&self.bytes, self.gt.rtree, key, "R-tree")?;
        let leaves = RTree::parse(&payload, schema)?.into_leaves();
        Ok(self.mbrs.get_or_init(|| leaves))
    }

    /// Tile mins (`max` false) or maxes (`max` true) of `slot` (v11+; empty when absent).
    pub fn tile_min_max(&self, slot: usize, max: bool, key: Option<&[u8]>) -> Result<TileMinMax> {
        let offsets = if max { &self.gt.maxs } else { &self.gt.mins };
        let Some(&off) = offsets.get(slot) else {
            return Ok(TileMinMax::default());
        };
        let payload = generic_at(&self.bytes, off, key, "tile min/max")?;
        let mut r = ByteReader::new(&payload, "tile min/max");
        let fixed = r.u64()? as usize;
        let var = r.u64()? as usize;
        Ok(TileMinMax {
            fixed: r.take(fixed)?.to_vec(),
            var: r.take(var)?.to_vec(),
        })
    }

    /// Tile sums of `slot` (v11+): 8 bytes each (int64, uint64 or double by the field's type).
    pub fn tile_sums(&self, slot: usize, key: Option<&[u8]>) -> Result<Vec<[u8; 8]>> {
        let Some(&off) = self.gt.sums.get(slot) else {
            return Ok(Vec::new());
        };
        let payload = generic_at(&self.bytes, off, key, "tile sums")?;
        Ok(u64_list(&payload, "tile sums")?
            .into_iter()
            .map(u64::to_le_bytes)
            .collect())
    }

    /// Fragment-level min, max, sum and null count of every slot (v12+; empty before).
    pub fn field_summaries(&self, key: Option<&[u8]>) -> Result<Vec<FieldSummary>> {
        let Some(off) = self.gt.fragment_summary else {
            return Ok(Vec::new());
        };
        let payload = generic_at(&self.bytes, off, key, "fragment min/max/sum/null count")?;
        let mut r = ByteReader::new(&payload, "fragment min/max/sum/null count");
        let mut out = Vec::new();
        for _ in 0..self.lists.len() {
            let n = r.u64()? as usize;
            let min = r.take(n)?.to_vec();
            let n = r.u64()? as usize;
            let max = r.take(n)?.to_vec();
            let sum = r.array::<8>()?;
            let null_count = r.u64()?;
            out.push(FieldSummary {
                min,
                max,
                sum,
                null_count,
            });
        }
        Ok(out)
    }

    /// The delete conditions already applied to this fragment by consolidation (v16+).
    pub fn processed_conditions(&self, key: Option<&[u8]>) -> Result<Vec<String>> {
        let Some(off) = self.gt.processed_conditions else {
            return Ok(Vec::new());
        };
        let payload = generic_at(&self.bytes, off, key, "processed conditions")?;
        let mut r = ByteReader::new(&payload, "processed conditions");
        let n = r.u64()?;
        let mut out = Vec::new();
        for _ in 0..n {
            let len = r.u64()? as usize;
            out.push(String::from_utf8_lossy(r.take(len)?).into_owned());
        }
        Ok(out)
    }

    /// Number of per-field slots (attributes, the legacy coords slot, dimensions, timestamps,
    /// delete metadata).
    pub fn slot_num(&self) -> usize {
        self.lists.len()
    }

    /// Offsets of every generic tile in the metadata file with a label, for integrity checks.
    pub fn generic_tile_offsets(&self) -> Vec<(String, u64)> {
        let mut v = vec![("R-tree".to_string(), self.gt.rtree)];
        let kinds = [
            "tile offsets",
            "tile var offsets",
            "tile var sizes",
            "tile validity offsets",
        ];
        for (k, list) in self.gt.lists.iter().enumerate() {
            for (s, o) in list.iter().enumerate() {
                v.push((format!("{} of slot {s}", kinds[k]), *o));
            }
        }
        for (label, list) in [
            ("tile mins", &self.gt.mins),
            ("tile maxs", &self.gt.maxs),
            ("tile sums", &self.gt.sums),
            ("tile null counts", &self.gt.null_counts),
        ] {
            for (s, o) in list.iter().enumerate() {
                v.push((format!("{label} of slot {s}"), *o));
            }
        }
        if let Some(o) = self.gt.fragment_summary {
            v.push(("fragment min/max/sum/null count".into(), o));
        }
        if let Some(o) = self.gt.processed_conditions {
            v.push(("processed conditions".into(), o));
        }
        v
    }

    /// Decodes the generic tile at `offset` of the metadata file (for integrity checks).
    pub fn decode_generic_tile(&self, offset: u64, key: Option<&[u8]>) -> Result<Vec<u8>> {
        generic_at(&self.bytes, offset, key, "generic tile")
    }

    /// The metadata file's path.
    pub fn metadata_path(&self) -> Uri {
        self.dir.path.join(names::FRAGMENT_METADATA_FILE)
    }

    /// The fragment folder.
    pub fn path(&self) -> &Uri {
        &self.dir.path
    }
}

/// (footer offset, footer size) from the u64 at the end of the file (v10+, or var dims).
fn stored_footer_extent(bytes: &[u8]) -> Result<(u64, u64)> {
    let n = bytes.len() as u64;
    if n < 8 {
        return Err(Error::corrupt("the metadata file is shorter than 8 bytes"));
    }
    let size = u64::from_le_bytes(bytes[bytes.len() - 8..].try_into().expect("8 bytes"));
    let off = (n - 8).checked_sub(size).ok_or_else(|| {
        Error::corrupt(format!("footer size {size} exceeds the file ({n} bytes)"))
    })?;
    Ok((off, size))
}

/// The footer size of v5–v9 fragments with fixed-size dimensions (not stored on disk).
fn computed_footer_size(schema: &ArraySchema, version: u32) -> u64 {
    let num = (schema.attributes.len() + 1 + schema.dimensions.len()) as u64;
    let domain: u64 = schema
        .dimensions
        .iter()
        .map(|d| 2 * d.coord_size().unwrap_or(0) as u64)
        .sum();
    let lists = if version < 7 { 5 } else { 7 };
    4 + 1 + 1 + domain + 8 + 8 + 8 + lists * 8 * num
}

/// TileDB 2.x's percent-encoding of field names for v8 file names.
fn percent_encode(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let enc = match c {
            '!' => "%21",
            '#' => "%23",
            '$' => "%24",
            '%' => "%25",
            '&' => "%26",
            '\'' => "%27",
            '(' => "%28",
            ')' => "%29",
            '*' => "%2A",
            '+' => "%2B",
            ',' => "%2C",
            '/' => "%2F",
            ':' => "%3A",
            ';' => "%3B",
            '=' => "%3D",
            '?' => "%3F",
            '@' => "%40",
            '[' => "%5B",
            ']' => "%5D",
            '"' => "%22",
            '<' => "%20",
            '>' => "%2D",
            '\\' => "%30",
            '|' => "%3C",
            _ => {
                out.push(c);
                continue;
            }
        };
        out.push_str(enc);
    }
    out
}

/// A new fragment's metadata as the writer collects it: everything `__fragment_metadata.tdb`
/// holds (docs/ARRAY.md §4.2–§4.4), per slot (§4.1) where TileDB keeps a list per field.
#[derive(Clone, Debug, PartialEq)]
pub struct NewFragmentMetadata {
    /// Name of the schema file in `__schema/` the fragment was written with.
    pub schema_name: String,
    /// Whether the fragment is dense.
    pub dense: bool,
    /// Non-empty domain, one range per dimension.
    pub non_empty_domain: Vec<Range>,
    /// Sparse tiles (0 for dense fragments).
    pub sparse_tile_num: u64,
    /// Cells in the last sparse tile; dense: cells per tile.
    pub last_tile_cell_num: u64,
    /// Bytes of each slot's data file (the offsets file of var-size fields).
    pub file_sizes: Vec<u64>,
    /// Bytes of each slot's `_var` file.
    pub file_var_sizes: Vec<u64>,
    /// Bytes of each slot's `_validity` file.
    pub file_validity_sizes: Vec<u64>,
    /// Per [`ListKind`] but null counts (tile offsets, var offsets, var sizes, validity
    /// offsets), per slot, one entry per tile.
    pub lists: [Vec<Vec<u64>>; 4],
    /// Tile minimums per slot.
    pub mins: Vec<TileMinMax>,
    /// Tile maximums per slot.
    pub maxs: Vec<TileMinMax>,
    /// Tile sums per slot.
    pub sums: Vec<Vec<[u8; 8]>>,
    /// Tile null counts per slot (nullable attributes).
    pub null_counts: Vec<Vec<u64>>,
    /// Fragment min/max/sum/null count per slot.
    pub summaries: Vec<FieldSummary>,
    /// Delete conditions already applied (consolidation only).
    pub processed_conditions: Vec<String>,
    /// The R-tree (empty for dense fragments).
    pub rtree: RTree,
    /// Whether the fragment has per-cell timestamps (`t.tdb`, the slot after the
    /// dimensions; consolidated sparse fragments).
    pub has_timestamps: bool,
    /// Whether the fragment has delete metadata (`dt.tdb`, `dci.tdb`, the two slots after
    /// the timestamps; sparse fragments consolidated without purging deletes).
    pub has_delete_meta: bool,
}

fn u64_list_payload(v: &[u64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + 8 * v.len());
    out.extend_from_slice(&(v.len() as u64).to_le_bytes());
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

impl NewFragmentMetadata {
    /// Empty lists for `num` slots.
    pub fn with_slots(num: usize) -> NewFragmentMetadata {
        NewFragmentMetadata {
            schema_name: String::new(),
            dense: false,
            non_empty_domain: Vec::new(),
            sparse_tile_num: 0,
            last_tile_cell_num: 0,
            file_sizes: vec![0; num],
            file_var_sizes: vec![0; num],
            file_validity_sizes: vec![0; num],
            lists: std::array::from_fn(|_| vec![Vec::new(); num]),
            mins: vec![TileMinMax::default(); num],
            maxs: vec![TileMinMax::default(); num],
            sums: vec![Vec::new(); num],
            null_counts: vec![Vec::new(); num],
            summaries: vec![FieldSummary::default(); num],
            processed_conditions: Vec::new(),
            rtree: RTree {
                fanout: rtree::FANOUT,
                levels: Vec::new(),
            },
            has_timestamps: false,
            has_delete_meta: false,
        }
    }

    /// The whole metadata file as TileDB 2.30 writes it (`store_v15_or_higher`): the generic
    /// tiles in §4.2 order (encrypted with `key` when given), the footer in clear, and the
    /// footer's size.
    pub fn serialize(&self, key: Option<&[u8]>) -> Result<Vec<u8>> {
        let num = self.file_sizes.len();
        let mut out = Vec::new();
        let mut put = |payload: Vec<u8>| -> Result<u64> {
            let at = out.len() as u64;
            out.extend_from_slice(&generic_tile::write_payload(&payload, key)?);
            Ok(at)
        };
        let rtree_offset = put(self.rtree.serialize())?;
        let mut list_offsets: [Vec<u64>; 4] = Default::default();
        for (k, lists) in self.lists.iter().enumerate() {
            for slot in 0..num {
                let v = lists.get(slot).map_or(&[][..], |v| v.as_slice());
                list_offsets[k].push(put(u64_list_payload(v))?);
            }
        }
        let min_max = |m: &TileMinMax| {
            let mut p = Vec::with_capacity(16 + m.fixed.len() + m.var.len());
            p.extend_from_slice(&(m.fixed.len() as u64).to_le_bytes());
            p.extend_from_slice(&(m.var.len() as u64).to_le_bytes());
            p.extend_from_slice(&m.fixed);
            p.extend_from_slice(&m.var);
            p
        };
        let mut mins = Vec::with_capacity(num);
        for slot in 0..num {
            mins.push(put(min_max(&self.mins[slot]))?);
        }
        let mut maxs = Vec::with_capacity(num);
        for slot in 0..num {
            maxs.push(put(min_max(&self.maxs[slot]))?);
        }
        let mut sums = Vec::with_capacity(num);
        for slot in 0..num {
            let v = &self.sums[slot];
            let mut p = Vec::with_capacity(8 + 8 * v.len());
            p.extend_from_slice(&(v.len() as u64).to_le_bytes());
            v.iter().for_each(|s| p.extend_from_slice(s));
            sums.push(put(p)?);
        }
        let mut nulls = Vec::with_capacity(num);
        for slot in 0..num {
            nulls.push(put(u64_list_payload(&self.null_counts[slot]))?);
        }
        let mut summary = Vec::new();
        for s in &self.summaries {
            summary.extend_from_slice(&(s.min.len() as u64).to_le_bytes());
            summary.extend_from_slice(&s.min);
            summary.extend_from_slice(&(s.max.len() as u64).to_le_bytes());
            summary.extend_from_slice(&s.max);
            summary.extend_from_slice(&s.sum);
            summary.extend_from_slice(&s.null_count.to_le_bytes());
        }
        let summary_offset = put(summary)?;
        let mut conditions = (self.processed_conditions.len() as u64)
            .to_le_bytes()
            .to_vec();
        for c in &self.processed_conditions {
            conditions.extend_from_slice(&(c.len() as u64).to_le_bytes());
            conditions.extend_from_slice(c.as_bytes());
        }
        let conditions_offset = put(conditions)?;
        let footer_start = out.len();
        self.write_footer(
            &mut out,
            rtree_offset,
            &list_offsets,
            [&mins, &maxs, &sums, &nulls],
            summary_offset,
            conditions_offset,
        )?;
        let footer_size = (out.len() - footer_start) as u64;
        out.extend_from_slice(&footer_size.to_le_bytes());
        Ok(out)
    }

    /// The footer (`write_footer`, docs/ARRAY.md §4.3).
    fn write_footer(
        &self,
        out: &mut Vec<u8>,
        rtree_offset: u64,
        lists: &[Vec<u64>; 4],
        tile_metadata: [&Vec<u64>; 4],
        summary_offset: u64,
        conditions_offset: u64,
    ) -> Result<()> {
        if self.schema_name.is_empty() {
            return Err(Error::invalid(
                "cannot write a fragment footer without a schema name",
            ));
        }
        let u64s = |out: &mut Vec<u8>, v: &[u64]| {
            v.iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes()))
        };
        out.extend_from_slice(&MAX_FRAGMENT_VERSION.to_le_bytes());
        out.extend_from_slice(&(self.schema_name.len() as u64).to_le_bytes());
        out.extend_from_slice(self.schema_name.as_bytes());
        out.push(u8::from(self.dense));
        out.push(0); // null_non_empty_domain
        for r in &self.non_empty_domain {
            rtree::write_range(out, r);
        }
        out.extend_from_slice(&self.sparse_tile_num.to_le_bytes());
        out.extend_from_slice(&self.last_tile_cell_num.to_le_bytes());
        out.push(u8::from(self.has_timestamps));
        out.push(u8::from(self.has_delete_meta));
        u64s(out, &self.file_sizes);
        u64s(out, &self.file_var_sizes);
        u64s(out, &self.file_validity_sizes);
        out.extend_from_slice(&rtree_offset.to_le_bytes());
        for l in lists {
            u64s(out, l);
        }
        for l in tile_metadata {
            u64s(out, l);
        }
        out.extend_from_slice(&summary_offset.to_le_bytes());
        out.extend_from_slice(&conditions_offset.to_le_bytes());
        Ok(())
    }
}

/// The types TileDB computes neither min/max nor sums of: ANY, BLOB, GEOM and the
/// non-ASCII strings.
pub(crate) fn opaque(datatype: Datatype) -> bool {
    use Datatype::*;
    matches!(
        datatype,
        Any | Blob
            | GeomWkb
            | GeomWkt
            | StringUtf8
            | StringUtf16
            | StringUtf32
            | StringUcs2
            | StringUcs4
    )
}

/// Whether a field gets tile and fragment min/max (`has_min_max_metadata`): not dimensions;
/// var-size only for CHAR and STRING_ASCII; cell_val_num other than 1 only for CHAR and
/// STRING_ASCII; never ANY, BLOB, GEOM_WKB/WKT or non-ASCII strings.
pub fn has_min_max(datatype: Datatype, is_dim: bool, var: bool, cell_val_num: u32) -> bool {
    let text = matches!(datatype, Datatype::Char | Datatype::StringAscii);
    !(is_dim || (var && !text) || (cell_val_num != 1 && !text) || opaque(datatype))
}

/// Whether a field gets tile and fragment sums (`has_sum_metadata`): fixed-size, one value per
/// cell, not ANY, BLOB, GEOM or a string type (CHAR is summed, as signed bytes). Dimensions
/// of sparse fragments get sums too.
pub fn has_sum(datatype: Datatype, var: bool, cell_val_num: u32) -> bool {
    !(var || cell_val_num != 1 || opaque(datatype) || datatype == Datatype::StringAscii)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_encoding_matches_v8() {
        assert_eq!(percent_encode("a b/c"), "a b%2Fc");
        assert_eq!(percent_encode("x<y>"), "x%20y%2D");
    }

    #[test]
    fn tile_extents_from_offsets() {
        let offs = [0u64, 10, 25];
        assert_eq!(
            FragmentMetadata::tile_extent(&offs, 0, 40).unwrap(),
            (0, 10)
        );
        assert_eq!(
            FragmentMetadata::tile_extent(&offs, 2, 40).unwrap(),
            (25, 15)
        );
        assert!(FragmentMetadata::tile_extent(&offs, 3, 40).is_err());
        assert!(FragmentMetadata::tile_extent(&offs, 2, 20).is_err());
    }

    #[test]
    fn u64_lists_are_bounded() {
        let mut b = 2u64.to_le_bytes().to_vec();
        b.extend(7u64.to_le_bytes());
        b.extend(9u64.to_le_bytes());
        assert_eq!(u64_list(&b, "x").unwrap(), [7, 9]);
        b.truncate(16);
        assert!(u64_list(&b, "x").is_err());
    }
}
