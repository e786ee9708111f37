//! Tile and fragment min/max/sum/null counts as TileDB 2.30 computes them when it writes
//! (docs/ARRAY.md §4.4, §7.5; TileDB's `TileMetadataGenerator` and
//! `FragmentMetadata::compute_fragment_min_max_sum_null_count`).
//!
//! TileDB's aggregates (`query().agg(...)`) read these instead of the cells wherever a whole
//! tile is covered, so they must be exact: the same cells, in the same order (float sums and
//! the saturation of integer sums depend on it), compared the way TileDB compares them
//! (`strncmp` for strings: bytes as unsigned, stopping at a zero byte; `a < b ? a : b` for
//! numbers, so a NaN replaces the running minimum).
//!
//! Where TileDB 2.30's writer gets a value wrong in a way its own aggregates then report, this
//! module writes the right value instead (see docs/DIFFERENCES.md):
//! * a nullable var-size CHAR/STRING_ASCII tile processed from a cell other than the first
//!   (dense writes that do not start at a tile's first cell, or 2-D tiles written row by row)
//!   reads the validity of cell `c` at `c - start` (`process_cell_range_var`), so padding
//!   and the wrong cells count as null, and min/max skip valid cells;
//! * the fragment minimum of a nullable fixed-size CHAR/STRING_ASCII field steps through the
//!   tile minimums only for tiles that are not all null (`compute_fragment_min_max_sum<char>`),
//!   so after an all-null tile it compares the wrong tiles' values.
//!
//! Null counts TileDB's aggregates never read (fields without min/max metadata: TileDB's
//! `null_count` aggregate fails on them before reading a count) are written as TileDB writes
//! them, so those fragments stay byte-identical: a fixed-size nullable field without min/max
//! (BLOB, GEOM, cell_val_num > 1) counts the nulls of the whole tile, padding included, once
//! per processed slab; a var-size nullable field without min/max (UTF-8 and other non-ASCII
//! strings) and a fixed-size STRING_UTF8/UTF16/UTF32/UCS2/UCS4/ANY field count no nulls.

use crate::array::fragment::metadata::{FieldSummary, TileMinMax};
pub use crate::array::fragment::metadata::{has_min_max, has_sum};
use crate::array::order::cpp::strncmp;
use crate::format::datatype::Datatype;

/// How TileDB's `process_cell_slab` treats a fixed-size datatype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
    /// CHAR and STRING_ASCII: compared with `strncmp` over the whole cell, summed as `char`.
    Char,
    /// BLOB and GEOM: only null counts.
    Bytes,
    /// Every other type (non-ASCII strings, ANY): nothing at all.
    Skipped,
}

fn kind_of(datatype: Datatype) -> Kind {
    use Datatype::*;
    match datatype {
        Int8 => Kind::I8,
        Int16 => Kind::I16,
        Int32 => Kind::I32,
        Int64 => Kind::I64,
        Bool | Uint8 => Kind::U8,
        Uint16 => Kind::U16,
        Uint32 => Kind::U32,
        Uint64 => Kind::U64,
        Float32 => Kind::F32,
        Float64 => Kind::F64,
        d if d.is_datetime() || d.is_time() => Kind::I64,
        StringAscii | Char => Kind::Char,
        Blob | GeomWkb | GeomWkt => Kind::Bytes,
        _ => Kind::Skipped,
    }
}

/// The running sum, in TileDB's sum type of the field (int64, uint64 or double).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Sum {
    Int(i64),
    Uint(u64),
    Float(f64),
}

impl Sum {
    fn zero(kind: Kind) -> Sum {
        match kind {
            Kind::U8 | Kind::U16 | Kind::U32 | Kind::U64 => Sum::Uint(0),
            Kind::F32 | Kind::F64 => Sum::Float(0.0),
            _ => Sum::Int(0),
        }
    }

    /// Adds one value as TileDB's `Sum<T, S>::sum` does; `false` when the sum saturated (the
    /// caller stops adding the rest of its range, as TileDB's loop breaks).
    fn add(&mut self, v: Value) -> bool {
        match (self, v) {
            (Sum::Int(s), Value::Int(v)) => {
                let v = v as i64;
                if *s > 0 && v > 0 && *s > i64::MAX - v {
                    *s = i64::MAX;
                    return false;
                }
                if *s < 0 && v < 0 && *s < i64::MIN - v {
                    *s = i64::MIN;
                    return false;
                }
                *s += v;
            }
            (Sum::Uint(s), Value::Uint(v)) => {
                let v = v as u64;
                if *s > u64::MAX - v {
                    *s = u64::MAX;
                    return false;
                }
                *s += v;
            }
            (Sum::Float(s), Value::Float(v)) => {
                if (*s < 0.0) == (v < 0.0) && s.abs() > f64::MAX - v.abs() {
                    *s = if *s < 0.0 { f64::MIN } else { f64::MAX };
                    return false;
                }
                *s += v;
            }
            _ => unreachable!("sum and value kinds come from the same datatype"),
        }
        true
    }

    fn bytes(self) -> [u8; 8] {
        match self {
            Sum::Int(s) => s.to_le_bytes(),
            Sum::Uint(s) => s.to_le_bytes(),
            Sum::Float(s) => s.to_le_bytes(),
        }
    }

    fn from_bytes(kind: Kind, b: [u8; 8]) -> Value {
        match Sum::zero(kind) {
            Sum::Int(_) => Value::Int(i64::from_le_bytes(b) as i128),
            Sum::Uint(_) => Value::Uint(u64::from_le_bytes(b) as u128),
            Sum::Float(_) => Value::Float(f64::from_le_bytes(b)),
        }
    }
}

/// One numeric value, widened (integers exactly, floats as f64: f32 → f64 is exact, so the
/// comparisons are those of the original type).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Value {
    Int(i128),
    Uint(u128),
    Float(f64),
}

impl Value {
    fn read(kind: Kind, b: &[u8]) -> Value {
        let a = |n: usize| -> [u8; 8] {
            let mut x = [0u8; 8];
            x[..n].copy_from_slice(&b[..n]);
            x
        };
        match kind {
            Kind::I8 | Kind::Char => Value::Int(b[0] as i8 as i128),
            Kind::I16 => Value::Int(i16::from_le_bytes([b[0], b[1]]) as i128),
            Kind::I32 => Value::Int(i32::from_le_bytes(b[..4].try_into().expect("4")) as i128),
            Kind::I64 => Value::Int(i64::from_le_bytes(a(8)) as i128),
            Kind::U8 => Value::Uint(b[0] as u128),
            Kind::U16 | Kind::U32 | Kind::U64 => {
                Value::Uint(u64::from_le_bytes(a(size_of_kind(kind))) as u128)
            }
            Kind::F32 => Value::Float(f32::from_le_bytes(b[..4].try_into().expect("4")) as f64),
            Kind::F64 => Value::Float(f64::from_le_bytes(a(8))),
            Kind::Bytes | Kind::Skipped => unreachable!("no values of {kind:?}"),
        }
    }

    /// `a < b` in the value's own type.
    fn lt(self, other: Value) -> bool {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a < b,
            (Value::Uint(a), Value::Uint(b)) => a < b,
            (Value::Float(a), Value::Float(b)) => a < b,
            _ => unreachable!("same kind"),
        }
    }

    /// TileDB's initial minimum (the type's largest value) and maximum (its lowest).
    fn initial(kind: Kind, max: bool) -> Value {
        let (lo, hi): (i128, i128) = match kind {
            Kind::I8 => (i8::MIN as i128, i8::MAX as i128),
            Kind::I16 => (i16::MIN as i128, i16::MAX as i128),
            Kind::I32 => (i32::MIN as i128, i32::MAX as i128),
            Kind::I64 => (i64::MIN as i128, i64::MAX as i128),
            Kind::U8 => return Value::Uint(if max { 0 } else { u8::MAX as u128 }),
            Kind::U16 => return Value::Uint(if max { 0 } else { u16::MAX as u128 }),
            Kind::U32 => return Value::Uint(if max { 0 } else { u32::MAX as u128 }),
            Kind::U64 => return Value::Uint(if max { 0 } else { u64::MAX as u128 }),
            Kind::F32 => {
                return Value::Float(if max {
                    f32::MIN as f64
                } else {
                    f32::MAX as f64
                });
            }
            Kind::F64 => return Value::Float(if max { f64::MIN } else { f64::MAX }),
            _ => unreachable!("numeric kinds only"),
        };
        Value::Int(if max { lo } else { hi })
    }

    /// The value in `kind`'s bytes.
    fn bytes(self, kind: Kind) -> Vec<u8> {
        let n = size_of_kind(kind);
        match self {
            Value::Int(v) => v.to_le_bytes()[..n].to_vec(),
            Value::Uint(v) => v.to_le_bytes()[..n].to_vec(),
            Value::Float(v) if kind == Kind::F32 => (v as f32).to_le_bytes().to_vec(),
            Value::Float(v) => v.to_le_bytes().to_vec(),
        }
    }
}

fn size_of_kind(kind: Kind) -> usize {
    match kind {
        Kind::I8 | Kind::U8 | Kind::Char | Kind::Bytes | Kind::Skipped => 1,
        Kind::I16 | Kind::U16 => 2,
        Kind::I32 | Kind::U32 | Kind::F32 => 4,
        Kind::I64 | Kind::U64 | Kind::F64 => 8,
    }
}

/// A numeric cell type as TileDB's `TileMetadataGenerator` handles it.
trait Num: Copy + PartialOrd {
    const SIZE: usize;
    /// TileDB's initial minimum (the type's largest value) and maximum (its lowest).
    const MIN_INIT: Self;
    const MAX_INIT: Self;
    fn load(b: &[u8]) -> Self;
    fn value(self) -> Value;
    fn from_value(v: Value) -> Self;
    /// Adds the value to the sum in the field's sum type; `false` when it saturated.
    fn add_to(self, sum: &mut Sum) -> bool;
}

macro_rules! num {
    ($($t:ty => $variant:ident, $wide:ty, $sum:ident;)*) => {$(
        impl Num for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            const MIN_INIT: Self = <$t>::MAX;
            const MAX_INIT: Self = <$t>::MIN;
            #[inline]
            fn load(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().expect("one cell"))
            }
            fn value(self) -> Value {
                Value::$variant(self as $wide)
            }
            fn from_value(v: Value) -> Self {
                match v {
                    Value::$variant(x) => x as $t,
                    _ => unreachable!("values of one kind"),
                }
            }
            #[inline]
            fn add_to(self, sum: &mut Sum) -> bool {
                num!(@add $sum, self, sum)
            }
        }
    )*};
    (@add Int, $v:expr, $sum:expr) => {
        match $sum {
            Sum::Int(s) => match s.checked_add($v as i64) {
                Some(x) => {
                    *s = x;
                    true
                }
                None => {
                    *s = if *s > 0 { i64::MAX } else { i64::MIN };
                    false
                }
            },
            _ => unreachable!("sum and value kinds come from the same datatype"),
        }
    };
    (@add Uint, $v:expr, $sum:expr) => {
        match $sum {
            Sum::Uint(s) => match s.checked_add($v as u64) {
                Some(x) => {
                    *s = x;
                    true
                }
                None => {
                    *s = u64::MAX;
                    false
                }
            },
            _ => unreachable!("sum and value kinds come from the same datatype"),
        }
    };
    (@add Float, $v:expr, $sum:expr) => {
        $sum.add(Value::Float($v as f64))
    };
}

num! {
    i8 => Int, i128, Int;
    i16 => Int, i128, Int;
    i32 => Int, i128, Int;
    i64 => Int, i128, Int;
    u8 => Uint, u128, Uint;
    u16 => Uint, u128, Uint;
    u32 => Uint, u128, Uint;
    u64 => Uint, u128, Uint;
    f32 => Float, f64, Float;
    f64 => Float, f64, Float;
}

/// The cells of one unfiltered tile, as the writer holds them.
#[derive(Clone, Copy, Debug)]
pub struct TileCells<'a> {
    /// Fixed-size cells, or the var-size data.
    pub data: &'a [u8],
    /// Var-size fields: the start offset of each cell in `data`.
    pub offsets: Option<&'a [u64]>,
    /// Nullable fields: one byte per cell (0 null).
    pub validity: Option<&'a [u8]>,
    /// Cells in the tile (padding included).
    pub cell_num: u64,
}

impl TileCells<'_> {
    /// Bytes of var-size cell `c`.
    fn var_cell(&self, c: u64) -> &[u8] {
        let o = self.offsets.expect("var-size tile");
        let start = o[c as usize] as usize;
        let end = if c + 1 == self.cell_num {
            self.data.len()
        } else {
            o[c as usize + 1] as usize
        };
        &self.data[start..end]
    }

    fn valid(&self, c: u64) -> bool {
        self.validity.is_none_or(|v| v[c as usize] != 0)
    }
}

/// The metadata of one tile: what TileDB's writer stores per tile.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TileMetadata {
    /// The minimum (a cell for fixed-size fields, a string for var-size ones).
    pub min: Vec<u8>,
    /// The maximum.
    pub max: Vec<u8>,
    /// The sum: int64, uint64 or double bytes by the field's type.
    pub sum: [u8; 8],
    /// The null cells counted.
    pub null_count: u64,
}

/// A string bound: where it is (copied) or not yet set.
type StrBound = Option<Vec<u8>>;

/// Computes the metadata of one tile from ranges ("slabs") of its cells, in the order TileDB
/// processes them (TileDB's `TileMetadataGenerator`).
#[derive(Clone, Debug)]
pub struct TileMetadataGenerator {
    kind: Kind,
    var: bool,
    cell_size: usize,
    has_min_max: bool,
    has_sum: bool,
    min: Option<Value>,
    max: Option<Value>,
    min_str: StrBound,
    max_str: StrBound,
    sum: Sum,
    null_count: u64,
    /// Whether a fixed-size range was processed (TileDB sets the min/max size to the cell
    /// size then).
    touched: bool,
}

impl TileMetadataGenerator {
    /// A generator for a field of `datatype`, `cell_val_num` values per cell (`var` for
    /// var-size), `cell_size` bytes per fixed-size cell.
    pub fn new(
        datatype: Datatype,
        is_dim: bool,
        var: bool,
        cell_size: usize,
        cell_val_num: u32,
    ) -> TileMetadataGenerator {
        let kind = kind_of(datatype);
        TileMetadataGenerator {
            kind,
            var,
            cell_size,
            has_min_max: has_min_max(datatype, is_dim, var, cell_val_num),
            has_sum: has_sum(datatype, var, cell_val_num),
            min: None,
            max: None,
            min_str: None,
            max_str: None,
            sum: Sum::zero(kind),
            null_count: 0,
            touched: false,
        }
    }

    /// Processes cells `start..end` of `tile` (`process_cell_slab`).
    pub fn process(&mut self, tile: &TileCells<'_>, start: u64, end: u64) {
        if self.var {
            self.process_var(tile, start, end);
            return;
        }
        match self.kind {
            Kind::Skipped => {}
            Kind::Bytes => {
                self.touched = true;
                self.count_whole_tile_nulls(tile);
            }
            Kind::Char => {
                self.touched = true;
                if self.has_min_max {
                    self.char_min_max(tile, start, end);
                } else {
                    self.count_whole_tile_nulls(tile);
                }
                if self.has_sum {
                    self.sum_range(tile, start, end);
                }
            }
            k => {
                self.touched = true;
                if !self.has_min_max && !self.has_sum {
                    self.count_whole_tile_nulls(tile);
                    return;
                }
                match k {
                    Kind::I8 => self.numeric::<i8>(tile, start, end),
                    Kind::I16 => self.numeric::<i16>(tile, start, end),
                    Kind::I32 => self.numeric::<i32>(tile, start, end),
                    Kind::I64 => self.numeric::<i64>(tile, start, end),
                    Kind::U8 => self.numeric::<u8>(tile, start, end),
                    Kind::U16 => self.numeric::<u16>(tile, start, end),
                    Kind::U32 => self.numeric::<u32>(tile, start, end),
                    Kind::U64 => self.numeric::<u64>(tile, start, end),
                    Kind::F32 => self.numeric::<f32>(tile, start, end),
                    _ => self.numeric::<f64>(tile, start, end),
                }
            }
        }
    }

    /// TileDB's nullable path without min/max: the nulls of the whole tile, padding included,
    /// on every call (see the module comment).
    fn count_whole_tile_nulls(&mut self, tile: &TileCells<'_>) {
        if let Some(v) = tile.validity {
            let n = (tile.cell_num as usize).min(v.len());
            self.null_count += v[..n].iter().filter(|b| **b == 0).count() as u64;
        }
    }

    /// Min/max (or TileDB's whole-tile null count) and sum of a numeric range, typed.
    fn numeric<T: Num>(&mut self, tile: &TileCells<'_>, start: u64, end: u64) {
        use std::cmp::Ordering::Less;
        let (a, b) = (start as usize, end as usize);
        let cells = tile.data[a * T::SIZE..b * T::SIZE].chunks_exact(T::SIZE);
        let valid = tile.validity.map(|v| &v[a..b]);
        if self.has_min_max {
            let mut min = self.min.map_or(T::MIN_INIT, T::from_value);
            let mut max = self.max.map_or(T::MAX_INIT, T::from_value);
            let mut nulls = 0u64;
            let mut visit = |v: T| {
                // `min = min < v ? min : v`: a NaN (never less) replaces the minimum.
                if min.partial_cmp(&v) != Some(Less) {
                    min = v;
                }
                if v.partial_cmp(&max) != Some(Less) {
                    max = v;
                }
            };
            match valid {
                None => cells.for_each(|c| visit(T::load(c))),
                Some(valid) => {
                    for (c, &ok) in cells.clone().zip(valid) {
                        if ok == 0 {
                            nulls += 1;
                        } else {
                            visit(T::load(c));
                        }
                    }
                }
            }
            self.null_count += nulls;
            self.min = Some(min.value());
            self.max = Some(max.value());
        } else {
            self.count_whole_tile_nulls(tile);
        }
        if self.has_sum {
            // TileDB's loop stops adding at saturation (for this range only).
            let cells = tile.data[a * T::SIZE..b * T::SIZE].chunks_exact(T::SIZE);
            match valid {
                None => {
                    for c in cells {
                        if !T::load(c).add_to(&mut self.sum) {
                            break;
                        }
                    }
                }
                Some(valid) => {
                    for (c, &ok) in cells.zip(valid) {
                        if ok != 0 && !T::load(c).add_to(&mut self.sum) {
                            break;
                        }
                    }
                }
            }
        }
    }

    fn char_min_max(&mut self, tile: &TileCells<'_>, start: u64, end: u64) {
        let n = self.cell_size;
        if tile.validity.is_none() && tile.data.is_empty() {
            return;
        }
        for c in start..end {
            if !tile.valid(c) {
                self.null_count += 1;
                continue;
            }
            let cell = &tile.data[c as usize * n..(c as usize + 1) * n];
            match &self.min_str {
                Some(m) if strncmp(m, cell, n).is_le() => {}
                _ => self.min_str = Some(cell.to_vec()),
            }
            match &self.max_str {
                Some(m) if strncmp(m, cell, n).is_ge() => {}
                _ => self.max_str = Some(cell.to_vec()),
            }
        }
    }

    fn sum_range(&mut self, tile: &TileCells<'_>, start: u64, end: u64) {
        let n = self.cell_size;
        for c in start..end {
            if !tile.valid(c) {
                continue;
            }
            if !self
                .sum
                .add(Value::read(self.kind, &tile.data[c as usize * n..]))
            {
                break;
            }
        }
    }

    /// Var-size cells (`process_cell_range_var`); see the module comment for the validity.
    fn process_var(&mut self, tile: &TileCells<'_>, start: u64, end: u64) {
        if !self.has_min_max || tile.cell_num == 0 {
            return;
        }
        for c in start..end {
            if !tile.valid(c) {
                self.null_count += 1;
                continue;
            }
            let value = tile.var_cell(c);
            match &self.min_str {
                None => {
                    self.min_str = Some(value.to_vec());
                    self.max_str = Some(value.to_vec());
                    continue;
                }
                Some(m) => {
                    if var_less(value, m) {
                        self.min_str = Some(value.to_vec());
                    }
                }
            }
            let m = self.max_str.as_ref().expect("set with the minimum");
            if var_less(m, value) {
                self.max_str = Some(value.to_vec());
            }
        }
    }

    /// The tile's metadata (`set_tile_metadata`).
    pub fn finish(self) -> TileMetadata {
        let size = if self.var || !self.touched {
            0
        } else {
            self.cell_size
        };
        let (min, max) = if self.var || self.kind == Kind::Char {
            let fixed = |b: StrBound| match b {
                Some(v) => v,
                None => vec![0; size],
            };
            (fixed(self.min_str), fixed(self.max_str))
        } else if self.has_min_max {
            let k = self.kind;
            (
                self.min
                    .unwrap_or_else(|| Value::initial(k, false))
                    .bytes(k),
                self.max.unwrap_or_else(|| Value::initial(k, true)).bytes(k),
            )
        } else {
            (vec![0; size], vec![0; size])
        };
        TileMetadata {
            min,
            max,
            sum: self.sum.bytes(),
            null_count: self.null_count,
        }
    }
}

/// `value` orders before `current` in TileDB's var-size comparison (`min_max_var`):
/// `strncmp` over the shorter length, then the shorter string first.
fn var_less(value: &[u8], current: &[u8]) -> bool {
    let n = value.len().min(current.len());
    match strncmp(current, value, n) {
        std::cmp::Ordering::Equal => value.len() < current.len(),
        o => o.is_gt(),
    }
}

/// What the fragment-level summary of one slot needs to know about its field.
#[derive(Clone, Copy, Debug)]
pub struct SummaryField {
    /// The field's datatype (the first dimension's for the legacy coords slot).
    pub datatype: Datatype,
    /// Whether it is a dimension.
    pub is_dim: bool,
    /// Whether it is var-size.
    pub var: bool,
    /// Values per cell (1 for the coords slot).
    pub cell_val_num: u32,
    /// Whether it is nullable.
    pub nullable: bool,
    /// Whether the array is dense (dense dimensions get no metadata).
    pub dense_array: bool,
}

/// A slot's fragment min, max, sum and null count from its tile metadata
/// (`compute_fragment_min_max_sum_null_count`). `cell_num(t)` is tile `t`'s cell count.
pub fn fragment_summary(
    f: &SummaryField,
    mins: &TileMinMax,
    maxs: &TileMinMax,
    sums: &[[u8; 8]],
    null_counts: &[u64],
    tile_num: u64,
    cell_num: impl Fn(u64) -> u64,
) -> FieldSummary {
    let mut out = FieldSummary {
        null_count: null_counts.iter().fold(0u64, |a, b| a.wrapping_add(*b)),
        ..FieldSummary::default()
    };
    let all_null = |t: u64| f.nullable && null_counts.get(t as usize) == Some(&cell_num(t));
    if f.var {
        if has_min_max(f.datatype, f.is_dim, true, f.cell_val_num) {
            var_summary(&mut out, mins, maxs, tile_num, all_null);
        }
        return out;
    }
    if f.dense_array && f.is_dim {
        return out;
    }
    let kind = kind_of(f.datatype);
    let minmax = has_min_max(f.datatype, f.is_dim, false, f.cell_val_num);
    match kind {
        Kind::Skipped => return out,
        Kind::Char | Kind::Bytes => {
            if minmax {
                let n = f.cell_val_num as usize;
                let (mut min, mut max): (StrBound, StrBound) = (None, None);
                for t in (0..tile_num).filter(|t| !all_null(*t)) {
                    let at = t as usize * n;
                    let (lo, hi) = (&mins.fixed[at..at + n], &maxs.fixed[at..at + n]);
                    if min.as_ref().is_none_or(|m| strncmp(m, lo, n).is_gt()) {
                        min = Some(lo.to_vec());
                    }
                    if max.as_ref().is_none_or(|m| strncmp(m, hi, n).is_lt()) {
                        max = Some(hi.to_vec());
                    }
                }
                out.min = min.unwrap_or_default();
                out.max = max.unwrap_or_default();
            }
            // TileDB's `compute_fragment_min_max_sum<char>` computes no sum (CHAR tiles
            // have sums; the fragment's stays 0).
            return out;
        }
        _ => {
            if minmax {
                let size = size_of_kind(kind);
                let mut min = Value::initial(kind, false);
                let mut max = Value::initial(kind, true);
                for t in (0..tile_num).filter(|t| !all_null(*t)) {
                    let at = t as usize * size;
                    let (lo, hi) = (
                        Value::read(kind, &mins.fixed[at..]),
                        Value::read(kind, &maxs.fixed[at..]),
                    );
                    if !min.lt(lo) {
                        min = lo;
                    }
                    if !hi.lt(max) {
                        max = hi;
                    }
                }
                out.min = min.bytes(kind);
                out.max = max.bytes(kind);
            }
        }
    }
    if has_sum(f.datatype, false, f.cell_val_num) {
        let mut sum = Sum::zero(kind);
        for t in (0..tile_num).filter(|t| !all_null(*t)) {
            let v = sums.get(t as usize).copied().unwrap_or([0; 8]);
            if !sum.add(Sum::from_bytes(kind, v)) {
                break;
            }
        }
        out.sum = sum.bytes();
    }
    out
}

/// The fragment min/max of a var-size string field (`min_max_var`).
fn var_summary(
    out: &mut FieldSummary,
    mins: &TileMinMax,
    maxs: &TileMinMax,
    tile_num: u64,
    all_null: impl Fn(u64) -> bool,
) {
    let value = |m: &TileMinMax, t: u64| -> Vec<u8> {
        let off = |i: u64| {
            let at = i as usize * 8;
            u64::from_le_bytes(m.fixed[at..at + 8].try_into().expect("8 bytes")) as usize
        };
        let end = if t + 1 == tile_num {
            m.var.len()
        } else {
            off(t + 1)
        };
        m.var[off(t)..end].to_vec()
    };
    let (mut min, mut max): (StrBound, StrBound) = (None, None);
    for t in (0..tile_num).filter(|t| !all_null(*t)) {
        let (lo, hi) = (value(mins, t), value(maxs, t));
        match (&min, &max) {
            (Some(m), Some(x)) => {
                if var_less(&lo, m) {
                    min = Some(lo);
                }
                if var_less(x, &hi) {
                    max = Some(hi);
                }
            }
            _ => {
                min = Some(lo);
                max = Some(hi);
            }
        }
    }
    out.min = min.unwrap_or_default();
    out.max = max.unwrap_or_default();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(data: &[u8], validity: Option<&[u8]>, n: u64) -> TileCells<'static> {
        TileCells {
            data: Box::leak(data.to_vec().into_boxed_slice()),
            offsets: None,
            validity: validity.map(|v| &*Box::leak(v.to_vec().into_boxed_slice())),
            cell_num: n,
        }
    }

    fn i32s(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn which_fields_get_metadata() {
        use Datatype::*;
        assert!(has_min_max(Int32, false, false, 1));
        assert!(!has_min_max(Int32, true, false, 1));
        assert!(!has_min_max(Int32, false, false, 2));
        assert!(has_min_max(StringAscii, false, true, VAR));
        assert!(has_min_max(Char, false, false, 4));
        assert!(!has_min_max(StringUtf8, false, true, VAR));
        assert!(!has_min_max(Blob, false, false, 1));
        assert!(has_sum(Char, false, 1));
        assert!(!has_sum(StringAscii, false, 1));
        assert!(has_sum(DatetimeMs, false, 1));
        assert!(!has_sum(Float64, false, 2));
    }

    const VAR: u32 = u32::MAX;

    #[test]
    fn padding_and_nulls_are_left_out() {
        // docs/ARRAY.md §4.4: a tile [2, pad, 5, pad] has min 2, max 5, sum 7.
        let t = fixed(&i32s(&[2, 0, 5, 0]), None, 4);
        let mut g = TileMetadataGenerator::new(Datatype::Int32, false, false, 4, 1);
        g.process(&t, 0, 1);
        g.process(&t, 2, 3);
        let m = g.finish();
        assert_eq!(m.min, 2i32.to_le_bytes());
        assert_eq!(m.max, 5i32.to_le_bytes());
        assert_eq!(i64::from_le_bytes(m.sum), 7);
        let t = fixed(&i32s(&[2, 9, 5, -4]), Some(&[1, 0, 1, 0]), 4);
        let mut g = TileMetadataGenerator::new(Datatype::Int32, false, false, 4, 1);
        g.process(&t, 0, 4);
        let m = g.finish();
        assert_eq!((m.min, m.null_count), (2i32.to_le_bytes().to_vec(), 2));
        assert_eq!(i64::from_le_bytes(m.sum), 7);
    }

    #[test]
    fn sums_saturate_per_range_as_tiledb() {
        let t = fixed(
            &[i64::MAX, 5, -10]
                .iter()
                .flat_map(|x: &i64| x.to_le_bytes())
                .collect::<Vec<_>>(),
            None,
            3,
        );
        let mut g = TileMetadataGenerator::new(Datatype::Int64, false, false, 8, 1);
        g.process(&t, 0, 2);
        // Saturated at MAX; the break ends only this range, the next one still adds.
        g.process(&t, 2, 3);
        assert_eq!(i64::from_le_bytes(g.finish().sum), i64::MAX - 10);
        let t = fixed(&[200u8, 100], None, 2);
        let mut g = TileMetadataGenerator::new(Datatype::Uint8, false, false, 1, 1);
        g.process(&t, 0, 2);
        assert_eq!(u64::from_le_bytes(g.finish().sum), 300);
    }

    #[test]
    fn nan_replaces_the_running_minimum() {
        let d: Vec<u8> = [1.0f64, f64::NAN, 3.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let mut g = TileMetadataGenerator::new(Datatype::Float64, false, false, 8, 1);
        g.process(&fixed(&d, None, 3), 0, 3);
        let m = g.finish();
        // min: 1 → NaN (1 < NaN is false) → 3 (NaN < 3 is false).
        assert_eq!(f64::from_le_bytes(m.min.try_into().unwrap()), 3.0);
        assert_eq!(f64::from_le_bytes(m.max.try_into().unwrap()), 3.0);
    }

    #[test]
    fn strings_compare_like_strncmp() {
        assert!(strncmp(b"a\0x", b"a\0y", 3).is_eq());
        assert!(strncmp(b"\xff", b"a", 1).is_gt());
        let data = b"bbaabc";
        let offsets = [0u64, 2, 3, 3];
        let t = TileCells {
            data,
            offsets: Some(&offsets),
            validity: None,
            cell_num: 4,
        };
        let mut g = TileMetadataGenerator::new(Datatype::StringAscii, false, true, 8, VAR);
        g.process(&t, 0, 4);
        let m = g.finish();
        // Cells "bb", "a", "", "abc": the empty string is the minimum, "bb" the maximum.
        assert_eq!((m.min, m.max), (b"".to_vec(), b"bb".to_vec()));
    }

    #[test]
    fn whole_tile_null_counts_without_min_max() {
        // BLOB: TileDB counts the nulls of the whole tile on every range.
        let t = fixed(&[0; 4], Some(&[0, 1, 0, 0]), 4);
        let mut g = TileMetadataGenerator::new(Datatype::Blob, false, false, 1, 1);
        g.process(&t, 0, 1);
        g.process(&t, 2, 3);
        assert_eq!(g.finish().null_count, 6);
        // Non-ASCII var strings: no counts at all.
        let offsets = [0u64, 1];
        let t = TileCells {
            data: b"ab",
            offsets: Some(&offsets),
            validity: Some(&[0, 0]),
            cell_num: 2,
        };
        let mut g = TileMetadataGenerator::new(Datatype::StringUtf8, false, true, 8, VAR);
        g.process(&t, 0, 2);
        assert_eq!(g.finish().null_count, 0);
    }

    #[test]
    fn fragment_summaries() {
        let f = SummaryField {
            datatype: Datatype::Int32,
            is_dim: false,
            var: false,
            cell_val_num: 1,
            nullable: true,
            dense_array: true,
        };
        let mins = TileMinMax {
            fixed: i32s(&[5, 0, -2]),
            var: vec![],
        };
        let maxs = TileMinMax {
            fixed: i32s(&[9, 0, 3]),
            var: vec![],
        };
        let sums = [14i64.to_le_bytes(), [0; 8], 1i64.to_le_bytes()];
        // Tile 1 is all null (4 of 4 cells): left out.
        let s = fragment_summary(&f, &mins, &maxs, &sums, &[0, 4, 1], 3, |_| 4);
        assert_eq!(s.min, (-2i32).to_le_bytes());
        assert_eq!(s.max, 9i32.to_le_bytes());
        assert_eq!(i64::from_le_bytes(s.sum), 15);
        assert_eq!(s.null_count, 5);
        let v = SummaryField {
            datatype: Datatype::StringAscii,
            var: true,
            cell_val_num: VAR,
            nullable: false,
            ..f
        };
        let offs = |o: &[u64]| o.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let mins = TileMinMax {
            fixed: offs(&[0, 1]),
            var: b"bab".to_vec(),
        };
        let maxs = TileMinMax {
            fixed: offs(&[0, 2]),
            var: b"xxy".to_vec(),
        };
        let s = fragment_summary(&v, &mins, &maxs, &[], &[], 2, |_| 4);
        assert_eq!((s.min, s.max), (b"ab".to_vec(), b"y".to_vec()));
    }
}
