"""The HDF5 plugin through h5py built on the same HDF5 as the plugin (Debian's python3-h5py
on libhdf5 1.10.8, run with Debian's /usr/bin/python3): write and read datasets with
compression=333, check the filter's name, the stored chunks, and that a damaged chunk is an
error, not a crash.

Usage: HDF5_PLUGIN_PATH=<plugin dir> /usr/bin/python3 test_h5py.py LIBTDBFILTER DIR
"""

import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h5tdbf_cd import FILTER_ID, FROM_DATASET  # noqa: E402
from h5tdbf_cd import cd_values as _cd_values  # noqa: E402

libpath, out_dir = sys.argv[1], sys.argv[2]


def cd_values(spec):
    return _cd_values(libpath, spec)


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
    print(f"h5py {h5py.__version__} on HDF5 {h5py.version.hdf5_version}: {checked} datasets "
          f"written and read through the plugin")


main()
