//! Storage options as key/value pairs: this crate's own short keys and TileDB's `vfs.*` names
//! for the same settings. Anything not set explicitly comes from the standard environment
//! variables (`AWS_*`, `AZURE_STORAGE_*`, `GOOGLE_*`) when the object store is built.

use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::fmt;

/// What a value must look like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Text,
    Bool,
    Count,
    /// `http` or `https`.
    Scheme,
}

/// Every key: (canonical name, TileDB's names for it, value kind, what it sets).
const KEYS: &[(&str, &[&str], Kind, &str)] = &[
    (
        "s3.endpoint",
        &["vfs.s3.endpoint_override"],
        Kind::Text,
        "S3 endpoint: host[:port] or a URL",
    ),
    (
        "s3.scheme",
        &["vfs.s3.scheme"],
        Kind::Scheme,
        "http or https for an endpoint without a scheme (http also allows plain HTTP)",
    ),
    (
        "s3.allow_http",
        &[],
        Kind::Bool,
        "allow plain-HTTP endpoints",
    ),
    (
        "s3.virtual_addressing",
        &["vfs.s3.use_virtual_addressing"],
        Kind::Bool,
        "bucket in the host name (true) or in the path (false)",
    ),
    ("s3.region", &["vfs.s3.region"], Kind::Text, "AWS region"),
    (
        "s3.access_key_id",
        &["vfs.s3.aws_access_key_id"],
        Kind::Text,
        "AWS access key id",
    ),
    (
        "s3.secret_access_key",
        &["vfs.s3.aws_secret_access_key"],
        Kind::Text,
        "AWS secret access key",
    ),
    (
        "s3.session_token",
        &["vfs.s3.aws_session_token"],
        Kind::Text,
        "AWS session token",
    ),
    (
        "azure.account",
        &["vfs.azure.storage_account_name"],
        Kind::Text,
        "Azure storage account name",
    ),
    (
        "azure.key",
        &["vfs.azure.storage_account_key"],
        Kind::Text,
        "Azure storage account key",
    ),
    (
        "azure.sas_token",
        &["vfs.azure.storage_sas_token"],
        Kind::Text,
        "Azure SAS token",
    ),
    (
        "azure.endpoint",
        &["vfs.azure.blob_endpoint"],
        Kind::Text,
        "Azure blob endpoint URL (an http:// endpoint allows plain HTTP)",
    ),
    (
        "azure.use_emulator",
        &[],
        Kind::Bool,
        "talk to azurite at AZURITE_BLOB_STORAGE_URL or 127.0.0.1:10000",
    ),
    (
        "gcs.service_account_key",
        &["vfs.gcs.service_account_key"],
        Kind::Text,
        "GCS service account key (JSON)",
    ),
    (
        "gcs.service_account_path",
        &["vfs.gcs.workload_identity_configuration"],
        Kind::Text,
        "GCS service account or credentials file",
    ),
    (
        "gcs.skip_signature",
        &[],
        Kind::Bool,
        "send GCS requests unsigned, without credentials (public buckets, emulators)",
    ),
    (
        "gcs.endpoint",
        &["vfs.gcs.endpoint"],
        Kind::Text,
        "GCS endpoint URL",
    ),
    (
        "parallel_requests",
        &[
            "vfs.s3.max_parallel_ops",
            "vfs.azure.max_parallel_ops",
            "vfs.gcs.max_parallel_ops",
        ],
        Kind::Count,
        "requests in flight per read or upload",
    ),
    (
        "min_batch_gap",
        &["vfs.min_batch_gap"],
        Kind::Count,
        "byte ranges this close are fetched in one request",
    ),
    (
        "min_batch_size",
        &["vfs.min_batch_size"],
        Kind::Count,
        "byte ranges are merged while the request stays this small",
    ),
    (
        "max_request_size",
        &["vfs.min_parallel_size"],
        Kind::Count,
        "a merged request is split (between ranges) beyond this size, for parallelism",
    ),
    (
        "part_size",
        &[
            "vfs.s3.multipart_part_size",
            "vfs.azure.block_list_block_size",
            "vfs.gcs.multi_part_size",
        ],
        Kind::Count,
        "multipart upload part size (objects up to this size are one PUT)",
    ),
    (
        "max_retries",
        &["vfs.s3.connect_max_tries"],
        Kind::Count,
        "retries of a failed request (5xx, timeouts, resets, short bodies)",
    ),
    (
        "request_timeout_ms",
        &["vfs.s3.request_timeout_ms"],
        Kind::Count,
        "timeout of one request",
    ),
    (
        "connect_timeout_ms",
        &["vfs.s3.connect_timeout_ms"],
        Kind::Count,
        "timeout of connecting",
    ),
    (
        "retry_timeout_ms",
        &[],
        Kind::Count,
        "give up retrying a request after this long",
    ),
];

/// The keys whose values are credentials: never printed.
const SECRET_KEYS: &[&str] = &[
    "s3.secret_access_key",
    "s3.session_token",
    "azure.key",
    "azure.sas_token",
    "gcs.service_account_key",
];

/// Explicit storage options (key/value pairs). Keys are this crate's (`s3.endpoint`,
/// `azure.account`, …, see [`StorageConfig::keys`]) or TileDB's names for the same settings
/// (`vfs.s3.endpoint_override`, `vfs.s3.scheme`, `vfs.s3.use_virtual_addressing`,
/// `vfs.azure.storage_account_name`, `vfs.min_batch_gap`, …). Unknown keys are refused.
/// `Debug` prints secrets (keys, tokens) as `<redacted>`.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct StorageConfig {
    values: BTreeMap<String, String>,
}

impl fmt::Debug for StorageConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut m = f.debug_map();
        for (k, v) in &self.values {
            if SECRET_KEYS.contains(&k.as_str()) {
                m.entry(k, &format_args!("<redacted>"));
            } else {
                m.entry(k, v);
            }
        }
        m.finish()
    }
}

impl StorageConfig {
    /// An empty configuration: everything from the environment or the defaults.
    pub fn new() -> StorageConfig {
        StorageConfig::default()
    }

    /// Sets `key` (either spelling) to `value`, checked for its kind (booleans `true`/`false`,
    /// counts as decimal numbers). Unknown keys and malformed values are refused naming them.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let (canonical, kind) = KEYS
            .iter()
            .find(|(c, aliases, _, _)| *c == key || aliases.contains(&key))
            .map(|(c, _, k, _)| (*c, *k))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "unknown storage configuration key '{key}' (known: {})",
                    KEYS.iter().map(|k| k.0).collect::<Vec<_>>().join(", ")
                ))
            })?;
        let bad = |what: &str| {
            Error::invalid(format!(
                "storage configuration {key}: '{value}' is not {what}"
            ))
        };
        match kind {
            Kind::Text => {}
            Kind::Bool => {
                parse_bool(value).ok_or_else(|| bad("true or false"))?;
            }
            Kind::Count => {
                value.parse::<u64>().map_err(|_| bad("a whole number"))?;
            }
            Kind::Scheme => {
                if value != "http" && value != "https" {
                    return Err(bad("http or https"));
                }
            }
        }
        self.values.insert(canonical.to_string(), value.to_string());
        Ok(())
    }

    /// Parses `key=value` and sets it (the CLI's `--config`).
    pub fn set_pair(&mut self, pair: &str) -> Result<()> {
        let (k, v) = pair.split_once('=').ok_or_else(|| {
            Error::invalid(format!("storage configuration '{pair}' is not key=value"))
        })?;
        self.set(k.trim(), v.trim())
    }

    /// The value of a canonical key, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// A boolean value, if set.
    pub fn get_bool(&self, key: &str) -> Option<bool> {
        self.get(key).and_then(parse_bool)
    }

    /// A count, if set.
    pub fn get_u64(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(|v| v.parse().ok())
    }

    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The canonical keys set, with their values.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Every key this configuration accepts: (canonical name, TileDB's names, description).
    pub fn keys() -> impl Iterator<Item = (&'static str, &'static [&'static str], &'static str)> {
        KEYS.iter().map(|(c, a, _, d)| (*c, *a, *d))
    }
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Some(true),
        "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiledb_names_and_own_names_set_the_same_key() {
        let mut c = StorageConfig::new();
        c.set("vfs.s3.endpoint_override", "127.0.0.1:9000").unwrap();
        c.set("vfs.s3.use_virtual_addressing", "false").unwrap();
        c.set("s3.region", "us-east-1").unwrap();
        c.set_pair("vfs.min_batch_gap = 1000").unwrap();
        assert_eq!(c.get("s3.endpoint"), Some("127.0.0.1:9000"));
        assert_eq!(c.get_bool("s3.virtual_addressing"), Some(false));
        assert_eq!(c.get("s3.region"), Some("us-east-1"));
        assert_eq!(c.get_u64("min_batch_gap"), Some(1000));
    }

    #[test]
    fn debug_redacts_secrets() {
        let mut c = StorageConfig::new();
        let secrets = [
            ("vfs.s3.aws_secret_access_key", "s3-secret-value"),
            ("vfs.s3.aws_session_token", "s3-token-value"),
            ("vfs.azure.storage_account_key", "azure-key-value"),
            ("vfs.azure.storage_sas_token", "azure-sas-value"),
            ("vfs.gcs.service_account_key", "gcs-key-value"),
        ];
        for (k, v) in secrets {
            c.set(k, v).unwrap();
        }
        c.set("s3.region", "eu-west-3").unwrap();
        let shown = format!("{c:?} {c:#?}");
        for (_, v) in secrets {
            assert!(!shown.contains(v), "{v} shown: {shown}");
        }
        assert_eq!(shown.matches("<redacted>").count(), 10, "{shown}");
        assert!(shown.contains("eu-west-3"), "{shown}");
        // Every secret key is a key.
        for k in SECRET_KEYS {
            assert!(KEYS.iter().any(|(c, ..)| c == k), "{k}");
        }
    }

    #[test]
    fn unknown_keys_and_bad_values_are_named() {
        let mut c = StorageConfig::new();
        let e = c.set("vfs.s3.endpoint_overide", "x").unwrap_err();
        assert!(e.message().contains("vfs.s3.endpoint_overide"), "{e}");
        let e = c.set("vfs.s3.scheme", "ftp").unwrap_err();
        assert!(e.message().contains("vfs.s3.scheme"), "{e}");
        let e = c.set("min_batch_gap", "-1").unwrap_err();
        assert!(e.message().contains("min_batch_gap"), "{e}");
        assert!(c.set_pair("novalue").is_err());
        assert!(c.is_empty());
    }
}
