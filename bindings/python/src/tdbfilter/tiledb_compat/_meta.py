"""``A.meta``: TileDB-Py's array metadata mapping (reads in read mode, writes in write mode,
written when the array closes)."""

from __future__ import annotations

from collections.abc import MutableMapping

import numpy as np

from .. import write as _write
from ..errors import TdbfilterError as TileDBError


class Metadata(MutableMapping):
    """The metadata of an open array as a mapping (TileDB-Py's ``tiledb.Metadata``)."""

    def __init__(self, array):
        self.array = array

    def _data(self) -> dict:
        inner = self.array._open()
        if self.array.mode != "r":
            raise TileDBError("metadata is readable in read mode ('r') only")
        raw = inner.metadata
        out = {}
        for k, v in raw.items():
            if k.startswith(_write.NP_SHAPE_PREFIX):
                continue
            if k.startswith(_write.NP_DATA_PREFIX):
                key = k[len(_write.NP_DATA_PREFIX):]
                out[key] = inner.meta[key]
            else:
                out[k] = v
        return out

    def __getitem__(self, key):
        if not isinstance(key, str):
            raise TypeError(f"Unexpected key type '{type(key)}': expected str")
        data = self._data()
        if key not in data:
            raise KeyError(key)
        return data[key]

    def __setitem__(self, key, value) -> None:
        if not isinstance(key, str):
            raise TypeError(f"Unexpected key type '{type(key)}': expected str")
        inner = self.array._open()
        if self.array.mode != "w":
            raise TileDBError("metadata is writable in write mode ('w') only")
        if isinstance(value, np.ndarray) and value.dtype.kind in "OUSV":
            raise TypeError(f"Unsupported numpy dtype '{value.dtype}' for metadata")
        if not isinstance(value, (np.ndarray, np.generic, bytes, str, int, float, list, tuple)):
            raise TypeError(f"Unsupported item type '{type(value)}'")
        inner.meta[key] = value

    def __delitem__(self, key) -> None:
        if not isinstance(key, str):
            raise TypeError(f"Unexpected key type '{type(key)}': expected str")
        inner = self.array._open()
        if self.array.mode != "w":
            raise TileDBError("metadata is writable in write mode ('w') only")
        del inner.meta[key]

    def __contains__(self, key) -> bool:
        if not isinstance(key, str):
            raise TypeError(f"Unexpected key type '{type(key)}': expected str")
        return key in self._data()

    def __iter__(self):
        return iter(list(self._data().keys()))

    def __len__(self) -> int:
        return len(self._data())

    def keys(self):
        return list(self._data().keys())

    def values(self):
        return list(self._data().values())

    def items(self):
        return list(self._data().items())

    def dump(self) -> None:
        for k, v in self._data().items():
            print(f"Type: {type(v).__name__}\nKey: {k}\nValue: {v}\n")

    def __repr__(self) -> str:
        return repr(self._data())

    def consolidate(self):
        raise TileDBError("metadata consolidation is not supported by tdbfilter's TileDB-Py API "
                          "yet")
