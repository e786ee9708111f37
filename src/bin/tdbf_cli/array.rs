//! `tdbf array info|cat|verify`: a TileDB array folder's schema and fragments, its cells, and
//! an integrity check of every tile (src/array/).

use crate::common::{CliResult, Failure, json_string, parse_key, parse_size};
use clap::{Args, Subcommand, ValueEnum};
use std::io::{self, Write};
use tdbfilter::Datatype;
use tdbfilter::array::schema::{ArraySchema, Range, VAR_NUM};
use tdbfilter::array::{Array, FieldData, OpenOptions, read::verify, value};

/// `tdbf array …`.
#[derive(Debug, Args)]
pub struct ArrayArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: ArrayCommand,
}

/// The array subcommands.
#[derive(Debug, Subcommand)]
pub enum ArrayCommand {
    /// Print the schema (as TileDB-Py prints it, or JSON), the fragments with their timestamps,
    /// format versions, cell counts and non-empty domains, and the array metadata.
    Info(InfoArgs),
    /// Print the cells of fields (CSV, JSON, or one field's raw bytes).
    Cat(CatArgs),
    /// Decode every tile of every fragment (checksums verified), check the fragment metadata
    /// against the files, and print each damaged tile as `fragment/field/tile: error`. Exit
    /// status 0 only if the array is whole.
    Verify(VerifyArgs),
    /// Write one fragment from files of cells (dense: a box; sparse: cells in global order)
    /// and print its name.
    Write(crate::array_write::WriteArgs),
}

/// Options every array subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct OpenArgs {
    /// The array folder.
    #[arg(value_name = "ARRAY")]
    pub path: String,
    /// AES-256-GCM key of an encrypted array: 32 characters, or hex:<64 hex digits>.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
    /// Open at END (ms), or with the range START:END, instead of now (time travel).
    #[arg(long, value_name = "[START:]END")]
    pub timestamp: Option<String>,
    /// Threads decoding tiles (0 = all cores).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// Refuse reads whose result for one field would exceed SIZE (e.g. 512MiB): for arrays
    /// from untrusted sources.
    #[arg(long, value_name = "SIZE")]
    pub memory_limit: Option<String>,
}

impl OpenArgs {
    fn options(&self) -> CliResult<OpenOptions> {
        let key = self.key.as_deref().map(parse_key).transpose()?;
        let (start, end) = match self.timestamp.as_deref() {
            None => (0, None),
            Some(t) => {
                let num = |s: &str| {
                    s.parse::<u64>()
                        .map_err(|_| Failure::new(format!("--timestamp: '{s}' is not a number")))
                };
                match t.split_once(':') {
                    Some((a, b)) => (num(a)?, Some(num(b)?)),
                    None => (0, Some(num(t)?)),
                }
            }
        };
        Ok(OpenOptions {
            key: key.map(|k| k.to_vec()),
            timestamp_start: start,
            timestamp_end: end,
            threads: self.threads,
            memory_limit: self
                .memory_limit
                .as_deref()
                .map(|t| parse_size(t).map_err(|e| Failure::new(format!("--memory-limit: {e}"))))
                .transpose()?,
        })
    }

    fn open(&self) -> CliResult<Array> {
        Array::open(&self.path, &self.options()?).map_err(|e| Failure::from(e).context(&self.path))
    }
}

/// `tdbf array info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    #[command(flatten)]
    pub open: OpenArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Output formats of `tdbf array cat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CatFormat {
    /// A header line of field names, then one line per cell (nulls are empty fields).
    Csv,
    /// One JSON object: cell_count, fields (name → values), validity (name → 0/1 list).
    Json,
    /// The raw bytes of one field's values, concatenated.
    Raw,
}

/// `tdbf array cat`.
#[derive(Debug, Args)]
pub struct CatArgs {
    #[command(flatten)]
    pub open: OpenArgs,
    /// A field (attribute or dimension) to print; repeat for several (default: every
    /// dimension, then every attribute).
    #[arg(long = "field", value_name = "NAME")]
    pub fields: Vec<String>,
    /// Inclusive ranges per dimension, e.g. '0:99,5:10' (default: the non-empty domain).
    #[arg(long, value_name = "LO:HI,...")]
    pub subarray: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CatFormat::Csv)]
    pub format: CatFormat,
}

/// `tdbf array verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub open: OpenArgs,
}

/// Runs `tdbf array`.
pub fn run(args: &ArrayArgs) -> CliResult<()> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match &args.command {
        ArrayCommand::Info(a) => info(a, &mut out)?,
        ArrayCommand::Cat(a) => cat(a, &mut out)?,
        ArrayCommand::Verify(a) => verify_cmd(a, &mut out)?,
        ArrayCommand::Write(a) => crate::array_write::run(a, &mut out)?,
    }
    out.flush().map_err(Failure::stdout)
}

/// A value as JSON: numbers bare (non-finite floats as strings), text as strings.
fn json_value(datatype: Datatype, bytes: &[u8]) -> String {
    let text = value::format_value(datatype, bytes);
    if datatype.is_real() {
        match text.as_str() {
            "NaN" | "inf" | "-inf" => json_string(&text),
            _ => text,
        }
    } else if datatype.is_integer() || datatype.is_datetime() || datatype.is_time() {
        text
    } else {
        json_string(&text)
    }
}

/// A whole cell (one value, several, or a var-size cell) as JSON.
fn json_cell(datatype: Datatype, cell_val_num: u32, cell: &[u8]) -> String {
    if is_text(datatype) || cell_val_num == 1 {
        return json_value(datatype, cell);
    }
    let size = datatype.size();
    let items: Vec<String> = cell.chunks(size).map(|v| json_value(datatype, v)).collect();
    format!("[{}]", items.join(","))
}

/// Types whose cells print as one string.
fn is_text(datatype: Datatype) -> bool {
    matches!(
        datatype,
        Datatype::Char | Datatype::StringAscii | Datatype::StringUtf8
    ) || datatype.is_byte()
        || datatype == Datatype::Any
}

/// A cell as CSV text.
fn csv_cell(datatype: Datatype, cell_val_num: u32, cell: &[u8]) -> String {
    let text = if is_text(datatype) || cell_val_num == 1 {
        value::format_value(datatype, cell)
    } else {
        cell.chunks(datatype.size())
            .map(|v| value::format_value(datatype, v))
            .collect::<Vec<_>>()
            .join(" ")
    };
    if text.is_empty() && is_text(datatype) {
        "\"\"".into()
    } else if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

fn range_json(datatype: Datatype, r: &Range) -> String {
    format!(
        "[{},{}]",
        json_value(datatype, r.lo()),
        json_value(datatype, r.hi())
    )
}

fn range_text(datatype: Datatype, r: &Range) -> String {
    let q = |b: &[u8]| {
        let t = value::format_value(datatype, b);
        if matches!(r, Range::Var(..)) {
            format!("'{t}'")
        } else {
            t
        }
    };
    format!("({}, {})", q(r.lo()), q(r.hi()))
}

fn filters_text(p: &tdbfilter::Pipeline) -> String {
    tdbfilter::pipeline::spec::to_spec(p)
}

fn schema_text(s: &ArraySchema) -> String {
    let mut t = String::from("ArraySchema(\n  domain=Domain(*[\n");
    for d in &s.dimensions {
        let dom = d
            .domain
            .as_ref()
            .map_or("(None, None)".to_string(), |(lo, hi)| {
                range_text(d.datatype, &Range::Fixed(lo.clone(), hi.clone()))
            });
        let tile = d
            .tile_extent
            .as_ref()
            .map_or("None".to_string(), |e| value::format_value(d.datatype, e));
        t += &format!(
            "    Dim(name='{}', domain={dom}, tile={tile}, dtype='{}'{}{}),\n",
            d.name,
            d.datatype,
            if d.is_var() { ", var=True" } else { "" },
            if d.uses_coords_filters {
                String::new()
            } else {
                format!(", filters='{}'", filters_text(&d.filters))
            }
        );
    }
    t += "  ]),\n  attrs=[\n";
    for a in &s.attributes {
        let cvn = if a.is_var() {
            "var".to_string()
        } else {
            a.cell_val_num.to_string()
        };
        t += &format!(
            "    Attr(name='{}', dtype='{}', cell_val_num={cvn}, nullable={}, fill={}, filters='{}'{}),\n",
            a.name,
            a.datatype,
            if a.nullable { "True" } else { "False" },
            json_cell(
                a.datatype,
                if a.is_var() { 1 } else { a.cell_val_num },
                &a.fill_value
            ),
            filters_text(&a.filters),
            a.enumeration
                .as_ref()
                .map_or(String::new(), |e| format!(", enum_label='{e}'"))
        );
    }
    t += &format!(
        "  ],\n  cell_order='{}',\n  tile_order='{}',\n  capacity={},\n  sparse={},\n  allows_duplicates={},\n  coords_filters='{}',\n  offsets_filters='{}',\n  validity_filters='{}',\n  version={},\n)\n",
        s.cell_order.name(),
        s.tile_order.name(),
        s.capacity,
        if s.is_dense() { "False" } else { "True" },
        if s.allows_dups { "True" } else { "False" },
        filters_text(&s.coords_filters),
        filters_text(&s.offsets_filters),
        filters_text(&s.validity_filters),
        s.version
    );
    t
}

fn schema_json(s: &ArraySchema) -> String {
    let dims: Vec<String> = s
        .dimensions
        .iter()
        .map(|d| {
            format!(
                "{{\"name\":{},\"type\":{},\"var\":{},\"domain\":{},\"tile\":{},\"filters\":{}}}",
                json_string(&d.name),
                json_string(d.datatype.name()),
                d.is_var(),
                d.domain.as_ref().map_or("null".into(), |(l, h)| {
                    range_json(d.datatype, &Range::Fixed(l.clone(), h.clone()))
                }),
                d.tile_extent
                    .as_ref()
                    .map_or("null".into(), |e| json_value(d.datatype, e)),
                json_string(&filters_text(&d.filters))
            )
        })
        .collect();
    let attrs: Vec<String> = s
        .attributes
        .iter()
        .map(|a| {
            format!(
                "{{\"name\":{},\"type\":{},\"cell_val_num\":{},\"nullable\":{},\"fill\":{},\"fill_validity\":{},\"filters\":{},\"enumeration\":{}}}",
                json_string(&a.name),
                json_string(a.datatype.name()),
                if a.is_var() { "\"var\"".to_string() } else { a.cell_val_num.to_string() },
                a.nullable,
                json_cell(a.datatype, if a.is_var() { 1 } else { a.cell_val_num }, &a.fill_value),
                a.fill_validity,
                json_string(&filters_text(&a.filters)),
                a.enumeration.as_deref().map_or("null".into(), json_string)
            )
        })
        .collect();
    format!(
        "{{\"name\":{},\"version\":{},\"sparse\":{},\"allows_duplicates\":{},\"tile_order\":{},\"cell_order\":{},\"capacity\":{},\"coords_filters\":{},\"offsets_filters\":{},\"validity_filters\":{},\"dimensions\":[{}],\"attributes\":[{}],\"dimension_labels\":{},\"enumerations\":[{}]}}",
        json_string(&s.name),
        s.version,
        !s.is_dense(),
        s.allows_dups,
        json_string(s.tile_order.name()),
        json_string(s.cell_order.name()),
        s.capacity,
        json_string(&filters_text(&s.coords_filters)),
        json_string(&filters_text(&s.offsets_filters)),
        json_string(&filters_text(&s.validity_filters)),
        dims.join(","),
        attrs.join(","),
        s.labels.len(),
        s.enumerations
            .iter()
            .map(|(n, _)| json_string(n))
            .collect::<Vec<_>>()
            .join(",")
    )
}

fn info(args: &InfoArgs, out: &mut impl Write) -> CliResult<()> {
    let array = args.open.open()?;
    let s = array.schema();
    let meta = array.metadata()?;
    let ned_of = |ned: Option<&Vec<Range>>, json: bool| -> String {
        match ned {
            None => {
                if json {
                    "null".into()
                } else {
                    "None".into()
                }
            }
            Some(v) => {
                let parts: Vec<String> = v
                    .iter()
                    .zip(&s.dimensions)
                    .map(|(r, d)| {
                        if json {
                            range_json(d.datatype, r)
                        } else {
                            range_text(d.datatype, r)
                        }
                    })
                    .collect();
                if json {
                    format!("[{}]", parts.join(","))
                } else {
                    format!("({})", parts.join(", "))
                }
            }
        }
    };
    let ned = array.non_empty_domain();
    if args.json {
        let frags: Vec<String> = array
            .fragments()
            .iter()
            .map(|f| {
                let (t1, t2) = f.timestamps();
                format!(
                    "{{\"name\":{},\"timestamps\":[{t1},{t2}],\"version\":{},\"sparse\":{},\"cell_num\":{},\"tile_num\":{},\"non_empty_domain\":{},\"schema\":{},\"has_timestamps\":{},\"has_delete_meta\":{}}}",
                    json_string(f.name()),
                    f.meta.version,
                    !f.meta.dense,
                    f.meta.cell_num(),
                    f.meta.tile_num(),
                    ned_of(f.meta.non_empty_domain.as_ref(), true),
                    json_string(&f.schema.name),
                    f.meta.has_timestamps,
                    f.meta.has_delete_meta
                )
            })
            .collect();
        let md: Vec<String> = meta
            .iter()
            .map(|e| {
                format!(
                    "{}:{{\"type\":{},\"value\":{}}}",
                    json_string(&e.key),
                    json_string(e.datatype.name()),
                    metadata_json(e)
                )
            })
            .collect();
        outln!(
            out,
            "{{\"schema\":{},\"schemas\":{},\"fragments\":[{}],\"non_empty_domain\":{},\"metadata\":{{{}}}}}",
            schema_json(s),
            array.schemas().len(),
            frags.join(","),
            ned_of(ned.as_ref(), true),
            md.join(",")
        );
        return Ok(());
    }
    write!(out, "{}", schema_text(s)).map_err(Failure::stdout)?;
    outln!(out, "\nNon-empty domain: {}", ned_of(ned.as_ref(), false));
    outln!(out, "\nFragments ({}):", array.fragments().len());
    for (i, f) in array.fragments().iter().enumerate() {
        let (t1, t2) = f.timestamps();
        outln!(
            out,
            "  {i}: {}  timestamps=({t1}, {t2})  version={}  {}  cells={}  tiles={}  non_empty_domain={}",
            f.name(),
            f.meta.version,
            if f.meta.dense { "dense" } else { "sparse" },
            f.meta.cell_num(),
            f.meta.tile_num(),
            ned_of(f.meta.non_empty_domain.as_ref(), false)
        );
    }
    if !meta.is_empty() {
        outln!(out, "\nMetadata ({}):", meta.len());
        for e in &meta {
            outln!(out, "  {} ({}): {}", e.key, e.datatype, metadata_json(e));
        }
    }
    Ok(())
}

fn metadata_json(e: &tdbfilter::array::metadata::MetadataEntry) -> String {
    if is_text(e.datatype) {
        return json_value(e.datatype, &e.value);
    }
    let items: Vec<String> = e
        .value
        .chunks(e.datatype.size())
        .map(|v| json_value(e.datatype, v))
        .collect();
    if items.len() == 1 {
        items[0].clone()
    } else {
        format!("[{}]", items.join(","))
    }
}

/// Parses `--subarray` against the schema's dimensions.
fn parse_subarray(s: &ArraySchema, text: &str) -> CliResult<Vec<Range>> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() != s.dimensions.len() {
        return Err(Failure::new(format!(
            "--subarray: {} ranges for {} dimensions",
            parts.len(),
            s.dimensions.len()
        )));
    }
    parts
        .iter()
        .zip(&s.dimensions)
        .map(|(p, d)| {
            let (lo, hi) = p
                .split_once(':')
                .ok_or_else(|| Failure::new(format!("--subarray: '{p}' is not LO:HI")))?;
            if d.is_var() {
                return Ok(Range::Var(lo.as_bytes().to_vec(), hi.as_bytes().to_vec()));
            }
            Ok(Range::Fixed(
                parse_value(d.datatype, lo)?,
                parse_value(d.datatype, hi)?,
            ))
        })
        .collect()
}

fn parse_value(datatype: Datatype, text: &str) -> CliResult<Vec<u8>> {
    let bad = || Failure::new(format!("--subarray: '{text}' is not a {datatype} value"));
    Ok(match datatype {
        Datatype::Float32 => text
            .parse::<f32>()
            .map_err(|_| bad())?
            .to_le_bytes()
            .to_vec(),
        Datatype::Float64 => text
            .parse::<f64>()
            .map_err(|_| bad())?
            .to_le_bytes()
            .to_vec(),
        d => {
            let v = text.parse::<i128>().map_err(|_| bad())?;
            let bytes = value::from_i128(d, v);
            if value::as_i128(d, &bytes).ok() != Some(v) {
                return Err(bad());
            }
            bytes
        }
    })
}

fn cat(args: &CatArgs, out: &mut impl Write) -> CliResult<()> {
    let array = args.open.open()?;
    let s = array.schema();
    let fields: Vec<String> = if args.fields.is_empty() {
        s.dimensions
            .iter()
            .map(|d| d.name.clone())
            .chain(s.attributes.iter().map(|a| a.name.clone()))
            .collect()
    } else {
        args.fields.clone()
    };
    let subarray = args
        .subarray
        .as_deref()
        .map(|t| parse_subarray(s, t))
        .transpose()?;
    let names: Vec<&str> = fields.iter().map(String::as_str).collect();
    let data = array.read(&names, subarray.as_deref())?;
    match args.format {
        CatFormat::Raw => {
            let [one] = data.as_slice() else {
                return Err(Failure::new("--format raw prints exactly one --field"));
            };
            out.write_all(&one.data).map_err(Failure::stdout)?;
        }
        CatFormat::Json => {
            let n = data.first().map_or(0, |d| d.cell_count);
            let vals: Vec<String> = data
                .iter()
                .map(|f| {
                    let cells: Vec<String> = (0..f.cell_count as usize)
                        .map(|i| cell_json(f, i))
                        .collect();
                    format!("{}:[{}]", json_string(&f.name), cells.join(","))
                })
                .collect();
            let validity: Vec<String> = data
                .iter()
                .filter_map(|f| {
                    f.validity.as_ref().map(|v| {
                        let items: Vec<String> = v.iter().map(|b| b.to_string()).collect();
                        format!("{}:[{}]", json_string(&f.name), items.join(","))
                    })
                })
                .collect();
            outln!(
                out,
                "{{\"cell_count\":{n},\"fields\":{{{}}},\"validity\":{{{}}}}}",
                vals.join(","),
                validity.join(",")
            );
        }
        CatFormat::Csv => {
            outln!(out, "{}", fields.join(","));
            let n = data.first().map_or(0, |d| d.cell_count) as usize;
            for i in 0..n {
                let row: Vec<String> = data
                    .iter()
                    .map(|f| {
                        if f.validity.as_ref().is_some_and(|v| v[i] == 0) {
                            String::new()
                        } else {
                            csv_cell(f.datatype, cvn(f), f.cell(i))
                        }
                    })
                    .collect();
                outln!(out, "{}", row.join(","));
            }
        }
    }
    Ok(())
}

fn cvn(f: &FieldData) -> u32 {
    if f.cell_val_num == VAR_NUM {
        1
    } else {
        f.cell_val_num
    }
}

fn cell_json(f: &FieldData, i: usize) -> String {
    if f.cell_val_num == VAR_NUM && !is_text(f.datatype) {
        // Var-size numbers: a list.
        let items: Vec<String> = f
            .cell(i)
            .chunks(f.datatype.size())
            .map(|v| json_value(f.datatype, v))
            .collect();
        return format!("[{}]", items.join(","));
    }
    json_cell(f.datatype, cvn(f), f.cell(i))
}

fn verify_cmd(args: &VerifyArgs, out: &mut impl Write) -> CliResult<()> {
    let (array, broken) = Array::open_tolerant(&args.open.path, &args.open.options()?)
        .map_err(|e| Failure::from(e).context(&args.open.path))?;
    let report = verify::verify(&array, broken);
    for d in &report.damages {
        outln!(out, "{d}");
    }
    outln!(
        out,
        "{} fragments, {} tiles checked: {}",
        report.fragments,
        report.tiles,
        if report.damages.is_empty() {
            "the array is whole".to_string()
        } else {
            format!("{} damaged", report.damages.len())
        }
    );
    if report.damages.is_empty() {
        Ok(())
    } else {
        out.flush().map_err(Failure::stdout)?;
        Err(Failure::new(format!(
            "{}: {} damaged fragment files or tiles",
            args.open.path,
            report.damages.len()
        )))
    }
}
