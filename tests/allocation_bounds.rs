//! Damaged tiles must fail with a clear error without allocating what their damaged sizes
//! claim, and a caller's memory limit is honoured. A counting global allocator records the
//! largest single allocation each case makes.
//!
//! Regressions: a GZIP part whose declared size had a flipped high bit made unfilter allocate
//! (and zero) up to 2 GiB for a 156-byte `rle,gzip` tile; a 3 MiB ZSTD tile whose chunk
//! headers claimed 2 GiB each made it reserve over 10 GiB for the output.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use tdbfilter::{Datatype, Error, Pipeline, Tile, pipeline::spec};

/// Records the largest allocation (or reallocation) size requested.
struct Largest;

static LARGEST: AtomicUsize = AtomicUsize::new(0);
/// The cases run one at a time, so that each sees only its own allocations.
static SERIAL: Mutex<()> = Mutex::new(());

// SAFETY: forwards every call to the system allocator unchanged; only records sizes.
unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Largest = Largest;

/// Runs `f` and returns its result and the largest allocation it made.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.store(0, Ordering::Relaxed);
    let out = f();
    (out, LARGEST.load(Ordering::Relaxed))
}

fn filter(spec_text: &str, cells: &[u8]) -> (Pipeline, Vec<u8>) {
    let mut p = spec::parse(spec_text).unwrap();
    p.set_threads(1);
    let tile = Tile::new(Datatype::Int64, 8, cells.to_vec()).unwrap();
    let filtered = p.filter_tile(&tile).unwrap();
    (p, filtered)
}

fn int64s(values: impl Iterator<Item = i64>) -> Vec<u8> {
    values.flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn a_damaged_gzip_part_size_is_refused_before_allocating() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (p, tile) = filter("rle,gzip", &int64s((0..300).map(|i| i / 7)));
    // Chunk header (8 + 12 bytes), then GZIP's part table: n_md, n_data, (u, z) per part.
    // Byte 31 is the high byte of the metadata part's size, byte 39 the data part's.
    for pos in [31, 39] {
        for bit in 0..8 {
            let mut bad = tile.clone();
            bad[pos] ^= 1 << bit;
            let (result, largest) =
                largest_allocation(|| p.unfilter_tile(&bad, Datatype::Int64, 8));
            let err = result.expect_err("a damaged part size must be an error");
            assert!(
                matches!(err, Error::CorruptData(_)),
                "byte {pos} bit {bit}: {err}"
            );
            assert!(
                largest < 1 << 20,
                "byte {pos} bit {bit}: allocated {largest} bytes for a {}-byte tile ({err})",
                tile.len()
            );
        }
    }
}

#[test]
fn damaged_chunk_lengths_of_a_zstd_tile_are_refused_before_allocating() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    // 3 MiB of incompressible int64s: 48 chunks of 64 KiB, each about 64 KiB filtered.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let cells = int64s((0..(3 << 20) / 8).map(|_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as i64
    }));
    let (p, tile) = filter("zstd", &cells);
    // Each chunk claims 2 GiB (its original length's high byte set), which ZSTD's largest
    // ratio would allow for its filtered size: 5 such chunks claim over 10 GiB.
    let mut bad = tile.clone();
    let mut at = 8;
    for _ in 0..5 {
        let filtered = u32::from_le_bytes(bad[at + 4..at + 8].try_into().unwrap()) as usize;
        let metadata = u32::from_le_bytes(bad[at + 8..at + 12].try_into().unwrap()) as usize;
        bad[at + 3] = 0x7f;
        at += 12 + filtered + metadata;
    }
    let (result, largest) = largest_allocation(|| p.unfilter_tile(&bad, Datatype::Int64, 8));
    let err = result.expect_err("damaged chunk lengths must be an error");
    assert!(matches!(err, Error::CorruptData(_)), "{err}");
    assert!(
        largest < 16 << 20,
        "allocated {largest} bytes for a {}-byte tile ({err})",
        tile.len()
    );
    // The intact tile still reads.
    let back = p.unfilter_tile(&tile, Datatype::Int64, 8).unwrap();
    assert_eq!(back.data(), &cells[..]);
}

#[test]
fn an_rle_chunk_claiming_gigabytes_is_refused_before_allocating() {
    // Found by the `unfilter` fuzz target: a 189-byte `bitshuffle,rle` chunk claiming
    // 4,177,463,392 bytes made unfilter reserve them (RLE had no ratio bound).
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (p, tile) = filter("bitshuffle,rle", &int64s((0..64).map(|i| i / 9)));
    let mut bad = tile.clone();
    bad[8..12].copy_from_slice(&4_177_463_392u32.to_le_bytes());
    let (result, largest) = largest_allocation(|| p.unfilter_tile(&bad, Datatype::Int64, 8));
    let err = result.expect_err("an impossible original length must be an error");
    assert!(matches!(err, Error::CorruptData(_)), "{err}");
    assert!(
        largest < 1 << 20,
        "allocated {largest} bytes for a {}-byte tile",
        tile.len()
    );
}

#[test]
fn the_memory_limit_is_honoured_and_named() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let cells = int64s(0..(1 << 20) / 8);
    let (mut p, tile) = filter("byteshuffle,zstd", &cells);
    p.set_memory_limit(Some(512 << 10));
    let (result, largest) = largest_allocation(|| p.unfilter_tile(&tile, Datatype::Int64, 8));
    let err = result.expect_err("a 1 MiB tile is over a 512 KiB limit");
    assert!(matches!(err, Error::OutOfMemory(_)), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("1048576") && text.contains("524288") && text.contains("memory limit"),
        "{text}"
    );
    assert!(
        largest < 512 << 10,
        "allocated {largest} bytes over the limit"
    );
    p.set_memory_limit(Some(1 << 20));
    assert_eq!(
        p.unfilter_tile(&tile, Datatype::Int64, 8).unwrap().data(),
        &cells[..]
    );
    p.set_memory_limit(None);
    assert_eq!(
        p.unfilter_tile(&tile, Datatype::Int64, 8).unwrap().data(),
        &cells[..]
    );
}

/// Replays an `array_folder` fuzz input: a copy of the fixture array `tests/data/c_array/`
/// (dense, sparse, meta by the first byte % 3) with file (byte / 3) % files (sorted) replaced
/// by the rest of the input; returns the copy's path.
fn replay_array_folder(input: &[u8]) -> std::path::PathBuf {
    fn copy(from: &std::path::Path, to: &std::path::Path, files: &mut Vec<std::path::PathBuf>) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                copy(&e.path(), &to.join(e.file_name()), files);
            } else {
                std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
                files.push(to.join(e.file_name()));
            }
        }
    }
    let names = ["dense", "sparse", "meta"];
    let name = names[input[0] as usize % 3];
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/c_array")
        .join(name);
    let dst = std::env::temp_dir()
        .join(format!(
            "tdbf-replay-{}-{:x}",
            std::process::id(),
            input.len()
        ))
        .join(name);
    let _ = std::fs::remove_dir_all(&dst);
    let mut files = Vec::new();
    copy(&src, &dst, &mut files);
    files.sort();
    let k = (input[0] as usize / 3) % files.len();
    std::fs::write(&files[k], &input[1..]).unwrap();
    dst
}

#[test]
fn a_damaged_dense_domain_is_refused_by_the_memory_limit_before_planning() {
    // Found by the `array_folder` fuzz target: damaged metadata describing a box of millions
    // of rows made the dense planner build one copy run per row (190 MB) before the result
    // size was checked against the memory limit.
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let input = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/fuzz/array_folder-huge-box"
    ))
    .unwrap();
    let path = replay_array_folder(&input);
    let options = tdbfilter::array::OpenOptions {
        memory_limit: Some(64 << 20),
        ..Default::default()
    };
    let (result, largest) = largest_allocation(|| {
        let array = tdbfilter::array::Array::open(path.to_str().unwrap(), &options)?;
        array.read(&["a"], None)
    });
    let err = result.expect_err("a box over the memory limit");
    assert!(
        matches!(err, Error::OutOfMemory(_) | Error::CorruptData(_)),
        "{err}"
    );
    assert!(largest < 16 << 20, "allocated {largest} bytes");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn a_sparse_tile_count_beyond_the_listed_offsets_is_refused_before_allocating() {
    // Found by the `array_folder` fuzz target: a damaged fragment footer claiming about 2^53
    // tiles made the merge of a two-fragment sparse read collect that many tile indices.
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let input = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/fuzz/array_folder-tile-count"
    ))
    .unwrap();
    let path = replay_array_folder(&input);
    let (result, largest) = largest_allocation(|| {
        let array = tdbfilter::array::Array::open(path.to_str().unwrap(), &Default::default())?;
        let schema = array.schema();
        let mut names: Vec<&str> = schema.attributes.iter().map(|a| a.name.as_str()).collect();
        names.extend(schema.dimensions.iter().map(|d| d.name.as_str()));
        array.read(&names, None)
    });
    if let Err(e) = &result {
        assert!(
            matches!(
                e,
                Error::CorruptData(_) | Error::Unsupported(_) | Error::InvalidArgument(_)
            ),
            "{e}"
        );
    }
    assert!(largest < 16 << 20, "allocated {largest} bytes");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}
