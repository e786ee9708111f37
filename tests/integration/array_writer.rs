//! The array writer against fragments TileDB-Py 0.36.1 (libtiledb 2.30) wrote: the same cells,
//! layout and timestamp give the same files, byte for byte (tests/data/c_array, written by
//! make_c_array.py); streaming, failures and dropped writers.

use std::path::{Path, PathBuf};
use tdbfilter::array::{Array, OpenOptions, WriteLayout, Writer};
use tdbfilter::storage::StorageConfig;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/c_array");

/// A copy of fixture array `name` without its fragments and commits, in a fresh folder.
fn empty_copy(name: &str, test: &str) -> PathBuf {
    let dst = std::env::temp_dir().join(format!("tdbf-writer-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dst);
    copy_dir(&Path::new(DATA).join(name), &dst);
    for sub in ["__fragments", "__commits"] {
        let d = dst.join(sub);
        std::fs::remove_dir_all(&d).unwrap();
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

/// The fragment folder of timestamp `t` in array `root`.
fn fragment(root: &Path, t: u64) -> PathBuf {
    let dir = root.join("__fragments");
    let hits: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("__{t}_{t}_"))
        })
        .collect();
    assert_eq!(
        hits.len(),
        1,
        "fragments of timestamp {t} in {}",
        dir.display()
    );
    hits[0].clone()
}

/// Every file of the two fragment folders, byte for byte.
fn assert_same_files(ours: &Path, theirs: &Path) {
    let names = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(ours), names(theirs));
    for f in names(theirs) {
        let (a, b) = (
            std::fs::read(ours.join(&f)).unwrap(),
            std::fs::read(theirs.join(&f)).unwrap(),
        );
        assert!(
            a == b,
            "{f} differs from TileDB's ({} vs {} bytes)",
            a.len(),
            b.len()
        );
    }
}

fn bytes<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    v.iter().flat_map(|x| f(*x)).collect()
}

/// Var-size cells: (data, offsets).
fn var(cells: &[&str]) -> (Vec<u8>, Vec<u64>) {
    let mut data = Vec::new();
    let mut offsets = Vec::new();
    for c in cells {
        offsets.push(data.len() as u64);
        data.extend_from_slice(c.as_bytes());
    }
    (data, offsets)
}

fn subarray(b: &[i32]) -> Vec<u8> {
    bytes(b, i32::to_le_bytes)
}

/// make_c_array.py's dense fragment 1: rows 1..4 x cols 1..4.
fn dense_fragment_1(w: &mut Writer) {
    let (mut a, mut f, mut valid) = (vec![], vec![], vec![]);
    let mut strings = vec![];
    for r in 1..=4 {
        for c in 1..=4 {
            let v = 10 * r + c;
            a.push(v);
            strings.push(v.to_string().repeat((v % 3) as usize));
            f.push(r as f64 + c as f64 / 10.0);
            valid.push(u8::from(c != 2));
        }
    }
    let refs: Vec<&str> = strings.iter().map(String::as_str).collect();
    let (sd, so) = var(&refs);
    w.set_subarray(&subarray(&[1, 4, 1, 4])).unwrap();
    w.set_data("a", &bytes(&a, i32::to_le_bytes)).unwrap();
    w.set_data("s", &sd).unwrap();
    w.set_offsets("s", &so).unwrap();
    w.set_data("f", &bytes(&f, f64::to_le_bytes)).unwrap();
    w.set_validity("f", &valid).unwrap();
}

#[test]
fn dense_fragments_are_tiledbs_bytes() {
    let root = empty_copy("dense", "dense");
    let mut w = Writer::open(root.to_str().unwrap(), None, Some(1), &StorageConfig::new()).unwrap();
    dense_fragment_1(&mut w);
    w.submit().unwrap();
    let name = w.finalize().unwrap();
    assert!(
        name.starts_with("__1_1_") && name.ends_with("_22"),
        "{name}"
    );
    assert!(root.join("__commits").join(format!("{name}.wrt")).is_file());
    assert_same_files(
        &fragment(&root, 1),
        &fragment(Path::new(&format!("{DATA}/dense")), 1),
    );

    // Fragment 2: rows 3..5 x cols 2..3, col-major input gives the same tiles as row-major.
    let mut w = Writer::open(root.to_str().unwrap(), None, Some(2), &StorageConfig::new()).unwrap();
    w.set_layout(WriteLayout::ColMajor).unwrap();
    w.set_subarray(&subarray(&[3, 5, 2, 3])).unwrap();
    let a: Vec<i32> = [2, 3]
        .iter()
        .flat_map(|c| (3..=5).map(move |r| -(10 * r + c)))
        .collect();
    w.set_data("a", &bytes(&a, i32::to_le_bytes)).unwrap();
    let (sd, so) = var(&["new"; 6]);
    w.set_data("s", &sd).unwrap();
    w.set_offsets("s", &so).unwrap();
    w.set_data("f", &bytes(&[0.5f64; 6], f64::to_le_bytes))
        .unwrap();
    w.set_validity("f", &[1; 6]).unwrap();
    w.submit().unwrap();
    w.finalize().unwrap();
    assert_same_files(
        &fragment(&root, 2),
        &fragment(Path::new(&format!("{DATA}/dense")), 2),
    );

    // Our reader reads the cells back, the newer fragment winning.
    let array = Array::open(root.to_str().unwrap(), &OpenOptions::default()).unwrap();
    let read = array.read(&["a"], None).unwrap().remove(0);
    let cell = |r: usize, c: usize| {
        let i = (r - 1) * 4 + (c - 1);
        i32::from_le_bytes(read.data[4 * i..4 * i + 4].try_into().unwrap())
    };
    assert_eq!(
        (cell(1, 1), cell(4, 2), cell(5, 3), cell(2, 4)),
        (11, -42, -53, 24)
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn sparse_fragments_are_tiledbs_bytes() {
    let root = empty_copy("sparse", "sparse");
    let write = |t: u64, x: &[i64], names: &[&str], v: &[u16], text: &[&str], valid: &[u8]| {
        let mut w =
            Writer::open(root.to_str().unwrap(), None, Some(t), &StorageConfig::new()).unwrap();
        w.set_layout(WriteLayout::Unordered).unwrap();
        w.set_data("x", &bytes(x, i64::to_le_bytes)).unwrap();
        let (nd, no) = var(names);
        w.set_data("name", &nd).unwrap();
        w.set_offsets("name", &no).unwrap();
        w.set_data("v", &bytes(v, u16::to_le_bytes)).unwrap();
        let (td, to) = var(text);
        w.set_data("t", &td).unwrap();
        w.set_offsets("t", &to).unwrap();
        w.set_validity("t", valid).unwrap();
        w.submit().unwrap();
        w.finalize().unwrap()
    };
    write(
        1,
        &[5, 5, 42, 7],
        &["b", "a", "q", "zz"],
        &[1, 2, 3, 4],
        &["one", "", "", "four"],
        &[1, 0, 1, 1],
    );
    write(3, &[5, 1], &["a", "m"], &[20, 30], &["two", "m"], &[1, 1]);
    for t in [1, 3] {
        assert_same_files(
            &fragment(&root, t),
            &fragment(Path::new(&format!("{DATA}/sparse")), t),
        );
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn global_order_batches_stream_into_the_same_fragment() {
    // Rows 1..6 x cols 1..3: three whole 2x3 tiles, given tile by tile in cell order.
    let write = |root: &Path, batch: usize| {
        let mut w =
            Writer::open(root.to_str().unwrap(), None, Some(7), &StorageConfig::new()).unwrap();
        w.set_layout(WriteLayout::GlobalOrder).unwrap();
        w.set_subarray(&subarray(&[1, 6, 1, 3])).unwrap();
        let a: Vec<i32> = (0..18).collect();
        let s: Vec<String> = (0..18).map(|i| "x".repeat(i % 4)).collect();
        let f: Vec<f64> = (0..18).map(|i| i as f64 * 0.25).collect();
        let valid: Vec<u8> = (0..18).map(|i| u8::from(i % 5 != 0)).collect();
        for start in (0..18).step_by(batch) {
            let end = (start + batch).min(18);
            w.set_data("a", &bytes(&a[start..end], i32::to_le_bytes))
                .unwrap();
            let refs: Vec<&str> = s[start..end].iter().map(String::as_str).collect();
            let (sd, so) = var(&refs);
            w.set_data("s", &sd).unwrap();
            w.set_offsets("s", &so).unwrap();
            w.set_data("f", &bytes(&f[start..end], f64::to_le_bytes))
                .unwrap();
            w.set_validity("f", &valid[start..end]).unwrap();
            w.submit().unwrap();
        }
        w.finalize().unwrap();
        fragment(root, 7)
    };
    let one = empty_copy("dense", "stream-one");
    let many = empty_copy("dense", "stream-many");
    let (a, b) = (write(&one, 18), write(&many, 4));
    assert_same_files(&b, &a);
    let array = Array::open(many.to_str().unwrap(), &OpenOptions::default()).unwrap();
    let read = array.read(&["s"], None).unwrap().remove(0);
    assert_eq!(read.cell_count, 18);
    for root in [one, many] {
        std::fs::remove_dir_all(root).unwrap();
    }
}

/// Entries of a folder.
fn entries(d: &Path) -> usize {
    std::fs::read_dir(d).map_or(0, |r| r.count())
}

#[test]
fn failures_and_dropped_writers_commit_nothing() {
    let root = empty_copy("dense", "failures");
    // Dropped after a submit: the fragment folder goes away, nothing is committed.
    let mut w = Writer::open(root.to_str().unwrap(), None, Some(1), &StorageConfig::new()).unwrap();
    dense_fragment_1(&mut w);
    w.submit().unwrap();
    assert_eq!(entries(&root.join("__fragments")), 1);
    drop(w);
    assert_eq!(entries(&root.join("__fragments")), 0);
    assert_eq!(entries(&root.join("__commits")), 0);

    // A batch with too few cells fails, and so does everything after it.
    let mut w = Writer::open(root.to_str().unwrap(), None, Some(1), &StorageConfig::new()).unwrap();
    dense_fragment_1(&mut w);
    w.set_data("a", &[0; 12]).unwrap();
    let e = w.submit().unwrap_err();
    assert!(e.to_string().contains("has 16 cells, field a 3"), "{e}");
    assert!(w.submit().is_err());
    assert!(w.finalize().is_err());

    // Refused before anything is written: a box outside the domain, a missing field, a
    // layout dense arrays do not take, coordinates for a dense array.
    let mut w = Writer::open(root.to_str().unwrap(), None, Some(1), &StorageConfig::new()).unwrap();
    assert!(w.set_subarray(&subarray(&[0, 4, 1, 4])).is_err());
    assert!(w.set_layout(WriteLayout::Unordered).is_err());
    assert!(w.set_data("r", &[0; 4]).is_err());
    w.set_subarray(&subarray(&[1, 1, 1, 1])).unwrap();
    w.set_data("a", &[0; 4]).unwrap();
    let e = w.submit().unwrap_err();
    assert!(e.to_string().contains("field s has no data"), "{e}");
    assert_eq!(entries(&root.join("__fragments")), 0);
    assert_eq!(entries(&root.join("__commits")), 0);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn verify_names_the_folder_of_a_writer_that_never_committed() {
    let root = empty_copy("dense", "leftover");
    let mut w = Writer::open(root.to_str().unwrap(), None, Some(1), &StorageConfig::new()).unwrap();
    dense_fragment_1(&mut w);
    w.submit().unwrap();
    let name = w.finalize().unwrap();
    // What a writer killed before its commit leaves: a complete folder, no commit marker.
    let orphan = "__9_9_0123456789abcdef0123456789abcdef_22";
    copy_dir(
        &root.join("__fragments").join(&name),
        &root.join("__fragments").join(orphan),
    );
    let options = OpenOptions::default();
    let (array, broken) = Array::open_tolerant(root.to_str().unwrap(), &options).unwrap();
    assert_eq!(array.fragments().len(), 1, "the reader ignores the folder");
    let report = tdbfilter::array::read::verify::verify(&array, broken);
    assert_eq!(report.damages.len(), 1, "{:?}", report.damages);
    let line = report.damages[0].to_string();
    assert!(
        line.starts_with(orphan) && line.contains("uncommitted"),
        "{line}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// Array metadata: the files TileDB-Py wrote (tests/data/c_array/meta, two writes: the second
/// replaces "version", adds "name" and deletes "gone") are rebuilt byte for byte from their
/// changes, and changes written with `Array::put_metadata` read back as TileDB merges them.
#[test]
fn metadata_files_are_tiledbs_bytes_and_merge_in_order() {
    use tdbfilter::Datatype;
    use tdbfilter::array::metadata::{self, MetadataChange, MetadataEntry};
    let meta_dir = Path::new(DATA).join("meta/__meta");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&meta_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2);
    let root = empty_copy("meta", "metadata");
    std::fs::remove_dir_all(root.join("__meta")).unwrap();
    for (i, f) in files.iter().enumerate() {
        let theirs = std::fs::read(f).unwrap();
        let (_, tile, _) = tdbfilter::pipeline::generic_tile::read(&theirs, None).unwrap();
        let changes: Vec<MetadataChange> = metadata::parse(tile.data())
            .unwrap()
            .into_iter()
            .map(|(k, e)| e.map_or(MetadataChange::Delete(k), MetadataChange::Put))
            .collect();
        // TileDB-Py adds deletions of its __np_* keys. Written in another order, serialized
        // sorted by key as TileDB's std::map is.
        let mut shuffled = changes.clone();
        shuffled.reverse();
        let t = (i + 1) as u64;
        let storage = tdbfilter::storage::Storage::local();
        let uri = tdbfilter::storage::Uri::new(root.to_str().unwrap());
        let name = metadata::write(&storage, &uri, None, Some(t), &shuffled)
            .unwrap()
            .unwrap();
        assert!(name.starts_with(&format!("__{t}_{t}_")), "{name}");
        let ours = std::fs::read(root.join("__meta").join(&name)).unwrap();
        assert_eq!(ours, theirs, "metadata file {} vs ours {name}", f.display());
    }
    let a = Array::open(root.to_str().unwrap(), &OpenOptions::default()).unwrap();
    let keys: Vec<String> = a.metadata().unwrap().into_iter().map(|e| e.key).collect();
    assert_eq!(keys, ["name", "scale", "version"]);
    // A later put replaces, a delete removes; the last change of a key in one file wins.
    let v = MetadataEntry::new("version", Datatype::Int32, 1, &7i32.to_le_bytes()).unwrap();
    let changes = [
        MetadataChange::Delete("version".into()),
        MetadataChange::Put(v.clone()),
        MetadataChange::Delete("scale".into()),
    ];
    a.put_metadata(&changes, Some(3)).unwrap().unwrap();
    let a = Array::open(root.to_str().unwrap(), &OpenOptions::default()).unwrap();
    let m = a.metadata().unwrap();
    assert_eq!(m.len(), 2);
    assert_eq!(m[1], v);
    // Time travel: at [0, 2] the change at 3 is not visible.
    let at2 = OpenOptions {
        timestamp_end: Some(2),
        ..OpenOptions::default()
    };
    let a2 = Array::open(root.to_str().unwrap(), &at2).unwrap();
    assert_eq!(a2.metadata().unwrap().len(), 3);
    // TileDB's refusals.
    assert!(MetadataEntry::new("k", Datatype::Any, 1, &[0]).is_err());
    assert!(MetadataEntry::new("k", Datatype::Int32, 2, &[0; 4]).is_err());
    assert_eq!(a.put_metadata(&[], None).unwrap(), None);
    std::fs::remove_dir_all(&root).unwrap();
}
