//! `tdbf array info|cat|verify|create|write|metadata|delete`: a TileDB array folder's schema and fragments, its
//! cells, an integrity check of every tile, and new arrays from a schema JSON (src/array/).

use crate::common::{
    CliResult, Failure, parse_coordinate, parse_key, parse_size, print_json, to_json,
};
use clap::{Args, Subcommand, ValueEnum};
use serde::{Serialize, Serializer};
use std::io::{self, Write};
use tdbfilter::Datatype;
use tdbfilter::array::metadata::MetadataEntry;
use tdbfilter::array::schema::{ArraySchema, Attribute, Range, VAR_NUM};
use tdbfilter::array::{Array, FieldData, OpenOptions, read::verify, value};
use tdbfilter::storage::StorageConfig;

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
    /// Print aggregates (count, sum, min, max, mean, null_count) over ranges as one JSON
    /// object, e.g. {"count": 4, "sum(a)": 10}.
    Agg(crate::array_query::AggArgs),
    /// Decode every tile of every fragment (checksums verified), check the fragment metadata
    /// against the files, and print each damaged tile as `fragment/field/tile: error`. Exit
    /// status 0 only if the array is whole.
    Verify(VerifyArgs),
    /// Create an array from a schema JSON: what `tdbf array info --json` prints, whole or its
    /// `schema` member (docs/ARRAYS.md). TileDB's rules apply, with its reasons.
    Create(CreateArgs),
    /// Write one fragment from files of cells (dense: a box; sparse: cells in global order)
    /// and print its name.
    Write(crate::array_write::WriteArgs),
    /// Put or delete an array metadata entry (one new `__meta` file, as TileDB writes it) and
    /// print the file's name.
    Metadata(crate::array_metadata::MetadataArgs),
    /// Consolidate fragments, commits, fragment metadata or array metadata exactly as TileDB
    /// 2.30 does (one mode per call; TileDB's sm.consolidation.* settings), and print what
    /// was merged and written. `vacuum` removes what it made redundant.
    Consolidate(crate::array_lifecycle::ConsolidateArgs),
    /// Remove what a consolidation made redundant, exactly as TileDB 2.30 vacuums (one mode
    /// per call), and the fragment folders of killed writers after a grace period.
    Vacuum(crate::array_lifecycle::VacuumArgs),
    /// Delete the fragments inside a timestamp range (TileDB's delete_fragments).
    DeleteFragments(crate::array_lifecycle::DeleteFragmentsArgs),
    /// Remove the array (TileDB's delete_array): what TileDB made; other files stay.
    Remove(crate::array_lifecycle::RemoveArgs),
    /// Evolve the schema: add or drop attributes and enumerations, extend enumerations,
    /// expand the current domain (one new schema file, TileDB's rules).
    Evolve(crate::array_lifecycle::EvolveArgs),
    /// Delete the cells of a sparse array matching a condition (TileDB's delete query: one
    /// `.del` commit; reads at or after its timestamp no longer see them) and print the
    /// commit's name.
    Delete(crate::array_delete::DeleteArgs),
}

/// Options every array subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct OpenArgs {
    /// The array: a folder, or s3://bucket/path, azure://container/path, gs://bucket/path.
    #[arg(value_name = "ARRAY")]
    pub path: String,
    /// Object-store option KEY=VALUE (repeatable), e.g. vfs.s3.endpoint_override=host:port,
    /// vfs.s3.scheme=http, s3.region=us-east-1; unset ones come from the environment
    /// (AWS_*, AZURE_STORAGE_*, GOOGLE_*).
    #[arg(long = "config", value_name = "KEY=VALUE")]
    pub config: Vec<String>,
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
            config: storage_config(&self.config)?,
        })
    }

    pub(crate) fn open(&self) -> CliResult<Array> {
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
    #[arg(long, value_name = "LO:HI,...", conflicts_with_all = ["ranges", "layout", "cond"])]
    pub subarray: Option<String>,
    /// A range DIM=LO:HI (repeatable, several per dimension; a dimension without one: its
    /// whole domain). Cells come back as TileDB returns them for the layout.
    #[arg(long = "range", value_name = "DIM=LO:HI")]
    pub ranges: Vec<String>,
    /// Result order: row, col, global or unordered (sparse only); default row.
    #[arg(long, value_name = "LAYOUT")]
    pub layout: Option<String>,
    /// A query condition in TileDB-Py's syntax, e.g. "a < 5 and s == 'x'" (dense arrays:
    /// failing cells read as fill values, null where nullable; sparse arrays: dropped).
    #[arg(long, value_name = "EXPR")]
    pub cond: Option<String>,
    /// Also print the query's statistics (tiles decoded, pruned, bytes decoded) on standard
    /// error, as one JSON object.
    #[arg(long)]
    pub stats: bool,
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

/// `tdbf array create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The new array: a folder, or s3://bucket/path, azure://container/path, gs://bucket/path.
    #[arg(value_name = "ARRAY")]
    pub path: String,
    /// Object-store option KEY=VALUE (repeatable), e.g. vfs.s3.endpoint_override=host:port,
    /// vfs.s3.scheme=http, s3.region=us-east-1; unset ones come from the environment
    /// (AWS_*, AZURE_STORAGE_*, GOOGLE_*).
    #[arg(long = "config", value_name = "KEY=VALUE")]
    pub config: Vec<String>,
    /// The schema JSON file (`-` reads standard input).
    #[arg(long, value_name = "FILE")]
    pub schema: String,
    /// Encrypt with this AES-256-GCM key: 32 characters, or hex:<64 hex digits>.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
}

/// Runs `tdbf array`.
pub fn run(args: &ArrayArgs) -> CliResult<()> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match &args.command {
        ArrayCommand::Info(a) => info(a, &mut out)?,
        ArrayCommand::Cat(a) => cat(a, &mut out)?,
        ArrayCommand::Agg(a) => crate::array_query::agg(a, &mut out)?,
        ArrayCommand::Verify(a) => verify_cmd(a, &mut out)?,
        ArrayCommand::Create(a) => create(a)?,
        ArrayCommand::Write(a) => crate::array_write::run(a, &mut out)?,
        ArrayCommand::Metadata(a) => crate::array_metadata::run(a, &mut out)?,
        ArrayCommand::Consolidate(a) => crate::array_lifecycle::consolidate(a, &mut out)?,
        ArrayCommand::Vacuum(a) => crate::array_lifecycle::vacuum(a, &mut out)?,
        ArrayCommand::DeleteFragments(a) => crate::array_lifecycle::delete_fragments(a, &mut out)?,
        ArrayCommand::Remove(a) => crate::array_lifecycle::remove(a, &mut out)?,
        ArrayCommand::Evolve(a) => crate::array_lifecycle::evolve(a, &mut out)?,
        ArrayCommand::Delete(a) => crate::array_delete::run(a, &mut out)?,
    }
    out.flush().map_err(Failure::stdout)
}

/// One value of `datatype` as JSON: integers (and DATETIME/TIME counts) as numbers, finite
/// floats as numbers (FLOAT32 with its own shortest digits), NaN and the infinities as the
/// strings `"NaN"`, `"inf"` and `"-inf"`, other types as text (invalid UTF-8 replaced by
/// U+FFFD); a number cut short (a var-size attribute's fill value may have fewer bytes than one
/// value) is `null`.
pub(crate) struct JsonValue<'a> {
    pub(crate) datatype: Datatype,
    pub(crate) bytes: &'a [u8],
}

impl Serialize for JsonValue<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let datatype = self.datatype;
        if datatype.is_real() {
            let Ok(v) = value::as_f64(datatype, self.bytes) else {
                return s.serialize_none();
            };
            if v.is_nan() {
                s.serialize_str("NaN")
            } else if v.is_infinite() {
                s.serialize_str(if v > 0.0 { "inf" } else { "-inf" })
            } else if datatype == Datatype::Float32 {
                s.serialize_f32(v as f32)
            } else {
                s.serialize_f64(v)
            }
        } else if datatype.is_integer() || datatype.is_datetime() || datatype.is_time() {
            match value::as_i128(datatype, self.bytes) {
                Ok(v) => match i64::try_from(v) {
                    Ok(v) => s.serialize_i64(v),
                    // Only UINT64 values above i64::MAX get here.
                    Err(_) => s.serialize_u64(u64::try_from(v).unwrap_or(u64::MAX)),
                },
                Err(_) => s.serialize_none(),
            }
        } else {
            s.serialize_str(&String::from_utf8_lossy(self.bytes))
        }
    }
}

/// The values of `bytes` one by one (the last one possibly cut short), as a JSON list.
struct JsonValues<'a> {
    datatype: Datatype,
    bytes: &'a [u8],
}

impl Serialize for JsonValues<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            self.bytes
                .chunks(self.datatype.size())
                .map(|bytes| JsonValue {
                    datatype: self.datatype,
                    bytes,
                }),
        )
    }
}

/// A whole cell as JSON: one value, or a list of the values of a cell of several; text types
/// as one string.
struct JsonCell<'a> {
    datatype: Datatype,
    cell_val_num: u32,
    bytes: &'a [u8],
}

impl Serialize for JsonCell<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (datatype, bytes) = (self.datatype, self.bytes);
        if is_text(datatype) || self.cell_val_num == 1 {
            JsonValue { datatype, bytes }.serialize(s)
        } else {
            JsonValues { datatype, bytes }.serialize(s)
        }
    }
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

/// A range as the JSON list `[lo, hi]`.
fn range_json(datatype: Datatype, r: &Range) -> [JsonValue<'_>; 2] {
    [
        JsonValue {
            datatype,
            bytes: r.lo(),
        },
        JsonValue {
            datatype,
            bytes: r.hi(),
        },
    ]
}

/// A non-empty domain as JSON: one `[lo, hi]` per dimension.
fn domain_json<'a>(s: &ArraySchema, ranges: &'a [Range]) -> Vec<[JsonValue<'a>; 2]> {
    ranges
        .iter()
        .zip(&s.dimensions)
        .map(|(r, d)| range_json(d.datatype, r))
        .collect()
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

fn schema_text(s: &ArraySchema) -> CliResult<String> {
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
            to_json(&fill_json(a))?,
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
    Ok(t)
}

/// An attribute's fill value as JSON: one cell (of a var-size attribute: its first value, or
/// its text).
fn fill_json(a: &Attribute) -> JsonCell<'_> {
    JsonCell {
        datatype: a.datatype,
        cell_val_num: if a.is_var() { 1 } else { a.cell_val_num },
        bytes: &a.fill_value,
    }
}

/// A fragment in `tdbf array info --json`.
#[derive(Serialize)]
struct FragmentJson<'a> {
    name: &'a str,
    timestamps: [u64; 2],
    version: u32,
    sparse: bool,
    cell_num: u64,
    tile_num: u64,
    non_empty_domain: Option<Vec<[JsonValue<'a>; 2]>>,
    schema: &'a str,
    has_timestamps: bool,
    has_delete_meta: bool,
}

/// `tdbf array info --json`.
#[derive(Serialize)]
struct InfoJson<'a> {
    schema: serde_json::Value,
    schemas: usize,
    fragments: Vec<FragmentJson<'a>>,
    non_empty_domain: Option<Vec<[JsonValue<'a>; 2]>>,
    metadata: MetadataJson<'a>,
}

/// The array metadata as a JSON object: key → `{"type": …, "value": …}`, in key order.
pub(crate) struct MetadataJson<'a>(pub(crate) &'a [MetadataEntry]);

impl Serialize for MetadataJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|e| (&e.key, MetadataEntryJson::of(e))))
    }
}

/// One metadata entry's type and value.
#[derive(Serialize)]
struct MetadataEntryJson<'a> {
    #[serde(rename = "type")]
    datatype: &'static str,
    value: MetadataValueJson<'a>,
}

impl MetadataEntryJson<'_> {
    fn of(e: &MetadataEntry) -> MetadataEntryJson<'_> {
        MetadataEntryJson {
            datatype: e.datatype.name(),
            value: MetadataValueJson(e),
        }
    }
}

/// A metadata value: text as one string, a single number bare, several numbers as a list.
pub(crate) struct MetadataValueJson<'a>(pub(crate) &'a MetadataEntry);

impl Serialize for MetadataValueJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (datatype, bytes) = (self.0.datatype, &self.0.value[..]);
        if is_text(datatype) || (1..=datatype.size()).contains(&bytes.len()) {
            JsonValue { datatype, bytes }.serialize(s)
        } else {
            JsonValues { datatype, bytes }.serialize(s)
        }
    }
}

fn info(args: &InfoArgs, out: &mut impl Write) -> CliResult<()> {
    let array = args.open.open()?;
    let s = array.schema();
    let meta = array.metadata()?;
    let ned = array.non_empty_domain();
    if args.json {
        let fragments = array
            .fragments()
            .iter()
            .map(|f| {
                let (t1, t2) = f.timestamps();
                FragmentJson {
                    name: f.name(),
                    timestamps: [t1, t2],
                    version: f.meta.version,
                    sparse: !f.meta.dense,
                    cell_num: f.meta.cell_num(),
                    tile_num: f.meta.tile_num(),
                    non_empty_domain: f
                        .meta
                        .non_empty_domain
                        .as_deref()
                        .map(|r| domain_json(s, r)),
                    schema: &f.schema.name,
                    has_timestamps: f.meta.has_timestamps,
                    has_delete_meta: f.meta.has_delete_meta,
                }
            })
            .collect();
        let report = InfoJson {
            schema: schema_with_enumerations(&array)?.to_json(),
            schemas: array.schemas().len(),
            fragments,
            non_empty_domain: ned.as_deref().map(|r| domain_json(s, r)),
            metadata: MetadataJson(&meta),
        };
        return print_json(out, &report);
    }
    let ned_text = |ned: Option<&[Range]>| -> String {
        ned.map_or("None".into(), |v| {
            let parts: Vec<String> = v
                .iter()
                .zip(&s.dimensions)
                .map(|(r, d)| range_text(d.datatype, r))
                .collect();
            format!("({})", parts.join(", "))
        })
    };
    write!(out, "{}", schema_text(s)?).map_err(Failure::stdout)?;
    outln!(out, "\nNon-empty domain: {}", ned_text(ned.as_deref()));
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
            ned_text(f.meta.non_empty_domain.as_deref())
        );
    }
    if !meta.is_empty() {
        outln!(out, "\nMetadata ({}):", meta.len());
        for e in &meta {
            outln!(
                out,
                "  {} ({}): {}",
                e.key,
                e.datatype,
                to_json(&MetadataValueJson(e))?
            );
        }
    }
    Ok(())
}

/// The latest schema with its enumerations' values loaded, so its JSON recreates it.
fn schema_with_enumerations(array: &Array) -> CliResult<ArraySchema> {
    let mut s = array.schema().clone();
    for (name, _) in &array.schema().enumerations {
        s.loaded_enumerations.push(array.enumeration(name)?);
    }
    Ok(s)
}

fn create(args: &CreateArgs) -> CliResult<()> {
    let json = if args.schema == "-" {
        let mut text = String::new();
        io::Read::read_to_string(&mut io::stdin(), &mut text)
            .map_err(|e| Failure::new(format!("--schema -: {e}")))?;
        text
    } else {
        std::fs::read_to_string(&args.schema)
            .map_err(|e| Failure::new(format!("--schema {}: {e}", args.schema)))?
    };
    let schema =
        ArraySchema::from_json(&json).map_err(|e| Failure::from(e).context(&args.schema))?;
    let key = args.key.as_deref().map(parse_key).transpose()?;
    tdbfilter::array::create(
        &args.path,
        &schema,
        key.as_deref().map(|k| &k[..]),
        &storage_config(&args.config)?,
    )
    .map_err(|e| Failure::from(e).context(&args.path))
}

/// The `--config KEY=VALUE` options.
pub(crate) fn storage_config(pairs: &[String]) -> CliResult<StorageConfig> {
    let mut c = StorageConfig::new();
    for p in pairs {
        c.set_pair(p)
            .map_err(|e| Failure::from(e).context("--config"))?;
    }
    Ok(c)
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
                parse_coordinate("--subarray", d.datatype, lo)?,
                parse_coordinate("--subarray", d.datatype, hi)?,
            ))
        })
        .collect()
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
    let data = if args.ranges.is_empty() && args.layout.is_none() && args.cond.is_none() {
        array.read(&names, subarray.as_deref())?
    } else {
        crate::array_query::read(
            &array,
            &names,
            &args.ranges,
            args.layout.as_deref(),
            args.cond.as_deref(),
            args.stats,
        )?
    };
    match args.format {
        CatFormat::Raw => {
            let [one] = data.as_slice() else {
                return Err(Failure::new("--format raw prints exactly one --field"));
            };
            out.write_all(&one.data).map_err(Failure::stdout)?;
        }
        CatFormat::Json => {
            let report = CatJson {
                cell_count: data.first().map_or(0, |d| d.cell_count),
                fields: FieldsJson(&data),
                validity: ValidityJson(&data),
            };
            print_json(out, &report)?;
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

/// `tdbf array cat --format json`: the cell count, each field's cells (name → list of cells)
/// and each nullable field's validity (name → list of 0/1).
#[derive(Serialize)]
struct CatJson<'a> {
    cell_count: u64,
    fields: FieldsJson<'a>,
    validity: ValidityJson<'a>,
}

/// Field name → its cells (var-size numbers as lists), in the order the fields were asked for.
struct FieldsJson<'a>(&'a [FieldData]);

impl Serialize for FieldsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|f| (&f.name, CellsJson(f))))
    }
}

/// The cells of one field.
struct CellsJson<'a>(&'a FieldData);

impl Serialize for CellsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self.0;
        s.collect_seq((0..f.cell_count as usize).map(|i| JsonCell {
            datatype: f.datatype,
            cell_val_num: f.cell_val_num,
            bytes: f.cell(i),
        }))
    }
}

/// Nullable field name → its validity values.
struct ValidityJson<'a>(&'a [FieldData]);

impl Serialize for ValidityJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(
            self.0
                .iter()
                .filter_map(|f| f.validity.as_ref().map(|v| (&f.name, v))),
        )
    }
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
