#!/usr/bin/env python3
"""Checks the Python package's ctypes declarations against tdbfilter's C header, statically.

The header is read with the parser of the Julia binding's checker
(``bindings/julia/check_ccalls.py``: ``Header``); the package side is
``bindings/python/src/tdbfilter/_lib.py``, which declares every C function the package calls in
``SIGNATURES`` and the header constants it uses in ``CONSTANTS``. Checked:

* every declared function exists in the header, with as many argument types as the C function
  has parameters, each argument type and the return type compatible with the C type (same
  integer width and signedness, ``c_bool`` for ``bool``, ``c_char_p`` for ``char``/byte
  pointers, ``c_void_p`` only for ``void``/byte pointers, opaque handles and function pointers,
  ``POINTER(T)`` for ``T *``, ``POINTER(c_void_p)`` for any ``T **``);
* every ``tdb_*`` function the package's sources call (``L.tdb_x(...)``) is declared (the
  loaded library exposes nothing else, so an undeclared call could only fail at run time);
* every constant of ``CONSTANTS`` exists in the header with the same value.

ctypes cannot tell ``size_t`` from ``uint64_t`` (both are ``c_ulong`` on LP64), so those two
are one type here.

Usage: check_ctypes.py [--header include/tdbfilter.h]
       check_ctypes.py --self-test   (proves each kind of drift is caught)
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import re
import sys
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PACKAGE = HERE / "src" / "tdbfilter"
LIB_PY = PACKAGE / "_lib.py"


def _julia_checker():
    """The Julia checker's module, for its C header parser."""
    path = ROOT / "bindings" / "julia" / "check_ccalls.py"
    spec = importlib.util.spec_from_file_location("tdbf_check_ccalls", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


Header = _julia_checker().Header

U64 = ("int", 64, False)

_SCALARS = {
    ctypes.c_int8: ("int", 8, True), ctypes.c_uint8: ("int", 8, False),
    ctypes.c_int16: ("int", 16, True), ctypes.c_uint16: ("int", 16, False),
    ctypes.c_int32: ("int", 32, True), ctypes.c_uint32: ("int", 32, False),
    ctypes.c_int64: ("int", 64, True), ctypes.c_uint64: U64,
    ctypes.c_size_t: U64, ctypes.c_bool: ("bool",),
    ctypes.c_float: ("float", 32), ctypes.c_double: ("float", 64),
    ctypes.c_char_p: ("cstring",), ctypes.c_void_p: ("voidptr",),
}


def py_canon(t):
    """The canonical form of a ctypes type (None: ``void``)."""
    if t is None:
        return ("void",)
    if t in _SCALARS:
        return _SCALARS[t]
    if isinstance(t, type) and issubclass(t, ctypes._Pointer):
        return ("ptr", py_canon(t._type_))
    if isinstance(t, type) and issubclass(t, ctypes.Structure):
        return ("pystruct", t.__name__, tuple((f, py_canon(ft)) for f, ft in t._fields_))
    if isinstance(t, type) and issubclass(t, ctypes._CFuncPtr):
        return ("fnptr",)
    raise ValueError(f"unknown ctypes type {t!r}")


def c_norm(c):
    """C's canonical type with ``size_t`` as ``uint64_t`` (ctypes has one type for both)."""
    if c == ("size_t",):
        return U64
    if c[0] == "ptr":
        return ("ptr", c_norm(c[1]))
    return c


BYTES = (("char",), ("int", 8, True), ("int", 8, False))


def compatible(c, p, header):
    """Whether ctypes' canonical type ``p`` passes or returns C's canonical type ``c``."""
    c = c_norm(c)
    if c == p:
        return c[0] not in ("opaque", "struct")  # handles and structs only behind pointers
    if p == ("cstring",):
        return c[0] == "ptr" and c[1] in BYTES
    if p == ("voidptr",):
        return c == ("fnptr",) or (c[0] == "ptr" and (c[1] in (("void",),) + BYTES
                                                      or c[1][0] == "opaque"))
    if p[0] == "ptr" and c[0] == "ptr":
        ci, pi = c[1], p[1]
        if pi == ("voidptr",):  # POINTER(c_void_p): where any pointer is returned
            return ci[0] == "ptr" or ci == ("fnptr",)
        if pi == ("cstring",):
            return ci[0] == "ptr" and ci[1] == ("char",)
        if ci[0] == "struct" and pi[0] == "pystruct":
            return [f for f, _ in header.structs[ci[1]]] == [f for f, _ in pi[2]] and all(
                compatible(ct, pt, header) for (_, ct), (_, pt) in zip(header.structs[ci[1]], pi[2]))
        if ci[0] in ("opaque", "struct", "void"):
            return False
        return compatible(ci, pi, header)
    return False


def load_lib_module(text: str) -> types.ModuleType:
    """The package's ``_lib.py`` from its text (executed alone: it imports nothing relative)."""
    module = types.ModuleType("tdbfilter_lib_under_check")
    exec(compile(text, str(LIB_PY), "exec"), module.__dict__)
    return module


def read_sources(package: Path = PACKAGE) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(package.glob("*.py"))}


def check(header_text: str, sources: dict[str, str]) -> tuple[list[str], Header, types.ModuleType]:
    header = Header(header_text)
    lib = load_lib_module(sources["_lib.py"])
    errors = []
    for name, (restype, argtypes) in lib.SIGNATURES.items():
        if name not in header.functions:
            errors.append(f"_lib.py: {name} is not a function of the header")
            continue
        cret, cargs = header.functions[name]
        try:
            pret = py_canon(restype)
        except ValueError as e:
            errors.append(f"_lib.py: {name}: return type: {e}")
            continue
        if not compatible(cret, pret, header):
            errors.append(f"_lib.py: {name} returns {cret} in C, ctypes says {restype!r}")
        if len(argtypes) != len(cargs):
            errors.append(f"_lib.py: {name} takes {len(cargs)} arguments in C, "
                          f"ctypes declares {len(argtypes)}")
            continue
        for i, (ct, t) in enumerate(zip(cargs, argtypes)):
            try:
                pt = py_canon(t)
            except ValueError as e:
                errors.append(f"_lib.py: {name} argument {i + 1}: {e}")
                continue
            if not compatible(ct, pt, header):
                errors.append(f"_lib.py: {name} argument {i + 1} is {ct} in C, ctypes says "
                              f"{getattr(t, '__name__', t)}")
    for file, text in sources.items():
        for m in re.finditer(r"\.\s*(tdb_\w+)\s*\(", text):
            if m.group(1) not in lib.SIGNATURES:
                line = text.count("\n", 0, m.start()) + 1
                errors.append(f"{file}:{line}: calls {m.group(1)}, which _lib.SIGNATURES does "
                              "not declare")
    for name, value in lib.CONSTANTS.items():
        if name not in header.constants:
            errors.append(f"_lib.py: constant {name} is not in the header")
        elif header.constants[name] != value:
            errors.append(f"_lib.py: constant {name} is {value}, {header.constants[name]} in "
                          "the header")
    return errors, header, lib


# ---------------------------------------------------------------------------------------------
# Self-test: each kind of drift is caught.
# ---------------------------------------------------------------------------------------------

# (what, file, old text, new text, expected error fragment)
MUTATIONS = [
    ("a size_t passed as c_uint32", "_lib.py",
     '"tdb_pipeline_deserialize": (c_int, [c_char_p, c_size_t,',
     '"tdb_pipeline_deserialize": (c_int, [c_char_p, c_uint32,',
     "tdb_pipeline_deserialize argument 2"),
    ("a misspelt function", "_lib.py", '"tdb_pipeline_set_threads":',
     '"tdb_pipeline_set_thread":', "tdb_pipeline_set_thread is not a function"),
    ("an extra argument", "_lib.py", '"tdb_pipeline_set_threads": (c_int, [P, c_uint32, PP])',
     '"tdb_pipeline_set_threads": (c_int, [P, c_uint32, c_uint32, PP])',
     "tdb_pipeline_set_threads takes 3 arguments in C, ctypes declares 4"),
    ("a missing argument", "_lib.py", '"tdb_tile_data": (c_int, [P, PP, SIZEP, PP])',
     '"tdb_tile_data": (c_int, [P, PP, SIZEP])',
     "tdb_tile_data takes 4 arguments in C, ctypes declares 3"),
    ("a wrong return type", "_lib.py", '"tdb_error_status": (c_int,',
     '"tdb_error_status": (None,', "tdb_error_status returns"),
    ("a string returned as a handle", "_lib.py", '"tdb_version": (c_char_p,',
     '"tdb_version": (c_uint64,', "tdb_version returns"),
    ("a signed/unsigned mix-up", "_lib.py", '"tdb_pipeline_add_filter": (c_int, [P, c_uint32,',
     '"tdb_pipeline_add_filter": (c_int, [P, c_int,', "tdb_pipeline_add_filter argument 2"),
    ("a handle passed as a string", "_lib.py", '"tdb_tile_free": (None, [P])',
     '"tdb_tile_free": (None, [c_char_p])', "tdb_tile_free argument 1"),
    ("an output of the wrong width", "_lib.py", '"tdb_pipeline_filter_count": (c_int, [P, U32P,',
     '"tdb_pipeline_filter_count": (c_int, [P, U64P,', "tdb_pipeline_filter_count argument 2"),
    ("a bool passed as an int", "_lib.py",
     '"tdb_pipeline_set_skip_checksum_validation": (c_int, [P, c_bool,',
     '"tdb_pipeline_set_skip_checksum_validation": (c_int, [P, c_int,',
     "tdb_pipeline_set_skip_checksum_validation argument 2"),
    ("a wrong constant", "_lib.py", '"TDB_ERR_CORRUPT_DATA": 2', '"TDB_ERR_CORRUPT_DATA": 3',
     "constant TDB_ERR_CORRUPT_DATA is 3, 2 in the header"),
    ("a constant the header lacks", "_lib.py", '"TDB_FORMAT_VERSION": 22',
     '"TDB_FORMAT_VERSION_X": 22', "constant TDB_FORMAT_VERSION_X is not in the header"),
    ("a call of an undeclared function", "pipeline.py", "def version() -> str:",
     "def _gzip(p):\n    lib().tdb_pipeline_set_gzip_identical(p, True, None)\n\n\n"
     "def version() -> str:",
     "calls tdb_pipeline_set_gzip_identical, which _lib.SIGNATURES does not declare"),
]

HEADER_MUTATIONS = [
    ("a header parameter widened", "tdb_status_t tdb_pipeline_set_threads(tdb_pipeline_t *pipeline,\n"
     "                                      uint32_t threads,",
     "tdb_status_t tdb_pipeline_set_threads(tdb_pipeline_t *pipeline,\n"
     "                                      uint64_t threads,", "tdb_pipeline_set_threads argument 2"),
    ("a header function renamed", "tdb_status_t tdb_pipeline_filter_count(",
     "tdb_status_t tdb_pipeline_filter_count_v2(", "tdb_pipeline_filter_count is not a function"),
]


def mutated_errors(header_text: str, sources: dict[str, str], file: str | None, old: str,
                   new: str) -> list[str] | None:
    """The checker's errors after replacing ``old`` by ``new`` in ``file`` (None: the header);
    None when ``old`` is not there (a stale mutation)."""
    if file is None:
        if old not in header_text:
            return None
        return check(header_text.replace(old, new, 1), sources)[0]
    if old not in sources[file]:
        return None
    changed = dict(sources)
    changed[file] = sources[file].replace(old, new, 1)
    return check(header_text, changed)[0]


def self_test(header_text: str) -> None:
    sources = read_sources()
    errors, _, _ = check(header_text, sources)
    assert not errors, "the package itself must pass:\n" + "\n".join(errors)
    failures = 0
    cases = [(w, f, o, n, e) for w, f, o, n, e in MUTATIONS] + \
            [(w, None, o, n, e) for w, o, n, e in HEADER_MUTATIONS]
    for what, file, old, new, expect in cases:
        errors = mutated_errors(header_text, sources, file, old, new)
        if errors is None:
            print(f"self-test: mutation '{what}' found nothing to change", file=sys.stderr)
            failures += 1
        elif not any(expect in e for e in errors):
            print(f"self-test: {what} was NOT caught (errors: {errors})", file=sys.stderr)
            failures += 1
        else:
            print(f"self-test: caught {what}")
    if failures:
        sys.exit(f"self-test: {failures} kind(s) of drift not caught")
    print(f"self-test: all {len(cases)} kinds of drift caught")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--header", type=Path, default=ROOT / "include" / "tdbfilter.h")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    header_text = args.header.read_text()
    if args.self_test:
        self_test(header_text)
        return
    errors, header, lib = check(header_text, read_sources())
    if errors:
        print("\n".join(errors), file=sys.stderr)
        sys.exit(f"check_ctypes: {len(errors)} problem(s)")
    unused = sorted(set(header.functions) - set(lib.SIGNATURES))
    print(f"check_ctypes: the {len(lib.SIGNATURES)} ctypes declarations match "
          f"{args.header.name}, and {len(lib.CONSTANTS)} constants; header functions the "
          f"package does not call: {len(unused)}")


if __name__ == "__main__":
    main()
