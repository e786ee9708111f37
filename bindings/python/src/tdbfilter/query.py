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
from typing import Any, Optional, Sequence, Union

import numpy as np

from ._datatypes import of_datatype
from ._ffi import call as _call
from ._ffi import lib
from ._lib import CONSTANTS
from .array import Array, RawResult, _bound, _numeric, _take_result, _to_numpy
from .errors import InvalidArgument

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
