"""tdbfilter.Array on the arrays TileDB-Py 0.36.1 wrote (tests/data/c_array), compared with
TileDB-Py's own reads (a test requirement) and with the values the writing script wrote."""

from pathlib import Path

import numpy as np
import pytest
import tiledb

import tdbfilter

ARRAYS = Path(__file__).resolve().parents[3] / "tests" / "data" / "c_array"


def dense_a(r, c, both=True):
    if both and 3 <= r <= 5 and 2 <= c <= 3:
        return -(10 * r + c)
    return 10 * r + c if r <= 4 else -1


def test_dense_schema_fragments_and_pipelines():
    with tdbfilter.Array(ARRAYS / "dense") as A:
        assert not A.sparse
        assert [d.name for d in A.dimensions] == ["r", "c"]
        assert [(a.name, a.var, a.nullable) for a in A.attributes] == [
            ("a", False, False), ("s", True, False), ("f", False, True)]
        assert A.domain(0) == (1, 6)
        frags = A.fragments
        assert [f.timestamps for f in frags] == [(1, 1), (2, 2)]
        assert all(f.dense and f.version == 22 for f in frags)
        p = A.pipeline("a")
        assert p.spec.startswith("byteshuffle,zstd"), p.spec


def test_dense_reads_match_the_writer():
    with tdbfilter.Array(ARRAYS / "dense", threads=2) as A:
        a = A.read("a")  # the non-empty domain: rows 1..5
        assert a.dtype == np.int32 and a.shape == (20,)
        want = [dense_a(r, c) for r in range(1, 6) for c in range(1, 5)]
        assert a.tolist() == want
        box = A.read("a", [(3, 5), (2, 3)])
        assert box.tolist() == [dense_a(r, c) for r in range(3, 6) for c in range(2, 4)]
        both = A.read(["a", "f"], [(1, 1), (1, 4)])
        assert set(both) == {"a", "f"}
        f = both["f"]
        assert isinstance(f, np.ma.MaskedArray) and f.mask.tolist() == [False, True, False, False]


def test_time_travel():
    with tdbfilter.Array(ARRAYS / "dense", timestamp=1) as A:
        assert len(A.fragments) == 1
        assert A.read("a").tolist() == [dense_a(r, c, False) for r in range(1, 5) for c in range(1, 5)]
        assert A.read("a", [(1, 6), (1, 4)]).tolist() == [
            dense_a(r, c, False) for r in range(1, 7) for c in range(1, 5)]


def test_sparse_global_order_with_dedup():
    with tdbfilter.Array(ARRAYS / "sparse") as A:
        assert A.sparse
        cells = A.read()
        assert cells["x"].tolist() == [1, 5, 5, 7, 42]
        assert cells["name"].tolist() == ["m", "a", "b", "zz", "q"]
        assert cells["v"].tolist() == [30, 20, 1, 4, 3]
        assert cells["t"].tolist() == ["m", "two", "one", "four", ""]
        with pytest.raises(tdbfilter.Unsupported):
            A.read("v", [(0, 9), (0, 0)])  # string dimension: no numeric subarray


def test_metadata_and_enumeration():
    with tdbfilter.Array(ARRAYS / "meta") as A:
        assert A.metadata == {"name": "meta array", "scale": (0.5, 2.0), "version": 2}
        assert A.read("color").tolist() == [2, 0, 1, 2]
        assert A.enumeration("colors") == ["red", "green", "blue"]
        with pytest.raises(tdbfilter.InvalidArgument):
            A.enumeration("shapes")
    with tdbfilter.Array(ARRAYS / "meta", timestamp=(0, 1)) as A:
        assert A.metadata == {"gone": "x", "scale": (0.5, 2.0), "version": 1}


def test_memory_limit():
    with tdbfilter.Array(ARRAYS / "dense", memory_limit=64) as A:
        with pytest.raises(tdbfilter.OutOfMemory, match="80 bytes"):
            A.read("a")  # 20 int32 cells
    with tdbfilter.Array(ARRAYS / "dense", memory_limit=80) as A:
        assert len(A.read("a")) == 20


def test_errors_and_close(tmp_path):
    with pytest.raises(tdbfilter.InvalidArgument):
        tdbfilter.Array(tmp_path / "missing")
    with pytest.raises(tdbfilter.Unsupported):
        tdbfilter.Array("tiledb://namespace/array")
    # Object stores are read (tests/object_store/); a bad configuration key is refused by name.
    with pytest.raises(tdbfilter.InvalidArgument, match="vfs.s3.no_such_key"):
        tdbfilter.Array("s3://bucket/array", config={"vfs.s3.no_such_key": "1"})
    A = tdbfilter.Array(ARRAYS / "dense")
    with pytest.raises(tdbfilter.InvalidArgument):
        A.read("nope")
    A.close()
    A.close()
    with pytest.raises(tdbfilter.InvalidArgument):
        A.read("a")


@pytest.mark.parametrize("name", ["dense", "sparse", "meta"])
def test_same_cells_as_tiledb_py(name):
    uri = str(ARRAYS / name)
    with tiledb.open(uri) as T, tdbfilter.Array(uri) as A:
        if T.schema.sparse:
            theirs = T.query(order="G")[:]
        else:  # the non-empty domain, as tdbfilter reads by default
            theirs = T[tuple(slice(lo, hi + 1) for lo, hi in T.nonempty_domain())]
        enums = {a.name: A.enumeration(T.attr(a.name).enum_label)
                 for a in A.attributes if T.attr(a.name).enum_label}
        ours = A.read([d.name for d in A.dimensions] + [a.name for a in A.attributes]
                      if A.sparse else None)
        for field, t in theirs.items():
            if field not in ours:
                continue  # dense coordinates
            o = ours[field]
            if field in enums:  # TileDB-Py shows enumeration values; ours are the indices
                o = np.array([enums[field][i] for i in o], dtype=object)
            t = np.asarray(t).ravel()
            if o.dtype == object:
                t = [x.decode() if isinstance(x, bytes) else x for x in t.tolist()]
                # TileDB's var fill value is one NUL byte; TileDB-Py shows it as ''.
                mine = [x if x not in (None, "\x00") else "" for x in o.tolist()]
                assert mine == t, field
            else:
                assert np.ma.getdata(o).tobytes() == t.astype(o.dtype).tobytes(), field  # NaN-safe


def test_subarray_bounds_are_checked_against_the_schema():
    with tdbfilter.Array(ARRAYS / "dense") as A:  # dimensions r, c: int32
        with pytest.raises(tdbfilter.InvalidArgument,
                           match=r"1 range\(s\); the array's 2 dimension\(s\) need "
                                 r"\[low, high\] of 'r' \(int32, 4 bytes each\), "
                                 r"\[low, high\] of 'c' \(int32, 4 bytes each\)"):
            A.read("a", [(1, 2)])
        with pytest.raises(tdbfilter.InvalidArgument, match="3 range"):
            A.read("a", [(1, 2), (1, 2), (1, 2)])
        with pytest.raises(tdbfilter.InvalidArgument,
                           match="dimension 'c' is int32: bound 2.5 is not an integer"):
            A.read("a", [(1, 2), (2.5, 3)])
        with pytest.raises(tdbfilter.InvalidArgument,
                           match=r"dimension 'r' is int32: bound 4294967297 is outside"):
            A.read("a", [(1, 2**32 + 1), (1, 2)])
        with pytest.raises(tdbfilter.InvalidArgument, match="dimension 'r' is int32: bound 'a'"):
            A.read("a", [("a", "b"), (1, 2)])
        with pytest.raises(tdbfilter.InvalidArgument, match="dimension 'r' is int32: bound True"):
            A.read("a", [(True, 2), (1, 2)])
        with pytest.raises(tdbfilter.InvalidArgument, match=r"'c' \(int32\): the range 3"):
            A.read("a", [(1, 2), 3])
        with pytest.raises(tdbfilter.InvalidArgument, match="not a sequence of ranges"):
            A.read("a", 5)
        # numpy integers of any width are integers
        box = A.read("a", [(np.int64(3), np.uint8(5)), (np.int16(2), 3)])
        assert box.tolist() == [dense_a(r, c) for r in range(3, 6) for c in range(2, 4)]
    with tdbfilter.Array(ARRAYS / "meta") as A:  # dimension d: uint8
        with pytest.raises(tdbfilter.InvalidArgument, match=r"'d' is uint8: bound -1 is outside \[0, 255\]"):
            A.read("color", [(-1, 2)])
        assert A.read("color", [(1, 2)]).tolist() == [0, 1]


def test_datatypes_of_fields():
    with tdbfilter.Array(ARRAYS / "dense") as A:
        assert [f.cell_type.name for f in A.dimensions + A.attributes] == [
            "int32", "int32", "int32", "string_utf8", "float64"]
        assert A.attributes[0].cell_type.dtype == np.dtype("<i4")
