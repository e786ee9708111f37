//! Where array files live, without knowing their format: a local folder, or (feature
//! `object-store`) an S3 bucket, an Azure Blob container or a GCS bucket. The array code names
//! files by [`Uri`] and does everything through a [`Storage`]: list one folder level, read a
//! whole file, read many byte ranges of one file (merged into few requests, many in flight),
//! size and existence, write a file (multipart uploads for large ones), delete, and on local
//! disks the `fsync`s that make a commit durable.
//!
//! Every kind of storage implements one internal interface (`backend.rs`): the local file
//! system, and `object_store`'s stores (S3, Azure Blob, GCS, and its in-memory store behind
//! `mem://`), which share one implementation.
//!
//! The API is synchronous: object stores are driven by one internal tokio runtime, created on
//! first use and shared, which callers (rayon workers too) block on. Calling it from inside
//! a tokio runtime (an async caller) is allowed and does not panic: such a call runs on a
//! short-lived thread of its own that blocks on the internal runtime, and blocks the calling
//! task until it is done (async callers should prefer `spawn_blocking`, as for any blocking
//! I/O). Local files keep positioned reads (`pread`) and plain writes.

mod backend;
#[cfg(feature = "object-store")]
mod batch;
mod config;
mod local;
#[cfg(feature = "object-store")]
mod object;
#[cfg(feature = "object-store")]
mod runtime;
#[cfg(feature = "object-store")]
mod stores;
#[cfg(all(test, feature = "object-store"))]
pub(crate) mod test_store;

pub use config::StorageConfig;

/// The suffix of the temporary file [`Storage::write_new_atomic`] renames into place (a kill
/// can leave one behind; readers never look at it).
pub const TEMP_SUFFIX: &str = ".tmp";

use backend::{Backend, ReadFile, WriteFile};

use crate::error::{Error, Result};
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// A file or folder: a local path, or `scheme://bucket/key` in an object store. Folders have no
/// trailing `/`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Uri(String);

impl Uri {
    /// A URI from its text (a trailing `/` is dropped).
    pub fn new(s: impl Into<String>) -> Uri {
        let mut s = s.into();
        while s.len() > 1 && s.ends_with('/') && !s.ends_with("://") {
            s.pop();
        }
        Uri(s)
    }

    /// `self/name`.
    pub fn join(&self, name: impl AsRef<str>) -> Uri {
        let name = name.as_ref();
        if self.0.is_empty() {
            Uri(name.to_string())
        } else if self.0.ends_with('/') {
            Uri(format!("{}{name}", self.0))
        } else {
            Uri(format!("{}/{name}", self.0))
        }
    }

    /// The last component.
    pub fn name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    /// The URI as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The URI as text, for messages (like `Path::display`).
    pub fn display(&self) -> &str {
        &self.0
    }

    /// Whether this names an object store (`scheme://…` other than `file://`).
    pub fn is_remote(&self) -> bool {
        self.0.contains("://") && !self.0.starts_with("file://")
    }
}

impl fmt::Display for Uri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One entry of a folder listing.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    /// The entry's name (last component).
    pub name: String,
    /// A folder (an object-store prefix).
    pub is_dir: bool,
    /// Bytes (0 for folders).
    pub size: u64,
}

/// The storage holding one array: cheap to clone, shareable between threads.
#[derive(Clone, Debug)]
pub struct Storage {
    backend: Arc<dyn Backend>,
}

/// The object-store schemes, for messages.
const REMOTE_SCHEMES: &[&str] = &["s3", "s3a", "azure", "az", "abfs", "gs", "gcs", "mem"];

impl Storage {
    /// The local file system.
    pub fn local() -> Storage {
        Storage {
            backend: Arc::new(local::LocalBackend),
        }
    }

    /// The storage of `uri` and the URI as the storage names it: a local path (or `file://`
    /// URI) gives the local file system; `s3://bucket/path`, `azure://container/path` and
    /// `gs://bucket/path` (also `gcs://`) an object store configured from `config` and the
    /// environment; `mem://bucket/path` a process-wide in-memory object store (one per
    /// bucket, empty at first, gone when the process ends: for tests). Other schemes, and
    /// object stores in a build without the `object-store` feature, are refused with
    /// [`Error::Unsupported`].
    pub fn open(uri: &str, config: &StorageConfig) -> Result<(Storage, Uri)> {
        if let Some(rest) = uri.strip_prefix("file://") {
            return Ok((Storage::local(), Uri::new(rest)));
        }
        let Some((scheme, _)) = uri.split_once("://") else {
            return Ok((Storage::local(), Uri::new(uri)));
        };
        if !REMOTE_SCHEMES.contains(&scheme) {
            return Err(Error::Unsupported(format!(
                "{uri}: URIs of scheme {scheme}:// are not supported (local paths, file://, s3://, \
                 azure://, gs://, mem:// are)"
            )));
        }
        Self::open_remote(uri, config)
    }

    #[cfg(feature = "object-store")]
    fn open_remote(uri: &str, config: &StorageConfig) -> Result<(Storage, Uri)> {
        let (backend, uri) = object::ObjectBackend::open(uri, config)?;
        Ok((
            Storage {
                backend: Arc::new(backend),
            },
            uri,
        ))
    }

    #[cfg(not(feature = "object-store"))]
    fn open_remote(uri: &str, _config: &StorageConfig) -> Result<(Storage, Uri)> {
        Err(Error::Unsupported(format!(
            "{uri}: this build of tdbfilter reads local folders only (built without the \
             `object-store` feature)"
        )))
    }

    /// Whether files are local (positioned reads and `fsync` apply).
    pub fn is_local(&self) -> bool {
        self.backend.is_local()
    }

    /// The entries of folder `dir`, one level, sorted by name (empty when it does not exist).
    pub fn list(&self, dir: &Uri) -> Result<Vec<Entry>> {
        let mut out = self.backend.list(dir)?;
        out.sort();
        Ok(out)
    }

    /// The whole file.
    pub fn read(&self, uri: &Uri) -> Result<Vec<u8>> {
        self.backend.read(uri)
    }

    /// The file's size.
    pub fn size(&self, uri: &Uri) -> Result<u64> {
        self.backend.size(uri)
    }

    /// When the file (locally also a folder) was last modified.
    pub fn modified(&self, uri: &Uri) -> Result<std::time::SystemTime> {
        self.backend.modified(uri)
    }

    /// Whether `uri` is a file.
    pub fn is_file(&self, uri: &Uri) -> Result<bool> {
        self.backend.is_file(uri)
    }

    /// Whether `uri` is a folder (an object-store prefix with at least one object below).
    pub fn is_dir(&self, uri: &Uri) -> Result<bool> {
        self.backend.is_dir(uri)
    }

    /// A reader of the file's byte ranges.
    pub fn open_file(&self, uri: &Uri) -> Result<FileReader> {
        Ok(FileReader {
            uri: uri.clone(),
            inner: self.backend.open_file(uri, None)?,
        })
    }

    /// A reader of a file whose size is known already (from fragment metadata): object stores
    /// skip the HEAD request and take `size` as the object's length (a read past the real
    /// end then fails naming the object); local files are opened and measured as usual.
    pub fn open_file_sized(&self, uri: &Uri, size: u64) -> Result<FileReader> {
        Ok(FileReader {
            uri: uri.clone(),
            inner: self.backend.open_file(uri, Some(size))?,
        })
    }

    /// Creates folder `dir` (parents must exist). Returns whether this call created it (`false`:
    /// it existed). Object stores have no folders: always `true`, nothing is written.
    pub fn create_dir(&self, dir: &Uri) -> Result<bool> {
        self.backend.create_dir(dir)
    }

    /// Creates folder `dir` and its missing parents (nothing on object stores).
    pub fn create_dir_all(&self, dir: &Uri) -> Result<()> {
        self.backend.create_dir_all(dir)
    }

    /// Removes folder `dir` and everything below it (every object under the prefix).
    pub fn remove_dir_all(&self, dir: &Uri) -> Result<()> {
        self.backend.remove_dir_all(dir)
    }

    /// Removes one file.
    pub fn remove_file(&self, uri: &Uri) -> Result<()> {
        self.backend.remove_file(uri)
    }

    /// Writes a new file with `bytes`: locally it must not exist yet and is synced to disk;
    /// in an object store it is one upload (multipart when large).
    pub fn write_new(&self, uri: &Uri, bytes: &[u8]) -> Result<()> {
        self.backend.write_new(uri, bytes)
    }

    /// Renames file `from` to `to`, replacing `to`: locally one atomic `rename` (not synced:
    /// see [`Storage::sync_dir`]); in object stores a copy and a delete.
    pub fn rename(&self, from: &Uri, to: &Uri) -> Result<()> {
        self.backend.rename(from, to)
    }

    /// Writes a new file `uri` (inside folder `dir`) that readers see whole or not at all:
    /// locally written and synced as `<uri>`[`TEMP_SUFFIX`], renamed into place and `dir`
    /// synced (a kill leaves at most the temporary file, which no reader looks at); in an
    /// object store one upload, which is atomic already.
    pub fn write_new_atomic(&self, dir: &Uri, uri: &Uri, bytes: &[u8]) -> Result<()> {
        if !self.is_local() {
            return self.write_new(uri, bytes);
        }
        let tmp = Uri::new(format!("{uri}{TEMP_SUFFIX}"));
        if self.is_file(&tmp)? {
            self.remove_file(&tmp)?;
        }
        self.write_new(&tmp, bytes)?;
        self.rename(&tmp, uri)?;
        self.sync_dir(dir)
    }

    /// A file written front to back: created (truncated) now, whole and durable after
    /// [`FileWriter::finish`]. An unfinished writer's upload is aborted when dropped.
    pub fn create_file(&self, uri: &Uri) -> Result<FileWriter> {
        Ok(FileWriter {
            uri: uri.clone(),
            inner: Some(self.backend.create_file(uri)?),
        })
    }

    /// Makes folder `dir`'s entries durable (`fsync` of the folder; nothing on object stores,
    /// where a finished upload is durable).
    pub fn sync_dir(&self, dir: &Uri) -> Result<()> {
        self.backend.sync_dir(dir)
    }
}

/// Byte ranges of one file: positioned reads locally; in an object store, ranged GETs, with
/// [`FileReader::prefetch`] fetching many ranges at once (merged, in parallel) and later reads
/// served from what it fetched.
pub struct FileReader {
    uri: Uri,
    inner: Box<dyn ReadFile>,
}

impl fmt::Debug for FileReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileReader")
            .field("uri", &self.uri)
            .field("len", &self.len())
            .finish()
    }
}

impl FileReader {
    /// The file.
    pub fn uri(&self) -> &Uri {
        &self.uri
    }

    /// The file's size.
    pub fn len(&self) -> u64 {
        self.inner.len()
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fetches `ranges` now (object stores: merged into few ranged GETs, many in flight, kept
    /// for the reads that follow; local files: nothing to do).
    pub fn prefetch(&self, ranges: &[Range<u64>]) -> Result<()> {
        self.inner.prefetch(&self.uri, ranges)
    }

    /// Calls `f` with the `len` bytes at `offset`. `scratch` is a buffer a local read fills
    /// (grown as needed, not shrunk); prefetched object bytes are passed without a copy.
    pub fn with_range<R>(
        &self,
        offset: u64,
        len: usize,
        scratch: &mut Vec<u8>,
        f: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R> {
        let chunk = self.inner.range(&self.uri, offset, len, scratch)?;
        f(&chunk)
    }
}

/// A file being written front to back (see [`Storage::create_file`]).
pub struct FileWriter {
    uri: Uri,
    inner: Option<Box<dyn WriteFile>>,
}

impl fmt::Debug for FileWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileWriter")
            .field("uri", &self.uri)
            .finish()
    }
}

impl FileWriter {
    /// The file.
    pub fn uri(&self) -> &Uri {
        &self.uri
    }

    /// Appends `bytes` (object stores: parts are uploaded in the background as they fill).
    pub fn write(&mut self, bytes: &[u8]) -> Result<()> {
        match self.inner.as_mut() {
            Some(w) => w.write(&self.uri, bytes),
            None => Err(Error::Internal(format!(
                "{}: written after finish",
                self.uri
            ))),
        }
    }

    /// Completes the file: locally synced to disk; in an object store the upload (one PUT, or
    /// the multipart upload's parts and completion) has succeeded.
    pub fn finish(mut self) -> Result<()> {
        match self.inner.take() {
            Some(w) => w.finish(&self.uri),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_join_and_name() {
        let u = Uri::new("s3://b/arr/");
        assert_eq!(u.as_str(), "s3://b/arr");
        assert_eq!(u.join("__schema").as_str(), "s3://b/arr/__schema");
        assert_eq!(u.join("__schema").name(), "__schema");
        assert!(u.is_remote());
        assert!(!Uri::new("/tmp/x").is_remote());
        assert_eq!(Uri::new("/").as_str(), "/");
    }

    #[test]
    fn local_files_round_trip() {
        let dir = std::env::temp_dir().join(format!("tdbf-storage-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (s, root) = Storage::open(dir.to_str().unwrap(), &StorageConfig::new()).unwrap();
        assert!(s.is_local());
        s.create_dir_all(&root).unwrap();
        assert!(!s.create_dir(&root).unwrap());
        assert!(s.create_dir(&root.join("sub")).unwrap());
        s.write_new(&root.join("a"), b"hello").unwrap();
        assert!(s.write_new(&root.join("a"), b"again").is_err());
        let mut w = s.create_file(&root.join("b")).unwrap();
        w.write(b"0123").unwrap();
        w.write(b"4567").unwrap();
        w.finish().unwrap();
        s.sync_dir(&root).unwrap();
        let names: Vec<(String, bool, u64)> = s
            .list(&root)
            .unwrap()
            .into_iter()
            .map(|e| (e.name, e.is_dir, e.size))
            .collect();
        assert_eq!(
            names,
            [
                ("a".into(), false, 5),
                ("b".into(), false, 8),
                ("sub".into(), true, names[2].2)
            ]
        );
        assert_eq!(s.read(&root.join("a")).unwrap(), b"hello");
        assert_eq!(s.size(&root.join("b")).unwrap(), 8);
        let r = s.open_file(&root.join("b")).unwrap();
        r.prefetch(&[2..4, 6..7]).unwrap();
        let mut scratch = Vec::new();
        let got = r
            .with_range(2, 3, &mut scratch, |b| Ok(b.to_vec()))
            .unwrap();
        assert_eq!(got, b"234");
        assert!(r.with_range(6, 4, &mut scratch, |_| Ok(())).is_err());
        assert!(s.list(&root.join("missing")).unwrap().is_empty());
        let e = s.read(&root.join("missing")).unwrap_err();
        assert!(e.message().contains("missing"), "{e}");
        s.remove_dir_all(&root).unwrap();
        assert!(!s.is_dir(&root).unwrap());
    }

    #[test]
    fn unknown_schemes_are_refused() {
        let e = Storage::open("tiledb://ns/arr", &StorageConfig::new()).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{e:?}");
        assert!(e.message().contains("tiledb://"), "{e}");
    }

    #[cfg(not(feature = "object-store"))]
    #[test]
    fn object_stores_need_the_feature() {
        let e = Storage::open("s3://bucket/arr", &StorageConfig::new()).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{e:?}");
        assert!(e.message().contains("object-store"), "{e}");
    }
}
