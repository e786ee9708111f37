//! `tdbf array metadata ARRAY put|delete`: writes array metadata (`__meta`, docs/ARRAY.md §6)
//! as TileDB does, one new file per call.

use crate::common::{CliResult, Failure, parse_datatype, parse_key};
use clap::{Args, Subcommand};
use tdbfilter::Datatype;
use tdbfilter::array::metadata::{MetadataChange, MetadataEntry};
use tdbfilter::array::write_metadata;

/// `tdbf array metadata`.
#[derive(Debug, Args)]
pub struct MetadataArgs {
    /// The array: a folder, or s3://bucket/path, azure://container/path, gs://bucket/path.
    #[arg(value_name = "ARRAY")]
    pub path: String,
    /// Object-store option KEY=VALUE (repeatable), e.g. vfs.s3.endpoint_override=host:port,
    /// vfs.s3.scheme=http, s3.region=us-east-1; unset ones come from the environment
    /// (AWS_*, AZURE_STORAGE_*, GOOGLE_*).
    #[arg(long = "config", value_name = "KEY=VALUE", global = true)]
    pub config: Vec<String>,
    /// AES-256-GCM key of an encrypted array: 32 characters, or hex:<64 hex digits>.
    #[arg(long, value_name = "KEY", global = true)]
    pub key: Option<String>,
    /// Write at this timestamp (ms) instead of now.
    #[arg(long, value_name = "MS", global = true)]
    pub timestamp: Option<u64>,
    /// Put or delete.
    #[command(subcommand)]
    pub change: MetadataCommand,
}

/// The metadata changes.
#[derive(Debug, Subcommand)]
pub enum MetadataCommand {
    /// Put NAME with VALUES: numbers of --type (default: INT64 if every value is an integer,
    /// else FLOAT64, as TileDB-Py stores Python ints and floats), or one text value
    /// (`--type STRING_UTF8`, the default for a value that is not a number).
    Put {
        /// The key.
        name: String,
        /// The values.
        #[arg(required = true, allow_negative_numbers = true)]
        values: Vec<String>,
        /// The values' TileDB datatype (INT32, FLOAT64, STRING_UTF8, ...).
        #[arg(long = "type", value_name = "TYPE")]
        datatype: Option<String>,
    },
    /// Delete NAME.
    Delete {
        /// The key.
        name: String,
    },
}

/// The bytes of `values` as `datatype`.
pub(crate) fn encode(datatype: Datatype, values: &[String]) -> CliResult<(u32, Vec<u8>)> {
    if datatype.is_string() || datatype.is_byte() {
        if values.len() != 1 {
            return Err(Failure::new(format!(
                "a {} value is one text argument, not {}",
                datatype.name(),
                values.len()
            )));
        }
        let bytes = values[0].as_bytes().to_vec();
        let n = u32::try_from(bytes.len()).map_err(|_| Failure::new("value too long"))?;
        return Ok((n, bytes));
    }
    let mut out = Vec::with_capacity(values.len() * datatype.size());
    for v in values {
        let bad = || Failure::new(format!("'{v}' is not a {} value", datatype.name()));
        if datatype.is_real() {
            let x: f64 = v.trim().parse().map_err(|_| bad())?;
            if datatype.size() == 4 {
                out.extend((x as f32).to_le_bytes());
            } else {
                out.extend(x.to_le_bytes());
            }
        } else {
            let x: i128 = v.trim().parse().map_err(|_| bad())?;
            let bytes = tdbfilter::array::value::from_i128(datatype, x);
            if tdbfilter::array::value::as_i128(datatype, &bytes)? != x {
                return Err(Failure::new(format!(
                    "{x} is out of range for {}",
                    datatype.name()
                )));
            }
            out.extend(bytes);
        }
    }
    let n = u32::try_from(values.len()).map_err(|_| Failure::new("too many values"))?;
    Ok((n, out))
}

/// TileDB-Py's choice for values without a type: INT64, FLOAT64 or STRING_UTF8.
pub(crate) fn infer(values: &[String]) -> Datatype {
    if values.iter().all(|v| v.trim().parse::<i64>().is_ok()) {
        Datatype::Int64
    } else if values.iter().all(|v| v.trim().parse::<f64>().is_ok()) {
        Datatype::Float64
    } else {
        Datatype::StringUtf8
    }
}

/// Runs `tdbf array metadata`: prints the new metadata file's name.
pub fn run(args: &MetadataArgs, out: &mut impl std::io::Write) -> CliResult<()> {
    let key = args.key.as_deref().map(parse_key).transpose()?;
    let change = match &args.change {
        MetadataCommand::Put {
            name,
            values,
            datatype,
        } => {
            let datatype = match datatype {
                Some(t) => parse_datatype(t)?,
                None => infer(values),
            };
            let (n, bytes) = encode(datatype, values)?;
            MetadataChange::Put(MetadataEntry::new(name, datatype, n, &bytes)?)
        }
        MetadataCommand::Delete { name } => MetadataChange::Delete(name.clone()),
    };
    let file = write_metadata(
        &args.path,
        key.as_ref().map(|k| k.as_slice()),
        args.timestamp,
        &[change],
        &crate::array::storage_config(&args.config)?,
    )
    .map_err(|e| Failure::from(e).context(&args.path))?;
    if let Some(f) = file {
        writeln!(out, "{f}").map_err(Failure::stdout)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn values_are_typed_as_tiledb_py_types_them() {
        assert_eq!(infer(&s(&["1", "-2"])), Datatype::Int64);
        assert_eq!(infer(&s(&["1", "2.5"])), Datatype::Float64);
        assert_eq!(infer(&s(&["hello"])), Datatype::StringUtf8);
        let (n, b) = encode(Datatype::Int16, &s(&["-3", "7"])).unwrap();
        assert_eq!((n, b), (2, vec![0xfd, 0xff, 7, 0]));
        let (n, b) = encode(Datatype::Float32, &s(&["0.5"])).unwrap();
        assert_eq!((n, b), (1, 0.5f32.to_le_bytes().to_vec()));
        assert!(encode(Datatype::Uint8, &s(&["256"])).is_err());
        assert!(encode(Datatype::Int32, &s(&["x"])).is_err());
        assert!(encode(Datatype::StringAscii, &s(&["a", "b"])).is_err());
        assert_eq!(encode(Datatype::StringUtf8, &s(&["hé"])).unwrap().0, 3);
    }
}
