#!/usr/bin/env bash
# step: Python package (bindings/python): pytest (every filter, TileDB tiles, errors, threads, leaks, numcodecs, zarr)
set -euo pipefail
root="${TDBF_ROOT:?}"
prefix="${TDBF_PREFIX:?}"
cd "$root"
pip() { .venv/bin/python -m pip install -q --disable-pip-version-check "$@"; }
pip "./bindings/python[test]"

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
cd bindings/python/tests
status=0
"$root/.venv/bin/python" -m pytest -q -p no:cacheprovider . || status=$?
# pytest's 5 means "no tests collected": a failure here too.
exit "$status"
