//! RLE (4): run-length encoding, in two forms.
//!
//! * **Fixed-size path** (docs/FORMAT.md §5.7), used per part by the compression framework: runs of
//!   byte-equal values of `v` = the tile's cell size, each `value[v] ‖ u16be run` (1–65535).
//! * **Var-size string path** (docs/FORMAT.md §5.8, "RLE variant"), used by
//!   [`super::var_string`]: runs of equal strings, each `run (rl bytes, big-endian) ‖
//!   length (sl bytes, big-endian) ‖ bytes`, with metadata fields `u8 rl, u8 sl`.
//!
//! Policies where TileDB 2.30 writes unreadable tiles:
//! * a non-empty part shorter than one cell (TileDB silently encodes it to nothing) and a part
//!   that is not a whole number of cells are rejected with [`Error::InvalidArgument`];
//! * the string-length width `sl` covers **every** run, including the last one, which TileDB
//!   leaves out of its maximum (the `max_len` defect). Whenever TileDB's own output is readable
//!   the two computations agree, so the bytes are TileDB's.

use super::compression;
use super::var_string::{self, VarStringCodec};
use super::var_string::{Cells, bytesize, put_be, read_width, take_be};
use crate::error::{Error, Result};
use crate::filters::registry::FilterDescriptor;
use crate::format::byte_reader::ByteReader;
use crate::format::filter_type::{Compressor, FilterType};
use crate::mem::OutBuf;

/// The longest run one fixed-size RLE entry can hold.
const MAX_FIXED_RUN: usize = u16::MAX as usize;

fn check_cell_size(cell_size: u64) -> Result<usize> {
    match usize::try_from(cell_size) {
        Ok(v) if v > 0 => Ok(v),
        _ => Err(Error::invalid(format!(
            "RLE needs a positive cell size that fits in memory, got {cell_size}"
        ))),
    }
}

/// Appends the fixed-size RLE encoding of one part to `out`, with `cell_size`-byte values.
///
/// An empty part encodes to nothing. A non-empty part shorter than one cell, or not a whole
/// number of cells, is an [`Error::InvalidArgument`] (TileDB would drop or reject it).
pub fn compress(cell_size: u64, src: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let v = check_cell_size(cell_size)?;
    if src.is_empty() {
        return Ok(());
    }
    if src.len() < v {
        return Err(Error::invalid(format!(
            "part of {} bytes is shorter than one {v}-byte cell; TileDB would drop it",
            src.len()
        )));
    }
    if !src.len().is_multiple_of(v) {
        return Err(Error::invalid(format!(
            "part of {} bytes is not a whole number of {v}-byte cells",
            src.len()
        )));
    }
    out.reserve(src.len() / v * (v + 2));
    let mut values = src.chunks_exact(v);
    let mut current = values.next().expect("at least one cell");
    let mut run = 1usize;
    for value in values {
        if value == current && run < MAX_FIXED_RUN {
            run += 1;
        } else {
            out.extend_from_slice(current);
            out.extend_from_slice(&(run as u16).to_be_bytes());
            current = value;
            run = 1;
        }
    }
    out.extend_from_slice(current);
    out.extend_from_slice(&(run as u16).to_be_bytes());
    Ok(())
}

/// Decodes one fixed-size RLE part into exactly `dst.len()` bytes.
///
/// Follows TileDB's reader: input shorter than one run decodes to nothing, and runs of length
/// 0 are skipped. The input length must be a whole number of runs, and the decoded size must be
/// exactly `dst.len()`; anything else is [`Error::CorruptData`].
pub fn decompress(cell_size: u64, src: &[u8], dst: &mut [u8]) -> Result<()> {
    OutBuf::over(dst, |o| decompress_into(cell_size, src, o))
}

/// [`decompress`] into exactly the unwritten rest of `dst` (which may not be initialised).
pub fn decompress_into(cell_size: u64, src: &[u8], dst: &mut OutBuf<'_>) -> Result<()> {
    let v = check_cell_size(cell_size)?;
    let run_size = v.saturating_add(2);
    let expected = dst.remaining();
    if src.len() < run_size {
        if expected == 0 {
            return Ok(());
        }
        return Err(Error::corrupt(format!(
            "{} bytes of RLE runs decode to nothing, expected {expected} bytes",
            src.len()
        )));
    }
    if !src.len().is_multiple_of(run_size) {
        return Err(Error::corrupt(format!(
            "{} bytes are not a whole number of {run_size}-byte RLE runs",
            src.len()
        )));
    }
    // Check the total first, so that nothing is written for corrupt input.
    let total: u64 = src
        .chunks_exact(run_size)
        .map(|r| u16::from_be_bytes([r[v], r[v + 1]]) as u64 * v as u64)
        .sum();
    if total != expected as u64 {
        return Err(Error::corrupt(format!(
            "RLE runs decode to {total} bytes, expected {expected}"
        )));
    }
    match v {
        1 => expand::<1>(src, dst),
        2 => expand::<2>(src, dst),
        4 => expand::<4>(src, dst),
        8 => expand::<8>(src, dst),
        _ => expand_any(v, src, dst),
    }
    Ok(())
}

/// Appends the runs of `N`-byte values (already checked to fill `dst` exactly).
fn expand<const N: usize>(src: &[u8], dst: &mut OutBuf<'_>) {
    for r in src.chunks_exact(N + 2) {
        let value: [u8; N] = r[..N].try_into().expect("N bytes");
        let n = u16::from_be_bytes([r[N], r[N + 1]]) as usize;
        if n == 1 {
            dst.put_array(value);
        } else if N == 1 {
            dst.fill(value[0], n);
        } else {
            dst.put_arrays(std::iter::repeat_n(value, n));
        }
    }
}

/// [`expand`] for any value size.
fn expand_any(v: usize, src: &[u8], dst: &mut OutBuf<'_>) {
    for r in src.chunks_exact(v + 2) {
        let value = &r[..v];
        let n = u16::from_be_bytes([r[v], r[v + 1]]) as usize;
        for _ in 0..n {
            dst.put(value);
        }
    }
}

/// Encodes the strings of a var-size tile with string RLE (docs/FORMAT.md §5.8): appends
/// `u8 rl, u8 sl` to `codec_md` and the runs to `out`.
///
/// Consecutive byte-equal strings form a run; `rl` fits the longest run and `sl` the longest
/// run string (all runs, the last one included).
pub fn encode_strings(cells: &Cells<'_>, codec_md: &mut Vec<u8>, out: &mut Vec<u8>) -> Result<()> {
    // Runs as (string, repetitions).
    let mut runs: Vec<(&[u8], u64)> = Vec::new();
    for s in cells.iter() {
        match runs.last_mut() {
            Some((prev, n)) if *prev == s => *n += 1,
            _ => runs.push((s, 1)),
        }
    }
    let max_run = runs.iter().map(|r| r.1).max().unwrap_or(1);
    let max_len = runs.iter().map(|r| r.0.len() as u64).max().unwrap_or(0);
    let (rl, sl) = (bytesize(max_run), bytesize(max_len));
    let string_bytes: usize = runs.iter().map(|r| r.0.len()).sum();
    out.reserve(runs.len() * (rl as usize + sl as usize) + string_bytes);
    for (s, n) in runs {
        put_be(out, n, rl);
        put_be(out, s.len() as u64, sl);
        out.extend_from_slice(s);
    }
    codec_md.push(rl);
    codec_md.push(sl);
    Ok(())
}

/// Walks string-RLE runs in `src`, calling `f(string, repetitions)` for each. Every length is
/// checked against the bytes present.
fn for_each_run<'a>(
    src: &'a [u8],
    rl: usize,
    sl: usize,
    mut f: impl FnMut(&'a [u8], u64) -> Result<()>,
) -> Result<()> {
    let mut r = ByteReader::new(src, "RLE string runs");
    while r.remaining() > 0 {
        let run = take_be(&mut r, rl)?;
        let len = take_be(&mut r, sl)?;
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= r.remaining())
            .ok_or_else(|| {
                Error::corrupt(format!(
                    "string of {len} bytes at offset {} runs past the {} encoded bytes",
                    r.position(),
                    src.len()
                ))
            })?;
        f(r.take(len)?, run)?;
    }
    Ok(())
}

/// Decodes string-RLE runs (docs/FORMAT.md §5.8): reads `u8 rl, u8 sl` from `codec_md`, expands the
/// runs of `src` into `dst`, which they must fill exactly, and appends each cell's start offset
/// in `dst` to `offsets`. The runs must hold exactly `n_cells` cells.
///
/// Like TileDB's reader, widths 3–4 are read as 4 bytes and 5–255 as 8, and runs of length 0
/// are skipped. The input is validated completely before anything is written.
pub fn decode_strings(
    codec_md: &mut ByteReader<'_>,
    src: &[u8],
    n_cells: usize,
    dst: &mut OutBuf<'_>,
    offsets: &mut Vec<u64>,
) -> Result<()> {
    let expected = dst.remaining();
    let rl_byte = codec_md.u8()?;
    let sl_byte = codec_md.u8()?;
    let (Some(rl), Some(sl)) = (read_width(rl_byte), read_width(sl_byte)) else {
        return Err(Error::corrupt(format!(
            "RLE run-length width {rl_byte} or string-length width {sl_byte} is zero"
        )));
    };
    if src.is_empty() {
        return Err(Error::corrupt("RLE string runs are empty"));
    }
    // Pass 1: the runs must give exactly n_cells cells and the `expected` bytes of `dst`.
    let (mut cells, mut bytes) = (0u64, 0u64);
    for_each_run(src, rl, sl, |s, run| {
        cells = cells
            .checked_add(run)
            .filter(|&c| c <= n_cells as u64)
            .ok_or_else(|| {
                Error::corrupt(format!(
                    "RLE runs hold more than the {n_cells} cells declared"
                ))
            })?;
        bytes = (s.len() as u64)
            .checked_mul(run)
            .and_then(|b| b.checked_add(bytes))
            .filter(|&b| b <= expected as u64)
            .ok_or_else(|| {
                Error::corrupt(format!(
                    "RLE runs decode to more than the {expected} bytes expected"
                ))
            })?;
        Ok(())
    })?;
    if cells != n_cells as u64 || bytes != expected as u64 {
        return Err(Error::corrupt(format!(
            "RLE runs hold {cells} cells of {bytes} bytes, expected {n_cells} cells of {expected} bytes"
        )));
    }
    // Pass 2: write.
    offsets.reserve(n_cells);
    let mut pos = 0usize;
    for_each_run(src, rl, sl, |s, run| {
        for _ in 0..run {
            offsets.push(pos as u64);
            dst.put(s);
            pos += s.len();
        }
        Ok(())
    })
}

/// RLE's descriptor: the fixed-size path through the compression framework, the var-size
/// string path (offsets folded into the data, docs/FORMAT.md §5.8) for STRING_ASCII/UTF8 tiles.
pub const DESCRIPTOR: FilterDescriptor = FilterDescriptor {
    forward: |f, ctx, input, out| {
        if var_string::applies_forward(ctx) {
            var_string::forward(VarStringCodec::Rle, ctx, input, out)
        } else {
            compression::forward_filter(f, ctx, input, out)
        }
    },
    reverse: |f, ctx, input, out| {
        if var_string::applies_reverse(&out) {
            var_string::reverse(VarStringCodec::Rle, ctx, input, out)
        } else {
            compression::reverse_filter(f, ctx, input, out)
        }
    },
    // Fixed RLE with 1-byte cells: every byte a run of its own plus a u16 length.
    fixed_growth: |n| n.saturating_mul(3),
    unbounded_on_strings: true,
    // Each run is a value of v bytes and a u16 count: at most 65535·v out of v + 2 in.
    reverse_max_ratio: 65536,
    ..compression::codec_descriptor(FilterType::Rle, Compressor::Rle, None, 65536)
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::parts::Parts;
    use crate::filters::config::Filter;
    use crate::filters::testing::unhex as hex;
    use crate::filters::testing::{forward_one, reverse_one};
    use crate::format::datatype::Datatype;
    use crate::format::filter_type::FilterType;

    fn to_hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// Splits a single-chunk filtered tile (docs/FORMAT.md §4.1) into (original_length, md, data).
    fn split_tile(tile: &[u8]) -> (usize, Vec<u8>, Vec<u8>) {
        assert_eq!(&tile[..8], &1u64.to_le_bytes());
        let u = |i: usize| u32::from_le_bytes(tile[i..i + 4].try_into().unwrap()) as usize;
        let (orig, filtered, md_len) = (u(8), u(12), u(16));
        let md = tile[20..20 + md_len].to_vec();
        let data = tile[20 + md_len..20 + md_len + filtered].to_vec();
        assert_eq!(20 + md_len + filtered, tile.len());
        (orig, md, data)
    }

    fn rle() -> Filter {
        Filter::new(FilterType::Rle)
    }

    fn roundtrip_fixed(cell_size: u64, data: &[u8]) -> Vec<u8> {
        let mut enc = Vec::new();
        compress(cell_size, data, &mut enc).unwrap();
        let mut dec = vec![0u8; data.len()];
        decompress(cell_size, &enc, &mut dec).unwrap();
        assert_eq!(dec, data);
        enc
    }

    /// Cells, offsets and bytes of a string list.
    fn tile(strings: &[&[u8]]) -> (Vec<u8>, Vec<u64>) {
        let mut data = Vec::new();
        let mut offsets = Vec::new();
        for s in strings {
            offsets.push(data.len() as u64);
            data.extend_from_slice(s);
        }
        (data, offsets)
    }

    /// Forward + reverse through the filter dispatch; returns (md, data).
    fn roundtrip_strings(strings: &[&[u8]]) -> (Vec<u8>, Vec<u8>) {
        let (data, offsets) = tile(strings);
        let f = forward_one(&rle(), Datatype::StringAscii, 1, Some(&offsets), &data).unwrap();
        assert_eq!(f.md_lens.len(), 1);
        assert_eq!(f.data_lens, vec![f.data.len()]);
        let r = reverse_one(
            &rle(),
            Datatype::StringAscii,
            1,
            &f.md,
            &f.data,
            data.len(),
            true,
        )
        .unwrap();
        assert_eq!(r.data, data);
        assert_eq!(r.offsets, offsets);
        (f.md, f.data)
    }

    #[test]
    fn fixed_vector_int16_matches_tiledb() {
        // docs/FORMAT.md §9.2 and a real TileDB 2.30 a0.tdb: INT16 [7,7,7,9,9,7].
        let cells: Vec<u8> = [7i16, 7, 7, 9, 9, 7]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let f = forward_one(&rle(), Datatype::Int16, 2, None, &cells).unwrap();
        let tile = hex("0100000000000000 0c000000 0c000000 10000000 \
                        00000000 01000000 0c000000 0c000000 0700 0003 0900 0002 0700 0001");
        let (orig, md, data) = split_tile(&tile);
        assert_eq!(f.md, md);
        assert_eq!(f.data, data);
        let r = reverse_one(&rle(), Datatype::Int16, 2, &md, &data, orig, false).unwrap();
        assert_eq!(r.data, cells);
    }

    #[test]
    fn fixed_vectors_from_tiledb() {
        // a0.tdb of INT64 [1,1,2,3,3,3,3,1] with [RLE], written by TileDB 2.30.0.
        let tile = hex(
            "01000000000000004000000028000000100000000000000001000000400000002800000001000000\
             000000000002020000000000000000010300000000000000000401000000000000000001",
        );
        let cells: Vec<u8> = [1i64, 1, 2, 3, 3, 3, 3, 1]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let (orig, md, data) = split_tile(&tile);
        let f = forward_one(&rle(), Datatype::Int64, 8, None, &cells).unwrap();
        assert_eq!((f.md.clone(), f.data.clone()), (md.clone(), data.clone()));
        let r = reverse_one(&rle(), Datatype::Int64, 8, &md, &data, orig, false).unwrap();
        assert_eq!(r.data, cells);

        // a0.tdb of UINT8 [5; 70000] with [RLE]: chunks 65536 + 4464, the first one a single
        // run of 65535 then a run of 1.
        let file = hex(
            "0200000000000000 00000100 06000000 10000000 00000000 01000000 00000100 06000000 \
             05ffff 050001 \
             70110000 03000000 10000000 00000000 01000000 70110000 03000000 051170",
        );
        let chunk1 = &file[8..8 + 12 + 16 + 6];
        let chunk2 = &file[8 + 12 + 16 + 6..];
        for (chunk, len) in [(chunk1, 65536usize), (chunk2, 4464)] {
            let mut t = 1u64.to_le_bytes().to_vec();
            t.extend_from_slice(chunk);
            let (orig, md, data) = split_tile(&t);
            assert_eq!(orig, len);
            let f = forward_one(&rle(), Datatype::Uint8, 1, None, &vec![5u8; len]).unwrap();
            assert_eq!((f.md, f.data.clone()), (md.clone(), data.clone()));
            let r = reverse_one(&rle(), Datatype::Uint8, 1, &md, &data, orig, false).unwrap();
            assert_eq!(r.data, vec![5u8; len]);
        }
    }

    #[test]
    fn fixed_round_trips_for_many_cell_sizes() {
        for v in [1u64, 2, 3, 8, 12] {
            let vs = v as usize;
            assert!(roundtrip_fixed(v, &[]).is_empty());
            let one: Vec<u8> = (0..vs as u8).collect();
            assert_eq!(roundtrip_fixed(v, &one).len(), vs + 2);
            // Patterned data with runs of various lengths.
            let mut data = Vec::new();
            for (i, run) in [1usize, 5, 1, 1, 300, 2].iter().enumerate() {
                for _ in 0..*run {
                    data.extend((0..vs).map(|j| (i * 31 + j) as u8));
                }
            }
            let enc = roundtrip_fixed(v, &data);
            assert_eq!(enc.len(), 6 * (vs + 2));
            assert_eq!(&enc[2 * (vs + 2) - 2..2 * (vs + 2)], &[0, 5]);
            // Equal neighbouring cells that differ only in their last byte are separate runs.
            let mut d2 = vec![0u8; 2 * vs];
            d2[2 * vs - 1] = 1;
            assert_eq!(roundtrip_fixed(v, &d2).len(), 2 * (vs + 2));
        }
    }

    #[test]
    fn fixed_runs_are_capped_at_65535() {
        let data = vec![9u8; 65535 * 2 + 10];
        let enc = roundtrip_fixed(1, &data);
        assert_eq!(enc, [9, 0xff, 0xff, 9, 0xff, 0xff, 9, 0, 10]);
        let data: Vec<u8> = std::iter::repeat_n([1u8, 2, 3], 70000).flatten().collect();
        let enc = roundtrip_fixed(3, &data);
        assert_eq!(enc, [1, 2, 3, 0xff, 0xff, 1, 2, 3, 0x11, 0x71]);
    }

    #[test]
    fn fixed_rejects_parts_tiledb_would_mangle() {
        let mut out = vec![0xaa];
        let e = compress(12, &[0; 8], &mut out).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)));
        assert_eq!(
            e.message(),
            "part of 8 bytes is shorter than one 12-byte cell; TileDB would drop it"
        );
        let e = compress(4, &[0; 10], &mut out).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
        assert!(matches!(
            compress(0, &[1], &mut out),
            Err(Error::InvalidArgument(_))
        ));
        assert_eq!(out, [0xaa], "nothing appended on error");
        // compress appends.
        compress(1, &[4, 4], &mut out).unwrap();
        assert_eq!(out, [0xaa, 4, 0, 2]);
    }

    #[test]
    fn fixed_short_metadata_part_is_rejected_through_the_framework() {
        // TileDB's defect (§5.7): an 8-byte metadata part with 12-byte cells would vanish.
        let md = [1u8; 8];
        let md_lens = [8usize];
        let data = [0u8; 24];
        let lens = [24usize];
        let e = crate::filters::testing::forward_parts(
            &rle(),
            Datatype::Int32,
            12,
            None,
            Parts::new(&md, &md_lens),
            Parts::new(&data, &lens),
        )
        .err()
        .unwrap();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
        assert!(e.message().contains("TileDB would drop it"), "{e:?}");
        // An empty chunk (one empty data part) is fine: 0 bytes in, 0 bytes out.
        let f = forward_one(&rle(), Datatype::Int32, 12, None, &[]).unwrap();
        assert_eq!(to_hex(&f.md), "00000000010000000000000000000000");
        assert!(f.data.is_empty());
        let r = reverse_one(&rle(), Datatype::Int32, 12, &f.md, &f.data, 0, false).unwrap();
        assert!(r.data.is_empty());
    }

    #[test]
    fn fixed_decompress_follows_tiledb_reader() {
        // Shorter than one run: nothing, acceptable only for an empty output.
        decompress(4, &[1, 2, 3], &mut []).unwrap();
        assert!(decompress(4, &[1, 2, 3], &mut [0; 4]).is_err());
        // Not a whole number of runs.
        assert!(matches!(
            decompress(1, &[1, 0, 1, 2], &mut [0; 1]),
            Err(Error::CorruptData(_))
        ));
        // A run of length 0 is skipped.
        let mut out = [0u8; 2];
        decompress(1, &[7, 0, 0, 8, 0, 2], &mut out).unwrap();
        assert_eq!(out, [8, 8]);
        // Too few or too many bytes for the window; nothing written.
        let mut out = [0xeeu8; 3];
        assert!(matches!(
            decompress(1, &[7, 0, 2], &mut out),
            Err(Error::CorruptData(_))
        ));
        assert!(matches!(
            decompress(1, &[7, 0xff, 0xff], &mut out),
            Err(Error::CorruptData(_))
        ));
        assert_eq!(out, [0xee; 3]);
        // Huge cell sizes do not overflow.
        assert!(decompress(u64::MAX, &[1, 2], &mut []).is_ok());
        assert!(decompress(u64::MAX, &[1, 2], &mut [0]).is_err());
    }

    #[test]
    fn fixed_decompress_never_panics_on_mutations() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for v in [1u64, 2, 3, 8, 12] {
            let data: Vec<u8> = (0..v as usize * 50).map(|i| (i / 7) as u8).collect();
            let mut enc = Vec::new();
            compress(v, &data, &mut enc).unwrap();
            for _ in 0..500 {
                let mut m = enc.clone();
                match next() % 3 {
                    0 => {
                        let i = next() as usize % m.len();
                        m[i] = next() as u8;
                    }
                    1 => m.truncate(next() as usize % m.len()),
                    _ => m.push(next() as u8),
                }
                let len = [data.len(), next() as usize % (data.len() * 2 + 1)][next() as usize % 2];
                let mut out = vec![0u8; len];
                let _ = decompress(v, &m, &mut out);
            }
        }
    }

    #[test]
    fn var_string_vector_from_format_md() {
        // docs/FORMAT.md §9.2 (also written by TileDB 2.30.0, a0_var.tdb; a0.tdb = 8 zero bytes).
        let tile = hex("0100000000000000 0e000000 0c000000 16000000 \
                        00000000 01000000 0e000000 0c000000 30000000 01 01 \
                        02 02 6161 01 01 62 03 03 636363");
        let (orig, md, data) = split_tile(&tile);
        let (emd, edata) = roundtrip_strings(&[b"aa", b"aa", b"b", b"ccc", b"ccc", b"ccc"]);
        assert_eq!((emd, edata), (md.clone(), data.clone()));
        let r = reverse_one(&rle(), Datatype::StringAscii, 1, &md, &data, orig, true).unwrap();
        assert_eq!(r.data, b"aaaabccccccccc");
        assert_eq!(r.offsets, vec![0, 2, 4, 5, 8, 11]);
    }

    /// Var-size string tiles written by TileDB 2.30.0 (TileDB-Py 0.36.1), with the strings
    /// TileDB-Py read back: (attribute type, strings, a0_var.tdb hex).
    const TILEDB_VAR_VECTORS: &[(Datatype, &[&str], &str)] = &[
        (
            Datatype::StringUtf8,
            &["héllo", "héllo", "", "wörld", "日本", "日本", "日本", ""],
            "0100000000000000240000001c000000160000000000000001000000240000001c00000040000000\
             0101020668c3a96c6c6f0100010677c3b6726c640306e697a5e69cac0100",
        ),
        (
            Datatype::StringAscii,
            &["", "", ""],
            "0100000000000000000000000200000016000000000000000100000000000000020000001800000001010300",
        ),
        (
            // Sparse array, capacity 5.
            Datatype::StringAscii,
            &["x", "yy", "yy", "", "x"],
            "0100000000000000060000000c000000160000000000000001000000060000000c00000028000000\
             0101010178020279790100010178",
        ),
        (
            // 300 × "a" then "bb": rl = 2.
            Datatype::StringAscii,
            &[],
            "01000000000000002e010000090000001600000000000000010000002e01000009000000680900000201\
             012c01610001026262",
        ),
    ];

    #[test]
    fn var_string_vectors_from_tiledb() {
        for (i, (dt, strings, h)) in TILEDB_VAR_VECTORS.iter().enumerate() {
            let owned: Vec<Vec<u8>> = if i == 3 {
                let mut v = vec![b"a".to_vec(); 300];
                v.push(b"bb".to_vec());
                v
            } else {
                strings.iter().map(|s| s.as_bytes().to_vec()).collect()
            };
            let refs: Vec<&[u8]> = owned.iter().map(|s| &s[..]).collect();
            let (data, offsets) = tile(&refs);
            let (orig, md, enc) = split_tile(&hex(h));
            assert_eq!(orig, data.len());
            let f = forward_one(&rle(), *dt, 1, Some(&offsets), &data).unwrap();
            assert_eq!(to_hex(&f.md), to_hex(&md), "vector {i}");
            assert_eq!(to_hex(&f.data), to_hex(&enc), "vector {i}");
            let r = reverse_one(&rle(), *dt, 1, &md, &enc, orig, true).unwrap();
            assert_eq!(r.data, data);
            assert_eq!(r.offsets, offsets);
        }
    }

    #[test]
    fn var_string_long_strings_from_tiledb() {
        // ["z"×300, "z"×300, "q"] with [RLE], TileDB 2.30.0: the first run's string needs sl 2.
        let z = [b'z'; 300];
        let mut data = hex(
            "010000000000000059020000330100001600000000000000010000005902000033010000\
                            18000000 0102 02 012c",
        );
        data.extend_from_slice(&z);
        data.extend_from_slice(&hex("01 0001 71"));
        let (_, md, enc) = split_tile(&data);
        let (emd, edata) = roundtrip_strings(&[&z, &z, b"q"]);
        assert_eq!((emd, edata), (md, enc));
    }

    #[test]
    fn var_string_rle_zstd_vector_from_tiledb() {
        // [RLE, ZSTD] on ["aa","aa","b","ccc","ccc","ccc"], TileDB 2.30.0: ZSTD sees the 22-byte
        // RLE metadata part and the 12-byte data part.
        let tile = hex(
            "01000000000000000e00000034000000180000000100000001000000160000001f0000000c000000\
             1500000028b52ffd2016b1000000000000010000000e0000000c00000030000000010128b52ffd200c\
             610000020261610101620303636363",
        );
        let (orig, zmd, zdata) = split_tile(&tile);
        let zstd = Filter::new(FilterType::Zstd);
        let (md, data) = roundtrip_strings(&[b"aa", b"aa", b"b", b"ccc", b"ccc", b"ccc"]);
        let md_lens = [md.len()];
        let lens = [data.len()];
        let f = crate::filters::testing::forward_parts(
            &zstd,
            Datatype::StringAscii,
            1,
            None,
            Parts::new(&md, &md_lens),
            Parts::new(&data, &lens),
        )
        .unwrap();
        assert_eq!(
            (to_hex(&f.md), to_hex(&f.data)),
            (to_hex(&zmd), to_hex(&zdata))
        );
        // Reverse ZSTD (into scratch) then RLE.
        let mut codecs = crate::engine::thread_scratch::CodecContexts::default();
        let mut ctx = crate::engine::stage::StageCtx::new(Datatype::StringAscii, 1, &mut codecs);
        let (mut out_md, mut buf) = (Vec::new(), crate::engine::parts::ScratchBuf::default());
        crate::filters::reverse(
            &zstd,
            &mut ctx,
            crate::engine::stage::RevIn {
                md: &zmd,
                data: &zdata,
            },
            crate::engine::stage::RevOut {
                md: &mut out_md,
                data: crate::engine::stage::DataSink::Scratch {
                    buf: &mut buf,
                    limit: 1000,
                },
                offsets: None,
            },
        )
        .unwrap();
        let r = reverse_one(
            &rle(),
            Datatype::StringAscii,
            1,
            &out_md,
            buf.as_slice(),
            orig,
            true,
        )
        .unwrap();
        assert_eq!(r.data, b"aaaabccccccccc");
    }

    #[test]
    fn var_string_empty_strings() {
        let (md, data) = roundtrip_strings(&[b"", b"", b""]);
        assert_eq!(
            to_hex(&md[8..]),
            "00000000020000001800000001 01".replace(' ', "")
        );
        assert_eq!(data, [3, 0]);
        let (_, data) = roundtrip_strings(&[b"", b"x", b"", b"", b"x"]);
        assert_eq!(data, [1, 0, 1, 1, b'x', 2, 0, 1, 1, b'x']);
        roundtrip_strings(&[b""]);
        roundtrip_strings(&[b"only"]);
    }

    #[test]
    fn var_string_run_widths() {
        for (n, rl) in [
            (255usize, 1u8),
            (256, 2),
            (65535, 2),
            (65536, 4),
            (70000, 4),
        ] {
            let mut strings: Vec<&[u8]> = vec![b"ab"; n];
            strings.push(b"c");
            let (md, data) = roundtrip_strings(&strings);
            assert_eq!(md[20], rl, "{n}");
            assert_eq!(md[21], 1);
            assert_eq!(data.len(), 2 * (rl as usize + 1) + 3);
            let mut expect = Vec::new();
            put_be(&mut expect, n as u64, rl);
            assert_eq!(&data[..rl as usize], &expect[..]);
        }
        // Many empty strings: one run.
        let strings: Vec<&[u8]> = vec![b""; 100_000];
        let (md, data) = roundtrip_strings(&strings);
        assert_eq!((md[20], md[21]), (4, 1));
        assert_eq!(data, [0, 1, 0x86, 0xa0, 0]);
    }

    #[test]
    fn var_string_length_widths() {
        let s300 = vec![b'x'; 300];
        let s70k = vec![b'y'; 70_000];
        let (md, data) = roundtrip_strings(&[&s300, b"a", b"a"]);
        assert_eq!((md[20], md[21]), (1, 2));
        assert_eq!(&data[..3], &[1, 1, 0x2c]);
        let (md, data) = roundtrip_strings(&[&s70k, b"a", &s300]);
        assert_eq!((md[20], md[21]), (1, 4));
        assert_eq!(&data[..5], &[1, 0, 1, 0x11, 0x70]);
    }

    #[test]
    fn var_string_max_len_includes_the_last_run() {
        // TileDB 2.30 writes sl = 1 here (the last run is left out of max_len) and truncates
        // 300 to 0x2c, an unreadable tile. We write sl = 2; TileDB 2.30 reads it (checked by
        // splicing these bytes into a fragment TileDB wrote, see the report).
        let b300 = vec![b'b'; 300];
        let (md, data) = roundtrip_strings(&[b"a", &b300]);
        assert_eq!(
            to_hex(&md),
            "00000000010000002d010000330100001000000001 02".replace(' ', "")
        );
        assert_eq!(&data[..7], &[1, 0, 1, b'a', 1, 1, 0x2c]);
        assert_eq!(data.len(), 307);
        // Several runs, the last one longest.
        let (md, _) = roundtrip_strings(&[b"a", b"a", b"bb", &b300, &b300]);
        assert_eq!(md[21], 2);
        // When TileDB's computation is readable it is the same: the longest run is not last.
        let (md, _) = roundtrip_strings(&[&b300, b"a"]);
        assert_eq!(md[21], 2);
        let (md, _) = roundtrip_strings(&[b"abc", b"a", b"ab"]);
        assert_eq!(md[21], 1);
    }

    #[test]
    fn var_string_decoder_accepts_what_tiledb_reads() {
        // Wider-than-needed fields (3 is read as 4 bytes, 9 as 8) and a zero-length run.
        let mut md = hex("00000000 01000000 03000000 00000000 10000000 03 09");
        let mut data = Vec::new();
        data.extend_from_slice(&[0, 0, 0, 0]);
        data.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1, b'z']);
        data.extend_from_slice(&[0, 0, 0, 2]);
        data.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1, b'x']);
        data.extend_from_slice(&[0, 0, 0, 0]);
        data.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1, b'y']);
        md[12..16].copy_from_slice(&(data.len() as u32).to_le_bytes());
        md[16..20].copy_from_slice(&16u32.to_le_bytes());
        md[8..12].copy_from_slice(&2u32.to_le_bytes());
        let r = reverse_one(&rle(), Datatype::StringAscii, 1, &md, &data, 2, true).unwrap();
        assert_eq!(r.data, b"xx");
        assert_eq!(r.offsets, vec![0, 1]);
    }

    #[test]
    fn var_string_decoder_rejects_inconsistent_runs() {
        let (md, data) = roundtrip_strings(&[b"aa", b"aa", b"b"]);
        let run = |md: &[u8], data: &[u8], len: usize| {
            reverse_one(&rle(), Datatype::StringAscii, 1, md, data, len, true)
        };
        assert!(run(&md, &data, 5).is_ok());
        // Zero widths.
        for i in [20, 21] {
            let mut m = md.clone();
            m[i] = 0;
            assert!(matches!(run(&m, &data, 5), Err(Error::CorruptData(_))));
        }
        // Run lengths giving more or fewer cells than declared.
        for (i, v) in [(0usize, 3u8), (0, 1), (0, 0xff)] {
            let mut d = data.clone();
            d[i] = v;
            assert!(
                matches!(run(&md, &d, 5), Err(Error::CorruptData(_))),
                "{i} {v}"
            );
        }
        // A string length past the end.
        let mut d = data.clone();
        d[1] = 0xfe;
        assert!(matches!(run(&md, &d, 5), Err(Error::CorruptData(_))));
        // Truncated metadata.
        assert!(matches!(
            run(&md[..21], &data, 5),
            Err(Error::CorruptData(_))
        ));
        // Huge run of empty strings against a small declared count: rejected before writing.
        let mut m = md.clone();
        m[8..12].copy_from_slice(&0u32.to_le_bytes());
        m[12..16].copy_from_slice(&9u32.to_le_bytes());
        m[16..20].copy_from_slice(&8u32.to_le_bytes());
        m[20] = 8;
        let d = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0];
        assert!(matches!(run(&m, &d, 0), Err(Error::CorruptData(_))));
    }

    #[test]
    fn var_string_decoder_never_panics_on_mutations() {
        let s300 = vec![b'q'; 300];
        let strings: Vec<&[u8]> = vec![b"aa", b"aa", b"", b"b", &s300, b"b", b"", b""];
        let (data, _) = tile(&strings);
        let (md, enc) = roundtrip_strings(&strings);
        let mut rng = 0x1234_5678_9abc_def1u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for _ in 0..5000 {
            let (mut m, mut d) = (md.clone(), enc.clone());
            for _ in 0..1 + next() % 3 {
                let target = if next() % 2 == 0 { &mut m } else { &mut d };
                match next() % 4 {
                    0 | 1 if !target.is_empty() => {
                        let i = next() as usize % target.len();
                        target[i] = next() as u8;
                    }
                    2 if !target.is_empty() => {
                        let n = next() as usize % target.len();
                        target.truncate(n);
                    }
                    _ => target.push(next() as u8),
                }
            }
            let len = [data.len(), next() as usize % 400][next() as usize % 2];
            if let Ok(r) = reverse_one(&rle(), Datatype::StringAscii, 1, &m, &d, len, true) {
                assert_eq!(r.data.len(), len);
                assert!(r.offsets.iter().all(|&o| o <= len as u64));
            }
        }
    }
}
