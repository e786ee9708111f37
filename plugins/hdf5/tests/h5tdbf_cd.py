"""cd_values of the tdbfilter HDF5 plugin for a pipeline spec (the layout of h5tdbfilter.h),
computed through libtdbfilter with ctypes: for h5py's compression_opts."""

import ctypes
import struct

FILTER_ID = 333
FROM_DATASET = 0xFFFFFFFF


def cd_values(libpath, spec):
    """(version 1, datatype from the dataset, cell size from the dataset, pipeline bytes, the
    serialized pipeline packed 4 bytes per value)."""
    lib = ctypes.CDLL(libpath)
    p = ctypes.c_void_p()
    assert lib.tdb_pipeline_from_spec(spec.encode(), ctypes.byref(p), None) == 0, spec
    n = ctypes.c_size_t()
    lib.tdb_pipeline_serialize(p, None, ctypes.c_size_t(0), ctypes.byref(n), None)
    buf = ctypes.create_string_buffer(n.value)
    assert lib.tdb_pipeline_serialize(p, buf, n, ctypes.byref(n), None) == 0
    lib.tdb_pipeline_free(p)
    raw = buf.raw[: n.value]
    raw += b"\0" * (-len(raw) % 4)
    return (1, FROM_DATASET, 0, n.value) + struct.unpack(f"<{len(raw) // 4}I", raw)
