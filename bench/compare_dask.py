"""Dask reduction over a dense TileDB array: tdbfilter.dask.read vs dask.array.from_tiledb.

``x.sum().compute()`` over a 1 GiB int64 array (a random walk, byteshuffle + zstd:3,
1024 x 1024 tiles, written by TileDB-Py) on one LocalCluster(n_workers=2,
threads_per_worker=1, processes=True): both readers on the same cluster, in interleaved
rounds (ours, TileDB's, ours, ...), medians and their ratio printed: wall time, and the
workers' CPU time (user + system of the worker processes, every thread), which other load
on a shared machine inflates far less. Both read the same
chunks (the space tiles) and must give the same sum.

Run with a Python that has tiledb, dask, distributed and tdbfilter (the workers need
tiledb for from_tiledb), TDBFILTER_LIBRARY set:

    python bench/compare_dask.py [--quick] [--rounds N] [--dir DIR]

``--quick``: a 64 MiB array and 3 rounds (the test step's smoke run). The array is kept in
DIR (default build/bench-dask) and reused when its cells are already there.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np


def make_array(uri: Path, rows: int, cols: int, tile: int) -> None:
    import tiledb

    marker = uri / "bench-complete.json"
    spec = {"rows": rows, "cols": cols, "tile": tile, "filters": "byteshuffle,zstd:3"}
    if marker.exists() and json.loads(marker.read_text()) == spec:
        return
    if uri.exists():
        tiledb.remove(str(uri))
    dom = tiledb.Domain(tiledb.Dim("r", domain=(0, rows - 1), tile=tile, dtype=np.int64),
                        tiledb.Dim("c", domain=(0, cols - 1), tile=tile, dtype=np.int64))
    filters = tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.ZstdFilter(level=3)])
    tiledb.Array.create(str(uri), tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr("a", dtype=np.int64, filters=filters)]))
    rng = np.random.default_rng(7)
    with tiledb.open(str(uri), "w") as A:
        for r0 in range(0, rows, tile):  # one row of tiles per write: bounded memory
            steps = rng.integers(-3, 4, (tile, cols), dtype=np.int64)
            A[r0:r0 + tile, :] = np.cumsum(steps, axis=1) + r0
    marker.write_text(json.dumps(spec))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="64 MiB array, 3 rounds")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--dir", default=str(Path(__file__).resolve().parents[1] / "build" /
                                         "bench-dask"))
    args = ap.parse_args()
    rows, cols, tile = (2048, 4096, 1024) if args.quick else (16384, 8192, 1024)
    rounds = args.rounds or (3 if args.quick else 7)

    import dask
    import dask.array as da
    import tiledb
    from dask.distributed import Client, LocalCluster

    import tdbfilter
    import tdbfilter.dask as tdask

    uri = Path(args.dir) / f"dense_{rows}x{cols}"
    uri.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    make_array(uri, rows, cols, tile)
    made = time.perf_counter() - t0
    size_on_disk = sum(f.stat().st_size for f in uri.rglob("*") if f.is_file())

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.wait_for_workers(2)
        ours = tdask.read(str(uri), field="a")
        theirs = da.from_tiledb(str(uri), attribute="a")
        assert ours.chunks == theirs.chunks, (ours.chunks, theirs.chunks)
        # warm-up (imports, opens, page cache), and the answer both must give
        s_ours = client.compute(ours.sum()).result()
        s_theirs = client.compute(theirs.sum()).result()
        assert s_ours == s_theirs, (s_ours, s_theirs)
        times: dict[str, list[float]] = {"tdbfilter": [], "from_tiledb": []}
        cpu: dict[str, list[float]] = {"tdbfilter": [], "from_tiledb": []}
        for _ in range(rounds):
            for name, x in (("tdbfilter", ours), ("from_tiledb", theirs)):
                c0 = sum(client.run(_cpu_seconds).values())
                t = time.perf_counter()
                s = client.compute(x.sum()).result()
                times[name].append(time.perf_counter() - t)
                cpu[name].append(sum(client.run(_cpu_seconds).values()) - c0)
                assert s == s_ours, (name, s, s_ours)

    gib = rows * cols * 8 / 2**30
    med = {k: statistics.median(v) for k, v in times.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    ratio = med["from_tiledb"] / med["tdbfilter"]
    print(f"compare_dask: x.sum().compute() over a {gib:.3f} GiB int64 array "
          f"({rows}x{cols}, {tile}x{tile} tiles = {ours.npartitions} chunks, "
          f"byteshuffle+zstd:3, {size_on_disk / 2**20:.0f} MiB on disk"
          f"{'' if made < 1 else f', written in {made:.0f} s'})")
    print(f"cluster: LocalCluster(n_workers=2, threads_per_worker=1, processes=True) on "
          f"{os.cpu_count()} cores; {platform.python_version()}, dask {dask.__version__}, "
          f"tiledb-py {tiledb.__version__} (libtiledb {'.'.join(map(str, tiledb.libtiledb.version()))}), "
          f"tdbfilter {tdbfilter.__version__}")
    print(f"{rounds} interleaved rounds, seconds per reduction:")
    for k, v in times.items():
        print(f"  {k:12s} median {med[k]:.3f}  ({gib / med[k]:.2f} GiB/s)  "
              f"rounds {' '.join(f'{t:.3f}' for t in v)}")
    print("workers' CPU seconds per reduction (user + system, all threads; what other "
          "load on the machine does not inflate):")
    for k, v in cpu.items():
        print(f"  {k:12s} median {med_cpu[k]:.3f}  rounds {' '.join(f'{t:.3f}' for t in v)}")
    print(f"ratio from_tiledb / tdbfilter (median time): {ratio:.2f}x")
    print(f"ratio from_tiledb / tdbfilter (median worker CPU time): "
          f"{med_cpu['from_tiledb'] / med_cpu['tdbfilter']:.2f}x")


def _cpu_seconds() -> float:
    """This process's CPU time so far (user + system, every thread): run on each worker."""
    t = os.times()
    return t.user + t.system


if __name__ == "__main__":
    main()
