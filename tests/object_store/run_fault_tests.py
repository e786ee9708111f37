#!/usr/bin/env python3
"""Fault injection between tdbfilter and moto (S3): a proxy (tests/object_store/proxy.py)
delays requests, drops connections, truncates bodies, sends short bodies and answers 503
SlowDown on a schedule.

Reads (an array TileDB-Py wrote straight into moto, read by us through the proxy):
transient faults (first attempt of every request) must give exactly TileDB-Py's cells;
persistent faults on the data files must give a clear error naming the object, never cells.
Writes (`tdbf array write` through the proxy): transient faults must still commit the
fragment TileDB-Py then reads; a persistent failure must fail the write and leave no
committed fragment (no new `__commits` object; TileDB-Py reads what it read before).

Prints one line per case. Needs TDBF_S3_ENDPOINT (scripts/object-store-servers.sh).

Usage: run_fault_tests.py --tdbf target/release/tdbf [--lib libtdbfilter.so]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import tiledb  # noqa: E402

import tdbfilter  # noqa: E402
from proxy import FaultProxy, rule  # noqa: E402
from stores import Store, require  # noqa: E402

N = 2_000_000  # int64 cells: 16 MB, 8 tiles


def first_attempt(kinds, fault):
    return [rule(kinds, fault, first=True)]


def always(kinds, fault, path_part=""):
    return [rule(kinds, fault, path=path_part)]


def our_config(store: Store, proxy: FaultProxy, **extra) -> dict:
    c = dict(store.our_config)
    c["vfs.s3.endpoint_override"] = proxy.hostport
    c["max_retries"] = "3"
    c["retry_timeout_ms"] = "20000"
    c.update(extra)
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tdbf", required=True)
    ap.add_argument("--lib")
    args = ap.parse_args()
    if args.lib:
        os.environ["TDBFILTER_LIBRARY"] = args.lib
    store = Store("s3", require("TDBF_S3_ENDPOINT"))
    store.create_bucket()
    proxy = FaultProxy(store.endpoint).start()
    failures, rows = [], []

    # The array, written by TileDB-Py straight into moto.
    uri = store.uri("faults_dense")
    ctx = store.ctx()
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, N - 1), tile=N // 8, dtype=np.int64, ctx=ctx),
                        ctx=ctx)
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, ctx=ctx, attrs=[
        tiledb.Attr("a", dtype=np.int64, ctx=ctx,
                    filters=tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.ZstdFilter(1)])),
        tiledb.Attr("s", dtype=str, var=True, nullable=True, ctx=ctx)]), ctx=ctx)
    want_a = np.random.default_rng(5).integers(0, 2**40, N, dtype=np.int64)
    want_s = np.array([None if i % 9 == 0 else f"s{i % 1000}" for i in range(N)], dtype=object)
    with tiledb.open(uri, "w", ctx=ctx) as A:
        A[:] = {"a": want_a, "s": want_s}
    with tiledb.open(uri, ctx=ctx) as A:
        theirs = A[:]
    want_s_bytes = [None if v is None else v.encode() for v in want_s]

    def read_ours(config):
        with tdbfilter.Array(uri, config=config) as O:
            a = O.read("a")
            r = O.read_raw("s")
            return a, r.cells(), r.validity.tolist()

    def read_case(name, schedule, extra=None):
        proxy.set_faults(schedule)
        t = time.perf_counter()
        try:
            a, s, v = read_ours(our_config(store, proxy, **(extra or {})))
        except tdbfilter.TdbfilterError as e:
            failures.append(f"{name}: {e}")
            rows.append((name, "FAILED", str(e)[:100]))
            return
        ok = np.array_equal(a, theirs["a"]) and all(
            (vv == 0 and w is None) or (vv == 1 and c == w) for c, vv, w in zip(s, v, want_s_bytes))
        log = proxy.log
        faults = sum(1 for r in log if r.fault)
        status = "ok" if ok else "WRONG CELLS"
        if not ok:
            failures.append(f"{name}: wrong cells")
        rows.append((name, status, f"{len(log)} requests, {faults} faulted, "
                                   f"{time.perf_counter() - t:.2f} s"))
        if faults == 0:
            failures.append(f"{name}: the schedule injected no fault")

    def error_case(name, schedule, must_name, extra=None):
        proxy.set_faults(schedule)
        try:
            read_ours(our_config(store, proxy, **(extra or {})))
        except tdbfilter.TdbfilterError as e:
            msg = str(e)
            if must_name in msg:
                rows.append((name, "ok (error)", msg[:140]))
            else:
                failures.append(f"{name}: the error does not name {must_name}: {msg}")
                rows.append((name, "FAILED", msg[:140]))
            return
        failures.append(f"{name}: returned cells despite a persistent fault")
        rows.append((name, "FAILED", "no error"))

    read_case("read: 503 SlowDown on every first GET/LIST/HEAD",
              first_attempt({"GET", "LIST", "HEAD"}, "503"))
    read_case("read: connection dropped on every first GET", first_attempt({"GET"}, "drop"))
    read_case("read: body truncated (full Content-Length) on every first GET",
              first_attempt({"GET"}, "truncate"))
    read_case("read: short body (consistent Content-Length) on every first GET",
              first_attempt({"GET"}, "short"))
    read_case("read: first GET of each range delayed past a 1 s request timeout",
              first_attempt({"GET"}, ["delay", 2.5]), {"request_timeout_ms": "1000"})
    error_case("read: every GET of a0.tdb truncated", always({"GET"}, "truncate", "/a0.tdb"),
               "a0.tdb")
    error_case("read: every GET of a1_var.tdb short", always({"GET"}, "short", "/a1_var.tdb"),
               "a1_var.tdb")
    error_case("read: every GET of a0.tdb answered 503", always({"GET"}, "503", "/a0.tdb"),
               "a0.tdb")

    # Writes through the proxy.
    with tempfile.TemporaryDirectory() as tmp:
        cells = os.path.join(tmp, "a.bin")
        vals = np.arange(N, dtype=np.int64)
        vals.tofile(cells)
        sd = b"".join(b"w" for _ in range(N))
        np.frombuffer(sd, dtype=np.uint8).tofile(os.path.join(tmp, "s.bin"))
        np.arange(N, dtype=np.uint64).tofile(os.path.join(tmp, "s.off"))
        np.ones(N, dtype=np.uint8).tofile(os.path.join(tmp, "s.val"))

        def write(schedule, extra=None):
            proxy.set_faults(schedule)
            cfg = our_config(store, proxy, **(extra or {}))
            cmd = [args.tdbf, "array", "write", uri, "--field", f"a={cells}",
                   "--field", f"s={tmp}/s.bin", "--offsets", f"s={tmp}/s.off",
                   "--validity", f"s={tmp}/s.val"]
            for k, v in cfg.items():
                cmd += ["--config", f"{k}={v}"]
            return subprocess.run(cmd, capture_output=True, text=True)

        commits_before = store.keys("faults_dense/__commits")
        r = write([rule({"PUT", "POST"}, "503", path="__fragment_metadata")])
        commits_after = store.keys("faults_dense/__commits")
        with tiledb.open(uri, ctx=ctx) as A:
            same = np.array_equal(A[:]["a"], theirs["a"])
        if r.returncode != 0 and commits_after == commits_before and same \
                and "__fragment_metadata.tdb" in r.stderr:
            rows.append(("write: every upload of __fragment_metadata.tdb answered 503",
                         "ok (error)", r.stderr.strip()[:140]))
        else:
            failures.append(f"persistent write failure: exit {r.returncode}, commits "
                            f"{len(commits_before)} -> {len(commits_after)}, cells unchanged {same}: "
                            f"{r.stderr.strip()}")
            rows.append(("write: persistent 503", "FAILED", r.stderr.strip()[:140]))
        leftovers = [k for k in store.keys("faults_dense/__fragments")
                     if not any(c.split("/")[-1][:-4] in k for c in commits_after)]
        rows.append(("write: objects left of the failed fragment", "info", f"{len(leftovers)}"))

        r = write(first_attempt({"PUT", "POST"}, "503"))
        with tiledb.open(uri, ctx=ctx) as A:
            got = A[:]["a"]
        if r.returncode == 0 and np.array_equal(got, vals):
            rows.append(("write: 503 on every first PUT/POST", "ok", "committed, TileDB-Py reads it"))
        else:
            failures.append(f"transient write faults: exit {r.returncode}: {r.stderr.strip()}")
            rows.append(("write: 503 on every first PUT/POST", "FAILED", r.stderr.strip()[:140]))
    proxy.stop()
    print(f"\n{'case':66} {'result':11} detail")
    for name, status, detail in rows:
        print(f"{name:66} {status:11} {detail}")
    if failures:
        for f in failures:
            print("FAILED:", f)
        sys.exit(1)


if __name__ == "__main__":
    main()
