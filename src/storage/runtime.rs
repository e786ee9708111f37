//! The tokio runtime that drives every object-store request, and the one way this crate's
//! synchronous API waits for it.
//!
//! The rule: a call from a thread outside any tokio runtime (the usual case: the caller's
//! thread, rayon workers) blocks on the internal runtime directly. A call from inside a
//! tokio runtime (an async user calling the sync API from a task, or from within
//! `Runtime::block_on`) cannot do that (tokio refuses to block on a runtime from within
//! one, with a panic), so it hands the work to a scoped thread of its own, which blocks on
//! the internal runtime, and waits for that thread. Nothing panics and nothing deadlocks on
//! the caller's runtime (the work never runs there); the caller's worker thread is blocked
//! for the duration, as with any blocking I/O called from async code.

use std::future::Future;
use std::sync::OnceLock;

/// The runtime every object-store request runs on (made on first use; rustls's `ring`
/// provider is installed as the process default at the same time, unless one already is).
pub(super) fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(2, 8);
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("tdbf-storage")
            .enable_all()
            .build()
            .expect("the storage runtime starts")
    })
}

/// Runs `f` to completion on the storage runtime, blocking this thread (see the module
/// documentation for calls from inside a tokio runtime).
pub(super) fn block_on<F>(f: F) -> F::Output
where
    F: Future + Send,
    F::Output: Send,
{
    if tokio::runtime::Handle::try_current().is_err() {
        return runtime().block_on(f);
    }
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("tdbf-storage-call".into())
            .spawn_scoped(s, || runtime().block_on(f))
            .expect("a thread for a storage call starts")
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}
