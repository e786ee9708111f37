"""TileDB-Py's schema objects (``Filter`` classes, ``FilterList``, ``Dim``, ``Domain``,
``Attr``, ``Enumeration``, ``ArraySchema``, ``CurrentDomain``/``NDRectangle``) over the schema
JSON of ``tdb_array_create`` / ``tdb_array_schema_json``."""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
import warnings
from typing import Any, Optional, Sequence

import numpy as np

from ..errors import TdbfilterError as TileDBError
from ._types import VAR_NUM, DataType, from_json_value, json_value

# -- filters ----------------------------------------------------------------------------------


class Filter:
    """A TileDB filter (TileDB-Py's ``tiledb.Filter``)."""

    _spec_name = "none"
    _type_name = "NONE"

    def __init__(self, ctx=None):
        self._ctx = ctx

    def _attrs_(self) -> dict:
        return {}

    def __repr__(self) -> str:
        inner = ",".join(f"{k}={v}" for k, v in self._attrs_().items())
        return f"{type(self).__name__}({inner})"

    def _repr_html_(self) -> str:
        attrs = self._attrs_()
        opt = list(attrs)[0] if attrs else ""
        val = attrs[opt] if attrs else ""
        return (f"<section>\n<table>\n<tr>\n<td>{type(self).__name__}</td>\n<td>{opt}</td>"
                f"<td>{val}</td></tr>\n</table>\n</section>\n")

    def __eq__(self, other) -> bool:
        if other.__class__ is not self.__class__:
            return False
        return all(getattr(self, k) == getattr(other, k) for k in self._attrs_())

    __hash__ = None  # type: ignore

    @property
    def filter_name(self) -> str:
        return self._type_name

    def _spec(self) -> str:
        return self._spec_name


class CompressionFilter(Filter):
    """A compressor with a level (-1: the codec's default)."""

    def __init__(self, level: int = -1, ctx=None):
        if not isinstance(level, (int, np.integer)) or isinstance(level, bool):
            raise ValueError("`level` argument must be a int")
        super().__init__(ctx)
        self._level = int(level)

    @property
    def level(self) -> int:
        return self._level

    def _attrs_(self):
        return {"level": self.level}

    def _spec(self):
        return f"{self._spec_name}:{self._level}"


def _make_compressor(cls_name: str, spec: str, type_name: str):
    return type(cls_name, (CompressionFilter,), {"_spec_name": spec, "_type_name": type_name,
                                                "__doc__": f"TileDB's {type_name} filter."})


class NoOpFilter(Filter):
    """The NONE filter (passes data through)."""

    _spec_name, _type_name = "none", "NONE"


GzipFilter = _make_compressor("GzipFilter", "gzip", "GZIP")
ZstdFilter = _make_compressor("ZstdFilter", "zstd", "ZSTD")
LZ4Filter = _make_compressor("LZ4Filter", "lz4", "LZ4")
Bzip2Filter = _make_compressor("Bzip2Filter", "bzip2", "BZIP2")
RleFilter = _make_compressor("RleFilter", "rle", "RLE")
DictionaryFilter = _make_compressor("DictionaryFilter", "dictionary", "DICTIONARY")


class _ReinterpretFilter(CompressionFilter):
    def __init__(self, level: int = -1, reinterp_dtype=None, ctx=None):
        super().__init__(level, ctx)
        self._reinterp = None
        if reinterp_dtype is not None:
            name = getattr(reinterp_dtype, "name", reinterp_dtype)  # (a DataType member)
            if isinstance(name, str) and name.isupper():
                self._reinterp = DataType.from_tiledb(name).np_dtype
            else:
                self._reinterp = np.dtype(reinterp_dtype)

    @property
    def reinterp_dtype(self):
        return self._reinterp

    def _attrs_(self):
        return {"reinterp_dtype": self.reinterp_dtype}

    def _spec(self):
        s = f"{self._spec_name}:{self._level}"
        if self._reinterp is not None:
            s += ":reinterpret=" + DataType.from_numpy(self._reinterp).tiledb_type.lower()
        return s


class DeltaFilter(_ReinterpretFilter):
    """TileDB's DELTA filter."""

    _spec_name, _type_name = "delta", "DELTA"


class DoubleDeltaFilter(_ReinterpretFilter):
    """TileDB's DOUBLE_DELTA filter."""

    _spec_name, _type_name = "double_delta", "DOUBLE_DELTA"


class _WindowFilter(Filter):
    _default_window = 256

    def __init__(self, window: int = -1, ctx=None):
        if not isinstance(window, (int, np.integer)):
            raise ValueError("`window` argument must be a int")
        super().__init__(ctx)
        self._window = self._default_window if window == -1 else int(window)

    @property
    def window(self) -> int:
        return self._window

    def _attrs_(self):
        return {"window": self.window}

    def _spec(self):
        return f"{self._spec_name}:{self._window}"


class BitWidthReductionFilter(_WindowFilter):
    """TileDB's BIT_WIDTH_REDUCTION filter."""

    _spec_name, _type_name, _default_window = "bit_width_reduction", "BIT_WIDTH_REDUCTION", 256


class PositiveDeltaFilter(_WindowFilter):
    """TileDB's POSITIVE_DELTA filter."""

    _spec_name, _type_name, _default_window = "positive_delta", "POSITIVE_DELTA", 1024


def _simple(cls_name: str, spec: str, type_name: str):
    return type(cls_name, (Filter,), {"_spec_name": spec, "_type_name": type_name,
                                      "__doc__": f"TileDB's {type_name} filter."})


BitShuffleFilter = _simple("BitShuffleFilter", "bitshuffle", "BITSHUFFLE")
ByteShuffleFilter = _simple("ByteShuffleFilter", "byteshuffle", "BYTESHUFFLE")
ChecksumMD5Filter = _simple("ChecksumMD5Filter", "checksum_md5", "CHECKSUM_MD5")
ChecksumSHA256Filter = _simple("ChecksumSHA256Filter", "checksum_sha256", "CHECKSUM_SHA256")
XORFilter = _simple("XORFilter", "xor", "XOR")


class FloatScaleFilter(Filter):
    """TileDB's SCALE_FLOAT filter (factor, offset, bytewidth)."""

    _spec_name, _type_name = "scale_float", "SCALE_FLOAT"

    def __init__(self, factor: float = None, offset: float = None, bytewidth: int = None,
                 ctx=None):
        super().__init__(ctx)
        self._factor, self._offset, self._bytewidth = factor, offset, bytewidth

    @property
    def factor(self):
        return 1.0 if not self._factor else float(self._factor)

    @property
    def offset(self):
        return 0.0 if self._offset is None else float(self._offset)

    @property
    def bytewidth(self):
        return 8 if not self._bytewidth else int(self._bytewidth)

    def _attrs_(self):
        return {"factor": self._factor, "offset": self._offset, "bytewidth": self._bytewidth}

    def __eq__(self, other):
        return other.__class__ is self.__class__ and (self.factor, self.offset, self.bytewidth) \
            == (other.factor, other.offset, other.bytewidth)

    def _spec(self):
        return (f"scale_float:factor={self.factor!r}:offset={self.offset!r}"
                f":byte_width={self.bytewidth}")


class WebpFilter(Filter):
    """TileDB's WEBP filter (quality, input format, lossless)."""

    _spec_name, _type_name = "webp", "WEBP"
    _FORMATS = ["NONE", "RGB", "BGR", "RGBA", "BGRA"]

    def __init__(self, input_format=None, quality: float = None, lossless: bool = None,
                 ctx=None):
        super().__init__(ctx)
        if isinstance(input_format, str):
            input_format = self._FORMATS.index(input_format.upper())
        self._format = int(input_format or 0)
        self._quality = 100.0 if quality is None else float(quality)
        self._lossless = bool(lossless)

    @property
    def input_format(self):
        return self._format

    @property
    def quality(self):
        return self._quality

    @property
    def lossless(self):
        return self._lossless

    def _attrs_(self):
        return {"input_format": self.input_format, "quality": self.quality,
                "lossless": self.lossless}

    def _spec(self):
        return (f"webp:quality={self._quality!r}:format={self._format}"
                f":lossless={int(self._lossless)}")


_BY_SPEC = {c._spec_name: c for c in (
    NoOpFilter, GzipFilter, ZstdFilter, LZ4Filter, Bzip2Filter, RleFilter, DictionaryFilter,
    DeltaFilter, DoubleDeltaFilter, BitWidthReductionFilter, PositiveDeltaFilter,
    BitShuffleFilter, ByteShuffleFilter, ChecksumMD5Filter, ChecksumSHA256Filter, XORFilter,
    FloatScaleFilter, WebpFilter)}


def _filter_from_spec(text: str) -> Filter:
    """One filter of a pipeline spec (``zstd:3``, ``delta:-1:reinterpret=int32``…)."""
    parts = text.split(":")
    cls = _BY_SPEC.get(parts[0])
    if cls is None:
        raise TileDBError(f"filter {parts[0]!r} has no TileDB-Py filter class here")
    opts = {}
    positional = []
    for p in parts[1:]:
        if "=" in p:
            k, v = p.split("=", 1)
            opts[k] = v
        else:
            positional.append(p)
    if issubclass(cls, _ReinterpretFilter):
        r = opts.get("reinterpret")
        return cls(int(positional[0]) if positional else -1,
                   reinterp_dtype=None if r in (None, "any") else r.upper())
    if issubclass(cls, CompressionFilter):
        return cls(int(positional[0]) if positional else -1)
    if issubclass(cls, _WindowFilter):
        return cls(int(positional[0]) if positional else -1)
    if cls is FloatScaleFilter:
        return cls(float(opts.get("factor", 1.0)), float(opts.get("offset", 0.0)),
                   int(opts.get("byte_width", 8)))
    if cls is WebpFilter:
        return cls(int(opts.get("format", 0)), float(opts.get("quality", 100)),
                   bool(int(opts.get("lossless", 0))))
    return cls()


class FilterList:
    """An ordered list of filters with a chunk size (TileDB-Py's ``tiledb.FilterList``)."""

    def __init__(self, filters: Sequence[Filter] = None, chunksize: int = None, ctx=None):
        self._ctx = ctx
        self._filters: list[Filter] = []
        if filters is not None:
            for f in filters:
                if not isinstance(f, Filter):
                    raise ValueError("filters argument must be an iterable of TileDB filter "
                                     "objects")
                self._filters.append(f)
        self._chunksize = 65536 if chunksize is None else int(chunksize)

    @property
    def chunksize(self) -> int:
        return self._chunksize

    def __getitem__(self, idx):
        if not isinstance(idx, (int, slice)):
            raise TypeError("FilterList indices must be integers or slices, not "
                            f"{type(idx).__name__}")
        if isinstance(idx, int):
            if idx < 0 or idx > len(self) - 1:
                raise IndexError("FilterList index out of range")
            return self._filters[idx]
        out = self._filters[idx]
        return out[0] if len(out) == 1 else out

    def __eq__(self, other) -> bool:
        if other is None:
            return False
        try:
            if len(self) != len(other):
                return False
        except TypeError:
            return False
        return all(f == other[i] for i, f in enumerate(self._filters))

    __hash__ = None  # type: ignore

    def __len__(self) -> int:
        return len(self._filters)

    def __iter__(self):
        return iter(list(self._filters))

    def append(self, filter: Filter) -> None:
        if not isinstance(filter, Filter):
            raise ValueError("filter argument must be a TileDB Filter object")
        self._filters.append(filter)

    def __repr__(self) -> str:
        return "FilterList([{0!s}])".format(",\n       ".join(repr(f) for f in self._filters))

    def _repr_html_(self) -> str:
        if not self._filters:
            return "-"
        rows = "".join(f"<tr><td>{type(f).__name__}</td><td>"
                       f"{','.join(f'{k}={v}' for k, v in f._attrs_().items())}</td></tr>\n"
                       for f in self._filters)
        return f"<section>\n<table>\n<tr><th>Name</th><th>Option</th></tr>\n{rows}</table>\n" \
               "</section>\n"

    def _json(self):
        """The schema JSON's pipeline: a list of one spec per filter (a chunk size other than
        65536 as ``{"filters": ..., "max_chunk_size": n}``)."""
        specs = [f._spec() for f in self._filters]
        if self._chunksize != 65536:
            return {"filters": specs, "max_chunk_size": self._chunksize}
        return specs

    @classmethod
    def _from_json(cls, v) -> "FilterList":
        chunksize = None
        if isinstance(v, dict):
            chunksize = v.get("max_chunk_size")
            v = v.get("filters")
        if v is None:
            specs: list[str] = []
        elif isinstance(v, list):
            specs = [s for item in v for s in _split_spec(item)]
        else:
            specs = _split_spec(v)
        return cls([_filter_from_spec(s) for s in specs], chunksize)


def _split_spec(spec: str) -> list[str]:
    if spec in ("", "none"):
        return []
    return [s.strip() for s in spec.split(",") if s.strip()]


def _filter_list(filters, what: str) -> FilterList:
    if filters is None:
        return FilterList()
    if isinstance(filters, FilterList):
        return filters
    if isinstance(filters, Filter):
        return FilterList([filters])
    if isinstance(filters, (list, tuple)):
        return FilterList(filters)
    raise TypeError(f"{what}: filters must be a FilterList or a sequence of Filters, not "
                    f"{type(filters).__name__}")


# -- dimensions and domain -------------------------------------------------------------------


def _is_string_dtype(dtype) -> bool:
    return (isinstance(dtype, str) and dtype == "ascii") or np.dtype(dtype).kind in "SU"


class Dim:
    """A dimension (TileDB-Py's ``tiledb.Dim``)."""

    def __init__(self, name: str = "__dim_0", domain=None, tile=None, filters=None,
                 dtype=np.uint64, var: bool = None, ctx=None):
        self._ctx = ctx
        if not isinstance(name, str):
            raise TypeError("dimension name must be a str")
        self._name = name
        self._filters = _filter_list(filters, f"dimension '{name}'")
        if var is not None and var and not _is_string_dtype(dtype):
            raise TypeError("'var=True' specified for non-str/bytes dtype")
        if domain is not None and len(domain) != 2:
            raise ValueError("invalid domain extent, must be a pair")
        if _is_string_dtype(dtype):
            # TileDB-Py ignores a string dimension's domain and tile (it forms as written)
            self._dt = DataType("S", "STRING_ASCII", VAR_NUM)
            self._dt = DataType(np.dtype("S"), "STRING_ASCII", VAR_NUM)
            self._domain = (None, None)
            self._tile = None
            return
        dt = DataType.from_numpy(np.dtype(dtype) if dtype is not None else np.uint64)
        if dt.ncells != 1 or dt.np_dtype.kind not in "iufM":
            raise TypeError(f"invalid Dim dtype {np.dtype(dtype)!r}")
        self._dt = dt
        npd = dt.np_dtype
        if domain is None or tuple(domain) == (None, None):
            domain = dt.domain  # the dtype's whole range
        elif npd.kind == "M":
            if not all(isinstance(x, np.datetime64) for x in domain):
                # (TileDB-Py: comparing an integer bound with the datetime range fails)
                raise TypeError(f"invalid domain {tuple(domain)!r} for {npd}: datetime "
                                "dimensions take np.datetime64 bounds")
        elif npd.kind in "iuf":
            lo_t, hi_t = dt.domain
            if not all(lo_t <= x <= hi_t for x in domain):
                raise TypeError("invalid domain extent, domain cannot be safely cast to "
                                f"dtype {npd!r}")
        if npd.kind == "M":
            try:
                lo, hi = np.asarray(domain, npd)
            except (TypeError, ValueError) as e:
                raise TypeError(f"invalid domain {domain!r} for {npd}: {e}") from None
            self._domain = (lo, hi)
        else:
            try:
                self._domain = tuple(npd.type(x) for x in domain)
            except (TypeError, ValueError, OverflowError) as e:
                raise TypeError(f"invalid domain {domain!r} for {npd}: {e}") from None
        if tile is None:
            self._tile = None
        else:
            if npd.kind == "M":
                if isinstance(tile, np.timedelta64):
                    tile = tile / np.timedelta64(1, np.datetime_data(npd)[0])
                self._tile = np.timedelta64(int(tile), np.datetime_data(npd)[0])
            else:
                self._tile = npd.type(tile)
            if (self._tile == 0) or (npd.kind in "iuf" and self._tile < 0):
                raise TileDBError(f"Dimension: Tile extent check failed on dimension "
                                  f"'{name}'; Tile extent must not be 0" if self._tile == 0 else
                                  f"Dimension: Tile extent check failed on dimension '{name}'; "
                                  "Tile extent must be greater than 0")

    def create_label_schema(self, order: str = "increasing", dtype=np.uint64, tile=None,
                            label_filters=None):
        """Dimension labels are not implemented by tdbfilter: raises TileDBError."""
        raise TileDBError("Dim.create_label_schema: dimension labels are not supported by "
                          "tdbfilter's TileDB-Py API")

    def _renamed(self, name: str) -> "Dim":
        """This dimension under another name."""
        import copy

        d = copy.copy(self)
        d._name = name
        return d

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> np.dtype:
        return self._dt.np_dtype

    @property
    def _tiledb_dtype(self) -> str:
        """TileDB's datatype (``tiledb.libtiledb.DataType``'s member: its name)."""
        return self._dt.tiledb_type

    @property
    def isvar(self) -> bool:
        return self._dt.ncells == VAR_NUM

    @property
    def isanon(self) -> bool:
        return self._name == "" or self._name.startswith("__dim")

    @property
    def filters(self) -> FilterList:
        return self._filters

    @property
    def domain(self):
        if self.isvar:
            return (None, None)
        return self._domain

    @property
    def tile(self):
        if self._tile is None and not self.isvar:
            lo, hi = self._domain
            if self.dtype.kind in "iuM":
                span = int(np.int64(hi.astype(np.int64) if self.dtype.kind == "M" else hi)) - \
                    int(lo.astype(np.int64) if self.dtype.kind == "M" else lo) + 1
                if self.dtype.kind == "M":
                    return np.timedelta64(span, np.datetime_data(self.dtype)[0])
                return self.dtype.type(min(span, np.iinfo(self.dtype).max))
            return self.dtype.type(hi - lo)
        return self._tile

    @property
    def shape(self):
        if self.isvar or self.dtype.kind not in "iuM":
            raise TypeError("shape only valid for integer and datetime dimension domains")
        lo, hi = self._domain
        if self.dtype.kind == "M":
            lo, hi = lo.astype(np.int64), hi.astype(np.int64)
        return (int(hi) - int(lo) + 1,)

    @property
    def size(self):
        return int(np.prod(self.shape))

    def __eq__(self, other) -> bool:
        if not isinstance(other, Dim):
            return False
        same_dom = self.isvar == other.isvar and (
            self.isvar or all(_same(a, b) for a, b in zip(self._domain, other._domain)))
        return (self.name == other.name and self.dtype == other.dtype and same_dom and
                _same(self.tile, other.tile) and self.filters == other.filters)

    __hash__ = None  # type: ignore

    def __repr__(self) -> str:
        filters = f", filters={self.filters!r}" if len(self.filters) else ""
        dtype = "'ascii'" if self.isvar else repr(self.dtype.name) \
            if self.dtype.kind != "M" else f"'{self.dtype}'"
        var = ", var=True" if self.isvar else ""
        dom = "(None, None)" if self.isvar else f"({self._domain[0]!r}, {self._domain[1]!r})"
        tile = repr(self.tile)
        return f"Dim(name={self.name!r}, domain={dom}, tile={tile}, dtype={dtype}{var}{filters})"

    def _repr_html_(self) -> str:
        return ("<table>\n<tr><th>Name</th><th>Domain</th><th>Tile</th><th>Data Type</th>"
                "<th>Is Var-length</th><th>Filters</th></tr>\n" + self._repr_html_row_only_()
                + "</table>\n")

    def _repr_html_row_only_(self) -> str:
        return (f"<tr><td>{self.name}</td><td>{self.domain}</td><td>{self.tile}</td>"
                f"<td>{self.dtype}</td><td>{self.isvar}</td><td>{self.filters._repr_html_()}"
                "</td></tr>\n")

    def _dump(self) -> str:
        lo, hi = self.domain
        return (f"### Dimension ###\n- Name: {self.name}\n- Type: {self._dt.tiledb_type}\n"
                f"- Cell val num: {'var' if self.isvar else 1}\n- Domain: "
                f"{'null' if self.isvar else f'[{lo},{hi}]'}\n- Tile extent: "
                f"{'null' if self.isvar else self.tile}\n- Filters: {len(self.filters)}\n")

    def dump(self) -> None:
        print(self._dump())

    def _json(self) -> dict:
        d: dict[str, Any] = {"name": self.name, "type": self._dt.tiledb_type}
        if self.isvar:
            d.update({"var": True, "domain": None, "tile": None})
        else:
            d["domain"] = [json_value(self._dt.tiledb_type, x) for x in self._domain]
            d["tile"] = None if self._tile is None else json_value(self._dt.tiledb_type,
                                                                    self._tile)
        if len(self.filters):
            fj = self.filters._json()
            d["filters"] = dict(fj, own=True) if isinstance(fj, dict) else \
                {"filters": fj, "own": True}
        return d

    @classmethod
    def _from_json(cls, d: dict, coords_filters: FilterList) -> "Dim":
        name = d["type"]
        f = d.get("filters")
        own = isinstance(f, dict) and f.get("own")
        if f is None or (not own and FilterList._from_json(f) == coords_filters):
            filters = FilterList()  # inherits the coords filters, as TileDB stores it
        else:
            filters = FilterList._from_json({k: v for k, v in f.items() if k != "own"}
                                            if isinstance(f, dict) else f)
        if d.get("var") or name == "STRING_ASCII":
            return cls(d["name"], dtype="ascii", var=True, filters=filters)
        dt = DataType.from_tiledb(name).np_dtype
        dom = tuple(from_json_value(name, x, dt) for x in d["domain"])
        if dt.kind == "M":
            tile = None if d.get("tile") is None else int(d["tile"])
        else:
            tile = None if d.get("tile") is None else from_json_value(name, d["tile"], dt)
        return cls(d["name"], dom, tile, filters, dt)


def _same(a, b) -> bool:
    try:
        if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
            return True
        return bool(a == b)
    except Exception:
        return False


class Domain:
    """The dimensions of a schema (TileDB-Py's ``tiledb.Domain``)."""

    def __init__(self, *dims, ctx=None):
        self._ctx = ctx
        if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
            dims = tuple(dims[0])
        if not dims:
            raise TileDBError("Domain must have ndim >= 1")
        for d in dims:
            if not isinstance(d, Dim):
                raise TypeError("Domain takes Dim objects")
        if len(dims) > 1:
            if all(d.name == "__dim_0" for d in dims):
                # anonymous dimensions (Dim's default name) are numbered in order
                dims = tuple(d._renamed(f"__dim_{i}") for i, d in enumerate(dims))
            elif any(d.name.startswith("__dim_0") for d in dims[1:]):
                raise TileDBError("Mixed dimension naming: dimensions must be either all "
                                  "anonymous or all named.")
        self._dims = list(dims)

    @property
    def ndim(self) -> int:
        return len(self._dims)

    @property
    def dtype(self) -> np.dtype:
        return self._dims[0].dtype

    @property
    def homogeneous(self) -> bool:
        return len({d.dtype for d in self._dims}) == 1

    @property
    def shape(self):
        return tuple(d.shape[0] for d in self._dims)

    @property
    def size(self):
        return int(np.prod(self.shape))

    def __len__(self) -> int:
        return len(self._dims)

    def __iter__(self):
        return iter(self._dims)

    def dim(self, dim_id):
        if isinstance(dim_id, str):
            for d in self._dims:
                if d.name == dim_id:
                    return d
            raise TileDBError(f"Dimension '{dim_id}' does not exist")
        if not isinstance(dim_id, (int, np.integer)):
            raise ValueError(f"Unsupported dim identifier: '{dim_id!r}'")
        if not -len(self._dims) <= dim_id < len(self._dims):
            raise TileDBError(f"Dimension index {dim_id} out of range")
        return self._dims[dim_id]

    def has_dim(self, name: str) -> bool:
        return any(d.name == name for d in self._dims)

    def __eq__(self, other) -> bool:
        return isinstance(other, Domain) and len(self._dims) == len(other._dims) and all(
            a == b for a, b in zip(self._dims, other._dims))

    __hash__ = None  # type: ignore

    def __repr__(self) -> str:
        dims = ",\n       ".join(repr(d) for d in self._dims)
        return f"Domain({dims})"

    def _repr_html_(self) -> str:
        rows = "".join(d._repr_html_row_only_() for d in self._dims)
        return ("<table>\n<tr><th>Name</th><th>Domain</th><th>Tile</th><th>Data Type</th>"
                f"<th>Is Var-length</th><th>Filters</th></tr>\n{rows}</table>\n")

    def _dump(self) -> str:
        return f"=== Domain ===\n- Dimensions type: {self._dims[0]._dt.tiledb_type}\n\n" + \
            "\n".join(d._dump() for d in self._dims)

    def dump(self) -> None:
        print(self._dump())


# -- attributes and enumerations ---------------------------------------------------------------


def _complex_pair(dtype: np.dtype, value):
    """A (real, imag) pair, or a record of two floats, as the complex value of a complex
    attribute (TileDB-Py's fill conversion); other values unchanged."""
    if dtype.kind != "c":
        return value
    if isinstance(value, np.ndarray) and value.dtype.kind == "V" and value.ndim == 0:
        value = tuple(value[()])
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return value[0] + value[1] * 1j
    return value


class Attr:
    """An attribute (TileDB-Py's ``tiledb.Attr``)."""

    def __init__(self, name: str = "", dtype=np.float64, fill=None, var: bool = None,
                 nullable: bool = False, filters=None, enum_label: str = None, ctx=None):
        self._ctx = ctx
        if not isinstance(name, str):
            raise TypeError("attribute name must be a str")
        self._name = name
        self._filters = _filter_list(filters, f"attribute '{name}'")
        self._nullable = bool(nullable)
        self._enum_label = enum_label
        dt = DataType.from_numpy(dtype)
        named = dtype if isinstance(dtype, str) else None
        kind = dt.np_dtype.kind
        # TileDB-Py's rules: text is var-length; blobs default to var-length; "S<n>" with
        # var=True and "S" with var=False become var-length with a DeprecationWarning.
        if (var is None and named == "ascii") or kind == "U":
            var = True
        elif kind == "S":
            if named == "blob":
                var = True if var is None else var
            elif dt.np_dtype.itemsize > 0 and var:
                warnings.warn(f"Attr given `var=True` but `dtype` `{dtype}` is fixed; setting "
                              "`dtype=S0`. Hint: set `var=True` with `dtype=S0`, or "
                              f"`var=False`with `dtype={dtype}`", DeprecationWarning,
                              stacklevel=2)
            elif dt.np_dtype.itemsize == 0 and named != "ascii":
                if var is False:
                    warnings.warn("Attr given `var=False` but `dtype` `S0` is var-length; "
                                  "setting `var=True` and `dtype=S0`. Hint: set `var=False` "
                                  "with `dtype=S0`, or `var=False` with a fixed-width string "
                                  "`dtype=S<n>` where is  n>1", DeprecationWarning,
                                  stacklevel=2)
                var = True
        if var:
            npd = np.dtype(kind) if kind in "SU" else dt.np_dtype
            dt = DataType(npd, dt.tiledb_type, VAR_NUM)
        elif dt.ncells == VAR_NUM:
            raise TypeError("dtype is not compatible with var-length attribute")
        if dt.np_dtype.kind == "V":
            # a record of n equal fields reads back as TileDB's n-value cell (2 floats: complex)
            dt = DataType(DataType.from_tiledb(dt.tiledb_type, dt.ncells).np_dtype,
                          dt.tiledb_type, dt.ncells)
        self._dt = dt
        self._fill = None
        if fill is not None:
            self._fill = self._convert_fill(_complex_pair(self.dtype, fill))

    def _convert_fill(self, fill):
        d = self.dtype
        if d.kind == "U":
            return str(fill) if not isinstance(fill, bytes) else fill.decode()
        if d.kind == "S":
            return bytes(fill) if not isinstance(fill, str) else fill.encode()
        if d.kind == "V" or d.kind == "c":
            return np.array(fill, dtype=d)
        if d.kind == "M" and isinstance(fill, np.timedelta64):
            return np.datetime64(int(fill.astype(np.int64)), np.datetime_data(d)[0])
        return np.array(fill, dtype=d)[()] if np.ndim(fill) == 0 else np.array(fill, dtype=d)

    @property
    def name(self) -> str:
        return self._name

    @property
    def _internal_name(self) -> str:
        return self._name

    @property
    def dtype(self) -> np.dtype:
        return self._dt.np_dtype

    @property
    def _tiledb_dtype(self) -> str:
        """TileDB's datatype (``tiledb.libtiledb.DataType``'s member: its name)."""
        return self._dt.tiledb_type

    @property
    def isvar(self) -> bool:
        return self._dt.ncells == VAR_NUM

    @property
    def isnullable(self) -> bool:
        return self._nullable

    @property
    def isanon(self) -> bool:
        return self._name == "" or self._name.startswith("__attr")

    @property
    def isascii(self) -> bool:
        return self._dt.tiledb_type == "STRING_ASCII"

    @property
    def ncells(self) -> int:
        return self._dt.ncells

    @property
    def filters(self) -> FilterList:
        return self._filters

    @property
    def enum_label(self):
        return self._enum_label

    @property
    def fill(self):
        """The fill value as TileDB-Py returns it: a one-element array for a number, a
        timedelta for a datetime (sic), the text or record otherwise."""
        v = self._fill_value()
        if isinstance(v, np.datetime64):
            # TileDB-Py gives a datetime attribute's fill as a timedelta of the same unit
            return np.timedelta64(int(v.astype(np.int64)), np.datetime_data(v.dtype)[0])
        if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind == "c":
            return v.reshape(1)
        if isinstance(v, (np.integer, np.floating, np.bool_)):
            return np.array([v], dtype=v.dtype)
        return v

    def _fill_value(self):
        if self._fill is not None:
            return self._fill
        return self._default_fill()

    @fill.setter
    def fill(self, value) -> None:
        """Sets the fill value (TileDB-Py's conversions: text encoded, a (real, imag) pair
        for complex attributes, numpy's cast otherwise)."""
        if self._dt.tiledb_type == "STRING_UTF8":
            value = value.encode("utf-8")  # (TileDB-Py's: a non-str fails here)
        self._fill = self._convert_fill(_complex_pair(self.dtype, value))

    def _default_fill(self):
        name, d = self._dt.tiledb_type, self.dtype
        if d.kind == "U":
            return "\x00" if self.isvar else "\x00" * max(1, d.itemsize // 4)
        if d.kind == "S":
            if name == "CHAR":
                return b"\x80" if self.isvar or d.itemsize <= 1 else b"\x80" * d.itemsize
            return b"\x00" if self.isvar else b"\x00" * max(1, d.itemsize)
        base = DataType.from_tiledb(name).np_dtype
        if base.kind == "f":
            v = base.type(np.nan)
        elif base.kind == "i":
            v = np.iinfo(base).min
        elif base.kind == "u":
            v = np.iinfo(base).max
        elif base.kind in "Mm":
            v = base.type(np.iinfo(np.int64).min, np.datetime_data(base)[0])
        elif base.kind == "b":
            v = np.False_
        else:
            v = 0
        if d.kind in "Vc":
            return np.array(tuple([v] * self._dt.ncells) if d.kind == "V" else
                            complex(v, v), dtype=d)
        return base.type(v) if base.kind not in "Mm" else v

    def __eq__(self, other) -> bool:
        if not isinstance(other, Attr):
            return False
        return (self.name == other.name and self.dtype == other.dtype and
                self.isvar == other.isvar and self.isnullable == other.isnullable and
                self.filters == other.filters and self._dt == other._dt and
                self.enum_label == other.enum_label and
                _fill_equal(self._fill_value(), other._fill_value()))

    __hash__ = None  # type: ignore

    def __repr__(self) -> str:
        filters = f", filters={self.filters!r}" if len(self.filters) else ""
        if self._dt.tiledb_type == "STRING_ASCII":
            dtype = "'ascii'"
        elif self.dtype.kind == "V":
            dtype = repr(str(self.dtype))
        else:
            dtype = f"'{self.dtype}'"
        var = f", var={self.isvar}" if self.dtype.kind in "SU" or self.isvar else ""
        nullable = f", nullable={self.isnullable}" if self.isnullable else ""
        enum = f", enum_label={self.enum_label!r}" if self.enum_label is not None else ""
        return f"Attr(name={self.name!r}, dtype={dtype}{var}{nullable}{enum}{filters})"

    def _repr_html_(self) -> str:
        return ("<table>\n<tr><th>Name</th><th>Data Type</th><th>Is Var-Len</th>"
                "<th>Is Nullable</th><th>Filters</th></tr>\n" + self._repr_html_row_only_()
                + "</table>\n")

    def _repr_html_row_only_(self) -> str:
        return (f"<tr><td>{self.name}</td><td>{self.dtype}</td><td>{self.isvar}</td>"
                f"<td>{self.isnullable}</td><td>{self.filters._repr_html_()}</td></tr>\n")

    def _dump(self) -> str:
        cvn = "var" if self.isvar else self.ncells
        return (f"### Attribute ###\n- Name: {self.name}\n- Type: {self._dt.tiledb_type}\n"
                f"- Nullable: {'true' if self.isnullable else 'false'}\n- Cell val num: {cvn}\n"
                f"- Filters: {len(self.filters)}\n- Fill value: {self._fill_value()}\n")

    def dump(self) -> None:
        print(self._dump())

    def _json(self) -> dict:
        d: dict[str, Any] = {"name": self.name, "type": self._dt.tiledb_type,
                             "cell_val_num": "var" if self.isvar else self._dt.ncells,
                             "nullable": self.isnullable}
        if len(self.filters):
            d["filters"] = self.filters._json()
        if self._fill is not None:
            d["fill"] = _fill_json(self)
        if self.enum_label is not None:
            d["enumeration"] = self.enum_label
        return d

    @classmethod
    def _from_json(cls, d: dict) -> "Attr":
        name = d["type"]
        cvn = d.get("cell_val_num", 1)
        ncells = VAR_NUM if cvn == "var" else int(cvn)
        dt = DataType.from_tiledb(name, ncells)
        dtype: Any = "ascii" if name == "STRING_ASCII" else dt.np_dtype
        if name == "BLOB":
            dtype = "blob"
        a = cls(d["name"], dtype=dtype, var=ncells == VAR_NUM,
                nullable=bool(d.get("nullable")),
                filters=FilterList._from_json(d.get("filters")),
                enum_label=d.get("enumeration"))
        a._dt = DataType(a._dt.np_dtype, name, ncells)
        fill = d.get("fill")
        if fill is not None:
            a._fill = _fill_from_json(a, fill)
        return a


def _fill_equal(a, b) -> bool:
    try:
        if isinstance(a, (np.ndarray, np.generic)) and isinstance(b, (np.ndarray, np.generic)) \
                and np.asarray(a).dtype == np.asarray(b).dtype:
            # bit equality: NaN and NaT fills equal themselves
            return np.asarray(a).tobytes() == np.asarray(b).tobytes()
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return bool(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)) \
                if np.asarray(a).dtype.kind in "fc" else bool(np.array_equal(a, b))
        if isinstance(a, (float, np.floating)) and np.isnan(a):
            return isinstance(b, (float, np.floating)) and bool(np.isnan(b))
        return bool(a == b)
    except Exception:
        return False


def _fill_json(a: Attr):
    f = a._fill
    name = a._dt.tiledb_type
    if isinstance(f, str):
        return f
    if isinstance(f, bytes):
        return json_value(name, f)
    arr = np.asarray(f)
    if arr.dtype.kind == "c":
        flat = arr.reshape(-1).view(np.float64 if arr.dtype.itemsize == 16 else np.float32)
        return [json_value(name, x) for x in flat]
    if arr.dtype.kind == "V":
        return [json_value(name, x) for x in arr.item()]
    if arr.ndim:
        return [json_value(name, x) for x in arr.reshape(-1)]
    return json_value(name, arr[()])


def _fill_from_json(a: Attr, v):
    d = a.dtype
    if d.kind == "U":
        return v if isinstance(v, str) else bytes(v).decode("utf-8", "replace")
    if d.kind == "S":
        return v.encode() if isinstance(v, str) else bytes(v)
    base = DataType.from_tiledb(a._dt.tiledb_type).np_dtype
    if isinstance(v, list):
        vals = [from_json_value(a._dt.tiledb_type, x, base) for x in v]
        if d.kind == "c":
            return np.array(complex(vals[0], vals[1]), dtype=d)
        if d.kind == "V":
            return np.array(tuple(vals), dtype=d)
        return np.array(vals, dtype=base)
    return from_json_value(a._dt.tiledb_type, v, base)


class Enumeration:
    """An enumeration (TileDB-Py's ``tiledb.Enumeration``): named values an attribute's
    integer cells index."""

    def __init__(self, name: str, ordered: bool, values=None, dtype=None, ctx=None):
        self._ctx = ctx
        self._name = name
        self._ordered = bool(ordered)
        if values is None or len(values) == 0:
            if dtype is None:
                raise TileDBError("dtype must be provided for empty enumeration")
            vals = np.array([], dtype=np.dtype(dtype))
        else:
            vals = np.array(values) if dtype is None else np.array(values, dtype=dtype)
        if vals.dtype.kind == "O":
            vals = vals.astype(str)
        self._values = vals
        kind = vals.dtype.kind
        if kind == "U":
            self._dt = DataType(np.dtype("U"), "STRING_UTF8", VAR_NUM)
        elif kind == "S":
            self._dt = DataType(np.dtype("S"), "STRING_ASCII", VAR_NUM)
        else:
            self._dt = DataType.from_numpy(vals.dtype)

    @property
    def name(self) -> str:
        return self._name

    @property
    def ordered(self) -> bool:
        return self._ordered

    @property
    def dtype(self) -> np.dtype:
        return self._dt.np_dtype

    @property
    def _tiledb_dtype(self) -> str:
        """TileDB's datatype (``tiledb.libtiledb.DataType``'s member: its name)."""
        return self._dt.tiledb_type

    @property
    def cell_val_num(self) -> int:
        return self._dt.ncells

    def values(self) -> np.ndarray:
        if self._values.dtype.kind in "SU":
            return self._values.astype(self._values.dtype.kind)
        return self._values

    def extend(self, values) -> "Enumeration":
        new = np.asarray(values)
        kind, new_kind = self._values.dtype.kind, new.dtype.kind
        if new.size and (
                (kind in "SU" and new_kind not in "SU")
                or (kind == "b" and new_kind != "b")
                or (kind in "iu" and new_kind not in "iu")
                or (kind == "f" and new_kind not in "fiu")):
            raise TileDBError(f"Cannot extend enumeration '{self._name}' of {self.dtype} with "
                              f"values of {new.dtype}")
        vals = np.concatenate([self._values, new.astype(self._values.dtype)])
        return Enumeration(self._name, self._ordered, vals, dtype=self._values.dtype)

    def __eq__(self, other) -> bool:
        return isinstance(other, Enumeration) and self.name == other.name and \
            self.ordered == other.ordered and self.dtype == other.dtype and \
            np.array_equal(self.values(), other.values())

    __hash__ = None  # type: ignore

    def __repr__(self) -> str:
        return (f"Enumeration(name='{self.name}', dtype={self.dtype}, "
                f"dtype_name='{self.dtype.name}', cell_val_num={self.cell_val_num}, "
                f"ordered={self.ordered}, values={list(self.values())})")

    def _repr_html_(self) -> str:
        return (f"<table><tr><th>Name</th><th>Data Type</th><th>Ordered</th></tr>"
                f"<tr><td>{self.name}</td><td>{self.dtype}</td><td>{self.ordered}</td></tr>"
                "</table>")

    def _json(self) -> dict:
        vals = self.values()
        if vals.dtype.kind in "SU":
            out = [v.decode() if isinstance(v, bytes) else str(v) for v in vals.tolist()]
        else:
            out = [json_value(self._dt.tiledb_type, v) for v in vals]
        return {"name": self.name, "type": self._dt.tiledb_type,
                "cell_val_num": "var" if self.cell_val_num == VAR_NUM else self.cell_val_num,
                "ordered": self.ordered, "values": out}

    @classmethod
    def _from_json(cls, d) -> "Enumeration":
        name = d["type"]
        if name == "STRING_UTF8":
            dtype = np.dtype("U")
            vals = [v if isinstance(v, str) else bytes(v).decode() for v in d["values"]]
        elif name in ("STRING_ASCII", "CHAR"):
            dtype = np.dtype("S")
            vals = [v.encode() if isinstance(v, str) else bytes(v) for v in d["values"]]
        else:
            dtype = DataType.from_tiledb(name).np_dtype
            vals = [from_json_value(name, v, dtype) for v in d["values"]]
        return cls(d["name"], d.get("ordered", False), vals if vals else None, dtype=dtype)


# -- current domain -------------------------------------------------------------------------


class NDRectangle:
    """A box over a domain (TileDB-Py's ``tiledb.NDRectangle``)."""

    def __init__(self, ctx=None, domain: Domain = None):
        self._domain = domain
        self._ranges: dict[int, tuple] = {}

    def _index(self, dim) -> int:
        if isinstance(dim, str):
            for i, d in enumerate(self._domain):
                if d.name == dim:
                    return i
            raise TileDBError(f"dimension '{dim}' does not exist")
        return int(dim)

    def set_range(self, dim, start, end) -> None:
        self._ranges[self._index(dim)] = (start, end)

    def range(self, dim):
        i = self._index(dim)
        if i not in self._ranges:
            raise TileDBError(f"no range set on dimension {dim}")
        lo, hi = self._ranges[i]
        d = self._domain.dim(i)
        if d.isvar:
            return (lo, hi)
        return (d.dtype.type(lo), d.dtype.type(hi))

    def __str__(self) -> str:
        return str(self._ranges)


class CurrentDomain:
    """The current domain of a schema (TileDB-Py's ``tiledb.CurrentDomain``)."""

    def __init__(self, ctx=None):
        self._ndrect: Optional[NDRectangle] = None

    def set_ndrectangle(self, ndrect: NDRectangle) -> None:
        self._ndrect = ndrect

    @property
    def ndrectangle(self) -> NDRectangle:
        if self._ndrect is None:
            raise TileDBError("the current domain is empty")
        return self._ndrect

    @property
    def is_empty(self) -> bool:
        return self._ndrect is None

    @property
    def type(self):
        from .libtiledb import CurrentDomainType

        return CurrentDomainType.NDRECTANGLE


# -- the schema --------------------------------------------------------------------------------

_LAYOUTS = {"row-major": "row-major", "col-major": "col-major", "hilbert": "hilbert",
            "global": "global", "unordered": "unordered", "C": "row-major", "F": "col-major",
            "H": "hilbert", "G": "global", "U": "unordered"}


class ArraySchema:
    """An array schema (TileDB-Py's ``tiledb.ArraySchema``)."""

    def __init__(self, domain: Domain = None, attrs: Sequence[Attr] = (),
                 cell_order: str = "row-major", tile_order: str = "row-major",
                 capacity: int = 0, coords_filters=None, offsets_filters=None,
                 validity_filters=None, allows_duplicates: bool = False, sparse: bool = False,
                 dim_labels=None, enums=None, ctx=None, _stored: bool = False):
        # _stored: a schema read back from an array (no deprecation warning, no check)
        self._ctx = ctx
        if domain is None:
            raise TileDBError("ArraySchema: a domain is required")
        if not isinstance(domain, Domain):
            raise TypeError("domain must be a tiledb.Domain")
        if dim_labels:
            raise TileDBError("dimension labels are not supported by tdbfilter's TileDB-Py "
                              "API yet")
        self._domain = domain
        self._attrs = list(attrs or ())
        for a in self._attrs:
            if not isinstance(a, Attr):
                raise TypeError("ArraySchema attrs must be tiledb.Attr objects")
        self._sparse = bool(sparse)
        for what, order in (("cell_order", cell_order), ("tile_order", tile_order)):
            if order not in _LAYOUTS:
                raise ValueError(f"unknown tiledb layout: {order}")
        self._cell_order = _LAYOUTS[cell_order or "row-major"]
        self._tile_order = _LAYOUTS[tile_order or "row-major"]
        self._capacity = int(capacity) if capacity else 10000
        if coords_filters is not None and not _stored:
            # TileDB-Py: the coords filters become each dimension's own filters
            warnings.warn("coords_filters is deprecated; set the FilterList for each "
                          "dimension", DeprecationWarning, stacklevel=2)
            for d in domain:
                d._filters = FilterList(list(_filter_list(coords_filters, "coords")),
                                        _filter_list(coords_filters, "coords").chunksize)
            coords_filters = FilterList()
        self._coords_filters = _filter_list(coords_filters, "coords") if coords_filters \
            is not None else FilterList([ZstdFilter(-1)])
        self._offsets_filters = _filter_list(offsets_filters, "offsets") if offsets_filters \
            is not None else FilterList([ZstdFilter(-1)])
        self._validity_filters = _filter_list(validity_filters, "validity") \
            if validity_filters is not None else FilterList([RleFilter(-1)])
        self._allows_dups = bool(allows_duplicates)
        self._enums = list(enums or ())
        self._current_domain: Optional[CurrentDomain] = None
        self._version = None
        if not _stored:
            names = [a.name for a in self._attrs] + [d.name for d in domain]
            dup = next((n for n in names if names.count(n) > 1), None)
            if dup is not None:
                raise TileDBError("ArraySchema: Cannot add attribute/dimension; name "
                                  f"'{dup}' is not unique")
            self.check()

    # properties
    @property
    def domain(self) -> Domain:
        return self._domain

    @property
    def sparse(self) -> bool:
        return self._sparse

    @property
    def ndim(self) -> int:
        return self._domain.ndim

    @property
    def nattr(self) -> int:
        return len(self._attrs)

    @property
    def shape(self):
        return self._domain.shape

    @property
    def cell_order(self) -> str:
        return self._cell_order

    @property
    def tile_order(self):
        return None if self._cell_order == "hilbert" else self._tile_order

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def allows_duplicates(self) -> bool:
        if not self._sparse:
            raise TileDBError("ArraySchema.allows_duplicates does not apply to dense arrays")
        return self._allows_dups

    @property
    def coords_filters(self) -> FilterList:
        return self._coords_filters

    @property
    def offsets_filters(self) -> FilterList:
        return self._offsets_filters

    @property
    def validity_filters(self) -> FilterList:
        return self._validity_filters

    @property
    def version(self):
        return self._version if self._version is not None else 22

    @property
    def enum_labels(self):
        return [e.name for e in self._enums]

    def enum(self, name: str) -> Enumeration:
        for e in self._enums:
            if e.name == name:
                return e
        raise TileDBError("ArraySchema: Unable to check if unknown enumeration is loaded. No "
                          f"enumeration named '{name}'.")

    def attr(self, key):
        if isinstance(key, str):
            for a in self._attrs:
                if a.name == key:
                    return a
            raise KeyError(f"Attribute '{key}' does not exist") if False else \
                TileDBError(f"ArraySchema: Attribute with name '{key}' does not exist")
        if isinstance(key, (int, np.integer)):
            if not -len(self._attrs) <= key < len(self._attrs):
                raise TileDBError(f"ArraySchema: Attribute index {key} out of range")
            return self._attrs[key]
        raise TileDBError("attr indices must be a string name, or an integer index, not "
                          f"{type(key)!r}")

    def has_attr(self, name: str) -> bool:
        return any(a.name == name for a in self._attrs)

    def has_dim_label(self, name: str) -> bool:
        return False

    @property
    def dim_labels(self):
        return {}

    @property
    def current_domain(self) -> CurrentDomain:
        return self._current_domain if self._current_domain is not None else CurrentDomain()

    def set_current_domain(self, cd: CurrentDomain) -> None:
        self._current_domain = cd

    def check(self) -> bool:
        """Checks the schema with TileDB's rules (the library's create checks, on a scratch
        folder); raises TileDBError with TileDB's reason."""
        from .. import write as _write

        tmp = tempfile.mkdtemp(prefix="tdbf-schema-check-")
        try:
            _write.create(os.path.join(tmp, "a"), self._json())
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return True

    def __eq__(self, other) -> bool:
        if not isinstance(other, ArraySchema):
            return False
        return (self.domain == other.domain and self._attrs == other._attrs and
                self.sparse == other.sparse and self.cell_order == other.cell_order and
                self.tile_order == other.tile_order and
                (not self.sparse or self.capacity == other.capacity) and
                self._allows_dups == other._allows_dups and
                self.coords_filters == other.coords_filters and
                self.offsets_filters == other.offsets_filters and
                self.validity_filters == other.validity_filters)

    __hash__ = None  # type: ignore

    def __len__(self) -> int:
        return self.nattr

    def __iter__(self):
        """The attributes, in order."""
        return iter(list(self._attrs))

    def __repr__(self) -> str:
        out = io.StringIO()
        out.write("ArraySchema(\n")
        out.write("  domain=Domain(*[\n")
        for d in self._domain:
            out.write(f"    {d!r},\n")
        out.write("  ]),\n")
        out.write("  attrs=[\n")
        for a in self._attrs:
            out.write(f"    {a!r},\n")
        out.write("  ],\n")
        out.write(f"  cell_order='{self.cell_order}',\n")
        out.write(f"  tile_order={self.tile_order!r},\n")
        if self.sparse:
            out.write(f"  capacity={self.capacity},\n")
        out.write(f"  sparse={self.sparse},\n")
        if self.sparse:
            out.write(f"  allows_duplicates={self._allows_dups},\n")
        out.write(")\n")
        return out.getvalue()

    def _repr_html_(self) -> str:
        attrs = "".join(a._repr_html_row_only_() for a in self._attrs)
        return (f"<table>\n<tr><th>Domain</th></tr>\n<tr><td>{self.domain._repr_html_()}</td>"
                "</tr>\n<tr><th>Attributes</th></tr>\n<tr><td><table>\n<tr><th>Name</th>"
                "<th>Data Type</th><th>Is Var-Len</th><th>Is Nullable</th><th>Filters</th>"
                f"</tr>\n{attrs}</table></td></tr>\n<tr><th>Cell Order</th></tr>\n<tr><td>"
                f"{self.cell_order}</td></tr>\n<tr><th>Tile Order</th></tr>\n<tr><td>"
                f"{self.tile_order}</td></tr>\n<tr><th>Sparse</th></tr>\n<tr><td>{self.sparse}"
                "</td></tr>\n</table>\n")

    def dump(self) -> None:
        print(f"- Array type: {'sparse' if self.sparse else 'dense'}\n- Cell order: "
              f"{self.cell_order}\n- Tile order: {self.tile_order}\n- Capacity: "
              f"{self.capacity}\n- Allows duplicates: "
              f"{'true' if self._allows_dups else 'false'}\n- Coordinates filters: "
              f"{len(self.coords_filters)}\n- Offsets filters: {len(self.offsets_filters)}\n"
              f"- Validity filters: {len(self.validity_filters)}\n")
        self._domain.dump()
        for a in self._attrs:
            a.dump()

    # JSON ---------------------------------------------------------------------------------
    def _json(self) -> dict:
        d: dict[str, Any] = {
            "sparse": self.sparse, "allows_duplicates": self._allows_dups,
            "cell_order": self._cell_order, "tile_order": self._tile_order,
            "coords_filters": self.coords_filters._json(),
            "offsets_filters": self.offsets_filters._json(),
            "validity_filters": self.validity_filters._json(),
            "dimensions": [dim._json() for dim in self._domain],
            "attributes": [a._json() for a in self._attrs],
        }
        if self._cell_order == "hilbert":
            d["tile_order"] = "row-major"
        if self.sparse:
            d["capacity"] = self._capacity
        if self._enums:
            d["enumerations"] = [e._json() for e in self._enums]
        cd = self._current_domain
        if cd is not None and not cd.is_empty:
            nd = cd.ndrectangle
            d["current_domain"] = [
                [json_value("", x) for x in nd.range(i)] for i in range(self.ndim)]
        return d

    @classmethod
    def _from_json(cls, j: dict) -> "ArraySchema":
        coords = FilterList._from_json(j.get("coords_filters"))
        dims = [Dim._from_json(d, coords) for d in j["dimensions"]]
        attrs = [Attr._from_json(a) for a in j["attributes"]]
        enums = [Enumeration._from_json(e) for e in j.get("enumerations", [])
                 if isinstance(e, dict)]
        s = cls(Domain(*dims), attrs, cell_order=j.get("cell_order", "row-major"),
                tile_order=j.get("tile_order", "row-major"), capacity=j.get("capacity", 10000),
                coords_filters=coords,
                offsets_filters=FilterList._from_json(j.get("offsets_filters")),
                validity_filters=FilterList._from_json(j.get("validity_filters")),
                allows_duplicates=j.get("allows_duplicates", False),
                sparse=j.get("sparse", False), enums=enums, _stored=True)
        s._version = j.get("version")
        if j.get("current_domain"):
            nd = NDRectangle(domain=s.domain)
            for i, (lo, hi) in enumerate(j["current_domain"]):
                nd.set_range(i, lo, hi)
            cd = CurrentDomain()
            cd.set_ndrectangle(nd)
            s._current_domain = cd
        return s

    @classmethod
    def load(cls, uri: str, ctx=None, key=None) -> "ArraySchema":
        from ._array import _schema_of

        return _schema_of(uri, key, ctx)
