"""xarray backend: ``xr.open_dataset("array", engine="tdbfilter")`` opens a dense or sparse
TileDB array lazily, without libtiledb.

- Each dimension is a dimension coordinate holding its coordinates over the box read (the
  whole domain by default, as TileDB's own xarray backends (TileDB-xarray, TileDB-CF-Py) and
  ``dask.array.from_tiledb`` give a dense array; ``subarray=[(lo, hi), ...]`` for another box,
  the non-empty domain for example): ``lo, lo+1, …``
  (``datetime64`` of the dimension's unit for datetime dimensions).
- Each attribute is a data variable over the dimensions (a multi-value attribute has one
  more dimension, ``<attribute>_cell``), read only when indexed or loaded, through the C
  API (the box of the requested slices). Nullable numeric attributes come as floats with
  NaN for null (integers promoted to float64, as xarray's masking does), var-size ones as
  object arrays with None.
- A sparse array becomes a dataset of its cells (those of ``subarray``, default all, in
  TileDB's global order, as :meth:`tdbfilter.Array.read` gives them): a 1-D array is indexed
  by its dimension (the dataset's dimension and index coordinate are the dimension's
  coordinates: ``ds.sel(x=...)`` selects cells by coordinate); an N-D array has one
  dimension ``cell`` and each TileDB dimension as a coordinate over it
  (``ds.set_index(cell=["x", "y"])`` makes them a multi-index). The coordinates are read
  when the dataset is opened, each attribute when first loaded (the same cells: the array
  is read at the timestamp of its newest fragment at opening).
- The array metadata becomes the dataset's ``attrs``; each variable's ``encoding`` holds
  ``preferred_chunks`` (the space tiles), so ``chunks={}`` gives tile-aligned dask chunks.

Options: ``key`` (encrypted arrays), ``config`` (object-store settings for
:class:`tdbfilter.Array`), ``subarray``, ``timestamp``. The entry point is declared in the
package's ``xarray.backends`` entry points.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Optional

import numpy as np
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.core import indexing
import xarray as xr

from .dask import (DenseField, _cell_dtype, _config_items, _dense_box, _open, _snapshot,
                   _tile_chunks)
from .errors import InvalidArgument

__all__ = ["TdbfilterBackendEntrypoint", "TdbfilterBackendArray"]


def _null_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype that holds NaN for null cells of ``dtype``."""
    if dtype.kind == "f":
        return dtype
    if dtype.kind in "iub":
        return np.dtype(np.float64)
    return dtype


class TdbfilterBackendArray(BackendArray):
    """One attribute of a dense array over a box, read lazily (basic indexing: integers and
    slices; a stepped slice reads the box it spans and steps in memory)."""

    def __init__(self, source: DenseField):
        self.source = source
        self.shape = source.shape
        self.dtype = _null_dtype(source.dtype) if source.nullable and source.dtype != object \
            else source.dtype

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.BASIC, self._raw_indexing_method)

    def _raw_indexing_method(self, key: tuple) -> np.ndarray:
        nd = len(self.source.origin)
        boxes, after = [], []
        for axis, k in enumerate(key):
            n = self.shape[axis]
            if isinstance(k, (int, np.integer)):
                i = int(k) + n if k < 0 else int(k)
                boxes.append(slice(i, i + 1))
                after.append(0)
            else:
                start, stop, step = k.indices(n)
                if step > 0:
                    boxes.append(slice(start, max(start, stop)))
                    after.append(slice(None, None, step))
                else:
                    lo = stop + 1 if stop < start else start
                    boxes.append(slice(lo, start + 1))
                    after.append(slice(None, None, step))
        read_key = tuple(boxes[:nd]) + tuple(boxes[nd:])
        return _nan_for_null(self.source[read_key], self.dtype)[tuple(after)]


class TdbfilterBackendEntrypoint(BackendEntrypoint):
    """``engine="tdbfilter"``: TileDB arrays as lazy xarray datasets."""

    description = "Open dense and sparse TileDB arrays with tdbfilter (no libtiledb)"
    url = "https://github.com/tdbfilter/tdbfilter"
    open_dataset_parameters = ("filename_or_obj", "drop_variables", "key", "config",
                               "subarray", "timestamp")

    def open_dataset(self, filename_or_obj, *, drop_variables: Optional[Iterable[str]] = None,
                     key=None, config=None, subarray=None, timestamp=None) -> xr.Dataset:
        uri = os.fspath(filename_or_obj) if not isinstance(filename_or_obj, str) \
            else filename_or_obj
        drop = set(drop_variables or ())
        cfg = _config_items(config)
        with _open(uri, key, cfg, timestamp) as a:
            if a.sparse:
                return _open_sparse(a, uri, key, cfg, subarray, timestamp, drop)
            box = _dense_box(a, subarray)
            snap = _snapshot(a, timestamp)
            tiles = _tile_chunks(a, box)
            shape = tuple(hi - lo + 1 for lo, hi in box)
            dims = [d.name for d in a.dimensions]
            coords = {}
            for d, (lo, hi) in zip(a.dimensions, box):
                dt = d.cell_type.dtype
                coords[d.name] = np.arange(lo, hi + 1, dtype=np.int64).astype(dt) \
                    if dt.kind in "Mm" else np.arange(lo, hi + 1, dtype=dt)
            data_vars = {}
            for f in a.attributes:
                if f.name in drop:
                    continue
                dtype, cell_shape = _cell_dtype(f)
                src = DenseField(uri, key, cfg, snap, f.name, [lo for lo, _ in box], shape,
                                 dtype, cell_shape, f.nullable)
                var_dims = dims + [f"{f.name}_cell"] * len(cell_shape)
                preferred = {dim: c[0] for dim, c in zip(dims, tiles)}
                preferred.update({dim: n for dim, n in zip(var_dims[len(dims):], cell_shape)})
                data = indexing.LazilyIndexedArray(TdbfilterBackendArray(src))
                data_vars[f.name] = xr.Variable(var_dims, data,
                                                encoding={"preferred_chunks": preferred})
            attrs = _attrs(a.metadata)
        ds = xr.Dataset(data_vars, coords={k: v for k, v in coords.items() if k not in drop},
                        attrs=attrs)
        ds.set_close(None)
        return ds

    def guess_can_open(self, filename_or_obj) -> bool:
        try:
            path = os.fspath(filename_or_obj)
        except TypeError:
            return False
        return os.path.isdir(path) and (os.path.isdir(os.path.join(path, "__schema")) or
                                        os.path.isfile(os.path.join(path, "__array_schema.tdb")))


class TdbfilterSparseBackendArray(BackendArray):
    """One attribute of a sparse array: its cells in the order of the coordinates the dataset
    was opened with (the same box at the same timestamp reads the same cells in the same
    global order), read whole when first indexed, then indexed in memory."""

    def __init__(self, uri: str, key, config, timestamp, box, field: str, n_cells: int,
                 dtype: np.dtype, cell_shape: tuple[int, ...], nullable: bool):
        self.uri, self.key, self.config, self.timestamp, self.box = uri, key, config, \
            timestamp, box
        self.field = field
        self.shape = (n_cells,) + tuple(cell_shape)
        self.nullable = nullable
        self.dtype = _null_dtype(dtype) if nullable and dtype != object else dtype

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.OUTER_1VECTOR, self._raw_indexing_method)

    def _raw_indexing_method(self, key: tuple) -> np.ndarray:
        with _open(self.uri, self.key, self.config, self.timestamp) as a:
            cells = a.read(self.field, self.box)
        if len(cells) != self.shape[0]:
            raise InvalidArgument(f"{self.uri}: attribute '{self.field}' read {len(cells)} "
                                  f"cells where the coordinates had {self.shape[0]}")
        return _nan_for_null(cells, self.dtype)[key]


def _nan_for_null(cells, dtype: np.dtype) -> np.ndarray:
    """A fixed-size nullable field's masked cells as ``dtype`` with NaN for null."""
    if isinstance(cells, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(cells)
        out = cells.data.astype(dtype)
        out[mask] = np.nan
        return out
    return np.asarray(cells)


def _open_sparse(a, uri: str, key, cfg, subarray, timestamp, drop: set) -> xr.Dataset:
    """A sparse array as a dataset of its cells (see the module's documentation)."""
    box = None if subarray is None else [tuple(r) for r in subarray]
    if box is not None:
        a._subarray_bytes(box)  # the read's checks, with its messages, before anything
    snap = _snapshot(a, timestamp)
    dims = a.dimensions
    names = [d.name for d in dims]
    coords_read = a.read(names, box)
    n_cells = len(coords_read[names[0]])
    cell_dim = names[0] if len(dims) == 1 else "cell"
    coords = {}
    for d in dims:
        if d.name not in drop:
            coords[d.name] = xr.Variable((cell_dim,), np.asarray(coords_read[d.name]))
    data_vars = {}
    for f in a.attributes:
        if f.name in drop:
            continue
        dtype, cell_shape = _cell_dtype(f)
        src = TdbfilterSparseBackendArray(uri, key, cfg, snap, box, f.name, n_cells, dtype,
                                          cell_shape, f.nullable and not f.var)
        var_dims = [cell_dim] + [f"{f.name}_cell"] * len(cell_shape)
        data_vars[f.name] = xr.Variable(var_dims, indexing.LazilyIndexedArray(src))
    ds = xr.Dataset(data_vars, coords=coords, attrs=_attrs(a.metadata))
    ds.set_close(None)
    return ds


def _attrs(metadata: dict[str, Any]) -> dict[str, Any]:
    """Array metadata as netCDF-friendly attributes (tuples become arrays)."""
    return {k: np.asarray(v) if isinstance(v, tuple) else v for k, v in metadata.items()}
