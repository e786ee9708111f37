//! Vacuuming (TileDB 2.30's `tiledb_array_vacuum`, one mode per call): removing what a
//! consolidation made redundant, exactly the files TileDB removes, in an order that keeps
//! every reader's view whole (a reader in between sees the array as before or as after, never
//! nothing and never both):
//!
//! - fragments: the merged fragments a `.vac` file lists — each one's commit marker first
//!   (the fragment disappears), then its folder — and the `.vac` files last. Commit markers
//!   held by a consolidated commits file cannot be removed: they are listed in a new `.ign`
//!   file first, as TileDB does. Delete commits (`.del`) stay.
//! - commits: every commit marker and delete commit a `.con` file holds; when one `.con`
//!   holds all consolidated markers, the other `.con` files, then the `.ign` files.
//! - fragment metadata: the consolidated fragment metadata files older than the newest.
//! - array metadata: the `__meta` files a `.vac` file lists, then the `.vac` files.
//!
//! Beyond TileDB, fragments mode also removes the leftovers of killed writers
//! ([`super::uncommitted`]); TileDB never removes them. Kills: it first completes a
//! consolidation killed between its commit and its `.vac` ([`super::pending`]); the folders a
//! `.vac` lists whose marker is gone (a vacuum killed between a marker and its folder) are
//! removed on the next run; `.ign` files appear whole (renamed into place).

use super::listing::{Listing, lines, vacuum_entry};
use super::pending;
use super::uncommitted;
use crate::array::directory::{TimestampedName, names};
use crate::array::metadata;
use crate::error::{Error, Result};
use crate::storage::{Storage, StorageConfig, Uri};
use std::collections::HashSet;
use std::time::Duration;

/// What to vacuum (TileDB's `sm.vacuum.mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VacuumMode {
    /// Merged fragments (after a fragments consolidation).
    Fragments,
    /// Commit markers held by consolidated commits.
    Commits,
    /// Consolidated fragment metadata files but the newest.
    FragmentMeta,
    /// Merged array metadata files.
    ArrayMeta,
}

impl VacuumMode {
    /// Parses TileDB's mode name (`fragments`, `commits`, `fragment_meta`, `array_meta`).
    pub fn parse(s: &str) -> Result<VacuumMode> {
        Ok(match s {
            "fragments" => VacuumMode::Fragments,
            "commits" => VacuumMode::Commits,
            "fragment_meta" => VacuumMode::FragmentMeta,
            "array_meta" => VacuumMode::ArrayMeta,
            _ => {
                return Err(Error::invalid(format!(
                    "unknown vacuum mode '{s}' (fragments, commits, fragment_meta, array_meta)"
                )));
            }
        })
    }
}

/// The default grace period of uncommitted fragment folders: younger ones may still be
/// being written.
pub const DEFAULT_UNCOMMITTED_GRACE: Duration = Duration::from_secs(600);

/// How to vacuum.
#[derive(Clone, Debug)]
pub struct VacuumOptions {
    /// The mode.
    pub mode: VacuumMode,
    /// Fragments mode: remove uncommitted fragment folders whose newest file is older than
    /// this (`None`: keep them, as TileDB does).
    pub uncommitted_grace: Option<Duration>,
    /// Object-store options.
    pub config: StorageConfig,
}

impl VacuumOptions {
    /// Options for `mode` with the defaults (uncommitted leftovers older than
    /// [`DEFAULT_UNCOMMITTED_GRACE`] are removed).
    pub fn new(mode: VacuumMode) -> VacuumOptions {
        VacuumOptions {
            mode,
            uncommitted_grace: Some(DEFAULT_UNCOMMITTED_GRACE),
            config: StorageConfig::new(),
        }
    }
}

/// What a vacuum did, as paths relative to the array folder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VacuumReport {
    /// Files and folders removed, in removal order (folders end with `/`).
    pub removed: Vec<String>,
    /// Files written (`.ign` files).
    pub written: Vec<String>,
}

/// Vacuums the array at `uri` as TileDB 2.30 does for `options.mode`.
pub fn vacuum(uri: &str, options: &VacuumOptions) -> Result<VacuumReport> {
    let (storage, root) = Storage::open(uri, &options.config)?;
    let listing = Listing::load(&storage, &root)?;
    let mut report = VacuumReport::default();
    match options.mode {
        VacuumMode::Fragments => {
            // A consolidation killed between its commit and its vacuum file is completed
            // first, so that what it merged is removed too.
            let listing = if pending::complete(&storage, &root)?.is_empty() {
                listing
            } else {
                Listing::load(&storage, &root)?
            };
            fragments(&listing, &mut report)?;
            if let Some(grace) = options.uncommitted_grace {
                report
                    .removed
                    .extend(uncommitted::remove(&storage, &root, grace)?);
            }
        }
        VacuumMode::Commits => commits(&listing, &mut report)?,
        VacuumMode::FragmentMeta => fragment_meta(&storage, &root, &mut report)?,
        VacuumMode::ArrayMeta => array_meta(&storage, &root, &mut report)?,
    }
    Ok(report)
}

/// The merged fragments the `.vac` files list (only committed ones), in listing order, the
/// `.vac` files, and the folders they list whose commit marker is gone already (a vacuum
/// killed between removing a marker and its folder).
fn merged(listing: &Listing) -> Result<(Vec<String>, Vec<String>, Vec<String>)> {
    let vac_files: Vec<String> = listing
        .candidates
        .iter()
        .filter(|c| c.ends_with(".vac"))
        .cloned()
        .collect();
    let live: HashSet<&str> = listing
        .candidates
        .iter()
        .filter(|c| !c.ends_with(".vac"))
        .map(String::as_str)
        .collect();
    let mut listed = HashSet::new();
    let mut orphans = Vec::new();
    for v in &vac_files {
        for line in lines(&listing.storage.read(&listing.root.join(v))?) {
            let entry = vacuum_entry(&line, names::FRAGMENTS_DIR);
            if live.contains(entry.as_str()) {
                listed.insert(entry);
            } else if listing.has_dir(&entry) && !orphans.contains(&entry) {
                orphans.push(entry);
            }
        }
    }
    let mut seen = HashSet::new();
    let merged = listing
        .candidates
        .iter()
        .filter(|c| listed.contains(*c) && seen.insert(c.as_str()))
        .cloned()
        .collect();
    Ok((merged, vac_files, orphans))
}

fn fragments(listing: &Listing, report: &mut VacuumReport) -> Result<()> {
    let (merged, vac_files, orphans) = merged(listing)?;
    let commits: Vec<String> = merged
        .iter()
        .map(|f| Listing::commit_of(f))
        .collect::<Result<_>>()?;
    // Consolidated commits keep the merged fragments committed: an ignore file cancels that
    // before anything is removed.
    let to_ignore: Vec<String> = commits
        .iter()
        .filter(|c| listing.consolidated.contains(*c))
        .cloned()
        .collect();
    if !to_ignore.is_empty() {
        report.written.push(listing.write_ignore_file(&to_ignore)?);
    }
    for (f, commit) in merged.iter().zip(&commits) {
        if listing.has_file(commit) {
            listing.remove_file(commit)?;
            report.removed.push(commit.clone());
        }
        if listing.has_dir(f) {
            listing.remove_dir(f)?;
            report.removed.push(format!("{f}/"));
        }
    }
    // Beyond TileDB (which leaves them forever): the folders of merged fragments whose
    // marker an interrupted vacuum removed already; the consolidated fragment holds their
    // cells and no reader sees them.
    for f in orphans {
        listing.remove_dir(&f)?;
        report.removed.push(format!("{f}/"));
    }
    for v in vac_files {
        listing.remove_file(&v)?;
        report.removed.push(v);
    }
    Ok(())
}

fn commits(listing: &Listing, report: &mut VacuumReport) -> Result<()> {
    // The markers a `.con` holds that still exist (TileDB's `commit_uris_to_vacuum`).
    let mut markers: Vec<&String> = listing
        .consolidated
        .iter()
        .filter(|m| listing.has_file(m))
        .collect();
    markers.sort();
    for m in markers {
        listing.remove_file(m)?;
        report.removed.push(m.clone());
    }
    // A `.con` holding every consolidated marker makes the others redundant. TileDB reads
    // each `.con` as plain lines, so one with an embedded delete tile never qualifies (its
    // binary lines are not markers); this does the same, to remove exactly what TileDB does.
    let mut complete = None;
    for (name, bytes) in &listing.con_files {
        let mut count = 0usize;
        let mut all = true;
        for line in lines(bytes) {
            if listing.consolidated.contains(&line) {
                count += 1;
            } else {
                all = false;
                break;
            }
        }
        if all && count == listing.consolidated.len() {
            complete = Some(name);
            break;
        }
    }
    if let Some(keep) = complete {
        // The other `.con` files before the `.ign` files: an ignore file still cancels
        // markers of the `.con` files that remain.
        for (name, _) in &listing.con_files {
            if name != keep {
                let rel = format!("{}/{name}", names::COMMITS_DIR);
                listing.remove_file(&rel)?;
                report.removed.push(rel);
            }
        }
        for e in listing.commits.iter().filter(|e| e.name.ends_with(".ign")) {
            let rel = format!("{}/{}", names::COMMITS_DIR, e.name);
            listing.remove_file(&rel)?;
            report.removed.push(rel);
        }
    }
    Ok(())
}

fn fragment_meta(storage: &Storage, root: &Uri, report: &mut VacuumReport) -> Result<()> {
    let dir = root.join(names::FRAGMENT_META_DIR);
    let mut files = Vec::new();
    for e in storage.list(&dir)? {
        if !e.is_dir && e.name.ends_with(".meta") {
            let t2 = TimestampedName::parse(&e.name)
                .map_err(|err| err.context(format!("{}/{}", names::FRAGMENT_META_DIR, e.name)))?
                .t2;
            files.push((e.name, t2));
        }
    }
    let latest = files.iter().map(|(_, t)| *t).max().unwrap_or(0);
    for (name, t2) in files {
        if t2 != latest {
            storage
                .remove_file(&dir.join(&name))
                .map_err(|e| e.context(format!("removing {name}")))?;
            report
                .removed
                .push(format!("{}/{name}", names::FRAGMENT_META_DIR));
        }
    }
    Ok(())
}

fn array_meta(storage: &Storage, root: &Uri, report: &mut VacuumReport) -> Result<()> {
    for rel in metadata::vacuumable(storage, root)? {
        storage
            .remove_file(&root.join(&rel))
            .map_err(|e| e.context(format!("removing {rel}")))?;
        report.removed.push(rel);
    }
    Ok(())
}
