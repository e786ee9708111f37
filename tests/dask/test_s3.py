"""tdbfilter.dask on the S3 server the test command started (moto, TDBF_S3_ENDPOINT): TileDB-Py
writes a dense and a sparse array into a bucket through its own S3 client; the LocalCluster's
workers (tdbfilter only, no libtiledb) read them from S3 with TileDB's vfs.s3.* configuration
and must equal TileDB-Py's reads; a Dask write into S3 reads back equal through TileDB-Py."""

from __future__ import annotations

import json
import os
import subprocess
import uuid

import numpy as np

import tdbfilter.dask as tdask

HERE = os.path.dirname(os.path.abspath(__file__))
STORES = os.path.join(HERE, "..", "object_store")


def _endpoint() -> str:
    endpoint = os.environ.get("TDBF_S3_ENDPOINT")
    assert endpoint, ("TDBF_S3_ENDPOINT is not set: scripts/test.d/47-dask.sh starts moto "
                      "(scripts/object-store-servers.sh) before the tests")
    return endpoint


def _tiledb(script: str, *args: str) -> None:
    """Runs `script` with TileDB-Py's Python (the .venv, which has tiledb and boto3)."""
    python = os.environ["TDBF_TILEDB_PYTHON"]
    subprocess.run([python, "-c", script, STORES, *args], check=True)


WRITE = r"""
import json, sys
import numpy as np, tiledb
sys.path.insert(0, sys.argv[1])
from stores import Store
store = Store("s3", sys.argv[2], sys.argv[3])
store.create_bucket()
ctx = store.ctx()
dense = store.uri("dense")
dom = tiledb.Domain(tiledb.Dim("r", domain=(0, 255), tile=64, dtype=np.int32),
                    tiledb.Dim("c", domain=(0, 127), tile=32, dtype=np.int32))
tiledb.Array.create(dense, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr(
    "a", dtype=np.float64, filters=tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.ZstdFilter(3)]))]), ctx=ctx)
a = np.arange(256 * 128, dtype=np.float64).reshape(256, 128) * 0.5
with tiledb.open(dense, "w", ctx=ctx) as A:
    A[:] = a
with tiledb.open(dense, "w", ctx=ctx) as A:   # a second fragment over part of the first
    A[10:70, 5:40] = -a[10:70, 5:40]
sparse = store.uri("sparse")
sdom = tiledb.Domain(tiledb.Dim("x", domain=(0, 10**6), tile=1000, dtype=np.int64))
tiledb.Array.create(sparse, tiledb.ArraySchema(domain=sdom, sparse=True, capacity=500,
                    attrs=[tiledb.Attr("v", dtype=np.int32)]), ctx=ctx)
rng = np.random.default_rng(7)
for part in range(2):
    xs = rng.choice(10**6, size=3000, replace=False).astype(np.int64)
    with tiledb.open(sparse, "w", ctx=ctx) as A:
        A[xs] = {"v": (xs % 1000).astype(np.int32) + part}
with tiledb.open(dense, ctx=ctx) as A:
    np.save(sys.argv[4] + "/dense.npy", A[:]["a"])
with tiledb.open(sparse, ctx=ctx) as A:
    r = A[:]
    np.save(sys.argv[4] + "/sparse_x.npy", r["x"]); np.save(sys.argv[4] + "/sparse_v.npy", r["v"])
json.dump(store.our_config, open(sys.argv[4] + "/config.json", "w"))
"""

READ_BACK = r"""
import sys
import numpy as np, tiledb
sys.path.insert(0, sys.argv[1])
from stores import Store
store = Store("s3", sys.argv[2], sys.argv[3])
with tiledb.open(store.uri("written"), ctx=store.ctx()) as A:
    np.save(sys.argv[4] + "/written.npy", A[:]["a"])
"""


def test_dense_and_sparse_reads_from_s3_equal_tiledb_py(client, tmp_path):
    endpoint = _endpoint()
    bucket = f"tdbf-dask-{uuid.uuid4().hex[:10]}"
    _tiledb(WRITE, endpoint, bucket, str(tmp_path))
    config = json.load(open(tmp_path / "config.json"))
    want = np.load(tmp_path / "dense.npy")
    x = tdask.read(f"s3://{bucket}/dense", field="a", config=config)
    assert x.chunks == ((64,) * 4, (32,) * 4)
    got = x.compute()
    np.testing.assert_array_equal(got, want)
    assert float(x.sum().compute()) == float(want.sum())

    df = tdask.read(f"s3://{bucket}/sparse", config=config, chunks=1500).compute()
    order = np.argsort(df["x"].to_numpy(), kind="stable")
    np.testing.assert_array_equal(df["x"].to_numpy()[order], np.load(tmp_path / "sparse_x.npy"))
    np.testing.assert_array_equal(df["v"].to_numpy()[order], np.load(tmp_path / "sparse_v.npy"))


def test_dask_write_into_s3_reads_back_through_tiledb_py(client, tmp_path):
    endpoint = _endpoint()
    bucket = f"tdbf-dask-{uuid.uuid4().hex[:10]}"
    _tiledb(WRITE, endpoint, bucket, str(tmp_path))
    config = json.load(open(tmp_path / "config.json"))
    # The dense array's schema, created under a new name through tdbfilter (with the config).
    import tdbfilter
    tdbfilter.create(f"s3://{bucket}/written", {
        "sparse": False,
        "dimensions": [{"name": "r", "type": "INT32", "domain": [0, 255], "tile": 64},
                       {"name": "c", "type": "INT32", "domain": [0, 127], "tile": 32}],
        "attributes": [{"name": "a", "type": "FLOAT64", "filters": "byteshuffle,zstd:3"}],
    }, config=config)
    src = tdask.read(f"s3://{bucket}/dense", field="a", config=config)
    tdask.write(src * 2, f"s3://{bucket}/written", config=config)
    _tiledb(READ_BACK, endpoint, bucket, str(tmp_path))
    np.testing.assert_array_equal(np.load(tmp_path / "written.npy"), np.load(tmp_path / "dense.npy") * 2)
