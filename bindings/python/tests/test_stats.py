"""Statistics of the TileDB-Py API (``import tdbfilter as tiledb``): ``stats_enable`` …
``stats_dump``, ``Ctx.get_stats``, ``Query.get_stats`` and TileDB-Py's Python timers, with
the keys TileDB-Py 0.36.1 gives (checked against it)."""

import json

import numpy as np
import pytest
import tiledb as tiledb_real  # the oracle, TileDB-Py 0.36.1 (a test requirement)

import tdbfilter as tiledb_like


@pytest.fixture
def stats(request):
    """Statistics on (and cleared) for the test, off after it, for both implementations."""
    for lib in (tiledb_like, tiledb_real):
        lib.stats_reset()
        lib.stats_enable()
    yield
    for lib in (tiledb_like, tiledb_real):
        lib.stats_disable()
        lib.stats_reset()


def _array(lib, path):
    uri = str(path)
    dom = lib.Domain(lib.Dim("d", domain=(0, 99), tile=10, dtype=np.int64))
    lib.Array.create(uri, lib.ArraySchema(domain=dom, sparse=True,
                                          attrs=[lib.Attr("a", dtype=np.float64)]))
    with lib.open(uri, "w") as A:
        A[np.arange(100)] = np.arange(100) * 0.5
    return uri


@pytest.mark.parametrize("lib", [tiledb_like, tiledb_real], ids=["tdbfilter", "tiledb"])
def test_python_timers_and_query_stats(lib, tmp_path, stats):
    uri = _array(lib, tmp_path / "a")
    with lib.open(uri) as A:
        q = A.query()
        assert q.get_stats(print_out=False) == ""
        assert len(q[10:20]["a"]) == 10
        text = q.get_stats(print_out=False)
        assert "Context.Query.Reader" in text
        A.df[:]
    py = lib.main.python_internal_stats()
    for key in ("py.getitem_time :", "py.getitem_time.buffer_conversion_time :",
                "py.getitem_time.pandas_index_update_time :"):
        assert key in py
    dumped = lib.stats_dump(print_out=False, json=True)
    assert "python" in json.loads(dumped)
    assert "TileDB-Py Version: 0.36.1" in lib.stats_dump(print_out=False)


def test_counters_are_the_librarys(tmp_path, stats):
    uri = _array(tiledb_like, tmp_path / "a")
    with tiledb_like.open(uri) as A:
        q = A.query()
        q[:]
        one = json.loads(q.get_stats(print_out=False, json=False))[0]["counters"]
        assert one["Context.Query.Reader.loop_num"] == 1
        assert one["Context.Query.Reader.result_num"] == 100
        assert one["Context.Query.Reader.tiles_decoded"] > 0
        assert "Context.Query.Reader.bytes_decoded" in one  # counted on some tile paths only
    every = tiledb_like.default_ctx().get_stats(print_out=False, json=True)["counters"]
    assert every["Context.Query.Writer.write_num"] == 1
    assert every["Context.Query.Reader.loop_num"] == 1
    tiledb_like.stats_reset()
    assert tiledb_like.default_ctx().get_stats(print_out=False) == ""


def test_disabled_statistics(tmp_path):
    tiledb_like.stats_disable()
    tiledb_like.stats_reset()
    uri = _array(tiledb_like, tmp_path / "a")
    with tiledb_like.open(uri) as A:
        A[:]
    assert tiledb_like.default_ctx().get_stats(print_out=False) == ""
    for lib in (tiledb_like, tiledb_real):
        lib.stats_disable()
        with pytest.raises(lib.TileDBError, match="Statistics are not enabled"):
            lib.stats_dump(print_out=False)
