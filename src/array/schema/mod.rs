//! Array schemas (docs/ARRAY.md §3): the payload of a schema generic tile, every field, for
//! schema format versions 1 to 22 (TileDB 1.4 to 2.30); enumerations (v20+). Parsed here and
//! written here: [`ArraySchema::serialize`] and [`Enumeration::serialize`] write format
//! version 22 byte for byte as TileDB 2.30 does.
//!
//! Version-dependent fields: v5 added `allows_dups`, per-dimension types, cell_val_num,
//! filters and domain sizes (before, the domain stored one type); v6 fill values; v7
//! nullability and the validity pipeline; v17 attribute order; v18 dimension labels; v20
//! enumerations; v22 the current domain.

mod check;
pub mod json;

use crate::error::{Error, Result};
use crate::format::byte_reader::ByteReader;
use crate::format::datatype::Datatype;
use crate::format::format_version::FORMAT_VERSION;
use crate::pipeline::Pipeline;

/// The newest schema format version this reader (and TileDB 2.30) reads: the version it writes.
pub const MAX_SCHEMA_VERSION: u32 = FORMAT_VERSION;

/// The first schema format version (TileDB 2.25) that stores a current domain (docs/ARRAY.md §3).
const CURRENT_DOMAIN_VERSION: u32 = 22;

/// `cell_val_num` of var-size fields.
pub const VAR_NUM: u32 = u32::MAX;

/// Dense or sparse (TileDB's `ArrayType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayType {
    /// Dense: every cell of the domain exists.
    Dense = 0,
    /// Sparse: explicit coordinates.
    Sparse = 1,
}

/// A tile or cell order (TileDB's `Layout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Row-major: the last dimension varies fastest.
    RowMajor = 0,
    /// Column-major: the first dimension varies fastest.
    ColMajor = 1,
    /// Global order (query layout only).
    GlobalOrder = 2,
    /// Unordered (query layout only).
    Unordered = 3,
    /// Hilbert curve (sparse cell order only).
    Hilbert = 4,
}

impl Layout {
    fn from_u8(v: u8, what: &str) -> Result<Layout> {
        Ok(match v {
            0 => Layout::RowMajor,
            1 => Layout::ColMajor,
            2 => Layout::GlobalOrder,
            3 => Layout::Unordered,
            4 => Layout::Hilbert,
            _ => return Err(Error::corrupt(format!("{what}: unknown layout {v}"))),
        })
    }

    /// TileDB's name (`row-major`, `col-major`, `global-order`, `unordered`, `hilbert`).
    pub fn name(self) -> &'static str {
        match self {
            Layout::RowMajor => "row-major",
            Layout::ColMajor => "col-major",
            Layout::GlobalOrder => "global-order",
            Layout::Unordered => "unordered",
            Layout::Hilbert => "hilbert",
        }
    }
}

/// A range of a dimension: fixed-size `lo`, `hi` bytes, or var-size `lo` and `hi` strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Range {
    /// The low and high coordinate, each `coord_size` bytes.
    Fixed(Vec<u8>, Vec<u8>),
    /// The low and high string of a var-size dimension.
    Var(Vec<u8>, Vec<u8>),
}

impl Range {
    /// Reads a range as TileDB serializes non-empty domains, MBRs and current domains: fixed
    /// dimensions `2 × coord_size` bytes, var ones `u64 size, u64 start_size, bytes`.
    pub fn read(r: &mut ByteReader<'_>, coord_size: Option<usize>) -> Result<Range> {
        match coord_size {
            Some(n) => {
                let b = r.take(2 * n)?;
                Ok(Range::Fixed(b[..n].to_vec(), b[n..].to_vec()))
            }
            None => {
                let size = r.u64()?;
                let start = r.u64()?;
                if start > size {
                    return Err(Error::corrupt(format!(
                        "var range: start size {start} exceeds range size {size}"
                    )));
                }
                let b = r.take(usize::try_from(size).map_err(|_| Error::corrupt("range size"))?)?;
                let (lo, hi) = b.split_at(start as usize);
                Ok(Range::Var(lo.to_vec(), hi.to_vec()))
            }
        }
    }

    /// Appends the range as [`Range::read`] reads it.
    pub fn write(&self, out: &mut Vec<u8>) {
        match self {
            Range::Fixed(lo, hi) => {
                out.extend_from_slice(lo);
                out.extend_from_slice(hi);
            }
            Range::Var(lo, hi) => {
                put_u64(out, (lo.len() + hi.len()) as u64);
                put_u64(out, lo.len() as u64);
                out.extend_from_slice(lo);
                out.extend_from_slice(hi);
            }
        }
    }

    /// The low bound's bytes.
    pub fn lo(&self) -> &[u8] {
        match self {
            Range::Fixed(l, _) | Range::Var(l, _) => l,
        }
    }

    /// The high bound's bytes.
    pub fn hi(&self) -> &[u8] {
        match self {
            Range::Fixed(_, h) | Range::Var(_, h) => h,
        }
    }
}

/// A dimension.
#[derive(Clone, Debug, PartialEq)]
pub struct Dimension {
    /// Name.
    pub name: String,
    /// Coordinate type.
    pub datatype: Datatype,
    /// 1, or [`VAR_NUM`] for string dimensions.
    pub cell_val_num: u32,
    /// The filters its coordinate tiles go through: its own, or the schema's coords filters
    /// when its own are empty (as TileDB substitutes them on load).
    pub filters: Pipeline,
    /// Whether its own stored pipeline was empty and `filters` are the coords filters.
    pub uses_coords_filters: bool,
    /// The domain (lo, hi), `None` for string dimensions.
    pub domain: Option<(Vec<u8>, Vec<u8>)>,
    /// The tile extent (`datatype.size()` bytes), `None` when absent.
    pub tile_extent: Option<Vec<u8>>,
}

impl Dimension {
    /// Whether coordinates are var-size (string dimensions).
    pub fn is_var(&self) -> bool {
        self.cell_val_num == VAR_NUM
    }

    /// Bytes per coordinate of a fixed-size dimension.
    pub fn coord_size(&self) -> Option<usize> {
        (!self.is_var()).then(|| self.datatype.size() * self.cell_val_num as usize)
    }
}

/// An attribute.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    /// Name.
    pub name: String,
    /// Value type.
    pub datatype: Datatype,
    /// Values per cell, or [`VAR_NUM`].
    pub cell_val_num: u32,
    /// Filters of its data tiles.
    pub filters: Pipeline,
    /// Fill value (one cell; one value for var-size attributes).
    pub fill_value: Vec<u8>,
    /// Whether cells may be null.
    pub nullable: bool,
    /// Validity of fill cells (0 null, 1 valid) for nullable attributes.
    pub fill_validity: u8,
    /// Data order (v17+): 0 unordered, 1 increasing, 2 decreasing.
    pub order: u8,
    /// Enumeration name (v20+).
    pub enumeration: Option<String>,
}

impl Attribute {
    /// Whether cells are var-size.
    pub fn is_var(&self) -> bool {
        self.cell_val_num == VAR_NUM
    }

    /// Bytes per cell of a fixed-size attribute.
    pub fn cell_size(&self) -> Option<usize> {
        (!self.is_var()).then(|| self.datatype.size() * self.cell_val_num as usize)
    }
}

/// The largest fixed-size attribute cell this library creates, opens and writes (256 MiB): a
/// schema claiming more is refused (by [`check_cell_size`]) before anything of that size (its
/// fill value, a tile) is allocated. TileDB has no such bound (TileDB-Py 0.36.1 creates and
/// opens cells of 100 M INT32 values, taking 2 GB of memory to open such a schema); a schema
/// file stores each attribute's fill value, a whole cell, so opening one costs memory
/// proportional to its cells.
pub const MAX_CELL_BYTES: u64 = 256 << 20;

/// The one rule on the size of a fixed-size attribute cell, applied alike when a schema is
/// created (from JSON, or checked by [`ArraySchema::check`]) and when one is opened: at most
/// [`MAX_CELL_BYTES`], else [`Error::Unsupported`] naming the attribute.
pub fn check_cell_size(name: &str, datatype: Datatype, cell_val_num: u32) -> Result<()> {
    let bytes = datatype.size() as u64 * u64::from(cell_val_num);
    if cell_val_num != VAR_NUM && bytes > MAX_CELL_BYTES {
        return Err(Error::Unsupported(format!(
            "attribute {name}: cells of {cell_val_num} {datatype} values are {bytes} bytes, over \
             the {MAX_CELL_BYTES} bytes (256 MiB) tdbfilter creates, opens and writes"
        )));
    }
    Ok(())
}

/// A dimension label (v18+); this reader reports labels but does not read them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DimensionLabel {
    /// Index of the labelled dimension.
    pub dim_index: u32,
    /// Label name.
    pub name: String,
    /// Whether `uri` is relative to the array.
    pub relative_uri: bool,
    /// The label array's URI.
    pub uri: String,
    /// The label attribute's name.
    pub attr_name: String,
    /// Label order (1 increasing, 2 decreasing).
    pub order: u8,
    /// Label datatype.
    pub datatype: Datatype,
    /// Label cell_val_num.
    pub cell_val_num: u32,
    /// Whether the label array is external.
    pub is_external: bool,
}

/// An array schema.
#[derive(Clone, Debug, PartialEq)]
pub struct ArraySchema {
    /// The schema's file name (`__t1_t2_uuid` or `__array_schema.tdb`).
    pub name: String,
    /// Format version the schema was written with.
    pub version: u32,
    /// Whether sparse cells may repeat coordinates.
    pub allows_dups: bool,
    /// Dense or sparse.
    pub array_type: ArrayType,
    /// Tile order.
    pub tile_order: Layout,
    /// Cell order.
    pub cell_order: Layout,
    /// Sparse tile capacity (cells).
    pub capacity: u64,
    /// Coordinate filters (default for dimensions without their own).
    pub coords_filters: Pipeline,
    /// Filters of var-size offsets tiles.
    pub offsets_filters: Pipeline,
    /// Filters of validity tiles (v7+; empty before).
    pub validity_filters: Pipeline,
    /// Dimensions.
    pub dimensions: Vec<Dimension>,
    /// Attributes.
    pub attributes: Vec<Attribute>,
    /// Dimension labels (v18+).
    pub labels: Vec<DimensionLabel>,
    /// Enumerations: (name, file name in `__schema/__enumerations/`) (v20+).
    pub enumerations: Vec<(String, String)>,
    /// The values of enumerations, where known: empty after [`ArraySchema::parse`] (each
    /// lives in its own file, see `Array::enumeration`); a schema to create carries one for
    /// each entry of `enumerations`, which creation writes.
    pub loaded_enumerations: Vec<Enumeration>,
    /// The current domain (v22+), `None` when empty.
    pub current_domain: Option<Vec<Range>>,
}

/// Reads a u32-length-prefixed string.
fn string32(r: &mut ByteReader<'_>) -> Result<String> {
    let n = r.u32()? as usize;
    Ok(String::from_utf8_lossy(r.take(n)?).into_owned())
}

fn datatype(r: &mut ByteReader<'_>, what: &str) -> Result<Datatype> {
    let b = r.u8()?;
    Datatype::from_u8(b).ok_or_else(|| Error::corrupt(format!("{what}: unknown datatype {b}")))
}

fn pipeline(r: &mut ByteReader<'_>, version: u32, what: &str) -> Result<Pipeline> {
    let (p, used) = Pipeline::deserialize_prefix(r.rest(), version).map_err(|e| e.context(what))?;
    r.take(used)?;
    Ok(p)
}

/// TileDB's default fill value of one value of `datatype` (`constants::fill_value`).
pub fn default_fill_value(datatype: Datatype) -> Vec<u8> {
    use Datatype::*;
    match datatype {
        Int8 | Char => vec![0x80],
        Uint8 => vec![0xff],
        Int16 => i16::MIN.to_le_bytes().to_vec(),
        Uint16 => u16::MAX.to_le_bytes().to_vec(),
        Int32 => i32::MIN.to_le_bytes().to_vec(),
        Uint32 => u32::MAX.to_le_bytes().to_vec(),
        Int64 => i64::MIN.to_le_bytes().to_vec(),
        Uint64 => u64::MAX.to_le_bytes().to_vec(),
        Float32 => f32::NAN.to_le_bytes().to_vec(),
        Float64 => f64::NAN.to_le_bytes().to_vec(),
        d if d.is_datetime() || d.is_time() => i64::MIN.to_le_bytes().to_vec(),
        d => vec![0; d.size()],
    }
}

impl ArraySchema {
    /// Parses a schema payload (the unfiltered generic tile). `name` is the file name.
    pub fn parse(payload: &[u8], name: &str) -> Result<ArraySchema> {
        parse(payload, name).map_err(|e| e.context(format!("array schema {name}")))
    }

    /// The index of the dimension called `name`.
    pub fn dimension_index(&self, name: &str) -> Option<usize> {
        self.dimensions.iter().position(|d| d.name == name)
    }

    /// The index of the attribute called `name`.
    pub fn attribute_index(&self, name: &str) -> Option<usize> {
        self.attributes.iter().position(|a| a.name == name)
    }

    /// The loaded values of enumeration `name`, if loaded.
    pub fn loaded_enumeration(&self, name: &str) -> Option<&Enumeration> {
        self.loaded_enumerations.iter().find(|e| e.name == name)
    }

    /// Whether the array is dense.
    pub fn is_dense(&self) -> bool {
        self.array_type == ArrayType::Dense
    }

    /// Cells per dense space tile (product of the extents), for integer domains.
    pub fn cells_per_tile(&self) -> Result<u64> {
        let mut n: u64 = 1;
        for d in &self.dimensions {
            let e = d.tile_extent.as_deref().ok_or_else(|| {
                Error::corrupt(format!("dimension {} has no tile extent", d.name))
            })?;
            let e = crate::array::value::as_u64_extent(d.datatype, e)?;
            n = n
                .checked_mul(e)
                .ok_or_else(|| Error::corrupt("cells per tile overflows u64"))?;
        }
        Ok(n)
    }
}

// ---- Write side: format version 22 as TileDB 2.30 serializes it (docs/ARRAY.md §3) ----

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// A count or length as the u32 TileDB stores.
fn u32_len(n: usize, what: &str) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::invalid(format!("{what}: {n} does not fit in a u32")))
}

/// Appends a u32-length-prefixed string.
fn put_string32(out: &mut Vec<u8>, s: &str, what: &str) -> Result<()> {
    put_u32(out, u32_len(s.len(), what)?);
    out.extend_from_slice(s.as_bytes());
    Ok(())
}

impl ArraySchema {
    /// The schema payload (the generic tile's unfiltered bytes) exactly as TileDB 2.30 writes
    /// it (`serialize_array_schema`): format version 22 whatever version it was read with
    /// (TileDB serializes every schema as the current version); dimensions that use the
    /// coords filters store an empty pipeline; then attributes with their fill values,
    /// dimension labels, the enumeration names and file names, and the current domain.
    /// Structural faults (a fixed-size dimension without a domain, a fill value of the wrong
    /// size, a current domain for another number of dimensions) are `InvalidInput`.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(512);
        put_u32(&mut out, MAX_SCHEMA_VERSION);
        out.push(u8::from(self.allows_dups));
        out.push(self.array_type as u8);
        out.push(self.tile_order as u8);
        out.push(self.cell_order as u8);
        put_u64(&mut out, self.capacity);
        out.extend_from_slice(&self.coords_filters.serialize());
        out.extend_from_slice(&self.offsets_filters.serialize());
        out.extend_from_slice(&self.validity_filters.serialize());
        put_u32(&mut out, u32_len(self.dimensions.len(), "dimension count")?);
        for d in &self.dimensions {
            d.serialize(&mut out)
                .map_err(|e| e.context(format!("dimension '{}'", d.name)))?;
        }
        put_u32(&mut out, u32_len(self.attributes.len(), "attribute count")?);
        for a in &self.attributes {
            a.serialize(&mut out)
                .map_err(|e| e.context(format!("attribute '{}'", a.name)))?;
        }
        put_u32(
            &mut out,
            u32_len(self.labels.len(), "dimension label count")?,
        );
        for l in &self.labels {
            l.serialize(&mut out)
                .map_err(|e| e.context(format!("dimension label '{}'", l.name)))?;
        }
        put_u32(
            &mut out,
            u32_len(self.enumerations.len(), "enumeration count")?,
        );
        for (name, file) in &self.enumerations {
            put_string32(&mut out, name, "enumeration name")?;
            put_string32(&mut out, file, "enumeration file name")?;
        }
        // Current domain: u32 version 0, u8 empty, then type NDRECTANGLE and one range per
        // dimension.
        put_u32(&mut out, 0);
        match &self.current_domain {
            None => out.push(1),
            Some(ranges) => {
                if ranges.len() != self.dimensions.len() {
                    return Err(Error::invalid(format!(
                        "the current domain has {} ranges for {} dimensions",
                        ranges.len(),
                        self.dimensions.len()
                    )));
                }
                out.push(0);
                out.push(0);
                for (r, d) in ranges.iter().zip(&self.dimensions) {
                    let fits = match (r, d.coord_size()) {
                        (Range::Fixed(lo, hi), Some(n)) => lo.len() == n && hi.len() == n,
                        (Range::Var(..), None) => true,
                        _ => false,
                    };
                    if !fits {
                        return Err(Error::invalid(format!(
                            "the current domain's range of dimension '{}' does not match its type",
                            d.name
                        )));
                    }
                    r.write(&mut out);
                }
            }
        }
        Ok(out)
    }
}

impl Dimension {
    /// Appends the dimension as TileDB's `Dimension::serialize` (v5+) writes it.
    fn serialize(&self, out: &mut Vec<u8>) -> Result<()> {
        put_string32(out, &self.name, "name")?;
        out.push(self.datatype as u8);
        put_u32(out, self.cell_val_num);
        if self.uses_coords_filters {
            out.extend_from_slice(&Pipeline::new().serialize());
        } else {
            out.extend_from_slice(&self.filters.serialize());
        }
        if self.datatype.is_string() {
            put_u64(out, 0);
        } else {
            let n = self.datatype.size();
            let (lo, hi) = self
                .domain
                .as_ref()
                .ok_or_else(|| Error::invalid("a fixed-size dimension needs a domain"))?;
            if lo.len() != n || hi.len() != n {
                return Err(Error::invalid(format!(
                    "domain bounds of {} and {} bytes for {} values of {n} bytes",
                    lo.len(),
                    hi.len(),
                    self.datatype
                )));
            }
            put_u64(out, 2 * n as u64);
            out.extend_from_slice(lo);
            out.extend_from_slice(hi);
        }
        match &self.tile_extent {
            None => out.push(1),
            Some(e) => {
                if e.len() != self.datatype.size() {
                    return Err(Error::invalid(format!(
                        "a tile extent of {} bytes for a {} dimension",
                        e.len(),
                        self.datatype
                    )));
                }
                out.push(0);
                out.extend_from_slice(e);
            }
        }
        Ok(())
    }
}

impl Attribute {
    /// Appends the attribute as TileDB's `Attribute::serialize` (v22) writes it.
    fn serialize(&self, out: &mut Vec<u8>) -> Result<()> {
        put_string32(out, &self.name, "name")?;
        out.push(self.datatype as u8);
        put_u32(out, self.cell_val_num);
        out.extend_from_slice(&self.filters.serialize());
        if self.fill_value.is_empty() {
            return Err(Error::invalid("the fill value is empty"));
        }
        if let Some(cell) = self.cell_size()
            && cell != self.fill_value.len()
        {
            return Err(Error::invalid(format!(
                "a fill value of {} bytes for cells of {cell} bytes",
                self.fill_value.len()
            )));
        }
        put_u64(out, self.fill_value.len() as u64);
        out.extend_from_slice(&self.fill_value);
        out.push(u8::from(self.nullable));
        out.push(self.fill_validity);
        out.push(self.order);
        put_string32(
            out,
            self.enumeration.as_deref().unwrap_or(""),
            "enumeration name",
        )
    }
}

impl DimensionLabel {
    /// Appends the label as TileDB's `DimensionLabel::serialize` writes it.
    fn serialize(&self, out: &mut Vec<u8>) -> Result<()> {
        put_u32(out, self.dim_index);
        put_string32(out, &self.name, "name")?;
        out.push(u8::from(self.relative_uri));
        put_u64(out, self.uri.len() as u64);
        out.extend_from_slice(self.uri.as_bytes());
        put_string32(out, &self.attr_name, "attribute name")?;
        out.push(self.order);
        out.push(self.datatype as u8);
        put_u32(out, self.cell_val_num);
        out.push(u8::from(self.is_external));
        Ok(())
    }
}

fn parse(payload: &[u8], name: &str) -> Result<ArraySchema> {
    let mut r = ByteReader::new(payload, "array schema");
    let version = r.u32()?;
    if version > MAX_SCHEMA_VERSION {
        return Err(Error::Unsupported(format!(
            "schema format version {version} is newer than {MAX_SCHEMA_VERSION} (TileDB 2.30)"
        )));
    }
    if version == 0 {
        return Err(Error::corrupt("schema format version 0"));
    }
    let allows_dups = if version >= 5 { r.u8()? != 0 } else { false };
    let array_type = match r.u8()? {
        0 => ArrayType::Dense,
        1 => ArrayType::Sparse,
        t => return Err(Error::corrupt(format!("unknown array type {t}"))),
    };
    let tile_order = Layout::from_u8(r.u8()?, "tile order")?;
    let cell_order = Layout::from_u8(r.u8()?, "cell order")?;
    let capacity = r.u64()?;
    let coords_filters = pipeline(&mut r, version, "coords filters")?;
    let offsets_filters = pipeline(&mut r, version, "offsets filters")?;
    let validity_filters = if version >= 7 {
        pipeline(&mut r, version, "validity filters")?
    } else {
        let mut p = Pipeline::new();
        p.set_format_version(version)?;
        p
    };
    // Domain.
    let legacy_type = if version < 5 {
        Some(datatype(&mut r, "domain")?)
    } else {
        None
    };
    let dim_num = r.u32()?;
    let mut dimensions = Vec::new();
    for i in 0..dim_num {
        let d = parse_dimension(&mut r, version, legacy_type, &coords_filters)
            .map_err(|e| e.context(format!("dimension {i}")))?;
        dimensions.push(d);
    }
    if dimensions.is_empty() {
        return Err(Error::corrupt("the domain has no dimensions"));
    }
    let attribute_num = r.u32()?;
    let mut attributes = Vec::new();
    for i in 0..attribute_num {
        let a =
            parse_attribute(&mut r, version).map_err(|e| e.context(format!("attribute {i}")))?;
        attributes.push(a);
    }
    let mut labels = Vec::new();
    if version >= 18 {
        for i in 0..r.u32()? {
            labels
                .push(parse_label(&mut r).map_err(|e| e.context(format!("dimension label {i}")))?);
        }
    }
    let mut enumerations = Vec::new();
    if version >= 20 {
        for _ in 0..r.u32()? {
            let n = string32(&mut r)?;
            let f = string32(&mut r)?;
            enumerations.push((n, f));
        }
    }
    let mut current_domain = None;
    if version >= CURRENT_DOMAIN_VERSION {
        let cd_version = r.u32()?;
        if cd_version > 0 {
            return Err(Error::Unsupported(format!(
                "current domain version {cd_version} (TileDB 2.30 reads 0)"
            )));
        }
        if r.u8()? == 0 {
            let t = r.u8()?;
            if t != 0 {
                return Err(Error::Unsupported(format!("current domain type {t}")));
            }
            let mut ranges = Vec::new();
            for d in &dimensions {
                ranges.push(Range::read(&mut r, d.coord_size())?);
            }
            current_domain = Some(ranges);
        }
    }
    if r.remaining() != 0 {
        return Err(Error::corrupt(format!(
            "{} bytes follow the schema",
            r.remaining()
        )));
    }
    Ok(ArraySchema {
        name: name.to_string(),
        version,
        allows_dups,
        array_type,
        tile_order,
        cell_order,
        capacity,
        coords_filters,
        offsets_filters,
        validity_filters,
        dimensions,
        attributes,
        labels,
        enumerations,
        loaded_enumerations: Vec::new(),
        current_domain,
    })
}

fn parse_dimension(
    r: &mut ByteReader<'_>,
    version: u32,
    legacy_type: Option<Datatype>,
    coords_filters: &Pipeline,
) -> Result<Dimension> {
    let name = string32(r)?;
    let (datatype, cell_val_num, own) = match legacy_type {
        None => {
            let t = datatype(r, "dimension")?;
            let cvn = r.u32()?;
            (t, cvn, Some(pipeline(r, version, "dimension filters")?))
        }
        Some(t) => (t, if t.is_string() { VAR_NUM } else { 1 }, None),
    };
    let uses_coords_filters = own.as_ref().is_none_or(|p| p.filters().is_empty());
    let filters = match own {
        Some(p) if !p.filters().is_empty() => p,
        _ => coords_filters.clone(),
    };
    let domain_size = if legacy_type.is_none() {
        r.u64()?
    } else {
        2 * datatype.size() as u64
    };
    let domain = if domain_size == 0 {
        None
    } else {
        let b = r.take(usize::try_from(domain_size).map_err(|_| Error::corrupt("domain size"))?)?;
        let half = b.len() / 2;
        Some((b[..half].to_vec(), b[half..].to_vec()))
    };
    let tile_extent = if r.u8()? == 0 {
        Some(r.take(datatype.size())?.to_vec())
    } else {
        None
    };
    Ok(Dimension {
        name,
        datatype,
        cell_val_num,
        filters,
        uses_coords_filters,
        domain,
        tile_extent,
    })
}

fn parse_attribute(r: &mut ByteReader<'_>, version: u32) -> Result<Attribute> {
    let name = string32(r)?;
    let datatype = datatype(r, "attribute")?;
    let cell_val_num = r.u32()?;
    if cell_val_num == 0 {
        return Err(Error::corrupt(format!(
            "attribute {name}: cell_val_num is 0"
        )));
    }
    check_cell_size(&name, datatype, cell_val_num)?;
    let filters = pipeline(r, version, "attribute filters")?;
    let fill_value = if version >= 6 {
        let n = r.u64()?;
        let fill = r
            .take(usize::try_from(n).map_err(|_| Error::corrupt("fill size"))?)?
            .to_vec();
        let cell = datatype.size() as u64 * cell_val_num as u64;
        if cell_val_num != VAR_NUM && n != cell {
            return Err(Error::corrupt(format!(
                "attribute {name}: a fill value of {n} bytes for cells of {cell} bytes"
            )));
        }
        fill
    } else {
        let one = default_fill_value(datatype);
        let n = if cell_val_num == VAR_NUM {
            1
        } else {
            cell_val_num as usize
        };
        one.repeat(n)
    };
    let nullable = version >= 7 && r.u8()? != 0;
    let fill_validity = if version >= 7 { r.u8()? } else { 0 };
    let order = if version >= 17 { r.u8()? } else { 0 };
    let enumeration = if version >= 20 {
        let n = string32(r)?;
        (!n.is_empty()).then_some(n)
    } else {
        None
    };
    Ok(Attribute {
        name,
        datatype,
        cell_val_num,
        filters,
        fill_value,
        nullable,
        fill_validity,
        order,
        enumeration,
    })
}

fn parse_label(r: &mut ByteReader<'_>) -> Result<DimensionLabel> {
    let dim_index = r.u32()?;
    let name = string32(r)?;
    let relative_uri = r.u8()? != 0;
    let n = r.u64()?;
    let uri =
        String::from_utf8_lossy(r.take(usize::try_from(n).map_err(|_| Error::corrupt("uri"))?)?)
            .into_owned();
    let attr_name = string32(r)?;
    let order = r.u8()?;
    let datatype = datatype(r, "label")?;
    let cell_val_num = r.u32()?;
    let is_external = r.u8()? != 0;
    Ok(DimensionLabel {
        dim_index,
        name,
        relative_uri,
        uri,
        attr_name,
        order,
        datatype,
        cell_val_num,
        is_external,
    })
}

/// An enumeration (`__schema/__enumerations/<file>`): the values attribute cells index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enumeration {
    /// Name.
    pub name: String,
    /// File name.
    pub path_name: String,
    /// Value type.
    pub datatype: Datatype,
    /// Values per entry, or [`VAR_NUM`].
    pub cell_val_num: u32,
    /// Whether the values are ordered.
    pub ordered: bool,
    /// The values.
    pub data: Vec<u8>,
    /// Byte offsets of var-size values (empty for fixed-size).
    pub offsets: Vec<u64>,
}

impl Enumeration {
    /// Parses an enumeration payload (the unfiltered generic tile).
    pub fn parse(payload: &[u8]) -> Result<Enumeration> {
        let mut r = ByteReader::new(payload, "enumeration");
        let version = r.u32()?;
        if version > 0 {
            return Err(Error::Unsupported(format!(
                "enumeration version {version} (TileDB 2.30 reads 0)"
            )));
        }
        let name = string32(&mut r)?;
        let path_name = string32(&mut r)?;
        let datatype = datatype(&mut r, "enumeration")?;
        let cell_val_num = r.u32()?;
        let ordered = r.u8()? != 0;
        let n = r.u64()?;
        let data = r
            .take(usize::try_from(n).map_err(|_| Error::corrupt("enumeration size"))?)?
            .to_vec();
        let mut offsets = Vec::new();
        if cell_val_num == VAR_NUM {
            let n = r.u64()?;
            let b = r.take(usize::try_from(n).map_err(|_| Error::corrupt("offsets size"))?)?;
            if b.len() % 8 != 0 {
                return Err(Error::corrupt("enumeration offsets are not whole u64s"));
            }
            offsets = b
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect();
            crate::engine::tile::check_offsets(&offsets, data.len())
                .map_err(|m| Error::corrupt(format!("enumeration {name}: {m}")))?;
        }
        Ok(Enumeration {
            name,
            path_name,
            datatype,
            cell_val_num,
            ordered,
            data,
            offsets,
        })
    }

    /// The enumeration file's payload exactly as TileDB 2.30 writes it
    /// (`Enumeration::serialize`, enumeration version 0).
    pub fn serialize(&self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(64 + self.data.len() + 8 * self.offsets.len());
        put_u32(&mut out, 0);
        put_string32(&mut out, &self.name, "enumeration name")?;
        put_string32(&mut out, &self.path_name, "enumeration file name")?;
        out.push(self.datatype as u8);
        put_u32(&mut out, self.cell_val_num);
        out.push(u8::from(self.ordered));
        put_u64(&mut out, self.data.len() as u64);
        out.extend_from_slice(&self.data);
        if self.cell_val_num == VAR_NUM {
            put_u64(&mut out, 8 * self.offsets.len() as u64);
            for o in &self.offsets {
                put_u64(&mut out, *o);
            }
        } else if !self.offsets.is_empty() {
            return Err(Error::invalid(format!(
                "enumeration {}: offsets for fixed-size values",
                self.name
            )));
        }
        Ok(out)
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        if self.cell_val_num == VAR_NUM {
            self.offsets.len()
        } else {
            let cell = self.datatype.size() * self.cell_val_num as usize;
            self.data.len().checked_div(cell).unwrap_or(0)
        }
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of value `i`.
    pub fn value(&self, i: usize) -> Option<&[u8]> {
        if self.cell_val_num == VAR_NUM {
            let start = *self.offsets.get(i)? as usize;
            let end = self
                .offsets
                .get(i + 1)
                .map_or(self.data.len(), |e| *e as usize);
            self.data.get(start..end)
        } else {
            let cell = self.datatype.size() * self.cell_val_num as usize;
            self.data.get(i * cell..(i + 1) * cell)
        }
    }
}
