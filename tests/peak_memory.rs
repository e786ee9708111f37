//! Peak memory of filtering and unfiltering one large tile, per pipeline, at 1 and 2 threads.
//!
//! Each case runs in a fresh child process (this test binary re-executed), so that thread
//! pools, per-thread scratch buffers and codec contexts are created inside the measurement.
//! The child builds the input tile, resets the peak resident set (`VmHWM`, by writing 5 to
//! `/proc/self/clear_refs`), notes the current resident set, and runs the pipeline; what the
//! peak grew by is the memory the call used beyond its input. It must stay within the output
//! plus a few chunks per thread (issue: "peak memory ≤ input + output + a few chunks per
//! thread"). Linux only; elsewhere the test says so and passes.

use tdbfilter::{Datatype, Tile, pipeline::spec};

/// The tile: 8 MiB (128 chunks of 64 KiB) of sorted int64 timestamps with jitter.
const TILE_BYTES: usize = 8 << 20;
const CHUNK: usize = 64 << 10;
/// What "a few chunks" allows per thread: working buffers, codec contexts, thread stacks.
const CHUNKS_PER_THREAD: usize = 16;
/// libbzip2's own work arrays for one block (a 64 KiB chunk touches about 0.8 MiB of them),
/// per thread compressing; TileDB's writer needs the same.
const BZIP2_STATE: usize = 1 << 20;

const PIPELINES: &[&str] = &[
    "none",
    "byteshuffle",
    "bitshuffle",
    "zstd",
    "byteshuffle,zstd",
    "bitshuffle,lz4",
    "gzip",
    "bzip2",
    "rle",
    "double_delta",
    "positive_delta,bit_width_reduction,zstd",
    "checksum_md5",
    "checksum_sha256",
];

fn tile_data() -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut t = 1_700_000_000_000_000i64;
    let mut out = Vec::with_capacity(TILE_BYTES);
    for _ in 0..TILE_BYTES / 8 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        t += 950 + (x % 101) as i64;
        out.extend_from_slice(&t.to_le_bytes());
    }
    out
}

#[cfg(target_os = "linux")]
fn status_kib(field: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

/// Runs `f` and returns its result with the bytes the peak resident set grew by.
#[cfg(target_os = "linux")]
fn peak_growth<T>(f: impl FnOnce() -> T) -> (T, usize) {
    std::fs::write("/proc/self/clear_refs", "5").expect("reset VmHWM");
    let base = status_kib("VmRSS:");
    let r = f();
    let peak = status_kib("VmHWM:");
    (r, peak.saturating_sub(base) * 1024)
}

/// The child side: measures one case and prints `RESULT filtered extra_fwd extra_rev`.
#[cfg(target_os = "linux")]
fn child(spec_text: &str, threads: usize) {
    let mut p = spec::parse(spec_text).expect("spec");
    p.set_threads(threads);
    let tile = Tile::new(Datatype::Int64, 8, tile_data()).expect("tile");
    let (filtered, fwd) = peak_growth(|| p.filter_tile(&tile).expect("filter"));
    let (back, rev) = peak_growth(|| {
        p.unfilter_tile(&filtered, Datatype::Int64, 8)
            .expect("unfilter")
    });
    assert!(back.data() == tile.data(), "round trip");
    println!("RESULT {} {fwd} {rev}", filtered.len());
}

#[cfg(target_os = "linux")]
#[test]
fn peak_memory_within_output_plus_a_few_chunks_per_thread() {
    if let Ok(case) = std::env::var("TDBFILTER_PEAK_CASE") {
        let (spec_text, threads) = case.rsplit_once('@').expect("case");
        child(spec_text, threads.parse().expect("threads"));
        return;
    }
    let exe = std::env::current_exe().expect("test binary");
    let mut failures = Vec::new();
    println!(
        "{:<42} {:>3} {:>10} {:>12} {:>12} {:>9}",
        "pipeline", "thr", "filtered", "fwd extra", "rev extra", "allowed"
    );
    for spec_text in PIPELINES {
        for threads in [1usize, 2] {
            let out = std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "peak_memory_within_output_plus_a_few_chunks_per_thread",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env("TDBFILTER_PEAK_CASE", format!("{spec_text}@{threads}"))
                .output()
                .expect("run child");
            let stdout = String::from_utf8_lossy(&out.stdout);
            let line = stdout
                .lines()
                .find_map(|l| l.split_once("RESULT ").map(|(_, r)| r.trim()))
                .unwrap_or_else(|| {
                    panic!(
                        "{spec_text}@{threads}: no result\n{stdout}\n{}",
                        String::from_utf8_lossy(&out.stderr)
                    )
                });
            let v: Vec<usize> = line.split(' ').map(|x| x.parse().unwrap()).collect();
            let (filtered, fwd, rev) = (v[0], v[1], v[2]);
            let codec = if spec_text.contains("bzip2") {
                BZIP2_STATE
            } else {
                0
            };
            let slack = threads * (CHUNKS_PER_THREAD * CHUNK + codec);
            // Forward holds the filtered output; reverse the unfiltered one.
            let (fwd_allowed, rev_allowed) = (filtered + slack, TILE_BYTES + slack);
            println!(
                "{spec_text:<42} {threads:>3} {filtered:>10} {:>8} KiB {:>8} KiB {:>5} KiB",
                fwd / 1024,
                rev / 1024,
                slack / 1024
            );
            if fwd > fwd_allowed || rev > rev_allowed {
                failures.push(format!(
                    "{spec_text} at {threads} threads: filter used {fwd} bytes (allowed {fwd_allowed}), \
                     unfilter {rev} (allowed {rev_allowed})"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[cfg(not(target_os = "linux"))]
#[test]
fn peak_memory_within_output_plus_a_few_chunks_per_thread() {
    eprintln!("peak memory is measured through /proc on Linux only; skipped");
}
