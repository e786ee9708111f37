//! Every kernel at every supported level against the scalar code, bit for bit.

use super::{Kernels, Level, scalar};

/// Lengths checked for every element size: all of 0..=300, then sizes around blocks and parts.
fn lengths() -> impl Iterator<Item = usize> {
    (0..=300).chain([1000, 4096, 8191, 8192, 65535, 65536, 65537])
}

/// A small deterministic PRNG (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// The SIMD levels this machine supports (never the scalar one).
fn simd_levels() -> Vec<&'static Kernels> {
    Level::ALL
        .into_iter()
        .filter(|&l| l != Level::Scalar)
        .filter_map(Kernels::for_level)
        .collect()
}

/// Whether this CPU has the x86 feature `name` (one of those [`level_features`] lists).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn has_feature(name: &str) -> bool {
    match name {
        "sse2" => std::is_x86_feature_detected!("sse2"),
        "avx2" => std::is_x86_feature_detected!("avx2"),
        "avx512f" => std::is_x86_feature_detected!("avx512f"),
        "avx512bw" => std::is_x86_feature_detected!("avx512bw"),
        "avx512vl" => std::is_x86_feature_detected!("avx512vl"),
        "avx512vbmi" => std::is_x86_feature_detected!("avx512vbmi"),
        "gfni" => std::is_x86_feature_detected!("gfni"),
        "sha" => std::is_x86_feature_detected!("sha"),
        "ssse3" => std::is_x86_feature_detected!("ssse3"),
        "sse4.1" => std::is_x86_feature_detected!("sse4.1"),
        _ => panic!("unknown feature {name}"),
    }
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
fn has_feature(_name: &str) -> bool {
    false
}

/// The CPU features `level` needs (as [`Level::is_supported`] checks them).
fn level_features(level: Level) -> &'static [&'static str] {
    match level {
        Level::Scalar => &[],
        Level::Sse2 => &["sse2"],
        Level::Avx2 => &["sse2", "avx2"],
        Level::Avx512 => &[
            "sse2",
            "avx2",
            "avx512f",
            "avx512bw",
            "avx512vl",
            "avx512vbmi",
            "gfni",
        ],
    }
}

/// Why `level` cannot be used here (see [`lacking`]), or `None` when it is supported.
fn level_lacking(level: Level) -> Option<String> {
    if level == Level::Avx512 && !cfg!(target_arch = "x86_64") {
        return Some("the AVX-512 kernels need an x86-64 target".to_string());
    }
    lacking(level_features(level))
}

/// Why `features` cannot be used here: "CPU lacks x, y" (or "not an x86 target"), or `None`
/// when every one is present.
pub(crate) fn lacking(features: &[&str]) -> Option<String> {
    if !cfg!(any(target_arch = "x86", target_arch = "x86_64")) && !features.is_empty() {
        return Some("not an x86 target".to_string());
    }
    let missing: Vec<&str> = features
        .iter()
        .copied()
        .filter(|f| !has_feature(f))
        .collect();
    (!missing.is_empty()).then(|| format!("CPU lacks {}", missing.join(", ")))
}

/// Prints `SKIP <what>: <why>` where it is always seen: straight to the process's stderr, past
/// the test harness's output capture (which hides `eprintln!` of passing tests), once per
/// message. A test that cannot run its check on this machine says so, instead of passing
/// silently.
pub(crate) fn report_skip(what: &str, why: &str) {
    use std::io::Write;
    static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let line = format!("SKIP {what}: {why}");
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if !seen.contains(&line) {
        // On a line of its own (`cargo test -q` prints progress dots without a newline).
        // Ignoring a failed write to stderr: there is nowhere else to report it.
        let _ = writeln!(std::io::stderr(), "\n{line}");
        seen.push(line);
    }
}

/// The kernels of `level`, or `None` after a visible `SKIP` line naming the missing features
/// when this CPU lacks them.
fn level_or_skip(level: Level) -> Option<&'static Kernels> {
    let k = Kernels::for_level(level);
    if k.is_none() {
        let why = level_lacking(level)
            .expect("a level is unsupported only when a feature it needs is missing");
        report_skip(&format!("{} kernels", level.name()), &why);
    }
    k
}

type Kernel = fn(&Kernels, usize, &[u8], &mut [u8]);

/// `kernel` at `k`'s level equals `reference` on `src`, into a destination full of garbage (so
/// that every byte must be written), and on copies of `src` and `dst` shifted by 1..3 bytes
/// (unaligned) when `unaligned` is set.
fn check_one(
    k: &Kernels,
    kernel: Kernel,
    reference: fn(usize, &[u8], &mut [u8]),
    t: usize,
    src: &[u8],
    rng: &mut Rng,
    unaligned: bool,
) -> Vec<u8> {
    let len = src.len();
    let mut want = vec![0u8; len];
    reference(t, src, &mut want);
    let mut got = rng.bytes(len);
    kernel(k, t, src, &mut got);
    assert!(
        got == want,
        "{:?} t={t} len={len}: first difference at byte {:?}",
        k.level(),
        got.iter().zip(&want).position(|(a, b)| a != b)
    );
    if unaligned {
        for shift in 1..4 {
            let mut s = vec![0u8; len + shift];
            s[shift..].copy_from_slice(src);
            let mut d = rng.bytes(len + 2 * shift);
            kernel(
                k,
                t,
                &s[shift..],
                &mut d[2 * shift - 1..2 * shift - 1 + len],
            );
            assert!(
                d[2 * shift - 1..2 * shift - 1 + len] == want[..],
                "{:?} t={t} len={len} shift={shift}",
                k.level()
            );
        }
    }
    want
}

fn check_byteshuffle_level(k: &Kernels) {
    let mut rng = Rng(0x5348_5546 ^ k.level() as u64);
    let sizes = (1..=16).chain([17, 24, 31, 32, 33, 48, 100]);
    for t in sizes {
        for len in lengths() {
            let unaligned = len % 37 == 0 || len > 300;
            let src = rng.bytes(len);
            let shuffled = check_one(
                k,
                Kernels::shuffle,
                scalar::shuffle,
                t,
                &src,
                &mut rng,
                unaligned,
            );
            // The unshuffle of arbitrary bytes, and of the shuffle (round trip).
            check_one(
                k,
                Kernels::unshuffle,
                scalar::unshuffle,
                t,
                &src,
                &mut rng,
                unaligned,
            );
            let back = check_one(
                k,
                Kernels::unshuffle,
                scalar::unshuffle,
                t,
                &shuffled,
                &mut rng,
                false,
            );
            assert_eq!(back, src, "{:?} t={t} len={len}: round trip", k.level());
        }
    }
}

fn check_bitshuffle_level(k: &Kernels) {
    let mut rng = Rng(0x4249_5453 ^ k.level() as u64);
    // 1, 2, 4 and 8 are transposed with SIMD; the others fall back to scalar.
    for t in [1usize, 2, 4, 8, 3, 5, 6, 7, 16] {
        for len in lengths() {
            let unaligned = len % 37 == 0 || len > 300;
            let src = rng.bytes(len);
            let shuffled = check_one(
                k,
                Kernels::bitshuffle_block,
                scalar::bitshuffle_block,
                t,
                &src,
                &mut rng,
                unaligned,
            );
            check_one(
                k,
                Kernels::bitunshuffle_block,
                scalar::bitunshuffle_block,
                t,
                &src,
                &mut rng,
                unaligned,
            );
            let back = check_one(
                k,
                Kernels::bitunshuffle_block,
                scalar::bitunshuffle_block,
                t,
                &shuffled,
                &mut rng,
                false,
            );
            assert_eq!(back, src, "{:?} t={t} len={len}: round trip", k.level());
        }
    }
}

/// Random element sizes, lengths and contents (including runs of equal bytes).
fn check_random(k: &Kernels, iterations: usize) {
    let mut rng = Rng(0x5241_4E44 ^ k.level() as u64);
    for _ in 0..iterations {
        let t = 1 + rng.below(20);
        let len = match rng.below(3) {
            0 => rng.below(512),
            1 => rng.below(9000),
            _ => 32 * t * (1 + rng.below(40)) + rng.below(3 * t),
        };
        let src: Vec<u8> = if rng.below(4) == 0 {
            let v = rng.next() as u8;
            (0..len).map(|i| if i % 7 == 0 { !v } else { v }).collect()
        } else {
            rng.bytes(len)
        };
        check_one(
            k,
            Kernels::shuffle,
            scalar::shuffle,
            t,
            &src,
            &mut rng,
            false,
        );
        check_one(
            k,
            Kernels::unshuffle,
            scalar::unshuffle,
            t,
            &src,
            &mut rng,
            false,
        );
        let bt = [1, 2, 4, 8, 1 + rng.below(12)][rng.below(5)];
        check_one(
            k,
            Kernels::bitshuffle_block,
            scalar::bitshuffle_block,
            bt,
            &src,
            &mut rng,
            false,
        );
        check_one(
            k,
            Kernels::bitunshuffle_block,
            scalar::bitunshuffle_block,
            bt,
            &src,
            &mut rng,
            false,
        );
    }
}

#[test]
fn sse2_byteshuffle_matches_scalar() {
    if let Some(k) = level_or_skip(Level::Sse2) {
        check_byteshuffle_level(k);
    }
}

#[test]
fn avx2_byteshuffle_matches_scalar() {
    if let Some(k) = level_or_skip(Level::Avx2) {
        check_byteshuffle_level(k);
    }
}

#[test]
fn sse2_bitshuffle_matches_scalar() {
    if let Some(k) = level_or_skip(Level::Sse2) {
        check_bitshuffle_level(k);
    }
}

#[test]
fn avx2_bitshuffle_matches_scalar() {
    if let Some(k) = level_or_skip(Level::Avx2) {
        check_bitshuffle_level(k);
    }
}

#[test]
fn avx512_byteshuffle_matches_scalar() {
    if let Some(k) = level_or_skip(Level::Avx512) {
        check_byteshuffle_level(k);
    }
}

#[test]
fn avx512_bitshuffle_matches_scalar() {
    if let Some(k) = level_or_skip(Level::Avx512) {
        check_bitshuffle_level(k);
    }
}

#[test]
fn sse2_random_inputs_match_scalar() {
    if let Some(k) = level_or_skip(Level::Sse2) {
        check_random(k, 1500);
    }
}

#[test]
fn avx2_random_inputs_match_scalar() {
    if let Some(k) = level_or_skip(Level::Avx2) {
        check_random(k, 1500);
    }
}

#[test]
fn avx512_random_inputs_match_scalar() {
    if let Some(k) = level_or_skip(Level::Avx512) {
        check_random(k, 1500);
    }
}

#[test]
fn scalar_level_is_the_scalar_code() {
    let k = Kernels::for_level(Level::Scalar).expect("scalar is always supported");
    assert_eq!(k.level(), Level::Scalar);
    let mut rng = Rng(1);
    for (t, len) in [(1, 10), (2, 33), (4, 1000), (8, 8192), (3, 301)] {
        let src = rng.bytes(len);
        check_one(
            k,
            Kernels::shuffle,
            scalar::shuffle,
            t,
            &src,
            &mut rng,
            false,
        );
        check_one(
            k,
            Kernels::bitshuffle_block,
            scalar::bitshuffle_block,
            t,
            &src,
            &mut rng,
            false,
        );
    }
}

#[test]
fn dispatched_functions_match_scalar() {
    let mut rng = Rng(2);
    for t in [1usize, 2, 3, 4, 8, 16] {
        for len in [0usize, 7, 64, 255, 4096, 8192, 65537] {
            let src = rng.bytes(len);
            let mut want = vec![0u8; len];
            let mut got = vec![0u8; len];
            scalar::shuffle(t, &src, &mut want);
            super::shuffle(t, &src, &mut got);
            assert_eq!(got, want);
            scalar::unshuffle(t, &src, &mut want);
            super::unshuffle(t, &src, &mut got);
            assert_eq!(got, want);
            scalar::bitshuffle_block(t, &src, &mut want);
            super::bitshuffle_block(t, &src, &mut got);
            assert_eq!(got, want);
            scalar::bitunshuffle_block(t, &src, &mut want);
            super::bitunshuffle_block(t, &src, &mut got);
            assert_eq!(got, want);
        }
    }
}

#[test]
fn level_features_agree_with_detection() {
    for level in Level::ALL {
        assert_eq!(
            level_lacking(level).is_none(),
            level.is_supported(),
            "{level:?}: the features listed for skip lines disagree with is_supported"
        );
    }
}

/// With `TDBFILTER_SIMD` set (as scripts/test.d/65-sanitizers.sh runs the kernel and filter
/// tests once per level), the dispatched kernels are those of that level, or of the widest
/// supported one below it; the level is reported on stderr, past the output capture, for the
/// script to check that the run really was at the level it asked for.
#[test]
fn tdbfilter_simd_sets_the_dispatched_level() {
    use std::io::Write;
    let best = Kernels::best().level();
    let Some(value) = std::env::var_os("TDBFILTER_SIMD") else {
        return; // best_level_is_the_widest_supported checks the level without a cap.
    };
    let value = value.to_string_lossy().into_owned();
    let cap = Level::from_name(&value)
        .unwrap_or_else(|| panic!("TDBFILTER_SIMD={value:?} names no level"));
    let want = Level::ALL
        .into_iter()
        .rev()
        .find(|&l| l <= cap && l.is_supported())
        .expect("scalar is always supported");
    assert_eq!(best, want, "TDBFILTER_SIMD={value}");
    let _ = writeln!(
        std::io::stderr(),
        "\nkernels dispatched at {} (TDBFILTER_SIMD={})",
        best.name(),
        cap.name()
    );
}

#[test]
fn best_level_is_the_widest_supported() {
    let best = Kernels::best().level();
    assert!(best.is_supported());
    if std::env::var_os("TDBFILTER_SIMD").is_none() {
        let widest = Level::ALL.into_iter().rev().find(|l| l.is_supported());
        assert_eq!(Some(best), widest);
    }
    #[cfg(target_arch = "x86_64")]
    assert!(Level::Sse2.is_supported(), "SSE2 is part of x86-64");
    assert_eq!(Level::from_name(" AVX2 "), Some(Level::Avx2));
    assert_eq!(Level::from_name("sse2"), Some(Level::Sse2));
    assert_eq!(Level::from_name("scalar"), Some(Level::Scalar));
    assert_eq!(Level::from_name("AVX512"), Some(Level::Avx512));
    assert_eq!(Level::from_name("avx512f"), None);
}

#[test]
fn every_level_rejects_mismatched_lengths() {
    let kernels: [Kernel; 6] = [
        Kernels::shuffle,
        Kernels::unshuffle,
        Kernels::bitshuffle_block,
        Kernels::bitunshuffle_block,
        Kernels::xor_encode,
        Kernels::xor_decode,
    ];
    for k in Level::ALL.into_iter().filter_map(Kernels::for_level) {
        for kernel in kernels {
            let r = std::panic::catch_unwind(|| {
                let mut dst = vec![0u8; 255];
                kernel(k, 2, &[0u8; 256], &mut dst);
            });
            assert!(r.is_err(), "{:?} accepted a shorter destination", k.level());
        }
    }
}

#[test]
fn simd_levels_listed() {
    // On x86-64, SSE2 is always present: the SIMD tests above never all skip.
    #[cfg(target_arch = "x86_64")]
    assert!(!simd_levels().is_empty());
    for k in simd_levels() {
        assert!(k.level().is_supported());
    }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[test]
fn row_pass_splitting_matches_scalar() {
    use super::byteshuffle_x86::row_passes;
    // 64 KiB of 8-byte elements: all 8 rows in one L1 set → 2 passes; 16-byte elements with
    // rows 2048 apart → 2 passes, 4096 apart → 4 passes; offsets of a line or more → 1 pass.
    assert_eq!(row_passes(8, 8192), 2);
    assert_eq!(row_passes(8, 4096 + 8), 2);
    assert_eq!(row_passes(8, 8192 + 64), 1);
    assert_eq!(row_passes(8, 1024), 1);
    assert_eq!(row_passes(16, 2048), 2);
    assert_eq!(row_passes(16, 4096), 4);
    assert_eq!(row_passes(16, 4095), 4);
    assert_eq!(row_passes(16, 1000), 1);
    assert_eq!(row_passes(4, 16384), 1);
    let mut rng = Rng(3);
    for k in simd_levels() {
        for t in [8usize, 16] {
            for n in [2048usize, 2049, 4096, 4100, 6144, 8192, 8200, 12288] {
                for extra in [0, 1, t - 1] {
                    let src = rng.bytes(n * t + extra);
                    check_one(
                        k,
                        Kernels::shuffle,
                        scalar::shuffle,
                        t,
                        &src,
                        &mut rng,
                        false,
                    );
                    check_one(
                        k,
                        Kernels::unshuffle,
                        scalar::unshuffle,
                        t,
                        &src,
                        &mut rng,
                        false,
                    );
                }
            }
        }
    }
}

/// Every level against c-blosc2 2.21.3 itself: `blosc2_shuffle`, `blosc2_unshuffle`,
/// `blosc2_bitshuffle` and `bitunshuffle` (format 3) were run — in blosc2's generic, SSE2,
/// AVX2 and AVX-512 builds, which all agree — on xorshift64 data for lengths 0..=300 and ten
/// larger ones and element sizes 1..=16; the MD5 of the input and the four outputs of every
/// case, in order, is the constant below.
#[test]
fn every_level_matches_blosc2_output_digest() {
    use md5::{Digest, Md5};
    const BLOSC2_MD5: &str = "3338af0cd12ad55fc1591480672b670c";
    let lengths = (0..=300).chain([
        1000, 4096, 8191, 8192, 8200, 12345, 32768, 65535, 65536, 65537,
    ]);
    let lengths: Vec<usize> = lengths.collect();
    for k in Level::ALL.into_iter().filter_map(Kernels::for_level) {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut md5 = Md5::new();
        for &len in &lengths {
            for t in 1..=16 {
                let src: Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        state as u8
                    })
                    .collect();
                md5.update(&src);
                let mut out = vec![0u8; len];
                for kernel in [
                    Kernels::shuffle as Kernel,
                    Kernels::unshuffle,
                    Kernels::bitshuffle_block,
                    Kernels::bitunshuffle_block,
                ] {
                    kernel(k, t, &src, &mut out);
                    md5.update(&out);
                }
            }
        }
        let digest: String = md5.finalize().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(digest, BLOSC2_MD5, "{:?}", k.level());
    }
}

/// The XOR kernels at `k`'s level against the scalar ones, for the element sizes of the XOR
/// filter (and others, which take the fallback), every length of [`lengths`] (the tails after
/// the last whole vector included), aligned and not; the decoding of the encoding restores the
/// input.
fn check_xor_level(k: &Kernels) {
    let mut rng = Rng(0x584f_5221 ^ k.level() as u64);
    for s in [1usize, 2, 4, 8, 3, 16, 33] {
        for len in lengths() {
            let unaligned = len % 37 == 0 || len > 300;
            let src = rng.bytes(len);
            let encoded = check_one(
                k,
                Kernels::xor_encode,
                scalar::xor_encode,
                s,
                &src,
                &mut rng,
                unaligned,
            );
            check_one(
                k,
                Kernels::xor_decode,
                scalar::xor_decode,
                s,
                &src,
                &mut rng,
                unaligned,
            );
            let back = check_one(
                k,
                Kernels::xor_decode,
                scalar::xor_decode,
                s,
                &encoded,
                &mut rng,
                false,
            );
            assert_eq!(back, src, "{:?} s={s} len={len}: round trip", k.level());
        }
    }
}

#[test]
fn scalar_xor_matches_elementwise_definition() {
    // y_0 = x_0, y_j = x_j ^ x_{j-1} over little-endian elements of s bytes.
    let mut rng = Rng(3);
    for s in [1usize, 2, 4, 8] {
        for n in [0usize, 1, 2, 5, 100] {
            let src = rng.bytes(n * s);
            let elems: Vec<u64> = src
                .chunks_exact(s)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b[..s].copy_from_slice(c);
                    u64::from_le_bytes(b)
                })
                .collect();
            let mut want = Vec::new();
            let mut running = 0u64;
            for (j, &e) in elems.iter().enumerate() {
                let prev = if j == 0 { 0 } else { elems[j - 1] };
                want.extend_from_slice(&(e ^ prev).to_le_bytes()[..s]);
                running ^= e;
            }
            let mut got = vec![0u8; src.len()];
            scalar::xor_encode(s, &src, &mut got);
            assert_eq!(got, want, "encode s={s} n={n}");
            // Decoding `src` is the running XOR of its elements.
            scalar::xor_decode(s, &src, &mut got);
            let last = got.len().saturating_sub(s);
            assert_eq!(&got[last..], &running.to_le_bytes()[..src.len() - last]);
        }
    }
}

#[test]
fn sse2_xor_matches_scalar() {
    if let Some(k) = level_or_skip(Level::Sse2) {
        check_xor_level(k);
    }
}

#[test]
fn avx2_xor_matches_scalar() {
    if let Some(k) = level_or_skip(Level::Avx2) {
        check_xor_level(k);
    }
}

#[test]
fn avx512_xor_matches_scalar() {
    if let Some(k) = level_or_skip(Level::Avx512) {
        check_xor_level(k);
    }
}

#[test]
fn dispatched_xor_matches_scalar() {
    let mut rng = Rng(4);
    for s in [1usize, 2, 4, 8] {
        for len in [0usize, 7, 64, 255, 4096, 65537] {
            let src = rng.bytes(len);
            let mut want = vec![0u8; len];
            let mut got = vec![0u8; len];
            scalar::xor_encode(s, &src, &mut want);
            super::xor_encode(s, &src, &mut got);
            assert_eq!(got, want);
            scalar::xor_decode(s, &src, &mut want);
            super::xor_decode(s, &src, &mut got);
            assert_eq!(got, want);
        }
    }
}
