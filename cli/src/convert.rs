//! `tdbf filter` and `tdbf unfilter`: raw cells to filtered tiles and back, file to file.

use crate::common::{
    CliResult, Failure, FormatVersionArg, RequiredPipeline, describe_pipeline, parse_size, ratio,
    read_input, report_stream, resolve_cells, write_output,
};
use crate::tiles::Tiles;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use tdbfilter::Tile;

/// Options of `tdbf filter`.
#[derive(Debug, Args)]
pub struct FilterArgs {
    /// The pipeline.
    #[command(flatten)]
    pub pipeline: RequiredPipeline,
    #[command(flatten)]
    pub format_version: FormatVersionArg,
    /// Datatype of the cells (int32, float64, uint8, datetime_ns, …; case-insensitive).
    #[arg(long = "type", value_name = "TYPE")]
    pub datatype: String,
    /// Bytes per cell [default: the datatype's size].
    #[arg(long, value_name = "BYTES")]
    pub cell_size: Option<u64>,
    /// Threads filtering the chunks of a tile (0 = all cores).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// Bytes per tile, rounded down to whole cells (K/M/G suffixes allowed)
    /// [default: the whole file is one tile].
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub tile_bytes: Option<u64>,
    /// Also write the serialized pipeline (TileDB bytes, docs/FORMAT.md §3) to this file.
    #[arg(long, value_name = "PATH")]
    pub save_pipeline: Option<PathBuf>,
    /// Raw cells to filter ('-' for stdin).
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    /// Where to write the concatenated filtered tiles ('-' for stdout).
    #[arg(value_name = "OUT")]
    pub output: PathBuf,
}

/// Options of `tdbf unfilter`.
#[derive(Debug, Args)]
pub struct UnfilterArgs {
    /// The pipeline the tiles were filtered with.
    #[command(flatten)]
    pub pipeline: RequiredPipeline,
    #[command(flatten)]
    pub format_version: FormatVersionArg,
    /// Datatype of the cells (int32, float64, uint8, datetime_ns, …; case-insensitive).
    #[arg(long = "type", value_name = "TYPE")]
    pub datatype: String,
    /// Bytes per cell [default: the datatype's size].
    #[arg(long, value_name = "BYTES")]
    pub cell_size: Option<u64>,
    /// Threads unfiltering the chunks of a tile (0 = all cores).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// A concatenation of filtered tiles ('-' for stdin).
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    /// Where to write the concatenated cells ('-' for stdout).
    #[arg(value_name = "OUT")]
    pub output: PathBuf,
}

/// Runs `tdbf filter`.
pub fn filter(args: &FilterArgs) -> CliResult<()> {
    let (datatype, cell_size) = resolve_cells(&args.datatype, args.cell_size)?;
    let mut pipeline = args.pipeline.load(&args.format_version)?;
    pipeline.set_threads(args.threads);
    let data = read_input(&args.input)?;
    let cell = usize::try_from(cell_size).map_err(|_| Failure::new("cell size too large"))?;
    if data.len() % cell != 0 {
        return Err(Failure::new(format!(
            "'{}' is {} bytes, not a whole number of {cell}-byte {datatype} cells",
            args.input.display(),
            data.len()
        )));
    }
    let tile_len = match args.tile_bytes {
        None => data.len().max(cell),
        Some(bytes) => {
            let whole = usize::try_from(bytes).unwrap_or(usize::MAX) / cell * cell;
            if whole == 0 {
                return Err(Failure::new(format!(
                    "--tile-bytes {bytes} is smaller than one {cell}-byte cell"
                )));
            }
            whole
        }
    };
    // An empty input still becomes one (empty) tile, so the output is a valid tile sequence.
    let pieces: Vec<&[u8]> = if data.is_empty() {
        vec![&[]]
    } else {
        data.chunks(tile_len).collect()
    };
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    for (i, piece) in pieces.iter().enumerate() {
        let start = i * tile_len;
        let tile = Tile::new(datatype, cell_size, piece.to_vec())?;
        let filtered = pipeline.filter_tile(&tile).map_err(|e| {
            Failure::from(e).context(format_args!(
                "tile {i} (input bytes {start}..{})",
                start + piece.len()
            ))
        })?;
        out.extend_from_slice(&filtered);
    }
    write_output(&args.output, &out)?;
    if let Some(path) = &args.save_pipeline {
        write_output(path, &pipeline.serialize())?;
    }
    let mut report = report_stream(&args.output);
    outln!(
        report,
        "filtered {} bytes in {} tile(s) with {} ({datatype}, cell size {cell_size}): {} bytes, ratio {}",
        data.len(),
        pieces.len(),
        describe_pipeline(&pipeline),
        out.len(),
        ratio(data.len() as u64, out.len() as u64)
    );
    Ok(())
}

/// Runs `tdbf unfilter`.
pub fn unfilter(args: &UnfilterArgs) -> CliResult<()> {
    let (datatype, cell_size) = resolve_cells(&args.datatype, args.cell_size)?;
    let mut pipeline = args.pipeline.load(&args.format_version)?;
    pipeline.set_threads(args.threads);
    let data = read_input(&args.input)?;
    let mut out = Vec::with_capacity(data.len().saturating_mul(2));
    let mut count = 0usize;
    for span in Tiles::new(&data) {
        let span = span.map_err(|e| e.context(args.input.display()))?;
        let tile = pipeline
            .unfilter_tile(span.bytes, datatype, cell_size)
            .map_err(|e| {
                Failure::from(e).context(format_args!(
                    "{}: tile {} at byte offset {}",
                    args.input.display(),
                    span.index,
                    span.offset
                ))
            })?;
        out.extend_from_slice(tile.data());
        count += 1;
    }
    write_output(&args.output, &out)?;
    let mut report = report_stream(&args.output);
    outln!(
        report,
        "unfiltered {} tile(s) of {} bytes with {} ({datatype}, cell size {cell_size}): {} bytes",
        count,
        data.len(),
        describe_pipeline(&pipeline),
        out.len()
    );
    Ok(())
}
