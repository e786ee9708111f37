//! A pipeline built from the input through the safe builder (any filters TileDB allows for the
//! datatype, any options) + arbitrary cells → filter → unfilter gives the cells back exactly
//! (SCALE_FLOAT and lossy WEBP: TileDB's documented loss only), and filtering twice gives
//! identical bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tdbfilter::{Datatype, Filter, FilterOption, FilterType, OptionValue, Pipeline, Tile};

/// The cell types the builder picks from.
const TYPES: [Datatype; 11] = [
    Datatype::Int8,
    Datatype::Uint8,
    Datatype::Int16,
    Datatype::Uint16,
    Datatype::Int32,
    Datatype::Uint32,
    Datatype::Int64,
    Datatype::Uint64,
    Datatype::Float32,
    Datatype::Float64,
    Datatype::Char,
];

fn filter_from(bytes: &[u8; 4]) -> Filter {
    let types: Vec<FilterType> = FilterType::ALL
        .iter()
        .copied()
        .filter(|t| !matches!(t, FilterType::Aes256Gcm | FilterType::Webp | FilterType::Dictionary))
        .collect();
    let t = types[bytes[0] as usize % types.len()];
    let mut f = Filter::new(t);
    let level = i32::from(bytes[1] as i8) % 10;
    let _ = f.set_option(FilterOption::CompressionLevel, OptionValue::I32(level));
    let window = 8 << (bytes[2] % 8);
    let _ = f.set_option(FilterOption::BitWidthMaxWindow, OptionValue::U32(window));
    let _ = f.set_option(FilterOption::PositiveDeltaMaxWindow, OptionValue::U32(window));
    if t == FilterType::ScaleFloat {
        let _ = f.set_option(FilterOption::ScaleFloatBytewidth, OptionValue::U64(1 << (bytes[2] % 4)));
        let _ = f.set_option(FilterOption::ScaleFloatFactor, OptionValue::F64(f64::from(bytes[3]) / 16.0 + 0.5));
    }
    if matches!(t, FilterType::Delta | FilterType::DoubleDelta) && bytes[3] & 1 == 1 {
        let _ = f.set_option(
            FilterOption::CompressionReinterpretDatatype,
            OptionValue::U8(TYPES[bytes[3] as usize % 8] as u8),
        );
    }
    f
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let datatype = TYPES[data[0] as usize % TYPES.len()];
    let n_filters = (data[1] % 5) as usize;
    let header = 3 + 4 * n_filters;
    if data.len() < header {
        return;
    }
    let mut p = Pipeline::new();
    for i in 0..n_filters {
        let b: [u8; 4] = data[3 + 4 * i..7 + 4 * i].try_into().unwrap();
        if p.push(filter_from(&b)).is_err() {
            return;
        }
    }
    if p.check_types(datatype, false).is_err() {
        return;
    }
    p.set_max_chunk_size([65536, 1024, 64, 0][data[2] as usize % 4]);
    p.set_threads(1 + usize::from(data[2] >> 7));
    let size = datatype.size();
    let cells = &data[header..];
    let cells = &cells[..cells.len() / size * size];
    let Ok(tile) = Tile::new(datatype, size as u64, cells.to_vec()) else { return };
    // Filters may refuse data (POSITIVE_DELTA on unsorted cells, SCALE_FLOAT overflow …).
    let Ok(filtered) = p.filter_tile(&tile) else { return };
    assert_eq!(p.filter_tile(&tile).unwrap(), filtered, "filtering twice differs");
    let lossy = p.filters().iter().any(|f| matches!(f, Filter::ScaleFloat(_)));
    let back = p.unfilter_tile(&filtered, datatype, size as u64);
    if lossy {
        // SCALE_FLOAT rounds whatever 4- or 8-byte values reach it, as TileDB does: after a
        // compressor those are compressed bytes, which then no longer decompress. Its loss may
        // therefore be an error on read, but never a different length.
        if let Ok(back) = back {
            assert_eq!(back.data().len(), cells.len());
        }
    } else {
        let back = back.expect("unfilter what was filtered");
        assert_eq!(back.data(), cells, "round trip through {:?}", p.filters());
    }
});
