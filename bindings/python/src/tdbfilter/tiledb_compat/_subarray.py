"""TileDB-Py's ``tiledb.Subarray`` (ranges per dimension) and the reads and writes that take
one: ``A.read_subarray(subarray)`` (through the C query handle, ``tdb_query_*``, which reads
several ranges per dimension as TileDB does) and ``A.write_subarray(subarray, values)``.

Dimension labels are not implemented by tdbfilter: label ranges raise :class:`TileDBError`
naming the feature."""

from __future__ import annotations

from collections import OrderedDict
from ctypes import byref, c_void_p
from typing import Optional

import numpy as np

from .._ffi import call as _call
from .._ffi import lib
from ..array import _take_result, _to_numpy
from ..errors import TdbfilterError as TileDBError
from ._types import VAR_NUM

_LABELS = "dimension labels are not supported by tdbfilter's TileDB-Py API"

_ROW_MAJOR, _UNORDERED = 0, 3


def _labels_unsupported(what: str):
    return TileDBError(f"{what}: {_LABELS}")


class Subarray:
    """Ranges over the dimensions of an open array (TileDB-Py's ``tiledb.Subarray``). A
    dimension without a range added spans its domain (one range); the first range added
    replaces that default. Integer ranges adjacent to the last one of their dimension merge
    with it, as TileDB coalesces them."""

    def __init__(self, array, ctx=None):
        self._array = array
        self._ctx = ctx
        self._ranges: list[Optional[list[tuple]]] = [None] * array.schema.ndim

    # -- dimensions ----------------------------------------------------------------------------
    def _dim_index(self, key) -> int:
        dom = self._array.schema.domain
        if isinstance(key, str):
            for i, d in enumerate(dom):
                if d.name == key:
                    return i
            raise TileDBError(f"Subarray: dimension '{key}' does not exist")
        if isinstance(key, bool) or not isinstance(key, (int, np.integer)):
            raise TypeError(f"invalid dimension key {key!r}: an index (int) or a name (str)")
        if not 0 <= int(key) < dom.ndim:
            raise TileDBError(f"C API: Dimension index {key} is out of bounds; valid indices "
                              f"are 0 to {dom.ndim - 1}")
        return int(key)

    def _value(self, d, v):
        """One bound of dimension ``d`` as a numpy scalar of its dtype (bytes for string
        dimensions); TileDBError naming the dimension's type when it does not convert."""
        dt = d.dtype
        if d.isvar:
            if isinstance(v, str):
                return v.encode()
            if isinstance(v, (bytes, np.bytes_)):
                return bytes(v)
            raise TileDBError(f"Failed to cast dim range bound {v!r} to dimension "
                              f"'{d.name}' (STRING_ASCII)")
        ok = False
        if dt.kind in "iu":
            ok = isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
            if ok:
                info = np.iinfo(dt)
                ok = info.min <= int(v) <= info.max
        elif dt.kind == "f":
            ok = isinstance(v, (int, float, np.integer, np.floating)) and \
                not isinstance(v, (bool, np.bool_))
        elif dt.kind == "M":
            if isinstance(v, np.datetime64):
                return v.astype(dt)
            ok = isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
            if ok:
                return np.datetime64(int(v), np.datetime_data(dt)[0])
        if not ok:
            raise TileDBError(f"Failed to cast dim range bound {v!r} to dimension "
                              f"'{d.name}' ({d._dt.tiledb_type})")
        return dt.type(v)

    def _domain(self, i: int):
        d = self._array.schema.domain.dim(i)
        cd = self._array.schema._current_domain
        if cd is not None and not cd.is_empty:
            return cd.ndrectangle.range(i)
        return d.domain

    def _add(self, i: int, rng) -> None:
        d = self._array.schema.domain.dim(i)
        try:
            lo, hi = rng
        except (TypeError, ValueError):
            raise TileDBError(f"Subarray: a range of dimension '{d.name}' is a (start, end) "
                              f"pair, not {rng!r}") from None
        lo, hi = self._value(d, lo), self._value(d, hi)
        if not d.isvar:
            if hi < lo:
                raise TileDBError(f"Subarray: Lower range bound {lo} cannot be larger than the "
                                  f"higher bound {hi} on dimension '{d.name}'")
            dlo, dhi = self._domain(i)
            if lo < dlo or hi > dhi:
                raise TileDBError(f"Subarray: Cannot add range to dimension '{d.name}'; Range "
                                  f"[{lo}, {hi}] is out of domain bounds [{dlo}, {dhi}]")
        elif lo > hi:
            raise TileDBError(f"Subarray: Lower range bound {lo!r} cannot be larger than the "
                              f"higher bound {hi!r} on dimension '{d.name}'")
        ranges = self._ranges[i]
        if ranges is None:
            self._ranges[i] = [(lo, hi)]
            return
        last_lo, last_hi = ranges[-1]
        if d.dtype.kind in "iuM" and not d.isvar and _int(lo) == _int(last_hi) + 1:
            ranges[-1] = (last_lo, hi)
        else:
            ranges.append((lo, hi))

    def add_dim_range(self, dim_idx, dim_range) -> None:
        """Adds the inclusive range ``(start, end)`` to dimension ``dim_idx`` (an index, as
        TileDB-Py takes it: a name is a TypeError)."""
        if isinstance(dim_idx, str):
            raise TypeError(f"add_dim_range: the dimension is an index (int), not {dim_idx!r}")
        self._add(self._dim_index(dim_idx), dim_range)

    def add_ranges(self, dim_ranges=None, label_ranges=None) -> None:
        """Adds, per dimension (in order), its ranges: a sequence of ``(start, end)`` pairs,
        or a numpy array of points (each a range of one value)."""
        if label_ranges:
            raise _labels_unsupported("Subarray.add_ranges(label_ranges=...)")
        if not dim_ranges:
            return
        if len(dim_ranges) > self._array.schema.ndim:
            raise TileDBError(f"Subarray: {len(dim_ranges)} dimensions of ranges given for an "
                              f"array of {self._array.schema.ndim}")
        for i, ranges in enumerate(dim_ranges):
            if isinstance(ranges, np.ndarray):
                for v in (ranges.tolist() if ranges.dtype.kind != "M" else list(ranges)):
                    self._add(i, (v, v))
                continue
            for r in ranges:
                if len(r) != 2:
                    raise TileDBError(f"Subarray: Unexpected range len != 2 ({r!r} on "
                                      f"dimension {i})")
                self._add(i, tuple(r))

    def copy_ranges(self, subarray: "Subarray", dims) -> None:
        """Copies ``subarray``'s ranges of the dimensions ``dims`` (indices)."""
        for i in dims:
            i = self._dim_index(i)
            src = subarray._ranges[i]
            self._ranges[i] = None if src is None else list(src)

    def _effective(self, i: int) -> list[tuple]:
        """Dimension ``i``'s ranges (its domain when none was added)."""
        if self._ranges[i] is not None:
            return self._ranges[i]
        d = self._array.schema.domain.dim(i)
        if d.isvar:
            return []
        return [tuple(self._domain(i))]

    def get_range(self, dim_idx: int, range_idx: int):
        """Range ``range_idx`` of dimension ``dim_idx``: ``[start, end, stride]`` (the stride is
        0: TileDB has none), ``[start, end]`` for string dimensions."""
        i = self._dim_index(dim_idx)
        ranges = self._effective(i)
        if not 0 <= range_idx < len(ranges):
            raise TileDBError("Subarray: Cannot get range; Invalid range index")
        lo, hi = ranges[range_idx]
        d = self._array.schema.domain.dim(i)
        if d.isvar:
            return [lo.decode(), hi.decode()]
        return [lo.item() if d.dtype.kind != "M" else lo, hi.item() if d.dtype.kind != "M"
                else hi, d.dtype.type(0).item() if d.dtype.kind != "M" else 0]

    def num_dim_ranges(self, key) -> int:
        """The number of ranges on dimension ``key`` (index or name)."""
        i = self._dim_index(key)
        return len(self._ranges[i]) if self._ranges[i] is not None else 1

    # -- dimension labels (not implemented) ---------------------------------------------------
    def add_label_range(self, label: str, label_range) -> None:
        raise _labels_unsupported("Subarray.add_label_range")

    def num_label_ranges(self, label: str) -> int:
        if not isinstance(label, str):
            raise TypeError(f"invalid type {type(label)} for label")
        raise _labels_unsupported("Subarray.num_label_ranges")

    def has_label_range(self, dim_idx) -> bool:
        """False: tdbfilter has no dimension labels, so no label ranges."""
        self._dim_index(dim_idx)
        return False

    # -- shape -------------------------------------------------------------------------------
    def shape(self):
        """The number of cells along each dimension of a dense array's result (None for
        sparse arrays)."""
        if self._array.schema.sparse:
            return None
        return tuple(sum(_int(hi) - _int(lo) + 1 for lo, hi in self._effective(i))
                     for i in range(self._array.schema.ndim))

    def __repr__(self) -> str:
        parts = []
        for i, d in enumerate(self._array.schema.domain):
            parts.append(f"{d.name}: {self._effective(i)!r}")
        return f"Subarray({', '.join(parts)})"


def _int(v) -> int:
    if isinstance(v, np.datetime64):
        return int(v.astype(np.int64))
    return int(v)


def _bound_bytes(d, v) -> bytes:
    if d.isvar:
        return bytes(v)
    if d.dtype.kind == "M":
        return np.array(_int(v), dtype=np.int64).tobytes()
    return np.array(v, dtype=d.dtype).tobytes()


def _check_subarray(array, subarray) -> None:
    if not isinstance(subarray, Subarray):
        raise TypeError(f"expected a tiledb.Subarray, not {type(subarray).__name__}")
    if subarray._array.uri != array.uri:
        raise TileDBError("the Subarray was made for another array "
                          f"('{subarray._array.uri}')")


def _field(schema, name):
    return schema.attr(name) if schema.has_attr(name) else schema.domain.dim(name)


def _convert(schema, name, raw):
    """A field's cells from the C result as TileDB-Py returns them."""
    f = _field(schema, name)
    tname, dtype = f._dt.tiledb_type, f.dtype
    values = _to_numpy(raw)
    if f._dt.ncells == VAR_NUM:
        if dtype.kind == "S" or tname in ("CHAR", "STRING_ASCII", "BLOB"):
            out = np.empty(len(values), dtype=object)
            for k, v in enumerate(values):
                out[k] = v.encode("utf-8", "surrogateescape") if isinstance(v, str) else v
            return out
        return values
    mask = None
    if isinstance(values, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(values)
        values = np.ma.getdata(values)
        if mask.ndim == 2:
            mask = mask[:, 0]
    if values.ndim == 2 and dtype.kind in "Vc":
        values = np.ascontiguousarray(values).view(dtype).reshape(values.shape[0])
    elif dtype.kind in "SMm" and values.dtype != dtype and dtype.itemsize:
        values = values.view(dtype)
    elif dtype.kind in "Mm" and values.dtype != dtype:
        values = values.view(dtype)
    return values if mask is None else np.ma.array(values, mask=mask)


def _query(array, names, subarray: Subarray, layout: int):
    """Reads ``names`` over ``subarray``'s ranges with the C query handle; returns the C
    results converted, by name."""
    inner = array._readable()
    L = lib()
    q = c_void_p()
    _call(L.tdb_query_create, inner._handle(), byref(q))
    try:
        _call(L.tdb_query_set_layout, q, layout)
        dom = array.schema.domain
        for i, ranges in enumerate(subarray._ranges):
            if ranges is None:
                continue
            d = dom.dim(i)
            for lo, hi in ranges:
                lo_b, hi_b = _bound_bytes(d, lo), _bound_bytes(d, hi)
                _call(L.tdb_query_add_range, q, i, lo_b, len(lo_b), hi_b, len(hi_b))
        for n in names:
            _call(L.tdb_query_add_field, q, n.encode())
        results = (c_void_p * len(names))()
        _call(L.tdb_query_submit, q, results, len(names))
    finally:
        L.tdb_query_free(q)
    raws = []
    try:
        for k in range(len(names)):
            raws.append(_take_result(c_void_p(results[k]), numpy=True))
    finally:
        for k in range(len(raws) + 1, len(names)):
            L.tdb_result_free(c_void_p(results[k]))
    out = OrderedDict()
    for n, raw in zip(names, raws):
        out[n] = _convert(array.schema, n, raw)
    return out


def read_subarray(array, subarray: Subarray):
    """``A.read_subarray(subarray)``: the attributes (the viewed one with ``attr=``) over the
    subarray's ranges; dense arrays shaped by the ranges (row-major, ranges in the order
    added), sparse arrays the cells inside them (dimensions first, in no particular order)."""
    _check_subarray(array, subarray)
    sch = array.schema
    attrs = [array.view_attr] if array.view_attr is not None else [a.name for a in sch]
    if sch.sparse:
        return _query(array, [d.name for d in sch.domain] + attrs, subarray, _UNORDERED)
    out = _query(array, attrs, subarray, _ROW_MAJOR)
    shape = subarray.shape()
    for n, v in out.items():
        out[n] = v.reshape(shape)
    return out


def write_subarray(array, subarray: Subarray, values) -> None:
    """``A.write_subarray(subarray, values)`` of a dense array: one range per dimension (a
    dense write covers one box)."""
    _check_subarray(array, subarray)
    sel = []
    for i, d in enumerate(array.schema.domain):
        ranges = subarray._effective(i)
        if len(ranges) != 1:
            raise TileDBError(f"DenseArray.write_subarray: dimension '{d.name}' has "
                              f"{len(ranges)} ranges; a dense write covers one range per "
                              "dimension")
        lo, hi = ranges[0]
        if d.dtype.kind == "M":
            sel.append(slice(lo, hi + np.timedelta64(1, np.datetime_data(d.dtype)[0])))
        else:
            sel.append(slice(int(lo), int(hi) + 1))
    from ._write import write

    write(array, array._open(), tuple(sel), values)
