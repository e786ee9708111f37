//! `tdbf array delete ARRAY --cond EXPR`: deletes the cells of a sparse array matching a
//! condition, as TileDB's delete queries do (one `__commits/…_22.del` commit).

use crate::common::{CliResult, Failure, parse_key};
use clap::Args;
use tdbfilter::array::lifecycle::{DeleteCellsOptions, delete_cells};

/// `tdbf array delete`.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The array: a folder, or s3://bucket/path, azure://container/path, gs://bucket/path.
    #[arg(value_name = "ARRAY")]
    pub path: String,
    /// The cells to delete: a condition in TileDB-Py's syntax, e.g. "a < 5 and s == 'x'".
    #[arg(long, value_name = "EXPR")]
    pub cond: String,
    /// Delete at this timestamp (ms) instead of now: cells written at or before it go.
    #[arg(long, value_name = "MS")]
    pub timestamp: Option<u64>,
    /// Object-store option KEY=VALUE (repeatable), e.g. vfs.s3.endpoint_override=host:port,
    /// vfs.s3.scheme=http, s3.region=us-east-1; unset ones come from the environment
    /// (AWS_*, AZURE_STORAGE_*, GOOGLE_*).
    #[arg(long = "config", value_name = "KEY=VALUE")]
    pub config: Vec<String>,
    /// AES-256-GCM key of an encrypted array: 32 characters, or hex:<64 hex digits>.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
}

/// Runs `tdbf array delete`: prints the delete commit's name.
pub fn run(args: &DeleteArgs, out: &mut impl std::io::Write) -> CliResult<()> {
    let key = args.key.as_deref().map(parse_key).transpose()?;
    let options = DeleteCellsOptions {
        key: key.map(|k| k.to_vec()),
        config: crate::array::storage_config(&args.config)?,
    };
    let commit = delete_cells(&args.path, &args.cond, args.timestamp, &options)
        .map_err(|e| Failure::from(e).context(&args.path))?;
    writeln!(out, "{commit}").map_err(Failure::stdout)
}
