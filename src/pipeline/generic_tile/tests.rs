use super::*;

const KEY: &[u8; 32] = b"0123456789abcdeF0123456789abcdeF";

/// TileDB's serialized generic-tile pipelines (docs/FORMAT.md §6, §9.1).
const PIPELINE_PLAIN: &str = "000001000100000001050000000101000000";
const PIPELINE_AES: &str = "0000010002000000010500000001010000000b00000000";

fn hex(s: &str) -> Vec<u8> {
    let s: String = s
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '|')
        .collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn payload(n: usize) -> Vec<u8> {
    (0..n).map(|i| ((i * 31) ^ (i >> 7)) as u8).collect()
}

fn is_corrupt(e: &Error) -> bool {
    matches!(e, Error::CorruptData(_))
}

#[test]
fn exact_bytes_of_an_unencrypted_generic_tile() {
    // Hand-built: header, [GZIP 1], one chunk with the GZIP metadata (0 md parts, 1 data part,
    // 19 -> 25 bytes) and Python's zlib.compress(b"TileDB generic tile", 1).
    let expected = hex(
        "16000000 3d00000000000000 1300000000000000 04 0100000000000000 00 12000000
         00000100 01000000 01 05000000 01 01000000
         0100000000000000 | 13000000 19000000 10000000 | 00000000 01000000 13000000 19000000
         | 78010bc9cc49757152484fcd4b2dca4c5628017201431206e0",
    );
    let bytes = write_payload(b"TileDB generic tile", None).unwrap();
    assert_eq!(bytes, expected);
    let (h, t, used) = read(&bytes, None).unwrap();
    assert_eq!(used, bytes.len());
    assert_eq!(t.data(), b"TileDB generic tile");
    assert_eq!((t.datatype(), t.cell_size()), (Datatype::Char, 1));
    assert_eq!(
        (h.version, h.persisted_size, h.tile_size),
        (22, 61, 19),
        "{h:?}"
    );
    assert_eq!((h.datatype, h.cell_size), (Datatype::Char, 1));
    assert_eq!(h.encryption_type, EncryptionType::NoEncryption);
    assert_eq!(h.filter_pipeline_size, 18);
    assert_eq!(h.pipeline.serialize(), hex(PIPELINE_PLAIN));
    assert_eq!(h.pipeline, default_pipeline());
    assert_eq!((h.header_size(), h.total_size()), (52, 113));
}

#[test]
fn empty_generic_tile_has_zero_chunks() {
    let bytes = write_payload(b"", None).unwrap();
    let expected = hex(&format!(
        "16000000 0800000000000000 0000000000000000 04 0100000000000000 00 12000000
         {PIPELINE_PLAIN} 0000000000000000"
    ));
    assert_eq!(bytes, expected);
    let (h, t, used) = read(&bytes, None).unwrap();
    assert_eq!((h.tile_size, t.data().len(), used), (0, 0, bytes.len()));
}

#[test]
fn round_trips_plain_and_encrypted() {
    for n in [0usize, 1, 65535, 65536, 65537, 150_000] {
        let data = payload(n);
        let plain = write_payload(&data, None).unwrap();
        let (h, t, used) = read(&plain, None).unwrap();
        assert_eq!((t.data(), used), (&data[..], plain.len()), "n={n}");
        let chunks = n.div_ceil(65536) as u64;
        assert_eq!(
            u64::from_le_bytes(plain[52..60].try_into().unwrap()),
            chunks,
            "n={n}"
        );
        assert_eq!(h.tile_size, n as u64);

        let enc = write_payload(&data, Some(KEY)).unwrap();
        assert_eq!(&enc[34..57], &hex(PIPELINE_AES)[..]);
        assert_eq!(
            (enc[29], enc[30]),
            (1, 23),
            "encryption type, pipeline size"
        );
        let (h, t, used) = read(&enc, Some(KEY)).unwrap();
        assert_eq!((t.data(), used), (&data[..], enc.len()), "n={n}");
        assert_eq!(h.encryption_type, EncryptionType::Aes256Gcm);
        assert_eq!(h.pipeline.serialize(), hex(PIPELINE_AES));
        // Fresh IVs: two encryptions differ, both decrypt.
        let again = write_payload(&data, Some(KEY)).unwrap();
        if n > 0 {
            assert_ne!(enc, again);
        }
        assert_eq!(read(&again, Some(KEY)).unwrap().1.data(), &data[..]);
    }
}

#[test]
fn a_pipeline_read_from_a_header_writes_the_same_header() {
    let enc = write_payload(b"abc", Some(KEY)).unwrap();
    let (mut h, _, _) = read(&enc, Some(KEY)).unwrap();
    assert_eq!(h.pipeline.filters().last(), Some(&Filter::Aes256Gcm));
    // Without the key the stored AES filter cannot run.
    let tile = Tile::new(DATATYPE, CELL_SIZE, b"xyz".to_vec()).unwrap();
    let e = write(&h.pipeline, &tile).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    h.pipeline.set_encryption_key(KEY).unwrap();
    let bytes = write(&h.pipeline, &tile).unwrap();
    assert_eq!(&bytes[34..57], &hex(PIPELINE_AES)[..]);
    assert_eq!(read(&bytes, Some(KEY)).unwrap().1.data(), b"xyz");
}

#[test]
fn other_pipelines_datatypes_and_cell_sizes() {
    let mut p = crate::pipeline::spec::parse("byteshuffle,zstd:3").unwrap();
    p.set_max_chunk_size(0);
    let data: Vec<u8> = (0..40_000i32).flat_map(|v| v.to_le_bytes()).collect();
    let tile = Tile::new(Datatype::Int32, 8, data.clone()).unwrap();
    let bytes = write(&p, &tile).unwrap();
    let (h, t, _) = read(&bytes, None).unwrap();
    assert_eq!((h.datatype, h.cell_size), (Datatype::Int32, 8));
    assert_eq!(h.pipeline.max_chunk_size(), 0);
    assert_eq!(h.pipeline.filters(), p.filters());
    assert_eq!(t, tile);
    // max_chunk_size 0: one chunk.
    assert_eq!(
        u64::from_le_bytes(bytes[h.header_size()..][..8].try_into().unwrap()),
        1
    );
}

#[test]
fn write_rejects_what_cannot_be_a_generic_tile() {
    let var = Tile::new_var(Datatype::StringAscii, vec![0, 1], b"ab".to_vec()).unwrap();
    assert!(matches!(
        write(&default_pipeline(), &var),
        Err(Error::InvalidArgument(_))
    ));
    let old = Pipeline::deserialize(&hex(PIPELINE_PLAIN), 21).unwrap();
    let tile = Tile::new(DATATYPE, CELL_SIZE, vec![1]).unwrap();
    let e = write(&old, &tile).unwrap_err();
    assert!(e.message().contains("format version"), "{e}");
}

#[test]
fn every_truncation_is_corrupt_data() {
    for bytes in [
        write_payload(b"TileDB generic tile", None).unwrap(),
        write_payload(&payload(70_000), Some(KEY)).unwrap(),
        write_payload(b"", None).unwrap(),
    ] {
        let key = (bytes[29] == 1).then_some(&KEY[..]);
        for cut in 0..bytes.len() {
            let e = read(&bytes[..cut], key).unwrap_err();
            assert!(is_corrupt(&e), "cut {cut}: {e:?}");
            assert!(read_header(&bytes[..cut]).is_err());
        }
        // Trailing bytes are not part of the tile.
        let mut longer = bytes.clone();
        longer.extend_from_slice(b"footer");
        assert_eq!(read(&longer, key).unwrap().2, bytes.len());
    }
}

/// Rewrites a header field of a plain generic tile of "hello".
fn patched(f: impl FnOnce(&mut Vec<u8>)) -> Result<(GenericTileHeader, Tile, usize)> {
    let mut b = write_payload(b"hello", None).unwrap();
    f(&mut b);
    read(&b, None)
}

#[test]
fn header_fields_are_validated() {
    let corrupt = |f: &dyn Fn(&mut Vec<u8>), needle: &str| {
        let e = patched(f).unwrap_err();
        assert!(is_corrupt(&e), "{needle}: {e:?}");
        assert!(e.message().contains(needle), "{needle}: {e}");
    };
    corrupt(&|b| b[0..4].copy_from_slice(&0u32.to_le_bytes()), "version");
    corrupt(&|b| b[4] += 1, "persisted_size");
    corrupt(&|b| b[4] -= 1, "");
    corrupt(
        &|b| b[4..12].copy_from_slice(&u64::MAX.to_le_bytes()),
        "persisted_size",
    );
    corrupt(&|b| b[12] += 1, "tile_size");
    corrupt(&|b| b[20] = 44, "unknown datatype 44");
    corrupt(
        &|b| b[21..29].copy_from_slice(&0u64.to_le_bytes()),
        "cell size",
    );
    corrupt(
        &|b| {
            b[20] = Datatype::Int32 as u8;
            b[21] = 3;
        },
        "cell size",
    );
    corrupt(&|b| b[29] = 2, "unknown encryption type 2");
    corrupt(&|b| b[30] += 1, "");
    corrupt(&|b| b[30] -= 1, "");
    corrupt(
        &|b| b[30..34].copy_from_slice(&u32::MAX.to_le_bytes()),
        "truncated",
    );
    corrupt(&|b| b[42] = 17, "unknown filter type 17");
    // Encryption type AES_256_GCM with [GZIP] only.
    let e = patched(|b| b[29] = 1).unwrap_err();
    assert!(
        is_corrupt(&e) && e.message().contains("no encryption filter"),
        "{e:?}"
    );
    let e = read_header(&{
        let mut b = write_payload(b"hello", None).unwrap();
        b[29] = 1;
        b
    })
    .unwrap_err();
    assert!(is_corrupt(&e), "{e:?}");
    // A newer format version is not corrupt but unsupported.
    let e = patched(|b| b[0] = 24).unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)), "{e:?}");
    // Older versions read (the pipeline layout of [GZIP] is the same).
    let (h, t, _) = patched(|b| b[0] = 10).unwrap();
    assert_eq!((h.version, t.data()), (10, &b"hello"[..]));
}

#[test]
fn aes_filter_placement_is_validated() {
    // NO_ENCRYPTION with an AES filter in the pipeline.
    let mut b = write_payload(b"hello", Some(KEY)).unwrap();
    b[29] = 0;
    let e = read(&b, None).unwrap_err();
    assert!(
        is_corrupt(&e) && e.message().contains("AES_256_GCM filter"),
        "{e:?}"
    );
    // AES first: [AES, GZIP] (valid for TileDB, not written by it).
    let mut b = write_payload(b"hello", Some(KEY)).unwrap();
    b[42..52].copy_from_slice(&hex("0b00000000 0105000000"));
    b[52..57].copy_from_slice(&hex("0101000000"));
    let e = read(&b, Some(KEY)).unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)), "{e:?}");
    // Two AES filters.
    let mut b = write_payload(b"hello", Some(KEY)).unwrap();
    b[42..52].copy_from_slice(&hex("0b00000000 0b00000000"));
    b[52..57].copy_from_slice(&hex("0b00000000"));
    b[38] = 3;
    let e = read(&b, Some(KEY)).unwrap_err();
    assert!(
        is_corrupt(&e) && e.message().contains("more than one"),
        "{e:?}"
    );
}

#[test]
fn keys_must_match_the_encryption_type() {
    let enc = write_payload(b"secret", Some(KEY)).unwrap();
    let plain = write_payload(b"public", None).unwrap();
    let e = read(&enc, None).unwrap_err();
    assert!(matches!(e, Error::DecryptionFailed(_)), "{e:?}");
    assert!(
        e.message()
            .contains("tile is encrypted with AES_256_GCM but given key is for NO_ENCRYPTION"),
        "{e}"
    );
    let e = read(&plain, Some(KEY)).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    assert!(
        e.message()
            .contains("tile is encrypted with NO_ENCRYPTION but given key is for AES_256_GCM"),
        "{e}"
    );
    for bad in [&KEY[..16], &[0u8; 33][..], &[][..]] {
        let e = read(&enc, Some(bad)).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    }
    assert!(encrypted_pipeline(&KEY[..31]).is_err());
    assert!(write_payload(b"x", Some(&KEY[..31])).is_err());
}

#[test]
fn wrong_key_and_tampering_fail_decryption() {
    let data = payload(70_000);
    let enc = write_payload(&data, Some(KEY)).unwrap();
    let mut wrong = *KEY;
    wrong[31] ^= 1;
    let e = read(&enc, Some(&wrong)).unwrap_err();
    assert!(matches!(e, Error::DecryptionFailed(_)), "{e:?}");
    let h = read_header(&enc).unwrap();
    let start = h.header_size();
    // Chunk 0: the 12-byte chunk header, then 80 bytes of AES metadata (two part counts, then
    // per part: lengths, 12-byte IV, 16-byte tag), then the ciphertext.
    let chunk0 = start + 8;
    for pos in [
        chunk0 + 12 + 8 + 8,   // IV of the GZIP-metadata part
        chunk0 + 12 + 8 + 20,  // its tag
        chunk0 + 12 + 44 + 8,  // IV of the data part
        chunk0 + 12 + 80,      // first ciphertext byte
        chunk0 + 12 + 80 + 30, // a data ciphertext byte
        enc.len() - 1,         // last ciphertext byte of the last chunk
    ] {
        let mut t = enc.clone();
        t[pos] ^= 0x40;
        let e = read(&t, Some(KEY)).unwrap_err();
        assert!(matches!(e, Error::DecryptionFailed(_)), "byte {pos}: {e:?}");
    }
    // Any flipped byte fails cleanly or (in fields that do not matter for reading, such as
    // the version 22 -> 23 or the stored GZIP level) still gives the right data.
    for pos in 0..enc.len() {
        let mut t = enc.clone();
        t[pos] ^= 0x01;
        match read(&t, Some(KEY)) {
            Ok((_, tile, _)) => assert_eq!(tile.data(), &data[..], "byte {pos}"),
            Err(e) => assert!(
                matches!(
                    e,
                    Error::DecryptionFailed(_) | Error::CorruptData(_) | Error::Unsupported(_)
                ),
                "byte {pos}: {e:?}"
            ),
        }
    }
}

#[test]
fn scan_and_read_all_stop_at_the_first_non_generic_tile() {
    let a = write_payload(b"first", None).unwrap();
    let b = write_payload(&payload(100_000), None).unwrap();
    let mut file = [a.clone(), b.clone()].concat();
    let footer = {
        // Like a fragment metadata footer: it starts with the version too.
        let mut f = 22u32.to_le_bytes().to_vec();
        f.extend_from_slice(&[0x3e, 0, 0, 0, 0, 0, 0, 0]);
        f.extend_from_slice(b"__1795241641043_1795241641043_759716f4c87a24ea");
        f
    };
    file.extend_from_slice(&footer);
    let s = scan(&file);
    assert_eq!(s.tiles.len(), 2);
    assert_eq!((s.tiles[0].offset, s.tiles[1].offset), (0, a.len()));
    assert_eq!(s.end, a.len() + b.len());
    assert!(s.stop_reason.as_ref().is_some_and(is_corrupt));
    let all = read_all(&file, None).unwrap();
    assert_eq!(all.end, s.end);
    assert_eq!(all.tiles[0].tile.data(), b"first");
    assert_eq!(all.tiles[1].tile.data(), &payload(100_000)[..]);
    assert_eq!(all.tiles[1].offset, a.len());

    let whole = read_all(&file[..s.end], None).unwrap();
    assert_eq!(
        (whole.tiles.len(), whole.end, whole.stop_reason),
        (2, s.end, None)
    );
    let empty = read_all(&[], None).unwrap();
    assert_eq!((empty.tiles.len(), empty.end), (0, 0));
    let junk = scan(b"not a generic tile");
    assert_eq!((junk.tiles.len(), junk.end), (0, 0));

    // Tiles that parse but cannot be unfiltered are errors, not a stop.
    let enc = [
        write_payload(b"x", Some(KEY)).unwrap(),
        write_payload(b"y", Some(KEY)).unwrap(),
    ]
    .concat();
    let e = read_all(&enc, None).unwrap_err();
    assert!(matches!(e, Error::DecryptionFailed(_)), "{e:?}");
    assert!(e.message().starts_with("tile 0 at byte 0"), "{e}");
    let ok = read_all(&enc, Some(KEY)).unwrap();
    assert_eq!(ok.tiles.len(), 2);
    assert_eq!(ok.tiles[1].tile.data(), b"y");
}
