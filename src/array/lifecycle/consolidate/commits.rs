//! Commits consolidation (TileDB's `CommitsConsolidator`): one `__commits/__t1_t2_<uuid>_22.con`
//! listing, relative to the array, every commit the array has — the markers already in
//! `.con` files (minus those `.ign` files cancel), then the `.ok` files of old fragments, then
//! the `.wrt` and `.del` files of `__commits/` — each `.del` line followed by the delete
//! condition's size (`u64`) and bytes.
//!
//! Where TileDB fails: it names the file after the first listed commit's start and the last
//! one's end in *text* order, so commit timestamps of different digit counts give a start
//! after the end ("start timestamp cannot be after end timestamp"). This names it after the
//! smallest start and the largest end.

use super::super::listing::Listing;
use super::{ConsolidateOptions, ConsolidateReport};
use crate::array::directory::{TimestampedName, names};
use crate::error::{Error, Result};
use crate::format::format_version::FORMAT_VERSION;
use crate::storage::Storage;
use std::collections::HashMap;

/// The delete-condition tiles embedded in a `.con` file, by marker.
fn con_delete_tiles(bytes: &[u8], out: &mut HashMap<String, Vec<u8>>) {
    let mut pos = 0usize;
    while pos < bytes.len() {
        let end = bytes[pos..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |p| pos + p);
        let line = String::from_utf8_lossy(&bytes[pos..end]).into_owned();
        pos = (end + 1).min(bytes.len());
        if line.ends_with(".del") {
            let Some(size) = bytes.get(pos..pos + 8) else {
                return;
            };
            let size = u64::from_le_bytes(size.try_into().expect("8 bytes")) as usize;
            let start = pos + 8;
            let stop = start.saturating_add(size).min(bytes.len());
            out.entry(line)
                .or_insert_with(|| bytes[start..stop].to_vec());
            pos = stop;
        }
    }
}

/// Consolidates the commits of the array at `uri`.
pub(crate) fn consolidate(uri: &str, options: &ConsolidateOptions) -> Result<ConsolidateReport> {
    let (storage, root) = Storage::open(uri, &options.config)?;
    let listing = Listing::load(&storage, &root)?;
    let mut list: Vec<String> = listing.consolidated.iter().cloned().collect();
    list.sort();
    for e in &listing.root_entries {
        if !e.is_dir && e.name.ends_with(".ok") && !listing.consolidated.contains(&e.name) {
            list.push(e.name.clone());
        }
    }
    for e in &listing.commits {
        let rel = format!("{}/{}", names::COMMITS_DIR, e.name);
        if !e.is_dir
            && (e.name.ends_with(".wrt") || e.name.ends_with(".del"))
            && !listing.consolidated.contains(&rel)
        {
            list.push(rel);
        }
    }
    let mut report = ConsolidateReport::default();
    if list.is_empty() {
        return Ok(report);
    }
    let mut embedded = HashMap::new();
    for (_, bytes) in &listing.con_files {
        con_delete_tiles(bytes, &mut embedded);
    }
    let (mut t1, mut t2) = (u64::MAX, 0u64);
    let mut data = Vec::new();
    for rel in &list {
        let n = TimestampedName::parse(rel)?;
        t1 = t1.min(n.t1);
        t2 = t2.max(n.t2);
        data.extend_from_slice(rel.as_bytes());
        data.push(b'\n');
        if rel.ends_with(".del") {
            let tile = if listing.has_file(rel) {
                storage.read(&root.join(rel))?
            } else {
                embedded.get(rel).cloned().ok_or_else(|| {
                    Error::corrupt(format!(
                        "delete commit {rel}: neither its file nor a consolidated copy exists"
                    ))
                })?
            };
            data.extend_from_slice(&(tile.len() as u64).to_le_bytes());
            data.extend_from_slice(&tile);
        }
    }
    let name = format!(
        "{}.con",
        names::new_timestamped_name(t1, t2, FORMAT_VERSION)
    );
    let dir = root.join(names::COMMITS_DIR);
    storage.create_dir(&dir)?;
    // Whole or not at all (a truncated `.con` would list a partial marker or cut a delete
    // tile): written beside and renamed into place.
    storage
        .write_new_atomic(&dir, &dir.join(&name), &data)
        .map_err(|e| e.context(format!("consolidated commits {name}")))?;
    report
        .written
        .push(format!("{}/{name}", names::COMMITS_DIR));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_delete_tiles_are_found() {
        let mut b = b"__commits/__1_1_a_22.wrt\n__commits/__2_2_b_22.del\n".to_vec();
        b.extend(3u64.to_le_bytes());
        b.extend(b"xyz");
        b.extend(b"__commits/__3_3_c_22.wrt\n");
        let mut m = HashMap::new();
        con_delete_tiles(&b, &mut m);
        assert_eq!(m.len(), 1);
        assert_eq!(m["__commits/__2_2_b_22.del"], b"xyz");
    }
}
