"""A numcodecs codec (``codec_id = "tiledb"``): a chunk becomes one TileDB filtered tile.

```python
from tdbfilter.numcodecs_codec import TileDBCodec
codec = TileDBCodec("bitshuffle,zstd:3", dtype="int64")
z = zarr.open("a.zarr", mode="w", shape=(10**6,), chunks=(10**5,), dtype="int64",
              compressor=codec)                     # zarr 2
```

The codec is registered with numcodecs on import of this module and through numcodecs'
``numcodecs.codecs`` entry point, so ``numcodecs.get_codec({"id": "tiledb", ...})`` finds it.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ensure_ndarray_like, ndarray_copy
from numcodecs.registry import register_codec

from ._datatypes import resolve
from .pipeline import Pipeline


class TileDBCodec(Codec):
    """Encodes a chunk as a TileDB filtered tile through a tdbfilter pipeline.

    Parameters
    ----------
    filters:
        The pipeline spec, e.g. ``"bitshuffle,zstd:3"`` (the grammar of ``tdbf --filters``).
    dtype:
        The chunk's element type: any numpy spelling (``"int64"``, ``"<f8"``, ``np.int16``…)
        or a TileDB datatype name (``"datetime_ns"``); one without a TileDB datatype is
        :class:`tdbfilter.InvalidArgument`.
    threads:
        Threads per chunk (0 = all cores; default 1, leaving parallelism to the caller).
    max_chunk_size:
        TileDB's chunk size within the tile in bytes (default 65536, TileDB's).
    """

    codec_id = "tiledb"

    def __init__(self, filters: str = "zstd", dtype: str = "uint8", threads: int = 1,
                 max_chunk_size: int = 65536):
        self.filters = filters
        self.dtype = resolve(dtype).dtype.str
        self.threads = int(threads)
        self.max_chunk_size = int(max_chunk_size)
        self._pipeline = Pipeline.from_spec(filters)
        self._pipeline.set_threads(self.threads)
        self._pipeline.set_max_chunk_size(self.max_chunk_size)

    def encode(self, buf: Any) -> bytes:
        arr = ensure_contiguous_ndarray(buf).view(np.uint8)
        dtype = np.dtype(self.dtype)
        if arr.nbytes % dtype.itemsize:
            raise ValueError(f"{arr.nbytes} bytes are not whole {dtype} cells")
        return self._pipeline.filter(arr.view(dtype).reshape(-1), dtype)

    def decode(self, buf: Any, out: Optional[Any] = None) -> Any:
        """Decodes one chunk: into ``out`` when given (zarr's chunk array: the library writes
        the cells straight into it; its size must be the chunk's), else into a new array."""
        data = ensure_contiguous_ndarray(buf)
        dtype = np.dtype(self.dtype)
        if out is not None:
            dst = ensure_ndarray_like(out)
            if dst.dtype != object and (dst.flags.c_contiguous or dst.flags.f_contiguous) \
                    and dst.flags.writeable:
                # The chunk's memory in storage order, as encode read it.
                flat = dst.reshape(-1, order="A").view(np.uint8)
                written = self._pipeline.unfilter_into(data, flat, dtype)
                if written != flat.nbytes:
                    raise ValueError(f"the chunk decodes to {written} bytes, but out has "
                                     f"{flat.nbytes}")
                return dst
        return ndarray_copy(self._pipeline.unfilter(data, dtype), out)

    def get_config(self) -> dict:
        return {"id": self.codec_id, "filters": self.filters, "dtype": self.dtype,
                "threads": self.threads, "max_chunk_size": self.max_chunk_size}

    def __repr__(self) -> str:
        return (f"TileDBCodec(filters={self.filters!r}, dtype={self.dtype!r}, "
                f"threads={self.threads}, max_chunk_size={self.max_chunk_size})")


register_codec(TileDBCodec)
