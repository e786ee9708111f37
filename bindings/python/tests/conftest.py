"""Shared fixtures: the TileDB-written tiles committed with the Go binding's tests. A skipped
test is a failure here: every prerequisite (numcodecs, zarr, tiledb, the C library) is a test
requirement the test command installs, so a missing one must not pass silently."""

import json
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

TILEDB_DATA = Path(__file__).resolve().parents[2] / "go" / "testdata" / "tiledb"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Turns a skip (``pytest.skip``, ``importorskip``, a skip marker) into a failure."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped, and a skip is a failure in this suite: {report.longrepr}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """Turns a module skipped while collected (a module-level ``importorskip``) into a
    failure."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped:
        report.outcome = "failed"
        report.longrepr = f"skipped, and a skip is a failure in this suite: {report.longrepr}"


@pytest.fixture(scope="session")
def tiledb_manifest():
    """Cases of tiles TileDB 2.30 wrote (bindings/go/testdata/tiledb, made by gen_tiledb.py)."""
    return json.loads((TILEDB_DATA / "manifest.json").read_text())["cases"]


def read_fixture(name: str) -> bytes:
    return (TILEDB_DATA / name).read_bytes()
