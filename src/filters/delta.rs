//! DELTA (19): TileDB's delta codec for one part (docs/FORMAT.md §5.11).
//!
//! Layout of one encoded part, with `s` the element size and `N = len / s`: `u64 N`, `x[0]`
//! (`s` bytes), then for every later value the low `s` bytes of `x[i] − x[i−1]`, that is the
//! difference modulo `2^(8·s)`. Decoding adds the deltas back modulo `2^(8·s)`, so signedness
//! never matters, only the element size.
//!
//! TileDB 2.30's decoder always writes `x[0]`, then `N − 1` further whole values: its output
//! is at least one value and always a whole number of values. No encoding therefore decodes
//! to an empty part or to a part whose length is not a multiple of `s`, and TileDB's own
//! output for those parts is unreadable (it reads `x[0]` out of bounds, or drops the trailing
//! bytes). This encoder refuses such parts with `InvalidArgument` instead of writing them.

use super::compression::codec_descriptor;
use crate::error::{Error, Result};
use crate::filters::int_values::load;
use crate::filters::registry::FilterDescriptor;
use crate::format::byte_reader::ByteReader;
use crate::format::datatype::Datatype;
use crate::format::filter_type::{Compressor, FilterType};
use crate::mem::OutBuf;

/// The element width in bytes DELTA uses for element type `e`.
fn element_size(e: Datatype) -> Result<usize> {
    use Datatype::*;
    match e {
        Float32 | Float64 => Err(Error::invalid(format!(
            "DELTA does not support the floating-point type {}; set an integer reinterpret datatype",
            e.name()
        ))),
        Int16 | Uint16 => Ok(2),
        Int32 | Uint32 => Ok(4),
        // INT64, UINT64 and every DATETIME_* / TIME_* type.
        _ if e.size() == 8 => Ok(8),
        // INT8, UINT8, CHAR, BOOL, BLOB, GEOM_*, every STRING_* (as bytes) and ANY.
        _ => Ok(1),
    }
}

/// Appends the encoding of one part to `out`.
///
/// `e` is the element type: the reinterpret type if one is set, else the stage's datatype.
/// An empty part, or one whose length is not a multiple of the element size, fails with
/// `InvalidArgument`: TileDB 2.30 cannot read any encoding of it back (module documentation).
pub fn compress(e: Datatype, src: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let s = element_size(e)?;
    if src.is_empty() {
        return Err(Error::invalid(
            "DELTA cannot encode an empty part: TileDB's decoder always produces at least one value",
        ));
    }
    if !src.len().is_multiple_of(s) {
        return Err(Error::invalid(format!(
            "DELTA cannot encode a part of {} bytes, not a multiple of the {s}-byte {} element: \
             TileDB's decoder only produces whole values",
            src.len(),
            e.name()
        )));
    }
    out.reserve(8 + src.len());
    out.extend_from_slice(&((src.len() / s) as u64).to_le_bytes());
    match s {
        1 => encode::<1>(src, out),
        2 => encode::<2>(src, out),
        4 => encode::<4>(src, out),
        _ => encode::<8>(src, out),
    }
    Ok(())
}

fn encode<const N: usize>(src: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&src[..N]);
    let mut prev = load::<N>(src);
    for elem in src[N..].chunks_exact(N) {
        let cur = load::<N>(elem);
        out.extend_from_slice(&cur.wrapping_sub(prev).to_le_bytes()[..N]);
        prev = cur;
    }
}

/// Decodes one part into exactly `dst.len()` bytes.
///
/// As TileDB's decoder, `N = 0` still yields `x[0]`; an `N` that does not produce exactly
/// `dst.len()` bytes, or input too short for it, is `CorruptData`. Bytes after the last
/// delta are ignored, as TileDB does.
pub fn decompress(e: Datatype, src: &[u8], dst: &mut [u8]) -> Result<()> {
    OutBuf::over(dst, |o| decompress_into(e, src, o))
}

/// [`decompress`] into exactly the unwritten rest of `dst` (which may not be initialised).
pub fn decompress_into(e: Datatype, src: &[u8], dst: &mut OutBuf<'_>) -> Result<()> {
    let s = element_size(e)?;
    let expected = dst.remaining();
    let mut r = ByteReader::new(src, "delta part");
    let n = r.u64()?;
    let count = n.max(1);
    if (count as u128) * (s as u128) != expected as u128 {
        return Err(Error::corrupt(format!(
            "delta part holds {n} values of {s} bytes, expected {expected} bytes"
        )));
    }
    let body = r.take(expected)?;
    match s {
        1 => decode::<1>(body, dst),
        2 => decode::<2>(body, dst),
        4 => decode::<4>(body, dst),
        _ => decode::<8>(body, dst),
    }
    Ok(())
}

fn decode<const N: usize>(src: &[u8], dst: &mut OutBuf<'_>) {
    // The first value is stored as is: a running sum from 0.
    let mut prev = 0u64;
    dst.put_arrays(src.chunks_exact(N).map(|d| {
        prev = prev.wrapping_add(load::<N>(d));
        *prev.to_le_bytes().first_chunk::<N>().expect("N ≤ 8")
    }));
}

/// DELTA's descriptor: TileDB 2.30 cannot read back an empty DELTA part, so var-size tiles
/// are written without TileDB's trailing empty chunk.
pub const DESCRIPTOR: FilterDescriptor = FilterDescriptor {
    encodes_empty_part: false,
    ..codec_descriptor(FilterType::Delta, Compressor::Delta, Some(19), 1)
};

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
        assert_eq!(out.len(), 8 + src.len());
        assert_eq!(dec(e, &out, src.len()).unwrap(), src, "{e:?}");
        out
    }

    fn le<T: Copy, const N: usize>(v: &[T], f: fn(T) -> [u8; N]) -> Vec<u8> {
        v.iter().flat_map(|&x| f(x)).collect()
    }

    #[test]
    fn spec_vector_int16() {
        // docs/FORMAT.md §9.2: INT16 [5,3,300,-2].
        let src = le(&[5i16, 3, 300, -2], i16::to_le_bytes);
        let out = roundtrip(Datatype::Int16, &src);
        assert_eq!(out, hex("0400000000000000 0500 feff 2901 d2fe"));
    }

    #[test]
    fn empty_and_partial_parts_are_refused() {
        for e in [Datatype::Uint8, Datatype::Int16, Datatype::Int64] {
            let err = enc(e, &[]).unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
            assert!(err.message().contains("empty part"), "{err}");
        }
        for (e, len) in [
            (Datatype::Int16, 3),
            (Datatype::Int32, 2),
            (Datatype::Uint64, 12),
        ] {
            let err = enc(e, &vec![1; len]).unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
            assert!(err.message().contains("not a multiple"), "{err}");
        }
        // A single byte is a whole value for 1-byte types.
        assert_eq!(roundtrip(Datatype::Blob, &[7]), hex("0100000000000000 07"));
    }

    #[test]
    fn one_and_two_values_and_extremes() {
        assert_eq!(
            roundtrip(Datatype::Int64, &77i64.to_le_bytes()),
            hex("0100000000000000 4d00000000000000")
        );
        roundtrip(
            Datatype::Int64,
            &le(&[i64::MIN, i64::MAX], i64::to_le_bytes),
        );
        let out = roundtrip(
            Datatype::Uint64,
            &le(&[u64::MAX, 0, 1 << 63, 1], u64::to_le_bytes),
        );
        assert_eq!(
            out,
            hex(
                "0400000000000000 ffffffffffffffff 0100000000000000 0000000000000080 0100000000000080"
            )
        );
        roundtrip(Datatype::Int8, &le(&[-128i8, 127, 0, -1], i8::to_le_bytes));
        roundtrip(
            Datatype::Uint32,
            &le(&[0u32, u32::MAX, 7, 3], u32::to_le_bytes),
        );
    }

    #[test]
    fn roundtrips_every_type() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for e in Datatype::ALL.iter().copied().filter(|t| !t.is_real()) {
            let s = element_size(e).unwrap();
            for n in [1usize, 2, 3, 17, 1000] {
                let src: Vec<u8> = (0..n * s)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        seed as u8
                    })
                    .collect();
                roundtrip(e, &src);
            }
        }
    }

    #[test]
    fn reinterpreted_float64_data() {
        let f: Vec<u8> = [1.0f64, -2.5, 3.75]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(
            roundtrip(Datatype::Int32, &f),
            hex("0600000000000000 00000000 0000f03f 000010c0 000004c0 0000fc3f 00000e40")
        );
        assert_eq!(
            roundtrip(Datatype::Int64, &f),
            hex("0300000000000000 000000000000f03f 0000000000001480 0000000000000a80")
        );
        assert!(matches!(
            enc(Datatype::Float64, &f),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn decoder_checks_counts() {
        // N = 0 still writes x[0], as TileDB's decoder does.
        assert_eq!(
            dec(Datatype::Int16, &hex("0000000000000000 0500"), 2).unwrap(),
            [5, 0]
        );
        assert!(dec(Datatype::Int16, &hex("0000000000000000 0500"), 0).is_err());
        // N larger or smaller than the output.
        assert!(dec(Datatype::Int16, &hex("0300000000000000 0500 0100"), 4).is_err());
        assert!(dec(Datatype::Int16, &hex("0100000000000000 0500 0100"), 4).is_err());
        assert!(dec(Datatype::Int64, &hex("ffffffffffffffff 0500"), 8).is_err());
        // Truncated body.
        assert!(dec(Datatype::Int16, &hex("0200000000000000 0500 01"), 4).is_err());
        // Trailing bytes are ignored.
        assert_eq!(
            dec(Datatype::Int16, &hex("0200000000000000 0500 0100 ffff"), 4).unwrap(),
            [5, 0, 6, 0]
        );
        // Output not a whole number of values.
        assert!(dec(Datatype::Int16, &hex("0100000000000000 0500"), 3).is_err());
    }

    #[test]
    fn corrupt_input_never_panics() {
        let src = le(&[5i16, 3, 300, -2], i16::to_le_bytes);
        for e in [Datatype::Int16, Datatype::Uint8, Datatype::Int64] {
            let out = enc(Datatype::Int16, &src).unwrap();
            for len in [0, 1, 2, 8, 16, 1 << 16] {
                for cut in 0..=out.len() {
                    let _ = dec(e, &out[..cut], len);
                }
                for i in 0..out.len() {
                    for flip in [0x01u8, 0x80, 0xFF] {
                        let mut m = out.clone();
                        m[i] ^= flip;
                        let _ = dec(e, &m, len);
                    }
                }
            }
        }
    }

    /// Tiles written by TileDB 2.30.0 (TileDB-Py 0.36.1) with [DELTA], one dense tile per
    /// array (`a0.tdb`): (name, attribute type, reinterpret type, cells, filtered tile).
    #[rustfmt::skip]
    const TILEDB_TILES: &[(&str, Datatype, Datatype, &str, &str)] = &[
            // delta_i16_spec: int16 [5, 3, 300, -2]
            (
                "delta_i16_spec",
                Datatype::Int16,
                Datatype::Any,
                "050003002c01feff",
                "0100000000000000 08000000 10000000 10000000 | 00000000010000000800000010000000 |\
                04000000000000000500feff2901d2fe",
            ),
            // delta_u8: uint8 [200, 10, 255, 0, 1]
            (
                "delta_u8",
                Datatype::Uint8,
                Datatype::Any,
                "c80aff0001",
                "0100000000000000 05000000 0d000000 10000000 | 0000000001000000050000000d000000 |\
                0500000000000000c842f50101",
            ),
            // delta_i8: int8 [-128, 127, 0, -1]
            (
                "delta_i8",
                Datatype::Int8,
                Datatype::Any,
                "807f00ff",
                "0100000000000000 04000000 0c000000 10000000 | 0000000001000000040000000c000000 |\
                040000000000000080ff81ff",
            ),
            // delta_u16: uint16 [1, 65535, 2, 40000]
            (
                "delta_u16",
                Datatype::Uint16,
                Datatype::Any,
                "0100ffff0200409c",
                "0100000000000000 08000000 10000000 10000000 | 00000000010000000800000010000000 |\
                04000000000000000100feff03003e9c",
            ),
            // delta_i32: int32 [2147483647, -2147483648, 0, 5]
            (
                "delta_i32",
                Datatype::Int32,
                Datatype::Any,
                "ffffff7f000000800000000005000000",
                "0100000000000000 10000000 18000000 10000000 | 00000000010000001000000018000000 |\
                0400000000000000ffffff7f010000000000008005000000",
            ),
            // delta_u32: uint32 [0, 4294967295, 7, 3]
            (
                "delta_u32",
                Datatype::Uint32,
                Datatype::Any,
                "00000000ffffffff0700000003000000",
                "0100000000000000 10000000 18000000 10000000 | 00000000010000001000000018000000 |\
                040000000000000000000000ffffffff08000000fcffffff",
            ),
            // delta_i64: int64 [-9223372036854775808, 9223372036854775807, 0, -1]
            (
                "delta_i64",
                Datatype::Int64,
                Datatype::Any,
                "0000000000000080ffffffffffffff7f0000000000000000ffffffffffffffff",
                "0100000000000000 20000000 28000000 10000000 | 00000000010000002000000028000000 |\
                04000000000000000000000000000080ffffffffffffffff0100000000000080ffffffffffffffff",
            ),
            // delta_u64: uint64 [18446744073709551615, 0, 9223372036854775808, 1]
            (
                "delta_u64",
                Datatype::Uint64,
                Datatype::Any,
                "ffffffffffffffff000000000000000000000000000000800100000000000000",
                "0100000000000000 20000000 28000000 10000000 | 00000000010000002000000028000000 |\
                0400000000000000ffffffffffffffff010000000000000000000000000000800100000000000080",
            ),
            // delta_i64_1: int64 [77]
            (
                "delta_i64_1",
                Datatype::Int64,
                Datatype::Any,
                "4d00000000000000",
                "0100000000000000 08000000 10000000 10000000 | 00000000010000000800000010000000 |\
                01000000000000004d00000000000000",
            ),
            // delta_f64_as_i32: float64 [1.0, -2.5, 3.75]
            (
                "delta_f64_as_i32",
                Datatype::Float64,
                Datatype::Int32,
                "000000000000f03f00000000000004c00000000000000e40",
                "0100000000000000 18000000 20000000 10000000 | 00000000010000001800000020000000 |\
                0600000000000000000000000000f03f000010c0000004c00000fc3f00000e40",
            ),
            // delta_f64_as_i64: float64 [1.0, -2.5, 3.75]
            (
                "delta_f64_as_i64",
                Datatype::Float64,
                Datatype::Int64,
                "000000000000f03f00000000000004c00000000000000e40",
                "0100000000000000 18000000 20000000 10000000 | 00000000010000001800000020000000 |\
                0300000000000000000000000000f03f00000000000014800000000000000a80",
            ),
            // delta_dt_ms: datetime64[ms] [1700000000000, 1700000000500, 1699999999000]
            (
                "delta_dt_ms",
                Datatype::DatetimeMs,
                Datatype::Any,
                "0068e5cf8b010000f469e5cf8b0100001864e5cf8b010000",
                "0100000000000000 18000000 20000000 10000000 | 00000000010000001800000020000000 |\
                03000000000000000068e5cf8b010000f40100000000000024faffffffffffff",
            ),
    ];

    #[test]
    fn real_tiledb_tiles() {
        for &(name, t, reinterpret, cells, tiledb) in TILEDB_TILES {
            let mut f = Filter::new(FilterType::Delta);
            if let Filter::Compression(c) = &mut f {
                c.reinterpret = reinterpret;
            }
            let mut p = Pipeline::new();
            p.push(f).unwrap();
            let (data, want) = (hex(cells), hex(tiledb));
            let tile = Tile::new(t, t.size() as u64, data.clone()).unwrap();
            assert_eq!(p.filter_tile(&tile).unwrap(), want, "{name}");
            let back = p.unfilter_tile(&want, t, t.size() as u64).unwrap();
            assert_eq!(back.data(), &data[..], "{name}");
        }
    }

    fn spec_pipeline(spec: &str) -> Pipeline {
        crate::pipeline::spec::parse(spec).unwrap()
    }

    /// Pipelines where TileDB 2.30 hands DELTA a part that is empty or not a whole number
    /// of values: TileDB writes them, then reads garbage or fails. Writing is refused here,
    /// and TileDB's tiles are reported corrupt rather than decoded into garbage.
    #[test]
    fn tiledb_unreadable_cases() {
        // [DD, DELTA] on INT64 [10, 13]: DELTA sees DD's 25-byte part and drops a byte;
        // TileDB 2.30 reads back [10, 3530822107858468877] without an error.
        let p = spec_pipeline("double_delta,delta");
        let tiledb = hex(
            "0100000000000000 10000000 38000000 18000000 | 01000000 01000000 10000000 18000000 \
             19000000 20000000 | 0200000000000000 0000000001000000 1000000018000000 \
             0300000000000000 0002000000000000 0008000000000000 0003000000000000",
        );
        assert_eq!(
            crate::format::tile_format::filtered_tile_size(&tiledb).unwrap(),
            100
        );
        let e = p.unfilter_tile(&tiledb, Datatype::Int64, 8).unwrap_err();
        assert!(matches!(e, Error::CorruptData(_)), "{e:?}");
        assert!(e.message().contains("DELTA"), "{e}");
        let tile = Tile::new(Datatype::Int64, 8, le(&[10i64, 13], i64::to_le_bytes)).unwrap();
        let e = p.filter_tile(&tile).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
        // [BWR(8), DELTA] on INT64: BWR's 34-byte metadata and 2-byte data parts.
        let p = spec_pipeline("bit_width_reduction:window=8,delta");
        let tile = Tile::new(Datatype::Int64, 8, le(&[7i64, 9], i64::to_le_bytes)).unwrap();
        let e = p.filter_tile(&tile).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
        let tiledb = hex(
            "0100000000000000 10000000 38000000 18000000 | 01000000 01000000 22000000 28000000 \
             02000000 10000000 | 0400000000000000 1000000002000000 f7fffffffdffffff \
             0108000000090000 f8f7fffffffe0700 0000000000000000 00007f4ddb7f0000",
        );
        let e = p.unfilter_tile(&tiledb, Datatype::Int64, 8).unwrap_err();
        assert!(matches!(e, Error::CorruptData(_)), "{e:?}");
        assert!(e.message().contains("DELTA"), "{e}");
        // An all-empty var tile: TileDB writes u64 0 then 8 out-of-bounds bytes and fails
        // to read it ("Write would overflow buffer").
        let tiledb = hex(
            "0100000000000000 00000000 10000000 10000000 | 00000000 01000000 00000000 10000000 | \
             0000000000000000 e2b6596405000000",
        );
        let e = spec_pipeline("delta")
            .unfilter_tile(&tiledb, Datatype::Int64, 8)
            .unwrap_err();
        assert!(matches!(e, Error::CorruptData(_)), "{e:?}");
    }
}
