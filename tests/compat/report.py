"""Matrix and summary output for the compat harness."""

from __future__ import annotations

import json
from collections import defaultdict

PASSING = ("pass", "differs")


def _cell(results, letter: str) -> str:
    """One letter for a group of results of the same check."""
    if not results:
        return "."
    if any(r["status"] == "fail" for r in results):
        return "x"
    if any(r["status"] == "differs" for r in results):
        return letter.lower()
    if all(r["status"] == "skip" for r in results):
        return "."
    return letter


def matrix(results, pipelines, dtypes, letters) -> str:
    groups = defaultdict(list)
    for r in results:
        groups[(r["pipeline"], r["dtype"], r["check"])].append(r)
    width = max(len(p) for p in pipelines) + 1
    colw = max(2 * len(letters) - 1, max(len(d) for d in dtypes)) + 2
    lines = ["".ljust(width) + "".join(d.rjust(colw) for d in dtypes)]
    for p in pipelines:
        row = p.ljust(width)
        for d in dtypes:
            row += " ".join(_cell(groups[(p, d, L)], L) for L in letters).rjust(colw)
        lines.append(row)
    return "\n".join(lines)


def counts(results) -> tuple[int, int]:
    passed = sum(1 for r in results if r["status"] in PASSING)
    failed = sum(1 for r in results if r["status"] == "fail")
    return passed, failed


def lz4_summary(results) -> dict:
    identical = differing = parts = 0
    for r in results:
        if r["check"] == "E" and "lz4_parts_checked_with_python_lz4" in r["info"]:
            identical += r["info"]["tiles_identical"]
            differing += r["info"]["tiles_differing"]
            parts += r["info"]["lz4_parts_checked_with_python_lz4"]
    return {"tiles_identical": identical, "tiles_differing": differing,
            "lz4_parts_decoded_by_python_lz4": parts}


def failure_lines(results, limit: int = 60, width: int = 600) -> list[str]:
    out = []
    fails = [r for r in results if r["status"] == "fail"]
    for r in fails[:limit]:
        detail = r["detail"].replace("\n", " | ")
        if len(detail) > width:
            detail = detail[:width] + " ..."
        out.append(f"FAIL {r['check']} {r['pipeline']} / {r['dtype']} / {r['shape']} / {r['tiles']}: {detail}")
    if len(fails) > limit:
        out.append(f"... {len(fails) - limit} more failures (see --json)")
    return out


def print_report(results, pipelines, dtypes, header_lines=(), final_line=True):
    for line in header_lines:
        print(line)
    print()
    print("Library checks  (D = decode TileDB tiles, E = encode byte-identical, e = encode differs "
          "but validates [LZ4, or a tile TileDB cannot write], S = pipeline (de)serialize; x = failed, . = not run)")
    print(matrix(results, pipelines, dtypes, ("D", "E", "S")))
    print()
    print("Harness checks  (P = schema bytes/chunking/Python reference decode agree with docs/FORMAT.md, "
          "R = TileDB-Py reads our substituted same-size tiles; . = not run)")
    print(matrix(results, pipelines, dtypes, ("P", "R")))
    lz = lz4_summary(results)
    if lz["tiles_identical"] or lz["tiles_differing"]:
        print()
        print(f"LZ4 (informational): {lz['tiles_identical']} tiles byte-identical to TileDB, "
              f"{lz['tiles_differing']} differ (validated); {lz['lz4_parts_decoded_by_python_lz4']} "
              f"LZ4 parts of differing tiles decoded with lz4.block.decompress")
    unwritable = [r for r in results if r["check"] == "E" and r["info"].get("tiledb_write_failed")]
    if unwritable:
        print()
        print(f"TileDB 2.30 could not write {len(unwritable)} attribute(s) (GZIP capacity defect, "
              f"docs/FORMAT.md §5.3; shown as 'e'); the library's tiles for them were validated instead:")
        for r in unwritable:
            print(f"  {r['pipeline']} / {r['dtype']} / {r['shape']} / {r['tiles']}")
    fl = failure_lines(results)
    if fl:
        print()
        print("\n".join(fl))
    passed, failed = counts(results)
    if final_line:
        print()
        print(f"{passed} passed, {failed} failed")
    return passed, failed


def write_json(path, results, meta):
    passed, failed = counts(results)
    doc = dict(meta)
    doc.update({"passed": passed, "failed": failed, "lz4": lz4_summary(results), "results": results})
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
