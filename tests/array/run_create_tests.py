#!/usr/bin/env python3
"""Differential tests of array creation (`tdbf array create`, src/array/write/create.rs and
src/array/schema_json.rs) against TileDB-Py 0.36.1 (libtiledb 2.30).

Clone cases: TileDB-Py creates array T; `tdbf array info T --json` (the whole output, or its
`schema` member) goes to `tdbf array create O --schema`; then
  * O has T's folders (`__schema/__enumerations`, `__commits`, `__fragments`, `__meta`,
    `__fragment_meta`, `__labels`) and as many schema and enumeration files;
  * the schema payloads (the generic tiles decoded, decrypted for encrypted arrays) are
    byte-identical, and so are the enumeration payloads, once TileDB's random enumeration
    file names are put in place of ours; unencrypted schema files of schemas without
    enumerations are identical files; encrypted generic tiles have TileDB's header;
  * TileDB-Py opens O (with the key) and its schema equals T's (`==` and TileDB's own dump
    text), enumeration values included; encrypted arrays do not open without the key.
JSON cases: hand-written schema JSON created by us, compared the same way with the TileDB-Py
schema built from the same description (TileDB's defaults for what the JSON leaves out).
Refusal cases: descriptions TileDB refuses: TileDB-Py must refuse them with the reason given,
and `tdbf array create` must refuse them with the same reason, leaving no folder behind.

Usage: run_create_tests.py [--tdbf path/to/tdbf] [--keep DIR] [-k substring]
                           [--save-fixtures DIR]   (TileDB's schema files of the clone cases,
                                                    for tests/schema_write.rs)
"""

import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import warnings

import numpy as np
import tiledb
import tiledb.libtiledb as lt

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compat"))
import aes_ref  # noqa: E402

warnings.simplefilter("ignore", DeprecationWarning)

KEY = "0123456789abcdeF0123456789abcdeF"
TDBF = None
CLONES, JSONS, REFUSALS = [], [], []
CHECKS = [0]
TABLE = {}  # kind -> [equal, total]


class Mismatch(AssertionError):
    pass


def check(cond, msg):
    CHECKS[0] += 1
    if not cond:
        raise Mismatch(msg)


def ctx_for(key=None):
    if key is None:
        return tiledb.Ctx()
    return tiledb.Ctx({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key})


def tdbf(*args, stdin=None):
    r = subprocess.run([TDBF, "array", *args], capture_output=True, text=True, input=stdin)
    return r.returncode, r.stdout, r.stderr


# ---------------------------------------------------------------------------------------------
# Generic tiles (docs/FORMAT.md §6): header, chunks, [GZIP] or [GZIP, AES-256-GCM]
# ---------------------------------------------------------------------------------------------

def read_generic_tile(data, key=None):
    """(header bytes incl. pipeline, payload) of a generic tile, decrypted with `key`, through
    the independent Python model in tests/compat/aes_ref.py; deviations from TileDB's
    generic-tile layout fail."""
    ref = aes_ref.read_generic_tile(data, key.encode() if key else None)
    check(ref.size == len(data), f"generic tile of {ref.size} bytes in a file of {len(data)}")
    check(not ref.anomalies, f"generic tile: {ref.anomalies}")
    return data[: 34 + len(ref.pipeline_bytes)], ref.payload


def schema_file(uri):
    files = [f for f in os.listdir(os.path.join(uri, "__schema")) if f != "__enumerations"]
    check(len(files) == 1, f"{uri}: {len(files)} schema files")
    return os.path.join(uri, "__schema", files[0])


def enumeration_files(uri, key):
    """{enumeration name: (file name, file bytes, payload)}."""
    d = os.path.join(uri, "__schema", "__enumerations")
    out = {}
    for f in sorted(os.listdir(d)):
        data = open(os.path.join(d, f), "rb").read()
        _, payload = read_generic_tile(data, key)
        (n,) = struct.unpack_from("<I", payload, 4)
        name = payload[8: 8 + n].decode()
        (m,) = struct.unpack_from("<I", payload, 8 + n)
        path = payload[12 + n: 12 + n + m].decode()
        check(path == f, f"enumeration file {f} names itself {path}")
        out[name] = (f, data, payload)
    return out


def folders(uri):
    out = {}
    for root, dirs, files in os.walk(uri):
        out[os.path.relpath(root, uri)] = len(files)
    return out


# ---------------------------------------------------------------------------------------------
# Comparison of a TileDB-created array T and ours O
# ---------------------------------------------------------------------------------------------

def compare_arrays(t_uri, o_uri, key, label, before_ms=None, after_ms=None):
    check(folders(t_uri) == folders(o_uri),
          f"{label}: folders {folders(o_uri)}, TileDB {folders(t_uri)}")
    t_file, o_file = schema_file(t_uri), schema_file(o_uri)
    name = os.path.basename(o_file)
    m = re.fullmatch(r"__(\d+)_(\d+)_([0-9a-f]{32})", name)
    check(m is not None and m.group(1) == m.group(2), f"{label}: schema file name {name}")
    if before_ms is not None:
        check(before_ms <= int(m.group(1)) <= after_ms,
              f"{label}: schema timestamp {m.group(1)} outside [{before_ms}, {after_ms}]")
    t_bytes, o_bytes = open(t_file, "rb").read(), open(o_file, "rb").read()
    t_head, t_payload = read_generic_tile(t_bytes, key)
    o_head, o_payload = read_generic_tile(o_bytes, key)
    t_enums, o_enums = enumeration_files(t_uri, key), enumeration_files(o_uri, key)
    check(sorted(t_enums) == sorted(o_enums), f"{label}: enumerations {sorted(o_enums)}, TileDB {sorted(t_enums)}")
    for n, (o_name, _, o_ep) in o_enums.items():
        check(re.fullmatch(r"__[0-9a-f]{32}_0", o_name) is not None, f"{label}: enumeration file {o_name}")
        t_name, _, t_ep = t_enums[n]
        o_payload = o_payload.replace(o_name.encode(), t_name.encode())
        check(o_ep.replace(o_name.encode(), t_name.encode()) == t_ep,
              f"{label}: enumeration {n} payload differs:\n ours   {o_ep.hex()}\n TileDB {t_ep.hex()}")
    check(o_payload == t_payload,
          f"{label}: schema payload differs:\n ours   {o_payload.hex()}\n TileDB {t_payload.hex()}")
    if not t_enums:
        # Enumeration file names are random, so the compressed sizes in the header differ.
        check(t_head == o_head, f"{label}: generic tile header {o_head.hex()}, TileDB {t_head.hex()}")
    if key is None and not t_enums:
        check(t_bytes == o_bytes, f"{label}: schema files differ although the payloads are equal")
    ctx = ctx_for(key)
    ts, os_ = tiledb.ArraySchema.load(t_uri, ctx=ctx), tiledb.ArraySchema.load(o_uri, ctx=ctx)
    if py_comparable(ts):
        equal = ts == os_
    else:
        # TileDB-Py's `==` fails on ANY, GEOM_*, UTF16/32, UCS2/4 (no numpy type) and crashes
        # on var-size numeric fill values: compare what its pybind layer reports, attribute by
        # attribute (TileDB's dump below compares the rest).
        equal = ts.nattr == os_.nattr and all(
            (x._name, x._tiledb_dtype, x._ncell, x._nullable) ==
            (y._name, y._tiledb_dtype, y._ncell, y._nullable)
            for x, y in ((ts.attr(i), os_.attr(i)) for i in range(ts.nattr)))
    if not equal:
        raise Mismatch(f"{label}: TileDB-Py schemas differ:\n{dump(os_)}\n{dump(ts)}")
    check(dump(ts) == dump(os_), f"{label}: TileDB's dumps differ")
    check(ts.version == os_.version == 22, f"{label}: versions {os_.version}, {ts.version}")
    if t_enums:
        with tiledb.open(t_uri, ctx=ctx) as A, tiledb.open(o_uri, ctx=ctx) as B:
            for n in t_enums:
                ea, eb = A.enum(n), B.enum(n)
                check((ea.dtype, ea.ordered, ea.cell_val_num) == (eb.dtype, eb.ordered, eb.cell_val_num),
                      f"{label}: enumeration {n} type")
                try:
                    va = ea.values()
                except UnicodeDecodeError:
                    # TileDB-Py cannot show byte values that are not UTF-8; the payloads,
                    # compared above, hold them.
                    continue
                vb = eb.values()
                check(len(va) == len(vb) and all(x == y or (x != x and y != y) for x, y in zip(va, vb)),
                      f"{label}: enumeration {n} values {vb}, TileDB {va}")
    if key is not None:
        try:
            tiledb.ArraySchema.load(o_uri)
        except tiledb.TileDBError:
            CHECKS[0] += 1
        else:
            raise Mismatch(f"{label}: our encrypted array opens without the key")


def dump(s):
    """TileDB's dump of a schema, as bytes (fill values may not be UTF-8), without the
    address TileDB 2.30 prints for a current domain's NDRectangle."""
    try:
        text = s._dump().encode()
    except UnicodeDecodeError as e:
        text = bytes(e.object)
    return re.sub(rb"(?m)^0x[0-9a-f]+$", b"<pointer>", text)


PY_TYPES = {getattr(lt.DataType, n) for n in ["ANY", "GEOM_WKB", "GEOM_WKT", "STRING_UTF16", "STRING_UTF32",
                                              "STRING_UCS2", "STRING_UCS4"]}
TEXT_TYPES = {lt.DataType.CHAR, lt.DataType.STRING_ASCII, lt.DataType.STRING_UTF8, lt.DataType.BLOB}


def py_comparable(s):
    """Whether TileDB-Py's ArraySchema `==` works on `s`."""
    for i in range(s.nattr):
        a = s.attr(i)
        if a._tiledb_dtype in PY_TYPES:
            return False
        if a._ncell == lt.TILEDB_VAR_NUM() and a._tiledb_dtype not in TEXT_TYPES:
            return False
    return True


def count(kind, ok):
    t = TABLE.setdefault(kind, [0, 0])
    t[0] += 1 if ok else 0
    t[1] += 1


# ---------------------------------------------------------------------------------------------
# Schema builders
# ---------------------------------------------------------------------------------------------

def raw_attr(name, dt, ncell=1, filters=None, fill=None, nullable=False):
    """An attribute of any TileDB datatype through TileDB-Py's pybind layer."""
    a = tiledb.Attr.__new__(tiledb.Attr)
    lt.Attribute.__init__(a, tiledb.default_ctx(), name, dt)
    a._ncell = ncell
    if nullable:
        a._nullable = True
    if filters is not None:
        a._filters = tiledb.FilterList(filters)
    if fill is not None:
        a._fill = np.frombuffer(fill, dtype=np.uint8)
    return a


def dim(name, domain, tile, dtype, **kw):
    return tiledb.Dim(name, domain=domain, tile=tile, dtype=dtype, **kw)


def schema(dims, attrs, **kw):
    return tiledb.ArraySchema(domain=tiledb.Domain(*dims), attrs=attrs, **kw)


def dense1(attrs, **kw):
    return schema([dim("d", (1, 100), 10, np.int32)], attrs, **kw)


def sparse1(attrs, **kw):
    return schema([dim("d", (0, 1000), 100, np.int64)], attrs, sparse=True, **kw)


def clone(key=None, member=False, fixture=True):
    def reg(fn):
        CLONES.append(dict(name=fn.__name__, build=fn, key=key, member=member, fixture=fixture))
        return fn
    return reg


NUMERIC = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
           np.float32, np.float64]
DATETIMES = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"]


@clone()
def dense_int32():
    return dense1([tiledb.Attr("a", dtype=np.int32)])


@clone(member=True)
def dense_every_numeric_type():
    return dense1([tiledb.Attr(f"a{i}", dtype=t) for i, t in enumerate(NUMERIC)]
                  + [tiledb.Attr("b", dtype=np.bool_), tiledb.Attr("c", dtype="S1")])


@clone()
def dense_datetime_and_time_types():
    return dense1([tiledb.Attr(f"dt_{u}", dtype=f"datetime64[{u}]") for u in DATETIMES]
                  + [tiledb.Attr(f"td_{u}", dtype=f"timedelta64[{u}]") for u in DATETIMES[4:]])


@clone()
def dense_other_datatypes():
    dt = lt.DataType
    return dense1([raw_attr("blob", dt.BLOB, 3), raw_attr("any", dt.ANY, lt.TILEDB_VAR_NUM()),
                   raw_attr("wkb", dt.GEOM_WKB, lt.TILEDB_VAR_NUM()),
                   raw_attr("wkt", dt.GEOM_WKT, lt.TILEDB_VAR_NUM()),
                   raw_attr("u16", dt.STRING_UTF16, 2), raw_attr("u32", dt.STRING_UTF32, lt.TILEDB_VAR_NUM()),
                   raw_attr("ucs2", dt.STRING_UCS2, 1), raw_attr("ucs4", dt.STRING_UCS4, 4),
                   raw_attr("ascii3", dt.STRING_ASCII, 3), raw_attr("char_var", dt.CHAR, lt.TILEDB_VAR_NUM())])


@clone(member=True)
def dense_var_types():
    return dense1([tiledb.Attr("bytes", dtype=bytes), tiledb.Attr("str", dtype=str),
                   tiledb.Attr("ascii", dtype="ascii"),
                   tiledb.Attr("ints", dtype=np.int32, var=True),
                   tiledb.Attr("floats", dtype=np.float64, var=True)])


@clone()
def dense_nullable():
    return dense1([tiledb.Attr("i", dtype=np.int32, nullable=True),
                   tiledb.Attr("s", dtype=str, nullable=True),
                   tiledb.Attr("f", dtype=np.float64, nullable=True, fill=2.5),
                   tiledb.Attr("b", dtype=bytes, nullable=True)])


@clone()
def dense_multi_value_cells():
    dt = lt.DataType
    return dense1([raw_attr("i3", dt.INT32, 3), raw_attr("f2", dt.FLOAT64, 2),
                   raw_attr("u8x5", dt.UINT8, 5), tiledb.Attr("cplx", dtype=np.complex64),
                   tiledb.Attr("cplx128", dtype=np.complex128), tiledb.Attr("s4", dtype="S4")])


@clone()
def dense_fill_values():
    return dense1([tiledb.Attr("i", dtype=np.int16, fill=-7),
                   tiledb.Attr("u", dtype=np.uint64, fill=2**64 - 2),
                   tiledb.Attr("f", dtype=np.float32, fill=0.1),
                   tiledb.Attr("g", dtype=np.float64, fill=-np.inf),
                   tiledb.Attr("h", dtype=np.float64, fill=1e-300),
                   tiledb.Attr("s", dtype=str, fill="héllo"),
                   tiledb.Attr("a", dtype="ascii", fill="abc"),
                   tiledb.Attr("bb", dtype=bytes, fill=b"\x80\xff\x00"),
                   tiledb.Attr("s3", dtype="S3", fill=b"xyz"),
                   tiledb.Attr("t", dtype="datetime64[ms]", fill=np.datetime64(1234567, "ms")),
                   tiledb.Attr("b", dtype=np.bool_, fill=True),
                   tiledb.Attr("c", dtype=np.complex64, fill=1.5 - 2j),
                   tiledb.Attr("n", dtype=np.int32, nullable=True, fill=42),
                   raw_attr("blob", lt.DataType.BLOB, 2, fill=b"\x01\xfe")])


@clone()
def dense_2d_col_major():
    return schema([dim("r", (-50, 49), 10, np.int64), dim("c", (0, 1 << 40), 1 << 20, np.int64)],
                  [tiledb.Attr("a", dtype=np.float32)], tile_order="col-major", cell_order="col-major")


@clone()
def dense_3d_mixed_orders():
    return schema([dim("x", (0, 9), 3, np.uint16), dim("y", (1, 7), 7, np.uint16),
                   dim("z", (100, 60000), 1000, np.uint16)],
                  [tiledb.Attr("a", dtype=np.int8)], tile_order="row-major", cell_order="col-major")


@clone()
def dense_every_integer_dimension_type():
    out = []
    for t in [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]:
        info = np.iinfo(t)
        out.append(schema([dim("d", (info.min + 1, info.max), 3, t)], [tiledb.Attr("a", dtype=np.int32)]))
    return out


@clone()
def dense_null_extents_fill_the_range():
    return [schema([dim("d", (-100, 100), None, np.int8)], [tiledb.Attr("a", dtype=np.int32)]),
            schema([dim("d", (0, 99), None, np.int32), dim("e", (5, 5), None, np.int32)],
                   [tiledb.Attr("a", dtype=np.int32)])]


@clone()
def dense_datetime_dimension():
    return schema([dim("t", (np.datetime64("2020-01-01"), np.datetime64("2021-01-01")),
                       np.timedelta64(30, "D"), "datetime64[D]")], [tiledb.Attr("a", dtype=np.int32)])


def filter_families():
    F = tiledb
    return [
        ("gzip9", np.int32, [F.GzipFilter(9)]),
        ("zstd22", np.int64, [F.ZstdFilter(22)]),
        ("zstd_neg", np.int64, [F.ZstdFilter(-5)]),
        ("lz4", np.float32, [F.LZ4Filter(3)]),
        ("bzip2", np.uint8, [F.Bzip2Filter(9)]),
        ("rle", np.int16, [F.RleFilter()]),
        ("rle_str", str, [F.RleFilter(), F.ZstdFilter()]),
        ("dict_str", "ascii", [F.DictionaryFilter(), F.ZstdFilter(1)]),
        ("double_delta", np.int64, [F.DoubleDeltaFilter()]),
        ("double_delta_reinterp", np.float64, [F.DoubleDeltaFilter(reinterp_dtype=np.int64)]),
        ("delta", np.uint32, [F.DeltaFilter()]),
        ("delta_reinterp", np.float32, [F.DeltaFilter(reinterp_dtype=np.int32), F.ZstdFilter()]),
        ("bwr", np.int32, [F.BitWidthReductionFilter(window=128)]),
        ("positive_delta", np.uint64, [F.PositiveDeltaFilter(window=512)]),
        ("bitshuffle", np.float64, [F.BitShuffleFilter(), F.LZ4Filter()]),
        ("byteshuffle", np.float64, [F.ByteShuffleFilter(), F.ZstdFilter(3)]),
        ("md5", np.int8, [F.ChecksumMD5Filter()]),
        ("sha256", bytes, [F.ChecksumSHA256Filter(), F.GzipFilter()]),
        ("scale_float", np.float64, [F.FloatScaleFilter(0.25, -3.5, 4), F.ZstdFilter()]),
        ("scale_float8", np.float32, [F.FloatScaleFilter(1e-3, 100.0, 8)]),
        ("xor", np.float32, [F.XORFilter(), F.ZstdFilter()]),
        ("noop", np.int32, [F.NoOpFilter()]),
        ("chain", np.int64, [F.PositiveDeltaFilter(), F.BitWidthReductionFilter(), F.ByteShuffleFilter(),
                             F.ZstdFilter(7), F.ChecksumSHA256Filter()]),
    ]


@clone(member=True)
def dense_attribute_filters():
    attrs = [tiledb.Attr(n, dtype=t, filters=tiledb.FilterList(f)) for n, t, f in filter_families()]
    attrs.append(tiledb.Attr("chunked", dtype=np.int32, filters=tiledb.FilterList([tiledb.ZstdFilter()], chunksize=4096)))
    attrs.append(tiledb.Attr("chunked_empty", dtype=np.int32, filters=tiledb.FilterList([], chunksize=1000)))
    return dense1(attrs)


@clone()
def dense_webp():
    return schema([dim("y", (1, 64), 16, np.uint32), dim("x", (1, 48), 48, np.uint32)],
                  [tiledb.Attr("rgb", dtype=np.uint8,
                               filters=[tiledb.WebpFilter(lt.WebpInputFormat.WEBP_RGB, 75.0, False)])])


@clone()
def schema_wide_filters():
    s = schema([dim("d", (0, 999), 100, np.int64), dim("e", (0, 9), 2, np.int64)],
               [tiledb.Attr("s", dtype=str, nullable=True)], sparse=True,
               offsets_filters=[tiledb.PositiveDeltaFilter(), tiledb.LZ4Filter(2)],
               validity_filters=tiledb.FilterList([tiledb.BitWidthReductionFilter(), tiledb.GzipFilter(3)], chunksize=512))
    s._coords_filters = tiledb.FilterList([tiledb.DoubleDeltaFilter(), tiledb.Bzip2Filter(5)])
    return s


@clone()
def dimension_filters():
    s = schema([dim("d", (0, 999), 100, np.int64, filters=[tiledb.DeltaFilter(), tiledb.ZstdFilter(2)]),
                dim("e", (0, 9), 2, np.int64, filters=[tiledb.ZstdFilter()]),
                dim("f", (0, 9), 2, np.int64),
                dim("s", None, None, "ascii", filters=[tiledb.RleFilter(), tiledb.GzipFilter()])],
               [tiledb.Attr("a", dtype=np.int32)], sparse=True)
    return s


@clone()
def coords_filters_deprecated_route():
    # TileDB-Py puts deprecated coords_filters on each dimension and leaves the schema's empty.
    return schema([dim("d", (0, 99), 10, np.int32), dim("e", (0, 99), 10, np.int32)],
                  [tiledb.Attr("a", dtype=np.int32)], sparse=True,
                  coords_filters=[tiledb.ByteShuffleFilter(), tiledb.LZ4Filter()])


@clone(member=True)
def sparse_2d_capacity_dups():
    return schema([dim("x", (-1000, 1000), 50, np.int32), dim("y", (0, 2**62), 2**20, np.uint64)],
                  [tiledb.Attr("a", dtype=np.float64), tiledb.Attr("s", dtype=str)],
                  sparse=True, capacity=7, allows_duplicates=True,
                  tile_order="col-major", cell_order="col-major")


@clone()
def sparse_float_dimensions():
    return schema([dim("x", (-1.5, 1e10), 1e6, np.float64), dim("y", (0.5, 10.25), None, np.float32),
                   dim("z", (-1, 1), 0.125, np.float32)],
                  [tiledb.Attr("a", dtype=np.int32)], sparse=True)


@clone()
def sparse_string_dimensions():
    return schema([dim("s", None, None, "ascii"), dim("i", (0, 99), 10, np.int16),
                   dim("t", None, None, np.bytes_)],
                  [tiledb.Attr("a", dtype=np.int32)], sparse=True, capacity=3)


@clone()
def sparse_hilbert():
    return [schema([dim("x", (0, 1000), None, np.int64), dim("y", (-5.0, 5.0), None, np.float64)],
                   [tiledb.Attr("a", dtype=np.int32)], sparse=True, cell_order="hilbert"),
            schema([dim("x", (0, 1000), 100, np.uint32), dim("s", None, None, "ascii")],
                   [tiledb.Attr("a", dtype=np.int32)], sparse=True, cell_order="hilbert", tile_order="col-major")]


@clone()
def sparse_datetime_dimensions():
    return schema([dim("t", (np.datetime64(0, "ns"), np.datetime64(10**18, "ns")), np.timedelta64(10**12, "ns"),
                       "datetime64[ns]"),
                   dim("h", (np.datetime64(-100, "h"), np.datetime64(100, "h")), np.timedelta64(7, "h"),
                       "datetime64[h]")],
                  [tiledb.Attr("a", dtype="timedelta64[us]")], sparse=True)


@clone()
def sparse_global_order_cells():
    # TileDB 2.30 accepts a global-order cell order.
    return schema([dim("x", (0, 99), 10, np.int64)], [tiledb.Attr("a", dtype=np.int32)],
                  sparse=True, cell_order="global")


@clone()
def anonymous_and_odd_names():
    return schema([dim("__d", (0, 9), 10, np.int64),
                   dim("ünï cødé", (0, 9), 10, np.int64)],
                  [tiledb.Attr("", dtype=np.int32), tiledb.Attr("a b,c\"d", dtype=np.int32)], sparse=True)


def enums():
    return [tiledb.Enumeration("colors", False, ["red", "green", "", "blue"]),
            tiledb.Enumeration("sizes", True, np.array([10, 20, 5], dtype=np.int16)),
            tiledb.Enumeration("ratios", False, np.array([0.5, -1.25], dtype=np.float64)),
            tiledb.Enumeration("flags", True, [b"\x00\xff", b"yes"]),
            tiledb.Enumeration("empty", False, dtype=np.int32)]


@clone(member=True)
def enumerations():
    return schema([dim("d", (0, 99), 10, np.int32)],
                  [tiledb.Attr("c", dtype=np.uint8, enum_label="colors"),
                   tiledb.Attr("z", dtype=np.int16, enum_label="sizes", nullable=True),
                   tiledb.Attr("r", dtype=np.int64, enum_label="ratios"),
                   tiledb.Attr("f", dtype=np.uint32, enum_label="flags"),
                   tiledb.Attr("e", dtype=np.int32, enum_label="empty"),
                   tiledb.Attr("plain", dtype=np.int32)],
                  enums=enums())


@clone()
def enumeration_single():
    return sparse1([tiledb.Attr("c", dtype=np.int8, enum_label="e")],
                   enums=[tiledb.Enumeration("e", True, ["lo", "mid", "hi"])])


def current_domain_schema():
    ctx = tiledb.default_ctx()
    dom = tiledb.Domain(dim("x", (0, 999), 10, np.int32), dim("s", None, None, "ascii"),
                        dim("f", (-10.0, 10.0), 1.0, np.float64))
    s = tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.int32)], sparse=True)
    nd = tiledb.NDRectangle(ctx, dom)
    nd.set_range("x", 3, 100)
    nd.set_range("s", "aa", "zz")
    nd.set_range("f", -1.5, 2.25)
    cd = tiledb.CurrentDomain(ctx)
    cd.set_ndrectangle(nd)
    s.set_current_domain(cd)
    return s


@clone()
def current_domain():
    return current_domain_schema()


@clone(key=KEY)
def encrypted_dense():
    return schema([dim("r", (0, 99), 10, np.int32), dim("c", (0, 99), 10, np.int32)],
                  [tiledb.Attr("a", dtype=np.float64, filters=[tiledb.ZstdFilter()]),
                   tiledb.Attr("s", dtype=str, nullable=True)])


@clone(key=KEY, member=True)
def encrypted_sparse_with_enumerations():
    return schema([dim("s", None, None, "ascii"), dim("i", (0, 99), 10, np.int64)],
                  [tiledb.Attr("c", dtype=np.uint8, enum_label="colors"), tiledb.Attr("v", dtype=np.int32)],
                  sparse=True, allows_duplicates=True, enums=[enums()[0]])


# ---------------------------------------------------------------------------------------------
# Hand-written JSON: we create from the JSON, TileDB-Py from the same description
# ---------------------------------------------------------------------------------------------

def json_case(name, description, build, key=None):
    JSONS.append(dict(name=name, json=description, build=build, key=key))


D100 = {"name": "d", "type": "INT32", "domain": [1, 100], "tile": 10}
json_case("minimal_dense", {"dimensions": [D100], "attributes": [{"name": "a", "type": "INT32"}]},
          lambda: dense1([tiledb.Attr("a", dtype=np.int32)]))
json_case("minimal_sparse_defaults", {
    "sparse": True,
    "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 1000], "tile": 100},
                   {"name": "s", "type": "STRING_ASCII"}],
    "attributes": [{"name": "v", "type": "STRING_UTF8", "cell_val_num": "var"},
                   {"name": "f", "type": "FLOAT32", "nullable": True}]},
    lambda: schema([dim("x", (0, 1000), 100, np.int64), dim("s", None, None, "ascii")],
                   [tiledb.Attr("v", dtype=str), tiledb.Attr("f", dtype=np.float32, nullable=True)], sparse=True))
json_case("null_extents_and_fills", {
    "dimensions": [{"name": "d", "type": "UINT16", "domain": [0, 999]}],
    "attributes": [{"name": "a", "type": "FLOAT64", "fill": "-inf"},
                   {"name": "b", "type": "CHAR", "cell_val_num": 3, "fill": "xyz"},
                   {"name": "c", "type": "UINT8", "cell_val_num": 2, "fill": [1, 255]},
                   {"name": "e", "type": "BOOL", "fill": 1}]},
    lambda: schema([dim("d", (0, 999), None, np.uint16)],
                   [tiledb.Attr("a", dtype=np.float64, fill=-np.inf), tiledb.Attr("b", dtype="S3", fill=b"xyz"),
                    raw_attr("c", lt.DataType.UINT8, 2, fill=b"\x01\xff"), tiledb.Attr("e", dtype=np.bool_, fill=True)]))
json_case("filters_and_orders", {
    "sparse": True, "cell_order": "hilbert", "tile_order": "col-major", "capacity": 500,
    "allows_duplicates": True, "offsets_filters": "bitshuffle,lz4:-1",
    "validity_filters": ["none"],
    "dimensions": [{"name": "x", "type": "FLOAT64", "domain": [-1, 1], "filters": "zstd:9"},
                   {"name": "y", "type": "UINT32", "domain": [0, 99], "tile": 10}],
    "attributes": [{"name": "a", "type": "INT64",
                    "filters": {"filters": "delta:-1,bit_width_reduction:256,zstd:4", "max_chunk_size": 128}}]},
    lambda: schema([dim("x", (-1.0, 1.0), None, np.float64, filters=[tiledb.ZstdFilter(9)]),
                    dim("y", (0, 99), 10, np.uint32)],
                   [tiledb.Attr("a", dtype=np.int64, filters=tiledb.FilterList(
                       [tiledb.DeltaFilter(), tiledb.BitWidthReductionFilter(256), tiledb.ZstdFilter(4)], chunksize=128))],
                   sparse=True, cell_order="hilbert", tile_order="col-major", capacity=500, allows_duplicates=True,
                   offsets_filters=[tiledb.BitShuffleFilter(), tiledb.LZ4Filter()],
                   validity_filters=[tiledb.NoOpFilter()]))
json_case("enumeration_from_json", {
    "dimensions": [D100],
    "attributes": [{"name": "c", "type": "UINT8", "enumeration": "colors"}],
    "enumerations": [{"name": "colors", "type": "STRING_UTF8", "cell_val_num": "var", "ordered": False,
                      "values": ["red", "green", "", "blue"]}]},
    lambda: dense1([tiledb.Attr("c", dtype=np.uint8, enum_label="colors")], enums=[enums()[0]]))
json_case("encrypted_from_json", {"dimensions": [D100], "attributes": [{"name": "a", "type": "INT32"}]},
          lambda: dense1([tiledb.Attr("a", dtype=np.int32)]), key=KEY)
json_case("current_domain_from_json", {
    "sparse": True,
    "dimensions": [{"name": "x", "type": "INT32", "domain": [0, 999], "tile": 10},
                   {"name": "s", "type": "STRING_ASCII"},
                   {"name": "f", "type": "FLOAT64", "domain": [-10, 10], "tile": 1}],
    "attributes": [{"name": "a", "type": "INT32"}],
    "current_domain": [[3, 100], ["aa", "zz"], [-1.5, 2.25]]},
    current_domain_schema)


# ---------------------------------------------------------------------------------------------
# Refusals: TileDB's reason, from TileDB-Py and from us
# ---------------------------------------------------------------------------------------------

def refusal(name, description, build, reason):
    """`build` makes TileDB-Py refuse with `reason`; None where TileDB-Py cannot express the
    description (the reason is then TileDB's text from its source, see schema_check.rs)."""
    REFUSALS.append(dict(name=name, json=description, build=build, reason=reason))


def jschema(dims, attrs, sparse=False, **kw):
    return dict(sparse=sparse, dimensions=dims, attributes=attrs, **kw)


A = {"name": "a", "type": "INT32"}
X9 = {"name": "x", "type": "INT32", "domain": [0, 9], "tile": 2}


def x9():
    return dim("x", (0, 9), 2, np.int32)


def a32():
    return tiledb.Attr("a", dtype=np.int32)


def with_capacity_0():
    s = schema([x9()], [a32()], sparse=True)
    s._capacity = 0
    return s


def with_coords(filters, d):
    s = schema([d], [a32()], sparse=True)
    s._coords_filters = tiledb.FilterList(filters)
    return s


def dim_ncell(d, n):
    d._ncell = n
    return d


def fill_of(attr, raw):
    attr._fill = np.frombuffer(raw, dtype=np.uint8)
    return attr


refusal("dense_float_dimension",
        jschema([{"name": "x", "type": "FLOAT64", "domain": [0, 1], "tile": 0.5}], [A]),
        lambda: schema([dim("x", (0, 1.0), 0.5, np.float64)], [a32()]),
        "Cannot set domain; Dense arrays do not support dimension datatype 'FLOAT64'")
refusal("dense_string_dimension", jschema([{"name": "x", "type": "STRING_ASCII"}], [A]),
        lambda: schema([dim("x", None, None, "ascii")], [a32()]),
        "Cannot set domain; Dense arrays do not support dimension datatype 'STRING_ASCII'")
refusal("dense_mixed_dimension_types",
        jschema([X9, {"name": "y", "type": "INT64", "domain": [0, 9], "tile": 2}], [A]),
        lambda: schema([x9(), dim("y", (0, 9), 2, np.int64)], [a32()]),
        "Cannot set domain; In dense arrays, all dimensions must have the same datatype")
refusal("dense_hilbert", jschema([X9], [A], cell_order="hilbert"),
        lambda: schema([x9()], [a32()], cell_order="hilbert"),
        "Cannot set cell order; Hilbert order is only applicable to sparse arrays")
refusal("hilbert_tile_order", jschema([X9], [A], True, tile_order="hilbert"),
        lambda: schema([x9()], [a32()], sparse=True, tile_order="hilbert"),
        "Cannot set tile order; Hilbert order is not applicable to tiles")
refusal("unordered_cell_order", jschema([X9], [A], True, cell_order="unordered"),
        lambda: schema([x9()], [a32()], sparse=True, cell_order="unordered"),
        "Cannot set cell order; Cannot create ArraySchema with UNORDERED cell order")
refusal("dense_duplicates", jschema([X9], [A], allows_duplicates=True),
        lambda: schema([x9()], [a32()], allows_duplicates=True),
        "Dense arrays cannot allow coordinate duplicates")
refusal("sparse_capacity_0", jschema([X9], [A], True, capacity=0), with_capacity_0,
        "Sparse arrays cannot have their capacity equal to zero.")
refusal("dense_without_attributes", jschema([X9], []), lambda: schema([x9()], []),
        "Array schema check failed; No attributes provided")
refusal("no_dimensions", jschema([], [A], True), None,
        "Array schema check failed; No dimensions provided")
refusal("tile_extent_0", jschema([dict(X9, tile=0)], [A], True),
        lambda: schema([dim("x", (0, 9), 0, np.int32)], [a32()], sparse=True),
        "Tile extent check failed on dimension 'x'; Tile extent must not be 0")
refusal("tile_extent_negative", jschema([dict(X9, tile=-2)], [A], True),
        lambda: schema([dim("x", (0, 9), -2, np.int32)], [a32()], sparse=True),
        "Tile extent check failed on dimension 'x'; Tile extent -2 exceeds range on dimension domain [0, 9]")
refusal("tile_extent_over_range", jschema([dict(X9, tile=11)], [A], True),
        lambda: schema([dim("x", (0, 9), 11, np.int32)], [a32()], sparse=True),
        "Tile extent check failed on dimension 'x'; Tile extent 11 exceeds range on dimension domain [0, 9]")
refusal("float_tile_extent_0",
        jschema([{"name": "x", "type": "FLOAT32", "domain": [0, 9], "tile": 0}], [A], True),
        lambda: schema([dim("x", (0, 9), 0.0, np.float32)], [a32()], sparse=True),
        "Tile extent check failed on dimension 'x'; Tile extent must be greater than 0")
refusal("float_tile_extent_over_range",
        jschema([{"name": "x", "type": "FLOAT64", "domain": [0, 9], "tile": 10.5}], [A], True),
        lambda: schema([dim("x", (0, 9), 10.5, np.float64)], [a32()], sparse=True),
        "Tile extent check failed on dimension 'x'; Tile extent 10.500000 exceeds range on dimension domain "
        "[0.000000, 9.000000]")
refusal("full_range_domain",
        jschema([{"name": "x", "type": "INT8", "domain": [-128, 127], "tile": 1}], [A], True),
        lambda: schema([dim("x", (-128, 127), 1, np.int8)], [a32()], sparse=True),
        "Domain check failed; Domain range (upper + lower + 1) is larger than the maximum unsigned number")
refusal("domain_low_above_high", jschema([dict(X9, domain=[5, 1], tile=1)], [A], True),
        lambda: schema([dim("x", (5, 1), 1, np.int32)], [a32()], sparse=True),
        "Domain check failed; Upper domain bound should not be smaller than the lower one")
refusal("infinite_domain",
        jschema([{"name": "x", "type": "FLOAT64", "domain": [0, "inf"], "tile": 1}], [A], True), None,
        "Domain check failed; domain contains NaN")
refusal("expanded_domain_overflows",
        jschema([{"name": "x", "type": "INT64", "domain": [0, 9223372036854775806], "tile": 10}], [A]),
        lambda: schema([dim("x", (0, 9223372036854775806), 10, np.int64)], [a32()]),
        "Tile extent check failed; domain max expanded to multiple of tile extent exceeds max value "
        "representable by domain type.")
refusal("attribute_named_like_dimension", jschema([X9], [dict(A, name="x")], True),
        lambda: schema([x9()], [tiledb.Attr("x", dtype=np.int32)], sparse=True),
        "Array schema check failed; Attributes, dimensions and dimension labels must have unique names")
refusal("duplicate_attributes", jschema([X9], [A, A], True),
        lambda: schema([x9()], [a32(), a32()], sparse=True),
        "Array schema check failed; Attributes, dimensions and dimension labels must have unique names")
refusal("empty_names_clash", jschema([dict(X9, name="")], [dict(A, name="")], True),
        lambda: schema([dim("", (0, 9), 2, np.int32)], [tiledb.Attr("", dtype=np.int32)], sparse=True),
        "Array schema check failed; Attributes, dimensions and dimension labels must have unique names")
refusal("reserved_attribute_name", jschema([X9], [dict(A, name="__a")], True),
        lambda: schema([x9()], [tiledb.Attr("__a", dtype=np.int32)], sparse=True),
        "Cannot add attribute: names starting with '__' are reserved")
refusal("utf8_dimension", jschema([{"name": "x", "type": "STRING_UTF8"}], [A], True), None,
        "Datatype::STRING_UTF8 is not a valid Dimension Datatype")
refusal("fixed_size_string_dimension", jschema([{"name": "x", "type": "STRING_ASCII", "var": False}], [A], True),
        lambda: schema([dim_ncell(dim("x", None, None, "ascii"), 1)], [a32()], sparse=True),
        "Cannot set non-variable number of values per coordinate for a string dimension")
refusal("var_size_integer_dimension", jschema([dict(X9, var=True)], [A], True),
        lambda: schema([dim_ncell(x9(), lt.TILEDB_VAR_NUM())], [a32()], sparse=True),
        "Cannot set number of values per coordinate; Currently only one value per coordinate is supported")
refusal("string_dimension_with_domain",
        jschema([{"name": "x", "type": "STRING_ASCII", "domain": ["a", "b"]}], [A], True), None,
        "Setting the domain to a dimension with type 'STRING_ASCII' is not supported")
refusal("delta_on_floats", jschema([X9], [{"name": "a", "type": "FLOAT32", "filters": "delta"}], True),
        lambda: schema([x9()], [tiledb.Attr("a", dtype=np.float32, filters=[tiledb.DeltaFilter()])], sparse=True),
        "Filter DELTA does not accept input type FLOAT32")
refusal("double_delta_after_byteshuffle_on_floats",
        jschema([X9], [{"name": "a", "type": "FLOAT64", "filters": "byteshuffle,double_delta"}], True),
        lambda: schema([x9()], [tiledb.Attr("a", dtype=np.float64,
                                            filters=[tiledb.ByteShuffleFilter(), tiledb.DoubleDeltaFilter()])],
                       sparse=True),
        "Filter BYTESHUFFLE produces FLOAT64 but second filter DOUBLE_DELTA does not accept this type.")
refusal("rle_not_first_on_var_strings",
        jschema([X9], [{"name": "a", "type": "STRING_ASCII", "cell_val_num": "var", "filters": "zstd,rle"}], True),
        lambda: schema([x9()], [tiledb.Attr("a", dtype="ascii", filters=[tiledb.ZstdFilter(), tiledb.RleFilter()])],
                       sparse=True),
        "RLE filter must be the first filter to apply when used on a variable length string attribute")
refusal("double_delta_coords_on_float_dimension",
        jschema([{"name": "x", "type": "FLOAT64", "domain": [0, 9], "tile": 2}], [A], True,
                coords_filters="double_delta"),
        lambda: with_coords([tiledb.DoubleDeltaFilter()], dim("x", (0, 9), 2, np.float64)),
        "Real dimension cannot inherit coordinate filters with DOUBLE DELTA compression")
refusal("any_with_fixed_cells", jschema([X9], [{"name": "a", "type": "ANY", "cell_val_num": 1}], True),
        lambda: schema([x9()], [raw_attr("a", lt.DataType.ANY, 1)], sparse=True),
        "Cannot set number of values per cell; Attribute datatype `ANY` is always variable-sized")
refusal("zero_values_per_cell", jschema([X9], [dict(A, cell_val_num=0)], True),
        lambda: schema([x9()], [raw_attr("a", lt.DataType.INT32, 0)], sparse=True),
        "Cannot set zero values per cell")
refusal("fill_of_wrong_size", jschema([X9], [dict(A, cell_val_num=2, fill=[5])], True),
        lambda: schema([x9()], [fill_of(tiledb.Attr("a", dtype=np.int32), b"\0" * 8)], sparse=True),
        "Cannot set fill value; Input size is not the same as cell size")
refusal("webp_on_sparse", jschema([X9], [{"name": "a", "type": "UINT8", "filters": "webp"}], True),
        lambda: schema([x9()], [tiledb.Attr("a", dtype=np.uint8, filters=[tiledb.WebpFilter()])], sparse=True),
        "WebP filter can only be applied to dense arrays")
refusal("unknown_enumeration", jschema([X9], [dict(A, enumeration="e")], True),
        lambda: schema([x9()], [tiledb.Attr("a", dtype=np.int32, enum_label="e")], sparse=True),
        "Cannot add attribute; Attribute refers to an unknown enumeration named 'e'.")
refusal("enumeration_on_floats",
        jschema([X9], [{"name": "a", "type": "FLOAT32", "enumeration": "e"}], True,
                enumerations=[{"name": "e", "type": "INT64", "values": [1, 2]}]),
        lambda: schema([x9()], [tiledb.Attr("a", dtype=np.float32, enum_label="e")], sparse=True,
                       enums=[tiledb.Enumeration("e", False, [1, 2])]),
        "Unable to use enumeration with attribute 'a', attribute must have an integral data type, not FLOAT32")
refusal("enumeration_too_large_for_attribute",
        jschema([X9], [{"name": "a", "type": "INT8", "enumeration": "e"}], True,
                enumerations=[{"name": "e", "type": "INT32", "values": list(range(127))}]),
        lambda: schema([x9()], [tiledb.Attr("a", dtype=np.int8, enum_label="e")], sparse=True,
                       enums=[tiledb.Enumeration("e", False, list(range(127)), dtype=np.int32)]),
        "Unable to use enumeration 'e' for attribute 'a' because the attribute's type is not large enough to "
        "represent all enumeration values.")
refusal("enumeration_duplicate_values",
        jschema([X9], [A], True,
                enumerations=[{"name": "e", "type": "STRING_UTF8", "cell_val_num": "var", "values": ["x", "y", "x"]}]),
        lambda: schema([x9()], [a32()], sparse=True, enums=[tiledb.Enumeration("e", False, ["x", "y", "x"])]),
        "Invalid duplicated value in enumeration 'x'")
refusal("enumeration_duplicate_names",
        jschema([X9], [A], True, enumerations=[{"name": "e", "type": "INT64", "values": [1]},
                                               {"name": "e", "type": "INT64", "values": [2]}]),
        lambda: schema([x9()], [a32()], sparse=True,
                       enums=[tiledb.Enumeration("e", False, [1]), tiledb.Enumeration("e", False, [2])]),
        "Error adding enumeration. Enumeration with name 'e' already exists in this ArraySchema.")


def current_domain_outside():
    ctx = tiledb.default_ctx()
    dom = tiledb.Domain(x9())
    s = tiledb.ArraySchema(domain=dom, attrs=[a32()], sparse=True)
    nd = tiledb.NDRectangle(ctx, dom)
    nd.set_range("x", 0, 10)
    cd = tiledb.CurrentDomain(ctx)
    cd.set_ndrectangle(nd)
    s.set_current_domain(cd)
    return s


refusal("current_domain_outside_domain", jschema([X9], [A], True, current_domain=[[0, 10]]),
        current_domain_outside,
        "This array current domain has ranges past the boundaries of the array schema domain")

# Tile extents near the ends of every integer type: TileDB's upper-floor check and its
# integer conversions decide; we must decide the same, and create the same schema.
EXTENT_MATRIX = []
for _t in [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]:
    _i = np.iinfo(_t)
    for _dom, _tile in [((_i.min + 1, _i.max - 1), 10), ((_i.min, _i.max - 1), 7), ((_i.min + 1, _i.max), 3),
                        ((_i.max - 20, _i.max), 7), ((_i.min, _i.min + 30), 16), ((_i.min, _i.max - 1), 1)]:
        EXTENT_MATRIX.append((_t, (int(_dom[0]), int(_dom[1])), _tile))


def run_extents(tmp):
    decided = {"accept": 0, "refuse": 0}
    for n, (t, (lo, hi), tile) in enumerate(EXTENT_MATRIX):
        label = f"{np.dtype(t).name} [{lo}, {hi}] tile {tile}"
        d = os.path.join(tmp, str(n))
        os.makedirs(d)
        desc = jschema([{"name": "d", "type": np.dtype(t).name.upper(), "domain": [lo, hi], "tile": tile}], [A])
        try:
            tiledb.Array.create(os.path.join(d, "T"), schema([dim("d", (lo, hi), tile, t)], [a32()]))
            reason = None
        except tiledb.TileDBError as e:
            reason = str(e).split(": ", 1)[1]
        path = os.path.join(d, "schema.json")
        write_json(path, desc)
        rc, _, err = tdbf("create", os.path.join(d, "O"), "--schema", path)
        if reason is None:
            check(rc == 0, f"{label}: TileDB accepts, we refuse: {err}")
            compare_arrays(os.path.join(d, "T"), os.path.join(d, "O"), None, label)
        else:
            check(rc != 0 and reason in err, f"{label}: TileDB refuses with '{reason}', we: rc {rc} '{err}'")
        decided["accept" if reason is None else "refuse"] += 1
    check(decided["accept"] and decided["refuse"], f"the matrix decides only one way: {decided}")


def labelled_schema():
    return schema([dim("x", (0, 99), 10, np.int32), dim("y", (0, 9), 5, np.int32)], [a32()],
                  dim_labels={0: {"lx": tiledb.DimLabelSchema("increasing", label_dtype=np.float64,
                                                              dim_dtype=np.int32, dim_tile=10)},
                              1: {"ly": tiledb.DimLabelSchema("decreasing", label_dtype="ascii",
                                                              dim_dtype=np.int32, dim_tile=5)}})


def run_labels(tmp, save):
    """Dimension labels: TileDB-Py creates them (label arrays under __labels); we refuse to
    create them (Unsupported), naming them."""
    t_uri = os.path.join(tmp, "T")
    tiledb.Array.create(t_uri, labelled_schema())
    rc, out, err = tdbf("info", t_uri, "--json")
    check(rc == 0 and json.loads(out)["schema"]["dimension_labels"] == 2, f"labels: info: {err}")
    path = os.path.join(tmp, "schema.json")
    write_json(path, json.loads(out))
    o_uri = os.path.join(tmp, "O")
    rc, _, err = tdbf("create", o_uri, "--schema", path)
    check(rc != 0 and "does not create dimension label arrays" in err and not os.path.exists(o_uri),
          f"labels: rc {rc}, {err}")
    if save:
        dest = os.path.join(save, "dimension_labels")
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(os.path.join(t_uri, "__schema"), os.path.join(dest, "__schema"))
        labels = os.path.join(t_uri, "__labels")
        for l in sorted(os.listdir(labels)):
            shutil.copytree(os.path.join(labels, l, "__schema"), os.path.join(dest, "__labels", l, "__schema"))


def run_docs_example(tmp):
    """The schema example of docs/ARRAYS.md, "Creating arrays" (comments stripped), creates an
    array TileDB-Py opens, equal to the TileDB-Py schema of the same description."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    text = open(os.path.join(root, "docs", "ARRAYS.md")).read()
    start = text.index("```json", text.index("## Creating arrays")) + len("```json")
    desc = json.loads(re.sub(r"//[^\n]*", "", text[start: text.index("```", start)]))
    t_uri = os.path.join(tmp, "T")
    tiledb.Array.create(t_uri, schema(
        [dim("t", (np.datetime64(0, "ms"), np.datetime64(86400000, "ms")), np.timedelta64(3600000, "ms"),
             "datetime64[ms]"),
         dim("x", (-1.5, 1.5), 0.5, np.float64, filters=[tiledb.ZstdFilter(5)]),
         dim("s", None, None, "ascii")],
        [tiledb.Attr("a", dtype=np.int32, filters=[tiledb.BitShuffleFilter(), tiledb.ZstdFilter(3)]),
         raw_attr("rgb", lt.DataType.UINT8, 3, fill=b"\0\0\0"),
         tiledb.Attr("label", dtype=str, nullable=True),
         tiledb.Attr("color", dtype=np.uint8, enum_label="colors")],
        sparse=True, enums=[tiledb.Enumeration("colors", False, ["red", "green", "blue"])]))
    path = os.path.join(tmp, "schema.json")
    write_json(path, desc)
    rc, _, err = tdbf("create", os.path.join(tmp, "O"), "--schema", path)
    check(rc == 0, f"docs/ARRAYS.md example: {err}")
    compare_arrays(t_uri, os.path.join(tmp, "O"), None, "docs/ARRAYS.md example")


def run_old_formats(tmp):
    """The arrays of TileDB 2.0-2.17 in tests/data (schema versions 5-21) clone into format
    22 arrays whose schemas TileDB-Py finds equal (`==` and TileDB's dump)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    data = os.path.join(root, "tests", "data")
    sources = sorted(d for d in
                     [os.path.join(data, "arrays", r, a) for r in os.listdir(os.path.join(data, "arrays"))
                      if os.path.isdir(os.path.join(data, "arrays", r))
                      for a in os.listdir(os.path.join(data, "arrays", r))]
                     + [os.path.join(data, "c_array", a) for a in os.listdir(os.path.join(data, "c_array"))]
                     if os.path.isdir(os.path.join(d, "__schema")) or os.path.isfile(os.path.join(d, "__array_schema.tdb")))
    check(len(sources) >= 60, f"{len(sources)} old arrays found in {data}")
    versions = set()
    for i, src in enumerate(sources):
        label = os.path.relpath(src, data)
        rc, out, err = tdbf("info", src, "--json")
        check(rc == 0, f"{label}: info: {err}")
        versions.add(json.loads(out)["schema"]["version"])
        path = os.path.join(tmp, f"{i}.json")
        with open(path, "w") as f:
            f.write(out)
        o_uri = os.path.join(tmp, str(i))
        rc, _, err = tdbf("create", o_uri, "--schema", path)
        check(rc == 0, f"{label}: create: {err}")
        a, b = tiledb.ArraySchema.load(src), tiledb.ArraySchema.load(o_uri)
        check(b.version == 22, f"{label}: version {b.version}")
        check((a == b) if py_comparable(a) else True, f"{label}: TileDB-Py schemas differ")
        check(dump(a) == dump(b), f"{label}: TileDB's dumps differ")
    check(len(versions) >= 5, f"old schema versions covered: {sorted(versions)}")


# Stricter than TileDB (docs/DIFFERENCES.md, "Creating arrays"): TileDB 2.30 creates these, we refuse.
STRICTER = [
    ("global_order_tile_order", jschema([X9], [A], True, tile_order="global-order"),
     lambda: schema([x9()], [a32()], sparse=True, tile_order="global"),
     "global-order is a query layout, not a tile order"),
]


# ---------------------------------------------------------------------------------------------
# Runners
# ---------------------------------------------------------------------------------------------

def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)


def run_clone(c, tmp, save):
    built = c["build"]()
    schemas = built if isinstance(built, list) else [built]
    key = c["key"]
    for i, s in enumerate(schemas):
        label = f"{c['name']}[{i}]"
        t_uri, o_uri = os.path.join(tmp, f"T{i}"), os.path.join(tmp, f"O{i}")
        tiledb.Array.create(t_uri, s, ctx=ctx_for(key))
        args = ["info", t_uri, "--json"] + (["--key", key] if key else [])
        rc, out, err = tdbf(*args)
        check(rc == 0, f"{label}: tdbf array info: {err}")
        info = json.loads(out)
        desc = info["schema"] if c["member"] else info
        path = os.path.join(tmp, f"schema{i}.json")
        write_json(path, desc)
        before = int(time.time() * 1000)
        rc, _, err = tdbf("create", o_uri, "--schema", path, *(["--key", key] if key else []))
        after = int(time.time() * 1000)
        check(rc == 0, f"{label}: tdbf array create: {err}")
        compare_arrays(t_uri, o_uri, key, label, before, after)
        # Our JSON of our array equals our JSON of TileDB's (names aside).
        rc, out2, err = tdbf(*(["info", o_uri, "--json"] + (["--key", key] if key else [])))
        check(rc == 0, f"{label}: tdbf array info on ours: {err}")
        ours = json.loads(out2)["schema"]
        ours["name"] = info["schema"]["name"]
        check(ours == info["schema"], f"{label}: info --json differs:\n{ours}\n{info['schema']}")
        # Creating over an existing array is refused and changes nothing.
        snapshot = folders(o_uri)
        rc, _, err = tdbf("create", o_uri, "--schema", path)
        check(rc != 0 and "already exists" in err and folders(o_uri) == snapshot,
              f"{label}: creating over an existing array: rc {rc}, {err}")
        if save and key is None and c["fixture"]:
            dest = os.path.join(save, label.replace("[", "_").replace("]", ""))
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(os.path.join(t_uri, "__schema"), os.path.join(dest, "__schema"))


def run_json(c, tmp):
    key = c["key"]
    t_uri, o_uri = os.path.join(tmp, "T"), os.path.join(tmp, "O")
    tiledb.Array.create(t_uri, c["build"](), ctx=ctx_for(key))
    path = os.path.join(tmp, "schema.json")
    write_json(path, c["json"])
    before = int(time.time() * 1000)
    rc, _, err = tdbf("create", o_uri, "--schema", path, *(["--key", key] if key else []))
    after = int(time.time() * 1000)
    check(rc == 0, f"{c['name']}: tdbf array create: {err}")
    compare_arrays(t_uri, o_uri, key, c["name"], before, after)


def run_refusal(r, tmp, stricter=False):
    label = r["name"]
    if r["build"] is not None:
        t_uri = os.path.join(tmp, "T")
        try:
            tiledb.Array.create(t_uri, r["build"]())
        except Exception as e:  # noqa: BLE001 - TileDB-Py raises TileDBError or TypeError
            check(not stricter and r["reason"] in str(e),
                  f"{label}: TileDB-Py refused with '{e}', expected '{r['reason']}'")
        else:
            check(stricter, f"{label}: TileDB-Py created the array; expected '{r['reason']}'")
            try:
                tiledb.ArraySchema.load(t_uri)
            except tiledb.TileDBError:
                CHECKS[0] += 1  # TileDB cannot open what it created: we refuse to create it
            else:
                raise Mismatch(f"{label}: TileDB-Py creates and opens it; we should accept it")
    path = os.path.join(tmp, "schema.json")
    write_json(path, r["json"])
    o_uri = os.path.join(tmp, "O")
    rc, _, err = tdbf("create", o_uri, "--schema", path)
    check(rc != 0 and r["reason"] in err, f"{label}: tdbf array create: rc {rc}, '{err.strip()}', "
                                          f"expected '{r['reason']}'")
    check(not os.path.exists(o_uri), f"{label}: a refused create left {o_uri}")


def main():
    global TDBF
    ap = argparse.ArgumentParser()
    ap.add_argument("--tdbf", default=None)
    ap.add_argument("--keep", default=None)
    ap.add_argument("-k", default=None)
    ap.add_argument("--save-fixtures", default=None)
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    TDBF = args.tdbf or os.path.join(root, "target", "release", "tdbf")
    if not os.path.exists(TDBF):
        print(f"tdbf not found at {TDBF}", file=sys.stderr)
        return 2
    tmp = args.keep or tempfile.mkdtemp(prefix="tdbf_create_")
    os.makedirs(tmp, exist_ok=True)
    if args.save_fixtures:
        os.makedirs(args.save_fixtures, exist_ok=True)
    failures = 0
    jobs = ([("clone", c["name"], lambda d, c=c: run_clone(c, d, args.save_fixtures)) for c in CLONES]
            + [("json", c["name"], lambda d, c=c: run_json(c, d)) for c in JSONS]
            + [("refusal", r["name"], lambda d, r=r: run_refusal(r, d)) for r in REFUSALS]
            + [("extents", "tile_extent_matrix", run_extents),
               ("json", "docs_arrays_example", run_docs_example),
               ("old", "old_format_arrays", run_old_formats),
               ("labels", "dimension_labels_refused", lambda d: run_labels(d, args.save_fixtures))]
            + [("stricter", n, lambda d, r=dict(name=n, json=j, build=b, reason=why): run_refusal(r, d, True))
               for n, j, b, why in STRICTER])
    for kind, name, fn in jobs:
        if args.k and args.k not in name:
            continue
        d = os.path.join(tmp, kind, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        try:
            fn(d)
            count(kind, True)
            print(f"ok   {kind:8} {name}")
        except Exception:
            count(kind, False)
            failures += 1
            print(f"FAIL {kind:8} {name}")
            traceback.print_exc()
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    print("\ncases (equal/total):")
    for kind, (ok, total) in TABLE.items():
        print(f"  {kind:9} {ok}/{total}")
    print(f"{CHECKS[0]} checks, {failures} failing cases")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
