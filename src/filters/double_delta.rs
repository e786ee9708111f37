//! DOUBLE_DELTA (6): TileDB's double-delta codec for one part (docs/FORMAT.md §5.10).
//!
//! Layout of one encoded part, with `s` the element size and `N = floor(len / s)`:
//! `u8 B, u64 N`, then either the whole part verbatim ("raw", when `B >= 8·s − 1`) or
//! `x[0]`, `x[1]` (as far as they exist) followed by a bitstream holding, for every later
//! value, one sign bit and `B` magnitude bits of its double delta, most significant bit
//! first, packed into little-endian `u64` words.
//!
//! Where TileDB 2.30 writes something its own reader cannot decode, this encoder writes an
//! encoding that the 2.30 decoder reads back exactly:
//! * an empty part (TileDB reads out of bounds) is written as `B = 8·s − 1, N = 0` and no
//!   bytes — the decoder takes the raw path and copies the zero remaining bytes;
//! * a part whose length is not a multiple of `s` (TileDB drops the trailing bytes on the
//!   bit-packed path) is written raw with `B = 8·s − 1` — the raw path copies every remaining
//!   byte of the part, the trailing ones included.
//!
//! Everywhere else the bytes are TileDB's, including the overflow errors raised at filter time.

use super::compression::codec_descriptor;
use crate::error::{Error, Result};
use crate::filters::int_values::{as_i64, value};
use crate::filters::registry::FilterDescriptor;
use crate::format::byte_reader::ByteReader;
use crate::format::datatype::Datatype;
use crate::format::filter_type::{Compressor, FilterType};
use crate::mem::OutBuf;

/// The element width in bytes and signedness DOUBLE_DELTA uses for element type `e`.
fn element(e: Datatype) -> Result<(usize, bool)> {
    use Datatype::*;
    Ok(match e {
        Int8 | Char => (1, true),
        Uint8 | Bool | Blob | GeomWkb | GeomWkt | Any => (1, false),
        StringAscii | StringUtf8 | StringUtf16 | StringUtf32 | StringUcs2 | StringUcs4 => {
            (1, false)
        }
        Int16 => (2, true),
        Uint16 => (2, false),
        Int32 => (4, true),
        Uint32 => (4, false),
        Uint64 => (8, false),
        Float32 | Float64 => {
            return Err(Error::invalid(format!(
                "DOUBLE_DELTA does not support the floating-point type {}; \
                 set an integer reinterpret datatype",
                e.name()
            )));
        }
        // INT64 and every DATETIME_* / TIME_* type.
        _ => (8, true),
    })
}

/// The raw-path bit width for elements of `s` bytes: the smallest `B` the decoder copies.
fn raw_bits(s: usize) -> u8 {
    (8 * s - 1) as u8
}

/// Appends the encoding of one part to `out`.
///
/// `e` is the element type: the reinterpret type if one is set, else the stage's datatype.
/// Fails with `InvalidArgument` for floating-point element types and, as TileDB does, when a
/// delta or a double delta does not fit in `i64`.
pub fn compress(e: Datatype, src: &[u8], out: &mut Vec<u8>) -> Result<()> {
    match element(e)? {
        (1, true) => compress_as::<1, true>(src, out),
        (1, false) => compress_as::<1, false>(src, out),
        (2, true) => compress_as::<2, true>(src, out),
        (2, false) => compress_as::<2, false>(src, out),
        (4, true) => compress_as::<4, true>(src, out),
        (4, false) => compress_as::<4, false>(src, out),
        (8, true) => compress_as::<8, true>(src, out),
        _ => compress_as::<8, false>(src, out),
    }
}

/// TileDB's bit width: 0 for at most two values, else the significant bits (at least 1) of
/// the largest of `|x1 − x0|` and every `|dd_i|`, with exact arithmetic checked against `i64`.
fn bit_width<const N: usize, const SIGNED: bool>(values: &[u8]) -> Result<u8> {
    let n = values.len() / N;
    if n <= 2 {
        return Ok(0);
    }
    match bit_width_i64::<N, SIGNED>(&values[..n * N]) {
        Some(bits) => Ok(bits),
        None => bit_width_exact::<N, SIGNED>(values),
    }
}

/// [`bit_width`] in `i64` arithmetic, branch-free over the values: `None` when a value does
/// not fit in `i64` or a delta or double delta overflows it, for [`bit_width_exact`] to
/// decide (and name the element). `values` holds at least three whole values.
fn bit_width_i64<const N: usize, const SIGNED: bool>(values: &[u8]) -> Option<u8> {
    let (x0, x1) = (
        as_i64::<N, SIGNED>(values),
        as_i64::<N, SIGNED>(&values[N..]),
    );
    // Unsigned 8-byte values at or above 2^63 are not `i64`s (they load as negative).
    let too_big = |x: i64| !SIGNED && N == 8 && x < 0;
    let (mut delta, o) = x1.overflowing_sub(x0);
    let mut unfit = o | too_big(x0) | too_big(x1);
    // Only the highest set bit of the largest magnitude matters: OR them (branch-free).
    let mut high_bits = delta.unsigned_abs();
    let mut prev = x1;
    for elem in values[2 * N..].chunks_exact(N) {
        let cur = as_i64::<N, SIGNED>(elem);
        let (d, o1) = cur.overflowing_sub(prev);
        let (dd, o2) = d.overflowing_sub(delta);
        unfit |= o1 | o2 | too_big(cur);
        high_bits |= dd.unsigned_abs();
        delta = d;
        prev = cur;
    }
    (!unfit).then(|| (64 - high_bits.leading_zeros()).max(1) as u8)
}

/// [`bit_width`] in exact 128-bit arithmetic, failing as TileDB does at the first delta or
/// double delta outside `i64`.
fn bit_width_exact<const N: usize, const SIGNED: bool>(values: &[u8]) -> Result<u8> {
    let n = values.len() / N;
    let i64_range = i64::MIN as i128..=i64::MAX as i128;
    let mut max_abs: u64 = 0;
    let mut prev_delta: Option<i128> = None;
    let mut prev = value::<N, SIGNED>(values);
    for (i, elem) in values[N..n * N].chunks_exact(N).enumerate() {
        let cur = value::<N, SIGNED>(elem);
        let delta = cur - prev;
        if !i64_range.contains(&delta) {
            return Err(Error::invalid(format!(
                "delta exceeds range of int64_t: element {} ({cur}) minus element {} ({prev})",
                i + 1,
                i
            )));
        }
        let magnitude = match prev_delta {
            None => delta,
            Some(p) => {
                let dd = delta - p;
                if !i64_range.contains(&dd) {
                    return Err(Error::invalid(format!(
                        "double delta exceeds range of int64_t at element {}: delta {delta} \
                         minus previous delta {p}",
                        i + 1
                    )));
                }
                dd
            }
        };
        max_abs = max_abs.max((magnitude as i64).unsigned_abs());
        prev_delta = Some(delta);
        prev = cur;
    }
    Ok((64 - max_abs.leading_zeros()).max(1) as u8)
}

fn compress_as<const N: usize, const SIGNED: bool>(src: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let n = src.len() / N;
    let mut bits = bit_width::<N, SIGNED>(src)?;
    let raw_min = raw_bits(N);
    // Parts TileDB cannot encode readably go raw (see the module documentation).
    if src.is_empty() || !src.len().is_multiple_of(N) {
        bits = bits.max(raw_min);
    }
    out.push(bits);
    out.extend_from_slice(&(n as u64).to_le_bytes());
    if bits >= raw_min {
        out.extend_from_slice(src);
        return Ok(());
    }
    // Not raw, so the part is a non-empty whole number of values.
    out.extend_from_slice(&src[..N]);
    if n == 1 {
        return Ok(());
    }
    out.extend_from_slice(&src[N..2 * N]);
    if n == 2 {
        return Ok(());
    }
    let mut w = BitWriter::new(out);
    let width = u32::from(bits);
    let mut x2 = as_i64::<N, SIGNED>(src);
    let mut x1 = as_i64::<N, SIGNED>(&src[N..]);
    for elem in src[2 * N..n * N].chunks_exact(N) {
        let x = as_i64::<N, SIGNED>(elem);
        // Exact: `bit_width` checked every delta and double delta.
        let dd = x.wrapping_sub(x1).wrapping_sub(x1.wrapping_sub(x2));
        let sign = u64::from(dd < 0);
        w.put((sign << width) | dd.unsigned_abs(), width + 1);
        x2 = x1;
        x1 = x;
    }
    w.finish();
    Ok(())
}

/// Packs values most significant bit first into `u64` words written little-endian.
struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    word: u64,
    used: u32,
}

impl<'a> BitWriter<'a> {
    fn new(out: &'a mut Vec<u8>) -> BitWriter<'a> {
        BitWriter {
            out,
            word: 0,
            used: 0,
        }
    }

    /// Appends the low `k` bits of `v` (`1 <= k <= 63`, `v < 2^k`).
    fn put(&mut self, v: u64, k: u32) {
        let free = 64 - self.used;
        if k < free {
            self.word |= v << (free - k);
            self.used += k;
        } else {
            let spill = k - free;
            self.word |= v >> spill;
            self.out.extend_from_slice(&self.word.to_le_bytes());
            self.word = if spill == 0 { 0 } else { v << (64 - spill) };
            self.used = spill;
        }
    }

    /// Writes the last, partially filled word (its unused low bits zero).
    fn finish(self) {
        if self.used > 0 {
            self.out.extend_from_slice(&self.word.to_le_bytes());
        }
    }
}

/// Decodes one part into exactly `dst.len()` bytes.
///
/// Follows TileDB 2.30's decoder: `B >= 8·s − 1` copies every remaining byte of the part;
/// otherwise it writes `x[0]`, stops if `N = 1`, writes `x[1]`, stops if `N = 2`, and decodes
/// `N − 2` further values (so `N = 0` yields two values). Anything that would make TileDB
/// read past the part, or that does not fill `dst` exactly, is `CorruptData`.
pub fn decompress(e: Datatype, src: &[u8], dst: &mut [u8]) -> Result<()> {
    OutBuf::over(dst, |o| decompress_into(e, src, o))
}

/// [`decompress`] into exactly the unwritten rest of `dst` (which may not be initialised).
pub fn decompress_into(e: Datatype, src: &[u8], dst: &mut OutBuf<'_>) -> Result<()> {
    let (size, _) = element(e)?;
    match size {
        1 => decompress_as::<1>(src, dst),
        2 => decompress_as::<2>(src, dst),
        4 => decompress_as::<4>(src, dst),
        _ => decompress_as::<8>(src, dst),
    }
}

/// The low `N` bytes of `x`, little-endian.
#[inline(always)]
fn low_bytes<const N: usize>(x: i64) -> [u8; N] {
    *x.to_le_bytes().first_chunk::<N>().expect("N ≤ 8")
}

fn decompress_as<const N: usize>(src: &[u8], dst: &mut OutBuf<'_>) -> Result<()> {
    let expected = dst.remaining();
    let mut r = ByteReader::new(src, "double delta part");
    let bits = r.u8()?;
    let n = r.u64()?;
    if bits >= raw_bits(N) {
        let rest = r.rest();
        if rest.len() != expected {
            return Err(Error::corrupt(format!(
                "raw double delta part holds {} bytes, expected {expected}",
                rest.len()
            )));
        }
        dst.put(rest);
        return Ok(());
    }
    // TileDB writes x0 and x1 before looking at N again, so N = 0 produces two values.
    let count = if n == 0 { 2 } else { n };
    if (count as u128) * (N as u128) != expected as u128 {
        return Err(Error::corrupt(format!(
            "double delta part holds {n} values of {N} bytes, expected {expected} bytes"
        )));
    }
    let count = count as usize;
    let first = r.take(N)?;
    dst.put(first);
    if count == 1 {
        return Ok(());
    }
    let second = r.take(N)?;
    dst.put(second);
    if n == 2 {
        return Ok(());
    }
    let width = u32::from(bits);
    let mut x2 = as_i64::<N, false>(first);
    let mut x1 = as_i64::<N, false>(second);
    let mut delta = x1.wrapping_sub(x2);
    // Fast path: values whose bits start before the last whole word are read two words at a
    // time; the exact reader below (TileDB's word refills and errors) takes over for the rest.
    let stream = r.rest();
    let words = stream.len() / 8;
    let word = |i: usize| u64::from_le_bytes(stream[8 * i..8 * i + 8].try_into().expect("8"));
    let per = 1 + width as usize;
    let fast = match words {
        0 | 1 => 0,
        _ => ((words - 1) * 64).div_ceil(per).min(count - 2),
    };
    let magnitude_mask = (1u64 << width) - 1;
    dst.put_arrays((0..fast).map(|i| {
        let p = i * per;
        let (w, o) = (p / 64, p % 64);
        // The 64 bits from bit `p` on (`>> 1 >> (63 - o)`: no shift by 64 when `o` is 0).
        let window = word(w) << o | (word(w + 1) >> 1) >> (63 - o);
        let v = window >> (64 - per);
        let magnitude = (v & magnitude_mask) as i64;
        // Branch-free sign: the sign bit of noisy data is unpredictable.
        let negative = -((v >> width) as i64);
        let dd = (magnitude ^ negative).wrapping_sub(negative);
        // x = dd + 2·x1 − x2, as a running delta: two one-cycle dependency chains.
        delta = delta.wrapping_add(dd);
        x1 = x1.wrapping_add(delta);
        low_bytes::<N>(x1)
    }));
    x2 = x1.wrapping_sub(delta);
    let p = fast * per;
    let (w, o) = (p / 64, p % 64);
    let mut bits_in = if fast == 0 {
        BitReader::new(r)?
    } else {
        // The state the exact reader would have reached: word `w` loaded, bit `63 - o` next.
        r.take(8 * (w + 1))?;
        BitReader {
            r,
            word: word(w),
            bit: 63 - o as i32,
        }
    };
    for _ in fast..count - 2 {
        let dd = bits_in.double_delta(width)?;
        let x = dd.wrapping_add(x1.wrapping_mul(2)).wrapping_sub(x2);
        dst.put_array(low_bytes::<N>(x));
        x2 = x1;
        x1 = x;
    }
    Ok(())
}

/// Reads the double-delta bitstream exactly as TileDB 2.30 does, failing where TileDB would
/// read past the part or shift by an out-of-range amount.
struct BitReader<'a> {
    r: ByteReader<'a>,
    word: u64,
    /// Index of the next bit to read in `word` (63 = most significant); −1 when exhausted.
    bit: i32,
}

impl<'a> BitReader<'a> {
    /// Starts the stream: TileDB reads the first word unconditionally.
    fn new(mut r: ByteReader<'a>) -> Result<BitReader<'a>> {
        let word = r.u64()?;
        Ok(BitReader { r, word, bit: 63 })
    }

    fn truncated() -> Error {
        Error::corrupt("double delta bitstream truncated")
    }

    /// One sign bit, then `width` (`<= 62`) magnitude bits.
    fn double_delta(&mut self, width: u32) -> Result<i64> {
        if self.bit < 0 {
            return Err(Self::truncated());
        }
        let negative = (self.word >> self.bit) & 1 == 1;
        self.bit -= 1;
        if self.bit < 0 {
            // After a sign bit the next word is read whether or not bits remain to be read.
            self.word = self.r.u64()?;
            self.bit = 63;
        }
        let mut left = width as i32;
        let mut magnitude: u64 = 0;
        while left > 0 {
            if self.bit < 0 {
                return Err(Self::truncated());
            }
            let take = (self.bit + 1).min(left);
            let chunk = (self.word << (63 - self.bit)) >> (64 - take);
            magnitude = (magnitude << take) | chunk;
            self.bit -= take;
            left -= take;
            // After magnitude bits the next word is read only while input remains.
            if self.bit < 0 && self.r.remaining() > 0 {
                self.word = self.r.u64()?;
                self.bit = 63;
            }
        }
        let dd = magnitude as i64;
        Ok(if negative { dd.wrapping_neg() } else { dd })
    }
}

/// The DOUBLE_DELTA filter's descriptor (reinterpret datatype stored from format version 20).
pub const DESCRIPTOR: FilterDescriptor = codec_descriptor(
    FilterType::DoubleDelta,
    Compressor::DoubleDelta,
    Some(20),
    64,
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tile::Tile;
    use crate::filters::config::Filter;
    use crate::filters::testing::unhex as hex;
    use crate::format::filter_type::FilterType;
    use crate::pipeline::Pipeline;

    fn enc(e: Datatype, src: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        compress(e, src, &mut out)?;
        Ok(out)
    }

    fn dec(e: Datatype, src: &[u8], len: usize) -> Result<Vec<u8>> {
        let mut dst = vec![0xAAu8; len];
        decompress(e, src, &mut dst)?;
        Ok(dst)
    }

    fn roundtrip(e: Datatype, src: &[u8]) -> Vec<u8> {
        let out = enc(e, src).unwrap();
        assert_eq!(dec(e, &out, src.len()).unwrap(), src, "{e:?} {src:?}");
        out
    }

    fn le<T: Copy, const N: usize>(v: &[T], f: fn(T) -> [u8; N]) -> Vec<u8> {
        v.iter().flat_map(|&x| f(x)).collect()
    }

    /// A model decoder written independently from the one above: MSB-first bit list.
    fn model_decode(s: usize, enc: &[u8]) -> Vec<u8> {
        let b = enc[0] as usize;
        let n = u64::from_le_bytes(enc[1..9].try_into().unwrap()) as usize;
        if b >= 8 * s - 1 {
            return enc[9..].to_vec();
        }
        if n <= 2 {
            return enc[9..9 + n * s].to_vec();
        }
        let mut vals: Vec<i128> = enc[9..9 + n.min(2) * s]
            .chunks(s)
            .map(|c| c.iter().rev().fold(0i128, |a, &x| (a << 8) | x as i128))
            .collect();
        let bits: Vec<u8> = enc[9 + 2 * s..]
            .chunks(8)
            .flat_map(|w| {
                let w = u64::from_le_bytes(w.try_into().unwrap());
                (0..64).rev().map(move |i| ((w >> i) & 1) as u8)
            })
            .collect();
        let mut pos = 0;
        for i in 2..n {
            let neg = bits[pos] == 1;
            pos += 1;
            let mut m: i128 = 0;
            for _ in 0..b {
                m = (m << 1) | bits[pos] as i128;
                pos += 1;
            }
            let dd = if neg { -m } else { m };
            let v = (dd + 2 * vals[i - 1] - vals[i - 2]).rem_euclid(1i128 << (8 * s));
            vals.push(v);
        }
        vals.iter()
            .flat_map(|v| (*v as u128).to_le_bytes()[..s].to_vec())
            .collect()
    }

    #[test]
    fn spec_vector_int64() {
        // docs/FORMAT.md §9.2: INT64 [10,13,16,20,25,31,30], B = 3.
        let src = le(&[10i64, 13, 16, 20, 25, 31, 30], i64::to_le_bytes);
        let out = roundtrip(Datatype::Int64, &src);
        assert_eq!(
            out,
            hex("03 0700000000000000 0a00000000000000 0d00000000000000 0000000000f01101")
        );
    }

    #[test]
    fn spec_vector_int32_first_delta_counts() {
        let src = le(&[0i32, 100, 200, 300, 400], i32::to_le_bytes);
        let out = roundtrip(Datatype::Int32, &src);
        assert_eq!(
            out,
            hex("07 0500000000000000 00000000 64000000 0000000000000000")
        );
    }

    #[test]
    fn empty_part_is_raw_with_no_bytes() {
        for e in [
            Datatype::Uint8,
            Datatype::Int16,
            Datatype::Uint32,
            Datatype::Int64,
        ] {
            let s = e.size();
            let out = roundtrip(e, &[]);
            let mut want = vec![(8 * s - 1) as u8];
            want.extend_from_slice(&0u64.to_le_bytes());
            assert_eq!(out, want, "{e:?}");
        }
    }

    #[test]
    fn partial_trailing_value_goes_raw() {
        // 3 INT32 values and 2 trailing bytes: TileDB would bit-pack and drop the 2 bytes.
        let mut src = le(&[1i32, 2, 3], i32::to_le_bytes);
        src.extend_from_slice(&[0xEE, 0xFF]);
        let out = roundtrip(Datatype::Int32, &src);
        assert_eq!(out[0], 31);
        assert_eq!(&out[1..9], &3u64.to_le_bytes());
        assert_eq!(&out[9..], &src[..]);
        // Shorter than one value.
        let out = roundtrip(Datatype::Int64, &[1, 2, 3]);
        assert_eq!(out, hex("3f 0000000000000000 010203"));
        // Overflow is still checked over the whole values, as TileDB does.
        let mut src = le(&[i64::MIN, i64::MAX, 0], i64::to_le_bytes);
        src.push(7);
        assert!(matches!(
            enc(Datatype::Int64, &src),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn one_and_two_values() {
        let out = roundtrip(Datatype::Int64, &42i64.to_le_bytes());
        assert_eq!(out, hex("00 0100000000000000 2a00000000000000"));
        let src = le(&[i64::MIN, i64::MAX], i64::to_le_bytes);
        let out = roundtrip(Datatype::Int64, &src);
        assert_eq!(
            out,
            hex("00 0200000000000000 0000000000000080 ffffffffffffff7f")
        );
        let out = roundtrip(Datatype::Uint8, &[255, 0]);
        assert_eq!(out, hex("00 0200000000000000 ff00"));
    }

    #[test]
    fn overflow_errors_name_what_overflowed() {
        let src = le(&[i64::MIN, i64::MAX, 0], i64::to_le_bytes);
        let e = enc(Datatype::Int64, &src).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)));
        assert!(
            e.message().contains("delta exceeds range of int64_t"),
            "{e}"
        );
        let src = le(&[0u64, u64::MAX, 0], u64::to_le_bytes);
        let e = enc(Datatype::Uint64, &src).unwrap_err();
        assert!(
            e.message().contains("delta exceeds range of int64_t"),
            "{e}"
        );
        // Deltas fit, the double delta does not.
        let src = le(&[0i64, 3 << 61, 0], i64::to_le_bytes);
        let e = enc(Datatype::Int64, &src).unwrap_err();
        assert!(
            e.message()
                .contains("double delta exceeds range of int64_t"),
            "{e}"
        );
        // Exactly i64::MIN as a delta is representable (TileDB accepts it).
        let src = le(&[1u64 << 63, 0], u64::to_le_bytes);
        roundtrip(Datatype::Uint64, &src);
        // A double delta of exactly i64::MIN has |dd| = 2^63: B = 64, raw.
        let src = le(&[0i64, 0, i64::MIN], i64::to_le_bytes);
        let out = roundtrip(Datatype::Int64, &src);
        assert_eq!(out[0], 64);
        // Two values never overflow: no delta is computed.
        roundtrip(Datatype::Uint64, &le(&[0u64, u64::MAX], u64::to_le_bytes));
        // UINT64 values at or above 2^63 are not i64s: the exact path decides, and small
        // steps between them still pack narrow.
        let src = le(&[u64::MAX - 9, u64::MAX - 5, u64::MAX], u64::to_le_bytes);
        let out = roundtrip(Datatype::Uint64, &src);
        assert_eq!(out[0], 3);
    }

    /// The i64 fast path of the bit width agrees with the exact one wherever it answers, and
    /// answers for every part of values that fit in i64 without an overflowing delta.
    #[test]
    fn fast_bit_width_matches_exact() {
        let edges = [i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX];
        let mut next = crate::filters::testing::xorshift(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let n = 3 + (next() % 6) as usize;
            let vals: Vec<u64> = (0..n)
                .map(|_| match next() % 4 {
                    0 => edges[(next() % edges.len() as u64) as usize] as u64,
                    1 => next(),
                    _ => next() % 64,
                })
                .collect();
            let bytes = le(&vals, u64::to_le_bytes);
            let exact_s = bit_width_exact::<8, true>(&bytes).ok();
            let exact_u = bit_width_exact::<8, false>(&bytes).ok();
            if let Some(b) = bit_width_i64::<8, true>(&bytes) {
                assert_eq!(Some(b), exact_s, "{vals:?}");
            } else {
                assert!(exact_s.is_none(), "signed fast path gave up on {vals:?}");
            }
            if let Some(b) = bit_width_i64::<8, false>(&bytes) {
                assert_eq!(Some(b), exact_u, "{vals:?}");
            }
            let small = le(
                &vals.iter().map(|&v| v as u32).collect::<Vec<_>>(),
                u32::to_le_bytes,
            );
            for (fast, exact) in [
                (
                    bit_width_i64::<4, true>(&small),
                    bit_width_exact::<4, true>(&small).ok(),
                ),
                (
                    bit_width_i64::<4, false>(&small),
                    bit_width_exact::<4, false>(&small).ok(),
                ),
            ] {
                assert_eq!(fast, exact, "{vals:?}");
            }
        }
    }

    #[test]
    fn floats_are_refused() {
        assert!(matches!(
            enc(Datatype::Float32, &[0; 8]),
            Err(Error::InvalidArgument(_))
        ));
        assert!(dec(Datatype::Float64, &[0; 9], 0).is_err());
    }

    #[test]
    fn roundtrips_every_integer_type_and_width() {
        let types = [
            Datatype::Int8,
            Datatype::Uint8,
            Datatype::Char,
            Datatype::Bool,
            Datatype::Blob,
            Datatype::StringAscii,
            Datatype::Any,
            Datatype::Int16,
            Datatype::Uint16,
            Datatype::Int32,
            Datatype::Uint32,
            Datatype::Int64,
            Datatype::Uint64,
            Datatype::DatetimeNs,
            Datatype::DatetimeYear,
            Datatype::TimeAs,
        ];
        let mut next = crate::filters::testing::xorshift(0x1234_5678_9abc_def0);
        for e in types {
            let s = e.size();
            for n in [0usize, 1, 2, 3, 4, 7, 8, 9, 63, 64, 65, 200] {
                for spread in [0u32, 1, 3, 7, 12, 20, 40, 62, 64] {
                    // A random walk with steps of about `spread` bits.
                    let mut v: u64 = next();
                    let mut src = Vec::new();
                    for _ in 0..n {
                        let step = if spread == 0 {
                            0
                        } else if spread >= 64 {
                            next()
                        } else {
                            next() % (1u64 << spread)
                        };
                        v = v.wrapping_add(step);
                        src.extend_from_slice(&v.to_le_bytes()[..s]);
                    }
                    match enc(e, &src) {
                        Ok(out) => {
                            assert_eq!(dec(e, &out, src.len()).unwrap(), src);
                            assert_eq!(model_decode(s, &out), src, "{e:?} n={n} spread={spread}");
                        }
                        Err(err) => {
                            assert_eq!(s, 8, "only 64-bit types can overflow: {err}");
                            assert!(err.message().contains("exceeds range of int64_t"));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn bit_widths_near_the_raw_threshold() {
        // INT16: raw iff B >= 15. A max double delta needing 14 bits stays packed.
        let src = le(&[0i16, 0, (1 << 14) - 1], i16::to_le_bytes);
        let out = roundtrip(Datatype::Int16, &src);
        assert_eq!(out[0], 14);
        assert_eq!(out.len(), 9 + 4 + 8);
        let src = le(&[0i16, 0, 1 << 14], i16::to_le_bytes);
        let out = roundtrip(Datatype::Int16, &src);
        assert_eq!(out[0], 15);
        assert_eq!(out.len(), 9 + 6);
        // UINT8: raw iff B >= 7.
        let out = roundtrip(Datatype::Uint8, &[0, 255, 0, 255, 3]);
        assert_eq!(out, hex("09 0500000000000000 00ff00ff03"));
        // A 62-bit double delta straddling words, INT64.
        let src = le(&[0i64, 0, (1 << 61) - 1, 0, 5, -7], i64::to_le_bytes);
        let out = roundtrip(Datatype::Int64, &src);
        assert_eq!(out[0], 62);
        assert_eq!(model_decode(8, &out), src);
    }

    #[test]
    fn reinterpreted_float64_data() {
        let f: Vec<u8> = [1.0f64, 1.5, 2.25, -3.0, 1e10]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        for e in [Datatype::Int32, Datatype::Uint8, Datatype::Uint16] {
            roundtrip(e, &f);
        }
        // As INT64 the sign flip of -3.0 overflows the double delta, as in TileDB.
        assert!(enc(Datatype::Int64, &f).is_err());
        let f: Vec<u8> = [1.0f64, 1.5, 2.25, 2.5, 3.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        roundtrip(Datatype::Int64, &f);
    }

    #[test]
    fn decoder_follows_tiledb_on_odd_headers() {
        // B > 63 is TileDB's raw path for every type.
        assert_eq!(
            dec(Datatype::Int64, &hex("ff 0500000000000000 0102"), 2).unwrap(),
            [1, 2]
        );
        assert_eq!(
            dec(Datatype::Uint8, &hex("07 0000000000000000 0102"), 2).unwrap(),
            [1, 2]
        );
        // Bit-packed N = 0: TileDB writes x0 and x1 and reads one (unused) word.
        assert_eq!(
            dec(
                Datatype::Uint8,
                &hex("03 0000000000000000 0102 0000000000000000"),
                2
            )
            .unwrap(),
            [1, 2]
        );
        assert!(dec(Datatype::Uint8, &hex("03 0000000000000000 0102"), 2).is_err());
        // N disagreeing with the output size.
        assert!(
            dec(
                Datatype::Int32,
                &hex("00 0200000000000000 01000000 02000000"),
                12
            )
            .is_err()
        );
        assert!(dec(Datatype::Int32, &hex("00 ffffffffffffffff 01000000"), 4).is_err());
        // Raw part of the wrong length.
        assert!(dec(Datatype::Int32, &hex("1f 0100000000000000 010000"), 4).is_err());
        // Truncated bitstream: 5 values need 2 words at B = 40.
        let src = le(&[0i64, 0, 1 << 39, 0, 1 << 39], i64::to_le_bytes);
        let out = enc(Datatype::Int64, &src).unwrap();
        assert_eq!(out[0], 41);
        assert_eq!(dec(Datatype::Int64, &out, 40).unwrap(), src);
        assert!(dec(Datatype::Int64, &out[..out.len() - 8], 40).is_err());
        // Trailing junk after a stream that ends mid-word is ignored, as TileDB does.
        let mut junk = out.clone();
        junk.extend_from_slice(&[1, 2, 3]);
        assert_eq!(dec(Datatype::Int64, &junk, 40).unwrap(), src);
    }

    #[test]
    fn word_boundary_reads_match_tiledb() {
        // INT64, B = 31 (32 bits per value): 4 values fill exactly 2 words. The 2nd and 4th
        // values end on a word boundary; TileDB then reads the next word only if input
        // remains, so the stream decodes without a 3rd word.
        let src = le(&[0i64, 0, 1 << 29, 0, 0, 1 << 29], i64::to_le_bytes);
        let out = enc(Datatype::Int64, &src).unwrap();
        assert_eq!(out[0], 31);
        assert_eq!(out.len(), 9 + 16 + 16);
        assert_eq!(dec(Datatype::Int64, &out, src.len()).unwrap(), src);
        assert_eq!(model_decode(8, &out), src);
        // With 1..=7 junk bytes after it, TileDB's eager word read fails.
        let mut junk = out.clone();
        junk.push(0);
        assert!(dec(Datatype::Int64, &junk, src.len()).is_err());
        // With a whole junk word, it succeeds.
        junk.extend_from_slice(&[0; 7]);
        assert_eq!(dec(Datatype::Int64, &junk, src.len()).unwrap(), src);
        // A sign bit that ends a word forces the next word to exist, even with B = 0.
        let crafted = {
            let mut v = hex("00 4200000000000000 00 00");
            v.extend_from_slice(&0u64.to_le_bytes());
            v
        };
        // 66 values of B = 0: 64 sign bits use the first word, then a second word is required.
        assert!(dec(Datatype::Uint8, &crafted, 66).is_err());
        let mut crafted2 = crafted.clone();
        crafted2.extend_from_slice(&0u64.to_le_bytes());
        assert_eq!(dec(Datatype::Uint8, &crafted2, 66).unwrap(), vec![0u8; 66]);
    }

    /// The decoder without its two-word fast path: every value through the exact reader.
    fn decode_exact_only<const N: usize>(src: &[u8], len: usize) -> Result<Vec<u8>> {
        let mut dst = vec![0u8; len];
        let mut r = ByteReader::new(src, "double delta part");
        let bits = r.u8()?;
        let n = r.u64()?;
        if bits >= raw_bits(N) {
            return OutBuf::over(&mut dst, |o| decompress_as::<N>(src, o)).map(|_| dst);
        }
        let count = if n == 0 { 2 } else { n as usize };
        if count * N != len || count < 3 || n == 2 {
            return OutBuf::over(&mut dst, |o| decompress_as::<N>(src, o)).map(|_| dst);
        }
        dst[..N].copy_from_slice(r.take(N)?);
        dst[N..2 * N].copy_from_slice(r.take(N)?);
        let mut bits_in = BitReader::new(r)?;
        let (mut x2, mut x1) = (as_i64::<N, false>(&dst), as_i64::<N, false>(&dst[N..]));
        for out in dst[2 * N..].chunks_exact_mut(N) {
            let dd = bits_in.double_delta(u32::from(bits))?;
            let x = dd.wrapping_add(x1.wrapping_mul(2)).wrapping_sub(x2);
            out.copy_from_slice(&x.to_le_bytes()[..N]);
            x2 = x1;
            x1 = x;
        }
        Ok(dst)
    }

    #[test]
    fn fast_path_equals_the_exact_reader_on_any_stream() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for width in 0u8..=62 {
            for values in [3usize, 4, 5, 63, 64, 65, 127, 129, 300] {
                let body = (values * (1 + width as usize)).div_ceil(64) * 8;
                for extra in [0usize, 8, 16] {
                    for cut in [0usize, 1, 3, 8, 9] {
                        let mut src = vec![width];
                        src.extend_from_slice(&(values as u64).to_le_bytes());
                        src.extend((0..16 + body + extra).map(|_| next() as u8));
                        src.truncate(src.len().saturating_sub(cut));
                        let mut dst = vec![0u8; values * 8];
                        let got =
                            OutBuf::over(&mut dst, |o| decompress_as::<8>(&src, o)).map(|_| dst);
                        let want = decode_exact_only::<8>(&src, values * 8);
                        match (&got, &want) {
                            (Ok(a), Ok(b)) => assert_eq!(a, b, "width {width} values {values}"),
                            (Err(a), Err(b)) => assert_eq!(a.message(), b.message()),
                            _ => panic!(
                                "width {width} values {values} cut {cut}: {got:?} vs {want:?}"
                            ),
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn corrupt_input_never_panics() {
        let cases: Vec<(Datatype, Vec<u8>)> = vec![
            (
                Datatype::Int64,
                le(&[10i64, 13, 16, 20, 25, 31, 30], i64::to_le_bytes),
            ),
            (
                Datatype::Int16,
                le(&[1000i16, 1010, 1015, 1013, 1008, 1020], i16::to_le_bytes),
            ),
            (Datatype::Uint8, vec![1, 2, 3, 5, 8, 13, 21, 34]),
            (
                Datatype::Uint32,
                le(&[7u32, 9, 4_000_000_000, 3], u32::to_le_bytes),
            ),
        ];
        for (e, src) in cases {
            let out = enc(e, &src).unwrap();
            for len in [0, src.len(), src.len() + e.size(), 1 << 20] {
                for cut in 0..out.len() {
                    let _ = dec(e, &out[..cut], len);
                }
                for i in 0..out.len() {
                    for flip in [0x01u8, 0x80, 0xFF, 0x3F, 0x40] {
                        let mut m = out.clone();
                        m[i] ^= flip;
                        let _ = dec(e, &m, len);
                    }
                }
            }
        }
    }

    fn dd_pipeline(reinterpret: Datatype) -> Pipeline {
        let mut f = Filter::new(FilterType::DoubleDelta);
        if let Filter::Compression(c) = &mut f {
            c.reinterpret = reinterpret;
        }
        let mut p = Pipeline::new();
        p.push(f).unwrap();
        p
    }

    /// Tiles written by TileDB 2.30.0 (TileDB-Py 0.36.1) with [DOUBLE_DELTA], one dense tile
    /// per array (`a0.tdb`): (name, attribute type, reinterpret type, cells, filtered tile).
    #[rustfmt::skip]
    const TILEDB_TILES: &[(&str, Datatype, Datatype, &str, &str)] = &[
            // dd_i64_spec: int64 [10, 13, 16, 20, 25, 31, 30]
            (
                "dd_i64_spec",
                Datatype::Int64,
                Datatype::Any,
                "0a000000000000000d00000000000000100000000000000014000000000000001900000000000000\
                1f000000000000001e00000000000000",
                "0100000000000000 38000000 21000000 10000000 | 00000000010000003800000021000000 |\
                0307000000000000000a000000000000000d000000000000000000000000f01101",
            ),
            // dd_i32_ramp: int32 [0, 100, 200, 300, 400]
            (
                "dd_i32_ramp",
                Datatype::Int32,
                Datatype::Any,
                "0000000064000000c80000002c01000090010000",
                "0100000000000000 14000000 19000000 10000000 | 00000000010000001400000019000000 |\
                07050000000000000000000000640000000000000000000000",
            ),
            // dd_u8_raw: uint8 [0, 255, 0, 255, 3]
            (
                "dd_u8_raw",
                Datatype::Uint8,
                Datatype::Any,
                "00ff00ff03",
                "0100000000000000 05000000 0e000000 10000000 | 0000000001000000050000000e000000 |\
                09050000000000000000ff00ff03",
            ),
            // dd_u8_small: uint8 [1, 2, 3, 5, 8, 13, 21, 34]
            (
                "dd_u8_small",
                Datatype::Uint8,
                Datatype::Any,
                "01020305080d1522",
                "0100000000000000 08000000 13000000 10000000 | 00000000010000000800000013000000 |\
                03080000000000000001020000000000351201",
            ),
            // dd_i8_neg: int8 [-128, -100, -90, -85, -83, -82]
            (
                "dd_i8_neg",
                Datatype::Int8,
                Datatype::Any,
                "809ca6abadae",
                "0100000000000000 06000000 13000000 10000000 | 00000000010000000600000013000000 |\
                050600000000000000809c0000000000e158ca",
            ),
            // dd_i16_walk: int16 [1000, 1010, 1015, 1013, 1008, 1020, 1031, 1030, 900, 950]
            (
                "dd_i16_walk",
                Datatype::Int16,
                Datatype::Any,
                "e803f203f703f503f003fc03070406048403b603",
                "0100000000000000 14000000 1d000000 10000000 | 0000000001000000140000001d000000 |\
                080a00000000000000e803f20302330c1861e0c18200000000000000b4",
            ),
            // dd_u16: uint16 [65535, 65530, 65520, 65500, 65470, 65430]
            (
                "dd_u16",
                Datatype::Uint16,
                Datatype::Any,
                "fffffafff0ffdcffbeff96ff",
                "0100000000000000 0c000000 15000000 10000000 | 00000000010000000c00000015000000 |\
                040600000000000000fffffaff0000000000a0b5ae",
            ),
            // dd_u32: uint32 [4000000000, 4000000100, 4000000300, 4000000600, 4000001000]
            (
                "dd_u32",
                Datatype::Uint32,
                Datatype::Any,
                "00286bee64286bee2c296bee582a6beee82b6bee",
                "0100000000000000 14000000 19000000 10000000 | 00000000010000001400000019000000 |\
                07050000000000000000286bee64286bee0000000000646464",
            ),
            // dd_u64_big: uint64 [18446744073709551615, 18446744073709551614, 18446744073709551612, 18446744073709551609, 18446744073709551605]
            (
                "dd_u64_big",
                Datatype::Uint64,
                Datatype::Any,
                "fffffffffffffffffefffffffffffffffcfffffffffffffff9fffffffffffffff5ffffffffffffff",
                "0100000000000000 28000000 21000000 10000000 | 00000000010000002800000021000000 |\
                010500000000000000fffffffffffffffffeffffffffffffff00000000000000fc",
            ),
            // dd_i64_1: int64 [42]
            (
                "dd_i64_1",
                Datatype::Int64,
                Datatype::Any,
                "2a00000000000000",
                "0100000000000000 08000000 11000000 10000000 | 00000000010000000800000011000000 |\
                0001000000000000002a00000000000000",
            ),
            // dd_i64_2: int64 [-9223372036854775808, 9223372036854775807]
            (
                "dd_i64_2",
                Datatype::Int64,
                Datatype::Any,
                "0000000000000080ffffffffffffff7f",
                "0100000000000000 10000000 19000000 10000000 | 00000000010000001000000019000000 |\
                0002000000000000000000000000000080ffffffffffffff7f",
            ),
            // dd_i64_ddmin: int64 [0, 0, -9223372036854775808]
            (
                "dd_i64_ddmin",
                Datatype::Int64,
                Datatype::Any,
                "000000000000000000000000000000000000000000000080",
                "0100000000000000 18000000 21000000 10000000 | 00000000010000001800000021000000 |\
                400300000000000000000000000000000000000000000000000000000000000080",
            ),
            // dd_i64_big_dd: int64 [0, 2305843009213693952, 0, 2305843009213693952]
            (
                "dd_i64_big_dd",
                Datatype::Int64,
                Datatype::Any,
                "0000000000000000000000000000002000000000000000000000000000000020",
                "0100000000000000 20000000 29000000 10000000 | 00000000010000002000000029000000 |\
                3f040000000000000000000000000000000000000000000020000000000000000000000000000000 \
                20",
            ),
            // dd_i64_long: int64 [0, 4, 22, 54, 100, 160, 234, 322, 424, 540, 670, 814, 972, 1144, 1330, 1530, 1744, 1972, 2214, 2470, 2740, 3024, 3322, 3634, 3960, 4300, 4654, 5022, 5404, 5800, 6210, 6634, 7072, 7524, 7990, 8470, 8964, 9472, 9994, 10530]
            (
                "dd_i64_long",
                Datatype::Int64,
                Datatype::Any,
                "00000000000000000400000000000000160000000000000036000000000000006400000000000000\
                a000000000000000ea000000000000004201000000000000a8010000000000001c02000000000000 \
                9e020000000000002e03000000000000cc0300000000000078040000000000003205000000000000 \
                fa05000000000000d006000000000000b407000000000000a608000000000000a609000000000000 \
                b40a000000000000d00b000000000000fa0c000000000000320e000000000000780f000000000000 \
                cc100000000000002e120000000000009e130000000000001c15000000000000a816000000000000 \
                4218000000000000ea19000000000000a01b000000000000641d000000000000361f000000000000 \
                1621000000000000042300000000000000250000000000000a270000000000002229000000000000",
                "0100000000000000 40010000 31000000 10000000 | 00000000010000004001000031000000 |\
                04280000000000000000000000000000000400000000000000e79c73ce39e79c7373ce39e79c73ce \
                3938e79c73ce39e79c",
            ),
            // dd_f64_as_i32: float64 [1.0, 1.5, 2.25, -3.0, 10000000000.0]
            (
                "dd_f64_as_i32",
                Datatype::Float64,
                Datatype::Int32,
                "000000000000f03f000000000000f83f000000000000024000000000000008c0000000205fa00242",
                "0100000000000000 28000000 31000000 10000000 | 00000000010000002800000031000000 |\
                200a00000000000000000000000000f03f000000000000f83f000000000000024000000000000008 \
                c0000000205fa00242",
            ),
            // dd_f64_as_i64: float64 [1.0, 1.5, 2.25, 2.5, 3.0]
            (
                "dd_f64_as_i64",
                Datatype::Float64,
                Datatype::Int64,
                "000000000000f03f000000000000f83f000000000000024000000000000004400000000000000840",
                "0100000000000000 28000000 31000000 10000000 | 00000000010000002800000031000000 |\
                340500000000000000000000000000f03f000000000000f83f000600000000001000000400000000 \
                000000000000000000",
            ),
            // dd_i32_as_u8: int32 [1, 2, 3, 4, 5, 6]
            (
                "dd_i32_as_u8",
                Datatype::Int32,
                Datatype::Uint8,
                "010000000200000003000000040000000500000006000000",
                "0100000000000000 18000000 1b000000 10000000 | 0000000001000000180000001b000000 |\
                04180000000000000001008209187600410508000000c30d28ba00",
            ),
            // dd_dt_ns: datetime64[ns] [1600000000000000000, 1600000000000001001, 1600000000000002002, 1600000000000003000, 1600000000000004001, 1600000000000005002, 1600000000000006000, 1600000000000007001, 1600000000000008002, 1600000000000009000, 1600000000000010001, 1600000000000011002]
            (
                "dd_dt_ns",
                Datatype::DatetimeNs,
                Datatype::Any,
                "0000a0d885573416e903a0d885573416d207a0d885573416b80ba0d885573416a10fa0d885573416\
                8a13a0d8855734167017a0d885573416591ba0d885573416421fa0d8855734162823a0d885573416 \
                1127a0d885573416fa2aa0d885573416",
                "0100000000000000 60000000 29000000 10000000 | 00000000010000006000000029000000 |\
                0a0c000000000000000000a0d885573416e903a0d88557341600060880010c100000000060000304 \
                c0",
            ),
    ];

    #[test]
    fn real_tiledb_tiles() {
        for &(name, t, reinterpret, cells, tiledb) in TILEDB_TILES {
            let p = dd_pipeline(reinterpret);
            let (data, want) = (hex(cells), hex(tiledb));
            let tile = Tile::new(t, t.size() as u64, data.clone()).unwrap();
            assert_eq!(p.filter_tile(&tile).unwrap(), want, "{name}");
            let back = p.unfilter_tile(&want, t, t.size() as u64).unwrap();
            assert_eq!(back.data(), &data[..], "{name}");
        }
    }

    #[test]
    fn tiledb_overflow_errors_are_reproduced() {
        // TileDB 2.30: "delta exceeds range of int64_t" for INT64 [MIN, MAX, 0] and
        // UINT64 [0, MAX, 0]; "Some negative double delta is out of bounds" for
        // INT64 [0, 3·2^61, 0]. All are filter-time errors.
        let p = dd_pipeline(Datatype::Any);
        for (t, cells) in [
            (
                Datatype::Int64,
                le(&[i64::MIN, i64::MAX, 0], i64::to_le_bytes),
            ),
            (Datatype::Uint64, le(&[0u64, u64::MAX, 0], u64::to_le_bytes)),
            (Datatype::Int64, le(&[0i64, 3 << 61, 0], i64::to_le_bytes)),
        ] {
            let tile = Tile::new(t, 8, cells).unwrap();
            let e = p.filter_tile(&tile).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
            assert!(e.message().contains("exceeds range of int64_t"), "{e}");
        }
    }

    fn spec_pipeline(spec: &str) -> Pipeline {
        crate::pipeline::spec::parse(spec).unwrap()
    }

    fn offsets_pipeline() -> Pipeline {
        spec_pipeline("zstd:-1")
    }

    /// Our encodings of the cases TileDB 2.30 writes unreadably. Each of these exact tiles
    /// was read back by TileDB 2.30.0 (TileDB-Py 0.36.1) and gave the original cells: the
    /// tile replaced the attribute file of a fragment written by TileDB, the fragment
    /// footer's file size patched, the schema swapped for one with this pipeline.
    #[test]
    fn edge_encodings_tiledb_reads_back() {
        // All-empty var tiles: one empty chunk, so DOUBLE_DELTA gets one empty part.
        for (t, bits) in [
            (Datatype::Int64, "3f"),
            (Datatype::Uint8, "07"),
            (Datatype::Int16, "0f"),
            (Datatype::Uint32, "1f"),
        ] {
            let tile = Tile::new_var(t, vec![0, 0, 0], vec![]).unwrap();
            let p = spec_pipeline("double_delta");
            let (_, data) = p.filter_var(&offsets_pipeline(), &tile).unwrap();
            let want = hex(&format!(
                "0100000000000000 00000000 09000000 10000000 | 00000000 01000000 00000000 \
                 09000000 | {bits} 0000000000000000"
            ));
            assert_eq!(data, want, "{t:?}");
        }
        // [BWR(8), DD] on INT64: BWR's 34-byte metadata part (not a whole number of values)
        // and 2-byte data part (shorter than one value) both go raw.
        let p = spec_pipeline("bit_width_reduction:window=8,double_delta");
        for (cells, tiledb_reads) in [
            (
                le(&[7i64, 9], i64::to_le_bytes),
                "0100000000000000 10000000 36000000 18000000 | 01000000 01000000 22000000 \
                 2b000000 02000000 0b000000 | 3f 0400000000000000 10000000 02000000 \
                 0700000000000000 08 08000000 0900000000000000 08 08000000 | 3f \
                 0000000000000000 0000",
            ),
            (
                le(&[3i64 << 60, 5], i64::to_le_bytes),
                "0100000000000000 10000000 36000000 18000000 | 01000000 01000000 22000000 \
                 2b000000 02000000 0b000000 | 3f 0400000000000000 10000000 02000000 \
                 0000000000000030 08 08000000 0500000000000000 08 08000000 | 3f \
                 0000000000000000 0000",
            ),
        ] {
            let tile = Tile::new(Datatype::Int64, 8, cells.clone()).unwrap();
            let ours = p.filter_tile(&tile).unwrap();
            assert_eq!(ours, hex(tiledb_reads));
            let back = p.unfilter_tile(&ours, Datatype::Int64, 8).unwrap();
            assert_eq!(back.data(), &cells[..]);
        }
    }

    /// TileDB 2.30's own output for the same cases, which TileDB fails to read ("Write would
    /// overflow buffer"): refused here as corrupt, not decoded into garbage.
    #[test]
    fn tiledb_unreadable_tiles_are_corrupt() {
        let p = spec_pipeline("bit_width_reduction:window=8,double_delta");
        let tiledb = hex(
            "0100000000000000 10000000 42000000 18000000 | 01000000 01000000 22000000 29000000 \
             02000000 19000000 | 3304000000000000 0010000000020000 0007000000000000 \
             00f5a78000002090 00000000f7efffff ff00000000000000 000000007f4ddb7f 0000c01c7f4ddb7f \
             0000",
        );
        assert_eq!(
            crate::format::tile_format::filtered_tile_size(&tiledb).unwrap(),
            tiledb.len() as u64
        );
        let e = p.unfilter_tile(&tiledb, Datatype::Int64, 8).unwrap_err();
        assert!(matches!(e, Error::CorruptData(_)), "{e:?}");
        assert!(e.message().contains("DOUBLE_DELTA"), "{e}");
        // The data tile of an all-empty var tile: one chunk of 0 bytes.
        let tiledb = hex(
            "0100000000000000 00000000 19000000 10000000 | 00000000 01000000 00000000 19000000 | \
             0000000000000000 002dae2aff405600 0000000000000000 00",
        );
        assert_eq!(
            crate::format::tile_format::filtered_tile_size(&tiledb).unwrap(),
            tiledb.len() as u64
        );
        let e = spec_pipeline("double_delta")
            .unfilter_tile(&tiledb, Datatype::Int64, 8)
            .unwrap_err();
        assert!(matches!(e, Error::CorruptData(_)), "{e:?}");
        assert!(e.message().contains("DOUBLE_DELTA"), "{e}");
    }

    /// The part TileDB itself encodes raw with trailing bytes (34 bytes of BWR metadata for
    /// INT64 [3·2^60, 5], B = 63): our encoding is TileDB's, byte for byte.
    #[test]
    fn tiledb_raw_part_with_trailing_bytes() {
        let tiledb = hex(
            "3f 0400000000000000 10000000 02000000 0000000000000030 08 08000000 \
             0500000000000000 08 08000000",
        );
        let part = &tiledb[9..];
        assert_eq!(part.len(), 34);
        assert_eq!(enc(Datatype::Int64, part).unwrap(), tiledb);
        assert_eq!(dec(Datatype::Int64, &tiledb, 34).unwrap(), part);
    }

    /// A var-size INT16 tile written by TileDB 2.30 with [DOUBLE_DELTA]:
    /// cells [[1, 2], [], [3, 4, 5]].
    #[test]
    fn real_tiledb_var_tile() {
        let cells = le(&[1i16, 2, 3, 4, 5], i16::to_le_bytes);
        let tile = Tile::new_var(Datatype::Int16, vec![0, 4, 4], cells.clone()).unwrap();
        let p = spec_pipeline("double_delta");
        let (_, data) = p.filter_var(&offsets_pipeline(), &tile).unwrap();
        let tiledb = hex(
            "0100000000000000 0a000000 15000000 10000000 | 00000000 01000000 0a000000 15000000 \
             | 01 0500000000000000 0100 0200 0000000000000000",
        );
        assert_eq!(data, tiledb);
    }
}
