"""Datatype and filter names, numbers and sizes come from the C library (C ABI 0.2:
tdb_datatype_*, tdb_filter_type_*, tdb_status_name); the package keeps only its numpy mapping."""

import numpy as np
import pytest

import tdbfilter
from tdbfilter import Pipeline, _datatypes


def test_every_numpy_mapping_agrees_with_the_library():
    """Each TileDB datatype the package maps to numpy is a library name whose size is the
    numpy item size, and every library datatype number has a name."""
    for name, dtype in _datatypes.NUMPY_BY_NAME.items():
        number = _datatypes.datatype_from_name(name)
        assert _datatypes.datatype_name(number) == name
        assert _datatypes.datatype_size(number) == dtype.itemsize, name
    numbers = [_datatypes.datatype_from_name(n) for n in _datatypes.NUMPY_BY_NAME]
    assert sorted(numbers) == list(range(len(numbers)))  # TileDB's 0..43, none missing
    with pytest.raises(tdbfilter.InvalidArgument):
        _datatypes.datatype_name(len(numbers))


@pytest.mark.parametrize("spelling,number,size", [
    ("TILEDB_INT64", 1, 8), ("STRING_UTF8", 12, 1), ("string_utf16", 13, 2), ("Datetime_Ns", 27, 8),
    (13, 13, 2), (40, 40, 1), (43, 43, 1), ("time_as", 39, 8),
])
def test_datatypes_by_the_librarys_names_and_sizes(spelling, number, size):
    assert tdbfilter.datatype_of(spelling) == (number, size)


def test_filters_by_the_librarys_names():
    p = Pipeline().add_filter("DICTIONARY_ENCODING").add_filter("FILTER_GZIP", level=6)
    assert p.filter_names == ["dictionary", "gzip"]
    assert p.spec == Pipeline.from_spec("dictionary,gzip:6").spec
    assert Pipeline.from_spec("bitshuffle,zstd:3").filter_names == ["bitshuffle", "zstd"]
    with pytest.raises(tdbfilter.InvalidArgument, match="nosuchfilter"):
        Pipeline().add_filter("nosuchfilter")
    with pytest.raises(tdbfilter.InvalidArgument, match="NUL"):
        Pipeline().add_filter("zstd\0gzip")
    with pytest.raises(tdbfilter.InvalidArgument):
        tdbfilter.datatype_of("int64\0junk")


def test_errors_carry_the_librarys_status_name():
    p = Pipeline.from_spec("zstd,checksum_md5")
    tile = bytearray(p.filter(np.arange(1000, dtype=np.int64)))
    tile[-10] ^= 1
    with pytest.raises(tdbfilter.ChecksumMismatch) as e:
        p.unfilter(bytes(tile), np.int64)
    assert e.value.status_name == "TDB_ERR_CHECKSUM_MISMATCH"
    with pytest.raises(tdbfilter.InvalidArgument) as e:
        Pipeline.from_spec("nosuchfilter")
    assert e.value.status_name == "TDB_ERR_INVALID_ARGUMENT"


def test_options_round_trip_with_their_sizes():
    p = Pipeline().add_filter("zstd", level=-3).add_filter("bit_width_reduction",
                                                           bit_width_max_window=512)
    assert p.get_option(0, "level") == -3
    assert p.get_option(1, "bit_width_max_window") == 512
    q = Pipeline.from_spec("scale_float:factor=0.5:offset=2:byte_width=4")
    assert (q.get_option(0, "scale_float_factor"), q.get_option(0, "scale_float_offset"),
            q.get_option(0, "scale_float_bytewidth")) == (0.5, 2.0, 4)
    with pytest.raises(tdbfilter.InvalidArgument, match="unknown option 'levle'"):
        p.get_option(0, "levle")
    with pytest.raises(tdbfilter.InvalidArgument):
        p.get_option(0, "bit_width_max_window")  # not an option of zstd
