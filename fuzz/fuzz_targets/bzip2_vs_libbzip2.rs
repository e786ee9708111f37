//! Arbitrary data and level → the native bzip2 encoder writes exactly libbzip2's bytes (or
//! hands the block to libbzip2); arbitrary (mutated) streams → the native decoder and
//! libbzip2 agree: the same bytes, or both reject.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tdbfilter::codecs::bzip2::{decode, encode::Encoder};
use tdbfilter::codecs::bzip2::libbzip2::{compress_libbzip2, decompress_libbzip2};

fuzz_target!(|data: &[u8]| {
    let Some((&l, rest)) = data.split_first() else { return };
    let level = u32::from(1 + l % 9);
    if l & 0x80 == 0 {
        let mut native = Vec::new();
        let mut reference = Vec::new();
        compress_libbzip2(level, rest, &mut reference).unwrap();
        if Encoder::new().compress(level, rest, &mut native).is_ok() {
            assert_eq!(native, reference, "level {level}, {} bytes", rest.len());
        }
    } else if rest.len() >= 4 {
        // A stream with its expected output size in front.
        let size = u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize % (1 << 20);
        let stream = &rest[4..];
        let mut a = vec![0u8; size];
        let mut b = vec![0u8; size];
        let native = decode::decompress(stream, &mut a).is_ok();
        let reference = decompress_libbzip2(stream, &mut b).is_ok();
        if native {
            assert!(reference, "the native decoder read a stream libbzip2 rejects");
            assert_eq!(a, b, "the decoders disagree");
        }
    }
});
