# Sourced by test steps: runs independent commands LANES at a time (default 2, the CI machine's
# cores). Most differential suites are one Python process waiting on one library call at a time,
# so two of them keep both cores busy where one leaves a core idle.
#
#   tdbf_lanes NAME1 'COMMAND 1' NAME2 'COMMAND 2' ...
#
# Each command runs under `bash -c` with its output in build/lanes/NAME.log; a command's output
# is printed whole, with its wall time, when it ends (never interleaved with another's). Every
# command runs even when one fails; the function then fails, naming the failed ones.
tdbf_lanes() {
  local lanes=${LANES:-2} dir=${TDBF_ROOT:?}/build/lanes
  mkdir -p "$dir"
  local names=() cmds=()
  while [ $# -ge 2 ]; do
    names+=("$1")
    cmds+=("$2")
    shift 2
  done
  [ $# -eq 0 ] || { echo "tdbf_lanes: a NAME without its COMMAND: $1" >&2; return 2; }
  local i printed=() failed=()
  for i in "${!names[@]}"; do
    rm -f "$dir/${names[$i]}".{log,status,start}
  done
  _tdbf_lane_report() {
    # Prints every finished command not yet printed.
    local j
    for j in "${!names[@]}"; do
      [ -f "$dir/${names[$j]}.status" ] || continue
      [[ " ${printed[*]} " == *" $j "* ]] && continue
      printed+=("$j")
      local st took
      st=$(cat "$dir/${names[$j]}.status")
      took=$(( $(date +%s) - $(cat "$dir/${names[$j]}.start") ))
      echo "---- ${names[$j]}: ${cmds[$j]}"
      cat "$dir/${names[$j]}.log"
      if [ "$st" = 0 ]; then
        echo "---- ${names[$j]}: passed (${took} s)"
      else
        echo "---- ${names[$j]}: FAILED with status $st (${took} s)"
        failed+=("${names[$j]}")
      fi
    done
  }
  for i in "${!names[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$lanes" ]; do
      wait -n || true
      _tdbf_lane_report
    done
    (
      date +%s >"$dir/${names[$i]}.start"
      st=0
      bash -c "set -euo pipefail; ${cmds[$i]}" >"$dir/${names[$i]}.log" 2>&1 || st=$?
      echo "$st" >"$dir/${names[$i]}.status"
    ) &
  done
  wait
  _tdbf_lane_report
  if [ ${#failed[@]} -gt 0 ]; then
    echo "failed: ${failed[*]} (logs in $dir)" >&2
    return 1
  fi
}
