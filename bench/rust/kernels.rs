//! Microbenchmarks of the filter kernels and of whole-tile filtering, through the public API.
//!
//! ```sh
//! cargo bench --bench kernels                 # full run
//! cargo bench --bench kernels -- --quick      # a fast pass (CI, smoke)
//! cargo bench --bench kernels -- shuffle      # only benchmarks whose name contains 'shuffle'
//! ```
//!
//! Speeds are bytes of unfiltered data per second (criterion's `thrpt`).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;
use tdbfilter::codecs::{gzip, lz4, zstd};
use tdbfilter::filters::{bitshuffle, byteshuffle};
use tdbfilter::pipeline::spec;
use tdbfilter::{Datatype, Tile};

/// Bytes of one chunk (TileDB's default chunk size).
const CHUNK: usize = 64 * 1024;

/// Bytes of one tile.
const TILE: usize = 1024 * 1024;

/// Sorted int64 timestamps in microseconds, 1 ms ticks with up to ±50 µs of jitter: `bytes`
/// bytes (a multiple of 8), deterministic.
fn timestamps(bytes: usize) -> Vec<u8> {
    let mut state = 0x7464_6266_u64;
    let mut t: i64 = 1_700_000_000_000_000;
    (0..bytes / 8)
        .flat_map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            t += 950 + ((state >> 33) % 101) as i64;
            t.to_le_bytes()
        })
        .collect()
}

/// Byteshuffle and bitshuffle of one 64 KiB chunk for element sizes 1, 2, 4 and 8 (bitshuffle
/// in 8192-byte blocks, as the filter runs it).
fn shuffles(c: &mut Criterion) {
    let src = timestamps(CHUNK);
    let mut dst = vec![0u8; CHUNK];
    let mut g = c.benchmark_group("byteshuffle_64k");
    g.throughput(Throughput::Bytes(CHUNK as u64));
    for t in [1usize, 2, 4, 8] {
        g.bench_with_input(BenchmarkId::new("shuffle", t), &t, |b, &t| {
            b.iter(|| byteshuffle::shuffle(t, black_box(&src), &mut dst))
        });
        let mut shuffled = vec![0u8; CHUNK];
        byteshuffle::shuffle(t, &src, &mut shuffled);
        g.bench_with_input(BenchmarkId::new("unshuffle", t), &t, |b, &t| {
            b.iter(|| byteshuffle::unshuffle(t, black_box(&shuffled), &mut dst))
        });
    }
    g.finish();

    let block = bitshuffle::BLOCK_SIZE;
    let mut g = c.benchmark_group("bitshuffle_64k");
    g.throughput(Throughput::Bytes(CHUNK as u64));
    for t in [1usize, 2, 4, 8] {
        g.bench_with_input(BenchmarkId::new("shuffle", t), &t, |b, &t| {
            b.iter(|| {
                for (s, d) in black_box(&src).chunks(block).zip(dst.chunks_mut(block)) {
                    bitshuffle::bitshuffle_block(t, s, d);
                }
            })
        });
        let mut shuffled = vec![0u8; CHUNK];
        for (s, d) in src.chunks(block).zip(shuffled.chunks_mut(block)) {
            bitshuffle::bitshuffle_block(t, s, d);
        }
        g.bench_with_input(BenchmarkId::new("unshuffle", t), &t, |b, &t| {
            b.iter(|| {
                for (s, d) in black_box(&shuffled)
                    .chunks(block)
                    .zip(dst.chunks_mut(block))
                {
                    bitshuffle::bitunshuffle_block(t, s, d);
                }
            })
        });
    }
    g.finish();
}

/// zstd (level −1, TileDB's default), lz4 and gzip (level 6) of one 64 KiB chunk of
/// byteshuffled timestamps, both ways.
fn compressors(c: &mut Criterion) {
    let raw = timestamps(CHUNK);
    let mut src = vec![0u8; CHUNK];
    byteshuffle::shuffle(8, &raw, &mut src);
    let mut out = Vec::with_capacity(2 * CHUNK);
    let mut dst = vec![0u8; CHUNK];
    let mut g = c.benchmark_group("compress_64k");
    g.throughput(Throughput::Bytes(CHUNK as u64));

    let mut zctx = zstd::ZstdContexts::default();
    g.bench_function("zstd_-1/compress", |b| {
        b.iter(|| {
            out.clear();
            zstd::compress(&mut zctx, -1, black_box(&src), &mut out).expect("zstd");
        })
    });
    let mut packed = Vec::new();
    zstd::compress(&mut zctx, -1, &src, &mut packed).expect("zstd");
    g.bench_function("zstd_-1/decompress", |b| {
        b.iter(|| zstd::decompress(&mut zctx, black_box(&packed), &mut dst).expect("unzstd"))
    });

    g.bench_function("lz4/compress", |b| {
        b.iter(|| {
            out.clear();
            lz4::compress(black_box(&src), &mut out).expect("lz4");
        })
    });
    let mut packed = Vec::new();
    lz4::compress(&src, &mut packed).expect("lz4");
    g.bench_function("lz4/decompress", |b| {
        b.iter(|| lz4::decompress(black_box(&packed), &mut dst).expect("unlz4"))
    });

    let mut gctx = gzip::GzipContexts::default();
    g.bench_function("gzip_6/compress", |b| {
        b.iter(|| {
            out.clear();
            gzip::compress(&mut gctx, -1, true, black_box(&src), &mut out).expect("gzip");
        })
    });
    let mut packed = Vec::new();
    gzip::compress(&mut gctx, -1, true, &src, &mut packed).expect("gzip");
    g.bench_function("gzip_6/decompress", |b| {
        b.iter(|| gzip::decompress(&mut gctx, black_box(&packed), &mut dst).expect("gunzip"))
    });
    g.finish();
}

/// Whole-tile filter and unfilter of a 1 MiB int64 tile (16 chunks) on one thread.
fn tiles(c: &mut Criterion) {
    let tile = Tile::new(Datatype::Int64, 8, timestamps(TILE)).expect("tile");
    let mut g = c.benchmark_group("tile_1m");
    g.throughput(Throughput::Bytes(TILE as u64));
    for text in [
        "none",
        "byteshuffle,zstd",
        "bitshuffle,lz4",
        "positive_delta,bit_width_reduction,zstd",
        "checksum_sha256",
    ] {
        let mut p = spec::parse(text).expect("spec");
        p.set_threads(1);
        g.bench_function(BenchmarkId::new("filter", text), |b| {
            b.iter(|| p.filter_tile(black_box(&tile)).expect("filter"))
        });
        let filtered = p.filter_tile(&tile).expect("filter");
        g.bench_function(BenchmarkId::new("unfilter", text), |b| {
            b.iter(|| {
                p.unfilter_tile(black_box(&filtered), Datatype::Int64, 8)
                    .expect("unfilter")
            })
        });
    }
    g.finish();
}

/// Short warm-up and measurement times keep a full run to about a minute; `-- --quick`
/// shortens it further.
fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20)
}

criterion_group! {
    name = kernels;
    config = config();
    targets = shuffles, compressors, tiles
}
criterion_main!(kernels);
