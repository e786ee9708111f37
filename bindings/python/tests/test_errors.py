"""Every error path raises the exception of its status, with the library's message."""

import numpy as np
import pytest

import tdbfilter
from tdbfilter import Pipeline

CELLS = np.arange(100000, dtype=np.int64)


def test_exception_hierarchy():
    assert issubclass(tdbfilter.ChecksumMismatch, tdbfilter.CorruptData)
    for cls in (tdbfilter.InvalidArgument, tdbfilter.CorruptData, tdbfilter.DecryptionFailed,
                tdbfilter.Unsupported, tdbfilter.BufferTooSmall, tdbfilter.OutOfMemory,
                tdbfilter.InternalError, tdbfilter.TdbfilterIOError):
        assert issubclass(cls, tdbfilter.TdbfilterError)
    assert issubclass(tdbfilter.TdbfilterIOError, OSError)


def test_system_failures_are_io_errors(tmp_path):
    """The system's refusals are TdbfilterIOError (an OSError), naming the path."""
    plain = tmp_path / "plain"
    plain.write_bytes(b"x")
    schema = {"sparse": True, "dimensions": [{"name": "x", "type": "INT32", "domain": [0, 9],
                                              "tile": 5}],
              "attributes": [{"name": "a", "type": "INT32"}]}
    with pytest.raises(tdbfilter.TdbfilterIOError, match="plain/sub: cannot create the folder: "
                       "Not a directory") as e:
        tdbfilter.create(str(plain / "sub" / "a"), schema)
    assert isinstance(e.value, OSError) and e.value.status_name == "TDB_ERR_IO"
    with pytest.raises(OSError, match="File name too long"):
        tdbfilter.create(str(tmp_path / ("n" * 300)), schema)


def test_bad_spec_names_the_filter():
    with pytest.raises(tdbfilter.InvalidArgument, match="nosuchfilter") as e:
        Pipeline.from_spec("bitshuffle,nosuchfilter")
    assert e.value.status == 1


def test_checksum_mismatch_and_skip():
    p = Pipeline.from_spec("zstd,checksum_md5")
    tile = bytearray(p.filter(CELLS))
    tile[-10] ^= 0x01
    with pytest.raises(tdbfilter.ChecksumMismatch) as e:
        p.unfilter(bytes(tile), np.int64)
    assert e.value.status == 3 and "chunk" in str(e.value)


def test_corrupt_and_truncated_tiles():
    p = Pipeline.from_spec("bitshuffle,lz4")
    tile = p.filter(CELLS)
    with pytest.raises(tdbfilter.CorruptData):
        p.unfilter(tile[: len(tile) // 2], np.int64)
    with pytest.raises(tdbfilter.CorruptData):
        p.unfilter(b"\x01" + bytes(7), np.int64)


def test_unsupported_and_invalid():
    with pytest.raises(tdbfilter.Unsupported):
        Pipeline.from_spec("bit_width_reduction").filter(np.zeros(10, dtype=np.float64))
    with pytest.raises(tdbfilter.InvalidArgument):
        Pipeline.from_spec("zstd").filter(b"abc")  # no dtype for bytes input
    with pytest.raises(tdbfilter.InvalidArgument):
        Pipeline.from_spec("zstd").set_encryption_key(b"short")
    p = Pipeline.from_spec("zstd")
    p.close()
    with pytest.raises(tdbfilter.InvalidArgument, match="closed"):
        p.filter(CELLS)


def test_memory_limit():
    p = Pipeline.from_spec("zstd")
    tile = p.filter(CELLS)
    p.set_memory_limit(1000)
    with pytest.raises(tdbfilter.OutOfMemory, match="memory limit"):
        p.unfilter(tile, np.int64)
    p.set_memory_limit(0)
    np.testing.assert_array_equal(p.unfilter(tile, np.int64), CELLS)


def test_every_single_byte_damage_is_an_error_or_the_same_cells():
    p = Pipeline.from_spec("bitshuffle,zstd,checksum_sha256")
    cells = np.arange(3000, dtype=np.int64)
    tile = p.filter(cells)
    for i in range(len(tile)):
        bad = bytearray(tile)
        bad[i] ^= 0x80
        try:
            back = p.unfilter(bytes(bad), np.int64)
        except tdbfilter.TdbfilterError:
            continue
        np.testing.assert_array_equal(back, cells)
