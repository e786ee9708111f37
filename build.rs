//! Generates `include/tdbfilter.h` from the `extern "C"` layer in `src/ffi/` with cbindgen.
//! The header is committed; it is rewritten only when its content changes.

use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    shared_library_link_args();
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/ffi/mod.rs"))
        .generate()
        .expect("cbindgen failed to generate include/tdbfilter.h");
    let mut text = Vec::new();
    bindings.write(&mut text);
    let path = root.join("include/tdbfilter.h");
    if std::fs::read(&path).ok().as_deref() != Some(&text[..]) {
        std::fs::create_dir_all(root.join("include")).expect("create include/");
        std::fs::write(&path, &text).expect("write include/tdbfilter.h");
    }
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
