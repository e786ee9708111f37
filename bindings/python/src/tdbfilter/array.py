"""``Array``: reading TileDB array folders without libtiledb (the C API's ``tdb_array_*``)."""

from __future__ import annotations

import abc
import ctypes
from ctypes import byref, c_bool, c_char_p, c_size_t, c_uint8, c_uint32, c_uint64, c_void_p
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from . import write as _write
from ._datatypes import TEXT, CellType, of_datatype
from ._lib import CONSTANTS
from .errors import InvalidArgument, Unsupported
from ._ffi import call as _call
from ._ffi import lib
from .pipeline import Pipeline

VAR = 0xFFFFFFFF

_PIPELINE_KIND = {kind: CONSTANTS[f"TDB_ARRAY_PIPELINE_{kind.upper()}"]
                  for kind in ("field", "offsets", "validity", "coords")}


def _numeric(cell: CellType) -> bool:
    """Whether values of this type read as numbers (or bools, datetimes), not bytes."""
    return cell.dtype.kind in "iufbMm" and cell.name not in ("blob", "any") and \
        not cell.name.startswith(("string_", "geom_"))


@dataclass(frozen=True)
class Field:
    """A dimension or attribute of the schema."""

    name: str
    datatype: int
    cell_val_num: int  # 0xFFFFFFFF: var-size
    nullable: bool = False

    @property
    def var(self) -> bool:
        return self.cell_val_num == VAR

    @property
    def cell_type(self) -> CellType:
        """The datatype's name and the numpy dtype of one value."""
        return of_datatype(self.datatype)


@dataclass(frozen=True)
class Fragment:
    """A visible fragment (oldest first)."""

    name: str
    timestamps: tuple[int, int]
    version: int
    dense: bool
    cell_count: int
    tile_count: int


@dataclass(frozen=True)
class RawResult:
    """One field's cells as the C API returns them, copied out of the library: ``data`` the
    cells' bytes, ``offsets`` (var-size fields) each cell's start in ``data``, ``validity``
    (nullable fields) one byte per cell, 0 for null."""

    datatype: int
    cell_val_num: int
    cell_count: int
    data: bytes
    offsets: Optional[np.ndarray] = None
    validity: Optional[np.ndarray] = None

    def cells(self) -> list[bytes]:
        """Each cell's bytes."""
        n, data = self.cell_count, self.data
        if self.offsets is not None:
            ends = list(self.offsets[1:].tolist()) + [len(data)]
            return [data[s:e] for s, e in zip(self.offsets.tolist(), ends)]
        width = len(data) // n if n else 0
        return [data[i * width:(i + 1) * width] for i in range(n)]


class Array(metaclass=abc.ABCMeta):
    """A TileDB array (a folder, or an ``s3://``, ``azure://``, ``gs://`` URI) opened for
    reading (``mode="r"``) as TileDB 2.30 opens it, or for writing (``mode="w"``:
    ``A[box] = cells``, ``A.meta[key] = value``; see :meth:`__setitem__`).

    >>> with tdbfilter.Array("my_array") as A:          # doctest: +SKIP
    ...     a = A.read("a")                              # numpy, dense: row-major box
    ...     cols = A.read(["x", "y", "v"], [(0, 9), (0, 9)])   # dict of fields

    ``key``: the 32-byte AES-256-GCM key of an encrypted array (bytes or a 32-character str).
    ``timestamp``: ``end`` or ``(start, end)`` in milliseconds to time-travel. ``threads``:
    threads decoding tiles (0: all cores). ``memory_limit``: the most bytes one field's result
    may take (0: none; set it for untrusted arrays: a read over it raises
    :class:`OutOfMemory` before allocating). ``config``: object-store options as a dict, with
    this library's keys or TileDB's (``{"vfs.s3.endpoint_override": "host:port",
    "vfs.s3.scheme": "http", ...}``); unset ones come from the environment (``AWS_*``,
    ``AZURE_STORAGE_*``). Close it (or use ``with``); a finalizer is only a backstop.

    Under ``import tdbfilter as tiledb``, TileDB-Py's static methods are here too
    (``Array.create(uri, schema)``, ``Array.delete_array``, ``Array.delete_fragments``,
    ``Array.load_typed``), and TileDB-Py-style arrays (``tiledb.open(...)``) are instances.
    """

    @staticmethod
    def create(uri, schema, key=None, overwrite: bool = False, ctx=None) -> None:
        """TileDB-Py's ``Array.create``: creates an array of a ``tdbfilter.ArraySchema``
        (TileDB-Py's schema objects, :mod:`tdbfilter.tiledb_compat`)."""
        from . import tiledb_compat

        return tiledb_compat.Array.create(uri, schema, key=key, overwrite=overwrite, ctx=ctx)

    @staticmethod
    def delete_array(uri, ctx=None) -> None:
        """TileDB-Py's ``Array.delete_array``: removes the array at ``uri``."""
        from . import tiledb_compat

        return tiledb_compat.Array.delete_array(uri, ctx=ctx)

    @staticmethod
    def delete_fragments(uri, timestamp_start, timestamp_end, ctx=None) -> None:
        """TileDB-Py's ``Array.delete_fragments``: removes the fragments written in
        ``[timestamp_start, timestamp_end]``."""
        from . import tiledb_compat

        return tiledb_compat.Array.delete_fragments(uri, timestamp_start, timestamp_end, ctx=ctx)

    @classmethod
    def load_typed(cls, uri, *args, **kwargs):
        """TileDB-Py's ``Array.load_typed``: opens ``uri`` as a dense or sparse array."""
        from . import tiledb_compat

        return tiledb_compat.Array.load_typed(uri, *args, **kwargs)

    def __init__(self, path: str, mode: str = "r", key: Union[bytes, str, None] = None,
                 timestamp: Union[int, tuple[int, int], None] = None, threads: int = 0,
                 memory_limit: int = 0, config: Optional[dict] = None):
        if mode not in ("r", "w"):
            raise InvalidArgument(f"mode {mode!r}: an array opens for reading (\"r\") or "
                                  "writing (\"w\")")
        L = lib()
        self.mode = mode
        self.path = str(path)
        self._key = _write.key_bytes(key)
        k = self._key
        if mode == "w" and timestamp is not None and not isinstance(timestamp, (int, np.integer)):
            raise InvalidArgument(f"timestamp {timestamp!r}: a write happens at one time (ms)")
        self._write_timestamp = int(timestamp) if mode == "w" and timestamp is not None else 0
        self._threads = threads
        self._config = config
        self._meta_ops: dict[str, Optional[tuple[str, int, bytes]]] = {}
        self.written_fragments: list[str] = []
        handle = c_void_p()
        with _write.config_handle(config) as cfg:
            # Writes use the latest schema whatever their timestamp, as TileDB's do.
            if timestamp is None or mode == "w":
                _call(L.tdb_array_open_with_config, str(path).encode(), k, len(k) if k else 0,
                      cfg, byref(handle))
            else:
                start, end = (0, timestamp) if isinstance(timestamp, (int, np.integer)) \
                    else timestamp
                _call(L.tdb_array_open_at_with_config, str(path).encode(), k,
                      len(k) if k else 0, start, end, cfg, byref(handle))
        self._h = handle
        if threads:
            _call(L.tdb_array_set_threads, self._h, threads)
        if memory_limit:
            _call(L.tdb_array_set_memory_limit, self._h, memory_limit)
        self.dimensions, self.attributes = self._fields()

    # -- life cycle ------------------------------------------------------------------------

    def close(self) -> None:
        """Writes the pending metadata changes (write mode), then frees the C handle
        (idempotent)."""
        try:
            if getattr(self, "_meta_ops", None):
                self._flush_meta()
        finally:
            if getattr(self, "_h", None):
                lib().tdb_array_free(self._h)
                self._h = None

    def __enter__(self) -> "Array":
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is not None:
            self._meta_ops = {}  # an exception in the block writes no metadata
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_h", None):
            lib().tdb_array_free(self._h)
            self._h = None

    def _handle(self) -> c_void_p:
        if not self._h:
            raise InvalidArgument("the array is closed")
        return self._h

    # -- schema ----------------------------------------------------------------------------

    def _fields(self) -> tuple[list[Field], list[Field]]:
        L, h = lib(), self._handle()
        nd, na = c_uint32(), c_uint32()
        _call(L.tdb_array_dimension_count, h, byref(nd))
        _call(L.tdb_array_attribute_count, h, byref(na))
        dims, attrs = [], []
        for i in range(nd.value):
            name, dt, cvn = c_char_p(), c_uint32(), c_uint32()
            _call(L.tdb_array_dimension, h, i, byref(name), byref(dt), byref(cvn))
            dims.append(Field(name.value.decode(), dt.value, cvn.value))
        for i in range(na.value):
            name, dt, cvn, nullable = c_char_p(), c_uint32(), c_uint32(), c_bool()
            _call(L.tdb_array_attribute, h, i, byref(name), byref(dt), byref(cvn), byref(nullable))
            attrs.append(Field(name.value.decode(), dt.value, cvn.value, nullable.value))
        return dims, attrs

    @property
    def sparse(self) -> bool:
        t = c_uint8()
        _call(lib().tdb_array_schema_info, self._handle(), byref(t), None, None, None, None, None)
        return t.value == 1

    def domain(self, dim: int) -> Optional[tuple[Any, Any]]:
        """Dimension ``dim``'s domain ``(lo, hi)``; None for string dimensions."""
        lo, hi, size, ext = c_void_p(), c_void_p(), c_size_t(), c_void_p()
        _call(lib().tdb_array_dimension_domain, self._handle(), dim, byref(lo), byref(hi),
              byref(size), byref(ext))
        if not lo.value:
            return None
        dt = self.dimensions[dim].cell_type.dtype
        return (np.frombuffer(ctypes.string_at(lo, size.value), dt)[0],
                np.frombuffer(ctypes.string_at(hi, size.value), dt)[0])

    def pipeline(self, field: Optional[str] = None, kind: str = "field") -> Pipeline:
        """The schema's filter pipeline of ``field`` (``kind="field"``), or its schema-wide
        ``"offsets"``, ``"validity"`` or ``"coords"`` pipeline."""
        out = c_void_p()
        _call(lib().tdb_array_pipeline, self._handle(), field.encode() if field else None,
              _PIPELINE_KIND[kind], byref(out))
        return Pipeline(out)

    @property
    def fragments(self) -> list[Fragment]:
        L, h = lib(), self._handle()
        n = c_uint32()
        _call(L.tdb_array_fragment_count, h, byref(n))
        out = []
        for i in range(n.value):
            name, t1, t2, v = c_char_p(), c_uint64(), c_uint64(), c_uint32()
            dense, cells, tiles = c_bool(), c_uint64(), c_uint64()
            _call(L.tdb_array_fragment, h, i, byref(name), byref(t1), byref(t2), byref(v),
                  byref(dense), byref(cells), byref(tiles))
            out.append(Fragment(name.value.decode(), (t1.value, t2.value), v.value, dense.value,
                                cells.value, tiles.value))
        return out

    @property
    def metadata(self) -> dict[str, Any]:
        """The array metadata: strings as str, one value as a scalar, several as a tuple."""
        L, h = lib(), self._handle()
        n = c_uint32()
        _call(L.tdb_array_metadata_count, h, byref(n))
        out: dict[str, Any] = {}
        for i in range(n.value):
            key, dt, num, value = c_char_p(), c_uint32(), c_uint32(), c_void_p()
            _call(L.tdb_array_metadata_entry, h, i, byref(key), byref(dt), byref(num), byref(value))
            cell = of_datatype(dt.value)
            if cell.name in TEXT:
                out[key.value.decode()] = ctypes.string_at(value, num.value).decode("utf-8", "replace")
            elif _numeric(cell):
                d = cell.dtype
                vals = np.frombuffer(ctypes.string_at(value, num.value * d.itemsize), d).tolist()
                out[key.value.decode()] = vals[0] if len(vals) == 1 else tuple(vals)
            else:
                out[key.value.decode()] = ctypes.string_at(value, num.value)
        return out

    def enumeration(self, name: str) -> list:
        """The values of enumeration ``name`` (the attribute's cells are indices into it)."""
        r = c_void_p()
        _call(lib().tdb_array_enumeration, self._handle(), name.encode(), byref(r))
        return list(_to_numpy(_take_result(r, numpy=True)))

    # -- cells -----------------------------------------------------------------------------

    def read(self, fields: Union[str, Sequence[str], None] = None,
             subarray: Optional[Sequence[tuple[Any, Any]]] = None):
        """Reads one field (returns its cells) or several (a dict, read in one pass; default:
        every attribute, and for sparse arrays the dimensions first).

        ``subarray``: an inclusive ``(lo, hi)`` per dimension (numeric dimensions; default:
        the non-empty domain, as the C API reads it — not TileDB-Py's whole domain), each
        bound of its dimension's type (checked: :class:`InvalidArgument` names the dimension
        and its type). Dense arrays give the box's cells in row-major order with fill values
        where nothing was written; sparse arrays the visible cells in global order. Fixed
        cells come as a numpy array (shape ``(n, cell_val_num)`` for multi-value cells),
        var-size text as an object array of str and other var cells as arrays per cell;
        nullable fields as a numpy masked array (or an object array with None)."""
        raw = self._read(fields, subarray, numpy=True)
        if isinstance(raw, RawResult):
            return _to_numpy(raw)
        return {name: _to_numpy(r) for name, r in raw.items()}

    def read_raw(self, fields: Union[str, Sequence[str], None] = None,
                 subarray: Optional[Sequence[tuple[Any, Any]]] = None):
        """Like :meth:`read`, but each field's cells as the C API returns them: a
        :class:`RawResult` (bytes, offsets, validity), or a dict of them."""
        return self._read(fields, subarray, numpy=False)

    def _read(self, fields: Union[str, Sequence[str], None],
              subarray: Optional[Sequence[tuple[Any, Any]]], numpy: bool):
        """The C read of :meth:`read` and :meth:`read_raw`; ``numpy``: fixed-size cells are
        copied from the library's result straight into a numpy array (see :func:`_take_result`)."""
        self._readable()
        single = isinstance(fields, str)
        if fields is None:
            fields = ([d.name for d in self.dimensions] if self.sparse else []) + \
                     [a.name for a in self.attributes]
        names = [fields] if single else list(fields)
        packed = b"" if subarray is None else self._subarray_bytes(subarray)
        sub = ctypes.create_string_buffer(packed, len(packed)) if packed else None
        c_names = (c_char_p * len(names))(*[n.encode() for n in names])
        results = (c_void_p * len(names))()
        _call(lib().tdb_array_read_fields, self._handle(), c_names, len(names), sub, len(packed),
              results)
        out = {}
        for i, name in enumerate(names):
            out[name] = _take_result(c_void_p(results[i]), numpy)
        return out[names[0]] if single else out

    def _subarray_bytes(self, subarray: Sequence[tuple[Any, Any]]) -> bytes:
        """The C API's subarray: each dimension's [low, high] in its datatype, packed in
        dimension order; every bound checked against its dimension's type first."""
        dims = self.dimensions
        expected = ", ".join(f"[low, high] of '{d.name}' ({d.cell_type.name}, "
                             f"{d.cell_type.value_size} bytes each)" for d in dims)
        try:
            count = len(subarray)
        except TypeError:
            raise InvalidArgument(f"the subarray {subarray!r} is not a sequence of ranges; the "
                                  f"array's {len(dims)} dimension(s) need {expected}") from None
        if count != len(dims):
            raise InvalidArgument(f"the subarray has {count} range(s); the array's {len(dims)} "
                                  f"dimension(s) need {expected}")
        parts = []
        for d, rng in zip(dims, subarray):
            cell = d.cell_type
            if d.var or not _numeric(cell):
                raise Unsupported(f"dimension '{d.name}' ({cell.name}): subarrays on string "
                                  "dimensions are not supported")
            try:
                lo, hi = rng
            except (TypeError, ValueError):
                raise InvalidArgument(f"dimension '{d.name}' ({cell.name}): the range {rng!r} "
                                      "is not a (low, high) pair") from None
            parts.append(_bound(d, cell, lo) + _bound(d, cell, hi))
        return b"".join(parts)

    # -- layout: tile extents, non-empty domains, R-tree leaves (for planning reads) -------

    def tile_extent(self, dim: int) -> Any:
        """Dimension ``dim``'s space tile extent (a value of its type); None when it has none
        (string dimensions, sparse dimensions without an extent)."""
        lo, hi, size, ext = c_void_p(), c_void_p(), c_size_t(), c_void_p()
        _call(lib().tdb_array_dimension_domain, self._handle(), dim, byref(lo), byref(hi),
              byref(size), byref(ext))
        if not ext.value:
            return None
        return self._bound_value(dim, ext, size.value)

    def _bound_value(self, dim: int, ptr: c_void_p, size: int) -> Any:
        """A bound of dimension ``dim`` at ``ptr``: a numpy scalar of its type, bytes for
        string dimensions."""
        d = self.dimensions[dim]
        raw = ctypes.string_at(ptr, size) if size else b""
        if d.var or not _numeric(d.cell_type):
            return raw
        return np.frombuffer(raw, d.cell_type.dtype)[0]

    def fragment_non_empty_domain(self, index: int) -> list[tuple[Any, Any]]:
        """Fragment ``index``'s non-empty domain: an inclusive ``(lo, hi)`` per dimension
        (numpy scalars of the dimension's type; bytes for string dimensions)."""
        L, h = lib(), self._handle()
        out = []
        for d in range(len(self.dimensions)):
            lo, lo_n, hi, hi_n = c_void_p(), c_size_t(), c_void_p(), c_size_t()
            _call(L.tdb_array_fragment_non_empty_domain, h, index, d, byref(lo), byref(lo_n),
                  byref(hi), byref(hi_n))
            out.append((self._bound_value(d, lo, lo_n.value), self._bound_value(d, hi, hi_n.value)))
        return out

    def non_empty_domain(self) -> Optional[list[tuple[Any, Any]]]:
        """The union of the visible fragments' non-empty domains (what a read without a
        subarray covers), ``(lo, hi)`` per dimension; None when no fragment is visible."""
        union: Optional[list[tuple[Any, Any]]] = None
        for i in range(len(self.fragments)):
            ned = self.fragment_non_empty_domain(i)
            union = ned if union is None else \
                [(min(a[0], b[0]), max(a[1], b[1])) for a, b in zip(union, ned)]
        return union

    def tile_cell_counts(self, index: int) -> np.ndarray:
        """The number of cells of each tile of fragment ``index`` (uint64)."""
        L, h = lib(), self._handle()
        n, c = c_uint64(), c_uint64()
        _call(L.tdb_array_tile_count, h, index, byref(n))
        out = np.empty(n.value, np.uint64)
        for t in range(n.value):
            _call(L.tdb_array_tile_cell_count, h, index, t, byref(c))
            out[t] = c.value
        return out

    def tile_mbrs(self, index: int) -> list[list[tuple[Any, Any]]]:
        """The R-tree leaves of sparse fragment ``index``: per tile, an inclusive ``(lo, hi)``
        per dimension bounding the tile's coordinates (bytes for string dimensions)."""
        L, h = lib(), self._handle()
        n = c_uint64()
        _call(L.tdb_array_tile_count, h, index, byref(n))
        lo, lo_n, hi, hi_n = c_void_p(), c_size_t(), c_void_p(), c_size_t()
        out = []
        for t in range(n.value):
            box = []
            for d in range(len(self.dimensions)):
                _call(L.tdb_array_tile_mbr, h, index, t, d, byref(lo), byref(lo_n), byref(hi),
                      byref(hi_n))
                box.append((self._bound_value(d, lo, lo_n.value),
                            self._bound_value(d, hi, hi_n.value)))
            out.append(box)
        return out

    def read_view(self, field: str, subarray: Optional[Sequence[tuple[Any, Any]]] = None):
        """Like :meth:`read` for one field, without copying fixed-size numeric cells: the
        numpy array (and a nullable field's mask source) views the library's result, which
        is freed when the last array viewing it goes. Other fields are read by :meth:`read`.
        (Dask reads chunks through this: one buffer per chunk, filled once.)"""
        self._readable()
        f = next((x for x in self.dimensions + self.attributes if x.name == field), None)
        if f is None or f.var or not _numeric(f.cell_type):
            return self.read(field, subarray)
        packed = b"" if subarray is None else self._subarray_bytes(subarray)
        sub = ctypes.create_string_buffer(packed, len(packed)) if packed else None
        names = (c_char_p * 1)(field.encode())
        results = (c_void_p * 1)()
        L = lib()
        _call(L.tdb_array_read_fields, self._handle(), names, 1, sub, len(packed), results)
        owner = _ResultMemory(c_void_p(results[0]))
        data, size, n = c_void_p(), c_size_t(), c_uint64()
        _call(L.tdb_result_data, owner.result, byref(data), byref(size))
        _call(L.tdb_result_cell_count, owner.result, byref(n))
        values = owner.view(data.value, size.value).view(f.cell_type.dtype)
        if f.cell_val_num > 1:
            values = values.reshape(n.value, f.cell_val_num)
        if not f.nullable:
            return values
        vp, vn = c_void_p(), c_size_t()
        _call(L.tdb_result_validity, owner.result, byref(vp), byref(vn))
        mask = owner.view(vp.value, vn.value) == 0
        if values.ndim == 2:
            mask = np.repeat(mask[:, None], values.shape[1], axis=1)
        return np.ma.array(values, mask=mask)


    # -- writing (mode="w") ----------------------------------------------------------------

    def _readable(self) -> None:
        if self.mode != "r":
            raise InvalidArgument(f"{self.path} is open for writing; open it with mode=\"r\" to "
                                  "read its cells")

    def _writable(self) -> None:
        self._handle()
        if self.mode != "w":
            raise InvalidArgument(f"{self.path} is open for reading; open it with mode=\"w\" to "
                                  "write")

    @property
    def meta(self) -> "Metadata":
        """The array metadata as a mapping, as TileDB-Py's ``A.meta``: read mode reads it (see
        :attr:`metadata`); write mode takes ``A.meta[key] = value`` and ``del A.meta[key]``,
        written when the array closes at its write timestamp, one ``__meta`` file per
        change (values as TileDB-Py stores them: int/float and tuples of them as INT64 /
        FLOAT64, str STRING_UTF8, bytes BLOB, numpy scalars their dtype, numpy arrays as
        ``__np_flat_<key>`` plus ``__np_shape_<key>`` when not 1-D)."""
        return Metadata(self)

    def __setitem__(self, index, value) -> None:
        """Writes one fragment. Dense: ``A[box] = ndarray`` or ``{field: ndarray}`` with
        TileDB-Py's indexing over domain coordinates (``A[100:400]`` writes cells 100..399,
        ``A[:]`` or ``A[...]`` the whole domain; an int or a slice per dimension, missing
        dimensions whole). Sparse: ``A[c1, c2, ...] = {field: values}`` (a bare array for an
        array of one attribute), one coordinate array per dimension (a 1-tuple, or the bare
        array, for 1-D), written unordered. Nullable fields take masked arrays (var-size:
        None cells too); var-size text object arrays of str or bytes, or ``U``/``S`` arrays;
        var-size numbers a list or object array of 1-D arrays."""
        self._writable()
        attrs = self.attributes
        if isinstance(value, Mapping):
            values = dict(value)
        elif len(attrs) == 1:
            values = {attrs[0].name: value}
        else:
            raise InvalidArgument(f"{self.path} has {len(attrs)} attributes: assign a dict "
                                  "{name: values} naming each")
        if self.sparse:
            self._write_sparse(index, values)
        else:
            self._write_dense(index, values)

    def _field(self, name: str) -> Field:
        for f in self.dimensions + self.attributes:
            if f.name == name:
                return f
        raise InvalidArgument(f"{self.path} has no field '{name}'")

    def _dim_int(self, d: int, v: Any) -> int:
        """A dense coordinate as an integer of dimension ``d``'s type (datetime64 values in
        the dimension's unit)."""
        dt = self.dimensions[d].cell_type.dtype
        if isinstance(v, (np.datetime64, np.timedelta64)):
            return int(v.astype(dt).astype(np.int64))
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise InvalidArgument(f"dimension '{self.dimensions[d].name}': index {v!r} is not "
                                  "an integer")
        return int(v)

    def _dense_box(self, index) -> list[tuple[int, int]]:
        """TileDB-Py's dense indexing: each dimension's inclusive ``(lo, hi)``."""
        nd = len(self.dimensions)
        keys = list(index) if isinstance(index, tuple) else [index]
        if keys.count(Ellipsis) > 1:
            raise InvalidArgument("an index can only have a single ellipsis ('...')")
        if Ellipsis in keys:
            at = keys.index(Ellipsis)
            keys[at:at + 1] = [slice(None)] * (nd - len(keys) + 1)
        if len(keys) > nd:
            raise InvalidArgument(f"{len(keys)} indices for {nd} dimension(s)")
        keys += [slice(None)] * (nd - len(keys))
        box = []
        for d, k in enumerate(keys):
            lo, hi = (self._dim_int(d, x) for x in self.domain(d))
            name = self.dimensions[d].name
            if isinstance(k, slice):
                if k.step not in (None, 1):
                    raise InvalidArgument(f"dimension '{name}': slice steps are not supported")
                a = lo if k.start is None else self._dim_int(d, k.start)
                b = hi if k.stop is None else self._dim_int(d, k.stop) - 1
            else:
                a = b = self._dim_int(d, k)
            if a > b:
                raise InvalidArgument(f"dimension '{name}': the index {k!r} selects no cell")
            if a < lo or b > hi:
                raise InvalidArgument(f"dimension '{name}': [{a}, {b}] is outside the domain "
                                      f"[{lo}, {hi}]")
            box.append((a, b))
        return box

    def _write_dense(self, index, values: dict) -> None:
        box = self._dense_box(index)
        ncells = 1
        for a, b in box:
            ncells *= b - a + 1
        fields = {name: self._field(name) for name in values}
        for f in fields.values():
            if f in self.dimensions:
                raise InvalidArgument(f"'{f.name}' is a dimension: dense writes take attributes")
        # Col-major only when it spares a copy: every fixed array Fortran-ordered, not C.
        fixed = [np.ma.getdata(v) for n, v in values.items()
                 if not fields[n].var and isinstance(np.ma.getdata(v), np.ndarray)]
        col = len(box) > 1 and bool(fixed) and all(
            a.flags.f_contiguous and not a.flags.c_contiguous for a in fixed) and all(
            fields[n].cell_val_num == 1 for n in values)
        order = "F" if col else "C"
        bufs = {n: _write.buffers(fields[n], v, ncells, order) for n, v in values.items()}
        packed = self._subarray_bytes(box)
        self.written_fragments.append(_write.write_fragment(
            self.path, self._key, self._write_timestamp, self._threads,
            "col" if col else "row", packed, bufs, self._config))

    def _write_sparse(self, index, values: dict) -> None:
        dims = self.dimensions
        coords = list(index) if isinstance(index, tuple) else [index]
        if len(coords) != len(dims):
            raise InvalidArgument(f"{len(coords)} coordinate array(s) for {len(dims)} "
                                  "dimension(s): give one per dimension")
        first = coords[0]
        ncells = len(first) if hasattr(first, "__len__") else 1
        bufs = {}
        for d, c in zip(dims, coords):
            if not hasattr(c, "__len__") or isinstance(c, (str, bytes)):
                c = [c]
            if not d.var and _numeric(d.cell_type) and d.cell_type.dtype.kind in "Mm":
                arr = np.asarray(c)
                if arr.dtype.kind in "iu":
                    c = arr.astype(np.int64).view(d.cell_type.dtype)
            elif not d.var and _numeric(d.cell_type) and d.cell_type.dtype.kind in "iu":
                # Integer coordinates of another integer type (a list of Python ints is
                # int64) are taken when every value fits the dimension's type, as TileDB-Py.
                arr = np.asarray(c)
                want = d.cell_type.dtype
                if arr.dtype.kind in "iu" and arr.dtype != want and arr.size:
                    info = np.iinfo(want)
                    if int(arr.min()) < info.min or int(arr.max()) > info.max:
                        raise InvalidArgument(f"dimension '{d.name}' ({want}): coordinates "
                                              f"outside [{info.min}, {info.max}]")
                    c = arr.astype(want)
            bufs[d.name] = _write.buffers(d, c, ncells)
        for name, v in values.items():
            f = self._field(name)
            if f in dims:
                raise InvalidArgument(f"'{name}' is a dimension: give its coordinates in the "
                                      "index")
            bufs[name] = _write.buffers(f, v, ncells)
        self.written_fragments.append(_write.write_fragment(
            self.path, self._key, self._write_timestamp, self._threads, "unordered", None,
            bufs, self._config))

    def _flush_meta(self) -> None:
        """Writes the pending metadata changes as one ``__meta`` file (as TileDB does when the
        array closes): deletions of the other spellings of a key
        (plain vs ``__np_flat_``/``__np_shape_``) only where the array has them."""
        ops, self._meta_ops = self._meta_ops, {}
        with Array(self.path, key=self._key, config=self._config) as reader:
            present = set(reader.metadata)
        changes = {n: ops[n] for n in ops if ops[n] is not None or n in present}
        _write.metadata_write(self.path, self._key, self._write_timestamp, changes,
                              self._config)


class Metadata:
    """``A.meta``: the array metadata as a mapping (reads in read mode, changes in write
    mode, written when the array closes)."""

    def __init__(self, array: Array):
        self._a = array

    def _read(self) -> dict[str, Any]:
        self._a._readable()
        return self._a.metadata

    def __getitem__(self, key: str):
        data = self._read()
        if key in data:
            return data[key]
        if _write.NP_DATA_PREFIX + key in data:
            v = data[_write.NP_DATA_PREFIX + key]
            arr = np.atleast_1d(np.asarray(v))
            shape = data.get(_write.NP_SHAPE_PREFIX + key)
            return arr.reshape(shape) if shape is not None else arr
        raise KeyError(key)

    def __contains__(self, key: str) -> bool:
        data = self._read()
        return key in data or _write.NP_DATA_PREFIX + key in data

    def keys(self):
        return self._read().keys()

    def __len__(self) -> int:
        return len(self._read())

    def __iter__(self):
        return iter(self._read())

    def __setitem__(self, key: str, value) -> None:
        self._a._writable()
        if not isinstance(key, str):
            raise TypeError(f"Unexpected key type '{type(key)}': expected str")
        ops = self._a._meta_ops
        for n in (key, _write.NP_DATA_PREFIX + key, _write.NP_SHAPE_PREFIX + key):
            ops[n] = None
        if isinstance(value, np.ndarray):
            flat = np.ascontiguousarray(value).reshape(-1)
            cell = of_datatype(_write.resolve(flat.dtype).datatype)
            ops[_write.NP_DATA_PREFIX + key] = (cell.name, flat.size, flat.tobytes())
            if value.ndim != 1:
                ops[_write.NP_SHAPE_PREFIX + key] = _write.pack_metadata(tuple(value.shape))
        else:
            ops[key] = _write.pack_metadata(value)

    def __delitem__(self, key: str) -> None:
        self._a._writable()
        for n in (key, _write.NP_DATA_PREFIX + key, _write.NP_SHAPE_PREFIX + key):
            self._a._meta_ops[n] = None



class _ResultMemory:
    """Owns a C result whose memory numpy arrays view (their ``base``); frees it when the
    last of them goes."""

    def __init__(self, result: c_void_p):
        self.result = result

    def view(self, address: Optional[int], nbytes: int) -> np.ndarray:
        """``nbytes`` at ``address`` (inside the result) as a writable uint8 array that keeps
        this owner alive."""
        if not nbytes:
            return np.zeros(0, np.uint8)
        return np.asarray(_Window(self, address, nbytes))

    def __del__(self) -> None:
        if self.result:
            lib().tdb_result_free(self.result)
            self.result = None


class _Window:
    """A span of a result's memory, exposed to numpy through ``__array_interface__``."""

    def __init__(self, owner: _ResultMemory, address: int, nbytes: int):
        self.owner = owner
        self.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1",
                                    "data": (address, False), "version": 3}



def _bound(d: Field, cell: CellType, value: Any) -> bytes:
    """One subarray bound of dimension ``d`` as its datatype's bytes; InvalidArgument naming
    the dimension and its type when ``value`` is not of that type or out of its range."""
    dt = cell.dtype
    what = f"dimension '{d.name}' is {cell.name}"
    if isinstance(value, (bool, np.bool_)):
        raise InvalidArgument(f"{what}: bound {value!r} is a bool")
    if dt.kind in "iu":
        if not isinstance(value, (int, np.integer)):
            raise InvalidArgument(f"{what}: bound {value!r} is not an integer")
        info = np.iinfo(dt)
        if not info.min <= int(value) <= info.max:
            raise InvalidArgument(f"{what}: bound {value} is outside [{info.min}, {info.max}]")
        return np.array(int(value), dtype=dt).tobytes()
    if dt.kind == "f":
        if not isinstance(value, (int, float, np.integer, np.floating)):
            raise InvalidArgument(f"{what}: bound {value!r} is not a number")
        if dt.itemsize == 4 and abs(float(value)) > float(np.finfo(np.float32).max) \
                and np.isfinite(float(value)):
            raise InvalidArgument(f"{what}: bound {value!r} is outside float32's range")
        return np.array(value, dtype=dt).tobytes()
    # datetime_* and time_* dimensions: numpy datetime64/timedelta64 (any unit it converts to
    # the dimension's exactly) or a count of the dimension's unit.
    scalar = np.datetime64 if dt.kind == "M" else np.timedelta64
    if isinstance(value, (int, np.integer)):
        return np.array(int(value), dtype=np.int64).tobytes()
    if not isinstance(value, scalar):
        raise InvalidArgument(f"{what}: bound {value!r} is neither an integer nor a "
                              f"{scalar.__name__} ({dt})")
    if np.isnat(value):
        raise InvalidArgument(f"{what}: bound {value!r} is NaT")
    converted = value.astype(dt)
    if converted.astype(value.dtype) != value:
        raise InvalidArgument(f"{what}: bound {value!r} is not a whole {dt}")
    return np.array(converted, dtype=dt).tobytes()


def _copy_out(address: int, nbytes: int) -> np.ndarray:
    """``nbytes`` of library memory at ``address`` copied into a new uint8 array (one copy)."""
    out = np.empty(nbytes, dtype=np.uint8)
    if nbytes:
        ctypes.memmove(out.ctypes.data, address, nbytes)
    return out


def _take_result(r: c_void_p, numpy: bool = False) -> RawResult:
    """Copies a C result out of the library and frees it. The cells of a fixed-size field go
    into a numpy uint8 array when ``numpy`` (for :func:`_to_numpy`, which views it as the
    field's dtype: the only copy of the cells), else (and for var-size cells, split per cell
    anyway) into bytes."""
    L = lib()
    try:
        data, size = c_void_p(), c_size_t()
        _call(L.tdb_result_data, r, byref(data), byref(size))
        n, dt, cvn = c_uint64(), c_uint32(), c_uint32()
        _call(L.tdb_result_cell_count, r, byref(n))
        _call(L.tdb_result_type, r, byref(dt), byref(cvn))
        if numpy and cvn.value != VAR:
            raw: Any = _copy_out(data.value, size.value)
        else:
            raw = ctypes.string_at(data, size.value) if size.value else b""
        validity = None
        vp, vn = c_void_p(), c_size_t()
        _call(L.tdb_result_validity, r, byref(vp), byref(vn))
        if vp.value:
            validity = _copy_out(vp.value, vn.value)
        offsets = None
        if cvn.value == VAR:
            op, on = c_void_p(), c_size_t()
            _call(L.tdb_result_offsets, r, byref(op), byref(on))
            offsets = _copy_out(op.value, 8 * on.value).view(np.uint64) \
                if on.value else np.zeros(0, np.uint64)
        return RawResult(dt.value, cvn.value, n.value, raw, offsets, validity)
    finally:
        L.tdb_result_free(r)


def _to_numpy(r: RawResult):
    """A result as numpy: see :meth:`Array.read`."""
    cell = of_datatype(r.datatype)
    validity = r.validity
    if r.offsets is not None:
        if cell.name in TEXT:
            cells = [c.decode("utf-8", "surrogateescape") for c in r.cells()]
        elif _numeric(cell):
            cells = [np.frombuffer(c, cell.dtype) for c in r.cells()]
        else:
            cells = r.cells()
        values = np.empty(len(cells), dtype=object)
        values[:] = cells
        if validity is not None:
            values[validity == 0] = None
        return values
    # The array _take_result filled (read_raw's bytes are copied once more).
    raw = r.data if isinstance(r.data, np.ndarray) else np.frombuffer(r.data, np.uint8).copy()
    cvn = r.cell_val_num
    if cell.name in TEXT:
        values = raw.view(f"S{cvn}")
        if validity is not None:
            return np.ma.array(values, mask=validity == 0)
        return values
    if not _numeric(cell):
        values = raw.view(f"V{cvn * cell.dtype.itemsize}") if cvn > 1 else raw
    else:
        values = raw.view(cell.dtype)
        if cvn > 1:
            values = values.reshape(r.cell_count, cvn)
    if validity is not None:
        mask = validity == 0
        if values.ndim == 2:
            mask = np.repeat(mask[:, None], values.shape[1], axis=1)
        return np.ma.array(values, mask=mask)
    return values
