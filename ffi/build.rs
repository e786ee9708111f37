//! Generates the C header `tdbfilter.h` from the `extern "C"` layer in `ffi/src/` with cbindgen.
//!
//! The header is always written to `$OUT_DIR/include/tdbfilter.h`. The committed copy,
//! `include/tdbfilter.h` in the workspace root, is rewritten (only when its content changes) in
//! builds of this repository's own checkout alone, recognised by a `.git` entry in the workspace
//! root (a directory in a clone, a file in a `git worktree`). A crate built from the registry,
//! a vendored copy or an unpacked `cargo package` has none, so a consumer's source tree is never
//! written to. CI's drift check (`git diff include/tdbfilter.h` after `cargo build` in
//! scripts/test-all.sh) relies on the checkout's build refreshing the committed header.

use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    shared_library_link_args();
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/lib.rs"))
        .generate()
        .expect("cbindgen failed to generate tdbfilter.h");
    let mut text = Vec::new();
    bindings.write(&mut text);
    write_if_changed(&out_dir.join("include/tdbfilter.h"), &text);
    let workspace = root.parent().expect("ffi/ has a parent folder");
    if workspace.join(".git").exists() {
        write_if_changed(&workspace.join("include/tdbfilter.h"), &text);
    }
}

/// Writes `text` to `path` (creating its folder) unless the file already holds exactly it.
fn write_if_changed(path: &Path, text: &[u8]) {
    if std::fs::read(path).ok().as_deref() == Some(text) {
        return;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// ELF shared library settings: the SONAME `libtdbfilter.so.MAJOR.MINOR` (0.x releases: the
/// minor number is the ABI) and no exported symbols but the C API's `tdb_*` (symbols of the
/// bundled C and Rust dependencies, linked from archives, stay local).
fn shared_library_link_args() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if target_os != "linux" || target_env == "musl" {
        return;
    }
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("CARGO_PKG_VERSION_MAJOR");
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").expect("CARGO_PKG_VERSION_MINOR");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libtdbfilter.so.{major}.{minor}");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--exclude-libs,ALL");
}
