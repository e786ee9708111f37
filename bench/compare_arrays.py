#!/usr/bin/env python3
"""Compare tdbfilter's array reader with TileDB-Py (libtiledb 2.30) reading whole arrays.

Arrays (written once by TileDB-Py into --workdir and reused by later runs):

* dense_zstd, dense_lz4, dense_none: a 1-D dense array with two attributes, `i` (int64, a
  random walk) and `f` (float64, a noisy sine), --mib MiB each (default 256), 1 Mi-cell
  tiles, filters byteshuffle+zstd(level -1, TileDB's default), bitshuffle+lz4, none.
* sparse: a 2-D sparse array (int64 x, y in [0, 2^20), zstd-filtered) with --sparse-cells
  cells (default 20 million, capacity 100 000) and one int64 attribute `a`, read with its
  coordinates in global order.
* var: a 1-D dense array of --var-cells (default 8 Mi) var-size ASCII strings (1-32 bytes,
  zstd).

Each measurement runs in a fresh process that opens the array and reads it --repeat times
(the fastest run counts; the files are in the page cache after the first): TileDB-Py with
`A[:]` (dense) or `A.query(order="G")[:]` (sparse), pinned to N threads with
sm.compute_concurrency_level = sm.io_concurrency_level = N and py.init_buffer_bytes large
enough for one round; tdbfilter through its C API (tdb_array_open, tdb_array_set_threads,
tdb_array_read_fields) with the result left where the library put it (numpy views of it cost
nothing). Children run with OPENBLAS_NUM_THREADS=1 (numpy's idle BLAS threads spin). Peak memory is the process's VmHWM minus its VmRSS before the first read, beside the
size of the result. Before timing, one process reads every field with both and checks that the
answers are equal (var strings: TileDB-Py's str objects against our offsets and bytes).

"speedup" is TileDB's time / ours (target: at least 2 at 1 and 2 threads). For the var
attribute TileDB-Py also turns each cell into a Python str, which is part of what `A[:]`
costs its users.

Usage: .venv/bin/python bench/compare_arrays.py [--workdir DIR] [--mib 256]
       [--sparse-cells 20000000] [--var-cells 8388608] [--repeat 3] [--threads 1,2]
       [--lib libtdbfilter.so] [--quick] [--only CASE,...] [--json OUT]
"""

import argparse
import ctypes
import json
import os
import subprocess
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_LIB = os.path.join(REPO, "target", "release", "libtdbfilter.so")
TILE_CELLS = 1 << 20

# case -> (array folder, fields read, sparse?)
CASES = {
    "dense_zstd.i": ("dense_zstd", ["i"], False),
    "dense_zstd.f": ("dense_zstd", ["f"], False),
    "dense_lz4.i": ("dense_lz4", ["i"], False),
    "dense_lz4.f": ("dense_lz4", ["f"], False),
    "dense_none.i": ("dense_none", ["i"], False),
    "dense_none.f": ("dense_none", ["f"], False),
    "sparse": ("sparse", ["x", "y", "a"], True),
    "var": ("var", ["s"], False),
}


# ------------------------------------------------------------------------------------------
# Writing the arrays (TileDB-Py)
# ------------------------------------------------------------------------------------------

def make_arrays(workdir, mib, sparse_cells, var_cells):
    import tiledb

    os.makedirs(workdir, exist_ok=True)
    stamp = os.path.join(workdir, "params.json")
    params = {"mib": mib, "sparse_cells": sparse_cells, "var_cells": var_cells, "v": 1}
    if os.path.exists(stamp) and json.load(open(stamp)) == params:
        return
    import shutil

    for name in ("dense_zstd", "dense_lz4", "dense_none", "sparse", "var"):
        shutil.rmtree(os.path.join(workdir, name), ignore_errors=True)
    rng = np.random.default_rng(7)
    n = mib * (1 << 20) // 8
    ints = np.cumsum(rng.integers(-1000, 1000, n, dtype=np.int64))
    floats = np.sin(np.arange(n) / 1e4) * 1e3 + rng.normal(0, 1e-3, n)
    pipelines = {
        "dense_zstd": [tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()],
        "dense_lz4": [tiledb.BitShuffleFilter(), tiledb.LZ4Filter()],
        "dense_none": [],
    }
    for name, filters in pipelines.items():
        uri = os.path.join(workdir, name)
        dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=min(TILE_CELLS, n), dtype=np.int64))
        attrs = [tiledb.Attr("i", dtype=np.int64, filters=tiledb.FilterList(filters)),
                 tiledb.Attr("f", dtype=np.float64, filters=tiledb.FilterList(filters))]
        tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=attrs))
        with tiledb.open(uri, "w") as A:
            A[0:n] = {"i": ints, "f": floats}
        print(f"wrote {name}: 2 x {mib} MiB", file=sys.stderr)
    del ints, floats

    uri = os.path.join(workdir, "sparse")
    zstd = tiledb.FilterList([tiledb.ZstdFilter()])
    dom = tiledb.Domain(
        tiledb.Dim("x", domain=(0, (1 << 20) - 1), tile=1 << 12, dtype=np.int64, filters=zstd),
        tiledb.Dim("y", domain=(0, (1 << 20) - 1), tile=1 << 12, dtype=np.int64, filters=zstd))
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, sparse=True, capacity=100_000,
        attrs=[tiledb.Attr("a", dtype=np.int64, filters=zstd)]))
    lin = np.unique(rng.integers(0, 1 << 40, sparse_cells + sparse_cells // 100, dtype=np.int64))
    lin = rng.permutation(lin)[:sparse_cells]
    with tiledb.open(uri, "w") as A:
        A[lin >> 20, lin & ((1 << 20) - 1)] = {"a": rng.integers(0, 1 << 40, lin.size, dtype=np.int64)}
    print(f"wrote sparse: {lin.size} cells", file=sys.stderr)
    del lin

    uri = os.path.join(workdir, "var")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, var_cells - 1), tile=min(1 << 16, var_cells), dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("s", dtype="ascii", var=True, filters=tiledb.FilterList([tiledb.ZstdFilter()]))]))
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)
    lengths = rng.integers(1, 33, var_cells)
    pool = letters[rng.integers(0, letters.size, int(lengths.sum()))].tobytes()
    ends = np.cumsum(lengths)
    starts = ends - lengths
    strings = np.array([pool[s:e] for s, e in zip(starts.tolist(), ends.tolist())], dtype=object)
    with tiledb.open(uri, "w") as A:
        A[0:var_cells] = {"s": strings}
    print(f"wrote var: {var_cells} cells", file=sys.stderr)
    json.dump(params, open(stamp, "w"))


# ------------------------------------------------------------------------------------------
# Readers (run in child processes)
# ------------------------------------------------------------------------------------------

def vm(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(field)


class Ours:
    """tdbfilter's array reader through its C API."""

    def __init__(self, lib):
        self.L = ctypes.CDLL(lib)
        vp, cp, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
        L = self.L
        L.tdb_error_message.restype = cp
        L.tdb_error_message.argtypes = [vp]
        L.tdb_error_free.argtypes = [vp]
        L.tdb_array_open.argtypes = [cp, vp, sz, ctypes.POINTER(vp), ctypes.POINTER(vp)]
        L.tdb_array_free.argtypes = [vp]
        L.tdb_array_set_threads.argtypes = [vp, ctypes.c_uint32, ctypes.POINTER(vp)]
        L.tdb_array_read_fields.argtypes = [vp, ctypes.POINTER(cp), sz, vp, sz, ctypes.POINTER(vp),
                                            ctypes.POINTER(vp)]
        L.tdb_result_data.argtypes = [vp, ctypes.POINTER(vp), ctypes.POINTER(sz), ctypes.POINTER(vp)]
        L.tdb_result_offsets.argtypes = [vp, ctypes.POINTER(vp), ctypes.POINTER(sz), ctypes.POINTER(vp)]
        L.tdb_result_free.argtypes = [vp]

    def check(self, status, err):
        if status != 0:
            msg = self.L.tdb_error_message(err).decode()
            self.L.tdb_error_free(err)
            raise RuntimeError(f"tdbfilter: {msg}")

    def read(self, uri, fields, threads, sparse):
        """Opens and reads; returns the result handles (free with release)."""
        L, err = self.L, ctypes.c_void_p()
        a = ctypes.c_void_p()
        self.check(L.tdb_array_open(uri.encode(), None, 0, ctypes.byref(a), ctypes.byref(err)), err)
        try:
            self.check(L.tdb_array_set_threads(a, threads, ctypes.byref(err)), err)
            names = (ctypes.c_char_p * len(fields))(*[f.encode() for f in fields])
            results = (ctypes.c_void_p * len(fields))()
            self.check(L.tdb_array_read_fields(a, names, len(fields), None, 0, results, ctypes.byref(err)),
                       err)
        finally:
            L.tdb_array_free(a)
        return list(results)

    def views(self, results, fields):
        """numpy views of the results: {field: data} (+ field + "_offsets" for var fields)."""
        out = {}
        err = ctypes.c_void_p()
        for f, r in zip(fields, results):
            data, size = ctypes.c_void_p(), ctypes.c_size_t()
            self.check(self.L.tdb_result_data(r, ctypes.byref(data), ctypes.byref(size), ctypes.byref(err)), err)
            buf = (ctypes.c_uint8 * size.value).from_address(data.value) if size.value else b""
            out[f] = np.frombuffer(buf, dtype=np.uint8)
            offs, n = ctypes.c_void_p(), ctypes.c_size_t()
            self.check(self.L.tdb_result_offsets(r, ctypes.byref(offs), ctypes.byref(n), ctypes.byref(err)), err)
            if offs.value:
                out[f + "_offsets"] = np.frombuffer((ctypes.c_uint64 * n.value).from_address(offs.value),
                                                    dtype=np.uint64)
        return out

    def release(self, results):
        for r in results:
            self.L.tdb_result_free(r)


def tiledb_read(uri, fields, threads, sparse):
    import tiledb

    cfg = {"sm.compute_concurrency_level": str(threads), "sm.io_concurrency_level": str(threads),
           "py.init_buffer_bytes": str(2 << 30)}
    ctx = tiledb.Ctx(tiledb.Config(cfg))
    with tiledb.open(uri, ctx=ctx) as A:
        if sparse:
            return A.query(order="G")[:]
        return A.query(attrs=fields)[:]


def child(args):
    engine, uri, fields, threads, sparse, repeat = (
        args.engine, args.uri, args.fields.split(","), args.child_threads, args.sparse, args.repeat)
    ours = Ours(args.lib) if engine == "ours" else None
    if engine == "tiledb":
        import tiledb  # noqa: F401  (loaded before the baseline)
    base = vm("VmRSS")
    best = float("inf")
    size = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        if ours:
            results = ours.read(uri, fields, threads, sparse)
            best = min(best, time.perf_counter() - t0)
            views = ours.views(results, fields)
            size = sum(v.nbytes for v in views.values())
            del views
            ours.release(results)
        else:
            res = tiledb_read(uri, fields, threads, sparse)
            best = min(best, time.perf_counter() - t0)
            size = sum(v.nbytes for v in res.values() if v.dtype != object)
            del res
    print(json.dumps({"seconds": best, "peak": vm("VmHWM") - base, "result": size}))


def check(args):
    """Reads every field with both and compares."""
    uri, fields, sparse = args.uri, args.fields.split(","), args.sparse
    ours = Ours(args.lib)
    results = ours.read(uri, fields, 2, sparse)
    views = ours.views(results, fields)
    theirs = tiledb_read(uri, fields, 2, sparse)
    for f in fields:
        t = theirs[f]
        if t.dtype == object:
            offs = views[f + "_offsets"].astype(np.int64)
            data = views[f].tobytes()
            ends = np.append(offs[1:], len(data))
            if len(offs) != len(t):
                raise SystemExit(f"{uri}/{f}: {len(offs)} cells vs TileDB's {len(t)}")
            for k in range(len(t)):
                want = t[k].encode() if isinstance(t[k], str) else bytes(t[k])
                if data[offs[k]:ends[k]] != want:
                    raise SystemExit(f"{uri}/{f}: cell {k} differs")
        else:
            mine = views[f].view(t.dtype)
            if not np.array_equal(mine, t.ravel()):
                raise SystemExit(f"{uri}/{f}: values differ from TileDB's")
    ours.release(results)
    print(json.dumps({"ok": True}))


def run_child(argv):
    # numpy's OpenBLAS threads spin while idle and would take CPU from both readers.
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, os.path.abspath(__file__)] + argv, capture_output=True,
                         text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"child {argv} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default=os.path.join(REPO, "build", "bench-arrays"))
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--sparse-cells", type=int, default=20_000_000)
    ap.add_argument("--var-cells", type=int, default=8 << 20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--lib", default=os.environ.get("TDBF_LIB", DEFAULT_LIB))
    ap.add_argument("--quick", action="store_true", help="CI mode: small arrays, 1 repeat")
    ap.add_argument("--only", help="comma-separated cases: " + ",".join(CASES))
    ap.add_argument("--json", dest="json_out")
    # Child modes (internal).
    ap.add_argument("--child", choices=["read", "check"])
    ap.add_argument("--engine", choices=["ours", "tiledb"])
    ap.add_argument("--uri")
    ap.add_argument("--fields")
    ap.add_argument("--child-threads", type=int, default=1)
    ap.add_argument("--sparse", action="store_true")
    args = ap.parse_args()
    if args.child == "read":
        return child(args)
    if args.child == "check":
        return check(args)

    if args.quick:
        args.mib, args.sparse_cells, args.var_cells, args.repeat = 4, 200_000, 100_000, 1
        if args.workdir == os.path.join(REPO, "build", "bench-arrays"):
            args.workdir += "-quick"
    make_arrays(args.workdir, args.mib, args.sparse_cells, args.var_cells)
    cases = args.only.split(",") if args.only else list(CASES)
    threads = [int(t) for t in args.threads.split(",")]
    import tiledb

    print(f"# array reads: tdbfilter vs TileDB-Py {tiledb.__version__} (libtiledb "
          f"{'.'.join(map(str, tiledb.libtiledb.version()))}), best of {args.repeat}, "
          f"{os.cpu_count()} cores; dense attributes {args.mib} MiB each, sparse "
          f"{args.sparse_cells} cells, var {args.var_cells} cells")
    print(f"{'case':<14} {'thr':>3} {'TileDB s':>9} {'ours s':>8} {'speedup':>8} "
          f"{'result MiB':>10} {'TileDB peak':>11} {'ours peak':>9}")
    rows = []
    for case in cases:
        folder, fields, sparse = CASES[case]
        uri = os.path.join(args.workdir, folder)
        common = ["--uri", uri, "--fields", ",".join(fields), "--lib", args.lib]
        if sparse:
            common.append("--sparse")
        run_child(["--child", "check"] + common)
        for t in threads:
            rep = ["--repeat", str(args.repeat), "--child-threads", str(t)]
            theirs = run_child(["--child", "read", "--engine", "tiledb"] + common + rep)
            ours = run_child(["--child", "read", "--engine", "ours"] + common + rep)
            row = {"case": case, "threads": t, "tiledb_s": theirs["seconds"], "ours_s": ours["seconds"],
                   "speedup": theirs["seconds"] / ours["seconds"], "result_mib": ours["result"] / 2**20,
                   "tiledb_peak_mib": theirs["peak"] / 2**20, "ours_peak_mib": ours["peak"] / 2**20}
            rows.append(row)
            print(f"{case:<14} {t:>3} {row['tiledb_s']:>9.3f} {row['ours_s']:>8.3f} "
                  f"{row['speedup']:>7.2f}x {row['result_mib']:>10.1f} {row['tiledb_peak_mib']:>11.1f} "
                  f"{row['ours_peak_mib']:>9.1f}", flush=True)
    if args.json_out:
        json.dump(rows, open(args.json_out, "w"), indent=1)


if __name__ == "__main__":
    main()
