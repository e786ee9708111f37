"""Independent Python readers for the TileDB 2.30 on-disk structures the harness needs.

* filtered tiles (docs/FORMAT.md §4.1): chunk table walking;
* serialized filter pipelines (docs/FORMAT.md §3): parsing and serializing;
* generic tiles (docs/FORMAT.md §6) holding the array schema, decompressed with zlib;
* the array schema (TileDB ``format_spec/array_schema.md`` plus the fields
  the 2.30 code adds) far enough to cut out each attribute's pipeline bytes.

Everything is little-endian.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field


class FormatError(Exception):
    """The bytes do not have the structure docs/FORMAT.md / format_spec describe."""


class Reader:
    """Bounds-checked little-endian cursor over a bytes object."""

    def __init__(self, data: bytes, pos: int = 0, end: int | None = None):
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise FormatError(f"read of {n} bytes at offset {self.pos} runs past end {self.end}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def _unpack(self, fmt: str):
        size = struct.calcsize(fmt)
        return struct.unpack("<" + fmt, self.take(size))[0]

    def u8(self) -> int:
        return self._unpack("B")

    def u32(self) -> int:
        return self._unpack("I")

    def i32(self) -> int:
        return self._unpack("i")

    def u64(self) -> int:
        return self._unpack("Q")

    def remaining(self) -> int:
        return self.end - self.pos


# ---------------------------------------------------------------------------
# Filtered tiles (§4.1)
# ---------------------------------------------------------------------------

@dataclass
class Chunk:
    original_length: int
    filtered_length: int
    metadata_length: int
    header_offset: int  # offset of the 12-byte chunk header, relative to the tile start
    metadata: bytes
    data: bytes

    @property
    def metadata_offset(self) -> int:
        return self.header_offset + 12

    @property
    def data_offset(self) -> int:
        return self.header_offset + 12 + self.metadata_length


@dataclass
class FilteredTile:
    chunks: list[Chunk]
    size: int  # total bytes, 8 + sum(12 + md + data)

    @property
    def original_size(self) -> int:
        return sum(c.original_length for c in self.chunks)


def parse_filtered_tile(data: bytes, offset: int = 0) -> FilteredTile:
    """Parse one filtered tile that starts at data[offset]."""
    r = Reader(data, offset)
    nchunks = r.u64()
    if nchunks > (len(data) - offset) // 12 + 1:
        raise FormatError(f"implausible chunk count {nchunks} at offset {offset}")
    chunks = []
    for _ in range(nchunks):
        hdr = r.pos - offset
        orig, filt, mdlen = r.u32(), r.u32(), r.u32()
        md = r.take(mdlen)
        body = r.take(filt)
        chunks.append(Chunk(orig, filt, mdlen, hdr, md, body))
    return FilteredTile(chunks, r.pos - offset)


def split_data_file(data: bytes) -> list[tuple[int, int]]:
    """(offset, size) of each filtered tile of a fragment data file, Python walk."""
    out, pos = [], 0
    while pos < len(data):
        t = parse_filtered_tile(data, pos)
        out.append((pos, t.size))
        pos += t.size
    return out


def describe_offset(tile_bytes: bytes, off: int) -> str:
    """Human description of where byte `off` of a filtered tile lies."""
    if off < 8:
        return f"num_chunks field (+{off})"
    try:
        t = parse_filtered_tile(tile_bytes)
    except FormatError as e:
        return f"offset {off} (tile unparsable: {e})"
    for i, c in enumerate(t.chunks):
        if off < c.metadata_offset:
            field_name = ("original_length", "filtered_length", "metadata_length")[(off - c.header_offset) // 4]
            return f"chunk {i} header {field_name}"
        if off < c.data_offset:
            return f"chunk {i} metadata +{off - c.metadata_offset} (md_len {c.metadata_length})"
        if off < c.data_offset + c.filtered_length:
            return f"chunk {i} data +{off - c.data_offset} (data_len {c.filtered_length})"
    return f"past the last chunk (offset {off})"


def expected_fixed_chunks(tile_size: int, cell_size: int) -> list[int]:
    """Chunk original lengths for a fixed-size tile, docs/FORMAT.md §4.3."""
    cs = min(65536, tile_size)
    cs = (cs // cell_size) * cell_size
    cs = max(cs, cell_size)
    if tile_size == cs:
        return [tile_size]
    sizes = [cs] * (tile_size // cs)
    if tile_size % cs:
        sizes.append(tile_size % cs)
    return sizes


# ---------------------------------------------------------------------------
# Filter pipelines (§3)
# ---------------------------------------------------------------------------

COMPRESSION_TYPES = {1, 2, 3, 4, 5, 14}  # compressor byte + i32 level
# Compressor enum (§1.3) byte for each compression filter type.
COMPRESSOR_BYTE = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 14: 7, 19: 8}


def option_length(ftype: int, version: int) -> int:
    """Fixed option byte count TileDB parses for a filter type (§3.3)."""
    if ftype in COMPRESSION_TYPES:
        return 5
    if ftype == 6:
        return 6 if version >= 20 else 5
    if ftype == 19:
        return 6 if version >= 19 else 5
    if ftype in (7, 10):
        return 4
    if ftype == 15:
        return 24
    if ftype == 18:
        return 12
    if ftype in (0, 8, 9, 11, 12, 13, 16):
        return 0
    raise FormatError(f"unknown filter type {ftype}")


@dataclass
class FilterEntry:
    ftype: int
    options: bytes

    @property
    def level(self) -> int | None:
        if self.ftype in COMPRESSOR_BYTE and len(self.options) >= 5:
            return struct.unpack_from("<i", self.options, 1)[0]
        return None


@dataclass
class PipelineDesc:
    max_chunk_size: int
    filters: list[FilterEntry]


def parse_pipeline(r: Reader, version: int = 22) -> PipelineDesc:
    """Parse a serialized pipeline at the reader's position; checks option lengths."""
    max_chunk = r.u32()
    n = r.u32()
    filters = []
    for _ in range(n):
        ftype = r.u8()
        olen = r.u32()
        want = option_length(ftype, version)
        if olen != want:
            raise FormatError(f"filter type {ftype}: options length {olen}, expected {want}")
        opts = r.take(olen)
        if ftype in COMPRESSOR_BYTE and opts[0] != COMPRESSOR_BYTE[ftype]:
            raise FormatError(f"filter type {ftype}: compressor byte {opts[0]}, expected "
                              f"{COMPRESSOR_BYTE[ftype]}")
        filters.append(FilterEntry(ftype, opts))
    return PipelineDesc(max_chunk, filters)


def serialize_pipeline(filters, max_chunk_size: int = 65536) -> bytes:
    """Serialize [(ftype, level or None)] per §3, for the filter types the harness uses.

    Compression filters (GZIP, ZSTD, LZ4, RLE, BZIP2) carry compressor byte +
    level (-1 when None); shuffles and checksums carry no options.
    """
    out = bytearray(struct.pack("<II", max_chunk_size, len(filters)))
    for ftype, level in filters:
        if ftype in COMPRESSION_TYPES:
            opts = struct.pack("<Bi", COMPRESSOR_BYTE[ftype], -1 if level is None else level)
        elif option_length(ftype, 22) == 0:
            if level is not None:
                raise ValueError(f"filter type {ftype} takes no level")
            opts = b""
        else:
            raise ValueError(f"serialize_pipeline does not handle filter type {ftype}")
        out += struct.pack("<BI", ftype, len(opts)) + opts
    return bytes(out)


# ---------------------------------------------------------------------------
# Generic tiles (§6)
# ---------------------------------------------------------------------------

GENERIC_TILE_PIPELINE = bytes.fromhex("00000100" "01000000" "01" "05000000" "01" "01000000")


@dataclass
class GenericTile:
    version: int
    persisted_size: int
    tile_size: int
    datatype: int
    cell_size: int
    encryption_type: int
    pipeline_bytes: bytes
    tile: FilteredTile
    payload: bytes  # unfiltered content
    anomalies: list[str] = field(default_factory=list)  # deviations from docs/FORMAT.md §6


def _decompress_framework_chunk(chunk: Chunk, compressor) -> tuple[bytes, bytes]:
    """Reverse a compression-framework stage (§5.2): returns (metadata, data)."""
    r = Reader(chunk.metadata)
    nmd, nd = r.u32(), r.u32()
    sizes = [(r.u32(), r.u32()) for _ in range(nmd + nd)]
    if r.remaining():
        raise FormatError(f"{r.remaining()} stray bytes after compression metadata")
    pos, parts = 0, []
    for unc, comp in sizes:
        if pos + comp > len(chunk.data):
            raise FormatError("compressed part runs past chunk data")
        part = compressor(chunk.data[pos:pos + comp], unc)
        if len(part) != unc:
            raise FormatError(f"part decompressed to {len(part)} bytes, expected {unc}")
        parts.append(part)
        pos += comp
    if pos != len(chunk.data):
        raise FormatError(f"{len(chunk.data) - pos} stray bytes after compressed parts")
    return b"".join(parts[:nmd]), b"".join(parts[nmd:])


def zlib_part(comp: bytes, size: int) -> bytes:
    d = zlib.decompressobj()
    out = d.decompress(comp)
    if not d.eof:
        raise FormatError("zlib stream did not reach Z_STREAM_END")
    if d.unused_data:
        raise FormatError(f"{len(d.unused_data)} bytes after zlib stream end")
    return out


def parse_generic_tile(data: bytes) -> GenericTile:
    """Parse and decompress an unencrypted generic tile ([GZIP level 1] pipeline)."""
    r = Reader(data)
    version = r.u32()
    persisted = r.u64()
    tile_size = r.u64()
    datatype = r.u8()
    cell_size = r.u64()
    enc = r.u8()
    fps = r.u32()
    pipeline_bytes = r.take(fps)
    anomalies = []
    if version != 22:
        anomalies.append(f"generic tile version {version} (docs/FORMAT.md §6 says 22)")
    if datatype != 4 or cell_size != 1:
        anomalies.append(f"generic tile datatype {datatype} / cell size {cell_size} (expected 4 / 1)")
    if enc != 0:
        raise FormatError(f"encrypted generic tile (type {enc}) not supported by the harness")
    if pipeline_bytes != GENERIC_TILE_PIPELINE:
        anomalies.append(f"generic tile pipeline {pipeline_bytes.hex()} (expected "
                         f"{GENERIC_TILE_PIPELINE.hex()})")
    desc = parse_pipeline(Reader(pipeline_bytes), version)
    if [f.ftype for f in desc.filters] != [1]:
        raise FormatError(f"generic tile pipeline is not [GZIP]: {pipeline_bytes.hex()}")
    start = r.pos
    tile = parse_filtered_tile(data, start)
    if tile.size != persisted:
        anomalies.append(f"persisted_size {persisted} but the filtered tile spans {tile.size}")
    if start + tile.size != len(data):
        anomalies.append(f"{len(data) - start - tile.size} bytes after the generic tile")
    if tile.original_size != tile_size:
        raise FormatError(f"chunk original lengths sum to {tile.original_size}, header says {tile_size}")
    want_chunks = expected_fixed_chunks(tile_size, 1) if tile_size else []
    got_chunks = [c.original_length for c in tile.chunks]
    if got_chunks != want_chunks:
        anomalies.append(f"generic tile chunks {got_chunks}, §4.3 predicts {want_chunks}")
    payload = bytearray()
    for c in tile.chunks:
        md, body = _decompress_framework_chunk(c, zlib_part)
        if md:
            raise FormatError("generic tile chunk carried metadata parts")
        if len(body) != c.original_length:
            raise FormatError("generic tile chunk size mismatch")
        payload += body
    return GenericTile(version, persisted, tile_size, datatype, cell_size, enc, pipeline_bytes, tile,
                       bytes(payload), anomalies)


# ---------------------------------------------------------------------------
# Array schema (TileDB format_spec/array_schema.md; attribute fields of the 2.30 code)
# ---------------------------------------------------------------------------

@dataclass
class AttributeDesc:
    index: int
    name: str
    datatype: int
    cell_val_num: int
    pipeline_bytes: bytes
    pipeline: PipelineDesc
    fill_value: bytes
    nullable: bool


@dataclass
class DimensionDesc:
    name: str
    datatype: int
    cell_val_num: int
    pipeline_bytes: bytes
    domain: bytes
    tile_extent: bytes | None


@dataclass
class ArraySchemaDesc:
    version: int
    allows_dups: bool
    array_type: int
    tile_order: int
    cell_order: int
    capacity: int
    coords_pipeline: bytes
    offsets_pipeline: bytes
    validity_pipeline: bytes
    dimensions: list[DimensionDesc]
    attributes: list[AttributeDesc]
    trailing: bytes  # labels / enumerations / current domain, not interpreted beyond counts


DATATYPE_SIZES = {0: 4, 1: 8, 2: 4, 3: 8, 4: 1, 5: 1, 6: 1, 7: 2, 8: 2, 9: 4, 10: 8}
DATATYPE_SIZES.update({t: 8 for t in range(18, 40)})
DATATYPE_SIZES.update({11: 1, 12: 1, 13: 2, 14: 4, 15: 2, 16: 4, 17: 1, 40: 1, 41: 1, 42: 1, 43: 1})


def _pipeline_slice(r: Reader, version: int) -> tuple[bytes, PipelineDesc]:
    start = r.pos
    desc = parse_pipeline(r, version)
    return r.data[start:r.pos], desc


def parse_array_schema(payload: bytes) -> ArraySchemaDesc:
    """Parse a decompressed array schema (versions >= 20 only, which 2.30 writes)."""
    r = Reader(payload)
    version = r.u32()
    if version < 20:
        raise FormatError(f"schema version {version}: the harness parses versions >= 20 only")
    allows_dups = bool(r.u8())
    array_type, tile_order, cell_order = r.u8(), r.u8(), r.u8()
    capacity = r.u64()
    coords, _ = _pipeline_slice(r, version)
    offsets, _ = _pipeline_slice(r, version)
    validity, _ = _pipeline_slice(r, version)
    # Domain: (no datatype byte since version 5) u32 dimension count, dimensions.
    dims = []
    for _ in range(r.u32()):
        name = r.take(r.u32()).decode()
        dtype = r.u8()
        cvn = r.u32()
        pbytes, _ = _pipeline_slice(r, version)
        domain = r.take(r.u64())
        null_extent = r.u8()
        extent = None if null_extent else r.take(DATATYPE_SIZES[dtype])
        dims.append(DimensionDesc(name, dtype, cvn, pbytes, domain, extent))
    attrs = []
    for index in range(r.u32()):
        name = r.take(r.u32()).decode()
        dtype = r.u8()
        cvn = r.u32()
        pbytes, pdesc = _pipeline_slice(r, version)
        fill = r.take(r.u64())        # version >= 6
        nullable = bool(r.u8())       # version >= 7
        r.u8()                        # fill value validity, version >= 7
        r.u8()                        # data order, version >= 17
        enum_name_len = r.u32()       # enumeration name, version >= 20 (absent from format_spec)
        r.take(enum_name_len)
        attrs.append(AttributeDesc(index, name, dtype, cvn, pbytes, pdesc, fill, nullable))
    trailing = payload[r.pos:]
    labels = r.u32()                  # version >= 18
    if labels:
        raise FormatError("dimension labels present; the harness does not parse them")
    enums = r.u32()                   # version >= 20
    for _ in range(enums):
        r.take(r.u32())
        r.take(r.u32())
    if version >= 22:                 # current domain: u32 version, u8 empty, ...
        r.u32()
        empty = r.u8()
        if empty and r.remaining():
            raise FormatError(f"{r.remaining()} bytes after an empty current domain")
    return ArraySchemaDesc(version, allows_dups, array_type, tile_order, cell_order, capacity, coords,
                           offsets, validity, dims, attrs, trailing)


def read_schema_file(path: str) -> tuple[GenericTile, ArraySchemaDesc]:
    with open(path, "rb") as f:
        gt = parse_generic_tile(f.read())
    return gt, parse_array_schema(gt.payload)
