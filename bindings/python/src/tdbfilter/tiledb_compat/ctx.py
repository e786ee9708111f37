"""TileDB-Py's ``Config``, ``Ctx``, ``default_ctx`` and ``scope_ctx``. A Config keeps every
key it is given and reports it; the keys this library understands (object-store options:
``vfs.s3.*``, ``vfs.azure.*``, ``vfs.gcs.*``…, as ``tdb_config_set`` accepts them) are passed to
the library when an array is opened; the others change nothing here."""

from __future__ import annotations

import contextlib
import functools
import sys
from ctypes import c_void_p, byref
from typing import Optional

from .._ffi import lib
from ..errors import TdbfilterError as TileDBError

_needs_fork_wrapper = sys.platform != "win32" and sys.version_info < (3, 12)


@functools.lru_cache(maxsize=None)
def _library_knows(key: str) -> bool:
    """Whether the library's config takes ``key`` (asked once per key)."""
    L = lib()
    cfg, err = c_void_p(), c_void_p()
    if L.tdb_config_alloc(byref(cfg), byref(err)) != 0:
        L.tdb_error_free(err)
        return False
    try:
        err = c_void_p()
        ok = L.tdb_config_set(cfg, key.encode(), b"1", byref(err)) == 0
        if not ok:
            err2 = c_void_p()
            ok = L.tdb_config_set(cfg, key.encode(), b"true", byref(err2)) == 0
            if err2:
                L.tdb_error_free(err2)
        if err:
            L.tdb_error_free(err)
        return ok
    finally:
        L.tdb_config_free(cfg)


class Config:
    """Configuration parameters (TileDB-Py's ``tiledb.Config``): a mapping of str to str."""

    def __init__(self, params: dict = None, path: str = None):
        self._params: dict[str, str] = {}
        if path is not None:
            self._load(path)
        if params is not None:
            self.update(params)

    def _load(self, path: str) -> None:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    k, _, v = line.partition(" ")
                    self._params[k] = v.strip()

    @staticmethod
    def load(uri: str) -> "Config":
        return Config(path=uri)

    def save(self, uri: str) -> None:
        with open(uri, "w") as f:
            for k, v in sorted(self._params.items()):
                f.write(f"{k} {v}\n")

    def __setitem__(self, key: str, value) -> None:
        if isinstance(value, bool):
            value = "true" if value else "false"
        self._params[str(key)] = str(value)

    def __getitem__(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError("config key must be a str")
        if key not in self._params:
            raise KeyError(key)
        return self._params[key]

    def __delitem__(self, key: str) -> None:
        self._params.pop(key, None)

    def __contains__(self, key) -> bool:
        return key in self._params

    def __iter__(self):
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def get(self, key, default=None):
        return self._params.get(key, default)

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    def items(self, prefix: str = ""):
        return [(k, v) for k, v in self._params.items() if k.startswith(prefix)]

    def update(self, other) -> None:
        for k, v in dict(other).items():
            self[k] = v

    def dict(self, prefix: str = "") -> dict:
        return dict(self.items(prefix))

    def clear(self) -> None:
        self._params.clear()

    def __eq__(self, other) -> bool:
        return isinstance(other, Config) and self._params == other._params

    def __repr__(self) -> str:
        return "\n".join(f"{k} {v!r}" for k, v in sorted(self._params.items()))

    def _library_items(self) -> dict:
        """The keys the library understands, for ``tdb_config_set``."""
        return {k: v for k, v in self._params.items() if v != "" and _library_knows(k)}


class Ctx:
    """A context (TileDB-Py's ``tiledb.Ctx``): holds a Config."""

    def __init__(self, config=None):
        if config is not None and not isinstance(config, (Config, dict)):
            raise TypeError("Ctx config must be a tiledb.Config or a dict")
        self._config = config if isinstance(config, Config) else Config(config)

    def config(self) -> Config:
        return self._config

    def set_tag(self, key: str, value: str) -> None:
        self._config[f"tag.{key}"] = value

    def get_stats(self, print_out: bool = True, json: bool = False):
        """The statistics collected (every context's, see ``stats_enable``) as TileDB prints
        them ("" when none), parsed with ``json``; printed unless ``print_out`` is False."""
        from ._stats import core_json, core_text

        out = core_json() if json else core_text()
        if print_out:
            print(out)
            return None
        return out

    def __repr__(self) -> str:
        return f"tiledb.Ctx() [see Ctx.config() for configuration]"


_default: Optional[Ctx] = None


def default_ctx(config=None) -> Ctx:
    global _default
    if config is not None:
        if _default is not None:
            raise TileDBError("Global context already initialized!")
        _default = Ctx(config)
    if _default is None:
        _default = Ctx()
    return _default


@contextlib.contextmanager
def scope_ctx(ctx_or_config=None):
    global _default
    old = _default
    if ctx_or_config is not None and not isinstance(ctx_or_config, Ctx):
        ctx_or_config = Ctx(ctx_or_config)
    _default = ctx_or_config if ctx_or_config is not None else Ctx()
    try:
        yield _default
    finally:
        _default = old


def _storage_config(config, ctx) -> Optional[dict]:
    """The library's config pairs of ``config`` (dict or Config) over ``ctx``'s."""
    items: dict = {}
    base = ctx if ctx is not None else _default
    if base is not None:
        items.update(base.config()._library_items())
    if config is not None:
        cfg = config if isinstance(config, Config) else Config(config)
        items.update(cfg._library_items())
    return items or None


def _threads(config, ctx) -> int:
    """The threads an array opened with ``config`` over ``ctx`` (or the default context) decodes
    and encodes with: TileDB's ``sm.compute_concurrency_level`` (the last one given wins:
    ``config`` over ``ctx``); 0 (all cores) when unset. A value that is not a positive integer
    is an error, as in TileDB."""
    value = None
    base = ctx if ctx is not None else _default
    for c in (base.config() if base is not None else None, config):
        if c is None:
            continue
        v = (c if isinstance(c, Config) else Config(c)).get("sm.compute_concurrency_level")
        if v is not None:
            value = v
    if value is None:
        return 0
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n <= 0:
        raise TileDBError(f"[TileDB::Config] Error: Failed to set config parameter "
                          f"'sm.compute_concurrency_level' to {value!r}: a positive integer")
    return n
