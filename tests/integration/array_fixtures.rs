//! The array reader on arrays written by older TileDB releases (tests/data/arrays/<libtiledb
//! version>/, TileDB 2.0.8 to 2.17.5, format versions 5 to 20, made by
//! tests/fixtures/make_old_arrays.sh): every array is opened with `tdbfilter::array::Array`,
//! every attribute (and the coordinates of sparse arrays) read whole, and compared with the
//! cells the writing TileDB-Py read back (expected.json.gz; validity with the values it was
//! given, "input_validity", which is the truth where the writer misreads).

use flate2::read::GzDecoder;
use serde_json::Value;
use std::io::Read;
use std::path::PathBuf;
use tdbfilter::array::schema::Range;
use tdbfilter::array::{Array, OpenOptions};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/arrays")
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// The whole domain of a dense array (TileDB-Py's `A[:]`).
fn whole_domain(array: &Array) -> Vec<Range> {
    array
        .schema()
        .dimensions
        .iter()
        .map(|d| {
            let (lo, hi) = d.domain.clone().unwrap();
            Range::Fixed(lo, hi)
        })
        .collect()
}

fn check_array(label: &str, array: &Array, expected: &Value) -> usize {
    let mut checks = 0;
    let dense = expected["dense"].as_bool().unwrap();
    let domain = dense.then(|| whole_domain(array));
    let mut fields: Vec<(String, &Value)> = expected["attrs"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v))
        .collect();
    if let Some(coords) = expected.get("coords").and_then(|c| c.as_object()) {
        fields.extend(coords.iter().map(|(k, v)| (k.clone(), v)));
    }
    for (name, want) in fields {
        let got = array
            .read(&[name.as_str()], domain.as_deref())
            .unwrap_or_else(|e| panic!("{label}: reading {name}: {e}"))
            .remove(0);
        if let Some(h) = want.get("hex").and_then(|h| h.as_str()) {
            assert_eq!(got.data, hex(h), "{label}: {name}: cell bytes");
        } else if let Some(values) = want.get("values").and_then(|v| v.as_array()) {
            assert_eq!(
                got.cell_count as usize,
                values.len(),
                "{label}: {name}: cells"
            );
            for (i, v) in values.iter().enumerate() {
                let cell = got.cell(i);
                match v {
                    // Old TileDB-Py releases stored '' as one NUL and show it as ''.
                    Value::String(s) if s.is_empty() && cell == b"\0" => {}
                    Value::String(s) => {
                        assert_eq!(cell, s.as_bytes(), "{label}: {name}: cell {i}")
                    }
                    Value::Number(n) => {
                        let x = n.as_i64().unwrap();
                        let size = got.datatype.size();
                        let v =
                            tdbfilter::array::value::as_i128(got.datatype, &cell[..size]).unwrap();
                        assert_eq!(v, x as i128, "{label}: {name}: cell {i}");
                    }
                    other => panic!("{label}: {name}: unexpected expected value {other}"),
                }
            }
        } else if let Some(values) = want.as_array() {
            // Coordinates: a list of numbers.
            assert_eq!(
                got.cell_count as usize,
                values.len(),
                "{label}: {name}: cells"
            );
            for (i, v) in values.iter().enumerate() {
                let size = got.datatype.size();
                let c = tdbfilter::array::value::as_i128(
                    got.datatype,
                    &got.data[i * size..(i + 1) * size],
                )
                .unwrap();
                assert_eq!(
                    c,
                    v.as_i64().unwrap() as i128,
                    "{label}: {name}: coordinate {i}"
                );
            }
        } else {
            panic!("{label}: {name}: no expected cells in {want}");
        }
        if let Some(v) = want.get("input_validity").and_then(|v| v.as_str()) {
            let mut want_v: Vec<u8> = v.bytes().map(|b| b - b'0').collect();
            if !dense && label.starts_with("2.6.4/") {
                // TileDB-Py 0.8's sparse writes passed a zeroed validity buffer: every cell
                // is null on disk, and TileDB 2.30 reads them so.
                want_v.fill(0);
            }
            assert_eq!(
                got.validity.as_deref(),
                Some(&want_v[..]),
                "{label}: {name}: validity"
            );
        }
        checks += 1;
    }
    checks
}

#[test]
fn arrays_of_older_releases_read_as_their_writers_read_them() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected.json.gz").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 8, "fixtures of at least 8 releases: {dirs:?}");
    let mut checks = 0;
    let mut versions = std::collections::BTreeSet::new();
    for dir in dirs {
        let gz = std::fs::read(dir.join("expected.json.gz")).unwrap();
        let mut text = String::new();
        GzDecoder::new(&gz[..]).read_to_string(&mut text).unwrap();
        let expected: Value = serde_json::from_str(&text).unwrap();
        for (name, want) in expected["arrays"].as_object().unwrap() {
            if want.get("error").is_some() {
                continue;
            }
            let label = format!("{}/{name}", dir.file_name().unwrap().to_string_lossy());
            let array = Array::open(dir.join(name).to_str().unwrap(), &OpenOptions::default())
                .unwrap_or_else(|e| panic!("{label}: open: {e}"));
            if let Some(n) = want.get("fragments").and_then(|n| n.as_u64()) {
                assert_eq!(array.fragments().len() as u64, n, "{label}: fragments");
            }
            for f in array.fragments() {
                versions.insert(f.meta.version);
            }
            checks += check_array(&label, &array, want);
        }
    }
    // Format versions 5 (TileDB 2.0) to 20 (TileDB 2.17) are all covered.
    assert!(
        versions.contains(&5) && versions.contains(&20),
        "{versions:?}"
    );
    assert!(checks > 100, "{checks} fields checked");
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// `lifecycle::upgrade_version` on arrays of older releases (copies): the newest schema is
/// written again at the current format version in `__schema/`, the current layout's folders
/// appear, the old files stay, the cells read as before, and a second upgrade writes nothing. (TileDB-Py's test_libtiledb `test_upgrade_version`
/// runs the same on a format-5 array.)
#[test]
fn upgrade_version_rewrites_the_schema_of_older_releases() {
    use tdbfilter::array::lifecycle::{self, EvolveOptions};
    use tdbfilter::format::format_version::FORMAT_VERSION;
    let scratch = std::env::temp_dir().join(format!(
        "tdbf_upgrade_version_{}_{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    ));
    let mut upgraded = 0;
    for release in ["2.0.8", "2.9.5", "2.17.5"] {
        let dir = root().join(release);
        let gz = std::fs::read(dir.join("expected.json.gz")).unwrap();
        let mut text = String::new();
        GzDecoder::new(&gz[..]).read_to_string(&mut text).unwrap();
        let expected: Value = serde_json::from_str(&text).unwrap();
        for name in ["plain_dense", "plain_sparse"] {
            let want = &expected["arrays"][name];
            if want.is_null() || want.get("error").is_some() {
                continue;
            }
            let label = format!("{release}/{name} upgraded");
            let copy = scratch.join(release).join(name);
            copy_dir(&dir.join(name), &copy);
            let path = copy.to_str().unwrap();
            let before = Array::open(path, &OpenOptions::default()).unwrap();
            assert!(before.schema().version < FORMAT_VERSION, "{label}");
            let old_files: Vec<_> = std::fs::read_dir(&copy)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            let written = lifecycle::upgrade_version(path, &EvolveOptions::default())
                .unwrap()
                .unwrap_or_else(|| panic!("{label}: nothing written"));
            assert!(copy.join("__schema").join(&written).is_file(), "{label}");
            for d in [
                "__commits",
                "__fragments",
                "__fragment_meta",
                "__schema/__enumerations",
            ] {
                assert!(copy.join(d).is_dir(), "{label}: {d}");
            }
            for f in &old_files {
                assert!(copy.join(f).exists(), "{label}: {f:?} kept");
            }
            let after = Array::open(path, &OpenOptions::default()).unwrap();
            assert_eq!(after.schema().version, FORMAT_VERSION, "{label}");
            assert_eq!(after.schema().name, written, "{label}");
            assert_eq!(
                after.schema().dimensions.len(),
                before.schema().dimensions.len()
            );
            for (a, b) in after
                .schema()
                .attributes
                .iter()
                .zip(&before.schema().attributes)
            {
                assert_eq!((&a.name, a.datatype), (&b.name, b.datatype), "{label}");
            }
            assert_eq!(after.fragments().len(), before.fragments().len(), "{label}");
            assert!(check_array(&label, &after, want) > 0);
            assert_eq!(
                lifecycle::upgrade_version(path, &EvolveOptions::default()).unwrap(),
                None,
                "{label}: current already"
            );
            upgraded += 1;
        }
    }
    assert!(upgraded >= 4, "{upgraded} arrays upgraded");
    std::fs::remove_dir_all(&scratch).unwrap();
}
