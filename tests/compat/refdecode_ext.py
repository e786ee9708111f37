"""Independent Python decoder for every TileDB 2.30 tile filter (docs/FORMAT.md §4.7, §5).

Extends refdecode.py (which covers the shuffles, checksums and GZIP/ZSTD/LZ4/BZIP2)
with RLE (fixed and var-string path), DICTIONARY, DOUBLE_DELTA, DELTA,
BIT_WIDTH_REDUCTION, POSITIVE_DELTA, XOR, SCALE_FLOAT and WEBP, written from
docs/FORMAT.md only. It tracks the filter data type of every stage (§4.8), so the
same code decodes attribute, offsets, validity and coordinate tiles.

Also here:
* ``stage_streams``: the (metadata, data) streams between stages of one chunk,
  used to compare two tiles with TileDB's indeterminate bytes masked (§8.4);
* ``indeterminate_ranges``: where those bytes are in a BIT_WIDTH_REDUCTION /
  POSITIVE_DELTA stage output;
* WebP decoding through Pillow, or the system libwebp through ctypes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import io
import struct

import numpy as np

import filterspec as fs
import refdecode
from tiledb_format import FormatError, Reader, parse_filtered_tile

INT_OF_SIZE = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SIGNED_TYPES = {0, 1, 5, 7, 4}  # INT32, INT64, INT8, INT16, CHAR


def to_filters(pipeline) -> tuple:
    """tiledb_format.PipelineDesc -> tuple of filterspec.F with the options it holds."""
    out = []
    for e in pipeline.filters:
        t, o = e.ftype, e.options
        if t in (fs.DOUBLE_DELTA, fs.DELTA):
            _, lvl, rt = struct.unpack("<BiB", o[:6])
            out.append(fs.F(t, level=lvl, reinterpret=rt))
        elif t in fs.COMPRESSION:
            out.append(fs.F(t, level=struct.unpack_from("<i", o, 1)[0]))
        elif t in (fs.BWR, fs.POSITIVE_DELTA):
            out.append(fs.F(t, window=struct.unpack("<I", o)[0]))
        elif t == fs.SCALE_FLOAT:
            f, off, bw = struct.unpack("<ddQ", o)
            out.append(fs.F(t, factor=f, offset=off, bytewidth=bw))
        elif t == fs.WEBP:
            q, fmt, ll, y, x, _pad = struct.unpack("<fBBHHH", o)
            out.append(fs.F(t, quality=q, fmt=fmt, lossless=bool(ll), extents=(y, x)))
        else:
            out.append(fs.F(t))
    return tuple(out)


def has_var_string_path(filters, base: int) -> bool:
    """skip_offsets_filtering at version 22 (§5.8): RLE or DICTIONARY on a var ASCII/UTF8 tile."""
    return base in (11, 12) and any(f.type in (fs.RLE, fs.DICTIONARY) for f in filters)


# ---------------------------------------------------------------------------
# element types
# ---------------------------------------------------------------------------

def delta_elem(f: fs.F, t: int):
    """Element numpy type of DELTA / DOUBLE_DELTA (§5.10, §5.11)."""
    e = t if f.reinterpret in (None, 17) else f.reinterpret
    if e in (2, 3):
        raise FormatError("DELTA/DOUBLE_DELTA on a float element type")
    signed = e in (0, 1, 4, 5, 7) or fs.is_datetime(e)
    return (INT_OF_SIZE if signed else UINT_OF_SIZE)[fs.datatype_size(e)]


def bwr_elem(t: int):
    """BIT_WIDTH_REDUCTION element type, or None for pass-through (§5.12)."""
    if t in (7, 0, 1):
        return INT_OF_SIZE[fs.datatype_size(t)]
    if t in (8, 9, 10):
        return UINT_OF_SIZE[fs.datatype_size(t)]
    if fs.is_datetime(t):
        return np.int64
    return None


def pd_elem(t: int):
    """POSITIVE_DELTA element type, or None for pass-through (§5.13)."""
    if t == 5:
        return np.int8
    if t in (6, 41, 40, 42, 43):
        return np.uint8
    return bwr_elem(t)


# ---------------------------------------------------------------------------
# compressors that work per part (compression framework, §5.2)
# ---------------------------------------------------------------------------

def rle_part(comp: bytes, size: int, v: int) -> bytes:
    run = v + 2
    if len(comp) < run:
        return b""
    if len(comp) % run:
        raise FormatError(f"RLE part of {len(comp)} bytes is not a multiple of {run}")
    a = np.frombuffer(comp, dtype=np.uint8).reshape(-1, run)
    counts = a[:, v].astype(np.int64) * 256 + a[:, v + 1]
    if (counts == 0).any():
        raise FormatError("RLE run of length 0")
    return np.repeat(a[:, :v], counts, axis=0).tobytes()


def delta_part(comp: bytes, elem) -> bytes:
    r = Reader(comp)
    n = r.u64()
    s = np.dtype(elem).itemsize
    body = r.take(n * s) if n else b""
    if r.remaining():
        raise FormatError(f"DELTA part: {r.remaining()} bytes after {n} elements")
    if n == 0:
        return b""
    u = UINT_OF_SIZE[s]
    vals = np.frombuffer(body, dtype=u)
    return np.cumsum(vals, dtype=u).tobytes()


def double_delta_part(comp: bytes, elem) -> bytes:
    r = Reader(comp)
    b = r.u8()
    n = r.u64()
    s = np.dtype(elem).itemsize
    if b >= 8 * s - 1:
        return comp[r.pos:]
    if n == 0:
        if r.remaining():
            raise FormatError(f"DOUBLE_DELTA: {r.remaining()} bytes after an empty part (TileDB's "
                              "out-of-bounds values, §5.10)")
        return b""
    x = np.zeros(n, dtype=np.int64)
    wide = np.int64 if np.dtype(elem).kind == "i" else np.uint64
    x[0] = np.frombuffer(r.take(s), dtype=elem).astype(wide).view(np.int64)[0]
    if n >= 2:
        x[1] = np.frombuffer(r.take(s), dtype=elem).astype(wide).view(np.int64)[0]
    if n > 2:
        nbits = (n - 2) * (b + 1)
        nwords = -(-nbits // 64)
        words = np.frombuffer(r.take(nwords * 8), dtype="<u8")
        bits = np.unpackbits(words.astype(">u8").view(np.uint8))[:nbits].reshape(n - 2, b + 1)
        sign = bits[:, 0].astype(bool)
        mag_bits = np.zeros((n - 2, 64), dtype=np.uint8)
        mag_bits[:, 64 - b:] = bits[:, 1:]
        mag = np.packbits(mag_bits, axis=1).view(">u8").reshape(-1).astype(np.int64)
        dd = np.where(sign, -mag, mag)
        with np.errstate(all="ignore"):
            d = np.cumsum(np.concatenate([x[1:2] - x[0:1], dd]), dtype=np.int64)
            x[1:] = x[0:1] + np.cumsum(d, dtype=np.int64)
    if r.remaining():
        raise FormatError(f"DOUBLE_DELTA: {r.remaining()} bytes after the bitstream")
    return x.astype(elem).tobytes()


def _rev_framework(f: fs.F, t: int, cell_size: int, md: bytes, data: bytes, stats):
    """Reverse a compression-framework stage (§5.2) with a per-part decompressor."""
    if f.type in refdecode.DECOMPRESSORS:
        return refdecode._rev_compression(f.type, md, data, stats)
    if f.type == fs.DICTIONARY:
        raise FormatError("DICTIONARY outside the var-string path (TileDB fails here too)")
    r = Reader(md)
    nmd, nd = r.u32(), r.u32()
    sizes = [(r.u32(), r.u32()) for _ in range(nmd + nd)]
    if r.remaining():
        raise FormatError(f"{r.remaining()} metadata bytes after compression metadata")
    parts, pos = [], 0
    for unc, comp in sizes:
        if pos + comp > len(data):
            raise FormatError("compressed part runs past the data stream")
        chunk = data[pos:pos + comp]
        if f.type == fs.RLE:
            out = rle_part(chunk, unc, cell_size)
        elif f.type == fs.DELTA:
            out = delta_part(chunk, delta_elem(f, t))
        elif f.type == fs.DOUBLE_DELTA:
            out = double_delta_part(chunk, delta_elem(f, t))
        else:
            raise FormatError(f"compression filter {f.type} unknown")
        if len(out) != unc:
            raise FormatError(f"{fs.SHORT[f.type]} part decoded to {len(out)} bytes, metadata says {unc}")
        parts.append(out)
        pos += comp
        if stats is not None:
            stats[f.type] = stats.get(f.type, 0) + 1
    if pos != len(data):
        raise FormatError(f"{len(data) - pos} data bytes after the compressed parts")
    return b"".join(parts[:nmd]), b"".join(parts[nmd:])


# ---------------------------------------------------------------------------
# other reverse stages
# ---------------------------------------------------------------------------

def _rev_shuffle(ftype, md: bytes, data: bytes, t: int):
    r = Reader(md)
    lengths = [r.u32() for _ in range(r.u32())]
    rest = md[r.pos:]
    if sum(lengths) != len(data):
        raise FormatError(f"shuffle lengths sum to {sum(lengths)}, data stream has {len(data)}")
    out, pos = [], 0
    for n in lengths:
        part = data[pos:pos + n]
        out.append(refdecode.byteunshuffle(part, t) if ftype == fs.BYTESHUFFLE
                   else refdecode.bitunshuffle_subpart(part, t))
        pos += n
    return rest, b"".join(out)


def _rev_bwr(t: int, md: bytes, data: bytes):
    elem = bwr_elem(t)
    if elem is None:
        return md, data
    s = np.dtype(elem).itemsize
    r = Reader(md)
    total, nwin = r.u32(), r.u32()
    out, pos = [], 0
    for _ in range(nwin):
        off = np.frombuffer(r.take(s), dtype=elem)[0]
        bits, wlen = r.u8(), r.u32()
        if bits not in (8, 16, 32, 64):
            raise FormatError(f"BWR window bit width {bits}")
        if bits >= 8 * s or wlen % s:
            out.append(data[pos:pos + wlen])
            pos += wlen
            continue
        k = wlen // s
        nb = bits // 8
        narrow = (INT_OF_SIZE if np.dtype(elem).kind == "i" else UINT_OF_SIZE)[nb]
        vals = np.frombuffer(data[pos:pos + k * nb], dtype=narrow)
        if len(vals) != k:
            raise FormatError("BWR window runs past the data")
        pos += k * nb
        with np.errstate(over="ignore"):
            w = (vals.astype(np.int64 if np.dtype(elem).kind == "i" else np.uint64).astype(elem) + off)
        out.append(w.astype(elem).tobytes())
    if pos != len(data):
        raise FormatError(f"BWR: {len(data) - pos} data bytes left over")
    body = b"".join(out)
    if len(body) != total:
        raise FormatError(f"BWR windows cover {len(body)} bytes, metadata says {total}")
    return md[r.pos:], body


def _rev_pd(t: int, md: bytes, data: bytes):
    elem = pd_elem(t)
    if elem is None:
        return md, data
    s = np.dtype(elem).itemsize
    r = Reader(md)
    nwin = r.u32()
    out, pos = [], 0
    for _ in range(nwin):
        off = np.frombuffer(r.take(s), dtype=elem)[0]
        wlen = r.u32()
        win = data[pos:pos + wlen]
        if len(win) != wlen:
            raise FormatError("PD window runs past the data")
        pos += wlen
        if wlen % s:
            out.append(win)
            continue
        u = UINT_OF_SIZE[s]
        d = np.frombuffer(win, dtype=u)
        with np.errstate(over="ignore"):
            out.append((np.cumsum(d, dtype=u) + np.array(off).view(u)).astype(u).tobytes())
    if pos != len(data):
        raise FormatError(f"PD: {len(data) - pos} data bytes left over")
    return md[r.pos:], b"".join(out)


def _rev_xor(t: int, md: bytes, data: bytes):
    s = fs.datatype_size(t)
    r = Reader(md)
    lengths = [r.u32() for _ in range(r.u32())]
    out, pos = [], 0
    for n in lengths:
        if n % s:
            raise FormatError(f"XOR part of {n} bytes is not a multiple of {s} (TileDB's "
                              "trailing-bytes defect, §5.18)")
        y = np.frombuffer(data[pos:pos + n], dtype=UINT_OF_SIZE[s])
        if len(y) * s != n:
            raise FormatError("XOR part runs past the data")
        out.append(np.bitwise_xor.accumulate(y).tobytes() if n else b"")
        pos += n
    if pos != len(data):
        raise FormatError(f"XOR: {len(data) - pos} data bytes left over")
    return md[r.pos:], b"".join(out)


def _rev_scale(f: fs.F, t: int, md: bytes, data: bytes):
    fsize = fs.datatype_size(t)
    if fsize not in (4, 8):
        raise FormatError(f"SCALE_FLOAT on a {fsize}-byte type")
    bw = f.bytewidth or 8
    r = Reader(md)
    lengths = [r.u32() for _ in range(r.u32())]
    out, pos = [], 0
    for n in lengths:
        w = np.frombuffer(data[pos:pos + n], dtype=INT_OF_SIZE[bw])
        pos += n
        x = f.factor * w.astype(np.float64) + f.offset
        out.append(x.astype(np.float32 if fsize == 4 else np.float64).tobytes())
    if pos != len(data):
        raise FormatError(f"SCALE_FLOAT: {len(data) - pos} data bytes left over")
    return md[r.pos:], b"".join(out)


def _rev_webp(f, md: bytes, data: bytes, original_length: int):
    r = Reader(md)
    lengths = [r.u32() for _ in range(r.u32())]
    out, pos = [], 0
    for n in lengths:
        pixels = webp_decode(data[pos:pos + n], f.fmt)
        pos += n
        if len(pixels) < original_length:
            raise FormatError(f"WebP image decodes to {len(pixels)} bytes, chunk has {original_length}")
        out.append(pixels[:original_length])
    return md[r.pos:], b"".join(out)


def _rev_var_string(f: fs.F, md: bytes, data: bytes):
    """§5.8 reverse: returns (data bytes, offsets)."""
    r = Reader(md)
    if (r.u32(), r.u32()) != (0, 1):
        raise FormatError("var-string metadata does not start with counts 0, 1")
    input_len, output_len, _offsets_bytes = r.u32(), r.u32(), r.u32()
    if output_len > len(data):
        raise FormatError(f"var-string output_length {output_len} > data {len(data)}")
    body = data[:output_len]
    offsets, pieces, pos, at = [], [], 0, 0
    if f.type == fs.RLE:
        rl, sl = r.u8(), r.u8()
        if not rl or not sl:
            raise FormatError("var-string RLE width 0")
        while pos < len(body):
            if pos + rl + sl > len(body):
                raise FormatError("var-string RLE run header runs past the data")
            run = int.from_bytes(body[pos:pos + rl], "big")
            slen = int.from_bytes(body[pos + rl:pos + rl + sl], "big")
            pos += rl + sl
            sbytes = body[pos:pos + slen]
            if len(sbytes) != slen:
                raise FormatError("var-string RLE string runs past the data")
            pos += slen
            for _ in range(run):
                offsets.append(at)
                at += slen
            pieces.append(sbytes * run)
    else:
        id_size, sl = r.u8(), r.u8()
        dict_bytes = r.u32()
        d = r.take(dict_bytes)
        entries, dp = [], 0
        while dp < len(d):
            n = int.from_bytes(d[dp:dp + sl], "big")
            entries.append(d[dp + sl:dp + sl + n])
            dp += sl + n
        if dp != len(d):
            raise FormatError("dictionary entries overrun dict_bytes")
        code = {1: "u1", 2: ">u2", 4: ">u4", 8: ">u8"}.get(id_size)
        if code is None or len(body) % id_size:
            raise FormatError(f"dictionary id size {id_size} / {len(body)} id bytes")
        ids = np.frombuffer(body, dtype=code)
        if len(ids) and int(ids.max()) >= len(entries):
            raise FormatError("dictionary id out of range")
        lens = np.array([len(e) for e in entries], dtype=np.uint64)
        if len(ids):
            cl = lens[ids.astype(np.int64)]
            offsets = np.concatenate([[0], np.cumsum(cl)[:-1]]).astype(np.uint64).tolist()
            pieces = [entries[i] for i in ids.tolist()]
    out = b"".join(pieces)
    if len(out) != input_len:
        raise FormatError(f"var-string decode gave {len(out)} bytes, input_length says {input_len}")
    return out, offsets


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------

def reverse_stage(f, t: int, cell_size: int, md: bytes, data: bytes, original_length: int, stats=None):
    """Reverse one filter (not the var-string path). Returns (md, data) of the previous stage."""
    ft = f.type
    if ft == fs.NONE:
        return md, data
    if ft in fs.COMPRESSION:
        return _rev_framework(f, t, cell_size, md, data, stats)
    if ft in (fs.MD5, fs.SHA256):
        return refdecode._rev_checksum(ft, md, data)
    if ft in (fs.BITSHUFFLE, fs.BYTESHUFFLE):
        return _rev_shuffle(ft, md, data, fs.datatype_size(t))
    if ft == fs.BWR:
        return _rev_bwr(t, md, data)
    if ft == fs.POSITIVE_DELTA:
        return _rev_pd(t, md, data)
    if ft == fs.XOR:
        return _rev_xor(t, md, data)
    if ft == fs.SCALE_FLOAT:
        return _rev_scale(f, t, md, data)
    if ft == fs.WEBP:
        return _rev_webp(f, md, data, original_length)
    raise FormatError(f"filter type {ft} unknown")


def stage_streams(filters, base: int, cell_size: int, md: bytes, data: bytes, original_length: int,
                  var_string: bool = False):
    """(md, data) at every stage boundary of one chunk, from the final output down.

    Element i is the input of filter i (element len(filters) = the chunk's final streams),
    so the list has len(filters) + 1 entries, element 0 being ([], chunk bytes) for a
    complete decode. With the var-string path element 0's data is the string data and its
    md is the rebuilt offsets (a list)."""
    types = fs.stage_types(filters, base)
    out = [None] * (len(filters) + 1)
    out[len(filters)] = (md, data)
    for i in range(len(filters) - 1, -1, -1):
        f = filters[i]
        if var_string and i == 0 and f.type in (fs.RLE, fs.DICTIONARY):
            d, offs = _rev_var_string(f, md, data)
            out[0] = (offs, d)
            return out
        md, data = reverse_stage(f, types[i], cell_size, md, data, original_length)
        out[i] = (md, data)
    return out


def decode_tile(filters, base: int, cell_size: int, tile: bytes, var_string: bool = False, stats=None):
    """Decode a whole filtered tile. Returns the cell bytes, or (bytes, offsets) on the
    var-string path (offsets relative to the tile, one per cell)."""
    ft = parse_filtered_tile(tile)
    if ft.size != len(tile):
        raise FormatError(f"tile has {len(tile) - ft.size} trailing bytes")
    types = fs.stage_types(filters, base)
    out, offsets = [], []
    at = 0
    for ci, c in enumerate(ft.chunks):
        md, data = c.metadata, c.data
        try:
            for i in range(len(filters) - 1, -1, -1):
                f = filters[i]
                if var_string and i == 0 and f.type in (fs.RLE, fs.DICTIONARY):
                    data, offs = _rev_var_string(f, md, data)
                    offsets.extend(o + at for o in offs)
                    md = b""
                    continue
                md, data = reverse_stage(f, types[i], cell_size, md, data, c.original_length, stats)
        except FormatError as e:
            raise FormatError(f"chunk {ci}: {e}") from None
        if md:
            raise FormatError(f"chunk {ci}: {len(md)} metadata bytes left after the first filter")
        if len(data) != c.original_length:
            raise FormatError(f"chunk {ci} decoded to {len(data)} bytes, original_length {c.original_length}")
        out.append(data)
        at += len(data)
    body = b"".join(out)
    return (body, offsets) if var_string else body


def supports(filters) -> tuple[bool, str]:
    for f in filters:
        if f.type in refdecode.DECOMPRESSORS:
            ok, why = refdecode.supports([f.type])
            if not ok:
                return ok, why
        if f.type == fs.WEBP and webp_decoder_name() is None:
            return False, "no WebP decoder (install Pillow)"
    return True, ""


# ---------------------------------------------------------------------------
# TileDB's indeterminate bytes (docs/FORMAT.md §8.4)
# ---------------------------------------------------------------------------

def indeterminate_ranges(f, t: int, md: bytes, data: bytes) -> list[tuple[int, int]]:
    """(start, length) ranges, within the md stream of a BWR or POSITIVE_DELTA stage *output*
    (own block first), of window_offset fields TileDB leaves indeterminate (§8.4 items 2, 3)."""
    if f.type == fs.BWR:
        elem = bwr_elem(t)
        if elem is None:
            return []
        s = np.dtype(elem).itemsize
        info = np.iinfo(elem)
        r = Reader(md)
        r.u32()
        nwin = r.u32()
        out, pos = [], 0
        for _ in range(nwin):
            at = r.pos
            r.take(s)
            bits, wlen = r.u8(), r.u32()
            if bits >= 8 * s or wlen % s:
                win = np.frombuffer(data[pos:pos + wlen - wlen % s], dtype=elem)
                pos += wlen
                # TileDB computes range = max - min and range + 1 in T with overflow checks; on
                # overflow (or an empty window) window_offset is never written.
                if len(win) == 0:
                    out.append((at, s))
                else:
                    rng = int(win.max()) - int(win.min())
                    if rng + 1 > info.max:
                        out.append((at, s))
            else:
                pos += (wlen // s) * (bits // 8)
        return out
    if f.type == fs.POSITIVE_DELTA:
        elem = pd_elem(t)
        if elem is None:
            return []
        s = np.dtype(elem).itemsize
        r = Reader(md)
        nwin = r.u32()
        out = []
        for _ in range(nwin):
            at = r.pos
            r.take(s)
            wlen = r.u32()
            if wlen % s:
                out.append((at, s))
        return out
    return []


# ---------------------------------------------------------------------------
# WebP decoding
# ---------------------------------------------------------------------------

_webp_lib = None


def webp_decoder_name() -> str | None:
    try:
        from PIL import features
        if features.check("webp"):
            return f"Pillow (libwebp {features.version('webp')})"
    except Exception:
        pass
    if _load_libwebp() is not None:
        return "system libwebp (ctypes)"
    return None


def _load_libwebp():
    global _webp_lib
    if _webp_lib is None:
        name = ctypes.util.find_library("webp")
        if not name:
            _webp_lib = False
            return None
        lib = ctypes.CDLL(name)
        for fn in ("WebPDecodeRGB", "WebPDecodeBGR", "WebPDecodeRGBA", "WebPDecodeBGRA"):
            getattr(lib, fn).restype = ctypes.c_void_p
            getattr(lib, fn).argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int),
                                         ctypes.POINTER(ctypes.c_int)]
        lib.WebPFree.argtypes = [ctypes.c_void_p]
        _webp_lib = lib
    return _webp_lib or None


def webp_decode(riff: bytes, fmt: int) -> bytes:
    """Decode a RIFF/WEBP file to packed pixels in `fmt` (1 RGB, 2 BGR, 3 RGBA, 4 BGRA)."""
    if riff[:4] != b"RIFF" or riff[8:12] != b"WEBP":
        raise FormatError("WebP part is not a RIFF/WEBP file")
    try:
        from PIL import Image, features
        if features.check("webp"):
            im = Image.open(io.BytesIO(riff))
            im.load()
            mode = "RGBA" if fmt in (3, 4) else "RGB"
            a = np.asarray(im.convert(mode))
            if fmt in (2, 4):
                a = a[..., [2, 1, 0] + ([3] if fmt == 4 else [])]
            return np.ascontiguousarray(a).tobytes()
    except ImportError:
        pass
    except Exception as e:
        raise FormatError(f"Pillow cannot decode the WebP part: {e}") from None
    lib = _load_libwebp()
    if lib is None:
        raise FormatError("no WebP decoder available")
    w, h = ctypes.c_int(), ctypes.c_int()
    fn = {1: lib.WebPDecodeRGB, 2: lib.WebPDecodeBGR, 3: lib.WebPDecodeRGBA, 4: lib.WebPDecodeBGRA}[fmt]
    p = fn(riff, len(riff), ctypes.byref(w), ctypes.byref(h))
    if not p:
        raise FormatError("libwebp cannot decode the WebP part")
    try:
        return ctypes.string_at(p, w.value * h.value * (4 if fmt in (3, 4) else 3))
    finally:
        lib.WebPFree(p)


# ---------------------------------------------------------------------------
# docs/FORMAT.md §9.2 vectors for the filters added here
# ---------------------------------------------------------------------------

def check_spec_vectors() -> list[str]:
    """Decode the docs/FORMAT.md §9.2 tiles of this module's filters; returns error strings."""
    F = fs.F
    cases = [
        ("DOUBLE_DELTA INT64", (F(fs.DOUBLE_DELTA),), 1, 8, False,
         "0100000000000000 38000000 21000000 10000000 00000000 01000000 38000000 21000000 "
         "03 0700000000000000 0a00000000000000 0d00000000000000 0000000000f01101",
         struct.pack("<7q", 10, 13, 16, 20, 25, 31, 30)),
        ("BWR(16) INT32", (F(fs.BWR, window=16),), 0, 4, False,
         "0100000000000000 18000000 06000000 1a000000 18000000 02000000 e8030000 08 10000000 "
         "70110100 08 08000000 0001050a 0001",
         struct.pack("<6i", 1000, 1001, 1005, 1010, 70000, 70001)),
        ("POSITIVE_DELTA(4) UINT16", (F(fs.POSITIVE_DELTA, window=4),), 8, 2, False,
         "0100000000000000 0a000000 0a000000 16000000 03000000 0500 04000000 0700 04000000 1400 "
         "02000000 0000 0200 0000 0200 0000", struct.pack("<5H", 5, 7, 7, 9, 20)),
        ("DELTA INT16", (F(fs.DELTA),), 7, 2, False,
         "0100000000000000 08000000 10000000 10000000 00000000 01000000 08000000 10000000 "
         "0400000000000000 0500 feff 2901 d2fe", struct.pack("<4h", 5, 3, 300, -2)),
        ("RLE INT16", (F(fs.RLE),), 7, 2, False,
         "0100000000000000 0c000000 0c000000 10000000 00000000 01000000 0c000000 0c000000 "
         "0700 0003 0900 0002 0700 0001", struct.pack("<6h", 7, 7, 7, 9, 9, 7)),
        ("XOR INT16", (F(fs.XOR),), 7, 2, False,
         "0100000000000000 08000000 08000000 08000000 01000000 08000000 0100 0200 0400 0800",
         struct.pack("<4h", 1, 3, 7, 15)),
        ("SCALE_FLOAT(0.5,1,1) FLOAT32", (F(fs.SCALE_FLOAT, factor=0.5, offset=1.0, bytewidth=1),), 2, 4,
         False, "0100000000000000 10000000 04000000 08000000 01000000 04000000 00 01 02 fe",
         struct.pack("<4f", 1.0, 1.5, 2.0, 0.0)),
        ("RLE var ASCII", (F(fs.RLE),), 11, 1, True,
         "0100000000000000 0e000000 0c000000 16000000 00000000 01000000 0e000000 0c000000 30000000 "
         "01 01 02 02 6161 01 01 62 03 03 636363", (b"aaaabccccccccc", [0, 2, 4, 5, 8, 11])),
        ("DICTIONARY var ASCII", (F(fs.DICTIONARY),), 11, 1, True,
         "0100000000000000 0d000000 06000000 23000000 00000000 01000000 0d000000 06000000 30000000 "
         "01 01 09000000 02 6161 01 62 03 636363 00 00 01 02 02 00",
         (b"aaaabcccccc" + b"aa", [0, 2, 4, 5, 8, 11])),
    ]
    errors = []
    for name, filters, base, cell, var, hexstr, want in cases:
        try:
            got = decode_tile(filters, base, cell, bytes.fromhex(hexstr.replace(" ", "")), var_string=var)
            if var:
                got = (got[0], list(got[1]))
        except FormatError as e:
            errors.append(f"§9.2 {name}: {e}")
            continue
        if got != want:
            errors.append(f"§9.2 {name}: decoded {got!r}, expected {want!r}")
    return errors
