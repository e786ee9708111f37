#!/usr/bin/env python3
"""Deletes (src/array/read/deletes.rs, src/array/lifecycle/delete_cells.rs, consolidation with
delete commits) against TileDB-Py 0.36.1, through the `lifecycle` example binary
(examples/lifecycle.rs) and the tdbf CLI. TileDB-Py writes twin arrays A and B (same cells, same
timestamps); TileDB deletes in A, tdbfilter deletes the same conditions at the same timestamps in
B; the suite checks that

* tdbfilter reads A (TileDB's deletes) as TileDB reads A, at every timestamp (before, at and
  after each delete, the delete's own millisecond included);
* TileDB reads B (our deletes) as it reads A, and our `.del` commits are byte-identical to
  TileDB's;
* arrays: duplicates allowed or not (a deleted newest value does not uncover an older one),
  string dimensions, nullable var-size attributes (a null cell fails the stored negated
  condition: it is deleted), `s == None`, `in`, several deletes at one timestamp;
* TileDB consolidates A with and without `sm.consolidation.purge_deleted_cells` (fragments,
  then commits: `.del` embedded in the `.con`, then fragments again over a fragment with delete
  metadata): tdbfilter reads A as TileDB does; tdbfilter consolidates B likewise: TileDB and
  tdbfilter read B as TileDB reads A, at every timestamp, and the consolidated fragments' data
  files are byte-identical (without purge including the delete metadata `dt.tdb`, `dci.tdb`;
  counted per file);
* refusals: dense arrays with TileDB's reason; a bad condition names the column;
* speed: a read through a pending delete against the same read without it (printed).

Usage: run_delete_tests.py --bin target/debug/examples/lifecycle --tdbf target/debug/tdbf
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import tiledb

BIN = None
TDBF = None
checks = 0
TYPES = {"INT32": np.int32, "INT64": np.int64, "UINT64": np.uint64, "FLOAT64": np.float64,
         "FLOAT32": np.float32, "UINT8": np.uint8}


def run(*args, ok=True):
    r = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True)
    if ok and r.returncode != 0:
        raise AssertionError(f"lifecycle {' '.join(map(str, args))} failed: {r.stderr.strip()}")
    if not ok:
        return r
    return json.loads(r.stdout)


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        raise AssertionError(what)


def decode(f):
    """A field of `lifecycle read` as a list of Python values (None for nulls)."""
    raw = bytes.fromhex(f["data"])
    if f["offsets"] is not None:
        offs = f["offsets"] + [len(raw)]
        vals = [raw[offs[i]:offs[i + 1]].decode() for i in range(len(f["offsets"]))]
    else:
        vals = np.frombuffer(raw, dtype=TYPES[f["type"]]).tolist()
    if f["validity"] is not None:
        v = bytes.fromhex(f["validity"])
        vals = [x if v[i] else None for i, x in enumerate(vals)]
    return vals


def as_list(x):
    if isinstance(x, np.ma.MaskedArray):
        return [None if m else (v.decode() if isinstance(v, bytes) else v)
                for v, m in zip(x.data.tolist(), np.ma.getmaskarray(x).tolist())]
    return [v.decode() if isinstance(v, bytes) else v for v in x.tolist()]


def cells(d):
    names = sorted(d)
    return sorted(zip(*[d[n] for n in names]), key=repr), names


def ours(uri, t):
    r = run("read", uri, *([] if t is None else [t]))
    return cells({k: decode(v) for k, v in r.items()})


def theirs(uri, t):
    with tiledb.open(uri, timestamp=t) as A:
        r = A[:]
    return cells({k: as_list(v) for k, v in r.items()})


def same_reads(a, times, what, b=None):
    """tdbfilter reads `a` as TileDB does; with `b`, TileDB reads `b` as it reads `a`."""
    for t in times:
        want = theirs(a, t)
        got = ours(a, t)
        check(got == want, f"{what} t={t}: tdbfilter reads {got[0]} where TileDB reads {want[0]}")
        if b is not None:
            other = theirs(b, t)
            check(other == want, f"{what} t={t}: TileDB reads our array as {other[0]}, "
                                 f"its own as {want[0]}")
            check(ours(b, t) == want, f"{what} t={t}: tdbfilter reads our array differently")


def dels(uri):
    d = os.path.join(uri, "__commits")
    return sorted(f for f in os.listdir(d) if f.endswith(".del"))


def delete_both(a, b, cond, t):
    with tiledb.open(a, "d", timestamp=t) as A:
        A.query(cond=cond).submit()
    before = set(dels(b))
    commit = run("delete-cells", b, cond, t)["commit"]
    name = os.path.basename(commit)
    check(name not in before and name in dels(b), f"delete {cond!r}: commit {commit} written")
    check(name.startswith(f"__{t}_{t}_") and name.endswith("_22.del"), f"commit name {name}")
    # TileDB's commit of the same condition at the same timestamp: byte-identical.
    mine = open(os.path.join(b, "__commits", name), "rb").read()
    stamp = f"__{t}_{t}_"
    cands = [open(os.path.join(a, "__commits", f), "rb").read() for f in dels(a)
             if f.startswith(stamp)]
    check(mine in cands, f"delete {cond!r} at {t}: our .del differs from TileDB's")


COMPARED = {}  # data file name -> byte-identical comparisons with TileDB's


def same_data_files(a, b, what, expect_delete_meta=None):
    """The newest fragment of each array: the same files, data files byte-identical (counted
    per file name); `expect_delete_meta`: whether dt.tdb and dci.tdb must be there."""
    def newest(u):
        return max(tiledb.array_fragments(u), key=lambda f: f.timestamp_range).uri.replace(
            "file://", "")
    da, db = newest(a), newest(b)
    fa, fb = sorted(os.listdir(da)), sorted(os.listdir(db))
    check(fa == fb, f"{what}: files {fa} vs {fb}")
    if expect_delete_meta is not None:
        check(("dt.tdb" in fa and "dci.tdb" in fa) == expect_delete_meta,
              f"{what}: delete metadata files {'missing' if expect_delete_meta else 'written'} "
              f"in TileDB's fragment: {fa}")
    for f in fa:
        if f != "__fragment_metadata.tdb":
            check(open(os.path.join(da, f), "rb").read() == open(os.path.join(db, f), "rb").read(),
                  f"{what}: {f} differs from TileDB's")
            COMPARED[f] = COMPARED.get(f, 0) + 1


def twins(tmp, name, make):
    a, b = os.path.join(tmp, name + "_A"), os.path.join(tmp, name + "_B")
    make(a)
    shutil.copytree(a, b)
    return a, b


def sparse_int(uri, dups=False):
    d = tiledb.Domain(tiledb.Dim("x", domain=(0, 999), tile=8, dtype=np.int64))
    s = tiledb.ArraySchema(domain=d, sparse=True, allows_duplicates=dups, capacity=5, attrs=[
        tiledb.Attr("a", dtype=np.int32),
        tiledb.Attr("s", dtype=str, var=True, nullable=True),
        tiledb.Attr("f", dtype=np.float64)])
    tiledb.Array.create(uri, s)
    for t, lo in [(1, 0), (3, 10), (5, 5)]:
        xs = np.arange(lo, lo + 20, dtype=np.int64)
        sv = np.array([None if i % 6 == 0 else f"k{(i + t) % 7}" for i in range(20)], dtype=object)
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[xs] = {"a": np.arange(20, dtype=np.int32) + 100 * t, "s": sv,
                     "f": np.linspace(0, 1, 20) + t}


def sparse_str(uri):
    d = tiledb.Domain(tiledb.Dim("k", domain=(None, None), tile=None, dtype="ascii"),
                      tiledb.Dim("y", domain=(0, 99), tile=10, dtype=np.int32))
    s = tiledb.ArraySchema(domain=d, sparse=True, capacity=4,
                           attrs=[tiledb.Attr("v", dtype=np.int64)])
    tiledb.Array.create(uri, s)
    keys = ["apple", "b", "banana", "cherry", "date", "elder", "fig", "grape"]
    for t in (1, 2, 4):
        ks = np.array(keys[t - 1:] + keys[:t - 1], dtype=object)
        ys = np.arange(len(keys), dtype=np.int32) * t % 13
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[ks, ys] = {"v": np.arange(len(keys), dtype=np.int64) + 10 * t}


# The deletes of the integer arrays: (timestamp, condition). Timestamp 3 equals a write's
# (same millisecond: the write's cells are deleted), two deletes share timestamp 4, 6 is
# after every write.
INT_DELETES = [(2, "a > 110"), (3, "s == 'k3'"), (4, "s < 'k2'"), (4, "f >= 5.5 and x < 20"),
               (6, "a in [303, 304, 505]"), (6, "s == None")]
INT_TIMES = [1, 2, 3, 4, 5, 6, 7, None]


def test_reads(tmp):
    for dups in (False, True):
        what = "dups" if dups else "no dups"
        a, b = twins(tmp, "int_" + what.replace(" ", "_"), lambda u: sparse_int(u, dups))
        for t, c in INT_DELETES:
            delete_both(a, b, c, t)
        same_reads(a, INT_TIMES, f"sparse {what}", b)
    # A deleted newest value does not uncover an older one.
    a, b = twins(tmp, "newest", lambda u: sparse_int(u, False))
    delete_both(a, b, "a == 505", 7)
    same_reads(a, [5, 6, 7, None], "newest deleted", b)
    a, b = twins(tmp, "strdim", sparse_str)
    delete_both(a, b, "k >= 'c' and k < 'f'", 3)
    delete_both(a, b, "v == 42 or y == 0", 4)
    same_reads(a, [1, 2, 3, 4, 5, None], "string dimension", b)


def write_both(a, b, t, lo):
    """The same cells written by TileDB-Py into both twins at timestamp t."""
    xs = np.arange(lo, lo + 12, dtype=np.int64)
    sv = np.array([None if i % 5 == 0 else f"k{(i + t) % 7}" for i in range(12)], dtype=object)
    for u in (a, b):
        with tiledb.open(u, "w", timestamp=t) as A:
            A[xs] = {"a": np.arange(12, dtype=np.int32) + 100 * t, "s": sv,
                     "f": np.linspace(0, 1, 12) + t}


def test_consolidation(tmp):
    """Twins: TileDB consolidates A, we consolidate B with the same settings; reads equal at
    every timestamp, the consolidated fragments' data files (t.tdb, and without purge the
    delete metadata dt.tdb and dci.tdb) byte-identical. Then a new fragment and a delete in
    both, the commits consolidated (.del inside the .con), and a second consolidation merging
    the first one's fragment (with delete metadata) with the new one."""
    for purge, dups in ((False, False), (False, True), (True, False), (True, True)):
        what = ("purge" if purge else "no purge") + (", dups" if dups else "")
        cfg = {"sm.consolidation.purge_deleted_cells": "true" if purge else "false"}
        # The twins share TileDB's .del files (ours are checked byte for byte above): two
        # deletes share timestamp 4 and their order (by name) numbers them in dci.tdb.
        def make(u):
            sparse_int(u, dups)
            for t, c in INT_DELETES[:4]:
                with tiledb.open(u, "d", timestamp=t) as A:
                    A.query(cond=c).submit()
        a, b = twins(tmp, "cons_" + what.replace(" ", "_").replace(",", ""), make)
        tiledb.consolidate(a, config=tiledb.Config(cfg))
        same_reads(a, INT_TIMES, f"TileDB consolidated, {what}")
        run("consolidate", b, json.dumps(cfg))
        same_reads(a, INT_TIMES, f"both consolidated, {what}", b)
        same_data_files(a, b, f"{what}, first consolidation", expect_delete_meta=not purge)
        # A new fragment and a delete after the consolidation, then the commits consolidated.
        write_both(a, b, 7, 12)
        delete_both(a, b, "a < 310 or a == 707", 8)
        tiledb.consolidate(a, config=tiledb.Config({"sm.consolidation.mode": "commits"}))
        run("consolidate", b, json.dumps({"sm.consolidation.mode": "commits"}))
        same_reads(a, INT_TIMES + [8], f"commits consolidated, {what}", b)
        tiledb.consolidate(a, config=tiledb.Config(cfg))
        run("consolidate", b, json.dumps(cfg))
        same_reads(a, INT_TIMES + [8], f"consolidated again, {what}", b)
        same_data_files(a, b, f"{what}, second consolidation", expect_delete_meta=not purge)


def test_refusals(tmp):
    u = os.path.join(tmp, "dense")
    d = tiledb.Domain(tiledb.Dim("x", domain=(0, 9), tile=5, dtype=np.int32))
    tiledb.Array.create(u, tiledb.ArraySchema(domain=d, attrs=[tiledb.Attr("a", dtype=np.int32)]))
    r = run("delete-cells", u, "a > 1", 5, ok=False)
    check(r.returncode != 0 and "Delete mode is not supported for queries on Dense Arrays"
          in r.stderr, f"dense refusal: {r.stderr}")
    u = os.path.join(tmp, "bad")
    sparse_int(u)
    r = run("delete-cells", u, "a >> 1", 5, ok=False)
    check(r.returncode != 0 and "column" in r.stderr, f"bad condition: {r.stderr}")
    r = run("delete-cells", u, "nope == 1", 5, ok=False)
    check(r.returncode != 0 and "nope" in r.stderr, f"unknown field: {r.stderr}")
    check(not dels(u), "refused deletes write nothing")
    # The CLI writes the same commit.
    out = subprocess.run([TDBF, "array", "delete", u, "--cond", "a > 110", "--timestamp", "9"],
                         capture_output=True, text=True)
    check(out.returncode == 0 and out.stdout.strip().endswith("_22.del"), f"cli: {out.stderr}")
    same_reads(u, [8, 9, None], "cli delete")


def test_speed(tmp):
    u = os.path.join(tmp, "speed")
    d = tiledb.Domain(tiledb.Dim("x", domain=(0, 1 << 40), tile=1 << 20, dtype=np.int64))
    tiledb.Array.create(u, tiledb.ArraySchema(domain=d, sparse=True, capacity=10000,
                                              attrs=[tiledb.Attr("a", dtype=np.int32)]))
    n = 400_000
    for t in (1, 2):
        with tiledb.open(u, "w", timestamp=t) as A:
            A[np.arange(n, dtype=np.int64) * 3 + t] = {"a": np.arange(n, dtype=np.int32)}
    run("delete-cells", u, "a < 1000", 3)

    def cat(t):
        best = None
        for _ in range(3):
            s = time.perf_counter()
            r = subprocess.run([TDBF, "array", "cat", u, "--field", "a", "--format", "raw",
                                "--timestamp", str(t)], capture_output=True)
            e = time.perf_counter() - s
            check(r.returncode == 0, f"cat: {r.stderr}")
            best = e if best is None else min(best, e)
        return best, len(r.stdout)

    (without, nw), (through, nt) = cat(2), cat(3)
    check(nw == 2 * n * 4 and nt == (2 * n - 2000) * 4, f"speed reads: {nw} and {nt} bytes")
    print(f"read of {2 * n} cells: {without * 1000:.0f} ms without the delete, "
          f"{through * 1000:.0f} ms through it (x{through / without:.2f})")


def main():
    global BIN, TDBF
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--tdbf", required=True)
    args = p.parse_args()
    BIN, TDBF = os.path.abspath(args.bin), os.path.abspath(args.tdbf)
    for f in (BIN, TDBF):
        if not os.path.exists(f):
            sys.exit(f"missing {f}: build it first")
    tmp = tempfile.mkdtemp(prefix="deletes_")
    try:
        test_reads(tmp)
        test_refusals(tmp)
        test_consolidation(tmp)
        test_speed(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("consolidated data files byte-identical to TileDB's: " +
          ", ".join(f"{f} {n}" for f, n in sorted(COMPARED.items())))
    print(f"deletes: {checks} checks passed")


if __name__ == "__main__":
    main()
