#!/usr/bin/env python3
"""tdbfilter's Python package against python-blosc2 at equal settings, in interleaved rounds.

Settings on both sides: 1 thread, typesize 8 (int64 cells), chunks of --chunk-mib MiB (one
TileDB tile / one blosc2 chunk each), --chunks of them; bitshuffle+lz4 and byteshuffle+zstd:3
(TileDB's chunking within a tile: 64 KiB, its default; blosc2 picks its own block size, printed).
Per configuration and side: encode (``Pipeline.filter`` / ``blosc2.compress2``), allocating
decode (``Pipeline.unfilter`` / ``blosc2.decompress2``) and decode into a buffer
(``Pipeline.unfilter_into`` / ``decompress2(dst=)``), plus ``TileDBCodec.decode(buf, out)`` (the
numcodecs path zarr takes). ``--baseline SRC`` adds the same tdbfilter rows run by an older
package (its ``src`` folder, e.g. one extracted with ``git archive``), for before/after numbers.

Each round runs every row (order alternating between rounds), each row --repeat passes over all
chunks, keeping the best pass (the one least disturbed on a shared machine). Reported: MiB/s of
uncompressed data, median over rounds [min..max], and the ratio tdbfilter/blosc2 paired within
each round (median [min..max]); ratios > 1 mean tdbfilter is faster.

``--bare`` adds the codec-only rows for zstd: the same byteshuffled bytes compressed with zstd
level 3 in 64 KiB blocks through tdbfilter (a ``zstd:3`` pipeline) and through blosc2 (no filter,
no splitting, 64 KiB blocks), and blosc2's byteshuffle+zstd:3 with and without its splitting of a
block into byte planes (``splitmode``) at TileDB's block size and at blosc2's own.

``--quick`` checks every row's round trip on a few small chunks (the test command runs it).

The data: int64 timestamps in microseconds, 1 ms ticks with +-50 us of jitter (as
bench/ab_uninit.py).

    python3 bench/compare_blosc2.py --rounds 9 --bare --baseline /tmp/old/bindings/python/src
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

try:
    import blosc2
except ImportError:
    sys.exit("compare_blosc2.py needs python-blosc2 (pip install blosc2; a test requirement of "
             "bindings/python)")

ROOT = Path(__file__).resolve().parents[1]
KIB = 1024
MIB = 1 << 20

# blosc2's clevel is not zstd's level: c-blosc2's zstd_wrap_compress (blosc/blosc2.c) calls zstd
# with level 2 * clevel - 1 (clevel < 9), so zstd level 3 is blosc2 clevel 2 (clevel 3 would be
# zstd level 5: smaller, slower to write). For LZ4 blosc2 ignores the level's acceleration
# (LZ4_compress_default, as TileDB calls it); the level only sizes its blocks.
ZSTD3_CLEVEL = 2

# name, tdbfilter spec, blosc2 filter, blosc2 codec, blosc2 clevel.
CONFIGS = [
    ("bitshuffle+lz4", "bitshuffle,lz4", blosc2.Filter.BITSHUFFLE, blosc2.Codec.LZ4, 5),
    ("byteshuffle+zstd:3", "byteshuffle,zstd:3", blosc2.Filter.SHUFFLE, blosc2.Codec.ZSTD,
     ZSTD3_CLEVEL),
]


def make_data(n_cells: int) -> np.ndarray:
    rng = np.random.default_rng(20261126)
    steps = 1000 + rng.integers(-50, 51, n_cells, dtype=np.int64)
    return (1_700_000_000_000_000 + np.cumsum(steps)).astype("<i8")


def load_package(src: str | None, name: str):
    """The tdbfilter package: the installed one (src None) or the one in folder ``src``,
    imported under ``name`` (so that two versions run side by side)."""
    if src is None:
        return importlib.import_module("tdbfilter"), importlib.import_module(
            "tdbfilter.numcodecs_codec").TileDBCodec
    path = Path(src).resolve() / "tdbfilter"
    if not (path / "__init__.py").is_file():
        sys.exit(f"{src}: no tdbfilter package in it")
    spec = importlib.util.spec_from_file_location(name, path / "__init__.py",
                                                  submodule_search_locations=[str(path)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    codec = importlib.import_module(f"{name}.numcodecs_codec").TileDBCodec
    return module, codec


def cparams(filt, codec, clevel, **extra) -> dict:
    return dict(typesize=8, clevel=clevel, codec=codec, filters=[filt], nthreads=1, **extra)


class Bench:
    """The rows of one run: name -> a function doing one pass over all chunks."""

    def __init__(self, args):
        self.args = args
        self.chunk_cells = int(args.chunk_mib * MIB) // 8
        data = make_data(self.chunk_cells * args.chunks)
        self.chunks = [data[i * self.chunk_cells:(i + 1) * self.chunk_cells].copy()
                       for i in range(args.chunks)]
        self.total_mib = data.nbytes / MIB
        self.out = np.empty(self.chunk_cells, np.int64)
        self.rows: dict[str, callable] = {}
        self.notes: list[str] = []

    def check(self, name, got) -> None:
        """Fails the run unless ``got`` (the result of the last chunk) equals it."""
        got = np.frombuffer(got, np.int64) if not isinstance(got, np.ndarray) else got
        if not np.array_equal(got.reshape(-1).view(np.int64), self.chunks[-1]):
            sys.exit(f"{name}: the round trip gave other cells")

    def add(self, name, fn, verify) -> None:
        """Adds row ``name``: ``fn()`` runs one pass; ``verify(result)`` checks it once."""
        verify(fn())
        self.rows[name] = fn

    def add_tdbfilter(self, label, tdbf, codec_cls, spec) -> list:
        p = tdbf.Pipeline.from_spec(spec)
        p.set_threads(1)
        tiles = [p.filter(c) for c in self.chunks]
        codec = codec_cls(spec, dtype="i8", threads=1)
        out = self.out
        self.add(f"{label} encode", lambda: [p.filter(c) for c in self.chunks],
                 lambda r: r[-1] == tiles[-1] or sys.exit(f"{label} encode: other bytes"))
        self.add(f"{label} decode", lambda: [p.unfilter(t, np.int64) for t in tiles],
                 lambda r: self.check(f"{label} decode", r[-1]))
        self.add(f"{label} decode into",
                 lambda: [p.unfilter_into(t, out, np.int64) for t in tiles],
                 lambda r: self.check(f"{label} decode into", out))
        self.add(f"{label} codec decode(out)", lambda: [codec.decode(t, out) for t in tiles],
                 lambda r: self.check(f"{label} codec decode(out)", out))
        return tiles

    def add_blosc2(self, label, cp) -> list:
        frames = [blosc2.compress2(c, **cp) for c in self.chunks]
        out = self.out
        self.add(f"{label} encode", lambda: [blosc2.compress2(c, **cp) for c in self.chunks],
                 lambda r: None)
        self.add(f"{label} decode", lambda: [blosc2.decompress2(f, nthreads=1) for f in frames],
                 lambda r: self.check(f"{label} decode", r[-1]))
        self.add(f"{label} decode into",
                 lambda: [blosc2.decompress2(f, dst=out, nthreads=1) for f in frames],
                 lambda r: self.check(f"{label} decode into", out))
        return frames

    def sizes(self, label, streams) -> None:
        self.notes.append(f"{label}: {sum(map(len, streams))} bytes")


BARE = ("zstd:3", "byteshuffle")


def bare_rows(b: Bench, tdbf) -> None:
    """zstd alone on the same bytes (see the module doc)."""
    block = 64 * KIB
    shuffled = []
    for c in b.chunks:  # byteshuffle per 64 KiB block, as both libraries do
        raw = c.view(np.uint8)
        parts = [raw[i:i + block].reshape(-1, 8).T.reshape(-1) for i in range(0, raw.size, block)]
        shuffled.append(np.concatenate(parts))
    out = np.empty(b.chunk_cells * 8, np.uint8)
    for what, spec, cp, data, want in (
            # zstd alone on the byteshuffled bytes
            ("zstd:3", "zstd:3", dict(typesize=1, clevel=ZSTD3_CLEVEL, codec=blosc2.Codec.ZSTD,
                                      filters=[blosc2.Filter.NOFILTER]), shuffled, shuffled),
            # the byteshuffle alone (blosc2's clevel 0: blocks stored uncompressed)
            ("byteshuffle", "byteshuffle", dict(typesize=8, clevel=0, codec=blosc2.Codec.ZSTD,
                                                filters=[blosc2.Filter.SHUFFLE]),
             [c.view(np.uint8) for c in b.chunks], [c.view(np.uint8) for c in b.chunks])):
        p = tdbf.Pipeline.from_spec(spec)
        p.set_threads(1)
        p.set_max_chunk_size(block)
        tiles = [p.filter(d, np.uint8 if what == "zstd:3" else np.int64) for d in data]
        frames = [blosc2.compress2(d, nthreads=1, blocksize=block,
                                   splitmode=blosc2.SplitMode.NEVER_SPLIT, **cp) for d in data]

        def same(name, want=want):
            def verify(_):
                if not np.array_equal(out, want[-1]):
                    sys.exit(f"{name}: other bytes")
            return verify
        dt = np.uint8 if what == "zstd:3" else np.int64
        b.add(f"bare tdbfilter {what} decode into",
              lambda p=p, tiles=tiles, dt=dt: [p.unfilter_into(t, out, dt) for t in tiles],
              same(f"bare tdbfilter {what}"))
        b.add(f"bare blosc2 {what} decode into",
              lambda frames=frames: [blosc2.decompress2(f, dst=out, nthreads=1) for f in frames],
              same(f"bare blosc2 {what}"))
        b.sizes(f"bare tdbfilter {what}, 64 KiB chunks", tiles)
        b.sizes(f"bare blosc2 {what}, 64 KiB blocks, no split", frames)
    for blocksize, what in ((block, "64 KiB blocks"), (0, "own blocks")):
        for mode, split in ((blosc2.SplitMode.ALWAYS_SPLIT, "split"),
                            (blosc2.SplitMode.NEVER_SPLIT, "no split")):
            label = f"blosc2 byteshuffle+zstd:3 ({what}, {split})"
            cp = cparams(blosc2.Filter.SHUFFLE, blosc2.Codec.ZSTD, ZSTD3_CLEVEL, blocksize=blocksize,
                         splitmode=mode)
            frames = b.add_blosc2(label, cp)
            del b.rows[f"{label} encode"], b.rows[f"{label} decode"]
            b.sizes(f"{label} [block {blosc2.get_cbuffer_sizes(frames[0])[2]}]", frames)


def run_rounds(b: Bench, rounds: int, repeat: int, clock) -> dict[str, list[float]]:
    speeds = {name: [] for name in b.rows}
    names = list(b.rows)
    for rnd in range(rounds):
        for name in (names if rnd % 2 == 0 else names[::-1]):
            fn = b.rows[name]
            best = float("inf")
            for _ in range(repeat):
                t0 = clock()
                fn()
                best = min(best, clock() - t0)
            speeds[name].append(b.total_mib / best)
        print(f"round {rnd + 1}/{rounds} done", file=sys.stderr, flush=True)
    return speeds


def fmt(values, spec="6.0f") -> str:
    return f"{statistics.median(values):{spec}} [{min(values):{spec.lstrip('0123456789')}}.." \
           f"{max(values):{spec.lstrip('0123456789')}}]"


def report(b: Bench, speeds, args) -> None:
    print(f"# bench/compare_blosc2.py: {args.rounds} interleaved rounds, best of {args.repeat} "
          f"passes per row and round; {args.chunks} chunks x {args.chunk_mib} MiB of int64 "
          f"timestamps; 1 thread; typesize 8; clock: {CLOCKS[args.clock][1]}")
    print(f"# tdbfilter {b.tdbf.version()} (library {b.tdbf_lib}), python-blosc2 "
          f"{blosc2.__version__} (C-Blosc2 {blosc2.blosclib_version.split()[0]}), numpy "
          f"{np.__version__}, Python {platform.python_version()}, {platform.machine()}")
    print("# MiB/s of uncompressed data: median over rounds [min..max]")
    width = max(map(len, speeds)) + 2
    for name, v in speeds.items():
        print(f"{name:{width}} {fmt(v):>22}")
    def paired(title, rows):
        """Ratios of rows (label, numerator row, denominator row), paired within each round."""
        print(f"\n# {title}, paired within each round: median [min..max]")
        for label, num, den in rows:
            q = [x / y for x, y in zip(speeds[num], speeds[den])]
            print(f"{label:40} {fmt(q, '5.3f'):>22}")

    paired("tdbfilter / blosc2 (> 1: tdbfilter faster)",
           [(f"{cfg} {op}", f"tdbfilter {cfg} {op}", f"blosc2 {cfg} {op}")
            for cfg, *_ in CONFIGS for op in ("encode", "decode", "decode into")])
    if args.baseline:
        paired("after / before (this package / --baseline)",
               [(f"{cfg} {op}", f"tdbfilter {cfg} {op}", f"before {cfg} {op}")
                for cfg, *_ in CONFIGS for op in ("decode", "decode into", "codec decode(out)")])
    if args.bare:
        paired("bare codec and shuffle, decode into, tdbfilter / blosc2 on the same bytes", [
            (f"{what} (64 KiB blocks)", f"bare tdbfilter {what} decode into",
             f"bare blosc2 {what} decode into") for what in BARE])
    print("\n# compressed sizes (all chunks)")
    for note in b.notes:
        print(f"#   {note}")


CLOCKS = {
    # Everything runs on the calling thread (1 thread on both sides), so its CPU time (user and
    # system: page faults included) is the cost, and it hardly moves when other processes load
    # the machine; wall time does.
    "cpu": (time.thread_time, "CPU time of the calling thread"),
    "wall": (time.perf_counter, "wall time"),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--chunks", type=int, default=64)
    ap.add_argument("--chunk-mib", type=float, default=1.0)
    ap.add_argument("--bare", action="store_true", help="add the codec-only zstd rows")
    ap.add_argument("--clock", choices=CLOCKS, default="cpu",
                    help="cpu: the thread's CPU time (default; steady on a shared machine); wall")
    ap.add_argument("--baseline", metavar="SRC",
                    help="an older package's src folder: its tdbfilter rows too ('before')")
    ap.add_argument("--src", metavar="SRC",
                    help="the package's src folder to measure [default: the installed package]")
    ap.add_argument("--quick", action="store_true",
                    help="check every row's round trip on 4 chunks of 64 KiB, then exit")
    args = ap.parse_args()
    if args.quick:
        args.chunks, args.chunk_mib, args.rounds, args.repeat = 4, 1 / 16, 1, 1
        args.bare = True

    tdbf, codec_cls = load_package(args.src, "tdbfilter_measured") if args.src else \
        load_package(None, "tdbfilter")
    b = Bench(args)
    b.tdbf = tdbf
    for cfg, spec, filt, codec, clevel in CONFIGS:
        tiles = b.add_tdbfilter(f"tdbfilter {cfg}", tdbf, codec_cls, spec)
        b.sizes(f"tdbfilter {cfg}", tiles)
        frames = b.add_blosc2(f"blosc2 {cfg}", cparams(filt, codec, clevel))
        b.sizes(f"blosc2 {cfg} [block {blosc2.get_cbuffer_sizes(frames[0])[2]}]", frames)
        if args.baseline:
            old, old_codec = load_package(args.baseline, "tdbfilter_before")
            b.add_tdbfilter(f"before {cfg}", old, old_codec, spec)
            del b.rows[f"before {cfg} encode"]
    if args.bare:
        bare_rows(b, tdbf)
    b.tdbf_lib = tdbf._ffi.lib().path
    if args.quick:
        print(f"compare_blosc2 --quick: {len(b.rows)} rows, every round trip equal "
              f"(tdbfilter {tdbf.version()}, python-blosc2 {blosc2.__version__})")
        return
    speeds = run_rounds(b, args.rounds, args.repeat, CLOCKS[args.clock][0])
    report(b, speeds, args)


if __name__ == "__main__":
    main()
