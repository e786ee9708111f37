#!/usr/bin/env bash
# step: Julia package (bindings/julia/TDBFilter): every ccall checked against include/tdbfilter.h (Julia is not run here)
set -euo pipefail
cd "${TDBF_ROOT:?}"
python bindings/julia/check_ccalls.py --self-test
python bindings/julia/check_ccalls.py
