"""Round trips for every filter, specs, serialization, caller buffers, var-size and generic
tiles, encryption, and tiles TileDB 2.30 wrote."""

import numpy as np
import pytest

import tdbfilter
from conftest import read_fixture
from tdbfilter import Pipeline

RNG = np.random.default_rng(3)
INTS = (np.cumsum(RNG.integers(0, 50, 40000)) + 10**12).astype(np.int64)
FLOATS = np.sin(np.arange(40000) / 100.0) * 1000.0

LOSSLESS_INT_SPECS = [
    "none", "gzip:6", "zstd:3", "zstd:-1", "lz4", "rle", "bzip2:9", "double_delta",
    "bit_width_reduction", "bitshuffle", "byteshuffle", "positive_delta", "checksum_md5",
    "checksum_sha256", "xor", "delta", "bitshuffle,zstd:3", "byteshuffle,lz4",
    "delta,bitshuffle,zstd", "positive_delta,bit_width_reduction,zstd", "xor,gzip:9",
    "double_delta,checksum_sha256",
]


@pytest.mark.parametrize("spec", LOSSLESS_INT_SPECS)
def test_every_filter_round_trips_int64(spec):
    with Pipeline.from_spec(spec) as p:
        tile = p.filter(INTS)
        back = p.unfilter(tile, np.int64)
        assert back.dtype == np.int64
        np.testing.assert_array_equal(back, INTS)
        # Filtering twice gives identical bytes.
        assert p.filter(INTS) == tile


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                   np.uint32, np.uint64, np.float32, np.float64])
@pytest.mark.parametrize("spec", ["byteshuffle,zstd", "bitshuffle,lz4", "xor,gzip", "bzip2"])
def test_dtypes_round_trip(dtype, spec):
    cells = (np.arange(5000) % 97).astype(dtype)
    p = Pipeline.from_spec(spec)
    np.testing.assert_array_equal(p.unfilter(p.filter(cells), dtype), cells)


def test_scale_float_loses_only_what_it_documents():
    p = Pipeline.from_spec("scale_float:factor=0.001:offset=0:byte_width=4,zstd")
    back = p.unfilter(p.filter(FLOATS), np.float64)
    assert np.max(np.abs(back - FLOATS)) <= 0.0005 + 1e-9


def test_spec_serialize_and_builder_agree():
    p = Pipeline.from_spec("bitshuffle,zstd:3")
    assert p.spec == "bitshuffle,zstd:3"
    assert len(p) == 2 and p.filter_types == [8, 2]
    q = Pipeline().add_filter("bitshuffle").add_filter("zstd", level=3)
    assert q.serialize() == p.serialize()
    r = Pipeline.deserialize(p.serialize(), tdbfilter.FORMAT_VERSION)
    assert r.spec == p.spec
    assert r.get_option(1, "level") == 3
    assert "bitshuffle,zstd:3" in repr(p)


def test_into_variants_and_bytes_input():
    p = Pipeline.from_spec("byteshuffle,zstd")
    raw = INTS.tobytes()
    tile = p.filter(raw, dtype="int64")
    assert tile == p.filter(INTS)
    out = bytearray(p.filtered_size_bound(len(raw)))
    n = p.filter_into(INTS, out)
    assert bytes(out[:n]) == tile
    cells = np.empty_like(INTS)
    assert p.unfilter_into(tile, cells, np.int64) == INTS.nbytes
    np.testing.assert_array_equal(cells, INTS)
    with pytest.raises(tdbfilter.BufferTooSmall):
        p.unfilter_into(tile, bytearray(10), np.int64)


def test_var_size_strings():
    values = ["", "a", "tile", "ünïcode", "x" * 5000] * 100
    data = Pipeline.from_spec("zstd")
    offsets = Pipeline.from_spec("double_delta,zstd")
    fo, fd = data.filter_var(values, offsets)
    offs, raw = data.unfilter_var(fo, fd, offsets)
    ends = list(offs[1:]) + [len(raw)]
    assert [raw[a:b].decode() for a, b in zip(offs, ends)] == values


def test_generic_tiles_and_encryption():
    tile = tdbfilter.generic_tile_write(b"a schema, say")
    payload, consumed = tdbfilter.generic_tile_read(tile + b"next")
    assert payload == b"a schema, say" and consumed == len(tile)
    p = Pipeline.from_spec("zstd")
    p.set_encryption_key(bytes(range(32)))
    enc = tdbfilter.generic_tile_write(b"secret", p)
    assert tdbfilter.generic_tile_read(enc, key=bytes(range(32)))[0] == b"secret"
    with pytest.raises(tdbfilter.DecryptionFailed):
        tdbfilter.generic_tile_read(enc, key=bytes(32))
    tile = p.filter(INTS)
    np.testing.assert_array_equal(p.unfilter(tile, np.int64), INTS)
    q = Pipeline.from_spec("zstd")
    q.set_encryption_key(bytes(32))
    with pytest.raises(tdbfilter.DecryptionFailed):
        q.unfilter(tile, np.int64)


def test_tiles_tiledb_wrote(tiledb_manifest):
    """Tiles TileDB 2.30 wrote unfilter to the right cells, and filtering the cells gives
    TileDB's exact bytes."""
    checked = 0
    for case in tiledb_manifest:
        tile = read_fixture(case["tile"])
        if "offsets_tile" in case:
            data_p = Pipeline.from_spec(case["spec"])
            offs_p = Pipeline.from_spec(case["offsets_spec"])
            offsets, raw = data_p.unfilter_var(read_fixture(case["offsets_tile"]), tile, offs_p,
                                               case["datatype"])
            assert raw == read_fixture(case["data"]), case["name"]
            want = np.frombuffer(read_fixture(case["offsets"]), dtype=np.uint64)
            np.testing.assert_array_equal(offsets, want)
        else:
            cells = np.frombuffer(read_fixture(case["cells"]), dtype=case["datatype"])
            p = Pipeline.from_spec(case["spec"])
            back = p.unfilter(tile, case["datatype"], case["cell_size"])
            assert back.dtype == np.dtype(case["datatype"]), case["name"]
            np.testing.assert_array_equal(back, cells, err_msg=case["name"])
            assert p.filter(cells) == tile, case["name"]
        checked += 1
    assert checked >= 15


# Every spelling numpy accepts gives that dtype; TileDB datatype names and numbers give their
# numpy dtype (never a silent uint8).
NUMPY_SPELLINGS = [
    ("<i8", "<i8"), ("i8", "<i8"), ("=f4", "<f4"), ("<u2", "<u2"), ("int64", "<i8"),
    ("float64", "<f8"), ("uint32", "<u4"), ("b", "i1"), ("B", "u1"), ("?", "?"),
    (np.dtype("<i2"), "<i2"), (np.int64, "<i8"), (np.float32, "<f4"), (np.uint8, "u1"),
    (np.bool_, "?"), (int, "<i8"), (float, "<f8"), (bool, "?"), ("double", "<f8"),
    ("M8[ns]", "<M8[ns]"), ("datetime64[D]", "<M8[D]"), ("m8[us]", "<m8[us]"), ("S4", "S4"),
]
TILEDB_SPELLINGS = [
    ("int64", "<i8"), ("INT64", "<i8"), ("TILEDB_FLOAT32", "<f4"), ("string_utf8", "S1"),
    ("char", "S1"), ("datetime_ns", "<M8[ns]"), ("DATETIME_DAY", "<M8[D]"), ("time_ms", "<m8[ms]"),
    ("blob", "u1"), ("bool", "?"), (1, "<i8"), (3, "<f8"), (27, "<M8[ns]"), (np.uint32(41), "?"),
]


@pytest.mark.parametrize("spelling,want", NUMPY_SPELLINGS + TILEDB_SPELLINGS,
                         ids=lambda v: repr(v) if not isinstance(v, str) else v)
def test_every_dtype_spelling_gives_its_dtype(spelling, want):
    want = np.dtype(want)
    cells = (np.arange(3000) % 120).astype(want)
    p = Pipeline.from_spec("byteshuffle,zstd")
    tile = p.filter(cells, spelling)
    assert tile == p.filter(cells)  # the same TileDB datatype as the array's own dtype
    back = p.unfilter(tile, spelling)
    assert back.dtype == want
    np.testing.assert_array_equal(back, cells)
    out = np.zeros_like(cells)
    assert p.unfilter_into(tile, out, spelling) == cells.nbytes
    np.testing.assert_array_equal(out, cells)
    assert tdbfilter.datatype_of(spelling)[1] == want.itemsize


BAD_DTYPES = [">u2", ">i8", np.dtype(">f8"), "U8", "O", "f2", "c8", "i4,i4", "V3", "S", "M8",
              "M8[2D]", "m8[D]", "nosuchtype", "string_utf9", 99, 2**40, -1, True, None, object,
              3.5]


@pytest.mark.parametrize("bad", BAD_DTYPES, ids=repr)
def test_dtypes_without_a_tiledb_datatype_are_invalid(bad):
    p = Pipeline.from_spec("zstd")
    tile = p.filter(np.arange(10, dtype=np.int64))
    with pytest.raises(tdbfilter.InvalidArgument, match="dtype|datatype"):
        p.unfilter(tile, bad)
    with pytest.raises(tdbfilter.InvalidArgument):
        p.unfilter_into(tile, bytearray(80), bad)
    with pytest.raises(tdbfilter.InvalidArgument):
        p.filter(bytes(16), bad)
    with pytest.raises(tdbfilter.InvalidArgument):
        tdbfilter.datatype_of(bad)


def test_big_endian_is_a_clear_error():
    p = Pipeline.from_spec("zstd")
    with pytest.raises(tdbfilter.InvalidArgument, match=r"big-endian.*'<u2'"):
        p.unfilter(p.filter(np.arange(10, dtype="<u2")), ">u2")
    with pytest.raises(tdbfilter.InvalidArgument, match="big-endian"):
        p.filter(np.arange(10, dtype=">i4"))  # the array's own dtype
