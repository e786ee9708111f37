//! DICTIONARY (14): dictionary encoding of var-size strings (docs/FORMAT.md §5.9, §5.8).
//!
//! The distinct strings, in order of first appearance, form the dictionary; the data is one
//! big-endian id of `id_size = bytesize(n)` bytes per string (`n` = number of strings, not of
//! distinct strings). Codec metadata (after the var-string header):
//! `u8 id_size, u8 sl, u32 dict_bytes, dict`, where each dictionary entry is
//! `length (sl bytes, big-endian) ‖ bytes` and `sl = bytesize(longest string)`.
//! The dictionary has no entry count; readers parse entries until `dict_bytes` is used up.
//!
//! The only working path is the var-string one ([`super::var_string`]); the dispatch rejects
//! every other use, as TileDB does.

use super::compression;
use super::var_string::{self, VarStringCodec};
use super::var_string::{Cells, bytesize, put_be, read_width, take_be};
use crate::error::{Error, Result};
use crate::filters::registry::FilterDescriptor;
use crate::format::byte_reader::ByteReader;
use crate::format::filter_type::{Compressor, FilterType};
use crate::mem::OutBuf;
use std::collections::HashMap;

/// Encodes the strings of a var-size tile: appends `u8 id_size, u8 sl, u32 dict_bytes, dict` to
/// `codec_md` and the ids to `out`.
pub fn encode_strings(cells: &Cells<'_>, codec_md: &mut Vec<u8>, out: &mut Vec<u8>) -> Result<()> {
    let id_size = bytesize(cells.len() as u64);
    let sl = bytesize(cells.max_len());
    let mut ids: HashMap<&[u8], u64> = HashMap::new();
    let mut dict = Vec::new();
    out.reserve(cells.len() * id_size as usize);
    for s in cells.iter() {
        let next = ids.len() as u64;
        let id = *ids.entry(s).or_insert_with(|| {
            put_be(&mut dict, s.len() as u64, sl);
            dict.extend_from_slice(s);
            next
        });
        put_be(out, id, id_size);
    }
    let dict_bytes = u32::try_from(dict.len())
        .map_err(|_| Error::invalid("the string dictionary exceeds 4 GiB"))?;
    codec_md.push(id_size);
    codec_md.push(sl);
    codec_md.extend_from_slice(&dict_bytes.to_le_bytes());
    codec_md.extend_from_slice(&dict);
    Ok(())
}

/// Decodes dictionary-encoded strings: reads `u8 id_size, u8 sl, u32 dict_bytes, dict` from
/// `codec_md`, writes the strings of the ids in `src` into `dst`, which they must fill exactly,
/// and appends each cell's start offset in `dst` to `offsets`. `src` must hold exactly `n_cells`
/// ids.
///
/// Like TileDB's reader, widths 3–4 are read as 4 bytes and 5–255 as 8, and a string-length
/// width of 0 is read as 1. An id outside the dictionary, a truncated entry or id, and an empty
/// dictionary are [`Error::CorruptData`]. The input is validated before anything is written.
pub fn decode_strings(
    codec_md: &mut ByteReader<'_>,
    src: &[u8],
    n_cells: usize,
    dst: &mut OutBuf<'_>,
    offsets: &mut Vec<u64>,
) -> Result<()> {
    let expected = dst.remaining();
    let id_byte = codec_md.u8()?;
    let sl_byte = codec_md.u8()?;
    let id_size =
        read_width(id_byte).ok_or_else(|| Error::corrupt("dictionary id width is zero"))?;
    let sl = read_width(sl_byte).unwrap_or(1);
    let dict_bytes = codec_md.u32()? as usize;
    if dict_bytes == 0 {
        return Err(Error::corrupt("the string dictionary is empty"));
    }
    let dict_src = codec_md.take(dict_bytes)?;
    // Entries as ranges of dict_src; each takes at least `sl` bytes, which bounds the count.
    let mut dict: Vec<(usize, usize)> = Vec::new();
    let mut r = ByteReader::new(dict_src, "string dictionary");
    while r.remaining() > 0 {
        let len = take_be(&mut r, sl)?;
        let start = r.position();
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= r.remaining())
            .ok_or_else(|| {
                Error::corrupt(format!(
                    "dictionary entry {} of {len} bytes runs past the {dict_bytes}-byte dictionary",
                    dict.len()
                ))
            })?;
        r.take(len)?;
        dict.push((start, len));
    }
    if src.is_empty() || !src.len().is_multiple_of(id_size) {
        return Err(Error::corrupt(format!(
            "{} bytes of ids are not a positive whole number of {id_size}-byte ids",
            src.len()
        )));
    }
    if src.len() / id_size != n_cells {
        return Err(Error::corrupt(format!(
            "{} ids, but {n_cells} cells declared",
            src.len() / id_size
        )));
    }
    let id_of = |chunk: &[u8]| chunk.iter().fold(0u64, |acc, &x| (acc << 8) | x as u64);
    // Pass 1: ids in range, total length exactly the `expected` bytes of `dst`.
    let mut total = 0u64;
    for (i, chunk) in src.chunks_exact(id_size).enumerate() {
        let id = id_of(chunk);
        let &(_, len) = usize::try_from(id)
            .ok()
            .and_then(|id| dict.get(id))
            .ok_or_else(|| {
                Error::corrupt(format!(
                    "id {id} of cell {i} is outside the {}-entry dictionary",
                    dict.len()
                ))
            })?;
        total += len as u64;
    }
    if total != expected as u64 {
        return Err(Error::corrupt(format!(
            "dictionary strings total {total} bytes, expected {expected}"
        )));
    }
    // Pass 2: write.
    offsets.reserve(n_cells);
    let mut pos = 0usize;
    for chunk in src.chunks_exact(id_size) {
        let (start, len) = dict[id_of(chunk) as usize];
        offsets.push(pos as u64);
        dst.put(&dict_src[start..start + len]);
        pos += len;
    }
    Ok(())
}

/// DICTIONARY's descriptor: var-size STRING_ASCII/UTF8 tiles only (docs/FORMAT.md §5.8, §5.9);
/// TileDB's compression framework has no DICTIONARY codec, so any other tile fails.
pub const DESCRIPTOR: FilterDescriptor = FilterDescriptor {
    forward: |_, ctx, input, out| {
        if var_string::applies_forward(ctx) {
            var_string::forward(VarStringCodec::Dictionary, ctx, input, out)
        } else {
            Err(Error::invalid(
                "dictionary encoding only applies to variable length strings",
            ))
        }
    },
    reverse: |_, ctx, input, out| {
        if var_string::applies_reverse(&out) {
            var_string::reverse(VarStringCodec::Dictionary, ctx, input, out)
        } else {
            Err(Error::corrupt(
                "dictionary encoding only applies to variable length strings",
            ))
        }
    },
    unbounded_on_strings: true,
    ..compression::codec_descriptor(
        FilterType::Dictionary,
        Compressor::Dictionary,
        None,
        u64::MAX,
    )
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::parts::Parts;
    use crate::filters::config::Filter;
    use crate::filters::testing::unhex as hex;
    use crate::filters::testing::{forward_one, forward_parts, reverse_one};
    use crate::format::datatype::Datatype;
    use crate::format::filter_type::FilterType;

    fn to_hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    fn split_tile(tile: &[u8]) -> (usize, Vec<u8>, Vec<u8>) {
        assert_eq!(&tile[..8], &1u64.to_le_bytes());
        let u = |i: usize| u32::from_le_bytes(tile[i..i + 4].try_into().unwrap()) as usize;
        let (orig, filtered, md_len) = (u(8), u(12), u(16));
        assert_eq!(20 + md_len + filtered, tile.len());
        (
            orig,
            tile[20..20 + md_len].to_vec(),
            tile[20 + md_len..].to_vec(),
        )
    }

    fn dict() -> Filter {
        Filter::new(FilterType::Dictionary)
    }

    fn tile(strings: &[&[u8]]) -> (Vec<u8>, Vec<u64>) {
        let mut data = Vec::new();
        let mut offsets = Vec::new();
        for s in strings {
            offsets.push(data.len() as u64);
            data.extend_from_slice(s);
        }
        (data, offsets)
    }

    fn roundtrip(dt: Datatype, strings: &[&[u8]]) -> (Vec<u8>, Vec<u8>) {
        let (data, offsets) = tile(strings);
        let f = forward_one(&dict(), dt, 1, Some(&offsets), &data).unwrap();
        assert_eq!(f.md_lens.len(), 1);
        assert_eq!(f.data_lens.len(), 1);
        let r = reverse_one(&dict(), dt, 1, &f.md, &f.data, data.len(), true).unwrap();
        assert_eq!(r.data, data);
        assert_eq!(r.offsets, offsets);
        assert!(r.md.is_empty());
        (f.md, f.data)
    }

    fn roundtrip_ascii(strings: &[&[u8]]) -> (Vec<u8>, Vec<u8>) {
        roundtrip(Datatype::StringAscii, strings)
    }

    #[test]
    fn vector_from_format_md() {
        // docs/FORMAT.md §9.2, also written by TileDB 2.30.0 (a0_var.tdb; a0.tdb = 8 zero bytes).
        let t = hex("0100000000000000 0d000000 06000000 23000000 \
                     00000000 01000000 0d000000 06000000 30000000 01 01 09000000 \
                     02 6161 01 62 03 636363 | 00 00 01 02 02 00");
        let (orig, md, data) = split_tile(&t);
        assert_eq!(
            roundtrip_ascii(&[b"aa", b"aa", b"b", b"ccc", b"ccc", b"aa"]),
            (md.clone(), data.clone())
        );
        let r = reverse_one(&dict(), Datatype::StringAscii, 1, &md, &data, orig, true).unwrap();
        assert_eq!(r.data, b"aaaabccccccaa");
        assert_eq!(r.offsets, vec![0, 2, 4, 5, 8, 11]);
    }

    /// Var-size string tiles written by TileDB 2.30.0 (TileDB-Py 0.36.1) with [DICTIONARY],
    /// with the strings TileDB-Py read back.
    const TILEDB_VECTORS: &[(Datatype, &[&str], &str)] = &[
        (
            Datatype::StringUtf8,
            &["héllo", "héllo", "", "wörld", "日本", "日本", "日本", ""],
            "010000000000000024000000080000003000000000000000010000002400000008000000400000000101\
             160000000668c3a96c6c6f000677c3b6726c6406e697a5e69cac0000010203030301",
        ),
        (
            Datatype::StringAscii,
            &["", "", ""],
            "010000000000000000000000030000001b000000000000000100000000000000030000001800000001010100\
             000000000000",
        ),
        (
            // Sparse array, capacity 5.
            Datatype::StringAscii,
            &["x", "yy", "yy", "", "x"],
            "010000000000000006000000050000002000000000000000010000000600000005000000280000000101\
             060000000178027979000001010200",
        ),
    ];

    #[test]
    fn vectors_from_tiledb() {
        for (i, (dt, strings, h)) in TILEDB_VECTORS.iter().enumerate() {
            let refs: Vec<&[u8]> = strings.iter().map(|s| s.as_bytes()).collect();
            let (data, _) = tile(&refs);
            let (orig, md, enc) = split_tile(&hex(h));
            assert_eq!(orig, data.len());
            let (emd, edata) = roundtrip(*dt, &refs);
            assert_eq!(to_hex(&emd), to_hex(&md), "vector {i}");
            assert_eq!(to_hex(&edata), to_hex(&enc), "vector {i}");
            let r = reverse_one(&dict(), *dt, 1, &md, &enc, orig, true).unwrap();
            assert_eq!(r.data, data);
        }
    }

    #[test]
    fn vector_300_strings_from_tiledb() {
        // ["s0","s1","s2"] repeated to 300 strings, TileDB 2.30.0: id_size 2 although only three
        // strings are distinct.
        let strings: Vec<String> = (0..300).map(|i| format!("s{}", i % 3)).collect();
        let refs: Vec<&[u8]> = strings.iter().map(|s| s.as_bytes()).collect();
        let mut t = hex("0100000000000000 58020000 58020000 23000000 \
                         00000000 01000000 58020000 58020000 60090000 02 01 09000000 \
                         027330 027331 027332");
        for i in 0..300u16 {
            t.extend_from_slice(&(i % 3).to_be_bytes());
        }
        let (_, md, enc) = split_tile(&t);
        assert_eq!(roundtrip_ascii(&refs), (md, enc));
    }

    #[test]
    fn vector_long_string_from_tiledb() {
        // ["q", "z"×300, "q"], TileDB 2.30.0: sl 2 (the longest string is in the middle).
        let z = [b'z'; 300];
        let mut t = hex(
            "01000000000000002e010000030000004b01000000000000010000002e01000003000000\
                         18000000 01 02 31010000 0001 71 012c",
        );
        t.extend_from_slice(&z);
        t.extend_from_slice(&[0, 1, 0]);
        let (_, md, enc) = split_tile(&t);
        assert_eq!(roundtrip_ascii(&[b"q", &z, b"q"]), (md, enc));
    }

    #[test]
    fn zstd_after_dictionary_vector_from_tiledb() {
        // [DICTIONARY, ZSTD] on ["aa","aa","b","ccc","ccc","ccc"], TileDB 2.30.0.
        let t = hex(
            "01000000000000000e0000003b000000180000000100000001000000230000002c000000060000000f00\
             000028b52ffd202319010000000000010000000e00000006000000300000000101090000000261610162\
             0363636328b52ffd2006310000000001020202",
        );
        let (_, zmd, zdata) = split_tile(&t);
        let (md, data) = roundtrip_ascii(&[b"aa", b"aa", b"b", b"ccc", b"ccc", b"ccc"]);
        let (ml, dl) = ([md.len()], [data.len()]);
        let f = forward_parts(
            &Filter::new(FilterType::Zstd),
            Datatype::StringAscii,
            1,
            None,
            Parts::new(&md, &ml),
            Parts::new(&data, &dl),
        )
        .unwrap();
        assert_eq!(
            (to_hex(&f.md), to_hex(&f.data)),
            (to_hex(&zmd), to_hex(&zdata))
        );
    }

    #[test]
    fn empty_strings() {
        let (md, data) = roundtrip_ascii(&[b"", b"", b""]);
        assert_eq!(to_hex(&md[20..]), "01010100000000");
        assert_eq!(data, [0, 0, 0]);
        let (md, data) = roundtrip_ascii(&[b"a", b"", b"a", b""]);
        assert_eq!(to_hex(&md[20..]), "0101030000000161 00".replace(' ', ""));
        assert_eq!(data, [0, 1, 0, 1]);
        roundtrip_ascii(&[b""]);
    }

    #[test]
    fn id_widths_follow_the_string_count() {
        for (n, id_size) in [(255usize, 1u8), (256, 2), (65535, 2), (65536, 4)] {
            let strings: Vec<Vec<u8>> = (0..n).map(|i| vec![b'a' + (i % 7) as u8]).collect();
            let refs: Vec<&[u8]> = strings.iter().map(|s| &s[..]).collect();
            let (md, data) = roundtrip_ascii(&refs);
            assert_eq!(md[20], id_size, "{n}");
            assert_eq!(data.len(), n * id_size as usize);
        }
        // All distinct: ids count up.
        let strings: Vec<Vec<u8>> = (0..1000u32).map(|i| i.to_string().into_bytes()).collect();
        let refs: Vec<&[u8]> = strings.iter().map(|s| &s[..]).collect();
        let (_, data) = roundtrip_ascii(&refs);
        assert_eq!(&data[1998..], &[0x03, 0xe7]);
    }

    #[test]
    fn string_length_widths() {
        let s300 = vec![b'x'; 300];
        let s70k = vec![b'y'; 70_000];
        let (md, _) = roundtrip_ascii(&[b"a", &s300]);
        assert_eq!(md[21], 2);
        let (md, _) = roundtrip_ascii(&[b"a", &s70k, b"a"]);
        assert_eq!(md[21], 4);
        assert_eq!(&md[26..31], &[0, 0, 0, 1, b'a']);
        let (md, _) = roundtrip(Datatype::StringUtf8, &["é".repeat(200).as_bytes()]);
        assert_eq!(md[21], 2);
    }

    #[test]
    fn decoder_accepts_what_tiledb_reads() {
        // id width 3 is read as 4 bytes, sl 0 as 1; an unused dictionary entry is fine.
        let mut md =
            hex("00000000 01000000 03000000 08000000 10000000 03 00 06000000 0178 02797a 00");
        md[12..16].copy_from_slice(&8u32.to_le_bytes());
        let ids = hex("00000001 00000000");
        let r = reverse_one(&dict(), Datatype::StringAscii, 1, &md, &ids, 3, true).unwrap();
        assert_eq!(r.data, b"yzx");
        assert_eq!(r.offsets, vec![0, 2]);
    }

    #[test]
    fn decoder_rejects_inconsistent_input() {
        let (md, data) = roundtrip_ascii(&[b"aa", b"aa", b"b"]);
        let run = |md: &[u8], data: &[u8]| {
            reverse_one(&dict(), Datatype::StringAscii, 1, md, data, 5, true)
        };
        assert!(run(&md, &data).is_ok());
        // Id out of range.
        assert!(matches!(run(&md, &[0, 0, 2]), Err(Error::CorruptData(_))));
        // Id that changes the total length.
        assert!(matches!(run(&md, &[0, 1, 1]), Err(Error::CorruptData(_))));
        // Zero id width.
        let mut m = md.clone();
        m[20] = 0;
        assert!(matches!(run(&m, &data), Err(Error::CorruptData(_))));
        // Id width 2 makes 3 bytes of ids a partial id.
        m[20] = 2;
        assert!(matches!(run(&m, &data), Err(Error::CorruptData(_))));
        // Empty dictionary.
        let mut m = md[..22].to_vec();
        m.extend_from_slice(&0u32.to_le_bytes());
        assert!(matches!(run(&m, &data), Err(Error::CorruptData(_))));
        // dict_bytes past the metadata.
        let mut m = md.clone();
        m[22] = 200;
        assert!(matches!(run(&m, &data), Err(Error::CorruptData(_))));
        // An entry length past the dictionary.
        let mut m = md.clone();
        m[26] = 9;
        assert!(matches!(run(&m, &data), Err(Error::CorruptData(_))));
        // Fewer ids than cells.
        let mut m = md.clone();
        m[16..20].copy_from_slice(&32u32.to_le_bytes());
        assert!(matches!(run(&m, &data), Err(Error::CorruptData(_))));
    }

    #[test]
    fn decoder_never_panics_on_mutations() {
        let s300 = vec![b'q'; 300];
        let strings: Vec<&[u8]> = vec![b"aa", b"aa", b"", b"b", &s300, b"b", b"", b"aa"];
        let (data, _) = tile(&strings);
        let (md, enc) = roundtrip_ascii(&strings);
        let mut rng = 0x0bad_cafe_dead_beefu64;
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
            if let Ok(r) = reverse_one(&dict(), Datatype::StringAscii, 1, &m, &d, len, true) {
                assert_eq!(r.data.len(), len);
                assert!(r.offsets.iter().all(|&o| o <= len as u64));
            }
        }
    }

    #[test]
    fn dictionary_outside_the_string_path_fails() {
        let e = forward_one(&dict(), Datatype::Int32, 4, None, &[0; 8])
            .err()
            .unwrap();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
        let e = forward_one(&dict(), Datatype::StringAscii, 1, None, b"ab")
            .err()
            .unwrap();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    }
}
