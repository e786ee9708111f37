//! The crate's error type. Every variant carries a message that names what failed
//! (the filter, the chunk, the field); the C layer maps variants to `tdb_status_t`.

use std::fmt;

/// What went wrong, with a human-readable message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// A caller-supplied value is invalid (bad option, bad datatype, NULL pointer, …).
    InvalidArgument(String),
    /// Filtered bytes are truncated, inconsistent or otherwise not a valid encoding.
    CorruptData(String),
    /// A checksum filter found a digest that does not match the data.
    ChecksumMismatch(String),
    /// Decryption failed: wrong key or tampered bytes.
    DecryptionFailed(String),
    /// The input is valid TileDB but this build or version does not support it.
    Unsupported(String),
    /// A caller buffer is too small; `needed` bytes are required.
    BufferTooSmall {
        /// Bytes required.
        needed: usize,
        /// What the buffer was for.
        message: String,
    },
    /// An allocation failed.
    OutOfMemory(String),
    /// The operating system or the object store refused an operation on a file, folder or
    /// object (disk full, read-only file system, permission, missing folder, …).
    Io {
        /// The file, folder or object.
        path: String,
        /// The kind of the underlying `std::io::Error`.
        kind: std::io::ErrorKind,
        /// What failed, naming the path and the system's error.
        message: String,
    },
    /// A bug in tdbfilter (for example a caught panic).
    Internal(String),
}

/// Shorthand for results carrying [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The message without the kind.
    pub fn message(&self) -> &str {
        match self {
            Error::InvalidArgument(m)
            | Error::CorruptData(m)
            | Error::ChecksumMismatch(m)
            | Error::DecryptionFailed(m)
            | Error::Unsupported(m)
            | Error::OutOfMemory(m)
            | Error::Internal(m) => m,
            Error::BufferTooSmall { message, .. } | Error::Io { message, .. } => message,
        }
    }

    fn message_mut(&mut self) -> &mut String {
        match self {
            Error::InvalidArgument(m)
            | Error::CorruptData(m)
            | Error::ChecksumMismatch(m)
            | Error::DecryptionFailed(m)
            | Error::Unsupported(m)
            | Error::OutOfMemory(m)
            | Error::Internal(m) => m,
            Error::BufferTooSmall { message, .. } | Error::Io { message, .. } => message,
        }
    }

    /// Prefixes the message with `what: ` (for example a filter name or `chunk 3`).
    pub fn context(mut self, what: impl fmt::Display) -> Error {
        let m = self.message_mut();
        *m = format!("{what}: {m}");
        self
    }

    /// Shorthand for a [`Error::CorruptData`] error.
    pub fn corrupt(msg: impl Into<String>) -> Error {
        Error::CorruptData(msg.into())
    }

    /// An [`Error::Io`] for `path` from the system's error `e`; the message is
    /// `<path>: <what>: <e>` (`<path>: <e>` when `what` is empty).
    pub fn io(path: impl fmt::Display, what: &str, e: &std::io::Error) -> Error {
        let path = path.to_string();
        let message = if what.is_empty() {
            format!("{path}: {e}")
        } else {
            format!("{path}: {what}: {e}")
        };
        Error::Io {
            path,
            kind: e.kind(),
            message,
        }
    }

    /// Shorthand for an [`Error::InvalidArgument`] error.
    pub fn invalid(msg: impl Into<String>) -> Error {
        Error::InvalidArgument(msg.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Error {}

/// Adds context to the error of a `Result`.
pub trait ResultExt<T> {
    /// Prefixes any error message with `what: `, computed lazily.
    fn with_context<D: fmt::Display>(self, what: impl FnOnce() -> D) -> Result<T>;
}

impl<T> ResultExt<T> for Result<T> {
    fn with_context<D: fmt::Display>(self, what: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| e.context(what()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_prefixes_message_and_keeps_kind() {
        let e = Error::corrupt("compressed data is corrupt")
            .context("ZSTD")
            .context("chunk 3");
        assert_eq!(e.message(), "chunk 3: ZSTD: compressed data is corrupt");
        assert!(matches!(e, Error::CorruptData(_)));
    }

    #[test]
    fn io_errors_carry_the_path_and_kind_through_context() {
        let os = std::io::Error::from_raw_os_error(libc::EROFS);
        let e = Error::io("/a/b", "cannot create", &os).context("creating array /a");
        let Error::Io {
            path,
            kind,
            message,
        } = &e
        else {
            panic!("{e:?}");
        };
        assert_eq!(path, "/a/b");
        assert_eq!(*kind, std::io::ErrorKind::ReadOnlyFilesystem);
        assert!(
            message.starts_with("creating array /a: /a/b: cannot create: Read-only file system"),
            "{message}"
        );
    }
}
