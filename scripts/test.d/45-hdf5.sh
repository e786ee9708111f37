#!/usr/bin/env bash
# step: HDF5 filter plugin (plugins/hdf5): C test through HDF5_PLUGIN_PATH, h5dump, h5ls -v, tdbf inspect of a raw chunk, h5py, damaged chunks
#
# Uses Debian's HDF5 1.10.8 (libhdf5-dev, hdf5-tools) and Debian's python3-h5py, which is
# built on that same libhdf5: one HDF5 in the process, so the plugin (linked to it) loads
# reliably. (PyPI's h5py wheels bundle their own HDF5 build, a second copy in the process.)
set -euo pipefail
root="${TDBF_ROOT:?}"
prefix="${TDBF_PREFIX:?}"
cd "$root"
fail() { echo "45-hdf5: $*" >&2; exit 1; }
if ! dpkg -s libhdf5-dev hdf5-tools python3-h5py >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libhdf5-dev hdf5-tools python3-h5py >/dev/null
fi

# The plugin and its test, in the build tree the C-test step configured (cargo: no rebuild).
cmake -S . -B build -DTDBFILTER_BUILD_HDF5_PLUGIN=ON -DTDBFILTER_CARGO_PROFILE="$TDBF_PROFILE" >/dev/null
cmake --build build -j 2 --target h5tdbfilter test_h5tdbfilter >/dev/null
plugin_dir=$root/build/plugins/hdf5
work=$root/build/hdf5-check
rm -rf "$work" && mkdir -p "$work"

HDF5_PLUGIN_PATH=$plugin_dir "$plugin_dir/test_h5tdbfilter" "$work"
h5=$work/h5tdbfilter_test.h5

# h5dump, an independent reader, decodes a dataset through the plugin.
dump=$(HDF5_PLUGIN_PATH=$plugin_dir h5dump -d /small_int32 -s 0 -c 8 "$h5")
echo "$dump" | grep -q '(0): 0, 2, 5, 7, 10, 12, 15, 4' || fail "h5dump read other values:
$dump"
echo "h5dump: $(echo "$dump" | grep '(0):' | tr -s ' ')"
# h5ls -v names the filter.
h5ls -v "$h5/small_int32" | grep -q 'Filter-0: *tdbfilter: TileDB filter pipeline-333' \
  || fail "h5ls -v does not show the filter: $(h5ls -v "$h5/small_int32")"
echo "h5ls -v: $(h5ls -v "$h5/small_int32" | grep Filter-0 | tr -s ' ')"
# A raw chunk is a TileDB filtered tile: tdbf reads it.
"$TDBF_BUILD/tdbf" inspect "$work/chunk0.tdb" | tail -n 1

# h5py (Debian's, on the same HDF5) through the installed plugin: exercises the RUNPATH that
# finds libtdbfilter from <prefix>/lib/hdf5/plugin.
cmake --install build --prefix "$prefix" >/dev/null
installed=$prefix/lib/hdf5/plugin
[ -f "$installed/libh5tdbfilter.so" ] || fail "the plugin was not installed to $installed"
[ -f "$prefix/include/h5tdbfilter.h" ] || fail "h5tdbfilter.h was not installed"
nm -D --defined-only "$installed/libh5tdbfilter.so" | awk '{print $3}' | sort | tr '\n' ' ' \
  | grep -qx 'H5PLget_plugin_info H5PLget_plugin_type ' || fail "the plugin exports more than H5PL*"
HDF5_PLUGIN_PATH=$installed /usr/bin/python3 plugins/hdf5/tests/test_h5py.py \
  "$prefix/lib/libtdbfilter.so" "$work"

# The documented install order in a fresh build folder with HDF5 installed: only the library
# is built, then `cmake --install` (which stopped at "cannot find …/libh5tdbfilter.so"): the
# install builds the plugin it installs. Same profile as test-all's build (no cargo rebuild).
fresh=$root/build/fresh-install
rm -rf "$fresh" "$work/fresh-prefix"
cmake -S . -B "$fresh" -DCMAKE_BUILD_TYPE=Release -DTDBFILTER_CARGO_PROFILE="$TDBF_PROFILE" \
  -DTDBFILTER_BUILD_C_TESTS=OFF >/dev/null
grep -q '^TDBFILTER_BUILD_HDF5_PLUGIN:BOOL=ON' "$fresh/CMakeCache.txt" \
  || fail "a fresh configure with HDF5 installed does not build the plugin"
cmake --build "$fresh" --target tdbfilter_cargo >/dev/null
cmake --install "$fresh" --prefix "$work/fresh-prefix" >/dev/null \
  || fail "cmake --install after building only tdbfilter_cargo failed"
[ -f "$work/fresh-prefix/lib/hdf5/plugin/libh5tdbfilter.so" ] \
  || fail "the fresh install has no plugin"
rm -rf "$fresh"
echo "fresh build folder: --target tdbfilter_cargo, then cmake --install: plugin installed"
