#!/usr/bin/env python3
"""Crash consistency of tdbfilter's array writer (issue 22, §4): SIGKILL at any point of a
write leaves the array exactly as it was before the write or exactly as after it.

Each case is an array created by TileDB-Py with one fragment TileDB-Py wrote (the state
"before") and a write of many cells through `tdbf array write` (dense and sparse, var-size
strings and nullable fields; most cases stream several batches into one fragment). A reference
run writes without a kill (the state "after"). Then every run copies the "before" array,
starts the writer and kills it with SIGKILL

* after a random delay (uniform over 0 .. 1.3 × the reference write's duration, so some kills
  land after the commit or after the process ended), or
* at a kill point observed by polling the array folder (no hook in the writer): the fragment
  folder appeared; it holds N files; its data files hold a fraction F of their final bytes;
  `__fragment_metadata.tdb` appeared; the commit marker `__commits/<name>.wrt` appeared; or
* exactly before its N-th file-changing call (open for writing, write, fsync, mkdir, ...):
  tests/array/crash_shim.c, compiled here and preloaded into the writer, counts those calls
  and raises SIGKILL at the N-th. Every other N is one of the last 12 calls of the reference
  write (its commit: the data files' syncs, the fragment metadata, the folder syncs, the
  marker), in turn, so that 60 runs kill at each of them; the others are any call. A wrong
  commit order shows there; polling and delays alone rarely land in that millisecond.

After each kill the array is read through TileDB-Py and through tdbfilter's Python package
(`tdbfilter.Array`), and each read must equal that reader's reference read of the state the
commit marker says: "after" when the writer's `.wrt` exists, "before" otherwise (never any
other state). `tiledb.array_fragments` must list the fragments of that state. `tdbf array
verify` must pass, or fail naming only the writer's uncommitted fragment folder (no damage of
committed data). Printed: runs, killed before the commit, killed after it, completed before the
kill, states seen per reader, verify outcomes.

Usage: run_crash_tests.py --tdbf target/release/tdbf [--lib libtdbfilter.so] [--runs 60]
       [--seed S] [--workdir DIR] [--keep] [--case NAME ...]
"""

from __future__ import annotations

import argparse
import hashlib
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

WRITE_T = 7  # the crashed write's timestamp (the "before" fragment has timestamp 1)


# ----------------------------------------------------------------------------------------
# Cells


def var_strings(rng, n, lo=0, hi=8):
    """n random lowercase strings: (data uint8, offsets uint64, list of str)."""
    lens = rng.integers(lo, hi + 1, n)
    data = rng.integers(ord("a"), ord("z") + 1, int(lens.sum()), dtype=np.uint8)
    offsets = np.zeros(n, np.uint64)
    np.cumsum(lens[:-1], out=offsets[1:])
    return data, offsets


def as_objects(data, offsets):
    b = data.tobytes()
    ends = list(offsets[1:].tolist()) + [len(b)]
    return np.array([b[s:e].decode() for s, e in zip(offsets.tolist(), ends)], dtype=object)


class Case:
    """An array, its "before" fragment (TileDB-Py) and the write that is killed (tdbf)."""

    def __init__(self, name, make_schema, before, fields, write_args, dense_domain=None):
        self.name = name
        self.make_schema = make_schema
        self.before = before  # writes the "before" fragment into an open TileDB-Py array
        self.fields = fields  # name -> (data, offsets or None, validity or None)
        self.write_args = write_args  # extra tdbf array write arguments
        self.dense_domain = dense_domain  # [(lo, hi)] per dimension (dense reads)


def dense_case(name, rows, cols, tile, layout, subarray, batch_cells):
    """A 2-D dense array: int32 `a` (zstd), var-size string `s`, nullable float64 `n`
    (bit shuffle + LZ4); "before" writes rows 0..rows/4-1; the killed write covers
    `subarray`."""
    rng = np.random.default_rng(sum(map(ord, name)))

    def make_schema():
        dom = tiledb.Domain(
            tiledb.Dim("r", domain=(0, rows - 1), tile=tile, dtype=np.int32),
            tiledb.Dim("c", domain=(0, cols - 1), tile=tile, dtype=np.int32))
        return tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
            tiledb.Attr("a", dtype=np.int32, filters=tiledb.FilterList([tiledb.ZstdFilter(3)])),
            tiledb.Attr("s", dtype=str, var=True),
            tiledb.Attr("n", dtype=np.float64, nullable=True, filters=tiledb.FilterList(
                [tiledb.BitShuffleFilter(), tiledb.LZ4Filter()])),
        ])

    def before(A):
        r = rows // 4
        m = r * cols
        data, offsets = var_strings(rng, m)
        A[0:r, 0:cols] = {
            "a": np.arange(m, dtype=np.int32).reshape(r, cols),
            "s": as_objects(data, offsets).reshape(r, cols),
            "n": np.ma.masked_array(rng.standard_normal(m).reshape(r, cols),
                                    mask=(rng.random(m) < 0.2).reshape(r, cols)),
        }

    (r0, r1), (c0, c1) = subarray
    n = (r1 - r0 + 1) * (c1 - c0 + 1)
    s_data, s_off = var_strings(rng, n)
    fields = {
        "a": (rng.integers(-(2**31), 2**31, n, dtype=np.int32), None, None),
        "s": (s_data, s_off, None),
        "n": (rng.standard_normal(n), None, (rng.random(n) > 0.3).astype(np.uint8)),
    }
    args = ["--layout", layout, f"--subarray={r0},{r1},{c0},{c1}"]
    if batch_cells:
        args += ["--batch-cells", str(batch_cells)]
    return Case(name, make_schema, before, fields, args, [(0, rows - 1), (0, cols - 1)])


def sparse_case(name, side, tile, capacity, n, batch_cells):
    """A 2-D sparse array (int64 dimensions, row-major tiles and cells): int64 `v` (zstd),
    nullable var-size string `s`; n cells in global order streamed in batches."""
    rng = np.random.default_rng(sum(map(ord, name)))

    def make_schema():
        dom = tiledb.Domain(
            tiledb.Dim("y", domain=(0, side - 1), tile=tile, dtype=np.int64),
            tiledb.Dim("x", domain=(0, side - 1), tile=tile, dtype=np.int64))
        return tiledb.ArraySchema(domain=dom, sparse=True, capacity=capacity, attrs=[
            tiledb.Attr("v", dtype=np.int64, filters=tiledb.FilterList([tiledb.ZstdFilter(1)])),
            tiledb.Attr("s", dtype=str, var=True, nullable=True),
        ])

    def cells(m):
        lin = rng.choice(side * side, m, replace=False)
        y, x = lin // side, lin % side
        order = np.lexsort((x, y, x // tile, y // tile))
        return y[order].astype(np.int64), x[order].astype(np.int64)

    def before(A):
        y, x = cells(2000)
        data, offsets = var_strings(rng, 2000)
        s = as_objects(data, offsets)
        A[y, x] = {"v": np.arange(2000, dtype=np.int64),
                   "s": np.ma.masked_array(s, mask=rng.random(2000) < 0.25)}

    y, x = cells(n)
    s_data, s_off = var_strings(rng, n)
    fields = {
        "y": (y, None, None),
        "x": (x, None, None),
        "v": (rng.integers(-(2**62), 2**62, n, dtype=np.int64), None, None),
        "s": (s_data, s_off, (rng.random(n) > 0.25).astype(np.uint8)),
    }
    return Case(name, make_schema, before, fields,
                ["--layout", "global", "--batch-cells", str(batch_cells)])


def sparse_string_case(name, n):
    """A sparse array with an ASCII string dimension and an int32 one, float32 `f`, cells in
    any order (one unordered batch: the writer sorts them)."""
    rng = np.random.default_rng(sum(map(ord, name)))
    keys = np.array([f"k{i:05d}".encode() for i in range(3000)], dtype=object)

    def make_schema():
        dom = tiledb.Domain(
            tiledb.Dim("k", dtype="ascii"),
            tiledb.Dim("x", domain=(0, 999), tile=100, dtype=np.int32))
        return tiledb.ArraySchema(domain=dom, sparse=True, capacity=1000, attrs=[
            tiledb.Attr("f", dtype=np.float32),
        ])

    def cells(m):
        lin = rng.choice(len(keys) * 1000, m, replace=False)
        return keys[lin // 1000], (lin % 1000).astype(np.int32)

    def before(A):
        k, x = cells(1000)
        A[k, x] = {"f": np.arange(1000, dtype=np.float32)}

    k, x = cells(n)
    k_off = np.zeros(n, np.uint64)
    np.cumsum([len(v) for v in k[:-1]], out=k_off[1:])
    k_data = np.frombuffer(b"".join(k), dtype=np.uint8)
    fields = {
        "k": (k_data, k_off, None),
        "x": (x, None, None),
        "f": (rng.standard_normal(n).astype(np.float32), None, None),
    }
    return Case(name, make_schema, before, fields, ["--layout", "unordered"])


def all_cases():
    return [
        # Whole tiles in global order, streamed in 21 batches (batches end inside tiles).
        dense_case("dense-global", 640, 640, 64, "global", ((0, 639), (0, 639)), 20_000),
        # One row-major box that is not tile-aligned.
        dense_case("dense-row", 640, 640, 64, "row", ((37, 600), (5, 630)), None),
        # 500,000 cells in global order, 20 batches.
        sparse_case("sparse-global", 4000, 500, 1000, 300_000, 15_000),
        sparse_string_case("sparse-strings", 200_000),
    ]


# ----------------------------------------------------------------------------------------
# Reads, reduced to a digest of the cells (the same for both readers)


def canonical(v) -> bytes:
    """A field's cells as bytes: validity, then the values (null cells count as empty);
    var-size cells as lengths and bytes (the cells written here are ASCII: lengths in
    characters and in bytes agree, whether a reader gives str or bytes)."""
    mask = np.ma.getmaskarray(v).ravel() if isinstance(v, np.ma.MaskedArray) else None
    data = np.ma.getdata(v).ravel()
    if data.dtype == object:
        vals = data.copy()
        none = np.equal(vals, None)
        if mask is None:
            mask = none
        vals[mask | none] = ""
        # libtiledb fills unwritten var-size string cells with one NUL, which TileDB-Py shows
        # as '' (docs/ARRAY.md §8); the cells written here never hold NULs.
        as_bytes = any(isinstance(x, bytes) for x in vals[:64])
        empty = b"" if as_bytes else ""
        # (Scalars in object arrays: numpy would turn a bare "\0" into '' before comparing.)
        vals[np.equal(vals, np.array([b"\0" if as_bytes else "\0"], dtype=object))] = empty
        if as_bytes:
            vals[np.equal(vals, np.array([""], dtype=object))] = empty
            joined = b"".join(vals.tolist())
        else:
            joined = "".join(vals.tolist()).encode()
        lens = np.fromiter(map(len, vals.tolist()), dtype=np.uint64, count=len(vals))
        return mask.tobytes() + lens.tobytes() + joined
    if mask is None:
        mask = np.zeros(data.shape, bool)
    data = np.ascontiguousarray(data).copy()
    data[mask] = 0
    return mask.tobytes() + data.tobytes()


def digest(fields: dict) -> str:
    h = hashlib.sha256()
    for name in sorted(fields):
        c = canonical(fields[name])
        h.update(name.encode() + b"\0" + len(c).to_bytes(8, "little"))
        h.update(c)
    return h.hexdigest()[:16]


def read_tiledb(uri) -> tuple:
    """(digest of the cells, fragment count) through TileDB-Py."""
    with tiledb.open(uri) as A:
        r = A.query(order="G")[:] if A.schema.sparse else A[:]
    return digest(r), len(tiledb.array_fragments(uri))


def read_tdbfilter(uri, case) -> tuple:
    """(digest of the cells, fragment count) through the tdbfilter package."""
    import tdbfilter

    with tdbfilter.Array(uri) as A:
        r = A.read(subarray=case.dense_domain) if case.dense_domain else A.read()
        return digest(r), len(A.fragments)


# ----------------------------------------------------------------------------------------
# The writer and the kill


def write_cmd(tdbf, uri, case, cells_dir):
    args = [tdbf, "array", "write", uri, "--timestamp", str(WRITE_T), "--threads", "2"]
    for name, (data, offsets, validity) in case.fields.items():
        p = os.path.join(cells_dir, name)
        args += ["--field", f"{name}={p}.bin"]
        if offsets is not None:
            args += ["--offsets", f"{name}={p}.off"]
        if validity is not None:
            args += ["--validity", f"{name}={p}.val"]
    return args + case.write_args


def save_cells(case, cells_dir):
    os.makedirs(cells_dir, exist_ok=True)
    for name, (data, offsets, validity) in case.fields.items():
        p = os.path.join(cells_dir, name)
        np.ascontiguousarray(data).tofile(p + ".bin")
        if offsets is not None:
            np.ascontiguousarray(offsets, dtype=np.uint64).tofile(p + ".off")
        if validity is not None:
            np.ascontiguousarray(validity, dtype=np.uint8).tofile(p + ".val")


def listdir(p):
    try:
        return os.listdir(p)
    except FileNotFoundError:
        return []


def new_entries(uri, base_frags, base_commits):
    frags = [f for f in listdir(os.path.join(uri, "__fragments")) if f not in base_frags]
    commits = [f for f in listdir(os.path.join(uri, "__commits")) if f not in base_commits]
    return frags, commits


def data_bytes(folder):
    total = 0
    for f in listdir(folder):
        if f != "__fragment_metadata.tdb":
            try:
                total += os.path.getsize(os.path.join(folder, f))
            except FileNotFoundError:
                pass
    return total


def reached(point, uri, base_frags, base_commits, ref):
    """Whether the writer's progress, seen from outside, reached the kill point."""
    kind, arg = point
    frags, commits = new_entries(uri, base_frags, base_commits)
    if kind == "commit":
        return bool(commits)
    if not frags:
        return False
    folder = os.path.join(uri, "__fragments", frags[0])
    if kind == "folder":
        return True
    if kind == "files":
        return len(listdir(folder)) >= arg
    if kind == "bytes":
        return data_bytes(folder) >= arg * ref["data_bytes"]
    if kind == "metadata":
        return os.path.exists(os.path.join(folder, "__fragment_metadata.tdb"))
    raise ValueError(kind)


def run_writer(cmd, uri, kill, base_frags, base_commits, ref, shim):
    """Starts the writer and kills it as `kill` says: ("delay", seconds), ("call", N) (the
    preloaded shim kills it before its N-th file-changing call) or a kill point observed in
    the folder. Returns "killed" or "completed" (the writer ended before the kill)."""
    env = None
    if kill[0] == "call":
        env = dict(os.environ, LD_PRELOAD=shim, TDBF_CRASH_AT=str(kill[1]))
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    if kill[0] == "call":
        p.wait()
    elif kill[0] == "delay":
        deadline = time.monotonic() + kill[1]
        while time.monotonic() < deadline and p.poll() is None:
            time.sleep(min(0.002, max(0.0, deadline - time.monotonic())))
    else:
        while p.poll() is None and not reached(kill, uri, base_frags, base_commits, ref):
            pass
    if p.poll() is None:
        os.kill(p.pid, signal.SIGKILL)
    _, err = p.communicate()
    if p.returncode == -signal.SIGKILL:
        return "killed"
    if p.returncode != 0:
        raise AssertionError(f"the writer failed (exit {p.returncode}): {err.decode()[-500:]}")
    return "completed"


def verify(tdbf, uri, new_frags):
    """`tdbf array verify`: "whole", or "leftover" when it fails naming only the uncommitted
    folder(s) of this write; anything else raises."""
    r = subprocess.run([tdbf, "array", "verify", uri], capture_output=True, text=True)
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    if r.returncode == 0 and lines and lines[-1].endswith("the array is whole"):
        return "whole"
    damages = lines[:-1]
    ok = (r.returncode == 1 and damages and all(
        any(l.startswith(f"{f}/__fragments: ") and "uncommitted fragment folder" in l
            for f in new_frags) for l in damages))
    if not ok:
        raise AssertionError(f"tdbf array verify: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return "leftover"


# ----------------------------------------------------------------------------------------


def build_shim(work):
    """Compiles tests/array/crash_shim.c (a C compiler is a prerequisite of this test)."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crash_shim.c")
    out = os.path.join(work, "crash_shim.so")
    r = subprocess.run([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", "-o", out, src,
                        "-ldl"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"cannot compile {src}: {r.stderr}")
    return out


def prepare(case, tdbf, work, shim):
    """Creates the "before" array, the cell files, and the reference "after" array; returns
    the reference reads and sizes."""
    cdir = os.path.join(work, case.name)
    shutil.rmtree(cdir, ignore_errors=True)
    os.makedirs(cdir)
    base = os.path.join(cdir, "before")
    tiledb.Array.create(base, case.make_schema())
    with tiledb.open(base, "w", timestamp=1) as A:
        case.before(A)
    cells_dir = os.path.join(cdir, "cells")
    save_cells(case, cells_dir)
    after = os.path.join(cdir, "after")
    shutil.copytree(base, after)
    t0 = time.monotonic()
    r = subprocess.run(write_cmd(tdbf, after, case, cells_dir), capture_output=True, text=True)
    duration = time.monotonic() - t0
    if r.returncode != 0:
        raise AssertionError(f"{case.name}: the reference write failed: {r.stderr}")
    # The same write under the shim, counting its file-changing calls.
    counted = os.path.join(cdir, "counted")
    shutil.copytree(base, counted)
    count_file = os.path.join(cdir, "calls")
    env = dict(os.environ, LD_PRELOAD=shim, TDBF_CRASH_COUNT=count_file)
    r = subprocess.run(write_cmd(tdbf, counted, case, cells_dir), capture_output=True, text=True,
                       env=env)
    if r.returncode != 0 or not os.path.exists(count_file):
        raise AssertionError(f"{case.name}: the counted write failed: {r.stderr}")
    calls = int(open(count_file).read())
    shutil.rmtree(counted)
    frags, _ = new_entries(after, set(listdir(os.path.join(base, "__fragments"))), set())
    ref = {
        "base": base,
        "cells_dir": cells_dir,
        "duration": duration,
        "base_frags": set(listdir(os.path.join(base, "__fragments"))),
        "base_commits": set(listdir(os.path.join(base, "__commits"))),
        "calls": calls,
        "files": len(listdir(os.path.join(after, "__fragments", frags[0]))),
        "data_bytes": data_bytes(os.path.join(after, "__fragments", frags[0])),
        "tiledb": {"before": read_tiledb(base), "after": read_tiledb(after)},
        "tdbfilter": {"before": read_tdbfilter(base, case),
                      "after": read_tdbfilter(after, case)},
    }
    for state in ("before", "after"):
        if ref["tiledb"][state][0] != ref["tdbfilter"][state][0]:
            raise AssertionError(f"{case.name}: TileDB-Py and tdbfilter read the {state} state "
                                 "differently")
    if ref["tiledb"]["before"][0] == ref["tiledb"]["after"][0]:
        raise AssertionError(f"{case.name}: the write does not change the cells")
    if verify(tdbf, after, frags) != "whole":
        raise AssertionError(f"{case.name}: verify fails after a complete write")
    print(f"  {case.name}: write {duration * 1000:.0f} ms, {ref['files']} files, "
          f"{ref['data_bytes'] / 2**20:.1f} MiB of tiles, {calls} file-changing calls")
    return ref


TAIL = 12  # the last file-changing calls of a write: its commit, from the data files' syncs


def kill_plan(r, c, rng, ref, plan):
    """Round r's kill of case c: a random delay, a kill point observed in the folder (in
    turn, offset by the case so that every point comes early), or a kill before a
    file-changing call: every other one of those is one of the last TAIL calls, in turn over
    all the runs (60 runs cover each of them), the others any call."""
    if r % 4 == 0:
        return ("delay", rng.uniform(0.0, 1.3 * ref["duration"]))
    if r % 4 == 1:
        points = [("commit", None), ("folder", None), ("metadata", None),
                  ("files", rng.randint(1, ref["files"] - 1)), ("bytes", rng.uniform(0.05, 0.95))]
        return points[(r // 4 + c) % len(points)]
    n = ref["calls"]
    plan["calls"] += 1
    if plan["calls"] % 2 == 0:
        return ("call", rng.randint(1, n))
    plan["tail"] += 1
    return ("call", n - (plan["tail"] - 1) % TAIL)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tdbf", required=True)
    ap.add_argument("--lib", help="libtdbfilter.so the tdbfilter package loads")
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--case", action="append", default=[])
    args = ap.parse_args()
    if args.lib:
        os.environ["TDBFILTER_LIBRARY"] = os.path.abspath(args.lib)
    tdbf = os.path.abspath(args.tdbf)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    work = args.workdir or tempfile.mkdtemp(prefix="tdbf-crash-")
    os.makedirs(work, exist_ok=True)
    cases = [c for c in all_cases() if not args.case or c.name in args.case]
    if not cases:
        sys.exit(f"no case named {args.case}")
    print(f"crash test: {args.runs} runs over {len(cases)} cases, seed {seed}, work {work}")
    shim = build_shim(work)
    refs = {c.name: prepare(c, tdbf, work, shim) for c in cases}
    counts = Counter()
    states = {"tiledb": Counter(), "tdbfilter": Counter()}
    per_case = {c.name: Counter() for c in cases}
    phases, kinds = Counter(), Counter()
    plan = {"calls": 0, "tail": 0}
    failures = []
    t_start = time.monotonic()
    for i in range(args.runs):
        case = cases[i % len(cases)]
        ref = refs[case.name]
        uri = os.path.join(work, case.name, "run")
        shutil.rmtree(uri, ignore_errors=True)
        shutil.copytree(ref["base"], uri)
        kill = kill_plan(i // len(cases), i % len(cases), rng, ref, plan)
        try:
            how = run_writer(write_cmd(tdbf, uri, case, ref["cells_dir"]), uri, kill,
                             ref["base_frags"], ref["base_commits"], ref, shim)
            frags, commits = new_entries(uri, ref["base_frags"], ref["base_commits"])
            committed = bool(commits)
            if how == "completed":
                outcome = "completed before the kill"
                if not committed:
                    raise AssertionError("the writer ended without a commit marker")
            else:
                outcome = "killed after the commit" if committed else "killed before the commit"
            expect = "after" if committed else "before"
            seen = {}
            for reader, read in (("tiledb", lambda: read_tiledb(uri)),
                                 ("tdbfilter", lambda: read_tdbfilter(uri, case))):
                try:
                    got = read()
                except Exception as e:  # noqa: BLE001 - a reader's failure is the finding
                    states[reader]["unreadable"] += 1
                    raise AssertionError(f"{reader} cannot read the array: {e}") from None
                match = [s for s, v in ref[reader].items() if v == got]
                seen[reader] = match[0] if match else "other"
                states[reader][seen[reader]] += 1
                if seen[reader] != expect:
                    raise AssertionError(f"{reader} reads the {seen[reader]} state, the commit "
                                         f"marker says {expect}")
            v = verify(tdbf, uri, frags)
            if v == "leftover" and committed:
                raise AssertionError("verify names a committed fragment as uncommitted")
            counts[outcome] += 1
            counts[f"verify: {v}"] += 1
            if committed:
                phase = "committed"
            elif not frags:
                phase = "no fragment folder yet"
            elif os.path.exists(os.path.join(uri, "__fragments", frags[0],
                                             "__fragment_metadata.tdb")):
                phase = "fragment metadata written, no commit marker"
            else:
                phase = "writing data files"
            phases[phase] += 1
            kinds[kill[0]] += 1
            per_case[case.name][outcome] += 1
        except AssertionError as e:
            failures.append(f"run {i} ({case.name}, kill {kill}): {e}")
            print(f"FAIL {failures[-1]}")
            if args.keep:
                shutil.copytree(uri, os.path.join(work, f"failed-{i}-{case.name}"))
        shutil.rmtree(uri, ignore_errors=True)
    elapsed = time.monotonic() - t_start
    print(f"runs: {args.runs} in {elapsed:.0f} s")
    for k in ("killed before the commit", "killed after the commit", "completed before the kill",
              "verify: whole", "verify: leftover"):
        print(f"  {k}: {counts[k]}")
    print("  left at: " + ", ".join(f"{k} {v}" for k, v in sorted(phases.items())))
    print("  kills: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    for c in cases:
        print(f"  {c.name}: " + ", ".join(f"{k} {v}" for k, v in sorted(per_case[c.name].items())))
    for reader, cnt in states.items():
        print(f"  states read by {reader}: " + ", ".join(f"{k} {v}" for k, v in sorted(cnt.items())))
    if not args.keep and not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} of {args.runs} runs failed")
        sys.exit(1)
    if counts["killed before the commit"] == 0 or \
            counts["killed after the commit"] + counts["completed before the kill"] == 0:
        print("the kills did not cover both sides of the commit")
        sys.exit(1)
    print("crash test: every run left the array as before or as after the write")


if __name__ == "__main__":
    main()
