//! Damaged array files found by the `array_parsers` and `array_folder` fuzz targets (and their
//! neighbours): each is a clean error, never a panic, a huge allocation or a schema the
//! readers would trip over later.

use tdbfilter::Error;
use tdbfilter::array::schema::ArraySchema;
use tdbfilter::pipeline::generic_tile;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

#[test]
fn a_fill_value_of_the_wrong_size_is_corrupt() {
    // Found by `array_parsers`: a v22 schema whose fixed-size attribute (16 KiB cells) carried
    // a 4-byte fill value parsed, leaving every reader to deal with it.
    let input = std::fs::read(format!("{DATA}/fuzz/array_parsers-fill-size-mismatch")).unwrap();
    let err = ArraySchema::parse(&input[1..], "fuzz").expect_err("a mismatched fill value");
    assert!(matches!(err, Error::CorruptData(_)), "{err}");
    assert!(
        err.to_string()
            .contains("fill value of 4 bytes for cells of 16384 bytes"),
        "{err}"
    );
}

/// The v5 schema of TileDB 2.0.8's plain_dense fixture (attributes a: int32, b: float64, s).
fn v5_schema() -> Vec<u8> {
    let file = std::fs::read(format!(
        "{DATA}/arrays/2.0.8/plain_dense/__array_schema.tdb"
    ))
    .unwrap();
    let (_, tile, _) = generic_tile::read(&file, None).unwrap();
    tile.data().to_vec()
}

#[test]
fn a_v5_attribute_claiming_giant_cells_is_refused_before_allocating() {
    // Before format version 6 the fill value is not stored: the reader makes it as
    // cell_val_num default values, so a damaged cell_val_num used to allocate
    // 4 × 4,294,967,280 bytes.
    let mut payload = v5_schema();
    ArraySchema::parse(&payload, "2.0.8").expect("the fixture's schema parses");
    // Attribute "a": u32 name length 1, 'a', datatype INT32 (0), then cell_val_num.
    let at = payload
        .windows(7)
        .position(|w| w == [1, 0, 0, 0, b'a', 0, 1])
        .expect("attribute a");
    payload[at + 6..at + 10].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    let err = ArraySchema::parse(&payload, "2.0.8").expect_err("giant cells");
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
    assert!(err.to_string().contains("attribute a"), "{err}");
}

#[test]
fn a_v5_fill_value_of_a_giant_cell_is_not_made() {
    // Found by `array_parsers`: a v5 schema (fill values not stored) whose attribute had
    // 1.5 GB cells made the parser build a 1.5 GB default fill value.
    let input = std::fs::read(format!("{DATA}/fuzz/array_parsers-v5-giant-fill")).unwrap();
    let err = ArraySchema::parse(&input[1..], "fuzz").expect_err("giant cells");
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
}
