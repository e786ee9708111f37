#!/usr/bin/env bash
# step: C tests under AddressSanitizer+UBSan and under valgrind; kernel and filter tests at every SIMD level (TDBFILTER_SIMD)
#
# ASan/UBSan instrument the C side of the ABI (the C tests, built against the release library:
# one build per profile, so the Rust side is not rebuilt with -Zsanitizer); valgrind checks
# both sides, the Rust library included, for invalid accesses and leaks.
set -euo pipefail
root="${TDBF_ROOT:?}"
cd "$root"
if ! command -v valgrind >/dev/null; then
  apt-get update -qq && apt-get install -y -qq valgrind >/dev/null
fi

# 1. The C tests again, instrumented (cargo is a no-op: same target directory and profile).
t0=$SECONDS
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release -DTDBFILTER_C_TESTS_SANITIZE=ON \
  -DTDBFILTER_BUILD_HDF5_PLUGIN=OFF -DTDBFILTER_CARGO_FEATURES=cli >/dev/null
cmake --build build-asan -j 2 >/dev/null
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -L c --output-on-failure -j 2 | tail -n 3
echo "ASan+UBSan C tests: $((SECONDS - t0)) s"

# 2. valgrind on the C tests against the shared library (the heaviest, test_threads and
#    test_filter's large tiles, are left to ASan: under valgrind they take minutes).
t0=$SECONDS
for t in test_errors test_spec test_pipeline test_generic_tile test_var test_into \
         test_executor test_memory_limit test_format_version test_array; do
  exe=build/${t}_shared
  [ -x "$exe" ] || continue
  if ! LD_LIBRARY_PATH="$root/target/release" valgrind -q --error-exitcode=1 --leak-check=full \
      --errors-for-leak-kinds=definite,indirect "$exe" >"build/$t.valgrind.log" 2>&1; then
    cat "build/$t.valgrind.log" >&2
    echo "valgrind: $t failed" >&2
    exit 1
  fi
  echo "valgrind $t: $(tail -n 1 "build/$t.valgrind.log")"
done
echo "valgrind C tests: $((SECONDS - t0)) s"

# 3. Kernel and filter tests at each SIMD level this CPU has (the release test build of the
#    core step; TDBFILTER_SIMD caps the level the dispatch picks at run time).
t0=$SECONDS
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { for f in "$@"; do [[ " $flags " == *" $f "* ]] || return 1; done; }
levels=(scalar)
has sse2 && levels+=(sse2)
has sse2 avx2 && levels+=(avx2)
has avx2 avx512f avx512bw avx512vl avx512vbmi gfni && levels+=(avx512)
for level in "${levels[@]}"; do
  TDBFILTER_SIMD=$level cargo test --release --features cli -q --lib -- kernels filters 2>&1 \
    | grep -E "^test result" | sed "s/^/TDBFILTER_SIMD=$level: /"
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "tests failed at SIMD level $level" >&2; exit 1; }
done
echo "SIMD levels (${levels[*]}): $((SECONDS - t0)) s"
