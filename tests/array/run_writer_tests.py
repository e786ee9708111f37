#!/usr/bin/env python3
"""Differential tests of tdbfilter's array writer (issue 22) against TileDB-Py 0.36.1.

Every case creates an array with TileDB-Py (array A), copies it (array B), writes the same
cells with the same layout and timestamp into A through libtiledb and into B through
`tdbf array write`, and checks:

* bytes: every file of every fragment of B equals the file of A's fragment of the same
  timestamp (encrypted arrays: equal after decrypting the AES-GCM stage, whose IVs are
  random);
* TileDB-Py reads the same cells from A and B; `tiledb.array_fragments` shows the same
  fragments (format version, cell count, non-empty domain, timestamps);
* `query().agg()` count/sum/min/max/null_count give the same results on A and B (run in a
  child process: wrong tile metadata crashes libtiledb) and, on B, the values the cells give;
* tdbfilter's reader (`tdbf array cat`) reads the same cells from A and B, and
  `tdbf array verify B` passes;
* TileDB's consolidate + vacuum over B's fragments leaves the cells A's leave.

Cases where TileDB 2.30's writer stores tile metadata its own aggregates then get wrong are
marked; there B's metadata file differs from A's by design (docs/DIFFERENCES.md) and B's
aggregates must equal the cells'.

Usage: run_writer_tests.py --tdbf target/release/tdbf [--workdir DIR] [--keep] [CASE...]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import tiledb
import tiledb.libtiledb as lt

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "compat"))

KEY = "0123456789abcdef0123456789abcdef"
AGGS = ["count", "sum", "min", "max", "null_count"]


# ----------------------------------------------------------------------------------------
# Cells


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(sum(map(ord, name)))


def strings(rng, n, alphabet, max_len=6):
    return [
        "".join(rng.choice(list(alphabet), size=rng.integers(0, max_len + 1)))
        for _ in range(n)
    ]


def var_buffers(values: list) -> tuple:
    bs = [v if isinstance(v, bytes) else v.encode() for v in values]
    offsets = np.cumsum([0] + [len(b) for b in bs[:-1]]).astype(np.uint64) if bs else np.zeros(0, np.uint64)
    data = np.frombuffer(b"".join(bs), dtype=np.uint8).copy()
    return data, offsets


def cells_for(attr: tiledb.Attr, n: int, rng) -> tuple:
    """(data, offsets or None, validity or None) for n cells of attr, as raw buffers
    (attributes named `nn*` are mostly null, so that whole tiles are null; `pd*` get
    increasing values, POSITIVE_DELTA refuses others; `dd*` and `dl*` values of a small
    range)."""
    dt = attr.dtype
    if attr.name.startswith("pd"):
        return np.cumsum(rng.integers(1, 4, n)).astype(dt), None, None
    if attr.name.startswith("dd") or attr.name.startswith("dl"):
        # DOUBLE_DELTA needs deltas that fit int64; DELTA + BIT_WIDTH_REDUCTION windows whose
        # range fits the type, or TileDB stores an uninitialized window offset
        # (docs/DIFFERENCES.md).
        return rng.integers(-(10**6), 10**6, n).astype(dt), None, None
    p_null = 0.85 if attr.name.startswith("nn") else 0.3
    validity = (rng.random(n) > p_null).astype(np.uint8) if attr.isnullable else None
    if attr.isvar:
        if dt.kind == "U":
            vals = strings(rng, n, "aé€xyz")
        elif attr.isascii:
            vals = strings(rng, n, "abcxyz")
        else:
            vals = [bytes(rng.integers(0, 256, size=rng.integers(0, 5), dtype=np.uint8)) for _ in range(n)]
        data, offsets = var_buffers(vals)
        return data, offsets, validity
    if dt.kind == "S":
        data = rng.integers(ord("a"), ord("z") + 1, size=n * dt.itemsize, dtype=np.uint8)
        data[rng.random(data.size) < 0.1] = 0
        return data, None, validity
    if dt.kind == "V":  # records of one base type: cell_val_num values per cell
        base = dt[0]
        return base_values(base, n * len(dt), rng), None, validity
    if dt.kind == "c":
        base = np.dtype(np.float32 if dt.itemsize == 8 else np.float64)
        return base_values(base, n * 2, rng), None, validity
    return base_values(dt, n, rng), None, validity


def base_values(dt: np.dtype, n: int, rng) -> np.ndarray:
    if dt.kind == "b":
        return rng.integers(0, 2, n, dtype=np.uint8)
    if dt.kind in "Mm":
        return rng.integers(-(10**12), 10**12, n, dtype=np.int64)
    if dt.kind == "f":
        v = (rng.standard_normal(n) * 1000).astype(dt)
        if n > 5:
            v[3] = -0.0
        return v
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)


# ----------------------------------------------------------------------------------------
# Writers


def ctx_for(key):
    if key is None:
        return tiledb.Ctx()
    return tiledb.Ctx({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key})


def tiledb_write(uri, w, key):
    """Writes through libtiledb with the query layout, subarray and raw buffers of `w`."""
    ctx = ctx_for(key)
    layout = {"R": lt.LayoutType.ROW_MAJOR, "C": lt.LayoutType.COL_MAJOR,
              "G": lt.LayoutType.GLOBAL_ORDER, "U": lt.LayoutType.UNORDERED}[w["layout"]]
    with tiledb.open(uri, "w", timestamp=w["timestamp"], ctx=ctx) as A:
        q = lt.Query(lt.Context(ctx), A.array, lt.QueryType.WRITE)
        q.layout = layout
        if w.get("subarray") is not None:
            sub = tiledb.Subarray(A, ctx)
            sub.add_ranges([[tuple(r)] for r in w["subarray"]])
            q.set_subarray(sub)
        keep = []
        for name, (data, offsets, validity) in w["fields"].items():
            data = np.ascontiguousarray(data)
            keep.append(data)
            q.set_data_buffer(name, data, np.uint64(data.size))
            if offsets is not None:
                o = np.ascontiguousarray(offsets, dtype=np.uint64)
                keep.append(o)
                q.set_offsets_buffer(name, o, o.size)
            if validity is not None:
                v = np.ascontiguousarray(validity, dtype=np.uint8)
                keep.append(v)
                q.set_validity_buffer(name, v, v.size)
        q._submit()
        q.finalize()


def tdbf_write(tdbf, uri, w, key, workdir):
    files = os.path.join(workdir, "cells")
    os.makedirs(files, exist_ok=True)
    args = [tdbf, "array", "write", uri, "--timestamp", str(w["timestamp"]),
            "--layout", {"R": "row", "C": "col", "G": "global", "U": "unordered"}[w["layout"]]]
    for name, (data, offsets, validity) in w["fields"].items():
        p = os.path.join(files, name)
        np.ascontiguousarray(data).tofile(p + ".bin")
        args += ["--field", f"{name}={p}.bin"]
        if offsets is not None:
            np.ascontiguousarray(offsets, dtype=np.uint64).tofile(p + ".off")
            args += ["--offsets", f"{name}={p}.off"]
        if validity is not None:
            np.ascontiguousarray(validity, dtype=np.uint8).tofile(p + ".val")
            args += ["--validity", f"{name}={p}.val"]
    if w.get("subarray") is not None:
        args += ["--subarray=" + ",".join(f"{lo},{hi}" for lo, hi in w["subarray"])]
    if w.get("batch_cells"):
        args += ["--batch-cells", str(w["batch_cells"])]
    if key is not None:
        args += ["--key", key]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"tdbf array write failed: {r.stderr.strip()}")
    return r.stdout.strip()


# ----------------------------------------------------------------------------------------
# Byte comparison


def fragment_dir(uri, t):
    d = os.path.join(uri, "__fragments")
    hits = [f for f in os.listdir(d) if f.startswith(f"__{t}_{t}_")]
    if len(hits) != 1:
        raise AssertionError(f"{uri}: {len(hits)} fragments of timestamp {t}")
    return os.path.join(d, hits[0])


def filtered_tiles(b: bytes):
    """Splits a data file into its filtered tiles (docs/FORMAT.md §4.1)."""
    pos, out = 0, []
    while pos < len(b):
        start = pos
        (n,) = struct.unpack_from("<Q", b, pos)
        pos += 8
        for _ in range(n):
            _, filt, md = struct.unpack_from("<III", b, pos)
            pos += 12 + md + filt
        out.append(b[start:pos])
    return out


def decrypted(path: str, key: str) -> bytes:
    """A fragment file with every AES-GCM stage decrypted (IVs and tags dropped)."""
    import aes_ref

    k = key.encode()
    b = open(path, "rb").read()
    if os.path.basename(path) == "__fragment_metadata.tdb":
        (size,) = struct.unpack_from("<Q", b, len(b) - 8)
        end, pos, out = len(b) - 8 - size, 0, []
        while pos < end:
            _, persisted, _, _, _, _, fps = struct.unpack_from("<IQQBQBI", b, pos)
            body = b[pos + 34 + fps: pos + 34 + fps + persisted]
            out.append(b[pos:pos + 34 + fps] + aes_ref.strip_tile(k, body)[0])
            pos += 34 + fps + persisted
        return b"".join(out) + b[end:]
    return b"".join(
        t if t == bytes(8) else aes_ref.strip_tile(k, t)[0] for t in filtered_tiles(b)
    )


GT_KINDS = ["tile offsets", "tile var offsets", "tile var sizes", "tile validity offsets",
            "tile mins", "tile maxs", "tile sums", "tile null counts"]


def summaries(generic_tile: bytes, num: int) -> list:
    """The per-slot (min, max, sum, null count) of an unencrypted fragment summary tile."""
    _, persisted, _, _, _, _, fps = struct.unpack_from("<IQQBQBI", generic_tile, 0)
    body = generic_tile[34 + fps:34 + fps + persisted]
    (n,) = struct.unpack_from("<Q", body, 0)
    pos, parts = 8, []
    import zlib
    for _ in range(n):
        _, filt, md = struct.unpack_from("<III", body, pos)
        pos += 12 + md
        parts.append(zlib.decompress(body[pos:pos + filt]))
        pos += filt
    p, out, pos = b"".join(parts), [], 0
    for _ in range(num):
        (k,) = struct.unpack_from("<Q", p, pos)
        mn = p[pos + 8:pos + 8 + k]
        pos += 8 + k
        (k,) = struct.unpack_from("<Q", p, pos)
        mx = p[pos + 8:pos + 8 + k]
        pos += 8 + k
        out.append((mn, mx, p[pos:pos + 16]))
        pos += 16
    return out


def metadata_differences(a: bytes, b: bytes) -> set:
    """Which parts of two `__fragment_metadata.tdb` (same schema) differ: (generic tile kind,
    slot) (docs/ARRAY.md §4.1, §4.2), ("summary", slot), ("rtree", None), ("conditions",
    None), ("footer", None) (its fields before the generic tile offsets, which move when a
    tile's size does)."""
    def split(x):
        (size,) = struct.unpack_from("<Q", x, len(x) - 8)
        end, pos, tiles = len(x) - 8 - size, 0, []
        while pos < end:
            _, persisted, _, _, _, _, fps = struct.unpack_from("<IQQBQBI", x, pos)
            tiles.append(x[pos:pos + 34 + fps + persisted])
            pos += 34 + fps + persisted
        return tiles, x[end:len(x) - 8]
    (ta, fa), (tb, fb) = split(a), split(b)
    if len(ta) != len(tb):
        return {("tile count", None)}
    num = (len(ta) - 3) // 8
    names = ([("rtree", None)] + [(k, slot) for k in GT_KINDS for slot in range(num)]
             + [("summary", None), ("conditions", None)])
    out = {names[i] for i in range(len(ta)) if ta[i] != tb[i] and names[i][0] != "summary"}
    if ta[-2] != tb[-2]:
        sa, sb = summaries(ta[-2], num), summaries(tb[-2], num)
        out |= {("summary", slot) for slot in range(num) if sa[slot] != sb[slot]}
    tail = 8 * (3 + 8 * num)
    if fa[:-tail] != fb[:-tail]:
        out.add(("footer", None))
    return out


def string_bounds_slots(sch) -> set:
    """Slots of var-size CHAR/STRING_ASCII attributes: where TileDB 2.30's dense writer can
    store wrong tile min/max and null counts (docs/DIFFERENCES.md)."""
    return {i for i, a in enumerate(sch)
            if a.isvar and a._tiledb_dtype in (lt.DataType.CHAR, lt.DataType.STRING_ASCII)}


def char_summary_slots(sch) -> set:
    """Slots of nullable fixed-size CHAR/STRING_ASCII attributes: TileDB's fragment min/max
    of them is wrong after an all-null tile (docs/DIFFERENCES.md)."""
    return {i for i, a in enumerate(sch) if not a.isvar and a.isnullable
            and a._tiledb_dtype in (lt.DataType.CHAR, lt.DataType.STRING_ASCII)}


def compare_fragments(a_dir, b_dir, key):
    """[(file, equal)] for every file of either fragment."""
    names = sorted(set(os.listdir(a_dir)) | set(os.listdir(b_dir)))
    out = []
    for f in names:
        pa, pb = os.path.join(a_dir, f), os.path.join(b_dir, f)
        if not (os.path.exists(pa) and os.path.exists(pb)):
            out.append((f, False))
            continue
        if key is None:
            eq = open(pa, "rb").read() == open(pb, "rb").read()
        else:
            eq = decrypted(pa, key) == decrypted(pb, key)
        out.append((f, eq))
    return out


# ----------------------------------------------------------------------------------------
# Reads, fragments, aggregates


def cell_mask(v) -> np.ndarray:
    """A masked array's mask, one bool per cell (record cells: any field masked)."""
    m = np.ma.getmaskarray(v)
    if m.dtype.names:
        m = np.any([m[n] for n in m.dtype.names], axis=0)
    return m


def same(x, y) -> bool:
    if isinstance(x, np.ma.MaskedArray) or isinstance(y, np.ma.MaskedArray):
        mx, my = cell_mask(x), cell_mask(y)
        if not np.array_equal(mx, my):
            return False
        return same(np.ma.getdata(x)[~mx], np.ma.getdata(y)[~my])
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    if x.dtype == object:
        return all(a == b for a, b in zip(x.flat, y.flat))
    if x.dtype.kind in "fcMm":
        return np.array_equal(x.view(np.uint8), y.view(np.uint8)) or (
            x.dtype.kind in "fc" and np.array_equal(x, y, equal_nan=True))
    return np.array_equal(x, y)


def read_all(uri, key):
    with tiledb.open(uri, ctx=ctx_for(key)) as A:
        if A.schema.sparse:
            return A.query(order="G")[:]
        return A[:]


def fragments_of(uri, key):
    out = []
    for f in tiledb.array_fragments(uri, ctx=ctx_for(key)):
        out.append((f.version, f.cell_num, str(f.nonempty_domain), f.timestamp_range, f.sparse))
    return out


def agg_child(uri, key):
    """Runs in a child process: every aggregate of every attribute, as JSON."""
    out = {}
    with tiledb.open(uri, ctx=ctx_for(key)) as A:
        for i in range(A.schema.nattr):
            name = A.schema.attr(i).name
            for agg in AGGS:
                try:
                    v = A.query().agg({name: [agg]})[:]
                    if isinstance(v, dict):
                        v = v.get(agg, v)
                    if isinstance(v, np.generic):
                        v = v.item()
                    if isinstance(v, str) and agg in ("min", "max"):
                        v = v.encode()
                    if isinstance(v, bytes):
                        v = "b:" + v.hex()
                    if isinstance(v, float) and math.isnan(v):
                        v = "nan"
                    out[f"{name}.{agg}"] = v
                except Exception as e:  # noqa: BLE001 - the message is the result
                    out[f"{name}.{agg}"] = "error"
    print(json.dumps(out, default=str))


def agg_equal(x, y) -> bool:
    """Aggregate results equal; float sums within rounding (TileDB adds tile sums in parallel,
    so its own float sums vary in the last bits from run to run)."""
    if isinstance(x, float) and isinstance(y, float):
        return math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-300)
    return x == y


def aggregates(uri, key):
    r = subprocess.run([sys.executable, __file__, "--agg-child", uri] + ([key] if key else []),
                       capture_output=True, text=True)
    if r.returncode != 0:
        return {"crash": f"exit {r.returncode}: {r.stderr.strip()[-200:]}"}
    return json.loads(r.stdout)


def written_mask(uri, key, boxes):
    """Dense: which cells of the domain some write covered (aggregates leave the others
    out); sparse: None."""
    with tiledb.open(uri, ctx=ctx_for(key)) as A:
        if A.schema.sparse:
            return None
        dom = [tuple(int(v) for v in d.domain) for d in A.schema.domain]
    mask = np.zeros([hi - lo + 1 for lo, hi in dom], bool)
    for box in boxes:
        box = box or dom
        mask[tuple(slice(lo - d[0], hi - d[0] + 1) for (lo, hi), d in zip(box, dom))] = True
    return mask


def truth(uri, key, boxes):
    """count, null_count, and integer sum/min/max of every attribute from the written cells."""
    out = {}
    cells = read_all(uri, key)
    written = written_mask(uri, key, boxes)
    with tiledb.open(uri, ctx=ctx_for(key)) as A:
        for i in range(A.schema.nattr):
            at = A.schema.attr(i)
            v = cells[at.name]
            if written is not None:
                v = v[written]
            mask = cell_mask(v) if at.isnullable else np.zeros(np.shape(v), bool)
            # TileDB counts every cell of the domain, the other aggregates the written ones.
            out[f"{at.name}.count"] = int(np.size(cells[at.name]))
            if at.isnullable:
                out[f"{at.name}.null_count"] = int(mask.sum())
            data = np.ma.getdata(v)
            if at.isvar and at.isascii:
                valid = [x if isinstance(x, bytes) else x.encode() for x, m in zip(data.flat, mask.flat) if not m]
                if valid:
                    out[f"{at.name}.min"] = "b:" + min(valid).hex()
                    out[f"{at.name}.max"] = "b:" + max(valid).hex()
            if not at.isvar and at.ncells == 1 and data.dtype.kind in "iu":
                valid = data[~mask]
                if valid.size:
                    out[f"{at.name}.min"] = int(valid.min())
                    out[f"{at.name}.max"] = int(valid.max())
                    s = int(valid.astype(object).sum())
                    if -(2**63) <= s < 2**63:
                        out[f"{at.name}.sum"] = s
    return out


# ----------------------------------------------------------------------------------------
# tdbf reads


def tdbf(tdbf_path, *args, key=None):
    extra = ["--key", key] if key else []
    r = subprocess.run([tdbf_path, "array", *args, *extra], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


# ----------------------------------------------------------------------------------------
# Cases


def dim(name, lo, hi, tile, dtype):
    return tiledb.Dim(name, domain=(lo, hi), tile=tile, dtype=dtype)


def schema(dims, attrs, sparse=False, ctx=None, **kw):
    return tiledb.ArraySchema(domain=tiledb.Domain(*dims), attrs=attrs, sparse=sparse, ctx=ctx, **kw)


def dense_writes(sch, boxes, name):
    """One write per (box, layout, timestamp) with fresh cells for every attribute."""
    rng = rng_for(name)
    out = []
    for box, layout, t, *rest in boxes:
        n = 1
        if box is None:
            for d in sch.domain:
                n *= int(d.domain[1]) - int(d.domain[0]) + 1
        else:
            for lo, hi in box:
                n *= hi - lo + 1
        fields = {a.name: cells_for(a, n, rng) for a in sch}
        w = {"layout": layout, "subarray": box, "timestamp": t, "fields": fields}
        if rest:
            w["batch_cells"] = rest[0]
        out.append(w)
    return out


def split_cells(f):
    """A coordinate buffer's cells as hashable values."""
    data, offsets, _ = f
    if offsets is None:
        return list(data.tolist())
    b = data.tobytes()
    ends = list(offsets[1:]) + [len(b)]
    return [b[int(s):int(e)] for s, e in zip(offsets, ends)]


def take_cells(f, keep):
    data, offsets, validity = f
    if offsets is None:
        return (data[keep], None, None if validity is None else validity[keep])
    cells = split_cells(f)
    return (*var_buffers([cells[i] for i in keep]), None if validity is None else validity[keep])


def sparse_writes(sch, batches, name):
    """Sparse writes: (cell count, layout, timestamp[, batch cells]); coordinates random in
    the domain (unique unless the schema allows duplicates), sorted for global order by a
    TileDB read of an unordered write into a scratch array."""
    rng = rng_for(name)
    out = []
    for n, layout, t, *rest in batches:
        fields = {}
        for d in sch.domain:
            if d.isvar:
                fields[d.name] = (*var_buffers(strings(rng, n, "abcde", 4)), None)
            else:
                lo, hi = d.domain
                if np.issubdtype(d.dtype, np.floating):
                    fields[d.name] = (rng.uniform(lo, hi, n).astype(d.dtype), None, None)
                else:
                    fields[d.name] = (rng.integers(lo, hi, n, endpoint=True, dtype=d.dtype), None, None)
        if not sch.allows_duplicates:
            seen, keep = set(), []
            cols = [split_cells(fields[d.name]) for d in sch.domain]
            for i in range(n):
                k = tuple(c[i] for c in cols)
                if k not in seen:
                    seen.add(k)
                    keep.append(i)
            fields = {name: take_cells(f, keep) for name, f in fields.items()}
            n = len(keep)
        for a in sch:
            fields[a.name] = cells_for(a, n, rng)
        out.append({"layout": layout, "subarray": None, "timestamp": t, "fields": fields,
                    "batch_cells": rest[0] if rest else None})
    return out


def case_list():
    F = tiledb.FilterList
    cases = []

    def add(name, make_schema, writes, key=None, sparse_sort=False, note=None, known=None):
        cases.append(dict(name=name, schema=make_schema, writes=writes, key=key,
                          sparse_sort=sparse_sort, note=note, known=known or {}))

    fixed_types = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                   np.uint64, np.float32, np.float64, "M8[D]", "M8[ns]", "m8[ms]", np.bool_,
                   "S1", "S3", np.complex64, np.dtype([("", np.int32)] * 3)]

    def types_1d(ctx):
        return schema([dim("x", 0, 99, 10, np.int64)],
                      [tiledb.Attr(f"a{i}", dtype=t, ctx=ctx) for i, t in enumerate(fixed_types)], ctx=ctx)
    add("dense-1d-every-fixed-type", types_1d,
        lambda s, n: dense_writes(s, [([(5, 47)], "R", 5), ([(40, 99)], "R", 6)], n))

    def nullable_types_1d(ctx):
        return schema([dim("x", -20, 20, 8, np.int32)],
                      [tiledb.Attr(f"n{i}", dtype=t, nullable=True, ctx=ctx) for i, t in enumerate(fixed_types)], ctx=ctx)
    add("dense-1d-nullable-every-fixed-type", nullable_types_1d,
        lambda s, n: dense_writes(s, [([(-20, 20)], "R", 5), ([(-3, 9)], "R", 6)], n))

    def var_2d(ctx):
        return schema([dim("r", 0, 5, 3, np.int32), dim("c", 0, 5, 3, np.int32)],
                      [tiledb.Attr("f", dtype=np.float64, nullable=True, ctx=ctx),
                       tiledb.Attr("i", dtype=np.int16, ctx=ctx),
                       tiledb.Attr("s", dtype="ascii", var=True, ctx=ctx),
                       tiledb.Attr("u", dtype=str, var=True, nullable=True, ctx=ctx),
                       tiledb.Attr("b", dtype=bytes, var=True, ctx=ctx),
                       tiledb.Attr("blob", dtype="blob", var=True, ctx=ctx),
                       tiledb.Attr("c3", dtype="S3", nullable=True, ctx=ctx),
                       tiledb.Attr("m", dtype=np.dtype([("", np.float32)] * 2), nullable=True, ctx=ctx)], ctx=ctx)
    add("dense-2d-var-nullable-multivalue", var_2d,
        lambda s, n: dense_writes(s, [([(1, 3), (1, 3)], "R", 5), ([(0, 5), (2, 4)], "C", 6),
                                      ([(3, 5), (0, 5)], "R", 7)], n),
        known={"metadata": "more attributes than tiles: TileDB's OrderedWriter sets the var-size "
                           "min/max of every batch's tiles at index 0"})

    def ascii_nullable_2d(ctx):
        return schema([dim("r", 0, 5, 3, np.int32), dim("c", 0, 5, 3, np.int32)],
                      [tiledb.Attr("s", dtype="ascii", var=True, nullable=True, ctx=ctx)], ctx=ctx)
    add("dense-2d-nullable-ascii-partial-tiles", ascii_nullable_2d,
        lambda s, n: dense_writes(s, [([(1, 3), (1, 3)], "R", 5)], n),
        known={"metadata": "TileDB reads the validity of var-size cell c at c - start"})
    add("dense-1d-nullable-ascii-whole-tiles",
        lambda ctx: schema([dim("x", 0, 11, 4, np.int32)],
                           [tiledb.Attr("s", dtype="ascii", var=True, nullable=True, ctx=ctx),
                            tiledb.Attr("v", dtype=np.int32, ctx=ctx)], ctx=ctx),
        lambda s, n: dense_writes(s, [([(0, 11)], "R", 5)], n))

    def cube(ctx):
        return schema([dim("x", 0, 9, 3, np.uint16), dim("y", 0, 9, 4, np.uint16), dim("z", 0, 9, 5, np.uint16)],
                      [tiledb.Attr("a", dtype=np.int32, ctx=ctx),
                       tiledb.Attr("f", dtype=np.float32, nullable=True, ctx=ctx),
                       tiledb.Attr("s", dtype="ascii", var=True, ctx=ctx)],
                      cell_order="col-major", tile_order="row-major", ctx=ctx)
    add("dense-3d-col-cells", cube,
        lambda s, n: dense_writes(s, [([(1, 8), (2, 9), (0, 6)], "R", 5), ([(0, 4), (3, 7), (4, 9)], "C", 6),
                                      (None, "R", 7)], n))

    def orders(ctx):
        return schema([dim("r", -4, 7, 4, np.int64), dim("c", 10, 21, 3, np.int64)],
                      [tiledb.Attr("a", dtype=np.uint32, ctx=ctx), tiledb.Attr("u", dtype=str, var=True, ctx=ctx)],
                      cell_order="col-major", tile_order="col-major", ctx=ctx)
    add("dense-2d-col-tiles", orders,
        lambda s, n: dense_writes(s, [([(-3, 5), (11, 20)], "R", 5), ([(-4, 7), (10, 21)], "C", 6)], n))

    def filters(ctx, rows=47):
        return schema(
            [dim("r", 0, rows, 16, np.int32), dim("c", 0, 9, 5, np.int32)],
            [tiledb.Attr("dd", dtype=np.int64, filters=F([tiledb.DoubleDeltaFilter(), tiledb.ZstdFilter(level=3)]), ctx=ctx),
             tiledb.Attr("bs", dtype=np.float64, filters=F([tiledb.ByteShuffleFilter(), tiledb.LZ4Filter()]), ctx=ctx),
             tiledb.Attr("dl", dtype=np.int32, filters=F([tiledb.DeltaFilter(), tiledb.BitWidthReductionFilter(), tiledb.GzipFilter(level=6)]), ctx=ctx),
             tiledb.Attr("pd", dtype=np.uint16, filters=F([tiledb.PositiveDeltaFilter(), tiledb.Bzip2Filter()]), ctx=ctx),
             tiledb.Attr("bt", dtype=np.float32, filters=F([tiledb.BitShuffleFilter(), tiledb.ZstdFilter()]), ctx=ctx),
             tiledb.Attr("x", dtype=np.int16, filters=F([tiledb.XORFilter(), tiledb.ChecksumMD5Filter()]), ctx=ctx),
             tiledb.Attr("sc", dtype=np.float64, filters=F([tiledb.FloatScaleFilter(0.5, 0.0, 8)]), ctx=ctx),
             tiledb.Attr("rle", dtype="ascii", var=True, filters=F([tiledb.RleFilter()]), ctx=ctx),
             tiledb.Attr("dict", dtype=str, var=True, filters=F([tiledb.DictionaryFilter(), tiledb.ZstdFilter()]), ctx=ctx),
             tiledb.Attr("sha", dtype=np.uint8, nullable=True, filters=F([tiledb.ChecksumSHA256Filter()]), ctx=ctx),
             tiledb.Attr("gz", dtype=bytes, var=True, nullable=True, filters=F([tiledb.GzipFilter()]), ctx=ctx)],
            offsets_filters=F([tiledb.DoubleDeltaFilter(), tiledb.ZstdFilter()]),
            validity_filters=F([tiledb.GzipFilter(level=2)]), ctx=ctx)
    add("dense-2d-filter-families", filters,
        # Whole tiles in row-major order: POSITIVE_DELTA refuses the zeros of padding and the
        # steps of col-major cells.
        lambda s, n: dense_writes(s, [([(0, 47), (0, 9)], "R", 5), ([(16, 31), (0, 9)], "R", 6)], n))
    add("dense-2d-filter-families-partial-tiles",
        lambda ctx: schema(
            [dim("r", 0, 39, 16, np.int32), dim("c", 0, 9, 5, np.int32)],
            [a for a in filters(ctx, 39) if not a.name.startswith("pd")],
            offsets_filters=F([tiledb.DoubleDeltaFilter(), tiledb.ZstdFilter()]),
            validity_filters=F([tiledb.GzipFilter(level=2)]), ctx=ctx),
        lambda s, n: dense_writes(s, [([(3, 36), (0, 9)], "R", 5), ([(0, 39), (2, 6)], "C", 6)], n))

    def encrypted(ctx):
        return schema([dim("r", 0, 9, 4, np.int32), dim("c", 0, 9, 4, np.int32)],
                      [tiledb.Attr("a", dtype=np.int64, filters=F([tiledb.ZstdFilter()]), ctx=ctx),
                       tiledb.Attr("n", dtype=np.float32, nullable=True, ctx=ctx),
                       tiledb.Attr("s", dtype="ascii", var=True, ctx=ctx)], ctx=ctx)
    add("dense-2d-encrypted", encrypted,
        lambda s, n: dense_writes(s, [([(1, 8), (2, 9)], "R", 5), ([(0, 9), (0, 9)], "C", 6)], n), key=KEY)

    def stream(ctx):
        return schema([dim("r", 0, 11, 4, np.int32), dim("c", 0, 11, 3, np.int32)],
                      [tiledb.Attr("a", dtype=np.int32, ctx=ctx),
                       tiledb.Attr("n", dtype=np.float64, nullable=True, ctx=ctx),
                       tiledb.Attr("s", dtype="ascii", var=True, nullable=True, ctx=ctx)], ctx=ctx)
    add("dense-2d-global-order-streamed", stream,
        lambda s, n: dense_writes(s, [([(4, 11), (0, 11)], "G", 5, 7), ([(0, 3), (3, 8)], "G", 6, 12)], n))

    def mostly_null(ctx, sparse):
        return schema([dim("x", 0, 59, 4, np.int32)],
                      [tiledb.Attr("nn_i", dtype=np.int32, nullable=True, ctx=ctx),
                       tiledb.Attr("nn_f", dtype=np.float32, nullable=True, ctx=ctx),
                       tiledb.Attr("nn_c", dtype="S2", nullable=True, ctx=ctx),
                       tiledb.Attr("nn_s", dtype="ascii", var=True, nullable=True, ctx=ctx),
                       tiledb.Attr("nn_u", dtype=str, var=True, nullable=True, ctx=ctx)],
                      sparse=sparse, capacity=3, ctx=ctx)
    add("dense-1d-mostly-null-whole-tiles", lambda ctx: mostly_null(ctx, False),
        lambda s, n: dense_writes(s, [([(0, 59)], "R", 5), ([(8, 23)], "G", 6)], n))
    add("sparse-1d-mostly-null", lambda ctx: mostly_null(ctx, True),
        lambda s, n: sparse_writes(s, [(40, "U", 5), (25, "U", 6)], n))

    def sparse2d(ctx):
        return schema([dim("x", 0, 99, 10, np.int64), dim("y", -5.0, 5.0, 2.5, np.float64)],
                      [tiledb.Attr("a", dtype=np.int32, nullable=True, ctx=ctx),
                       tiledb.Attr("s", dtype="ascii", var=True, ctx=ctx),
                       tiledb.Attr("u", dtype=str, var=True, ctx=ctx)],
                      sparse=True, capacity=4, ctx=ctx)
    add("sparse-2d-unordered", sparse2d,
        lambda s, n: sparse_writes(s, [(23, "U", 5), (9, "U", 6)], n))
    # tdbf submits these in batches (7 and 4 cells), TileDB in one: the same fragment.
    add("sparse-2d-unordered-batches", sparse2d,
        lambda s, n: sparse_writes(s, [(23, "U", 5, 7), (9, "U", 6, 4)], n))

    def sparse_str(ctx):
        return schema([tiledb.Dim("k", dtype="ascii", domain=(None, None), tile=None),
                       dim("t", 0, 1000, 100, np.uint32)],
                      [tiledb.Attr("v", dtype=np.float32, ctx=ctx)],
                      sparse=True, capacity=5, ctx=ctx)
    add("sparse-string-dim-global-order-streamed", sparse_str,
        lambda s, n: sparse_writes(s, [(31, "G", 5, 6)], n), sparse_sort=True)
    add("sparse-string-dim-unordered-batches", sparse_str,
        lambda s, n: sparse_writes(s, [(31, "U", 5, 6)], n))

    def hilbert(ctx):
        return schema([dim("x", 0, 1000, 100, np.int32), dim("y", 0, 1000, 100, np.int32)],
                      [tiledb.Attr("a", dtype=np.uint64, ctx=ctx)],
                      sparse=True, capacity=3, cell_order="hilbert", ctx=ctx)
    add("sparse-hilbert-encrypted", hilbert, lambda s, n: sparse_writes(s, [(17, "U", 5)], n), key=KEY)
    return cases


def sort_global(sch, w, key, scratch):
    """Puts a sparse write's cells into TileDB's global order: TileDB writes them unordered
    into a scratch copy of the schema and reads them back in global order."""
    if os.path.exists(scratch):
        shutil.rmtree(scratch)
    tiledb.Array.create(scratch, sch, ctx=ctx_for(key))
    tiledb_write(scratch, dict(w, layout="U", timestamp=1), key)
    with tiledb.open(scratch, ctx=ctx_for(key)) as A:
        r = A.query(order="G")[:]
    fields = {}
    for d in sch.domain:
        if d.isvar:
            fields[d.name] = (*var_buffers(list(r[d.name])), None)
        else:
            fields[d.name] = (np.ascontiguousarray(r[d.name]), None, None)
    for a in sch:
        v = r[a.name]
        validity = None
        if a.isnullable:
            validity = (~cell_mask(v)).astype(np.uint8)
            v = np.ma.getdata(v)
        if a.isvar:
            fields[a.name] = (*var_buffers(list(v)), validity)
        else:
            fields[a.name] = (np.ascontiguousarray(v), None, validity)
    return dict(w, fields=fields)


# ----------------------------------------------------------------------------------------


class Result:
    def __init__(self, name):
        self.name, self.checks, self.failures, self.files, self.notes = name, 0, [], [], []
        self.string_metadata_differs = False

    def check(self, ok, what):
        self.checks += 1
        if not ok:
            self.failures.append(what)


def run_case(case, tdbf_path, work) -> Result:
    res = Result(case["name"])
    key = case["key"]
    ctx = ctx_for(key)
    root = os.path.join(work, case["name"])
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    a, b = os.path.join(root, "A"), os.path.join(root, "B")
    sch = case["schema"](ctx)
    tiledb.Array.create(a, sch, ctx=ctx)
    shutil.copytree(a, b)
    writes = case["writes"](sch, case["name"])
    for w in writes:
        if case["sparse_sort"]:
            w = sort_global(sch, w, key, os.path.join(root, "scratch"))
        tiledb_write(a, w, key)
        tdbf_write(tdbf_path, b, w, key, root)
        t = w["timestamp"]
        for f, eq in compare_fragments(fragment_dir(a, t), fragment_dir(b, t), key):
            res.files.append((t, f, eq))
            if not eq and f == "__fragment_metadata.tdb" and key is None:
                diff = metadata_differences(open(os.path.join(fragment_dir(a, t), f), "rb").read(),
                                            open(os.path.join(fragment_dir(b, t), f), "rb").read())
                strings_, chars = string_bounds_slots(sch), char_summary_slots(sch)
                bad = {d for d in diff
                       if not (d[0] in ("tile mins", "tile maxs", "tile null counts") and d[1] in strings_)
                       and not (d[0] == "summary" and d[1] in strings_ | chars)}
                res.check(not bad, f"t={t} {f}: {sorted(bad, key=str)} differ from TileDB's")
                names = sorted({f"{k} of {sch.attr(s_).name}" if s_ is not None else k for k, s_ in diff})
                why = case["known"].get("metadata") or (
                    "var-size string bounds" if any(d[1] in strings_ for d in diff)
                    else "fixed-size string fragment bounds after an all-null tile")
                res.notes.append(f"t={t} {f}: {', '.join(names)} differ: TileDB's are wrong ({why})")
                res.string_metadata_differs = True
            else:
                res.check(eq, f"t={t} {f} differs from TileDB's")
    ra, rb = read_all(a, key), read_all(b, key)
    res.check(set(ra) == set(rb) and all(same(ra[k], rb[k]) for k in ra), "TileDB-Py reads different cells")
    res.check(fragments_of(a, key) == fragments_of(b, key), "array_fragments differ")
    ga, gb = aggregates(a, key), aggregates(b, key)
    res.check("crash" not in gb, f"aggregates crash libtiledb on B: {gb.get('crash')}")
    tb = truth(b, key, [w["subarray"] for w in writes])
    for k, v in tb.items():
        if ga.get(k) == "error" and gb.get(k) == "error":
            continue  # TileDB has no such aggregate for this field
        res.check(agg_equal(gb.get(k), v), f"aggregate {k}: {gb.get(k)} on B, the cells give {v}")
    for k in ga:
        if not agg_equal(ga[k], gb.get(k)):
            if res.string_metadata_differs and k in tb and gb.get(k) == tb[k]:
                res.notes.append(f"aggregate {k}: TileDB's fragment gives {ga[k]}, ours {gb[k]} (the cells' value)")
            else:
                res.check(False, f"aggregate {k}: {ga[k]} on A, {gb.get(k)} on B")
    rc, out, err = tdbf(tdbf_path, "verify", b, key=key)
    res.check(rc == 0, f"tdbf array verify B: {out.strip()[-300:]} {err.strip()}")
    ca = tdbf(tdbf_path, "cat", a, "--format", "json", key=key)
    cb = tdbf(tdbf_path, "cat", b, "--format", "json", key=key)
    res.check(ca[0] == 0 and ca == cb, f"tdbf array cat differs: {ca[2]} {cb[2]}")
    # Consolidate copies, so that the fragments stay for inspection.
    errors = []
    for uri in (a, b):
        shutil.copytree(uri, uri + "-consolidated")
        try:
            tiledb.consolidate(uri + "-consolidated", ctx=ctx)
            tiledb.vacuum(uri + "-consolidated", ctx=ctx)
            errors.append(None)
        except tiledb.TileDBError as e:
            errors.append(str(e).split("(")[-1].split(":")[0])
    if errors[0] is not None:
        res.check(errors[0] == errors[1], f"consolidation: {errors[0]} on A, {errors[1]} on B")
        res.notes.append(f"TileDB cannot consolidate TileDB's fragments either: {errors[0].strip(') ')}")
        return res
    res.check(errors[1] is None, f"TileDB cannot consolidate B: {errors[1]}")
    rbc, rac = read_all(b + "-consolidated", key), read_all(a + "-consolidated", key)
    res.check(set(rbc) == set(rac) and all(same(rac[k], v) for k, v in rbc.items()),
              "after consolidate+vacuum, B reads differently from A")
    res.check(all(same(rb[k], v) for k, v in rbc.items()), "B reads differently after consolidate+vacuum")
    return res


def duplicate_tie_checks(tdbf_path, work) -> Result:
    """Unordered writes into a sparse array allowing duplicates: TileDB's unordered writer
    sorts cell positions with `parallel_sort` (middle-pivot quicksort to a depth set by
    `sm.compute_concurrency_level`, then libstdc++'s `std::sort`), which is not stable; the
    duplicates' order in the attribute tiles is that sort's. Ours (src/array/order/cpp.rs)
    reproduces it for the writer's thread count: every file must be byte-identical to TileDB's
    at each concurrency level."""
    res = Result("duplicate-ties-unordered")
    root = os.path.join(work, "dups")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    rng = np.random.default_rng(7)
    n = 4000
    x = rng.integers(0, 999, n, endpoint=True).astype(np.int64)
    a = np.arange(n, dtype=np.int64)
    x.tofile(os.path.join(root, "x.bin"))
    a.tofile(os.path.join(root, "a.bin"))
    for c in [1, 2, 3, 4, 8]:
        A, B = os.path.join(root, f"A{c}"), os.path.join(root, f"B{c}")
        sch = tiledb.ArraySchema(
            domain=tiledb.Domain(tiledb.Dim("x", domain=(0, 999), tile=100, dtype=np.int64)),
            sparse=True, allows_duplicates=True, capacity=128,
            attrs=[tiledb.Attr("a", dtype=np.int64,
                               filters=tiledb.FilterList([tiledb.ZstdFilter()]))])
        tiledb.Array.create(A, sch)
        shutil.copytree(A, B)
        ctx = tiledb.Ctx({"sm.compute_concurrency_level": str(c)})
        with tiledb.open(A, "w", timestamp=5, ctx=ctx) as arr:
            arr[x] = {"a": a}
        r = subprocess.run([tdbf_path, "array", "write", B, "--timestamp", "5", "--layout",
                            "unordered", "--threads", str(c),
                            "--field", f"x={root}/x.bin", "--field", f"a={root}/a.bin"],
                           capture_output=True, text=True)
        res.check(r.returncode == 0, f"concurrency {c}: tdbf array write failed: {r.stderr.strip()}")
        if r.returncode != 0:
            continue
        for f, eq in compare_fragments(fragment_dir(A, 5), fragment_dir(B, 5), None):
            res.files.append((5, f, eq))
            res.check(eq, f"concurrency {c}: {f} differs from TileDB's")
    return res


def leftover_and_error_checks(tdbf_path, work) -> Result:
    """Failed writes commit nothing; uncommitted fragment folders are named by verify and
    ignored by TileDB."""
    res = Result("errors-and-leftovers")
    root = os.path.join(work, "errors")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    uri = os.path.join(root, "A")
    tiledb.Array.create(uri, schema([dim("x", 0, 9, 5, np.int32)], [tiledb.Attr("a", dtype=np.int32)]))
    np.arange(4, dtype=np.int32).tofile(os.path.join(root, "a4.bin"))
    for args, why in [
        (["--subarray", "0,4"], "4 cells for a box of 5"),
        (["--subarray", "0,10"], "a box outside the domain"),
        (["--subarray", "3,6", "--layout", "global"], "a global-order box not on tile bounds"),
    ]:
        r = subprocess.run([tdbf_path, "array", "write", uri, "--field", f"a={root}/a4.bin", *args],
                           capture_output=True, text=True)
        res.check(r.returncode == 1 and r.stderr.startswith("tdbf: "), f"{why}: exit {r.returncode}")
        res.check(os.listdir(os.path.join(uri, "__commits")) == [], f"{why}: a commit was written")
        frags = os.path.join(uri, "__fragments")
        res.check(not os.path.exists(frags) or os.listdir(frags) == [], f"{why}: a fragment folder was left")
    r = subprocess.run([tdbf_path, "array", "write", uri, "--field", f"a={root}/a4.bin", "--subarray", "2,5",
                        "--timestamp", "3"], capture_output=True, text=True)
    res.check(r.returncode == 0, f"a valid write failed: {r.stderr}")
    # A writer killed before its commit leaves a fragment folder without a commit marker.
    frag = fragment_dir(uri, 3)
    orphan = os.path.join(uri, "__fragments", "__4_4_0123456789abcdef0123456789abcdef_22")
    shutil.copytree(frag, orphan)
    rc, out, _ = tdbf(tdbf_path, "verify", uri)
    res.check(rc == 1 and "__4_4_0123456789abcdef0123456789abcdef_22" in out and "uncommitted" in out,
              f"verify does not name the uncommitted folder: {out}")
    with tiledb.open(uri) as A:
        res.check(len(tiledb.array_fragments(uri)) == 1 and list(A[2:6]["a"]) == [0, 1, 2, 3],
                  "TileDB does not ignore the uncommitted folder")
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tdbf", required=False)
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--agg-child", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    if args.agg_child:
        agg_child(args.agg_child[0], args.agg_child[1] if len(args.agg_child) > 1 else None)
        return 0
    if not args.tdbf:
        ap.error("--tdbf is required")
    tdbf_path = os.path.abspath(args.tdbf)
    work = args.workdir or tempfile.mkdtemp(prefix="tdbf-writer-")
    results = []
    for case in case_list():
        if args.cases and case["name"] not in args.cases:
            continue
        try:
            results.append(run_case(case, tdbf_path, work))
        except Exception as e:  # noqa: BLE001 - reported as the case's failure
            r = Result(case["name"])
            r.check(False, f"{type(e).__name__}: {e}")
            results.append(r)
    if not args.cases:
        results.append(leftover_and_error_checks(tdbf_path, work))
        results.append(duplicate_tie_checks(tdbf_path, work))
    failed = 0
    print(f"{'case':45} {'checks':>9} {'files identical':>16}")
    for r in results:
        eq = sum(1 for f in r.files if f[2])
        print(f"{r.name:45} {r.checks - len(r.failures):>4}/{r.checks:<4} {eq:>7}/{len(r.files):<7}")
        for n in r.notes:
            print(f"    note: {n}")
        for f in r.failures:
            print(f"    FAIL: {f}")
        failed += bool(r.failures)
    files = [f for r in results for f in r.files]
    print(f"\n{len(results) - failed}/{len(results)} cases pass; "
          f"{sum(1 for f in files if f[2])}/{len(files)} fragment files identical to TileDB's")
    kinds = {}
    for _, f, eq in files:
        k = "a*" if f.startswith("a") else "d*" if f.startswith("d") else f
        k = k + ("_var" if "_var" in f else "_validity" if "_validity" in f else "")
        kinds.setdefault(k, [0, 0])
        kinds[k][0] += eq
        kinds[k][1] += 1
    for k, (e, n) in sorted(kinds.items()):
        print(f"  {k:28} {e}/{n} identical")
    if not args.keep and not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
