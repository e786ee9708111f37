//! Pieces shared by the subcommands: the error type, pipeline and datatype options, file I/O
//! and number formatting.

use clap::Args;
use std::fmt;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use tdbfilter::{Datatype, Pipeline, pipeline::FORMAT_VERSION, pipeline::spec};
use zeroize::Zeroizing;

/// Why a subcommand failed. `main` prints the message as `tdbf: <message>` and exits with 1.
#[derive(Debug)]
pub struct Failure {
    /// The message, or `None` when nothing should be printed (stdout was closed).
    message: Option<String>,
}

impl Failure {
    /// A failure with a message.
    pub fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: Some(message.into()),
        }
    }

    /// The message to print, if any.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// A failure writing to stdout. A closed pipe (`tdbf inspect … | head`) ends quietly.
    pub fn stdout(e: io::Error) -> Failure {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Failure { message: None }
        } else {
            Failure::new(format!("cannot write to stdout: {e}"))
        }
    }

    /// Prefixes the message with `what: `.
    pub fn context(self, what: impl fmt::Display) -> Failure {
        Failure {
            message: self.message.map(|m| format!("{what}: {m}")),
        }
    }
}

impl From<tdbfilter::Error> for Failure {
    fn from(e: tdbfilter::Error) -> Failure {
        Failure::new(e.message())
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure::new(message)
    }
}

/// Results of the subcommands.
pub type CliResult<T> = Result<T, Failure>;

/// Writes a line to stdout-like output, turning I/O errors into [`Failure::stdout`].
macro_rules! outln {
    ($w:expr) => {
        writeln!($w).map_err($crate::common::Failure::stdout)?
    };
    ($w:expr, $($arg:tt)*) => {
        writeln!($w, $($arg)*).map_err($crate::common::Failure::stdout)?
    };
}

/// A pipeline that must be given, as a spec or as a serialized pipeline file.
#[derive(Debug, Clone, Args)]
#[group(required = true, multiple = false)]
pub struct RequiredPipeline {
    /// The pipeline as a spec, e.g. 'bitshuffle,zstd:3' or 'none'.
    #[arg(long = "filters", visible_alias = "pipeline", value_name = "SPEC")]
    pub spec: Option<String>,
    /// The pipeline as a file of TileDB's serialized pipeline bytes (docs/FORMAT.md §3).
    #[arg(long, value_name = "PATH")]
    pub pipeline_file: Option<PathBuf>,
}

impl RequiredPipeline {
    /// Builds the pipeline for tiles of `version`.
    pub fn load(&self, version: &FormatVersionArg) -> CliResult<Pipeline> {
        load_pipeline(self.spec.as_deref(), self.pipeline_file.as_deref(), version)?
            .ok_or_else(|| Failure::new("one of --filters or --pipeline-file is required"))
    }
}

/// A pipeline that may be given, as a spec or as a serialized pipeline file.
#[derive(Debug, Clone, Args)]
#[group(required = false, multiple = false)]
pub struct OptionalPipeline {
    /// Also unfilter every tile with this pipeline spec, e.g. 'bitshuffle,zstd:3'.
    #[arg(long = "pipeline", visible_alias = "filters", value_name = "SPEC")]
    pub spec: Option<String>,
    /// Also unfilter every tile with the serialized pipeline in this file (docs/FORMAT.md §3).
    #[arg(long, value_name = "PATH")]
    pub pipeline_file: Option<PathBuf>,
}

impl OptionalPipeline {
    /// Builds the pipeline for tiles of `version`, if one was given.
    pub fn load(&self, version: &FormatVersionArg) -> CliResult<Option<Pipeline>> {
        load_pipeline(self.spec.as_deref(), self.pipeline_file.as_deref(), version)
    }
}

/// `--format-version`: the format version of the tiles.
#[derive(Debug, Clone, Args)]
pub struct FormatVersionArg {
    /// Format version of the tiles: the suffix of their fragment's name (default: 22, TileDB
    /// 2.30). Older versions filtered some tiles with other datatypes (docs/format-versions.md);
    /// a --pipeline-file is parsed with that version's option layouts.
    #[arg(long = "format-version", value_name = "N", default_value_t = FORMAT_VERSION)]
    pub version: u32,
}

/// Builds a pipeline from a spec or from a serialized pipeline file, for tiles of `version`.
fn load_pipeline(
    spec_text: Option<&str>,
    file: Option<&Path>,
    version: &FormatVersionArg,
) -> CliResult<Option<Pipeline>> {
    if let Some(text) = spec_text {
        let mut p = spec::parse(text)
            .map_err(|e| Failure::from(e).context(format_args!("invalid filter spec '{text}'")))?;
        p.set_format_version(version.version)
            .map_err(|e| Failure::from(e).context("--format-version"))?;
        return Ok(Some(p));
    }
    if let Some(path) = file {
        let bytes = read_input(path)?;
        let p = Pipeline::deserialize(&bytes, version.version).map_err(|e| {
            Failure::from(e).context(format_args!("pipeline file '{}'", path.display()))
        })?;
        return Ok(Some(p));
    }
    Ok(None)
}

/// A human-readable description of a pipeline: its spec.
pub fn describe_pipeline(p: &Pipeline) -> String {
    spec::to_spec(p)
}

/// Resolves `--type` and `--cell-size` (default: the type's size), checking that the cell size
/// is a positive multiple of the type's size.
pub fn resolve_cells(type_name: &str, cell_size: Option<u64>) -> CliResult<(Datatype, u64)> {
    let datatype = parse_datatype(type_name)?;
    let cell_size = cell_size.unwrap_or(datatype.size() as u64);
    tdbfilter::check_cell_size(datatype, cell_size)
        .map_err(|e| Failure::from(e).context("--cell-size"))?;
    Ok((datatype, cell_size))
}

/// Parses a datatype name case-insensitively, listing the valid names on failure.
pub fn parse_datatype(name: &str) -> CliResult<Datatype> {
    Datatype::from_name(name.trim()).ok_or_else(|| {
        let names: Vec<String> = Datatype::ALL
            .iter()
            .map(|d| d.name().to_ascii_lowercase())
            .collect();
        Failure::new(format!(
            "unknown datatype '{name}' (expected one of: {})",
            names.join(", ")
        ))
    })
}

/// Parses a byte count: digits with an optional binary suffix K, KiB, M, MiB, G or GiB.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    let bad = || format!("'{text}' is not a byte count (e.g. 65536, 64K, 1MiB)");
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let multiplier: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        _ => return Err(bad()),
    };
    n.checked_mul(multiplier).ok_or_else(bad)
}

/// Whether a path means stdin/stdout.
fn is_dash(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Reads a whole file, or stdin for `-`.
pub fn read_input(path: &Path) -> CliResult<Vec<u8>> {
    let result = if is_dash(path) {
        let mut bytes = Vec::new();
        io::stdin().lock().read_to_end(&mut bytes).map(|_| bytes)
    } else {
        std::fs::read(path)
    };
    result.map_err(|e| Failure::new(format!("cannot read '{}': {e}", path.display())))
}

/// Writes a whole file, or stdout for `-`.
pub fn write_output(path: &Path, bytes: &[u8]) -> CliResult<()> {
    let result = if is_dash(path) {
        let mut out = io::stdout().lock();
        out.write_all(bytes).and_then(|()| out.flush())
    } else {
        std::fs::write(path, bytes)
    };
    result.map_err(|e| Failure::new(format!("cannot write '{}': {e}", path.display())))
}

/// Where a subcommand's report goes: stdout, or stderr when stdout carries the output data.
pub fn report_stream(output: &Path) -> Box<dyn Write> {
    if is_dash(output) {
        Box::new(io::stderr())
    } else {
        Box::new(io::stdout())
    }
}

/// `input / output` as a compression ratio, e.g. `3.52x` (`-` when undefined).
pub fn ratio(input: u64, output: u64) -> String {
    if output == 0 {
        "-".into()
    } else {
        format!("{:.2}x", input as f64 / output as f64)
    }
}

/// `value` as one line of compact JSON.
pub fn to_json(value: &impl serde::Serialize) -> CliResult<String> {
    serde_json::to_string(value).map_err(|e| Failure::new(format!("cannot encode JSON: {e}")))
}

/// Prints `value` as one line of compact JSON.
pub fn print_json(out: &mut impl Write, value: &impl serde::Serialize) -> CliResult<()> {
    let text = to_json(value)?;
    outln!(out, "{text}");
    Ok(())
}

/// `x` rounded to `places` decimals, the number `{x:.places$}` prints (for JSON reports, whose
/// numbers carry no more digits than they measured).
pub fn rounded(x: f64, places: usize) -> f64 {
    format!("{x:.places$}").parse().unwrap_or(x)
}

/// Parses `--key`: the 32-character key string (TileDB's `sm.encryption_key`, used as raw
/// bytes) or `hex:` followed by 64 hex digits.
pub fn parse_key(text: &str) -> CliResult<Zeroizing<Vec<u8>>> {
    let key = if let Some(digits) = text.strip_prefix("hex:") {
        if digits.len() != 64 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Failure::new(format!(
                "--key: 'hex:' must be followed by 64 hex digits (32 bytes), got {} characters",
                digits.len()
            )));
        }
        Zeroizing::new(
            (0..32)
                .map(|i| u8::from_str_radix(&digits[2 * i..2 * i + 2], 16).expect("hex digits"))
                .collect(),
        )
    } else {
        Zeroizing::new(text.as_bytes().to_vec())
    };
    if key.len() != 32 {
        return Err(Failure::new(format!(
            "--key: AES-256-GCM keys are 32 bytes: the 32-character key string or \
             hex:<64 hex digits>; got {} bytes",
            key.len()
        )));
    }
    Ok(key)
}

/// One coordinate of `datatype` from the text of `option` (an integer in the type's range, or
/// a float), as little-endian bytes.
pub fn parse_coordinate(option: &str, datatype: Datatype, text: &str) -> CliResult<Vec<u8>> {
    let bad = || Failure::new(format!("{option}: '{text}' is not a {datatype} value"));
    Ok(match datatype {
        Datatype::Float32 => text
            .parse::<f32>()
            .map_err(|_| bad())?
            .to_le_bytes()
            .to_vec(),
        Datatype::Float64 => text
            .parse::<f64>()
            .map_err(|_| bad())?
            .to_le_bytes()
            .to_vec(),
        d => {
            let v = text.parse::<i128>().map_err(|_| bad())?;
            let bytes = tdbfilter::array::value::from_i128(d, v);
            if tdbfilter::array::value::as_i128(d, &bytes).ok() != Some(v) {
                return Err(bad());
            }
            bytes
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("65536"), Ok(65536));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size(" 2g "), Ok(2 << 30));
        assert!(parse_size("").is_err());
        assert!(parse_size("1.5M").is_err());
        assert!(parse_size("12X").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
    }

    #[test]
    fn datatypes_and_cells_resolve() {
        assert_eq!(
            resolve_cells("INT32", None).ok().map(|r| r.1),
            Some(4),
            "default cell size"
        );
        assert!(resolve_cells("int32", Some(12)).is_ok());
        assert!(resolve_cells("int32", Some(6)).is_err());
        let e = parse_datatype("int33").unwrap_err();
        assert!(e.message().unwrap_or("").contains("datetime_ns"));
    }

    #[test]
    fn numbers_round_to_their_printed_digits() {
        assert_eq!(rounded(3.521_739_130_434_782_7, 6), 3.521739);
        assert_eq!(rounded(2.5, 3), 2.5);
        assert_eq!(rounded(1e-10, 9), 0.0);
        assert!(rounded(f64::INFINITY, 3).is_infinite());
        assert_eq!(
            to_json(&rounded(1234.56789, 3)).ok().as_deref(),
            Some("1234.568")
        );
    }
}
