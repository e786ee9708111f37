#!/usr/bin/env python3
"""Checks the Julia package's `ccall`s against tdbfilter's C header, statically.

No Julia can run on this project's machines, so the Julia package is checked here instead:

* every `ccall((:name, libtdbfilter), Ret, (Args...), ...)` names a function of the header,
  with as many argument types as the C function has parameters, each argument type and the
  return type compatible with the C type (same integer width and signedness, `Csize_t` for
  `size_t`, pointers for pointers, `Cstring`/`Ptr{UInt8}` for `char *`, `Ptr{Cvoid}` only
  for `void *`, opaque handles and function pointers);
* every function of the header is called by at least one `ccall`;
* every constant of the header (`#define TDB_*`, the `tdb_status_t` enum) is defined in the
  package with the same value;
* the Julia mirror of each C struct passed by pointer has the C struct's fields, in order,
  with the same types.

Usage: check_ccalls.py [--header include/tdbfilter.h] [--package bindings/julia/TDBFilter]
       check_ccalls.py --self-test   (proves each kind of drift above is caught)
"""

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# ---------------------------------------------------------------------------------------------
# C side
# ---------------------------------------------------------------------------------------------

C_INTS = {
    "int8_t": ("int", 8, True), "uint8_t": ("int", 8, False),
    "int16_t": ("int", 16, True), "uint16_t": ("int", 16, False),
    "int32_t": ("int", 32, True), "uint32_t": ("int", 32, False),
    "int64_t": ("int", 64, True), "uint64_t": ("int", 64, False),
    "int": ("int", 32, True), "unsigned": ("int", 32, False),
}


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", " ", re.sub(r"//[^\n]*", " ", text), flags=re.S)


class Header:
    """Functions, typedefs, structs and constants of the C header."""

    def __init__(self, text):
        code = strip_comments(text)
        self.typedefs = {}  # name -> canonical type
        self.structs = {}  # name -> [(field, canonical type)]
        self.constants = {}  # name -> int
        self.functions = {}  # name -> (return type, [param types])
        for m in re.finditer(r"typedef\s+enum\s*\{(.*?)\}\s*(\w+)\s*;", code, re.S):
            self.typedefs[m.group(2)] = ("int", 32, True)  # a C enum is an int
            for item in m.group(1).split(","):
                if "=" in item:
                    name, value = (x.strip() for x in item.split("="))
                    self.constants[name] = int(value, 0)
        for m in re.finditer(r"typedef\s+struct\s+(\w+)\s+(\w+)\s*;", code):
            self.typedefs[m.group(2)] = ("opaque", m.group(2))
        for m in re.finditer(r"typedef\s+struct\s*\{(.*?)\}\s*(\w+)\s*;", code, re.S):
            self.typedefs[m.group(2)] = ("struct", m.group(2))
            fields = []
            for decl in m.group(1).split(";"):
                decl = decl.strip()
                if decl:
                    ctype, name = decl.rsplit(None, 1)
                    fields.append((name, ctype))
            self.structs[m.group(2)] = fields
        for m in re.finditer(r"typedef\s+[^;(]*\(\s*\*\s*(\w+)\s*\)\s*\([^;]*\)\s*;", code):
            self.typedefs[m.group(1)] = ("fnptr",)
        for m in re.finditer(r"typedef\s+(\w+)\s+(\w+)\s*;", code):
            if m.group(1) in C_INTS:
                self.typedefs[m.group(2)] = C_INTS[m.group(1)]
        for m in re.finditer(r"#define\s+(TDB_\w+)\s+(-?\d+)\b", code):
            self.constants[m.group(1)] = int(m.group(2))
        self.structs = {
            name: [(f, self.canon(t)) for f, t in fields] for name, fields in self.structs.items()
        }
        for m in re.finditer(r"^([A-Za-z_][\w\s\*]*?)\b(tdb_\w+)\s*\(([^;{]*?)\)\s*;", code, re.M | re.S):
            ret, name, params = m.group(1), m.group(2), " ".join(m.group(3).split())
            if ret.strip().startswith("typedef"):
                continue
            args = [] if params in ("", "void") else [self.param_type(p) for p in params.split(",")]
            self.functions[name] = (self.canon(ret), args)

    def param_type(self, param):
        param = param.strip()
        # Drop the parameter's name: the last identifier, unless the declaration is only a type.
        m = re.match(r"^(.*?[\s\*])(\w+)$", param)
        return self.canon(m.group(1) if m else param)

    def canon(self, ctype):
        t = " ".join(ctype.replace("*", " * ").split())
        t = re.sub(r"\bconst\b", "", t)
        t = " ".join(t.split())
        depth = t.count("*")
        base = t.replace("*", "").strip()
        if base == "void":
            c = ("void",)
        elif base == "char":
            c = ("char",)
        elif base == "bool":
            c = ("bool",)
        elif base == "size_t":
            c = ("size_t",)
        elif base in C_INTS:
            c = C_INTS[base]
        elif base in self.typedefs:
            c = self.typedefs[base]
        else:
            raise ValueError(f"unknown C type '{ctype}'")
        for _ in range(depth):
            c = ("ptr", c)
        return c


# ---------------------------------------------------------------------------------------------
# Julia side
# ---------------------------------------------------------------------------------------------

J_TYPES = {
    "Cint": ("int", 32, True), "Int32": ("int", 32, True),
    "Cuint": ("int", 32, False), "UInt32": ("int", 32, False),
    "Int8": ("int", 8, True), "Cchar": ("int", 8, True),
    "UInt8": ("int", 8, False), "Cuchar": ("int", 8, False),
    "Int16": ("int", 16, True), "Cshort": ("int", 16, True),
    "UInt16": ("int", 16, False), "Cushort": ("int", 16, False),
    "Int64": ("int", 64, True), "Clonglong": ("int", 64, True),
    "UInt64": ("int", 64, False), "Culonglong": ("int", 64, False),
    "Csize_t": ("size_t",), "Bool": ("bool",), "Cvoid": ("void",), "Cstring": ("cstring",),
}


def split_top(text, sep=","):
    """Splits at `sep` outside (), {} and []."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def balanced(text, start):
    """The text inside the parenthesis opening at `start`, and the index after it."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1:i], i + 1
    raise ValueError("unbalanced parentheses")


class Package:
    """The `ccall`s, constants, aliases and structs of the Julia sources."""

    def __init__(self, sources):
        self.ccalls = []  # (file:line, name, library, return type text, [arg type texts])
        self.aliases = {}
        self.structs = {}  # name -> [(field, type text)]
        self.constants = {}
        self.problems = []
        for path, text in sources:
            code = re.sub(r"#=.*?=#", "", text, flags=re.S)
            code = "\n".join(line.split("#", 1)[0] if not line.lstrip().startswith('"') else line
                             for line in code.split("\n"))
            for m in re.finditer(r"^\s*const\s+(\w+)\s*=\s*(Cvoid|Ptr\{[^}]*\}|\w+)\s*$", code, re.M):
                if m.group(2) in J_TYPES or m.group(2).startswith("Ptr{"):
                    self.aliases[m.group(1)] = m.group(2)
            for m in re.finditer(r"^\s*const\s+(TDB_\w+)\s*=\s*(?:\w+\()?(-?\d+)\)?\s*$", code, re.M):
                self.constants[m.group(1)] = int(m.group(2))
            for m in re.finditer(r"@enum\s+\w+(?:::\w+)?\s+begin(.*?)end", code, re.S):
                for item in m.group(1).split("\n"):
                    if "=" in item:
                        name, value = (x.strip() for x in item.split("="))
                        self.constants[name] = int(value)
            for m in re.finditer(r"^\s*(?:mutable\s+)?struct\s+(\w+)\s*\n(.*?)^\s*end", code, re.M | re.S):
                fields = re.findall(r"^\s*(\w+)::([\w{}]+)\s*$", m.group(2), re.M)
                if fields:
                    self.structs[m.group(1)] = fields
            for m in re.finditer(r"\bccall\s*\(", code):
                line = code.count("\n", 0, m.start()) + 1
                where = f"{path}:{line}"
                inner, _ = balanced(code, m.end() - 1)
                parts = split_top(inner)
                if len(parts) < 3:
                    self.problems.append(f"{where}: cannot read this ccall")
                    continue
                target = parts[0].strip()
                tm = re.match(r"^\(\s*:(\w+)\s*,\s*(\w+)\s*\)$", target)
                if not tm:
                    self.problems.append(f"{where}: ccall target '{target}' is not (:name, lib)")
                    continue
                args = parts[2].strip()
                if not (args.startswith("(") and args.endswith(")")):
                    self.problems.append(f"{where}: argument types '{args}' are not a tuple")
                    continue
                self.ccalls.append((where, tm.group(1), tm.group(2), parts[1].strip(),
                                    split_top(args[1:-1])))

    def canon(self, jtype):
        t = jtype.strip()
        for _ in range(10):
            if t in self.aliases:
                t = self.aliases[t]
        m = re.match(r"^(Ptr|Ref)\{(.*)\}$", t)
        if m:
            return ("ptr", self.canon(m.group(2)))
        if t in J_TYPES:
            return J_TYPES[t]
        if t in self.structs:
            return ("jstruct", t)
        raise ValueError(f"unknown Julia type '{jtype}'")


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------

def compatible(c, j, struct_map):
    """Whether Julia's canonical type `j` passes/returns C's canonical type `c` correctly."""
    if c == j:
        return True
    if c == ("bool",) and j == ("int", 8, False):
        return True
    if c == ("fnptr",):
        return False  # function pointers go as Ptr{Cvoid}, handled below
    if c[0] == "ptr" and j == ("cstring",):
        return c[1] == ("char",)
    if c[0] == "ptr" and j[0] == "ptr":
        ci, ji = c[1], j[1]
        if ji == ("void",):
            return ci in (("void",),) or ci[0] in ("opaque", "fnptr")
        if ci == ("char",):
            return ji in (("int", 8, True), ("int", 8, False))
        if ci[0] == "struct":
            return ji == ("jstruct", struct_map.get(ci[1]))
        if ci[0] == "opaque":
            return False
        return compatible(ci, ji, struct_map)
    if c == ("fnptr",) or (c[0] == "fnptr"):
        return False
    return False


def compatible_arg(c, j, struct_map):
    # A function pointer parameter is passed as Ptr{Cvoid} (a @cfunction pointer).
    if c == ("fnptr",):
        return j == ("ptr", ("void",))
    return compatible(c, j, struct_map)


def check(header_text, sources):
    header = Header(header_text)
    pkg = Package(sources)
    errors = list(pkg.problems)
    # The Julia mirrors of C structs: matched by field list.
    struct_map = {}
    for cname, cfields in header.structs.items():
        candidates = [j for j, jf in pkg.structs.items() if [f for f, _ in jf] == [f for f, _ in cfields]]
        if not candidates:
            errors.append(f"no Julia struct mirrors C struct {cname} (fields {[f for f, _ in cfields]})")
            continue
        jname = candidates[0]
        struct_map[cname] = jname
        for (cf, ct), (jf, jt) in zip(cfields, pkg.structs[jname]):
            try:
                jc = pkg.canon(jt)
            except ValueError as e:
                errors.append(f"struct {jname}.{jf}: {e}")
                continue
            if jc != ct:
                errors.append(f"struct {jname}.{jf} is {jt}, C field {cname}.{cf} is {ct}")
    called = set()
    for where, name, lib, ret, args in pkg.ccalls:
        if lib != "libtdbfilter":
            errors.append(f"{where}: {name} is called in '{lib}', not libtdbfilter")
        if name not in header.functions:
            errors.append(f"{where}: {name} is not a function of the header")
            continue
        called.add(name)
        cret, cargs = header.functions[name]
        try:
            jret = pkg.canon(ret)
        except ValueError as e:
            errors.append(f"{where}: {name}: return type: {e}")
            continue
        if not compatible(cret, jret, struct_map):
            errors.append(f"{where}: {name} returns {cret} in C, ccall says {ret}")
        if len(args) != len(cargs):
            errors.append(f"{where}: {name} takes {len(cargs)} arguments in C, ccall lists {len(args)}")
            continue
        for i, (ct, jt) in enumerate(zip(cargs, args)):
            try:
                jc = pkg.canon(jt)
            except ValueError as e:
                errors.append(f"{where}: {name} argument {i + 1}: {e}")
                continue
            if not compatible_arg(ct, jc, struct_map):
                errors.append(f"{where}: {name} argument {i + 1} is {ct} in C, ccall says {jt}")
    for name in sorted(set(header.functions) - called):
        errors.append(f"{name} (in the header) has no ccall in the Julia package")
    for name, value in sorted(header.constants.items()):
        if name not in pkg.constants:
            errors.append(f"constant {name} = {value} (in the header) is not defined in the Julia package")
        elif pkg.constants[name] != value:
            errors.append(f"constant {name} is {pkg.constants[name]} in Julia, {value} in the header")
    return errors, header, pkg


def read_sources(package):
    return [(str(p.relative_to(package.parent)), p.read_text()) for p in sorted(package.rglob("*.jl"))]


# ---------------------------------------------------------------------------------------------
# Self-test: each kind of drift is caught.
# ---------------------------------------------------------------------------------------------

MUTATIONS = [
    ("a size_t passed as UInt32",
     "(Ptr{UInt8}, Csize_t, UInt32, Ref{Ptr{PipelineHandle}}, Ref{Ptr{Error}})",
     "(Ptr{UInt8}, UInt32, UInt32, Ref{Ptr{PipelineHandle}}, Ref{Ptr{Error}})",
     "tdb_pipeline_deserialize argument 2"),
    ("a uint64_t passed as Int32",
     "(UInt32, UInt64, Ptr{Cvoid}, Csize_t, Ref{Ptr{TileHandle}}, Ref{Ptr{Error}})",
     "(UInt32, Int32, Ptr{Cvoid}, Csize_t, Ref{Ptr{TileHandle}}, Ref{Ptr{Error}})",
     "tdb_tile_create argument 2"),
    ("a misspelt function", "(:tdb_pipeline_set_threads, libtdbfilter)",
     "(:tdb_pipeline_set_thread, libtdbfilter)", "tdb_pipeline_set_thread is not a function"),
    ("a missing function", "(:tdb_tile_free, libtdbfilter)", "(:tdb_pipeline_free, libtdbfilter)",
     "tdb_tile_free (in the header) has no ccall"),
    ("an extra argument", "(Ptr{PipelineHandle}, Bool, Ref{Ptr{Error}}), pipeline, skip, error)",
     "(Ptr{PipelineHandle}, Bool, Bool, Ref{Ptr{Error}}), pipeline, skip, skip, error)",
     "tdb_pipeline_set_skip_checksum_validation takes 3 arguments in C, ccall lists 4"),
    ("a wrong return type", "ccall((:tdb_error_status, libtdbfilter), Cint,",
     "ccall((:tdb_error_status, libtdbfilter), Cvoid,", "tdb_error_status returns"),
    ("a signed/unsigned mix-up", "ccall((:tdb_pipeline_add_filter, libtdbfilter), Cint, (Ptr{PipelineHandle}, UInt32,",
     "ccall((:tdb_pipeline_add_filter, libtdbfilter), Cint, (Ptr{PipelineHandle}, Int32,",
     "tdb_pipeline_add_filter argument 2"),
    ("an opaque handle passed as a byte pointer", "tdb_tile_free, libtdbfilter), Cvoid, (Ptr{TileHandle},)",
     "tdb_tile_free, libtdbfilter), Cvoid, (Ptr{UInt8},)", "tdb_tile_free argument 1"),
    ("a wrong constant", "const TDB_FILTER_ZSTD = UInt32(2)", "const TDB_FILTER_ZSTD = UInt32(3)",
     "constant TDB_FILTER_ZSTD is 3 in Julia, 2 in the header"),
    ("a wrong status value", "TDB_ERR_CHECKSUM_MISMATCH = 3", "TDB_ERR_CHECKSUM_MISMATCH = 4",
     "constant TDB_ERR_CHECKSUM_MISMATCH is 4"),
    ("a struct field of the wrong width", "    filter_pipeline_size::UInt32", "    filter_pipeline_size::UInt64",
     "struct GenericTileHeader.filter_pipeline_size"),
]


def self_test(header_text, package):
    errors, _, _ = check(header_text, read_sources(package))
    assert not errors, "the package itself must pass:\n" + "\n".join(errors)
    failures = 0
    for what, old, new, expect in MUTATIONS:
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / package.name
            shutil.copytree(package, copy)
            hits = 0
            for path in copy.rglob("*.jl"):
                text = path.read_text()
                if old in text:
                    path.write_text(text.replace(old, new, 1))
                    hits += 1
                    break
            if hits == 0:
                print(f"self-test: mutation '{what}' found nothing to change", file=sys.stderr)
                failures += 1
                continue
            errors, _, _ = check(header_text, read_sources(copy))
            if not any(expect in e for e in errors):
                print(f"self-test: {what} was NOT caught (errors: {errors})", file=sys.stderr)
                failures += 1
            else:
                print(f"self-test: caught {what}")
    # Header drift: a function the package does not know.
    drifted = header_text.replace("const char *tdb_version(void);",
                                  "const char *tdb_version(void);\nvoid tdb_new_function(uint64_t x);")
    errors, _, _ = check(drifted, read_sources(package))
    if not any("tdb_new_function (in the header) has no ccall" in e for e in errors):
        print("self-test: a new header function was NOT caught", file=sys.stderr)
        failures += 1
    else:
        print("self-test: caught a header function without a ccall")
    if failures:
        sys.exit(f"self-test: {failures} kind(s) of drift not caught")
    print(f"self-test: all {len(MUTATIONS) + 1} kinds of drift caught")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--header", type=Path, default=ROOT / "include" / "tdbfilter.h")
    ap.add_argument("--package", type=Path, default=ROOT / "bindings" / "julia" / "TDBFilter")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    header_text = args.header.read_text()
    if args.self_test:
        self_test(header_text, args.package)
        return
    errors, header, pkg = check(header_text, read_sources(args.package))
    if errors:
        print("\n".join(errors), file=sys.stderr)
        sys.exit(f"check_ccalls: {len(errors)} problem(s)")
    print(f"check_ccalls: {len(pkg.ccalls)} ccalls match the {len(header.functions)} functions of "
          f"{args.header.name}; {len(header.constants)} constants and "
          f"{len(header.structs)} struct(s) match")


if __name__ == "__main__":
    main()
