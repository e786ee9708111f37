//! TileDB's Hilbert curve (`tiledb/sm/misc/hilbert.h`): coordinates mapped to `bits` bits
//! per dimension, then John Skilling's transform.

use super::Kind;
use super::cpp::cpp_f64_to_u64;
use crate::array::schema::Dimension;
use crate::error::{Error, Result};

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

pub(crate) fn map_kind_to_uint64(kind: Kind, coord: &[u8], lo: &[u8], hi: &[u8], bits: u32) -> u64 {
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
