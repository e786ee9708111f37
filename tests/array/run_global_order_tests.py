#!/usr/bin/env python3
"""Differential tests of tdbfilter's sparse-write ordering (src/array/write/global_order.rs) and
R-tree writer (src/array/rtree.rs) against TileDB-Py 0.36.1 (libtiledb 2.30).

Random sparse arrays (1-3 dimensions of every type TileDB-Py writes: int8..uint64, float32,
float64, datetimes, ASCII strings; domains small, wide and degenerate; tile extents or none;
row/col-major tile and cell orders and Hilbert; capacities from 1 cell) get unordered cells
written by TileDB-Py, with attribute `a` = the input index of each cell. The input coordinates
are saved beside each array; then the test-only Rust program tests/array/global_order_oracle.rs
checks, for every case, that:
- our permutation (global_order) equals the order TileDB stored the cells in (read back with
  tdbfilter's reader, which returns a single fragment's cells in stored order);
- with duplicates allowed, the stored order also equals ours when we reproduce TileDB's
  (unstable) sort at the compute concurrency level TileDB-Py was given
  (global_order_as_tiledb);
- TileDB's stored cells pass our global-order check;
- the R-tree we build from the stored tiles' MBRs serializes to the bytes of TileDB's R-tree
  generic tile, and the union of the MBRs is TileDB's non-empty domain;
- where TileDB refuses the write (a duplicate coordinate, a coordinate outside the domain), we
  refuse it with the same message.

Usage: run_global_order_tests.py [--cases N] [--seed S] [--keep DIR] [--profile PROFILE]
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import tiledb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

INT_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
FLOAT_TYPES = [np.float32, np.float64]
DATETIME_UNITS = ["D", "s", "ms", "ns"]
# Bytes of string coordinates: ASCII letters and bytes above 0x7f (TileDB's writer compares
# them as signed chars, its MBRs as unsigned). No NUL: TileDB-Py passes string coordinates
# through numpy's "S" type, which drops trailing NULs.
STRING_BYTES = list(b"abcz\x01\x7f") + [0x80, 0x90, 0xC3, 0xFF]
PRINTABLE = list(b"abcdxyz")

STATS = {"rejected schemas": 0}


def count(key, n=1):
    STATS[key] = STATS.get(key, 0) + n


class DimSpec:
    """A dimension: its TileDB-Py Dim, and how to draw coordinates."""

    def __init__(self, rng, name, kind, error_case):
        self.name = name
        self.kind = kind
        self.var = kind == "ascii"
        if kind == "ascii":
            self.dtype = None
            self.alphabet = PRINTABLE if error_case else STRING_BYTES
            self.maxlen = rng.choice([1, 2, 3, 6])
            self.dim = tiledb.Dim(name, domain=(None, None), tile=None, dtype="ascii")
            return
        if kind.startswith("datetime"):
            unit = kind.split(":")[1]
            self.dtype = np.dtype(f"datetime64[{unit}]")
            lo = rng.randint(-(10**6), 10**6)
            span = rng.choice([0, 5, 100, 10**5])
            ext = None if rng.random() < 0.3 else rng.randint(1, max(1, span))
            self.lo, self.hi = lo, lo + span
            self.dim = tiledb.Dim(
                name,
                domain=(np.datetime64(lo, unit), np.datetime64(lo + span, unit)),
                tile=None if ext is None else np.timedelta64(ext, unit),
                dtype=self.dtype,
            )
            self.int_like = True
            return
        t = np.dtype(kind)
        self.dtype = t
        if t.kind in "iu":
            info = np.iinfo(t)
            style = rng.choice(["small", "small", "wide", "edge", "degenerate"])
            if style == "small":
                span = rng.choice([3, 10, 50, 255])
                span = min(span, int(info.max) - int(info.min) - 1)
                lo = rng.randint(int(info.min), int(info.max) - span)
                hi = lo + span
            elif style == "wide":
                lo = rng.randint(int(info.min) // 2, 0)
                hi = rng.randint(1, int(info.max) // 2)
            elif style == "edge":
                # Near the type's bounds (TileDB refuses domains of 2^64 values or more).
                lo = int(info.min) + rng.randint(1, 3)
                hi = int(info.max) - rng.randint(1, 3)
            else:
                lo = rng.randint(int(info.min), int(info.max))
                hi = lo
            span = hi - lo
            ext = None
            if rng.random() < 0.75:
                ext = rng.choice([1, 2, 3, 7, max(1, span // 3), max(1, span // 50), span or 1])
                ext = max(1, min(ext, span or 1, int(info.max)))
            self.lo, self.hi = lo, hi
            self.dim = tiledb.Dim(name, domain=(t.type(lo), t.type(hi)), tile=None if ext is None else t.type(ext), dtype=t)
            self.int_like = True
        else:
            mag = rng.choice([1.0, 100.0, 1e6, 1e-3])
            lo = rng.uniform(-mag, mag)
            span = rng.choice([mag * rng.uniform(0.01, 2.0), mag])
            lo, hi = t.type(lo), t.type(lo + span)
            if hi <= lo:
                hi = np.nextafter(lo, t.type(np.inf))
            ext = None if rng.random() < 0.3 else t.type((float(hi) - float(lo)) / rng.choice([1, 2, 3.5, 10, 100]))
            if ext is not None and ext <= 0:
                ext = None
            self.lo, self.hi = lo, hi
            self.dim = tiledb.Dim(name, domain=(lo, hi), tile=ext, dtype=t)
            self.int_like = False

    def draw(self, rng):
        """One random coordinate inside the domain."""
        if self.var:
            n = rng.randint(0, self.maxlen)
            return bytes(rng.choice(self.alphabet) for _ in range(n))
        if self.int_like:
            r = rng.random()
            if r < 0.1:
                return self.lo
            if r < 0.2:
                return self.hi
            if r < 0.5 and self.hi - self.lo > 20:
                # Clustered values, so cells share tiles and coordinates.
                c = self.lo + (self.hi - self.lo) // 2
                return rng.randint(c - 10, c + 10)
            return rng.randint(self.lo, self.hi)
        r = rng.random()
        if r < 0.1:
            return self.lo
        if r < 0.2:
            return self.hi
        t = self.dtype.type
        v = t(rng.uniform(float(self.lo), float(self.hi)))
        v = min(max(v, self.lo), self.hi)
        return t(v + t(0.0))  # no -0.0: TileDB orders it like 0.0, in unspecified order

    def outside(self, rng):
        """A coordinate outside the domain, or None when the type has no room."""
        if self.var:
            return None
        if self.int_like:
            if self.kind.startswith("datetime"):
                return self.hi + rng.randint(1, 100)
            info = np.iinfo(self.dtype)
            if self.hi < info.max:
                return rng.randint(self.hi + 1, min(int(info.max), self.hi + 1000))
            if self.lo > info.min:
                return rng.randint(max(int(info.min), self.lo - 1000), self.lo - 1)
            return None
        t = self.dtype.type
        return t(float(self.hi) + (float(self.hi) - float(self.lo)) * rng.uniform(0.1, 2.0) + 1.0)

    def array(self, values):
        if self.var:
            return np.array(values, dtype=object)
        if self.kind.startswith("datetime"):
            return np.array(values, dtype=np.int64).astype(self.dtype)
        return np.array(values, dtype=self.dtype)

    def save(self, folder, index, values):
        base = os.path.join(folder, f"d{index}")
        if self.var:
            offsets, data, pos = [], bytearray(), 0
            for v in values:
                offsets.append(pos)
                data += v
                pos += len(v)
            np.array(offsets, dtype=np.uint64).tofile(base + ".off")
            with open(base + ".bin", "wb") as f:
                f.write(bytes(data))
        else:
            a = self.array(values)
            with open(base + ".bin", "wb") as f:
                f.write(a.tobytes())


def key_of(cell):
    return tuple(v if isinstance(v, bytes) else float(v) if isinstance(v, (float, np.floating)) else int(v) for v in cell)


def make_case(rng, folder, index):
    """Creates one random case in `folder`; returns its kind, or None when TileDB refused the schema."""
    mode = rng.choices(["order", "dups", "dup_error", "oob_error"], weights=[70, 12, 9, 9])[0]
    error_case = mode.endswith("error")
    ndim = rng.choice([1, 2, 2, 3])
    kinds = []
    for _ in range(ndim):
        r = rng.random()
        if r < 0.5:
            kinds.append(np.dtype(rng.choice(INT_TYPES)).name)
        elif r < 0.7:
            kinds.append(np.dtype(rng.choice(FLOAT_TYPES)).name)
        elif r < 0.8:
            kinds.append("datetime:" + rng.choice(DATETIME_UNITS))
        else:
            kinds.append("ascii")
    if error_case:
        # TileDB prints 8-bit integers as characters; the messages are compared elsewhere.
        kinds = [k if k not in ("int8", "uint8") else "int16" for k in kinds]
    try:
        dims = [DimSpec(rng, f"d{i}", k, error_case) for i, k in enumerate(kinds)]
    except tiledb.TileDBError:
        STATS["rejected schemas"] += 1
        return None
    if mode == "oob_error" and all(d.var for d in dims):
        mode = "dup_error"
    cell_order = rng.choice(["row-major", "col-major", "hilbert"])
    tile_order = rng.choice(["row-major", "col-major"])
    capacity = rng.choice([1, 2, 3, 7, 10, 11, 64, 1000])
    n = rng.choice([1, 2, 5, 30, 100, 300]) if rng.random() < 0.9 else rng.choice([1500, 4000])
    uri = os.path.join(folder, "array")
    try:
        schema = tiledb.ArraySchema(
            domain=tiledb.Domain(*[d.dim for d in dims]),
            sparse=True,
            attrs=[tiledb.Attr("a", dtype=np.int64)],
            cell_order=cell_order,
            tile_order=tile_order,
            capacity=capacity,
            allows_duplicates=(mode == "dups"),
        )
        tiledb.Array.create(uri, schema)
    except tiledb.TileDBError:
        STATS["rejected schemas"] += 1
        return None
    cells, seen = [], set()
    for _ in range(n * 3):
        if len(cells) == n:
            break
        c = tuple(d.draw(rng) for d in dims)
        k = key_of(c)
        if k in seen and mode != "dups":
            continue
        seen.add(k)
        cells.append(c)
        if mode == "dups" and rng.random() < 0.3:
            cells.append(c)
    if mode == "dups" and len(cells) == len(seen):
        cells.append(cells[0])
    expected_error = None
    if mode == "dup_error":
        cells.insert(rng.randint(0, len(cells)), cells[rng.randrange(len(cells))])
    elif mode == "oob_error":
        candidates = [i for i, d in enumerate(dims) if d.outside(rng) is not None]
        if not candidates:
            shutil.rmtree(folder)
            return None
        j = rng.choice(candidates)
        i = rng.randrange(len(cells))
        c = list(cells[i])
        c[j] = dims[j].outside(rng)
        cells[i] = tuple(c)
    rng.shuffle(cells)
    columns = [[c[j] for c in cells] for j in range(ndim)]
    data = {"a": np.arange(len(cells), dtype=np.int64)}
    coords = tuple(d.array(col) for d, col in zip(dims, columns))
    # TileDB's order among equal cells depends on its compute thread pool's size.
    concurrency = rng.choice([1, 2, 3, 4, 8])
    ctx = tiledb.Ctx({"sm.compute_concurrency_level": str(concurrency)})
    try:
        with tiledb.open(uri, "w", timestamp=1, ctx=ctx) as A:
            if ndim == 1:
                A[coords[0]] = data
            else:
                A[coords] = data
        if error_case:
            raise AssertionError(f"case {index}: TileDB-Py accepted a {mode} write")
    except tiledb.TileDBError as e:
        if not error_case:
            raise
        expected_error = str(e.args[0] if e.args else e)
    for j, (d, col) in enumerate(zip(dims, columns)):
        d.save(folder, j, col)
    with open(os.path.join(folder, "case.json"), "w") as f:
        json.dump(
            {
                "mode": mode,
                "cells": len(cells),
                "dims": [{"name": d.name, "var": d.var, "kind": d.kind} for d in dims],
                "cell_order": cell_order,
                "tile_order": tile_order,
                "capacity": capacity,
                "concurrency": concurrency,
                "error": expected_error,
            },
            f,
        )
    count(f"cases {mode}")
    count(f"cell order {cell_order}")
    count(f"{ndim}-D")
    for k in kinds:
        count("dimension " + k.split(":")[0])
    return mode


def oracle_command(profile, cases_dir):
    # The test command's build profile: the oracle was built by its build step (--all-targets),
    # so cargo only runs it.
    return ["cargo", "test", "--quiet", "--profile", profile, "--test", "global_order_oracle",
            "--", cases_dir]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--keep", default=None, help="keep the cases in this folder")
    ap.add_argument("--profile", default=os.environ.get("TDBF_PROFILE", "release"),
                    help="cargo profile of the oracle's build (default: $TDBF_PROFILE, else release)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    tmp = args.keep or tempfile.mkdtemp(prefix="tdbf_global_order_")
    if args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp, exist_ok=True)
    made = 0
    attempt = 0
    while made < args.cases:
        folder = os.path.join(tmp, f"case{attempt:05d}")
        attempt += 1
        os.makedirs(folder)
        if make_case(rng, folder, attempt) is None:
            shutil.rmtree(folder, ignore_errors=True)
            continue
        made += 1
    for k in sorted(STATS):
        print(f"  {k}: {STATS[k]}")
    r = subprocess.run(oracle_command(args.profile, tmp), cwd=ROOT)
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
