#!/usr/bin/env python3
"""TileDB 2.30 compatibility harness for libtdbfilter.

Writes arrays with TileDB-Py, then checks the library against TileDB's tiles
and schema (see checks.py and fieldcheck.py for the check letters). Suites:
``base`` (fixed-size attributes x shuffles/checksums/compressors, arraygen.py)
and the extended ``fixed2``, ``var``, ``nullable``, ``sparse``, ``webp``
(suites.py). Exit status: 0 if nothing failed, 1 otherwise, 2 on usage or
setup errors.

    .venv/bin/python tests/compat/run_compat.py [--lib PATH] [--quick] [--json OUT]
    .venv/bin/python tests/compat/run_compat.py --suites var,sparse   # a subset of suites
    .venv/bin/python tests/compat/run_compat.py --no-lib     # harness/spec checks only
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import arraygen  # noqa: E402
import checks  # noqa: E402
import extended  # noqa: E402
import refdecode  # noqa: E402
import refdecode_ext  # noqa: E402
import report  # noqa: E402
import report_ext  # noqa: E402
import suites  # noqa: E402
from tdbfilter_ctypes import Library, check_header, default_library_path  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
JOB_TIMEOUT = 600  # seconds without any job finishing before the run is declared hung

# --quick: (tile config, shapes, datatypes or None for all) groups, about a fifth of the full
# matrix; still every pipeline x datatype, multi-chunk tiles, 65532-byte chunks and 3392-byte tails.
QUICK = [
    ("small", ["random", "runs"], None),
    ("odd", ["random"], None),
    ("large", ["sorted"], ["int32", "i32x3"]),
]


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=None,
                    help="libtdbfilter.so (default: $TDBFILTER_LIB or target/release/libtdbfilter.so)")
    ap.add_argument("--no-lib", action="store_true",
                    help="run only the harness-side checks (P), without the library")
    ap.add_argument("--quick", action="store_true",
                    help="smaller matrix: small tiles x (random, runs), odd tiles x random, "
                         "large tiles x sorted for int32 and i32x3")
    ap.add_argument("--json", metavar="PATH", help="write a JSON summary here")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    ap.add_argument("--workdir", help="where to write arrays (default: a fresh temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the arrays written")
    ap.add_argument("--dtypes", help="comma-separated datatype subset: " +
                    ",".join(d.name for d in arraygen.DATATYPES))
    ap.add_argument("--shapes", help="comma-separated shape subset: " + ",".join(arraygen.SHAPES))
    ap.add_argument("--tiles", help="comma-separated tile config subset: " +
                    ",".join(t.name for t in arraygen.TILE_CONFIGS))
    ap.add_argument("--suites", help="comma-separated suites (default all): base," + ",".join(suites.SUITES) +
                    "; --dtypes/--shapes/--tiles select within base")
    return ap.parse_args(argv)


def _subset(arg, default, allowed, what):
    if not arg:
        return default
    chosen = [x.strip() for x in arg.split(",") if x.strip()]
    bad = [x for x in chosen if x not in allowed]
    if bad:
        raise SystemExit(f"unknown {what}: {', '.join(bad)} (choose from {', '.join(allowed)})")
    return chosen


def self_tests(lib_path):
    """Harness self-checks that need no TileDB array; returns Result dicts."""
    out = []

    def add(status, detail):
        out.append(checks.Result("(selftest)", "-", "-", "-", "P", status, detail).to_dict())

    errs = refdecode.check_spec_vectors()
    add("fail" if errs else "pass", "; ".join(errs) or "docs/FORMAT.md §9.2 vectors decode")
    errs = refdecode_ext.check_spec_vectors()
    add("fail" if errs else "pass", "; ".join(errs) or "docs/FORMAT.md §9.2 vectors of the extended decoder decode")
    header = os.path.join(REPO, "include", "tdbfilter.h")
    if lib_path and os.path.exists(header):
        probs = check_header(header)
        add("fail" if probs else "pass", "; ".join(probs) or "header constants match the binding")
    return out


def main(argv=None):
    args = parse_args(argv)
    all_dt = [d.name for d in arraygen.DATATYPES]
    all_tc = [t.name for t in arraygen.TILE_CONFIGS]
    dtypes = _subset(args.dtypes, all_dt, all_dt, "datatype")
    shapes = _subset(args.shapes, arraygen.SHAPES, arraygen.SHAPES, "shape")
    tiles = _subset(args.tiles, all_tc, all_tc, "tile config")
    chosen = _subset(args.suites, ["base"] + suites.SUITES, ["base"] + suites.SUITES, "suite")
    combos = [(t, s, d) for t in tiles for d in dtypes for s in shapes] if "base" in chosen else []
    if args.quick:
        quick = {(t, s, d) for t, ss, ds in QUICK for s in ss for d in (ds or all_dt)}
        combos = [c for c in combos if c in quick]
    ext_jobs = suites.jobs([x for x in suites.SUITES if x in chosen], args.quick)
    if not combos and not ext_jobs:
        raise SystemExit("the selection is empty")

    lib_path = None
    header_lines = []
    if not args.no_lib:
        lib_path = os.path.abspath(args.lib or default_library_path())
        if not os.path.exists(lib_path):
            print(f"library not found: {lib_path} (build it, pass --lib, or use --no-lib)", file=sys.stderr)
            return 2
        lib = Library(lib_path)  # fail early on missing symbols
        header_lines.append(f"library: {lib_path} (tdb_version {lib.version()!r})" +
                            (f"; missing var-size API: {', '.join(lib.missing)}" if lib.missing else ""))
    else:
        header_lines.append("library: not used (--no-lib): only harness checks P")
    import tiledb
    header_lines.append(f"TileDB-Py {tiledb.__version__}, libtiledb {'.'.join(map(str, tiledb.libtiledb.version()))}")

    workdir = args.workdir or tempfile.mkdtemp(prefix="tdbfilter-compat-")
    os.makedirs(workdir, exist_ok=True)
    jobs = [{"dtype": d, "shape": s, "tiles": t, "lib": lib_path, "workdir": workdir, "keep": args.keep}
            for t, s, d in combos]
    # Largest arrays first so the pool's tail is short.
    size_of = {t.name: t.extent * t.tiles for t in arraygen.TILE_CONFIGS}
    cell = {d.name: d.cell_size for d in arraygen.DATATYPES}
    for j in jobs:
        j["weight"] = size_of[j["tiles"]] * cell[j["dtype"]] * 2
    if combos:
        header_lines.append(f"base: {len(jobs)} arrays x {len(arraygen.PIPELINES)} pipelines "
                            f"({len({c[2] for c in combos})} datatypes, shapes {sorted({c[1] for c in combos})}, "
                            f"tiles {sorted({c[0] for c in combos})}{', quick' if args.quick else ''})")
    ext_dir = extended.workdir_for(workdir)
    for ej in ext_jobs:
        jobs.append({"job": ej, "lib": lib_path, "workdir": ext_dir, "keep": args.keep,
                     "weight": extended.job_weight(ej)})
    if ext_jobs:
        counts = {}
        for sname, _ in ext_jobs:
            counts[sname] = counts.get(sname, 0) + 1
        header_lines.append("extended: " + ", ".join(f"{k} {v} arrays" for k, v in counts.items()) +
                            (" (quick)" if args.quick else ""))
    header_lines.append(f"{args.jobs} workers, workdir {workdir}; WebP reference decoder: "
                        f"{refdecode_ext.webp_decoder_name() or 'none'}")
    jobs.sort(key=lambda j: -j["weight"])

    t0 = time.time()
    results = self_tests(lib_path)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(max(1, args.jobs), maxtasksperchild=8) as pool:
        it = pool.imap_unordered(extended.dispatch, jobs)
        for done in range(len(jobs)):
            try:
                results.extend(it.next(timeout=JOB_TIMEOUT))
            except multiprocessing.TimeoutError:
                # A worker killed by a crash (TileDB or the library) loses its job and the pool
                # would wait for ever: report it and stop.
                results.append(checks.Result("(harness)", "-", "-", "-", "P", "fail",
                                             f"no job finished within {JOB_TIMEOUT} s: a worker crashed or "
                                             f"hung; {len(jobs) - done} job(s) did not report").to_dict())
                pool.terminate()
                break
    header_lines.append(f"elapsed {time.time() - t0:.1f} s")
    if not args.keep and not args.workdir:
        import shutil
        shutil.rmtree(workdir, ignore_errors=True)

    pipelines = [p.name for p in arraygen.PIPELINES]
    base = [r for r in results if report_ext.suite_of(r) == "base"]
    ext = [r for r in results if report_ext.suite_of(r) != "base"]
    if combos:
        report.print_report(base, pipelines, dtypes, header_lines, final_line=False)
    else:
        for line in header_lines:
            print(line)
        fl = report.failure_lines(base)
        if fl:
            print("\n".join(fl))
    report_ext.print_suites(ext)
    fl = report_ext.failure_lines(ext)
    if fl:
        print()
        print("\n".join(fl))
    passed, failed = report.counts(results)
    print()
    print(f"{passed} passed, {failed} failed")
    if args.json:
        report.write_json(args.json, results, {
            "library": lib_path, "tiledb_py": tiledb.__version__,
            "arrays": [{"tiles": t, "shape": s, "dtype": d} for t, s, d in combos], "quick": args.quick,
            "extended_jobs": [list(map(str, j)) for j in ext_jobs],
        })
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
