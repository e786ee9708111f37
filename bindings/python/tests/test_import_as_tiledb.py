"""``import tdbfilter as tiledb``: a TileDB-Py program with only its import changed runs, and
real TileDB-Py (``tiledb``, libtiledb 2.30) reads what it wrote the same."""

import numpy as np
import tiledb as tiledb_real  # the oracle, TileDB-Py 0.36.1 (a test requirement)

import tdbfilter as tiledb_like


def program(tiledb, root):
    """A TileDB-Py user's program (TileDB-Py's names only); returns what it read."""
    out = {}
    dense = f"{root}/dense"
    dom = tiledb.Domain(tiledb.Dim(name="rows", domain=(1, 4), tile=2, dtype=np.int32),
                        tiledb.Dim(name="cols", domain=(1, 4), tile=2, dtype=np.int32))
    schema = tiledb.ArraySchema(domain=dom, sparse=False,
                                attrs=[tiledb.Attr(name="a", dtype=np.int32,
                                                   filters=tiledb.FilterList([tiledb.ZstdFilter()]))])
    tiledb.Array.create(dense, schema)
    with tiledb.open(dense, "w", timestamp=1) as A:
        A[:] = np.arange(1, 17, dtype=np.int32).reshape(4, 4)
    with tiledb.open(dense, "w", timestamp=2) as A:
        A[2:3, 2:4] = np.array([[100, 200]], dtype=np.int32)
    with tiledb.open(dense) as A:
        assert isinstance(A, tiledb.Array)
        out["dense"] = A[:]["a"]
        out["dense_slice"] = A[1:3, 2:4]["a"]
        out["dense_multi"] = A.multi_index[[1, 3], 2:3]["a"]
        out["dense_cond"] = A.query(cond="a > 10", attrs=["a"])[:]["a"]
        out["dense_sum"] = A.query().agg("sum")[:]
    with tiledb.open(dense, timestamp=1) as A:
        out["dense_t1"] = A[:]["a"]

    sparse = f"{root}/sparse"
    dom = tiledb.Domain(tiledb.Dim(name="x", domain=(0, 999), tile=100, dtype=np.int64))
    schema = tiledb.ArraySchema(domain=dom, sparse=True,
                                attrs=[tiledb.Attr(name="v", dtype=np.float64),
                                       tiledb.Attr(name="s", dtype=str)])
    tiledb.Array.create(sparse, schema)
    for t in range(1, 4):
        with tiledb.open(sparse, "w", timestamp=t) as A:
            xs = np.arange(t * 10, t * 10 + 5, dtype=np.int64)
            A[xs] = {"v": xs * 0.5, "s": [f"s{x}" for x in xs]}
    tiledb.consolidate(sparse)
    tiledb.vacuum(sparse)
    with tiledb.open(sparse) as A:
        r = A.query(cond="v >= 10.0")[:]
        out["sparse_cond"] = (r["x"], r["v"], r["s"])
        out["sparse_multi"] = A.multi_index[[(10, 12), (30, 31)]]["v"]
        out["sparse_count"] = A.query().agg("count")[:]
        out["sparse_meta_frags"] = len(tiledb.array_fragments(sparse))

    np_uri = f"{root}/from_numpy"
    with tiledb.from_numpy(np_uri, np.linspace(0, 1, 12).reshape(3, 4)) as A:
        out["from_numpy"] = A[:]
    return out


def same(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            same(a[k], b[k])
    elif isinstance(a, tuple):
        for x, y in zip(a, b, strict=True):
            same(x, y)
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_a_tiledb_py_program_runs_with_only_its_import_changed(tmp_path):
    ours = program(tiledb_like, tmp_path / "ours")
    theirs = program(tiledb_real, tmp_path / "theirs")
    for k in theirs:
        same(ours[k], theirs[k])
    # TileDB-Py reads what the tdbfilter program wrote as it reads its own arrays.
    with tiledb_real.open(str(tmp_path / "ours" / "dense")) as A:
        same(A[:]["a"], theirs["dense"])
    with tiledb_real.open(str(tmp_path / "ours" / "sparse")) as A:
        r = A.query(cond="v >= 10.0")[:]
        same((r["x"], r["v"], r["s"]), theirs["sparse_cond"])
    assert len(tiledb_real.array_fragments(str(tmp_path / "ours" / "sparse"))) == 1


def test_the_package_keeps_its_own_api(tmp_path):
    uri = str(tmp_path / "spec")
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    with tiledb_like.from_numpy(uri, a, tile=2, filters="byteshuffle,zstd:3") as A:
        np.testing.assert_array_equal(A[:], a)
    with tiledb_like.Array(uri) as A:  # the copy-free layer
        np.testing.assert_array_equal(A.read("").reshape(a.shape), a)  # row-major cells


def test_compute_concurrency_level_sets_the_threads(tmp_path):
    """``sm.compute_concurrency_level`` of the Ctx (or the open's config) is the array's
    thread count, for reads and writes; unset: 0 (all cores); not a positive integer: an
    error."""
    import pytest

    uri = str(tmp_path / "a")
    tiledb_like.from_numpy(uri, np.arange(16, dtype=np.int64)).close()
    one = tiledb_like.Ctx(tiledb_like.Config({"sm.compute_concurrency_level": "1"}))
    with tiledb_like.open(uri, ctx=one) as A:
        assert A._inner._threads == 1
        assert A[2:5].tolist() == [2, 3, 4]
    with tiledb_like.open(uri, "w", ctx=one, config={"sm.compute_concurrency_level": "2"}) as A:
        assert A._inner._threads == 2
    with tiledb_like.open(uri) as A:
        assert A._inner._threads == 0
    bad = tiledb_like.Ctx(tiledb_like.Config({"sm.compute_concurrency_level": "zero"}))
    with pytest.raises(tiledb_like.TileDBError, match="compute_concurrency_level"):
        tiledb_like.open(uri, ctx=bad)
