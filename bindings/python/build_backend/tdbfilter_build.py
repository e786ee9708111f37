"""The PEP 517 build backend of the tdbfilter Python package: flit_core's wheel with the C
library inside.

``pip install ./bindings/python`` (or ``pip wheel``) builds flit_core's pure wheel of
``src/tdbfilter`` and adds ``tdbfilter/libtdbfilter.so``, the package's loader's first choice
(``_lib.py``); the wheel is then tagged ``py3-none-<platform>`` (ctypes: no Python ABI), for
``auditwheel repair`` to make it a ``manylinux_2_*`` wheel. The library comes from, in order:

1. the ``library`` config setting (``pip wheel -C library=PATH``) or ``TDBFILTER_WHEEL_LIBRARY``:
   a ``libtdbfilter.so`` to package as it is, or ``none`` for the pure package without a
   library (which then finds an installed C library: pkg-config, ``TDBFILTER_LIBRARY``…);
2. otherwise ``cargo build -p tdbfilter-ffi`` (the workspace's C-ABI crate) of the checkout
   this package sits in, in the checkout's ``target/``, with the cargo profile of
   ``TDBFILTER_CARGO_PROFILE`` (default ``release``; the test command sets its own, so that one
   build serves the tool, the C tests and the wheel) and the features of
   ``TDBFILTER_CARGO_FEATURES`` (default none beyond the crate's defaults); the packages
   selected by ``TDBFILTER_CARGO_SCOPE`` (default ``-p tdbfilter-ffi``; the test command gives its
   build step's ``--workspace --all-targets`` so that cargo's feature unification is the same).
   ``TDBFILTER_WHEEL_REQUIRE_FRESH=1`` makes a build that had to compile the library an error
   (the test command's check that its build is reused).

Opt-in, for a wheel that installs on older Linux: the ``glibc`` config setting
(``pip wheel -C glibc=2.17``) or ``TDBFILTER_WHEEL_GLIBC=2.17`` relinks the library for that
glibc (``manylinux_2_17``: glibc 2.17 on, CentOS 7, RHEL 8, Ubuntu 20.04…) from the
``libtdbfilter.a`` of the same build (cargo's staticlib beside the cdylib; with
``library=PATH``, the one beside PATH) with ``zig cc`` (PyPI's ``ziglang``, added to the build
requirements when no zig is found): no second compile. ``tdbfilter_relink.py`` does the link
and checks the result. The default stays the plain cargo library, linked against the build
machine's glibc.

Nothing is written into the source tree but cargo's ``target/``: flit_core builds in pip's
directories, this module deletes the bytecode Python cached when importing it, and the
wheel is assembled in a temporary folder.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path
from typing import Optional

# pip imports this module from the checkout (backend-path): keep its bytecode out of it.
sys.dont_write_bytecode = True
try:
    _cached = Path(importlib.util.cache_from_source(__file__))
    _cached.unlink(missing_ok=True)
    _cached.parent.rmdir()  # only when empty
except (OSError, NotImplementedError):
    pass

from flit_core import buildapi as _flit  # noqa: E402

import tdbfilter_relink as _relink  # noqa: E402  (beside this module: backend-path)

PACKAGE = "tdbfilter"
BUNDLED = "libtdbfilter.so"  # the name _lib.py looks for next to itself
CHECKOUT = Path(__file__).resolve().parents[3]

get_requires_for_build_sdist = _flit.get_requires_for_build_sdist
get_requires_for_build_editable = _flit.get_requires_for_build_editable
prepare_metadata_for_build_wheel = _flit.prepare_metadata_for_build_wheel
prepare_metadata_for_build_editable = _flit.prepare_metadata_for_build_editable
build_sdist = _flit.build_sdist
# An editable install runs from src/ and finds the library of the checkout's build tree.
build_editable = _flit.build_editable


def get_requires_for_build_wheel(config_settings=None):
    """flit_core's requirements, and ``ziglang`` when relinking for an older glibc finds no
    zig (``TDBFILTER_ZIG``, the interpreter's ``ziglang``, ``python-zig`` or ``zig``)."""
    requires = list(_flit.get_requires_for_build_wheel(config_settings))
    if _glibc(config_settings or {}) and not _relink.zig_available():
        requires.append("ziglang")
    return requires


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """flit_core's wheel, with the C library added (unless the library setting is ``none``)."""
    settings = config_settings or {}
    glibc = _glibc(settings)
    library = _library(settings)
    if glibc and library is None:
        raise ValueError("the glibc setting relinks the bundled library; with library=none "
                         "there is none")
    with tempfile.TemporaryDirectory(prefix="tdbfilter-wheel-") as tmp:
        if glibc:
            cdylib, staticlib = library
            if staticlib is None:
                raise FileNotFoundError(f"relinking for glibc {glibc} needs the static library "
                                        f"libtdbfilter.a beside {cdylib}; there is none")
            library = Path(tmp) / "relinked" / BUNDLED
            _relink.relink(staticlib, cdylib, library, glibc)
            print(f"tdbfilter: {staticlib} relinked for glibc {glibc}", file=sys.stderr,
                  flush=True)
        elif library is not None:
            library = library[0]
        pure = Path(tmp) / _flit.build_wheel(tmp, config_settings, metadata_directory)
        if library is None:
            shutil.move(str(pure), os.path.join(wheel_directory, pure.name))
            return pure.name
        return _bundle(pure, library, Path(wheel_directory))


def _glibc(config_settings: dict) -> Optional[str]:
    """The glibc version to relink for (``glibc`` setting or ``TDBFILTER_WHEEL_GLIBC``), or
    None for cargo's library as it is."""
    setting = (config_settings.get("glibc") or os.environ.get("TDBFILTER_WHEEL_GLIBC")
               or "").strip()
    if not setting:
        return None
    _relink.parse_glibc(setting)  # a clear error for anything but 2.N
    return setting


def _library(config_settings: dict) -> Optional[tuple]:
    """The library to bundle and the static library beside it (None if there is none), or
    None for no library, from the settings or a cargo build."""
    setting = config_settings.get("library") or os.environ.get("TDBFILTER_WHEEL_LIBRARY")
    if setting == "none":
        return None
    if setting:
        path = Path(setting).resolve()
        if not path.is_file():
            raise FileNotFoundError(f"the library to bundle, {path}, does not exist")
        staticlib = path.parent / "libtdbfilter.a"
        return path, (staticlib if staticlib.is_file() else None)
    return _cargo_build()


def _cargo_build() -> tuple:
    """``cargo build -p tdbfilter-ffi`` in the checkout; the paths of the cdylib and the
    staticlib."""
    manifest = CHECKOUT / "Cargo.toml"
    if not (manifest.is_file() and (CHECKOUT / "include" / "tdbfilter.h").is_file()):
        raise RuntimeError(
            f"no tdbfilter checkout around {Path(__file__).parent} to build the library in: "
            "build the wheel from a checkout, or set TDBFILTER_WHEEL_LIBRARY to a "
            "libtdbfilter.so (or to 'none' for the package without a library)")
    cargo = os.environ.get("CARGO") or shutil.which("cargo")
    if not cargo:
        raise RuntimeError("cargo (the Rust toolchain) is needed to build the tdbfilter library; "
                           "or set TDBFILTER_WHEEL_LIBRARY to a built libtdbfilter.so")
    profile = os.environ.get("TDBFILTER_CARGO_PROFILE", "release").strip() or "release"
    # The packages built: the C-ABI crate alone unless TDBFILTER_CARGO_SCOPE says otherwise (the
    # test command sets its build step's "--workspace --all-targets": cargo unifies dependency
    # features over what it builds, so another selection would compile the crates again).
    scope = os.environ.get("TDBFILTER_CARGO_SCOPE", "").split() or ["-p", "tdbfilter-ffi"]
    cmd = [cargo, "build", "--profile", profile, *scope, "--manifest-path",
           str(manifest), "--message-format=json-render-diagnostics"]
    features = os.environ.get("TDBFILTER_CARGO_FEATURES", "").strip()
    if features:
        cmd += ["--features", features]
    print("tdbfilter: " + " ".join(cmd), file=sys.stderr, flush=True)
    # cargo's own messages (stderr) go to pip's log; its JSON (stdout) names the artifacts.
    proc = subprocess.run(cmd, cwd=CHECKOUT, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"cargo build failed (exit status {proc.returncode})")
    found = None
    for line in proc.stdout.splitlines():
        msg = json.loads(line) if line.startswith("{") else {}
        target = msg.get("target", {})
        # The library itself: with --all-targets the crate's test harness is an artifact of
        # the same target too (its file an executable, no .so).
        if msg.get("reason") == "compiler-artifact" and target.get("name") == PACKAGE \
                and "cdylib" in target.get("kind", []) \
                and any(f.endswith(".so") for f in msg.get("filenames", [])):
            found = msg
    sos = [f for f in (found or {}).get("filenames", []) if f.endswith(".so")]
    if not sos:
        raise RuntimeError("cargo build reported no libtdbfilter.so (cdylib) artifact")
    archives = [f for f in found.get("filenames", []) if f.endswith(".a")]
    fresh = found.get("fresh", False)
    print(f"tdbfilter: library {sos[0]} ({'reused' if fresh else 'compiled'})",
          file=sys.stderr, flush=True)
    if os.environ.get("TDBFILTER_WHEEL_REQUIRE_FRESH") == "1" and not fresh:
        raise RuntimeError(
            f"cargo compiled the tdbfilter library again (profile {profile!r}, features "
            f"{features or 'none'!r}) instead of reusing the build in {CHECKOUT / 'target'}: "
            "build it first with the same profile and features")
    return Path(sos[0]), (Path(archives[0]) if archives else None)


def _platform_tag() -> str:
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _record_line(name: str, data: bytes) -> list:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def _bundle(pure: Path, library: Path, wheel_directory: Path) -> str:
    """Rewrites flit_core's wheel as a platform wheel with ``library`` inside."""
    name, version = pure.name.split("-")[:2]
    tag = f"py3-none-{_platform_tag()}"
    out_name = f"{name}-{version}-{tag}.whl"
    dist_info = f"{name}-{version}.dist-info"
    records = []
    with zipfile.ZipFile(pure) as src, \
            zipfile.ZipFile(wheel_directory / out_name, "w", zipfile.ZIP_DEFLATED) as dst:
        def put(arcname: str, data: bytes, mode: int = 0o644) -> None:
            info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(info, data)
            records.append(_record_line(arcname, data))

        for item in src.infolist():
            if item.filename in (f"{dist_info}/RECORD", f"{dist_info}/WHEEL"):
                continue
            put(item.filename, src.read(item), (item.external_attr >> 16) & 0o777 or 0o644)
        put(f"{PACKAGE}/{BUNDLED}", library.read_bytes(), 0o755)
        wheel = src.read(f"{dist_info}/WHEEL").decode().splitlines()
        wheel = [line for line in wheel
                 if not line.startswith(("Root-Is-Purelib:", "Tag:")) and line.strip()]
        wheel += ["Root-Is-Purelib: false", f"Tag: {tag}"]
        put(f"{dist_info}/WHEEL", ("\n".join(wheel) + "\n").encode())
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerows(records + [[f"{dist_info}/RECORD", "", ""]])
        dst.writestr(zipfile.ZipInfo(f"{dist_info}/RECORD", date_time=(2020, 1, 1, 0, 0, 0)),
                     text.getvalue())
    return out_name
