//! Arbitrary data and level → the native deflate writes exactly C zlib's bytes.
#![no_main]
use flate2::{Compress, Compression, FlushCompress, Status};
use libfuzzer_sys::fuzz_target;
use tdbfilter::codecs::deflate::zlib_compress;

fuzz_target!(|data: &[u8]| {
    let Some((&l, src)) = data.split_first() else { return };
    let level = u32::from(l % 10);
    let mut native = Vec::new();
    zlib_compress(level, src, &mut native);
    let mut z = Compress::new(Compression::new(level), true);
    let mut reference = Vec::with_capacity(src.len() + src.len() / 1000 + 64);
    loop {
        let consumed = z.total_in() as usize;
        match z.compress_vec(&src[consumed..], &mut reference, FlushCompress::Finish) {
            Ok(Status::StreamEnd) => break,
            Ok(_) => reference.reserve(reference.capacity().max(4096)),
            Err(e) => panic!("zlib failed: {e}"),
        }
    }
    assert_eq!(native, reference, "level {level}, {} bytes", src.len());
});
