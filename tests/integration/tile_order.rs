//! The reader merges fragments in TileDB's tile order (`order::tile_index`), C++ edges
//! included: the cells and their order are the ones TileDB-Py 0.36.1 returned for the same
//! writes (a FLOAT64 dimension whose tile quotient passes 2^64).

use tdbfilter::array::schema::ArraySchema;
use tdbfilter::array::{Array, OpenOptions, WriteLayout, Writer};
use tdbfilter::storage::StorageConfig;

const SCHEMA: &str = r#"{"sparse": true, "capacity": 100,
    "dimensions": [{"name": "d1", "type": "FLOAT64", "domain": [0.0, 1e30], "tile": 1.0},
                   {"name": "d2", "type": "INT32", "domain": [0, 9], "tile": 5}],
    "attributes": [{"name": "a", "type": "INT32"}]}"#;

#[test]
fn fragments_merge_by_tiledbs_tile_index() {
    let dir = std::env::temp_dir().join(format!("tdbf_tile_order_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let uri = dir.to_str().unwrap();
    let config = StorageConfig::new();
    tdbfilter::array::create(uri, &ArraySchema::from_json(SCHEMA).unwrap(), None, &config).unwrap();
    let batches: [&[(f64, i32, i32)]; 2] =
        [&[(1e25, 9, 0), (3.0, 0, 1)], &[(1.0, 0, 2), (2e25, 3, 3)]];
    for (t, cells) in batches.iter().enumerate() {
        let mut w = Writer::open(uri, None, Some(t as u64 + 1), &config).unwrap();
        w.set_layout(WriteLayout::Unordered).unwrap();
        let d1: Vec<u8> = cells.iter().flat_map(|c| c.0.to_le_bytes()).collect();
        let d2: Vec<u8> = cells.iter().flat_map(|c| c.1.to_le_bytes()).collect();
        let a: Vec<u8> = cells.iter().flat_map(|c| c.2.to_le_bytes()).collect();
        w.set_data("d1", &d1).unwrap();
        w.set_data("d2", &d2).unwrap();
        w.set_data("a", &a).unwrap();
        w.submit().unwrap();
        w.finalize().unwrap();
    }
    let array = Array::open(uri, &OpenOptions::default()).unwrap();
    let got = array.read(&["d1", "a"], None).unwrap();
    let d1: Vec<f64> = got[0]
        .data
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let a: Vec<i32> = got[1]
        .data
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // TileDB-Py: A.query(order='G')[:] gives d1 [2e25, 1e25, 1.0, 3.0], a [3, 0, 2, 1]: both
    // huge coordinates are in tile 0 (C++ double -> uint64_t of a quotient past 2^64).
    assert_eq!(d1, [2e25, 1e25, 1.0, 3.0]);
    assert_eq!(a, [3, 0, 2, 1]);
    std::fs::remove_dir_all(&dir).unwrap();
}
