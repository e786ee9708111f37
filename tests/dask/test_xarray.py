"""xr.open_dataset(uri, engine="tdbfilter"): lazy, coordinates from the domain, attributes as
variables, equal to TileDB-Py's cells; chunked on the LocalCluster. Sparse arrays as datasets
of their cells (indexed by the dimension in 1-D, a ``cell`` dimension otherwise)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import tdbfilter
from helpers import assert_cells_equal


def _as_nan(cells):
    """TileDB-Py's nullable cells as the backend gives them: floats, NaN for null."""
    if isinstance(cells, np.ma.MaskedArray):
        out = cells.data.astype(np.float64 if cells.dtype.kind in "iub" else cells.dtype)
        out[np.ma.getmaskarray(cells)] = np.nan
        return out
    return cells


def test_entry_point_is_declared():
    assert "tdbfilter" in xr.backends.list_engines()


@pytest.mark.parametrize("case", ["d2", "d2-sub", "d3", "dvar"])
def test_dataset_equals_tiledb(arrays, case):
    c = arrays["dense"][case]
    ds = xr.open_dataset(c["uri"], engine="tdbfilter", subarray=c["subarray"])
    with tdbfilter.Array(c["uri"]) as a:
        dims = [d.name for d in a.dimensions]
        attrs = [x.name for x in a.attributes]
    assert list(ds.data_vars) == attrs
    for d, (lo, hi) in zip(dims, c["subarray"]):
        assert ds[d].values.tolist() == list(range(lo, hi + 1))
    for name, want in c["fields"].items():
        var = ds[name].variable
        # lazy: nothing read until the values are asked for
        assert not var._in_memory
        assert var.dims == tuple(dims)
        assert_cells_equal(ds[name].values, _as_nan(want), f"{case}.{name}")


def test_lazy_indexing_reads_boxes(arrays):
    # No subarray: the whole domain (1..60 x 5..54; rows 58..60 never written read as fill
    # values), as TileDB's own xarray backends (TileDB-xarray, TileDB-CF-Py) and
    # dask.array.from_tiledb give a dense array.
    c = arrays["dense"]["d2-domain"]
    want = c["fields"]["a"]
    ds = xr.open_dataset(c["uri"], engine="tdbfilter")
    assert dict(ds.sizes) == {"r": 60, "c": 50}
    assert ds["r"].values.tolist() == list(range(1, 61))
    a = ds["a"]
    assert_cells_equal(a.isel(r=slice(3, 40, 4), c=slice(None, None, -3)).values,
                       want[3:40:4, ::-3], "stepped and reversed slices")
    assert_cells_equal(a.isel(r=7, c=slice(10, 20)).values, want[7, 10:20], "an integer")
    assert_cells_equal(a.sel(r=30, c=slice(40, 50)).values, want[29, 35:46], "by coordinate")
    assert_cells_equal(a.isel(r=-1).values, want[-1], "a negative index (a row of fill values)")
    assert (want[-1] == np.iinfo(np.int32).min).all()


def test_chunks_follow_tiles_and_compute_on_cluster(arrays, client):
    c = arrays["dense"]["d2-domain"]
    ds = xr.open_dataset(c["uri"], engine="tdbfilter", chunks={})
    assert ds["a"].chunks == ((16, 16, 16, 12), (10, 10, 10, 10, 10))
    total = client.compute(ds["b"].sum(skipna=True).data).result()
    assert np.isclose(total, np.nansum(c["fields"]["b"]), rtol=1e-5)
    got = client.compute(ds["a"].data).result()
    assert_cells_equal(got, c["fields"]["a"], "d2.a (whole domain) through dask")


def test_sparse_1d_is_indexed_by_its_dimension(arrays):
    c = arrays["sparse"]["s1"]
    want = c["global_columns"]  # TileDB-Py's read in global order, the order of the dataset
    ds = xr.open_dataset(c["uri"], engine="tdbfilter")
    assert dict(ds.sizes) == {"x": len(want["x"])}
    assert list(ds.data_vars) == ["n", "p"]
    assert ds.indexes["x"].equals(pd.Index(want["x"]))
    assert not ds["n"].variable._in_memory and not ds["p"].variable._in_memory
    assert ds["n"].dtype == np.float64  # nullable int32: NaN for null
    assert_cells_equal(ds["n"].values, _as_nan(want["n"]), "s1.n")
    assert_cells_equal(ds["p"].values, want["p"], "s1.p")
    # by coordinate, and a stepped slice of positions (read, then indexed in memory)
    x10 = int(want["x"][10])
    assert float(ds["p"].sel(x=x10)) == float(want["p"][10])
    assert_cells_equal(ds["p"].isel(x=slice(5, None, 7)).values, want["p"][5::7], "stepped")
    assert_cells_equal(ds["n"][[3, 1, 2]].values, _as_nan(want["n"])[[3, 1, 2]], "a list")
    # subarray: the cells of a box
    sub = xr.open_dataset(c["uri"], engine="tdbfilter", subarray=[(-1000, 999)])
    inside = (want["x"] >= -1000) & (want["x"] <= 999)
    assert 0 < inside.sum() < len(inside)
    assert sub["x"].values.tolist() == want["x"][inside].tolist()
    assert_cells_equal(sub["n"].values, _as_nan(want["n"])[inside], "s1.n in the box")


def test_sparse_nd_has_a_cell_dimension_and_coordinates(arrays, client):
    c = arrays["sparse"]["s2"]
    want = c["global_columns"]
    ds = xr.open_dataset(c["uri"], engine="tdbfilter")
    n = len(want["x"])
    assert dict(ds.sizes) == {"cell": n}
    assert set(ds.coords) == {"x", "y"} and list(ds.data_vars) == ["a", "s", "n"]
    for d in ("x", "y"):
        assert ds[d].dims == ("cell",)
        assert_cells_equal(ds[d].values, want[d], f"s2.{d}")
    assert_cells_equal(ds["a"].values, want["a"], "s2.a")
    assert_cells_equal(ds["s"].values, want["s"], "s2.s (var-size text)")
    assert_cells_equal(ds["n"].values, _as_nan(want["n"]), "s2.n (nullable float)")
    # the dimensions as a multi-index: a cell by its coordinates
    i = n // 3
    indexed = ds.set_index(cell=["x", "y"])
    got = indexed["a"].sel(x=int(want["x"][i]), y=int(want["y"][i]))
    assert int(got) == int(want["a"][i])
    # chunked: dask arrays computed on the cluster
    chunked = xr.open_dataset(c["uri"], engine="tdbfilter", chunks={"cell": 1000})
    assert chunked["a"].chunks[0][0] == 1000
    assert client.compute(chunked["a"].sum().data).result() == want["a"].sum()


def test_sparse_string_dimension(arrays):
    c = arrays["sparse"]["sstr"]
    want = c["global_columns"]
    ds = xr.open_dataset(c["uri"], engine="tdbfilter")
    # TileDB-Py gives an ASCII dimension as bytes, tdbfilter as str
    assert ds["k"].values.tolist() == [b.decode() for b in want["k"].tolist()]
    assert_cells_equal(ds["v"].values, want["v"], "sstr.v")
    assert ds["v"].sel(k="key0150").item() == want["v"][want["k"].tolist().index(b"key0150")]


def test_sparse_bad_subarray_is_refused(arrays):
    with pytest.raises(tdbfilter.InvalidArgument, match="subarray has 1 range"):
        xr.open_dataset(arrays["sparse"]["s2"]["uri"], engine="tdbfilter", subarray=[(0, 5)])
