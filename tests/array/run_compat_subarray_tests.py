#!/usr/bin/env python3
"""Differential tests of tdbfilter's TileDB-Py API (``tdbfilter.tiledb_compat``) against
TileDB-Py 0.36.1 for ``tiledb.Subarray`` / ``read_subarray`` / ``write_subarray``, numpy
arrays in array metadata and fragment info (schema names, non-empty domains), in both
directions: each scenario writes with one implementation and reads with both, and the
printed results must be identical.

    run_compat_subarray_tests.py [--lib target/debug/libtdbfilter.so]

Each run happens in a child process importing either ``tiledb`` (TileDB-Py) or
``tdbfilter.tiledb_compat as tiledb``; the package is ``bindings/python/src``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Writes the arrays of the scenarios under sys.argv[2].
WRITE = r'''
import os, sys
import numpy as np
root = sys.argv[2]
d = tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=5, dtype=np.int32),
                  tiledb.Dim("e", domain=(-2, 3), tile=2, dtype=np.int32))
s = tiledb.ArraySchema(d, [tiledb.Attr("a", dtype=np.int64), tiledb.Attr("f", dtype=np.float32)])
tiledb.Array.create(os.path.join(root, "dense"), s)
with tiledb.open(os.path.join(root, "dense"), "w", timestamp=1) as A:
    A[:] = {"a": np.arange(60).reshape(10, 6), "f": np.linspace(0, 1, 60, dtype=np.float32).reshape(10, 6)}
with tiledb.open(os.path.join(root, "dense"), "w", timestamp=2) as A:
    sub = tiledb.Subarray(A)
    sub.add_dim_range(0, (2, 3))
    sub.add_dim_range(1, (0, 1))
    A.write_subarray(sub, {"a": -np.arange(4).reshape(2, 2), "f": np.ones((2, 2), np.float32)})
    A.meta["u"] = np.array(["a", "\u00e9", "c"], dtype="U1")
    A.meta["s"] = np.array([[b"x", b"y"]], dtype="S1")
    A.meta["t"] = np.array(["2001-01-01", "2002-02-02"], dtype="M8[D]")
    A.meta["z"] = np.zeros((2, 0), dtype="f4")
sp = tiledb.ArraySchema(tiledb.Domain(
    tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.uint32),
    tiledb.Dim("y", domain=(-1.0, 1.0), tile=0.5, dtype=np.float64)),
    [tiledb.Attr("v", dtype=np.int16)], sparse=True)
tiledb.Array.create(os.path.join(root, "sparse"), sp)
with tiledb.open(os.path.join(root, "sparse"), "w", timestamp=1) as A:
    A[np.arange(0, 40, 2), np.linspace(-1, 1, 20)] = np.arange(20, dtype=np.int16)
se = tiledb.ArraySchemaEvolution()
se.add_attribute(tiledb.Attr("w", dtype=np.int32))
se.array_evolve(os.path.join(root, "sparse"))
with tiledb.open(os.path.join(root, "sparse"), "w", timestamp=2) as A:
    A[[1, 3], [0.0, 0.5]] = {"v": np.array([7, 8], np.int16), "w": np.array([70, 80], np.int32)}
'''

# Reads them back and prints what TileDB-Py's API returns.
READ = r'''
import os, sys
import numpy as np
np.set_printoptions(legacy="1.21")
root = sys.argv[2]
with tiledb.open(os.path.join(root, "dense")) as A:
    S = tiledb.Subarray(A)
    print("default", S.num_dim_ranges(0), S.get_range(0, 0), S.shape())
    S.add_dim_range(0, (1, 3)); S.add_dim_range(0, (4, 4)); S.add_dim_range(0, (8, 9))
    S.add_dim_range(1, (2, 3)); S.add_dim_range(1, (-2, -1))
    print("ranges", S.num_dim_ranges(0), S.num_dim_ranges("e"), S.get_range(0, 1), S.shape())
    for k, v in A.read_subarray(S).items():
        print(k, v.dtype, v.tolist())
    S2 = tiledb.Subarray(A)
    S2.add_ranges([np.array([5, 6, 9, 0]), [(1, 2), np.array([-2, 0])]])
    print("bulk", S2.num_dim_ranges(0), S2.shape(), A.read_subarray(S2)["a"].tolist())
    for bad in [(0, (5, 2)), (0, (0, 10)), (3, (0, 1)), (0, (1.5, 2))]:
        try:
            tiledb.Subarray(A).add_dim_range(*bad)
            print("accepted", bad)
        except tiledb.TileDBError:
            print("refused", bad)
    for k in ("u", "s", "t", "z"):
        v = A.meta[k]
        print("meta", k, v.dtype, v.shape, v.tolist())
with tiledb.open(os.path.join(root, "dense"), attr="f") as A:
    S = tiledb.Subarray(A)
    S.add_dim_range(1, (0, 0))
    print("view", {k: v.tolist() for k, v in A.read_subarray(S).items()})
with tiledb.open(os.path.join(root, "sparse")) as A:
    S = tiledb.Subarray(A)
    S.add_dim_range(0, (2, 20)); S.add_dim_range(0, (30, 31)); S.add_dim_range(1, (-0.5, 0.6))
    r = A.read_subarray(S)
    order = np.lexsort((r["y"], r["x"]))
    for k, v in r.items():
        print(k, v.dtype, v[order].tolist())
fi = tiledb.array_fragments(os.path.join(root, "sparse"))
print("frags", len(fi), fi.timestamp_range, fi.nonempty_domain, fi.cell_num, fi.sparse)
names = sorted(n for n in os.listdir(os.path.join(root, "sparse", "__schema")) if n != "__enumerations")
print("schema names", [names.index(n) for n in fi.array_schema_name])
print("uris", [u.endswith(os.path.basename(u)) and "/__fragments/" in u for u in fi.uri])
'''

IMPORTS = {
    "tiledb": "import tiledb\n",
    "tdbfilter": "import tdbfilter.tiledb_compat as tiledb\n",
}


def run(impl: str, code: str, root: str, lib: str) -> str:
    env = dict(os.environ, TDBFILTER_LIBRARY=lib)
    env["PYTHONPATH"] = str(ROOT / "bindings" / "python" / "src")
    p = subprocess.run([sys.executable, "-c", IMPORTS[impl] + code, impl, root], env=env,
                       capture_output=True, text=True, cwd=tempfile.gettempdir())
    if p.returncode != 0:
        raise SystemExit(f"{impl} failed:\n{p.stderr}")
    return p.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default=str(ROOT / "target" / "debug" / "libtdbfilter.so"))
    a = ap.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory(prefix="tdbf-compat-subarray-") as tmp:
        outputs = {}
        for writer in ("tiledb", "tdbfilter"):
            root = os.path.join(tmp, writer)
            os.makedirs(root)
            run(writer, WRITE, root, a.lib)
            for reader in ("tiledb", "tdbfilter"):
                outputs[(writer, reader)] = run(reader, READ, root, a.lib)
        ref = outputs[("tiledb", "tiledb")]
        if os.environ.get("SHOW"):
            print(ref)
        if not ref.strip():
            raise SystemExit("the TileDB-Py run printed nothing")
        for key, out in outputs.items():
            if out != ref:
                failures += 1
                print(f"FAIL written by {key[0]}, read by {key[1]}:")
                for x, y in zip(ref.splitlines(), out.splitlines()):
                    if x != y:
                        print(f"  tiledb:    {x}\n  this run:  {y}")
            else:
                print(f"ok   written by {key[0]}, read by {key[1]} "
                      f"({len(out.splitlines())} lines)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
