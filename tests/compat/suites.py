"""The extended compat suites: what arrays to write and what each tile must hold.

Suites (matrix rows x columns):

* ``fixed2``   fixed-size attributes, the filters the base matrix lacks (RLE, DOUBLE_DELTA,
               DELTA, BIT_WIDTH_REDUCTION, POSITIVE_DELTA, XOR, SCALE_FLOAT and combinations):
               pipeline x datatype; one dense array per (tile config, shape, datatype);
* ``var``      var-size attributes (ASCII / UTF-8 strings, CHAR, numbers), with the default and
               custom offsets pipelines: pipeline x dataset[/offsets variant];
* ``nullable`` nullable fixed and var attributes with the default and custom validity pipelines:
               pipeline x datatype[/validity variant];
* ``sparse``   coordinates (int, float, datetime and string dimensions; inherited coords pipeline
               or explicit dimension filters) and attributes of sparse arrays: field x dimension type;
* ``webp``     2-D dense UINT8 arrays with WebP: mode x pixel format.

A job is (suite, key); `build(job)` returns (ArraySpec, [FieldExpect]).
"""

from __future__ import annotations

import numpy as np

import arraygen
import arrayspec as asp
import filterspec as fs
from arrayspec import ArraySpec, AttrSpec, DimSpec, FieldExpect, fixed_tiles, var_tiles
from filterspec import F

SUITES = ["fixed2", "var", "nullable", "sparse", "webp"]

# ---------------------------------------------------------------------------
# fixed2
# ---------------------------------------------------------------------------

FIXED2_PIPELINES = [
    ("rle", (F(fs.RLE),)),
    ("dd", (F(fs.DOUBLE_DELTA),)),
    ("dd~i64", (F(fs.DOUBLE_DELTA, reinterpret=1),)),
    ("dd~i32", (F(fs.DOUBLE_DELTA, reinterpret=0),)),
    ("delta", (F(fs.DELTA),)),
    ("delta~i64", (F(fs.DELTA, reinterpret=1),)),
    ("delta~u16", (F(fs.DELTA, reinterpret=8),)),
    ("bwr", (F(fs.BWR),)),
    ("bwr(128)", (F(fs.BWR, window=128),)),
    ("bwr(16)", (F(fs.BWR, window=16),)),
    ("pd", (F(fs.POSITIVE_DELTA),)),
    ("pd(16)", (F(fs.POSITIVE_DELTA, window=16),)),
    ("xor", (F(fs.XOR),)),
    ("scale", (F(fs.SCALE_FLOAT),)),
    ("scale(0.5,10,2)", (F(fs.SCALE_FLOAT, factor=0.5, offset=10.0, bytewidth=2),)),
    ("scale(0.01,-3,4)", (F(fs.SCALE_FLOAT, factor=0.01, offset=-3.0, bytewidth=4),)),
    ("scale(2,1,1)", (F(fs.SCALE_FLOAT, factor=2.0, offset=1.0, bytewidth=1),)),
    ("scale(1e-3,0,8)", (F(fs.SCALE_FLOAT, factor=1e-3, offset=0.0, bytewidth=8),)),
    ("pd+bwr+zstd", (F(fs.POSITIVE_DELTA), F(fs.BWR), F(fs.ZSTD))),
    ("dd+gzip", (F(fs.DOUBLE_DELTA), F(fs.GZIP))),
    ("scale+xor+zstd", (F(fs.SCALE_FLOAT, factor=0.01, offset=0.0, bytewidth=4), F(fs.XOR), F(fs.ZSTD))),
    ("delta+byteshuf+zstd", (F(fs.DELTA), F(fs.BYTESHUFFLE), F(fs.ZSTD))),
    ("bitshuf+lz4", (F(fs.BITSHUFFLE), F(fs.LZ4))),
    ("md5+zstd+sha256", (F(fs.MD5), F(fs.ZSTD), F(fs.SHA256))),
    ("sha256+rle+md5", (F(fs.SHA256), F(fs.RLE), F(fs.MD5))),
    ("md5+dd+sha256", (F(fs.MD5), F(fs.DOUBLE_DELTA), F(fs.SHA256))),
    ("rle+zstd", (F(fs.RLE), F(fs.ZSTD))),
    ("xor+bzip2", (F(fs.XOR), F(fs.BZIP2))),
    ("bwr+bitshuf+lz4", (F(fs.BWR), F(fs.BITSHUFFLE), F(fs.LZ4))),
]

FIXED2_DTYPES = arraygen.DATATYPES + [
    arraygen.DatatypeCase("bool", "bool", 41, 1),
    arraygen.DatatypeCase("dt_day", "datetime64[D]", 21, 1),
]

FIXED2_FULL = [("small", s) for s in arraygen.SHAPES] + [("large", "random"), ("large", "sorted"),
                                                          ("odd", "runs")]
FIXED2_QUICK = [("small", "random"), ("small", "sorted")]


def fixed2_values(dt, shape: str, count: int, seed: int) -> np.ndarray:
    if dt.numpy == "bool":
        rng = np.random.default_rng(seed)
        if shape == "constant":
            return np.ones(count, dtype=bool)
        v = rng.integers(0, 2, count).astype(bool)
        if shape == "sorted":
            v = np.sort(v)
        elif shape == "runs":
            v = np.repeat(rng.integers(0, 2, count // 40 + 1), 40)[:count].astype(bool)
        return v
    if dt.numpy == "datetime64[D]":
        rng = np.random.default_rng(seed)
        if shape == "constant":
            return np.full(count, 19000, dtype=np.int64).view("M8[D]")
        if shape == "runs":
            v = np.repeat(rng.integers(15000, 21000, count // 50 + 1), 50)[:count]
        else:
            v = rng.integers(15000, 21000, count)
            if shape == "sorted":
                v = np.sort(v)
        return v.astype(np.int64).view("M8[D]")
    return arraygen.values(dt, shape, count, seed)


def fixed2_jobs(quick: bool):
    combos = FIXED2_QUICK if quick else FIXED2_FULL
    size = {t.name: t.extent * t.tiles for t in arraygen.TILE_CONFIGS}
    jobs = [("fixed2", (tc, shape, dt.name)) for tc, shape in combos for dt in FIXED2_DTYPES]
    cell = {d.name: d.cell_size for d in FIXED2_DTYPES}
    return sorted(jobs, key=lambda j: -size[j[1][0]] * cell[j[1][2]])


def build_fixed2(key):
    tcn, shape, dtn = key
    dt = next(d for d in FIXED2_DTYPES if d.name == dtn)
    tc = next(t for t in arraygen.TILE_CONFIGS if t.name == tcn)
    n = tc.extent * tc.tiles
    dims = [DimSpec("d", "uint64", (0, n - 1), tc.extent)]
    attrs, data, fields = [], {}, []
    for i, (row, filters) in enumerate(FIXED2_PIPELINES):
        if fs.accepts(filters, dt.tiledb_type):
            continue
        vals = fixed2_values(dt, shape, n * dt.cell_val_num, arraygen.seed_for("fixed2", dtn, shape, tcn, i))
        cells = vals.view(dt.attr_dtype()) if dt.cell_val_num > 1 else vals
        name = f"p{i:02d}"
        lossy = any(f.type == fs.SCALE_FLOAT for f in filters)
        fx = FieldExpect(row, dtn, name, dt.tiledb_type, fixed_tiles(cells, tc.extent), filters,
                         cell_val_num=dt.cell_val_num, shape=shape, tiles_label=tcn, lossy=lossy,
                         tiling=_fixed_tiling(tc.extent))
        if asp.decreasing_for_pd(fx, filters):
            continue  # POSITIVE_DELTA needs non-decreasing data: not applicable to this shape
        fx.unwritable = asp.dd_defect(fx, filters)
        attrs.append(AttrSpec(name, dt.numpy if dt.cell_val_num == 1 else _struct_dtype(dt), filters=filters))
        data[name] = cells
        fields.append(fx)
    spec = ArraySpec("fixed2", f"fixed2-{dtn}-{shape}-{tcn}", dims, attrs, data=data)
    return spec, fields


def _struct_dtype(dt):
    return ",".join([dt.numpy] * dt.cell_val_num)


def _fixed_tiling(per_tile):
    def tiling(values):
        return fixed_tiles(np.ascontiguousarray(values), per_tile)
    return tiling


# ---------------------------------------------------------------------------
# var
# ---------------------------------------------------------------------------

STRING_PIPELINES = [
    ("none", ()),
    ("zstd", (F(fs.ZSTD),)),
    ("lz4", (F(fs.LZ4),)),
    ("gzip", (F(fs.GZIP),)),
    ("rle", (F(fs.RLE),)),
    ("dict", (F(fs.DICTIONARY),)),
    ("rle+zstd", (F(fs.RLE), F(fs.ZSTD))),
    ("dict+lz4", (F(fs.DICTIONARY), F(fs.LZ4))),
    ("dict+md5+bzip2", (F(fs.DICTIONARY), F(fs.MD5), F(fs.BZIP2))),
    ("md5+zstd", (F(fs.MD5), F(fs.ZSTD))),
]
NUMBER_PIPELINES = [
    ("none", ()),
    ("zstd", (F(fs.ZSTD),)),
    ("dd", (F(fs.DOUBLE_DELTA),)),
    ("dd~i64", (F(fs.DOUBLE_DELTA, reinterpret=1),)),
    ("delta", (F(fs.DELTA),)),
    ("delta~i64", (F(fs.DELTA, reinterpret=1),)),
    ("bwr", (F(fs.BWR),)),
    ("pd", (F(fs.POSITIVE_DELTA),)),
    ("dd+gzip", (F(fs.DOUBLE_DELTA), F(fs.GZIP))),
    ("xor+zstd", (F(fs.XOR), F(fs.ZSTD))),
    ("byteshuf+zstd", (F(fs.BYTESHUFFLE), F(fs.ZSTD))),
    ("rle", (F(fs.RLE),)),
]
OFFSETS_VARIANTS = {"o1": (F(fs.POSITIVE_DELTA), F(fs.BWR), F(fs.LZ4)), "o2": (F(fs.DOUBLE_DELTA), F(fs.ZSTD))}
VALIDITY_VARIANTS = {"v1": (F(fs.BITSHUFFLE), F(fs.ZSTD)), "v2": (F(fs.MD5), F(fs.RLE), F(fs.GZIP, level=9))}
LEGEND = {"var": "o1 = offsets [pd, bwr, lz4], o2 = offsets [dd, zstd]; default offsets [zstd]",
          "nullable": "v1 = validity [bitshuf, zstd], v2 = validity [md5, rle, gzip(9)]; default validity [rle]"}

VAR_DATASETS = {
    # name: (attribute dtype, TileDB datatype, cells per tile, tiles)
    "ascii-words": ("ascii", 11, 2000, 3),
    "utf8-words": ("utf8", 12, 2000, 3),
    "ascii-empty": ("ascii", 11, 1000, 3),
    "ascii-long": ("ascii", 11, 40, 2),
    "ascii-big": ("ascii", 11, 2, 2),
    "ascii-dict300": ("ascii", 11, 1000, 1),
    "ascii-70k": ("ascii", 11, 70000, 1),
    "utf8-longrun": ("utf8", 12, 70000, 1),
    "ascii-lastlong": ("ascii", 11, 500, 2),
    "char-bytes": ("bytes", 4, 1000, 2),
    "i32-var": ("int32", 0, 1000, 3),
    "i64-var": ("int64", 1, 1500, 2),
    "f64-var": ("float64", 3, 1000, 2),
    "i64-big": ("int64", 1, 2, 2),
    "i32-allempty": ("int32", 0, 500, 2),
}
VAR_FULL = list(VAR_DATASETS) + ["ascii-words/o1", "ascii-words/o2", "i32-var/o1", "i32-var/o2",
                                 "ascii-long/o1", "ascii-empty/o1", "utf8-words/o2"]
VAR_QUICK = ["ascii-words", "utf8-words", "ascii-empty", "ascii-big", "ascii-dict300", "ascii-lastlong",
             "i32-var", "f64-var", "i64-big", "ascii-words/o1", "i32-var/o2"]
# TileDB 2.30 crashes (SIGSEGV) writing an array with 4 or more STRING_ASCII var attributes when a
# tile holds only empty strings, whatever their filters: such datasets get one array per pipeline,
# each written in a child process.
SPLIT_DATASETS = {"ascii-empty", "ascii"}  # var "ascii-empty"; nullable "ascii" (all-null tile)

_ALPHA = "abcdefghijklmnopqrstuvwxyz"
_UTF8 = "aé中ü😀ßøΩж€"


def _word(rng, alphabet, lo=1, hi=12):
    return "".join(rng.choice(list(alphabet), int(rng.integers(lo, hi + 1))))


def var_cells(name: str, seed: int):
    """(values to write, cell bytes) for a var dataset."""
    dtype, _t, per, ntiles = VAR_DATASETS[name]
    n = per * ntiles
    rng = np.random.default_rng(seed)
    if name in ("ascii-words", "utf8-words"):
        vocab = [_word(rng, _ALPHA if name.startswith("ascii") else _UTF8) for _ in range(300)]
        vals = []
        while len(vals) < n:
            vals += [vocab[int(rng.integers(0, 300))]] * int(rng.geometric(0.3))
        vals = vals[:n]
    elif name == "ascii-empty":
        vocab = [_word(rng, _ALPHA) for _ in range(50)]
        t0 = [vocab[int(rng.integers(0, 50))] if rng.random() < 0.5 else "" for _ in range(per)]
        t2 = [vocab[int(rng.integers(0, 50))] for _ in range(per)]
        vals = t0 + [""] * per + t2
    elif name == "ascii-long":
        base = "".join(rng.choice(list(_ALPHA), 4000))
        vals = []
        for _ in range(n):
            k = int(rng.integers(0, 12000))
            vals.append((base * 4)[int(rng.integers(0, 4000)):][:k] + _word(rng, _ALPHA, 0, 30))
    elif name == "ascii-big":
        vals = ["".join(rng.choice(list(_ALPHA), 40000)) for _ in range(n)]
    elif name == "ascii-dict300":
        vocab = [_word(rng, _ALPHA, 1, 20) + str(i) for i in range(300)]
        vals = [vocab[i] for i in range(300)] + [vocab[int(rng.integers(0, 300))] for _ in range(n - 300)]
    elif name == "ascii-70k":
        vals = [f"k{int(i):06d}" for i in rng.permutation(n)]
    elif name == "utf8-longrun":
        vals = ["é"] * 3 + ["中文"] * 66000 + [_word(rng, _UTF8) for _ in range(n - 66003)]
    elif name == "ascii-lastlong":
        t0 = [_word(rng, _ALPHA, 1, 8) for _ in range(per - 3)] + ["x" * 300] * 3
        t1 = [_word(rng, _ALPHA, 1, 8) for _ in range(per)]
        vals = t0 + t1
    elif name == "char-bytes":
        vals = [rng.integers(0, 256, int(rng.integers(0, 20)), dtype=np.uint8).tobytes() for _ in range(n)]
    else:
        np_t = np.dtype(dtype)
        if name == "i32-var":
            lens = rng.integers(0, 17, n)
            flat = np.sort(rng.integers(-10**6, 10**6, int(lens.sum()))).astype(np_t)
        elif name == "i64-var":
            lens = rng.integers(1, 31, n)
            flat = np.cumsum(rng.integers(-1000, 1000, int(lens.sum()))).astype(np_t) + 10**12
        elif name == "f64-var":
            lens = rng.integers(0, 21, n)
            flat = (rng.standard_normal(int(lens.sum())) * 100).astype(np_t)
        elif name == "i64-big":
            lens = np.full(n, 5000)
            flat = np.sort(rng.integers(0, 10**15, int(lens.sum()))).astype(np_t)
        elif name == "i32-allempty":
            lens = np.concatenate([rng.integers(0, 9, per), np.zeros(per, dtype=int)])
            flat = np.sort(rng.integers(0, 10**6, int(lens.sum()))).astype(np_t)
        else:
            raise ValueError(name)
        vals, pos = [], 0
        for k in lens:
            vals.append(flat[pos:pos + k])
            pos += k
    obj = np.empty(n, dtype=object)
    for j, v in enumerate(vals):
        obj[j] = v
    cells = [asp.cell_bytes(v, dtype if dtype not in ("ascii", "utf8", "bytes") else "uint8") for v in vals]
    return obj, cells


def _var_tiling(per_tile, dtype, nullable=False):
    def tiling(values):
        validity = None
        if nullable:
            validity = (~np.ma.getmaskarray(values)).astype(np.uint8)
            values = np.ma.getdata(values)
        cells = [asp.cell_bytes(v, dtype) for v in values]
        return var_tiles(cells, per_tile, validity)
    return tiling


def _pipelines_for(datatype):
    if datatype in (11, 12):
        return STRING_PIPELINES
    if datatype == 4:
        return [(r, f) for r, f in STRING_PIPELINES if r in ("none", "zstd", "rle", "dict", "rle+zstd")]
    return NUMBER_PIPELINES


def var_jobs(quick: bool):
    out = []
    for k in (VAR_QUICK if quick else VAR_FULL):
        ds = k.split("/")[0]
        if ds in SPLIT_DATASETS:
            out += [("var", f"{k}#{row}") for row, f in _pipelines_for(VAR_DATASETS[ds][1])]
        else:
            out.append(("var", k))
    return out


def build_var(key):
    key, _, only = key.partition("#")
    dsname, _, variant = key.partition("/")
    dtype, datatype, per, ntiles = VAR_DATASETS[dsname]
    n = per * ntiles
    cell_dt = dtype if dtype not in ("ascii", "utf8", "bytes") else "uint8"
    dims = [DimSpec("d", "uint64", (0, n - 1), per)]
    attrs, data, fields = [], {}, []
    obj, cells = var_cells(dsname, arraygen.seed_for("var", dsname))
    tiles = var_tiles(cells, per)
    isolate = bool(only)
    for i, (row, filters) in enumerate(_pipelines_for(datatype)):
        if fs.accepts(filters, datatype, is_var=True) or (only and row != only):
            continue
        name = f"v{i:02d}"
        fx = FieldExpect(row, key, name, datatype, tiles, filters, var=True, shape=dsname,
                         tiles_label=f"{per}x{ntiles}", tiling=_var_tiling(per, cell_dt))
        if asp.decreasing_for_pd(fx, filters):
            continue
        isolate |= asp.predict_defects(fx, filters)
        attrs.append(AttrSpec(name, dtype, var=True, filters=filters))
        data[name] = obj
        fields.append(fx)
    spec = ArraySpec("var", "var-" + key.replace("/", "-") + (f"-{only}" if only else ""), dims, attrs, data=data,
                     offsets_filters=OFFSETS_VARIANTS.get(variant), isolate=isolate)
    return spec, fields


# ---------------------------------------------------------------------------
# nullable
# ---------------------------------------------------------------------------

NULLABLE_PIPELINES = [
    ("none", ()),
    ("zstd", (F(fs.ZSTD),)),
    ("rle", (F(fs.RLE),)),
    ("dict", (F(fs.DICTIONARY),)),
    ("dd", (F(fs.DOUBLE_DELTA),)),
    ("bwr", (F(fs.BWR),)),
    ("xor+lz4", (F(fs.XOR), F(fs.LZ4))),
    ("rle+zstd", (F(fs.RLE), F(fs.ZSTD))),
]
NULLABLE_DATASETS = {
    # name: (attr dtype, datatype, var, cells per tile, tiles)
    "i32": ("int32", 0, False, 1000, 3),
    "f64": ("float64", 3, False, 1000, 3),
    "u8": ("uint8", 6, False, 1000, 3),
    "i64-70k": ("int64", 1, False, 70001, 1),
    "utf8": ("utf8", 12, True, 1000, 3),
    "ascii": ("ascii", 11, True, 1000, 3),
    "i32-var": ("int32", 0, True, 1000, 2),
}
NULLABLE_FULL = [d + v for d in NULLABLE_DATASETS for v in ("", "/v1", "/v2")]
NULLABLE_QUICK = ["i32", "utf8/v1", "u8/v2", "i64-70k"]


def nullable_jobs(quick: bool):
    out = []
    for k in (NULLABLE_QUICK if quick else NULLABLE_FULL):
        ds = k.split("/")[0]
        if ds in SPLIT_DATASETS:
            out += [("nullable", f"{k}#{row}") for row, f in NULLABLE_PIPELINES
                    if _nullable_applies(row, f, NULLABLE_DATASETS[ds])]
        else:
            out.append(("nullable", k))
    return out


def _nullable_applies(row, filters, ds) -> bool:
    _dtype, datatype, var, _per, _n = ds
    if fs.accepts(filters, datatype, is_var=var):
        return False
    return row != "dict" or (var and datatype in (11, 12))


def _null_mask(rng, per, ntiles):
    """Tile 0: ~30% nulls, tile 1: no nulls, tile 2: all null; a single tile: runs of nulls."""
    if ntiles == 1:
        return np.repeat(rng.random(per // 37 + 1) < 0.4, 37)[:per]
    parts = [rng.random(per) < 0.3, np.zeros(per, bool), np.ones(per, bool)]
    return np.concatenate(parts[:ntiles])


def build_nullable(key):
    key, _, only = key.partition("#")
    dsname, _, variant = key.partition("/")
    dtype, datatype, var, per, ntiles = NULLABLE_DATASETS[dsname]
    n = per * ntiles
    rng = np.random.default_rng(arraygen.seed_for("nullable", dsname))
    dims = [DimSpec("d", "uint64", (0, n - 1), per)]
    mask = _null_mask(rng, per, ntiles)
    attrs, data, fields = [], {}, []
    isolate = bool(only)
    for i, (row, filters) in enumerate(NULLABLE_PIPELINES):
        if not _nullable_applies(row, filters, NULLABLE_DATASETS[dsname]):
            continue
        if only and row != only:
            continue
        name = f"n{i:02d}"
        notes = []
        if var and datatype in (11, 12):
            vocab = [_word(rng, _ALPHA if datatype == 11 else _UTF8) for _ in range(40)]
            vals = [vocab[int(rng.integers(0, 40))] for _ in range(n)]
            obj = np.empty(n, dtype=object)
            for j, (v, m) in enumerate(zip(vals, mask)):
                obj[j] = None if m else v
            validity = (~mask).astype(np.uint8)
            # TileDB-Py stores a null as "" for UTF8 but as the text "None" for ASCII attributes.
            null = b"None" if datatype == 11 else b""
            cells = [null if m else v.encode() for v, m in zip(vals, mask)]
            if datatype == 11:
                notes.append("TileDB-Py 0.36.1 stores null ASCII cells as the 4 bytes 'None'")
            tiles = var_tiles(cells, per, validity)
            write = obj
            tiling = _var_tiling(per, "uint8", nullable=True)
        elif var:
            lens = rng.integers(0, 9, n)
            flat = np.sort(rng.integers(0, 10**6, int(lens.sum()))).astype(np.int32)
            obj, pos = np.empty(n, dtype=object), 0
            for j, k in enumerate(lens):
                obj[j] = flat[pos:pos + k]
                pos += k
            # TileDB-Py 0.36.1 ignores masks of var-size numeric attributes: every cell is valid.
            validity = np.ones(n, np.uint8)
            notes.append("TileDB-Py cannot write nulls into var-size numeric attributes (mask ignored); "
                         "all cells valid")
            tiles = var_tiles([asp.cell_bytes(v, dtype) for v in obj], per, validity)
            write = obj
            tiling = _var_tiling(per, dtype, nullable=True)
        else:
            v = rng.integers(0, 1000, n) if dtype != "float64" else rng.standard_normal(n) * 10
            if row == "dd":
                v = np.cumsum(v)
            v = v.astype(dtype)
            validity = (~mask).astype(np.uint8)
            write = np.ma.masked_array(v, mask=mask)
            tiles = fixed_tiles(v, per, validity)
            tiling = _nullable_fixed_tiling(per)
        fx = FieldExpect(row, key, name, datatype, tiles, filters, var=var, nullable=True, shape=dsname,
                         tiles_label=f"{per}x{ntiles}", tiling=tiling, notes=notes)
        if var:
            isolate |= asp.predict_defects(fx, filters)
        attrs.append(AttrSpec(name, dtype, var=var, nullable=True, filters=filters))
        data[name] = write
        fields.append(fx)
    spec = ArraySpec("nullable", "nullable-" + key.replace("/", "-") + (f"-{only}" if only else ""), dims, attrs,
                     data=data, validity_filters=VALIDITY_VARIANTS.get(variant), isolate=isolate)
    return spec, fields


def _nullable_fixed_tiling(per):
    def tiling(values):
        mask = np.ma.getmaskarray(values)
        return fixed_tiles(np.ascontiguousarray(np.ma.getdata(values)), per, (~mask).astype(np.uint8))
    return tiling


# ---------------------------------------------------------------------------
# sparse
# ---------------------------------------------------------------------------

SPARSE_DIM_PIPELINES = {
    # dim type -> [(row, filters or None = empty dimension pipeline, coords pipeline or None)]
    "i64": [("dd+zstd", (F(fs.DOUBLE_DELTA), F(fs.ZSTD))), ("pd+bwr", (F(fs.POSITIVE_DELTA), F(fs.BWR))),
            ("delta", (F(fs.DELTA),))],
    "f64": [("xor+lz4", (F(fs.XOR), F(fs.LZ4))), ("byteshuf+zstd", (F(fs.BYTESHUFFLE), F(fs.ZSTD))),
            ("dd~i64", (F(fs.DOUBLE_DELTA, reinterpret=1),))],
    "dt_ns": [("dd", (F(fs.DOUBLE_DELTA),)), ("delta+zstd", (F(fs.DELTA), F(fs.ZSTD))), ("bwr", (F(fs.BWR),))],
    "ascii": [("rle", (F(fs.RLE),)), ("dict", (F(fs.DICTIONARY),)), ("zstd", (F(fs.ZSTD),)),
              ("rle+zstd", (F(fs.RLE), F(fs.ZSTD)))],
}
INHERIT_ROWS = [("coords=zstd (inherited)", None), ("coords=bzip2 (inherited)", (F(fs.BZIP2),))]
SPARSE_ATTRS = [("attr i32 delta", "int32", False, (F(fs.DELTA),)),
                ("attr utf8 dict+lz4", "utf8", True, (F(fs.DICTIONARY), F(fs.LZ4))),
                ("attr f32 zstd", "float32", False, (F(fs.ZSTD),))]
SPARSE_CELLS, SPARSE_CAPACITY = 10000, 3000


def sparse_jobs(quick: bool):
    keys = []
    for dt, rows in SPARSE_DIM_PIPELINES.items():
        keys += [f"{dt}|inherit0", f"{dt}|inherit1"] + [f"{dt}|{i}" for i in range(len(rows))]
    keys.append("2d|inherit0")
    keys.append("2d|0")
    if quick:
        keys = ["i64|inherit0", "ascii|inherit0", "ascii|0", "ascii|1", "f64|0", "dt_ns|1", "2d|inherit0"]
    return [("sparse", k) for k in keys]


def _sparse_coords(dt, rng, n):
    if dt == "i64":
        return np.sort(rng.choice(10**9, n, replace=False)).astype(np.int64), "int64", 1
    if dt == "f64":
        return np.sort(np.unique(rng.random(n * 2) * 1e6)[:n]), "float64", 3
    if dt == "dt_ns":
        v = np.sort(rng.choice(10**12, n, replace=False)).astype(np.int64) + 1_600_000_000 * 10**9
        return v.view("M8[ns]"), "datetime64[ns]", 27
    words = set()
    while len(words) < n:
        words.add(_word(rng, _ALPHA, 1, 10))
    return np.array(sorted(words, key=lambda w: w.encode()), dtype=object), "ascii", 11


def _dimspec(name, dt, dtype, coords, filters):
    if dtype == "ascii":
        return DimSpec(name, "ascii", filters=filters)
    if dt == "f64":
        return DimSpec(name, dtype, (0.0, 1e6), 1e6, filters)
    if dt == "dt_ns":
        return DimSpec(name, dtype, (np.datetime64(0, "ns"), np.datetime64(2 * 10**18, "ns")),
                       np.timedelta64(2 * 10**18, "ns"), filters)
    return DimSpec(name, dtype, (0, 10**9), 10**9, filters)


def build_sparse(key):
    dt, _, which = key.partition("|")
    rng = np.random.default_rng(arraygen.seed_for("sparse", key))
    n, cap = SPARSE_CELLS, SPARSE_CAPACITY
    coords_filters = None
    if which.startswith("inherit"):
        row, coords_filters = INHERIT_ROWS[int(which[-1])]
        dim_filters = None
    else:
        row, dim_filters = SPARSE_DIM_PIPELINES["f64" if dt == "2d" else dt][int(which)]
    fields = []
    if dt == "2d":
        words, _, _ = _sparse_coords("ascii", rng, 200)
        xs = np.sort(np.unique(rng.random(n) * 1e6))
        pairs = sorted({(words[int(rng.integers(0, 200))], float(xs[int(rng.integers(0, len(xs)))]))
                        for _ in range(n)}, key=lambda p: (p[0].encode(), p[1]))
        n = len(pairs)
        c0 = np.array([p[0] for p in pairs], dtype=object)
        c1 = np.array([p[1] for p in pairs], dtype=np.float64)
        dims = [_dimspec("s", "ascii", "ascii", c0, None if dim_filters is None else ()),
                _dimspec("x", "f64", "float64", c1, dim_filters)]
        coords = [c0, c1]
        dcells = [[w.encode() for w in c0], c1]
        dtypes = [(11, True, "s", "2d:ascii", "uint8"), (3, False, "x", "2d:f64", "float64")]
    else:
        c, dtype, datatype = _sparse_coords(dt, rng, n)
        dims = [_dimspec("d", dt, dtype, c, dim_filters)]
        coords = [c]
        dcells = [[w.encode() for w in c] if dtype == "ascii" else c]
        dtypes = [(datatype, dtype == "ascii", "d", dt, "uint8" if dtype == "ascii" else dtype)]
    for (datatype, var, name, col, cdt), cells, dspec in zip(dtypes, dcells, dims):
        filt = dspec.filters or ()
        r = row if (dspec.filters is not None and dspec.filters) or which.startswith("inherit") else \
            INHERIT_ROWS[0][0]
        tiles = var_tiles(cells, cap) if var else fixed_tiles(np.ascontiguousarray(cells), cap)
        fx = FieldExpect("dim: " + r, col, name, datatype, tiles, filt, is_dim=True, var=var, shape="sorted",
                         tiles_label=f"cap {cap}", tiling=_var_tiling(cap, cdt) if var else _fixed_tiling(cap))
        fields.append(fx)
    attrs, data = [], {}
    if which == "inherit0":
        for i, (arow, adt, avar, filters) in enumerate(SPARSE_ATTRS):
            name = f"a{i}"
            if avar:
                vocab = [_word(rng, _UTF8) for _ in range(64)]
                vals = [vocab[int(rng.integers(0, 64))] for _ in range(n)]
                obj = np.empty(n, dtype=object)
                for j, v in enumerate(vals):
                    obj[j] = v
                tiles = var_tiles([v.encode() for v in vals], cap)
                data[name] = obj
                tiling = _var_tiling(cap, "uint8")
            else:
                v = (np.cumsum(rng.integers(-50, 50, n)) if adt == "int32" else rng.standard_normal(n)).astype(adt)
                data[name] = v
                tiles = fixed_tiles(v, cap)
                tiling = _fixed_tiling(cap)
            attrs.append(AttrSpec(name, adt, var=avar, filters=filters))
            fields.append(FieldExpect(arow, "2d:ascii" if dt == "2d" else dt, name,
                                      {"int32": 0, "utf8": 12, "float32": 2}[adt], tiles, filters, var=avar,
                                      shape="sorted", tiles_label=f"cap {cap}", tiling=tiling))
    spec = ArraySpec("sparse", "sparse-" + key.replace("|", "-"), dims, attrs, sparse=True, capacity=cap,
                     coords_filters=coords_filters, data=data, coords=coords)
    for fx in fields:
        if fx.is_dim:
            eff = fx.filters or coords_filters or (F(fs.ZSTD),)
            if asp.decreasing_for_pd(fx, eff):
                raise ValueError(f"sparse {key}: coordinates not sorted")
    return spec, fields


# ---------------------------------------------------------------------------
# webp
# ---------------------------------------------------------------------------

WEBP_MODES = [("lossless", dict(lossless=True)), ("q=75", dict(quality=75.0, lossless=False)),
              ("q=10", dict(quality=10.0, lossless=False))]
WEBP_FORMATS = {"rgb": (fs.WEBP_RGB, 48, 64), "bgr": (fs.WEBP_BGR, 48, 64), "rgba": (fs.WEBP_RGBA, 48, 64),
                "bgra": (fs.WEBP_BGRA, 48, 64), "rgb-odd": (fs.WEBP_RGB, 31, 17)}


def webp_jobs(quick: bool):
    keys = [f"{f}|{m}" for f in WEBP_FORMATS for m, _ in WEBP_MODES]
    if quick:
        keys = ["rgb|lossless", "rgba|lossless", "bgr|q=75", "bgra|q=10"]
    return [("webp", k) for k in keys]


def webp_image(rows, cols_px, depth, rng):
    y, x = np.mgrid[0:rows, 0:cols_px]
    ch = [(x * 255 // max(cols_px - 1, 1)), (y * 255 // max(rows - 1, 1)), ((x + y) % 32) * 8,
          128 + (x * y) % 127]
    img = np.stack(ch[:depth], axis=-1).astype(np.int32)
    img += rng.integers(-12, 13, img.shape)
    img[rows // 3: rows // 2, cols_px // 4: cols_px // 2, :3] = rng.integers(0, 256, 3)
    return np.clip(img, 0, 255).astype(np.uint8).reshape(rows, cols_px * depth)


def build_webp(key):
    fname, _, mode = key.partition("|")
    fmt, h, w = WEBP_FORMATS[fname]
    depth = 3 if fmt in (fs.WEBP_RGB, fs.WEBP_BGR) else 4
    opts = dict(WEBP_MODES)[mode]
    filt = (F(fs.WEBP, fmt=fmt, **opts),)
    ty, tx = 2, 2
    rng = np.random.default_rng(arraygen.seed_for("webp", key))
    img = webp_image(ty * h, tx * w, depth, rng)
    xb = w * depth
    dims = [DimSpec("y", "uint32", (0, ty * h - 1), h), DimSpec("x", "uint32", (0, tx * xb - 1), xb)]

    def tiling(a):
        a = np.asarray(a)
        return [asp.TileExpect(np.ascontiguousarray(a[i * h:(i + 1) * h, j * xb:(j + 1) * xb]).tobytes())
                for i in range(ty) for j in range(tx)]

    fx = FieldExpect("webp " + mode, fname, "p", 6, tiling(img), filt, shape=f"{h}x{w}px", tiles_label="2x2",
                     lossy=not opts["lossless"], tiling=tiling, webp_extents=(h, xb))
    spec = ArraySpec("webp", "webp-" + key.replace("|", "-").replace("=", ""), dims,
                     [AttrSpec("p", "uint8", filters=filt)], data={"p": img})
    return spec, [fx]


# ---------------------------------------------------------------------------

BUILDERS = {"fixed2": build_fixed2, "var": build_var, "nullable": build_nullable, "sparse": build_sparse,
            "webp": build_webp}
JOBS = {"fixed2": fixed2_jobs, "var": var_jobs, "nullable": nullable_jobs, "sparse": sparse_jobs,
        "webp": webp_jobs}


def jobs(suites, quick: bool):
    out = []
    for s in suites:
        out += JOBS[s](quick)
    return out


def build(job):
    suite, key = job
    return BUILDERS[suite](key)


def rows_and_cols(suite: str):
    """Matrix row and column order of a suite (full run)."""
    if suite == "fixed2":
        return [r for r, _ in FIXED2_PIPELINES], [d.name for d in FIXED2_DTYPES]
    if suite == "var":
        rows = [r for r, _ in STRING_PIPELINES] + [r for r, _ in NUMBER_PIPELINES if r not in
                                                   dict(STRING_PIPELINES)]
        return rows, VAR_FULL
    if suite == "nullable":
        return [r for r, _ in NULLABLE_PIPELINES], NULLABLE_FULL
    if suite == "sparse":
        rows = ["dim: " + r for r, _ in INHERIT_ROWS]
        for v in SPARSE_DIM_PIPELINES.values():
            rows += ["dim: " + r for r, _ in v if "dim: " + r not in rows]
        rows += [r for r, *_ in SPARSE_ATTRS]
        return rows, list(SPARSE_DIM_PIPELINES) + ["2d:ascii", "2d:f64"]
    if suite == "webp":
        return ["webp " + m for m, _ in WEBP_MODES], list(WEBP_FORMATS)
    raise ValueError(suite)
