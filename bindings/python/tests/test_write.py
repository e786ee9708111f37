"""Writing arrays through the package (tdbfilter.create, from_numpy, Array(uri, mode="w"),
A.meta), read back by TileDB-Py 0.36.1 (the oracle) and by the package; fragments written by
both libraries into one array read equal through both."""

import tracemalloc

import numpy as np
import pytest
import tiledb

import tdbfilter

KEY = "0123456789abcdef0123456789abcdef"


def tiledb_read(uri, key=None, **kw):
    """TileDB-Py's read of every attribute over the whole domain (dense) or every cell
    (sparse), as {name: ndarray}."""
    cfg = tiledb.Config({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key}) \
        if key else None
    ctx = tiledb.Ctx(cfg) if cfg else None
    with tiledb.open(str(uri), ctx=ctx, **kw) as T:
        return T.query(return_incomplete=False)[:] if not T.schema.sparse else T.query()[:], \
            dict(T.meta.items())


def nulls(values) -> list:
    """TileDB-Py's nullable cells (a masked array) as a list with None for null."""
    return [None if m else v for v, m in zip(np.ma.getdata(values), np.ma.getmaskarray(values))]


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "int64", "uint64", "float32", "float64", "bool",
                                   "datetime64[ns]", "datetime64[D]", "timedelta64[ms]"])
@pytest.mark.parametrize("shape", [(37,), (6, 9), (3, 4, 5)])
def test_from_numpy_dtypes_and_shapes(tmp_path, dtype, shape):
    rng = np.random.default_rng(len(shape))
    n = int(np.prod(shape))
    if dtype == "bool":
        a = rng.integers(0, 2, n).astype(bool).reshape(shape)
    elif dtype.startswith(("datetime", "timedelta")):
        a = rng.integers(-10**6, 10**6, n).astype(np.int64).view(dtype).reshape(shape)
    else:
        a = (rng.random(n) * 100).astype(dtype).reshape(shape)
    uri = str(tmp_path / "a")
    tile = [max(1, s // 2) for s in shape]
    tdbfilter.from_numpy(uri, a, tile=tile, filters="byteshuffle,zstd:3")
    with tiledb.open(uri) as T:
        assert T.schema.attr(0).name == ""
        assert T.schema.attr(0).dtype == a.dtype
        assert [d.name for d in T.schema.domain] == [f"__dim_{i}" for i in range(len(shape))]
        assert [d.tile for d in T.schema.domain] == tile
        np.testing.assert_array_equal(T[:], a)
        assert len(T.schema.attr(0).filters) == 2
    with tdbfilter.Array(uri) as A:
        np.testing.assert_array_equal(A.read("").reshape(shape), a)


def test_from_numpy_fortran_order_is_written_col_major(tmp_path):
    a = np.asfortranarray(np.arange(120, dtype=np.int64).reshape(8, 15))
    tdbfilter.from_numpy(str(tmp_path / "f"), a, tile=4)
    with tiledb.open(str(tmp_path / "f")) as T:
        np.testing.assert_array_equal(T[:], a)
    # A strided view (neither order) is copied once into row-major order.
    b = np.arange(200, dtype=np.int32).reshape(10, 20)[::2, ::3]
    tdbfilter.from_numpy(str(tmp_path / "v"), b)
    with tiledb.open(str(tmp_path / "v")) as T:
        np.testing.assert_array_equal(T[:], b)


def test_dense_boxes_over_domain_coordinates(tmp_path):
    uri = str(tmp_path / "d")
    tdbfilter.create(uri, {
        "dimensions": [{"name": "r", "type": "INT64", "domain": [-5, 14], "tile": 5},
                       {"name": "c", "type": "INT64", "domain": [100, 109], "tile": 5}],
        "attributes": [{"name": "a", "type": "FLOAT64"},
                       {"name": "b", "type": "INT16", "filters": "delta,lz4"}]})
    want_a = np.full((20, 10), np.nan)
    want_b = np.full((20, 10), np.iinfo(np.int16).min, np.int16)
    with tdbfilter.Array(uri, mode="w", timestamp=1) as A:
        x = np.arange(200.0).reshape(20, 10)
        A[:] = {"a": x, "b": x.astype(np.int16)}  # the whole domain
        want_a[:], want_b[:] = x, x
        assert len(A.written_fragments) == 1
    with tdbfilter.Array(uri, mode="w", timestamp=2) as A:
        y = -np.arange(12.0).reshape(3, 4)
        A[-3:0, 102:106] = {"a": y, "b": y.astype(np.int16)}  # rows -3..-1, cols 102..105
        want_a[2:5, 2:6], want_b[2:5, 2:6] = y, y
        # An int index (fragments of one timestamp must not overlap: their order is TileDB's
        # random label's).
        A[7, :109] = {"a": np.full(9, 7.5), "b": np.full(9, 7, np.int16)}
        want_a[12, :9], want_b[12, :9] = 7.5, 7
        A[..., 109] = {"a": np.arange(20.0) + 0.25, "b": np.arange(20, dtype=np.int16)}
        want_a[:, 9], want_b[:, 9] = np.arange(20.0) + 0.25, np.arange(20)
        assert len(A.written_fragments) == 3
    (res, _) = tiledb_read(uri)
    np.testing.assert_array_equal(res["a"], want_a)
    np.testing.assert_array_equal(res["b"], want_b)
    with tdbfilter.Array(uri) as A:
        got = A.read(["a", "b"], [(-5, 14), (100, 109)])
        np.testing.assert_array_equal(got["a"].reshape(20, 10), want_a)
        assert [f.timestamps for f in A.fragments] == [(1, 1), (2, 2), (2, 2), (2, 2)]


def test_dense_var_strings_nullable_and_multi_value(tmp_path):
    uri = str(tmp_path / "v")
    tdbfilter.create(uri, {
        "dimensions": [{"name": "i", "type": "UINT32", "domain": [1, 8], "tile": 4}],
        "attributes": [
            {"name": "s", "type": "STRING_UTF8", "cell_val_num": "var", "nullable": True},
            {"name": "n", "type": "INT32", "nullable": True},
            {"name": "rgb", "type": "UINT8", "cell_val_num": 3},
            {"name": "v", "type": "FLOAT32", "cell_val_num": "var"},
            {"name": "c", "type": "CHAR", "cell_val_num": "var"}]})
    s = np.array(["", "α", None, "three", "four!", "x" * 100, None, "8"], dtype=object)
    n = np.ma.array(np.arange(8, dtype=np.int32), mask=[0, 0, 1, 0, 1, 0, 0, 1])
    rgb = np.arange(24, dtype=np.uint8).reshape(8, 3)
    v = [np.arange(k, dtype=np.float32) for k in range(8)]
    c = np.array([b"a", b"bb", b"", b"dddd", b"e", b"f", b"g", b"hh"])  # numpy S
    with tdbfilter.Array(uri, mode="w") as A:
        A[:] = {"s": s, "n": n, "rgb": rgb, "v": v, "c": c}
    with tiledb.open(uri) as T:
        r = T.query(attrs=["s", "n", "rgb", "v", "c"])[:]
    assert nulls(r["s"]) == list(s)
    np.testing.assert_array_equal(np.ma.getmaskarray(r["n"]), n.mask)
    np.testing.assert_array_equal(r["n"][~n.mask], n.data[~n.mask])
    np.testing.assert_array_equal(r["rgb"].view(np.uint8).reshape(8, 3), rgb)
    for got, want in zip(r["v"], v):
        np.testing.assert_array_equal(got, want)
    assert list(r["c"]) == list(c)
    # A second fragment over part of the domain, 'U' strings and a partial mask.
    with tdbfilter.Array(uri, mode="w") as A:
        A[3:5] = {"s": np.ma.array(np.array(["p", "q"]), mask=[1, 0]),
                  "n": np.array([40, 41], np.int32), "rgb": rgb[:2], "v": [v[1], v[2]],
                  "c": np.array(["zz", "y"], dtype=object)}
    with tiledb.open(uri) as T:
        r = T.query(attrs=["s", "n", "c"])[:]
    assert nulls(r["s"])[2:4] == [None, "q"]
    assert list(r["n"].filled(-1))[2:4] == [40, 41]
    assert list(r["c"])[2:4] == [b"zz", b"y"]


@pytest.mark.parametrize("kind", ["int", "float", "string", "datetime"])
def test_sparse_dims_and_duplicates(tmp_path, kind):
    uri = str(tmp_path / kind)
    dim = {"int": {"name": "x", "type": "INT64", "domain": [-1000, 1000], "tile": 64},
           "float": {"name": "x", "type": "FLOAT64", "domain": [-1.0, 1.0], "tile": 0.25},
           "string": {"name": "x", "type": "STRING_ASCII", "var": True, "domain": None,
                      "tile": None},
           "datetime": {"name": "x", "type": "DATETIME_MS", "domain": [0, 10**9],
                        "tile": 1000}}[kind]
    tdbfilter.create(uri, {"sparse": True, "allows_duplicates": True, "capacity": 7,
                           "dimensions": [dim, {"name": "y", "type": "UINT16",
                                                "domain": [0, 99], "tile": 10}],
                           "attributes": [{"name": "a", "type": "INT32"},
                                          {"name": "t", "type": "STRING_UTF8",
                                           "cell_val_num": "var", "nullable": True}]})
    rng = np.random.default_rng(3)
    m = 50
    if kind == "int":
        x = rng.integers(-1000, 1000, m)
    elif kind == "float":
        x = rng.random(m) * 2 - 1
    elif kind == "string":
        x = np.array([f"k{v:03d}" for v in rng.integers(0, 40, m)], dtype=object)
    else:
        x = rng.integers(0, 10**9, m).astype("datetime64[ms]")
    x[7] = x[3]  # a duplicate coordinate (allowed)
    y = rng.integers(0, 100, m).astype(np.uint16)
    y[7] = y[3]
    a = np.arange(m, dtype=np.int32)
    t = np.array([None if i % 5 == 0 else f"t{i}" for i in range(m)], dtype=object)
    with tdbfilter.Array(uri, mode="w", timestamp=3) as A:
        A[x, y] = {"a": a, "t": t}
    with tiledb.open(uri) as T:
        r = T.query()[:]
    def text(v):
        return v.decode() if isinstance(v, bytes) else str(v)

    got = sorted(zip(map(text, r["x"]), r["y"].tolist(), r["a"].tolist(), nulls(r["t"])))
    want = sorted(zip(map(text, x), y.tolist(), a.tolist(), t))
    assert len(got) == m
    assert got == want


def test_sparse_one_dim_bare_array_and_errors(tmp_path):
    uri = str(tmp_path / "s")
    tdbfilter.create(uri, {"sparse": True, "dimensions": [
        {"name": "x", "type": "INT32", "domain": [0, 99], "tile": 10}],
        "attributes": [{"name": "a", "type": "FLOAT32"}]})
    with tdbfilter.Array(uri, mode="w") as A:
        A[np.array([5, 1, 9], np.int32)] = np.array([0.5, 0.1, 0.9], np.float32)
        A[(np.array([2]),)] = {"a": np.array([0.2], np.float32)}
        # Errors carry the library's message; nothing is committed.
        with pytest.raises(tdbfilter.InvalidArgument, match="(?i)duplicate"):
            A[np.array([3, 3])] = np.array([1, 2], np.float32)
        with pytest.raises(tdbfilter.InvalidArgument):
            A[np.array([100])] = np.array([1], np.float32)
        with pytest.raises(tdbfilter.InvalidArgument, match="coordinate array"):
            A[np.array([1]), np.array([2])] = np.array([1], np.float32)
        with pytest.raises(tdbfilter.InvalidArgument, match="no field 'b'"):
            A[np.array([1])] = {"b": np.array([1], np.float32)}
        with pytest.raises(tdbfilter.InvalidArgument, match="open for writing"):
            A.read("a")
    with tiledb.open(uri) as T:
        r = T.query()[:]
    assert sorted(zip(r["x"].tolist(), r["a"].tolist())) == \
        [(1, np.float32(0.1)), (2, np.float32(0.2)), (5, np.float32(0.5)), (9, np.float32(0.9))]
    assert len(tiledb.array_fragments(uri)) == 2


def test_dense_errors(tmp_path):
    uri = str(tmp_path / "e")
    tdbfilter.create(uri, {"dimensions": [{"name": "i", "type": "INT32", "domain": [0, 9],
                                           "tile": 5}],
                           "attributes": [{"name": "a", "type": "INT32"},
                                          {"name": "b", "type": "INT32"}]})
    with pytest.raises(tdbfilter.InvalidArgument, match="already exists"):
        tdbfilter.create(uri, {"dimensions": [{"name": "i", "type": "INT32",
                                               "domain": [0, 9], "tile": 5}],
                               "attributes": [{"name": "a", "type": "INT32"}]})
    with pytest.raises(tdbfilter.InvalidArgument):
        tdbfilter.create(str(tmp_path / "bad"), '{"sparse": false, "dimensions": []}')
    assert not (tmp_path / "bad").exists()
    with pytest.raises(tdbfilter.InvalidArgument, match="mode"):
        tdbfilter.Array(uri, mode="x")
    with tdbfilter.Array(uri, mode="w") as A:
        with pytest.raises(tdbfilter.InvalidArgument, match="2 attributes"):
            A[:] = np.zeros(10, np.int32)
        with pytest.raises(tdbfilter.InvalidArgument, match="field b has no data"):
            A[:] = {"a": np.zeros(10, np.int32)}
        with pytest.raises(tdbfilter.InvalidArgument, match="outside the domain"):
            A[5:11] = {"a": np.zeros(6, np.int32), "b": np.zeros(6, np.int32)}
        with pytest.raises(tdbfilter.InvalidArgument, match="value"):
            A[0:3] = {"a": np.zeros(4, np.int32), "b": np.zeros(3, np.int32)}
        with pytest.raises(tdbfilter.InvalidArgument, match="cannot write"):
            A[0:3] = {"a": np.zeros(3, np.float64), "b": np.zeros(3, np.int32)}
        with pytest.raises(tdbfilter.InvalidArgument, match="not nullable"):
            A[0:3] = {"a": np.ma.array(np.zeros(3, np.int32), mask=[1, 0, 0]),
                      "b": np.zeros(3, np.int32)}
        with pytest.raises(tdbfilter.InvalidArgument, match="steps"):
            A[0:4:2] = {"a": np.zeros(2, np.int32), "b": np.zeros(2, np.int32)}
    assert tiledb.array_fragments(uri).__len__() == 0
    with tdbfilter.Array(uri) as A, pytest.raises(tdbfilter.InvalidArgument, match="reading"):
        A[:] = {"a": np.zeros(10, np.int32), "b": np.zeros(10, np.int32)}


def test_encrypted_create_write_metadata(tmp_path):
    uri = str(tmp_path / "enc")
    a = np.arange(30, dtype=np.int64).reshape(5, 6)
    tdbfilter.from_numpy(uri, a, key=KEY, timestamp=10)
    with tdbfilter.Array(uri, mode="w", key=KEY, timestamp=11) as A:
        A[1:3, 0:2] = np.full((2, 2), -9, np.int64)
        A.meta["k"] = "secret"
    with pytest.raises(tdbfilter.DecryptionFailed):
        tdbfilter.Array(uri, mode="w")
    res, meta = tiledb_read(uri, key=KEY)
    a[1:3, 0:2] = -9
    np.testing.assert_array_equal(res if isinstance(res, np.ndarray) else res[""], a)
    assert meta == {"k": "secret"}


def test_metadata_as_tiledb_py_stores_it(tmp_path):
    uri = str(tmp_path / "m")
    tdbfilter.from_numpy(uri, np.arange(4, dtype=np.int32), timestamp=1)
    values = {"int": 7, "neg": -3, "float": 2.5, "str": "héllo", "bytes": b"\x00\x01\xff",
              "ints": (1, 2, 3), "floats": (0.5, -1.5), "np_i16": np.int16(-4),
              "np_f32": np.float32(1.25), "flat": np.arange(5, dtype=np.uint8),
              "grid": np.arange(6.0).reshape(2, 3), "gone": 1, "bool": True}
    with tdbfilter.Array(uri, mode="w", timestamp=2) as A:
        for k, v in values.items():
            A.meta[k] = v
        A.meta["int"] = 8  # replaced before the close: one write
        del A.meta["gone"]
        with pytest.raises(TypeError):
            A.meta["bad"] = [object()]
        with pytest.raises(TypeError):
            A.meta["mixed"] = (1, 2.5)
    values["int"] = 8
    del values["gone"]
    _, meta = tiledb_read(uri)
    assert set(meta) == set(values)
    for k, v in values.items():
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(meta[k], v)
            assert meta[k].dtype == v.dtype
        else:
            assert meta[k] == v, k
    assert type(meta["np_i16"]) is np.int16 and type(meta["np_f32"]) is np.float32
    # Deletion at a later timestamp; time travel sees the value before it.
    with tdbfilter.Array(uri, mode="w", timestamp=3) as A:
        del A.meta["str"]
        del A.meta["grid"]
        A.meta["flat"] = 5  # an array replaced by a plain value
    _, meta = tiledb_read(uri)
    assert "str" not in meta and "grid" not in meta and meta["flat"] == 5
    _, meta = tiledb_read(uri, timestamp=2)
    assert meta["str"] == "héllo"
    with tdbfilter.Array(uri) as A:
        assert A.meta["flat"] == 5 and "grid" not in A.meta
    with tdbfilter.Array(uri, timestamp=2) as A:
        np.testing.assert_array_equal(A.meta["grid"], values["grid"])


def test_mixed_fragments_read_equal(tmp_path):
    """TileDB-Py and the package write fragments into the same arrays, interleaved."""
    uri = str(tmp_path / "mix")
    schema = tiledb.ArraySchema(domain=tiledb.Domain(
        tiledb.Dim("r", domain=(0, 11), tile=4, dtype=np.int32),
        tiledb.Dim("c", domain=(0, 7), tile=4, dtype=np.int32)),
        attrs=[tiledb.Attr("a", dtype=np.float64, filters=[tiledb.ZstdFilter(3)]),
               tiledb.Attr("s", dtype=str, var=True)])
    tiledb.Array.create(uri, schema)
    rng = np.random.default_rng(9)
    for t in range(1, 7):
        r0, c0 = int(rng.integers(0, 8)), int(rng.integers(0, 4))
        a = rng.random((4, 4))
        s = np.array([f"{t}:{i}" for i in range(16)], dtype=object).reshape(4, 4)
        if t % 2:
            with tiledb.open(uri, "w", timestamp=t) as T:
                T[r0:r0 + 4, c0:c0 + 4] = {"a": a, "s": s}
        else:
            with tdbfilter.Array(uri, mode="w", timestamp=t) as A:
                A[r0:r0 + 4, c0:c0 + 4] = {"a": a, "s": s}
    with tiledb.open(uri) as T:
        want = T.query(attrs=["a", "s"])[:]
    with tdbfilter.Array(uri) as A:
        got = A.read(["a", "s"], [(0, 11), (0, 7)])
    np.testing.assert_array_equal(got["a"].reshape(12, 8), want["a"])
    # Unwritten cells hold TileDB's var-size fill "\0", which numpy's str cells drop.
    assert [x.rstrip("\0") for x in got["s"]] == list(want["s"].ravel())
    assert sum(x == "\0" for x in got["s"]) == sum(x == "" for x in want["s"].ravel()) > 0

    sp = str(tmp_path / "mixsparse")
    tiledb.Array.create(sp, tiledb.ArraySchema(sparse=True, domain=tiledb.Domain(
        tiledb.Dim("k", dtype="ascii")), attrs=[tiledb.Attr("v", dtype=np.int32)]))
    with tiledb.open(sp, "w", timestamp=1) as T:
        T[np.array(["b", "d"])] = {"v": np.array([1, 2], np.int32)}
    with tdbfilter.Array(sp, mode="w", timestamp=2) as A:
        A[(np.array(["a", "d", "c"], dtype=object),)] = np.array([3, 4, 5], np.int32)
    with tiledb.open(sp, "w", timestamp=3) as T:
        T[np.array(["e"])] = {"v": np.array([6], np.int32)}
    with tiledb.open(sp) as T:
        want = T.query()[:]
    with tdbfilter.Array(sp) as A:
        got = A.read(["k", "v"])
    assert [k.encode() if isinstance(k, str) else k for k in got["k"]] == list(want["k"])
    assert got["v"].tolist() == want["v"].tolist() == [3, 1, 5, 4, 6]


def test_c_contiguous_cells_are_not_copied(tmp_path):
    """A 64 MiB C-contiguous write allocates far less than its size in Python (the cells go
    to the library by address)."""
    uri = str(tmp_path / "big")
    n = 8 * 1024 * 1024
    tdbfilter.create(uri, {"dimensions": [{"name": "i", "type": "UINT64",
                                           "domain": [0, n - 1], "tile": n // 8}],
                           "attributes": [{"name": "a", "type": "INT64", "filters": "lz4"}]})
    data = np.arange(n, dtype=np.int64)
    for order, arr in [("C", data), ("F", np.asfortranarray(data.reshape(1, n)).ravel("K"))]:
        tracemalloc.start()
        with tdbfilter.Array(uri, mode="w", threads=1) as A:
            A[:] = arr
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < data.nbytes // 16, (order, peak)
    with tdbfilter.Array(uri) as A:
        assert A.read_view("a")[n - 1] == n - 1


def test_sparse_integer_coordinates_of_another_type(tmp_path):
    """A list of Python ints (int64) writes a uint64 dimension when every value fits, as
    TileDB-Py takes it; a negative coordinate is refused by name."""
    uri = str(tmp_path / "u64")
    dom = tiledb.Domain(tiledb.Dim(name="d", domain=(1, 3), tile=3, dtype=np.uint64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True,
                                                attrs=[tiledb.Attr(name="a", dtype=np.int64)]))
    with tdbfilter.Array(uri, mode="w", timestamp=1) as A:
        A[[1, 2, 3]] = np.array([10, 20, 30], dtype=np.int64)
        with pytest.raises(tdbfilter.InvalidArgument, match="dimension 'd'"):
            A[[-1]] = np.array([5], dtype=np.int64)
    with tiledb.open(uri) as T:
        r = T[:]
    assert r["d"].tolist() == [1, 2, 3] and r["a"].tolist() == [10, 20, 30]


def test_unchecked_duplicate_coordinates_match_tiledb(tmp_path):
    """``sm.check_coord_dups=false`` (TileDB's promise that a sparse write without duplicates has
    none): cells with duplicate coordinates written by tdbfilter and by TileDB-Py are the same
    files, and read back the same by both, ties in TileDB's order; a later fragment's cell
    replaces all the duplicates of an earlier one. Without the setting they are refused."""
    import os

    import tdbfilter.tiledb_compat as compat

    twins = {"ours": compat, "theirs": tiledb}
    for name, lib in twins.items():
        uri = str(tmp_path / name)
        ctx = lib.Ctx({"sm.check_coord_dups": False})
        schema = lib.ArraySchema(
            domain=lib.Domain(lib.Dim(name="id", domain=(1, 5000), tile=25, dtype="int32")),
            attrs=[lib.Attr(name="a", dtype="int32"), lib.Attr(name="s", dtype="ascii")],
            sparse=True)
        lib.Array.create(uri, schema)
        with lib.open(uri, "w", ctx=ctx, timestamp=1) as A:
            A[[1, 462, 9, 462, 462]] = {"a": np.arange(5, dtype=np.int32),
                                        "s": np.array(["x", "yy", "z", "ww", "v"], dtype="S")}
        with pytest.raises(lib.TileDBError, match="Duplicate coordinates"):
            with lib.open(uri, "w", timestamp=2) as A:
                A[[8, 8]] = {"a": np.array([5, 6], dtype=np.int32),
                             "s": np.array(["a", "b"], dtype="S")}
    ours, theirs = (str(tmp_path / n) for n in twins)
    for lib in twins.values():
        got = []
        for u in (ours, theirs):
            with lib.open(u) as A:
                got.append(A[:])
        for k in ("id", "a", "s"):
            np.testing.assert_array_equal(got[0][k], got[1][k])
        assert list(got[0]["id"]) == [1, 9, 462, 462, 462]
    frags = [sorted(os.listdir(os.path.join(u, "__fragments"))) for u in (ours, theirs)]
    for f0, f1 in zip(frags[0], frags[1]):
        for field in ("a0.tdb", "a1.tdb", "a1_var.tdb", "d0.tdb"):
            with open(os.path.join(ours, "__fragments", f0, field), "rb") as x, \
                    open(os.path.join(theirs, "__fragments", f1, field), "rb") as y:
                assert x.read() == y.read(), field
    for uri in (ours, theirs):
        with tiledb.open(uri, "w", timestamp=3) as A:
            A[[462]] = {"a": np.array([70], dtype=np.int32), "s": np.array(["n"], dtype="S")}
        for lib in twins.values():
            with lib.open(uri) as A:
                got = A[:]
            assert list(got["id"]) == [1, 9, 462] and list(got["a"]) == [0, 2, 70]
