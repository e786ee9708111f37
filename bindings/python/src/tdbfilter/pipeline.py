"""``Pipeline``: TileDB filter pipelines over the tdbfilter C library."""

from __future__ import annotations

import ctypes
import threading
from ctypes import byref, c_double, c_float, c_int32, c_size_t, c_uint8, c_uint32, c_uint64, c_void_p
from typing import Optional, Sequence, Union

import numpy as np

from ._datatypes import CellType, Datatype, resolve
from ._ffi import check as _check
from ._ffi import lib, loaded
from ._lib import CONSTANTS
from .errors import BufferTooSmall, InternalError, InvalidArgument, OutOfMemory

FORMAT_VERSION = CONSTANTS["TDB_FORMAT_VERSION"]
"""The format version TileDB 2.30 writes (the default of :meth:`Pipeline.deserialize`)."""

def version() -> str:
    """The C library's version."""
    return lib().tdb_version().decode()


Buffer = Union[np.ndarray, bytes, bytearray, memoryview]


def datatype_of(dt: Datatype) -> tuple[int, int]:
    """``(TileDB datatype number, bytes per cell)`` of a dtype: any numpy spelling (``"<i8"``,
    ``np.int64``, ``"M8[ns]"``…), a TileDB datatype name (``"string_utf8"``) or number.
    Raises :class:`InvalidArgument` for anything without a TileDB datatype."""
    cell = resolve(dt)
    return cell.datatype, cell.cell_size


def _bytes_view(data: Buffer) -> memoryview:
    if isinstance(data, np.ndarray):
        if not data.flags.c_contiguous:
            raise InvalidArgument("the buffer must be C-contiguous")
        # numpy exports no buffer for datetime64/timedelta64: view the bytes instead.
        data = data.reshape(-1).view(np.uint8)
    mv = memoryview(data)
    if not mv.c_contiguous:
        raise InvalidArgument("the buffer must be C-contiguous")
    return mv.cast("B")


def _address(mv: memoryview) -> tuple[int, object]:
    """The address of a memoryview's bytes and an object keeping it alive."""
    if mv.nbytes == 0:
        return 0, None
    if mv.readonly:
        arr = np.frombuffer(mv, dtype=np.uint8)
        return arr.ctypes.data, arr
    holder = (ctypes.c_char * mv.nbytes).from_buffer(mv)
    return ctypes.addressof(holder), holder


def _input(data: Buffer) -> tuple[object, int, object]:
    """A filtered tile's bytes as a C argument without copying them: ``(pointer, size,
    keep-alive)``. ``bytes`` go as they are; other buffers (``bytearray``, ``memoryview``,
    numpy arrays) by address."""
    if isinstance(data, bytes):
        return data, len(data), None
    mv = _bytes_view(data)
    addr, keep = _address(mv)
    return addr or None, mv.nbytes, keep


def _output(out: Buffer) -> tuple[int, int, object]:
    """A writable buffer's ``(address, size, keep-alive)``."""
    if isinstance(out, np.ndarray) and out.flags.c_contiguous:
        if not out.flags.writeable:
            raise InvalidArgument("the output buffer is read-only")
        return out.ctypes.data if out.nbytes else 0, out.nbytes, out
    dst = _bytes_view(out)
    if dst.readonly:
        raise InvalidArgument("the output buffer is read-only")
    addr, keep = _address(dst)
    return addr, dst.nbytes, keep


def _take_tile(tile: c_void_p) -> bytes:
    """Copies a library tile's bytes and frees the tile."""
    L = lib()
    try:
        data = c_void_p()
        size = c_size_t()
        err = c_void_p()
        _check(L.tdb_tile_data(tile, byref(data), byref(size), byref(err)), err)
        return ctypes.string_at(data, size.value) if size.value else b""
    finally:
        L.tdb_tile_free(tile)


class _OutputPool:
    """Recycles :meth:`Pipeline.unfilter`'s output memory: when the last reference to a
    result (and to every view of it) goes, its buffer waits here, up to ``limit`` bytes in
    all, for the next result of the same size. A recycled buffer's pages are already mapped,
    so the next tile is decoded into them without the first-touch page faults (and the
    kernel's zeroing) of fresh memory, which cost as much as the decoding itself; glibc's
    malloc returns large freed blocks to the system (trimming or unmapping them) when many
    are freed at once. Thread-safe."""

    def __init__(self, limit: int):
        self.limit = limit
        self.held = 0
        self.free: dict[int, list[np.ndarray]] = {}
        self.lock = threading.Lock()

    def take(self, nbytes: int) -> np.ndarray:
        """A uint8 buffer of ``nbytes``: a recycled one, else new (uninitialised)."""
        with self.lock:
            stack = self.free.get(nbytes)
            if stack:
                self.held -= nbytes
                buf = stack.pop()
                if not stack:
                    del self.free[nbytes]
                return buf
        return np.empty(nbytes, dtype=np.uint8)

    def give(self, buf: np.ndarray) -> None:
        """Keeps ``buf`` for a later :meth:`take` if the pool has room (else it is freed)."""
        n = buf.nbytes
        with self.lock:
            if self.held + n <= self.limit:
                self.free.setdefault(n, []).append(buf)
                self.held += n

    def set_limit(self, limit: int) -> None:
        with self.lock:
            self.limit = limit
            while self.held > limit and self.free:
                n, stack = next(iter(self.free.items()))
                stack.pop()
                self.held -= n
                if not stack:
                    del self.free[n]


_POOL = _OutputPool(64 << 20)


def set_unfilter_pool_limit(nbytes: int) -> None:
    """The most bytes of freed :meth:`Pipeline.unfilter` results kept for reuse (default 64
    MiB; 0 keeps none: every result is fresh memory). Reused memory spares the page faults
    of fresh memory, most of the cost of an allocating decode when many tiles are decoded
    and dropped in turn; the price is up to this many bytes kept mapped while unused."""
    if nbytes < 0:
        raise InvalidArgument(f"the pool limit is a byte count, not {nbytes}")
    _POOL.set_limit(int(nbytes))


class _PooledOutput:
    """The owner (``base``) of an :meth:`Pipeline.unfilter` result: exposes a pool buffer as
    the result's dtype and shape, and gives the buffer back to the pool when the result and
    its views are gone."""

    __slots__ = ("buf", "__array_interface__")

    def __init__(self, buf: np.ndarray, dtype: np.dtype, count: int):
        self.buf = buf
        self.__array_interface__ = {"shape": (count,), "typestr": dtype.str,
                                    "data": (buf.ctypes.data, False), "version": 3}

    def __del__(self) -> None:
        try:
            _POOL.give(self.buf)
        except Exception:  # interpreter shutdown
            pass


class _Tile:
    """An input tile created from a buffer (freed on exit)."""

    def __init__(self, dt: int, cell_size: int, mv: memoryview):
        self.addr, self.keep = _address(mv)
        self.handle = c_void_p()
        err = c_void_p()
        _check(lib().tdb_tile_create(dt, cell_size, self.addr or None, mv.nbytes,
                                     byref(self.handle), byref(err)), err)

    def __enter__(self) -> "_Tile":
        return self

    def __exit__(self, *exc) -> None:
        lib().tdb_tile_free(self.handle)


# Options by name: their number (tdb_filter_option_t, a header constant) and C type.
OPTIONS = {
    name: (CONSTANTS[constant], ctype) for name, constant, ctype in [
        ("level", "TDB_COMPRESSION_LEVEL", c_int32),
        ("compression_level", "TDB_COMPRESSION_LEVEL", c_int32),
        ("bit_width_max_window", "TDB_BIT_WIDTH_MAX_WINDOW", c_uint32),
        ("positive_delta_max_window", "TDB_POSITIVE_DELTA_MAX_WINDOW", c_uint32),
        ("scale_float_bytewidth", "TDB_SCALE_FLOAT_BYTEWIDTH", c_uint64),
        ("scale_float_factor", "TDB_SCALE_FLOAT_FACTOR", c_double),
        ("scale_float_offset", "TDB_SCALE_FLOAT_OFFSET", c_double),
        ("webp_quality", "TDB_WEBP_QUALITY", c_float),
        ("webp_input_format", "TDB_WEBP_INPUT_FORMAT", c_uint8),
        ("webp_lossless", "TDB_WEBP_LOSSLESS", c_uint8),
        ("reinterpret_datatype", "TDB_COMPRESSION_REINTERPRET_DATATYPE", c_uint8),
    ]
}

def filter_type_from_name(name: str) -> int:
    """TileDB's number of filter type ``name`` (the library's names: ``"zstd"``,
    ``"bit_width_reduction"``, and TileDB's spellings such as ``"FILTER_GZIP"``)."""
    if "\0" in name:
        raise InvalidArgument(f"filter name {name!r} contains a NUL character")
    t = c_uint32()
    err = c_void_p()
    _check(lib().tdb_filter_type_from_name(name.encode(), byref(t), byref(err)), err)
    return t.value


def filter_type_name(number: int) -> str:
    """The library's name of filter type ``number`` (``"zstd"``…)."""
    name = ctypes.c_char_p()
    err = c_void_p()
    _check(lib().tdb_filter_type_name(number, byref(name), byref(err)), err)
    return name.value.decode()


def _option(name: str) -> tuple[int, type]:
    if name not in OPTIONS:
        raise InvalidArgument(f"unknown option {name!r} (known: {', '.join(OPTIONS)})")
    return OPTIONS[name]


class Pipeline:
    """A TileDB filter pipeline.

    Build one from a spec (``Pipeline.from_spec("bitshuffle,zstd:3")``, the grammar of
    ``tdbf --filters``), from filters (``Pipeline()`` then :meth:`add_filter`), or from TileDB's
    serialized bytes (:meth:`deserialize`). Filtering and unfiltering release the GIL and may
    run from several threads at once; configuring a pipeline while another thread uses it is
    not allowed. Use it as a context manager or call :meth:`close` to free it early.
    """

    def __init__(self, _handle: Optional[c_void_p] = None):
        if _handle is None:
            _handle = c_void_p()
            err = c_void_p()
            _check(lib().tdb_pipeline_create(byref(_handle), byref(err)), err)
        self._handle: Optional[c_void_p] = _handle
        self._memory_limit = 0  # set_memory_limit's, checked by unfilter (numpy allocates)

    @classmethod
    def from_spec(cls, spec: str) -> "Pipeline":
        """A pipeline from a spec such as ``"bitshuffle,zstd:3"`` or ``"gzip:level=9"``."""
        h = c_void_p()
        err = c_void_p()
        _check(lib().tdb_pipeline_from_spec(spec.encode(), byref(h), byref(err)), err)
        return cls(h)

    @classmethod
    def deserialize(cls, data: bytes, version: int = FORMAT_VERSION) -> "Pipeline":
        """A pipeline from TileDB's serialized bytes (as stored in array schemas) of
        ``version``."""
        data = bytes(data)
        h = c_void_p()
        err = c_void_p()
        _check(lib().tdb_pipeline_deserialize(data, len(data), version, byref(h), byref(err)), err)
        return cls(h)

    # --- lifetime -------------------------------------------------------------------------

    def close(self) -> None:
        """Frees the C pipeline (idempotent)."""
        L = loaded()
        if self._handle is not None and L is not None:
            L.tdb_pipeline_free(self._handle)
        self._handle = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __enter__(self) -> "Pipeline":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def handle(self) -> c_void_p:
        """The C handle (``tdb_pipeline_t *``)."""
        if self._handle is None:
            raise InvalidArgument("the pipeline is closed")
        return self._handle

    # --- configuration --------------------------------------------------------------------

    def add_filter(self, filter_type: Union[str, int], **options: float) -> "Pipeline":
        """Appends a filter (a name such as ``"zstd"`` or ``"FILTER_ZSTD"``, or TileDB's number)
        and sets options by name (``level=3``, ``bit_width_max_window=128``, …)."""
        t = filter_type_from_name(filter_type) if isinstance(filter_type, str) else filter_type
        err = c_void_p()
        _check(lib().tdb_pipeline_add_filter(self.handle, t, byref(err)), err)
        for name, value in options.items():
            self.set_option(len(self) - 1, name, value)
        return self

    def set_option(self, index: int, name: str, value: float) -> None:
        """Sets option ``name`` of filter ``index``."""
        number, ctype = _option(name)
        v = ctype(value)
        err = c_void_p()
        _check(lib().tdb_pipeline_set_option(self.handle, index, number, byref(v),
                                             ctypes.sizeof(v), byref(err)), err)

    def get_option(self, index: int, name: str) -> float:
        """Reads option ``name`` of filter ``index``."""
        number, ctype = _option(name)
        v = ctype()
        err = c_void_p()
        _check(lib().tdb_pipeline_option(self.handle, index, number, byref(v), ctypes.sizeof(v),
                                         byref(err)), err)
        return v.value

    def __len__(self) -> int:
        n = c_uint32()
        err = c_void_p()
        _check(lib().tdb_pipeline_filter_count(self.handle, byref(n), byref(err)), err)
        return n.value

    @property
    def filter_types(self) -> list[int]:
        """TileDB's numbers of the filters, in order."""
        out = []
        for i in range(len(self)):
            t = c_uint32()
            err = c_void_p()
            _check(lib().tdb_pipeline_filter_type(self.handle, i, byref(t), byref(err)), err)
            out.append(t.value)
        return out

    @property
    def filter_names(self) -> list[str]:
        """The library's names of the filters, in order (``["bitshuffle", "zstd"]``)."""
        return [filter_type_name(t) for t in self.filter_types]

    def set_threads(self, n: int) -> None:
        """Threads per tile (0 = all cores)."""
        err = c_void_p()
        _check(lib().tdb_pipeline_set_threads(self.handle, n, byref(err)), err)

    def set_max_chunk_size(self, n: int) -> None:
        """TileDB's chunk size in bytes (0: the whole tile is one chunk)."""
        err = c_void_p()
        _check(lib().tdb_pipeline_set_max_chunk_size(self.handle, n, byref(err)), err)

    def set_skip_checksum_validation(self, skip: bool) -> None:
        """Skip checksum verification on read."""
        err = c_void_p()
        _check(lib().tdb_pipeline_set_skip_checksum_validation(self.handle, skip, byref(err)), err)

    def set_encryption_key(self, key: bytes) -> None:
        """A 32-byte AES-256-GCM key: tiles are encrypted on filter and decrypted on unfilter."""
        key = bytes(key)
        err = c_void_p()
        _check(lib().tdb_pipeline_set_encryption_key(self.handle, key, len(key), byref(err)), err)

    def set_memory_limit(self, limit: int) -> None:
        """The most bytes one :meth:`unfilter` (or :meth:`unfilter_var`) may allocate for its
        output (0: no limit)."""
        err = c_void_p()
        _check(lib().tdb_pipeline_set_memory_limit(self.handle, limit, byref(err)), err)
        self._memory_limit = int(limit)

    # --- text and bytes -------------------------------------------------------------------

    @property
    def spec(self) -> str:
        """The pipeline's spec (parses back to the same pipeline)."""
        n = c_size_t()
        err = c_void_p()
        status = lib().tdb_pipeline_to_spec(self.handle, None, 0, byref(n), byref(err))
        if status != BufferTooSmall.status:
            _check(status, err)
        else:
            lib().tdb_error_free(err)
        buf = ctypes.create_string_buffer(n.value)
        err = c_void_p()
        _check(lib().tdb_pipeline_to_spec(self.handle, buf, n.value, byref(n), byref(err)), err)
        return buf.value.decode()

    def __repr__(self) -> str:
        return f"Pipeline.from_spec({self.spec!r})" if self._handle else "Pipeline(<closed>)"

    def serialize(self) -> bytes:
        """TileDB's serialized pipeline bytes (format version 22)."""
        n = c_size_t()
        err = c_void_p()
        lib().tdb_pipeline_serialize(self.handle, None, 0, byref(n), byref(err))
        lib().tdb_error_free(err)
        buf = ctypes.create_string_buffer(n.value)
        err = c_void_p()
        _check(lib().tdb_pipeline_serialize(self.handle, buf, n.value, byref(n), byref(err)), err)
        return buf.raw[: n.value]

    # --- fixed-size tiles -----------------------------------------------------------------

    def filter(self, cells: Buffer, dtype: Optional[Datatype] = None,
               cell_size: Optional[int] = None) -> bytes:
        """Filters cells into TileDB's filtered tile bytes. ``dtype`` defaults to a numpy
        array's dtype (bytes-like input needs one); ``cell_size`` to the element size. The
        library reads the cells where they are and filters into uninitialised numpy memory;
        only the filtered bytes are copied, into the result."""
        mv = _bytes_view(cells)
        out = np.empty(self.filtered_size_bound(mv.nbytes), dtype=np.uint8)
        n = self.filter_into(cells, out, dtype, cell_size)
        return out[:n].tobytes()

    def filter_into(self, cells: Buffer, out: Buffer, dtype: Optional[Datatype] = None,
                    cell_size: Optional[int] = None) -> int:
        """Filters into a writable buffer; returns the bytes written. A buffer of
        :meth:`filtered_size_bound` bytes always suffices. The cells are read in place (no
        copy)."""
        cell = self._cell_type(cells, dtype)
        mv = _bytes_view(cells)
        src, keep_src = _address(mv)
        addr, capacity, keep = _output(out)
        written = c_size_t()
        err = c_void_p()
        status = lib().tdb_pipeline_filter_cells_into(
            self.handle, src or None, mv.nbytes, cell.datatype, cell_size or cell.cell_size,
            addr or None, capacity, byref(written), byref(err))
        del keep, keep_src
        self._check_into(status, err, written)
        return written.value

    def filtered_size_bound(self, nbytes: int) -> int:
        """An upper bound of the filtered size of ``nbytes`` of cells."""
        n = c_size_t()
        err = c_void_p()
        _check(lib().tdb_pipeline_filtered_size_bound(self.handle, nbytes, byref(n), byref(err)), err)
        return n.value

    def unfilter(self, data: Buffer, dtype: Datatype, cell_size: Optional[int] = None) -> np.ndarray:
        """Unfilters TileDB's filtered tile bytes (exactly one tile; ``bytes`` or any
        contiguous buffer) into a new numpy array of ``dtype``: any numpy spelling (``"<i8"``,
        ``np.int64``, ``"M8[ns]"``…) gives that dtype; a TileDB datatype name or number gives
        its numpy dtype (``"datetime_ns"``: ``datetime64[ns]``, ``"string_utf8"``: ``S1``
        bytes, ``"blob"``: ``uint8``). The library writes the cells straight into the array's
        memory (no intermediate copy): memory of an earlier result of the same size that is
        gone, when the pool of :func:`set_unfilter_pool_limit` holds one, else new memory."""
        cell = resolve(dtype)
        cs = cell_size or cell.cell_size
        src, size, keep = _input(data)
        # The size the tile unfilters to, from its chunk headers (checked, nothing decoded).
        needed = self._unfilter_into(src, size, cell.datatype, cs, None, 0)
        itemsize = cell.dtype.itemsize
        if needed % itemsize:
            raise InvalidArgument(f"the unfiltered tile has {needed} bytes, not whole "
                                  f"{cell.dtype} cells of {itemsize} bytes")
        # The limit of set_memory_limit: the library applies it to the tiles it allocates;
        # here numpy allocates the output, so it is checked here, with the library's message.
        if self._memory_limit and needed > self._memory_limit:
            raise OutOfMemory(f"unfiltering the tile needs {needed} bytes, over the memory "
                              f"limit of {self._memory_limit} bytes", OutOfMemory.status,
                              "TDB_ERR_OUT_OF_MEMORY")
        if not needed:
            return np.empty(0, dtype=cell.dtype)
        try:
            buf = _POOL.take(needed)
        except MemoryError:
            raise OutOfMemory(f"cannot allocate {needed} bytes for the unfiltered tile",
                              OutOfMemory.status, "TDB_ERR_OUT_OF_MEMORY") from None
        written = self._unfilter_into(src, size, cell.datatype, cs, buf.ctypes.data, needed)
        if written != needed:
            raise InternalError(f"the tile unfiltered to {written} bytes after its chunk "
                                f"headers announced {needed}", InternalError.status,
                                "TDB_ERR_INTERNAL")
        del keep
        return np.asarray(_PooledOutput(buf, cell.dtype, needed // itemsize))

    def unfilter_into(self, data: Buffer, out: Buffer, dtype: Datatype,
                      cell_size: Optional[int] = None) -> int:
        """Unfilters into a writable buffer (a C-contiguous numpy array, ``bytearray``,
        writable ``memoryview``…); returns the bytes written. Too small:
        :class:`BufferTooSmall` with ``needed`` set, before anything is decoded."""
        cell = resolve(dtype)
        src, size, keep = _input(data)
        addr, capacity, keep_out = _output(out)
        n = self._unfilter_into(src, size, cell.datatype, cell_size or cell.cell_size,
                                addr or None, capacity, raise_too_small=True)
        del keep, keep_out
        return n

    def _unfilter_into(self, src: object, size: int, datatype: int, cell_size: int,
                       addr: Optional[int], capacity: int, raise_too_small: bool = False) -> int:
        """``tdb_pipeline_unfilter_into``: the bytes written, or (a buffer too small, unless
        ``raise_too_small``) the bytes needed."""
        L = lib()
        written = c_size_t()
        err = c_void_p()
        status = L.tdb_pipeline_unfilter_into(self.handle, src, size, datatype, cell_size, addr,
                                              capacity, byref(written), byref(err))
        if status == BufferTooSmall.status and not raise_too_small:
            L.tdb_error_free(err)
            return written.value
        self._check_into(status, err, written)
        return written.value

    # --- var-size tiles -------------------------------------------------------------------

    def filter_var(self, values: Sequence[Union[str, bytes]], offsets_pipeline: "Pipeline",
                   dtype: Datatype = "string_utf8") -> tuple[bytes, bytes]:
        """Filters a var-size tile (strings or byte strings) into TileDB's filtered offsets
        tile and data tile: ``(filtered_offsets, filtered_data)``."""
        dt = resolve(dtype).datatype
        encoded = [v.encode() if isinstance(v, str) else bytes(v) for v in values]
        data = b"".join(encoded)
        offsets = np.zeros(len(encoded), dtype=np.uint64)
        if encoded:
            offsets[1:] = np.cumsum([len(v) for v in encoded[:-1]])
        tile = c_void_p()
        err = c_void_p()
        buf = ctypes.create_string_buffer(data, len(data)) if data else None
        _check(lib().tdb_tile_create_var(
            dt, offsets.ctypes.data_as(ctypes.POINTER(c_uint64)), len(offsets), buf, len(data),
            byref(tile), byref(err)), err)
        fo, fd = c_void_p(), c_void_p()
        try:
            err = c_void_p()
            _check(lib().tdb_pipeline_filter_var(self.handle, offsets_pipeline.handle, tile,
                                                 byref(fo), byref(fd), byref(err)), err)
        finally:
            lib().tdb_tile_free(tile)
        return _take_tile(fo), _take_tile(fd)

    def unfilter_var(self, filtered_offsets: bytes, filtered_data: bytes,
                     offsets_pipeline: "Pipeline", dtype: Datatype = "string_utf8"
                     ) -> tuple[np.ndarray, bytes]:
        """Unfilters a var-size tile: ``(offsets, data)``, offsets as uint64 byte offsets into
        data (one per cell)."""
        dt = resolve(dtype).datatype
        fo, fd = bytes(filtered_offsets), bytes(filtered_data)
        tile = c_void_p()
        err = c_void_p()
        _check(lib().tdb_pipeline_unfilter_var(self.handle, offsets_pipeline.handle, fo, len(fo),
                                               fd, len(fd), dt, byref(tile), byref(err)), err)
        try:
            ptr = c_void_p()
            n = c_size_t()
            err = c_void_p()
            _check(lib().tdb_tile_offsets(tile, byref(ptr), byref(n), byref(err)), err)
            offsets = (np.frombuffer(ctypes.string_at(ptr, 8 * n.value), dtype=np.uint64).copy()
                       if n.value else np.zeros(0, dtype=np.uint64))
            data = c_void_p()
            size = c_size_t()
            err = c_void_p()
            _check(lib().tdb_tile_data(tile, byref(data), byref(size), byref(err)), err)
            raw = ctypes.string_at(data, size.value) if size.value else b""
        finally:
            lib().tdb_tile_free(tile)
        return offsets, raw

    # --- helpers --------------------------------------------------------------------------

    @staticmethod
    def _cell_type(cells: Buffer, dtype: Optional[Datatype]) -> CellType:
        if dtype is None:
            if isinstance(cells, np.ndarray):
                return resolve(cells.dtype)
            raise InvalidArgument("dtype is required for a bytes-like input")
        return resolve(dtype)

    @staticmethod
    def _check_into(status: int, err: c_void_p, written: c_size_t) -> None:
        if status == BufferTooSmall.status:
            try:
                _check(status, err)
            except BufferTooSmall as e:
                e.needed = written.value or None
                raise
        _check(status, err)


def generic_tile_write(payload: bytes, pipeline: Optional[Pipeline] = None) -> bytes:
    """Writes ``payload`` as a TileDB generic tile (the container of array schemas, fragment
    metadata and array metadata), with ``pipeline`` or TileDB's default (ZSTD)."""
    L = lib()
    own = None
    if pipeline is None:
        h = c_void_p()
        err = c_void_p()
        _check(L.tdb_generic_tile_default_pipeline(byref(h), byref(err)), err)
        own = pipeline = Pipeline(h)
    try:
        payload = bytes(payload)
        out = c_void_p()
        err = c_void_p()
        char = resolve("char")
        with _Tile(char.datatype, char.cell_size, _bytes_view(payload)) as tile:
            _check(L.tdb_generic_tile_write(pipeline.handle, tile.handle, byref(out), byref(err)), err)
        return _take_tile(out)
    finally:
        if own is not None:
            own.close()


def generic_tile_read(data: bytes, key: Optional[bytes] = None) -> tuple[bytes, int]:
    """Reads a generic tile (AES-256-GCM encrypted ones with ``key``): ``(payload,
    bytes_consumed)``."""
    data = bytes(data)
    key = bytes(key) if key else None
    tile = c_void_p()
    consumed = c_uint64()
    err = c_void_p()
    _check(lib().tdb_generic_tile_read(data, len(data), key, len(key) if key else 0, byref(tile),
                                       byref(consumed), byref(err)), err)
    return _take_tile(tile), consumed.value
