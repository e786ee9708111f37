#!/usr/bin/env python3
"""Reading many fragments: tdbfilter's merge of 1000 sparse fragments against one fragment of
the same cells, and against TileDB-Py (libtiledb 2.30) reading the same arrays.

Arrays (written once by TileDB-Py into --workdir, reused while the parameters match): a 2-D
sparse array (int64 x, y in [0, 2^20), space tiles 2^16 x 2^16, capacity 10 000, zstd), two
attributes `a` (int64) and `b` (float64), duplicates not allowed; --cells cells (default 1 M)
written

* `one`:    in one fragment;
* `random`: in --fragments fragments (default 1000) of random cells each, every fragment
  overlapping every other (the k-way merge's worst case);
* `append`: in --fragments fragments each holding a band of rows (x ascending): fragments do
  not overlap and come in global order (time-series appends).

Each round runs one child process per engine (TileDB-Py, then tdbfilter through its C API:
tdb_array_open, tdb_array_set_threads, tdb_array_read_fields of x, y, a, b) that opens and
reads every array once untimed (page cache, lazy loading), then once timed per array and
thread count (1 and 2: TileDB's sm.compute_concurrency_level = sm.io_concurrency_level = N;
ours tdb_array_set_threads). Rounds interleave the engines; the medians over --rounds count.
Before timing, one process checks our reads of `random` and `append` cell for cell against
TileDB-Py's (global order).

Printed: per array and thread count the medians, "x one" (the array's time / the one-fragment
time of the same engine) and "TileDB/ours" (TileDB-Py's time / ours: above 1, we are faster).

Usage: .venv/bin/python bench/compare_fragments.py [--workdir DIR] [--cells 1000000]
       [--fragments 1000] [--rounds 5] [--lib target/test-opt/libtdbfilter.so] [--quick]
       [--json OUT]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from compare_arrays import Ours  # noqa: E402

DEFAULT_LIB = os.path.join(REPO, "target", "test-opt", "libtdbfilter.so")
ARRAYS = ("one", "random", "append")
FIELDS = ["x", "y", "a", "b"]
THREADS = (1, 2)


def make_arrays(workdir, cells, fragments):
    import shutil

    import tiledb

    os.makedirs(workdir, exist_ok=True)
    stamp = os.path.join(workdir, "params.json")
    params = {"cells": cells, "fragments": fragments, "v": 1}
    if os.path.exists(stamp) and json.load(open(stamp)) == params:
        return
    rng = np.random.default_rng(11)
    # Distinct coordinates (no duplicates to de-duplicate: every engine returns every cell).
    flat = rng.choice(1 << 40, size=cells, replace=False)
    x, y = (flat >> 20).astype(np.int64), (flat & ((1 << 20) - 1)).astype(np.int64)
    a = np.arange(cells, dtype=np.int64)
    b = rng.random(cells)
    zstd = tiledb.FilterList([tiledb.ZstdFilter()])
    dom = tiledb.Domain(
        tiledb.Dim("x", domain=(0, (1 << 20) - 1), tile=1 << 16, dtype=np.int64),
        tiledb.Dim("y", domain=(0, (1 << 20) - 1), tile=1 << 16, dtype=np.int64))
    schema = tiledb.ArraySchema(
        domain=dom, sparse=True, capacity=10_000, coords_filters=zstd,
        attrs=[tiledb.Attr("a", dtype=np.int64, filters=zstd),
               tiledb.Attr("b", dtype=np.float64, filters=zstd)])
    by_x = np.argsort(x, kind="stable")
    for name in ARRAYS:
        uri = os.path.join(workdir, name)
        shutil.rmtree(uri, ignore_errors=True)
        tiledb.Array.create(uri, schema)
        k = 1 if name == "one" else fragments
        order = by_x if name == "append" else np.arange(cells)
        for i, part in enumerate(np.array_split(order, k)):
            with tiledb.open(uri, "w", timestamp=i + 1) as A:
                A[x[part], y[part]] = {"a": a[part], "b": b[part]}
    json.dump(params, open(stamp, "w"))


def tiledb_read(uri, threads):
    import tiledb

    cfg = {"sm.compute_concurrency_level": str(threads), "sm.io_concurrency_level": str(threads),
           "py.init_buffer_bytes": str(1 << 28)}
    with tiledb.open(uri, ctx=tiledb.Ctx(tiledb.Config(cfg))) as A:
        return A.query(order="G", attrs=["a", "b"], dims=["x", "y"])[:]


def child(args, arrays=ARRAYS):
    """One round of one engine over `arrays` of args.workdir: {array/threads: seconds}."""
    ours = Ours(args.lib) if args.engine == "ours" else None
    if not ours:
        import tiledb  # noqa: F401  (loaded before the clock)

    def once(uri, threads):
        t0 = time.perf_counter()
        if ours:
            res = ours.read(uri, FIELDS, threads, True)
            dt = time.perf_counter() - t0
            ours.release(res)
        else:
            tiledb_read(uri, threads)
            dt = time.perf_counter() - t0
        return dt

    out = {}
    for name in arrays:
        uri = os.path.join(args.workdir, name)
        once(uri, 2)
        for t in THREADS:
            out[f"{name}/{t}"] = once(uri, t)
    print(json.dumps(out))


def check(args):
    ours = Ours(args.lib)
    for name in ARRAYS:
        uri = os.path.join(args.workdir, name)
        res = ours.read(uri, FIELDS, 2, True)
        views = ours.views(res, FIELDS)
        theirs = tiledb_read(uri, 2)
        for f in FIELDS:
            t = theirs[f]
            if not np.array_equal(views[f].view(t.dtype), t):
                raise SystemExit(f"{name}/{f}: our cells differ from TileDB's")
        ours.release(res)
    print(json.dumps({"ok": True}))


def run_child(argv, script=__file__):
    """Runs `script` with `argv` in a child process; its last output line as JSON."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, os.path.abspath(script)] + argv, capture_output=True,
                         text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"child {argv} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def interleaved(common, rounds, script=__file__):
    """`rounds` rounds of both engines' children, interleaved: (times, medians) per engine."""
    times = {"ours": {}, "tiledb": {}}
    for _ in range(rounds):
        for engine in ("tiledb", "ours"):
            for k, v in run_child(common + ["--child", engine], script).items():
                times[engine].setdefault(k, []).append(v)
    med = {e: {k: statistics.median(v) for k, v in ts.items()} for e, ts in times.items()}
    return times, med


def report(med, arrays, width=8):
    """Per array and thread count: medians, x one (each engine's `one`) and TileDB/ours."""
    print(f"{'array':{width}} {'thr':>3} {'ours':>8} {'x one':>6} {'TileDB':>8} {'x one':>6} "
          f"{'TileDB/ours':>11}")
    for name in arrays:
        for t in THREADS:
            k = f"{name}/{t}"
            o, d = med["ours"][k], med["tiledb"][k]
            o1, d1 = med["ours"][f"one/{t}"], med["tiledb"][f"one/{t}"]
            print(f"{name:{width}} {t:>3} {o:8.4f} {o / o1:6.2f} {d:8.4f} {d / d1:6.2f} "
                  f"{d / o:11.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default="/tmp/tdbf-bench-fragments")
    ap.add_argument("--cells", type=int, default=1_000_000)
    ap.add_argument("--fragments", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--lib", default=DEFAULT_LIB)
    ap.add_argument("--quick", action="store_true", help="100 000 cells, 100 fragments, 3 rounds")
    ap.add_argument("--json")
    ap.add_argument("--child", choices=["ours", "tiledb"])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.cells, args.fragments, args.rounds = 100_000, 100, 3
        args.workdir += "-quick"
    if args.child:
        args.engine = args.child
        return child(args)
    if args.check:
        return check(args)
    if not os.path.exists(args.lib):
        raise SystemExit(f"{args.lib}: not built (cargo build --profile test-opt -p tdbfilter-ffi)")
    make_arrays(args.workdir, args.cells, args.fragments)
    common = ["--workdir", args.workdir, "--lib", args.lib]
    run_child(common + ["--check"])
    times, med = interleaved(common, args.rounds)
    print(f"{args.cells} cells, {args.fragments} fragments, {args.rounds} rounds (medians, s)")
    report(med, ARRAYS)
    if args.json:
        json.dump({"params": vars(args), "times": times, "medians": med}, open(args.json, "w"),
                  indent=1)


if __name__ == "__main__":
    main()
