"""ctypes binding of tdbfilter's encryption and generic-tile API, on top of tdbfilter_ctypes.

Adds to `tdbfilter_ctypes.Library`:

* ``tdb_pipeline_set_encryption_key`` (``set_key(pipeline, key)``);
* ``tdb_generic_tile_read`` / ``tdb_generic_tile_write`` when the library has
  them (``has_generic_api``), and ``tdb_generic_tile_header`` /
  ``tdb_generic_tile_pipeline`` / ``tdb_generic_tile_default_pipeline``
  (``generic_extras`` lists those present); prototypes as in include/tdbfilter.h.

Usage::

    from crypto_ctypes import CryptoLibrary
    lib = CryptoLibrary(path)
    with lib.deserialize_pipeline(pipeline_bytes) as p:
        lib.set_key(p, key)
        cells = p.unfilter(encrypted_tile, datatype, cell_size)
    payload, consumed = lib.generic_tile_read(file_bytes, key)
"""

from __future__ import annotations

import ctypes
import os
import re
from ctypes import POINTER, byref, c_int, c_size_t, c_uint64, c_void_p

from tdbfilter_ctypes import Library, TdbError, Tile, _as_buffer

TDB_ERR_INVALID_ARGUMENT = 1
TDB_ERR_CORRUPT_DATA = 2
TDB_ERR_DECRYPTION_FAILED = 4

_perr = POINTER(c_void_p)


class GenericTileHeader(ctypes.Structure):
    """tdb_generic_tile_header_t."""
    _fields_ = [("version", ctypes.c_uint32), ("persisted_size", c_uint64), ("tile_size", c_uint64),
                ("datatype", ctypes.c_uint32), ("cell_size", c_uint64), ("encryption_type", ctypes.c_uint32),
                ("filter_pipeline_size", ctypes.c_uint32), ("header_size", c_uint64), ("total_size", c_uint64)]

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name, _ in self._fields_}


# As declared in include/tdbfilter.h.
_GENERIC_PROTOS = {
    "tdb_generic_tile_read": (c_int, [c_void_p, c_size_t, c_void_p, c_size_t, POINTER(c_void_p),
                                      POINTER(c_uint64), _perr]),
    "tdb_generic_tile_write": (c_int, [c_void_p, c_void_p, POINTER(c_void_p), _perr]),
}
_GENERIC_OPTIONAL = {
    "tdb_generic_tile_header": (c_int, [c_void_p, c_size_t, POINTER(GenericTileHeader), _perr]),
    "tdb_generic_tile_pipeline": (c_int, [c_void_p, c_size_t, POINTER(c_void_p), _perr]),
    "tdb_generic_tile_default_pipeline": (c_int, [POINTER(c_void_p), _perr]),
}


def header_declares(header_path: str, name: str) -> bool:
    try:
        with open(header_path, encoding="utf-8") as f:
            return re.search(r"\b" + re.escape(name) + r"\s*\(", f.read()) is not None
    except OSError:
        return False


class CryptoLibrary(Library):
    """`Library` plus the encryption key and generic tile functions."""

    def _declare(self):
        super()._declare()
        d = self._dll
        fn = getattr(d, "tdb_pipeline_set_encryption_key", None)
        self.has_key_api = fn is not None
        if fn is not None:
            fn.restype = c_int
            fn.argtypes = [c_void_p, c_void_p, c_size_t, _perr]
        self.generic_missing = []
        for name, (restype, argtypes) in _GENERIC_PROTOS.items():
            g = getattr(d, name, None)
            if g is None:
                self.generic_missing.append(name)
                continue
            g.restype = restype
            g.argtypes = argtypes
        self.has_generic_api = not self.generic_missing
        self.generic_extras = []
        for name, (restype, argtypes) in _GENERIC_OPTIONAL.items():
            g = getattr(d, name, None)
            if g is not None:
                g.restype = restype
                g.argtypes = argtypes
                self.generic_extras.append(name)

    # -- keys ---------------------------------------------------------------------------------
    def set_key(self, pipeline, key) -> None:
        """tdb_pipeline_set_encryption_key; `key` bytes (any length: the library must check)."""
        buf, n, _keep = _as_buffer(bytes(key))
        err = c_void_p()
        st = self._dll.tdb_pipeline_set_encryption_key(pipeline.ptr, buf if n else None, n, byref(err))
        self._check("tdb_pipeline_set_encryption_key", st, err)

    def keyed_pipeline(self, pipeline_bytes: bytes, key=None, version: int = 22):
        """Deserialize a pipeline and set `key` on it (None: no key)."""
        p = self.deserialize_pipeline(pipeline_bytes, version)
        if key is not None:
            try:
                self.set_key(p, key)
            except BaseException:
                p.close()
                raise
        return p

    # -- generic tiles ------------------------------------------------------------------------
    def generic_tile_read(self, data, key=None, offset: int = 0) -> tuple[bytes, int]:
        """tdb_generic_tile_read of the generic tile at data[offset:]; returns (payload, consumed)."""
        if not self.has_generic_api:
            raise TdbError("tdb_generic_tile_read", -1, "not in this library")
        buf, n, _k1 = _as_buffer(data, offset)
        kbuf, kn, _k2 = (_as_buffer(bytes(key)) if key is not None else (None, 0, None))
        out, used, err = c_void_p(), c_uint64(), c_void_p()
        st = self._dll.tdb_generic_tile_read(buf, n, kbuf, kn, byref(out), byref(used), byref(err))
        self._check("tdb_generic_tile_read", st, err)
        with Tile(self, out) as t:
            return t.data(), used.value

    def generic_tile_write(self, pipeline, payload: bytes) -> bytes:
        """tdb_generic_tile_write of `payload` (a CHAR tile of cell size 1) through `pipeline`."""
        if not self.has_generic_api:
            raise TdbError("tdb_generic_tile_write", -1, "not in this library")
        with self.create_tile(4, 1, payload) as tile:
            out, err = c_void_p(), c_void_p()
            st = self._dll.tdb_generic_tile_write(pipeline.ptr, tile.ptr, byref(out), byref(err))
            self._check("tdb_generic_tile_write", st, err)
        with Tile(self, out) as t:
            return t.data()


    def generic_tile_header(self, data, offset: int = 0) -> dict:
        """tdb_generic_tile_header as a dict of the struct's fields."""
        buf, n, _k = _as_buffer(data, offset)
        h, err = GenericTileHeader(), c_void_p()
        st = self._dll.tdb_generic_tile_header(buf, n, byref(h), byref(err))
        self._check("tdb_generic_tile_header", st, err)
        return h.as_dict()

    def generic_tile_pipeline(self, data, offset: int = 0):
        """tdb_generic_tile_pipeline: the header's pipeline as a new Pipeline."""
        from tdbfilter_ctypes import Pipeline
        buf, n, _k = _as_buffer(data, offset)
        ptr, err = c_void_p(), c_void_p()
        st = self._dll.tdb_generic_tile_pipeline(buf, n, byref(ptr), byref(err))
        self._check("tdb_generic_tile_pipeline", st, err)
        return Pipeline(self, ptr)

    def generic_default_pipeline(self, key=None):
        """tdb_generic_tile_default_pipeline, with `key` set when given."""
        from tdbfilter_ctypes import Pipeline
        ptr, err = c_void_p(), c_void_p()
        st = self._dll.tdb_generic_tile_default_pipeline(byref(ptr), byref(err))
        self._check("tdb_generic_tile_default_pipeline", st, err)
        p = Pipeline(self, ptr)
        if key is not None:
            try:
                self.set_key(p, key)
            except BaseException:
                p.close()
                raise
        return p


def default_header() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(os.path.dirname(os.path.dirname(here)), "include", "tdbfilter.h")
