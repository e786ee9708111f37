#!/usr/bin/env bash
# Runs every test of tdbfilter on a fresh machine that has the Rust toolchain and Python 3:
#   formatting and lints, the Rust tests, the C tests (CMake + ctest, shared and static),
#   the header-drift check, and the compatibility tests against real TileDB 2.30.
# Python packages (tiledb, numpy, lz4, cmake) go into a git-ignored virtual environment .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

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

step "Python environment (.venv: tiledb 2.30, numpy, lz4, cryptography, cmake)"
if [ ! -x .venv/bin/python ]; then
  if ! python3 -m venv .venv 2>/dev/null; then
    # Debian's python3 needs the venv module as a separate package.
    if command -v apt-get >/dev/null; then
      apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    fi
    rm -rf .venv
    python3 -m venv .venv
  fi
fi
.venv/bin/python -m pip install -q --disable-pip-version-check \
  -r tests/compat/requirements.txt -r tests/compat/requirements-encryption.txt cmake
export PATH="$root/.venv/bin:$PATH"

step "Object-store servers (moto for S3, azurite for Azure Blob, on 127.0.0.1; stopped on exit)"
# Started once for every step that needs them (scripts/test.d/55-object-store.sh), stopped by
# PID when this script exits.
export TDBF_ROOT="$root"
source scripts/object-store-servers.sh
tdbf_object_stores_install
tdbf_object_stores_start

step "cargo fmt --check"
cargo fmt --all -- --check

# Every cargo call builds with the `cli` feature (the tdbf binary and its tests), so that all
# steps share one release build of the crate; CMake gets the same features.
step "cargo clippy -D warnings"
cargo clippy --release --all-targets --features cli -- -D warnings

step "cargo build --release --features cli (also regenerates include/tdbfilter.h in a checkout)"
cargo build --release --features cli
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  if ! git diff --exit-code -- include/tdbfilter.h; then
    echo "include/tdbfilter.h differs from the committed header: commit the regenerated header" >&2
    exit 1
  fi
fi

step "The library alone depends on none of the CLI's crates (clap, serde_derive); no OpenSSL"
# Local-only (no default features): neither clap nor serde_derive. With object storage (the
# default): no clap, and serde_derive only through object_store (its S3/Azure XML and JSON).
lib_deps=$(cargo tree -e normal -p tdbfilter --no-default-features --prefix none --format '{p}')
if cli_deps=$(printf '%s\n' "$lib_deps" | grep -E '^(clap|clap_builder|serde_derive) '); then
  echo "cargo tree -e normal -p tdbfilter --no-default-features lists CLI dependencies:" >&2
  echo "$cli_deps" >&2
  exit 1
fi
echo "local-only: $(printf '%s\n' "$lib_deps" | sort -u | wc -l) crates, none of them clap or serde_derive"
lib_deps=$(cargo tree -e normal -p tdbfilter --prefix none --format '{p}')
if bad=$(printf '%s\n' "$lib_deps" | grep -E '^(clap|clap_builder|openssl|openssl-sys|native-tls|aws-lc-rs|aws-lc-sys) '); then
  echo "cargo tree -e normal -p tdbfilter lists clap, OpenSSL or aws-lc:" >&2
  echo "$bad" >&2
  exit 1
fi
derive_users=$(cargo tree -e normal -p tdbfilter -i serde_derive --prefix none --format '{p}' 2>/dev/null \
  | grep -vE '^(serde_derive|serde|tdbfilter|object_store|chrono|quick-xml|serde_urlencoded|serde_json) ' || true)
if [ -n "$derive_users" ]; then
  echo "serde_derive reaches tdbfilter other than through object_store:" >&2
  echo "$derive_users" >&2
  exit 1
fi
echo "default: $(printf '%s\n' "$lib_deps" | sort -u | wc -l) crates, no clap, OpenSSL or aws-lc; serde_derive only via object_store"

step "cargo test --release --features cli"
cargo test --release --features cli

step "C tests (CMake, shared and static library)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTDBFILTER_CARGO_FEATURES=cli >/dev/null
cmake --build build -j 2
ctest --test-dir build --output-on-failure

step "Compatibility tests against TileDB 2.30"
.venv/bin/python tests/compat/run_compat.py --lib "$root/target/release/libtdbfilter.so"

step "Encryption and generic-tile compatibility tests against TileDB 2.30"
.venv/bin/python tests/compat/run_encryption.py --lib "$root/target/release/libtdbfilter.so"
# The harness's self-tests: each sabotage (and a library without the generic tile API) must fail.
.venv/bin/python tests/compat/encryption_selftest.py --lib "$root/target/release/libtdbfilter.so"

step "Benchmark smoke run against TileDB 2.30 (bench/compare_tiledb.py --quick: sizes and round trips)"
.venv/bin/python bench/compare_tiledb.py --quick --check --tdbf "$root/target/release/tdbf"

# Further steps (install tree and consumers, bindings, plugins, array reader, fuzzing,
# sanitizers): one script each in scripts/test.d/, run in name order. Each runs with the
# environment set up above: $TDBF_ROOT (the checkout), PATH with .venv/bin first, the release
# build in $TDBF_ROOT/target/release, and $TDBF_PREFIX, the temporary install prefix that
# scripts/test.d/20-install.sh fills and later steps consume.
export TDBF_ROOT="$root"
export TDBF_PREFIX="$root/build/prefix"
for s in scripts/test.d/*.sh; do
  [ -e "$s" ] || continue
  step "$(sed -n 's/^# step: //p' "$s" | head -n 1) ($s)"
  bash "$s"
done

end_step
echo
echo "Step times:"
printf '%s\n' "${step_times[@]}"
total=$((SECONDS - suite_start))
printf 'Total: %dm%02ds\n' $((total / 60)) $((total % 60))
echo "All tests passed."
