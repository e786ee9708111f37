//! The leftovers of killed writers: fragment folders in `__fragments/` that no commit marker
//! or consolidated commit names. Every reader ignores them; TileDB 2.30 never removes them
//! (its vacuum leaves them forever). They are removed here once nothing in them has changed
//! for a grace period, so that a fragment still being written (its files growing, its commit
//! marker not yet written) is never touched.

use super::listing::Listing;
use crate::array::directory::names;
use crate::error::Result;
use crate::storage::{Storage, Uri};
use std::collections::HashSet;
use std::time::{Duration, SystemTime};

/// An uncommitted fragment folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uncommitted {
    /// The folder's name in `__fragments/`.
    pub name: String,
    /// The newest modification time of the folder and its files.
    pub modified: SystemTime,
}

/// The uncommitted fragment folders of the array at `root`, with their last modification.
pub fn list(storage: &Storage, root: &Uri) -> Result<Vec<Uncommitted>> {
    let listing = Listing::load(storage, root)?;
    let committed: HashSet<&str> = listing
        .candidates
        .iter()
        .filter_map(|c| c.strip_prefix(names::FRAGMENTS_DIR))
        .map(|c| c.trim_start_matches('/'))
        .collect();
    let dir = root.join(names::FRAGMENTS_DIR);
    let mut out = Vec::new();
    for name in &listing.fragment_folders {
        if committed.contains(name.as_str()) {
            continue;
        }
        let folder = dir.join(name);
        out.push(Uncommitted {
            name: name.clone(),
            modified: newest(storage, &folder)?,
        });
    }
    Ok(out)
}

/// The newest modification time of `folder` (locally) and of everything below it.
fn newest(storage: &Storage, folder: &Uri) -> Result<SystemTime> {
    let mut t = if storage.is_local() {
        storage.modified(folder)?
    } else {
        SystemTime::UNIX_EPOCH
    };
    for e in storage.list(folder)? {
        let path = folder.join(&e.name);
        let m = if e.is_dir {
            newest(storage, &path)?
        } else {
            storage.modified(&path)?
        };
        t = t.max(m);
    }
    Ok(t)
}

/// Removes the uncommitted fragment folders of the array at `root` unchanged for longer than
/// `grace`, and the temporary files killed consolidations and vacuums left in `__commits/`
/// ([`super::pending`]) older than that; returns them as `__fragments/<name>/` and
/// `__commits/<name>`. A folder whose commit marker appears meanwhile is kept.
pub fn remove(storage: &Storage, root: &Uri, grace: Duration) -> Result<Vec<String>> {
    let now = SystemTime::now();
    let mut removed = Vec::new();
    for u in list(storage, root)? {
        let age = now.duration_since(u.modified).unwrap_or(Duration::ZERO);
        if age <= grace {
            continue;
        }
        let marker = root
            .join(names::COMMITS_DIR)
            .join(names::commit_file_name(&u.name));
        if storage.is_file(&marker)? {
            continue;
        }
        let rel = format!("{}/{}", names::FRAGMENTS_DIR, u.name);
        storage
            .remove_dir_all(&root.join(&rel))
            .map_err(|e| e.context(format!("removing uncommitted fragment {}", u.name)))?;
        removed.push(format!("{rel}/"));
    }
    // The temporary files of killed consolidations and vacuums, with the same grace.
    let listing = Listing::load(storage, root)?;
    let commits = root.join(names::COMMITS_DIR);
    for name in super::pending::stale(&listing) {
        let file = commits.join(&name);
        let age = now
            .duration_since(storage.modified(&file)?)
            .unwrap_or(Duration::ZERO);
        if age > grace {
            storage
                .remove_file(&file)
                .map_err(|e| e.context(format!("removing the leftover {name}")))?;
            removed.push(format!("{}/{name}", names::COMMITS_DIR));
        }
    }
    Ok(removed)
}
