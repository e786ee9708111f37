//! `tdbf array write`: writes one fragment into an existing array from files of cells
//! (src/array/write/).

use crate::common::{CliResult, Failure, parse_key};
use clap::{Args, ValueEnum};
use std::path::Path;
use tdbfilter::array::{WriteLayout, Writer};

/// Cell orders of `tdbf array write`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LayoutArg {
    /// Dense: the box's cells in row-major order.
    Row,
    /// Dense: the box's cells in col-major order.
    Col,
    /// The array's global order (dense: whole tiles of a tile-aligned box; sparse: sorted).
    Global,
    /// Sparse: any order.
    Unordered,
}

/// `tdbf array write`.
#[derive(Debug, Args)]
pub struct WriteArgs {
    /// The array folder.
    #[arg(value_name = "ARRAY")]
    pub path: String,
    /// A field's cells: NAME=FILE, FILE a .npy array (its raw little-endian values) or raw
    /// bytes; var-size fields: the concatenated values. Repeat per field.
    #[arg(long = "field", value_name = "NAME=FILE", required = true)]
    pub fields: Vec<String>,
    /// A var-size field's cell offsets: NAME=FILE of u64 byte offsets (.npy or raw), one
    /// per cell.
    #[arg(long = "offsets", value_name = "NAME=FILE")]
    pub offsets: Vec<String>,
    /// A nullable field's validity: NAME=FILE, one byte per cell (0 null; .npy or raw).
    #[arg(long = "validity", value_name = "NAME=FILE")]
    pub validity: Vec<String>,
    /// Dense: the box, 'lo,hi' per dimension, e.g. '0,99,10,19' (default: the domain).
    #[arg(long, value_name = "LO,HI,...")]
    pub subarray: Option<String>,
    /// Cell order (default: row for dense arrays, global for sparse ones).
    #[arg(long, value_enum)]
    pub layout: Option<LayoutArg>,
    /// The fragment's timestamp in ms (default: now).
    #[arg(long, value_name = "T")]
    pub timestamp: Option<u64>,
    /// AES-256-GCM key of an encrypted array: 32 characters, or hex:<64 hex digits>.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
    /// Submit the cells in batches of N cells (global order: streams into one fragment).
    #[arg(long, value_name = "N")]
    pub batch_cells: Option<u64>,
    /// Threads filtering tiles (0 = all cores).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
}

/// The payload of a .npy file (any dtype, C or Fortran order), or the whole file.
fn load(path: &str) -> CliResult<Vec<u8>> {
    let bytes = std::fs::read(path).map_err(|e| Failure::new(format!("{path}: {e}")))?;
    if !bytes.starts_with(b"\x93NUMPY") {
        return Ok(bytes);
    }
    let bad = || Failure::new(format!("{path}: not a valid .npy file"));
    let major = *bytes.get(6).ok_or_else(bad)?;
    let (len, start) = if major == 1 {
        (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
    } else {
        let b = bytes.get(8..12).ok_or_else(bad)?;
        (u32::from_le_bytes(b.try_into().expect("4")) as usize, 12)
    };
    let header =
        std::str::from_utf8(bytes.get(start..start + len).ok_or_else(bad)?).map_err(|_| bad())?;
    if header.contains("'descr': '>") || header.contains("'descr': '|O") {
        return Err(Failure::new(format!(
            "{path}: big-endian and object .npy arrays are not read (write raw bytes)"
        )));
    }
    Ok(bytes[start + len..].to_vec())
}

/// One field's cells as read from the files.
struct FieldFiles {
    name: String,
    data: Vec<u8>,
    offsets: Option<Vec<u64>>,
    validity: Option<Vec<u8>>,
}

fn split(arg: &str, what: &str) -> CliResult<(String, String)> {
    arg.split_once('=')
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .ok_or_else(|| Failure::new(format!("--{what}: '{arg}' is not NAME=FILE")))
}

/// Runs `tdbf array write`: prints the new fragment's name.
pub fn run(args: &WriteArgs, out: &mut impl std::io::Write) -> CliResult<()> {
    let key = args.key.as_deref().map(parse_key).transpose()?;
    let mut w = Writer::open(
        Path::new(&args.path),
        key.as_ref().map(|k| k.as_slice()),
        args.timestamp,
    )
    .map_err(|e| Failure::from(e).context(&args.path))?;
    w.set_threads(args.threads)?;
    let dense = w.schema().is_dense();
    let layout = match args.layout {
        Some(LayoutArg::Row) => WriteLayout::RowMajor,
        Some(LayoutArg::Col) => WriteLayout::ColMajor,
        Some(LayoutArg::Global) => WriteLayout::GlobalOrder,
        Some(LayoutArg::Unordered) => WriteLayout::Unordered,
        None if dense => WriteLayout::RowMajor,
        None => WriteLayout::GlobalOrder,
    };
    w.set_layout(layout)?;
    if let Some(s) = &args.subarray {
        let values: Vec<i128> = s
            .split(',')
            .map(|v| {
                v.trim()
                    .parse::<i128>()
                    .map_err(|_| Failure::new(format!("--subarray: '{v}' is not an integer")))
            })
            .collect::<CliResult<_>>()?;
        let dims = &w.schema().dimensions;
        if values.len() != 2 * dims.len() {
            return Err(Failure::new(format!(
                "--subarray: {} values for {} dimensions (lo,hi each)",
                values.len(),
                dims.len()
            )));
        }
        let mut packed = Vec::new();
        for (i, v) in values.iter().enumerate() {
            let d = &dims[i / 2];
            packed.extend(tdbfilter::array::value::from_i128(d.datatype, *v));
        }
        w.set_subarray(&packed)?;
    }
    let mut fields = Vec::new();
    for f in &args.fields {
        let (name, file) = split(f, "field")?;
        fields.push(FieldFiles {
            data: load(&file)?,
            name,
            offsets: None,
            validity: None,
        });
    }
    let find = |fields: &mut Vec<FieldFiles>, name: &str, what: &str| -> CliResult<usize> {
        fields
            .iter()
            .position(|f| f.name == name)
            .ok_or_else(|| Failure::new(format!("--{what} {name}: no --field {name}")))
    };
    for o in &args.offsets {
        let (name, file) = split(o, "offsets")?;
        let bytes = load(&file)?;
        if bytes.len() % 8 != 0 {
            return Err(Failure::new(format!(
                "--offsets {name}: not whole u64 offsets"
            )));
        }
        let i = find(&mut fields, &name, "offsets")?;
        fields[i].offsets = Some(
            bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8")))
                .collect(),
        );
    }
    for v in &args.validity {
        let (name, file) = split(v, "validity")?;
        let i = find(&mut fields, &name, "validity")?;
        fields[i].validity = Some(load(&file)?);
    }
    // Bytes per fixed-size cell of each field (the schema's; var-size fields count offsets).
    let schema = w.schema().clone();
    let cell_size = |name: &str| -> usize {
        schema
            .attributes
            .iter()
            .find(|a| a.name == name)
            .and_then(|a| a.cell_size())
            .or_else(|| {
                schema
                    .dimensions
                    .iter()
                    .find(|d| d.name == name)
                    .and_then(|d| d.coord_size())
            })
            .unwrap_or(1)
            .max(1)
    };
    let sizes: Vec<usize> = fields.iter().map(|f| cell_size(&f.name)).collect();
    let total = fields.first().map_or(0, |f| match &f.offsets {
        Some(o) => o.len() as u64,
        None => (f.data.len() / sizes[0]) as u64,
    });
    let step = args.batch_cells.unwrap_or(total).max(1);
    let mut start = 0;
    loop {
        let end = (start + step).min(total);
        let (a, b) = (start as usize, end as usize);
        let whole = a == 0 && b as u64 == total;
        for (f, size) in fields.iter_mut().zip(&sizes) {
            let name = f.name.as_str();
            match &f.offsets {
                Some(o) => {
                    let lo = o.get(a).copied().unwrap_or(f.data.len() as u64) as usize;
                    let hi = o.get(b).map_or(f.data.len(), |x| *x as usize);
                    let rebased: Vec<u64> = o[a..b].iter().map(|x| x - lo as u64).collect();
                    if whole && lo == 0 {
                        w.set_data_owned(name, std::mem::take(&mut f.data))?;
                    } else {
                        w.set_data(name, &f.data[lo..hi])?;
                    }
                    w.set_offsets(name, &rebased)?;
                }
                None if whole => w.set_data_owned(name, std::mem::take(&mut f.data))?,
                None => w.set_data(name, &f.data[a * size..b * size])?,
            }
            if let Some(v) = &f.validity {
                w.set_validity(name, &v[a..b])?;
            }
        }
        w.submit()?;
        start = end;
        if start >= total {
            break;
        }
    }
    let name = w.finalize()?;
    writeln!(out, "{name}").map_err(Failure::stdout)?;
    Ok(())
}
