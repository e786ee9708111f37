"""Comparisons of tdbfilter's cells with TileDB-Py's."""

from __future__ import annotations

import numpy as np


def assert_cells_equal(got, want, what: str) -> None:
    """Equal shapes, equal masks (nullable fields), equal valid cells (NaN equals NaN;
    object cells compared one by one)."""
    got_mask = np.ma.getmaskarray(got)
    want_mask = np.ma.getmaskarray(want)
    assert np.shape(got) == np.shape(want), f"{what}: shape {np.shape(got)} != {np.shape(want)}"
    assert (got_mask == want_mask).all(), f"{what}: null cells differ"
    g = np.ma.getdata(got)[~got_mask]
    w = np.ma.getdata(want)[~want_mask]
    if w.dtype == object:
        bad = [i for i, (a, b) in enumerate(zip(g.tolist(), w.tolist())) if a != b]
        assert not bad, f"{what}: {len(bad)} cells differ, first {g[bad[0]]!r} != {w[bad[0]]!r}"
    else:
        assert g.dtype == w.dtype, f"{what}: dtype {g.dtype} != {w.dtype}"
        assert np.array_equal(g, w, equal_nan=w.dtype.kind == "f"), f"{what}: cells differ"
