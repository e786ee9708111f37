//! The array part of `tdbf demo`: creates a small dense array and a sparse one from schema
//! JSON in a temporary folder, writes a fragment into each (and array metadata), reads the
//! cells back, verifies every tile, and removes the folder.

use crate::common::{CliResult, Failure};
use std::io::Write;
use std::path::{Path, PathBuf};
use tdbfilter::Datatype;
use tdbfilter::array::metadata::{MetadataChange, MetadataEntry};
use tdbfilter::array::schema::ArraySchema;
use tdbfilter::array::{
    Array, FieldBuffers, OpenOptions, WriteLayout, Writer, create, read::verify, write_metadata,
};
use tdbfilter::storage::StorageConfig;

/// A 2-D dense array of temperatures (byteshuffle + zstd) and a station name per cell.
const DENSE: &str = r#"{"sparse": false,
  "dimensions": [{"name": "day", "type": "INT32", "domain": [1, 365], "tile": 73},
                 {"name": "station", "type": "INT32", "domain": [1, 40], "tile": 8}],
  "attributes": [{"name": "temp", "type": "FLOAT64", "filters": "byteshuffle,zstd:3"},
                 {"name": "note", "type": "STRING_UTF8", "cell_val_num": "var", "nullable": true,
                  "filters": "zstd:1"}]}"#;

/// A 2-D sparse array of events (Hilbert cell order, duplicates allowed).
const SPARSE: &str = r#"{"sparse": true, "cell_order": "hilbert", "capacity": 1000,
  "allows_duplicates": true,
  "dimensions": [{"name": "x", "type": "FLOAT64", "domain": [0, 1000]},
                 {"name": "y", "type": "FLOAT64", "domain": [0, 1000]}],
  "attributes": [{"name": "mag", "type": "FLOAT32", "filters": "bitshuffle,lz4"}]}"#;

/// A temporary folder removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn le<T: Copy, const N: usize>(values: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(|v| f(*v)).collect()
}

/// Reads `field` whole and checks it against `want` (bytes), naming the array.
/// A demo folder's path as the URI text the array API takes.
fn utf8(path: &Path) -> CliResult<&str> {
    path.to_str()
        .ok_or_else(|| Failure::new(format!("{}: not a UTF-8 path", path.display())))
}

fn check_field(array: &Array, field: &str, want: &[u8], what: &str) -> CliResult<()> {
    let got = array.read(&[field], None)?;
    if got[0].data != want {
        return Err(Failure::new(format!(
            "demo {what}: field {field} reads back different cells"
        )));
    }
    Ok(())
}

/// Verifies every tile of the array at `path`.
fn verify_all(path: &Path) -> CliResult<u64> {
    let (array, broken) =
        Array::open_tolerant(path.to_str().unwrap_or(""), &OpenOptions::default())?;
    let report = verify::verify(&array, broken);
    if !report.damages.is_empty() {
        return Err(Failure::new(format!(
            "demo: tdbf array verify found {} damaged tiles in {}",
            report.damages.len(),
            path.display()
        )));
    }
    Ok(report.tiles)
}

/// Runs the array demo, printing one line per array.
pub fn run(out: &mut impl Write) -> CliResult<()> {
    let dir = Scratch(std::env::temp_dir().join(format!(
        "tdbf-demo-{}-{}",
        std::process::id(),
        tdbfilter::array::directory::names::now_ms()
    )));
    std::fs::create_dir_all(&dir.0)
        .map_err(|e| Failure::new(format!("{}: {e}", dir.0.display())))?;

    // Dense: the whole domain in one row-major write.
    let dense = dir.0.join("weather");
    create(
        utf8(&dense)?,
        &ArraySchema::from_json(DENSE)?,
        None,
        &StorageConfig::new(),
    )?;
    let (days, stations) = (365usize, 40usize);
    let temp: Vec<f64> = (0..days * stations)
        .map(|i| {
            let (d, s) = ((i / stations) as f64, (i % stations) as f64);
            10.0 + 12.0 * (d / 58.1).sin() + s * 0.1
        })
        .collect();
    let mut notes = Vec::new();
    let mut offsets = Vec::new();
    let mut valid = Vec::new();
    for i in 0..days * stations {
        offsets.push(notes.len() as u64);
        if i % 7 == 0 {
            notes.extend(format!("check sensor {}", i % stations).bytes());
            valid.push(1u8);
        } else {
            valid.push(0u8);
        }
    }
    let temp_bytes = le(&temp, f64::to_le_bytes);
    let mut w = Writer::open(utf8(&dense)?, None, None, &StorageConfig::new())?;
    w.set_layout(WriteLayout::RowMajor)?;
    w.submit_fields(&[
        (
            "temp",
            FieldBuffers {
                data: &temp_bytes,
                ..FieldBuffers::default()
            },
        ),
        (
            "note",
            FieldBuffers {
                data: &notes,
                offsets: Some(&offsets),
                validity: Some(&valid),
            },
        ),
    ])?;
    let fragment = w.finalize()?;
    let entry = MetadataEntry::new("units", Datatype::StringUtf8, 7, b"celsius")?;
    write_metadata(
        utf8(&dense)?,
        None,
        None,
        &[MetadataChange::Put(entry)],
        &StorageConfig::new(),
    )?;
    let array = Array::open(dense.to_str().unwrap_or(""), &OpenOptions::default())?;
    check_field(&array, "temp", &temp_bytes, "dense array")?;
    let note = array.read(&["note"], None)?;
    if note[0].validity.as_deref() != Some(&valid[..]) || note[0].data != notes {
        return Err(Failure::new(
            "demo dense array: field note reads back different cells",
        ));
    }
    if array.metadata()?.len() != 1 {
        return Err(Failure::new(
            "demo dense array: the metadata does not read back",
        ));
    }
    let tiles = verify_all(&dense)?;
    writeln!(
        out,
        "\narray demo: dense {days}x{stations} (float64 + nullable var strings): created, written \
         as fragment {fragment}, read back equal, metadata put, {tiles} tiles verified"
    )
    .map_err(Failure::stdout)?;

    // Sparse: unordered points, sorted into Hilbert order by the writer.
    let sparse = dir.0.join("events");
    create(
        utf8(&sparse)?,
        &ArraySchema::from_json(SPARSE)?,
        None,
        &StorageConfig::new(),
    )?;
    let n = 5000usize;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let x: Vec<f64> = (0..n).map(|_| next() * 1000.0).collect();
    let y: Vec<f64> = (0..n).map(|_| next() * 1000.0).collect();
    let mag: Vec<f32> = (0..n).map(|i| (i % 90) as f32 / 10.0).collect();
    let (xb, yb, mb) = (
        le(&x, f64::to_le_bytes),
        le(&y, f64::to_le_bytes),
        le(&mag, f32::to_le_bytes),
    );
    let mut w = Writer::open(utf8(&sparse)?, None, None, &StorageConfig::new())?;
    w.submit_fields(&[
        (
            "x",
            FieldBuffers {
                data: &xb,
                ..FieldBuffers::default()
            },
        ),
        (
            "y",
            FieldBuffers {
                data: &yb,
                ..FieldBuffers::default()
            },
        ),
        (
            "mag",
            FieldBuffers {
                data: &mb,
                ..FieldBuffers::default()
            },
        ),
    ])?;
    let fragment = w.finalize()?;
    let array = Array::open(sparse.to_str().unwrap_or(""), &OpenOptions::default())?;
    let cells = array.read(&["x", "y", "mag"], None)?;
    let mut ours: Vec<(u64, u64, u32)> = (0..n)
        .map(|i| (x[i].to_bits(), y[i].to_bits(), mag[i].to_bits()))
        .collect();
    let mut back: Vec<(u64, u64, u32)> = (0..cells[0].data.len() / 8)
        .map(|i| {
            let f = |d: &[u8], w: usize| d[i * w..(i + 1) * w].to_vec();
            (
                u64::from_le_bytes(f(&cells[0].data, 8).try_into().unwrap_or([0; 8])),
                u64::from_le_bytes(f(&cells[1].data, 8).try_into().unwrap_or([0; 8])),
                u32::from_le_bytes(f(&cells[2].data, 4).try_into().unwrap_or([0; 4])),
            )
        })
        .collect();
    ours.sort_unstable();
    back.sort_unstable();
    if ours != back {
        return Err(Failure::new(
            "demo sparse array: the cells read back differ",
        ));
    }
    let tiles = verify_all(&sparse)?;
    writeln!(
        out,
        "array demo: sparse {n} points (Hilbert order, float64 coordinates): created, written as \
         fragment {fragment}, read back equal, {tiles} tiles verified"
    )
    .map_err(Failure::stdout)?;
    Ok(())
}
