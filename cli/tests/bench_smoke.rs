//! Smoke tests of `tdbf bench`: it runs on small generated files, verifies every round trip
//! and prints the documented JSON fields. Correctness only; speeds are not checked.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `tdbf bench` with `args` followed by the input file.
fn bench(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tdbf"))
        .arg("bench")
        .args(args)
        .arg(file)
        .output()
        .expect("run tdbf")
}

/// Asserts success and parses stdout as one JSON object.
fn json_of(o: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "tdbf bench failed ({:?}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        o.status.code()
    );
    assert_eq!(stdout.lines().count(), 1, "one JSON line: {stdout}");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("bad JSON ({e}): {stdout}"))
}

/// Writes `bytes` to a fresh file in a per-test scratch directory.
fn scratch_file(test: &str, name: &str, bytes: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("tdbf-bench-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write input");
    path
}

/// Sorted int64 timestamps (1 ms ticks with jitter): `count` cells.
fn timestamps(count: usize) -> Vec<u8> {
    let mut state = 7u64;
    let mut t = 1_700_000_000_000_000i64;
    (0..count)
        .flat_map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            t += 950 + ((state >> 33) % 101) as i64;
            t.to_le_bytes()
        })
        .collect()
}

/// Small-range int32 values (0..100), unsorted.
fn levels(count: usize) -> Vec<u8> {
    let mut state = 11u32;
    (0..count)
        .flat_map(|_| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
            ((state >> 16) as i32 % 100).to_le_bytes()
        })
        .collect()
}

fn u64_field(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("'{key}' missing or not an integer in {v}"))
}

fn f64_field(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("'{key}' missing or not a number in {v}"))
}

fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("'{key}' missing or not a string in {v}"))
}

/// Checks the fields every pipeline report carries.
fn check_report(v: &Value, spec: &str, datatype: &str, input: usize, threads: u64, tiles: u64) {
    assert_eq!(str_field(v, "spec"), spec);
    assert_eq!(str_field(v, "type"), datatype);
    assert_eq!(u64_field(v, "input_bytes"), input as u64);
    assert_eq!(u64_field(v, "threads"), threads);
    assert_eq!(u64_field(v, "tiles"), tiles);
    assert_eq!(u64_field(v, "repeat"), 1);
    assert_eq!(str_field(v, "round_trip"), "ok");
    assert_eq!(str_field(v, "outputs"), "streamed");
    assert!(u64_field(v, "filtered_bytes") > 0);
    for key in ["filter_mib_s", "unfilter_mib_s", "ratio"] {
        let x = f64_field(v, key);
        assert!(x.is_finite() && x > 0.0, "{key} = {x} in {v}");
    }
    assert_eq!(v["filter_seconds"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["unfilter_seconds"].as_array().map(Vec::len), Some(1));
}

#[test]
fn pipelines_round_trip_and_report_json() {
    let data = timestamps(40_000); // 320,000 bytes: 5 tiles of 64 KiB
    let file = scratch_file("pipelines", "ts.bin", &data);
    for spec in [
        "none",
        "bitshuffle,lz4",
        "byteshuffle,zstd:3",
        "positive_delta,bit_width_reduction,zstd",
        "double_delta",
        "rle",
        "checksum_md5,gzip",
        "bzip2",
    ] {
        for threads in ["1", "2"] {
            let o = bench(
                &[
                    "--filters",
                    spec,
                    "--type",
                    "int64",
                    "--tile-bytes",
                    "64K",
                    "--threads",
                    threads,
                    "--repeat",
                    "1",
                    "--json",
                ],
                &file,
            );
            let v = json_of(&o);
            check_report(&v, spec, "int64", data.len(), threads.parse().unwrap(), 5);
            let mode = str_field(&v, "mode");
            assert_eq!(mode, if threads == "1" { "serial" } else { "tiles" }, "{v}");
            // RLE and checksums only grow unique timestamps.
            if !["none", "rle"].contains(&spec) && !spec.starts_with("checksum") {
                assert!(
                    u64_field(&v, "filtered_bytes") < data.len() as u64,
                    "{spec} compresses timestamps: {v}"
                );
            }
        }
    }
}

#[test]
fn fewer_tiles_than_threads_use_chunk_parallelism() {
    let data = levels(100_000); // 400,000 bytes: one tile of 7 chunks
    let file = scratch_file("chunks", "levels.bin", &data);
    let o = bench(
        &[
            "--filters",
            "byteshuffle,zstd",
            "--type",
            "int32",
            "--threads",
            "2",
            "--repeat",
            "1",
            "--json",
        ],
        &file,
    );
    let v = json_of(&o);
    check_report(&v, "byteshuffle,zstd", "int32", data.len(), 2, 1);
    assert_eq!(str_field(&v, "mode"), "chunks");
    assert_eq!(str_field(&v, "pipeline"), "byteshuffle,zstd:-1");

    let o = bench(
        &[
            "--filters",
            "bitshuffle",
            "--type",
            "int32",
            "--threads",
            "2",
            "--tile-parallel",
            "--repeat",
            "1",
            "--json",
        ],
        &file,
    );
    assert_eq!(str_field(&json_of(&o), "mode"), "tiles");

    // --outputs retained keeps every output of a run, --outputs into writes into caller
    // buffers; both verify every run byte for byte.
    for outputs in ["retained", "into"] {
        for (threads, tile_bytes, mode) in [("2", "1M", "chunks"), ("2", "64K", "tiles")] {
            let o = bench(
                &[
                    "--filters",
                    "bitshuffle,zstd",
                    "--type",
                    "int32",
                    "--threads",
                    threads,
                    "--tile-bytes",
                    tile_bytes,
                    "--repeat",
                    "2",
                    "--outputs",
                    outputs,
                    "--json",
                ],
                &file,
            );
            let v = json_of(&o);
            assert_eq!(str_field(&v, "outputs"), outputs);
            assert_eq!(str_field(&v, "mode"), mode);
            assert_eq!(u64_field(&v, "repeat"), 2);
            assert_eq!(u64_field(&v, "input_bytes"), data.len() as u64);
        }
    }
}

#[test]
fn memcpy_baseline_reports_bandwidth() {
    let data = levels(50_000);
    let file = scratch_file("memcpy", "levels.bin", &data);
    for args in [
        &["--memcpy", "--repeat", "1", "--json"][..],
        &[
            "--baseline",
            "memcpy",
            "--threads",
            "2",
            "--repeat",
            "1",
            "--json",
        ][..],
        &[
            "--memcpy",
            "--type",
            "int32",
            "--tile-bytes",
            "16K",
            "--threads",
            "2",
            "--repeat",
            "1",
            "--json",
        ][..],
        &[
            "--memcpy",
            "--outputs",
            "into",
            "--threads",
            "2",
            "--repeat",
            "2",
            "--json",
        ][..],
        &[
            "--memcpy",
            "--outputs",
            "retained",
            "--threads",
            "1",
            "--repeat",
            "2",
            "--json",
        ][..],
        &[
            "--memcpy",
            "--outputs",
            "retained",
            "--threads",
            "2",
            "--tile-bytes",
            "16M",
            "--json",
        ][..],
    ] {
        let v = json_of(&bench(args, &file));
        assert_eq!(str_field(&v, "baseline"), "memcpy");
        assert_eq!(u64_field(&v, "input_bytes"), data.len() as u64);
        assert_eq!(u64_field(&v, "filtered_bytes"), data.len() as u64);
        assert!(f64_field(&v, "memcpy_mib_s") > 0.0, "{v}");
    }
}

#[test]
fn text_report_and_errors() {
    let data = timestamps(10_000);
    let file = scratch_file("text", "ts.bin", &data);
    let o = bench(
        &[
            "--filters",
            "zstd",
            "--type",
            "int64",
            "--repeat",
            "2",
            "--threads",
            "1",
        ],
        &file,
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    for needle in ["filter:", "unfilter:", "MiB/s", "verified", "median of 2"] {
        assert!(out.contains(needle), "'{needle}' in {out}");
    }

    let fail = |args: &[&str], needle: &str| {
        let o = bench(args, &file);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.starts_with("tdbf: "), "{err}");
        assert!(err.contains(needle), "'{needle}' in {err}");
        assert!(!err.contains("panicked"), "{err}");
    };
    fail(
        &["--filters", "zstd,foo", "--type", "int64"],
        "unknown filter",
    );
    fail(&["--filters", "double_delta", "--type", "float64"], "float");
    fail(
        &["--filters", "zstd", "--type", "int64", "--repeat", "0"],
        "0",
    );
    fail(&["--type", "int64"], "--filters");
    fail(
        &["--filters", "zstd", "--type", "int32", "--cell-size", "6"],
        "cell size",
    );
    // Unsorted data: POSITIVE_DELTA refuses it on write.
    let unsorted = scratch_file("unsorted", "levels.bin", &levels(1000));
    let o = bench(
        &[
            "--filters",
            "positive_delta",
            "--type",
            "int32",
            "--repeat",
            "1",
        ],
        &unsorted,
    );
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("tile 0"), "{err}");
    // A file that is not a whole number of cells.
    let odd = scratch_file("odd", "odd.bin", &[1, 2, 3]);
    let o = bench(&["--filters", "none", "--type", "int32"], &odd);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("whole number"));
}

#[test]
fn bare_codec_times_the_compressor_on_the_pipeline_parts() {
    let path = scratch_file("bare", "ts.bin", &timestamps(40_000));
    for spec in [
        "zstd:3",
        "byteshuffle,zstd",
        "bitshuffle,lz4",
        "gzip:6",
        "bzip2:9",
    ] {
        for threads in ["1", "2"] {
            let args = [
                "--filters",
                spec,
                "--type",
                "int64",
                "--threads",
                threads,
                "--repeat",
                "1",
                "--json",
            ];
            let pipe = json_of(&bench(&args, &path));
            let bare = json_of(&bench(&[&args[..], &["--bare-codec"]].concat(), &path));
            assert!(str_field(&bare, "spec").starts_with("bare "), "{bare}");
            assert_eq!(u64_field(&bare, "input_bytes"), 320_000);
            // The bare codec's output is the pipeline's minus the tile and chunk headers.
            let (b, p) = (
                u64_field(&bare, "filtered_bytes"),
                u64_field(&pipe, "filtered_bytes"),
            );
            assert!(
                b > 0 && b < p && p - b < 1000,
                "{spec}: bare {b} vs pipeline {p}"
            );
            assert!(f64_field(&bare, "filter_mib_s") > 0.0);
            assert!(f64_field(&bare, "unfilter_mib_s") > 0.0);
        }
    }
    let o = bench(
        &[
            "--filters",
            "byteshuffle",
            "--type",
            "int64",
            "--bare-codec",
        ],
        &path,
    );
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("needs a pipeline ending in"),
        "{o:?}"
    );
}
