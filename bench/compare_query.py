#!/usr/bin/env python3
"""Query speed: tdbfilter's query engine (C API tdb_query_*, in process through ctypes)
against TileDB-Py 0.36.1 (libtiledb 2.30): multi-range reads, condition reads and aggregates,
at 1 and 2 threads.

The array (written once by TileDB-Py into --workdir, reused while the parameters match): a 2-D
sparse array (int64 x, y in [0, 2^20), space tiles 2^17 x 2^17, capacity 10 000, zstd) of
--cells cells (default 4 M, one fragment) with attributes `s` (int64, increasing in global
order: tile metadata prunes conditions on it), `u` (int64, uniform in [0, 10 000): unsorted,
every tile holds the whole range) and `f` (float64).

Cases (fields read: `u`, `f`; reads in unordered layout on both sides):

* multi_range: 64 ranges on x and 1 on y (`A.query(order="U").multi_index[...]` / 64
  tdb_query_add_range calls);
* cond_sorted: the 1%-selective condition `s < N/100` (`query(cond=...)`);
* cond_unsorted: the 1%-selective `u < 100`: no tile can be pruned by min/max, so every tile
  is decoded (the fraction of tiles decoded comes from tdb_query_stats);
* agg_meta: count, sum(f), min(u), max(u) over the whole array (`query().agg(...)`): ours from
  tile metadata, no tile decoded;
* agg_decode: the same aggregates over two ranges on x covering the domain (a multi-range
  query; ours answers the tiles lying inside one range from metadata too, so only tiles
  straddling the two ranges are decoded);
* agg_cond: the same aggregates with the 50%-selective condition `u < 5000`: no tile can be
  pruned or answered from metadata, every tile is decoded, for comparison with agg_meta.

Each round runs one child process per engine that runs every case once untimed (page cache,
lazy loading) and then once timed per thread count (TileDB: sm.compute_concurrency_level =
sm.io_concurrency_level = N; ours: tdb_array_set_threads); rounds interleave the engines and
the medians count. Before timing, the answers are compared (cell counts, aggregate values).

Usage: .venv/bin/python bench/compare_query.py [--workdir DIR] [--cells 4000000]
       [--rounds 5] [--lib target/test-opt/libtdbfilter.so] [--quick] [--json OUT]
"""

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_LIB = os.path.join(REPO, "target", "test-opt", "libtdbfilter.so")
THREADS = (1, 2)
CASES = ("multi_range", "cond_sorted", "cond_unsorted", "agg_meta", "agg_decode", "agg_cond")
DOMAIN = 1 << 20
AGGS = [("count", None), ("sum", "f"), ("min", "u"), ("max", "u")]
AGG_OPS = {"sum": 0, "min": 1, "max": 2, "mean": 3, "null_count": 4, "count": 5}
LAYOUT_UNORDERED = 3


def make_array(workdir, cells):
    import shutil

    import tiledb

    uri = os.path.join(workdir, "q")
    stamp = os.path.join(workdir, "params.json")
    params = {"cells": cells, "v": 1}
    if os.path.exists(stamp) and json.load(open(stamp)) == params:
        return uri
    os.makedirs(workdir, exist_ok=True)
    shutil.rmtree(uri, ignore_errors=True)
    rng = np.random.default_rng(5)
    flat = np.sort(rng.choice(DOMAIN * DOMAIN, size=cells, replace=False))
    x, y = (flat >> 20).astype(np.int64), (flat & (DOMAIN - 1)).astype(np.int64)
    zstd = tiledb.FilterList([tiledb.ZstdFilter()])
    dom = tiledb.Domain(
        tiledb.Dim("x", domain=(0, DOMAIN - 1), tile=1 << 17, dtype=np.int64),
        tiledb.Dim("y", domain=(0, DOMAIN - 1), tile=1 << 17, dtype=np.int64))
    schema = tiledb.ArraySchema(
        domain=dom, sparse=True, capacity=10_000, coords_filters=zstd,
        attrs=[tiledb.Attr(n, dtype=t, filters=zstd)
               for n, t in (("s", np.int64), ("u", np.int64), ("f", np.float64))])
    tiledb.Array.create(uri, schema)
    with tiledb.open(uri, "w") as A:
        A[x, y] = {"s": np.zeros(cells, np.int64), "u": rng.integers(0, 10_000, cells),
                   "f": rng.random(cells)}
    # `s` = the cell's position in global order: read the coordinates back in that order and
    # write the array again with s set (one fragment: the first write's folder is replaced).
    with tiledb.open(uri) as A:
        g = A.query(order="G", dims=["x", "y"], attrs=["u", "f"])[:]
    shutil.rmtree(uri)
    tiledb.Array.create(uri, schema)
    with tiledb.open(uri, "w") as A:
        A[g["x"], g["y"]] = {"s": np.arange(cells, dtype=np.int64), "u": g["u"], "f": g["f"]}
    json.dump(params, open(stamp, "w"))
    return uri


def ranges(cells):
    """64 x ranges of 1/256 of the domain each, spread evenly; y whole."""
    step = DOMAIN // 64
    return [(k * step, k * step + DOMAIN // 256 - 1) for k in range(64)]


def conditions(cells):
    return {"cond_sorted": f"s < {cells // 100}", "cond_unsorted": "u < 100",
            "agg_cond": "u < 5000"}


class Ours:
    def __init__(self, lib):
        os.environ["TDBFILTER_LIBRARY"] = lib
        sys.path.insert(0, os.path.join(REPO, "bindings", "python", "src"))
        from tdbfilter import _lib

        self.L = _lib.load()

    def check(self, status, err):
        if status != 0:
            msg = self.L.tdb_error_message(err).decode()
            self.L.tdb_error_free(err)
            raise RuntimeError(f"tdbfilter: {msg}")

    def open(self, uri, threads):
        err, a = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.L.tdb_array_open(uri.encode(), None, 0, ctypes.byref(a), ctypes.byref(err)),
                   err)
        self.check(self.L.tdb_array_set_threads(a, threads, ctypes.byref(err)), err)
        return a

    def run(self, uri, case, cells, threads):
        """Runs one case: (cell count or aggregate values, stats)."""
        L, err = self.L, ctypes.c_void_p()
        a = self.open(uri, threads)
        q = ctypes.c_void_p()
        try:
            self.check(L.tdb_query_create(a, ctypes.byref(q), ctypes.byref(err)), err)
            self.check(L.tdb_query_set_layout(q, LAYOUT_UNORDERED, ctypes.byref(err)), err)
            rs = []
            if case == "multi_range":
                rs = ranges(cells)
            elif case == "agg_decode":
                rs = [(0, DOMAIN // 2 - 1), (DOMAIN // 2, DOMAIN - 1)]
            for lo, hi in rs:
                lo_b, hi_b = ctypes.c_int64(lo), ctypes.c_int64(hi)
                self.check(L.tdb_query_add_range(q, 0, ctypes.byref(lo_b), 8, ctypes.byref(hi_b), 8,
                                                 ctypes.byref(err)), err)
            if case.startswith("cond") or case == "agg_cond":
                self.check(L.tdb_query_set_condition(q, conditions(cells)[case].encode(),
                                                     ctypes.byref(err)), err)
            if case.startswith("agg"):
                for op, field in AGGS:
                    self.check(L.tdb_query_add_aggregate(
                        q, AGG_OPS[op], field.encode() if field else None, ctypes.byref(err)), err)
                self.check(L.tdb_query_submit(q, None, 0, ctypes.byref(err)), err)
                out = []
                for k in range(len(AGGS)):
                    dt, val = ctypes.c_uint32(), ctypes.c_void_p()
                    size, valid = ctypes.c_size_t(), ctypes.c_uint8()
                    self.check(L.tdb_query_aggregate(q, k, None, ctypes.byref(dt), ctypes.byref(val),
                                                     ctypes.byref(size), ctypes.byref(valid),
                                                     ctypes.byref(err)), err)
                    raw = ctypes.string_at(val.value, size.value)
                    out.append(float(np.frombuffer(raw, dtype=np.float64 if k == 1 else np.int64
                                                   if k > 1 else np.uint64)[0]))
                answer = out
            else:
                for f in ("u", "f"):
                    self.check(L.tdb_query_add_field(q, f.encode(), ctypes.byref(err)), err)
                results = (ctypes.c_void_p * 2)()
                self.check(L.tdb_query_submit(q, results, 2, ctypes.byref(err)), err)
                n = ctypes.c_uint64()
                self.check(L.tdb_result_cell_count(results[0], ctypes.byref(n), ctypes.byref(err)),
                           err)
                answer = n.value
                for r in results:
                    L.tdb_result_free(r)
            st = [ctypes.c_uint64() for _ in range(4)]
            self.check(L.tdb_query_stats(q, *[ctypes.byref(s) for s in st], ctypes.byref(err)), err)
            stats = dict(zip(("from_metadata", "decoded", "pruned", "bytes"), [s.value for s in st]))
            return answer, stats
        finally:
            if q.value:
                L.tdb_query_free(q)
            L.tdb_array_free(a)


def tiledb_run(uri, case, cells, threads):
    import tiledb

    cfg = {"sm.compute_concurrency_level": str(threads), "sm.io_concurrency_level": str(threads),
           "py.init_buffer_bytes": str(1 << 28)}
    with tiledb.open(uri, ctx=tiledb.Ctx(tiledb.Config(cfg))) as A:
        if case == "multi_range":
            r = A.query(attrs=["u", "f"], dims=[], order="U").multi_index[
                [slice(lo, hi) for lo, hi in ranges(cells)], :]
            return len(r["u"])
        if case.startswith("cond"):
            r = A.query(attrs=["u", "f"], dims=[], order="U", cond=conditions(cells)[case])[:]
            return len(r["u"])
        spec = {"f": ["sum"], "u": ["min", "max", "count"]}
        if case == "agg_meta":
            r = A.query().agg(spec)[:]
        elif case == "agg_cond":
            r = A.query(cond=conditions(cells)[case]).agg(spec)[:]
        else:
            r = A.query().agg(spec).multi_index[[slice(0, DOMAIN // 2 - 1),
                                                 slice(DOMAIN // 2, DOMAIN - 1)], :]
        return [float(r["u"]["count"]), float(r["f"]["sum"]), float(r["u"]["min"]),
                float(r["u"]["max"])]


def child(args):
    ours = Ours(args.lib) if args.engine == "ours" else None
    if not ours:
        import tiledb  # noqa: F401

    def once(case, threads):
        t0 = time.perf_counter()
        if ours:
            _, stats = ours.run(args.uri, case, args.cells, threads)
        else:
            tiledb_run(args.uri, case, args.cells, threads)
            stats = None
        return time.perf_counter() - t0, stats

    out, stats = {}, {}
    for case in CASES:
        once(case, 2)
        for t in THREADS:
            out[f"{case}/{t}"], s = once(case, t)
            if s is not None:
                stats[case] = s
    print(json.dumps({"times": out, "stats": stats}))


def check(args):
    ours = Ours(args.lib)
    for case in CASES:
        mine, _ = ours.run(args.uri, case, args.cells, 2)
        theirs = tiledb_run(args.uri, case, args.cells, 2)
        if isinstance(mine, list):
            ok = np.allclose(mine, theirs, rtol=1e-9, atol=0)
        else:
            ok = mine == theirs
        if not ok:
            raise SystemExit(f"{case}: ours {mine}, TileDB {theirs}")
    print(json.dumps({"ok": True}))


def run_child(argv):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, os.path.abspath(__file__)] + argv, capture_output=True,
                         text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"child {argv} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default="/tmp/tdbf-bench-query")
    ap.add_argument("--cells", type=int, default=4_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--lib", default=DEFAULT_LIB)
    ap.add_argument("--quick", action="store_true", help="400 000 cells, 3 rounds")
    ap.add_argument("--json")
    ap.add_argument("--child", choices=["ours", "tiledb"])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--uri")
    args = ap.parse_args()
    if args.quick:
        args.cells, args.rounds = 400_000, 3
        args.workdir += "-quick"
    if args.child:
        args.engine = args.child
        return child(args)
    if args.check:
        return check(args)
    if not os.path.exists(args.lib):
        raise SystemExit(f"{args.lib}: not built (cargo build --profile test-opt -p tdbfilter-ffi)")
    uri = make_array(args.workdir, args.cells)
    common = ["--uri", uri, "--cells", str(args.cells), "--lib", args.lib]
    run_child(common + ["--check"])
    times = {"ours": {}, "tiledb": {}}
    stats = {}
    for _ in range(args.rounds):
        for engine in ("tiledb", "ours"):
            r = run_child(common + ["--child", engine])
            for k, v in r["times"].items():
                times[engine].setdefault(k, []).append(v)
            stats.update(r["stats"])
    med = {e: {k: statistics.median(v) for k, v in ts.items()} for e, ts in times.items()}
    print(f"{args.cells} cells, {args.rounds} rounds (medians, s); TileDB/ours > 1: we are faster")
    print(f"{'case':14} {'thr':>3} {'ours':>8} {'TileDB':>8} {'TileDB/ours':>11}  tiles "
          f"(metadata/decoded/pruned)")
    for case in CASES:
        for t in THREADS:
            k = f"{case}/{t}"
            o, d = med["ours"][k], med["tiledb"][k]
            s = stats.get(case, {})
            tiles = f"{s.get('from_metadata')}/{s.get('decoded')}/{s.get('pruned')}"
            print(f"{case:14} {t:>3} {o:8.4f} {d:8.4f} {d / o:11.2f}  {tiles}")
    s = stats.get("cond_unsorted", {})
    total = s.get("decoded", 0) + s.get("pruned", 0)
    if total:
        print(f"cond_unsorted: {s['decoded']}/{total} tiles decoded "
              f"({100 * s['decoded'] / total:.0f}%)")
    for t in THREADS:
        m, d = med["ours"][f"agg_meta/{t}"], med["ours"][f"agg_cond/{t}"]
        print(f"ours, {t} thread(s): aggregates from metadata {m:.4f} s vs decoding {d:.4f} s "
              f"({d / m:.1f}x)")
    if args.json:
        json.dump({"params": vars(args), "times": times, "medians": med, "stats": stats},
                  open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
