//! `tdbf group create|add|remove|info|metadata`: TileDB groups (src/group/), as TileDB 2.30
//! stores them: each change is one write session (one `__group` details file or one
//! `__meta` file).

use crate::array::{MetadataJson, MetadataValueJson};
use crate::common::{CliResult, Failure, parse_datatype, print_json};
use clap::{Args, Subcommand};
use serde::Serialize;
use std::io::Write;
use tdbfilter::array::metadata::{MetadataChange, MetadataEntry};
use tdbfilter::group::{self, Group, GroupChanges, GroupOptions};

/// `tdbf group …`.
#[derive(Debug, Args)]
pub struct GroupArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: GroupCommand,
}

/// The group subcommands.
#[derive(Debug, Subcommand)]
pub enum GroupCommand {
    /// Create an empty group (the folder and missing parents).
    Create(GroupTarget),
    /// Add an array or group as a member.
    Add(AddArgs),
    /// Remove a member by name, or by URI when it has no name.
    Remove(RemoveArgs),
    /// Print the members (name, type, location) and the group metadata.
    Info(InfoArgs),
    /// Put or delete a group metadata entry.
    Metadata(MetadataArgs),
}

/// The group and how to reach it.
#[derive(Debug, Clone, Args)]
pub struct GroupTarget {
    /// The group: a folder, or s3://bucket/path, azure://container/path, gs://bucket/path.
    #[arg(value_name = "GROUP")]
    pub path: String,
    /// Object-store option KEY=VALUE (repeatable), e.g. vfs.s3.endpoint_override=host:port,
    /// vfs.s3.scheme=http, s3.region=us-east-1; unset ones come from the environment
    /// (AWS_*, AZURE_STORAGE_*, GOOGLE_*).
    #[arg(long = "config", value_name = "KEY=VALUE", global = true)]
    pub config: Vec<String>,
}

impl GroupTarget {
    fn options(&self, timestamp: Option<u64>) -> CliResult<GroupOptions> {
        Ok(GroupOptions {
            timestamp_end: timestamp,
            config: crate::array::storage_config(&self.config)?,
            ..Default::default()
        })
    }
}

/// `tdbf group add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    #[command(flatten)]
    pub target: GroupTarget,
    /// The array or group to add.
    #[arg(value_name = "MEMBER")]
    pub member: String,
    /// The member's name.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// MEMBER is relative to the group's folder (and stored so).
    #[arg(long)]
    pub relative: bool,
    /// Write at this timestamp (ms) instead of now.
    #[arg(long, value_name = "MS")]
    pub timestamp: Option<u64>,
}

/// `tdbf group remove`.
#[derive(Debug, Args)]
pub struct RemoveArgs {
    #[command(flatten)]
    pub target: GroupTarget,
    /// The member's name, or its URI when it has none.
    #[arg(value_name = "NAME_OR_URI")]
    pub member: String,
    /// Write at this timestamp (ms) instead of now.
    #[arg(long, value_name = "MS")]
    pub timestamp: Option<u64>,
}

/// `tdbf group info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    #[command(flatten)]
    pub target: GroupTarget,
    /// Open at this timestamp (ms) instead of now (time travel).
    #[arg(long, value_name = "MS")]
    pub timestamp: Option<u64>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `tdbf group metadata`.
#[derive(Debug, Args)]
pub struct MetadataArgs {
    #[command(flatten)]
    pub target: GroupTarget,
    /// Write at this timestamp (ms) instead of now.
    #[arg(long, value_name = "MS", global = true)]
    pub timestamp: Option<u64>,
    /// Put or delete.
    #[command(subcommand)]
    pub change: crate::array_metadata::MetadataCommand,
}

/// Runs `tdbf group …`.
pub fn run(args: &GroupArgs) -> CliResult<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match &args.command {
        GroupCommand::Create(t) => {
            group::create(&t.path, &crate::array::storage_config(&t.config)?)
                .map_err(|e| Failure::from(e).context(&t.path))?;
        }
        GroupCommand::Add(a) => {
            let mut changes = GroupChanges::default();
            changes.add(&a.member, a.relative, a.name.as_deref());
            update(&a.target, &changes, a.timestamp, &mut out)?;
        }
        GroupCommand::Remove(a) => {
            let mut changes = GroupChanges::default();
            changes.remove(&a.member);
            update(&a.target, &changes, a.timestamp, &mut out)?;
        }
        GroupCommand::Info(a) => info(a, &mut out)?,
        GroupCommand::Metadata(a) => {
            let change = metadata_change(&a.change)?;
            let mut changes = GroupChanges::default();
            changes.metadata(change);
            update(&a.target, &changes, a.timestamp, &mut out)?;
        }
    }
    out.flush().map_err(Failure::stdout)
}

fn update(
    target: &GroupTarget,
    changes: &GroupChanges,
    timestamp: Option<u64>,
    out: &mut impl Write,
) -> CliResult<()> {
    let written = group::update(&target.path, changes, &target.options(timestamp)?)
        .map_err(|e| Failure::from(e).context(&target.path))?;
    if let Some(name) = written {
        outln!(out, "wrote {}/{name}", group::GROUP_DETAILS_DIR);
    }
    Ok(())
}

fn metadata_change(c: &crate::array_metadata::MetadataCommand) -> CliResult<MetadataChange> {
    use crate::array_metadata::{MetadataCommand, encode, infer};
    Ok(match c {
        MetadataCommand::Put {
            name,
            values,
            datatype,
        } => {
            let datatype = match datatype {
                Some(t) => parse_datatype(t)?,
                None => infer(values),
            };
            let (n, bytes) = encode(datatype, values)?;
            MetadataChange::Put(MetadataEntry::new(name, datatype, n, &bytes)?)
        }
        MetadataCommand::Delete { name } => MetadataChange::Delete(name.clone()),
    })
}

/// One member in `--json`.
#[derive(Serialize)]
struct MemberJson<'a> {
    name: Option<&'a str>,
    #[serde(rename = "type")]
    object_type: &'static str,
    uri: &'a str,
    relative: bool,
    location: String,
}

/// `tdbf group info --json`.
#[derive(Serialize)]
struct InfoJson<'a> {
    uri: &'a str,
    members: Vec<MemberJson<'a>>,
    metadata: MetadataJson<'a>,
}

fn info(args: &InfoArgs, out: &mut impl Write) -> CliResult<()> {
    let t = &args.target;
    let g = Group::open(&t.path, &t.options(args.timestamp)?)
        .map_err(|e| Failure::from(e).context(&t.path))?;
    let members: Vec<MemberJson> = g
        .members()
        .iter()
        .map(|m| MemberJson {
            name: m.name.as_deref(),
            object_type: m.object_type.name(),
            uri: &m.uri,
            relative: m.relative,
            location: g.member_uri(m),
        })
        .collect();
    if args.json {
        return print_json(
            out,
            &InfoJson {
                uri: g.root().as_str(),
                members,
                metadata: MetadataJson(g.metadata()),
            },
        );
    }
    outln!(out, "{} GROUP", g.root());
    for m in &members {
        let rel = if m.relative { " (relative)" } else { "" };
        match m.name {
            Some(n) => outln!(
                out,
                "|-- {n} {} {}{rel}",
                m.object_type.to_uppercase(),
                m.uri
            ),
            None => outln!(out, "|-- {} {}{rel}", m.uri, m.object_type.to_uppercase()),
        }
    }
    if !g.metadata().is_empty() {
        outln!(out, "metadata:");
        for e in g.metadata() {
            let v = crate::common::to_json(&MetadataValueJson(e))?;
            outln!(out, "  {} ({}): {v}", e.key, e.datatype.name());
        }
    }
    Ok(())
}
