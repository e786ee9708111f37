//! A TileDB-written array folder (tests/data/c_array: dense, sparse, meta) with one of its
//! files replaced by arbitrary bytes → open, read every field, the enumerations and the
//! metadata, verify. The first byte picks the array and the file. No panic, no allocation
//! beyond libFuzzer's limit (with the reader's memory limit at 64 MiB), whatever the damage; what reads gives as many cells in every
//! field.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tdbfilter::array::schema::ArrayType;
use tdbfilter::array::{Array, OpenOptions, read::verify};

const ARRAYS: [&str; 3] = ["dense", "sparse", "meta"];

/// Per-process copies of the fixture arrays, and their files (sorted).
fn workdir() -> &'static (PathBuf, Vec<Vec<PathBuf>>) {
    static W: OnceLock<(PathBuf, Vec<Vec<PathBuf>>)> = OnceLock::new();
    W.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/c_array");
        let dst = std::env::temp_dir().join(format!("tdbf-fuzz-array-{}", std::process::id()));
        let mut files = Vec::new();
        for name in ARRAYS {
            let mut list = Vec::new();
            copy_tree(&src.join(name), &dst.join(name), &mut list);
            list.sort();
            files.push(list);
        }
        (dst, files)
    })
}

fn copy_tree(from: &Path, to: &Path, files: &mut Vec<PathBuf>) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("fixture array") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_tree(&e.path(), &target, files);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
            files.push(target);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, bytes)) = data.split_first() else {
        return;
    };
    let (root, files) = workdir();
    let a = which as usize % ARRAYS.len();
    let list = &files[a];
    let file = &list[(which as usize / ARRAYS.len()) % list.len()];
    let original = std::fs::read(file).expect("fixture file");
    std::fs::write(file, bytes).expect("write");
    exercise(&root.join(ARRAYS[a]));
    std::fs::write(file, original).expect("restore");
});

fn exercise(path: &Path) {
    // Reads of untrusted arrays set a memory limit: a damaged non-empty domain may legally
    // describe a huge box of fill values.
    let options = OpenOptions {
        memory_limit: Some(64 << 20),
        ..OpenOptions::default()
    };
    let Ok(array) = Array::open(path.to_str().expect("utf-8 path"), &options) else {
        return;
    };
    let schema = array.schema();
    let mut names: Vec<&str> = schema.attributes.iter().map(|a| a.name.as_str()).collect();
    if schema.array_type == ArrayType::Sparse {
        names.extend(schema.dimensions.iter().map(|d| d.name.as_str()));
    }
    if let Ok(fields) = array.read(&names, None) {
        for f in &fields {
            assert_eq!(f.cell_count, fields[0].cell_count, "field {}", f.name);
        }
    }
    for (name, _) in &schema.enumerations {
        let _ = array.enumeration(name);
    }
    let _ = array.metadata();
    let _ = verify::verify(&array, Vec::new());
}
