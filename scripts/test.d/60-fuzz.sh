#!/usr/bin/env bash
# step: fuzzing (fuzz/): every cargo-fuzz target for a short fixed budget over the committed corpus; any finding fails
#
# cargo-fuzz comes from crates.io (installed once by the setup step, beside cargo); the targets need nightly
# flags, which RUSTC_BOOTSTRAP=1 enables on the stable toolchain. One build (-O, with
# AddressSanitizer) serves every target. Budget: FUZZ_SECONDS per target (default 8);
# array_writer, whose runs create, write and read whole arrays, FUZZ_WRITER_SECONDS (default 20,
# at least FUZZ_SECONDS). FUZZ_JOBS targets run at once (default 2).
# The format parsers get the dictionaries of fuzz/dict/.
set -euo pipefail
root="${TDBF_ROOT:?}"
cd "$root"
# cargo-fuzz: installed by the setup step (scripts/setup.sh) beside cargo, as cargo tools are.
if ! command -v cargo-fuzz >/dev/null; then
  source scripts/setup.sh
  tdbf_setup_fuzz
fi
export RUSTC_BOOTSTRAP=1
seconds=${FUZZ_SECONDS:-8}
writer_seconds=${FUZZ_WRITER_SECONDS:-$((seconds > 20 ? seconds : 20))}
t0=$SECONDS
cargo fuzz build -O >/dev/null 2>"$root/build/fuzz-build.log" || { cat "$root/build/fuzz-build.log" >&2; exit 1; }
echo "fuzz build: $((SECONDS - t0)) s"
work=$root/build/fuzz
mkdir -p "$work"
fail() { echo "60-fuzz: $*" >&2; exit 1; }
targets=$(cargo fuzz list)
# The targets that parse TileDB's formats run with a libFuzzer dictionary of its byte strings
# (fuzz/dict/<target>.dict, written by fuzz/make_dicts.py): each must exist and be loaded, and
# every dictionary must belong to one of these targets.
dict_targets=(array_folder array_parsers generic_tile pipeline_deserialize unfilter)
for t in "${dict_targets[@]}"; do
  grep -qx "$t" <<<"$targets" || fail "$t has a dictionary but is not a fuzz target"
  [ -f "fuzz/dict/$t.dict" ] || fail "fuzz/dict/$t.dict is missing (fuzz/make_dicts.py writes it)"
done
for d in fuzz/dict/*.dict; do
  [ -e "$d" ] || continue
  t=$(basename "$d" .dict)
  [[ " ${dict_targets[*]} " == *" $t "* ]] || fail "$d: $t is not in dict_targets of this step"
done
# One target's run: its log, and its exit status in a file (the runs go FUZZ_JOBS at once: each
# libFuzzer process is single-threaded).
run_target() {
  local target=$1 budget=$seconds dict=()
  # A scratch corpus seeded from the committed one, so that runs do not add files to git.
  rm -rf "$work/$target" && mkdir -p "$work/$target"
  cp fuzz/corpus/"$target"/* "$work/$target"/
  [[ " ${dict_targets[*]} " == *" $target "* ]] && dict=(-dict="fuzz/dict/$target.dict")
  [ "$target" = array_writer ] && budget=$writer_seconds
  local status=0
  cargo fuzz run -O "$target" "$work/$target" -- -max_total_time="$budget" \
    -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=20 "${dict[@]}" \
    -artifact_prefix="$work/$target-" >"$work/$target.log" 2>&1 || status=$?
  echo "$status" >"$work/$target.status"
}
jobs_at_once=${FUZZ_JOBS:-2}
# array_writer (the longest budget) first.
ordered=$(printf '%s\n' $targets | awk '$0 == "array_writer" {print; next} {rest = rest $0 "\n"} END {printf "%s", rest}')
for target in $ordered; do
  rm -f "$work/$target.status"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ]; do wait -n || true; done
  run_target "$target" &
done
wait
for target in $targets; do
  [ -f "$work/$target.status" ] || fail "$target: no exit status (the run did not finish)"
  if [ "$(cat "$work/$target.status")" != 0 ]; then
    tail -n 40 "$work/$target.log" >&2
    echo "fuzz: $target found a problem (artifacts in $work)" >&2
    exit 1
  fi
  words=""
  if [[ " ${dict_targets[*]} " == *" $target "* ]]; then
    words=$(grep -m1 -oE '^Dictionary: [0-9]+ entries' "$work/$target.log") \
      || fail "$target: libFuzzer did not load fuzz/dict/$target.dict"
    words=" (${words,})"
  fi
  echo "fuzz $target: $(grep -E '^Done [0-9]+ runs' "$work/$target.log" | tail -n 1) $(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$work/$target.log" | tail -n 1)$words"
done
echo "fuzz: $(wc -w <<<"$targets") targets, $jobs_at_once at once: $((SECONDS - t0)) s"
