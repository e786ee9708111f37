"""Test matrix definition and TileDB-Py array generation.

One dense 1-D array is written per (datatype, shape, tile config). It holds
one attribute per pipeline, attribute i named ``p<i>`` and stored by TileDB
in ``__fragments/<frag>/a<i>.tdb``. The domain is an exact multiple of the
tile extent, so no tile carries fill values.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass

import numpy as np

# Filter type ids (TileDB numbering, docs/FORMAT.md §1.2).
GZIP, ZSTD, LZ4, BZIP2, BITSHUFFLE, BYTESHUFFLE, MD5, SHA256 = 1, 2, 3, 5, 8, 9, 12, 13

FILTER_NAMES = {GZIP: "gzip", ZSTD: "zstd", LZ4: "lz4", BZIP2: "bzip2", BITSHUFFLE: "bitshuffle",
                BYTESHUFFLE: "byteshuffle", MD5: "checksum_md5", SHA256: "checksum_sha256"}


@dataclass(frozen=True)
class PipelineCase:
    name: str
    filters: tuple  # ((filter_type, level or None), ...)

    @property
    def has_lz4(self) -> bool:
        return any(t == LZ4 for t, _ in self.filters)

    def tiledb_filters(self):
        import tiledb
        out = []
        for t, level in self.filters:
            if t == GZIP:
                out.append(tiledb.GzipFilter(level=level))
            elif t == ZSTD:
                out.append(tiledb.ZstdFilter(level=level))
            elif t == LZ4:
                out.append(tiledb.LZ4Filter(level=level))
            elif t == BZIP2:
                out.append(tiledb.Bzip2Filter(level=level))
            elif t == BITSHUFFLE:
                out.append(tiledb.BitShuffleFilter())
            elif t == BYTESHUFFLE:
                out.append(tiledb.ByteShuffleFilter())
            elif t == MD5:
                out.append(tiledb.ChecksumMD5Filter())
            elif t == SHA256:
                out.append(tiledb.ChecksumSHA256Filter())
            else:
                raise ValueError(f"no TileDB-Py filter for type {t}")
        return tiledb.FilterList(out)


def _p(name, *filters):
    return PipelineCase(name, tuple(filters))


PIPELINES = [
    _p("none"),
    _p("byteshuffle", (BYTESHUFFLE, None)),
    _p("bitshuffle", (BITSHUFFLE, None)),
    _p("checksum_md5", (MD5, None)),
    _p("checksum_sha256", (SHA256, None)),
    *[_p(f"gzip({lv})", (GZIP, lv)) for lv in (-1, 0, 1, 9)],
    *[_p(f"zstd({lv})", (ZSTD, lv)) for lv in (-1, -7, -8, 0, 3, 19)],
    _p("lz4", (LZ4, -1)),
    *[_p(f"bzip2({lv})", (BZIP2, lv)) for lv in (-1, 1, 9)],
    _p("byteshuffle+zstd", (BYTESHUFFLE, None), (ZSTD, -1)),
    _p("bitshuffle+lz4", (BITSHUFFLE, None), (LZ4, -1)),
    _p("bitshuffle+zstd", (BITSHUFFLE, None), (ZSTD, -1)),
    _p("md5+gzip", (MD5, None), (GZIP, -1)),
    _p("byteshuf+bitshuf+sha256+zstd", (BYTESHUFFLE, None), (BITSHUFFLE, None), (SHA256, None),
       (ZSTD, -1)),
    _p("sha256+lz4+md5", (SHA256, None), (LZ4, -1), (MD5, None)),
]


@dataclass(frozen=True)
class DatatypeCase:
    name: str          # matrix column label
    numpy: str         # numpy base dtype of one value
    tiledb_type: int   # TileDB Datatype number
    cell_val_num: int

    @property
    def value_size(self) -> int:
        return np.dtype(self.numpy).itemsize

    @property
    def cell_size(self) -> int:
        return self.value_size * self.cell_val_num

    def attr_dtype(self) -> np.dtype:
        if self.cell_val_num == 1:
            return np.dtype(self.numpy)
        return np.dtype([(f"f{i}", self.numpy) for i in range(self.cell_val_num)])


DATATYPES = [
    DatatypeCase("int8", "int8", 5, 1),
    DatatypeCase("uint8", "uint8", 6, 1),
    DatatypeCase("int16", "int16", 7, 1),
    DatatypeCase("uint16", "uint16", 8, 1),
    DatatypeCase("int32", "int32", 0, 1),
    DatatypeCase("uint32", "uint32", 9, 1),
    DatatypeCase("int64", "int64", 1, 1),
    DatatypeCase("uint64", "uint64", 10, 1),
    DatatypeCase("float32", "float32", 2, 1),
    DatatypeCase("float64", "float64", 3, 1),
    DatatypeCase("dt_ns", "datetime64[ns]", 27, 1),
    DatatypeCase("i32x3", "int32", 0, 3),
]

SHAPES = ["random", "sorted", "constant", "runs"]


@dataclass(frozen=True)
class TileConfig:
    name: str
    extent: int   # cells per tile
    tiles: int


TILE_CONFIGS = [
    TileConfig("small", 1000, 2),     # < 64 KiB for every datatype: one chunk per tile
    TileConfig("large", 50000, 3),    # int32: 200000 B -> 65536 x3 + 3392; i32x3: chunks of 65532
    TileConfig("odd", 70001, 2),      # 70001 B for 1-byte types (65536 + 4465); never 64 KiB aligned
]


def values(dt: DatatypeCase, shape: str, count: int, seed: int) -> np.ndarray:
    """`count` scalar values (not cells) of dt.numpy with the given shape."""
    rng = np.random.default_rng(seed)
    base = np.dtype(dt.numpy)
    if base.kind == "M":
        store = np.dtype("int64")
    else:
        store = base
    if shape == "constant":
        const = {"i": 42, "u": 200, "f": 3.25, "M": 1_600_000_000_000_000_000}[base.kind]
        return np.full(count, const, dtype=store).view(base)
    if shape == "runs":
        distinct = _random(rng, store, base.kind, 64)
        lengths = rng.geometric(1 / 60, size=count)          # mean run length ~60
        idx = np.repeat(rng.integers(0, len(distinct), size=len(lengths)), lengths)[:count]
        while len(idx) < count:                                # pragma: extremely unlikely
            idx = np.concatenate([idx, idx])[:count]
        return distinct[idx].view(base)
    vals = _random(rng, store, base.kind, count)
    if shape == "sorted":
        vals = np.sort(vals)
    elif shape != "random":
        raise ValueError(f"unknown shape {shape}")
    return vals.view(base)


def _random(rng, store: np.dtype, kind: str, count: int) -> np.ndarray:
    if kind == "f":
        return (rng.standard_normal(count) * 1000.0).astype(store)
    if kind == "M":  # nanosecond timestamps around 2020-2025, no NaT
        return rng.integers(1_577_836_800 * 10**9, 1_735_689_600 * 10**9, size=count, dtype=np.int64)
    info = np.iinfo(store)
    return rng.integers(info.min, info.max, size=count, dtype=store, endpoint=True)


def seed_for(*parts) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())


@dataclass
class WrittenArray:
    uri: str
    dtype: DatatypeCase
    shape: str
    tiles: TileConfig
    cells: dict          # attribute name -> bytes of all cells, in cell order
    attr_pipelines: dict  # attribute name -> PipelineCase, for the attributes written
    excluded: dict = None  # attribute name -> PipelineCase left out of the array (see write_array)

    def fragment_dir(self) -> str:
        frags = os.listdir(os.path.join(self.uri, "__fragments"))
        if len(frags) != 1:
            raise RuntimeError(f"{self.uri}: expected one fragment, found {frags}")
        return os.path.join(self.uri, "__fragments", frags[0])

    def schema_file(self) -> str:
        d = os.path.join(self.uri, "__schema")
        files = [f for f in os.listdir(d) if os.path.isfile(os.path.join(d, f))]
        if len(files) != 1:
            raise RuntimeError(f"{self.uri}: expected one schema file, found {files}")
        return os.path.join(d, files[0])


def attr_name(index: int) -> str:
    return f"p{index:02d}"


def attribute_cells(dt: DatatypeCase, shape: str, tc: TileConfig, index: int) -> np.ndarray:
    """The values written to attribute `index` (a different seed per attribute keeps
    every tile distinct across attributes)."""
    ncells = tc.extent * tc.tiles
    return values(dt, shape, ncells * dt.cell_val_num, seed_for(dt.name, shape, tc.name, index))


def write_array(root: str, dt: DatatypeCase, shape: str, tc: TileConfig,
                pipelines=PIPELINES, exclude=()) -> WrittenArray:
    """Create and fully write one dense array; returns the cells written per attribute.

    Attributes named in `exclude` are left out of the schema (their cells are
    still returned, in ``cells``), for tiles TileDB itself cannot write.
    """
    import tiledb
    uri = os.path.join(root, f"{dt.name}-{shape}-{tc.name}")
    ncells = tc.extent * tc.tiles
    dim = tiledb.Dim(name="d", domain=(0, ncells - 1), tile=tc.extent, dtype=np.uint64)
    attrs, data, cells, attr_pipes, excluded = [], {}, {}, {}, {}
    for i, pc in enumerate(pipelines):
        name = attr_name(i)
        vals = attribute_cells(dt, shape, tc, i)
        cells[name] = vals.tobytes()
        if name in exclude:
            excluded[name] = pc
            continue
        attrs.append(tiledb.Attr(name=name, dtype=dt.attr_dtype(), filters=pc.tiledb_filters()))
        data[name] = vals.view(dt.attr_dtype()) if dt.cell_val_num > 1 else vals
        attr_pipes[name] = pc
    schema = tiledb.ArraySchema(domain=tiledb.Domain(dim), attrs=attrs, sparse=False)
    tiledb.Array.create(uri, schema)
    with tiledb.open(uri, "w") as A:
        A[:] = data
    return WrittenArray(uri, dt, shape, tc, cells, attr_pipes, excluded)


def gzip_capacity(n: int) -> int:
    """TileDB 2.30's GZIP output allowance for an n-byte part (docs/FORMAT.md §5.2, sic 16834)."""
    return n + 6 + 5 * (n // 16834 + 1)


def predict_gzip_overflow(dt: DatatypeCase, shape: str, tc: TileConfig, pipelines=PIPELINES) -> dict:
    """Attributes whose tiles TileDB 2.30 cannot write (GZIP capacity defect, docs/FORMAT.md §5.3).

    Handles pipelines whose GZIP is the last filter, preceded by checksums at
    most (all the matrix has). Returns name -> human-readable reason. Uses
    Python's zlib, whose deflate output size matches TileDB's zlib 1.3.1.
    """
    import hashlib
    import struct
    from tiledb_format import expected_fixed_chunks
    out = {}
    for i, pc in enumerate(pipelines):
        types = [t for t, _ in pc.filters]
        if GZIP not in types:
            continue
        if types[-1] != GZIP or len(types) > 2 or any(t not in (MD5, SHA256) for t in types[:-1]):
            raise ValueError(f"predict_gzip_overflow cannot model pipeline {pc.name}")
        level = pc.filters[-1][1]
        zlevel = 6 if level is None or level < 0 else level
        cells = attribute_cells(dt, shape, tc, i).tobytes()
        tile_bytes = tc.extent * dt.cell_size
        for tile in range(tc.tiles):
            pos = tile * tile_bytes
            for clen in expected_fixed_chunks(tile_bytes, dt.cell_size):
                chunk = cells[pos:pos + clen]
                pos += clen
                parts = [chunk]
                for t in types[:-1]:  # checksum metadata blocks, newest first
                    algo = hashlib.md5 if t == MD5 else hashlib.sha256
                    parts.insert(0, struct.pack("<IIQ", 0, 1, len(chunk)) + algo(chunk).digest())
                for part in parts:
                    need = len(zlib.compress(part, zlevel))
                    if need > gzip_capacity(len(part)):
                        out.setdefault(attr_name(i), f"tile {tile}: a {len(part)}-byte part needs {need} "
                                                     f"bytes of zlib output, TileDB allows "
                                                     f"{gzip_capacity(len(part))}")
    return out


def read_back(uri: str, names) -> dict:
    """Read attributes with a fresh TileDB context; returns name -> bytes."""
    import tiledb
    ctx = tiledb.Ctx()
    with tiledb.open(uri, "r", ctx=ctx) as A:
        res = A.query(attrs=list(names))[:]
    return {n: np.ascontiguousarray(res[n]).tobytes() for n in names}
