"""``tiledb.libtiledb``: the library version TileDB-Py reports and its error class."""

from __future__ import annotations

import enum

from ..errors import TdbfilterError as TileDBError  # noqa: F401
from ._types import VAR_NUM
from .ctx import Config, Ctx  # noqa: F401


def version() -> tuple:
    """The TileDB version whose format and behaviour this library follows."""
    return (2, 30, 0)


def TILEDB_VAR_NUM() -> int:
    return VAR_NUM


class CurrentDomainType(enum.IntEnum):
    """The kinds of current domain (TileDB's ``tiledb_current_domain_type_t``)."""

    NDRECTANGLE = 0


class DataTypeMember:
    """A member of ``tiledb.libtiledb.DataType`` (TileDB-Py's pybind11 enum): ``name``,
    ``value`` (TileDB's number), ``int()``; equal to its name too, as the attributes'
    ``_tiledb_dtype`` are names."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    @property
    def value(self) -> int:
        from .._datatypes import datatype_from_name

        return datatype_from_name(self.name)

    def __int__(self) -> int:
        return self.value

    def __eq__(self, other) -> bool:
        if isinstance(other, DataTypeMember):
            return other.name == self.name
        return isinstance(other, str) and other == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"<DataType.{self.name}>"

    def __str__(self) -> str:
        return f"DataType.{self.name}"


class DataType:
    """TileDB's datatypes (``tiledb.libtiledb.DataType.INT32``), members as TileDB-Py's enum
    has them (:class:`DataTypeMember`)."""


for _n in ["INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "FLOAT32",
           "FLOAT64", "CHAR", "STRING_ASCII", "STRING_UTF8", "BLOB", "GEOM_WKB",
           "GEOM_WKT", "BOOL", "ANY",
           *[f"DATETIME_{u}" for u in ("YEAR", "MONTH", "WEEK", "DAY", "HR", "MIN", "SEC", "MS",
                                       "US", "NS", "PS", "FS", "AS")],
           *[f"TIME_{u}" for u in ("HR", "MIN", "SEC", "MS", "US", "NS", "PS", "FS", "AS")]]:
    setattr(DataType, _n, DataTypeMember(_n))
