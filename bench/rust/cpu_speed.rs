//! Filter and unfilter speed of a pipeline in thread CPU time, for A/B comparisons on a loaded
//! machine (bench/ab_uninit.py --cpu): wall-clock time there mostly measures the scheduler,
//! while the CPU time of the one thread doing the work excludes the time it waited for a core.
//!
//! ```sh
//! cargo run --release -p tdbf --example cpu_speed -- SPEC TYPE FILE [TILE_BYTES] [REPEAT]
//! ```
//!
//! Cuts FILE into tiles of TILE_BYTES (default 1 MiB), filters and unfilters every tile one
//! after another on one thread (each output released at once, as `tdbf bench` does), REPEAT
//! times (default 9) after a verified warm-up, and prints one JSON line: the median and best
//! speeds in MiB of unfiltered data per CPU second.

use std::time::Duration;
use tdbfilter::pipeline::spec;
use tdbfilter::{Datatype, Tile};

/// CPU time consumed by the calling thread.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID needs nothing else.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: cpu_speed SPEC TYPE FILE [TILE_BYTES] [REPEAT]");
        std::process::exit(2);
    }
    let mut pipeline = spec::parse(&args[1]).expect("pipeline spec");
    pipeline.set_threads(1);
    let datatype = Datatype::from_name(&args[2]).expect("datatype");
    let data = std::fs::read(&args[3]).expect("input file");
    let tile_bytes: usize = args
        .get(4)
        .map_or(1 << 20, |s| s.parse().expect("tile bytes"));
    let repeat: usize = args.get(5).map_or(9, |s| s.parse().expect("repeat"));
    let cell = datatype.size();
    let tile_bytes = tile_bytes / cell * cell;
    let tiles: Vec<Tile> = data
        .chunks(tile_bytes)
        .map(|c| Tile::new(datatype, cell as u64, c.to_vec()).expect("tile"))
        .collect();
    // Warm-up, verified byte for byte.
    let filtered: Vec<Vec<u8>> = tiles
        .iter()
        .map(|t| pipeline.filter_tile(t).expect("filter"))
        .collect();
    for (t, f) in tiles.iter().zip(&filtered) {
        let back = pipeline
            .unfilter_tile(f, t.datatype(), t.cell_size())
            .expect("unfilter");
        assert!(back.data() == t.data(), "round trip differs");
    }
    let mib = data.len() as f64 / (1u64 << 20) as f64;
    let (mut fwd, mut rev) = (Vec::new(), Vec::new());
    for _ in 0..repeat {
        let start = thread_cpu();
        let mut sizes = 0usize;
        for t in &tiles {
            sizes += pipeline.filter_tile(t).expect("filter").len();
        }
        fwd.push(mib / (thread_cpu() - start).as_secs_f64());
        assert_eq!(sizes, filtered.iter().map(Vec::len).sum::<usize>());
        let start = thread_cpu();
        let mut sizes = 0usize;
        for (t, f) in tiles.iter().zip(&filtered) {
            sizes += pipeline
                .unfilter_tile(f, t.datatype(), t.cell_size())
                .expect("unfilter")
                .data()
                .len();
        }
        rev.push(mib / (thread_cpu() - start).as_secs_f64());
        assert_eq!(sizes, data.len() / cell * cell);
    }
    let best = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    println!(
        "{{\"filter_mib_s\":{:.3},\"unfilter_mib_s\":{:.3},\"filter_mib_s_best\":{:.3},\
         \"unfilter_mib_s_best\":{:.3},\"round_trip\":\"ok\"}}",
        median(&mut fwd.clone()),
        median(&mut rev.clone()),
        best(&fwd),
        best(&rev)
    );
}
