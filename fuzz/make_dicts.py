#!/usr/bin/env python3
"""Writes the libFuzzer dictionaries fuzz/dict/<target>.dict: the byte strings of TileDB's formats
that random mutation rarely produces, for the targets that parse those formats.

* Filter entries (`u8 type, u32 options length, options`) as tdbfilter serializes every filter
  of TileDB 2.30 with its usual options, and pipeline headers (`u32 max chunk, u32 count`),
  docs/FORMAT.md §3 — for pipeline_deserialize, unfilter, generic_tile and array_folder.
* Chunk table and codec stream prefixes (chunk count, the compression filter's 16-byte part
  metadata, zstd / zlib / bzip2 magic) — for unfilter, generic_tile and array_folder.
* The generic tile header fields TileDB writes (version 22, CHAR cells of 1 byte, GZIP or
  AES pipelines), docs/ARRAY.md §2 — for generic_tile and array_folder.
* Array schema, enumeration and array metadata fields (versions, default pipelines, var cell
  count, fill values, the current domain, names of the fixture arrays and TileDB-Py's metadata
  keys), docs/ARRAY.md §3 and §6 — for array_parsers and array_folder.

Usage: make_dicts.py LIBTDBFILTER   (run from the repository root; rewrites fuzz/dict/)
scripts/test.d/60-fuzz.sh passes each target its dictionary and fails if one is missing.
"""

import ctypes
import re
import struct
import sys
from pathlib import Path

lib = ctypes.CDLL(sys.argv[1])
root = Path(__file__).resolve().parents[1]
out_dir = root / "fuzz" / "dict"

# Every filter of TileDB 2.30 (docs/FILTERS.md) with the options its tests and TileDB use.
SPECS = [
    "none", "gzip:1", "gzip:6", "gzip:9", "zstd:-1", "zstd:3", "zstd:19", "lz4", "rle",
    "bzip2:1", "bzip2:9", "double_delta", "bit_width_reduction", "bit_width_reduction:1024",
    "bitshuffle", "byteshuffle", "positive_delta", "positive_delta:256", "checksum_md5",
    "checksum_sha256", "dictionary", "scale_float:factor=0.5:offset=0:byte_width=4",
    "scale_float:factor=1:offset=0:byte_width=8", "xor", "delta",
]


def serialize(spec):
    p = ctypes.c_void_p()
    assert lib.tdb_pipeline_from_spec(spec.encode(), ctypes.byref(p), None) == 0, spec
    n = ctypes.c_size_t()
    lib.tdb_pipeline_serialize(p, None, ctypes.c_size_t(0), ctypes.byref(n), None)
    buf = ctypes.create_string_buffer(n.value)
    assert lib.tdb_pipeline_serialize(p, buf, n, ctypes.byref(n), None) == 0, spec
    lib.tdb_pipeline_free(p)
    return buf.raw[: n.value]


def u32(v):
    return struct.pack("<I", v)


def u64(v):
    return struct.pack("<Q", v)


def filter_entries():
    """name -> serialized filter entry (the pipeline without its 8-byte header)."""
    entries = {}
    for spec in SPECS:
        b = serialize(spec)
        if spec == "none":
            continue  # the empty pipeline: only its header
        entries["filter_" + re.sub(r"[^A-Za-z0-9]+", "_", spec.replace("-", "m"))] = b[8:]
    return entries


PIPELINE_HEADERS = {
    "pipeline_65536_0": u32(65536) + u32(0),
    "pipeline_65536_1": u32(65536) + u32(1),
    "pipeline_65536_2": u32(65536) + u32(2),
    "pipeline_65536_3": u32(65536) + u32(3),
    # AES-256-GCM (type 11): never serialized in schemas, present in encrypted generic tiles.
    "filter_aes": bytes([11]) + u32(0),
}

TILE = {
    "chunks_1": u64(1),
    "chunks_2": u64(2),
    "chunk_65536": u32(65536),
    # The compression filter's part metadata: 0 metadata parts, 1 data part (docs/ARRAY.md §2).
    "compression_parts": u32(0) + u32(1),
    "zstd_magic": b"\x28\xb5\x2f\xfd",
    "zlib_level1": b"\x78\x01",
    "zlib_default": b"\x78\x9c",
    "zlib_best": b"\x78\xda",
    "bzip2_stream": b"BZh9",
    "bzip2_block": b"\x31\x41\x59\x26\x53\x59",
    "bzip2_eos": b"\x17\x72\x45\x38\x50\x90",
    "var_marker": u64(0),
}

GENERIC = {
    "version_22": u32(22),
    "char_cells_1": bytes([4]) + u64(1),
    "unencrypted_fps18": bytes([0]) + u32(18),
    "aes_fps23": bytes([1]) + u32(23),
    "gzip1_pipeline": serialize("gzip:1"),
}

SCHEMA = {
    "version_22": u32(22),
    "version_20": u32(20),
    "version_18": u32(18),
    "version_17": u32(17),
    "version_15": u32(15),
    "version_12": u32(12),
    "version_10": u32(10),
    "version_7": u32(7),
    "version_5": u32(5),
    "capacity_10000": u64(10000),
    "var_cell_val_num": b"\xff\xff\xff\xff",
    "default_coords_zstd": serialize("zstd:-1"),
    "default_validity_rle": u32(65536) + u32(1) + bytes([4]) + u32(5) + bytes([4]) + b"\xff\xff\xff\xff",
    "empty_pipeline": serialize("none"),
    "int32_fill": u64(4) + u32(0x80000000),
    "var_fill": u64(1) + b"\x00",
    "domain_size_16": u64(16),
    "domain_size_8": u64(8),
    "current_domain_empty": u32(0) + b"\x01",
    "enumeration_version_0": u32(0),
    "name_a": u32(1) + b"a",
    "name_d": u32(1) + b"d",
    "name_a0": u32(2) + b"a0",
    "name_a1": u32(2) + b"a1",
    "name_d0": u32(2) + b"d0",
    "name_d1": u32(2) + b"d1",
    "key_np_flat": b"__np_flat_",
    "key_np_shape": b"__np_shape_",
    "utf8_value": bytes([12]),
    "blob_value": bytes([40]),
}

TARGETS = {
    "pipeline_deserialize": [PIPELINE_HEADERS, filter_entries()],
    "unfilter": [PIPELINE_HEADERS, filter_entries(), TILE],
    "generic_tile": [GENERIC, PIPELINE_HEADERS, TILE],
    "array_parsers": [SCHEMA, filter_entries(), PIPELINE_HEADERS],
    "array_folder": [GENERIC, SCHEMA, PIPELINE_HEADERS, filter_entries(), TILE],
}


def escape(b):
    return "".join(chr(c) if 32 <= c < 127 and chr(c) not in '"\\' else f"\\x{c:02x}" for c in b)


def main():
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*.dict"):
        old.unlink()
    for target, groups in TARGETS.items():
        seen = set()
        lines = [f"# libFuzzer dictionary of {target}, written by fuzz/make_dicts.py"]
        for group in groups:
            for name, value in group.items():
                if value in seen:
                    continue
                seen.add(value)
                lines.append(f'{name}="{escape(value)}"')
        (out_dir / f"{target}.dict").write_text("\n".join(lines) + "\n")
        print(f"{target}: {len(seen)} entries")


main()
