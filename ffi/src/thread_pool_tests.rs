//! The C API shares one thread pool per thread count for the whole process: 1000 calls with
//! new pipeline and array handles and changing thread counts build no pool and start no
//! thread after the first call of each count. The count runs in a child process of the test
//! binary with only this test selected, so that no other unit test starts threads meanwhile.

use crate::*;
use std::ffi::CString;
use std::ptr;
use tdbfilter::pipeline::pools_built;

/// The threads of this process (Linux: `Threads:` of /proc/self/status).
fn os_threads() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("a Threads: line")
}

fn ok(status: tdb_status_t, what: &str) {
    assert_eq!(status, tdb_status_t::TDB_OK, "{what}");
}

/// A new pipeline with `threads` threads filters and unfilters an 8-chunk tile, then is freed.
fn pipeline_round(threads: u32, cells: &[u8]) {
    // SAFETY: every pointer passed is valid for the call; handles are freed once.
    unsafe {
        let mut p = ptr::null_mut();
        ok(tdb_pipeline_create(&mut p, ptr::null_mut()), "create");
        ok(
            tdb_pipeline_add_filter(p, TDB_FILTER_BYTESHUFFLE, ptr::null_mut()),
            "byteshuffle",
        );
        ok(
            tdb_pipeline_add_filter(p, TDB_FILTER_LZ4, ptr::null_mut()),
            "lz4",
        );
        ok(
            tdb_pipeline_set_threads(p, threads, ptr::null_mut()),
            "threads",
        );
        let mut tile = ptr::null_mut();
        ok(
            tdb_tile_create(
                TDB_INT32,
                4,
                cells.as_ptr().cast(),
                cells.len(),
                &mut tile,
                ptr::null_mut(),
            ),
            "tile",
        );
        let mut filtered = ptr::null_mut();
        ok(
            tdb_pipeline_filter(p, tile, &mut filtered, ptr::null_mut()),
            "filter",
        );
        let (mut data, mut size) = (ptr::null(), 0usize);
        ok(
            tdb_tile_data(filtered, &mut data, &mut size, ptr::null_mut()),
            "data",
        );
        let mut back = ptr::null_mut();
        ok(
            tdb_pipeline_unfilter(p, data, size, TDB_INT32, 4, &mut back, ptr::null_mut()),
            "unfilter",
        );
        let (mut bd, mut bn) = (ptr::null(), 0usize);
        ok(
            tdb_tile_data(back, &mut bd, &mut bn, ptr::null_mut()),
            "data",
        );
        assert_eq!(std::slice::from_raw_parts(bd, bn), cells);
        tdb_tile_free(back);
        tdb_tile_free(filtered);
        tdb_tile_free(tile);
        tdb_pipeline_free(p);
    }
}

/// A new array handle with `threads` threads opens tests/data/c_array/dense and reads `a`.
fn array_round(threads: u32, path: &CString) {
    // SAFETY: every pointer passed is valid for the call; handles are freed once.
    unsafe {
        let mut a = ptr::null_mut();
        ok(
            tdb_array_open(path.as_ptr(), ptr::null(), 0, &mut a, ptr::null_mut()),
            "open",
        );
        ok(
            tdb_array_set_threads(a, threads, ptr::null_mut()),
            "threads",
        );
        let mut r = ptr::null_mut();
        ok(
            tdb_array_read(a, c"a".as_ptr(), ptr::null(), 0, &mut r, ptr::null_mut()),
            "read",
        );
        let mut cells = 0u64;
        ok(
            tdb_result_cell_count(r, &mut cells, ptr::null_mut()),
            "cells",
        );
        assert_eq!(cells, 20);
        tdb_result_free(r);
        tdb_array_free(a);
    }
}

/// Set in the child process that runs the measurement alone.
const CHILD: &str = "TDBF_THREAD_POOL_TEST_CHILD";

/// Runs [`measure`] in a child process of this test binary with only this test selected, so
/// that no other unit test of the crate starts threads during the count.
#[test]
fn no_pool_is_built_per_call_or_per_handle() {
    if std::env::var_os(CHILD).is_some() {
        measure();
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args([
            "thread_pool_tests::no_pool_is_built_per_call_or_per_handle",
            "--exact",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .output()
        .expect("re-run the test binary");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the measurement failed:\n{text}");
    assert!(text.contains("1 passed"), "the child ran no test:\n{text}");
}

/// 1000 calls after the first of each thread count build no pool and start no thread.
fn measure() {
    let cells: Vec<u8> = (0..8 * 65536u32 / 4)
        .flat_map(|i| (i / 7).to_le_bytes())
        .collect();
    let path = CString::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/c_array/dense"
    ))
    .unwrap();
    let counts = [0u32, 1, 2, 3, 4, 7];
    for &n in &counts {
        pipeline_round(n, &cells);
        array_round(n, &path);
    }
    let (pools, threads) = (pools_built(), os_threads());
    // At least the pools of 1 (array reads), 2, 3, 4 and 7 threads.
    assert!(pools >= 5, "{pools} pools built");
    for i in 0..1000 {
        let n = counts[i % counts.len()];
        pipeline_round(n, &cells);
        array_round(n, &path);
    }
    assert_eq!(pools_built(), pools, "pools built by 1000 more calls");
    assert_eq!(os_threads(), threads, "threads started by 1000 more calls");
}
