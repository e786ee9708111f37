"""Relinks ``libtdbfilter.so`` for an older glibc (manylinux) from the static library cargo built
beside it, with ``zig cc`` as the linker: no second compile.

Rust compiles the same code for every glibc version (the target is ``x86_64-unknown-linux-gnu``
either way); only the link decides which glibc symbol versions the library needs. Cargo builds
the C-ABI crate as a cdylib and a staticlib in one compile, so ``libtdbfilter.a`` holds the
objects of ``libtdbfilter.so``, Rust's standard library and the bundled C libraries. This module
links a shared library from that archive against zig's glibc stubs of the requested version
(``zig cc -target x86_64-linux-gnu.2.17``):

- every object of the archive (``--whole-archive``), then ``--gc-sections`` from the exports,
  as rustc links a cdylib;
- a version script exporting exactly the dynamic symbols of the cargo cdylib (``like``), and the
  cdylib's SONAME;
- zig's libunwind, linked in, in place of ``libgcc_s`` (as cargo-zigbuild does): Rust panics
  unwind to the ``catch_unwind`` of every C entry point as before;
- the C libraries Rust's standard library asks for (``-lutil -lrt -lpthread -lm -ldl -lc``,
  ``--as-needed``).

The result is checked before it is returned: the same exported symbols and SONAME as the cdylib,
no glibc symbol version above the requested one, and no needed library outside glibc's own.

Command line (used by scripts/test.d/42-wheel.sh)::

    python tdbfilter_relink.py --glibc 2.17 --like target/P/libtdbfilter.so \\
        -o OUT.so target/P/libtdbfilter.a

zig: ``TDBFILTER_ZIG`` (a command, e.g. ``/path/to/zig`` or ``python3 -m ziglang``), else the
executable of the ``ziglang`` package (PyPI) of this interpreter, else ``python-zig`` (ziglang's
script) or ``zig`` on PATH.
Only the standard library is used: the build backend imports this module in pip's isolated
environment, and the test command runs it without flit_core.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple, Optional

# ELF e_machine -> zig's architecture name.
_ARCHES = {62: "x86_64", 183: "aarch64"}
# Libraries a manylinux library may need that are part of glibc itself.
_GLIBC_LIBRARIES = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
                    "libutil.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
# What rustc passes for Rust's standard library on *-linux-gnu (-lgcc_s becomes -lunwind).
_SYSTEM_LIBS = ["-lunwind", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-lc"]


class DynamicInfo(NamedTuple):
    """What the dynamic linker sees of an ELF shared library."""

    machine: int
    soname: Optional[str]
    exports: frozenset  # defined dynamic symbols of default visibility, global or weak
    imports: frozenset  # undefined dynamic symbols that are not weak
    needed: tuple  # DT_NEEDED entries
    glibc: tuple  # the GLIBC_x.y versions required, as sorted (x, y) tuples


def read_dynamic(path: Path) -> DynamicInfo:
    """The exported symbols, SONAME, needed libraries and glibc versions of a 64-bit
    little-endian ELF shared library."""
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{path} is not a 64-bit little-endian ELF file")
    machine = struct.unpack_from("<H", data, 18)[0]
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]

    def body(sec):
        return data[sec[4]:sec[4] + sec[5]]

    def cstr(table: bytes, offset: int) -> str:
        return table[offset:table.index(b"\0", offset)].decode()

    exports, imports, needed, versions, soname = set(), set(), [], set(), None
    for sec in sections:
        kind, link = sec[1], sec[6]
        if kind == 11:  # SHT_DYNSYM
            names = body(sections[link])
            raw = body(sec)
            for off in range(24, len(raw), 24):  # entry 0 is the null symbol
                name, info, other, shndx = struct.unpack_from("<IBBH", raw, off)
                bind, visibility = info >> 4, other & 3
                if shndx != 0 and bind in (1, 2) and visibility == 0:
                    exports.add(cstr(names, name))
                elif shndx == 0 and bind == 1 and name:
                    imports.add(cstr(names, name))
        elif kind == 6:  # SHT_DYNAMIC
            names = body(sections[link])
            raw = body(sec)
            for off in range(0, len(raw), 16):
                tag, value = struct.unpack_from("<qQ", raw, off)
                if tag == 0:
                    break
                if tag == 1:
                    needed.append(cstr(names, value))
                elif tag == 14:
                    soname = cstr(names, value)
        elif kind == 0x6FFFFFFE:  # SHT_GNU_verneed
            names = body(sections[link])
            raw = body(sec)
            off = 0
            for _ in range(sec[7]):  # sh_info: the number of entries
                _, cnt, _, aux, nxt = struct.unpack_from("<HHIII", raw, off)
                a = off + aux
                for _ in range(cnt):
                    _, _, _, vname, anext = struct.unpack_from("<IHHII", raw, a)
                    m = re.fullmatch(r"GLIBC_(\d+)\.(\d+)(?:\.\d+)?", cstr(names, vname))
                    if m:
                        versions.add((int(m.group(1)), int(m.group(2))))
                    a += anext
                off += nxt
    return DynamicInfo(machine, soname, frozenset(exports), frozenset(imports), tuple(needed),
                       tuple(sorted(versions)))


def parse_glibc(text: str) -> tuple:
    """``"2.17"`` -> ``(2, 17)``; anything else is an error."""
    m = re.fullmatch(r"\s*2\.(\d+)\s*", text or "")
    if not m:
        raise ValueError(f"a glibc version is 2.N (for example 2.17), not {text!r}")
    return (2, int(m.group(1)))


def zig_command() -> list:
    """The command that runs zig (see the module's documentation)."""
    setting = os.environ.get("TDBFILTER_ZIG", "").strip()
    if setting:
        cmd = shlex.split(setting)
        if not shutil.which(cmd[0]):
            raise FileNotFoundError(f"TDBFILTER_ZIG={setting!r}: {cmd[0]} is not a program")
        return cmd
    spec = importlib.util.find_spec("ziglang")
    if spec is not None and spec.origin:
        # The package's executable itself: a `python -m ziglang` child would not find the
        # package in pip's isolated build environment, whose site-packages it adds itself.
        binary = Path(spec.origin).parent / "zig"
        if binary.is_file():
            return [str(binary)]
    for name in ("python-zig", "zig"):
        found = shutil.which(name)
        if found:
            return [found]
    raise FileNotFoundError(
        "relinking for an older glibc needs zig: `pip install ziglang`, or set TDBFILTER_ZIG "
        "to a zig command")


def zig_available() -> bool:
    """Whether :func:`zig_command` finds zig."""
    try:
        zig_command()
    except FileNotFoundError:
        return False
    return True


def relink(staticlib: Path, like: Path, output: Path, glibc: str = "2.17") -> DynamicInfo:
    """Links ``output`` from ``staticlib`` for glibc ``glibc``, exporting what the cdylib
    ``like`` exports under its SONAME; returns the checked result's :class:`DynamicInfo`."""
    staticlib, like, output = Path(staticlib).resolve(), Path(like).resolve(), Path(output)
    if not staticlib.is_file():
        raise FileNotFoundError(f"the static library to relink, {staticlib}, does not exist")
    version = parse_glibc(glibc)
    ref = read_dynamic(like)
    if ref.machine not in _ARCHES:
        raise ValueError(f"{like}: ELF machine {ref.machine} is not one zig links here")
    if not ref.exports or not ref.soname:
        raise ValueError(f"{like} exports no symbols or has no SONAME: not the cdylib")
    target = f"{_ARCHES[ref.machine]}-linux-gnu.{version[0]}.{version[1]}"
    with tempfile.TemporaryDirectory(prefix="tdbfilter-relink-") as tmp:
        script = Path(tmp) / "exports.map"
        script.write_text("{\n  global:\n"
                          + "".join(f"    {name};\n" for name in sorted(ref.exports))
                          + "  local: *;\n};\n")
        linked = Path(tmp) / "out.so"
        cmd = zig_command() + [
            "cc", "-target", target, "-O2", "-shared", "-o", str(linked),
            "-Wl,--whole-archive", str(staticlib), "-Wl,--no-whole-archive",
            f"-Wl,--version-script={script}", f"-Wl,-soname,{ref.soname}",
            "-Wl,--gc-sections", "-Wl,--strip-debug", "-Wl,-z,relro,-z,now",
            "-Wl,-z,noexecstack", "-Wl,--as-needed", *_SYSTEM_LIBS,
        ]
        print("tdbfilter: " + " ".join(cmd), file=sys.stderr, flush=True)
        # A Python wrapper of zig (python-zig, python -m ziglang) runs with its own
        # site-packages, not the build environment's that pip puts on PYTHONPATH.
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE")}
        proc = subprocess.run(cmd, cwd=tmp, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"zig cc failed to link {target} (exit status {proc.returncode})")
        got = read_dynamic(linked)
        problems = []
        if got.exports != ref.exports:
            problems.append(f"exports differ from {like}: missing "
                            f"{sorted(ref.exports - got.exports)[:5]}, extra "
                            f"{sorted(got.exports - ref.exports)[:5]}")
        if got.soname != ref.soname:
            problems.append(f"SONAME {got.soname!r}, not {ref.soname!r}")
        if got.glibc and got.glibc[-1] > version:
            problems.append(f"needs GLIBC_{got.glibc[-1][0]}.{got.glibc[-1][1]}")
        foreign = [n for n in got.needed if n not in _GLIBC_LIBRARIES]
        if foreign:
            problems.append(f"needs libraries outside glibc: {foreign}")
        unwinder = sorted(n for n in got.imports if n.startswith("_Unwind_"))
        if unwinder:
            problems.append(f"the unwinder is not linked in: {unwinder[:3]} are imported")
        if problems:
            raise RuntimeError(f"the library relinked for glibc {glibc}: " + "; ".join(problems))
        output.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(linked, output)
        os.chmod(output, 0o755)
    return got


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("staticlib", type=Path, help="libtdbfilter.a of a cargo build")
    parser.add_argument("--like", type=Path, required=True,
                        help="the cdylib of the same build: exports and SONAME to match")
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--glibc", default="2.17", help="oldest glibc to run on (default 2.17)")
    args = parser.parse_args(argv)
    info = relink(args.staticlib, args.like, args.output, args.glibc)
    newest = ".".join(map(str, info.glibc[-1])) if info.glibc else "none"
    print(f"{args.output}: {len(info.exports)} exports, SONAME {info.soname}, "
          f"newest GLIBC_{newest}, needs {', '.join(info.needed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
