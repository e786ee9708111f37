"""Reads in bounded batches: ``tdbfilter.query.Query.read_batches`` over the C batch API
(``tdb_query_submit_batch``) and TileDB-Py's incomplete queries in the TileDB-Py API
(``A.query(return_incomplete=True).multi_index[...]`` / ``.df[...]`` iterate over batches of
at most ``py.init_buffer_bytes`` bytes per buffer), each checked against TileDB-Py 0.36.1's
own incomplete iteration, concatenated."""

import numpy as np
import pandas as pd
import pandas.testing as tm
import pytest
import tiledb as tiledb_real  # the oracle, TileDB-Py 0.36.1 (a test requirement)

import tdbfilter as tiledb_like
from tdbfilter.query import Query

N = 300
BUDGET = 256  # bytes per buffer: many batches


@pytest.fixture(scope="module")
def uri(tmp_path_factory):
    """A sparse array TileDB wrote: two int dimensions, a var-size text attribute, a
    nullable int64 and a float, in two fragments."""
    uri = str(tmp_path_factory.mktemp("inc") / "sparse")
    dom = tiledb_real.Domain(
        tiledb_real.Dim("x", domain=(0, 99), tile=10, dtype=np.int64),
        tiledb_real.Dim("y", domain=(0, 9), tile=5, dtype=np.int32))
    schema = tiledb_real.ArraySchema(domain=dom, sparse=True, capacity=32, attrs=[
        tiledb_real.Attr("t", dtype=str, var=True),
        tiledb_real.Attr("n", dtype=np.int64, nullable=True),
        tiledb_real.Attr("f", dtype=np.float64)])
    tiledb_real.Array.create(uri, schema)
    rng = np.random.default_rng(7)
    cells = rng.permutation(1000)[:N]
    xs, ys = (cells // 10).astype(np.int64), (cells % 10).astype(np.int32)
    text = np.array(["w" * int(k) for k in rng.integers(0, 40, N)], dtype=object)
    ints = np.ma.array(rng.integers(-1000, 1000, N), mask=rng.random(N) < 0.3)
    for part in (slice(0, N // 2), slice(N // 2, N)):
        with tiledb_real.open(uri, "w") as T:
            T[xs[part], ys[part]] = {"t": text[part], "n": ints[part],
                                     "f": xs[part] * 0.5 + ys[part]}
    return uri


def _ctx(lib):
    return lib.Ctx({"py.init_buffer_bytes": BUDGET, "py.exact_init_buffer_bytes": "true"})


def _batches(lib, uri, indexer, selection, **query):
    with lib.open(uri, ctx=_ctx(lib)) as A:
        it = getattr(A.query(return_incomplete=True, **query), indexer)[selection]
        # (TileDB-Py's estimated_result_sizes refuses nullable fields: ours only)
        return list(it), it.estimated_result_sizes() if lib is tiledb_like else None


def _concat(batches):
    out = {}
    for b in batches:
        for k, v in b.items():
            out.setdefault(k, []).append(v)
    return {k: np.ma.concatenate(v) if any(isinstance(x, np.ma.MaskedArray) for x in v)
            else np.concatenate(v) for k, v in out.items()}


def _same(a, b):
    assert list(a) == list(b)
    for k in a:
        assert a[k].dtype == b[k].dtype, k
        if isinstance(b[k], np.ma.MaskedArray):
            assert isinstance(a[k], np.ma.MaskedArray), k
            np.testing.assert_array_equal(np.ma.getmaskarray(a[k]), np.ma.getmaskarray(b[k]))
            np.testing.assert_array_equal(a[k].compressed(), b[k].compressed())
        else:
            np.testing.assert_array_equal(a[k], b[k])


@pytest.mark.parametrize("selection", [slice(None), [slice(10, 60), slice(2, 7)],
                                       [[(0, 5), (40, 80)], slice(None)]],
                         ids=["all", "box", "ranges"])
@pytest.mark.parametrize("order", ["C", "F", "G"])
def test_multi_index_batches_concatenate_to_tiledb_pys(uri, selection, order):
    sel = tuple(selection) if isinstance(selection, list) else selection
    if order == "G" and isinstance(selection, list) and isinstance(selection[0], list):
        # TileDB refuses multi-range global order reads; so do we
        for lib in (tiledb_like, tiledb_real):
            with pytest.raises(lib.TileDBError, match="global order"):
                _batches(lib, uri, "multi_index", sel, order=order)
        return
    ours, _ = _batches(tiledb_like, uri, "multi_index", sel, order=order)
    ref, _ = _batches(tiledb_real, uri, "multi_index", sel, order=order)
    assert len(ours) > 2  # the budget splits the read
    _same(_concat(ours), _concat(ref))
    with tiledb_real.open(uri) as T:
        whole = T.query(order=order).multi_index[sel]
    assert sum(len(b["x"]) for b in ours) == len(whole["x"])
    for b in ours:
        # each buffer within the budget: fixed fields' bytes, the text's offsets and bytes
        assert b["f"].nbytes <= BUDGET and 8 * len(b["t"]) <= BUDGET
        assert sum(len(s.encode()) for s in b["t"]) <= BUDGET


def test_unordered_batches_hold_every_cell_once(uri):
    ours, _ = _batches(tiledb_like, uri, "multi_index", slice(None))
    ref, _ = _batches(tiledb_real, uri, "multi_index", slice(None))
    key = lambda d: sorted(zip(d["x"].tolist(), d["y"].tolist(), d["t"].tolist()))  # noqa: E731
    assert key(_concat(ours)) == key(_concat(ref))
    assert len(ours) > 2


def test_df_batches_concatenate_to_tiledb_pys(uri):
    ours, _ = _batches(tiledb_like, uri, "df", slice(None), order="C")
    ref, _ = _batches(tiledb_real, uri, "df", slice(None), order="C")
    assert len(ours) > 2 and all(isinstance(b, pd.DataFrame) for b in ours)
    tm.assert_frame_equal(pd.concat(ours, ignore_index=True),
                          pd.concat(ref, ignore_index=True))


def test_condition_and_attrs(uri):
    q = dict(order="C", attrs=["t", "n"], cond="f > 20.0")
    ours, _ = _batches(tiledb_like, uri, "multi_index", slice(None), **q)
    ref, _ = _batches(tiledb_real, uri, "multi_index", slice(None), **q)
    _same(_concat(ours), _concat(ref))


def test_empty_selections_yield_one_empty_result(uri):
    ours, est = _batches(tiledb_like, uri, "multi_index", tiledb_like.EmptyRange)
    assert len(ours) == 1 and list(ours[0]) == ["x", "y", "t", "n", "f"]
    assert all(len(v) == 0 for v in ours[0].values())
    # a selection whose cells all fail the condition: one empty batch too, as TileDB-Py
    ours, _ = _batches(tiledb_like, uri, "multi_index", slice(None), cond="f < -1.0")
    ref, _ = _batches(tiledb_real, uri, "multi_index", slice(None), cond="f < -1.0")
    assert len(ours) == len(ref) == 1
    _same(ours[0], ref[0])
    ours, est = _batches(tiledb_like, uri, "df", tiledb_like.EmptyRange)
    assert len(ours) == 1 and len(ours[0]) == 0
    assert all(e.data_bytes == 0 and e.offsets_bytes == 0 for e in est.values())


def test_estimated_result_sizes_are_the_result_sizes(uri):
    ours, est = _batches(tiledb_like, uri, "multi_index", (slice(10, 60),), order="C")
    cells = _concat(ours)
    n = len(cells["x"])
    assert est["x"].offsets_bytes == 0 and est["x"].data_bytes == 8 * n
    assert est["y"].data_bytes == 4 * n and est["n"].data_bytes == 8 * n
    assert est["t"].offsets_bytes == 8 * n
    assert est["t"].data_bytes == sum(len(s.encode()) for s in cells["t"])


def test_a_cell_larger_than_the_buffer_grows_the_buffers(tmp_path):
    uri = str(tmp_path / "big")
    dom = tiledb_real.Domain(tiledb_real.Dim("d", domain=(0, 9), tile=5, dtype=np.int64))
    tiledb_real.Array.create(uri, tiledb_real.ArraySchema(
        domain=dom, sparse=True, attrs=[tiledb_real.Attr("s", dtype=str, var=True)]))
    text = np.array(["a" * 1000, "b", "c" * 3000, "d"], dtype=object)
    with tiledb_real.open(uri, "w") as T:
        T[np.arange(4)] = text
    ours, _ = _batches(tiledb_like, uri, "multi_index", slice(None), order="C")
    assert _concat(ours)["s"].tolist() == text.tolist()


def test_low_level_batches_concatenate_to_read(uri):
    with tiledb_like.Array(uri) as A:
        q = Query(A, fields=["x", "y", "t", "n"], layout="row").add_range("x", 5, 70)
        whole = q.read()
        batches = list(q.read_batches(200))
        sizes = q.result_sizes(200)
    assert len(batches) > 2
    for k in whole:
        got = np.concatenate([b[k] for b in batches])
        if isinstance(whole[k], np.ma.MaskedArray):
            np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(whole[k]))
            np.testing.assert_array_equal(np.ma.getdata(got)[~np.ma.getmaskarray(got)],
                                          whole[k].compressed())
        else:
            assert got.tolist() == whole[k].tolist()
        assert sizes[k][0] == len(whole[k])
    with pytest.raises(tiledb_like.InvalidArgument, match="positive"):
        next(Query(A := tiledb_like.Array(uri)).read_batches(0))
    A.close()


def test_dense_arrays_refuse_incomplete_queries(tmp_path):
    uri = str(tmp_path / "dense")
    tiledb_like.from_numpy(uri, np.arange(10)).close()
    with tiledb_like.open(uri) as A, pytest.raises(tiledb_like.TileDBError,
                                                   match="only supported for sparse"):
        A.query(return_incomplete=True)
