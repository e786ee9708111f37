"""TileDB-Py's array lifecycle over tdbfilter: ``tiledb.consolidate``,
``tiledb.ConsolidationPlan``, ``tiledb.vacuum``, ``Array.delete_fragments``,
``Array.delete_array``, delete queries (mode ``"d"``) and ``tiledb.ArraySchemaEvolution``
(``tdb_array_consolidate``, ``tdb_array_consolidation_plan``, ``tdb_array_vacuum``,
``tdb_array_delete_fragments``, ``tdb_array_delete``, ``tdb_array_delete_cells``,
``tdb_array_evolve``)."""

from __future__ import annotations

import json
import warnings
from typing import Optional

from .. import write as _write
from .._ffi import call as _call
from .._ffi import lib
from ..errors import TdbfilterError as TileDBError
from ._types import json_value


def _config(config, ctx) -> Optional[dict]:
    from .ctx import _storage_config

    return _storage_config(config, ctx)


def _setting(key: str, config, ctx) -> Optional[str]:
    """``key`` of ``config`` over ``ctx``'s (None when unset)."""
    from .ctx import Config, default_ctx

    for c in (config, (ctx or default_ctx()).config()):
        if c is None:
            continue
        cfg = c if isinstance(c, Config) else Config(c)
        v = cfg.get(key)
        if v is not None and str(v) != "":
            return str(v)
    return None


_CONSOLIDATION = "sm.consolidation."
# The consolidation settings tdb_array_consolidate reads.
_CONSOLIDATION_KEYS = frozenset(_CONSOLIDATION + k for k in (
    "mode", "amplification", "steps", "step_min_frags", "step_max_frags", "step_size_ratio",
    "buffer_size", "timestamp_start", "timestamp_end", "purge_deleted_cells",
    "max_fragment_size"))


def _consolidate(uri, config, ctx, fragment_uris=None, timestamp=None) -> None:
    """``tdb_array_consolidate`` with TileDB-Py's configuration: the ``sm.consolidation.*``
    settings of ``config`` (a Config or dict; None: ``ctx``'s), its encryption key
    (``sm.encryption_key``), and the object-store options of ``config`` over ``ctx``'s."""
    from .ctx import Config, default_ctx

    ctx = ctx or default_ctx()
    cfg = config if config is not None else ctx.config()
    cfg = cfg if isinstance(cfg, Config) else Config(cfg)
    storage = _config(config, ctx) or {}
    settings = {k: v for k, v in storage.items() if not k.startswith(_CONSOLIDATION)}
    # TileDB's Config takes any key and its consolidator reads only its own: the others
    # (misspellings such as TileDB-Py's tests' "step_min_frag", memory budgets such as
    # "total_buffer_size") change nothing there, so they are not passed on.
    settings.update({k: v for k, v in cfg.items(_CONSOLIDATION)
                     if str(v) != "" and k in _CONSOLIDATION_KEYS})
    if timestamp is not None:
        if not isinstance(timestamp, tuple) or len(timestamp) != 2:
            raise TypeError("'timestamp' argument expects tuple(start: int, end: int)")
        if timestamp[0] is not None:
            settings["sm.consolidation.timestamp_start"] = str(int(timestamp[0]))
        if timestamp[1] is not None:
            settings["sm.consolidation.timestamp_end"] = str(int(timestamp[1]))
    key = None
    if cfg.get("sm.encryption_type", "NO_ENCRYPTION") not in ("NO_ENCRYPTION", ""):
        key = cfg.get("sm.encryption_key") or None
    fragments, mode = None, None
    if fragment_uris is not None:
        # TileDB consolidates listed fragments whatever sm.consolidation.mode says.
        fragments, mode = [str(f) for f in fragment_uris], "fragments"
    _write.consolidate(str(uri), mode=mode, config=settings, key=key, fragments=fragments)


def consolidate(uri, config=None, ctx=None, fragment_uris=None, timestamp=None) -> None:
    """Consolidates the array at ``uri`` (TileDB-Py's ``tiledb.consolidate``): the mode and
    the plan's settings are ``config``'s (None: ``ctx``'s) ``sm.consolidation.*``;
    ``fragment_uris`` merges exactly those fragments (names), ``timestamp`` (start, end) only
    the fragments inside it (ignored, with a DeprecationWarning, beside ``fragment_uris``).
    Vacuum afterwards to remove what was merged."""
    if fragment_uris is not None and timestamp is not None:
        warnings.warn("The `timestamp` argument will be ignored and only fragments passed to "
                      "`fragment_uris` will be consolidated", DeprecationWarning, stacklevel=2)
        timestamp = None
    _consolidate(uri, config, ctx, fragment_uris, timestamp)


class ConsolidationPlan:
    """TileDB's consolidation plan for an open array (TileDB-Py's ``tiledb.ConsolidationPlan``):
    nodes of fragments to consolidate together towards ``fragment_size`` bytes
    (``tdb_array_consolidation_plan``). Fragments are named as TileDB 2.30 names them here:
    by their folder name."""

    def __init__(self, ctx, array, fragment_size: int):
        import ctypes

        from ._array import Array

        if not isinstance(array, Array):
            raise ValueError("`array` argument must be of type Array")
        if not isinstance(fragment_size, int):
            raise ValueError("`fragment_size` argument must be of type int")
        L, h = lib(), array._open()._handle()
        size, err = ctypes.c_size_t(), ctypes.c_void_p()
        L.tdb_array_consolidation_plan(h, fragment_size, None, 0, ctypes.byref(size),
                                       ctypes.byref(err))
        if err:
            L.tdb_error_free(err)
        buf = ctypes.create_string_buffer(max(size.value, 1))
        _call(L.tdb_array_consolidation_plan, h, fragment_size, buf, size.value,
              ctypes.byref(size))
        self._nodes: list[list[str]] = json.loads(buf.value.decode())

    def __len__(self) -> int:
        return self.num_nodes

    @property
    def num_nodes(self) -> int:
        return len(self._nodes)

    def _node(self, node_idx: int) -> list:
        if not 0 <= node_idx < len(self._nodes):
            raise TileDBError(
                "ConsolidationPlan: Trying to access a node that doesn't exist.")
        return self._nodes[node_idx]

    def num_fragments(self, node_idx: int) -> int:
        return len(self._node(node_idx))

    def fragment_uri(self, node_idx: int, fragment_idx: int) -> str:
        node = self._node(node_idx)
        if not 0 <= fragment_idx < len(node):
            raise TileDBError("ConsolidationPlan: Trying to access a fragment that doesn't "
                              "exist.")
        return node[fragment_idx]

    def __getitem__(self, idx):
        if idx < 0 or idx >= self.num_nodes:
            raise IndexError("Index out of bounds")
        return {"num_fragments": self.num_fragments(idx), "fragment_uris": list(self._nodes[idx])}

    def dump(self) -> str:
        """The plan as TileDB's JSON: ``{"nodes": [{"uris": [{"uri": NAME}, ...]}, ...]}``."""
        return json.dumps({"nodes": [{"uris": [{"uri": u} for u in node]}
                                     for node in self._nodes]}, indent=2) + "\n"

    def __repr__(self) -> str:
        import pprint

        return pprint.PrettyPrinter().pformat({
            "num_nodes": self.num_nodes,
            "fragments": {f"node_{i}": {"num_fragments": len(n), "fragment_uris": list(n)}
                          for i, n in enumerate(self._nodes)},
        })

    def _repr_html_(self) -> str:
        import html

        rows = "".join(f"<tr><td>{i}</td><td>{len(n)}</td><td>"
                       f"{html.escape(', '.join(n))}</td></tr>\n"
                       for i, n in enumerate(self._nodes))
        return ("<section>\n<h3>Consolidation Plan</h3>\n<table>\n<tr><th>Node</th>"
                "<th>Num Fragments</th><th>Fragment URIs</th></tr>\n" + rows
                + "</table>\n</section>\n")


def vacuum(uri, config=None, ctx=None, timestamp=None) -> None:
    """Removes what a consolidation made redundant (TileDB-Py's ``tiledb.vacuum``): the mode
    is the config's ``sm.vacuum.mode`` (fragments, commits, fragment_meta, array_meta;
    default fragments). ``timestamp`` is deprecated, as in TileDB-Py (a DeprecationWarning),
    and, as in TileDB 2.30, vacuums as much as without it: libtiledb 2.30 ignores the
    ``sm.vacuum.timestamp_start``/``_end`` TileDB-Py sets from it."""
    if timestamp is not None:
        warnings.warn("Partial vacuuming via timestamp will be deprecrated in a future release "
                      "and replaced by passing in fragment URIs.", DeprecationWarning,
                      stacklevel=2)
        # TileDB-Py's own check, as it is written (only what is neither a tuple nor 2 long)
        if not isinstance(timestamp, tuple) and len(timestamp) != 2:
            raise TypeError("'timestamp' argument expects tuple(start: int, end: int)")
    mode = _setting("sm.vacuum.mode", config, ctx) or "fragments"
    with _write.config_handle(_config(config, ctx)) as cfg:
        _call(lib().tdb_array_vacuum, str(uri).encode(), mode.encode(), cfg)


def delete_fragments(uri, timestamp_start, timestamp_end, ctx=None) -> None:
    """Deletes the fragments whose timestamps lie inside [start, end]."""
    with _write.config_handle(_config(None, ctx)) as cfg:
        _call(lib().tdb_array_delete_fragments, str(uri).encode(), int(timestamp_start),
              int(timestamp_end), cfg)


def delete_array(uri, ctx=None) -> None:
    """Removes an array (its fragments, commits, schemas and metadata)."""
    with _write.config_handle(_config(None, ctx)) as cfg:
        _call(lib().tdb_array_delete, str(uri).encode(), cfg)


def delete_cells(uri, cond: str, timestamp, key, config) -> None:
    """Deletes the cells matching ``cond`` (TileDB-Py's condition text) at ``timestamp``
    (ms; None: now), as a delete query of TileDB-Py's mode ``"d"`` does; ``config``: the
    object-store options (a dict or None)."""
    k = _write.key_bytes(key) or b""
    with _write.config_handle(config) as cfg:
        _call(lib().tdb_array_delete_cells, str(uri).encode(), cond.encode(),
              int(timestamp or 0), k or None, len(k), cfg)


def _prefix(e: TileDBError, where: str) -> TileDBError:
    return TileDBError(f"{where}: {e}")


class ArraySchemaEvolution:
    """Changes to an array's schema, applied together by :meth:`array_evolve` (TileDB-Py's
    ``tiledb.ArraySchemaEvolution``). In one evolution, attributes are dropped first, then
    enumerations added and extended, attributes added, enumerations dropped and the current
    domain expanded."""

    def __init__(self, ctx=None):
        self._ctx = ctx
        self._drop_attrs: list[str] = []
        self._add_enums: list = []
        self._extend_enums: list = []
        self._add_attrs: list = []
        self._drop_enums: list[str] = []
        self._current_domain = None
        self._timestamp = 0

    def add_attribute(self, attr) -> None:
        if any(a.name == attr.name for a in self._add_attrs):
            raise TileDBError("ArraySchemaEvolution: Cannot add attribute; Input attribute "
                              "name is already there")
        self._add_attrs.append(attr)

    def drop_attribute(self, name: str) -> None:
        self._add_attrs = [a for a in self._add_attrs if a.name != name]
        if name not in self._drop_attrs:
            self._drop_attrs.append(name)

    def add_enumeration(self, enmr) -> None:
        if any(e.name == enmr.name for e in self._add_enums):
            raise TileDBError("ArraySchemaEvolution: Cannot add enumeration; Input enumeration "
                              "name is already there")
        self._add_enums.append(enmr)

    def extend_enumeration(self, enmr) -> None:
        self._extend_enums = [e for e in self._extend_enums if e.name != enmr.name]
        self._extend_enums.append(enmr)

    def drop_enumeration(self, name: str) -> None:
        if name not in self._drop_enums:
            self._drop_enums.append(name)

    def expand_current_domain(self, current_domain) -> None:
        self._current_domain = current_domain

    def timestamp(self, timestamp: int) -> None:
        if not isinstance(timestamp, int) or timestamp < 0:
            raise ValueError("timestamp must be a non-negative integer")
        self._timestamp = timestamp

    def _changes(self, uri: str) -> list:
        changes: list = [{"drop_attribute": n} for n in self._drop_attrs]
        changes += [{"add_enumeration": e._json()} for e in self._add_enums]
        if self._extend_enums:
            from ._array import open as _open

            with _open(uri, ctx=self._ctx) as A:
                for e in self._extend_enums:
                    old = A.schema.enum(e.name)
                    old_vals = old._json()["values"]
                    new_vals = e._json()["values"]
                    if new_vals[:len(old_vals)] != old_vals:
                        raise TileDBError(
                            f"ArraySchemaEvolution: Cannot extend enumeration '{e.name}'; the "
                            "extended enumeration does not start with the existing values")
                    changes.append({"extend_enumeration": {
                        "name": e.name, "values": new_vals[len(old_vals):]}})
        changes += [{"add_attribute": a._json()} for a in self._add_attrs]
        changes += [{"drop_enumeration": n} for n in self._drop_enums]
        if self._current_domain is not None:
            nd = self._current_domain.ndrectangle
            ranges = []
            for i, d in enumerate(nd._domain):
                lo, hi = nd.range(i)
                t = d._json()["type"]
                ranges.append([json_value(t, lo), json_value(t, hi)])
            changes.append({"expand_current_domain": ranges})
        return changes

    def array_evolve(self, uri) -> None:
        """Applies the changes to the array at ``uri`` (one new schema file)."""
        from ._array import _config_dict

        uri = str(uri)
        text = json.dumps(self._changes(uri))
        with _write.config_handle(_config_dict(None, self._ctx)) as cfg:
            try:
                _call(lib().tdb_array_evolve, uri.encode(), text.encode(), self._timestamp, cfg)
            except TileDBError as e:
                raise _prefix(e, "ArraySchemaEvolution") from e
