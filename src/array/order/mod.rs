//! Every order TileDB's bytes depend on, in one place: the comparison of coordinates per
//! datatype, of strings and of NaN ([`Kind`], [`compare`], [`coord_less`], [`cmp_strings`]);
//! the global order of cells ([`global`]) and its checks ([`check`]); the Hilbert curve
//! ([`hilbert`]); and the C++ behaviours TileDB's output inherits ([`cpp`]: `std::sort`'s and
//! `parallel_sort`'s arrangement of ties, `%g` formatting, `double` → `uint64_t`, `strncmp`).
//!
//! Where TileDB 2.30 itself compares differently depending on the code path, both ways are
//! here and named (tested in `tests.rs`, `tiledb_compares_differently_by_path`):
//! - **strings**: the writers' sort (`Domain::cell_order_cmp_impl<char>`) compares `char` by
//!   `char`, and `char` is **signed** on x86-64, so `"\x80" < "a"`
//!   ([`StringOrder::SignedChars`]); the readers' merge, MBRs, non-empty domains and the
//!   current domain compare `std::string` / `std::string_view` (`memcmp`: **unsigned**, so
//!   `"a" < "\x80"`, [`StringOrder::UnsignedBytes`]). The Hilbert value of a string
//!   sign-extends each byte ([`hilbert::map_to_uint64`]).
//! - **NaN**: C++'s `<` makes NaN neither below nor above anything: the readers' comparisons
//!   ([`compare`]: `Equal`; [`coord_less`]: `false` both ways) follow it. The writers refuse
//!   NaN coordinates before sorting ([`check::check_domain`], "out of domain bounds"), so the
//!   writers' sort key ([`Kind::cmp`], which would put NaN above `+inf`) never sees one.
//! - **tile indices** are one rule for writers and readers ([`tile_index`], TileDB's
//!   `Dimension::tile_idx`): the writers' sort and the readers' merge of fragments both order
//!   cells by it, including its C++ edges (see there).
//! - **`-0.0` and `0.0`** are equal everywhere (numeric comparison); the writers' order
//!   among such cells is the sort's ([`global::global_order_as_tiledb`]).

pub mod check;
pub mod cpp;
pub mod global;
pub mod hilbert;
#[cfg(test)]
pub(crate) mod tests;

use crate::array::schema::Dimension;
use crate::array::value::{as_f64, as_i128};
use crate::error::{Error, Result};
use crate::format::datatype::Datatype;
use cpp::cpp_f64_to_u64;
use std::cmp::Ordering;

/// How a comparison orders the bytes of string coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StringOrder {
    /// C++ `char` by `char` (signed on x86-64): bytes 0x80..=0xFF below 0x00. TileDB's
    /// writers sort string coordinates this way.
    SignedChars,
    /// `std::string` / `std::string_view` (`memcmp`): bytes unsigned. TileDB's readers,
    /// MBRs, non-empty domains and current domains compare this way.
    UnsignedBytes,
}

/// Compares two strings bytewise in `order`, a shorter common prefix first.
pub fn cmp_strings(a: &[u8], b: &[u8], order: StringOrder) -> Ordering {
    match order {
        StringOrder::UnsignedBytes => a.cmp(b),
        StringOrder::SignedChars => {
            for (x, y) in a.iter().zip(b) {
                if x != y {
                    return (*x as i8).cmp(&(*y as i8));
                }
            }
            a.len().cmp(&b.len())
        }
    }
}

/// Compares two coordinates of `datatype` as TileDB's readers order them: numerically, floats
/// by C++'s `<` (NaN `Equal` to everything, `-0.0` equal to `0.0`), strings and bytes as
/// [`StringOrder::UnsignedBytes`].
pub fn compare(datatype: Datatype, a: &[u8], b: &[u8]) -> Ordering {
    match datatype {
        Datatype::Float32 | Datatype::Float64 => {
            let (x, y) = (
                as_f64(datatype, a).unwrap_or(f64::NAN),
                as_f64(datatype, b).unwrap_or(f64::NAN),
            );
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
        d if d.is_string() || d == Datatype::Char || d.is_byte() || d == Datatype::Any => {
            cmp_strings(a, b, StringOrder::UnsignedBytes)
        }
        d => {
            let (x, y) = (as_i128(d, a).unwrap_or(0), as_i128(d, b).unwrap_or(0));
            x.cmp(&y)
        }
    }
}

/// How a dimension's coordinates are typed (TileDB's `Domain::set_tile_cell_order_cmp_funcs`):
/// datetimes and times are `int64_t`, string dimensions `char`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
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
    pub(crate) fn fixed(datatype: Datatype) -> Option<Kind> {
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

    pub(crate) fn of(d: &Dimension) -> Result<Kind> {
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

    #[inline]
    pub(crate) fn size(self) -> usize {
        match self {
            Kind::I8 | Kind::U8 | Kind::Str => 1,
            Kind::I16 | Kind::U16 => 2,
            Kind::I32 | Kind::U32 | Kind::F32 => 4,
            Kind::I64 | Kind::U64 | Kind::F64 => 8,
        }
    }

    #[inline]
    pub(crate) fn is_float(self) -> bool {
        matches!(self, Kind::F32 | Kind::F64)
    }

    /// A fixed-size coordinate as a number: signed integers as i64, unsigned as u64 (both
    /// returned as i128), floats as f64 (exact for f32).
    #[inline]
    pub(crate) fn int(self, b: &[u8]) -> i128 {
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

    #[inline]
    pub(crate) fn float(self, b: &[u8]) -> f64 {
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
    #[inline]
    pub(crate) fn order_word(self, b: &[u8]) -> u64 {
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

    /// Integer kinds: `v - lo` in the coordinate's unsigned type, the dividend of
    /// [`tile_index`](Self::tile_index) (`tile_offset(extent, 0)` is its divisor): the tile
    /// index is `tile_offset(v, lo) / tile_offset(extent, zero)`. Not for floats and strings.
    #[inline]
    pub(crate) fn tile_offset(self, v: &[u8], lo: &[u8]) -> u64 {
        macro_rules! int {
            ($s:ty, $u:ty) => {{
                let f =
                    |b: &[u8]| <$s>::from_le_bytes(b[..size_of::<$s>()].try_into().expect("size"));
                f(v).wrapping_sub(f(lo)) as $u as u64
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
            Kind::F32 | Kind::F64 | Kind::Str => unreachable!("not an integer kind"),
        }
    }

    /// [`tile_index`] of a coordinate of this kind.
    #[inline]
    pub(crate) fn tile_index(self, v: &[u8], lo: &[u8], extent: &[u8]) -> u64 {
        match self {
            Kind::I8
            | Kind::U8
            | Kind::I16
            | Kind::U16
            | Kind::I32
            | Kind::U32
            | Kind::I64
            | Kind::U64 => self.tile_offset(v, lo) / self.tile_offset(extent, &[0; 8]),
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
    pub(crate) fn cmp(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Kind::Str => cmp_strings(a, b, StringOrder::SignedChars),
            _ => self.order_word(a).cmp(&self.order_word(b)),
        }
    }
}

/// The index of the space tile of coordinate `v` on a dimension of `datatype` with domain low
/// bound `lo` and tile extent `extent`: TileDB 2.30's `Dimension::tile_idx`, by which both its
/// writers (the global-order sort) and its readers (the merge of fragments in global order)
/// order cells. Integers: `(v - lo) / extent` in the unsigned type of the coordinate's width
/// (wrapping; no promotion to `int` for 8- and 16-bit types: an int8 domain [-100, 100] with
/// extent 50 puts 6 and 7 in the same tile 2). Reals: `(v - lo) / extent` in the coordinate
/// type (f32 arithmetic for FLOAT32), truncated to `uint64_t` as x86-64 C++ does it, so a
/// quotient of 2^64 or more is tile 0 ([`cpp::cpp_f64_to_u64`]): TileDB orders a cell at
/// 1e25 on a [0, 1e30] FLOAT64 dimension of extent 1 before the cell at 1.0 (observed with
/// TileDB-Py 0.36.1, in stored fragments and in reads merging fragments). Inside the domain
/// the quotient is non-negative, so truncation equals the floor of the dense grid
/// ([`crate::array::geometry`]). Types without tiles (strings) are all tile 0.
pub fn tile_index(datatype: Datatype, v: &[u8], lo: &[u8], extent: &[u8]) -> u64 {
    match Kind::fixed(datatype) {
        Some(k) if [v, lo, extent].iter().all(|b| b.len() >= k.size()) => {
            k.tile_index(v, lo, extent)
        }
        _ => 0,
    }
}

/// Whether the fixed-size coordinate `a` is below `b` on a dimension of `datatype`: C++'s `<`
/// on the coordinate type (`-0.0` is not below `0.0`), as TileDB's MBRs and non-empty domains
/// use it. Types TileDB has no dimensions of compare bytewise.
pub fn coord_less(datatype: Datatype, a: &[u8], b: &[u8]) -> bool {
    match Kind::fixed(datatype) {
        // NaN is below nothing and nothing is below NaN, as with C++'s `<`.
        Some(k) if a.len() >= k.size() && b.len() >= k.size() && k.is_float() => {
            k.float(a) < k.float(b)
        }
        Some(k) if a.len() >= k.size() && b.len() >= k.size() => k.cmp(a, b).is_lt(),
        _ => a < b,
    }
}
