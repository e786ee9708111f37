//! `tdbf demo`: generates deterministic sample data, filters it through several pipelines,
//! and prints sizes, ratios and speeds after verifying every round trip byte for byte; then
//! creates, writes, reads back and verifies a dense and a sparse array (cli/src/demo_array.rs).

use crate::common::{CliResult, Failure, parse_size, ratio};
use clap::Args;
use std::io::{self, Write};
use std::time::{Duration, Instant};
use tdbfilter::{Datatype, Pipeline, Tile, pipeline::spec};

/// The pipelines the demo runs when none are given.
const DEFAULT_PIPELINES: &[&str] = &[
    "none",
    "byteshuffle,zstd",
    "bitshuffle,lz4",
    "checksum_sha256,gzip:1",
    "bitshuffle,zstd:3",
    "bzip2",
];

/// Each timing repeats until it has run this long (or [`MAX_REPS`] times) and keeps the best.
const TIME_BUDGET: Duration = Duration::from_millis(40);

/// At most this many timed repetitions per measurement.
const MAX_REPS: u32 = 4;

/// Options of `tdbf demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Threads filtering the chunks of a tile (0 = all cores).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// Bytes of each sample dataset (K/M/G suffixes allowed).
    #[arg(long, value_name = "BYTES", value_parser = parse_size, default_value = "4MiB")]
    pub dataset_bytes: u64,
    /// Bytes per tile, rounded down to whole cells (K/M/G suffixes allowed).
    #[arg(long, value_name = "BYTES", value_parser = parse_size, default_value = "1MiB")]
    pub tile_bytes: u64,
    /// A pipeline spec to run instead of the default list (repeatable).
    #[arg(long = "pipeline", value_name = "SPEC")]
    pub pipelines: Vec<String>,
}

/// SplitMix64: a tiny deterministic generator, good enough for sample data.
struct Rng(u64);

impl Rng {
    /// The next 64 random bits.
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (with negligible modulo bias).
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A value in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One sample dataset, already cut into tiles.
struct Dataset {
    /// Name shown in the table.
    name: &'static str,
    /// The dataset's tiles.
    tiles: Vec<Tile>,
    /// Total bytes of all tiles.
    bytes: u64,
}

/// Sorted int64 timestamps in microseconds: 1 ms ticks with ±50 µs jitter.
fn timestamps(count: usize, rng: &mut Rng) -> Vec<u8> {
    let mut t: i64 = 1_700_000_000_000_000;
    let mut out = Vec::with_capacity(count * 8);
    for _ in 0..count {
        t += 1000 + rng.below(101) as i64 - 50;
        out.extend_from_slice(&t.to_le_bytes());
    }
    out
}

/// Float64 sensor readings: a random walk around 20.0, quantized to 0.001.
fn sensor(count: usize, rng: &mut Rng) -> Vec<u8> {
    let mut x = 20.0f64;
    let mut out = Vec::with_capacity(count * 8);
    for _ in 0..count {
        x += (rng.unit() - 0.5) * 0.05;
        let reading = (x * 1000.0).round() / 1000.0;
        out.extend_from_slice(&reading.to_le_bytes());
    }
    out
}

/// Small-range int32 levels in `0..100`.
fn levels(count: usize, rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::with_capacity(count * 4);
    for _ in 0..count {
        out.extend_from_slice(&(rng.below(100) as i32).to_le_bytes());
    }
    out
}

/// Cuts `data` into tiles of `tile_bytes` (rounded down to whole cells, at least one cell).
fn make_dataset(
    name: &'static str,
    datatype: Datatype,
    data: Vec<u8>,
    tile_bytes: u64,
) -> CliResult<Dataset> {
    let cell = datatype.size();
    let tile_len = (usize::try_from(tile_bytes).unwrap_or(usize::MAX) / cell * cell).max(cell);
    let tiles = data
        .chunks(tile_len)
        .map(|piece| Tile::new(datatype, cell as u64, piece.to_vec()))
        .collect::<tdbfilter::Result<Vec<_>>>()?;
    Ok(Dataset {
        name,
        tiles,
        bytes: data.len() as u64,
    })
}

/// Runs `f` until [`TIME_BUDGET`] or [`MAX_REPS`] is reached; returns its last result and the
/// best time. Stops at the first error.
fn timed<T>(mut f: impl FnMut() -> tdbfilter::Result<T>) -> tdbfilter::Result<(T, Duration)> {
    let start = Instant::now();
    let mut best = Duration::MAX;
    let mut reps = 0;
    loop {
        let t0 = Instant::now();
        let value = f()?;
        best = best.min(t0.elapsed());
        reps += 1;
        if reps >= MAX_REPS || start.elapsed() >= TIME_BUDGET {
            return Ok((value, best));
        }
    }
}

/// Decimal megabytes per second.
fn mb_per_s(bytes: u64, time: Duration) -> f64 {
    bytes as f64 / 1e6 / time.as_secs_f64().max(1e-9)
}

/// The outcome of one dataset × pipeline run.
struct Row {
    /// Total filtered bytes.
    filtered: u64,
    /// Filter speed in MB/s.
    filter_speed: f64,
    /// Unfilter speed in MB/s.
    unfilter_speed: f64,
}

/// Filters and unfilters every tile of `dataset`, checking the round trip byte for byte.
fn run_one(dataset: &Dataset, pipeline: &Pipeline) -> Result<Row, String> {
    let (filtered, filter_time) = timed(|| {
        dataset
            .tiles
            .iter()
            .map(|t| pipeline.filter_tile(t))
            .collect::<tdbfilter::Result<Vec<_>>>()
    })
    .map_err(|e| format!("filter: {e}"))?;
    let (unfiltered, unfilter_time) = timed(|| {
        filtered
            .iter()
            .zip(&dataset.tiles)
            .map(|(bytes, t)| pipeline.unfilter_tile(bytes, t.datatype(), t.cell_size()))
            .collect::<tdbfilter::Result<Vec<_>>>()
    })
    .map_err(|e| format!("unfilter: {e}"))?;
    for (i, (back, original)) in unfiltered.iter().zip(&dataset.tiles).enumerate() {
        if back.data() != original.data() {
            let at = back
                .data()
                .iter()
                .zip(original.data())
                .position(|(a, b)| a != b)
                .unwrap_or(back.data().len().min(original.data().len()));
            return Err(format!(
                "tile {i} differs after the round trip (first difference at byte {at}, \
                 {} bytes back vs {} in)",
                back.data().len(),
                original.data().len()
            ));
        }
    }
    Ok(Row {
        filtered: filtered.iter().map(|f| f.len() as u64).sum(),
        filter_speed: mb_per_s(dataset.bytes, filter_time),
        unfilter_speed: mb_per_s(dataset.bytes, unfilter_time),
    })
}

/// Runs `tdbf demo`.
pub fn run(args: &DemoArgs) -> CliResult<()> {
    let specs: Vec<String> = if args.pipelines.is_empty() {
        DEFAULT_PIPELINES.iter().map(|s| s.to_string()).collect()
    } else {
        args.pipelines
            .iter()
            .map(|s| s.trim().to_string())
            .collect()
    };
    let mut pipelines = Vec::with_capacity(specs.len());
    for text in &specs {
        let mut p = spec::parse(text)
            .map_err(|e| Failure::from(e).context(format_args!("invalid filter spec '{text}'")))?;
        p.set_threads(args.threads);
        pipelines.push(p);
    }
    if args.dataset_bytes < 8 {
        return Err(Failure::new(
            "--dataset-bytes must be at least 8 (one cell of every dataset)",
        ));
    }
    let bytes = usize::try_from(args.dataset_bytes)
        .map_err(|_| Failure::new("--dataset-bytes is too large"))?;
    let mut rng = Rng(0x7464_6266_696c_7472);
    let datasets = [
        make_dataset(
            "timestamps int64",
            Datatype::Int64,
            timestamps(bytes / 8, &mut rng),
            args.tile_bytes,
        )?,
        make_dataset(
            "sensor float64",
            Datatype::Float64,
            sensor(bytes / 8, &mut rng),
            args.tile_bytes,
        )?,
        make_dataset(
            "levels int32",
            Datatype::Int32,
            levels(bytes / 4, &mut rng),
            args.tile_bytes,
        )?,
    ];
    let threads = if args.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        args.threads
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    outln!(
        out,
        "tdbf demo: {} datasets x {} pipelines, {} tile(s) of up to {} bytes per dataset, \
         {threads} thread(s); speeds are the best of up to {MAX_REPS} runs, MB = 10^6 bytes",
        datasets.len(),
        pipelines.len(),
        datasets[0].tiles.len(),
        args.tile_bytes
    );
    let spec_width = specs.iter().map(|s| s.len()).max().unwrap_or(0).max(8);
    outln!(
        out,
        "{:<17} {:<spec_width$} {:>10} {:>10} {:>7} {:>11} {:>13}  check",
        "dataset",
        "pipeline",
        "input",
        "filtered",
        "ratio",
        "filter MB/s",
        "unfilter MB/s"
    );
    let mut failures = 0usize;
    for dataset in &datasets {
        for (text, pipeline) in specs.iter().zip(&pipelines) {
            match run_one(dataset, pipeline) {
                Ok(row) => outln!(
                    out,
                    "{:<17} {:<spec_width$} {:>10} {:>10} {:>7} {:>11.1} {:>13.1}  ok",
                    dataset.name,
                    text,
                    dataset.bytes,
                    row.filtered,
                    ratio(dataset.bytes, row.filtered),
                    row.filter_speed,
                    row.unfilter_speed
                ),
                Err(e) => {
                    failures += 1;
                    outln!(
                        out,
                        "{:<17} {:<spec_width$} {:>10}  FAILED: {e}",
                        dataset.name,
                        text,
                        dataset.bytes
                    );
                }
            }
        }
    }
    if failures > 0 {
        return Err(Failure::new(format!(
            "{failures} of {} round trips failed",
            datasets.len() * pipelines.len()
        )));
    }
    crate::demo_array::run(&mut out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_are_deterministic_and_well_formed() {
        let a = timestamps(1000, &mut Rng(1));
        assert_eq!(a, timestamps(1000, &mut Rng(1)));
        let values: Vec<i64> = a
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        assert!(values.windows(2).all(|w| w[0] < w[1]), "timestamps sorted");
        let l = levels(1000, &mut Rng(2));
        assert!(
            l.chunks_exact(4)
                .all(|c| (0..100).contains(&i32::from_le_bytes(c.try_into().unwrap_or([0; 4]))))
        );
        assert_eq!(sensor(10, &mut Rng(3)).len(), 80);
    }

    #[test]
    fn datasets_cut_into_whole_cell_tiles() {
        let d = make_dataset("x", Datatype::Int32, vec![0; 100], 30).ok();
        let sizes: Vec<usize> = d
            .map(|d| d.tiles.iter().map(|t| t.data().len()).collect())
            .unwrap_or_default();
        assert_eq!(sizes, vec![28, 28, 28, 16]);
    }
}
