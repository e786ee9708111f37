#!/usr/bin/env python3
"""Requests of a whole-array read from moto (S3) and azurite: ours (tdbfilter.Array, the C API)
against TileDB-Py's (tiledb 0.36.1), counted by a logging proxy (tests/object_store/proxy.py)
both readers go through. Prints GET/LIST/HEAD per array and reader; --check fails when ours
makes more GETs+LISTs than TileDB-Py for any array.

Needs TDBF_S3_ENDPOINT and TDBF_AZURE_ENDPOINT (scripts/object-store-servers.sh).

Usage: count_requests.py [--lib libtdbfilter.so] [--check]
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import tiledb  # noqa: E402

import tdbfilter  # noqa: E402
from proxy import FaultProxy  # noqa: E402
from stores import Store, stores  # noqa: E402


def proxied(store: Store, proxy: FaultProxy) -> tuple[dict, dict]:
    """(TileDB-Py config, our config) pointing at the proxy."""
    t = dict(store.tiledb_config)
    o = dict(store.our_config)
    if store.kind == "s3":
        t["vfs.s3.endpoint_override"] = proxy.hostport
        o["vfs.s3.endpoint_override"] = proxy.hostport
    else:
        t["vfs.azure.blob_endpoint"] = proxy.endpoint
        o["vfs.azure.blob_endpoint"] = proxy.endpoint
    return t, o


def make_arrays(store: Store) -> list[tuple[str, str, list[str]]]:
    """(label, uri, fields) of the arrays counted, written by TileDB-Py."""
    ctx = store.ctx()
    out = []
    uri = store.uri("count_dense")
    n = 8 * 1024 * 1024  # 64 MiB of int64, 8 tiles
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=n // 8, dtype=np.int64, ctx=ctx),
                        ctx=ctx)
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, ctx=ctx, attrs=[
        tiledb.Attr("a", dtype=np.int64, ctx=ctx, filters=tiledb.FilterList(
            [tiledb.ByteShuffleFilter(), tiledb.ZstdFilter(1)]))]), ctx=ctx)
    with tiledb.open(uri, "w", ctx=ctx) as A:
        A[:] = np.cumsum(np.random.default_rng(6).integers(-5, 6, n)).astype(np.int64)
    out.append(("dense 64 MiB int64, 8 tiles", uri, ["a"]))
    uri = store.uri("count_sparse")
    dims = [tiledb.Dim("x", domain=(0, 99999), tile=10000, dtype=np.int64, ctx=ctx),
            tiledb.Dim("y", domain=(0, 99999), tile=10000, dtype=np.int64, ctx=ctx)]
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=tiledb.Domain(*dims, ctx=ctx), sparse=True, capacity=10000, ctx=ctx,
        attrs=[tiledb.Attr("v", dtype=np.float64, ctx=ctx),
               tiledb.Attr("s", dtype=str, var=True, ctx=ctx)]), ctx=ctx)
    rng = np.random.default_rng(7)
    for t in (1, 2):
        k = 200_000
        cells = rng.choice(100000 * 100000, k, replace=False)
        with tiledb.open(uri, "w", ctx=ctx, timestamp=t) as A:
            A[cells // 100000, cells % 100000] = {
                "v": rng.random(k), "s": np.array([f"s{i % 977}" for i in range(k)], dtype=object)}
    out.append(("sparse 2 fragments x 200k cells, 4 fields", uri, ["x", "y", "v", "s"]))
    return out


def read_tiledb(uri, config, fields):
    ctx = tiledb.Ctx(tiledb.Config(config))
    with tiledb.open(uri, ctx=ctx) as A:
        if A.schema.sparse:
            return A.query(attrs=[f for f in fields if A.schema.has_attr(f)])[:]
        return A[:]


def read_ours(uri, config, fields):
    with tdbfilter.Array(uri, config=config) as O:
        return O.read(fields)


def count(store: Store, proxy: FaultProxy, arrays) -> list[tuple]:
    t_cfg, o_cfg = proxied(store, proxy)
    rows = []
    for label, uri, fields in arrays:
        for who, fn, cfg in (("TileDB-Py", read_tiledb, t_cfg), ("tdbfilter", read_ours, o_cfg)):
            proxy.set_faults(None)
            fn(uri, cfg, fields)
            c = proxy.counts()
            rows.append((store.kind, label, who, c.get("GET", 0), c.get("LIST", 0),
                         c.get("HEAD", 0), sum(c.values())))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    if args.lib:
        os.environ["TDBFILTER_LIBRARY"] = args.lib
    rows = []
    for store in stores():
        store.create_bucket()
        proxy = FaultProxy(store.endpoint).start()
        rows += count(store, proxy, make_arrays(store))
        proxy.stop()
    print(f"\n{'store':6} {'array':44} {'reader':10} {'GET':>5} {'LIST':>5} {'HEAD':>5} {'all':>5}")
    for r in rows:
        print(f"{r[0]:6} {r[1]:44} {r[2]:10} {r[3]:5} {r[4]:5} {r[5]:5} {r[6]:5}")
    bad = []
    for i in range(0, len(rows), 2):
        t, o = rows[i], rows[i + 1]
        if o[3] + o[4] > t[3] + t[4]:
            bad.append(f"{o[0]} {o[1]}: ours {o[3]}+{o[4]} GET+LIST, TileDB-Py {t[3]}+{t[4]}")
    if args.check and bad:
        for b in bad:
            print("MORE REQUESTS:", b)
        sys.exit(1)


if __name__ == "__main__":
    main()
