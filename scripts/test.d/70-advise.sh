#!/usr/bin/env bash
# step: tdbf advise: every advised pipeline's TileDB-Py FilterList is built and read back by TileDB 2.30
set -euo pipefail
cd "$TDBF_ROOT"
python tests/advise/check_tiledb_py.py "$TDBF_BUILD/tdbf"
