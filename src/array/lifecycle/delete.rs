//! Deleting fragments by timestamp range and removing whole arrays, as TileDB 2.30's
//! `tiledb_array_delete_fragments_v2` and `tiledb_array_delete` do.
//!
//! Deleting fragments removes the fragments whose timestamp range lies inside the given one
//! (those visible there: not already merged into a consolidated fragment), each one's commit
//! marker first and its folder after (TileDB removes the folder first, so that a reader in
//! between can find a committed fragment without its folder). Delete commits (`.del`) stay.
//! Markers held by consolidated commits are cancelled by a new
//! `__commits/__<t1>_<t2>_<label>_22.ign` file written before anything is removed.
//!
//! Removing an array removes only what TileDB made: the fragments and commits, the schema,
//! metadata and fragment-metadata files, TileDB's folders (`__schema`, `__commits`,
//! `__fragments`, `__meta`, `__fragment_meta`, `__labels`), then the array folder itself if
//! nothing else is left in it.

use super::listing::Listing;
use crate::array::directory::{ArrayDirectory, names};
use crate::error::{Error, Result};
use crate::storage::{Storage, StorageConfig, Uri};

/// TileDB's folders in an array (`constants::array_dir_names`).
const ARRAY_FOLDERS: [&str; 6] = [
    names::SCHEMA_DIR,
    names::META_DIR,
    names::FRAGMENT_META_DIR,
    names::FRAGMENTS_DIR,
    names::COMMITS_DIR,
    names::LABELS_DIR,
];

/// What a delete removed and wrote, relative to the array folder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeleteReport {
    /// The fragments deleted (their folder names).
    pub fragments: Vec<String>,
    /// Files and folders removed, in removal order (folders end with `/`).
    pub removed: Vec<String>,
    /// Files written (the `.ign` file).
    pub written: Vec<String>,
}

/// Deletes the fragments of the array at `uri` whose timestamp range lies inside
/// `[timestamp_start, timestamp_end]` (milliseconds).
pub fn delete_fragments(
    uri: &str,
    timestamp_start: u64,
    timestamp_end: u64,
    config: &StorageConfig,
) -> Result<DeleteReport> {
    if timestamp_start > timestamp_end {
        return Err(Error::invalid(format!(
            "delete fragments: the timestamp range [{timestamp_start}, {timestamp_end}] is \
             reversed"
        )));
    }
    let (storage, root) = Storage::open(uri, config)?;
    delete_fragments_in(&storage, &root, timestamp_start, timestamp_end)
}

fn delete_fragments_in(
    storage: &Storage,
    root: &Uri,
    timestamp_start: u64,
    timestamp_end: u64,
) -> Result<DeleteReport> {
    let listing = Listing::load(storage, root)?;
    let dir = ArrayDirectory::open_in(storage.clone(), root.clone())?;
    let fragments = dir.fragments(timestamp_start, timestamp_end, false)?;
    let mut report = DeleteReport::default();
    let mut rels = Vec::new();
    let mut commits = Vec::new();
    for f in &fragments {
        let rel = relative(root, &f.path)?;
        commits.push(Listing::commit_of(&rel)?);
        report.fragments.push(f.name.name.clone());
        rels.push(rel);
    }
    let to_ignore: Vec<String> = commits
        .iter()
        .filter(|c| listing.consolidated.contains(*c))
        .cloned()
        .collect();
    if !to_ignore.is_empty() {
        report.written.push(listing.write_ignore_file(&to_ignore)?);
    }
    for (rel, commit) in rels.iter().zip(&commits) {
        if listing.has_file(commit) {
            listing.remove_file(commit)?;
            report.removed.push(commit.clone());
        }
        listing.remove_dir(rel)?;
        report.removed.push(format!("{rel}/"));
    }
    Ok(report)
}

/// `path` relative to `root`.
fn relative(root: &Uri, path: &Uri) -> Result<String> {
    path.as_str()
        .strip_prefix(root.as_str())
        .map(|r| r.trim_start_matches('/').to_string())
        .ok_or_else(|| Error::Internal(format!("{path} is not inside {root}")))
}

/// Removes the array at `uri` as TileDB's `delete_array` does; files and folders TileDB did
/// not make stay (and with them the array folder).
pub fn delete_array(uri: &str, config: &StorageConfig) -> Result<DeleteReport> {
    let (storage, root) = Storage::open(uri, config)?;
    let mut report = delete_fragments_in(&storage, &root, 0, u64::MAX)?;
    let dir = ArrayDirectory::open_in(storage.clone(), root.clone())?;
    let mut files: Vec<Uri> = dir.metadata_files(0, u64::MAX)?;
    for e in storage.list(&root.join(names::FRAGMENT_META_DIR))? {
        if !e.is_dir && e.name.ends_with(".meta") {
            files.push(root.join(names::FRAGMENT_META_DIR).join(&e.name));
        }
    }
    // The schema files last: the folder is an array as long as one exists.
    files.extend(dir.schemas().iter().map(|s| s.path.clone()));
    for f in &files {
        storage
            .remove_file(f)
            .map_err(|e| e.context("removing the array"))?;
        report.removed.push(relative(&root, f)?);
    }
    for d in ARRAY_FOLDERS {
        let path = root.join(d);
        if storage.is_dir(&path)? {
            storage
                .remove_dir_all(&path)
                .map_err(|e| e.context("removing the array"))?;
            report.removed.push(format!("{d}/"));
        }
    }
    if storage.is_local() && storage.list(&root)?.is_empty() {
        storage
            .remove_dir_all(&root)
            .map_err(|e| e.context("removing the array folder"))?;
    }
    Ok(report)
}
