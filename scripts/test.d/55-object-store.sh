# step: object storage (src/storage, s3://, azure:// and gs:// URIs): moto (S3), azurite (Azure Blob) and fake-gcs-server (GCS: reads of TileDB-Py's arrays uploaded into it) on 127.0.0.1; TileDB-Py writes dense/sparse/var/nullable/encrypted arrays and metadata that we read cell for cell (Python package over the C API, tdbf info/verify/cat, environment-only configuration), we create and write arrays that TileDB-Py reads; we consolidate and vacuum arrays TileDB-Py wrote (tdbf array consolidate/vacuum) and TileDB-Py reads them; fault injection through a proxy (503, drops, truncated and short bodies, timeouts; failed writes leave no commit); GET/LIST/HEAD counts ours vs TileDB-Py (--check); bench/compare_s3.py --quick
set -euo pipefail
# Run alone, it finds the checkout and its .venv itself.
export TDBF_ROOT="${TDBF_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}"
export PATH="$TDBF_ROOT/.venv/bin:$PATH"
cd "$TDBF_ROOT"
# Runnable alone: installs moto/boto3 (.venv) and azurite (build/node), and starts the servers
# unless scripts/test-all.sh already did (TDBF_S3_ENDPOINT, TDBF_AZURE_ENDPOINT).
source scripts/object-store-servers.sh
# Each part timed, the preparation too.
part() {
  local name=$1 t0=$SECONDS
  shift
  "$@"
  echo "object-store $name: $((SECONDS - t0)) s"
}
part "servers' packages" tdbf_object_stores_install
if ! python -c "import tiledb, numpy" 2>/dev/null; then
  python -m pip install -q --disable-pip-version-check -r tests/compat/requirements.txt
fi
part "the Python package" python -m pip install -q --disable-pip-version-check ./bindings/python
part "servers" tdbf_object_stores_start
lib="$TDBF_BUILD/libtdbfilter.so"
tdbf="$TDBF_BUILD/tdbf"
part "reads and writes (S3, Azure)" python tests/object_store/run_object_store_tests.py --tdbf "$tdbf" --lib "$lib"
part "GCS reads" python tests/object_store/run_gcs_tests.py --tdbf "$tdbf" --lib "$lib"
part "fault injection" python tests/object_store/run_fault_tests.py --tdbf "$tdbf" --lib "$lib"
part "request counts" python tests/object_store/count_requests.py --lib "$lib" --check
part "compare_s3 --quick" python bench/compare_s3.py --quick --lib "$lib"
