"""``Array``: reading TileDB array folders without libtiledb (the C API's ``tdb_array_*``)."""

from __future__ import annotations

import ctypes
import threading
from ctypes import POINTER, byref, c_bool, c_char_p, c_size_t, c_uint8, c_uint32, c_uint64, c_void_p
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

import numpy as np

from .errors import InvalidArgument, Unsupported
from .pipeline import Pipeline, _check, lib

VAR = 0xFFFFFFFF

# TileDB datatype number -> numpy dtype of one value (strings and blobs: bytes).
_NUMPY = {
    0: np.int32, 1: np.int64, 2: np.float32, 3: np.float64, 4: np.int8, 5: np.int8,
    6: np.uint8, 7: np.int16, 8: np.uint16, 9: np.uint32, 10: np.uint64, 41: np.bool_,
}
for _t in range(18, 40):  # DATETIME_* and TIME_*: int64 counts
    _NUMPY[_t] = np.int64
_TEXT = {4, 11, 12}  # CHAR, STRING_ASCII, STRING_UTF8: var cells read as str
_PIPELINE_KIND = {"field": 0, "offsets": 1, "validity": 2, "coords": 3}


@dataclass(frozen=True)
class Field:
    """A dimension or attribute of the schema."""

    name: str
    datatype: int
    cell_val_num: int  # 0xFFFFFFFF: var-size
    nullable: bool = False

    @property
    def var(self) -> bool:
        return self.cell_val_num == VAR


@dataclass(frozen=True)
class Fragment:
    """A visible fragment (oldest first)."""

    name: str
    timestamps: tuple[int, int]
    version: int
    dense: bool
    cell_num: int
    tile_num: int


def _declare(L: ctypes.CDLL) -> None:
    if getattr(L, "_tdbf_array_declared", False):
        return
    P, PP = c_void_p, POINTER(c_void_p)
    sigs = {
        "tdb_array_open": [c_char_p, c_void_p, c_size_t, PP, PP],
        "tdb_array_open_at": [c_char_p, c_void_p, c_size_t, c_uint64, c_uint64, PP, PP],
        "tdb_array_free": [P],
        "tdb_array_set_threads": [P, c_uint32, PP],
        "tdb_array_set_memory_limit": [P, c_uint64, PP],
        "tdb_array_read_fields": [P, POINTER(c_char_p), c_size_t, c_void_p, PP, PP],
        "tdb_result_data": [P, PP, POINTER(c_size_t), PP],
        "tdb_result_offsets": [P, PP, POINTER(c_size_t), PP],
        "tdb_result_validity": [P, PP, POINTER(c_size_t), PP],
        "tdb_result_cell_count": [P, POINTER(c_uint64), PP],
        "tdb_result_type": [P, POINTER(c_uint32), POINTER(c_uint32), PP],
        "tdb_result_free": [P],
        "tdb_array_enumeration": [P, c_char_p, PP, PP],
        "tdb_array_metadata_num": [P, POINTER(c_uint32), PP],
        "tdb_array_metadata": [P, c_uint32, POINTER(c_char_p), POINTER(c_uint32),
                               POINTER(c_uint32), PP, PP],
        "tdb_array_schema_info": [P, POINTER(c_uint8), POINTER(c_uint8), POINTER(c_uint8),
                                  POINTER(c_uint64), POINTER(c_bool), POINTER(c_uint32), PP],
        "tdb_array_field_num": [P, POINTER(c_uint32), POINTER(c_uint32), PP],
        "tdb_array_dimension": [P, c_uint32, POINTER(c_char_p), POINTER(c_uint32),
                                POINTER(c_uint32), PP],
        "tdb_array_dimension_domain": [P, c_uint32, PP, PP, POINTER(c_size_t), PP, PP],
        "tdb_array_attribute": [P, c_uint32, POINTER(c_char_p), POINTER(c_uint32),
                                POINTER(c_uint32), POINTER(c_bool), PP],
        "tdb_array_pipeline": [P, c_char_p, c_uint32, PP, PP],
        "tdb_array_fragment_num": [P, POINTER(c_uint32), PP],
        "tdb_array_fragment": [P, c_uint32, POINTER(c_char_p), POINTER(c_uint64),
                               POINTER(c_uint64), POINTER(c_uint32), POINTER(c_bool),
                               POINTER(c_uint64), POINTER(c_uint64), PP],
    }
    for name, argtypes in sigs.items():
        fn = getattr(L, name)
        fn.argtypes = argtypes
        fn.restype = None if name.endswith("_free") else ctypes.c_int
    L._tdbf_array_declared = True


_DECLARE_LOCK = threading.Lock()


def _lib() -> ctypes.CDLL:
    L = lib()
    with _DECLARE_LOCK:
        _declare(L)
    return L


def _call(fn, *args) -> None:
    err = c_void_p()
    _check(fn(*args, byref(err)), err)


class Array:
    """A TileDB array folder opened for reading, as TileDB 2.30 opens it.

    >>> with tdbfilter.Array("my_array") as A:          # doctest: +SKIP
    ...     a = A.read("a")                              # numpy, dense: row-major box
    ...     cols = A.read(["x", "y", "v"], [(0, 9), (0, 9)])   # dict of fields

    ``key``: the 32-byte AES-256-GCM key of an encrypted array (bytes or a 32-character str).
    ``timestamp``: ``end`` or ``(start, end)`` in milliseconds to time-travel. ``threads``:
    threads decoding tiles (0: all cores). ``memory_limit``: the most bytes one field's result
    may take (0: none; set it for untrusted arrays: a read over it raises
    :class:`OutOfMemory` before allocating). Close it (or use ``with``); a finalizer is only a
    backstop.
    """

    def __init__(self, path: str, key: Union[bytes, str, None] = None,
                 timestamp: Union[int, tuple[int, int], None] = None, threads: int = 0,
                 memory_limit: int = 0):
        L = _lib()
        k = key.encode() if isinstance(key, str) else key
        handle = c_void_p()
        if timestamp is None:
            _call(L.tdb_array_open, str(path).encode(), k, len(k) if k else 0, byref(handle))
        else:
            start, end = (0, timestamp) if isinstance(timestamp, int) else timestamp
            _call(L.tdb_array_open_at, str(path).encode(), k, len(k) if k else 0, start, end,
                  byref(handle))
        self._h = handle
        if threads:
            _call(L.tdb_array_set_threads, self._h, threads)
        if memory_limit:
            _call(L.tdb_array_set_memory_limit, self._h, memory_limit)
        self.dimensions, self.attributes = self._fields()

    # -- life cycle ------------------------------------------------------------------------

    def close(self) -> None:
        """Frees the C handle (idempotent)."""
        if getattr(self, "_h", None):
            _lib().tdb_array_free(self._h)
            self._h = None

    def __enter__(self) -> "Array":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def _handle(self) -> c_void_p:
        if not self._h:
            raise InvalidArgument("the array is closed")
        return self._h

    # -- schema ----------------------------------------------------------------------------

    def _fields(self) -> tuple[list[Field], list[Field]]:
        L, h = _lib(), self._handle()
        nd, na = c_uint32(), c_uint32()
        _call(L.tdb_array_field_num, h, byref(nd), byref(na))
        dims, attrs = [], []
        for i in range(nd.value):
            name, dt, cvn = c_char_p(), c_uint32(), c_uint32()
            _call(L.tdb_array_dimension, h, i, byref(name), byref(dt), byref(cvn))
            dims.append(Field(name.value.decode(), dt.value, cvn.value))
        for i in range(na.value):
            name, dt, cvn, nullable = c_char_p(), c_uint32(), c_uint32(), c_bool()
            _call(L.tdb_array_attribute, h, i, byref(name), byref(dt), byref(cvn), byref(nullable))
            attrs.append(Field(name.value.decode(), dt.value, cvn.value, nullable.value))
        return dims, attrs

    @property
    def sparse(self) -> bool:
        t = c_uint8()
        _call(_lib().tdb_array_schema_info, self._handle(), byref(t), None, None, None, None, None)
        return t.value == 1

    def domain(self, dim: int) -> Optional[tuple[Any, Any]]:
        """Dimension ``dim``'s domain ``(lo, hi)``; None for string dimensions."""
        lo, hi, size, ext = c_void_p(), c_void_p(), c_size_t(), c_void_p()
        _call(_lib().tdb_array_dimension_domain, self._handle(), dim, byref(lo), byref(hi),
              byref(size), byref(ext))
        if not lo.value:
            return None
        dt = np.dtype(_NUMPY[self.dimensions[dim].datatype])
        return (np.frombuffer(ctypes.string_at(lo, size.value), dt)[0],
                np.frombuffer(ctypes.string_at(hi, size.value), dt)[0])

    def pipeline(self, field: Optional[str] = None, kind: str = "field") -> Pipeline:
        """The schema's filter pipeline of ``field`` (``kind="field"``), or its schema-wide
        ``"offsets"``, ``"validity"`` or ``"coords"`` pipeline."""
        out = c_void_p()
        _call(_lib().tdb_array_pipeline, self._handle(), field.encode() if field else None,
              _PIPELINE_KIND[kind], byref(out))
        return Pipeline(out)

    @property
    def fragments(self) -> list[Fragment]:
        L, h = _lib(), self._handle()
        n = c_uint32()
        _call(L.tdb_array_fragment_num, h, byref(n))
        out = []
        for i in range(n.value):
            name, t1, t2, v = c_char_p(), c_uint64(), c_uint64(), c_uint32()
            dense, cells, tiles = c_bool(), c_uint64(), c_uint64()
            _call(L.tdb_array_fragment, h, i, byref(name), byref(t1), byref(t2), byref(v),
                  byref(dense), byref(cells), byref(tiles))
            out.append(Fragment(name.value.decode(), (t1.value, t2.value), v.value, dense.value,
                                cells.value, tiles.value))
        return out

    @property
    def metadata(self) -> dict[str, Any]:
        """The array metadata: strings as str, one value as a scalar, several as a tuple."""
        L, h = _lib(), self._handle()
        n = c_uint32()
        _call(L.tdb_array_metadata_num, h, byref(n))
        out: dict[str, Any] = {}
        for i in range(n.value):
            key, dt, num, value = c_char_p(), c_uint32(), c_uint32(), c_void_p()
            _call(L.tdb_array_metadata, h, i, byref(key), byref(dt), byref(num), byref(value))
            if dt.value in _TEXT:
                out[key.value.decode()] = ctypes.string_at(value, num.value).decode("utf-8", "replace")
            elif dt.value in _NUMPY:
                d = np.dtype(_NUMPY[dt.value])
                vals = np.frombuffer(ctypes.string_at(value, num.value * d.itemsize), d).tolist()
                out[key.value.decode()] = vals[0] if len(vals) == 1 else tuple(vals)
            else:
                out[key.value.decode()] = ctypes.string_at(value, num.value)
        return out

    def enumeration(self, name: str) -> list:
        """The values of enumeration ``name`` (the attribute's cells are indices into it)."""
        r = c_void_p()
        _call(_lib().tdb_array_enumeration, self._handle(), name.encode(), byref(r))
        return list(_take_result(r))

    # -- cells -----------------------------------------------------------------------------

    def read(self, fields: Union[str, Sequence[str], None] = None,
             subarray: Optional[Sequence[tuple[Any, Any]]] = None):
        """Reads one field (returns its cells) or several (a dict, read in one pass; default:
        every attribute, and for sparse arrays the dimensions first).

        ``subarray``: an inclusive ``(lo, hi)`` per dimension (numeric dimensions; default:
        the non-empty domain, as the C API reads it — not TileDB-Py's whole domain). Dense
        arrays give the box's cells in row-major order with fill values where nothing was
        written; sparse arrays the visible cells in global order. Fixed cells come as a numpy
        array (shape ``(n, cell_val_num)`` for multi-value cells), var-size text as an object
        array of str and other var cells as arrays per cell; nullable fields as a numpy masked
        array (or an object array with None)."""
        single = isinstance(fields, str)
        if fields is None:
            fields = ([d.name for d in self.dimensions] if self.sparse else []) + \
                     [a.name for a in self.attributes]
        names = [fields] if single else list(fields)
        sub = None
        if subarray is not None:
            if len(subarray) != len(self.dimensions):
                raise InvalidArgument(
                    f"the subarray has {len(subarray)} ranges for {len(self.dimensions)} dimensions")
            parts = []
            for d, (lo, hi) in zip(self.dimensions, subarray):
                if d.datatype not in _NUMPY:
                    raise Unsupported(f"dimension {d.name}: subarrays on string dimensions are not supported")
                parts.append(np.array([lo, hi], dtype=_NUMPY[d.datatype]).tobytes())
            sub = ctypes.create_string_buffer(b"".join(parts))
        c_names = (c_char_p * len(names))(*[n.encode() for n in names])
        results = (c_void_p * len(names))()
        _call(_lib().tdb_array_read_fields, self._handle(), c_names, len(names), sub, results)
        out = {}
        for i, name in enumerate(names):
            out[name] = _take_result(c_void_p(results[i]))
        return out[names[0]] if single else out


def _take_result(r: c_void_p):
    """Converts a C result into numpy (copying out of the library) and frees it."""
    L = _lib()
    try:
        data, size = c_void_p(), c_size_t()
        _call(L.tdb_result_data, r, byref(data), byref(size))
        n, dt, cvn = c_uint64(), c_uint32(), c_uint32()
        _call(L.tdb_result_cell_count, r, byref(n))
        _call(L.tdb_result_type, r, byref(dt), byref(cvn))
        raw = np.empty(size.value, dtype=np.uint8)
        if size.value:
            ctypes.memmove(raw.ctypes.data, data.value, size.value)
        validity = None
        vp, vn = c_void_p(), c_size_t()
        _call(L.tdb_result_validity, r, byref(vp), byref(vn))
        if vp.value:
            validity = np.ctypeslib.as_array((c_uint8 * vn.value).from_address(vp.value)).copy()
        if cvn.value == VAR:
            op, on = c_void_p(), c_size_t()
            _call(L.tdb_result_offsets, r, byref(op), byref(on))
            offsets = np.ctypeslib.as_array((c_uint64 * on.value).from_address(op.value)) \
                if on.value else np.zeros(0, np.uint64)
            ends = np.append(offsets[1:], size.value).astype(np.int64)
            starts = offsets.astype(np.int64)
            blob = raw.tobytes()
            if dt.value in _TEXT:
                cells = [blob[s:e].decode("utf-8", "replace") for s, e in zip(starts, ends)]
            elif dt.value in _NUMPY:
                d = np.dtype(_NUMPY[dt.value])
                cells = [np.frombuffer(blob[s:e], d) for s, e in zip(starts, ends)]
            else:
                cells = [blob[s:e] for s, e in zip(starts, ends)]
            values = np.empty(len(cells), dtype=object)
            values[:] = cells
            if validity is not None:
                values[validity == 0] = None
            return values
        if dt.value in _NUMPY:
            values = raw.view(_NUMPY[dt.value])
        elif dt.value in _TEXT:
            values = raw.view(f"S{cvn.value}") if cvn.value > 1 else raw.view("S1")
            if validity is not None:
                return np.ma.array(values, mask=validity == 0)
            return values
        else:
            values = raw.view(f"V{cvn.value}") if cvn.value > 1 else raw
        if cvn.value > 1 and dt.value in _NUMPY:
            values = values.reshape(n.value, cvn.value)
        if validity is not None:
            mask = validity == 0
            if values.ndim == 2:
                mask = np.repeat(mask[:, None], values.shape[1], axis=1)
            return np.ma.array(values, mask=mask)
        return values
    finally:
        L.tdb_result_free(r)
