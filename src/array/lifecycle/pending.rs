//! What a killed consolidation or vacuum leaves in `__commits/`: temporary files
//! (`<name>`[`TEMP_SUFFIX`]) of files written whole and renamed into place. No reader looks at
//! them. A fragments consolidation writes the merged fragment's vacuum file as
//! `<fragment>.vac.tmp` *before* committing the fragment and renames it after the commit;
//! when it is killed in between, [`complete`] finishes its work: a temporary vacuum file
//! whose fragment is committed is renamed into place (the merged fragments it lists are
//! then hidden, as the consolidation meant). Temporary files whose fragment is not committed
//! are leftovers, removed with the uncommitted fragment folders ([`stale`]).
//!
//! The fragment metadata and array metadata consolidations write their files in folders
//! whose every file TileDB reads (`__fragment_meta/`, `__meta/`: a temporary or truncated file
//! there fails its reads), so they write them whole through [`write_whole`]: the temporary
//! file is in `__commits/`, which TileDB ignores, then renamed into place.

use super::listing::Listing;
use crate::array::directory::names;
use crate::error::Result;
use crate::storage::{Storage, TEMP_SUFFIX, Uri};

/// The suffix of a vacuum file written before its fragment's commit.
pub(crate) const VAC_TEMP_SUFFIX: &str = ".vac.tmp";

/// Writes the new file `name` in folder `dir` of the array at `root` whole or not at all:
/// locally written and synced as `__commits/<name>.<kind>.tmp`, renamed into `dir` and `dir`
/// synced (a kill leaves at most the temporary file, a leftover for [`stale`]); in an object
/// store one upload, atomic already.
pub(crate) fn write_whole(
    storage: &Storage,
    root: &Uri,
    dir: &Uri,
    name: &str,
    kind: &str,
    bytes: &[u8],
) -> Result<()> {
    if !storage.is_local() {
        return storage.write_new(&dir.join(name), bytes);
    }
    let commits = root.join(names::COMMITS_DIR);
    if storage.create_dir(&commits)? {
        storage.sync_dir(root)?;
    }
    let tmp = commits.join(format!("{name}.{kind}{TEMP_SUFFIX}"));
    if storage.is_file(&tmp)? {
        storage.remove_file(&tmp)?;
    }
    storage.write_new(&tmp, bytes)?;
    storage.rename(&tmp, &dir.join(name))?;
    storage.sync_dir(dir)?;
    storage.sync_dir(&commits)
}

/// Whether fragment `name` is committed in `listing` (a marker file or a consolidated one).
fn committed(listing: &Listing, name: &str) -> bool {
    let marker = format!("{}/{}", names::COMMITS_DIR, names::commit_file_name(name));
    listing.has_file(&marker) || listing.consolidated.contains(&marker)
}

/// Renames every `<fragment>.vac.tmp` whose fragment is committed to `<fragment>.vac`;
/// returns the vacuum files completed, relative to the root.
pub(crate) fn complete(storage: &Storage, root: &Uri) -> Result<Vec<String>> {
    let listing = Listing::load(storage, root)?;
    let dir = root.join(names::COMMITS_DIR);
    let mut done = Vec::new();
    for e in &listing.commits {
        let Some(fragment) = e.name.strip_suffix(VAC_TEMP_SUFFIX) else {
            continue;
        };
        if e.is_dir || !committed(&listing, fragment) {
            continue;
        }
        let vac = format!("{fragment}.vac");
        if listing.has_file(&format!("{}/{vac}", names::COMMITS_DIR)) {
            storage.remove_file(&dir.join(&e.name))?;
        } else {
            storage
                .rename(&dir.join(&e.name), &dir.join(&vac))
                .and_then(|()| storage.sync_dir(&dir))
                .map_err(|err| err.context(format!("completing the vacuum file {vac}")))?;
            done.push(format!("{}/{vac}", names::COMMITS_DIR));
        }
    }
    Ok(done)
}

/// The temporary files of `__commits/` that are leftovers: every one but a vacuum file whose
/// fragment is committed (which [`complete`] renames). Names relative to `__commits/`.
pub(crate) fn stale(listing: &Listing) -> Vec<String> {
    listing
        .commits
        .iter()
        .filter(|e| !e.is_dir && e.name.ends_with(TEMP_SUFFIX))
        .filter(|e| {
            e.name
                .strip_suffix(VAC_TEMP_SUFFIX)
                .is_none_or(|f| !committed(listing, f))
        })
        .map(|e| e.name.clone())
        .collect()
}
