"""Reads of the TileDB-Py API (``import tdbfilter as tiledb``) checked against TileDB-Py
0.36.1: enumerated attributes (values from ``A[...]`` and ``multi_index``, codes from
``A.query(...)[...]``, categoricals from ``.df``), pyarrow arrays as point selections, the
arrow conversion of ``.df`` (ascii dimensions as str) and its refusal of list columns, and
``return_arrow`` tables."""

import numpy as np
import pyarrow as pa
import pytest
import tiledb as tiledb_real  # the oracle, TileDB-Py 0.36.1 (a test requirement)

import tdbfilter as tiledb_like

LIBS = pytest.mark.parametrize("lib", [tiledb_like, tiledb_real], ids=["tdbfilter", "tiledb"])


def _enum_array(lib, path):
    uri = str(path)
    e = lib.Enumeration("e", True, np.array([10, 20, 30]))
    e2 = lib.Enumeration("e2", False, ["a", "bb", "ccc"])
    schema = lib.ArraySchema(
        domain=lib.Domain(lib.Dim("d", domain=(0, 3), tile=4, dtype=np.int64)),
        attrs=[lib.Attr("a", dtype=np.int32, enum_label="e"),
               lib.Attr("b", dtype=np.int32, enum_label="e2", nullable=True)],
        enums=[e, e2])
    lib.Array.create(uri, schema)
    with lib.open(uri, "w") as A:
        A[:] = {"a": np.array([1, 0, 2, 1], np.int32),
                "b": np.ma.array(np.array([1, 0, 2, 1], np.int32), mask=[0, 1, 0, 0])}
    return uri


def _reads(lib, uri):
    with lib.open(uri) as A:
        return {"getitem": A[:], "multi_index": A.multi_index[0:2],
                "query": A.query(attrs=["a"])[:], "df": A.df[:]}


def test_enumerated_attributes_read_as_tiledb_py(tmp_path):
    ours = _reads(tiledb_like, _enum_array(tiledb_like, tmp_path / "ours"))
    ref = _reads(tiledb_real, _enum_array(tiledb_real, tmp_path / "ref"))
    np.testing.assert_array_equal(ours["getitem"]["a"], ref["getitem"]["a"])
    assert ours["getitem"]["a"].tolist() == [20, 10, 30, 20]
    assert ours["getitem"]["b"].tolist() == ref["getitem"]["b"].tolist() == ["bb", None, "ccc",
                                                                             "bb"]
    np.testing.assert_array_equal(ours["multi_index"]["a"], ref["multi_index"]["a"])
    # A.query(...)[...] keeps the codes
    assert ours["query"]["a"].tolist() == ref["query"]["a"].tolist() == [1, 0, 2, 1]
    assert ours["df"]["a"].dtype == ref["df"]["a"].dtype == "category"
    assert ours["df"]["a"].tolist() == ref["df"]["a"].tolist()


@LIBS
def test_a_view_attribute_keeps_the_codes(lib, tmp_path):
    uri = _enum_array(lib, tmp_path / "a")
    with lib.DenseArray(uri, attr="a") as A:
        assert A[:].tolist() == [1, 0, 2, 1]


def _sparse(lib, path, dim_dtype, dims):
    uri = str(path)
    dom = lib.Domain(lib.Dim("k", dtype=dim_dtype, **({} if dim_dtype == "ascii" else
                                                       {"domain": (0, 100)})))
    lib.Array.create(uri, lib.ArraySchema(
        domain=dom, sparse=True, attrs=[lib.Attr("v", dtype=np.int64),
                                        lib.Attr("w", dtype=np.int32, var=True)]))
    with lib.open(uri, "w") as A:
        A[dims] = {"v": np.arange(len(dims)) * 10,
                   "w": np.array([np.arange(i + 1, dtype=np.int32) for i in range(len(dims))],
                                 dtype=object)}
    return uri


@pytest.mark.parametrize("dim_dtype, points", [(np.int64, [3, 7, 9]),
                                               ("ascii", [b"ab", b"c", b"dd"])])
def test_pyarrow_arrays_select_points(tmp_path, dim_dtype, points):
    got = {}
    for name, lib in (("ours", tiledb_like), ("ref", tiledb_real)):
        uri = _sparse(lib, tmp_path / name, dim_dtype, points)
        with lib.open(uri) as A:
            sel = pa.array(points[:2])
            got[name] = (A[sel]["v"].tolist(), A.multi_index[sel]["v"].tolist(),
                         A.query(attrs=["v"]).df[sel]["k"].tolist(),
                         A.query(attrs=["v"]).df[:]["k"].tolist())
    assert got["ours"] == got["ref"]
    assert got["ours"][0] == [0, 10]


def test_df_arrow_conversion_and_list_columns(tmp_path):
    for name, lib in (("ours", tiledb_like), ("ref", tiledb_real)):
        uri = _sparse(lib, tmp_path / name, "ascii", [b"x", b"y"])
        with lib.open(uri) as A:
            # a var-size numeric attribute: no arrow, dimensions stay bytes
            assert A.df[:]["k"].tolist() == [b"x", b"y"]
            with pytest.raises(lib.TileDBError, match="Multi-value attributes"):
                A.query(use_arrow=True).df[:]
            table = A.query(attrs=["v"], return_arrow=True).df[:]
            assert isinstance(table, pa.Table)
            assert table.column("k").to_pylist() == ["x", "y"]
            assert table.column("v").to_pylist() == [0, 10]
            with pytest.raises(lib.TileDBError, match="requires .df indexer"):
                A.query(attrs=["v"], return_arrow=True).multi_index[:]
            with pytest.raises(lib.TileDBError, match="use_arrow=False"):
                A.query(return_arrow=True, use_arrow=False)


@LIBS
def test_a_view_write_keeps_the_other_attributes(lib, tmp_path):
    uri = str(tmp_path / "v")
    dom = lib.Domain(lib.Dim(domain=(0, 2), tile=3), lib.Dim(domain=(0, 2), tile=3))
    lib.Array.create(uri, lib.ArraySchema(domain=dom, attrs=(lib.Attr(""), lib.Attr("named"))))
    with lib.DenseArray(uri, "w") as T:
        T[:] = {"": np.ones((3, 3)), "named": np.full((3, 3), 2.0)}
    with lib.DenseArray(uri, "w", attr="named") as V:
        V[1:3, 1:3] = np.arange(4.0).reshape(2, 2)
    with lib.open(uri) as A:
        got = A[:]
    assert got[""].tolist() == np.ones((3, 3)).tolist()
    assert got["named"].tolist() == [[2, 2, 2], [2, 0, 1], [2, 2, 3]]


@LIBS
def test_a_current_domain_set_on_the_open_schema_bounds_reads(lib, tmp_path):
    uri = str(tmp_path / "c")
    dom = lib.Domain(lib.Dim("d1", domain=(0, 99), tile=20, dtype=np.int64),
                     lib.Dim("d2", domain=(0, 99), tile=20, dtype=np.int64))
    lib.Array.create(uri, lib.ArraySchema(domain=dom, sparse=True,
                                          attrs=[lib.Attr("a", dtype=np.int64)]))
    d1, d2 = np.meshgrid(np.arange(10, 30), np.arange(10, 30), indexing="ij")
    with lib.open(uri, "w") as A:
        A[d1.ravel(), d2.ravel()] = np.arange(400)
    with lib.open(uri) as A:
        rect = lib.NDRectangle(lib.default_ctx(), dom)
        rect.set_range(0, 21, 23)
        rect.set_range(1, 15, 16)
        cd = lib.CurrentDomain(lib.default_ctx())
        cd.set_ndrectangle(rect)
        A.schema.set_current_domain(cd)
        assert A.df[:]["a"].tolist() == [225, 226, 245, 246, 265, 266]
        assert A.multi_index[:]["d1"].tolist() == [21, 21, 22, 22, 23, 23]


@pytest.mark.parametrize("dtype, fill", [("datetime64[s]", np.datetime64(5, "s")),
                                         ("datetime64[D]", None), ("int32", None)])
def test_fill_values_as_tiledb_py_gives_them(dtype, fill):
    kw = {} if fill is None else {"fill": fill}
    ours, ref = tiledb_like.Attr("a", dtype=dtype, **kw).fill, tiledb_real.Attr(
        "a", dtype=dtype, **kw).fill
    assert type(ours) is type(ref) and np.asarray(ours).dtype == np.asarray(ref).dtype
    np.testing.assert_array_equal(ours, ref)


@LIBS
def test_datetime_coordinates_on_an_integer_dimension(lib, tmp_path):
    uri = str(tmp_path / "t")
    dom = lib.Domain(lib.Dim("t", domain=(0, 2**62), tile=2**40, dtype=np.uint64))
    lib.Array.create(uri, lib.ArraySchema(domain=dom, sparse=True,
                                          attrs=[lib.Attr("a", dtype=np.int64)]))
    times = np.array([5, 3_000_000_000], dtype="datetime64[ns]")
    with lib.open(uri, "w") as A:
        A[times] = np.array([1, 2])
    with lib.open(uri) as A:
        assert A[:]["t"].tolist() == [5, 3_000_000_000]


def test_datatype_members_as_tiledb_pys():
    ours, ref = tiledb_like.libtiledb.DataType.UINT64, tiledb_real.libtiledb.DataType.UINT64
    assert (ours.name, str(ours), int(ours)) == (ref.name, str(ref), int(ref))
    for lib in (tiledb_like, tiledb_real):
        f = lib.DeltaFilter(reinterp_dtype=lib.libtiledb.DataType.UINT64)
        assert f.reinterp_dtype == np.uint64
