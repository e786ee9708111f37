#!/usr/bin/env bash
# Runs the unit tests of src/mem/uninit.rs (the writer over uninitialised memory) under Miri,
# with the debug poison switched off (so the memory really is uninitialised, as in release
# builds), Tree Borrows and recursive validation of references (which flags any `&mut [u8]`
# over uninitialised bytes). The module is copied into a scratch crate: the library's C
# dependencies cannot run under Miri. Needs the nightly toolchain with the miri and rust-src
# components. The tests leak a few buffers on purpose (cursors over 'static memory).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/src"
printf '[package]\nname = "miri_uninit"\nversion = "0.0.0"\nedition = "2024"\n' > "$dir/Cargo.toml"
cat > "$dir/src/lib.rs" <<'RS'
pub mod error {
    #[derive(Debug)]
    pub enum Error {
        Internal(String),
    }
}
pub mod uninit;
RS
sed 's/cfg!(any(debug_assertions, test))/cfg!(any())/' src/mem/uninit.rs > "$dir/src/uninit.rs"
grep -q 'cfg!(any())' "$dir/src/uninit.rs" || { echo "poison switch not found" >&2; exit 1; }
cd "$dir"
MIRIFLAGS="-Zmiri-ignore-leaks -Zmiri-tree-borrows -Zmiri-recursive-validation" \
  cargo +nightly miri test
