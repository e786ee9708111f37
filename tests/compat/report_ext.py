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
        print("Harness checks  (P docs/FORMAT.md model / reference decode / predicted TileDB defects, "
              "R TileDB reads our substituted tiles)")
        print(_matrix(rs, rows, cols, ("P", "R")))
    summary(results)


def summary(results):
    webp = [r for r in results if suite_of(r) == "webp" and r["check"] == "E"]
    if webp:
        same = sum(r["info"].get("tiles_identical", 0) for r in webp)
        diff = sum(r["info"].get("tiles_differing", 0) for r in webp)
        print()
        print(f"WebP encode: {same} tile(s) byte-identical to TileDB's, {diff} differing (validated, see E)")
    masked = [r for r in results if r["check"] == "E" and r["info"].get("masked_bytes")]
    if masked:
        n = sum(r["info"]["masked_bytes"] for r in masked)
        print()
        print(f"Masked (docs/FORMAT.md §8.4, indeterminate BWR/PD window offsets): {n} byte(s) in "
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
        print(f"TileDB 2.30 cannot write {len(unwritable)} field(s); the library was checked alone ('e': it "
              f"refuses too or writes a tile that decodes with it and with refdecode_ext):")
        for (suite, pipe, what), cases in _group(unwritable, _write_outcome).items():
            print(f"  {suite}: {pipe}: {what}  [{_cases(cases)}]")
    differs = [r for r in results if r["check"] in ("E", "D") and r["status"] == "differs"
               and not r["info"].get("tiledb_write_failed")]
    if differs:
        print()
        print(f"Documented differences ({len(differs)} check(s), lower-case letters; details in --json):")
        for (suite, pipe, what), cases in _group(differs, _difference).items():
            print(f"  {suite}: {pipe}: {what}  [{_cases(cases)}]")


def _group(results, keyfn):
    out = {}
    for r in results:
        out.setdefault((suite_of(r), r["pipeline"], keyfn(r)), []).append(r)
    return out


def _cases(rs) -> str:
    names = sorted({f"{r['check']} " * (r["check"] in "DE") + "/".join(
        x for x in (r["dtype"], r["shape"], r["tiles"]) if x != r["dtype"].split("/")[0] or x is r["dtype"])
        for r in rs})
    return ", ".join(names[:6]) + (f", +{len(names) - 6} more" if len(names) > 6 else "")


def _write_outcome(r) -> str:
    d = r["detail"].replace("TileDB cannot write: ", "")
    d = d.replace("TileDB internal: [OrderedWriter::dowork]  ", "").split(" (predicted")[0]
    observed = "not predicted; " if "observed, not predicted" in d else ""
    d = d.replace("observed, not predicted: ", "")
    return observed + d[:150]


def _difference(r) -> str:
    d = r["detail"]
    for key, text in (("TileDB's tile is unreadable", "TileDB wrote a tile it cannot read; ours validated"),
                      ("TileDB cannot read it either", "TileDB's tile is unreadable; the library refuses it too"),
                      ("indeterminate BWR/PD", "differs only through TileDB's uninitialized BWR/PD offsets "
                                               "under later filters; ours validated"),
                      ("WebP", "WebP encoder output differs; ours validated"),
                      ("decoded, although TileDB cannot read it", "the library decodes a tile TileDB cannot")):
        if key in d:
            return text
    return d[:120]


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
