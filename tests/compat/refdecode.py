"""Independent Python decoder of filtered tiles (docs/FORMAT.md §4.7 and §5).

Written from docs/FORMAT.md only, so it cross-checks both TileDB's bytes (does
the spec describe them?) and the library's output (does it decode without
the library?). Supports the filters the compat matrix uses: NONE,
BYTESHUFFLE, BITSHUFFLE, CHECKSUM_MD5, CHECKSUM_SHA256, GZIP, ZSTD, LZ4,
BZIP2. LZ4 blocks are decoded with ``lz4.block.decompress``; ZSTD frames with
the system libzstd through ctypes (decoding is version independent).
"""

from __future__ import annotations

import bz2
import ctypes
import ctypes.util
import hashlib
import struct

import numpy as np

from tiledb_format import FormatError, PipelineDesc, Reader, parse_filtered_tile, zlib_part

try:
    import lz4.block as _lz4_block
except ImportError:  # reported as unsupported by supports()
    _lz4_block = None

_zstd = None
_zstd_name = ctypes.util.find_library("zstd")
if _zstd_name:
    try:
        _zstd = ctypes.CDLL(_zstd_name)
        _zstd.ZSTD_decompress.restype = ctypes.c_size_t
        _zstd.ZSTD_decompress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
        _zstd.ZSTD_isError.restype = ctypes.c_uint
        _zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]
        _zstd.ZSTD_getErrorName.restype = ctypes.c_char_p
        _zstd.ZSTD_getErrorName.argtypes = [ctypes.c_size_t]
    except (OSError, AttributeError):
        _zstd = None

NONE, GZIP, ZSTD, LZ4, BZIP2, BITSHUFFLE, BYTESHUFFLE, MD5, SHA256 = 0, 1, 2, 3, 5, 8, 9, 12, 13


def lz4_part(comp: bytes, size: int) -> bytes:
    return _lz4_block.decompress(comp, uncompressed_size=size)


def zstd_part(comp: bytes, size: int) -> bytes:
    out = ctypes.create_string_buffer(max(size, 1))
    n = _zstd.ZSTD_decompress(out, size, comp, len(comp))
    if _zstd.ZSTD_isError(n):
        raise FormatError(f"zstd: {_zstd.ZSTD_getErrorName(n).decode()}")
    return out.raw[:n]


def bzip2_part(comp: bytes, size: int) -> bytes:
    d = bz2.BZ2Decompressor()
    out = d.decompress(comp)
    if not d.eof or d.unused_data:
        raise FormatError("bzip2 stream not exactly one complete stream")
    return out


DECOMPRESSORS = {GZIP: zlib_part, ZSTD: zstd_part, LZ4: lz4_part, BZIP2: bzip2_part}


def supports(ftypes) -> tuple[bool, str]:
    """Whether this decoder handles a pipeline with these filter types."""
    for t in ftypes:
        if t == LZ4 and _lz4_block is None:
            return False, "python lz4 module not installed"
        if t == ZSTD and _zstd is None:
            return False, "no system libzstd for reference ZSTD decoding"
        if t not in (NONE, GZIP, ZSTD, LZ4, BZIP2, BITSHUFFLE, BYTESHUFFLE, MD5, SHA256):
            return False, f"filter type {t} not implemented in the reference decoder"
    return True, ""


# -- reverse stages: each takes (metadata, data) flat streams, returns the previous stage's ----

def _rev_compression(ftype, md: bytes, data: bytes, stats: dict | None) -> tuple[bytes, bytes]:
    r = Reader(md)
    nmd, nd = r.u32(), r.u32()
    sizes = [(r.u32(), r.u32()) for _ in range(nmd + nd)]
    if r.remaining():
        # The compression filter compresses md_in into its data, so its own block is the
        # whole metadata stream.
        raise FormatError(f"{r.remaining()} metadata bytes after compression metadata")
    parts, pos = [], 0
    for unc, comp in sizes:
        if pos + comp > len(data):
            raise FormatError("compressed part runs past the data stream")
        try:
            out = DECOMPRESSORS[ftype](data[pos:pos + comp], unc)
        except FormatError:
            raise
        except Exception as e:  # zlib.error, lz4.block.LZ4BlockError, OSError from bz2, ...
            raise FormatError(f"filter type {ftype}: decompressing a {comp}-byte part: {e}") from None
        if len(out) != unc:
            raise FormatError(f"part decompressed to {len(out)} bytes, metadata says {unc}")
        parts.append(out)
        pos += comp
        if stats is not None:
            stats[ftype] = stats.get(ftype, 0) + 1
    if pos != len(data):
        raise FormatError(f"{len(data) - pos} data bytes after the compressed parts")
    return b"".join(parts[:nmd]), b"".join(parts[nmd:])


def _rev_checksum(ftype, md: bytes, data: bytes) -> tuple[bytes, bytes]:
    h = 16 if ftype == MD5 else 32
    algo = hashlib.md5 if ftype == MD5 else hashlib.sha256
    r = Reader(md)
    nmd, nd = r.u32(), r.u32()
    entries = [(r.u64(), r.take(h)) for _ in range(nmd + nd)]
    rest = md[r.pos:]
    for stream, ents, what in ((rest, entries[:nmd], "metadata"), (data, entries[nmd:], "data")):
        pos = 0
        for length, digest in ents:
            if pos + length > len(stream):
                raise FormatError(f"checksum {what} part runs past its stream")
            if algo(stream[pos:pos + length]).digest() != digest:
                raise FormatError(f"checksum mismatch on a {what} part")
            pos += length
        if pos != len(stream):
            raise FormatError(f"checksum {what} parts cover {pos} of {len(stream)} bytes")
    return rest, data


def byteunshuffle(part: bytes, t: int) -> bytes:
    n = len(part) // t
    if t == 1 or n == 0:
        return part
    a = np.frombuffer(part, dtype=np.uint8, count=n * t).reshape(t, n)
    return a.T.tobytes() + part[n * t:]


def _bitunshuffle_block(block: bytes, t: int) -> bytes:
    n = (len(block) // t) // 8 * 8
    if n == 0:
        return block
    rows = np.frombuffer(block, dtype=np.uint8, count=n * t).reshape(8 * t, n // 8)
    bits = np.unpackbits(rows, axis=1, bitorder="little")            # [8b+k, i]
    elems = bits.reshape(t, 8, n).transpose(2, 0, 1)                  # [i, b, k]
    return np.packbits(elems, axis=2, bitorder="little").tobytes() + block[n * t:]


def bitunshuffle_subpart(sub: bytes, t: int) -> bytes:
    if len(sub) % 8 or len(sub) % t:
        return sub
    return b"".join(_bitunshuffle_block(sub[i:i + 8192], t) for i in range(0, len(sub), 8192))


def _rev_shuffle(ftype, md: bytes, data: bytes, t: int) -> tuple[bytes, bytes]:
    r = Reader(md)
    lengths = [r.u32() for _ in range(r.u32())]
    rest = md[r.pos:]
    if sum(lengths) != len(data):
        raise FormatError(f"shuffle lengths sum to {sum(lengths)}, data stream has {len(data)}")
    # The matrix only feeds single-part data to shuffles; check the part list §5.14/§5.15 predict.
    total = len(data)
    if ftype == BITSHUFFLE:
        want = [total - total % 8, total % 8] if total % 8 else [total]
    else:
        want = [total]
    if lengths != want:
        raise FormatError(f"spec: shuffle part lengths {lengths}, docs/FORMAT.md predicts {want}")
    out, pos = [], 0
    for n in lengths:
        part = data[pos:pos + n]
        out.append(byteunshuffle(part, t) if ftype == BYTESHUFFLE else bitunshuffle_subpart(part, t))
        pos += n
    return rest, b"".join(out)


def decode_chunk(pipeline: PipelineDesc, elem_size: int, md: bytes, data: bytes,
                 stats: dict | None = None) -> bytes:
    """Run the pipeline in reverse over one chunk; returns the chunk's original bytes."""
    for f in reversed(pipeline.filters):
        t = f.ftype
        if t == NONE:
            continue
        if t in DECOMPRESSORS:
            md, data = _rev_compression(t, md, data, stats)
        elif t in (MD5, SHA256):
            md, data = _rev_checksum(t, md, data)
        elif t in (BITSHUFFLE, BYTESHUFFLE):
            md, data = _rev_shuffle(t, md, data, elem_size)
        else:
            raise FormatError(f"reference decoder: filter type {t} unsupported")
    if md:
        raise FormatError(f"{len(md)} metadata bytes left after the first filter")
    return data


def decode_tile(pipeline: PipelineDesc, elem_size: int, tile: bytes, stats: dict | None = None) -> bytes:
    """Decode a whole filtered tile (datatype size `elem_size` for the shuffles).

    `stats`, if given, counts decompressed parts per compression filter type."""
    ft = parse_filtered_tile(tile)
    if ft.size != len(tile):
        raise FormatError(f"tile has {len(tile) - ft.size} trailing bytes")
    out = []
    for i, c in enumerate(ft.chunks):
        try:
            body = decode_chunk(pipeline, elem_size, c.metadata, c.data, stats)
        except FormatError as e:
            raise FormatError(f"chunk {i}: {e}") from None
        if len(body) != c.original_length:
            raise FormatError(f"chunk {i} decoded to {len(body)} bytes, original_length "
                              f"{c.original_length}")
        out.append(body)
    return b"".join(out)


def bitshuffle_subpart(sub: bytes, t: int) -> bytes:
    """Forward transform (used only by the harness self-test)."""
    if len(sub) % 8 or len(sub) % t:
        return sub
    out = []
    for i in range(0, len(sub), 8192):
        block = sub[i:i + 8192]
        n = (len(block) // t) // 8 * 8
        if n == 0:
            out.append(block)
            continue
        elems = np.frombuffer(block, dtype=np.uint8, count=n * t).reshape(n, t)
        bits = np.unpackbits(elems[:, :, None], axis=2, bitorder="little")  # [i, b, k]
        rows = bits.transpose(1, 2, 0).reshape(8 * t, n)
        out.append(np.packbits(rows, axis=1, bitorder="little").tobytes() + block[n * t:])
    return b"".join(out)


def check_spec_vectors() -> list[str]:
    """Decode docs/FORMAT.md §9.2 vectors this decoder covers; returns error strings."""
    from tiledb_format import parse_pipeline
    cases = [
        ("00000100010000000900000000", 4,
         "0100000000000000 20000000 20000000 08000000 01000000 20000000 0102030405060708" + "00" * 24,
         struct.pack("<8i", *range(1, 9))),
        ("00000100010000000800000000", 1,
         "0100000000000000 0a000000 0a000000 0c000000 02000000 08000000 02000000 5566788000000000 090a",
         bytes(range(1, 11))),
        ("00000100010000000c00000000", 1,
         "0100000000000000 03000000 03000000 20000000 00000000 01000000 0300000000000000 "
         "5289df737df57326fcdd22597afb1fac 010203", b"\x01\x02\x03"),
    ]
    errors = []
    for pipe_hex, t, tile_hex, want in cases:
        p = parse_pipeline(Reader(bytes.fromhex(pipe_hex)))
        try:
            got = decode_tile(p, t, bytes.fromhex(tile_hex.replace(" ", "")))
        except FormatError as e:
            errors.append(f"§9.2 vector {pipe_hex}: {e}")
            continue
        if got != want:
            errors.append(f"§9.2 vector {pipe_hex}: decoded {got.hex()} expected {want.hex()}")
    # Forward/backward bitshuffle consistency, including the 8192-byte blocking.
    rng = np.random.default_rng(1)
    for t in (1, 2, 4, 8):
        for n in (0, 8, 64, 8192, 8200, 20000):
            n -= n % t
            if n % 8:
                continue
            raw = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
            if bitunshuffle_subpart(bitshuffle_subpart(raw, t), t) != raw:
                errors.append(f"bitshuffle round trip failed for t={t} n={n}")
    return errors
