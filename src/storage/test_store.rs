//! Tests only: object_store's `InMemory` wrapped to record every request in order, fail
//! chosen ones, and cut chosen bodies short (a body shorter than its range, as a proxy
//! rewriting `Content-Length` would send). `mem://` buckets can be given one
//! ([`install`]), so that the array code's requests can be watched too.

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, Result, UploadPart,
};
use std::fmt;
use std::sync::{Arc, Mutex};

/// What a [`RecordingStore`] does to requests.
#[derive(Default)]
struct Faults {
    /// (operation, path part): such requests fail (every time).
    fail: Vec<(&'static str, String)>,
    /// (path part, times): the next `times` GETs of such paths return half their body.
    short: Vec<(String, usize)>,
    /// (request part, gate): GETs whose `path range` contains the part wait for a permit
    /// of the gate before they answer.
    held: Vec<(String, Arc<tokio::sync::Semaphore>)>,
}

/// `InMemory` with a request log and fault injection.
pub(crate) struct RecordingStore {
    inner: InMemory,
    log: Arc<Mutex<Vec<String>>>,
    faults: Mutex<Faults>,
}

impl fmt::Debug for RecordingStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RecordingStore")
    }
}

impl fmt::Display for RecordingStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RecordingStore")
    }
}

impl RecordingStore {
    /// An empty store.
    pub(crate) fn new() -> Arc<RecordingStore> {
        Arc::new(RecordingStore {
            inner: InMemory::new(),
            log: Arc::new(Mutex::new(Vec::new())),
            faults: Mutex::new(Faults::default()),
        })
    }

    /// The requests so far (`op path[ detail]`), and clears the log.
    pub(crate) fn take_log(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }

    /// Requests `op` (`put`, `multipart`, `part`, `complete`, `get`, `head`, `delete`) on
    /// paths containing `part` fail from now on.
    pub(crate) fn fail(&self, op: &'static str, part: &str) {
        self.faults
            .lock()
            .unwrap()
            .fail
            .push((op, part.to_string()));
    }

    /// The next `times` GETs of paths containing `part` return half their body.
    pub(crate) fn short(&self, part: &str, times: usize) {
        self.faults
            .lock()
            .unwrap()
            .short
            .push((part.to_string(), times));
    }

    /// GETs whose `path range` (as the log writes it) contains `part` wait from now on until
    /// the returned gate is given a permit (`add_permits(1)` lets one through).
    pub(crate) fn hold(&self, part: &str) -> Arc<tokio::sync::Semaphore> {
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        self.faults
            .lock()
            .unwrap()
            .held
            .push((part.to_string(), Arc::clone(&gate)));
        gate
    }

    fn gate(&self, request: &str) -> Option<Arc<tokio::sync::Semaphore>> {
        let f = self.faults.lock().unwrap();
        f.held
            .iter()
            .find(|(part, _)| request.contains(part.as_str()))
            .map(|(_, g)| Arc::clone(g))
    }

    fn record(&self, op: &'static str, path: &Path, detail: String) -> Result<()> {
        let line = if detail.is_empty() {
            format!("{op} {path}")
        } else {
            format!("{op} {path} {detail}")
        };
        self.log.lock().unwrap().push(line);
        check(&self.faults, op, path)
    }

    fn take_short(&self, path: &Path) -> bool {
        let mut f = self.faults.lock().unwrap();
        for (part, times) in f.short.iter_mut() {
            if *times > 0 && path.as_ref().contains(part.as_str()) {
                *times -= 1;
                return true;
            }
        }
        false
    }
}

fn check(faults: &Mutex<Faults>, op: &'static str, path: &Path) -> Result<()> {
    let f = faults.lock().unwrap();
    if f.fail
        .iter()
        .any(|(o, part)| *o == op && path.as_ref().contains(part.as_str()))
    {
        return Err(object_store::Error::Generic {
            store: "RecordingStore",
            source: format!("injected failure of {op} {path}").into(),
        });
    }
    Ok(())
}

/// Installs a new [`RecordingStore`] as the store of `mem://bucket` and returns it.
pub(crate) fn install(bucket: &str) -> Arc<RecordingStore> {
    let store = RecordingStore::new();
    super::stores::set_memory_store(bucket, Arc::clone(&store) as Arc<dyn ObjectStore>);
    store
}

#[async_trait]
impl ObjectStore for RecordingStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.record("put", location, payload.content_length().to_string())?;
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.record("multipart", location, String::new())?;
        let inner = self.inner.put_multipart_opts(location, opts).await?;
        Ok(Box::new(RecordingUpload {
            inner,
            path: location.clone(),
            log: Arc::clone(&self.log),
            faults: Arc::new(Mutex::new(Faults {
                fail: self.faults.lock().unwrap().fail.clone(),
                short: Vec::new(),
                held: Vec::new(),
            })),
        }))
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let detail = match &options.range {
            Some(r) => format!("{r}"),
            None => String::new(),
        };
        let op = if options.head { "head" } else { "get" };
        let request = format!("{location} {detail}");
        self.record(op, location, detail)?;
        if let Some(gate) = self.gate(&request) {
            gate.acquire().await.expect("the gate stays open").forget();
        }
        let got = self.inner.get_opts(location, options).await?;
        if op == "head" || !self.take_short(location) {
            return Ok(got);
        }
        let GetResult {
            meta,
            range,
            attributes,
            extensions,
            payload,
        } = got;
        let body = match payload {
            GetResultPayload::Stream(s) => object_store::collect_bytes(s, None).await?,
            #[allow(unreachable_patterns)]
            _ => unreachable!("InMemory streams"),
        };
        let half = body.slice(..body.len() / 2);
        Ok(GetResult {
            payload: GetResultPayload::Stream(
                futures_util::stream::once(async move { Ok::<Bytes, _>(half) }).boxed(),
            ),
            meta,
            range,
            attributes,
            extensions,
        })
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        let log = Arc::clone(&self.log);
        let locations = locations
            .map(move |p| {
                if let Ok(p) = &p {
                    log.lock().unwrap().push(format!("delete {p}"));
                }
                p
            })
            .boxed();
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.log
            .lock()
            .unwrap()
            .push(format!("list {}", prefix.map_or("", |p| p.as_ref())));
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.log
            .lock()
            .unwrap()
            .push(format!("list/ {}", prefix.map_or("", |p| p.as_ref())));
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.record("copy", from, to.to_string())?;
        self.inner.copy_opts(from, to, options).await
    }
}

/// A multipart upload of a [`RecordingStore`].
#[derive(Debug)]
struct RecordingUpload {
    inner: Box<dyn MultipartUpload>,
    path: Path,
    log: Arc<Mutex<Vec<String>>>,
    faults: Arc<Mutex<Faults>>,
}

impl fmt::Debug for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Faults")
    }
}

#[async_trait]
impl MultipartUpload for RecordingUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        self.log
            .lock()
            .unwrap()
            .push(format!("part {} {}", self.path, data.content_length()));
        if let Err(e) = check(&self.faults, "part", &self.path) {
            return Box::pin(async move { Err(e) });
        }
        self.inner.put_part(data)
    }

    async fn complete(&mut self) -> Result<PutResult> {
        self.log
            .lock()
            .unwrap()
            .push(format!("complete {}", self.path));
        check(&self.faults, "complete", &self.path)?;
        self.inner.complete().await
    }

    async fn abort(&mut self) -> Result<()> {
        self.log
            .lock()
            .unwrap()
            .push(format!("abort {}", self.path));
        self.inner.abort().await
    }
}
