//! Building the stores: S3, Azure Blob and GCS from a [`StorageConfig`] and the environment
//! (one per scheme, bucket, configuration and environment, kept for the process so that
//! arrays opened again reuse the connection pool), and the in-memory stores of `mem://`
//! (one per bucket).

use super::StorageConfig;
use crate::error::{Error, Result};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::memory::InMemory;
use object_store::{BackoffConfig, ClientConfigKey, ObjectStore, RetryConfig};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The kinds of store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Kind {
    S3,
    Azure,
    Gcs,
    Memory,
}

impl Kind {
    /// The kind of a URI scheme (one of `Storage::open`'s remote schemes).
    pub(super) fn of(scheme: &str) -> Kind {
        match scheme {
            "s3" | "s3a" => Kind::S3,
            "azure" | "az" | "abfs" => Kind::Azure,
            "mem" => Kind::Memory,
            _ => Kind::Gcs,
        }
    }
}

/// What a built store depends on. The configuration and the environment hold credentials:
/// kept in memory as the builders are, never printed.
#[derive(PartialEq, Eq, Hash)]
struct StoreKey {
    kind: Kind,
    bucket: String,
    config: StorageConfig,
    env: Vec<(String, String)>,
}

/// Every store built so far.
fn stores() -> &'static Mutex<HashMap<StoreKey, Arc<dyn ObjectStore>>> {
    static STORES: OnceLock<Mutex<HashMap<StoreKey, Arc<dyn ObjectStore>>>> = OnceLock::new();
    STORES.get_or_init(|| Mutex::new(HashMap::new()))
}

fn key(kind: Kind, bucket: &str, config: &StorageConfig) -> StoreKey {
    // The in-memory store of a bucket is one, whatever the configuration.
    let memory = kind == Kind::Memory;
    StoreKey {
        kind,
        bucket: bucket.to_string(),
        config: if memory {
            StorageConfig::new()
        } else {
            config.clone()
        },
        env: if memory { Vec::new() } else { env_snapshot() },
    }
}

/// The store of `bucket`, built on first use.
pub(super) fn store(
    uri: &str,
    kind: Kind,
    bucket: &str,
    config: &StorageConfig,
) -> Result<Arc<dyn ObjectStore>> {
    let key = key(kind, bucket, config);
    if let Some(s) = stores().lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(Arc::clone(s));
    }
    let built: Arc<dyn ObjectStore> = match kind {
        Kind::S3 => build_s3(uri, bucket, config)?,
        Kind::Azure => build_azure(uri, bucket, config)?,
        Kind::Gcs => build_gcs(uri, bucket, config)?,
        Kind::Memory => Arc::new(InMemory::new()),
    };
    // Two threads building the same store at once keep the first one stored.
    let mut stores = stores().lock().unwrap_or_else(|p| p.into_inner());
    Ok(Arc::clone(stores.entry(key).or_insert(built)))
}

/// Makes `store` the in-memory store of `mem://bucket` (tests: a store that records or
/// fails requests).
#[cfg(test)]
pub(crate) fn set_memory_store(bucket: &str, store: Arc<dyn ObjectStore>) {
    let key = key(Kind::Memory, bucket, &StorageConfig::new());
    stores()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, store);
}

/// The environment variables the builders read.
fn env_snapshot() -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| {
            ["AWS_", "AZURE_", "AZURITE_", "GOOGLE_"]
                .iter()
                .any(|p| k.starts_with(p))
        })
        .collect();
    vars.sort();
    vars
}

fn build_error(uri: &str, e: object_store::Error) -> Error {
    Error::invalid(format!("{uri}: cannot configure the object store: {e}"))
}

/// `http://…` endpoints in the environment variable `var`.
fn env_is_http(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| v.starts_with("http://"))
}

fn build_s3(uri: &str, bucket: &str, c: &StorageConfig) -> Result<Arc<dyn ObjectStore>> {
    let mut b = AmazonS3Builder::from_env().with_bucket_name(bucket);
    let mut http = c.get("s3.scheme") == Some("http")
        || ["AWS_ENDPOINT_URL", "AWS_ENDPOINT"]
            .iter()
            .any(|v| env_is_http(v));
    if let Some(ep) = c.get("s3.endpoint") {
        let url = if ep.contains("://") {
            ep.to_string()
        } else {
            format!("{}://{ep}", c.get("s3.scheme").unwrap_or("https"))
        };
        http |= url.starts_with("http://");
        b = b.with_endpoint(url);
    }
    if let Some(v) = c.get_bool("s3.allow_http") {
        http |= v;
    }
    if http {
        b = b.with_config(
            AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp),
            "true",
        );
    }
    if let Some(v) = c.get_bool("s3.virtual_addressing") {
        b = b.with_virtual_hosted_style_request(v);
    }
    if let Some(v) = c.get("s3.region") {
        b = b.with_region(v);
    }
    if let Some(v) = c.get("s3.access_key_id") {
        b = b.with_access_key_id(v);
    }
    if let Some(v) = c.get("s3.secret_access_key") {
        b = b.with_secret_access_key(v);
    }
    if let Some(v) = c.get("s3.session_token") {
        b = b.with_token(v);
    }
    for (k, v) in client_settings(c) {
        b = b.with_config(AmazonS3ConfigKey::Client(k), v);
    }
    b = b.with_retry(retry(c));
    Ok(Arc::new(b.build().map_err(|e| build_error(uri, e))?))
}

fn build_azure(uri: &str, container: &str, c: &StorageConfig) -> Result<Arc<dyn ObjectStore>> {
    let mut b = MicrosoftAzureBuilder::from_env().with_container_name(container);
    let mut http = env_is_http("AZURE_STORAGE_ENDPOINT");
    if let Some(v) = c.get("azure.account") {
        b = b.with_account(v);
    }
    if let Some(v) = c.get("azure.key") {
        b = b.with_access_key(v);
    }
    if let Some(v) = c.get("azure.sas_token") {
        b = b.with_config(
            object_store::azure::AzureConfigKey::SasKey,
            v.trim_start_matches('?'),
        );
    }
    if let Some(v) = c.get("azure.endpoint") {
        http |= v.starts_with("http://");
        b = b.with_endpoint(v.to_string());
    }
    if let Some(v) = c.get_bool("azure.use_emulator") {
        b = b.with_use_emulator(v);
    }
    if http {
        b = b.with_allow_http(true);
    }
    for (k, v) in client_settings(c) {
        b = b.with_config(object_store::azure::AzureConfigKey::Client(k), v);
    }
    b = b.with_retry(retry(c));
    Ok(Arc::new(b.build().map_err(|e| build_error(uri, e))?))
}

fn build_gcs(uri: &str, bucket: &str, c: &StorageConfig) -> Result<Arc<dyn ObjectStore>> {
    let mut b = GoogleCloudStorageBuilder::from_env().with_bucket_name(bucket);
    if let Some(v) = c.get("gcs.service_account_key") {
        b = b.with_service_account_key(v);
    }
    if let Some(v) = c.get("gcs.service_account_path") {
        b = b.with_service_account_path(v);
    }
    if let Some(v) = c.get_bool("gcs.skip_signature") {
        b = b.with_skip_signature(v);
    }
    if let Some(v) = c.get("gcs.endpoint") {
        b = b.with_base_url(v);
        if v.starts_with("http://") {
            b = b.with_config(
                object_store::gcp::GoogleConfigKey::Client(ClientConfigKey::AllowHttp),
                "true",
            );
        }
    }
    for (k, v) in client_settings(c) {
        b = b.with_config(object_store::gcp::GoogleConfigKey::Client(k), v);
    }
    b = b.with_retry(retry(c));
    Ok(Arc::new(b.build().map_err(|e| build_error(uri, e))?))
}

/// Request and connect timeouts.
fn client_settings(c: &StorageConfig) -> Vec<(ClientConfigKey, String)> {
    let mut out = Vec::new();
    if let Some(ms) = c.get_u64("request_timeout_ms") {
        out.push((ClientConfigKey::Timeout, format!("{ms}ms")));
    }
    if let Some(ms) = c.get_u64("connect_timeout_ms") {
        out.push((ClientConfigKey::ConnectTimeout, format!("{ms}ms")));
    }
    out
}

/// Retries of failed requests: exponential backoff from 50 ms, at most 2 s apart, 5 times
/// (or `max_retries`) within 60 s (or `retry_timeout_ms`).
pub(super) fn retry(c: &StorageConfig) -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(2),
            base: 2.0,
        },
        max_retries: c.get_u64("max_retries").unwrap_or(5) as usize,
        retry_timeout: Duration::from_millis(c.get_u64("retry_timeout_ms").unwrap_or(60_000)),
    }
}
