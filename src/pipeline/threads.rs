//! Thread pools for chunk-level parallelism, one per thread count, shared by all pipelines.

use crate::error::{Error, Result};
use rayon::ThreadPool;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The number of threads `requested` means (0 = every core).
pub fn effective_threads(requested: usize) -> usize {
    if requested == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        requested
    }
}

/// The shared pool of `n` threads, created on first use.
pub fn pool(n: usize) -> Result<Arc<ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(p) = pools.get(&n) {
        return Ok(p.clone());
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("tdbfilter-{i}"))
            .build()
            .map_err(|e| Error::Internal(format!("cannot start {n} threads: {e}")))?,
    );
    pools.insert(n, p.clone());
    Ok(p)
}
