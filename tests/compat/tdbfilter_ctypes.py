"""ctypes binding for the tdbfilter C ABI (include/tdbfilter.h).

Usage::

    from tdbfilter_ctypes import Library
    lib = Library("/path/to/libtdbfilter.so")
    with lib.deserialize_pipeline(pipeline_bytes, 22) as p:
        cells = p.unfilter(filtered_tile_bytes, datatype, cell_size)

Every failing C call raises :class:`TdbError`, carrying the status code and
the message returned by ``tdb_error_message``.
"""

from __future__ import annotations

import ctypes
import os
from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_uint32, c_uint64, c_void_p

# ---------------------------------------------------------------------------
# Constants (TileDB numbering, mirrored by include/tdbfilter.h)
# ---------------------------------------------------------------------------

STATUS_NAMES = {
    0: "TDB_OK",
    1: "TDB_ERR_INVALID_ARGUMENT",
    2: "TDB_ERR_CORRUPT_DATA",
    3: "TDB_ERR_CHECKSUM_MISMATCH",
    4: "TDB_ERR_DECRYPTION_FAILED",
    5: "TDB_ERR_UNSUPPORTED",
    6: "TDB_ERR_BUFFER_TOO_SMALL",
    7: "TDB_ERR_OUT_OF_MEMORY",
    8: "TDB_ERR_INTERNAL",
}
TDB_OK = 0
TDB_ERR_BUFFER_TOO_SMALL = 6

FILTER_TYPES = {
    "NONE": 0,
    "GZIP": 1,
    "ZSTD": 2,
    "LZ4": 3,
    "RLE": 4,
    "BZIP2": 5,
    "DOUBLE_DELTA": 6,
    "BIT_WIDTH_REDUCTION": 7,
    "BITSHUFFLE": 8,
    "BYTESHUFFLE": 9,
    "POSITIVE_DELTA": 10,
    "CHECKSUM_MD5": 12,
    "CHECKSUM_SHA256": 13,
    "DICTIONARY": 14,
    "SCALE_FLOAT": 15,
    "XOR": 16,
    "WEBP": 18,
    "DELTA": 19,
}

DATATYPES = {
    "INT32": 0,
    "INT64": 1,
    "FLOAT32": 2,
    "FLOAT64": 3,
    "CHAR": 4,
    "INT8": 5,
    "UINT8": 6,
    "INT16": 7,
    "UINT16": 8,
    "UINT32": 9,
    "UINT64": 10,
    "STRING_ASCII": 11,
    "STRING_UTF8": 12,
    "ANY": 17,
    "DATETIME_DAY": 21,
    "DATETIME_NS": 27,
    "BLOB": 40,
    "BOOL": 41,
}

FILTER_OPTIONS = {
    "COMPRESSION_LEVEL": 0,
    "BIT_WIDTH_MAX_WINDOW": 1,
    "POSITIVE_DELTA_MAX_WINDOW": 2,
    "SCALE_FLOAT_BYTEWIDTH": 3,
    "SCALE_FLOAT_FACTOR": 4,
    "SCALE_FLOAT_OFFSET": 5,
    "WEBP_QUALITY": 6,
    "WEBP_INPUT_FORMAT": 7,
    "WEBP_LOSSLESS": 8,
    "COMPRESSION_REINTERPRET_DATATYPE": 9,
}

# The C value type of each option (tdb_pipeline_set_option reads exactly this), as struct codes.
OPTION_CTYPES = {0: "i", 1: "I", 2: "I", 3: "Q", 4: "d", 5: "d", 6: "f", 7: "B", 8: "B", 9: "B"}

FORMAT_VERSION = 22


class TdbError(Exception):
    """A tdbfilter call returned a non-OK status."""

    def __init__(self, func: str, status: int, message: str):
        self.func = func
        self.status = status
        self.message = message
        name = STATUS_NAMES.get(status, f"status {status}")
        super().__init__(f"{func}: {name}: {message}")


def default_library_path() -> str:
    """$TDBFILTER_LIB, else target/release/libtdbfilter.so of the repo."""
    env = os.environ.get("TDBFILTER_LIB")
    if env:
        return env
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(repo, "target", "release", "libtdbfilter.so")


def _as_buffer(data, offset: int = 0):
    """Return (address as c_void_p, length, keepalive) for bytes-like data[offset:].

    bytes are passed without copying (their buffer is immutable and outlives
    the call through the keepalive); other buffers are wrapped in place, or
    copied when read-only.
    """
    if isinstance(data, bytes):
        base = ctypes.cast(c_char_p(data), c_void_p).value or 0
        n = len(data) - offset
        return c_void_p(base + offset), n, data
    mv = memoryview(data).cast("B")[offset:]
    n = len(mv)
    if n == 0:
        return c_void_p(None), 0, None
    if mv.readonly:
        buf = (ctypes.c_ubyte * n).from_buffer_copy(mv)
    else:
        buf = (ctypes.c_ubyte * n).from_buffer(mv)
    return c_void_p(ctypes.addressof(buf)), n, buf


class Library:
    """Loaded libtdbfilter with typed function prototypes."""

    def __init__(self, path: str | None = None, gzip_identical: bool = True):
        self.path = path or default_library_path()
        self._dll = ctypes.CDLL(self.path)
        self._declare()
        # Pipelines write GZIP with zlib (TileDB's exact bytes) unless told otherwise; the
        # library's default writer is libdeflate.
        self.gzip_identical = gzip_identical

    # -- prototypes ---------------------------------------------------------
    def _declare(self):
        d = self._dll
        perr = POINTER(c_void_p)
        protos = {
            "tdb_pipeline_create": (c_int, [POINTER(c_void_p), perr]),
            "tdb_pipeline_add_filter": (c_int, [c_void_p, c_uint32, perr]),
            "tdb_pipeline_set_option": (c_int, [c_void_p, c_uint32, c_uint32, c_void_p, c_size_t, perr]),
            "tdb_pipeline_serialize": (c_int, [c_void_p, c_void_p, c_size_t, POINTER(c_size_t), perr]),
            "tdb_pipeline_deserialize": (c_int, [c_void_p, c_size_t, c_uint32, POINTER(c_void_p), perr]),
            "tdb_pipeline_free": (None, [c_void_p]),
            "tdb_tile_create": (c_int, [c_uint32, c_uint64, c_void_p, c_size_t, POINTER(c_void_p), perr]),
            "tdb_tile_data": (c_int, [c_void_p, POINTER(c_void_p), POINTER(c_size_t), perr]),
            "tdb_tile_free": (None, [c_void_p]),
            "tdb_pipeline_filter": (c_int, [c_void_p, c_void_p, POINTER(c_void_p), perr]),
            "tdb_pipeline_unfilter": (c_int, [c_void_p, c_void_p, c_size_t, c_uint32, c_uint64,
                                              POINTER(c_void_p), perr]),
            "tdb_filtered_tile_size": (c_int, [c_void_p, c_size_t, POINTER(c_uint64), perr]),
            "tdb_error_status": (c_int, [c_void_p]),
            "tdb_error_message": (c_char_p, [c_void_p]),
            "tdb_error_free": (None, [c_void_p]),
            "tdb_version": (c_char_p, []),
        }
        for name, (restype, argtypes) in protos.items():
            fn = getattr(d, name)  # AttributeError names the missing symbol
            fn.restype = restype
            fn.argtypes = argtypes
        # Var-size tiles (newer libraries); `has_var_api` tells whether they are present.
        optional = {
            "tdb_tile_create_var": (c_int, [c_uint32, POINTER(c_uint64), c_size_t, c_void_p, c_size_t,
                                            POINTER(c_void_p), perr]),
            "tdb_tile_offsets": (c_int, [c_void_p, POINTER(POINTER(c_uint64)), POINTER(c_size_t), perr]),
            "tdb_pipeline_filter_var": (c_int, [c_void_p, c_void_p, c_void_p, POINTER(c_void_p),
                                                POINTER(c_void_p), perr]),
            "tdb_pipeline_unfilter_var": (c_int, [c_void_p, c_void_p, c_void_p, c_size_t, c_void_p, c_size_t,
                                                  c_uint32, POINTER(c_void_p), perr]),
        }
        optional["tdb_pipeline_set_gzip_identical"] = (c_int, [c_void_p, ctypes.c_bool, perr])
        self.missing = []
        for name, (restype, argtypes) in optional.items():
            fn = getattr(d, name, None)
            if fn is None:
                self.missing.append(name)
                continue
            fn.restype = restype
            fn.argtypes = argtypes
        self.has_var_api = not [m for m in self.missing if "var" in m or "offsets" in m]
        self.has_gzip_switch = "tdb_pipeline_set_gzip_identical" not in self.missing

    def _check(self, func: str, status: int, err: c_void_p):
        """Raise TdbError for a non-OK status; always frees the error object."""
        message = ""
        if err.value:
            err_status = self._dll.tdb_error_status(err)
            raw = self._dll.tdb_error_message(err)
            message = raw.decode("utf-8", "replace") if raw else "(null message)"
            self._dll.tdb_error_free(err)
            err.value = None
            if status != TDB_OK and err_status != status:
                message += f" [tdb_error_status={err_status} differs from returned {status}]"
        if status != TDB_OK:
            raise TdbError(func, status, message or "(no error object)")

    # -- API ----------------------------------------------------------------
    def version(self) -> str:
        v = self._dll.tdb_version()
        return v.decode() if v else ""

    def create_pipeline(self) -> "Pipeline":
        ptr, err = c_void_p(), c_void_p()
        self._check("tdb_pipeline_create", self._dll.tdb_pipeline_create(byref(ptr), byref(err)), err)
        return self._configured(Pipeline(self, ptr))

    def _configured(self, p: "Pipeline") -> "Pipeline":
        if self.has_gzip_switch:
            err = c_void_p()
            st = self._dll.tdb_pipeline_set_gzip_identical(p.ptr, self.gzip_identical, byref(err))
            self._check("tdb_pipeline_set_gzip_identical", st, err)
        return p

    def build_pipeline(self, filters) -> "Pipeline":
        """filters: iterable of (filter_type_id, compression_level or None)."""
        p = self.create_pipeline()
        try:
            for index, (ftype, level) in enumerate(filters):
                p.add_filter(ftype)
                if level is not None:
                    p.set_compression_level(index, level)
        except BaseException:
            p.close()
            raise
        return p

    def deserialize_pipeline(self, data: bytes, format_version: int = FORMAT_VERSION) -> "Pipeline":
        ptr, err = c_void_p(), c_void_p()
        buf, n, _keep = _as_buffer(data)
        st = self._dll.tdb_pipeline_deserialize(buf, n, format_version, byref(ptr), byref(err))
        self._check("tdb_pipeline_deserialize", st, err)
        return self._configured(Pipeline(self, ptr))

    def filtered_tile_size(self, data, offset: int = 0) -> int:
        """Size of the self-delimiting filtered tile starting at data[offset:]."""
        buf, n, _keep = _as_buffer(data, offset)
        out, err = c_uint64(), c_void_p()
        st = self._dll.tdb_filtered_tile_size(buf, n, byref(out), byref(err))
        self._check("tdb_filtered_tile_size", st, err)
        return out.value

    def create_var_tile(self, datatype: int, offsets, data) -> "Tile":
        """A var-size tile: `offsets` are the cells' u64 start offsets (first 0, no extra element)."""
        import numpy as np
        offs = np.ascontiguousarray(np.asarray(offsets, dtype=np.uint64))
        optr = offs.ctypes.data_as(POINTER(c_uint64)) if len(offs) else None
        buf, n, _keep = _as_buffer(data)
        ptr, err = c_void_p(), c_void_p()
        st = self._dll.tdb_tile_create_var(datatype, optr, len(offs), buf, n, byref(ptr), byref(err))
        self._check("tdb_tile_create_var", st, err)
        return Tile(self, ptr)

    def create_tile(self, datatype: int, cell_size: int, data) -> "Tile":
        buf, n, _keep = _as_buffer(data)
        ptr, err = c_void_p(), c_void_p()
        st = self._dll.tdb_tile_create(datatype, cell_size, buf, n, byref(ptr), byref(err))
        self._check("tdb_tile_create", st, err)
        return Tile(self, ptr)


class _Handle:
    _free_name = ""

    def __init__(self, lib: Library, ptr: c_void_p):
        self.lib = lib
        self.ptr = ptr

    def close(self):
        if self.ptr is not None and self.ptr.value:
            getattr(self.lib._dll, self._free_name)(self.ptr)
        self.ptr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Tile(_Handle):
    _free_name = "tdb_tile_free"

    def data(self) -> bytes:
        p, n, err = c_void_p(), c_size_t(), c_void_p()
        st = self.lib._dll.tdb_tile_data(self.ptr, byref(p), byref(n), byref(err))
        self.lib._check("tdb_tile_data", st, err)
        if n.value == 0:
            return b""
        return ctypes.string_at(p.value, n.value)

    def offsets(self):
        """The var-size tile's offsets as a numpy uint64 array (a copy)."""
        import numpy as np
        p, n, err = POINTER(c_uint64)(), c_size_t(), c_void_p()
        st = self.lib._dll.tdb_tile_offsets(self.ptr, byref(p), byref(n), byref(err))
        self.lib._check("tdb_tile_offsets", st, err)
        if n.value == 0:
            return np.zeros(0, dtype=np.uint64)
        return np.ctypeslib.as_array(p, shape=(n.value,)).copy()


class Pipeline(_Handle):
    _free_name = "tdb_pipeline_free"

    def add_filter(self, filter_type: int):
        err = c_void_p()
        st = self.lib._dll.tdb_pipeline_add_filter(self.ptr, filter_type, byref(err))
        self.lib._check("tdb_pipeline_add_filter", st, err)

    def set_compression_level(self, index: int, level: int):
        value = ctypes.c_int32(level)
        err = c_void_p()
        st = self.lib._dll.tdb_pipeline_set_option(
            self.ptr, index, FILTER_OPTIONS["COMPRESSION_LEVEL"], ctypes.cast(byref(value), c_void_p),
            ctypes.sizeof(value), byref(err))
        self.lib._check("tdb_pipeline_set_option", st, err)

    def set_option(self, index: int, option: int, value):
        """tdb_pipeline_set_option with `value` packed as the option's C type."""
        import struct
        code = OPTION_CTYPES[option]
        raw = (ctypes.c_ubyte * struct.calcsize(code)).from_buffer_copy(struct.pack("<" + code, value))
        err = c_void_p()
        st = self.lib._dll.tdb_pipeline_set_option(self.ptr, index, option, ctypes.cast(raw, c_void_p),
                                                   ctypes.sizeof(raw), byref(err))
        self.lib._check("tdb_pipeline_set_option", st, err)

    def serialize(self) -> bytes:
        d = self.lib._dll
        size, err = c_size_t(), c_void_p()
        st = d.tdb_pipeline_serialize(self.ptr, None, 0, byref(size), byref(err))
        if st == TDB_ERR_BUFFER_TOO_SMALL:
            if err.value:
                d.tdb_error_free(err)
                err.value = None
        else:
            self.lib._check("tdb_pipeline_serialize(size query)", st, err)
            if size.value != 0:
                raise TdbError("tdb_pipeline_serialize", st,
                               f"NULL buffer accepted but size {size.value} > 0 reported")
            return b""
        needed = size.value
        buf = (ctypes.c_ubyte * needed)()
        st = d.tdb_pipeline_serialize(self.ptr, buf, needed, byref(size), byref(err))
        self.lib._check("tdb_pipeline_serialize", st, err)
        if size.value != needed:
            raise TdbError("tdb_pipeline_serialize", st,
                           f"wrote {size.value} bytes but size query said {needed}")
        return bytes(buf)

    def filter(self, tile: Tile) -> bytes:
        out, err = c_void_p(), c_void_p()
        st = self.lib._dll.tdb_pipeline_filter(self.ptr, tile.ptr, byref(out), byref(err))
        self.lib._check("tdb_pipeline_filter", st, err)
        with Tile(self.lib, out) as t:
            return t.data()

    def filter_bytes(self, datatype: int, cell_size: int, data) -> bytes:
        with self.lib.create_tile(datatype, cell_size, data) as tile:
            return self.filter(tile)

    def unfilter(self, filtered, datatype: int, cell_size: int) -> bytes:
        buf, n, _keep = _as_buffer(filtered)
        out, err = c_void_p(), c_void_p()
        st = self.lib._dll.tdb_pipeline_unfilter(self.ptr, buf, n, datatype, cell_size, byref(out),
                                                 byref(err))
        self.lib._check("tdb_pipeline_unfilter", st, err)
        with Tile(self.lib, out) as t:
            return t.data()


    def filter_var(self, offsets_pipeline: "Pipeline", datatype: int, offsets, data) -> tuple[bytes, bytes]:
        """tdb_pipeline_filter_var: returns (filtered offsets tile, filtered data tile)."""
        with self.lib.create_var_tile(datatype, offsets, data) as tile:
            fo, fd, err = c_void_p(), c_void_p(), c_void_p()
            st = self.lib._dll.tdb_pipeline_filter_var(self.ptr, offsets_pipeline.ptr, tile.ptr, byref(fo),
                                                       byref(fd), byref(err))
            self.lib._check("tdb_pipeline_filter_var", st, err)
        with Tile(self.lib, fo) as a, Tile(self.lib, fd) as b:
            return a.data(), b.data()

    def unfilter_var(self, offsets_pipeline: "Pipeline", filtered_offsets, filtered_data, datatype: int):
        """tdb_pipeline_unfilter_var: returns (offsets as numpy uint64, data bytes)."""
        ob, on, _k1 = _as_buffer(filtered_offsets)
        db, dn, _k2 = _as_buffer(filtered_data)
        out, err = c_void_p(), c_void_p()
        st = self.lib._dll.tdb_pipeline_unfilter_var(self.ptr, offsets_pipeline.ptr, ob, on, db, dn, datatype,
                                                     byref(out), byref(err))
        self.lib._check("tdb_pipeline_unfilter_var", st, err)
        with Tile(self.lib, out) as t:
            return t.offsets(), t.data()


def check_header(path: str) -> list[str]:
    """Compare the constants this module hard-codes with include/tdbfilter.h.

    Returns a list of mismatch descriptions (empty if all agree). Constants
    are found as ``NAME = value`` enum entries or ``#define NAME value``.
    """
    import re
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found = {}
    for m in re.finditer(r"\b(TDB_[A-Z0-9_]+)\s*=\s*\(?\s*(-?(?:0x[0-9a-fA-F]+|\d+))", text):
        found[m.group(1)] = int(m.group(2), 0)
    for m in re.finditer(r"#\s*define\s+(TDB_[A-Z0-9_]+)\s+\(?\s*(?:\(\s*\w+\s*\)\s*)?(-?(?:0x[0-9a-fA-F]+|\d+))",
                         text):
        found[m.group(1)] = int(m.group(2), 0)
    expected = {name: value for value, name in STATUS_NAMES.items()}
    expected.update({f"TDB_FILTER_{k}": v for k, v in FILTER_TYPES.items()})
    expected.update({f"TDB_{k}": v for k, v in DATATYPES.items()})
    expected.update({f"TDB_{k}": v for k, v in FILTER_OPTIONS.items()})
    problems = []
    for name, value in expected.items():
        if name not in found:
            problems.append(f"{name} not found in {os.path.basename(path)}")
        elif found[name] != value:
            problems.append(f"{name} = {found[name]} in the header, harness uses {value}")
    return problems
