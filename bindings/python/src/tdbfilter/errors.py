"""Exceptions mirroring the C API's status codes (``tdb_status_t``)."""

from __future__ import annotations

from ._lib import CONSTANTS


class TdbfilterError(Exception):
    """A failed tdbfilter call: ``status`` is the C status code, ``status_name`` the library's
    name of it (``"TDB_ERR_CORRUPT_DATA"``; None for errors raised before a C call), ``str(e)``
    the library's message (which names the chunk, filter or argument that failed)."""

    status: int = 0
    status_name: str | None = None

    def __init__(self, message: str, status: int | None = None, status_name: str | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status
        self.status_name = status_name


class InvalidArgument(TdbfilterError, ValueError):
    """A caller-supplied argument is invalid (``TDB_ERR_INVALID_ARGUMENT``)."""

    status = CONSTANTS["TDB_ERR_INVALID_ARGUMENT"]


class CorruptData(TdbfilterError):
    """Filtered bytes are truncated, inconsistent or not a valid encoding
    (``TDB_ERR_CORRUPT_DATA``)."""

    status = CONSTANTS["TDB_ERR_CORRUPT_DATA"]


class ChecksumMismatch(CorruptData):
    """A checksum filter found a digest mismatch (``TDB_ERR_CHECKSUM_MISMATCH``)."""

    status = CONSTANTS["TDB_ERR_CHECKSUM_MISMATCH"]


class DecryptionFailed(TdbfilterError):
    """AES-256-GCM decryption failed: wrong key or tampered bytes
    (``TDB_ERR_DECRYPTION_FAILED``)."""

    status = CONSTANTS["TDB_ERR_DECRYPTION_FAILED"]


class Unsupported(TdbfilterError):
    """Valid TileDB input this version does not support (``TDB_ERR_UNSUPPORTED``)."""

    status = CONSTANTS["TDB_ERR_UNSUPPORTED"]


class BufferTooSmall(TdbfilterError):
    """The caller's buffer is too small (``TDB_ERR_BUFFER_TOO_SMALL``); ``needed`` is the size
    that fits, when known."""

    status = CONSTANTS["TDB_ERR_BUFFER_TOO_SMALL"]
    needed: int | None = None


class OutOfMemory(TdbfilterError, MemoryError):
    """An allocation failed or a memory limit was reached (``TDB_ERR_OUT_OF_MEMORY``)."""

    status = CONSTANTS["TDB_ERR_OUT_OF_MEMORY"]


class InternalError(TdbfilterError):
    """A bug in tdbfilter (``TDB_ERR_INTERNAL``)."""

    status = CONSTANTS["TDB_ERR_INTERNAL"]


class TdbfilterIOError(TdbfilterError, OSError):
    """The operating system or object store refused a read or write: disk full, read-only
    file system, permission denied, missing or not a folder (``TDB_ERR_IO``); the message
    names the path and the system's error."""

    status = CONSTANTS["TDB_ERR_IO"]


BY_STATUS: dict[int, type[TdbfilterError]] = {
    cls.status: cls
    for cls in (InvalidArgument, CorruptData, ChecksumMismatch, DecryptionFailed, Unsupported,
                BufferTooSmall, OutOfMemory, InternalError, TdbfilterIOError)
}


def from_status(status: int, message: str, status_name: str | None = None) -> TdbfilterError:
    """The exception for a C status code."""
    cls = BY_STATUS.get(status, TdbfilterError)
    return cls(message, status, status_name)
