"""Consolidation through the package (``tdbfilter.write.consolidate``, the C API's
``tdb_array_consolidate``, and ``tdbfilter.tiledb_compat.consolidate`` / ``Array.consolidate``)
on twins of arrays TileDB-Py 0.36.1 wrote: one twin consolidated by tdbfilter, the other by
TileDB-Py, both read equal through TileDB-Py with the same fragment timestamps."""

import json
import os
import shutil
import warnings

import numpy as np
import pytest
import tiledb

import tdbfilter
from tdbfilter import write as tw
import tdbfilter.tiledb_compat as compat

KEY = "0123456789abcdeF0123456789abcdeF"


def make(uri, sparse=True, n=6, key=None):
    """An array of n fragments at timestamps 1..n (each rewriting part of the cells)."""
    ctx = tiledb.Ctx(tiledb.Config({"sm.encryption_type": "AES_256_GCM",
                                    "sm.encryption_key": key})) if key else None
    dom = tiledb.Domain(tiledb.Dim(name="d", domain=(0, 11), tile=4, dtype=np.int32))
    schema = tiledb.ArraySchema(domain=dom, sparse=sparse,
                                attrs=[tiledb.Attr(name="a", dtype=np.int64)])
    tiledb.Array.create(uri, schema, ctx=ctx)
    for t in range(1, n + 1):
        with tiledb.open(uri, "w", timestamp=t, ctx=ctx) as A:
            lo = t % 5
            cells = np.arange(lo, lo + 4, dtype=np.int32)
            if sparse:
                A[cells] = cells.astype(np.int64) * 100 + t
            else:
                A[lo:lo + 4] = cells.astype(np.int64) * 100 + t
    return ctx


def twins(tmp_path, **kw):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    ctx = make(ours, **kw)
    shutil.copytree(ours, theirs)
    return ours, theirs, ctx


def state(uri, ctx=None):
    """TileDB-Py's view: the cells and the visible fragments' timestamp ranges."""
    with tiledb.open(uri, ctx=ctx) as A:
        cells = A[:] if A.schema.sparse else {"a": A[0:12]["a"]}
    frags = tiledb.array_fragments(uri, ctx=ctx)
    return {k: v.tolist() for k, v in cells.items()}, sorted(frags.timestamp_range)


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("case", [
    {},
    {"sm.consolidation.steps": "1", "sm.consolidation.step_min_frags": "2",
     "sm.consolidation.step_max_frags": "3"},
    {"sm.consolidation.timestamp_start": "2", "sm.consolidation.timestamp_end": "5"},
    {"sm.consolidation.step_min_frags": "2", "sm.consolidation.step_max_frags": "2",
     "sm.consolidation.step_size_ratio": "0.5"},
])
def test_consolidate_matches_tiledb(tmp_path, sparse, case):
    ours, theirs, _ = twins(tmp_path, sparse=sparse)
    tw.consolidate(ours, config=case)
    tiledb.consolidate(theirs, config=tiledb.Config(case))
    assert state(ours) == state(theirs)
    for uri in (ours, theirs):
        tiledb.vacuum(uri)
    assert state(ours) == state(theirs)
    assert len(os.listdir(os.path.join(ours, "__fragments"))) == \
        len(os.listdir(os.path.join(theirs, "__fragments")))


def test_compat_consolidate_modes_fragment_list_and_key(tmp_path):
    ours, theirs, _ = twins(tmp_path)
    names = [os.path.basename(u) for u in tiledb.array_fragments(ours).uri]
    with pytest.warns(DeprecationWarning, match="will be ignored"):
        compat.consolidate(ours, fragment_uris=names[1:4], timestamp=(1, 2))
    tiledb.consolidate(theirs, fragment_uris=names[1:4])
    assert state(ours) == state(theirs)
    # A listed consolidation merges fragments whatever the configured mode (as TileDB).
    names = [os.path.basename(u) for u in tiledb.array_fragments(ours).uri]
    compat.consolidate(ours, config={"sm.consolidation.mode": "commits"},
                       fragment_uris=names[-2:])
    tiledb.consolidate(theirs, config=tiledb.Config({"sm.consolidation.mode": "commits"}),
                       fragment_uris=names[-2:])
    assert state(ours) == state(theirs)
    with compat.open(ours, "w") as A:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            A.consolidate(config={"sm.consolidation.mode": "commits"})
    with compat.open(ours) as A, pytest.raises(compat.TileDBError, match="readonly"):
        A.consolidate()
    compat.consolidate(ours, ctx=compat.Ctx({"sm.consolidation.mode": "fragment_meta"}))
    assert tiledb.array_fragments(ours).unconsolidated_metadata_num == 0
    assert len([f for f in os.listdir(os.path.join(ours, "__commits"))
                if f.endswith(".con")]) == 1
    with pytest.raises(compat.TileDBError, match="unknown consolidation mode"):
        compat.consolidate(ours, config={"sm.consolidation.mode": "all"})
    assert state(ours) == state(theirs)

    enc = str(tmp_path / "enc")
    ctx = make(enc, n=3, key=KEY)
    before = state(enc, ctx)[0]
    with pytest.raises(tdbfilter.TdbfilterError):
        tw.consolidate(enc)
    tw.consolidate(enc, key=KEY)
    cells, frags = state(enc, ctx)
    assert cells == before and frags == [(1, 3)]


def test_low_level_refusals_write_nothing(tmp_path):
    uri = str(tmp_path / "a")
    make(uri, n=3)
    listing = sorted(os.listdir(os.path.join(uri, "__fragments")))
    names = [os.path.basename(u) for u in tiledb.array_fragments(uri).uri]
    for kw, err in [({"mode": "everything"}, "unknown consolidation mode"),
                    ({"timestamp": (3, 1)}, "after the end"),
                    ({"config": {"sm.consolidation.steps": "x"}}, "sm.consolidation.steps"),
                    ({"config": {"sm.consolidation.bogus": "1"}}, "not a consolidation setting"),
                    ({"mode": "commits", "fragments": names[:2]}, "the fragments consolidation mode"),
                    ({"fragments": [names[0], "__9_9_" + "0" * 32 + "_22"]}, "Found 1 of 2")]:
        with pytest.raises(tdbfilter.InvalidArgument, match=err):
            tw.consolidate(uri, **kw)
    assert sorted(os.listdir(os.path.join(uri, "__fragments"))) == listing
    tw.consolidate(uri, timestamp=(2, None))
    assert sorted(tiledb.array_fragments(uri).timestamp_range) == [(1, 1), (2, 3)]


@pytest.mark.parametrize("sparse", [True, False])
def test_consolidation_plan_matches_tiledb(tmp_path, sparse):
    """tiledb.ConsolidationPlan over fragments that overlap in chains, touch and stand apart,
    at desired sizes from below one fragment to above all: the same nodes in the same order."""
    uri = str(tmp_path / "plan")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int32),
                        tiledb.Dim("y", domain=(0, 9), tile=5, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=sparse,
                                                attrs=[tiledb.Attr("a", dtype=np.int64)]))
    boxes = [(0, 0), (5, 2), (50, 1), (70, 3), (72, 3), (20, 5), (90, 9), (30, 6), (74, 3),
             (2, 0), (60, 8)]
    for t, (lo, y) in enumerate(boxes, 1):
        with tiledb.open(uri, "w", timestamp=t) as A:
            if sparse:
                A[np.arange(lo, lo + 4, dtype=np.int32), np.full(4, y, np.int32)] = np.arange(4)
            else:
                A[lo:lo + 4, y:y + 1] = np.arange(4).reshape(4, 1)
    with tiledb.open(uri) as T, compat.open(uri) as O:
        for size in (1, 1000, 2500, 4000, 6000, 9000, 15000, 40000, 10**9):
            theirs = tiledb.ConsolidationPlan(tiledb.default_ctx(), T, size)
            ours = compat.ConsolidationPlan(None, O, size)
            assert [ours[i] for i in range(len(ours))] == \
                [theirs[i] for i in range(len(theirs))], size
            assert json.loads(ours.dump()) == json.loads(theirs.dump())
        with pytest.raises(compat.TileDBError, match="node that doesn't exist"):
            ours.num_fragments(len(ours))
        with pytest.raises(ValueError):
            compat.ConsolidationPlan(None, O, 1.5)


def test_group_metadata_consolidation_and_vacuum_match_tiledb(tmp_path):
    """``Group.consolidate_metadata``/``vacuum_metadata`` on twins of a group TileDB-Py wrote
    (seven metadata sessions, one deleting a key): the same files are left and both libraries
    read the same metadata from either twin."""
    twins = [str(tmp_path / "ours"), str(tmp_path / "theirs")]
    for uri in twins:
        tiledb.Group.create(uri)
        for i in range(3):
            with tiledb.Group(uri, "w") as g:
                g.meta["meta"] = i
            with tiledb.Group(uri, "w") as g:
                g.meta[f"k{i}"] = float(i)
        with tiledb.Group(uri, "w") as g:
            del g.meta["k1"]
    want = {"k0": 0.0, "k2": 2.0, "meta": 2}

    def listing(uri):
        return sorted(os.listdir(os.path.join(uri, "__meta")))

    def check(uri):
        with tiledb.Group(uri) as g:
            assert dict(g.meta.items()) == want
        with compat.Group(uri) as g:
            assert dict(g.meta.items()) == want

    spans = []
    for uri in twins:
        stamps = [int(n.split("_")[2]) for n in listing(uri)]
        spans.append([str(min(stamps)), str(max(stamps))])
    compat.Group.consolidate_metadata(twins[0])
    tiledb.Group.consolidate_metadata(twins[1])
    for uri in twins:
        names = listing(uri)
        assert len(names) == 9 and sum(n.endswith(".vac") for n in names) == 1
        check(uri)
    compat.Group.vacuum_metadata(twins[0])
    tiledb.Group.vacuum_metadata(twins[1])
    for uri in twins:
        assert len(listing(uri)) == 1
        check(uri)
    # Each merged file spans its twin's sessions (first start, last end).
    for uri, span in zip(twins, spans):
        assert listing(uri)[0].split("_")[2:4] == span
    with pytest.raises(compat.TileDBError):
        compat.Group.consolidate_metadata(str(tmp_path / "nothing"))


def test_upgrade_version_matches_tiledb(tmp_path):
    """``Array.upgrade_version`` on twins of an array TileDB 2.0.8 wrote (format version 5):
    the same folders appear, the new schema file holds the same bytes as TileDB's, and both
    libraries read version 22 and the same cells."""
    src = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "data", "arrays",
                       "2.0.8", "plain_sparse")
    twins = [str(tmp_path / "ours"), str(tmp_path / "theirs")]
    for uri in twins:
        shutil.copytree(src, uri)
    with tiledb.open(twins[1]) as A:
        assert A.schema.version == 5
        before = A[:]
    with compat.open(twins[0]) as A:
        assert A.schema.version == 5
    A.upgrade_version()
    with tiledb.open(twins[1]) as B:
        pass
    B.upgrade_version()
    trees = [sorted(os.path.relpath(os.path.join(d, n), uri) for d, ds, fs in os.walk(uri)
                    for n in ds + fs) for uri in twins]
    schema_files = []
    for uri, tree in zip(twins, trees):
        for d in ("__commits", "__fragments", "__fragment_meta", "__schema",
                  os.path.join("__schema", "__enumerations")):
            assert d in tree, (uri, d)
        files = [n for n in os.listdir(os.path.join(uri, "__schema")) if n != "__enumerations"]
        assert len(files) == 1
        with open(os.path.join(uri, "__schema", files[0]), "rb") as f:
            schema_files.append(f.read())
        for lib in (tiledb, compat):
            with lib.open(uri) as A:
                assert A.schema.version == 22
                got = A[:]
                for k in before:
                    np.testing.assert_array_equal(got[k], before[k])
    assert schema_files[0] == schema_files[1]
    # Current already: nothing more is written.
    with compat.open(twins[0]) as A:
        pass
    A.upgrade_version()
    assert len(os.listdir(os.path.join(twins[0], "__schema"))) == 2


def test_fragment_info_of_consolidated_fragment_metadata_matches_tiledb(tmp_path):
    """``array_fragments`` (``PyFragmentInfo``) after fragment metadata consolidations and
    fragment writes in between: the fragments whose footers a visible ``.meta`` file holds
    have consolidated metadata, as TileDB-Py reports on the same array, before and after the
    fragment_meta vacuum; a vacuum's deprecated ``timestamp`` warns and, as in TileDB 2.30,
    vacuums everything."""
    ours, theirs, _ = twins(tmp_path)

    def info(lib, uri):
        f = lib.array_fragments(uri)
        return f.unconsolidated_metadata_num, tuple(f.has_consolidated_metadata)

    assert info(compat, ours) == info(tiledb, ours) == (6, (False,) * 6)
    compat.consolidate(ours, config={"sm.consolidation.mode": "fragment_meta"})
    tiledb.consolidate(theirs, config=tiledb.Config({"sm.consolidation.mode": "fragment_meta"}))
    for uri in (ours, theirs):
        with tiledb.open(uri, "w", timestamp=7) as A:
            A[np.array([3], dtype=np.int32)] = np.array([7], dtype=np.int64)
        want = (1, (True,) * 6 + (False,))
        assert info(compat, uri) == info(tiledb, uri) == want
    compat.consolidate(ours, config={"sm.consolidation.mode": "fragment_meta"})
    tiledb.consolidate(theirs, config=tiledb.Config({"sm.consolidation.mode": "fragment_meta"}))
    with pytest.warns(DeprecationWarning, match="Partial vacuuming via timestamp"):
        compat.vacuum(ours, config={"sm.vacuum.mode": "fragment_meta"}, timestamp=(1, 2))
    tiledb.vacuum(theirs, config=tiledb.Config({"sm.vacuum.mode": "fragment_meta"}))
    for uri in (ours, theirs):
        assert len(os.listdir(os.path.join(uri, "__fragment_meta"))) == 1
        assert info(compat, uri) == info(tiledb, uri) == (0, (True,) * 7)
