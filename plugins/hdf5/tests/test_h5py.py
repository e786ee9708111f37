"""The HDF5 plugin through h5py built on the same HDF5 as the plugin (Debian's python3-h5py
on libhdf5 1.10.8, run with Debian's /usr/bin/python3): write and read datasets with
compression=333, check the filter's name, the stored chunks, and that a damaged chunk is an
error, not a crash. Datasets written with compression=333 and no compression_opts get the
default pipeline of their type (h5tdbfilter.h, "Defaults"): their stored cd_values are checked,
and h5dump, an independent reader, reads them.

Usage: HDF5_PLUGIN_PATH=<plugin dir> /usr/bin/python3 test_h5py.py LIBTDBFILTER DIR
"""

import os
import re
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h5tdbf_cd import FILTER_ID, FROM_DATASET  # noqa: E402
from h5tdbf_cd import cd_values as _cd_values  # noqa: E402

libpath, out_dir = sys.argv[1], sys.argv[2]


def cd_values(spec):
    return _cd_values(libpath, spec)


# TileDB datatype numbers (tdb_datatype_t) of the numpy types used below.
TDB_INT32, TDB_INT64, TDB_FLOAT32, TDB_FLOAT64, TDB_INT8, TDB_UINT8, TDB_UINT16 = 0, 1, 2, 3, 5, 6, 8


def default_cases():
    """Datasets written with compression=333 and no options: (data, the default pipeline the
    plugin must choose, TileDB datatype, cell size)."""
    n = 300_000
    rng = np.random.default_rng(5)
    words = np.array([b"alpha", b"beta", b"gamma", b"delta"], dtype="S8")
    return {
        "default_i8": (np.cumsum(rng.integers(0, 9, n)).astype("<i8"), "byteshuffle,zstd:3",
                       TDB_INT64, 8),
        "default_i4": ((np.arange(n) % 5000).astype("<i4"), "byteshuffle,zstd:3", TDB_INT32, 4),
        "default_u2": ((np.arange(n) % 4000).astype("<u2"), "byteshuffle,zstd:3", TDB_UINT16, 2),
        "default_f4": (np.cos(np.arange(n) / 70.0).astype("<f4"), "byteshuffle,zstd:3",
                       TDB_FLOAT32, 4),
        "default_f8": (np.sin(np.arange(n) / 50.0), "byteshuffle,zstd:3", TDB_FLOAT64, 8),
        "default_u1": ((np.arange(n) // 100 % 256).astype("u1"), "zstd:3", TDB_UINT8, 1),
        "default_i1": ((np.arange(n) // 100 % 200 - 100).astype("i1"), "zstd:3", TDB_INT8, 1),
        "default_s8": (words[rng.integers(0, 4, n)], "zstd:3", TDB_UINT8, 1),
    }


def h5dump_values(path, name, count):
    """The first `count` values of dataset `name` as h5dump prints them (through the plugin)."""
    out = subprocess.run(["h5dump", "-d", f"/{name}", "-s", "0", "-c", str(count), path],
                         check=True, capture_output=True, text=True).stdout
    m = re.search(r"DATA \{\s*\(0\): ([^}]*)\}", out)
    assert m, f"h5dump printed no data for {name}:\n{out}"
    # Continuation lines start with the index of their first value: "(3): ...".
    text = re.sub(r"\(\d+\):", " ", m.group(1))
    return [v.strip() for v in text.split(",")]


def h5dump_params(path, name):
    """The cd_values h5dump -p shows for the filter of dataset `name`."""
    out = subprocess.run(["h5dump", "-p", "-H", "-d", f"/{name}", path],
                         check=True, capture_output=True, text=True).stdout
    m = re.search(r"FILTER_ID 333.*?PARAMS \{([^}]*)\}", out, re.S)
    assert m, f"h5dump -p shows no filter 333 for {name}:\n{out}"
    return tuple(int(v) for v in m.group(1).split())


def check_defaults(out_dir):
    """compression=333 without compression_opts: set_local stores the default pipeline's
    cd_values; the data reads back equal through h5py and h5dump."""
    path = os.path.join(out_dir, "h5py_defaults.h5")
    cases = default_cases()
    with h5py.File(path, "w") as f:
        for name, (data, _spec, _dt, _size) in cases.items():
            f.create_dataset(name, data=data, chunks=(50_000,), compression=FILTER_ID)
    with h5py.File(path, "r") as f:
        for name, (data, spec, dt, size) in cases.items():
            d = f[name]
            np.testing.assert_array_equal(d[:], data, err_msg=name)
            fid, _flags, cd, _fname = d.id.get_create_plist().get_filter(0)
            want = (1, dt, size) + cd_values(spec)[3:]
            assert fid == FILTER_ID and tuple(cd) == want, (name, spec, tuple(cd), want)
            assert d.id.get_storage_size() < data.nbytes, f"{name} did not shrink"
            assert h5dump_params(path, name) == want, (name, h5dump_params(path, name), want)
    for name in ("default_i8", "default_i1", "default_u2"):
        data = cases[name][0]
        got = [int(v) for v in h5dump_values(path, name, 8)]
        assert got == [int(v) for v in data[:8]], (name, got, data[:8])
    # Fixed-length strings: h5dump prints the NUL padding as \000.
    got = [v.strip('"').replace("\\000", "") for v in h5dump_values(path, "default_s8", 4)]
    assert got == [w.decode() for w in cases["default_s8"][0][:4]], got
    print(f"h5py: {len(cases)} datasets with compression=333 and no options: default pipelines "
          f"stored, read back equal, h5dump reads them (default_i8: {' '.join(h5dump_values(path, 'default_i8', 4))} ...)")


def main():
    path = os.path.join(out_dir, "h5py_test.h5")
    rng = np.random.default_rng(4)
    cases = {
        "i8_bitshuffle_lz4": (np.cumsum(rng.integers(0, 9, 300_000)).astype("<i8"), "bitshuffle,lz4"),
        "f8_byteshuffle_zstd": (np.sin(np.arange(300_000) / 50.0), "byteshuffle,zstd:3"),
        "i4_delta_gzip": (np.arange(300_000, dtype="<i4") * 3, "delta,gzip:6"),
        "u2_zstd_sha256": ((np.arange(300_000) % 4000).astype("<u2"), "zstd,checksum_sha256"),
    }
    with h5py.File(path, "w") as f:
        for name, (data, spec) in cases.items():
            f.create_dataset(name, data=data, chunks=(50_000,), compression=FILTER_ID,
                             compression_opts=cd_values(spec))
    checked = 0
    with h5py.File(path, "r") as f:
        for name, (data, spec) in cases.items():
            d = f[name]
            np.testing.assert_array_equal(d[:], data, err_msg=name)
            fid, flags, cd, fname = d.id.get_create_plist().get_filter(0)
            assert fid == FILTER_ID and fname == b"tdbfilter: TileDB filter pipeline", (fid, fname)
            assert cd[1] != FROM_DATASET and cd[2] == data.dtype.itemsize, cd
            assert d.id.get_storage_size() < data.nbytes, f"{name} did not shrink"
            checked += 1
    # A damaged chunk: an error from h5py, the process goes on.
    with h5py.File(path, "r+") as f:
        d = f["u2_zstd_sha256"]
        _, raw = d.id.read_direct_chunk((0,))
        bad = bytearray(raw)
        bad[len(bad) // 2] ^= 0x01
        d.id.write_direct_chunk((0,), bytes(bad))
        try:
            d[:10]
        except OSError as e:
            print(f"h5py: damaged chunk refused: {str(e).splitlines()[0]}")
        else:
            raise AssertionError("a damaged checksummed chunk was read")
        np.testing.assert_array_equal(d[50_000:50_010], cases["u2_zstd_sha256"][0][50_000:50_010])
    check_defaults(out_dir)
    print(f"h5py {h5py.__version__} on HDF5 {h5py.version.hdf5_version}: {checked} datasets "
          f"written and read through the plugin")


main()
