//! The sparse reader's merge of many fragments: cells in global order (TileDB's tile index,
//! then the cell order), equal coordinates de-duplicated to the newest fragment's cell (or
//! all kept, oldest fragment first, when duplicates are allowed); overlapping fragments,
//! fragments written in order without overlap, narrow domains (packed keys) and full int64
//! domains (wide keys), row- and column-major orders. Checked against a reference merge
//! computed here from the written cells; then consolidated (the consolidation's own merge)
//! and read again.

use tdbfilter::array::lifecycle::{self, ConsolidateMode, ConsolidateOptions};
use tdbfilter::array::schema::ArraySchema;
use tdbfilter::array::{Array, OpenOptions, WriteLayout, Writer};
use tdbfilter::storage::StorageConfig;

/// One dimension: (domain low, domain high, tile extent).
type Dim = (i64, i64, i64);

/// A cell: (x, y, a).
type Cell = (i64, i64, i64);

/// A cell's global-order key: tile indices, then coordinates.
type Key = (Vec<i128>, Vec<i64>);

struct Case {
    name: &'static str,
    dims: [Dim; 2],
    order: &'static str,
    dups: bool,
}

fn schema_json(c: &Case) -> String {
    let dim = |n: &str, d: &Dim| {
        format!(
            r#"{{"name": "{n}", "type": "INT64", "domain": [{}, {}], "tile": {}}}"#,
            d.0, d.1, d.2
        )
    };
    format!(
        r#"{{"sparse": true, "capacity": 7, "allows_duplicates": {},
            "tile_order": "{o}", "cell_order": "{o}",
            "dimensions": [{}, {}],
            "attributes": [{{"name": "a", "type": "INT64"}}]}}"#,
        c.dups,
        dim("x", &c.dims[0]),
        dim("y", &c.dims[1]),
        o = c.order
    )
}

/// A small deterministic generator.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// The global-order key of a cell: tile indices, then coordinates, in the layout's order.
fn key(c: &Case, x: i64, y: i64) -> Key {
    let tile = |v: i64, d: &Dim| ((v as i128) - (d.0 as i128)) / (d.2 as i128);
    let (t, v) = (vec![tile(x, &c.dims[0]), tile(y, &c.dims[1])], vec![x, y]);
    if c.order == "col-major" {
        (t.into_iter().rev().collect(), v.into_iter().rev().collect())
    } else {
        (t, v)
    }
}

fn i64s(b: &[u8]) -> Vec<i64> {
    b.chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Writes `frags` (each a list of (x, y, a)) as fragments at timestamps 1, 2, ... and checks
/// the whole read against the reference merge.
fn check(c: &Case, frags: &[Vec<(i64, i64, i64)>]) {
    let dir = std::env::temp_dir().join(format!(
        "tdbf_fragment_merge_{}_{}",
        c.name,
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let uri = dir.to_str().unwrap();
    let config = StorageConfig::new();
    let schema = ArraySchema::from_json(&schema_json(c)).unwrap();
    tdbfilter::array::create(uri, &schema, None, &config).unwrap();
    for (t, cells) in frags.iter().enumerate() {
        let mut w = Writer::open(uri, None, Some(t as u64 + 1), &config).unwrap();
        w.set_layout(WriteLayout::Unordered).unwrap();
        let col = |f: fn(&(i64, i64, i64)) -> i64| -> Vec<u8> {
            cells.iter().flat_map(|c| f(c).to_le_bytes()).collect()
        };
        w.set_data("x", &col(|c| c.0)).unwrap();
        w.set_data("y", &col(|c| c.1)).unwrap();
        w.set_data("a", &col(|c| c.2)).unwrap();
        w.submit().unwrap();
        w.finalize().unwrap();
    }
    // Reference: every cell tagged (key, fragment, position), stably sorted; without
    // duplicates the last of each run of equal coordinates (the newest fragment) stays.
    let mut all: Vec<(Key, usize, Cell)> = Vec::new();
    for (f, cells) in frags.iter().enumerate() {
        for &cell in cells {
            all.push((key(c, cell.0, cell.1), f, cell));
        }
    }
    all.sort_by(|p, q| p.0.cmp(&q.0).then(p.1.cmp(&q.1)));
    let mut want: Vec<(i64, i64, i64)> = Vec::new();
    let mut last: Option<(i64, i64)> = None;
    for (_, _, cell) in all {
        if !c.dups && last == Some((cell.0, cell.1)) {
            *want.last_mut().unwrap() = cell;
        } else {
            want.push(cell);
        }
        last = Some((cell.0, cell.1));
    }
    for threads in [1, 2] {
        let options = OpenOptions {
            threads,
            ..OpenOptions::default()
        };
        let array = Array::open(uri, &options).unwrap();
        let got = array.read(&["x", "y", "a"], None).unwrap();
        let (x, y, a) = (i64s(&got[0].data), i64s(&got[1].data), i64s(&got[2].data));
        let got: Vec<(i64, i64, i64)> = (0..x.len()).map(|i| (x[i], y[i], a[i])).collect();
        assert_eq!(got.len(), want.len(), "{}: cell count", c.name);
        assert!(got == want, "{}: cells differ ({threads} threads)", c.name);
    }
    // The consolidation's merge (its own order keys, streamed tile by tile) must put every
    // version of every cell in the same global order: one fragment, read the same.
    let r =
        lifecycle::consolidate(uri, &ConsolidateOptions::new(ConsolidateMode::Fragments)).unwrap();
    assert_eq!(r.merged.len(), 1, "{}: one consolidation", c.name);
    let array = Array::open(uri, &OpenOptions::default()).unwrap();
    assert_eq!(array.fragments().len(), 1, "{}: consolidated", c.name);
    let got = array.read(&["x", "y", "a"], None).unwrap();
    let (x, y, a) = (i64s(&got[0].data), i64s(&got[1].data), i64s(&got[2].data));
    let got: Vec<(i64, i64, i64)> = (0..x.len()).map(|i| (x[i], y[i], a[i])).collect();
    // Duplicates: the consolidated fragment stores equal coordinates newest first (as
    // TileDB's consolidation does) and a read returns them in that order.
    if c.dups {
        let mut start = 0;
        for i in 1..=want.len() {
            if i == want.len() || (want[i].0, want[i].1) != (want[start].0, want[start].1) {
                want[start..i].reverse();
                start = i;
            }
        }
    }
    assert!(got == want, "{}: consolidated cells differ", c.name);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `n` fragments of `per` random cells each over the dimensions' domains shrunk to `span`
/// values from their low ends (so coordinates repeat across fragments); within one fragment
/// coordinates are distinct.
fn random_fragments(
    c: &Case,
    n: usize,
    per: usize,
    span: i64,
    seed: u64,
) -> Vec<Vec<(i64, i64, i64)>> {
    let mut rng = Lcg(seed);
    let mut a = 0;
    (0..n)
        .map(|_| {
            let mut seen = std::collections::HashSet::new();
            let mut cells = Vec::new();
            while cells.len() < per {
                let x = c.dims[0].0 + rng.below(span as u64) as i64;
                let y = c.dims[1].0 + rng.below(span as u64) as i64;
                if seen.insert((x, y)) {
                    a += 1;
                    cells.push((x, y, a));
                }
            }
            cells
        })
        .collect()
}

#[test]
fn overlapping_fragments_keep_the_newest_cell() {
    // A narrow domain with a negative low end: packed keys.
    let c = Case {
        name: "narrow",
        dims: [(-50, 49, 10), (-7, 92, 25)],
        order: "row-major",
        dups: false,
    };
    let frags = random_fragments(&c, 40, 30, 20, 1);
    check(&c, &frags);
}

#[test]
fn overlapping_fragments_in_column_major_order() {
    let c = Case {
        name: "colmajor",
        dims: [(0, 999, 100), (0, 99, 7)],
        order: "col-major",
        dups: false,
    };
    let frags = random_fragments(&c, 25, 40, 60, 2);
    check(&c, &frags);
}

#[test]
fn full_int64_domains_merge_with_wide_keys() {
    // Words too wide to pack (63-bit coordinate words): the wide-key path, cells near both
    // ends of the domain (negative and positive).
    let (lo, hi) = (-(1i64 << 62), (1i64 << 62) - 1);
    let c = Case {
        name: "wide",
        dims: [(lo, hi, 1 << 58), (lo, hi, 1 << 60)],
        order: "row-major",
        dups: false,
    };
    let mut frags = random_fragments(&c, 10, 20, 30, 3);
    let top = Case {
        name: "wide",
        dims: [(hi - 29, hi, 1), (hi - 29, hi, 1)],
        order: "row-major",
        dups: false,
    };
    for (f, more) in random_fragments(&top, 10, 20, 30, 4)
        .into_iter()
        .enumerate()
    {
        frags[f].extend(more.into_iter().map(|(x, y, a)| (x, y, a + 10_000)));
    }
    check(&c, &frags);
}

#[test]
fn duplicates_allowed_keep_every_cell_oldest_first() {
    let c = Case {
        name: "dups",
        dims: [(1, 64, 8), (1, 64, 8)],
        order: "row-major",
        dups: true,
    };
    let frags = random_fragments(&c, 30, 25, 12, 5);
    check(&c, &frags);
}

#[test]
fn fragments_written_in_order_concatenate() {
    // Row bands, one per fragment, written oldest first: already in global order.
    let c = Case {
        name: "append",
        dims: [(0, 99, 10), (0, 99, 10)],
        order: "row-major",
        dups: false,
    };
    let frags: Vec<Vec<(i64, i64, i64)>> = (0..10)
        .map(|f| {
            (0..10)
                .flat_map(|x| (0..10).map(move |y| (f * 10 + x, y * 3 % 100, f * 100 + x * 10 + y)))
                .collect()
        })
        .collect();
    check(&c, &frags);
}
