"""TileDB-Py's arrays over tdbfilter: ``open``, ``Array``/``DenseArray``/``SparseArray``,
``Array.create``, ``array_exists``, ``object_type``, ``remove``, ``from_numpy``, ``A.meta``,
``array_fragments``."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import time
from collections import OrderedDict
from ctypes import byref, c_size_t
from typing import Any, Optional

import numpy as np

from .. import write as _write
from .._ffi import call as _call
from .._ffi import lib
from ..array import Array as _Inner
from ..errors import TdbfilterError as TileDBError
from . import _stats
from ._index import DataFrameIndexer, MultiRangeIndexer, Query
from ._schema import ArraySchema, Attr

_U64_MAX = 2**64 - 1


def _key(key, config=None, ctx=None):
    """The encryption key: ``key``, else the ``sm.encryption_key`` of ``config`` or ``ctx``
    (when its ``sm.encryption_type`` is AES_256_GCM), as TileDB-Py takes it."""
    if key is not None:
        return key
    from .ctx import Config, default_ctx

    for c in (config, (ctx if ctx is not None else default_ctx()).config()):
        if c is None:
            continue
        cfg = c if isinstance(c, Config) else Config(c)
        if cfg.get("sm.encryption_type", "NO_ENCRYPTION") == "AES_256_GCM" and \
                cfg.get("sm.encryption_key"):
            return cfg.get("sm.encryption_key")
    return None


def _check_ctx(ctx) -> None:
    from .ctx import Ctx

    if ctx is not None and not isinstance(ctx, Ctx):
        raise TypeError(f"expected a tiledb.Ctx, not {type(ctx).__name__}")


def _config_dict(config, ctx) -> Optional[dict]:
    from .ctx import _storage_config

    return _storage_config(config, ctx)


def _timestamps(timestamp):
    """TileDB-Py's ``timestamp`` (``t``, ``(t1, t2)``, ``(None, t)``, ``(t, None)``) as the
    binding's (start, end)."""
    if timestamp is None:
        return None
    if isinstance(timestamp, tuple):
        if len(timestamp) != 2:
            raise TileDBError("'timestamp' argument expects tuple(start: int, end: int)")
        lo, hi = timestamp
        lo = 0 if lo is None else int(lo)
        hi = _U64_MAX if hi is None else int(hi)
        return (lo, hi)
    if isinstance(timestamp, (int, np.integer)):
        return (0, int(timestamp))
    raise TypeError("Unexpected argument type for 'timestamp' keyword argument")


def _schema_json(inner: _Inner) -> dict:
    L, h = lib(), inner._handle()
    size = c_size_t()
    err = ctypes.c_void_p()
    L.tdb_array_schema_json(h, None, 0, byref(size), byref(err))
    if err:
        L.tdb_error_free(err)
    buf = ctypes.create_string_buffer(size.value)
    _call(L.tdb_array_schema_json, h, buf, size.value, byref(size))
    return json.loads(buf.value.decode())


def _open_inner(uri, mode, key, timestamp, config, threads: int = 0) -> _Inner:
    """The binding's array; ``threads``: ``sm.compute_concurrency_level`` (0: all cores)."""
    try:
        if mode == "w":
            ts = timestamp
            if isinstance(ts, tuple):
                ts = ts[1]
            return _Inner(str(uri), mode="w", key=key, timestamp=ts, config=config,
                          threads=threads)
        return _Inner(str(uri), key=key, timestamp=_timestamps(timestamp), config=config,
                      threads=threads)
    except TileDBError as e:
        raise TileDBError(f"[TileDB::Array] Error: Cannot open array '{uri}': {e}") from e


def _schema_of(uri, key=None, ctx=None) -> ArraySchema:
    inner = _open_inner(uri, "r", _key(key, None, ctx), None, _config_dict(None, ctx))
    try:
        return ArraySchema._from_json(_schema_json(inner))
    finally:
        inner.close()


class DeleteQuery:
    """``A.query(cond=...)`` of an array opened in mode ``"d"``: ``submit()`` deletes the
    cells matching the condition (a commit at the array's opening timestamp, or now)."""

    def __init__(self, array, cond):
        from ._index import _cond_text

        self.array = array
        self.cond = _cond_text(cond)

    def submit(self) -> None:
        from ._lifecycle import delete_cells

        a = self.array
        a._open()
        if self.cond is None:
            raise TileDBError("Cannot initialize deletes; One condition is needed")
        ts = a._timestamp
        if isinstance(ts, tuple):
            ts = ts[1]
        delete_cells(a.uri, self.cond, ts, a._key, a._config)


class Array:
    """An open TileDB array (TileDB-Py's ``tiledb.Array``; ``tiledb.open`` returns its
    ``DenseArray`` or ``SparseArray`` subclass)."""

    def __new__(cls, uri=None, *args, **kwargs):
        if cls is Array and uri is not None:
            sparse = _schema_of(uri, _key(kwargs.get("key"), kwargs.get("config"),
                                          kwargs.get("ctx")), kwargs.get("ctx")).sparse
            cls = SparseArray if sparse else DenseArray
        return object.__new__(cls)

    def __init__(self, uri, mode: str = "r", key=None, timestamp=None, attr=None,
                 config=None, ctx=None):
        if mode not in ("r", "w", "d", "m"):
            raise TileDBError(f"TileDB array mode must be 'r', 'w', 'm', or 'd', not {mode!r}")
        if mode == "m":
            raise TileDBError("mode 'm' (modify-exclusive) is not supported by tdbfilter's "
                              "TileDB-Py API yet")
        _check_ctx(ctx)
        self._uri = str(uri)
        self._mode = mode
        key = _key(key, config, ctx)
        self._key = key
        self._ctx = ctx
        self._timestamp = timestamp
        self._config = _config_dict(config, ctx)
        from .ctx import _threads

        self._threads = _threads(config, ctx)
        self._inner = _open_inner(uri, mode, key, timestamp, self._config, self._threads)
        self._schema = ArraySchema._from_json(_schema_json(self._inner))
        if isinstance(self, DenseArray) and self._schema.sparse:
            self._inner.close()
            raise ValueError(f"Array at {uri} is not a dense array")
        if isinstance(self, SparseArray) and not self._schema.sparse:
            self._inner.close()
            raise ValueError(f"Array at '{uri}' is not a sparse array")
        if attr is not None and not self._schema.has_attr(attr):
            self._inner.close()
            raise KeyError(attr)
        self._view_attr = attr
        self._meta = None

    # -- creation ----------------------------------------------------------------------------
    @classmethod
    def create(cls, uri, schema: ArraySchema, key=None, overwrite: bool = False, ctx=None):
        if not isinstance(schema, ArraySchema):
            raise TypeError("schema must be a tiledb.ArraySchema")
        if issubclass(cls, DenseArray) and schema.sparse:
            raise ValueError("Array.create `schema` argument must be a dense schema for "
                             "DenseArray and subclasses")
        if issubclass(cls, SparseArray) and not schema.sparse:
            raise ValueError("Array.create `schema` argument must be a sparse schema for "
                             "SparseArray and subclasses")
        _check_ctx(ctx)
        key = _key(key, None, ctx)
        if overwrite and os.path.isdir(str(uri)):
            shutil.rmtree(str(uri))
        elif overwrite:
            import warnings

            warnings.warn("Overwrite set, but array does not exist", UserWarning, stacklevel=2)
        _write.create(str(uri), schema._json(), key, _config_dict(None, ctx))

    @classmethod
    def load_typed(cls, uri, *args, **kwargs):
        return open(uri, *args, **kwargs)

    # -- life cycle --------------------------------------------------------------------------
    def close(self) -> None:
        if getattr(self, "_inner", None) is not None:
            self._inner.close()
            self._inner = None

    def reopen(self, timestamp=None) -> None:
        if self._inner is None:
            raise TileDBError("Cannot reopen array; Array is not open")
        self.close()
        if timestamp is not None:
            self._timestamp = timestamp
        elif self._timestamp is not None:
            # TileDB reopens at the current time (a start stays)
            ts = self._timestamp
            self._timestamp = (ts[0], None) if isinstance(ts, tuple) and ts[0] is not None \
                else None
        self._inner = _open_inner(self._uri, self._mode, self._key, self._timestamp,
                                  self._config, self._threads)
        self._schema = ArraySchema._from_json(_schema_json(self._inner))

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()

    def __del__(self) -> None:
        inner = getattr(self, "_inner", None)
        if inner is not None:
            try:
                inner.close()
            except Exception:
                pass

    @property
    def isopen(self) -> bool:
        return self._inner is not None

    def _open(self) -> _Inner:
        if self._inner is None:
            raise TileDBError("Array is not opened")
        return self._inner

    # -- facts ---------------------------------------------------------------------------------
    @property
    def schema(self) -> ArraySchema:
        if getattr(self, "_inner", None) is None:
            raise TileDBError("Cannot get array schema; Array is not open")
        return self._schema

    @property
    def uri(self) -> str:
        return self._uri

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def iswritable(self) -> bool:
        return self._mode == "w"

    @property
    def ctx(self):
        from .ctx import default_ctx

        return self._ctx if self._ctx is not None else default_ctx()

    @property
    def view_attr(self):
        return self._view_attr

    @property
    def ndim(self) -> int:
        return self._schema.ndim

    @property
    def nattr(self) -> int:
        return self._schema.nattr

    @property
    def domain(self):
        return self._schema.domain

    @property
    def shape(self):
        return self._schema.shape

    @property
    def dtype(self):
        return self._schema.attr(self._view_attr if self._view_attr is not None else 0).dtype

    @property
    def key(self):
        return self._key

    @property
    def timestamp_range(self):
        ts = _timestamps(self._timestamp)
        if ts is None:
            frs = self._open().fragments
            end = max((f.timestamps[1] for f in frs), default=0)
            import time

            return (0, max(end, int(time.time() * 1000)))
        return ts

    def attr(self, key):
        return self._schema.attr(key)

    def dim(self, key):
        return self._schema.domain.dim(key)

    def enum(self, name: str):
        """The enumeration ``name`` with its values."""
        return self._schema.enum(name)

    def label_index(self, labels):
        raise TileDBError("dimension labels are not supported by tdbfilter's TileDB-Py API yet")

    def dump(self) -> None:
        self._schema.dump()

    def __repr__(self) -> str:
        kind = "SparseArray" if self._schema.sparse else "DenseArray"
        if self.isopen:
            return f"{kind}(uri={self._uri!r}, mode={self._mode}, ndim={self.ndim})"
        return f"{kind}(uri={self._uri!r}, mode=closed)"

    def nonempty_domain(self):
        inner = self._open()
        if self._mode != "r":
            raise TileDBError("nonempty_domain is available in read mode")
        ned = inner.non_empty_domain()
        if ned is None:
            # TileDB-Py walks the dimensions: an empty string one is (None, None), an empty
            # fixed-size one makes the whole None
            out = []
            for d in self._schema.domain:
                if not d.isvar:
                    return None
                out.append((None, None))
            return tuple(out)
        out = []
        for d, (lo, hi) in zip(self._schema.domain, ned):
            if d.isvar:
                out.append((bytes(lo), bytes(hi)))
            elif d.dtype.kind == "M":
                unit = np.datetime_data(d.dtype)[0]
                out.append((np.datetime64(int(np.int64(lo.view(np.int64))), unit),
                            np.datetime64(int(np.int64(hi.view(np.int64))), unit)))
            else:
                out.append((d.dtype.type(lo).item(), d.dtype.type(hi).item()))
        return tuple(out)

    # -- metadata --------------------------------------------------------------------------------
    @property
    def meta(self):
        from ._meta import Metadata

        if self._meta is None:
            self._meta = Metadata(self)
        return self._meta

    # -- reads -----------------------------------------------------------------------------------
    def _readable(self) -> _Inner:
        inner = self._open()
        if self._mode != "r":
            kind = "Sparse Arrays" if self._schema.sparse else "Dense Arrays"
            raise TileDBError(f"Write mode is not supported for queries on {kind}"
                              if self._mode == "w" else "Array is not opened for reading")
        return inner

    def _attr_names(self, attrs=None):
        if self._view_attr is not None and attrs is None:
            return [self._view_attr]
        if attrs is None:
            return [a.name for a in self._schema._attrs]
        names = []
        for a in attrs:
            if isinstance(a, (int, np.integer)):
                names.append(self._schema.attr(a).name)
            elif self._schema.has_attr(a) or self._schema.domain.has_dim(a):
                names.append(a)
            else:
                raise TileDBError(f"Selected attribute does not exist: '{a}'")
        return names

    def __getitem__(self, selection):
        self._readable()
        return Query(self)._getitem(selection, enum_values=self._view_attr is None)

    def subarray(self, selection, attrs=None, coords=False, order=None, cond=None):
        return Query(self, attrs=attrs, coords=coords, order=order, cond=cond)[selection]

    def query(self, attrs=None, cond=None, dims=None, coords=None, order=None,
              use_arrow=None, return_arrow=False, return_incomplete=False, index_col=True,
              has_coords=False, attr_cond=None):
        if self._mode == "d":
            self._open()
            if not self._schema.sparse:
                raise TileDBError("Delete mode is not supported for queries on Dense Arrays")
            return DeleteQuery(self, cond)
        self._readable()
        if attr_cond is not None:
            raise TileDBError("attr_cond is removed in TileDB-Py 0.36; use cond")
        if return_incomplete and not self._schema.sparse:
            raise TileDBError("Incomplete queries are only supported for sparse arrays at "
                              "this time")
        if return_arrow:
            if use_arrow is None:
                use_arrow = True
            if not use_arrow:
                raise TileDBError("Cannot initialize return_arrow with use_arrow=False")
        return Query(self, attrs=attrs, cond=cond, dims=dims, coords=coords, order=order,
                     index_col=index_col, has_coords=has_coords, use_arrow=use_arrow,
                     return_arrow=return_arrow, return_incomplete=return_incomplete)

    @property
    def multi_index(self):
        self._readable()
        return MultiRangeIndexer(self)

    @property
    def df(self):
        self._readable()
        return DataFrameIndexer(self)

    # -- writes ------------------------------------------------------------------------------------
    def __setitem__(self, selection, value) -> None:
        inner = self._open()
        if self._mode != "w":
            raise TileDBError("Array is not opened for writing")
        from ._write import write

        before = len(inner.written_fragments)
        start = time.perf_counter()
        write(self, inner, selection, value)
        self._last_written = inner.written_fragments[before:]
        _stats.record_write(len(self._last_written), time.perf_counter() - start)

    @property
    def last_write_info(self):
        """TileDB-Py's ``last_write_info``: fragment URI -> (start, end) timestamps of the
        fragments the last write made (None before any)."""
        names = getattr(self, "_last_written", None)
        if names is None:
            return None
        out = OrderedDict()
        for n in names:
            parts = os.path.basename(n).split("_")
            out[os.path.join(self._uri, "__fragments", os.path.basename(n))] = \
                (int(parts[2]), int(parts[3]))
        return out

    def consolidate(self, config=None, key=None, fragment_uris=None, timestamp=None) -> None:
        """Consolidates this array's fragments (TileDB-Py's ``Array.consolidate``): as
        ``tiledb.consolidate`` with ``config`` (None: the context's) and ``key``."""
        import warnings

        from ._lifecycle import _consolidate
        from .ctx import Config

        if self._mode == "r":
            raise TileDBError("cannot consolidate array opened in readonly mode (mode='r')")
        config = Config(config or self.ctx.config())
        if key is not None:
            config["sm.encryption_type"] = "AES_256_GCM"
            config["sm.encryption_key"] = key.decode() if isinstance(key, bytes) else key
        if fragment_uris is not None:
            if timestamp is not None:
                warnings.warn("The `timestamp` argument will be ignored and only fragments "
                              "passed to `fragment_uris` will be consolidate",
                              DeprecationWarning, stacklevel=2)
            _consolidate(self.uri, config, self._ctx, fragment_uris=fragment_uris)
            return
        if timestamp is not None:
            warnings.warn("The `timestamp` argument is deprecated; pass a list of fragment URIs "
                          "to consolidate with `fragment_uris`", DeprecationWarning, stacklevel=2)
        _consolidate(self.uri, config, self._ctx, timestamp=timestamp)

    # -- not built yet -----------------------------------------------------------------------------

    @staticmethod
    def delete_fragments(uri, timestamp_start, timestamp_end, ctx=None):
        """Deletes the fragments of the array at ``uri`` (or of this array, when called on
        one) whose timestamps lie inside [timestamp_start, timestamp_end]."""
        from ._lifecycle import delete_fragments

        if isinstance(uri, Array):
            uri, ctx = uri.uri, ctx or uri._ctx
        delete_fragments(uri, timestamp_start, timestamp_end, ctx=ctx)

    @staticmethod
    def delete_array(uri, ctx=None):
        """Removes the array at ``uri``: what TileDB made in its folder."""
        from ._lifecycle import delete_array

        if isinstance(uri, Array):
            uri, ctx = uri.uri, ctx or uri._ctx
        delete_array(uri, ctx=ctx)

    def upgrade_version(self, config=None) -> None:
        """Upgrades the array to the current format version (``tdb_array_upgrade_version``):
        an older array's newest schema is written again at the current version; its data
        stays. ``config`` (None: the context's) gives the storage options and the key."""
        key = _write.key_bytes(_key(self._key, config, self._ctx)) or b""
        with _write.config_handle(_config_dict(config, self._ctx)) as cfg:
            try:
                _call(lib().tdb_array_upgrade_version, self._uri.encode(), key or None,
                      len(key), 0, cfg)
            except TileDBError as e:
                raise TileDBError(f"[TileDB::Array] Error: {e}") from e

    # -- subarrays, pickling -------------------------------------------------------------------
    def read_subarray(self, subarray):
        """The cells of a ``tiledb.Subarray``'s ranges (see ``_subarray.read_subarray``)."""
        from ._subarray import read_subarray

        return read_subarray(self, subarray)

    def __getstate__(self):
        from ._pickle import array_state

        return array_state(self)

    def __setstate__(self, state):
        from ._pickle import restore_array

        restore_array(self, state)


class DenseArray(Array):
    """A dense array (TileDB-Py's ``tiledb.DenseArray``)."""

    def __len__(self) -> int:
        return self.domain.shape[0]

    def __array__(self, dtype=None, **kw):
        """The whole domain of the single (or viewed) attribute as numpy."""
        if self.view_attr is None and self.nattr > 1:
            raise ValueError("cannot call __array__ for TileDB array with more than one "
                             "attribute")
        out = self.read_direct(self.view_attr or self.schema.attr(0).name)
        return out.astype(dtype) if dtype and out.dtype != dtype else out

    def write_direct(self, array, **kw) -> None:
        """Writes a contiguous numpy array of the single attribute (see
        ``_write.write_direct``)."""
        from ._write import write_direct

        write_direct(self, array, **kw)

    def _setitem_impl(self, selection, val, nullmaps: dict) -> None:
        """``A[selection] = val`` with validity maps (name -> 0 for null, per cell)."""
        from ._write import write

        if not self.isopen or self._mode != "w":
            raise TileDBError("DenseArray is not opened for writing")
        write(self, self._inner, selection, val, nullmaps)

    def write_subarray(self, subarray, values) -> None:
        """Writes ``values`` into a ``tiledb.Subarray``'s box (one range per dimension)."""
        from ._subarray import write_subarray

        write_subarray(self, subarray, values)

    def read_direct(self, name: str = None):
        """The whole domain of attribute ``name`` (None: the only one) as numpy."""
        if name is None:
            if self.schema.nattr != 1:
                raise ValueError("read_direct with no provided attribute is ambiguous for "
                                 "multi-attribute arrays")
            name = self.schema.attr(0).name
        res = self.query(attrs=[name])[:]
        return res[name] if isinstance(res, dict) else res


class SparseArray(Array):
    """A sparse array (TileDB-Py's ``tiledb.SparseArray``)."""

    def __len__(self) -> int:
        raise TypeError("SparseArray length is ambiguous; use shape[0]")

    def unique_dim_values(self, dim=None):
        """TileDB-Py's ``unique_dim_values``: the sorted distinct coordinates of ``dim`` (a
        tuple), or of every dimension (an OrderedDict name -> tuple)."""
        if dim is not None and not isinstance(dim, str):
            raise ValueError(f"Given Dimension {dim} is not a string.")
        if dim is not None and not self._schema.domain.has_dim(dim):
            raise ValueError(f"Array does not contain Dimension '{dim}'.")
        res = self.query(attrs=[])[:]
        if dim:
            return tuple(np.unique(res[dim]))
        return OrderedDict((d, tuple(np.unique(v))) for d, v in res.items())


def open(uri, mode: str = "r", key=None, attr=None, config=None, timestamp=None, ctx=None):
    """Opens an array (TileDB-Py's ``tiledb.open``)."""
    return Array(uri, mode=mode, key=key, attr=attr, config=config, timestamp=timestamp,
                 ctx=ctx)


def object_type(uri, ctx=None) -> Optional[str]:
    """"array", "group" or None (local folders)."""
    p = str(uri)
    if p.startswith("file://"):
        p = p[len("file://"):]
    if os.path.isdir(os.path.join(p, "__schema")) or os.path.isfile(
            os.path.join(p, "__array_schema.tdb")):
        return "array"
    if os.path.isfile(os.path.join(p, "__tiledb_group.tdb")) or os.path.isdir(
            os.path.join(p, "__group")):
        return "group"
    return None


def array_exists(uri, isdense: bool = False, issparse: bool = False, ctx=None) -> bool:
    if object_type(uri, ctx) != "array":
        return False
    if not (isdense or issparse):
        return True
    sparse = _schema_of(uri, ctx=ctx).sparse
    return (isdense and not sparse) or (issparse and sparse)


def remove(uri, ctx=None) -> None:
    p = str(uri)
    if object_type(p) is None:
        raise TileDBError(f"Cannot remove {uri!r}: not a TileDB object")
    shutil.rmtree(p[len("file://"):] if p.startswith("file://") else p)


def schema_like(*args, shape=None, dtype=None, ctx=None, **kwargs):
    """TileDB-Py's ``schema_like``: the dense schema of a numpy-like array (or of ``shape``
    and ``dtype``): one anonymous attribute of its dtype, dimensions ``[0, n - 1]`` of
    ``dim_dtype`` (uint64) tiled by ``tile`` (default: the whole dimension)."""
    from ._schema import Dim, Domain

    dim_dtype = np.dtype(kwargs.pop("dim_dtype", np.uint64))
    tile = kwargs.pop("tile", None)
    if len(args) == 1:
        arr = args[0]
        if not all(hasattr(arr, a) for a in ("shape", "dtype", "ndim")):
            raise ValueError("expected ndarray-like object")
        shape = tuple(arr.shape)
        if arr.dtype == object:
            first = arr.flat[0] if arr.size else ""
            dtype = np.dtype("U") if isinstance(first, str) else np.dtype("S")
        else:
            dtype = arr.dtype
        kwargs = {}
    elif shape and dtype is not None:
        if np.issubdtype(np.bytes_, dtype):
            dtype = np.dtype("S")
        elif np.issubdtype(dtype, np.str_):
            dtype = np.dtype("U")
    else:
        raise ValueError("Must provide either ndarray-like object or 'shape' and 'dtype' "
                         "keyword arguments")
    ndim = len(shape)
    tiles = None if tile is None else (tuple(tile) if isinstance(tile, (tuple, list)) else
                                       (tile,) * ndim)
    if tiles is not None and len(tiles) != ndim:
        raise ValueError("'tile' argument must be iterable and match array dimensionality")
    dims = [Dim(domain=(0, shape[d] - 1), tile=tiles[d] if tiles else shape[d],
                dtype=dim_dtype, ctx=ctx) for d in range(ndim)]
    return ArraySchema(domain=Domain(*dims), attrs=(Attr(dtype=dtype, ctx=ctx),), ctx=ctx,
                       **kwargs)


def from_numpy(uri, array, config=None, ctx=None, **kwargs):
    """TileDB-Py's ``from_numpy``: a dense array holding ``array`` (``mode`` "ingest"
    creates it, "schema_only" only creates, "append" writes into an existing one)."""
    from ._schema import Dim, Domain

    mode = kwargs.pop("mode", "ingest")
    timestamp = kwargs.pop("timestamp", None)
    full_domain = kwargs.pop("full_domain", False)
    tile = kwargs.pop("tile", None)
    attr_name = kwargs.pop("attr_name", "")
    dim_dtype = np.dtype(kwargs.pop("dim_dtype", np.uint64))
    filters = kwargs.pop("filters", None)
    append_dim = kwargs.pop("append_dim", 0)
    start_idx = kwargs.pop("start_idx", None)
    arr = np.asarray(array) if not isinstance(array, np.ndarray) else array
    if mode not in ("ingest", "schema_only", "append"):
        raise TileDBError(f"Invalid mode specified ('{mode}')")
    if mode in ("ingest", "schema_only"):
        if not isinstance(uri, str) and not hasattr(uri, "__fspath__"):
            raise TypeError("uri must be a str")
        dims = []
        for d in range(arr.ndim):
            ext = tile if tile is None or isinstance(tile, (int, np.integer)) else tile[d]
            if full_domain:
                info = np.iinfo(dim_dtype)
                dom = (info.min, info.max - (ext or arr.shape[d]))
            else:
                dom = (0, arr.shape[d] - 1)
            dims.append(Dim(name=f"__dim_{d}", domain=dom,
                            tile=ext if ext is not None else arr.shape[d], dtype=dim_dtype))
        if arr.dtype == object:
            first = arr.flat[0] if arr.size else ""
            adt: Any = np.dtype("U") if isinstance(first, str) else np.dtype("S")
        else:
            adt = arr.dtype
        attr = Attr(attr_name, dtype=adt, filters=filters)
        schema = ArraySchema(Domain(*dims), (attr,), sparse=False, **{
            k: kwargs.pop(k) for k in list(kwargs) if k in (
                "cell_order", "tile_order", "capacity", "coords_filters",
                "offsets_filters", "validity_filters")})
        Array.create(uri, schema, ctx=ctx)
    if kwargs:
        raise TileDBError(f"from_numpy: unsupported arguments {sorted(kwargs)}")
    if mode == "schema_only":
        return DenseArray(uri, mode="r", ctx=ctx)
    with DenseArray(uri, mode="w", timestamp=timestamp, ctx=ctx) as A:
        if mode == "append":
            A.write_direct(np.ascontiguousarray(arr), mode="append", append_dim=append_dim,
                           start_idx=start_idx)
        else:
            A[tuple(slice(0, n) for n in arr.shape)] = arr
    return DenseArray(uri, mode="r", ctx=ctx)
