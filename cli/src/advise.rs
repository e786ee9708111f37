//! `tdbf advise`: which TileDB filter pipeline suits a file of cells?
//!
//! It tries the pipelines TileDB offers for the datatype — the transforms (byte and bit
//! shuffles, DELTA, DOUBLE_DELTA, XOR, BIT_WIDTH_REDUCTION, POSITIVE_DELTA, and SCALE_FLOAT when
//! `--max-error` allows loss) each followed by every compressor at a few levels — on a sample
//! of tiles spread over the file, verifies every round trip (lossless: byte for byte; SCALE_FLOAT:
//! every value within the allowed error), and ranks what it measured for a goal:
//!
//! * `ratio`: the smallest filtered size (ties: the faster reads).
//! * `speed`: the highest of min(filter, unfilter) MiB/s among the pipelines that shrink the data
//!   by at least 10%; when nothing does, the empty pipeline (score infinite: it does no work).
//! * `balanced`: the least time to write and read the data through storage of
//!   `--storage-mibs` MiB/s (filter + unfilter time + twice the filtered bytes over storage).
//!
//! Candidates run cheapest first and stop at `--time-budget`; the report says how many were
//! left untried. Each result carries its spec string and the TileDB-Py `FilterList` to paste.

use crate::common::{
    CliResult, Failure, parse_size, print_json, read_input, resolve_cells, rounded,
};
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tdbfilter::filters::config::{CompressionOptions, ScaleFloatOptions};
use tdbfilter::{Compressor, Datatype, Filter, FilterType, Pipeline, Tile, pipeline::spec};

/// One mebibyte, the unit of the speeds printed.
const MIB: f64 = (1u64 << 20) as f64;

/// The least size reduction (filtered ÷ input ≤ 0.9) the `speed` goal counts as compressing.
const SPEED_GOAL_MIN_RATIO: f64 = 1.0 / 0.9;

/// A timed pass shorter than this is repeated (up to `--repeat` times, best kept).
const MIN_PASS: Duration = Duration::from_millis(20);

/// What the ranking optimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Goal {
    /// Smallest filtered size.
    Ratio,
    /// Fastest writes and reads among pipelines that shrink the data by at least 10%.
    Speed,
    /// Least time to write and read the data through storage of `--storage-mibs`.
    Balanced,
}

impl Goal {
    fn name(self) -> &'static str {
        match self {
            Goal::Ratio => "ratio",
            Goal::Speed => "speed",
            Goal::Balanced => "balanced",
        }
    }
}

/// Options of `tdbf advise`.
#[derive(Debug, Args)]
pub struct AdviseArgs {
    /// Datatype of the cells (int64, float64, uint8, …; case-insensitive).
    #[arg(long = "type", value_name = "TYPE")]
    pub datatype: String,
    /// Bytes per cell [default: the datatype's size].
    #[arg(long, value_name = "BYTES")]
    pub cell_size: Option<u64>,
    /// What to optimise.
    #[arg(long, value_enum, default_value = "balanced")]
    pub goal: Goal,
    /// Stop trying candidates after this long (e.g. 10s, 500ms, 2m).
    #[arg(long, value_name = "TIME", value_parser = parse_duration, default_value = "10s")]
    pub time_budget: Duration,
    /// Bytes of the file to try pipelines on: whole tiles spread evenly over the file.
    #[arg(long, value_name = "BYTES", value_parser = parse_size, default_value = "8MiB")]
    pub sample_bytes: u64,
    /// Bytes per tile, rounded down to whole cells (K/M/G suffixes allowed).
    #[arg(long, value_name = "BYTES", value_parser = parse_size, default_value = "1MiB")]
    pub tile_bytes: u64,
    /// Allow SCALE_FLOAT (lossy) on float data with at most this absolute error per value.
    #[arg(long, value_name = "ERROR")]
    pub max_error: Option<f64>,
    /// Storage bandwidth the `balanced` goal assumes, in MiB/s.
    #[arg(long, value_name = "MIBS", default_value_t = 500.0)]
    pub storage_mibs: f64,
    /// Timed passes per direction at most (the best is kept; passes stop once one takes
    /// 20 ms).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 5,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub repeat: u32,
    /// Threads per pipeline (0 = all cores).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub threads: usize,
    /// Rows of the ranked table.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Raw cells ('-' for stdin).
    #[arg(value_name = "FILE")]
    pub input: PathBuf,
}

/// Parses a duration: a number with an optional unit ms, s (default) or m.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let bad = || format!("'{text}' is not a duration (e.g. 10s, 500ms, 2m)");
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let n: f64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit.trim() {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" | "min" => n * 60.0,
        _ => return Err(bad()),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| bad())
}

/// One pipeline's measurements on the sample.
#[derive(Debug, Clone)]
struct Measured {
    spec: String,
    tiledb_py: String,
    filtered_bytes: u64,
    ratio: f64,
    filter_mibs: f64,
    unfilter_mibs: f64,
    lossy: bool,
}

/// A candidate the datatype or the data rules out, and why.
#[derive(Debug, Clone)]
struct Refused {
    spec: String,
    reason: String,
}

/// Everything `advise` found.
struct Report {
    datatype: Datatype,
    cell_size: u64,
    sample_bytes: u64,
    sample_tiles: usize,
    file_bytes: u64,
    measured: Vec<Measured>,
    refused: Vec<Refused>,
    untried: usize,
    elapsed: Duration,
}

/// Runs `tdbf advise`.
pub fn run(args: &AdviseArgs) -> CliResult<()> {
    let (datatype, cell_size) = resolve_cells(&args.datatype, args.cell_size)?;
    if !(args.storage_mibs > 0.0 && args.storage_mibs.is_finite()) {
        return Err(Failure::new("--storage-mibs must be a positive number"));
    }
    if let Some(e) = args.max_error
        && !(e > 0.0 && e.is_finite())
    {
        return Err(Failure::new("--max-error must be a positive number"));
    }
    let data = read_input(&args.input)?;
    let name = args.input.display().to_string();
    let tiles = sample_tiles(&data, datatype, cell_size, args, &name)?;
    let scale = match args.max_error {
        Some(e) if matches!(datatype, Datatype::Float32 | Datatype::Float64) => {
            Some(scale_for(&data, datatype, e).map_err(Failure::new)?)
        }
        Some(_) => {
            return Err(Failure::new(format!(
                "--max-error applies to float32/float64 cells, not {datatype}"
            )));
        }
        None => None,
    };
    let report = evaluate(&tiles, datatype, cell_size, scale, args, data.len() as u64);
    let ranked = rank(&report.measured, args.goal, args.storage_mibs);
    let stdout = io::stdout();
    let mut out = stdout.lock();
    if args.json {
        print_json(&mut out, &to_json(&report, &ranked, args))?;
    } else {
        print_table(&mut out, &report, &ranked, args)?;
    }
    Ok(())
}

/// Whole tiles spread evenly over the file, `sample_bytes` in all (at least one tile).
fn sample_tiles(
    data: &[u8],
    datatype: Datatype,
    cell_size: u64,
    args: &AdviseArgs,
    name: &str,
) -> CliResult<Vec<Tile>> {
    let cell = usize::try_from(cell_size).map_err(|_| Failure::new("cell size too large"))?;
    if data.is_empty() {
        return Err(Failure::new(format!("'{name}' is empty: nothing to try")));
    }
    if !data.len().is_multiple_of(cell) {
        return Err(Failure::new(format!(
            "'{name}' is {} bytes, not a whole number of {cell}-byte {datatype} cells",
            data.len()
        )));
    }
    let tile_len = usize::try_from(args.tile_bytes).unwrap_or(usize::MAX) / cell * cell;
    if tile_len == 0 {
        return Err(Failure::new(format!(
            "--tile-bytes {} is smaller than one {cell}-byte cell",
            args.tile_bytes
        )));
    }
    let all = data.len().div_ceil(tile_len);
    let wanted = usize::try_from(args.sample_bytes.div_ceil(tile_len as u64))
        .unwrap_or(usize::MAX)
        .clamp(1, all);
    // Tile i of `wanted` is the one at the start of the i-th equal stretch of the file.
    (0..wanted)
        .map(|i| i * all / wanted)
        .map(|t| {
            let start = t * tile_len;
            let end = (start + tile_len).min(data.len());
            Tile::new(datatype, cell_size, data[start..end].to_vec()).map_err(Failure::from)
        })
        .collect()
}

/// SCALE_FLOAT options that keep every value of `data` within `max_error`: a scale of
/// `max_error` (rounding errs by half of it), the offset at the middle of the values' range, and
/// the narrowest integer width that holds the range.
fn scale_for(data: &[u8], datatype: Datatype, max_error: f64) -> Result<ScaleFloatOptions, String> {
    let values = float_values(data, datatype);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        if !v.is_finite() {
            return Err(
                "--max-error: the data has NaN or infinite values, which SCALE_FLOAT \
                        cannot keep"
                    .into(),
            );
        }
        lo = lo.min(v);
        hi = hi.max(v);
    }
    let offset = lo / 2.0 + hi / 2.0;
    let half_steps = ((hi - lo) / 2.0 / max_error).ceil() + 1.0;
    let byte_width = [1u64, 2, 4, 8]
        .into_iter()
        .find(|w| half_steps < 2f64.powi((8 * w - 1) as i32) - 1.0)
        .filter(|w| *w < 8 || half_steps < 2f64.powi(52))
        .ok_or_else(|| {
            format!("--max-error {max_error} is too small for the data's range [{lo}, {hi}]")
        })?;
    Ok(ScaleFloatOptions {
        factor: max_error,
        offset,
        byte_width,
    })
}

/// The cells of a float32/float64 file as f64 (empty for other types).
fn float_values(data: &[u8], datatype: Datatype) -> Box<dyn Iterator<Item = f64> + '_> {
    match datatype {
        Datatype::Float32 => Box::new(
            data.chunks_exact(4)
                .map(|b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
        ),
        Datatype::Float64 => Box::new(
            data.chunks_exact(8)
                .map(|b| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]))),
        ),
        _ => Box::new(std::iter::empty()),
    }
}

/// An integer datatype of `width` bytes, for reinterpreting floats in DELTA/DOUBLE_DELTA.
fn int_of_width(width: usize) -> Datatype {
    match width {
        1 => Datatype::Int8,
        2 => Datatype::Int16,
        4 => Datatype::Int32,
        _ => Datatype::Int64,
    }
}

/// A DELTA or DOUBLE_DELTA filter, reinterpreting as `reinterpret` (Any: the cells' own type).
fn delta(compressor: Compressor, reinterpret: Datatype) -> Filter {
    Filter::Compression(CompressionOptions {
        compressor,
        level: tdbfilter::filters::config::DEFAULT_LEVEL,
        reinterpret,
    })
}

/// The transforms tried before each compressor, for cells of `datatype`.
fn transforms(datatype: Datatype, scale: Option<ScaleFloatOptions>) -> Vec<Vec<Filter>> {
    let width = datatype.size();
    let mut out: Vec<Vec<Filter>> = vec![vec![]];
    if width > 1 {
        out.push(vec![Filter::Byteshuffle]);
    }
    out.push(vec![Filter::Bitshuffle]);
    let is_float = matches!(datatype, Datatype::Float32 | Datatype::Float64);
    if datatype.is_integer() {
        for c in [Compressor::Delta, Compressor::DoubleDelta] {
            out.push(vec![delta(c, Datatype::Any)]);
            out.push(vec![delta(c, Datatype::Any), Filter::Bitshuffle]);
        }
        out.push(vec![
            delta(Compressor::Delta, Datatype::Any),
            Filter::Byteshuffle,
        ]);
        out.push(vec![Filter::BitWidthReduction { max_window: 256 }]);
        out.push(vec![
            delta(Compressor::Delta, Datatype::Any),
            Filter::BitWidthReduction { max_window: 256 },
        ]);
        out.push(vec![Filter::PositiveDelta { max_window: 1024 }]);
    }
    if is_float {
        let as_int = int_of_width(width);
        out.push(vec![delta(Compressor::Delta, as_int)]);
        out.push(vec![delta(Compressor::Delta, as_int), Filter::Byteshuffle]);
    }
    if matches!(width, 1 | 2 | 4 | 8) && (is_float || datatype.is_integer()) {
        out.push(vec![Filter::Xor]);
        out.push(vec![Filter::Xor, Filter::Byteshuffle]);
        out.push(vec![Filter::Xor, Filter::Bitshuffle]);
    }
    if let Some(o) = scale {
        let s = Filter::ScaleFloat(o);
        out.push(vec![s]);
        out.push(vec![s, Filter::Byteshuffle]);
        out.push(vec![s, Filter::Bitshuffle]);
        out.push(vec![s, delta(Compressor::Delta, Datatype::Any)]);
        out.push(vec![
            s,
            delta(Compressor::Delta, Datatype::Any),
            Filter::Bitshuffle,
        ]);
        out.push(vec![s, Filter::BitWidthReduction { max_window: 256 }]);
    }
    out
}

/// The compressors tried after each transform, cheapest first.
fn compressors() -> Vec<Option<Filter>> {
    let c = |t: FilterType, level: i32| Some(Filter::compression(t, level));
    vec![
        None,
        c(FilterType::Lz4, -1),
        c(FilterType::Zstd, -1),
        c(FilterType::Zstd, 1),
        c(FilterType::Zstd, 3),
        c(FilterType::Gzip, 1),
        c(FilterType::Gzip, 6),
        c(FilterType::Bzip2, 1),
        c(FilterType::Zstd, 9),
        c(FilterType::Bzip2, 9),
        c(FilterType::Gzip, 9),
        c(FilterType::Zstd, 19),
    ]
}

/// Every candidate pipeline, cheapest first: for each compressor in order, every transform.
/// RLE is tried on the raw cells only.
fn candidates(datatype: Datatype, scale: Option<ScaleFloatOptions>) -> Vec<Vec<Filter>> {
    let transforms = transforms(datatype, scale);
    let mut out = Vec::new();
    for (i, compressor) in compressors().into_iter().enumerate() {
        for t in &transforms {
            let mut filters = t.clone();
            filters.extend(compressor);
            out.push(filters);
        }
        if i == 1 {
            out.push(vec![Filter::compression(FilterType::Rle, -1)]);
        }
    }
    out
}

/// Tries the candidates in order until the time budget runs out.
fn evaluate(
    tiles: &[Tile],
    datatype: Datatype,
    cell_size: u64,
    scale: Option<ScaleFloatOptions>,
    args: &AdviseArgs,
    file_bytes: u64,
) -> Report {
    let started = Instant::now();
    let all = candidates(datatype, scale);
    let mut measured = Vec::new();
    let mut refused = Vec::new();
    let mut tried = 0;
    for filters in &all {
        if started.elapsed() >= args.time_budget {
            break;
        }
        tried += 1;
        let mut pipeline = Pipeline::new();
        pipeline.set_threads(args.threads);
        let built = filters
            .iter()
            .try_for_each(|f| pipeline.push(*f))
            .and_then(|()| pipeline.check_types(datatype, false));
        let spec_text = spec::to_spec(&pipeline);
        let spec_text = if built.is_ok() {
            spec_text
        } else {
            filters_spec(filters)
        };
        let result = built
            .map_err(|e| e.message().to_string())
            .and_then(|()| measure(&pipeline, tiles, args, cell_size));
        match result {
            Ok((filtered_bytes, filter_mibs, unfilter_mibs)) => {
                let input: u64 = tiles.iter().map(|t| t.data().len() as u64).sum();
                measured.push(Measured {
                    tiledb_py: tiledb_py(filters),
                    spec: spec_text,
                    filtered_bytes,
                    ratio: input as f64 / filtered_bytes.max(1) as f64,
                    filter_mibs,
                    unfilter_mibs,
                    lossy: filters.iter().any(|f| matches!(f, Filter::ScaleFloat(_))),
                });
            }
            Err(reason) => refused.push(Refused {
                spec: spec_text,
                reason,
            }),
        }
    }
    Report {
        datatype,
        cell_size,
        sample_bytes: tiles.iter().map(|t| t.data().len() as u64).sum(),
        sample_tiles: tiles.len(),
        file_bytes,
        measured,
        refused,
        untried: all.len() - tried,
        elapsed: started.elapsed(),
    }
}

/// The spec of a filter list that did not build into a pipeline (shown with its refusal).
fn filters_spec(filters: &[Filter]) -> String {
    let mut p = Pipeline::new();
    for f in filters {
        // Pipeline::push only refuses the internal AES filter, never among the candidates.
        if p.push(*f).is_err() {
            return f.name().to_ascii_lowercase();
        }
    }
    spec::to_spec(&p)
}

/// Filters and unfilters every sample tile, checks the round trip and returns the filtered
/// size and the best MiB/s each way. Lossy pipelines are checked against `max_error`.
fn measure(
    pipeline: &Pipeline,
    tiles: &[Tile],
    args: &AdviseArgs,
    cell_size: u64,
) -> Result<(u64, f64, f64), String> {
    let input: u64 = tiles.iter().map(|t| t.data().len() as u64).sum();
    let filtered: Vec<Vec<u8>> = tiles
        .iter()
        .map(|t| pipeline.filter_tile(t))
        .collect::<Result<_, _>>()
        .map_err(|e| e.message().to_string())?;
    let lossy = pipeline
        .filters()
        .iter()
        .any(|f| matches!(f, Filter::ScaleFloat(_)));
    for (i, (tile, bytes)) in tiles.iter().zip(&filtered).enumerate() {
        let back = pipeline
            .unfilter_tile(bytes, tile.datatype(), cell_size)
            .map_err(|e| format!("tile {i}: {}", e.message()))?;
        if lossy {
            let limit = args.max_error.unwrap_or(0.0);
            let worst = float_values(tile.data(), tile.datatype())
                .zip(float_values(back.data(), tile.datatype()))
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            if back.data().len() != tile.data().len() || worst > limit {
                return Err(format!(
                    "tile {i}: error {worst} exceeds --max-error {limit}"
                ));
            }
        } else if back.data() != tile.data() {
            return Err(format!("tile {i}: round trip gave different bytes"));
        }
    }
    let filtered_bytes = filtered.iter().map(|b| b.len() as u64).sum();
    let filter_time = best_time(args.repeat, || {
        for t in tiles {
            pipeline.filter_tile(t).map(drop)?;
        }
        Ok(())
    })?;
    let unfilter_time = best_time(args.repeat, || {
        for (t, bytes) in tiles.iter().zip(&filtered) {
            pipeline
                .unfilter_tile(bytes, t.datatype(), cell_size)
                .map(drop)?;
        }
        Ok(())
    })?;
    let mibs = |d: Duration| input as f64 / MIB / d.as_secs_f64().max(1e-9);
    Ok((filtered_bytes, mibs(filter_time), mibs(unfilter_time)))
}

/// The best of up to `repeat` timed passes (one pass when it takes at least [`MIN_PASS`]).
fn best_time(
    repeat: u32,
    mut pass: impl FnMut() -> tdbfilter::Result<()>,
) -> Result<Duration, String> {
    let mut best = Duration::MAX;
    for _ in 0..repeat {
        let t = Instant::now();
        pass().map_err(|e| e.message().to_string())?;
        best = best.min(t.elapsed());
        if best >= MIN_PASS {
            break;
        }
    }
    Ok(best)
}

/// The measured pipelines in the goal's order, with each one's score (lower is better for
/// `balanced`: seconds per GiB written and read; higher is better for the others).
fn rank(measured: &[Measured], goal: Goal, storage_mibs: f64) -> Vec<(f64, Measured)> {
    let mut scored: Vec<(f64, Measured)> = match goal {
        Goal::Ratio => measured.iter().map(|m| (m.ratio, m.clone())).collect(),
        Goal::Speed => {
            let fast = |m: &Measured| m.filter_mibs.min(m.unfilter_mibs);
            let compressing: Vec<(f64, Measured)> = measured
                .iter()
                .filter(|m| m.ratio >= SPEED_GOAL_MIN_RATIO)
                .map(|m| (fast(m), m.clone()))
                .collect();
            if compressing.is_empty() {
                // Nothing shrinks the data: the empty pipeline (no work at all) first, then
                // the others by speed.
                measured
                    .iter()
                    .map(|m| {
                        let score = if m.spec == "none" {
                            f64::INFINITY
                        } else {
                            fast(m)
                        };
                        (score, m.clone())
                    })
                    .collect()
            } else {
                compressing
            }
        }
        Goal::Balanced => measured
            .iter()
            .map(|m| (balanced_seconds_per_gib(m, storage_mibs), m.clone()))
            .collect(),
    };
    let by_ratio_then_reads = |a: &(f64, Measured), b: &(f64, Measured)| {
        b.1.ratio
            .total_cmp(&a.1.ratio)
            .then(b.1.unfilter_mibs.total_cmp(&a.1.unfilter_mibs))
    };
    match goal {
        Goal::Ratio => scored.sort_by(by_ratio_then_reads),
        Goal::Speed => scored.sort_by(|a, b| b.0.total_cmp(&a.0)),
        Goal::Balanced => scored.sort_by(|a, b| a.0.total_cmp(&b.0)),
    }
    scored
}

/// Seconds to filter, write, read and unfilter one GiB of cells with storage of
/// `storage_mibs` MiB/s.
fn balanced_seconds_per_gib(m: &Measured, storage_mibs: f64) -> f64 {
    let gib = 1024.0;
    gib / m.filter_mibs + gib / m.unfilter_mibs + 2.0 * gib / m.ratio / storage_mibs
}

/// TileDB-Py's `FilterList(...)` for the filters, to paste into a schema.
fn tiledb_py(filters: &[Filter]) -> String {
    let items: Vec<String> = filters.iter().map(tiledb_py_filter).collect();
    format!("tiledb.FilterList([{}])", items.join(", "))
}

fn tiledb_py_filter(f: &Filter) -> String {
    let reinterp = |d: Datatype| {
        if d == Datatype::Any {
            String::new()
        } else {
            format!(", reinterp_dtype=\"{}\"", d.name().to_ascii_lowercase())
        }
    };
    match f {
        Filter::None => "tiledb.NoOpFilter()".into(),
        Filter::Compression(c) => {
            let level = c.level;
            match c.compressor {
                Compressor::Gzip => format!("tiledb.GzipFilter(level={level})"),
                Compressor::Zstd => format!("tiledb.ZstdFilter(level={level})"),
                Compressor::Lz4 => format!("tiledb.LZ4Filter(level={level})"),
                Compressor::Rle => format!("tiledb.RleFilter(level={level})"),
                Compressor::Bzip2 => format!("tiledb.Bzip2Filter(level={level})"),
                Compressor::Dictionary => format!("tiledb.DictionaryFilter(level={level})"),
                Compressor::DoubleDelta => format!(
                    "tiledb.DoubleDeltaFilter(level={level}{})",
                    reinterp(c.reinterpret)
                ),
                Compressor::Delta => {
                    format!(
                        "tiledb.DeltaFilter(level={level}{})",
                        reinterp(c.reinterpret)
                    )
                }
                Compressor::NoCompression => "tiledb.NoOpFilter()".into(),
            }
        }
        Filter::BitWidthReduction { max_window } => {
            format!("tiledb.BitWidthReductionFilter(window={max_window})")
        }
        Filter::PositiveDelta { max_window } => {
            format!("tiledb.PositiveDeltaFilter(window={max_window})")
        }
        Filter::Bitshuffle => "tiledb.BitShuffleFilter()".into(),
        Filter::Byteshuffle => "tiledb.ByteShuffleFilter()".into(),
        Filter::ChecksumMd5 => "tiledb.ChecksumMD5Filter()".into(),
        Filter::ChecksumSha256 => "tiledb.ChecksumSHA256Filter()".into(),
        Filter::ScaleFloat(o) => format!(
            "tiledb.FloatScaleFilter(factor={:?}, offset={:?}, bytewidth={})",
            o.factor, o.offset, o.byte_width
        ),
        Filter::Xor => "tiledb.XORFilter()".into(),
        Filter::Webp(o) => format!(
            "tiledb.WebpFilter(input_format={}, quality={:?}, lossless={})",
            o.input_format,
            o.quality,
            if o.lossless { "True" } else { "False" }
        ),
        // Never a candidate: TileDB appends it itself for encrypted arrays.
        Filter::Aes256Gcm => "None".into(),
    }
}

/// The text report: what was sampled, the ranked table, the recommendation.
fn print_table(
    out: &mut impl Write,
    report: &Report,
    ranked: &[(f64, Measured)],
    args: &AdviseArgs,
) -> CliResult<()> {
    outln!(
        out,
        "sample: {} tile(s), {} of {} bytes of {} cells ({} bytes each); goal: {}{}",
        report.sample_tiles,
        report.sample_bytes,
        report.file_bytes,
        report.datatype.name().to_ascii_lowercase(),
        report.cell_size,
        args.goal.name(),
        if args.goal == Goal::Balanced {
            format!(" (storage at {} MiB/s)", args.storage_mibs)
        } else {
            String::new()
        }
    );
    outln!(
        out,
        "tried {} pipeline(s) in {:.1} s ({} not applicable, {} left untried by the time budget)",
        report.measured.len() + report.refused.len(),
        report.elapsed.as_secs_f64(),
        report.refused.len(),
        report.untried
    );
    outln!(out);
    let width = ranked
        .iter()
        .take(args.top)
        .map(|(_, m)| m.spec.len())
        .max()
        .unwrap_or(4)
        .max(4);
    outln!(
        out,
        "{:>4}  {:<width$}  {:>9}  {:>13}  {:>15}",
        "rank",
        "spec",
        "ratio",
        "filter MiB/s",
        "unfilter MiB/s"
    );
    for (i, (_, m)) in ranked.iter().take(args.top).enumerate() {
        outln!(
            out,
            "{:>4}  {:<width$}  {:>8.2}x  {:>13.0}  {:>15.0}{}",
            i + 1,
            m.spec,
            m.ratio,
            m.filter_mibs,
            m.unfilter_mibs,
            if m.lossy { "  (lossy)" } else { "" }
        );
    }
    if let Some((_, best)) = ranked.first() {
        outln!(out);
        outln!(out, "recommended: {}", best.spec);
        outln!(out, "TileDB-Py:   {}", best.tiledb_py);
    }
    Ok(())
}

/// One ranked pipeline in `tdbf advise --json`.
#[derive(Serialize)]
struct ResultJson<'a> {
    rank: usize,
    spec: &'a str,
    tiledb_py: &'a str,
    ratio: f64,
    filtered_bytes: u64,
    filter_mibs: f64,
    unfilter_mibs: f64,
    lossy: bool,
    /// The goal's score; `null` when infinite (the empty pipeline under `speed` when nothing
    /// compresses).
    score: Option<f64>,
}

/// A pipeline that does not apply to the data, and why.
#[derive(Serialize)]
struct RefusedJson<'a> {
    spec: &'a str,
    reason: &'a str,
}

/// `tdbf advise --json`: one object on one line. Ratios to 6 decimals, speeds (MiB/s) to 3,
/// the elapsed time (seconds) to 3.
#[derive(Serialize)]
struct AdviseJson<'a> {
    #[serde(rename = "type")]
    datatype: String,
    cell_size: u64,
    goal: &'static str,
    storage_mibs: f64,
    file_bytes: u64,
    sample_bytes: u64,
    sample_tiles: usize,
    seconds: f64,
    untried: usize,
    results: Vec<ResultJson<'a>>,
    not_applicable: Vec<RefusedJson<'a>>,
}

/// The JSON report.
fn to_json<'a>(
    report: &'a Report,
    ranked: &'a [(f64, Measured)],
    args: &AdviseArgs,
) -> AdviseJson<'a> {
    AdviseJson {
        datatype: report.datatype.name().to_ascii_lowercase(),
        cell_size: report.cell_size,
        goal: args.goal.name(),
        storage_mibs: args.storage_mibs,
        file_bytes: report.file_bytes,
        sample_bytes: report.sample_bytes,
        sample_tiles: report.sample_tiles,
        seconds: rounded(report.elapsed.as_secs_f64(), 3),
        untried: report.untried,
        results: ranked
            .iter()
            .enumerate()
            .map(|(i, (score, m))| ResultJson {
                rank: i + 1,
                spec: &m.spec,
                tiledb_py: &m.tiledb_py,
                ratio: rounded(m.ratio, 6),
                filtered_bytes: m.filtered_bytes,
                filter_mibs: rounded(m.filter_mibs, 3),
                unfilter_mibs: rounded(m.unfilter_mibs, 3),
                lossy: m.lossy,
                score: score.is_finite().then(|| rounded(*score, 6)),
            })
            .collect(),
        not_applicable: report
            .refused
            .iter()
            .map(|r| RefusedJson {
                spec: &r.spec,
                reason: &r.reason,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("").is_err());
        assert!(parse_duration("5h").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn every_candidate_spec_parses_back() {
        let scale = ScaleFloatOptions {
            factor: 0.5,
            offset: 1.0,
            byte_width: 2,
        };
        for (datatype, scale) in [
            (Datatype::Int64, None),
            (Datatype::Uint8, None),
            (Datatype::Float64, Some(scale)),
            (Datatype::Float32, None),
        ] {
            for filters in candidates(datatype, scale) {
                let spec_text = filters_spec(&filters);
                let parsed = spec::parse(&spec_text).unwrap();
                assert_eq!(parsed.filters(), &filters[..], "{spec_text}");
            }
        }
    }

    #[test]
    fn tiledb_py_names_the_filters_and_options() {
        let p = spec::parse("delta:-1:reinterpret=int64,bitshuffle,zstd:3").unwrap();
        assert_eq!(
            tiledb_py(p.filters()),
            "tiledb.FilterList([tiledb.DeltaFilter(level=-1, reinterp_dtype=\"int64\"), \
             tiledb.BitShuffleFilter(), tiledb.ZstdFilter(level=3)])"
        );
        let p = spec::parse("bit_width_reduction:128,gzip:9").unwrap();
        assert_eq!(
            tiledb_py(p.filters()),
            "tiledb.FilterList([tiledb.BitWidthReductionFilter(window=128), \
             tiledb.GzipFilter(level=9)])"
        );
    }

    #[test]
    fn scale_keeps_the_error_and_picks_the_narrowest_width() {
        let values: Vec<u8> = [10.0f64, 10.5, 11.0, 12.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let o = scale_for(&values, Datatype::Float64, 0.01).unwrap();
        assert_eq!(
            o.byte_width, 1,
            "101 steps each way of the middle fit in int8"
        );
        assert_eq!(o.offset, 11.0);
        assert_eq!(o.factor, 0.01);
        let o = scale_for(&values, Datatype::Float64, 0.001).unwrap();
        assert_eq!(o.byte_width, 2, "1001 steps each way need int16");
        let o = scale_for(&values, Datatype::Float64, 1e-6).unwrap();
        assert_eq!(o.byte_width, 4);
        assert!(scale_for(&values, Datatype::Float64, 1e-300).is_err());
        let nan: Vec<u8> = f64::NAN.to_le_bytes().to_vec();
        assert!(scale_for(&nan, Datatype::Float64, 1.0).is_err());
    }

    fn m(spec: &str, ratio: f64, f: f64, u: f64) -> Measured {
        Measured {
            spec: spec.into(),
            tiledb_py: String::new(),
            filtered_bytes: 0,
            ratio,
            filter_mibs: f,
            unfilter_mibs: u,
            lossy: false,
        }
    }

    #[test]
    fn goals_rank_as_documented() {
        let all = [
            m("none", 1.0, 20000.0, 20000.0),
            m("zstd:19", 5.0, 10.0, 1000.0),
            m("lz4", 2.0, 2000.0, 4000.0),
            m("zstd:3", 4.0, 400.0, 1200.0),
        ];
        let first = |g, s| rank(&all, g, s)[0].1.spec.clone();
        assert_eq!(first(Goal::Ratio, 500.0), "zstd:19");
        assert_eq!(first(Goal::Speed, 500.0), "lz4", "none does not compress");
        // Slow storage favours the better ratio, fast storage the faster codec.
        assert_eq!(first(Goal::Balanced, 50.0), "zstd:3");
        assert_eq!(first(Goal::Balanced, 100000.0), "none");
        let incompressible = [
            m("none", 1.0, 20000.0, 20000.0),
            m("lz4", 0.99, 900.0, 9000.0),
        ];
        assert_eq!(rank(&incompressible, Goal::Speed, 500.0)[0].1.spec, "none");
    }
}
