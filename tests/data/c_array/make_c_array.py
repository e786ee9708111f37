"""Writes the two small arrays c-tests/test_array.c reads (dense/, sparse/ and meta/ beside this
script) with TileDB-Py 0.36.1 (libtiledb 2.30.0). Run from anywhere:

    .venv/bin/python tests/data/c_array/make_c_array.py

Fragment timestamps are fixed (1, 2, 3) so the C test can time-travel; folder names still
carry random uuids, so rerunning changes the files but not what they hold.
"""

import os
import shutil

import numpy as np
import tiledb

HERE = os.path.dirname(os.path.abspath(__file__))


def dense(uri):
    # 2-D, rows 1..6 x cols 1..4, tiles 2x3, three attributes; two overlapping fragments.
    dom = tiledb.Domain(tiledb.Dim("r", domain=(1, 6), tile=2, dtype=np.int32),
                        tiledb.Dim("c", domain=(1, 4), tile=3, dtype=np.int32))
    attrs = [tiledb.Attr("a", dtype=np.int32, fill=-1,
                         filters=tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()])),
             tiledb.Attr("s", dtype=str, var=True),
             tiledb.Attr("f", dtype=np.float64, nullable=True)]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=attrs))
    # Fragment 1 (timestamp 1): rows 1..4, cols 1..4, a = 10*r + c.
    r, c = np.meshgrid(np.arange(1, 5), np.arange(1, 5), indexing="ij")
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[1:5, 1:5] = {"a": (10 * r + c).astype(np.int32),
                       "s": np.array([f"{x}" * (x % 3) for x in (10 * r + c).ravel()], dtype=object).reshape(4, 4),
                       "f": np.ma.array((r + c / 10).astype(np.float64), mask=(c == 2))}
    # Fragment 2 (timestamp 2): rows 3..5, cols 2..3, a = -(10*r + c).
    r, c = np.meshgrid(np.arange(3, 6), np.arange(2, 4), indexing="ij")
    with tiledb.open(uri, "w", timestamp=2) as A:
        A[3:6, 2:4] = {"a": -(10 * r + c).astype(np.int32),
                       "s": np.full((3, 2), "new", dtype=object),
                       "f": np.ma.array(np.full((3, 2), 0.5), mask=np.zeros((3, 2), dtype=bool))}


def sparse(uri):
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64),
                        tiledb.Dim("name", dtype="ascii"))
    attrs = [tiledb.Attr("v", dtype=np.uint16), tiledb.Attr("t", dtype=str, var=True, nullable=True)]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=attrs, sparse=True, capacity=2))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.array([5, 5, 42, 7]), np.array(["b", "a", "q", "zz"], dtype="S")] = {
            "v": np.array([1, 2, 3, 4], dtype=np.uint16),
            "t": np.array(["one", None, "", "four"], dtype=object)}
    # Overwrites (5, "a") and adds (1, "m").
    with tiledb.open(uri, "w", timestamp=3) as A:
        A[np.array([5, 1]), np.array(["a", "m"], dtype="S")] = {
            "v": np.array([20, 30], dtype=np.uint16),
            "t": np.array(["two", "m"], dtype=object)}


def meta(uri):
    # 1-D dense, an enumeration-typed attribute and array metadata (two writes: the second
    # replaces "version" and deletes "gone").
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 3), tile=4, dtype=np.uint8))
    colors = tiledb.Enumeration("colors", True, ["red", "green", "blue"])
    attrs = [tiledb.Attr("color", dtype=np.int8, enum_label="colors")]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=attrs, enums=[colors]))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[0:4] = {"color": np.array([2, 0, 1, 2], dtype=np.int8)}
        A.meta["version"] = 1
        A.meta["gone"] = "x"
        A.meta["scale"] = (0.5, 2.0)
    with tiledb.open(uri, "w", timestamp=2) as A:
        A.meta["version"] = 2
        A.meta["name"] = "meta array"
        del A.meta["gone"]


for name, make in (("dense", dense), ("sparse", sparse), ("meta", meta)):
    uri = os.path.join(HERE, name)
    shutil.rmtree(uri, ignore_errors=True)
    make(uri)
    with tiledb.open(uri) as A:
        print(name, A.query(order="G")[:] if A.schema.sparse else A[:])
