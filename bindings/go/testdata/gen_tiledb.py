#!/usr/bin/env python3
"""Writes the TileDB-written tiles the Go tests read (bindings/go/testdata/tiledb/).

Run with TileDB-Py 0.36.1 (libtiledb 2.30.0), from the repository root:

    .venv/bin/python bindings/go/testdata/gen_tiledb.py bindings/go/testdata/tiledb

It creates small dense arrays (one tile per attribute, one attribute per pipeline), lets
TileDB write them, and copies each attribute's filtered tile out of the fragment
(a<i>.tdb, and a<i>_var.tdb for var-size attributes) next to the cells it holds.
manifest.json lists every case: the pipeline as a tdbf spec (the same filters and options
as the TileDB filter list used to write it), the datatype, the cell size and the files.
The Go tests unfilter each tile and compare with the cells, and filter the cells and
compare with TileDB's bytes.
"""

import json
import os
import shutil
import sys
import tempfile

import numpy as np
import tiledb

INT_CELLS = 9000  # 72 000 bytes: two chunks of at most 64 KiB
FLOAT_CELLS = 1000
STRING_CELLS = 300


def int_values():
    i = np.arange(INT_CELLS, dtype=np.int64)
    return 1_000_000 + i * 20 + (i * i) % 17  # increasing, as POSITIVE_DELTA needs


def float_values():
    # Multiples of 0.25 within 32 bits after scaling: SCALE_FLOAT is exact on them.
    i = np.arange(FLOAT_CELLS, dtype=np.int64)
    return (i % 97 - 40).astype(np.float64) * 0.25


def string_values():
    words = ["alpha", "beta", "gamma", "delta", "", "epsilon", "zeta"]
    return np.array([words[(i * 7 // 3) % len(words)] * (1 + i % 3) for i in range(STRING_CELLS)],
                    dtype=object)


# (attribute name, tdbf spec, TileDB filters)
INT_CASES = [
    ("gzip", "gzip:6", [tiledb.GzipFilter(level=6)]),
    ("zstd", "zstd:3", [tiledb.ZstdFilter(level=3)]),
    ("lz4", "lz4", [tiledb.LZ4Filter()]),
    ("bzip2", "bzip2:9", [tiledb.Bzip2Filter(level=9)]),
    ("rle_zstd", "rle,zstd", [tiledb.RleFilter(), tiledb.ZstdFilter()]),
    ("double_delta", "double_delta", [tiledb.DoubleDeltaFilter()]),
    ("bwr_zstd", "bit_width_reduction:256,zstd",
     [tiledb.BitWidthReductionFilter(window=256), tiledb.ZstdFilter()]),
    ("positive_delta_zstd", "positive_delta:128,zstd",
     [tiledb.PositiveDeltaFilter(window=128), tiledb.ZstdFilter()]),
    ("delta_lz4", "delta,lz4", [tiledb.DeltaFilter(), tiledb.LZ4Filter()]),
    ("xor_zstd", "xor,zstd", [tiledb.XORFilter(), tiledb.ZstdFilter()]),
    ("bitshuffle_lz4", "bitshuffle,lz4", [tiledb.BitShuffleFilter(), tiledb.LZ4Filter()]),
    ("byteshuffle_zstd", "byteshuffle,zstd",
     [tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()]),
    ("md5_zstd", "checksum_md5,zstd", [tiledb.ChecksumMD5Filter(), tiledb.ZstdFilter()]),
    ("sha256_gzip", "checksum_sha256,gzip:1",
     [tiledb.ChecksumSHA256Filter(), tiledb.GzipFilter(level=1)]),
]

FLOAT_CASES = [
    ("scale_float_zstd", "scale_float:factor=0.25:offset=0:byte_width=4,zstd",
     [tiledb.FloatScaleFilter(factor=0.25, offset=0.0, bytewidth=4), tiledb.ZstdFilter()]),
    ("byteshuffle_gzip", "byteshuffle,gzip:9",
     [tiledb.ByteShuffleFilter(), tiledb.GzipFilter(level=9)]),
]

STRING_OFFSETS = ("positive_delta,zstd", [tiledb.PositiveDeltaFilter(), tiledb.ZstdFilter()])
STRING_CASES = [
    ("str_zstd", "zstd", [tiledb.ZstdFilter()]),
    ("str_dictionary", "dictionary", [tiledb.DictionaryFilter()]),
    ("str_rle", "rle", [tiledb.RleFilter()]),
]


def write(uri, dtype, cells, cases, var=False, offsets=None):
    dom = tiledb.Domain(tiledb.Dim(name="d", domain=(0, len(cells) - 1), tile=len(cells),
                                   dtype=np.int64))
    attrs = [tiledb.Attr(name=n, dtype=dtype, var=var, filters=tiledb.FilterList(f))
             for n, _, f in cases]
    kw = {"offsets_filters": tiledb.FilterList(offsets[1])} if offsets else {}
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=attrs, sparse=False, **kw))
    with tiledb.open(uri, "w") as a:
        a[:] = {n: cells for n, _, _ in cases}
    (frag,) = os.listdir(os.path.join(uri, "__fragments"))
    return os.path.join(uri, "__fragments", frag)


def main(out):
    os.makedirs(out, exist_ok=True)
    manifest = []
    tmp = tempfile.mkdtemp()
    try:
        for label, dtype, cells, cases, tdb_type in [
            ("int64", np.int64, int_values(), INT_CASES, "int64"),
            ("float64", np.float64, float_values(), FLOAT_CASES, "float64"),
        ]:
            frag = write(os.path.join(tmp, label), dtype, cells, cases)
            cells_file = f"{label}.cells"
            with open(os.path.join(out, cells_file), "wb") as f:
                f.write(cells.astype(dtype).tobytes())
            for i, (name, spec, _) in enumerate(cases):
                shutil.copy(os.path.join(frag, f"a{i}.tdb"), os.path.join(out, f"{name}.tile"))
                manifest.append({"name": name, "spec": spec, "datatype": tdb_type,
                                 "cell_size": 8, "tile": f"{name}.tile", "cells": cells_file})

        strings = string_values()
        frag = write(os.path.join(tmp, "strings"), "ascii", strings, STRING_CASES, var=True,
                     offsets=STRING_OFFSETS)
        encoded = [s.encode("ascii") for s in strings]
        offsets = np.cumsum([0] + [len(s) for s in encoded[:-1]]).astype("<u8")
        with open(os.path.join(out, "strings.offsets"), "wb") as f:
            f.write(offsets.tobytes())
        with open(os.path.join(out, "strings.data"), "wb") as f:
            f.write(b"".join(encoded))
        for i, (name, spec, _) in enumerate(STRING_CASES):
            shutil.copy(os.path.join(frag, f"a{i}.tdb"), os.path.join(out, f"{name}.offsets.tile"))
            shutil.copy(os.path.join(frag, f"a{i}_var.tdb"), os.path.join(out, f"{name}.tile"))
            manifest.append({"name": name, "spec": spec, "datatype": "string_ascii",
                             "offsets_spec": STRING_OFFSETS[0], "tile": f"{name}.tile",
                             "offsets_tile": f"{name}.offsets.tile",
                             "offsets": "strings.offsets", "data": "strings.data"})
    finally:
        shutil.rmtree(tmp)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"tiledb": tiledb.libtiledb.version(), "cases": manifest}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
