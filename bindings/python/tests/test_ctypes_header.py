"""The package's ctypes declarations match include/tdbfilter.h (bindings/python/check_ctypes.py),
and the checker catches each kind of drift."""

import importlib.util
from pathlib import Path

import pytest

CHECKER = Path(__file__).resolve().parents[1] / "check_ctypes.py"
HEADER = Path(__file__).resolve().parents[3] / "include" / "tdbfilter.h"


def _checker():
    spec = importlib.util.spec_from_file_location("check_ctypes", CHECKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_ctypes = _checker()


def test_declarations_match_the_header():
    errors, header, lib = check_ctypes.check(HEADER.read_text(), check_ctypes.read_sources())
    assert errors == []
    assert len(lib.SIGNATURES) >= 50


def test_the_loaded_library_exposes_only_declared_functions():
    from tdbfilter import _lib
    from tdbfilter.pipeline import lib
    L = lib()
    assert set(n for n in vars(L) if n.startswith("tdb_")) == set(_lib.SIGNATURES)
    with pytest.raises(AttributeError):
        L.tdb_pipeline_set_gzip_identical  # in the header, not declared by the package


CASES = [(w, f, o, n, e) for w, f, o, n, e in check_ctypes.MUTATIONS] + \
        [(w, None, o, n, e) for w, o, n, e in check_ctypes.HEADER_MUTATIONS]


@pytest.mark.parametrize("what,file,old,new,expect", CASES, ids=[c[0] for c in CASES])
def test_drift_is_caught(what, file, old, new, expect):
    errors = check_ctypes.mutated_errors(HEADER.read_text(), check_ctypes.read_sources(), file,
                                         old, new)
    assert errors is not None, f"the mutation '{what}' found nothing to change"
    assert any(expect in e for e in errors), errors
