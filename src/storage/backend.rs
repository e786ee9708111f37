//! The one interface every kind of storage implements: the local file system
//! (`local.rs`), and every `object_store` store (`object.rs`: S3, Azure Blob, GCS and the
//! in-memory store share one implementation over `dyn ObjectStore`). [`super::Storage`] and
//! its readers and writers only forward to these traits.

use super::{Entry, Uri};
use crate::error::Result;
use std::fmt;
use std::ops::{Deref, Range};

/// A place files live in (see the methods of [`super::Storage`] of the same names).
pub(super) trait Backend: Send + Sync + fmt::Debug {
    /// Whether files are local (positioned reads and `fsync` apply).
    fn is_local(&self) -> bool;
    /// One folder level, in any order (empty when the folder does not exist).
    fn list(&self, dir: &Uri) -> Result<Vec<Entry>>;
    /// The whole file.
    fn read(&self, uri: &Uri) -> Result<Vec<u8>>;
    /// The file's size.
    fn size(&self, uri: &Uri) -> Result<u64>;
    /// Whether `uri` is a file.
    fn is_file(&self, uri: &Uri) -> Result<bool>;
    /// When the file (locally also a folder) was last modified.
    fn modified(&self, uri: &Uri) -> Result<std::time::SystemTime>;
    /// Whether `uri` is a folder.
    fn is_dir(&self, uri: &Uri) -> Result<bool>;
    /// A reader of the file; `size`, when given, is taken as its length unchecked where
    /// measuring costs a request.
    fn open_file(&self, uri: &Uri, size: Option<u64>) -> Result<Box<dyn ReadFile>>;
    /// Creates one folder; whether this call created it.
    fn create_dir(&self, dir: &Uri) -> Result<bool>;
    /// Creates a folder and its missing parents.
    fn create_dir_all(&self, dir: &Uri) -> Result<()>;
    /// Removes a folder and everything below it.
    fn remove_dir_all(&self, dir: &Uri) -> Result<()>;
    /// Removes one file.
    fn remove_file(&self, uri: &Uri) -> Result<()>;
    /// Writes a new file whole.
    fn write_new(&self, uri: &Uri, bytes: &[u8]) -> Result<()>;
    /// Renames a file, replacing `to` (by default a copy and a delete; local files override
    /// it with one atomic rename).
    fn rename(&self, from: &Uri, to: &Uri) -> Result<()> {
        let bytes = self.read(from)?;
        self.write_new(to, &bytes)?;
        self.remove_file(from)
    }
    /// A file written front to back.
    fn create_file(&self, uri: &Uri) -> Result<Box<dyn WriteFile>>;
    /// Makes a folder's entries durable.
    fn sync_dir(&self, dir: &Uri) -> Result<()>;
}

/// Byte ranges of one open file.
pub(super) trait ReadFile: Send + Sync {
    /// The file's size.
    fn len(&self) -> u64;
    /// Fetches `ranges` ahead of the reads that follow (nothing to do where reads are cheap).
    fn prefetch(&self, uri: &Uri, ranges: &[Range<u64>]) -> Result<()>;
    /// The `len` bytes at `offset`: read into `scratch` (grown as needed), or shared from
    /// what was fetched.
    fn range<'a>(
        &'a self,
        uri: &Uri,
        offset: u64,
        len: usize,
        scratch: &'a mut Vec<u8>,
    ) -> Result<Chunk<'a>>;
}

/// A file being written front to back.
pub(super) trait WriteFile: Send {
    /// Appends `bytes`.
    fn write(&mut self, uri: &Uri, bytes: &[u8]) -> Result<()>;
    /// Completes the file (durable, or uploaded whole).
    fn finish(self: Box<Self>, uri: &Uri) -> Result<()>;
}

/// Bytes of a file: borrowed from the caller's scratch buffer or shared with a fetched block.
pub(super) enum Chunk<'a> {
    /// Read into the scratch buffer.
    Scratch(&'a [u8]),
    /// A slice of bytes fetched from an object store (no copy).
    #[cfg(feature = "object-store")]
    Shared(bytes::Bytes),
}

impl Deref for Chunk<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Chunk::Scratch(b) => b,
            #[cfg(feature = "object-store")]
            Chunk::Shared(b) => b,
        }
    }
}
