//! `tdbf inspect`: walks a TileDB file tile by tile and reports its chunk tables, and
//! optionally unfilters every tile.
//!
//! Two layouts ([`Layout`]): a data file (`a0.tdb`, `d0.tdb`, …), a plain concatenation of
//! filtered tiles (docs/FORMAT.md §4.1), reported by [`TileReporter`]; and a file of generic tiles
//! (§6: schemas, fragment metadata, array metadata), reported by [`generic`].

use crate::common::{
    CliResult, Failure, FormatVersionArg, OptionalPipeline, describe_pipeline, parse_datatype,
    ratio, read_input,
};
use crate::tiles::{TileSpan, Tiles};
#[path = "inspect_generic.rs"]
mod generic;
use clap::Args;
use std::io::{self, Write};
use std::path::PathBuf;
use tdbfilter::{Datatype, Pipeline, format::tile_format};

/// Options of `tdbf inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The file to inspect, e.g. `__fragments/<fragment>/a0.tdb`.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Datatype of the cells, needed to unfilter (int32, float64, …; case-insensitive).
    #[arg(long = "type", value_name = "TYPE")]
    pub datatype: Option<String>,
    /// Bytes per cell [default: the datatype's size].
    #[arg(long, value_name = "BYTES", requires = "datatype")]
    pub cell_size: Option<u64>,
    /// Optional pipeline to unfilter every tile with.
    #[command(flatten)]
    pub pipeline: OptionalPipeline,
    #[command(flatten)]
    pub format_version: FormatVersionArg,
    /// Threads unfiltering the chunks of a tile (0 = all cores).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// Also list every chunk: original, metadata and data lengths.
    #[arg(long, short)]
    pub verbose: bool,
    /// AES-256-GCM key of an encrypted array: the 32-character key string (TileDB's
    /// `sm.encryption_key`, used as raw bytes) or `hex:` and 64 hex digits. Decrypts generic
    /// tiles, or data tiles unfiltered with --pipeline.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
}

/// How the bytes of an inspected file are organised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// A concatenation of filtered tiles (fragment data files).
    DataTiles,
    /// Generic tiles (schemas, fragment metadata sections, array metadata), possibly followed
    /// by a fragment metadata footer.
    GenericTiles,
}

impl Layout {
    /// Decides the layout of `file`: generic tiles when it starts with a generic-tile header
    /// (§6), otherwise a data file.
    fn detect(file: &[u8]) -> Layout {
        if generic::looks_generic(file) {
            Layout::GenericTiles
        } else {
            Layout::DataTiles
        }
    }

    /// A description for the report header.
    fn describe(self) -> &'static str {
        match self {
            Layout::DataTiles => "data file (concatenated filtered tiles)",
            Layout::GenericTiles => "generic tiles (schema, fragment metadata or metadata)",
        }
    }
}

/// What to unfilter tiles with.
struct Unfilter {
    pipeline: Pipeline,
    datatype: Datatype,
    cell_size: u64,
}

/// Totals over the inspected tiles.
#[derive(Default)]
struct Totals {
    tiles: u64,
    chunks: u64,
    filtered: u64,
    unfiltered: u64,
    unfilter_ok: u64,
    unfilter_failed: u64,
}

/// Prints one line (or block, with `--verbose`) per filtered tile and accumulates totals.
struct TileReporter<'a, W: Write> {
    out: W,
    verbose: bool,
    unfilter: Option<&'a Unfilter>,
    totals: Totals,
}

impl<W: Write> TileReporter<'_, W> {
    /// Prints the column header.
    fn header(&mut self) -> CliResult<()> {
        let check = if self.unfilter.is_some() {
            "  unfilter"
        } else {
            ""
        };
        outln!(
            self.out,
            "{:>6} {:>12} {:>12} {:>7} {:>12} {:>8}{check}",
            "tile",
            "offset",
            "filtered",
            "chunks",
            "unfiltered",
            "ratio"
        );
        Ok(())
    }

    /// Reports one filtered tile (`span.bytes` holds exactly the tile).
    fn tile(&mut self, span: &TileSpan<'_>) -> CliResult<()> {
        let table = tile_format::parse(span.bytes).map_err(|e| {
            Failure::from(e).context(format_args!(
                "tile {} at byte offset {}",
                span.index, span.offset
            ))
        })?;
        let filtered = span.bytes.len() as u64;
        let result = self.unfilter.map(|u| {
            u.pipeline
                .unfilter_tile(span.bytes, u.datatype, u.cell_size)
                .map(|_| ())
        });
        let check = match &result {
            None => String::new(),
            Some(Ok(())) => "  ok".into(),
            Some(Err(_)) => "  FAILED".into(),
        };
        outln!(
            self.out,
            "{:>6} {:>12} {:>12} {:>7} {:>12} {:>8}{check}",
            span.index,
            span.offset,
            filtered,
            table.chunks.len(),
            table.unfiltered_size,
            ratio(table.unfiltered_size, filtered)
        );
        if let Some(Err(e)) = &result {
            outln!(self.out, "{:>6} error: {e}", "");
        }
        if self.verbose && !table.chunks.is_empty() {
            outln!(
                self.out,
                "{:>6} {:>12} {:>12} {:>12} {:>12}",
                "",
                "chunk",
                "original",
                "metadata",
                "data"
            );
            for (i, c) in table.chunks.iter().enumerate() {
                outln!(
                    self.out,
                    "{:>6} {:>12} {:>12} {:>12} {:>12}",
                    "",
                    i,
                    c.original_length,
                    c.metadata.len(),
                    c.data.len()
                );
            }
        }
        let t = &mut self.totals;
        t.tiles += 1;
        t.chunks += table.chunks.len() as u64;
        t.filtered += filtered;
        t.unfiltered += table.unfiltered_size;
        match result {
            Some(Ok(())) => t.unfilter_ok += 1,
            Some(Err(_)) => t.unfilter_failed += 1,
            None => {}
        }
        Ok(())
    }

    /// Prints the summary line.
    fn summary(&mut self) -> CliResult<()> {
        let t = &self.totals;
        let mut line = format!(
            "{} tile(s), {} chunk(s), {} filtered bytes, {} unfiltered bytes, ratio {}",
            t.tiles,
            t.chunks,
            t.filtered,
            t.unfiltered,
            ratio(t.unfiltered, t.filtered)
        );
        if let Some(u) = self.unfilter {
            line.push_str(&format!(
                "; unfiltered with {} ({}, cell size {}): {} ok, {} failed",
                describe_pipeline(&u.pipeline),
                u.datatype,
                u.cell_size,
                t.unfilter_ok,
                t.unfilter_failed
            ));
        }
        outln!(self.out, "{line}");
        Ok(())
    }
}

/// Runs `tdbf inspect`.
pub fn run(args: &InspectArgs) -> CliResult<()> {
    let key = args
        .key
        .as_deref()
        .map(crate::common::parse_key)
        .transpose()?;
    let unfilter = match args.pipeline.load(&args.format_version)? {
        None => None,
        Some(mut pipeline) => {
            let type_name = args.datatype.as_deref().ok_or_else(|| {
                Failure::new("--type is required to unfilter tiles with a pipeline")
            })?;
            let datatype = parse_datatype(type_name)?;
            let cell_size = args.cell_size.unwrap_or(datatype.size() as u64);
            tdbfilter::check_cell_size(datatype, cell_size)
                .map_err(|e| Failure::from(e).context("--cell-size"))?;
            pipeline.set_threads(args.threads);
            if let Some(key) = &key {
                pipeline
                    .set_encryption_key(key)
                    .map_err(|e| Failure::from(e).context("--key"))?;
            }
            Some(Unfilter {
                pipeline,
                datatype,
                cell_size,
            })
        }
    };
    let data = read_input(&args.file)?;
    let layout = Layout::detect(&data);
    match layout {
        Layout::GenericTiles if unfilter.is_some() || args.datatype.is_some() => {
            return Err(Failure::new(format!(
                "{}: generic tiles carry their own pipeline, datatype and cell size; \
                 --pipeline, --pipeline-file and --type apply to data files only",
                args.file.display()
            )));
        }
        Layout::DataTiles if key.is_some() && unfilter.is_none() => {
            return Err(Failure::new(
                "--key: a data file is decrypted while unfiltering: give --pipeline and --type",
            ));
        }
        _ => {}
    }
    let stdout = io::stdout();
    let mut reporter = TileReporter {
        out: stdout.lock(),
        verbose: args.verbose,
        unfilter: unfilter.as_ref(),
        totals: Totals::default(),
    };
    outln!(
        reporter.out,
        "{}: {} bytes, {}",
        args.file.display(),
        data.len(),
        layout.describe()
    );
    if layout == Layout::GenericTiles {
        let name = args.file.display().to_string();
        return generic::run(
            &mut reporter.out,
            &name,
            &data,
            key.as_deref().map(|k| &k[..]),
            args.verbose,
        );
    }
    reporter.header()?;
    for span in Tiles::new(&data) {
        let span = span.map_err(|e| e.context(args.file.display()))?;
        reporter.tile(&span)?;
    }
    reporter.summary()?;
    let failed = reporter.totals.unfilter_failed;
    if failed > 0 {
        return Err(Failure::new(format!(
            "{}: {failed} tile(s) failed to unfilter",
            args.file.display()
        )));
    }
    Ok(())
}
