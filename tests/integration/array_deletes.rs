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
