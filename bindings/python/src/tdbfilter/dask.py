"""Dask over tdbfilter: TileDB arrays read and written by Dask workers without libtiledb.

>>> import tdbfilter.dask as tdask                                   # doctest: +SKIP
>>> x = tdask.read("dense_array", field="a")        # dask.array, chunks = space tiles
>>> x.sum().compute()
>>> df = tdask.read("sparse_array")                 # dask.dataframe: coordinates + attributes
>>> tdask.write(x + 1, "copy")                      # one fragment per chunk

The task graph holds only the URI, key, config, open timestamp and each task's box: every
task opens the array itself (once per worker process: opened arrays are cached by URI, key,
config and timestamp) and reads its box through the C API (``tdb_array_read_fields``). The
graph is built lazily (dask's ``from_array`` / ``from_map`` layers), so a huge domain does not
build a list of all its chunks' tasks up front.

Conventions (``dask.array.from_tiledb(uri, attribute=None, chunks=None,
storage_options=None)`` is the model):

- ``field``: one attribute name gives one ``dask.array.Array``; None gives the only attribute
  of a one-attribute array and a dict ``{name: dask array}`` of every attribute otherwise
  (``from_tiledb`` refuses multi-attribute arrays without ``attribute``); a list of names gives
  a dict in that order. Each field is its own dask array and reads only its own tiles.
- Cells: fixed-size numbers as their numpy dtype (multi-value cells add a last axis of
  ``cell_val_num``), fixed text as ``S<n>``, var-size fields as ``object`` arrays (``str`` for
  text), nullable fields as numpy masked arrays (var-size: ``None`` for null) — the cells
  :meth:`tdbfilter.Array.read` returns.
- The default box of a dense array is its whole domain, as ``dask.array.from_tiledb`` gives
  it (cells never written read as fill values); ``subarray=[(lo, hi), ...]`` (inclusive, one
  pair per dimension) reads any other box, the non-empty domain for example. Index ``i`` of
  the dask array's axis ``d`` is coordinate ``subarray[d][0] + i``.
- ``chunks``: default one chunk per space tile (tile-aligned: a box starting inside a tile
  starts with a partial chunk); anything ``dask.array.from_array`` takes otherwise (``"auto"``
  sizes are multiples of the tiles).
- Reads are pinned to the fragments visible when :func:`read` builds the graph (the array is
  opened up to the newest fragment's timestamp; ``timestamp=`` overrides it), so fragments
  written while a computation runs do not mix in.

A sparse array becomes a ``dask.dataframe.DataFrame``: one column per dimension then per
attribute (or ``field``'s names), one partition per disjoint box. The boxes come from the
fragments' R-tree leaves (one MBR per tile): the non-empty domain is split (k-d, at the
cell-weighted median of the leaves along the dimension that balances best) until a box holds
about ``chunks`` cells (default 1,000,000) by the leaves' estimate. Each partition reads its
box like any read (fragments merged, duplicates removed unless the schema allows them), and
as the boxes are disjoint and cover the non-empty domain, every cell is in exactly one
partition however the fragments' MBRs overlap. Arrays with a string dimension are one
partition (the C API has no subarrays on string dimensions). Nullable numbers become pandas'
nullable dtypes (``Int64``, ``Float64``, ``boolean``), var-size text ``str``, other var-size
or multi-value cells ``object`` columns of arrays.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from ._datatypes import TEXT
from .array import Array, Field, _numeric
from .errors import InvalidArgument

__all__ = ["read", "write", "open_array"]

DEFAULT_PARTITION_CELLS = 1_000_000
_CACHE_SIZE = 32
_cache: "OrderedDict[tuple, Array]" = OrderedDict()
_cache_lock = threading.Lock()


# -- opening, once per worker process ---------------------------------------------------------

def _config_items(config: Optional[Mapping[str, Any]]) -> Optional[tuple]:
    if not config:
        return None
    # The graph carries the config as sorted (key, value) pairs already.
    items = config if isinstance(config, tuple) else config.items()
    return tuple(sorted((str(k), str(v)) for k, v in items))


def _open(uri: str, key, config: Optional[tuple], timestamp) -> Array:
    kwargs: dict[str, Any] = {}
    if key is not None:
        kwargs["key"] = key
    if config:
        # Array(uri, config=...) is the object-store settings (vfs.s3.*, ...).
        kwargs["config"] = dict(config)
    if timestamp is not None:
        kwargs["timestamp"] = timestamp
    return Array(uri, **kwargs)


def open_array(uri: str, key=None, config: Optional[Mapping[str, Any]] = None,
               timestamp=None) -> Array:
    """The array opened for reading, from this process's cache (the :data:`_CACHE_SIZE` most
    recently used ``(uri, key, config, timestamp)``): what each Dask task calls. Arrays
    dropped from the cache are freed when the last task using them ends."""
    k = (str(uri), key, _config_items(config), timestamp)
    with _cache_lock:
        a = _cache.get(k)
        if a is not None:
            _cache.move_to_end(k)
            return a
    a = _open(str(uri), key, k[2], timestamp)
    with _cache_lock:
        a = _cache.setdefault(k, a)
        _cache.move_to_end(k)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return a


def _snapshot(a: Array, timestamp):
    """The timestamp every task opens the array at: the caller's, else up to the newest
    fragment visible now (None without fragments: nothing to pin)."""
    if timestamp is not None:
        return timestamp
    ends = [f.timestamps[1] for f in a.fragments]
    return (0, max(ends)) if ends else None


# -- cells as numpy --------------------------------------------------------------------------

def _cell_dtype(f: Field) -> tuple[np.dtype, tuple[int, ...]]:
    """The numpy dtype of field ``f``'s cells as :meth:`Array.read` returns them, and the
    extra trailing shape of a multi-value cell."""
    cell = f.cell_type
    if f.var:
        return np.dtype(object), ()
    cvn = f.cell_val_num
    if cell.name in TEXT:
        return np.dtype(f"S{cvn}"), ()
    if not _numeric(cell):
        return (np.dtype(f"V{cvn * cell.dtype.itemsize}") if cvn > 1 else np.dtype(np.uint8)), ()
    return cell.dtype, ((cvn,) if cvn > 1 else ())


def _field(a: Array, name: str) -> Field:
    for f in a.dimensions + a.attributes:
        if f.name == name:
            return f
    raise InvalidArgument(f"no field '{name}' in the array (dimensions "
                          f"{[d.name for d in a.dimensions]}, attributes "
                          f"{[x.name for x in a.attributes]})")


def _meta(f: Field, ndim: int):
    dtype, cell_shape = _cell_dtype(f)
    empty = np.empty((0,) * ndim + cell_shape, dtype)
    return np.ma.masked_array(empty, mask=np.zeros(empty.shape, bool)) \
        if f.nullable and not f.var else empty


# -- dense: dask.array ----------------------------------------------------------------------

class DenseField:
    """One field of a dense array over a box, as an array-like for ``dask.array.from_array``:
    small and picklable (URI, key, config, timestamp, box), ``box[index]`` opens the array
    (cached per process) and reads the slices' box through the C API."""

    def __init__(self, uri: str, key, config, timestamp, field: str,
                 origin: Sequence[int], shape: Sequence[int], dtype: np.dtype,
                 cell_shape: tuple[int, ...], nullable: bool):
        self.uri, self.key, self.config, self.timestamp = uri, key, config, timestamp
        self.field = field
        self.origin = tuple(int(o) for o in origin)
        self.shape = tuple(int(s) for s in shape) + tuple(cell_shape)
        self.cell_shape = tuple(cell_shape)
        self.dtype = np.dtype(dtype)
        self.ndim = len(self.shape)
        self.nullable = nullable

    def __getitem__(self, index) -> np.ndarray:
        if not isinstance(index, tuple):
            index = (index,)
        nd = len(self.origin)
        spans = []
        for d, s in enumerate(index[:nd]):
            if not isinstance(s, slice) or s.step not in (None, 1):
                raise InvalidArgument(f"dimension {d}: only contiguous slices are read, not {s!r}")
            start, stop, _ = s.indices(self.shape[d])
            spans.append((start, max(start, stop)))
        spans += [(0, n) for n in self.shape[len(spans):nd]]
        box_shape = tuple(e - b for b, e in spans)
        if 0 in box_shape:
            out = np.empty(box_shape + self.cell_shape, self.dtype)
        else:
            a = open_array(self.uri, self.key, self.config, self.timestamp)
            box = [(o + b, o + e - 1) for o, (b, e) in zip(self.origin, spans)]
            out = a.read_view(self.field, box).reshape(box_shape + self.cell_shape)
        rest = index[nd:]
        return out[(slice(None),) * nd + tuple(rest)] if rest else out


def _tile_chunks(a: Array, box: Sequence[tuple[int, int]]) -> tuple[tuple[int, ...], ...]:
    """One chunk per space tile over ``box`` (the tile grid starts at the domain's low)."""
    chunks = []
    for d, (lo, hi) in enumerate(box):
        ext = a.tile_extent(d)
        n = hi - lo + 1
        if ext is None:
            chunks.append((n,))
            continue
        ext = int(_as_int(ext))
        dom_lo = int(_as_int(a.domain(d)[0]))
        first = ext - (lo - dom_lo) % ext
        sizes = [min(first, n)]
        rest = n - sizes[0]
        full, last = divmod(rest, ext)
        sizes += [ext] * full + ([last] if last else [])
        chunks.append(tuple(sizes))
    return tuple(chunks)


def _as_int(v) -> int:
    """An integer or datetime bound as a Python int (datetimes: the count of their unit)."""
    if isinstance(v, (np.datetime64, np.timedelta64)):
        return int(v.astype(np.int64))
    return int(v)


def _dense_box(a: Array, subarray) -> list[tuple[int, int]]:
    dims = a.dimensions
    for d in dims:
        if d.cell_type.dtype.kind not in "iuMm" or d.var:
            raise InvalidArgument(f"dense dimension '{d.name}' ({d.cell_type.name}) is not "
                                  "an integer or datetime dimension")
    if subarray is not None:
        a._subarray_bytes(subarray)  # the same checks (count, types, ranges) as a read
        box = [(_as_int(lo), _as_int(hi)) for lo, hi in subarray]
    else:
        # The whole domain, as from_tiledb (and TileDB-Py's A[:]) give a dense array.
        box = [(_as_int(lo), _as_int(hi)) for lo, hi in (a.domain(i) for i in range(len(dims)))]
    for d, (lo, hi) in zip(dims, box):
        if hi < lo:
            raise InvalidArgument(f"dimension '{d.name}': the range [{lo}, {hi}] is empty")
    return box


def _read_dense(a: Array, uri: str, names: list[str], single: bool, chunks, key, config,
                subarray, timestamp):
    import dask.array as da
    from dask.array.core import normalize_chunks
    from dask.base import tokenize

    box = _dense_box(a, subarray)
    shape = tuple(hi - lo + 1 for lo, hi in box)
    tiles = _tile_chunks(a, box)
    origin = [lo for lo, _ in box]
    cfg = _config_items(config)
    snap = _snapshot(a, timestamp)
    token = tokenize(str(uri), key, cfg, snap, box, chunks)
    out = {}
    for name in names:
        f = _field(a, name)
        dtype, cell_shape = _cell_dtype(f)
        if chunks is None:
            ch = tiles
        else:
            ch = normalize_chunks(chunks, shape, dtype=dtype if dtype != object else None,
                                  previous_chunks=tiles)
        ch = tuple(ch) + tuple((n,) for n in cell_shape)
        src = DenseField(str(uri), key, cfg, snap, name, origin, shape, dtype, cell_shape,
                         f.nullable)
        out[name] = da.from_array(src, chunks=ch, name=f"tdbfilter-{name}-{token}",
                                  meta=_meta(f, len(shape)), asarray=False, fancy=False,
                                  inline_array=True)
    return out[names[0]] if single else out


# -- sparse: dask.dataframe -----------------------------------------------------------------

def _next_up(v, kind: str):
    return v + 1 if kind in "iuMm" else np.nextafter(v, np.inf)


def _partition_boxes(a: Array, target: int) -> Optional[list[list[tuple[Any, Any]]]]:
    """Disjoint boxes covering the non-empty domain, about ``target`` cells each by the
    R-tree leaves' estimate (cells spread evenly over each leaf's MBR). None: one partition
    (string dimensions, or no fragment)."""
    dims = a.dimensions
    if any(d.var or not _numeric(d.cell_type) for d in dims):
        return None
    ned = a.non_empty_domain()
    if ned is None:
        return None
    kinds = [d.cell_type.dtype.kind for d in dims]
    los, his, cells = [], [], []
    for i, frag in enumerate(a.fragments):
        if frag.dense:
            continue
        for mbr, n in zip(a.tile_mbrs(i), a.tile_cell_counts(i)):
            los.append([_as_float(lo) for lo, _ in mbr])
            his.append([_as_float(hi) for _, hi in mbr])
            cells.append(float(n))
    if not cells:
        return None
    lo_t, hi_t, n_t = np.array(los), np.array(his), np.array(cells)
    # Integer coordinates count inclusively: a leaf [3, 3] spans one coordinate.
    unit = np.array([1.0 if k in "iuMm" else 0.0 for k in kinds])
    exact_box = [tuple(_exact(v, dims[d]) for v in ned[d]) for d in range(len(dims))]
    out: list[list[tuple[Any, Any]]] = []

    def estimate(box_f, idx):
        if len(idx) == 0:
            return np.zeros(0), 0.0
        l, h = lo_t[idx], hi_t[idx]
        bl, bh = box_f[:, 0], box_f[:, 1]
        width = h - l + unit
        inter = np.minimum(h, bh) - np.maximum(l, bl) + unit
        frac = np.where(width > 0, np.clip(inter / np.where(width > 0, width, 1), 0, 1),
                        (inter >= 0).astype(float))
        w = n_t[idx] * frac.prod(axis=1)
        return w, float(w.sum())

    def split(box, idx, depth):
        box_f = np.array([[_as_float(lo), _as_float(hi)] for lo, hi in box])
        w, est = estimate(box_f, idx)
        keep = idx[w > 0] if len(idx) else idx
        if est <= target or depth > 64:
            out.append(box)
            return
        w = w[w > 0]
        best = None
        for d in range(len(dims)):
            lo, hi = box[d]
            if not lo < hi:
                continue
            centers = (np.maximum(lo_t[keep, d], box_f[d, 0]) +
                       np.minimum(hi_t[keep, d], box_f[d, 1])) / 2
            order = np.argsort(centers, kind="stable")
            cum = np.cumsum(w[order])
            med = centers[order][min(int(np.searchsorted(cum, cum[-1] / 2)), len(order) - 1)]
            m = _split_value(med, lo, hi, dims[d])
            left = [b if j != d else (lo, m) for j, b in enumerate(box)]
            lf = box_f.copy()
            lf[d, 1] = _as_float(m)
            _, est_left = estimate(lf, keep)
            score = abs(2 * est_left - est)
            if best is None or score < best[0]:
                best = (score, d, m, left)
        if best is None:
            out.append(box)
            return
        _, d, m, left = best
        right = [b if j != d else (_next_up(m, kinds[d]), box[d][1]) for j, b in enumerate(box)]
        split(left, keep, depth + 1)
        split(right, keep, depth + 1)

    split(exact_box, np.arange(len(n_t)), 0)
    return out


def _as_float(v) -> float:
    if isinstance(v, (np.datetime64, np.timedelta64)):
        return float(v.astype(np.int64))
    return float(v)


def _exact(v, d: Field):
    """A bound as an exact Python value of its dimension: int for integer and datetime
    dimensions, numpy float of the dimension's width for floats."""
    kind = d.cell_type.dtype.kind
    if kind in "iuMm":
        return _as_int(v)
    return d.cell_type.dtype.type(v)


def _split_value(med: float, lo, hi, d: Field):
    """The last coordinate of the left half: ``med`` of ``d``'s type, in ``[lo, hi)``."""
    if d.cell_type.dtype.kind in "iuMm":
        return int(min(max(int(np.floor(med)), lo), hi - 1))
    t = d.cell_type.dtype.type
    m = t(med)
    if not m < hi:
        m = np.nextafter(t(hi), t(-np.inf))
    return max(m, t(lo))


class SparsePartition:
    """Reads one partition's box of a sparse array as a pandas DataFrame (picklable: URI,
    key, config, timestamp, fields)."""

    def __init__(self, uri: str, key, config, timestamp, names: list[str]):
        self.uri, self.key, self.config, self.timestamp = uri, key, config, timestamp
        self.names = names

    def __call__(self, box):
        a = open_array(self.uri, self.key, self.config, self.timestamp)
        cols = a.read(self.names, box)
        return _frame(a, self.names, cols)


def _column(f: Field, values):
    import pandas as pd

    cell = f.cell_type
    if f.var:
        if cell.name in TEXT:
            return pd.array(values, dtype="str")
        return pd.array(values, dtype=object)
    if isinstance(values, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(values)
        data = values.data
        if data.ndim == 1 and data.dtype.kind in "iu":
            return pd.arrays.IntegerArray(data, mask)
        if data.ndim == 1 and data.dtype.kind == "f":
            return pd.arrays.FloatingArray(data, mask)
        if data.ndim == 1 and data.dtype.kind == "b":
            return pd.arrays.BooleanArray(data, mask)
        if data.ndim == 1 and data.dtype.kind in "Mm":
            data = data.copy()
            data[mask] = np.array("NaT", data.dtype)
            return data
        rows = list(data) if data.ndim > 1 else data.astype(object)
        obj = np.empty(len(data), object)
        obj[:] = rows
        obj[mask if mask.ndim == 1 else mask.any(axis=1)] = None
        return pd.array(obj, dtype=object)
    if values.ndim > 1 or values.dtype.kind in "SV":
        obj = np.empty(len(values), object)
        obj[:] = list(values)
        return pd.array(obj, dtype=object)
    return values


def _frame(a: Array, names: list[str], cols: Mapping[str, Any]):
    import pandas as pd

    return pd.DataFrame({n: _column(_field(a, n), cols[n]) for n in names})


def _empty_columns(a: Array, names: list[str]) -> dict[str, Any]:
    out = {}
    for n in names:
        f = _field(a, n)
        dtype, cell_shape = _cell_dtype(f)
        empty = np.empty((0,) + cell_shape, dtype)
        out[n] = np.ma.masked_array(empty, mask=np.zeros(empty.shape, bool)) \
            if f.nullable and not f.var else empty
    return out


def _read_sparse(a: Array, uri: str, names: list[str], chunks, key, config, subarray,
                 timestamp):
    import dask.dataframe as dd

    if chunks is not None and (not isinstance(chunks, (int, np.integer)) or chunks <= 0):
        raise InvalidArgument(f"sparse arrays: chunks is the number of cells per partition "
                              f"(a positive int), not {chunks!r}")
    target = int(chunks) if chunks is not None else DEFAULT_PARTITION_CELLS
    if subarray is not None:
        raise InvalidArgument("sparse arrays: subarray= is not supported (filter the "
                              "dataframe on its coordinate columns)")
    boxes = _partition_boxes(a, target)
    cfg = _config_items(config)
    snap = _snapshot(a, timestamp)
    meta = _frame(a, names, _empty_columns(a, names))
    part = SparsePartition(str(uri), key, cfg, snap, names)
    return dd.from_map(part, boxes if boxes is not None else [None], meta=meta,
                       label="tdbfilter-sparse", enforce_metadata=False)


# -- public ----------------------------------------------------------------------------------

def read(uri: str, field: Union[str, Sequence[str], None] = None, chunks=None, key=None,
         config: Optional[Mapping[str, Any]] = None,
         subarray: Optional[Sequence[tuple[Any, Any]]] = None, timestamp=None):
    """A TileDB array as Dask collections (see the module's documentation).

    Dense: ``field`` a name → a ``dask.array.Array`` of the cells of ``subarray`` (default
    the whole domain, as ``dask.array.from_tiledb``), chunked by space tile (``chunks=None``) or as given; ``field`` a list
    (or None on a multi-attribute array) → ``{name: dask array}``. Sparse: a
    ``dask.dataframe.DataFrame`` of the dimensions and ``field``'s attributes (default all),
    ``chunks`` cells per partition (default 1,000,000). ``key``: an encrypted array's key;
    ``config``: object-store settings passed to :class:`tdbfilter.Array`; ``timestamp``: open
    the array at ``end`` or ``(start, end)`` milliseconds (default: the fragments visible now).
    """
    with _open(str(uri), key, _config_items(config), timestamp) as a:
        if a.sparse:
            dims = [d.name for d in a.dimensions]
            if field is None:
                attrs = [x.name for x in a.attributes]
            else:
                attrs = [field] if isinstance(field, str) else list(field)
            names = dims + [n for n in attrs if n not in dims]
            for n in names:
                _field(a, n)
            return _read_sparse(a, uri, names, chunks, key, config, subarray, timestamp)
        if field is None:
            names = [x.name for x in a.attributes]
            single = len(names) == 1
        else:
            single = isinstance(field, str)
            names = [field] if single else list(field)
        for n in names:
            _field(a, n)
        return _read_dense(a, uri, names, single, chunks, key, config, subarray, timestamp)


def _store_chunk(block, uri: str, key, config, origin, block_info=None):
    """Writes one chunk as its own fragment (one commit): a Dask task."""
    from . import Array as _Array  # the writer: Array(uri, mode="w")

    loc = block_info[0]["array-location"]
    kwargs: dict[str, Any] = {"mode": "w"}
    if key is not None:
        kwargs["key"] = key
    if config:
        kwargs["config"] = dict(config)
    index = tuple(slice(o + b, o + e) for o, (b, e) in zip(origin, loc))
    with _Array(uri, **kwargs) as arr:
        arr[index] = np.ascontiguousarray(block)
    return np.ones((1,) * block.ndim, np.int64)


def write(darray, uri: str, key=None, config: Optional[Mapping[str, Any]] = None,
          origin: Optional[Sequence[int]] = None, compute: bool = True):
    """Writes a ``dask.array.Array`` into the existing dense array at ``uri``, one fragment
    (and one commit) per chunk, written by the worker that computed the chunk (as
    ``dask.array.to_tiledb`` does).

    ``origin``: the coordinates of the dask array's index 0 on each dimension (default: the
    domain's low). Chunks must cover whole space tiles (every chunk boundary on a tile
    boundary, so that no two fragments share a tile); other chunks are rechunked to the
    tiles first. ``compute=False`` returns the writes as a lazy dask array (one int per
    chunk) to compute later."""
    import dask.array as da

    if darray.ndim == 0:
        raise InvalidArgument("write: a 0-d array has no dimensions to write along")
    with _open(str(uri), key, _config_items(config), None) as a:
        if a.sparse:
            raise InvalidArgument(f"write: {uri} is a sparse array; dask.write writes dense "
                                  "arrays")
        if len(a.dimensions) != darray.ndim:
            raise InvalidArgument(f"write: the dask array has {darray.ndim} axes, {uri} has "
                                  f"{len(a.dimensions)} dimensions")
        if origin is None:
            org = [_as_int(a.domain(d)[0]) for d in range(darray.ndim)]
        else:
            org = [int(o) for o in origin]
        box = [(o, o + n - 1) for o, n in zip(org, darray.shape)]
        a._subarray_bytes(box)  # every coordinate written lies in the dimensions' types
        tiles = _tile_chunks(a, box)
    # Each chunk must cover whole tiles so that fragments never share a tile.
    if not all(_covers_whole_tiles(c, t) for c, t in zip(darray.chunks, tiles)):
        darray = darray.rechunk(tiles)
    out = da.map_blocks(_store_chunk, darray, str(uri), key, _config_items(config), org,
                        dtype=np.int64, chunks=tuple((1,) * len(c) for c in darray.chunks),
                        name=f"tdbfilter-write-{uuid.uuid4().hex}")
    if compute:
        out.compute()
        return None
    return out


def _covers_whole_tiles(chunks: tuple[int, ...], tiles: tuple[int, ...]) -> bool:
    """Whether every chunk boundary is a tile boundary."""
    tile_edges = set(np.cumsum(tiles).tolist())
    return all(e in tile_edges for e in np.cumsum(chunks).tolist())
