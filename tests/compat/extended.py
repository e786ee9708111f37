"""Worker entry for the extended suites (suites.py): build, write and check one array."""

from __future__ import annotations

import os
import traceback

import suites
from checks import Result
from fieldcheck import ArrayRun

_LIB = None


def run_job(job) -> list[dict]:
    """job = {"job": (suite, key), "lib": path or None, "workdir": dir, "keep": bool}."""
    global _LIB
    if job["lib"] and _LIB is None:
        from tdbfilter_ctypes import Library
        _LIB = Library(job["lib"])
    suite, key = job["job"]
    try:
        spec, fields = suites.build(job["job"])
    except Exception as e:
        return [Result(f"(build {key})", "-", "-", "-", "P", "fail",
                       f"building the case failed: {e!r}\n{traceback.format_exc(limit=4)}",
                       {"suite": suite}).to_dict()]
    run = ArrayRun(spec, fields, job["workdir"], _LIB if job["lib"] else None, job.get("keep", False))
    try:
        results = run.run()
    except Exception as e:
        results = [Result(f"(array {spec.label})", "-", "-", "-", "P", "fail",
                          f"exception: {e!r}\n{traceback.format_exc(limit=4)}", {"suite": suite})]
    return [r.to_dict() for r in results]


def job_weight(job) -> int:
    """Rough cost, to start the biggest jobs first."""
    suite, key = job
    if suite == "fixed2":
        import arraygen
        tc = next(t for t in arraygen.TILE_CONFIGS if t.name == key[0])
        dt = next(d for d in suites.FIXED2_DTYPES if d.name == key[2])
        return tc.extent * tc.tiles * dt.cell_size * 3
    if suite == "var":
        ds = key.split("/")[0]
        return {"ascii-70k": 3_000_000, "utf8-longrun": 3_000_000, "ascii-long": 2_000_000,
                "i64-big": 2_500_000, "i32-allempty": 2_500_000}.get(ds, 500_000)
    return 300_000


def workdir_for(root: str) -> str:
    d = os.path.join(root, "ext")
    os.makedirs(d, exist_ok=True)
    return d


def dispatch(job) -> list[dict]:
    """Pool entry for base (checks.run_job) and extended jobs."""
    if "job" in job:
        return run_job(job)
    import checks
    return checks.run_job(job)
