#!/usr/bin/env python3
"""Consolidation (src/array/lifecycle/consolidate) against TileDB-Py 0.36.1, through the
`lifecycle` example binary (examples/lifecycle.rs). TileDB-Py writes twin arrays A and B (same
cells, same timestamps); TileDB consolidates A, tdbfilter consolidates B with the same
configuration; the suite checks that

* fragments mode (sparse with and without duplicates, var-size and nullable attributes; dense
  1-D contiguous writes, a dense domain that is not a whole number of tiles, 2-D scattered boxes under amplification 1.0 and 1.5; step settings;
  timestamp ranges; an explicit fragment list) merges the same fragments: the same
  `tiledb.array_fragments` (count, timestamp ranges), TileDB-Py reads A and B the same at
  every timestamp, and the consolidated fragments' data files are byte-identical (counted);
* commits, fragment_meta and array_meta modes write the same kinds of files and the arrays
  read the same (metadata included); after vacuum both arrays read the same;
* commits with timestamps of different digit counts: TileDB fails, tdbfilter consolidates;
* speed: 200 small fragments, tdbfilter against tiledb.consolidate (1 MiB buffer), printed;
* the command line (`tdbf array consolidate`, --mode, --timestamp, --fragment, --config
  sm.consolidation.*) on B against `tiledb.consolidate` on A: the same fragments, and TileDB-Py
  reads A and B the same before and after vacuum.

Usage: run_consolidate_tests.py --bin target/debug/examples/lifecycle --tdbf target/debug/tdbf
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import tiledb

BIN = None
TDBF = None
CFG = {"sm.consolidation.buffer_size": str(1 << 20)}
checks = 0
identical = {}


def run(*args):
    r = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"lifecycle {' '.join(map(str, args))} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        raise AssertionError(what)


def frags(uri):
    fi = tiledb.array_fragments(uri)
    return [tuple(f.timestamp_range) for f in fi]


def frag_names(uri):
    return [os.path.basename(f.uri) for f in tiledb.array_fragments(uri)]


def same_reads(a, b, times, what):
    for t in times:
        with tiledb.open(a, timestamp=t) as A, tiledb.open(b, timestamp=t) as B:
            ra, rb = A[:], B[:]
            check(ra.keys() == rb.keys(), f"{what} t={t}: fields")
            for k in ra:
                x, y = ra[k], rb[k]
                if x.dtype == object:
                    check(list(x) == list(y), f"{what} t={t}: field {k} differs: {x} vs {y}")
                else:
                    check(np.array_equal(x, y, equal_nan=True), f"{what} t={t}: field {k}: {x} vs {y}")
            check(dict(A.meta.items()) == dict(B.meta.items()), f"{what} t={t}: metadata")


def compare_new_fragments(a, b, before, what):
    """The fragments TileDB and tdbfilter made: same ranges, data files byte-identical."""
    na = [n for n in frag_names(a) if n not in before]
    nb = [n for n in frag_names(b) if n not in before]
    check(len(na) == len(nb), f"{what}: {len(na)} new fragments in A, {len(nb)} in B")
    for x, y in zip(na, nb):
        check(x.split("_")[:4] == y.split("_")[:4] and x.endswith("_22") and y.endswith("_22"),
              f"{what}: names {x} vs {y}")
        da, db = os.path.join(a, "__fragments", x), os.path.join(b, "__fragments", y)
        fa, fb = sorted(os.listdir(da)), sorted(os.listdir(db))
        check(fa == fb, f"{what}: files {fa} vs {fb}")
        for f in fa:
            same = open(os.path.join(da, f), "rb").read() == open(os.path.join(db, f), "rb").read()
            key = f"{what}/{f}"
            identical[key] = same
            if f != "__fragment_metadata.tdb":
                check(same, f"{what}: {f} differs from TileDB's")


def twins(tmp, name, make):
    a, b = os.path.join(tmp, name + "_A"), os.path.join(tmp, name + "_B")
    make(a)
    shutil.copytree(a, b)
    return a, b


def both(a, b, cfg, what, times):
    before = set(frag_names(a))
    full = dict(CFG)
    full.update(cfg)
    ours = {k: v for k, v in full.items()}
    tiledb.consolidate(a, config=tiledb.Config(full))
    run("consolidate", b, json.dumps(ours))
    check(frags(a) == frags(b), f"{what}: fragments {frags(a)} vs {frags(b)}")
    same_reads(a, b, times, what)
    compare_new_fragments(a, b, before, what)
    for uri in (a, b):
        tiledb.vacuum(uri)
    check(frags(a) == frags(b), f"{what} vacuumed: fragments {frags(a)} vs {frags(b)}")
    same_reads(a, b, times, what + " vacuumed")


def sparse_array(uri, dups=False, writes=None):
    d = tiledb.Domain(tiledb.Dim("x", domain=(0, 999), tile=10, dtype=np.int32),
                      tiledb.Dim("y", domain=(0, 99), tile=5, dtype=np.int64))
    s = tiledb.ArraySchema(domain=d, sparse=True, allows_duplicates=dups, capacity=7, attrs=[
        tiledb.Attr("a", dtype=np.int32, filters=[tiledb.ZstdFilter()]),
        tiledb.Attr("s", dtype=str, var=True, nullable=True),
        tiledb.Attr("f", dtype=np.float64),
    ])
    tiledb.Array.create(uri, s)
    rng = np.random.default_rng(7)
    for t in range(1, 6):
        n = 25
        xs = rng.integers(0, 60, n).astype(np.int32)
        ys = rng.integers(0, 20, n).astype(np.int64)
        if not dups:
            keys = sorted(set(zip(xs.tolist(), ys.tolist())))
            xs = np.array([k[0] for k in keys], dtype=np.int32)
            ys = np.array([k[1] for k in keys], dtype=np.int64)
        m = len(xs)
        sv = np.array([None if i % 5 == 0 else f"v{t}_{i}" * (i % 3 + 1) for i in range(m)], dtype=object)
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[xs, ys] = {"a": np.arange(m, dtype=np.int32) + 100 * t, "s": sv,
                         "f": np.linspace(0, 1, m) + t}


def dense_1d(uri, n=10):
    d = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int32))
    s = tiledb.ArraySchema(domain=d, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int32), tiledb.Attr("v", dtype=str, var=True),
        tiledb.Attr("n", dtype=np.float32, nullable=True)])
    tiledb.Array.create(uri, s)
    for t in range(1, n + 1):
        lo = (t - 1) * 7
        with tiledb.open(uri, "w", timestamp=t) as A:
            m = 7
            A[lo:lo + m] = {"a": np.arange(m, dtype=np.int32) + t,
                            "v": np.array([f"s{t}{i}" for i in range(m)], dtype=object),
                            "n": np.ma.masked_array(np.arange(m, dtype=np.float32), mask=[i % 2 == 0 for i in range(m)])}


def dense_2d(uri):
    d = tiledb.Domain(tiledb.Dim("r", domain=(0, 29), tile=5, dtype=np.int64),
                      tiledb.Dim("c", domain=(0, 29), tile=5, dtype=np.int64))
    s = tiledb.ArraySchema(domain=d, sparse=False, cell_order="col-major", tile_order="row-major",
                           attrs=[tiledb.Attr("a", dtype=np.uint16)])
    tiledb.Array.create(uri, s)
    boxes = [(0, 7, 0, 9), (2, 9, 10, 19), (10, 19, 0, 6)]
    for t, (r0, r1, c0, c1) in enumerate(boxes, start=1):
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[r0:r1 + 1, c0:c1 + 1] = np.full((r1 - r0 + 1, c1 - c0 + 1), t, dtype=np.uint16)


def dense_ragged(uri):
    """A domain that is not a whole number of tiles (20 cells, tiles of 3): the merged union
    expanded to tiles reaches past it (TileDB-Py's test_array_vacuum)."""
    d = tiledb.Domain(tiledb.Dim("x", domain=(0, 19), tile=3, dtype=np.uint64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=d, sparse=False,
                                                attrs=[tiledb.Attr("a", dtype=np.int64)]))
    for t in range(1, 6):
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[t - 1:19] = np.arange(19 - (t - 1), dtype=np.int64) + 100 * t


def future_evolution(uri):
    """Issue 30: writes, an evolution (attribute `b`) stamped an hour ahead, then writes with
    it (writers take the newest schema; a read at now does not see `b`)."""
    d = tiledb.Domain(tiledb.Dim("x", domain=(0, 999), tile=10, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=d, sparse=True, capacity=4, attrs=[
        tiledb.Attr("a", dtype=np.int32)]))
    for i in range(2):
        time.sleep(0.002)
        with tiledb.open(uri, "w") as A:
            A[np.arange(i, 30, 3, dtype=np.int32)] = {"a": np.arange(10, dtype=np.int32) + 100 * i}
    se = tiledb.ArraySchemaEvolution(tiledb.default_ctx())
    se.add_attribute(tiledb.Attr("b", dtype=np.int64, fill=-7))
    se.timestamp(int(time.time() * 1000) + 3_600_000)
    se.array_evolve(uri)
    for i in range(2, 4):
        time.sleep(0.002)
        with tiledb.open(uri, "w") as A:
            x = np.arange(i, 40, 4, dtype=np.int32)
            A[x] = {"a": x * 2, "b": x.astype(np.int64) * 3}
    time.sleep(0.002)


def test_fragments(tmp):
    a, b = twins(tmp, "future_evolution", future_evolution)
    later = int(time.time() * 1000) + 7_200_000
    both(a, b, {}, "sparse, evolution stamped in the future", [None, later])
    check(len(frags(a)) == 1, "future evolution: every fragment merged")
    a, b = twins(tmp, "sparse", sparse_array)
    both(a, b, {}, "sparse", [1, 2, 3, 5, None])
    check(len(frags(a)) == 1, "sparse: every fragment merged")
    a, b = twins(tmp, "sparse_dups", lambda u: sparse_array(u, dups=True))
    both(a, b, {}, "sparse dups", [1, 3, None])
    a, b = twins(tmp, "sparse_steps", sparse_array)
    both(a, b, {"sm.consolidation.step_min_frags": "2", "sm.consolidation.step_max_frags": "3",
                "sm.consolidation.steps": "1"}, "sparse steps", [2, 4, None])
    check(len(frags(a)) == 3, f"sparse steps: one step of three fragments ({frags(a)})")
    a, b = twins(tmp, "sparse_range", sparse_array)
    both(a, b, {"sm.consolidation.timestamp_start": "2", "sm.consolidation.timestamp_end": "4"},
         "sparse timestamp range", [1, 2, 4, None])
    a, b = twins(tmp, "dense1", dense_1d)
    both(a, b, {}, "dense 1-D", [1, 5, None])
    check(len(frags(a)) == 1, "dense 1-D: contiguous writes are merged")
    a, b = twins(tmp, "dense_ragged", dense_ragged)
    both(a, b, {}, "dense, domain not a whole number of tiles", [1, 3, None])
    check(len(frags(a)) == 1, "dense ragged: every fragment merged")
    a, b = twins(tmp, "dense2", dense_2d)
    both(a, b, {}, "dense 2-D amplification 1.0", [2, None])
    check(len(frags(a)) == 3, "dense 2-D: scattered boxes are not merged at amplification 1.0")
    a, b = twins(tmp, "dense2b", dense_2d)
    both(a, b, {"sm.consolidation.amplification": "1.5"}, "dense 2-D amplification 1.5", [2, None])
    check(len(frags(a)) == 1, "dense 2-D: the boxes are merged at amplification 1.5")
    # An explicit list (tiledb.consolidate(fragment_uris=...)).
    a, b = twins(tmp, "sparse_list", sparse_array)
    names = frag_names(a)[1:3]
    before = set(frag_names(a))
    tiledb.consolidate(a, config=tiledb.Config(CFG), fragment_uris=names)
    run("consolidate", b, json.dumps({**CFG, "fragments": names}))
    check(frags(a) == frags(b), f"fragment list: {frags(a)} vs {frags(b)}")
    same_reads(a, b, [1, 2, 3, None], "fragment list")
    compare_new_fragments(a, b, before, "fragment list")


def test_other_modes(tmp):
    def with_meta(uri):
        sparse_array(uri)
        for t, (k, v) in enumerate([("k1", 1), ("k2", "two"), ("k1", 3.5)], start=10):
            with tiledb.open(uri, "w", timestamp=t) as A:
                A.meta[k] = v
    a, b = twins(tmp, "modes", with_meta)
    for mode, folder, ext in [("commits", "__commits", ".con"), ("fragment_meta", "__fragment_meta", ".meta"),
                              ("array_meta", "__meta", ".vac")]:
        cfg = {**CFG, "sm.consolidation.mode": mode}
        tiledb.consolidate(a, config=tiledb.Config(cfg))
        r = run("consolidate", b, json.dumps(cfg))
        ka = sorted(f for f in os.listdir(os.path.join(a, folder)) if f.endswith(ext))
        kb = sorted(f for f in os.listdir(os.path.join(b, folder)) if f.endswith(ext))
        check(len(ka) == len(kb) == 1, f"{mode}: {ka} vs {kb} ({r})")
        check(ka[0].split("_")[:3] == kb[0].split("_")[:3], f"{mode}: names {ka[0]} vs {kb[0]}")
        if mode == "commits":
            ca = open(os.path.join(a, folder, ka[0]), "rb").read()
            cb = open(os.path.join(b, folder, kb[0]), "rb").read()
            check(ca == cb, f"commits: .con contents differ: {ca!r} vs {cb!r}")
        if mode == "fragment_meta":
            ca = open(os.path.join(a, folder, ka[0]), "rb").read()
            cb = open(os.path.join(b, folder, kb[0]), "rb").read()
            check(ca == cb, "fragment_meta: .meta contents differ")
        same_reads(a, b, [1, 3, 10, 11, None], mode)
        tiledb.vacuum(a, config=tiledb.Config({"sm.vacuum.mode": mode}))
        tiledb.vacuum(b, config=tiledb.Config({"sm.vacuum.mode": mode}))
        same_reads(a, b, [1, 3, 10, 11, None], mode + " vacuumed")
    # Commit timestamps of different digit counts: TileDB fails, tdbfilter consolidates.
    def digits(uri):
        d = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int32))
        tiledb.Array.create(uri, tiledb.ArraySchema(domain=d, sparse=True, attrs=[tiledb.Attr("a", dtype=np.int32)]))
        for t in (5, 12):
            with tiledb.open(uri, "w", timestamp=t) as A:
                A[[t]] = np.array([t], dtype=np.int32)
    a, b = twins(tmp, "digits", digits)
    cfg = {**CFG, "sm.consolidation.mode": "commits"}
    try:
        tiledb.consolidate(a, config=tiledb.Config(cfg))
        tiledb_failed = False
    except tiledb.TileDBError as e:
        tiledb_failed = "start timestamp cannot be after end timestamp" in str(e)
    check(tiledb_failed, "TileDB 2.30 fails on commit timestamps of different digit counts")
    r = run("consolidate", b, json.dumps(cfg))
    check(r["written"][0].startswith("__commits/__5_12_"), f"digit counts: {r}")
    tiledb.vacuum(b, config=tiledb.Config({"sm.vacuum.mode": "commits"}))
    with tiledb.open(b) as B:
        check(B[:]["a"].tolist() == [5, 12], "digit counts: reads after vacuum")


def test_speed(tmp):
    def many(uri):
        d = tiledb.Domain(tiledb.Dim("x", domain=(0, 99999), tile=100, dtype=np.int64))
        tiledb.Array.create(uri, tiledb.ArraySchema(domain=d, sparse=True, attrs=[tiledb.Attr("a", dtype=np.float64)]))
        for t in range(1, 201):
            with tiledb.open(uri, "w", timestamp=t) as A:
                xs = np.arange(t * 10, t * 10 + 10, dtype=np.int64)
                A[xs] = np.full(10, float(t))
    a, b = twins(tmp, "speed", many)
    t0 = time.perf_counter()
    tiledb.consolidate(a, config=tiledb.Config(CFG))
    ta = time.perf_counter() - t0
    t0 = time.perf_counter()
    run("consolidate", b, json.dumps(CFG))
    tb = time.perf_counter() - t0
    check(frags(a) == frags(b), "speed: fragments")
    same_reads(a, b, [None], "speed")
    print(f"speed: 200 fragments: tiledb.consolidate {ta:.3f} s, tdbfilter {tb:.3f} s "
          f"(process start included), ratio tdbfilter/TileDB {tb / ta:.2f}")


def tdbf_consolidate(uri, *args):
    """`tdbf array consolidate URI ARGS --json`: its report."""
    cmd = [TDBF, "array", "consolidate", uri, *map(str, args), "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def test_cli(tmp):
    """tdbf array consolidate on B, tiledb.consolidate on A, with the same settings."""
    buf = f"sm.consolidation.buffer_size={CFG['sm.consolidation.buffer_size']}"

    def case(name, make, cfg, args, times, fragment_uris=None):
        a, b = twins(tmp, "cli_" + name, make)
        full = {**CFG, **cfg}
        if fragment_uris is None:
            tiledb.consolidate(a, config=tiledb.Config(full))
        else:
            tiledb.consolidate(a, config=tiledb.Config(full), fragment_uris=fragment_uris)
        r = tdbf_consolidate(b, "--config", buf, *args)
        check(isinstance(r["merged"], list) and isinstance(r["written"], list),
              f"cli {name}: report {r}")
        check(frags(a) == frags(b), f"cli {name}: fragments {frags(a)} vs {frags(b)}")
        same_reads(a, b, times, "cli " + name)
        mode = cfg.get("sm.consolidation.mode", "fragments")
        for uri in (a, b):
            tiledb.vacuum(uri, config=tiledb.Config({"sm.vacuum.mode": mode}))
        check(frags(a) == frags(b), f"cli {name} vacuumed: {frags(a)} vs {frags(b)}")
        same_reads(a, b, times, f"cli {name} vacuumed")
        return a, b

    a, b = case("plan", sparse_array, {}, [], [1, 3, None])
    check(len(frags(b)) == 1, "cli plan: every fragment merged")
    case("steps", sparse_array,
         {"sm.consolidation.step_min_frags": "2", "sm.consolidation.step_max_frags": "3",
          "sm.consolidation.steps": "1"},
         ["--config", "sm.consolidation.step_min_frags=2", "--config",
          "sm.consolidation.step_max_frags=3", "--config", "sm.consolidation.steps=1"], [2, None])
    case("timestamp", sparse_array,
         {"sm.consolidation.timestamp_start": "2", "sm.consolidation.timestamp_end": "4"},
         ["--timestamp", "2:4"], [1, 2, 4, None])
    case("dense amplification", dense_2d, {"sm.consolidation.amplification": "1.5"},
         ["--config", "sm.consolidation.amplification=1.5"], [2, None])
    a, b = twins(tmp, "cli_list", sparse_array)
    names = frag_names(a)[1:4]
    tiledb.consolidate(a, config=tiledb.Config(CFG), fragment_uris=names)
    r = tdbf_consolidate(b, *[x for n in names for x in ("--fragment", n)])
    check(r["merged"] == [names], f"cli list: merged {r['merged']}, listed {names}")
    check(frags(a) == frags(b), f"cli list: fragments {frags(a)} vs {frags(b)}")
    same_reads(a, b, [1, 2, 4, None], "cli list")
    a, b = case("commits", sparse_array, {"sm.consolidation.mode": "commits"},
                ["--mode", "commits"], [1, None])
    ka = sorted(f for f in os.listdir(os.path.join(a, "__commits")) if f.endswith(".con"))
    kb = sorted(f for f in os.listdir(os.path.join(b, "__commits")) if f.endswith(".con"))
    check(len(ka) == len(kb) == 1, f"cli commits: {ka} vs {kb}")
    a, b = twins(tmp, "cli_fragment_meta", sparse_array)
    tiledb.consolidate(a, config=tiledb.Config({"sm.consolidation.mode": "fragment_meta"}))
    tdbf_consolidate(b, "--config", "sm.consolidation.mode=fragment_meta")
    ua = tiledb.array_fragments(a).unconsolidated_metadata_num
    ub = tiledb.array_fragments(b).unconsolidated_metadata_num
    check(ua == ub == 0, f"cli fragment_meta: unconsolidated footers {ua} vs {ub}")
    same_reads(a, b, [None], "cli fragment_meta")
    r = subprocess.run([TDBF, "array", "consolidate", b, "--mode", "everything"],
                       capture_output=True, text=True)
    check(r.returncode == 1 and "unknown consolidation mode" in r.stderr,
          f"cli bad mode: {r.returncode} {r.stderr}")


def main():
    global BIN, TDBF
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--tdbf", required=True)
    args = p.parse_args()
    BIN, TDBF = os.path.abspath(args.bin), os.path.abspath(args.tdbf)
    for f in (BIN, TDBF):
        if not os.path.exists(f):
            sys.exit(f"missing {f}: build it first")
    tmp = tempfile.mkdtemp(prefix="consolidate_")
    try:
        test_fragments(tmp)
        test_other_modes(tmp)
        test_cli(tmp)
        test_speed(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    same = sum(identical.values())
    print(f"data files byte-identical to TileDB's: {same} of {len(identical)}")
    for k, v in sorted(identical.items()):
        if not v:
            print(f"  differs: {k}")
    print(f"consolidation: {checks} checks passed")


if __name__ == "__main__":
    main()
