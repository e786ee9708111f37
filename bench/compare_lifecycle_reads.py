#!/usr/bin/env python3
"""Reads after the lifecycle (issue #30 §3): what a pending delete and a consolidation cost a
read of tdbfilter, against a read of the same cells written at once, with TileDB-Py's costs
for the same arrays beside them.

Arrays (written by TileDB-Py into --workdir, reused while the parameters match): a 2-D sparse
array (int64 x, y in [0, 2^20), space tiles 2^16 x 2^16, capacity 10 000, zstd), attributes
`a` (int64: 0, 1, 2, ... in write order) and `b` (float64), --cells cells (default 2 M):

* `one`:          written in one fragment;
* `deleted`:      the same fragment and a delete commit `a < cells/100` (1% of the cells,
                  TileDB-Py's `open(uri, "d").query(cond=...).submit()`), not consolidated:
                  every read applies it;
* `consolidated`: the cells written in --fragments fragments (default 100) of random cells,
                  then consolidated and vacuumed by tdbfilter (`tdbf array consolidate`,
                  `tdbf array vacuum`): one fragment again.

Each round runs one child process per engine (TileDB-Py's global-order read of x, y, a, b;
ours: tdb_array_open + tdb_array_read_fields through the C API) that reads every array once
untimed, then once timed per array and thread count (1 and 2); rounds interleave the engines
and the medians count. Before timing, our reads of `deleted` and `consolidated` are compared
cell for cell with TileDB-Py's.

Printed: per array and thread count the medians and "x one" (the array's time / the `one`
time of the same engine). The issue's targets: `deleted` x one <= 1.2, `consolidated` x one
about 1.0 (as fast as a fragment written at once).

Usage: .venv/bin/python bench/compare_lifecycle_reads.py [--workdir DIR] [--cells 2000000]
       [--fragments 100] [--rounds 5] [--lib target/test-opt/libtdbfilter.so] [--quick]
       [--check] [--json OUT]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from compare_arrays import Ours  # noqa: E402
from compare_fragments import child, interleaved, report, run_child, tiledb_read  # noqa: E402

DEFAULT_LIB = os.path.join(REPO, "target", "test-opt", "libtdbfilter.so")
ARRAYS = ("one", "deleted", "consolidated")
FIELDS = ["x", "y", "a", "b"]


def make_arrays(workdir, cells, fragments, tdbf):
    import tiledb

    os.makedirs(workdir, exist_ok=True)
    stamp = os.path.join(workdir, "params.json")
    params = {"cells": cells, "fragments": fragments, "v": 1}
    if os.path.exists(stamp) and json.load(open(stamp)) == params:
        return
    rng = np.random.default_rng(5)
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
    for name in ARRAYS:
        uri = os.path.join(workdir, name)
        shutil.rmtree(uri, ignore_errors=True)
        tiledb.Array.create(uri, schema)
        k = fragments if name == "consolidated" else 1
        for i, part in enumerate(np.array_split(np.arange(cells), k)):
            with tiledb.open(uri, "w", timestamp=i + 1) as A:
                A[x[part], y[part]] = {"a": a[part], "b": b[part]}
        if name == "deleted":
            with tiledb.open(uri, "d", timestamp=k + 1) as A:
                A.query(cond=f"a < {cells // 100}").submit()
        if name == "consolidated":
            for cmd in (["consolidate"], ["vacuum"]):
                subprocess.run([tdbf, "array", *cmd, uri], check=True, capture_output=True)
            frags = [n for n in os.listdir(os.path.join(uri, "__fragments"))]
            if len(frags) != 1:
                raise SystemExit(f"{uri}: {len(frags)} fragments after consolidate + vacuum")
    json.dump(params, open(stamp, "w"))


def check(args):
    ours = Ours(args.lib)
    counts = {}
    for name in ARRAYS:
        uri = os.path.join(args.workdir, name)
        res = ours.read(uri, FIELDS, 2, True)
        views = ours.views(res, FIELDS)
        theirs = tiledb_read(uri, 2)
        for f in FIELDS:
            t = theirs[f]
            if not np.array_equal(views[f].view(t.dtype), t):
                raise SystemExit(f"{name}/{f}: our cells differ from TileDB's")
        counts[name] = len(theirs["a"])
        ours.release(res)
    if counts["deleted"] != counts["one"] - args.cells // 100:
        raise SystemExit(f"the delete removed {counts['one'] - counts['deleted']} cells, "
                         f"not {args.cells // 100}")
    if counts["consolidated"] != counts["one"]:
        raise SystemExit("the consolidated array lost or gained cells")
    print(json.dumps({"ok": True, "cells": counts}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default="/tmp/tdbf-bench-lifecycle-reads")
    ap.add_argument("--cells", type=int, default=2_000_000)
    ap.add_argument("--fragments", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--lib", default=DEFAULT_LIB)
    ap.add_argument("--tdbf", help="the tdbf CLI (default: beside --lib)")
    ap.add_argument("--quick", action="store_true", help="200 000 cells, 20 fragments, 3 rounds")
    ap.add_argument("--json")
    ap.add_argument("--child", choices=["ours", "tiledb"])
    ap.add_argument("--check", action="store_true",
                    help="compare our reads with TileDB-Py's, no timing")
    args = ap.parse_args()
    if args.quick:
        args.cells, args.fragments, args.rounds = 200_000, 20, 3
        args.workdir += "-quick"
    if args.child:
        args.engine = args.child
        return child(args, ARRAYS)
    tdbf = args.tdbf or os.path.join(os.path.dirname(os.path.abspath(args.lib)), "tdbf")
    for p in (args.lib, tdbf):
        if not os.path.exists(p):
            raise SystemExit(f"{p}: not built (cargo build --profile test-opt --workspace)")
    make_arrays(args.workdir, args.cells, args.fragments, tdbf)
    if args.check:
        # The answers only (a test step): no timing.
        return check(args)
    common = ["--workdir", args.workdir, "--lib", args.lib, "--cells", str(args.cells)]
    print("check:", run_child(common + ["--check"], __file__))
    times, med = interleaved(common, args.rounds, __file__)
    print(f"{args.cells} cells; consolidated from {args.fragments} fragments; {args.rounds} rounds "
          f"(medians, s); load {os.getloadavg()[0]:.1f}")
    report(med, ARRAYS, 13)
    if args.json:
        json.dump({"params": vars(args), "times": times, "medians": med}, open(args.json, "w"),
                  indent=1)


if __name__ == "__main__":
    main()
