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


class DataType:
    """TileDB's datatypes by name (``tiledb.libtiledb.DataType.INT32``): the name strings the
    filters and schema JSON take."""


for _n in ["INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "FLOAT32",
           "FLOAT64", "CHAR", "STRING_ASCII", "STRING_UTF8", "BLOB", "GEOM_WKB",
           "GEOM_WKT", "BOOL", "ANY",
           *[f"DATETIME_{u}" for u in ("YEAR", "MONTH", "WEEK", "DAY", "HR", "MIN", "SEC", "MS",
                                       "US", "NS", "PS", "FS", "AS")],
           *[f"TIME_{u}" for u in ("HR", "MIN", "SEC", "MS", "US", "NS", "PS", "FS", "AS")]]:
    setattr(DataType, _n, _n)
