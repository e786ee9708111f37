#!/usr/bin/env python3
"""Self-test of the harness itself (no libtdbfilter needed).

Checks the schema/generic-tile parser, the pipeline serializer, the Python
reference decoder, the GZIP-defect predictor and the read-back path against
docs/FORMAT.md vectors and arrays written by TileDB-Py. Exit 0 on success.

    .venv/bin/python tests/compat/selftest.py [LIBRARY]

With a built library (argument, $TDBFILTER_LIB or target/release), it also
checks that a deliberately corrupted encode is caught.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import arraygen  # noqa: E402
import checks  # noqa: E402
import refdecode  # noqa: E402
import tiledb_format as tf  # noqa: E402

FAILURES = []


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


# docs/FORMAT.md §9.1, serialized pipelines taken from real schemas.
SPEC_PIPELINES = {
    "empty": ("0000010000000000", []),
    "[BYTESHUFFLE, ZSTD(-1)]": ("00000100 02000000 09 00000000 02 05000000 02 ffffffff", [(9, None), (2, -1)]),
    "[GZIP(9)]": ("00000100 01000000 01 05000000 01 09000000", [(1, 9)]),
    "[MD5, SHA256, XOR, NONE, BITSHUFFLE]": (
        "00000100 05000000 0c 00000000 0d 00000000 10 00000000 00 00000000 08 00000000",
        [(12, None), (13, None), (16, None), (0, None), (8, None)]),
    "[LZ4, BZIP2, RLE]": ("00000100 03000000 03 05000000 03 ffffffff 05 05000000 05 ffffffff 04 05000000 04 ffffffff",
                          [(3, -1), (5, -1), (4, -1)]),
    "[DOUBLE_DELTA(reinterpret INT32)]": ("00000100 01000000 06 06000000 06 ffffffff 00", None),
    "[SCALE_FLOAT(0.5, 10.0, 2)]": (
        "00000100 01000000 0f 18000000 000000000000e03f 0000000000002440 0200000000000000", None),
}


def test_pipeline_vectors():
    for name, (hexstr, filters) in SPEC_PIPELINES.items():
        raw = bytes.fromhex(hexstr.replace(" ", ""))
        r = tf.Reader(raw)
        desc = tf.parse_pipeline(r)
        expect(r.pos == len(raw), f"§9.1 {name}: parser consumes all {len(raw)} bytes")
        if filters is not None:
            expect([f.ftype for f in desc.filters] == [t for t, _ in filters], f"§9.1 {name}: filter types")
            expect(tf.serialize_pipeline(filters) == raw, f"§9.1 {name}: serialize_pipeline reproduces it")


def test_real_schema(root):
    import numpy as np
    import tiledb
    uri = os.path.join(root, "schema-test")
    dim = tiledb.Dim(name="d", domain=(0, 99), tile=100, dtype=np.uint64)
    attrs = [
        tiledb.Attr(name="g9", dtype=np.int32, filters=tiledb.FilterList([tiledb.GzipFilter(9)])),
        tiledb.Attr(name="bz", dtype=np.int32, filters=tiledb.FilterList([tiledb.ByteShuffleFilter(),
                                                                          tiledb.ZstdFilter(-1)])),
        tiledb.Attr(name="x3", dtype=np.dtype("i4,i4,i4")),
        tiledb.Attr(name="ts", dtype=np.dtype("M8[ns]"), filters=tiledb.FilterList([tiledb.ZstdFilter(-8)])),
    ]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=tiledb.Domain(dim), attrs=attrs, sparse=False))
    sdir = os.path.join(uri, "__schema")
    path = [os.path.join(sdir, f) for f in os.listdir(sdir) if os.path.isfile(os.path.join(sdir, f))][0]
    gt, schema = tf.read_schema_file(path)
    expect(not gt.anomalies, f"generic tile header as in docs/FORMAT.md §6 ({gt.anomalies})")
    expect(gt.pipeline_bytes == tf.GENERIC_TILE_PIPELINE, "generic tile pipeline is [GZIP level 1]")
    expect(schema.version == 22, f"schema format version 22 (got {schema.version})")
    a = {x.name: x for x in schema.attributes}
    expect([x.name for x in schema.attributes] == ["g9", "bz", "x3", "ts"], "attribute order")
    expect(a["g9"].pipeline_bytes.hex() == "000001000100000001050000000109000000",
           "GZIP(9) attribute gives docs/FORMAT.md §9.1 bytes")
    expect(a["bz"].pipeline_bytes.hex() == "00000100020000000900000000020500000002ffffffff",
           "[BYTESHUFFLE, ZSTD(-1)] attribute gives docs/FORMAT.md §9.1 bytes")
    expect(a["x3"].datatype == 0 and a["x3"].cell_val_num == 3, "int32 x3 attribute: INT32, cell_val_num 3")
    expect(a["ts"].datatype == 27 and a["ts"].pipeline_bytes == tf.serialize_pipeline([(2, -8)]),
           "DATETIME_NS attribute with ZSTD(-8): level stored as given")
    expect(schema.offsets_pipeline == tf.serialize_pipeline([(2, -1)]), "default offsets pipeline [ZSTD -1]")
    expect(schema.validity_pipeline == tf.serialize_pipeline([(4, -1)]), "default validity pipeline [RLE -1]")
    expect(schema.dimensions[0].tile_extent == (100).to_bytes(8, "little"), "dimension tile extent parsed")


def test_reference_decoder():
    errs = refdecode.check_spec_vectors()
    expect(not errs, f"reference decoder decodes docs/FORMAT.md §9.2 vectors ({errs})")


def test_describe_offset():
    # One chunk: header at 8..19, 4 bytes metadata at 20..23, 3 bytes data at 24..26.
    tile = (1).to_bytes(8, "little") + bytes.fromhex("03000000 03000000 04000000".replace(" ", "")) + \
        b"MMMMDDD"
    expect(tf.describe_offset(tile, 3) == "num_chunks field (+3)", "describe_offset: num_chunks")
    expect(tf.describe_offset(tile, 13) == "chunk 0 header filtered_length", "describe_offset: chunk header")
    expect(tf.describe_offset(tile, 21).startswith("chunk 0 metadata +1"), "describe_offset: metadata")
    expect(tf.describe_offset(tile, 26).startswith("chunk 0 data +2"), "describe_offset: data")
    expect(checks.first_diff(b"abcdef", b"abcxef") == 3 and checks.first_diff(b"ab", b"abc") == 2,
           "first_diff")


def test_gzip_prediction():
    dt = {d.name: d for d in arraygen.DATATYPES}
    tc = {t.name: t for t in arraygen.TILE_CONFIGS}
    names = {arraygen.attr_name(i): p.name for i, p in enumerate(arraygen.PIPELINES)}
    got = {names[n] for n in arraygen.predict_gzip_overflow(dt["int8"], "random", tc["large"])}
    expect(got == {"gzip(-1)", "gzip(1)", "gzip(9)", "md5+gzip"},
           f"GZIP defect predicted for 50000-byte random int8 tiles at levels != 0 ({sorted(got)})")
    got = arraygen.predict_gzip_overflow(dt["int32"], "random", tc["large"])
    expect(not got, "no GZIP defect predicted for 65536-byte chunks")


def test_read_back(root):
    """R path: identical tile reads back, corrupted tiles are caught."""
    dt = next(d for d in arraygen.DATATYPES if d.name == "int32")
    tc = arraygen.TileConfig("rb", 1000, 2)
    pipes = [arraygen.PIPELINES[0], arraygen.PIPELINES[3]]  # none, checksum_md5
    w = arraygen.write_array(root, dt, "random", tc, pipelines=pipes)
    frag = w.fragment_dir()
    ck = checks.ArrayChecker(w, lib=None)
    for idx, (name, pc) in enumerate(w.attr_pipelines.items()):
        path = os.path.join(frag, f"a{idx}.tdb")
        data = open(path, "rb").read()
        (off0, size0), (off1, size1) = tf.split_data_file(data)
        tile1 = bytearray(data[off1:off1 + size1])
        tile1[-1] ^= 0xFF  # last data byte of the last chunk
        ck.substitutions.append((path, off0, data[off0:off0 + size0], name, pc, 0))
        ck.substitutions.append((path, off1, bytes(tile1), name, pc, 1))
    ck.read_back_substitutions()
    rs = {r.pipeline: r for r in ck.results}
    expect(rs["none"].status == "fail" and "wrong cells" in rs["none"].detail,
           f"R: a corrupted unchecked tile reads back wrong cells ({rs['none'].detail[:100]})")
    expect(rs["checksum_md5"].status == "fail", "R: a corrupted checksummed tile is reported")
    expect("checksum" in rs["checksum_md5"].detail.lower() or "mismatch" in rs["checksum_md5"].detail.lower(),
           f"R: TileDB's checksum error is reported ({rs['checksum_md5'].detail[:120]})")
    # Now restore the original bytes and substitute the unmodified tiles only.
    shutil.rmtree(w.uri)
    w = arraygen.write_array(root, dt, "random", tc, pipelines=pipes)
    frag = w.fragment_dir()
    ck = checks.ArrayChecker(w, lib=None)
    for idx, (name, pc) in enumerate(w.attr_pipelines.items()):
        path = os.path.join(frag, f"a{idx}.tdb")
        data = open(path, "rb").read()
        for i, (off, size) in enumerate(tf.split_data_file(data)):
            ck.substitutions.append((path, off, data[off:off + size], name, pc, i))
    ck.read_back_substitutions()
    expect(all(r.status == "pass" for r in ck.results) and len(ck.results) == 2,
           "R: unmodified substituted tiles read back as the written cells")


def test_detects_bad_encode(root, lib_path):
    """With the real library, a one-bit corruption of filter output must fail E (not D/S)."""
    import tdbfilter_ctypes as T
    lib = T.Library(lib_path)
    dt = next(d for d in arraygen.DATATYPES if d.name == "int32")
    pipes = [arraygen.PIPELINES[0], arraygen.PIPELINES[15]]  # none, lz4
    w = arraygen.write_array(root, dt, "runs", arraygen.TileConfig("neg", 1000, 1), pipelines=pipes)
    real_filter = T.Pipeline.filter

    def corrupt(self, tile):
        out = bytearray(real_filter(self, tile))
        out[len(out) - 2] ^= 0x01
        return bytes(out)

    T.Pipeline.filter = corrupt
    try:
        res = checks.ArrayChecker(w, lib).run()
    finally:
        T.Pipeline.filter = real_filter
    by = {(r.pipeline, r.check): r for r in res}
    expect(by[("none", "E")].status == "fail" and "first difference at byte" in by[("none", "E")].detail,
           "E: a corrupted encode is reported with its first differing byte")
    expect(by[("lz4", "E")].status == "fail", "E: a corrupted LZ4 encode fails validation")
    expect(by[("none", "D")].status == "pass" and by[("none", "S")].status == "pass",
           "D and S are unaffected by an encode corruption")


def main():
    root = tempfile.mkdtemp(prefix="tdbfilter-selftest-")
    try:
        test_pipeline_vectors()
        test_real_schema(root)
        test_reference_decoder()
        test_describe_offset()
        test_gzip_prediction()
        test_read_back(root)
        from tdbfilter_ctypes import default_library_path
        lib_path = sys.argv[1] if len(sys.argv) > 1 else default_library_path()
        if os.path.exists(lib_path):
            test_detects_bad_encode(root, lib_path)
        else:
            print(f"skip detection test with the library: {lib_path} not built")
        import selftest_ext
        selftest_ext.run(root, lib_path if os.path.exists(lib_path) else None, expect)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"\n{len(FAILURES)} self-test failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
