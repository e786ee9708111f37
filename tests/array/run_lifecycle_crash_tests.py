#!/usr/bin/env python3
"""Crash safety of consolidation and vacuum (issue 30): SIGKILL at any point of a lifecycle
operation leaves the array readable with exactly its cells (never twice, never missing), and
a rerun of the operation completes it.

Each case is an array TileDB-Py writes (several fragments, some with delete commits) and one
operation run by examples/lifecycle.rs (`lifecycle consolidate URI CONFIG` or `lifecycle
vacuum URI MODE`):

* consolidate-dense, consolidate-sparse (fragments mode; the sparse one with a delete commit
  and `purge_deleted_cells`), consolidate-commits;
* vacuum-fragments (after a fragments consolidation), vacuum-fragments-con (after a fragments
  and a commits consolidation: vacuum writes an `.ign` file first), vacuum-commits (after a
  commits consolidation);
* consolidate-fragment-meta, consolidate-array-meta (on an array with metadata written,
  overwritten and deleted at several timestamps), vacuum-fragment-meta (after two
  fragment_meta consolidations: the older `.meta` goes), vacuum-array-meta (after an array_meta
  consolidation). The reads compare the array metadata too.

A reference run (no kill) gives the state "after". tests/array/crash_shim.c, preloaded into
the operation, counts its file-changing calls (open for writing, write, fsync, mkdir, unlink,
rmdir, rename, ...); the runs kill it (SIGKILL) just before each of those calls in turn (the
last ones first: the commit, the vacuum file, the renames), and every fourth run after a random
delay instead. After each kill:

* TileDB-Py and tdbfilter's Python package read the array: the cells must equal the reference
  cells (which these operations do not change; a duplicate or a missing cell changes the
  digest), and the fragment list must be what the files say: the merged fragments while the
  new fragment has no commit marker, the new one alone once its `.vac` exists, both only in
  between (the consolidated fragment holds the same cells; such a kill is counted);
* `tdbf array verify` passes, or names only uncommitted fragment folders (no damage of
  committed data);
* the operation is run again (no kill) and must succeed; then the cells, the fragment count and
  (vacuum) the folders left equal the reference "after" state.

Printed: runs, kill points per case (calls counted, exercised), states seen, time.

Usage: run_lifecycle_crash_tests.py --bin target/debug/examples/lifecycle --tdbf target/debug/tdbf
       [--lib libtdbfilter.so] [--runs N (0: every call of every case)] [--seed S]
       [--workdir DIR] [--keep] [--case NAME ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter

import numpy as np
import tiledb

TAIL = 16  # the last file-changing calls of an operation come first in the kill order
CFG = {"sm.consolidation.buffer_size": "1048576"}


# ----------------------------------------------------------------------------------------
# Arrays


def dense_array(uri):
    dom = tiledb.Domain(tiledb.Dim("r", domain=(0, 63), tile=16, dtype=np.int32),
                        tiledb.Dim("c", domain=(0, 63), tile=16, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int32, filters=tiledb.FilterList([tiledb.ZstdFilter(1)])),
        tiledb.Attr("f", dtype=np.float64)]))
    rng = np.random.default_rng(1)
    for t, (r0, r1, c0, c1) in enumerate([(0, 15, 0, 63), (16, 31, 0, 63), (32, 47, 0, 63),
                                          (8, 23, 16, 47)], start=1):
        with tiledb.open(uri, "w", timestamp=t) as A:
            shape = (r1 - r0 + 1, c1 - c0 + 1)
            A[r0:r1 + 1, c0:c1 + 1] = {"a": rng.integers(-1000, 1000, shape, dtype=np.int32),
                                       "f": rng.standard_normal(shape)}


def sparse_array(uri, deletes=True):
    dom = tiledb.Domain(tiledb.Dim("y", domain=(0, 999), tile=100, dtype=np.int64),
                        tiledb.Dim("x", domain=(0, 999), tile=100, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=64, attrs=[
        tiledb.Attr("v", dtype=np.int64, filters=tiledb.FilterList([tiledb.ZstdFilter(1)])),
        tiledb.Attr("s", dtype=str, var=True)]))
    rng = np.random.default_rng(2)
    pool = rng.choice(1000 * 1000, 900, replace=False)
    for t in range(1, 5):
        lin = rng.choice(pool, 300, replace=False)  # overlapping coordinates: updates
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[lin // 1000, lin % 1000] = {
                "v": rng.integers(0, 1000, 300, dtype=np.int64),
                "s": np.array([f"s{int(x)}" * int(x % 4) for x in lin], dtype=object)}
    if deletes:
        with tiledb.open(uri, "d", timestamp=5) as A:
            A.query(cond="v < 150").submit()
        with tiledb.open(uri, "w", timestamp=6) as A:
            lin = rng.choice(pool, 100, replace=False)
            A[lin // 1000, lin % 1000] = {"v": rng.integers(0, 1000, 100, dtype=np.int64),
                                          "s": np.array(["late"] * 100, dtype=object)}


def meta_array(uri):
    """The sparse array (no deletes) with array metadata written at several timestamps: keys
    put, overwritten and deleted."""
    sparse_array(uri, deletes=False)
    for t, puts, dels in [(10, {"k1": 1, "k2": "two", "k3": 3.5}, []),
                          (11, {"k1": 11, "k4": (1, 2, 3)}, ["k3"]),
                          (12, {"k5": "five"}, ["k2"]),
                          (13, {"k2": "back", "k6": 6}, [])]:
        with tiledb.open(uri, "w", timestamp=t) as A:
            for k, v in puts.items():
                A.meta[k] = v
            for k in dels:
                del A.meta[k]


def consolidate_tiledb(uri, mode):
    cfg = dict(CFG, **{"sm.consolidation.mode": mode})
    tiledb.consolidate(uri, config=tiledb.Config(cfg))


class Case:
    def __init__(self, name, make, op, dense=False):
        self.name, self.make, self.op, self.dense = name, make, op, dense

    @property
    def consolidates_fragments(self):
        return self.op[0] == "consolidate" and json.loads(self.op[1]).get(
            "sm.consolidation.mode") == "fragments"


def all_cases():
    frag = json.dumps(dict(CFG, **{"sm.consolidation.mode": "fragments"}))
    purge = json.dumps(dict(CFG, **{"sm.consolidation.mode": "fragments",
                                    "sm.consolidation.purge_deleted_cells": "true"}))
    commits = json.dumps({"sm.consolidation.mode": "commits"})

    def consolidated(u):
        sparse_array(u)
        consolidate_tiledb(u, "fragments")

    def consolidated_con(u):
        consolidated(u)
        consolidate_tiledb(u, "commits")

    def with_con(u):
        sparse_array(u)
        consolidate_tiledb(u, "commits")

    def two_fragment_metas(u):
        meta_array(u)
        consolidate_tiledb(u, "fragment_meta")
        with tiledb.open(u, "w", timestamp=20) as A:
            A[np.array([5], dtype=np.int64), np.array([7], dtype=np.int64)] = {
                "v": np.array([5], dtype=np.int64), "s": np.array(["x"], dtype=object)}
        consolidate_tiledb(u, "fragment_meta")

    def meta_consolidated(u):
        meta_array(u)
        consolidate_tiledb(u, "array_meta")

    return [
        Case("consolidate-dense", dense_array, ("consolidate", frag), dense=True),
        Case("consolidate-sparse", sparse_array, ("consolidate", purge)),
        Case("consolidate-commits", sparse_array, ("consolidate", commits)),
        Case("vacuum-fragments", consolidated, ("vacuum", "fragments")),
        Case("vacuum-fragments-con", consolidated_con, ("vacuum", "fragments")),
        Case("vacuum-commits", with_con, ("vacuum", "commits")),
        Case("consolidate-fragment-meta", meta_array,
             ("consolidate", json.dumps({"sm.consolidation.mode": "fragment_meta"}))),
        Case("consolidate-array-meta", meta_array,
             ("consolidate", json.dumps({"sm.consolidation.mode": "array_meta"}))),
        Case("vacuum-fragment-meta", two_fragment_metas, ("vacuum", "fragment_meta")),
        Case("vacuum-array-meta", meta_consolidated, ("vacuum", "array_meta")),
    ]


# ----------------------------------------------------------------------------------------
# Reads


def canonical_rows(fields, names):
    """The cells as sorted rows of text (sparse: order-free, duplicates kept)."""
    cols = []
    for n in names:
        v = np.ma.getdata(fields[n]).ravel()
        cols.append([x.decode() if isinstance(x, bytes) else str(x) for x in v.tolist()])
    return sorted(zip(*cols))


def digest(rows) -> str:
    h = hashlib.sha256()
    for r in rows:
        h.update("\t".join(r).encode() + b"\n")
    return f"{h.hexdigest()[:12]}/{len(rows)}"


def meta_rows(items):
    """The array metadata as sorted rows of text (tuples and lists alike)."""
    def plain(v):
        if isinstance(v, (tuple, list)):
            return tuple(plain(x) for x in v)
        return v.item() if hasattr(v, "item") else v
    return [("meta", k, repr(plain(v))) for k, v in sorted(items)]


def read_tiledb(uri, case):
    with tiledb.open(uri) as A:
        if case.dense:
            r = A[:]
            return digest([tuple(str(x) for x in np.ravel(r[n]).tolist()) for n in ("a", "f")])
        r = A[:]
        return digest(canonical_rows(r, ["y", "x", "v", "s"]) + meta_rows(A.meta.items()))


def frags_tiledb(uri):
    return len(tiledb.array_fragments(uri))


def read_tdbfilter(uri, case):
    import tdbfilter

    with tdbfilter.Array(uri) as A:
        if case.dense:
            r = A.read(subarray=[(0, 63), (0, 63)])
            return digest([tuple(str(x) for x in np.ravel(r[n]).tolist()) for n in ("a", "f")])
        return digest(canonical_rows(A.read(), ["y", "x", "v", "s"]) +
                      meta_rows(A.metadata.items()))


def frags_tdbfilter(uri):
    import tdbfilter

    with tdbfilter.Array(uri) as A:
        return len(A.fragments)


def listdir(p):
    try:
        return sorted(os.listdir(p))
    except FileNotFoundError:
        return []


def snapshot(uri):
    """(fragment folders, commit files, consolidated fragment metadata files, array metadata
    files) of the array."""
    return tuple(set(listdir(os.path.join(uri, d)))
                 for d in ("__fragments", "__commits", "__fragment_meta", "__meta"))


# ----------------------------------------------------------------------------------------
# Running the operation


def op_cmd(binary, uri, case):
    return [binary, case.op[0], uri, case.op[1]]


def run_op(cmd, kill, shim):
    """Runs the operation; kill = ("call", N) or ("delay", s). Returns "killed" or
    "completed"."""
    env = None
    if kill[0] == "call":
        env = dict(os.environ, LD_PRELOAD=shim, TDBF_CRASH_AT=str(kill[1]))
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    if kill[0] == "call":
        p.wait()
    else:
        deadline = time.monotonic() + kill[1]
        while time.monotonic() < deadline and p.poll() is None:
            time.sleep(min(0.001, max(0.0, deadline - time.monotonic())))
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
    _, err = p.communicate()
    if p.returncode == -signal.SIGKILL:
        return "killed"
    if p.returncode != 0:
        raise AssertionError(f"the operation failed (exit {p.returncode}): {err.decode()[-400:]}")
    return "completed"


def verify(tdbf, uri):
    """"whole", or "leftover" when `tdbf array verify` names only uncommitted fragment folders
    (folders without a commit marker); anything else raises."""
    r = subprocess.run([tdbf, "array", "verify", uri], capture_output=True, text=True)
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    if r.returncode == 0 and lines and lines[-1].endswith("the array is whole"):
        return "whole"
    commits = set(listdir(os.path.join(uri, "__commits")))
    ok = r.returncode == 1 and len(lines) > 1
    for l in lines[:-1]:
        frag = l.split("/", 1)[0]
        if not (l.startswith(f"{frag}/__fragments: ") and "uncommitted fragment folder" in l
                and f"{frag}.wrt" not in commits):
            ok = False
    if not ok:
        raise AssertionError(f"tdbf array verify: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return "leftover"


def build_shim(work):
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crash_shim.c")
    out = os.path.join(work, "crash_shim.so")
    r = subprocess.run([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", "-o", out, src,
                        "-ldl"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"cannot compile {src}: {r.stderr}")
    return out


def prepare(case, binary, tdbf, work, shim):
    cdir = os.path.join(work, case.name)
    shutil.rmtree(cdir, ignore_errors=True)
    os.makedirs(cdir)
    base = os.path.join(cdir, "before")
    case.make(base)
    after = os.path.join(cdir, "after")
    shutil.copytree(base, after)
    t0 = time.monotonic()
    r = subprocess.run(op_cmd(binary, after, case), capture_output=True, text=True)
    duration = time.monotonic() - t0
    if r.returncode != 0:
        raise AssertionError(f"{case.name}: the reference run failed: {r.stderr}")
    counted = os.path.join(cdir, "counted")
    shutil.copytree(base, counted)
    count_file = os.path.join(cdir, "calls")
    env = dict(os.environ, LD_PRELOAD=shim, TDBF_CRASH_COUNT=count_file)
    r = subprocess.run(op_cmd(binary, counted, case), capture_output=True, text=True, env=env)
    if r.returncode != 0 or not os.path.exists(count_file):
        raise AssertionError(f"{case.name}: the counted run failed: {r.stderr}")
    calls = int(open(count_file).read())
    shutil.rmtree(counted)
    ref = {
        "base": base, "after": after, "duration": duration, "calls": calls,
        "before_snap": snapshot(base), "after_snap": snapshot(after),
        "cells": read_tiledb(base, case),
        "frags_before": frags_tiledb(base), "frags_after": frags_tiledb(after),
    }
    for reader, uri in (("tiledb", base), ("tiledb", after), ("tdbfilter", base),
                        ("tdbfilter", after)):
        got = read_tiledb(uri, case) if reader == "tiledb" else read_tdbfilter(uri, case)
        if got != ref["cells"]:
            raise AssertionError(f"{case.name}: {reader} reads {uri} as {got}, "
                                 f"expected {ref['cells']}")
    if frags_tdbfilter(after) != ref["frags_after"]:
        raise AssertionError(f"{case.name}: the readers list different fragments after the run")
    if verify(tdbf, after) != "whole":
        raise AssertionError(f"{case.name}: verify fails after a complete run")
    if case.op[0] == "consolidate" and ref["after_snap"] == ref["before_snap"]:
        raise AssertionError(f"{case.name}: the reference run wrote nothing")
    if case.op[0] == "vacuum" and ref["after_snap"] == ref["before_snap"]:
        raise AssertionError(f"{case.name}: the reference run removed nothing")
    print(f"  {case.name}: {duration * 1000:.0f} ms, {calls} file-changing calls, fragments "
          f"{ref['frags_before']} -> {ref['frags_after']}, cells {ref['cells']}")
    return ref


def kill_points(ref, rng):
    """Every file-changing call, the last TAIL first, the others shuffled; every fourth
    point a random delay (0 .. 1.3 x the reference duration) instead."""
    n = ref["calls"]
    tail = list(range(n, max(0, n - TAIL), -1))
    rest = list(range(1, max(1, n - TAIL + 1)))
    rng.shuffle(rest)
    calls = [("call", k) for k in tail + rest]
    out = []
    for i, k in enumerate(calls):
        if i % 3 == 2:
            out.append(("delay", rng.uniform(0.0, 1.3 * ref["duration"])))
        out.append(k)
    return out


def expected_fragments(case, ref, uri):
    """The fragment count the files say, and the phase: for a fragments consolidation the
    new fragment's marker and `.vac` decide; the other operations keep the count."""
    if not case.consolidates_fragments:
        return ref["frags_before"], "same fragments"
    frags, commits = snapshot(uri)[:2]
    new = [f for f in frags - ref["before_snap"][0]]
    committed = [f for f in new if f"{f}.wrt" in commits]
    if not committed:
        return ref["frags_before"], "new fragment not committed"
    if any(f"{f}.vac" in commits for f in committed):
        return ref["frags_after"], "committed, vacuum file in place"
    return ref["frags_before"] + 1, "committed, no vacuum file yet (merged ones beside it)"


def check_run(case, ref, uri, binary, tdbf, kill, shim, stats):
    how = run_op(op_cmd(binary, uri, case), kill, shim)
    want_frags, phase = expected_fragments(case, ref, uri)
    stats["phases"][f"{case.name}: {phase}"] += 1
    for reader, read, frags in (("tiledb", read_tiledb, frags_tiledb),
                                ("tdbfilter", read_tdbfilter, frags_tdbfilter)):
        try:
            got, n = read(uri, case), frags(uri)
        except Exception as e:  # noqa: BLE001 - a reader's failure is the finding
            raise AssertionError(f"{reader} cannot read the array: {e}") from None
        if got != ref["cells"]:
            raise AssertionError(f"{reader} reads cells {got}, expected {ref['cells']} "
                                 f"({phase})")
        if n != want_frags:
            raise AssertionError(f"{reader} lists {n} fragments, the files say {want_frags} "
                                 f"({phase})")
    stats["verify"][verify(tdbf, uri)] += 1
    # The rerun completes the operation.
    r = subprocess.run(op_cmd(binary, uri, case), capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"the rerun failed: {r.stderr[-400:]}")
    for reader, read, frags in (("tiledb", read_tiledb, frags_tiledb),
                                ("tdbfilter", read_tdbfilter, frags_tdbfilter)):
        got, n = read(uri, case), frags(uri)
        if got != ref["cells"] or n != ref["frags_after"]:
            raise AssertionError(f"after the rerun {reader} reads {got} in {n} fragments, "
                                 f"expected {ref['cells']} in {ref['frags_after']}")
    if case.op[0] == "vacuum":
        frags, commits, fmeta, meta = snapshot(uri)
        ref_frags, ref_commits, ref_fmeta, ref_meta = ref["after_snap"]
        # Leftovers a kill may leave (removed by a later vacuum after the grace period):
        # temporary files, counted.
        stats["leftover temporary files"][case.name] += sum(c.endswith(".tmp") for c in commits)
        strip = lambda s: {c for c in s if not c.endswith((".ign", ".tmp"))}  # noqa: E731
        ign = lambda s: sum(c.endswith(".ign") for c in s)  # noqa: E731
        if frags != ref_frags or strip(commits) != strip(ref_commits) or \
                ign(commits) != ign(ref_commits) or fmeta != ref_fmeta or meta != ref_meta:
            raise AssertionError(f"after the rerun the folders differ from the reference: "
                                 f"fragments {sorted(frags ^ ref_frags)}, commits "
                                 f"{sorted(commits ^ ref_commits)}, fragment metadata "
                                 f"{sorted(fmeta ^ ref_fmeta)}, metadata {sorted(meta ^ ref_meta)}")
    verify(tdbf, uri)
    return how


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="target/debug/examples/lifecycle")
    ap.add_argument("--tdbf", required=True)
    ap.add_argument("--lib", help="libtdbfilter.so the tdbfilter package loads")
    ap.add_argument("--runs", type=int, default=0, help="0: every kill point of every case")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--case", action="append", default=[])
    args = ap.parse_args()
    if args.lib:
        os.environ["TDBFILTER_LIBRARY"] = os.path.abspath(args.lib)
    binary, tdbf = os.path.abspath(args.bin), os.path.abspath(args.tdbf)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    work = args.workdir or tempfile.mkdtemp(prefix="tdbf-lcrash-")
    os.makedirs(work, exist_ok=True)
    cases = [c for c in all_cases() if not args.case or c.name in args.case]
    if not cases:
        sys.exit(f"no case named {args.case}")
    t_start = time.monotonic()
    print(f"lifecycle crash test: seed {seed}, work {work}")
    shim = build_shim(work)
    refs = {c.name: prepare(c, binary, tdbf, work, shim) for c in cases}
    plans = {c.name: kill_points(refs[c.name], rng) for c in cases}
    total = sum(len(p) for p in plans.values())
    runs = total if args.runs <= 0 else args.runs
    # Round robin over the cases' plans (each in its order), until every point ran once
    # (--runs 0) or --runs runs are planned (cycling through the plans).
    order = []
    pos = {c.name: 0 for c in cases}
    while len(order) < runs:
        for c in cases:
            p = plans[c.name]
            if len(order) < runs and (args.runs > 0 or pos[c.name] < len(p)):
                order.append((c, p[pos[c.name] % len(p)]))
                pos[c.name] += 1
    stats = {"phases": Counter(), "verify": Counter(), "outcome": Counter(),
             "leftover temporary files": Counter()}
    exercised = {c.name: set() for c in cases}
    failures = []
    for i, (case, kill) in enumerate(order):
        ref = refs[case.name]
        uri = os.path.join(work, case.name, "run")
        shutil.rmtree(uri, ignore_errors=True)
        shutil.copytree(ref["base"], uri)
        try:
            how = check_run(case, ref, uri, binary, tdbf, kill, shim, stats)
            stats["outcome"][f"{kill[0]}: {how}"] += 1
            if kill[0] == "call":
                exercised[case.name].add(kill[1])
        except AssertionError as e:
            failures.append(f"run {i} ({case.name}, kill {kill}): {e}")
            print(f"FAIL {failures[-1]}")
            if args.keep:
                shutil.copytree(uri, os.path.join(work, f"failed-{i}-{case.name}"))
        shutil.rmtree(uri, ignore_errors=True)
    elapsed = time.monotonic() - t_start
    print(f"runs: {len(order)} in {elapsed:.0f} s (with the preparation)")
    for c in cases:
        print(f"  {c.name}: {len(exercised[c.name])} of {refs[c.name]['calls']} kill points")
    print("  outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(stats["outcome"].items())))
    print("  verify: " + ", ".join(f"{k} {v}" for k, v in sorted(stats["verify"].items())))
    print("  temporary files left after a rerun of vacuum: " + ", ".join(
        f"{k} {v}" for k, v in sorted(stats["leftover temporary files"].items())))
    for k, v in sorted(stats["phases"].items()):
        print(f"  left at {k}: {v}")
    if not args.keep and not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} of {len(order)} runs failed")
        sys.exit(1)
    if stats["outcome"]["call: killed"] == 0:
        print("no run was killed")
        sys.exit(1)
    print("lifecycle crash test: every kill left the cells whole and every rerun completed")


if __name__ == "__main__":
    main()
