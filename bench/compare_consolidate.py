#!/usr/bin/env python3
"""Consolidation: tdbfilter (`tiledb.consolidate` of `import tdbfilter as tiledb`, i.e. the C
library's `tdb_array_consolidate`) against TileDB-Py 0.36.1 (libtiledb 2.30) consolidating the
same sparse fragments, at 1 and 2 cores, with each one's peak memory.

Arrays (written once by TileDB-Py into --workdir, reused while the parameters match): 1-D
sparse, int64 `x` in [0, 2^40), space tile 2^32, capacity 10 000, attributes `a` (int64, zstd)
and `b` (float64, zstd), duplicates not allowed:

* `small`: --small-fragments fragments (default 1000) of --small-cells random cells each (100);
* `large`: 4 fragments of --large-mib MiB of cell data each (default 256: 4 x 11.2 M cells).

Each timed run consolidates a fresh copy of the array (fragments mode, TileDB's defaults:
`sm.consolidation.buffer_size` 50 MB, purge off) in a child process pinned to N cores
(`sched_setaffinity`; TileDB also gets `sm.compute_concurrency_level` =
`sm.io_concurrency_level` = N; tdbfilter sizes its pool from the cores it may use). The child
reports the consolidation's wall time and its peak RSS (`VmHWM`) minus the RSS it had before
consolidating (imports and the opened library included in the baseline). Rounds interleave the
engines; medians are printed, with TileDB/ours (above 1: we are faster). Before timing, one
consolidation by each engine is checked: TileDB-Py reads both results cell for cell equal to
the array before, and both leave the same number of fragments.

Usage: .venv/bin/python bench/compare_consolidate.py [--workdir DIR] [--rounds 3] [--quick]
       [--lib target/test-opt/libtdbfilter.so] [--json OUT]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import json, os, sys, time
engine, uri, cores = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:cores]))
if engine == "tiledb":
    import tiledb
    cfg = tiledb.Config({"sm.compute_concurrency_level": str(cores),
                         "sm.io_concurrency_level": str(cores)})
    ctx = tiledb.Ctx(cfg)
    run = lambda: tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "fragments"}), ctx=ctx)
else:
    import tdbfilter as tiledb
    tiledb.tiledb_compat  # the TileDB-Py layer loaded before the baseline
    run = lambda: tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "fragments"}))
def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
base = status_kib("VmRSS")
t0 = time.perf_counter()
run()
seconds = time.perf_counter() - t0
# VmHWM, not ru_maxrss: a child's ru_maxrss starts at the RSS its parent had when it forked
# (the bench parent holds the arrays it compared), VmHWM belongs to this process's memory.
peak = status_kib("VmHWM")
print(json.dumps({"seconds": seconds, "peak_mib": (peak - base) / 1024}))
"""


def write_arrays(workdir, small_fragments, small_cells, large_mib):
    import tiledb

    stamp = os.path.join(workdir, "params.json")
    params = {"small": [small_fragments, small_cells], "large_mib": large_mib}
    if os.path.exists(stamp) and json.load(open(stamp)) == params:
        return
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    zstd = tiledb.FilterList([tiledb.ZstdFilter(level=1)])

    def create(uri):
        dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 2**40 - 1), tile=2**32, dtype=np.int64))
        tiledb.Array.create(uri, tiledb.ArraySchema(
            domain=dom, sparse=True, capacity=10_000,
            attrs=[tiledb.Attr("a", dtype=np.int64, filters=zstd),
                   tiledb.Attr("b", dtype=np.float64, filters=zstd)]))

    rng = np.random.default_rng(2026)

    def write(uri, t, n):
        x = np.unique(rng.integers(0, 2**40, n, dtype=np.int64))
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[x] = {"a": x ^ 0x5555, "b": x * 0.25}

    small = os.path.join(workdir, "small")
    create(small)
    for t in range(1, small_fragments + 1):
        write(small, t, small_cells)
    large = os.path.join(workdir, "large")
    create(large)
    per = large_mib * 2**20 // 24  # x, a, b: 24 bytes a cell
    for t in range(1, 5):
        write(large, t, per)
    json.dump(params, open(stamp, "w"))


def child(engine, uri, cores, lib):
    env = dict(os.environ)
    if lib:
        env["TDBFILTER_LIBRARY"] = lib
    r = subprocess.run([sys.executable, "-c", CHILD, engine, uri, str(cores)],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"compare_consolidate: {engine} on {uri}: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def check(base, scratch, lib):
    """Each engine consolidates a copy once; TileDB-Py reads both equal to the original."""
    import tiledb

    with tiledb.open(base) as A:
        want = A.query(order="G")[:]
    counts = {}
    for engine in ("tiledb", "tdbfilter"):
        uri = os.path.join(scratch, f"check-{engine}")
        shutil.copytree(base, uri)
        child(engine, uri, 2, lib)
        with tiledb.open(uri) as A:
            got = A.query(order="G")[:]
        for k in ("x", "a", "b"):
            if not np.array_equal(got[k], want[k]):
                sys.exit(f"compare_consolidate: {engine}'s consolidation of {base} reads "
                         f"differently ({k})")
        counts[engine] = len(tiledb.array_fragments(uri))
        shutil.rmtree(uri)
    if counts["tiledb"] != counts["tdbfilter"]:
        sys.exit(f"compare_consolidate: fragments after consolidating {base}: {counts}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default=os.path.join(ROOT, "build", "bench-consolidate"))
    ap.add_argument("--small-fragments", type=int, default=1000)
    ap.add_argument("--small-cells", type=int, default=100)
    ap.add_argument("--large-mib", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lib", default=os.environ.get("TDBFILTER_LIBRARY"))
    ap.add_argument("--quick", action="store_true", help="100 small fragments, 4 x 8 MiB, 1 round")
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.quick:
        a.small_fragments, a.large_mib, a.rounds = 100, 8, 1
    if a.lib:
        a.lib = os.path.abspath(a.lib)
    write_arrays(a.workdir, a.small_fragments, a.small_cells, a.large_mib)
    scratch = tempfile.mkdtemp(prefix="tdbf-consolidate-", dir=a.workdir)
    results = {}
    try:
        for name in ("small", "large"):
            check(os.path.join(a.workdir, name), scratch, a.lib)
        for name in ("small", "large"):
            base = os.path.join(a.workdir, name)
            for cores in (1, 2):
                runs = {"tiledb": [], "tdbfilter": []}
                for _ in range(a.rounds):
                    for engine in ("tiledb", "tdbfilter"):
                        uri = os.path.join(scratch, f"{name}-{engine}")
                        shutil.rmtree(uri, ignore_errors=True)
                        shutil.copytree(base, uri)
                        runs[engine].append(child(engine, uri, cores, a.lib))
                        shutil.rmtree(uri)
                med = {e: (statistics.median(r["seconds"] for r in v),
                           statistics.median(r["peak_mib"] for r in v)) for e, v in runs.items()}
                results[f"{name}/{cores}"] = med
                (ts, tm), (os_, om) = med["tiledb"], med["tdbfilter"]
                print(f"{name:6} {cores} core(s): TileDB {ts:8.3f} s {tm:8.1f} MiB | "
                      f"tdbfilter {os_:8.3f} s {om:8.1f} MiB | TileDB/ours {ts / os_:5.2f}x",
                      flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if a.json:
        json.dump(results, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
