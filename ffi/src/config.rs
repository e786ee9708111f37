//! `tdb_config_t`: object-store options (key/value pairs) for the `_with_config` entry points,
//! TileDB's `sm.consolidation.*` settings for `tdb_array_consolidate`, and TileDB's
//! `sm.check_coord_dups` for writers.

use super::constants::tdb_status_t;
use super::error::tdb_error_t;
use super::guard::{self, Out, guard};
use std::ffi::c_char;
use tdbfilter::array::lifecycle::{ConsolidateMode, ConsolidateOptions};
use tdbfilter::storage::StorageConfig;

/// Object-store options: endpoint, region, credentials, path-style addressing, plain HTTP,
/// request batching and retries. Keys are this library's (`s3.endpoint`, `s3.region`,
/// `azure.account`, …) or TileDB's names for the same settings (`vfs.s3.endpoint_override`,
/// `vfs.s3.scheme`, `vfs.s3.use_virtual_addressing`, `vfs.s3.region`,
/// `vfs.s3.aws_access_key_id`, `vfs.s3.aws_secret_access_key`,
/// `vfs.azure.storage_account_name`, `vfs.azure.storage_account_key`,
/// `vfs.azure.blob_endpoint`, `vfs.min_batch_gap`, …). Unset options come from the standard
/// environment variables (`AWS_*`, `AZURE_STORAGE_*`, `GOOGLE_*`). TileDB's
/// `sm.consolidation.*` settings are kept too, for `tdb_array_consolidate` (the other
/// functions ignore them).
pub struct tdb_config_t {
    pub(crate) inner: StorageConfig,
    /// The `sm.consolidation.*` settings, in the order set (each key once).
    pub(crate) consolidation: Vec<(String, String)>,
    /// TileDB's `sm.check_coord_dups` for writers (`None`: unset, true).
    pub(crate) check_coord_dups: Option<bool>,
}

/// TileDB's setting whether sparse writers refuse duplicate coordinates.
const CHECK_COORD_DUPS: &str = "sm.check_coord_dups";

/// The prefix of TileDB's consolidation settings.
const CONSOLIDATION: &str = "sm.consolidation.";

/// The configuration behind `config`, or an empty one for NULL.
pub(crate) fn config_of(config: *const tdb_config_t) -> tdbfilter::Result<StorageConfig> {
    if config.is_null() {
        return Ok(StorageConfig::new());
    }
    Ok(guard::arg(config, "config")?.inner.clone())
}

/// The consolidation options of `config` (NULL: TileDB's defaults): its object-store options
/// and its `sm.consolidation.*` settings.
pub(crate) fn consolidate_options_of(
    config: *const tdb_config_t,
) -> tdbfilter::Result<ConsolidateOptions> {
    let mut options = ConsolidateOptions::new(ConsolidateMode::Fragments);
    if config.is_null() {
        return Ok(options);
    }
    let c = guard::arg(config, "config")?;
    options.config = c.inner.clone();
    for (k, v) in &c.consolidation {
        options.set(k, v)?;
    }
    Ok(options)
}

/// Creates an empty configuration.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_config_alloc(
    config: *mut *mut tdb_config_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(config, "config")?;
        out.set(guard::new_handle(tdb_config_t {
            inner: StorageConfig::new(),
            consolidation: Vec::new(),
            check_coord_dups: None,
        }));
        Ok(())
    })
}

/// Sets option `key` to `value` (NUL-terminated UTF-8). An unknown key or a malformed value
/// (booleans `true`/`false`, counts as decimal numbers) is `TDB_ERR_INVALID_ARGUMENT` naming
/// it, and leaves the configuration unchanged. Keys `sm.consolidation.*` are TileDB's
/// consolidation settings (`mode`, `amplification`, `steps`, `step_min_frags`,
/// `step_max_frags`, `step_size_ratio`, `buffer_size`, `timestamp_start`, `timestamp_end`,
/// `purge_deleted_cells`, `max_fragment_size`), checked as TileDB reads them.
/// `sm.check_coord_dups` (`true`, the default, or `false`) is TileDB's setting for writers
/// opened with the configuration: `false` writes the cells of a sparse array without
/// duplicates as given, without checking for duplicates (the caller promises there are none).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_config_set(
    config: *mut tdb_config_t,
    key: *const c_char,
    value: *const c_char,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let c = guard::arg_mut(config, "config")?;
        let key = guard::c_str(key, "key")?;
        let value = guard::c_str(value, "value")?;
        if key == CHECK_COORD_DUPS {
            c.check_coord_dups = Some(match value {
                "true" => true,
                "false" => false,
                _ => {
                    return Err(tdbfilter::Error::invalid(format!(
                        "{key}: '{value}' is not a boolean (true or false)"
                    )));
                }
            });
            return Ok(());
        }
        if key.starts_with(CONSOLIDATION) {
            ConsolidateOptions::new(ConsolidateMode::Fragments).set(key, value)?;
            c.consolidation.retain(|(k, _)| k != key);
            c.consolidation.push((key.to_string(), value.to_string()));
            return Ok(());
        }
        c.inner.set(key, value)
    })
}

/// Frees a configuration. NULL is a no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_config_free(config: *mut tdb_config_t) {
    // SAFETY: the caller passes NULL or a configuration from this library, not yet freed.
    unsafe { guard::free_handle(config) }
}
