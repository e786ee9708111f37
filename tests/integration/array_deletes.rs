//! Delete commits applied by `Array::read` (src/array/read/deletes.rs) on the fixtures of
//! tests/fixtures/make_condition_fixtures.py: the array opened at each delete's timestamp reads
//! the cells TileDB-Py 0.36.1 read just after that delete (every condition kind: enumerations,
//! datetimes, floats, nullable strings, sets), and at the timestamp before it the cells of the
//! delete before; a copy of the array with one more delete written by `delete_cells` reads as
//! the stored conditions say; refused deletes write nothing.

use serde_json::Value;
use std::path::PathBuf;
use tdbfilter::array::lifecycle::{DeleteCellsOptions, delete_cells};
use tdbfilter::array::{Array, OpenOptions};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/conditions")
}

/// The (d, sd) coordinates `uri` reads at `t`.
fn coords_at(uri: &str, t: u64) -> Value {
    let options = OpenOptions {
        timestamp_end: Some(t),
        ..Default::default()
    };
    let array = Array::open(uri, &options).unwrap();
    let names: Vec<&str> = array
        .schema()
        .dimensions
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    let f = array.read(&names, None).unwrap();
    Value::Array(
        (0..f[0].cell_count as usize)
            .map(|i| {
                let x = i64::from_le_bytes(f[0].cell(i).try_into().unwrap());
                serde_json::json!([x, String::from_utf8(f[1].cell(i).to_vec()).unwrap()])
            })
            .collect(),
    )
}

#[test]
fn reads_apply_tiledb_deletes_at_every_timestamp() {
    let expected: Value =
        serde_json::from_slice(&std::fs::read(root().join("expected.json")).unwrap()).unwrap();
    let uri = root().join("sparse");
    let uri = uri.to_str().unwrap();
    let deletes = expected["deletes"].as_array().unwrap();
    assert!(deletes.len() >= 8);
    let mut before = coords_at(uri, 1);
    assert!(before.as_array().unwrap().len() >= 10);
    for d in deletes {
        let t = d["timestamp"].as_u64().unwrap();
        assert_eq!(coords_at(uri, t - 1), before, "before {}", d["cond"]);
        assert_eq!(coords_at(uri, t), d["cells"], "after {}", d["cond"]);
        before = d["cells"].clone();
    }
}

#[test]
fn delete_cells_writes_what_reads_apply() {
    let tmp = std::env::temp_dir().join(format!("tdbf_deletes_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(root().join("sparse"))
        .arg(&tmp)
        .status()
        .unwrap();
    assert!(status.success());
    let uri = tmp.to_str().unwrap();
    // A delete in the write's own millisecond (before TileDB's deletes of the fixture).
    let before = coords_at(uri, 1);
    let options = DeleteCellsOptions::default();
    let commit = delete_cells(uri, "d < 3", Some(1), &options).unwrap();
    assert!(commit.starts_with("__commits/__1_1_") && commit.ends_with("_22.del"));
    let want: Vec<Value> = before
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c[0].as_i64().unwrap() >= 3)
        .cloned()
        .collect();
    assert!(want.len() >= 2 && want.len() < before.as_array().unwrap().len());
    assert_eq!(coords_at(uri, 1), Value::Array(want));
    // Refusals write nothing.
    let bad = delete_cells(uri, "nope == 1", Some(1001), &options).unwrap_err();
    assert!(bad.to_string().contains("nope"), "{bad}");
    let count = std::fs::read_dir(tmp.join("__commits"))
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("__1001_")
        })
        .count();
    assert_eq!(count, 0);
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// A one-fragment read through a delete keeps exactly the cells the condition keeps in every
/// kind of field and tile: tiles whose cells all go (not read), all stay (read straight into
/// the result) or partly stay (compacted from scratch), a nullable fixed-size attribute, a
/// var-size one, a field asked for twice, with and without the condition's own field.
#[test]
fn deleted_cells_leave_every_field_of_one_fragment() {
    use tdbfilter::array::schema::ArraySchema;
    use tdbfilter::array::{WriteLayout, Writer, create};
    use tdbfilter::storage::StorageConfig;
    let tmp = std::env::temp_dir().join(format!("tdbf_deletes_kept_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let uri = tmp.to_str().unwrap();
    let schema = ArraySchema::from_json(
        r#"{"sparse":true,"capacity":100,
            "dimensions":[{"name":"x","type":"INT64","domain":[0,9999],"tile":10000}],
            "attributes":[{"name":"a","type":"INT64"},
                          {"name":"n","type":"INT32","nullable":true},
                          {"name":"s","type":"STRING_ASCII","cell_val_num":"var"}]}"#,
    )
    .unwrap();
    create(uri, &schema, None, &StorageConfig::new()).unwrap();
    const N: i64 = 1000;
    let text = |i: i64| "s".repeat((i % 5) as usize) + &i.to_string();
    let mut w = Writer::open(uri, None, Some(1), &StorageConfig::new()).unwrap();
    w.set_layout(WriteLayout::GlobalOrder).unwrap();
    let x: Vec<u8> = (0..N).flat_map(|i| (i * 3).to_le_bytes()).collect();
    let a: Vec<u8> = (0..N).flat_map(|i| (i * 7).to_le_bytes()).collect();
    let n: Vec<u8> = (0..N)
        .flat_map(|i| (i as i32 - 500).to_le_bytes())
        .collect();
    let valid: Vec<u8> = (0..N).map(|i| u8::from(i % 4 != 1)).collect();
    let (mut s, mut offsets) = (Vec::new(), Vec::new());
    for i in 0..N {
        offsets.push(s.len() as u64);
        s.extend_from_slice(text(i).as_bytes());
    }
    w.set_data_owned("x", x).unwrap();
    w.set_data_owned("a", a).unwrap();
    w.set_data_owned("n", n).unwrap();
    w.set_validity("n", &valid).unwrap();
    w.set_data_owned("s", s).unwrap();
    w.set_offsets("s", &offsets).unwrap();
    w.submit().unwrap();
    w.finalize().unwrap();
    // Deleted: tile 0 whole (a < 700), half of tile 1 (a < 1050), ten cells of tiles 4 and
    // 5, and tile 9 whole (a >= 6300); tiles 2, 3, 6-8 keep every cell.
    let cond = "a < 1050 or (a >= 2800 and a < 2870) or (a >= 3500 and a < 3570) or a >= 6300";
    delete_cells(uri, cond, Some(2), &DeleteCellsOptions::default()).unwrap();
    let deleted = |i: i64| {
        let a = i * 7;
        a < 1050 || (2800..2870).contains(&a) || (3500..3570).contains(&a) || a >= 6300
    };
    let kept: Vec<i64> = (0..N).filter(|&i| !deleted(i)).collect();
    assert_eq!(kept.len(), 730);
    let array = Array::open(uri, &OpenOptions::default()).unwrap();
    for fields in [vec!["x", "a", "n", "s", "a"], vec!["n", "s", "x", "n"]] {
        let got = array.read(&fields, None).unwrap();
        for (f, name) in got.iter().zip(&fields) {
            assert_eq!(f.cell_count as usize, kept.len(), "{name}");
            for (k, &i) in kept.iter().enumerate() {
                let cell = f.cell(k);
                match *name {
                    "x" => assert_eq!(cell, (i * 3).to_le_bytes(), "x of cell {i}"),
                    "a" => assert_eq!(cell, (i * 7).to_le_bytes(), "a of cell {i}"),
                    "n" => {
                        assert_eq!(cell, (i as i32 - 500).to_le_bytes(), "n of cell {i}");
                        let v = f.validity.as_ref().expect("nullable")[k];
                        assert_eq!(v, u8::from(i % 4 != 1), "validity of cell {i}");
                    }
                    _ => assert_eq!(cell, text(i).as_bytes(), "s of cell {i}"),
                }
            }
        }
    }
    drop(array);
    std::fs::remove_dir_all(&tmp).unwrap();
}
