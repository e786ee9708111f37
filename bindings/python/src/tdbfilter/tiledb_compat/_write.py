"""TileDB-Py's writes (``A[...] = values``) over the binding's writer, with TileDB-Py's
casting: fixed-size values are cast to the attribute's dtype as ``np.array(v, dtype)`` does,
record and complex cells split into their values, NaN of a nullable float attribute null."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..errors import TdbfilterError as TileDBError
from ._index import Query


def _same_kind(v: np.ndarray) -> bool:
    """Whether an object array's cells are all of one kind (text, bytes, or arrays of one
    dtype; None aside), as TileDB-Py's buffer conversion requires."""
    kinds = set()
    for x in np.ma.getdata(v).reshape(-1):
        if x is None:
            continue
        kinds.add("str" if isinstance(x, str) else "bytes" if isinstance(x, bytes) else
                  ("array", np.asarray(x).dtype.str))
        if len(kinds) > 1:
            return False
    return True


def _cells(attr, v: Any):
    """One attribute's values cast as TileDB-Py casts them."""
    if attr.isvar:
        if isinstance(v, np.ndarray) and v.dtype == object and not _same_kind(v):
            raise TypeError(f"Failed to convert buffer for attribute: '{attr.name}'")
        return v
    masked = isinstance(v, np.ma.MaskedArray)
    data = np.ma.getdata(v) if masked else v
    dtype = attr.dtype
    if attr._tiledb_dtype == "BLOB" and not masked:
        # a fixed-size blob cell is its bytes: bytes values are written as them
        arr = np.asarray(data)
        if arr.dtype.kind in "SO":
            return np.ascontiguousarray(arr, dtype=f"S{attr.ncells}").view(np.uint8) \
                .reshape(arr.shape + ((attr.ncells,) if attr.ncells > 1 else ()))
    nan_mask = None
    if attr.isnullable and not masked:
        src = np.asarray(data)
        if src.dtype.kind == "f":
            nan_mask = np.isnan(src)  # TileDB-Py writes NaN of a nullable attribute as null
            if dtype.kind in "iu" and nan_mask.any():
                data = np.where(nan_mask, 0, src)
    try:
        arr = np.asarray(data)
        if dtype.kind in "Vc":
            arr = np.ascontiguousarray(arr, dtype=dtype)
            base = np.dtype(list(dtype.fields.values())[0][0]) if dtype.kind == "V" else \
                np.dtype("f4" if dtype.itemsize == 8 else "f8")
            arr = arr.reshape(-1).view(base).reshape(arr.size, attr.ncells) if arr.ndim <= 1 \
                else arr.view(base).reshape(arr.shape + (attr.ncells,))
        elif dtype.kind == "S" and attr.ncells not in (1,):
            arr = np.asarray(arr, dtype=dtype)
        elif arr.dtype != dtype:
            # (ascontiguousarray would make a scalar 1-d: keep it a scalar to broadcast)
            arr = np.ascontiguousarray(arr, dtype=dtype) if arr.ndim else \
                np.asarray(arr, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise TileDBError(f"Cannot write values of type {np.asarray(data).dtype} to attribute "
                          f"'{attr.name}' ({dtype}): {e}") from None
    if masked:
        return np.ma.array(arr, mask=np.ma.getmaskarray(v))
    if nan_mask is not None:
        return np.ma.array(arr, mask=nan_mask)
    return arr


def _plain(v):
    """A pyarrow Array or pandas Series as NumPy (nulls as None or NaN, as TileDB-Py takes
    them); anything else as it is."""
    mod = type(v).__module__ or ""
    if (mod.startswith("pyarrow") or mod.startswith("pandas")) and hasattr(v, "to_numpy"):
        try:
            return v.to_numpy(zero_copy_only=False)
        except TypeError:
            return v.to_numpy()
    return v


def _nulls_of_objects(attr, v):
    """A nullable attribute's object values with None: masked (None written as empty)."""
    if not attr.isnullable or not isinstance(v, np.ndarray) or isinstance(v, np.ma.MaskedArray) \
            or v.dtype != object:
        return v
    mask = np.array([x is None for x in v.reshape(-1)], dtype=bool).reshape(v.shape)
    if not mask.any():
        return v
    first = next((x for x in v.reshape(-1) if x is not None), None)
    if isinstance(first, (str, bytes)):
        empty = type(first)()  # the kind of the other cells
    else:
        empty = b"" if attr.dtype.kind == "S" else "" if attr.dtype.kind == "U" else \
            np.zeros((), attr.dtype)[()]
    data = v.copy()
    data[mask] = empty
    return np.ma.array(data, mask=mask)


def _check_lengths(sch, selection, values) -> None:
    """A sparse write's attribute values must number the coordinates (a ValueError)."""
    coords = selection if isinstance(selection, tuple) else (selection,)
    first = coords[0] if coords else None
    if first is None or isinstance(first, (str, bytes)) or np.ndim(first) == 0:
        return
    n = len(first)
    for k, v in values.items():
        if sch.has_attr(k) and not isinstance(v, (str, bytes)) and np.ndim(v) > 0 \
                and len(v) != n:
            raise ValueError(f"value length ({len(v)}) does not match coordinate length "
                             f"({n})")


def _check_ascii(field, v) -> None:
    """TileDB-Py refuses non-ASCII text for a STRING_ASCII attribute or dimension."""
    if field._tiledb_dtype != "STRING_ASCII" or isinstance(v, bytes):
        return
    cells = [v] if isinstance(v, str) else np.ma.getdata(v) if isinstance(v, np.ndarray) else v
    try:
        it = iter(cells)
    except TypeError:
        return
    for c in it:
        if isinstance(c, str) and not c.isascii():
            raise TileDBError(f"Cannot write the non-ASCII text {c!r} to '{field.name}' "
                              "(STRING_ASCII)")


def _check_sparse_string(attr, v) -> None:
    """TileDB-Py's sparse writes refuse non-string values for a fixed-size string attribute
    (a ValueError naming the attribute, raised from one with TileDB-Py's message)."""
    if attr.isvar or attr.dtype.kind != "S":
        return
    kind = np.asarray(np.ma.getdata(v)).dtype.kind
    if kind not in "SO":
        try:
            raise ValueError("Cannot write a string value to non-string typed attribute "
                             f"'{attr.name}'!")
        except ValueError as exc:
            raise ValueError(f"NumPy array conversion check failed for attr '{attr.name}'") \
                from exc


def write(array, inner, selection, value, nullmaps=None) -> None:
    """``A[selection] = value``; ``nullmaps`` (TileDB-Py's ``_setitem_impl``): per attribute
    name, one validity byte per cell (0: null)."""
    sch = array.schema
    if isinstance(value, Mapping):
        values = dict(value)
        unknown = [k for k in values if not sch.has_attr(k) and not sch.domain.has_dim(k)]
        if unknown and sch.sparse:
            _check_lengths(sch, selection, values)  # (TileDB-Py checks these first)
        if unknown:
            raise TileDBError(f"Attribute '{unknown[0]}' does not exist in the array schema")
    elif sch.nattr == 0 and value is None and sch.sparse:
        values = {}  # coordinates only
    elif array.view_attr is not None and sch.nattr > 1 and not sch.sparse:
        # TileDB-Py: a dense write through one attribute's view writes the other attributes'
        # current cells of the selection back with it (read at the latest time)
        from ._array import DenseArray

        with DenseArray(array.uri, "r", key=array.key, ctx=array._ctx) as readable:
            values = dict(Query(readable)._getitem(selection))
        values[array.view_attr] = value
    elif sch.nattr == 1 or array.view_attr is not None:
        name = array.view_attr if array.view_attr is not None else sch.attr(0).name
        values = {name: value}
    else:
        raise TileDBError("ambiguous attribute assignment, more than one array attribute "
                          f"({sch.nattr}): assign a dict {{name: values}}")
    for k, valid in (nullmaps or {}).items():
        if not sch.has_attr(k) or not sch.attr(k).isnullable:
            raise TileDBError(f"validity given for '{k}', which is not a nullable attribute")
        if k not in values:
            raise TileDBError(f"validity given for '{k}' without its values")
        values[k] = np.ma.array(np.ma.getdata(values[k]),
                                mask=np.asarray(valid).reshape(np.shape(values[k])) == 0)
    if not sch.sparse:
        missing = [a.name for a in sch._attrs if a.name not in values]
        if missing:
            raise TileDBError(f"dense write: values for every attribute are required, missing "
                              f"{missing}")
    values = {k: _plain(v) for k, v in values.items()}
    for k, v in values.items():
        if sch.has_attr(k):
            values[k] = _nulls_of_objects(sch.attr(k), v)
    for k, v in values.items():
        _check_ascii(sch.attr(k) if sch.has_attr(k) else sch.domain.dim(k), v)
    out = {}
    for k, v in values.items():
        if sch.sparse and sch.has_attr(k):
            _check_sparse_string(sch.attr(k), v)
        if sch.has_attr(k):
            out[k] = _cells(sch.attr(k), v)
        else:
            out[k] = v
    if sch.sparse:
        selection = _coords(sch, selection)
        coords = selection if isinstance(selection, tuple) else (selection,)
        for d, c in zip(sch.domain, coords):
            _check_ascii(d, c)
    if not sch.sparse and not isinstance(selection, tuple):
        selection = (selection,)
    if not sch.sparse:
        # TileDB-Py: a datetime slice's stop is inclusive
        selection = tuple(
            slice(s.start, s.stop.astype(d.dtype) + np.timedelta64(1, np.datetime_data(
                d.dtype)[0]), s.step)
            if isinstance(s, slice) and isinstance(s.stop, np.datetime64) and
            d.dtype.kind == "M" else s
            for s, d in zip(selection, sch.domain)) + tuple(selection[sch.domain.ndim:])
        # TileDB-Py: a negative scalar index counts back from the domain's upper bound
        selection = tuple(
            int(s) + int(d.domain[1]) + 1 if isinstance(s, (int, np.integer)) and
            not isinstance(s, bool) and s < 0 and d.dtype.kind in "iu" else s
            for s, d in zip(selection, sch.domain)) + tuple(selection[sch.domain.ndim:])
    if not sch.sparse:
        box = inner._dense_box(selection)
        shape = tuple(b - a + 1 for a, b in box)
        for k, v in out.items():
            if sch.has_attr(k) and not sch.attr(k).isvar and sch.attr(k).ncells == 1 and \
                    isinstance(v, np.ndarray) and v.ndim == len(shape) and v.shape != shape \
                    and v.size == int(np.prod(shape)):
                # (as many cells in another shape; a wrong count is TileDB's error below)
                raise ValueError(f"value shape {v.shape} of '{k}' does not match the "
                                 f"subarray shape {shape}")
        first = next(iter(out.values()))
        if np.ndim(first) == 0 and not isinstance(first, (str, bytes)):
            box = inner._dense_box(selection)
            shape = tuple(b - a + 1 for a, b in box)
            out = {k: np.full(shape, v, dtype=sch.attr(k).dtype) for k, v in out.items()}
    inner[selection] = out


def _coords(sch, selection):
    """Sparse coordinates cast to their dimensions' numeric dtypes as TileDB-Py casts them
    (``np.arange(1, 11)`` is int64; a uint32 dimension takes it)."""
    coords = [_plain(c) for c in selection] if isinstance(selection, tuple) else \
        [_plain(selection)]
    if len(coords) != sch.domain.ndim:
        return selection
    out = []
    scalar = [isinstance(c, (str, bytes)) or np.ndim(c) == 0 for c in coords]
    if any(scalar) and not all(scalar):
        # TileDB-Py: a lone coordinate among arrays counts as one cell
        coords = [[c] if s else c for c, s in zip(coords, scalar)]
    elif all(scalar) and any(isinstance(c, (str, bytes)) for c in coords):
        coords = [[c] for c in coords]  # one cell (a string would read as its characters)
    for d, c in zip(sch.domain, coords):
        if not d.isvar and d.dtype.kind in "iuf" and not isinstance(c, (str, bytes)):
            arr = np.asarray(c)
            # (datetimes too: TileDB-Py's np.array(sel, dtype=dim.dtype) takes their counts)
            if arr.dtype.kind in "iufMm" and arr.dtype != d.dtype:
                c = arr.astype(d.dtype) if arr.ndim else arr.astype(d.dtype)[()]
        out.append(c)
    return tuple(out) if isinstance(selection, tuple) else out[0]


def write_direct(array, values, append_dim=None, mode: str = "ingest", start_idx=None) -> None:
    """TileDB-Py's ``DenseArray.write_direct``: a contiguous numpy array of the single
    attribute written at [start_idx, start_idx + shape) per dimension ("ingest"), or after
    the non-empty domain along ``append_dim`` ("append")."""
    if not array.isopen or array.mode != "w":
        raise TileDBError("DenseArray is not opened for writing")
    if array.schema.nattr != 1:
        raise ValueError("cannot write_direct to a multi-attribute DenseArray")
    if not isinstance(values, np.ndarray):
        raise TypeError("write_direct takes a numpy array")
    if not values.flags.c_contiguous and not values.flags.f_contiguous:
        raise ValueError("array is not contiguous")
    if mode not in ("ingest", "append"):
        raise TileDBError(f"write_direct: invalid mode {mode!r} (\"ingest\" or \"append\")")
    start = int(start_idx or 0)
    box = [(start, start + n - 1) for n in values.shape]
    if mode == "append":
        from ._array import DenseArray

        with DenseArray(array.uri, mode="r", key=array.key, ctx=array._ctx) as R:
            ned = R.nonempty_domain()
        if append_dim is None or values.ndim <= append_dim:
            raise IndexError("`append_dim` out of range")
        if ned is None or values.ndim != len(ned):
            raise ValueError("The number of dimension of the TileDB array and Numpy array to "
                             "append do not match")
        for n in range(values.ndim):
            lo, hi = int(ned[n][0]), int(ned[n][1])
            if n == append_dim:
                first = start if start_idx is not None else hi + 1
                box[n] = (first, first + values.shape[n] - 1)
            elif values.shape[n] != hi - lo + 1:
                raise ValueError("The input Numpy array must be of the same shape as the "
                                 "TileDB array, exluding the `append_dim`, but the Numpy array "
                                 f"at index {n} has {values.shape[n]} dimension(s) and the "
                                 f"TileDB array has {hi - lo}.")
    write(array, array._open(), tuple(slice(lo, hi + 1) for lo, hi in box), values)
