//! The order of a write's requests in an object store, watched on the in-memory store
//! (`mem://` with a recording store): every data file and the fragment metadata are
//! uploaded before the commit marker, which is the last object written; a write that fails
//! before it leaves no marker and no fragment objects.

use super::Writer;
use crate::array::schema::ArraySchema;
use crate::array::{Array, OpenOptions, WriteLayout};
use crate::storage::StorageConfig;
use crate::storage::test_store::install;

const SCHEMA: &str = r#"{"sparse": false,
    "dimensions": [{"name": "d", "type": "INT64", "domain": [0, 99], "tile": 10}],
    "attributes": [{"name": "a", "type": "INT32", "filters": "zstd:1"},
                   {"name": "s", "type": "STRING_ASCII", "cell_val_num": "var",
                    "nullable": true}]}"#;

fn write(uri: &str, t: u64, base: i32) -> crate::error::Result<String> {
    let mut w = Writer::open(uri, None, Some(t), &StorageConfig::new())?;
    w.set_layout(WriteLayout::RowMajor)?;
    let a: Vec<u8> = (0..100)
        .flat_map(|i: i32| (i + base).to_le_bytes())
        .collect();
    w.set_data("a", &a)?;
    w.set_data("s", &[b'x'; 100])?;
    w.set_offsets("s", &(0..100).collect::<Vec<u64>>())?;
    w.set_validity("s", &[1; 100])?;
    w.submit()?;
    w.finalize()
}

fn read_a(uri: &str) -> Vec<u8> {
    let array = Array::open(uri, &OpenOptions::default()).unwrap();
    array.read(&["a"], None).unwrap().remove(0).data
}

#[test]
fn the_commit_marker_is_written_last() {
    let store = install("commit-order");
    let uri = "mem://commit-order/arr";
    let schema = ArraySchema::from_json(SCHEMA).unwrap();
    crate::array::write::create::create(uri, &schema, None, &StorageConfig::new()).unwrap();
    store.take_log();
    let name = write(uri, 5, 0).unwrap();
    let log = store.take_log();
    let uploads: Vec<&String> = log
        .iter()
        .filter(|l| l.starts_with("put ") || l.starts_with("complete "))
        .collect();
    let marker = format!("put arr/__commits/{name}.wrt 0");
    assert_eq!(
        uploads.last().map(|l| l.as_str()),
        Some(marker.as_str()),
        "{log:?}"
    );
    // Every file of the fragment went up before it.
    let fragment: Vec<&&String> = uploads
        .iter()
        .filter(|l| l.contains(&format!("arr/__fragments/{name}/")))
        .collect();
    for f in [
        "a0.tdb",
        "a1.tdb",
        "a1_var.tdb",
        "a1_validity.tdb",
        "__fragment_metadata.tdb",
    ] {
        assert!(fragment.iter().any(|l| l.contains(f)), "{f}: {log:?}");
    }
    assert_eq!(fragment.len() + 1, uploads.len(), "{log:?}");
    let want: Vec<u8> = (0..100).flat_map(|i: i32| i.to_le_bytes()).collect();
    assert_eq!(read_a(uri), want);
}

#[test]
fn a_write_failing_before_the_marker_commits_nothing() {
    let store = install("commit-fail");
    let uri = "mem://commit-fail/arr";
    let schema = ArraySchema::from_json(SCHEMA).unwrap();
    crate::array::write::create::create(uri, &schema, None, &StorageConfig::new()).unwrap();
    write(uri, 5, 0).unwrap();
    store.fail("put", "__fragment_metadata");
    store.take_log();
    let e = write(uri, 6, 1000).unwrap_err();
    assert!(e.message().contains("__fragment_metadata.tdb"), "{e}");
    let log = store.take_log();
    assert!(
        !log.iter().any(|l| l.starts_with("put arr/__commits/")),
        "a marker was written: {log:?}"
    );
    // The failed fragment's objects are removed; the first fragment stays whole.
    let (storage, root) = crate::storage::Storage::open(uri, &StorageConfig::new()).unwrap();
    let fragments = storage.list(&root.join("__fragments")).unwrap();
    assert_eq!(fragments.len(), 1, "{fragments:?}");
    assert_eq!(storage.list(&root.join("__commits")).unwrap().len(), 1);
    let want: Vec<u8> = (0..100).flat_map(|i: i32| i.to_le_bytes()).collect();
    assert_eq!(read_a(uri), want);
}
