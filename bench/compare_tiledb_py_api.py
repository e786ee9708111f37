#!/usr/bin/env python3
"""TileDB-Py API speed: the same Python program text run with `import tiledb` (TileDB-Py
0.36.1, libtiledb 2.30) and with `import tdbfilter as tiledb` (tdbfilter's TileDB-Py-compatible
layer, bindings/python/src/tdbfilter/tiledb_compat), at 1 and 2 threads.

Arrays (written once by TileDB-Py into --workdir, reused while the parameters match):

* dense: a 2-D dense array (int64 r in [0, R), c in [0, 2048), space tiles 256 x 256) with
  attributes `a` (int64, a random walk) and `b` (float64, noise), zstd; R = 2048 (64 MiB of
  cells; --quick: 512, 16 MiB);
* sparse: a 2-D sparse array (int64 x, y in [0, 2^20), space tiles 2^17 x 2^17, capacity
  10 000, zstd) of --cells cells (default 4 M; --quick 400 000), one fragment, with one int64
  attribute `a` uniform in [0, 10 000).

Cases (each opens the array with `tiledb.open(uri, ctx=ctx)` inside the timing):

* dense_whole: `A[:]`;
* dense_box: `A[r0:r1, c0:c1]`, a box of 1% of the cells;
* multi_index: `A.multi_index[[8 row ranges], :]` on the dense array (1/8 of the cells);
* sparse_df: `A.df[x0:x1, y0:y1]` on the sparse array, a box holding ~10% of the cells;
* cond: `A.query(cond="a < 1000")[:]` on the sparse array (~10% of the cells);
* agg: `A.query().agg({"a": ["sum", "min", "max"]})[:]` on the sparse array;
* write_dense: `A[:] = {"a": ..., "b": ...}` of 32 MiB into a new dense array (1024 x 2048;
  --quick 256 x 2048);
* write_sparse: `A[x, y] = a` of 32 MiB (1.4 M cells, unique random coordinates; --quick
  1/4 of that) into a new sparse array.

Threads: the Ctx config sm.compute_concurrency_level = sm.io_concurrency_level = N (the compat
layer maps it to the library's thread count) and py.init_buffer_bytes = 256 MiB (TileDB-Py
reads in one submission). Each round runs one child process per engine that runs every case
once untimed (page cache, lazy imports) and then once timed per thread count; rounds
interleave the engines and the medians count. Before timing, one process runs every case with
both engines and checks the answers are equal (sparse results compared after sorting by
coordinates; written arrays read back by TileDB-Py). `--quick --check` does only that check on
the small arrays (under a minute), for a test step.

"TileDB/ours" is TileDB-Py's time / ours (target: at least 2).

Usage: TDBFILTER_LIBRARY=target/test-opt/libtdbfilter.so PYTHONPATH=bindings/python/src \\
       .venv/bin/python bench/compare_tiledb_py_api.py [--workdir DIR] [--cells 4000000]
       [--rounds 5] [--quick] [--check] [--only CASE,...] [--json OUT]
"""

import argparse
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
THREADS = (1, 2)
CASES = ("dense_whole", "dense_box", "multi_index", "sparse_df", "cond", "agg",
         "write_dense", "write_sparse")
DOMAIN = 1 << 20
COLS = 2048
WRITE_MIB = 32


def engine_module(engine):
    """`import tiledb` or `import tdbfilter as tiledb`."""
    return importlib.import_module("tiledb" if engine == "tiledb" else "tdbfilter")


def params(quick, cells):
    rows = 512 if quick else 2048
    wrows = (WRITE_MIB << 20) // (COLS * 16) // (4 if quick else 1)
    wcells = (WRITE_MIB << 20) // 24 // (4 if quick else 1)
    return {"rows": rows, "cells": cells, "wrows": wrows, "wcells": wcells, "v": 2}


def make_arrays(workdir, p):
    import tiledb

    stamp = os.path.join(workdir, "params.json")
    dense, sparse = os.path.join(workdir, "dense"), os.path.join(workdir, "sparse")
    if os.path.exists(stamp) and json.load(open(stamp)) == p:
        return dense, sparse
    os.makedirs(workdir, exist_ok=True)
    for u in (dense, sparse):
        shutil.rmtree(u, ignore_errors=True)
    rng = np.random.default_rng(29)
    zstd = tiledb.FilterList([tiledb.ZstdFilter()])
    rows = p["rows"]
    dom = tiledb.Domain(tiledb.Dim("r", domain=(0, rows - 1), tile=256, dtype=np.int64),
                        tiledb.Dim("c", domain=(0, COLS - 1), tile=256, dtype=np.int64))
    tiledb.Array.create(dense, tiledb.ArraySchema(
        domain=dom, sparse=False, attrs=[tiledb.Attr("a", dtype=np.int64, filters=zstd),
                                         tiledb.Attr("b", dtype=np.float64, filters=zstd)]))
    with tiledb.open(dense, "w") as A:
        A[:] = {"a": np.cumsum(rng.integers(-3, 4, rows * COLS)).reshape(rows, COLS),
                "b": rng.standard_normal((rows, COLS))}
    cells = p["cells"]
    flat = np.sort(rng.choice(DOMAIN * DOMAIN, size=cells, replace=False))
    x, y = (flat >> 20).astype(np.int64), (flat & (DOMAIN - 1)).astype(np.int64)
    tiledb.Array.create(sparse, sparse_schema(tiledb))
    with tiledb.open(sparse, "w") as A:
        A[x, y] = {"a": rng.integers(0, 10_000, cells)}
    json.dump(p, open(stamp, "w"))
    return dense, sparse


def sparse_schema(tiledb):
    zstd = tiledb.FilterList([tiledb.ZstdFilter()])
    dom = tiledb.Domain(
        tiledb.Dim("x", domain=(0, DOMAIN - 1), tile=1 << 17, dtype=np.int64, filters=zstd),
        tiledb.Dim("y", domain=(0, DOMAIN - 1), tile=1 << 17, dtype=np.int64, filters=zstd))
    return tiledb.ArraySchema(domain=dom, sparse=True, capacity=10_000,
                              attrs=[tiledb.Attr("a", dtype=np.int64, filters=zstd)])


def dense_schema(tiledb, rows):
    zstd = tiledb.FilterList([tiledb.ZstdFilter()])
    dom = tiledb.Domain(tiledb.Dim("r", domain=(0, rows - 1), tile=256, dtype=np.int64),
                        tiledb.Dim("c", domain=(0, COLS - 1), tile=256, dtype=np.int64))
    return tiledb.ArraySchema(domain=dom, sparse=False,
                              attrs=[tiledb.Attr("a", dtype=np.int64, filters=zstd),
                                     tiledb.Attr("b", dtype=np.float64, filters=zstd)])


def write_data(p, case):
    """The data of a write case (generated outside the timing, the same for both engines)."""
    rng = np.random.default_rng(7)
    if case == "write_dense":
        n = p["wrows"] * COLS
        return {"a": np.cumsum(rng.integers(-3, 4, n)).reshape(p["wrows"], COLS),
                "b": rng.standard_normal((p["wrows"], COLS))}
    n = p["wcells"]
    flat = rng.choice(DOMAIN * DOMAIN, size=n, replace=False)
    return ((flat >> 20).astype(np.int64), (flat & (DOMAIN - 1)).astype(np.int64),
            rng.integers(0, 10_000, n))


class Program:
    """The benchmark program: the same text for both engines, `tiledb` being the module."""

    def __init__(self, tiledb, dense, sparse, p, scratch):
        self.tiledb, self.dense, self.sparse, self.p, self.scratch = \
            tiledb, dense, sparse, p, scratch

    def ctx(self, threads):
        tiledb = self.tiledb
        return tiledb.Ctx(tiledb.Config({
            "sm.compute_concurrency_level": str(threads),
            "sm.io_concurrency_level": str(threads),
            "py.init_buffer_bytes": str(1 << 28)}))

    def prepare(self, case, threads):
        """Untimed set-up of a write case: a new empty array; returns (uri, data)."""
        tiledb = self.tiledb
        uri = os.path.join(self.scratch, f"{case}-{threads}")
        shutil.rmtree(uri, ignore_errors=True)
        if case == "write_dense":
            tiledb.Array.create(uri, dense_schema(tiledb, self.p["wrows"]))
        else:
            tiledb.Array.create(uri, sparse_schema(tiledb))
        return uri, write_data(self.p, case)

    def run(self, case, threads, prepared=None):
        tiledb, ctx = self.tiledb, self.ctx(threads)
        rows = self.p["rows"]
        if case == "dense_whole":
            with tiledb.open(self.dense, ctx=ctx) as A:
                return A[:]
        if case == "dense_box":
            r0, c0 = rows // 3, COLS // 3
            with tiledb.open(self.dense, ctx=ctx) as A:
                return A[r0:r0 + rows // 10, c0:c0 + COLS // 10]
        if case == "multi_index":
            step, width = rows // 8, rows // 64
            with tiledb.open(self.dense, ctx=ctx) as A:
                return A.multi_index[[slice(i * step, i * step + width - 1)
                                      for i in range(8)], :]
        if case == "sparse_df":
            with tiledb.open(self.sparse, ctx=ctx) as A:
                return A.df[DOMAIN // 4:DOMAIN // 4 + DOMAIN // 5 - 1, 0:DOMAIN // 2 - 1]
        if case == "cond":
            with tiledb.open(self.sparse, ctx=ctx) as A:
                return A.query(cond="a < 1000")[:]
        if case == "agg":
            with tiledb.open(self.sparse, ctx=ctx) as A:
                return A.query().agg({"a": ["sum", "min", "max"]})[:]
        uri, data = prepared
        with tiledb.open(uri, "w", ctx=ctx) as A:
            if case == "write_dense":
                A[:] = data
            else:
                x, y, a = data
                A[x, y] = a
        return uri


def normalize(case, r):
    """An engine's answer in a comparable form: dicts of numpy arrays, sparse results sorted
    by coordinates."""
    if case == "sparse_df":
        r = {k: r[k].to_numpy() for k in r.columns}
    if case == "agg":
        return {k: float(v) for k, v in r.items()}
    r = {k: np.asarray(v) for k, v in r.items()}
    if case in ("sparse_df", "cond"):
        order = np.lexsort((r["y"], r["x"]))
        r = {k: v[order] for k, v in r.items()}
    return r


def same(a, b):
    if a.keys() != b.keys():
        return False
    return all(np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k]
               for k in a)


def check(args, p, dense, sparse):
    import tiledb

    engines = {e: Program(engine_module(e), dense, sparse, p,
                          os.path.join(args.workdir, f"scratch-check-{e}"))
               for e in ("tiledb", "ours")}
    for prog in engines.values():
        os.makedirs(prog.scratch, exist_ok=True)
    for case in args.cases:
        answers = {}
        for e, prog in engines.items():
            prepared = prog.prepare(case, 2) if case.startswith("write") else None
            r = prog.run(case, 2, prepared)
            if case.startswith("write"):
                with tiledb.open(r) as A:  # read back by TileDB-Py
                    r = A[:] if case == "write_dense" else A.query(order="G")[:]
            answers[e] = normalize(case, r)
        n = {k: (v.shape if isinstance(v, np.ndarray) else v) for k, v in answers["ours"].items()}
        if not same(answers["ours"], answers["tiledb"]):
            raise SystemExit(f"{case}: answers differ: ours {n}")
        print(f"check {case}: equal {n}", file=sys.stderr)
    print(json.dumps({"ok": True}))


def child(args, p, dense, sparse):
    scratch = os.path.join(args.workdir, f"scratch-{args.child}")
    os.makedirs(scratch, exist_ok=True)
    prog = Program(engine_module(args.child), dense, sparse, p, scratch)

    def once(case, threads):
        prepared = prog.prepare(case, threads) if case.startswith("write") else None
        t0 = time.perf_counter()
        prog.run(case, threads, prepared)
        return time.perf_counter() - t0

    out = {}
    for case in args.cases:
        once(case, 2)
        for t in THREADS:
            out[f"{case}/{t}"] = once(case, t)
    print(json.dumps({"times": out}))


def run_child(argv):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, os.path.abspath(__file__)] + argv, capture_output=True,
                         text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"child {argv} failed:\n{out.stderr}")
    sys.stderr.write(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default="/tmp/tdbf-bench-pyapi")
    ap.add_argument("--cells", type=int, default=4_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true",
                    help="small arrays (400 000 sparse cells, 16 MiB dense), 3 rounds")
    ap.add_argument("--check", action="store_true",
                    help="only compare the answers of both engines (no timing)")
    ap.add_argument("--only", help="comma-separated cases")
    ap.add_argument("--json")
    ap.add_argument("--child", choices=["ours", "tiledb"])
    args = ap.parse_args()
    if args.quick:
        args.cells, args.rounds = 400_000, 3
        args.workdir += "-quick"
    args.cases = args.only.split(",") if args.only else list(CASES)
    bad = [c for c in args.cases if c not in CASES]
    if bad:
        raise SystemExit(f"unknown case(s) {bad}: choose among {', '.join(CASES)}")
    p = params(args.quick, args.cells)
    dense, sparse = os.path.join(args.workdir, "dense"), os.path.join(args.workdir, "sparse")
    if args.child:
        return child(args, p, dense, sparse)
    if not os.environ.get("TDBFILTER_LIBRARY"):
        raise SystemExit("set TDBFILTER_LIBRARY to libtdbfilter.so (and PYTHONPATH to "
                         "bindings/python/src)")
    make_arrays(args.workdir, p)
    if args.check:
        return check(args, p, dense, sparse)
    base = args.workdir[:-len("-quick")] if args.quick else args.workdir
    common = ["--workdir", base] + (["--quick"] if args.quick else ["--cells", str(args.cells)]) \
        + (["--only", args.only] if args.only else [])
    check(args, p, dense, sparse)
    times = {"ours": {}, "tiledb": {}}
    load = [os.getloadavg()]
    for _ in range(args.rounds):
        for engine in ("tiledb", "ours"):
            r = run_child(common + ["--child", engine])
            for k, v in r["times"].items():
                times[engine].setdefault(k, []).append(v)
        load.append(os.getloadavg())
    med = {e: {k: statistics.median(v) for k, v in ts.items()} for e, ts in times.items()}
    print(f"dense {p['rows']} x {COLS}, sparse {p['cells']} cells, writes "
          f"{WRITE_MIB >> (2 if args.quick else 0)} MiB; {args.rounds} rounds (medians, s); "
          "TileDB/ours > 1: we are faster")
    print("load averages (1 min) during the rounds: " +
          " ".join(f"{la[0]:.1f}" for la in load))
    print(f"{'case':14} {'thr':>3} {'ours':>8} {'TileDB':>8} {'TileDB/ours':>11}")
    for case in args.cases:
        for t in THREADS:
            k = f"{case}/{t}"
            o, d = med["ours"][k], med["tiledb"][k]
            print(f"{case:14} {t:>3} {o:8.4f} {d:8.4f} {d / o:11.2f}")
    if args.json:
        json.dump({"params": vars(args), "sizes": p, "times": times, "medians": med,
                   "load": load}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
