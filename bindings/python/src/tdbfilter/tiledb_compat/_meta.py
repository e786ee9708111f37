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
        types = self._types() if any(isinstance(v, str) for v in raw.values()) else {}
        out = {}
        for k, v in raw.items():
            if isinstance(v, str) and types.get(k) == "STRING_ASCII":
                v = v.encode("utf-8")  # TileDB-Py reads STRING_ASCII values as bytes
            if k.startswith(_write.NP_SHAPE_PREFIX):
                continue
            if k.startswith(_write.NP_DATA_PREFIX):
                key = k[len(_write.NP_DATA_PREFIX):]
                out[key] = self._ndarray(k, raw)
            else:
                out[k] = v
        return out

    def _ndarray(self, flat_key: str, raw: dict) -> np.ndarray:
        """The numpy array stored as ``__np_flat_<key>`` (and ``__np_shape_<key>``), typed by
        its TileDB datatype: STRING_UTF8 as a ``U1`` array (TileDB-Py stores its UCS-4
        buffer), STRING_ASCII/CHAR as ``S1``, datetimes in their unit, zero-size arrays of
        their dtype."""
        from ctypes import byref, c_char_p, c_uint32, c_void_p, string_at

        from .._ffi import call as _call
        from .._ffi import lib
        from ._types import DataType

        inner = self.array._open()
        L, h = lib(), inner._handle()
        n = c_uint32()
        _call(L.tdb_array_metadata_count, h, byref(n))
        for i in range(n.value):
            key, dt, num, value = c_char_p(), c_uint32(), c_uint32(), c_void_p()
            _call(L.tdb_array_metadata_entry, h, i, byref(key), byref(dt), byref(num),
                  byref(value))
            if key.value.decode() != flat_key:
                continue
            name = c_char_p()
            _call(L.tdb_datatype_name, dt.value, byref(name))
            tname = name.value.decode().upper()
            if tname == "STRING_UTF8":
                # TileDB-Py stores a U1 array's numpy buffer (UCS-4) under this type
                data = string_at(value, num.value) if num.value else b""
                arr = np.frombuffer(data, dtype="<U1").copy()
            elif tname in ("STRING_ASCII", "CHAR"):
                data = string_at(value, num.value) if num.value else b""
                arr = np.frombuffer(data, dtype="S1").copy()
            else:
                dtype = DataType.from_tiledb(tname).np_dtype
                nbytes = num.value * dtype.itemsize
                arr = np.frombuffer(string_at(value, nbytes) if nbytes else b"",
                                    dtype=dtype).copy()
            shape = raw.get(_write.NP_SHAPE_PREFIX + flat_key[len(_write.NP_DATA_PREFIX):])
            if shape is not None:
                arr = arr.reshape(shape if isinstance(shape, tuple) else (shape,))
            return arr
        raise KeyError(flat_key)

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
        if isinstance(value, np.ndarray) and value.dtype in (np.dtype("U1"), np.dtype("S1")):
            # stored as TileDB-Py stores them: the numpy buffer (U1: UCS-4; S1: a byte per
            # element, NUL for b"") typed STRING_UTF8 / STRING_ASCII
            flat = value.reshape(-1)
            if value.dtype.kind == "U":
                data, tname = np.ascontiguousarray(flat, "<U1").tobytes(), "string_utf8"
            else:
                data, tname = np.ascontiguousarray(flat, "S1").tobytes(), "string_ascii"
            ops = inner._meta_ops  # (the binding's pending changes, written on close)
            for n in (key, _write.NP_DATA_PREFIX + key, _write.NP_SHAPE_PREFIX + key):
                ops[n] = None
            ops[_write.NP_DATA_PREFIX + key] = (tname, len(data), data)
            if value.ndim != 1:
                ops[_write.NP_SHAPE_PREFIX + key] = _write.pack_metadata(tuple(value.shape))
            return
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

    def _types(self) -> dict:
        """Each stored key's TileDB datatype name ("BLOB", "INT64"…), in storage order."""
        from ctypes import byref, c_char_p, c_uint32, c_void_p

        from .._ffi import call as _call
        from .._ffi import lib

        inner = self.array._open()
        L, h = lib(), inner._handle()
        n = c_uint32()
        _call(L.tdb_array_metadata_count, h, byref(n))
        out = {}
        for i in range(n.value):
            key, dt, num, value = c_char_p(), c_uint32(), c_uint32(), c_void_p()
            _call(L.tdb_array_metadata_entry, h, i, byref(key), byref(dt), byref(num),
                  byref(value))
            name = c_char_p()
            _call(L.tdb_datatype_name, dt.value, byref(name))
            out[key.value.decode()] = name.value.decode().upper()
        return out

    def dump(self) -> None:
        """Prints each stored entry (numpy values under their ``__np_flat_`` key) with its
        TileDB datatype, as TileDB-Py's ``Metadata.dump``."""
        if self.array.mode != "r":
            raise TileDBError("metadata is readable in read mode ('r') only")
        raw = self.array._open().metadata
        for k, t in self._types().items():
            print(f"### Array Metadata ###\n- Key: {k}\n- Value: {raw[k]}\n"
                  f"- Type: DataType.{t}\n")

    # TileDB-Py's Metadata is not read-write at once: these MutableMapping methods are refused
    def setdefault(self, key, default=None):
        raise NotImplementedError("Metadata.setdefault requires read-write access")

    def pop(self, key, default=None):
        raise NotImplementedError("Metadata.pop requires read-write access")

    def popitem(self):
        raise NotImplementedError("Metadata.popitem requires read-write access")

    def clear(self):
        raise NotImplementedError("Metadata.clear requires read-write access")

    def __repr__(self) -> str:
        return repr(self._data())

    def consolidate(self):
        """Consolidates the array's metadata files (TileDB's ``array_meta`` consolidation;
        vacuum with ``sm.vacuum.mode`` ``array_meta`` to remove the merged files)."""
        a = self.array
        a._open()
        _write.consolidate(a.uri, mode="array_meta", config=a._config,
                           key=_write.key_bytes(a._key))
