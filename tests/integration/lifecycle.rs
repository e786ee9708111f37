//! The array lifecycle (`array::lifecycle`) and groups (`group`) on arrays this crate writes:
//! reads after each operation, the files left, the refusals. The TileDB-Py differential suite
//! is tests/array/run_lifecycle_tests.py.

use std::fs;
use std::path::{Path, PathBuf};
use tdbfilter::array::lifecycle::{
    self, EvolveOptions, SchemaChange, VacuumMode, VacuumOptions, uncommitted,
};
use tdbfilter::array::metadata::{MetadataChange, MetadataEntry};
use tdbfilter::array::schema::ArraySchema;
use tdbfilter::array::{Array, OpenOptions, WriteLayout, Writer};
use tdbfilter::group::{self, Group, GroupChanges, GroupOptions, ObjectType};
use tdbfilter::storage::{Storage, StorageConfig};
use tdbfilter::{Datatype, Error};

fn scratch(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!(
        "tdbf_lifecycle_{name}_{}_{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    ));
    let _ = fs::remove_dir_all(&p);
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const SCHEMA: &str = r#"{"sparse": true,
    "dimensions": [{"name": "d", "type": "INT32", "domain": [0, 99], "tile": 10}],
    "attributes": [{"name": "a", "type": "INT32"}]}"#;

/// A sparse array with one fragment per timestamp 1..=n: cells (t, 10 t) and (t + 50, -t).
fn array(name: &str, n: i32) -> PathBuf {
    let dir = scratch(name);
    tdbfilter::array::create(
        s(&dir),
        &ArraySchema::from_json(SCHEMA).unwrap(),
        None,
        &StorageConfig::new(),
    )
    .unwrap();
    for t in 1..=n {
        let mut w = Writer::open(s(&dir), None, Some(t as u64), &StorageConfig::new()).unwrap();
        w.set_layout(WriteLayout::Unordered).unwrap();
        w.set_data("d", &[t, t + 50].map(i32::to_le_bytes).concat())
            .unwrap();
        w.set_data("a", &[10 * t, -t].map(i32::to_le_bytes).concat())
            .unwrap();
        w.submit().unwrap();
        w.finalize().unwrap();
    }
    dir
}

fn ints(dir: &Path, field: &str) -> Vec<i64> {
    let a = Array::open(s(dir), &OpenOptions::default()).unwrap();
    let f = a.read(&[field], None).unwrap().remove(0);
    let n = f.data.len() / f.cell_count.max(1) as usize;
    f.data
        .chunks(n.max(1))
        .map(|c| match n {
            4 => i32::from_le_bytes(c.try_into().unwrap()) as i64,
            8 => i64::from_le_bytes(c.try_into().unwrap()),
            _ => panic!("{n}-byte cells"),
        })
        .collect()
}

fn fragments(dir: &Path) -> Vec<String> {
    let a = Array::open(s(dir), &OpenOptions::default()).unwrap();
    a.fragments().iter().map(|f| f.name().to_string()).collect()
}

#[test]
fn delete_fragments_removes_the_range_and_keeps_the_rest() {
    let dir = array("delete", 4);
    let names = fragments(&dir);
    let r = lifecycle::delete_fragments(s(&dir), 2, 3, &StorageConfig::new()).unwrap();
    assert_eq!(r.fragments, names[1..3]);
    assert_eq!(fragments(&dir), [names[0].clone(), names[3].clone()]);
    assert_eq!(ints(&dir, "a"), [10, 40, -1, -4]);
    for n in &names[1..3] {
        assert!(!dir.join("__fragments").join(n).exists());
        assert!(!dir.join("__commits").join(format!("{n}.wrt")).exists());
    }
    // Markers first, folders after.
    assert!(r.removed[0].ends_with(".wrt") && r.removed[1].ends_with('/'));
    assert!(r.written.is_empty());
    let err = lifecycle::delete_fragments(s(&dir), 3, 2, &StorageConfig::new()).unwrap_err();
    assert!(err.message().contains("reversed"), "{err}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn delete_array_keeps_foreign_files() {
    let dir = array("delete_array", 2);
    fs::write(dir.join("notes.txt"), b"mine").unwrap();
    lifecycle::delete_array(s(&dir), &StorageConfig::new()).unwrap();
    let left: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(left, ["notes.txt"]);
    assert!(Array::open(s(&dir), &OpenOptions::default()).is_err());
    let err = lifecycle::delete_array(s(&dir), &StorageConfig::new()).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    fs::remove_dir_all(&dir).unwrap();
    let dir = array("delete_array_all", 1);
    lifecycle::delete_array(s(&dir), &StorageConfig::new()).unwrap();
    assert!(!dir.exists());
}

#[test]
fn vacuum_without_consolidation_removes_nothing() {
    let dir = array("vacuum_nothing", 2);
    for mode in ["fragments", "commits", "fragment_meta", "array_meta"] {
        let r = lifecycle::vacuum(
            s(&dir),
            &VacuumOptions::new(VacuumMode::parse(mode).unwrap()),
        )
        .unwrap();
        assert!(
            r.removed.is_empty() && r.written.is_empty(),
            "{mode}: {r:?}"
        );
    }
    assert_eq!(ints(&dir, "a"), [10, 20, -1, -2]);
    assert!(VacuumMode::parse("everything").is_err());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn vacuum_removes_only_old_uncommitted_leftovers() {
    let dir = array("leftover", 1);
    let frags = dir.join("__fragments");
    let done = fs::read_dir(&frags)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let leftover = frags.join(format!("__2_2_{}_22", "c".repeat(32)));
    fs::create_dir(&leftover).unwrap();
    for f in fs::read_dir(&done).unwrap() {
        let f = f.unwrap();
        fs::copy(f.path(), leftover.join(f.file_name())).unwrap();
    }
    let (storage, root) = Storage::open(s(&dir), &StorageConfig::new()).unwrap();
    let listed = uncommitted::list(&storage, &root).unwrap();
    assert_eq!(listed.len(), 1);
    // Fresh: kept with the default grace period.
    let r = lifecycle::vacuum(s(&dir), &VacuumOptions::new(VacuumMode::Fragments)).unwrap();
    assert!(r.removed.is_empty());
    assert!(leftover.exists());
    // A zero grace period: removed; the committed fragment stays.
    let mut o = VacuumOptions::new(VacuumMode::Fragments);
    o.uncommitted_grace = Some(std::time::Duration::ZERO);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let r = lifecycle::vacuum(s(&dir), &o).unwrap();
    assert_eq!(r.removed.len(), 1, "{r:?}");
    assert!(!leftover.exists() && done.exists());
    assert_eq!(ints(&dir, "a"), [10, -1]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn evolution_adds_drops_and_reads_fill_values() {
    let dir = array("evolve", 1);
    let attr = |json: &str| {
        ArraySchema::from_json(&format!(
            r#"{{"sparse": true, "dimensions": [{{"name": "z", "type": "INT32",
                 "domain": [0, 9], "tile": 1}}], "attributes": [{json}]}}"#
        ))
        .unwrap()
        .attributes
        .remove(0)
    };
    let o = EvolveOptions::default();
    std::thread::sleep(std::time::Duration::from_millis(2));
    lifecycle::evolve(
        s(&dir),
        &[SchemaChange::AddAttribute(Box::new(attr(
            r#"{"name": "b", "type": "INT64", "fill": 9}"#,
        )))],
        &o,
    )
    .unwrap();
    assert_eq!(ints(&dir, "b"), [9, 9]);
    assert_eq!(ints(&dir, "a"), [10, -1]);
    // Dropped and added again as INT64: the old INT32 cells are not reinterpreted.
    lifecycle::evolve(s(&dir), &[SchemaChange::DropAttribute("a".into())], &o).unwrap();
    lifecycle::evolve(
        s(&dir),
        &[SchemaChange::AddAttribute(Box::new(attr(
            r#"{"name": "a", "type": "INT64", "fill": -7}"#,
        )))],
        &o,
    )
    .unwrap();
    assert_eq!(ints(&dir, "a"), [-7, -7]);
    // Var-size over fixed: the fill value, not a missing file.
    lifecycle::evolve(s(&dir), &[SchemaChange::DropAttribute("b".into())], &o).unwrap();
    lifecycle::evolve(
        s(&dir),
        &[SchemaChange::AddAttribute(Box::new(attr(
            r#"{"name": "b", "type": "STRING_ASCII", "cell_val_num": "var", "fill": "x"}"#,
        )))],
        &o,
    )
    .unwrap();
    let a = Array::open(s(&dir), &OpenOptions::default()).unwrap();
    let b = a.read(&["b"], None).unwrap().remove(0);
    assert_eq!(
        (b.data.as_slice(), b.offsets.as_deref()),
        (&b"xx"[..], Some(&[0, 1][..]))
    );
    assert_eq!(a.schemas().len(), 6);
    // Refusals leave no file.
    let e =
        lifecycle::evolve(s(&dir), &[SchemaChange::DropAttribute("nope".into())], &o).unwrap_err();
    assert!(e.message().contains("does not exist"), "{e}");
    let e = lifecycle::evolve(
        s(&dir),
        &[SchemaChange::AddAttribute(Box::new(attr(
            r#"{"name": "d", "type": "INT32"}"#,
        )))],
        &o,
    )
    .unwrap_err();
    assert!(e.message().contains("exists"), "{e}");
    assert!(lifecycle::evolve(s(&dir), &[], &o).is_err());
    assert_eq!(fs::read_dir(dir.join("__schema")).unwrap().count(), 7);
    // An evolution stamped before the newest schema is written, as TileDB 2.30 writes it
    // (TileDB-Py's test_schema_evolution_timestamp): reads at the current time keep the newest
    // schema, reads ending between the two timestamps open the early one.
    let early_t = 1_000_000_000_000;
    let early = EvolveOptions {
        timestamp: Some(early_t),
        ..Default::default()
    };
    let name =
        lifecycle::evolve(s(&dir), &[SchemaChange::DropAttribute("b".into())], &early).unwrap();
    assert!(
        name.starts_with(&format!("__{early_t}_{early_t}_")),
        "{name}"
    );
    let now = Array::open(s(&dir), &OpenOptions::default()).unwrap();
    assert!(now.schema().attribute_index("b").is_some());
    let then = Array::open(
        s(&dir),
        &OpenOptions {
            timestamp_end: Some(early_t + 1),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(then.schema().name, name);
    assert!(then.schema().attribute_index("b").is_none());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn writes_at_early_timestamps_take_the_latest_schema() {
    // TileDB 2.30: a write at timestamp 2 after an evolution made "now" has the evolved
    // attribute, and its fragment names the evolved schema.
    let dir = array("write_latest_schema", 1);
    let b = ArraySchema::from_json(
        r#"{"sparse": true, "dimensions": [{"name": "z", "type": "INT32",
             "domain": [0, 9], "tile": 1}], "attributes": [{"name": "b", "type": "INT32"}]}"#,
    )
    .unwrap()
    .attributes
    .remove(0);
    std::thread::sleep(std::time::Duration::from_millis(2));
    lifecycle::evolve(
        s(&dir),
        &[SchemaChange::AddAttribute(Box::new(b))],
        &EvolveOptions::default(),
    )
    .unwrap();
    let mut w = Writer::open(s(&dir), None, Some(2), &StorageConfig::new()).unwrap();
    assert!(w.schema().attribute_index("b").is_some());
    w.set_layout(WriteLayout::Unordered).unwrap();
    w.set_data("d", &7i32.to_le_bytes()).unwrap();
    w.set_data("a", &70i32.to_le_bytes()).unwrap();
    w.set_data("b", &700i32.to_le_bytes()).unwrap();
    w.submit().unwrap();
    w.finalize().unwrap();
    let a = Array::open(s(&dir), &OpenOptions::default()).unwrap();
    let names: Vec<&str> = a
        .fragments()
        .iter()
        .map(|f| f.meta.schema_name.as_str())
        .collect();
    assert_eq!(names.len(), 2);
    assert_ne!(
        names[0], names[1],
        "the second fragment names the evolved schema"
    );
    let newest = fs::read_dir(dir.join("__schema"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("__") && n != "__enumerations")
        .max_by_key(|n| n.split('_').nth(2).unwrap().parse::<u64>().unwrap())
        .unwrap();
    assert_eq!(names[1], newest);
    assert!(ints(&dir, "b").contains(&700));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn groups_round_trip_members_and_metadata() {
    let base = scratch("group");
    let g = base.join("g");
    group::create(s(&g), &StorageConfig::new()).unwrap();
    assert!(group::create(s(&g), &StorageConfig::new()).is_err());
    let arr = array("group_member", 1);
    fs::rename(&arr, g.join("arr")).unwrap();
    group::create(s(&g.join("sub")), &StorageConfig::new()).unwrap();
    let o = GroupOptions::default();
    let mut c = GroupChanges::default();
    c.add("arr", true, Some("A")).add("sub", true, None);
    c.metadata(MetadataChange::Put(
        MetadataEntry::new("n", Datatype::Int64, 1, &5i64.to_le_bytes()).unwrap(),
    ));
    group::update(s(&g), &c, &o).unwrap();
    let opened = Group::open(s(&g), &o).unwrap();
    assert_eq!(opened.members().len(), 2);
    let a = opened.member("A").unwrap();
    assert_eq!((a.object_type, a.relative), (ObjectType::Array, true));
    assert_eq!(opened.member_uri(a), s(&g.join("arr")));
    assert_eq!(opened.metadata()[0].key, "n");
    // Remove by name and by relative URI; unknown members and non-objects are refused.
    let mut c = GroupChanges::default();
    c.remove("A").remove("sub");
    group::update(s(&g), &c, &o).unwrap();
    assert!(Group::open(s(&g), &o).unwrap().members().is_empty());
    let mut c = GroupChanges::default();
    c.remove("A");
    assert!(group::update(s(&g), &c, &o).is_err());
    let mut c = GroupChanges::default();
    c.add("nothing", true, None);
    let e = group::update(s(&g), &c, &o).unwrap_err();
    assert!(e.message().contains("not a TileDB array or group"), "{e}");
    // Absolute members are stored as file:// URIs.
    let mut c = GroupChanges::default();
    c.add(s(&g.join("arr")), false, None);
    group::update(s(&g), &c, &o).unwrap();
    let m = &Group::open(s(&g), &o).unwrap().members()[0].clone();
    assert_eq!(m.uri, format!("file://{}", s(&g.join("arr"))));
    assert!(Group::open(s(&g.join("arr")), &o).is_err());
    fs::remove_dir_all(&base).unwrap();
}

/// Sessions written one after another in the same millisecond apply in order: each later
/// session is stamped later than the group's newest file (with `now` alone, two sessions in
/// one millisecond applied in the random order of their labels).
#[test]
fn group_sessions_in_quick_succession_apply_in_order() {
    let base = scratch("group_quick");
    let g = base.join("g");
    group::create(s(&g), &StorageConfig::new()).unwrap();
    group::create(s(&g.join("sub")), &StorageConfig::new()).unwrap();
    let o = GroupOptions::default();
    for round in 0..40 {
        let mut c = GroupChanges::default();
        c.add("sub", true, Some("s"));
        group::update(s(&g), &c, &o).unwrap();
        assert_eq!(
            Group::open(s(&g), &o).unwrap().members().len(),
            1,
            "round {round}: add"
        );
        let mut c = GroupChanges::default();
        c.remove("s");
        group::update(s(&g), &c, &o).unwrap();
        assert!(
            Group::open(s(&g), &o).unwrap().members().is_empty(),
            "round {round}: remove"
        );
    }
    let mut stamps: Vec<u64> = fs::read_dir(g.join("__group"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .map(|n| n.split('_').nth(2).unwrap().parse().unwrap())
        .collect();
    let n = stamps.len();
    stamps.sort();
    stamps.dedup();
    assert_eq!(stamps.len(), n, "every session has its own timestamp");
    fs::remove_dir_all(&base).unwrap();
}

/// Group metadata consolidation merges the visible `__meta` files into one (deleted keys left
/// out) plus a `.vac`; readers see the same metadata before and after; vacuum leaves only the
/// merged file. TileDB-Py's `Group.consolidate_metadata`/`vacuum_metadata` (its
/// test_group.py `test_consolidation_and_vac*`) do the same.
#[test]
fn group_metadata_consolidation_and_vacuum() {
    let base = scratch("group_meta_consolidation");
    let g = base.join("g");
    group::create(s(&g), &StorageConfig::new()).unwrap();
    let int = |k: &str, v: i64| {
        MetadataChange::Put(MetadataEntry::new(k, Datatype::Int64, 1, &v.to_le_bytes()).unwrap())
    };
    let mut t = 10;
    let mut session = |change: MetadataChange| {
        let mut c = GroupChanges::default();
        c.metadata(change);
        let o = GroupOptions {
            timestamp_end: Some(t),
            ..Default::default()
        };
        t += 1;
        group::update(s(&g), &c, &o).unwrap();
    };
    for i in 0..3 {
        session(int("meta", i));
        session(int(&format!("k{i}"), i));
    }
    session(MetadataChange::Delete("k1".into()));
    let o = GroupOptions::default();
    let meta = |g: &Path| {
        Group::open(s(g), &o)
            .unwrap()
            .metadata()
            .iter()
            .map(|e| {
                (
                    e.key.clone(),
                    i64::from_le_bytes(e.value[..8].try_into().unwrap()),
                )
            })
            .collect::<Vec<_>>()
    };
    let before = meta(&g);
    assert_eq!(
        before,
        [("k0".into(), 0), ("k2".into(), 2), ("meta".into(), 2)]
    );
    let listing = |g: &Path| {
        let mut v: Vec<String> = fs::read_dir(g.join("__meta"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    assert_eq!(listing(&g).len(), 7);
    // A window of the first two sessions only merges those.
    let window = GroupOptions {
        timestamp_start: 10,
        timestamp_end: Some(11),
        ..Default::default()
    };
    let written = group::consolidate_metadata(s(&g), &window).unwrap();
    assert_eq!(written.len(), 2);
    assert!(written[0].starts_with("__meta/__10_11_"), "{written:?}");
    assert_eq!(meta(&g), before);
    assert_eq!(
        group::vacuum_metadata(s(&g), &StorageConfig::new())
            .unwrap()
            .len(),
        3
    );
    assert_eq!(listing(&g).len(), 6);
    assert_eq!(meta(&g), before);
    // Everything: one merged file and its .vac, then the merged file alone.
    let written = group::consolidate_metadata(s(&g), &o).unwrap();
    assert_eq!(written.len(), 2);
    assert!(written[0].starts_with("__meta/__10_16_"), "{written:?}");
    assert!(written[1].ends_with(".vac"));
    assert_eq!(listing(&g).len(), 8);
    assert_eq!(meta(&g), before);
    let removed = group::vacuum_metadata(s(&g), &StorageConfig::new()).unwrap();
    assert_eq!(removed.len(), 7);
    assert_eq!(listing(&g), [written[0]["__meta/".len()..].to_string()]);
    assert_eq!(meta(&g), before);
    // One file left: nothing to merge; nothing to vacuum. Not a group: refused.
    assert!(group::consolidate_metadata(s(&g), &o).unwrap().is_empty());
    assert!(
        group::vacuum_metadata(s(&g), &StorageConfig::new())
            .unwrap()
            .is_empty()
    );
    assert!(group::consolidate_metadata(s(&base), &o).is_err());
    assert!(group::vacuum_metadata(s(&base), &StorageConfig::new()).is_err());
    // No temporary file is left in the group folder.
    let mut root: Vec<String> = fs::read_dir(&g)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    root.sort();
    assert_eq!(root, ["__group", "__meta", "__tiledb_group.tdb"]);
    fs::remove_dir_all(&base).unwrap();
}

#[test]
fn evolution_from_json_types_values_by_the_schema() {
    let dir = array("evolve_json", 1);
    let options = EvolveOptions::default();
    lifecycle::evolve_json(
        s(&dir),
        r#"[{"add_enumeration": {"name": "e", "type": "INT16", "values": [3, 4]}},
            {"add_attribute": {"name": "f", "type": "UINT8", "enumeration": "e", "fill": 1}},
            {"add_attribute": {"name": "ok", "type": "BOOL", "fill": true}}]"#,
        &options,
    )
    .unwrap();
    assert_eq!(ints_u8(&dir, "ok"), [1, 1]);
    // Extension values take the enumeration's type (INT16) when the change leaves it out.
    lifecycle::evolve_json(
        s(&dir),
        r#"[{"extend_enumeration": {"name": "e", "values": [-5]}}]"#,
        &options,
    )
    .unwrap();
    let a = Array::open(s(&dir), &OpenOptions::default()).unwrap();
    let e = a.enumeration("e").unwrap();
    assert_eq!(e.data, [3i16, 4, -5].map(i16::to_le_bytes).concat());
    for (changes, needle) in [
        ("{}", "expected a list"),
        (r#"[{"rename": "a"}]"#, "unknown change 'rename'"),
        (r#"[{"drop_attribute": 3}]"#, "takes a name"),
        (r#"[{"drop_attribute": "a", "x": 1}]"#, "one member"),
        (
            r#"[{"extend_enumeration": {"name": "nope", "values": [1]}}]"#,
            "does not exist",
        ),
        (
            r#"[{"extend_enumeration": {"name": "e", "values": [70000]}}]"#,
            "outside the range of INT16",
        ),
        (r#"[{"drop_enumeration": "e"}]"#, "is used by attribute 'f'"),
        (
            r#"[{"expand_current_domain": [[0, 10], [0, 1]]}]"#,
            "non-equal number",
        ),
        ("[]", "no changes"),
    ] {
        let err = lifecycle::evolve_json(s(&dir), changes, &options).unwrap_err();
        assert!(err.message().contains(needle), "{changes}: {err}");
    }
    fs::remove_dir_all(&dir).unwrap();
}

/// The one-byte cells of `field`.
fn ints_u8(dir: &Path, field: &str) -> Vec<u8> {
    let a = Array::open(s(dir), &OpenOptions::default()).unwrap();
    a.read(&[field], None).unwrap().remove(0).data
}

/// `Writer::set_check_coord_dups(false)` (TileDB's `sm.check_coord_dups=false`): duplicate
/// coordinates in a sparse array without duplicates are written as given, and read back all
/// from that fragment alone; a later fragment's cell replaces them all, as in TileDB 2.30
/// (TileDB-Py's test_libtiledb `test_sparse_fixes_ch1560`). The default refuses them.
#[test]
fn unchecked_duplicate_coordinates_are_written_and_read_as_tiledb() {
    let dir = array("coord_dups", 0);
    let write = |t: u64, d: &[i32], a: &[i32], check: bool| {
        let mut w = Writer::open(s(&dir), None, Some(t), &StorageConfig::new()).unwrap();
        w.set_layout(WriteLayout::Unordered).unwrap();
        w.set_check_coord_dups(check).unwrap();
        w.set_data("d", &bytes_i32(d)).unwrap();
        w.set_data("a", &bytes_i32(a)).unwrap();
        w.submit().and_then(|_| w.finalize())
    };
    let e = write(1, &[1, 7, 7, 7], &[1, 2, 3, 4], true).unwrap_err();
    assert!(e.message().contains("Duplicate coordinates (7)"), "{e}");
    write(1, &[7, 1, 7, 7], &[2, 1, 3, 4], false).unwrap();
    assert_eq!(ints(&dir, "d"), [1, 7, 7, 7]);
    let mut a = ints(&dir, "a");
    a[1..].sort();
    assert_eq!(a, [1, 2, 3, 4]);
    write(2, &[7, 3], &[9, 5], true).unwrap();
    assert_eq!(ints(&dir, "d"), [1, 3, 7]);
    assert_eq!(ints(&dir, "a"), [1, 5, 9]);
    fs::remove_dir_all(&dir).unwrap();
}

fn bytes_i32(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
