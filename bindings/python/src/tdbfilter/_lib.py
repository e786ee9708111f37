"""Loading the tdbfilter C library and declaring its functions (ctypes).

The library is looked up, in order, at:

1. ``TDBFILTER_LIBRARY`` (a path to ``libtdbfilter.so``);
2. the install prefix: ``pkg-config --variable=libdir tdbfilter``, then ``sys.prefix/lib``;
3. the build tree, when this package runs from a source checkout (``target/release``);
4. the system loader's search path (``libtdbfilter.so.0.1``, ``libtdbfilter.so``).

ctypes releases the GIL around every foreign call (``CDLL``), so filtering from several Python
threads runs in parallel.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from ctypes import POINTER, c_bool, c_char_p, c_int, c_size_t, c_uint16, c_uint32, c_uint64, c_void_p
from pathlib import Path

SONAME = "libtdbfilter.so.0.1"


def _candidates() -> list[str]:
    found: list[str] = []
    env = os.environ.get("TDBFILTER_LIBRARY")
    if env:
        return [env]
    if shutil.which("pkg-config"):
        try:
            libdir = subprocess.run(
                ["pkg-config", "--variable=libdir", "tdbfilter"],
                capture_output=True, text=True, timeout=10, check=True,
            ).stdout.strip()
            if libdir:
                found.append(str(Path(libdir) / SONAME))
        except (subprocess.SubprocessError, OSError):
            pass
    found.append(str(Path(sys.prefix) / "lib" / SONAME))
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "Cargo.toml").is_file() and (parent / "include" / "tdbfilter.h").is_file():
            found.append(str(parent / "target" / "release" / "libtdbfilter.so"))
            break
    found += [SONAME, "libtdbfilter.so"]
    return found


def load() -> ctypes.CDLL:
    """Loads the library from the first place that has it; raises OSError naming every place
    tried."""
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{path} (missing)")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        _declare(lib)
        return lib
    raise OSError(
        "cannot load the tdbfilter C library; set TDBFILTER_LIBRARY to libtdbfilter.so's path. "
        "Tried: " + "; ".join(tried)
    )


P = c_void_p  # opaque handles
PP = POINTER(c_void_p)


def _declare(lib: ctypes.CDLL) -> None:
    """Declares every function the package calls, with its C signature."""
    sigs = {
        "tdb_error_status": (c_int, [P]),
        "tdb_error_message": (c_char_p, [P]),
        "tdb_error_free": (None, [P]),
        "tdb_version": (c_char_p, []),
        "tdb_pipeline_create": (c_int, [PP, PP]),
        "tdb_pipeline_free": (None, [P]),
        "tdb_pipeline_from_spec": (c_int, [c_char_p, PP, PP]),
        "tdb_pipeline_to_spec": (c_int, [P, c_char_p, c_size_t, POINTER(c_size_t), PP]),
        "tdb_pipeline_add_filter": (c_int, [P, c_uint32, PP]),
        "tdb_pipeline_set_option": (c_int, [P, c_uint32, c_uint32, c_void_p, PP]),
        "tdb_pipeline_get_option": (c_int, [P, c_uint32, c_uint32, c_void_p, PP]),
        "tdb_pipeline_filter_count": (c_int, [P, POINTER(c_uint32), PP]),
        "tdb_pipeline_filter_type": (c_int, [P, c_uint32, POINTER(c_uint32), PP]),
        "tdb_pipeline_set_max_chunk_size": (c_int, [P, c_uint32, PP]),
        "tdb_pipeline_set_threads": (c_int, [P, c_uint32, PP]),
        "tdb_pipeline_set_skip_checksum_validation": (c_int, [P, c_bool, PP]),
        "tdb_pipeline_set_encryption_key": (c_int, [P, c_char_p, c_size_t, PP]),
        "tdb_pipeline_set_memory_limit": (c_int, [P, c_uint64, PP]),
        "tdb_pipeline_set_webp_extents": (c_int, [P, c_uint32, c_uint16, c_uint16, PP]),
        "tdb_pipeline_serialize": (c_int, [P, c_char_p, c_size_t, POINTER(c_size_t), PP]),
        "tdb_pipeline_deserialize": (c_int, [c_char_p, c_size_t, c_uint32, PP, PP]),
        "tdb_pipeline_filtered_size_bound": (c_int, [P, c_size_t, POINTER(c_size_t), PP]),
        "tdb_pipeline_filter": (c_int, [P, P, PP, PP]),
        "tdb_pipeline_filter_into": (c_int, [P, P, c_void_p, c_size_t, POINTER(c_size_t), PP]),
        "tdb_pipeline_unfilter": (c_int, [P, c_char_p, c_size_t, c_uint32, c_uint64, PP, PP]),
        "tdb_pipeline_unfilter_into": (
            c_int, [P, c_char_p, c_size_t, c_uint32, c_uint64, c_void_p, c_size_t,
                    POINTER(c_size_t), PP]),
        "tdb_pipeline_filter_var": (c_int, [P, P, P, PP, PP, PP]),
        "tdb_pipeline_unfilter_var": (
            c_int, [P, P, c_char_p, c_size_t, c_char_p, c_size_t, c_uint32, PP, PP]),
        "tdb_tile_create": (c_int, [c_uint32, c_uint64, c_void_p, c_size_t, PP, PP]),
        "tdb_tile_create_var": (
            c_int, [c_uint32, POINTER(c_uint64), c_size_t, c_void_p, c_size_t, PP, PP]),
        "tdb_tile_data": (c_int, [P, POINTER(c_void_p), POINTER(c_size_t)]),
        "tdb_tile_offsets": (c_int, [P, POINTER(c_void_p), POINTER(c_size_t)]),
        "tdb_tile_free": (None, [P]),
        "tdb_generic_tile_read": (
            c_int, [c_char_p, c_size_t, c_char_p, c_size_t, PP, POINTER(c_uint64), PP]),
        "tdb_generic_tile_write": (c_int, [P, P, PP, PP]),
        "tdb_generic_tile_default_pipeline": (c_int, [PP, PP]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
