#!/usr/bin/env python3
"""Runs modules of TileDB-Py 0.36.1's own test suite (the ``tiledb/tests`` folder of its wheel),
unchanged, with ``tiledb`` resolving to tdbfilter's TileDB-Py API (``tdbfilter.tiledb_compat``),
and reports passed/total per module against the same modules run on real TileDB-Py.

    run_suite.py [--impl tdbfilter|tiledb|both] [--modules test_a,test_b] [--check-floor]
                 [--write-baseline] [--write-floor] [-k EXPR]

- ``--impl tiledb`` runs the suite on TileDB-Py (the installed wheel, as it ships);
  ``--write-baseline`` stores which tests pass there in ``tiledb_py_passing.json`` (committed:
  the CI step compares against it without running libtiledb again).
- ``--impl tdbfilter`` (default) copies the tests folder into a temporary directory holding a
  package ``tiledb`` whose ``__init__`` is ``from tdbfilter.tiledb_compat import *`` and whose
  submodules (``tiledb.libtiledb``, ``tiledb.main``, ``tiledb.ctx``…) are tdbfilter's, puts it
  first on ``sys.path``, and runs pytest there in a subprocess per module, ``--jobs`` (2) at
  once.
- The table: per module, the tests collected, those passing on TileDB-Py (baseline), those
  passing on tdbfilter, and those passing on both. ``--check-floor`` fails (exit 1) when the
  number passing on both falls below ``floor.json``'s, in total or in any module.

The library is the one ``tdbfilter`` finds (``TDBFILTER_LIBRARY``); the package is
``bindings/python/src`` of this checkout unless ``--package-src`` says otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BASELINE = HERE / "tiledb_py_passing.json"
FLOOR = HERE / "floor.json"

MODULES = [
    "test_array_schema", "test_attribute", "test_dimension", "test_domain", "test_filters",
    "test_libtiledb", "test_metadata", "test_enumeration", "test_fragments",
    "test_read_subarray", "test_multi_index", "test_query_condition", "test_aggregates",
    "test_pandas_dataframe", "test_schema_evolution", "test_consolidation_plan",
    "test_timestamp_overrides", "test_current_domain", "test_group",
]

SHIM_INIT = '''"""The package ``tiledb`` of the TileDB-Py suite run: tdbfilter's TileDB-Py API."""
import sys as _sys
import tdbfilter.tiledb_compat as _compat
from tdbfilter.tiledb_compat import *  # noqa: F401,F403
from tdbfilter.tiledb_compat import __all__  # noqa: F401
_compat._register_submodules(__name__)
__version__ = _compat.__version__
'''


def tiledb_tests_dir(python: str) -> Path:
    """The ``tests`` folder of the TileDB-Py wheel installed for ``python`` (found without
    importing tiledb's native module)."""
    out = subprocess.run([python, "-c", "import importlib.util as u; "
                          "print(u.find_spec('tiledb').submodule_search_locations[0])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    tests = Path(out) / "tests"
    if not (tests / "common.py").is_file():
        raise SystemExit(f"run_suite: no TileDB-Py tests folder at {tests}")
    return tests


def make_shim(workdir: Path, tests_src: Path) -> Path:
    """The folder holding the package ``tiledb`` that resolves to tdbfilter (made once)."""
    shim = workdir / "shim"
    if not (shim / "tiledb").is_dir():
        (shim / "tiledb").mkdir(parents=True)
        (shim / "tiledb" / "__init__.py").write_text(SHIM_INIT)
        shutil.copytree(tests_src, shim / "tiledb" / "tests",
                        ignore=shutil.ignore_patterns("__pycache__"))
    return shim


def run_module(python: str, impl: str, module: str, workdir: Path, tests_src: Path,
               package_src: Path, kexpr: str | None, timeout: int) -> dict[str, str]:
    """Runs one module; returns {test id: outcome} (passed, failed, error, skipped)."""
    xml = workdir / f"{impl}-{module}.xml"
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if impl == "tiledb":
        args = [str(tests_src / f"{module}.py")]
        cwd = workdir
        env.pop("PYTHONPATH", None)
    else:
        shim = make_shim(workdir, tests_src)
        args = [str(shim / "tiledb" / "tests" / f"{module}.py")]
        cwd = shim
        env["PYTHONPATH"] = os.pathsep.join([str(shim), str(package_src)])
    cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}",
           "-o", "junit_family=xunit1",
           # TileDB-Py's pytest settings (its pyproject.toml): classes named *Test* are tests
           "-o", "python_classes=*Test*", "-o", "python_files=test_*.py"]
    cmd += args
    if kexpr:
        cmd += ["-k", kexpr]
    try:
        subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"run_suite: {impl} {module} timed out after {timeout} s", file=sys.stderr)
    if not xml.is_file():
        return {}
    out: dict[str, str] = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        tid = f"{case.get('classname')}::{case.get('name')}"
        # the shim's path prefix differs from the wheel's: keep the part from the module on
        tid = tid[tid.find(module):] if module in tid else tid
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped":
                outcome = "skipped"
        if out.get(tid) != "failed":  # a setup error after a pass counts as a failure
            out[tid] = outcome
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--impl", choices=["tdbfilter", "tiledb", "both"], default="tdbfilter")
    ap.add_argument("--modules", default=",".join(MODULES))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--package-src", default=str(ROOT / "bindings" / "python" / "src"))
    ap.add_argument("--write-baseline", action="store_true")
    ap.add_argument("--write-floor", action="store_true")
    ap.add_argument("--check-floor", action="store_true")
    ap.add_argument("--json", help="write the per-test outcomes here")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per module")
    ap.add_argument("--jobs", type=int, default=2,
                    help="modules run at once (each in its own pytest process)")
    ap.add_argument("-k", dest="kexpr")
    a = ap.parse_args()
    modules = [m for m in a.modules.split(",") if m]
    tests_src = tiledb_tests_dir(a.python)
    missing = [m for m in modules if not (tests_src / f"{m}.py").is_file()]
    if missing:
        raise SystemExit(f"run_suite: TileDB-Py has no module(s) {missing}")
    impls = ["tiledb", "tdbfilter"] if a.impl == "both" else [a.impl]
    results: dict[str, dict[str, dict[str, str]]] = {}
    with tempfile.TemporaryDirectory(prefix="tiledb-py-suite-") as tmp:
        if "tdbfilter" in impls:
            make_shim(Path(tmp), tests_src)  # before the workers start: they share it
        # The longest modules first, so that the last to finish is a short one.
        order = sorted(modules, key=lambda m: m != "test_libtiledb")
        jobs = [(impl, m) for impl in impls for m in order]
        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            done = pool.map(lambda job: run_module(a.python, job[0], job[1], Path(tmp),
                                                   tests_src, Path(a.package_src), a.kexpr,
                                                   a.timeout), jobs)
            for (impl, m), r in zip(jobs, done):
                results.setdefault(impl, {})[m] = r
                if not r:
                    print(f"run_suite: {impl} {m}: no results (collection failed?)",
                          file=sys.stderr)

    baseline: dict[str, list[str]] = json.loads(BASELINE.read_text()) if BASELINE.is_file() else {}
    if "tiledb" in results:
        fresh = {m: sorted(t for t, o in r.items() if o == "passed")
                 for m, r in results["tiledb"].items()}
        if a.write_baseline:
            baseline.update(fresh)
            BASELINE.write_text(json.dumps(dict(sorted(baseline.items())), indent=1) + "\n")
        else:
            baseline = {**baseline, **fresh}

    rows, floor_now = [], {}
    print(f"{'module':28} {'tests':>6} {'tiledb':>7} {'ours':>6} {'both':>6} {'%':>5}")
    tot = [0, 0, 0, 0]
    for m in modules:
        ref = set(baseline.get(m, []))
        ours = results.get("tdbfilter", {}).get(m, {})
        total = len(ours) if ours else len(results.get("tiledb", {}).get(m, {}))
        ours_pass = {t for t, o in ours.items() if o == "passed"}
        both = len(ours_pass & ref)
        pct = 100.0 * both / len(ref) if ref else 0.0
        print(f"{m:28} {total:6} {len(ref):7} {len(ours_pass):6} {both:6} {pct:5.1f}")
        for i, v in enumerate((total, len(ref), len(ours_pass), both)):
            tot[i] += v
        floor_now[m] = both
        rows.append((m, total, len(ref), len(ours_pass), both))
    pct = 100.0 * tot[3] / tot[1] if tot[1] else 0.0
    print(f"{'TOTAL':28} {tot[0]:6} {tot[1]:7} {tot[2]:6} {tot[3]:6} {pct:5.1f}")
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    status = 0
    if "tdbfilter" in results:
        if a.write_floor:
            FLOOR.write_text(json.dumps({"total": tot[3], "modules": floor_now}, indent=1) + "\n")
        if a.check_floor:
            floor = json.loads(FLOOR.read_text())
            if tot[3] < floor["total"]:
                print(f"run_suite: {tot[3]} tests pass on both, below the floor "
                      f"{floor['total']}", file=sys.stderr)
                status = 1
            for m, n in floor["modules"].items():
                if m in floor_now and floor_now[m] < n:
                    print(f"run_suite: {m}: {floor_now[m]} pass on both, below the floor {n}",
                          file=sys.stderr)
                    status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
