//! Defects found driving the writer as a storage engine would (issue #27 §0): each test here
//! failed before its fix.

use std::path::{Path, PathBuf};
use tdbfilter::array::{Array, OpenOptions, WriteLayout, Writer};
use tdbfilter::storage::StorageConfig;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/c_array");

/// A copy of fixture array `name` without its fragments, commits and metadata, in a fresh
/// folder.
fn empty_copy(name: &str, test: &str) -> PathBuf {
    let dst = std::env::temp_dir().join(format!("tdbf-defects-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dst);
    copy_dir(&Path::new(DATA).join(name), &dst);
    for sub in ["__fragments", "__commits", "__meta"] {
        let d = dst.join(sub);
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
    }
    dst
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), to).unwrap();
        }
    }
}

/// Entries of a folder.
fn entries(d: &Path) -> usize {
    std::fs::read_dir(d).map_or(0, |r| r.count())
}

/// A fragment or metadata file at UINT64_MAX would be committed and shown by no reader: both
/// are refused before anything is written.
#[test]
fn a_timestamp_of_uint64_max_is_refused_before_anything_is_written() {
    use tdbfilter::Datatype;
    use tdbfilter::array::metadata::{MetadataChange, MetadataEntry};
    let root = empty_copy("sparse", "ts-max");
    let uri = root.to_str().unwrap();
    let e = Writer::open(uri, None, Some(u64::MAX), &StorageConfig::new()).unwrap_err();
    assert!(
        matches!(e, tdbfilter::Error::InvalidArgument(_)) && e.message().contains("UINT64_MAX"),
        "{e:?}"
    );
    let a = Array::open(uri, &OpenOptions::default()).unwrap();
    let v = MetadataEntry::new("k", Datatype::Int32, 1, &7i32.to_le_bytes()).unwrap();
    let e = a
        .put_metadata(&[MetadataChange::Put(v.clone())], Some(u64::MAX))
        .unwrap_err();
    assert!(e.message().contains("UINT64_MAX"), "{e:?}");
    for sub in ["__fragments", "__commits", "__meta"] {
        assert_eq!(entries(&root.join(sub)), 0, "{sub}");
    }
    // One below is an ordinary timestamp, shown by a reader opened at it (TileDB's default
    // end, and an end of UINT64_MAX, is now).
    let mut w = Writer::open(uri, None, Some(u64::MAX - 1), &StorageConfig::new()).unwrap();
    w.set_layout(WriteLayout::Unordered).unwrap();
    assert_eq!(w.timestamp(), u64::MAX - 1);
    drop(w);
    a.put_metadata(&[MetadataChange::Put(v.clone())], Some(u64::MAX - 1))
        .unwrap();
    let at = OpenOptions {
        timestamp_end: Some(u64::MAX - 1),
        ..OpenOptions::default()
    };
    let a = Array::open(uri, &at).unwrap();
    assert_eq!(a.metadata().unwrap(), [v]);
    std::fs::remove_dir_all(&root).unwrap();
}
