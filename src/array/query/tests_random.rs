//! Randomized equality of the query engine with a naive reference: seeded random sparse
//! arrays (integer, float and string dimensions; one or two fragments; duplicates or not;
//! several tile capacities and orders) × random multi-range subarrays (overlapping ranges,
//! dimensions without ranges) × random conditions, each answered as unordered and row-major
//! reads and as aggregates, and compared with what the full read by the core reader gives
//! (no query path), filtered by hand.

use super::*;
use crate::array::directory::names;
use crate::array::schema::ArraySchema;
use crate::array::{OpenOptions, WriteLayout, Writer, create};
use crate::format::datatype::Datatype;
use crate::storage::StorageConfig;
use std::cmp::Ordering;
use std::collections::BTreeSet;

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
}

/// A dimension's type in these arrays.
#[derive(Clone, Copy, Debug)]
enum Dim {
    I32,
    I64,
    F64,
    U8,
    Str,
}

impl Dim {
    fn json(self, name: &str, rng: &mut Rng) -> String {
        match self {
            Dim::I32 => format!(
                r#"{{"name":"{name}","type":"INT32","domain":[0,199],"tile":{}}}"#,
                [7, 50, 200][rng.below(3) as usize]
            ),
            Dim::I64 => format!(
                r#"{{"name":"{name}","type":"INT64","domain":[-50,49],"tile":{}}}"#,
                [10, 33, 100][rng.below(3) as usize]
            ),
            Dim::F64 => format!(
                r#"{{"name":"{name}","type":"FLOAT64","domain":[0.0,100.0],"tile":{}}}"#,
                ["12.5", "40.0", "100.0"][rng.below(3) as usize]
            ),
            Dim::U8 => format!(
                r#"{{"name":"{name}","type":"UINT8","domain":[0,40],"tile":{}}}"#,
                [5, 41][rng.below(2) as usize]
            ),
            Dim::Str => format!(r#"{{"name":"{name}","type":"STRING_ASCII"}}"#),
        }
    }

    /// A random coordinate (or range bound).
    fn value(self, rng: &mut Rng) -> Vec<u8> {
        match self {
            Dim::I32 => (rng.int(0, 199) as i32).to_le_bytes().to_vec(),
            Dim::I64 => rng.int(-50, 49).to_le_bytes().to_vec(),
            Dim::F64 => (rng.int(0, 400) as f64 / 4.0).to_le_bytes().to_vec(),
            Dim::U8 => vec![rng.int(0, 40) as u8],
            Dim::Str => format!("k{}", rng.below(40)).into_bytes(),
        }
    }

    fn cmp(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Dim::I32 => i32::from_le_bytes(a.try_into().unwrap())
                .cmp(&i32::from_le_bytes(b.try_into().unwrap())),
            Dim::I64 => i64::from_le_bytes(a.try_into().unwrap())
                .cmp(&i64::from_le_bytes(b.try_into().unwrap())),
            Dim::F64 => f64::from_le_bytes(a.try_into().unwrap())
                .partial_cmp(&f64::from_le_bytes(b.try_into().unwrap()))
                .unwrap(),
            Dim::U8 => a[0].cmp(&b[0]),
            Dim::Str => a.cmp(b),
        }
    }

    fn datatype(self) -> Datatype {
        match self {
            Dim::I32 => Datatype::Int32,
            Dim::I64 => Datatype::Int64,
            Dim::F64 => Datatype::Float64,
            Dim::U8 => Datatype::Uint8,
            Dim::Str => Datatype::StringAscii,
        }
    }
}

const NAMES: [&str; 6] = ["x", "y", "a", "f", "u", "t"];

/// Writes a random sparse array of dimensions `dims` (named x, y) and attributes a (nullable
/// INT32), f (FLOAT64, quarters: sums are exact in any order), u (UINT16), t (var string).
fn random_array(rng: &mut Rng, dims: [Dim; 2], root: &std::path::Path) {
    let dups = rng.below(3) == 0;
    let order = ["row-major", "col-major"][rng.below(2) as usize];
    let schema = ArraySchema::from_json(&format!(
        r#"{{"sparse":true,"allows_duplicates":{dups},"capacity":{},
            "tile_order":"{order}","cell_order":"{}",
            "dimensions":[{},{}],
            "attributes":[{{"name":"a","type":"INT32","nullable":true}},
                          {{"name":"f","type":"FLOAT64"}},
                          {{"name":"u","type":"UINT16"}},
                          {{"name":"t","type":"STRING_ASCII","cell_val_num":"var"}}]}}"#,
        [3, 8, 30, 1000][rng.below(4) as usize],
        ["row-major", "col-major", "hilbert"][rng.below(3) as usize],
        dims[0].json("x", rng),
        dims[1].json("y", rng),
    ))
    .unwrap();
    create(root.to_str().unwrap(), &schema, None, &StorageConfig::new()).unwrap();
    let fragments = 1 + rng.below(2);
    for ts in 1..=fragments {
        let n = rng.below(300) as usize;
        let mut seen = BTreeSet::new();
        let mut cells: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for _ in 0..n {
            let c = (dims[0].value(rng), dims[1].value(rng));
            if dups || seen.insert(c.clone()) {
                cells.push(c);
            }
        }
        let mut w = Writer::open(
            root.to_str().unwrap(),
            None,
            Some(ts),
            &StorageConfig::new(),
        )
        .unwrap();
        w.set_layout(WriteLayout::Unordered).unwrap();
        for (k, name) in ["x", "y"].iter().enumerate() {
            let vals: Vec<&Vec<u8>> = cells
                .iter()
                .map(|c| if k == 0 { &c.0 } else { &c.1 })
                .collect();
            let (mut d, mut o) = (Vec::new(), Vec::new());
            for v in vals {
                o.push(d.len() as u64);
                d.extend_from_slice(v);
            }
            w.set_data(name, &d).unwrap();
            if matches!(dims[k], Dim::Str) {
                w.set_offsets(name, &o).unwrap();
            }
        }
        let m = cells.len();
        let a: Vec<u8> = (0..m)
            .flat_map(|_| (rng.int(-1000, 1000) as i32).to_le_bytes())
            .collect();
        let valid: Vec<u8> = (0..m).map(|_| u8::from(rng.below(5) != 0)).collect();
        let f: Vec<u8> = (0..m)
            .flat_map(|_| (rng.int(-400, 400) as f64 / 4.0).to_le_bytes())
            .collect();
        let u: Vec<u8> = (0..m)
            .flat_map(|_| (rng.below(65536) as u16).to_le_bytes())
            .collect();
        let (mut t, mut to) = (Vec::new(), Vec::new());
        for _ in 0..m {
            to.push(t.len() as u64);
            let len = rng.below(4);
            for _ in 0..len {
                t.push(b'a' + rng.below(5) as u8);
            }
        }
        w.set_data("a", &a).unwrap();
        w.set_validity("a", &valid).unwrap();
        w.set_data("f", &f).unwrap();
        w.set_data("u", &u).unwrap();
        w.set_data("t", &t).unwrap();
        w.set_offsets("t", &to).unwrap();
        w.submit().unwrap();
        w.finalize().unwrap();
    }
}

/// One cell's values: per field its bytes (None: null).
type Row = Vec<Option<Vec<u8>>>;

fn rows(fields: &[FieldData]) -> Vec<Row> {
    let n = fields.first().map_or(0, |f| f.cell_count) as usize;
    (0..n)
        .map(|i| {
            fields
                .iter()
                .map(|f| {
                    let valid = f.validity.as_ref().is_none_or(|v| v[i] != 0);
                    valid.then(|| f.cell(i).to_vec())
                })
                .collect()
        })
        .collect()
}

/// The naive aggregates of the selected `cells` (rows of NAMES), as `Query` labels them.
fn reference_aggregates(dims: [Dim; 2], cells: &[&Row]) -> Vec<(String, String)> {
    let col = |k: usize| -> Vec<Option<&Vec<u8>>> { cells.iter().map(|r| r[k].as_ref()).collect() };
    let mut out = vec![(
        "count".to_string(),
        format!("{:?}", AggregateValue::Count(cells.len() as u64)),
    )];
    let min_max = |k: usize, dt: Datatype, cmp: &dyn Fn(&[u8], &[u8]) -> Ordering| {
        let vals: Vec<&Vec<u8>> = col(k).into_iter().flatten().collect();
        let pick = |want: Ordering| {
            let mut best: Option<&Vec<u8>> = None;
            for v in &vals {
                if best.is_none_or(|b| cmp(v, b) == want) {
                    best = Some(v);
                }
            }
            best.cloned()
                .or_else(|| (dt == Datatype::Float64).then(|| f64::NAN.to_le_bytes().to_vec()))
        };
        [
            AggregateValue::Value {
                datatype: dt,
                bytes: pick(Ordering::Less),
            },
            AggregateValue::Value {
                datatype: dt,
                bytes: pick(Ordering::Greater),
            },
        ]
    };
    let name = |op: &str, f: &str| format!("{op}({f})");
    // a: nullable INT32.
    let a: Vec<i64> = col(2)
        .into_iter()
        .flatten()
        .map(|v| i32::from_le_bytes(v[..].try_into().unwrap()) as i64)
        .collect();
    let sa: i64 = a.iter().sum();
    let (sum_a, mean_a) = if a.is_empty() {
        (AggregateValue::Null, AggregateValue::Null)
    } else {
        (
            AggregateValue::Int(sa),
            AggregateValue::Float(sa as f64 / a.len() as f64),
        )
    };
    out.push((name("sum", "a"), format!("{sum_a:?}")));
    out.push((name("mean", "a"), format!("{mean_a:?}")));
    let nulls = col(2).iter().filter(|v| v.is_none()).count() as u64;
    out.push((
        name("null_count", "a"),
        format!("{:?}", AggregateValue::Count(nulls)),
    ));
    let int_cmp = |x: &[u8], y: &[u8]| Dim::I32.cmp(x, y);
    let [mn, mx] = min_max(2, Datatype::Int32, &int_cmp);
    out.push((name("min", "a"), format!("{mn:?}")));
    out.push((name("max", "a"), format!("{mx:?}")));
    // f: FLOAT64 quarters.
    let f: Vec<f64> = col(3)
        .into_iter()
        .flatten()
        .map(|v| f64::from_le_bytes(v[..].try_into().unwrap()))
        .collect();
    let sf: f64 = f.iter().fold(0.0, |s, v| s + v);
    out.push((name("sum", "f"), format!("{:?}", AggregateValue::Float(sf))));
    let mean_f = if f.is_empty() {
        f64::NAN
    } else {
        sf / f.len() as f64
    };
    out.push((
        name("mean", "f"),
        format!("{:?}", AggregateValue::Float(mean_f)),
    ));
    let f_cmp = |x: &[u8], y: &[u8]| Dim::F64.cmp(x, y);
    let [mn, mx] = min_max(3, Datatype::Float64, &f_cmp);
    out.push((name("min", "f"), format!("{mn:?}")));
    out.push((name("max", "f"), format!("{mx:?}")));
    // u: UINT16.
    let su: u64 = col(4)
        .into_iter()
        .flatten()
        .map(|v| u16::from_le_bytes(v[..].try_into().unwrap()) as u64)
        .sum();
    out.push((name("sum", "u"), format!("{:?}", AggregateValue::UInt(su))));
    let u_cmp = |x: &[u8], y: &[u8]| {
        u16::from_le_bytes(x.try_into().unwrap()).cmp(&u16::from_le_bytes(y.try_into().unwrap()))
    };
    let [mn, mx] = min_max(4, Datatype::Uint16, &u_cmp);
    out.push((name("min", "u"), format!("{mn:?}")));
    out.push((name("max", "u"), format!("{mx:?}")));
    // t: strings; the dimensions.
    let s_cmp = |x: &[u8], y: &[u8]| x.cmp(y);
    let [mn, mx] = min_max(5, Datatype::StringAscii, &s_cmp);
    out.push((name("min", "t"), format!("{mn:?}")));
    out.push((name("max", "t"), format!("{mx:?}")));
    for (k, d) in dims.iter().enumerate() {
        let c = |x: &[u8], y: &[u8]| d.cmp(x, y);
        let [mn, mx] = min_max(k, d.datatype(), &c);
        out.push((name("min", NAMES[k]), format!("{mn:?}")));
        out.push((name("max", NAMES[k]), format!("{mx:?}")));
    }
    out
}

fn aggregates_of(dims: [Dim; 2]) -> Vec<Aggregate> {
    let mut v = vec![Aggregate::count()];
    for (op, f) in [
        (AggregateOp::Sum, "a"),
        (AggregateOp::Mean, "a"),
        (AggregateOp::NullCount, "a"),
        (AggregateOp::Min, "a"),
        (AggregateOp::Max, "a"),
        (AggregateOp::Sum, "f"),
        (AggregateOp::Mean, "f"),
        (AggregateOp::Min, "f"),
        (AggregateOp::Max, "f"),
        (AggregateOp::Sum, "u"),
        (AggregateOp::Min, "u"),
        (AggregateOp::Max, "u"),
        (AggregateOp::Min, "t"),
        (AggregateOp::Max, "t"),
    ] {
        v.push(Aggregate::of(op, f));
    }
    let _ = dims;
    for f in ["x", "y"] {
        v.push(Aggregate::of(AggregateOp::Min, f));
        v.push(Aggregate::of(AggregateOp::Max, f));
    }
    v
}

#[test]
fn random_multi_range_queries_equal_the_naive_reference() {
    let mut rng = Rng(0x5eed_2028);
    let kinds = [
        [Dim::I32, Dim::I64],
        [Dim::I32, Dim::Str],
        [Dim::F64, Dim::U8],
        [Dim::U8, Dim::I32],
    ];
    let mut checked = 0u64;
    let mut selected_total = 0u64;
    for round in 0..32 {
        let dims = kinds[round % kinds.len()];
        let root = std::env::temp_dir().join(format!(
            "tdbf_query_random_{round}_{}",
            names::random_label().0
        ));
        random_array(&mut rng, dims, &root);
        let mut array = Array::open(root.to_str().unwrap(), &OpenOptions::default()).unwrap();
        array.set_threads(1 + rng.below(2) as usize);
        // The reference: the core reader's full read.
        let full = array.read(&NAMES, None).unwrap();
        let full_rows = rows(&full);
        for _ in 0..12 {
            let mut q_ranges: Vec<Vec<(Vec<u8>, Vec<u8>)>> = Vec::new();
            for d in dims {
                let k = [0, 1, 1, 2, 3, 6][rng.below(6) as usize];
                let rs = (0..k)
                    .map(|_| {
                        let (p, q) = (d.value(&mut rng), d.value(&mut rng));
                        if d.cmp(&p, &q) == Ordering::Greater {
                            (q, p)
                        } else {
                            (p, q)
                        }
                    })
                    .collect();
                q_ranges.push(rs);
            }
            let cond_text = match rng.below(6) {
                0 => Some(format!("a < {}", rng.int(-1000, 1000))),
                1 => Some(format!("f >= {}", rng.int(-400, 400) as f64 / 4.0)),
                2 => Some(format!(
                    "u > {} and a > {}",
                    rng.below(65536),
                    rng.int(-1000, 1000)
                )),
                _ => None,
            };
            let cond = cond_text
                .as_ref()
                .map(|t| QueryCondition::parse(&array, t).unwrap());
            // Per cell of the full read: the range combinations holding it, 0 when the
            // condition fails.
            let pass: Vec<bool> = match &cond {
                Some(c) => {
                    let fs: Vec<FieldData> = c
                        .fields()
                        .iter()
                        .map(|n| full[NAMES.iter().position(|m| m == n).unwrap()].clone())
                        .collect();
                    c.evaluate(&fs).unwrap()
                }
                None => vec![true; full_rows.len()],
            };
            let times: Vec<u64> = full_rows
                .iter()
                .zip(&pass)
                .map(|(r, p)| {
                    if !p {
                        return 0;
                    }
                    dims.iter()
                        .enumerate()
                        .map(|(j, d)| {
                            let v = r[j].as_ref().unwrap();
                            if q_ranges[j].is_empty() {
                                1
                            } else {
                                q_ranges[j]
                                    .iter()
                                    .filter(|(lo, hi)| {
                                        d.cmp(v, lo) != Ordering::Less
                                            && d.cmp(v, hi) != Ordering::Greater
                                    })
                                    .count() as u64
                            }
                        })
                        .product()
                })
                .collect();
            let build = || {
                let mut q = Query::new(&array);
                for (j, rs) in q_ranges.iter().enumerate() {
                    for (lo, hi) in rs {
                        q = q.add_range_bytes(NAMES[j], lo, hi);
                    }
                }
                q.condition(cond.as_ref().map(|c| c as &dyn CellFilter))
            };
            let ctx = format!("round {round} {dims:?} ranges {q_ranges:?} cond {cond_text:?}");
            // Unordered: each selected cell once.
            let mut want: Vec<&Row> = full_rows
                .iter()
                .zip(&times)
                .filter(|(_, t)| **t > 0)
                .map(|(r, _)| r)
                .collect();
            selected_total += want.len() as u64;
            let got = build()
                .fields(&NAMES)
                .layout(QueryLayout::Unordered)
                .submit()
                .unwrap();
            let mut got_rows = rows(&got.fields);
            got_rows.sort();
            let mut want_sorted: Vec<Row> = want.iter().map(|r| (*r).clone()).collect();
            want_sorted.sort();
            assert_eq!(got_rows, want_sorted, "unordered: {ctx}");
            // Row-major: each cell once per range combination, sorted by coordinates.
            let got = build()
                .fields(&NAMES)
                .layout(QueryLayout::RowMajor)
                .submit()
                .unwrap();
            let got_rows = rows(&got.fields);
            for w in got_rows.windows(2) {
                let o = dims[0]
                    .cmp(w[0][0].as_ref().unwrap(), w[1][0].as_ref().unwrap())
                    .then_with(|| {
                        dims[1].cmp(w[0][1].as_ref().unwrap(), w[1][1].as_ref().unwrap())
                    });
                assert_ne!(o, Ordering::Greater, "row-major order: {ctx}");
            }
            let mut got_sorted = got_rows;
            got_sorted.sort();
            let mut want_rep: Vec<Row> = full_rows
                .iter()
                .zip(&times)
                .flat_map(|(r, t)| std::iter::repeat_n(r.clone(), *t as usize))
                .collect();
            want_rep.sort();
            assert_eq!(got_sorted, want_rep, "row-major: {ctx}");
            // Aggregates over the selected cells, each once.
            let mut q = build();
            for agg in aggregates_of(dims) {
                q = q.aggregate(agg);
            }
            let got = q.submit().unwrap();
            let got: Vec<(String, String)> = got
                .aggregates
                .iter()
                .map(|(l, v)| (l.clone(), format!("{v:?}")))
                .collect();
            want.sort();
            assert_eq!(got, reference_aggregates(dims, &want), "aggregates: {ctx}");
            checked += 1;
        }
        drop(array);
        std::fs::remove_dir_all(root).unwrap();
    }
    assert_eq!(checked, 32 * 12);
    assert!(
        selected_total > 10_000,
        "too few cells selected: {selected_total}"
    );
}
