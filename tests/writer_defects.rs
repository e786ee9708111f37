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

/// Every file of the two fragment folders, byte for byte.
fn assert_same_files(ours: &Path, theirs: &Path) {
    let mut names: Vec<_> = std::fs::read_dir(theirs)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    let mut mine: Vec<_> = std::fs::read_dir(ours)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    mine.sort();
    assert_eq!(mine, names, "files of {}", ours.display());
    for n in names {
        let (a, b) = (
            std::fs::read(ours.join(&n)).unwrap(),
            std::fs::read(theirs.join(&n)).unwrap(),
        );
        assert!(a == b, "{} differs from TileDB's", n.to_string_lossy());
    }
}

/// The fragment folder of timestamp `t` in array `root`.
fn fragment(root: &Path, t: u64) -> PathBuf {
    let hits: Vec<PathBuf> = std::fs::read_dir(root.join("__fragments"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("__{t}_{t}_"))
        })
        .collect();
    assert_eq!(hits.len(), 1, "fragments of timestamp {t}");
    hits[0].clone()
}

fn le<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    v.iter().flat_map(|&x| f(x)).collect()
}

fn var(cells: &[&str]) -> (Vec<u8>, Vec<u64>) {
    let mut off = Vec::new();
    let mut data = Vec::new();
    for c in cells {
        off.push(data.len() as u64);
        data.extend_from_slice(c.as_bytes());
    }
    (data, off)
}

/// Several unordered batches are sorted together into one fragment: the fragment TileDB-Py
/// wrote from one unordered batch of all the cells (tests/data/c_array/sparse, timestamp 1;
/// duplicates keep their order across batches), byte for byte, however the cells are split.
#[test]
fn unordered_batches_make_the_fragment_of_one_batch_of_them_all() {
    let x = [5i64, 5, 42, 7];
    let names = ["b", "a", "q", "zz"];
    let v = [1u16, 2, 3, 4];
    let text = ["one", "", "", "four"];
    let valid = [1u8, 0, 1, 1];
    for (i, splits) in [vec![2], vec![1, 3], vec![1, 2, 3], vec![0, 3, 3]]
        .into_iter()
        .enumerate()
    {
        let root = empty_copy("sparse", &format!("unordered-{i}"));
        let mut w =
            Writer::open(root.to_str().unwrap(), None, Some(1), &StorageConfig::new()).unwrap();
        w.set_layout(WriteLayout::Unordered).unwrap();
        let mut bounds = vec![0];
        bounds.extend(&splits);
        bounds.push(4);
        for r in bounds.windows(2) {
            let (a, b) = (r[0], r[1]);
            w.set_data("x", &le(&x[a..b], i64::to_le_bytes)).unwrap();
            let (nd, no) = var(&names[a..b]);
            w.set_data("name", &nd).unwrap();
            w.set_offsets("name", &no).unwrap();
            w.set_data("v", &le(&v[a..b], u16::to_le_bytes)).unwrap();
            let (td, to) = var(&text[a..b]);
            w.set_data("t", &td).unwrap();
            w.set_offsets("t", &to).unwrap();
            w.set_validity("t", &valid[a..b]).unwrap();
            w.submit().unwrap();
        }
        w.finalize().unwrap();
        assert_same_files(
            &fragment(&root, 1),
            &fragment(Path::new(&format!("{DATA}/sparse")), 1),
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
