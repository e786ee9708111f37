"""Checks of one attribute or dimension of an array written by TileDB (extended suites).

Works for fixed-size, var-size and nullable attributes and for dimensions of
sparse arrays; the check letters extend checks.py's:

* ``P`` harness vs docs/FORMAT.md: schema pipeline bytes (field, offsets,
  validity, coords) equal the §3 serialization; tile counts; chunk sizes
  follow §4.3 / §4.4 / §4.5; skipped offsets tiles are the 8-byte marker;
  refdecode_ext.py (no library) decodes every TileDB tile (data, offsets,
  validity) to what was written; TileDB defects the suite predicted are
  confirmed (TileDB fails or crashes writing, or cannot read its own tile).
* ``D`` the library decodes TileDB's tiles: tdb_filtered_tile_size walks
  every file; fixed data through tdb_pipeline_unfilter, var data through
  tdb_pipeline_unfilter_var (offsets and data), offsets tiles also as UINT64
  fixed tiles through the offsets pipeline, validity tiles as UINT8 tiles.
  Lossy fields (SCALE_FLOAT, lossy WebP) are compared with what TileDB-Py reads.
* ``E`` the library's filter output equals TileDB's tiles byte for byte
  (data, offsets, validity). BIT_WIDTH_REDUCTION / POSITIVE_DELTA window
  offsets that TileDB leaves uninitialized (§8.4) are masked and counted.
  ``e`` (passes): bytes differ for a documented reason (TileDB defect on
  this tile, WebP encoder version, masked bytes under a later filter) and
  the library's tile was validated: it decodes to the cells with the library
  and with refdecode_ext, and same-size tiles go to ``R``.
* ``S`` every pipeline of the field deserializes and re-serializes
  unchanged, and building it with add_filter/set_option gives the same bytes.
* ``R`` same-size library tiles written over TileDB's read back through
  TileDB-Py as the written cells.
"""

from __future__ import annotations

import os
import shutil
import traceback
from dataclasses import replace

import numpy as np

import arrayspec as asp
import filterspec as fs
import refdecode_ext as rx
import tiledb_format as tf
from checks import Result, _cells_diff, diff_text

FORMAT_VERSION = 22
# TileDB write errors docs/FORMAT.md documents as TileDB defects or input limits (§5.3, §8.3).
KNOWN_WRITE_FAILURES = ("Cannot compress with GZIP", "Cannot compress with DoubleDelta", "delta exceeds range",
                        "delta is not positive",
                        "Dictionary encoding only applies")
DEFAULT_OFFSETS = (fs.F(fs.ZSTD),)
DEFAULT_VALIDITY = (fs.F(fs.RLE),)
DEFAULT_COORDS = (fs.F(fs.ZSTD),)


def fragment_dir(uri: str) -> str:
    frags = os.listdir(os.path.join(uri, "__fragments"))
    if len(frags) != 1:
        raise RuntimeError(f"{uri}: expected one fragment, found {frags}")
    return os.path.join(uri, "__fragments", frags[0])


def schema_file(uri: str) -> str:
    d = os.path.join(uri, "__schema")
    files = [f for f in os.listdir(d) if os.path.isfile(os.path.join(d, f))]
    if len(files) != 1:
        raise RuntimeError(f"{uri}: expected one schema file, found {files}")
    return os.path.join(d, files[0])


def _offsets_bytes(tile: asp.TileExpect) -> bytes:
    return np.asarray(tile.offsets, dtype="<u8").tobytes()


class ArrayRun:
    """Writes one ArraySpec with TileDB-Py and checks its fields."""

    def __init__(self, spec: asp.ArraySpec, fields: list, root: str, lib=None, keep: bool = False):
        self.spec = spec
        self.fields = fields
        self.root = root
        self.lib = lib
        self.keep = keep
        self.results: list[Result] = []
        self.substitutions = []  # (path, offset, bytes, field, what)
        self.uri = spec.uri(root)

    def add(self, fx, check, status, detail="", **info):
        info["suite"] = self.spec.suite
        self.results.append(Result(fx.row, fx.col, fx.shape, fx.tiles_label, check, status, detail, info))

    # -- driver -----------------------------------------------------------------
    def run(self) -> list[Result]:
        spec = self.spec
        unwritable = [fx for fx in self.fields if fx.unwritable]
        writable = [fx for fx in self.fields if not fx.unwritable]
        drop = {fx.name for fx in unwritable}
        main = replace(spec, attrs=[a for a in spec.attrs if a.name not in drop],
                       data={k: v for k, v in spec.data.items() if k not in drop})
        try:
            for fx in unwritable:
                self.check_unwritable(fx)
            if not writable:
                return self.results
            if main.isolate:
                ok, what = asp.write_isolated(main, self.root)
                if not ok:
                    raise RuntimeError(what)
            else:
                try:
                    asp.create_and_write(main, self.root)
                except Exception as e:
                    # A documented TileDB write failure the suite did not predict (for example the
                    # GZIP capacity defect after a transform, docs/FORMAT.md §5.3): find the fields that
                    # fail alone, check those as unwritable, write the others.
                    if not any(m in str(e) for m in KNOWN_WRITE_FAILURES):
                        raise
                    shutil.rmtree(self.uri, ignore_errors=True)
                    failing = []
                    for fx in writable:
                        ok, what = self.write_alone(fx, isolate=False)
                        if not ok:
                            fx.unwritable = f"observed, not predicted: {what}"
                            failing.append(fx)
                    if not failing:
                        raise
                    for fx in failing:
                        self.check_unwritable(fx, (False, fx.unwritable))
                    writable = [fx for fx in writable if fx not in failing]
                    drop |= {fx.name for fx in failing}
                    main = replace(main, attrs=[a for a in main.attrs if a.name not in drop],
                                   data={k: v for k, v in main.data.items() if k not in drop})
                    asp.create_and_write(main, self.root)
            self.check_written(writable)
        except Exception as e:
            for fx in writable:
                self.add(fx, "P", "fail", f"writing the array failed: {e!r}")
        finally:
            if not self.keep:
                shutil.rmtree(self.uri, ignore_errors=True)
        return self.results

    def check_written(self, fields):
        gt, schema = tf.read_schema_file(schema_file(self.uri))
        self.schema = schema
        frag = fragment_dir(self.uri)
        lossy = [fx for fx in fields if fx.lossy]
        for fx in lossy:
            try:
                fx.decoded_tiles = fx.tiling(self.read_values(fx))
            except Exception as e:
                fx.decoded_tiles = None
                fx.notes.append(f"TileDB-Py could not read the lossy field back: {e!r}")
        for fx in fields:
            try:
                self.check_field(fx, frag)
            except Exception as e:
                self.add(fx, "P", "fail", f"exception: {e!r}\n{traceback.format_exc(limit=4)}")
        if self.lib is not None:
            self.read_back_substitutions(fields)

    def read_values(self, fx):
        if fx.is_dim:
            return asp.read_dimension(self.uri, fx.name)
        return asp.read_attribute(self.uri, fx.name, self.spec.sparse)

    # -- one field --------------------------------------------------------------
    def locate(self, fx):
        s = self.schema
        if fx.is_dim:
            for i, d in enumerate(s.dimensions):
                if d.name == fx.name:
                    return i, d.datatype, d.cell_val_num, False, d.pipeline_bytes
        else:
            for a in s.attributes:
                if a.name == fx.name:
                    return a.index, a.datatype, a.cell_val_num, a.nullable, a.pipeline_bytes
        raise RuntimeError(f"{fx.name} not in the schema")

    def check_field(self, fx, frag):
        idx, dtype, cvn, nullable, own_bytes = self.locate(fx)
        prefix = ("d" if fx.is_dim else "a") + str(idx)
        s = self.schema
        own_empty = tf.parse_pipeline(tf.Reader(own_bytes)).filters == []
        inherits = fx.is_dim and own_empty
        eff_bytes = s.coords_pipeline if inherits else own_bytes
        filters = rx.to_filters(tf.parse_pipeline(tf.Reader(eff_bytes)))
        var_string = fx.var and rx.has_var_string_path(filters, fx.datatype)
        ctx = dict(prefix=prefix, filters=filters, var_string=var_string, eff_bytes=eff_bytes,
                   inherits=inherits)

        # Files and tiles.
        files = {"data": os.path.join(frag, prefix + ("_var.tdb" if fx.var else ".tdb"))}
        if fx.var:
            files["offsets"] = os.path.join(frag, prefix + ".tdb")
        if fx.nullable:
            files["validity"] = os.path.join(frag, prefix + "_validity.tdb")
        blobs, splits = {}, {}
        for k, p in files.items():
            with open(p, "rb") as f:
                blobs[k] = f.read()
            splits[k] = tf.split_data_file(blobs[k])
        ctx.update(files=files, blobs=blobs, splits=splits)

        # P --------------------------------------------------------------------
        problems, notes = [], list(fx.notes)
        if dtype != fx.datatype or cvn != (asp.VAR if fx.var else fx.cell_val_num) or nullable != fx.nullable:
            problems.append(f"schema says datatype {dtype} x{cvn} nullable {nullable}")
        want_own = fs.serialize(fx.filters, webp_extents=fx.webp_extents)
        if own_bytes != want_own:
            problems.append(f"schema pipeline {own_bytes.hex()} != §3 serialization {want_own.hex()}")
        for label, have, want in self.schema_pipelines(fx):
            if have != fs.serialize(want):
                problems.append(f"schema {label} pipeline {have.hex()} != §3 {fs.serialize(want).hex()}")
        for k, sp in splits.items():
            if len(sp) != len(fx.tiles):
                problems.append(f"{os.path.basename(files[k])}: {len(sp)} tiles, expected {len(fx.tiles)}")
        if not problems:
            problems += self.p_tiles(fx, ctx, notes)
        self.add(fx, "P", "fail" if problems else "pass", "; ".join(problems + notes))
        if problems and any("tiles, expected" in p for p in problems):
            return
        if self.lib is None:
            return
        self.check_serialize(fx, own_bytes, ctx)
        self.check_library(fx, ctx)

    def schema_pipelines(self, fx):
        """(label, schema bytes, expected filters) of the schema-level pipelines the field uses."""
        s, spec = self.schema, self.spec
        out = []
        if fx.var:
            out.append(("offsets", s.offsets_pipeline, spec.offsets_filters or DEFAULT_OFFSETS))
        if fx.nullable:
            out.append(("validity", s.validity_pipeline, spec.validity_filters or DEFAULT_VALIDITY))
        if fx.is_dim:
            want = spec.coords_filters or DEFAULT_COORDS
            out.append(("coords", s.coords_pipeline, want))
        return out

    def p_tiles(self, fx, ctx, notes):
        """Chunking and reference decode of TileDB's tiles."""
        problems = []
        filters, blobs, splits = ctx["filters"], ctx["blobs"], ctx["splits"]
        offs_filters = self.spec.offsets_filters or DEFAULT_OFFSETS
        val_filters = self.spec.validity_filters or DEFAULT_VALIDITY
        ok, why = rx.supports(filters + (offs_filters if fx.var else ()) + (val_filters if fx.nullable else ()))
        if not ok:
            notes.append(f"reference decode skipped: {why}")
        want_tiles = getattr(fx, "decoded_tiles", None) if fx.lossy else fx.tiles
        for i, tile in enumerate(fx.tiles):
            bad = fx.unreadable.get(i) if fx.unreadable else None
            off, size = splits["data"][i]
            data_tile = blobs["data"][off:off + size]
            got_chunks = [c.original_length for c in tf.parse_filtered_tile(data_tile).chunks]
            want_chunks = asp.data_chunk_sizes(fx, filters, tile)
            if got_chunks != want_chunks:
                problems.append(f"tile {i}: data chunks {got_chunks[:8]}, docs/FORMAT.md predicts {want_chunks[:8]}")
            if fx.var:
                o, n = splits["offsets"][i]
                ot = blobs["offsets"][o:o + n]
                if ctx["var_string"]:
                    if ot != bytes(8):
                        problems.append(f"tile {i}: offsets tile {ot[:16].hex()} is not the 8-byte marker (§7.1)")
                else:
                    oc = [c.original_length for c in tf.parse_filtered_tile(ot).chunks]
                    if oc != tf.expected_fixed_chunks(8 * len(tile.offsets), 8):
                        problems.append(f"tile {i}: offsets chunks {oc[:6]}, §4.3 predicts "
                                        f"{tf.expected_fixed_chunks(8 * len(tile.offsets), 8)[:6]}")
                    if ok:
                        problems += self._ref(f"tile {i} offsets", offs_filters, 10, 8, ot, _offsets_bytes(tile))
            if fx.nullable:
                o, n = splits["validity"][i]
                vt = blobs["validity"][o:o + n]
                vc = [c.original_length for c in tf.parse_filtered_tile(vt).chunks]
                if vc != tf.expected_fixed_chunks(len(tile.validity), 1):
                    problems.append(f"tile {i}: validity chunks {vc[:6]}, §4.3 predicts "
                                    f"{tf.expected_fixed_chunks(len(tile.validity), 1)[:6]}")
                if ok:
                    problems += self._ref(f"tile {i} validity", val_filters, 6, 1, vt, tile.validity)
            if not ok:
                continue
            want = want_tiles[i] if want_tiles is not None else None
            try:
                got = rx.decode_tile(filters, fx.datatype, fx.cell_size, data_tile, ctx["var_string"])
                err = None
            except tf.FormatError as e:
                got, err = None, str(e)
            if bad:
                if err is None and self._matches(fx, got, want, ctx):
                    problems.append(f"tile {i}: predicted unreadable ({bad}) but decodes fine")
                else:
                    notes.append(f"tile {i}: TileDB's tile is not decodable as predicted ({bad}): "
                                 f"{err or 'decodes to other cells'}")
                continue
            if err:
                problems.append(f"tile {i}: reference decoder: {err}")
            elif want is None:
                problems.append(f"tile {i}: no read-back to compare the lossy decode with")
            elif not self._matches(fx, got, want, ctx):
                problems.append(f"tile {i}: reference decode differs: {self._describe(fx, got, want, ctx)}")
        if fx.unreadable:
            ok_read, what = asp.read_isolated(self.uri, fx.name) if not fx.is_dim else (False, "not tried")
            if ok_read:
                problems.append(f"TileDB-Py reads the field although tiles {sorted(fx.unreadable)} were "
                                f"predicted unreadable")
            else:
                notes.append(f"confirmed: {what}")
        return problems

    def _ref(self, what, filters, base, cell, tile_bytes, want) -> list[str]:
        try:
            got = rx.decode_tile(filters, base, cell, tile_bytes)
        except tf.FormatError as e:
            return [f"{what}: reference decoder: {e}"]
        return [] if got == want else [f"{what}: reference decode differs: {_cells_diff(got, want)}"]

    @staticmethod
    def _matches(fx, got, want: asp.TileExpect, ctx) -> bool:
        if ctx["var_string"]:
            return got[0] == want.data and list(got[1]) == [int(x) for x in want.offsets]
        return got == want.data

    @staticmethod
    def _describe(fx, got, want, ctx) -> str:
        if ctx["var_string"]:
            if got[0] != want.data:
                return "data " + _cells_diff(got[0], want.data)
            return f"offsets differ ({len(got[1])} vs {len(want.offsets)})"
        return _cells_diff(got, want.data)

    # -- S ----------------------------------------------------------------------
    def check_serialize(self, fx, own_bytes, ctx):
        from tdbfilter_ctypes import TdbError
        problems = []
        items = [("field", own_bytes, fx.filters)] + [(l, h, w) for l, h, w in self.schema_pipelines(fx)]
        for label, have, want in items:
            try:
                with self.lib.deserialize_pipeline(have, FORMAT_VERSION) as p:
                    again = p.serialize()
                if again != have:
                    problems.append(f"{label}: re-serialized {again.hex()} != schema {have.hex()}")
            except TdbError as e:
                problems.append(f"{label}: {e}")
            try:
                with fs.build_in_library(self.lib, want) as p:
                    built = p.serialize()
                expect = have
                if any(f.type == fs.WEBP for f in want):
                    # No filter option sets the WebP extents (TileDB takes them from the schema).
                    expect = fs.serialize(want, webp_extents=(0, 0))
                if built != expect:
                    problems.append(f"{label}: built via add_filter/set_option serializes to {built.hex()}, "
                                    f"expected {expect.hex()}")
            except TdbError as e:
                problems.append(f"{label}: building via add_filter/set_option: {e}")
        self.add(fx, "S", "fail" if problems else "pass", "; ".join(problems))

    # -- D, E -------------------------------------------------------------------
    def pipelines(self, ctx):
        lib = self.lib
        data = lib.deserialize_pipeline(ctx["eff_bytes"], FORMAT_VERSION)
        offs = lib.deserialize_pipeline(self.schema.offsets_pipeline, FORMAT_VERSION)
        val = lib.deserialize_pipeline(self.schema.validity_pipeline, FORMAT_VERSION)
        return data, offs, val

    def check_library(self, fx, ctx):
        from tdbfilter_ctypes import TdbError
        try:
            pipes = self.pipelines(ctx)
        except TdbError as e:
            self.add(fx, "D", "fail", f"cannot deserialize a pipeline: {e}")
            self.add(fx, "E", "fail", f"cannot deserialize a pipeline: {e}")
            return
        data_p, offs_p, val_p = pipes
        try:
            d_prob, d_notes = self.check_decode(fx, ctx, data_p, offs_p, val_p)
            self.add(fx, "D", "fail" if d_prob else ("differs" if d_notes else "pass"),
                     "; ".join(d_prob + d_notes))
            self.check_encode(fx, ctx, data_p, offs_p, val_p)
        finally:
            for p in pipes:
                p.close()

    def check_decode(self, fx, ctx, data_p, offs_p, val_p):
        from tdbfilter_ctypes import TdbError
        problems, notes = [], []
        blobs, splits = ctx["blobs"], ctx["splits"]
        for k in blobs:
            pos = 0
            for i, (off, size) in enumerate(splits[k]):
                try:
                    c = self.lib.filtered_tile_size(blobs[k], off)
                    if c != size:
                        problems.append(f"{k} tile {i}: tdb_filtered_tile_size {c}, Python walk {size}")
                except TdbError as e:
                    problems.append(f"{k} tile {i}: tdb_filtered_tile_size: {e}")
                pos = off + size
            if pos != len(blobs[k]):
                problems.append(f"{k}: tiles end at {pos}, file has {len(blobs[k])} bytes")
        want_tiles = getattr(fx, "decoded_tiles", None) if fx.lossy else fx.tiles
        if want_tiles is None:
            return problems + ["no TileDB read-back to compare the lossy decode with"], notes
        for i, want in enumerate(want_tiles):
            bad = fx.unreadable.get(i) if fx.unreadable else None
            o, n = splits["data"][i]
            dt = blobs["data"][o:o + n]
            try:
                if fx.var:
                    oo, on = splits["offsets"][i]
                    ot = blobs["offsets"][oo:oo + on]
                    if not ctx["var_string"]:
                        got = offs_p.unfilter(ot, 10, 8)
                        if got != _offsets_bytes(want):
                            problems.append(f"tile {i}: offsets tile via tdb_pipeline_unfilter: "
                                            f"{_cells_diff(got, _offsets_bytes(want))}")
                    if not self.lib.has_var_api:
                        raise _Missing()
                    got_offs, got_data = data_p.unfilter_var(offs_p, ot, dt, fx.datatype)
                    if got_data != want.data or [int(x) for x in got_offs] != [int(x) for x in want.offsets]:
                        what = ("data " + _cells_diff(got_data, want.data)) if got_data != want.data else \
                            f"offsets differ (first at cell {_first_diff_list(got_offs, want.offsets)})"
                        (notes if bad else problems).append(
                            f"tile {i}: tdb_pipeline_unfilter_var: {what}" +
                            (f" (TileDB's tile is unreadable: {bad}); the library returns other cells "
                             f"without an error" if bad else ""))
                        if bad:
                            problems.append(notes.pop())
                    elif bad:
                        notes.append(f"tile {i}: decoded, although TileDB cannot read it ({bad})")
                else:
                    got = data_p.unfilter(dt, fx.datatype, fx.cell_size)
                    if got != want.data:
                        problems.append(f"tile {i}: unfilter {_cells_diff(got, want.data)}")
            except _Missing:
                problems.append(f"tile {i}: the library has no var-size API ({', '.join(self.lib.missing)})")
            except TdbError as e:
                if bad:
                    notes.append(f"tile {i}: refused ({e.message[:120]}); TileDB cannot read it either ({bad})")
                else:
                    problems.append(f"tile {i}: {e}")
            if fx.nullable:
                vo, vn = splits["validity"][i]
                try:
                    got = val_p.unfilter(blobs["validity"][vo:vo + vn], 6, 1)
                    if got != want.validity:
                        problems.append(f"tile {i}: validity {_cells_diff(got, want.validity)}")
                except TdbError as e:
                    problems.append(f"tile {i}: validity: {e}")
        return problems, notes

    def check_encode(self, fx, ctx, data_p, offs_p, val_p):
        from tdbfilter_ctypes import TdbError
        problems, notes = [], []
        blobs, splits, files = ctx["blobs"], ctx["splits"], ctx["files"]
        info = {"tiles_identical": 0, "tiles_differing": 0, "masked_bytes": 0}
        webp = any(f.type == fs.WEBP for f in ctx["filters"])
        for i, tile in enumerate(fx.tiles):
            bad = fx.unreadable.get(i) if fx.unreadable else None
            o, n = splits["data"][i]
            theirs = blobs["data"][o:o + n]
            try:
                if fx.var:
                    oo, on = splits["offsets"][i]
                    their_offs = blobs["offsets"][oo:oo + on]
                    if not ctx["var_string"]:
                        mine = offs_p.filter_bytes(10, 8, _offsets_bytes(tile))
                        if mine != their_offs:
                            problems.append(f"tile {i}: offsets tile via tdb_pipeline_filter: "
                                            f"{diff_text(mine, their_offs)}")
                    if not self.lib.has_var_api:
                        raise _Missing()
                    our_offs, ours = data_p.filter_var(offs_p, fx.datatype, tile.offsets, tile.data)
                    if our_offs != their_offs:
                        problems.append(f"tile {i}: offsets tile via tdb_pipeline_filter_var: "
                                        f"{diff_text(our_offs, their_offs)}")
                else:
                    ours = data_p.filter_bytes(fx.datatype, fx.cell_size, tile.data)
            except _Missing:
                problems.append(f"tile {i}: the library has no var-size API ({', '.join(self.lib.missing)})")
                continue
            except TdbError as e:
                if bad:
                    notes.append(f"tile {i}: library refuses ({e.message[:100]}); TileDB writes an "
                                 f"unreadable tile ({bad})")
                else:
                    problems.append(f"tile {i}: {e}")
                continue
            if fx.nullable:
                vo, vn = splits["validity"][i]
                try:
                    mine = val_p.filter_bytes(6, 1, tile.validity)
                    if mine != blobs["validity"][vo:vo + vn]:
                        problems.append(f"tile {i}: validity: {diff_text(mine, blobs['validity'][vo:vo + vn])}")
                except TdbError as e:
                    problems.append(f"tile {i}: validity: {e}")
            if ours == theirs:
                info["tiles_identical"] += 1
                continue
            masked = self.masked_compare(fx, ctx, ours, theirs)
            if masked and masked[0] == "final":
                # Equal but for bytes TileDB leaves uninitialized: TileDB must read ours (R).
                info["tiles_identical"] += 1
                info["masked_bytes"] += masked[1]
                self.substitutions.append((files["data"], o, ours, fx, i))
                continue
            info["tiles_differing"] += 1
            reason = None
            if bad:
                reason = f"TileDB's tile is unreadable ({bad})"
            elif webp:
                reason = "WebP encoder output (libwebp version / lossy)"
            elif masked:
                reason = (f"differs only through {masked[1]} indeterminate BWR/PD offset byte(s) under "
                          f"later filters (§8.4)")
                info["masked_bytes"] += masked[1]
            valid = self.validate(fx, ctx, data_p, offs_p, ours, tile, i)
            text = f"tile {i}: {diff_text(ours, theirs)}"
            if reason and not valid:
                notes.append(f"{text}; {reason}; our tile validated")
                if len(ours) == len(theirs) and not bad:
                    self.substitutions.append((files["data"], o, ours, fx, i))
            else:
                problems.append(text + (f"; our tile is valid" if not valid else f"; our tile: {valid}"))
        if problems:
            self.add(fx, "E", "fail", "; ".join(problems + notes), **info)
        else:
            extra = [f"{info['masked_bytes']} indeterminate byte(s) masked (§8.4)"] if info["masked_bytes"] else []
            self.add(fx, "E", "differs" if notes else "pass", "; ".join(notes + extra), **info)

    def masked_compare(self, fx, ctx, ours: bytes, theirs: bytes):
        """Explain a difference by TileDB's indeterminate BWR/PD bytes (§8.4).
        Returns None, ("final", n) when the tiles are equal with n bytes masked, or
        ("intermediate", n) when the streams after the BWR/PD stage are equal masked."""
        filters = ctx["filters"]
        js = [j for j, f in enumerate(filters) if f.type in (fs.BWR, fs.POSITIVE_DELTA)]
        if not js or ctx["var_string"]:
            return None
        try:
            a, b = tf.parse_filtered_tile(ours), tf.parse_filtered_tile(theirs)
        except tf.FormatError:
            return None
        if len(a.chunks) != len(b.chunks):
            return None
        types = fs.stage_types(filters, fx.datatype)
        level, total = "final", 0
        ours_m, theirs_m = bytearray(ours), bytearray(theirs)
        for ca, cb in zip(a.chunks, b.chunks):
            if (ca.original_length, ca.metadata, ca.data) == (cb.original_length, cb.metadata, cb.data):
                continue
            try:
                sa = rx.stage_streams(filters, fx.datatype, fx.cell_size, ca.metadata, ca.data, ca.original_length)
                sb = rx.stage_streams(filters, fx.datatype, fx.cell_size, cb.metadata, cb.data, cb.original_length)
            except tf.FormatError:
                return None
            j = js[-1]
            ma, da = sa[j + 1]
            mb, db = sb[j + 1]
            ranges = rx.indeterminate_ranges(filters[j], types[j], mb, db)
            ma, mb = bytearray(ma), bytearray(mb)
            for st, ln in ranges:
                ma[st:st + ln] = bytes(ln)
                mb[st:st + ln] = bytes(ln)
            if (bytes(ma), da) != (bytes(mb), db) or sa[:j + 1] != sb[:j + 1] and any(
                    x != y for x, y in zip(sa[:j + 1], sb[:j + 1])):
                return None
            total += sum(ln for _, ln in ranges)
            if j != len(filters) - 1 or ca.header_offset != cb.header_offset:
                level = "intermediate"
            else:
                for st, ln in ranges:
                    p = ca.metadata_offset + st
                    ours_m[p:p + ln] = bytes(ln)
                    theirs_m[p:p + ln] = bytes(ln)
        if level == "final" and ours_m != theirs_m:
            level = "intermediate"
        return (level, total) if total else None

    def validate(self, fx, ctx, data_p, offs_p, ours: bytes, tile, i) -> str:
        """'' if the library's data tile decodes to the tile's cells with the library and with the
        reference decoder (lossy: both decodes agree), else why not."""
        from tdbfilter_ctypes import TdbError
        reasons = []
        lossy = fx.lossy
        lib_got = None
        try:
            if fx.var:
                off_tile = bytes(8) if ctx["var_string"] else offs_p.filter_bytes(10, 8, _offsets_bytes(tile))
                go, gd = data_p.unfilter_var(offs_p, off_tile, ours, fx.datatype)
                lib_got = gd
                if not lossy and (gd != tile.data or [int(x) for x in go] != [int(x) for x in tile.offsets]):
                    reasons.append("library decode of our tile differs from the cells")
            else:
                lib_got = data_p.unfilter(ours, fx.datatype, fx.cell_size)
                if not lossy and lib_got != tile.data:
                    reasons.append(f"library decode of our tile: {_cells_diff(lib_got, tile.data)}")
        except TdbError as e:
            reasons.append(f"library cannot decode our tile: {e}")
        ok, why = rx.supports(ctx["filters"])
        if ok:
            try:
                got = rx.decode_tile(ctx["filters"], fx.datatype, fx.cell_size, ours, ctx["var_string"])
                cells = got[0] if ctx["var_string"] else got
                want = lib_got if lossy else tile.data
                if want is not None and cells != want:
                    reasons.append(f"reference decode of our tile: {_cells_diff(cells, want)}")
                if lossy and lib_got is not None:
                    err = np.abs(np.frombuffer(cells, np.uint8).astype(int) -
                                 np.frombuffer(tile.data, np.uint8).astype(int)).max() if len(cells) == len(
                        tile.data) and fx.datatype == 6 else None
                    if err is not None:
                        fx.notes.append(f"tile {i}: our lossy tile is within {err} of the pixels")
            except tf.FormatError as e:
                reasons.append(f"reference decoder on our tile: {e}")
        else:
            reasons.append(f"no independent decoder: {why}")
        return "; ".join(reasons)

    # -- TileDB cannot write ----------------------------------------------------------
    def write_alone(self, fx, isolate: bool):
        """Write the array with only this attribute. Returns (ok, what happened)."""
        spec = self.spec
        alone = replace(spec, label=spec.label + "-" + fx.name, attrs=[a for a in spec.attrs if a.name == fx.name],
                        data={fx.name: spec.data[fx.name]})
        try:
            if isolate:
                return asp.write_isolated(alone, self.root)
            try:
                asp.create_and_write(alone, self.root)
                return True, "ok"
            except Exception as e:
                return False, f"TileDB failed while writing: {e}"
        finally:
            shutil.rmtree(alone.uri(self.root), ignore_errors=True)

    def check_unwritable(self, fx, outcome=None):
        """A field TileDB 2.30 is predicted to fail or crash on: confirm with TileDB (the field alone;
        in a child process if a crash is predicted), then the library must refuse too or write a
        valid tile."""
        from tdbfilter_ctypes import TdbError
        spec = self.spec
        ok, what = outcome or self.write_alone(fx, isolate=fx.crash)
        if ok:
            self.add(fx, "P", "fail", f"predicted that TileDB cannot write this ({fx.unwritable}) but it did")
            return
        self.add(fx, "P", "pass", f"TileDB cannot write: {what} (predicted: {fx.unwritable})",
                 tiledb_write_failed=True)
        if self.lib is None:
            return
        outcomes, problems = [], []
        filters = fx.filters
        var_string = fx.var and rx.has_var_string_path(filters, fx.datatype)
        ctx = {"filters": filters, "var_string": var_string}
        offs_f = spec.offsets_filters or DEFAULT_OFFSETS
        with fs.build_in_library(self.lib, filters) as p, fs.build_in_library(self.lib, offs_f) as op:
            self.add(fx, "S", "pass" if p.serialize() == fs.serialize(filters) else "fail",
                     "" if p.serialize() == fs.serialize(filters) else
                     f"built pipeline serializes to {p.serialize().hex()}, §3 says {fs.serialize(filters).hex()}")
            for i, tile in enumerate(fx.tiles):
                try:
                    if fx.var:
                        if not self.lib.has_var_api:
                            problems.append(f"tile {i}: the library has no var-size API")
                            continue
                        _, ours = p.filter_var(op, fx.datatype, tile.offsets, tile.data)
                    else:
                        ours = p.filter_bytes(fx.datatype, fx.cell_size, tile.data)
                except TdbError as e:
                    outcomes.append(f"tile {i}: library refuses too ({e.message[:100]})")
                    continue
                bad = self.validate(fx, ctx, p, op, ours, tile, i)
                if bad:
                    problems.append(f"tile {i}: library output invalid: {bad}")
                else:
                    outcomes.append(f"tile {i}: library writes a valid tile")
        why = f"TileDB cannot write this ({what})"
        if problems:
            self.add(fx, "E", "fail", why + "; " + "; ".join(problems + outcomes), tiledb_write_failed=True)
        else:
            self.add(fx, "E", "differs", why + "; " + "; ".join(_squash(outcomes)), tiledb_write_failed=True)

    # -- R ------------------------------------------------------------------------------
    def read_back_substitutions(self, fields):
        if not self.substitutions:
            return
        for path, off, ours, _fx, _i in self.substitutions:
            with open(path, "r+b") as f:
                f.seek(off)
                f.write(ours)
        by_field = {}
        for s in self.substitutions:
            by_field.setdefault(s[3].name, []).append(s)
        for name, subs in sorted(by_field.items()):
            fx = subs[0][3]
            n = len(subs)
            try:
                got_tiles = fx.tiling(self.read_values(fx))
            except Exception as e:
                self.add(fx, "R", "fail", f"TileDB-Py failed reading our {n} substituted tile(s): {e!r}",
                         tiles_substituted=n)
                continue
            want_tiles = fx.tiles
            if fx.lossy:
                want_tiles = self.lossy_expectation(fx, subs)
            bad = []
            for i, (g, w) in enumerate(zip(got_tiles, want_tiles)):
                if g.data != w.data or (w.offsets is not None and list(g.offsets) != list(w.offsets)) or \
                        (w.validity is not None and g.validity != w.validity):
                    bad.append(i)
            if bad:
                self.add(fx, "R", "fail", f"TileDB-Py read back other cells after substituting {n} tile(s); "
                                          f"tiles {bad} differ", tiles_substituted=n)
            else:
                self.add(fx, "R", "pass", f"TileDB read {n} of our tile(s) correctly", tiles_substituted=n)

    def lossy_expectation(self, fx, subs):
        """For lossy fields, TileDB must read our tiles as the library decodes them."""
        out = list(fx.decoded_tiles or fx.tiles)
        with self.lib.deserialize_pipeline(self.pipelines_bytes(fx), FORMAT_VERSION) as p:
            for _path, _off, ours, _fx, i in subs:
                out[i] = asp.TileExpect(p.unfilter(ours, fx.datatype, fx.cell_size))
        return out

    def pipelines_bytes(self, fx):
        idx, _, _, _, own = self.locate(fx)
        return own


class _Missing(Exception):
    pass


def _first_diff_list(a, b) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if int(x) != int(y):
            return i
    return min(len(a), len(b))


def _squash(items: list[str]) -> list[str]:
    """'tile 0: X', 'tile 1: X' -> 'tiles 0, 1: X'."""
    groups = {}
    for it in items:
        head, _, rest = it.partition(": ")
        groups.setdefault(rest, []).append(head.replace("tile ", ""))
    return [f"tile{'s' if len(v) > 1 else ''} {', '.join(v)}: {k}" for k, v in groups.items()]
