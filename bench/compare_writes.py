#!/usr/bin/env python3
"""Compare tdbfilter's array writer with TileDB-Py (libtiledb 2.30) writing whole arrays.

The arrays are bench/compare_arrays.py's, written instead of read:

* dense_zstd, dense_lz4, dense_none: a 1-D dense int64 domain with two attributes, `i`
  (int64, a random walk) and `f` (float64, a noisy sine), --mib MiB each (default 256), 1
  Mi-cell tiles, filters byteshuffle+zstd (level -1), bitshuffle+lz4, none; one row-major
  write of the whole domain (TileDB-Py: `A[:] = {"i": ..., "f": ...}`).
* sparse: 2-D sparse (int64 x, y in [0, 2^20), zstd, capacity 100 000), one int64 attribute
  `a`, --sparse-cells unique cells (default 20 million) in random order: one unordered write
  (TileDB-Py: `A[x, y] = {"a": ...}`; both sort the cells).
* var: 1-D dense, --var-cells (default 8 Mi) var-size ASCII strings of 1-32 bytes (zstd); one
  write of the whole domain. TileDB-Py takes an object array of bytes (it builds the offsets
  and the data buffer from them inside the timed `A[:] = ...`, what its users pay); ours takes
  the offsets and the bytes.

The cells are generated once into raw files under --workdir. Every write runs in a fresh
process that loads its cells into memory (TileDB-Py: numpy arrays, the var strings as the
object array; ours: `bench/rust/write_bench.rs`, the writer taking the buffers without a copy),
resets the peak-RSS mark (/proc/self/clear_refs), then opens a fresh copy of the empty array,
writes and commits (timed). Peak memory = VmHWM - VmRSS after loading: what the write adds
to its input (MiB). TileDB-Py runs with
sm.compute_concurrency_level = sm.io_concurrency_level = N, ours with the writer's N threads.
Rounds are interleaved (every case and thread count once per round, TileDB and ours in
alternating order); the table shows medians over --rounds.

Small writes: K times (--small, default 200) one write of 16 cells and its commit, each
opening the array (dense: a 16-cell box of a 1-D int64 array; sparse: 16 cells of a 2-D
sparse array); median and 90th percentile latency.

Targets (issue 22): writes >= 2x TileDB-Py at 1 and 2 threads; our peak <= input + a few tiles
per thread; small-write median <= 1/5 of TileDB's.

--quick: small sizes, one round, and a check that both writers' arrays read equal (through
TileDB-Py) for every case and for the small writes (added to scripts/test.d/50-array.sh).

Usage: .venv/bin/python bench/compare_writes.py [--workdir DIR] [--mib 256]
       [--sparse-cells 20000000] [--var-cells 8388608] [--rounds 3] [--threads 1,2]
       [--small 200] [--bench target/release/examples/write_bench] [--quick] [--only CASE,...]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.abspath(os.path.dirname(__file__)))
sys.path.insert(0, os.path.join(REPO, "bench"))
import compare_arrays  # noqa: E402  (the read benchmark: its tile size and /proc reader)

DEFAULT_BENCH = os.path.join(REPO, "target", "release", "examples", "write_bench")
TILE_CELLS = compare_arrays.TILE_CELLS
vm = compare_arrays.vm

# case -> (array kind, fields)
CASES = {
    "dense_zstd": ("dense", ["i", "f"]),
    "dense_lz4": ("dense", ["i", "f"]),
    "dense_none": ("dense", ["i", "f"]),
    "sparse": ("sparse", ["x", "y", "a"]),
    "var": ("var", ["s"]),
}


# ------------------------------------------------------------------------------------------
# Inputs and empty arrays
# ------------------------------------------------------------------------------------------

def schemas(mib, sparse_cells, var_cells):
    """case -> TileDB-Py schema of the empty array (as compare_arrays.py creates them)."""
    import tiledb

    n = mib * (1 << 20) // 8
    out = {}
    pipelines = {
        "dense_zstd": [tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()],
        "dense_lz4": [tiledb.BitShuffleFilter(), tiledb.LZ4Filter()],
        "dense_none": [],
    }
    for name, filters in pipelines.items():
        dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=min(TILE_CELLS, n), dtype=np.int64))
        out[name] = tiledb.ArraySchema(domain=dom, attrs=[
            tiledb.Attr("i", dtype=np.int64, filters=tiledb.FilterList(filters)),
            tiledb.Attr("f", dtype=np.float64, filters=tiledb.FilterList(filters))])
    zstd = tiledb.FilterList([tiledb.ZstdFilter()])
    out["sparse"] = sparse_schema(zstd, 100_000)
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, var_cells - 1), tile=min(1 << 16, var_cells), dtype=np.int64))
    out["var"] = tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("s", dtype="ascii", var=True, filters=tiledb.FilterList([tiledb.ZstdFilter()]))])
    # Small writes.
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, (1 << 40) - 1), tile=16, dtype=np.int64))
    out["small_dense"] = tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.int64, filters=zstd)])
    out["small_sparse"] = sparse_schema(zstd, 16)
    return out


def sparse_schema(zstd, capacity):
    import tiledb

    dom = tiledb.Domain(
        tiledb.Dim("x", domain=(0, (1 << 20) - 1), tile=1 << 12, dtype=np.int64, filters=zstd),
        tiledb.Dim("y", domain=(0, (1 << 20) - 1), tile=1 << 12, dtype=np.int64, filters=zstd))
    return tiledb.ArraySchema(domain=dom, sparse=True, capacity=capacity,
                              attrs=[tiledb.Attr("a", dtype=np.int64, filters=zstd)])


def make_inputs(workdir, mib, sparse_cells, var_cells):
    """Raw cell files (inputs/) and empty arrays (empty/), made once per parameter set."""
    import tiledb

    stamp = os.path.join(workdir, "params.json")
    params = {"mib": mib, "sparse_cells": sparse_cells, "var_cells": var_cells, "v": 1}
    if os.path.exists(stamp) and json.load(open(stamp)) == params:
        return
    shutil.rmtree(workdir, ignore_errors=True)
    inputs, empty = os.path.join(workdir, "inputs"), os.path.join(workdir, "empty")
    os.makedirs(inputs)
    os.makedirs(empty)
    for name, schema in schemas(mib, sparse_cells, var_cells).items():
        tiledb.Array.create(os.path.join(empty, name), schema)
    rng = np.random.default_rng(7)
    n = mib * (1 << 20) // 8
    np.cumsum(rng.integers(-1000, 1000, n, dtype=np.int64)).tofile(os.path.join(inputs, "i"))
    (np.sin(np.arange(n) / 1e4) * 1e3 + rng.normal(0, 1e-3, n)).tofile(os.path.join(inputs, "f"))
    lin = np.unique(rng.integers(0, 1 << 40, sparse_cells + sparse_cells // 100, dtype=np.int64))
    lin = rng.permutation(lin)[:sparse_cells]
    (lin >> 20).tofile(os.path.join(inputs, "x"))
    (lin & ((1 << 20) - 1)).tofile(os.path.join(inputs, "y"))
    rng.integers(0, 1 << 40, lin.size, dtype=np.int64).tofile(os.path.join(inputs, "a"))
    del lin
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)
    lengths = rng.integers(1, 33, var_cells)
    letters[rng.integers(0, letters.size, int(lengths.sum()))].tofile(os.path.join(inputs, "s"))
    offsets = np.zeros(var_cells, np.uint64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    offsets.tofile(os.path.join(inputs, "s.off"))
    json.dump(params, open(stamp, "w"))
    print(f"inputs: dense 2 x {mib} MiB, sparse {sparse_cells} cells, var {var_cells} cells",
          file=sys.stderr)


def input_bytes(workdir, case):
    inputs = os.path.join(workdir, "inputs")
    files = CASES[case][1] + (["s.off"] if case == "var" else [])
    return sum(os.path.getsize(os.path.join(inputs, f)) for f in files)


# ------------------------------------------------------------------------------------------
# Children
# ------------------------------------------------------------------------------------------

def tiledb_ctx(threads):
    import tiledb

    return tiledb.Ctx(tiledb.Config({"sm.compute_concurrency_level": str(threads),
                                     "sm.io_concurrency_level": str(threads)}))


def tiledb_child(args):
    """Loads the cells, resets the peak mark, writes through TileDB-Py; prints JSON."""
    import tiledb

    kind, fields = CASES[args.case]
    inputs = os.path.join(args.workdir, "inputs")
    cells = {f: np.fromfile(os.path.join(inputs, f), dtype=np.int64 if f != "f" else np.float64)
             for f in fields if f != "s"}
    if kind == "var":
        data = np.fromfile(os.path.join(inputs, "s"), dtype=np.uint8).tobytes()
        offs = np.fromfile(os.path.join(inputs, "s.off"), dtype=np.uint64)
        ends = offs[1:].tolist() + [len(data)]
        cells["s"] = np.array([data[s:e] for s, e in zip(offs.tolist(), ends)], dtype=object)
        del data, offs, ends
    ctx = tiledb_ctx(args.child_threads)
    open("/proc/self/clear_refs", "w").write("5")
    base = vm("VmRSS")
    t0 = time.perf_counter()
    with tiledb.open(args.uri, "w", ctx=ctx) as A:
        if kind == "sparse":
            A[cells["x"], cells["y"]] = {"a": cells["a"]}
        else:
            A[:] = {f: cells[f] for f in fields}
    seconds = time.perf_counter() - t0
    print(json.dumps({"seconds": seconds, "peak": vm("VmHWM") - base}))


def tiledb_small_child(args):
    import tiledb

    ctx = tiledb_ctx(args.child_threads)
    times = []
    for k in range(args.small):
        a = np.arange(k * 16, k * 16 + 16, dtype=np.int64)
        t0 = time.perf_counter()
        with tiledb.open(args.uri, "w", ctx=ctx) as A:
            if args.case == "small_dense":
                A[k * 16:k * 16 + 16] = {"a": a}
            else:
                A[a, a + 1000] = {"a": a}
        times.append(time.perf_counter() - t0)
    times.sort()
    print(json.dumps({"median": times[len(times) // 2], "p90": times[len(times) * 9 // 10]}))


def run(argv, env_extra=None):
    # numpy's OpenBLAS threads spin while idle and would take CPU from both writers.
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", **(env_extra or {}))
    out = subprocess.run(argv, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def fresh_copy(args, case, engine):
    dst = os.path.join(args.workdir, "run", f"{case}-{engine}")
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(os.path.join(args.workdir, "empty", case), dst)
    return dst


def write_once(args, case, engine, threads):
    """One timed write into a fresh copy of the empty array; returns (result, array path)."""
    uri = fresh_copy(args, case, engine)
    if engine == "tiledb":
        r = run([sys.executable, os.path.abspath(__file__), "--child", "write", "--case", case,
                 "--uri", uri, "--workdir", args.workdir, "--child-threads", str(threads)])
    else:
        kind, fields = CASES[case]
        inputs = os.path.join(args.workdir, "inputs")
        argv = [args.bench, uri, "--threads", str(threads),
                "--layout", "unordered" if kind == "sparse" else "row"]
        for f in fields:
            argv += ["--field", f"{f}={os.path.join(inputs, f)}"]
        if kind == "var":
            argv += ["--offsets", f"s={os.path.join(inputs, 's.off')}"]
        r = run(argv)
    return r, uri


def small_once(args, case, engine):
    uri = fresh_copy(args, case, engine)
    if engine == "tiledb":
        r = run([sys.executable, os.path.abspath(__file__), "--child", "small", "--case", case,
                 "--uri", uri, "--small", str(args.small), "--child-threads", "1"])
    else:
        r = run([args.bench, uri, "--small", str(args.small), "--threads", "1",
                 "--layout", "row" if case == "small_dense" else "unordered"])
    return r, uri


def same_cells(a, b):
    """Both arrays read equal through TileDB-Py (dense: their non-empty domains; sparse: in
    global order, with coordinates)."""
    import tiledb

    with tiledb.open(a) as A, tiledb.open(b) as B:
        if A.schema.sparse:
            ra, rb = A.query(order="G")[:], B.query(order="G")[:]
        else:
            # The non-empty domain (the small-write array's domain is huge).
            ned = A.nonempty_domain()
            if ned != B.nonempty_domain():
                return False
            box = tuple(slice(int(lo), int(hi) + 1) for lo, hi in ned)
            ra, rb = A[box], B[box]
    if ra.keys() != rb.keys():
        return False
    for k in ra:
        x, y = ra[k], rb[k]
        if x.dtype == object:
            if len(x) != len(y) or any(p != q for p, q in zip(x.tolist(), y.tolist())):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


# ------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default=os.path.join(REPO, "build", "bench-writes"))
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--sparse-cells", type=int, default=20_000_000)
    ap.add_argument("--var-cells", type=int, default=8 << 20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--small", type=int, default=200)
    ap.add_argument("--bench", default=DEFAULT_BENCH)
    ap.add_argument("--quick", action="store_true",
                    help="CI mode: small arrays, one round, both writers' arrays read equal")
    ap.add_argument("--only", help="comma-separated cases: " + ",".join(CASES) + ",small")
    ap.add_argument("--json", dest="json_out")
    # Child modes (internal).
    ap.add_argument("--child", choices=["write", "small"])
    ap.add_argument("--case")
    ap.add_argument("--uri")
    ap.add_argument("--child-threads", type=int, default=1)
    args = ap.parse_args()
    if args.child == "write":
        return tiledb_child(args)
    if args.child == "small":
        return tiledb_small_child(args)

    if args.quick:
        args.mib, args.sparse_cells, args.var_cells, args.rounds, args.small = 4, 200_000, 100_000, 1, 20
        if args.workdir == os.path.join(REPO, "build", "bench-writes"):
            args.workdir += "-quick"
    if not os.path.exists(args.bench):
        raise SystemExit(f"{args.bench} is missing (cargo build --release --example write_bench)")
    make_inputs(args.workdir, args.mib, args.sparse_cells, args.var_cells)
    only = args.only.split(",") if args.only else list(CASES) + ["small"]
    cases = [c for c in CASES if c in only]
    threads = [int(t) for t in args.threads.split(",")]
    import tiledb

    print(f"# array writes: tdbfilter vs TileDB-Py {tiledb.__version__} (libtiledb "
          f"{'.'.join(map(str, tiledb.libtiledb.version()))}), median of {args.rounds} "
          f"interleaved rounds, {os.cpu_count()} cores; dense attributes {args.mib} MiB each, "
          f"sparse {args.sparse_cells} cells (unordered), var {args.var_cells} cells")
    results = {}
    for r in range(args.rounds):
        for case in cases:
            for t in threads:
                order = ["tiledb", "ours"] if (r + threads.index(t)) % 2 == 0 else ["ours", "tiledb"]
                uris = {}
                for engine in order:
                    res, uris[engine] = write_once(args, case, engine, t)
                    results.setdefault((case, t, engine), []).append(res)
                if args.quick and not same_cells(uris["tiledb"], uris["ours"]):
                    raise SystemExit(f"{case}: the arrays TileDB-Py and tdbfilter wrote read differently")
                for u in uris.values():
                    shutil.rmtree(u, ignore_errors=True)
        print(f"round {r + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    print(f"{'case':<12} {'thr':>3} {'TileDB s':>9} {'ours s':>8} {'speedup':>8} {'input MiB':>9} "
          f"{'TileDB peak':>11} {'ours peak':>9}")
    rows = []
    for case in cases:
        for t in threads:
            theirs, ours = results[(case, t, "tiledb")], results[(case, t, "ours")]
            ts = statistics.median(x["seconds"] for x in theirs)
            os_ = statistics.median(x["seconds"] for x in ours)
            tp = statistics.median(x["peak"] for x in theirs) / 2**20
            op = statistics.median(x["peak"] for x in ours) / 2**20
            inp = input_bytes(args.workdir, case) / 2**20
            rows.append({"case": case, "threads": t, "tiledb_s": ts, "ours_s": os_,
                         "speedup": ts / os_, "input_mib": inp, "tiledb_peak_mib": tp,
                         "ours_peak_mib": op})
            print(f"{case:<12} {t:>3} {ts:>9.3f} {os_:>8.3f} {ts / os_:>7.2f}x {inp:>9.1f} "
                  f"{tp:>11.1f} {op:>9.1f}", flush=True)
    if "small" in only:
        print(f"small writes: {args.small} x (open, write 16 cells, commit), 1 thread")
        print(f"{'case':<12} {'TileDB ms':>10} {'ours ms':>8} {'TileDB/ours':>11} "
              f"{'TileDB p90':>10} {'ours p90':>8}")
        for case in ("small_dense", "small_sparse"):
            (theirs, ut), (ours, uo) = small_once(args, case, "tiledb"), small_once(args, case, "ours")
            if args.quick and not same_cells(ut, uo):
                raise SystemExit(f"{case}: the arrays TileDB-Py and tdbfilter wrote read differently")
            shutil.rmtree(ut, ignore_errors=True)
            shutil.rmtree(uo, ignore_errors=True)
            rows.append({"case": case, "tiledb_median_ms": theirs["median"] * 1e3,
                         "ours_median_ms": ours["median"] * 1e3,
                         "ratio": theirs["median"] / ours["median"]})
            print(f"{case:<12} {theirs['median'] * 1e3:>10.2f} {ours['median'] * 1e3:>8.2f} "
                  f"{theirs['median'] / ours['median']:>10.1f}x {theirs['p90'] * 1e3:>10.2f} "
                  f"{ours['p90'] * 1e3:>8.2f}", flush=True)
    if args.quick:
        print("quick: every case written by both reads equal through TileDB-Py")
    if args.json_out:
        json.dump(rows, open(args.json_out, "w"), indent=1)


if __name__ == "__main__":
    main()
