//! Checksummed and encrypted pipelines: a tile damaged anywhere is never returned as success
//! with different bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tdbfilter::{Datatype, Tile, pipeline::spec};

const SPECS: [&str; 5] = [
    "checksum_md5",
    "zstd,checksum_sha256",
    "bitshuffle,lz4,checksum_md5",
    "checksum_sha256,gzip",
    "zstd",
];

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let which = data[0] as usize % SPECS.len();
    let mut p = spec::parse(SPECS[which]).unwrap();
    if which == 4 || data[1] & 1 == 1 {
        p.set_encryption_key(&[7u8; 32]).unwrap();
    }
    let n_damage = 1 + (data[1] >> 1) as usize % 4;
    let (damage, cells) = data[2..].split_at((3 * n_damage).min(data.len() - 2));
    let tile = Tile::new(Datatype::Uint8, 1, cells.to_vec()).unwrap();
    let mut filtered = p.filter_tile(&tile).unwrap();
    let mut changed = false;
    for d in damage.chunks_exact(3) {
        let at = u16::from_le_bytes([d[0], d[1]]) as usize % filtered.len();
        if d[2] != 0 {
            filtered[at] ^= d[2];
            changed = true;
        }
    }
    if let Ok(back) = p.unfilter_tile(&filtered, Datatype::Uint8, 1) {
        assert_eq!(back.data(), cells, "a damaged tile (changed: {changed}) gave other bytes");
    }
});
