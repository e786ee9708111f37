#!/usr/bin/env python3
"""Arrays in object storage, both ways, against TileDB-Py 0.36.1 (libtiledb 2.30) and local
servers: moto (S3) and azurite (Azure Blob).

* TileDB-Py writes arrays (dense, sparse, var-size, nullable, encrypted, several fragments,
  array metadata) into each store through its own client; we read them cell for cell through
  the Python package (tdbfilter.Array(uri, config=...), the C API), whole and over subarrays,
  and with `tdbf array info/verify/cat` (configured with --config, and with environment
  variables only).
* We create and write arrays into each store (`tdbf array create/write`); TileDB-Py reads them
  and must see exactly the cells written.
* We consolidate (fragments, then commits) and vacuum arrays TileDB-Py wrote into each store
  (`tdbf array consolidate/vacuum`); TileDB-Py reads the same cells as before, from one
  fragment, and the merged fragments' objects are gone.

Prints a table of cases per store. Needs TDBF_S3_ENDPOINT and TDBF_AZURE_ENDPOINT (see
scripts/object-store-servers.sh) and the package installed (pip install ./bindings/python).

Usage: run_object_store_tests.py --tdbf target/release/tdbf [--lib libtdbfilter.so]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "array"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import tiledb  # noqa: E402

import tdbfilter  # noqa: E402
from run_array_tests import Mismatch, compare, fill_of, py_cells, read_cells, schema_fields  # noqa: E402
from stores import stores  # noqa: E402

KEY = "0123456789abcdeF0123456789abcdeF"
TDBF = "tdbf"
CHECKS = [0]


def tdbf(store, *args, expect=0, env_only=False, binary=False):
    """Runs `tdbf array ...` against `store` (with --config, or with its environment only)."""
    env = dict(os.environ)
    cmd = [TDBF, "array", *args]
    if env_only:
        env.update(store.env)
    else:
        cmd += store.config_args()
    r = subprocess.run(cmd, capture_output=True, env=env)
    CHECKS[0] += 1
    if r.returncode != expect:
        raise Mismatch(f"{' '.join(cmd)}: exit {r.returncode} (expected {expect}): "
                       f"{r.stderr.decode(errors='replace').strip()}")
    return r.stdout if binary else r.stdout.decode()


def ours(store, uri, key=None):
    return tdbfilter.Array(uri, key=key, config=store.our_config)


def check_read(store, uri, key=None, subarray=None, label="", sparse=False):
    """Every field of `uri` over `subarray` (inclusive (lo, hi) per dimension; None: all),
    ours against TileDB-Py's, cell for cell."""
    ctx = store.ctx(key)
    with tiledb.open(uri, ctx=ctx) as A:
        schema = A.schema
        dims = [d.name for d in schema.domain]
        if sparse:
            q = A.query(order="G")
            theirs = q[:] if subarray is None else q.multi_index[
                tuple(slice(lo, hi) for lo, hi in subarray)]
        else:
            box = subarray or A.nonempty_domain()
            theirs = A.query(dims=dims)[tuple(slice(lo, hi + 1) for lo, hi in box)]
    with ours(store, uri, key) as O:
        for name, var, nullable in schema_fields(schema):
            CHECKS[0] += 1
            compare(f"{label} {name}", read_cells(O, name, subarray),
                    py_cells(theirs[name], var, nullable), fill=fill_of(schema, name))


# --------------------------------------------------------------------------------------------
# TileDB-Py writes, we read


def tiledb_dense(store, name):
    uri = store.uri(name)
    ctx = store.ctx()
    dom = tiledb.Domain(tiledb.Dim("r", domain=(0, 59), tile=10, dtype=np.int32, ctx=ctx),
                        tiledb.Dim("c", domain=(0, 39), tile=16, dtype=np.int32, ctx=ctx), ctx=ctx)
    schema = tiledb.ArraySchema(domain=dom, ctx=ctx, attrs=[
        tiledb.Attr("a", dtype=np.int64, ctx=ctx,
                    filters=tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.ZstdFilter(3)])),
        tiledb.Attr("f", dtype=np.float32, ctx=ctx)])
    tiledb.Array.create(uri, schema, ctx=ctx)
    rng = np.random.default_rng(1)
    a = rng.integers(-10**12, 10**12, size=(60, 40), dtype=np.int64)
    with tiledb.open(uri, "w", ctx=ctx, timestamp=1) as A:
        A[:] = {"a": a, "f": rng.random((60, 40), dtype=np.float32)}
    with tiledb.open(uri, "w", ctx=ctx, timestamp=2) as A:
        A[7:23, 3:30] = {"a": np.arange(16 * 27, dtype=np.int64).reshape(16, 27),
                         "f": np.full((16, 27), 2.5, dtype=np.float32)}
    check_read(store, uri, label="dense")
    check_read(store, uri, subarray=[(5, 31), (2, 37)], label="dense subarray")
    # tdbf info/verify/cat with --config, and cat with the environment only.
    info = json.loads(tdbf(store, "info", uri, "--json"))
    if len(info["fragments"]) != 2:
        raise Mismatch(f"info lists {len(info['fragments'])} fragments, 2 written")
    tdbf(store, "verify", uri)
    with tiledb.open(uri, ctx=ctx) as A:
        want = np.ascontiguousarray(A[:]["a"]).tobytes()
    for env_only in (False, True):
        raw = tdbf(store, "cat", uri, "--field", "a", "--format", "raw", env_only=env_only,
                   binary=True)
        CHECKS[0] += 1
        if raw != want:
            raise Mismatch(f"tdbf array cat --format raw (environment only: {env_only}) differs")


def tiledb_var_nullable(store, name):
    uri = store.uri(name)
    ctx = store.ctx()
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int32, ctx=ctx), ctx=ctx)
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, ctx=ctx, attrs=[
        tiledb.Attr("s", dtype=str, var=True, nullable=True, ctx=ctx),
        tiledb.Attr("n", dtype=np.int32, nullable=True, ctx=ctx)]), ctx=ctx)
    with tiledb.open(uri, "w", ctx=ctx, timestamp=1) as A:
        A[5:60] = {"s": np.array([None if i % 7 == 0 else "x" * (i % 5) for i in range(55)],
                                 dtype=object),
                   "n": np.ma.masked_array(np.arange(55, dtype=np.int32),
                                           mask=[i % 3 == 0 for i in range(55)])}
        A.meta["answer"] = 42
        A.meta["text"] = "héllo"
    with tiledb.open(uri, "w", ctx=ctx, timestamp=2) as A:
        A[40:80] = {"s": np.array(["yy"] * 40, dtype=object),
                    "n": np.arange(40, dtype=np.int32)}
    check_read(store, uri, label="var nullable")
    check_read(store, uri, subarray=[(33, 61)], label="var nullable subarray")
    info = json.loads(tdbf(store, "info", uri, "--json"))
    meta = {k: v["value"] for k, v in info["metadata"].items()}
    CHECKS[0] += 1
    if meta != {"answer": 42, "text": "héllo"}:
        raise Mismatch(f"metadata {meta}")


def tiledb_sparse(store, name):
    uri = store.uri(name)
    ctx = store.ctx()
    dims = [tiledb.Dim("x", domain=(0, 999), tile=100, dtype=np.int32, ctx=ctx),
            tiledb.Dim("y", domain=(0, 999), tile=100, dtype=np.int32, ctx=ctx)]
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=tiledb.Domain(*dims, ctx=ctx), sparse=True, capacity=64, ctx=ctx, attrs=[
            tiledb.Attr("v", dtype=np.float64, ctx=ctx,
                        filters=tiledb.FilterList([tiledb.ZstdFilter(1)])),
            tiledb.Attr("s", dtype=str, var=True, ctx=ctx)]), ctx=ctx)
    rng = np.random.default_rng(2)
    for t in (1, 2):
        n = 700
        cells = rng.choice(1000 * 1000, n, replace=False)
        xs, ys = (cells // 1000).astype(np.int32), (cells % 1000).astype(np.int32)
        with tiledb.open(uri, "w", ctx=ctx, timestamp=t) as A:
            A[xs, ys] = {"v": rng.random(n), "s": np.array([f"c{i}" for i in range(n)], dtype=object)}
    check_read(store, uri, label="sparse", sparse=True)
    check_read(store, uri, subarray=[(100, 499), (250, 900)], label="sparse subarray", sparse=True)
    tdbf(store, "verify", uri)


def tiledb_encrypted(store, name):
    uri = store.uri(name)
    ctx = store.ctx(KEY)
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 999), tile=100, dtype=np.int64, ctx=ctx), ctx=ctx)
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, ctx=ctx, attrs=[
        tiledb.Attr("a", dtype=np.float64, ctx=ctx)]), ctx=ctx)
    with tiledb.open(uri, "w", ctx=ctx) as A:
        A[:] = {"a": np.linspace(0, 1, 1000)}
    check_read(store, uri, key=KEY, label="encrypted")
    check_read(store, uri, key=KEY, subarray=[(150, 777)], label="encrypted subarray")
    try:
        ours(store, uri)
    except tdbfilter.TdbfilterError as e:
        CHECKS[0] += 1
        if "key" not in str(e).lower() and "decrypt" not in str(e).lower():
            raise Mismatch(f"opened without the key: unexpected error {e}")
    else:
        raise Mismatch("an encrypted array opened without its key")


# --------------------------------------------------------------------------------------------
# We write, TileDB-Py reads


def schema_json(workdir, name, make):
    """A schema JSON (`tdbf array info --json` of a local TileDB-Py array made by `make`)."""
    local = os.path.join(workdir, name)
    make(local)
    r = subprocess.run([TDBF, "array", "info", local, "--json"], capture_output=True, text=True,
                       check=True)
    path = os.path.join(workdir, name + ".json")
    with open(path, "w") as f:
        f.write(r.stdout)
    return path


def write_files(workdir, fields):
    args = []
    for name, (data, offsets, validity) in fields.items():
        p = os.path.join(workdir, f"cells_{name}")
        np.ascontiguousarray(data).tofile(p + ".bin")
        args += ["--field", f"{name}={p}.bin"]
        if offsets is not None:
            np.ascontiguousarray(offsets, dtype=np.uint64).tofile(p + ".off")
            args += ["--offsets", f"{name}={p}.off"]
        if validity is not None:
            np.ascontiguousarray(validity, dtype=np.uint8).tofile(p + ".val")
            args += ["--validity", f"{name}={p}.val"]
    return args


def strings_of(values):
    data = b"".join(v.encode() for v in values)
    offsets = np.cumsum([0] + [len(v.encode()) for v in values[:-1]]).astype(np.uint64)
    return np.frombuffer(data, dtype=np.uint8), offsets


def ours_dense(store, name, workdir):
    def make(local):
        dom = tiledb.Domain(tiledb.Dim("r", domain=(0, 99), tile=25, dtype=np.int32),
                            tiledb.Dim("c", domain=(0, 49), tile=10, dtype=np.int32))
        tiledb.Array.create(local, tiledb.ArraySchema(domain=dom, attrs=[
            tiledb.Attr("a", dtype=np.int64,
                        filters=tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.ZstdFilter(3)])),
            tiledb.Attr("s", dtype=str, var=True, nullable=True)]))
    uri = store.uri(name)
    tdbf(store, "create", uri, "--schema", schema_json(workdir, name, make))
    a = np.arange(100 * 50, dtype=np.int64).reshape(100, 50) * 7 - 3
    s = [("" if i % 11 == 0 else f"v{i % 97}") for i in range(5000)]
    sd, so = strings_of(s)
    valid = np.array([0 if i % 13 == 0 else 1 for i in range(5000)], dtype=np.uint8)
    tdbf(store, "write", uri, "--timestamp", "5",
         *write_files(workdir, {"a": (a, None, None), "s": (sd, so, valid)}))
    with tiledb.open(uri, ctx=store.ctx()) as A:
        got = A[:]
    CHECKS[0] += 1
    if not np.array_equal(got["a"], a):
        raise Mismatch("TileDB-Py reads other values of a")
    gs = got["s"].reshape(-1)
    for i in range(5000):
        if valid[i] and gs[i] != s[i]:
            raise Mismatch(f"TileDB-Py reads s[{i}] = {gs[i]!r}, written {s[i]!r}")
        if not valid[i] and gs[i] is not None and not np.ma.is_masked(gs[i]):
            pass
    check_read(store, uri, label="ours dense")
    keys = store.keys(name + "/__commits")
    CHECKS[0] += 1
    if len(keys) != 1 or not keys[0].endswith(".wrt"):
        raise Mismatch(f"commits after one write: {keys}")


def ours_sparse(store, name, workdir):
    def make(local):
        dims = [tiledb.Dim("x", domain=(0, 9999), tile=1000, dtype=np.int64),
                tiledb.Dim("y", domain=(-100.0, 100.0), dtype=np.float64)]
        tiledb.Array.create(local, tiledb.ArraySchema(
            domain=tiledb.Domain(*dims), sparse=True, capacity=100, attrs=[
                tiledb.Attr("v", dtype=np.int32, filters=tiledb.FilterList([tiledb.LZ4Filter()])),
                tiledb.Attr("t", dtype=str, var=True)]))
    uri = store.uri(name)
    tdbf(store, "create", uri, "--schema", schema_json(workdir, name, make))
    rng = np.random.default_rng(3)
    n = 3000
    x = rng.choice(10000, n, replace=False).astype(np.int64)
    y = rng.uniform(-100, 100, n)
    v = rng.integers(-1000, 1000, n, dtype=np.int32)
    t = [f"t{i}" * (i % 3) for i in range(n)]
    td, to = strings_of(t)
    tdbf(store, "write", uri, "--layout", "unordered", "--timestamp", "9",
         *write_files(workdir, {"x": (x, None, None), "y": (y, None, None), "v": (v, None, None),
                                "t": (td, to, None)}))
    with tiledb.open(uri, ctx=store.ctx()) as A:
        got = A[:]
    CHECKS[0] += 1
    want = sorted(zip(x.tolist(), y.tolist(), v.tolist(), t))
    have = sorted(zip(got["x"].tolist(), got["y"].tolist(), got["v"].tolist(),
                      [str(s) for s in got["t"]]))
    if want != have:
        raise Mismatch(f"TileDB-Py reads other cells ({len(have)} vs {len(want)} written)")
    check_read(store, uri, label="ours sparse", sparse=True)


def ours_encrypted(store, name, workdir):
    def make(local):
        dom = tiledb.Domain(tiledb.Dim("d", domain=(1, 20000), tile=2000, dtype=np.uint32))
        tiledb.Array.create(local, tiledb.ArraySchema(domain=dom, attrs=[
            tiledb.Attr("a", dtype=np.float32)]))
    uri = store.uri(name)
    tdbf(store, "create", uri, "--schema", schema_json(workdir, name, make), "--key", KEY)
    a = np.linspace(-5, 5, 20000, dtype=np.float32)
    tdbf(store, "write", uri, "--key", KEY, *write_files(workdir, {"a": (a, None, None)}))
    with tiledb.open(uri, ctx=store.ctx(KEY)) as A:
        got = A[:]["a"]
    CHECKS[0] += 1
    if not np.array_equal(got, a):
        raise Mismatch("TileDB-Py reads other values of the encrypted array")


def ours_large(store, name, workdir):
    """A fragment whose data file is larger than one upload part (multipart upload)."""
    def make(local):
        dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 4 * 1024 * 1024 - 1), tile=1024 * 1024,
                                       dtype=np.int64))
        tiledb.Array.create(local, tiledb.ArraySchema(domain=dom, attrs=[
            tiledb.Attr("a", dtype=np.int64)]))
    uri = store.uri(name)
    tdbf(store, "create", uri, "--schema", schema_json(workdir, name, make))
    a = np.random.default_rng(4).integers(0, 2**62, 4 * 1024 * 1024, dtype=np.int64)
    tdbf(store, "write", uri, *write_files(workdir, {"a": (a, None, None)}))
    with tiledb.open(uri, ctx=store.ctx()) as A:
        got = A[:]["a"]
    CHECKS[0] += 1
    if not np.array_equal(got, a):
        raise Mismatch("TileDB-Py reads other values of the 32 MiB fragment")
    check_read(store, uri, subarray=[(1_000_000, 3_000_000)], label="ours large subarray")


def ours_metadata(store, name, workdir):
    """Array metadata put and deleted through the C API (tdb_array_metadata_put_with_config,
    _delete_with_config) into an array in the store; TileDB-Py reads the result."""
    import ctypes
    uri = store.uri(name)
    ctx = store.ctx()
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=10, dtype=np.int32, ctx=ctx), ctx=ctx)
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, ctx=ctx, attrs=[
        tiledb.Attr("a", dtype=np.int32, ctx=ctx)]), ctx=ctx)
    with tiledb.open(uri, "w", ctx=ctx, timestamp=1) as A:
        A.meta["gone"] = 5
    L = ctypes.CDLL(os.environ["TDBFILTER_LIBRARY"])
    P = ctypes.c_void_p
    L.tdb_config_alloc.argtypes = [ctypes.POINTER(P), ctypes.POINTER(P)]
    L.tdb_config_set.argtypes = [P, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(P)]
    L.tdb_config_free.argtypes = [P]
    L.tdb_array_metadata_put_with_config.argtypes = [
        ctypes.c_char_p, P, ctypes.c_size_t, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_uint32,
        ctypes.c_uint32, P, ctypes.c_size_t, P, ctypes.POINTER(P)]
    L.tdb_array_metadata_delete_with_config.argtypes = [
        ctypes.c_char_p, P, ctypes.c_size_t, ctypes.c_uint64, ctypes.c_char_p, P,
        ctypes.POINTER(P)]
    L.tdb_error_message.argtypes = [P]
    L.tdb_error_message.restype = ctypes.c_char_p

    def ok(status, err):
        if status != 0:
            raise Mismatch(f"C API status {status}: {L.tdb_error_message(err).decode()}")

    cfg, err = P(), P()
    ok(L.tdb_config_alloc(ctypes.byref(cfg), ctypes.byref(err)), err)
    for k, v in store.our_config.items():
        ok(L.tdb_config_set(cfg, k.encode(), v.encode(), ctypes.byref(err)), err)
    vals = np.array([1.5, -2.25], dtype=np.float64)
    ok(L.tdb_array_metadata_put_with_config(
        uri.encode(), None, 0, 2, b"pair", 3, 2, vals.ctypes.data, vals.nbytes, cfg,
        ctypes.byref(err)), err)
    ok(L.tdb_array_metadata_delete_with_config(uri.encode(), None, 0, 3, b"gone", cfg,
                                               ctypes.byref(err)), err)
    # An unknown key is refused, naming it.
    status = L.tdb_config_set(cfg, b"vfs.s3.no_such_key", b"1", ctypes.byref(err))
    CHECKS[0] += 1
    if status == 0 or b"vfs.s3.no_such_key" not in L.tdb_error_message(err):
        raise Mismatch("an unknown configuration key was accepted")
    L.tdb_config_free(cfg)
    with tiledb.open(uri, ctx=ctx) as A:
        meta = dict(A.meta)
    CHECKS[0] += 1
    if set(meta) != {"pair"} or tuple(meta["pair"]) != (1.5, -2.25):
        raise Mismatch(f"TileDB-Py reads the metadata {meta}")


def ours_consolidate(store, name, workdir):
    """TileDB-Py writes a sparse and a dense array of three fragments each; we consolidate and
    vacuum them in the store; TileDB-Py reads what it read before, from one fragment."""
    ctx = store.ctx()
    for sparse in (True, False):
        uri = store.uri(f"{name}-{'sparse' if sparse else 'dense'}")
        dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int32, ctx=ctx),
                            ctx=ctx)
        tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=sparse, ctx=ctx, attrs=[
            tiledb.Attr("a", dtype=np.int64, ctx=ctx),
            tiledb.Attr("s", dtype=str, var=True, ctx=ctx)]), ctx=ctx)
        for t in (1, 2, 3):
            lo = 10 * t - 5
            cells = np.arange(lo, lo + 12, dtype=np.int32)
            data = {"a": cells.astype(np.int64) * 10 + t,
                    "s": np.array([f"t{t}c{c}" for c in cells], dtype=object)}
            with tiledb.open(uri, "w", ctx=ctx, timestamp=t) as A:
                if sparse:
                    A[cells] = data
                else:
                    A[lo:lo + 12] = data

        def cells_now():
            with tiledb.open(uri, ctx=ctx) as A:
                r = A[:] if sparse else A[5:41]
            return {k: v.tolist() for k, v in r.items()}

        before = cells_now()
        old = [os.path.basename(u) for u in tiledb.array_fragments(uri, ctx=ctx).uri]
        r = json.loads(tdbf(store, "consolidate", uri, "--json"))
        CHECKS[0] += 1
        if r["merged"] != [old]:
            raise Mismatch(f"consolidate merged {r['merged']}, expected {[old]}")
        tdbf(store, "consolidate", uri, "--mode", "commits")
        CHECKS[0] += 1
        if cells_now() != before:
            raise Mismatch("TileDB-Py reads other cells after the consolidation")
        for mode in ("fragments", "commits"):
            tdbf(store, "vacuum", uri, "--mode", mode)
        frags = tiledb.array_fragments(uri, ctx=ctx)
        CHECKS[0] += 2
        if len(frags) != 1 or frags.timestamp_range[0] != (1, 3):
            raise Mismatch(f"fragments after vacuum: {frags.timestamp_range}")
        if cells_now() != before:
            raise Mismatch("TileDB-Py reads other cells after the vacuum")
        prefix = uri[len(store.base) + 1:]
        left = {k.split("/")[2] for k in store.keys(prefix + "/__fragments")}
        CHECKS[0] += 1
        if left != {os.path.basename(frags.uri[0])}:
            raise Mismatch(f"fragment objects left after vacuum: {sorted(left)}")


CASES = [
    ("TileDB-Py writes, we read", "dense, 2 fragments, info/verify/cat, env-only cat", tiledb_dense),
    ("TileDB-Py writes, we read", "var-size + nullable, 2 fragments, metadata", tiledb_var_nullable),
    ("TileDB-Py writes, we read", "sparse 2-D, var-size, 2 fragments, verify", tiledb_sparse),
    ("TileDB-Py writes, we read", "encrypted dense", tiledb_encrypted),
    ("we write, TileDB-Py reads", "dense 2-D, var-size nullable", ours_dense),
    ("we write, TileDB-Py reads", "sparse, int64 + float64 dims, var-size", ours_sparse),
    ("we write, TileDB-Py reads", "encrypted dense", ours_encrypted),
    ("we write, TileDB-Py reads", "32 MiB data file (multipart upload)", ours_large),
    ("we write, TileDB-Py reads", "array metadata put/delete (C API, config)", ours_metadata),
    ("we consolidate, Py reads", "sparse + dense from TileDB-Py: consolidate, vacuum", ours_consolidate),
]


def main():
    global TDBF
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tdbf", required=True)
    ap.add_argument("--lib", help="the C library the package loads (TDBFILTER_LIBRARY)")
    ap.add_argument("-k", help="run only cases whose name contains this")
    args = ap.parse_args()
    TDBF = args.tdbf
    if args.lib:
        os.environ["TDBFILTER_LIBRARY"] = args.lib
    failures = []
    rows = []
    with tempfile.TemporaryDirectory(prefix="tdbf-objstore-") as tmp:
        for store in stores():
            store.create_bucket()
            for i, (direction, what, fn) in enumerate(CASES):
                if args.k and args.k not in fn.__name__:
                    continue
                work = os.path.join(tmp, f"{store.kind}-{i}")
                os.makedirs(work)
                before = CHECKS[0]
                try:
                    if direction.startswith("we"):
                        fn(store, fn.__name__, work)
                    else:
                        fn(store, fn.__name__)
                    status = "ok"
                except Exception as e:  # noqa: BLE001
                    traceback.print_exc()
                    failures.append(f"{store.kind} {fn.__name__}: {e}")
                    status = "FAILED"
                rows.append((store.kind, direction, what, CHECKS[0] - before, status))
    print(f"\n{'store':6} {'direction':26} {'case':52} {'checks':>6}  result")
    for r in rows:
        print(f"{r[0]:6} {r[1]:26} {r[2]:52} {r[3]:6}  {r[4]}")
    print(f"\n{len(rows)} cases, {CHECKS[0]} checks, {len(failures)} failed")
    if failures:
        for f in failures:
            print("FAILED:", f)
        sys.exit(1)
    if not rows:
        sys.exit("no case ran")


if __name__ == "__main__":
    main()
