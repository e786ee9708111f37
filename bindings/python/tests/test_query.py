"""``tdbfilter.query.Query`` (the C query handle) against TileDB-Py 0.36.1 on arrays TileDB
wrote: multi-range reads in each layout, conditions (dense: fill values; sparse: dropped
cells), string dimension ranges, aggregates, and the errors."""

import numpy as np
import pytest
import tiledb

import tdbfilter
from tdbfilter.query import Query


@pytest.fixture(scope="module")
def dense_uri(tmp_path_factory):
    uri = str(tmp_path_factory.mktemp("q") / "dense")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(1, 6), tile=3, dtype=np.int32),
                        tiledb.Dim("y", domain=(1, 4), tile=2, dtype=np.int32))
    schema = tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("a", dtype=np.int32), tiledb.Attr("f", dtype=np.float64, nullable=True)])
    tiledb.Array.create(uri, schema)
    a = (10 * np.arange(1, 7)[:, None] + np.arange(1, 5)[None, :]).astype(np.int32)
    with tiledb.open(uri, "w") as T:
        T[:] = {"a": a, "f": np.ma.array(a / 2.0, mask=a % 3 == 0)}
    return uri


@pytest.fixture(scope="module")
def sparse_uri(tmp_path_factory):
    uri = str(tmp_path_factory.mktemp("q") / "sparse")
    dom = tiledb.Domain(tiledb.Dim("s", dtype="ascii"),
                        tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64))
    schema = tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("v", dtype=np.uint16), tiledb.Attr("t", dtype=str)])
    tiledb.Array.create(uri, schema)
    keys = np.array([b"apple", b"bear", b"cat", b"dog", b"eel", b"fox"], dtype=object)
    xs = np.arange(6, dtype=np.int64) * 7
    with tiledb.open(uri, "w") as T:
        T[keys, xs] = {"v": np.arange(6, dtype=np.uint16) * 3,
                       "t": np.array(["p", "q", "r", "s", "t", "u"])}
    return uri


def test_dense_multi_range_layouts_match_tiledb_py(dense_uri):
    with tiledb.open(dense_uri) as T, tdbfilter.Array(dense_uri) as A:
        for order, layout in (("C", "row"), ("F", "col")):
            want = T.query(attrs=["a"], order=order).multi_index[[(1, 2), 5], [(2, 3)]]["a"]
            q = Query(A, fields=["a", "x"], layout=layout)
            q.add_range("x", 1, 2).add_range("x", 5, 5).add_range("y", 2, 3)
            got = q.read()
            assert np.array_equal(got["a"], np.asarray(want).reshape(-1)), order
            assert len(got["x"]) == 6


def test_dense_condition_fills_failing_cells(dense_uri):
    with tiledb.open(dense_uri) as T, tdbfilter.Array(dense_uri) as A:
        want = T.query(cond="a > 33 and f < 30")[:]
        got = Query(A, fields=["a", "f"], condition="a > 33 and f < 30").read()
        assert np.array_equal(got["a"], want["a"].reshape(-1))
        assert np.array_equal(np.ma.getmaskarray(got["f"]),
                              np.ma.getmaskarray(want["f"]).reshape(-1))


def test_sparse_condition_and_string_ranges(sparse_uri):
    with tiledb.open(sparse_uri) as T, tdbfilter.Array(sparse_uri) as A:
        want = T.query(cond="v >= 6").multi_index[("b", "e"), :]
        q = Query(A, fields=["s", "x", "v"], condition="v >= 6").add_range("s", "b", "e")
        got = q.read()
        assert [s.encode() for s in got["s"]] == list(want["s"])
        assert np.array_equal(got["v"], want["v"])
        assert q.stats is not None


def test_aggregates_match_tiledb_py(dense_uri, sparse_uri):
    with tiledb.open(sparse_uri) as T, tdbfilter.Array(sparse_uri) as A:
        want = T.query(cond="x > 10").agg({"v": ["sum", "min", "max", "count", "mean"]})[:]
        got = Query(A, condition="x > 10").aggregate(
            [("sum", "v"), ("min", "v"), ("max", "v"), ("count", None), ("mean", "v")])
        assert got == {"sum(v)": want["sum"], "min(v)": want["min"], "max(v)": want["max"],
                       "count": want["count"], "mean(v)": want["mean"]}
    with tiledb.open(dense_uri) as T, tdbfilter.Array(dense_uri) as A:
        want = T.query().agg({"f": ["null_count", "sum"]})[2:4]
        got = Query(A).add_range("x", 2, 3).aggregate([("null_count", "f"), ("sum", "f")])
        assert got == {"null_count(f)": want["null_count"], "sum(f)": want["sum"]}


def test_errors_name_what_failed(dense_uri, sparse_uri):
    with tdbfilter.Array(dense_uri) as A:
        with pytest.raises(tdbfilter.InvalidArgument, match="layout"):
            Query(A, layout="diagonal")
        with pytest.raises(tdbfilter.InvalidArgument, match="no dimension 'z'"):
            Query(A).add_range("z", 1, 2)
        with pytest.raises(tdbfilter.InvalidArgument, match="unordered"):
            Query(A, layout="unordered").read()
        with pytest.raises(tdbfilter.InvalidArgument, match="column"):
            Query(A, condition="a <").read()
        with pytest.raises(tdbfilter.InvalidArgument, match="median"):
            Query(A).aggregate([("median", "a")])
    with tdbfilter.Array(sparse_uri) as A:
        with pytest.raises(tdbfilter.InvalidArgument, match="'s'"):
            Query(A).add_range("s", 1, 2)
