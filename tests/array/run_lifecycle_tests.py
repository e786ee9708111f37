#!/usr/bin/env python3
"""The array lifecycle (src/array/lifecycle) and groups (src/group) against TileDB-Py 0.36.1,
through the `lifecycle` example binary (examples/lifecycle.rs). For each operation TileDB-Py
builds an array A, copies it to its twin B (same files), TileDB does the operation on A and
tdbfilter on B, and the suite checks that

* vacuum (fragments, commits, fragment_meta, array_meta), delete_fragments and delete_array
  leave the same files (names of new `.ign` files compared up to their random label), TileDB-Py
  reads A and B the same, and `tiledb.array_fragments` lists the same fragments;
* uncommitted fragment folders (killed writers) older than the grace period are removed by
  our vacuum, younger ones kept, and TileDB reads the array as before;
* schema evolution (add attribute with fill, drop, drop and re-add with another type, add and
  extend enumerations, expand the current domain) gives the same schema and reads in TileDB-Py,
  and tdbfilter reads fill values where TileDB 2.30 reinterprets old bytes;
* TileDB's consolidation, vacuum, delete_fragments and evolution on arrays tdbfilter wrote read
  back through tdbfilter as TileDB-Py reads them;
* groups tdbfilter writes (relative, absolute and named members, removals, metadata) read the
  same in TileDB-Py, and groups TileDB-Py writes read the same through tdbfilter.

Usage: run_lifecycle_tests.py --bin target/debug/examples/lifecycle
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import tiledb

BIN = None
CFG = {"sm.consolidation.buffer_size": str(1 << 20)}
LABEL = re.compile(r"[0-9a-f]{32}")
checks = 0


def run(*args):
    r = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"lifecycle {' '.join(map(str, args))} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def run_err(*args):
    r = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True)
    assert r.returncode != 0, f"lifecycle {args} should have failed: {r.stdout}"
    return r.stderr


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        raise AssertionError(what)


def files(root):
    """Every file and folder below `root`, relative; new random labels masked."""
    out = []
    for d, dirs, fs in os.walk(root):
        for n in dirs:
            out.append(os.path.relpath(os.path.join(d, n), root) + "/")
        for n in fs:
            out.append(os.path.relpath(os.path.join(d, n), root))
    return sorted(out)


def masked(root, before):
    """Files below `root`, with the labels of files not in `before` and of `.ign` files (each
    side writes its own) masked."""
    return sorted(p if p in before and not p.endswith(".ign") else LABEL.sub("L", p)
                  for p in files(root))


def cfg(mode):
    return tiledb.Config({**CFG, "sm.consolidation.mode": mode, "sm.vacuum.mode": mode})


def reads(uri, **kw):
    with tiledb.open(uri, **kw) as A:
        return {k: v.tolist() for k, v in A[:].items()}


def frag_names(uri):
    return [os.path.basename(u) for u in tiledb.array_fragments(uri).uri]


def same_arrays(a, b, what):
    check(reads(a) == reads(b), f"{what}: TileDB-Py reads differ:\n{reads(a)}\n{reads(b)}")
    check(frag_names(a) == frag_names(b), f"{what}: array_fragments differ")
    ours = run("fragments", b)
    check(ours == frag_names(b), f"{what}: our visible fragments {ours} != {frag_names(b)}")


def sparse_schema(extra_attrs=()):
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int32))
    return tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.int32), *extra_attrs],
                              sparse=True)


def write_sparse(uri, t, coords, values):
    with tiledb.open(uri, "w", timestamp=t) as A:
        A[np.array(coords, np.int32)] = np.array(values, np.int32)


def history(uri):
    """Four sparse writes with metadata, a delete, as the lifecycle cases start from."""
    tiledb.Array.create(uri, sparse_schema())
    for t in range(1, 5):
        write_sparse(uri, t, [t, t + 10], [t, -t])
        with tiledb.open(uri, "w", timestamp=t) as A:
            A.meta[f"k{t}"] = t
    with tiledb.open(uri, "d", timestamp=5) as A:
        A.query(cond="a == 2").submit()


def twins(work, name, build):
    a, b = os.path.join(work, name + "_tiledb"), os.path.join(work, name + "_ours")
    build(a)
    shutil.copytree(a, b)
    return a, b


def tiledb_vacuum(uri, mode):
    tiledb.vacuum(uri, config=cfg(mode))


def test_vacuum(work):
    # Every mode after its consolidation, in sequence on one pair of twins.
    def build(uri):
        history(uri)
    a, b = twins(work, "vac", build)
    for mode in ["fragments", "commits", "fragment_meta", "array_meta"]:
        for u in (a, b):
            tiledb.consolidate(u, config=cfg(mode))
        # The consolidations are TileDB's on both: copy A's result to B so the files match.
        shutil.rmtree(b)
        shutil.copytree(a, b)
        before = set(files(a))
        tiledb_vacuum(a, mode)
        report = run("vacuum", b, mode)
        check(masked(a, before) == masked(b, before),
              f"vacuum {mode}: files differ:\n{masked(a, before)}\n{masked(b, before)}")
        gone = before - set(files(b))
        removed = sorted(f for f in gone
                         if not any(f != d and f.startswith(d) for d in gone if d.endswith("/")))
        check(sorted(report["removed"]) == removed, f"vacuum {mode}: report {report} != {removed}")
        same_arrays(a, b, f"vacuum {mode}")
        with tiledb.open(a) as A, tiledb.open(b) as B:
            check(dict(A.meta) == dict(B.meta), f"vacuum {mode}: metadata differs")

    # Several consolidations of each kind before one vacuum: fragment_meta twice, commits
    # twice (the second with a delete), fragments after commits (an .ign is written).
    def build2(uri):
        tiledb.Array.create(uri, sparse_schema())
        write_sparse(uri, 1, [1], [1])
        write_sparse(uri, 2, [2], [2])
        tiledb.consolidate(uri, config=cfg("fragment_meta"))
        write_sparse(uri, 3, [3], [3])
        tiledb.consolidate(uri, config=cfg("fragment_meta"))
        tiledb.consolidate(uri, config=cfg("commits"))
        write_sparse(uri, 4, [4], [4])
        with tiledb.open(uri, "d", timestamp=5) as A:
            A.query(cond="a == 2").submit()
        tiledb.consolidate(uri, config=cfg("commits"))
        tiledb.consolidate(uri, config=cfg("fragments"))
    a, b = twins(work, "vac2", build2)
    for mode in ["fragment_meta", "fragments", "commits"]:
        before = set(files(a))
        tiledb_vacuum(a, mode)
        run("vacuum", b, mode)
        check(masked(a, before) == masked(b, before),
              f"vacuum2 {mode}: files differ:\n{masked(a, before)}\n{masked(b, before)}")
        same_arrays(a, b, f"vacuum2 {mode}")

    # Commits consolidated twice without deletes: the older .con goes too.
    def build3(uri):
        tiledb.Array.create(uri, sparse_schema())
        write_sparse(uri, 1, [1], [1])
        tiledb.consolidate(uri, config=cfg("commits"))
        write_sparse(uri, 2, [2], [2])
        tiledb.consolidate(uri, config=cfg("commits"))
    a, b = twins(work, "vac3", build3)
    before = set(files(a))
    tiledb_vacuum(a, "commits")
    run("vacuum", b, "commits")
    check(masked(a, before) == masked(b, before),
          f"vacuum3: files differ:\n{masked(a, before)}\n{masked(b, before)}")
    check(len([f for f in files(b) if f.endswith(".con")]) == 1, "vacuum3: one .con left")
    same_arrays(a, b, "vacuum3")


def test_uncommitted(work):
    uri = os.path.join(work, "leftovers")
    tiledb.Array.create(uri, sparse_schema())
    write_sparse(uri, 1, [1, 2], [10, 20])
    frags = os.path.join(uri, "__fragments")
    (done,) = os.listdir(frags)
    old = "__2_2_" + "a" * 32 + "_22"
    young = "__3_3_" + "b" * 32 + "_22"
    shutil.copytree(os.path.join(frags, done), os.path.join(frags, old))
    shutil.copytree(os.path.join(frags, done), os.path.join(frags, young))
    past = time.time() - 3600
    for d, _, fs in os.walk(os.path.join(frags, old)):
        for f in fs:
            os.utime(os.path.join(d, f), (past, past))
        os.utime(d, (past, past))
    check(sorted(run("uncommitted", uri)) == sorted([old, young]), "uncommitted listing")
    expect = reads(uri)
    check(run("vacuum", uri, "fragments", "keep")["removed"] == [], "keep leaves leftovers")
    r = run("vacuum", uri, "fragments")
    check(r["removed"] == [f"__fragments/{old}/"], f"only the old leftover goes: {r}")
    check(os.path.isdir(os.path.join(frags, young)), "the young leftover stays")
    check(reads(uri) == expect, "reads unchanged")
    # TileDB's own vacuum keeps every leftover.
    tiledb_vacuum(uri, "fragments")
    check(os.path.isdir(os.path.join(frags, young)), "TileDB keeps leftovers")


def test_delete_fragments(work):
    for consolidated in (False, True):
        def build(uri):
            history(uri)
            if consolidated:
                tiledb.consolidate(uri, config=cfg("commits"))
        a, b = twins(work, f"delfrag{int(consolidated)}", build)
        before = set(files(a))
        tiledb.Array.delete_fragments(a, 2, 3)
        r = run("delete-fragments", b, 2, 3)
        check(len(r["fragments"]) == 2, f"two fragments deleted: {r}")
        check(masked(a, before) == masked(b, before),
              f"delete_fragments: files differ:\n{masked(a, before)}\n{masked(b, before)}")
        ign = [f for f in files(b) if f.endswith(".ign")]
        check(len(ign) == int(consolidated), f".ign only after a commits consolidation: {ign}")
        if ign:
            ta = [f for f in files(a) if f.endswith(".ign")][0]
            check(open(os.path.join(a, ta)).read() == open(os.path.join(b, ign[0])).read(),
                  ".ign contents")
        same_arrays(a, b, "delete_fragments")
    err = run_err("delete-fragments", b, 5, 1)
    check("reversed" in err, err)


def test_delete_array(work):
    def build(uri):
        history(uri)
        tiledb.consolidate(uri, config=cfg("commits"))
        open(os.path.join(uri, "foreign.txt"), "w").write("user data")
        os.mkdir(os.path.join(uri, "user_dir"))
    a, b = twins(work, "delarr", build)
    tiledb.Array.delete_array(a)
    run("delete-array", b)
    check(files(a) == files(b) == ["foreign.txt", "user_dir/"], f"{files(a)} / {files(b)}")
    # Without foreign files the folder goes.
    a, b = twins(work, "delarr2", history)
    tiledb.Array.delete_array(a)
    run("delete-array", b)
    check(not os.path.exists(a) and not os.path.exists(b), "the array folders are removed")
    err = run_err("delete-array", os.path.join(work, "nothing_here"))
    check("not a TileDB array" in err, err)


def evolve_tiledb(uri, steps):
    ctx = tiledb.default_ctx()
    for step in steps:
        se = tiledb.ArraySchemaEvolution(ctx)
        for kind, v in step:
            if kind == "add_attribute":
                se.add_attribute(v[0])
            elif kind == "drop_attribute":
                se.drop_attribute(v)
            elif kind == "add_enumeration":
                se.add_enumeration(v[0])
            elif kind == "extend_enumeration":
                with tiledb.open(uri) as A:
                    se.extend_enumeration(A.enum(v[0]).extend(v[1]))
            elif kind == "expand_current_domain":
                dom = tiledb.ArraySchema.load(uri).domain
                cd = tiledb.CurrentDomain(ctx)
                nd = tiledb.NDRectangle(ctx, dom)
                for i, (lo, hi) in enumerate(v):
                    nd.set_range(i, lo, hi)
                cd.set_ndrectangle(nd)
                se.expand_current_domain(cd)
        se.array_evolve(uri)


def evolve_ours(uri, steps):
    for step in steps:
        changes = []
        for kind, v in step:
            if kind in ("add_attribute", "add_enumeration"):
                changes.append({kind: v[1]})
            elif kind == "extend_enumeration":
                with tiledb.open(uri) as A:
                    e = A.enum(v[0])
                changes.append({kind: {"name": v[0], "type": v[2], "values": v[1],
                                       "ordered": e.ordered}})
            else:
                changes.append({kind: v})
        time.sleep(0.002)
        run("evolve", uri, json.dumps(changes))


def schema_summary(uri):
    with tiledb.open(uri) as A:
        s = A.schema
        attrs = [(a.name, str(a.dtype), a.isvar, a.isnullable, a.enum_label,
                  np.asarray(a.fill).tolist() if not a.isvar else None) for a in s]
        enums = {}
        for a in s:
            if a.enum_label:
                e = A.enum(a.enum_label)
                enums[a.enum_label] = (e.values().tolist(), e.ordered)
        cd = s.current_domain
        cdr = None if cd.is_empty else [cd.ndrectangle.range(i) for i in range(s.domain.ndim)]
        return attrs, enums, cdr


def decode(field):
    """Our read of one field as Python values."""
    t = field["type"]
    raw = bytes.fromhex(field["data"])
    if field["offsets"] is not None:
        o = field["offsets"] + [len(raw)]
        # TileDB-Py drops the NUL of the default var-size string fill value ("\0") as it
        # drops trailing NULs of strings.
        return [raw[o[i]:o[i + 1]].decode().rstrip("\0") for i in range(len(o) - 1)]
    dt = {"INT32": "<i4", "INT64": "<i8", "FLOAT64": "<f8", "UINT8": "u1", "FLOAT32": "<f4",
          "INT16": "<i2"}[t]
    return np.frombuffer(raw, dt).tolist()


def test_evolution(work):
    def build(uri):
        dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int64))
        cd = tiledb.CurrentDomain(tiledb.default_ctx())
        nd = tiledb.NDRectangle(tiledb.default_ctx(), dom)
        nd.set_range(0, 0, 49)
        cd.set_ndrectangle(nd)
        schema = tiledb.ArraySchema(
            domain=dom, sparse=True,
            attrs=[tiledb.Attr("a", dtype=np.int32), tiledb.Attr("f", dtype=np.int32),
                   tiledb.Attr("c", dtype=np.uint8, enum_label="en")],
            enums=[tiledb.Enumeration("en", False, ["x", "y"])])
        schema.set_current_domain(cd)
        tiledb.Array.create(uri, schema)
        with tiledb.open(uri, "w", timestamp=1) as A:
            A[np.array([1, 2], np.int64)] = {"a": np.array([1, 2], np.int32),
                                             "f": np.array([3, 4], np.int32),
                                             "c": np.array([0, 1], np.uint8)}
    steps = [
        [("add_attribute", (tiledb.Attr("b", dtype=np.float64, fill=7.5),
                            {"name": "b", "type": "FLOAT64", "fill": 7.5})),
         ("drop_attribute", "f")],
        [("add_attribute", (tiledb.Attr("f", dtype=np.int32),
                            {"name": "f", "type": "INT32"})),
         ("add_attribute", (tiledb.Attr("s", dtype=str, var=True),
                            {"name": "s", "type": "STRING_UTF8", "cell_val_num": "var"})),
         ("drop_attribute", "a")],
        [("add_attribute", (tiledb.Attr("a", dtype=np.int64, fill=-5),
                            {"name": "a", "type": "INT64", "fill": -5}))],
        [("extend_enumeration", ("en", ["z"], "STRING_UTF8"))],
        [("add_enumeration", (tiledb.Enumeration("e3", True, np.array([5, 6], np.int16)),
                              {"name": "e3", "type": "INT16", "ordered": True,
                               "values": [5, 6]})),
         # In the same evolution: TileDB 2.30 refuses an attribute using an enumeration an
         # earlier evolution added ("the enumeration has not been loaded"). With the default
         # fill (255, no label) TileDB-Py fails reading old fragments: fill with a label.
         ("add_attribute", (tiledb.Attr("g", dtype=np.uint8, enum_label="e3", fill=1),
                            {"name": "g", "type": "UINT8", "enumeration": "e3", "fill": 1}))],
        [("expand_current_domain", [(0, 79)])],
    ]
    a, b = twins(work, "evolve", build)
    evolve_tiledb(a, steps)
    evolve_ours(b, steps)
    check(schema_summary(a) == schema_summary(b),
          f"evolved schemas differ:\n{schema_summary(a)}\n{schema_summary(b)}")
    check(len(os.listdir(os.path.join(b, "__schema"))) == len(steps) + 2, "one schema per step")
    ra, rb = reads(a), reads(b)
    # TileDB 2.30 reinterprets the old int32 bytes of the dropped `a` as the new int64 `a`:
    # compare everything else, then our own read of `a` (its fill value).
    check({k: v for k, v in ra.items() if k != "a"} == {k: v for k, v in rb.items() if k != "a"},
          f"evolved reads differ:\n{ra}\n{rb}")
    ours = run("read", b)
    check(decode(ours["a"]) == [-5, -5], f"re-added a reads its fill: {decode(ours['a'])}")
    check(decode(ours["f"]) == [3, 4], f"re-added f (same type) reads old data: {ours['f']}")
    check(decode(ours["b"]) == [7.5, 7.5], "added b reads its fill")
    check(decode(ours["s"]) == rb["s"], f"added var s: {decode(ours['s'])} vs {rb['s']}")
    # The fragment of A, read by us, agrees with TileDB on the same fields.
    ours_a = run("read", a)
    for k in ("d", "b", "f"):
        check(decode(ours_a[k]) == ra[k], f"{k}: ours {decode(ours_a[k])} != TileDB {ra[k]}")
    # Enumerated attributes: TileDB-Py reads labels, we read indices.
    check([[5, 6][i] for i in decode(ours_a["g"])] == ra["g"], f"g: {ours_a['g']} vs {ra['g']}")
    # Refusals.
    err = run_err("evolve", b, json.dumps([{"drop_attribute": "nope"}]))
    check("does not exist" in err, err)
    err = run_err("evolve", b, json.dumps([{"expand_current_domain": [[0, 10]]}]))
    check("can only grow" in err, err)
    err = run_err("evolve", b, json.dumps([{"drop_enumeration": "e3"}]))
    check("is used by attribute" in err, err)
    # An evolution stamped before the newest schema is written, as TileDB writes it (TileDB-Py's
    # test_schema_evolution_timestamp). In TileDB's listing order `__5_5_...` comes after the
    # 13-digit names, so reads at the current time open it, in both libraries.
    se = tiledb.ArraySchemaEvolution(tiledb.default_ctx())
    se.timestamp(5)
    se.drop_attribute("b")
    se.array_evolve(a)
    run("evolve", b, json.dumps([{"drop_attribute": "b"}]), 5)
    for uri in (a, b):
        check(any(n.startswith("__5_5_") for n in os.listdir(os.path.join(uri, "__schema"))),
              f"{uri}: no schema at timestamp 5")
    check(schema_summary(a) == schema_summary(b),
          f"early evolution: schemas differ:\n{schema_summary(a)}\n{schema_summary(b)}")
    ra, rb = reads(a), reads(b)
    same = {k: v for k, v in ra.items() if k != "a"} == {k: v for k, v in rb.items() if k != "a"}
    check("b" not in rb and same, f"early evolution: reads differ:\n{ra}\n{rb}")
    check("b" not in run("read", b), "early evolution: we still read b")


def our_sparse_array(uri, t0=1):
    """A sparse array created and written (four fragments) by tdbfilter."""
    run("create", uri, json.dumps({
        "sparse": True,
        "dimensions": [{"name": "d", "type": "INT32", "domain": [0, 99], "tile": 10}],
        "attributes": [{"name": "a", "type": "INT32"}]}))
    for t in range(t0, t0 + 4):
        c = np.array([t, t + 10], np.int32)
        v = np.array([t * 10, -t], np.int32)
        run("write", uri, t, json.dumps({"layout": "unordered", "fields": {
            "d": {"data": c.tobytes().hex()}, "a": {"data": v.tobytes().hex()}}}))


def ours_equal_tiledb(uri, what):
    r = reads(uri)
    o = run("read", uri)
    for k, v in r.items():
        check(decode(o[k]) == v, f"{what}: {k}: ours {decode(o[k])} != TileDB {v}")


def test_tiledb_on_ours(work):
    uri = os.path.join(work, "ours_for_tiledb")
    our_sparse_array(uri)
    ours_equal_tiledb(uri, "written")
    tiledb.consolidate(uri, config=cfg("fragments"))
    ours_equal_tiledb(uri, "consolidated")
    tiledb.vacuum(uri, config=cfg("fragments"))
    ours_equal_tiledb(uri, "vacuumed")
    check(len(run("fragments", uri)) == 1, "one fragment after TileDB's vacuum")
    uri2 = os.path.join(work, "ours_for_tiledb2")
    our_sparse_array(uri2)
    tiledb.Array.delete_fragments(uri2, 2, 3)
    ours_equal_tiledb(uri2, "TileDB delete_fragments")
    check(len(run("fragments", uri2)) == 2, "two fragments left")
    se = tiledb.ArraySchemaEvolution(tiledb.default_ctx())
    se.add_attribute(tiledb.Attr("n", dtype=np.int32, fill=42))
    se.array_evolve(uri2)
    ours_equal_tiledb(uri2, "TileDB evolution")
    # And our operations on our array, read by TileDB.
    uri3 = os.path.join(work, "ours_for_ours")
    our_sparse_array(uri3)
    run("delete-fragments", uri3, 1, 2)
    run("evolve", uri3, json.dumps([{"add_attribute": {"name": "n", "type": "INT32",
                                                       "fill": 42}}]))
    ours_equal_tiledb(uri3, "our delete and evolution")
    check(reads(uri3)["n"] == [42] * 4, f"TileDB reads the fill: {reads(uri3)}")


def group_view_tiledb(uri):
    with tiledb.Group(uri) as G:
        members = sorted((m.uri, m.type.__name__, m.name) for m in G)
        meta = {k: (np.asarray(v).tolist() if not isinstance(v, str) else v)
                for k, v in G.meta.items()}
    return members, meta


def group_view_ours(uri):
    g = run("group-show", uri)
    members = []
    for m in g["members"]:
        r = m["resolved"]
        if not r.startswith("file://"):
            r = "file://" + r
        members.append((r, {"array": "Array", "group": "Group"}[m["type"]], m["name"]))
    meta = {}
    for k, (t, h) in g["metadata"].items():
        # TileDB-Py's convention: a numpy array `v` is stored as `__np_flat_v` (and its shape
        # as `__np_shape_v`), and shown as `v`.
        if k.startswith("__np_shape_"):
            continue
        k = k.removeprefix("__np_flat_")
        raw = bytes.fromhex(h)
        if t == "STRING_UTF8":
            meta[k] = raw.decode()
        else:
            v = np.frombuffer(raw, {"INT64": "<i8", "FLOAT64": "<f8"}[t]).tolist()
            meta[k] = v[0] if len(v) == 1 else v
    return sorted(members), meta


def test_groups(work):
    base = os.path.join(work, "groups")
    os.makedirs(base)
    arr = os.path.join(base, "outside")
    tiledb.Array.create(arr, sparse_schema())
    # Ours, read by TileDB-Py.
    g = os.path.join(base, "ours")
    run("group-create", g)
    tiledb.Array.create(os.path.join(g, "inner"), sparse_schema())
    tiledb.group_create(os.path.join(g, "sub"))
    run("group-update", g, json.dumps({
        "add": [["inner", True, "I"], ["sub", True, None], [arr, False, None]],
        "put": {"count": ["INT64", np.array([7], np.int64).tobytes().hex()],
                "label": ["STRING_UTF8", "hello".encode().hex()]}}))
    check(group_view_tiledb(g) == group_view_ours(g),
          f"our group:\n{group_view_tiledb(g)}\n{group_view_ours(g)}")
    run("group-update", g, json.dumps({"remove": ["I", arr], "delete": ["label"]}))
    check(group_view_tiledb(g) == group_view_ours(g), "our group after removals")
    check(len(group_view_tiledb(g)[0]) == 1, f"one member left: {group_view_tiledb(g)}")
    err = run_err("group-update", g, json.dumps({"add": [["missing", True, None]]}))
    check("not a TileDB array or group" in err, err)
    err = run_err("group-update", g, json.dumps({"remove": ["nothere"]}))
    check("does not exist" in err, err)
    # TileDB then writes to our group; we read it.
    with tiledb.Group(g, "w") as G:
        G.add("inner", relative=True, name="again")
        G.meta["pi"] = 3.5
    check(group_view_tiledb(g) == group_view_ours(g), "TileDB's writes to our group")
    # TileDB's group, read by us, then changed by us and read by TileDB.
    t = os.path.join(base, "tiledb")
    tiledb.group_create(t)
    tiledb.Array.create(os.path.join(t, "x"), sparse_schema())
    with tiledb.Group(t, "w") as G:
        G.add("x", relative=True, name="X")
        G.add(arr)
        G.meta["k"] = 5
        G.meta["v"] = np.array([1.5, 2.5])
    with tiledb.Group(t, "w") as G:
        G.remove("X")
        G.add("x", relative=True)
    check(group_view_tiledb(t) == group_view_ours(t),
          f"TileDB's group:\n{group_view_tiledb(t)}\n{group_view_ours(t)}")
    run("group-update", t, json.dumps({"remove": ["x"], "add": [["x", True, "Y"]]}))
    check(group_view_tiledb(t) == group_view_ours(t), "our writes to TileDB's group")


def main():
    global BIN
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True, help="the lifecycle example binary")
    args = p.parse_args()
    BIN = os.path.abspath(args.bin)
    if not os.path.isfile(BIN):
        sys.exit(f"missing {BIN}: cargo build --example lifecycle")
    tests = [test_vacuum, test_uncommitted, test_delete_fragments, test_delete_array,
             test_evolution, test_tiledb_on_ours, test_groups]
    with tempfile.TemporaryDirectory(prefix="tdbf_lifecycle_") as work:
        for t in tests:
            d = os.path.join(work, t.__name__)
            os.makedirs(d)
            start = time.time()
            t(d)
            print(f"ok  {t.__name__} ({time.time() - start:.1f} s)")
    print(f"lifecycle: {checks} checks passed")


if __name__ == "__main__":
    main()
