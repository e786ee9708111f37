//! Array metadata (`__meta`, docs/ARRAY.md §6): key → typed values, from the visible files applied
//! in timestamp order (a later entry replaces an earlier one, a deletion removes it). The read
//! side ([`parse`], [`load`]) and the write side ([`serialize`], [`write`]) of one file, and
//! the consolidation ([`consolidated`]) and vacuum ([`vacuumable`]) of a `__meta` folder, which
//! arrays and groups share (TileDB's `ArrayMetaConsolidator` and `GroupMetaConsolidator`).

use super::directory::{TimestampedName, names};
use crate::error::{Error, Result};
use crate::format::byte_reader::ByteReader;
use crate::format::datatype::Datatype;
use crate::pipeline::generic_tile;
use crate::storage::{Storage, Uri};
use std::collections::{BTreeMap, BTreeSet};

/// One metadata entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetadataEntry {
    /// Key.
    pub key: String,
    /// Value type.
    pub datatype: Datatype,
    /// Number of values.
    pub value_num: u32,
    /// The values' bytes (`value_num × datatype.size()`).
    pub value: Vec<u8>,
}

/// One change written to the array metadata: a key put with its values, or deleted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MetadataChange {
    /// Puts `entry` (replacing an earlier value of its key).
    Put(MetadataEntry),
    /// Deletes the key.
    Delete(String),
}

impl MetadataChange {
    /// The key changed.
    pub fn key(&self) -> &str {
        match self {
            MetadataChange::Put(e) => &e.key,
            MetadataChange::Delete(k) => k,
        }
    }
}

impl MetadataEntry {
    /// An entry of `value_num` values of `datatype` in `value`, checked as TileDB's
    /// `Metadata::put` checks it: the type is not `ANY` and `value` holds exactly
    /// `value_num` values.
    pub fn new(key: &str, datatype: Datatype, value_num: u32, value: &[u8]) -> Result<Self> {
        if datatype == Datatype::Any {
            return Err(Error::invalid(format!(
                "metadata {key}: Cannot put metadata; Value type cannot be ANY"
            )));
        }
        let size = (value_num as usize)
            .checked_mul(datatype.size())
            .ok_or_else(|| Error::invalid(format!("metadata {key}: size overflows")))?;
        if size != value.len() {
            return Err(Error::invalid(format!(
                "metadata {key}: {} bytes for {value_num} values of {} ({size} bytes)",
                value.len(),
                datatype.name()
            )));
        }
        Ok(MetadataEntry {
            key: key.to_string(),
            datatype,
            value_num,
            value: value.to_vec(),
        })
    }
}

/// The payload of one metadata file holding `changes`: one entry per key, sorted by key, the
/// last change of a key winning (TileDB keeps them in a `std::map` and writes it in order).
pub fn serialize(changes: &[MetadataChange]) -> Result<Vec<u8>> {
    let mut by_key: BTreeMap<&str, &MetadataChange> = BTreeMap::new();
    for c in changes {
        by_key.insert(c.key(), c);
    }
    let mut out = Vec::new();
    for (key, change) in by_key {
        let len = u32::try_from(key.len())
            .map_err(|_| Error::invalid("metadata key longer than 4 GiB"))?;
        out.extend(len.to_le_bytes());
        out.extend(key.as_bytes());
        match change {
            MetadataChange::Delete(_) => out.push(1),
            MetadataChange::Put(e) => {
                out.push(0);
                out.push(e.datatype as u8);
                out.extend(e.value_num.to_le_bytes());
                out.extend(&e.value);
            }
        }
    }
    Ok(out)
}

/// Writes `changes` as one new metadata file `__meta/__<t>_<t>_<label>` of the array at
/// `root` in `storage` (TileDB writes one per array opened for writing; `timestamp` in milliseconds, `None`
/// or 0: now), a generic tile encrypted with `key` when given. The file is synced and its folder
/// too; an empty list writes nothing. Returns the file name.
pub fn write(
    storage: &Storage,
    root: &Uri,
    key: Option<&[u8]>,
    timestamp: Option<u64>,
    changes: &[MetadataChange],
) -> Result<Option<String>> {
    if changes.is_empty() {
        return Ok(None);
    }
    let t = names::write_timestamp(timestamp, "the array metadata")?;
    let payload = serialize(changes)?;
    let tile = generic_tile::write_payload(&payload, key)?;
    let name = format!("__{t}_{t}_{}", names::random_label().0);
    let dir = root.join(names::META_DIR);
    storage.create_dir(&dir)?;
    let path = dir.join(&name);
    storage
        .write_new(&path, &tile)
        .and_then(|()| storage.sync_dir(&dir))
        .map_err(|e| e.context(format!("array metadata {name}")))?;
    Ok(Some(name))
}

/// Parses one metadata payload into (key, entry or deletion) in file order.
pub fn parse(payload: &[u8]) -> Result<Vec<(String, Option<MetadataEntry>)>> {
    let mut r = ByteReader::new(payload, "array metadata");
    let mut out = Vec::new();
    while r.remaining() > 0 {
        let n = r.u32()? as usize;
        let key = String::from_utf8_lossy(r.take(n)?).into_owned();
        if r.u8()? != 0 {
            out.push((key, None));
            continue;
        }
        let t = r.u8()?;
        let datatype = Datatype::from_u8(t)
            .ok_or_else(|| Error::corrupt(format!("metadata {key}: unknown datatype {t}")))?;
        let value_num = r.u32()?;
        let size = (value_num as usize)
            .checked_mul(datatype.size())
            .ok_or_else(|| Error::corrupt(format!("metadata {key}: size overflows")))?;
        let value = r.take(size)?.to_vec();
        out.push((
            key.clone(),
            Some(MetadataEntry {
                key,
                datatype,
                value_num,
                value,
            }),
        ));
    }
    Ok(out)
}

/// Loads and merges the metadata files (already in application order).
pub fn load(storage: &Storage, files: &[Uri], key: Option<&[u8]>) -> Result<Vec<MetadataEntry>> {
    let mut map: BTreeMap<String, MetadataEntry> = BTreeMap::new();
    for f in files {
        let bytes = storage.read(f)?;
        let (_, tile, _) = generic_tile::read(&bytes, key)
            .map_err(|e| e.context(format!("array metadata {}", f.display())))?;
        for (k, e) in parse(tile.data()).map_err(|e| e.context(f.display()))? {
            match e {
                Some(e) => {
                    map.insert(k, e);
                }
                None => {
                    map.remove(&k);
                }
            }
        }
    }
    Ok(map.into_values().collect())
}

/// The files a metadata consolidation writes in `__meta/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsolidatedMetadata {
    /// The merged file's name, `__<t1>_<t2>_<uuid>` (the first merged file's start, the last
    /// one's end).
    pub name: String,
    /// The merged file (a generic tile of every visible entry), or `None` when no entry is
    /// left (every key deleted): TileDB then writes only the vacuum file.
    pub file: Option<Vec<u8>>,
    /// The vacuum file's name, `<name>.vac`.
    pub vac_name: String,
    /// The vacuum file: one `/__meta/<merged file>` line per merged file.
    pub vac: Vec<u8>,
}

/// Consolidates the metadata files `files` (the visible ones, in application order): the
/// entries they leave (deleted keys left out) as one file, and the vacuum file listing them.
/// Readers see the same entries before and after: the merged file starts at the first merged
/// file's timestamp, so later files still apply on top of it. `None` when there is at most one
/// file (nothing to merge).
pub fn consolidated(
    storage: &Storage,
    files: &[Uri],
    key: Option<&[u8]>,
) -> Result<Option<ConsolidatedMetadata>> {
    let (Some(first), Some(last)) = (files.first(), files.last()) else {
        return Ok(None);
    };
    if files.len() == 1 {
        return Ok(None);
    }
    let entries = load(storage, files, key)?;
    let first = TimestampedName::parse(first.name())?;
    let last = TimestampedName::parse(last.name())?;
    let name = format!("__{}_{}_{}", first.t1, last.t2, names::random_label().0);
    let file = if entries.is_empty() {
        None
    } else {
        let changes: Vec<MetadataChange> = entries.into_iter().map(MetadataChange::Put).collect();
        Some(generic_tile::write_payload(&serialize(&changes)?, key)?)
    };
    let mut vac = String::new();
    for f in files {
        vac.push_str(&format!("/{}/{}\n", names::META_DIR, f.name()));
    }
    Ok(Some(ConsolidatedMetadata {
        vac_name: format!("{name}.vac"),
        name,
        file,
        vac: vac.into_bytes(),
    }))
}

/// What a metadata vacuum removes from `__meta/` of the array or group at `root`, in removal
/// order, as paths relative to `root`: the files the `.vac` files list (those still there,
/// sorted), then the `.vac` files. A `.vac` line names its file by a path ending in
/// `/__meta/<name>` (TileDB writes `/__meta/<name>`, older versions the whole URI).
pub fn vacuumable(storage: &Storage, root: &Uri) -> Result<Vec<String>> {
    let dir = root.join(names::META_DIR);
    if !storage.is_dir(&dir)? {
        return Ok(Vec::new());
    }
    let entries: Vec<String> = storage
        .list(&dir)?
        .into_iter()
        .filter(|e| !e.is_dir)
        .map(|e| e.name)
        .collect();
    let vac: Vec<&String> = entries.iter().filter(|n| n.ends_with(".vac")).collect();
    let live: BTreeSet<&str> = entries
        .iter()
        .filter(|n| !n.ends_with(".vac"))
        .map(String::as_str)
        .collect();
    let mut listed = BTreeSet::new();
    for v in &vac {
        let bytes = storage.read(&dir.join(v))?;
        for line in String::from_utf8_lossy(&bytes).lines() {
            let last = line.trim_end().rsplit('/').next().unwrap_or(line);
            if live.contains(last) {
                listed.insert(last.to_string());
            }
        }
    }
    Ok(listed
        .into_iter()
        .chain(vac.into_iter().cloned())
        .map(|n| format!("{}/{n}", names::META_DIR))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_and_deletions() {
        let mut p = Vec::new();
        p.extend(1u32.to_le_bytes());
        p.extend(b"a");
        p.extend([0, Datatype::Int32 as u8]);
        p.extend(2u32.to_le_bytes());
        p.extend(7i32.to_le_bytes());
        p.extend(8i32.to_le_bytes());
        p.extend(1u32.to_le_bytes());
        p.extend(b"b");
        p.push(1);
        let v = parse(&p).unwrap();
        assert_eq!(v.len(), 2);
        let e = v[0].1.as_ref().unwrap();
        assert_eq!((e.key.as_str(), e.value_num, e.value.len()), ("a", 2, 8));
        assert_eq!(v[1], ("b".to_string(), None));
        assert!(parse(&p[..p.len() - 3]).is_err());
    }
}
