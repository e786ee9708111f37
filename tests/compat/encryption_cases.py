"""Arrays of the encryption harness (run_encryption.py): recipes, data, expected tiles.

Every recipe is plain picklable data: an `EncArray` (schema, values, the
key) plus one `FieldCase` per attribute / dimension with the cells each of
its tiles must hold (`TileExp`). `write_array` creates and writes it with
TileDB-Py, encrypted (sm.encryption_type AES_256_GCM) unless the array is an
unencrypted twin used for the generic-tile checks.

Groups:

* ``fixed``    dense 1-D, one attribute per pipeline ([], [ZSTD],
               [BYTESHUFFLE, LZ4], [CHECKSUM_MD5, GZIP], [DOUBLE_DELTA],
               [BIT_WIDTH_REDUCTION, ZSTD]) x datatype x shape ("walk":
               compressible; "random": full range, BWR windows that cannot be
               reduced) x tile size (under / over 64 KiB);
* ``var``      var-size ASCII / UTF-8 strings with [ZSTD], [RLE], [DICTIONARY],
               [RLE, ZSTD]; var-size numbers; default and custom offsets pipelines;
* ``edge``     var tiles with an empty trailing chunk (two 40 000-byte cells),
               all-empty string tiles;
* ``nullable`` fixed and var nullable attributes (validity tiles);
* ``sparse``   coordinates (d0.tdb through the coords pipeline; a 2-D array
               with a string dimension) and sparse attributes.

Each array also gets array metadata (one value over 64 KiB), so `__meta`
holds a multi-chunk encrypted generic tile.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from dataclasses import dataclass, field

import numpy as np

import filterspec as fs
from filterspec import F

ZSTD, GZIP, LZ4, RLE, DICT = fs.ZSTD, fs.GZIP, fs.LZ4, fs.RLE, fs.DICTIONARY
DD, BWR, BYTESHUF, MD5, PD = fs.DOUBLE_DELTA, fs.BWR, fs.BYTESHUFFLE, fs.MD5, fs.POSITIVE_DELTA

DEFAULT_OFFSETS = (F(ZSTD),)
DEFAULT_VALIDITY = (F(RLE),)
DEFAULT_COORDS = (F(ZSTD),)

UINT64, UINT8 = 10, 6


def key_for(label: str) -> str:
    """A 32-character ASCII key per array (TileDB uses the string's raw bytes)."""
    k = hashlib.sha256(("tdbfilter-enc/" + label).encode()).hexdigest()[:32]
    assert len(k.encode()) == 32
    return k


def seed_for(*parts) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())


# ---------------------------------------------------------------------------
# recipe types
# ---------------------------------------------------------------------------

@dataclass
class TileExp:
    data: bytes
    offsets: np.ndarray | None = None   # var: u64 start offsets, one per cell
    validity: bytes | None = None       # nullable: one byte per cell

    @property
    def cell_sizes(self) -> list[int]:
        ends = list(self.offsets[1:]) + [len(self.data)]
        return [int(e) - int(s) for s, e in zip(self.offsets, ends)]

    @property
    def offsets_bytes(self) -> bytes:
        return np.asarray(self.offsets, dtype="<u8").tobytes()


@dataclass
class FieldCase:
    row: str                 # matrix row label (pipeline and type)
    name: str                # attribute / dimension name
    datatype: int            # TileDB datatype id
    filters: tuple           # the field's effective pipeline (dims: the inherited coords pipeline)
    tiles: list              # TileExp per tile, in file order
    is_dim: bool = False
    var: bool = False
    nullable: bool = False
    cell_val_num: int = 1
    values: object = None    # what TileDB-Py must read back (numpy array / list of bytes)
    valid: np.ndarray | None = None  # nullable: True where valid

    @property
    def value_size(self) -> int:
        return fs.datatype_size(self.datatype)

    @property
    def cell_size(self) -> int:
        return self.value_size if self.var else self.value_size * self.cell_val_num

    @property
    def var_string(self) -> bool:
        return self.var and self.datatype in (11, 12) and any(f.type in (RLE, DICT) for f in self.filters)


@dataclass
class DimDef:
    name: str
    dtype: str               # numpy dtype, or "ascii"
    domain: tuple | None = None
    tile: object = None
    filters: tuple | None = None   # None: empty dimension pipeline (inherits coords)


@dataclass
class AttrDef:
    name: str
    dtype: object            # numpy dtype (str or structured), "ascii" or "utf8"
    var: bool = False
    nullable: bool = False
    filters: tuple = ()


@dataclass
class EncArray:
    group: str
    label: str
    dims: list
    attrs: list
    fields: list
    data: dict
    sparse: bool = False
    capacity: int = 0
    coords: list | None = None
    offsets_filters: tuple | None = None
    validity_filters: tuple | None = None
    coords_filters: tuple | None = None     # None: TileDB's default [ZSTD]
    encrypted: bool = True
    meta: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    @property
    def key(self) -> str | None:
        return key_for(self.label) if self.encrypted else None

    @property
    def key_bytes(self) -> bytes | None:
        return self.key.encode() if self.encrypted else None

    @property
    def offsets_pipeline(self) -> tuple:
        return self.offsets_filters if self.offsets_filters is not None else DEFAULT_OFFSETS

    @property
    def validity_pipeline(self) -> tuple:
        return self.validity_filters if self.validity_filters is not None else DEFAULT_VALIDITY

    def weight(self) -> int:
        return sum(len(t.data) for fc in self.fields for t in fc.tiles)


# ---------------------------------------------------------------------------
# writing with TileDB-Py
# ---------------------------------------------------------------------------

def tiledb_ctx(key: str | None):
    import tiledb
    if key is None:
        return tiledb.Ctx()
    return tiledb.Ctx(tiledb.Config({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key}))


def _attr_dtype(d):
    if d == "utf8":
        return str
    if d == "ascii":
        return "ascii"
    return np.dtype(d) if not isinstance(d, np.dtype) else d


def build_schema(arr: EncArray, ctx):
    import tiledb
    dims = []
    for d in arr.dims:
        kw = {}
        if d.filters is not None:
            kw["filters"] = fs.tiledb_filter_list(d.filters)
        if d.dtype == "ascii":
            dims.append(tiledb.Dim(name=d.name, domain=(None, None), tile=None, dtype="ascii", ctx=ctx, **kw))
        else:
            dims.append(tiledb.Dim(name=d.name, domain=d.domain, tile=d.tile, dtype=np.dtype(d.dtype), ctx=ctx,
                                   **kw))
    attrs = [tiledb.Attr(name=a.name, dtype=_attr_dtype(a.dtype), var=a.var or None, nullable=a.nullable,
                         filters=fs.tiledb_filter_list(a.filters), ctx=ctx) for a in arr.attrs]
    kw = {}
    if arr.offsets_filters is not None:
        kw["offsets_filters"] = fs.tiledb_filter_list(arr.offsets_filters)
    if arr.validity_filters is not None:
        kw["validity_filters"] = fs.tiledb_filter_list(arr.validity_filters)
    if arr.capacity:
        kw["capacity"] = arr.capacity
    schema = tiledb.ArraySchema(domain=tiledb.Domain(*dims, ctx=ctx), attrs=attrs, sparse=arr.sparse, ctx=ctx, **kw)
    if arr.coords_filters is not None:
        # TileDB-Py's coords_filters argument copies the list into every dimension and leaves the
        # schema's coords pipeline empty; the pybind property sets the schema's own.
        schema._coords_filters = fs.tiledb_filter_list(arr.coords_filters)
    return schema


def write_array(arr: EncArray, root: str) -> str:
    import tiledb
    uri = os.path.join(root, arr.label)
    ctx = tiledb_ctx(arr.key)
    tiledb.Array.create(uri, build_schema(arr, ctx), ctx=ctx)
    # Validity maps go in explicitly: TileDB-Py's __setitem__ ignores numpy masks on sparse writes and
    # rejects None cells of var-size numbers.
    nullmaps = {fc.name: np.asarray(fc.valid, dtype=np.uint8) for fc in arr.fields if fc.nullable}
    with tiledb.open(uri, "w", ctx=ctx) as A:
        if arr.sparse:
            from tiledb.sparse_array import _setitem_impl_sparse
            _setitem_impl_sparse(A, tuple(arr.coords), dict(arr.data), nullmaps)
        else:
            A._setitem_impl(slice(None), dict(arr.data), nullmaps)
        for k, v in arr.meta.items():
            A.meta[k] = v
    return uri


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------

def fixed_tiles(cells: np.ndarray, per_tile: int, validity=None) -> list:
    out = []
    for i in range(0, len(cells), per_tile):
        v = None if validity is None else np.asarray(validity[i:i + per_tile], dtype=np.uint8).tobytes()
        out.append(TileExp(np.ascontiguousarray(cells[i:i + per_tile]).tobytes(), None, v))
    return out


def var_tiles(cells: list, per_tile: int, validity=None) -> list:
    out = []
    for i in range(0, len(cells), per_tile):
        group = cells[i:i + per_tile]
        lens = np.array([len(c) for c in group], dtype=np.uint64)
        offs = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.uint64)
        v = None if validity is None else np.asarray(validity[i:i + per_tile], dtype=np.uint8).tobytes()
        out.append(TileExp(b"".join(group), offs, v))
    return out


def numeric_values(numpy: str, shape: str, count: int, rng) -> np.ndarray:
    """`count` scalar values: "walk" (small steps: compressible, DOUBLE_DELTA-safe) or "random"."""
    base = np.dtype(numpy)
    if base.kind == "M":
        if shape == "walk":
            v = 1_600_000_000 * 10**9 + np.cumsum(rng.integers(0, 10**6, count, dtype=np.int64))
        else:
            v = rng.integers(1_577_836_800 * 10**9, 1_735_689_600 * 10**9, size=count, dtype=np.int64)
        return v.view(base)
    if base.kind == "f":
        if shape == "walk":
            return np.cumsum(rng.standard_normal(count)).astype(base)
        return (rng.standard_normal(count) * 1e6).astype(base)
    info = np.iinfo(base)
    if shape == "walk":
        steps = rng.integers(-3, 4, count)
        v = (np.cumsum(steps) + (int(info.min) + int(info.max)) // 2)
        return v.astype(np.int64).astype(base)  # wraps for narrow types: still fine for DOUBLE_DELTA
    return rng.integers(info.min, info.max, size=count, dtype=base, endpoint=True)


ASCII = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,:;!?/"
UTF8 = "aé中ü😀ßøΩж€xyz"


def _word(rng, alphabet, lo, hi) -> str:
    n = int(rng.integers(lo, hi + 1))
    return "".join(alphabet[int(i)] for i in rng.integers(0, len(alphabet), n))


def string_values(kind: str, count: int, rng) -> list[str]:
    """Strings with repeats (runs and a small vocabulary), empty strings included, every string
    under 256 bytes (so the var-string RLE length quirk of docs/FORMAT.md §5.8 cannot occur)."""
    alphabet = ASCII if kind == "ascii" else UTF8
    vocab = [_word(rng, alphabet, 0, 24 if kind == "ascii" else 12) for _ in range(60)] + [""]
    out = []
    while len(out) < count:
        w = vocab[int(rng.integers(0, len(vocab)))]
        out += [w] * int(rng.geometric(0.4))
    return out[:count]


def gzip_capacity(n: int) -> int:
    return n + 6 + 5 * (n // 16834 + 1)


def gzip_overflows(tiles: list, cell_size: int, filters) -> bool:
    """Whether TileDB 2.30 would fail writing these tiles through a pipeline whose GZIP sees the
    raw cells (only checksums before it): the GZIP capacity defect of docs/FORMAT.md §5.3."""
    from tiledb_format import expected_fixed_chunks
    types = [f.type for f in filters]
    if GZIP not in types:
        return False
    gi = types.index(GZIP)
    if any(t not in (MD5, fs.SHA256) for t in types[:gi]):
        raise ValueError("gzip_overflows models checksums before GZIP only")
    lvl = filters[gi].level
    zlevel = 6 if lvl is None or lvl < 0 else lvl
    for t in tiles:
        pos = 0
        for n in expected_fixed_chunks(len(t.data), cell_size):
            part = t.data[pos:pos + n]
            pos += n
            if len(zlib.compress(part, zlevel)) > gzip_capacity(len(part)):
                return True
    return False


# ---------------------------------------------------------------------------
# groups
# ---------------------------------------------------------------------------

FIXED_PIPELINES = [
    ("none", ()),
    ("zstd", (F(ZSTD),)),
    ("byteshuf+lz4", (F(BYTESHUF), F(LZ4))),
    ("md5+gzip", (F(MD5), F(GZIP))),
    ("dd", (F(DD),)),
    ("bwr+zstd", (F(BWR), F(ZSTD))),
]
# Full mode, "walk" arrays: more filters under AES.
EXTRA_PIPELINES = [
    ("bitshuf+zstd", (F(fs.BITSHUFFLE), F(ZSTD))),
    ("sha256", (F(fs.SHA256),)),
    ("bzip2", (F(fs.BZIP2),)),
    ("xor+lz4", (F(fs.XOR), F(LZ4))),
    ("delta+zstd", (F(fs.DELTA), F(ZSTD))),
    ("rle", (F(RLE),)),
    ("gzip(9)", (F(GZIP, level=9),)),
    ("md5+sha256+zstd(19)", (F(MD5), F(fs.SHA256), F(ZSTD, level=19))),
]
RANDOM_PIPELINES = {"none", "zstd", "byteshuf+lz4", "bwr+zstd"}

# name -> (numpy base dtype, TileDB datatype, cell_val_num)
FIXED_DTYPES = {
    "int8": ("int8", 5, 1), "uint16": ("uint16", 8, 1), "int32": ("int32", 0, 1), "int64": ("int64", 1, 1),
    "float32": ("float32", 2, 1), "float64": ("float64", 3, 1), "dt_ns": ("datetime64[ns]", 27, 1),
    "i32x3": ("int32", 0, 3),
}
TILE_SIZES = {"small": (1000, 2), "large": (70001, 2)}   # cells per tile, tiles


def big_meta(label: str) -> dict:
    rng = np.random.default_rng(seed_for("meta", label))
    blob = (np.cumsum(rng.integers(-2, 3, 150_000)) % 251).astype(np.uint8).tobytes()
    return {"label": label, "blob": blob, "numbers": tuple(range(10))}


def build_fixed(dtname: str, shape: str, tiles: str, extra: bool = False) -> EncArray:
    numpy, datatype, cvn = FIXED_DTYPES[dtname]
    extent, ntiles = TILE_SIZES[tiles]
    n = extent * ntiles
    label = f"fixed-{dtname}-{shape}-{tiles}" + ("-extra" if extra else "")
    dim = DimDef("d", "uint64", (0, n - 1), extent)
    attrs, fields, data, notes = [], [], {}, []
    attr_dtype = np.dtype(numpy) if cvn == 1 else np.dtype([(f"f{i}", numpy) for i in range(cvn)])
    for i, (pname, filters) in enumerate(FIXED_PIPELINES + (EXTRA_PIPELINES if extra else [])):
        if shape == "random" and pname not in RANDOM_PIPELINES:
            continue
        if fs.accepts(filters, datatype) is not None:
            continue
        rng = np.random.default_rng(seed_for(label, i))
        vals = numeric_values(numpy, shape, n * cvn, rng)
        tl = fixed_tiles(vals.reshape(n, cvn) if cvn > 1 else vals, extent)
        if gzip_overflows(tl, np.dtype(numpy).itemsize * cvn, filters):
            notes.append(f"{pname}: left out, TileDB cannot write it (GZIP capacity defect, docs/FORMAT.md §5.3)")
            continue
        name = "a_" + "".join(c if c.isalnum() else "_" for c in pname)
        attrs.append(AttrDef(name, attr_dtype, filters=filters))
        data[name] = vals.view(attr_dtype) if cvn > 1 else vals
        fields.append(FieldCase(f"{dtname} {pname}", name, datatype, filters, tl, cell_val_num=cvn,
                                values=vals))
    return EncArray("fixed", label, [dim], attrs, fields, data, meta=big_meta(label),
                    notes=notes)


VAR_ATTRS = [
    # name, kind ("ascii"/"utf8" or numpy dtype), filters
    ("ascii_zstd", "ascii", (F(ZSTD),)),
    ("ascii_rle", "ascii", (F(RLE),)),
    ("ascii_dict", "ascii", (F(DICT),)),
    ("ascii_rle_zstd", "ascii", (F(RLE), F(ZSTD))),
    ("utf8_zstd", "utf8", (F(ZSTD),)),
    ("utf8_rle", "utf8", (F(RLE),)),
    ("utf8_dict", "utf8", (F(DICT),)),
    ("i32_zstd", "int32", (F(ZSTD),)),
    ("f64_byteshuf_lz4", "float64", (F(BYTESHUF), F(LZ4))),
    ("i64_none", "int64", ()),
]
VAR_TILES = {"small": (1000, 2), "large": (30000, 2)}
STRING_TYPES = {"ascii": 11, "utf8": 12}
NUMPY_TYPES = {"int32": 0, "int64": 1, "float64": 3, "uint16": 8, "float32": 2, "int16": 7}


def _obj(items) -> np.ndarray:
    o = np.empty(len(items), dtype=object)
    for i, v in enumerate(items):
        o[i] = v
    return o


def _var_field(label, name, kind, filters, n, per_tile, rng, row_prefix="", validity=None):
    """(AttrDef, FieldCase, data for TileDB-Py) of a var-size attribute."""
    if kind in STRING_TYPES:
        vals = string_values(kind, n, rng)
        if validity is not None:
            vals = [v if ok else "" for v, ok in zip(vals, validity)]
        cells = [v.encode() for v in vals]
        datatype = STRING_TYPES[kind]
        pydata = _obj(cells) if kind == "ascii" else _obj(vals)   # nulls are empty cells
    else:
        lens = rng.integers(0, 21, n)
        flat = numeric_values(kind, "walk", int(lens.sum()), rng)
        parts = np.split(flat, np.cumsum(lens)[:-1])
        if validity is not None:
            parts = [p if ok else p[:0] for p, ok in zip(parts, validity)]
        cells = [np.ascontiguousarray(p).tobytes() for p in parts]
        datatype = NUMPY_TYPES[kind]
        pydata = _obj(parts)
    tiles = var_tiles(cells, per_tile, validity)
    fc = FieldCase(row_prefix + f"{kind} {fs.pipeline_name(filters)}", name, datatype, filters, tiles, var=True,
                   nullable=validity is not None, values=cells, valid=validity)
    return AttrDef(name, kind, var=True, nullable=validity is not None, filters=filters), fc, pydata


def build_var(tiles: str, offsets: str = "default") -> EncArray:
    per_tile, ntiles = VAR_TILES[tiles]
    n = per_tile * ntiles
    label = f"var-{tiles}-offs_{offsets}"
    offs_filters = None if offsets == "default" else (F(PD), F(BWR), F(LZ4))
    attrs, fields, data = [], [], {}
    for i, (name, kind, filters) in enumerate(VAR_ATTRS):
        rng = np.random.default_rng(seed_for(label, i))
        a, fc, pydata = _var_field(label, name, kind, filters, n, per_tile, rng)
        attrs.append(a)
        fields.append(fc)
        data[name] = pydata
    dim = DimDef("d", "uint64", (0, n - 1), per_tile)
    return EncArray("var", label, [dim], attrs, fields, data, offsets_filters=offs_filters, meta=big_meta(label))


EDGE_BIG = [("big_none", ()), ("big_zstd", (F(ZSTD),)), ("big_md5", (F(MD5),)), ("big_md5_gzip", (F(MD5), F(GZIP)))]
EDGE_EMPTY = [("empty_none", "ascii", ()), ("empty_zstd", "ascii", (F(ZSTD),)), ("empty_rle", "ascii", (F(RLE),)),
              ("empty_dict", "utf8", (F(DICT),)), ("empty_md5", "ascii", (F(MD5),)),
              ("empty_md5_gzip", "ascii", (F(MD5), F(GZIP)))]


def build_edge(which: str) -> EncArray:
    """"big": var int64 tiles of two 40 000-byte cells: chunks [80000, 0], an empty trailing chunk
    (docs/FORMAT.md §4.5). "empty": string tiles whose cells are all empty (one 0-byte chunk), next to
    a tile of ordinary strings."""
    label = f"edge-{which}"
    attrs, fields, data = [], [], {}
    if which == "big":
        per_tile, n = 2, 4
        for i, (name, filters) in enumerate(EDGE_BIG):
            rng = np.random.default_rng(seed_for(label, i))
            parts = [numeric_values("int64", "walk", 5000, rng) for _ in range(n)]
            cells = [p.tobytes() for p in parts]
            attrs.append(AttrDef(name, "int64", var=True, filters=filters))
            data[name] = _obj(parts)
            fields.append(FieldCase(f"i64 2x40000B {fs.pipeline_name(filters)}", name, 1, filters,
                                    var_tiles(cells, per_tile), var=True, values=cells))
    else:
        per_tile, n = 5, 10
        for i, (name, kind, filters) in enumerate(EDGE_EMPTY):
            rng = np.random.default_rng(seed_for(label, i))
            vals = [""] * per_tile + string_values(kind, per_tile, rng)
            cells = [v.encode() for v in vals]
            attrs.append(AttrDef(name, kind, var=True, filters=filters))
            data[name] = _obj(cells) if kind == "ascii" else _obj(vals)
            fields.append(FieldCase(f"{kind} all-empty tile {fs.pipeline_name(filters)}", name,
                                    STRING_TYPES[kind], filters, var_tiles(cells, per_tile), var=True, values=cells))
    dim = DimDef("d", "uint64", (0, n - 1), per_tile)
    return EncArray("edge", label, [dim], attrs, fields, data, meta={"label": label})


NULLABLE_ATTRS = [
    ("n_i32_zstd", "int32", False, (F(ZSTD),)),
    ("n_f64_none", "float64", False, ()),
    ("n_i16_dd", "int16", False, (F(DD),)),
    ("n_ascii_zstd", "ascii", True, (F(ZSTD),)),
    ("n_utf8_dict", "utf8", True, (F(DICT),)),
    ("n_i32var_lz4", "int32", True, (F(LZ4),)),
]


def build_nullable(tiles: str, validity: str = "default") -> EncArray:
    per_tile, ntiles = TILE_SIZES[tiles]
    n = per_tile * ntiles
    label = f"nullable-{tiles}-val_{validity}"
    val_filters = None if validity == "default" else (F(ZSTD),)
    attrs, fields, data = [], [], {}
    for i, (name, kind, var, filters) in enumerate(NULLABLE_ATTRS):
        rng = np.random.default_rng(seed_for(label, i))
        valid = np.repeat(rng.random(n // 7 + 1) < 0.7, 7)[:n]   # runs of 7: RLE-friendly validity
        if var:
            a, fc, pydata = _var_field(label, name, kind, filters, n, per_tile, rng, validity=valid)
            fc.row = "nullable " + fc.row
        else:
            vals = numeric_values(kind, "walk", n, rng)
            a = AttrDef(name, kind, nullable=True, filters=filters)
            fc = FieldCase(f"nullable {kind} {fs.pipeline_name(filters)}", name, NUMPY_TYPES.get(kind, 7), filters,
                           fixed_tiles(vals, per_tile, valid), nullable=True, values=vals, valid=valid)
            pydata = vals
        attrs.append(a)
        fields.append(fc)
        data[name] = pydata
    dim = DimDef("d", "uint64", (0, n - 1), per_tile)
    return EncArray("nullable", label, [dim], attrs, fields, data, validity_filters=val_filters,
                    meta=big_meta(label))


def build_sparse(which: str) -> EncArray:
    """"1d": int64 dimension with an empty pipeline (coords [ZSTD]), capacity 3000 over 10000
    cells; "1d-coords" the same with the schema's coords pipeline [DOUBLE_DELTA, BWR, LZ4]. "2d": an ASCII dimension with its own [RLE] (var-string path, offsets marker) and a
    float64 dimension inheriting the coords pipeline; a nullable attribute."""
    label = f"sparse-{which}"
    rng = np.random.default_rng(seed_for(label))
    cap = 3000
    fields, attrs, data = [], [], {}
    coords_filters = None
    if which in ("1d", "1d-coords"):
        n = 10000
        c = np.sort(rng.choice(10**9, n, replace=False)).astype(np.int64)
        dims = [DimDef("d", "int64", (0, 10**9), 10**9)]
        coords = [c]
        if which == "1d-coords":
            coords_filters = (F(DD), F(BWR), F(LZ4))
        cf = coords_filters or DEFAULT_COORDS
        fields.append(FieldCase(f"dim i64 (coords {fs.pipeline_name(cf)})", "d", 1, cf, fixed_tiles(c, cap),
                                is_dim=True, values=c))
        specs = [("a_i32_dd", "int32", (F(DD),)), ("a_f32_none", "float32", ())]
        for i, (name, kind, filters) in enumerate(specs):
            vals = numeric_values(kind, "walk", n, np.random.default_rng(seed_for(label, i)))
            attrs.append(AttrDef(name, kind, filters=filters))
            data[name] = vals
            fields.append(FieldCase(f"attr {kind} {fs.pipeline_name(filters)}", name, NUMPY_TYPES[kind], filters,
                                    fixed_tiles(vals, cap), values=vals))
        a, fc, pydata = _var_field(label, "a_utf8_rle", "utf8", (F(RLE),), n, cap, np.random.default_rng(7),
                                   row_prefix="attr ")
        attrs.append(a)
        fields.append(fc)
        data["a_utf8_rle"] = pydata
    else:
        words = sorted({_word(rng, "abcdefghij", 1, 8) for _ in range(400)})[:150]
        xs = np.round(rng.random(5000) * 1e6, 3)
        pairs = sorted({(words[int(rng.integers(0, len(words)))], float(xs[int(rng.integers(0, len(xs)))]))
                        for _ in range(8000)}, key=lambda p: (p[0].encode(), p[1]))
        n = len(pairs)
        c0 = [p[0].encode() for p in pairs]
        c1 = np.array([p[1] for p in pairs], dtype=np.float64)
        dims = [DimDef("s", "ascii", filters=(F(RLE),)), DimDef("x", "float64", (0.0, 1e6), 1e6)]
        coords = [_obj(c0), c1]
        fields.append(FieldCase("dim ascii rle", "s", 11, (F(RLE),), var_tiles(c0, cap), is_dim=True, var=True,
                                values=c0))
        fields.append(FieldCase("dim f64 (coords zstd)", "x", 3, DEFAULT_COORDS, fixed_tiles(c1, cap), is_dim=True,
                                values=c1))
        r2 = np.random.default_rng(seed_for(label, "v"))
        valid = r2.random(n) < 0.8
        vals = numeric_values("uint16", "walk", n, r2)
        attrs.append(AttrDef("v", "uint16", nullable=True, filters=(F(BYTESHUF), F(ZSTD))))
        data["v"] = vals
        fields.append(FieldCase("attr nullable uint16 byteshuf+zstd", "v", 8, (F(BYTESHUF), F(ZSTD)),
                                fixed_tiles(vals, cap, valid), nullable=True, values=vals, valid=valid))
    return EncArray("sparse", label, dims, attrs, fields, data, sparse=True, capacity=cap, coords=coords,
                    coords_filters=coords_filters, meta=big_meta(label))


# ---------------------------------------------------------------------------
# job lists
# ---------------------------------------------------------------------------

def job_keys(quick: bool) -> list[tuple]:
    """(builder name, args) of every array to write."""
    if quick:
        keys = [("fixed", ("int32", "walk", "small")), ("fixed", ("i32x3", "walk", "small")),
                ("fixed", ("float64", "walk", "small")), ("fixed", ("int8", "walk", "large")),
                ("fixed", ("int64", "random", "small")),
                ("var", ("small", "default")), ("edge", ("big",)), ("edge", ("empty",)),
                ("nullable", ("small", "default")), ("sparse", ("1d",)), ("sparse", ("2d",)),
                ("plain", ("fixed", ("int32", "walk", "small")))]
        return keys
    keys = []
    for dt in FIXED_DTYPES:
        for tiles in TILE_SIZES:
            keys.append(("fixed", (dt, "walk", tiles, True)))
        keys.append(("fixed", (dt, "random", "small" if dt in ("float32", "dt_ns", "uint16") else "large")))
    keys += [("var", ("small", "default")), ("var", ("large", "default")), ("var", ("small", "custom")),
             ("edge", ("big",)), ("edge", ("empty",)),
             ("nullable", ("small", "default")), ("nullable", ("large", "default")), ("nullable", ("small", "custom")),
             ("sparse", ("1d",)), ("sparse", ("2d",)),
             ("sparse", ("1d-coords",)),
             ("plain", ("fixed", ("int32", "walk", "small"))), ("plain", ("fixed", ("uint16", "walk", "large"))),
             ("plain", ("var", ("small", "default"))), ("plain", ("sparse", ("2d",))),
             ("plain", ("nullable", ("small", "default")))]
    return keys


BUILDERS = {"fixed": build_fixed, "var": build_var, "edge": build_edge, "nullable": build_nullable,
            "sparse": build_sparse}


def build(kind: str, args: tuple) -> EncArray:
    """The recipe of one job; kind "plain" is the unencrypted twin of (builder, args)."""
    if kind == "plain":
        inner, iargs = args
        arr = BUILDERS[inner](*iargs)
        arr.encrypted = False
        arr.label += "-plain"
        arr.group = "plain"
        arr.meta = big_meta(arr.label)
        return arr
    return BUILDERS[kind](*args)
