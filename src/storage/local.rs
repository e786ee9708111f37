//! The local file system: positioned reads, plain writes, `fsync` of files and folders.

use super::backend::{Backend, Chunk, ReadFile, WriteFile};
use super::{Entry, Uri};
use crate::error::{Error, Result};
use std::fs::File;
use std::io::Write;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::Path;

fn path(uri: &Uri) -> &Path {
    Path::new(uri.as_str())
}

/// An I/O error naming the file and the system's error: [`Error::Io`] (a failed allocation
/// is [`Error::OutOfMemory`]).
pub(crate) fn io_error(uri: &Uri, what: &str, e: std::io::Error) -> Error {
    match Error::io(uri, what, &e) {
        Error::Io {
            kind: std::io::ErrorKind::OutOfMemory,
            message,
            ..
        } => Error::OutOfMemory(message),
        e => e,
    }
}

fn list(dir: &Uri) -> Result<Vec<Entry>> {
    let rd = match std::fs::read_dir(path(dir)) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_error(dir, "", e)),
    };
    let mut out = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|e| io_error(dir, "", e))?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let meta = entry
            .metadata()
            .map_err(|e| io_error(&dir.join(&name), "", e))?;
        out.push(Entry {
            name,
            is_dir: meta.is_dir(),
            size: meta.len(),
        });
    }
    Ok(out)
}

fn read(uri: &Uri) -> Result<Vec<u8>> {
    std::fs::read(path(uri)).map_err(|e| io_error(uri, "", e))
}

fn size(uri: &Uri) -> Result<u64> {
    std::fs::metadata(path(uri))
        .map(|m| m.len())
        .map_err(|e| io_error(uri, "", e))
}

fn modified(uri: &Uri) -> Result<std::time::SystemTime> {
    std::fs::metadata(path(uri))
        .and_then(|m| m.modified())
        .map_err(|e| io_error(uri, "", e))
}

/// An open file and its length.
pub(super) struct LocalFile {
    file: File,
    len: u64,
}

fn open(uri: &Uri) -> Result<LocalFile> {
    let file = File::open(path(uri)).map_err(|e| io_error(uri, "", e))?;
    let len = file.metadata().map_err(|e| io_error(uri, "", e))?.len();
    Ok(LocalFile { file, len })
}

impl LocalFile {
    fn read_at(&self, uri: &Uri, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.file.read_exact_at(buf, offset).map_err(|e| {
            let what = format!("cannot read {} bytes at offset {offset}", buf.len());
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                // A file shorter than its metadata says: truncated data.
                Error::corrupt(format!("{uri}: {what}: {e}"))
            } else {
                io_error(uri, &what, e)
            }
        })
    }
}

fn create_dir(dir: &Uri) -> Result<bool> {
    match std::fs::create_dir(path(dir)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && path(dir).is_dir() => Ok(false),
        Err(e) => Err(io_error(dir, "cannot create the folder", e)),
    }
}

fn create_dir_all(dir: &Uri) -> Result<()> {
    std::fs::create_dir_all(path(dir)).map_err(|e| io_error(dir, "cannot create the folder", e))
}

fn remove_dir_all(dir: &Uri) -> Result<()> {
    match std::fs::remove_dir_all(path(dir)) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error(dir, "cannot remove", e)),
    }
}

fn remove_file(uri: &Uri) -> Result<()> {
    std::fs::remove_file(path(uri)).map_err(|e| io_error(uri, "cannot remove", e))
}

fn write_new(uri: &Uri, bytes: &[u8]) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path(uri))
        .map_err(|e| io_error(uri, "cannot create", e))?;
    f.write_all(bytes)
        .map_err(|e| io_error(uri, "cannot write", e))?;
    f.sync_all().map_err(|e| io_error(uri, "cannot sync", e))
}

fn rename(from: &Uri, to: &Uri) -> Result<()> {
    std::fs::rename(path(from), path(to)).map_err(|e| io_error(from, "cannot rename", e))
}

/// A file being written.
pub(super) struct LocalWriter {
    file: File,
}

fn create(uri: &Uri) -> Result<LocalWriter> {
    let file = File::create(path(uri)).map_err(|e| io_error(uri, "cannot create", e))?;
    Ok(LocalWriter { file })
}

impl LocalWriter {
    fn write(&mut self, uri: &Uri, bytes: &[u8]) -> Result<()> {
        self.file
            .write_all(bytes)
            .map_err(|e| io_error(uri, "cannot write", e))
    }

    fn finish(self, uri: &Uri) -> Result<()> {
        self.file
            .sync_all()
            .map_err(|e| io_error(uri, "cannot sync", e))
    }
}

/// Syncs a folder's entries to disk (where the platform allows opening folders).
fn sync_dir(dir: &Uri) -> Result<()> {
    match File::open(path(dir)) {
        Ok(d) => d.sync_all().or_else(|e| {
            // Some file systems refuse fsync on folders; the files themselves are synced.
            if e.kind() == std::io::ErrorKind::InvalidInput {
                Ok(())
            } else {
                Err(io_error(dir, "cannot sync", e))
            }
        }),
        Err(e) => Err(io_error(dir, "cannot open", e)),
    }
}

/// The local file system as a [`Backend`].
#[derive(Debug)]
pub(super) struct LocalBackend;

impl Backend for LocalBackend {
    fn is_local(&self) -> bool {
        true
    }

    fn list(&self, dir: &Uri) -> Result<Vec<Entry>> {
        list(dir)
    }

    fn read(&self, uri: &Uri) -> Result<Vec<u8>> {
        read(uri)
    }

    fn size(&self, uri: &Uri) -> Result<u64> {
        size(uri)
    }

    fn is_file(&self, uri: &Uri) -> Result<bool> {
        Ok(path(uri).is_file())
    }

    fn modified(&self, uri: &Uri) -> Result<std::time::SystemTime> {
        modified(uri)
    }

    fn is_dir(&self, uri: &Uri) -> Result<bool> {
        Ok(path(uri).is_dir())
    }

    /// Local files are measured when opened (a stat costs nothing): `size` is not needed.
    fn open_file(&self, uri: &Uri, _size: Option<u64>) -> Result<Box<dyn ReadFile>> {
        Ok(Box::new(open(uri)?))
    }

    fn create_dir(&self, dir: &Uri) -> Result<bool> {
        create_dir(dir)
    }

    fn create_dir_all(&self, dir: &Uri) -> Result<()> {
        create_dir_all(dir)
    }

    fn remove_dir_all(&self, dir: &Uri) -> Result<()> {
        remove_dir_all(dir)
    }

    fn remove_file(&self, uri: &Uri) -> Result<()> {
        remove_file(uri)
    }

    fn write_new(&self, uri: &Uri, bytes: &[u8]) -> Result<()> {
        write_new(uri, bytes)
    }

    fn rename(&self, from: &Uri, to: &Uri) -> Result<()> {
        rename(from, to)
    }

    fn create_file(&self, uri: &Uri) -> Result<Box<dyn WriteFile>> {
        Ok(Box::new(create(uri)?))
    }

    fn sync_dir(&self, dir: &Uri) -> Result<()> {
        sync_dir(dir)
    }
}

impl ReadFile for LocalFile {
    fn len(&self) -> u64 {
        self.len
    }

    /// Local tiles are read when decoded, with positioned reads.
    fn prefetch(&self, _uri: &Uri, _ranges: &[Range<u64>]) -> Result<()> {
        Ok(())
    }

    fn range<'a>(
        &'a self,
        uri: &Uri,
        offset: u64,
        len: usize,
        scratch: &'a mut Vec<u8>,
    ) -> Result<Chunk<'a>> {
        if scratch.len() < len {
            scratch.resize(len, 0);
        }
        self.read_at(uri, offset, &mut scratch[..len])?;
        Ok(Chunk::Scratch(&scratch[..len]))
    }
}

impl WriteFile for LocalWriter {
    fn write(&mut self, uri: &Uri, bytes: &[u8]) -> Result<()> {
        LocalWriter::write(self, uri, bytes)
    }

    fn finish(self: Box<Self>, uri: &Uri) -> Result<()> {
        LocalWriter::finish(*self, uri)
    }
}
