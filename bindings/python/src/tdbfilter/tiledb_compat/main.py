"""``tiledb.main``: TileDB-Py's native module. ``PyFragmentInfo`` is tdbfilter's
(``_fragment``), ``metadata_test_aux.write_ascii`` is the binding's; the other test helpers and native classes are not provided: each raises
TileDBError naming itself."""

from ..errors import TdbfilterError as TileDBError
from ._fragment import PyFragmentInfo  # noqa: F401


def _refuse(name):
    raise TileDBError(f"tiledb.main.{name} (TileDB-Py's native module) is not provided by "
                      "tdbfilter's TileDB-Py API")


class metadata_test_aux:  # noqa: N801 (TileDB-Py's name)
    """TileDB-Py's native metadata test helper."""

    @staticmethod
    def write_ascii(uri: str) -> None:
        """Puts the metadata ``abc`` = ``xyz`` typed STRING_ASCII into the array at ``uri``
        (as the helper does through TileDB's C API)."""
        from .. import write as _write

        _write.metadata_put(str(uri), None, 0, "abc", "string_ascii", 3, b"xyz")


def python_internal_stats(as_dict: bool = False):
    """TileDB-Py's Python timers (``py.getitem_time``…): their text block, or a dict."""
    from ._stats import python_stats

    return python_stats(as_dict)




class PyQuery:
    def __init__(self, *args, **kwargs):
        _refuse("PyQuery")
