"""``tiledb.multirange_indexing``: ``getitem_ranges``, ``mr_dense_result_shape`` and
``EstimatedResultSize``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._index import EmptyRange, getitem_ranges, is_empty_range  # noqa: F401


@dataclass
class EstimatedResultSize:
    """A field's estimated result size in bytes (``estimated_result_sizes``): its offsets
    (var-size fields, else 0) and its data."""

    offsets_bytes: int
    data_bytes: int


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
