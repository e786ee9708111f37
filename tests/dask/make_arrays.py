"""Writes the test arrays with TileDB-Py 0.36.1 (libtiledb 2.30) and TileDB-Py's own reads of
them (the expected results), for tests/dask: run with a Python that has ``tiledb``
(``python make_arrays.py OUT_DIR``). The tests themselves run without tiledb (the Dask
workers' environment has only tdbfilter), so the oracle's answers are computed here and
pickled to ``OUT_DIR/expected.pkl``:

``{"dense": {case: {"uri", "subarray", "fields": {name: cells}},
             "from_tiledb-<array>": {"uri", "field", "shape", "chunks", "cells"}},
   "sparse": {array: {"columns": {name: cells}, "global_columns": (in global order), "mbrs": per fragment per tile ((lo, hi), ...),
                      "cell_counts", "fragments"}}}`` (``from_tiledb-*``: the dask array
``dask.array.from_tiledb`` gives, so this script needs dask beside tiledb).
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import dask.array as da
import numpy as np
import tiledb
from tiledb.sparse_array import _setitem_impl_sparse

ZSTD = tiledb.FilterList([tiledb.ZstdFilter(level=3)])
SHUF = tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.LZ4Filter()])


def dense_arrays(root: Path) -> dict:
    cases = {}

    # 1-D float64, written whole in one fragment.
    uri = str(root / "d1")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 999), tile=128, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr("a", dtype=np.float64, filters=ZSTD)]))
    with tiledb.open(uri, "w") as A:
        A[:] = np.cumsum(np.random.default_rng(1).normal(size=1000))

    # 2-D, two attributes, a domain starting at 5 (not a multiple of the tile), two overlapping fragments (the second
    # overwrites part of the first), cells never written read as fill values.
    uri2 = str(root / "d2")
    dom = tiledb.Domain(tiledb.Dim("r", domain=(1, 60), tile=16, dtype=np.int32),
                        tiledb.Dim("c", domain=(5, 54), tile=10, dtype=np.int32))
    tiledb.Array.create(uri2, tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr("a", dtype=np.int32, filters=ZSTD),
                           tiledb.Attr("b", dtype=np.float32, filters=SHUF)]))
    rng = np.random.default_rng(2)
    with tiledb.open(uri2, "w", timestamp=1) as A:
        A[1:41, 5:41] = {"a": rng.integers(-1000, 1000, (40, 36), dtype=np.int32),
                          "b": rng.normal(size=(40, 36)).astype(np.float32)}
    with tiledb.open(uri2, "w", timestamp=2) as A:
        A[30:58, 30:55] = {"a": rng.integers(-1000, 1000, (28, 25), dtype=np.int32),
                           "b": rng.normal(size=(28, 25)).astype(np.float32)}

    # 3-D uint16 dimensions.
    uri3 = str(root / "d3")
    dom = tiledb.Domain(tiledb.Dim("t", domain=(0, 19), tile=4, dtype=np.uint16),
                        tiledb.Dim("y", domain=(0, 29), tile=7, dtype=np.uint16),
                        tiledb.Dim("z", domain=(0, 13), tile=5, dtype=np.uint16))
    tiledb.Array.create(uri3, tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr("v", dtype=np.int16, filters=ZSTD)]))
    with tiledb.open(uri3, "w") as A:
        A[:] = (np.arange(20 * 30 * 14) % 30011 - 15000).astype(np.int16).reshape(20, 30, 14)

    # Var-size strings and nullable attributes in a dense array.
    uri4 = str(root / "dvar")
    dom = tiledb.Domain(tiledb.Dim("r", domain=(0, 29), tile=8, dtype=np.int64),
                        tiledb.Dim("c", domain=(0, 9), tile=4, dtype=np.int64))
    tiledb.Array.create(uri4, tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr("s", dtype=str, var=True, filters=ZSTD),
                           tiledb.Attr("f", dtype=np.float64, nullable=True),
                           tiledb.Attr("i", dtype=np.int32, nullable=True)]))
    s = np.array([("é" * (k % 4)) + f"cell{k}" for k in range(300)], dtype=object).reshape(30, 10)
    f = np.where(np.arange(300) % 7 == 0, np.nan, np.arange(300) * 0.5).reshape(30, 10)
    i = np.arange(300, dtype=np.int32).reshape(30, 10)
    i_valid = (np.arange(300) % 5 != 0).astype(np.uint8).reshape(30, 10)
    with tiledb.open(uri4, "w") as A:
        # TileDB-Py's A[...] = takes no validity for 2-D integer cells: its nullmaps argument.
        A._setitem_impl(slice(None), {"s": s, "f": f, "i": i}, {"i": i_valid})

    # A huge domain (10^5 x 10^5 space tiles) with one small block written: dask must not
    # build its chunks' tasks up front.
    uri5 = str(root / "dhuge")
    dom = tiledb.Domain(tiledb.Dim("r", domain=(0, 10**8 - 1), tile=1000, dtype=np.int64),
                        tiledb.Dim("c", domain=(0, 10**8 - 1), tile=1000, dtype=np.int64))
    tiledb.Array.create(uri5, tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr("a", dtype=np.int64)]))
    with tiledb.open(uri5, "w") as A:
        A[999:1003, 2998:3001] = np.arange(12, dtype=np.int64).reshape(4, 3)

    def expect(name, uri, sub, fields, timestamp=None):
        with tiledb.open(uri, timestamp=timestamp) as A:
            # A[lo:hi+1] (coordinates, stop exclusive): masked arrays for nullable fields,
            # which multi_index does not give for dense arrays.
            got = A[tuple(slice(lo, hi + 1) for lo, hi in sub)]
            cases[name] = {"uri": uri, "subarray": sub,
                           "fields": {k: _plain(got[k]) for k in fields}}

    def ned(uri):
        with tiledb.open(uri) as A:
            return [tuple(int(v) for v in r) for r in A.nonempty_domain()]

    def whole(name, uri, fields):
        # TileDB-Py's A[:] of a dense array: its whole domain (what from_tiledb covers).
        with tiledb.open(uri) as A:
            dom = [tuple(int(v) for v in d.domain) for d in A.schema.domain]
            got = A[:]
            cases[name] = {"uri": uri, "subarray": dom, "default_box": True,
                           "fields": {k: _plain(got[k]) for k in fields}}

    whole("d2-domain", uri2, ["a", "b"])  # written area 1..57 x 5..54 of 1..60 x 5..54
    whole("d3-domain", uri3, ["v"])

    # A 2-D array with its domain from 0, partly written (rows 0..22 of 0..69, columns 3..40
    # of 0..49): what dask.array.from_tiledb gives is the oracle of tdbfilter.dask.read's
    # default box and chunks. (from_tiledb slices TileDB-Py's DenseArray with the dask
    # array's indices as coordinates, so it computes only arrays whose domain starts at 0;
    # of d2, whose domain starts at (1, 5), only its shape and chunks are taken.)
    uri6 = str(root / "dpart")
    dom = tiledb.Domain(tiledb.Dim("r", domain=(0, 69), tile=16, dtype=np.int64),
                        tiledb.Dim("c", domain=(0, 49), tile=8, dtype=np.int64))
    tiledb.Array.create(uri6, tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr("a", dtype=np.float64, filters=ZSTD)]))
    with tiledb.open(uri6, "w") as A:
        A[0:23, 3:41] = np.random.default_rng(6).normal(size=(23, 38))
    for name, u, attr, compute in (("dpart", uri6, "a", True), ("d2", uri2, "a", False)):
        x = da.from_tiledb(u, attribute=attr)
        cases[f"from_tiledb-{name}"] = {
            "uri": u, "field": attr, "shape": x.shape, "chunks": x.chunks,
            "cells": x.compute(scheduler="sync") if compute else None}

    expect("d1", uri, ned(uri), ["a"])
    expect("d1-sub", uri, [(77, 901)], ["a"])
    expect("d2", uri2, ned(uri2), ["a", "b"])
    expect("d2-sub", uri2, [(5, 59), (5, 22)], ["a", "b"])
    expect("d2-fill", uri2, [(41, 60), (5, 29)], ["a", "b"])  # never written: fill values
    expect("d2-t1", uri2, [(1, 57), (5, 54)], ["a"], timestamp=1)  # the first fragment only
    expect("d3", uri3, ned(uri3), ["v"])
    expect("d3-sub", uri3, [(3, 17), (6, 22), (1, 13)], ["v"])
    expect("dvar", uri4, ned(uri4), ["s", "f", "i"])
    expect("dvar-sub", uri4, [(3, 27), (1, 8)], ["s", "f", "i"])
    expect("dhuge-sub", uri5, [(990, 1010), (2990, 3005)], ["a"])
    return cases


def _plain(values):
    """TileDB-Py's cells as plain numpy: masked arrays kept masked, strings as str."""
    if isinstance(values, np.ma.MaskedArray):
        return np.ma.array(values.data, mask=np.ma.getmaskarray(values))
    return np.asarray(values)


def sparse_arrays(root: Path) -> dict:
    out = {}
    rng = np.random.default_rng(3)

    # 2-D int64 dimensions, three fragments whose regions overlap and that rewrite some of
    # the same coordinates (no duplicates: the newest cell wins), a small capacity so that
    # each fragment has many R-tree leaves; var strings and a nullable float attribute.
    uri = str(root / "s2")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 999), tile=100, dtype=np.int64),
                        tiledb.Dim("y", domain=(-500, 499), tile=100, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, sparse=True, capacity=64,
        attrs=[tiledb.Attr("a", dtype=np.int64, filters=ZSTD),
               tiledb.Attr("s", dtype=str, var=True),
               tiledb.Attr("n", dtype=np.float64, nullable=True)]))
    regions = [((0, 700), (-500, 200)), ((300, 999), (-200, 499)), ((200, 800), (-300, 300))]
    seen = set()
    for t, ((x0, x1), (y0, y1)) in enumerate(regions, start=1):
        n = 3000
        pts = set()
        while len(pts) < n:
            pts.add((int(rng.integers(x0, x1 + 1)), int(rng.integers(y0, y1 + 1))))
        pts = sorted(pts | (seen if t == 3 else set()))  # the last rewrites earlier cells
        seen |= set(pts)
        x = np.array([p[0] for p in pts], np.int64)
        y = np.array([p[1] for p in pts], np.int64)
        k = np.arange(len(pts))
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[x, y] = {"a": k * 10 + t,
                       "s": np.array([f"f{t}-{j}" * (j % 3) for j in k], dtype=object),
                       "n": np.where(k % 11 == 0, np.nan, k / 4.0)}
    out["s2"] = _sparse_expect(uri)

    # Duplicates allowed, a float64 and an int32 dimension, duplicates within and across
    # fragments (every one is kept), overlapping fragments.
    uri = str(root / "sdups")
    dom = tiledb.Domain(tiledb.Dim("u", domain=(-1.0, 1.0), tile=0.25, dtype=np.float64),
                        tiledb.Dim("w", domain=(0, 99), tile=10, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, sparse=True, capacity=32, allows_duplicates=True,
        attrs=[tiledb.Attr("v", dtype=np.int32)]))
    for t in (1, 2, 3):
        n = 1500
        u = np.round(rng.uniform(-1, 1, n), 2)  # few distinct values: many duplicates
        w = rng.integers(0, 100, n).astype(np.int32)
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[u, w] = {"v": (np.arange(n) + 10000 * t).astype(np.int32)}
    out["sdups"] = _sparse_expect(uri)

    # A string dimension (one partition: no subarrays on string dimensions).
    uri = str(root / "sstr")
    dom = tiledb.Domain(tiledb.Dim("k", domain=(None, None), tile=None, dtype="ascii"))
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, sparse=True, attrs=[tiledb.Attr("v", dtype=np.int64)]))
    for t in (1, 2):
        keys = np.array([f"key{j:04d}" for j in range(t * 100, t * 100 + 300)], dtype=object)
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[keys] = {"v": np.arange(300, dtype=np.int64) + t * 1000}
    out["sstr"] = _sparse_expect(uri)

    # 1-D, an int64 dimension, two fragments (the second rewrites some cells), a nullable
    # int32 and a float32 attribute.
    uri = str(root / "s1")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(-5000, 4999), tile=500, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, sparse=True, capacity=100,
        attrs=[tiledb.Attr("n", dtype=np.int32, nullable=True, filters=ZSTD),
               tiledb.Attr("p", dtype=np.float32)]))
    for t in (1, 2):
        x = np.unique(rng.integers(-5000, 5000, 700)).astype(np.int64)
        k = np.arange(len(x))
        with tiledb.open(uri, "w", timestamp=t) as A:
            # TileDB-Py's A[x] = takes no validity for integer cells: its nullmaps argument.
            _setitem_impl_sparse(A, x, {"n": (k * 3 + t).astype(np.int32),
                                        "p": (k / 2.0 - t).astype(np.float32)},
                                 {"n": (k % 6 != 0).astype(np.uint8)})
    out["s1"] = _sparse_expect(uri)
    return out


def _sparse_expect(uri: str) -> dict:
    with tiledb.open(uri) as A:
        got = A.query(order="U")[:]
        cols = {k: _plain(v) for k, v in got.items()}
        ordered = A.query(order="G")[:]  # the order tdbfilter's reads give
        global_cols = {k: _plain(v) for k, v in ordered.items()}
    fi = tiledb.array_fragments(uri, include_mbrs=True)
    return {"uri": uri, "columns": cols, "global_columns": global_cols,
            "mbrs": [[tuple(tuple(r) for r in tile) for tile in frag] for frag in fi.mbrs],
            "fragments": len(fi)}


def main() -> None:
    root = Path(sys.argv[1])
    root.mkdir(parents=True, exist_ok=True)
    expected = {"dense": dense_arrays(root), "sparse": sparse_arrays(root),
                "tiledb": tiledb.__version__, "libtiledb": tiledb.libtiledb.version()}
    (root / "expected.pkl").write_bytes(pickle.dumps(expected))


if __name__ == "__main__":
    main()
