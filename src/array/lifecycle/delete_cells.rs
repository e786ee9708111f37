//! Deleting cells by condition, as TileDB 2.30's delete queries do (`tiledb.open(uri, "d",
//! timestamp=T).query(cond=...).submit()`): the condition (TileDB-Py's text, typed against
//! the schema at `T`) is negated and written as the generic tile of
//! `__commits/__T_T_<uuid>_22.del`. Readers then hide the matching cells written at or
//! before `T` (see `array::read::deletes`). Dense arrays are refused as TileDB refuses them.

use crate::array::condition::{Column, parse_condition, serialize};
use crate::array::directory::names;
use crate::array::{Array, OpenOptions};
use crate::error::{Error, Result};
use crate::pipeline::generic_tile;
use crate::storage::StorageConfig;

/// How to open the array for a delete.
#[derive(Clone, Default)]
pub struct DeleteCellsOptions {
    /// The AES-256-GCM key (32 bytes) of an encrypted array.
    pub key: Option<Vec<u8>>,
    /// Object-store options.
    pub config: StorageConfig,
}

impl std::fmt::Debug for DeleteCellsOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeleteCellsOptions")
            .field("key", &self.key.as_ref().map(|_| "<redacted>"))
            .field("config", &self.config)
            .finish()
    }
}

/// Deletes the cells of the sparse array at `uri` matching `condition` (TileDB-Py's
/// condition text) at `timestamp` (ms; `None`: now). Returns the commit written, relative to
/// the array folder (`__commits/__T_T_<uuid>_22.del`).
pub fn delete_cells(
    uri: &str,
    condition: &str,
    timestamp: Option<u64>,
    options: &DeleteCellsOptions,
) -> Result<String> {
    let t = timestamp.unwrap_or_else(names::now_ms);
    if t == u64::MAX {
        return Err(Error::invalid(
            "delete: timestamp UINT64_MAX is reserved by TileDB",
        ));
    }
    let array = Array::open(
        uri,
        &OpenOptions {
            key: options.key.clone(),
            timestamp_end: Some(t),
            config: options.config.clone(),
            ..OpenOptions::default()
        },
    )?;
    let schema = array.schema();
    if schema.is_dense() {
        return Err(Error::invalid(
            "Delete mode is not supported for queries on Dense Arrays",
        ));
    }
    let enumerations = schema
        .attributes
        .iter()
        .filter_map(|a| a.enumeration.as_deref())
        .map(|e| match schema.loaded_enumeration(e) {
            Some(x) => Ok(x.clone()),
            None => array.enumeration(e),
        })
        .collect::<Result<Vec<_>>>()?;
    let cond = parse_condition(condition, schema, &enumerations)?;
    let payload = serialize::delete_payload(&cond)?;
    // What readers will evaluate must be valid for the schema (TileDB refuses `x == None` on
    // a fixed-size nullable field here: the stored null test reads back as an empty value).
    let stored = serialize::parse(&payload, "delete condition")?;
    let empty: Vec<u64> = Vec::new();
    let column = |name: &str| {
        let (var, nullable) = if let Some(i) = schema.attribute_index(name) {
            let a = &schema.attributes[i];
            (a.is_var(), a.nullable)
        } else {
            let j = schema.dimension_index(name)?;
            (schema.dimensions[j].is_var(), false)
        };
        Some(Column {
            data: &[],
            offsets: var.then_some(empty.as_slice()),
            validity: nullable.then_some(&[][..]),
        })
    };
    crate::array::condition::evaluate(&stored, schema, 0, &column)
        .map_err(|e| e.context(format!("delete condition {condition:?}")))?;
    let tile = generic_tile::write_payload(&payload, array.key())?;
    let name = format!(
        "{}.{}",
        names::new_timestamped_name(t, t, crate::array::fragment::metadata::MAX_FRAGMENT_VERSION),
        names::DELETE_COMMIT_EXTENSION
    );
    let commits = array.root().join(names::COMMITS_DIR);
    let storage = array.storage();
    storage.create_dir_all(&commits)?;
    storage
        .write_new(&commits.join(&name), &tile)
        .and_then(|()| storage.sync_dir(&commits))
        .map_err(|e| e.context(format!("delete commit {name}")))?;
    Ok(format!("{}/{name}", names::COMMITS_DIR))
}
