//! The array lifecycle (src/array/lifecycle/): the input is a sequence of operations on one
//! sparse array — writes of a few cells, deletes by condition, schema evolution (an attribute
//! added with a fill value), consolidation (fragments with or without purging deleted cells,
//! commits, fragment metadata) and vacuum (each mode) — each at its own, increasing
//! timestamp. After every operation the array is read back and compared with a model: the
//! newest value of each coordinate, hidden when a delete at or after its write matches it,
//! attributes added later read as their fill value. The evolution is stamped up to ten seconds
//! in the future (writers take the newest schema whatever its timestamp, as TileDB's do; a
//! consolidation reads with it too); reads are at the evolution's time when it is later. Every operation here is valid: an error,
//! a panic or a cell that differs from the model is a finding.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use tdbfilter::array::lifecycle::{
    self, ConsolidateMode, ConsolidateOptions, DeleteCellsOptions, EvolveOptions, VacuumMode,
    VacuumOptions,
};
use tdbfilter::array::schema::ArraySchema;
use tdbfilter::array::{self, Array, OpenOptions, WriteLayout, Writer};
use tdbfilter::storage::StorageConfig;

/// The fill value of the attribute `b` added by evolution.
const B_FILL: i32 = -7;

/// One cell of the model: `a`, `b` (when written after `b` was added) and its write time.
#[derive(Clone, Copy, Debug)]
struct Cell {
    a: i32,
    b: Option<i32>,
    written: u64,
}

/// A delete condition, as text for the library and as a predicate for the model.
#[derive(Clone, Copy, Debug)]
enum Cond {
    ALess(i32),
    DEquals(i32),
    BEquals(i32),
    AGreaterOrBNull(i32),
}

impl Cond {
    fn text(self) -> String {
        match self {
            Cond::ALess(k) => format!("a < {k}"),
            Cond::DEquals(k) => format!("d == {k}"),
            Cond::BEquals(k) => format!("b == {k}"),
            Cond::AGreaterOrBNull(k) => format!("a > {k} or b == {B_FILL}"),
        }
    }

    fn matches(self, d: i32, c: &Cell) -> bool {
        let b = c.b.unwrap_or(B_FILL);
        match self {
            Cond::ALess(k) => c.a < k,
            Cond::DEquals(k) => d == k,
            Cond::BEquals(k) => b == k,
            Cond::AGreaterOrBNull(k) => c.a > k || b == B_FILL,
        }
    }
}

struct Input<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Input<'_> {
    fn u8(&mut self) -> Option<u8> {
        let v = self.bytes.get(self.at).copied();
        self.at += 1;
        v
    }

    fn below(&mut self, n: u8) -> u8 {
        self.u8().unwrap_or(0) % n
    }
}

static CASE: AtomicU64 = AtomicU64::new(0);

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as u64
}

fn le(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn ints(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The array's cells at `t`, as (d, a, b) sorted by d.
fn read(uri: &str, t: u64, with_b: bool) -> Vec<(i32, i32, i32)> {
    let a = Array::open(
        uri,
        &OpenOptions {
            timestamp_end: Some(t),
            ..OpenOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("open at {t}: {e}"));
    let names: &[&str] = if with_b {
        &["d", "a", "b"]
    } else {
        &["d", "a"]
    };
    let f = a
        .read(names, None)
        .unwrap_or_else(|e| panic!("read at {t}: {e}"));
    let d = ints(&f[0].data);
    let av = ints(&f[1].data);
    let bv = if with_b {
        ints(&f[2].data)
    } else {
        vec![B_FILL; d.len()]
    };
    let mut cells: Vec<_> = (0..d.len()).map(|i| (d[i], av[i], bv[i])).collect();
    cells.sort();
    cells
}

fn expected(model: &BTreeMap<i32, Cell>) -> Vec<(i32, i32, i32)> {
    model
        .iter()
        .map(|(d, c)| (*d, c.a, c.b.unwrap_or(B_FILL)))
        .collect()
}

fuzz_target!(|bytes: &[u8]| {
    let mut input = Input { bytes, at: 0 };
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "tdbf-fuzz-lifecycle-{}-{}",
        std::process::id(),
        CASE.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let uri = dir.to_str().expect("utf-8 temporary path").to_string();
    let capacity = 2 + input.below(6) as u32;
    let schema = ArraySchema::from_json(&format!(
        r#"{{"sparse": true, "capacity": {capacity},
        "dimensions": [{{"name": "d", "type": "INT32", "domain": [0, 63], "tile": 8}}],
        "attributes": [{{"name": "a", "type": "INT32"}}]}}"#
    ))
    .expect("schema");
    array::create(&uri, &schema, None, &StorageConfig::new()).expect("create");
    // Every operation at its own timestamp, the current time once it is past the previous
    // one's; the evolution alone may be stamped in the future (`b_at`).
    let mut last = now_ms();
    let mut model: BTreeMap<i32, Cell> = BTreeMap::new();
    let mut with_b = false;
    let mut b_at = 0u64;
    let mut step = 0u64;
    while let Some(op) = input.u8() {
        if step == 24 {
            break;
        }
        step += 1;
        let t = loop {
            let now = now_ms();
            if now > last {
                break now;
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        };
        last = t;
        let what = match op % 12 {
            0..=3 => {
                // A write of 1..8 distinct coordinates.
                let n = 1 + input.below(8) as usize;
                let mut cells: BTreeMap<i32, (i32, i32)> = BTreeMap::new();
                for _ in 0..n {
                    let d = input.below(64) as i32;
                    let a = input.below(200) as i32 - 100;
                    let b = input.below(20) as i32 - 10;
                    cells.insert(d, (a, b));
                }
                let mut w = Writer::open(&uri, None, Some(t), &StorageConfig::new())
                    .unwrap_or_else(|e| panic!("writer at {t}: {e}"));
                w.set_layout(WriteLayout::Unordered).expect("layout");
                let ds: Vec<i32> = cells.keys().copied().collect();
                w.set_data("d", &le(&ds)).expect("d");
                w.set_data("a", &le(&cells.values().map(|v| v.0).collect::<Vec<_>>()))
                    .expect("a");
                if with_b {
                    w.set_data("b", &le(&cells.values().map(|v| v.1).collect::<Vec<_>>()))
                        .expect("b");
                }
                w.submit().unwrap_or_else(|e| panic!("write at {t}: {e}"));
                w.finalize()
                    .unwrap_or_else(|e| panic!("finalize at {t}: {e}"));
                for (d, (a, b)) in cells {
                    let b = with_b.then_some(b);
                    model.insert(d, Cell { a, b, written: t });
                }
                format!("write {ds:?}")
            }
            4 | 5 => {
                let k = input.below(64) as i32;
                // A delete's condition is typed by the schema at its timestamp.
                let with_b = with_b && b_at <= t;
                let cond = match input.below(4) {
                    0 => Cond::ALess(k - 32),
                    1 => Cond::DEquals(k),
                    2 if with_b => Cond::BEquals(k % 20 - 10),
                    2 => Cond::ALess(k),
                    _ if with_b => Cond::AGreaterOrBNull(k),
                    _ => Cond::DEquals(k / 2),
                };
                lifecycle::delete_cells(
                    &uri,
                    &cond.text(),
                    Some(t),
                    &DeleteCellsOptions::default(),
                )
                .unwrap_or_else(|e| panic!("delete {cond:?} at {t}: {e}"));
                model.retain(|d, c| !(c.written <= t && cond.matches(*d, c)));
                format!("delete {}", cond.text())
            }
            6 if !with_b => {
                let changes = format!(
                    r#"[{{"add_attribute": {{"name": "b", "type": "INT32", "fill": {B_FILL}}}}}]"#
                );
                let at = t + 50 * input.below(200) as u64;
                let o = EvolveOptions {
                    timestamp: Some(at),
                    ..EvolveOptions::default()
                };
                lifecycle::evolve_json(&uri, &changes, &o)
                    .unwrap_or_else(|e| panic!("evolve at {at}: {e}"));
                with_b = true;
                b_at = at;
                format!("evolve at {at}: add b")
            }
            6..=8 => {
                let mut o = ConsolidateOptions::new(ConsolidateMode::Fragments);
                o.purge_deleted_cells = input.below(2) == 1;
                match lifecycle::consolidate(&uri, &o) {
                    Ok(_) => {}
                    // Purging may leave no cell to write: refused, nothing changed, as TileDB
                    // 2.30 refuses it ("Consolidation read 0 cells, no progress can be made").
                    Err(e)
                        if o.purge_deleted_cells
                            && e.to_string().contains("nothing was submitted") => {}
                    Err(e) => panic!("consolidate (purge {}): {e}", o.purge_deleted_cells),
                }
                format!("consolidate fragments, purge {}", o.purge_deleted_cells)
            }
            9 => {
                let mode = if input.below(2) == 0 {
                    ConsolidateMode::Commits
                } else {
                    ConsolidateMode::FragmentMeta
                };
                lifecycle::consolidate(&uri, &ConsolidateOptions::new(mode))
                    .unwrap_or_else(|e| panic!("consolidate {mode:?}: {e}"));
                format!("consolidate {mode:?}")
            }
            _ => {
                let mode = match input.below(3) {
                    0 => VacuumMode::Fragments,
                    1 => VacuumMode::Commits,
                    _ => VacuumMode::FragmentMeta,
                };
                lifecycle::vacuum(&uri, &VacuumOptions::new(mode))
                    .unwrap_or_else(|e| panic!("vacuum {mode:?}: {e}"));
                format!("vacuum {mode:?}")
            }
        };
        let got = read(&uri, now_ms().max(b_at), with_b);
        assert_eq!(got, expected(&model), "after step {step} ({what})");
    }
    let _ = std::fs::remove_dir_all(&dir);
});
