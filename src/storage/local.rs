//! The local file system: positioned reads, plain writes, `fsync` of files and folders.

use super::{Entry, Uri};
use crate::error::{Error, Result};
use std::fs::File;
use std::io::Write;
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

pub(super) fn list(dir: &Uri) -> Result<Vec<Entry>> {
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

pub(super) fn read(uri: &Uri) -> Result<Vec<u8>> {
    std::fs::read(path(uri)).map_err(|e| io_error(uri, "", e))
}

pub(super) fn size(uri: &Uri) -> Result<u64> {
    std::fs::metadata(path(uri))
        .map(|m| m.len())
        .map_err(|e| io_error(uri, "", e))
}

pub(super) fn modified(uri: &Uri) -> Result<std::time::SystemTime> {
    std::fs::metadata(path(uri))
        .and_then(|m| m.modified())
        .map_err(|e| io_error(uri, "", e))
}

/// An open file and its length.
pub(super) struct LocalFile {
    file: File,
    pub len: u64,
}

pub(super) fn open(uri: &Uri) -> Result<LocalFile> {
    let file = File::open(path(uri)).map_err(|e| io_error(uri, "", e))?;
    let len = file.metadata().map_err(|e| io_error(uri, "", e))?.len();
    Ok(LocalFile { file, len })
}

impl LocalFile {
    pub(super) fn read_at(&self, uri: &Uri, offset: u64, buf: &mut [u8]) -> Result<()> {
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

pub(super) fn create_dir(dir: &Uri) -> Result<bool> {
    match std::fs::create_dir(path(dir)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && path(dir).is_dir() => Ok(false),
        Err(e) => Err(io_error(dir, "cannot create the folder", e)),
    }
}

pub(super) fn create_dir_all(dir: &Uri) -> Result<()> {
    std::fs::create_dir_all(path(dir)).map_err(|e| io_error(dir, "cannot create the folder", e))
}

pub(super) fn remove_dir_all(dir: &Uri) -> Result<()> {
    match std::fs::remove_dir_all(path(dir)) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error(dir, "cannot remove", e)),
    }
}

pub(super) fn remove_file(uri: &Uri) -> Result<()> {
    std::fs::remove_file(path(uri)).map_err(|e| io_error(uri, "cannot remove", e))
}

pub(super) fn write_new(uri: &Uri, bytes: &[u8]) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path(uri))
        .map_err(|e| io_error(uri, "cannot create", e))?;
    f.write_all(bytes)
        .map_err(|e| io_error(uri, "cannot write", e))?;
    f.sync_all().map_err(|e| io_error(uri, "cannot sync", e))
}

/// A file being written.
pub(super) struct LocalWriter {
    file: File,
}

pub(super) fn create(uri: &Uri) -> Result<LocalWriter> {
    let file = File::create(path(uri)).map_err(|e| io_error(uri, "cannot create", e))?;
    Ok(LocalWriter { file })
}

impl LocalWriter {
    pub(super) fn write(&mut self, uri: &Uri, bytes: &[u8]) -> Result<()> {
        self.file
            .write_all(bytes)
            .map_err(|e| io_error(uri, "cannot write", e))
    }

    pub(super) fn finish(self, uri: &Uri) -> Result<()> {
        self.file
            .sync_all()
            .map_err(|e| io_error(uri, "cannot sync", e))
    }
}

/// Syncs a folder's entries to disk (where the platform allows opening folders).
pub(super) fn sync_dir(dir: &Uri) -> Result<()> {
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
