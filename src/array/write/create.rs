//! Creating an array folder as TileDB 2.30's `Array::create` does (docs/ARRAY.md §1.1, §3):
//! the schema checked with TileDB's rules, the folders `__schema/` (with `__enumerations/`),
//! `__commits/`, `__fragments/`, `__meta/`, `__fragment_meta/` and `__labels/`, the schema
//! generic tile `__schema/__<t>_<t>_<label>` and one generic tile per enumeration
//! `__schema/__enumerations/__<label>_0`, encrypted with AES-256-GCM when a key is given.

use crate::array::directory::names;
use crate::array::schema::ArraySchema;
use crate::error::{Error, Result};
use crate::format::format_version::FORMAT_VERSION;
use crate::pipeline::generic_tile;
use crate::storage::{Storage, StorageConfig, Uri};

/// The folders TileDB creates in a new array after `__schema/__enumerations`, in its order.
const FOLDERS: [&str; 5] = [
    names::COMMITS_DIR,
    names::FRAGMENTS_DIR,
    names::META_DIR,
    names::FRAGMENT_META_DIR,
    names::LABELS_DIR,
];

/// Creates the array at `uri` (a local folder, `file://` or object-store URI, configured by
/// `config` and the environment) with `schema`, as TileDB 2.30 does: the schema is checked
/// ([`ArraySchema::check`]), the folder (and missing parents) is created, and the schema is
/// written in format version 22 under a new name `__<now>_<now>_<label>` (the `name` and
/// `version` of `schema` are not used); enumerations without a file name get
/// `__<label>_0`. With `key` (32 bytes), the schema and enumeration files are encrypted with
/// AES-256-GCM, and the array opens only with that key. An existing array (a `__schema`
/// folder or a pre-v10 `__array_schema.tdb`) is refused and left untouched; on failure,
/// what this call created is removed. In an object store there are no folders: the schema
/// and enumeration objects are the array (two concurrent creators are not told apart there).
pub fn create(
    uri: &str,
    schema: &ArraySchema,
    key: Option<&[u8]>,
    config: &StorageConfig,
) -> Result<()> {
    let (storage, path) = Storage::open(uri, config)?;
    if let Some(k) = key
        && k.len() != 32
    {
        return Err(Error::invalid(format!(
            "the AES-256-GCM key is {} bytes, not 32",
            k.len()
        )));
    }
    schema.check()?;
    let mut schema = schema.clone();
    for (name, file) in &mut schema.enumerations {
        if file.is_empty() {
            *file = format!("__{}_0", names::random_label().0);
            if let Some(e) = schema
                .loaded_enumerations
                .iter_mut()
                .find(|e| &e.name == name)
            {
                e.path_name = file.clone();
            }
        }
    }
    let now = names::now_ms();
    schema.name = format!("__{now}_{now}_{}", names::random_label().0);
    schema.version = FORMAT_VERSION;
    // Everything is serialized and filtered before the first folder is made.
    let schema_tile = generic_tile::write_payload(&schema.serialize()?, key)?;
    let mut enumeration_tiles = Vec::new();
    for (name, file) in &schema.enumerations {
        let e = schema
            .loaded_enumeration(name)
            .ok_or_else(|| Error::invalid(format!("enumeration '{name}' has no values")))?;
        let tile = generic_tile::write_payload(&e.serialize()?, key)?;
        enumeration_tiles.push((file.clone(), tile));
    }
    let mut made = make_folders(&storage, &path)?;
    let written = (|| {
        let schema_dir = path.join(names::SCHEMA_DIR);
        let enum_dir = schema_dir.join(names::ENUMERATIONS_DIR);
        for (file, tile) in &enumeration_tiles {
            let f = enum_dir.join(file);
            storage.write_new(&f, tile)?;
            made.files.push(f);
        }
        // The schema file last: the array is whole once it exists.
        storage.write_new(&schema_dir.join(&schema.name), &schema_tile)?;
        storage.sync_dir(&enum_dir)?;
        storage.sync_dir(&schema_dir)
    })();
    if let Err(e) = written {
        made.undo(&storage);
        return Err(e.context(format!("creating array {path}")));
    }
    Ok(())
}

/// The folders and files one `create` made, removed again when a later step fails.
struct Made {
    root: Option<Uri>,
    folders: Vec<Uri>,
    files: Vec<Uri>,
}

impl Made {
    fn undo(self, storage: &Storage) {
        // Best effort: the error being reported is the one that matters.
        for f in &self.files {
            let _ = storage.remove_file(f);
        }
        match self.root {
            Some(root) if storage.is_local() => {
                let _ = storage.remove_dir_all(&root);
            }
            _ => {
                for f in self.folders.iter().rev() {
                    if storage.is_local() {
                        let _ = storage.remove_dir_all(f);
                    }
                }
            }
        }
    }
}

/// Makes the array folder and its subfolders. `__schema` is made with a plain `mkdir`, so of
/// two processes creating the same local array at once exactly one succeeds.
fn make_folders(storage: &Storage, path: &Uri) -> Result<Made> {
    let legacy = path.join(names::LEGACY_SCHEMA_FILE);
    let schema_dir = path.join(names::SCHEMA_DIR);
    let exists = || {
        Error::invalid(format!(
            "Cannot create array; Array '{path}' already exists"
        ))
    };
    if storage.is_file(&legacy)? || storage.is_dir(&schema_dir)? {
        return Err(exists());
    }
    // The root counts as ours (to remove on failure) only if this call's own `mkdir` made it:
    // a concurrent creator may make it between a check and ours.
    if storage.is_local()
        && let Some(parent) = std::path::Path::new(path.as_str())
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
    {
        let parent = Uri::new(parent.to_string_lossy().into_owned());
        storage.create_dir_all(&parent)?;
    }
    let root = storage.create_dir(path)?.then(|| path.clone());
    let mut made = Made {
        root,
        folders: Vec::new(),
        files: Vec::new(),
    };
    match storage.create_dir(&schema_dir) {
        Ok(true) => {}
        Ok(false) => {
            // Another creator made `__schema` (in a root this call may have made first): the
            // root is the winner's array now and stays.
            made.root = None;
            made.undo(storage);
            return Err(exists());
        }
        Err(e) => {
            made.undo(storage);
            return Err(e);
        }
    }
    made.folders.push(schema_dir.clone());
    let enum_dir = schema_dir.join(names::ENUMERATIONS_DIR);
    let dirs = std::iter::once(enum_dir).chain(FOLDERS.iter().map(|f| path.join(f)));
    for dir in dirs {
        // TileDB's `create_dir` accepts existing folders.
        match storage.create_dir(&dir) {
            Ok(true) => made.folders.push(dir),
            Ok(false) => {}
            Err(e) => {
                made.undo(storage);
                return Err(e);
            }
        }
    }
    if let Err(e) = storage.sync_dir(path) {
        made.undo(storage);
        return Err(e);
    }
    Ok(made)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::{Array, OpenOptions};
    use std::fs;
    use std::path::PathBuf;

    /// A fresh folder path under the system's temporary folder.
    fn scratch(name: &str) -> PathBuf {
        let p =
            std::env::temp_dir().join(format!("tdbf_create_{name}_{}", names::random_label().0));
        let _ = fs::remove_dir_all(&p);
        p
    }

    const SCHEMA: &str = r#"{"sparse": true,
        "dimensions": [{"name": "s", "type": "STRING_ASCII"},
                       {"name": "x", "type": "INT64", "domain": [0, 99], "tile": 10}],
        "attributes": [{"name": "c", "type": "UINT8", "enumeration": "e", "nullable": true},
                       {"name": "v", "type": "FLOAT64", "filters": "byteshuffle,zstd:3"}],
        "enumerations": [{"name": "e", "type": "STRING_UTF8", "cell_val_num": "var",
                          "values": ["a", "bb", ""]}]}"#;

    #[test]
    fn creates_what_the_reader_opens() {
        let dir = scratch("plain");
        let schema = ArraySchema::from_json(SCHEMA).unwrap();
        create(dir.to_str().unwrap(), &schema, None, &StorageConfig::new()).unwrap();
        for f in [
            "__commits",
            "__fragments",
            "__meta",
            "__fragment_meta",
            "__labels",
        ] {
            assert!(dir.join(f).is_dir(), "{f}");
        }
        assert_eq!(
            fs::read_dir(dir.join("__schema/__enumerations"))
                .unwrap()
                .count(),
            1
        );
        let array = Array::open(dir.to_str().unwrap(), &OpenOptions::default()).unwrap();
        let read = array.schema();
        assert_eq!(read.version, 22);
        assert!(read.name.starts_with("__") && read.name.len() == 2 + 13 + 1 + 13 + 1 + 32);
        let e = array.enumeration("e").unwrap();
        assert_eq!(e.offsets, [0, 1, 3]);
        let mut json = read.clone();
        json.loaded_enumerations.push(e);
        let (mut a, mut b) = (json.to_json(), schema.to_json());
        a["name"] = "".into();
        b["name"] = "".into();
        assert_eq!(a, b);
        // An existing array is refused and left as it was.
        let err = create(dir.to_str().unwrap(), &schema, None, &StorageConfig::new()).unwrap_err();
        assert!(err.message().contains("already exists"), "{err}");
        assert_eq!(fs::read_dir(dir.join("__schema")).unwrap().count(), 2);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn encrypted_arrays_open_only_with_their_key() {
        let dir = scratch("key");
        let key = b"0123456789abcdeF0123456789abcdeF";
        let schema = ArraySchema::from_json(SCHEMA).unwrap();
        assert!(
            create(
                dir.to_str().unwrap(),
                &schema,
                Some(&key[..31]),
                &StorageConfig::new()
            )
            .is_err()
        );
        assert!(!dir.exists());
        create(
            dir.to_str().unwrap(),
            &schema,
            Some(key),
            &StorageConfig::new(),
        )
        .unwrap();
        assert!(Array::open(dir.to_str().unwrap(), &OpenOptions::default()).is_err());
        let opts = OpenOptions {
            key: Some(key.to_vec()),
            ..OpenOptions::default()
        };
        let array = Array::open(dir.to_str().unwrap(), &opts).unwrap();
        assert_eq!(array.enumeration("e").unwrap().len(), 3);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn of_concurrent_creators_exactly_one_wins_and_the_array_stays_whole() {
        for round in 0..5 {
            let dir = scratch(&format!("race{round}"));
            let schema = ArraySchema::from_json(SCHEMA).unwrap();
            let results: Vec<Result<()>> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..6)
                    .map(|_| {
                        s.spawn(|| {
                            create(dir.to_str().unwrap(), &schema, None, &StorageConfig::new())
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            assert_eq!(
                results.iter().filter(|r| r.is_ok()).count(),
                1,
                "{results:?}"
            );
            for r in results.iter().filter_map(|r| r.as_ref().err()) {
                assert!(r.message().contains("already exists"), "{r}");
            }
            let array = Array::open(dir.to_str().unwrap(), &OpenOptions::default()).unwrap();
            assert_eq!(array.enumeration("e").unwrap().len(), 3);
            assert_eq!(fs::read_dir(dir.join("__schema")).unwrap().count(), 2);
            fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn refused_schemas_create_nothing() {
        let dir = scratch("refused");
        let mut schema = ArraySchema::from_json(SCHEMA).unwrap();
        schema.capacity = 0;
        let err = create(dir.to_str().unwrap(), &schema, None, &StorageConfig::new()).unwrap_err();
        assert!(err.message().contains("capacity equal to zero"), "{err}");
        assert!(!dir.exists());
        // An existing empty folder (not an array) is used, as TileDB does.
        fs::create_dir_all(&dir).unwrap();
        schema.capacity = 5;
        create(dir.to_str().unwrap(), &schema, None, &StorageConfig::new()).unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn labels_are_32_lowercase_hex_digits_and_differ() {
        let a = names::random_label().0;
        let b = names::random_label().0;
        assert_eq!(a.len(), 32);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        );
        assert!(u8::from_str_radix(&a[..2], 16).unwrap() < 0x80);
        assert_ne!(a, b);
    }
}
