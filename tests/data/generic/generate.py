#!/usr/bin/env python3
"""Regenerates the generic-tile test vectors in this directory (docs/FORMAT.md §6).

Step 1, with TileDB-Py 0.36.1 (libtiledb 2.30.0):
    .venv/bin/python tests/data/generic/generate.py arrays
  writes two tiny dense arrays (one plain, one encrypted with AES-256-GCM through the
  config key below) and copies their schema, fragment metadata and array metadata files
  here under short names.

Step 2, with any Python that has the `cryptography` package:
    python3 tests/data/generic/generate.py manifest
  decodes every generic tile of those files independently of tdbfilter (zlib for GZIP,
  AES-GCM for the encryption filter, the layouts of docs/FORMAT.md §4.1, §5.2, §5.20, §6) and
  writes manifest.txt, which the Rust tests compare against.

manifest.txt lines (space separated):
    tile FILE INDEX OFFSET CONSUMED VERSION PERSISTED_SIZE TILE_SIZE DATATYPE CELL_SIZE
         ENCRYPTION_TYPE PIPELINE_HEX CHUNKS PAYLOAD_SHA256
    end FILE OFFSET            (where the generic tiles stop: the footer or the file end)
"""

import hashlib
import os
import shutil
import struct
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
KEY = "0123456789abcdeF0123456789abcdeF"  # the raw 32 bytes are the AES key
FILES = [
    "schema_plain.tdb",
    "schema_aes.tdb",
    "frag_meta_plain.tdb",
    "frag_meta_aes.tdb",
    "array_meta_plain.tdb",
    "array_meta_aes.tdb",
]


def arrays():
    import numpy as np
    import tiledb

    def make(uri, ctx):
        dom = tiledb.Domain(tiledb.Dim(name="d", domain=(0, 7), tile=8, dtype=np.int32))
        schema = tiledb.ArraySchema(
            domain=dom, attrs=[tiledb.Attr(name="a", dtype=np.int32)], sparse=False
        )
        tiledb.Array.create(uri, schema, ctx=ctx)
        with tiledb.open(uri, "w", ctx=ctx) as a:
            a[:] = np.arange(8, dtype=np.int32)
        with tiledb.open(uri, "w", ctx=ctx) as a:
            # 150 050 payload bytes: a generic tile of three chunks (65536, 65536, 18978).
            a.meta["big"] = bytes((i * 7 + (i >> 9)) % 251 for i in range(150000))

    def only(path):
        (name,) = [n for n in os.listdir(path) if not n.startswith("__enumerations")]
        return os.path.join(path, name)

    tmp = tempfile.mkdtemp()
    try:
        for suffix, cfg in [
            ("plain", None),
            ("aes", {"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": KEY}),
        ]:
            uri = os.path.join(tmp, suffix)
            make(uri, tiledb.Ctx(tiledb.Config(cfg) if cfg else None))
            frag = only(os.path.join(uri, "__fragments"))
            shutil.copy(only(os.path.join(uri, "__schema")), os.path.join(HERE, f"schema_{suffix}.tdb"))
            shutil.copy(
                os.path.join(frag, "__fragment_metadata.tdb"),
                os.path.join(HERE, f"frag_meta_{suffix}.tdb"),
            )
            shutil.copy(only(os.path.join(uri, "__meta")), os.path.join(HERE, f"array_meta_{suffix}.tdb"))
    finally:
        shutil.rmtree(tmp)


def decode_chunk(md, data, encrypted):
    """Reverses [GZIP level 1] or [GZIP level 1, AES] on one chunk."""
    if encrypted:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        n_md, n_data = struct.unpack_from("<II", md, 0)
        pos, plain_md, plain_data = 0, b"", b""
        for k in range(n_md + n_data):
            plen, clen = struct.unpack_from("<II", md, 8 + 36 * k)
            assert plen == clen
            iv = md[8 + 36 * k + 8 : 8 + 36 * k + 20]
            tag = md[8 + 36 * k + 20 : 8 + 36 * k + 36]
            p = AESGCM(KEY.encode()).decrypt(iv, data[pos : pos + clen] + tag, None)
            pos += clen
            if k < n_md:
                plain_md += p
            else:
                plain_data += p
        assert pos == len(data)
        md, data = plain_md, plain_data
    n_md, n_data = struct.unpack_from("<II", md, 0)
    assert n_md == 0 and n_data == 1, (n_md, n_data)
    ulen, clen = struct.unpack_from("<II", md, 8)
    assert len(md) == 16 and clen == len(data)
    out = zlib.decompress(data)
    assert len(out) == ulen
    if not encrypted:
        assert zlib.compress(out, 1) == data, "not zlib level 1 output"
    return out


def manifest():
    lines = []
    for name in FILES:
        b = open(os.path.join(HERE, name), "rb").read()
        off, index = 0, 0
        while off + 34 <= len(b):
            ver, ps, ts, dt, cs, et, fps = struct.unpack_from("<IQQBQBI", b, off)
            end = off + 34 + fps + ps
            if ver != 22 or dt > 43 or et > 1 or end > len(b):
                break
            pipe = b[off + 34 : off + 34 + fps]
            tile = b[off + 34 + fps : end]
            (nchunks,) = struct.unpack_from("<Q", tile, 0)
            p, payload = 8, b""
            for _ in range(nchunks):
                orig, flen, mlen = struct.unpack_from("<III", tile, p)
                p += 12
                chunk = decode_chunk(tile[p : p + mlen], tile[p + mlen : p + mlen + flen], et == 1)
                assert len(chunk) == orig
                payload += chunk
                p += mlen + flen
            assert p == ps and len(payload) == ts
            lines.append(
                f"tile {name} {index} {off} {end - off} {ver} {ps} {ts} {dt} {cs} {et} "
                f"{pipe.hex()} {nchunks} {hashlib.sha256(payload).hexdigest()}"
            )
            off, index = end, index + 1
        lines.append(f"end {name} {off}")
    with open(os.path.join(HERE, "manifest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    {"arrays": arrays, "manifest": manifest}[sys.argv[1]]()
