//! Array metadata (`__meta`, docs/ARRAY.md §6): key → typed values, from the visible files applied
//! in timestamp order (a later entry replaces an earlier one, a deletion removes it).

use crate::error::{Error, Result};
use crate::format::byte_reader::ByteReader;
use crate::format::datatype::Datatype;
use crate::pipeline::generic_tile;
use crate::storage::{Storage, Uri};
use std::collections::BTreeMap;

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
