"""Checks of the AES-256-GCM support of libtdbfilter against encrypted TileDB 2.30 arrays.

One `EncRun` per array (encryption_cases.EncArray). Check letters, per field
(attribute or dimension; its data, offsets and validity tiles):

* ``P`` harness vs docs/FORMAT.md, no library: the schema holds the field's
  pipeline per §3 and no AES filter anywhere; every TileDB tile has the §5.20
  layout (metadata = the AES own block only: u32 nmd, u32 nd, per part u32
  plain = u32 cipher, iv[12], tag[16]; ciphertexts fill the chunk data) and
  decrypts with Python `cryptography` (AESGCM, no AAD); chunk original lengths
  follow §4.3 / §4.5; skipped offsets tiles are the unencrypted 8-byte marker
  (§7.1); refdecode_ext decodes the decrypted tiles to the written cells.
* ``D`` the library with the key decodes TileDB's tiles to the written cells
  (tdb_pipeline_unfilter / tdb_pipeline_unfilter_var; offsets tiles also as
  UINT64 tiles; validity tiles as UINT8 tiles).
* ``A`` TileDB's tiles with the AES stage removed in Python decode with the
  library *without* a key to the cells, and equal the library's unencrypted
  filtering of the cells byte for byte (BIT_WIDTH_REDUCTION window offsets
  TileDB leaves uninitialized, docs/FORMAT.md §8.4, are masked and counted), and
  TileDB's AES part structure (part counts and lengths) equals the library's.
* ``E`` the library's encrypted tiles: §5.20 layout, Python decryption gives
  exactly the library's unencrypted filtering, same size as TileDB's tile,
  IVs distinct, the library decodes them back; RLE / DICTIONARY strings give
  the unencrypted 8-byte offsets marker.
* ``N`` negative: wrong key, a flipped ciphertext / tag / IV byte ->
  TDB_ERR_DECRYPTION_FAILED with a message naming the chunk and the part and
  not containing the key; no key -> an error; two encryptions of a tile
  differ but have the same size. On TileDB's tiles and on the library's.
* ``R`` TileDB-Py (with the key) reads the array back to the written cells
  after the field's data files were replaced by the library's encryption.

Generic tiles (rows ``generic: __schema`` / ``__fragment_metadata`` / ``__meta``):

* ``P`` aes_ref.py (Python, from §6, §5.2, §5.3, §5.20) decodes every generic
  tile; header fields as §6 says; the schema parses; fragment metadata is
  generic tiles followed by the footer.
* ``D`` tdb_generic_tile_read gives the Python payload and consumed size.
* ``E`` tdb_generic_tile_write of the payload: unencrypted = TileDB's bytes;
  encrypted: same header and size as TileDB's, decrypts in Python to the same
  GZIP stage as TileDB's tile, reads back with the library.
* ``N`` wrong key / flipped byte -> TDB_ERR_DECRYPTION_FAILED; no key -> error;
  a key for an unencrypted tile -> error (§6 step 2); fresh IVs.
* ``R`` TileDB-Py opens and reads the array (cells and metadata) after the
  schema, the fragment metadata tiles and the metadata files were replaced
  by the library's writes.
"""

from __future__ import annotations

import os
import pickle
import re
import shutil
import struct
import subprocess
import sys
import traceback
from dataclasses import asdict, dataclass, field

import numpy as np

import aes_ref as ar
import encryption_cases as ec
import filterspec as fs
import tiledb_format as tf

FORMAT_VERSION = 22
TDB_ERR_INVALID_ARGUMENT, TDB_ERR_CORRUPT_DATA, TDB_ERR_DECRYPTION_FAILED = 1, 2, 4
WRONG_KEY = b"W" * 32


@dataclass
class Result:
    group: str
    array: str
    row: str
    check: str
    status: str          # pass, differs (explained, counts as passed), fail
    detail: str = ""
    info: dict = field(default_factory=dict)

    def to_dict(self):
        return asdict(self)


class Problems(list):
    def add(self, text):
        self.append(text)


def first_diff(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    for i in range(0, n, 4096):
        if a[i:i + 4096] != b[i:i + 4096]:
            for j in range(i, min(i + 4096, n)):
                if a[j] != b[j]:
                    return j
    return n


def diff_text(ours: bytes, theirs: bytes) -> str:
    off = first_diff(ours, theirs)
    return (f"sizes {len(ours)} / {len(theirs)}, first difference at byte {off} "
            f"[{tf.describe_offset(theirs, off)}]: {ours[off:off + 8].hex()} vs {theirs[off:off + 8].hex()}")


def cells_diff(got: bytes, want: bytes) -> str:
    return f"{len(got)} bytes vs {len(want)} expected, first difference at byte {first_diff(got, want)}"


# ---------------------------------------------------------------------------
# streams of a field
# ---------------------------------------------------------------------------

@dataclass
class Stream:
    kind: str            # "data", "offsets", "validity"
    path: str
    filters: tuple
    base: int            # filter data type of the pipeline input
    cell: int            # chunking / RLE cell size
    pipeline_bytes: bytes


def _expected_chunks(fc: ec.FieldCase, st: Stream, tile: ec.TileExp) -> list[int]:
    import arrayspec as asp
    if st.kind == "offsets":
        return tf.expected_fixed_chunks(8 * len(tile.offsets), 8) if len(tile.offsets) else []
    if st.kind == "validity":
        return tf.expected_fixed_chunks(len(tile.validity), 1)
    if fc.var:
        return asp.var_chunk_sizes(tile.cell_sizes, fc.value_size, not fc.var_string)
    return tf.expected_fixed_chunks(len(tile.data), fc.cell_size) if tile.data else []


def masked_equal(filters, base: int, cell: int, ours: bytes, theirs: bytes):
    """Explain a difference between two unencrypted tiles by TileDB's indeterminate BWR/PD
    window offsets (docs/FORMAT.md §8.4): the number of masked bytes if the streams up to and
    including that stage's output agree once masked, else None."""
    import refdecode_ext as rx
    js = [j for j, f in enumerate(filters) if f.type in (fs.BWR, fs.POSITIVE_DELTA)]
    if not js:
        return None
    try:
        a, b = tf.parse_filtered_tile(ours), tf.parse_filtered_tile(theirs)
    except tf.FormatError:
        return None
    if [c.original_length for c in a.chunks] != [c.original_length for c in b.chunks]:
        return None
    types = fs.stage_types(filters, base)
    j = js[-1]
    total = 0
    for ca, cb in zip(a.chunks, b.chunks):
        if (ca.metadata, ca.data) == (cb.metadata, cb.data):
            continue
        try:
            sa = rx.stage_streams(filters, base, cell, ca.metadata, ca.data, ca.original_length)
            sb = rx.stage_streams(filters, base, cell, cb.metadata, cb.data, cb.original_length)
        except tf.FormatError:
            return None
        if any(x != y for x, y in zip(sa[:j + 1], sb[:j + 1])):
            return None
        (ma, da), (mb, db) = sa[j + 1], sb[j + 1]
        ranges = rx.indeterminate_ranges(filters[j], types[j], mb, db)
        ma, mb = bytearray(ma), bytearray(mb)
        for s, n in ranges:
            ma[s:s + n] = bytes(n)
            mb[s:s + n] = bytes(n)
        if (bytes(ma), da) != (bytes(mb), db) or not ranges:
            return None
        total += sum(n for _, n in ranges)
    return total or None


PASS_DATA = (fs.NONE, fs.MD5, fs.SHA256)          # forward(data_in) (docs/FORMAT.md §4.6)


def expected_aes_parts(filters, chunk_len: int) -> tuple[int, int]:
    """(metadata parts, data parts) the appended AES stage sees, by the §4.6 model: compression
    filters output [own] + one data part; NONE forwards both lists; checksums add their own block
    and forward the data; other filters add their own block and output one data part. Forwarding
    a single empty data part gives zero parts."""
    n_md, n_data, empty = 0, 1, chunk_len == 0
    for f in filters:
        if f.type in fs.COMPRESSION:
            n_md, n_data, empty = 1, 1, False
        elif f.type == fs.NONE:
            n_data = 0 if empty else n_data
        elif f.type in (fs.MD5, fs.SHA256):
            n_md += 1
            n_data = 0 if empty else n_data
        else:
            n_md, n_data, empty = n_md + 1, 1, False
    return n_md, n_data


def parts_shape(chunks) -> list:
    return [(c.n_md, c.n_data, c.md_lengths, c.data_lengths) for c in chunks]


# ---------------------------------------------------------------------------
# one array
# ---------------------------------------------------------------------------

class EncRun:
    def __init__(self, arr: ec.EncArray, root: str, lib=None, keep: bool = False):
        self.arr = arr
        self.root = root
        self.lib = lib
        self.keep = keep
        self.key = arr.key_bytes
        self.results: list[Result] = []
        self.uri = os.path.join(root, arr.label)
        self.subst = {}      # field name -> {path: bytes} of the library's files
        self.explained = set()  # (stream kind, tile) differing only by indeterminate BWR bytes

    def add(self, row, check, status, detail="", **info):
        self.results.append(Result(self.arr.group, self.arr.label, row, check, status, detail, info))

    # -- driver ------------------------------------------------------------------------------
    def run(self) -> list[Result]:
        arr = self.arr
        try:
            ec.write_array(arr, self.root)
        except Exception as e:
            for fc in arr.fields:
                self.add(fc.row, "P", "fail", f"TileDB-Py could not write the array: {e!r}")
            return self.results
        try:
            self.frag = self._fragment_dir()
            self.schema_path = self._schema_file()
            with open(self.schema_path, "rb") as f:
                g = ar.read_generic_tile(f.read(), self.key)
            self.schema = tf.parse_array_schema(g.payload)
            if arr.encrypted:
                for fc in arr.fields:
                    try:
                        self.check_field(fc)
                    except Exception as e:
                        self.add(fc.row, "P", "fail", f"exception: {e!r}\n{traceback.format_exc(limit=5)}")
                if self.lib is not None:
                    self.check_readback()
            self.check_generic()
        except Exception as e:
            self.add("(array)", "P", "fail", f"exception: {e!r}\n{traceback.format_exc(limit=5)}")
        finally:
            if not self.keep:
                shutil.rmtree(self.uri, ignore_errors=True)
                shutil.rmtree(self.uri + "-ours", ignore_errors=True)
                shutil.rmtree(self.uri + "-generic", ignore_errors=True)
        if arr.notes:
            self.add("(array)", "P", "pass", "; ".join(arr.notes))
        return self.results

    def _fragment_dir(self) -> str:
        d = os.path.join(self.uri, "__fragments")
        frags = os.listdir(d)
        if len(frags) != 1:
            raise RuntimeError(f"expected one fragment, found {frags}")
        return os.path.join(d, frags[0])

    def _schema_file(self) -> str:
        d = os.path.join(self.uri, "__schema")
        files = [f for f in os.listdir(d) if os.path.isfile(os.path.join(d, f))]
        if len(files) != 1:
            raise RuntimeError(f"expected one schema file, found {files}")
        return os.path.join(d, files[0])

    # -- locating a field ---------------------------------------------------------------------
    def streams(self, fc: ec.FieldCase) -> list[Stream]:
        s = self.schema
        if fc.is_dim:
            idx = [d.name for d in s.dimensions].index(fc.name)
            own = s.dimensions[idx].pipeline_bytes
            empty = tf.parse_pipeline(tf.Reader(own)).filters == []
            pbytes = s.coords_pipeline if empty else own
            prefix = f"d{idx}"
        else:
            idx = [a.name for a in s.attributes].index(fc.name)
            pbytes = s.attributes[idx].pipeline_bytes
            prefix = f"a{idx}"
        out = [Stream("data", os.path.join(self.frag, prefix + ("_var.tdb" if fc.var else ".tdb")), fc.filters,
                      fc.datatype, fc.cell_size, pbytes)]
        if fc.var:
            out.append(Stream("offsets", os.path.join(self.frag, prefix + ".tdb"), self.arr.offsets_pipeline,
                              ec.UINT64, 8, s.offsets_pipeline))
        if fc.nullable:
            out.append(Stream("validity", os.path.join(self.frag, prefix + "_validity.tdb"),
                              self.arr.validity_pipeline, ec.UINT8, 1, s.validity_pipeline))
        return out

    @staticmethod
    def want_bytes(st: Stream, tile: ec.TileExp) -> bytes:
        return {"data": tile.data, "offsets": tile.offsets_bytes if tile.offsets is not None else b"",
                "validity": tile.validity}[st.kind]

    # -- per field ----------------------------------------------------------------------------
    def check_field(self, fc: ec.FieldCase):
        streams = self.streams(fc)
        theirs = {}
        problems, notes = Problems(), []
        for st in streams:
            with open(st.path, "rb") as f:
                blob = f.read()
            if st.kind == "offsets" and fc.var_string:
                tiles = [blob[i:i + 8] for i in range(0, len(blob), 8)]
                if blob != bytes(8 * len(fc.tiles)):
                    problems.add(f"{os.path.basename(st.path)}: {blob[:24].hex()}... is not {len(fc.tiles)} "
                                 f"unencrypted 8-byte markers (§5.8, §7.1)")
            else:
                tiles = [blob[o:o + n] for o, n in tf.split_data_file(blob)]
            theirs[st.kind] = tiles
            if len(tiles) != len(fc.tiles):
                problems.add(f"{os.path.basename(st.path)}: {len(tiles)} tiles, expected {len(fc.tiles)}")
        self.check_p(fc, streams, theirs, problems, notes)
        if any("tiles, expected" in p for p in problems) or self.lib is None:
            return
        pipes = {}
        try:
            for st in streams:
                pipes[st.kind] = (self.lib.keyed_pipeline(st.pipeline_bytes, self.key),
                                  self.lib.keyed_pipeline(st.pipeline_bytes, None),
                                  self.lib.keyed_pipeline(st.pipeline_bytes, WRONG_KEY))
            ours = self.encode_all(fc, pipes)
            self.check_d(fc, streams, theirs, pipes)
            self.check_a(fc, streams, theirs, pipes, ours)
            self.check_e(fc, streams, theirs, pipes, ours)
            self.check_n(fc, streams, theirs, pipes, ours)
            self.plan_substitution(fc, streams, theirs, ours)
        finally:
            for trio in pipes.values():
                for p in trio:
                    p.close()

    # P ------------------------------------------------------------------------------------------
    def check_p(self, fc, streams, theirs, problems, notes):
        import refdecode_ext as rx
        s = self.schema
        want = fs.serialize(fc.filters)
        data_st = streams[0]
        if data_st.pipeline_bytes != want:
            problems.add(f"schema pipeline {data_st.pipeline_bytes.hex()} != §3 {want.hex()}")
        for label, have, filt in (("offsets", s.offsets_pipeline, self.arr.offsets_pipeline),
                                  ("validity", s.validity_pipeline, self.arr.validity_pipeline),
                                  ("coords", s.coords_pipeline, self.arr.coords_filters or ec.DEFAULT_COORDS)):
            if have != fs.serialize(filt):
                problems.add(f"schema {label} pipeline {have.hex()} != §3 {fs.serialize(filt).hex()}")
        for pb in [s.coords_pipeline, s.offsets_pipeline, s.validity_pipeline] + \
                [d.pipeline_bytes for d in s.dimensions] + [a.pipeline_bytes for a in s.attributes]:
            if any(f.ftype == ar.AES_FILTER_TYPE for f in tf.parse_pipeline(tf.Reader(pb)).filters):
                problems.add(f"a schema pipeline holds the AES filter: {pb.hex()} (§3.3: never serialized)")
        self.stripped = {}
        for st in streams:
            if st.kind == "offsets" and fc.var_string:
                continue
            ok, why = rx.supports(st.filters)
            if not ok:
                notes.append(f"{st.kind}: reference decode skipped: {why}")
            out = []
            for i, (tile, want_tile) in enumerate(zip(theirs[st.kind], fc.tiles)):
                where = f"{st.kind} tile {i}"
                try:
                    stripped, info = ar.strip_tile(self.key, tile)
                except tf.FormatError as e:
                    problems.add(f"{where}: {e}")
                    out.append(None)
                    continue
                out.append((stripped, info))
                model = [expected_aes_parts(st.filters, c.original_length) for c in info]
                found = [(c.n_md, c.n_data) for c in info]
                if found != model:
                    problems.add(f"{where}: AES (md, data) part counts per chunk {found[:6]}, §4.6 model "
                                 f"{model[:6]}")
                ivs = [p.iv for c in info for p in c.parts]
                if len(set(ivs)) != len(ivs):
                    problems.add(f"{where}: TileDB repeated an IV within the tile")
                got_chunks = [c.original_length for c in info]
                exp_chunks = _expected_chunks(fc, st, want_tile)
                if got_chunks != exp_chunks:
                    problems.add(f"{where}: chunks {got_chunks[:8]}, §4.3/§4.5 predict {exp_chunks[:8]}")
                if not ok:
                    continue
                try:
                    if st.kind == "data" and fc.var_string:
                        body, offs = rx.decode_tile(st.filters, st.base, st.cell, stripped, True)
                        if body != want_tile.data or [int(x) for x in offs] != [int(x) for x in want_tile.offsets]:
                            problems.add(f"{where}: reference decode of the decrypted tile differs")
                    else:
                        body = rx.decode_tile(st.filters, st.base, st.cell, stripped)
                        if body != self.want_bytes(st, want_tile):
                            problems.add(f"{where}: reference decode of the decrypted tile: "
                                         f"{cells_diff(body, self.want_bytes(st, want_tile))}")
                except tf.FormatError as e:
                    problems.add(f"{where}: reference decoder on the decrypted tile: {e}")
            self.stripped[st.kind] = out
        nt = sum(len(v) for v in theirs.values())
        self.add(fc.row, "P", "fail" if problems else "pass", "; ".join(list(problems)[:6] + notes),
                 tiles=nt)

    # encoding with the library ------------------------------------------------------------------
    def encode_all(self, fc, pipes) -> dict:
        """Per tile: the library's keyless and keyed filtering, per stream kind."""
        from tdbfilter_ctypes import TdbError
        out = {"plain": [], "enc": [], "enc2": [], "errors": []}
        dk, d0, _ = pipes["data"]
        for i, t in enumerate(fc.tiles):
            plain, enc, enc2 = {}, {}, {}
            try:
                if fc.var:
                    ok_, o0, _w = pipes["offsets"]
                    plain["offsets"], plain["data"] = d0.filter_var(o0, fc.datatype, t.offsets, t.data)
                    enc["offsets"], enc["data"] = dk.filter_var(ok_, fc.datatype, t.offsets, t.data)
                    enc2["offsets"], enc2["data"] = dk.filter_var(ok_, fc.datatype, t.offsets, t.data)
                else:
                    plain["data"] = d0.filter_bytes(fc.datatype, fc.cell_size, t.data)
                    enc["data"] = dk.filter_bytes(fc.datatype, fc.cell_size, t.data)
                    enc2["data"] = dk.filter_bytes(fc.datatype, fc.cell_size, t.data)
                if fc.nullable:
                    vk, v0, _w = pipes["validity"]
                    plain["validity"] = v0.filter_bytes(ec.UINT8, 1, t.validity)
                    enc["validity"] = vk.filter_bytes(ec.UINT8, 1, t.validity)
                    enc2["validity"] = vk.filter_bytes(ec.UINT8, 1, t.validity)
            except TdbError as e:
                out["errors"].append(f"tile {i}: filtering failed: {e}")
                plain, enc, enc2 = None, None, None
            out["plain"].append(plain)
            out["enc"].append(enc)
            out["enc2"].append(enc2)
        return out

    def _decode(self, fc, st_kind, pipes, tile_bytes, offsets_tile=None, which=0):
        """Decode one tile with the pipeline `which` (0 keyed, 1 keyless, 2 wrong key) and compare
        nothing: returns the decoded bytes (data: (offsets, data) for var)."""
        if st_kind == "data" and fc.var:
            return pipes["data"][which].unfilter_var(pipes["offsets"][which], offsets_tile, tile_bytes, fc.datatype)
        p = pipes[st_kind][which]
        if st_kind == "data":
            return p.unfilter(tile_bytes, fc.datatype, fc.cell_size)
        if st_kind == "offsets":
            return p.unfilter(tile_bytes, ec.UINT64, 8)
        return p.unfilter(tile_bytes, ec.UINT8, 1)

    def _compare(self, fc, st_kind, got, tile: ec.TileExp) -> str:
        if st_kind == "data" and fc.var:
            go, gd = got
            if gd != tile.data:
                return "data " + cells_diff(gd, tile.data)
            if [int(x) for x in go] != [int(x) for x in tile.offsets]:
                return f"offsets differ ({len(go)} vs {len(tile.offsets)} cells)"
            return ""
        want = self.want_bytes(Stream(st_kind, "", (), 0, 0, b""), tile)
        return "" if got == want else cells_diff(got, want)

    def _offsets_tile(self, fc, theirs_or_ours: dict, i: int):
        return theirs_or_ours["offsets"][i] if fc.var else None

    # D ------------------------------------------------------------------------------------------
    def check_d(self, fc, streams, theirs, pipes):
        from tdbfilter_ctypes import TdbError
        problems = []
        for st in streams:
            blob = b"".join(theirs[st.kind])
            if not (st.kind == "offsets" and fc.var_string):
                pos = 0
                for i, t in enumerate(theirs[st.kind]):
                    try:
                        n = self.lib.filtered_tile_size(blob, pos)
                        if n != len(t):
                            problems.append(f"{st.kind} tile {i}: tdb_filtered_tile_size {n}, Python {len(t)}")
                    except TdbError as e:
                        problems.append(f"{st.kind} tile {i}: tdb_filtered_tile_size: {e}")
                    pos += len(t)
            for i, (t, want) in enumerate(zip(theirs[st.kind], fc.tiles)):
                if st.kind == "offsets" and fc.var_string:
                    continue
                try:
                    got = self._decode(fc, st.kind, pipes, t, self._offsets_tile(fc, theirs, i))
                    why = self._compare(fc, st.kind, got, want)
                    if why:
                        problems.append(f"{st.kind} tile {i}: {why}")
                except TdbError as e:
                    problems.append(f"{st.kind} tile {i}: {e}")
        self.add(fc.row, "D", "fail" if problems else "pass", "; ".join(problems[:6]))

    # A ------------------------------------------------------------------------------------------
    def check_a(self, fc, streams, theirs, pipes, ours):
        from tdbfilter_ctypes import TdbError
        problems, notes = [], []
        info = {"identical": 0, "masked_bytes": 0}
        for st in streams:
            if st.kind == "offsets" and fc.var_string:
                continue
            for i, want in enumerate(fc.tiles):
                where = f"{st.kind} tile {i}"
                item = self.stripped.get(st.kind, [None] * len(fc.tiles))[i]
                if item is None:
                    problems.append(f"{where}: TileDB's tile could not be decrypted in Python (see P)")
                    continue
                stripped, their_info = item
                # keyless decode of the decrypted tile
                try:
                    if st.kind == "data" and fc.var:
                        so = None if fc.var_string else self.stripped.get("offsets", [None] * (i + 1))[i]
                        if not fc.var_string and so is None:
                            problems.append(f"{where}: offsets tile not decrypted (see P)")
                            continue
                        off_stripped = bytes(8) if fc.var_string else so[0]
                        got = self._decode(fc, "data", pipes, stripped, off_stripped, which=1)
                    else:
                        got = self._decode(fc, st.kind, pipes, stripped, which=1)
                    why = self._compare(fc, st.kind, got, want)
                    if why:
                        problems.append(f"{where}: keyless decode of the decrypted tile: {why}")
                except (TdbError, TypeError) as e:
                    problems.append(f"{where}: keyless decode of the decrypted tile: {e}")
                plain = ours["plain"][i]
                if plain is None:
                    problems.append(f"{where}: no library encoding to compare")
                    continue
                mine = plain[st.kind]
                if mine == stripped:
                    info["identical"] += 1
                else:
                    masked = masked_equal(st.filters, st.base, st.cell, mine, stripped)
                    if masked:
                        info["masked_bytes"] += masked
                        self.explained.add((st.kind, i))
                        notes.append(f"{where}: differs from the library's unencrypted tile only in {masked} "
                                     f"indeterminate BWR window-offset byte(s) (§8.4)")
                    else:
                        problems.append(f"{where}: decrypted TileDB tile vs library's unencrypted filtering: "
                                        f"{diff_text(mine, stripped)}")
                enc = ours["enc"][i]
                if enc is not None:
                    try:
                        mine_shape = parts_shape(ar.parse_aes_tile(enc[st.kind]))
                        their_shape = parts_shape(their_info)
                        if mine_shape != their_shape and (st.kind, i) not in self.explained:
                            problems.append(f"{where}: AES parts (nmd, nd, md lengths, data lengths) per chunk: "
                                            f"TileDB {their_shape[:3]}, library {mine_shape[:3]}")
                    except tf.FormatError as e:
                        problems.append(f"{where}: library's encrypted tile: {e}")
        status = "fail" if problems else ("differs" if notes else "pass")
        self.add(fc.row, "A", status, "; ".join(problems[:6] + _squash(notes)), **info)

    # E ------------------------------------------------------------------------------------------
    def check_e(self, fc, streams, theirs, pipes, ours):
        from tdbfilter_ctypes import TdbError
        problems = list(ours["errors"])
        notes = []
        for i, want in enumerate(fc.tiles):
            enc, plain = ours["enc"][i], ours["plain"][i]
            if enc is None:
                continue
            for st in streams:
                where = f"{st.kind} tile {i}"
                mine = enc[st.kind]
                if st.kind == "offsets" and fc.var_string:
                    if mine != bytes(8):
                        problems.append(f"{where}: library's offsets tile {mine[:24].hex()} is not the "
                                        f"unencrypted 8-byte marker (§7.1)")
                    continue
                try:
                    stripped, info = ar.strip_tile(self.key, mine)
                except tf.FormatError as e:
                    problems.append(f"{where}: library's encrypted tile: {e}")
                    continue
                if stripped != plain[st.kind]:
                    problems.append(f"{where}: Python-decrypted library tile != library's unencrypted "
                                    f"filtering: {diff_text(stripped, plain[st.kind])}")
                ivs = [p.iv for c in info for p in c.parts]
                if len(set(ivs)) != len(ivs):
                    problems.append(f"{where}: {len(ivs) - len(set(ivs))} repeated IV(s) within the tile")
                if any(len(p.iv) != 12 or len(p.tag) != 16 for c in info for p in c.parts):
                    problems.append(f"{where}: IV/tag sizes")
                t = theirs[st.kind][i] if i < len(theirs[st.kind]) else None
                if t is not None and len(t) != len(mine):
                    if (st.kind, i) in self.explained:
                        notes.append(f"{where}: size {len(mine)} vs TileDB {len(t)} (indeterminate BWR bytes "
                                     f"compress differently)")
                    else:
                        problems.append(f"{where}: size {len(mine)}, TileDB's tile {len(t)}")
            # the library decodes its own encrypted tiles
            try:
                for st in streams:
                    if st.kind == "offsets" and fc.var_string:
                        continue
                    got = self._decode(fc, st.kind, pipes, enc[st.kind], enc.get("offsets"))
                    why = self._compare(fc, st.kind, got, want)
                    if why:
                        problems.append(f"{st.kind} tile {i}: library decode of its encrypted tile: {why}")
            except TdbError as e:
                problems.append(f"tile {i}: library decode of its encrypted tile: {e}")
        status = "fail" if problems else ("differs" if notes else "pass")
        self.add(fc.row, "E", status, "; ".join(problems[:6] + _squash(notes)))

    # N ------------------------------------------------------------------------------------------
    def check_n(self, fc, streams, theirs, pipes, ours):
        problems = []
        key_texts = [self.key, self.key.hex().encode()] if self.key else []
        for st in streams:
            if st.kind == "offsets" and fc.var_string:
                continue
            # the tile with the most chunks, TileDB's and ours
            idx = max(range(len(fc.tiles)), key=lambda k: len(ar.parse_aes_tile(theirs[st.kind][k])))
            sources = [("TileDB", theirs[st.kind][idx], (lambda: theirs["offsets"][idx]) if fc.var else None)]
            enc = ours["enc"][idx]
            if enc is not None:
                sources.append(("library", enc[st.kind], (lambda: enc["offsets"]) if fc.var else None))
            for who, tile, offs_fn in sources:
                problems += self.tamper(fc, st, pipes, tile, offs_fn() if offs_fn else None, idx, who, key_texts)
            enc2 = ours["enc2"][idx]
            if enc is not None and enc2 is not None:
                a, b = enc[st.kind], enc2[st.kind]
                if a == b:
                    problems.append(f"{st.kind} tile {idx}: two encryptions are identical (IVs not fresh)")
                elif len(a) != len(b):
                    problems.append(f"{st.kind} tile {idx}: two encryptions differ in size ({len(a)}, {len(b)})")
                else:
                    ia = [p.iv for c in ar.parse_aes_tile(a) for p in c.parts]
                    ib = [p.iv for c in ar.parse_aes_tile(b) for p in c.parts]
                    if set(ia) & set(ib):
                        problems.append(f"{st.kind} tile {idx}: an IV repeats across two encryptions")
        self.add(fc.row, "N", "fail" if problems else "pass", "; ".join(problems[:6]))

    def tamper(self, fc, st, pipes, tile: bytes, offs_tile, idx, who, key_texts) -> list[str]:
        """Wrong key, no key and flipped bytes on one encrypted tile (and, for var data, on its
        offsets tile)."""
        from tdbfilter_ctypes import TdbError
        out = []
        chunks = ar.parse_aes_tile(tile)
        c = len(chunks) - 1
        ch = chunks[c]
        base = ch.header_offset + 12

        def run(label, data, which=0, offs=offs_tile, expect=TDB_ERR_DECRYPTION_FAILED, chunk=c):
            where = f"{who} {st.kind} tile {idx} {label}"
            try:
                got = self._decode(fc, st.kind, pipes, data, offs, which=which)
            except TdbError as e:
                if expect is not None and e.status != expect:
                    out.append(f"{where}: status {e.status} ({e.message[:120]}), expected {expect}")
                elif expect is not None and not (re.search(r"\bchunk %s\b" % (chunk if chunk is not None else r"\d+"),
                                                          e.message) and re.search(r"\bpart \d+", e.message)):
                    out.append(f"{where}: message does not name the chunk ({chunk if chunk is not None else 'any'}) "
                               f"and the part: {e.message[:160]!r}")
                msg = e.message.encode()
                if any(k and k in msg for k in key_texts):
                    out.append(f"{where}: the key appears in the error message")
                return
            what = "the written cells" if not self._compare(fc, st.kind, got, fc.tiles[idx]) else "other bytes"
            out.append(f"{where}: decoded without an error, to {what}" +
                       (" (chunk metadata holding the AES block was ignored)" if which == 1 else ""))

        run("with a wrong key", tile, which=2, chunk=None)
        run("without a key", tile, which=1, expect=None)
        # a ciphertext byte of the last non-empty part of the last chunk
        data_at = base + ar.AES_MD_HEADER + ar.AES_PART_MD * len(ch.parts)
        lens = [p.cipher_len for p in ch.parts]
        nz = [k for k, n in enumerate(lens) if n]
        if nz:
            k = nz[-1]
            pos = data_at + sum(lens[:k]) + lens[k] // 2
            run(f"with chunk {c} part {k} ciphertext byte flipped", flip(tile, pos))
        if ch.parts:
            entry = base + ch.parts[0].md_offset
            run(f"with chunk {c} part 0 IV byte flipped", flip(tile, entry + 8 + 5))
            run(f"with chunk {c} part 0 tag byte flipped", flip(tile, entry + 8 + 12 + 15))
        if st.kind == "data" and fc.var and not fc.var_string and offs_tile is not None:
            # a damaged offsets tile must fail the var decode too
            oc = ar.parse_aes_tile(offs_tile)
            if oc and oc[0].parts:
                e0 = oc[0].header_offset + 12 + oc[0].parts[0].md_offset
                run("with its offsets tile's tag flipped", tile, offs=flip(offs_tile, e0 + 8 + 12), chunk=0)
        return out

    # R ------------------------------------------------------------------------------------------
    def plan_substitution(self, fc, streams, theirs, ours):
        files, notes = {}, []
        for st in streams:
            parts = []
            for i, t in enumerate(theirs[st.kind]):
                enc = ours["enc"][i]
                mine = enc[st.kind] if enc is not None else None
                if mine is not None and len(mine) == len(t):
                    parts.append(mine)
                else:
                    parts.append(t)
                    notes.append(f"{st.kind} tile {i} kept TileDB's (library tile "
                                 f"{'missing' if mine is None else f'{len(mine)} bytes vs {len(t)}'})")
            files[st.path] = b"".join(parts)
        self.subst[fc.name] = (files, notes)

    def check_readback(self):
        fields = [fc for fc in self.arr.fields if fc.name in self.subst]
        if not fields:
            return
        copy = self.uri + "-ours"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(self.uri, copy)
        for fc in fields:
            for path, blob in self.subst[fc.name][0].items():
                _write_over(os.path.join(copy, os.path.relpath(path, self.uri)), blob)
        ok, got = read_isolated(copy, self.arr, [fc.name for fc in fields])
        per_field = {}
        if ok:
            for fc in fields:
                per_field[fc.name] = compare_readback(fc, got.get(fc.name))
        else:
            # find the culprits one field at a time
            for fc in fields:
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(self.uri, copy)
                for path, blob in self.subst[fc.name][0].items():
                    _write_over(os.path.join(copy, os.path.relpath(path, self.uri)), blob)
                ok1, got1 = read_isolated(copy, self.arr, [fc.name])
                per_field[fc.name] = compare_readback(fc, got1.get(fc.name)) if ok1 else \
                    f"TileDB-Py fails reading with the library's tiles: {got1}"
        shutil.rmtree(copy, ignore_errors=True)
        for fc in fields:
            why = per_field.get(fc.name, "")
            notes = self.subst[fc.name][1]
            self.add(fc.row, "R", "fail" if why else ("differs" if notes else "pass"),
                     "; ".join(([why] if why else []) + _squash(notes)))

    # generic tiles ------------------------------------------------------------------------------
    def generic_files(self) -> list[tuple[str, str]]:
        out = [("__schema", self.schema_path),
               ("__fragment_metadata", os.path.join(self.frag, "__fragment_metadata.tdb"))]
        md = os.path.join(self.uri, "__meta")
        if os.path.isdir(md):
            for f in sorted(os.listdir(md)):
                p = os.path.join(md, f)
                if os.path.isfile(p) and not f.endswith(".vac"):
                    out.append(("__meta", p))
        return out

    def check_generic(self):
        self.generic_counts = [0, 0]   # generic tiles substituted, kept (library's size differs)
        rows = {}
        for kind, path in self.generic_files():
            rows.setdefault(kind, []).append(path)
        replaced = {}
        for kind, paths in rows.items():
            row = f"generic: {kind}" + (" (unencrypted)" if not self.arr.encrypted else "")
            res = {c: Problems() for c in "PDEN"}
            notes = []
            ntiles = 0
            for path in paths:
                with open(path, "rb") as f:
                    blob = f.read()
                name = os.path.basename(path)
                try:
                    tiles, end = ar.walk_generic_tiles(blob, self.key)
                except tf.FormatError as e:
                    res["P"].add(f"{name}: Python reader: {e}")
                    continue
                ntiles += len(tiles)
                if kind == "__fragment_metadata":
                    why = ar.check_footer_start(blob, end, os.path.basename(self.schema_path))
                    if why:
                        res["P"].add(f"{name}: {why}")
                    notes.append(f"{len(tiles)} generic tiles + {len(blob) - end}-byte footer")
                elif end != len(blob) or len(tiles) != 1:
                    res["P"].add(f"{name}: {len(tiles)} generic tile(s) covering {end} of {len(blob)} bytes")
                for g in tiles:
                    for a in g.anomalies:
                        res["P"].add(f"{name}@{g.offset}: {a}")
                    if not self.arr.encrypted:
                        # the Python model of §6 writes TileDB's exact bytes
                        py = ar.write_generic_tile(g.payload)
                        if py != blob[g.offset:g.offset + g.size]:
                            res["P"].add(f"{name}@{g.offset}: aes_ref.write_generic_tile != TileDB's bytes: "
                                         f"{generic_diff(py, blob[g.offset:g.offset + g.size])}")
                    if g.encryption_type != (1 if self.arr.encrypted else 0):
                        res["P"].add(f"{name}@{g.offset}: encryption type {g.encryption_type}")
                if kind == "__schema" and tiles:
                    try:
                        tf.parse_array_schema(tiles[0].payload)
                    except tf.FormatError as e:
                        res["P"].add(f"{name}: schema payload does not parse: {e}")
                if self.lib is None or not self.lib.has_generic_api:
                    continue
                new_blob = bytearray(blob)
                for g in tiles:
                    ours = self.generic_one(name, blob, g, res)
                    if ours is not None and len(ours) == g.size:
                        new_blob[g.offset:g.offset + g.size] = ours
                        self.generic_counts[0] += 1
                    else:
                        self.generic_counts[1] += 1
                replaced[path] = bytes(new_blob)
            self.add(row, "P", "fail" if res["P"] else "pass", "; ".join(list(res["P"])[:6] + _squash(notes)),
                     tiles=ntiles)
            for c in "DEN":
                if self.lib is None:
                    continue
                if not self.lib.has_generic_api:
                    # The generic tile API is part of the library: its absence is a failure of
                    # these checks, never a skip.
                    self.add(row, c, "fail", "library lacks " + ", ".join(self.lib.generic_missing))
                    continue
                self.add(row, c, "fail" if res[c] else "pass", "; ".join(list(res[c])[:6]))
        if self.lib is not None and self.lib.has_generic_api and replaced:
            self.generic_readback(replaced)

    def generic_one(self, name, blob, g: ar.GenericTileRef, res):
        """D, E, N of one generic tile; returns the library's write of its payload."""
        from tdbfilter_ctypes import TdbError
        where = f"{name}@{g.offset}"
        lib = self.lib
        try:
            payload, used = lib.generic_tile_read(blob, self.key, g.offset)
            if payload != g.payload:
                res["D"].add(f"{where}: payload {cells_diff(payload, g.payload)}")
            if used != g.size:
                res["D"].add(f"{where}: consumed {used}, generic tile is {g.size} bytes")
        except TdbError as e:
            res["D"].add(f"{where}: {e}")
        if self.key is not None:
            # a generic tile encrypted by the Python model (not by TileDB, not by the library)
            try:
                py = ar.write_generic_tile(g.payload, self.key)
                back, used = lib.generic_tile_read(py, self.key)
                if back != g.payload or used != len(py):
                    res["D"].add(f"{where}: Python-encrypted copy reads back wrong ({len(back)} bytes, {used})")
            except TdbError as e:
                res["D"].add(f"{where}: Python-encrypted copy: {e}")
        extras = getattr(lib, "generic_extras", [])
        if "tdb_generic_tile_header" in extras:
            try:
                h = lib.generic_tile_header(blob, g.offset)
                want = {"version": g.version, "persisted_size": g.persisted_size, "tile_size": g.tile_size,
                        "datatype": g.datatype, "cell_size": g.cell_size, "encryption_type": g.encryption_type,
                        "filter_pipeline_size": len(g.pipeline_bytes),
                        "header_size": ar.GENERIC_HEADER_SIZE + len(g.pipeline_bytes), "total_size": g.size}
                bad = {k: (h[k], v) for k, v in want.items() if h[k] != v}
                if bad:
                    res["D"].add(f"{where}: tdb_generic_tile_header (library, Python): {bad}")
            except TdbError as e:
                res["D"].add(f"{where}: tdb_generic_tile_header: {e}")
        if "tdb_generic_tile_pipeline" in extras:
            try:
                with lib.generic_tile_pipeline(blob, g.offset) as hp:
                    if hp.serialize() != g.pipeline_bytes:
                        res["D"].add(f"{where}: tdb_generic_tile_pipeline serializes to {hp.serialize().hex()}, "
                                     f"header holds {g.pipeline_bytes.hex()}")
            except TdbError as e:
                res["D"].add(f"{where}: tdb_generic_tile_pipeline: {e}")
        # Write the payload: through TileDB's default generic pipeline (+ key), and through the
        # pipeline read from TileDB's header (+ key).
        routes = []
        try:
            if "tdb_generic_tile_default_pipeline" in extras:
                with lib.generic_default_pipeline() as dp:
                    if dp.serialize() != ar.GENERIC_PIPELINE_PLAIN:
                        res["E"].add(f"{where}: tdb_generic_tile_default_pipeline serializes to "
                                     f"{dp.serialize().hex()}")
                routes.append(("default pipeline", lambda: lib.generic_default_pipeline(self.key)))
            else:
                routes.append(("[GZIP(1)] pipeline", lambda: lib.keyed_pipeline(ar.GENERIC_PIPELINE_PLAIN, self.key)))
            if "tdb_generic_tile_pipeline" in extras:
                def header_route():
                    hp = lib.generic_tile_pipeline(blob, g.offset)
                    if self.key is not None:
                        lib.set_key(hp, self.key)
                    return hp
                routes.append(("header's pipeline", header_route))
        except TdbError as e:
            res["E"].add(f"{where}: {e}")
        ours = None
        for label, make in routes:
            try:
                with make() as p:
                    w1 = lib.generic_tile_write(p, g.payload)
                    w2 = lib.generic_tile_write(p, g.payload)
            except TdbError as e:
                res["E"].add(f"{where}: tdb_generic_tile_write with the {label}: {e}")
                continue
            self.check_generic_write(f"{where} ({label})", g, blob, w1, w2, res)
            if ours is None:
                ours = w1
        # negative
        tile = blob[g.offset:g.offset + g.size]
        if self.arr.encrypted:
            hdr = ar.GENERIC_HEADER_SIZE + len(g.pipeline_bytes)
            ch = g.aes[-1] if g.aes else None
            cases = [("wrong key", tile, WRONG_KEY, TDB_ERR_DECRYPTION_FAILED),
                     ("no key", tile, None, TDB_ERR_DECRYPTION_FAILED),
                     ("a 31-byte key", tile, self.key[:31], TDB_ERR_INVALID_ARGUMENT)]
            if ch is not None:
                first = hdr + ch.header_offset + 12
                data_at = first + ar.AES_MD_HEADER + ar.AES_PART_MD * len(ch.parts)
                cases.append(("flipped ciphertext", flip(tile, data_at + sum(p.cipher_len for p in ch.parts) - 1),
                              self.key, TDB_ERR_DECRYPTION_FAILED))
                cases.append(("flipped tag", flip(tile, first + ch.parts[0].md_offset + 8 + 12),
                              self.key, TDB_ERR_DECRYPTION_FAILED))
        else:
            cases = [("a key given for an unencrypted tile (§6 step 2)", tile, b"K" * 32, TDB_ERR_INVALID_ARGUMENT)]
        cases.append(("truncated by one byte", tile[:-1], self.key, TDB_ERR_CORRUPT_DATA))
        for label, data, key, expect in cases:
            try:
                lib.generic_tile_read(data, key)
                res["N"].add(f"{where}: {label}: read without an error")
            except TdbError as e:
                if expect != "any" and e.status != expect:
                    res["N"].add(f"{where}: {label}: status {e.status} ({e.message[:100]}), expected {expect}")
                if self.key and (self.key in e.message.encode()):
                    res["N"].add(f"{where}: {label}: the key appears in the error message")
        return ours

    def check_generic_write(self, where, g: ar.GenericTileRef, blob: bytes, ours: bytes, again: bytes, res):
        from tdbfilter_ctypes import TdbError
        lib = self.lib
        theirs = blob[g.offset:g.offset + g.size]
        if not self.arr.encrypted:
            if ours != theirs:
                res["E"].add(f"{where}: library's generic tile != TileDB's: {generic_diff(ours, theirs)}")
            if again != ours:
                res["E"].add(f"{where}: two unencrypted writes differ")
            return
        try:
            mg = ar.read_generic_tile(ours, self.key)
            if mg.payload != g.payload:
                res["E"].add(f"{where}: library's generic tile decrypts/decodes in Python to other bytes")
            for fld in ("version", "persisted_size", "tile_size", "datatype", "cell_size", "encryption_type",
                        "pipeline_bytes", "size", "chunk_lengths"):
                if getattr(mg, fld) != getattr(g, fld):
                    res["E"].add(f"{where}: {fld} {getattr(mg, fld)!r} vs TileDB {getattr(g, fld)!r}")
            if mg.size != len(ours):
                res["E"].add(f"{where}: {len(ours) - mg.size} bytes after the library's generic tile")
            if parts_shape(mg.aes) != parts_shape(g.aes):
                res["E"].add(f"{where}: AES parts {parts_shape(mg.aes)[:3]} vs TileDB {parts_shape(g.aes)[:3]}")
            mine_stage = [(c.md_parts, c.data_parts) for c in mg.aes]
            their_stage = [(c.md_parts, c.data_parts) for c in g.aes]
            if mine_stage != their_stage:
                res["E"].add(f"{where}: the decrypted GZIP stage differs from TileDB's")
            if again == ours:
                res["N"].add(f"{where}: two encrypted writes are identical (IVs not fresh)")
            elif len(again) != len(ours):
                res["N"].add(f"{where}: two encrypted writes differ in size")
            ivs = [p.iv for c in mg.aes for p in c.parts]
            if len(set(ivs)) != len(ivs):
                res["N"].add(f"{where}: repeated IVs in the library's generic tile")
        except tf.FormatError as e:
            res["E"].add(f"{where}: library's generic tile in the Python reader: {e}")
        try:
            back, used = lib.generic_tile_read(ours, self.key)
            if back != g.payload or used != len(ours):
                res["E"].add(f"{where}: library's generic tile reads back wrong ({len(back)} bytes, {used})")
        except TdbError as e:
            res["E"].add(f"{where}: library cannot read its own generic tile: {e}")

    def generic_readback(self, replaced: dict):
        copy = self.uri + "-generic"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(self.uri, copy)
        for path, blob in replaced.items():
            _write_over(os.path.join(copy, os.path.relpath(path, self.uri)), blob)
        names = [fc.name for fc in self.arr.fields]
        ok, got = read_isolated(copy, self.arr, names, meta=True)
        problems = []
        if not ok:
            problems.append(f"TileDB-Py fails with the library's generic tiles: {got}")
        else:
            for fc in self.arr.fields:
                why = compare_readback(fc, got.get(fc.name))
                if why:
                    problems.append(f"{fc.name}: {why}")
            meta = got.get("__meta__", {})
            for k, v in self.arr.meta.items():
                have = meta.get(k)
                if (bytes(have) if isinstance(have, (bytes, bytearray)) else have) != v:
                    problems.append(f"metadata {k!r}: read back {str(have)[:40]!r}")
        shutil.rmtree(copy, ignore_errors=True)
        row = "generic: all replaced" + (" (unencrypted)" if not self.arr.encrypted else "")
        done, kept = self.generic_counts
        note = [f"{kept} generic tile(s) kept TileDB's: the library's write has another size"] if kept else []
        self.add(row, "R", "fail" if problems else ("differs" if kept else "pass"), "; ".join(problems[:6] + note),
                 files=len(replaced), substituted=done, kept=kept)


def generic_diff(ours: bytes, theirs: bytes) -> str:
    off = first_diff(ours, theirs)
    fields = [(0, "version"), (4, "persisted_size"), (12, "tile_size"), (20, "datatype"), (21, "cell_size"),
              (29, "encryption_type"), (30, "filter_pipeline_size")]
    if off < ar.GENERIC_HEADER_SIZE:
        where = "header " + [n for o, n in fields if o <= off][-1]
    else:
        fps = struct.unpack_from("<I", theirs, 30)[0] if len(theirs) >= 34 else 0
        if off < ar.GENERIC_HEADER_SIZE + fps:
            where = "header pipeline"
        else:
            t = theirs[ar.GENERIC_HEADER_SIZE + fps:]
            where = "filtered tile: " + tf.describe_offset(t, off - ar.GENERIC_HEADER_SIZE - fps)
    return (f"sizes {len(ours)} / {len(theirs)}, first difference at byte {off} [{where}]: "
            f"{ours[off:off + 8].hex()} vs {theirs[off:off + 8].hex()}")


def flip(data: bytes, pos: int) -> bytes:
    b = bytearray(data)
    b[pos] ^= 0x01
    return bytes(b)


def _write_over(path: str, blob: bytes):
    with open(path, "rb") as f:
        old = f.read()
    if len(old) != len(blob):
        raise RuntimeError(f"{path}: replacement is {len(blob)} bytes, file has {len(old)}")
    with open(path, "wb") as f:
        f.write(blob)


def _squash(notes: list[str], limit: int = 4) -> list[str]:
    if len(notes) <= limit:
        return notes
    return notes[:limit] + [f"... and {len(notes) - limit} more"]


# ---------------------------------------------------------------------------
# TileDB-Py read-back (child process: a crash must not take the harness down)
# ---------------------------------------------------------------------------

def _cell_bytes(v) -> bytes:
    if v is None or v is np.ma.masked:
        return b""
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    return np.ascontiguousarray(v).tobytes()


def _read_child(uri, key, sparse, names, meta, out_path):
    import tiledb
    ctx = ec.tiledb_ctx(key)
    res = {}
    with tiledb.open(uri, "r", ctx=ctx) as A:
        schema = A.schema
        dims = {schema.domain.dim(i).name for i in range(schema.domain.ndim)}
        attrs = [n for n in names if n not in dims]
        dnames = [n for n in names if n in dims]
        if sparse:
            q = A.query(attrs=attrs, dims=dnames, order="G")[:]
        else:
            q = A.query(attrs=attrs)[:] if attrs else {}
        for n in names:
            v = q[n]
            mask = None
            if isinstance(v, np.ma.MaskedArray):
                mask = np.ma.getmaskarray(v).copy()
                raw = v.data
            else:
                raw = v
            if raw.dtype == object:
                cells = [_cell_bytes(x) for x in raw]
                res[n] = ("var", cells, mask)
            else:
                res[n] = ("fixed", np.ascontiguousarray(raw).tobytes(), mask)
        if meta:
            res["__meta__"] = {k: A.meta[k] for k in A.meta.keys()}
    with open(out_path, "wb") as f:
        pickle.dump(res, f)


def read_isolated(uri: str, arr: ec.EncArray, names: list[str], meta: bool = False, timeout: float = 180):
    """(True, {name: (kind, cells, mask)}) or (False, why)."""
    out = uri.rstrip("/") + ".readback.pickle"
    env = dict(os.environ)
    here = os.path.dirname(os.path.abspath(__file__))
    env["PYTHONPATH"] = here + os.pathsep + env.get("PYTHONPATH", "")
    args = [sys.executable, os.path.abspath(__file__), "read", uri, arr.key or "", "1" if arr.sparse else "0",
            "1" if meta else "0", out] + names
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return False, f"TileDB-Py did not finish reading within {timeout} s"
    if p.returncode != 0:
        if p.returncode < 0:
            return False, f"TileDB-Py crashed (signal {-p.returncode})"
        lines = [ln for ln in (p.stderr or "").splitlines() if ln.strip()]
        return False, lines[-1] if lines else f"exit status {p.returncode}"
    with open(out, "rb") as f:
        got = pickle.load(f)
    os.unlink(out)
    return True, got


def compare_readback(fc: ec.FieldCase, got) -> str:
    if got is None:
        return "not read back"
    kind, cells, mask = got
    if fc.nullable:
        want_mask = ~np.asarray(fc.valid, dtype=bool)
        if mask is None or mask.shape != want_mask.shape or (mask != want_mask).any():
            return "validity read back differs"
    if fc.var:
        want = list(fc.values)
        if kind != "var":
            return f"read back as {kind}"
        if fc.nullable:
            want = [w if ok else b"" for w, ok in zip(want, fc.valid)]
            cells = [c if ok else b"" for c, ok in zip(cells, fc.valid)]
        if len(cells) != len(want):
            return f"{len(cells)} cells read back, {len(want)} written"
        bad = [i for i, (a, b) in enumerate(zip(cells, want)) if a != b]
        return f"{len(bad)} cells differ (first: cell {bad[0]})" if bad else ""
    want = np.ascontiguousarray(fc.values).tobytes()
    if kind != "fixed":
        return f"read back as {kind}"
    if cells != want:
        return "cells differ: " + cells_diff(cells, want)
    return ""


def run_job(job) -> list[dict]:
    """Pool entry: job = {"kind", "args", "lib", "root", "keep"}."""
    try:
        arr = ec.build(job["kind"], job["args"])
    except Exception as e:
        return [Result(job["kind"], str(job["args"]), "(recipe)", "P", "fail",
                       f"building the recipe failed: {e!r}\n{traceback.format_exc(limit=4)}").to_dict()]
    lib = None
    if job.get("lib"):
        from crypto_ctypes import CryptoLibrary
        lib = CryptoLibrary(job["lib"])
    run = EncRun(arr, job["root"], lib, job.get("keep", False))
    return [r.to_dict() for r in run.run()]


def _main(argv):
    if argv and argv[0] == "read":
        uri, key, sparse, meta, out = argv[1:6]
        _read_child(uri, key or None, sparse == "1", argv[6:], meta == "1", out)
        return 0
    raise SystemExit("usage: encryption_checks.py read URI KEY SPARSE META OUT NAMES...")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(_main(sys.argv[1:]))
