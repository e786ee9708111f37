//! Differential tests against the C zlib (through flate2), and a speed comparison.

use super::*;
use crate::codecs::test_data::*;
use flate2::{Compress, Compression, FlushCompress, Status};

/// What zlib writes: `deflateInit(level)` + one `deflate(Z_FINISH)` with ample output space.
fn reference(level: u32, src: &[u8]) -> Vec<u8> {
    let mut c = Compress::new(Compression::new(level), true);
    let mut out = Vec::with_capacity(src.len() + src.len() / 8 + 1024);
    let st = c
        .compress_vec(src, &mut out, FlushCompress::Finish)
        .unwrap();
    assert_eq!(st, Status::StreamEnd);
    out
}

fn repeats(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    let unit = random_bytes(1 + r.below(600) as usize, seed ^ 77);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        out.extend_from_slice(&unit);
        if r.below(4) == 0 {
            out.push(r.next() as u8);
        }
    }
    out.truncate(n);
    out
}

/// Literals and copies at random distances and lengths.
fn structured(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    let alphabet = 1 + r.below(256);
    let max_dist = [4u64, 64, 1000, 5000, 40000, 70000][r.below(6) as usize];
    let max_len = [4u64, 10, 40, 300, 1000][r.below(5) as usize];
    let lit_p = r.below(100);
    let mut out: Vec<u8> = Vec::with_capacity(n + 1000);
    while out.len() < n {
        if out.is_empty() || r.below(100) < lit_p {
            out.push(r.below(alphabet) as u8);
        } else {
            let d = 1 + r.below(max_dist.min(out.len() as u64)) as usize;
            let l = 1 + r.below(max_len) as usize;
            for _ in 0..l {
                let b = out[out.len() - d];
                out.push(b);
            }
        }
    }
    out.truncate(n);
    out
}

fn check(level: u32, src: &[u8], what: &str) {
    let want = reference(level, src);
    let mut got = Vec::new();
    zlib_compress(level, src, &mut got);
    if got != want {
        let at = got.iter().zip(&want).position(|(a, b)| a != b);
        panic!(
            "level {level}, {what} ({} bytes): {} bytes vs zlib {}, first difference at {at:?}",
            src.len(),
            got.len(),
            want.len()
        );
    }
}

fn check_all_levels(src: &[u8], what: &str) {
    for level in 0..=9 {
        check(level, src, what);
    }
}

/// Debug builds (unoptimised Rust and C) run a lighter version of the larger tests.
const LIGHT: bool = cfg!(debug_assertions);

/// All levels, or in debug builds one of each kind (stored, fast, lazy, default, best).
fn check_levels(src: &[u8], what: &str) {
    if LIGHT {
        for level in [0, 1, 4, 6, 9] {
            check(level, src, what);
        }
    } else {
        check_all_levels(src, what);
    }
}

#[test]
fn adler32_matches_zlib_reference() {
    let data = random_bytes(100_000, 5);
    for n in [0usize, 1, 15, 16, 17, 5551, 5552, 5553, 11104, 100_000] {
        let mut a = 1u32;
        let mut b = 0u32;
        for &x in &data[..n] {
            a = (a + x as u32) % 65521;
            b = (b + a) % 65521;
        }
        assert_eq!(adler32(&data[..n]), (b << 16) | a, "n = {n}");
    }
    assert_eq!(adler32(&[0xff; 100_000]), {
        let (mut a, mut b) = (1u32, 0u32);
        for _ in 0..100_000 {
            a = (a + 255) % 65521;
            b = (b + a) % 65521;
        }
        (b << 16) | a
    });
}

#[test]
fn tiny_inputs() {
    for n in [0usize, 1, 2, 3, 4, 5, 257, 258, 259, 262, 263] {
        check_all_levels(&text(n, 3), "text");
        check_all_levels(&vec![0u8; n], "zeros");
        check_all_levels(&random_bytes(n, 4), "random");
    }
}

#[test]
fn data_sets_64k() {
    let n = 65536;
    check_levels(&vec![0u8; n], "zeros");
    check_levels(&random_bytes(n, 1), "random");
    check_levels(&text(n, 2), "text");
    check_levels(&timestamps(n, 3), "timestamps");
    check_levels(&random_walk(n, 4), "random walk");
    check_levels(&small_ints(n, 5), "small ints");
    check_levels(&repeats(n, 6), "repeats");
}

#[test]
fn window_sizes() {
    for (i, n) in [32767usize, 32768, 32769, 65535, 65536, 65537, 100_000]
        .into_iter()
        .enumerate()
    {
        let s = i as u64;
        let sets = [
            (timestamps(n, 10 + s), "timestamps"),
            (text(n, 20 + s), "text"),
            (structured(n, 30 + s), "structured"),
            (small_ints(n, 40 + s), "small ints"),
        ];
        for (j, (data, what)) in sets.iter().enumerate() {
            if LIGHT {
                // Level 6 and one more, rotating through 1–9.
                check(6, data, what);
                check(1 + ((i * 4 + j) % 9) as u32, data, what);
            } else {
                check_all_levels(data, what);
            }
        }
    }
}

#[test]
fn large_inputs() {
    let sizes: &[usize] = if LIGHT {
        &[300_000]
    } else {
        &[300_000, 1_000_000]
    };
    let levels: &[u32] = if LIGHT { &[6] } else { &[1, 6, 9] };
    for &n in sizes {
        for &level in levels {
            check(level, &timestamps(n, 50), "timestamps");
            check(level, &structured(n, 51), "structured");
        }
    }
    if !LIGHT {
        check(6, &random_walk(3_000_000, 52), "random walk");
        check(6, &text(3_000_000, 53), "text");
    }
}

/// Bytes with geometric frequencies (deep Huffman trees: exercises zlib's length-overflow
/// repair in the literal and code-length trees).
fn skewed(n: usize, seed: u64, ratio_pct: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    (0..n)
        .map(|_| {
            let mut k = 0u8;
            while k < 255 && r.below(100) < ratio_pct {
                k += 1;
            }
            k.wrapping_mul(37)
        })
        .collect()
}

#[test]
fn skewed_frequencies() {
    for (i, pct) in [50u64, 60, 70, 80, 90].into_iter().enumerate() {
        let sizes: &[usize] = if LIGHT {
            &[5000, 20_000]
        } else {
            &[5000, 20_000, 70_000]
        };
        for &n in sizes {
            check_levels(&skewed(n, 70 + i as u64, pct), "skewed");
        }
    }
    assert!(super::trees::OVERFLOWS.load(std::sync::atomic::Ordering::Relaxed) > 0);
}

#[test]
fn structured_random() {
    let mut r = Rng(0x1234_5678);
    let cases = if LIGHT { 60 } else { 300 };
    for case in 0..cases {
        let n = match case % 4 {
            0 => r.below(300) as usize,
            1 => r.below(5000) as usize,
            2 => r.below(70_000) as usize,
            _ => 60_000 + r.below(80_000) as usize,
        };
        let data = structured(n, 1000 + case);
        let level = 1 + (case % 9) as u32;
        check(level, &data, &format!("structured case {case}"));
    }
}

/// Every level on 0.3, 1 and 3 MB of every kind of data, then 400 random structured inputs
/// of up to 400 kB at every level: run in full by the release test run of the test command
/// (`cargo test --release`); debug builds run 0.3 MB and 40 inputs at five levels.
#[test]
fn exhaustive_large() {
    let sizes: &[usize] = if LIGHT {
        &[300_000]
    } else {
        &[300_000, 1_000_000, 3_000_000]
    };
    for &n in sizes {
        check_levels(&timestamps(n, 60), "timestamps");
        check_levels(&random_walk(n, 61), "random walk");
        check_levels(&small_ints(n, 62), "small ints");
        check_levels(&text(n, 63), "text");
        check_levels(&structured(n, 64), "structured");
        check_levels(&repeats(n, 65), "repeats");
        check_levels(&random_bytes(n, 66), "random");
        check_levels(&vec![7u8; n], "constant");
    }
    let mut r = Rng(0xdead_beef);
    let cases = if LIGHT { 40 } else { 400 };
    for case in 0..cases {
        let n = r.below(400_000) as usize;
        let data = structured(n, 5000 + case);
        check_levels(&data, &format!("structured case {case}"));
    }
}

#[test]
#[ignore]
fn speed_vs_zlib() {
    use std::time::Instant;
    let total = 64 << 20;
    let chunk = 64 << 10;
    let sets: [(&str, Vec<u8>); 3] = [
        ("timestamps i64", timestamps(total, 1)),
        ("random walk f64", random_walk(total, 2)),
        ("small-range i32", small_ints(total, 3)),
    ];
    for (name, data) in &sets {
        for level in [1u32, 6] {
            let mut enc = ZlibEncoder::new();
            let mut out = Vec::with_capacity(2 * chunk);
            let mut ours = 0usize;
            let t = Instant::now();
            for c in data.chunks(chunk) {
                out.clear();
                enc.compress(level, c, &mut out);
                ours += out.len();
            }
            let t_ours = t.elapsed().as_secs_f64();
            let mut z = Compress::new(Compression::new(level), true);
            let mut zout = Vec::with_capacity(2 * chunk);
            let mut theirs = 0usize;
            let t = Instant::now();
            for c in data.chunks(chunk) {
                z.reset();
                zout.clear();
                z.compress_vec(c, &mut zout, FlushCompress::Finish).unwrap();
                theirs += zout.len();
            }
            let t_z = t.elapsed().as_secs_f64();
            let mb = total as f64 / (1 << 20) as f64;
            println!(
                "{name:16} level {level}: ours {:7.1} MiB/s, zlib {:7.1} MiB/s, x{:.2} \
                 (sizes {ours} / {theirs})",
                mb / t_ours,
                mb / t_z,
                t_z / t_ours
            );
            assert_eq!(ours, theirs);
        }
    }
}

/// Our writer alone on 16 MiB (for `perf`): `DEFLATE_LEVEL`, `DEFLATE_SET` = ts|walk|small.
#[test]
#[ignore]
fn profile_ours() {
    let level: u32 = std::env::var("DEFLATE_LEVEL").map_or(6, |v| v.parse().unwrap());
    let set = std::env::var("DEFLATE_SET").unwrap_or_default();
    let total = 16 << 20;
    let data = match set.as_str() {
        "walk" => random_walk(total, 2),
        "small" => small_ints(total, 3),
        _ => timestamps(total, 1),
    };
    let mut enc = ZlibEncoder::new();
    let mut out = Vec::new();
    let t = std::time::Instant::now();
    for c in data.chunks(65536) {
        out.clear();
        enc.compress(level, c, &mut out);
    }
    println!("{:.1} MiB/s", 16.0 / t.elapsed().as_secs_f64());
}
