//! Mutated zlib streams → the GZIP reader and C zlib agree: the same bytes, or both reject.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tdbfilter::codecs::gzip::{GzipContexts, decompress, decompress_zlib};

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let size = u16::from_le_bytes([data[0], data[1]]) as usize * 4;
    let stream = &data[2..];
    let mut ctxs = GzipContexts::default();
    let mut a = vec![0u8; size];
    let mut b = vec![0u8; size];
    let ours = decompress(&mut ctxs, stream, &mut a).is_ok();
    let zlib = decompress_zlib(&mut ctxs, stream, &mut b).is_ok();
    assert_eq!(ours, zlib, "the GZIP reader and zlib disagree on accepting the stream");
    if ours {
        assert_eq!(a, b, "the GZIP reader and zlib read different bytes");
    }
});
