//! `tdbf array write`: writes one fragment into an existing array from files of cells
//! (src/array/write/).

use crate::common::{CliResult, Failure, parse_key};
use clap::{Args, ValueEnum};
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
    /// The array: a folder, or s3://bucket/path, azure://container/path, gs://bucket/path.
    #[arg(value_name = "ARRAY")]
    pub path: String,
    /// Object-store option KEY=VALUE (repeatable), e.g. vfs.s3.endpoint_override=host:port,
    /// vfs.s3.scheme=http, s3.region=us-east-1; unset ones come from the environment
    /// (AWS_*, AZURE_STORAGE_*, GOOGLE_*).
    #[arg(long = "config", value_name = "KEY=VALUE")]
    pub config: Vec<String>,
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

/// The cells of a file: a .npy array's payload (any dtype, C or Fortran order) or the whole
/// file, read a range at a time.
struct Source {
    path: String,
    file: std::fs::File,
    /// Where the payload starts (after a .npy header).
    start: u64,
    /// Payload bytes.
    len: u64,
}

impl Source {
    fn open(path: &str) -> CliResult<Source> {
        use std::io::Read;
        let fail = |e: std::io::Error| Failure::new(format!("{path}: {e}"));
        let mut file = std::fs::File::open(path).map_err(fail)?;
        let size = file.metadata().map_err(fail)?.len();
        let mut head = vec![0u8; size.min(1 << 16) as usize];
        let n = file.read(&mut head).map_err(fail)?;
        head.truncate(n);
        let mut start = 0u64;
        if head.starts_with(b"\x93NUMPY") {
            let bad = || Failure::new(format!("{path}: not a valid .npy file"));
            let (len, at) = if head.get(6) == Some(&1) {
                (u16::from_le_bytes([head[8], head[9]]) as usize, 10)
            } else {
                let b = head.get(8..12).ok_or_else(bad)?;
                (u32::from_le_bytes(b.try_into().expect("4")) as usize, 12)
            };
            let header =
                std::str::from_utf8(head.get(at..at + len).ok_or_else(bad)?).map_err(|_| bad())?;
            if header.contains("'descr': '>") || header.contains("'descr': '|O") {
                return Err(Failure::new(format!(
                    "{path}: big-endian and object .npy arrays are not read (write raw bytes)"
                )));
            }
            start = (at + len) as u64;
        }
        Ok(Source {
            path: path.to_string(),
            file,
            start,
            len: size - start,
        })
    }

    /// Payload bytes `lo..hi`.
    fn read(&self, lo: u64, hi: u64) -> CliResult<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        if lo > hi || hi > self.len {
            return Err(Failure::new(format!(
                "{}: bytes {lo}..{hi} are outside its {} bytes",
                self.path, self.len
            )));
        }
        let mut buf = vec![0u8; (hi - lo) as usize];
        self.file
            .read_exact_at(&mut buf, self.start + lo)
            .map_err(|e| Failure::new(format!("{}: {e}", self.path)))?;
        Ok(buf)
    }

    /// u64 entries `lo..hi` (offsets files).
    fn read_u64s(&self, lo: u64, hi: u64) -> CliResult<Vec<u64>> {
        Ok(self
            .read(8 * lo, 8 * hi)?
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8")))
            .collect())
    }
}

/// One field's files.
struct FieldFiles {
    name: String,
    data: Source,
    offsets: Option<Source>,
    validity: Option<Source>,
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
        &args.path,
        key.as_ref().map(|k| k.as_slice()),
        args.timestamp,
        &crate::array::storage_config(&args.config)?,
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
            data: Source::open(&file)?,
            name,
            offsets: None,
            validity: None,
        });
    }
    let find = |fields: &[FieldFiles], name: &str, what: &str| -> CliResult<usize> {
        fields
            .iter()
            .position(|f| f.name == name)
            .ok_or_else(|| Failure::new(format!("--{what} {name}: no --field {name}")))
    };
    for o in &args.offsets {
        let (name, file) = split(o, "offsets")?;
        let src = Source::open(&file)?;
        if src.len % 8 != 0 {
            return Err(Failure::new(format!(
                "--offsets {name}: not whole u64 offsets"
            )));
        }
        let i = find(&fields, &name, "offsets")?;
        fields[i].offsets = Some(src);
    }
    for v in &args.validity {
        let (name, file) = split(v, "validity")?;
        let i = find(&fields, &name, "validity")?;
        fields[i].validity = Some(Source::open(&file)?);
    }
    // Bytes per fixed-size cell of each field (the schema's; var-size fields count offsets).
    let schema = w.schema().clone();
    let cell_size = |name: &str| -> u64 {
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
            .max(1) as u64
    };
    let sizes: Vec<u64> = fields.iter().map(|f| cell_size(&f.name)).collect();
    let cells = |f: &FieldFiles, size: u64| match &f.offsets {
        Some(o) => o.len / 8,
        None => f.data.len / size,
    };
    let total = fields.first().map_or(0, |f| cells(f, sizes[0]));
    // Each batch is read from the files when it is submitted, so memory holds one batch.
    let step = args.batch_cells.unwrap_or(total).max(1);
    let mut start = 0;
    loop {
        let end = (start + step).min(total);
        for (f, &size) in fields.iter().zip(&sizes) {
            let name = f.name.as_str();
            match &f.offsets {
                Some(o) => {
                    let n = o.len / 8;
                    let (a, b) = (start.min(n), end.min(n));
                    let offs = o.read_u64s(a, b)?;
                    let lo = offs.first().copied().unwrap_or(0);
                    let hi = if a == b {
                        lo
                    } else if b < n {
                        o.read_u64s(b, b + 1)?[0]
                    } else {
                        f.data.len
                    };
                    let hi = hi.max(lo);
                    w.set_data_owned(name, f.data.read(lo, hi.min(f.data.len))?)?;
                    let rebased: Vec<u64> = offs.iter().map(|x| x.saturating_sub(lo)).collect();
                    w.set_offsets(name, &rebased)?;
                }
                None => {
                    let n = f.data.len / size;
                    let (a, b) = (start.min(n), end.min(n));
                    w.set_data_owned(name, f.data.read(a * size, b * size)?)?;
                }
            }
            if let Some(v) = &f.validity {
                let (a, b) = (start.min(v.len), end.min(v.len));
                w.set_validity(name, &v.read(a, b)?)?;
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
