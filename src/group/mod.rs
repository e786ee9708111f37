//! TileDB groups, as TileDB 2.30 stores them: a folder with an empty `__tiledb_group.tdb`
//! marker, `__group/` (one details file per write session that changed members, see
//! [`details`]) and `__meta/` (group metadata, the format of array metadata,
//! [`crate::array::metadata`]). A group is not an array: it names arrays and groups by URI,
//! relative to the group or absolute, optionally under a name.
//!
//! ```no_run
//! use tdbfilter::group::{self, Group, GroupChanges, GroupOptions};
//! group::create("my_group", &Default::default()).unwrap();
//! let mut changes = GroupChanges::default();
//! changes.add("my_array", true, Some("a"));
//! group::update("my_group", &changes, &GroupOptions::default()).unwrap();
//! let g = Group::open("my_group", &GroupOptions::default()).unwrap();
//! assert_eq!(g.members()[0].name.as_deref(), Some("a"));
//! ```
//!
//! Differences from TileDB 2.30: adding a member that is neither an array nor a group is
//! refused (TileDB stores it with object type INVALID, and TileDB-Py then fails listing the
//! group).

pub mod details;

pub use details::{GroupMember, ObjectType};

use crate::array::directory::{TimestampedName, names};
use crate::array::metadata::{self, MetadataChange, MetadataEntry};
use crate::error::{Error, Result};
use crate::pipeline::generic_tile;
use crate::storage::{Storage, StorageConfig, Uri};
use std::collections::{BTreeMap, HashSet};

/// The group marker file.
pub const GROUP_FILE: &str = "__tiledb_group.tdb";
/// The folder of group details files.
pub const GROUP_DETAILS_DIR: &str = "__group";

/// How to open or write a group.
#[derive(Clone, Debug, Default)]
pub struct GroupOptions {
    /// The AES-256-GCM key of an encrypted group.
    pub key: Option<Vec<u8>>,
    /// First timestamp of the open range (ms).
    pub timestamp_start: u64,
    /// Last timestamp of the open range (ms; `None`: now). For writes: the timestamp of the
    /// files written.
    pub timestamp_end: Option<u64>,
    /// Object-store options.
    pub config: StorageConfig,
}

/// What `uri` is: an array, a group, or neither (`None`).
pub fn object_type(storage: &Storage, uri: &Uri) -> Result<Option<ObjectType>> {
    if storage.is_dir(&uri.join(names::SCHEMA_DIR))?
        || storage.is_file(&uri.join(names::LEGACY_SCHEMA_FILE))?
    {
        return Ok(Some(ObjectType::Array));
    }
    if storage.is_file(&uri.join(GROUP_FILE))? || storage.is_dir(&uri.join(GROUP_DETAILS_DIR))? {
        return Ok(Some(ObjectType::Group));
    }
    Ok(None)
}

/// Creates an empty group at `uri` (the folder and missing parents, the marker, `__group/`
/// and `__meta/`). An existing array or group there is refused.
pub fn create(uri: &str, config: &StorageConfig) -> Result<()> {
    let (storage, root) = Storage::open(uri, config)?;
    if let Some(t) = object_type(&storage, &root)? {
        return Err(Error::invalid(format!(
            "Cannot create group; {root} is already a TileDB {}",
            t.name()
        )));
    }
    storage.create_dir_all(&root)?;
    storage.create_dir(&root.join(GROUP_DETAILS_DIR))?;
    storage.create_dir(&root.join(names::META_DIR))?;
    storage.write_new(&root.join(GROUP_FILE), &[])?;
    storage.sync_dir(&root)
}

/// An opened group: its members and metadata at the open timestamp range.
#[derive(Clone, Debug)]
pub struct Group {
    storage: Storage,
    root: Uri,
    members: Vec<GroupMember>,
    metadata: Vec<MetadataEntry>,
}

/// The timestamped files of `dir` inside `[start, end]`, minus those its `.vac` files list,
/// sorted by first timestamp (then name).
fn visible_files(
    storage: &Storage,
    dir: &Uri,
    folder: &str,
    start: u64,
    end: u64,
) -> Result<Vec<Uri>> {
    let entries: Vec<String> = storage
        .list(dir)?
        .into_iter()
        .filter(|e| !e.is_dir)
        .map(|e| e.name)
        .collect();
    let mut vacuumed = HashSet::new();
    for v in entries.iter().filter(|n| n.ends_with(".vac")) {
        for line in String::from_utf8_lossy(&storage.read(&dir.join(v))?).lines() {
            let last = line.rsplit('/').next().unwrap_or(line);
            vacuumed.insert(last.to_string());
        }
    }
    let mut out = Vec::new();
    for name in entries.iter().filter(|n| !n.ends_with(".vac")) {
        let n = TimestampedName::parse(name).map_err(|e| e.context(format!("{folder}/{name}")))?;
        if n.t1 >= start && n.t2 <= end && !vacuumed.contains(name) {
            out.push((n.t1, name.clone()));
        }
    }
    out.sort();
    Ok(out.into_iter().map(|(_, n)| dir.join(n)).collect())
}

impl Group {
    /// Opens the group at `uri` for reading.
    pub fn open(uri: &str, options: &GroupOptions) -> Result<Group> {
        let (storage, root) = Storage::open(uri, &options.config)?;
        if object_type(&storage, &root)? != Some(ObjectType::Group) {
            return Err(Error::invalid(format!("{root} is not a TileDB group")));
        }
        let start = options.timestamp_start;
        let end = options.timestamp_end.unwrap_or_else(names::now_ms);
        let key = options.key.as_deref();
        let mut members: BTreeMap<String, GroupMember> = BTreeMap::new();
        let details_dir = root.join(GROUP_DETAILS_DIR);
        for f in visible_files(&storage, &details_dir, GROUP_DETAILS_DIR, start, end)? {
            let bytes = storage.read(&f)?;
            let (_, tile, _) = generic_tile::read(&bytes, key)
                .map_err(|e| e.context(format!("group details {}", f.name())))?;
            let (_, records) =
                details::parse(tile.data()).map_err(|e| e.context(f.name().to_string()))?;
            for m in records {
                if m.deleted {
                    members.remove(m.key());
                } else {
                    members.insert(m.key().to_string(), m);
                }
            }
        }
        let meta_files = visible_files(
            &storage,
            &root.join(names::META_DIR),
            names::META_DIR,
            start,
            end,
        )?;
        let metadata = metadata::load(&storage, &meta_files, key)?;
        Ok(Group {
            storage,
            root,
            members: members.into_values().collect(),
            metadata,
        })
    }

    /// The group's folder.
    pub fn root(&self) -> &Uri {
        &self.root
    }

    /// The members, sorted by key.
    pub fn members(&self) -> &[GroupMember] {
        &self.members
    }

    /// The member named `name`.
    pub fn member(&self, name: &str) -> Option<&GroupMember> {
        self.members
            .iter()
            .find(|m| m.name.as_deref() == Some(name))
    }

    /// The member's location: a relative URI joined to the group's folder, an absolute one
    /// as stored.
    pub fn member_uri(&self, m: &GroupMember) -> String {
        if m.relative {
            self.root.join(&m.uri).as_str().to_string()
        } else {
            m.uri.clone()
        }
    }

    /// The group metadata, sorted by key.
    pub fn metadata(&self) -> &[MetadataEntry] {
        &self.metadata
    }

    /// The storage holding the group.
    pub fn storage(&self) -> &Storage {
        &self.storage
    }
}

/// A member to add.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Addition {
    uri: String,
    relative: bool,
    name: Option<String>,
}

/// The changes of one write session.
#[derive(Clone, Debug, Default)]
pub struct GroupChanges {
    adds: Vec<Addition>,
    removes: Vec<String>,
    /// Metadata changes.
    pub metadata: Vec<MetadataChange>,
}

impl GroupChanges {
    /// Adds the array or group at `uri` (relative to the group when `relative`), under `name`.
    pub fn add(&mut self, uri: &str, relative: bool, name: Option<&str>) -> &mut Self {
        self.adds.push(Addition {
            uri: uri.to_string(),
            relative,
            name: name.map(str::to_string),
        });
        self
    }

    /// Removes the member of name (or URI) `name_or_uri`.
    pub fn remove(&mut self, name_or_uri: &str) -> &mut Self {
        self.removes.push(name_or_uri.to_string());
        self
    }

    /// Puts or deletes a metadata key.
    pub fn metadata(&mut self, change: MetadataChange) -> &mut Self {
        self.metadata.push(change);
        self
    }
}

/// An absolute member URI as TileDB stores it: local paths become `file://` URIs.
fn absolute_uri(uri: &str) -> Result<String> {
    if uri.contains("://") {
        return Ok(uri.to_string());
    }
    let path = std::path::Path::new(uri);
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| Error::invalid(format!("{uri}: no current folder to resolve it: {e}")))?
            .join(path)
    };
    Ok(format!("file://{}", abs.to_string_lossy()))
}

/// The newest timestamp in the names of the group's details and metadata files (0: none).
fn newest_timestamp(storage: &Storage, root: &Uri) -> Result<u64> {
    let mut newest = 0;
    for dir in [GROUP_DETAILS_DIR, names::META_DIR] {
        let d = root.join(dir);
        if !storage.is_dir(&d)? {
            continue;
        }
        for e in storage.list(&d)? {
            if let Ok(n) = TimestampedName::parse(&e.name) {
                newest = newest.max(n.t2);
            }
        }
    }
    Ok(newest)
}

/// The current time (ms), once it is later than `t`: sessions of the same group written within
/// one millisecond would otherwise share a timestamp and apply in the random order of their
/// labels (TileDB's `now` has that race; docs/DIFFERENCES.md). Waits at most a millisecond
/// unless the newest file is stamped in the future.
fn later_than(t: u64) -> u64 {
    loop {
        let now = names::now_ms();
        if now > t {
            return now;
        }
        if t - now > 1_000 {
            // A file stamped in the future (another clock): do not wait for it.
            return now;
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// Writes one session of `changes` to the group at `uri`: a details file
/// `__group/__<t>_<t>_<label>_2` when members change (the whole membership after the changes
/// and the removed members, as TileDB writes it), and a `__meta` file when metadata changes,
/// both at `options.timestamp_end` (or now). Checks as TileDB does: an added member must
/// exist, a key may be added or removed once per session, a removed member must exist (by
/// key, or by URI when one member has it). Returns the details file's name, if written.
pub fn update(uri: &str, changes: &GroupChanges, options: &GroupOptions) -> Result<Option<String>> {
    let read = GroupOptions {
        timestamp_end: None,
        ..options.clone()
    };
    let group = Group::open(uri, &read)?;
    let storage = group.storage.clone();
    let root = group.root.clone();
    let key = options.key.as_deref();
    let mut current: BTreeMap<String, GroupMember> = group
        .members
        .iter()
        .map(|m| (m.key().to_string(), m.clone()))
        .collect();
    let mut touched = HashSet::new();
    let mut added = Vec::new();
    for a in &changes.adds {
        let location = if a.relative {
            root.join(&a.uri)
        } else {
            Storage::open(&a.uri, &options.config)?.1
        };
        let object_type = object_type(&storage, &location)?.ok_or_else(|| {
            Error::invalid(format!(
                "Cannot add group member {location}: it is not a TileDB array or group"
            ))
        })?;
        let m = GroupMember {
            uri: if a.relative {
                a.uri.clone()
            } else {
                absolute_uri(&a.uri)?
            },
            object_type,
            relative: a.relative,
            name: a.name.clone(),
            deleted: false,
        };
        if !touched.insert(m.key().to_string()) {
            return Err(Error::invalid(format!(
                "Cannot add group member {}, a member with the same name or URI has already \
                 been added.",
                m.key()
            )));
        }
        added.push(m);
    }
    let mut removed = Vec::new();
    for r in &changes.removes {
        let found = current
            .get(r)
            .or_else(|| absolute_uri(r).ok().and_then(|a| current.get(&a)))
            .cloned();
        let found = match found {
            Some(m) => m,
            None => {
                let by_uri: Vec<&GroupMember> = current
                    .values()
                    .filter(|m| &m.uri == r || absolute_uri(r).is_ok_and(|a| m.uri == a))
                    .collect();
                match by_uri.as_slice() {
                    [m] => (*m).clone(),
                    [] => {
                        return Err(Error::invalid(format!(
                            "Cannot remove group member {r}, member does not exist in group."
                        )));
                    }
                    _ => {
                        return Err(Error::invalid(format!(
                            "Cannot remove group member {r}, there are multiple members with \
                             the same URI, please remove by name."
                        )));
                    }
                }
            }
        };
        if !touched.insert(found.key().to_string()) {
            return Err(Error::invalid(format!(
                "Cannot remove group member {}, a member with the same name or URI has \
                 already been added or removed.",
                found.key()
            )));
        }
        removed.push(found);
    }
    let t = match options.timestamp_end {
        Some(t) if t > 0 => t,
        _ => later_than(newest_timestamp(&storage, &root)?),
    };
    let mut written = None;
    if !added.is_empty() || !removed.is_empty() {
        for m in &removed {
            current.remove(m.key());
        }
        for m in &added {
            current.remove(m.key());
        }
        let mut records: Vec<GroupMember> = added.iter().rev().cloned().collect();
        records.extend(current.into_values());
        records.extend(removed.into_iter().map(|mut m| {
            m.deleted = true;
            m
        }));
        let tile = generic_tile::write_payload(&details::serialize(&records), key)?;
        let name = format!(
            "__{t}_{t}_{}_{}",
            names::random_label().0,
            details::DETAILS_VERSION
        );
        let dir = root.join(GROUP_DETAILS_DIR);
        storage.create_dir(&dir)?;
        storage
            .write_new(&dir.join(&name), &tile)
            .and_then(|()| storage.sync_dir(&dir))
            .map_err(|e| e.context(format!("group details {name}")))?;
        written = Some(name);
    }
    metadata::write(&storage, &root, key, Some(t), &changes.metadata)?;
    Ok(written)
}

/// Writes `bytes` as the new file `name` of the group's `__meta/` whole or not at all: locally
/// written and synced as `<root>/<name>.meta.tmp` (outside the folders readers list), then
/// renamed into place; in an object store one upload, atomic already.
fn write_meta_whole(storage: &Storage, root: &Uri, name: &str, bytes: &[u8]) -> Result<()> {
    let dir = root.join(names::META_DIR);
    storage.create_dir(&dir)?;
    if !storage.is_local() {
        return storage.write_new(&dir.join(name), bytes);
    }
    let tmp = root.join(format!("{name}.meta{}", crate::storage::TEMP_SUFFIX));
    if storage.is_file(&tmp)? {
        storage.remove_file(&tmp)?;
    }
    storage.write_new(&tmp, bytes)?;
    storage.rename(&tmp, &dir.join(name))?;
    storage.sync_dir(&dir)?;
    storage.sync_dir(root)
}

/// Consolidates the metadata of the group at `uri` as TileDB 2.30's
/// `tiledb_group_consolidate_metadata`: the metadata files visible in
/// [`timestamp_start`, `timestamp_end`] of `options` merged into one
/// `__meta/__<t1>_<t2>_<uuid>` holding their entries (deleted keys left out), then
/// `__meta/<that name>.vac` listing the merged files for [`vacuum_metadata`]. Readers see the
/// same metadata before, during and after. Returns the files written (relative to the group);
/// none when at most one file is visible.
pub fn consolidate_metadata(uri: &str, options: &GroupOptions) -> Result<Vec<String>> {
    let (storage, root) = Storage::open(uri, &options.config)?;
    if object_type(&storage, &root)? != Some(ObjectType::Group) {
        return Err(Error::invalid(format!("{root} is not a TileDB group")));
    }
    let end = options
        .timestamp_end
        .unwrap_or(u64::MAX)
        .min(names::now_ms());
    let files = visible_files(
        &storage,
        &root.join(names::META_DIR),
        names::META_DIR,
        options.timestamp_start,
        end,
    )?;
    let mut written = Vec::new();
    let Some(c) = metadata::consolidated(&storage, &files, options.key.as_deref())? else {
        return Ok(written);
    };
    if let Some(file) = &c.file {
        write_meta_whole(&storage, &root, &c.name, file)
            .map_err(|e| e.context(format!("consolidated group metadata {}", c.name)))?;
        written.push(format!("{}/{}", names::META_DIR, c.name));
    }
    write_meta_whole(&storage, &root, &c.vac_name, &c.vac)
        .map_err(|e| e.context(format!("group metadata vacuum file {}", c.vac_name)))?;
    written.push(format!("{}/{}", names::META_DIR, c.vac_name));
    Ok(written)
}

/// Vacuums the metadata of the group at `uri` after [`consolidate_metadata`], as TileDB 2.30's
/// `tiledb_group_vacuum_metadata`: removes the `__meta` files the `.vac` files list, then the
/// `.vac` files. Returns what it removed (relative to the group).
pub fn vacuum_metadata(uri: &str, config: &StorageConfig) -> Result<Vec<String>> {
    let (storage, root) = Storage::open(uri, config)?;
    if object_type(&storage, &root)? != Some(ObjectType::Group) {
        return Err(Error::invalid(format!("{root} is not a TileDB group")));
    }
    let removed = metadata::vacuumable(&storage, &root)?;
    for rel in &removed {
        storage
            .remove_file(&root.join(rel))
            .map_err(|e| e.context(format!("removing {rel}")))?;
    }
    Ok(removed)
}
