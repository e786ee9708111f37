//! The array lifecycle without a handle (src/array/lifecycle/): consolidating, vacuuming,
//! deleting fragments, removing arrays and schema evolution, as TileDB 2.30's
//! `tiledb_array_consolidate`, `tiledb_array_vacuum`, `tiledb_array_delete_fragments_v2`,
//! `tiledb_array_delete` and `tiledb_array_evolve` do them.

use super::array::tdb_array_t;
use super::config::{config_of, consolidate_options_of, tdb_config_t};
use super::constants::tdb_status_t;
use super::error::tdb_error_t;
use super::guard::{self, guard};
use std::ffi::{c_char, c_void};
use tdbfilter::Error;
use tdbfilter::array::lifecycle::{
    self, ConsolidateMode, ConsolidateOptions, DeleteCellsOptions, EvolveOptions, VacuumMode,
    VacuumOptions,
};

/// Consolidates the array at `uri` as TileDB 2.30's `tiledb_array_consolidate` (or, with a
/// fragment list, `tiledb_array_consolidate_fragments`), in `mode` (TileDB's
/// `sm.consolidation.mode` names: `"fragments"`, `"commits"`, `"fragment_meta"`,
/// `"array_meta"`; NULL: `config`'s `sm.consolidation.mode`, else `"fragments"`).
///
/// `config` (may be NULL) holds the object-store options and TileDB's `sm.consolidation.*`
/// settings (steps, amplification, step sizes, buffer size, timestamps; see
/// `tdb_config_set`). `key`/`key_len`: the array's AES-256-GCM key, or NULL and 0.
/// [`timestamp_start`, `timestamp_end`] (milliseconds, inclusive; 0 and `UINT64_MAX` for all)
/// narrows the config's `sm.consolidation.timestamp_start`/`_end`: fragments mode merges only
/// fragments inside it, array_meta mode only metadata files inside it. A reversed range is
/// `TDB_ERR_INVALID_ARGUMENT`.
///
/// `fragment_names` (`fragment_count` NUL-terminated names, or `__fragments/` URIs; NULL and
/// 0 for none): fragments mode merges exactly these instead of following the plan (the
/// timestamps are then ignored, as TileDB does); with another mode the list is
/// `TDB_ERR_INVALID_ARGUMENT`. The merged fragment is committed last, so a failure leaves the
/// array reading as before; run `tdb_array_vacuum` afterwards to remove what was merged.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_consolidate(
    uri: *const c_char,
    mode: *const c_char,
    config: *const tdb_config_t,
    key: *const c_void,
    key_len: usize,
    timestamp_start: u64,
    timestamp_end: u64,
    fragment_names: *const *const c_char,
    fragment_count: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let uri = guard::c_str(uri, "uri")?;
        let mut options: ConsolidateOptions = consolidate_options_of(config)?;
        if !mode.is_null() {
            options.mode = ConsolidateMode::parse(guard::c_str(mode, "mode")?)?;
        }
        options.key = guard::aes_key(key, key_len)?;
        if timestamp_start > timestamp_end {
            return Err(Error::invalid(format!(
                "timestamp start {timestamp_start} is after the end {timestamp_end}"
            )));
        }
        options.timestamp_start = options.timestamp_start.max(timestamp_start);
        options.timestamp_end = options.timestamp_end.min(timestamp_end);
        let names = guard::slice(fragment_names, fragment_count, "fragment_names")?;
        if !names.is_empty() {
            if options.mode != ConsolidateMode::Fragments {
                return Err(Error::invalid(
                    "a fragment list is only taken in the fragments consolidation mode",
                ));
            }
            let list = names
                .iter()
                .map(|p| guard::c_str(*p, "fragment name").map(str::to_string))
                .collect::<tdbfilter::Result<Vec<_>>>()?;
            options.fragment_list = Some(list);
        }
        lifecycle::consolidate(uri, &options)?;
        Ok(())
    })
}

/// A JSON string literal of `s`.
fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The plan's nodes as a JSON list of lists of names.
fn plan_json(plan: &[Vec<String>]) -> String {
    let mut out = String::from("[");
    for (i, node) in plan.iter().enumerate() {
        out.push_str(if i == 0 { "[" } else { ", [" });
        for (j, name) in node.iter().enumerate() {
            if j > 0 {
                out.push_str(", ");
            }
            json_string(name, &mut out);
        }
        out.push(']');
    }
    out.push(']');
    out
}

/// TileDB 2.30's consolidation plan (`tiledb_consolidation_plan_create_with_mbr`) for the
/// fragments `array` sees and a desired fragment size of `fragment_size` bytes: groups of
/// fragments to consolidate together (fragments whose non-empty domains overlap, small
/// fragments whose union overlaps no other; then single fragments of at least 1.5 ×
/// `fragment_size`, to be split), in TileDB's order. Written as NUL-terminated JSON, a list of
/// nodes each a list of fragment names (`[["__1_1_<uuid>_22", ...], ...]`), into `buffer`
/// (`capacity` bytes); `*size` receives the length including the NUL; when `buffer` is NULL
/// or too small, `*size` is still set and the call returns `TDB_ERR_BUFFER_TOO_SMALL`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_consolidation_plan(
    array: *const tdb_array_t,
    fragment_size: u64,
    buffer: *mut c_char,
    capacity: usize,
    size: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let a = &guard::arg(array, "array")?.inner;
        let size = guard::Out::new(size, "size")?;
        let plan = lifecycle::consolidation_plan(a, fragment_size)?;
        let text = plan_json(&plan);
        guard::copy_c_string_out(&text, buffer, capacity, size, "the consolidation plan")
    })
}

/// Vacuums the array at `uri` after a consolidation, removing what TileDB 2.30 removes in
/// `mode` (TileDB's `sm.vacuum.mode` names: `"fragments"`, `"commits"`, `"fragment_meta"`,
/// `"array_meta"`; NULL: `"fragments"`), in an order that keeps every reader's view whole.
/// Fragments mode also removes the fragment folders of killed writers (no commit marker)
/// unchanged for 10 minutes, which TileDB never removes. `config` may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_vacuum(
    uri: *const c_char,
    mode: *const c_char,
    config: *const tdb_config_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let uri = guard::c_str(uri, "uri")?;
        let mode = if mode.is_null() {
            VacuumMode::Fragments
        } else {
            VacuumMode::parse(guard::c_str(mode, "mode")?)?
        };
        let mut options = VacuumOptions::new(mode);
        options.config = config_of(config)?;
        lifecycle::vacuum(uri, &options)?;
        Ok(())
    })
}

/// Deletes the fragments of the array at `uri` whose timestamp range lies inside
/// [`timestamp_start`, `timestamp_end`] (milliseconds, inclusive), as TileDB's
/// `tiledb_array_delete_fragments_v2`. A reversed range is `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_delete_fragments(
    uri: *const c_char,
    timestamp_start: u64,
    timestamp_end: u64,
    config: *const tdb_config_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let uri = guard::c_str(uri, "uri")?;
        lifecycle::delete_fragments(uri, timestamp_start, timestamp_end, &config_of(config)?)?;
        Ok(())
    })
}

/// Deletes the cells of the sparse array at `uri` matching `condition` (a NUL-terminated
/// TileDB-Py condition text, typed against the schema at the delete's timestamp), as TileDB's
/// delete queries do (`tiledb.open(uri, "d", timestamp=T).query(cond=...).submit()`): writes
/// the commit `__commits/__T_T_<uuid>_22.del`, after which reads hide the matching cells
/// written at or before `T`. `timestamp`: milliseconds, 0 for now. `key`/`key_len`: the
/// array's AES-256-GCM key, or NULL and 0. A dense array, a bad condition or the reserved
/// timestamp `UINT64_MAX` is `TDB_ERR_INVALID_ARGUMENT`, and nothing is written.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_delete_cells(
    uri: *const c_char,
    condition: *const c_char,
    timestamp: u64,
    key: *const c_void,
    key_len: usize,
    config: *const tdb_config_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let uri = guard::c_str(uri, "uri")?;
        let condition = guard::c_str(condition, "condition")?;
        let key = guard::aes_key(key, key_len)?;
        let options = DeleteCellsOptions {
            key,
            config: config_of(config)?,
        };
        lifecycle::delete_cells(
            uri,
            condition,
            (timestamp != 0).then_some(timestamp),
            &options,
        )?;
        Ok(())
    })
}

/// Removes the array at `uri` as TileDB's `tiledb_array_delete`: its fragments, commits,
/// schemas and metadata, TileDB's folders, and the array folder when nothing else is left in
/// it (files TileDB did not make stay). A folder that is not an array is
/// `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_delete(
    uri: *const c_char,
    config: *const tdb_config_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let uri = guard::c_str(uri, "uri")?;
        lifecycle::delete_array(uri, &config_of(config)?)?;
        Ok(())
    })
}

/// Evolves the schema of the array at `uri` (TileDB's `tiledb_array_evolve`): applies the
/// changes of `changes_json`, a NUL-terminated JSON list of one-member objects
/// (`{"add_attribute": ATTR}`, `{"drop_attribute": NAME}`, `{"add_enumeration": ENUM}`,
/// `{"extend_enumeration": {"name": NAME, "values": [..]}}`, `{"drop_enumeration": NAME}`,
/// `{"expand_current_domain": [[LO, HI], ..]}`; ATTR and ENUM in the form
/// `tdb_array_schema_json` prints), in order, to the newest schema and writes the result as a
/// new schema file at `timestamp` (milliseconds, taken as given as TileDB does, an earlier one
/// than the newest schema's too; 0: now, later than every schema's). A change
/// TileDB refuses is `TDB_ERR_INVALID_ARGUMENT` with TileDB's reason, and nothing is written.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_evolve(
    uri: *const c_char,
    changes_json: *const c_char,
    timestamp: u64,
    config: *const tdb_config_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let uri = guard::c_str(uri, "uri")?;
        let changes = guard::c_str(changes_json, "changes_json")?;
        let options = EvolveOptions {
            key: None,
            timestamp: (timestamp != 0).then_some(timestamp),
            config: config_of(config)?,
        };
        lifecycle::evolve_json(uri, changes, &options)?;
        Ok(())
    })
}

/// Upgrades the array at `uri` to the current format version, as TileDB 2.30's
/// `tiledb_array_upgrade_version`: an array whose newest schema is older gets that schema
/// written again at the current version (a new `__schema/` file at `timestamp`, milliseconds;
/// 0: now, later than every schema's) and the folders of the current layout (`__commits`,
/// `__fragments`, `__fragment_meta`, `__schema/__enumerations`); its fragments and metadata
/// stay and read as before. An array at the current version is left unchanged. `key`/`key_len`:
/// the array's AES-256-GCM key, or NULL and 0. `config` may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_array_upgrade_version(
    uri: *const c_char,
    key: *const c_void,
    key_len: usize,
    timestamp: u64,
    config: *const tdb_config_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let uri = guard::c_str(uri, "uri")?;
        let key = guard::aes_key(key, key_len)?;
        let options = EvolveOptions {
            key,
            timestamp: (timestamp != 0).then_some(timestamp),
            config: config_of(config)?,
        };
        lifecycle::upgrade_version(uri, &options)?;
        Ok(())
    })
}
