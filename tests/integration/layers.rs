//! The folder tree is the architecture: every top-level module of `src/` is a layer, and no
//! layer's code imports from a layer above it (README "Layout"). Unit-test modules may drive a
//! filter through the whole pipeline, so `#[cfg(test)]` modules and `tests.rs`/`testing.rs`
//! files are not counted.

use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first. The C ABI (`ffi/`) and the `tdbf` tool (`cli/`) are crates of
/// their own on top of this one.
const LAYERS: &[&str] = &[
    "error", "mem", "kernels", "codecs", "format", "engine", "filters", "pipeline", "storage",
    "array", "group",
];

fn rank(name: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == name)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's text with its `#[cfg(test)]` modules blanked out (braces counted; test modules
/// hold no unbalanced braces in strings).
fn production_code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        let is_test_mod = line.trim() == "#[cfg(test)]"
            && lines.peek().is_some_and(|next| {
                let t = next.trim_start();
                t.starts_with("mod ") || t.starts_with("pub(crate) mod ")
            });
        if !is_test_mod {
            out.push_str(line);
            continue;
        }
        let header = lines.next().unwrap();
        out.push_str("\n\n");
        if header.trim_end().ends_with(';') {
            continue;
        }
        let mut depth = header.matches('{').count() as i64 - header.matches('}').count() as i64;
        while depth > 0 {
            let Some(l) = lines.next() else { break };
            depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
            out.push('\n');
        }
    }
    out
}

#[test]
fn every_top_level_module_is_a_layer() {
    let lib = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let mut declared = Vec::new();
    for line in lib.lines() {
        if let Some(rest) = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("pub(crate) mod "))
            .or_else(|| line.strip_prefix("mod "))
        {
            declared.push(rest.trim_end_matches(';').to_string());
        }
    }
    let mut ranks: Vec<usize> = Vec::new();
    for m in &declared {
        ranks.push(
            rank(m).unwrap_or_else(|| panic!("src/lib.rs declares `{m}`, which is not in LAYERS")),
        );
    }
    assert!(
        ranks.windows(2).all(|w| w[0] < w[1]),
        "src/lib.rs declares the layers out of order: {declared:?} (want the order of {LAYERS:?})"
    );
}

#[test]
fn no_layer_imports_from_a_layer_above() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    let mut checked = 0;
    for path in &files {
        let rel = path.strip_prefix(&src).unwrap();
        let top = rel
            .iter()
            .next()
            .unwrap()
            .to_str()
            .unwrap()
            .trim_end_matches(".rs");
        let Some(own) = rank(top) else { continue };
        let name = path.file_name().unwrap().to_str().unwrap();
        if name == "tests.rs" || name == "testing.rs" {
            continue;
        }
        checked += 1;
        let text = fs::read_to_string(path).unwrap();
        let code = production_code(&text);
        for (i, line) in code.lines().enumerate() {
            let mut rest = line;
            while let Some(p) = rest.find("crate::") {
                let after = &rest[p + 7..];
                let dep: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if let Some(r) = rank(&dep)
                    && r > own
                {
                    violations.push(format!(
                        "src/{}:{}: {top} imports {dep}",
                        rel.display(),
                        i + 1
                    ));
                }
                rest = after;
            }
        }
    }
    assert!(checked > 50, "only {checked} source files were checked");
    assert!(
        violations.is_empty(),
        "imports from a higher layer:\n{}",
        violations.join("\n")
    );
}

/// The storage layer knows nothing of the format: besides the standard library and its
/// object-store crates it uses only `error`.
#[test]
fn storage_uses_only_error() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/storage");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    assert!(files.len() >= 4, "src/storage has {} files", files.len());
    let mut violations = Vec::new();
    for path in &files {
        let code = production_code(&fs::read_to_string(path).unwrap());
        for (i, line) in code.lines().enumerate() {
            let mut rest = line;
            while let Some(p) = rest.find("crate::") {
                let after = &rest[p + 7..];
                let dep: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if dep != "error" {
                    violations.push(format!("{}:{}: crate::{dep}", path.display(), i + 1));
                }
                rest = after;
            }
        }
    }
    assert!(
        violations.is_empty(),
        "src/storage uses more than error:\n{}",
        violations.join("\n")
    );
}

/// The sub-layers of `src/array/`, lowest first: the shared core, then reads and writes (which
/// never import each other), then queries and lifecycle operations. `mod.rs` is the facade:
/// it declares the modules and re-exports their public items.
fn array_rank(module: &str) -> Option<(usize, &'static str)> {
    const CORE: &[&str] = &[
        "directory",
        "field",
        "fragment",
        "geometry",
        "metadata",
        "open",
        "order",
        "rtree",
        "schema",
        "subarray",
        "value",
    ];
    Some(match module {
        m if CORE.contains(&m) => (0, "core"),
        "read" => (1, "read"),
        "write" => (1, "write"),
        "query" => (2, "query"),
        "lifecycle" => (2, "lifecycle"),
        _ => return None,
    })
}

/// The names `src/array/mod.rs` re-exports, with the sub-module each comes from
/// (`pub use open::{Array, Fragment};` gives Array → open).
fn facade_names(mod_rs: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let code: String = mod_rs
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    for stmt in code.split(';') {
        let s = stmt.trim();
        let Some(rest) = s
            .strip_prefix("pub use ")
            .or_else(|| s.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let module: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let names: Vec<String> = if let (Some(a), Some(b)) = (rest.find('{'), rest.rfind('}')) {
            rest[a + 1..b]
                .split(',')
                .map(|n| n.trim().to_string())
                .collect()
        } else {
            vec![rest.to_string()]
        };
        for n in names {
            let last = n.rsplit(" as ").next().unwrap_or(&n);
            let last = last.rsplit("::").next().unwrap_or(last).trim();
            if !last.is_empty() {
                out.push((last.to_string(), module.clone()));
            }
        }
    }
    out
}

/// The first identifier of each path in `s`, a path continuing after `prefix` (`read::x`,
/// `{Array, read::x}` gives both).
fn path_heads(s: &str) -> Vec<String> {
    let ident = |t: &str| -> String {
        t.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let s = s.trim_start();
    if let Some(inner) = s.strip_prefix('{') {
        let mut depth = 1;
        let mut end = inner.len();
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let mut heads = Vec::new();
        let mut depth = 0;
        let mut start = 0;
        let body = &inner[..end];
        for (i, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    heads.push(ident(&body[start..i]));
                    start = i + 1;
                }
                _ => {}
            }
        }
        heads.push(ident(&body[start..]));
        heads.retain(|h| !h.is_empty());
        heads
    } else {
        vec![ident(s)]
    }
}

/// The imports across the sub-layers of `src/array/` that go downward-only rules forbid.
/// `files` are (path under `src/array/`, production code); `facade` the text of
/// `src/array/mod.rs`. `crate::array::…`, `super::…` (resolved against the file's module) and
/// the facade's re-exports are all resolved to the sub-module that defines the item.
fn array_violations(files: &[(String, String)], facade: &str) -> Vec<String> {
    let names = facade_names(facade);
    let mut out = Vec::new();
    for (rel, text) in files {
        if rel == "mod.rs" {
            continue;
        }
        // The file's module path under `array`: read/sparse.rs → [read, sparse];
        // read/mod.rs → [read].
        let mut module: Vec<String> = rel
            .trim_end_matches(".rs")
            .split('/')
            .map(String::from)
            .collect();
        if module.last().is_some_and(|m| m == "mod") {
            module.pop();
        }
        let Some((own, own_name)) = module.first().and_then(|m| array_rank(m)) else {
            continue;
        };
        // Comments blanked (line numbers kept); use groups may span lines.
        let code: String = text
            .lines()
            .map(|l| {
                if l.trim_start().starts_with("//") {
                    ""
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let line_of = |at: usize| code[..at].matches('\n').count();
        let mut found: Vec<(usize, String)> = Vec::new();
        {
            let mut at = 0;
            while let Some(p) = code[at..].find("crate::array::") {
                let start = at + p + 14;
                for h in path_heads(&code[start..]) {
                    found.push((line_of(start), h));
                }
                at = start;
            }
            let mut at = 0;
            while let Some(p) = code[at..].find("super::") {
                let pos = at + p;
                at = pos + 7;
                if code[..pos]
                    .ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':')
                {
                    continue;
                }
                let mut levels = 1;
                let mut after = &code[pos + 7..];
                while let Some(a) = after.strip_prefix("super::") {
                    levels += 1;
                    after = a;
                }
                at = code.len() - after.len();
                // `super` from a file's module: its parent (levels up from the module itself).
                if module.len() >= levels {
                    let base = &module[..module.len() - levels];
                    if let Some(first) = base.first() {
                        found.push((line_of(pos), first.clone()));
                    } else {
                        for h in path_heads(after) {
                            found.push((line_of(pos), h));
                        }
                    }
                }
            }
        }
        for (i, t) in found {
            {
                let module_of = names
                    .iter()
                    .find(|(n, _)| *n == t)
                    .map(|(_, m)| m.clone())
                    .unwrap_or(t.clone());
                let Some((r, name)) = array_rank(&module_of) else {
                    continue;
                };
                if r > own || (r == own && r > 0 && name != own_name) {
                    out.push(format!(
                        "src/array/{rel}:{}: {own_name} imports {name} (crate::array::{t})",
                        i + 1
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn array_sub_layers_import_only_downward() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/array");
    let mut paths = Vec::new();
    rust_files(&dir, &mut paths);
    let mut files = Vec::new();
    for path in &paths {
        let name = path.file_name().unwrap().to_str().unwrap();
        if name == "tests.rs" || name == "testing.rs" {
            continue;
        }
        let rel = path
            .strip_prefix(&dir)
            .unwrap()
            .to_str()
            .unwrap()
            .replace('\\', "/");
        files.push((rel, production_code(&fs::read_to_string(path).unwrap())));
    }
    assert!(
        files.len() > 25,
        "only {} files under src/array",
        files.len()
    );
    let facade = fs::read_to_string(dir.join("mod.rs")).unwrap();
    let v = array_violations(&files, &facade);
    assert!(
        v.is_empty(),
        "imports against src/array's sub-layers:\n{}",
        v.join("\n")
    );
}

/// The checker finds planted imports: read → write, core → read (by `crate::array::`, through
/// the facade, and by `super::`), write → query; and lets the allowed ones pass.
#[test]
fn array_layer_checker_reports_planted_imports() {
    let facade = "pub mod open;\npub use open::{Array, Fragment};\npub use write::{Writer, WriteLayout};\npub use fragment::metadata as fragment_metadata;\n";
    let file = |p: &str, t: &str| (p.to_string(), t.to_string());
    let allowed = [
        file(
            "read/sparse.rs",
            "use crate::array::order::compare;\nuse super::tiles::TileReader;\nuse crate::array::{Array, fragment_metadata};\n",
        ),
        file(
            "write/mod.rs",
            "use crate::array::schema::ArraySchema;\nuse super::open::Array;\n",
        ),
        file(
            "query/mod.rs",
            "use crate::array::read::dense;\nuse crate::array::write::Writer;\n",
        ),
        file(
            "order/check.rs",
            "use super::global::Cells;\nuse super::super::schema::Dimension;\n",
        ),
        file(
            "open.rs",
            "use super::directory::names;\n// see crate::array::read::dense\n",
        ),
    ];
    assert_eq!(array_violations(&allowed, facade), Vec::<String>::new());
    let planted = [
        file(
            "read/verify.rs",
            "use crate::array::write::tile_metadata::has_min_max;\n",
        ),
        file(
            "read/dense.rs",
            "use crate::array::{\n    value,\n    write::dense::DimBox,\n};\n",
        ),
        file("read/tiles.rs", "use super::super::write::fragment;\n"),
        file("read/sparse.rs", "use crate::array::Writer;\n"),
        file("rtree.rs", "use super::read::sparse;\n"),
        file("order/global.rs", "use crate::array::write::Writer;\n"),
        file(
            "open.rs",
            "    crate::array::read::dense::read(self, &refs, None)\n",
        ),
        file("write/mod.rs", "use crate::array::query::Query;\n"),
        file("schema/mod.rs", "use crate::array::lifecycle::vacuum;\n"),
    ];
    let v = array_violations(&planted, facade);
    let expect = [
        "src/array/read/verify.rs:1: read imports write",
        "src/array/read/dense.rs:1: read imports write",
        "src/array/read/tiles.rs:1: read imports write",
        "src/array/read/sparse.rs:1: read imports write",
        "src/array/rtree.rs:1: core imports read",
        "src/array/order/global.rs:1: core imports write",
        "src/array/open.rs:1: core imports read",
        "src/array/write/mod.rs:1: write imports query",
        "src/array/schema/mod.rs:1: core imports lifecycle",
    ];
    assert_eq!(v.len(), expect.len(), "{v:#?}");
    for (got, want) in v.iter().zip(expect) {
        assert!(got.starts_with(want), "{got} (want {want})");
    }
}

/// The core crate knows nothing of C: no `extern "C"` function, no exported symbol, no C
/// string or C integer types (those belong to the `tdbfilter-ffi` crate in `ffi/`).
#[test]
fn the_core_has_no_c_interface() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    for path in &files {
        let code = production_code(&fs::read_to_string(path).unwrap());
        for (i, line) in code.lines().enumerate() {
            let code_part = line.split("//").next().unwrap_or("");
            for c_thing in ["extern \"C\"", "no_mangle", "c_char", "CStr", "CString"] {
                if code_part.contains(c_thing) {
                    violations.push(format!("{}:{}: {c_thing}", path.display(), i + 1));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "C interface items in the core crate (they belong in ffi/):\n{}",
        violations.join("\n")
    );
}
