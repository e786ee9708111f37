#!/usr/bin/env python3
"""Whole-array reads from a local S3 server (moto): tdbfilter (Python package over the C API)
against TileDB-Py 0.36.1 reading the same array from the same server, and against fetching the
same byte ranges our read fetches with parallel ranged GETs and no decoding (boto3 in threads),
and against those GETs followed by the decoding (`raw+dec`: the GETs' time plus our read of a
local copy of the array with the same threads, i.e. fetch, then decode, without overlap):
interleaved rounds, medians, 1 and 2 decode threads, ratios printed.

Starts moto itself when TDBF_S3_ENDPOINT is not set (.venv/bin/moto_server). --quick: a 16 MiB
array and 3 rounds (the test step); default: 64 MiB and 2 arrays x 7 rounds.

Usage: compare_s3.py [--quick] [--lib libtdbfilter.so] [--rounds N] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "object_store"))

import numpy as np  # noqa: E402
import tiledb  # noqa: E402

import tdbfilter  # noqa: E402
from proxy import FaultProxy  # noqa: E402
from stores import Store  # noqa: E402


def start_moto():
    exe = shutil.which("moto_server") or os.path.join(ROOT, ".venv", "bin", "moto_server")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return p, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    p.kill()
    raise SystemExit("moto_server did not start")


def make_array(store: Store, name: str, n: int, var: bool):
    ctx = store.ctx()
    uri = store.uri(name)
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=max(n // 8, 1), dtype=np.int64,
                                   ctx=ctx), ctx=ctx)
    attrs = [tiledb.Attr("a", dtype=np.int64, ctx=ctx, filters=tiledb.FilterList(
        [tiledb.ByteShuffleFilter(), tiledb.ZstdFilter(1)]))]
    if var:
        attrs.append(tiledb.Attr("s", dtype=str, var=True, ctx=ctx,
                                 filters=tiledb.FilterList([tiledb.ZstdFilter(1)])))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, ctx=ctx, attrs=attrs), ctx=ctx)
    data = {"a": np.cumsum(np.random.default_rng(8).integers(-5, 6, n)).astype(np.int64)}
    if var:
        data["s"] = np.array([f"v{i % 9973}" for i in range(n)], dtype=object)
    with tiledb.open(uri, "w", ctx=ctx) as A:
        A[:] = data if var else data["a"]
    return uri, list(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--lib")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.lib:
        os.environ["TDBFILTER_LIBRARY"] = args.lib
    moto = None
    endpoint = os.environ.get("TDBF_S3_ENDPOINT")
    if not endpoint:
        moto, endpoint = start_moto()
    try:
        run(args, Store("s3", endpoint))
    finally:
        if moto:
            moto.terminate()
            moto.wait()


def run(args, store: Store):
    store.create_bucket()
    rounds = args.rounds or (3 if args.quick else 7)
    arrays = [("dense int64", 2 * 1024 * 1024 if args.quick else 8 * 1024 * 1024, False)]
    if not args.quick:
        arrays.append(("dense int64 + var strings", 4 * 1024 * 1024, True))
    s3 = store.boto3()
    lines = [f"moto at {store.endpoint}; {rounds} interleaved rounds, medians (s)", ""]
    header = (f"{'array':34} {'thr':>3} {'tdbfilter':>9} {'TileDB-Py':>9} {'raw GETs':>9} "
              f"{'raw+dec':>9} {'TileDB/ours':>11} {'ours/raw':>9} {'ours/raw+dec':>12} "
              f"{'GETs ours/TileDB/raw':>21}")
    lines.append(header)
    for label, n, var in arrays:
        uri, fields = make_array(store, f"bench_{n}_{int(var)}", n, var)
        mb = n * 8 / 2**20
        # The byte ranges our read fetches (through a logging proxy, once).
        proxy = FaultProxy(store.endpoint).start()
        ocfg = dict(store.our_config, **{"vfs.s3.endpoint_override": proxy.hostport})
        with tdbfilter.Array(uri, config=ocfg) as O:
            O.read(fields)
        ranges = [(r.path.split("/", 2)[2], r.range) for r in proxy.log
                  if r.kind == "GET" and r.range]
        ours_gets = proxy.counts().get("GET", 0)
        tcfg = dict(store.tiledb_config, **{"vfs.s3.endpoint_override": proxy.hostport})
        proxy.set_faults(None)
        with tiledb.open(uri, ctx=tiledb.Ctx(tiledb.Config(tcfg))) as A:
            A[:]
        tiledb_gets = proxy.counts().get("GET", 0)
        proxy.stop()

        # A local copy of the array, for the decoding alone.
        import tempfile
        local = tempfile.mkdtemp(prefix="tdbf-s3-bench-")
        key_prefix = uri.split("/", 3)[3]
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=store.bucket,
                                                                 Prefix=key_prefix + "/"):
            for obj in page.get("Contents", []):
                dest = os.path.join(local, obj["Key"][len(key_prefix) + 1:])
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                s3.download_file(store.bucket, obj["Key"], dest)

        def raw():
            def get(kr):
                k, rng = kr
                return len(s3.get_object(Bucket=store.bucket, Key=k, Range=rng)["Body"].read())
            with ThreadPoolExecutor(max_workers=min(16, max(1, len(ranges)))) as ex:
                return sum(ex.map(get, ranges))

        for threads in (1, 2):
            def ours():
                # The library's read (bytes, offsets, validity as numpy arrays): var-size
                # text is not turned into Python str objects (TileDB-Py's A[:] does that).
                with tdbfilter.Array(uri, config=store.our_config, threads=threads) as O:
                    for f in fields:
                        O.read_raw(f)

            tctx_cfg = dict(store.tiledb_config, **{
                "sm.compute_concurrency_level": str(threads),
                "sm.io_concurrency_level": str(threads)})

            def theirs():
                with tiledb.open(uri, ctx=tiledb.Ctx(tiledb.Config(tctx_cfg))) as A:
                    A[:]

            def decode():
                with tdbfilter.Array(local, threads=threads) as O:
                    for f in fields:
                        O.read_raw(f)

            times = {"ours": [], "theirs": [], "raw": [], "decode": []}
            for _ in range(rounds):
                for name, fn in (("ours", ours), ("theirs", theirs), ("raw", raw),
                                 ("decode", decode)):
                    t = time.perf_counter()
                    fn()
                    times[name].append(time.perf_counter() - t)
            m = {k: statistics.median(v) for k, v in times.items()}
            raw_dec = m["raw"] + m["decode"]
            lines.append(
                f"{label + f' {mb:.0f} MiB':34} {threads:3} {m['ours']:9.3f} {m['theirs']:9.3f} "
                f"{m['raw']:9.3f} {raw_dec:9.3f} {m['theirs'] / m['ours']:10.2f}x "
                f"{m['ours'] / m['raw']:8.2f}x {m['ours'] / raw_dec:11.2f}x "
                f"{f'{ours_gets}/{tiledb_gets}/{len(ranges)}':>21}")
            print(lines[-1], flush=True)
        shutil.rmtree(local, ignore_errors=True)
    lines += ["", "TileDB/ours > 1: we are faster than TileDB-Py; ours/raw: our time over fetching "
              "the same byte ranges with parallel boto3 GETs and no decoding; ours/raw+dec: over "
              "those GETs followed by decoding a local copy (no overlap).",
              "Ours: tdbfilter.Array.read_raw per field (cells as bytes + offsets); TileDB-Py: A[:] "
              "(var-size text as Python str objects, which costs it extra on the strings array)."]
    text = "\n".join(lines)
    print("\n" + text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
