//! Arbitrary bytes → generic-tile read, without a key and with one. No panic; what reads
//! reports a consumed size within the input and a payload of the header's tile size.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tdbfilter::pipeline::generic_tile;

const KEY: [u8; 32] = *b"0123456789abcdef0123456789abcdef";

fuzz_target!(|data: &[u8]| {
    for key in [None, Some(&KEY[..])] {
        if let Ok((header, tile, consumed)) = generic_tile::read(data, key) {
            assert!(consumed <= data.len());
            assert_eq!(tile.data().len() as u64, header.tile_size);
        }
    }
    let _ = generic_tile::read_header(data);
});
