#!/usr/bin/env bash
# Runs every test of tdbfilter on a fresh machine that has the Rust toolchain and Python 3:
# formatting and lints, the Rust tests of the three crates, the C tests (CMake + ctest, shared
# and static), the header-drift check, the compatibility tests against real TileDB 2.30, then
# every scripts/test.d/*.sh (install tree, bindings, plugins, arrays, object stores, fuzzing,
# sanitizers). What the steps need is installed once by the setup step (scripts/setup.sh).
#
#   ./scripts/test-all.sh                the whole suite (CI runs this)
#   ./scripts/test-all.sh --quick        lint, Rust, C and Python tests: no servers, fuzzing,
#                                        sanitizers or TileDB differential suites
#   ./scripts/test-all.sh --only NAME... the named steps (after setup and the build)
#   ./scripts/test-all.sh --list         the step names
#
# One build serves every step: the `test-opt` profile (optimised, no LTO, 16 codegen units;
# Cargo.toml), in target/test-opt. Benchmarks proper use the release profile.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

# The steps in order. Core steps are functions below; NAME of scripts/test.d/NN-NAME.sh runs
# that script.
core_steps=(fmt clippy build deps cargo-test c-tests compat encryption bench-smoke)
script_steps=()
for s in scripts/test.d/*.sh; do
  n=$(basename "$s" .sh)
  script_steps+=("${n#*-}")
done
all_steps=("${core_steps[@]}" "${script_steps[@]}")
quick_steps=(fmt clippy build deps cargo-test c-tests python)

mode=all
selected=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) mode=quick ;;
    --only)
      mode=only
      shift
      [ $# -gt 0 ] || { echo "--only needs a step name (--list shows them)" >&2; exit 2; }
      selected+=("$1")
      ;;
    --list) printf '%s\n' "${all_steps[@]}"; exit 0 ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "unknown option: $1 (--quick, --only NAME, --list)" >&2; exit 2 ;;
  esac
  shift
done
case $mode in
  all) selected=("${all_steps[@]}") ;;
  quick) selected=("${quick_steps[@]}") ;;
  only)
    for n in "${selected[@]}"; do
      printf '%s\n' "${all_steps[@]}" | grep -qx -- "$n" \
        || { echo "no step named $n; the steps: ${all_steps[*]}" >&2; exit 2; }
    done
    ;;
esac
wants() { printf '%s\n' "${selected[@]}" | grep -qx -- "$1"; }

export TDBF_ROOT="$root"
export TDBF_PREFIX="$root/build/prefix"
export TDBF_PROFILE=test-opt
export TDBF_BUILD="$root/target/$TDBF_PROFILE"
# CMake and the Python wheel's backend build the library with this profile too (no rebuild).
export TDBFILTER_CARGO_PROFILE=$TDBF_PROFILE
# ... and with the build step's package selection: cargo unifies dependency features over the
# packages it builds, so `-p tdbfilter-ffi` alone would compile the dependencies and the core
# crate again (1m40s on 2 cores).
export TDBFILTER_CARGO_SCOPE="--workspace --all-targets"

run_clippy_cargo() { cargo clippy --workspace --all-targets -- -D warnings; }
run_build_cargo() { cargo build --profile "$TDBF_PROFILE" $TDBFILTER_CARGO_SCOPE; }

# Each step's wall time is printed when the next one starts, and all of them at the end.
step_name=""
step_start=$SECONDS
suite_start=$SECONDS
step_times=()
end_step() {
  if [ -n "$step_name" ]; then
    local took=$((SECONDS - step_start))
    printf '    (%dm%02ds) %s\n' $((took / 60)) $((took % 60)) "$step_name"
    step_times+=("$(printf '%4dm%02ds  %.100s' $((took / 60)) $((took % 60)) "$step_name")")
  fi
}
step() {
  end_step
  step_name="$*"
  step_start=$SECONDS
  printf '\n==> %s\n' "$*"
}

# Background jobs (the compile started during setup, the fuzz targets' build) and the object-store
# servers are stopped when the suite ends, however it ends.
bg_pids=()
cleanup() {
  local p
  for p in "${bg_pids[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
  if declare -F tdbf_object_stores_stop >/dev/null; then tdbf_object_stores_stop; fi
}
trap cleanup EXIT

# The compile (clippy, then the test build) starts before the setup, which mostly waits on the
# network: the clippy and build steps then wait for it and print its output.
bg_dir=$root/build/bg
compile_pid=""
if wants clippy && wants build; then
  mkdir -p "$bg_dir"
  rm -f "$bg_dir"/{clippy,build}.{log,status}
  set -m  # a process group of its own: cleanup stops its cargo and rustc children too
  (
    st=0; run_clippy_cargo >"$bg_dir/clippy.log" 2>&1 || st=$?; echo $st >"$bg_dir/clippy.status"
    st=0; run_build_cargo >"$bg_dir/build.log" 2>&1 || st=$?; echo $st >"$bg_dir/build.status"
  ) &
  compile_pid=$!
  set +m
  bg_pids+=("$compile_pid")
fi

# --- setup: what the selected steps need, installed once --------------------------------------
step "setup: tools and packages the selected steps need (scripts/setup.sh)"
source scripts/setup.sh
groups=(python)
if wants install || wants sanitizers || wants go; then groups+=(c); fi
if wants go; then groups+=(go); fi
if wants hdf5 || wants sanitizers; then groups+=(hdf5); fi
if wants dask || wants object-store; then groups+=(servers); fi
if wants dask; then groups+=(dask); fi
if wants fuzz; then groups+=(fuzz); fi
if wants wheel; then groups+=(wheel); fi
mapfile -t groups < <(printf '%s\n' "${groups[@]}" | awk '!seen[$0]++')
tdbf_setup "${groups[@]}"
export PATH="$root/.venv/bin:$PATH"

if wants dask || wants object-store; then
  step "Object-store servers (moto for S3, azurite for Azure Blob, on 127.0.0.1; stopped on exit)"
  # Started once for every step that needs them, stopped by PID when this script exits.
  source scripts/object-store-servers.sh
  tdbf_object_stores_start
  trap cleanup EXIT  # the servers' own trap replaced by cleanup, which stops them too
fi

# --- core steps -------------------------------------------------------------------------------
run_fmt() { cargo fmt --all -- --check; }

# Waits for the background compile's part NAME (clippy or build), prints its output, and fails
# as it failed.
wait_bg() {
  local name=$1
  while [ ! -f "$bg_dir/$name.status" ]; do
    kill -0 "$compile_pid" 2>/dev/null || { sleep 1; break; }
    sleep 1
  done
  cat "$bg_dir/$name.log"
  [ -f "$bg_dir/$name.status" ] || { echo "the background compile stopped before $name ended" >&2; return 1; }
  return "$(cat "$bg_dir/$name.status")"
}

run_clippy() {
  if [ -n "$compile_pid" ]; then wait_bg clippy; else run_clippy_cargo; fi
}

run_build() {
  if [ -n "$compile_pid" ]; then wait_bg build; else run_build_cargo; fi
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    if ! git diff --exit-code -- include/tdbfilter.h; then
      echo "include/tdbfilter.h differs from the committed header: commit the regenerated header" >&2
      exit 1
    fi
  fi
}

run_deps() {
  # The core crate: no C (cbindgen), no CLI crates (clap, serde_derive but through object_store),
  # no OpenSSL or aws-lc; local-only (no default features) it has no serde_derive at all.
  local lib_deps bad derive_users
  lib_deps=$(cargo tree -e normal,build -p tdbfilter --no-default-features --prefix none --format '{p}')
  if bad=$(printf '%s\n' "$lib_deps" | grep -E '^(cbindgen|clap|clap_builder|serde_derive) '); then
    echo "the core crate (local-only) depends on:" >&2
    echo "$bad" >&2
    exit 1
  fi
  echo "core, local-only: $(printf '%s\n' "$lib_deps" | sort -u | wc -l) crates, no cbindgen, clap or serde_derive"
  lib_deps=$(cargo tree -e normal,build -p tdbfilter --prefix none --format '{p}')
  if bad=$(printf '%s\n' "$lib_deps" | grep -E '^(cbindgen|clap|clap_builder|openssl|openssl-sys|native-tls|aws-lc-rs|aws-lc-sys) '); then
    echo "the core crate depends on cbindgen, clap, OpenSSL or aws-lc:" >&2
    echo "$bad" >&2
    exit 1
  fi
  derive_users=$(cargo tree -e normal -p tdbfilter -i serde_derive --prefix none --format '{p}' 2>/dev/null \
    | grep -vE '^(serde_derive|serde|tdbfilter|object_store|chrono|quick-xml|serde_urlencoded|serde_json) ' || true)
  if [ -n "$derive_users" ]; then
    echo "serde_derive reaches the core other than through object_store:" >&2
    echo "$derive_users" >&2
    exit 1
  fi
  echo "core, default: $(printf '%s\n' "$lib_deps" | sort -u | wc -l) crates, no cbindgen, clap, OpenSSL or aws-lc"
  # The core crate packages for crates.io as it is (no file outside it, no build script).
  cargo publish --dry-run --no-verify --allow-dirty -p tdbfilter 2>&1 | tail -n 2
}

run_cargo_test() { cargo test --profile "$TDBF_PROFILE" --workspace; }

run_c_tests() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTDBFILTER_CARGO_PROFILE="$TDBF_PROFILE" >/dev/null
  cmake --build build -j 2
  ctest --test-dir build --output-on-failure -j 2
}

run_compat() { .venv/bin/python tests/compat/run_compat.py --lib "$TDBF_BUILD/libtdbfilter.so"; }

run_encryption() {
  .venv/bin/python tests/compat/run_encryption.py --lib "$TDBF_BUILD/libtdbfilter.so"
  # The harness's self-tests: each sabotage (and a library without the generic tile API) must fail.
  .venv/bin/python tests/compat/encryption_selftest.py --lib "$TDBF_BUILD/libtdbfilter.so"
}

run_bench_smoke() {
  .venv/bin/python bench/compare_tiledb.py --quick --check --tdbf "$TDBF_BUILD/tdbf"
  # The TileDB-Py API benchmark's and the lifecycle-read benchmark's answers (no timing).
  TDBFILTER_LIBRARY="$TDBF_BUILD/libtdbfilter.so" PYTHONPATH="$root/bindings/python/src" \
    .venv/bin/python bench/compare_tiledb_py_api.py --quick --check
  .venv/bin/python bench/compare_lifecycle_reads.py --quick --check --lib "$TDBF_BUILD/libtdbfilter.so"
}

title() {
  case $1 in
    fmt) echo "cargo fmt --check" ;;
    clippy) echo "cargo clippy --workspace --all-targets -D warnings" ;;
    build) echo "cargo build --profile $TDBF_PROFILE --workspace (regenerates include/tdbfilter.h in a checkout: drift check)" ;;
    deps) echo "The core crate's dependencies (no cbindgen, clap, OpenSSL) and its crates.io package" ;;
    cargo-test) echo "cargo test --profile $TDBF_PROFILE --workspace" ;;
    c-tests) echo "C tests (CMake, shared and static library)" ;;
    compat) echo "Compatibility tests against TileDB 2.30" ;;
    encryption) echo "Encryption and generic-tile compatibility tests against TileDB 2.30" ;;
    bench-smoke) echo "Benchmark smoke runs against TileDB 2.30 (compare_tiledb.py --quick: sizes and round trips; compare_tiledb_py_api.py and compare_lifecycle_reads.py --quick --check: answers equal TileDB-Py's)" ;;
  esac
}

# The build comes first whatever was selected: every step uses it.
if ! wants build; then
  step "$(title build) [needed by the selected steps]"
  run_build
fi

# The fuzz targets' build (AddressSanitizer, a compile of its own in fuzz/target) runs in the
# background at idle priority (SCHED_IDLE) from the end of the setup on: the build step's link
# and single-crate phases and most later steps (single-threaded Python) leave a core idle.
# Started after the build step it was still running when the fuzz step came (a 3-4 minute
# wait). The fuzz step waits for it (its own `cargo fuzz build` is then a no-op); the wait is
# printed as a step of its own.
fuzz_prebuild_pid=""
start_fuzz_prebuild() {
  if wants fuzz && [ -z "$fuzz_prebuild_pid" ]; then
    mkdir -p build
    set -m
    # SCHED_IDLE: it runs only on a core nothing else wants (at nice 15 it took a minute
    # from the build step).
    local idle=()
    if command -v chrt >/dev/null; then idle=(chrt --idle 0); fi
    (RUSTC_BOOTSTRAP=1 exec "${idle[@]}" nice -n 19 cargo fuzz build -O >"$root/build/fuzz-prebuild.log" 2>&1) &
    fuzz_prebuild_pid=$!
    set +m
    bg_pids+=("$fuzz_prebuild_pid")  # stopped by cleanup if the suite ends first
  fi
}
start_fuzz_prebuild

for n in "${all_steps[@]}"; do
  wants "$n" || continue
  if [ "$n" = fuzz ] && [ -n "$fuzz_prebuild_pid" ]; then
    step "waiting for the background fuzz build (build/fuzz-prebuild.log)"
    # A failed prebuild is not fatal here: the step builds again and reports the error.
    wait "$fuzz_prebuild_pid" || echo "(the background fuzz build failed; the fuzz step builds again)"
    fuzz_prebuild_pid=""
  fi
  if printf '%s\n' "${core_steps[@]}" | grep -qx -- "$n"; then
    step "$n: $(title "$n")"
    "run_${n//-/_}"
  else
    s=$(ls scripts/test.d/*-"$n".sh)
    step "$n: $(sed -n 's/^# step: //p' "$s" | head -n 1) ($s)"
    bash "$s"
  fi
done

end_step
echo
echo "Step times ($mode):"
printf '%s\n' "${step_times[@]}"
total=$((SECONDS - suite_start))
printf 'Total: %dm%02ds\n' $((total / 60)) $((total % 60))
echo "All tests passed."
