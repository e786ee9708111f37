#!/usr/bin/env python3
"""Interleaved A/B benchmark of two `tdbf` builds on the rows the uninitialised-output writer
(src/mem/uninit.rs) touches: filter (PartList::push_filled) and unfilter (the reverse driver's
output tile and every reverse stage's DataSink).

Each round runs every row on both binaries back to back (the order alternating between rounds),
each run being `tdbf bench --json` (--repeat timed runs after a warm-up, every round trip
verified). On a shared, loaded machine the per-run speed used is the best of the repeats (the
run least disturbed by other processes), and A and B are compared within each round (they ran
back to back): reported per row and direction are the medians over rounds of A's and B's
speeds with their spread (min..max), and the median over rounds of the paired ratio B/A with
its spread.

    python3 bench/ab_uninit.py --a OLD/tdbf --b NEW/tdbf --rounds 7 > table.txt

The data: int64 timestamps in microseconds, 1 ms ticks with +-50 us of jitter (as
bench/compare_tiledb.py's `timestamps`), --data-mib MiB (64), written to --data if absent
(needs numpy).
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
    if args.cpu:
        cmd = [binary, spec, "int64", args.data, str(args.tile_bytes), str(args.repeat)]
    else:
        cmd = [
            binary, "bench", "--filters", spec, "--type", "int64",
            "--threads", str(args.threads), "--repeat", str(args.repeat),
            "--tile-bytes", str(args.tile_bytes), "--json", args.data,
        ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    j = json.loads(out)
    if j.get("round_trip") != "ok":
        raise SystemExit(f"{binary} {spec}: round trip {j.get('round_trip')}")
    if args.cpu:
        return j["filter_mib_s"], j["unfilter_mib_s"]
    return j["filter_mib_s_best"], j["unfilter_mib_s_best"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--a", required=True, help="tdbf binary A (old)")
    p.add_argument("--b", required=True, help="tdbf binary B (new)")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--tile-bytes", type=int, default=1 << 20)
    p.add_argument("--cpu", action="store_true",
                   help="--a/--b are builds of bench/rust/cpu_speed.rs (thread CPU time, median "
                        "of the repeats) instead of tdbf (wall time, best of the repeats)")
    p.add_argument("--data-mib", type=int, default=64)
    p.add_argument("--data", help="data file [default: /tmp/ab_uninit_timestamps_<MiB>.bin]")
    p.add_argument("--rows", default=";".join(ROWS),
                   help="';'-separated pipeline specs")
    args = p.parse_args()
    args.data = args.data or f"/tmp/ab_uninit_timestamps_{args.data_mib}.bin"
    if not os.path.exists(args.data):
        make_data(args.data, args.data_mib << 20)
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
    tool = "cpu_speed (thread CPU time, median" if args.cpu else "tdbf bench (wall time, best"
    print(f"# {args.rounds} interleaved rounds x {tool} of --repeat {args.repeat}); "
          f"int64 timestamps, {os.path.getsize(args.data) >> 20} MiB, tiles {args.tile_bytes}, "
          f"threads {args.threads}, "
          "outputs released at once")
    print("# MiB/s: median over rounds [min..max]; "
          "B/A: median over rounds of the paired ratio [min..max]")
    print(f"{'pipeline':40} {'op':8} {'A (old) MiB/s':>20} {'B (new) MiB/s':>20} "
          f"{'B/A paired':>20}")
    for r in rows:
        for op in ("filter", "unfilter"):
            a, b = res[(r, "a")][op], res[(r, "b")][op]
            q = [y / x for x, y in zip(a, b)]
            fa = f"{statistics.median(a):6.0f} [{min(a):4.0f}..{max(a):4.0f}]"
            fb = f"{statistics.median(b):6.0f} [{min(b):4.0f}..{max(b):4.0f}]"
            fq = f"{statistics.median(q):5.3f} [{min(q):.2f}..{max(q):.2f}]"
            print(f"{r:40} {op:8} {fa:>20} {fb:>20} {fq:>20}")


if __name__ == "__main__":
    main()
