#!/usr/bin/env python3
"""Runs every C test of a CMake build tree under valgrind, with the command and environment
ctest has for it (scripts/test.d/65-sanitizers.sh).

The tests are ctest's, labelled `shared` (every c-tests/*.c against libtdbfilter.so) or `hdf5`
(the HDF5 plugin's tests), read with `ctest --show-only=json-v1`. The list is checked against
the sources: each c-tests/<name>.c must be the ctest test <name>_shared and each
plugins/hdf5/tests/<name>.c the command of one test, and each test's executable must exist, so
a new test cannot be left out and a missing binary fails. TDB_TEST_LIGHT=1 gives the heaviest
tests (test_filter, test_threads) a smaller workload of the same checks. Two tests run at a
time; each one's time and last line are printed.

Usage: valgrind-ctest.py BUILD_DIR
"""

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

VALGRIND = ["valgrind", "-q", "--error-exitcode=1", "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect"]
# Started first: the longest under valgrind, so that the two workers finish together.
LONGEST = ["test_filter_shared", "test_threads_shared", "test_errors_shared"]


def fail(msg):
    print(f"valgrind-ctest: {msg}", file=sys.stderr)
    sys.exit(1)


def ctest_tests(build):
    """name -> (command, environment, labels) of every test ctest knows in `build`."""
    out = subprocess.run(["ctest", "--test-dir", str(build), "--show-only=json-v1"],
                         check=True, capture_output=True, text=True).stdout
    tests = {}
    for t in json.loads(out)["tests"]:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        tests[t["name"]] = (t.get("command") or [], props.get("ENVIRONMENT", []),
                            props.get("LABELS", []))
    return tests


def selected(root, build):
    """The tests to run, checked against the C sources."""
    tests = ctest_tests(build)
    chosen = {n: t for n, t in tests.items() if {"shared", "hdf5"} & set(t[2])}
    sources = sorted((root / "c-tests").glob("*.c"))
    if not sources:
        fail("no C tests in c-tests/")
    for src in sources:
        if f"{src.stem}_shared" not in chosen:
            fail(f"{src.relative_to(root)} has no ctest test {src.stem}_shared in {build}")
    for src in sorted((root / "plugins" / "hdf5" / "tests").glob("*.c")):
        if not any(cmd and Path(cmd[0]).name == src.stem for cmd, _, _ in chosen.values()):
            fail(f"{src.relative_to(root)} has no ctest test running {src.stem} in {build} "
                 "(configure with -DTDBFILTER_BUILD_HDF5_PLUGIN=ON)")
    for name, (cmd, _, _) in chosen.items():
        if not cmd or not os.access(cmd[0], os.X_OK):
            what = cmd[0] if cmd else "(ctest lists no command: it was not built)"
            fail(f"{name}: the executable is missing: {what}; build {build} first")
    order = [n for n in LONGEST if n in chosen] + sorted(n for n in chosen if n not in LONGEST)
    return [(n, chosen[n]) for n in order]


def run(build, name, test):
    cmd, environment, _ = test
    env = dict(os.environ, TDB_TEST_LIGHT="1")
    env.update(e.split("=", 1) for e in environment)
    log = build / f"{name}.valgrind.log"
    t0 = time.monotonic()
    with open(log, "w") as f:
        rc = subprocess.run(VALGRIND + cmd, stdout=f, stderr=subprocess.STDOUT, env=env,
                            cwd=build).returncode
    lines = [l for l in log.read_text(errors="replace").splitlines()
             if l.strip() and not l.startswith("==")]
    return name, rc, time.monotonic() - t0, log, lines[-1] if lines else ""


def main():
    root = Path(__file__).resolve().parents[1]
    build = Path(sys.argv[1]).resolve()
    tests = selected(root, build)
    t0 = time.monotonic()
    failed = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for name, rc, secs, log, last in pool.map(lambda t: run(build, *t), tests):
            print(f"valgrind {name}: {secs:.0f} s: {last}", flush=True)
            if rc != 0:
                print(log.read_text(errors="replace"), file=sys.stderr)
                failed.append(name)
    print(f"valgrind: {len(tests)} C tests, {len(failed)} failed, {time.monotonic() - t0:.0f} s")
    if failed:
        fail(f"failed under valgrind: {', '.join(failed)} (logs: {build}/<test>.valgrind.log)")


main()
