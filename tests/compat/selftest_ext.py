"""Self-tests of the extended harness (filterspec, refdecode_ext, arrayspec, fieldcheck).

Run through selftest.py (which calls `run`), or alone:

    .venv/bin/python tests/compat/selftest_ext.py [LIBRARY]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import arrayspec as asp  # noqa: E402
import filterspec as fs  # noqa: E402
import refdecode_ext as rx  # noqa: E402
from filterspec import F  # noqa: E402


def _expect_fn():
    import selftest
    return selftest.expect


# docs/FORMAT.md §9.1 pipelines with options.
SPEC_PIPELINES = [
    ("[BIT_WIDTH_REDUCTION(window 128)]", (F(fs.BWR, window=128),), "00000100 01000000 07 04000000 80000000"),
    ("[POSITIVE_DELTA(default)]", (F(fs.POSITIVE_DELTA),), "00000100 01000000 0a 04000000 00040000"),
    ("[DOUBLE_DELTA(reinterpret INT32)]", (F(fs.DOUBLE_DELTA, reinterpret=0),),
     "00000100 01000000 06 06000000 06 ffffffff 00"),
    ("[DELTA(default)]", (F(fs.DELTA),), "00000100 01000000 13 06000000 08 ffffffff 11"),
    ("[DICTIONARY]", (F(fs.DICTIONARY),), "00000100 01000000 0e 05000000 07 ffffffff"),
    ("[SCALE_FLOAT(0.5, 10.0, 2)]", (F(fs.SCALE_FLOAT, factor=0.5, offset=10.0, bytewidth=2),),
     "00000100 01000000 0f 18000000 000000000000e03f 0000000000002440 0200000000000000"),
    ("[MD5, SHA256, XOR, NONE, BITSHUFFLE]", (F(fs.MD5), F(fs.SHA256), F(fs.XOR), F(fs.NONE), F(fs.BITSHUFFLE)),
     "00000100 05000000 0c 00000000 0d 00000000 10 00000000 00 00000000 08 00000000"),
    ("[LZ4, BZIP2, RLE]", (F(fs.LZ4), F(fs.BZIP2), F(fs.RLE)),
     "00000100 03000000 03 05000000 03 ffffffff 05 05000000 05 ffffffff 04 05000000 04 ffffffff"),
    ("WEBP lossless RGB 32 x 288 (§5.19)", (F(fs.WEBP, fmt=fs.WEBP_RGB, lossless=True, extents=(32, 288)),),
     "00000100 01000000 12 0c000000 0000c842 01 01 2000 2001 0000"),
]


def test_serialization(expect):
    for name, filters, hexstr in SPEC_PIPELINES:
        raw = bytes.fromhex(hexstr.replace(" ", ""))
        expect(fs.serialize(filters) == raw, f"§9.1 {name}: filterspec.serialize reproduces it")
        import tiledb_format as tf
        parsed = rx.to_filters(tf.parse_pipeline(tf.Reader(raw)))
        expect(fs.serialize(parsed) == raw, f"§9.1 {name}: parse + serialize round trip")


def test_chunking(expect):
    expect(asp.var_chunk_sizes([40000, 40000], 1) == [80000, 0], "§4.5: two 40000-byte cells give [80000, 0]")
    got = asp.var_chunk_sizes([30000, 30000, 30000, 100000, 10, 70000], 1)
    expect(got == [90000, 100000, 70010, 0], f"§4.5 example gives [90000, 100000, 70010, 0] ({got})")
    expect(asp.var_chunk_sizes([0, 0, 0], 1) == [0], "§4.5: an all-empty var tile is one empty chunk")
    expect(asp.var_chunk_sizes([5, 0, 7], 1) == [12], "§4.5: a tile smaller than 64 KiB is one chunk")
    expect(asp.var_chunk_sizes([70000], 1, chunking=False) == [70000], "§4.4: no chunking gives one chunk")


def test_reference_decoder(expect):
    errs = rx.check_spec_vectors()
    expect(not errs, f"refdecode_ext decodes the docs/FORMAT.md §9.2 vectors ({errs})")
    # DOUBLE_DELTA: raw path, N <= 2, and a wide bit width.
    for vals, elem in (([5], np.int32), ([5, -9], np.int64), ([0, 2**40, -2**40, 3, 7], np.int64),
                       (list(range(0, 256, 3)), np.uint8)):
        x = np.array(vals, dtype=elem)
        s = x.itemsize
        b = 8 * s - 1
        raw = bytes([b]) + len(x).to_bytes(8, "little") + x.tobytes()
        expect(rx.double_delta_part(raw, elem) == x.tobytes(), f"DOUBLE_DELTA raw path for {vals[:4]}")


def test_predictors(expect):
    t = asp.var_tiles([b"a", b"b" * 300], 2)[0]
    expect(bool(asp.rle_string_defect(t)), "§5.8: strings 'a', 'b'x300 hit the RLE max_len quirk")
    t = asp.var_tiles([b"b" * 300, b"a"], 2)[0]
    expect(not asp.rle_string_defect(t), "§5.8: a long first string does not")
    fx = asp.FieldExpect("r", "c", "n", 1, asp.var_tiles([b"\0" * 40000, b"\1" * 40000], 2), var=True)
    expect(asp.empty_part_defect(fx, (F(fs.BWR),))[0] == "crash", "§8.3: BWR on a trailing empty chunk crashes")
    expect(asp.empty_part_defect(fx, (F(fs.DELTA), F(fs.ZSTD)))[0] == "unreadable",
           "§5.11: DELTA on a trailing empty chunk is unreadable")
    expect(asp.empty_part_defect(fx, (F(fs.ZSTD),))[0] == "", "ZSTD handles the empty chunk")
    expect(asp.double_delta_overflow(np.array([0, 2**62, -2**62], np.int64), np.int64), "DD overflow predicted")
    expect(not asp.double_delta_overflow(np.arange(10, dtype=np.int64), np.int64), "no DD overflow on a ramp")
    ramp = asp.FieldExpect("r", "c", "n", 1, asp.fixed_tiles(np.arange(100, dtype=np.int64), 100))
    expect(not asp.dd_defect(ramp, (F(fs.DOUBLE_DELTA),)), "DD on a ramp is writable")
    hits = sum("checksum" in asp.dd_defect(
        asp.FieldExpect("r", "c", "n", 1, asp.fixed_tiles(np.arange(k, k + 100, dtype=np.int64), 100)),
        (F(fs.MD5), F(fs.DOUBLE_DELTA))) for k in range(20))
    expect(hits > 0, f"DD after MD5 on 8-byte values can overflow on the digest ({hits} of 20 ramps)")


def test_accepts_matches_tiledb(expect, root):
    """filterspec.accepts against TileDB's schema check on a few combinations."""
    import tiledb
    cases = [((F(fs.DOUBLE_DELTA),), "float64"), ((F(fs.DOUBLE_DELTA, reinterpret=1),), "float64"),
             ((F(fs.BWR),), "float32"), ((F(fs.SCALE_FLOAT),), "int16"), ((F(fs.SCALE_FLOAT),), "int64"),
             ((F(fs.POSITIVE_DELTA),), "bool"), ((F(fs.XOR),), "datetime64[ns]"),
             ((F(fs.SCALE_FLOAT, bytewidth=1), F(fs.BWR)), "float32"), ((F(fs.DELTA, reinterpret=1),), "int32")]
    dt = {"float64": 3, "float32": 2, "int16": 7, "int64": 1, "bool": 41, "datetime64[ns]": 27, "int32": 0}
    for i, (filters, d) in enumerate(cases):
        uri = os.path.join(root, f"acc{i}")
        try:
            a = tiledb.Attr("a", dtype=np.dtype(d), filters=fs.tiledb_filter_list(filters))
            s = tiledb.ArraySchema(domain=tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=10, dtype=np.uint64)),
                                   attrs=[a])
            tiledb.Array.create(uri, s)
            accepted = True
        except tiledb.TileDBError:
            accepted = False
        model = fs.accepts(filters, dt[d]) is None
        expect(accepted == model, f"accepts({fs.pipeline_name(filters)}, {d}) = {model} as TileDB ({accepted})")


def test_detects_bad_var_codec(expect, root, lib_path):
    """With the library, corrupting var-size encode / decode output must fail E / D."""
    import extended
    import tdbfilter_ctypes as T
    real_fv, real_uv, real_f = T.Pipeline.filter_var, T.Pipeline.unfilter_var, T.Pipeline.filter

    def fv(self, op, dt, o, d):
        a, b = real_fv(self, op, dt, o, d)
        return a, b[:-1] + bytes([b[-1] ^ 1])

    def uv(self, op, a, b, dt):
        o, d = real_uv(self, op, a, b, dt)
        return o, (d[:-1] + bytes([d[-1] ^ 1])) if d else d

    def ff(self, tile):
        out = real_f(self, tile)
        return out[:-1] + bytes([out[-1] ^ 1])

    lib = T.Library(lib_path)
    if not lib.has_var_api:
        print(f"skip var-size detection test: the library lacks {lib.missing}")
        return
    T.Pipeline.filter_var, T.Pipeline.unfilter_var, T.Pipeline.filter = fv, uv, ff
    try:
        res = extended.run_job({"job": ("nullable", "utf8/v1"), "lib": lib_path, "workdir": root})
    finally:
        T.Pipeline.filter_var, T.Pipeline.unfilter_var, T.Pipeline.filter = real_fv, real_uv, real_f
    by = {(r["pipeline"], r["check"]): r for r in res}
    expect(by[("dict", "E")]["status"] == "fail", "E: a corrupted var-size encode is reported")
    expect(by[("zstd", "D")]["status"] == "fail", "D: a corrupted var-size decode is reported")
    expect("validity" in by[("zstd", "E")]["detail"], "E: a corrupted validity tile is reported")
    expect(by[("dict", "S")]["status"] == "pass", "S is unaffected")


def run(root, lib_path=None, expect=None):
    expect = expect or _expect_fn()
    test_serialization(expect)
    test_chunking(expect)
    test_reference_decoder(expect)
    test_predictors(expect)
    test_accepts_matches_tiledb(expect, root)
    if lib_path and os.path.exists(lib_path):
        test_detects_bad_var_codec(expect, root, lib_path)


def main():
    import selftest
    from tdbfilter_ctypes import default_library_path
    root = tempfile.mkdtemp(prefix="tdbfilter-selftest-ext-")
    try:
        run(root, sys.argv[1] if len(sys.argv) > 1 else default_library_path(), selftest.expect)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"\n{len(selftest.FAILURES)} self-test failure(s)")
    return 1 if selftest.FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
