#!/usr/bin/env bash
# step: Dask and xarray (tdbfilter.dask, engine="tdbfilter"): tests/dask on a 2-process LocalCluster whose workers have tdbfilter and no tiledb, against TileDB-Py's reads, from local folders and from the S3 server (moto); bench/compare_dask.py --quick
set -euo pipefail
root="${TDBF_ROOT:?}"
prefix="${TDBF_PREFIX:?}"
cd "$root"
pip_in() { "$1" -m pip install -q --disable-pip-version-check "${@:2}"; }

# The Dask side's environment: the pinned Dask/xarray stack and the tdbfilter package, no
# tiledb. The tests and their LocalCluster's workers run in it; TileDB-Py (in .venv) only
# writes the arrays and its reads of them (tests/dask/make_arrays.py).
# tests/dask/test_s3.py reads from and writes to the S3 server (moto) that test-all.sh started
# (TDBF_S3_ENDPOINT); run alone, this step starts it (and azurite) itself.
source scripts/object-store-servers.sh
tdbf_object_stores_install
tdbf_object_stores_start

venv=$root/build/dask-venv
[ -x "$venv/bin/python" ] || "$root/.venv/bin/python" -m venv "$venv"
pip_in "$venv/bin/python" -r tests/dask/requirements.txt
pip_in "$venv/bin/python" --force-reinstall --no-deps ./bindings/python
if "$venv/bin/python" -c 'import tiledb' 2>/dev/null; then
  echo "47-dask: tiledb is importable in $venv: the workers' environment must not have it" >&2
  exit 1
fi

if [ -f "$prefix/lib/libtdbfilter.so" ]; then
  export TDBFILTER_LIBRARY="$prefix/lib/libtdbfilter.so"
else
  export TDBFILTER_LIBRARY="$TDBF_BUILD/libtdbfilter.so"
fi
export TDBF_TILEDB_PYTHON="$root/.venv/bin/python"
# make_arrays.py (run by the tests with TDBF_TILEDB_PYTHON) takes dask.array.from_tiledb's
# arrays as an oracle, and the benchmark runs from_tiledb on the same cluster: .venv gets the
# same Dask stack and the package.
pip_in "$root/.venv/bin/python" -r tests/dask/requirements.txt
pip_in "$root/.venv/bin/python" --force-reinstall --no-deps ./bindings/python
# From the tests directory, so that the installed package (not the source tree) is imported.
# A skipped test fails the run (tests/dask/conftest.py).
(cd tests/dask && "$venv/bin/python" -m pytest -q -p no:cacheprovider .)

(cd "$root/build" && "$root/.venv/bin/python" "$root/bench/compare_dask.py" --quick)
