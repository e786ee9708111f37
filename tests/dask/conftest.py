"""tests/dask: tdbfilter.dask and the xarray backend on a dask.distributed LocalCluster of two
worker processes, against TileDB-Py's reads of the same arrays.

The tests run in an environment without tiledb (the workers' environment: the
requirements.txt beside this file plus the tdbfilter package). The arrays and TileDB-Py's
reads of them come from make_arrays.py, run once per session with ``TDBF_TILEDB_PYTHON``
(a Python that has tiledb 0.36.1). A missing prerequisite fails the session, and so does any
skipped test.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
_skipped: list[str] = []


def pytest_runtest_logreport(report):
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_collectreport(report):
    if report.skipped:
        _skipped.append(str(report.nodeid))


def pytest_sessionfinish(session, exitstatus):
    """A skip is a failure here: every prerequisite is installed by the test step."""
    if _skipped:
        print(f"\ntests/dask: {len(_skipped)} skipped test(s), a failure: {_skipped}",
              file=sys.stderr)
        session.exitstatus = 1


@pytest.fixture(scope="session")
def arrays(tmp_path_factory) -> dict:
    """The arrays TileDB-Py wrote and its reads of them (make_arrays.py's expected.pkl)."""
    python = os.environ.get("TDBF_TILEDB_PYTHON")
    if not python:
        pytest.fail("TDBF_TILEDB_PYTHON (a Python with tiledb 0.36.1) is not set: "
                    "make_arrays.py writes the arrays with it")
    root = tmp_path_factory.mktemp("arrays")
    subprocess.run([python, str(HERE / "make_arrays.py"), str(root)], check=True)
    expected = pickle.loads((root / "expected.pkl").read_bytes())
    assert expected["tiledb"] == "0.36.1", expected["tiledb"]
    return expected


@pytest.fixture(scope="session")
def client():
    """A Client of LocalCluster(n_workers=2, threads_per_worker=1, processes=True), started
    once per session."""
    from dask.distributed import Client, LocalCluster

    if not os.environ.get("TDBFILTER_LIBRARY"):
        pytest.fail("TDBFILTER_LIBRARY is not set: the workers load the library through it")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        c.wait_for_workers(2)
        yield c
