#!/usr/bin/env python3
"""Differential tests of tdbfilter's array reader against TileDB-Py (tiledb 0.36.1, libtiledb
2.30): arrays are written by TileDB-Py into a temporary folder, then every field is read with
the shipped Python package (tdbfilter.Array, over the C API) and compared cell for cell with
what TileDB-Py reads: the C API's bytes, offsets and validity (Array.read_raw), and the
package's numpy conversion (Array.read) of fixed-size numeric fields.

The package must be installed (pip install ./bindings/python); --lib sets the C library it
loads (TDBFILTER_LIBRARY).

Usage: run_array_tests.py [--lib path/to/libtdbfilter.so] [--keep DIR] [-k substring]
"""

import argparse
import os
import shutil
import sys
import tempfile
import traceback

import numpy as np
import tiledb

import tdbfilter

KEY = "0123456789abcdeF0123456789abcdeF"
CASES = []
CHECKS = [0]


def case(fn):
    CASES.append(fn)
    return fn


class Mismatch(AssertionError):
    pass


def ctx_for(key=None):
    if key is None:
        return tiledb.Ctx()
    return tiledb.Ctx({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key})


def py_cells(values, var, nullable):
    """TileDB-Py's values of one field as (list of bytes per cell, validity list or None)."""
    validity = None
    if isinstance(values, np.ma.MaskedArray):
        validity = [0 if m else 1 for m in np.ma.getmaskarray(values).reshape(-1)]
        values = np.ma.getdata(values)
    elif nullable:
        validity = None
    arr = np.asarray(values)
    if var or arr.dtype == object:
        out = []
        for v in arr.reshape(-1):
            if v is None:
                out.append(None)
            elif isinstance(v, str):
                out.append(v.encode("utf-8"))
            elif isinstance(v, (bytes, np.bytes_)):
                out.append(bytes(v))
            else:
                out.append(np.asarray(v).tobytes())
        return out, validity
    a = np.ascontiguousarray(arr).reshape(-1)
    raw = a.view(np.uint8).reshape(len(a), a.dtype.itemsize) if len(a) else []
    return [bytes(r) for r in raw], validity


def compare(label, ours, theirs, fill=None, unordered=False):
    (oc, ov), (tc, tv) = ours, theirs
    CHECKS[0] += 1
    if len(oc) != len(tc):
        raise Mismatch(f"{label}: {len(oc)} cells, TileDB-Py {len(tc)}")
    if unordered:
        key = lambda p: (p[0] if p[0] is not None else b"", p[1] if p[1] is not None else 2)
        a = sorted(zip(oc, ov or [None] * len(oc)), key=key)
        b = sorted(zip(tc, tv or [None] * len(tc)), key=key)
        oc, ov = [x for x, _ in a], [y for _, y in a] if ov else None
        tc, tv = [x for x, _ in b], [y for _, y in b] if tv else None
    for i, (o, t) in enumerate(zip(oc, tc)):
        if t is None:  # a null var cell: compare validity only
            continue
        if o != t:
            # TileDB-Py shows libtiledb's one-NUL fill of var strings as ''.
            if t == b"" and fill is not None and o == fill:
                continue
            raise Mismatch(f"{label}: cell {i}: ours {o!r}, TileDB-Py {t!r}")
    if tv is not None:
        if ov is None:
            raise Mismatch(f"{label}: TileDB-Py has validity, ours none")
        if list(ov) != list(tv):
            diff = [i for i, (a, b) in enumerate(zip(ov, tv)) if a != b][:5]
            raise Mismatch(f"{label}: validity differs at cells {diff}")


def read_cells(ours, name, subarray=None):
    """Our cells of one field as (list of bytes per cell, validity list or None)."""
    r = ours.read_raw(name, subarray)
    return r.cells(), (r.validity.tolist() if r.validity is not None else None)


def compare_numpy(label, ours, name, subarray, theirs):
    """The package's numpy values of a fixed-size, one-value numeric field (Array.read) against
    TileDB-Py's: the same dtype and the same values in the cells TileDB-Py shows as valid."""
    field = next(f for f in ours.dimensions + ours.attributes if f.name == name)
    if field.var or field.cell_val_num != 1 or field.cell_type.dtype.kind not in "iufbMm":
        return
    CHECKS[0] += 1
    o, t = ours.read(name, subarray), theirs
    od, td = np.ma.getdata(o).reshape(-1), np.ma.getdata(t).reshape(-1)
    if od.dtype != td.dtype:
        raise Mismatch(f"{label}: numpy dtype {od.dtype}, TileDB-Py {td.dtype}")
    if isinstance(t, np.ma.MaskedArray) or isinstance(o, np.ma.MaskedArray):
        om, tm = np.ma.getmaskarray(o).reshape(-1), np.ma.getmaskarray(t).reshape(-1)
        if isinstance(t, np.ma.MaskedArray) and not np.array_equal(om, tm):
            raise Mismatch(f"{label}: the numpy masks differ")
        od, td = od[~om], td[~om]
    if od.tobytes() != td.tobytes():
        diff = [i for i in range(len(od)) if od[i:i + 1].tobytes() != td[i:i + 1].tobytes()]
        raise Mismatch(f"{label}: numpy values differ from TileDB-Py's at cells {diff[:5]}")


def schema_fields(schema):
    out = []
    for i in range(schema.nattr):
        a = schema.attr(i)
        out.append((a.name, a.isvar, a.isnullable))
    for d in schema.domain:
        out.append((d.name, d.isvar, False))
    return out


def fill_of(schema, name):
    for i in range(schema.nattr):
        a = schema.attr(i)
        if a.name == name and a.isvar:
            return b"\x00"
    return None


def check_dense(uri, key=None, timestamp=None, subarray=None, label=""):
    """Reads every field over `subarray` (inclusive (lo, hi) per dim; default: the non-empty
    domain) with both readers and compares."""
    ctx = ctx_for(key)
    with tiledb.open(uri, timestamp=timestamp, ctx=ctx) as A:
        box = subarray or A.nonempty_domain()
        if box is None:
            with tdbfilter.Array(uri, key=key, timestamp=timestamp) as ours:
                for name, _, _ in schema_fields(A.schema):
                    cells, _ = read_cells(ours, name)
                    CHECKS[0] += 1
                    if cells != []:
                        raise Mismatch(f"{label}: {name}: cells of an empty array")
            return
        dims = [d.name for d in A.schema.domain]
        # TileDB-Py's integer slices exclude the end, its datetime slices include it.
        theirs = A.query(dims=dims)[tuple(
            slice(lo, hi if isinstance(hi, np.datetime64) else hi + 1) for lo, hi in box)]
        schema = A.schema
    with tdbfilter.Array(uri, key=key, timestamp=timestamp) as ours:
        for name, var, nullable in schema_fields(schema):
            compare(
                f"{label} {name}",
                read_cells(ours, name, subarray),
                py_cells(theirs[name], var, nullable),
                fill=fill_of(schema, name),
            )
            compare_numpy(f"{label} {name}", ours, name, subarray, theirs[name])


def check_sparse(uri, key=None, timestamp=None, subarray=None, label="", unordered=False):
    ctx = ctx_for(key)
    with tiledb.open(uri, timestamp=timestamp, ctx=ctx) as A:
        schema = A.schema
        if subarray is None:
            theirs = A.query(order="G")[:]
        else:
            theirs = A.query(order="G").multi_index[tuple(slice(lo, hi) for lo, hi in subarray)]
    with tdbfilter.Array(uri, key=key, timestamp=timestamp) as ours:
        if unordered:
            # Compare whole cells (all fields together) as a multiset.
            fields = schema_fields(schema)
            o_cols = [read_cells(ours, n, subarray) for n, _, _ in fields]
            t_cols = [py_cells(theirs[n], v, nl) for n, v, nl in fields]
            o_rows = sorted(zip(*[_with_validity(c) for c in o_cols]))
            t_rows = sorted(zip(*[_with_validity(c) for c in t_cols]))
            CHECKS[0] += 1
            if o_rows != t_rows:
                raise Mismatch(f"{label}: the cells differ as multisets ({len(o_rows)} vs {len(t_rows)})")
            return
        for name, var, nullable in schema_fields(schema):
            compare(f"{label} {name}", read_cells(ours, name, subarray),
                    py_cells(theirs[name], var, nullable))
            compare_numpy(f"{label} {name}", ours, name, subarray, theirs[name])


def _with_validity(col):
    cells, validity = col
    if validity is None:
        return [(c,) for c in cells]
    return [(c if v else None, v) for c, v in zip(cells, validity)]


def expect_error(label, status, fn):
    CHECKS[0] += 1
    try:
        fn()
    except tdbfilter.TdbfilterError as e:
        if e.status != status:
            raise Mismatch(f"{label}: status {e.status} ({e}), expected {status}")
        return str(e)
    raise Mismatch(f"{label}: no error, expected status {status}")


# --------------------------------------------------------------------------------------------
# Dense arrays
# --------------------------------------------------------------------------------------------

FIXED_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
               np.float32, np.float64, "datetime64[D]", "datetime64[ns]", np.bool_]


def values_for(dtype, n, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -10**6), min(info.max, 10**6), n, dtype=dt, endpoint=True)
    if dt.kind == "f":
        return (rng.standard_normal(n) * 1000).astype(dt)
    if dt.kind == "M":
        return rng.integers(0, 10**6, n).astype(dt)
    raise ValueError(dt)


def strings(n, seed, empty_every=5):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        k = 0 if i % empty_every == 3 else int(rng.integers(1, 9))
        out.append("".join(chr(int(c)) for c in rng.integers(97, 123, k)))
    return out


@case
def dense_every_type(tmp):
    attrs = [tiledb.Attr(f"a{i}", dtype=t) for i, t in enumerate(FIXED_TYPES)]
    attrs += [
        tiledb.Attr("s3", dtype=np.dtype("S3")),
        tiledb.Attr("pair", dtype=np.dtype("i4,i4")),
        tiledb.Attr("triple", dtype=np.dtype("f8,f8,f8")),
        tiledb.Attr("utf8", dtype=str, var=True),
        tiledb.Attr("n_i32", dtype=np.int32, nullable=True),
    ]
    # (BYTES and ASCII var attributes beside UTF8 ones in one 2-D write crash TileDB-Py 0.36.1;
    # dense_fill_values_and_domains covers them.)
    dom = tiledb.Domain(tiledb.Dim("r", domain=(-3, 20), tile=4, dtype=np.int32),
                        tiledb.Dim("c", domain=(1, 9), tile=3, dtype=np.int32))
    uri = os.path.join(tmp, "dense_every_type")
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=attrs))
    shape = (7, 5)
    n = shape[0] * shape[1]
    data = {f"a{i}": values_for(t, n, i).reshape(shape) for i, t in enumerate(FIXED_TYPES)}
    data["s3"] = np.array([b"abc", b"d", b"", b"xyz", b"hi"] * 7, dtype="S3").reshape(shape)
    data["pair"] = np.array([(i, -i) for i in range(n)], dtype="i4,i4").reshape(shape)
    data["triple"] = np.array([(i, i / 2, -i) for i in range(n)], dtype="f8,f8,f8").reshape(shape)
    data["utf8"] = np.array(strings(n, 1), dtype=object).reshape(shape)
    data["n_i32"] = np.ma.array(np.arange(n, dtype=np.int32), mask=[i % 3 == 0 for i in range(n)]).reshape(shape)
    with tiledb.open(uri, "w", timestamp=10) as A:
        A[1:8, 2:7] = data
    check_dense(uri, label="NED")
    check_dense(uri, subarray=[(0, 9), (1, 9)], label="box beyond the NED")
    check_dense(uri, subarray=[(0, 2), (3, 4)], label="inner box")


@case
def dense_orders_and_fragments(tmp):
    for tile_order in ("row-major", "col-major"):
        for cell_order in ("row-major", "col-major"):
            uri = os.path.join(tmp, f"dense_{tile_order}_{cell_order}")
            dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 29), tile=4, dtype=np.int64),
                                tiledb.Dim("y", domain=(0, 9), tile=3, dtype=np.int64),
                                tiledb.Dim("z", domain=(1, 5), tile=2, dtype=np.int64))
            schema = tiledb.ArraySchema(domain=dom, tile_order=tile_order, cell_order=cell_order,
                                        attrs=[tiledb.Attr("v", dtype=np.float64),
                                               tiledb.Attr("s", dtype=str, var=True)])
            tiledb.Array.create(uri, schema)
            boxes = [((0, 9), (0, 9), (1, 5)), ((5, 20), (2, 6), (2, 3)), ((8, 8), (0, 9), (1, 5)),
                     ((25, 29), (7, 9), (4, 5))]
            for k, box in enumerate(boxes):
                shape = tuple(h - l + 1 for l, h in box)
                n = int(np.prod(shape))
                with tiledb.open(uri, "w", timestamp=10 + k) as A:
                    A[tuple(slice(l, h + 1) for l, h in box)] = {
                        "v": (np.arange(n) + 1000 * k).astype(np.float64).reshape(shape),
                        "s": np.array([f"{k}:{i}" * (i % 3) for i in range(n)], dtype=object).reshape(shape),
                    }
            label = f"{tile_order}/{cell_order}"
            check_dense(uri, label=label)
            for t in (10, 11, 12):
                check_dense(uri, timestamp=t, label=f"{label} at {t}")
            check_dense(uri, timestamp=(11, 12), label=f"{label} in [11, 12]")
            check_dense(uri, subarray=[(3, 27), (1, 8), (2, 5)], label=f"{label} box")


@case
def dense_fill_values_and_domains(tmp):
    uri = os.path.join(tmp, "dense_fill")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(-100, 200), tile=7, dtype=np.int16))
    attrs = [tiledb.Attr("i", dtype=np.int32, fill=-7),
             tiledb.Attr("f", dtype=np.float32, fill=2.5),
             tiledb.Attr("s", dtype=str, var=True, fill="none"),
             tiledb.Attr("n", dtype=np.uint16, nullable=True, fill=9),
             tiledb.Attr("ns", dtype=str, var=True, nullable=True)]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=attrs))
    for k, (lo, hi) in enumerate([(50, 60), (130, 144), (55, 131)]):
        n = hi - lo + 1
        with tiledb.open(uri, "w", timestamp=5 + k) as A:
            A[lo:hi + 1] = {"i": np.arange(n, dtype=np.int32) * (k + 1),
                            "f": np.full(n, k, dtype=np.float32),
                            "s": np.array([f"k{k}"] * n, dtype=object),
                            "n": np.ma.array(np.arange(n, dtype=np.uint16), mask=[i % 2 for i in range(n)]),
                            "ns": np.array([None if i % 3 == 0 else "v" * i for i in range(n)], dtype=object)}
    check_dense(uri, label="1-D overlaps")
    # (Separate array: with all of the above, an ASCII attribute crashes TileDB-Py's writer.)
    uri2 = os.path.join(tmp, "dense_var_kinds")
    tiledb.Array.create(uri2, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("b", dtype=bytes, var=True), tiledb.Attr("asc", dtype="ascii", var=True, fill="-"),
        tiledb.Attr("ns", dtype=str, var=True, nullable=True)]))
    for k, (lo, hi) in enumerate([(50, 60), (130, 144), (55, 131)]):
        n = hi - lo + 1
        with tiledb.open(uri2, "w", timestamp=5 + k) as A:
            A[lo:hi + 1] = {"b": np.array([bytes([k, i % 256]) * (i % 3) for i in range(n)], dtype=object),
                            "asc": np.array(strings(n, k), dtype=object),
                            "ns": np.array([None if i % 4 == 0 else "w" * i for i in range(n)], dtype=object)}
    check_dense(uri2, subarray=[(40, 150)], label="bytes and ascii")
    check_dense(uri, subarray=[(0, 200)], label="whole domain")
    check_dense(uri, timestamp=6, subarray=[(40, 150)], label="at 6")
    for dt, lo, hi, ext in ((np.uint64, 0, 2**40, 1000), (np.int8, -128, 126, 16), ("datetime64[s]", 0, 10**6, 3600)):
        uri = os.path.join(tmp, f"dense_dom_{np.dtype(dt).name}")
        if np.dtype(dt).kind == "M":
            dim = tiledb.Dim("t", domain=(np.datetime64(lo, "s"), np.datetime64(hi, "s")), tile=np.timedelta64(ext, "s"), dtype=dt)
        else:
            dim = tiledb.Dim("t", domain=(lo, hi), tile=ext, dtype=dt)
        tiledb.Array.create(uri, tiledb.ArraySchema(domain=tiledb.Domain(dim), attrs=[tiledb.Attr("a", dtype=np.int64)]))
        start = 100 if np.dtype(dt).kind != "i" else 10
        with tiledb.open(uri, "w") as A:
            if np.dtype(dt).kind == "M":
                A[np.datetime64(start, "s"):np.datetime64(start + 50, "s")] = np.arange(51)
            else:
                A[start:start + 50] = np.arange(50)
        check_dense(uri, label=f"domain of {np.dtype(dt).name}")


@case
def dense_filters(tmp):
    pipelines = {
        "zstd": [tiledb.ZstdFilter(level=3)],
        "byteshuffle_lz4": [tiledb.ByteShuffleFilter(), tiledb.LZ4Filter()],
        "bitshuffle_zstd": [tiledb.BitShuffleFilter(), tiledb.ZstdFilter()],
        "delta_gzip": [tiledb.DeltaFilter(), tiledb.GzipFilter()],
        "double_delta": [tiledb.DoubleDeltaFilter()],
        "bwr_checksum": [tiledb.BitWidthReductionFilter(), tiledb.ChecksumSHA256Filter()],
    }
    for name, filters in pipelines.items():
        uri = os.path.join(tmp, f"dense_filter_{name}")
        dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99999), tile=10000, dtype=np.uint32))
        attrs = [tiledb.Attr("v", dtype=np.int64, filters=tiledb.FilterList(filters)),
                 tiledb.Attr("n", dtype=np.float32, nullable=True, filters=tiledb.FilterList([tiledb.ZstdFilter()]))]
        tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=attrs))
        with tiledb.open(uri, "w") as A:
            A[0:25000] = {"v": np.cumsum(np.arange(25000) % 17).astype(np.int64),
                          "n": np.ma.array(np.arange(25000, dtype=np.float32), mask=np.arange(25000) % 7 == 0)}
        check_dense(uri, label=name)
    uri = os.path.join(tmp, "dense_filter_strings")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 999), tile=100, dtype=np.int32))
    attrs = [tiledb.Attr("rle", dtype="ascii", var=True, filters=tiledb.FilterList([tiledb.RleFilter()])),
             tiledb.Attr("dict", dtype=str, var=True, filters=tiledb.FilterList([tiledb.DictionaryFilter()])),
             tiledb.Attr("zs", dtype=bytes, var=True, filters=tiledb.FilterList([tiledb.ZstdFilter()]))]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=attrs))
    with tiledb.open(uri, "w") as A:
        vals = np.array([["aa", "b", "", "ccc"][i % 4] for i in range(700)], dtype=object)
        A[0:700] = {"rle": vals, "dict": vals, "zs": np.array([v.encode() for v in vals], dtype=object)}
    check_dense(uri, label="string filters")


@case
def dense_consolidation(tmp):
    for vacuum in (False, True):
        uri = os.path.join(tmp, f"dense_consolidated_{vacuum}")
        dom = tiledb.Domain(tiledb.Dim("r", domain=(1, 40), tile=5, dtype=np.int32),
                            tiledb.Dim("c", domain=(1, 40), tile=5, dtype=np.int32))
        tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.int32),
                                                                        tiledb.Attr("s", dtype=str, var=True)]))
        for k in range(4):
            lo = 1 + 5 * k
            with tiledb.open(uri, "w", timestamp=k + 1) as A:
                A[lo:lo + 12, lo:lo + 8] = {"a": np.full((12, 8), k, dtype=np.int32),
                                            "s": np.full((12, 8), f"f{k}", dtype=object)}
        tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.timestamp_start": 1,
                                                      "sm.consolidation.timestamp_end": 3}))
        if vacuum:
            tiledb.vacuum(uri)
        check_dense(uri, label=f"consolidated (vacuum {vacuum})")
        check_dense(uri, timestamp=2, label=f"consolidated at 2 (vacuum {vacuum})")
        check_dense(uri, timestamp=3, label=f"consolidated at 3 (vacuum {vacuum})")
        with tdbfilter.Array(uri) as ours:
            frags = ours.fragments
        fi = tiledb.array_fragments(uri)
        CHECKS[0] += 1
        if [f.name for f in frags] != [os.path.basename(u) for u in fi.uri]:
            raise Mismatch(f"fragment list {[f.name for f in frags]} vs {list(fi.uri)}")
        if [f.timestamps for f in frags] != [tuple(t) for t in fi.timestamp_range]:
            raise Mismatch("fragment timestamps differ")
        if [f.cell_count for f in frags] != list(fi.cell_num):
            raise Mismatch(f"cell counts {[f.cell_count for f in frags]} vs {list(fi.cell_num)}")


@case
def dense_encrypted(tmp):
    uri = os.path.join(tmp, "dense_encrypted")
    ctx = ctx_for(KEY)
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int32), ctx=ctx)
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, ctx=ctx, attrs=[
        tiledb.Attr("a", dtype=np.float64, ctx=ctx), tiledb.Attr("s", dtype=str, var=True, nullable=True, ctx=ctx)]), ctx=ctx)
    with tiledb.open(uri, "w", ctx=ctx) as A:
        A[5:60] = {"a": np.linspace(0, 1, 55), "s": np.array([None if i % 5 == 0 else "x" * (i % 4) for i in range(55)], dtype=object)}
    check_dense(uri, key=KEY, label="encrypted")
    expect_error("encrypted without key", 4, lambda: tdbfilter.Array(uri))
    expect_error("encrypted with a wrong key", 4, lambda: tdbfilter.Array(uri, key="X" * 32))


@case
def dense_schema_evolution(tmp):
    uri = os.path.join(tmp, "dense_evolution")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 49), tile=10, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.int32)]))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[0:30] = np.arange(30, dtype=np.int32)
    se = tiledb.ArraySchemaEvolution()
    se.add_attribute(tiledb.Attr("b", dtype=np.float64, fill=4.5))
    se.add_attribute(tiledb.Attr("c", dtype=str, var=True, nullable=True))
    se.array_evolve(uri)
    with tiledb.open(uri, "w", timestamp=tiledb_now()) as A:
        A[20:40] = {"a": np.arange(20, dtype=np.int32) + 100, "b": np.arange(20.0), "c": np.array(["q"] * 20, dtype=object)}
    check_dense(uri, label="evolved")


def tiledb_now():
    import time
    return int(time.time() * 1000)


# --------------------------------------------------------------------------------------------
# Sparse arrays
# --------------------------------------------------------------------------------------------


def sparse_schema(dims, attrs, **kw):
    return tiledb.ArraySchema(domain=tiledb.Domain(*dims), attrs=attrs, sparse=True, **kw)


@case
def sparse_every_type(tmp):
    attrs = [tiledb.Attr(f"a{i}", dtype=t) for i, t in enumerate(FIXED_TYPES)]
    attrs += [tiledb.Attr("pair", dtype=np.dtype("u2,u2")),
              tiledb.Attr("utf8", dtype=str, var=True),
              tiledb.Attr("bytes", dtype=bytes, var=True),
              tiledb.Attr("n_f", dtype=np.float64, nullable=True),
              tiledb.Attr("n_s", dtype="ascii", var=True, nullable=True)]
    uri = os.path.join(tmp, "sparse_every_type")
    dims = [tiledb.Dim("x", domain=(-1000, 1000), tile=100, dtype=np.int64),
            tiledb.Dim("y", domain=(0.0, 1.0), tile=0.25, dtype=np.float64)]
    tiledb.Array.create(uri, sparse_schema(dims, attrs, capacity=7))
    rng = np.random.default_rng(7)
    n = 200
    xs = rng.choice(np.arange(-1000, 1001), n, replace=False)
    ys = rng.random(n)
    data = {f"a{i}": values_for(t, n, i) for i, t in enumerate(FIXED_TYPES)}
    data["pair"] = np.array([(i, 2 * i) for i in range(n)], dtype="u2,u2")
    data["utf8"] = np.array(strings(n, 5), dtype=object)
    data["bytes"] = np.array([s.encode() for s in strings(n, 6)], dtype=object)
    data["n_f"] = np.ma.array(rng.random(n), mask=rng.random(n) < 0.3)
    data["n_s"] = np.array([None if i % 6 == 2 else s for i, s in enumerate(strings(n, 8))], dtype=object)
    with tiledb.open(uri, "w", timestamp=3) as A:
        A[xs, ys] = data
    check_sparse(uri, label="one fragment")
    check_sparse(uri, subarray=[(-500, 300), (0.1, 0.8)], label="subarray")


@case
def sparse_fragments_and_dedup(tmp):
    for tile_order, cell_order in (("row-major", "row-major"), ("col-major", "col-major"),
                                   ("row-major", "col-major"), ("row-major", "hilbert")):
        uri = os.path.join(tmp, f"sparse_frags_{tile_order}_{cell_order}")
        dims = [tiledb.Dim("a", domain=(0, 99), tile=8, dtype=np.uint16),
                tiledb.Dim("b", domain=(-50, 50), tile=16, dtype=np.int32)]
        tiledb.Array.create(uri, sparse_schema(dims, [tiledb.Attr("v", dtype=np.int64),
                                                      tiledb.Attr("s", dtype=str, var=True)],
                                               capacity=5, tile_order=tile_order, cell_order=cell_order))
        rng = np.random.default_rng(11)
        for k in range(4):
            n = 60
            a = rng.integers(0, 40, n).astype(np.uint16)
            b = rng.integers(-20, 20, n).astype(np.int32)
            # No duplicate coordinates within one write.
            keys = sorted(set(zip(a.tolist(), b.tolist())))
            a = np.array([p[0] for p in keys], dtype=np.uint16)
            b = np.array([p[1] for p in keys], dtype=np.int32)
            with tiledb.open(uri, "w", timestamp=20 + k) as A:
                A[a, b] = {"v": np.arange(len(a), dtype=np.int64) + 1000 * k,
                           "s": np.array([f"w{k}-{i}" for i in range(len(a))], dtype=object)}
        label = f"{tile_order}/{cell_order}"
        check_sparse(uri, label=label)
        check_sparse(uri, timestamp=21, label=f"{label} at 21")
        check_sparse(uri, timestamp=(21, 22), label=f"{label} in [21, 22]")
        check_sparse(uri, subarray=[(5, 30), (-10, 15)], label=f"{label} subarray")


@case
def sparse_duplicates(tmp):
    uri = os.path.join(tmp, "sparse_dups")
    dims = [tiledb.Dim("k", domain=(0, 20), tile=5, dtype=np.int32)]
    tiledb.Array.create(uri, sparse_schema(dims, [tiledb.Attr("v", dtype=np.float32)], allows_duplicates=True, capacity=4))
    for t in (1, 2):
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[np.array([1, 1, 5, 7, 7, 7, 19])] = np.arange(7, dtype=np.float32) + 10 * t
    check_sparse(uri, label="duplicates", unordered=True)


@case
def sparse_string_dimensions(tmp):
    uri = os.path.join(tmp, "sparse_strdim")
    dims = [tiledb.Dim("name", dtype="ascii"), tiledb.Dim("id", domain=(0, 1000), tile=100, dtype=np.int32)]
    tiledb.Array.create(uri, sparse_schema(dims, [tiledb.Attr("v", dtype=np.int32), tiledb.Attr("t", dtype=str, var=True, nullable=True)], capacity=3))
    words = ["apple", "b", "banana", "", "zeta", "a", "apples", "ab"]
    for k in range(3):
        names = [w for i, w in enumerate(words) if (i + k) % 3 != 0]
        ids = np.array([(i * 37 + k * 11) % 1000 for i in range(len(names))], dtype=np.int32)
        with tiledb.open(uri, "w", timestamp=50 + k) as A:
            A[np.array(names, dtype="S"), ids] = {"v": np.arange(len(names), dtype=np.int32) + 100 * k,
                                                  "t": np.array([None if i == 1 else f"t{k}{i}" for i in range(len(names))], dtype=object)}
    check_sparse(uri, label="string dimension")
    check_sparse(uri, timestamp=51, label="string dimension at 51")


@case
def sparse_consolidation(tmp):
    for vacuum in (False, True):
        uri = os.path.join(tmp, f"sparse_consolidated_{vacuum}")
        dims = [tiledb.Dim("x", domain=(0, 1000), tile=50, dtype=np.int64)]
        tiledb.Array.create(uri, sparse_schema(dims, [tiledb.Attr("v", dtype=np.int64), tiledb.Attr("s", dtype=str, var=True)], capacity=6))
        for k in range(5):
            xs = np.arange(k * 3, k * 3 + 20, dtype=np.int64)
            with tiledb.open(uri, "w", timestamp=100 + k) as A:
                A[xs] = {"v": xs * 10 + k, "s": np.array([f"{k}"] * len(xs), dtype=object)}
        tiledb.consolidate(uri)
        if vacuum:
            tiledb.vacuum(uri)
        check_sparse(uri, label=f"consolidated (vacuum {vacuum})")
        for ts in (101, (101, 103), (102, 102), 103):
            check_sparse(uri, timestamp=ts, label=f"consolidated at {ts} (vacuum {vacuum})")


@case
def sparse_deletes(tmp):
    uri = os.path.join(tmp, "sparse_deletes")
    dims = [tiledb.Dim("x", domain=(0, 100), tile=10, dtype=np.int64)]
    tiledb.Array.create(uri, sparse_schema(dims, [tiledb.Attr("v", dtype=np.int64)]))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.arange(10)] = np.arange(10) * 2
    with tiledb.open(uri, "d", timestamp=2) as A:
        A.query(cond="v < 6").submit()
    check_sparse(uri, label="after the delete")
    check_sparse(uri, timestamp=1, label="before the delete")
    with tiledb.open(uri, "w", timestamp=3) as A:
        A[np.arange(20, 25)] = np.arange(5)
    check_sparse(uri, label="a write after the delete")
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.purge_deleted_cells": "true"}))
    tiledb.vacuum(uri)
    # The consolidated fragment starts before the delete, so TileDB evaluates the condition
    # on it again (timestamped).
    check_sparse(uri, label="purged by consolidation")
    check_sparse(uri, timestamp=2, label="purged, at the delete")


@case
def dense_dimension_labels(tmp):
    # The attribute reads as TileDB reads it; the label itself is refused as unsupported.
    uri = os.path.join(tmp, "dense_labels")
    dim = tiledb.Dim("x", domain=(0, 9), tile=10, dtype=np.int64)
    labels = {0: {"xl": dim.create_label_schema(order="increasing", dtype=np.float64)}}
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=tiledb.Domain(dim), dim_labels=labels,
                                                attrs=[tiledb.Attr("v", dtype=np.int64)]))
    with tiledb.open(uri, "w") as A:
        A[0:10] = {"v": np.arange(10), "xl": np.arange(10) / 2.0}
    check_dense(uri, label="labelled")
    msg = expect_error("dimension label", 5, lambda: read_cells(tdbfilter.Array(uri), "xl"))
    assert "dimension label" in msg, msg


@case
def sparse_encrypted_and_evolution(tmp):
    uri = os.path.join(tmp, "sparse_encrypted")
    ctx = ctx_for(KEY)
    dims = [tiledb.Dim("x", domain=(0, 100), tile=10, dtype=np.int32, ctx=ctx)]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=tiledb.Domain(*dims, ctx=ctx), sparse=True, ctx=ctx,
                                                attrs=[tiledb.Attr("v", dtype=np.int32, ctx=ctx)]), ctx=ctx)
    with tiledb.open(uri, "w", ctx=ctx, timestamp=1) as A:
        A[np.array([1, 5, 9])] = np.array([7, 8, 9], dtype=np.int32)
    with tiledb.open(uri, "w", ctx=ctx, timestamp=2) as A:
        A[np.array([5, 50])] = np.array([70, 80], dtype=np.int32)
    check_sparse(uri, key=KEY, label="encrypted")
    uri = os.path.join(tmp, "sparse_evolution")
    tiledb.Array.create(uri, sparse_schema([tiledb.Dim("x", domain=(0, 100), tile=10, dtype=np.int32)], [tiledb.Attr("v", dtype=np.int32)]))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.array([1, 2, 3])] = np.array([1, 2, 3], dtype=np.int32)
    se = tiledb.ArraySchemaEvolution()
    se.add_attribute(tiledb.Attr("w", dtype=np.float32, nullable=True))
    se.array_evolve(uri)
    with tiledb.open(uri, "w") as A:
        A[np.array([3, 4])] = {"v": np.array([30, 40], dtype=np.int32), "w": np.array([0.5, 1.5], dtype=np.float32)}
    check_sparse(uri, label="evolved sparse")


# --------------------------------------------------------------------------------------------
# The CLI: tdbf array info / cat / verify
# --------------------------------------------------------------------------------------------

TDBF = None


def tdbf(*args, expect=0):
    import subprocess
    r = subprocess.run([TDBF, "array", *args], capture_output=True, text=True)
    CHECKS[0] += 1
    if r.returncode != expect:
        raise Mismatch(f"tdbf array {' '.join(args)}: exit {r.returncode} (expected {expect}): {r.stderr}")
    return r.stdout


@case
def cli_info_cat_and_metadata(tmp):
    import json
    uri = os.path.join(tmp, "cli_meta")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.float64),
                                                                    tiledb.Attr("s", dtype=str, var=True, nullable=True)]))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[3:9] = {"a": np.array([0.5, -1, np.nan, 1e300, 3, 4]), "s": np.array(["x", None, "", "a,b", "q\"", "z"], dtype=object)}
        A.meta["int"] = 7
        A.meta["floats"] = (1.5, 2.5)
        A.meta["text"] = "héllo"
        A.meta["gone"] = 1
    with tiledb.open(uri, "w", timestamp=2) as A:
        A.meta["int"] = 8
        del A.meta["gone"]
    info = json.loads(tdbf("info", uri, "--json"))
    with tiledb.open(uri) as A:
        meta = dict(A.meta)
        ned = A.nonempty_domain()
    CHECKS[0] += 1
    ours = {k: v["value"] for k, v in info["metadata"].items()}
    want = {k: (list(v) if isinstance(v, tuple) else v) for k, v in meta.items()}
    if ours != want:
        raise Mismatch(f"metadata {ours} vs {want}")
    if [tuple(r) for r in info["non_empty_domain"]] != [tuple(int(x) for x in r) for r in ned]:
        raise Mismatch(f"non-empty domain {info['non_empty_domain']} vs {ned}")
    fi = tiledb.array_fragments(uri)
    if [f["cell_num"] for f in info["fragments"]] != list(fi.cell_num):
        raise Mismatch("fragment cell counts")
    if [a["name"] for a in info["schema"]["attributes"]] != ["a", "s"]:
        raise Mismatch("attribute names")
    cat = json.loads(tdbf("cat", uri, "--format", "json", "--subarray", "2:9"))
    with tiledb.open(uri) as A:
        theirs = A[2:10]
    CHECKS[0] += 1
    a = [float(x) if not isinstance(x, str) else float(x.replace("inf", "Infinity")) for x in cat["fields"]["a"]]
    if not np.array_equal(np.array(a), theirs["a"], equal_nan=True):
        raise Mismatch(f"cat a {a} vs {theirs['a']}")
    valid = [v for v in cat["validity"]["s"]]
    if valid != [0 if m else 1 for m in np.ma.getmaskarray(theirs["s"])]:
        raise Mismatch(f"cat s validity {valid}")
    csv = tdbf("cat", uri, "--field", "s", "--field", "d").splitlines()
    if csv[0] != "s,d" or len(csv) != 7 or csv[4] != '"a,b",6':
        raise Mismatch(f"csv {csv}")
    raw = subprocess_bytes([TDBF, "array", "cat", uri, "--field", "a", "--format", "raw"])
    if raw != np.asarray(theirs["a"][1:7]).tobytes():
        raise Mismatch("raw bytes of a")
    tdbf("info", uri)


def subprocess_bytes(cmd):
    import subprocess
    CHECKS[0] += 1
    return subprocess.run(cmd, capture_output=True, check=True).stdout


@case
def cli_verify_damage(tmp):
    def make(name):
        uri = os.path.join(tmp, name)
        dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9999), tile=1000, dtype=np.int64))
        f = tiledb.FilterList([tiledb.ChecksumSHA256Filter(), tiledb.ZstdFilter()])
        tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[
            tiledb.Attr("a", dtype=np.int64, filters=f), tiledb.Attr("n", dtype=np.int32, nullable=True)]))
        for t in (1, 2):
            with tiledb.open(uri, "w", timestamp=t) as A:
                A[t * 1000:t * 1000 + 3000] = {"a": np.arange(3000) * t,
                                               "n": np.ma.array(np.arange(3000, dtype=np.int32), mask=np.arange(3000) % 5 == 0)}
        frag = sorted(os.listdir(os.path.join(uri, "__fragments")))[1]
        return uri, os.path.join(uri, "__fragments", frag), frag
    uri, fdir, _ = make("whole")
    out = tdbf("verify", uri)
    if "the array is whole" not in out:
        raise Mismatch(out)
    # A flipped byte inside a checksummed tile.
    uri, fdir, frag = make("flipped")
    path = os.path.join(fdir, "a0.tdb")
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0x40
    open(path, "wb").write(data)
    out = tdbf("verify", uri, expect=1)
    bad = [l for l in out.splitlines() if l.startswith(f"{frag}/a/")]
    if len(bad) != 1:
        raise Mismatch(f"flipped byte: {out}")
    # A truncated data file.
    uri, fdir, frag = make("truncated")
    path = os.path.join(fdir, "a1.tdb")
    os.truncate(path, os.path.getsize(path) // 2)
    out = tdbf("verify", uri, expect=1)
    if f"{frag}/n:" not in out or f"{frag}/n/" not in out:
        raise Mismatch(f"truncated file: {out}")
    # A missing data file.
    uri, fdir, frag = make("missing")
    os.remove(os.path.join(fdir, "a1_validity.tdb"))
    out = tdbf("verify", uri, expect=1)
    if f"{frag}/n:" not in out:
        raise Mismatch(f"missing file: {out}")
    # Missing fragment metadata.
    uri, fdir, frag = make("nometa")
    os.remove(os.path.join(fdir, "__fragment_metadata.tdb"))
    out = tdbf("verify", uri, expect=1)
    if f"{frag}/__fragment_metadata.tdb:" not in out:
        raise Mismatch(f"missing metadata: {out}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=None)
    ap.add_argument("--keep", default=None)
    ap.add_argument("-k", default=None)
    ap.add_argument("--tdbf", default=None)
    args = ap.parse_args()
    global TDBF
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    TDBF = args.tdbf or os.path.join(root, "target", "release", "tdbf")
    if args.lib:
        os.environ["TDBFILTER_LIBRARY"] = os.path.abspath(args.lib)
    from tdbfilter.pipeline import lib
    print(f"tdbfilter package {os.path.dirname(tdbfilter.__file__)}, library {lib().path} "
          f"{tdbfilter.version()}")
    tmp = args.keep or tempfile.mkdtemp(prefix="tdbf_arrays_")
    os.makedirs(tmp, exist_ok=True)
    failures = 0
    for c in CASES:
        if args.k and args.k not in c.__name__:
            continue
        d = os.path.join(tmp, c.__name__)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        try:
            c(d)
            print(f"ok   {c.__name__}")
        except Exception:
            failures += 1
            print(f"FAIL {c.__name__}")
            traceback.print_exc()
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{CHECKS[0]} comparisons, {failures} failing cases")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
