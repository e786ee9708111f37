"""``tiledb.main``: TileDB-Py's native module. ``PyFragmentInfo`` is tdbfilter's
(``_fragment``); the other test helpers and native classes are not provided: each raises
TileDBError naming itself."""

from ..errors import TdbfilterError as TileDBError
from ._fragment import PyFragmentInfo  # noqa: F401


def _refuse(name):
    raise TileDBError(f"tiledb.main.{name} (TileDB-Py's native module) is not provided by "
                      "tdbfilter's TileDB-Py API")


def metadata_test_aux(*args, **kwargs):
    _refuse("metadata_test_aux")


def python_internal_stats(*args, **kwargs):
    _refuse("python_internal_stats")




class PyQuery:
    def __init__(self, *args, **kwargs):
        _refuse("PyQuery")
