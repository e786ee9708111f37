//! Integration tests of the `tdbf` command-line tool: they run the built binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tdbfilter::{Datatype, Tile, pipeline::spec};

/// Runs `tdbf` with `args`.
fn tdbf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tdbf"))
        .args(args)
        .output()
        .expect("run tdbf")
}

/// Runs `tdbf` with path arguments mixed in.
fn tdbf_paths(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tdbf"))
        .args(args.iter().map(|a| a.as_ref()))
        .output()
        .expect("run tdbf")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts success, showing stderr otherwise.
fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "tdbf failed ({:?}):\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(o),
        stderr(o)
    );
}

/// Asserts exit status 1 with a `tdbf: ` message containing `needle`.
fn assert_fails_with(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "stdout:\n{}\nstderr:\n{err}",
        stdout(o)
    );
    assert!(err.starts_with("tdbf: "), "stderr: {err}");
    assert!(err.contains(needle), "expected '{needle}' in stderr: {err}");
    assert!(!err.contains("panicked"), "stderr: {err}");
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("tdbf-cli-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Deterministic int32 cells: a slowly rising sequence with noise.
fn int32_cells(count: usize) -> Vec<u8> {
    let mut state = 12345u32;
    (0..count)
        .flat_map(|i| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (i as i32 / 7 + (state >> 28) as i32).to_le_bytes()
        })
        .collect()
}

/// Deterministic float64 cells.
fn float64_cells(count: usize) -> Vec<u8> {
    (0..count)
        .flat_map(|i| (20.0 + (i as f64 * 0.01).sin()).to_le_bytes())
        .collect()
}

/// The demo runs every default pipeline on every dataset and verifies each round trip.
#[test]
fn demo_prints_ok_rows() {
    let o = tdbf(&[
        "demo",
        "--threads",
        "2",
        "--dataset-bytes",
        "96K",
        "--tile-bytes",
        "40000",
    ]);
    assert_ok(&o);
    let out = stdout(&o);
    let ok_rows = out.lines().filter(|l| l.ends_with("  ok")).count();
    assert_eq!(ok_rows, 3 * 6, "{out}");
    for spec in ["byteshuffle,zstd", "checksum_sha256,gzip:1", "bzip2"] {
        assert!(out.contains(spec), "{out}");
    }
    assert!(
        out.contains("filter MB/s") && out.contains("unfilter MB/s"),
        "{out}"
    );
    assert!(!out.contains("FAILED"), "{out}");
}

/// `--pipeline` replaces the default list; a bad spec fails before any work.
#[test]
fn demo_takes_custom_pipelines_and_rejects_bad_ones() {
    let o = tdbf(&[
        "demo",
        "--dataset-bytes",
        "16K",
        "--pipeline",
        "checksum_md5,lz4:1",
    ]);
    assert_ok(&o);
    let out = stdout(&o);
    assert_eq!(
        out.lines().filter(|l| l.ends_with("  ok")).count(),
        3,
        "{out}"
    );
    assert_fails_with(
        &tdbf(&["demo", "--dataset-bytes", "16K", "--pipeline", "zstd,nope"]),
        "unknown filter 'nope'",
    );
}

/// filter then unfilter gives back the input for several specs, types and tile sizes.
#[test]
fn filter_unfilter_round_trips() {
    let dir = scratch("round-trip");
    let cases: &[(&str, &str, Vec<u8>, Option<&str>)] = &[
        ("none", "int32", int32_cells(50_000), None),
        (
            "byteshuffle,zstd:3",
            "int32",
            int32_cells(50_000),
            Some("64K"),
        ),
        (
            "bitshuffle,lz4",
            "float64",
            float64_cells(30_000),
            Some("100000"),
        ),
        ("checksum_sha256,gzip:1", "int32", int32_cells(20_000), None),
        (
            "checksum_md5,bzip2:9",
            "uint8",
            int32_cells(5_000),
            Some("7000"),
        ),
        (
            "bitshuffle,zstd",
            "DATETIME_NS",
            float64_cells(10_000),
            Some("1K"),
        ),
        ("byteshuffle", "int32", Vec::new(), None),
    ];
    for (i, (spec_text, type_name, cells, tile_bytes)) in cases.iter().enumerate() {
        let raw = dir.join(format!("raw{i}.bin"));
        let filtered = dir.join(format!("filtered{i}.tdb"));
        let back = dir.join(format!("back{i}.bin"));
        std::fs::write(&raw, cells).expect("write input");
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![
            &"filter",
            &"--filters",
            spec_text,
            &"--type",
            type_name,
            &"--threads",
            &"2",
        ];
        if let Some(t) = tile_bytes {
            args.extend([&"--tile-bytes" as &dyn AsRef<std::ffi::OsStr>, t]);
        }
        args.extend([&raw as &dyn AsRef<std::ffi::OsStr>, &filtered]);
        assert_ok(&tdbf_paths(&args));
        assert_ok(&tdbf_paths(&[
            &"unfilter",
            &"--filters",
            spec_text,
            &"--type",
            type_name,
            &filtered,
            &back,
        ]));
        let got = std::fs::read(&back).expect("read output");
        assert!(got == *cells, "case {i} ({spec_text}): round trip differs");
    }
}

/// The CLI writes exactly the library's filtered tiles, with `--tile-bytes` rounded to cells.
#[test]
fn filter_output_matches_the_library_tile_by_tile() {
    let dir = scratch("library");
    let cells = int32_cells(60_000); // 240000 bytes
    let raw = dir.join("raw.bin");
    let filtered = dir.join("out.tdb");
    std::fs::write(&raw, &cells).expect("write input");
    // 100001 bytes round down to 100000 (whole int32 cells): tiles 100000, 100000, 40000.
    assert_ok(&tdbf_paths(&[
        &"filter",
        &"--filters",
        &"byteshuffle,zstd:3",
        &"--type",
        &"int32",
        &"--tile-bytes",
        &"100001",
        &raw,
        &filtered,
    ]));
    let p = spec::parse("byteshuffle,zstd:3").expect("spec");
    let mut expected = Vec::new();
    for piece in cells.chunks(100_000) {
        let tile = Tile::new(Datatype::Int32, 4, piece.to_vec()).expect("tile");
        expected.extend(p.filter_tile(&tile).expect("filter"));
    }
    assert!(std::fs::read(&filtered).expect("read") == expected);
}

/// `--save-pipeline` writes TileDB's serialized pipeline, which `--pipeline-file` reads back.
#[test]
fn saved_pipeline_file_unfilters() {
    let dir = scratch("pipeline-file");
    let cells = float64_cells(20_000);
    let raw = dir.join("raw.bin");
    let filtered = dir.join("out.tdb");
    let saved = dir.join("pipeline.bin");
    let back = dir.join("back.bin");
    std::fs::write(&raw, &cells).expect("write input");
    assert_ok(&tdbf_paths(&[
        &"filter",
        &"--filters",
        &"bitshuffle,zstd:3",
        &"--type",
        &"float64",
        &"--save-pipeline",
        &saved,
        &raw,
        &filtered,
    ]));
    let bytes = std::fs::read(&saved).expect("read pipeline");
    assert_eq!(
        bytes,
        spec::parse("bitshuffle,zstd:3").expect("spec").serialize()
    );
    assert_ok(&tdbf_paths(&[
        &"unfilter",
        &"--pipeline-file",
        &saved,
        &"--type",
        &"float64",
        &filtered,
        &back,
    ]));
    assert!(std::fs::read(&back).expect("read") == cells);
    // A serialized pipeline file with trailing junk is refused.
    let mut junk = bytes.clone();
    junk.push(0);
    std::fs::write(&saved, &junk).expect("write");
    assert_fails_with(
        &tdbf_paths(&[
            &"unfilter",
            &"--pipeline-file",
            &saved,
            &"--type",
            &"float64",
            &filtered,
            &back,
        ]),
        "pipeline file",
    );
}

/// inspect lists tiles, chunks (docs/FORMAT.md §4.3 sizes) and unfilter results.
#[test]
fn inspect_lists_tiles_and_chunks() {
    let dir = scratch("inspect");
    let raw = dir.join("raw.bin");
    let filtered = dir.join("a0.tdb");
    std::fs::write(&raw, int32_cells(50_000)).expect("write input"); // 200000 bytes
    assert_ok(&tdbf_paths(&[
        &"filter",
        &"--filters",
        &"bitshuffle,zstd:3",
        &"--type",
        &"int32",
        &raw,
        &filtered,
    ]));
    let o = tdbf_paths(&[&"inspect", &filtered, &"--verbose"]);
    assert_ok(&o);
    let out = stdout(&o);
    let chunk_originals: Vec<u64> = out
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // Chunk rows: index, original, metadata, data.
            (f.len() == 4 && f.iter().all(|x| x.parse::<u64>().is_ok()))
                .then(|| f[1].parse().unwrap_or(0))
        })
        .collect();
    assert_eq!(chunk_originals, vec![65536, 65536, 65536, 3392], "{out}");
    assert!(out.contains("1 tile(s), 4 chunk(s)"), "{out}");
    assert!(out.contains("200000 unfiltered bytes"), "{out}");

    // Three tiles of 80000, 80000 and 40000 bytes: 2 + 2 + 1 chunks; unfilter each.
    let multi = dir.join("a1.tdb");
    assert_ok(&tdbf_paths(&[
        &"filter",
        &"--filters",
        &"checksum_md5,lz4",
        &"--type",
        &"int32",
        &"--tile-bytes",
        &"80000",
        &raw,
        &multi,
    ]));
    let o = tdbf_paths(&[
        &"inspect",
        &multi,
        &"--type",
        &"int32",
        &"--pipeline",
        &"checksum_md5,lz4",
    ]);
    assert_ok(&o);
    let out = stdout(&o);
    let tile_rows: Vec<Vec<String>> = out
        .lines()
        .filter(|l| l.ends_with("  ok"))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect();
    assert_eq!(tile_rows.len(), 3, "{out}");
    let chunks: Vec<&str> = tile_rows.iter().map(|r| r[3].as_str()).collect();
    let unfiltered: Vec<&str> = tile_rows.iter().map(|r| r[4].as_str()).collect();
    assert_eq!(chunks, ["2", "2", "1"], "{out}");
    assert_eq!(unfiltered, ["80000", "80000", "40000"], "{out}");
    assert_eq!(tile_rows[0][1], "0");
    assert!(out.contains("3 tile(s), 5 chunk(s)"), "{out}");
    assert!(out.contains("3 ok, 0 failed"), "{out}");

    // The wrong pipeline is reported per tile and fails the command.
    let o = tdbf_paths(&[
        &"inspect",
        &multi,
        &"--type",
        &"int32",
        &"--pipeline",
        &"checksum_sha256,lz4",
    ]);
    assert_fails_with(&o, "3 tile(s) failed to unfilter");
    assert!(stdout(&o).contains("FAILED"));
}

/// Bad specs, types, cell sizes and files fail with status 1 and a `tdbf:` message.
#[test]
fn bad_input_gives_exit_1_and_a_message() {
    let dir = scratch("errors");
    let raw = dir.join("raw.bin");
    let out = dir.join("out.tdb");
    let back = dir.join("back.bin");
    std::fs::write(&raw, int32_cells(1000)).expect("write input");
    let filter = |spec_text: &str, type_name: &str| {
        tdbf_paths(&[
            &"filter",
            &"--filters",
            &spec_text,
            &"--type",
            &type_name,
            &raw,
            &out,
        ])
    };
    assert_fails_with(&filter("zstd,foo", "int32"), "unknown filter 'foo'");
    assert_fails_with(&filter("gzip:12", "int32"), "invalid compression level");
    assert_fails_with(
        &filter("double_delta", "float64"),
        "does not accept input type FLOAT64",
    );
    assert_fails_with(&filter("zstd", "int33"), "unknown datatype 'int33'");
    let odd = dir.join("odd.bin");
    std::fs::write(&odd, [0u8; 10]).expect("write input");
    assert_fails_with(
        &tdbf_paths(&[
            &"filter",
            &"--filters",
            &"zstd",
            &"--type",
            &"int32",
            &odd,
            &out,
        ]),
        "not a whole number of 4-byte INT32 cells",
    );
    assert_fails_with(
        &tdbf_paths(&[
            &"filter",
            &"--filters",
            &"zstd",
            &"--type",
            &"int32",
            &"--cell-size",
            &"6",
            &raw,
            &out,
        ]),
        "cell size 6",
    );
    assert_fails_with(
        &tdbf_paths(&[&"filter", &"--type", &"int32", &raw, &out]),
        "required",
    );
    assert_fails_with(
        &tdbf_paths(&[
            &"filter",
            &"--filters",
            &"zstd",
            &"--type",
            &"int32",
            &dir.join("missing"),
            &out,
        ]),
        "cannot read",
    );
    assert_fails_with(
        &tdbf_paths(&[
            &"filter",
            &"--filters",
            &"zstd",
            &"--type",
            &"int32",
            &"--tile-bytes",
            &"3",
            &raw,
            &out,
        ]),
        "smaller than one 4-byte cell",
    );

    // Truncated filtered files: unfilter and inspect name the tile and its byte offset.
    assert_ok(&tdbf_paths(&[
        &"filter",
        &"--filters",
        &"zstd",
        &"--type",
        &"int32",
        &"--tile-bytes",
        &"1000",
        &raw,
        &out,
    ]));
    let bytes = std::fs::read(&out).expect("read");
    let mut last_offset = 0;
    for _ in 0..3 {
        last_offset += tdbfilter::format::tile_format::filtered_tile_size(&bytes[last_offset..])
            .expect("size") as usize;
    }
    let truncated = dir.join("truncated.tdb");
    std::fs::write(&truncated, &bytes[..bytes.len() - 5]).expect("write");
    assert_fails_with(
        &tdbf_paths(&[
            &"unfilter",
            &"--filters",
            &"zstd",
            &"--type",
            &"int32",
            &truncated,
            &back,
        ]),
        &format!("tile 3 at byte offset {last_offset}"),
    );
    assert!(!back.exists(), "no output is written on failure");
    let o = tdbf_paths(&[&"inspect", &truncated]);
    assert_fails_with(&o, "not a sequence of filtered tiles");
    assert!(stderr(&o).contains("byte offset"), "{}", stderr(&o));

    // A flipped data byte under a checksum: unfilter reports the tile and the mismatch.
    let checked = dir.join("checked.tdb");
    assert_ok(&tdbf_paths(&[
        &"filter",
        &"--filters",
        &"checksum_sha256",
        &"--type",
        &"int32",
        &"--tile-bytes",
        &"1000",
        &raw,
        &checked,
    ]));
    let mut corrupt = std::fs::read(&checked).expect("read");
    let last = corrupt.len() - 3;
    corrupt[last] ^= 0xff;
    std::fs::write(&checked, &corrupt).expect("write");
    assert_fails_with(
        &tdbf_paths(&[
            &"unfilter",
            &"--filters",
            &"checksum_sha256",
            &"--type",
            &"int32",
            &checked,
            &back,
        ]),
        "tile 3",
    );

    // A raw file is not a sequence of tiles.
    assert_fails_with(&tdbf_paths(&[&"inspect", &raw]), "byte offset 0");
    // A pipeline without --type cannot unfilter.
    assert_fails_with(
        &tdbf_paths(&[&"inspect", &out, &"--pipeline", &"zstd"]),
        "--type is required",
    );
}

/// The generic-tile files written by libtiledb 2.30.0 in tests/data/generic/.
fn generic_vector(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("tests/data/generic")
        .join(name)
}

/// The key of the encrypted vectors (TileDB's `sm.encryption_key`, raw bytes).
const GENERIC_KEY: &str = "0123456789abcdeF0123456789abcdeF";

/// inspect recognises generic-tile files: header fields, pipeline spec, payload sizes, where
/// the tiles stop (a fragment metadata footer or the end of the file).
#[test]
fn inspect_shows_generic_tiles() {
    let o = tdbf_paths(&[&"inspect", &generic_vector("schema_plain.tdb")]);
    assert_ok(&o);
    let out = stdout(&o);
    assert!(out.contains("158 bytes, generic tiles"), "{out}");
    assert!(out.contains("generic tile 0 at byte 0: 158 bytes"), "{out}");
    assert!(
        out.contains(
            "header: version 22, persisted_size 106, tile_size 167, datatype CHAR, \
             cell_size 1, encryption_type NO_ENCRYPTION, filter_pipeline_size 18"
        ),
        "{out}"
    );
    assert!(out.contains("pipeline: gzip:1\n"), "{out}");
    assert!(
        out.contains(
            "payload: 106 filtered bytes, 167 unfiltered bytes, ratio 1.58x, unfiltered ok"
        ),
        "{out}"
    );
    assert!(
        out.contains("end at the end of the file (byte 158)"),
        "{out}"
    );

    // Fragment metadata: 27 generic tiles, then the footer.
    let o = tdbf_paths(&[&"inspect", &generic_vector("frag_meta_plain.tdb")]);
    assert_ok(&o);
    let out = stdout(&o);
    assert_eq!(out.matches("unfiltered ok").count(), 27, "{out}");
    assert!(
        out.contains("generic tile 26 at byte 2600: 99 bytes"),
        "{out}"
    );
    assert!(out.contains("27 generic tile(s)"), "{out}");
    assert!(out.contains("27 ok, 0 failed"), "{out}");
    assert!(
        out.contains("fragment metadata footer at byte 2699: 398 bytes"),
        "{out}"
    );

    // --verbose lists the chunks of the 150 050-byte array metadata tile.
    let o = tdbf_paths(&[
        &"inspect",
        &generic_vector("array_meta_plain.tdb"),
        &"--verbose",
    ]);
    assert_ok(&o);
    let out = stdout(&o);
    let originals: Vec<u64> = out
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 4 && f.iter().all(|x| x.parse::<u64>().is_ok()))
                .then(|| f[1].parse().unwrap_or(0))
        })
        .collect();
    assert_eq!(originals, [65536, 65536, 18978], "{out}");
    assert!(out.contains("tile_size 150050"), "{out}");
}

/// Encrypted generic tiles: the structure without a key, decryption with --key (raw string
/// or hex), and clear failures for wrong or unexpected keys.
#[test]
fn inspect_decrypts_generic_tiles_with_key() {
    let frag = generic_vector("frag_meta_aes.tdb");
    let o = tdbf_paths(&[&"inspect", &frag]);
    assert_ok(&o);
    let out = stdout(&o);
    assert!(out.contains("encryption_type AES_256_GCM"), "{out}");
    assert!(out.contains("pipeline: gzip:1,aes_256_gcm\n"), "{out}");
    assert!(out.contains("27 not decrypted"), "{out}");
    assert!(
        out.contains("fragment metadata footer at byte 4994: 398 bytes"),
        "{out}"
    );

    let o = tdbf_paths(&[&"inspect", &frag, &"--key", &GENERIC_KEY]);
    assert_ok(&o);
    let out = stdout(&o);
    assert!(out.contains("27 ok, 0 failed"), "{out}");
    assert!(!out.contains("not decrypted"), "{out}");

    let hex_key: String = GENERIC_KEY.bytes().map(|b| format!("{b:02x}")).collect();
    let o = tdbf_paths(&[
        &"inspect",
        &generic_vector("schema_aes.tdb"),
        &"--key",
        &format!("hex:{hex_key}"),
    ]);
    assert_ok(&o);
    assert!(stdout(&o).contains("unfiltered ok"), "{}", stdout(&o));

    let wrong = GENERIC_KEY.replace('F', "G");
    let o = tdbf_paths(&[&"inspect", &frag, &"--key", &wrong]);
    assert_fails_with(&o, "27 generic tile(s) failed to unfilter");
    assert!(stdout(&o).contains("decryption failed"), "{}", stdout(&o));

    let o = tdbf_paths(&[
        &"inspect",
        &generic_vector("schema_plain.tdb"),
        &"--key",
        &GENERIC_KEY,
    ]);
    assert_fails_with(&o, "failed to unfilter");
    assert!(
        stdout(&o)
            .contains("tile is encrypted with NO_ENCRYPTION but given key is for AES_256_GCM"),
        "{}",
        stdout(&o)
    );

    for bad in ["short", "hex:0123", &format!("{GENERIC_KEY}x")] {
        assert_fails_with(
            &tdbf_paths(&[&"inspect", &frag, &"--key", &bad]),
            "32 bytes",
        );
    }
}

/// Data files keep their behaviour; --key decrypts data tiles unfiltered with --pipeline;
/// broken generic-tile files and misplaced options are reported.
#[test]
fn inspect_generic_tile_errors_and_encrypted_data_files() {
    let dir = scratch("inspect-generic");
    // An encrypted data file of two int32 tiles, written through the library.
    let mut p = spec::parse("byteshuffle,lz4").expect("spec");
    p.set_encryption_key(GENERIC_KEY.as_bytes()).expect("key");
    let cells = int32_cells(30_000);
    let mut file = Vec::new();
    for part in cells.chunks(80_000) {
        let tile = Tile::new(Datatype::Int32, 4, part.to_vec()).expect("tile");
        file.extend(p.filter_tile(&tile).expect("filter"));
    }
    let data = dir.join("a0.tdb");
    std::fs::write(&data, &file).expect("write");
    let args = |key: &str| {
        tdbf_paths(&[
            &"inspect",
            &data,
            &"--type",
            &"int32",
            &"--pipeline",
            &"byteshuffle,lz4",
            &"--key",
            &key,
        ])
    };
    let o = args(GENERIC_KEY);
    assert_ok(&o);
    let out = stdout(&o);
    assert!(out.contains("data file"), "{out}");
    assert!(out.contains("2 ok, 0 failed"), "{out}");
    assert_fails_with(
        &args(&GENERIC_KEY.to_lowercase()),
        "2 tile(s) failed to unfilter",
    );
    // Without --pipeline there is nothing to decrypt with.
    assert_fails_with(
        &tdbf_paths(&[&"inspect", &data, &"--key", &GENERIC_KEY]),
        "--key",
    );
    // The chunk tables are readable without the key.
    let o = tdbf_paths(&[&"inspect", &data]);
    assert_ok(&o);
    assert!(stdout(&o).contains("2 tile(s)"), "{}", stdout(&o));

    // Generic tiles carry their own pipeline: --pipeline / --type are refused.
    let schema = generic_vector("schema_plain.tdb");
    assert_fails_with(
        &tdbf_paths(&[
            &"inspect",
            &schema,
            &"--type",
            &"int32",
            &"--pipeline",
            &"zstd",
        ]),
        "apply to data files only",
    );

    // A truncated schema and trailing junk are reported, not taken for a footer.
    let bytes = std::fs::read(&schema).expect("read");
    let truncated = dir.join("truncated_schema");
    std::fs::write(&truncated, &bytes[..100]).expect("write");
    let o = tdbf_paths(&[&"inspect", &truncated]);
    assert_fails_with(&o, "neither a generic tile nor a fragment metadata footer");
    assert!(
        stderr(&o).contains("persisted_size is 106"),
        "{}",
        stderr(&o)
    );
    let junk = dir.join("junk_schema");
    std::fs::write(&junk, [&bytes[..], b"junk after the tile"].concat()).expect("write");
    let o = tdbf_paths(&[&"inspect", &junk]);
    assert_fails_with(&o, "the 19 bytes at byte 158");
    assert!(stdout(&o).contains("unfiltered ok"), "{}", stdout(&o));
}

/// `--format-version`: SCALE_FLOAT to 2-byte integers then BYTESHUFFLE on FLOAT64 shuffles
/// 8-byte elements at version 19 (TileDB 2.11-2.16) and 2-byte ones at 20+; each tile reads
/// back only at its own version.
#[test]
fn format_version_selects_the_stage_datatypes() {
    let dir = scratch("format-version");
    let raw = dir.join("raw.bin");
    let cells: Vec<u8> = (0..4000)
        .flat_map(|i| (f64::from(i % 300) * 0.5 - 70.0).to_le_bytes())
        .collect();
    std::fs::write(&raw, &cells).expect("write input");
    let spec_text = "scale_float:factor=0.5:byte_width=2,byteshuffle";
    let mut tiles = Vec::new();
    for v in ["19", "22"] {
        let filtered = dir.join(format!("v{v}.tdb"));
        assert_ok(&tdbf_paths(&[
            &"filter",
            &"--filters",
            &spec_text,
            &"--type",
            &"float64",
            &"--format-version",
            &v,
            &raw,
            &filtered,
        ]));
        tiles.push(std::fs::read(&filtered).expect("read tile"));
        for (u, same) in [("19", v == "19"), ("22", v == "22")] {
            let back = dir.join(format!("v{v}-as{u}.bin"));
            assert_ok(&tdbf_paths(&[
                &"unfilter",
                &"--filters",
                &spec_text,
                &"--type",
                &"float64",
                &"--format-version",
                &u,
                &filtered,
                &back,
            ]));
            let got = std::fs::read(&back).expect("read output");
            assert_eq!(got == cells, same, "written at {v}, read at {u}");
        }
    }
    assert_ne!(tiles[0], tiles[1]);
    assert_fails_with(
        &tdbf(&[
            "unfilter",
            "--filters",
            "none",
            "--type",
            "int32",
            "--format-version",
            "0",
            "x",
            "y",
        ]),
        "format version",
    );
}

/// An array of tests/data/cli_json (made by tests/fixtures/make_cli_json_arrays.py).
fn cli_json_array(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("tests/data/cli_json")
        .join(name);
    assert!(path.is_dir(), "fixture array {} missing", path.display());
    path.to_str().expect("UTF-8 path").to_string()
}

/// Runs `tdbf array ARGS…` and parses its stdout as one JSON value.
fn array_json(args: &[&str]) -> serde_json::Value {
    let o = tdbf(&[&["array"], args].concat());
    assert_ok(&o);
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("tdbf array {args:?}: not JSON ({e}):\n{}", stdout(&o)))
}

#[test]
fn array_info_json_escapes_names_keys_and_values() {
    let array = cli_json_array("names");
    let name = "a\"b\\c\nd\te\u{1}f\u{e9}\u{2028}";
    let info = array_json(&["info", &array, "--json"]);
    let schema = &info["schema"];
    assert_eq!(schema["dimensions"][0]["name"], "d\"\\\n", "{schema}");
    let attrs: Vec<&str> = schema["attributes"]
        .as_array()
        .expect("attributes")
        .iter()
        .map(|a| a["name"].as_str().expect("name"))
        .collect();
    assert_eq!(attrs, [name, "s", "f"]);
    // FLOAT32 values keep their own digits (0.1f32, not 0.10000000149011612).
    assert_eq!(schema["attributes"][2]["fill"].as_f64(), Some(0.1));
    let meta = &info["metadata"];
    assert_eq!(
        meta["k\"\\\n\u{2}"],
        serde_json::json!({"type": "STRING_UTF8", "value": "v\"\\\n\u{3}"}),
        "{meta}"
    );
    assert_eq!(
        meta["f32"]["value"],
        serde_json::json!([0.1, "NaN", "inf", "-inf"]),
        "{meta}"
    );
    assert_eq!(meta["i"], serde_json::json!({"type": "INT64", "value": 7}));
    // A key that is not UTF-8 (b"key\xfe"): the invalid byte becomes U+FFFD.
    assert_eq!(
        meta["key\u{fffd}"],
        serde_json::json!({"type": "INT32", "value": 5}),
        "{meta}"
    );
    let keys: Vec<&String> = meta.as_object().expect("metadata object").keys().collect();
    assert_eq!(keys.len(), 4, "{meta}");
    assert_eq!(info["non_empty_domain"], serde_json::json!([[0, 3]]));
    assert_eq!(
        info["fragments"][0]["timestamps"],
        serde_json::json!([1, 1])
    );
    // The text report prints the same names.
    let o = tdbf(&["array", "info", &array]);
    assert_ok(&o);
    assert!(
        stdout(&o).contains(&format!("Attr(name='{name}'")),
        "{}",
        stdout(&o)
    );
}

#[test]
fn array_cat_json_escapes_strings() {
    let array = cli_json_array("names");
    let cat = array_json(&["cat", &array, "--format", "json", "--field", "s"]);
    assert_eq!(
        cat,
        serde_json::json!({
            "cell_count": 4,
            "fields": {"s": ["x\"y", "back\\slash", "nl\n", "\u{0}z"]},
            "validity": {}
        })
    );
    let name = "a\"b\\c\nd\te\u{1}f\u{e9}\u{2028}";
    let cat = array_json(&[
        "cat", &array, "--format", "json", "--field", name, "--field", "f",
    ]);
    assert_eq!(
        cat["fields"][name],
        serde_json::json!([0, 1, 2, 3]),
        "{cat}"
    );
    let f: Vec<f32> = cat["fields"]["f"]
        .as_array()
        .expect("f")
        .iter()
        .map(|v| v.as_f64().expect("number") as f32)
        .collect();
    assert_eq!(f, [0.1f32, 0.2, 1e-7, 3.4e38]);
}

/// TileDB's C API accepts a var-size attribute's fill value of any size; a 2-byte fill of an
/// INT32 attribute is no whole value (the format! code printed `"fill":,`, which is no JSON).
/// Also an attribute name that is not UTF-8.
#[test]
fn array_info_json_of_a_fill_shorter_than_one_value() {
    let array = cli_json_array("c_api");
    let info = array_json(&["info", &array, "--json"]);
    let attrs = &info["schema"]["attributes"];
    assert_eq!(attrs[0]["name"], "v", "{attrs}");
    assert_eq!(attrs[0]["cell_val_num"], "var", "{attrs}");
    assert!(attrs[0]["fill"].is_null(), "{attrs}");
    assert_eq!(attrs[1]["name"], "bad\u{fffd}name", "{attrs}");
    assert_eq!(attrs[1]["fill"], i32::MIN, "{attrs}");
    assert_eq!(info["fragments"], serde_json::json!([]));
    assert!(info["non_empty_domain"].is_null());
}
