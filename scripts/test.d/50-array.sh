# step: array reader and creation (src/array, src/ffi/array.rs, tdbf array): TileDB-Py differential suites (reads through the tdbfilter Python package; tdbf array create against TileDB-Py's schemas), tdbf array info/cat/verify, and the array benchmark in quick mode (checks our reads equal TileDB-Py's)
set -euo pipefail
cd "$TDBF_ROOT"
# The suites need TileDB-Py 0.36.1 (libtiledb 2.30), numpy and cryptography (encrypted schema
# files are decrypted independently), which test-all.sh installs into .venv; install them when
# this step runs on its own.
if ! python -c "import tiledb, numpy, cryptography" 2>/dev/null; then
  python -m pip install -q --disable-pip-version-check -r tests/compat/requirements.txt \
    -r tests/compat/requirements-encryption.txt
fi
# The suite reads through the shipped Python package: this checkout's.
python -m pip install -q --disable-pip-version-check ./bindings/python
lib="$TDBF_ROOT/target/release/libtdbfilter.so"
if [ -f "$TDBF_PREFIX/lib/libtdbfilter.so" ]; then
  lib="$TDBF_PREFIX/lib/libtdbfilter.so"
fi
python tests/array/run_array_tests.py --lib "$lib" --tdbf "$TDBF_ROOT/target/release/tdbf"
# Array creation: schemas TileDB-Py creates, cloned through tdbf array info --json / create,
# byte-identical schema payloads; hand-written JSON; TileDB's refusals with its reasons.
python tests/array/run_create_tests.py --tdbf "$TDBF_ROOT/target/release/tdbf"
python bench/compare_arrays.py --quick --workdir "$TDBF_ROOT/build/bench-arrays-quick" --lib "$lib"
