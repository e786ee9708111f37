#!/usr/bin/env bash
# step: install tree (cmake --install), SONAME, exported symbols, header as C11/C++17, CMake and pkg-config consumers
#
# Installs the release build that the C-test step built (build/) into $TDBF_PREFIX, which the
# later steps (Go, Python, HDF5) use, and checks it the way a C/C++ user would consume it.
set -euo pipefail
root="${TDBF_ROOT:?}"
prefix="${TDBF_PREFIX:?}"
cd "$root"
if ! command -v pkg-config >/dev/null; then
  apt-get update -qq && apt-get install -y -qq pkg-config >/dev/null
fi
fail() { echo "20-install: $*" >&2; exit 1; }

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
soversion=${version%.*}
work=$root/build/install-check
rm -rf "$prefix" "$work"
mkdir -p "$work"
cmake -S . -B build -DTDBFILTER_CARGO_PROFILE="$TDBF_PROFILE" >/dev/null
cmake --build build --target tdbfilter_cargo >/dev/null
cmake --install build --prefix "$prefix" >/dev/null

# The file list, exactly.
expected="include/tdbfilter.h
lib/cmake/tdbfilter/tdbfilterConfig.cmake
lib/cmake/tdbfilter/tdbfilterConfigVersion.cmake
lib/libtdbfilter.a
lib/libtdbfilter.so
lib/libtdbfilter.so.$soversion
lib/libtdbfilter.so.$version
lib/pkgconfig/tdbfilter.pc"
# (The HDF5 plugin's files, when HDF5 is installed and the plugin built, are checked by
# 45-hdf5.sh.)
actual=$(cd "$prefix" && find . \( -type f -o -type l \) | sed 's|^\./||' \
  | grep -v -e '^include/h5tdbfilter\.h$' -e '^lib/hdf5/plugin/libh5tdbfilter\.so$' | LC_ALL=C sort)
[ "$actual" = "$expected" ] || fail "installed files differ:
$actual"
[ "$(readlink "$prefix/lib/libtdbfilter.so")" = "libtdbfilter.so.$soversion" ] || fail "libtdbfilter.so link"
[ "$(readlink "$prefix/lib/libtdbfilter.so.$soversion")" = "libtdbfilter.so.$version" ] || fail "soname link"
soname=$(objdump -p "$prefix/lib/libtdbfilter.so.$version" | awk '/SONAME/ {print $2}')
[ "$soname" = "libtdbfilter.so.$soversion" ] || fail "SONAME is '$soname'"
echo "SONAME: $(objdump -p "$prefix/lib/libtdbfilter.so.$version" | grep SONAME | tr -s ' ')"

# Only the C API is exported, and all of it: the exported symbols are the header's functions.
exported=$(nm -D --defined-only "$prefix/lib/libtdbfilter.so.$version" | awk '{print $3}' | LC_ALL=C sort)
others=$(printf '%s\n' "$exported" | grep -v '^tdb_' || true)
[ -z "$others" ] || fail "symbols other than tdb_* are exported: $others"
declared=$(grep -oE '\btdb_[a-z0-9_]+\(' "$prefix/include/tdbfilter.h" | tr -d '(' | LC_ALL=C sort -u)
[ "$exported" = "$declared" ] || fail "exported symbols differ from the header's functions:
$(diff <(printf '%s\n' "$declared") <(printf '%s\n' "$exported") || true)"
echo "exported symbols: $(printf '%s\n' "$exported" | wc -l), all tdb_*, equal to the header's functions"
# ABI 0.x keeps every function of its minor release: each symbol of ffi/abi/0.MINOR.symbols (the
# functions of the first release of this minor) is still exported. Additions are allowed.
abi_list="ffi/abi/$soversion.symbols"
[ -f "$abi_list" ] || fail "$abi_list is missing (the symbols of ABI $soversion's first release)"
removed=$(LC_ALL=C comm -23 "$abi_list" <(printf '%s\n' "$exported"))
[ -z "$removed" ] || fail "symbols of ABI $soversion are no longer exported: $removed"
echo "ABI $soversion: all $(wc -l < "$abi_list") functions of its first release are still exported"

# The header alone compiles as C11 and C++17, and C++ links its functions unmangled.
printf '#include <tdbfilter.h>\nint main(void) { return tdb_version()[0] == 0; }\n' > "$work/header.c"
cp "$work/header.c" "$work/header.cpp"
cc -std=c11 -Wall -Wextra -Werror -pedantic -I"$prefix/include" "$work/header.c" \
  -L"$prefix/lib" -ltdbfilter -o "$work/header_c"
c++ -std=c++17 -Wall -Wextra -Werror -pedantic -I"$prefix/include" "$work/header.cpp" \
  -L"$prefix/lib" -ltdbfilter -o "$work/header_cpp"
LD_LIBRARY_PATH="$prefix/lib" "$work/header_cpp"
echo "header: C11 and C++17 with -Wall -Wextra -Werror -pedantic, extern \"C\" linkage"

# No absolute build paths in the installed package files.
if grep -l -e "$root" -e "$prefix" "$prefix/lib/pkgconfig/tdbfilter.pc" "$prefix"/lib/cmake/tdbfilter/*.cmake; then
  fail "installed package files name absolute paths"
fi

# Consumers, built the way their users build them, against the prefix and a moved copy of it.
consume() {
  local p=$1 tag=$2
  cmake -S examples/consumer-cmake -B "$work/cmake-$tag" -DCMAKE_PREFIX_PATH="$p" \
    -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$work/cmake-$tag" >/dev/null
  "$work/cmake-$tag/consumer_shared"
  "$work/cmake-$tag/consumer_static"
  readelf -d "$work/cmake-$tag/consumer_shared" | grep -q "RUNPATH.*\[$p/lib\]" \
    || fail "$tag: CMake consumer does not use $p/lib"
  rm -rf "$work/pc-$tag" && cp -r examples/consumer-pkgconfig "$work/pc-$tag"
  # (glibc's linker notes about getaddrinfo/getpwuid_r in static programs are kept in a log.)
  PKG_CONFIG_PATH="$p/lib/pkgconfig" make -s -C "$work/pc-$tag" check 2>"$work/pc-$tag.log" \
    || { cat "$work/pc-$tag.log" >&2; fail "$tag: pkg-config consumer"; }
  local exe
  for exe in "$work/cmake-$tag/consumer_static" "$work/pc-$tag/consumer_static"; do
    if readelf -d "$exe" 2>/dev/null | grep -q 'NEEDED.*libtdbfilter'; then
      fail "$exe needs the shared library"
    fi
    readelf -lW "$exe" | grep GNU_STACK | grep -q 'RW ' || fail "$exe has an executable stack"
  done
}
consume "$prefix" installed
cp -a "$prefix" "$work/moved"
consume "$work/moved" moved
echo "consumers: CMake (C++17, shared and static) and pkg-config (shared and -static), installed and moved prefix"

# The CMake package version: 0.x promises the same minor version only.
mkdir -p "$work/version"
for want in "$soversion" "0.99"; do
  printf 'cmake_minimum_required(VERSION 3.16)\nproject(v LANGUAGES C)\nfind_package(tdbfilter %s CONFIG REQUIRED)\n' \
    "$want" > "$work/version/CMakeLists.txt"
  if cmake -S "$work/version" -B "$work/version/build-$want" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null 2>&1; then
    [ "$want" = "$soversion" ] || fail "find_package(tdbfilter $want) accepted version $version"
  else
    [ "$want" != "$soversion" ] || fail "find_package(tdbfilter $want) refused version $version"
  fi
done
echo "find_package(tdbfilter $soversion) accepted, find_package(tdbfilter 0.99) refused"
