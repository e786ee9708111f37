"""Shared fixtures: the TileDB-written tiles committed with the Go binding's tests."""

import json
from pathlib import Path

import pytest

TILEDB_DATA = Path(__file__).resolve().parents[2] / "go" / "testdata" / "tiledb"


@pytest.fixture(scope="session")
def tiledb_manifest():
    """Cases of tiles TileDB 2.30 wrote (bindings/go/testdata/tiledb, made by gen_tiledb.py)."""
    return json.loads((TILEDB_DATA / "manifest.json").read_text())["cases"]


def read_fixture(name: str) -> bytes:
    return (TILEDB_DATA / name).read_bytes()
