"""Writing TileDB arrays without libtiledb: :func:`create`, :func:`from_numpy`, the cell
buffers behind ``Array(uri, mode="w")`` and :func:`consolidate` (the C API's
``tdb_array_create``, ``tdb_writer_*``, ``tdb_array_metadata_put``/``_delete`` and
``tdb_array_consolidate``).

Cells go to the library as they are: a C-contiguous numpy array of the field's dtype is
passed by address (kept alive until the write's submit returns), a Fortran-ordered one is
written col-major, also without a copy. Other inputs are converted once: a cast to the
field's dtype, a contiguous copy of a strided view, the concatenated bytes and offsets of
var-size cells, the validity bytes of a masked array.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
from ctypes import POINTER, byref, c_char_p, c_uint8, c_uint64, c_void_p
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Union

import numpy as np

from ._datatypes import TEXT, resolve
from ._ffi import call as _call
from ._ffi import lib
from ._lib import CONSTANTS
from .errors import InvalidArgument

Key = Union[bytes, str, None]


@contextlib.contextmanager
def config_handle(config: Optional[Mapping[str, Any]]):
    """A ``tdb_config_t`` holding ``config`` (object-store options, this library's key names or
    TileDB's; ``True``/``False`` as ``"true"``/``"false"``), or NULL for none; freed on exit."""
    L = lib()
    cfg = c_void_p()
    try:
        if config:
            _call(L.tdb_config_alloc, byref(cfg))
            for k, v in config.items():
                if isinstance(v, bool):
                    v = "true" if v else "false"
                _call(L.tdb_config_set, cfg, str(k).encode(), str(v).encode())
        yield cfg
    finally:
        if cfg:
            L.tdb_config_free(cfg)


def key_bytes(key: Key) -> Optional[bytes]:
    """An encryption key as bytes (a str is its UTF-8 bytes, as TileDB-Py takes it)."""
    return key.encode() if isinstance(key, str) else key


def create(uri: str, schema: Union[str, Mapping[str, Any]], key: Key = None,
           config: Optional[Mapping[str, Any]] = None) -> None:
    """Creates the array ``uri`` from ``schema``: the schema JSON ``tdbf array info --json``
    prints (whole or its ``schema`` member), as text or as a dict (docs/ARRAYS.md).
    ``key``: a 32-byte AES-256-GCM key to encrypt the array with. The schema is checked with
    TileDB's rules (a refusal is :class:`InvalidArgument` with TileDB's reason); an existing
    array is refused and left untouched."""
    text = schema if isinstance(schema, str) else json.dumps(schema)
    k = key_bytes(key)
    with config_handle(config) as cfg:
        _call(lib().tdb_array_create_with_config, str(uri).encode(), text.encode(), k,
              len(k) if k else 0, cfg)


def _type_name(dtype: np.dtype) -> tuple[str, Union[int, str]]:
    """The TileDB datatype name and cell_val_num of an ndarray's cells (TileDB-Py's
    ``from_numpy`` mapping: str cells are var STRING_UTF8, bytes cells var CHAR)."""
    if dtype.kind == "U":
        return "STRING_UTF8", "var"
    if dtype.kind == "S":
        return "CHAR", "var"
    return resolve(dtype).name.upper(), 1


def from_numpy(uri: str, array, tile=None, filters: Optional[str] = None, key: Key = None,
               timestamp: Optional[int] = None, attr_name: str = "") -> None:
    """Creates a dense array holding ``array``, as TileDB-Py's ``tiledb.from_numpy`` does: one
    UINT64 dimension ``__dim_<i>`` per axis with domain ``[0, n - 1]`` and tile extent
    ``tile`` (an int for every axis, or one per axis; default the axis length), one attribute
    ``attr_name`` of the array's dtype (object arrays of str: var STRING_UTF8; of bytes: var
    CHAR; of 1-D numeric arrays: var of their dtype), whose pipeline is ``filters`` (a spec,
    ``"byteshuffle,zstd:3"``). Then writes the cells as one fragment at ``timestamp`` (ms;
    default now)."""
    arr = array if isinstance(array, np.ndarray) else np.asarray(array)
    if arr.ndim == 0 or arr.size == 0:
        raise InvalidArgument("from_numpy: the array must have at least one axis and one cell")
    if tile is None:
        tiles = list(arr.shape)
    elif isinstance(tile, (int, np.integer)):
        tiles = [int(tile)] * arr.ndim
    else:
        tiles = [int(t) for t in tile]
        if len(tiles) != arr.ndim:
            raise InvalidArgument(f"from_numpy: {len(tiles)} tile extent(s) for {arr.ndim} axes")
    if arr.dtype == object:
        first = np.ma.getdata(arr).flat[0]
        if isinstance(first, str):
            type_name, cvn = "STRING_UTF8", "var"
        elif isinstance(first, bytes):
            type_name, cvn = "CHAR", "var"
        elif isinstance(first, np.ndarray) and first.ndim == 1:
            type_name, cvn = resolve(first.dtype).name.upper(), "var"
        else:
            raise InvalidArgument(f"from_numpy: object cells of {type(first).__name__} have no "
                                  "TileDB datatype (str, bytes or 1-D numpy arrays)")
    else:
        type_name, cvn = _type_name(arr.dtype)
    attr: dict[str, Any] = {"name": attr_name, "type": type_name, "cell_val_num": cvn}
    if isinstance(arr, np.ma.MaskedArray):
        attr["nullable"] = True
    if filters is not None:
        attr["filters"] = filters
    schema = {
        "sparse": False,
        "dimensions": [{"name": f"__dim_{d}", "type": "UINT64", "domain": [0, n - 1],
                        "tile": t} for d, (n, t) in enumerate(zip(arr.shape, tiles))],
        "attributes": [attr],
    }
    create(uri, schema, key)
    from .array import Array

    with Array(uri, mode="w", key=key, timestamp=timestamp) as A:
        A[...] = arr


@dataclass
class Buffers:
    """One field's buffers for a submit: ``data`` (any contiguous array), ``offsets``
    (uint64, var-size fields), ``validity`` (uint8, nullable fields). Held until the submit
    returns: the library reads them in place."""

    data: np.ndarray
    offsets: Optional[np.ndarray] = None
    validity: Optional[np.ndarray] = None


def _as_uint8(a: np.ndarray) -> np.ndarray:
    """A C-contiguous array's bytes as a flat uint8 array (a view)."""
    return a.reshape(-1).view(np.uint8) if a.size else np.zeros(1, np.uint8)[:0]


def fixed_buffers(field, value, ncells: int, order: str) -> Buffers:
    """The buffers of fixed-size ``field`` (a :class:`~tdbfilter.array.Field`) from
    ``value`` (ndarray, masked array, or anything ``np.asarray`` takes), ``ncells`` cells in
    ``order`` ("C": row-major, "F": col-major)."""
    cell = field.cell_type
    masked = isinstance(value, np.ma.MaskedArray)
    data = np.ma.getdata(value) if masked else value
    want = cell.dtype
    if cell.name in TEXT:  # fixed text cells: S<cell_val_num>
        want = np.dtype(f"S{field.cell_val_num}")
    elif field.cell_val_num > 1 and want.kind not in "iufbMm":
        want = np.dtype(f"V{field.cell_val_num * want.itemsize}")
    if not isinstance(data, np.ndarray) or data.dtype != want:
        try:
            data = np.asarray(data)
            if data.dtype != want:
                data = data.astype(want, casting="same_kind")
        except (TypeError, ValueError) as e:
            raise InvalidArgument(f"field '{field.name}' ({cell.name}): cannot write "
                                  f"{np.asarray(value).dtype} cells: {e}") from None
    per_cell = field.cell_val_num if want == cell.dtype else 1
    if data.size != ncells * per_cell:
        raise InvalidArgument(f"field '{field.name}': {data.size} value(s) given for {ncells} "
                              f"cell(s) of {per_cell} value(s) each")
    flat = data.ravel(order=order if per_cell == 1 else "C")  # a view when already in order
    validity = None
    if field.nullable:
        if masked:
            mask = np.ma.getmaskarray(value)
            if per_cell > 1:
                mask = mask.reshape(ncells, per_cell).all(axis=1)
            else:
                mask = mask.ravel(order=order)
            validity = np.logical_not(mask).view(np.uint8)
        else:
            validity = np.ones(ncells, np.uint8)
    elif masked and np.ma.getmaskarray(value).any():
        raise InvalidArgument(f"field '{field.name}' is not nullable: its cells cannot be masked")
    return Buffers(_as_uint8(np.ascontiguousarray(flat)), None, validity)


def var_buffers(field, value, ncells: int, order: str) -> Buffers:
    """The buffers of var-size ``field``: ``value`` an object array of str, bytes or 1-D
    arrays (None: null), a numpy ``U``/``S`` array, a list of them, or a masked array."""
    cell = field.cell_type
    masked = isinstance(value, np.ma.MaskedArray)
    mask = np.ma.getmaskarray(value).ravel(order=order) if masked else None
    raw = np.ma.getdata(value) if masked else value
    if isinstance(raw, np.ndarray):
        items = raw.ravel(order=order).tolist() if raw.dtype.kind in "US" else \
            list(raw.ravel(order=order))
    else:
        items = list(raw)
    if len(items) != ncells:
        raise InvalidArgument(f"field '{field.name}': {len(items)} cell(s) given for {ncells}")
    text = cell.name in TEXT
    parts: list[bytes] = []
    valid = np.ones(ncells, np.uint8)
    for i, x in enumerate(items):
        if x is None or (mask is not None and mask[i]):
            valid[i] = 0
            parts.append(b"")
        elif isinstance(x, str):
            parts.append(x.encode("utf-8"))
        elif isinstance(x, (bytes, bytearray, memoryview)):
            parts.append(bytes(x))
        elif text:
            raise InvalidArgument(f"field '{field.name}' ({cell.name}): cell {i} is "
                                  f"{type(x).__name__}, not str or bytes")
        else:
            parts.append(np.ascontiguousarray(x, dtype=cell.dtype).tobytes())
    if not field.nullable and not valid.all():
        raise InvalidArgument(f"field '{field.name}' is not nullable: cell "
                              f"{int(np.argmin(valid))} is None or masked")
    lengths = np.fromiter((len(p) for p in parts), np.uint64, ncells)
    offsets = np.zeros(ncells, np.uint64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    joined = b"".join(parts)
    data = np.frombuffer(joined, np.uint8) if joined else np.zeros(1, np.uint8)[:0]
    return Buffers(data, offsets, valid if field.nullable else None)


def buffers(field, value, ncells: int, order: str = "C") -> Buffers:
    """The buffers of ``field`` (fixed or var-size) holding ``value``."""
    if field.var:
        return var_buffers(field, value, ncells, order)
    return fixed_buffers(field, value, ncells, order)


_EMPTY = np.zeros(1, np.uint8)


def _address(a: np.ndarray) -> int:
    """A buffer's address (a valid one for empty buffers: the library refuses NULL)."""
    return a.ctypes.data if a.size else _EMPTY.ctypes.data


def write_fragment(path: str, key: Optional[bytes], timestamp: int, threads: int,
                   layout: str, subarray: Optional[bytes],
                   fields: Mapping[str, Buffers],
                   config: Optional[Mapping[str, Any]] = None) -> str:
    """Writes ``fields`` as one fragment (one submit, then finalize) and returns its name.
    ``layout``: ``"row"``, ``"col"`` or ``"unordered"``; ``subarray``: the packed dense box.
    The writer is freed on every path: a failure commits nothing."""
    L = lib()
    w = c_void_p()
    with config_handle(config) as cfg:
        _call(L.tdb_writer_open_with_config, path.encode(), key, len(key) if key else 0,
              timestamp, cfg, byref(w))
    try:
        if threads:
            _call(L.tdb_writer_set_threads, w, threads)
        code = {"row": "TDB_ROW_MAJOR", "col": "TDB_COL_MAJOR",
                "unordered": "TDB_UNORDERED"}[layout]
        _call(L.tdb_writer_set_layout, w, CONSTANTS[code])
        if subarray is not None:
            box = ctypes.create_string_buffer(subarray, len(subarray))
            _call(L.tdb_writer_set_subarray, w, box, len(subarray))
        for name, b in fields.items():
            n = name.encode()
            _call(L.tdb_writer_set_data, w, n, _address(b.data), b.data.nbytes)
            if b.offsets is not None:
                _call(L.tdb_writer_set_offsets, w, n,
                      ctypes.cast(_address(b.offsets), POINTER(c_uint64)), b.offsets.size)
            if b.validity is not None:
                _call(L.tdb_writer_set_validity, w, n,
                      ctypes.cast(_address(b.validity), POINTER(c_uint8)), b.validity.size)
        _call(L.tdb_writer_submit, w)
        _call(L.tdb_writer_finalize, w)
        out = c_char_p()
        _call(L.tdb_writer_fragment_name, w, byref(out))
        return out.value.decode()
    finally:
        L.tdb_writer_free(w)


# -- array metadata ---------------------------------------------------------------------------

NP_DATA_PREFIX = "__np_flat_"
NP_SHAPE_PREFIX = "__np_shape_"


def pack_metadata(value) -> tuple[str, int, bytes]:
    """A metadata value as TileDB-Py stores it: (datatype name, value count, bytes). bytes are
    BLOB, str STRING_UTF8, an int or a sequence of ints INT64, a float or a sequence of floats
    FLOAT64, a numpy scalar its own dtype; TypeError otherwise (TileDB-Py's errors)."""
    if isinstance(value, bytes):
        return "blob", len(value), value
    if isinstance(value, str):
        b = value.encode("utf-8")
        return "string_utf8", len(b), b
    if isinstance(value, np.generic):
        if value.dtype.kind in "SU":
            b = value.encode("utf-8") if isinstance(value, np.str_) else bytes(value)
            return ("string_utf8" if value.dtype.kind == "U" else "char"), len(b), b
        cell = resolve(value.dtype)
        return cell.name, 1, np.asarray(value).tobytes()
    seq = value if isinstance(value, (list, tuple)) else (value,)
    if not seq:
        return "int32", 0, b""
    if not isinstance(seq[0], (int, float)):
        raise TypeError(f"Unsupported item type '{type(seq[0])}'")
    kind = int if isinstance(seq[0], int) else float
    if not all(isinstance(v, kind) for v in seq):
        raise TypeError(f"Mixed-type sequences are not supported: {value}")
    if kind is int:
        return "int64", len(seq), np.array(seq, dtype=np.int64).tobytes()
    return "float64", len(seq), np.array(seq, dtype=np.float64).tobytes()


def metadata_put(path: str, key: Optional[bytes], timestamp: int, name: str, type_name: str,
                 count: int, value: bytes, config: Optional[Mapping[str, Any]] = None) -> None:
    """One ``tdb_array_metadata_put``."""
    from ._datatypes import datatype_from_name

    buf = ctypes.create_string_buffer(value, max(len(value), 1))
    with config_handle(config) as cfg:
        _call(lib().tdb_array_metadata_put_with_config, path.encode(), key,
              len(key) if key else 0, timestamp, name.encode(), datatype_from_name(type_name),
              count, buf, len(value), cfg)


def metadata_delete(path: str, key: Optional[bytes], timestamp: int, name: str,
                    config: Optional[Mapping[str, Any]] = None) -> None:
    """One ``tdb_array_metadata_delete``."""
    with config_handle(config) as cfg:
        _call(lib().tdb_array_metadata_delete_with_config, path.encode(), key,
              len(key) if key else 0, timestamp, name.encode(), cfg)


def metadata_write(path: str, key: Optional[bytes], timestamp: int,
                   changes: Mapping[str, Optional[tuple]],
                   config: Optional[Mapping[str, Any]] = None) -> None:
    """``changes`` (name -> ``(type name, count, bytes)`` to put, or None to delete) as one
    ``tdb_array_metadata_write``: one ``__meta`` file, as TileDB writes on close."""
    from ._datatypes import datatype_from_name

    n = len(changes)
    if n == 0:
        return
    names = (c_char_p * n)(*[k.encode() for k in changes])
    types = (ctypes.c_uint32 * n)()
    counts = (ctypes.c_uint32 * n)()
    values = (c_void_p * n)()
    sizes = (ctypes.c_size_t * n)()
    deletes = (c_uint8 * n)()
    keep = []
    for i, op in enumerate(changes.values()):
        if op is None:
            deletes[i] = 1
            continue
        type_name, count, value = op
        buf = ctypes.create_string_buffer(value, max(len(value), 1))
        keep.append(buf)
        types[i] = datatype_from_name(type_name)
        counts[i] = count
        values[i] = ctypes.cast(buf, ctypes.c_void_p)
        sizes[i] = len(value)
    with config_handle(config) as cfg:
        _call(lib().tdb_array_metadata_write, path.encode(), key, len(key) if key else 0,
              timestamp, names, types, counts, values, sizes, deletes, n, cfg)


_U64_MAX = 2**64 - 1


def consolidate(uri: str, mode: Optional[str] = None,
                config: Optional[Mapping[str, Any]] = None, key: Key = None,
                timestamp: Optional[tuple] = None, fragments=None) -> None:
    """Consolidates the array at ``uri`` as TileDB 2.30 does (``tdb_array_consolidate``).

    ``mode``: ``"fragments"``, ``"commits"``, ``"fragment_meta"`` or ``"array_meta"`` (None:
    ``config``'s ``sm.consolidation.mode``, else fragments). ``config``: TileDB's
    ``sm.consolidation.*`` settings and object-store options. ``key``: an encrypted array's
    AES-256-GCM key. ``timestamp``: ``(start, end)`` in ms (inclusive; None for open ends),
    narrowing the config's range. ``fragments``: names (or ``__fragments/`` URIs) to merge
    instead of TileDB's plan (fragments mode only)."""
    key = key_bytes(key)
    start, end = 0, _U64_MAX
    if timestamp is not None:
        lo, hi = timestamp
        start = 0 if lo is None else int(lo)
        end = _U64_MAX if hi is None else int(hi)
    names = [str(f).encode() for f in (fragments or [])]
    arr = (c_char_p * max(len(names), 1))(*names)
    with config_handle(config) as cfg:
        _call(lib().tdb_array_consolidate, str(uri).encode(),
              None if mode is None else mode.encode(), cfg, key, len(key) if key else 0,
              start, end, arr if names else None, len(names))
