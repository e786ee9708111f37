//! Arbitrary bytes → the array reader's in-memory parsers: an array schema (every version),
//! an enumeration and an array-metadata payload, chosen by the first byte. No panic; a
//! parsed schema's fields have the sizes their datatypes say.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tdbfilter::array::metadata;
use tdbfilter::array::schema::{ArraySchema, Enumeration};

fuzz_target!(|data: &[u8]| {
    let Some((&which, payload)) = data.split_first() else {
        return;
    };
    match which % 3 {
        0 => {
            if let Ok(s) = ArraySchema::parse(payload, "fuzz") {
                for a in &s.attributes {
                    if let Some(cs) = a.cell_size() {
                        assert_eq!(a.fill_value.len(), cs, "attribute {}", a.name);
                    }
                }
            }
        }
        1 => {
            let _ = Enumeration::parse(payload);
        }
        _ => {
            if let Ok(entries) = metadata::parse(payload) {
                for (_, e) in entries.iter().filter_map(|(k, e)| e.as_ref().map(|e| (k, e))) {
                    assert_eq!(e.value.len(), e.value_num as usize * e.datatype.size());
                }
            }
        }
    }
});
