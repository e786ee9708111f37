# step: array reader (src/array, src/ffi/array.rs, tdbf array): TileDB-Py differential suite (through the tdbfilter Python package), tdbf array info/cat/verify, and the array benchmark in quick mode (checks our reads equal TileDB-Py's)
set -euo pipefail
cd "$TDBF_ROOT"
# The suite needs TileDB-Py 0.36.1 (libtiledb 2.30) and numpy, which test-all.sh installs into
# .venv; install them when this step runs on its own.
if ! python -c "import tiledb, numpy" 2>/dev/null; then
  python -m pip install -q --disable-pip-version-check -r tests/compat/requirements.txt
fi
# The suite reads through the shipped Python package: this checkout's.
python -m pip install -q --disable-pip-version-check ./bindings/python
lib="$TDBF_ROOT/target/release/libtdbfilter.so"
if [ -f "$TDBF_PREFIX/lib/libtdbfilter.so" ]; then
  lib="$TDBF_PREFIX/lib/libtdbfilter.so"
fi
python tests/array/run_array_tests.py --lib "$lib" --tdbf "$TDBF_ROOT/target/release/tdbf"
python bench/compare_arrays.py --quick --workdir "$TDBF_ROOT/build/bench-arrays-quick" --lib "$lib"
