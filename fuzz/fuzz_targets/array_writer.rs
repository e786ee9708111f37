//! The array writer (src/array/write/): the input picks a schema (dense or sparse, 1-3
//! dimensions of integer, float or string types, tile and cell orders, 1-3 attributes fixed,
//! multi-value, var-size or nullable, a few filters, sometimes encryption) and cells, creates
//! the array in a scratch folder, writes one fragment (dense: a row-major, col-major or
//! global-order box; sparse: unordered cells, then the cells read back streamed in global order
//! into a second array, in random batches) and reads it back with `Array::read`. Invariant:
//! what is created and written reads back cell for cell (dense: every cell of the box at its
//! coordinates; sparse: the same multiset of cells, and the global-order copy in the same
//! order). Errors are fine where the input is invalid (a schema TileDB refuses, a filter that
//! refuses the values); panics, a refused valid write and wrong cells are not.
#![no_main]
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tdbfilter::array::schema::ArraySchema;
use tdbfilter::array::{self, Array, FieldData, OpenOptions, WriteLayout, Writer};
use tdbfilter::storage::StorageConfig;

/// A temporary path as a URI (always UTF-8 here).
fn utf8(p: &Path) -> &str {
    p.to_str().expect("utf-8 temporary path")
}

/// The fuzz input as a stream of choices (zeros once it runs out).
struct Input<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Input<'_> {
    fn u8(&mut self) -> u8 {
        let v = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        v
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    /// A number in `0..n` (`n` ≥ 1).
    fn below(&mut self, n: u64) -> u64 {
        if n <= 256 {
            self.u8() as u64 % n
        } else {
            self.u16() as u64 % n
        }
    }

    fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }

    fn pick<'s, T>(&mut self, items: &'s [T]) -> &'s T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// A dimension type: integer (bytes, signed), float (bytes) or ASCII string.
#[derive(Clone, Copy, Debug, PartialEq)]
enum DimType {
    Int(&'static str, usize, bool),
    Float(&'static str, usize),
    Str,
}

const INT_DIMS: [DimType; 8] = [
    DimType::Int("INT8", 1, true),
    DimType::Int("UINT8", 1, false),
    DimType::Int("INT16", 2, true),
    DimType::Int("UINT16", 2, false),
    DimType::Int("INT32", 4, true),
    DimType::Int("UINT32", 4, false),
    DimType::Int("INT64", 8, true),
    DimType::Int("UINT64", 8, false),
];

/// One dimension: its type, and (numeric) domain and tile extent.
#[derive(Clone, Debug)]
struct Dim {
    ty: DimType,
    lo: f64,
    hi: f64,
    tile: f64,
}

impl Dim {
    /// Integer dimensions: the number of values in the domain.
    fn width(&self) -> i64 {
        (self.hi - self.lo) as i64 + 1
    }

    fn value_bytes(&self, v: f64) -> Vec<u8> {
        match self.ty {
            DimType::Int(_, size, _) => (v as i64).to_le_bytes()[..size].to_vec(),
            DimType::Float(_, 4) => (v as f32).to_le_bytes().to_vec(),
            DimType::Float(..) => v.to_le_bytes().to_vec(),
            DimType::Str => unreachable!("string dimensions have no numeric values"),
        }
    }
}

/// Attribute value types: name, bytes per value, kind.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Int,
    Float,
    Bool,
    Text,
}

const ATTR_TYPES: [(&str, usize, Kind); 14] = [
    ("INT8", 1, Kind::Int),
    ("UINT8", 1, Kind::Int),
    ("INT16", 2, Kind::Int),
    ("UINT16", 2, Kind::Int),
    ("INT32", 4, Kind::Int),
    ("UINT32", 4, Kind::Int),
    ("INT64", 8, Kind::Int),
    ("UINT64", 8, Kind::Int),
    ("FLOAT32", 4, Kind::Float),
    ("FLOAT64", 8, Kind::Float),
    ("BOOL", 1, Kind::Bool),
    ("CHAR", 1, Kind::Text),
    ("STRING_ASCII", 1, Kind::Text),
    ("STRING_UTF8", 1, Kind::Text),
];

/// Filter specs (src/pipeline/spec.rs) an attribute may get; those TileDB refuses for the
/// type make the schema invalid (fine).
const FILTERS: [&str; 15] = [
    "zstd:1",
    "lz4",
    "gzip:1",
    "rle",
    "bzip2:1",
    "byteshuffle",
    "bitshuffle",
    "delta",
    "double_delta",
    "bit_width_reduction",
    "positive_delta",
    "xor",
    "md5",
    "sha256",
    "dictionary",
];

/// Filters whose output has the size of their input.
const SIZE_KEEPING: [&str; 5] = ["byteshuffle", "bitshuffle", "xor", "md5", "sha256"];

/// Whether a write into attribute `a` of type `ty` may fail although the schema was created
/// (where TileDB 2.30 fails too, or writes tiles it cannot read back: src/filters/):
/// POSITIVE_DELTA refuses values that decrease; DICTIONARY, accepted in any schema, encodes
/// only var-size STRING_ASCII/UTF8 cells as the first filter; DELTA and DOUBLE_DELTA refuse
/// floats, DELTA an empty part (a var-size tile of empty cells), DOUBLE_DELTA deltas beyond
/// int64 (64-bit values); RLE, DELTA and DOUBLE_DELTA refuse parts that are not whole values,
/// which a filter changing the size before them produces.
fn may_refuse(ty: &str, a: &Attr) -> bool {
    a.filters.iter().enumerate().any(|(i, f)| {
        let resized = a.filters[..i].iter().any(|g| !SIZE_KEEPING.contains(g));
        match *f {
            "positive_delta" => true,
            "dictionary" => !(i == 0 && a.num == 0 && matches!(ty, "STRING_ASCII" | "STRING_UTF8")),
            // XOR (and fixed-size RLE) have no readable encoding of a part that is not whole
            // values, which a compressor before them makes (docs/DIFFERENCES.md).
            "rle" | "xor" => resized,
            "delta" => resized || a.kind == Kind::Float || a.num == 0,
            "double_delta" => resized || a.kind == Kind::Float || a.num == 0 || a.size == 8,
            _ => false,
        }
    })
}

/// One attribute.
#[derive(Clone, Debug)]
struct Attr {
    name: String,
    size: usize,
    kind: Kind,
    /// Values per cell; 0 for var-size.
    num: usize,
    nullable: bool,
    filters: Vec<&'static str>,
}

/// A field's cells as the writer takes them.
#[derive(Clone, Debug, Default, PartialEq)]
struct Cells {
    data: Vec<u8>,
    offsets: Option<Vec<u64>>,
    validity: Option<Vec<u8>>,
}

impl Cells {
    /// Var-size cell `i`.
    fn cell(&self, i: usize) -> &[u8] {
        let o = self.offsets.as_ref().expect("var-size cells");
        let end = o.get(i + 1).map_or(self.data.len(), |e| *e as usize);
        &self.data[o[i] as usize..end]
    }

    fn valid(&self, i: usize) -> u8 {
        self.validity.as_ref().map_or(1, |v| v[i])
    }

    /// Cells `first..first + n` (fixed cells of `size` bytes).
    fn slice(&self, first: usize, n: usize, size: usize) -> Cells {
        let (data, offsets) = match &self.offsets {
            Some(o) => {
                let start = o.get(first).map_or(self.data.len() as u64, |x| *x);
                let end = o.get(first + n).map_or(self.data.len() as u64, |x| *x);
                let offs = o[first..first + n].iter().map(|x| x - start).collect();
                (self.data[start as usize..end as usize].to_vec(), Some(offs))
            }
            None => (self.data[first * size..(first + n) * size].to_vec(), None),
        };
        Cells {
            data,
            offsets,
            validity: self.validity.as_ref().map(|v| v[first..first + n].to_vec()),
        }
    }
}

/// A value of `size` bytes of `kind`.
fn value(inp: &mut Input, size: usize, kind: Kind) -> Vec<u8> {
    match kind {
        Kind::Bool => vec![inp.u8() & 1],
        Kind::Text => vec![b'a' + inp.below(4) as u8],
        Kind::Int | Kind::Float => (0..size).map(|_| inp.u8()).collect(),
    }
}

/// `n` cells of attribute `a`.
fn attr_cells(inp: &mut Input, a: &Attr, n: usize) -> Cells {
    let mut c = Cells::default();
    if a.num == 0 {
        let mut offsets = Vec::with_capacity(n);
        for _ in 0..n {
            offsets.push(c.data.len() as u64);
            for _ in 0..inp.below(4) {
                c.data.extend(value(inp, a.size, a.kind));
            }
        }
        c.offsets = Some(offsets);
    } else {
        for _ in 0..n * a.num {
            c.data.extend(value(inp, a.size, a.kind));
        }
    }
    if a.nullable {
        c.validity = Some((0..n).map(|_| u8::from(inp.below(4) != 0)).collect());
    }
    c
}

/// A per-process scratch folder (on tmpfs when there is one: the writer syncs every file).
fn scratch() -> &'static PathBuf {
    static S: OnceLock<PathBuf> = OnceLock::new();
    S.get_or_init(|| {
        let base = Path::new("/dev/shm");
        let base = if base.is_dir() {
            base.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        base.join(format!("tdbf-fuzz-writer-{}", std::process::id()))
    })
}

fuzz_target!(|data: &[u8]| {
    let root = scratch();
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir_all(root).expect("scratch folder");
    run(&mut Input { bytes: data, at: 0 }, root);
    let _ = std::fs::remove_dir_all(root);
});

fn run(inp: &mut Input, root: &Path) {
    let dense = inp.bool();
    let ndim = 1 + inp.below(3) as usize;
    let mut dims = Vec::new();
    for _ in 0..ndim {
        let ty = match (dense, inp.below(10)) {
            (false, 8) if inp.bool() => DimType::Float("FLOAT32", 4),
            (false, 8) => DimType::Float("FLOAT64", 8),
            (false, 9) => DimType::Str,
            _ => *inp.pick(&INT_DIMS),
        };
        let dim = match ty {
            DimType::Int(_, _, signed) => {
                let lo = if signed {
                    inp.below(41) as f64 - 20.0
                } else {
                    inp.below(41) as f64
                };
                let width = 1.0 + inp.below(if dense { 12 } else { 40 }) as f64;
                let tile = 1.0 + inp.below(width as u64) as f64;
                Dim {
                    ty,
                    lo,
                    hi: lo + width - 1.0,
                    tile,
                }
            }
            DimType::Float(..) => {
                let lo = inp.below(64) as f64 / 4.0 - 8.0;
                let hi = lo + 0.5 + inp.below(64) as f64 / 4.0;
                let tile = 0.25 + inp.below(16) as f64 / 4.0;
                Dim { ty, lo, hi, tile }
            }
            DimType::Str => Dim {
                ty,
                lo: 0.0,
                hi: 0.0,
                tile: 0.0,
            },
        };
        dims.push(dim);
    }
    let nattr = 1 + inp.below(3) as usize;
    let mut attrs = Vec::new();
    for i in 0..nattr {
        let (name, size, kind) = *inp.pick(&ATTR_TYPES);
        let num = match inp.below(6) {
            0 | 1 | 2 => 1,
            3 => 2,
            _ if kind == Kind::Bool => 1,
            _ => 0,
        };
        let mut filters = Vec::new();
        for _ in 0..inp.below(3) {
            filters.push(*inp.pick(&FILTERS));
        }
        attrs.push((
            name,
            Attr {
                name: format!("a{i}"),
                size,
                kind,
                num,
                nullable: inp.bool(),
                filters,
            },
        ));
    }
    let tile_order = *inp.pick(&["row-major", "col-major"]);
    let cell_order = if !dense && inp.below(3) == 0 {
        "hilbert"
    } else {
        *inp.pick(&["row-major", "col-major"])
    };
    let capacity = 1 + inp.below(24);
    let allows_dups = !dense && inp.bool();
    let offsets_filters = *inp.pick(&["zstd", "", "bitshuffle,lz4", "delta,zstd:1"]);
    let validity_filters = *inp.pick(&["rle", "", "zstd:1"]);
    let key: Option<Vec<u8>> =
        (inp.below(8) == 0).then(|| b"0123456789abcdef0123456789abcdef".to_vec());

    let dims_json: Vec<Value> = dims
        .iter()
        .enumerate()
        .map(|(j, d)| match d.ty {
            DimType::Str => json!({"name": format!("d{j}"), "type": "STRING_ASCII"}),
            DimType::Int(name, ..) => json!({
                "name": format!("d{j}"), "type": name,
                "domain": [d.lo as i64, d.hi as i64], "tile": d.tile as i64,
            }),
            DimType::Float(name, _) => json!({
                "name": format!("d{j}"), "type": name, "domain": [d.lo, d.hi], "tile": d.tile,
            }),
        })
        .collect();
    let attrs_json: Vec<Value> = attrs
        .iter()
        .map(|(ty, a)| {
            json!({
                "name": a.name, "type": ty,
                "cell_val_num": if a.num == 0 { json!("var") } else { json!(a.num) },
                "nullable": a.nullable, "filters": a.filters.join(","),
            })
        })
        .collect();
    let schema_json = json!({
        "sparse": !dense, "allows_duplicates": allows_dups, "tile_order": tile_order,
        "cell_order": cell_order, "capacity": capacity, "offsets_filters": offsets_filters,
        "validity_filters": validity_filters, "dimensions": dims_json, "attributes": attrs_json,
    });
    let Ok(schema) = ArraySchema::from_json_value(&schema_json) else {
        return;
    };
    let uri = root.join("A");
    if array::create(
        utf8(&uri),
        &schema,
        key.as_deref(),
        &StorageConfig::default(),
    )
    .is_err()
    {
        return;
    }
    let may_refuse = attrs.iter().any(|(ty, a)| may_refuse(ty, a));
    let attrs: Vec<Attr> = attrs.into_iter().map(|(_, a)| a).collect();
    if dense {
        dense_write(
            inp,
            &uri,
            &dims,
            &attrs,
            key.as_deref(),
            tile_order,
            cell_order,
            may_refuse,
        );
    } else {
        sparse_write(
            inp,
            root,
            &uri,
            &dims,
            &attrs,
            key.as_deref(),
            allows_dups,
            may_refuse,
        );
    }
}

/// Opens a writer; errors only where the schema's filters cannot take its types.
fn open_writer(uri: &Path, key: Option<&[u8]>, threads: usize) -> Option<Writer> {
    let mut w = Writer::open(utf8(uri), key, Some(1), &StorageConfig::default()).ok()?;
    w.set_threads(threads).expect("set_threads");
    Some(w)
}

fn set_cells(w: &mut Writer, name: &str, c: &Cells) -> tdbfilter::Result<()> {
    w.set_data(name, &c.data)?;
    if let Some(o) = &c.offsets {
        w.set_offsets(name, o)?;
    }
    if let Some(v) = &c.validity {
        w.set_validity(name, v)?;
    }
    Ok(())
}

fn read_back(uri: &Path, key: Option<&[u8]>, names: &[&str]) -> Vec<FieldData> {
    let options = OpenOptions {
        key: key.map(|k| k.to_vec()),
        ..OpenOptions::default()
    };
    let a = Array::open(uri.to_str().expect("utf-8"), &options).expect("open the written array");
    a.read(names, None).expect("read the written array")
}

/// The result of a write: Ok, or an error `may_refuse` excuses (else a failure).
fn check_write(r: tdbfilter::Result<String>, may_refuse: bool, what: &str) -> bool {
    match r {
        Ok(_) => true,
        Err(_) if may_refuse => false,
        Err(e) => panic!("{what}: a valid write failed: {e}"),
    }
}

#[allow(clippy::too_many_arguments)]
fn dense_write(
    inp: &mut Input,
    uri: &Path,
    dims: &[Dim],
    attrs: &[Attr],
    key: Option<&[u8]>,
    tile_order: &str,
    cell_order: &str,
    may_refuse: bool,
) {
    let layout = *inp.pick(&[
        WriteLayout::RowMajor,
        WriteLayout::ColMajor,
        WriteLayout::GlobalOrder,
    ]);
    // The box: any sub-box; global order: whole tiles inside the domain.
    let mut bx = Vec::new();
    for d in dims {
        let (lo, hi) = if layout == WriteLayout::GlobalOrder {
            let (t, w) = (d.tile as i64, d.width());
            let tiles = w / t;
            let k = inp.below(tiles as u64) as i64;
            let m = k + inp.below((tiles - k) as u64) as i64;
            (d.lo as i64 + k * t, d.lo as i64 + (m + 1) * t - 1)
        } else {
            let lo = d.lo as i64 + inp.below(d.width() as u64) as i64;
            (lo, lo + inp.below((d.hi as i64 - lo + 1) as u64) as i64)
        };
        bx.push((lo, hi));
    }
    let shape: Vec<i64> = bx.iter().map(|(lo, hi)| hi - lo + 1).collect();
    let n: usize = shape.iter().product::<i64>() as usize;
    // Input cell k sits at row-major position pos[k] of the box.
    let pos = input_positions(&bx, dims, layout, tile_order, cell_order);
    let cells: Vec<Cells> = attrs.iter().map(|a| attr_cells(inp, a, n)).collect();
    let Some(mut w) = open_writer(uri, key, 1 + inp.below(2) as usize) else {
        return;
    };
    w.set_layout(layout).expect("set_layout");
    let mut sub = Vec::new();
    for (d, &(lo, hi)) in dims.iter().zip(&bx) {
        sub.extend(d.value_bytes(lo as f64));
        sub.extend(d.value_bytes(hi as f64));
    }
    w.set_subarray(&sub).expect("a box inside the domain");
    // Batches: row- and col-major writes take one; global order any number.
    let mut cuts = vec![0, n];
    if layout == WriteLayout::GlobalOrder {
        for _ in 0..inp.below(4) {
            cuts.push(inp.below(n as u64 + 1) as usize);
        }
        cuts.sort_unstable();
    }
    let r = (|| {
        for b in cuts.windows(2) {
            for (a, c) in attrs.iter().zip(&cells) {
                set_cells(
                    &mut w,
                    &a.name,
                    &c.slice(b[0], b[1] - b[0], a.size * a.num.max(1)),
                )?;
            }
            w.submit()?;
        }
        w.finalize()
    })();
    if !check_write(r, may_refuse, "dense") {
        return;
    }
    let names: Vec<&str> = attrs.iter().map(|a| a.name.as_str()).collect();
    let got = read_back(uri, key, &names);
    for ((a, c), f) in attrs.iter().zip(&cells).zip(&got) {
        assert_eq!(f.cell_count as usize, n, "field {}: cell count", a.name);
        let back = Cells {
            data: f.data.clone(),
            offsets: f.offsets.clone(),
            validity: f.validity.clone(),
        };
        let size = a.size * a.num.max(1);
        for k in 0..n {
            let p = pos[k];
            let (want, have) = if a.num == 0 {
                (c.cell(k), back.cell(p))
            } else {
                (
                    &c.data[k * size..(k + 1) * size],
                    &back.data[p * size..(p + 1) * size],
                )
            };
            assert_eq!(
                want, have,
                "field {}: input cell {k} at box cell {p}",
                a.name
            );
            assert_eq!(
                c.valid(k),
                back.valid(p),
                "field {}: validity of input cell {k}",
                a.name
            );
        }
    }
}

/// For each input cell of a box written with `layout`, its row-major position in the box.
fn input_positions(
    bx: &[(i64, i64)],
    dims: &[Dim],
    layout: WriteLayout,
    tile_order: &str,
    cell_order: &str,
) -> Vec<usize> {
    let shape: Vec<i64> = bx.iter().map(|(lo, hi)| hi - lo + 1).collect();
    let row_major = |c: &[i64]| -> usize {
        c.iter().zip(&shape).fold(0i64, |acc, (x, s)| acc * s + x) as usize
    };
    // Coordinates (relative to the box) of box cells in an order, last dimension fastest
    // (`row`) or first fastest.
    let walk = |shape: &[i64], row: bool| -> Vec<Vec<i64>> {
        let n: i64 = shape.iter().product();
        (0..n)
            .map(|mut i| {
                let mut c = vec![0; shape.len()];
                let idx: Vec<usize> = if row {
                    (0..shape.len()).rev().collect()
                } else {
                    (0..shape.len()).collect()
                };
                for d in idx {
                    c[d] = i % shape[d];
                    i /= shape[d];
                }
                c
            })
            .collect()
    };
    match layout {
        WriteLayout::RowMajor => (0..shape.iter().product::<i64>() as usize).collect(),
        WriteLayout::ColMajor => walk(&shape, false).iter().map(|c| row_major(c)).collect(),
        _ => {
            let ext: Vec<i64> = dims.iter().map(|d| d.tile as i64).collect();
            let tiles: Vec<i64> = shape.iter().zip(&ext).map(|(s, e)| s / e).collect();
            let mut out = Vec::new();
            for t in walk(&tiles, tile_order == "row-major") {
                for c in walk(&ext, cell_order == "row-major") {
                    let abs: Vec<i64> = t
                        .iter()
                        .zip(&c)
                        .zip(&ext)
                        .map(|((t, c), e)| t * e + c)
                        .collect();
                    out.push(row_major(&abs));
                }
            }
            out
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn sparse_write(
    inp: &mut Input,
    root: &Path,
    uri: &Path,
    dims: &[Dim],
    attrs: &[Attr],
    key: Option<&[u8]>,
    allows_dups: bool,
    may_refuse: bool,
) {
    let want = 1 + inp.below(48) as usize;
    // Coordinates inside the domain, unique unless the schema allows duplicates.
    let mut coords: Vec<Vec<Vec<u8>>> = Vec::new();
    for _ in 0..want {
        let c: Vec<Vec<u8>> = dims
            .iter()
            .map(|d| match d.ty {
                DimType::Str => (0..1 + inp.below(3))
                    .map(|_| b'a' + inp.below(3) as u8)
                    .collect(),
                DimType::Int(..) => d.value_bytes(d.lo + inp.below(d.width() as u64) as f64),
                DimType::Float(..) => {
                    let v = d.lo + (d.hi - d.lo) * inp.below(256) as f64 / 255.0;
                    d.value_bytes(v.clamp(d.lo, d.hi))
                }
            })
            .collect();
        if allows_dups || !coords.contains(&c) {
            coords.push(c);
        }
    }
    let n = coords.len();
    let mut fields: Vec<(String, Cells, usize)> = Vec::new();
    for (j, d) in dims.iter().enumerate() {
        let mut c = Cells::default();
        if d.ty == DimType::Str {
            let mut o = Vec::new();
            for cell in &coords {
                o.push(c.data.len() as u64);
                c.data.extend(&cell[j]);
            }
            c.offsets = Some(o);
        } else {
            for cell in &coords {
                c.data.extend(&cell[j]);
            }
        }
        let size = coords[0][j].len();
        fields.push((format!("d{j}"), c, size));
    }
    for a in attrs {
        fields.push((a.name.clone(), attr_cells(inp, a, n), a.size * a.num.max(1)));
    }
    let threads = 1 + inp.below(2) as usize;
    let Some(mut w) = open_writer(uri, key, threads) else {
        return;
    };
    w.set_layout(WriteLayout::Unordered).expect("set_layout");
    let r = (|| {
        for (name, c, _) in &fields {
            set_cells(&mut w, name, c)?;
        }
        w.submit()?;
        w.finalize()
    })();
    if !check_write(r, may_refuse, "sparse unordered") {
        return;
    }
    let names: Vec<&str> = fields.iter().map(|f| f.0.as_str()).collect();
    let got = read_back(uri, key, &names);
    let rows =
        |cells: &dyn Fn(usize, usize) -> (Vec<u8>, u8), m: usize| -> Vec<Vec<(Vec<u8>, u8)>> {
            let mut v: Vec<Vec<(Vec<u8>, u8)>> = (0..m)
                .map(|i| (0..names.len()).map(|f| cells(i, f)).collect())
                .collect();
            v.sort();
            v
        };
    let m = got[0].cell_count as usize;
    let back: Vec<Cells> = got
        .iter()
        .map(|f| Cells {
            data: f.data.clone(),
            offsets: f.offsets.clone(),
            validity: f.validity.clone(),
        })
        .collect();
    let fixed = |c: &Cells, i: usize, size: usize| -> Vec<u8> {
        if c.offsets.is_some() {
            c.cell(i).to_vec()
        } else {
            c.data[i * size..(i + 1) * size].to_vec()
        }
    };
    let want = rows(
        &|i, f| (fixed(&fields[f].1, i, fields[f].2), fields[f].1.valid(i)),
        n,
    );
    let have = rows(
        &|i, f| (fixed(&back[f], i, fields[f].2), back[f].valid(i)),
        m,
    );
    assert_eq!(
        want, have,
        "sparse: the cells read back differ from the cells written"
    );

    // The cells in global order (as read), streamed in batches into a second array.
    let uri2 = root.join("B");
    let schema = Array::open(
        uri.to_str().expect("utf-8"),
        &OpenOptions {
            key: key.map(|k| k.to_vec()),
            ..OpenOptions::default()
        },
    )
    .expect("open")
    .schema()
    .clone();
    array::create(utf8(&uri2), &schema, key, &StorageConfig::default())
        .expect("the schema created once creates again");
    let mut w = open_writer(&uri2, key, threads).expect("writer on the copy");
    w.set_layout(WriteLayout::GlobalOrder).expect("set_layout");
    let mut cuts = vec![0, m];
    for _ in 0..inp.below(5) {
        cuts.push(inp.below(m as u64 + 1) as usize);
    }
    cuts.sort_unstable();
    let r = (|| {
        for b in cuts.windows(2) {
            for ((name, _, size), c) in fields.iter().zip(&back) {
                set_cells(&mut w, name, &c.slice(b[0], b[1] - b[0], *size))?;
            }
            w.submit()?;
        }
        w.finalize()
    })();
    check_write(r, false, "sparse global order (cells as read)");
    let again = read_back(&uri2, key, &names);
    for (a, b) in got.iter().zip(&again) {
        assert_eq!(
            a, b,
            "field {}: the global-order copy reads differently",
            a.name
        );
    }
}
