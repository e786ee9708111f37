"""The numcodecs codec: numcodecs' own codec checks, the entry point, and a zarr round trip."""

import numcodecs
import numpy as np
import pytest
import zarr
from numcodecs.tests.common import check_config, check_encode_decode

import tdbfilter
from tdbfilter.numcodecs_codec import TileDBCodec

ARRAYS = [
    np.arange(1000, dtype="i8"),
    np.linspace(1000, 1001, 1000, dtype="f8"),
    np.random.default_rng(2).integers(0, 2**31, size=1000, dtype="u4"),
    np.arange(1000, dtype="i2").reshape(10, 100),
]


@pytest.mark.parametrize("spec", ["zstd", "bitshuffle,lz4", "byteshuffle,zstd:3", "gzip:9"])
def test_encode_decode(spec):
    for arr in ARRAYS:
        check_encode_decode(arr, TileDBCodec(spec, dtype=arr.dtype))


def test_config_repr_and_registry():
    codec = TileDBCodec("bitshuffle,zstd:3", dtype="int64")
    check_config(codec)
    # The repr rebuilds the codec (numcodecs' check_repr evaluates in its own namespace).
    assert eval(repr(codec), {"TileDBCodec": TileDBCodec}) == codec
    again = numcodecs.get_codec(codec.get_config())
    assert isinstance(again, TileDBCodec) and again == codec


def test_entry_point_is_declared():
    from importlib.metadata import entry_points
    eps = entry_points(group="numcodecs.codecs")
    assert any(ep.name == "tiledb" and ep.value == "tdbfilter.numcodecs_codec:TileDBCodec"
               for ep in eps)


def test_encoded_chunk_is_a_tiledb_tile():
    arr = np.arange(100000, dtype="i8")
    enc = TileDBCodec("bitshuffle,zstd:3", dtype="i8").encode(arr)
    p = tdbfilter.Pipeline.from_spec("bitshuffle,zstd:3")
    np.testing.assert_array_equal(p.unfilter(enc, np.int64), arr)


def test_zarr_round_trip(tmp_path):
    data = (np.arange(1_000_000, dtype="i8") * 7) % 1000
    codec = TileDBCodec("delta,bitshuffle,zstd:3", dtype="i8")
    path = str(tmp_path / "a.zarr")
    z = zarr.open(path, mode="w", shape=data.shape, chunks=(100_000,), dtype="i8",
                  compressor=codec)
    z[:] = data
    again = zarr.open(path, mode="r")
    assert again.compressor == codec
    np.testing.assert_array_equal(again[:], data)
    assert again.nbytes_stored < data.nbytes / 5


@pytest.mark.parametrize("spelling", ["<i8", "i8", "=i8", "int64", "INT64", np.int64,
                                      np.dtype("<i8"), int])
def test_codec_dtype_spellings(spelling):
    codec = TileDBCodec("bitshuffle,zstd", dtype=spelling)
    assert codec.dtype == "<i8"
    arr = np.arange(1000, dtype="<i8")
    back = np.frombuffer(codec.decode(codec.encode(arr)), dtype="<i8")
    np.testing.assert_array_equal(back, arr)


@pytest.mark.parametrize("bad", [">u2", "U8", "O", "f2", "i4,i4", "nosuchtype", 99])
def test_codec_rejects_dtypes_without_a_tiledb_datatype(bad):
    with pytest.raises(tdbfilter.InvalidArgument):
        TileDBCodec("zstd", dtype=bad)
