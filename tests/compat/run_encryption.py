#!/usr/bin/env python3
"""AES-256-GCM compatibility harness: libtdbfilter vs encrypted TileDB 2.30 arrays.

Writes encrypted arrays with TileDB-Py (sm.encryption_type AES_256_GCM; fixed,
var-size, nullable, sparse; tiles under and over 64 KiB; edge cases), plus a
few unencrypted twins for the generic-tile checks, and checks every tile and
every generic tile (see encryption_checks.py for the check letters). The
AES stage is checked independently with Python `cryptography` (aes_ref.py).

    .venv/bin/pip install -r tests/compat/requirements-encryption.txt
    .venv/bin/python tests/compat/run_encryption.py [--lib PATH] [--quick] [--json OUT]

Exit status: 0 if nothing failed, 1 if a check failed, 2 on usage / setup errors.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import encryption_cases as ec  # noqa: E402

CHECKS = "PDAENR"
STATUS_CHAR = {"pass": None, "differs": "lower", "fail": "x"}
LEGEND = {
    "P": "harness vs docs/FORMAT.md: AES layout of TileDB's tiles, Python decryption, chunking, reference decode",
    "D": "library with the key decodes TileDB's tiles",
    "A": "TileDB's tiles decrypted in Python = library's unencrypted filtering; decode without key",
    "E": "library's encrypted tiles: Python decryption = its unencrypted filtering; sizes; markers",
    "N": "wrong key / tampered ciphertext, tag, IV -> DECRYPTION_FAILED; no key -> error; fresh IVs",
    "R": "TileDB-Py reads the array with the library's files substituted",
}


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=None,
                    help="libtdbfilter.so (default: $TDBFILTER_LIB or target/release/libtdbfilter.so)")
    ap.add_argument("--no-lib", action="store_true", help="only the harness-side checks (P)")
    ap.add_argument("--quick", action="store_true", help="a smaller set of arrays (~40 s)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    ap.add_argument("--workdir", help="where to write arrays (default: a fresh temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the arrays written")
    ap.add_argument("--json", metavar="PATH", help="write all results as JSON")
    ap.add_argument("--only", help="comma-separated substrings: run only arrays whose label contains one")
    return ap.parse_args(argv)


def _char(check: str, results: list) -> str:
    if not results:
        return "."
    st = {r["status"] for r in results}
    if "fail" in st:
        return "x"
    if "differs" in st:
        return check.lower()
    return check


def print_report(results: list, header: list):
    for line in header:
        print(line)
    print()
    print("Checks: " + "; ".join(f"{k} {v}" for k, v in LEGEND.items()))
    print("        letter = pass, lower case = passes with an explained difference, x = fail, "
          ". = not applicable")
    by_array = {}
    for r in results:
        by_array.setdefault((r["group"], r["array"]), []).append(r)
    width = max([len(r["row"]) for r in results] + [20])
    for (group, label) in sorted(by_array):
        rs = by_array[(group, label)]
        print()
        print(f"[{label}]")
        rows = []
        for r in rs:
            if r["row"] not in rows:
                rows.append(r["row"])
        for row in rows:
            cells = []
            for c in CHECKS:
                cells.append(_char(c, [r for r in rs if r["row"] == row and r["check"] == c]))
            extra = ""
            notes = [r["detail"] for r in rs if r["row"] == row and r["status"] in ("differs",) and r["detail"]]
            if notes:
                extra = "  (" + notes[0][:90] + ("..." if len(notes[0]) > 90 else "") + ")"
            print(f"  {row:<{width}}  {' '.join(cells)}{extra}")
    print()
    print("By check:   " + "   ".join(
        f"{c} {sum(1 for r in results if r['check'] == c and r['status'] in ('pass', 'differs'))}/"
        f"{sum(1 for r in results if r['check'] == c)}" for c in CHECKS)
        + "   (passed/run)")
    groups = sorted({r["group"] for r in results})
    print("By group:   " + "   ".join(
        f"{g} {sum(1 for r in results if r['group'] == g and r['status'] == 'fail')} failed" for g in groups))
    fails = [r for r in results if r["status"] == "fail"]
    if fails:
        print()
        print("Failures:")
        for r in fails:
            print(f"  [{r['array']}] {r['row']} {r['check']}: {r['detail']}")
    arr_notes = [r for r in results if r["row"] == "(array)" and r["status"] == "pass" and r["detail"]]
    if arr_notes:
        print()
        print("Notes:")
        for r in arr_notes:
            print(f"  [{r['array']}] {r['detail']}")


def counts(results) -> tuple[int, int]:
    passed = sum(1 for r in results if r["status"] in ("pass", "differs"))
    failed = sum(1 for r in results if r["status"] == "fail")
    return passed, failed


def main(argv=None):
    args = parse_args(argv)
    from tdbfilter_ctypes import default_library_path
    header = []
    lib_path = None
    try:
        import cryptography  # noqa: F401
    except ImportError:
        print("the `cryptography` package is missing: pip install -r tests/compat/requirements-encryption.txt",
              file=sys.stderr)
        return 2
    if not args.no_lib:
        lib_path = os.path.abspath(args.lib or default_library_path())
        if not os.path.exists(lib_path):
            print(f"library not found: {lib_path} (build it, pass --lib, or use --no-lib)", file=sys.stderr)
            return 2
        from crypto_ctypes import CryptoLibrary, default_header, header_declares
        lib = CryptoLibrary(lib_path)
        if not lib.has_key_api:
            print(f"{lib_path} has no tdb_pipeline_set_encryption_key", file=sys.stderr)
            return 2
        if not lib.has_generic_api:
            # Missing symbols fail the run: the generic-tile checks D/E/N/R cannot be skipped.
            declared = [n for n in lib.generic_missing if header_declares(default_header(), n)]
            print(f"{lib_path} lacks the generic tile API: {', '.join(lib.generic_missing)}"
                  + (f" (declared in the header: {', '.join(declared)})" if declared else ""),
                  file=sys.stderr)
            return 2
        header.append(f"library: {lib_path} (tdb_version {lib.version()!r}); generic tile API present"
                      + (f" with {', '.join(lib.generic_extras)}" if lib.generic_extras else ""))
    else:
        header.append("library: not used (--no-lib): only harness checks P")
    import cryptography as cg
    import tiledb
    header.append(f"TileDB-Py {tiledb.__version__}, libtiledb {'.'.join(map(str, tiledb.libtiledb.version()))}, "
                  f"cryptography {cg.__version__}")
    keys = ec.job_keys(args.quick)
    if args.only:
        subs = [s for s in args.only.split(",") if s]
        keys = [k for k in keys if any(s in ec.build(*k).label for s in subs)]
        if not keys:
            print("no array matches --only", file=sys.stderr)
            return 2
    workdir = args.workdir or tempfile.mkdtemp(prefix="tdbfilter-enc-")
    os.makedirs(workdir, exist_ok=True)
    jobs = [{"kind": k, "args": a, "lib": lib_path, "root": workdir, "keep": args.keep} for k, a in keys]

    def weight(j):
        a = j["args"]
        w = 1
        if "large" in a or (j["kind"] == "plain" and "large" in a[1]):
            w = 20
        if j["kind"] in ("sparse", "var"):
            w *= 3
        return -w
    jobs.sort(key=weight)
    header.append(f"{len(jobs)} arrays ({'quick' if args.quick else 'full'}), {args.jobs} workers, workdir {workdir}")

    import encryption_checks as chk
    t0 = time.time()
    results = []
    import multiprocessing
    with ProcessPoolExecutor(max_workers=max(1, args.jobs), mp_context=multiprocessing.get_context("spawn")) as ex:
        futs = {ex.submit(chk.run_job, j): j for j in jobs}
        for fut in as_completed(futs):
            j = futs[fut]
            try:
                results.extend(fut.result())
            except BrokenProcessPool as e:
                results.append(chk.Result(j["kind"], str(j["args"]), "(job)", "P", "fail",
                                          f"worker died: {e!r}").to_dict())
            except Exception as e:
                results.append(chk.Result(j["kind"], str(j["args"]), "(job)", "P", "fail",
                                          f"job raised: {e!r}").to_dict())
    header.append(f"elapsed {time.time() - t0:.1f} s")
    if not args.keep and not args.workdir:
        import shutil
        shutil.rmtree(workdir, ignore_errors=True)
    print_report(results, header)
    passed, failed = counts(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"library": lib_path, "quick": args.quick, "results": results}, f, indent=1)
    print()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
