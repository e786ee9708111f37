"""Independent Python model of TileDB 2.30's AES-256-GCM stage and generic tiles.

Written from docs/FORMAT.md §4.1 (filtered tile), §5.2 (compression framework),
§5.3 (zlib), §5.20 (AES-256-GCM) and §6 (generic tiles), with Python's
`cryptography` (AESGCM, no AAD, 16-byte tag) and `zlib`. No tdbfilter code.

* `strip_tile(key, tile)`: decrypt the final AES stage of every chunk of a
  filtered tile and return the filtered tile the pipeline *without* AES
  gives (same chunk original lengths; metadata = decrypted metadata parts,
  data = decrypted data parts), plus what was found (`AesChunk` per chunk).
* `read_generic_tile(data, key)`: parse and decode one generic tile
  (unencrypted [GZIP 1] or encrypted [GZIP 1, AES]) to its payload.
* `walk_generic_tiles(data, key)`: the generic tiles a file starts with
  (fragment metadata is a sequence of them followed by a footer).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

from tiledb_format import FormatError, Reader, parse_filtered_tile, parse_pipeline

AES_MD_HEADER = 8      # u32 num_metadata_parts, u32 num_data_parts
AES_PART_MD = 36       # u32 plaintext_length, u32 ciphertext_length, iv[12], tag[16]
IV_SIZE, TAG_SIZE = 12, 16

GENERIC_PIPELINE_PLAIN = bytes.fromhex("00000100" "01000000" "01" "05000000" "01" "01000000")
GENERIC_PIPELINE_AES = bytes.fromhex("00000100" "02000000" "01" "05000000" "01" "01000000" "0b" "00000000")
GENERIC_HEADER_SIZE = 34
AES_FILTER_TYPE = 11


@dataclass
class AesPart:
    plain_len: int
    cipher_len: int
    iv: bytes
    tag: bytes
    md_offset: int         # offset of this part's 36-byte entry within the chunk metadata


@dataclass
class AesChunk:
    original_length: int
    n_md: int
    n_data: int
    parts: list            # AesPart, md parts then data parts
    md_parts: list = field(default_factory=list)     # decrypted
    data_parts: list = field(default_factory=list)   # decrypted
    header_offset: int = 0  # of the chunk within the tile

    @property
    def md_lengths(self) -> list[int]:
        return [p.plain_len for p in self.parts[:self.n_md]]

    @property
    def data_lengths(self) -> list[int]:
        return [p.plain_len for p in self.parts[self.n_md:]]


def parse_aes_metadata(md: bytes, data_len: int) -> tuple[int, int, list]:
    """Parse the AES own block (§5.20); it must be the whole chunk metadata and the ciphertexts
    must exactly fill the chunk data."""
    r = Reader(md)
    n_md, n_data = r.u32(), r.u32()
    want = AES_MD_HEADER + AES_PART_MD * (n_md + n_data)
    if len(md) != want:
        raise FormatError(f"AES metadata is {len(md)} bytes; {n_md} md + {n_data} data parts need {want}")
    parts = []
    for _ in range(n_md + n_data):
        at = r.pos
        plain, cipher = r.u32(), r.u32()
        iv, tag = r.take(IV_SIZE), r.take(TAG_SIZE)
        if plain != cipher:
            raise FormatError(f"AES part plaintext {plain} != ciphertext {cipher} (GCM adds no padding)")
        parts.append(AesPart(plain, cipher, iv, tag, at))
    total = sum(p.cipher_len for p in parts)
    if total != data_len:
        raise FormatError(f"AES ciphertexts total {total} bytes, chunk data is {data_len}")
    return n_md, n_data, parts


def _aesgcm(key: bytes):
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    if len(key) != 32:
        raise ValueError("AES-256 needs a 32-byte key")
    return AESGCM(bytes(key))


def decrypt_parts(key: bytes, parts: list, data: bytes) -> list[bytes]:
    """Decrypt each part's ciphertext (taken in order from `data`); raises FormatError on a tag
    mismatch."""
    from cryptography.exceptions import InvalidTag
    g = _aesgcm(key)
    out, pos = [], 0
    for i, p in enumerate(parts):
        ct = data[pos:pos + p.cipher_len]
        pos += p.cipher_len
        try:
            out.append(g.decrypt(p.iv, ct + p.tag, None))
        except InvalidTag:
            raise FormatError(f"AES part {i}: tag check failed") from None
    return out


def encrypt_parts(key: bytes, md_parts: list, data_parts: list, ivs: list | None = None) -> tuple[bytes, bytes]:
    """The AES stage output (own metadata block, data) for the given input parts (§5.20)."""
    import os
    g = _aesgcm(key)
    md = bytearray(struct.pack("<II", len(md_parts), len(data_parts)))
    body = bytearray()
    for i, part in enumerate(list(md_parts) + list(data_parts)):
        iv = ivs[i] if ivs else os.urandom(IV_SIZE)
        ct = g.encrypt(iv, bytes(part), None)
        md += struct.pack("<II", len(part), len(part)) + iv + ct[-TAG_SIZE:]
        body += ct[:-TAG_SIZE]
    return bytes(md), bytes(body)


def build_tile(chunks: list) -> bytes:
    """A filtered tile (§4.1) from [(original_length, metadata, data)]."""
    out = bytearray(struct.pack("<Q", len(chunks)))
    for orig, md, data in chunks:
        out += struct.pack("<III", orig, len(data), len(md)) + md + data
    return bytes(out)


def parse_aes_tile(tile: bytes) -> list[AesChunk]:
    """The AES structure of every chunk of an encrypted filtered tile (no decryption)."""
    ft = parse_filtered_tile(tile)
    if ft.size != len(tile):
        raise FormatError(f"{len(tile) - ft.size} bytes after the filtered tile")
    out = []
    for ci, c in enumerate(ft.chunks):
        try:
            n_md, n_data, parts = parse_aes_metadata(c.metadata, len(c.data))
        except FormatError as e:
            raise FormatError(f"chunk {ci}: {e}") from None
        out.append(AesChunk(c.original_length, n_md, n_data, parts, header_offset=c.header_offset))
    return out


def strip_tile(key: bytes, tile: bytes) -> tuple[bytes, list]:
    """Decrypt the AES stage of each chunk. Returns (the tile without the AES stage, [AesChunk])."""
    ft = parse_filtered_tile(tile)
    if ft.size != len(tile):
        raise FormatError(f"{len(tile) - ft.size} bytes after the filtered tile")
    chunks, info = [], []
    for ci, c in enumerate(ft.chunks):
        try:
            n_md, n_data, parts = parse_aes_metadata(c.metadata, len(c.data))
            plain = decrypt_parts(key, parts, c.data)
        except FormatError as e:
            raise FormatError(f"chunk {ci}: {e}") from None
        ac = AesChunk(c.original_length, n_md, n_data, parts, plain[:n_md], plain[n_md:], c.header_offset)
        info.append(ac)
        chunks.append((c.original_length, b"".join(ac.md_parts), b"".join(ac.data_parts)))
    return build_tile(chunks), info


# ---------------------------------------------------------------------------
# generic tiles (§6)
# ---------------------------------------------------------------------------

@dataclass
class GenericTileRef:
    offset: int
    size: int              # header + pipeline + filtered tile
    version: int
    persisted_size: int
    tile_size: int
    datatype: int
    cell_size: int
    encryption_type: int
    pipeline_bytes: bytes
    filtered: bytes        # the filtered tile bytes (persisted_size of them)
    payload: bytes
    chunk_lengths: list
    aes: list = field(default_factory=list)  # AesChunk per chunk (encrypted tiles)
    anomalies: list = field(default_factory=list)


def _zlib_exact(comp: bytes, size: int) -> bytes:
    d = zlib.decompressobj()
    out = d.decompress(comp)
    if not d.eof:
        raise FormatError("zlib stream did not reach Z_STREAM_END")
    if d.unused_data:
        raise FormatError(f"{len(d.unused_data)} bytes after the zlib stream")
    if len(out) != size:
        raise FormatError(f"zlib part inflated to {len(out)} bytes, expected {size}")
    return out


def reverse_gzip_stage(md: bytes, data: bytes) -> tuple[bytes, bytes]:
    """Reverse a §5.2 compression-framework stage whose compressor is zlib (§5.3)."""
    r = Reader(md)
    n_md, n_data = r.u32(), r.u32()
    sizes = [(r.u32(), r.u32()) for _ in range(n_md + n_data)]
    if r.remaining():
        raise FormatError(f"{r.remaining()} bytes after the GZIP metadata")
    pos, parts = 0, []
    for unc, comp in sizes:
        if pos + comp > len(data):
            raise FormatError("GZIP part runs past the chunk data")
        parts.append(_zlib_exact(data[pos:pos + comp], unc))
        pos += comp
    if pos != len(data):
        raise FormatError(f"{len(data) - pos} bytes after the GZIP parts")
    return b"".join(parts[:n_md]), b"".join(parts[n_md:])


def looks_like_generic_header(data: bytes, offset: int = 0) -> bool:
    """Whether a §6 header with a plausible [GZIP(1)] / [GZIP(1), AES] pipeline starts here."""
    if offset + GENERIC_HEADER_SIZE > len(data):
        return False
    version, persisted, tile_size, dtype, cell, enc, fps = struct.unpack_from("<IQQBQBI", data, offset)
    if dtype != 4 or cell != 1 or enc not in (0, 1) or fps not in (len(GENERIC_PIPELINE_PLAIN),
                                                                   len(GENERIC_PIPELINE_AES)):
        return False
    start = offset + GENERIC_HEADER_SIZE
    return start + fps + persisted <= len(data) and data[start:start + fps] in (GENERIC_PIPELINE_PLAIN,
                                                                                GENERIC_PIPELINE_AES)


def read_generic_tile(data: bytes, key: bytes | None, offset: int = 0) -> GenericTileRef:
    """Parse and decode the generic tile at data[offset:]."""
    r = Reader(data, offset)
    version = r.u32()
    persisted = r.u64()
    tile_size = r.u64()
    dtype = r.u8()
    cell = r.u64()
    enc = r.u8()
    fps = r.u32()
    pbytes = r.take(fps)
    anomalies = []
    if version != 22:
        anomalies.append(f"version {version} (docs/FORMAT.md §6: 22)")
    if dtype != 4 or cell != 1:
        anomalies.append(f"datatype {dtype} / cell size {cell} (docs/FORMAT.md §6: 4 / 1)")
    want_p = GENERIC_PIPELINE_AES if enc == 1 else GENERIC_PIPELINE_PLAIN
    if pbytes != want_p:
        anomalies.append(f"pipeline {pbytes.hex()} (docs/FORMAT.md §6: {want_p.hex()})")
    desc = parse_pipeline(Reader(pbytes), version)
    types = [f.ftype for f in desc.filters]
    if enc == 1:
        if types != [1, AES_FILTER_TYPE]:
            raise FormatError(f"encrypted generic tile pipeline {types}, expected [GZIP, AES]")
        if key is None:
            raise FormatError("encrypted generic tile and no key")
    elif enc == 0:
        if types != [1]:
            raise FormatError(f"generic tile pipeline {types}, expected [GZIP]")
    else:
        raise FormatError(f"encryption type {enc}")
    if desc.filters[0].level != 1:
        anomalies.append(f"GZIP level {desc.filters[0].level} (docs/FORMAT.md §6: 1)")
    start = r.pos
    if start + persisted > len(data):
        raise FormatError(f"persisted_size {persisted} runs past the end of the file")
    filtered = data[start:start + persisted]
    ft = parse_filtered_tile(filtered)
    if ft.size != persisted:
        raise FormatError(f"persisted_size {persisted} but the filtered tile spans {ft.size}")
    if ft.original_size != tile_size:
        raise FormatError(f"chunk original lengths sum to {ft.original_size}, tile_size {tile_size}")
    lengths = [c.original_length for c in ft.chunks]
    want_chunks = _fixed_chunks(tile_size)
    if lengths != want_chunks:
        anomalies.append(f"chunks {lengths}, docs/FORMAT.md §4.3 predicts {want_chunks}")
    payload, aes = bytearray(), []
    for ci, c in enumerate(ft.chunks):
        md, body = c.metadata, c.data
        try:
            if enc == 1:
                n_md, n_data, parts = parse_aes_metadata(md, len(body))
                plain = decrypt_parts(key, parts, body)
                aes.append(AesChunk(c.original_length, n_md, n_data, parts, plain[:n_md], plain[n_md:],
                                    c.header_offset))
                md, body = b"".join(plain[:n_md]), b"".join(plain[n_md:])
            md, body = reverse_gzip_stage(md, body)
        except FormatError as e:
            raise FormatError(f"chunk {ci}: {e}") from None
        if md:
            raise FormatError(f"chunk {ci}: {len(md)} metadata bytes left after GZIP")
        if len(body) != c.original_length:
            raise FormatError(f"chunk {ci}: decoded {len(body)} bytes, original_length {c.original_length}")
        payload += body
    return GenericTileRef(offset, start + persisted - offset, version, persisted, tile_size, dtype, cell, enc,
                          pbytes, filtered, bytes(payload), lengths, aes, anomalies)


def _fixed_chunks(tile_size: int) -> list[int]:
    if tile_size == 0:
        return []
    cs = min(65536, tile_size)
    if tile_size == cs:
        return [tile_size]
    return [cs] * (tile_size // cs) + ([tile_size % cs] if tile_size % cs else [])


def walk_generic_tiles(data: bytes, key: bytes | None) -> tuple[list, int]:
    """Decode the generic tiles at the start of `data`, one after another, while a §6 header
    follows. Returns ([GenericTileRef], offset where they end)."""
    tiles, pos = [], 0
    while looks_like_generic_header(data, pos):
        g = read_generic_tile(data, key, pos)
        tiles.append(g)
        pos += g.size
    return tiles, pos


def check_footer_start(data: bytes, pos: int, schema_name: str) -> str:
    """'' if a version-22 fragment metadata footer starts at `pos` (u32 version, u64 name length,
    the array schema name), else why not. (docs/ARRAY.md §4.3.)"""
    if pos + 12 > len(data):
        return f"no footer: {len(data) - pos} bytes after the generic tiles"
    version, n = struct.unpack_from("<IQ", data, pos)
    name = data[pos + 12:pos + 12 + n]
    if version != 22 or name != schema_name.encode():
        return (f"bytes after the generic tiles (offset {pos}) do not start a footer "
                f"(version {version}, name {name[:60]!r}, expected {schema_name!r})")
    return ""


def write_generic_tile(payload: bytes, key: bytes | None = None) -> bytes:
    """A generic tile as TileDB 2.30 writes it (§6): [GZIP level 1] (zlib per 64 KiB chunk, §5.2 /
    §5.3), then AES-256-GCM with fresh IVs when `key` is given. Unencrypted output is expected to
    be TileDB's bytes exactly (Python's zlib = TileDB's zlib 1.3.1 at level 1, docs/FORMAT.md §5.3)."""
    chunks = []
    for orig_len in _fixed_chunks(len(payload)):
        pos = sum(c[0] for c in chunks)
        chunk = payload[pos:pos + orig_len]
        comp = zlib.compress(chunk, 1)
        md = struct.pack("<IIII", 0, 1, len(chunk), len(comp))
        data = comp
        if key is not None:
            md, data = encrypt_parts(key, [md], [data])
        chunks.append((orig_len, md, data))
    filtered = build_tile(chunks)
    pipeline = GENERIC_PIPELINE_AES if key is not None else GENERIC_PIPELINE_PLAIN
    header = struct.pack("<IQQBQBI", 22, len(filtered), len(payload), 4, 1, 1 if key is not None else 0,
                         len(pipeline))
    return header + pipeline + filtered
