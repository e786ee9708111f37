"""HDF5 write/read MB/s through the tdbfilter plugin next to HDF5's own deflate and (when
Debian's hdf5-filter-plugin-blosc-serial is installed) the blosc plugin, on the same data.

Usage: HDF5_PLUGIN_PATH=<tdbfilter plugin dir>[:<blosc plugin dir>] /usr/bin/python3 bench_h5.py LIBTDBFILTER DIR [MiB]
"""

import os
import sys
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests"))
from h5tdbf_cd import cd_values as _cd_values  # noqa: E402

out_dir = sys.argv[2]
mib = int(sys.argv[3]) if len(sys.argv) > 3 else 64


def cd_values(spec):
    return _cd_values(sys.argv[1], spec)

n = mib * (1 << 20) // 8
rng = np.random.default_rng(9)
datasets = {
    "timestamps int64": (1_700_000_000_000 + np.cumsum(rng.integers(900, 1100, n))).astype("<i8"),
    "random walk float64": np.cumsum(rng.normal(0, 1, n)),
}
methods = [
    ("tdbfilter byteshuffle,zstd:3", dict(compression=333, compression_opts=cd_values("byteshuffle,zstd:3"))),
    ("tdbfilter bitshuffle,lz4", dict(compression=333, compression_opts=cd_values("bitshuffle,lz4"))),
    ("tdbfilter delta,bitshuffle,zstd:1", dict(compression=333, compression_opts=cd_values("delta:reinterpret=int64,bitshuffle,zstd:1"))),
    ("HDF5 shuffle+deflate 4", dict(compression="gzip", compression_opts=4, shuffle=True)),
    ("HDF5 deflate 4", dict(compression="gzip", compression_opts=4)),
]
if h5py.h5z.filter_avail(32001):
    # blosc: cd_values[4..6] = clevel, shuffle (1 byte), compressor (1 = lz4, 5 = zstd)
    methods.append(("blosc lz4 5 shuffle", dict(compression=32001, compression_opts=(0, 0, 0, 0, 5, 1, 1))))
    methods.append(("blosc zstd 3 shuffle", dict(compression=32001, compression_opts=(0, 0, 0, 0, 3, 1, 5))))
print(f"{mib} MiB per data set, chunks of 1 MiB, best of 3, MB/s (10^6 bytes/s)")
print(f"{'data':22} {'method':36} {'ratio':>7} {'write':>8} {'read':>8}")
for dname, data in datasets.items():
    for mname, kw in methods:
        path = os.path.join(out_dir, "bench.h5")
        best_w = best_r = float("inf")
        for _ in range(3):
            if os.path.exists(path):
                os.remove(path)
            t = time.perf_counter()
            with h5py.File(path, "w") as f:
                d = f.create_dataset("x", data=data, chunks=(1 << 17,), **kw)
                size = d.id.get_storage_size()
            best_w = min(best_w, time.perf_counter() - t)
            t = time.perf_counter()
            with h5py.File(path, "r") as f:
                back = f["x"][:]
            best_r = min(best_r, time.perf_counter() - t)
            assert np.array_equal(back, data), (dname, mname)
        mb = data.nbytes / 1e6
        print(f"{dname:22} {mname:36} {data.nbytes / size:7.2f} {mb / best_w:8.0f} {mb / best_r:8.0f}")
