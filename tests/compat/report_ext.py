"""Matrices and summaries of the extended suites (suites.py)."""

from __future__ import annotations

from collections import defaultdict

import suites
from report import _cell

TITLES = {
    "fixed2": "Fixed-size attributes, remaining filters (pipeline x datatype)",
    "var": "Var-size attributes (pipeline x dataset[/offsets variant])",
    "nullable": "Nullable attributes (pipeline x datatype[/validity variant])",
    "sparse": "Sparse arrays: dimensions (coordinates) and attributes (field x dimension type)",
    "webp": "WebP (mode x pixel format; 2-D dense UINT8, 2x2 tiles)",
}


def suite_of(r) -> str:
    return r.get("info", {}).get("suite", "base")


def _matrix(results, rows, cols, letters) -> str:
    groups = defaultdict(list)
    for r in results:
        groups[(r["pipeline"], r["dtype"], r["check"])].append(r)
    width = max(len(p) for p in rows) + 1
    colw = max(2 * len(letters) - 1, max(len(c) for c in cols)) + 2
    lines = ["".ljust(width) + "".join(c.rjust(colw) for c in cols)]
    for p in rows:
        line = p.ljust(width)
        for c in cols:
            line += " ".join(_cell(groups[(p, c, L)], L) for L in letters).rjust(colw)
        lines.append(line)
    return "\n".join(lines)


def _order(suite, results):
    rows, cols = suites.rows_and_cols(suite)
    seen_rows = {r["pipeline"] for r in results}
    seen_cols = {r["dtype"] for r in results}
    rows = [r for r in rows if r in seen_rows] + sorted(seen_rows - set(rows))
    cols = [c for c in cols if c in seen_cols] + sorted(seen_cols - set(cols))
    return rows, cols


def print_suites(results):
    by = defaultdict(list)
    for r in results:
        by[suite_of(r)].append(r)
    for suite in suites.SUITES:
        rs = by.get(suite)
        if not rs:
            continue
        rows, cols = _order(suite, rs)
        print()
        print(f"== {TITLES[suite]}")
        if suite in suites.LEGEND:
            print(f"   {suites.LEGEND[suite]}")
        print("Library checks  (D decode, E encode byte-identical / e differs for a documented reason and "
              "validated, S serialize)")
        print(_matrix(rs, rows, cols, ("D", "E", "S")))
        print("Harness checks  (P FORMAT.md model / reference decode / predicted TileDB defects, "
              "R TileDB reads our substituted tiles)")
        print(_matrix(rs, rows, cols, ("P", "R")))
    summary(results)


def summary(results):
    masked = [r for r in results if r["check"] == "E" and r["info"].get("masked_bytes")]
    if masked:
        n = sum(r["info"]["masked_bytes"] for r in masked)
        print()
        print(f"Masked (FORMAT.md §8.4, indeterminate BWR/PD window offsets): {n} byte(s) in "
              f"{len(masked)} field(s)")
        for r in masked[:12]:
            print(f"  {suite_of(r)}: {r['pipeline']} / {r['dtype']} / {r['shape']} / {r['tiles']}: "
                  f"{r['info']['masked_bytes']} byte(s), {r['info']['tiles_identical']} tile(s) identical, "
                  f"{r['info']['tiles_differing']} differing")
        if len(masked) > 12:
            print(f"  ... {len(masked) - 12} more")
    unwritable = [r for r in results if r["check"] == "P" and r["info"].get("tiledb_write_failed")]
    if unwritable:
        print()
        print(f"TileDB 2.30 cannot write {len(unwritable)} field(s) (checked on the library alone, 'e'):")
        for r in unwritable:
            print(f"  {suite_of(r)}: {r['pipeline']} / {r['dtype']} / {r['shape']} / {r['tiles']}: "
                  f"{r['detail'][:200]}")
    differs = [r for r in results if r["check"] in ("E", "D") and r["status"] == "differs"
               and not r["info"].get("tiledb_write_failed")]
    if differs:
        print()
        print(f"Documented differences ({len(differs)} check(s), lower-case letters):")
        for r in differs[:40]:
            print(f"  {r['check']} {suite_of(r)}: {r['pipeline']} / {r['dtype']} / {r['shape']}: "
                  f"{r['detail'][:260]}")
        if len(differs) > 40:
            print(f"  ... {len(differs) - 40} more (see --json)")


def failure_lines(results, limit: int = 80, width: int = 700) -> list[str]:
    out = []
    fails = [r for r in results if r["status"] == "fail"]
    for r in fails[:limit]:
        detail = r["detail"].replace("\n", " | ")
        if len(detail) > width:
            detail = detail[:width] + " ..."
        out.append(f"FAIL {r['check']} [{suite_of(r)}] {r['pipeline']} / {r['dtype']} / {r['shape']} / "
                   f"{r['tiles']}: {detail}")
    if len(fails) > limit:
        out.append(f"... {len(fails) - limit} more failures (see --json)")
    return out
