"""TileDB-Py's read indexing over tdbfilter's one-box reads: ``A[...]`` (half-open integer
slices over domain coordinates, inclusive float/datetime ones), ``A.query(...)``,
``A.multi_index[...]`` (inclusive, lists of ranges and points) and ``A.df[...]``.

The C API reads one box per call: several ranges are read as their bounding box and
selected in numpy (dense: ``np.ix_`` over the ranges in the order given, as TileDB
concatenates them; sparse: the coordinates filtered), which is exact.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

import numpy as np

from ..errors import TdbfilterError as TileDBError
from . import _stats
from ._types import VAR_NUM

_INT = (int, np.integer)


class EmptyRange:
    """TileDB-Py's ``tiledb.EmptyRange``: a selection of no cells."""


def _as_tuple(selection, ndim: int) -> list:
    sel = list(selection) if isinstance(selection, tuple) else [selection]
    if sum(1 for s in sel if s is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if any(s is Ellipsis for s in sel):
        at = next(i for i, s in enumerate(sel) if s is Ellipsis)
        sel[at:at + 1] = [slice(None)] * (ndim - len(sel) + 1)
    if len(sel) > ndim:
        raise IndexError(f"too many indices for array: {len(sel)} for {ndim} dimension(s)")
    return sel + [slice(None)] * (ndim - len(sel))


def _dim_bounds(array, i):
    d = array.schema.domain.dim(i)
    cd = array.schema._current_domain
    if cd is not None and not cd.is_empty:
        return cd.ndrectangle.range(i)
    return d.domain


def _getitem_ranges(array, selection):
    """TileDB-Py's ``__getitem__`` ranges: per dimension a list of inclusive ``(lo, hi)``
    (None for a string dimension's whole range), and the axes a scalar index drops."""
    dom = array.schema.domain
    sel = _as_tuple(selection, dom.ndim)
    ranges, drop, steps = [], [], [None] * dom.ndim
    for i, s in enumerate(sel):
        d = dom.dim(i)
        if _is_arrow_array(s):
            s = s.to_pylist()  # TileDB-Py: a pyarrow array is a list of points
        if d.isvar:
            if isinstance(s, slice):
                if s.step is not None:
                    raise IndexError("steps are not supported for string dimensions")
                ranges.append([(_b(s.start), _b(s.stop))])
            elif isinstance(s, (list, np.ndarray)):
                ranges.append([(_b(x), _b(x)) for x in s])
            else:
                ranges.append([(_b(s), _b(s))])
                drop.append(i)
            continue
        lo_dom, hi_dom = _dim_bounds(array, i)
        kind = d.dtype.kind
        if isinstance(s, (list, np.ndarray)):
            if not array.schema.sparse:
                raise IndexError("invalid index type: list (use multi_index)")
            ranges.append([(x, x) for x in np.asarray(s, dtype=d.dtype)])
            continue
        if np.isscalar(s) or isinstance(s, (np.datetime64,)):
            drop.append(i)
            if isinstance(s, _INT) and not isinstance(s, bool) and kind in "iu":
                v = int(s)
                if v < 0:
                    v += int(hi_dom) + 1
                s = slice(v, v + 1)
            else:
                if kind in "iu":
                    raise IndexError("cannot index integral domain dimension with "
                                     f"non-integral slice (dtype: {type(s)})")
                if kind == "f" and not isinstance(s, (int, float, np.integer, np.floating)):
                    raise IndexError(f"invalid index type: {type(s)!r}")
                s = slice(s, s)
                ranges.append([(_cast(d, s.start), _cast(d, s.stop))])
                continue
        if not isinstance(s, slice):
            raise IndexError(f"invalid index type: {type(s)!r}")
        if s.step is not None:
            if array.schema.sparse:
                raise IndexError("steps are not supported for sparse arrays")
            steps[i] = s.step  # dense: the box is read, then stepped in numpy (TileDB-Py)
        start, stop = s.start, s.stop
        if kind in "iu":
            for x in (start, stop):
                if x is not None and isinstance(x, (float, np.floating)):
                    raise IndexError("cannot index integral domain dimension with floating "
                                     "point slice")
                if x is not None and not isinstance(x, _INT):
                    raise IndexError("cannot index integral domain dimension with "
                                     f"non-integral slice (dtype: {type(x)})")
            if start is not None and stop is not None and \
                    np.array([start, stop]).dtype.kind == "f":
                # TileDB-Py takes the bounds together: numpy makes uint64 with a signed
                # integer a float
                raise IndexError("cannot index integral domain dimension with floating "
                                 "point slice")
        if kind == "M":
            for x in (start, stop):
                if x is not None and not isinstance(x, np.datetime64):
                    raise IndexError("cannot index datetime dimension with non-datetime "
                                     "interval")
        if start is None:
            start = lo_dom
        elif kind not in "M" and start < 0 and kind in "iu":
            start = int(start) + int(hi_dom) + 1
        full_lo, full_hi = d.domain
        if start is not None and start < full_lo:
            raise IndexError("index out of bounds <todo>")
        if stop is None:
            stop = hi_dom if kind in "fM" else int(hi_dom) + 1
        else:
            if kind in "iu" and stop < 0:
                # TileDB-Py adds the domain's upper bound; on uint64 dimensions numpy makes
                # that a float, which TileDB-Py then takes as an inclusive end.
                stop = int(stop) + int(hi_dom) + (1 if d.dtype == np.uint64 else 0)
            if stop > full_hi:
                stop = full_hi if kind in "fM" else int(full_hi) + 1
        if kind in "fM":
            ranges.append([(_cast(d, start), _cast(d, stop))])
        else:
            ranges.append([(int(start), int(stop) - 1)])
        _check_current_domain(array, i, ranges[-1])
    return ranges, drop, steps


def _current_range(array, i):
    """Dimension ``i``'s range in the schema's current domain (as the open array's schema
    holds it), or None."""
    cd = array.schema._current_domain
    if cd is None or cd.is_empty or array.schema.domain.dim(i).isvar:
        return None
    return cd.ndrectangle.range(i)


def _check_current_domain(array, i, ranges) -> None:
    """TileDB refuses a range reaching outside the current domain."""
    cur = _current_range(array, i)
    if cur is None:
        return
    for lo, hi in ranges:
        if lo is None or hi is None:
            continue
        if lo < cur[0] or hi > cur[1]:
            d = array.schema.domain.dim(i)
            raise TileDBError(f"Subarray: the range [{lo}, {hi}] of dimension '{d.name}' is "
                              f"outside the current domain [{cur[0]}, {cur[1]}]")


def _b(x):
    if x is None:
        return None
    return x.encode() if isinstance(x, str) else bytes(x)


def _cast(d, v):
    if d.dtype.kind == "M":
        return np.datetime64(v).astype(d.dtype) if not isinstance(v, _INT) else \
            np.datetime64(int(v), np.datetime_data(d.dtype)[0])
    return d.dtype.type(v)


def is_empty_range(idx) -> bool:
    """TileDB-Py's test for a selection of nothing: ``EmptyRange`` or an empty sequence."""
    if idx is EmptyRange:
        return True
    return hasattr(idx, "__len__") and not isinstance(idx, str) and len(idx) == 0


def _to_scalar(obj):
    if np.isscalar(obj) or isinstance(obj, (np.datetime64, np.timedelta64)):
        return obj
    if isinstance(obj, np.ndarray) and obj.ndim == 0:
        return obj[()]
    pa = _pyarrow_if_loaded()
    if pa is not None and isinstance(obj, pa.Scalar):
        return obj.as_py()
    raise ValueError(f"Cannot convert {type(obj)} to scalar")


def _pyarrow_if_loaded():
    """pyarrow when already imported (a pyarrow value can only come from it), else None."""
    import sys

    return sys.modules.get("pyarrow")


def _iter_ranges(sel, sparse, ned, cur):
    """One dimension's selection item as inclusive ranges (TileDB-Py's ``iter_ranges``):
    open slice ends come from the non-empty domain (inside the current domain); a sparse
    full slice, or an end with no bound known, gives no range (the whole dimension)."""
    if isinstance(sel, slice):
        if sel.step is not None:
            raise ValueError("Stepped slice ranges are not supported")
        lo, hi = sel.start, sel.stop
        if lo is None:
            lo = (max(cur[0], ned[0]) if cur and ned else cur[0] if cur else
                  ned[0] if ned else None)
        if hi is None:
            hi = (min(cur[1], ned[1]) if cur and ned else cur[1] if cur else
                  ned[1] if ned else None)
        if (sparse and sel.start is None and sel.stop is None) or lo is None or hi is None:
            return
        yield _to_scalar(lo), _to_scalar(hi)
    elif isinstance(sel, tuple):
        if len(sel) != 2:
            raise TileDBError(f"a multi_index range is a (start, end) pair, not {sel!r}")
        yield _to_scalar(sel[0]), _to_scalar(sel[1])
    elif isinstance(sel, (list, np.ndarray)) or _is_arrow_array(sel):
        for x in sel:
            x = _to_scalar(x)
            yield x, x
    else:
        x = _to_scalar(sel)
        yield x, x


def _is_arrow_array(sel) -> bool:
    pa = _pyarrow_if_loaded()
    return pa is not None and isinstance(sel, pa.Array)


def getitem_ranges(array, idx):
    """TileDB-Py's ``multirange_indexing.getitem_ranges``: per dimension a tuple of
    inclusive ``(start, end)`` ranges, ``()`` for the whole dimension."""
    ndim = array.schema.domain.ndim
    ranges = [()] * ndim
    ned = array.nonempty_domain()
    if ned is None:
        ned = [None] * ndim
    cd = getattr(array.schema, "current_domain", None)
    if cd is not None and getattr(cd, "is_empty", True):
        cd = None
    sparse = array.schema.sparse
    sel = [idx] if not isinstance(idx, tuple) else list(idx)
    if len(sel) > ndim:
        raise IndexError(f"too many indices for array: {len(sel)} for {ndim} dimension(s)")
    for i, s in enumerate(sel):
        items = s if isinstance(s, list) else [s]
        cur = cd.ndrectangle.range(i) if cd is not None else None
        ranges[i] = tuple(r for it in items for r in _iter_ranges(it, sparse, ned[i], cur))
    return tuple(ranges)


def _mi_ranges(array, selection):
    """``multi_index`` ranges as lists per dimension (``[]``: the whole dimension), or None
    for an empty selection."""
    if is_empty_range(selection):
        return None
    out = []
    for i, r in enumerate(getitem_ranges(array, selection)):
        _check_current_domain(array, i, r)
        cur = _current_range(array, i)
        # the whole dimension of an array with a current domain: that domain (TileDB's
        # default subarray, which the library does not know when the open array's schema
        # was given its current domain in memory)
        out.append(list(r) if r or cur is None else [tuple(cur)])
    return out


# -- reading boxes ---------------------------------------------------------------------------


def _convert(array, name, values):
    """A field's cells as TileDB-Py returns them."""
    sch = array.schema
    if sch.has_attr(name):
        f = sch.attr(name)
        tname, isvar, dtype = f._dt.tiledb_type, f.isvar, f.dtype
    else:
        f = sch.domain.dim(name)
        tname, isvar, dtype = f._dt.tiledb_type, f.isvar, f.dtype
    if isvar:
        # TileDB-Py unpacks text cells as numpy's bytes_/str_ do: trailing NULs dropped
        # (a dense cell holding the default fill "\0" reads as empty).
        if tname == "GEOM_WKB":
            # TileDB-Py reads WKB cells as int8 arrays
            out = np.empty(len(values), dtype=object)
            for k, v in enumerate(values):
                out[k] = np.frombuffer(b"" if v is None else bytes(v), dtype=np.int8)
            return _null_masked(f, values, out)
        if len(values) == 0 and tname != "BLOB" and (
                tname in ("CHAR", "STRING_ASCII", "STRING_UTF8") or dtype.kind in "SU"):
            # TileDB-Py: no text cell reads as an empty numpy text array (not objects)
            kind = "U" if tname == "STRING_UTF8" or dtype.kind == "U" else "S"
            return _null_masked(f, values, np.array([], dtype=f"{kind}1"))
        if tname in ("CHAR", "STRING_ASCII") or tname == "BLOB" or dtype.kind == "S":
            text = tname != "BLOB"
            out = np.empty(len(values), dtype=object)
            for k, v in enumerate(values):
                v = v.encode("utf-8", "surrogateescape") if isinstance(v, str) else (
                    b"" if v is None else v)
                out[k] = v.rstrip(b"\0") if text else v
            return _null_masked(f, values, out)
        if tname == "STRING_UTF8" or dtype.kind == "U":
            out = np.empty(len(values), dtype=object)
            for k, v in enumerate(values):
                out[k] = v.rstrip("\0") if isinstance(v, str) else ("" if v is None else v)
            return _null_masked(f, values, out)
        return values
    if tname == "BLOB" and isinstance(values, np.ndarray) and values.dtype == np.uint8:
        # TileDB-Py reads fixed-size blob cells as bytes
        n = values.shape[1] if values.ndim == 2 else 1
        data = np.ascontiguousarray(np.ma.getdata(values)).view(f"S{n}").reshape(-1)
        if isinstance(values, np.ma.MaskedArray):
            mask = np.ma.getmaskarray(values)
            return np.ma.array(data, mask=mask[:, 0] if mask.ndim == 2 else mask)
        return data
    if isinstance(values, np.ma.MaskedArray):
        data = _fixed(np.ma.getdata(values), dtype)
        mask = np.ma.getmaskarray(values)
        if mask.ndim == 2:
            mask = mask[:, 0]
        return np.ma.array(data, mask=mask)
    return _fixed(values, dtype)


def _null_masked(field, values, out):
    """A nullable text attribute's cells as TileDB-Py returns them: a masked object array
    (nulls masked, empty underneath); other fields' ``out`` as it is."""
    if not getattr(field, "isnullable", False):
        return out
    return np.ma.array(out, mask=np.array([v is None for v in values], dtype=bool))


def _fixed(values, dtype):
    if values.ndim == 2 and dtype.kind in "Vc":
        return np.ascontiguousarray(values).view(dtype).reshape(values.shape[0])
    if dtype.kind == "S" and values.dtype != dtype and dtype.itemsize:
        return values.view(dtype)
    return values


def _layout(array, order) -> str:
    """The C query's layout of TileDB-Py's ``order`` (None: row-major dense, unordered
    sparse)."""
    if order is None:
        return "unordered" if array.schema.sparse else "row"
    return {"C": "row", "F": "col", "G": "global", "U": "unordered"}[order]


def _cond_text(cond):
    """TileDB-Py's ``cond``: a str (empty: none); anything else is a TypeError."""
    if cond is None:
        return None
    if not isinstance(cond, str):
        raise TypeError("`cond` expects type str.")
    if not cond.strip():
        return None
    from ._qc import check_python_syntax

    check_python_syntax(cond)
    return cond


def low_level_query(array, names, ranges, order=None, cond=None):
    """A :class:`tdbfilter.query.Query` over ``array``'s open handle: ``names`` (None for
    none: aggregates), ``ranges`` per dimension (inclusive ``(lo, hi)``; None bounds of
    string dimensions reach the end of the non-empty domain)."""
    from ..query import Query as LowQuery

    inner = array._readable()
    q = LowQuery(inner, fields=names, layout=_layout(array, order), condition=_cond_text(cond))
    ned = None
    for i, (d, rs) in enumerate(zip(array.schema.domain, ranges)):
        for lo, hi in rs:
            if d.isvar:
                if lo is None and hi is None:
                    continue
                if lo is None or hi is None:
                    if ned is None:
                        ned = array.nonempty_domain() or ()
                    if not ned:
                        continue
                    lo = ned[i][0] if lo is None else lo
                    hi = ned[i][1] if hi is None else hi
            q.add_range(i, _raw(d, lo), _raw(d, hi))
    return q


def _raw(d, v):
    if d.dtype.kind in "Mm" and not isinstance(v, (int, np.integer)):
        return np.datetime64(v).astype(d.dtype)
    return v.item() if isinstance(v, np.generic) and d.dtype.kind not in "Mm" else v


def _range_len(d, lo, hi) -> int:
    return _i(hi) - _i(lo) + 1


class Query:
    """``A.query(...)`` and plain ``A[...]``: which fields, which order, which condition."""

    def __init__(self, array, attrs=None, cond=None, dims=None, coords=None, order=None,
                 index_col=True, has_coords=False, use_arrow=None, return_arrow=False,
                 return_incomplete=False):
        self.array = array
        sch = array.schema
        if order not in (None, "C", "F", "G", "U"):
            raise ValueError("order must be 'C' (TILEDB_ROW_MAJOR), 'F' (TILEDB_COL_MAJOR), "
                             "'G' (TILEDB_GLOBAL_ORDER), or 'U' (TILEDB_UNORDERED)")
        self.order = order
        if attrs is not None:
            for a in attrs:
                if isinstance(a, str) and not sch.has_attr(a) and not sch.domain.has_dim(a):
                    raise TileDBError(f"Selected attribute does not exist: '{a}'")
        self.attrs = array._attr_names(attrs)
        if has_coords and dims not in (None, False):
            raise ValueError("Cannot pass both dims and has_coords=True to Query")
        if dims is not None and coords is not None:
            raise ValueError("Cannot pass both dims and coords=True/False")
        if has_coords:
            coords = True
        self.explicit = attrs is not None or dims is not None or coords is not None
        if dims is False:
            self.dims = []
        elif dims is True:
            self.dims = [d.name for d in sch.domain]
        elif dims is not None:
            for x in dims:
                if not sch.domain.has_dim(x):
                    raise TileDBError(f"Selected dimension does not exist: '{x}'")
            self.dims = [sch.domain.dim(x).name for x in dims]
        elif coords is True or (coords is None and sch.sparse):
            self.dims = [d.name for d in sch.domain]
        elif coords:
            self.dims = [sch.domain.dim(x).name for x in coords]
        else:
            self.dims = []
        self.dims = [d for d in self.dims if d not in self.attrs]
        _cond_text(cond)
        self.cond = cond
        self.index_col = index_col
        self.has_coords = has_coords
        self.use_arrow = use_arrow
        self.return_arrow = return_arrow
        self.return_incomplete = return_incomplete
        self._last_stats = None

    def get_stats(self, print_out: bool = True, json: bool = False):
        """TileDB-Py's ``Query.get_stats``: the statistics of this query's last read ("" before
        any), as TileDB prints them or parsed with ``json``."""
        if self._last_stats is None:
            return ""
        out = (_stats.core_json if json else _stats.core_text)(*self._last_stats)
        if print_out:
            print(out)
            return None
        return out

    def _record(self, q, start: float, cells) -> None:
        """Keeps the statistics of the read ``q`` (begun at ``start``) that gave ``cells``."""
        n = len(next(iter(cells.values()))) if cells else 0
        self._last_stats = _stats.read_stats(q.stats, time.perf_counter() - start, n)
        _stats.record(*self._last_stats)

    @property
    def multi_index(self):
        return MultiRangeIndexer(self.array, self)

    @property
    def df(self):
        return DataFrameIndexer(self.array, self)

    def agg(self, aggs):
        """TileDB-Py's ``Query.agg``: one operator, a list of them (for every attribute) or
        a dict attribute -> operator(s)."""
        return Aggregation(self, _agg_map(self.array.schema, aggs))

    def submit(self):
        return self[:]

    def __getitem__(self, selection):
        return self._getitem(selection)

    def _getitem(self, selection, enum_values=False):
        """``[...]``; ``enum_values``: enumerated attributes as their values (TileDB-Py's
        ``A[...]``, unlike its ``A.query(...)[...]``)."""
        if self.return_arrow:
            raise TileDBError("`return_arrow=True` requires .df indexer`")
        ranges, drop, steps = _getitem_ranges(self.array, selection)
        res = self._read(ranges, drop, steps, enum_values=enum_values)
        sch = self.array.schema
        if not sch.sparse and len(self.attrs) == 1 and not self.dims:
            # TileDB-Py: the bare array for a view attribute or a lone anonymous one
            if self.array.view_attr is not None or (sch.nattr == 1 and sch.attr(0).isanon):
                return res[self.attrs[0]]
        return res

    def _names(self, multi: bool) -> list:
        if self.array.schema.sparse and not multi:
            return list(self.attrs) + list(self.dims)
        return list(self.dims) + list(self.attrs)

    def _read_batches(self, ranges, enum_values=True):
        """``multi_index`` reads of a sparse array in batches (``return_incomplete``): one
        OrderedDict of the fields per batch, each buffer ``py.init_buffer_bytes`` bytes
        (enumerated attributes as their values, or codes unless ``enum_values``)."""
        a = self.array
        names = self._names(True)
        if not names:
            yield OrderedDict()
            return
        q = low_level_query(a, names, ranges, self.order, self.cond)
        start = time.perf_counter()
        for cells in q.read_batches(_buffer_bytes(a)):
            self._record(q, start, cells)
            with _stats.timing("buffer_conversion_time"):
                out = OrderedDict((n, _convert(a, n, cells[n])) for n in names)
                if enum_values:
                    out = _enum_values(a, out)
            yield out
            start = time.perf_counter()

    def _estimate(self, ranges):
        """TileDB-Py's ``estimated_result_sizes`` of a read of ``ranges``: name ->
        (offsets bytes, data bytes). Computed exactly, by a pass over the cells in batches
        of ``py.init_buffer_bytes`` (the library has no size estimate of its own)."""
        a = self.array
        names = self._names(True)
        if not names:
            return OrderedDict()
        q = low_level_query(a, names, ranges, self.order, self.cond)
        sizes = q.result_sizes(_buffer_bytes(a))
        return OrderedDict((n, (8 * sizes[n][0] if _isvar(a, n) else 0, sizes[n][1]))
                           for n in names)

    def _read(self, ranges, drop=(), steps=None, multi=False, enum_values=False):
        """Reads the cells of ``ranges`` (per dimension, inclusive ``(lo, hi)`` pairs): a dict
        name -> array (dense: shaped by the ranges, concatenated per dimension in the order
        given; sparse: the cells inside them, filtered by the condition)."""
        a = self.array
        sch = a.schema
        names = self._names(multi)
        if not names:
            return OrderedDict()
        q = low_level_query(a, names, ranges, self.order, self.cond)
        start = time.perf_counter()
        cells = q.read()
        self._record(q, start, cells)
        with _stats.timing("buffer_conversion_time"):
            out = self._shape(cells, names, ranges, drop, steps, multi)
            return _enum_values(a, out) if enum_values else out

    def _shape(self, cells, names, ranges, drop, steps, multi):
        """The cells of a read as TileDB-Py returns them (see :meth:`_read`)."""
        a = self.array
        sch = a.schema
        out = OrderedDict()
        if sch.sparse:
            for n in names:
                out[n] = _convert(a, n, cells[n])
            return out
        shape = tuple(sum(_range_len(d, lo, hi) for lo, hi in rs) if rs else
                      _range_len(d, *d.domain) for d, rs in zip(sch.domain, ranges))
        if multi:
            # TileDB-Py: 1-D results as they come, else reshaped (C order, as its buffers)
            for n in names:
                v = _convert(a, n, cells[n])
                out[n] = v if len(shape) == 1 else v.reshape(shape + v.shape[1:])
            return out
        if self.order == "G":
            # TileDB-Py: a global-order dense read is the linear buffer as read
            for n in names:
                out[n] = _convert(a, n, cells[n])
            return out
        fortran = self.order == "F"
        for n in names:
            v = _convert(a, n, cells[n])
            v = v.reshape(shape + v.shape[1:], order="F" if fortran else "C")
            if steps and any(steps):
                v = v[tuple(slice(None, None, st) for st in steps)]
            if drop:
                v = v.reshape(tuple(s for k, s in enumerate(v.shape) if k not in drop) +
                              v.shape[len(shape):])
            out[n] = v
        return out


def _enum_values(array, out):
    """TileDB-Py's ``A[...]`` and ``multi_index`` give an enumerated attribute's values, not
    its codes (a null cell stays masked; codes index the values as numpy indexes)."""
    sch = array.schema
    for n, v in out.items():
        if not sch.has_attr(n) or sch.attr(n).enum_label is None:
            continue
        values = np.asarray(array.enum(sch.attr(n).enum_label).values())
        codes = np.asarray(np.ma.getdata(v)).astype(np.int64)
        mask = np.ma.getmaskarray(v) if isinstance(v, np.ma.MaskedArray) else None
        valid = codes if mask is None else codes[~mask]
        bad = valid[(valid < -len(values)) | (valid >= len(values))]
        if bad.size:
            raise IndexError(f"attribute '{n}': code {int(bad[0])} is outside its enumeration "
                             f"of {len(values)} values")
        if mask is not None:
            codes = np.where(mask, 0, codes)
        mapped = values[codes] if len(values) else np.empty(codes.shape, values.dtype)
        if mapped.dtype.kind in "SU" and mapped.size:
            mapped = np.array(mapped.tolist(), dtype=mapped.dtype.kind)  # as narrow as read
        out[n] = np.ma.array(mapped, mask=mask) if mask is not None else mapped
    return out


def _agg_map(schema, aggs):
    attrs = [schema.attr(i).name for i in range(schema.nattr)]
    if isinstance(aggs, dict):
        return {k: (v,) if isinstance(v, str) else tuple(v) for k, v in aggs.items()}
    if isinstance(aggs, str):
        return {k: (aggs,) for k in attrs}
    if isinstance(aggs, (list, tuple)):
        return {k: tuple(aggs) for k in attrs}
    raise TypeError(f"agg takes a str, a sequence of str or a dict, not {type(aggs).__name__}")


_AGG_OPS = ("sum", "min", "max", "mean", "count", "null_count")


class Aggregation:
    """TileDB-Py's ``Aggregation`` (``A.query(...).agg(...)``): ``[...]`` and
    ``.multi_index[...]`` compute the aggregates over the selection and condition."""

    def __init__(self, query: Query, attr_to_aggs: dict):
        self.query = query
        self.attr_to_aggs = attr_to_aggs

    def __getitem__(self, selection):
        ranges, _, _ = _getitem_ranges(self.query.array, selection)
        return self._compute(ranges)

    @property
    def multi_index(self):
        return _AggMultiIndex(self)

    @property
    def df(self):
        raise NotImplementedError(".df indexer not supported for Aggregations")

    def _compute(self, ranges):
        a = self.query.array
        sch = a.schema
        pairs = []
        for attr, ops in self.attr_to_aggs.items():
            if not sch.has_attr(attr):
                raise TileDBError(f"Attribute {attr} does not exist in the array")
            f = sch.attr(attr)
            for op in ops:
                if op not in _AGG_OPS:
                    raise TileDBError(f"Invalid aggregate operation: {op!r} (one of "
                                      f"{', '.join(_AGG_OPS)})")
                if op == "null_count" and not f.isnullable:
                    raise TileDBError(f"Cannot perform null_count on non-nullable attribute "
                                      f"'{attr}'")
                if op not in ("count", "null_count") and (
                        f.isvar or f.ncells != 1 or f._dt.tiledb_type not in _AGG_TYPES):
                    raise TileDBError(f"the {op} aggregate of attribute '{attr}' "
                                      f"({f._dt.tiledb_type}{', var' if f.isvar else ''}) is "
                                      "not supported: TileDB-Py computes it on numbers only")
                pairs.append((op, attr))
        q = low_level_query(a, None, ranges, self.query.order, self.query.cond)
        start = time.perf_counter()
        values = q.aggregate([(op, None if op == "count" else attr) for op, attr in pairs])
        self.query._record(q, start, None)
        result = {}
        for op, attr in pairs:
            label = "count" if op == "count" else f"{op}({attr})"
            result.setdefault(attr, {})[op] = _agg_value(sch.attr(attr), op, values[label])
        if len(result) == 1:
            result = next(iter(result.values()))
            if len(result) == 1:
                result = next(iter(result.values()))
        return result


_AGG_TYPES = ("INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64",
              "FLOAT32", "FLOAT64")


def _agg_value(attr, op, v):
    """An aggregate as TileDB-Py returns it (Python scalars): counts and integer sums int,
    float sums and means float; a value that does not exist (a nullable attribute without
    a valid cell; min/max of no cell) None for integer attributes, NaN for others."""
    if op in ("count", "null_count"):
        return int(v)
    integer = attr.dtype.kind in "iu"
    if v is None:
        if attr.isnullable or op in ("min", "max"):
            return None if integer else float("nan")
        return float("nan") if op == "mean" or not integer else 0
    return v.item() if isinstance(v, np.generic) else v


class _AggMultiIndex:
    """``Aggregation.multi_index[...]``: the aggregates over ``multi_index`` ranges."""

    def __init__(self, agg: Aggregation):
        self.agg = agg

    def __getitem__(self, selection):
        if selection is EmptyRange:
            return _empty(self.agg.query.array, self.agg.query)
        return self.agg._compute(_mi_ranges(self.agg.query.array, selection))


def _i(x):
    if isinstance(x, (np.datetime64, np.timedelta64)):
        return int(x.astype(np.int64))
    return int(x)


class MultiRangeIndexer:
    """``A.multi_index[...]``: inclusive ranges, lists of ranges and points per dimension; an
    OrderedDict of the fields (dimensions first). Dense results take the shape of the ranges
    when the array has several dimensions."""

    def __init__(self, array, query: Query = None):
        if query is not None and query.return_arrow:
            raise TileDBError("`return_arrow=True` requires .df indexer`")
        self.array = array
        self.query = query if query is not None else Query(array)

    def __getitem__(self, selection):
        with _stats.timing("getitem_time"):
            return self._getitem(selection)

    def _getitem(self, selection):
        ranges = _mi_ranges(self.array, selection)
        if self.query.return_incomplete:
            return IncompleteResults(self.array, self.query, ranges, lambda res: res)
        if ranges is None:
            return _empty(self.array, self.query)
        return self.query._read(ranges, multi=True, enum_values=True)


class IncompleteResults:
    """``A.query(return_incomplete=True).multi_index[...]`` (and ``.df[...]``): iterating
    reads the selection in batches, each of at most ``py.init_buffer_bytes`` bytes per
    buffer (TileDB-Py's incomplete queries), yielding one result (an OrderedDict, or a
    DataFrame for ``.df``) per batch; an empty selection yields one empty result."""

    def __init__(self, array, query, ranges, finish, enum_values=True):
        self.array = array
        self.query = query
        self.ranges = ranges
        self._finish = finish
        self._enum_values = enum_values

    def estimated_result_sizes(self):
        """TileDB-Py's ``estimated_result_sizes``: field name -> ``EstimatedResultSize``
        (offsets bytes, data bytes)."""
        from .multirange_indexing import EstimatedResultSize

        if self.ranges is None:
            return {n: EstimatedResultSize(0, 0) for n in _empty(self.array, self.query)}
        return {n: EstimatedResultSize(o, d)
                for n, (o, d) in self.query._estimate(self.ranges).items()}

    def __iter__(self):
        if self.ranges is None:
            yield self._finish(_empty(self.array, self.query))
            return
        for res in self.query._read_batches(self.ranges, self._enum_values):
            yield self._finish(res)


def _buffer_bytes(array) -> int:
    """TileDB-Py's ``py.init_buffer_bytes`` of the array's context (default 10 MiB)."""
    v = array.ctx.config().get("py.init_buffer_bytes")
    if v is None:
        return 10 * 1024 ** 2
    try:
        n = int(v)
    except ValueError:
        raise TileDBError(f"py.init_buffer_bytes must be a number of bytes, not {v!r}") from None
    if n < 1:
        raise TileDBError(f"py.init_buffer_bytes must be positive, not {n}")
    return n


def _isvar(array, name) -> bool:
    sch = array.schema
    return (sch.attr(name) if sch.has_attr(name) else sch.domain.dim(name)).isvar


def _empty(array, q):
    """The fields of a read of nothing (TileDB-Py's ``_get_empty_results``)."""
    out = OrderedDict()
    sch = array.schema
    for n in [d.name for d in sch.domain if d.name in q.dims or d.name in q.attrs] + [
            a for a in q.attrs if sch.has_attr(a)]:
        f = sch.attr(n) if sch.has_attr(n) else sch.domain.dim(n)
        out[n] = np.array([], dtype=f.dtype)
    return out


class DataFrameIndexer:
    """``A.df[...]``: ``multi_index`` as a pandas DataFrame (dimensions, then attributes)."""

    def __init__(self, array, query: Query = None):
        sch = array.schema
        names = query.attrs if query is not None else [sch.attr(i).name
                                                        for i in range(sch.nattr)]
        # TileDB-Py's arrow reads have no list columns
        can_arrow = not any((f.isvar or len(f.dtype) > 1) and f.dtype.kind not in "SU"
                            for f in (sch.attr(n) for n in names if sch.has_attr(n)))
        use_arrow = query.use_arrow if query is not None else None
        if use_arrow and not can_arrow:
            raise TileDBError(
                "Multi-value attributes are not currently supported when use_arrow=True. "
                "This includes all variable-length attributes and fixed-length attributes "
                "with more than one value. Use `query(use_arrow=False)`.")
        # TileDB-Py: arrow unless asked otherwise, when the columns allow it
        if use_arrow is None:
            import importlib.util

            use_arrow = can_arrow and importlib.util.find_spec("pyarrow") is not None
        self._arrow = bool(use_arrow)
        self.array = array
        self.query = query

    def __getitem__(self, selection):
        with _stats.timing("getitem_time"):
            return self._getitem(selection)

    def _getitem(self, selection):
        a = self.array
        q = self.query
        if q is None:
            q = Query(a, coords=True)
        elif not q.explicit:
            q = Query(a, coords=True, order=q.order, cond=q.cond, index_col=q.index_col,
                      use_arrow=q.use_arrow, return_arrow=q.return_arrow,
                      return_incomplete=q.return_incomplete)
        ranges = _mi_ranges(a, selection)
        arrow = self._arrow
        if q.return_incomplete:
            return IncompleteResults(a, q, ranges,
                                     lambda res: _frame(a, q, res, arrow, ranges is not None),
                                     enum_values=False)
        if ranges is None:
            return _frame(a, q, _empty(a, q), arrow, False)
        return _frame(a, q, q._read(ranges, multi=True, enum_values=False), arrow)


def _frame(a, q, res, arrow, table=True):
    """A ``multi_index`` result as ``.df`` gives it: a DataFrame (dimensions, then
    attributes; the index from the array's pandas metadata), or with ``return_arrow`` (and
    ``table``: TileDB-Py gives an empty selection as a DataFrame) a pyarrow Table of the
    columns. ``arrow``: converted as TileDB-Py's arrow reads convert (ascii dimensions as
    str, nullable integers as pandas integer arrays, days as dates)."""
    import pandas as pd

    sch = a.schema
    if not sch.sparse and sch.ndim > 1:
        # a dense box's cells as rows (C order, as TileDB-Py's row-major buffers)
        res = OrderedDict((n, v.reshape((-1,) + v.shape[sch.ndim:])) for n, v in res.items())
    cols = OrderedDict()
    for d in sch.domain:
        if d.name in res:
            v = res[d.name]
            if arrow and d.isvar and d._dt.tiledb_type == "STRING_ASCII":
                # TileDB-Py's arrow reads give ascii dimensions as str
                v = np.array([b.decode("utf-8", "surrogateescape") if isinstance(b, bytes)
                              else b for b in v], dtype=object)
            cols[d.name] = v
    for n, v in res.items():
        if n in cols:
            continue
        if sch.has_attr(n) and sch.attr(n).enum_label is not None:
            # as TileDB-Py's arrow reads: an enumerated attribute is categorical (a
            # null cell NA)
            e = a.enum(sch.attr(n).enum_label)
            codes = np.asarray(np.ma.getdata(v), dtype=np.int64)
            if isinstance(v, np.ma.MaskedArray):
                codes = np.where(np.ma.getmaskarray(v), -1, codes)
            # (unordered whatever the enumeration says: TileDB-Py's dictionary arrays are)
            v = pd.Categorical.from_codes(codes, categories=e.values())
        elif isinstance(v, np.ma.MaskedArray):
            v = _masked_to_pandas(v, arrow)
        elif v.ndim > 1:
            v = list(v)
        elif (arrow and v.dtype.kind == "M"
                and np.datetime_data(v.dtype)[0] == "D"):
            v = _days_as_dates(v)
        cols[n] = v
    df = pd.DataFrame(cols)
    if q.return_arrow and table:
        import pyarrow as pa

        # TileDB-Py's arrow table: the columns as read, no index
        return pa.Table.from_pandas(df, preserve_index=False)
    from ._pandas import update_df_from_meta

    with _stats.timing("pandas_index_update_time"):
        return update_df_from_meta(df, a.meta, q.index_col)


def _masked_to_pandas(v, arrow=True):
    """A nullable attribute's cells as a pandas column: NaN for null floats; nullable
    integers (as TileDB-Py's arrow reads) a pandas integer array; else objects, None."""
    if arrow and v.dtype.kind in "iu":
        import pandas as pd

        return pd.arrays.IntegerArray(np.ma.getdata(v), np.ma.getmaskarray(v).copy())
    if v.dtype.kind == "f":
        return v.filled(np.nan)
    out = v.astype(object)
    return np.where(np.ma.getmaskarray(v), None, np.ma.getdata(out))


def _days_as_dates(v):
    """A datetime64[D] column as TileDB-Py's arrow reads give it: ``datetime.date`` objects
    (through arrow's date32: days beyond its int32 fail, as TileDB-Py's arrow adapter;
    years beyond 9999 raise ValueError)."""
    import pyarrow as pa

    days = v.astype(np.int64)
    if days.size and (days.min() < np.iinfo(np.int32).min or days.max() > np.iinfo(np.int32).max):
        raise TileDBError("[TileDB-Arrow] Non-zero data detected in the memory buffer at "
                          "position that will be overwritten (datetime64[D] days beyond "
                          "arrow's date32)")
    return pa.array(days.astype(np.int32), type=pa.date32()).to_pandas(date_as_object=True)
