//! A panic probe for the library relinked for an older glibc (bindings/python/build_backend/
//! tdbfilter_relink.py): scripts/test.d/42-wheel.sh compiles it with rustc as a cdylib and a
//! staticlib, relinks the staticlib the way the wheel's library is relinked (zig's libunwind in
//! place of libgcc_s) and calls it through ctypes. tdbfilter's own C entry points have no
//! input that panics, so this is where unwinding through the relinked runtime is exercised:
//! panics caught by `catch_unwind` (as ffi/src/guard.rs does) with destructors run on the way
//! out, and a panicking thread joined.

use std::panic::{catch_unwind, set_hook};
use std::sync::atomic::{AtomicU32, Ordering};

static DROPPED: AtomicU32 = AtomicU32::new(0);

/// Counts its drops, to show that unwinding ran the cleanup of the frames it left.
struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

#[inline(never)]
fn out_of_bounds(v: &[u32], i: usize) -> u32 {
    let _guard = Guard;
    v[i]
}

/// Panics `n` times under `catch_unwind` and once in a joined thread. Returns 1000 * panics
/// caught + destructors run (`1001 * (n + 1)` when everything unwound as it should).
#[no_mangle]
pub extern "C" fn probe_panics(n: u32) -> u32 {
    set_hook(Box::new(|_| {})); // no message on stderr for the expected panics
    let empty: Vec<u32> = Vec::new();
    let mut caught = 0;
    for i in 0..n {
        if catch_unwind(|| out_of_bounds(&empty, i as usize)).is_err() {
            caught += 1;
        }
    }
    let thread = std::thread::spawn(|| -> u32 {
        let _guard = Guard;
        panic!("a panic in a thread")
    });
    if thread.join().is_err() {
        caught += 1;
    }
    let _ = std::panic::take_hook();
    1000 * caught + DROPPED.load(Ordering::SeqCst)
}
