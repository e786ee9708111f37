"""TileDB-Py's read indexing over tdbfilter's one-box reads: ``A[...]`` (half-open integer
slices over domain coordinates, inclusive float/datetime ones), ``A.query(...)``,
``A.multi_index[...]`` (inclusive, lists of ranges and points) and ``A.df[...]``.

The C API reads one box per call: several ranges are read as their bounding box and
selected in numpy (dense: ``np.ix_`` over the ranges in the order given, as TileDB
concatenates them; sparse: the coordinates filtered), which is exact.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from ..errors import TdbfilterError as TileDBError
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
    ranges, drop = [], []
    for i, s in enumerate(sel):
        d = dom.dim(i)
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
                s = slice(s, s)
                ranges.append([(_cast(d, s.start), _cast(d, s.stop))])
                continue
        if not isinstance(s, slice):
            raise IndexError(f"invalid index type: {type(s)!r}")
        if s.step is not None:
            if array.schema.sparse:
                raise IndexError("steps are not supported for sparse arrays")
            raise IndexError("steps are not supported by tdbfilter's TileDB-Py API yet")
        start, stop = s.start, s.stop
        if kind in "iu":
            for x in (start, stop):
                if x is not None and isinstance(x, (float, np.floating)):
                    raise IndexError("cannot index integral domain dimension with floating "
                                     "point slice")
                if x is not None and not isinstance(x, _INT):
                    raise IndexError("cannot index integral domain dimension with "
                                     f"non-integral slice (dtype: {type(x)})")
        if kind == "M":
            for x in (start, stop):
                if x is not None and not isinstance(x, np.datetime64):
                    raise IndexError("cannot index datetime dimension with non-datetime "
                                     "interval")
        if start is None:
            start = lo_dom
        elif kind not in "M" and start < 0 and kind in "iu":
            start = int(start) + int(hi_dom) + 1
        if start is not None and start < lo_dom:
            raise IndexError("index out of bounds <todo>")
        if stop is None:
            stop = hi_dom if kind in "fM" else int(hi_dom) + 1
        else:
            if kind in "iu" and stop < 0:
                stop = int(stop) + int(hi_dom)
            if stop > hi_dom:
                stop = hi_dom if kind in "fM" else int(hi_dom) + 1
        if kind in "fM":
            ranges.append([(_cast(d, start), _cast(d, stop))])
        else:
            ranges.append([(int(start), int(stop) - 1)])
    return ranges, drop


def _b(x):
    if x is None:
        return None
    return x.encode() if isinstance(x, str) else bytes(x)


def _cast(d, v):
    if d.dtype.kind == "M":
        return np.datetime64(v).astype(d.dtype) if not isinstance(v, _INT) else \
            np.datetime64(int(v), np.datetime_data(d.dtype)[0])
    return d.dtype.type(v)


def _mi_ranges(array, selection):
    """``multi_index`` ranges: per dimension a list of inclusive ``(lo, hi)``."""
    dom = array.schema.domain
    if selection is EmptyRange or (isinstance(selection, tuple) and any(
            s is EmptyRange for s in selection)):
        return None
    sel = _as_tuple(selection, dom.ndim)
    out = []
    for i, s in enumerate(sel):
        d = dom.dim(i)
        items = s if isinstance(s, list) else [s]
        if isinstance(s, np.ndarray):
            items = list(s)
        rs = []
        for it in items:
            if isinstance(it, slice):
                if it.step is not None:
                    raise ValueError("Stepped slice ranges are not supported")
                if d.isvar:
                    rs.append((_b(it.start), _b(it.stop)))
                    continue
                lo_dom, hi_dom = _dim_bounds(array, i)
                lo = lo_dom if it.start is None else it.start
                hi = hi_dom if it.stop is None else it.stop
                rs.append((_cast(d, lo), _cast(d, hi)))
            elif isinstance(it, tuple):
                if len(it) != 2:
                    raise TileDBError("multi_index ranges are (start, end) pairs")
                rs.append(((_b(it[0]), _b(it[1])) if d.isvar else
                           (_cast(d, it[0]), _cast(d, it[1]))))
            else:
                rs.append(((_b(it), _b(it)) if d.isvar else (_cast(d, it), _cast(d, it))))
        out.append(rs)
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
        if tname in ("CHAR", "STRING_ASCII") or tname == "BLOB" or dtype.kind == "S":
            out = np.empty(len(values), dtype=object)
            for k, v in enumerate(values):
                out[k] = v.encode("utf-8", "surrogateescape") if isinstance(v, str) else (
                    b"" if v is None else v)
            if isinstance(values, np.ma.MaskedArray) or any(v is None for v in values):
                pass
            return out
        return values
    if isinstance(values, np.ma.MaskedArray):
        data = _fixed(np.ma.getdata(values), dtype)
        mask = np.ma.getmaskarray(values)
        if mask.ndim == 2:
            mask = mask[:, 0]
        return np.ma.array(data, mask=mask)
    return _fixed(values, dtype)


def _fixed(values, dtype):
    if values.ndim == 2 and dtype.kind in "Vc":
        return np.ascontiguousarray(values).view(dtype).reshape(values.shape[0])
    if dtype.kind == "S" and values.dtype != dtype and dtype.itemsize:
        return values.view(dtype)
    return values


def read_box(array, names, ranges):
    """Reads ``names`` over the bounding box of ``ranges`` (inclusive per dimension; string
    dimensions whole) and returns ``(cells by name, box)``."""
    inner = array._readable()
    dom = array.schema.domain
    box = []
    for d, rs in zip(dom, ranges):
        if d.isvar:
            box.append(None)
            continue
        lo = min(r[0] for r in rs)
        hi = max(r[1] for r in rs)
        box.append((lo, hi))
    if any(b is None for b in box):
        sub = None  # string dimensions: the C read takes no ranges there (sparse only)
    else:
        sub = [tuple(_raw(d, x) for x in b) for d, b in zip(dom, box)]
    if not array.schema.sparse and sub is not None:
        for (lo, hi), d in zip(box, dom):
            dlo, dhi = d.domain
            if lo < dlo or hi > dhi:
                raise TileDBError(f"Subarray out of bounds. subarray: [{lo}, {hi}], domain: "
                                  f"[{dlo}, {dhi}] on dimension '{d.name}'")
    raw = inner.read(list(names), sub)
    return {n: raw[n] for n in names}, box


def _raw(d, v):
    if d.dtype.kind in "Mm":
        return np.datetime64(v).astype(d.dtype)
    return v.item() if isinstance(v, np.generic) else v


def _sparse_mask(array, cells, ranges):
    n = None
    mask = None
    for d, rs in zip(array.schema.domain, ranges):
        c = cells[d.name]
        if n is None:
            n = len(c)
        m = np.zeros(len(c), dtype=bool)
        if d.isvar:
            cb = np.array([x.encode() if isinstance(x, str) else x for x in c], dtype=object)
            for lo, hi in rs:
                mm = np.ones(len(c), dtype=bool)
                if lo is not None:
                    mm &= np.array([x >= lo for x in cb], dtype=bool)
                if hi is not None:
                    mm &= np.array([x <= hi for x in cb], dtype=bool)
                m |= mm
        else:
            cv = np.asarray(c)
            for lo, hi in rs:
                m |= (cv >= lo) & (cv <= hi)
        mask = m if mask is None else mask & m
    return mask


class Query:
    """``A.query(...)`` and plain ``A[...]``: which fields, which order, which condition."""

    def __init__(self, array, attrs=None, cond=None, dims=None, coords=None, order=None,
                 index_col=True):
        self.array = array
        sch = array.schema
        if order not in (None, "C", "F", "G", "U"):
            raise ValueError("order must be 'C' (TILEDB_ROW_MAJOR), 'F' (TILEDB_COL_MAJOR), "
                             "'G' (TILEDB_GLOBAL_ORDER), or 'U' (TILEDB_UNORDERED)")
        self.order = order
        self.attrs = array._attr_names(attrs)
        if dims is not None and coords is not None:
            raise ValueError("Cannot pass both dims and coords=True/False")
        self.explicit = attrs is not None or dims is not None or coords is not None
        if dims is False:
            self.dims = []
        elif dims is not None:
            self.dims = [sch.domain.dim(x).name for x in dims]
        elif coords is True or (coords is None and sch.sparse):
            self.dims = [d.name for d in sch.domain]
        else:
            self.dims = []
        self.dims = [d for d in self.dims if d not in self.attrs]
        self.cond = cond
        self.index_col = index_col

    @property
    def multi_index(self):
        return MultiRangeIndexer(self.array, self)

    @property
    def df(self):
        return DataFrameIndexer(self.array, self)

    def __getitem__(self, selection):
        ranges, drop = _getitem_ranges(self.array, selection)
        res = self._read(ranges, drop)
        sch = self.array.schema
        if not sch.sparse and not self.explicit and len(self.attrs) == 1 and not self.dims:
            if self.array.view_attr is not None or sch.nattr == 1:
                return res[self.attrs[0]]
        return res

    def _read(self, ranges, drop=(), multi=False):
        """Reads the cells of ``ranges``: a dict name -> array (dense: shaped by the ranges;
        sparse: the cells inside them)."""
        a = self.array
        sch = a.schema
        names = list(self.attrs)
        if self.cond is not None:
            from ._qc import condition_fields

            extra = [n for n in condition_fields(self.cond, sch) if n not in names]
        else:
            extra = []
        if sch.sparse:
            dimnames = [d.name for d in sch.domain]
            fields = names + [n for n in extra if n not in dimnames] + dimnames
            cells, _ = read_box(a, fields, ranges)
            mask = _sparse_mask(a, cells, ranges)
            if self.cond is not None:
                from ._qc import evaluate

                mask &= evaluate(self.cond, sch, cells)
            out = OrderedDict()
            order = None
            if self.order in ("C", "F"):
                keys = [np.asarray(cells[n])[mask] for n in dimnames]
                if self.order == "C":
                    keys = keys[::-1]
                order = np.lexsort(keys) if keys and all(k.dtype != object for k in keys) \
                    else None
            for n in names + self.dims:
                v = _convert(a, n, cells[n])[mask]
                out[n] = v if order is None else v[order]
            return out
        # dense
        fields = names + [n for n in extra if n not in names]
        cells, box = read_box(a, fields, ranges)
        shape = tuple(int(hi) - int(lo) + 1 if sch.domain.dim(i).dtype.kind in "iu" else
                      int((hi - lo).astype(np.int64)) + 1 for i, (lo, hi) in enumerate(box))
        idx = []
        simple = all(len(rs) == 1 for rs in ranges)
        for (blo, _), rs, d in zip(box, ranges, sch.domain):
            parts = [np.arange(_i(lo) - _i(blo), _i(hi) - _i(blo) + 1) for lo, hi in rs]
            idx.append(np.concatenate(parts) if parts else np.zeros(0, np.int64))
        out = OrderedDict()
        cmask = None
        if self.cond is not None:
            from ._qc import evaluate

            flat = {n: _convert(a, n, cells[n]) for n in fields}
            for i, d in enumerate(sch.domain):
                flat[d.name] = _coords(sch, box, i, shape)
            cmask = evaluate(self.cond, sch, flat)
        for n in names:
            v = _convert(a, n, cells[n])
            if cmask is not None:
                v = _fill_out(a, n, v, cmask)
            v = v.reshape(shape + v.shape[1:])
            if not simple:
                v = v[np.ix_(*idx)]
            if drop:
                v = v.reshape(tuple(s for k, s in enumerate(v.shape) if k not in drop))
            out[n] = v
        for n in self.dims:
            i = [d.name for d in sch.domain].index(n)
            c = _coords(sch, box, i, shape).reshape(shape)
            if not simple:
                c = c[np.ix_(*idx)]
            out[n] = c.reshape(-1) if multi else c
        if self.order == "F":
            for n in list(out):
                out[n] = np.asfortranarray(out[n])
        return out


def _fill_out(a, name, v, keep):
    """Dense cells failing a condition hold the attribute's fill value (TileDB's dense query
    condition result)."""
    attr = a.schema.attr(name)
    v = v.copy()
    fill = attr.fill
    if isinstance(v, np.ma.MaskedArray):
        v.mask = v.mask | ~keep
        return v
    if v.dtype == object:
        for k in np.nonzero(~keep)[0]:
            v[k] = fill
        return v
    v[~keep] = fill
    return v


def _i(x):
    if isinstance(x, np.datetime64):
        return int(x.astype(np.int64))
    return int(x)


def _coords(sch, box, i, shape):
    d = sch.domain.dim(i)
    lo, hi = box[i]
    vals = np.arange(_i(lo), _i(hi) + 1, dtype=np.int64)
    if d.dtype.kind == "M":
        vals = vals.astype(d.dtype)
    else:
        vals = vals.astype(d.dtype)
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    return vals[grids[i].reshape(-1)]


class MultiRangeIndexer:
    """``A.multi_index[...]``: inclusive ranges, lists of ranges and points per dimension; an
    OrderedDict of the fields."""

    def __init__(self, array, query: Query = None):
        self.array = array
        self.query = query if query is not None else Query(array)

    def __getitem__(self, selection):
        ranges = _mi_ranges(self.array, selection)
        q = self.query
        sch = self.array.schema
        if ranges is None:
            return _empty(self.array, q)
        if not q.explicit and not sch.sparse:
            q = Query(self.array, attrs=q.attrs if q.explicit else None, coords=True,
                      order=q.order, cond=q.cond)
        res = q._read(ranges, multi=True)
        if not sch.sparse and not q.explicit:
            pass
        return res


def _empty(array, q):
    out = OrderedDict()
    sch = array.schema
    dims = q.dims if (q.explicit or sch.sparse) else [d.name for d in sch.domain]
    for n in q.attrs + dims:
        f = sch.attr(n) if sch.has_attr(n) else sch.domain.dim(n)
        dt = object if f.isvar else f.dtype
        out[n] = np.array([], dtype=dt)
    return out


class DataFrameIndexer:
    """``A.df[...]``: ``multi_index`` as a pandas DataFrame (dimensions, then attributes)."""

    def __init__(self, array, query: Query = None):
        self.array = array
        self.query = query

    def __getitem__(self, selection):
        import pandas as pd

        a = self.array
        sch = a.schema
        q = self.query
        if q is None:
            q = Query(a, coords=True)
        elif not q.explicit:
            q = Query(a, coords=True, order=q.order, cond=q.cond)
        res = MultiRangeIndexer(a, q)[selection]
        cols = OrderedDict()
        for d in sch.domain:
            if d.name in res:
                cols[d.name] = res[d.name]
        for n, v in res.items():
            if n not in cols:
                if isinstance(v, np.ma.MaskedArray):
                    v = _masked_to_pandas(v)
                elif v.ndim > 1:
                    v = list(v)
                cols[n] = v
        df = pd.DataFrame(cols)
        if q.index_col is not True and q.index_col not in (None, False):
            df = df.set_index(q.index_col)
        return df


def _masked_to_pandas(v):
    if v.dtype.kind == "f":
        return v.filled(np.nan)
    out = v.astype(object)
    return np.where(np.ma.getmaskarray(v), None, np.ma.getdata(out))
