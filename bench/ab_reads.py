#!/usr/bin/env python3
"""Interleaved A/B of two builds of libtdbfilter.so on whole-array reads, each read against a
reference array's read by the same build (for example a read through a pending delete against
the read of the same cells without it: bench/compare_lifecycle_reads.py's arrays).

Both libraries are loaded into one process (two copies of the file, so the loader keeps them
apart). Each round reads, with each library in turn, the reference array then every other
array (tdb_array_open, tdb_array_set_threads, tdb_array_read_fields of --fields, results
freed); rounds alternate which library goes first. Printed per library and array: the median
and best time, and the median over rounds of the ratio to the reference read of the same
library in the same round (above 1: slower than the reference).

    .venv/bin/python bench/ab_reads.py --a OLD/libtdbfilter.so --b NEW/libtdbfilter.so \\
        --arrays /tmp/tdbf-bench-lifecycle-reads/one,/tmp/tdbf-bench-lifecycle-reads/deleted \\
        --threads 2 --rounds 15
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from compare_arrays import Ours  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--a", required=True, help="library A (libtdbfilter.so)")
    p.add_argument("--b", required=True, help="library B")
    p.add_argument("--arrays", required=True, help="comma-separated array paths, the reference first")
    p.add_argument("--fields", default="x,y,a,b")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args()
    arrays = args.arrays.split(",")
    fields = args.fields.split(",")
    if len(arrays) < 2:
        sys.exit("--arrays: a reference array and at least one other")
    for a in arrays:
        if not os.path.isdir(a):
            sys.exit(f"no array at {a}")
    tmp = tempfile.mkdtemp(prefix="tdbf_ab_reads_")
    libs = {}
    for name, path in (("A", args.a), ("B", args.b)):
        copy = os.path.join(tmp, f"lib{name}.so")
        shutil.copy(path, copy)
        libs[name] = Ours(copy)
    times = {(n, a): [] for n in libs for a in arrays}
    ratios = {(n, a): [] for n in libs for a in arrays[1:]}
    for r in range(args.rounds):
        order = ["A", "B"] if r % 2 == 0 else ["B", "A"]
        for n in order:
            lib = libs[n]
            this = {}
            for a in arrays:
                t = time.perf_counter()
                res = lib.read(a, fields, args.threads, True)
                this[a] = time.perf_counter() - t
                lib.release(res)
                times[(n, a)].append(this[a])
            for a in arrays[1:]:
                ratios[(n, a)].append(this[a] / this[arrays[0]])
    shutil.rmtree(tmp)
    print(f"{args.rounds} rounds, {args.threads} thread(s), reference {arrays[0]}")
    print(f"{'lib':3} {'array':44} {'median ms':>9} {'best ms':>8} {'x ref (median)':>15}")
    for n in libs:
        for a in arrays:
            ts = times[(n, a)]
            x = statistics.median(ratios[(n, a)]) if a != arrays[0] else 1.0
            print(f"{n:3} {a[-44:]:44} {statistics.median(ts) * 1e3:9.1f} {min(ts) * 1e3:8.1f} {x:15.2f}")


if __name__ == "__main__":
    main()
