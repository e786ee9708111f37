"""TileDB datatypes and numpy dtypes: the one resolution behind every ``dtype`` argument of the
package (:class:`~tdbfilter.Pipeline`, the numcodecs codec, :class:`~tdbfilter.Array`).

A dtype is any spelling numpy accepts (``"<i8"``, ``"i8"``, ``"=f4"``, ``"int64"``,
``np.int64``, ``np.dtype("M8[ns]")``, ``float``), a TileDB datatype name (``"string_utf8"``,
``"datetime_ns"``, ``"INT64"``…) or a TileDB datatype number. Anything else, and numpy dtypes
without a TileDB datatype (``"U"``, ``"O"``, ``"f2"``, ``"c8"``, structured dtypes) or in
big-endian byte order (TileDB cells are little-endian), is :class:`InvalidArgument`.
"""

from __future__ import annotations

import functools
import sys
import warnings
from ctypes import byref, c_char_p, c_uint32, c_uint64
from dataclasses import dataclass
from typing import Union

import numpy as np

from ._ffi import call, lib
from .errors import InvalidArgument

Datatype = Union[int, str, np.dtype, type]

_DATETIME_UNITS = {"year": "Y", "month": "M", "week": "W", "day": "D", "hr": "h", "min": "m",
                   "sec": "s", "ms": "ms", "us": "us", "ns": "ns", "ps": "ps", "fs": "fs",
                   "as": "as"}
_TIME_UNITS = ("hr", "min", "sec", "ms", "us", "ns", "ps", "fs", "as")

# The numpy dtype of one value of each TileDB datatype, by the library's datatype name. This
# mapping is the Python package's own choice; names, numbers and sizes come from the library.
NUMPY_BY_NAME: dict[str, np.dtype] = {name: np.dtype(d) for name, d in [
    ("int32", "<i4"), ("int64", "<i8"), ("float32", "<f4"), ("float64", "<f8"),
    ("char", "S1"), ("int8", "i1"), ("uint8", "u1"), ("int16", "<i2"), ("uint16", "<u2"),
    ("uint32", "<u4"), ("uint64", "<u8"), ("string_ascii", "S1"), ("string_utf8", "S1"),
    ("string_utf16", "<u2"), ("string_utf32", "<u4"), ("string_ucs2", "<u2"),
    ("string_ucs4", "<u4"), ("any", "u1"),
    *[(f"datetime_{u}", f"<M8[{n}]") for u, n in _DATETIME_UNITS.items()],
    *[(f"time_{u}", f"<m8[{_DATETIME_UNITS[u]}]") for u in _TIME_UNITS],
    ("blob", "u1"), ("bool", "?"), ("geom_wkb", "u1"), ("geom_wkt", "u1"),
]}
# Text datatypes: var-size cells read as str, fixed ones as bytes.
TEXT = frozenset({"char", "string_ascii", "string_utf8"})

# The library names its datatypes; numbers and names never change within a process, so they
# are asked once each.
@functools.lru_cache(maxsize=None)
def datatype_name(number: int) -> str:
    """The library's name of TileDB datatype ``number``; InvalidArgument if it has none."""
    if not 0 <= number <= 0xFFFFFFFF:
        raise InvalidArgument(f"{number} is not a TileDB datatype number")
    name = c_char_p()
    call(lib().tdb_datatype_name, number, byref(name))
    return name.value.decode()


@functools.lru_cache(maxsize=None)
def datatype_from_name(name: str) -> int:
    """The TileDB datatype number of ``name`` (the library's names, case-insensitive, and
    TileDB's spellings such as ``"TILEDB_INT64"``); InvalidArgument if unknown."""
    if "\0" in name:
        raise InvalidArgument(f"datatype name {name!r} contains a NUL character")
    number = c_uint32()
    call(lib().tdb_datatype_from_name, name.encode(), byref(number))
    return number.value


@functools.lru_cache(maxsize=None)
def datatype_size(number: int) -> int:
    """Bytes of one value of TileDB datatype ``number`` (TileDB's sizes)."""
    size = c_uint64()
    call(lib().tdb_datatype_size, number, byref(size))
    return size.value


@dataclass(frozen=True)
class CellType:
    """A resolved dtype: TileDB's datatype and the numpy dtype of the cells."""

    datatype: int
    """The TileDB datatype number (``tdb_datatype_t``)."""
    name: str
    """The library's name of the datatype (``"int64"``, ``"string_utf8"``…)."""
    dtype: np.dtype
    """The numpy dtype of one cell (``S<n>`` for fixed text cells of n characters)."""

    @property
    def cell_size(self) -> int:
        """Bytes of one cell: the numpy dtype's item size."""
        return self.dtype.itemsize

    @property
    def value_size(self) -> int:
        """Bytes of one value of the datatype (the library's ``tdb_datatype_size``)."""
        return datatype_size(self.datatype)


def _little_endian(d: np.dtype) -> bool:
    return d.byteorder in ("<", "|") or (d.byteorder == "=" and sys.byteorder == "little")


def _name_of_numpy(d: np.dtype, given: object) -> str:
    if d.fields is not None or d.subdtype is not None:
        raise InvalidArgument(f"dtype {given!r}: structured and sub-array dtypes have no TileDB "
                              "datatype (give the value dtype and a cell_size)")
    if not _little_endian(d):
        raise InvalidArgument(f"dtype {given!r} is big-endian; TileDB cells are little-endian "
                              f"(use {d.newbyteorder('<').str!r}, e.g. arr.astype"
                              f"({d.newbyteorder('<').str!r}))")
    kind, size = d.kind, d.itemsize
    if kind == "b":
        return "bool"
    if kind in "iu" and size in (1, 2, 4, 8):
        return ("int" if kind == "i" else "uint") + str(8 * size)
    if kind == "f" and size in (4, 8):
        return f"float{8 * size}"
    if kind == "S" and size >= 1:
        return "char"
    if kind in "Mm":
        unit, count = np.datetime_data(d)
        if count == 1:
            for tiledb_unit, numpy_unit in _DATETIME_UNITS.items():
                if numpy_unit == unit and (kind == "M" or tiledb_unit in _TIME_UNITS):
                    return ("datetime_" if kind == "M" else "time_") + tiledb_unit
    raise InvalidArgument(f"dtype {given!r} ({d}) has no TileDB datatype")


def of_datatype(number: int) -> CellType:
    """The cell type of TileDB datatype ``number`` (one value per cell)."""
    name = datatype_name(int(number))
    if name not in NUMPY_BY_NAME:  # a datatype newer than this package: its bytes
        return CellType(int(number), name, np.dtype(f"V{datatype_size(int(number))}"))
    return CellType(int(number), name, NUMPY_BY_NAME[name])


def resolve(dt: Union[Datatype, CellType]) -> CellType:
    """Resolves a dtype (numpy spelling, TileDB datatype name or number) to its cell type;
    anything without a TileDB datatype is :class:`InvalidArgument`."""
    if isinstance(dt, CellType):
        return dt
    if dt is None:  # numpy would read None as float64
        raise InvalidArgument("a dtype is required")
    if isinstance(dt, (bool, np.bool_)):
        raise InvalidArgument(f"not a dtype: {dt!r}")
    if isinstance(dt, (int, np.integer)):
        return of_datatype(int(dt))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # numpy's deprecated aliases
            d = np.dtype(dt)
    except (TypeError, ValueError) as e:
        if isinstance(dt, str):  # a TileDB datatype name, or nothing
            try:
                return of_datatype(datatype_from_name(dt))
            except InvalidArgument:
                pass
        raise InvalidArgument(f"not a dtype: {dt!r} (neither a numpy dtype nor a TileDB "
                              "datatype name or number)") from e
    name = _name_of_numpy(d, dt)
    return CellType(datatype_from_name(name), name, d)
