"""TileDB-Py 0.36.1's API over tdbfilter (``import tdbfilter.tiledb_compat as tiledb``).

Schemas (``ArraySchema``, ``Domain``, ``Dim``, ``Attr``, filters, ``Enumeration``,
``CurrentDomain``) are created through the schema JSON of ``tdb_array_create`` and read back
through ``tdb_array_schema_json``; arrays open, read and write through the binding's
:class:`tdbfilter.Array`. What is not built raises :class:`TileDBError` naming the feature.
"""

from __future__ import annotations

import importlib
import sys

from ..errors import TdbfilterError as TileDBError
from . import _stats, ctx, libtiledb, main, vfs  # noqa: F401
from ._array import (Array, DenseArray, SparseArray, array_exists, from_numpy, object_type,
                     open, remove, schema_like)
from ._fragment import (FragmentInfo, FragmentInfoList, array_fragments,
                        copy_fragments_to_existing_array, create_array_from_fragments)
from ._group import Group, GroupMetadata, Object, group_create, ls, move, walk
from ._lifecycle import ArraySchemaEvolution, ConsolidationPlan, consolidate, vacuum
from ._index import EmptyRange
from ._meta import Metadata
from ._pandas import from_csv, from_pandas, from_parquet, open_dataframe
from ._qc import QueryCondition
from ._schema import (ArraySchema, Attr, BitShuffleFilter, BitWidthReductionFilter,
                      ByteShuffleFilter, Bzip2Filter, ChecksumMD5Filter, ChecksumSHA256Filter,
                      CompressionFilter, CurrentDomain, DeltaFilter, Dim, DictionaryFilter,
                      Domain, DoubleDeltaFilter, Enumeration, Filter, FilterList,
                      FloatScaleFilter, GzipFilter, LZ4Filter, NDRectangle, NoOpFilter,
                      PositiveDeltaFilter, RleFilter, WebpFilter, XORFilter, ZstdFilter)
from ._subarray import Subarray
from .ctx import Config, Ctx, default_ctx, scope_ctx
from .vfs import VFS, FileIO

# ``import tdbfilter as tiledb``: TileDB-Py-style arrays are instances of ``tiledb.Array``
# (the package's own Array, which carries TileDB-Py's static methods).
from ..array import Array as _PackageArray

_PackageArray.register(Array)

__version__ = "0.36.1"

# TileDB-Py sets numpy's 1.21 printing on import (its reprs print `0`, not `np.int64(0)`).
import numpy as _np

_np.set_printoptions(legacy="1.21")

DenseArrayImpl = DenseArray
SparseArrayImpl = SparseArray


def _not_built(name: str):
    def f(*args, **kwargs):
        raise TileDBError(f"tiledb.{name} is not supported by tdbfilter's TileDB-Py API yet")

    f.__name__ = name
    return f


def stats_enable() -> None:
    """Starts collecting statistics (see ``tiledb_compat._stats``)."""
    _stats.enable()


def stats_disable() -> None:
    """Stops collecting statistics (what was collected stays)."""
    _stats.disable()


def stats_reset() -> None:
    """Clears the statistics collected."""
    _stats.reset()


def stats_dump(version=True, print_out=True, include_python=True, json=False, verbose=True):
    """TileDB-Py's ``stats_dump``: the statistics as text (printed unless ``print_out`` is
    False) or, with ``json``, a JSON string; refused while statistics are disabled."""
    return _stats.dump(version=version, print_out=print_out, include_python=include_python,
                       json=json, verbose=verbose)


def as_built(return_json_string=False):
    """TileDB-Py's ``as_built``: the storage backends this API's ``tiledb.VFS`` supports
    (as ``VFS.supports`` answers) and no REST serialization."""
    import json

    fs = VFS()
    built = {"as_built": {"parameters": {
        "storage_backends": {b: {"enabled": fs.supports(b)} for b in ("azure", "gcs", "s3")},
        "support": {"serialization": {"enabled": False}}}}}
    return json.dumps(built, indent=2) if return_json_string else built
empty_like = _not_built("empty_like")


class _Version:
    """``tiledb.version``: TileDB-Py's version (``tiledb.version()`` a tuple,
    ``tiledb.version.version`` a str)."""

    version = "0.36.1"

    def __call__(self):
        return (0, 36, 1)


version = _Version()


__all__ = [
    "Array", "ArraySchema", "ArraySchemaEvolution", "Attr", "BitShuffleFilter", "BitWidthReductionFilter",
    "ByteShuffleFilter", "Bzip2Filter", "ChecksumMD5Filter", "ChecksumSHA256Filter",
    "CompressionFilter", "Config", "ConsolidationPlan", "Ctx", "CurrentDomain", "DeltaFilter", "DenseArray",
    "DenseArrayImpl", "Dim", "DictionaryFilter", "Domain", "DoubleDeltaFilter", "EmptyRange",
    "Enumeration", "FileIO", "Filter", "FilterList", "FloatScaleFilter", "FragmentInfo",
    "FragmentInfoList", "Group", "GroupMetadata", "GzipFilter", "LZ4Filter", "Metadata", "NDRectangle", "NoOpFilter", "Object",
    "PositiveDeltaFilter", "QueryCondition", "RleFilter", "SparseArray", "SparseArrayImpl", "Subarray", "TileDBError", "VFS",
    "WebpFilter", "XORFilter", "ZstdFilter", "array_exists", "as_built", "array_fragments", "consolidate",
    "copy_fragments_to_existing_array", "create_array_from_fragments",
    "default_ctx", "empty_like", "from_csv", "from_numpy", "from_pandas", "from_parquet", "group_create", "ls",
    "move", "object_type", "open", "open_dataframe", "remove", "schema_like", "scope_ctx",
    "stats_disable", "stats_dump", "stats_enable", "stats_reset", "vacuum", "version", "walk",
]

_SUBMODULES = ["ctx", "libtiledb", "main", "vfs", "multirange_indexing", "datatypes",
               "dataframe_"]
_SUBMODULE_FILES = {"datatypes": "_types", "dataframe_": "_pandas"}


def _register_submodules(package: str) -> None:
    """Makes ``<package>.ctx``, ``<package>.libtiledb``… these modules (for a package named
    ``tiledb`` standing for TileDB-Py, as the TileDB-Py test suite run does)."""
    parent = sys.modules[package]
    for name in _SUBMODULES:
        mod = importlib.import_module(f"{__name__}.{_SUBMODULE_FILES.get(name, name)}")
        sys.modules[f"{package}.{name}"] = mod
        setattr(parent, name, mod)
