"""TileDB-Py's ``VFS`` for local paths (object stores: not yet)."""

from __future__ import annotations

import io
import os
import shutil

from ..errors import TdbfilterError as TileDBError


def _local(uri) -> str:
    p = str(uri)
    if p.startswith("file://"):
        return p[len("file://"):]
    if "://" in p:
        raise TileDBError(f"VFS on {p.split('://')[0]}:// URIs is not supported by tdbfilter's "
                          "TileDB-Py API yet")
    return p


class VFS:
    """File operations on local folders (TileDB-Py's ``tiledb.VFS``)."""

    def __init__(self, config=None, ctx=None):
        self._config = config

    def is_bucket(self, uri) -> bool:
        _local(uri)
        return False

    def is_dir(self, uri) -> bool:
        return os.path.isdir(_local(uri))

    def is_file(self, uri) -> bool:
        return os.path.isfile(_local(uri))

    def create_dir(self, uri) -> None:
        os.makedirs(_local(uri), exist_ok=True)

    def remove_dir(self, uri) -> None:
        shutil.rmtree(_local(uri), ignore_errors=True)

    def remove_file(self, uri) -> None:
        os.remove(_local(uri))

    def touch(self, uri) -> None:
        open(_local(uri), "a").close()

    def file_size(self, uri) -> int:
        return os.path.getsize(_local(uri))

    def dir_size(self, uri) -> int:
        total = 0
        for root, _, files in os.walk(_local(uri)):
            total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
        return total

    def ls(self, uri, recursive: bool = False):
        p = _local(uri)
        if recursive:
            out = []
            for root, dirs, files in os.walk(p):
                out += ["file://" + os.path.join(root, n) for n in dirs + files]
            return sorted(out)
        return sorted("file://" + os.path.join(p, n) for n in os.listdir(p))

    def move_dir(self, a, b) -> None:
        shutil.move(_local(a), _local(b))

    def move_file(self, a, b) -> None:
        shutil.move(_local(a), _local(b))

    def copy_file(self, a, b) -> None:
        shutil.copy(_local(a), _local(b))

    def open(self, uri, mode: str = "rb"):
        return open(_local(uri), mode if "b" in mode else mode + "b")

    def supports(self, scheme: str) -> bool:
        return scheme == "file"


class FileIO(io.RawIOBase):
    """A file of a VFS as a binary Python file (TileDB-Py's ``tiledb.FileIO``; modes
    "rb", "wb", "ab"; local files only, as :class:`VFS`)."""

    def __init__(self, vfs, uri, mode="rb"):
        super().__init__()
        if mode not in ("rb", "wb", "ab"):
            raise ValueError(f"invalid mode {mode!r}: FileIO takes 'rb', 'wb' or 'ab'")
        self._vfs = vfs
        self._uri = uri
        self._mode = mode
        self._f = open(_local(uri), mode)

    @property
    def mode(self) -> str:
        return self._mode

    def __len__(self) -> int:
        return os.path.getsize(_local(self._uri))

    def readable(self) -> bool:
        return self._mode == "rb"

    def writable(self) -> bool:
        return self._mode != "rb"

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()

    def readinto(self, buff) -> int:
        if not self.readable():
            raise IOError("Cannot read from write-only FileIO handle")
        return self._f.readinto(buff)

    def write(self, buff) -> int:
        if not self.writable():
            raise IOError("cannot write to read-only FileIO handle")
        if isinstance(buff, str):
            buff = buff.encode()
        return self._f.write(buff)

    def flush(self) -> None:
        self._f.flush()

    def close(self) -> None:
        if not self.closed:
            super().close()  # flushes first
            self._f.close()
