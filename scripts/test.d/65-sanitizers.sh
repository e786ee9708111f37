#!/usr/bin/env bash
# step: C tests under AddressSanitizer+UBSan and under valgrind; kernel and filter tests at every SIMD level (TDBFILTER_SIMD)
#
# ASan/UBSan instrument the C side of the ABI (the C tests, built against the release library:
# one build per profile, so the Rust side is not rebuilt with -Zsanitizer); valgrind checks
# both sides, the Rust library included, for invalid accesses and leaks, on every C test (the
# HDF5 plugin's included).
set -euo pipefail
root="${TDBF_ROOT:?}"
cd "$root"
if ! command -v valgrind >/dev/null; then
  apt-get update -qq && apt-get install -y -qq valgrind >/dev/null
fi

# 1. The C tests again, instrumented (cargo is a no-op: same target directory and profile).
t0=$SECONDS
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release -DTDBFILTER_C_TESTS_SANITIZE=ON \
  -DTDBFILTER_BUILD_HDF5_PLUGIN=OFF -DTDBFILTER_CARGO_PROFILE="$TDBF_PROFILE" >/dev/null
cmake --build build-asan -j 2 >/dev/null
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -L c --output-on-failure -j 2 | tail -n 3
echo "ASan+UBSan C tests: $((SECONDS - t0)) s"

# 2. valgrind on every C test against the shared library: each c-tests/*.c (ctest
#    <name>_shared) and the HDF5 plugin's test, with ctest's command and environment. The list
#    comes from ctest and is checked against the C sources; a missing test or binary fails.
#    test_filter and test_threads run a smaller workload of the same checks (TDB_TEST_LIGHT=1).
t0=$SECONDS
if ! dpkg -s libhdf5-dev >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libhdf5-dev >/dev/null
fi
cmake -S . -B build -DTDBFILTER_BUILD_HDF5_PLUGIN=ON -DTDBFILTER_CARGO_PROFILE="$TDBF_PROFILE" >/dev/null
cmake --build build -j 2 >/dev/null
python3 scripts/valgrind-ctest.py build
echo "valgrind C tests: $((SECONDS - t0)) s"

# 3. Dispatch at each SIMD level: TDBFILTER_SIMD caps the level the dispatch picks at run time,
#    and the test tdbfilter_simd_sets_the_dispatched_level must report the kernels dispatched at
#    that very level. (The kernels' results at every level the CPU has are compared in one run
#    by src/kernels/tests.rs in the cargo-test step: each level is tested once, not once per
#    forced level.) A level this CPU lacks is reported as a skip naming the missing features,
#    never as a pass.
t0=$SECONDS
flags=$(grep -m1 '^flags' /proc/cpuinfo)
lacks() { local m=(); for f in "$@"; do [[ " $flags " == *" $f "* ]] || m+=("$f"); done; echo "${m[*]}"; }
declare -A needs=([scalar]="" [sse2]="sse2" [avx2]="sse2 avx2"
                  [avx512]="sse2 avx2 avx512f avx512bw avx512vl avx512vbmi gfni")
# The core's unit-test binary of the cargo-test step (asked of cargo with the workspace's features,
# so nothing is compiled again), run once per level.
core_tests=$(cargo test --profile "$TDBF_PROFILE" --workspace --lib --no-run --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"] \
            and m.get("manifest_path") == sys.argv[1] and "lib" in m["target"]["kind"]:
        print(m["executable"])
' "$root/Cargo.toml" | head -n 1)
[ -x "$core_tests" ] || { echo "the core crate's unit-test binary was not found" >&2; exit 1; }
ran=() skipped=()
for level in scalar sse2 avx2 avx512; do
  missing=$(lacks ${needs[$level]})
  if [ -n "$missing" ]; then
    echo "SKIP TDBFILTER_SIMD=$level: CPU lacks $missing"
    skipped+=("$level")
    continue
  fi
  log=build/simd-$level.log
  if ! TDBFILTER_SIMD=$level "$core_tests" kernels::tests::tdbfilter_simd_sets_the_dispatched_level \
      --exact --nocapture >"$log" 2>&1; then
    cat "$log" >&2
    echo "tests failed at SIMD level $level" >&2
    exit 1
  fi
  grep -E "^test result" "$log" | sed "s/^/TDBFILTER_SIMD=$level: /"
  if ! grep -qx "kernels dispatched at $level (TDBFILTER_SIMD=$level)" "$log"; then
    grep -E "^kernels dispatched" "$log" >&2 || true
    echo "TDBFILTER_SIMD=$level: the kernels were not dispatched at $level (see $log)" >&2
    exit 1
  fi
  ran+=("$level")
done
echo "SIMD levels run: ${ran[*]}; skipped: ${skipped[*]:-none} ($((SECONDS - t0)) s)"
