//! BIT_WIDTH_REDUCTION (7): each window of values is stored relative to its minimum in the
//! narrowest of 8, 16, 32 or 64 bits that holds the window's range (docs/FORMAT.md §5.12).
//!
//! Applies to INT16…UINT64, and to DATETIME_* / TIME_* (as `i64`) when the tile format
//! version is at least 20; every other type passes through unchanged.
//!
//! Own metadata: `u32 total_input_length, u32 total_windows`, then per window (all parts in
//! order) `T window_offset, u8 bits, u32 window_length`. Data: one part, each window either
//! its raw bytes (`bits >= 8·s` or a length that is not a whole number of values) or every
//! value minus the window minimum in `bits / 8` bytes.
//!
//! TileDB 2.30 divides by zero when a window would be 0 bytes. This encoder writes instead,
//! and TileDB's reader decodes each of these (see [`reverse`]):
//! * an empty part: no window;
//! * a part shorter than one value: one raw window of the whole part (`bits = 8·s`, offset 0);
//! * `max_window` smaller than one value: windows of one value each.
//!
//! Where TileDB leaves `window_offset` uninitialized (a window with no whole value, or whose
//! range overflows `T`), zeros are written; readers ignore the field for raw windows.

use crate::engine::stage::{DataFlow, FwdIn, FwdOut, MdFlow, RevIn, RevOut, StageCtx};
use crate::error::{Error, Result};
use crate::filters::config::Filter;
use crate::filters::int_values::{
    extend, key_value, load, order_key, window_count, windows as windows_of,
};
use crate::filters::registry::{FilterDescriptor, OptionsLayout, wrong_filter};
use crate::format::byte_reader::ByteReader;
use crate::format::datatype::Datatype;
use crate::format::filter_type::{FilterOption, FilterType};
use crate::mem::OutBuf;

/// The integer type the filter treats `datatype` as — `(size, signed)` — or `None` when it
/// passes the data through.
fn applied_type(datatype: Datatype, version: u32) -> Option<(usize, bool)> {
    use Datatype::*;
    match datatype {
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
        (2, true) => encode::<2, true>(max_window, input, out),
        (2, false) => encode::<2, false>(max_window, input, out),
        (4, true) => encode::<4, true>(max_window, input, out),
        (4, false) => encode::<4, false>(max_window, input, out),
        (8, true) => encode::<8, true>(max_window, input, out),
        _ => encode::<8, false>(max_window, input, out),
    }
}

/// Header of one window: `bits` and the offset (the minimum, or zero when TileDB leaves it
/// uninitialized), computed over the window's whole values as TileDB does.
fn window_header<const N: usize, const SIGNED: bool>(window: &[u8]) -> (u8, i128) {
    let raw = (8 * N) as u8;
    let mut values = window.chunks_exact(N);
    let Some(first) = values.next().map(|v| order_key::<N, SIGNED>(load::<N>(v))) else {
        return (raw, 0);
    };
    let (mut lo, mut hi) = (first, first);
    for v in values {
        let k = order_key::<N, SIGNED>(load::<N>(v));
        lo = lo.min(k);
        hi = hi.max(k);
    }
    let (min, max) = (key_value::<SIGNED>(lo), key_value::<SIGNED>(hi));
    let t_max: i128 = if SIGNED {
        (1i128 << (8 * N - 1)) - 1
    } else {
        (1i128 << (8 * N)) - 1
    };
    // TileDB checks `max − min` and `max − min + 1` for overflow of T.
    if max - min >= t_max {
        return (raw, 0);
    }
    let r = max - min + 1;
    let limits: [i128; 3] = if SIGNED {
        [i8::MAX as i128, i16::MAX as i128, i32::MAX as i128]
    } else {
        [u8::MAX as i128, u16::MAX as i128, u32::MAX as i128]
    };
    let bits = match limits.iter().position(|&l| r <= l) {
        Some(0) => 8,
        Some(1) => 16,
        Some(_) => 32,
        None => 64,
    };
    (bits, min)
}

fn encode<const N: usize, const SIGNED: bool>(
    max_window: u32,
    input: FwdIn<'_>,
    out: FwdOut<'_>,
) -> Result<DataFlow> {
    let total_len = u32::try_from(input.data.total_len())
        .map_err(|_| Error::invalid("input of 4 GiB or more cannot be bit-width reduced"))?;
    let windows = window_count(input.data, max_window, N);
    let header = N + 5;
    let own = out.md.push_uninit(8 + windows * header);
    own[0..4].copy_from_slice(&total_len.to_le_bytes());
    own[4..8].copy_from_slice(&(windows as u32).to_le_bytes());
    // First pass: every window's header, and so the packed length.
    let mut packed_len = 0usize;
    let mut h = 8;
    // Internal iteration (`for_each`): the windows of each part run as one tight loop.
    windows_of(input.data, max_window, N).for_each(|window| {
        let (bits, offset) = window_header::<N, SIGNED>(window);
        let hdr = &mut own[h..h + header];
        hdr[..N].copy_from_slice(&(offset as u64).to_le_bytes()[..N]);
        hdr[N] = bits;
        hdr[N + 1..].copy_from_slice(&(window.len() as u32).to_le_bytes());
        h += header;
        packed_len += packed_size(N, bits, window.len());
    });
    // Second pass: the windows, raw or packed as their headers say.
    let mut h = 8;
    out.data.push_filled(packed_len, |dst| {
        windows_of(input.data, max_window, N).for_each(|window| {
            let hdr = &own[h..h + header];
            h += header;
            let (offset, bits) = (load::<N>(hdr), hdr[N]);
            match packed_width(N, bits, window.len()) {
                None => dst.put(window),
                Some(1) => pack::<N, 1>(window, offset, dst),
                Some(2) => pack::<N, 2>(window, offset, dst),
                Some(_) => pack::<N, 4>(window, offset, dst),
            }
        });
        Ok::<(), Error>(())
    })?;
    out.md.extend_forwarded(input.md);
    Ok(DataFlow::Written)
}

/// The byte width of each packed value of a window of `len` bytes of `n`-byte values with
/// header `bits`, or `None` for a raw window (TileDB's reader rule: `bits >= 8·n` or a length
/// that is not a whole number of values).
#[inline(always)]
fn packed_width(n: usize, bits: u8, len: usize) -> Option<usize> {
    (usize::from(bits) < 8 * n && len.is_multiple_of(n)).then_some(usize::from(bits) / 8)
}

/// The stored size of a window of `len` bytes with header `bits`.
#[inline(always)]
fn packed_size(n: usize, bits: u8, len: usize) -> usize {
    packed_width(n, bits, len).map_or(len, |w| len / n * w)
}

/// Appends each `N`-byte value of `window` minus `offset` as its low `W` bytes.
#[inline(always)]
fn pack<const N: usize, const W: usize>(window: &[u8], offset: u64, dst: &mut OutBuf<'_>) {
    dst.put_arrays(
        window
            .chunks_exact(N)
            .map(|v| low_bytes::<W>(load::<N>(v).wrapping_sub(offset))),
    );
}

/// The low `W` bytes of `x`, little-endian.
#[inline(always)]
fn low_bytes<const W: usize>(x: u64) -> [u8; W] {
    *x.to_le_bytes().first_chunk::<W>().expect("W ≤ 8")
}

/// Appends the `N`-byte values restored from `W`-byte packed ones (sign-extended for signed
/// types) plus `offset`, modulo `2^(8·N)`.
#[inline(always)]
fn unpack<const N: usize, const W: usize, const SIGNED: bool>(
    src: &[u8],
    offset: u64,
    dst: &mut OutBuf<'_>,
) {
    dst.put_arrays(src.chunks_exact(W).map(|v| {
        let rel = extend::<SIGNED>(load::<W>(v), W);
        low_bytes::<N>(rel.wrapping_add(offset))
    }));
}

/// Reverse: restores every window; the metadata after the own block is passed on.
///
/// Follows TileDB 2.30's reader: a window is raw when `bits >= 8·s` or its length is not a
/// multiple of `s` (whatever its offset), otherwise it holds `length / s` values of
/// `bits / 8` bytes, sign-extended for signed types, to which the offset is added modulo
/// `2^(8·s)`. So a zero-window part, a short raw window and one-value windows all decode.
/// The output is the windows' lengths summed, which must not exceed the recorded total
/// (TileDB's allocation). Packed windows with `bits` other than 8, 16 or 32 (where TileDB has
/// no defined behaviour), input shorter than the windows need, or more window headers than
/// the metadata holds are `CorruptData`.
pub fn reverse(
    ctx: &mut StageCtx<'_>,
    input: RevIn<'_>,
    out: RevOut<'_>,
) -> Result<(MdFlow, DataFlow)> {
    let Some(t) = applied_type(ctx.datatype, ctx.version) else {
        return Ok((MdFlow::Rest(0), DataFlow::Forwarded));
    };
    let own = match t {
        (2, true) => decode::<2, true>(input, out)?,
        (2, false) => decode::<2, false>(input, out)?,
        (4, true) => decode::<4, true>(input, out)?,
        (4, false) => decode::<4, false>(input, out)?,
        (8, true) => decode::<8, true>(input, out)?,
        _ => decode::<8, false>(input, out)?,
    };
    Ok((MdFlow::Rest(own), DataFlow::Written))
}

/// One parsed window header: offset bits, `bits`, input length in bytes.
struct Window {
    offset: u64,
    bits: u8,
    len: usize,
}

impl Window {
    /// Parses one `N + 5`-byte header.
    fn parse<const N: usize>(h: &[u8]) -> Window {
        Window {
            offset: load::<N>(h),
            bits: h[N],
            len: u32::from_le_bytes(h[N + 1..N + 5].try_into().expect("4 bytes")) as usize,
        }
    }
}

/// Decodes into `out.data`; returns the length of the own metadata block.
fn decode<const N: usize, const SIGNED: bool>(
    input: RevIn<'_>,
    mut out: RevOut<'_>,
) -> Result<usize> {
    let mut r = ByteReader::new(input.md, "bit width reduction metadata");
    let total_len = r.u32()? as u64;
    let count = r.u32()? as usize;
    let header = N + 5;
    if count as u64 * header as u64 > r.remaining() as u64 {
        return Err(Error::corrupt(format!(
            "bit width reduction metadata truncated: {count} window headers need {} bytes, {} left",
            count as u64 * header as u64,
            r.remaining()
        )));
    }
    // Headers are parsed twice (checked and summed, then decoded) rather than collected.
    let headers = r.take(count * header)?;
    let (mut out_len, mut in_len) = (0u64, 0u64);
    for (i, h) in headers.chunks_exact(header).enumerate() {
        let w = Window::parse::<N>(h);
        if packed_width(N, w.bits, w.len).is_some() && !matches!(w.bits, 8 | 16 | 32) {
            return Err(Error::corrupt(format!(
                "window {i}: invalid bit width {} for {N}-byte values",
                w.bits
            )));
        }
        in_len += packed_size(N, w.bits, w.len) as u64;
        out_len += w.len as u64;
    }
    if in_len > input.data.len() as u64 {
        return Err(Error::corrupt(format!(
            "bit width reduction windows need {in_len} bytes of data, only {} present",
            input.data.len()
        )));
    }
    if out_len > total_len {
        return Err(Error::corrupt(format!(
            "bit width reduction windows restore {out_len} bytes, more than the recorded {total_len}"
        )));
    }
    let mut dst = out.data.alloc(out_len as usize)?;
    let mut src = input.data;
    for w in headers.chunks_exact(header).map(Window::parse::<N>) {
        let (bytes, rest) = src.split_at(packed_size(N, w.bits, w.len));
        src = rest;
        match packed_width(N, w.bits, w.len) {
            None => dst.put(bytes),
            Some(1) => unpack::<N, 1, SIGNED>(bytes, w.offset, &mut dst),
            Some(2) => unpack::<N, 2, SIGNED>(bytes, w.offset, &mut dst),
            Some(_) => unpack::<N, 4, SIGNED>(bytes, w.offset, &mut dst),
        }
    }
    Ok(r.position())
}

/// The BitWidthReduction filter's descriptor: windows of one 2-byte element cost up to 13 header bytes, hence 8n.
pub const DESCRIPTOR: FilterDescriptor = FilterDescriptor {
    filter_type: FilterType::BitWidthReduction,
    default: Filter::BitWidthReduction { max_window: 256 },
    positional: Some(FilterOption::BitWidthMaxWindow),
    layout: OptionsLayout::Window,
    forward: |f, ctx, input, out| match f {
        Filter::BitWidthReduction { max_window } => forward(*max_window, ctx, input, out),
        other => Err(wrong_filter(FilterType::BitWidthReduction, other)),
    },
    reverse: |_, ctx, input, out| reverse(ctx, input, out),
    fixed_growth: |n| n.saturating_mul(8),
    unbounded_on_strings: false,
    reverse_max_ratio: 8,
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

    /// Hex where `xx` marks a byte TileDB leaves uninitialized (`None`).
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

    fn fwd_parts(w: u32, t: Datatype, version: u32, md: Parts<'_>, data: Parts<'_>) -> Fwd {
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
        )
        .unwrap();
        Fwd {
            md: om.as_parts().bytes().to_vec(),
            md_lens: om.as_parts().lens().to_vec(),
            data: od.as_parts().bytes().to_vec(),
            data_lens: od.as_parts().lens().to_vec(),
            flow,
        }
    }

    fn fwd(w: u32, t: Datatype, data: &[u8]) -> Fwd {
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
            &Filter::BitWidthReduction { max_window: 256 },
            t,
            version,
            md,
            data,
            len,
        )
    }

    fn roundtrip(w: u32, t: Datatype, data: &[u8]) -> Fwd {
        let f = fwd(w, t, data);
        assert_eq!(f.flow, DataFlow::Written);
        assert_eq!(f.data_lens, vec![f.data.len()]);
        let (md_left, back) = rev(t, 22, &f.md, &f.data, data.len()).unwrap();
        assert!(md_left.is_empty());
        assert_eq!(back, data, "{t:?} window {w}");
        f
    }

    #[test]
    fn spec_vector_int32_window_16() {
        // docs/FORMAT.md §9.2: INT32 [1000,1001,1005,1010,70000,70001], window 16.
        let data = le(&[1000i32, 1001, 1005, 1010, 70000, 70001], i32::to_le_bytes);
        let f = roundtrip(16, Datatype::Int32, &data);
        assert_eq!(
            f.md,
            hex("18000000 02000000 e8030000 08 10000000 70110100 08 08000000")
        );
        assert_eq!(f.data, hex("0001050a 0001"));
    }

    #[test]
    fn empty_part_has_no_windows() {
        for t in [Datatype::Int16, Datatype::Uint64] {
            let f = roundtrip(256, t, &[]);
            assert_eq!(f.md, hex("00000000 00000000"));
            assert_eq!(f.data_lens, vec![0]);
        }
        // Zero data parts (after a pass-through of an empty chunk): one empty data part.
        let f = fwd_parts(256, Datatype::Int32, 22, Parts::EMPTY, Parts::EMPTY);
        assert_eq!(f.md, hex("00000000 00000000"));
        assert_eq!(f.data_lens, vec![0]);
    }

    #[test]
    fn part_shorter_than_one_value_is_one_raw_window() {
        let f = roundtrip(256, Datatype::Int64, &[1, 2, 3]);
        assert_eq!(f.md, hex("03000000 01000000 0000000000000000 40 03000000"));
        assert_eq!(f.data, [1, 2, 3]);
        let f = roundtrip(256, Datatype::Uint16, &[9]);
        assert_eq!(f.md, hex("01000000 01000000 0000 10 01000000"));
    }

    #[test]
    fn max_window_below_value_size_uses_one_value_per_window() {
        let data = le(&[5i32, -7, 100000], i32::to_le_bytes);
        for w in [0u32, 1, 3, 4, 7] {
            let f = roundtrip(w, Datatype::Int32, &data);
            assert_eq!(
                f.md,
                hex(
                    "0c000000 03000000 05000000 08 04000000 f9ffffff 08 04000000 a0860100 08 04000000"
                ),
                "window {w}"
            );
            assert_eq!(f.data, [0, 0, 0]);
        }
    }

    #[test]
    fn partial_last_window_is_raw_with_tiledb_header() {
        // 10 bytes of INT32, window 256: windows of 8 and 2 bytes. The 2-byte window has no
        // whole value: bits 32 and an offset TileDB leaves uninitialized (zero here).
        let mut data = le(&[7i32, 9], i32::to_le_bytes);
        data.extend_from_slice(&[0xAB, 0xCD]);
        let f = roundtrip(256, Datatype::Int32, &data);
        assert_eq!(
            f.md,
            hex("0a000000 02000000 07000000 08 08000000 00000000 20 02000000")
        );
        assert_eq!(f.data, hex("00 02 abcd"));
        // 14 bytes, window 8: windows 8, 6 → the 6-byte one holds 1 value: its header is the
        // computed min and bits (8), yet the data is raw because 6 is not a multiple of 4.
        let mut data = le(&[7i32, 9, 300], i32::to_le_bytes);
        data.extend_from_slice(&[1, 2]);
        let f = roundtrip(8, Datatype::Int32, &data);
        assert_eq!(
            f.md,
            hex("0e000000 02000000 07000000 08 08000000 2c010000 08 06000000")
        );
        assert_eq!(f.data, hex("00 02 2c01000001 02"));
    }

    #[test]
    fn windows_exactly_and_not_exactly_the_max() {
        let data: Vec<u8> = le(&(0..12i16).collect::<Vec<_>>(), i16::to_le_bytes);
        let f = roundtrip(8, Datatype::Int16, &data);
        assert_eq!(f.md.len(), 8 + 3 * 7);
        assert_eq!(&f.md[4..8], &3u32.to_le_bytes());
        let f = roundtrip(10, Datatype::Int16, &data);
        // 24 bytes in windows of 10: 10, 10, 4.
        assert_eq!(&f.md[4..8], &3u32.to_le_bytes());
        assert_eq!(&f.md[8 + 7 + 3..8 + 7 + 7], &10u32.to_le_bytes());
        assert_eq!(&f.md[8 + 14 + 3..8 + 14 + 7], &4u32.to_le_bytes());
    }

    #[test]
    fn bit_widths_and_extremes() {
        // Signed: r = 127 → 8 bits, r = 128 → 16 bits.
        let f = roundtrip(256, Datatype::Int32, &le(&[-10i32, 116], i32::to_le_bytes));
        assert_eq!(f.md[12], 8);
        let f = roundtrip(256, Datatype::Int32, &le(&[-10i32, 117], i32::to_le_bytes));
        assert_eq!(f.md[12], 16);
        // Unsigned: r = 255 → 8 bits, r = 256 → 16.
        let f = roundtrip(256, Datatype::Uint16, &le(&[1u16, 255], u16::to_le_bytes));
        assert_eq!(f.md[10], 8);
        let f = roundtrip(256, Datatype::Uint16, &le(&[0u16, 255], u16::to_le_bytes));
        assert_eq!(f.md[10], 16);
        // Overflowing ranges: raw, offset zero.
        for (t, data) in [
            (Datatype::Int64, le(&[i64::MIN, i64::MAX], i64::to_le_bytes)),
            (Datatype::Int64, le(&[-1i64, i64::MAX], i64::to_le_bytes)),
            (Datatype::Uint64, le(&[0u64, u64::MAX], u64::to_le_bytes)),
            (Datatype::Int16, le(&[i16::MIN, 0, -1], i16::to_le_bytes)),
            (Datatype::Uint32, le(&[u32::MAX, 0], u32::to_le_bytes)),
        ] {
            let f = roundtrip(256, t, &data);
            let s = t.size();
            assert!(f.md[8..8 + s].iter().all(|&b| b == 0), "{t:?}");
            assert_eq!(f.md[8 + s] as usize, 8 * s);
            assert_eq!(f.data, data);
        }
        // Range exactly T::MAX − 1: representable, 64 bits ≥ 64 → raw but offset = min.
        let f = roundtrip(
            256,
            Datatype::Uint64,
            &le(&[1u64, u64::MAX - 1], u64::to_le_bytes),
        );
        assert_eq!(&f.md[8..16], &1u64.to_le_bytes());
        assert_eq!(f.md[16], 64);
        // Large values, small range.
        let data = le(&[u64::MAX, u64::MAX - 200, u64::MAX - 3], u64::to_le_bytes);
        let f = roundtrip(256, Datatype::Uint64, &data);
        assert_eq!(f.md[16], 8);
        assert_eq!(f.data, [200, 0, 197]);
        let data = le(&[i64::MIN, i64::MIN + 30000], i64::to_le_bytes);
        let f = roundtrip(256, Datatype::Int64, &data);
        assert_eq!(f.md[16], 16);
        let data = le(&[i64::MIN, i64::MIN + 40000], i64::to_le_bytes);
        let f = roundtrip(256, Datatype::Int64, &data);
        assert_eq!(f.md[16], 32);
    }

    #[test]
    fn roundtrips_every_applied_type_and_window() {
        let mut seed = 0xdead_beef_1234_5678u64;
        let types = [
            Datatype::Int16,
            Datatype::Uint16,
            Datatype::Int32,
            Datatype::Uint32,
            Datatype::Int64,
            Datatype::Uint64,
            Datatype::DatetimeNs,
            Datatype::DatetimeYear,
            Datatype::TimeSec,
        ];
        for t in types {
            let s = t.size();
            for len in [0usize, 1, s - 1, s, s + 1, 2 * s, 7 * s + 3, 100 * s] {
                for shift in [0u32, 50, 60, 62, 63] {
                    let data: Vec<u8> = (0..len.div_ceil(s))
                        .flat_map(|_| {
                            seed ^= seed << 13;
                            seed ^= seed >> 7;
                            seed ^= seed << 17;
                            (seed >> shift).wrapping_add(1 << 40).to_le_bytes()[..s].to_vec()
                        })
                        .take(len)
                        .collect();
                    for w in [0u32, 1, s as u32, s as u32 + 1, 3 * s as u32, 256, u32::MAX] {
                        roundtrip(w, t, &data);
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
            (Datatype::Int8, 22),
            (Datatype::Uint8, 22),
            (Datatype::Bool, 22),
            (Datatype::Blob, 22),
            (Datatype::Char, 22),
            (Datatype::StringAscii, 22),
            (Datatype::Float32, 22),
            (Datatype::Float64, 22),
            (Datatype::Any, 22),
            (Datatype::DatetimeNs, 19),
            (Datatype::TimeAs, 1),
        ] {
            let f = fwd_parts(
                16,
                t,
                version,
                Parts::new(&md_bytes, &md_lens),
                Parts::new(&data, &lens),
            );
            assert_eq!(f.flow, DataFlow::Forwarded, "{t:?}");
            assert_eq!(f.md, md_bytes);
            let (md_left, back) = rev(t, version, &md_bytes, &data, 8).unwrap();
            assert_eq!(md_left, md_bytes);
            assert_eq!(back, data);
        }
        // Version 20 applies to DATETIME.
        let f = fwd_parts(
            16,
            Datatype::DatetimeNs,
            20,
            Parts::EMPTY,
            Parts::new(&data, &lens),
        );
        assert_eq!(f.flow, DataFlow::Written);
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
        );
        assert_eq!(f.md_lens, vec![8 + 9, 2, 3]);
        assert_eq!(&f.md[17..], &md);
        let (md_left, back) = rev(Datatype::Int32, 22, &f.md, &f.data, 8).unwrap();
        assert_eq!(md_left, md);
        assert_eq!(back, data);
    }

    #[test]
    fn several_data_parts_have_their_own_windows() {
        let data = le(&[1i16, 2, 3, 1000, 1001], i16::to_le_bytes);
        let lens = [6usize, 0, 3, 1];
        let f = fwd_parts(
            256,
            Datatype::Int16,
            22,
            Parts::EMPTY,
            Parts::new(&data, &lens),
        );
        // Windows: [1,2,3]; none for the empty part; 2 + 1 bytes (window 2 = one value);
        // 1 byte.
        assert_eq!(&f.md[..8], &hex("0a000000 04000000"));
        assert_eq!(f.data_lens, vec![f.data.len()]);
        let (_, back) = rev(Datatype::Int16, 22, &f.md, &f.data, 10).unwrap();
        assert_eq!(back, data);
    }

    #[test]
    fn reverse_rejects_bad_headers() {
        let data = le(&[1000i32, 1001, 1005, 1010, 70000, 70001], i32::to_le_bytes);
        let f = roundtrip(16, Datatype::Int32, &data);
        // bits 24 on a packed window: TileDB has no defined behaviour.
        let mut md = f.md.clone();
        md[12] = 24;
        assert!(matches!(
            rev(Datatype::Int32, 22, &md, &f.data, 24),
            Err(Error::CorruptData(_))
        ));
        // bits 255 on a 4-byte type is TileDB's raw path: the window copies 16 input bytes.
        md[12] = 255;
        assert!(rev(Datatype::Int32, 22, &md, &f.data, 24).is_err());
        // Huge window count.
        let mut md = f.md.clone();
        md[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(rev(Datatype::Int32, 22, &md, &f.data, 24).is_err());
        // Windows restoring more than the recorded total.
        let mut md = f.md.clone();
        md[0..4].copy_from_slice(&20u32.to_le_bytes());
        assert!(rev(Datatype::Int32, 22, &md, &f.data, 24).is_err());
        // A recorded total larger than the windows: output = the windows (TileDB's size).
        let mut md = f.md.clone();
        md[0..4].copy_from_slice(&100u32.to_le_bytes());
        assert_eq!(rev(Datatype::Int32, 22, &md, &f.data, 24).unwrap().1, data);
        // Truncated data.
        assert!(rev(Datatype::Int32, 22, &f.md, &f.data[..5], 24).is_err());
    }

    #[test]
    fn corrupt_input_never_panics() {
        let data = le(
            &[1000i32, 1001, 1005, 1010, 70000, 70001, -5],
            i32::to_le_bytes,
        );
        for t in [Datatype::Int32, Datatype::Uint16, Datatype::Int64] {
            let f = roundtrip(12, Datatype::Int32, &data);
            for len in [0usize, 8, 28, 1 << 16] {
                for cut in 0..=f.md.len() {
                    let _ = rev(t, 22, &f.md[..cut], &f.data, len);
                }
                for cut in 0..=f.data.len() {
                    let _ = rev(t, 22, &f.md, &f.data[..cut], len);
                }
                for i in 0..f.md.len() {
                    for flip in [0x01u8, 0x08, 0x80, 0xFF] {
                        let mut m = f.md.clone();
                        m[i] ^= flip;
                        let _ = rev(t, 22, &m, &f.data, len);
                    }
                }
            }
        }
    }

    /// Tiles written by TileDB 2.30.0 (TileDB-Py 0.36.1) with [BIT_WIDTH_REDUCTION(window)],
    /// one dense tile per array (`a0.tdb`): (name, attribute type, window, cells, filtered
    /// tile). `xx` marks window offsets TileDB left uninitialized (they varied between runs).
    #[rustfmt::skip]
    const TILEDB_TILES: &[(&str, Datatype, u32, &str, &str)] = &[
            // bwr_i32_spec: int32 [1000, 1001, 1005, 1010, 70000, 70001]
            (
                "bwr_i32_spec",
                Datatype::Int32,
                16,
                "e8030000e9030000ed030000f20300007011010071110100",
                "0100000000000000 18000000 06000000 1a000000 |\
                1800000002000000e80300000810000000701101000808000000 | 0001050a0001",
            ),
            // bwr_i32_default: int32 [100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199]
            (
                "bwr_i32_default",
                Datatype::Int32,
                256,
                "6400000065000000660000006700000068000000690000006a0000006b0000006c0000006d000000\
                6e0000006f0000007000000071000000720000007300000074000000750000007600000077000000 \
                78000000790000007a0000007b0000007c0000007d0000007e0000007f0000008000000081000000 \
                82000000830000008400000085000000860000008700000088000000890000008a0000008b000000 \
                8c0000008d0000008e0000008f000000900000009100000092000000930000009400000095000000 \
                960000009700000098000000990000009a0000009b0000009c0000009d0000009e0000009f000000 \
                a0000000a1000000a2000000a3000000a4000000a5000000a6000000a7000000a8000000a9000000 \
                aa000000ab000000ac000000ad000000ae000000af000000b0000000b1000000b2000000b3000000 \
                b4000000b5000000b6000000b7000000b8000000b9000000ba000000bb000000bc000000bd000000 \
                be000000bf000000c0000000c1000000c2000000c3000000c4000000c5000000c6000000c7000000",
                "0100000000000000 90010000 64000000 1a000000 |\
                9001000002000000640000000800010000a40000000890000000 | \
                000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021222324252627 \
                28292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f000102030405060708090a0b0c0d0e0f \
                101112131415161718191a1b1c1d1e1f20212223",
            ),
            // bwr_u16_w4: uint16 [5, 7, 7, 9, 20, 300, 301]
            (
                "bwr_u16_w4",
                Datatype::Uint16,
                4,
                "050007000700090014002c012d01",
                "0100000000000000 0e000000 09000000 24000000 |\
                0e000000040000000500080400000007000804000000140010040000002d010802000000 | \
                0002000214002c0100",
            ),
            // bwr_i16_w2: int16 [-5, 7, -32768, 32767, 0]
            (
                "bwr_i16_w2",
                Datatype::Int16,
                2,
                "fbff07000080ff7f0000",
                "0100000000000000 0a000000 05000000 2b000000 |\
                0a00000005000000fbff08020000000700080200000000800802000000ff7f080200000000000802 \
                000000 | 0000000000",
            ),
            // bwr_i16_w3: int16 [-5, 7, -32768, 32767, 0]
            (
                "bwr_i16_w3",
                Datatype::Int16,
                3,
                "fbff07000080ff7f0000",
                "0100000000000000 0a000000 05000000 2b000000 |\
                0a00000005000000fbff08020000000700080200000000800802000000ff7f080200000000000802 \
                000000 | 0000000000",
            ),
            // bwr_i64_mixed: int64 [-9223372036854775808, 9223372036854775807, 1, 2, 1000, 100000, 0, 1099511627776, -5, 5, 3, 3]
            (
                "bwr_i64_mixed",
                Datatype::Int64,
                16,
                "0000000000000080ffffffffffffff7f01000000000000000200000000000000e803000000000000\
                a08601000000000000000000000000000000000000010000fbffffffffffffff0500000000000000 \
                03000000000000000300000000000000",
                "0100000000000000 60000000 2e000000 56000000 |\
                6000000006000000xxxxxxxxxxxxxxxx401000000001000000000000000810000000e80300000000 \
                0000201000000000000000000000004010000000fbffffffffffffff081000000003000000000000 \
                000810000000 | \
                0000000000000080ffffffffffffff7f000100000000b88201000000000000000000000000000001 \
                0000000a0000",
            ),
            // bwr_u64: uint64 [18446744073709551615, 18446744073709551415, 0, 1, 8589934592, 8590004592, 9, 9]
            (
                "bwr_u64",
                Datatype::Uint64,
                16,
                "ffffffffffffffff37ffffffffffffff000000000000000001000000000000000000000002000000\
                701101000200000009000000000000000900000000000000",
                "0100000000000000 40000000 0e000000 3c000000 |\
                400000000400000037ffffffffffffff081000000000000000000000000810000000000000000200 \
                0000201000000009000000000000000810000000 | c800000100000000701101000000",
            ),
            // bwr_u32: uint32 [0, 255, 0, 254, 100, 65536, 7, 4294967295, 0]
            (
                "bwr_u32",
                Datatype::Uint32,
                8,
                "00000000ff00000000000000fe000000640000000000010007000000ffffffff00000000",
                "0100000000000000 24000000 13000000 35000000 |\
                24000000050000000000000010080000000000000008080000006400000010080000000700000020 \
                08000000000000000804000000 | 0000ff0000fe00009cff07000000ffffffff00",
            ),
            // bwr_i32_notexact: int32 [-1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
            (
                "bwr_i32_notexact",
                Datatype::Int32,
                12,
                "ffffffff010000000200000003000000040000000500000006000000070000000800000009000000\
                0a000000",
                "0100000000000000 2c000000 0b000000 2c000000 |\
                2c00000004000000ffffffff080c00000003000000080c00000006000000080c0000000900000008 \
                08000000 | 0002030001020001020001",
            ),
            // bwr_i32_w_odd: int32 [100, 90, 80, 70, 60]
            (
                "bwr_i32_w_odd",
                Datatype::Int32,
                7,
                "640000005a00000050000000460000003c000000",
                "0100000000000000 14000000 05000000 35000000 |\
                14000000050000006400000008040000005a00000008040000005000000008040000004600000008 \
                040000003c0000000804000000 | 0000000000",
            ),
            // bwr_dt_ns: datetime64[ns] [1600000000000000000, 1600000000000000037, 1600000000000000074, 1600000000000000111, 1600000000000000148, 1600000000000000185, 1600000000000000222, 1600000000000000259, 1600000000000000296, 1600000000000000333]
            (
                "bwr_dt_ns",
                Datatype::DatetimeNs,
                32,
                "0000a0d8855734162500a0d8855734164a00a0d8855734166f00a0d8855734169400a0d885573416\
                b900a0d885573416de00a0d8855734160301a0d8855734162801a0d8855734164d01a0d885573416",
                "0100000000000000 50000000 0a000000 2f000000 |\
                50000000030000000000a0d88557341608200000009400a0d88557341608200000002801a0d88557 \
                34160810000000 | 00254a6f00254a6f0025",
            ),
            // bwr_u8_passthrough: uint8 [1, 2, 3]
            (
                "bwr_u8_passthrough",
                Datatype::Uint8,
                16,
                "010203",
                "0100000000000000 03000000 03000000 00000000 |  | 010203",
            ),
    ];

    #[test]
    fn real_tiledb_tiles() {
        for &(name, t, w, cells, tiledb) in TILEDB_TILES {
            let mut p = Pipeline::new();
            p.push(Filter::BitWidthReduction { max_window: w }).unwrap();
            let data = hex(cells);
            let tile = Tile::new(t, t.size() as u64, data.clone()).unwrap();
            let ours = p.filter_tile(&tile).unwrap();
            let want = hex_masked(tiledb);
            assert_eq!(ours.len(), want.len(), "{name}");
            for (i, (&o, w)) in ours.iter().zip(&want).enumerate() {
                assert_eq!(o, w.unwrap_or(0), "{name}: byte {i}");
            }
            // TileDB's own bytes (uninitialized ones set to 0x5A) read back.
            let theirs: Vec<u8> = want.iter().map(|b| b.unwrap_or(0x5A)).collect();
            let back = p.unfilter_tile(&theirs, t, t.size() as u64).unwrap();
            assert_eq!(back.data(), &data[..], "{name}");
        }
    }

    fn spec_pipeline(spec: &str) -> Pipeline {
        crate::pipeline::spec::parse(spec).unwrap()
    }

    /// Compares `ours` with TileDB's bytes, where `xx` (uninitialized in TileDB) must be 0.
    fn assert_tiledb_bytes(ours: &[u8], tiledb: &str, what: &str) {
        let want = hex_masked(tiledb);
        assert_eq!(ours.len(), want.len(), "{what}");
        for (i, (&o, w)) in ours.iter().zip(&want).enumerate() {
            assert_eq!(o, w.unwrap_or(0), "{what}: byte {i}");
        }
    }

    /// [DOUBLE_DELTA, BIT_WIDTH_REDUCTION] on INT64 [10, 13], written by TileDB 2.30: BWR
    /// gets DD's 25-byte part, so its last window is 1 byte with no whole value (bits 64,
    /// offset uninitialized in TileDB).
    #[test]
    fn real_tiledb_partial_window() {
        let p = spec_pipeline("double_delta,bit_width_reduction:window=256");
        let cells = le(&[10i64, 13], i64::to_le_bytes);
        let tile = Tile::new(Datatype::Int64, 8, cells.clone()).unwrap();
        let tiledb = "0100000000000000 10000000 07000000 32000000 | 19000000 02000000 \
                      0002000000000000 10 18000000 xxxxxxxxxxxxxxxx 40 01000000 | 00000000 \
                      01000000 10000000 19000000 | 0000 0008 000b 00";
        assert_tiledb_bytes(&p.filter_tile(&tile).unwrap(), tiledb, "dd,bwr");
        let theirs: Vec<u8> = hex_masked(tiledb)
            .iter()
            .map(|b| b.unwrap_or(0x5A))
            .collect();
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
        // Empty var tile: an empty part, no window.
        let empty = Tile::new_var(Datatype::Int64, vec![0, 0, 0], vec![]).unwrap();
        let p = spec_pipeline("bit_width_reduction:window=256");
        let (_, data) = p.filter_var(&zstd, &empty).unwrap();
        assert_eq!(
            data,
            hex("0100000000000000 00000000 00000000 08000000 | 00000000 00000000")
        );
        // LZ4 turns the empty chunk into 1 byte: one raw window shorter than a value.
        let p = spec_pipeline("lz4,bit_width_reduction:window=256");
        let (_, data) = p.filter_var(&zstd, &empty).unwrap();
        assert_eq!(
            data,
            hex(
                "0100000000000000 00000000 01000000 25000000 | 01000000 01000000 \
                 0000000000000000 40 01000000 | 00000000 01000000 00000000 01000000 | 00"
            )
        );
        // Max window smaller than a value: one value per window.
        for (spec, t, cells, tiledb_reads) in [
            (
                "bit_width_reduction:window=3",
                Datatype::Int32,
                le(&[5i32, 7, 100000], i32::to_le_bytes),
                "0100000000000000 0c000000 03000000 23000000 | 0c000000 03000000 05000000 08 \
                 04000000 07000000 08 04000000 a0860100 08 04000000 | 000000",
            ),
            (
                "bit_width_reduction:window=5",
                Datatype::Int64,
                le(&[5i64, 7], i64::to_le_bytes),
                "0100000000000000 10000000 02000000 22000000 | 10000000 02000000 \
                 0500000000000000 08 08000000 0700000000000000 08 08000000 | 0000",
            ),
            (
                "double_delta,bit_width_reduction:window=4",
                Datatype::Int64,
                le(&[10i64, 13], i64::to_le_bytes),
                "0100000000000000 10000000 04000000 4c000000 | 19000000 04000000 \
                 0002000000000000 08 08000000 000a000000000000 08 08000000 000d000000000000 08 \
                 08000000 0000000000000000 40 01000000 | 00000000 01000000 10000000 19000000 \
                 | 00 00 00 00",
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
