#!/usr/bin/env bash
# step: Python package (bindings/python): ctypes declarations against the header, pytest (every filter, dtypes, TileDB tiles, errors, threads, leaks, no avoidable copies, numcodecs, zarr, arrays against TileDB-Py), the blosc2 benchmark's round trips
set -euo pipefail
root="${TDBF_ROOT:?}"
prefix="${TDBF_PREFIX:?}"
cd "$root"
pip() { .venv/bin/python -m pip install -q --disable-pip-version-check "$@"; }

# Every C function the package declares exists in the header with the same argument types.
.venv/bin/python bindings/python/check_ctypes.py

# The package with its test requirements (pytest, numcodecs, zarr, tiledb, blosc2): none is
# optional. Installed without a bundled library (TDBFILTER_WHEEL_LIBRARY=none), as a package
# over the installed C library; 42-wheel.sh tests the wheel with the library inside.
# The install builds out of the checkout (flit_core): it must leave no file there, not even an
# ignored one (setuptools' in-tree build/lib shipped stale modules into later installs).
. scripts/test.d/lib/leaves_no_files.sh
TDBFILTER_WHEEL_LIBRARY=none leaves_no_files bindings/python pip "./bindings/python[test]"

# The installed prefix, found through pkg-config as a user's would be (no TDBFILTER_LIBRARY).
if [ -f "$prefix/lib/pkgconfig/tdbfilter.pc" ]; then
  PKG_CONFIG_PATH="$prefix/lib/pkgconfig" .venv/bin/python -c '
import numpy as np, tdbfilter
from tdbfilter import _lib
assert "'"$prefix"'" in _lib._candidates()[0], _lib._candidates()
p = tdbfilter.Pipeline.from_spec("bitshuffle,zstd:3")
assert (p.unfilter(p.filter(np.arange(10, dtype=np.int64)), np.int64) == np.arange(10)).all()
print("python: library found through pkg-config at", _lib._candidates()[0])'
  export TDBFILTER_LIBRARY="$prefix/lib/libtdbfilter.so"
else
  export TDBFILTER_LIBRARY="$TDBF_BUILD/libtdbfilter.so"
fi
# Run from the tests directory so that the installed package (not the source tree) is imported.
# A skipped test fails (tests/conftest.py): a missing prerequisite is not a pass.
cd bindings/python/tests
status=0
"$root/.venv/bin/python" -m pytest -q -p no:cacheprovider . || status=$?
# pytest's 5 means "no tests collected": a failure here too.
[ "$status" -eq 0 ] || exit "$status"

# The benchmark against python-blosc2 (bench/compare_blosc2.py): every row's round trip, on the
# installed package.
cd "$root"
.venv/bin/python bench/compare_blosc2.py --quick
