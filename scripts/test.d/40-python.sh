#!/usr/bin/env bash
# step: Python package (bindings/python): ctypes declarations against the header, pytest (every filter, dtypes, TileDB tiles, errors, threads, leaks, numcodecs, zarr, arrays against TileDB-Py)
set -euo pipefail
root="${TDBF_ROOT:?}"
prefix="${TDBF_PREFIX:?}"
cd "$root"
pip() { .venv/bin/python -m pip install -q --disable-pip-version-check "$@"; }

# Every C function the package declares exists in the header with the same argument types.
.venv/bin/python bindings/python/check_ctypes.py

# The package with its test requirements (pytest, numcodecs, zarr, tiledb): none is optional.
# The install builds out of the checkout (flit_core): it must leave no file there, not even an
# ignored one (setuptools' in-tree build/lib shipped stale modules into later installs).
files() { git status --porcelain --ignored --untracked-files=all -- bindings/python | sort; }
in_git=false
git rev-parse --is-inside-work-tree >/dev/null 2>&1 && in_git=true
$in_git && before=$(files)
pip "./bindings/python[test]"
if $in_git; then
  left=$(comm -13 <(echo "$before") <(files))
  if [ -n "$left" ]; then
    echo "pip install ./bindings/python left files in the checkout:" >&2
    echo "$left" >&2
    exit 1
  fi
fi

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
  export TDBFILTER_LIBRARY="$root/target/release/libtdbfilter.so"
fi
# Run from the tests directory so that the installed package (not the source tree) is imported.
# A skipped test fails (tests/conftest.py): a missing prerequisite is not a pass.
cd bindings/python/tests
status=0
"$root/.venv/bin/python" -m pytest -q -p no:cacheprovider . || status=$?
# pytest's 5 means "no tests collected": a failure here too.
exit "$status"
