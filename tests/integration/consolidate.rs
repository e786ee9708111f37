//! Consolidation (`array::lifecycle::consolidate`) on arrays this crate writes: reads at every
//! timestamp before and after, the files written, vacuum afterwards, the plan's settings and
//! the refusals. The TileDB-Py differential suite is tests/array/run_consolidate_tests.py.

use std::fs;
use std::path::{Path, PathBuf};
use tdbfilter::array::lifecycle::{
    self, ConsolidateMode, ConsolidateOptions, VacuumMode, VacuumOptions,
};
use tdbfilter::array::schema::ArraySchema;
use tdbfilter::array::{Array, OpenOptions, WriteLayout, Writer};
use tdbfilter::storage::StorageConfig;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A sparse array with fragments at timestamps 1..=n, each writing cells 0..5 (a = 10 t + d)
/// and cell t + 20.
fn sparse(name: &str, n: i32) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tdbf_consolidate_{name}_{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let schema = ArraySchema::from_json(
        r#"{"sparse": true, "capacity": 3,
        "dimensions": [{"name": "d", "type": "INT32", "domain": [0, 99], "tile": 10}],
        "attributes": [{"name": "a", "type": "INT32"}]}"#,
    )
    .unwrap();
    tdbfilter::array::create(s(&dir), &schema, None, &StorageConfig::new()).unwrap();
    for t in 1..=n {
        let mut w = Writer::open(s(&dir), None, Some(t as u64), &StorageConfig::new()).unwrap();
        w.set_layout(WriteLayout::Unordered).unwrap();
        let d: Vec<i32> = (0..5).chain([t + 20]).collect();
        let a: Vec<i32> = d.iter().map(|x| 10 * t + x).collect();
        w.set_data(
            "d",
            &d.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
        )
        .unwrap();
        w.set_data(
            "a",
            &a.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
        )
        .unwrap();
        w.submit().unwrap();
        w.finalize().unwrap();
    }
    dir
}

fn read(dir: &Path, t: u64) -> (Vec<u8>, Vec<u8>) {
    let o = OpenOptions {
        timestamp_end: Some(t),
        ..OpenOptions::default()
    };
    let a = Array::open(s(dir), &o).unwrap();
    let mut f = a.read(&["d", "a"], None).unwrap();
    let a = f.remove(1).data;
    (f.remove(0).data, a)
}

#[test]
fn sparse_fragments_merge_and_read_the_same_at_every_timestamp() {
    let dir = sparse("sparse", 4);
    let before: Vec<_> = (1..=5).map(|t| read(&dir, t)).collect();
    let r = lifecycle::consolidate(
        s(&dir),
        &ConsolidateOptions::new(ConsolidateMode::Fragments),
    )
    .unwrap();
    assert_eq!(r.merged.len(), 1);
    assert_eq!(r.merged[0].len(), 4);
    let name = r.written[0]
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap();
    assert!(
        name.starts_with("__1_4_") && name.ends_with("_22"),
        "{name}"
    );
    assert!(dir.join("__fragments").join(name).join("t.tdb").is_file());
    let vac = fs::read_to_string(dir.join("__commits").join(format!("{name}.vac"))).unwrap();
    assert_eq!(vac.lines().count(), 4);
    assert!(vac.lines().all(|l| l.starts_with("/__fragments/__")));
    let after: Vec<_> = (1..=5).map(|t| read(&dir, t)).collect();
    assert_eq!(before, after);
    lifecycle::vacuum(s(&dir), &VacuumOptions::new(VacuumMode::Fragments)).unwrap();
    let a = Array::open(s(&dir), &OpenOptions::default()).unwrap();
    assert_eq!(a.fragments().len(), 1);
    let vacuumed: Vec<_> = (1..=5).map(|t| read(&dir, t)).collect();
    assert_eq!(before, vacuumed);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn steps_and_ranges_follow_the_settings() {
    let dir = sparse("steps", 5);
    let mut o = ConsolidateOptions::new(ConsolidateMode::Fragments);
    o.set("sm.consolidation.step_min_frags", "2").unwrap();
    o.set("sm.consolidation.step_max_frags", "2").unwrap();
    o.set("sm.consolidation.steps", "2").unwrap();
    let r = lifecycle::consolidate(s(&dir), &o).unwrap();
    assert_eq!(r.merged.len(), 2);
    assert!(r.merged.iter().all(|m| m.len() == 2));
    // Only the maximum set: below the default minimum, refused as TileDB does.
    let mut o = ConsolidateOptions::new(ConsolidateMode::Fragments);
    o.set("sm.consolidation.step_max_frags", "3").unwrap();
    let e = lifecycle::consolidate(s(&dir), &o).unwrap_err();
    assert!(e.to_string().contains("Minimum"), "{e}");
    assert!(o.set("sm.consolidation.max_fragment_size", "1000").is_err());
    assert!(o.set("sm.consolidation.nonsense", "1").is_err());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn commits_and_metadata_modes_keep_reads() {
    let dir = sparse("modes", 3);
    for t in [10u64, 11] {
        tdbfilter::array::write_metadata(
            s(&dir),
            None,
            Some(t),
            &[tdbfilter::array::metadata::MetadataChange::Put(
                tdbfilter::array::metadata::MetadataEntry::new(
                    "k",
                    tdbfilter::Datatype::Int32,
                    1,
                    &(t as i32).to_le_bytes(),
                )
                .unwrap(),
            )],
            &StorageConfig::new(),
        )
        .unwrap();
    }
    let before = read(&dir, 100);
    for mode in ["commits", "fragment_meta", "array_meta"] {
        let r = lifecycle::consolidate(
            s(&dir),
            &ConsolidateOptions::new(ConsolidateMode::parse(mode).unwrap()),
        )
        .unwrap();
        assert!(!r.written.is_empty(), "{mode}");
        assert_eq!(read(&dir, 100), before, "{mode}");
        lifecycle::vacuum(
            s(&dir),
            &VacuumOptions::new(VacuumMode::parse(mode).unwrap()),
        )
        .unwrap();
        assert_eq!(read(&dir, 100), before, "{mode} vacuumed");
    }
    let a = Array::open(s(&dir), &OpenOptions::default()).unwrap();
    let m = a.metadata().unwrap();
    assert_eq!(m.len(), 1);
    fs::remove_dir_all(&dir).unwrap();
}

/// A dense domain that is not a whole number of tiles (20 cells, tiles of 3): the merged box
/// of whole tiles reaches past it; the array reads the same after consolidating and vacuuming.
#[test]
fn dense_domain_of_partial_last_tile() {
    let dir = std::env::temp_dir().join(format!("tdbf_consolidate_ragged_{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let schema = ArraySchema::from_json(
        r#"{"sparse": false,
        "dimensions": [{"name": "d", "type": "UINT64", "domain": [0, 19], "tile": 3}],
        "attributes": [{"name": "a", "type": "INT64", "fill": -1}]}"#,
    )
    .unwrap();
    tdbfilter::array::create(s(&dir), &schema, None, &StorageConfig::new()).unwrap();
    for t in 1..=3u64 {
        let mut w = Writer::open(s(&dir), None, Some(t), &StorageConfig::new()).unwrap();
        let (lo, hi) = (t - 1, 18u64);
        w.set_subarray(&[lo.to_le_bytes(), hi.to_le_bytes()].concat())
            .unwrap();
        let a: Vec<u8> = (lo..=hi)
            .flat_map(|d| (100 * t as i64 + d as i64).to_le_bytes())
            .collect();
        w.set_data("a", &a).unwrap();
        w.submit().unwrap();
        w.finalize().unwrap();
    }
    let read_a = || {
        let a = Array::open(s(&dir), &OpenOptions::default()).unwrap();
        a.read(&["a"], None).unwrap().remove(0).data
    };
    let before = read_a();
    let r = lifecycle::consolidate(
        s(&dir),
        &ConsolidateOptions::new(ConsolidateMode::Fragments),
    )
    .unwrap();
    assert_eq!(r.merged.len(), 1, "{r:?}");
    assert_eq!(r.merged[0].len(), 3);
    assert_eq!(read_a(), before);
    lifecycle::vacuum(s(&dir), &VacuumOptions::new(VacuumMode::Fragments)).unwrap();
    let a = Array::open(s(&dir), &OpenOptions::default()).unwrap();
    assert_eq!(a.fragments().len(), 1);
    drop(a);
    assert_eq!(read_a(), before);
    fs::remove_dir_all(&dir).unwrap();
}

/// TileDB's consolidation plan: overlapping fragments are one node; with a desired size above
/// every fragment, all small fragments join it.
#[test]
fn consolidation_plan_groups_overlaps_then_small_fragments() {
    let dir = sparse("plan", 3);
    let a = Array::open(s(&dir), &OpenOptions::default()).unwrap();
    let names: Vec<String> = a.fragments().iter().map(|f| f.name().to_string()).collect();
    // Every fragment writes cells 0..5: all overlap, one node whatever the size.
    for size in [1, 1 << 40] {
        assert_eq!(
            lifecycle::consolidation_plan(&a, size).unwrap(),
            [names.clone()]
        );
    }
    fs::remove_dir_all(&dir).unwrap();
}
