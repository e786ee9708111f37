"""Per-array compatibility checks.

Check letters (one result per attribute and letter):

* ``P`` harness/spec: the schema's pipeline bytes equal the docs/FORMAT.md §3
  serialization, the data file is the expected number of tiles whose chunk
  sizes follow §4.3, and the Python reference decoder (refdecode.py, written
  from docs/FORMAT.md) decodes every TileDB tile to the written cells.
* ``D`` decode: for every tile, ``tdb_filtered_tile_size`` agrees with the
  Python walk and ``tdb_pipeline_unfilter`` of TileDB's tile gives the cells.
* ``E`` encode: ``tdb_pipeline_filter`` of the cells equals TileDB's tile.
  Every filter must be byte-identical, LZ4 included (liblz4 1.10.0, as
  TileDB); tiles of pipelines with LZ4 are additionally decoded by the
  Python decoder, whose LZ4 parts go through ``lz4.block.decompress``.
* ``S`` serialize: the schema's pipeline bytes deserialize and re-serialize
  unchanged, and the same pipeline built with add_filter/set_option
  serializes to them too.
* ``R`` read-back: where the library's tile differs from TileDB's but has the
  same size, it is written over TileDB's tile in the fragment and TileDB-Py
  must read the array back to the written cells.

Statuses: ``pass``, ``differs`` (E only: bytes differ, validated; counts as
passed), ``fail``, ``skip`` (not applicable; not counted).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import traceback
from dataclasses import asdict, dataclass, field

import arraygen
import refdecode
import tiledb_format as tf

FORMAT_VERSION = 22


@dataclass
class Result:
    pipeline: str
    dtype: str
    shape: str
    tiles: str
    check: str
    status: str
    detail: str = ""
    info: dict = field(default_factory=dict)

    def to_dict(self):
        return asdict(self)


def first_diff(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    for start in range(0, n, 4096):
        if a[start:start + 4096] != b[start:start + 4096]:
            for i in range(start, min(start + 4096, n)):
                if a[i] != b[i]:
                    return i
    return n


def diff_text(ours: bytes, theirs: bytes) -> str:
    off = first_diff(ours, theirs)
    where = tf.describe_offset(theirs, off)
    return (f"sizes ours {len(ours)} / TileDB {len(theirs)}; first difference at byte {off} "
            f"[{where}]: ours {ours[off:off + 8].hex()} TileDB {theirs[off:off + 8].hex()}")


def _cells_diff(got: bytes, want: bytes) -> str:
    off = first_diff(got, want)
    return f"{len(got)} bytes vs {len(want)} expected; first difference at byte {off}"


class ArrayChecker:
    """Runs every check on one written array."""

    def __init__(self, written: arraygen.WrittenArray, lib=None):
        self.w = written
        self.lib = lib
        self.results: list[Result] = []
        self.substitutions = []  # (file path, tile offset, our bytes, attr name)

    def add(self, pc, check, status, detail="", **info):
        self.results.append(Result(pc.name if pc else "(schema)", self.w.dtype.name, self.w.shape,
                                   self.w.tiles.name, check, status, detail, info))

    # -- driver ---------------------------------------------------------------
    def run(self) -> list[Result]:
        gt, schema = tf.read_schema_file(self.w.schema_file())
        if gt.anomalies:
            self.add(None, "P", "fail", "schema generic tile: " + "; ".join(gt.anomalies))
        by_name = {a.name: a for a in schema.attributes}
        frag = self.w.fragment_dir()
        for name, pc in self.w.attr_pipelines.items():
            try:
                self.check_attribute(pc, by_name[name], frag)
            except Exception as e:  # a harness or library crash in one attribute: record it
                self.add(pc, "P", "fail", f"exception: {e!r}\n{traceback.format_exc(limit=3)}")
        if self.lib is not None:
            self.read_back_substitutions()
        return self.results

    def check_attribute(self, pc, attr: tf.AttributeDesc, frag: str):
        dt = self.w.dtype
        cell_size = dt.cell_size
        tile_bytes = self.w.tiles.extent * cell_size
        cells = self.w.cells[attr.name]

        # P: schema and file structure against docs/FORMAT.md.
        problems = []
        if attr.datatype != dt.tiledb_type or attr.cell_val_num != dt.cell_val_num:
            problems.append(f"schema says datatype {attr.datatype} x{attr.cell_val_num}")
        want_pipe = tf.serialize_pipeline(pc.filters)
        if attr.pipeline_bytes != want_pipe:
            problems.append(f"schema pipeline {attr.pipeline_bytes.hex()} != §3 serialization "
                            f"{want_pipe.hex()}")
        path = os.path.join(frag, f"a{attr.index}.tdb")
        with open(path, "rb") as f:
            data = f.read()
        tiles = tf.split_data_file(data)
        if len(tiles) != self.w.tiles.tiles:
            problems.append(f"{len(tiles)} tiles in {os.path.basename(path)}, expected {self.w.tiles.tiles}")
        expected_chunks = tf.expected_fixed_chunks(tile_bytes, cell_size)
        ok, why = refdecode.supports([t for t, _ in pc.filters])
        for i, (off, size) in enumerate(tiles):
            tile = data[off:off + size]
            got_chunks = [c.original_length for c in tf.parse_filtered_tile(tile).chunks]
            if got_chunks != expected_chunks:
                problems.append(f"tile {i}: chunk sizes {got_chunks}, §4.3 predicts {expected_chunks}")
            if ok:
                want = cells[i * tile_bytes:(i + 1) * tile_bytes]
                try:
                    got = refdecode.decode_tile(attr.pipeline, dt.value_size, tile)
                    if got != want:
                        problems.append(f"tile {i}: reference decode differs: {_cells_diff(got, want)}")
                except tf.FormatError as e:
                    problems.append(f"tile {i}: reference decoder: {e}")
        if problems:
            self.add(pc, "P", "fail", "; ".join(problems))
        else:
            self.add(pc, "P", "pass", "" if ok else f"reference decode skipped: {why}")

        if self.lib is None:
            return
        self.check_serialize(pc, attr)
        self.check_tiles(pc, attr, path, data, tiles, cells, tile_bytes)

    # -- S --------------------------------------------------------------------
    def check_serialize(self, pc, attr: tf.AttributeDesc):
        from tdbfilter_ctypes import TdbError
        problems = []
        try:
            with self.lib.deserialize_pipeline(attr.pipeline_bytes, FORMAT_VERSION) as p:
                again = p.serialize()
            if again != attr.pipeline_bytes:
                problems.append(f"re-serialized {again.hex()} != schema {attr.pipeline_bytes.hex()}")
        except TdbError as e:
            problems.append(str(e))
        try:
            with self.lib.build_pipeline(pc.filters) as p:
                built = p.serialize()
            if built != attr.pipeline_bytes:
                problems.append(f"pipeline built via add_filter/set_option serializes to {built.hex()}, "
                                f"schema has {attr.pipeline_bytes.hex()}")
        except TdbError as e:
            problems.append(f"building via add_filter/set_option: {e}")
        self.add(pc, "S", "fail" if problems else "pass", "; ".join(problems))

    # -- D, E -----------------------------------------------------------------
    def check_tiles(self, pc, attr, path, data, tiles, cells, tile_bytes):
        from tdbfilter_ctypes import TdbError
        dt = self.w.dtype
        d_problems, e_problems = [], []
        identical = differing = 0
        lz4_parts = 0
        self._last_lz4_parts = 0
        try:
            pipe = self.lib.deserialize_pipeline(attr.pipeline_bytes, FORMAT_VERSION)
        except TdbError as e:
            self.add(pc, "D", "fail", f"cannot deserialize pipeline: {e}")
            self.add(pc, "E", "fail", f"cannot deserialize pipeline: {e}")
            return
        with pipe:
            # D: walk with the C function, then unfilter each tile.
            pos = 0  # end of the last tile walked
            for i, (off, size) in enumerate(tiles):
                try:
                    c_size = self.lib.filtered_tile_size(data, off)
                    if c_size != size:
                        d_problems.append(f"tile {i} at {off}: tdb_filtered_tile_size {c_size}, "
                                          f"Python walk {size}")
                except TdbError as e:
                    d_problems.append(f"tile {i} at {off}: {e}")
                pos = off + size
                theirs = data[off:off + size]
                want = cells[i * tile_bytes:(i + 1) * tile_bytes]
                try:
                    got = pipe.unfilter(theirs, dt.tiledb_type, dt.cell_size)
                    if got != want:
                        d_problems.append(f"tile {i}: unfilter {_cells_diff(got, want)}")
                except TdbError as e:
                    d_problems.append(f"tile {i}: {e}")

                # E: filter the cells and compare with TileDB's tile.
                try:
                    ours = pipe.filter_bytes(dt.tiledb_type, dt.cell_size, want)
                except TdbError as e:
                    e_problems.append(f"tile {i}: {e}")
                    continue
                if pc.has_lz4:
                    # LZ4 parts are also decoded independently, with liblz4 through Python's lz4.
                    validity = self.validate_ours(pipe, attr, ours, want)
                    if validity:
                        e_problems.append(f"tile {i}: LZ4 output invalid: {validity}")
                    lz4_parts += self._last_lz4_parts
                if ours == theirs:
                    identical += 1
                    continue
                differing += 1
                validity = self.validate_ours(pipe, attr, ours, want)
                e_problems.append(f"tile {i}: {diff_text(ours, theirs)}; our tile "
                                  f"{'is valid' if not validity else 'is invalid: ' + validity}")
                if not validity and len(ours) == len(theirs):
                    self.substitutions.append((path, off, ours, attr.name, pc, i))
            if pos != len(data):
                d_problems.append(f"tiles end at {pos}, file has {len(data)} bytes")
        fast_info = self.check_fast_gzip(pc, attr, tiles, cells, tile_bytes, e_problems)
        self.add(pc, "D", "fail" if d_problems else "pass", "; ".join(d_problems))
        info = {"tiles_identical": identical, "tiles_differing": differing, **fast_info}
        if pc.has_lz4:
            info["lz4_parts_checked_with_python_lz4"] = lz4_parts
        if e_problems:
            self.add(pc, "E", "fail", "; ".join(e_problems), **info)
        else:
            self.add(pc, "E", "pass", "", **info)

    def check_fast_gzip(self, pc, attr, tiles, cells, tile_bytes, e_problems) -> dict:
        """GZIP's opt-in fast writer (libdeflate) must produce tiles that decode to the cells
        with the library AND with Python's zlib (TileDB's reader). Its sizes are reported (it
        may be a few percent larger than zlib's; the default writer is byte-identical)."""
        from tdbfilter_ctypes import TdbError
        if not any(t == 1 for t, _ in pc.filters) or not self.lib.has_gzip_switch:
            return {}
        dt = self.w.dtype
        pipe = self.lib.deserialize_pipeline(attr.pipeline_bytes, FORMAT_VERSION)
        ours_total = theirs_total = 0
        with pipe:
            err = ctypes.c_void_p()
            self.lib._dll.tdb_pipeline_set_gzip_identical(pipe.ptr, False, ctypes.byref(err))
            for i, (off, size) in enumerate(tiles):
                want = cells[i * tile_bytes:(i + 1) * tile_bytes]
                try:
                    fast = pipe.filter_bytes(dt.tiledb_type, dt.cell_size, want)
                except TdbError as e:
                    e_problems.append(f"tile {i}: fast GZIP writer: {e}")
                    continue
                why = self.validate_ours(pipe, attr, fast, want)
                if why:
                    e_problems.append(f"tile {i}: fast GZIP writer's tile invalid: {why}")
                ours_total += len(fast)
                theirs_total += size
        return {"fast_gzip_bytes": ours_total, "tiledb_gzip_bytes": theirs_total}

    def validate_ours(self, pipe, attr, ours: bytes, want: bytes) -> str:
        """Empty string if our filtered tile decodes to `want` both ways, else the reason."""
        from tdbfilter_ctypes import TdbError
        dt = self.w.dtype
        self._last_lz4_parts = 0
        reasons = []
        try:
            got = pipe.unfilter(ours, dt.tiledb_type, dt.cell_size)
            if got != want:
                reasons.append(f"tdb_pipeline_unfilter: {_cells_diff(got, want)}")
        except TdbError as e:
            reasons.append(str(e))
        ok, why = refdecode.supports([f.ftype for f in attr.pipeline.filters])
        if ok:
            stats = {}
            try:
                got = refdecode.decode_tile(attr.pipeline, dt.value_size, ours, stats)
                if got != want:
                    reasons.append(f"Python decoder: {_cells_diff(got, want)}")
                self._last_lz4_parts = stats.get(refdecode.LZ4, 0)
            except tf.FormatError as e:
                reasons.append(f"Python decoder: {e}")
        elif any(f.ftype == refdecode.LZ4 for f in attr.pipeline.filters):
            reasons.append(f"cannot check LZ4 independently: {why}")
        return "; ".join(reasons)

    # -- tiles TileDB cannot write ----------------------------------------------
    def check_unwritable(self, pc, name: str, reason: str):
        """A tile TileDB 2.30 fails to write (GZIP capacity defect). docs/FORMAT.md §5.3 allows a
        writer to fail likewise or to succeed; success must give a valid tile."""
        from tdbfilter_ctypes import TdbError
        why = f"TileDB 2.30 fails to write this (GZIP capacity defect, docs/FORMAT.md §5.3: {reason})"
        self.add(pc, "P", "pass", why, tiledb_write_failed=True)
        if self.lib is None:
            return
        dt = self.w.dtype
        tile_bytes = self.w.tiles.extent * dt.cell_size
        cells = self.w.cells[name]
        attr_pipeline = tf.parse_pipeline(tf.Reader(tf.serialize_pipeline(pc.filters)))
        attr = tf.AttributeDesc(-1, name, dt.tiledb_type, dt.cell_val_num, b"", attr_pipeline, b"", False)
        outcomes, problems = [], []
        with self.lib.build_pipeline(pc.filters) as pipe:
            for i in range(self.w.tiles.tiles):
                want = cells[i * tile_bytes:(i + 1) * tile_bytes]
                try:
                    ours = pipe.filter_bytes(dt.tiledb_type, dt.cell_size, want)
                except TdbError as e:
                    outcomes.append(f"tile {i}: library fails too ({e.message})")
                    continue
                bad = self.validate_ours(pipe, attr, ours, want)
                if bad:
                    problems.append(f"tile {i}: library output invalid: {bad}")
                else:
                    outcomes.append(f"tile {i}: library writes a valid tile")
        if problems:
            self.add(pc, "E", "fail", why + "; " + "; ".join(problems))
        else:
            self.add(pc, "E", "differs", why + "; " + "; ".join(outcomes), tiledb_write_failed=True)

    # -- R --------------------------------------------------------------------
    def read_back_substitutions(self):
        if not self.substitutions:
            return
        for path, off, ours, _name, _pc, _i in self.substitutions:
            with open(path, "r+b") as f:
                f.seek(off)
                f.write(ours)
        # One query per attribute, so a failure is attributed to the right pipeline.
        for name in sorted({s[3] for s in self.substitutions}):
            subs = [s for s in self.substitutions if s[3] == name]
            pc, ntiles = subs[0][4], len(subs)
            try:
                got = arraygen.read_back(self.w.uri, [name])[name]
            except Exception as e:  # tiledb.TileDBError and friends
                self.add(pc, "R", "fail", f"TileDB-Py failed reading our {ntiles} substituted tile(s): {e!r}",
                         tiles_substituted=ntiles)
                continue
            if got != self.w.cells[name]:
                self.add(pc, "R", "fail", f"TileDB-Py read back wrong cells after substituting {ntiles} "
                                          f"tile(s): {_cells_diff(got, self.w.cells[name])}",
                         tiles_substituted=ntiles)
            else:
                self.add(pc, "R", "pass", f"TileDB read {ntiles} of our tile(s) correctly",
                         tiles_substituted=ntiles)


_LIB = None


def run_job(job) -> list[dict]:
    """Worker entry: write one array, check it, delete it. job = dict of parameters."""
    global _LIB
    if job["lib"] and _LIB is None:
        from tdbfilter_ctypes import Library
        _LIB = Library(job["lib"])
    dt = next(d for d in arraygen.DATATYPES if d.name == job["dtype"])
    tc = next(t for t in arraygen.TILE_CONFIGS if t.name == job["tiles"])
    root = job["workdir"]
    exclude, reasons = (), {}
    try:
        try:
            written = arraygen.write_array(root, dt, job["shape"], tc)
        except Exception as e:
            # TileDB's GZIP capacity defect (docs/FORMAT.md §5.3) fails the whole write; leave out
            # the attributes it predicts and check those tiles on the library alone.
            if "Cannot compress with GZIP" not in str(e):
                raise
            reasons = arraygen.predict_gzip_overflow(dt, job["shape"], tc)
            if not reasons:
                raise RuntimeError(f"{e!r}, but no attribute is predicted to overflow") from e
            shutil.rmtree(os.path.join(root, f"{dt.name}-{job['shape']}-{tc.name}"), ignore_errors=True)
            exclude = tuple(reasons)
            written = arraygen.write_array(root, dt, job["shape"], tc, exclude=exclude)
    except Exception as e:
        return [Result("(write)", dt.name, job["shape"], tc.name, "P", "fail",
                       f"TileDB-Py write failed: {e!r}").to_dict()]
    try:
        checker = ArrayChecker(written, _LIB if job["lib"] else None)
        results = checker.run()
        for name in exclude:
            checker.check_unwritable(written.excluded[name], name, reasons[name])
    finally:
        if not job.get("keep"):
            shutil.rmtree(written.uri, ignore_errors=True)
    return [r.to_dict() for r in results]
