//! Generic tiles written by libtiledb 2.30.0 (TileDB-Py 0.36.1): schemas, fragment metadata
//! and array metadata of a plain and an AES-256-GCM encrypted array, in tests/data/generic/.
//! manifest.txt there was computed independently (Python's zlib and AES-GCM, see
//! generate.py): every tile must read to the same header and payload, and for the plain
//! files our writer must reproduce TileDB's bytes exactly.

use sha2::{Digest, Sha256};
use std::path::PathBuf;
use tdbfilter::pipeline::generic_tile::{self, EncryptionType};
use tdbfilter::{Datatype, Error};

const KEY: &[u8] = b"0123456789abcdeF0123456789abcdeF";

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/generic")
}

fn file(name: &str) -> Vec<u8> {
    std::fs::read(data_dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One `tile` line of manifest.txt.
#[derive(Debug)]
struct Expected {
    file: String,
    index: usize,
    offset: usize,
    consumed: usize,
    version: u32,
    persisted_size: u64,
    tile_size: u64,
    datatype: u8,
    cell_size: u64,
    encryption_type: u8,
    pipeline_hex: String,
    chunks: u64,
    sha256: String,
}

struct Manifest {
    tiles: Vec<Expected>,
    ends: Vec<(String, usize)>,
}

fn manifest() -> Manifest {
    let text = std::fs::read_to_string(data_dir().join("manifest.txt")).unwrap();
    let mut tiles = Vec::new();
    let mut ends = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f[0] {
            "tile" => tiles.push(Expected {
                file: f[1].into(),
                index: f[2].parse().unwrap(),
                offset: f[3].parse().unwrap(),
                consumed: f[4].parse().unwrap(),
                version: f[5].parse().unwrap(),
                persisted_size: f[6].parse().unwrap(),
                tile_size: f[7].parse().unwrap(),
                datatype: f[8].parse().unwrap(),
                cell_size: f[9].parse().unwrap(),
                encryption_type: f[10].parse().unwrap(),
                pipeline_hex: f[11].into(),
                chunks: f[12].parse().unwrap(),
                sha256: f[13].into(),
            }),
            "end" => ends.push((f[1].into(), f[2].parse().unwrap())),
            other => panic!("manifest: unknown line kind {other}"),
        }
    }
    Manifest { tiles, ends }
}

fn key_for(name: &str) -> Option<&'static [u8]> {
    name.contains("_aes").then_some(KEY)
}

#[test]
fn every_tiledb_generic_tile_reads_to_the_independent_payload() {
    let m = manifest();
    assert_eq!(m.ends.len(), 6);
    assert!(m.tiles.len() >= 58, "{} tiles", m.tiles.len());
    for (name, end) in &m.ends {
        let bytes = file(name);
        let key = key_for(name);
        let all = generic_tile::read_all(&bytes, key).unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected: Vec<&Expected> = m.tiles.iter().filter(|t| &t.file == name).collect();
        assert_eq!(all.tiles.len(), expected.len(), "{name}");
        assert_eq!(all.end, *end, "{name}: where the generic tiles stop");
        assert_eq!(all.stop_reason.is_some(), *end < bytes.len(), "{name}");
        for (got, want) in all.tiles.iter().zip(&expected) {
            let what = format!("{name} tile {}", want.index);
            let h = &got.header;
            assert_eq!(got.offset, want.offset, "{what}");
            assert_eq!(h.total_size() as usize, want.consumed, "{what}");
            assert_eq!(h.version, want.version, "{what}");
            assert_eq!(h.persisted_size, want.persisted_size, "{what}");
            assert_eq!(h.tile_size, want.tile_size, "{what}");
            assert_eq!(h.datatype as u8, want.datatype, "{what}");
            assert_eq!(h.cell_size, want.cell_size, "{what}");
            assert_eq!(h.encryption_type as u8, want.encryption_type, "{what}");
            assert_eq!(h.filter_pipeline_size as usize * 2, want.pipeline_hex.len());
            assert_eq!(hex(&h.pipeline.serialize()), want.pipeline_hex, "{what}");
            let chunks = u64::from_le_bytes(
                bytes[got.offset + h.header_size()..][..8]
                    .try_into()
                    .unwrap(),
            );
            assert_eq!(chunks, want.chunks, "{what}");
            assert_eq!(got.tile.data().len() as u64, want.tile_size, "{what}");
            assert_eq!(hex(&Sha256::digest(got.tile.data())), want.sha256, "{what}");
            // The single-tile reader agrees and reports the same size.
            let (h1, t1, used) = generic_tile::read(&bytes[got.offset..], key).unwrap();
            assert_eq!((&h1, &t1, used), (h, &got.tile, want.consumed), "{what}");
        }
    }
}

#[test]
fn tiledb_headers_hold_what_format_md_section_6_says() {
    for (name, enc) in [("schema_plain.tdb", false), ("schema_aes.tdb", true)] {
        let h = generic_tile::read_header(&file(name)).unwrap();
        assert_eq!(h.version, 22);
        assert_eq!((h.datatype, h.cell_size), (Datatype::Char, 1));
        let (et, fps) = if enc {
            (EncryptionType::Aes256Gcm, 23)
        } else {
            (EncryptionType::NoEncryption, 18)
        };
        assert_eq!(
            (h.encryption_type, h.filter_pipeline_size),
            (et, fps),
            "{name}"
        );
        assert_eq!(
            tdbfilter::pipeline::spec::to_spec(&h.pipeline),
            if enc { "gzip:1,aes_256_gcm" } else { "gzip:1" }
        );
    }
    // The schemas of the two arrays are the same payload.
    let a = generic_tile::read(&file("schema_plain.tdb"), None)
        .unwrap()
        .1;
    let b = generic_tile::read(&file("schema_aes.tdb"), Some(KEY))
        .unwrap()
        .1;
    assert_eq!(a, b);
}

#[test]
fn writing_tiledb_payloads_reproduces_tiledb_bytes() {
    let mut checked = 0;
    for name in [
        "schema_plain.tdb",
        "frag_meta_plain.tdb",
        "array_meta_plain.tdb",
    ] {
        let bytes = file(name);
        let all = generic_tile::read_all(&bytes, None).unwrap();
        for t in &all.tiles {
            let ours = generic_tile::write_payload(t.tile.data(), None).unwrap();
            let theirs = &bytes[t.offset..t.offset + t.header.total_size() as usize];
            assert_eq!(hex(&ours), hex(theirs), "{name} tile at byte {}", t.offset);
            // The explicit route: the default pipeline and a CHAR tile of cell size 1.
            let tile = tdbfilter::Tile::new(Datatype::Char, 1, t.tile.data().to_vec()).unwrap();
            let ours = generic_tile::write(&generic_tile::default_pipeline(), &tile).unwrap();
            assert_eq!(ours, theirs);
            checked += 1;
        }
        // Re-assembled with the footer, the whole file is TileDB's.
        let mut rebuilt = Vec::new();
        for t in &all.tiles {
            rebuilt.extend(generic_tile::write_payload(t.tile.data(), None).unwrap());
        }
        rebuilt.extend_from_slice(&bytes[all.end..]);
        assert!(rebuilt == bytes, "{name}");
    }
    assert_eq!(checked, 1 + 27 + 1);
}

#[test]
fn encrypted_payloads_written_by_us_have_tiledb_structure() {
    for name in ["schema_aes.tdb", "frag_meta_aes.tdb", "array_meta_aes.tdb"] {
        let bytes = file(name);
        for t in generic_tile::read_all(&bytes, Some(KEY)).unwrap().tiles {
            let ours = generic_tile::write_payload(t.tile.data(), Some(KEY)).unwrap();
            let theirs = &bytes[t.offset..t.offset + t.header.total_size() as usize];
            // Same length, same header and pipeline; only IVs, tags and ciphertext differ.
            assert_eq!(ours.len(), theirs.len(), "{name}");
            assert_eq!(ours[..57], theirs[..57], "{name}");
            let (h, back, _) = generic_tile::read(&ours, Some(KEY)).unwrap();
            assert_eq!((h, back), (t.header.clone(), t.tile.clone()));
        }
    }
}

#[test]
fn encrypted_tiledb_files_need_the_right_key() {
    let bytes = file("frag_meta_aes.tdb");
    let e = generic_tile::read(&bytes, None).unwrap_err();
    assert!(matches!(e, Error::DecryptionFailed(_)), "{e:?}");
    assert!(
        e.message()
            .contains("AES_256_GCM but given key is for NO_ENCRYPTION")
    );
    let mut wrong = KEY.to_vec();
    wrong[0] ^= 0x20;
    let e = generic_tile::read_all(&bytes, Some(&wrong)).unwrap_err();
    assert!(matches!(e, Error::DecryptionFailed(_)), "{e:?}");
    // Without a key the structure is still readable.
    let s = generic_tile::scan(&bytes);
    assert_eq!((s.tiles.len(), s.end), (27, 4994));
    let e = generic_tile::read(&file("schema_plain.tdb"), Some(KEY)).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
}
