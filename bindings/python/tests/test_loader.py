"""The loader's order: the library bundled in the package (a wheel's) first, then
TDBFILTER_LIBRARY, then the installed ones."""

import importlib.util
import shutil
from pathlib import Path

import tdbfilter
from tdbfilter import _lib


def load_lib_module(folder: Path):
    spec = importlib.util.spec_from_file_location("tdbfilter_lib_copy", folder / "_lib.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bundled_library_comes_first(tmp_path, monkeypatch):
    package = tmp_path / "tdbfilter"
    package.mkdir()
    shutil.copy(Path(_lib.__file__), package / "_lib.py")
    copy = load_lib_module(package)
    real = tdbfilter._ffi.lib().path
    monkeypatch.setenv("TDBFILTER_LIBRARY", "/elsewhere/libtdbfilter.so")
    assert copy._candidates() == ["/elsewhere/libtdbfilter.so"]  # nothing bundled
    # The real library, copied where a wheel puts it: loaded even with TDBFILTER_LIBRARY set.
    shutil.copy(real, package / copy.BUNDLED)
    bundled = str((package / copy.BUNDLED).resolve())
    assert copy._candidates() == [bundled, "/elsewhere/libtdbfilter.so"]
    assert copy.load().path == bundled
    monkeypatch.delenv("TDBFILTER_LIBRARY")
    assert copy._candidates()[0] == bundled and len(copy._candidates()) > 1
