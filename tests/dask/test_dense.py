"""Dense arrays as dask arrays on the LocalCluster, cell for cell against TileDB-Py."""

from __future__ import annotations

import importlib.util
import pickle
import time

import dask
import dask.array as da
import numpy as np
import pytest

import tdbfilter
import tdbfilter.dask as tdask
from helpers import assert_cells_equal

DENSE = ["d1", "d1-sub", "d2", "d2-sub", "d2-fill", "d3", "d3-sub", "dvar", "dvar-sub",
         "dhuge-sub"]


@pytest.mark.parametrize("case", DENSE)
def test_fields_equal_tiledb(arrays, client, case):
    c = arrays["dense"][case]
    names = list(c["fields"])
    got = tdask.read(c["uri"], field=names, subarray=c["subarray"])
    assert isinstance(got, dict) and list(got) == names
    computed = client.compute(got).result()
    for name in names:
        assert got[name].shape == c["fields"][name].shape
        assert_cells_equal(computed[name], c["fields"][name], f"{case}.{name}")


@pytest.mark.parametrize("case", ["d2-domain", "d3-domain"])
def test_the_default_box_is_the_whole_domain_as_from_tiledb(arrays, client, case):
    c = arrays["dense"][case]
    assert c["default_box"]
    names = list(c["fields"])
    got = tdask.read(c["uri"], field=names)  # no subarray
    computed = client.compute(got).result()
    for name in names:
        assert got[name].shape == tuple(hi - lo + 1 for lo, hi in c["subarray"])
        assert_cells_equal(computed[name], c["fields"][name], f"{case}.{name}")


@pytest.mark.parametrize("array", ["dpart", "d2"])
def test_default_box_and_chunks_equal_from_tiledb(arrays, client, array):
    """No subarray, no chunks: the shape and chunks of dask.array.from_tiledb on the same
    array (its whole domain, one chunk per space tile), and its cells (dpart: from_tiledb
    computes only arrays whose domain starts at 0)."""
    c = arrays["dense"][f"from_tiledb-{array}"]
    got = tdask.read(c["uri"], field=c["field"])
    assert got.shape == c["shape"]
    assert got.chunks == c["chunks"]
    if array == "dpart":
        assert_cells_equal(client.compute(got).result(), c["cells"], "dpart against from_tiledb")
    else:
        assert c["cells"] is None


@pytest.mark.parametrize("case", ["d2", "d3-sub"])
def test_default_chunks_are_space_tiles(arrays, case):
    c = arrays["dense"][case]
    with tdbfilter.Array(c["uri"]) as a:
        extents = [int(a.tile_extent(d)) for d in range(len(a.dimensions))]
        domain_lo = [int(a.domain(d)[0]) for d in range(len(a.dimensions))]
    x = tdask.read(c["uri"], field=next(iter(c["fields"])), subarray=c["subarray"])
    for d, chunks in enumerate(x.chunks):
        starts = c["subarray"][d][0] + np.concatenate([[0], np.cumsum(chunks)[:-1]])
        # every chunk after the first starts on a tile boundary; none crosses one
        assert all((s - domain_lo[d]) % extents[d] == 0 for s in starts[1:]), (d, starts)
        assert all(n <= extents[d] for n in chunks), (d, chunks)


def test_user_chunks(arrays, client):
    c = arrays["dense"]["d3"]
    x = tdask.read(c["uri"], field="v", chunks=(7, 11, 5))
    assert x.chunks == ((7, 7, 6), (11, 11, 8), (5, 5, 4))
    assert_cells_equal(client.compute(x).result(), c["fields"]["v"], "d3.v chunks=(7,11,5)")


def test_field_conventions(arrays):
    d1, d2 = arrays["dense"]["d1"]["uri"], arrays["dense"]["d2"]["uri"]
    assert isinstance(tdask.read(d1), da.Array)            # the only attribute
    both = tdask.read(d2)                                   # every attribute
    assert isinstance(both, dict) and list(both) == ["a", "b"]
    assert isinstance(tdask.read(d2, field="b"), da.Array)
    with pytest.raises(tdbfilter.InvalidArgument, match="no field 'zz'"):
        tdask.read(d2, field="zz")
    with pytest.raises(tdbfilter.InvalidArgument, match="subarray has 1 range"):
        tdask.read(d2, field="a", subarray=[(1, 2)])


def test_nullable_and_var_meta(arrays, client):
    c = arrays["dense"]["dvar"]
    got = tdask.read(c["uri"], field=["s", "f", "i"])
    assert got["s"].dtype == object
    assert isinstance(got["f"]._meta, np.ma.MaskedArray)
    assert isinstance(got["i"]._meta, np.ma.MaskedArray)
    total = client.compute(got["i"].sum()).result()
    assert total == c["fields"]["i"].sum()  # masked (null) cells left out, as numpy does


def test_graph_holds_no_cells(arrays):
    """Each task holds the URI, key, config, timestamp and its slices: nothing read."""
    c = arrays["dense"]["d2"]
    x = tdask.read(c["uri"], field="a")
    graph = dict(x.__dask_graph__())
    assert len(graph) == 4 * 5
    assert len(pickle.dumps(graph)) < 20_000
    for task in graph.values():
        assert b"\x00" * 64 not in pickle.dumps(task)


def test_huge_domain_is_lazy(arrays, client):
    """10^5 x 10^5 chunks over the whole domain: built in well under a second (nothing per
    chunk up front), and a slice computes only the chunks it touches."""
    c = arrays["dense"]["dhuge-sub"]
    t0 = time.perf_counter()
    x = tdask.read(c["uri"], field="a", subarray=[(0, 10**8 - 1), (0, 10**8 - 1)])
    built = time.perf_counter() - t0
    assert x.numblocks == (10**5, 10**5)
    assert built < 5.0, f"building the dask array took {built:.2f} s"
    (r0, r1), (c0, c1) = c["subarray"]
    part = x[r0:r1 + 1, c0:c1 + 1]
    t0 = time.perf_counter()
    got = client.compute(part).result()
    assert time.perf_counter() - t0 < 60
    assert_cells_equal(got, c["fields"]["a"], "dhuge slice")


def test_sum_matches_numpy(arrays, client):
    c = arrays["dense"]["d1"]
    x = tdask.read(c["uri"], field="a")
    assert np.isclose(client.compute(x.sum()).result(), c["fields"]["a"].sum())


def test_workers_have_no_tiledb_and_cache_arrays(arrays, client):
    """The workers run without tiledb (the environment has tdbfilter only), and each opens
    an array once and reuses it for later tasks."""
    assert all(v is None for v in client.run(importlib.util.find_spec, "tiledb").values())
    c = arrays["dense"]["d2"]
    x = tdask.read(c["uri"], field="a")
    client.compute(x.sum()).result()
    client.compute((x + 1).sum()).result()

    def cached(uri):
        return sum(1 for k in tdask._cache if k[0] == uri)

    counts = client.run(cached, c["uri"])
    assert sorted(counts.values()) != [0, 0], counts
    assert max(counts.values()) == 1, counts


def test_snapshot_and_time_travel(arrays, client):
    """Tasks open the array up to the newest fragment visible when the graph was built
    (fragments at 1 and 2 ms here); timestamp= reads an older view, as TileDB-Py's does."""
    c = arrays["dense"]["d2-t1"]
    with tdbfilter.Array(c["uri"]) as a:
        assert tdask._snapshot(a, None) == (0, 2)
    x = tdask.read(c["uri"], field="a", subarray=c["subarray"], timestamp=1)
    assert_cells_equal(client.compute(x).result(), c["fields"]["a"], "d2 at t=1")


@pytest.mark.parametrize("case,field", [("d2-sub", "a"), ("d3", "v"), ("dvar", "f"),
                                        ("dvar", "i"), ("dvar", "s")])
def test_read_view_equals_tiledb_and_outlives_the_array(arrays, case, field):
    """Array.read_view (what each dask task calls): TileDB-Py's cells, fixed-size ones in
    the library's own memory (no copy), valid after the array is closed and collected."""
    import gc

    c = arrays["dense"][case]
    a = tdbfilter.Array(c["uri"])
    got = a.read_view(field, c["subarray"])
    a.close()
    del a
    gc.collect()
    want = c["fields"][field]
    assert_cells_equal(got.reshape(want.shape), want, f"{case}.{field}")
    if want.dtype != object:
        base = np.ma.getdata(got)
        while base.base is not None and isinstance(base.base, np.ndarray):
            base = base.base
        assert type(base.base).__name__ == "_Window"   # the library's memory, not a copy
        np.ma.getdata(got)[...] = 0                       # and writable
