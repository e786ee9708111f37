//! MD5 of many independent messages at once ([`md5_many`]), for the CHECKSUM_MD5 filter's
//! per-chunk digests.
//!
//! One MD5 stream is latency bound: every step waits for the previous one. With AVX2, 8
//! messages are hashed side by side in the 32-bit lanes of each 256-bit register, two
//! registers (16 messages) at a time ("multi-buffer" MD5): each lane's 64-byte blocks are
//! loaded 32 bytes at a time and brought into lane order by an 8×8 transpose of 32-bit words;
//! each message's padded final block(s) are built in a small buffer and go through the same
//! code; a lane whose message ends takes the next one. Messages are scheduled longest first;
//! one that would leave the other lanes idle for long is hashed alone, and fewer than 3
//! messages go to `md5::Md5` one by one.
//!
//! AVX2 is detected on first use and the choice cached for the process. The environment
//! variable `TDBFILTER_SIMD` (read at that moment) set to `scalar` or `sse2` caps the level
//! below AVX2 (see [`super::Level`]); then, and on other targets, every message is hashed by
//! `md5::Md5`. AVX-512 is not used (its intrinsics need Rust 1.89, above the MSRV).

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[path = "md5_lanes_x86.rs"]
mod x86;

use md5::Digest;

/// MD5 digests of every message: `digests[i]` = MD5(`messages[i]`).
///
/// # Panics
///
/// If the two slices differ in length.
pub fn md5_many(messages: &[&[u8]], digests: &mut [[u8; 16]]) {
    assert_eq!(
        messages.len(),
        digests.len(),
        "md5_many: {} messages but {} digests",
        messages.len(),
        digests.len()
    );
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if avx2_enabled() {
        // SAFETY: `avx2_enabled` returns true only if the CPU supports AVX2.
        unsafe { x86::md5_many_avx2(messages, digests) };
        return;
    }
    for (m, d) in messages.iter().zip(digests.iter_mut()) {
        *d = digest_one(m);
    }
}

/// MD5 of one message by `md5::Md5`.
fn digest_one(m: &[u8]) -> [u8; 16] {
    md5::Md5::digest(m).into()
}

/// Whether the AVX2 lanes are used: the CPU supports AVX2 and `TDBFILTER_SIMD` allows it.
/// Decided once.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn avx2_enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ENABLED.get_or_init(|| {
        let cap = std::env::var("TDBFILTER_SIMD")
            .ok()
            .and_then(|v| super::Level::from_name(&v))
            .unwrap_or(super::Level::Avx2);
        cap >= super::Level::Avx2 && std::is_x86_feature_detected!("avx2")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `len` pseudo-random bytes (xorshift64) from `seed`.
    fn data(seed: u64, len: usize) -> Vec<u8> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 32) as u8
            })
            .collect()
    }

    fn expected(messages: &[&[u8]]) -> Vec<[u8; 16]> {
        messages.iter().map(|m| digest_one(m)).collect()
    }

    /// Checks `md5_many` and, where AVX2 is available, the lanes themselves (without the
    /// fallbacks to `md5::Md5`), in the given order and reversed.
    fn check(messages: &[&[u8]]) {
        let want = expected(messages);
        let mut got = vec![[0xAA; 16]; messages.len()];
        md5_many(messages, &mut got);
        assert_eq!(got, want, "md5_many, lengths {:?}", lens(messages));
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if !std::is_x86_feature_detected!("avx2") {
            crate::kernels::tests::report_skip("md5 AVX2 lanes", "CPU lacks avx2");
        } else {
            let fwd: Vec<usize> = (0..messages.len()).collect();
            let rev: Vec<usize> = fwd.iter().rev().copied().collect();
            for order in [fwd, rev] {
                let mut got = vec![[0xAA; 16]; messages.len()];
                // SAFETY: AVX2 was detected just above.
                unsafe { x86::hash_lanes(messages, &order, &mut got) };
                assert_eq!(got, want, "AVX2 lanes, lengths {:?}", lens(messages));
                let mut got = vec![[0xAA; 16]; messages.len()];
                // SAFETY: AVX2 was detected just above.
                unsafe { x86::md5_many_avx2(messages, &mut got) };
                assert_eq!(got, want, "md5_many_avx2, lengths {:?}", lens(messages));
            }
        }
    }

    fn lens(messages: &[&[u8]]) -> Vec<usize> {
        messages.iter().map(|m| m.len()).collect()
    }

    fn hex(d: &[u8; 16]) -> String {
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn no_messages() {
        md5_many(&[], &mut []);
        check(&[]);
    }

    #[test]
    #[should_panic]
    fn length_mismatch_panics() {
        md5_many(&[b"a"], &mut []);
    }

    #[test]
    fn rfc1321_vectors() {
        let vectors: [(&[u8], &str); 7] = [
            (b"", "d41d8cd98f00b204e9800998ecf8427e"),
            (b"a", "0cc175b9c0f1b6a831c399e269772661"),
            (b"abc", "900150983cd24fb0d6963f7d28e17f72"),
            (b"message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            (
                b"abcdefghijklmnopqrstuvwxyz",
                "c3fcd3d76192e4007dfb496cca67e13b",
            ),
            (
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                "d174ab98d277d9f5a5611c2c9f419d9f",
            ),
            (
                b"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a",
            ),
        ];
        let messages: Vec<&[u8]> = vectors.iter().map(|v| v.0).collect();
        let mut got = vec![[0; 16]; messages.len()];
        md5_many(&messages, &mut got);
        for (d, v) in got.iter().zip(&vectors) {
            assert_eq!(hex(d), v.1);
        }
        check(&messages);
    }

    #[test]
    fn message_counts_1_to_20() {
        let bufs: Vec<Vec<u8>> = (0..20).map(|i| data(i, 37 * i as usize + 1000)).collect();
        for n in 1..=20 {
            let messages: Vec<&[u8]> = bufs[..n].iter().map(|b| &b[..]).collect();
            check(&messages);
            // Equal lengths too.
            let messages: Vec<&[u8]> = bufs[..n].iter().map(|b| &b[..1000]).collect();
            check(&messages);
        }
    }

    #[test]
    fn all_lengths_0_to_300() {
        let buf = data(1, 300);
        // Each length among 10 others of different lengths.
        let all: Vec<&[u8]> = (0..=300).map(|n| &buf[..n]).collect();
        for group in all.chunks(11) {
            check(group);
        }
        let shuffled: Vec<&[u8]> = (0..=300).map(|n| &buf[..(n * 97) % 301]).collect();
        for group in shuffled.chunks(9) {
            check(group);
        }
        check(&all);
    }

    #[test]
    fn block_boundaries() {
        let buf = data(2, 1 << 10);
        let sizes = [
            55, 56, 63, 64, 65, 119, 120, 127, 128, 0, 1, 183, 184, 191, 192, 193,
        ];
        for n in 1..=sizes.len() {
            let messages: Vec<&[u8]> = sizes[..n].iter().map(|&s| &buf[..s]).collect();
            check(&messages);
        }
        for &s in &sizes {
            check(&[&buf[..s]; 8]);
            check(&[&buf[..s]; 16]);
        }
    }

    #[test]
    fn sixteen_chunks_of_64_kib() {
        let bufs: Vec<Vec<u8>> = (0..16).map(|i| data(100 + i, 65536)).collect();
        let messages: Vec<&[u8]> = bufs.iter().map(|b| &b[..]).collect();
        check(&messages);
        check(&messages[..8]);
        check(&messages[..9]);
    }

    #[test]
    fn mixed_big_and_small() {
        let big = data(3, 3 << 16);
        let sizes = [
            65536,
            0,
            100,
            65536,
            3,
            1 << 17,
            64,
            5000,
            65535,
            1,
            65537,
            56,
            129,
        ];
        let messages: Vec<&[u8]> = sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| &big[i..i + s])
            .collect();
        check(&messages);
        // One long message among short ones, and a few long ones among many short ones.
        let mut few: Vec<&[u8]> = vec![&big[..]];
        few.extend((0..7).map(|i| &big[i..i + 10 * i]));
        check(&few);
        let mut many: Vec<&[u8]> = (0..100).map(|i| &big[i..i + 3 * i]).collect();
        many[17] = &big[..];
        many[50] = &big[5..65536 + 5];
        check(&many);
    }

    /// Throughput on 16 messages of 64 KiB (one 1 MiB tile): `cargo test --release --lib
    /// md5_lanes::tests::throughput -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn throughput() {
        use std::time::Instant;
        let bufs: Vec<Vec<u8>> = (0..16).map(|i| data(i, 65536)).collect();
        let messages: Vec<&[u8]> = bufs.iter().map(|b| &b[..]).collect();
        let mut digests = vec![[0; 16]; 16];
        let reps = 400;
        let mib = (reps * 16 * 65536) as f64 / (1 << 20) as f64;
        for _ in 0..2 {
            let t = Instant::now();
            for _ in 0..reps {
                md5_many(std::hint::black_box(&messages), &mut digests);
            }
            let many = mib / t.elapsed().as_secs_f64();
            let t = Instant::now();
            for _ in 0..reps {
                for (m, d) in messages.iter().zip(digests.iter_mut()) {
                    *d = digest_one(std::hint::black_box(m));
                }
            }
            let single = mib / t.elapsed().as_secs_f64();
            println!(
                "16 × 64 KiB: md5_many {many:.0} MiB/s, md5::Md5 per message {single:.0} MiB/s"
            );
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            if std::is_x86_feature_detected!("avx2") {
                let order: Vec<usize> = (0..8).collect();
                let t = Instant::now();
                for _ in 0..reps {
                    for half in messages.chunks(8) {
                        // SAFETY: AVX2 was detected just above.
                        unsafe {
                            x86::hash_lanes(std::hint::black_box(half), &order, &mut digests)
                        };
                    }
                }
                let eight = mib / t.elapsed().as_secs_f64();
                println!("  8 lanes only (2 × 8 messages): {eight:.0} MiB/s");
            }
        }
        // Small messages: the per-batch overhead.
        let buf = data(7, 1 << 17);
        for (count, len) in [(1000, 20), (500, 100), (64, 1000), (4, 1 << 16)] {
            let messages: Vec<&[u8]> = (0..count).map(|i| &buf[i..i + len]).collect();
            let mut digests = vec![[0; 16]; count];
            let reps = (1 << 27) / (count * (len + 64));
            let mib = (reps * count * len) as f64 / (1 << 20) as f64;
            let t = Instant::now();
            for _ in 0..reps {
                md5_many(std::hint::black_box(&messages), &mut digests);
            }
            let many = mib / t.elapsed().as_secs_f64();
            let t = Instant::now();
            for _ in 0..reps {
                for (m, d) in messages.iter().zip(digests.iter_mut()) {
                    *d = digest_one(std::hint::black_box(m));
                }
            }
            let single = mib / t.elapsed().as_secs_f64();
            println!("{count} × {len} B: md5_many {many:.0} MiB/s, md5::Md5 {single:.0} MiB/s");
        }
    }
}
