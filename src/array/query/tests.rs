//! Query tests on arrays written by this crate's writer.

use super::*;
use crate::array::directory::names;
use crate::array::schema::ArraySchema;
use crate::array::{OpenOptions, WriteLayout, Writer, create};
use crate::storage::StorageConfig;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("tdbf_query_{name}_{}", names::random_label().0))
}

fn i32s(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn as_i32s(f: &FieldData) -> Vec<i32> {
    f.data
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// A dense 6x4 INT32 array (tiles 3x2) with a = 10*x + y written in one fragment over
/// rows 1..=6, columns 1..=4.
fn dense_array() -> PathBuf {
    let root = scratch("dense");
    let schema = ArraySchema::from_json(
        r#"{"dimensions":[{"name":"x","type":"INT32","domain":[1,6],"tile":3},
            {"name":"y","type":"INT32","domain":[1,4],"tile":2}],
            "attributes":[{"name":"a","type":"INT32"}]}"#,
    )
    .unwrap();
    create(root.to_str().unwrap(), &schema, None, &StorageConfig::new()).unwrap();
    let mut w = Writer::open(root.to_str().unwrap(), None, Some(1), &StorageConfig::new()).unwrap();
    w.set_layout(WriteLayout::RowMajor).unwrap();
    w.set_subarray(&i32s(&[1, 6, 1, 4])).unwrap();
    let a: Vec<i32> = (1..=6)
        .flat_map(|x| (1..=4).map(move |y| 10 * x + y))
        .collect();
    w.set_data("a", &i32s(&a)).unwrap();
    w.submit().unwrap();
    w.finalize().unwrap();
    root
}

/// A sparse 2-D array with a string dimension and a nullable var attribute.
fn sparse_array() -> PathBuf {
    let root = scratch("sparse");
    let schema = ArraySchema::from_json(
        r#"{"sparse":true,"dimensions":[{"name":"x","type":"INT32","domain":[1,8],"tile":4},
            {"name":"s","type":"STRING_ASCII"}],
            "attributes":[{"name":"v","type":"INT64","nullable":true},
                          {"name":"t","type":"STRING_ASCII","cell_val_num":"var"}]}"#,
    )
    .unwrap();
    create(root.to_str().unwrap(), &schema, None, &StorageConfig::new()).unwrap();
    let mut w = Writer::open(root.to_str().unwrap(), None, Some(1), &StorageConfig::new()).unwrap();
    w.set_layout(WriteLayout::Unordered).unwrap();
    w.set_data("x", &i32s(&[1, 2, 5, 7, 2])).unwrap();
    let names = ["b", "a", "zz", "c", "q"];
    let (d, o) = var(&names);
    w.set_data("s", &d).unwrap();
    w.set_offsets("s", &o).unwrap();
    let v: Vec<u8> = [10i64, 20, 30, 40, 50]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    w.set_data("v", &v).unwrap();
    w.set_validity("v", &[1, 1, 0, 1, 1]).unwrap();
    let (d, o) = var(&["one", "two", "three", "four", "five"]);
    w.set_data("t", &d).unwrap();
    w.set_offsets("t", &o).unwrap();
    w.submit().unwrap();
    w.finalize().unwrap();
    root
}

fn var(cells: &[&str]) -> (Vec<u8>, Vec<u64>) {
    let mut d = Vec::new();
    let mut o = Vec::new();
    for c in cells {
        o.push(d.len() as u64);
        d.extend_from_slice(c.as_bytes());
    }
    (d, o)
}

fn open(root: &Path) -> Array {
    Array::open(root.to_str().unwrap(), &OpenOptions::default()).unwrap()
}

#[test]
fn dense_multi_range_layouts() {
    let root = dense_array();
    let array = open(&root);
    let q = |layout| {
        Query::new(&array)
            .fields(&["a", "x"])
            .add_range("x", 4, 5)
            .add_range("x", 1, 2)
            .add_range("y", 3, 3)
            .add_range("y", 1, 1)
            .layout(layout)
            .submit()
            .unwrap()
    };
    let row = q(QueryLayout::RowMajor);
    assert_eq!(as_i32s(&row.fields[0]), [43, 41, 53, 51, 13, 11, 23, 21]);
    assert_eq!(as_i32s(&row.fields[1]), [4, 4, 5, 5, 1, 1, 2, 2]);
    let col = q(QueryLayout::ColMajor);
    assert_eq!(as_i32s(&col.fields[0]), [43, 53, 13, 23, 41, 51, 11, 21]);
    // Overlapping ranges repeat cells.
    let r = Query::new(&array)
        .fields(&["a"])
        .add_range("x", 1, 2)
        .add_range("x", 2, 3)
        .add_range("y", 1, 1)
        .submit()
        .unwrap();
    assert_eq!(as_i32s(&r.fields[0]), [11, 21, 21, 31]);
    // Global order: tiles in tile order, cells in cell order.
    let g = Query::new(&array)
        .fields(&["a"])
        .add_range("x", 2, 5)
        .add_range("y", 2, 3)
        .layout(QueryLayout::GlobalOrder)
        .submit()
        .unwrap();
    assert_eq!(as_i32s(&g.fields[0]), [22, 32, 23, 33, 42, 52, 43, 53]);
    // Refusals with TileDB's reasons.
    let e = Query::new(&array)
        .layout(QueryLayout::Unordered)
        .submit()
        .unwrap_err();
    assert!(e.message().contains("not supported on dense arrays"), "{e}");
    let e = Query::new(&array)
        .add_range("x", 1, 1)
        .add_range("x", 3, 3)
        .layout(QueryLayout::GlobalOrder)
        .submit()
        .unwrap_err();
    assert!(e.message().contains("multi-range reads"), "{e}");
    let e = Query::new(&array)
        .add_range("x", 0, 3)
        .submit()
        .unwrap_err();
    assert!(e.message().contains("outside its domain"), "{e}");
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn dense_aggregates_use_tile_metadata_for_whole_tiles() {
    let root = dense_array();
    let array = open(&root);
    let aggs = |q: Query<'_>| {
        q.aggregate(Aggregate::count())
            .aggregate(Aggregate::of(AggregateOp::Sum, "a"))
            .aggregate(Aggregate::of(AggregateOp::Min, "a"))
            .aggregate(Aggregate::of(AggregateOp::Max, "a"))
            .aggregate(Aggregate::of(AggregateOp::Mean, "a"))
            .submit()
            .unwrap()
    };
    let whole = aggs(Query::new(&array));
    let all: Vec<i64> = (1..=6)
        .flat_map(|x| (1..=4).map(move |y| 10 * x + y))
        .collect();
    let sum: i64 = all.iter().sum();
    assert_eq!(
        whole.aggregates[0],
        ("count".into(), AggregateValue::Count(24))
    );
    assert_eq!(
        whole.aggregates[1],
        ("sum(a)".into(), AggregateValue::Int(sum))
    );
    assert_eq!(
        whole.aggregates[2].1,
        AggregateValue::Value {
            datatype: crate::Datatype::Int32,
            bytes: Some(11i32.to_le_bytes().to_vec())
        }
    );
    assert_eq!(
        whole.aggregates[4].1,
        AggregateValue::Float(sum as f64 / 24.0)
    );
    assert_eq!(whole.stats.tiles_from_metadata, 4);
    assert_eq!(whole.stats.tiles_decoded, 0);
    // Rows 2..=6: the two lower tiles whole, the upper two in part.
    let part = aggs(Query::new(&array).add_range("x", 2, 6));
    let s: i64 = all.iter().filter(|v| **v >= 20).sum();
    assert_eq!(part.aggregates[1].1, AggregateValue::Int(s));
    assert_eq!(part.stats.tiles_from_metadata, 2);
    assert_eq!(part.stats.tiles_decoded, 2);
    // A condition: every tile decoded; dense count ignores it.
    let even = FnFilter::new(&["a"], |c: &[FieldData]| {
        Ok(as_i32s(&c[0]).iter().map(|v| v % 2 == 0).collect())
    });
    let f = aggs(Query::new(&array).condition(Some(&even)));
    assert_eq!(f.aggregates[0].1, AggregateValue::Count(24));
    let s: i64 = all.iter().filter(|v| *v % 2 == 0).sum();
    assert_eq!(f.aggregates[1].1, AggregateValue::Int(s));
    assert_eq!(f.stats.tiles_from_metadata, 0);
    // Reads with the condition: failing cells hold the fill value.
    let r = Query::new(&array)
        .fields(&["a"])
        .add_range("x", 1, 1)
        .condition(Some(&even))
        .submit()
        .unwrap();
    assert_eq!(as_i32s(&r.fields[0]), [i32::MIN, 12, i32::MIN, 14]);
    let e = Query::new(&array)
        .aggregate(Aggregate::of(AggregateOp::NullCount, "a"))
        .submit()
        .unwrap_err();
    assert!(e.message().contains("not nullable"), "{e}");
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn dense_string_min_max_from_tile_metadata_are_the_values() {
    // Two tiles of var-size ASCII strings (one holding the empty string): min and max come
    // from the tile metadata (offsets into the var min/max buffer), not decoded cells.
    let root = scratch("dense_strings");
    let schema = ArraySchema::from_json(
        r#"{"dimensions":[{"name":"d","type":"INT64","domain":[1,8],"tile":4}],
            "attributes":[{"name":"s","type":"STRING_ASCII","cell_val_num":"var"}]}"#,
    )
    .unwrap();
    create(root.to_str().unwrap(), &schema, None, &StorageConfig::new()).unwrap();
    let mut w = Writer::open(root.to_str().unwrap(), None, Some(1), &StorageConfig::new()).unwrap();
    w.set_layout(WriteLayout::RowMajor).unwrap();
    let sub: Vec<u8> = [1i64, 8].iter().flat_map(|v| v.to_le_bytes()).collect();
    w.set_subarray(&sub).unwrap();
    let cells = [
        "pear", "apple", "fig", "kiwi", "zebra", "", "cherry", "date",
    ];
    let (d, o) = var(&cells);
    w.set_data("s", &d).unwrap();
    w.set_offsets("s", &o).unwrap();
    w.submit().unwrap();
    w.finalize().unwrap();
    let array = open(&root);
    let value = |v: &str| AggregateValue::Value {
        datatype: crate::Datatype::StringAscii,
        bytes: Some(v.as_bytes().to_vec()),
    };
    let agg = |q: Query<'_>| {
        q.aggregate(Aggregate::of(AggregateOp::Min, "s"))
            .aggregate(Aggregate::of(AggregateOp::Max, "s"))
            .submit()
            .unwrap()
    };
    let whole = agg(Query::new(&array));
    assert_eq!(whole.aggregates[0].1, value(""));
    assert_eq!(whole.aggregates[1].1, value("zebra"));
    assert_eq!(whole.stats.tiles_from_metadata, 2);
    assert_eq!(whole.stats.tiles_decoded, 0);
    // The first tile alone (from metadata) and the second alone.
    let first = agg(Query::new(&array).add_range("d", 1i64, 4i64));
    assert_eq!(first.aggregates[0].1, value("apple"));
    assert_eq!(first.aggregates[1].1, value("pear"));
    assert_eq!(first.stats.tiles_from_metadata, 1);
    let second = agg(Query::new(&array).add_range("d", 5i64, 8i64));
    assert_eq!(second.aggregates[0].1, value(""));
    assert_eq!(second.aggregates[1].1, value("zebra"));
    // Part of a tile: decoded, the same values as the metadata would not give.
    let part = agg(Query::new(&array).add_range("d", 6i64, 7i64));
    assert_eq!(part.aggregates[0].1, value(""));
    assert_eq!(part.aggregates[1].1, value("cherry"));
    assert_eq!(part.stats.tiles_decoded, 1);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn sparse_ranges_layouts_and_aggregates() {
    let root = sparse_array();
    let array = open(&root);
    let strings = |f: &FieldData| -> Vec<String> {
        (0..f.cell_count as usize)
            .map(|i| String::from_utf8(f.cell(i).to_vec()).unwrap())
            .collect()
    };
    // Overlapping ranges on x: row-major repeats cells per range, unordered does not.
    let q = |layout| {
        Query::new(&array)
            .fields(&["t"])
            .add_range("x", 1, 2)
            .add_range("x", 2, 7)
            .add_range("s", "a", "c")
            .layout(layout)
            .submit()
            .unwrap()
    };
    assert_eq!(
        strings(&q(QueryLayout::RowMajor).fields[0]),
        ["one", "two", "two", "four"]
    );
    assert_eq!(strings(&q(QueryLayout::Unordered).fields[0]).len(), 3);
    let col = Query::new(&array)
        .fields(&["s"])
        .layout(QueryLayout::ColMajor)
        .submit()
        .unwrap();
    assert_eq!(strings(&col.fields[0]), ["a", "b", "c", "q", "zz"]);
    let e = Query::new(&array)
        .add_range("x", 1, 1)
        .add_range("x", 3, 3)
        .layout(QueryLayout::GlobalOrder)
        .submit()
        .unwrap_err();
    assert!(e.message().contains("global order"), "{e}");
    // Aggregates: the whole array from metadata; a string range decodes the tile.
    let agg = |q: Query<'_>| {
        q.aggregate(Aggregate::count())
            .aggregate(Aggregate::of(AggregateOp::Sum, "v"))
            .aggregate(Aggregate::of(AggregateOp::NullCount, "v"))
            .aggregate(Aggregate::of(AggregateOp::Max, "t"))
            .submit()
            .unwrap()
    };
    let whole = agg(Query::new(&array));
    assert_eq!(whole.aggregates[0].1, AggregateValue::Count(5));
    assert_eq!(whole.aggregates[1].1, AggregateValue::Int(120));
    assert_eq!(whole.aggregates[2].1, AggregateValue::Count(1));
    assert_eq!(
        whole.aggregates[3].1,
        AggregateValue::Value {
            datatype: crate::Datatype::StringAscii,
            bytes: Some(b"two".to_vec())
        }
    );
    assert_eq!(whole.stats.tiles_from_metadata, 1);
    let part = agg(Query::new(&array).add_range("s", "a", "b"));
    assert_eq!(part.aggregates[0].1, AggregateValue::Count(2));
    assert_eq!(part.aggregates[1].1, AggregateValue::Int(30));
    assert_eq!(part.stats.tiles_decoded, 1);
    let e = Query::new(&array)
        .aggregate(Aggregate::of(AggregateOp::Sum, "t"))
        .submit()
        .unwrap_err();
    assert!(e.message().contains("not defined on strings"), "{e}");
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn batches_never_split_cells() {
    let root = sparse_array();
    let array = open(&root);
    // Each cell of t costs 8 offset bytes plus its text: batches of at most 20 bytes.
    let mut got = Vec::new();
    let mut batches = 0;
    let mut b = Query::new(&array)
        .fields(&["t"])
        .submit_batches(20)
        .unwrap();
    while let Some(batch) = b.next_batch().unwrap() {
        batches += 1;
        let f = &batch.fields[0];
        let cost: usize = (0..f.cell_count as usize)
            .map(|i| 8 + f.cell(i).len())
            .sum();
        assert!(cost <= 20 && f.cell_count > 0);
        for i in 0..f.cell_count as usize {
            got.push(String::from_utf8(f.cell(i).to_vec()).unwrap());
        }
        assert_eq!(batch.complete, got.len() == 5);
    }
    assert!(batches >= 3, "{batches} batches");
    assert_eq!(got.len(), 5);
    let e = Query::new(&array)
        .fields(&["t"])
        .submit_batches(9)
        .unwrap()
        .next_batch()
        .unwrap_err();
    assert!(matches!(e, Error::BufferTooSmall { .. }), "{e}");
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn dense_batches_come_slab_by_slab_in_order() {
    let root = dense_array();
    let array = open(&root);
    for layout in [QueryLayout::RowMajor, QueryLayout::ColMajor] {
        let q = || {
            Query::new(&array)
                .fields(&["a", "y"])
                .add_range("x", 5, 6)
                .add_range("x", 1, 3)
                .add_range("y", 2, 4)
                .layout(layout)
        };
        let whole = q().submit().unwrap().fields;
        // 8 bytes a cell: 24 bytes are three cells, less than one row or column.
        let mut a = Vec::new();
        let mut y = Vec::new();
        let mut batches = q().submit_batches(24).unwrap();
        let mut count = 0;
        while let Some(b) = batches.next_batch().unwrap() {
            count += 1;
            assert!(b.fields[0].cell_count <= 3 && b.fields[0].cell_count > 0);
            a.extend(as_i32s(&b.fields[0]));
            y.extend(as_i32s(&b.fields[1]));
            assert_eq!(b.complete, a.len() == 15, "{layout:?}");
        }
        assert!(batches.next_batch().unwrap().is_none());
        assert_eq!(a, as_i32s(&whole[0]), "{layout:?}");
        assert_eq!(y, as_i32s(&whole[1]), "{layout:?}");
        // Row-major slabs are rows of 3 cells (one batch each); col-major slabs are columns
        // of 5 cells (3 + 2): batches do not span slabs.
        let want = if layout == QueryLayout::RowMajor {
            5
        } else {
            6
        };
        assert_eq!(count, want, "{layout:?}");
    }
    std::fs::remove_dir_all(root).unwrap();
}

/// A sparse 1-D array x in 1..=8 (capacity 2: four tiles) with a = 10*x and a nullable
/// string s ("s<x>", null for odd x).
fn sparse_tiles_array() -> PathBuf {
    let root = scratch("sparse_tiles");
    let schema = ArraySchema::from_json(
        r#"{"sparse":true,"capacity":2,
            "dimensions":[{"name":"x","type":"INT32","domain":[1,8],"tile":8}],
            "attributes":[{"name":"a","type":"INT32"},
                          {"name":"s","type":"STRING_ASCII","cell_val_num":"var","nullable":true}]}"#,
    )
    .unwrap();
    create(root.to_str().unwrap(), &schema, None, &StorageConfig::new()).unwrap();
    let mut w = Writer::open(root.to_str().unwrap(), None, Some(1), &StorageConfig::new()).unwrap();
    w.set_layout(WriteLayout::Unordered).unwrap();
    let xs: Vec<i32> = (1..=8).collect();
    w.set_data("x", &i32s(&xs)).unwrap();
    w.set_data("a", &i32s(&xs.iter().map(|x| 10 * x).collect::<Vec<_>>()))
        .unwrap();
    let strs: Vec<String> = xs.iter().map(|x| format!("s{x}")).collect();
    let refs: Vec<&str> = strs.iter().map(String::as_str).collect();
    let (d, o) = var(&refs);
    w.set_data("s", &d).unwrap();
    w.set_offsets("s", &o).unwrap();
    let valid: Vec<u8> = xs.iter().map(|x| u8::from(x % 2 == 0)).collect();
    w.set_validity("s", &valid).unwrap();
    w.submit().unwrap();
    w.finalize().unwrap();
    root
}

#[test]
fn sparse_conditions_drop_cells_and_prune_tiles() {
    let root = sparse_tiles_array();
    let array = open(&root);
    let cond = QueryCondition::parse(&array, "a >= 50 or x == 2").unwrap();
    for layout in [QueryLayout::GlobalOrder, QueryLayout::RowMajor] {
        let r = Query::new(&array)
            .fields(&["x", "a"])
            .layout(layout)
            .condition(Some(&cond))
            .submit()
            .unwrap();
        assert_eq!(as_i32s(&r.fields[0]), [2, 5, 6, 7, 8]);
        assert_eq!(as_i32s(&r.fields[1]), [20, 50, 60, 70, 80]);
        // Tile [3, 4] cannot hold (a <= 40, x in [3, 4]); tile [1, 2] may (x == 2).
        assert_eq!(r.stats.tiles_pruned, 1);
        assert_eq!(r.stats.tiles_decoded, 3);
        assert!(r.stats.bytes_decoded > 0);
    }
    // Ranges and a null test: s != None passes even x; x in [3, 7] leaves 4 and 6.
    let cond = QueryCondition::parse(&array, "s != None and a < 65").unwrap();
    let r = Query::new(&array)
        .fields(&["x", "s"])
        .add_range("x", 3i32, 7i32)
        .condition(Some(&cond))
        .submit()
        .unwrap();
    assert_eq!(as_i32s(&r.fields[0]), [4, 6]);
    assert_eq!(r.fields[1].data, b"s4s6");
    assert_eq!(r.stats.tiles_pruned, 1, "tile [7, 8] has a >= 70");
    // Aggregates over the passing cells, pruned tiles skipped.
    let cond = QueryCondition::parse(&array, "a > 45").unwrap();
    let r = Query::new(&array)
        .aggregate(Aggregate::count())
        .aggregate(Aggregate::of(AggregateOp::Sum, "a"))
        .aggregate(Aggregate::of(AggregateOp::NullCount, "s"))
        .condition(Some(&cond))
        .submit()
        .unwrap();
    assert_eq!(r.aggregates[0].1, AggregateValue::Count(4));
    assert_eq!(r.aggregates[1].1, AggregateValue::Int(260));
    assert_eq!(r.aggregates[2].1, AggregateValue::Count(2));
    assert_eq!(r.stats.tiles_pruned, 2);
    // A condition no tile can hold: nothing decoded, typed empty fields.
    let cond = QueryCondition::parse(&array, "a > 1000").unwrap();
    let r = Query::new(&array)
        .fields(&["s"])
        .condition(Some(&cond))
        .submit()
        .unwrap();
    assert_eq!(r.fields[0].cell_count, 0);
    assert_eq!(r.fields[0].offsets.as_deref(), Some(&[][..]));
    assert_eq!((r.stats.tiles_pruned, r.stats.tiles_decoded), (4, 0));
    // Bad text is refused with the column.
    let e = QueryCondition::parse(&array, "a <")
        .unwrap_err()
        .to_string();
    assert!(e.contains("column"), "{e}");
    let e = QueryCondition::parse(&array, "nope == 1")
        .unwrap_err()
        .to_string();
    assert!(e.contains("nope"), "{e}");
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn dense_conditions_fill_failing_cells_and_prune_aggregate_tiles() {
    let root = dense_array();
    let array = open(&root);
    let cond = QueryCondition::parse(&array, "a > 40 and a != 52").unwrap();
    let r = Query::new(&array)
        .fields(&["a"])
        .add_range("x", 3i32, 5i32)
        .add_range("y", 2i32, 2i32)
        .condition(Some(&cond))
        .submit()
        .unwrap();
    assert_eq!(as_i32s(&r.fields[0]), [i32::MIN, 42, i32::MIN]);
    // Rows 1..=3 (a <= 34) cannot hold: two space tiles pruned; rows 4..=6 decoded.
    let r = Query::new(&array)
        .aggregate(Aggregate::count())
        .aggregate(Aggregate::of(AggregateOp::Sum, "a"))
        .condition(Some(&cond))
        .submit()
        .unwrap();
    assert_eq!(
        r.aggregates[0].1,
        AggregateValue::Count(24),
        "a dense count counts every cell"
    );
    let want: i64 = (4..=6)
        .flat_map(|x| (1..=4).map(move |y| 10 * x + y))
        .filter(|a| *a != 52)
        .sum();
    assert_eq!(r.aggregates[1].1, AggregateValue::Int(want));
    assert_eq!(r.stats.tiles_pruned, 2);
    // Where the condition holds for every cell of a tile, its metadata answers.
    let cond = QueryCondition::parse(&array, "a > 40").unwrap();
    let r = Query::new(&array)
        .aggregate(Aggregate::of(AggregateOp::Sum, "a"))
        .condition(Some(&cond))
        .submit()
        .unwrap();
    assert_eq!(r.stats.tiles_pruned, 2);
    assert_eq!(r.stats.tiles_from_metadata, 2);
    assert_eq!(r.stats.tiles_decoded, 0);
    std::fs::remove_dir_all(root).unwrap();
}

/// Per field, each cell's bytes and validity byte.
type CellsOf = Vec<Vec<(Vec<u8>, u8)>>;

/// Reads every batch of `batches` through buffers of the given sizes (data, offsets,
/// validity per field; 0: no buffer) and returns the cells per field as (bytes, valid).
fn drain_into(batches: &mut Batches<'_>, sizes: &[(usize, usize, usize)]) -> (CellsOf, usize) {
    let mut out = vec![Vec::new(); sizes.len()];
    let mut rounds = 0;
    loop {
        let mut store: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> = sizes
            .iter()
            .map(|&(d, o, v)| (vec![0xAA; d], vec![0xAA; o], vec![0xAA; v]))
            .collect();
        let mut bufs: Vec<BatchBuffers<'_>> = store
            .iter_mut()
            .zip(sizes)
            .map(|((d, o, v), &(_, os, vs))| BatchBuffers {
                data: d,
                offsets: (os > 0).then_some(o.as_mut_slice()),
                validity: (vs > 0).then_some(v.as_mut_slice()),
            })
            .collect();
        let filled = batches.next_into(&mut bufs).unwrap();
        rounds += 1;
        assert_eq!(filled.complete, batches.is_complete());
        for (k, ((d, o, v), sz)) in store.iter().zip(&filled.sizes).enumerate() {
            let n = filled.cells as usize;
            assert!(sz.data as usize <= d.len());
            let offs: Vec<u64> = o[..sz.offsets as usize]
                .chunks(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            let cs = if offs.is_empty() {
                sz.data as usize / n.max(1)
            } else {
                0
            };
            for i in 0..n {
                let bytes = if offs.is_empty() {
                    d[i * cs..(i + 1) * cs].to_vec()
                } else {
                    let end = offs.get(i + 1).map_or(sz.data as usize, |e| *e as usize);
                    d[offs[i] as usize..end].to_vec()
                };
                let valid = if sz.validity > 0 { v[i] } else { 1 };
                out[k].push((bytes, valid));
            }
        }
        if filled.complete {
            break;
        }
        assert!(filled.cells > 0, "an incomplete batch without cells");
    }
    (out, rounds)
}

/// The cells of a whole result per field, as [`drain_into`] returns them.
fn cells_of(fields: &[FieldData]) -> CellsOf {
    fields
        .iter()
        .map(|f| {
            (0..f.cell_count as usize)
                .map(|i| (f.cell(i).to_vec(), f.validity.as_ref().map_or(1, |v| v[i])))
                .collect()
        })
        .collect()
}

#[test]
fn batches_into_caller_buffers_continue_where_they_stopped() {
    let root = sparse_tiles_array();
    let array = open(&root);
    let q = || Query::new(&array).fields(&["x", "s", "a"]);
    let whole = cells_of(&q().submit().unwrap().fields);
    // Room for 3 x, 2 s offsets, 5 bytes of s text ("s2" "s4"... 2 bytes each), 3 validity.
    let sizes = [(12, 0, 0), (5, 16, 3), (400, 0, 0)];
    let mut b = q().submit_batches(1 << 20).unwrap();
    assert_eq!(b.field_count(), 3);
    let (got, rounds) = drain_into(&mut b, &sizes);
    assert_eq!(got, whole);
    assert_eq!(rounds, 4, "8 cells, 2 a batch");
    // Complete: further calls write nothing.
    let mut d = [0u8; 16];
    let mut tiny = [0u8; 1];
    let mut o = [0u8; 16];
    let mut v = [0u8; 4];
    let mut d2 = [0u8; 16];
    let mut d3 = [0u8; 16];
    let mut bufs = [
        BatchBuffers {
            data: &mut d2,
            offsets: None,
            validity: None,
        },
        BatchBuffers {
            data: &mut d,
            offsets: Some(&mut o),
            validity: Some(&mut v),
        },
        BatchBuffers {
            data: &mut d3,
            offsets: None,
            validity: None,
        },
    ];
    let f = b.next_into(&mut bufs).unwrap();
    assert!(f.complete && f.cells == 0);
    // A cell over its buffer: BufferTooSmall, nothing consumed, a retry with room works.
    let mut b = q().submit_batches(1 << 20).unwrap();
    let full = std::mem::replace(&mut bufs[1].data, &mut tiny);
    let e = b.next_into(&mut bufs).unwrap_err();
    assert!(matches!(e, Error::BufferTooSmall { needed: 2, .. }), "{e}");
    assert!(e.message().contains("'s'"), "{e}");
    bufs[1].data = full;
    let f = b.next_into(&mut bufs).unwrap();
    assert_eq!((f.cells, f.complete), (2, false));
    assert_eq!(f.sizes[1].offsets, 16);
    assert_eq!(f.sizes[1].validity, 2);
    // Missing or extra buffers are refused.
    bufs[1].offsets = None;
    let e = b.next_into(&mut bufs).unwrap_err();
    assert!(e.message().contains("offsets"), "{e}");
    let e = b.next_into(&mut bufs[..2]).unwrap_err();
    assert!(e.message().contains("3 fields"), "{e}");
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn dense_batches_into_buffers_span_slabs() {
    let root = dense_array();
    let array = open(&root);
    for layout in [QueryLayout::RowMajor, QueryLayout::ColMajor] {
        let q = || {
            Query::new(&array)
                .fields(&["a", "x"])
                .add_range("x", 5, 6)
                .add_range("x", 1, 3)
                .add_range("y", 2, 4)
                .layout(layout)
        };
        let whole = cells_of(&q().submit().unwrap().fields);
        // Slabs of one row or column (budget 24 bytes); buffers of 4 cells span them.
        let mut b = q().submit_batches(24).unwrap();
        let (got, rounds) = drain_into(&mut b, &[(16, 0, 0), (16, 0, 0)]);
        assert_eq!(got, whole, "{layout:?}");
        assert_eq!(rounds, 4, "{layout:?}: 15 cells, 4 a batch");
    }
    std::fs::remove_dir_all(root).unwrap();
}

/// A sparse 2-D array (x, y in 1..=40, tiles 10x10, capacity 8) written in two fragments
/// that overlap (the second overwrites some cells), a = 1000 * fragment + 40 * x + y.
fn sparse_grid_array() -> PathBuf {
    sparse_grid_array_in("row-major")
}

/// [`sparse_grid_array`] with the given tile order.
fn sparse_grid_array_in(tile_order: &str) -> PathBuf {
    let root = scratch("sparse_grid");
    let schema = ArraySchema::from_json(&format!(
        r#"{{"sparse":true,"capacity":8,"tile_order":"{tile_order}",
            "dimensions":[{{"name":"x","type":"INT32","domain":[1,40],"tile":10}},
                          {{"name":"y","type":"INT32","domain":[1,40],"tile":10}}],
            "attributes":[{{"name":"a","type":"INT64"}}]}}"#
    ))
    .unwrap();
    assert_eq!(schema.tile_order.name(), tile_order);
    create(root.to_str().unwrap(), &schema, None, &StorageConfig::new()).unwrap();
    for (frag, step) in [(1i64, 3i32), (2, 5)] {
        let mut w = Writer::open(
            root.to_str().unwrap(),
            None,
            Some(frag as u64),
            &StorageConfig::new(),
        )
        .unwrap();
        w.set_layout(WriteLayout::Unordered).unwrap();
        let (mut xs, mut ys, mut a) = (Vec::new(), Vec::new(), Vec::new());
        for x in 1..=40 {
            for y in (1 + x % step..=40).step_by(step as usize) {
                xs.push(x);
                ys.push(y);
                a.extend_from_slice(&(1000 * frag + 40 * x as i64 + y as i64).to_le_bytes());
            }
        }
        w.set_data("x", &i32s(&xs)).unwrap();
        w.set_data("y", &i32s(&ys)).unwrap();
        w.set_data("a", &a).unwrap();
        w.submit().unwrap();
        w.finalize().unwrap();
    }
    root
}

#[test]
fn sparse_batches_come_slab_by_slab_in_order() {
    let root = sparse_grid_array();
    let array = open(&root);
    let odd = FnFilter::new(&["a"], |c: &[FieldData]| {
        Ok(c[0]
            .data
            .chunks(8)
            .map(|v| i64::from_le_bytes(v.try_into().unwrap()) % 2 == 1)
            .collect())
    });
    for layout in [QueryLayout::RowMajor, QueryLayout::ColMajor] {
        for cond in [false, true] {
            let q = || {
                Query::new(&array)
                    .fields(&["x", "y", "a"])
                    .add_range("x", 30, 38)
                    .add_range("x", 3, 12)
                    .add_range("x", 10, 14)
                    .add_range("y", 5, 33)
                    .layout(layout)
                    .condition(cond.then_some(&odd as &dyn CellFilter))
            };
            let whole = q().submit().unwrap();
            let want = cells_of(&whole.fields);
            assert!(want[0].len() > 100, "{} cells", want[0].len());
            // A budget of 200 bytes: slabs of a few values of the slowest dimension.
            let mut b = q().submit_batches(200).unwrap();
            let (got, rounds) = drain_into(&mut b, &[(40, 0, 0), (40, 0, 0), (80, 0, 0)]);
            assert_eq!(got, want, "{layout:?} condition {cond}");
            assert!(rounds >= want[0].len() / 10, "{rounds} batches");
            if cond {
                // Slabs decode the tiles they cross, some more than once.
                assert!(b.stats().tiles_decoded >= whole.stats.tiles_decoded);
            }
            // Owned batches agree too.
            let mut b = q().submit_batches(64).unwrap();
            let mut owned = vec![Vec::new(); 3];
            while let Some(batch) = b.next_batch().unwrap() {
                for (o, c) in owned.iter_mut().zip(cells_of(&batch.fields)) {
                    o.extend(c);
                }
            }
            assert_eq!(owned, want, "{layout:?} condition {cond}: owned batches");
        }
    }
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn condition_errors_carry_tiledb_py_messages() {
    let err =
        |array: &Array, text: &str| QueryCondition::parse(array, text).unwrap_err().to_string();
    let sparse = sparse_tiles_array();
    let array = open(&sparse);
    for (text, words) in [
        ("a is 1", "the `is` operator is not supported"),
        ("a is not 1", "the `is not` operator is not supported"),
        (
            "a &&& b",
            "Could not parse the given QueryCondition statement: a &&& b",
        ),
        (
            "a > ",
            "Could not parse the given QueryCondition statement: a > ",
        ),
        (
            "a not in []",
            "At least one value must be provided to the set membership",
        ),
        (
            "a == x",
            "right-hand sides must be constant expressions, not variables",
        ),
    ] {
        let e = err(&array, text);
        assert!(e.contains(words), "{text}: {e}");
        assert!(e.contains("column"), "{text}: {e}");
    }
    std::fs::remove_dir_all(sparse).unwrap();
    let dense = dense_array();
    let array = open(&dense);
    let e = err(&array, "x < 3");
    assert!(
        e.contains("Cannot apply query condition to dimensions on dense arrays"),
        "{e}"
    );
    assert!(e.contains("'x'"), "{e}");
    std::fs::remove_dir_all(dense).unwrap();
}

#[test]
fn sparse_global_and_unordered_batches_come_tile_by_tile() {
    // Row-major tile order (x first) and col-major tile order (y first), two overlapping
    // fragments: batches of a small budget equal the whole read, slab after slab.
    for tile_order in ["row-major", "col-major"] {
        let root = sparse_grid_array_in(tile_order);
        let array = open(&root);
        for layout in [QueryLayout::GlobalOrder, QueryLayout::Unordered] {
            for ranged in [false, true] {
                let q = || {
                    let q = Query::new(&array).fields(&["x", "y", "a"]).layout(layout);
                    if ranged {
                        // Overlapping ranges: one range once merged (global order).
                        q.add_range("x", 7, 25)
                            .add_range("x", 20, 33)
                            .add_range("y", 4, 36)
                    } else {
                        q
                    }
                };
                let whole = q().submit().unwrap();
                let want = cells_of(&whole.fields);
                assert!(want[0].len() > 200, "{} cells", want[0].len());
                let mut b = q().submit_batches(200).unwrap();
                let (got, rounds) = drain_into(&mut b, &[(40, 0, 0), (40, 0, 0), (80, 0, 0)]);
                assert_eq!(got, want, "{tile_order} {layout:?} ranged {ranged}");
                assert!(rounds >= want[0].len() / 10, "{rounds} batches");
                // Computed slab by slab: the first batch held one slab, not the whole read.
                let mut b = q().submit_batches(200).unwrap();
                let first = b.next_batch().unwrap().unwrap();
                assert!(!first.complete);
                let mut owned = cells_of(&first.fields);
                assert!(owned[0].len() < want[0].len() / 2);
                while let Some(batch) = b.next_batch().unwrap() {
                    for (o, c) in owned.iter_mut().zip(cells_of(&batch.fields)) {
                        o.extend(c);
                    }
                }
                assert_eq!(owned, want, "{tile_order} {layout:?}: owned batches");
            }
        }
        drop(array);
        std::fs::remove_dir_all(root).unwrap();
    }
}

#[test]
fn dense_global_order_batches_come_tile_by_tile() {
    let root = dense_array();
    let array = open(&root);
    for ranged in [false, true] {
        let q = || {
            let q = Query::new(&array)
                .fields(&["a", "x", "y"])
                .layout(QueryLayout::GlobalOrder);
            if ranged {
                q.add_range("x", 2, 4)
                    .add_range("x", 3, 6)
                    .add_range("y", 2, 3)
            } else {
                q
            }
        };
        let whole = cells_of(&q().submit().unwrap().fields);
        // 12 bytes a cell: a budget of 24 bytes still computes one tile row at a time.
        let mut b = q().submit_batches(24).unwrap();
        let (got, rounds) = drain_into(&mut b, &[(8, 0, 0), (8, 0, 0), (8, 0, 0)]);
        assert_eq!(got, whole, "ranged {ranged}");
        assert_eq!(rounds, whole[0].len().div_ceil(2), "ranged {ranged}");
        let mut b = q().submit_batches(24).unwrap();
        let mut owned = vec![Vec::new(); 3];
        while let Some(batch) = b.next_batch().unwrap() {
            for (o, c) in owned.iter_mut().zip(cells_of(&batch.fields)) {
                o.extend(c);
            }
        }
        assert_eq!(owned, whole, "ranged {ranged}: owned batches");
    }
    std::fs::remove_dir_all(root).unwrap();
}

/// A sparse 1-D array whose tiles have many filter chunks: 250 000 cells (x = 3i, two tiles
/// of capacity 200 000), `a` INT64 = 7i - 5 (zstd: a tile of 25 chunks), `b` nullable
/// FLOAT64 = i / 2 valid where i % 3 != 0 (validity tiles of 4 chunks), `s` var strings.
fn many_chunks_array() -> PathBuf {
    let root = scratch("many_chunks");
    let schema = ArraySchema::from_json(
        r#"{"sparse":true,"capacity":200000,
            "dimensions":[{"name":"x","type":"INT64","domain":[0,999999],"tile":1000000,
                           "filters":"zstd"}],
            "attributes":[{"name":"a","type":"INT64","filters":"zstd"},
                          {"name":"b","type":"FLOAT64","nullable":true,
                           "filters":"byteshuffle,checksum_md5,lz4"},
                          {"name":"s","type":"STRING_ASCII","cell_val_num":"var"}]}"#,
    )
    .unwrap();
    create(root.to_str().unwrap(), &schema, None, &StorageConfig::new()).unwrap();
    let mut w = Writer::open(root.to_str().unwrap(), None, Some(1), &StorageConfig::new()).unwrap();
    w.set_layout(WriteLayout::Unordered).unwrap();
    let n = 250_000i64;
    let le = |v: Vec<i64>| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    w.set_data("x", &le((0..n).map(|i| 3 * i).collect()))
        .unwrap();
    w.set_data("a", &le((0..n).map(|i| 7 * i - 5).collect()))
        .unwrap();
    let b: Vec<u8> = (0..n)
        .flat_map(|i| (i as f64 / 2.0).to_le_bytes())
        .collect();
    w.set_data("b", &b).unwrap();
    let valid: Vec<u8> = (0..n).map(|i| u8::from(i % 3 != 0)).collect();
    w.set_validity("b", &valid).unwrap();
    let strs: Vec<String> = (0..n).map(|i| format!("s{}", i % 1000)).collect();
    let refs: Vec<&str> = strs.iter().map(String::as_str).collect();
    let (d, o) = var(&refs);
    w.set_data("s", &d).unwrap();
    w.set_offsets("s", &o).unwrap();
    w.submit().unwrap();
    w.finalize().unwrap();
    root
}

#[test]
fn partial_tiles_decode_only_the_chunks_of_selected_cells() {
    let root = many_chunks_array();
    let mut array = open(&root);
    let as_i64 = |f: &FieldData| -> Vec<i64> {
        f.data
            .chunks(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    // Range sets on x (cell i has x = 3i): narrow ranges far apart (most chunks skipped),
    // ranges across chunk and tile boundaries, overlapping ranges, one cell at each end.
    let sets: Vec<Vec<(i64, i64)>> = vec![
        vec![(30, 60)],
        vec![(0, 0), (749_997, 749_997)],
        vec![(3 * 8190, 3 * 8200), (3 * 199_990, 3 * 200_010)],
        vec![(300_000, 300_300), (300_150, 301_000), (600_000, 600_002)],
        vec![(3 * 65_536, 3 * 65_536 + 2), (3 * 131_071, 3 * 131_073)],
    ];
    for threads in [1, 2] {
        array.set_threads(threads);
        for ranges in &sets {
            // The expected cells, each once (unordered) and in x order (row-major): the
            // ranges may overlap, and a row-major result repeats a cell per range holding it.
            let picked: Vec<i64> = (0..250_000i64)
                .filter(|i| ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&(3 * i))))
                .collect();
            let times = |i: i64| {
                ranges
                    .iter()
                    .filter(|&&(lo, hi)| (lo..=hi).contains(&(3 * i)))
                    .count()
            };
            for layout in [QueryLayout::Unordered, QueryLayout::RowMajor] {
                let mut q = Query::new(&array)
                    .fields(&["a", "b", "s", "x"])
                    .layout(layout);
                for &(lo, hi) in ranges {
                    q = q.add_range("x", lo, hi);
                }
                let r = q.submit().unwrap();
                let cells: Vec<i64> = match layout {
                    QueryLayout::RowMajor => picked
                        .iter()
                        .flat_map(|&i| std::iter::repeat_n(i, times(i)))
                        .collect(),
                    _ => picked.clone(),
                };
                let what = format!("{ranges:?} {layout:?} threads {threads}");
                assert_eq!(
                    as_i64(&r.fields[0]),
                    cells.iter().map(|i| 7 * i - 5).collect::<Vec<_>>(),
                    "{what}"
                );
                let b: Vec<f64> = r.fields[1]
                    .data
                    .chunks(8)
                    .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                    .collect();
                let want_valid: Vec<u8> = cells.iter().map(|i| u8::from(i % 3 != 0)).collect();
                assert_eq!(
                    r.fields[1].validity.as_deref(),
                    Some(&want_valid[..]),
                    "{what}"
                );
                for (k, i) in cells.iter().enumerate() {
                    if i % 3 != 0 {
                        assert_eq!(b[k], *i as f64 / 2.0, "{what} cell {i}");
                    }
                }
                let strs: Vec<String> = cells.iter().map(|i| format!("s{}", i % 1000)).collect();
                assert_eq!(r.fields[2].data, strs.concat().into_bytes(), "{what}");
                assert_eq!(
                    as_i64(&r.fields[3]),
                    cells.iter().map(|i| 3 * i).collect::<Vec<_>>(),
                    "{what}"
                );
            }
            // Aggregates over the same ranges read the same cells.
            let mut q = Query::new(&array)
                .aggregate(Aggregate::count())
                .aggregate(Aggregate::of(AggregateOp::Sum, "a"))
                .aggregate(Aggregate::of(AggregateOp::NullCount, "b"))
                .aggregate(Aggregate::of(AggregateOp::Max, "b"));
            for &(lo, hi) in ranges {
                q = q.add_range("x", lo, hi);
            }
            let r = q.submit().unwrap();
            let what = format!("{ranges:?} aggregates threads {threads}");
            assert_eq!(
                r.aggregates[0].1,
                AggregateValue::Count(picked.len() as u64),
                "{what}"
            );
            assert_eq!(
                r.aggregates[1].1,
                AggregateValue::Int(picked.iter().map(|i| 7 * i - 5).sum()),
                "{what}"
            );
            assert_eq!(
                r.aggregates[2].1,
                AggregateValue::Count(picked.iter().filter(|i| *i % 3 == 0).count() as u64),
                "{what}"
            );
            // NaN when no cell is valid, as TileDB.
            let max = picked
                .iter()
                .filter(|i| *i % 3 != 0)
                .map(|i| *i as f64 / 2.0)
                .reduce(f64::max)
                .unwrap_or(f64::NAN);
            assert_eq!(
                r.aggregates[3].1,
                AggregateValue::Value {
                    datatype: crate::format::datatype::Datatype::Float64,
                    bytes: Some(max.to_le_bytes().to_vec()),
                },
                "{what}"
            );
        }
    }
    // One narrow range (cells 10..=20 of tile 0): x is decoded whole (it selects the cells);
    // of a, b and b's validity only their first chunk.
    let r = Query::new(&array)
        .fields(&["a", "b"])
        .add_range("x", 30i64, 60i64)
        .submit()
        .unwrap();
    assert_eq!(r.fields[0].cell_count, 11);
    assert_eq!(r.stats.bytes_decoded, 200_000 * 8 + 3 * 65_536);
    std::fs::remove_dir_all(root).unwrap();
}
