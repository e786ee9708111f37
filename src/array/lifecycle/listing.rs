//! The array folder as TileDB 2.30's vacuum and delete operations see it (its
//! `ArrayDirectory` in the vacuum and commits modes): the committed fragment folders and
//! vacuum files in listing order, the markers consolidated commits (`.con`) hold minus those
//! ignore files (`.ign`) cancel, and the raw text of every `.con`.

use crate::array::directory::{TimestampedName, names};
use crate::error::{Error, Result};
use crate::format::format_version::FORMAT_VERSION;
use crate::storage::{Entry, Storage, Uri};
use std::collections::HashSet;

/// One listing of an array's root, `__commits/` and `__fragments/`.
#[derive(Debug)]
pub(crate) struct Listing {
    pub storage: Storage,
    pub root: Uri,
    pub root_entries: Vec<Entry>,
    pub commits: Vec<Entry>,
    /// Folders in `__fragments/`.
    pub fragment_folders: Vec<String>,
    /// `.con` files: (name, raw bytes).
    pub con_files: Vec<(String, Vec<u8>)>,
    /// The markers the `.con` files hold (relative to the root), minus ignored ones.
    pub consolidated: HashSet<String>,
    /// Committed fragments and vacuum files, relative to the root, in TileDB's order.
    pub candidates: Vec<String>,
}

/// The lines of a text file as `std::getline` splits them.
pub(crate) fn lines(bytes: &[u8]) -> Vec<String> {
    let mut v: Vec<String> = bytes
        .split(|b| *b == b'\n')
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect();
    if bytes.ends_with(b"\n") || bytes.is_empty() {
        v.pop();
    }
    v
}

/// The markers of one `.con` file, skipping the delete-condition tiles embedded after
/// `.del` lines (`u64` size, then the tile).
pub(crate) fn con_markers(bytes: &[u8], file: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        let end = bytes[pos..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |p| pos + p);
        let line = String::from_utf8_lossy(&bytes[pos..end]).into_owned();
        pos = (end + 1).min(bytes.len());
        if line.ends_with(".del") {
            let size = bytes.get(pos..pos + 8).ok_or_else(|| {
                Error::corrupt(format!("{file}: the delete commit {line} has no tile size"))
            })?;
            let size = u64::from_le_bytes(size.try_into().expect("8 bytes"));
            pos = usize::try_from((pos as u64 + 8).saturating_add(size))
                .unwrap_or(usize::MAX)
                .min(bytes.len());
        }
        out.push(line);
    }
    Ok(out)
}

/// A vacuum-file line as a path relative to the root (TileDB's `get_full_vac_uri`).
pub(crate) fn vacuum_entry(line: &str, folder: &str) -> String {
    if let Some(p) = line.find(names::FRAGMENTS_DIR) {
        line[p..].to_string()
    } else if let Some(p) = line.find(names::META_DIR) {
        line[p..].to_string()
    } else {
        let last = line.rsplit('/').next().unwrap_or(line);
        if folder == names::META_DIR {
            format!("{folder}/{last}")
        } else {
            last.to_string()
        }
    }
}

impl Listing {
    /// Lists the array at `root`; fails when it is not an array.
    pub fn load(storage: &Storage, root: &Uri) -> Result<Listing> {
        let root_entries = storage.list(root)?;
        let is_array = root_entries
            .iter()
            .any(|e| e.name == names::LEGACY_SCHEMA_FILE && !e.is_dir)
            || storage
                .list(&root.join(names::SCHEMA_DIR))?
                .iter()
                .any(|e| e.name != names::ENUMERATIONS_DIR);
        if !is_array {
            return Err(Error::invalid(format!("{root} is not a TileDB array")));
        }
        let commits_dir = root.join(names::COMMITS_DIR);
        let commits = storage.list(&commits_dir)?;
        let fragment_folders = storage
            .list(&root.join(names::FRAGMENTS_DIR))?
            .into_iter()
            .filter(|e| e.is_dir)
            .map(|e| e.name)
            .collect();
        let mut ignore = HashSet::new();
        for e in commits.iter().filter(|e| e.name.ends_with(".ign")) {
            ignore.extend(lines(&storage.read(&commits_dir.join(&e.name))?));
        }
        let mut con_files = Vec::new();
        let mut consolidated = HashSet::new();
        let mut from_con = Vec::new();
        for e in commits.iter().filter(|e| e.name.ends_with(".con")) {
            let bytes = storage.read(&commits_dir.join(&e.name))?;
            for m in con_markers(&bytes, &e.name)? {
                if !ignore.contains(&m) && consolidated.insert(m.clone()) {
                    from_con.push(m);
                }
            }
            con_files.push((e.name.clone(), bytes));
        }
        from_con.sort();
        let mut candidates = Vec::new();
        let oks: HashSet<&str> = root_entries
            .iter()
            .filter(|e| !e.is_dir)
            .filter_map(|e| e.name.strip_suffix(".ok"))
            .collect();
        for e in &root_entries {
            let legacy = e.is_dir
                && e.name.starts_with("__")
                && !e.name.contains('.')
                && TimestampedName::parse(&e.name).is_ok()
                && (oks.contains(e.name.as_str())
                    || consolidated.contains(&format!("{}.ok", e.name))
                    || TimestampedName::parse(&e.name).is_ok_and(|n| n.name_version < 5)
                        && storage
                            .is_file(&root.join(&e.name).join(names::FRAGMENT_METADATA_FILE))?);
            if legacy || (!e.is_dir && e.name.ends_with(".vac")) {
                candidates.push(e.name.clone());
            }
        }
        for m in &from_con {
            if let Some(name) = m.strip_suffix(".wrt") {
                let name = name.rsplit('/').next().unwrap_or(name);
                candidates.push(format!("{}/{name}", names::FRAGMENTS_DIR));
            }
        }
        for e in &commits {
            let rel = format!("{}/{}", names::COMMITS_DIR, e.name);
            if let Some(frag) = e.name.strip_suffix(".wrt") {
                if !consolidated.contains(&rel) {
                    candidates.push(format!("{}/{frag}", names::FRAGMENTS_DIR));
                }
            } else if e.name.ends_with(".vac") {
                candidates.push(rel);
            }
        }
        Ok(Listing {
            storage: storage.clone(),
            root: root.clone(),
            root_entries,
            commits,
            fragment_folders,
            con_files,
            consolidated,
            candidates,
        })
    }

    /// The commit marker of fragment `rel` (relative to the root): `__commits/<name>.wrt`, or
    /// `<name>.ok` beside a fragment of format version < 12.
    pub fn commit_of(rel: &str) -> Result<String> {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        if TimestampedName::parse(name)?.name_version < 12 {
            Ok(format!("{rel}.ok"))
        } else {
            Ok(format!(
                "{}/{}",
                names::COMMITS_DIR,
                names::commit_file_name(name)
            ))
        }
    }

    /// Whether the relative path names an existing file of the listing (root or commits).
    pub fn has_file(&self, rel: &str) -> bool {
        match rel.split_once('/') {
            Some((dir, name)) if dir == names::COMMITS_DIR => {
                self.commits.iter().any(|e| !e.is_dir && e.name == name)
            }
            Some(_) => false,
            None => self.root_entries.iter().any(|e| !e.is_dir && e.name == rel),
        }
    }

    /// Whether the relative path names an existing fragment folder of the listing.
    pub fn has_dir(&self, rel: &str) -> bool {
        match rel.split_once('/') {
            Some((dir, name)) if dir == names::FRAGMENTS_DIR => {
                self.fragment_folders.iter().any(|n| n == name)
            }
            Some(_) => false,
            None => self.root_entries.iter().any(|e| e.is_dir && e.name == rel),
        }
    }

    /// Writes `__commits/__<t1>_<t2>_<label>_22.ign` listing `markers` (TileDB's
    /// `write_commit_ignore_file`: the first marker's t1, the last one's t2). Returns its
    /// relative path.
    pub fn write_ignore_file(&self, markers: &[String]) -> Result<String> {
        let first = TimestampedName::parse(&markers[0])?;
        let last = TimestampedName::parse(&markers[markers.len() - 1])?;
        let name = format!(
            "__{}_{}_{}_{FORMAT_VERSION}.ign",
            first.t1,
            last.t2,
            names::random_label().0
        );
        let mut text = String::new();
        for m in markers {
            text.push_str(m);
            text.push('\n');
        }
        let dir = self.root.join(names::COMMITS_DIR);
        self.storage.create_dir(&dir)?;
        self.storage
            .write_new_atomic(&dir, &dir.join(&name), text.as_bytes())
            .map_err(|e| e.context(format!("ignore file {name}")))?;
        Ok(format!("{}/{name}", names::COMMITS_DIR))
    }

    /// Removes the file `rel` (relative to the root).
    pub fn remove_file(&self, rel: &str) -> Result<()> {
        self.storage
            .remove_file(&self.root.join(rel))
            .map_err(|e| e.context(format!("removing {rel}")))
    }

    /// Removes the folder `rel` and everything in it.
    pub fn remove_dir(&self, rel: &str) -> Result<()> {
        self.storage
            .remove_dir_all(&self.root.join(rel))
            .map_err(|e| e.context(format!("removing {rel}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn con_markers_skip_delete_tiles() {
        let mut b = b"__commits/__1_1_a_22.wrt\n__commits/__2_2_b_22.del\n".to_vec();
        b.extend(3u64.to_le_bytes());
        b.extend(b"\nxy");
        b.extend(b"__commits/__3_3_c_22.wrt\n");
        assert_eq!(
            con_markers(&b, "x.con").unwrap(),
            [
                "__commits/__1_1_a_22.wrt",
                "__commits/__2_2_b_22.del",
                "__commits/__3_3_c_22.wrt"
            ]
        );
        assert!(con_markers(&b[..52], "x.con").is_err());
    }

    #[test]
    fn commit_markers_by_version() {
        let n = "0123456789abcdef0123456789abcdef";
        assert_eq!(
            Listing::commit_of(&format!("__fragments/__1_2_{n}_22")).unwrap(),
            format!("__commits/__1_2_{n}_22.wrt")
        );
        assert_eq!(
            Listing::commit_of(&format!("__1_2_{n}_5")).unwrap(),
            format!("__1_2_{n}_5.ok")
        );
    }
}
