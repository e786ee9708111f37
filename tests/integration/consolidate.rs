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
            std::slice::from_ref(&names)
        );
    }
    fs::remove_dir_all(&dir).unwrap();
}

/// The files of `__commits/` ending with `suffix`.
fn commit_files(dir: &Path, suffix: &str) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir.join("__commits"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(suffix))
        .collect();
    v.sort();
    v
}

fn visible(dir: &Path) -> usize {
    Array::open(s(dir), &OpenOptions::default())
        .unwrap()
        .fragments()
        .len()
}

#[test]
fn a_consolidation_killed_before_its_vacuum_file_is_completed_later() {
    let dir = sparse("pending", 3);
    let before: Vec<_> = (1..=4).map(|t| read(&dir, t)).collect();
    let r = lifecycle::consolidate(
        s(&dir),
        &ConsolidateOptions::new(ConsolidateMode::Fragments),
    )
    .unwrap();
    assert_eq!(r.merged.len(), 1);
    // As if killed between the commit and the rename of the vacuum file.
    let vac = commit_files(&dir, ".vac");
    assert_eq!(vac.len(), 1);
    let commits = dir.join("__commits");
    fs::rename(
        commits.join(&vac[0]),
        commits.join(format!("{}.tmp", vac[0])),
    )
    .unwrap();
    assert_eq!(visible(&dir), 4, "the merged fragments beside the new one");
    let after: Vec<_> = (1..=4).map(|t| read(&dir, t)).collect();
    assert_eq!(after, before, "the same cells at every timestamp");
    // A vacuum completes the vacuum file first, then removes what it lists.
    let v = lifecycle::vacuum(s(&dir), &VacuumOptions::new(VacuumMode::Fragments)).unwrap();
    assert_eq!(v.removed.len(), 3 * 2 + 1, "{:?}", v.removed);
    assert_eq!(visible(&dir), 1);
    assert!(commit_files(&dir, ".tmp").is_empty());
    assert!(commit_files(&dir, ".vac").is_empty());
    assert_eq!(read(&dir, 100), before[3]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_vacuum_killed_between_a_marker_and_its_folder_is_finished_later() {
    let dir = sparse("orphan", 3);
    let r = lifecycle::consolidate(
        s(&dir),
        &ConsolidateOptions::new(ConsolidateMode::Fragments),
    )
    .unwrap();
    let merged = &r.merged[0];
    // As if killed after removing the first merged fragment's marker.
    fs::remove_file(dir.join("__commits").join(format!("{}.wrt", merged[0]))).unwrap();
    // And a leftover temporary file of a killed commits consolidation.
    fs::write(dir.join("__commits").join("__1_3_x_22.con.tmp"), b"partial").unwrap();
    let mut o = VacuumOptions::new(VacuumMode::Fragments);
    o.uncommitted_grace = Some(std::time::Duration::ZERO);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let v = lifecycle::vacuum(s(&dir), &o).unwrap();
    for m in merged {
        assert!(!dir.join("__fragments").join(m).exists(), "{m} removed");
    }
    assert!(v.removed.contains(&format!("__fragments/{}/", merged[0])));
    assert!(
        v.removed
            .contains(&"__commits/__1_3_x_22.con.tmp".to_string())
    );
    assert_eq!(visible(&dir), 1);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn consolidation_without_purge_writes_delete_metadata() {
    let dir = sparse("delete_meta", 3);
    lifecycle::delete_cells(
        s(&dir),
        "a < 25",
        Some(2),
        &lifecycle::DeleteCellsOptions::default(),
    )
    .unwrap();
    let times = [1u64, 2, 3, 100];
    let before: Vec<_> = times.iter().map(|&t| read(&dir, t)).collect();
    let r = lifecycle::consolidate(
        s(&dir),
        &ConsolidateOptions::new(ConsolidateMode::Fragments),
    )
    .unwrap();
    let folder = dir.join(r.written[0].trim_end_matches('/'));
    for f in ["t.tdb", "dt.tdb", "dci.tdb"] {
        assert!(folder.join(f).exists(), "{f}");
    }
    let a = Array::open(s(&dir), &OpenOptions::default()).unwrap();
    assert_eq!(a.fragments().len(), 1);
    assert!(a.fragments()[0].meta.has_delete_meta);
    let after: Vec<_> = times.iter().map(|&t| read(&dir, t)).collect();
    assert_eq!(after, before, "reads at {times:?}");
    fs::remove_dir_all(&dir).unwrap();
}

/// Float and 8-bit dimensions (negative coordinates, `-0.0` beside `0.0`, an int8 extent whose
/// tile indices wrap as TileDB's): the consolidation's order keys put the cells where the
/// reader's merge puts them, so the array reads the same after.
#[test]
fn float_and_int8_dimensions_merge_in_the_readers_order() {
    let dir = std::env::temp_dir().join(format!("tdbf_consolidate_float_{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let schema = ArraySchema::from_json(
        r#"{"sparse": true, "capacity": 4, "tile_order": "col-major", "cell_order": "row-major",
        "dimensions": [{"name": "x", "type": "FLOAT64", "domain": [-10.0, 10.0], "tile": 2.5},
                       {"name": "y", "type": "INT8", "domain": [-100, 100], "tile": 50}],
        "attributes": [{"name": "a", "type": "INT32"}]}"#,
    )
    .unwrap();
    tdbfilter::array::create(s(&dir), &schema, None, &StorageConfig::new()).unwrap();
    let xs = [-10.0, -7.5, -2.5, -0.0, 0.0, 0.1, 2.5, 9.99, 10.0];
    let ys: [i8; 6] = [-100, -51, -1, 6, 7, 100];
    for t in 1..=4u64 {
        let mut w = Writer::open(s(&dir), None, Some(t), &StorageConfig::new()).unwrap();
        w.set_layout(WriteLayout::Unordered).unwrap();
        // Each fragment: a different subset of the grid (-0.0 and 0.0 are one coordinate:
        // only one of them per fragment).
        let cells: Vec<(f64, i8)> = xs
            .iter()
            .enumerate()
            .flat_map(|(i, &x)| ys.iter().enumerate().map(move |(j, &y)| (i, j, x, y)))
            .filter(|&(i, j, _, _)| {
                !(i + j + t as usize).is_multiple_of(3) && i != 3 + (t as usize % 2)
            })
            .map(|(_, _, x, y)| (x, y))
            .collect();
        let x: Vec<u8> = cells.iter().flat_map(|c| c.0.to_le_bytes()).collect();
        let y: Vec<u8> = cells.iter().map(|c| c.1 as u8).collect();
        let a: Vec<u8> = (0..cells.len())
            .flat_map(|i| (t as i32 * 1000 + i as i32).to_le_bytes())
            .collect();
        w.set_data("x", &x).unwrap();
        w.set_data("y", &y).unwrap();
        w.set_data("a", &a).unwrap();
        w.submit().unwrap();
        w.finalize().unwrap();
    }
    let read = || {
        let a = Array::open(s(&dir), &OpenOptions::default()).unwrap();
        let f = a.read(&["x", "y", "a"], None).unwrap();
        (
            a.fragments().len(),
            f.into_iter().map(|f| f.data).collect::<Vec<_>>(),
        )
    };
    let (n, before) = read();
    assert_eq!(n, 4);
    let r = lifecycle::consolidate(
        s(&dir),
        &ConsolidateOptions::new(ConsolidateMode::Fragments),
    )
    .unwrap();
    assert_eq!(r.merged.len(), 1);
    let (n, after) = read();
    assert_eq!(n, 1);
    assert!(before == after, "the consolidated array reads differently");
    fs::remove_dir_all(&dir).unwrap();
}
