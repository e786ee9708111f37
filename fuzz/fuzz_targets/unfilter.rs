//! Arbitrary pipeline bytes + tile bytes + datatype and cell size → unfilter, fixed and var.
//! No panic; on success the output is exactly the sum of the chunks' original lengths.
//! Allocations stay under a cap: the pipeline's memory limit (64 MiB) bounds the output, the
//! format's bounds everything else, and libFuzzer's -malloc_limit_mb (1 GiB in CI) reports any
//! allocation that escapes both. (Without a limit, codecs with no bounded ratio, such as BZIP2,
//! may legitimately claim gigabytes from a few hundred bytes.)
#![no_main]
use libfuzzer_sys::fuzz_target;
use tdbfilter::{Datatype, Pipeline, format::tile_format};

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let datatype = Datatype::ALL[data[0] as usize % Datatype::ALL.len()];
    let cell_size = datatype.size() as u64 * u64::from(1 + data[1] % 3);
    let split = (data[2] as usize).min(data.len() - 4);
    let (pipeline_bytes, rest) = data[4..].split_at(split);
    let Ok(mut p) = Pipeline::deserialize(pipeline_bytes, 22) else { return };
    p.set_threads(1 + usize::from(data[3] & 1));
    p.set_memory_limit(Some(64 << 20));
    if let Ok(tile) = p.unfilter_tile(rest, datatype, cell_size) {
        let table = tile_format::parse(rest).expect("an unfiltered tile parses");
        assert_eq!(tile.data().len() as u64, table.unfiltered_size);
    }
    // Var-size: the first part of `rest` as the offsets tile, the remainder as the data tile.
    let cut = (data[3] as usize * rest.len()) / 256;
    let (offsets_tile, data_tile) = rest.split_at(cut);
    let offsets = Pipeline::new();
    if let Ok(tile) = p.unfilter_var(&offsets, offsets_tile, data_tile, datatype) {
        let offs = tile.offsets().expect("a var tile has offsets");
        assert!(offs.windows(2).all(|w| w[0] <= w[1]));
        assert!(offs.last().is_none_or(|&o| o as usize <= tile.data().len()));
    }
});
