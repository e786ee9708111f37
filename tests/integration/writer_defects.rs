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

/// Operating-system failures are [`tdbfilter::Error::Io`] naming the path and the system's
/// error (they were reported as corrupt data, a missing folder as an invalid argument).
#[test]
fn operating_system_failures_are_io_errors_naming_the_path() {
    use std::io::ErrorKind;
    let root = std::env::temp_dir().join(format!("tdbf-defects-io-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let json = r#"{"sparse": true, "dimensions": [{"name": "d", "type": "INT32",
        "domain": [0, 9], "tile": 10}], "attributes": [{"name": "a", "type": "INT32"}]}"#;
    let schema = tdbfilter::array::schema::ArraySchema::from_json(json).unwrap();
    let config = StorageConfig::new();
    let check = |uri: &Path, kind: ErrorKind, text: &str| {
        let e =
            tdbfilter::array::create(uri.to_str().unwrap(), &schema, None, &config).unwrap_err();
        match &e {
            tdbfilter::Error::Io {
                path,
                kind: k,
                message,
            } => {
                assert_eq!(*k, kind, "{e:?}");
                assert!(
                    message.contains(text) && message.contains(path.as_str()),
                    "{e:?}"
                );
            }
            _ => panic!("not an I/O error: {e:?}"),
        }
    };
    // A parent that is a file.
    let file = root.join("file");
    std::fs::write(&file, b"x").unwrap();
    check(
        &file.join("arr"),
        ErrorKind::AlreadyExists,
        "cannot create the folder",
    );
    check(
        &file.join("sub").join("arr"),
        ErrorKind::NotADirectory,
        "Not a directory",
    );
    // A name longer than the file system takes.
    check(
        &root.join("n".repeat(300)),
        ErrorKind::InvalidFilename,
        "File name too long",
    );
    // Opening: a file where the array's folder should be.
    let e = Array::open(file.join("arr").to_str().unwrap(), &OpenOptions::default()).unwrap_err();
    assert!(!matches!(e, tdbfilter::Error::CorruptData(_)), "{e:?}");
    std::fs::remove_dir_all(&root).unwrap();
}

/// Huge `cell_val_num`: refused with a clear error when the schema is made from JSON (it
/// aborted the process allocating the default fill value: 32 GB for 4e9 INT64 values), and
/// one rule for create and open (100 M INT32 values were created, then refused by open).
#[test]
fn huge_cells_are_refused_alike_by_create_and_open() {
    use tdbfilter::Datatype;
    use tdbfilter::array::schema::{ArraySchema, MAX_CELL_BYTES, check_cell_size};
    let root = std::env::temp_dir().join(format!("tdbf-defects-cells-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let json = |t: &str, n: u64| {
        format!(
            r#"{{"sparse": true, "dimensions": [{{"name": "d", "type": "INT32",
            "domain": [0, 9], "tile": 10}}], "attributes": [{{"name": "a", "type": "{t}",
            "cell_val_num": {n}}}]}}"#
        )
    };
    for (t, n) in [
        ("INT64", 4_000_000_000u64),
        ("INT32", 100_000_000),
        ("INT64", 60_000_000),
    ] {
        let e = ArraySchema::from_json(&json(t, n)).unwrap_err();
        assert!(
            matches!(e, tdbfilter::Error::Unsupported(_))
                && e.message().contains(&format!("cells of {n} {t} values"))
                && e.message().contains("attribute a"),
            "{e:?}"
        );
    }
    // The bound, exactly, for every path (cheap: no schema of that size is made).
    assert!(check_cell_size("a", Datatype::Int32, (MAX_CELL_BYTES / 4) as u32).is_ok());
    assert!(check_cell_size("a", Datatype::Int32, (MAX_CELL_BYTES / 4) as u32 + 1).is_err());
    assert!(
        check_cell_size("a", Datatype::Int32, u32::MAX).is_ok(),
        "var-size"
    );
    // A schema built in code is held to the same rule by create.
    let mut s = ArraySchema::from_json(&json("INT32", 3)).unwrap();
    s.attributes[0].cell_val_num = 100_000_000;
    let uri = root.join("big");
    let e = tdbfilter::array::create(uri.to_str().unwrap(), &s, None, &StorageConfig::new())
        .unwrap_err();
    assert!(matches!(e, tdbfilter::Error::Unsupported(_)), "{e:?}");
    assert!(!uri.exists());
    // Below the bound: created and opened.
    let s = ArraySchema::from_json(&json("INT64", 1000)).unwrap();
    let uri = root.join("ok");
    tdbfilter::array::create(uri.to_str().unwrap(), &s, None, &StorageConfig::new()).unwrap();
    let a = Array::open(uri.to_str().unwrap(), &OpenOptions::default()).unwrap();
    assert_eq!(a.schema().attributes[0].cell_val_num, 1000);
    std::fs::remove_dir_all(&root).unwrap();
}
