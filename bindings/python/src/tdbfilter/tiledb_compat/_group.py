"""TileDB-Py's groups over tdbfilter's ``tdb_group_t``: ``tiledb.Group`` (modes r/w/m, members,
metadata written when a write session closes), ``tiledb.Object``, ``group_create``, ``walk``,
``ls`` and ``move``."""

from __future__ import annotations

import ctypes
import os
import shutil
from ctypes import byref, c_bool, c_char_p, c_uint32, c_void_p
from typing import Optional, Union

import numpy as np

from .. import write as _write
from .._datatypes import datatype_from_name, datatype_name
from .._ffi import call as _call
from .._ffi import lib
from ..errors import TdbfilterError as TileDBError
from ._types import DataType

_NP_DATA = "__np_flat_"
_NP_SHAPE = "__np_shape_"
_OBJECT_GROUP, _OBJECT_ARRAY = 1, 2


def _local(uri: str) -> str:
    return uri[len("file://"):] if uri.startswith("file://") else uri


def _file_uri(uri: str) -> str:
    """A local path as TileDB names it (``file:///abs``); other URIs as given."""
    if "://" in uri:
        return uri
    return "file://" + os.path.abspath(uri)


def _config(config, ctx) -> Optional[dict]:
    from .ctx import _storage_config

    return _storage_config(config, ctx)


def _timestamp_end(config, ctx) -> int:
    """``sm.group.timestamp_end`` of ``config`` over ``ctx``'s (0: now)."""
    from .ctx import Config, default_ctx

    for c in (config, (ctx or default_ctx()).config()):
        if c is None:
            continue
        cfg = c if isinstance(c, Config) else Config(c)
        v = cfg.get("sm.group.timestamp_end")
        if v is not None and str(v) != "":
            v = int(v)
            return 0 if v >= 2**64 - 1 else v
    return 0


class Object:
    """A group member (TileDB-Py's ``tiledb.Object``): its URI, type and name."""

    def __init__(self, type, uri: str, name: Optional[str] = None):
        self._type = type
        self._uri = uri
        self._name = name

    @property
    def uri(self) -> str:
        return self._uri

    @property
    def type(self):
        return self._type

    @property
    def name(self) -> Optional[str]:
        return self._name

    def __repr__(self) -> str:
        return f"Object(uri={self._uri!r}, type={self._type.__name__}, name={self._name!r})"


def _object_type_class(code: int):
    from ._array import Array

    if code == _OBJECT_ARRAY:
        return Array
    if code == _OBJECT_GROUP:
        return Group
    raise KeyError(f"Unknown object type: {code}")


class Group:
    """A TileDB group (TileDB-Py's ``tiledb.Group``): members (arrays and groups, by URI,
    relative or absolute, optionally named) and metadata. Changes made in write mode ("w",
    "m") are written as one session when the group closes."""

    _MODES = ("r", "w", "m")

    def __init__(self, uri, mode: str = "r", config=None, ctx=None):
        if mode not in Group._MODES:
            raise ValueError(f"invalid mode {mode}")
        self._uri = str(uri)
        self._ctx = ctx
        self._cfg = config
        self._h = None
        self._mode = mode
        self._deleted = False
        self._meta = GroupMetadata(self)
        self.open(mode)

    @staticmethod
    def create(uri, ctx=None) -> None:
        with _write.config_handle(_config(None, ctx)) as cfg:
            try:
                _call(lib().tdb_group_create, str(uri).encode(), cfg)
            except TileDBError as e:
                raise TileDBError(f"[TileDB::Group] Error: {e}") from e

    def open(self, mode: str = "r") -> None:
        if mode not in Group._MODES:
            raise ValueError(f"invalid mode {mode}")
        if self._h is not None:
            raise TileDBError("Cannot open group; Group already open")
        h = c_void_p()
        with _write.config_handle(_config(self._cfg, self._ctx)) as cfg:
            try:
                _call(lib().tdb_group_open, self._uri.encode(),
                      _timestamp_end(self._cfg, self._ctx), cfg, byref(h))
            except TileDBError as e:
                raise TileDBError(f"[TileDB::Group] Error: Cannot open group: {e}") from e
        self._h = h
        self._mode = mode

    def close(self) -> None:
        h, self._h = self._h, None
        if h is None:
            return
        try:
            if self._mode in ("w", "m") and not self._deleted:
                _call(lib().tdb_group_commit, h)
        finally:
            lib().tdb_group_free(h)

    def __del__(self) -> None:
        h = getattr(self, "_h", None)
        if h is not None:
            from .._ffi import loaded

            L = loaded()
            if L is not None:
                L.tdb_group_free(h)
            self._h = None

    def __enter__(self) -> "Group":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None and self._h is not None:
            lib().tdb_group_free(self._h)  # an exception in the block writes nothing
            self._h = None
            return
        self.close()

    # -- facts --------------------------------------------------------------------------------
    def _open(self) -> c_void_p:
        if self._h is None:
            raise TileDBError("Group is not open")
        return self._h

    @property
    def isopen(self) -> bool:
        return self._h is not None

    @property
    def uri(self) -> str:
        return _file_uri(self._uri)

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def meta(self) -> "GroupMetadata":
        return self._meta

    def set_config(self, cfg) -> None:
        if self.isopen:
            raise ValueError("`set_config` can only be used on closed groups. "
                             "Use `group.close()` first")
        self._cfg = cfg

    # -- members ------------------------------------------------------------------------------
    def _members(self) -> list[tuple[str, Optional[str], int, bool]]:
        L, h = lib(), self._open()
        n = c_uint32()
        _call(L.tdb_group_member_count, h, byref(n))
        out = []
        for i in range(n.value):
            uri, name, t, rel = c_char_p(), c_char_p(), c_uint32(), c_bool()
            _call(L.tdb_group_member, h, i, byref(uri), byref(name), byref(t), byref(rel))
            out.append((uri.value.decode(), name.value.decode() if name.value else None,
                        t.value, rel.value))
        return out

    def __len__(self) -> int:
        return len(self._members())

    def __getitem__(self, member: Union[int, str]) -> Object:
        if not isinstance(member, (int, str)):
            raise TypeError(f"Unexpected member type '{type(member)}': expected int or str")
        members = self._members()
        if isinstance(member, int):
            if not -len(members) <= member < len(members):
                raise TileDBError(f"Cannot get member by index; index {member} out of bounds")
            uri, name, t, _ = members[member]
            return Object(_object_type_class(t), uri, name)
        for uri, name, t, _ in members:
            if name == member:
                return Object(_object_type_class(t), uri, name)
        raise TileDBError(f"Cannot get member by name; Member with name '{member}' does not "
                          "exist")

    def __iter__(self):
        return iter([Object(_object_type_class(t), u, n) for u, n, t, _ in self._members()])

    def __contains__(self, member: str) -> bool:
        return any(n == member for _, n, _, _ in self._members())

    def is_relative(self, name: str) -> bool:
        for _, n, _, rel in self._members():
            if n == name:
                return bool(rel)
        raise TileDBError(f"Cannot get member by name; Member with name '{name}' does not "
                          "exist")

    def _writable(self) -> c_void_p:
        h = self._open()
        if self._mode not in ("w", "m"):
            raise TileDBError("Group is not open for writing")
        return h

    def add(self, uri, name: Optional[str] = None, relative: bool = False, type=None) -> None:
        from ._array import Array

        if type is not None and type is not Array and type is not Group:
            raise ValueError(f"Invalid type '{type}'. Must be tiledb.Array or tiledb.Group")
        h = self._writable()
        _call(lib().tdb_group_add_member, h, str(uri).encode(), bool(relative),
              name.encode() if name is not None else None)

    def remove(self, member: str) -> None:
        if not isinstance(member, str):
            raise TypeError(f"Unexpected member type '{type(member)}': expected str")
        _call(lib().tdb_group_remove_member, self._writable(), member.encode())

    def __delitem__(self, uri: str) -> None:
        self.remove(uri)

    def delete(self, recursive: bool = False) -> None:
        """Deletes the group (mode "m"): with ``recursive``, its members first."""
        if self._mode != "m":
            raise TileDBError("Cannot delete group; Group must be opened in MODIFY_EXCLUSIVE "
                              "mode")
        members = self._members()
        self.close()
        if recursive:
            from ._array import Array

            for uri, _, t, _ in members:
                if t == _OBJECT_ARRAY:
                    Array.delete_array(uri, ctx=self._ctx)
                elif t == _OBJECT_GROUP:
                    Group(uri, "m", self._cfg, self._ctx).delete(recursive=True)
        root = _local(self._uri)
        for name in ("__group", "__meta"):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
        marker = os.path.join(root, "__tiledb_group.tdb")
        if os.path.exists(marker):
            os.remove(marker)
        if os.path.isdir(root) and not os.listdir(root):
            os.rmdir(root)
        self._deleted = True

    def __repr__(self) -> str:
        if self._h is None:
            return object.__repr__(self)
        lines = [f"{os.path.basename(_local(self._uri).rstrip('/'))} GROUP"]
        for uri, name, t, _ in self._members():
            label = os.path.basename(_local(uri).rstrip("/"))
            lines.append(f"|-- {label} {'ARRAY' if t == _OBJECT_ARRAY else 'GROUP'}")
        return "\n".join(lines)

    @staticmethod
    def consolidate_metadata(uri, config=None, ctx=None) -> None:
        """Merges the group's metadata files into one (``tdb_group_consolidate_metadata``):
        those inside ``sm.consolidation.timestamp_start``/``_end`` of ``config`` over
        ``ctx``'s (default: all)."""
        from ._lifecycle import _setting

        settings = {k: v for k, v in (_config(config, ctx) or {}).items()
                    if not k.startswith("sm.consolidation.")}
        for k in ("sm.consolidation.timestamp_start", "sm.consolidation.timestamp_end"):
            v = _setting(k, config, ctx)
            if v is not None:
                settings[k] = v
        with _write.config_handle(settings) as cfg:
            try:
                _call(lib().tdb_group_consolidate_metadata, str(uri).encode(), cfg)
            except TileDBError as e:
                raise TileDBError(f"[TileDB::Group] Error: {e}") from e

    @staticmethod
    def vacuum_metadata(uri, config=None, ctx=None) -> None:
        """Removes the metadata files a consolidation merged
        (``tdb_group_vacuum_metadata``)."""
        with _write.config_handle(_config(config, ctx)) as cfg:
            try:
                _call(lib().tdb_group_vacuum_metadata, str(uri).encode(), cfg)
            except TileDBError as e:
                raise TileDBError(f"[TileDB::Group] Error: {e}") from e


class _TypeName:
    """TileDB-Py's ``DataType.<NAME>`` as it prints."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"DataType.{self.name}"

    __str__ = __repr__


def _packed(value) -> tuple[str, int, bytes]:
    """(datatype name, value count, bytes) of a metadata value, as TileDB-Py stores it."""
    if isinstance(value, np.ndarray):
        flat = np.ascontiguousarray(value).reshape(-1)
        kind = flat.dtype.kind
        if kind in "SU":
            chars = flat.dtype.itemsize // (4 if kind == "U" else 1)
            if chars > 1 and flat.size > 1:
                raise TypeError(f"Unsupported numpy dtype '{flat.dtype}' for metadata: "
                                "arrays of strings of more than one character")
            # TileDB-Py stores the numpy buffer: UCS-4 typed STRING_UTF8, bytes typed
            # STRING_ASCII (b"" as its NUL)
            b = flat.astype(f"<{kind}{max(1, chars)}").tobytes()
            return ("STRING_UTF8" if kind == "U" else "STRING_ASCII"), len(b), b
        if kind in "OV":
            raise TypeError(f"Unsupported numpy dtype '{flat.dtype}' for metadata")
        return DataType.from_numpy(flat.dtype).tiledb_type, flat.size, flat.tobytes()
    if isinstance(value, np.generic):
        if value.dtype.kind == "U":
            b = str(value).encode("utf-8")
            return "STRING_UTF8", len(b), b
        if value.dtype.kind == "S":
            b = bytes(value)
            return "CHAR", len(b), b
        return DataType.from_numpy(value.dtype).tiledb_type, 1, np.asarray(value).tobytes()
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], str):
        raise TypeError(f"Unsupported item type '{type(value[0])}'")
    name, n, b = _write.pack_metadata(value)
    return name.upper(), n, b


def _decode(type_number: int, count: int, value: c_void_p, ndarray: bool):
    name = datatype_name(type_number).upper()
    if name in ("STRING_UTF8", "STRING_ASCII", "CHAR", "BLOB") or name.startswith("GEOM"):
        raw = ctypes.string_at(value, count) if count else b""
        if ndarray:
            if name == "STRING_UTF8":
                # TileDB-Py reads the numpy buffer back: UCS-4 characters
                if len(raw) % 4 == 0:
                    return np.frombuffer(raw, dtype="<U1").copy()
                return np.array(list(raw.decode("utf-8")), dtype="U1")
            return np.frombuffer(raw, dtype="S1").copy()
        if name in ("STRING_UTF8", "STRING_ASCII"):
            return raw.decode("utf-8", "replace")
        return raw
    dtype = DataType.from_tiledb(name).np_dtype
    raw = ctypes.string_at(value, count * dtype.itemsize) if count else b""
    arr = np.frombuffer(raw, dtype=dtype).copy()
    if ndarray:
        return arr
    if count == 1:
        v = arr[0]
        return bool(v) if dtype.kind == "b" else v
    return tuple(arr.tolist())


class GroupMetadata:
    """``Group.meta``: TileDB-Py's metadata mapping (ndarrays stored flat under
    ``__np_flat_<key>`` with their shape under ``__np_shape_<key>``)."""

    def __init__(self, group: Group):
        self._g = group

    def _raw(self) -> dict:
        g = self._g
        h = g._open()
        L = lib()
        n = c_uint32()
        _call(L.tdb_group_metadata_count, h, byref(n))
        out = {}
        for i in range(n.value):
            key, t, num, value = c_char_p(), c_uint32(), c_uint32(), c_void_p()
            _call(L.tdb_group_metadata_entry, h, i, byref(key), byref(t), byref(num),
                  byref(value))
            out[key.value.decode()] = (t.value, num.value, value)
        return out

    def _readable(self) -> dict:
        if self._g._h is None:
            raise TileDBError("Group is not open")
        if self._g.mode != "r":
            raise TileDBError("Cannot read metadata; Group was not opened in read mode")
        return self._raw()

    def _get(self, key: str, raw: dict):
        if key in raw:
            t, n, v = raw[key]
            return _decode(t, n, v, False), t
        if _NP_DATA + key in raw:
            t, n, v = raw[_NP_DATA + key]
            data = _decode(t, n, v, True)
            if _NP_SHAPE + key in raw:
                st, sn, sv = raw[_NP_SHAPE + key]
                shape = _decode(st, sn, sv, False)
                shape = (int(shape),) if not isinstance(shape, tuple) else shape
                data = data.reshape(shape)
            return data, t
        raise KeyError(key)

    def __getitem__(self, key: str):
        if not isinstance(key, str):
            raise TypeError(f"Unexpected key type '{type(key)}': expected str")
        return self._get(key, self._readable())[0]

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key) -> bool:
        if not isinstance(key, str):
            raise TypeError(f"Unexpected key type '{type(key)}': expected str")
        raw = self._readable()
        return key in raw or _NP_DATA + key in raw

    def _keys(self, raw: dict) -> list[str]:
        out = []
        for k in raw:
            if k.startswith(_NP_DATA):
                out.append(k[len(_NP_DATA):])
            elif not k.startswith(_NP_SHAPE):
                out.append(k)
        return out

    def keys(self):
        return dict.fromkeys(self._keys(self._readable())).keys()

    def __iter__(self):
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def values(self):
        raw = self._readable()
        return [self._get(k, raw)[0] for k in self._keys(raw)]

    def items(self):
        raw = self._readable()
        return [(k, self._get(k, raw)[0]) for k in self._keys(raw)]

    def _put(self, key: str, type_name: str, count: int, data: bytes) -> None:
        buf = ctypes.create_string_buffer(data, max(len(data), 1))
        _call(lib().tdb_group_metadata_put, self._g._writable(), key.encode(),
              datatype_from_name(type_name), count, buf, len(data))

    def __setitem__(self, key: str, value) -> None:
        if not isinstance(key, str):
            raise TypeError(f"Unexpected key type '{type(key)}': expected str")
        h = self._g._open()
        if self._g.mode not in ("w", "m"):
            raise TileDBError("Cannot put metadata; Group was not opened in write mode")
        packed = _packed(value)
        del h
        del self[key]
        if isinstance(value, np.ndarray):
            self._put(_NP_DATA + key, *packed)
            if value.ndim != 1:
                self._put(_NP_SHAPE + key, *_packed(tuple(int(s) for s in value.shape)))
        else:
            self._put(key, *packed)

    def __delitem__(self, key: str) -> None:
        if not isinstance(key, str):
            raise TypeError(f"Unexpected key type '{type(key)}': expected str")
        h = self._g._writable()
        for k in (key, _NP_DATA + key, _NP_SHAPE + key):
            _call(lib().tdb_group_metadata_delete, h, k.encode())

    def update(self, *args, **kwargs) -> None:
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def setdefault(self, key, default=None):
        raise NotImplementedError("Metadata.setdefault requires read-write access")

    def pop(self, key, default=None):
        raise NotImplementedError("Metadata.pop requires read-write access")

    def popitem(self):
        raise NotImplementedError("Metadata.popitem requires read-write access")

    def clear(self):
        raise NotImplementedError("Metadata.clear requires read-write access")

    def dump(self) -> None:
        raw = self._readable()
        for k in raw:
            t = raw[k][0]
            shown = k[len(_NP_DATA):] if k.startswith(_NP_DATA) else k
            if k.startswith(_NP_SHAPE):
                val = _decode(raw[k][0], raw[k][1], raw[k][2], False)
            else:
                val = self._get(shown, raw)[0]
            print(f"### Group Metadata ###\n- Key: {k}\n- Value: {val}\n"
                  f"- Type: {_TypeName(datatype_name(t).upper())}\n")

    def __repr__(self) -> str:
        return str(dict(self.items()))


def group_create(uri, ctx=None) -> None:
    """Creates an empty group (TileDB-Py's ``tiledb.group_create``)."""
    Group.create(uri, ctx=ctx)


def _children(path: str) -> list[tuple[str, str]]:
    from ._array import object_type

    root = _local(str(path))
    out = []
    for name in sorted(os.listdir(root or ".")):
        p = os.path.join(root, name)
        if os.path.isdir(p):
            t = object_type(p)
            if t is not None:
                out.append((_file_uri(p), t))
    return out


def ls(path, func, ctx=None) -> None:
    """Calls ``func(uri, type)`` for each array and group directly in ``path``."""
    for uri, t in _children(path):
        func(uri, t)


def walk(path, func, order: str = "preorder", ctx=None) -> None:
    """Calls ``func(uri, type)`` for each array and group under ``path`` (descending into
    groups), parents before children (``preorder``) or after (``postorder``)."""
    if order not in ("preorder", "postorder"):
        raise ValueError("order must be 'preorder' or 'postorder'")

    def visit(p):
        for uri, t in _children(p):
            if order == "preorder":
                func(uri, t)
            visit(uri)
            if order == "postorder":
                func(uri, t)

    visit(path)


def move(old_uri, new_uri, ctx=None) -> None:
    """Moves (renames) an array or group."""
    from ._array import object_type

    old, new = _local(str(old_uri)), _local(str(new_uri))
    if object_type(old) is None:
        raise TileDBError(f"Cannot move {old_uri!r}: not a TileDB object")
    if os.path.exists(new):
        raise TileDBError(f"Cannot move {old_uri!r}: {new_uri!r} exists")
    os.rename(old, new)
