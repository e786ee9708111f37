//! A group details file (`__group/__<t1>_<t2>_<label>_<v>`): a generic tile whose payload is
//! TileDB's `GroupDetails` serialization, little-endian:
//!
//! ```text
//! u32 details_version (1 or 2)     u64 member_count
//! per member: u32 member_version   u8 object_type (1 group, 2 array; 0 invalid)
//!             u8 relative          u64 uri_size, uri
//!             u8 has_name          [u64 name_size, name]
//!             u8 deleted           (member version 2 only)
//! ```
//!
//! Version 2 files apply in timestamp order: a member replaces the one of the same key (its
//! name, or its URI when it has none), a deleted member removes it.

use crate::error::{Error, Result};
use crate::format::byte_reader::ByteReader;

/// The group details format version TileDB 2.30 writes (also the suffix of the file name).
pub const DETAILS_VERSION: u32 = 2;

/// What a member is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectType {
    /// Not an array or group (TileDB 2.30 stores this for members that did not exist).
    Invalid = 0,
    /// A group.
    Group = 1,
    /// An array.
    Array = 2,
}

impl ObjectType {
    fn from_u8(v: u8) -> Option<ObjectType> {
        match v {
            0 => Some(ObjectType::Invalid),
            1 => Some(ObjectType::Group),
            2 => Some(ObjectType::Array),
            _ => None,
        }
    }

    /// `group`, `array` or `invalid`.
    pub fn name(self) -> &'static str {
        match self {
            ObjectType::Invalid => "invalid",
            ObjectType::Group => "group",
            ObjectType::Array => "array",
        }
    }
}

/// One member record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupMember {
    /// The URI as stored: relative to the group, or absolute (`file:///…`, `s3://…`).
    pub uri: String,
    /// What it is.
    pub object_type: ObjectType,
    /// Whether `uri` is relative to the group.
    pub relative: bool,
    /// The member's name, if it has one.
    pub name: Option<String>,
    /// Whether this record removes the member.
    pub deleted: bool,
}

impl GroupMember {
    /// The member's key: its name, or its URI when it has none.
    pub fn key(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.uri)
    }
}

/// Parses a details payload into its version and member records in file order.
pub fn parse(payload: &[u8]) -> Result<(u32, Vec<GroupMember>)> {
    let mut r = ByteReader::new(payload, "group details");
    let version = r.u32()?;
    if version != 1 && version != 2 {
        return Err(Error::Unsupported(format!(
            "group details version {version} (1 and 2 are read)"
        )));
    }
    let count = r.u64()?;
    let mut members = Vec::new();
    for i in 0..count {
        let bad = |what: &str| Error::corrupt(format!("group details: member {i}: {what}"));
        let member_version = r.u32()?;
        if member_version != 1 && member_version != 2 {
            return Err(bad(&format!("unknown member version {member_version}")));
        }
        let t = r.u8()?;
        let object_type = ObjectType::from_u8(t).ok_or_else(|| bad(&format!("object type {t}")))?;
        let relative = r.u8()? != 0;
        let n = usize::try_from(r.u64()?).map_err(|_| bad("URI size"))?;
        let uri = String::from_utf8(r.take(n)?.to_vec()).map_err(|_| bad("URI is not UTF-8"))?;
        let name = if r.u8()? != 0 {
            let n = usize::try_from(r.u64()?).map_err(|_| bad("name size"))?;
            Some(String::from_utf8(r.take(n)?.to_vec()).map_err(|_| bad("name is not UTF-8"))?)
        } else {
            None
        };
        let deleted = member_version >= 2 && r.u8()? != 0;
        members.push(GroupMember {
            uri,
            object_type,
            relative,
            name,
            deleted,
        });
    }
    if r.remaining() > 0 {
        return Err(Error::corrupt(format!(
            "group details: {} bytes after the last member",
            r.remaining()
        )));
    }
    Ok((version, members))
}

/// The version-2 payload of `members`.
pub fn serialize(members: &[GroupMember]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend(DETAILS_VERSION.to_le_bytes());
    out.extend((members.len() as u64).to_le_bytes());
    for m in members {
        out.extend(2u32.to_le_bytes());
        out.push(m.object_type as u8);
        out.push(u8::from(m.relative));
        out.extend((m.uri.len() as u64).to_le_bytes());
        out.extend(m.uri.as_bytes());
        match &m.name {
            Some(n) => {
                out.push(1);
                out.extend((n.len() as u64).to_le_bytes());
                out.extend(n.as_bytes());
            }
            None => out.push(0),
        }
        out.push(u8::from(m.deleted));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The payload TileDB 2.30 wrote for `G.add("arr", relative=True, name="x")` and
    /// `G.add("/tmp/life/arr")` in one session.
    const TILEDB: &[u8] = b"\x02\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x02\x00\x14\x00\x00\x00\x00\x00\x00\x00file:///tmp/life/arr\x00\x00\x02\x00\x00\x00\x02\x01\x03\x00\x00\x00\x00\x00\x00\x00arr\x01\x01\x00\x00\x00\x00\x00\x00\x00x\x00";

    #[test]
    fn tiledb_payload_round_trips() {
        let (v, m) = parse(TILEDB).unwrap();
        assert_eq!(v, 2);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].uri, "file:///tmp/life/arr");
        assert!(!m[0].relative && m[0].name.is_none() && !m[0].deleted);
        assert_eq!(m[1].key(), "x");
        assert_eq!((m[1].uri.as_str(), m[1].relative), ("arr", true));
        assert_eq!(m[1].object_type, ObjectType::Array);
        assert_eq!(serialize(&m), TILEDB);
        for cut in 0..TILEDB.len() {
            assert!(parse(&TILEDB[..cut]).is_err(), "{cut}");
        }
        let mut bad = TILEDB.to_vec();
        bad[16] = 9;
        assert!(parse(&bad).unwrap_err().message().contains("object type 9"));
    }
}
