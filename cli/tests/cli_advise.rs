//! `tdbf advise` on generated data whose best pipelines are known: constant cells, sorted
//! timestamps, noise and smooth floats with an allowed error.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes `cells` to a scratch file and returns its path.
fn scratch_file(name: &str, cells: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tdbf-advise");
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    let path = dir.join(name);
    std::fs::write(&path, cells).expect("write cells");
    path
}

/// Runs `tdbf advise --json` and parses its report.
fn advise(file: &Path, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_tdbf"))
        .arg("advise")
        .args(args)
        .args([
            "--json",
            "--sample-bytes",
            "256KiB",
            "--tile-bytes",
            "64KiB",
        ])
        .args(["--repeat", "1", "--time-budget", "10m"])
        .arg(file)
        .output()
        .expect("run tdbf");
    assert!(
        out.status.success(),
        "tdbf advise failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("advise --json prints one JSON object")
}

fn results(report: &Value) -> &Vec<Value> {
    report["results"].as_array().expect("results array")
}

fn ratio_of(report: &Value, spec: &str) -> f64 {
    results(report)
        .iter()
        .find(|r| r["spec"] == spec)
        .and_then(|r| r["ratio"].as_f64())
        .unwrap_or_else(|| panic!("{spec} was not measured: {report}"))
}

/// A deterministic pseudo-random sequence (xorshift).
fn noise(n: usize) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
fn constant_cells_compress_enormously() {
    let cells: Vec<u8> = (0..131072).flat_map(|_| 7i64.to_le_bytes()).collect();
    let file = scratch_file("constant.bin", &cells);
    let report = advise(&file, &["--type", "int64", "--goal", "ratio"]);
    let best = &results(&report)[0];
    assert!(best["ratio"].as_f64().unwrap() > 100.0, "{best}");
    assert_eq!(report["sample_bytes"], 256 << 10);
    assert_eq!(
        report["untried"], 0,
        "every candidate runs within the budget"
    );
}

#[test]
fn sorted_timestamps_want_a_delta() {
    let jitter = noise(131072);
    let mut t = 1_700_000_000_000i64;
    let cells: Vec<u8> = jitter
        .iter()
        .flat_map(|j| {
            t += 1000 + i64::from(j % 4);
            t.to_le_bytes()
        })
        .collect();
    let file = scratch_file("timestamps.bin", &cells);
    let report = advise(&file, &["--type", "int64", "--goal", "ratio"]);
    let best = &results(&report)[0];
    let spec = best["spec"].as_str().unwrap();
    assert!(spec.contains("delta"), "best for timestamps: {spec}");
    let plain = ratio_of(&report, "zstd:-1");
    assert!(
        best["ratio"].as_f64().unwrap() > 2.0 * plain,
        "{spec} should beat plain zstd ({plain}x) by far: {best}"
    );
    let py = best["tiledb_py"].as_str().unwrap();
    assert!(
        py.starts_with("tiledb.FilterList([") && py.contains("DeltaFilter"),
        "{py}"
    );
}

#[test]
fn noise_does_not_compress_and_speed_picks_no_filter() {
    let file = scratch_file("noise.bin", &noise(1 << 20));
    let report = advise(&file, &["--type", "uint64", "--goal", "speed"]);
    assert_eq!(results(&report)[0]["spec"], "none", "{report}");
    let report = advise(&file, &["--type", "uint64", "--goal", "ratio"]);
    let best = results(&report)[0]["ratio"].as_f64().unwrap();
    assert!(best < 1.01, "noise compressed {best}x");
    // POSITIVE_DELTA refuses unsorted cells: reported as not applicable, not as a result.
    let refused = report["not_applicable"].as_array().unwrap();
    assert!(
        refused
            .iter()
            .any(|r| r["spec"].as_str().unwrap().contains("positive_delta")),
        "{report}"
    );
}

#[test]
fn allowed_error_brings_in_scale_float() {
    let wiggle = noise(131072);
    let cells: Vec<u8> = wiggle
        .iter()
        .enumerate()
        .flat_map(|(i, w)| (20.0 + (i as f64 / 1000.0).sin() + f64::from(*w) * 1e-6).to_le_bytes())
        .collect();
    let file = scratch_file("floats.bin", &cells);
    let args = ["--type", "float64", "--goal", "ratio"];
    let lossless = advise(&file, &args);
    assert!(results(&lossless).iter().all(|r| r["lossy"] == false));
    let lossy = advise(&file, &[&args[..], &["--max-error", "0.001"]].concat());
    let best = &results(&lossy)[0];
    assert_eq!(best["lossy"], true, "{best}");
    assert!(
        best["spec"]
            .as_str()
            .unwrap()
            .starts_with("scale_float:factor=0.001")
    );
    assert!(
        best["ratio"].as_f64().unwrap() > 2.0 * results(&lossless)[0]["ratio"].as_f64().unwrap()
    );
}

#[test]
fn bad_requests_are_refused_clearly() {
    let file = scratch_file("ints.bin", &[0u8; 64]);
    let out = Command::new(env!("CARGO_BIN_EXE_tdbf"))
        .args(["advise", "--type", "int64", "--max-error", "0.1"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--max-error applies to float32/float64"),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_tdbf"))
        .args(["advise", "--type", "int64", "--time-budget", "soon"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a duration"));
}
