"""Checks `tdbf advise`'s TileDB-Py FilterList strings against real TileDB-Py (0.36.1).

For every pipeline `tdbf advise --json` ranks on generated int64 and float64 data (the float
run with --max-error, so SCALE_FLOAT candidates appear), it
  * evaluates the `tiledb_py` string with TileDB-Py and checks that the filters, in order,
    are the classes the spec names (an independent table below) with the spec's levels and
    windows;
  * creates a dense array whose attribute uses that FilterList, writes cells, reads them
    back and compares them (exactly, or within --max-error for lossy pipelines): TileDB
    accepts every pipeline advise recommends for the datatype.

Usage: check_tiledb_py.py TDBF
"""

import json
import subprocess
import sys
import tempfile

import numpy as np
import tiledb

# Spec name -> TileDB-Py class name, written independently of tdbf's own table.
CLASSES = {
    "none": "NoOpFilter",
    "gzip": "GzipFilter",
    "zstd": "ZstdFilter",
    "lz4": "LZ4Filter",
    "rle": "RleFilter",
    "bzip2": "Bzip2Filter",
    "double_delta": "DoubleDeltaFilter",
    "bit_width_reduction": "BitWidthReductionFilter",
    "bitshuffle": "BitShuffleFilter",
    "byteshuffle": "ByteShuffleFilter",
    "positive_delta": "PositiveDeltaFilter",
    "scale_float": "FloatScaleFilter",
    "xor": "XORFilter",
    "delta": "DeltaFilter",
}
LEVELED = {"gzip", "zstd", "lz4", "rle", "bzip2", "double_delta", "delta"}
WINDOWED = {"bit_width_reduction", "positive_delta"}


def advise(tdbf, path, dtype, extra):
    out = subprocess.run(
        [tdbf, "advise", "--type", dtype, "--json", "--top", "1000", "--repeat", "1",
         "--sample-bytes", "256KiB", "--tile-bytes", "64KiB", "--time-budget", "10m",
         *extra, path],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)


def check_filter_list(spec, filters):
    items = [] if spec == "none" else spec.split(",")
    assert len(items) == len(filters), f"{spec}: {len(filters)} filters in TileDB-Py"
    for item, f in zip(items, filters):
        name, *opts = item.split(":")
        assert type(f).__name__ == CLASSES[name], f"{spec}: {item} became {type(f).__name__}"
        if name in LEVELED:
            assert f.level == int(opts[0]), f"{spec}: level {f.level}"
        if name in WINDOWED:
            assert f.window == int(opts[0]), f"{spec}: window {f.window}"
        if name == "scale_float":
            kv = dict(o.split("=") for o in opts)
            assert f.factor == float(kv["factor"]) and f.offset == float(kv["offset"])
            assert f.bytewidth == int(kv["byte_width"])
        if name in ("delta", "double_delta") and any(o.startswith("reinterpret=") for o in opts):
            want = [o for o in opts if o.startswith("reinterpret=")][0].split("=")[1]
            assert np.dtype(f.reinterp_dtype) == np.dtype(want), f"{spec}: {f.reinterp_dtype}"


def roundtrip(result, cells, dtype, max_error, workdir, n):
    filters = eval(result["tiledb_py"], {"tiledb": tiledb})  # noqa: S307 (our own output)
    check_filter_list(result["spec"], filters)
    uri = f"{workdir}/a{n}"
    dom = tiledb.Domain(tiledb.Dim(name="d", domain=(0, len(cells) - 1), tile=len(cells), dtype=np.uint64))
    schema = tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr(name="a", dtype=dtype, filters=filters)])
    tiledb.Array.create(uri, schema)
    with tiledb.open(uri, "w") as A:
        A[:] = cells
    with tiledb.open(uri) as A:
        back = A[:]["a"]
    if result["lossy"]:
        worst = float(np.max(np.abs(back - cells)))
        assert worst <= max_error, f"{result['spec']}: TileDB read back an error of {worst}"
    else:
        assert np.array_equal(back, cells), f"{result['spec']}: TileDB read back other values"


def main():
    tdbf = sys.argv[1]
    rng = np.random.default_rng(7)
    n = 32768
    ints = (1_700_000_000_000 + np.cumsum(1000 + rng.integers(0, 4, n))).astype(np.int64)
    floats = 20.0 + np.sin(np.arange(n) / 1000.0) + rng.random(n) * 1e-6
    checked = 0
    with tempfile.TemporaryDirectory() as work:
        for cells, dtype, extra, max_error in [
            (ints, "int64", [], 0.0),
            (floats, "float64", ["--max-error", "0.001"], 0.001),
        ]:
            path = f"{work}/{dtype}.bin"
            cells.tofile(path)
            report = advise(tdbf, path, dtype, extra)
            assert report["untried"] == 0 and report["results"], report
            for r in report["results"]:
                roundtrip(r, cells, np.dtype(dtype), max_error, work, checked)
                checked += 1
    print(f"check_tiledb_py: {checked} advised pipelines built and read back by TileDB-Py")


if __name__ == "__main__":
    main()
