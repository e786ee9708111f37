//! S3, Azure Blob and GCS through Apache Arrow's `object_store`, driven by one shared tokio
//! runtime. Requests are retried by `object_store` (5xx including 503 SlowDown, timeouts,
//! connection errors, with exponential backoff, a bounded number of times); on top of that
//! every body is checked against the length asked for, and a short or failed body is fetched
//! again a bounded number of times before the error names the object.

use super::batch::{BatchRule, coalesce};
use super::{Entry, StorageConfig, Uri};
use crate::error::{Error, Result};
use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::path::Path as ObjectPath;
use object_store::{
    BackoffConfig, ClientConfigKey, GetOptions, GetRange, MultipartUpload, ObjectStore,
    ObjectStoreExt, PutPayload, RetryConfig,
};
use std::collections::HashMap;
use std::future::Future;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The runtime every object-store request runs on (made on first use; rustls's `ring`
/// provider is installed as the process default at the same time, unless one already is).
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(2, 8);
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("tdbf-storage")
            .enable_all()
            .build()
            .expect("the storage runtime starts")
    })
}

/// Runs `f` to completion on the storage runtime, blocking this thread.
fn block_on<F: Future>(f: F) -> F::Output {
    runtime().block_on(f)
}

/// Settings of reads and writes.
#[derive(Clone, Copy, Debug)]
struct Settings {
    rule: BatchRule,
    parallel: usize,
    part_size: usize,
    /// Fetches of one body (the first and the repeats after a short or failed body).
    attempts: usize,
}

/// A configured store shared by every array in it.
#[derive(Debug)]
struct Shared {
    store: Arc<dyn ObjectStore>,
    settings: Settings,
}

/// One bucket or container.
#[derive(Debug)]
pub(super) struct ObjectBackend {
    shared: Arc<Shared>,
    /// `scheme://bucket`: what every URI of this store starts with.
    prefix: String,
}

/// The stores made so far, by scheme, bucket, configuration and environment: arrays opened
/// again reuse the connection pool.
fn cache() -> &'static Mutex<HashMap<String, Arc<Shared>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Shared>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The environment variables the builders read.
fn env_snapshot() -> String {
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| {
            ["AWS_", "AZURE_", "AZURITE_", "GOOGLE_"]
                .iter()
                .any(|p| k.starts_with(p))
        })
        .collect();
    vars.sort();
    format!("{vars:?}")
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
fn retry(c: &StorageConfig) -> RetryConfig {
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

fn settings(c: &StorageConfig) -> Settings {
    let d = BatchRule::default();
    Settings {
        rule: BatchRule {
            min_gap: c.get_u64("min_batch_gap").unwrap_or(d.min_gap),
            min_size: c.get_u64("min_batch_size").unwrap_or(d.min_size),
            max_size: c.get_u64("max_request_size").unwrap_or(d.max_size).max(1),
        },
        parallel: c.get_u64("parallel_requests").unwrap_or(16).clamp(1, 256) as usize,
        // S3's smallest part (but the last) is 5 MiB.
        part_size: c
            .get_u64("part_size")
            .unwrap_or(8 << 20)
            .clamp(5 << 20, 1 << 30) as usize,
        attempts: 1 + c.get_u64("max_retries").unwrap_or(5).min(3) as usize,
    }
}

impl ObjectBackend {
    /// The store of `uri` (`scheme://bucket/path`) and the URI in canonical form.
    pub(super) fn open(uri: &str, config: &StorageConfig) -> Result<(ObjectBackend, Uri)> {
        // The TLS provider must be in place before a client is built.
        runtime();
        let (scheme, rest) = uri.split_once("://").expect("checked by Storage::open");
        let (bucket, _) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(Error::invalid(format!("{uri}: no bucket or container")));
        }
        let kind = match scheme {
            "s3" | "s3a" => "s3",
            "azure" | "az" | "abfs" => "azure",
            _ => "gs",
        };
        let key = format!("{kind}\n{bucket}\n{config:?}\n{}", env_snapshot());
        let cached = cache()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned();
        let shared = match cached {
            Some(s) => s,
            None => {
                let store = match kind {
                    "s3" => build_s3(uri, bucket, config)?,
                    "azure" => build_azure(uri, bucket, config)?,
                    _ => build_gcs(uri, bucket, config)?,
                };
                let s = Arc::new(Shared {
                    store,
                    settings: settings(config),
                });
                cache()
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(key, Arc::clone(&s));
                s
            }
        };
        let prefix = format!("{scheme}://{bucket}");
        Ok((ObjectBackend { shared, prefix }, Uri::new(uri)))
    }

    /// The object key of `uri`.
    fn key(&self, uri: &Uri) -> Result<ObjectPath> {
        let rest = uri
            .as_str()
            .strip_prefix(&self.prefix)
            .filter(|r| r.is_empty() || r.starts_with('/'))
            .ok_or_else(|| Error::Internal(format!("{uri} is not in the store {}", self.prefix)))?;
        ObjectPath::parse(rest.trim_matches('/'))
            .map_err(|e| Error::invalid(format!("{uri}: not a valid object key: {e}")))
    }

    pub(super) fn list(&self, dir: &Uri) -> Result<Vec<Entry>> {
        let prefix = self.key(dir)?;
        let prefix = (!prefix.as_ref().is_empty()).then_some(prefix);
        let r = block_on(self.shared.store.list_with_delimiter(prefix.as_ref()))
            .map_err(|e| failure(dir, "cannot list", e, 1))?;
        let mut out = Vec::new();
        for p in r.common_prefixes {
            if let Some(name) = p.filename() {
                out.push(Entry {
                    name: name.to_string(),
                    is_dir: true,
                    size: 0,
                });
            }
        }
        for m in r.objects {
            if let Some(name) = m.location.filename() {
                out.push(Entry {
                    name: name.to_string(),
                    is_dir: false,
                    size: m.size,
                });
            }
        }
        Ok(out)
    }

    /// The whole object, asked for as `Range: bytes=0-` so that the answer's `Content-Range`
    /// gives the object's size independently of the body's `Content-Length`: a body shorter
    /// than the object is caught even when its length header agrees with it.
    pub(super) fn read(&self, uri: &Uri) -> Result<Vec<u8>> {
        let path = self.key(uri)?;
        let shared = &self.shared;
        let attempts = shared.settings.attempts;
        block_on(async {
            let mut attempt = 0;
            let mut ranged = true;
            loop {
                attempt += 1;
                let opts = GetOptions {
                    range: ranged.then_some(GetRange::Offset(0)),
                    ..GetOptions::default()
                };
                let got = match shared.store.get_opts(&path, opts).await {
                    Ok(r) => {
                        let (range, size) = (r.range.clone(), r.meta.size);
                        r.bytes().await.map(|b| (b, range, size))
                    }
                    Err(e) => Err(e),
                };
                match got {
                    Ok((b, range, size))
                        if b.len() as u64 == range.end - range.start
                            && range.start == 0
                            && range.end == size =>
                    {
                        return Ok(b.to_vec());
                    }
                    Ok((b, _, size)) if attempt >= attempts => {
                        return Err(short(uri, 0..size, b.len(), attempt));
                    }
                    // An empty object has no byte 0: asked again without a range.
                    Err(e) if ranged && unsatisfiable(&e) => {
                        ranged = false;
                        attempt -= 1;
                    }
                    Err(e) if attempt >= attempts || !transient(&e) => {
                        return Err(failure(uri, "cannot read", e, attempt));
                    }
                    _ => pause(attempt).await,
                }
            }
        })
    }

    pub(super) fn size(&self, uri: &Uri) -> Result<u64> {
        let path = self.key(uri)?;
        block_on(self.shared.store.head(&path))
            .map(|m| m.size)
            .map_err(|e| failure(uri, "cannot get the size", e, 1))
    }

    pub(super) fn modified(&self, uri: &Uri) -> Result<std::time::SystemTime> {
        let path = self.key(uri)?;
        block_on(self.shared.store.head(&path))
            .map(|m| m.last_modified.into())
            .map_err(|e| failure(uri, "cannot get the modification time", e, 1))
    }

    pub(super) fn is_file(&self, uri: &Uri) -> Result<bool> {
        let path = self.key(uri)?;
        match block_on(self.shared.store.head(&path)) {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(failure(uri, "cannot look up", e, 1)),
        }
    }

    pub(super) fn is_dir(&self, uri: &Uri) -> Result<bool> {
        Ok(!self.list(uri)?.is_empty())
    }

    pub(super) fn open_file(&self, uri: &Uri) -> Result<ObjectFile> {
        Ok(ObjectFile {
            shared: Arc::clone(&self.shared),
            path: self.key(uri)?,
            len: self.size(uri)?,
            blocks: Mutex::new(Vec::new()),
        })
    }

    pub(super) fn open_file_sized(&self, uri: &Uri, size: u64) -> Result<ObjectFile> {
        Ok(ObjectFile {
            shared: Arc::clone(&self.shared),
            path: self.key(uri)?,
            len: size,
            blocks: Mutex::new(Vec::new()),
        })
    }

    pub(super) fn remove(&self, uri: &Uri) -> Result<()> {
        let path = self.key(uri)?;
        block_on(self.shared.store.delete(&path)).map_err(|e| failure(uri, "cannot delete", e, 1))
    }

    pub(super) fn remove_prefix(&self, dir: &Uri) -> Result<()> {
        let prefix = self.key(dir)?;
        let store = &self.shared.store;
        block_on(async {
            let paths = store.list(Some(&prefix)).map_ok(|m| m.location).boxed();
            store
                .delete_stream(paths)
                .try_collect::<Vec<ObjectPath>>()
                .await
        })
        .map(|_| ())
        .map_err(|e| failure(dir, "cannot delete", e, 1))
    }

    pub(super) fn write(&self, uri: &Uri, bytes: &[u8]) -> Result<()> {
        let mut w = self.writer(uri);
        w.write(uri, bytes)?;
        w.finish(uri)
    }

    pub(super) fn writer(&self, uri: &Uri) -> ObjectWriter {
        ObjectWriter {
            shared: Arc::clone(&self.shared),
            path: self.key(uri),
            buf: Vec::new(),
            upload: None,
            parts: Vec::new(),
        }
    }
}

/// Whether the server refused a range (HTTP 416: `bytes=0-` of an empty object).
fn unsatisfiable(e: &object_store::Error) -> bool {
    let text = e.to_string();
    text.contains("416") || text.contains("Range Not Satisfiable") || text.contains("InvalidRange")
}

/// Whether a request error may go away when repeated.
fn transient(e: &object_store::Error) -> bool {
    !matches!(
        e,
        object_store::Error::NotFound { .. }
            | object_store::Error::InvalidPath { .. }
            | object_store::Error::NotSupported { .. }
            | object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. }
            | object_store::Error::UnknownConfigurationKey { .. }
    )
}

/// Backoff between fetches of a body: 50 ms, 100 ms, 200 ms, …
async fn pause(attempt: usize) {
    let ms = 50u64 << attempt.saturating_sub(1).min(5);
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

fn failure(uri: &Uri, what: &str, e: object_store::Error, attempts: usize) -> Error {
    let tries = if attempts > 1 {
        format!(" (after {attempts} attempts)")
    } else {
        String::new()
    };
    let kind = match &e {
        object_store::Error::NotFound { .. } => std::io::ErrorKind::NotFound,
        object_store::Error::AlreadyExists { .. } => std::io::ErrorKind::AlreadyExists,
        object_store::Error::PermissionDenied { .. }
        | object_store::Error::Unauthenticated { .. } => std::io::ErrorKind::PermissionDenied,
        object_store::Error::NotSupported { .. } => std::io::ErrorKind::Unsupported,
        _ => std::io::ErrorKind::Other,
    };
    let message = match e {
        object_store::Error::NotFound { .. } => format!("{uri}: not found"),
        e => format!("{uri}: {what}{tries}: {e}"),
    };
    Error::Io {
        path: uri.to_string(),
        kind,
        message,
    }
}

fn short(uri: &Uri, r: Range<u64>, got: usize, attempts: usize) -> Error {
    Error::Io {
        path: uri.to_string(),
        kind: std::io::ErrorKind::UnexpectedEof,
        message: format!(
            "{uri}: bytes {}..{} came back {got} bytes long, {} expected (after {attempts} \
             attempts)",
            r.start,
            r.end,
            r.end - r.start
        ),
    }
}

/// One object being read by ranges.
pub(super) struct ObjectFile {
    shared: Arc<Shared>,
    path: ObjectPath,
    pub len: u64,
    /// Fetched ranges (start, bytes), sorted by start.
    blocks: Mutex<Vec<(u64, Bytes)>>,
}

/// Fetches `r` of `path`, checking the body's length, fetching again when it is short or
/// fails.
async fn fetch(shared: &Shared, uri: &Uri, path: &ObjectPath, r: Range<u64>) -> Result<Bytes> {
    let want = r.end - r.start;
    let mut attempt = 0;
    loop {
        attempt += 1;
        match shared.store.get_range(path, r.clone()).await {
            Ok(b) if b.len() as u64 == want => return Ok(b),
            Ok(b) if attempt >= shared.settings.attempts => {
                return Err(short(uri, r, b.len(), attempt));
            }
            Err(e) if attempt >= shared.settings.attempts || !transient(&e) => {
                return Err(failure(
                    uri,
                    &format!("cannot read bytes {}..{}", r.start, r.end),
                    e,
                    attempt,
                ));
            }
            _ => pause(attempt).await,
        }
    }
}

impl ObjectFile {
    fn cached(&self, offset: u64, len: usize) -> Option<Bytes> {
        let blocks = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
        let end = offset.checked_add(len as u64)?;
        let i = blocks.partition_point(|(s, _)| *s <= offset);
        let (start, b) = blocks.get(i.checked_sub(1)?)?;
        (end <= start + b.len() as u64).then(|| {
            let from = (offset - start) as usize;
            b.slice(from..from + len)
        })
    }

    fn check_bounds(&self, uri: &Uri, r: &Range<u64>) -> Result<()> {
        if r.end > self.len {
            return Err(Error::corrupt(format!(
                "{uri}: bytes {}..{} are past the end of the {}-byte object",
                r.start, r.end, self.len
            )));
        }
        Ok(())
    }

    pub(super) fn prefetch(&self, uri: &Uri, ranges: &[Range<u64>]) -> Result<()> {
        let missing: Vec<Range<u64>> = ranges
            .iter()
            .filter(|r| {
                r.end > r.start && self.cached(r.start, (r.end - r.start) as usize).is_none()
            })
            .cloned()
            .collect();
        for r in &missing {
            self.check_bounds(uri, r)?;
        }
        let batches = coalesce(&missing, self.shared.settings.rule);
        if batches.is_empty() {
            return Ok(());
        }
        let shared = &*self.shared;
        let path = &self.path;
        let fetched: Vec<(u64, Bytes)> = block_on(
            futures_util::stream::iter(batches)
                .map(|r| async move {
                    let start = r.start;
                    fetch(shared, uri, path, r).await.map(|b| (start, b))
                })
                .buffer_unordered(shared.settings.parallel)
                .try_collect(),
        )?;
        let mut blocks = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
        blocks.extend(fetched);
        blocks.sort_by_key(|(s, _)| *s);
        Ok(())
    }

    pub(super) fn range(&self, uri: &Uri, offset: u64, len: usize) -> Result<Bytes> {
        if let Some(b) = self.cached(offset, len) {
            return Ok(b);
        }
        let r = offset..offset.saturating_add(len as u64);
        self.check_bounds(uri, &r)?;
        if len == 0 {
            return Ok(Bytes::new());
        }
        block_on(fetch(&self.shared, uri, &self.path, r))
    }
}

/// An object being uploaded: one PUT when it ends within the first part, else a multipart
/// upload whose parts go up in the background as they fill (at most `parallel` in flight).
pub(super) struct ObjectWriter {
    shared: Arc<Shared>,
    path: Result<ObjectPath>,
    buf: Vec<u8>,
    upload: Option<Box<dyn MultipartUpload>>,
    parts: Vec<tokio::task::JoinHandle<object_store::Result<()>>>,
}

impl ObjectWriter {
    fn path(&self) -> Result<&ObjectPath> {
        self.path.as_ref().map_err(Clone::clone)
    }

    pub(super) fn write(&mut self, uri: &Uri, bytes: &[u8]) -> Result<()> {
        let part = self.shared.settings.part_size;
        let mut bytes = bytes;
        while !bytes.is_empty() {
            let take = (part - self.buf.len()).min(bytes.len());
            self.buf.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.buf.len() == part {
                let full = std::mem::replace(&mut self.buf, Vec::with_capacity(part));
                self.send_part(uri, full)?;
            }
        }
        Ok(())
    }

    fn send_part(&mut self, uri: &Uri, data: Vec<u8>) -> Result<()> {
        if self.upload.is_none() {
            let path = self.path()?.clone();
            let up = block_on(self.shared.store.put_multipart(&path))
                .map_err(|e| failure(uri, "cannot start the upload", e, 1))?;
            self.upload = Some(up);
        }
        let up = self.upload.as_mut().expect("started above");
        let fut = up.put_part(PutPayload::from(Bytes::from(data)));
        self.parts.push(runtime().spawn(fut));
        if self.parts.len() >= self.shared.settings.parallel {
            let first = self.parts.remove(0);
            self.join(uri, first)?;
        }
        Ok(())
    }

    fn join(
        &mut self,
        uri: &Uri,
        h: tokio::task::JoinHandle<object_store::Result<()>>,
    ) -> Result<()> {
        match block_on(h) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(failure(uri, "cannot upload a part", e, 1)),
            Err(e) => Err(Error::Internal(format!(
                "{uri}: an upload task failed: {e}"
            ))),
        }
    }

    pub(super) fn finish(mut self, uri: &Uri) -> Result<()> {
        let path = self.path()?.clone();
        if self.upload.is_none() {
            let data = PutPayload::from(Bytes::from(std::mem::take(&mut self.buf)));
            return block_on(self.shared.store.put(&path, data))
                .map(|_| ())
                .map_err(|e| failure(uri, "cannot upload", e, 1));
        }
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            self.send_part(uri, rest)?;
        }
        for h in std::mem::take(&mut self.parts) {
            self.join(uri, h)?;
        }
        let mut up = self.upload.take().expect("a multipart upload");
        match block_on(up.complete()) {
            Ok(_) => Ok(()),
            Err(e) => {
                let _ = block_on(up.abort());
                Err(failure(uri, "cannot complete the upload", e, 1))
            }
        }
    }
}

impl Drop for ObjectWriter {
    /// An unfinished multipart upload is aborted (best effort), so that no parts linger.
    fn drop(&mut self) {
        for h in self.parts.drain(..) {
            h.abort();
        }
        if let Some(mut up) = self.upload.take() {
            let _ = block_on(up.abort());
        }
    }
}
