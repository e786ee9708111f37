"""Query conditions (``cond=``): not evaluated yet; every use is refused by name."""

from __future__ import annotations

from ..errors import TdbfilterError as TileDBError


def condition_fields(cond, schema):
    raise TileDBError("query conditions (cond=) are not supported by tdbfilter's TileDB-Py API "
                      "yet")


def evaluate(cond, schema, cells):
    raise TileDBError("query conditions (cond=) are not supported by tdbfilter's TileDB-Py API "
                      "yet")
