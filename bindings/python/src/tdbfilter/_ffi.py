"""The loaded C library (loaded once, on first use) and the check of a call's status."""

from __future__ import annotations

import threading
from ctypes import byref, c_void_p
from typing import Optional

from . import _lib
from .errors import from_status

_LIB: Optional[_lib.Library] = None
_LIB_LOCK = threading.Lock()


def lib() -> _lib.Library:
    """The loaded C library (loaded on first use)."""
    global _LIB
    with _LIB_LOCK:
        if _LIB is None:
            _LIB = _lib.load()
        return _LIB


def loaded() -> Optional[_lib.Library]:
    """The C library if it was loaded, else None (for finalizers at interpreter exit)."""
    return _LIB


def check(status: int, err: c_void_p) -> None:
    """Raises the exception of a failed call's status with the library's message and status
    name, freeing the error."""
    if status != 0:
        L = lib()
        message = L.tdb_error_message(err).decode() if err else "tdbfilter call failed"
        L.tdb_error_free(err)
        raise from_status(status, message, L.tdb_status_name(status).decode())


def call(fn, *args) -> None:
    """Calls ``fn(*args, &error)`` and checks its status."""
    err = c_void_p()
    check(fn(*args, byref(err)), err)
