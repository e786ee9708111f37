//! Pipeline-level tests: whole tiles through every supported filter, TileDB's byte vectors,
//! serialization, threads, and corrupt input.

// One-range lists of wanted bytes are what these tests mean, not a collected range.
#![allow(clippy::single_range_in_vec_init)]

use super::*;
use crate::engine::tile::Tile;
use crate::filters::config::OptionValue;
use crate::format::filter_type::FilterOption;
use crate::pipeline::spec;

/// A small deterministic generator (xorshift64*), so tests need no extra crates.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

const SPECS: &[&str] = &[
    "none",
    "byteshuffle",
    "bitshuffle",
    "checksum_md5",
    "checksum_sha256",
    "gzip",
    "gzip:0",
    "gzip:9",
    "zstd",
    "zstd:19",
    "lz4",
    "bzip2",
    "bzip2:9",
    "byteshuffle,zstd",
    "bitshuffle,lz4",
    "checksum_md5,gzip:1",
    "byteshuffle,bitshuffle,checksum_sha256,zstd",
    "checksum_sha256,lz4,checksum_md5",
    "none,none,zstd,none",
    "gzip,zstd,lz4,bzip2",
];

fn shapes(rng: &mut Rng, len: usize) -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("random", rng.bytes(len)),
        ("sorted", (0..len).map(|i| (i / 97) as u8).collect()),
        ("constant", vec![0x5a; len]),
        (
            "runs",
            (0..len)
                .map(|i| if (i / 300) % 2 == 0 { 1 } else { 200 })
                .collect(),
        ),
    ]
}

#[test]
fn every_pipeline_round_trips_every_size_and_datatype() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let sizes = [0usize, 1, 3, 7, 8, 9, 1000, 65535, 65536, 65537, 200_000];
    let types = [
        (Datatype::Uint8, 1u64),
        (Datatype::Int16, 2),
        (Datatype::Float32, 4),
        (Datatype::Int32, 12),
        (Datatype::Uint64, 8),
        (Datatype::DatetimeNs, 8),
    ];
    for spec_text in SPECS {
        let p = spec::parse(spec_text).unwrap();
        for &(dt, cell) in &types {
            for &size in &sizes {
                for (shape, data) in shapes(&mut rng, size) {
                    let tile = Tile::new(dt, cell, data.clone()).unwrap();
                    let filtered = p.filter_tile(&tile).unwrap();
                    let back = p.unfilter_tile(&filtered, dt, cell).unwrap();
                    assert_eq!(
                        back.data(),
                        &data[..],
                        "{spec_text} {dt} cell {cell} size {size} {shape}"
                    );
                    assert_eq!(
                        crate::format::tile_format::filtered_tile_size(&filtered).unwrap() as usize,
                        filtered.len()
                    );
                }
            }
        }
    }
}

#[test]
fn chunk_table_follows_tiledb_chunking() {
    let p = spec::parse("none").unwrap();
    let tile = Tile::new(Datatype::Int32, 4, vec![0; 200_000]).unwrap();
    let f = p.filter_tile(&tile).unwrap();
    let t = crate::format::tile_format::parse(&f).unwrap();
    let lens: Vec<u32> = t.chunks.iter().map(|c| c.original_length).collect();
    assert_eq!(lens, [65536, 65536, 65536, 3392]);
    assert_eq!(f.len(), 8 + 4 * 12 + 200_000);
    // max_chunk_size 0 disables chunking; any other value chunks at 64 KiB.
    let mut p = spec::parse("none").unwrap();
    p.set_max_chunk_size(0);
    let t = p.filter_tile(&tile).unwrap();
    assert_eq!(
        crate::format::tile_format::parse(&t).unwrap().chunks.len(),
        1
    );
    p.set_max_chunk_size(1000);
    let t = p.filter_tile(&tile).unwrap();
    assert_eq!(
        crate::format::tile_format::parse(&t).unwrap().chunks.len(),
        4
    );
    // An empty fixed tile has no chunks at all.
    let empty = Tile::new(Datatype::Int32, 4, vec![]).unwrap();
    assert_eq!(p.filter_tile(&empty).unwrap(), vec![0u8; 8]);
}

#[test]
fn whole_tiles_match_tiledb_vectors() {
    let cases: &[(&str, Datatype, u64, Vec<u8>, &str)] = &[
        (
            "byteshuffle",
            Datatype::Int32,
            4,
            (1..=8i32).flat_map(|v| v.to_le_bytes()).collect(),
            "0100000000000000 20000000 20000000 08000000 01000000 20000000 0102030405060708
             000000000000000000000000000000000000000000000000",
        ),
        (
            "bitshuffle",
            Datatype::Uint8,
            1,
            (1..=10u8).collect(),
            "0100000000000000 0a000000 0a000000 0c000000 02000000 08000000 02000000
             5566788000000000 090a",
        ),
        (
            "checksum_md5",
            Datatype::Uint8,
            1,
            vec![1, 2, 3],
            "0100000000000000 03000000 03000000 20000000 00000000 01000000 0300000000000000
             5289df737df57326fcdd22597afb1fac 010203",
        ),
        (
            "lz4",
            Datatype::StringAscii,
            1,
            b"abcde".to_vec(),
            "0100000000000000 05000000 06000000 10000000 00000000 01000000 05000000 06000000
             50 6162636465",
        ),
    ];
    for (spec_text, dt, cell, data, expected) in cases {
        let p = spec::parse(spec_text).unwrap();
        let tile = Tile::new(*dt, *cell, data.clone()).unwrap();
        assert_eq!(p.filter_tile(&tile).unwrap(), hex(expected), "{spec_text}");
        assert_eq!(
            p.unfilter_tile(&hex(expected), *dt, *cell).unwrap().data(),
            &data[..]
        );
    }
}

#[test]
fn stacked_metadata_order_is_newest_first() {
    // [BYTESHUFFLE, BITSHUFFLE, CHECKSUM_MD5, GZIP]: GZIP sees three metadata parts.
    let p = spec::parse("byteshuffle,bitshuffle,checksum_md5,gzip").unwrap();
    let tile = Tile::new(Datatype::Int32, 4, vec![7; 64]).unwrap();
    let f = p.filter_tile(&tile).unwrap();
    let t = crate::format::tile_format::parse(&f).unwrap();
    let md = t.chunks[0].metadata;
    assert_eq!(&md[0..4], &3u32.to_le_bytes(), "three metadata parts");
    assert_eq!(&md[4..8], &1u32.to_le_bytes(), "one data part");
    // Part sizes: checksum own (8 + 3 × 24: two md parts, one data part), bitshuffle own
    // (8), byteshuffle own (8).
    let sizes: Vec<u32> = (0..3)
        .map(|i| u32::from_le_bytes(md[8 + 8 * i..12 + 8 * i].try_into().unwrap()))
        .collect();
    assert_eq!(sizes, [8 + 3 * 24, 8, 8]);
}

#[test]
fn empty_chunk_passes_zero_data_parts_after_a_forwarding_filter() {
    // §9.2: [CHECKSUM_MD5, GZIP] on an empty chunk: gzip sees one md part and zero data parts.
    let mut p = spec::parse("checksum_md5,gzip").unwrap();
    p.set_max_chunk_size(0);
    let tile = Tile::new(Datatype::Uint8, 1, vec![]).unwrap();
    let f = p.filter_tile(&tile).unwrap();
    let t = crate::format::tile_format::parse(&f).unwrap();
    assert_eq!(t.chunks.len(), 1);
    let md = t.chunks[0].metadata;
    assert_eq!(&md[0..8], &[1, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(p.unfilter_tile(&f, Datatype::Uint8, 1).unwrap().data(), b"");
    // [GZIP] alone on an empty chunk: one empty data part, the 8-byte empty zlib stream.
    let mut p = spec::parse("gzip").unwrap();
    p.set_max_chunk_size(0);
    let f = p.filter_tile(&tile).unwrap();
    assert_eq!(f.len(), 8 + 12 + 16 + 8);
}

#[test]
fn serialization_matches_tiledb_vectors() {
    let cases: &[(&str, &str)] = &[
        ("none", "0000010000000000"),
        (
            "byteshuffle,zstd",
            "00000100 02000000 09 00000000 02 05000000 02 ffffffff",
        ),
        ("gzip:9", "00000100 01000000 01 05000000 01 09000000"),
        (
            "checksum_md5,checksum_sha256,none,bitshuffle",
            "00000100 04000000 0c 00000000 0d 00000000 00 00000000 08 00000000",
        ),
        (
            "lz4,bzip2",
            "00000100 02000000 03 05000000 03 ffffffff 05 05000000 05 ffffffff",
        ),
    ];
    for (s, expected) in cases {
        let p = spec::parse(s).unwrap();
        assert_eq!(p.serialize(), hex(expected), "{s}");
        let back = Pipeline::deserialize(&hex(expected), 22).unwrap();
        assert_eq!(back.filters(), p.filters(), "{s}");
        assert_eq!(back.serialize(), hex(expected));
    }
}

#[test]
fn deserialization_reads_every_filters_options_and_versions() {
    // Every filter's options parse and re-serialize to TileDB's bytes (docs/FORMAT.md §9.1).
    let vectors: &[&str] = &[
        "00000100 01000000 07 04000000 80000000",
        "00000100 01000000 0a 04000000 00040000",
        "00000100 01000000 06 06000000 06 ffffffff 00",
        "00000100 01000000 13 06000000 08 ffffffff 11",
        "00000100 01000000 0e 05000000 07 ffffffff",
        "00000100 01000000 0f 18000000 000000000000e03f 0000000000002440 0200000000000000",
        "00000100 05000000 0c 00000000 0d 00000000 10 00000000 00 00000000 08 00000000",
        "00000100 03000000 03 05000000 03 ffffffff 05 05000000 05 ffffffff 04 05000000 04 ffffffff",
        "00000100 01000000 12 0c000000 0000c842 01 01 2000 2001 0000",
    ];
    for bytes in vectors {
        let p = Pipeline::deserialize(&hex(bytes), 22).unwrap();
        assert_eq!(p.serialize(), hex(bytes), "{bytes}");
    }
    let p = Pipeline::deserialize(&hex(vectors[2]), 22).unwrap();
    assert_eq!(
        p.filters()[0].get_option(FilterOption::CompressionReinterpretDatatype),
        Ok(OptionValue::U8(0))
    );
    // DOUBLE_DELTA before version 20 has no reinterpret byte.
    let p = Pipeline::deserialize(&hex("00000100 01000000 06 05000000 06 ffffffff"), 19).unwrap();
    assert_eq!(
        p.filters()[0].get_option(FilterOption::CompressionReinterpretDatatype),
        Ok(OptionValue::U8(Datatype::Any as u8))
    );
    let e =
        Pipeline::deserialize(&hex("00000100 01000000 06 05000000 06 ffffffff"), 22).unwrap_err();
    assert!(matches!(e, Error::CorruptData(_)), "{e:?}");
    // A compression entry whose compressor byte says NO_COMPRESSION is a NONE filter; the
    // compressor byte, not the type byte, decides.
    let p = Pipeline::deserialize(&hex("00000100 01000000 01 05000000 00 ffffffff"), 22).unwrap();
    assert_eq!(p.filters(), &[Filter::None]);
    let p = Pipeline::deserialize(&hex("00000100 01000000 01 05000000 02 03000000"), 22).unwrap();
    assert_eq!(p.filters()[0].filter_type(), FilterType::Zstd);
    // max_chunk_size is kept as stored.
    let p = Pipeline::deserialize(&hex("e8030000 00000000"), 22).unwrap();
    assert_eq!(p.max_chunk_size(), 1000);
}

#[test]
fn deserialization_rejects_corrupt_bytes() {
    let good = hex("00000100 02000000 09 00000000 02 05000000 02 ffffffff");
    for cut in 0..good.len() {
        assert!(
            matches!(
                Pipeline::deserialize(&good[..cut], 22),
                Err(Error::CorruptData(_))
            ),
            "cut {cut}"
        );
    }
    let mut trailing = good.clone();
    trailing.push(0);
    assert!(Pipeline::deserialize(&trailing, 22).is_err());
    let (_, used) = Pipeline::deserialize_prefix(&trailing, 22).unwrap();
    assert_eq!(used, good.len());
    for bad in [
        "00000100 01000000 11 00000000",             // 17: removed bitsort
        "00000100 01000000 14 00000000",             // 20: sentinel
        "00000100 01000000 02 05000000 09 ffffffff", // unknown compressor
        "00000100 01000000 09 01000000 00",          // BYTESHUFFLE with options
        "00000100 ffffffff 00 00000000",             // absurd filter count
    ] {
        assert!(
            matches!(
                Pipeline::deserialize(&hex(bad), 22),
                Err(Error::CorruptData(_))
            ),
            "{bad}"
        );
    }
    assert!(matches!(
        Pipeline::deserialize(&good, 0),
        Err(Error::Unsupported(_))
    ));
}

#[test]
fn threads_give_identical_bytes() {
    let mut rng = Rng(42);
    let data: Vec<u8> = (0..1_000_000)
        .map(|i| ((i / 7) as u8) ^ (rng.next() as u8 & 3))
        .collect();
    let tile = Tile::new(Datatype::Int64, 8, data.clone()).unwrap();
    for s in [
        "byteshuffle,zstd",
        "bitshuffle,lz4",
        "gzip:1",
        "checksum_sha256",
    ] {
        let mut p = spec::parse(s).unwrap();
        p.set_threads(1);
        let one = p.filter_tile(&tile).unwrap();
        for threads in [2, 3, 0] {
            p.set_threads(threads);
            assert_eq!(p.filter_tile(&tile).unwrap(), one, "{s} threads {threads}");
            assert_eq!(
                p.unfilter_tile(&one, Datatype::Int64, 8).unwrap().data(),
                &data[..]
            );
        }
    }
}

#[test]
fn errors_name_the_chunk_and_filter() {
    let mut p = spec::parse("checksum_md5,zstd").unwrap();
    p.set_threads(1);
    let tile = Tile::new(Datatype::Uint8, 1, vec![3; 200_000]).unwrap();
    let mut f = p.filter_tile(&tile).unwrap();
    // Corrupt the zstd frame of chunk 2.
    let t = crate::format::tile_format::parse(&f).unwrap();
    let offset = t.chunks[2].data.as_ptr() as usize - f.as_ptr() as usize;
    f[offset + 5] ^= 0xff;
    let e = p.unfilter_tile(&f, Datatype::Uint8, 1).unwrap_err();
    assert!(e.message().starts_with("chunk 2: ZSTD: "), "{e}");

    let p = spec::parse("checksum_sha256").unwrap();
    let mut f = p.filter_tile(&tile).unwrap();
    let last = f.len() - 1;
    f[last] ^= 1;
    let e = p.unfilter_tile(&f, Datatype::Uint8, 1).unwrap_err();
    assert!(matches!(e, Error::ChecksumMismatch(_)));
    assert!(
        e.message()
            .starts_with("chunk 3: CHECKSUM_SHA256: checksum mismatch"),
        "{e}"
    );
    let mut p = p;
    p.set_skip_checksum_validation(true);
    let back = p.unfilter_tile(&f, Datatype::Uint8, 1).unwrap();
    assert_eq!(back.data().len(), 200_000);
}

#[test]
fn corrupt_tiles_never_panic_or_overallocate() {
    let mut rng = Rng(7);
    for s in SPECS {
        let p = spec::parse(s).unwrap();
        let data: Vec<u8> = (0..70_000u32).map(|i| (i / 13) as u8).collect();
        let tile = Tile::new(Datatype::Int16, 2, data.clone()).unwrap();
        let good = p.filter_tile(&tile).unwrap();
        for round in 0..200 {
            let mut bad = good.clone();
            match round % 3 {
                0 => {
                    let i = rng.next() as usize % bad.len();
                    bad[i] ^= 1 << (rng.next() % 8);
                }
                1 => bad.truncate(rng.next() as usize % bad.len()),
                _ => {
                    let i = rng.next() as usize % bad.len();
                    let n = (rng.next() as usize % 8).min(bad.len() - i);
                    for b in &mut bad[i..i + n] {
                        *b = rng.next() as u8;
                    }
                }
            }
            // Either an error or, where the damage is undetectable (no checksum), some tile.
            if let Ok(t) = p.unfilter_tile(&bad, Datatype::Int16, 2) {
                assert!(
                    t.data().len() <= bad.len().saturating_mul(40_000) + 64,
                    "{s}"
                );
            }
        }
    }
}

#[test]
fn invalid_filters_and_indices_are_refused() {
    let mut p = Pipeline::new();
    assert!(matches!(
        p.add_filter(FilterType::Aes256Gcm),
        Err(Error::InvalidArgument(_))
    ));
    assert!(p.filters().is_empty());
    p.add_filter(FilterType::Zstd).unwrap();
    assert!(p.filter(1).is_err());
    p.filter_mut(0)
        .unwrap()
        .set_option(FilterOption::CompressionLevel, OptionValue::I32(5))
        .unwrap();
    assert_eq!(
        p.filter(0)
            .unwrap()
            .get_option(FilterOption::CompressionLevel),
        Ok(OptionValue::I32(5))
    );
}

#[test]
fn schema_type_rules_are_enforced_on_write_only() {
    let floats = Tile::new(Datatype::Float64, 8, vec![0; 64]).unwrap();
    for s in [
        "double_delta",
        "delta",
        "bit_width_reduction",
        "positive_delta",
    ] {
        let p = spec::parse(s).unwrap();
        let e = p.filter_tile(&floats).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{s}: {e:?}");
        assert!(e.message().contains("FLOAT64"), "{e}");
    }
    // A delta filter with an integer reinterpret type accepts floats.
    let p = spec::parse("delta:reinterpret=int64").unwrap();
    assert!(p.filter_tile(&floats).is_ok());
    let p = spec::parse("double_delta:reinterpret=int32,zstd").unwrap();
    assert!(p.filter_tile(&floats).is_ok());
    // A reinterpret size that does not divide the type size.
    let p = spec::parse("delta:reinterpret=int64").unwrap();
    let ints = Tile::new(Datatype::Int32, 4, vec![0; 64]).unwrap();
    assert!(matches!(p.filter_tile(&ints), Err(Error::Unsupported(_))));
    // SCALE_FLOAT needs 4- or 8-byte input; WEBP needs UINT8; XOR's output feeds the next stage.
    let bytes = Tile::new(Datatype::Int16, 2, vec![0; 64]).unwrap();
    assert!(
        spec::parse("scale_float")
            .unwrap()
            .filter_tile(&bytes)
            .is_err()
    );
    assert!(spec::parse("webp").unwrap().filter_tile(&bytes).is_err());
    // scale_float then xor: INT64 into XOR, accepted; then double_delta on INT64, accepted.
    assert!(
        spec::parse("scale_float,xor,double_delta")
            .unwrap()
            .check_types(Datatype::Float64, false)
            .is_ok()
    );
    // Var-size strings: RLE and DICTIONARY must come first when there are several filters.
    let p = spec::parse("zstd,rle").unwrap();
    assert!(p.check_types(Datatype::StringAscii, true).is_err());
    assert!(p.check_types(Datatype::StringAscii, false).is_ok());
    assert!(
        spec::parse("dictionary,zstd")
            .unwrap()
            .check_types(Datatype::StringUtf8, true)
            .is_ok()
    );
    // Reading applies no schema rules: older TileDB wrote pass-through BWR on floats.
    let p = spec::parse("bit_width_reduction").unwrap();
    let mut legacy = 1u64.to_le_bytes().to_vec();
    crate::format::tile_format::write_chunk_header(&mut legacy, 8, 8, 0);
    legacy.extend_from_slice(&1.5f64.to_le_bytes());
    assert_eq!(
        p.unfilter_tile(&legacy, Datatype::Float64, 8)
            .unwrap()
            .data(),
        &1.5f64.to_le_bytes()
    );
}

#[test]
fn trailing_bytes_and_impossible_lengths_are_corrupt() {
    let p = spec::parse("none").unwrap();
    let tile = Tile::new(Datatype::Uint8, 1, vec![1, 2, 3]).unwrap();
    let mut f = p.filter_tile(&tile).unwrap();
    f.push(0);
    assert!(matches!(
        p.unfilter_tile(&f, Datatype::Uint8, 1),
        Err(Error::CorruptData(_))
    ));
    // A chunk claiming 4 GiB from 3 stored bytes is rejected before any allocation.
    let mut f = 1u64.to_le_bytes().to_vec();
    crate::format::tile_format::write_chunk_header(&mut f, u32::MAX, 3, 0);
    f.extend_from_slice(&[1, 2, 3]);
    let e = p.unfilter_tile(&f, Datatype::Uint8, 1).unwrap_err();
    assert!(e.message().contains("impossible"), "{e}");
    assert!(matches!(
        p.unfilter_tile(&[], Datatype::Uint8, 0),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn into_buffers_match_allocating_calls() {
    let mut rng = Rng(99);
    let data: Vec<u8> = (0..300_000)
        .map(|i| (i / 11) as u8 ^ (rng.next() as u8 & 1))
        .collect();
    for s in SPECS
        .iter()
        .chain(&["rle", "double_delta", "bit_width_reduction,lz4", "xor,zstd"])
    {
        let p = spec::parse(s).unwrap();
        let tile = Tile::new(Datatype::Int32, 4, data.clone()).unwrap();
        let want = p.filter_tile(&tile).unwrap();
        let bound = p.filtered_size_bound(data.len());
        assert!(bound >= want.len(), "{s}: bound {bound} < {}", want.len());
        let mut buf = vec![0u8; bound];
        let n = p.filter_tile_into(&tile, &mut buf).unwrap();
        assert_eq!(&buf[..n], &want[..], "{s}");
        // Too small: BufferTooSmall with a size that suffices.
        match p.filter_tile_into(&tile, &mut buf[..want.len() - 1]) {
            Err(Error::BufferTooSmall { needed, .. }) => assert!(needed >= want.len()),
            other => panic!("{s}: {other:?}"),
        }
        let mut out = vec![0u8; data.len() + 10];
        let n = p
            .unfilter_tile_into(&want, Datatype::Int32, 4, &mut out)
            .unwrap();
        assert_eq!(&out[..n], &data[..], "{s}");
        match p.unfilter_tile_into(&want, Datatype::Int32, 4, &mut out[..data.len() - 1]) {
            Err(Error::BufferTooSmall { needed, .. }) => assert_eq!(needed, data.len()),
            other => panic!("{s}: {other:?}"),
        }
    }
}

#[test]
fn filtered_size_bound_holds_for_incompressible_and_tiny_tiles() {
    let mut rng = Rng(5);
    for s in [
        "rle",
        "bit_width_reduction:window=2",
        "positive_delta:window=1",
        "gzip:9",
        "bzip2",
    ] {
        let p = spec::parse(s).unwrap();
        for len in [0usize, 1, 2, 100, 65536, 65537, 131_073] {
            let mut data = rng.bytes(len & !1);
            if s.starts_with("positive") {
                data.sort();
                // POSITIVE_DELTA needs non-decreasing u16 values; sorting bytes pairs is not
                // enough, so use a ramp.
                data = (0..data.len() / 2)
                    .flat_map(|i| (i as u16).to_le_bytes())
                    .collect();
            }
            let tile = Tile::new(Datatype::Uint16, 2, data.clone()).unwrap();
            let f = p.filter_tile(&tile).unwrap();
            assert!(f.len() <= p.filtered_size_bound(data.len()), "{s} {len}");
        }
    }
}

/// Checks `unfilter_tile_ranges` on `filtered` (unfiltered whole: `whole`) for several sets of
/// byte ranges: the chunks holding a wanted byte equal the whole reverse there, the others
/// are zero, and the count of bytes unfiltered is theirs.
fn check_chunk_subsets(
    p: &Pipeline,
    filtered: &[u8],
    whole: &[u8],
    dt: Datatype,
    cell: u64,
    what: &str,
) {
    let table = crate::format::tile_format::parse(filtered).unwrap();
    let lens: Vec<usize> = table
        .chunks
        .iter()
        .map(|c| c.original_length as usize)
        .collect();
    assert!(lens.len() >= 4, "{what}: {} chunks", lens.len());
    let mut starts = vec![0usize];
    for l in &lens {
        starts.push(starts.last().unwrap() + l);
    }
    let total = whole.len();
    let c1 = starts[1];
    let sets: Vec<Vec<std::ops::Range<usize>>> = vec![
        vec![],
        vec![0..1],
        vec![total - 1..total],
        vec![c1 - 3..c1 + 5],
        vec![starts[3] + 10..starts[3] + 20, 5..9, 7..8],
        vec![starts[2]..starts[3]],
        vec![0..total],
        vec![10..10, starts[1]..starts[2], total - 8..total],
    ];
    for wanted in sets {
        let (got, n) = p
            .unfilter_tile_ranges(filtered, dt, cell, total, &wanted)
            .unwrap_or_else(|e| panic!("{what} {wanted:?}: {e}"));
        assert_eq!(got.len(), total, "{what} {wanted:?}");
        let mut unfiltered = 0;
        for k in 0..lens.len() {
            let (a, b) = (starts[k], starts[k + 1]);
            let hit = wanted
                .iter()
                .any(|r| r.start < b && a < r.end && !r.is_empty());
            if hit {
                unfiltered += b - a;
                assert_eq!(&got[a..b], &whole[a..b], "{what} {wanted:?} chunk {k}");
            } else {
                assert!(
                    got[a..b].iter().all(|x| *x == 0),
                    "{what} {wanted:?} chunk {k}"
                );
            }
        }
        assert_eq!(n, unfiltered, "{what} {wanted:?}");
    }
    // Ranges past the tile, or a tile of another size, are refused.
    let e = p.unfilter_tile_ranges(filtered, dt, cell, total, &[total - 1..total + 1]);
    assert!(e.unwrap_err().to_string().contains("not within"), "{what}");
    let e = p.unfilter_tile_ranges(filtered, dt, cell, total + 8, &[0..1]);
    assert!(e.unwrap_err().to_string().contains("expected"), "{what}");
}

#[test]
fn chunk_subsets_unfilter_like_the_whole_tile_for_every_filter() {
    let mut rng = Rng(0x5eed);
    // 40 000 INT64 cells (5 chunks of 65 536 bytes or fewer): increasing values with noise, so
    // that every filter has something to do (delta and bit-width filters, dictionaries).
    let ints: Vec<u8> = (0..40_000i64)
        .flat_map(|i| (i * 8 + (rng.next() % 5) as i64).to_le_bytes())
        .collect();
    let floats: Vec<u8> = (0..40_000)
        .flat_map(|i| (i as f64 * 0.25).to_le_bytes())
        .collect();
    let mut tested = Vec::new();
    for &t in FilterType::ALL {
        let (dt, data) = match t {
            // Set through the encryption key, below.
            FilterType::Aes256Gcm => continue,
            // TileDB writes WEBP tiles as one chunk (uses_tile_chunking); dictionary encoding
            // applies to var-size strings only.
            FilterType::Webp | FilterType::Dictionary => continue,
            FilterType::ScaleFloat => (Datatype::Float64, &floats),
            _ => (Datatype::Int64, &ints),
        };
        let mut p = Pipeline::new();
        p.add_filter(t).unwrap();
        let tile = Tile::new(dt, 8, data.clone()).unwrap();
        let filtered = p.filter_tile(&tile).unwrap();
        let whole = p.unfilter_tile(&filtered, dt, 8).unwrap();
        check_chunk_subsets(&p, &filtered, whole.data(), dt, 8, t.name());
        tested.push(t);
    }
    assert_eq!(tested.len(), FilterType::ALL.len() - 3);
    // Stacked filters, with checksums inside and outside, and encrypted tiles.
    for s in [
        "byteshuffle,zstd",
        "bitshuffle,lz4",
        "checksum_sha256,lz4,checksum_md5",
        "byteshuffle,bitshuffle,checksum_sha256,zstd",
        "delta,bit_width_reduction,gzip",
        "positive_delta,xor,zstd",
        "double_delta,bzip2",
    ] {
        for key in [None, Some([7u8; 32])] {
            let mut p = spec::parse(s).unwrap();
            if let Some(k) = key {
                p.set_encryption_key(&k).unwrap();
            }
            let tile = Tile::new(Datatype::Int64, 8, ints.clone()).unwrap();
            let filtered = p.filter_tile(&tile).unwrap();
            let whole = p.unfilter_tile(&filtered, Datatype::Int64, 8).unwrap();
            assert_eq!(whole.data(), &ints[..]);
            let what = format!("{s} key {}", key.is_some());
            check_chunk_subsets(&p, &filtered, whole.data(), Datatype::Int64, 8, &what);
        }
    }
    // Validity tiles (one byte per cell): 200 000 cells, 4 chunks.
    let p = spec::parse("rle").unwrap();
    let valid: Vec<u8> = (0..200_000).map(|i| u8::from(i % 7 != 0)).collect();
    let filtered = p
        .filter_tile(&Tile::new(Datatype::Uint8, 1, valid.clone()).unwrap())
        .unwrap();
    let (got, n) = p
        .unfilter_validity_tile_ranges(
            &filtered,
            Datatype::Int64,
            false,
            valid.len(),
            &[70_000..70_010],
        )
        .unwrap();
    assert_eq!(n, 65_536);
    assert_eq!(&got[65_536..131_072], &valid[65_536..131_072]);
    assert!(got[..65_536].iter().chain(&got[131_072..]).all(|x| *x == 0));
}

#[test]
fn chunk_subsets_verify_checksums_of_the_chunks_unfiltered_only() {
    let mut rng = Rng(99);
    let data = rng.bytes(300_000);
    let p = spec::parse("checksum_sha256").unwrap();
    let mut filtered = p
        .filter_tile(&Tile::new(Datatype::Uint8, 1, data.clone()).unwrap())
        .unwrap();
    // Damage the last byte of the tile (in the last chunk's data).
    *filtered.last_mut().unwrap() ^= 1;
    let (got, n) = p
        .unfilter_tile_ranges(&filtered, Datatype::Uint8, 1, data.len(), &[0..100])
        .unwrap();
    assert_eq!((n, &got[..100]), (65_536, &data[..100]));
    let e = p
        .unfilter_tile_ranges(
            &filtered,
            Datatype::Uint8,
            1,
            data.len(),
            &[299_000..299_001],
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("chunk 4"), "{e}");
}
