//! Sparse writes put their cells in TileDB's global order (docs/ARRAY.md §5.4) and check them
//! first: every coordinate inside the domain (and the current domain), no duplicate
//! coordinates unless the schema allows them, and for global-order writes, cells already
//! sorted.
//!
//! The global order of TileDB 2.30's writers (`UnorderedWriter::sort_coords`, `GlobalCmpQB`,
//! `HilbertCmpQB`, `Domain::tile_order_cmp` / `cell_order_cmp`):
//! - row-major or col-major cell order: first the space-tile index of every fixed dimension
//!   with a tile extent, in the tile order (string dimensions and dimensions without extent
//!   are skipped), then the coordinates in the cell order;
//! - Hilbert cell order: the Hilbert value of the cell (no tile order), then the coordinates
//!   in row-major order;
//! - numbers compare numerically (`-0.0` equals `0.0`); strings compare bytewise as C++
//!   `char`, which is **signed** on x86-64 (`"\x80" < "a" < "\x7f"`), a shorter prefix first.
//!
//! TileDB's sort is not stable: the order among equal coordinates (duplicates) is unspecified.
//! Here it is deterministic: equal coordinates keep their input order, except that cells
//! equal in the order but with different bytes (`-0.0` and `0.0`) are ordered by their bytes,
//! so that identical coordinates are always adjacent for [`check_duplicates`].

use crate::array::schema::{ArraySchema, Dimension, Layout};
use crate::error::{Error, Result};
use crate::format::datatype::Datatype;
use rayon::prelude::*;
use std::cmp::Ordering;

/// The coordinates of one dimension for a batch of cells, as a writer is given them.
#[derive(Clone, Copy, Debug)]
pub enum DimCoords<'a> {
    /// Fixed-size dimensions: `cell_num × coord_size` little-endian bytes.
    Fixed(&'a [u8]),
    /// String dimensions: the byte offset of each cell's coordinate in `data` (one per cell,
    /// non-decreasing, no trailing end offset; cell `i` ends where cell `i + 1` starts, the last
    /// at the end of `data`), and the concatenated coordinate bytes.
    Var {
        /// Start of each cell's bytes in `data`.
        offsets: &'a [u64],
        /// The concatenated coordinates.
        data: &'a [u8],
    },
}

/// How a dimension's coordinates are typed (TileDB's `Domain::set_tile_cell_order_cmp_funcs`):
/// datetimes and times are `int64_t`, string dimensions `char`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
    Str,
}

impl Kind {
    /// The kind of fixed-size coordinates of `datatype`, if TileDB has such dimensions.
    fn fixed(datatype: Datatype) -> Option<Kind> {
        use Datatype::*;
        match datatype {
            Int8 => Some(Kind::I8),
            Uint8 => Some(Kind::U8),
            Int16 => Some(Kind::I16),
            Uint16 => Some(Kind::U16),
            Int32 => Some(Kind::I32),
            Uint32 => Some(Kind::U32),
            Int64 => Some(Kind::I64),
            Uint64 => Some(Kind::U64),
            Float32 => Some(Kind::F32),
            Float64 => Some(Kind::F64),
            t if t.is_datetime() || t.is_time() => Some(Kind::I64),
            _ => None,
        }
    }

    fn of(d: &Dimension) -> Result<Kind> {
        let kind = match d.datatype {
            Datatype::StringAscii if d.is_var() => return Ok(Kind::Str),
            _ if d.is_var() || d.cell_val_num != 1 => None,
            t => Kind::fixed(t),
        };
        kind.ok_or_else(|| {
            Error::Unsupported(format!(
                "dimension {}: TileDB has no dimensions of {} with {} values per cell",
                d.name,
                d.datatype,
                if d.is_var() {
                    "var".to_string()
                } else {
                    d.cell_val_num.to_string()
                }
            ))
        })
    }

    fn size(self) -> usize {
        match self {
            Kind::I8 | Kind::U8 | Kind::Str => 1,
            Kind::I16 | Kind::U16 => 2,
            Kind::I32 | Kind::U32 | Kind::F32 => 4,
            Kind::I64 | Kind::U64 | Kind::F64 => 8,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, Kind::F32 | Kind::F64)
    }

    /// A fixed-size coordinate as a number: signed integers as i64, unsigned as u64 (both
    /// returned as i128), floats as f64 (exact for f32).
    fn int(self, b: &[u8]) -> i128 {
        match self {
            Kind::I8 => b[0] as i8 as i128,
            Kind::U8 => b[0] as i128,
            Kind::I16 => i16::from_le_bytes([b[0], b[1]]) as i128,
            Kind::U16 => u16::from_le_bytes([b[0], b[1]]) as i128,
            Kind::I32 => i32::from_le_bytes(b[..4].try_into().expect("4 bytes")) as i128,
            Kind::U32 => u32::from_le_bytes(b[..4].try_into().expect("4 bytes")) as i128,
            Kind::I64 => i64::from_le_bytes(b[..8].try_into().expect("8 bytes")) as i128,
            Kind::U64 => u64::from_le_bytes(b[..8].try_into().expect("8 bytes")) as i128,
            Kind::F32 | Kind::F64 | Kind::Str => unreachable!("not an integer kind"),
        }
    }

    fn float(self, b: &[u8]) -> f64 {
        match self {
            Kind::F32 => f32::from_le_bytes(b[..4].try_into().expect("4 bytes")) as f64,
            Kind::F64 => f64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
            Kind::U64 => u64::from_le_bytes(b[..8].try_into().expect("8 bytes")) as f64,
            // Every other integer fits i64 (converting from i64 is one instruction).
            _ => self.int(b) as i64 as f64,
        }
    }

    /// A u64 whose unsigned order is the coordinates' numeric order (TileDB's `<` on the
    /// coordinate type; `-0.0` maps like `0.0`). Not for strings.
    fn order_word(self, b: &[u8]) -> u64 {
        match self {
            Kind::I8 | Kind::I16 | Kind::I32 | Kind::I64 => (self.int(b) as i64 as u64) ^ (1 << 63),
            Kind::U8 | Kind::U16 | Kind::U32 | Kind::U64 => self.int(b) as u64,
            Kind::F32 | Kind::F64 => {
                let v = self.float(b);
                let bits = if v == 0.0 { 0 } else { v.to_bits() };
                if bits >> 63 == 1 {
                    !bits
                } else {
                    bits | (1 << 63)
                }
            }
            Kind::Str => unreachable!("strings have no order word"),
        }
    }

    /// TileDB's `Dimension::tile_idx`: `(v - lo) / extent`, in the unsigned type of the
    /// coordinate's width for integers (wrapping), in the coordinate type for reals.
    fn tile_index(self, v: &[u8], lo: &[u8], extent: &[u8]) -> u64 {
        macro_rules! int {
            ($s:ty, $u:ty) => {{
                let f =
                    |b: &[u8]| <$s>::from_le_bytes(b[..size_of::<$s>()].try_into().expect("size"));
                (f(v).wrapping_sub(f(lo)) as $u / f(extent) as $u) as u64
            }};
        }
        match self {
            Kind::I8 => int!(i8, u8),
            Kind::U8 => int!(u8, u8),
            Kind::I16 => int!(i16, u16),
            Kind::U16 => int!(u16, u16),
            Kind::I32 => int!(i32, u32),
            Kind::U32 => int!(u32, u32),
            Kind::I64 => int!(i64, u64),
            Kind::U64 => int!(u64, u64),
            Kind::F32 => {
                let f = |b: &[u8]| f32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
                cpp_f64_to_u64(((f(v) - f(lo)) / f(extent)) as f64)
            }
            Kind::F64 => {
                let f = |b: &[u8]| f64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
                cpp_f64_to_u64((f(v) - f(lo)) / f(extent))
            }
            Kind::Str => unreachable!("string dimensions have no tiles"),
        }
    }

    /// Compares two coordinates as TileDB's writer does (`Domain::cell_order_cmp_impl`).
    fn cmp(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Kind::Str => cmp_signed_bytes(a, b),
            _ => self.order_word(a).cmp(&self.order_word(b)),
        }
    }
}

/// Whether the fixed-size coordinate `a` is below `b` on a dimension of `datatype`: C++'s `<`
/// on the coordinate type (`-0.0` is not below `0.0`), as TileDB's MBRs and non-empty domains
/// use it. Types TileDB has no dimensions of compare bytewise.
pub fn coord_less(datatype: Datatype, a: &[u8], b: &[u8]) -> bool {
    match Kind::fixed(datatype) {
        Some(k) if a.len() >= k.size() && b.len() >= k.size() => k.cmp(a, b).is_lt(),
        _ => a < b,
    }
}

/// C++'s `char` comparison of strings (signed `char`, as on x86-64 Linux): bytewise with
/// bytes 0x80..0xFF below 0x00, a shorter common prefix first.
fn cmp_signed_bytes(a: &[u8], b: &[u8]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return (*x as i8).cmp(&(*y as i8));
        }
    }
    a.len().cmp(&b.len())
}

/// A `double` converted to `uint64_t` as x86-64 code compiled by GCC or Clang does it: exact
/// truncation in range, NaN to 2^63 and negative values through `int64_t`.
fn cpp_f64_to_u64(x: f64) -> u64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if x.is_nan() {
        1 << 63
    } else if x < TWO_63 {
        if x <= -TWO_63 {
            1 << 63
        } else {
            x as i64 as u64
        }
    } else if x < 2.0 * TWO_63 {
        ((x - TWO_63) as u64) ^ (1 << 63)
    } else {
        0
    }
}

/// One dimension's coordinates, checked against the schema.
struct DimView<'a> {
    dim: &'a Dimension,
    kind: Kind,
    coords: DimCoords<'a>,
    /// (domain low, extent) when the dimension takes part in the tile order.
    tiling: Option<(&'a [u8], &'a [u8])>,
}

impl<'a> DimView<'a> {
    fn cell(&self, i: usize) -> &'a [u8] {
        match self.coords {
            DimCoords::Fixed(b) => {
                let n = self.kind.size();
                &b[i * n..(i + 1) * n]
            }
            DimCoords::Var { offsets, data } => {
                let start = offsets[i] as usize;
                let end = offsets.get(i + 1).map_or(data.len(), |e| *e as usize);
                &data[start..end]
            }
        }
    }
}

/// A batch of coordinates checked against the schema: one view per dimension, all with the
/// same number of cells.
struct Cells<'a> {
    schema: &'a ArraySchema,
    dims: Vec<DimView<'a>>,
    n: usize,
}

impl<'a> Cells<'a> {
    fn new(schema: &'a ArraySchema, coords: &[DimCoords<'a>]) -> Result<Cells<'a>> {
        if coords.len() != schema.dimensions.len() {
            return Err(Error::invalid(format!(
                "{} coordinate buffers for the {} dimensions of the array",
                coords.len(),
                schema.dimensions.len()
            )));
        }
        let mut dims = Vec::with_capacity(coords.len());
        let mut n: Option<(usize, &str)> = None;
        for (dim, c) in schema.dimensions.iter().zip(coords) {
            let kind = Kind::of(dim)?;
            let count = match (*c, kind) {
                (DimCoords::Fixed(b), k) if k != Kind::Str => {
                    if b.len() % k.size() != 0 {
                        return Err(Error::invalid(format!(
                            "dimension {}: {} bytes of coordinates are not whole {}-byte {} values",
                            dim.name,
                            b.len(),
                            k.size(),
                            dim.datatype
                        )));
                    }
                    b.len() / k.size()
                }
                (DimCoords::Var { offsets, data }, Kind::Str) => {
                    check_offsets(&dim.name, offsets, data.len())?;
                    offsets.len()
                }
                (DimCoords::Fixed(_), _) => {
                    return Err(Error::invalid(format!(
                        "dimension {} is var-size: its coordinates need offsets",
                        dim.name
                    )));
                }
                (DimCoords::Var { .. }, _) => {
                    return Err(Error::invalid(format!(
                        "dimension {} is fixed-size: its coordinates take no offsets",
                        dim.name
                    )));
                }
            };
            match n {
                None => n = Some((count, &dim.name)),
                Some((m, first)) if m != count => {
                    return Err(Error::invalid(format!(
                        "dimension {} has {count} coordinates, dimension {first} {m}",
                        dim.name
                    )));
                }
                Some(_) => {}
            }
            let tiling = match (&dim.domain, &dim.tile_extent) {
                (Some((lo, _)), Some(e)) if kind != Kind::Str => {
                    Some((lo.as_slice(), e.as_slice()))
                }
                _ => None,
            };
            if kind != Kind::Str && dim.domain.is_none() {
                return Err(Error::corrupt(format!(
                    "dimension {} has no domain",
                    dim.name
                )));
            }
            dims.push(DimView {
                dim,
                kind,
                coords: *c,
                tiling,
            });
        }
        Ok(Cells {
            schema,
            dims,
            n: n.map_or(0, |(m, _)| m),
        })
    }

    /// The dimensions in `layout` order (row-major: first to last; col-major: last to first).
    fn in_order(&self, layout: Layout) -> Vec<usize> {
        let n = self.dims.len();
        if layout == Layout::ColMajor {
            (0..n).rev().collect()
        } else {
            (0..n).collect()
        }
    }

    /// Cell `i` as TileDB prints coordinates in messages: `(3, 0.5, ab)`.
    fn describe(&self, i: usize) -> String {
        let parts: Vec<String> = self
            .dims
            .iter()
            .map(|d| format_coord(d.kind, d.cell(i), 6))
            .collect();
        format!("({})", parts.join(", "))
    }
}

/// Checks var-size coordinate offsets: non-decreasing and inside the data.
fn check_offsets(name: &str, offsets: &[u64], len: usize) -> Result<()> {
    let mut prev = 0u64;
    for (i, &o) in offsets.iter().enumerate() {
        if (i > 0 && o < prev) || o > len as u64 {
            return Err(Error::invalid(format!(
                "dimension {name}: offset {o} of cell {i} is {} (previous {prev}, data {len} bytes)",
                if o > len as u64 {
                    "past the data"
                } else {
                    "below the previous offset"
                }
            )));
        }
        prev = o;
    }
    Ok(())
}

/// A value of `kind` printed as TileDB's messages print it (C++ `operator<<` with
/// `precision` significant digits for reals; 8-bit integers as numbers, where TileDB prints
/// them as characters).
fn format_coord(kind: Kind, b: &[u8], precision: usize) -> String {
    match kind {
        Kind::Str => String::from_utf8_lossy(b).into_owned(),
        Kind::F32 | Kind::F64 => cpp_general(kind.float(b), precision),
        k => k.int(b).to_string(),
    }
}

/// C++'s default floating-point output (`%g` with `precision` significant digits).
fn cpp_general(v: f64, precision: usize) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.into();
    }
    let p = precision.max(1);
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sci = format!("{:.*e}", p - 1, v);
    let (mantissa, exp) = sci.split_once('e').expect("exponent");
    let exp: i32 = exp.parse().expect("exponent digits");
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= p as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mantissa), exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip(&format!("{v:.decimals$}"))
    }
}

/// Checks that every coordinate lies inside its dimension's domain, and inside the current
/// domain when the schema has one (string dimensions have no domain; NaN is outside every
/// domain). The error names the dimension, the value and the bounds, in TileDB's words.
pub fn check_domain(schema: &ArraySchema, coords: &[DimCoords<'_>]) -> Result<()> {
    let cells = Cells::new(schema, coords)?;
    check_cells_domain(&cells)
}

fn check_cells_domain(cells: &Cells<'_>) -> Result<()> {
    let current = cells.schema.current_domain.as_deref();
    for (d, v) in cells.dims.iter().enumerate() {
        let digits = match v.kind {
            Kind::F32 => 7,
            Kind::F64 => 16,
            _ => 6,
        };
        if v.kind != Kind::Str {
            let (lo, hi) = v.dim.domain.as_ref().expect("checked in Cells::new");
            let (wl, wh) = (v.kind.order_word(lo), v.kind.order_word(hi));
            let bad = (0..cells.n).into_par_iter().find_first(|&i| {
                let c = v.cell(i);
                let w = v.kind.order_word(c);
                w < wl || w > wh || (v.kind.is_float() && v.kind.float(c).is_nan())
            });
            if let Some(i) = bad {
                return Err(Error::invalid(format!(
                    "Coordinate {} is out of domain bounds [{}, {}] on dimension '{}'",
                    format_coord(v.kind, v.cell(i), digits),
                    format_coord(v.kind, lo, digits),
                    format_coord(v.kind, hi, digits),
                    v.dim.name
                )));
            }
        }
        if let Some(range) = current.and_then(|c| c.get(d)) {
            let (lo, hi) = (range.lo(), range.hi());
            // TileDB checks the non-empty domain against it (`CurrentDomain::includes`):
            // numbers numerically, strings as `std::string_view`, by unsigned bytes.
            let cmp = |a: &[u8], b: &[u8]| match v.kind {
                Kind::Str => a.cmp(b),
                k => k.cmp(a, b),
            };
            let bad = (0..cells.n).into_par_iter().find_first(|&i| {
                let c = v.cell(i);
                cmp(c, lo).is_lt() || cmp(c, hi).is_gt()
            });
            if let Some(i) = bad {
                return Err(Error::invalid(format!(
                    "Cells are written outside of the defined current domain: coordinate {} is \
                     outside [{}, {}] on dimension '{}'",
                    format_coord(v.kind, v.cell(i), digits),
                    format_coord(v.kind, lo, digits),
                    format_coord(v.kind, hi, digits),
                    v.dim.name
                )));
            }
        }
    }
    Ok(())
}

/// The bits per dimension of TileDB's Hilbert values: `63 / dim_num` (`Hilbert(dim_num)`).
pub fn hilbert_bits(dim_num: usize) -> Result<u32> {
    if dim_num == 0 || dim_num >= 16 {
        return Err(Error::Unsupported(format!(
            "Hilbert order over {dim_num} dimensions (TileDB allows 1 to 15)"
        )));
    }
    Ok(63 / dim_num as u32)
}

/// TileDB's `Dimension::map_to_uint64` of one coordinate for the Hilbert curve, with `bits`
/// bits per dimension. Fixed-size coordinates: `(v − lo) / (hi − lo) × (2^bits − 1)` in
/// `double`, truncated; strings: their first 8 bytes, big-endian, each **sign-extended**
/// (C++ `(uint64_t)char`), shifted right by `64 − bits`.
pub fn map_to_uint64(dim: &Dimension, coord: &[u8], bits: u32) -> Result<u64> {
    let kind = Kind::of(dim)?;
    if kind != Kind::Str && coord.len() != kind.size() {
        return Err(Error::invalid(format!(
            "dimension {}: a {}-byte coordinate for {}-byte {} values",
            dim.name,
            coord.len(),
            kind.size(),
            dim.datatype
        )));
    }
    let (lo, hi) = match &dim.domain {
        Some((lo, hi)) => (lo.as_slice(), hi.as_slice()),
        None if kind == Kind::Str => (&[][..], &[][..]),
        None => {
            return Err(Error::corrupt(format!(
                "dimension {} has no domain",
                dim.name
            )));
        }
    };
    Ok(map_kind_to_uint64(kind, coord, lo, hi, bits))
}

fn map_kind_to_uint64(kind: Kind, coord: &[u8], lo: &[u8], hi: &[u8], bits: u32) -> u64 {
    if kind == Kind::Str {
        let mut ret = 0u64;
        for i in 0..8 {
            ret <<= 8;
            if let Some(&b) = coord.get(i) {
                ret |= b as i8 as i64 as u64;
            }
        }
        return ret >> (64 - bits);
    }
    let max_bucket = ((1u64 << bits) - 1) as f64;
    let (start, end) = (kind.float(lo), kind.float(hi));
    let norm = kind.float(coord) - start;
    cpp_f64_to_u64(norm / (end - start) * max_bucket)
}

/// TileDB's `Hilbert::coords_to_hilbert` (John Skilling's transform): the Hilbert value of
/// `coords` (`bits` bits each, modified in place) on a curve over `coords.len()` dimensions.
/// `bits` comes from [`hilbert_bits`]; bits of the result past the 64th are dropped, and no
/// coordinates or 0 bits give 0.
pub fn coords_to_hilbert(coords: &mut [u64], bits: u32) -> u64 {
    let x = coords;
    let n = x.len();
    if n == 0 || bits == 0 || bits > 64 {
        return 0;
    }
    // Inverse undo (branch-free: the bits tested are random).
    let mut qbit = bits - 1;
    while qbit > 0 {
        let p = (1u64 << qbit) - 1;
        let set = |v: u64| 0u64.wrapping_sub((v >> qbit) & 1);
        // Bit q of x[0] set: invert its low bits.
        x[0] ^= p & set(x[0]);
        for i in 1..n {
            // Bit q of x[i] set: invert the low bits of x[0]; else exchange them with x[i]'s.
            let m = set(x[i]);
            let t = (x[0] ^ x[i]) & p & !m;
            x[0] ^= (p & m) ^ t;
            x[i] ^= t;
        }
        qbit -= 1;
    }
    // Gray encode.
    for i in 1..n {
        x[i] ^= x[i - 1];
    }
    let mut t = x[n - 1];
    let mut i = 1;
    while i < bits {
        x[n - 1] ^= x[n - 1] >> i;
        i <<= 1;
    }
    t ^= x[n - 1];
    for v in x[..n - 1].iter_mut() {
        *v ^= t;
    }
    // The transpose to one value: bit j of every dimension, the last dimension lowest.
    let mut ret = 0u64;
    let mut h = 0u32;
    for j in 0..bits {
        for v in x.iter().rev() {
            if h < 64 {
                ret |= ((v >> j) & 1) << h;
            }
            h += 1;
        }
    }
    ret
}

/// The Hilbert value TileDB's writer gives each cell (`WriterBase::calculate_hilbert_values`),
/// for any cell order of the schema.
pub fn hilbert_values(schema: &ArraySchema, coords: &[DimCoords<'_>]) -> Result<Vec<u64>> {
    let cells = Cells::new(schema, coords)?;
    cells_hilbert(&cells)
}

fn cells_hilbert(cells: &Cells<'_>) -> Result<Vec<u64>> {
    let bits = hilbert_bits(cells.dims.len())?;
    let bounds: Vec<(&[u8], &[u8])> = cells
        .dims
        .iter()
        .map(|d| {
            d.dim
                .domain
                .as_ref()
                .map_or((&[][..], &[][..]), |(l, h)| (l.as_slice(), h.as_slice()))
        })
        .collect();
    Ok((0..cells.n)
        .into_par_iter()
        .map_init(
            || vec![0u64; cells.dims.len()],
            |x, i| {
                for (d, v) in cells.dims.iter().enumerate() {
                    x[d] = map_kind_to_uint64(v.kind, v.cell(i), bounds[d].0, bounds[d].1, bits);
                }
                coords_to_hilbert(x, bits)
            },
        )
        .collect())
}

/// The comparison of cells in the global order, over one batch.
struct Order<'c, 'a> {
    cells: &'c Cells<'a>,
    /// Dimensions compared by space tile, in tile order (empty for Hilbert).
    tile_dims: Vec<usize>,
    /// Dimensions compared by coordinate, in cell order (row-major for Hilbert).
    cell_dims: Vec<usize>,
    hilbert: Option<Vec<u64>>,
}

impl<'c, 'a> Order<'c, 'a> {
    fn new(cells: &'c Cells<'a>) -> Result<Order<'c, 'a>> {
        let schema = cells.schema;
        let hilbert = schema.cell_order == Layout::Hilbert;
        let tile_dims = if hilbert {
            Vec::new()
        } else {
            cells
                .in_order(schema.tile_order)
                .into_iter()
                .filter(|&d| cells.dims[d].tiling.is_some())
                .collect()
        };
        let cell_dims = cells.in_order(if hilbert {
            Layout::RowMajor
        } else {
            schema.cell_order
        });
        let hilbert = if hilbert {
            Some(cells_hilbert(cells)?)
        } else {
            None
        };
        Ok(Order {
            cells,
            tile_dims,
            cell_dims,
            hilbert,
        })
    }

    /// TileDB's order of cells `a` and `b` (`Equal` for coordinates TileDB finds equal).
    fn cmp(&self, a: usize, b: usize) -> Ordering {
        if let Some(h) = &self.hilbert {
            let o = h[a].cmp(&h[b]);
            if o != Ordering::Equal {
                return o;
            }
        }
        self.cmp_tiles((self.cells, a), (self.cells, b))
            .then_with(|| self.cmp_coords((self.cells, a), (self.cells, b)))
    }

    /// The tile order of two cells, each of a batch of this schema.
    fn cmp_tiles(&self, (x, a): (&Cells<'_>, usize), (y, b): (&Cells<'_>, usize)) -> Ordering {
        for &d in &self.tile_dims {
            let (va, vb) = (&x.dims[d], &y.dims[d]);
            let (lo, e) = va.tiling.expect("tile dims have tiling");
            let o = va
                .kind
                .tile_index(va.cell(a), lo, e)
                .cmp(&vb.kind.tile_index(vb.cell(b), lo, e));
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }

    /// The cell order (coordinates only) of two cells, each of a batch of this schema.
    fn cmp_coords(&self, (x, a): (&Cells<'_>, usize), (y, b): (&Cells<'_>, usize)) -> Ordering {
        for &d in &self.cell_dims {
            let o = x.dims[d].kind.cmp(x.dims[d].cell(a), y.dims[d].cell(b));
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }

    /// Cells equal in the order but not in their bytes (`-0.0` and `0.0`): by their bytes.
    fn cmp_bytes(&self, a: usize, b: usize) -> Ordering {
        for v in &self.cells.dims {
            if v.kind.is_float() {
                let o = v.cell(a).cmp(v.cell(b));
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
        Ordering::Equal
    }
}

/// The permutation that puts the cells into TileDB's global order: entry `k` is the input
/// index of the `k`-th cell in the order. Checks the coordinates first ([`check_domain`]).
/// Equal coordinates keep their input order (TileDB's order among duplicates is unspecified).
///
/// Where the order of fixed-size dimensions fits 128 bits (tile indices and coordinates
/// relative to the domain's low bound, or the Hilbert value and coordinates), cells are sorted
/// by one packed integer key; otherwise (string dimensions, wide domains) by comparing cells.
pub fn global_order(schema: &ArraySchema, coords: &[DimCoords<'_>]) -> Result<Vec<u64>> {
    let cells = Cells::new(schema, coords)?;
    check_cells_domain(&cells)?;
    Ok(sorted(&Order::new(&cells)?))
}

/// The cells' order, ties by input index (and by bytes where values are equal).
fn sorted(order: &Order<'_, '_>) -> Vec<u64> {
    match order.packed_key() {
        Some(parts) if parts.width <= 64 && order.cells.n <= u32::MAX as usize => {
            sort_packed::<u64>(order, &parts)
        }
        Some(parts) if parts.width <= 128 && order.cells.n <= u32::MAX as usize => {
            sort_packed::<u128>(order, &parts)
        }
        _ => sort_compared(order),
    }
}

/// Sorts by comparing cells (any schema).
fn sort_compared(order: &Order<'_, '_>) -> Vec<u64> {
    let mut perm: Vec<u64> = (0..order.cells.n as u64).collect();
    perm.par_sort_by(|&a, &b| {
        order
            .cmp(a as usize, b as usize)
            .then_with(|| order.cmp_bytes(a as usize, b as usize))
    });
    perm
}

/// A part of a packed sort key.
#[derive(Clone, Copy, Debug)]
enum Part {
    /// The Hilbert value.
    Hilbert,
    /// The space-tile index on a dimension.
    Tile(usize),
    /// The coordinate on a dimension, as its order word minus the domain low's.
    Coord(usize, u64),
}

/// The parts of a packed key, most significant first, with their widths in bits.
struct PackedKey {
    parts: Vec<(Part, u32)>,
    width: u32,
}

/// Bits needed for values up to `max`.
fn bits_for(max: u64) -> u32 {
    64 - max.leading_zeros()
}

impl Order<'_, '_> {
    /// The packed key of this order, when every dimension is fixed-size.
    fn packed_key(&self) -> Option<PackedKey> {
        let dims = &self.cells.dims;
        if dims.iter().any(|v| v.kind == Kind::Str) {
            return None;
        }
        let mut parts = Vec::new();
        if self.hilbert.is_some() {
            parts.push((
                Part::Hilbert,
                hilbert_bits(dims.len()).ok()? * dims.len() as u32,
            ));
        }
        for &d in &self.tile_dims {
            let v = &dims[d];
            let (lo, e) = v.tiling?;
            let (_, hi) = v.dim.domain.as_ref()?;
            if v.kind.is_float() && (v.kind.float(hi) - v.kind.float(lo)) / v.kind.float(e) >= 9e18
            {
                // Real tile indices past 2^63 do not convert monotonically (C++ leaves them
                // undefined): compare cells instead.
                return None;
            }
            parts.push((Part::Tile(d), bits_for(v.kind.tile_index(hi, lo, e))));
        }
        for &d in &self.cell_dims {
            let v = &dims[d];
            let (lo, hi) = v.dim.domain.as_ref()?;
            let base = v.kind.order_word(lo);
            parts.push((
                Part::Coord(d, base),
                bits_for(v.kind.order_word(hi).wrapping_sub(base)),
            ));
        }
        let width = parts.iter().map(|(_, w)| w).sum();
        Some(PackedKey { parts, width })
    }

    /// The packed key of cell `i`.
    fn key<K: SortKey>(&self, parts: &PackedKey, i: usize) -> K {
        let mut k = K::from(0);
        for &(p, w) in &parts.parts {
            let v = match p {
                Part::Hilbert => self.hilbert.as_ref().expect("Hilbert order")[i],
                Part::Tile(d) => {
                    let v = &self.cells.dims[d];
                    let (lo, e) = v.tiling.expect("tile dims have tiling");
                    v.kind.tile_index(v.cell(i), lo, e)
                }
                Part::Coord(d, base) => {
                    let v = &self.cells.dims[d];
                    v.kind.order_word(v.cell(i)).wrapping_sub(base)
                }
            };
            k = k.shl(w) | K::from(v);
        }
        k
    }
}

/// Integers packed keys are built in.
trait SortKey: Copy + Ord + Send + Sync + From<u64> + std::ops::BitOr<Output = Self> {
    /// `self << bits` (0 when `bits` is the whole width).
    fn shl(self, bits: u32) -> Self;
}

impl SortKey for u64 {
    fn shl(self, bits: u32) -> u64 {
        self.checked_shl(bits).unwrap_or(0)
    }
}

impl SortKey for u128 {
    fn shl(self, bits: u32) -> u128 {
        self.checked_shl(bits).unwrap_or(0)
    }
}

/// Sorts by packed keys (ties by input index); cells equal in the order but not in their
/// bytes (`-0.0`, `0.0`) then by their bytes.
fn sort_packed<K: SortKey>(order: &Order<'_, '_>, parts: &PackedKey) -> Vec<u64> {
    let mut keyed: Vec<(K, u32)> = (0..order.cells.n)
        .into_par_iter()
        .map(|i| (order.key::<K>(parts, i), i as u32))
        .collect();
    keyed.par_sort_unstable();
    let has_floats = order.cells.dims.iter().any(|v| v.kind.is_float());
    let mut perm: Vec<u64> = keyed.iter().map(|&(_, i)| i as u64).collect();
    if has_floats {
        let mut start = 0;
        while start < keyed.len() {
            let mut end = start + 1;
            while end < keyed.len() && keyed[end].0 == keyed[start].0 {
                end += 1;
            }
            if end - start > 1 {
                perm[start..end]
                    .sort_by(|&a, &b| order.cmp_bytes(a as usize, b as usize).then(a.cmp(&b)));
            }
            start = end;
        }
    }
    perm
}

/// The permutation TileDB 2.30's unordered writer gives the cells when its compute thread
/// pool has `concurrency_level` threads (`sm.compute_concurrency_level`, by default the
/// machine's hardware threads): the same as [`global_order`] where no two cells are equal in
/// the order, and where some are (duplicates, `-0.0` and `0.0`), TileDB's own arrangement of
/// them. TileDB's `parallel_sort` is a quicksort that partitions `log2(concurrency) + 2`
/// levels deep around middle pivots, then hands each part to `std::sort` (libstdc++'s
/// introsort, as TileDB's Linux builds use); both are reproduced here, so the result is
/// deterministic for a given concurrency level.
pub fn global_order_as_tiledb(
    schema: &ArraySchema,
    coords: &[DimCoords<'_>],
    concurrency_level: usize,
) -> Result<Vec<u64>> {
    let cells = Cells::new(schema, coords)?;
    check_cells_domain(&cells)?;
    let order = Order::new(&cells)?;
    let perm = sorted(&order);
    let ties = (1..perm.len())
        .into_par_iter()
        .any(|k| order.cmp(perm[k - 1] as usize, perm[k] as usize).is_eq());
    if !ties {
        return Ok(perm);
    }
    drop(perm);
    let mut pos: Vec<u64> = (0..cells.n as u64).collect();
    let c = concurrency_level;
    match order.packed_key() {
        Some(parts) if parts.width <= 64 => {
            sort_keyed_as_tiledb::<u64>(&order, &parts, &mut pos, c)
        }
        Some(parts) if parts.width <= 128 => {
            sort_keyed_as_tiledb::<u128>(&order, &parts, &mut pos, c)
        }
        _ => {
            let less = |a: u64, b: u64| order.cmp(a as usize, b as usize).is_lt();
            tiledb_parallel_sort(&mut pos, c, &less);
        }
    }
    Ok(pos)
}

/// TileDB's sort of `pos`, comparing packed keys.
fn sort_keyed_as_tiledb<K: SortKey>(
    order: &Order<'_, '_>,
    parts: &PackedKey,
    pos: &mut [u64],
    concurrency: usize,
) {
    let keys: Vec<K> = (0..order.cells.n)
        .into_par_iter()
        .map(|i| order.key::<K>(parts, i))
        .collect();
    let less = |a: u64, b: u64| keys[a as usize] < keys[b as usize];
    tiledb_parallel_sort(pos, concurrency, &less);
}

/// TileDB's `parallel_sort` (tiledb/sm/misc/parallel_functions.h): middle-pivot quicksort
/// partitions down to a depth set by the concurrency level, then `std::sort` on each part.
fn tiledb_parallel_sort<F: Fn(u64, u64) -> bool + Sync>(
    v: &mut [u64],
    concurrency: usize,
    less: &F,
) {
    let mut height = 1;
    let mut width = 1usize;
    while width <= concurrency {
        height += 1;
        width *= 2;
    }
    if width > concurrency {
        height += 1;
    }
    quick_sort(v, 0, height, less);
}

fn quick_sort<F: Fn(u64, u64) -> bool + Sync>(
    v: &mut [u64],
    depth: usize,
    height: usize,
    less: &F,
) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    if n <= 2 || depth + 1 == height {
        std_sort(v, less);
        return;
    }
    let pivot_at = n / 2;
    let pivot = v[pivot_at];
    if n - 1 != pivot_at {
        v.swap(n - 1, pivot_at);
    }
    let mut middle = 0;
    for i in 0..n - 1 {
        if less(v[i], pivot) {
            v.swap(middle, i);
            middle += 1;
        }
    }
    v.swap(middle, n - 1);
    let (left, right) = v.split_at_mut(middle);
    rayon::join(
        || quick_sort(left, depth + 1, height, less),
        || quick_sort(&mut right[1..], depth + 1, height, less),
    );
}

/// libstdc++'s `std::sort`: introsort (median-of-three pivots, Hoare partitions, heapsort
/// past `2 log2(n)` levels) down to runs of 16, then one insertion sort.
fn std_sort<F: Fn(u64, u64) -> bool>(v: &mut [u64], less: &F) {
    if v.len() > 1 {
        let depth_limit = 2 * (usize::BITS - 1 - v.len().leading_zeros()) as usize;
        introsort_loop(v, depth_limit, less);
        final_insertion_sort(v, less);
    }
}

const STD_SORT_THRESHOLD: usize = 16;

fn introsort_loop<F: Fn(u64, u64) -> bool>(mut v: &mut [u64], mut depth_limit: usize, less: &F) {
    while v.len() > STD_SORT_THRESHOLD {
        if depth_limit == 0 {
            heap_sort(v, less);
            return;
        }
        depth_limit -= 1;
        let cut = partition_pivot(v, less);
        let (left, right) = v.split_at_mut(cut);
        introsort_loop(right, depth_limit, less);
        v = left;
    }
}

/// Moves the median of elements 1, the middle and the last to the front, then partitions
/// the rest around it; returns where the right part starts.
fn partition_pivot<F: Fn(u64, u64) -> bool>(v: &mut [u64], less: &F) -> usize {
    let n = v.len();
    let (a, b, c) = (1, n / 2, n - 1);
    let median = if less(v[a], v[b]) {
        if less(v[b], v[c]) {
            b
        } else if less(v[a], v[c]) {
            c
        } else {
            a
        }
    } else if less(v[a], v[c]) {
        a
    } else if less(v[b], v[c]) {
        c
    } else {
        b
    };
    v.swap(0, median);
    let pivot = v[0];
    let (mut first, mut last) = (1, n);
    loop {
        while less(v[first], pivot) {
            first += 1;
        }
        last -= 1;
        while less(pivot, v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn final_insertion_sort<F: Fn(u64, u64) -> bool>(v: &mut [u64], less: &F) {
    if v.len() > STD_SORT_THRESHOLD {
        insertion_sort(&mut v[..STD_SORT_THRESHOLD], less);
        for i in STD_SORT_THRESHOLD..v.len() {
            linear_insert(v, i, less);
        }
    } else {
        insertion_sort(v, less);
    }
}

fn insertion_sort<F: Fn(u64, u64) -> bool>(v: &mut [u64], less: &F) {
    for i in 1..v.len() {
        if less(v[i], v[0]) {
            v[..=i].rotate_right(1);
        } else {
            linear_insert(v, i, less);
        }
    }
}

/// Moves `v[i]` left past the elements it is below (an element not above it stops it).
fn linear_insert<F: Fn(u64, u64) -> bool>(v: &mut [u64], mut i: usize, less: &F) {
    let val = v[i];
    while i > 0 && less(val, v[i - 1]) {
        v[i] = v[i - 1];
        i -= 1;
    }
    v[i] = val;
}

/// libstdc++'s `std::__partial_sort(first, last, last)`: make_heap, then sort_heap.
fn heap_sort<F: Fn(u64, u64) -> bool>(v: &mut [u64], less: &F) {
    let len = v.len();
    if len >= 2 {
        let mut parent = (len - 2) / 2;
        loop {
            let value = v[parent];
            adjust_heap(v, parent, len, value, less);
            if parent == 0 {
                break;
            }
            parent -= 1;
        }
    }
    let mut last = len;
    while last > 1 {
        last -= 1;
        let value = v[last];
        v[last] = v[0];
        adjust_heap(v, 0, last, value, less);
    }
}

fn adjust_heap<F: Fn(u64, u64) -> bool>(
    v: &mut [u64],
    mut hole: usize,
    len: usize,
    value: u64,
    less: &F,
) {
    let top = hole;
    let mut child = hole;
    while child < len.saturating_sub(1) / 2 {
        child = 2 * (child + 1);
        if less(v[child], v[child - 1]) {
            child -= 1;
        }
        v[hole] = v[child];
        hole = child;
    }
    if len & 1 == 0 && len >= 2 && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v[hole] = v[child - 1];
        hole = child - 1;
    }
    // push_heap
    while hole > top {
        let parent = (hole - 1) / 2;
        if !less(v[parent], value) {
            break;
        }
        v[hole] = v[parent];
        hole = parent;
    }
    v[hole] = value;
}

/// Refuses duplicate coordinates when the schema does not allow them: `order` is the cells'
/// global order ([`global_order`], or the identity for cells written in global order). The
/// error names the first duplicate in TileDB's words: `Duplicate coordinates (3, 0.5) are not
/// allowed`.
pub fn check_duplicates(
    schema: &ArraySchema,
    coords: &[DimCoords<'_>],
    order: &[u64],
) -> Result<()> {
    if schema.allows_dups {
        return Ok(());
    }
    let cells = Cells::new(schema, coords)?;
    if order.len() != cells.n {
        return Err(Error::invalid(format!(
            "an order of {} cells for {} cells",
            order.len(),
            cells.n
        )));
    }
    if let Some(&bad) = order.iter().find(|&&i| i as usize >= cells.n) {
        return Err(Error::invalid(format!(
            "the order names cell {bad} of {}",
            cells.n
        )));
    }
    let same_bytes = |a: usize, b: usize| cells.dims.iter().all(|v| v.cell(a) == v.cell(b));
    let dup = (1..order.len())
        .into_par_iter()
        .find_first(|&k| same_bytes(order[k - 1] as usize, order[k] as usize));
    if let Some(k) = dup {
        return Err(duplicate_error(&cells, order[k] as usize));
    }
    // Cells equal as numbers but not as bytes (`-0.0`, `0.0`) may stand between two identical
    // ones (TileDB's order among them is its sort's); look inside such runs.
    if cells.dims.iter().any(|v| v.kind.is_float()) {
        let same_value = |a: usize, b: usize| {
            cells.dims.iter().all(|v| match v.kind {
                Kind::Str => v.cell(a) == v.cell(b),
                k => k.order_word(v.cell(a)) == k.order_word(v.cell(b)),
            })
        };
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            while end < order.len() && same_value(order[start] as usize, order[end] as usize) {
                end += 1;
            }
            if end - start > 2 {
                let mut run: Vec<usize> = order[start..end].iter().map(|&i| i as usize).collect();
                let bytes = |i: usize| cells.dims.iter().map(move |v| v.cell(i));
                run.sort_by(|&a, &b| bytes(a).cmp(bytes(b)));
                if let Some(w) = run.windows(2).find(|w| same_bytes(w[0], w[1])) {
                    return Err(duplicate_error(&cells, w[1]));
                }
            }
            start = end;
        }
    }
    Ok(())
}

fn duplicate_error(cells: &Cells<'_>, i: usize) -> Error {
    Error::invalid(format!(
        "Duplicate coordinates {} are not allowed",
        cells.describe(i)
    ))
}

/// Checks that cells given in global order (a global-order write) are sorted, and that the
/// first comes after the last cell of the previous batch (`previous`, one cell per dimension).
/// Errors use TileDB's words (`GlobalOrderWriter::check_global_order`): for Hilbert cell
/// order only the Hilbert values are checked, as TileDB does.
pub fn check_global_order(
    schema: &ArraySchema,
    coords: &[DimCoords<'_>],
    previous: Option<&[DimCoords<'_>]>,
) -> Result<()> {
    let cells = Cells::new(schema, coords)?;
    if cells.n == 0 {
        return Ok(());
    }
    let order = Order::new(&cells)?;
    let hilbert = order.hilbert.is_some();
    let what = if hilbert { "hilbert" } else { "global" };
    if let Some(prev) = previous {
        let prev_cells = Cells::new(schema, prev)?;
        if prev_cells.n != 1 {
            return Err(Error::invalid(format!(
                "the previous batch's last cell has {} cells per dimension, not 1",
                prev_cells.n
            )));
        }
        let prev_order = Order::new(&prev_cells)?;
        let (tile, fail) = if hilbert {
            let (p, h) = (
                prev_order.hilbert.as_ref().expect("hilbert")[0],
                order.hilbert.as_ref().expect("hilbert")[0],
            );
            (false, p > h)
        } else {
            let (last, first) = ((&prev_cells, 0), (&cells, 0));
            let t = order.cmp_tiles(last, first);
            (
                t.is_gt(),
                t.is_gt() || (t.is_eq() && order.cmp_coords(last, first).is_gt()),
            )
        };
        if fail {
            let coord = if hilbert { "Coordinates" } else { "Coordinate" };
            return Err(Error::invalid(format!(
                "Write failed; {coord} {} comes before last written coordinate in the {what} \
                 order{}",
                cells.describe(0),
                if tile {
                    " due to writes across tiles"
                } else {
                    ""
                }
            )));
        }
    }
    let bad = (0..cells.n - 1).into_par_iter().find_first(|&i| {
        if let Some(h) = &order.hilbert {
            h[i] > h[i + 1]
        } else {
            order.cmp(i, i + 1).is_gt()
        }
    });
    if let Some(i) = bad {
        let across = !hilbert && order.cmp_tiles((&cells, i), (&cells, i + 1)).is_gt();
        return Err(Error::invalid(format!(
            "Write failed; Coordinates {} succeed {} in the {what} order{}",
            cells.describe(i),
            cells.describe(i + 1),
            if across {
                " due to writes across tiles"
            } else {
                ""
            }
        )));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::array::schema::{ArrayType, VAR_NUM};
    use crate::pipeline::Pipeline;

    /// A fixed-size dimension of `datatype` over `[lo, hi]` with an optional extent.
    pub(crate) fn dim(
        name: &str,
        datatype: Datatype,
        lo: &[u8],
        hi: &[u8],
        extent: Option<&[u8]>,
    ) -> Dimension {
        Dimension {
            name: name.into(),
            datatype,
            cell_val_num: 1,
            filters: Pipeline::new(),
            uses_coords_filters: true,
            domain: Some((lo.to_vec(), hi.to_vec())),
            tile_extent: extent.map(<[u8]>::to_vec),
        }
    }

    /// A string dimension.
    pub(crate) fn str_dim(name: &str) -> Dimension {
        Dimension {
            name: name.into(),
            datatype: Datatype::StringAscii,
            cell_val_num: VAR_NUM,
            filters: Pipeline::new(),
            uses_coords_filters: true,
            domain: None,
            tile_extent: None,
        }
    }

    /// A sparse schema over `dims` with no attributes.
    pub(crate) fn schema(
        dims: Vec<Dimension>,
        tile_order: Layout,
        cell_order: Layout,
    ) -> ArraySchema {
        ArraySchema {
            name: "__test".into(),
            version: 22,
            allows_dups: false,
            array_type: ArrayType::Sparse,
            tile_order,
            cell_order,
            capacity: 10_000,
            coords_filters: Pipeline::new(),
            offsets_filters: Pipeline::new(),
            validity_filters: Pipeline::new(),
            dimensions: dims,
            attributes: Vec::new(),
            labels: Vec::new(),
            enumerations: Vec::new(),
            loaded_enumerations: Vec::new(),
            current_domain: None,
        }
    }

    fn i32s(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn f64s(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn grid_2d(tile_order: Layout, cell_order: Layout) -> ArraySchema {
        let (lo, hi, e) = (0i32.to_le_bytes(), 9i32.to_le_bytes(), 5i32.to_le_bytes());
        schema(
            vec![
                dim("x", Datatype::Int32, &lo, &hi, Some(&e)),
                dim("y", Datatype::Int32, &lo, &hi, Some(&e)),
            ],
            tile_order,
            cell_order,
        )
    }

    #[test]
    fn hilbert_values_match_tiledbs_unit_test() {
        // tiledb/sm/misc/test/unit_hilbert.cc
        for (c, want) in [
            ([2, 3], 9),
            ([0, 0], 0),
            ([0, 3], 5),
            ([3, 0], 15),
            ([5, 4], 35),
            ([4, 2], 30),
        ] {
            assert_eq!(coords_to_hilbert(&mut c.clone(), 4), want, "{c:?}");
        }
        for (c, want) in [
            ([0, 0, 0], 0),
            ([0, 0, 1], 1),
            ([0, 1, 0], 3),
            ([1, 0, 0], 7),
        ] {
            assert_eq!(coords_to_hilbert(&mut c.clone(), 4), want, "{c:?}");
        }
        assert_eq!(hilbert_bits(3).unwrap(), 21);
        assert_eq!(hilbert_bits(1).unwrap(), 63);
        assert!(hilbert_bits(16).is_err());
    }

    #[test]
    fn hilbert_order_of_tiledbs_cppapi_example() {
        // test/src/unit-cppapi-hilbert.cc: d1 [0, 100], d2 [0, 200]; global order a = 2, 3, 4, 1.
        let s = schema(
            vec![
                dim(
                    "d1",
                    Datatype::Int32,
                    &0i32.to_le_bytes(),
                    &100i32.to_le_bytes(),
                    None,
                ),
                dim(
                    "d2",
                    Datatype::Int32,
                    &0i32.to_le_bytes(),
                    &200i32.to_le_bytes(),
                    None,
                ),
            ],
            Layout::RowMajor,
            Layout::Hilbert,
        );
        let (d1, d2) = (i32s(&[1, 1, 4, 5]), i32s(&[1, 3, 2, 4]));
        let coords = [DimCoords::Fixed(&d1), DimCoords::Fixed(&d2)];
        assert_eq!(global_order(&s, &coords).unwrap(), [1, 0, 3, 2]);
    }

    #[test]
    fn row_and_col_major_orders_go_tile_by_tile() {
        let (x, y) = (i32s(&[0, 0, 6, 3]), i32s(&[7, 2, 1, 3]));
        let coords = [DimCoords::Fixed(&x), DimCoords::Fixed(&y)];
        let rr = grid_2d(Layout::RowMajor, Layout::RowMajor);
        assert_eq!(global_order(&rr, &coords).unwrap(), [1, 3, 0, 2]);
        let cc = grid_2d(Layout::ColMajor, Layout::ColMajor);
        assert_eq!(global_order(&cc, &coords).unwrap(), [1, 3, 2, 0]);
        // Without extents, only the cell order counts.
        let mut plain = grid_2d(Layout::RowMajor, Layout::ColMajor);
        for d in &mut plain.dimensions {
            d.tile_extent = None;
        }
        assert_eq!(global_order(&plain, &coords).unwrap(), [2, 1, 3, 0]);
    }

    #[test]
    fn strings_compare_as_signed_chars() {
        // The order TileDB 2.30 wrote these in (verified with TileDB-Py 0.36.1).
        let vals: [&[u8]; 8] = [b"a", b"\x80", b"\xff", b"b", b"\x7f", b"", b"a\x90", b"ab"];
        let mut offsets = Vec::new();
        let mut data = Vec::new();
        for v in vals {
            offsets.push(data.len() as u64);
            data.extend_from_slice(v);
        }
        let s = schema(vec![str_dim("s")], Layout::RowMajor, Layout::RowMajor);
        let coords = [DimCoords::Var {
            offsets: &offsets,
            data: &data,
        }];
        assert_eq!(global_order(&s, &coords).unwrap(), [5, 1, 2, 0, 6, 7, 3, 4]);
        // Hilbert values of strings: the first 8 bytes, each sign-extended.
        let d = str_dim("s");
        assert_eq!(map_to_uint64(&d, b"a", 63).unwrap(), 0x61 << 55);
        assert_eq!(map_to_uint64(&d, b"\x80", 63).unwrap(), 1 << 62);
        // A high byte sign-extends over the bytes before it: "a\x80" maps like "\xff\x80".
        assert_eq!(map_to_uint64(&d, b"a\x80", 63).unwrap(), 0xff80 << 47);
    }

    #[test]
    fn duplicates_and_domain_errors_use_tiledbs_words() {
        let x_dim = dim(
            "x",
            Datatype::Int32,
            &0i32.to_le_bytes(),
            &100i32.to_le_bytes(),
            Some(&10i32.to_le_bytes()),
        );
        let y_dim = dim(
            "y",
            Datatype::Float64,
            &(-5f64).to_le_bytes(),
            &5f64.to_le_bytes(),
            Some(&1f64.to_le_bytes()),
        );
        let mut s = schema(vec![x_dim, y_dim], Layout::RowMajor, Layout::RowMajor);
        let (x, y) = (i32s(&[3, 1, 3]), f64s(&[0.5, -2.25, 0.5]));
        let coords = [DimCoords::Fixed(&x), DimCoords::Fixed(&y)];
        let order = global_order(&s, &coords).unwrap();
        assert_eq!(order, [1, 0, 2]);
        let e = check_duplicates(&s, &coords, &order).unwrap_err();
        assert_eq!(
            e.message(),
            "Duplicate coordinates (3, 0.5) are not allowed"
        );
        s.allows_dups = true;
        check_duplicates(&s, &coords, &order).unwrap();

        let (x, y) = (i32s(&[3, 101]), f64s(&[0.5, -2.25]));
        let e = global_order(&s, &[DimCoords::Fixed(&x), DimCoords::Fixed(&y)]).unwrap_err();
        assert_eq!(
            e.message(),
            "Coordinate 101 is out of domain bounds [0, 100] on dimension 'x'"
        );
        let (x, y) = (i32s(&[3, 1]), f64s(&[0.1, -7.25]));
        let e = check_domain(&s, &[DimCoords::Fixed(&x), DimCoords::Fixed(&y)]).unwrap_err();
        assert_eq!(
            e.message(),
            "Coordinate -7.25 is out of domain bounds [-5, 5] on dimension 'y'"
        );
        let y = f64s(&[0.1, f64::NAN]);
        let e = check_domain(&s, &[DimCoords::Fixed(&x), DimCoords::Fixed(&y)]).unwrap_err();
        assert!(e.message().starts_with("Coordinate nan is out of"), "{e}");
    }

    #[test]
    fn current_domain_bounds_writes() {
        use crate::array::schema::Range;
        let mut s = schema(
            vec![
                dim(
                    "x",
                    Datatype::Int64,
                    &0i64.to_le_bytes(),
                    &100i64.to_le_bytes(),
                    None,
                ),
                str_dim("s"),
            ],
            Layout::RowMajor,
            Layout::RowMajor,
        );
        s.current_domain = Some(vec![
            Range::Fixed(0i64.to_le_bytes().to_vec(), 50i64.to_le_bytes().to_vec()),
            Range::Var(b"a".to_vec(), b"m".to_vec()),
        ]);
        let x: Vec<u8> = [3i64, 50].iter().flat_map(|v| v.to_le_bytes()).collect();
        let (offsets, data) = ([0u64, 1], b"ab\x7f");
        let ok = [
            DimCoords::Fixed(&x),
            DimCoords::Var {
                offsets: &offsets,
                data: &data[..2],
            },
        ];
        check_domain(&s, &ok).unwrap();
        let x2: Vec<u8> = [3i64, 70].iter().flat_map(|v| v.to_le_bytes()).collect();
        let e = check_domain(&s, &[DimCoords::Fixed(&x2), ok[1]]).unwrap_err();
        assert_eq!(
            e.message(),
            "Cells are written outside of the defined current domain: coordinate 70 is outside \
             [0, 50] on dimension 'x'"
        );
        // Strings against the current domain compare as unsigned bytes: "\x85" lies in
        // ["\x01", "\x90"] (as a signed char it would be below "\x01").
        s.current_domain.as_mut().unwrap()[1] = Range::Var(b"\x01".to_vec(), b"\x90".to_vec());
        let high = [
            DimCoords::Fixed(&x),
            DimCoords::Var {
                offsets: &[0, 1],
                data: b"\x85\x90",
            },
        ];
        check_domain(&s, &high).unwrap();
        let low = [
            DimCoords::Fixed(&x),
            DimCoords::Var {
                offsets: &[0, 1],
                data: b"\x85\x91",
            },
        ];
        assert!(check_domain(&s, &low).is_err());
    }

    #[test]
    fn negative_zero_equals_zero_but_duplicates_stay_adjacent() {
        let y_dim = dim(
            "y",
            Datatype::Float64,
            &(-5f64).to_le_bytes(),
            &5f64.to_le_bytes(),
            None,
        );
        let x_dim = dim(
            "x",
            Datatype::Int32,
            &0i32.to_le_bytes(),
            &9i32.to_le_bytes(),
            None,
        );
        let s = schema(vec![y_dim, x_dim], Layout::RowMajor, Layout::RowMajor);
        let (y, x) = (f64s(&[0.0, -0.0, 0.0, -0.0]), i32s(&[5, 1, 5, 9]));
        let coords = [DimCoords::Fixed(&y), DimCoords::Fixed(&x)];
        // y equal everywhere, so x decides: (−0, 1), (0, 5), (0, 5), (−0, 9).
        let order = global_order(&s, &coords).unwrap();
        assert_eq!(order, [1, 0, 2, 3]);
        assert!(check_duplicates(&s, &coords, &order).is_err());
    }

    #[test]
    fn global_order_writes_are_checked() {
        let s = grid_2d(Layout::RowMajor, Layout::RowMajor);
        let (x, y) = (i32s(&[0, 3, 0]), i32s(&[2, 3, 7]));
        let sorted = [DimCoords::Fixed(&x), DimCoords::Fixed(&y)];
        check_global_order(&s, &sorted, None).unwrap();
        let (x2, y2) = (i32s(&[0, 0]), i32s(&[7, 2]));
        let e = check_global_order(&s, &[DimCoords::Fixed(&x2), DimCoords::Fixed(&y2)], None)
            .unwrap_err();
        assert_eq!(
            e.message(),
            "Write failed; Coordinates (0, 7) succeed (0, 2) in the global order due to writes across tiles"
        );
        let (px, py) = (i32s(&[1]), i32s(&[2]));
        let prev = [DimCoords::Fixed(&px), DimCoords::Fixed(&py)];
        let e = check_global_order(&s, &sorted, Some(&prev)).unwrap_err();
        assert_eq!(
            e.message(),
            "Write failed; Coordinate (0, 2) comes before last written coordinate in the global order"
        );
    }

    #[test]
    fn shapes_are_checked() {
        let s = grid_2d(Layout::RowMajor, Layout::RowMajor);
        let (x, y) = (i32s(&[0, 3]), i32s(&[2]));
        let e = global_order(&s, &[DimCoords::Fixed(&x), DimCoords::Fixed(&y)]).unwrap_err();
        assert_eq!(e.message(), "dimension y has 1 coordinates, dimension x 2");
        let e = global_order(&s, &[DimCoords::Fixed(&x)]).unwrap_err();
        assert!(e.message().contains("1 coordinate buffers"), "{e}");
        let e = global_order(&s, &[DimCoords::Fixed(&x), DimCoords::Fixed(&x[..7])]).unwrap_err();
        assert!(e.message().contains("not whole 4-byte"), "{e}");
        let t = schema(vec![str_dim("s")], Layout::RowMajor, Layout::RowMajor);
        let e = global_order(
            &t,
            &[DimCoords::Var {
                offsets: &[0, 3, 2],
                data: b"abc",
            }],
        )
        .unwrap_err();
        assert!(e.message().contains("below the previous offset"), "{e}");
    }

    #[test]
    fn packed_keys_sort_like_the_comparator() {
        let mut rng = crate::codecs::test_data::Rng(0x9E37_79B9_7F4A_7C15);
        let layouts = [Layout::RowMajor, Layout::ColMajor, Layout::Hilbert];
        let mut packed = 0;
        for case in 0..300 {
            let ndim = 1 + rng.below(3) as usize;
            let mut dims = Vec::new();
            let mut cols: Vec<Vec<u8>> = Vec::new();
            let n = 1 + rng.below(200) as usize;
            for j in 0..ndim {
                let name = format!("d{j}");
                let ext = |r: &mut crate::codecs::test_data::Rng, v: Vec<u8>| {
                    (r.below(4) > 0).then_some(v)
                };
                match rng.below(4) {
                    0 => {
                        let lo = -(rng.below(1000) as i64);
                        let hi = lo + rng.below(2000) as i64;
                        let extent = 1 + rng.below(50) as i64;
                        let e = ext(&mut rng, extent.to_le_bytes().to_vec());
                        dims.push(dim(
                            &name,
                            Datatype::Int64,
                            &lo.to_le_bytes(),
                            &hi.to_le_bytes(),
                            e.as_deref(),
                        ));
                        let span = (hi - lo + 1) as u64;
                        cols.push(
                            (0..n)
                                .flat_map(|_| (lo + rng.below(span) as i64).to_le_bytes())
                                .collect(),
                        );
                    }
                    1 => {
                        let e = ext(&mut rng, 7u16.to_le_bytes().to_vec());
                        dims.push(dim(
                            &name,
                            Datatype::Uint16,
                            &3u16.to_le_bytes(),
                            &u16::MAX.to_le_bytes(),
                            e.as_deref(),
                        ));
                        cols.push(
                            (0..n)
                                .flat_map(|_| (3 + rng.below(65533) as u16).to_le_bytes())
                                .collect(),
                        );
                    }
                    2 => {
                        let e = ext(&mut rng, 0.25f64.to_le_bytes().to_vec());
                        dims.push(dim(
                            &name,
                            Datatype::Float64,
                            &(-2f64).to_le_bytes(),
                            &2f64.to_le_bytes(),
                            e.as_deref(),
                        ));
                        let vals = [-0.0, 0.0, 1.5, -2.0, 2.0, 0.125];
                        cols.push(
                            (0..n)
                                .flat_map(|_| {
                                    let v = if rng.below(2) == 0 {
                                        vals[rng.below(6) as usize]
                                    } else {
                                        (rng.below(4001) as f64 - 2000.0) / 1000.0
                                    };
                                    v.to_le_bytes()
                                })
                                .collect(),
                        );
                    }
                    _ => {
                        let e = ext(&mut rng, 1.5f32.to_le_bytes().to_vec());
                        dims.push(dim(
                            &name,
                            Datatype::Float32,
                            &(-10f32).to_le_bytes(),
                            &10f32.to_le_bytes(),
                            e.as_deref(),
                        ));
                        cols.push(
                            (0..n)
                                .flat_map(|_| ((rng.below(81) as f32 - 40.0) / 4.0).to_le_bytes())
                                .collect(),
                        );
                    }
                }
            }
            let tile_order = layouts[rng.below(2) as usize];
            let cell_order = layouts[rng.below(3) as usize];
            let s = schema(dims, tile_order, cell_order);
            let coords: Vec<DimCoords<'_>> = cols.iter().map(|c| DimCoords::Fixed(c)).collect();
            let cells = Cells::new(&s, &coords).unwrap();
            let order = Order::new(&cells).unwrap();
            let want = sort_compared(&order);
            let got = global_order(&s, &coords).unwrap();
            assert_eq!(got, want, "case {case}");
            if order.packed_key().is_some_and(|k| k.width <= 128) {
                packed += 1;
            }
        }
        assert!(packed > 150, "{packed} cases took the packed path");
    }

    #[test]
    fn std_sort_and_heap_sort_arrange_ties_as_libstdcxx() {
        // Permutations g++ 12's std::sort and std::partial_sort(b, e, e) gave indices sorted
        // by these keys (many ties).
        let keys = [
            2u64, 1, 3, 0, 0, 0, 2, 0, 1, 0, 0, 3, 3, 0, 1, 0, 3, 0, 0, 1, 0, 3, 0, 1, 0, 1, 2, 3,
            1, 0, 2, 1, 0, 1, 2, 0, 0, 0, 1, 3,
        ];
        let sorted = [
            32u64, 24, 22, 20, 18, 17, 29, 15, 13, 10, 9, 35, 7, 36, 5, 4, 3, 37, 33, 1, 31, 28,
            25, 38, 23, 19, 14, 8, 26, 30, 34, 6, 0, 21, 27, 16, 12, 11, 2, 39,
        ];
        let heap_sorted = [
            35u64, 22, 4, 7, 5, 9, 20, 17, 24, 18, 13, 3, 10, 36, 29, 15, 32, 37, 31, 33, 8, 38, 1,
            19, 23, 25, 28, 14, 34, 26, 6, 0, 30, 16, 39, 21, 11, 12, 2, 27,
        ];
        let less = |a: u64, b: u64| keys[a as usize] < keys[b as usize];
        let mut v: Vec<u64> = (0..40).collect();
        std_sort(&mut v, &less);
        assert_eq!(v, sorted);
        let mut v: Vec<u64> = (0..40).collect();
        heap_sort(&mut v, &less);
        assert_eq!(v, heap_sorted);
        let keys = [
            2u64, 2, 1, 1, 1, 2, 1, 1, 1, 0, 0, 2, 0, 0, 2, 1, 2, 1, 1, 2, 1, 1, 2, 0, 0,
        ];
        let less = |a: u64, b: u64| keys[a as usize] < keys[b as usize];
        let mut v: Vec<u64> = (0..25).collect();
        std_sort(&mut v, &less);
        let want = [
            12u64, 24, 23, 13, 10, 9, 7, 2, 21, 20, 18, 17, 15, 3, 4, 8, 6, 14, 0, 16, 11, 19, 5,
            22, 1,
        ];
        assert_eq!(v, want);
        let mut v: Vec<u64> = (0..25).collect();
        heap_sort(&mut v, &less);
        let want = [
            24u64, 9, 23, 10, 12, 13, 7, 8, 18, 20, 4, 21, 15, 3, 17, 2, 6, 16, 1, 19, 22, 0, 5,
            11, 14,
        ];
        assert_eq!(v, want);
    }

    #[test]
    fn tiledb_order_is_a_sorted_permutation_at_any_concurrency() {
        let mut s = grid_2d(Layout::RowMajor, Layout::RowMajor);
        s.allows_dups = true;
        let x = i32s(&[1, 1, 1, 1, 1, 1, 0, 0, 9, 9, 1, 1]);
        let y = i32s(&[2, 2, 2, 2, 2, 2, 0, 0, 9, 9, 2, 2]);
        let coords = [DimCoords::Fixed(&x), DimCoords::Fixed(&y)];
        let stable = global_order(&s, &coords).unwrap();
        assert_eq!(stable, [6, 7, 0, 1, 2, 3, 4, 5, 10, 11, 8, 9]);
        for c in [1, 2, 3, 4, 8, 64] {
            let p = global_order_as_tiledb(&s, &coords, c).unwrap();
            let key = |i: u64| (x[4 * i as usize], y[4 * i as usize]);
            assert!(p.windows(2).all(|w| key(w[0]) <= key(w[1])), "{c}: {p:?}");
            let mut sorted = p.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..12).collect::<Vec<u64>>());
        }
        // Without ties TileDB's order is the order.
        let (x, y) = (i32s(&[0, 0, 6, 3]), i32s(&[7, 2, 1, 3]));
        let coords = [DimCoords::Fixed(&x), DimCoords::Fixed(&y)];
        assert_eq!(
            global_order_as_tiledb(&s, &coords, 2).unwrap(),
            [1, 3, 0, 2]
        );
    }

    #[test]
    fn duplicates_hidden_between_signed_zeros_are_found() {
        let y_dim = dim(
            "y",
            Datatype::Float64,
            &(-5f64).to_le_bytes(),
            &5f64.to_le_bytes(),
            None,
        );
        let s = schema(vec![y_dim], Layout::RowMajor, Layout::RowMajor);
        let y = f64s(&[0.0, -0.0, 0.0]);
        let coords = [DimCoords::Fixed(&y)];
        let e = check_duplicates(&s, &coords, &[0, 1, 2]).unwrap_err();
        assert_eq!(e.message(), "Duplicate coordinates (0) are not allowed");
    }

    #[test]
    fn cpp_number_output() {
        assert_eq!(cpp_general(0.5, 6), "0.5");
        assert_eq!(cpp_general(1234567.5, 6), "1.23457e+06");
        assert_eq!(cpp_general(123456.0, 6), "123456");
        assert_eq!(cpp_general(0.0001, 6), "0.0001");
        assert_eq!(cpp_general(0.00001, 6), "1e-05");
        assert_eq!(cpp_general(0.1, 16), "0.1");
        assert_eq!(cpp_general(1.0 / 3.0, 16), "0.3333333333333333");
        assert_eq!(cpp_general(-5.0, 16), "-5");
        assert_eq!(cpp_general(1e100, 6), "1e+100");
        assert_eq!(cpp_f64_to_u64(f64::NAN), 1 << 63);
        assert_eq!(cpp_f64_to_u64(9.3e18), 9_300_000_000_000_000_000);
    }
}
