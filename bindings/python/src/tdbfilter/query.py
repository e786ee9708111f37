"""``Query``: reads and aggregates over an open :class:`tdbfilter.Array` through the C
query handle (``tdb_query_*``): several inclusive ranges per dimension, a result layout, a
condition in TileDB-Py's syntax (typed and evaluated by the library), chosen fields, and
aggregates instead of cells.

>>> with tdbfilter.Array("my_array") as A:                       # doctest: +SKIP
...     q = Query(A, fields=["a", "x"], layout="col", condition="a > 3")
...     q.add_range("x", 1, 4).add_range("x", 8, 9)
...     cells = q.read()                            # {"a": ndarray, "x": ndarray}
...     Query(A).aggregate([("sum", "a"), ("count", None)])   # {"sum(a)": ..., "count": ...}
"""

from __future__ import annotations

import ctypes
from ctypes import byref, c_char_p, c_size_t, c_uint8, c_uint32, c_uint64, c_void_p
from dataclasses import dataclass
from typing import Any, Iterator, Optional, Sequence, Union

import numpy as np

from ._datatypes import of_datatype
from ._ffi import call as _call
from ._ffi import lib
from ._lib import CONSTANTS
from .array import Array, Field, RawResult, _bound, _numeric, _take_result, _to_numpy
from .errors import BufferTooSmall, InvalidArgument

LAYOUTS = {"row": CONSTANTS["TDB_ROW_MAJOR"], "col": CONSTANTS["TDB_COL_MAJOR"],
           "global": CONSTANTS["TDB_GLOBAL_ORDER"], "unordered": CONSTANTS["TDB_UNORDERED"]}
"""The result layouts by name (TileDB's numbers)."""

AGGREGATES = {"sum": 0, "min": 1, "max": 2, "mean": 3, "null_count": 4, "count": 5}
"""The aggregate operators by name (``TDB_AGG_*``)."""


@dataclass(frozen=True)
class QueryStats:
    """What the last submit did (``tdb_query_stats``)."""

    tiles_from_metadata: int
    tiles_decoded: int
    tiles_pruned: int
    bytes_decoded: int


class Query:
    """A read (:meth:`read`) or aggregate (:meth:`aggregate`) over ``array`` (open for
    reading). ``fields``: the attributes and dimensions to read, in order (default: every
    dimension, then every attribute). ``layout``: ``"row"``, ``"col"``, ``"global"`` or
    ``"unordered"`` (dense arrays: not unordered). ``condition``: TileDB-Py's condition text;
    dense reads give failing cells the fill value (null where nullable), sparse reads drop
    them. Ranges come from :meth:`add_range`; a dimension without one spans its domain.
    Each submit runs a fresh C query, so a ``Query`` can be submitted again."""

    def __init__(self, array: Array, fields: Optional[Sequence[str]] = None,
                 layout: str = "row", condition: Optional[str] = None):
        if layout not in LAYOUTS:
            raise InvalidArgument(f"layout {layout!r} is not one of {sorted(LAYOUTS)}")
        if condition is not None and not isinstance(condition, str):
            raise InvalidArgument(f"the condition must be text, not {type(condition).__name__}")
        self.array = array
        self.fields = list(fields) if fields is not None else None
        self.layout = layout
        self.condition = condition
        self._ranges: list[tuple[int, bytes, bytes]] = []
        self.stats: Optional[QueryStats] = None

    def _dim(self, dim: Union[int, str]) -> int:
        dims = self.array.dimensions
        if isinstance(dim, (int, np.integer)) and not isinstance(dim, bool):
            if not 0 <= int(dim) < len(dims):
                raise InvalidArgument(f"dimension index {dim} is out of range (the array has "
                                      f"{len(dims)})")
            return int(dim)
        for i, d in enumerate(dims):
            if d.name == dim:
                return i
        raise InvalidArgument(f"the array has no dimension {dim!r}")

    def add_range(self, dim: Union[int, str], lo: Any, hi: Any) -> "Query":
        """Adds the inclusive range [``lo``, ``hi``] to dimension ``dim`` (index or name):
        numbers (datetime64 for datetime dimensions) of its type, str or bytes for string
        dimensions. Returns the query."""
        i = self._dim(dim)
        d = self.array.dimensions[i]
        cell = d.cell_type
        if d.var or not _numeric(cell):
            lo_b, hi_b = (_text_bound(d.name, v) for v in (lo, hi))
        else:
            lo_b, hi_b = _bound(d, cell, lo), _bound(d, cell, hi)
        self._ranges.append((i, lo_b, hi_b))
        return self

    def _handle(self) -> c_void_p:
        """A fresh C query with this query's layout, ranges and condition."""
        L = lib()
        q = c_void_p()
        _call(L.tdb_query_create, self.array._handle(), byref(q))
        try:
            _call(L.tdb_query_set_layout, q, LAYOUTS[self.layout])
            for i, lo, hi in self._ranges:
                _call(L.tdb_query_add_range, q, i, lo, len(lo), hi, len(hi))
            if self.condition is not None:
                _call(L.tdb_query_set_condition, q, self.condition.encode())
        except BaseException:
            L.tdb_query_free(q)
            raise
        return q

    def _names(self) -> list[str]:
        if self.fields is not None:
            return list(self.fields)
        a = self.array
        return [d.name for d in a.dimensions] + [f.name for f in a.attributes]

    def read_raw(self) -> dict[str, RawResult]:
        """Runs the read; each field's cells as the C API returns them."""
        self.array._readable()
        L = lib()
        names = self._names()
        q = self._handle()
        try:
            for n in self.fields or ():
                _call(L.tdb_query_add_field, q, n.encode())
            results = (c_void_p * len(names))()
            _call(L.tdb_query_submit, q, results, len(names))
            out = {}
            for k, n in enumerate(names):
                out[n] = _take_result(c_void_p(results[k]), numpy=True)
            self.stats = _stats(q)
            return out
        finally:
            L.tdb_query_free(q)

    def read(self) -> dict[str, Any]:
        """Runs the read: a dict of the fields' cells as numpy (see
        :meth:`tdbfilter.Array.read`), one-dimensional in the query's layout."""
        return {n: _to_numpy(r) for n, r in self.read_raw().items()}

    def read_batches(self, buffer_bytes: int) -> Iterator[dict[str, Any]]:
        """Runs the read in bounded batches (``tdb_query_submit_batch``): each field gets a
        data buffer of ``buffer_bytes`` bytes (and offsets and validity buffers of as many
        bytes when var-size or nullable), and each batch is a dict as :meth:`read` returns,
        of the cells that fit, in the query's layout; the batches concatenated are
        :meth:`read`'s result. A read of no cell yields one empty batch. A next cell larger
        than a buffer doubles the buffers until it fits (TileDB-Py's resubmit). The library
        holds only about a batch (see ``tdb_query_submit_batch``) for row- and col-major
        reads."""
        if int(buffer_bytes) < 1:
            raise InvalidArgument(f"buffer_bytes must be positive, not {buffer_bytes}")
        self.array._readable()
        L = lib()
        fields = self._fields()
        size = int(buffer_bytes)
        q = self._handle()
        try:
            while True:
                bufs = _BatchBuffers(fields, size)
                bufs.set_on(q)
                try:
                    _call(L.tdb_query_submit_batch, q)
                except BufferTooSmall:
                    size *= 2  # nothing was consumed: retry with larger buffers
                    continue
                status = c_uint32()
                _call(L.tdb_query_status, q, byref(status))
                cells, batch = bufs.take(q)
                done = status.value == CONSTANTS["TDB_QUERY_COMPLETED"]
                if not done and cells == 0:
                    size *= 2  # an incomplete batch of no cell: make room
                    continue
                self.stats = _stats(q)
                yield batch
                if done:
                    return
        finally:
            L.tdb_query_free(q)

    def result_sizes(self, buffer_bytes: int) -> dict[str, tuple[int, int]]:
        """The size of the read's result without keeping it: per field, (cells, data
        bytes), summed over a batch read (:meth:`read_batches`'s buffers of
        ``buffer_bytes``), so memory stays bounded."""
        if int(buffer_bytes) < 1:
            raise InvalidArgument(f"buffer_bytes must be positive, not {buffer_bytes}")
        self.array._readable()
        L = lib()
        fields = self._fields()
        totals = {f.name: [0, 0] for f in fields}
        size = int(buffer_bytes)
        q = self._handle()
        try:
            bufs = _BatchBuffers(fields, size)
            while True:
                bufs.set_on(q)
                try:
                    _call(L.tdb_query_submit_batch, q)
                except BufferTooSmall:
                    size *= 2
                    bufs = _BatchBuffers(fields, size)
                    continue
                status = c_uint32()
                _call(L.tdb_query_status, q, byref(status))
                cells = 0
                for f in fields:
                    n, dsize = c_uint64(), c_size_t()
                    _call(L.tdb_query_result_size, q, f.name.encode(), byref(n), byref(dsize),
                          None, None)
                    totals[f.name][0] += n.value
                    totals[f.name][1] += dsize.value
                    cells = n.value
                if status.value == CONSTANTS["TDB_QUERY_COMPLETED"]:
                    self.stats = _stats(q)
                    return {n: (c, b) for n, (c, b) in totals.items()}
                if cells == 0:
                    size *= 2
                    bufs = _BatchBuffers(fields, size)
        finally:
            L.tdb_query_free(q)

    def _fields(self) -> list[Field]:
        by_name = {f.name: f for f in list(self.array.dimensions) + list(self.array.attributes)}
        out = []
        for n in self._names():
            if n not in by_name:
                raise InvalidArgument(f"the array has no field {n!r}")
            out.append(by_name[n])
        return out

    def aggregate(self, aggregates: Sequence[tuple[str, Optional[str]]]) -> dict[str, Any]:
        """Computes ``aggregates``, pairs of (operator, attribute) with the operators of
        :data:`AGGREGATES` (``count`` takes None), over the ranges and condition: a dict by
        label (``sum(a)``, ``count``) of numpy scalars, None where there is no value."""
        self.array._readable()
        L = lib()
        q = self._handle()
        try:
            for op, field in aggregates:
                if op not in AGGREGATES:
                    raise InvalidArgument(f"aggregate {op!r} is not one of "
                                          f"{sorted(AGGREGATES)}")
                _call(L.tdb_query_add_aggregate, q, AGGREGATES[op],
                      None if op == "count" else field.encode())
            _call(L.tdb_query_submit, q, None, 0)
            n = c_size_t()
            _call(L.tdb_query_aggregate_count, q, byref(n))
            out = {}
            for k in range(n.value):
                label, dt, value = c_char_p(), c_uint32(), c_void_p()
                size, valid = c_size_t(), c_uint8()
                _call(L.tdb_query_aggregate, q, k, byref(label), byref(dt), byref(value),
                      byref(size), byref(valid))
                if not valid.value:
                    out[label.value.decode()] = None
                    continue
                raw = ctypes.string_at(value, size.value)
                cell = of_datatype(dt.value)
                if _numeric(cell):
                    out[label.value.decode()] = np.frombuffer(raw, cell.dtype)[0]
                else:
                    out[label.value.decode()] = raw
            self.stats = _stats(q)
            return out
        finally:
            L.tdb_query_free(q)


class _BatchBuffers:
    """The numpy buffers of one batch: per field, data (and offsets, validity)."""

    def __init__(self, fields: Sequence[Field], size: int):
        self.fields = list(fields)
        self.data = [np.empty(size, np.uint8) for _ in self.fields]
        self.offsets = [np.empty(max(1, size // 8), np.uint64) if f.var else None
                        for f in self.fields]
        self.validity = [np.empty(size, np.uint8) if f.nullable else None
                         for f in self.fields]

    def set_on(self, q: c_void_p) -> None:
        L = lib()
        for f, d, o, v in zip(self.fields, self.data, self.offsets, self.validity):
            name = f.name.encode()
            _call(L.tdb_query_set_data_buffer, q, name, d.ctypes.data_as(c_void_p), d.nbytes)
            if o is not None:
                _call(L.tdb_query_set_offsets_buffer, q, name,
                      o.ctypes.data_as(ctypes.POINTER(c_uint64)), o.shape[0])
            if v is not None:
                _call(L.tdb_query_set_validity_buffer, q, name,
                      v.ctypes.data_as(ctypes.POINTER(c_uint8)), v.nbytes)

    def take(self, q: c_void_p) -> tuple[int, dict[str, Any]]:
        """The number of cells the last batch wrote and the fields' cells, as numpy (views
        of this batch's buffers)."""
        L = lib()
        out = {}
        cells = 0
        for f, d, o, v in zip(self.fields, self.data, self.offsets, self.validity):
            n, dsize, osize, vsize = c_uint64(), c_size_t(), c_size_t(), c_size_t()
            _call(L.tdb_query_result_size, q, f.name.encode(), byref(n), byref(dsize),
                  byref(osize), byref(vsize))
            raw: Any = d[:dsize.value]
            offsets = o[:osize.value] if o is not None else None
            if f.var:
                raw = raw.tobytes()
            validity = v[:vsize.value] if v is not None else None
            out[f.name] = _to_numpy(RawResult(f.datatype, f.cell_val_num, n.value, raw,
                                              offsets, validity))
            cells = n.value
        return cells, out


def _text_bound(name: str, v: Any) -> bytes:
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, (bytes, bytearray, np.bytes_)):
        return bytes(v)
    raise InvalidArgument(f"dimension '{name}' is a string dimension: bound {v!r} is not str "
                          "or bytes")


def _stats(q: c_void_p) -> QueryStats:
    a, b, c, d = c_uint64(), c_uint64(), c_uint64(), c_uint64()
    _call(lib().tdb_query_stats, q, byref(a), byref(b), byref(c), byref(d))
    return QueryStats(a.value, b.value, c.value, d.value)
