//! Generates `include/tdbfilter.h` from the `extern "C"` layer in `src/ffi/` with cbindgen.
//! The header is committed; it is rewritten only when its content changes.

use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
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
