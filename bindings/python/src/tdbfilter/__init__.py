"""tdbfilter: TileDB's tile format and filter pipeline, byte-compatible with TileDB 2.30,
without libtiledb (Python bindings over the tdbfilter C library).

>>> import numpy as np, tdbfilter
>>> p = tdbfilter.Pipeline.from_spec("bitshuffle,zstd:3")
>>> tile = p.filter(np.arange(1000, dtype=np.int64))     # TileDB's filtered tile bytes
>>> p.unfilter(tile, np.int64)[:3]
array([0, 1, 2])

Failures raise :class:`TdbfilterError` subclasses mirroring the C status codes
(:class:`ChecksumMismatch`, :class:`CorruptData`, …). The numcodecs codec is
:class:`tdbfilter.numcodecs_codec.TileDBCodec` (``codec_id = "tiledb"``). Whole TileDB
arrays are read with :class:`Array` (``tdbfilter.Array("my_array").read("a")``) and written
with ``Array(uri, mode="w")`` (``A[0:10] = data``), :func:`create` and :func:`from_numpy`.
"""

import importlib

from .errors import (BufferTooSmall, ChecksumMismatch, CorruptData, DecryptionFailed,
                     InternalError, InvalidArgument, OutOfMemory, TdbfilterError,
                     TdbfilterIOError, Unsupported)
from .array import Array, Field, Fragment, Metadata, RawResult
from .write import create
from .write import from_numpy as _from_numpy_spec
from .pipeline import (FORMAT_VERSION, Pipeline, datatype_of, generic_tile_read,
                       generic_tile_write, set_unfilter_pool_limit, version)

__all__ = [
    "Array", "Field", "Fragment", "Metadata", "RawResult", "create", "from_numpy", "BufferTooSmall", "ChecksumMismatch", "CorruptData", "DecryptionFailed", "FORMAT_VERSION",
    "InternalError", "InvalidArgument", "OutOfMemory", "Pipeline", "TdbfilterError",
    "TdbfilterIOError", "Unsupported", "datatype_of", "generic_tile_read", "generic_tile_write", "set_unfilter_pool_limit", "version",
]
__version__ = "0.3.0"


def from_numpy(uri, array, *args, **kwargs):
    """TileDB-Py's ``tiledb.from_numpy`` (``import tdbfilter as tiledb``): creates a dense
    array holding ``array`` and returns it opened for reading; its keyword arguments (``tile``,
    ``attr_name``, ``timestamp``, ``mode``, ``full_domain``, ``dim_dtype``, ``config``,
    ``ctx``…) mean what they mean there. The package's own form is accepted too: a filter
    spec ``filters="byteshuffle,zstd:3"`` and an encryption ``key`` (see
    :func:`tdbfilter.write.from_numpy`)."""
    tiledb_compat = importlib.import_module(".tiledb_compat", __name__)
    if args or isinstance(kwargs.get("filters"), str) or "key" in kwargs:
        names = ("tile", "filters", "key", "timestamp", "attr_name")
        spec = dict(zip(names, args), **kwargs)
        _from_numpy_spec(uri, array, **spec)
        return tiledb_compat.DenseArray(uri, mode="r", key=spec.get("key"))
    return tiledb_compat.from_numpy(uri, array, **kwargs)


def __getattr__(name: str):
    """TileDB-Py's API (``tdbfilter.tiledb_compat``) under the package's own name, for
    ``import tdbfilter as tiledb``: ``tdbfilter.open``, ``tdbfilter.ArraySchema``… The
    package's own ``Array``, ``from_numpy`` and ``version`` keep their meaning; TileDB-Py's
    are ``tdbfilter.tiledb_compat.Array`` etc."""
    if name.startswith("__"):
        raise AttributeError(name)
    # import_module, not `from . import`: that asks this very hook for the submodule first.
    tiledb_compat = importlib.import_module(".tiledb_compat", __name__)
    if name == "tiledb_compat":
        return tiledb_compat
    try:
        return getattr(tiledb_compat, name)
    except AttributeError:
        raise AttributeError(f"module 'tdbfilter' has no attribute {name!r}") from None
