//! POSITIVE_DELTA (10): each window of non-decreasing values is stored as the differences
//! between consecutive values, the window's first value kept in the metadata
//! (docs/FORMAT.md §5.13).
//!
//! Applies to INT8…UINT64, BOOL, BLOB and GEOM_* (as `u8`), and to DATETIME_* / TIME_* (as
//! `i64`) when the tile format version is at least 20; every other type passes through.
//!
//! Own metadata: `u32 total_windows`, then per window `T window_offset` (the window's first
//! value) and `u32 window_length`. Data: one part as long as the input; a window whose length
//! is not a whole number of values is copied raw, any other holds `x[j] − x[j−1]` per value
//! (the first is 0). A decreasing value fails at filter time, as in TileDB.
//!
//! TileDB 2.30 divides by zero when a window would be 0 bytes. This encoder writes instead,
//! and TileDB's reader decodes each of these (see [`reverse`]):
//! * an empty part: no window;
//! * a part shorter than one value: one raw window of the whole part;
//! * `max_window` smaller than one value: windows of one value each.
//!
//! For a raw window TileDB's `window_offset` is the `s` bytes at the window start, read past
//! the end of the part when the window is shorter than `s`; the bytes that exist are written
//! and the rest are zero. Readers ignore the field for raw windows.

use crate::engine::stage::{DataFlow, FwdIn, FwdOut, MdFlow, RevIn, RevOut, StageCtx};
use crate::error::{Error, Result};
use crate::filters::config::Filter;
use crate::filters::int_values::{load, order_key, value, window_count, windows as windows_of};
use crate::filters::registry::{FilterDescriptor, OptionsLayout, wrong_filter};
use crate::format::byte_reader::ByteReader;
use crate::format::datatype::Datatype;
use crate::format::filter_type::{FilterOption, FilterType};

/// The integer type the filter treats `datatype` as — `(size, signed)` — or `None` when it
/// passes the data through.
fn applied_type(datatype: Datatype, version: u32) -> Option<(usize, bool)> {
    use Datatype::*;
    match datatype {
        Int8 => Some((1, true)),
        Uint8 | Bool | Blob | GeomWkb | GeomWkt => Some((1, false)),
        Int16 => Some((2, true)),
        Uint16 => Some((2, false)),
        Int32 => Some((4, true)),
        Uint32 => Some((4, false)),
        Int64 => Some((8, true)),
        Uint64 => Some((8, false)),
        t if (t.is_datetime() || t.is_time()) && version >= 20 => Some((8, true)),
        _ => None,
    }
}

/// Forward: own block of window headers, then the input metadata forwarded; one data part.
/// A value smaller than its predecessor in the same window fails with `InvalidArgument`.
pub fn forward(
    max_window: u32,
    ctx: &mut StageCtx<'_>,
    input: FwdIn<'_>,
    out: FwdOut<'_>,
) -> Result<DataFlow> {
    let Some(t) = applied_type(ctx.datatype, ctx.version) else {
        out.md.extend_forwarded(input.md);
        return Ok(DataFlow::Forwarded);
    };
    match t {
        (1, true) => encode::<1, true>(max_window, input, out),
        (1, false) => encode::<1, false>(max_window, input, out),
        (2, true) => encode::<2, true>(max_window, input, out),
        (2, false) => encode::<2, false>(max_window, input, out),
        (4, true) => encode::<4, true>(max_window, input, out),
        (4, false) => encode::<4, false>(max_window, input, out),
        (8, true) => encode::<8, true>(max_window, input, out),
        _ => encode::<8, false>(max_window, input, out),
    }
}

fn encode<const N: usize, const SIGNED: bool>(
    max_window: u32,
    input: FwdIn<'_>,
    out: FwdOut<'_>,
) -> Result<DataFlow> {
    if input.data.total_len() > u32::MAX as usize {
        return Err(Error::invalid(
            "input of 4 GiB or more cannot be positive-delta encoded",
        ));
    }
    let windows = window_count(input.data, max_window, N);
    let header = N + 4;
    let own = out.md.push_uninit(4 + windows * header);
    own[0..4].copy_from_slice(&(windows as u32).to_le_bytes());
    let mut h = 4;
    let dst = out.data.push_uninit(input.data.total_len());
    let mut pos = 0;
    for (index, window) in windows_of(input.data, max_window, N).enumerate() {
        let hdr = &mut own[h..h + header];
        let first = window.len().min(N);
        hdr[..first].copy_from_slice(&window[..first]);
        hdr[first..N].fill(0);
        hdr[N..].copy_from_slice(&(window.len() as u32).to_le_bytes());
        h += header;
        let o = &mut dst[pos..pos + window.len()];
        pos += window.len();
        if window.len() % N != 0 {
            o.copy_from_slice(window);
        } else {
            encode_window::<N, SIGNED>(window, o).map_err(|(j, cur, prev)| {
                Error::invalid(format!(
                    "delta is not positive: window {index}, element {j} ({cur}) \
                     is smaller than the element before it ({prev})"
                ))
            })?;
        }
    }
    out.md.extend_forwarded(input.md);
    Ok(DataFlow::Written)
}

/// Writes the deltas of one window of whole values (the first against itself, so 0) into
/// `o`; on a value smaller than its predecessor returns its index, it and the predecessor.
/// The loop only accumulates a flag, so that it stays branch-free; the offending element is
/// looked up afterwards.
#[inline(always)]
fn encode_window<const N: usize, const SIGNED: bool>(
    window: &[u8],
    o: &mut [u8],
) -> std::result::Result<(), (usize, i128, i128)> {
    let mut prev = load::<N>(window);
    let mut decreasing = false;
    for (v, d) in window.chunks_exact(N).zip(o.chunks_exact_mut(N)) {
        let cur = load::<N>(v);
        decreasing |= order_key::<N, SIGNED>(cur) < order_key::<N, SIGNED>(prev);
        d.copy_from_slice(&cur.wrapping_sub(prev).to_le_bytes()[..N]);
        prev = cur;
    }
    if !decreasing {
        return Ok(());
    }
    let values: Vec<i128> = window.chunks_exact(N).map(value::<N, SIGNED>).collect();
    let j = (1..values.len())
        .find(|&j| values[j] < values[j - 1])
        .expect("a decreasing pair was seen");
    Err((j, values[j], values[j - 1]))
}

/// Reverse: restores every window; the metadata after the own block is passed on.
///
/// Follows TileDB 2.30's reader: a window whose length is not a multiple of `s` is copied
/// raw (its offset ignored), any other is rebuilt by adding each delta to the previous value,
/// starting from the offset, modulo `2^(8·s)`. So a zero-window part, a short raw window and
/// one-value windows all decode. The output is the windows' lengths summed; windows needing
/// more input than present, or more headers than the metadata holds, are `CorruptData`.
pub fn reverse(
    ctx: &mut StageCtx<'_>,
    input: RevIn<'_>,
    out: RevOut<'_>,
) -> Result<(MdFlow, DataFlow)> {
    let Some((size, _)) = applied_type(ctx.datatype, ctx.version) else {
        return Ok((MdFlow::Rest(0), DataFlow::Forwarded));
    };
    let own = match size {
        1 => decode::<1>(input, out)?,
        2 => decode::<2>(input, out)?,
        4 => decode::<4>(input, out)?,
        _ => decode::<8>(input, out)?,
    };
    Ok((MdFlow::Rest(own), DataFlow::Written))
}

/// Decodes into `out.data`; returns the length of the own metadata block.
fn decode<const N: usize>(input: RevIn<'_>, mut out: RevOut<'_>) -> Result<usize> {
    let mut r = ByteReader::new(input.md, "positive delta metadata");
    let count = r.u32()? as usize;
    let header = N + 4;
    if count as u64 * header as u64 > r.remaining() as u64 {
        return Err(Error::corrupt(format!(
            "positive delta metadata truncated: {count} window headers need {} bytes, {} left",
            count as u64 * header as u64,
            r.remaining()
        )));
    }
    let headers = r.take(count * header)?;
    let total: u64 = headers
        .chunks_exact(header)
        .map(|h| u32::from_le_bytes(h[N..].try_into().unwrap()) as u64)
        .sum();
    if total > input.data.len() as u64 {
        return Err(Error::corrupt(format!(
            "positive delta windows cover {total} bytes, only {} bytes of data",
            input.data.len()
        )));
    }
    let total = total as usize;
    let mut dst = out.data.alloc(total)?;
    let mut pos = 0;
    for h in headers.chunks_exact(header) {
        let len = u32::from_le_bytes(h[N..].try_into().unwrap()) as usize;
        let src = &input.data[pos..pos + len];
        pos += len;
        if !len.is_multiple_of(N) {
            dst.put(src);
            continue;
        }
        let mut prev = load::<N>(h);
        dst.put_arrays(src.chunks_exact(N).map(|d| {
            prev = prev.wrapping_add(load::<N>(d));
            *prev.to_le_bytes().first_chunk::<N>().expect("N ≤ 8")
        }));
    }
    Ok(r.position())
}

/// The PositiveDelta filter's descriptor: windows of one 2-byte element cost up to 13 header bytes, hence 8n.
pub const DESCRIPTOR: FilterDescriptor = FilterDescriptor {
    filter_type: FilterType::PositiveDelta,
    default: Filter::PositiveDelta { max_window: 1024 },
    positional: Some(FilterOption::PositiveDeltaMaxWindow),
    layout: OptionsLayout::Window,
    forward: |f, ctx, input, out| match f {
        Filter::PositiveDelta { max_window } => forward(*max_window, ctx, input, out),
        other => Err(wrong_filter(FilterType::PositiveDelta, other)),
    },
    reverse: |_, ctx, input, out| reverse(ctx, input, out),
    fixed_growth: |n| n.saturating_mul(8),
    unbounded_on_strings: false,
    reverse_max_ratio: 1,
    encodes_empty_part: true,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::parts::{PartList, Parts};
    use crate::engine::thread_scratch::CodecContexts;
    use crate::engine::tile::Tile;
    use crate::filters::config::Filter;
    use crate::filters::testing::unhex as hex;
    use crate::pipeline::Pipeline;

    fn le<T: Copy, const N: usize>(v: &[T], f: fn(T) -> [u8; N]) -> Vec<u8> {
        v.iter().flat_map(|&x| f(x)).collect()
    }

    #[derive(Debug)]
    struct Fwd {
        md: Vec<u8>,
        md_lens: Vec<usize>,
        data: Vec<u8>,
        data_lens: Vec<usize>,
        flow: DataFlow,
    }

    fn fwd_parts(w: u32, t: Datatype, version: u32, md: Parts<'_>, data: Parts<'_>) -> Result<Fwd> {
        let mut codecs = CodecContexts::default();
        let mut ctx = StageCtx::new(t, t.size() as u64, &mut codecs);
        ctx.version = version;
        let (mut om, mut od) = (PartList::default(), PartList::default());
        let flow = forward(
            w,
            &mut ctx,
            FwdIn { md, data },
            FwdOut {
                md: &mut om,
                data: &mut od,
            },
        )?;
        Ok(Fwd {
            md: om.as_parts().bytes().to_vec(),
            md_lens: om.as_parts().lens().to_vec(),
            data: od.as_parts().bytes().to_vec(),
            data_lens: od.as_parts().lens().to_vec(),
            flow,
        })
    }

    fn fwd(w: u32, t: Datatype, data: &[u8]) -> Result<Fwd> {
        let lens = [data.len()];
        fwd_parts(w, t, 22, Parts::EMPTY, Parts::new(data, &lens))
    }

    /// Reverse into a window of `len` bytes; returns (metadata left, data).
    fn rev(
        t: Datatype,
        version: u32,
        md: &[u8],
        data: &[u8],
        len: usize,
    ) -> Result<(Vec<u8>, Vec<u8>)> {
        // The window option plays no part in reverse.
        crate::filters::testing::reverse_at(
            &Filter::PositiveDelta { max_window: 1024 },
            t,
            version,
            md,
            data,
            len,
        )
    }

    fn roundtrip(w: u32, t: Datatype, data: &[u8]) -> Fwd {
        let f = fwd(w, t, data).unwrap();
        assert_eq!(f.flow, DataFlow::Written);
        assert_eq!(f.data_lens, vec![data.len()]);
        let (md_left, back) = rev(t, 22, &f.md, &f.data, data.len()).unwrap();
        assert!(md_left.is_empty());
        assert_eq!(back, data, "{t:?} window {w}");
        f
    }

    #[test]
    fn spec_vector_uint16_window_4() {
        // docs/FORMAT.md §9.2: UINT16 [5,7,7,9,20], window 4.
        let data = le(&[5u16, 7, 7, 9, 20], u16::to_le_bytes);
        let f = roundtrip(4, Datatype::Uint16, &data);
        assert_eq!(
            f.md,
            hex("03000000 0500 04000000 0700 04000000 1400 02000000")
        );
        assert_eq!(f.data, hex("0000 0200 0000 0200 0000"));
    }

    #[test]
    fn decreasing_data_fails_naming_the_window_and_element() {
        let data = le(&[1i32, 2, 3, 2], i32::to_le_bytes);
        let e = fwd(16, Datatype::Int32, &data).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)));
        assert!(e.message().contains("delta is not positive"), "{e}");
        assert!(e.message().contains("window 0, element 3"), "{e}");
        let e = fwd(8, Datatype::Int32, &data).unwrap_err();
        assert!(e.message().contains("window 1, element 1"), "{e}");
        // A decrease across a window boundary is fine.
        roundtrip(8, Datatype::Int32, &le(&[5i32, 6, 1, 2], i32::to_le_bytes));
        // Signed comparison for signed types, unsigned for unsigned ones.
        assert!(fwd(16, Datatype::Int8, &[0x01, 0xFF]).is_err());
        roundtrip(16, Datatype::Uint8, &[0x01, 0xFF]);
        assert!(fwd(16, Datatype::Uint64, &le(&[u64::MAX, 0], u64::to_le_bytes)).is_err());
        roundtrip(
            16,
            Datatype::Int64,
            &le(&[i64::MIN, i64::MAX], i64::to_le_bytes),
        );
        roundtrip(16, Datatype::Uint64, &le(&[0, u64::MAX], u64::to_le_bytes));
        // The message gives the values as T: negative ones signed.
        let e = fwd(
            16,
            Datatype::Int16,
            &le(&[-7i16, -3, -5, 2], i16::to_le_bytes),
        )
        .unwrap_err();
        assert!(e.message().contains("element 2 (-5)"), "{e}");
        assert!(e.message().contains("before it (-3)"), "{e}");
        roundtrip(
            16,
            Datatype::Int16,
            &le(&[-7i16, -3, 0, 2], i16::to_le_bytes),
        );
    }

    #[test]
    fn empty_part_has_no_windows() {
        let f = roundtrip(1024, Datatype::Int32, &[]);
        assert_eq!(f.md, hex("00000000"));
        let f = fwd_parts(1024, Datatype::Int32, 22, Parts::EMPTY, Parts::EMPTY).unwrap();
        assert_eq!(f.md, hex("00000000"));
        assert_eq!(f.data_lens, vec![0]);
    }

    #[test]
    fn short_and_partial_windows_are_raw_with_zero_filled_offsets() {
        // A part shorter than one value: one raw window, offset = the bytes there are + zeros.
        let f = roundtrip(1024, Datatype::Int64, &[1, 2, 3]);
        assert_eq!(f.md, hex("01000000 0102030000000000 03000000"));
        assert_eq!(f.data, [1, 2, 3]);
        // 10 bytes of INT32, window 8: windows of 8 and 2 bytes.
        let mut data = le(&[7i32, 9], i32::to_le_bytes);
        data.extend_from_slice(&[0xAB, 0xCD]);
        let f = roundtrip(8, Datatype::Int32, &data);
        assert_eq!(f.md, hex("02000000 07000000 08000000 abcd0000 02000000"));
        assert_eq!(f.data, hex("00000000 02000000 abcd"));
        // A partial window holding whole values too: its offset is its first value, and it
        // is copied raw even when decreasing.
        let mut data = le(&[7i32, 9, 300, 3, 1], i32::to_le_bytes);
        data.push(0xEE);
        let f = roundtrip(12, Datatype::Int32, &data);
        assert_eq!(f.md, hex("02000000 07000000 0c000000 03000000 09000000"));
        assert_eq!(&f.data[12..], &data[12..]);
    }

    #[test]
    fn max_window_below_value_size_uses_one_value_per_window() {
        let data = le(&[5i32, -7, 100000], i32::to_le_bytes);
        for w in [0u32, 1, 3, 4, 5, 7] {
            let f = roundtrip(w, Datatype::Int32, &data);
            assert_eq!(
                f.md,
                hex("03000000 05000000 04000000 f9ffffff 04000000 a0860100 04000000"),
                "window {w}"
            );
            assert_eq!(f.data, [0; 12]);
        }
    }

    #[test]
    fn roundtrips_every_applied_type_and_window() {
        let mut seed = 0x0123_4567_89ab_cdefu64;
        let types = [
            Datatype::Int8,
            Datatype::Uint8,
            Datatype::Bool,
            Datatype::Blob,
            Datatype::GeomWkb,
            Datatype::Int16,
            Datatype::Uint16,
            Datatype::Int32,
            Datatype::Uint32,
            Datatype::Int64,
            Datatype::Uint64,
            Datatype::DatetimeMs,
            Datatype::TimeNs,
        ];
        for t in types {
            let (s, signed) = applied_type(t, 22).unwrap();
            for n in [0usize, 1, 2, 5, 64, 300] {
                // Sorted values over the type's range, with repeats.
                let mut vals: Vec<i128> = (0..n)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        let raw = seed & (u64::MAX >> (64 - 8 * s));
                        if signed {
                            let shift = 64 - 8 * s as u32;
                            (((raw << shift) as i64) >> shift) as i128
                        } else {
                            raw as i128
                        }
                    })
                    .collect();
                vals.sort();
                let data: Vec<u8> = vals
                    .iter()
                    .flat_map(|v| (*v as u128).to_le_bytes()[..s].to_vec())
                    .collect();
                for w in [0u32, 1, s as u32, 2 * s as u32 + 1, 1024, u32::MAX] {
                    roundtrip(w, t, &data);
                    // And with a trailing partial value (raw last window).
                    if s > 1 {
                        let mut d = data.clone();
                        d.push(0x42);
                        roundtrip(w, t, &d);
                    }
                }
            }
        }
    }

    #[test]
    fn pass_through_types_and_old_versions() {
        let data = [1u8, 2, 3, 4, 5, 6, 7, 8];
        let md_bytes = [9u8, 9];
        let md_lens = [2usize];
        let lens = [8usize];
        for (t, version) in [
            (Datatype::Char, 22),
            (Datatype::StringUtf8, 22),
            (Datatype::Float32, 22),
            (Datatype::Float64, 22),
            (Datatype::Any, 22),
            (Datatype::DatetimeDay, 19),
            (Datatype::TimeHr, 7),
        ] {
            let f = fwd_parts(
                16,
                t,
                version,
                Parts::new(&md_bytes, &md_lens),
                Parts::new(&data, &lens),
            )
            .unwrap();
            assert_eq!(f.flow, DataFlow::Forwarded, "{t:?}");
            assert_eq!(f.md, md_bytes);
            let (md_left, back) = rev(t, version, &md_bytes, &data, 8).unwrap();
            assert_eq!(md_left, md_bytes);
            assert_eq!(back, data);
        }
        // From version 20 DATETIME is encoded (and decreasing values fail).
        let dec = le(&[5i64, 4], i64::to_le_bytes);
        assert!(
            fwd_parts(
                16,
                Datatype::DatetimeDay,
                20,
                Parts::EMPTY,
                Parts::new(&dec, &[16])
            )
            .is_err()
        );
        assert!(
            fwd_parts(
                16,
                Datatype::DatetimeDay,
                19,
                Parts::EMPTY,
                Parts::new(&dec, &[16])
            )
            .is_ok()
        );
    }

    #[test]
    fn own_metadata_first_then_forwarded() {
        let data = le(&[1i32, 2], i32::to_le_bytes);
        let lens = [8usize];
        let md = [1u8, 2, 3, 4, 5];
        let md_lens = [2usize, 3];
        let f = fwd_parts(
            256,
            Datatype::Int32,
            22,
            Parts::new(&md, &md_lens),
            Parts::new(&data, &lens),
        )
        .unwrap();
        assert_eq!(f.md_lens, vec![4 + 8, 2, 3]);
        let (md_left, back) = rev(Datatype::Int32, 22, &f.md, &f.data, 8).unwrap();
        assert_eq!(md_left, md);
        assert_eq!(back, data);
    }

    #[test]
    fn reverse_rejects_bad_headers() {
        let data = le(&[5u16, 7, 7, 9, 20], u16::to_le_bytes);
        let f = roundtrip(4, Datatype::Uint16, &data);
        let mut md = f.md.clone();
        md[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(rev(Datatype::Uint16, 22, &md, &f.data, 10).is_err());
        let mut md = f.md.clone();
        md[6..10].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(rev(Datatype::Uint16, 22, &md, &f.data, 10).is_err());
        // Fewer window bytes than the output: the sink refuses the short output.
        let mut md = f.md.clone();
        md[0..4].copy_from_slice(&2u32.to_le_bytes());
        assert!(rev(Datatype::Uint16, 22, &md, &f.data, 10).is_err());
        assert!(rev(Datatype::Uint16, 22, &f.md, &f.data[..9], 10).is_err());
    }

    #[test]
    fn corrupt_input_never_panics() {
        let data = le(&[5u32, 7, 7, 9, 20, 1000, 1001], u32::to_le_bytes);
        let f = roundtrip(8, Datatype::Uint32, &data);
        for t in [Datatype::Uint32, Datatype::Int8, Datatype::Int64] {
            for len in [0usize, 4, 28, 1 << 16] {
                for cut in 0..=f.md.len() {
                    let _ = rev(t, 22, &f.md[..cut], &f.data, len);
                }
                for cut in 0..=f.data.len() {
                    let _ = rev(t, 22, &f.md, &f.data[..cut], len);
                }
                for i in 0..f.md.len() {
                    for flip in [0x01u8, 0x04, 0x80, 0xFF] {
                        let mut m = f.md.clone();
                        m[i] ^= flip;
                        let _ = rev(t, 22, &m, &f.data, len);
                    }
                }
            }
        }
    }

    /// Tiles written by TileDB 2.30.0 (TileDB-Py 0.36.1) with [POSITIVE_DELTA(window)], one
    /// dense tile per array (`a0.tdb`): (name, attribute type, window, cells, filtered tile).
    #[rustfmt::skip]
    const TILEDB_TILES: &[(&str, Datatype, u32, &str, &str)] = &[
            // pd_u16_spec: uint16 [5, 7, 7, 9, 20]
            (
                "pd_u16_spec",
                Datatype::Uint16,
                4,
                "05000700070009001400",
                "0100000000000000 0a000000 0a000000 16000000 |\
                03000000050004000000070004000000140002000000 | 00000200000002000000",
            ),
            // pd_i8: int8 [-128, -1, 0, -5, -5, 100, 127]
            (
                "pd_i8",
                Datatype::Int8,
                3,
                "80ff00fbfb647f",
                "0100000000000000 07000000 07000000 13000000 |\
                030000008003000000fb030000007f01000000 | 007f0100006900",
            ),
            // pd_u8: uint8 [0, 255, 3, 4, 200]
            (
                "pd_u8",
                Datatype::Uint8,
                2,
                "00ff0304c8",
                "0100000000000000 05000000 05000000 13000000 |\
                0300000000020000000302000000c801000000 | 00ff000100",
            ),
            // pd_i32: int32 [-2147483648, 2147483647, 5, 6, 7, 1000]
            (
                "pd_i32",
                Datatype::Int32,
                8,
                "00000080ffffff7f050000000600000007000000e8030000",
                "0100000000000000 18000000 18000000 1c000000 |\
                03000000000000800800000005000000080000000700000008000000 | \
                00000000ffffffff000000000100000000000000e1030000",
            ),
            // pd_i64: int64 [-9223372036854775808, 9223372036854775807, -3, 4, 4]
            (
                "pd_i64",
                Datatype::Int64,
                16,
                "0000000000000080ffffffffffffff7ffdffffffffffffff04000000000000000400000000000000",
                "0100000000000000 28000000 28000000 28000000 |\
                03000000000000000000008010000000fdffffffffffffff10000000040000000000000008000000 \
                | \
                0000000000000000ffffffffffffffff000000000000000007000000000000000000000000000000",
            ),
            // pd_u64: uint64 [0, 18446744073709551615, 1, 2, 9223372036854775808]
            (
                "pd_u64",
                Datatype::Uint64,
                16,
                "0000000000000000ffffffffffffffff010000000000000002000000000000000000000000000080",
                "0100000000000000 28000000 28000000 28000000 |\
                03000000000000000000000010000000010000000000000010000000000000000000008008000000 \
                | \
                0000000000000000ffffffffffffffff000000000000000001000000000000000000000000000000",
            ),
            // pd_i32_default: int32 [0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42, 45, 48, 51, 54, 57, 60, 63, 66, 69, 72, 75, 78, 81, 84, 87, 90, 93, 96, 99, 102, 105, 108, 111, 114, 117, 120, 123, 126, 129, 132, 135, 138, 141, 144, 147, 150, 153, 156, 159, 162, 165, 168, 171, 174, 177, 180, 183, 186, 189, 192, 195, 198, 201, 204, 207, 210, 213, 216, 219, 222, 225, 228, 231, 234, 237, 240, 243, 246, 249, 252, 255, 258, 261, 264, 267, 270, 273, 276, 279, 282, 285, 288, 291, 294, 297, 300, 303, 306, 309, 312, 315, 318, 321, 324, 327, 330, 333, 336, 339, 342, 345, 348, 351, 354, 357, 360, 363, 366, 369, 372, 375, 378, 381, 384, 387, 390, 393, 396, 399, 402, 405, 408, 411, 414, 417, 420, 423, 426, 429, 432, 435, 438, 441, 444, 447, 450, 453, 456, 459, 462, 465, 468, 471, 474, 477, 480, 483, 486, 489, 492, 495, 498, 501, 504, 507, 510, 513, 516, 519, 522, 525, 528, 531, 534, 537, 540, 543, 546, 549, 552, 555, 558, 561, 564, 567, 570, 573, 576, 579, 582, 585, 588, 591, 594, 597]
            (
                "pd_i32_default",
                Datatype::Int32,
                1024,
                "000000000300000006000000090000000c0000000f0000001200000015000000180000001b000000\
                1e0000002100000024000000270000002a0000002d00000030000000330000003600000039000000 \
                3c0000003f0000004200000045000000480000004b0000004e000000510000005400000057000000 \
                5a0000005d000000600000006300000066000000690000006c0000006f0000007200000075000000 \
                780000007b0000007e0000008100000084000000870000008a0000008d0000009000000093000000 \
                96000000990000009c0000009f000000a2000000a5000000a8000000ab000000ae000000b1000000 \
                b4000000b7000000ba000000bd000000c0000000c3000000c6000000c9000000cc000000cf000000 \
                d2000000d5000000d8000000db000000de000000e1000000e4000000e7000000ea000000ed000000 \
                f0000000f3000000f6000000f9000000fc000000ff0000000201000005010000080100000b010000 \
                0e0100001101000014010000170100001a0100001d01000020010000230100002601000029010000 \
                2c0100002f0100003201000035010000380100003b0100003e010000410100004401000047010000 \
                4a0100004d010000500100005301000056010000590100005c0100005f0100006201000065010000 \
                680100006b0100006e0100007101000074010000770100007a0100007d0100008001000083010000 \
                86010000890100008c0100008f0100009201000095010000980100009b0100009e010000a1010000 \
                a4010000a7010000aa010000ad010000b0010000b3010000b6010000b9010000bc010000bf010000 \
                c2010000c5010000c8010000cb010000ce010000d1010000d4010000d7010000da010000dd010000 \
                e0010000e3010000e6010000e9010000ec010000ef010000f2010000f5010000f8010000fb010000 \
                fe0100000102000004020000070200000a0200000d02000010020000130200001602000019020000 \
                1c0200001f0200002202000025020000280200002b0200002e020000310200003402000037020000 \
                3a0200003d020000400200004302000046020000490200004c0200004f0200005202000055020000",
                "0100000000000000 20030000 20030000 0c000000 | 010000000000000020030000 |\
                00000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000 \
                03000000030000000300000003000000030000000300000003000000030000000300000003000000",
            ),
            // pd_i32_w5: int32 [1, 2, 3, 4, 5]
            (
                "pd_i32_w5",
                Datatype::Int32,
                5,
                "0100000002000000030000000400000005000000",
                "0100000000000000 14000000 14000000 2c000000 |\
                05000000010000000400000002000000040000000300000004000000040000000400000005000000 \
                04000000 | 0000000000000000000000000000000000000000",
            ),
            // pd_dt_s: datetime64[s] [1700000000, 1700000001, 1700000004, 1700000009, 1700000016, 1700000025, 1700000036, 1700000049, 1700000064]
            (
                "pd_dt_s",
                Datatype::DatetimeSec,
                24,
                "00f153650000000001f153650000000004f153650000000009f153650000000010f1536500000000\
                19f153650000000024f153650000000031f153650000000040f1536500000000",
                "0100000000000000 48000000 48000000 28000000 |\
                0300000000f15365000000001800000009f15365000000001800000024f153650000000018000000 \
                | \
                00000000000000000100000000000000030000000000000000000000000000000700000000000000 \
                090000000000000000000000000000000d000000000000000f00000000000000",
            ),
    ];

    #[test]
    fn real_tiledb_tiles() {
        for &(name, t, w, cells, tiledb) in TILEDB_TILES {
            let mut p = Pipeline::new();
            p.push(Filter::PositiveDelta { max_window: w }).unwrap();
            let (data, want) = (hex(cells), hex(tiledb));
            let tile = Tile::new(t, t.size() as u64, data.clone()).unwrap();
            assert_eq!(p.filter_tile(&tile).unwrap(), want, "{name}");
            let back = p.unfilter_tile(&want, t, t.size() as u64).unwrap();
            assert_eq!(back.data(), &data[..], "{name}");
        }
    }

    #[test]
    fn tiledb_decreasing_errors_are_reproduced() {
        // TileDB 2.30: "Positive delta filter error: delta is not positive." for INT32
        // [1,2,3,2] with window 16 and window 8, and INT8 [-128,-1,0,127,-5] with window 3.
        for (t, w, cells) in [
            (Datatype::Int32, 16, le(&[1i32, 2, 3, 2], i32::to_le_bytes)),
            (Datatype::Int32, 8, le(&[1i32, 2, 3, 2], i32::to_le_bytes)),
            (
                Datatype::Int8,
                3,
                le(&[-128i8, -1, 0, 127, -5], i8::to_le_bytes),
            ),
        ] {
            let mut p = Pipeline::new();
            p.push(Filter::PositiveDelta { max_window: w }).unwrap();
            let tile = Tile::new(t, t.size() as u64, cells).unwrap();
            let e = p.filter_tile(&tile).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
            assert!(e.message().contains("delta is not positive"), "{e}");
        }
    }

    fn spec_pipeline(spec: &str) -> Pipeline {
        crate::pipeline::spec::parse(spec).unwrap()
    }

    /// Hex where `xx` marks a byte TileDB reads out of bounds (`None`).
    fn hex_masked(s: &str) -> Vec<Option<u8>> {
        let s: String = s
            .chars()
            .filter(|c| c.is_ascii_hexdigit() || *c == 'x')
            .collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
            .collect()
    }

    /// [DOUBLE_DELTA, POSITIVE_DELTA] on INT64 [10, 13], written by TileDB 2.30: PD gets
    /// DD's 25-byte part, so its last window is 1 byte; TileDB's offset for it is that byte
    /// and 7 bytes read past the part (zeros in most runs, `8a553c755500` in one).
    #[test]
    fn real_tiledb_partial_window() {
        let p = spec_pipeline("double_delta,positive_delta:window=1024");
        let cells = le(&[10i64, 13], i64::to_le_bytes);
        let tile = Tile::new(Datatype::Int64, 8, cells.clone()).unwrap();
        let tiledb = "0100000000000000 10000000 19000000 2c000000 | 02000000 0002000000000000 \
                      18000000 00xxxxxxxxxxxxxx 01000000 | 00000000 01000000 10000000 19000000 \
                      | 0000000000000000 0008000000000000 0003000000000000 00";
        let want = hex_masked(tiledb);
        let ours = p.filter_tile(&tile).unwrap();
        assert_eq!(ours.len(), want.len());
        for (i, (&o, w)) in ours.iter().zip(&want).enumerate() {
            assert_eq!(o, w.unwrap_or(0), "byte {i}");
        }
        let theirs: Vec<u8> = want.iter().map(|b| b.unwrap_or(0x5A)).collect();
        assert_eq!(
            p.unfilter_tile(&theirs, Datatype::Int64, 8).unwrap().data(),
            &cells[..]
        );
    }

    /// Our encodings where TileDB 2.30 divides by zero. Each of these exact tiles was read
    /// back by TileDB 2.30.0 (TileDB-Py 0.36.1) and gave the original cells: the tile
    /// replaced the attribute file of a fragment written by TileDB, the footer's file size
    /// patched, the schema swapped for one with this pipeline.
    #[test]
    fn edge_encodings_tiledb_reads_back() {
        let zstd = spec_pipeline("zstd:-1");
        let empty = Tile::new_var(Datatype::Int64, vec![0, 0, 0], vec![]).unwrap();
        let p = spec_pipeline("positive_delta:window=256");
        let (_, data) = p.filter_var(&zstd, &empty).unwrap();
        assert_eq!(
            data,
            hex("0100000000000000 00000000 00000000 04000000 | 00000000")
        );
        // LZ4 turns the empty chunk into 1 byte: one raw window, offset = that byte + zeros.
        let p = spec_pipeline("lz4,positive_delta:window=256");
        let (_, data) = p.filter_var(&zstd, &empty).unwrap();
        assert_eq!(
            data,
            hex(
                "0100000000000000 00000000 01000000 20000000 | 01000000 0000000000000000 \
                 01000000 | 00000000 01000000 00000000 01000000 | 00"
            )
        );
        for (spec, t, cells, tiledb_reads) in [
            (
                "positive_delta:window=3",
                Datatype::Int32,
                le(&[5i32, 7, 100000], i32::to_le_bytes),
                "0100000000000000 0c000000 0c000000 1c000000 | 03000000 05000000 04000000 \
                 07000000 04000000 a0860100 04000000 | 00000000 00000000 00000000",
            ),
            (
                "positive_delta:window=5",
                Datatype::Int64,
                le(&[5i64, 7], i64::to_le_bytes),
                "0100000000000000 10000000 10000000 1c000000 | 02000000 0500000000000000 \
                 08000000 0700000000000000 08000000 | 0000000000000000 0000000000000000",
            ),
            (
                "double_delta,positive_delta:window=4",
                Datatype::Int64,
                le(&[10i64, 13], i64::to_le_bytes),
                "0100000000000000 10000000 19000000 44000000 | 04000000 0002000000000000 \
                 08000000 000a000000000000 08000000 000d000000000000 08000000 \
                 0000000000000000 01000000 | 00000000 01000000 10000000 19000000 | 0000000000000000 0000000000000000 0000000000000000 00",
            ),
        ] {
            let p = spec_pipeline(spec);
            let tile = Tile::new(t, t.size() as u64, cells.clone()).unwrap();
            let ours = p.filter_tile(&tile).unwrap();
            assert_eq!(ours, hex(tiledb_reads), "{spec}");
            assert_eq!(
                p.unfilter_tile(&ours, t, t.size() as u64).unwrap().data(),
                &cells[..]
            );
        }
    }
}
