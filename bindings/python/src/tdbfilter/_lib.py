"""Loading the tdbfilter C library and declaring its functions (ctypes).

The library is looked up, in order, at:

1. the library bundled in the package (``tdbfilter/libtdbfilter.so``: the wheel's, built with
   this package, so a ``TDBFILTER_LIBRARY`` set for other purposes cannot pair it with
   another version of the C API);
2. ``TDBFILTER_LIBRARY`` (a path to ``libtdbfilter.so``), then nothing else;
3. the install prefix: ``pkg-config --variable=libdir tdbfilter``, then ``sys.prefix/lib``;
4. the build tree, when this package runs from a source checkout (``target/release``);
5. the system loader's search path (``libtdbfilter.so.0.3``, ``libtdbfilter.so``).

Every C function the package calls is declared once, in :data:`SIGNATURES`, and only declared
functions are reachable (:func:`load` returns a :class:`Library` holding exactly those).
``bindings/python/check_ctypes.py`` checks :data:`SIGNATURES` and :data:`CONSTANTS` against
``include/tdbfilter.h`` (run by the test command), so a change of the C API that the package
does not follow fails the tests instead of corrupting memory.

ctypes releases the GIL around every foreign call (``CDLL``), so filtering from several Python
threads runs in parallel.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from ctypes import (POINTER, c_bool, c_char_p, c_int, c_int32, c_size_t, c_uint8, c_uint16,
                    c_uint32, c_uint64, c_void_p)
from pathlib import Path

SONAME = "libtdbfilter.so.0.3"
BUNDLED = "libtdbfilter.so"
"""The library's name in a wheel, next to this file (bindings/python/build_backend)."""


def _candidates() -> list[str]:
    here = Path(__file__).resolve()
    bundled = here.with_name(BUNDLED)
    found: list[str] = [str(bundled)] if bundled.is_file() else []
    env = os.environ.get("TDBFILTER_LIBRARY")
    if env:
        return found + [env]
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
    for parent in here.parents:
        if (parent / "Cargo.toml").is_file() and (parent / "include" / "tdbfilter.h").is_file():
            found.append(str(parent / "target" / "release" / "libtdbfilter.so"))
            break
    found += [SONAME, "libtdbfilter.so"]
    return found


class Library:
    """The declared functions of the loaded library, as attributes (``L.tdb_version()``).

    Only the functions of :data:`SIGNATURES` exist here: calling an undeclared C function
    (whose arguments ctypes would guess) is an ``AttributeError``, not undefined behaviour."""

    def __init__(self, cdll: ctypes.CDLL):
        self.path = cdll._name
        for name, (restype, argtypes) in SIGNATURES.items():
            fn = getattr(cdll, name)
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name, fn)


def load() -> Library:
    """Loads the library from the first place that has it; raises OSError naming every place
    tried."""
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{path} (missing)")
            continue
        try:
            cdll = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        return Library(cdll)
    raise OSError(
        "cannot load the tdbfilter C library; set TDBFILTER_LIBRARY to libtdbfilter.so's path. "
        "Tried: " + "; ".join(tried)
    )


# The header's constants the package uses, by their C names (checked against the header).
CONSTANTS = {
    # tdb_status_t
    "TDB_OK": 0, "TDB_ERR_INVALID_ARGUMENT": 1, "TDB_ERR_CORRUPT_DATA": 2,
    "TDB_ERR_CHECKSUM_MISMATCH": 3, "TDB_ERR_DECRYPTION_FAILED": 4, "TDB_ERR_UNSUPPORTED": 5,
    "TDB_ERR_BUFFER_TOO_SMALL": 6, "TDB_ERR_OUT_OF_MEMORY": 7, "TDB_ERR_INTERNAL": 8,
    "TDB_ERR_IO": 9,
    # tdb_filter_option_t
    "TDB_COMPRESSION_LEVEL": 0, "TDB_BIT_WIDTH_MAX_WINDOW": 1, "TDB_POSITIVE_DELTA_MAX_WINDOW": 2,
    "TDB_SCALE_FLOAT_BYTEWIDTH": 3, "TDB_SCALE_FLOAT_FACTOR": 4, "TDB_SCALE_FLOAT_OFFSET": 5,
    "TDB_WEBP_QUALITY": 6, "TDB_WEBP_INPUT_FORMAT": 7, "TDB_WEBP_LOSSLESS": 8,
    "TDB_COMPRESSION_REINTERPRET_DATATYPE": 9,
    # tdb_array_pipeline_kind_t
    "TDB_ARRAY_PIPELINE_FIELD": 0, "TDB_ARRAY_PIPELINE_OFFSETS": 1,
    "TDB_ARRAY_PIPELINE_VALIDITY": 2, "TDB_ARRAY_PIPELINE_COORDS": 3,
    # tdb_object_type_t
    "TDB_OBJECT_INVALID": 0, "TDB_OBJECT_GROUP": 1, "TDB_OBJECT_ARRAY": 2,
    # the format version TileDB 2.30 writes
    "TDB_FORMAT_VERSION": 22,
    # tdb_layout_t (the writer's cell orders)
    "TDB_ROW_MAJOR": 0, "TDB_COL_MAJOR": 1, "TDB_GLOBAL_ORDER": 2, "TDB_UNORDERED": 3,
    # tdb_query_status_t (batch reads)
    "TDB_QUERY_COMPLETED": 1, "TDB_QUERY_INCOMPLETE": 3, "TDB_QUERY_UNINITIALIZED": 4,
}

P = c_void_p  # an opaque handle, or a void pointer
PP = POINTER(c_void_p)  # where a handle (or any pointer) is returned
U32P, U64P, SIZEP = POINTER(c_uint32), POINTER(c_uint64), POINTER(c_size_t)
STRP = POINTER(c_char_p)  # where a static or borrowed C string is returned

# name -> (return type, argument types) of every C function the package calls.
SIGNATURES: dict[str, tuple[object, list]] = {
    "tdb_version": (c_char_p, []),
    # names of the library's types
    "tdb_datatype_size": (c_int, [c_uint32, U64P, PP]),
    "tdb_datatype_name": (c_int, [c_uint32, STRP, PP]),
    "tdb_datatype_from_name": (c_int, [c_char_p, U32P, PP]),
    "tdb_filter_type_name": (c_int, [c_uint32, STRP, PP]),
    "tdb_filter_type_from_name": (c_int, [c_char_p, U32P, PP]),
    "tdb_status_name": (c_char_p, [c_int32]),
    # errors
    "tdb_error_status": (c_int, [P]),
    "tdb_error_message": (c_char_p, [P]),
    "tdb_error_free": (None, [P]),
    # pipelines
    "tdb_pipeline_create": (c_int, [PP, PP]),
    "tdb_pipeline_free": (None, [P]),
    "tdb_pipeline_from_spec": (c_int, [c_char_p, PP, PP]),
    "tdb_pipeline_to_spec": (c_int, [P, c_char_p, c_size_t, SIZEP, PP]),
    "tdb_pipeline_add_filter": (c_int, [P, c_uint32, PP]),
    "tdb_pipeline_set_option": (c_int, [P, c_uint32, c_uint32, c_void_p, c_size_t, PP]),
    "tdb_pipeline_option": (c_int, [P, c_uint32, c_uint32, c_void_p, c_size_t, PP]),
    "tdb_pipeline_filter_count": (c_int, [P, U32P, PP]),
    "tdb_pipeline_filter_type": (c_int, [P, c_uint32, U32P, PP]),
    "tdb_pipeline_set_max_chunk_size": (c_int, [P, c_uint32, PP]),
    "tdb_pipeline_set_threads": (c_int, [P, c_uint32, PP]),
    "tdb_pipeline_set_skip_checksum_validation": (c_int, [P, c_bool, PP]),
    "tdb_pipeline_set_encryption_key": (c_int, [P, c_char_p, c_size_t, PP]),
    "tdb_pipeline_set_memory_limit": (c_int, [P, c_uint64, PP]),
    "tdb_pipeline_set_webp_extents": (c_int, [P, c_uint32, c_uint16, c_uint16, PP]),
    "tdb_pipeline_serialize": (c_int, [P, c_char_p, c_size_t, SIZEP, PP]),
    "tdb_pipeline_deserialize": (c_int, [c_char_p, c_size_t, c_uint32, PP, PP]),
    "tdb_pipeline_filtered_size_bound": (c_int, [P, c_size_t, SIZEP, PP]),
    "tdb_pipeline_filter": (c_int, [P, P, PP, PP]),
    "tdb_pipeline_filter_into": (c_int, [P, P, c_void_p, c_size_t, SIZEP, PP]),
    "tdb_pipeline_filter_cells_into": (
        c_int, [P, c_void_p, c_size_t, c_uint32, c_uint64, c_void_p, c_size_t, SIZEP, PP]),
    "tdb_pipeline_unfilter": (c_int, [P, c_void_p, c_size_t, c_uint32, c_uint64, PP, PP]),
    # The filtered bytes as c_void_p: bytes objects and the addresses of other buffers alike.
    "tdb_pipeline_unfilter_into": (
        c_int, [P, c_void_p, c_size_t, c_uint32, c_uint64, c_void_p, c_size_t, SIZEP, PP]),
    "tdb_pipeline_filter_var": (c_int, [P, P, P, PP, PP, PP]),
    "tdb_pipeline_unfilter_var": (
        c_int, [P, P, c_char_p, c_size_t, c_char_p, c_size_t, c_uint32, PP, PP]),
    # tiles
    "tdb_tile_create": (c_int, [c_uint32, c_uint64, c_void_p, c_size_t, PP, PP]),
    "tdb_tile_create_var": (c_int, [c_uint32, U64P, c_size_t, c_void_p, c_size_t, PP, PP]),
    "tdb_tile_data": (c_int, [P, PP, SIZEP, PP]),
    "tdb_tile_offsets": (c_int, [P, PP, SIZEP, PP]),
    "tdb_tile_free": (None, [P]),
    "tdb_generic_tile_read": (
        c_int, [c_char_p, c_size_t, c_char_p, c_size_t, PP, U64P, PP]),
    "tdb_generic_tile_write": (c_int, [P, P, PP, PP]),
    "tdb_generic_tile_default_pipeline": (c_int, [PP, PP]),
    # arrays
    "tdb_array_open": (c_int, [c_char_p, c_void_p, c_size_t, PP, PP]),
    "tdb_array_open_at": (c_int, [c_char_p, c_void_p, c_size_t, c_uint64, c_uint64, PP, PP]),
    "tdb_array_free": (None, [P]),
    "tdb_array_open_with_config": (c_int, [c_char_p, c_void_p, c_size_t, P, PP, PP]),
    "tdb_array_open_at_with_config": (
        c_int, [c_char_p, c_void_p, c_size_t, c_uint64, c_uint64, P, PP, PP]),
    # open options (ABI 0.3)
    "tdb_options_create": (c_int, [PP, PP]),
    "tdb_options_free": (None, [P]),
    "tdb_options_set_key": (c_int, [P, c_void_p, c_size_t, PP]),
    "tdb_options_set_timestamps": (c_int, [P, c_uint64, c_uint64, PP]),
    "tdb_options_set_config": (c_int, [P, P, PP]),
    "tdb_options_set_threads": (c_int, [P, c_uint32, PP]),
    "tdb_options_set_memory_limit": (c_int, [P, c_uint64, PP]),
    "tdb_array_open_with_options": (c_int, [c_char_p, P, PP, PP]),
    # queries (ABI 0.3)
    "tdb_query_create": (c_int, [P, PP, PP]),
    "tdb_query_free": (None, [P]),
    "tdb_query_set_layout": (c_int, [P, c_uint32, PP]),
    "tdb_query_add_range": (c_int, [P, c_uint32, c_void_p, c_size_t, c_void_p, c_size_t, PP]),
    "tdb_query_set_condition": (c_int, [P, c_char_p, PP]),
    "tdb_query_add_field": (c_int, [P, c_char_p, PP]),
    "tdb_query_add_aggregate": (c_int, [P, c_uint32, c_char_p, PP]),
    "tdb_query_submit": (c_int, [P, PP, c_size_t, PP]),
    "tdb_query_aggregate_count": (c_int, [P, SIZEP, PP]),
    "tdb_query_aggregate": (
        c_int, [P, c_size_t, STRP, U32P, PP, SIZEP, POINTER(c_uint8), PP]),
    "tdb_query_stats": (c_int, [P, U64P, U64P, U64P, U64P, PP]),
    "tdb_query_set_data_buffer": (c_int, [P, c_char_p, c_void_p, c_size_t, PP]),
    "tdb_query_set_offsets_buffer": (c_int, [P, c_char_p, U64P, c_size_t, PP]),
    "tdb_query_set_validity_buffer": (c_int, [P, c_char_p, POINTER(c_uint8), c_size_t, PP]),
    "tdb_query_submit_batch": (c_int, [P, PP]),
    "tdb_query_status": (c_int, [P, U32P, PP]),
    "tdb_query_result_size": (c_int, [P, c_char_p, U64P, SIZEP, SIZEP, SIZEP, PP]),
    # object-store options
    "tdb_config_alloc": (c_int, [PP, PP]),
    "tdb_config_set": (c_int, [P, c_char_p, c_char_p, PP]),
    "tdb_config_free": (None, [P]),
    "tdb_array_set_threads": (c_int, [P, c_uint32, PP]),
    "tdb_array_set_memory_limit": (c_int, [P, c_uint64, PP]),
    "tdb_array_read_fields": (c_int, [P, STRP, c_size_t, c_void_p, c_size_t, PP, PP]),
    "tdb_result_data": (c_int, [P, PP, SIZEP, PP]),
    "tdb_result_offsets": (c_int, [P, PP, SIZEP, PP]),
    "tdb_result_validity": (c_int, [P, PP, SIZEP, PP]),
    "tdb_result_cell_count": (c_int, [P, U64P, PP]),
    "tdb_result_type": (c_int, [P, U32P, U32P, PP]),
    "tdb_result_free": (None, [P]),
    "tdb_array_enumeration": (c_int, [P, c_char_p, PP, PP]),
    "tdb_array_metadata_count": (c_int, [P, U32P, PP]),
    "tdb_array_metadata_entry": (c_int, [P, c_uint32, STRP, U32P, U32P, PP, PP]),
    "tdb_array_schema_json": (c_int, [P, c_char_p, c_size_t, SIZEP, PP]),
    "tdb_array_schema_info": (
        c_int, [P, POINTER(c_uint8), POINTER(c_uint8), POINTER(c_uint8), U64P, POINTER(c_bool),
                U32P, PP]),
    "tdb_array_dimension_count": (c_int, [P, U32P, PP]),
    "tdb_array_attribute_count": (c_int, [P, U32P, PP]),
    "tdb_array_dimension": (c_int, [P, c_uint32, STRP, U32P, U32P, PP]),
    "tdb_array_dimension_domain": (c_int, [P, c_uint32, PP, PP, SIZEP, PP, PP]),
    "tdb_array_attribute": (c_int, [P, c_uint32, STRP, U32P, U32P, POINTER(c_bool), PP]),
    "tdb_array_pipeline": (c_int, [P, c_char_p, c_uint32, PP, PP]),
    "tdb_array_fragment_count": (c_int, [P, U32P, PP]),
    "tdb_array_fragment": (
        c_int, [P, c_uint32, STRP, U64P, U64P, U32P, POINTER(c_bool), U64P, U64P, PP]),
    # fragment and tile layout (tdbfilter.dask plans its chunks and partitions with these)
    "tdb_array_fragment_schema_name": (c_int, [P, c_uint32, STRP, PP]),
    "tdb_array_fragment_has_consolidated_metadata": (
        c_int, [P, c_uint32, POINTER(c_bool), PP]),
    "tdb_array_fragment_non_empty_domain": (
        c_int, [P, c_uint32, c_uint32, PP, SIZEP, PP, SIZEP, PP]),
    "tdb_array_tile_count": (c_int, [P, c_uint32, U64P, PP]),
    "tdb_array_tile_cell_count": (c_int, [P, c_uint32, c_uint64, U64P, PP]),
    "tdb_array_tile_mbr": (
        c_int, [P, c_uint32, c_uint64, c_uint32, PP, SIZEP, PP, SIZEP, PP]),
    # writing: array creation, fragments, array metadata
    "tdb_array_create": (c_int, [c_char_p, c_char_p, c_void_p, c_size_t, PP]),
    "tdb_array_metadata_put": (
        c_int, [c_char_p, c_void_p, c_size_t, c_uint64, c_char_p, c_uint32, c_uint32, c_void_p,
                c_size_t, PP]),
    "tdb_array_metadata_delete": (c_int, [c_char_p, c_void_p, c_size_t, c_uint64, c_char_p, PP]),
    "tdb_writer_open": (c_int, [c_char_p, c_void_p, c_size_t, c_uint64, PP, PP]),
    "tdb_array_create_with_config": (c_int, [c_char_p, c_char_p, c_void_p, c_size_t, P, PP]),
    "tdb_array_metadata_put_with_config": (
        c_int, [c_char_p, c_void_p, c_size_t, c_uint64, c_char_p, c_uint32, c_uint32, c_void_p,
                c_size_t, P, PP]),
    "tdb_array_metadata_delete_with_config": (
        c_int, [c_char_p, c_void_p, c_size_t, c_uint64, c_char_p, P, PP]),
    "tdb_array_metadata_write": (
        c_int, [c_char_p, c_void_p, c_size_t, c_uint64, STRP, U32P, U32P, PP, SIZEP,
                POINTER(c_uint8), c_size_t, P, PP]),
    "tdb_writer_open_with_config": (c_int, [c_char_p, c_void_p, c_size_t, c_uint64, P, PP, PP]),
    "tdb_writer_free": (None, [P]),
    "tdb_writer_set_layout": (c_int, [P, c_uint32, PP]),
    "tdb_writer_set_threads": (c_int, [P, c_uint32, PP]),
    "tdb_writer_set_subarray": (c_int, [P, c_void_p, c_size_t, PP]),
    "tdb_writer_set_data": (c_int, [P, c_char_p, c_void_p, c_size_t, PP]),
    "tdb_writer_set_offsets": (c_int, [P, c_char_p, U64P, c_size_t, PP]),
    "tdb_writer_set_validity": (c_int, [P, c_char_p, POINTER(c_uint8), c_size_t, PP]),
    "tdb_writer_submit": (c_int, [P, PP]),
    "tdb_writer_finalize": (c_int, [P, PP]),
    "tdb_writer_fragment_name": (c_int, [P, STRP, PP]),
    # the array lifecycle
    "tdb_array_consolidate": (
        c_int, [c_char_p, c_char_p, P, c_void_p, c_size_t, c_uint64, c_uint64, STRP, c_size_t,
                PP]),
    "tdb_array_consolidation_plan": (c_int, [P, c_uint64, c_char_p, c_size_t, SIZEP, PP]),
    "tdb_array_vacuum": (c_int, [c_char_p, c_char_p, P, PP]),
    "tdb_array_delete_fragments": (c_int, [c_char_p, c_uint64, c_uint64, P, PP]),
    "tdb_array_delete": (c_int, [c_char_p, P, PP]),
    "tdb_array_delete_cells": (c_int, [c_char_p, c_char_p, c_uint64, c_void_p, c_size_t, P, PP]),
    "tdb_array_evolve": (c_int, [c_char_p, c_char_p, c_uint64, P, PP]),
    "tdb_array_upgrade_version": (c_int, [c_char_p, c_void_p, c_size_t, c_uint64, P, PP]),
    # groups
    "tdb_group_create": (c_int, [c_char_p, P, PP]),
    "tdb_group_open": (c_int, [c_char_p, c_uint64, P, PP, PP]),
    "tdb_group_free": (None, [P]),
    "tdb_group_member_count": (c_int, [P, U32P, PP]),
    "tdb_group_member": (c_int, [P, c_uint32, STRP, STRP, U32P, POINTER(c_bool), PP]),
    "tdb_group_add_member": (c_int, [P, c_char_p, c_bool, c_char_p, PP]),
    "tdb_group_remove_member": (c_int, [P, c_char_p, PP]),
    "tdb_group_metadata_put": (
        c_int, [P, c_char_p, c_uint32, c_uint32, c_void_p, c_size_t, PP]),
    "tdb_group_metadata_delete": (c_int, [P, c_char_p, PP]),
    "tdb_group_commit": (c_int, [P, PP]),
    "tdb_group_consolidate_metadata": (c_int, [c_char_p, P, PP]),
    "tdb_group_vacuum_metadata": (c_int, [c_char_p, P, PP]),
    "tdb_group_metadata_count": (c_int, [P, U32P, PP]),
    "tdb_group_metadata_entry": (c_int, [P, c_uint32, STRP, U32P, U32P, PP, PP]),
    "tdb_group_metadata_get": (c_int, [P, c_char_p, U32P, U32P, PP, PP]),
}
