"""xr.open_dataset(uri, engine="tdbfilter"): lazy, coordinates from the domain, attributes as
variables, equal to TileDB-Py's cells; chunked on the LocalCluster."""

from __future__ import annotations

import numpy as np
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


def test_sparse_is_refused(arrays):
    with pytest.raises(tdbfilter.InvalidArgument, match="sparse"):
        xr.open_dataset(arrays["sparse"]["s2"]["uri"], engine="tdbfilter")
