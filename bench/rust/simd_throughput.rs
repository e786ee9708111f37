//! Throughput of the shuffle kernels at every supported SIMD level, on 64 KiB chunks (bitshuffle
//! in 8192-byte blocks, as the filter runs it).
//!
//! ```sh
//! cargo run --release -p tdbf --example simd_throughput
//! ```

use std::hint::black_box;
use tdbfilter::kernels::{Kernels, Level};

const CHUNK: usize = 64 * 1024;
const BLOCK: usize = 8192;

/// This thread's CPU time in seconds (not wall time: the machine may be shared).
fn cpu_now() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// MB/s (10^6 bytes per second) of `f` over `bytes` bytes per call: the best of 40 runs of
/// about 2 ms of thread CPU time each.
fn speed(bytes: usize, mut f: impl FnMut()) -> f64 {
    let mut reps = 1u32;
    loop {
        let start = cpu_now();
        for _ in 0..reps {
            f();
        }
        if cpu_now() - start >= 2e-3 {
            break;
        }
        reps *= 2;
    }
    let best = (0..40)
        .map(|_| {
            let start = cpu_now();
            for _ in 0..reps {
                f();
            }
            cpu_now() - start
        })
        .fold(f64::INFINITY, f64::min);
    bytes as f64 * reps as f64 / best / 1e6
}

fn main() {
    // Page-aligned source and destination (results vary with the buffers' relative
    // placement; the C harness used for comparison does the same).
    let mut src_buf = vec![0u8; CHUNK + 4096];
    let mut dst_buf = vec![0u8; CHUNK + 4096];
    let src_at = (src_buf.as_ptr() as usize).wrapping_neg() % 4096;
    let dst_at = (dst_buf.as_ptr() as usize).wrapping_neg() % 4096;
    let src = &mut src_buf[src_at..src_at + CHUNK];
    let dst = &mut dst_buf[dst_at..dst_at + CHUNK];
    let mut state = 0x1234_5678_9abc_def0u64;
    for b in src.iter_mut() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        *b = state as u8;
    }
    let src = &*src;
    let memcpy = speed(CHUNK, || dst.copy_from_slice(black_box(src)));
    println!("memcpy 64 KiB: {memcpy:.0} MB/s\n");
    let levels: Vec<&Kernels> = Level::ALL
        .into_iter()
        .filter_map(Kernels::for_level)
        .collect();
    print!("{:<14} {:>2}", "kernel", "t");
    for k in &levels {
        print!(" {:>10}", k.level().name());
    }
    println!("   (MB/s)");
    type Run = fn(&Kernels, usize, &[u8], &mut [u8]);
    let byte: [(&str, Run); 2] = [
        ("shuffle", Kernels::shuffle),
        ("unshuffle", Kernels::unshuffle),
    ];
    let bit: [(&str, Run); 2] = [
        ("bitshuffle", Kernels::bitshuffle_block),
        ("bitunshuffle", Kernels::bitunshuffle_block),
    ];
    for (name, run) in byte {
        for t in [1usize, 2, 4, 8, 16] {
            print!("{name:<14} {t:>2}");
            for k in &levels {
                let s = speed(CHUNK, || run(k, t, black_box(src), dst));
                print!(" {s:>10.0}");
            }
            println!();
        }
    }
    for (name, run) in bit {
        for t in [1usize, 2, 4, 8] {
            print!("{name:<14} {t:>2}");
            for k in &levels {
                let s = speed(CHUNK, || {
                    for (a, b) in black_box(src).chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
                        run(k, t, a, b);
                    }
                });
                print!(" {s:>10.0}");
            }
            println!();
        }
    }
}
