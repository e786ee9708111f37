//! `tdbf bench`: throughput of a pipeline on the tiles of a file, filtering and unfiltering
//! every tile (verified byte for byte) and reporting the median of several timed repeats;
//! `tdbf bench --memcpy` measures plain copies of the same tiles as a memory-bandwidth
//! baseline.
//!
//! The warm-up run keeps its outputs and checks the round trip byte for byte; timed runs
//! release each output as soon as it is made (a writer storing tiles one by one), unless
//! `--outputs retained` keeps them all until the run ends or `--outputs into` writes into
//! buffers allocated once (both verify every run byte for byte).
//!
//! Threads are used like TileDB uses them: with at least as many tiles as threads, whole
//! tiles run in parallel on a pool built here, each tile on one thread (TileDB's parallel
//! writes); with fewer tiles than threads, tiles run one after another and the pipeline
//! spreads the chunks of each tile over its own threads.

use crate::bench_codec;
use crate::common::{
    CliResult, Failure, parse_size, print_json, ratio, read_input, resolve_cells, rounded,
};
use clap::{Args, ValueEnum};
use rayon::ThreadPool;
use rayon::prelude::*;
use serde::Serialize;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tdbfilter::{Datatype, Pipeline, Tile, pipeline::spec};

/// One mebibyte, the unit of every speed `tdbf bench` prints.
const MIB: f64 = (1u64 << 20) as f64;

/// Baselines `tdbf bench` can measure instead of a pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Baseline {
    /// Copy every tile into a preallocated buffer.
    Memcpy,
}

/// What happens to the outputs of the timed runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Outputs {
    /// `filter_tile`/`unfilter_tile`, each output released as soon as it is made (a writer
    /// storing tiles one by one), so the allocator reuses its memory. The warm-up run is
    /// verified byte for byte, the timed runs by size.
    Streamed,
    /// `filter_tile`/`unfilter_tile`, every output of a run kept until the run ends (like
    /// TileDB's reader, which holds all tiles of a query): the allocator fetches fresh pages
    /// from the OS in every run. Every run is verified byte for byte.
    Retained,
    /// `filter_tile_into`/`unfilter_tile_into` into caller buffers allocated once: no
    /// allocation in the timed runs. Every run is verified byte for byte.
    Into,
}

impl Outputs {
    /// The name printed in reports.
    fn name(self) -> &'static str {
        match self {
            Outputs::Streamed => "streamed",
            Outputs::Retained => "retained",
            Outputs::Into => "into",
        }
    }
}

/// Options of `tdbf bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The pipeline as a spec, e.g. 'bitshuffle,zstd:3' or 'none'.
    #[arg(
        long = "filters",
        visible_alias = "pipeline",
        value_name = "SPEC",
        required_unless_present_any = ["memcpy", "baseline"],
        conflicts_with_all = ["memcpy", "baseline"]
    )]
    pub spec: Option<String>,
    /// Datatype of the cells (int32, float64, uint8, …; case-insensitive)
    /// [default with --memcpy: uint8].
    #[arg(
        long = "type",
        value_name = "TYPE",
        required_unless_present_any = ["memcpy", "baseline"]
    )]
    pub datatype: Option<String>,
    /// Bytes per cell [default: the datatype's size].
    #[arg(long, value_name = "BYTES")]
    pub cell_size: Option<u64>,
    /// Threads (0 = all cores), used across tiles when there are at least this many tiles,
    /// else across the chunks of each tile.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// Bytes per tile, rounded down to whole cells (K/M/G suffixes allowed).
    #[arg(long, value_name = "BYTES", value_parser = parse_size, default_value = "1MiB")]
    pub tile_bytes: u64,
    /// Timed repeats; the median is reported (one untimed warm-up runs first).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 5,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub repeat: u32,
    /// Print one JSON object instead of the text report.
    #[arg(long)]
    pub json: bool,
    /// Always run whole tiles in parallel (one thread per tile), even with fewer tiles than
    /// threads.
    #[arg(long, conflicts_with = "chunk_parallel")]
    pub tile_parallel: bool,
    /// Always run tiles one after another with the pipeline's chunk parallelism.
    #[arg(long)]
    pub chunk_parallel: bool,
    /// What the timed runs do with their outputs: release each at once (streamed), keep all
    /// until the run ends (retained), or write into buffers allocated once (into).
    #[arg(long, value_enum, value_name = "HOW", default_value = "streamed")]
    pub outputs: Outputs,
    /// Measure memcpy of the same tiles instead of a pipeline (same as --baseline memcpy).
    #[arg(long)]
    pub memcpy: bool,
    /// Measure a baseline instead of a pipeline.
    #[arg(long, value_enum, value_name = "BASELINE", conflicts_with = "memcpy")]
    pub baseline: Option<Baseline>,
    /// Time only the pipeline's last filter, a ZSTD, LZ4, GZIP or BZIP2 compressor, as the bare
    /// library call on the parts it compresses in the pipeline (the filters before it run
    /// untimed); speeds are in original tile bytes per second.
    #[arg(long, hide = true, conflicts_with_all = ["memcpy", "baseline"])]
    pub bare_codec: bool,
    /// Raw cells to cut into tiles ('-' for stdin).
    #[arg(value_name = "FILE")]
    pub input: PathBuf,
}

/// How the work is spread over threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// One thread does everything.
    Serial,
    /// Whole tiles in parallel, each tile on one thread.
    Tiles,
    /// One tile after another, the chunks of each tile in parallel.
    Chunks,
}

impl Mode {
    /// The name printed in reports.
    fn name(self) -> &'static str {
        match self {
            Mode::Serial => "serial",
            Mode::Tiles => "tiles",
            Mode::Chunks => "chunks",
        }
    }

    /// A longer description for the text report.
    fn describe(self) -> &'static str {
        match self {
            Mode::Serial => "one thread",
            Mode::Tiles => "tile-parallel: each tile on one thread",
            Mode::Chunks => "chunk-parallel: tiles in turn, chunks of a tile in parallel",
        }
    }
}

/// Chooses the mode for `threads` threads and `tiles` tiles.
fn choose_mode(args: &BenchArgs, threads: usize, tiles: usize) -> Mode {
    if threads <= 1 {
        Mode::Serial
    } else if args.tile_parallel {
        Mode::Tiles
    } else if args.chunk_parallel || tiles < threads {
        Mode::Chunks
    } else {
        Mode::Tiles
    }
}

/// The thread pool for tile-level parallelism (and for parallel memcpy).
fn build_pool(threads: usize) -> CliResult<ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("tdbf-bench-{i}"))
        .build()
        .map_err(|e| Failure::new(format!("cannot start {threads} threads: {e}")))
}

/// Cuts `data` into tiles of `tile_bytes` rounded down to whole `cell_size`-byte cells.
fn cut_tiles(
    data: &[u8],
    datatype: Datatype,
    cell_size: u64,
    tile_bytes: u64,
    name: &str,
) -> CliResult<Vec<Tile>> {
    let cell = usize::try_from(cell_size).map_err(|_| Failure::new("cell size too large"))?;
    if data.is_empty() {
        return Err(Failure::new(format!(
            "'{name}' is empty: nothing to measure"
        )));
    }
    if !data.len().is_multiple_of(cell) {
        return Err(Failure::new(format!(
            "'{name}' is {} bytes, not a whole number of {cell}-byte {datatype} cells",
            data.len()
        )));
    }
    let tile_len = usize::try_from(tile_bytes).unwrap_or(usize::MAX) / cell * cell;
    if tile_len == 0 {
        return Err(Failure::new(format!(
            "--tile-bytes {tile_bytes} is smaller than one {cell}-byte cell"
        )));
    }
    data.chunks(tile_len)
        .map(|piece| Tile::new(datatype, cell_size, piece.to_vec()).map_err(Failure::from))
        .collect()
}

/// The median of `times` (the mean of the middle two for an even count).
fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    let n = sorted.len();
    if n == 0 {
        Duration::ZERO
    } else if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }
}

/// `bytes` per `time` in MiB/s.
fn mib_per_s(bytes: u64, time: Duration) -> f64 {
    bytes as f64 / MIB / time.as_secs_f64().max(1e-9)
}

/// Runs a pipeline over all tiles in the chosen mode.
struct Runner<'a> {
    /// The pipeline, with its thread count set for the mode.
    pipeline: Pipeline,
    /// The tiles.
    tiles: &'a [Tile],
    /// How tiles are spread over threads.
    mode: Mode,
    /// The pool for [`Mode::Tiles`].
    pool: Option<ThreadPool>,
}

impl Runner<'_> {
    /// Filters every tile and hands each filtered tile to `keep` as soon as it is made;
    /// returns what `keep` returned, in tile order.
    fn filter_each<R: Send>(
        &self,
        keep: impl Fn(Vec<u8>) -> R + Sync,
    ) -> tdbfilter::Result<Vec<R>> {
        let p = &self.pipeline;
        let one = |(i, t): (usize, &Tile)| {
            p.filter_tile(t)
                .map(&keep)
                .map_err(|e| e.context(format!("filter tile {i}")))
        };
        match (&self.pool, self.mode) {
            (Some(pool), Mode::Tiles) => {
                pool.install(|| self.tiles.par_iter().enumerate().map(one).collect())
            }
            _ => self.tiles.iter().enumerate().map(one).collect(),
        }
    }

    /// Unfilters every filtered tile and hands each result to `keep` as soon as it is made;
    /// returns what `keep` returned, in tile order.
    fn unfilter_each<R: Send>(
        &self,
        filtered: &[Vec<u8>],
        keep: impl Fn(Tile) -> R + Sync,
    ) -> tdbfilter::Result<Vec<R>> {
        let p = &self.pipeline;
        let one = |(i, (f, t)): (usize, (&Vec<u8>, &Tile))| {
            p.unfilter_tile(f, t.datatype(), t.cell_size())
                .map(&keep)
                .map_err(|e| e.context(format!("unfilter tile {i}")))
        };
        match (&self.pool, self.mode) {
            (Some(pool), Mode::Tiles) => pool.install(|| {
                filtered
                    .par_iter()
                    .zip(self.tiles.par_iter())
                    .enumerate()
                    .map(one)
                    .collect()
            }),
            _ => filtered
                .iter()
                .zip(self.tiles.iter())
                .enumerate()
                .map(one)
                .collect(),
        }
    }

    /// Runs `f` on every tile index with its output slot, across tiles in [`Mode::Tiles`].
    fn each_mut<S: Send, R: Send>(
        &self,
        outs: &mut [S],
        f: impl Fn(usize, &mut S) -> tdbfilter::Result<R> + Sync,
    ) -> tdbfilter::Result<Vec<R>> {
        match (&self.pool, self.mode) {
            (Some(pool), Mode::Tiles) => pool.install(|| {
                outs.par_iter_mut()
                    .enumerate()
                    .map(|(i, s)| f(i, s))
                    .collect()
            }),
            _ => outs.iter_mut().enumerate().map(|(i, s)| f(i, s)).collect(),
        }
    }

    /// Filters every tile into `bufs` (one buffer per tile); returns the filtered sizes.
    fn filter_into(&self, bufs: &mut [Vec<u8>]) -> tdbfilter::Result<Vec<usize>> {
        let p = &self.pipeline;
        self.each_mut(bufs, |i, b| {
            p.filter_tile_into(&self.tiles[i], b)
                .map_err(|e| e.context(format!("filter tile {i}")))
        })
    }

    /// Unfilters every filtered tile into `bufs`; returns the unfiltered sizes.
    fn unfilter_into(
        &self,
        filtered: &[Vec<u8>],
        bufs: &mut [Vec<u8>],
    ) -> tdbfilter::Result<Vec<usize>> {
        let p = &self.pipeline;
        self.each_mut(bufs, |i, b| {
            let t = &self.tiles[i];
            p.unfilter_tile_into(&filtered[i], t.datatype(), t.cell_size(), b)
                .map_err(|e| e.context(format!("unfilter tile {i}")))
        })
    }

    /// Checks the outputs of an `into` run against the reference filtered tiles and the
    /// original tiles, byte for byte.
    fn verify_into(
        &self,
        filtered: &[Vec<u8>],
        fbufs: &[Vec<u8>],
        flens: &[usize],
        ubufs: &[Vec<u8>],
        ulens: &[usize],
    ) -> CliResult<()> {
        for (i, ((want, got), &n)) in filtered.iter().zip(fbufs).zip(flens).enumerate() {
            if got.get(..n) != Some(&want[..]) {
                return Err(Failure::new(format!(
                    "filter_tile_into and filter_tile differ on tile {i}"
                )));
            }
        }
        let back: Vec<&[u8]> = ubufs
            .iter()
            .zip(ulens)
            .map(|(b, &n)| b.get(..n).unwrap_or(b))
            .collect();
        self.verify(&back)
    }

    /// Checks that the lengths of a timed run's outputs match the verified run's.
    fn check_lengths(&self, what: &str, got: &[usize], want: &[usize]) -> CliResult<()> {
        match got.iter().zip(want).position(|(g, w)| g != w) {
            None if got.len() == want.len() => Ok(()),
            at => Err(Failure::new(format!(
                "{what} differs between runs (tile {})",
                at.unwrap_or(got.len().min(want.len()))
            ))),
        }
    }

    /// Checks that `back` holds exactly the original tiles.
    fn verify<B: AsRef<[u8]>>(&self, back: &[B]) -> CliResult<()> {
        if back.len() != self.tiles.len() {
            return Err(Failure::new(format!(
                "round trip mismatch: {} tiles back from {}",
                back.len(),
                self.tiles.len()
            )));
        }
        for (i, (b, t)) in back.iter().zip(self.tiles).enumerate() {
            let b = b.as_ref();
            if b != t.data() {
                let at = b
                    .iter()
                    .zip(t.data())
                    .position(|(x, y)| x != y)
                    .unwrap_or(b.len().min(t.data().len()));
                return Err(Failure::new(format!(
                    "round trip mismatch: tile {i} differs at byte {at} \
                     ({} bytes back, {} bytes in)",
                    b.len(),
                    t.data().len()
                )));
            }
        }
        Ok(())
    }
}

/// What one benchmark measured.
struct Measured {
    /// The pipeline spec as given, or `memcpy`.
    spec: String,
    /// The pipeline spec in canonical form (levels made explicit), or `memcpy`.
    canonical: String,
    /// The datatype of the cells.
    datatype: Datatype,
    /// Bytes per cell.
    cell_size: u64,
    /// Total bytes of all tiles.
    input_bytes: u64,
    /// Total bytes of all filtered tiles (the input size for memcpy).
    filtered_bytes: u64,
    /// Number of tiles.
    tiles: usize,
    /// Bytes per tile (the last one may be shorter).
    tile_bytes: u64,
    /// Threads used.
    threads: usize,
    /// How tiles were spread over threads.
    mode: Mode,
    /// Timed filter (or copy) runs.
    filter_times: Vec<Duration>,
    /// Timed unfilter runs (empty for memcpy).
    unfilter_times: Vec<Duration>,
    /// Whether this is the memcpy baseline.
    memcpy: bool,
    /// What the timed runs did with their outputs.
    outputs: Outputs,
}

/// Runs `tdbf bench`.
pub fn run(args: &BenchArgs) -> CliResult<()> {
    let memcpy = args.memcpy || args.baseline == Some(Baseline::Memcpy);
    let (datatype, cell_size) =
        resolve_cells(args.datatype.as_deref().unwrap_or("uint8"), args.cell_size)?;
    let name = args.input.display().to_string();
    let data = read_input(&args.input)?;
    let tiles = cut_tiles(&data, datatype, cell_size, args.tile_bytes, &name)?;
    drop(data);
    let threads = if args.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        args.threads
    };
    let mode = choose_mode(args, threads, tiles.len());
    let measured = if memcpy {
        bench_memcpy(args, &tiles, datatype, cell_size, threads, mode)?
    } else {
        let text = args.spec.as_deref().unwrap_or("none").trim().to_string();
        let pipeline = spec::parse(&text)
            .map_err(|e| Failure::from(e).context(format_args!("invalid filter spec '{text}'")))?;
        pipeline
            .check_types(datatype, false)
            .map_err(|e| Failure::from(e).context(format_args!("pipeline '{text}'")))?;
        if args.bare_codec {
            bench_bare_codec(args, &pipeline, &tiles, threads, mode)?
        } else {
            bench_pipeline(args, pipeline, text, &tiles, threads, mode)?
        }
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    if args.json {
        print_json(&mut out, &to_json(&measured, args.repeat))?;
    } else {
        report(&mut out, &measured, &name, args.repeat)?;
    }
    Ok(())
}

/// Filters and unfilters every tile: one verified warm-up, then `repeat` timed and verified
/// runs.
fn bench_pipeline(
    args: &BenchArgs,
    mut pipeline: Pipeline,
    text: String,
    tiles: &[Tile],
    threads: usize,
    mode: Mode,
) -> CliResult<Measured> {
    pipeline.set_threads(if mode == Mode::Chunks { threads } else { 1 });
    let runner = Runner {
        pipeline,
        tiles,
        mode,
        pool: if mode == Mode::Tiles {
            Some(build_pool(threads)?)
        } else {
            None
        },
    };
    // Warm-up: every tile filtered and unfiltered, the round trip checked byte for byte. The
    // filtered tiles are kept as the input of the timed unfilter runs.
    let filtered = runner.filter_each(|f| f)?;
    let filtered_lens: Vec<usize> = filtered.iter().map(Vec::len).collect();
    let filtered_bytes: u64 = filtered_lens.iter().map(|&n| n as u64).sum();
    let back = runner.unfilter_each(&filtered, |t| t.into_data())?;
    runner.verify(&back)?;
    let tile_lens: Vec<usize> = back.iter().map(Vec::len).collect();
    drop(back);
    // Caller buffers for --outputs into, allocated and touched once, before the timed runs.
    let (mut fbufs, mut ubufs) = (Vec::new(), Vec::new());
    if args.outputs == Outputs::Into {
        let bound = |t: &Tile| runner.pipeline.filtered_size_bound(t.data().len());
        fbufs = tiles.iter().map(|t| vec![0u8; bound(t)]).collect();
        ubufs = tiles.iter().map(|t| vec![0u8; t.data().len()]).collect();
        let flens = runner.filter_into(&mut fbufs)?;
        let ulens = runner.unfilter_into(&filtered, &mut ubufs)?;
        runner.verify_into(&filtered, &fbufs, &flens, &ubufs, &ulens)?;
    }
    let mut filter_times = Vec::with_capacity(args.repeat as usize);
    let mut unfilter_times = Vec::with_capacity(args.repeat as usize);
    for _ in 0..args.repeat {
        match args.outputs {
            Outputs::Retained => {
                let t0 = Instant::now();
                let again = runner.filter_each(|f| f)?;
                filter_times.push(t0.elapsed());
                if again != filtered {
                    return Err(Failure::new("filtered tiles differ between runs"));
                }
                drop(again);
                let t1 = Instant::now();
                let back = runner.unfilter_each(&filtered, |t| t.into_data())?;
                unfilter_times.push(t1.elapsed());
                runner.verify(&back)?;
            }
            Outputs::Streamed => {
                let t0 = Instant::now();
                let lens = runner.filter_each(|f| f.len())?;
                filter_times.push(t0.elapsed());
                runner.check_lengths("filtered size", &lens, &filtered_lens)?;
                let t1 = Instant::now();
                let lens = runner.unfilter_each(&filtered, |t| t.data().len())?;
                unfilter_times.push(t1.elapsed());
                runner.check_lengths("unfiltered size", &lens, &tile_lens)?;
            }
            Outputs::Into => {
                let t0 = Instant::now();
                let flens = runner.filter_into(&mut fbufs)?;
                filter_times.push(t0.elapsed());
                let t1 = Instant::now();
                let ulens = runner.unfilter_into(&filtered, &mut ubufs)?;
                unfilter_times.push(t1.elapsed());
                runner.verify_into(&filtered, &fbufs, &flens, &ubufs, &ulens)?;
            }
        }
    }
    Ok(Measured {
        canonical: spec::to_spec(&runner.pipeline),
        spec: text,
        datatype: tiles[0].datatype(),
        cell_size: tiles[0].cell_size(),
        input_bytes: tiles.iter().map(|t| t.data().len() as u64).sum(),
        filtered_bytes,
        tiles: tiles.len(),
        tile_bytes: tiles[0].data().len() as u64,
        threads,
        mode,
        filter_times,
        unfilter_times,
        memcpy: false,
        outputs: args.outputs,
    })
}

/// `--bare-codec`: the pipeline's compressor alone (see [`bench_codec`]).
fn bench_bare_codec(
    args: &BenchArgs,
    pipeline: &Pipeline,
    tiles: &[Tile],
    threads: usize,
    mode: Mode,
) -> CliResult<Measured> {
    let codec = bench_codec::BareCodec::of_pipeline(pipeline)?;
    let t = bench_codec::measure(pipeline, codec, tiles, threads, args.repeat)?;
    Ok(Measured {
        spec: format!("bare {codec:?}"),
        canonical: spec::to_spec(pipeline),
        datatype: tiles[0].datatype(),
        cell_size: tiles[0].cell_size(),
        input_bytes: tiles.iter().map(|t| t.data().len() as u64).sum(),
        filtered_bytes: t.compressed_bytes,
        tiles: tiles.len(),
        tile_bytes: tiles[0].data().len() as u64,
        threads,
        mode,
        filter_times: t.compress,
        unfilter_times: t.decompress,
        memcpy: false,
        outputs: args.outputs,
    })
}

thread_local! {
    /// The reused destination of a thread's streamed copies (`--memcpy --outputs streamed`).
    static COPY_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Copies `src` into the calling thread's reused buffer.
fn copy_to_thread_buffer(src: &[u8]) {
    COPY_BUFFER.with(|b| {
        let mut b = b.borrow_mut();
        if b.len() < src.len() {
            b.resize(src.len(), 0);
        }
        b[..src.len()].copy_from_slice(src);
        std::hint::black_box(&b[..src.len()]);
    });
}

/// Copies `src` into `dst` (same length), in pieces on `pool` when given.
fn copy_split(pool: Option<&ThreadPool>, threads: usize, dst: &mut [u8], src: &[u8]) {
    match pool {
        Some(pool) => {
            let piece = src.len().div_ceil(threads).max(1);
            pool.install(|| {
                dst.par_chunks_mut(piece)
                    .zip(src.par_chunks(piece))
                    .for_each(|(d, s)| d.copy_from_slice(s));
            });
        }
        None => dst.copy_from_slice(src),
    }
}

/// Copies every tile, the counterpart of each `--outputs` mode: streamed, into one reused
/// tile-sized buffer per thread; into, into one buffer per tile allocated once; retained,
/// into a fresh buffer per tile, all kept until the run ends. One warm-up, then `repeat`
/// timed runs.
fn bench_memcpy(
    args: &BenchArgs,
    tiles: &[Tile],
    datatype: Datatype,
    cell_size: u64,
    threads: usize,
    mode: Mode,
) -> CliResult<Measured> {
    let pool = if mode == Mode::Serial {
        None
    } else {
        Some(build_pool(threads)?)
    };
    let split_pool = if mode == Mode::Chunks {
        pool.as_ref()
    } else {
        None
    };
    let longest = tiles.iter().map(|t| t.data().len()).max().unwrap_or(0);
    let mut one = vec![0u8; longest];
    let mut per_tile: Vec<Vec<u8>> = if args.outputs == Outputs::Into {
        tiles.iter().map(|t| vec![0u8; t.data().len()]).collect()
    } else {
        Vec::new()
    };
    let run = |one: &mut Vec<u8>, per_tile: &mut Vec<Vec<u8>>| -> Vec<Vec<u8>> {
        match (args.outputs, &pool, mode) {
            (Outputs::Streamed, Some(pool), Mode::Tiles) => {
                pool.install(|| {
                    tiles
                        .par_iter()
                        .for_each(|t| copy_to_thread_buffer(t.data()))
                });
                Vec::new()
            }
            (Outputs::Streamed, _, _) => {
                for t in tiles {
                    let n = t.data().len();
                    copy_split(split_pool, threads, &mut one[..n], t.data());
                    std::hint::black_box(&one[..n]);
                }
                Vec::new()
            }
            (Outputs::Into, Some(pool), Mode::Tiles) => {
                pool.install(|| {
                    per_tile
                        .par_iter_mut()
                        .zip(tiles.par_iter())
                        .for_each(|(d, t)| d.copy_from_slice(t.data()))
                });
                Vec::new()
            }
            (Outputs::Into, _, _) => {
                for (d, t) in per_tile.iter_mut().zip(tiles) {
                    copy_split(split_pool, threads, d, t.data());
                }
                std::hint::black_box(&per_tile);
                Vec::new()
            }
            (Outputs::Retained, Some(pool), Mode::Tiles) => {
                pool.install(|| tiles.par_iter().map(|t| t.data().to_vec()).collect())
            }
            (Outputs::Retained, _, _) => tiles
                .iter()
                .map(|t| {
                    let mut d = vec![0u8; t.data().len()];
                    copy_split(split_pool, threads, &mut d, t.data());
                    d
                })
                .collect(),
        }
    };
    drop(run(&mut one, &mut per_tile));
    let mut times = Vec::with_capacity(args.repeat as usize);
    for _ in 0..args.repeat {
        let t0 = Instant::now();
        let kept = run(&mut one, &mut per_tile);
        times.push(t0.elapsed());
        let copies = if kept.is_empty() { &per_tile } else { &kept };
        if copies.iter().zip(tiles).any(|(d, t)| d[..] != t.data()[..]) {
            return Err(Failure::new("memcpy produced different bytes"));
        }
    }
    let input_bytes: u64 = tiles.iter().map(|t| t.data().len() as u64).sum();
    Ok(Measured {
        spec: "memcpy".into(),
        canonical: "memcpy".into(),
        datatype,
        cell_size,
        input_bytes,
        filtered_bytes: input_bytes,
        tiles: tiles.len(),
        tile_bytes: tiles[0].data().len() as u64,
        threads,
        mode,
        filter_times: times,
        unfilter_times: Vec::new(),
        memcpy: true,
        outputs: args.outputs,
    })
}

/// `tdbf bench --json`: one object on one line. Speeds in MiB/s to 3 decimals, the ratio to 6,
/// times in seconds to 9 (nanoseconds).
#[derive(Serialize)]
struct BenchJson<'a> {
    spec: &'a str,
    pipeline: &'a str,
    #[serde(rename = "type")]
    datatype: String,
    cell_size: u64,
    input_bytes: u64,
    filtered_bytes: u64,
    ratio: f64,
    tiles: usize,
    tile_bytes: u64,
    threads: usize,
    mode: &'static str,
    repeat: u32,
    filter_mib_s: f64,
    unfilter_mib_s: f64,
    filter_mib_s_best: f64,
    unfilter_mib_s_best: f64,
    filter_seconds: Vec<f64>,
    unfilter_seconds: Vec<f64>,
    round_trip: &'static str,
    outputs: &'static str,
    /// `"memcpy"` for `--memcpy`, absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline: Option<&'static str>,
    /// The memcpy speed (`--memcpy` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    memcpy_mib_s: Option<f64>,
}

/// Durations in seconds, to the nanosecond.
fn seconds(times: &[Duration]) -> Vec<f64> {
    times.iter().map(|t| rounded(t.as_secs_f64(), 9)).collect()
}

/// The JSON report.
fn to_json(m: &Measured, repeat: u32) -> BenchJson<'_> {
    let filter = mib_per_s(m.input_bytes, median(&m.filter_times));
    let best_filter = mib_per_s(
        m.input_bytes,
        m.filter_times.iter().min().copied().unwrap_or_default(),
    );
    let (unfilter, best_unfilter, unfilter_times) = if m.memcpy {
        (filter, best_filter, &m.filter_times)
    } else {
        (
            mib_per_s(m.input_bytes, median(&m.unfilter_times)),
            mib_per_s(
                m.input_bytes,
                m.unfilter_times.iter().min().copied().unwrap_or_default(),
            ),
            &m.unfilter_times,
        )
    };
    BenchJson {
        spec: &m.spec,
        pipeline: &m.canonical,
        datatype: m.datatype.name().to_ascii_lowercase(),
        cell_size: m.cell_size,
        input_bytes: m.input_bytes,
        filtered_bytes: m.filtered_bytes,
        ratio: rounded(m.input_bytes as f64 / m.filtered_bytes.max(1) as f64, 6),
        tiles: m.tiles,
        tile_bytes: m.tile_bytes,
        threads: m.threads,
        mode: m.mode.name(),
        repeat,
        filter_mib_s: rounded(filter, 3),
        unfilter_mib_s: rounded(unfilter, 3),
        filter_mib_s_best: rounded(best_filter, 3),
        unfilter_mib_s_best: rounded(best_unfilter, 3),
        filter_seconds: seconds(&m.filter_times),
        unfilter_seconds: seconds(unfilter_times),
        round_trip: if m.memcpy { "n/a" } else { "ok" },
        outputs: m.outputs.name(),
        baseline: m.memcpy.then_some("memcpy"),
        memcpy_mib_s: m.memcpy.then_some(rounded(filter, 3)),
    }
}

/// The text report.
fn report(out: &mut impl Write, m: &Measured, name: &str, repeat: u32) -> CliResult<()> {
    let last = m.input_bytes - m.tile_bytes * (m.tiles as u64 - 1);
    let tiles = if last == m.tile_bytes {
        format!("{} tile(s) of {} bytes", m.tiles, m.tile_bytes)
    } else {
        format!(
            "{} tile(s) of {} bytes (the last {last})",
            m.tiles, m.tile_bytes
        )
    };
    outln!(
        out,
        "tdbf bench: '{name}': {} bytes in {tiles}, {} (cell size {})",
        m.input_bytes,
        m.datatype.name().to_ascii_lowercase(),
        m.cell_size
    );
    outln!(
        out,
        "{}: {} thread(s), {}; median of {repeat} run(s) after 1 warm-up; MiB = 2^20 bytes",
        if m.memcpy {
            format!("baseline memcpy, outputs {}", m.outputs.name())
        } else {
            format!("pipeline {}", m.canonical)
        },
        m.threads,
        m.mode.describe()
    );
    let line = |what: &str, times: &[Duration]| {
        let best = times.iter().min().copied().unwrap_or_default();
        let worst = times.iter().max().copied().unwrap_or_default();
        format!(
            "{what:<9} {:>10.1} MiB/s  (best {:.1}, worst {:.1}; median {:.3} ms)",
            mib_per_s(m.input_bytes, median(times)),
            mib_per_s(m.input_bytes, best),
            mib_per_s(m.input_bytes, worst),
            median(times).as_secs_f64() * 1e3
        )
    };
    if m.memcpy {
        outln!(out, "{}", line("memcpy:", &m.filter_times));
    } else {
        outln!(
            out,
            "filtered: {} bytes, ratio {}; round trip verified byte for byte{}",
            m.filtered_bytes,
            ratio(m.input_bytes, m.filtered_bytes),
            match m.outputs {
                Outputs::Streamed => " (warm-up; timed runs release each output at once)",
                Outputs::Retained => " in every run (outputs kept until the run ends)",
                Outputs::Into => " in every run (outputs into buffers allocated once)",
            }
        );
        outln!(out, "{}", line("filter:", &m.filter_times));
        outln!(out, "{}", line("unfilter:", &m.unfilter_times));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        let ms = Duration::from_millis;
        assert_eq!(median(&[ms(3), ms(1), ms(2)]), ms(2));
        assert_eq!(
            median(&[ms(4), ms(1), ms(2), ms(3)]),
            Duration::from_micros(2500)
        );
        assert_eq!(median(&[]), Duration::ZERO);
    }

    #[test]
    fn tiles_are_whole_cells() {
        let t = cut_tiles(&[0u8; 100], Datatype::Int32, 4, 30, "x").unwrap_or_default();
        let sizes: Vec<usize> = t.iter().map(|t| t.data().len()).collect();
        assert_eq!(sizes, vec![28, 28, 28, 16]);
        assert!(cut_tiles(&[0u8; 10], Datatype::Int32, 4, 30, "x").is_err());
        assert!(cut_tiles(&[], Datatype::Int32, 4, 30, "x").is_err());
        assert!(cut_tiles(&[0u8; 8], Datatype::Int64, 8, 4, "x").is_err());
    }
}
