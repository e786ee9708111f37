//! The folder tree is the architecture: every top-level module of `src/` is a layer, and no
//! layer's code imports from a layer above it (docs/ARCHITECTURE.md). Unit-test modules may drive a
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
