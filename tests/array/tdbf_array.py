"""ctypes access to tdbfilter's array reader (tdb_array_* in include/tdbfilter.h)."""

import ctypes
import os

import numpy as np

VAR = 0xFFFFFFFF

# TileDB datatype numbers -> numpy dtypes (strings and bytes handled apart).
NUMPY = {
    0: np.int32, 1: np.int64, 2: np.float32, 3: np.float64, 4: np.int8, 5: np.int8,
    6: np.uint8, 7: np.int16, 8: np.uint16, 9: np.uint32, 10: np.uint64,
    13: np.uint16, 14: np.uint32, 15: np.uint16, 16: np.uint32, 17: np.uint8,
    40: np.uint8, 41: np.uint8, 42: np.uint8, 43: np.uint8,
}
for _t in range(18, 40):
    NUMPY[_t] = np.int64


class TdbError(Exception):
    def __init__(self, status, message):
        super().__init__(f"status {status}: {message}")
        self.status = status
        self.message = message


class Lib:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        L = self.lib
        vp, cp, sz, u64, u32 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64, ctypes.c_uint32
        L.tdb_error_message.restype = cp
        L.tdb_error_message.argtypes = [vp]
        L.tdb_error_status.argtypes = [vp]
        L.tdb_error_free.argtypes = [vp]
        L.tdb_array_open.argtypes = [cp, vp, sz, ctypes.POINTER(vp), ctypes.POINTER(vp)]
        L.tdb_array_open_at.argtypes = [cp, vp, sz, u64, u64, ctypes.POINTER(vp), ctypes.POINTER(vp)]
        L.tdb_array_free.argtypes = [vp]
        L.tdb_array_read.argtypes = [vp, cp, vp, sz, ctypes.POINTER(vp), ctypes.POINTER(vp)]
        L.tdb_result_data.argtypes = [vp, ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)), ctypes.POINTER(sz), ctypes.POINTER(vp)]
        L.tdb_result_offsets.argtypes = [vp, ctypes.POINTER(ctypes.POINTER(u64)), ctypes.POINTER(sz), ctypes.POINTER(vp)]
        L.tdb_result_validity.argtypes = [vp, ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)), ctypes.POINTER(sz), ctypes.POINTER(vp)]
        L.tdb_result_cell_count.argtypes = [vp, ctypes.POINTER(u64), ctypes.POINTER(vp)]
        L.tdb_result_type.argtypes = [vp, ctypes.POINTER(u32), ctypes.POINTER(u32), ctypes.POINTER(vp)]
        L.tdb_result_free.argtypes = [vp]
        L.tdb_array_fragment_count.argtypes = [vp, ctypes.POINTER(u32), ctypes.POINTER(vp)]
        L.tdb_array_fragment.argtypes = [vp, u32, ctypes.POINTER(cp), ctypes.POINTER(u64), ctypes.POINTER(u64),
                                         ctypes.POINTER(u32), ctypes.POINTER(ctypes.c_bool), ctypes.POINTER(u64),
                                         ctypes.POINTER(u64), ctypes.POINTER(vp)]

    def check(self, status, err):
        if status != 0:
            msg = self.lib.tdb_error_message(err).decode()
            self.lib.tdb_error_free(err)
            raise TdbError(status, msg)


class Array:
    def __init__(self, lib, path, key=None, timestamp=None):
        self.L = lib
        h = ctypes.c_void_p()
        err = ctypes.c_void_p()
        k = key.encode() if isinstance(key, str) else key
        klen = len(k) if k else 0
        if timestamp is None:
            st = lib.lib.tdb_array_open(path.encode(), k, klen, ctypes.byref(h), ctypes.byref(err))
        else:
            st = lib.lib.tdb_array_open_at(path.encode(), k, klen, timestamp[0], timestamp[1], ctypes.byref(h), ctypes.byref(err))
        lib.check(st, err)
        self.h = h

    def close(self):
        if self.h:
            self.L.lib.tdb_array_free(self.h)
            self.h = None

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def fragments(self):
        L = self.L.lib
        n = ctypes.c_uint32()
        err = ctypes.c_void_p()
        self.L.check(L.tdb_array_fragment_count(self.h, ctypes.byref(n), ctypes.byref(err)), err)
        out = []
        for i in range(n.value):
            name = ctypes.c_char_p()
            t1, t2, cells, tiles = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()
            v = ctypes.c_uint32()
            dense = ctypes.c_bool()
            self.L.check(L.tdb_array_fragment(self.h, i, ctypes.byref(name), ctypes.byref(t1), ctypes.byref(t2),
                                              ctypes.byref(v), ctypes.byref(dense), ctypes.byref(cells),
                                              ctypes.byref(tiles), ctypes.byref(err)), err)
            out.append(dict(name=name.value.decode(), timestamps=(t1.value, t2.value), version=v.value,
                            dense=dense.value, cell_num=cells.value, tile_num=tiles.value))
        return out

    def read_cells(self, field, subarray=None):
        """Returns (cells as a list of bytes, validity list or None)."""
        L = self.L.lib
        res = ctypes.c_void_p()
        err = ctypes.c_void_p()
        sub = None if subarray is None else np.ascontiguousarray(subarray)
        sub_p = None if sub is None else sub.ctypes.data_as(ctypes.c_void_p)
        sub_n = 0 if sub is None else sub.nbytes
        self.L.check(L.tdb_array_read(self.h, field.encode(), sub_p, sub_n, ctypes.byref(res),
                                      ctypes.byref(err)), err)
        try:
            raw, offsets, validity, n, _, _ = self._raw(res)
        finally:
            L.tdb_result_free(res)
        if offsets is not None:
            o = offsets + [len(raw)]
            cells = [raw[o[i]:o[i + 1]] for i in range(n)]
        else:
            w = len(raw) // n if n else 0
            cells = [raw[i * w:(i + 1) * w] for i in range(n)]
        return cells, validity

    def _raw(self, res):
        L = self.L.lib
        err = ctypes.c_void_p()
        data = ctypes.POINTER(ctypes.c_uint8)()
        size = ctypes.c_size_t()
        self.L.check(L.tdb_result_data(res, ctypes.byref(data), ctypes.byref(size), ctypes.byref(err)), err)
        raw = ctypes.string_at(data, size.value) if size.value else b""
        offs = ctypes.POINTER(ctypes.c_uint64)()
        noffs = ctypes.c_size_t()
        self.L.check(L.tdb_result_offsets(res, ctypes.byref(offs), ctypes.byref(noffs), ctypes.byref(err)), err)
        val = ctypes.POINTER(ctypes.c_uint8)()
        nval = ctypes.c_size_t()
        self.L.check(L.tdb_result_validity(res, ctypes.byref(val), ctypes.byref(nval), ctypes.byref(err)), err)
        cells = ctypes.c_uint64()
        self.L.check(L.tdb_result_cell_count(res, ctypes.byref(cells), ctypes.byref(err)), err)
        dt, cvn = ctypes.c_uint32(), ctypes.c_uint32()
        self.L.check(L.tdb_result_type(res, ctypes.byref(dt), ctypes.byref(cvn), ctypes.byref(err)), err)
        offsets = [offs[i] for i in range(noffs.value)] if cvn.value == VAR else None
        validity = list(ctypes.string_at(val, nval.value)) if val else None
        return raw, offsets, validity, cells.value, dt.value, cvn.value

    def read(self, field, subarray=None, dtype=None):
        """Returns (values, validity or None). Fixed fields: a numpy array (cells x cell_val_num
        flattened per cell as a 2-D array when cell_val_num > 1); var fields: a list of bytes."""
        L = self.L.lib
        res = ctypes.c_void_p()
        err = ctypes.c_void_p()
        sub = None
        if subarray is not None:
            sub = np.ascontiguousarray(subarray)
            sub_p = sub.ctypes.data_as(ctypes.c_void_p)
        else:
            sub_p = None
        sub_n = 0 if sub is None else sub.nbytes
        self.L.check(L.tdb_array_read(self.h, field.encode(), sub_p, sub_n, ctypes.byref(res),
                                      ctypes.byref(err)), err)
        try:
            return self._result(res)
        finally:
            L.tdb_result_free(res)

    def _result(self, res):
        raw, offsets, validity, n, dt, cvn = self._raw(res)
        if validity is not None:
            validity = np.array(validity, dtype=np.uint8)
        if offsets is not None:
            o = offsets + [len(raw)]
            values = [raw[o[i]:o[i + 1]] for i in range(n)]
        elif dt in NUMPY:
            values = np.frombuffer(raw, dtype=NUMPY[dt]).copy()
            if cvn > 1:
                values = values.reshape(n, cvn)
        else:
            w = len(raw) // n if n else 0
            values = [raw[i * w:(i + 1) * w] for i in range(n)]
        return values, validity


def default_lib():
    root = os.environ.get("TDBF_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return Lib(os.environ.get("TDBF_LIB") or os.path.join(root, "target", "release", "libtdbfilter.so"))
