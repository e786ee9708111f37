use std::hint::black_box;
use tdbfilter::kernels::{Kernels, Level};
fn cpu_now() -> f64 { let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 }; unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) }; ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9 }
fn speed(bytes: usize, mut f: impl FnMut()) -> f64 {
    let mut reps = 1u32;
    loop { let s = cpu_now(); for _ in 0..reps { f(); } if cpu_now() - s >= 1e-3 { break; } reps *= 2; }
    let best = (0..15).map(|_| { let s = cpu_now(); for _ in 0..reps { f(); } cpu_now() - s }).fold(f64::INFINITY, f64::min);
    bytes as f64 * reps as f64 / best / 1e6
}
fn main() {
    let k = Kernels::for_level(Level::from_name(&std::env::var("LV").unwrap_or("avx2".into())).unwrap()).unwrap();
    let len = 65536;
    let mut buf = vec![0u8; 3 * len + 8192];
    let base = (buf.as_ptr() as usize).wrapping_neg() % 4096; // page-align src
    for (i, b) in buf.iter_mut().enumerate() { *b = (i * 7 + i / 13) as u8; }
    for (name, t, f) in [("shuffle", 2usize, Kernels::shuffle as fn(&Kernels, usize, &[u8], &mut [u8])), ("shuffle", 4, Kernels::shuffle), ("shuffle", 8, Kernels::shuffle), ("unshuffle", 2, Kernels::unshuffle), ("unshuffle", 4, Kernels::unshuffle), ("unshuffle", 8, Kernels::unshuffle)] {
        let mut res = vec![];
        for off in (0..4096).step_by(256) {
            let (a, b) = buf.split_at_mut(base + len + 8192);
            let so = std::env::var("SO").map(|v| v.parse::<usize>().unwrap()).unwrap_or(0); let src = &a[base + so..base + so + len];
            let dst = &mut b[off..off + len];
            res.push(speed(len, || f(k, t, black_box(src), dst)));
        }
        println!("{name:>10} t={t}: {}", res.iter().map(|x| format!("{:.0}", x / 1000.0)).collect::<Vec<_>>().join(" "));
    }
}
