//! The schema write side against TileDB 2.30's own files: every schema and enumeration file
//! TileDB-Py 0.36.1 wrote under tests/data/schemas (made by `tests/array/run_create_tests.py
//! --save-fixtures`) parses and serializes back to the same payload bytes, and the generic
//! tile written from that payload is the same file, byte for byte. The schema JSON carries
//! every field: parse → JSON → schema → serialize gives the payload again.

use std::fs;
use std::path::{Path, PathBuf};
use tdbfilter::array::schema::{ArraySchema, Enumeration};
use tdbfilter::pipeline::generic_tile;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Every file below `dir` whose parent folder is called `parent`.
fn files_in(dir: &Path, parent: &str, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_in(&p, parent, out);
        } else if p.parent().unwrap().file_name().unwrap() == parent {
            out.push(p);
        }
    }
}

fn payload_of(file: &Path) -> Vec<u8> {
    let bytes = fs::read(file).unwrap();
    let (_, tile, used) = generic_tile::read(&bytes, None).unwrap();
    assert_eq!(used, bytes.len(), "{}", file.display());
    tile.data().to_vec()
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn tiledb_schema_files_serialize_back_byte_for_byte() {
    let mut schemas = Vec::new();
    files_in(&root().join("schemas"), "__schema", &mut schemas);
    schemas.sort();
    assert!(schemas.len() >= 30, "{} schema fixtures", schemas.len());
    let mut with = [0usize; 4]; // enumerations, current domain, labels, ordered attributes
    for file in &schemas {
        let label = file.display().to_string();
        let bytes = fs::read(file).unwrap();
        let payload = payload_of(file);
        let mut schema = ArraySchema::parse(&payload, &name(file)).unwrap();
        assert_eq!(schema.version, 22, "{label}");
        assert_eq!(schema.serialize().unwrap(), payload, "{label}");
        assert_eq!(
            generic_tile::write_payload(&payload, None).unwrap(),
            bytes,
            "{label}: generic tile"
        );
        with[0] += usize::from(!schema.enumerations.is_empty());
        with[1] += usize::from(schema.current_domain.is_some());
        with[2] += usize::from(!schema.labels.is_empty());
        with[3] += usize::from(schema.attributes.iter().any(|a| a.order != 0));
        // The enumeration files beside it.
        let dir = file.parent().unwrap().join("__enumerations");
        for (_, f) in &schema.enumerations {
            let path = dir.join(f);
            let enum_bytes = fs::read(&path).unwrap();
            let p = payload_of(&path);
            let e = Enumeration::parse(&p).unwrap();
            assert_eq!(&e.path_name, f);
            assert_eq!(e.serialize().unwrap(), p, "{}", path.display());
            assert_eq!(
                generic_tile::write_payload(&p, None).unwrap(),
                enum_bytes,
                "{}",
                path.display()
            );
            schema.loaded_enumerations.push(e);
        }
        // Through the JSON (labels are not created, so not read back from JSON).
        if schema.labels.is_empty() {
            let json = schema.to_json().to_string();
            let mut back = ArraySchema::from_json(&json).unwrap_or_else(|e| panic!("{label}: {e}"));
            // JSON does not carry enumeration file names: creation draws new ones.
            for ((n, f), (bn, bf)) in schema.enumerations.iter().zip(&mut back.enumerations) {
                assert_eq!(n, bn);
                *bf = f.clone();
            }
            assert_eq!(back.serialize().unwrap(), payload, "{label}: through JSON");
            assert_eq!(back.to_json(), {
                let mut j = schema.to_json();
                j["name"] = "".into();
                j
            });
        }
    }
    assert!(
        with.iter().all(|n| *n > 0),
        "fixtures lack a feature: {with:?}"
    );
}

#[test]
fn old_schemas_serialize_as_version_22_and_read_back_the_same() {
    let mut schemas = Vec::new();
    files_in(&root().join("arrays"), "__schema", &mut schemas);
    files_in(&root().join("c_array"), "__schema", &mut schemas);
    assert!(!schemas.is_empty());
    for file in &schemas {
        let label = file.display().to_string();
        let old = ArraySchema::parse(&payload_of(file), &name(file)).unwrap();
        let bytes = old.serialize().unwrap();
        let new = ArraySchema::parse(&bytes, &name(file)).unwrap();
        assert_eq!(new.version, 22, "{label}");
        assert_eq!(new.serialize().unwrap(), bytes, "{label}");
        let (mut a, mut b) = (old.to_json(), new.to_json());
        a["version"] = 0.into();
        b["version"] = 0.into();
        assert_eq!(a, b, "{label}");
    }
}
