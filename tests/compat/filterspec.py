"""Filter descriptions with options, for the extended compat suites.

`F` describes one filter of a pipeline the way a TileDB-Py user writes it
(type plus the options that filter has). From a tuple of `F` this module
builds the TileDB-Py FilterList, the docs/FORMAT.md §3 serialization (what the
schema must hold), the library pipeline through add_filter/set_option, and a
short name for the matrices.

The older `arraygen.PipelineCase` uses ``(type, level)`` pairs; `from_pairs`
converts them.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

# Filter types (docs/FORMAT.md §1.2).
NONE, GZIP, ZSTD, LZ4, RLE, BZIP2, DOUBLE_DELTA, BWR, BITSHUFFLE, BYTESHUFFLE, POSITIVE_DELTA = range(11)
MD5, SHA256, DICTIONARY, SCALE_FLOAT, XOR, WEBP, DELTA = 12, 13, 14, 15, 16, 18, 19

COMPRESSOR_BYTE = {GZIP: 1, ZSTD: 2, LZ4: 3, RLE: 4, BZIP2: 5, DOUBLE_DELTA: 6, DICTIONARY: 7, DELTA: 8}
COMPRESSION = set(COMPRESSOR_BYTE)

SHORT = {NONE: "noop", GZIP: "gzip", ZSTD: "zstd", LZ4: "lz4", RLE: "rle", BZIP2: "bzip2",
         DOUBLE_DELTA: "dd", BWR: "bwr", BITSHUFFLE: "bitshuf", BYTESHUFFLE: "byteshuf",
         POSITIVE_DELTA: "pd", MD5: "md5", SHA256: "sha256", DICTIONARY: "dict",
         SCALE_FLOAT: "scale", XOR: "xor", WEBP: "webp", DELTA: "delta"}

# TileDB datatype ids used as reinterpret types / names (docs/FORMAT.md §1.1).
DT = {"INT32": 0, "INT64": 1, "FLOAT32": 2, "FLOAT64": 3, "CHAR": 4, "INT8": 5, "UINT8": 6,
      "INT16": 7, "UINT16": 8, "UINT32": 9, "UINT64": 10, "STRING_ASCII": 11, "STRING_UTF8": 12,
      "ANY": 17, "DATETIME_DAY": 21, "DATETIME_NS": 27, "BLOB": 40, "BOOL": 41}
DT_SHORT = {0: "i32", 1: "i64", 2: "f32", 3: "f64", 4: "char", 5: "i8", 6: "u8", 7: "i16", 8: "u16",
            9: "u32", 10: "u64", 11: "ascii", 12: "utf8", 17: "any", 21: "dtD", 27: "dtns", 40: "blob",
            41: "bool"}
NUMPY_OF_DT = {0: "int32", 1: "int64", 2: "float32", 3: "float64", 5: "int8", 6: "uint8", 7: "int16",
               8: "uint16", 9: "uint32", 10: "uint64"}

# WebP input formats (§1.6).
WEBP_RGB, WEBP_BGR, WEBP_RGBA, WEBP_BGRA = 1, 2, 3, 4
WEBP_FORMAT_NAMES = {1: "rgb", 2: "bgr", 3: "rgba", 4: "bgra"}

# Filter options (§1.5): id, ctypes struct format.
OPT_LEVEL, OPT_BWR_WINDOW, OPT_PD_WINDOW, OPT_SF_BYTEWIDTH, OPT_SF_FACTOR, OPT_SF_OFFSET = 0, 1, 2, 3, 4, 5
OPT_WEBP_QUALITY, OPT_WEBP_FORMAT, OPT_WEBP_LOSSLESS, OPT_REINTERPRET = 6, 7, 8, 9
OPTION_FORMATS = {OPT_LEVEL: "<i", OPT_BWR_WINDOW: "<I", OPT_PD_WINDOW: "<I", OPT_SF_BYTEWIDTH: "<Q",
                  OPT_SF_FACTOR: "<d", OPT_SF_OFFSET: "<d", OPT_WEBP_QUALITY: "<f", OPT_WEBP_FORMAT: "<B",
                  OPT_WEBP_LOSSLESS: "<B", OPT_REINTERPRET: "<B"}


@dataclass(frozen=True)
class F:
    """One filter with its options (None = TileDB's default, not set by the user)."""
    type: int
    level: int | None = None          # compression filters
    reinterpret: int | None = None    # DELTA / DOUBLE_DELTA: TileDB datatype id
    window: int | None = None         # BIT_WIDTH_REDUCTION / POSITIVE_DELTA, bytes
    factor: float | None = None       # SCALE_FLOAT
    offset: float | None = None
    bytewidth: int | None = None
    quality: float | None = None      # WEBP
    fmt: int | None = None
    lossless: bool | None = None
    extents: tuple | None = None      # WEBP (y_extent, x_extent) as the schema stores them

    # -- names -----------------------------------------------------------------
    @property
    def name(self) -> str:
        s = SHORT[self.type]
        if self.type in COMPRESSION and self.level is not None and self.type not in (
                RLE, DICTIONARY, DOUBLE_DELTA, DELTA, LZ4):
            s += f"({self.level})"
        if self.reinterpret is not None:
            s += "~" + DT_SHORT.get(self.reinterpret, str(self.reinterpret))
        if self.window is not None:
            s += f"({self.window})"
        if self.type == SCALE_FLOAT:
            s += f"({_g(self.factor, 1.0)},{_g(self.offset, 0.0)},{self.bytewidth or 8})"
        if self.type == WEBP:
            s += f"({WEBP_FORMAT_NAMES.get(self.fmt, self.fmt)},"
            s += "lossless)" if self.lossless else f"q{_g(self.quality, 100.0)})"
        return s

    # -- what TileDB does with it -----------------------------------------------
    def output_datatype(self, t: int) -> int:
        """docs/FORMAT.md §4.8."""
        if self.type in (DELTA, DOUBLE_DELTA) and self.reinterpret not in (None, DT["ANY"]):
            return self.reinterpret
        if self.type == SCALE_FLOAT:
            return {1: 5, 2: 7, 4: 0, 8: 1}[self.bytewidth or 8]
        if self.type == XOR:
            return {1: 5, 2: 7, 4: 0, 8: 1}[datatype_size(t)]
        return t

    def options_bytes(self, webp_extents=(0, 0)) -> bytes:
        """The §3.3 option bytes TileDB 2.30 (format version 22) writes."""
        t = self.type
        lvl = -1 if self.level is None else self.level
        if t in (DOUBLE_DELTA, DELTA):
            rt = DT["ANY"] if self.reinterpret is None else self.reinterpret
            return struct.pack("<BiB", COMPRESSOR_BYTE[t], lvl, rt)
        if t in COMPRESSION:
            return struct.pack("<Bi", COMPRESSOR_BYTE[t], lvl)
        if t == BWR:
            return struct.pack("<I", 256 if self.window is None else self.window)
        if t == POSITIVE_DELTA:
            return struct.pack("<I", 1024 if self.window is None else self.window)
        if t == SCALE_FLOAT:
            return struct.pack("<ddQ", _g(self.factor, 1.0), _g(self.offset, 0.0), self.bytewidth or 8)
        if t == WEBP:
            y, x = self.extents or webp_extents
            return struct.pack("<fBBHHH", _g(self.quality, 100.0), self.fmt or 0, 1 if self.lossless else 0,
                               y, x, 0)
        return b""

    def lib_options(self):
        """(option id, value) pairs that build this filter through tdb_pipeline_set_option."""
        out = []
        if self.level is not None:
            out.append((OPT_LEVEL, self.level))
        if self.reinterpret is not None:
            out.append((OPT_REINTERPRET, self.reinterpret))
        if self.window is not None:
            out.append((OPT_BWR_WINDOW if self.type == BWR else OPT_PD_WINDOW, self.window))
        if self.bytewidth is not None:
            out.append((OPT_SF_BYTEWIDTH, self.bytewidth))
        if self.factor is not None:
            out.append((OPT_SF_FACTOR, self.factor))
        if self.offset is not None:
            out.append((OPT_SF_OFFSET, self.offset))
        if self.quality is not None:
            out.append((OPT_WEBP_QUALITY, self.quality))
        if self.fmt is not None:
            out.append((OPT_WEBP_FORMAT, self.fmt))
        if self.lossless is not None:
            out.append((OPT_WEBP_LOSSLESS, 1 if self.lossless else 0))
        return out

    def tiledb(self):
        """The TileDB-Py filter object."""
        import numpy as np
        import tiledb
        t = self.type
        lvl = -1 if self.level is None else self.level
        rt = None if self.reinterpret is None else np.dtype(NUMPY_OF_DT[self.reinterpret])
        simple = {NONE: tiledb.NoOpFilter, BITSHUFFLE: tiledb.BitShuffleFilter,
                  BYTESHUFFLE: tiledb.ByteShuffleFilter, MD5: tiledb.ChecksumMD5Filter,
                  SHA256: tiledb.ChecksumSHA256Filter, XOR: tiledb.XORFilter}
        if t in simple:
            return simple[t]()
        comp = {GZIP: tiledb.GzipFilter, ZSTD: tiledb.ZstdFilter, LZ4: tiledb.LZ4Filter,
                BZIP2: tiledb.Bzip2Filter, RLE: tiledb.RleFilter, DICTIONARY: tiledb.DictionaryFilter}
        if t in comp:
            return comp[t](level=lvl)
        if t == DOUBLE_DELTA:
            return tiledb.DoubleDeltaFilter(level=lvl, reinterp_dtype=rt)
        if t == DELTA:
            return tiledb.DeltaFilter(level=lvl, reinterp_dtype=rt)
        if t == BWR:
            return tiledb.BitWidthReductionFilter(window=-1 if self.window is None else self.window)
        if t == POSITIVE_DELTA:
            return tiledb.PositiveDeltaFilter(window=-1 if self.window is None else self.window)
        if t == SCALE_FLOAT:
            return tiledb.FloatScaleFilter(factor=self.factor, offset=self.offset, bytewidth=self.bytewidth)
        if t == WEBP:
            fmt = tiledb.libtiledb.WebpInputFormat(self.fmt)
            return tiledb.WebpFilter(input_format=fmt, quality=self.quality, lossless=self.lossless)
        raise ValueError(f"no TileDB-Py filter for type {t}")


def _g(v, default):
    return default if v is None else v


def from_pairs(pairs) -> tuple:
    """arraygen.PipelineCase.filters ((type, level), ...) -> tuple of F."""
    return tuple(F(t, level=lv) for t, lv in pairs)


def pipeline_name(filters) -> str:
    return "+".join(f.name for f in filters) if filters else "none"


def serialize(filters, max_chunk_size: int = 65536, webp_extents=(0, 0)) -> bytes:
    """docs/FORMAT.md §3 bytes of a pipeline of F (format version 22)."""
    out = bytearray(struct.pack("<II", max_chunk_size, len(filters)))
    for f in filters:
        opts = f.options_bytes(webp_extents)
        out += struct.pack("<BI", f.type, len(opts)) + opts
    return bytes(out)


def tiledb_filter_list(filters):
    import tiledb
    return tiledb.FilterList([f.tiledb() for f in filters])


def build_in_library(lib, filters):
    """The pipeline built through tdb_pipeline_add_filter / tdb_pipeline_set_option."""
    p = lib.create_pipeline()
    try:
        for i, f in enumerate(filters):
            p.add_filter(f.type)
            for opt, value in f.lib_options():
                p.set_option(i, opt, value)
    except BaseException:
        p.close()
        raise
    return p


# -- datatypes -------------------------------------------------------------------

def datatype_size(t: int) -> int:
    if t in (0, 2, 9, 14, 16):
        return 4
    if t in (1, 3, 10) or 18 <= t <= 39:
        return 8
    if t in (7, 8, 13, 15):
        return 2
    return 1


def is_integer(t: int) -> bool:
    return t in (0, 1, 5, 6, 7, 8, 9, 10, 41)


def is_real(t: int) -> bool:
    return t in (2, 3)


def is_datetime(t: int) -> bool:
    return 18 <= t <= 39


def stage_types(filters, base: int) -> list[int]:
    """Filter data type of every stage (§4.8)."""
    out, t = [], base
    for f in filters:
        out.append(t)
        t = f.output_datatype(t)
    return out


def accepts(filters, base: int, is_var: bool = False) -> str | None:
    """None if TileDB 2.30 accepts this pipeline on a field of type `base` (check_filter_types,
    docs/FORMAT.md §4.8), else why not. WEBP's array-level checks are not modelled here."""
    if is_var and base in (11, 12) and len(filters) > 1:
        for t in (RLE, DICTIONARY):
            if any(f.type == t for f in filters) and filters[0].type != t:
                return f"{SHORT[t]} must be first on var strings"
    t = base
    for f in filters:
        why = _rejects(f, t)
        if why:
            return why
        t = f.output_datatype(t)
    return None


def _rejects(f: F, t: int) -> str | None:
    if f.type in (DELTA, DOUBLE_DELTA):
        e = t if f.reinterpret in (None, DT["ANY"]) else f.reinterpret
        if is_real(e):
            return "delta filters reject floats"
        if f.reinterpret not in (None, DT["ANY"]) and datatype_size(t) % datatype_size(f.reinterpret):
            return "reinterpret size does not divide"
    if f.type in (BWR, POSITIVE_DELTA):
        if not (is_integer(t) or is_datetime(t) or t in (40, 42, 43)):
            return "BWR/PD accept integers, date/time and byte types only"
    if f.type == SCALE_FLOAT and datatype_size(t) not in (4, 8):
        return "SCALE_FLOAT needs a 4- or 8-byte type"
    if f.type == XOR and datatype_size(t) not in (1, 2, 4, 8):
        return "XOR needs a 1/2/4/8-byte type"
    if f.type == WEBP and t != 6:
        return "WEBP needs UINT8"
    return None
