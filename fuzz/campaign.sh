#!/usr/bin/env bash
# A long fuzzing campaign: runs the given targets (default: all) for SECONDS_PER_TARGET each (default
# 1200), JOBS at a time (default 1), each on a scratch copy of its committed corpus, and
# prints one line per target: executions, coverage (cov = edges, ft = features), corpus size
# and findings. Logs, corpora and artifacts stay in OUT (default build/campaign).
#
#   fuzz/campaign.sh [target ...]        SECONDS_PER_TARGET=1200 JOBS=2 OUT=build/campaign
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export RUSTC_BOOTSTRAP=1
seconds=${SECONDS_PER_TARGET:-1200}
jobs=${JOBS:-1}
out=${OUT:-$root/build/campaign}
mkdir -p "$out"
cargo fuzz build -O >"$out/build.log" 2>&1
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo fuzz list)

run_one() {
  local t=$1 dict=()
  rm -rf "$out/$t" && mkdir -p "$out/$t" && cp fuzz/corpus/"$t"/* "$out/$t"/
  [ -f "fuzz/dict/$t.dict" ] && dict=(-dict="fuzz/dict/$t.dict")
  local status=clean
  cargo fuzz run -O "$t" "$out/$t" -- -max_total_time="$seconds" -rss_limit_mb=2048 \
    -malloc_limit_mb=1024 -timeout=20 -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="$out/$t-" >"$out/$t.log" 2>&1 || status="FINDING (see $out/$t.log)"
  local runs cov
  runs=$(grep -oE '^stat::number_of_executed_units: [0-9]+' "$out/$t.log" | grep -oE '[0-9]+$' || echo '?')
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$out/$t.log" | tail -n 1)
  printf '%-22s %12s runs  %s  %s\n' "$t" "$runs" "$cov" "$status" | tee -a "$out/summary.txt"
}

running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
done
wait
