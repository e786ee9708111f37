"""TileDB-Py's ``FragmentInfoList`` / ``array_fragments`` over the C API's fragment list."""

from __future__ import annotations

import os

import numpy as np

from ..array import Array as _Inner


class FragmentInfo:
    """One fragment (TileDB-Py's ``tiledb.FragmentInfo``)."""

    def __init__(self, uri, name, frag, ned, schema):
        self.uri = uri
        self.name = name
        self.version = frag.version
        self.timestamp_range = tuple(frag.timestamps)
        self.cell_num = frag.cell_count
        self.dense = frag.dense
        self.sparse = not frag.dense
        self.has_consolidated_metadata = False
        self.to_vacuum = []
        self.nonempty_domain = ned
        self.array_schema_name = None

    def __repr__(self) -> str:
        return repr({"uri": self.uri, "timestamp_range": self.timestamp_range,
                     "cell_num": self.cell_num, "dense": self.dense,
                     "nonempty_domain": self.nonempty_domain, "version": self.version})


class FragmentInfoList:
    """The fragments of an array, oldest first (TileDB-Py's ``tiledb.FragmentInfoList``)."""

    def __init__(self, array_uri, include_mbrs: bool = False, ctx=None):
        from ._array import _schema_json
        from ._schema import ArraySchema

        self.array_uri = str(array_uri)
        inner = _Inner(self.array_uri)
        try:
            schema = ArraySchema._from_json(_schema_json(inner))
            self._infos = []
            for i, f in enumerate(inner.fragments):
                raw = inner.fragment_non_empty_domain(i)
                ned = []
                for d, (lo, hi) in zip(schema.domain, raw):
                    if d.isvar:
                        ned.append((bytes(lo).decode(), bytes(hi).decode()))
                    elif d.dtype.kind == "M":
                        unit = np.datetime_data(d.dtype)[0]
                        ned.append((np.datetime64(int(lo.view(np.int64)), unit),
                                    np.datetime64(int(hi.view(np.int64)), unit)))
                    else:
                        ned.append((lo.item(), hi.item()))
                uri = "file://" + os.path.join(os.path.abspath(self.array_uri),
                                               "__fragments", f.name)
                self._infos.append(FragmentInfo(uri, f.name, f, tuple(ned), schema))
            if include_mbrs:
                self.mbrs = tuple(tuple(tuple((lo.item(), hi.item()) for lo, hi in box)
                                        for box in inner.tile_mbrs(i))
                                  for i in range(len(inner.fragments)))
        finally:
            inner.close()

    def __len__(self) -> int:
        return len(self._infos)

    def __getitem__(self, i):
        return self._infos[i]

    def __iter__(self):
        return iter(self._infos)

    def _all(self, name):
        return tuple(getattr(f, name) for f in self._infos)

    @property
    def uri(self):
        return self._all("uri")

    @property
    def timestamp_range(self):
        return self._all("timestamp_range")

    @property
    def cell_num(self):
        return self._all("cell_num")

    @property
    def dense(self):
        return self._all("dense")

    @property
    def sparse(self):
        return self._all("sparse")

    @property
    def version(self):
        return self._all("version")

    @property
    def nonempty_domain(self):
        return self._all("nonempty_domain")

    @property
    def has_consolidated_metadata(self):
        return self._all("has_consolidated_metadata")

    @property
    def to_vacuum(self):
        return ()

    @property
    def unconsolidated_metadata_num(self):
        return len(self._infos)

    def __repr__(self) -> str:
        return "\n".join(f"{i}: {f!r}" for i, f in enumerate(self._infos))


def array_fragments(uri, include_mbrs: bool = False, ctx=None) -> FragmentInfoList:
    return FragmentInfoList(uri, include_mbrs=include_mbrs, ctx=ctx)
