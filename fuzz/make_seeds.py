#!/usr/bin/env python3
"""Writes the committed seed corpora of the fuzz targets (fuzz/corpus/<target>/) from tiles and
pipelines tdbfilter makes, TileDB-written generic tiles (tests/data/generic), and zlib/bzip2
streams from Python's zlib and bz2 modules (C zlib and libbzip2 1.0.8).

Usage: make_seeds.py LIBTDBFILTER [TARGET ...]   (run from the repository root; rewrites
fuzz/corpus, or only the named targets' corpora)

The array targets are seeded from the TileDB-Py-written arrays of tests/data/c_array:
array_parsers with their schema, enumeration and metadata payloads (generic tiles unwrapped),
array_folder with each of their files, prefixed by the byte that selects it. array_writer
takes a stream of choices (schema, then cells): its seeds are fixed pseudo-random streams, the
first byte alternating dense and sparse.
"""

import bz2
import ctypes
import random
import shutil
import struct
import sys
import zlib
from pathlib import Path

lib = ctypes.CDLL(sys.argv[1])
root = Path(__file__).resolve().parents[1]
corpus = root / "fuzz" / "corpus"
INT64, UINT8 = 1, 6  # TileDB datatype numbers (= indices in Datatype::ALL)


def pipeline(spec):
    p = ctypes.c_void_p()
    assert lib.tdb_pipeline_from_spec(spec.encode(), ctypes.byref(p), None) == 0, spec
    return p


def serialize(p):
    n = ctypes.c_size_t()
    lib.tdb_pipeline_serialize(p, None, ctypes.c_size_t(0), ctypes.byref(n), None)
    buf = ctypes.create_string_buffer(n.value)
    assert lib.tdb_pipeline_serialize(p, buf, n, ctypes.byref(n), None) == 0
    return buf.raw[: n.value]


def filter_tile(p, datatype, cell_size, cells):
    tile = ctypes.c_void_p()
    out = ctypes.c_void_p()
    assert lib.tdb_tile_create(ctypes.c_uint32(datatype), ctypes.c_uint64(cell_size), cells,
                               ctypes.c_size_t(len(cells)), ctypes.byref(tile), None) == 0
    assert lib.tdb_pipeline_filter(p, tile, ctypes.byref(out), None) == 0
    data = ctypes.c_void_p()
    size = ctypes.c_size_t()
    assert lib.tdb_tile_data(out, ctypes.byref(data), ctypes.byref(size), None) == 0
    raw = ctypes.string_at(data, size.value)
    lib.tdb_tile_free(out)
    lib.tdb_tile_free(tile)
    return raw


ONLY = set(sys.argv[2:])


def put(target, name, data):
    if ONLY and target not in ONLY:
        return
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


SPECS = ["zstd", "gzip", "lz4", "bzip2", "rle", "double_delta", "delta", "bitshuffle,lz4",
         "byteshuffle,zstd", "positive_delta,bit_width_reduction,zstd", "xor,gzip",
         "checksum_md5", "zstd,checksum_sha256", "scale_float:factor=0.5:offset=0:byte_width=2",
         "dictionary", "bit_width_reduction"]
cells64 = b"".join(struct.pack("<q", i * 8 + (i % 7)) for i in range(300))  # ascending
text = b"tdbfilter seeds: " + bytes(range(32, 127)) * 3


def main():
    if ONLY:
        for t in ONLY:
            shutil.rmtree(corpus / t, ignore_errors=True)
    else:
        shutil.rmtree(corpus, ignore_errors=True)
    for i, spec in enumerate(SPECS):
        p = pipeline(spec)
        ser = serialize(p)
        put("pipeline_deserialize", f"p{i:02}", bytes([22]) + ser)
        if spec in ("dictionary",):
            continue
        dt, cells = (INT64, cells64)
        if spec.startswith("scale_float"):
            dt, cells = 3, b"".join(struct.pack("<d", i * 0.5) for i in range(300))
        tile = filter_tile(p, dt, 8, cells)
        put("unfilter", f"u{i:02}", bytes([dt, 0, len(ser), 0]) + ser + tile)
        put("damaged_checked_tile", f"c{i:02}", bytes([i % 5, i % 4, 0, 0, 0]) + cells[:200])
    for f in sorted((root / "tests" / "data" / "generic").glob("*.tdb")):
        put("generic_tile", f.stem, f.read_bytes())
    # roundtrip: datatype index, filter count, flags, 4 bytes per filter, cells.
    for i in range(12):
        put("roundtrip", f"r{i:02}", bytes([i % 11, 1 + i % 4, i * 37 % 256]) +
            bytes((i * 13 + k * 29) % 256 for k in range(16)) + cells64[: 64 + 16 * i])
    for level in (0, 1, 6, 9):
        put("deflate_vs_zlib", f"d{level}", bytes([level]) + text + cells64[:500])
        put("inflate_vs_zlib", f"i{level}",
            struct.pack("<H", (len(text) + 3) // 4) + zlib.compress(text + b"\0" * (-len(text) % 4), level))
    for level in (1, 9):
        put("bzip2_vs_libbzip2", f"e{level}", bytes([level - 1]) + text + cells64[:400])
        stream = bz2.compress(text, level)
        put("bzip2_vs_libbzip2", f"s{level}", bytes([0x80 | level]) + struct.pack("<I", len(text)) + stream)
    array_seeds()
    for i in range(16):
        r = random.Random(i)
        put("array_writer", f"w{i:02}", bytes([i]) + bytes(r.randrange(256) for _ in range(64 + 160 * i)))
    n = sum(1 for _ in corpus.rglob("*") if _.is_file())
    print(f"make_seeds: {n} seed files in {corpus.relative_to(root)}")


def generic_payload(data):
    """The payload of the first generic tile of `data` (unencrypted)."""
    tile = ctypes.c_void_p()
    consumed = ctypes.c_uint64()
    assert lib.tdb_generic_tile_read(data, ctypes.c_size_t(len(data)), None, ctypes.c_size_t(0),
                                     ctypes.byref(tile), ctypes.byref(consumed), None) == 0
    ptr, n = ctypes.c_void_p(), ctypes.c_size_t()
    assert lib.tdb_tile_data(tile, ctypes.byref(ptr), ctypes.byref(n), None) == 0
    payload = ctypes.string_at(ptr, n.value)
    lib.tdb_tile_free(tile)
    return payload


def array_seeds():
    arrays = root / "tests" / "data" / "c_array"
    for a, name in enumerate(["dense", "sparse", "meta"]):
        files = sorted(f for f in (arrays / name).rglob("*") if f.is_file())
        for k, f in enumerate(files):
            which = a + 3 * k
            if which < 256:  # the target picks file (byte // 3) % files
                put("array_folder", f"{name}-{k:02}", bytes([which]) + f.read_bytes())
        for f in files:
            rel = f.relative_to(arrays / name).parts
            if rel[0] == "__schema" and len(rel) == 2:
                put("array_parsers", f"schema-{name}", b"\0" + generic_payload(f.read_bytes()))
            elif rel[0] == "__schema" and rel[1] == "__enumerations":
                put("array_parsers", f"enumeration-{name}", b"\1" + generic_payload(f.read_bytes()))
            elif rel[0] == "__meta":
                put("array_parsers", f"meta-{name}-{f.name[:8]}", b"\2" + generic_payload(f.read_bytes()))


main()
