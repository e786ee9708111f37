#!/usr/bin/env python3
"""Compare tdbfilter's tile filter pipeline with TileDB 2.30's own, pipeline by pipeline.

For three generated data sets (sorted int64 timestamps, a float64 random walk, small-range
int32) and every pipeline of PIPELINES, at 1 and 2 threads:

* TileDB: a 1-D dense array with one attribute carrying the filter list and 1 MiB tiles is
  written and read back with TileDB's statistics on; TileDB's own timers give the time spent
  filtering (writer) and unfiltering (reader). TileDB is pinned to N threads with
  sm.compute_concurrency_level = sm.io_concurrency_level = N. The filtered size is the size of
  the attribute's data file (a.tdb) in the fragment.
* tdbfilter: `tdbf bench --json` on the same bytes, type, tile size and thread count. By
  default tdbf releases each output tile as soon as it is made (as TileDB's writer does
  batch by batch); --ours-outputs retained keeps them all per run (as TileDB's reader holds
  all tiles of a query), which adds the cost of faulting in fresh pages; --ours-outputs into
  uses filter_tile_into/unfilter_tile_into with buffers allocated once.
* memcpy: `tdbf bench --memcpy` on the same tiles, the memory-bandwidth ceiling.
* bare codec: for each pipeline ending in a compressor (zstd, lz4, gzip, bzip2),
  `tdbf bench --bare-codec` times that library alone (libzstd ZSTD_compressCCtx /
  ZSTD_decompressDCtx at the same level, liblz4, zlib, libbzip2) on exactly the parts it
  compresses in the pipeline (the filters before it run untimed), in original bytes per
  second; "pipeline / bare codec" is our speed as a share of that (target: at least 97%).
  Where filters come before the compressor, their time is part of the pipeline's, so those
  rows are also timed with the filters before the compressor alone (`tdbf bench --filters`
  without the compressor) and held to their parts run one after the other:
  pipeline / (1 / (1/prefix + 1/bare codec)), the same 97% target.
  In --quick mode these shares are printed but, like every speed, not checked.

Speeds are unfiltered MiB (2^20 bytes) per second. Each row and thread count is measured in
--rounds interleaved rounds (TileDB, ours, the bare codec, and for memory-bound rows memcpy,
one after the other), so that a slow phase of a shared machine falls on all of them rather
than on one; a round takes the median (or with --stat best, the fastest) of --repeat runs
(ours at least 3 on the memory-bound rows), and the speed reported is the median over rounds.
tdbf warms up once before its timed runs; TileDB does not need to (every run writes a fresh
array in the same long-lived process). Memory-bound rows are reported as a share of the
memcpy measured in their own rounds.
"ratio" is ours / TileDB (above 1: tdbfilter is faster).

TileDB's timers (2.30):
  write: Context.Query.Writer.prepare_and_filter_tiles: wall time of each batch of N tiles
         processed in parallel (DenseTiler.get_tile copies the cells into the tile, then
         filter_tile runs the pipeline); filter_tile is timed per tile, so with N > 1 its sum
         counts overlapping time. The filter wall time is taken as
             prepare_and_filter_tiles * filter_tile / (filter_tile + DenseTiler.get_tile)
         which is exactly filter_tile's sum with one thread.
  read:  Context.Query.Reader.unfilter_attr_tiles: wall time of unfiltering all tiles.

Usage: .venv/bin/python bench/compare_tiledb.py [--mib 64] [--rounds 3] [--repeat 1] [--quick]
       [--tdbf PATH] [--json out.json] [--only PIPELINE] [--datasets NAME,...]
       [--stat median|best] [--ours-outputs streamed|retained|into] [--check]
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import tiledb

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_TDBF = os.path.join(REPO, "target", "release", "tdbf")
TILE_BYTES = 1 << 20
MIB = float(1 << 20)
THREADS = (1, 2)

# (spec for tdbf, builder of TileDB's filters). Levels are the defaults of both (-1).
PIPELINES = [
    ("none", lambda: []),
    ("byteshuffle", lambda: [tiledb.ByteShuffleFilter()]),
    ("bitshuffle", lambda: [tiledb.BitShuffleFilter()]),
    ("zstd", lambda: [tiledb.ZstdFilter(level=-1)]),
    ("xor,zstd", lambda: [tiledb.XORFilter(), tiledb.ZstdFilter(level=-1)]),
    ("byteshuffle,zstd", lambda: [tiledb.ByteShuffleFilter(), tiledb.ZstdFilter(level=-1)]),
    ("bitshuffle,lz4", lambda: [tiledb.BitShuffleFilter(), tiledb.LZ4Filter()]),
    ("gzip", lambda: [tiledb.GzipFilter(level=-1)]),
    ("bzip2", lambda: [tiledb.Bzip2Filter(level=-1)]),
    ("rle", lambda: [tiledb.RleFilter()]),
    ("double_delta", lambda: [tiledb.DoubleDeltaFilter()]),
    (
        "positive_delta,bit_width_reduction,zstd",
        lambda: [
            tiledb.PositiveDeltaFilter(),
            tiledb.BitWidthReductionFilter(),
            tiledb.ZstdFilter(level=-1),
        ],
    ),
    ("checksum_md5", lambda: [tiledb.ChecksumMD5Filter()]),
    ("checksum_sha256", lambda: [tiledb.ChecksumSHA256Filter()]),
]

# Pipelines whose speed is bounded by memory bandwidth rather than computation.
MEMORY_BOUND = ("none", "byteshuffle", "bitshuffle")

# The compressors `tdbf bench --bare-codec` can time alone: pipelines ending in one of these are
# codec-bound rows, reported as a share of the bare codec.
BARE_CODECS = ("zstd", "lz4", "gzip", "bzip2")
BARE_SHARE_TARGET = 0.97


def codec_bound(spec):
    return spec.split(",")[-1].split(":")[0] in BARE_CODECS


# Pipelines also reported as a share of memcpy, though computation bounds them: SHA-256 with
# SHA-NI hashes at about 2 cycles per byte (two interleaved streams: about 3 GB/s per core).
MEMCPY_SHARE_ALSO = {"checksum_sha256": " (compute-bound: SHA-NI)"}


# --------------------------------------------------------------------------------------------
# Data sets


def gen_timestamps(nbytes, rng):
    """Sorted int64 timestamps in microseconds: 1 ms ticks with +-50 us of jitter."""
    n = nbytes // 8
    steps = 1000 + rng.integers(-50, 51, n, dtype=np.int64)
    return (1_700_000_000_000_000 + np.cumsum(steps)).astype("<i8")


def gen_random_walk(nbytes, rng):
    """A float64 random walk around 20.0, quantized to 0.001 like a sensor reading."""
    n = nbytes // 8
    walk = 20.0 + np.cumsum(rng.normal(0.0, 0.01, n))
    return np.round(walk, 3).astype("<f8")


def gen_levels(nbytes, rng):
    """Small-range int32 values in 0..100 (unsorted)."""
    return rng.integers(0, 100, nbytes // 4, dtype=np.int32).astype("<i4")


DATASETS = [
    # (name, tdbf type, generator, seed)
    ("timestamps", "int64", gen_timestamps, 1),
    ("random_walk", "float64", gen_random_walk, 2),
    ("levels", "int32", gen_levels, 3),
]


# --------------------------------------------------------------------------------------------
# TileDB


def tiledb_stats():
    """TileDB's statistics since the last reset as a dict with 'timers' and 'counters'."""
    raw = tiledb.stats_dump(json=True, print_out=False)
    if isinstance(raw, str):
        raw = json.loads(raw)
    if isinstance(raw, list):
        raw = raw[0] if raw else {}
    return raw


def timer(stats, suffix, required=True):
    """Sum of the timers whose name ends with `suffix` (e.g. 'Writer.filter_tile.sum')."""
    hits = [v for k, v in stats.get("timers", {}).items() if k.endswith(suffix)]
    if not hits:
        if required:
            names = ", ".join(sorted(stats.get("timers", {})))
            raise RuntimeError(f"TileDB timer *{suffix} not found; timers: {names}")
        return 0.0
    return float(sum(hits))


def counter(stats, suffix):
    hits = [v for k, v in stats.get("counters", {}).items() if k.endswith(suffix)]
    return int(sum(hits)) if hits else None


def short_error(e):
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return text[:160]


def tiledb_once(ctx, data, filters_fn, uri):
    """One write + read of `data` through TileDB. Returns a dict with the filter and unfilter
    seconds and the filtered size, or {'error': ...}."""
    n = len(data)
    cell = data.dtype.itemsize
    extent = TILE_BYTES // cell
    try:
        dom = tiledb.Domain(
            tiledb.Dim(name="d", domain=(0, n - 1), tile=extent, dtype=np.uint64, ctx=ctx),
            ctx=ctx,
        )
        attr = tiledb.Attr(
            name="a",
            dtype=data.dtype,
            filters=tiledb.FilterList(filters_fn(), ctx=ctx),
            ctx=ctx,
        )
        schema = tiledb.ArraySchema(domain=dom, attrs=[attr], sparse=False, ctx=ctx)
        tiledb.Array.create(uri, schema, ctx=ctx)
    except tiledb.TileDBError as e:
        return {"error": "schema: " + short_error(e)}
    try:
        tiledb.stats_enable()
        tiledb.stats_reset()
        with tiledb.open(uri, "w", ctx=ctx) as A:
            A[:] = data
        ws = tiledb_stats()
    except tiledb.TileDBError as e:
        return {"error": "write: " + short_error(e)}
    finally:
        tiledb.stats_reset()
    filt = timer(ws, "Writer.filter_tile.sum")
    batch = timer(ws, "Writer.prepare_and_filter_tiles.sum")
    get_tile = timer(ws, "DenseTiler.get_tile.sum", required=False)
    filter_wall = batch * filt / (filt + get_tile) if filt + get_tile > 0 else filt
    frag_root = os.path.join(uri, "__fragments")
    frags = os.listdir(frag_root)
    if len(frags) != 1:
        return {"error": f"expected one fragment, found {len(frags)}"}
    frag = os.path.join(frag_root, frags[0])
    data_files = [f for f in os.listdir(frag) if f.startswith("a") and f.endswith(".tdb")]
    size = sum(os.path.getsize(os.path.join(frag, f)) for f in data_files)
    try:
        tiledb.stats_reset()
        with tiledb.open(uri, "r", ctx=ctx) as A:
            back = A.query(attrs=["a"])[:]["a"]
        rs = tiledb_stats()
    except tiledb.TileDBError as e:
        return {"error": "read: " + short_error(e)}
    finally:
        tiledb.stats_reset()
        tiledb.stats_disable()
    if not np.array_equal(back, data):
        return {"error": "read: TileDB's round trip differs"}
    unfilter = timer(rs, "Reader.unfilter_attr_tiles.sum")
    tiles = n * cell // TILE_BYTES
    unfiltered = counter(rs, "Reader.tiles_unfiltered")
    return {
        "filter_s": filter_wall,
        "filter_tile_sum_s": filt,
        "prepare_and_filter_s": batch,
        "get_tile_s": get_tile,
        "unfilter_s": unfilter,
        "filtered_bytes": size,
        "tiles_unfiltered": unfiltered,
        "tiles": tiles,
    }


def pick(values, stat):
    """The median or the smallest of the timings `values` (seconds)."""
    return min(values) if stat == "best" else statistics.median(values)


def tiledb_measure(ctx, data, filters_fn, repeat, workdir, stat):
    runs = []
    for r in range(repeat):
        uri = tempfile.mkdtemp(prefix="arr", dir=workdir)
        shutil.rmtree(uri)
        try:
            res = tiledb_once(ctx, data, filters_fn, uri)
        finally:
            shutil.rmtree(uri, ignore_errors=True)
        if "error" in res:
            return res
        runs.append(res)
    nbytes = data.nbytes
    f = pick([r["filter_s"] for r in runs], stat)
    u = pick([r["unfilter_s"] for r in runs], stat)
    out = {
        "filter_mib_s": nbytes / MIB / f if f > 0 else None,
        "unfilter_mib_s": nbytes / MIB / u if u > 0 else None,
        "filtered_bytes": runs[0]["filtered_bytes"],
        "runs": runs,
    }
    unf = runs[0]["tiles_unfiltered"]
    if unf is not None and unf != runs[0]["tiles"]:
        out["note"] = f"TileDB unfiltered {unf} tiles for {runs[0]['tiles']}"
    return out


# --------------------------------------------------------------------------------------------
# tdbfilter


def tdbf_bench(tdbf, args, stat):
    """Runs `tdbf bench ... --json`; returns the parsed object or {'error': ...}. With stat
    'best' the best run's speeds replace the medians."""
    p = subprocess.run([tdbf, "bench", *args, "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        msg = (p.stderr.strip() or p.stdout.strip() or f"exit {p.returncode}").splitlines()
        return {"error": msg[0][:160] if msg else f"exit {p.returncode}"}
    res = json.loads(p.stdout)
    if stat == "best":
        for d in ("filter", "unfilter"):
            res[f"{d}_mib_s"] = res[f"{d}_mib_s_best"]
        if "memcpy_mib_s" in res:
            res["memcpy_mib_s"] = res["filter_mib_s_best"]
    return res


def measure_memcpy(tdbf, threads, path, args):
    """memcpy MiB/s of the file's tiles (`tdbf bench --memcpy`, at least 5 runs), or None."""
    m = tdbf_bench(
        tdbf,
        ["--memcpy", "--threads", str(threads), "--tile-bytes", str(TILE_BYTES),
         "--repeat", str(max(args.repeat, 5)), "--outputs", args.ours_outputs, path],
        args.stat,
    )
    return m.get("memcpy_mib_s")


def combine_rounds(rounds):
    """One cell from the interleaved rounds of a row: for TileDB, ours and the bare codec the
    median over rounds of each round's speeds (an error in any round is the cell's), the
    first round's other fields, and the per-round speeds under 'rounds'; memcpy the median."""
    cell = {}
    for who in ("tiledb", "ours", "bare", "prefix"):
        got = [r[who] for r in rounds if who in r]
        if not got:
            continue
        bad = [g for g in got if "error" in g]
        if bad:
            cell[who] = bad[0]
            continue
        merged = dict(got[0])
        for d in ("filter", "unfilter"):
            merged[f"{d}_mib_s"] = statistics.median(g[f"{d}_mib_s"] for g in got)
        merged["rounds"] = [[g["filter_mib_s"], g["unfilter_mib_s"]] for g in got]
        merged.pop("runs", None)
        cell[who] = merged
    mcs = [r["memcpy"] for r in rounds if r.get("memcpy")]
    if mcs:
        cell["memcpy"] = statistics.median(mcs)
    return cell


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def find_tdbf(path):
    if path:
        if not os.path.exists(path):
            sys.exit(f"compare_tiledb: --tdbf {path} does not exist")
        return path
    if not os.path.exists(DEFAULT_TDBF):
        print(
            f"# {DEFAULT_TDBF} missing: cargo build --release -p tdbf", flush=True
        )
        env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(REPO, "target"))
        subprocess.run(
            ["cargo", "build", "--release", "-p", "tdbf"],
            cwd=REPO,
            env=env,
            check=True,
        )
    return DEFAULT_TDBF


# --------------------------------------------------------------------------------------------
# Report


def fmt_speed(x):
    if x is None:
        return "n/a"
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}"


def fmt_ratio(x):
    return "n/a" if x is None else f"{x:.2f}"


def ratio_of(ours, theirs):
    if ours is None or theirs is None or theirs <= 0:
        return None
    return ours / theirs


def speed(res, key):
    if res is None or "error" in res:
        return None
    return res.get(key)


def print_dataset(name, dtype, nbytes, rows, memcpy, out):
    w = max(len(r["pipeline"]) for r in rows)
    head1 = f"{'':<{w}} |"
    head2 = f"{'pipeline':<{w}} |"
    for t in THREADS:
        for d in ("filter", "unfilter"):
            label = f"{d} MiB/s, {t} thr"
            head1 += f" {label:^22} |"
            head2 += f" {'TileDB':>7}{'ours':>7}{'ratio':>7}  |"
    head1 += f" {'filtered bytes':^25}"
    head2 += f" {'TileDB':>11}{'ours':>11}  "
    tiles = nbytes // TILE_BYTES
    print(
        f"\n== {name} ({dtype}, {nbytes / MIB:.0f} MiB, {tiles} tiles of 1 MiB) ==", file=out
    )
    print(head1, file=out)
    print(head2, file=out)
    print("-" * len(head2), file=out)
    notes = {}
    for r in rows:
        line = f"{r['pipeline']:<{w}} |"
        for t in THREADS:
            c = r["threads"][t]
            for d in ("filter", "unfilter"):
                tdb = speed(c["tiledb"], f"{d}_mib_s")
                ours = speed(c["ours"], f"{d}_mib_s")
                line += (
                    f" {fmt_speed(tdb):>7}{fmt_speed(ours):>7}"
                    f"{fmt_ratio(ratio_of(ours, tdb)):>7}  |"
                )
            for who in ("tiledb", "ours"):
                res = c[who]
                msg = ("n/a: " + res["error"]) if "error" in res else res.get("note")
                if msg:
                    notes.setdefault((r["pipeline"], who, msg), []).append(str(t))
        c1 = r["threads"][THREADS[0]]
        tsize = None if "error" in c1["tiledb"] else c1["tiledb"]["filtered_bytes"]
        osize = None if "error" in c1["ours"] else c1["ours"]["filtered_bytes"]
        mark = ""
        if tsize is not None and osize is not None:
            mark = "=" if osize == tsize else ("<" if osize < tsize else "!")
        tsize = "n/a" if tsize is None else tsize
        osize = "n/a" if osize is None else osize
        line += f" {tsize:>11}{osize:>11} {mark}"
        print(line, file=out)
    for (pipeline, who, msg), ts in notes.items():
        who = "TileDB" if who == "tiledb" else "ours"
        print(f"  note: {pipeline} ({who}, {'+'.join(ts)} thr): {msg}", file=out)
    mc = "  memcpy: " + ", ".join(
        f"{t} thr {fmt_speed(memcpy.get(t))} MiB/s" for t in THREADS
    )
    print(mc, file=out)
    for r in rows:
        if r["pipeline"] not in MEMORY_BOUND and r["pipeline"] not in MEMCPY_SHARE_ALSO:
            continue
        parts = []
        for t in THREADS:
            # memcpy measured in the row's own rounds, else the data set's.
            m = r["threads"][t].get("memcpy") or memcpy.get(t)
            if not m:
                continue
            c = r["threads"][t]
            fr = []
            for who, label in (("ours", "ours"), ("tiledb", "TileDB")):
                f = speed(c[who], "filter_mib_s")
                u = speed(c[who], "unfilter_mib_s")
                if f and u:
                    fr.append(f"{label} {f / m:.0%}/{u / m:.0%}")
            parts.append(f"{t} thr: " + ", ".join(fr) + f" (memcpy {fmt_speed(m)})")
        print(
            f"  {r['pipeline']:<12} of memcpy (filter/unfilter): "
            + "; ".join(parts)
            + MEMCPY_SHARE_ALSO.get(r["pipeline"], ""),
            file=out,
        )
    for r in rows:
        if not codec_bound(r["pipeline"]):
            continue
        # With filters before the compressor, the pipeline's time includes theirs.
        extra = " (incl. the filters before it)" if "," in r["pipeline"] else ""
        print(
            f"  {r['pipeline']:<12} of bare codec (filter/unfilter): "
            + share_cells(r, bare_shares, "bare", "bare")
            + extra,
            file=out,
        )
        if "," in r["pipeline"]:
            print(
                f"  {r['pipeline']:<12} of its parts, prefix then bare codec (filter/unfilter): "
                + share_cells(r, parts_shares, "prefix", "filters before it alone"),
                file=out,
            )


def share_cells(row, shares_of, ref, label):
    """'1 thr: F%/U% (label f/u MiB/s); 2 thr: ...' for `shares_of` (bare_shares or
    parts_shares) of each thread count, with the speeds of the reference measurement `ref`."""
    parts = []
    for t in THREADS:
        sh = shares_of(row["threads"][t])
        if sh is None:
            parts.append(f"{t} thr: n/a")
            continue
        x = row["threads"][t][ref]
        parts.append(
            f"{t} thr: {sh[0]:.0%}/{sh[1]:.0%} ({label} {fmt_speed(x['filter_mib_s'])}/"
            f"{fmt_speed(x['unfilter_mib_s'])} MiB/s)"
        )
    return "; ".join(parts)


def bare_shares(cell):
    """(filter, unfilter) speed of our pipeline as a share of the bare codec's, or None."""
    bare = cell.get("bare")
    ours = cell["ours"]
    if not bare or "error" in bare or "error" in ours:
        return None
    return tuple(ours[f"{d}_mib_s"] / bare[f"{d}_mib_s"] for d in ("filter", "unfilter"))


def parts_shares(cell):
    """For a pipeline with filters before its compressor: (filter, unfilter) speed of the
    pipeline as a share of its parts run one after the other (the filters before the
    compressor alone, then the bare codec: 1 / (1/prefix + 1/bare)), or None. Above 100%, the
    pipeline is faster than its parts."""
    bare, prefix, ours = cell.get("bare"), cell.get("prefix"), cell["ours"]
    if not bare or not prefix or any("error" in x for x in (bare, prefix, ours)):
        return None
    return tuple(
        ours[f"{d}_mib_s"] * (1 / prefix[f"{d}_mib_s"] + 1 / bare[f"{d}_mib_s"])
        for d in ("filter", "unfilter")
    )


def summarize(results, out):
    """Geometric means and minima of the ratios, per direction and thread count."""
    summary = {}
    print("\n== summary: ratio = ours / TileDB (above 1: tdbfilter faster) ==", file=out)
    for t in THREADS:
        for d in ("filter", "unfilter"):
            vals = []
            for ds in results:
                for r in ds["rows"]:
                    c = r["threads"][t]
                    x = ratio_of(speed(c["ours"], f"{d}_mib_s"), speed(c["tiledb"], f"{d}_mib_s"))
                    if x is not None:
                        vals.append((x, ds["name"], r["pipeline"]))
            if not vals:
                continue
            geo = math.exp(sum(math.log(v[0]) for v in vals) / len(vals))
            lo = min(vals)
            slow = sorted(vals)[:3]
            summary[f"{d}_{t}"] = {
                "geomean": geo,
                "min": lo[0],
                "min_at": f"{lo[1]}/{lo[2]}",
                "n": len(vals),
            }
            below = [v for v in sorted(vals) if v[0] < 1.2]
            summary[f"{d}_{t}"]["below_1_2"] = [f"{n}/{p}" for _, n, p in below]
            print(
                f"{d:>8}, {t} thread(s): geomean {geo:.2f}x over {len(vals)}; "
                f"min {lo[0]:.2f}x ({lo[1]} {lo[2]}); slowest: "
                + ", ".join(f"{p}@{n} {x:.2f}" for x, n, p in slow),
                file=out,
            )
            print(
                f"{'':>8}  below 1.2x: "
                + (", ".join(f"{p}@{n} {x:.2f}" for x, n, p in below) or "none"),
                file=out,
            )
    # Our own scaling on these multi-tile workloads: the last thread count over the first.
    t1, tn = THREADS[0], THREADS[-1]
    if tn != t1:
        for d in ("filter", "unfilter"):
            vals = []
            for ds in results:
                for r in ds["rows"]:
                    a = speed(r["threads"][t1]["ours"], f"{d}_mib_s")
                    b = speed(r["threads"][tn]["ours"], f"{d}_mib_s")
                    if a and b:
                        vals.append((b / a, ds["name"], r["pipeline"]))
            if not vals:
                continue
            geo = math.exp(sum(math.log(v[0]) for v in vals) / len(vals))
            lo = min(vals)
            summary[f"{d}_scaling_{tn}_over_{t1}"] = {
                "geomean": geo,
                "min": lo[0],
                "min_at": f"{lo[1]}/{lo[2]}",
                "n": len(vals),
            }
            print(
                f"{d:>8} scaling (ours, {tn} threads / {t1}): geomean "
                f"{geo:.2f}x over {len(vals)}; min {lo[0]:.2f}x ({lo[1]} {lo[2]})",
                file=out,
            )
    short = []
    for ds in results:
        for r in ds["rows"]:
            for t in THREADS:
                # Composite pipelines are held to their parts (prefix alone + bare codec).
                composite = "," in r["pipeline"]
                sh = (parts_shares if composite else bare_shares)(r["threads"][t])
                label = " (of its parts)" if composite else ""
                for d, x in zip(("filter", "unfilter"), sh or ()):
                    if x < BARE_SHARE_TARGET:
                        short.append((x, f"{r['pipeline']}@{ds['name']} {d} {t} thr{label}"))
    summary["below_bare_share_target"] = [f"{w} {x:.3f}" for x, w in sorted(short)]
    print(
        f"pipeline / bare codec (with filters before the codec: / its parts) below "
        f"{BARE_SHARE_TARGET:.0%}: "
        + (", ".join(f"{w} {x:.0%}" for x, w in sorted(short)) or "none"),
        file=out,
    )
    worse = []
    for ds in results:
        for r in ds["rows"]:
            c = r["threads"][THREADS[0]]
            if "error" in c["tiledb"] or "error" in c["ours"]:
                continue
            if c["ours"]["filtered_bytes"] > c["tiledb"]["filtered_bytes"]:
                worse.append(f"{ds['name']}/{r['pipeline']}")
    if worse:
        print("filtered sizes LARGER than TileDB's: " + ", ".join(worse), file=out)
    else:
        print("filtered sizes: never larger than TileDB's", file=out)
    summary["larger_than_tiledb"] = worse
    failed = []
    for ds in results:
        for r in ds["rows"]:
            for t in THREADS:
                c = r["threads"][t]
                if "error" in c["ours"] and "error" not in c["tiledb"]:
                    failed.append(f"{ds['name']}/{r['pipeline']}@{t}: {c['ours']['error']}")
    for f in failed:
        print(f"tdbf FAILED where TileDB did not: {f}", file=out)
    summary["failed_where_tiledb_did_not"] = failed
    return summary


# --------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=64, help="MiB per data set (default 64)")
    ap.add_argument(
        "--repeat", type=int, default=1,
        help="runs per measurement in each round (default 1; ours at least 3 on the cheap "
        "memory-bound rows)",
    )
    ap.add_argument(
        "--rounds", type=int, default=3,
        help="interleaved rounds of TileDB, ours, bare codec and memcpy per row and thread "
        "count; each speed is the median over rounds (default 3)",
    )
    ap.add_argument("--quick", action="store_true", help="CI mode: 4 MiB, 1 repeat")
    ap.add_argument("--tdbf", help=f"the tdbf binary (default {DEFAULT_TDBF})")
    ap.add_argument("--json", dest="json_out", metavar="OUT", help="also write results as JSON")
    ap.add_argument(
        "--only", action="append", metavar="PIPELINE", help="run only these pipelines"
    )
    ap.add_argument(
        "--datasets",
        help="comma-separated data sets (default all: "
        + ",".join(d[0] for d in DATASETS)
        + ")",
    )
    ap.add_argument(
        "--stat",
        choices=("median", "best"),
        default="median",
        help="which of the repeats to report (default median; best resists a busy machine)",
    )
    ap.add_argument(
        "--ours-outputs",
        choices=("streamed", "retained", "into"),
        default="streamed",
        help="tdbf bench --outputs: release each output tile at once (streamed, default), keep "
        "all of a run like TileDB's reader (retained: fresh pages every run), or write into "
        "buffers allocated once (into)",
    )
    ap.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if tdbf fails where TileDB does not or writes more bytes than TileDB",
    )
    ap.add_argument("--workdir", help="where data files and arrays go (default: a temp dir)")
    args = ap.parse_args()
    if args.quick:
        args.mib, args.repeat, args.rounds = 4, 1, 1
    if args.mib < 1 or args.repeat < 1 or args.rounds < 1:
        sys.exit("compare_tiledb: --mib, --repeat and --rounds must be at least 1")
    tdbf = find_tdbf(args.tdbf)
    probe = subprocess.run([tdbf, "bench", "--help"], capture_output=True, text=True)
    if probe.returncode != 0:
        sys.exit(f"compare_tiledb: {tdbf} has no 'bench' subcommand: rebuild it")
    pipelines = [p for p in PIPELINES if not args.only or p[0] in args.only]
    if not pipelines:
        sys.exit("compare_tiledb: --only matched no pipeline")
    datasets = DATASETS
    if args.datasets:
        wanted = args.datasets.split(",")
        datasets = [d for d in DATASETS if d[0] in wanted]
        if not datasets:
            sys.exit("compare_tiledb: --datasets matched no data set")

    own_workdir = args.workdir is None
    workdir = args.workdir or tempfile.mkdtemp(prefix="tdbf-compare-")
    os.makedirs(workdir, exist_ok=True)
    ctxs = {
        t: tiledb.Ctx(
            tiledb.Config(
                {
                    "sm.compute_concurrency_level": str(t),
                    "sm.io_concurrency_level": str(t),
                }
            )
        )
        for t in THREADS
    }
    nbytes = args.mib << 20
    out = sys.stdout
    started = time.time()
    print(
        f"# compare_tiledb: TileDB {'.'.join(map(str, tiledb.libtiledb.version()))} "
        f"(tiledb-py {tiledb.__version__}) vs {tdbf}; {args.mib} MiB per data set, "
        f"1 MiB tiles, median over {args.rounds} interleaved rounds of the {args.stat} of "
        f"{args.repeat} run(s); tdbf --outputs {args.ours_outputs}; "
        f"{os.cpu_count()} CPUs; "
        f"load average {loadavg()}",
        file=out,
        flush=True,
    )
    results = []
    try:
        for name, dtype, gen, seed in datasets:
            data = gen(nbytes, np.random.default_rng(seed))
            path = os.path.join(workdir, f"{name}.bin")
            data.tofile(path)
            memcpy = {t: measure_memcpy(tdbf, t, path, args) for t in THREADS}
            rows = []
            for spec, filters_fn in pipelines:
                row = {"pipeline": spec, "threads": {}}
                memory_bound = spec in MEMORY_BOUND or spec in MEMCPY_SHARE_ALSO
                # Cheap rows take more of our runs per round (a 64 MiB pass is milliseconds).
                ours_repeat = max(args.repeat, 3) if memory_bound else args.repeat
                for t in THREADS:
                    # Rounds interleave TileDB, ours, the bare codec and memcpy, so that a
                    # slow phase of the machine falls on all of them rather than on one.
                    rounds = []
                    for _ in range(args.rounds):
                        cell = {
                            "tiledb": tiledb_measure(
                                ctxs[t], data, filters_fn, args.repeat, workdir, args.stat
                            ),
                            "ours": tdbf_bench(
                                tdbf,
                                [
                                    "--filters", spec, "--type", dtype, "--threads", str(t),
                                    "--tile-bytes", str(TILE_BYTES),
                                    "--repeat", str(ours_repeat),
                                    "--outputs", args.ours_outputs,
                                    path,
                                ],
                                args.stat,
                            ),
                        }
                        if codec_bound(spec):
                            cell["bare"] = tdbf_bench(
                                tdbf,
                                [
                                    "--filters", spec, "--type", dtype, "--threads", str(t),
                                    "--tile-bytes", str(TILE_BYTES),
                                    "--repeat", str(args.repeat),
                                    "--bare-codec", path,
                                ],
                                args.stat,
                            )
                            if "," in spec:
                                # The filters before the compressor, alone, on the same tiles.
                                cell["prefix"] = tdbf_bench(
                                    tdbf,
                                    [
                                        "--filters", spec.rsplit(",", 1)[0], "--type", dtype,
                                        "--threads", str(t), "--tile-bytes", str(TILE_BYTES),
                                        "--repeat", str(max(args.repeat, 3)),
                                        "--outputs", args.ours_outputs,
                                        path,
                                    ],
                                    args.stat,
                                )
                        if memory_bound:
                            cell["memcpy"] = measure_memcpy(tdbf, t, path, args)
                        rounds.append(cell)
                        if "error" in cell["tiledb"] or "error" in cell["ours"]:
                            break
                    row["threads"][t] = combine_rounds(rounds)
                    if memory_bound and row["threads"][t].get("memcpy"):
                        row["memcpy"] = {**row.get("memcpy", {}), t: row["threads"][t]["memcpy"]}
                rows.append(row)
                print(f"# {name} {spec}: done ({time.time() - started:.0f} s)", file=sys.stderr,
                      flush=True)
            os.remove(path)
            results.append(
                {"name": name, "type": dtype, "bytes": nbytes, "rows": rows, "memcpy": memcpy}
            )
            print_dataset(name, dtype, nbytes, rows, memcpy, out)
            out.flush()
        summary = summarize(results, out)
    finally:
        if own_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"# total {time.time() - started:.0f} s; load average {loadavg()}", file=out)
    if args.json_out:
        doc = {
            "tiledb_version": ".".join(map(str, tiledb.libtiledb.version())),
            "tdbf": tdbf,
            "mib": args.mib,
            "repeat": args.repeat,
            "rounds": args.rounds,
            "stat": args.stat,
            "ours_outputs": args.ours_outputs,
            "tile_bytes": TILE_BYTES,
            "threads": list(THREADS),
            "cpus": os.cpu_count(),
            "datasets": results,
            "summary": summary,
        }
        with open(args.json_out, "w") as f:
            json.dump(doc, f, indent=1, default=str)
    if args.check and (summary["larger_than_tiledb"] or summary["failed_where_tiledb_did_not"]):
        print("compare_tiledb: check FAILED", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
