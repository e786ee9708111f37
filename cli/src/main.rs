//! `tdbf`: a command-line front end to the tdbfilter library.
//!
//! * `tdbf demo` filters generated sample data through a few pipelines and prints sizes,
//!   ratios and speeds, verifying every round trip.
//! * `tdbf inspect FILE` walks a TileDB data file tile by tile (docs/FORMAT.md §4.1).
//! * `tdbf filter` / `tdbf unfilter` convert between raw cells and filtered tiles.
//! * `tdbf array info|cat|verify` reads TileDB array folders (schema, fragments, cells) and
//!   checks every tile of them; `tdbf array write` writes a fragment; `tdbf array
//!   consolidate|vacuum|delete-fragments|remove|evolve` are the array lifecycle.
//! * `tdbf group create|add|remove|info|metadata` works on TileDB groups.
//! * `tdbf bench` measures a pipeline's filter and unfilter throughput on the tiles of a file
//!   (or memcpy of the same tiles, as a baseline).
//! * `tdbf advise` ranks TileDB's pipelines for a file of cells by ratio, speed or both.
//!
//! Every error is printed as `tdbf: <message>` on stderr with exit status 1; `--json` reports
//! are written with serde_json.
//!
//! Built only with the crate's `cli` feature (`cargo build --release --workspace`), which
//! brings the CLI's own dependencies (clap, serde, serde_json); the library has none of them.

#![forbid(unsafe_code)]

#[macro_use]
mod common;
mod advise;
mod array;
mod array_lifecycle;
mod array_delete;
mod array_metadata;
mod array_query;
mod array_write;
mod bench;
mod bench_codec;
mod convert;
mod demo;
mod demo_array;
mod group;
mod inspect;
mod tiles;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "tdbf",
    version,
    about = "TileDB 2.30 tile filter pipelines from the command line",
    long_about = "TileDB 2.30 tile filter pipelines from the command line.\n\n\
        Pipeline specs are comma-separated filter names, each optionally followed by \
        ':LEVEL' or ':option=value', e.g. 'bitshuffle,zstd:3', 'checksum_sha256,gzip:level=9'. \
        'none' is the empty pipeline."
)]
struct Cli {
    /// What to do.
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Filter generated sample data through several pipelines and report sizes and speeds.
    Demo(demo::DemoArgs),
    /// Walk a TileDB data file (a concatenation of filtered tiles) tile by tile.
    Inspect(inspect::InspectArgs),
    /// Split a file of raw cells into tiles and write the concatenated filtered tiles.
    Filter(convert::FilterArgs),
    /// Unfilter a concatenation of filtered tiles and write the concatenated cells.
    Unfilter(convert::UnfilterArgs),
    /// Measure a pipeline's filter and unfilter speed (MiB/s, median of repeats) on the tiles
    /// of a file, verifying every round trip; or memcpy of the same tiles with --memcpy.
    Bench(bench::BenchArgs),
    /// Read TileDB array folders without libtiledb: schema and fragments, cells, integrity;
    /// create arrays from a schema JSON.
    Array(array::ArrayArgs),
    /// TileDB groups: create them, add and remove members, read members and metadata, put and
    /// delete metadata.
    Group(group::GroupArgs),
    /// Try TileDB's pipelines for the datatype on a sample of a file's tiles and rank them
    /// by ratio, speed or both, with the spec and TileDB-Py FilterList to paste.
    Advise(advise::AdviseArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_failure(e),
    };
    let result = match cli.command {
        Command::Demo(args) => demo::run(&args),
        Command::Inspect(args) => inspect::run(&args),
        Command::Filter(args) => convert::filter(&args),
        Command::Unfilter(args) => convert::unfilter(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Array(args) => array::run(&args),
        Command::Group(args) => group::run(&args),
        Command::Advise(args) => advise::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            if let Some(message) = failure.message() {
                eprintln!("tdbf: {message}");
            }
            ExitCode::from(1)
        }
    }
}

/// Reports a command-line parsing problem: help and version go to stdout with status 0,
/// usage errors to stderr as `tdbf: …` with status 1.
fn clap_failure(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            // Nothing useful can be done if stdout is gone.
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(1)
        }
        _ => {
            let text = e.to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            eprint!("tdbf: {text}");
            if !text.ends_with('\n') {
                eprintln!();
            }
            ExitCode::from(1)
        }
    }
}
