"""TileDB-Py's statistics (``tiledb.stats_enable``, ``stats_dump``, ``Ctx.get_stats``,
``Query.get_stats``, ``tiledb.main.python_internal_stats``) over what this API measures:
per read, the library's counters (``tdb_query_stats``: tiles answered from metadata,
decoded, pruned, bytes decoded) and its duration; per write, its cells and duration; and
TileDB-Py's Python timers (``py.getitem_time`` and its parts). Names follow TileDB's
(``Context.Query.Reader.*``, ``Context.Query.Writer.*``); the numbers are tdbfilter's own, not
libtiledb's. Collected only while enabled, for every context of the process."""

from __future__ import annotations

import contextvars
import json as _json
import time
from contextlib import contextmanager
from typing import Iterator, Optional

from ..errors import TdbfilterError as TileDBError

_enabled = False
_counters: dict[str, int] = {}
_timers: dict[str, list] = {}  # name -> [sum, count]
_python: dict[str, float] = {}
_current = contextvars.ContextVar("tdbfilter_py_timer", default="py")


def enabled() -> bool:
    """Whether statistics are being collected."""
    return _enabled


def enable() -> None:
    global _enabled
    _enabled = True


def disable() -> None:
    global _enabled
    _enabled = False


def reset() -> None:
    _counters.clear()
    _timers.clear()
    _python.clear()


@contextmanager
def timing(key: str) -> Iterator[None]:
    """TileDB-Py's Python timer ``py.<outer>.<key>`` around the block (when enabled)."""
    if not _enabled:
        yield
        return
    name = f"{_current.get()}.{key}"
    token = _current.set(name)
    start = time.perf_counter()
    try:
        yield
    finally:
        _python[name] = _python.get(name, 0.0) + time.perf_counter() - start
        _current.reset(token)


def _add(counters: dict, timers: dict) -> None:
    for k, v in counters.items():
        _counters[k] = _counters.get(k, 0) + v
    for k, v in timers.items():
        t = _timers.setdefault(k, [0.0, 0])
        t[0] += v
        t[1] += 1


def read_stats(stats, seconds: float, cells: int) -> tuple[dict, dict]:
    """The counters and timers of one read (``stats``: its :class:`tdbfilter.query.QueryStats`,
    None when the library ran none)."""
    counters = {"Context.Query.Reader.loop_num": 1,
                "Context.Query.Reader.result_num": int(cells)}
    if stats is not None:
        counters.update({
            "Context.Query.Reader.tiles_from_metadata": stats.tiles_from_metadata,
            "Context.Query.Reader.tiles_decoded": stats.tiles_decoded,
            "Context.Query.Reader.tiles_pruned": stats.tiles_pruned,
            "Context.Query.Reader.bytes_decoded": stats.bytes_decoded,
        })
    return counters, {"Context.Query.Reader.dowork": seconds}


def record(counters: dict, timers: dict) -> None:
    """Adds one query's counters and timers (seconds) to the totals, when enabled."""
    if _enabled:
        _add(counters, timers)


def record_write(fragments: int, seconds: float) -> None:
    """Adds one write (``fragments`` written, its duration) to the totals, when enabled."""
    if _enabled:
        _add({"Context.Query.Writer.write_num": 1,
              "Context.Query.Writer.fragment_num": int(fragments)},
             {"Context.Query.Writer.dowork": seconds})


def core_json(counters: Optional[dict] = None, timers: Optional[dict] = None) -> dict:
    """TileDB's stats object: ``timers`` (``<name>.sum``, ``<name>.avg``) and ``counters``."""
    counters = _counters if counters is None else counters
    if timers is None:
        timers = {k: tuple(v) for k, v in _timers.items()}
    else:
        timers = {k: (v, 1) for k, v in timers.items()}
    out_t = {}
    for k, (total, n) in sorted(timers.items()):
        out_t[f"{k}.sum"] = total
        out_t[f"{k}.avg"] = total / n if n else 0.0
    return {"timers": out_t, "counters": dict(sorted(counters.items()))}


def core_text(counters: Optional[dict] = None, timers: Optional[dict] = None) -> str:
    """The stats as TileDB prints them (a JSON list of one object), or "" when nothing was
    recorded."""
    obj = core_json(counters, timers)
    if not obj["timers"] and not obj["counters"]:
        return ""
    return _json.dumps([obj], indent=2) + "\n"


def python_stats(as_dict: bool = False):
    """TileDB-Py's Python timers: a dict, or its text block."""
    if as_dict:
        return dict(sorted(_python.items()))
    lines = "".join(f"  {k} : {v:g}\n" for k, v in sorted(_python.items()))
    return "==== Python Stats ====\n\n" + lines


def dump(version=True, print_out=True, include_python=True, json=False, verbose=True):
    """TileDB-Py's ``tiledb.stats_dump``."""
    if not _enabled:
        raise TileDBError("Statistics are not enabled. Call tiledb.stats_enable() first.")
    core = core_json()
    if json:
        if include_python:
            core["python"] = python_stats(True)
        return _json.dumps(core)
    text = ""
    if version:
        from . import __version__
        from .libtiledb import version as _version

        text += f"TileDB Embedded Version: {_version()}\n"
        text += f"TileDB-Py Version: {__version__}\n"
    text += _json.dumps([core], indent=2) + "\n"
    if include_python:
        text += "\n" + python_stats()
    if print_out:
        print(text)
        return None
    return text
