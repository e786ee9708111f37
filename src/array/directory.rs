//! The folder of a TileDB array (docs/ARRAY.md §1): which schema files exist, which fragments are
//! visible for a timestamp range, which array-metadata files count, exactly as TileDB 2.30's
//! `ArrayDirectory` decides.
//!
//! The folder is read through a [`Storage`]: a local folder or an object store (`s3://`,
//! `azure://`, `gs://`); other schemes (`tiledb://`, …) are `Unsupported`.

use crate::error::{Error, Result};
use crate::storage::{Storage, StorageConfig, Uri};
use std::collections::{HashMap, HashSet};

/// The folder names TileDB uses inside an array (tiledb/sm/misc/constants.cc).
pub mod names {
    /// Schema files (v10+).
    pub const SCHEMA_DIR: &str = "__schema";
    /// The pre-v10 schema file in the array root.
    pub const LEGACY_SCHEMA_FILE: &str = "__array_schema.tdb";
    /// Enumeration files, inside the schema folder.
    pub const ENUMERATIONS_DIR: &str = "__enumerations";
    /// Fragment folders (v12+).
    pub const FRAGMENTS_DIR: &str = "__fragments";
    /// Commit markers, consolidated commits, ignore/vacuum lists, deletes (v12+).
    pub const COMMITS_DIR: &str = "__commits";
    /// Array metadata files.
    pub const META_DIR: &str = "__meta";
    /// Consolidated fragment metadata (a cache this reader does not need).
    pub const FRAGMENT_META_DIR: &str = "__fragment_meta";
    /// Dimension-label arrays.
    pub const LABELS_DIR: &str = "__labels";
    /// A fragment's metadata file.
    pub const FRAGMENT_METADATA_FILE: &str = "__fragment_metadata.tdb";
    /// The extension of a fragment's commit marker in `__commits/` (`<fragment>.wrt`).
    pub const WRITE_COMMIT_EXTENSION: &str = "wrt";
    /// Extension of delete commits in `__commits`.
    pub const DELETE_COMMIT_EXTENSION: &str = "del";

    /// A new timestamped name `__<t1>_<t2>_<label>_<version>` (TileDB's
    /// `generate_timestamped_name`), for a fragment of format `version`; `t1 = t2 = 0` means
    /// now, as in TileDB.
    pub fn new_timestamped_name(t1: u64, t2: u64, version: u32) -> String {
        let (label, now) = random_label();
        let (t1, t2) = if t1 == 0 && t2 == 0 {
            (now, now)
        } else {
            (t1, t2)
        };
        format!("__{t1}_{t2}_{label}_{version}")
    }

    /// The commit marker of fragment `name` (`<name>.wrt`), inside `__commits/`.
    pub fn commit_file_name(name: &str) -> String {
        format!("{name}.{WRITE_COMMIT_EXTENSION}")
    }

    /// Milliseconds since the Unix epoch (TileDB's `timestamp_now_ms`).
    pub fn now_ms() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }

    /// The timestamp a new file (fragment, metadata) is written at: `None` or 0 is now (as
    /// TileDB); `u64::MAX` is refused: a file named with it is committed but shown by no
    /// reader (TileDB opens an array up to now for an end of `u64::MAX`), where TileDB 2.30
    /// writes at now instead. `what` names the file kind.
    pub fn write_timestamp(timestamp: Option<u64>, what: &str) -> crate::error::Result<u64> {
        match timestamp {
            None | Some(0) => Ok(now_ms()),
            Some(u64::MAX) => Err(crate::error::Error::invalid(format!(
                "{what} timestamp {} (UINT64_MAX) is reserved: no reader would show what is \
                 written at it; pass 0 for now, or a timestamp below it",
                u64::MAX
            ))),
            Some(t) => Ok(t),
        }
    }

    /// TileDB's random label (`RandomLabelGenerator::generate`) and the millisecond it was
    /// made: 32 lowercase hex digits, a per-millisecond counter (random start below 2^31,
    /// then +1 per label in the same millisecond, so labels of one process sort in creation
    /// order) and 96 random bits.
    pub fn random_label() -> (String, u64) {
        use aes_gcm::aead::OsRng;
        use aes_gcm::aead::rand_core::RngCore;
        use std::sync::Mutex;
        static STATE: Mutex<(u64, u32)> = Mutex::new((0, 0));
        let now = now_ms();
        let counter = {
            let mut st = STATE.lock().unwrap_or_else(|p| p.into_inner());
            if st.0 != now || st.1 == u32::MAX {
                *st = (now, OsRng.next_u32() & 0x7FFF_FFFF);
            } else {
                st.1 += 1;
            }
            st.1
        };
        let label = format!(
            "{counter:08x}{:08x}{:016x}",
            OsRng.next_u32(),
            OsRng.next_u64()
        );
        (label, now)
    }
}

/// The parsed name of a fragment, schema, metadata or commit file (TileDB's `FragmentID`):
/// `__<t1>_<t2>_<uuid>_<version>`, `__<t1>_<t2>_<uuid>` or the oldest `__<uuid>_<t>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimestampedName {
    /// The name without folder and without an extension after the last `.`.
    pub name: String,
    /// First timestamp (milliseconds).
    pub t1: u64,
    /// Last timestamp (milliseconds).
    pub t2: u64,
    /// The format version in the name: the suffix for `__t1_t2_uuid_v` names, 4 for
    /// `__t1_t2_uuid`, 2 for `__uuid_t`. The fragment footer holds the authoritative one.
    pub name_version: u32,
}

impl TimestampedName {
    /// Parses the last component of `path` as TileDB does.
    pub fn parse(path: &str) -> Result<TimestampedName> {
        let last = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        let name = match last.rfind('.') {
            Some(p) => &last[..p],
            None => last,
        };
        let bad = |why: &str| Error::corrupt(format!("'{last}' is not a timestamped name: {why}"));
        let last_us = name.rfind('_').ok_or_else(|| bad("no '_'"))?;
        let suffix = &name[last_us + 1..];
        let underscores = name.matches('_').count();
        let (t1, t2, name_version) = if underscores == 5 {
            let (t1, t2) = two_timestamps(name).ok_or_else(|| bad("bad timestamps"))?;
            let v = suffix
                .parse::<u32>()
                .map_err(|_| bad("bad format version"))?;
            (t1, t2, v)
        } else if suffix.len() == 32 {
            let (t1, t2) = two_timestamps(name).ok_or_else(|| bad("bad timestamps"))?;
            (t1, t2, 4)
        } else {
            let t = leading_u64(suffix).ok_or_else(|| bad("bad timestamp"))?;
            (t, t, 2)
        };
        if t1 > t2 {
            return Err(bad("the start timestamp is after the end timestamp"));
        }
        Ok(TimestampedName {
            name: name.to_string(),
            t1,
            t2,
            name_version,
        })
    }
}

/// The decimal number at the start of `s` (what `sscanf("%ld")` accepts, without sign).
fn leading_u64(s: &str) -> Option<u64> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    s[..digits].parse().ok()
}

/// `__<t1>_<t2>...` → (t1, t2).
fn two_timestamps(name: &str) -> Option<(u64, u64)> {
    let rest = name.strip_prefix("__")?;
    let (a, rest) = rest.split_once('_')?;
    Some((leading_u64(a)?, leading_u64(rest)?))
}

/// A schema file of the array, in TileDB's listing order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaFile {
    /// The file.
    pub path: Uri,
    /// File name (`__t1_t2_uuid`, or `__array_schema.tdb`).
    pub name: String,
    /// Timestamps from the name; `None` for the legacy `__array_schema.tdb`.
    pub timestamps: Option<(u64, u64)>,
}

/// A visible fragment, with the facts its folder name gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FragmentDir {
    /// The fragment's folder.
    pub path: Uri,
    /// Its parsed name.
    pub name: TimestampedName,
}

/// Where a delete or update commit's condition tile is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConditionCommit {
    /// The commit's name relative to the array (`__commits/__t1_t2_uuid_v.del`).
    pub marker: String,
    /// The file holding the tile (the `.del` itself, or a `.con` embedding it).
    pub file: Uri,
    /// Byte offset of the tile in `file`.
    pub offset: u64,
    /// Byte size of the tile (the whole file for a standalone `.del`).
    pub size: u64,
    /// The commit's timestamp (its name's t1).
    pub timestamp: u64,
    /// `true` for `.upd` (update values), `false` for `.del`.
    pub is_update: bool,
}

/// The array folder as listed once: schema files and everything needed to decide
/// visibility for any timestamp range.
#[derive(Clone, Debug)]
pub struct ArrayDirectory {
    storage: Storage,
    root: Uri,
    schemas: Vec<SchemaFile>,
    /// Candidate fragment paths relative to the root and `.vac` files, in TileDB's order.
    candidates: Vec<String>,
    /// Delete/update commits found in `__commits` and in consolidated commits.
    conditions: Vec<ConditionCommit>,
    /// `__meta` entries (file names), sorted.
    meta: Vec<String>,
}

/// The sorted entries of a folder (empty when it does not exist): (name, is_dir, size).
fn list(storage: &Storage, dir: &Uri) -> Result<Vec<(String, bool, u64)>> {
    // TileDB sorts listings by full path; within one folder that is the name's byte order.
    Ok(storage
        .list(dir)?
        .into_iter()
        .map(|e| (e.name, e.is_dir, e.size))
        .collect())
}

/// The lines of a text file as `std::getline` splits them (a final line without `\n` counts).
fn lines(bytes: &[u8]) -> Vec<String> {
    let mut v: Vec<String> = bytes
        .split(|b| *b == b'\n')
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect();
    if bytes.ends_with(b"\n") || bytes.is_empty() {
        v.pop();
    }
    v
}

impl ArrayDirectory {
    /// Lists the array at `uri` (a local path, `file://` URI or object-store URI, configured
    /// by `config` and the environment). Fails with `InvalidArgument` when it is not a TileDB
    /// array.
    pub fn open(uri: &str, config: &StorageConfig) -> Result<ArrayDirectory> {
        let (storage, root) = Storage::open(uri, config)?;
        Self::open_in(storage, root)
    }

    /// Lists the array at `root` in `storage`: the root, `__schema`, `__commits` and `__meta`,
    /// one listing each (at once in an object store: four round trips cost one).
    pub fn open_in(storage: Storage, root: Uri) -> Result<ArrayDirectory> {
        let schema_dir = root.join(names::SCHEMA_DIR);
        let (commits_dir, meta_dir) = (root.join(names::COMMITS_DIR), root.join(names::META_DIR));
        let [root_entries, schema_entries, commits, meta] = if storage.is_local() {
            [&root, &schema_dir, &commits_dir, &meta_dir].map(|d| list(&storage, d))
        } else {
            let ((a, b), (c, d)) = rayon::join(
                || rayon::join(|| list(&storage, &root), || list(&storage, &schema_dir)),
                || {
                    rayon::join(
                        || list(&storage, &commits_dir),
                        || list(&storage, &meta_dir),
                    )
                },
            );
            [a, b, c, d]
        };
        let root_entries = root_entries?;
        let mut schemas = Vec::new();
        if root_entries
            .iter()
            .any(|(n, d, _)| n == names::LEGACY_SCHEMA_FILE && !d)
        {
            schemas.push(SchemaFile {
                path: root.join(names::LEGACY_SCHEMA_FILE),
                name: names::LEGACY_SCHEMA_FILE.into(),
                timestamps: None,
            });
        }
        for (name, _, _) in schema_entries? {
            if name == names::ENUMERATIONS_DIR {
                continue;
            }
            let parsed = TimestampedName::parse(&name)
                .map_err(|e| e.context(format!("schema file {name}")))?;
            schemas.push(SchemaFile {
                path: schema_dir.join(&name),
                name,
                timestamps: Some((parsed.t1, parsed.t2)),
            });
        }
        if schemas.is_empty() {
            return Err(Error::invalid(format!(
                "{root} is not a TileDB array (no {} folder or {} file)",
                names::SCHEMA_DIR,
                names::LEGACY_SCHEMA_FILE
            )));
        }
        let commits = commits?;
        let mut dir = ArrayDirectory {
            storage,
            root,
            schemas,
            candidates: Vec::new(),
            conditions: Vec::new(),
            meta: Vec::new(),
        };
        dir.meta = meta?
            .into_iter()
            .filter(|(_, d, _)| !d)
            .map(|(n, _, _)| n)
            .collect();
        dir.load_candidates(&root_entries, &commits)?;
        Ok(dir)
    }

    /// The array's folder.
    pub fn root(&self) -> &Uri {
        &self.root
    }

    /// The storage holding the array.
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// Reads a whole (small) file of the array.
    pub fn read_file(&self, uri: &Uri) -> Result<Vec<u8>> {
        self.storage.read(uri)
    }

    /// Every schema file, legacy first, then `__schema/` in listing order.
    pub fn schemas(&self) -> &[SchemaFile] {
        &self.schemas
    }

    /// The schema TileDB opens for reading at `timestamp_end` (`select_latest_array_schema_uri`):
    /// the last in listing order whose t2 ≤ `timestamp_end`, else the first. Listing order is
    /// lexicographic, so with timestamps of different digit counts it is not numeric order;
    /// TileDB does the same.
    pub fn latest_schema(&self, timestamp_end: u64) -> &SchemaFile {
        self.schemas
            .iter()
            .rev()
            .find(|s| matches!(s.timestamps, Some((_, t2)) if t2 <= timestamp_end))
            .unwrap_or(&self.schemas[0])
    }

    /// Reads and parses schema file `file`, decrypting it with `key` (which a wrong key
    /// fails). Enumerations are not loaded.
    pub fn load_schema(
        &self,
        file: &SchemaFile,
        key: Option<&[u8]>,
    ) -> Result<crate::array::schema::ArraySchema> {
        let bytes = self.read_file(&file.path)?;
        let (_, tile, _) = crate::pipeline::generic_tile::read(&bytes, key)
            .map_err(|e| e.context(format!("array schema {}", file.name)))?;
        crate::array::schema::ArraySchema::parse(tile.data(), &file.name)
    }

    /// The schema file named `name` (a fragment footer's schema name).
    pub fn schema_named(&self, name: &str) -> Option<&SchemaFile> {
        self.schemas.iter().find(|s| s.name == name)
    }

    /// Delete and update commits (visible or not; see [`ArrayDirectory::conditions_in`]).
    pub fn conditions(&self) -> &[ConditionCommit] {
        &self.conditions
    }

    /// Reads the commit folder: ignore lists, consolidated commits (with embedded delete
    /// tiles), commit markers, vacuum files, delete and update commits; then the legacy
    /// fragments in the root.
    fn load_candidates(
        &mut self,
        root_entries: &[(String, bool, u64)],
        commits: &[(String, bool, u64)],
    ) -> Result<()> {
        let commits_dir = self.root.join(names::COMMITS_DIR);
        let mut ignore = HashSet::new();
        for (name, _, _) in commits.iter().filter(|(n, _, _)| n.ends_with(".ign")) {
            ignore.extend(lines(&self.read_file(&commits_dir.join(name))?));
        }
        let mut consolidated: HashSet<String> = HashSet::new();
        for (name, _, _) in commits.iter().filter(|(n, _, _)| n.ends_with(".con")) {
            let path = commits_dir.join(name);
            let bytes = self.read_file(&path)?;
            let mut pos = 0usize;
            while pos < bytes.len() {
                let end = bytes[pos..]
                    .iter()
                    .position(|b| *b == b'\n')
                    .map_or(bytes.len(), |p| pos + p);
                let line = String::from_utf8_lossy(&bytes[pos..end]).into_owned();
                pos = (end + 1).min(bytes.len());
                if !ignore.contains(&line) {
                    consolidated.insert(line.clone());
                }
                if line.ends_with(".del") {
                    let size_bytes = bytes.get(pos..pos + 8).ok_or_else(|| {
                        Error::corrupt(format!("{path}: the delete commit {line} has no tile size"))
                    })?;
                    let size = u64::from_le_bytes(size_bytes.try_into().expect("8 bytes"));
                    let offset = pos as u64 + 8;
                    let stamp = TimestampedName::parse(&line)?;
                    self.conditions.push(ConditionCommit {
                        marker: line.clone(),
                        file: path.clone(),
                        offset,
                        size,
                        timestamp: stamp.t1,
                        is_update: false,
                    });
                    pos = usize::try_from(offset.saturating_add(size))
                        .unwrap_or(usize::MAX)
                        .min(bytes.len());
                }
            }
        }
        let mut from_con: Vec<&String> = consolidated.iter().collect();
        from_con.sort();
        let mut candidates = Vec::new();
        // Legacy (format < 12) fragments in the root: folders with a `.ok` marker.
        let oks: HashSet<&str> = root_entries
            .iter()
            .filter_map(|(n, d, _)| n.strip_suffix(".ok").filter(|_| !d))
            .collect();
        for (name, is_dir, _) in root_entries {
            let legacy = *is_dir
                && name.starts_with("__")
                && !name.contains('.')
                && (oks.contains(name.as_str())
                    || consolidated.contains(&format!("{name}.ok"))
                    || TimestampedName::parse(name).is_ok_and(|n| n.name_version < 5)
                        && self
                            .storage
                            .is_file(&self.root.join(name).join(names::FRAGMENT_METADATA_FILE))?);
            let vacuum = !is_dir && name.ends_with(".vac");
            if (legacy && TimestampedName::parse(name).is_ok()) || vacuum {
                candidates.push(name.clone());
            }
        }
        for line in from_con {
            if let Some(name) = line.strip_suffix(".wrt") {
                let name = name.rsplit('/').next().unwrap_or(name);
                candidates.push(format!("{}/{name}", names::FRAGMENTS_DIR));
            }
        }
        for (name, _, size) in commits {
            let rel = format!("{}/{name}", names::COMMITS_DIR);
            if let Some(frag) = name.strip_suffix(".wrt") {
                if !consolidated.contains(&rel) {
                    candidates.push(format!("{}/{frag}", names::FRAGMENTS_DIR));
                }
            } else if name.ends_with(".vac") {
                candidates.push(rel);
            } else if (name.ends_with(".del") || name.ends_with(".upd"))
                && !consolidated.contains(&rel)
            {
                let stamp = TimestampedName::parse(name)?;
                self.conditions.push(ConditionCommit {
                    marker: rel,
                    file: commits_dir.join(name),
                    offset: 0,
                    size: *size,
                    timestamp: stamp.t1,
                    is_update: name.ends_with(".upd"),
                });
            }
        }
        self.candidates = candidates;
        Ok(())
    }

    /// The fragments visible for the open range `[start, end]`, in TileDB's order (sorted by
    /// t1, stable on listing order; later ones win in merges). `partial_overlap`: whether
    /// fragments of format version ≥ 15 need only overlap the range (TileDB does this for
    /// sparse arrays opened for reading; they carry per-cell timestamps) instead of lying
    /// inside it.
    pub fn fragments(
        &self,
        start: u64,
        end: u64,
        partial_overlap: bool,
    ) -> Result<Vec<FragmentDir>> {
        let overlaps = |n: &TimestampedName| {
            if partial_overlap && n.name_version >= 15 {
                n.t1 <= end && start <= n.t2
            } else {
                n.t1 >= start && n.t2 <= end
            }
        };
        let parsed: Vec<(String, TimestampedName)> = self
            .candidates
            .iter()
            .map(|c| TimestampedName::parse(c).map(|n| (c.clone(), n)))
            .collect::<Result<_>>()?;
        let vacuumed = self.vacuumed(&parsed, overlaps, names::FRAGMENTS_DIR)?;
        let mut out: Vec<FragmentDir> = parsed
            .into_iter()
            .filter(|(rel, n)| !rel.ends_with(".vac") && !vacuumed.contains(rel) && overlaps(n))
            .map(|(rel, name)| FragmentDir {
                path: self.root.join(&rel),
                name,
            })
            .collect();
        out.sort_by_key(|f| f.name.t1);
        Ok(out)
    }

    /// The entries listed by the `.vac` files among `parsed` that overlap the open range
    /// (`compute_uris_to_vacuum`), as paths relative to the root; only entries that are
    /// themselves candidates overlapping the range count.
    fn vacuumed(
        &self,
        parsed: &[(String, TimestampedName)],
        overlaps: impl Fn(&TimestampedName) -> bool,
        folder: &str,
    ) -> Result<HashSet<String>> {
        let mut live: HashMap<&str, ()> = HashMap::new();
        for (rel, n) in parsed {
            if !rel.ends_with(".vac") && overlaps(n) {
                live.insert(rel.as_str(), ());
            }
        }
        let mut out = HashSet::new();
        for (rel, n) in parsed {
            if !rel.ends_with(".vac") || !overlaps(n) {
                continue;
            }
            for line in lines(&self.read_file(&self.root.join(rel))?) {
                let entry = vacuum_entry(&line, folder);
                if live.contains_key(entry.as_str()) {
                    out.insert(entry);
                }
            }
        }
        Ok(out)
    }

    /// Folders in `__fragments/` that no commit marker or consolidated commit names: what a
    /// writer leaves when it stops before its commit. Every reader (TileDB's and this one)
    /// ignores them.
    pub fn uncommitted_fragments(&self) -> Result<Vec<String>> {
        let committed: HashSet<&str> = self
            .candidates
            .iter()
            .filter_map(|c| c.strip_prefix(names::FRAGMENTS_DIR))
            .map(|c| c.trim_start_matches('/'))
            .collect();
        Ok(list(&self.storage, &self.root.join(names::FRAGMENTS_DIR))?
            .into_iter()
            .filter(|(n, is_dir, _)| *is_dir && !committed.contains(n.as_str()))
            .map(|(n, _, _)| n)
            .collect())
    }

    /// The `__meta` files visible for `[start, end]` (full overlap, minus vacuumed ones), sorted
    /// by t1 as TileDB applies them.
    pub fn metadata_files(&self, start: u64, end: u64) -> Result<Vec<Uri>> {
        let overlaps = |n: &TimestampedName| n.t1 >= start && n.t2 <= end;
        let parsed: Vec<(String, TimestampedName)> = self
            .meta
            .iter()
            .map(|m| {
                let rel = format!("{}/{m}", names::META_DIR);
                TimestampedName::parse(m).map(|n| (rel, n))
            })
            .collect::<Result<_>>()?;
        let vacuumed = self.vacuumed(&parsed, overlaps, names::META_DIR)?;
        let mut out: Vec<(u64, Uri)> = parsed
            .into_iter()
            .filter(|(rel, n)| !rel.ends_with(".vac") && !vacuumed.contains(rel) && overlaps(n))
            .map(|(rel, n)| (n.t1, self.root.join(rel)))
            .collect();
        out.sort_by_key(|(t, _)| *t);
        Ok(out.into_iter().map(|(_, p)| p).collect())
    }

    /// The delete/update commits TileDB applies for the open range: name range fully inside it,
    /// sorted by timestamp.
    pub fn conditions_in(&self, start: u64, end: u64) -> Result<Vec<ConditionCommit>> {
        let mut out = Vec::new();
        for c in &self.conditions {
            let n = TimestampedName::parse(&c.marker)?;
            if n.t1 >= start && n.t2 <= end {
                out.push(c.clone());
            }
        }
        out.sort_by_key(|c| c.timestamp);
        Ok(out)
    }
}

/// A vacuum-file line as a path relative to the array root (`get_full_vac_uri`): from the
/// `__fragments` (or `__meta`) component on; legacy absolute URIs keep their last component.
fn vacuum_entry(line: &str, folder: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_like_fragment_id() {
        let n = TimestampedName::parse("/a/__fragments/__5_6_0123456789abcdef0123456789abcdef_22")
            .unwrap();
        assert_eq!((n.t1, n.t2, n.name_version), (5, 6, 22));
        let n = TimestampedName::parse("__3_3_0123456789abcdef0123456789abcdef_13.wrt").unwrap();
        assert_eq!((n.t1, n.t2, n.name_version), (3, 3, 13));
        let n = TimestampedName::parse("__7_9_0123456789abcdef0123456789abcdef").unwrap();
        assert_eq!((n.t1, n.t2, n.name_version), (7, 9, 4));
        let n = TimestampedName::parse("__0123456789abcdef0123456789abcdef_1500").unwrap();
        assert_eq!((n.t1, n.t2, n.name_version), (1500, 1500, 2));
        assert!(TimestampedName::parse("__9_5_0123456789abcdef0123456789abcdef_22").is_err());
        assert!(TimestampedName::parse("nounderscore").is_err());
    }

    #[test]
    fn text_lines_and_vacuum_entries() {
        assert_eq!(lines(b"a\nb\n"), ["a", "b"]);
        assert_eq!(lines(b"a\nb"), ["a", "b"]);
        assert!(lines(b"").is_empty());
        assert_eq!(
            vacuum_entry("/__fragments/__1_1_x_22", names::FRAGMENTS_DIR),
            "__fragments/__1_1_x_22"
        );
        assert_eq!(
            vacuum_entry("file:///tmp/a/__1_1_x_5", names::FRAGMENTS_DIR),
            "__1_1_x_5"
        );
        assert_eq!(
            vacuum_entry("/__meta/__1_2_x", names::META_DIR),
            "__meta/__1_2_x"
        );
    }

    #[test]
    fn new_names_parse_back() {
        let a = names::new_timestamped_name(5, 7, 22);
        let n = TimestampedName::parse(&a).unwrap();
        assert_eq!((n.t1, n.t2, n.name_version), (5, 7, 22));
        assert_eq!(a.len(), "__5_7__22".len() + 32);
        let b = names::new_timestamped_name(5, 7, 22);
        // Labels of one millisecond count up; across milliseconds they restart.
        assert_ne!(a, b);
        let now = TimestampedName::parse(&names::new_timestamped_name(0, 0, 22)).unwrap();
        assert!(now.t1 > 1_600_000_000_000 && now.t1 == now.t2);
        assert_eq!(names::commit_file_name(&a), format!("{a}.wrt"));
    }

    #[test]
    fn unknown_remote_schemes_are_refused() {
        let e = ArrayDirectory::open("tiledb://ns/array", &StorageConfig::new()).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{e:?}");
    }
}
