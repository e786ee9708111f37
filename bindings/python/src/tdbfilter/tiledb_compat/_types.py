"""TileDB-Py's numpy dtype <-> TileDB datatype mapping (``tiledb.datatypes.DataType``), over
the schema JSON's type names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Tuple

import numpy as np

VAR_NUM = 0xFFFFFFFF

_UNITS = [("Y", "YEAR"), ("M", "MONTH"), ("W", "WEEK"), ("D", "DAY"), ("h", "HR"),
          ("m", "MIN"), ("s", "SEC"), ("ms", "MS"), ("us", "US"), ("ns", "NS"), ("ps", "PS"),
          ("fs", "FS"), ("as", "AS")]
_TIME_UNITS = {"HR", "MIN", "SEC", "MS", "US", "NS", "PS", "FS", "AS"}

_NUMPY_TO_NAME: dict[np.dtype, str] = {
    np.dtype("bool"): "BOOL", np.dtype("int8"): "INT8", np.dtype("int16"): "INT16",
    np.dtype("int32"): "INT32", np.dtype("int64"): "INT64", np.dtype("uint8"): "UINT8",
    np.dtype("uint16"): "UINT16", np.dtype("uint32"): "UINT32", np.dtype("uint64"): "UINT64",
    np.dtype("float32"): "FLOAT32", np.dtype("float64"): "FLOAT64",
    np.dtype("S1"): "CHAR", np.dtype("U1"): "STRING_UTF8",
    np.dtype("complex64"): "FLOAT32", np.dtype("complex128"): "FLOAT64",
}
for _u, _n in _UNITS:
    _NUMPY_TO_NAME[np.dtype(f"<M8[{_u}]")] = f"DATETIME_{_n}"
    if _n in _TIME_UNITS:
        _NUMPY_TO_NAME[np.dtype(f"<m8[{_u}]")] = f"TIME_{_n}"

_NAME_TO_NUMPY: dict[str, np.dtype] = {v: k for k, v in _NUMPY_TO_NAME.items()
                                       if k.kind != "c"}
_NAME_TO_NUMPY.update({
    "STRING_ASCII": np.dtype("S"), "BLOB": np.dtype("S"), "GEOM_WKB": np.dtype("S"),
    "GEOM_WKT": np.dtype("S"), "ANY": np.dtype("S"), "STRING_UTF16": np.dtype("U"),
    "STRING_UTF32": np.dtype("U"), "STRING_UCS2": np.dtype("U"), "STRING_UCS4": np.dtype("U"),
})


@dataclass(frozen=True)
class DataType:
    """A numpy dtype, TileDB's datatype (its name) and the values per cell."""

    np_dtype: np.dtype
    tiledb_type: str
    ncells: int

    @classmethod
    def from_numpy(cls, dtype: Any) -> "DataType":
        if isinstance(dtype, str) and dtype in ("ascii", "blob", "wkb", "wkt"):
            name = {"ascii": "STRING_ASCII", "blob": "BLOB", "wkb": "GEOM_WKB",
                    "wkt": "GEOM_WKT"}[dtype]
            return cls(np.dtype("S"), name, VAR_NUM if dtype == "ascii" else 1)
        dtype = np.dtype(dtype)
        if dtype.kind == "V":
            if dtype.shape != () or not dtype.fields:
                raise TypeError("nested sub-array numpy dtypes are not supported")
            field_dtypes = set(v[0] for v in dtype.fields.values())
            if len(field_dtypes) > 1:
                raise TypeError("heterogenous record numpy dtypes are not supported")
            base = field_dtypes.pop()
            ncells = len(dtype.fields)
        elif dtype.kind in "SU":
            base = np.dtype((dtype.kind, 1))
            ncells = VAR_NUM if dtype.itemsize == 0 else dtype.itemsize // base.itemsize
        else:
            base = dtype
            ncells = 2 if dtype.kind == "c" else 1
        name = _NUMPY_TO_NAME.get(base)
        if name is None:
            raise TypeError(f"{dtype!r} cannot be mapped to a DataType")
        return cls(dtype, name, ncells)

    @classmethod
    def from_tiledb(cls, name: str, ncells: int = 1) -> "DataType":
        base = _NAME_TO_NUMPY[name]
        if name in ("CHAR", "STRING_UTF8"):
            dtype = np.dtype((base.kind, ncells) if ncells != VAR_NUM else base.kind)
        elif ncells in (1, VAR_NUM):
            dtype = base
        elif ncells == 2 and base.kind == "f":
            dtype = np.dtype("complex64" if base.itemsize == 4 else "complex128")
        else:
            dtype = np.dtype([("", base)] * ncells)
        return cls(dtype, name, ncells)

    @property
    def domain(self) -> Tuple[Any, Any]:
        dtype = self.np_dtype
        if dtype.kind in "Mm":
            info = np.iinfo(np.int64)
            unit = np.datetime_data(dtype)
            return dtype.type(info.min + 1, unit), dtype.type(info.max, unit)
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return info.min, info.max
        if dtype.kind == "f":
            info = np.finfo(dtype)
            return info.min, info.max
        if dtype.kind == "b":
            return False, True
        return None, None


def base_dtype(name: str) -> np.dtype:
    """The numpy dtype of one value of TileDB type ``name`` (S1/U1 for text)."""
    d = _NAME_TO_NUMPY[name]
    if d.kind in "SU":
        return np.dtype("S1") if name != "STRING_UTF8" else np.dtype("S1")
    return d


def is_text(name: str) -> bool:
    return name in ("CHAR", "STRING_ASCII", "STRING_UTF8")


def json_value(name: str, v: Any) -> Any:
    """A value of TileDB type ``name`` as the schema JSON writes it."""
    if isinstance(v, (np.datetime64, np.timedelta64)):
        return int(v.astype(np.int64))
    if isinstance(v, (bytes, np.bytes_)):
        b = bytes(v)
        try:
            return b.decode("utf-8")
        except UnicodeDecodeError:
            return list(b)
    if isinstance(v, (np.generic,)):
        v = v.item()
    if isinstance(v, float):
        if v != v:
            return "NaN"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
    return v


def from_json_value(name: str, v: Any, dtype: np.dtype) -> Any:
    """A schema JSON value as a numpy scalar of ``dtype``."""
    if v is None:
        return None
    if isinstance(v, str) and dtype.kind == "f":
        return dtype.type({"NaN": "nan", "inf": "inf", "-inf": "-inf"}.get(v, v))
    if dtype.kind in "Mm":
        return dtype.type(int(v), np.datetime_data(dtype)[0])
    if dtype.kind in "SUV" or dtype.kind == "O":
        return v.encode() if isinstance(v, str) else bytes(v)
    return dtype.type(v)
