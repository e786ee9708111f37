"""tdbfilter.dask.write on the LocalCluster: each chunk one fragment written by a worker through
Array(uri, mode="w"), read back by tdbfilter and by TileDB-Py 0.36.1 (TDBF_TILEDB_PYTHON)."""

from __future__ import annotations

import os
import pickle
import subprocess

import dask.array as da
import numpy as np
import pytest

import tdbfilter
import tdbfilter.dask as tdask

SCHEMA = {"dimensions": [{"name": "r", "type": "INT32", "domain": [1, 60], "tile": 16},
                         {"name": "c", "type": "INT32", "domain": [5, 54], "tile": 10}],
          "attributes": [{"name": "a", "type": "FLOAT64", "filters": "byteshuffle,zstd:3"}]}


def tiledb_py_read(uri: str, out) -> np.ndarray:
    """TileDB-Py's read of attribute a over the whole domain (in TDBF_TILEDB_PYTHON)."""
    python = os.environ.get("TDBF_TILEDB_PYTHON")
    if not python:
        pytest.fail("TDBF_TILEDB_PYTHON (a Python with tiledb 0.36.1) is not set")
    script = ("import pickle, sys, tiledb\n"
              "with tiledb.open(sys.argv[1]) as A:\n"
              "    pickle.dump((A[:]['a'] if isinstance(A[:], dict) else A[:], "
              "len(tiledb.array_fragments(sys.argv[1]))), open(sys.argv[2], 'wb'))\n")
    subprocess.run([python, "-c", script, uri, str(out)], check=True)
    return pickle.loads(out.read_bytes())


@pytest.mark.parametrize("chunks", [(16, 10), (7, 13)])
def test_write_equals_tiledb_read(tmp_path, client, chunks):
    uri = str(tmp_path / "w")
    tdbfilter.create(uri, SCHEMA)
    want = np.arange(60 * 50, dtype=np.float64).reshape(60, 50) / 7
    x = da.from_array(want, chunks=chunks)
    assert tdask.write(x, uri) is None
    # Chunks not on tile boundaries are rechunked to the tiles: 4 x 5 fragments either way.
    cells, fragments = tiledb_py_read(uri, tmp_path / "read.pkl")
    np.testing.assert_array_equal(cells, want)
    assert fragments == 4 * 5
    with tdbfilter.Array(uri) as A:
        np.testing.assert_array_equal(A.read("a", [(1, 60), (5, 54)]).reshape(60, 50), want)
        assert len(A.fragments) == 20
    np.testing.assert_array_equal(tdask.read(uri, field="a").compute(), want)


def test_write_lazy_with_origin(tmp_path, client):
    uri = str(tmp_path / "o")
    tdbfilter.create(uri, SCHEMA)
    part = np.full((16, 20), 2.5)
    lazy = tdask.write(da.from_array(part, chunks=(16, 10)), uri, origin=(17, 15),
                       compute=False)
    with tdbfilter.Array(uri) as A:
        assert A.fragments == []
    lazy.compute()
    cells, fragments = tiledb_py_read(uri, tmp_path / "read.pkl")
    want = np.full((60, 50), np.nan)
    want[16:32, 10:30] = 2.5
    np.testing.assert_array_equal(cells, want)
    assert fragments == 2
    with pytest.raises(tdbfilter.InvalidArgument):
        tdask.write(da.zeros((61, 50), chunks=(16, 10)), uri)
