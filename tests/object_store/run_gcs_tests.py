#!/usr/bin/env python3
"""GCS (gs:// URIs) against fake-gcs-server, a local GCS emulator
(scripts/object-store-servers.sh starts it; TDBF_GCS_ENDPOINT).

TileDB-Py 0.36.1 cannot be pointed at a GCS emulator, so TileDB-Py writes dense,
var-size/nullable and sparse arrays into a local folder, and every file is uploaded unchanged
into a bucket of the emulator through its JSON upload API. We then read them through
object_store's GCS client (XML API: LIST with delimiter, HEAD, whole and ranged GETs), with
`gcs.endpoint` and `gcs.skip_signature` (`tdbfilter.Array(config=...)`, `tdbf array
info/verify/cat --config`) and with the environment only (GOOGLE_BASE_URL,
GOOGLE_SKIP_SIGNATURE), and compare every cell with TileDB-Py's reads of the local copy.

Writes are not tested here: fake-gcs-server does not implement the XML API's object upload
(`PUT /bucket/key` without `uploadType` is answered 400 "invalid uploadType"), nor its
multipart uploads (`POST ?uploads`), which are what object_store's GCS client sends.

Usage: run_gcs_tests.py --tdbf target/release/tdbf [--lib libtdbfilter.so]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import tiledb  # noqa: E402

from stores import require  # noqa: E402


class Gcs:
    def __init__(self, endpoint: str):
        self.endpoint = endpoint.rstrip("/")
        self.bucket = f"tdbf-{uuid.uuid4().hex[:12]}"
        self.config = {"gcs.endpoint": self.endpoint, "gcs.skip_signature": "true"}
        self.env = {"GOOGLE_BASE_URL": self.endpoint, "GOOGLE_SKIP_SIGNATURE": "true"}

    def _call(self, method: str, path: str, data: bytes | None = None, ctype: str = ""):
        req = urllib.request.Request(self.endpoint + path, data=data, method=method)
        if ctype:
            req.add_header("Content-Type", ctype)
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.read()

    def create_bucket(self):
        self._call("POST", "/storage/v1/b", json.dumps({"name": self.bucket}).encode(),
                   "application/json")

    def upload_tree(self, local: str, name: str) -> int:
        """Uploads every file under `local` as `name/<relative path>`; the number of files."""
        n = 0
        for root, _, files in os.walk(local):
            for f in files:
                path = os.path.join(root, f)
                key = name + "/" + os.path.relpath(path, local).replace(os.sep, "/")
                with open(path, "rb") as fh:
                    data = fh.read()
                q = urllib.parse.urlencode({"uploadType": "media", "name": key})
                self._call("POST", f"/upload/storage/v1/b/{self.bucket}/o?{q}", data,
                           "application/octet-stream")
                n += 1
        return n

    def uri(self, name: str) -> str:
        return f"gs://{self.bucket}/{name}"


def tdbf(binary, gcs, *args, env_only=False, raw=False):
    cmd = [binary, "array", *args]
    env = dict(os.environ)
    if env_only:
        env.update(gcs.env)
    else:
        for k, v in gcs.config.items():
            cmd += ["--config", f"{k}={v}"]
    r = subprocess.run(cmd, capture_output=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"FAILED: {' '.join(cmd)}: {r.stderr.decode()}")
    return r.stdout if raw else r.stdout.decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tdbf", required=True)
    ap.add_argument("--lib")
    args = ap.parse_args()
    if args.lib:
        os.environ["TDBFILTER_LIBRARY"] = args.lib
    import tdbfilter

    gcs = Gcs(require("TDBF_GCS_ENDPOINT"))
    gcs.create_bucket()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        # Dense int64, two fragments, byteshuffle+zstd: 4 tiles.
        dense = os.path.join(tmp, "dense")
        dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 39_999), tile=10_000, dtype=np.int64))
        tiledb.Array.create(dense, tiledb.ArraySchema(domain=dom, attrs=[
            tiledb.Attr("a", dtype=np.int64,
                        filters=tiledb.FilterList([tiledb.ByteShuffleFilter(),
                                                   tiledb.ZstdFilter(1)]))]))
        vals = np.random.default_rng(3).integers(0, 2**40, 40_000, dtype=np.int64)
        with tiledb.open(dense, "w", timestamp=1) as A:
            A[:] = {"a": vals}
        with tiledb.open(dense, "w", timestamp=2) as A:
            A[100:200] = {"a": np.arange(100, dtype=np.int64)}
        # Var-size nullable strings.
        var = os.path.join(tmp, "var")
        dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 999), tile=250, dtype=np.int64))
        tiledb.Array.create(var, tiledb.ArraySchema(domain=dom, attrs=[
            tiledb.Attr("s", dtype=str, var=True, nullable=True)]))
        strs = np.array([None if i % 7 == 0 else f"v{i}" * (i % 5) for i in range(1000)],
                        dtype=object)
        with tiledb.open(var, "w", timestamp=1) as A:
            A[:] = {"s": strs}
        # Sparse 2-D.
        sparse = os.path.join(tmp, "sparse")
        dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 999), tile=100, dtype=np.int32),
                            tiledb.Dim("y", domain=(0, 999), tile=100, dtype=np.int32))
        tiledb.Array.create(sparse, tiledb.ArraySchema(domain=dom, sparse=True, capacity=500,
                                                        attrs=[tiledb.Attr("v", dtype=np.float64)]))
        rng = np.random.default_rng(4)
        cells = rng.choice(1_000_000, 3000, replace=False)
        xs = (cells // 1000).astype(np.int32)
        ys = (cells % 1000).astype(np.int32)
        with tiledb.open(sparse, "w", timestamp=1) as A:
            A[xs, ys] = {"v": rng.random(3000)}

        files = sum(gcs.upload_tree(os.path.join(tmp, n), n) for n in ("dense", "var", "sparse"))
        print(f"uploaded {files} files into gs://{gcs.bucket} on {gcs.endpoint}")

        with tiledb.open(dense) as A:
            want_dense = A[:]["a"]
        with tiledb.open(var) as A:
            want_var = A[:]["s"]
        with tiledb.open(sparse) as A:
            want_sparse = A.query(order="G")[:]

        def check(label, ok):
            print(f"{label:60} {'ok' if ok else 'DIFFERS'}")
            if not ok:
                failures.append(label)

        with tdbfilter.Array(gcs.uri("dense"), config=gcs.config) as O:
            check("dense: tdbfilter.Array.read", np.array_equal(O.read("a"), want_dense))
        with tdbfilter.Array(gcs.uri("var"), config=gcs.config) as O:
            r = O.read_raw("s")
            got = [None if v == 0 else c.decode() for c, v in zip(r.cells(), r.validity.tolist())]
            check("var nullable: tdbfilter.Array.read_raw",
                  got == [None if w is None else w for w in want_var.tolist()])
        with tdbfilter.Array(gcs.uri("sparse"), config=gcs.config) as O:
            ok = (np.array_equal(O.read("x"), want_sparse["x"])
                  and np.array_equal(O.read("y"), want_sparse["y"])
                  and np.array_equal(O.read("v"), want_sparse["v"]))
            check("sparse: tdbfilter.Array.read (x, y, v)", ok)

        info = json.loads(tdbf(args.tdbf, gcs, "info", gcs.uri("dense"), "--json"))
        check("tdbf array info --json: 2 fragments", len(info["fragments"]) == 2)
        tdbf(args.tdbf, gcs, "verify", gcs.uri("sparse"))
        check("tdbf array verify (sparse)", True)
        for env_only in (False, True):
            raw = tdbf(args.tdbf, gcs, "cat", gcs.uri("dense"), "--field", "a", "--format",
                       "raw", env_only=env_only, raw=True)
            check(f"tdbf array cat --format raw (environment only: {env_only})",
                  raw == want_dense.tobytes())
    if failures:
        for f in failures:
            print("FAILED:", f)
        sys.exit(1)


if __name__ == "__main__":
    main()
