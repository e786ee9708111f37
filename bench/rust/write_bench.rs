//! The tdbfilter side of `bench/compare_writes.py`: writes one fragment into an existing
//! array from cells loaded into memory before the clock starts, and prints one JSON line.
//!
//! ```text
//! write_bench ARRAY --layout row|unordered --threads N --field NAME=FILE ... [--offsets NAME=FILE]
//! write_bench ARRAY --small K --layout row|unordered
//! ```
//!
//! Big writes: every `--field` file (raw little-endian cells; `--offsets`: u64 offsets of a
//! var-size field) is read into memory, the peak-RSS mark is reset (`/proc/self/clear_refs`),
//! then the array is opened, the cells handed over (no copy), submitted and committed.
//! Prints `{"seconds", "peak", "input"}`: wall time of open + write + commit, the RSS high-water
//! mark minus the RSS after loading, and the bytes loaded. Small writes (`--small K`): K
//! fragments of 16 cells each (dense: the int64 attribute `a` of cells 16k..16k+15; sparse: 16
//! cells of int64 `x`, `y`, `a`), each opened, written and committed; prints the median and
//! 90th percentile latency.

use std::path::Path;
use std::time::Instant;
use tdbfilter::array::{WriteLayout, Writer};
use tdbfilter::storage::StorageConfig;

/// A path as the writer's URI.
fn path_str(path: &Path) -> tdbfilter::Result<&str> {
    path.to_str()
        .ok_or_else(|| tdbfilter::Error::invalid(format!("{}: not UTF-8", path.display())))
}

/// A field of `/proc/self/status` in bytes.
fn status(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn fail(msg: String) -> ! {
    eprintln!("write_bench: {msg}");
    std::process::exit(1)
}

fn le_bytes(values: &[i64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Reads a file of u64 values straight into a `Vec<u64>` (no second copy in memory).
fn read_u64s(path: &str) -> Vec<u64> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    let len = f.metadata().map_or(0, |m| m.len()) as usize;
    let mut out = Vec::with_capacity(len / 8);
    let mut buf = vec![0u8; 1 << 20];
    let mut rest = Vec::new();
    loop {
        let n = f
            .read(&mut buf)
            .unwrap_or_else(|e| fail(format!("{path}: {e}")));
        if n == 0 {
            break;
        }
        rest.extend_from_slice(&buf[..n]);
        let whole = rest.len() / 8 * 8;
        out.extend(
            rest[..whole]
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))),
        );
        rest.drain(..whole);
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut array = None;
    let mut layout = WriteLayout::RowMajor;
    let mut threads = 0usize;
    let mut fields: Vec<(String, String)> = Vec::new();
    let mut offsets: Vec<(String, String)> = Vec::new();
    let mut small = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .unwrap_or_else(|| fail(format!("{a} needs a value")))
        };
        let pair = |v: String| -> (String, String) {
            v.split_once('=')
                .map(|(n, f)| (n.to_string(), f.to_string()))
                .unwrap_or_else(|| fail(format!("'{v}' is not NAME=FILE")))
        };
        match a.as_str() {
            "--layout" => {
                layout = match value().as_str() {
                    "row" => WriteLayout::RowMajor,
                    "unordered" => WriteLayout::Unordered,
                    other => fail(format!("unknown layout {other}")),
                }
            }
            "--threads" => threads = value().parse().unwrap_or_else(|e| fail(format!("{e}"))),
            "--field" => fields.push(pair(value())),
            "--offsets" => offsets.push(pair(value())),
            "--small" => {
                small = Some(
                    value()
                        .parse::<usize>()
                        .unwrap_or_else(|e| fail(format!("{e}"))),
                )
            }
            p if array.is_none() && !p.starts_with("--") => array = Some(p.to_string()),
            other => fail(format!("unknown argument {other}")),
        }
    }
    let array = array.unwrap_or_else(|| fail("no array given".into()));
    let path = Path::new(&array);
    let result = match small {
        Some(k) => small_writes(path, layout, threads, k),
        None => big_write(path, layout, threads, &fields, &offsets),
    };
    match result {
        Ok(json) => println!("{json}"),
        Err(e) => fail(e.to_string()),
    }
}

fn big_write(
    path: &Path,
    layout: WriteLayout,
    threads: usize,
    fields: &[(String, String)],
    offsets: &[(String, String)],
) -> tdbfilter::Result<String> {
    let mut data: Vec<(String, Vec<u8>)> = Vec::new();
    for (name, file) in fields {
        data.push((
            name.clone(),
            std::fs::read(file).unwrap_or_else(|e| fail(format!("{file}: {e}"))),
        ));
    }
    let offs: Vec<(String, Vec<u64>)> = offsets
        .iter()
        .map(|(n, f)| (n.clone(), read_u64s(f)))
        .collect();
    let input: u64 = data.iter().map(|(_, d)| d.len() as u64).sum::<u64>()
        + offs.iter().map(|(_, o)| 8 * o.len() as u64).sum::<u64>();
    // The peak is measured from here: the cells are in memory.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let base = status("VmRSS");
    let t0 = Instant::now();
    let mut w = Writer::open(path_str(path)?, None, None, &StorageConfig::default())?;
    w.set_threads(threads)?;
    w.set_layout(layout)?;
    for (name, d) in data {
        w.set_data_owned(&name, d)?;
    }
    for (name, o) in offs {
        w.set_offsets_owned(&name, o)?;
    }
    w.submit()?;
    w.finalize()?;
    let seconds = t0.elapsed().as_secs_f64();
    let peak = status("VmHWM").saturating_sub(base);
    Ok(format!(
        "{{\"seconds\": {seconds}, \"peak\": {peak}, \"input\": {input}}}"
    ))
}

fn small_writes(
    path: &Path,
    layout: WriteLayout,
    threads: usize,
    k: usize,
) -> tdbfilter::Result<String> {
    let mut times = Vec::with_capacity(k);
    for i in 0..k as i64 {
        let a: Vec<i64> = (0..16).map(|j| i * 16 + j).collect();
        let t0 = Instant::now();
        let mut w = Writer::open(path_str(path)?, None, None, &StorageConfig::default())?;
        w.set_threads(threads)?;
        w.set_layout(layout)?;
        if layout == WriteLayout::RowMajor {
            w.set_subarray(&le_bytes(&[i * 16, i * 16 + 15]))?;
        } else {
            // 16 cells on a diagonal, a different block per write.
            let x: Vec<i64> = (0..16).map(|j| i * 16 + j).collect();
            let y: Vec<i64> = (0..16).map(|j| 1000 + i * 16 + j).collect();
            w.set_data("x", &le_bytes(&x))?;
            w.set_data("y", &le_bytes(&y))?;
        }
        w.set_data("a", &le_bytes(&a))?;
        w.submit()?;
        w.finalize()?;
        times.push(t0.elapsed().as_secs_f64());
    }
    times.sort_by(|a, b| a.total_cmp(b));
    let median = times[times.len() / 2];
    let p90 = times[times.len() * 9 / 10];
    Ok(format!(
        "{{\"median\": {median}, \"p90\": {p90}, \"runs\": {k}}}"
    ))
}
