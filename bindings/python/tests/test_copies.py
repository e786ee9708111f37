"""No avoidable copies: unfilter, the codec's decode and Array reads put the cells straight into
numpy memory. Python's allocations (bytes objects and numpy arrays alike, numpy reports its
buffers to tracemalloc) are traced: the peak during a call is what that call copied."""

import ctypes
import tracemalloc

import numpy as np
import pytest
import tiledb

import tdbfilter
from tdbfilter.numcodecs_codec import TileDBCodec

MIB = 1 << 20
CELLS = (np.arange(1 << 20, dtype=np.int64) * 7919) % 100_003  # 8 MiB, compresses well


def traced_peak(fn):
    """``(result, peak bytes Python allocated during fn())``."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = fn()
        return result, tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def no_string_at(monkeypatch):
    """From here on, ctypes.string_at (a copy of library memory into bytes) fails the test."""
    def refuse(*args):
        raise AssertionError("ctypes.string_at copied library memory into bytes")
    monkeypatch.setattr(ctypes, "string_at", refuse)


def test_unfilter_allocates_only_its_result(monkeypatch):
    p = tdbfilter.Pipeline.from_spec("byteshuffle,zstd:3")
    tile = p.filter(CELLS)
    no_string_at(monkeypatch)
    back, peak = traced_peak(lambda: p.unfilter(tile, np.int64))
    np.testing.assert_array_equal(back, CELLS)
    # The result's memory is its own (a buffer of the unfilter pool, returned to the pool
    # when the result and its views are gone), writable, no view of the input.
    assert back.flags.writeable and back.base is not None
    assert not np.shares_memory(back, np.frombuffer(tile, np.uint8))
    # The result itself (8 MiB) and a few small objects; a bytes copy would double it.
    assert peak < CELLS.nbytes + MIB // 8, f"unfilter allocated {peak} bytes"


@pytest.mark.parametrize("wrap", [bytes, bytearray, memoryview,
                                  lambda b: np.frombuffer(b, np.uint8)])
def test_unfilter_reads_any_buffer_in_place(wrap):
    p = tdbfilter.Pipeline.from_spec("bitshuffle,lz4")
    tile = wrap(p.filter(CELLS))
    back, peak = traced_peak(lambda: p.unfilter(tile, np.int64))
    np.testing.assert_array_equal(back, CELLS)
    assert peak < CELLS.nbytes + MIB // 8, f"unfilter of a {type(tile).__name__} allocated {peak}"
    out = np.empty_like(CELLS)
    n, peak = traced_peak(lambda: p.unfilter_into(tile, out, np.int64))
    assert n == CELLS.nbytes and peak < MIB // 8
    np.testing.assert_array_equal(out, CELLS)


def test_unfilter_of_an_empty_tile():
    p = tdbfilter.Pipeline.from_spec("zstd")
    back = p.unfilter(p.filter(np.zeros(0, np.int32)), np.int32)
    assert back.dtype == np.int32 and back.shape == (0,)


def test_memory_limit_is_checked_before_numpy_allocates():
    p = tdbfilter.Pipeline.from_spec("zstd")
    tile = p.filter(CELLS)
    p.set_memory_limit(CELLS.nbytes - 1)
    with pytest.raises(tdbfilter.OutOfMemory, match=f"needs {CELLS.nbytes} bytes"):
        traced_peak(lambda: p.unfilter(tile, np.int64))
    p.set_memory_limit(CELLS.nbytes)
    np.testing.assert_array_equal(p.unfilter(tile, np.int64), CELLS)
    # unfilter_into allocates nothing: the limit does not apply (as in the C API).
    p.set_memory_limit(16)
    out = np.empty_like(CELLS)
    assert p.unfilter_into(tile, out, np.int64) == CELLS.nbytes


def test_codec_decodes_into_out(monkeypatch):
    codec = TileDBCodec("byteshuffle,zstd:3", dtype="i8")
    enc = codec.encode(CELLS)

    def refuse(*args):
        raise AssertionError("decode went through a copy (ndarray_copy)")
    monkeypatch.setattr("tdbfilter.numcodecs_codec.ndarray_copy", refuse)
    for out in (np.empty_like(CELLS), np.empty((1024, 1024), np.int64, order="F"),
                bytearray(CELLS.nbytes)):
        got, peak = traced_peak(lambda: codec.decode(enc, out))
        assert peak < MIB // 8, f"decode into out allocated {peak} bytes"
        np.testing.assert_array_equal(got.reshape(-1, order="A").view(np.int64), CELLS)
        assert np.shares_memory(np.asarray(got), np.frombuffer(out, np.uint8)
                                if isinstance(out, bytearray) else out)


def test_codec_decode_into_an_out_of_the_wrong_size():
    codec = TileDBCodec("zstd", dtype="i8")
    enc = codec.encode(CELLS)
    with pytest.raises(tdbfilter.BufferTooSmall):
        codec.decode(enc, np.empty(CELLS.size - 1, np.int64))
    with pytest.raises(ValueError, match="decodes to"):
        codec.decode(enc, np.empty(CELLS.size + 1, np.int64))


def test_codec_decode_into_a_strided_out_still_works():
    codec = TileDBCodec("zstd", dtype="i8")
    enc = codec.encode(CELLS[:1000])
    base = np.zeros(2000, np.int64)
    got = codec.decode(enc, base[::2])
    np.testing.assert_array_equal(base[::2], CELLS[:1000])
    assert not base[1::2].any() and np.shares_memory(got, base)


def test_array_read_copies_cells_once(tmp_path, monkeypatch):
    uri = str(tmp_path / "big")
    n = CELLS.size
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=n // 8, dtype=np.int64))
    schema = tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=tiledb.FilterList([tiledb.ByteShuffleFilter(),
                                                                    tiledb.ZstdFilter(3)])),
        tiledb.Attr("v", dtype=np.float32, nullable=True)])
    tiledb.Array.create(uri, schema)
    valid = (CELLS % 3 != 0).astype(np.uint8)
    with tiledb.open(uri, "w") as T:
        T[:] = {"a": CELLS, "v": np.ma.array(CELLS.astype(np.float32), mask=valid == 0)}
    with tiledb.open(uri) as T:
        want = T[:]
    with tdbfilter.Array(uri, threads=1) as A:
        no_string_at(monkeypatch)
        a, peak = traced_peak(lambda: A.read("a"))
        np.testing.assert_array_equal(a, want["a"])
        assert a.flags.writeable
        assert peak < CELLS.nbytes + MIB // 8, f"Array.read allocated {peak} bytes"
        v = A.read("v")
        np.testing.assert_array_equal(v.mask, valid == 0)
        np.testing.assert_array_equal(v.data[valid == 1], want["v"][valid == 1])


def test_unfilter_reuses_memory_only_when_the_result_is_gone():
    """unfilter's output pool: the memory of a result that is gone (with its views) serves
    the next result of the same size; live results never share memory; limit 0 keeps none."""
    p = tdbfilter.Pipeline.from_spec("bitshuffle,lz4")
    tile = p.filter(CELLS)
    first = p.unfilter(tile, np.int64)
    addr = first.ctypes.data
    second = p.unfilter(tile, np.int64)
    assert second.ctypes.data != addr  # first is alive
    view = first[10:20]
    del first
    third = p.unfilter(tile, np.int64)
    assert third.ctypes.data != addr  # a view of first is alive
    np.testing.assert_array_equal(view, CELLS[10:20])
    del view
    fourth = p.unfilter(tile, np.int64)
    assert fourth.ctypes.data == addr  # recycled, and decoded anew
    np.testing.assert_array_equal(fourth, CELLS)
    fourth[:] = -1  # writable, and no other result sees it
    np.testing.assert_array_equal(second, CELLS)
    np.testing.assert_array_equal(third, CELLS)
    # another dtype of the same size reuses it too
    del fourth
    dates = p.unfilter(tile, "datetime_ns")
    assert dates.ctypes.data == addr and dates.dtype == np.dtype("datetime64[ns]")
    np.testing.assert_array_equal(dates.view(np.int64), CELLS)
    del dates
    from tdbfilter.pipeline import _POOL
    assert _POOL.held >= CELLS.nbytes
    try:
        tdbfilter.set_unfilter_pool_limit(0)  # drops what the pool holds, keeps nothing
        assert _POOL.held == 0 and not _POOL.free
        a = p.unfilter(tile, np.int64)
        del a
        assert _POOL.held == 0 and not _POOL.free
        np.testing.assert_array_equal(p.unfilter(tile, np.int64), CELLS)
    finally:
        tdbfilter.set_unfilter_pool_limit(64 << 20)
    with pytest.raises(tdbfilter.InvalidArgument, match="byte count"):
        tdbfilter.set_unfilter_pool_limit(-1)
