//! `tdbf array consolidate|vacuum|delete-fragments|remove|evolve`: the array lifecycle
//! (src/array/lifecycle/) as TileDB 2.30 does it: consolidation, vacuuming after it, deleting
//! fragments by timestamp range, removing arrays and schema evolution.

use crate::common::{CliResult, Failure, parse_key, print_json};
use clap::Args;
use serde::Serialize;
use serde_json::{Value, json};
use std::io::Write;
use std::time::Duration;
use tdbfilter::array::lifecycle::{
    self, ConsolidateMode, ConsolidateOptions, EvolveOptions, VacuumMode, VacuumOptions,
};
use tdbfilter::storage::StorageConfig;

/// Where the array is and how to reach it.
#[derive(Debug, Clone, Args)]
pub struct LifecycleTarget {
    /// The array: a folder, or s3://bucket/path, azure://container/path, gs://bucket/path.
    #[arg(value_name = "ARRAY")]
    pub path: String,
    /// Object-store option KEY=VALUE (repeatable), e.g. vfs.s3.endpoint_override=host:port,
    /// vfs.s3.scheme=http, s3.region=us-east-1; unset ones come from the environment
    /// (AWS_*, AZURE_STORAGE_*, GOOGLE_*).
    #[arg(long = "config", value_name = "KEY=VALUE")]
    pub config: Vec<String>,
    /// Print JSON instead of one line per file.
    #[arg(long)]
    pub json: bool,
}

/// `tdbf array consolidate`. `--config` takes TileDB's `sm.consolidation.*` settings
/// (amplification, steps, step_min_frags, step_max_frags, step_size_ratio, buffer_size,
/// timestamp_start, timestamp_end, purge_deleted_cells, mode) beside the object-store options.
#[derive(Debug, Args)]
pub struct ConsolidateArgs {
    #[command(flatten)]
    pub target: LifecycleTarget,
    /// What to consolidate (TileDB's sm.consolidation.mode): fragments, commits,
    /// fragment_meta or array_meta. Default: --config's sm.consolidation.mode, else fragments.
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// Only the fragments (or, in array_meta mode, metadata files) inside T1:T2 (ms,
    /// inclusive); narrows sm.consolidation.timestamp_start/end.
    #[arg(long, value_name = "T1:T2")]
    pub timestamp: Option<String>,
    /// Fragments mode: merge exactly these fragments (names or __fragments/ paths;
    /// repeatable) instead of following TileDB's plan.
    #[arg(long = "fragment", value_name = "NAME")]
    pub fragments: Vec<String>,
    /// AES-256-GCM key of an encrypted array: 32 characters, or hex:<64 hex digits>.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
}

/// `tdbf array vacuum`.
#[derive(Debug, Args)]
pub struct VacuumArgs {
    #[command(flatten)]
    pub target: LifecycleTarget,
    /// What to vacuum (TileDB's sm.vacuum.mode): fragments, commits, fragment_meta or
    /// array_meta.
    #[arg(long, value_name = "MODE", default_value = "fragments")]
    pub mode: String,
    /// Fragments mode: remove the fragment folders of killed writers (no commit marker)
    /// unchanged for longer than SECONDS (TileDB never removes them).
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub grace: u64,
}

/// `tdbf array delete-fragments`.
#[derive(Debug, Args)]
pub struct DeleteFragmentsArgs {
    #[command(flatten)]
    pub target: LifecycleTarget,
    /// The fragments to delete: those whose timestamps lie inside T1:T2 (ms, inclusive).
    #[arg(long, value_name = "T1:T2")]
    pub timestamp: String,
}

/// `tdbf array remove`.
#[derive(Debug, Args)]
pub struct RemoveArgs {
    #[command(flatten)]
    pub target: LifecycleTarget,
}

/// `tdbf array evolve`. The changes apply in this order: attributes dropped, enumerations
/// added, enumerations extended, attributes added, enumerations dropped, the current domain
/// expanded (so an attribute can be dropped and added back, or added with a new enumeration).
#[derive(Debug, Args)]
pub struct EvolveArgs {
    #[command(flatten)]
    pub target: LifecycleTarget,
    /// Add an attribute, in the form `tdbf array info --json` prints one (repeatable).
    #[arg(long = "add-attribute", value_name = "JSON")]
    pub add_attribute: Vec<String>,
    /// Drop an attribute (repeatable).
    #[arg(long = "drop-attribute", value_name = "NAME")]
    pub drop_attribute: Vec<String>,
    /// Add an enumeration, in the form `tdbf array info --json` prints one (repeatable).
    #[arg(long = "add-enumeration", value_name = "JSON")]
    pub add_enumeration: Vec<String>,
    /// Append values (a JSON list) to an enumeration (repeatable).
    #[arg(long = "extend-enumeration", value_name = "NAME=JSON")]
    pub extend_enumeration: Vec<String>,
    /// Drop an enumeration no attribute uses (repeatable).
    #[arg(long = "drop-enumeration", value_name = "NAME")]
    pub drop_enumeration: Vec<String>,
    /// Expand the current domain to one [low, high] per dimension, e.g. '[[0, 199]]'.
    #[arg(long = "expand-current-domain", value_name = "JSON")]
    pub expand_current_domain: Option<String>,
    /// The new schema's timestamp (ms; an earlier one than the newest schema's is taken as
    /// TileDB takes it). Default: now, later than every schema's.
    #[arg(long, value_name = "MS")]
    pub timestamp: Option<u64>,
    /// AES-256-GCM key of an encrypted array: 32 characters, or hex:<64 hex digits>.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
}

/// Files removed and written, relative to the array folder.
#[derive(Serialize)]
struct Report<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    fragments: Option<&'a [String]>,
    removed: &'a [String],
    written: &'a [String],
}

fn print_report(target: &LifecycleTarget, r: &Report, out: &mut impl Write) -> CliResult<()> {
    if target.json {
        return print_json(out, r);
    }
    for f in r.removed {
        outln!(out, "removed {f}");
    }
    for f in r.written {
        outln!(out, "wrote {f}");
    }
    Ok(())
}

/// What a consolidation merged and wrote, relative to the array folder.
#[derive(Serialize)]
struct ConsolidateReport<'a> {
    /// Fragments mode: per step, the merged fragments' names.
    merged: &'a [Vec<String>],
    written: &'a [String],
}

/// `T1:T2` in milliseconds.
fn parse_range(option: &str, text: &str) -> CliResult<(u64, u64)> {
    let num = |s: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| Failure::new(format!("{option}: '{s}' is not a number")))
    };
    let (t1, t2) = text
        .split_once(':')
        .ok_or_else(|| Failure::new(format!("{option}: expected T1:T2 (ms)")))?;
    Ok((num(t1)?, num(t2)?))
}

/// The consolidation options of `args`: `--config`'s `sm.consolidation.*` settings and
/// object-store options, then `--mode`, `--timestamp`, `--fragment` and `--key`.
fn consolidate_options(args: &ConsolidateArgs) -> CliResult<ConsolidateOptions> {
    let mut options = ConsolidateOptions::new(ConsolidateMode::Fragments);
    let mut storage = StorageConfig::new();
    for pair in &args.target.config {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| Failure::new(format!("--config: '{pair}' is not KEY=VALUE")))?;
        let (k, v) = (k.trim(), v.trim());
        let set = if k.starts_with("sm.consolidation.") {
            options.set(k, v)
        } else {
            storage.set(k, v)
        };
        set.map_err(|e| Failure::from(e).context("--config"))?;
    }
    options.config = storage;
    if let Some(m) = &args.mode {
        options.mode = ConsolidateMode::parse(m).map_err(|e| Failure::from(e).context("--mode"))?;
    }
    if let Some(t) = &args.timestamp {
        let (t1, t2) = parse_range("--timestamp", t)?;
        if t1 > t2 {
            return Err(Failure::new(format!(
                "--timestamp: the start {t1} is after the end {t2}"
            )));
        }
        options.timestamp_start = options.timestamp_start.max(t1);
        options.timestamp_end = options.timestamp_end.min(t2);
    }
    if !args.fragments.is_empty() {
        if options.mode != ConsolidateMode::Fragments {
            return Err(Failure::new(
                "--fragment: a fragment list is only taken in the fragments mode",
            ));
        }
        options.fragment_list = Some(args.fragments.clone());
    }
    let key = args.key.as_deref().map(parse_key).transpose()?;
    options.key = key.map(|k| k.to_vec());
    Ok(options)
}

/// Runs `tdbf array consolidate`: prints what was merged and written.
pub fn consolidate(args: &ConsolidateArgs, out: &mut impl Write) -> CliResult<()> {
    let t = &args.target;
    let options = consolidate_options(args)?;
    let r =
        lifecycle::consolidate(&t.path, &options).map_err(|e| Failure::from(e).context(&t.path))?;
    if t.json {
        return print_json(
            out,
            &ConsolidateReport {
                merged: &r.merged,
                written: &r.written,
            },
        );
    }
    for step in &r.merged {
        outln!(out, "merged {}", step.join(" "));
    }
    for f in &r.written {
        outln!(out, "wrote {f}");
    }
    Ok(())
}

/// Runs `tdbf array vacuum`: prints what was removed and written.
pub fn vacuum(args: &VacuumArgs, out: &mut impl Write) -> CliResult<()> {
    let t = &args.target;
    let mut options = VacuumOptions::new(VacuumMode::parse(&args.mode)?);
    options.uncommitted_grace = Some(Duration::from_secs(args.grace));
    options.config = crate::array::storage_config(&t.config)?;
    let r = lifecycle::vacuum(&t.path, &options).map_err(|e| Failure::from(e).context(&t.path))?;
    let report = Report {
        fragments: None,
        removed: &r.removed,
        written: &r.written,
    };
    print_report(t, &report, out)
}

/// Runs `tdbf array delete-fragments`.
pub fn delete_fragments(args: &DeleteFragmentsArgs, out: &mut impl Write) -> CliResult<()> {
    let t = &args.target;
    let (t1, t2) = parse_range("--timestamp", &args.timestamp)?;
    let r = lifecycle::delete_fragments(&t.path, t1, t2, &crate::array::storage_config(&t.config)?)
        .map_err(|e| Failure::from(e).context(&t.path))?;
    let report = Report {
        fragments: Some(&r.fragments),
        removed: &r.removed,
        written: &r.written,
    };
    print_report(t, &report, out)
}

/// Runs `tdbf array remove`.
pub fn remove(args: &RemoveArgs, out: &mut impl Write) -> CliResult<()> {
    let t = &args.target;
    let r = lifecycle::delete_array(&t.path, &crate::array::storage_config(&t.config)?)
        .map_err(|e| Failure::from(e).context(&t.path))?;
    let report = Report {
        fragments: Some(&r.fragments),
        removed: &r.removed,
        written: &r.written,
    };
    print_report(t, &report, out)
}

fn json_arg(option: &str, text: &str) -> CliResult<Value> {
    serde_json::from_str(text).map_err(|e| Failure::new(format!("{option}: {e}")))
}

/// The evolve options as the core's JSON list of changes.
fn changes(args: &EvolveArgs) -> CliResult<Value> {
    let mut list = Vec::new();
    for n in &args.drop_attribute {
        list.push(json!({ "drop_attribute": n }));
    }
    for e in &args.add_enumeration {
        list.push(json!({ "add_enumeration": json_arg("--add-enumeration", e)? }));
    }
    for e in &args.extend_enumeration {
        let (name, values) = e
            .split_once('=')
            .ok_or_else(|| Failure::new(format!("--extend-enumeration: '{e}' is not NAME=JSON")))?;
        let values = json_arg("--extend-enumeration", values)?;
        list.push(json!({ "extend_enumeration": { "name": name, "values": values } }));
    }
    for a in &args.add_attribute {
        list.push(json!({ "add_attribute": json_arg("--add-attribute", a)? }));
    }
    for n in &args.drop_enumeration {
        list.push(json!({ "drop_enumeration": n }));
    }
    if let Some(d) = &args.expand_current_domain {
        list.push(json!({
            "expand_current_domain": json_arg("--expand-current-domain", d)?
        }));
    }
    Ok(Value::Array(list))
}

/// Runs `tdbf array evolve`: prints the new schema file's name.
pub fn evolve(args: &EvolveArgs, out: &mut impl Write) -> CliResult<()> {
    let t = &args.target;
    let key = args.key.as_deref().map(parse_key).transpose()?;
    let options = EvolveOptions {
        key: key.map(|k| k.to_vec()),
        timestamp: args.timestamp,
        config: crate::array::storage_config(&t.config)?,
    };
    let name = lifecycle::evolve_json(&t.path, &changes(args)?.to_string(), &options)
        .map_err(|e| Failure::from(e).context(&t.path))?;
    if t.json {
        print_json(out, &json!({ "schema": format!("__schema/{name}") }))
    } else {
        outln!(out, "wrote __schema/{name}");
        Ok(())
    }
}
