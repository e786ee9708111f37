//! The Rust side of tests/array/run_global_order_tests.py (not run by `cargo test` itself: the
//! script generates its cases with TileDB-Py, then runs
//! `cargo test --test global_order_oracle -- CASES_DIR`).
//!
//! Each case folder holds a sparse array TileDB-Py wrote from unordered cells (attribute `a` =
//! the input index of each cell), the input coordinates (`d<j>.bin`, and `d<j>.off` with u64
//! offsets for string dimensions) and `case.json`. For each case this checks our ordering
//! (`array::order::global`) and R-tree writer (`array::rtree`) against what TileDB wrote,
//! or, where TileDB refused the write, that we refuse it with TileDB's message.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use tdbfilter::array::order::check::{check_duplicates, check_global_order};
use tdbfilter::array::order::global::{DimCoords, global_order, global_order_as_tiledb};
use tdbfilter::array::rtree::{self, RTree};
use tdbfilter::array::schema::ArraySchema;
use tdbfilter::array::{Array, FieldData, OpenOptions};

/// Coordinates of one dimension, owned.
enum Column {
    Fixed(Vec<u8>),
    Var(Vec<u64>, Vec<u8>),
}

impl Column {
    fn view(&self) -> DimCoords<'_> {
        match self {
            Column::Fixed(b) => DimCoords::Fixed(b),
            Column::Var(o, d) => DimCoords::Var {
                offsets: o,
                data: d,
            },
        }
    }

    fn from_field(f: &FieldData) -> Column {
        match &f.offsets {
            Some(o) => Column::Var(o.clone(), f.data.clone()),
            None => Column::Fixed(f.data.clone()),
        }
    }
}

fn cell(c: &DimCoords<'_>, size: usize, i: usize) -> Vec<u8> {
    match *c {
        DimCoords::Fixed(b) => b[i * size..(i + 1) * size].to_vec(),
        DimCoords::Var { offsets, data } => {
            let end = offsets.get(i + 1).map_or(data.len(), |e| *e as usize);
            data[offsets[i] as usize..end].to_vec()
        }
    }
}

fn cell_of(schema: &ArraySchema, coords: &[DimCoords<'_>], i: usize) -> Vec<Vec<u8>> {
    schema
        .dimensions
        .iter()
        .zip(coords)
        .map(|(d, c)| cell(c, d.coord_size().unwrap_or(0), i))
        .collect()
}

fn load_input(dir: &Path, case: &Value) -> Result<Vec<Column>, String> {
    let read = |name: &str| std::fs::read(dir.join(name)).map_err(|e| format!("{name}: {e}"));
    let mut cols = Vec::new();
    for (j, d) in case["dims"].as_array().unwrap().iter().enumerate() {
        let data = read(&format!("d{j}.bin"))?;
        if d["var"].as_bool().unwrap() {
            let off = read(&format!("d{j}.off"))?;
            let offsets = off
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            cols.push(Column::Var(offsets, data));
        } else {
            cols.push(Column::Fixed(data));
        }
    }
    Ok(cols)
}

/// TileDB's message without its `[TileDB::...] Error: ` prefix (and the `Dimension: ` the
/// dimension errors repeat).
fn strip_prefix(msg: &str) -> &str {
    let rest = msg.split_once("] Error: ").map_or(msg, |(_, r)| r);
    rest.strip_prefix("Dimension: ").unwrap_or(rest)
}

/// Checks one case; returns labels to count.
fn check_case(dir: &Path) -> Result<Vec<String>, String> {
    let case: Value = serde_json::from_slice(
        &std::fs::read(dir.join("case.json")).map_err(|e| format!("case.json: {e}"))?,
    )
    .map_err(|e| format!("case.json: {e}"))?;
    let mode = case["mode"].as_str().unwrap().to_string();
    let array_path = dir.join("array");
    let array = Array::open(array_path.to_str().unwrap(), &OpenOptions::default())
        .map_err(|e| format!("open: {e}"))?;
    let schema = array.schema();
    let input = load_input(dir, &case)?;
    let coords: Vec<DimCoords<'_>> = input.iter().map(Column::view).collect();
    let n = case["cells"].as_u64().unwrap() as usize;
    let mut labels = vec![format!("mode {mode}")];

    if let Some(expected) = case["error"].as_str() {
        let ours =
            global_order(schema, &coords).and_then(|perm| check_duplicates(schema, &coords, &perm));
        return match ours {
            Ok(()) => Err(format!(
                "TileDB refused the write ({expected}), we accept it"
            )),
            Err(e) if e.message() == strip_prefix(expected) => {
                labels.push("error messages equal".into());
                Ok(labels)
            }
            Err(e) => Err(format!(
                "TileDB says {:?}, we say {:?}",
                strip_prefix(expected),
                e.message()
            )),
        };
    }

    // Our order of the input.
    let perm = global_order(schema, &coords).map_err(|e| format!("global_order: {e}"))?;
    check_duplicates(schema, &coords, &perm).map_err(|e| format!("check_duplicates: {e}"))?;

    // TileDB's stored order.
    if array.fragments().len() != 1 {
        return Err(format!("{} fragments, expected 1", array.fragments().len()));
    }
    let mut names: Vec<&str> = schema.dimensions.iter().map(|d| d.name.as_str()).collect();
    names.push("a");
    let fields = array.read(&names, None).map_err(|e| format!("read: {e}"))?;
    let stored: Vec<Column> = fields[..schema.dimensions.len()]
        .iter()
        .map(Column::from_field)
        .collect();
    let stored_coords: Vec<DimCoords<'_>> = stored.iter().map(Column::view).collect();
    let a: Vec<u64> = fields[schema.dimensions.len()]
        .data
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    if a.len() != n {
        return Err(format!("TileDB stored {} cells of {n}", a.len()));
    }
    if mode == "dups" {
        for k in 0..n {
            let (ours, theirs) = (
                cell_of(schema, &coords, perm[k] as usize),
                cell_of(schema, &stored_coords, k),
            );
            if ours != theirs {
                return Err(format!(
                    "cell {k}: we put {ours:?} (input {}), TileDB {theirs:?}",
                    perm[k]
                ));
            }
        }
        labels.push("coordinate sequences equal (duplicates)".into());
        if perm != a {
            labels.push("duplicates: TileDB's order differs from the stable one".into());
        }
    } else {
        if let Some(k) = (0..n).find(|&k| perm[k] != a[k]) {
            return Err(format!(
                "position {k}: we put input cell {} {:?}, TileDB input cell {} {:?}",
                perm[k],
                cell_of(schema, &coords, perm[k] as usize),
                a[k],
                cell_of(schema, &coords, a[k] as usize)
            ));
        }
        labels.push("permutations equal".into());
    }
    // TileDB's exact order, equal cells included.
    let concurrency = case["concurrency"].as_u64().unwrap() as usize;
    let exact = global_order_as_tiledb(schema, &coords, concurrency)
        .map_err(|e| format!("global_order_as_tiledb: {e}"))?;
    if let Some(k) = (0..n).find(|&k| exact[k] != a[k]) {
        return Err(format!(
            "TileDB's order at concurrency {concurrency}: position {k}: we put input cell {}, \
             TileDB input cell {}",
            exact[k], a[k]
        ));
    }
    labels.push(format!("permutations equal to TileDB's sort ({mode})"));
    check_global_order(schema, &stored_coords, None)
        .map_err(|e| format!("TileDB's stored order fails our global-order check: {e}"))?;

    // The R-tree and the non-empty domain.
    let mbrs = rtree::tile_mbrs(schema, &stored_coords, n, schema.capacity)
        .map_err(|e| format!("tile_mbrs: {e}"))?;
    let tree = RTree::build(schema, mbrs.clone()).map_err(|e| format!("RTree::build: {e}"))?;
    let frag = &array.fragments()[0];
    let (_, off) = frag
        .meta
        .generic_tile_offsets()
        .into_iter()
        .find(|(l, _)| l == "R-tree")
        .ok_or("no R-tree offset")?;
    let theirs = frag
        .meta
        .decode_generic_tile(off, None)
        .map_err(|e| format!("R-tree tile: {e}"))?;
    let ours = tree.serialize();
    if ours != theirs {
        let parsed = RTree::parse(&theirs, schema).map_err(|e| format!("parse: {e}"))?;
        return Err(format!(
            "R-tree bytes differ ({} vs TileDB's {}); levels ours {:?}, TileDB {:?}",
            ours.len(),
            theirs.len(),
            tree.levels.iter().map(Vec::len).collect::<Vec<_>>(),
            parsed.levels.iter().map(Vec::len).collect::<Vec<_>>()
        ));
    }
    labels.push(format!("R-tree bytes equal ({} levels)", tree.levels.len()));
    if rtree::union(schema, &mbrs) != frag.meta.non_empty_domain {
        return Err(format!(
            "non-empty domain: ours {:?}, TileDB {:?}",
            rtree::union(schema, &mbrs),
            frag.meta.non_empty_domain
        ));
    }
    labels.push("non-empty domains equal".into());
    Ok(labels)
}

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!(
            "usage: global_order_oracle CASES_DIR (run by tests/array/run_global_order_tests.py)"
        );
        std::process::exit(2);
    };
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("case.json").exists())
        .collect();
    cases.sort();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = 0;
    for c in &cases {
        match check_case(c) {
            Ok(labels) => {
                for l in labels {
                    *counts.entry(l).or_default() += 1;
                }
            }
            Err(msg) => {
                failures += 1;
                println!("FAIL {}: {msg}", c.display());
            }
        }
    }
    for (k, v) in &counts {
        println!("  {k}: {v}");
    }
    println!("{} cases, {failures} failing", cases.len());
    if cases.is_empty() || failures > 0 {
        std::process::exit(1);
    }
}
