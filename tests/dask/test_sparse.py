"""Sparse arrays as dask dataframes on the LocalCluster, against TileDB-Py's reads: overlapping
fragments, rewritten coordinates, duplicates, var strings, nullable cells, string
dimensions."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import tdbfilter
import tdbfilter.dask as tdask

SPARSE = ["s2", "sdups", "sstr"]


def _expected_frame(cols: dict) -> pd.DataFrame:
    out = {}
    for name, v in cols.items():
        if isinstance(v, np.ma.MaskedArray):
            obj = v.data.astype(object)
            obj[np.ma.getmaskarray(v)] = None
            out[name] = obj
        elif v.dtype.kind == "S" or (v.dtype == object and len(v) and isinstance(v[0], bytes)):
            # TileDB-Py gives ASCII string dimensions as bytes; tdbfilter as text
            out[name] = np.array([b.decode() for b in v.tolist()], dtype=object)
        else:
            out[name] = v.astype(object)
    return pd.DataFrame(out)


def _as_objects(df: pd.DataFrame) -> pd.DataFrame:
    """Every column as Python objects, null as None: dtypes aside, the cells."""
    return pd.DataFrame({c: pd.Series([None if v is pd.NA or (isinstance(v, float) and
                                                np.isnan(v)) else v
                                       for v in df[c].astype(object).tolist()], dtype=object)
                         for c in df.columns})


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(list(df.columns), key=lambda s: s.map(repr)).reset_index(drop=True)


@pytest.mark.parametrize("case", SPARSE)
def test_frame_equals_tiledb(arrays, client, case):
    c = arrays["sparse"][case]
    with tdbfilter.Array(c["uri"]) as a:
        columns = [d.name for d in a.dimensions] + [x.name for x in a.attributes]
    df = tdask.read(c["uri"], chunks=400)
    assert list(df.columns) == columns
    if case == "sstr":
        assert df.npartitions == 1  # no subarrays on string dimensions
    else:
        assert df.npartitions >= 8, df.npartitions
    got = client.compute(df).result()
    want = _expected_frame(c["columns"])[columns]
    assert len(got) == len(want)
    pd.testing.assert_frame_equal(_sorted(_as_objects(got)), _sorted(_as_objects(want)))


def test_column_dtypes(arrays):
    df = tdask.read(arrays["sparse"]["s2"]["uri"])
    assert df.dtypes["x"] == np.int64 and df.dtypes["a"] == np.int64
    assert df.dtypes["n"] == pd.Float64Dtype()          # nullable: pandas' masked dtype
    assert isinstance(df.dtypes["s"], pd.StringDtype)    # var text


def _overlap(b1, b2) -> bool:
    return all(lo1 <= hi2 and lo2 <= hi1 for (lo1, hi1), (lo2, hi2) in zip(b1, b2))


@pytest.mark.parametrize("case", ["s2", "sdups"])
def test_partitions_are_disjoint_while_fragments_overlap(arrays, client, case):
    """The fragments' R-tree leaves overlap (the case where reading each group of leaves'
    MBR would return some cells twice); the partitions' boxes do not, and each cell is in
    exactly one partition."""
    c = arrays["sparse"][case]
    leaves = [(f, box) for f, frag in enumerate(c["mbrs"]) for box in frag]
    assert any(f1 != f2 and _overlap(b1, b2)
               for (f1, b1), (f2, b2) in itertools.combinations(leaves, 2))
    with tdbfilter.Array(c["uri"]) as a:
        boxes = tdask._partition_boxes(a, 400)
    assert len(boxes) >= 8
    for b1, b2 in itertools.combinations(boxes, 2):
        assert not _overlap(b1, b2), (b1, b2)
    df = tdask.read(c["uri"], chunks=400)
    sizes = client.compute(df.map_partitions(len)).result().tolist()
    assert sum(sizes) == len(next(iter(c["columns"].values())))
    # every partition's cells lie in its own box
    dims = [k for k in c["columns"] if k in ("x", "y", "u", "w")]
    for box, part in zip(boxes, df.partitions):
        p = client.compute(part).result()
        for (lo, hi), dim in zip(box, dims):
            assert ((p[dim] >= lo) & (p[dim] <= hi)).all(), (dim, lo, hi)


def test_partition_sizes_follow_the_target(arrays, client):
    c = arrays["sparse"]["s2"]
    df = tdask.read(c["uri"], chunks=1000)
    sizes = client.compute(df.map_partitions(len)).result().tolist()
    assert max(sizes) <= 3 * 1000, sizes
    assert sum(sizes) == len(c["columns"]["x"])


def test_tile_mbrs_equal_tiledb(arrays):
    """Array.tile_mbrs (tdb_array_tile_mbr) gives TileDB-Py's fragment MBRs."""
    for case in SPARSE:
        c = arrays["sparse"][case]
        with tdbfilter.Array(c["uri"]) as a:
            assert len(a.fragments) == c["fragments"]
            for f, want in enumerate(c["mbrs"]):
                got = a.tile_mbrs(f)
                norm = [tuple((_plain(lo), _plain(hi)) for lo, hi in box) for box in got]
                assert norm == [tuple((_plain(lo), _plain(hi)) for lo, hi in box)
                                for box in want], (case, f)
                assert a.tile_cell_counts(f).sum() == a.fragments[f].cell_count


def _plain(v):
    if isinstance(v, bytes):
        return v.decode()
    return v.item() if isinstance(v, np.generic) else v


def test_attribute_selection(arrays, client):
    c = arrays["sparse"]["s2"]
    df = tdask.read(c["uri"], field="a", chunks=2000)
    assert list(df.columns) == ["x", "y", "a"]
    got = client.compute(df).result().sort_values(["x", "y"]).reset_index(drop=True)
    want = pd.DataFrame({k: c["columns"][k] for k in ("x", "y", "a")}) \
        .sort_values(["x", "y"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want)


def test_tile_mbr_errors_name_the_problem(arrays):
    """tdb_array_tile_mbr refuses dense fragments (no R-tree) and out-of-range indices."""
    with tdbfilter.Array(arrays["dense"]["d1"]["uri"]) as a:
        with pytest.raises(tdbfilter.InvalidArgument, match="is dense: it has no R-tree"):
            a.tile_mbrs(0)
    with tdbfilter.Array(arrays["sparse"]["s2"]["uri"]) as a:
        with pytest.raises(tdbfilter.InvalidArgument, match="fragment index 9 out of range"):
            a.tile_mbrs(9)
