//! Every `object_store` store as a [`Backend`]: S3, Azure Blob, GCS (built in `stores.rs`)
//! and the in-memory store of `mem://`, through one implementation over `dyn ObjectStore`.
//!
//! Retries: one policy, `object_store`'s [`RetryConfig`] (5xx including 503 SlowDown,
//! timeouts, connection errors, with exponential backoff, a bounded number of times within a
//! time limit; a body cut off mid-stream is resumed from where it broke). A request that
//! fails under it fails here too. What it lacks is a check of the body: a body that ends early
//! but cleanly (a `Content-Length` that agrees with the short body) is taken for whole, and a
//! body whose resumptions all broke off too is an error. Every body is checked against the
//! length asked for; a short or broken one is fetched again whole under the same
//! `RetryConfig` (its backoff, its number of retries, its time limit) before the error names
//! the object. Uploads go through `object_store`'s `BufWriter` (one PUT for an object that
//! ends within the first part, else a multipart upload whose parts go up in the background).

use super::backend::{Backend, Chunk, ReadFile, WriteFile};
use super::batch::{BatchRule, coalesce};
use super::runtime::{block_on, runtime};
use super::stores::{self, Kind};
use super::{Entry, StorageConfig, Uri};
use crate::error::{Error, Result};
use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use object_store::buffered::BufWriter;
use object_store::path::Path as ObjectPath;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt, RetryConfig};
use std::ops::Range;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncWrite;
use tokio::sync::Semaphore;

/// Settings of reads and writes.
#[derive(Clone, Debug)]
pub(super) struct Settings {
    pub rule: BatchRule,
    /// Requests in flight per prefetch, parts in flight per upload.
    pub parallel: usize,
    /// Bytes of one multipart part; objects up to this size are one PUT.
    pub part_size: usize,
    /// Requests are retried by the store with this; short bodies are fetched again with it.
    pub retry: RetryConfig,
}

impl Settings {
    fn new(c: &StorageConfig) -> Settings {
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
            retry: stores::retry(c),
        }
    }
}

/// A store and how to use it, shared by every file opened in it.
#[derive(Debug)]
struct Shared {
    store: Arc<dyn ObjectStore>,
    settings: Settings,
    /// Background requests of `prefetch` in flight at once, over every file of the store
    /// (`settings.parallel`; granted in the order asked for).
    permits: Arc<Semaphore>,
}

/// One bucket or container.
#[derive(Debug)]
pub(super) struct ObjectBackend {
    shared: Arc<Shared>,
    /// `scheme://bucket`: what every URI of this store starts with.
    prefix: String,
}

impl ObjectBackend {
    /// The store of `uri` (`scheme://bucket/path`) and the URI in canonical form.
    pub(super) fn open(uri: &str, config: &StorageConfig) -> Result<(ObjectBackend, Uri)> {
        // The TLS provider must be in place before a client is built.
        super::runtime::runtime();
        let (scheme, rest) = uri.split_once("://").expect("checked by Storage::open");
        let (bucket, _) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(Error::invalid(format!("{uri}: no bucket or container")));
        }
        let store = stores::store(uri, Kind::of(scheme), bucket, config)?;
        let backend =
            ObjectBackend::with_store(store, Settings::new(config), format!("{scheme}://{bucket}"));
        Ok((backend, Uri::new(uri)))
    }

    /// A backend over `store` whose URIs start with `prefix` (`scheme://bucket`).
    pub(super) fn with_store(
        store: Arc<dyn ObjectStore>,
        settings: Settings,
        prefix: String,
    ) -> ObjectBackend {
        ObjectBackend {
            shared: Arc::new(Shared {
                permits: Arc::new(Semaphore::new(settings.parallel)),
                store,
                settings,
            }),
            prefix,
        }
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

    fn file(&self, uri: &Uri, len: u64) -> Result<ObjectFile> {
        Ok(ObjectFile {
            shared: Arc::clone(&self.shared),
            path: self.key(uri)?,
            len,
            blocks: Mutex::new(Vec::new()),
            in_flight: Mutex::new(Vec::new()),
        })
    }

    fn writer(&self, uri: &Uri) -> Result<ObjectWriter> {
        let s = &self.shared.settings;
        let w =
            BufWriter::with_capacity(Arc::clone(&self.shared.store), self.key(uri)?, s.part_size)
                .with_max_concurrency(s.parallel);
        Ok(ObjectWriter { writer: Some(w) })
    }
}

impl Backend for ObjectBackend {
    fn is_local(&self) -> bool {
        false
    }

    fn list(&self, dir: &Uri) -> Result<Vec<Entry>> {
        let prefix = self.key(dir)?;
        let prefix = (!prefix.as_ref().is_empty()).then_some(prefix);
        let r = block_on(self.shared.store.list_with_delimiter(prefix.as_ref()))
            .map_err(|e| failure(dir, "cannot list", e))?;
        let dirs = r.common_prefixes.into_iter().filter_map(|p| {
            Some(Entry {
                name: p.filename()?.to_string(),
                is_dir: true,
                size: 0,
            })
        });
        let files = r.objects.into_iter().filter_map(|m| {
            Some(Entry {
                name: m.location.filename()?.to_string(),
                is_dir: false,
                size: m.size,
            })
        });
        Ok(dirs.chain(files).collect())
    }

    /// The whole object, asked for as `Range: bytes=0-` so that the answer's `Content-Range`
    /// gives the object's size independently of the body's `Content-Length`: a body shorter
    /// than the object is caught even when its length header agrees with it.
    fn read(&self, uri: &Uri) -> Result<Vec<u8>> {
        let path = self.key(uri)?;
        let shared = &*self.shared;
        block_on(async {
            let mut retries = Retries::new(&shared.settings.retry);
            loop {
                let opts = GetOptions {
                    range: Some(GetRange::Offset(0)),
                    ..GetOptions::default()
                };
                let got = match shared.store.get_opts(&path, opts).await {
                    Ok(got) => got,
                    Err(e @ object_store::Error::NotFound { .. }) => {
                        return Err(failure(uri, "cannot read", e));
                    }
                    Err(e) => return read_empty(shared, uri, &path, e).await,
                };
                let (range, size) = (got.range.clone(), got.meta.size);
                match got.bytes().await {
                    Ok(b) if range == (0..size) && b.len() as u64 == size => {
                        return Ok(b.to_vec());
                    }
                    Ok(b) if !retries.next().await => {
                        return Err(short(uri, 0..size, b.len(), retries.attempts));
                    }
                    Err(e) if !retries.next().await => {
                        return Err(failure(uri, "cannot read", e));
                    }
                    _ => {}
                }
            }
        })
    }

    fn size(&self, uri: &Uri) -> Result<u64> {
        let path = self.key(uri)?;
        block_on(self.shared.store.head(&path))
            .map(|m| m.size)
            .map_err(|e| failure(uri, "cannot get the size", e))
    }

    fn modified(&self, uri: &Uri) -> Result<std::time::SystemTime> {
        let path = self.key(uri)?;
        block_on(self.shared.store.head(&path))
            .map(|m| m.last_modified.into())
            .map_err(|e| failure(uri, "cannot get the modification time", e))
    }

    fn is_file(&self, uri: &Uri) -> Result<bool> {
        let path = self.key(uri)?;
        match block_on(self.shared.store.head(&path)) {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(failure(uri, "cannot look up", e)),
        }
    }

    fn is_dir(&self, uri: &Uri) -> Result<bool> {
        Ok(!self.list(uri)?.is_empty())
    }

    fn open_file(&self, uri: &Uri, size: Option<u64>) -> Result<Box<dyn ReadFile>> {
        let len = match size {
            Some(n) => n,
            None => self.size(uri)?,
        };
        Ok(Box::new(self.file(uri, len)?))
    }

    /// Object stores have no folders: nothing is written.
    fn create_dir(&self, _dir: &Uri) -> Result<bool> {
        Ok(true)
    }

    fn create_dir_all(&self, _dir: &Uri) -> Result<()> {
        Ok(())
    }

    fn remove_dir_all(&self, dir: &Uri) -> Result<()> {
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
        .map_err(|e| failure(dir, "cannot delete", e))
    }

    fn remove_file(&self, uri: &Uri) -> Result<()> {
        let path = self.key(uri)?;
        block_on(self.shared.store.delete(&path)).map_err(|e| failure(uri, "cannot delete", e))
    }

    fn write_new(&self, uri: &Uri, bytes: &[u8]) -> Result<()> {
        let mut w = self.writer(uri)?;
        w.write(uri, bytes)?;
        Box::new(w).finish(uri)
    }

    fn create_file(&self, uri: &Uri) -> Result<Box<dyn WriteFile>> {
        Ok(Box::new(self.writer(uri)?))
    }

    /// A finished upload is durable.
    fn sync_dir(&self, _dir: &Uri) -> Result<()> {
        Ok(())
    }
}

/// After a failed `Range: bytes=0-` read: an empty object has no byte 0 (S3 and Azure answer
/// 416, the in-memory store an invalid range), so the object is asked for again without a
/// range. It is the answer when that gives an empty object; otherwise the first error is.
async fn read_empty(
    shared: &Shared,
    uri: &Uri,
    path: &ObjectPath,
    first: object_store::Error,
) -> Result<Vec<u8>> {
    if let Ok(got) = shared.store.get(path).await
        && got.meta.size == 0
        && got.bytes().await.is_ok_and(|b| b.is_empty())
    {
        return Ok(Vec::new());
    }
    Err(failure(uri, "cannot read", first))
}

/// Fetches of a body again after a short one, under the store's [`RetryConfig`].
struct Retries<'a> {
    config: &'a RetryConfig,
    start: Instant,
    /// Fetches so far.
    attempts: usize,
}

impl<'a> Retries<'a> {
    fn new(config: &'a RetryConfig) -> Retries<'a> {
        Retries {
            config,
            start: Instant::now(),
            attempts: 1,
        }
    }

    /// Waits before the next fetch; `false` when the retries are used up.
    async fn next(&mut self) -> bool {
        let retries = self.attempts - 1;
        if retries >= self.config.max_retries || self.start.elapsed() >= self.config.retry_timeout {
            return false;
        }
        tokio::time::sleep(backoff(self.config, retries)).await;
        self.attempts += 1;
        true
    }
}

/// The pause before retry `n + 1`: the backoff's first pause times its base to the `n`th,
/// at most its longest pause (`object_store`'s growth, without its jitter).
fn backoff(c: &RetryConfig, n: usize) -> Duration {
    let b = &c.backoff;
    let secs = b.init_backoff.as_secs_f64() * b.base.max(1.0).powi(n.min(64) as i32);
    Duration::from_secs_f64(secs.min(b.max_backoff.as_secs_f64()))
}

/// An object-store failure as [`Error::Io`], naming the object and what was done.
fn failure(uri: &Uri, what: &str, e: object_store::Error) -> Error {
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
        e => format!("{uri}: {what}: {e}"),
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
struct ObjectFile {
    shared: Arc<Shared>,
    path: ObjectPath,
    len: u64,
    /// Fetched ranges (start, bytes), sorted by start.
    blocks: Mutex<Vec<(u64, Bytes)>>,
    /// Requests started by `prefetch` whose bytes have not been taken into `blocks` yet.
    in_flight: Mutex<Vec<InFlight>>,
}

/// A request of `prefetch` running in the background: a read inside `range` waits for it
/// alone, so tiles are decoded as their bytes arrive.
struct InFlight {
    range: Range<u64>,
    slot: Arc<Slot>,
    task: tokio::task::AbortHandle,
}

/// Where a background request leaves its answer.
#[derive(Default)]
struct Slot {
    answer: Mutex<Option<Result<Bytes>>>,
    ready: Condvar,
}

impl Slot {
    fn fill(&self, answer: Result<Bytes>) {
        *self.answer.lock().unwrap_or_else(|p| p.into_inner()) = Some(answer);
        self.ready.notify_all();
    }

    /// Blocks until the request has answered.
    fn wait(&self) -> Result<Bytes> {
        let mut answer = self.answer.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(a) = answer.as_ref() {
                return a.clone();
            }
            answer = self.ready.wait(answer).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for ObjectFile {
    /// Requests nobody will read are cancelled.
    fn drop(&mut self) {
        for f in self
            .in_flight
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            f.task.abort();
        }
    }
}

/// Fetches `r` of `path`, checking the body (see the module documentation).
async fn fetch(shared: &Shared, uri: &Uri, path: &ObjectPath, r: Range<u64>) -> Result<Bytes> {
    let want = r.end - r.start;
    let what = || format!("cannot read bytes {}..{}", r.start, r.end);
    let mut retries = Retries::new(&shared.settings.retry);
    loop {
        let opts = GetOptions {
            range: Some(GetRange::Bounded(r.clone())),
            ..GetOptions::default()
        };
        let got = shared
            .store
            .get_opts(path, opts)
            .await
            .map_err(|e| failure(uri, &what(), e))?;
        match got.bytes().await {
            Ok(b) if b.len() as u64 == want => return Ok(b),
            Ok(b) if !retries.next().await => {
                return Err(short(uri, r, b.len(), retries.attempts));
            }
            Err(e) if !retries.next().await => return Err(failure(uri, &what(), e)),
            _ => {}
        }
    }
}

impl ObjectFile {
    /// The bytes at `offset` if a request of `prefetch` covering them is running: waits for
    /// that request alone and keeps its bytes. `None` when no request covers them.
    fn wait_in_flight(&self, offset: u64, len: usize) -> Option<Result<Bytes>> {
        let end = offset.checked_add(len as u64)?;
        let (range, slot) = {
            let in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            let f = in_flight
                .iter()
                .find(|f| f.range.start <= offset && end <= f.range.end)?;
            (f.range.clone(), Arc::clone(&f.slot))
        };
        let answer = slot.wait();
        if let Ok(b) = &answer {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(i) = in_flight.iter().position(|f| Arc::ptr_eq(&f.slot, &slot)) {
                in_flight.swap_remove(i);
                let mut blocks = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
                let at = blocks.partition_point(|(s, _)| *s < range.start);
                blocks.insert(at, (range.start, b.clone()));
            }
        }
        Some(answer.map(|b| {
            let from = (offset - range.start) as usize;
            b.slice(from..from + len)
        }))
    }

    /// Whether a request of `prefetch` covering `r` is running.
    fn covered_in_flight(&self, r: &Range<u64>) -> bool {
        let in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        in_flight
            .iter()
            .any(|f| f.range.start <= r.start && r.end <= f.range.end)
    }

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
}

impl ReadFile for ObjectFile {
    fn len(&self) -> u64 {
        self.len
    }

    /// Merges the ranges not fetched or being fetched yet into few requests (`batch.rs`) and
    /// starts them in the background, at most `parallel` in flight in the store, in order of
    /// offset. Returns at once: a read waits for the one request holding its bytes, so tiles
    /// are decoded while later ones are still arriving. A failed request is the error of the
    /// reads inside it.
    fn prefetch(&self, uri: &Uri, ranges: &[Range<u64>]) -> Result<()> {
        let missing: Vec<Range<u64>> = ranges
            .iter()
            .filter(|r| {
                r.end > r.start
                    && self.cached(r.start, (r.end - r.start) as usize).is_none()
                    && !self.covered_in_flight(r)
            })
            .cloned()
            .collect();
        for r in &missing {
            self.check_bounds(uri, r)?;
        }
        let batches = coalesce(&missing, self.shared.settings.rule);
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        for r in batches {
            let slot = Arc::new(Slot::default());
            let (shared, path, uri, answer) = (
                Arc::clone(&self.shared),
                self.path.clone(),
                uri.clone(),
                Arc::clone(&slot),
            );
            let range = r.clone();
            let task = runtime().spawn(async move {
                let permit = Arc::clone(&shared.permits).acquire_owned().await;
                let got = fetch(&shared, &uri, &path, r).await;
                drop(permit);
                answer.fill(got);
            });
            in_flight.push(InFlight {
                range,
                slot,
                task: task.abort_handle(),
            });
        }
        Ok(())
    }

    fn range<'a>(
        &'a self,
        uri: &Uri,
        offset: u64,
        len: usize,
        _scratch: &'a mut Vec<u8>,
    ) -> Result<Chunk<'a>> {
        if let Some(b) = self.cached(offset, len) {
            return Ok(Chunk::Shared(b));
        }
        if let Some(answer) = self.wait_in_flight(offset, len) {
            return answer.map(Chunk::Shared);
        }
        // Taken into `blocks` by another reader since the first look.
        if let Some(b) = self.cached(offset, len) {
            return Ok(Chunk::Shared(b));
        }
        let r = offset..offset.saturating_add(len as u64);
        self.check_bounds(uri, &r)?;
        if len == 0 {
            return Ok(Chunk::Shared(Bytes::new()));
        }
        block_on(fetch(&self.shared, uri, &self.path, r)).map(Chunk::Shared)
    }
}

/// An object being uploaded through `object_store`'s `BufWriter`.
struct ObjectWriter {
    /// `None` once finishing started.
    writer: Option<BufWriter>,
}

impl WriteFile for ObjectWriter {
    /// Buffers `bytes`; once a part is full the multipart upload starts and full parts go up
    /// in the background (this waits while `parallel` parts are in flight).
    fn write(&mut self, uri: &Uri, bytes: &[u8]) -> Result<()> {
        let Some(w) = self.writer.as_mut() else {
            return Err(Error::Internal(format!("{uri}: written after finish")));
        };
        if bytes.is_empty() {
            return Ok(());
        }
        block_on(w.put(Bytes::copy_from_slice(bytes))).map_err(|e| failure(uri, "cannot upload", e))
    }

    /// One PUT of what was buffered, or the last part and the multipart upload's completion
    /// (which `object_store` aborts when a part or the completion fails).
    fn finish(mut self: Box<Self>, uri: &Uri) -> Result<()> {
        let Some(mut w) = self.writer.take() else {
            return Ok(());
        };
        block_on(futures_util::future::poll_fn(|cx| {
            Pin::new(&mut w).poll_shutdown(cx)
        }))
        .map_err(|e| upload_failure(uri, e))
    }
}

impl Drop for ObjectWriter {
    /// An unfinished multipart upload is aborted (best effort), so that no parts linger.
    fn drop(&mut self) {
        if let Some(mut w) = self.writer.take() {
            let _ = block_on(w.abort());
        }
    }
}

/// An upload's error: `BufWriter` hands `object_store`'s errors back as I/O errors wrapping
/// them.
fn upload_failure(uri: &Uri, e: std::io::Error) -> Error {
    if e.get_ref()
        .is_some_and(|inner| inner.is::<object_store::Error>())
    {
        if let Some(Ok(inner)) = e.into_inner().map(|i| i.downcast::<object_store::Error>()) {
            return failure(uri, "cannot upload", *inner);
        }
        return Error::Internal(format!("{uri}: an upload error changed type"));
    }
    Error::corrupt(format!("{uri}: cannot upload: {e}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::single_range_in_vec_init)]
    use super::*;
    use crate::storage::test_store::RecordingStore;
    use crate::storage::{Storage, StorageConfig};
    use object_store::BackoffConfig;

    /// A backend over `store` with small parts and fast retries (3, 1 ms apart).
    fn backend(store: &Arc<RecordingStore>, part_size: usize, parallel: usize) -> ObjectBackend {
        let settings = Settings {
            rule: BatchRule {
                min_gap: 100,
                min_size: 0,
                max_size: 1 << 20,
            },
            parallel,
            part_size,
            retry: RetryConfig {
                backoff: BackoffConfig {
                    init_backoff: Duration::from_millis(1),
                    max_backoff: Duration::from_millis(2),
                    base: 2.0,
                },
                max_retries: 3,
                retry_timeout: Duration::from_secs(10),
            },
        };
        ObjectBackend::with_store(
            Arc::clone(store) as Arc<dyn ObjectStore>,
            settings,
            "mem://t".into(),
        )
    }

    fn bytes(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    fn gets(log: &[String]) -> usize {
        log.iter().filter(|l| l.starts_with("get ")).count()
    }

    #[test]
    fn prefetch_merges_ranges_and_serves_later_reads() {
        let store = RecordingStore::new();
        let b = backend(&store, 1 << 20, 4);
        let uri = Uri::new("mem://t/arr/a0.tdb");
        let data = bytes(100_000);
        b.write_new(&uri, &data).unwrap();
        let f = b.open_file(&uri, Some(data.len() as u64)).unwrap();
        store.take_log();
        // 0..10 and 50..60 are 40 bytes apart (one request); 5000.. and 90000.. are far.
        let ranges = [50..60, 0..10, 5_000..5_100, 5_150..5_200, 90_000..100_000];
        f.prefetch(&Uri::new("mem://t/arr/a0.tdb"), &ranges)
            .unwrap();
        // Reads wait for the background requests holding their bytes.
        let mut scratch = Vec::new();
        for r in ranges {
            let got = f
                .range(&uri, r.start, (r.end - r.start) as usize, &mut scratch)
                .unwrap();
            assert_eq!(&*got, &data[r.start as usize..r.end as usize]);
        }
        let log = store.take_log();
        assert_eq!(gets(&log), 3, "{log:?}");
        assert!(
            log.contains(&"get arr/a0.tdb bytes=0-59".to_string()),
            "{log:?}"
        );
        assert!(
            log.contains(&"get arr/a0.tdb bytes=5000-5199".to_string()),
            "{log:?}"
        );
        // Prefetching what is there already, and reading inside it, asks for nothing.
        f.prefetch(&uri, &[1..9, 91_000..92_000]).unwrap();
        assert!(store.take_log().is_empty());
        // A range not prefetched is one GET of its own.
        let got = f.range(&uri, 20_000, 3, &mut scratch).unwrap();
        assert_eq!(&*got, &data[20_000..20_003]);
        assert_eq!(store.take_log(), ["get arr/a0.tdb bytes=20000-20002"]);
        // Past the end: refused naming the object, without a request.
        let e = f.prefetch(&uri, &[99_990..100_001]).unwrap_err();
        assert!(
            e.message().contains("a0.tdb") && e.message().contains("past the end"),
            "{e}"
        );
        assert!(store.take_log().is_empty());
    }

    #[test]
    fn reads_wait_only_for_the_request_holding_their_bytes() {
        let store = RecordingStore::new();
        let b = backend(&store, 1 << 20, 4);
        let uri = Uri::new("mem://t/arr/a1.tdb");
        let data = bytes(300_000);
        b.write_new(&uri, &data).unwrap();
        let f = b.open_file(&uri, Some(data.len() as u64)).unwrap();
        // The last of three requests is held back: the first two are read meanwhile.
        let gate = store.hold("bytes=200000-");
        f.prefetch(&uri, &[0..1_000, 100_000..101_000, 200_000..201_000])
            .unwrap();
        let mut scratch = Vec::new();
        for r in [0..1_000u64, 100_000..101_000] {
            let got = f.range(&uri, r.start, 1_000, &mut scratch).unwrap();
            assert_eq!(&*got, &data[r.start as usize..r.end as usize]);
        }
        gate.add_permits(1);
        let got = f.range(&uri, 200_500, 500, &mut scratch).unwrap();
        assert_eq!(&*got, &data[200_500..201_000]);
        // Three requests in all: none was repeated by a read waiting for it.
        assert_eq!(gets(&store.take_log()), 3);
        // A second prefetch of ranges being fetched or fetched asks for nothing.
        f.prefetch(&uri, &[0..10, 200_000..200_010]).unwrap();
        assert!(store.take_log().is_empty());
    }

    #[test]
    fn short_bodies_are_fetched_again_under_the_retry_config() {
        let store = RecordingStore::new();
        let b = backend(&store, 1 << 20, 4);
        let uri = Uri::new("mem://t/s/a1_var.tdb");
        let data = bytes(4_000);
        b.write_new(&uri, &data).unwrap();
        let f = b.open_file(&uri, None).unwrap();
        // Two short answers, then a whole one: within 3 retries.
        store.short("a1_var", 2);
        store.take_log();
        f.prefetch(&uri, &[0..4_000]).unwrap();
        let mut scratch = Vec::new();
        assert_eq!(&*f.range(&uri, 0, 4_000, &mut scratch).unwrap(), &data[..]);
        assert_eq!(gets(&store.take_log()), 3);
        // Whole reads check the body against the object's size too.
        store.short("a1_var", 1);
        assert_eq!(b.read(&uri).unwrap(), data);
        assert_eq!(gets(&store.take_log()), 2);
        // Always short: 1 + 3 fetches, then an error naming the object and the lengths.
        store.short("a1_var", 100);
        let f = b.open_file(&uri, Some(4_000)).unwrap();
        // The failed background request is the error of every read inside it.
        f.prefetch(&uri, &[0..4_000]).unwrap();
        let e = f
            .range(&uri, 1_000, 10, &mut scratch)
            .err()
            .expect("an error");
        let again = f
            .range(&uri, 0, 4_000, &mut scratch)
            .err()
            .expect("an error");
        assert_eq!(e, again);
        let m = e.message();
        assert!(
            m.contains("a1_var.tdb") && m.contains("came back 2000 bytes long"),
            "{m}"
        );
        assert!(m.contains("after 4 attempts"), "{m}");
        assert_eq!(gets(&store.take_log()), 4);
        let e = b.read(&uri).unwrap_err();
        assert!(e.message().contains("after 4 attempts"), "{e}");
    }

    #[test]
    fn failed_requests_are_not_retried_on_top_of_the_store() {
        let store = RecordingStore::new();
        let b = backend(&store, 1 << 20, 4);
        let uri = Uri::new("mem://t/f/a0.tdb");
        b.write_new(&uri, &bytes(100)).unwrap();
        store.fail("get", "a0.tdb");
        store.take_log();
        let f = b.open_file(&uri, Some(100)).unwrap();
        f.prefetch(&uri, &[0..100]).unwrap();
        let e = f
            .range(&uri, 0, 100, &mut Vec::new())
            .err()
            .expect("an error");
        assert!(
            e.message().contains("a0.tdb") && e.message().contains("injected"),
            "{e}"
        );
        assert_eq!(gets(&store.take_log()), 1);
        // A missing object is an I/O error of kind NotFound naming it (as a missing file).
        let e = b.read(&Uri::new("mem://t/f/missing")).unwrap_err();
        assert!(
            matches!(&e, Error::Io { kind, .. } if *kind == std::io::ErrorKind::NotFound),
            "{e:?}"
        );
        assert!(e.message().contains("missing: not found"), "{e}");
        assert!(!b.is_file(&Uri::new("mem://t/f/missing")).unwrap());
    }

    #[test]
    fn empty_objects_read_whole() {
        let store = RecordingStore::new();
        let b = backend(&store, 1 << 20, 4);
        let uri = Uri::new("mem://t/__commits/x.wrt");
        b.write_new(&uri, &[]).unwrap();
        store.take_log();
        assert_eq!(b.read(&uri).unwrap(), Vec::<u8>::new());
        // `bytes=0-` is refused for an empty object; asked again without a range.
        assert_eq!(
            store.take_log(),
            ["get __commits/x.wrt bytes=0-", "get __commits/x.wrt"]
        );
        assert_eq!(b.size(&uri).unwrap(), 0);
    }

    #[test]
    fn large_files_go_up_in_parts_small_ones_in_one_put() {
        let store = RecordingStore::new();
        let b = backend(&store, 1_000, 2);
        let data = bytes(3_500);
        let uri = Uri::new("mem://t/m/big");
        let mut w = b.create_file(&uri).unwrap();
        for chunk in data.chunks(300) {
            w.write(&uri, chunk).unwrap();
        }
        w.finish(&uri).unwrap();
        let log = store.take_log();
        let parts: Vec<&String> = log.iter().filter(|l| l.starts_with("part ")).collect();
        assert_eq!(
            log.first().map(String::as_str),
            Some("multipart m/big"),
            "{log:?}"
        );
        assert_eq!(
            log.last().map(String::as_str),
            Some("complete m/big"),
            "{log:?}"
        );
        assert_eq!(
            parts,
            [
                "part m/big 1000",
                "part m/big 1000",
                "part m/big 1000",
                "part m/big 500"
            ],
            "{log:?}"
        );
        assert_eq!(b.read(&uri).unwrap(), data);
        store.take_log();
        // Up to one part: one PUT.
        let small = Uri::new("mem://t/m/small");
        let mut w = b.create_file(&small).unwrap();
        w.write(&small, &data[..400]).unwrap();
        w.write(&small, &data[400..999]).unwrap();
        w.finish(&small).unwrap();
        b.write_new(&Uri::new("mem://t/m/small2"), &data[..10])
            .unwrap();
        assert_eq!(store.take_log(), ["put m/small 999", "put m/small2 10"]);
        assert_eq!(b.read(&small).unwrap(), &data[..999]);
        assert_eq!(
            b.list(&Uri::new("mem://t/m")).unwrap(),
            [
                Entry {
                    name: "big".into(),
                    is_dir: false,
                    size: 3_500
                },
                Entry {
                    name: "small".into(),
                    is_dir: false,
                    size: 999
                },
                Entry {
                    name: "small2".into(),
                    is_dir: false,
                    size: 10
                }
            ]
        );
    }

    #[test]
    fn failed_or_dropped_uploads_are_aborted_and_leave_no_object() {
        let store = RecordingStore::new();
        let b = backend(&store, 1_000, 2);
        let data = bytes(2_500);
        // A part fails: the upload is aborted, the error names the object.
        let uri = Uri::new("mem://t/u/fails");
        store.fail("part", "fails");
        let mut w = b.create_file(&uri).unwrap();
        let written = w.write(&uri, &data);
        let e = match written {
            Ok(()) => w.finish(&uri).unwrap_err(),
            Err(e) => e,
        };
        assert!(e.message().contains("u/fails"), "{e}");
        assert!(store.take_log().iter().any(|l| l == "abort u/fails"));
        assert!(!b.is_file(&uri).unwrap());
        // The completion fails: aborted too.
        let uri = Uri::new("mem://t/u/incomplete");
        store.fail("complete", "incomplete");
        let mut w = b.create_file(&uri).unwrap();
        w.write(&uri, &data).unwrap();
        let e = w.finish(&uri).unwrap_err();
        assert!(e.message().contains("u/incomplete"), "{e}");
        assert!(store.take_log().iter().any(|l| l == "abort u/incomplete"));
        assert!(!b.is_file(&uri).unwrap());
        // Dropped unfinished after parts went up: aborted.
        let uri = Uri::new("mem://t/u/dropped");
        let mut w = b.create_file(&uri).unwrap();
        w.write(&uri, &data).unwrap();
        drop(w);
        let log = store.take_log();
        assert_eq!(
            log.last().map(String::as_str),
            Some("abort u/dropped"),
            "{log:?}"
        );
        assert!(!b.is_file(&uri).unwrap());
        // Removing a prefix deletes every object under it, and only those.
        b.write_new(&Uri::new("mem://t/u/d/x"), b"x").unwrap();
        b.write_new(&Uri::new("mem://t/u/d/y/z"), b"z").unwrap();
        b.write_new(&Uri::new("mem://t/u/dd"), b"d").unwrap();
        b.remove_dir_all(&Uri::new("mem://t/u/d")).unwrap();
        let names: Vec<String> = b
            .list(&Uri::new("mem://t/u"))
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["dd"]);
    }

    #[test]
    fn mem_uris_share_one_store_per_bucket() {
        let c = StorageConfig::new();
        let (s, root) = Storage::open("mem://shared-bucket/arr", &c).unwrap();
        assert!(!s.is_local());
        s.write_new(&root.join("f"), b"abc").unwrap();
        let (s2, root2) = Storage::open("mem://shared-bucket/arr/", &c).unwrap();
        assert_eq!(root2, root);
        assert_eq!(s2.read(&root.join("f")).unwrap(), b"abc");
        assert!(s2.is_dir(&root).unwrap());
        let (s3, other) = Storage::open("mem://other-bucket/arr", &c).unwrap();
        assert!(!s3.is_dir(&other).unwrap());
        assert!(Storage::open("mem://", &c).is_err());
    }

    /// The sync API called from inside tokio runtimes (an async user) works and does not
    /// panic; see `runtime.rs` for the rule.
    #[tokio::test(flavor = "current_thread")]
    async fn sync_calls_from_a_current_thread_runtime() {
        round_trip("tokio-current");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sync_calls_from_a_multi_thread_runtime() {
        round_trip("tokio-multi");
        // From a spawned task, and from spawn_blocking (no runtime context there).
        tokio::spawn(async { round_trip("tokio-task") })
            .await
            .unwrap();
        tokio::task::spawn_blocking(|| round_trip("tokio-blocking"))
            .await
            .unwrap();
    }

    #[test]
    fn sync_calls_from_inside_block_on() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async { round_trip("tokio-block-on") });
    }

    fn round_trip(bucket: &str) {
        let (s, root) = Storage::open(&format!("mem://{bucket}/a"), &StorageConfig::new()).unwrap();
        let data = bytes(5_000);
        s.write_new(&root.join("f"), &data).unwrap();
        let mut w = s.create_file(&root.join("g")).unwrap();
        w.write(&data[..10]).unwrap();
        drop(w);
        assert_eq!(s.read(&root.join("f")).unwrap(), data);
        let r = s.open_file(&root.join("f")).unwrap();
        r.prefetch(&[10..20, 4_000..4_010]).unwrap();
        let mut scratch = Vec::new();
        let got = r
            .with_range(4_000, 10, &mut scratch, |b| Ok(b.to_vec()))
            .unwrap();
        assert_eq!(got, &data[4_000..4_010]);
        let names: Vec<String> = s.list(&root).unwrap().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["f"]);
        s.remove_dir_all(&root).unwrap();
        assert!(!s.is_dir(&root).unwrap());
    }
}
