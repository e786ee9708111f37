//! Query conditions: arbitrary bytes → the condition text parser and typing (first byte even)
//! or the `.del` condition tile parser (first byte odd), on the schema and cells of
//! tests/data/conditions/sparse. No panic; a parsed tile serializes to bytes that parse to the
//! same condition; whatever parses evaluates (or fails cleanly) over the fixture's cells.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use tdbfilter::array::condition::{self, serialize};
use tdbfilter::array::schema::Enumeration;
use tdbfilter::array::{Array, FieldData, OpenOptions};

struct Fixture {
    array: Array,
    fields: Vec<FieldData>,
    enums: Vec<Enumeration>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let uri = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/conditions/sparse");
        let options = OpenOptions {
            timestamp_end: Some(1),
            ..Default::default()
        };
        let array = Array::open(uri, &options).expect("the condition fixture array");
        let s = array.schema();
        let mut names: Vec<String> = s.dimensions.iter().map(|d| d.name.clone()).collect();
        names.extend(s.attributes.iter().map(|a| a.name.clone()));
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let fields = array.read(&refs, None).expect("fixture cells");
        let enums = vec![
            array.enumeration("colors").expect("colors"),
            array.enumeration("sizes").expect("sizes"),
        ];
        Fixture { array, fields, enums }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let f = fixture();
    let schema = f.array.schema();
    let cond = if mode & 1 == 0 {
        let Ok(text) = std::str::from_utf8(rest) else {
            return;
        };
        match condition::parse_condition(text, schema, &f.enums) {
            Ok(c) => c,
            Err(e) => {
                assert!(e.message().contains("column") || e.message().contains("condition"));
                return;
            }
        }
    } else {
        let Ok(c) = serialize::parse(rest, "fuzz.del") else {
            return;
        };
        let again = serialize::serialize(&c).expect("a parsed condition serializes");
        assert_eq!(serialize::parse(&again, "again").expect("reparse"), c);
        c
    };
    if let Ok(mask) = condition::evaluate_fields(&cond, schema, &f.fields) {
        assert_eq!(mask.len() as u64, f.fields[0].cell_count);
    }
    let _ = condition::prune(&cond, schema, &|_| None);
    let _ = cond.negated();
});
