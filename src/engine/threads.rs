//! Chunk-level parallelism: the shared thread pools (one per thread count, shared by all
//! pipelines), or a host's own executor when the pipeline has one ([`Executor`]).

use crate::error::{Error, Result};
use rayon::ThreadPool;
use rayon::prelude::*;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Runs a pipeline's chunk jobs on the host's threads instead of tdbfilter's own pool (for
/// engines and language runtimes with their own schedulers).
pub trait Executor: Send + Sync {
    /// Calls `job(i)` exactly once for every `i` in `0..n_jobs`, in any order and on any
    /// threads (concurrently or not), and returns when every call has returned.
    fn run(&self, n_jobs: usize, job: &(dyn Fn(usize) + Sync));
}

/// A pipeline's executor: shared, compared by identity.
#[derive(Clone)]
pub struct ExecutorHandle(pub Arc<dyn Executor>);

impl fmt::Debug for ExecutorHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ExecutorHandle({:p})", Arc::as_ptr(&self.0))
    }
}

impl PartialEq for ExecutorHandle {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The most threads a pipeline or an array may be given.
pub const MAX_THREADS: usize = 256;

/// Checks a requested thread count for a pipeline or an array: 0 (every core) or
/// 1..=[`MAX_THREADS`]; more is `InvalidArgument`.
pub fn check_threads(threads: u64) -> Result<usize> {
    usize::try_from(threads)
        .ok()
        .filter(|n| *n <= MAX_THREADS)
        .ok_or_else(|| {
            Error::invalid(format!(
                "threads {threads} exceeds {MAX_THREADS} (0 = all cores, 1 to {MAX_THREADS})"
            ))
        })
}

/// The number of threads `requested` means (0 = every core). The core count is asked once
/// per process: `available_parallelism` reads cgroup files on Linux, and this is called for
/// every tile a pipeline decodes.
pub fn effective_threads(requested: usize) -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    if requested == 0 {
        *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    } else {
        requested
    }
}

/// How many thread pools this process has built (at most one per thread count).
static POOLS_BUILT: AtomicUsize = AtomicUsize::new(0);

/// How many thread pools this process has built: one per thread count ever used, never one
/// per call or per pipeline or array.
pub fn pools_built() -> usize {
    POOLS_BUILT.load(Ordering::Relaxed)
}

/// The shared pool of `n` threads, created on first use and kept for the process.
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
    POOLS_BUILT.fetch_add(1, Ordering::Relaxed);
    Ok(p)
}

/// A host job's exclusive item and the result it leaves (None until the job ran).
type JobSlot<'a, T, R> = Mutex<(&'a mut T, Option<Result<R>>)>;

/// Runs `job` on each of `items` (exclusive access to each) on the host's executor, or else on
/// the shared pool of `threads` threads, and returns the results in order, or the error of the
/// first job (in order) that failed. A job the executor never ran is an internal error naming
/// it; so is a job that panicked on the host's thread.
pub(crate) fn run_each<T: Send, R: Send>(
    executor: Option<&ExecutorHandle>,
    threads: usize,
    items: &mut [T],
    job: impl Fn(usize, &mut T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let Some(executor) = executor else {
        let results: Vec<Result<R>> = pool(threads)?.install(|| {
            items
                .par_iter_mut()
                .enumerate()
                .map(|(i, item)| job(i, item))
                .collect()
        });
        return results.into_iter().collect();
    };
    // Each job takes its own item and result slot; the locks are never contended.
    let slots: Vec<JobSlot<'_, T, R>> = items
        .iter_mut()
        .map(|item| Mutex::new((item, None)))
        .collect();
    let n = slots.len();
    executor.0.run(n, &|i| {
        let Some(slot) = slots.get(i) else { return };
        let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
        let (item, result) = &mut *slot;
        if result.is_some() {
            *result = Some(Err(Error::Internal(format!(
                "the host executor ran job {i} of {n} twice"
            ))));
            return;
        }
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(i, item)))
            .unwrap_or_else(|_| {
                Err(Error::Internal(format!(
                    "job {i} of {n} panicked on the host executor"
                )))
            });
        *result = Some(outcome);
    });
    slots
        .into_iter()
        .enumerate()
        .map(|(i, slot)| {
            let (_, result) = slot.into_inner().unwrap_or_else(|p| p.into_inner());
            result.unwrap_or_else(|| {
                Err(Error::Internal(format!(
                    "the host executor did not run job {i} of {n}"
                )))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the jobs in order on the calling thread, counting them.
    struct Serial(AtomicUsize);
    impl Executor for Serial {
        fn run(&self, n_jobs: usize, job: &(dyn Fn(usize) + Sync)) {
            for i in 0..n_jobs {
                self.0.fetch_add(1, Ordering::Relaxed);
                job(i);
            }
        }
    }

    /// Runs every job but the last.
    struct SkipsLast;
    impl Executor for SkipsLast {
        fn run(&self, n_jobs: usize, job: &(dyn Fn(usize) + Sync)) {
            (0..n_jobs.saturating_sub(1)).for_each(job);
        }
    }

    /// Runs job 0 twice.
    struct Twice;
    impl Executor for Twice {
        fn run(&self, n_jobs: usize, job: &(dyn Fn(usize) + Sync)) {
            (0..n_jobs).for_each(job);
            job(0);
        }
    }

    fn square_all(executor: Option<&ExecutorHandle>) -> Result<Vec<u64>> {
        let mut items: Vec<u64> = (0..10).collect();
        run_each(executor, 2, &mut items, |i, x| {
            *x *= *x;
            Ok(*x + i as u64)
        })
    }

    #[test]
    fn thread_counts_are_bounded() {
        assert_eq!(check_threads(0).unwrap(), 0);
        assert_eq!(check_threads(1).unwrap(), 1);
        assert_eq!(check_threads(256).unwrap(), 256);
        for bad in [257, u32::MAX as u64, u64::MAX] {
            let e = check_threads(bad).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
            assert!(
                e.message().contains(&format!("threads {bad} exceeds 256")),
                "{e}"
            );
        }
    }

    #[test]
    fn one_pool_per_thread_count() {
        let first = pool(3).unwrap();
        assert!(pools_built() >= 1);
        for _ in 0..100 {
            assert!(Arc::ptr_eq(&pool(3).unwrap(), &first));
        }
    }

    #[test]
    fn host_executor_gives_the_pools_results() {
        let serial = Arc::new(Serial(AtomicUsize::new(0)));
        let handle = ExecutorHandle(serial.clone());
        assert_eq!(
            square_all(Some(&handle)).unwrap(),
            square_all(None).unwrap()
        );
        assert_eq!(serial.0.load(Ordering::Relaxed), 10);
    }

    #[test]
    fn faulty_executors_are_errors_not_wrong_results() {
        let e = square_all(Some(&ExecutorHandle(Arc::new(SkipsLast)))).unwrap_err();
        assert!(e.message().contains("did not run job 9 of 10"), "{e}");
        let e = square_all(Some(&ExecutorHandle(Arc::new(Twice)))).unwrap_err();
        assert!(e.message().contains("ran job 0 of 10 twice"), "{e}");
        let serial = ExecutorHandle(Arc::new(Serial(AtomicUsize::new(0))));
        let mut items = [0u8; 3];
        let e = run_each(Some(&serial), 2, &mut items, |i, _| -> Result<()> {
            assert!(i != 1, "job 1 fails");
            Ok(())
        })
        .unwrap_err();
        assert!(e.message().contains("job 1 of 3 panicked"), "{e}");
    }
}
