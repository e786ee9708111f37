"""``tiledb.multirange_indexing``: ``getitem_ranges`` and ``mr_dense_result_shape``."""

from __future__ import annotations

import numpy as np

from ._index import EmptyRange, _mi_ranges  # noqa: F401


def getitem_ranges(array, idx):
    """The inclusive ranges of a ``multi_index`` selection, a tuple per dimension."""
    ranges = _mi_ranges(array, idx)
    if ranges is None:
        return tuple(() for _ in range(array.schema.ndim))
    return tuple(tuple(r) for r in ranges)


def mr_dense_result_shape(ranges, base_shape=None):
    """The shape of a dense ``multi_index`` result over ``ranges``."""
    shape = []
    for i, rs in enumerate(ranges):
        if rs:
            n = 0
            for lo, hi in rs:
                if isinstance(lo, np.datetime64):
                    n += int((hi - lo).astype(np.int64)) + 1
                else:
                    n += int(hi) - int(lo) + 1
            shape.append(n)
        elif base_shape is not None:
            shape.append(base_shape[i])
        else:
            raise ValueError("Missing required base_shape for whole-dimension slices")
    return tuple(shape)
