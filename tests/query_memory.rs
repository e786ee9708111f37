//! Peak memory of query reads in batches into caller buffers (issue #28: "bounded memory"):
//! a sparse array of 20 times the buffers, and a dense 1024 x 1024 array (INT64 `a`, nullable FLOAT32 `b`; tiles of 32 rows, 256 KiB of
//! `a`) of 13 MiB is read through caller buffers of about a tenth of that, every cell
//! checked, while a counting global allocator records the peak of the bytes live on the
//! heap. The read may hold at most the budget (its slab of cells computed ahead) and a few
//! tiles beyond the caller's buffers, which are allocated before the measurement.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use tdbfilter::array::query::{BatchBuffers, Query, QueryLayout};
use tdbfilter::array::schema::ArraySchema;
use tdbfilter::array::{Array, OpenOptions, WriteLayout, Writer, create};
use tdbfilter::storage::StorageConfig;

/// Tracks the bytes live on the heap and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// The tests run one at a time, so that each sees only its own allocations.
static SERIAL: Mutex<()> = Mutex::new(());

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: forwards every call to the system allocator unchanged; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= layout.size() {
            grew(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result and how far the live heap rose above where it started.
fn peak_growth<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let r = f();
    (r, PEAK.load(Ordering::Relaxed) - base)
}

const N: usize = 1024;
/// The caller buffers: 100 rows of cells (13 bytes a cell), about a tenth of the array.
const ROWS: usize = 100;
const BUDGET: usize = ROWS * N * 13;
/// One tile of `a`, the largest.
const TILE: usize = 32 * N * 8;

fn b_of(i: usize) -> (f32, u8) {
    (i as f32 * 0.5, u8::from(!i.is_multiple_of(7)))
}

/// Writes the array at `path`.
fn write(path: &str) {
    let schema = ArraySchema::from_json(
        r#"{"dimensions":[{"name":"r","type":"INT32","domain":[0,1023],"tile":32},
            {"name":"c","type":"INT32","domain":[0,1023],"tile":1024}],
            "attributes":[{"name":"a","type":"INT64"},
                          {"name":"b","type":"FLOAT32","nullable":true}]}"#,
    )
    .expect("schema");
    create(path, &schema, None, &StorageConfig::new()).expect("create");
    let mut w = Writer::open(path, None, Some(1), &StorageConfig::new()).expect("writer");
    w.set_layout(WriteLayout::RowMajor).expect("layout");
    let sub: Vec<u8> = [0i32, 1023, 0, 1023]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    w.set_subarray(&sub).expect("subarray");
    let a: Vec<u8> = (0..N * N)
        .flat_map(|i| (i as i64 * 3).to_le_bytes())
        .collect();
    let b: Vec<u8> = (0..N * N).flat_map(|i| b_of(i).0.to_le_bytes()).collect();
    let v: Vec<u8> = (0..N * N).map(|i| b_of(i).1).collect();
    w.set_data_owned("a", a).expect("a");
    w.set_data_owned("b", b).expect("b");
    w.set_validity("b", &v).expect("validity");
    w.submit().expect("submit");
    w.finalize().expect("finalize");
}

/// Reads every cell in `layout` in batches into buffers allocated before the measurement,
/// checking every cell (the global order of tiles of whole rows is the row-major order);
/// returns (batches, cells, peak growth of the live heap during the read).
fn read(path: &str, layout: QueryLayout) -> (usize, usize, usize) {
    let array = Array::open(path, &OpenOptions::default()).expect("open");
    let mut a = vec![1u8; ROWS * N * 8];
    let mut b = vec![1u8; ROWS * N * 4];
    let mut v = vec![1u8; ROWS * N];
    let ((batches, cells), extra) = peak_growth(|| {
        let mut batches = Query::new(&array)
            .fields(&["a", "b"])
            .layout(layout)
            .submit_batches(BUDGET as u64)
            .expect("batches");
        let (mut count, mut next) = (0usize, 0usize);
        loop {
            let mut bufs = [
                BatchBuffers {
                    data: &mut a,
                    offsets: None,
                    validity: None,
                },
                BatchBuffers {
                    data: &mut b,
                    offsets: None,
                    validity: Some(&mut v),
                },
            ];
            let f = batches.next_into(&mut bufs).expect("batch");
            count += 1;
            for k in 0..f.cells as usize {
                let i = next + k;
                let av = i64::from_le_bytes(a[k * 8..k * 8 + 8].try_into().unwrap());
                assert_eq!(av, i as i64 * 3, "a of cell {i}");
                let (want, valid) = b_of(i);
                assert_eq!(v[k], valid, "validity of cell {i}");
                if valid == 1 {
                    let bv = f32::from_le_bytes(b[k * 4..k * 4 + 4].try_into().unwrap());
                    assert_eq!(bv, want, "b of cell {i}");
                }
            }
            next += f.cells as usize;
            if f.complete {
                break;
            }
        }
        (count, next)
    });
    (batches, cells, extra)
}

/// Sparse 1-D: x = 0, 2, 4, ... (2^18 cells, INT64), a = x * 7 (INT64): 4 MiB in tiles of
/// 8192 cells (64 KiB a field), read row-major through 400 KiB of buffers.
const SPARSE_CELLS: usize = 1 << 18;
const SPARSE_TILE: usize = 8192 * 8;

fn write_sparse(path: &str) {
    let schema = ArraySchema::from_json(
        r#"{"sparse":true,"capacity":8192,
            "dimensions":[{"name":"x","type":"INT64","domain":[0,1000000000],"tile":1000000}],
            "attributes":[{"name":"a","type":"INT64"}]}"#,
    )
    .expect("schema");
    create(path, &schema, None, &StorageConfig::new()).expect("create");
    let mut w = Writer::open(path, None, Some(1), &StorageConfig::new()).expect("writer");
    w.set_layout(WriteLayout::GlobalOrder).expect("layout");
    let x: Vec<u8> = (0..SPARSE_CELLS)
        .flat_map(|i| (2 * i as i64).to_le_bytes())
        .collect();
    let a: Vec<u8> = (0..SPARSE_CELLS)
        .flat_map(|i| (14 * i as i64).to_le_bytes())
        .collect();
    w.set_data_owned("x", x).expect("x");
    w.set_data_owned("a", a).expect("a");
    w.submit().expect("submit");
    w.finalize().expect("finalize");
}

#[test]
fn batched_sparse_reads_stay_within_the_budget_plus_a_few_tiles() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("tdbf_query_memory_s_{}", std::process::id()));
    let path = dir.to_str().expect("utf-8 path").to_string();
    let _ = std::fs::remove_dir_all(&dir);
    write_sparse(&path);
    let array = Array::open(&path, &OpenOptions::default()).expect("open");
    // 1-D: row-major, global order and unordered are all the order of x.
    for layout in [
        QueryLayout::RowMajor,
        QueryLayout::GlobalOrder,
        QueryLayout::Unordered,
    ] {
        sparse_read_within_budget(&array, layout);
    }
    drop(array);
    std::fs::remove_dir_all(&dir).expect("remove the array");
}

/// Reads the array of [`write_sparse`] in `layout` through buffers of a twentieth of it,
/// checking every cell and the peak memory.
fn sparse_read_within_budget(array: &Array, layout: QueryLayout) {
    let per = SPARSE_CELLS / 20;
    let budget = per * 16;
    let mut x = vec![1u8; per * 8];
    let mut a = vec![1u8; per * 8];
    let ((batches, cells), extra) = peak_growth(|| {
        let mut b = Query::new(array)
            .fields(&["x", "a"])
            .layout(layout)
            .submit_batches(budget as u64)
            .expect("batches");
        let (mut count, mut next) = (0usize, 0usize);
        loop {
            let mut bufs = [
                BatchBuffers {
                    data: &mut x,
                    offsets: None,
                    validity: None,
                },
                BatchBuffers {
                    data: &mut a,
                    offsets: None,
                    validity: None,
                },
            ];
            let f = b.next_into(&mut bufs).expect("batch");
            count += 1;
            for k in 0..f.cells as usize {
                let i = (next + k) as i64;
                let xv = i64::from_le_bytes(x[k * 8..k * 8 + 8].try_into().unwrap());
                let av = i64::from_le_bytes(a[k * 8..k * 8 + 8].try_into().unwrap());
                assert_eq!((xv, av), (2 * i, 14 * i), "cell {i}");
            }
            next += f.cells as usize;
            if f.complete {
                break;
            }
        }
        (count, next)
    });
    let allowed = budget + 4 * 2 * SPARSE_TILE;
    println!(
        "sparse query batches ({layout:?}): {batches} batches, {cells} cells of {} KiB, budget {} KiB, \
         peak {} KiB beyond the buffers (allowed {} KiB)",
        SPARSE_CELLS * 16 / 1024,
        budget / 1024,
        extra / 1024,
        allowed / 1024
    );
    assert_eq!(cells, SPARSE_CELLS);
    assert!(batches >= 20, "{layout:?}: {batches} batches");
    assert!(
        extra <= allowed,
        "{layout:?}: the batched sparse read held {extra} bytes beyond its buffers (allowed {allowed})"
    );
}

#[test]
fn batched_query_reads_stay_within_the_budget_plus_a_few_tiles() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("tdbf_query_memory_{}", std::process::id()));
    let path = dir.to_str().expect("utf-8 path").to_string();
    let _ = std::fs::remove_dir_all(&dir);
    write(&path);
    for layout in [QueryLayout::RowMajor, QueryLayout::GlobalOrder] {
        let (batches, cells, extra) = read(&path, layout);
        let allowed = BUDGET + 4 * TILE;
        println!(
            "query batches ({layout:?}): {batches} batches, {cells} cells of {} KiB, \
             budget {} KiB, peak {} KiB beyond the buffers (allowed {} KiB)",
            N * N * 13 / 1024,
            BUDGET / 1024,
            extra / 1024,
            allowed / 1024
        );
        assert_eq!(cells, N * N);
        assert!(batches >= 10, "{layout:?}: {batches} batches");
        assert!(
            extra <= allowed,
            "{layout:?}: the batched read held {extra} bytes beyond its buffers \
             (allowed {allowed})"
        );
    }
    std::fs::remove_dir_all(&dir).expect("remove the array");
}
