# step: array reader and writer (src/array, ffi/src/array/, tdbf array): TileDB-Py differential suites (reads through the tdbfilter Python package; tdbf array create against TileDB-Py's schemas; the sparse-write order and R-tree; tdbf array write against TileDB-Py: fragment files byte for byte, reads, aggregates, consolidation; SIGKILL crash consistency of writes, consolidation and vacuum; the lifecycle: vacuum, delete, evolution, groups), tdbf array info/cat/verify, and the array read and write benchmarks in quick mode (check that our reads equal TileDB-Py's and that both writers' arrays read equal)
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
# The writer suite decrypts encrypted fragments to compare them (AES-GCM IVs are random).
if ! python -c "import cryptography" 2>/dev/null; then
  python -m pip install -q --disable-pip-version-check -r tests/compat/requirements-encryption.txt
fi
lib="$TDBF_BUILD/libtdbfilter.so"
if [ -f "$TDBF_PREFIX/lib/libtdbfilter.so" ]; then
  lib="$TDBF_PREFIX/lib/libtdbfilter.so"
fi
# What the suites check:
# Queries (src/array/query, tdbf array cat --range/--layout, tdbf array agg) against TileDB-Py on
# random dense and sparse arrays: multi-range reads in every layout, aggregates, refusals.
# Array creation: schemas TileDB-Py creates, cloned through tdbf array info --json / create,
# byte-identical schema payloads; hand-written JSON; TileDB's refusals with its reasons.
# Sparse writes: global order (row/col/Hilbert, strings), duplicate and domain errors, R-tree
# bytes, against TileDB-Py on random arrays (drives tests/array/global_order_oracle.rs).
# Writes (tdbf array write) against TileDB-Py's: fragment files byte for byte, reads,
# aggregates, verify, consolidation.
# Array metadata (tdbf array metadata put/delete) read by TileDB-Py, plain and encrypted, with
# time travel.
# tdbfilter's TileDB-Py API against TileDB-Py, written by each and read by both: Subarray
# ranges (read_subarray, write_subarray, refusals), numpy metadata values, fragment info.
# Crash consistency: the writer killed (SIGKILL) at random and at observed points of dense and
# sparse, streamed and var-size writes; the array reads exactly as before or as after the write
# through TileDB-Py and the tdbfilter package, and verify names only the uncommitted leftover.
# Crash safety of consolidation (fragments dense and sparse, commits, fragment_meta, array_meta)
# and vacuum (fragments, commits, fragment_meta, array_meta; metadata compared too):
# examples/lifecycle.rs killed (SIGKILL) before each of its file-changing calls (the
# commit and vacuum-file calls first) and at random times; both readers see exactly the cells,
# the fragment list the files say, verify finds no damage, and a rerun completes the operation.
# --runs 0 runs every kill point (about 320 runs).
# The array lifecycle and groups (examples/lifecycle.rs, built by the build step) against TileDB-Py: vacuum of every
# mode, uncommitted leftovers, delete_fragments, delete_array, schema evolution, groups, both
# directions.
# Consolidation (fragments dense and sparse, commits, fragment_meta, array_meta) against TileDB's on twin arrays:
# the same plan, reads and fragment list, data files byte for byte; the 200-fragment speed ratio.
# Deletes (.del commits) against TileDB-Py, both directions: reads at every timestamp, our .del
# byte-identical, TileDB's consolidations (with and without purge) read, ours with and without
# purge (delete metadata dt.tdb/dci.tdb) read equal and byte-identical; the
# read-through-a-delete ratio.
# The write benchmark in quick mode: our writer (bench/rust/write_bench.rs, built by the build
# step as an example of the tdbf crate) and TileDB-Py write the same cells of every benchmark
# array and of the small writes; both arrays must read equal.
# The suites are independent (each works in its own temporary folders): they run two at a time
# (scripts/lanes.sh), the longest first (as measured), each one's output printed whole when it ends.
source scripts/lanes.sh
tdbf_lanes \
  writer "python tests/array/run_writer_tests.py --tdbf '$TDBF_BUILD/tdbf'" \
  global-order "python tests/array/run_global_order_tests.py --cases 400" \
  crash "python tests/array/run_crash_tests.py --tdbf '$TDBF_BUILD/tdbf' --lib '$lib' --runs 60" \
  lifecycle-crash "python tests/array/run_lifecycle_crash_tests.py --bin '$TDBF_BUILD/examples/lifecycle' --tdbf '$TDBF_BUILD/tdbf' --lib '$lib' --runs 72" \
  arrays "python tests/array/run_array_tests.py --lib '$lib' --tdbf '$TDBF_BUILD/tdbf'" \
  bench-reads "python bench/compare_arrays.py --quick --workdir '$TDBF_ROOT/build/bench-arrays-quick' --lib '$lib'" \
  queries "python tests/array/run_query_tests.py --tdbf '$TDBF_BUILD/tdbf' --arrays 40" \
  deletes "python tests/array/run_delete_tests.py --bin '$TDBF_BUILD/examples/lifecycle' --tdbf '$TDBF_BUILD/tdbf'" \
  consolidate "python tests/array/run_consolidate_tests.py --bin '$TDBF_BUILD/examples/lifecycle' --tdbf '$TDBF_BUILD/tdbf'" \
  create "python tests/array/run_create_tests.py --tdbf '$TDBF_BUILD/tdbf'" \
  compat-subarray "python tests/array/run_compat_subarray_tests.py --lib '$lib'" \
  bench-writes "python bench/compare_writes.py --quick --workdir '$TDBF_ROOT/build/bench-writes-quick' --bench '$TDBF_BUILD/examples/write_bench'" \
  lifecycle "python tests/array/run_lifecycle_tests.py --bin '$TDBF_BUILD/examples/lifecycle'" \
  metadata "python tests/array/run_metadata_tests.py --tdbf '$TDBF_BUILD/tdbf'"
