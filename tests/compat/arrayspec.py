"""Array recipes for the extended suites: schema + data + what each tile must hold.

An `ArraySpec` is plain, picklable data: dimensions, attributes (with
`filterspec.F` pipelines), the schema's offsets / validity / coords pipelines,
and the values to write. `create_and_write` turns it into a TileDB array with
TileDB-Py; `write_isolated` does the same in a child process, for writes that
TileDB 2.30 is predicted to crash on (docs/FORMAT.md §8.3).

A `FieldExpect` describes one attribute or dimension to check: its matrix
row and column, its datatype and pipeline, and the expected content of each
of its tiles (`TileExpect`).

Also here: the docs/FORMAT.md §4.5 var-size chunking model and the predictors of
TileDB defects the suites use (empty chunks, the var-string RLE length quirk,
DOUBLE_DELTA range errors, POSITIVE_DELTA on decreasing data).

    python arrayspec.py write SPEC.pickle     # child process entry (write_isolated)
    python arrayspec.py read URI NAME          # child process entry (read_isolated)
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from dataclasses import dataclass, field

import numpy as np

import filterspec as fs

VAR = 0xFFFFFFFF


# ---------------------------------------------------------------------------
# recipes
# ---------------------------------------------------------------------------

@dataclass
class DimSpec:
    name: str
    dtype: str                 # numpy dtype string, or "ascii" for a var-size string dimension
    domain: tuple | None = None
    tile: object = None
    filters: tuple | None = None  # None: empty pipeline (inherits the coords pipeline)


@dataclass
class AttrSpec:
    name: str
    dtype: str                 # numpy dtype string; "ascii" / "utf8" / "bytes" for var strings
    var: bool = False
    nullable: bool = False
    filters: tuple = ()


@dataclass
class ArraySpec:
    suite: str
    label: str                 # directory name, unique per job
    dims: list
    attrs: list
    sparse: bool = False
    capacity: int = 0
    offsets_filters: tuple | None = None    # None: TileDB's default [ZSTD]
    validity_filters: tuple | None = None   # None: TileDB's default [RLE]
    coords_filters: tuple | None = None     # None: default [ZSTD]; set on the schema object directly
    data: dict = field(default_factory=dict)    # attribute name -> values
    coords: list | None = None                  # sparse: one array per dimension
    isolate: bool = False      # write in a child process (predicted TileDB crash)

    def uri(self, root: str) -> str:
        return os.path.join(root, self.label)


def _np_dtype(d: str):
    if d == "utf8":
        return str
    if d == "bytes":
        return bytes
    if d == "ascii":
        return "ascii"
    return np.dtype(d)


def build_schema(spec: ArraySpec):
    import tiledb
    dims = []
    for d in spec.dims:
        kw = {}
        if d.filters is not None:
            kw["filters"] = fs.tiledb_filter_list(d.filters)
        if d.dtype == "ascii":
            dims.append(tiledb.Dim(name=d.name, domain=(None, None), tile=None, dtype="ascii", **kw))
        else:
            dims.append(tiledb.Dim(name=d.name, domain=d.domain, tile=d.tile, dtype=np.dtype(d.dtype), **kw))
    attrs = [tiledb.Attr(name=a.name, dtype=_np_dtype(a.dtype), var=a.var or None, nullable=a.nullable,
                         filters=fs.tiledb_filter_list(a.filters)) for a in spec.attrs]
    kw = {}
    if spec.offsets_filters is not None:
        kw["offsets_filters"] = fs.tiledb_filter_list(spec.offsets_filters)
    if spec.validity_filters is not None:
        kw["validity_filters"] = fs.tiledb_filter_list(spec.validity_filters)
    if spec.capacity:
        kw["capacity"] = spec.capacity
    schema = tiledb.ArraySchema(domain=tiledb.Domain(*dims), attrs=attrs, sparse=spec.sparse, **kw)
    if spec.coords_filters is not None:
        # TileDB-Py's coords_filters argument copies the list into every dimension and leaves the
        # schema's coords pipeline empty; setting the pybind property keeps it in the schema.
        schema._coords_filters = fs.tiledb_filter_list(spec.coords_filters)
    return schema


def create_and_write(spec: ArraySpec, root: str) -> str:
    import tiledb
    uri = spec.uri(root)
    tiledb.Array.create(uri, build_schema(spec))
    with tiledb.open(uri, "w") as A:
        if spec.sparse:
            A[tuple(spec.coords)] = spec.data
        else:
            A[:] = spec.data
    return uri


def _child_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.abspath(__file__)) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def write_isolated(spec: ArraySpec, root: str, timeout: float = 120) -> tuple[bool, str]:
    """Write in a child process. Returns (ok, what happened)."""
    path = os.path.join(root, spec.label + ".spec.pickle")
    with open(path, "wb") as f:
        pickle.dump((spec, root), f)
    try:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "write", path], capture_output=True,
                           text=True, timeout=timeout, env=_child_env())
    except subprocess.TimeoutExpired:
        return False, f"TileDB did not finish writing within {timeout} s"
    finally:
        os.unlink(path)
    return _outcome(p, "writing")


def read_isolated(uri: str, name: str, timeout: float = 120) -> tuple[bool, str]:
    """Read one attribute in a child process. Returns (ok, what happened)."""
    try:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "read", uri, name], capture_output=True,
                           text=True, timeout=timeout, env=_child_env())
    except subprocess.TimeoutExpired:
        return False, f"TileDB did not finish reading within {timeout} s"
    return _outcome(p, "reading")


def _outcome(p, what: str) -> tuple[bool, str]:
    if p.returncode == 0:
        return True, "ok"
    if p.returncode < 0:
        import signal
        try:
            sig = signal.Signals(-p.returncode).name
        except ValueError:
            sig = str(-p.returncode)
        return False, f"TileDB crashed while {what} (killed by {sig})"
    lines = [ln for ln in (p.stderr or "").strip().splitlines() if ln.strip()]
    return False, f"TileDB failed while {what}: {lines[-1] if lines else f'exit status {p.returncode}'}"


def read_attribute(uri: str, name: str, sparse: bool = False):
    import tiledb
    with tiledb.open(uri, "r", ctx=tiledb.Ctx()) as A:
        q = A.query(attrs=[name], order="G") if sparse else A.query(attrs=[name])
        return q[:][name]


def read_dimension(uri: str, name: str):
    import tiledb
    with tiledb.open(uri, "r", ctx=tiledb.Ctx()) as A:
        return A.query(attrs=[], dims=[name], order="G")[:][name]


# ---------------------------------------------------------------------------
# expected tiles
# ---------------------------------------------------------------------------

@dataclass
class TileExpect:
    data: bytes
    offsets: np.ndarray | None = None      # var-size: u64 start offsets, one per cell
    validity: bytes | None = None          # nullable: one byte per cell

    @property
    def cell_sizes(self) -> list[int]:
        if self.offsets is None:
            return []
        ends = list(self.offsets[1:]) + [len(self.data)]
        return [int(e) - int(s) for s, e in zip(self.offsets, ends)]


@dataclass
class FieldExpect:
    row: str
    col: str
    name: str
    datatype: int
    tiles: list                      # TileExpect per tile, in file order
    filters: tuple = ()              # the pipeline the user set (dims: () = inherit coords)
    is_dim: bool = False
    var: bool = False
    cell_val_num: int = 1
    nullable: bool = False
    shape: str = "-"
    tiles_label: str = "-"
    lossy: bool = False              # D compares with TileDB's read-back, not the written cells
    tiling: object = None            # function(values read back) -> [TileExpect] (lossy fields)
    unreadable: dict = field(default_factory=dict)  # tile index -> why TileDB cannot read its tile
    unwritable: str = ""             # predicted: TileDB fails or crashes writing (why)
    crash: bool = False              # the unwritable prediction is a crash (write in a child process)
    webp_extents: tuple = (0, 0)
    notes: list = field(default_factory=list)

    @property
    def value_size(self) -> int:
        return fs.datatype_size(self.datatype)

    @property
    def cell_size(self) -> int:
        """Chunking / RLE cell size of the data tile (§4.2)."""
        return self.value_size if self.var else self.value_size * self.cell_val_num


def fixed_tiles(cells: np.ndarray, per_tile: int, validity: np.ndarray | None = None) -> list:
    """Tiles of a fixed-size field: `cells` is an array of whole cells in tile order."""
    out = []
    for i in range(0, len(cells), per_tile):
        v = None if validity is None else validity[i:i + per_tile].astype(np.uint8).tobytes()
        out.append(TileExpect(np.ascontiguousarray(cells[i:i + per_tile]).tobytes(), None, v))
    return out


def var_tiles(cells: list, per_tile: int, validity: np.ndarray | None = None) -> list:
    """Tiles of a var-size field: `cells` is a list of bytes, one per cell, in tile order."""
    out = []
    for i in range(0, len(cells), per_tile):
        group = cells[i:i + per_tile]
        lens = np.array([len(c) for c in group], dtype=np.uint64)
        offs = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.uint64) if len(group) else lens
        v = None if validity is None else validity[i:i + per_tile].astype(np.uint8).tobytes()
        out.append(TileExpect(b"".join(group), offs, v))
    return out


def cell_bytes(value, dtype: str) -> bytes:
    """One var cell as TileDB stores it."""
    if value is None:
        return b""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return np.ascontiguousarray(np.asarray(value, dtype=np.dtype(dtype))).tobytes()


# ---------------------------------------------------------------------------
# docs/FORMAT.md chunking models
# ---------------------------------------------------------------------------

def var_chunk_sizes(cell_sizes, dt_size: int, chunking: bool = True) -> list[int]:
    """Chunk original lengths of a var data tile (§4.4, §4.5)."""
    tile_size = sum(cell_sizes)
    if not chunking:
        return [tile_size]
    cs = min(65536, tile_size)
    cs = max((cs // dt_size) * dt_size, dt_size)
    if tile_size == cs:
        return [tile_size]
    starts, cur, lo, hi, off = [0], 0, cs // 2, cs + cs // 2, 0
    n = len(cell_sizes)
    for c, s in enumerate(cell_sizes):
        new = cur + s
        if new > cs:
            if cur <= lo or new <= hi:
                starts.append(off + s)
                cur = 0
            else:
                starts.append(off)
                if s > cs:
                    if c != n - 1:
                        starts.append(off + s)
                    cur = 0
                else:
                    cur = s
        else:
            cur += s
        off += s
    return [starts[i + 1] - starts[i] for i in range(len(starts) - 1)] + [tile_size - starts[-1]]


def chunking_disabled(filters, datatype: int, var: bool) -> bool:
    """§4.4 rules 2 and 3 (max_chunk_size is never 0 here)."""
    if var and datatype in (11, 12):
        return any(f.type in (fs.RLE, fs.DICTIONARY) for f in filters)
    return any(f.type == fs.WEBP for f in filters)


def data_chunk_sizes(fx: FieldExpect, filters, tile: TileExpect) -> list[int]:
    from tiledb_format import expected_fixed_chunks
    off = chunking_disabled(filters, fx.datatype, fx.var)
    if fx.var:
        return var_chunk_sizes(tile.cell_sizes, fx.value_size, not off)
    if off:
        return [len(tile.data)]
    return expected_fixed_chunks(len(tile.data), fx.cell_size) if tile.data else []


# ---------------------------------------------------------------------------
# predictors of TileDB 2.30 defects
# ---------------------------------------------------------------------------

def _applies_bwr_pd(f, t: int) -> bool:
    import refdecode_ext as rx
    return (rx.bwr_elem(t) if f.type == fs.BWR else rx.pd_elem(t)) is not None


def empty_part_defect(fx: FieldExpect, filters) -> tuple[str, str]:
    """(kind, why) for a field with an empty data chunk reaching BWR / PD (crash) or DELTA /
    DOUBLE_DELTA (unreadable tile), docs/FORMAT.md §4.5, §8.3. kind: "crash", "unreadable" or ""."""
    empties = [i for i, t in enumerate(fx.tiles) if 0 in data_chunk_sizes(fx, filters, t)]
    if not empties:
        return "", ""
    types = fs.stage_types(filters, fx.datatype)
    for f, t in zip(filters, types):
        if f.type in (fs.BWR, fs.POSITIVE_DELTA) and _applies_bwr_pd(f, t):
            return "crash", (f"tile {empties[0]} has an empty chunk; {fs.SHORT[f.type]} divides by zero on it "
                             f"(docs/FORMAT.md §5.12/§8.3)")
        if f.type in (fs.DELTA, fs.DOUBLE_DELTA):
            return "unreadable", (f"tile {empties[0]} has an empty chunk; {fs.SHORT[f.type]} writes "
                                  f"out-of-bounds values for it (docs/FORMAT.md §5.10/§5.11)")
        if f.type in (fs.MD5, fs.SHA256, fs.NONE):
            return "", ""  # forwards the empty part as zero parts: later filters see no data
    return "", ""


def predict_defects(fx: FieldExpect, filters) -> bool:
    """Set fx.unwritable / crash / unreadable from the var-size predictors; returns whether the
    array should be written in a child process."""
    isolate = False
    kind, why = empty_part_defect(fx, filters)
    if kind == "crash":
        fx.unwritable, fx.crash = why, True
    elif kind == "unreadable":
        fx.unreadable = {j: why for j, t in enumerate(fx.tiles) if 0 in data_chunk_sizes(fx, filters, t)}
        isolate = True
    if fx.var and fx.datatype in (11, 12) and any(f.type == fs.RLE for f in filters):
        bad = {j: rle_string_defect(t) for j, t in enumerate(fx.tiles)}
        bad = {j: w for j, w in bad.items() if w}
        if bad:
            fx.unreadable = bad
    if fx.var and fx.datatype not in (11, 12) and any(f.type == fs.DICTIONARY for f in filters):
        fx.unwritable = "DICTIONARY applies to var STRING_ASCII/UTF8 only (docs/FORMAT.md §5.9)"
    if not fx.unwritable:
        fx.unwritable = dd_defect(fx, filters)
    return isolate


def bytesize(x: int) -> int:
    return 1 if x <= 0xFF else 2 if x <= 0xFFFF else 4 if x <= 0xFFFFFFFF else 8


def rle_string_defect(tile: TileExpect) -> str:
    """The var-string RLE max_len quirk (§5.8): '' or why TileDB's tile is unreadable."""
    sizes = tile.cell_sizes
    if not sizes:
        return ""
    strings = [tile.data[int(o):int(o) + s] for o, s in zip(tile.offsets, sizes)]
    runs = []
    for s in strings:
        if runs and runs[-1][0] == s:
            runs[-1][1] += 1
        else:
            runs.append([s, 1])
    max_len = len(runs[0][0])
    for i in range(len(runs) - 1):
        max_len = max(max_len, len(runs[i][0]))
    sl = bytesize(max_len)
    longest = max(len(r[0]) for r in runs)
    if bytesize(longest) > sl:
        return (f"the last run's {longest}-byte string needs a {bytesize(longest)}-byte length but TileDB "
                f"sizes lengths from earlier runs only ({sl} byte(s)), docs/FORMAT.md §5.8")
    return ""


def double_delta_overflow(values: np.ndarray, elem) -> bool:
    """Whether DOUBLE_DELTA's exact delta / double delta leaves i64 for one part (§5.10)."""
    x = np.asarray(values).view(elem)
    if len(x) <= 2:
        return False
    xs = [int(v) for v in x.tolist()]
    lo, hi = -(1 << 63), (1 << 63) - 1
    prev_d = None
    for a, b in zip(xs, xs[1:]):
        d = b - a
        if not lo <= d <= hi:
            return True
        if prev_d is not None and not lo <= d - prev_d <= hi:
            return True
        prev_d = d
    return False


def dd_defect(fx: FieldExpect, filters) -> str:
    """DOUBLE_DELTA range error (§5.10) on any part it compresses, for pipelines where only
    checksums (and NONE) precede it: the data part is the chunk, the metadata parts are the
    checksums' own blocks (§5.16), which DOUBLE_DELTA compresses too."""
    import hashlib
    import struct
    import refdecode_ext as rx
    types = fs.stage_types(filters, fx.datatype)
    for j, (f, t) in enumerate(zip(filters, types)):
        if f.type != fs.DOUBLE_DELTA:
            continue
        if any(g.type not in (fs.MD5, fs.SHA256, fs.NONE) for g in filters[:j]):
            return ""  # DD after a transform: not modelled (the suites do not need it)
        elem = rx.delta_elem(f, t)
        size = np.dtype(elem).itemsize
        for ti, tile in enumerate(fx.tiles):
            pos = 0
            for n in data_chunk_sizes(fx, filters, tile):
                chunk = tile.data[pos:pos + n]
                pos += n
                parts = [chunk]
                md = []
                for g in filters[:j]:
                    if g.type in (fs.MD5, fs.SHA256):
                        algo = hashlib.md5 if g.type == fs.MD5 else hashlib.sha256
                        own = struct.pack("<II", len(md), 1)  # an empty chunk still counts (§5.16)
                        for p in md + [chunk]:
                            own += struct.pack("<Q", len(p)) + algo(p).digest()
                        md = [own] + md
                for p in md + parts:
                    k = len(p) // size
                    if double_delta_overflow(np.frombuffer(p[:k * size], dtype=elem), elem):
                        where = "a checksum metadata part" if p is not chunk else "the data"
                        return (f"tile {ti}: a delta or double delta of {where} exceeds int64 (docs/FORMAT.md "
                                f"§5.10: TileDB fails the write)")
        return ""
    return ""


def decreasing_for_pd(fx: FieldExpect, filters) -> str:
    """POSITIVE_DELTA (first applied filter) on tile data that ever decreases. Windows restart
    at chunk and window boundaries, so this is stricter than TileDB; the suites only give
    POSITIVE_DELTA non-decreasing data and use this to keep it that way."""
    import refdecode_ext as rx
    types = fs.stage_types(filters, fx.datatype)
    for f, t in zip(filters, types):
        if f.type == fs.POSITIVE_DELTA:
            elem = rx.pd_elem(t)
            if elem is None:
                return ""
            s = np.dtype(elem).itemsize
            for ti, tile in enumerate(fx.tiles):
                x = np.frombuffer(tile.data[:len(tile.data) // s * s], dtype=elem)
                if len(x) > 1 and (x[1:] < x[:-1]).any():
                    return f"tile {ti}: data decreases (TileDB: 'delta is not positive')"
            return ""
        if f.type not in (fs.MD5, fs.SHA256, fs.NONE):
            return ""
    return ""


# ---------------------------------------------------------------------------
# child process entry
# ---------------------------------------------------------------------------

def _main(argv):
    if argv[0] == "write":
        with open(argv[1], "rb") as f:
            spec, root = pickle.load(f)
        create_and_write(spec, root)
        return 0
    if argv[0] == "read":
        read_attribute(argv[1], argv[2])
        return 0
    raise SystemExit(f"unknown command {argv[0]}")


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
