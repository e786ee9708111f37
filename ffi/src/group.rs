//! `tdb_group_t`: TileDB groups (src/group/): creating them, reading their members and
//! metadata, and changing both in write sessions (`tdb_group_commit`), as TileDB 2.30 stores
//! them (one `__group` details file and one `__meta` file per session).

use super::config::{config_of, consolidate_options_of, tdb_config_t};
use super::constants::{
    TDB_OBJECT_ARRAY, TDB_OBJECT_GROUP, TDB_OBJECT_INVALID, tdb_datatype_t, tdb_object_type_t,
    tdb_status_t,
};
use super::error::tdb_error_t;
use super::guard::{self, OptOut, Out, arg, arg_mut, guard};
use std::ffi::{CString, c_char, c_void};
use tdbfilter::Datatype;
use tdbfilter::array::metadata::{MetadataChange, MetadataEntry};
use tdbfilter::error::{Error, Result};
use tdbfilter::group::{self, Group, GroupChanges, GroupOptions, ObjectType};

/// One member as C sees it (strings valid while the group handle lives and is not
/// committed).
struct Member {
    uri: CString,
    name: Option<CString>,
    object_type: tdb_object_type_t,
    relative: bool,
}

/// An opened group: its members and metadata at the open timestamp, and the changes staged
/// for the next `tdb_group_commit`.
pub struct tdb_group_t {
    uri: String,
    options: GroupOptions,
    members: Vec<Member>,
    metadata: Vec<(CString, MetadataEntry)>,
    changes: GroupChanges,
}

impl tdb_group_t {
    fn load(uri: &str, options: GroupOptions) -> Result<tdb_group_t> {
        let g = Group::open(uri, &options)?;
        let members = g
            .members()
            .iter()
            .map(|m| Member {
                uri: guard::c_string(&g.member_uri(m)),
                name: m.name.as_deref().map(guard::c_string),
                object_type: match m.object_type {
                    ObjectType::Invalid => TDB_OBJECT_INVALID,
                    ObjectType::Group => TDB_OBJECT_GROUP,
                    ObjectType::Array => TDB_OBJECT_ARRAY,
                },
                relative: m.relative,
            })
            .collect();
        let metadata = g
            .metadata()
            .iter()
            .map(|e| (guard::c_string(&e.key), e.clone()))
            .collect();
        Ok(tdb_group_t {
            uri: uri.to_string(),
            options,
            members,
            metadata,
            changes: GroupChanges::default(),
        })
    }
}

/// Creates an empty group at `uri` (the folder and missing parents, `__tiledb_group.tdb`,
/// `__group/`, `__meta/`), as TileDB's `tiledb_group_create`. An existing array or group
/// there is `TDB_ERR_INVALID_ARGUMENT`. `config` may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_group_create(
    uri: *const c_char,
    config: *const tdb_config_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let uri = guard::c_str(uri, "uri")?;
        group::create(uri, &config_of(config)?)
    })
}

/// Opens the group at `uri` with the details and metadata files written up to `timestamp`
/// (milliseconds; 0: now) visible; commits write at `timestamp` (0: the time of the commit).
/// A folder that is not a group is `TDB_ERR_INVALID_ARGUMENT`. `config` may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_group_open(
    uri: *const c_char,
    timestamp: u64,
    config: *const tdb_config_t,
    group: *mut *mut tdb_group_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(group, "group")?;
        let uri = guard::c_str(uri, "uri")?;
        let options = GroupOptions {
            key: None,
            timestamp_start: 0,
            timestamp_end: (timestamp != 0).then_some(timestamp),
            config: config_of(config)?,
        };
        out.set(guard::new_handle(tdb_group_t::load(uri, options)?));
        Ok(())
    })
}

/// Frees a group; changes not committed are dropped. NULL is a no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_group_free(group: *mut tdb_group_t) {
    // SAFETY: the caller passes NULL or a group from this library, not yet freed.
    unsafe { guard::free_handle(group) }
}

/// The number of members (as opened or last committed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_group_member_count(
    group: *const tdb_group_t,
    count: *mut u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let g = arg(group, "group")?;
        Out::new(count, "count")?.set(g.members.len() as u32);
        Ok(())
    })
}

/// Member `index` (members sorted by name, or URI when unnamed): its location (a relative
/// URI joined to the group's, an absolute one as stored), its name (NULL when it has none),
/// its type (`TDB_OBJECT_*`) and whether it is stored relative to the group. The strings are
/// valid until the group is committed or freed. Any output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_group_member(
    group: *const tdb_group_t,
    index: u32,
    uri: *mut *const c_char,
    name: *mut *const c_char,
    r#type: *mut tdb_object_type_t,
    relative: *mut bool,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let g = arg(group, "group")?;
        let m = g.members.get(index as usize).ok_or_else(|| {
            Error::invalid(format!(
                "member index {index} out of range ({} members)",
                g.members.len()
            ))
        })?;
        OptOut::new(uri).set(m.uri.as_ptr());
        OptOut::new(name).set(m.name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr()));
        OptOut::new(r#type).set(m.object_type);
        OptOut::new(relative).set(m.relative);
        Ok(())
    })
}

/// Stages adding the array or group at `uri` (relative to the group's folder when
/// `relative`) under `name` (NULL: unnamed), for the next commit, which checks it as TileDB
/// does (the member must exist; a name or URI is added or removed once per session).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_group_add_member(
    group: *mut tdb_group_t,
    uri: *const c_char,
    relative: bool,
    name: *const c_char,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let g = arg_mut(group, "group")?;
        let uri = guard::c_str(uri, "uri")?;
        let name = if name.is_null() {
            None
        } else {
            Some(guard::c_str(name, "name")?)
        };
        g.changes.add(uri, relative, name);
        Ok(())
    })
}

/// Stages removing the member named `name_or_uri` (or, when no member has that name, the
/// one member with that URI), for the next commit.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_group_remove_member(
    group: *mut tdb_group_t,
    name_or_uri: *const c_char,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let g = arg_mut(group, "group")?;
        g.changes.remove(guard::c_str(name_or_uri, "name_or_uri")?);
        Ok(())
    })
}

/// Stages writing metadata `key`: `value_count` values of `type` in `value` (`value_size`
/// bytes, exactly `value_count` × the type's size), for the next commit.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_group_metadata_put(
    group: *mut tdb_group_t,
    key: *const c_char,
    r#type: tdb_datatype_t,
    value_count: u32,
    value: *const c_void,
    value_size: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let g = arg_mut(group, "group")?;
        let key = guard::c_str(key, "key")?;
        let datatype = Datatype::try_from_u32(r#type)?;
        let value = guard::bytes(value.cast(), value_size, "value")?;
        let entry = MetadataEntry::new(key, datatype, value_count, value)?;
        g.changes.metadata(MetadataChange::Put(entry));
        Ok(())
    })
}

/// Stages deleting metadata `key`, for the next commit (deleting a key that has no value is
/// not an error, as in TileDB).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_group_metadata_delete(
    group: *mut tdb_group_t,
    key: *const c_char,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let g = arg_mut(group, "group")?;
        let key = guard::c_str(key, "key")?;
        g.changes.metadata(MetadataChange::Delete(key.to_string()));
        Ok(())
    })
}

/// Writes the staged changes as one write session (a `__group` details file when members
/// change, a `__meta` file when metadata changes) at the open timestamp (or now), then reads
/// the group again. On failure the staged changes are kept and the handle's view is
/// unchanged; a refused member change writes nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_group_commit(
    group: *mut tdb_group_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let g = arg_mut(group, "group")?;
        group::update(&g.uri, &g.changes, &g.options)?;
        let mut fresh = tdb_group_t::load(&g.uri, g.options.clone())?;
        std::mem::swap(g, &mut fresh);
        Ok(())
    })
}

/// Consolidates the metadata of the group at `uri` as TileDB 2.30's
/// `tiledb_group_consolidate_metadata`: the `__meta` files visible in `config`'s
/// `sm.consolidation.timestamp_start`/`_end` (default: all) merged into one file holding their
/// entries, plus a `.vac` file listing them for `tdb_group_vacuum_metadata`. Readers see the
/// same metadata before and after; at most one visible file writes nothing. A folder that is
/// not a group is `TDB_ERR_INVALID_ARGUMENT`. `config` may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_group_consolidate_metadata(
    uri: *const c_char,
    config: *const tdb_config_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let uri = guard::c_str(uri, "uri")?;
        let c = consolidate_options_of(config)?;
        let options = GroupOptions {
            key: None,
            timestamp_start: c.timestamp_start,
            timestamp_end: Some(c.timestamp_end),
            config: c.config,
        };
        group::consolidate_metadata(uri, &options)?;
        Ok(())
    })
}

/// Vacuums the metadata of the group at `uri` after `tdb_group_consolidate_metadata`, as
/// TileDB 2.30's `tiledb_group_vacuum_metadata`: removes the `__meta` files the `.vac` files
/// list, then the `.vac` files. A folder that is not a group is `TDB_ERR_INVALID_ARGUMENT`.
/// `config` may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_group_vacuum_metadata(
    uri: *const c_char,
    config: *const tdb_config_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let uri = guard::c_str(uri, "uri")?;
        group::vacuum_metadata(uri, &config_of(config)?)?;
        Ok(())
    })
}

/// The number of metadata entries (as opened or last committed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_group_metadata_count(
    group: *const tdb_group_t,
    count: *mut u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let g = arg(group, "group")?;
        Out::new(count, "count")?.set(g.metadata.len() as u32);
        Ok(())
    })
}

/// Metadata entry `index` (entries sorted by key): its key, datatype, number of values and
/// the values (`value_count` × the type's size bytes). The pointers are valid until the group
/// is committed or freed. Any output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_group_metadata_entry(
    group: *const tdb_group_t,
    index: u32,
    key: *mut *const c_char,
    r#type: *mut tdb_datatype_t,
    value_count: *mut u32,
    value: *mut *const c_void,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let g = arg(group, "group")?;
        let (k, e) = g.metadata.get(index as usize).ok_or_else(|| {
            Error::invalid(format!(
                "metadata index {index} out of range ({} entries)",
                g.metadata.len()
            ))
        })?;
        OptOut::new(key).set(k.as_ptr());
        OptOut::new(r#type).set(e.datatype as tdb_datatype_t);
        OptOut::new(value_count).set(e.value_num);
        OptOut::new(value).set(e.value.as_ptr().cast());
        Ok(())
    })
}

/// The value of metadata `key`: datatype, number of values and the values, as
/// `tdb_group_metadata_entry`. A key without a value is `TDB_ERR_INVALID_ARGUMENT`. Any
/// output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_group_metadata_get(
    group: *const tdb_group_t,
    key: *const c_char,
    r#type: *mut tdb_datatype_t,
    value_count: *mut u32,
    value: *mut *const c_void,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let g = arg(group, "group")?;
        let key = guard::c_str(key, "key")?;
        let (_, e) = g
            .metadata
            .iter()
            .find(|(_, e)| e.key == key)
            .ok_or_else(|| Error::invalid(format!("group metadata has no key '{key}'")))?;
        OptOut::new(r#type).set(e.datatype as tdb_datatype_t);
        OptOut::new(value_count).set(e.value_num);
        OptOut::new(value).set(e.value.as_ptr().cast());
        Ok(())
    })
}
