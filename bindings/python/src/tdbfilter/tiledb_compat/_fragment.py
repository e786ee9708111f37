"""TileDB-Py's fragment info over the C API's fragment list: ``tiledb.main.PyFragmentInfo``
(the native class, per-field tuples), ``FragmentInfoList`` / ``FragmentInfo`` /
``array_fragments`` (built on it, as TileDB-Py builds them), and
``create_array_from_fragments`` / ``copy_fragments_to_existing_array`` (copies of fragment
folders, commit files and schemas between local arrays)."""

from __future__ import annotations

import os
import pprint
import shutil
from ctypes import byref, c_bool, c_char_p

import numpy as np

from .._ffi import call as _call
from .._ffi import lib
from ..array import Array as _Inner
from ..errors import TdbfilterError as TileDBError


def _local(uri: str) -> str:
    p = str(uri)
    return p[len("file://"):] if p.startswith("file://") else p


def _ned_value(d, v):
    if d.isvar:
        return bytes(v).decode()
    if d.dtype.kind == "M":
        unit = np.datetime_data(d.dtype)[0]
        return np.datetime64(int(np.asarray(v).view(np.int64)), unit)
    return v.item()


class PyFragmentInfo:
    """The fragments of an array, oldest first, field by field (TileDB-Py's native
    ``tiledb.main.PyFragmentInfo(uri, schema, include_mbrs, ctx)``)."""

    def __init__(self, uri, schema=None, include_mbrs: bool = False, ctx=None):
        from ._array import _config_dict, _schema_json
        from ._schema import ArraySchema

        self._uri = str(uri)
        path = _local(self._uri)
        if not os.path.isdir(path):
            raise TileDBError(f"FragmentInfo: Cannot load fragment info; array '{uri}' does "
                              "not exist")
        try:
            from ._array import _key

            inner = _Inner(self._uri, key=_key(None, None, ctx),
                           config=_config_dict(None, ctx))
        except TileDBError as e:
            raise TileDBError(f"FragmentInfo: Cannot load fragment info: {e}") from e
        try:
            schema = schema if schema is not None else ArraySchema._from_json(
                _schema_json(inner))
            base = "file://" + os.path.abspath(path)
            frs = inner.fragments
            L, h = lib(), inner._handle()
            self._uris, self._names, self._schema_names, self._ned = [], [], [], []
            self._consolidated = []
            for i, f in enumerate(frs):
                has = c_bool()
                _call(L.tdb_array_fragment_has_consolidated_metadata, h, i, byref(has))
                self._consolidated.append(bool(has.value))
                self._names.append(f.name)
                self._uris.append(f"{base}/__fragments/{f.name}" if f.version >= 12
                                  else f"{base}/{f.name}")
                name = c_char_p()
                _call(L.tdb_array_fragment_schema_name, h, i, byref(name))
                self._schema_names.append(name.value.decode())
                raw = inner.fragment_non_empty_domain(i)
                self._ned.append(tuple((_ned_value(d, lo), _ned_value(d, hi))
                                       for d, (lo, hi) in zip(schema.domain, raw)))
            self._frags = frs
            self._mbrs = None
            if include_mbrs:
                self._mbrs = tuple(
                    tuple(tuple((_ned_value(d, lo), _ned_value(d, hi))
                                for d, (lo, hi) in zip(schema.domain, box))
                          for box in inner.tile_mbrs(i)) if not frs[i].dense else ()
                    for i in range(len(frs)))
        finally:
            inner.close()
        self._to_vacuum = self._vacuum_list(path, base)

    @staticmethod
    def _vacuum_list(path: str, base: str) -> tuple:
        """The fragments named by ``__commits/*.vac`` files: consolidated, not yet vacuumed."""
        out = []
        commits = os.path.join(path, "__commits")
        if not os.path.isdir(commits):
            return ()
        for name in sorted(os.listdir(commits)):
            if not name.endswith(".vac"):
                continue
            with open(os.path.join(commits, name), encoding="utf-8") as f:
                for line in f.read().splitlines():
                    at = line.find("__fragments/")
                    if at >= 0:
                        out.append(f"{base}/{line[at:]}")
        return tuple(out)

    def get_num_fragments(self) -> int:
        return len(self._frags)

    def get_uri(self) -> tuple:
        return tuple(self._uris)

    def get_version(self) -> tuple:
        return tuple(f.version for f in self._frags)

    def get_nonempty_domain(self) -> tuple:
        return tuple(self._ned)

    def get_cell_num(self) -> tuple:
        return tuple(f.cell_count for f in self._frags)

    def get_timestamp_range(self) -> tuple:
        return tuple(tuple(f.timestamps) for f in self._frags)

    def get_sparse(self) -> tuple:
        return tuple(not f.dense for f in self._frags)

    def get_dense(self) -> tuple:
        return tuple(f.dense for f in self._frags)

    def get_unconsolidated_metadata_num(self) -> int:
        return sum(not c for c in self._consolidated)

    def get_has_consolidated_metadata(self) -> tuple:
        return tuple(self._consolidated)

    def get_to_vacuum(self) -> tuple:
        return self._to_vacuum

    def get_mbrs(self) -> tuple:
        if self._mbrs is None:
            raise TileDBError("FragmentInfo: MBRs were not loaded (include_mbrs=False)")
        return self._mbrs

    def get_array_schema_name(self) -> tuple:
        return tuple(self._schema_names)

    def dump(self) -> str:
        """TileDB's fragment info dump, as text."""
        out = [f"- Fragment num: {len(self._frags)}",
               f"- Unconsolidated metadata num: {len(self._frags)}",
               f"- To vacuum num: {len(self._to_vacuum)}"]
        if self._to_vacuum:
            out.append("- To vacuum URIs:")
            out += [f"  > {u}" for u in self._to_vacuum]
        for i, f in enumerate(self._frags):
            out += [f"- Fragment #{i + 1}:", f"  > URI: {self._uris[i]}",
                    f"  > Schema name: {self._schema_names[i]}",
                    f"  > Type: {'dense' if f.dense else 'sparse'}",
                    f"  > Non-empty domain: {list(self._ned[i])}",
                    f"  > Cell num: {f.cell_count}",
                    f"  > Timestamp range: [{f.timestamps[0]}, {f.timestamps[1]}]",
                    f"  > Format version: {f.version}",
                    "  > Has consolidated metadata: no"]
        return "\n".join(out) + "\n"


class FragmentInfoList:
    """The fragments of an array, oldest first (TileDB-Py's ``tiledb.FragmentInfoList``):
    per-field tuples (``uri``, ``version``, ``nonempty_domain``, ``cell_num``,
    ``timestamp_range``, ``sparse``, ``has_consolidated_metadata``, ``to_vacuum``,
    ``array_schema_name``; ``mbrs`` with ``include_mbrs``) and a :class:`FragmentInfo` per
    fragment."""

    def __init__(self, array_uri, include_mbrs: bool = False, ctx=None):
        from ._schema import ArraySchema

        schema = ArraySchema.load(array_uri, ctx=ctx)
        self.array_uri = array_uri
        fi = PyFragmentInfo(array_uri, schema, include_mbrs, ctx)
        self._nums = fi.get_num_fragments()
        self.uri = fi.get_uri()
        self.version = fi.get_version()
        self.nonempty_domain = fi.get_nonempty_domain()
        self.cell_num = fi.get_cell_num()
        self.timestamp_range = fi.get_timestamp_range()
        self.sparse = fi.get_sparse()
        self.unconsolidated_metadata_num = fi.get_unconsolidated_metadata_num()
        self.has_consolidated_metadata = fi.get_has_consolidated_metadata()
        self.to_vacuum = fi.get_to_vacuum()
        self.dump = fi.dump
        if include_mbrs:
            self.mbrs = fi.get_mbrs()
        self.array_schema_name = fi.get_array_schema_name()

    def __getattr__(self, name):
        if name == "mbrs":
            raise AttributeError("'FragmentInfoList' object has no attribute 'mbrs'. (Hint: "
                                 "retrieving minimum bounding rectangles is disabled by "
                                 "default to optimize speed and space. Use "
                                 "tiledb.array_fragments(include_mbrs=True) to enable)")
        raise AttributeError(f"'FragmentInfoList' object has no attribute '{name}'")

    def __len__(self) -> int:
        return self._nums

    def __iter__(self):
        return (FragmentInfo(self, i) for i in range(len(self)))

    def __getitem__(self, key):
        if isinstance(key, slice):
            return [FragmentInfo(self, i) for i in range(*key.indices(len(self)))]
        if isinstance(key, int):
            if not -len(self) <= key < len(self):
                raise IndexError("fragment index out of range")
            return FragmentInfo(self, key % len(self))
        raise TypeError("Invalid argument type.")

    def __repr__(self) -> str:
        return pprint.PrettyPrinter().pformat(
            {k: v for k, v in self.__dict__.items() if not k.startswith("_")})

    def _repr_html_(self) -> str:
        parts = [f"<section>\n<h2>Fragments for {self.array_uri}</h2>\n"]
        for frag in self:
            parts.append(f"<details>\n<summary>{frag.uri}</summary>\n{frag._repr_html_()}"
                         "</details>\n")
        parts.append("</section>\n")
        return "".join(parts)


class FragmentInfo:
    """One fragment of a :class:`FragmentInfoList` (TileDB-Py's ``tiledb.FragmentInfo``)."""

    def __init__(self, fragments: FragmentInfoList, num: int):
        self.num = num
        self.uri = fragments.uri[num]
        self.version = fragments.version[num]
        self.nonempty_domain = fragments.nonempty_domain[num]
        self.cell_num = fragments.cell_num[num]
        self.timestamp_range = fragments.timestamp_range[num]
        self.sparse = fragments.sparse[num]
        self.has_consolidated_metadata = fragments.has_consolidated_metadata[num]
        self.unconsolidated_metadata_num = fragments.unconsolidated_metadata_num
        if "mbrs" in fragments.__dict__:
            self.mbrs = fragments.mbrs[num]
        self.array_schema_name = fragments.array_schema_name[num]

    def __getattr__(self, name):
        if name == "mbrs":
            raise AttributeError("'FragmentInfo' object has no attribute 'mbrs'. (Hint: "
                                 "retrieving minimum bounding rectangles is disabled by "
                                 "default to optimize speed and space. Use "
                                 "tiledb.array_fragments(include_mbrs=True) to enable)")
        raise AttributeError(f"'FragmentInfo' object has no attribute '{name}'")

    def __repr__(self) -> str:
        return pprint.PrettyPrinter().pformat(
            {k: v for k, v in self.__dict__.items() if not k.startswith("_")})

    def _repr_html_(self) -> str:
        from html import escape

        rows = "".join(f"<tr>\n<td>{k}</td>\n<td>{escape(str(v))}</td>\n</tr>\n"
                       for k, v in self.__dict__.items() if not k.startswith("_"))
        return f"<section>\n<table>\n{rows}</table>\n</section>\n"


def array_fragments(uri, include_mbrs: bool = False, ctx=None) -> FragmentInfoList:
    """The fragments of the array at ``uri`` (TileDB-Py's ``tiledb.array_fragments``)."""
    return FragmentInfoList(uri, include_mbrs=include_mbrs, ctx=ctx)


def _copy_fragments(src_uri, dst_uri, timestamp_range, verbose, dry_run) -> None:
    """Copies the fragments of ``src_uri`` inside ``timestamp_range`` (inclusive), with their
    commit files and schemas, into ``dst_uri`` (local folders)."""
    if not isinstance(timestamp_range, tuple) or len(timestamp_range) != 2:
        raise TypeError("'timestamp_range' argument expects tuple(start: int, end: int)")
    src, dst = _local(src_uri), _local(dst_uri)
    fi = array_fragments(src_uri)
    if len({v >= 10 for v in fi.version}) > 1:
        raise TileDBError("Cannot copy fragments - this array contains a mix of old and new "
                          "style schemas")
    for frag in fi:
        t1, t2 = frag.timestamp_range
        if not (timestamp_range[0] <= t1 and t2 <= timestamp_range[1]):
            continue
        schema = frag.array_schema_name if frag.version < 10 else \
            os.path.join("__schema", frag.array_schema_name)
        name = os.path.basename(frag.uri)
        if frag.version < 12:
            parts = [(name, True), (f"{name}.ok", False)]
        else:
            parts = [(os.path.join("__fragments", name), True),
                     (os.path.join("__commits", f"{name}.wrt"), False)]
        for rel, is_dir in [(schema, False)] + parts:
            s, d = os.path.join(src, rel), os.path.join(dst, rel)
            if verbose or dry_run:
                print(f"Copying `{s}` to `{d}`\n")
            if dry_run or (rel == schema and os.path.exists(d)):
                continue
            os.makedirs(os.path.dirname(d), exist_ok=True)
            if is_dir:
                shutil.copytree(s, d)
            else:
                shutil.copyfile(s, d)


def create_array_from_fragments(src_uri, dst_uri, timestamp_range, config=None, ctx=None,
                                verbose: bool = False, dry_run: bool = False) -> None:
    """A new array at ``dst_uri`` holding the fragments of ``src_uri`` written inside
    ``timestamp_range`` (TileDB-Py's ``tiledb.create_array_from_fragments``; local arrays)."""
    from ._array import object_type

    if object_type(dst_uri) is not None or os.path.exists(_local(dst_uri)) and \
            os.listdir(_local(dst_uri)):
        raise TileDBError(f"Array URI `{dst_uri}` already exists")
    if not isinstance(timestamp_range, tuple) or len(timestamp_range) != 2:
        raise TypeError("'timestamp_range' argument expects tuple(start: int, end: int)")
    if len(array_fragments(src_uri)) < 1:
        print("Cannot create new array; no fragments to copy")
        return
    if not dry_run:
        os.makedirs(_local(dst_uri), exist_ok=True)
    _copy_fragments(src_uri, dst_uri, timestamp_range, verbose, dry_run)


def copy_fragments_to_existing_array(src_uri, dst_uri, timestamp_range, config=None,
                                     ctx=None, verbose: bool = False,
                                     dry_run: bool = False) -> None:
    """Copies the fragments of ``src_uri`` written inside ``timestamp_range`` into the
    existing array ``dst_uri``, whose schema must be the same (TileDB-Py's
    ``tiledb.copy_fragments_to_existing_array``; local arrays)."""
    from ._array import array_exists
    from ._schema import ArraySchema

    if not array_exists(dst_uri):
        raise TileDBError(f"Array URI `{dst_uri}` does not exist")
    if not isinstance(timestamp_range, tuple) or len(timestamp_range) != 2:
        raise TypeError("'timestamp_range' argument expects tuple(start: int, end: int)")
    for uri in (src_uri, dst_uri):
        sdir = os.path.join(_local(uri), "__schema")
        if os.path.isdir(sdir) and len([n for n in os.listdir(sdir)
                                        if n != "__enumerations"]) != 1:
            raise TileDBError("Mutltiple evolved schemas detected. There can only be one "
                              "schema version present in both the source and destination "
                              "arrays and both must be identical")
    if ArraySchema.load(src_uri, ctx=ctx) != ArraySchema.load(dst_uri, ctx=ctx):
        raise TileDBError("The source and destination array must have matching schemas.")
    _copy_fragments(src_uri, dst_uri, timestamp_range, verbose, dry_run)
