#!/usr/bin/env bash
# step: fuzzing (fuzz/): every cargo-fuzz target for a short fixed budget over the committed corpus; any finding fails
#
# cargo-fuzz comes from crates.io (installed once into .venv/cargo); the targets need nightly
# flags, which RUSTC_BOOTSTRAP=1 enables on the stable toolchain. One build (-O, with
# AddressSanitizer) serves every target. Budget: FUZZ_SECONDS per target (default 20).
set -euo pipefail
root="${TDBF_ROOT:?}"
cd "$root"
export PATH="$root/.venv/cargo/bin:$PATH"
if ! command -v cargo-fuzz >/dev/null; then
  cargo install -q cargo-fuzz --locked --version 0.13.2 --root "$root/.venv/cargo"
fi
export RUSTC_BOOTSTRAP=1
seconds=${FUZZ_SECONDS:-20}
t0=$SECONDS
cargo fuzz build -O >/dev/null 2>"$root/build/fuzz-build.log" || { cat "$root/build/fuzz-build.log" >&2; exit 1; }
echo "fuzz build: $((SECONDS - t0)) s"
work=$root/build/fuzz
mkdir -p "$work"
for target in $(cargo fuzz list); do
  # A scratch corpus seeded from the committed one, so that runs do not add files to git.
  rm -rf "$work/$target" && mkdir -p "$work/$target"
  cp fuzz/corpus/"$target"/* "$work/$target"/
  dict=()
  [ -f "fuzz/dict/$target.dict" ] && dict=(-dict="fuzz/dict/$target.dict")
  if ! cargo fuzz run -O "$target" "$work/$target" -- -max_total_time="$seconds" \
      -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=20 "${dict[@]}" \
      -artifact_prefix="$work/$target-" >"$work/$target.log" 2>&1; then
    tail -n 40 "$work/$target.log" >&2
    echo "fuzz: $target found a problem (artifacts in $work)" >&2
    exit 1
  fi
  echo "fuzz $target: $(grep -E '^Done [0-9]+ runs' "$work/$target.log" | tail -n 1) $(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$work/$target.log" | tail -n 1)"
done
