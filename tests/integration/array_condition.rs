//! Query conditions against TileDB-Py 0.36.1 (libtiledb 2.30), on the fixtures of
//! tests/fixtures/make_condition_fixtures.py (tests/data/conditions/): the sparse array is
//! read with `tdbfilter::array`, every condition text is parsed, typed and evaluated by
//! `array::condition`, and the passing cells must be the ones TileDB-Py returned (or both
//! refuse the condition); every `.del` commit TileDB wrote must parse, our serialization of the
//! same delete must be byte-identical, and applying the stored conditions in turn must leave
//! the cells TileDB-Py reads after each delete.

use serde_json::Value;
use std::path::PathBuf;
use tdbfilter::array::condition::{self, Condition, serialize};
use tdbfilter::array::schema::Enumeration;
use tdbfilter::array::{Array, FieldData, OpenOptions};
use tdbfilter::pipeline::generic_tile;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/conditions")
}

struct Fixture {
    array: Array,
    fields: Vec<FieldData>,
    enums: Vec<Enumeration>,
    expected: Value,
}

fn fixture() -> Fixture {
    let uri = root().join("sparse");
    let options = OpenOptions {
        timestamp_end: Some(1),
        ..Default::default()
    };
    let array = Array::open(uri.to_str().unwrap(), &options).unwrap();
    let schema = array.schema();
    let mut names: Vec<String> = schema.dimensions.iter().map(|d| d.name.clone()).collect();
    names.extend(schema.attributes.iter().map(|a| a.name.clone()));
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let fields = array.read(&refs, None).unwrap();
    let enums = vec![
        array.enumeration("colors").unwrap(),
        array.enumeration("sizes").unwrap(),
    ];
    let text = std::fs::read_to_string(root().join("expected.json")).unwrap();
    Fixture {
        array,
        fields,
        enums,
        expected: serde_json::from_str(&text).unwrap(),
    }
}

/// The coordinates (d, sd) of the cells where `mask` holds, as TileDB-Py's JSON lists them.
fn coords(fields: &[FieldData], mask: &[bool]) -> Vec<Value> {
    let d = &fields[0];
    let sd = &fields[1];
    (0..mask.len())
        .filter(|i| mask[*i])
        .map(|i| {
            let v = i64::from_le_bytes(d.cell(i).try_into().unwrap());
            serde_json::json!([v, String::from_utf8(sd.cell(i).to_vec()).unwrap()])
        })
        .collect()
}

#[test]
fn queries_select_the_cells_tiledb_py_selects() {
    let f = fixture();
    let schema = f.array.schema();
    let mut compared = 0;
    for q in f.expected["queries"].as_array().unwrap() {
        let text = q["cond"].as_str().unwrap();
        let parsed = condition::parse_condition(text, schema, &f.enums);
        if let Some(cells) = q.get("cells") {
            let c = parsed.unwrap_or_else(|e| panic!("{text}: {e}"));
            let mask = condition::evaluate_fields(&c, schema, &f.fields).unwrap();
            assert_eq!(&Value::Array(coords(&f.fields, &mask)), cells, "{text}");
            compared += 1;
        } else if q.get("error").is_some() {
            let e = parsed.expect_err(text);
            assert!(e.message().contains("condition"), "{text}: {e}");
        } else {
            // TileDB-Py crashes on `not` over `in`; we negate as libtiledb's own negation does.
            assert!(q.get("crash").is_some(), "{q}");
            let c = parsed.unwrap();
            let Some(rest) = text.strip_prefix("not ") else {
                panic!("{text}: an unexpected crash")
            };
            let plain = condition::parse_condition(rest, schema, &f.enums).unwrap();
            assert_eq!(c, plain.negated(), "{text}");
            let (a, b) = (
                condition::evaluate_fields(&c, schema, &f.fields).unwrap(),
                condition::evaluate_fields(&plain, schema, &f.fields).unwrap(),
            );
            assert!(
                a.iter().zip(&b).all(|(x, y)| x != y),
                "{text}: no nulls in 'a'"
            );
        }
    }
    assert!(compared >= 60, "only {compared} conditions compared");
}

#[test]
fn delete_commits_parse_serialize_and_apply_as_tiledb() {
    let f = fixture();
    let schema = f.array.schema();
    let commits = root().join("sparse/__commits");
    let mut stored: Vec<Condition> = Vec::new();
    let deletes = f.expected["deletes"].as_array().unwrap();
    assert!(deletes.len() >= 8);
    for d in deletes {
        let text = d["cond"].as_str().unwrap();
        let file = d["file"].as_str().unwrap();
        let bytes = std::fs::read(commits.join(file)).unwrap();
        let (_, tile, _) = generic_tile::read(&bytes, None).unwrap();
        let payload = tile.data().to_vec();
        let ours = condition::parse_condition(text, schema, &f.enums).unwrap();
        assert_eq!(
            serialize::delete_payload(&ours).unwrap(),
            payload,
            "{file}: the serialized delete of {text:?}"
        );
        let read = serialize::parse(&payload, file).unwrap();
        assert_eq!(serialize::serialize(&read).unwrap(), payload, "{file}");
        stored.push(read);
        // A cell survives when every stored (negated) condition holds for it.
        let mut keep = vec![true; f.fields[0].cell_count as usize];
        for c in &stored {
            let m = condition::evaluate_fields(c, schema, &f.fields).unwrap();
            keep.iter_mut().zip(m).for_each(|(k, x)| *k &= x);
        }
        assert_eq!(
            Value::Array(coords(&f.fields, &keep)),
            d["cells"],
            "after {text}"
        );
    }
}

#[test]
fn pruning_is_three_valued_and_never_wrong() {
    use condition::{TileStats, Tri};
    let f = fixture();
    let schema = f.array.schema();
    let stats = |name: &str| -> Option<TileStats> {
        match name {
            "a" => Some(TileStats {
                min: Some(0i32.to_le_bytes().to_vec()),
                max: Some(9i32.to_le_bytes().to_vec()),
                null_count: Some(0),
                cell_count: 10,
            }),
            "n" => Some(TileStats {
                min: Some(0i32.to_le_bytes().to_vec()),
                max: Some(9i32.to_le_bytes().to_vec()),
                null_count: Some(3),
                cell_count: 10,
            }),
            "g" => Some(TileStats {
                min: Some(0.5f64.to_le_bytes().to_vec()),
                max: Some(7f64.to_le_bytes().to_vec()),
                null_count: Some(0),
                cell_count: 10,
            }),
            _ => None,
        }
    };
    for (text, want) in [
        ("a > 20", Tri::Never),
        ("a >= 0", Tri::Always),
        ("a < 5", Tri::Maybe),
        ("a in [20, 30]", Tri::Never),
        ("a != 20", Tri::Always),
        ("n >= 0", Tri::Maybe),
        ("n > 20", Tri::Never),
        ("n == None", Tri::Maybe),
        ("a == None", Tri::Never),
        ("g > 100", Tri::Never),
        ("g < 100", Tri::Maybe),
        ("a > 20 or g > 100", Tri::Never),
        ("a >= 0 and a < 5", Tri::Maybe),
        ("(a >= 0) | (s == 'x')", Tri::Always),
        ("s == 'x'", Tri::Maybe),
        ("e == 'purple'", Tri::Never),
    ] {
        let c = condition::parse_condition(text, schema, &f.enums).unwrap();
        assert_eq!(condition::prune(&c, schema, &stats), want, "{text}");
    }
}
