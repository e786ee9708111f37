#!/usr/bin/env python3
"""Interleaved A/B benchmark of two `tdbf` builds on the rows the uninitialised-output writer
(src/mem/uninit.rs) touches: filter (PartList::push_filled) and unfilter (the reverse driver's
output tile and every reverse stage's DataSink).

Each round runs every row on both binaries back to back (the order alternating between rounds),
each run being `tdbf bench --json` (itself the median of --repeat timed runs after a warm-up,
every round trip verified). Reported: per row and direction, the median over rounds of the
per-run medians for A and B, B/A, and the spread (min..max over rounds).

    python3 bench/ab_uninit.py --a OLD/tdbf --b NEW/tdbf --rounds 7 > table.txt

The data: int64 timestamps in microseconds, 1 ms ticks with +-50 us of jitter (as
bench/compare_tiledb.py's `timestamps`), 64 MiB, written to --data if absent (needs numpy).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

ROWS = [
    "none",
    "byteshuffle",
    "bitshuffle",
    "xor",
    "bit_width_reduction",
    "zstd",
    "lz4",
    "byteshuffle,zstd",
    "bitshuffle,lz4",
    "gzip",
    "double_delta",
    "delta",
    "positive_delta,bit_width_reduction,zstd",
]


def make_data(path, nbytes):
    import numpy as np

    rng = np.random.default_rng(20261126)
    n = nbytes // 8
    steps = 1000 + rng.integers(-50, 51, n, dtype=np.int64)
    t = 1_700_000_000_000_000 + np.cumsum(steps)
    t.astype("<i8").tofile(path)


def run(binary, spec, args):
    cmd = [
        binary, "bench", "--filters", spec, "--type", "int64",
        "--threads", str(args.threads), "--repeat", str(args.repeat),
        "--tile-bytes", args.tile_bytes, "--json", args.data,
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    j = json.loads(out)
    if j.get("round_trip") != "ok":
        raise SystemExit(f"{binary} {spec}: round trip {j.get('round_trip')}")
    return j["filter_mib_s"], j["unfilter_mib_s"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--a", required=True, help="tdbf binary A (old)")
    p.add_argument("--b", required=True, help="tdbf binary B (new)")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--tile-bytes", default="1MiB")
    p.add_argument("--data", default="/tmp/ab_uninit_timestamps.bin")
    p.add_argument("--rows", default=";".join(ROWS),
                   help="';'-separated pipeline specs")
    args = p.parse_args()
    if not os.path.exists(args.data):
        make_data(args.data, 64 << 20)
    rows = args.rows.split(";")
    res = {(r, w): {"filter": [], "unfilter": []} for r in rows for w in "ab"}
    for rnd in range(args.rounds):
        for r in rows:
            order = "ab" if (rnd + rows.index(r)) % 2 == 0 else "ba"
            for w in order:
                f, u = run(args.a if w == "a" else args.b, r, args)
                res[(r, w)]["filter"].append(f)
                res[(r, w)]["unfilter"].append(u)
        print(f"round {rnd + 1}/{args.rounds} done", file=sys.stderr, flush=True)

    print(f"# A = {args.a}\n# B = {args.b}")
    print(f"# {args.rounds} interleaved rounds x (tdbf bench --repeat {args.repeat}, median); "
          f"int64 timestamps, 64 MiB, tiles {args.tile_bytes}, threads {args.threads}, "
          "outputs streamed")
    print("# MiB/s: median over rounds [min..max]; B/A of the medians")
    print(f"{'pipeline':42} {'op':9} {'A (old)':>22} {'B (new)':>22} {'B/A':>6}")
    for r in rows:
        for op in ("filter", "unfilter"):
            a, b = res[(r, "a")][op], res[(r, "b")][op]
            ma, mb = statistics.median(a), statistics.median(b)
            fa = f"{ma:7.0f} [{min(a):5.0f}..{max(a):5.0f}]"
            fb = f"{mb:7.0f} [{min(b):5.0f}..{max(b):5.0f}]"
            print(f"{r:42} {op:9} {fa:>22} {fb:>22} {mb / ma:6.3f}")


if __name__ == "__main__":
    main()
