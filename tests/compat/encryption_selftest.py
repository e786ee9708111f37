#!/usr/bin/env python3
"""Self-tests of the encryption harness: does it catch what it claims to catch?

* aes_ref.py alone: AES-GCM round trip, tag / layout errors detected, the
  Python generic-tile writer round-trips through the Python reader.
* With TileDB-Py and the library (``--lib``): one small encrypted array is
  checked with sabotaged inputs, and each sabotage must turn the expected
  check letters into failures:
  - a ciphertext byte flipped in the files substituted for R  -> R fails;
  - the library's encrypted tiles replaced by a re-encryption with one fixed
    IV for every part                                           -> E and N fail;
  - generic-tile writes whose payload has one flipped byte (a Python stand-in
    for tdb_generic_tile_write)                                -> E and R fail;
  - a library without the generic tile API (symbols missing)  -> generic D, E
    and N fail (never a skip), and run_encryption.py exits non-zero.

    .venv/bin/python tests/compat/encryption_selftest.py [--lib PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import aes_ref as ar  # noqa: E402
import tiledb_format as tf  # noqa: E402

FAILURES = []


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def test_reference():
    key = bytes(range(32))
    md, data = ar.encrypt_parts(key, [b"meta"], [b"", b"data part"])
    n_md, n_d, parts = ar.parse_aes_metadata(md, len(data))
    expect((n_md, n_d, [p.plain_len for p in parts]) == (1, 2, [4, 0, 9]), "AES own block layout")
    expect(ar.decrypt_parts(key, parts, data) == [b"meta", b"", b"data part"], "AES-GCM round trip")
    bad = bytearray(md)
    bad[8 + 8 + 12] ^= 1                     # first tag byte of part 0
    _, _, bparts = ar.parse_aes_metadata(bytes(bad), len(data))
    try:
        ar.decrypt_parts(key, bparts, data)
        expect(False, "flipped tag detected")
    except tf.FormatError:
        expect(True, "flipped tag detected")
    try:
        ar.parse_aes_metadata(md[:-1], len(data))
        expect(False, "short AES metadata detected")
    except tf.FormatError:
        expect(True, "short AES metadata detected")
    payload = bytes(range(256)) * 700          # 179 200 bytes: three chunks
    for k in (None, key):
        g = ar.read_generic_tile(ar.write_generic_tile(payload, k), k)
        expect(g.payload == payload and g.chunk_lengths == [65536, 65536, 48128] and not g.anomalies,
               f"generic tile writer/reader round trip ({'encrypted' if k else 'unencrypted'})")


def test_with_library(lib_path):
    import encryption_cases as ec
    import encryption_checks as chk
    from crypto_ctypes import CryptoLibrary
    lib = CryptoLibrary(lib_path)
    root = tempfile.mkdtemp(prefix="tdbfilter-enc-selftest-")
    target = "a_zstd"

    def run(run_cls, arr_args=("int32", "walk", "small"), library=lib):
        arr = ec.build("fixed", arr_args)
        return run_cls(arr, root, library).run()

    def statuses(results, row_pred, check):
        return {r.status for r in results if row_pred(r) and r.check == check}

    try:
        class BadSubst(chk.EncRun):
            def plan_substitution(self, fc, streams, theirs, ours):
                super().plan_substitution(fc, streams, theirs, ours)
                if fc.name == target:
                    files, notes = self.subst[fc.name]
                    p = next(iter(files))
                    b = bytearray(files[p])
                    b[-3] ^= 1
                    files[p] = bytes(b)

        res = run(BadSubst)
        expect("fail" in statuses(res, lambda r: r.row.endswith(" zstd"), "R"),
               "R catches a flipped ciphertext byte in a substituted file")
        expect(statuses(res, lambda r: r.row.endswith(" dd"), "R") == {"pass"},
               "R localizes it (other fields pass)")

        class FixedIV(chk.EncRun):
            def encode_all(self, fc, pipes):
                out = super().encode_all(fc, pipes)
                if fc.name == target:
                    for i, plain in enumerate(out["plain"]):
                        t = tf.parse_filtered_tile(plain["data"])
                        chunks = []
                        for c in t.chunks:
                            md_parts = [c.metadata] if c.metadata else []
                            md, data = ar.encrypt_parts(self.key, md_parts, [c.data],
                                                        ivs=[b"\0" * 12] * (len(md_parts) + 1))
                            chunks.append((c.original_length, md, data))
                        out["enc"][i] = {"data": ar.build_tile(chunks)}
                        out["enc2"][i] = {"data": ar.build_tile(chunks)}
                return out

        res = run(FixedIV)
        zs = lambda r: r.row.endswith(" zstd")  # noqa: E731
        expect("fail" in statuses(res, zs, "E"), "E catches a repeated IV")
        expect("fail" in statuses(res, zs, "N"), "N catches identical encryptions")

        class BadGeneric(CryptoLibrary):
            def generic_tile_write(self, pipeline, payload):
                p = bytearray(payload)
                if len(p) > 40:
                    p[len(p) // 2] ^= 1
                return ar.write_generic_tile(bytes(p), self._key)

        bad = BadGeneric(lib_path)
        bad._key = None
        orig_default = bad.generic_default_pipeline

        def keyed_default(key=None):
            bad._key = key
            return orig_default(key)
        bad.generic_default_pipeline = keyed_default
        bad.generic_extras = [e for e in bad.generic_extras if e != "tdb_generic_tile_pipeline"]
        res = run(chk.EncRun, library=bad)
        gen = lambda r: r.row.startswith("generic")  # noqa: E731
        expect("fail" in statuses(res, gen, "E"), "generic E catches a corrupted payload")
        expect(statuses(res, gen, "R") & {"fail", "differs"} != set(), "generic R notices it")

        class NoGeneric(CryptoLibrary):
            def _declare(self):
                super()._declare()
                self.generic_missing = ["tdb_generic_tile_read", "tdb_generic_tile_write"]
                self.has_generic_api = False

        res = run(chk.EncRun, library=NoGeneric(lib_path))
        for c in "DEN":
            expect(statuses(res, gen, c) == {"fail"},
                   f"generic {c} fails (not skipped) when the library lacks the generic tile API")
        import crypto_ctypes
        import run_encryption
        saved = crypto_ctypes.CryptoLibrary
        crypto_ctypes.CryptoLibrary = NoGeneric
        try:
            status = run_encryption.main(["--lib", lib_path, "--quick", "--only", "edge-empty"])
        finally:
            crypto_ctypes.CryptoLibrary = saved
        expect(status != 0, f"run_encryption.py exits non-zero without the generic tile API ({status})")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", help="libtdbfilter.so (default: $TDBFILTER_LIB or target/release/libtdbfilter.so)")
    ap.add_argument("--no-lib", action="store_true", help="only the reference-model tests")
    args = ap.parse_args(argv)
    test_reference()
    if not args.no_lib:
        from tdbfilter_ctypes import default_library_path
        path = os.path.abspath(args.lib or default_library_path())
        if not os.path.exists(path):
            print(f"library not found: {path}", file=sys.stderr)
            return 2
        test_with_library(path)
    print(f"\n{len(FAILURES)} self-test failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
