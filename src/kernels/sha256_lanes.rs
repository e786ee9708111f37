//! Multi-message SHA-256: the digests of many independent messages (the 64 KiB chunks of a
//! tile, for the CHECKSUM_SHA256 filter) in one call.
//!
//! On x86-64 with SHA-NI (plus SSSE3 and SSE4.1) the messages are hashed [`LANES`] at a time
//! with their `sha256rnds2` streams interleaved, which hides that instruction's latency (the
//! bound of a single stream); whole blocks, the padded tails and messages of different lengths
//! are all handled by the same interleaved cores (see `sha256_lanes_x86.rs`). Elsewhere, or
//! when the environment variable `TDBFILTER_SIMD` is `scalar` (read once, case-insensitive),
//! each message goes through `sha2::Sha256::digest`. The choice is made on first use and
//! cached.

#[cfg(target_arch = "x86_64")]
#[path = "sha256_lanes_x86.rs"]
mod x86;

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// Messages hashed together by the SHA-NI path. Two streams already reach the throughput
/// bound of the SHA unit (~1.8× one stream on Zen 4); four measured no faster and spill
/// registers (SSE has 16).
pub const LANES: usize = 2;

/// Whether the SHA-NI path is used (detected once).
fn use_sha_ni() -> bool {
    static USE: OnceLock<bool> = OnceLock::new();
    *USE.get_or_init(|| {
        let scalar =
            std::env::var("TDBFILTER_SIMD").is_ok_and(|v| v.trim().eq_ignore_ascii_case("scalar"));
        #[cfg(target_arch = "x86_64")]
        let simd = x86::supported();
        #[cfg(not(target_arch = "x86_64"))]
        let simd = false;
        simd && !scalar
    })
}

/// SHA-256 digests of every message: `digests[i]` = SHA-256(`messages[i]`).
///
/// # Panics
/// If the two slices differ in length.
pub fn sha256_many(messages: &[&[u8]], digests: &mut [[u8; 32]]) {
    assert_eq!(messages.len(), digests.len(), "one digest per message");
    #[cfg(target_arch = "x86_64")]
    if use_sha_ni() {
        // SAFETY: `use_sha_ni` is true only when `x86::supported()` detected SHA, SSE2, SSSE3
        // and SSE4.1.
        unsafe { x86::sha256_many::<LANES>(messages, digests) };
        return;
    }
    for (m, d) in messages.iter().zip(digests.iter_mut()) {
        *d = Sha256::digest(m).into();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64 bytes.
    fn data(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect()
    }

    /// A `sha256_many`.
    type Many = fn(&[&[u8]], &mut [[u8; 32]]);

    fn reference(messages: &[&[u8]]) -> Vec<[u8; 32]> {
        messages.iter().map(|m| Sha256::digest(m).into()).collect()
    }

    /// Checks `f` (a `sha256_many`) on messages of the given lengths.
    fn check_with(f: Many, lens: &[usize]) {
        let owned: Vec<Vec<u8>> = lens
            .iter()
            .enumerate()
            .map(|(i, &n)| data(n, i as u64 + 1))
            .collect();
        let messages: Vec<&[u8]> = owned.iter().map(|v| v.as_slice()).collect();
        let mut got = vec![[0u8; 32]; messages.len()];
        f(&messages, &mut got);
        assert_eq!(got, reference(&messages), "lengths {lens:?}");
    }

    /// Every implementation available on this machine: dispatch, and each SHA-NI width.
    fn impls() -> Vec<Many> {
        #[allow(unused_mut)]
        let mut v: Vec<Many> = vec![sha256_many];
        #[cfg(target_arch = "x86_64")]
        if !x86::supported() {
            let why = crate::kernels::tests::lacking(&["sha", "sse2", "ssse3", "sse4.1"])
                .expect("SHA-NI is unsupported only when a feature it needs is missing");
            crate::kernels::tests::report_skip("sha256 SHA-NI lanes", &why);
        } else {
            v.push(|m, d| {
                // SAFETY: `x86::supported()` was checked just above.
                unsafe { x86::sha256_many::<1>(m, d) }
            });
            v.push(|m, d| {
                // SAFETY: `x86::supported()` was checked just above.
                unsafe { x86::sha256_many::<2>(m, d) }
            });
            v.push(|m, d| {
                // SAFETY: `x86::supported()` was checked just above.
                unsafe { x86::sha256_many::<4>(m, d) }
            });
        }
        v
    }

    fn check(lens: &[usize]) {
        for f in impls() {
            check_with(f, lens);
        }
    }

    #[test]
    fn fips_vectors() {
        let hex = |d: [u8; 32]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        let m448: &[u8] = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        let messages: [&[u8]; 3] = [b"abc", m448, b""];
        for f in impls() {
            let mut d = [[0u8; 32]; 3];
            f(&messages, &mut d);
            assert_eq!(
                hex(d[0]),
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
            );
            assert_eq!(
                hex(d[1]),
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            );
            assert_eq!(
                hex(d[2]),
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
            );
        }
    }

    #[test]
    fn zero_messages() {
        check(&[]);
    }

    #[test]
    #[should_panic]
    fn length_mismatch_panics() {
        let mut d = [[0u8; 32]; 1];
        sha256_many(&[b"a", b"b"], &mut d);
    }

    #[test]
    fn counts_1_to_20() {
        for n in 1..=20 {
            let lens: Vec<usize> = (0..n).map(|i| 1000 + 37 * i).collect();
            check(&lens);
            check(&vec![4096; n]);
        }
    }

    #[test]
    fn every_length_0_to_300() {
        for n in 0..=300usize {
            check(&[n]);
            check(&[n, n]);
            check(&[n, 300 - n, n / 2, 1000 + n, n, n + 64]);
        }
    }

    #[test]
    fn block_boundaries() {
        let b = [55, 56, 63, 64, 65, 119, 120, 127, 128];
        check(&b);
        for &x in &b {
            check(&[x, x, x, x]);
            for &y in &b {
                check(&[x, y]);
                check(&[x, y, x, y, 0]);
            }
        }
    }

    #[test]
    fn tile_of_chunks() {
        check(&[65536; 16]);
        check(&[65536; 15]);
    }

    #[test]
    fn mixed_big_and_small() {
        check(&[65536, 0, 100, 65536, 3, 70000, 64, 65535, 1, 200_000, 55]);
        check(&[1 << 20, 5, 65536 + 56, 65536 - 9]);
    }

    /// MiB/s of `sha256_many` against per-message `sha2`, 16 messages of 64 KiB: each
    /// implementation runs ~0.5 s in 10 slices, alternating, and reports its best slice (the
    /// machine is shared).
    #[test]
    #[ignore]
    fn throughput() {
        use std::time::{Duration, Instant};
        type Imp<'a> = (&'a str, Box<dyn Fn(&[&[u8]], &mut [[u8; 32]])>);
        let owned: Vec<Vec<u8>> = (0..16).map(|i| data(65536, i + 1)).collect();
        let messages: Vec<&[u8]> = owned.iter().map(|v| v.as_slice()).collect();
        let mut d = vec![[0u8; 32]; 16];
        let mut imps: Vec<Imp> = vec![
            (
                "sha2 per message",
                Box::new(|m, d| {
                    for (m, d) in m.iter().zip(d.iter_mut()) {
                        *d = Sha256::digest(m).into();
                    }
                }),
            ),
            ("sha256_many", Box::new(sha256_many)),
        ];
        #[cfg(target_arch = "x86_64")]
        if x86::supported() {
            // SAFETY (all three): `x86::supported()` was checked just above.
            imps.push((
                "sha-ni 1 lane",
                Box::new(|m, d| unsafe { x86::sha256_many::<1>(m, d) }),
            ));
            imps.push((
                "sha-ni 2 lanes",
                Box::new(|m, d| unsafe { x86::sha256_many::<2>(m, d) }),
            ));
            imps.push((
                "sha-ni 4 lanes",
                Box::new(|m, d| unsafe { x86::sha256_many::<4>(m, d) }),
            ));
        }
        let mut best = vec![0f64; imps.len()];
        for _ in 0..10 {
            for ((_, f), best) in imps.iter().zip(best.iter_mut()) {
                f(&messages, &mut d);
                let start = Instant::now();
                let mut reps = 0u64;
                while start.elapsed() < Duration::from_millis(50) {
                    f(&messages, &mut d);
                    reps += 1;
                }
                let mib = (reps * 16 * 65536) as f64 / (1 << 20) as f64;
                *best = best.max(mib / start.elapsed().as_secs_f64());
            }
        }
        for ((name, _), best) in imps.iter().zip(best) {
            println!("{name:>20}: {best:6.0} MiB/s");
        }
    }
}
