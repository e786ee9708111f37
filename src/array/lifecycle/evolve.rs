//! Schema evolution (TileDB 2.30's `tiledb_array_evolve`): a new schema file
//! `__schema/__<t>_<t>_<label>` holding the array's newest schema with the changes applied,
//! and one new enumeration file per added or extended enumeration. Existing files are never
//! changed: fragments keep naming the schema they were written with, and readers fill the
//! attributes an old fragment lacks with their fill value.
//!
//! Changes apply in order to the newest schema; the result is checked with TileDB's schema
//! rules ([`ArraySchema::check`]). An extended enumeration is a new enumeration file with the
//! old values followed by the new ones (its name stays). Without a given timestamp the new
//! schema's is later than every existing schema's, so that it is the one opened from then on;
//! a given timestamp is taken as TileDB takes it, an earlier one too.

use crate::array::directory::{ArrayDirectory, names};
use crate::array::order;
use crate::array::schema::{ArraySchema, Attribute, Enumeration, Range, VAR_NUM};
use crate::array::schema_json;
use crate::error::{Error, Result};
use crate::format::format_version::FORMAT_VERSION;
use crate::pipeline::generic_tile;
use crate::storage::StorageConfig;
use serde_json::Value;

/// One change of a schema evolution.
#[derive(Clone, Debug)]
pub enum SchemaChange {
    /// Adds an attribute (its fill value is what fragments written before read).
    AddAttribute(Box<Attribute>),
    /// Drops an attribute (its data stays in old fragments, unread).
    DropAttribute(String),
    /// Adds an enumeration.
    AddEnumeration(Enumeration),
    /// Appends values to an enumeration: `name`, datatype and cell_val_num as the existing
    /// one's, `data` (and `offsets` when var-size) the new values only.
    ExtendEnumeration(Enumeration),
    /// Drops an enumeration no attribute uses.
    DropEnumeration(String),
    /// Expands the current domain (v22): one range per dimension, containing the current one
    /// and inside the domain.
    ExpandCurrentDomain(Vec<Range>),
}

/// How to evolve.
#[derive(Clone, Debug, Default)]
pub struct EvolveOptions {
    /// The AES-256-GCM key of an encrypted array.
    pub key: Option<Vec<u8>>,
    /// The new schema's timestamp (ms; `None`: now).
    pub timestamp: Option<u64>,
    /// Object-store options.
    pub config: StorageConfig,
}

/// Applies `changes` to the newest schema of the array at `uri` and writes the result as a
/// new schema file. Returns the new schema's file name.
pub fn evolve(uri: &str, changes: &[SchemaChange], options: &EvolveOptions) -> Result<String> {
    evolve_with(uri, options, |_| Ok(changes.to_vec()))
}

/// [`evolve`] with the changes in JSON (see [`changes_from_json`]), read against the array's
/// newest schema.
pub fn evolve_json(uri: &str, changes_json: &str, options: &EvolveOptions) -> Result<String> {
    let v: Value = serde_json::from_str(changes_json)
        .map_err(|e| Error::invalid(format!("schema changes JSON: {e}")))?;
    evolve_with(uri, options, |schema| changes_from_json(&v, schema))
}

/// Parses a JSON list of schema changes, each an object of one member:
/// `{"add_attribute": ATTR}`, `{"drop_attribute": NAME}`, `{"add_enumeration": ENUM}`,
/// `{"extend_enumeration": {"name": NAME, "values": [..]}}` (the values to append; `type`
/// and `cell_val_num` may be given and must then be the enumeration's),
/// `{"drop_enumeration": NAME}`, `{"expand_current_domain": [[LO, HI], ..]}`. ATTR and ENUM
/// are in the schema JSON's form (`tdbf array info --json`); values are typed by `schema`
/// (the array's newest, its enumerations loaded).
pub fn changes_from_json(changes: &Value, schema: &ArraySchema) -> Result<Vec<SchemaChange>> {
    let list = changes
        .as_array()
        .ok_or_else(|| Error::invalid("schema changes: expected a list of changes"))?;
    let mut out = Vec::new();
    for (i, c) in list.iter().enumerate() {
        let what = format!("schema change {i}");
        let (kind, v) = match c.as_object() {
            Some(o) if o.len() == 1 => o.iter().next().expect("one member"),
            _ => {
                return Err(Error::invalid(format!(
                    "{what}: expected an object of one member, e.g. {{\"drop_attribute\": \"a\"}}"
                )));
            }
        };
        let name = || {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| Error::invalid(format!("{what}: {kind} takes a name, not {v}")))
        };
        let context = |e: Error| e.context(format!("{what} ({kind})"));
        out.push(match kind.as_str() {
            "add_attribute" => SchemaChange::AddAttribute(Box::new(
                schema_json::attribute_from_json(v, kind).map_err(context)?,
            )),
            "drop_attribute" => SchemaChange::DropAttribute(name()?),
            "add_enumeration" => SchemaChange::AddEnumeration(
                schema_json::enumeration_from_json(v, kind).map_err(context)?,
            ),
            "extend_enumeration" => {
                SchemaChange::ExtendEnumeration(extension_from_json(v, schema).map_err(context)?)
            }
            "drop_enumeration" => SchemaChange::DropEnumeration(name()?),
            "expand_current_domain" => SchemaChange::ExpandCurrentDomain(
                schema_json::current_domain_from_json(v, &schema.dimensions).map_err(context)?,
            ),
            _ => {
                return Err(Error::invalid(format!(
                    "{what}: unknown change '{kind}' (add_attribute, drop_attribute, \
                     add_enumeration, extend_enumeration, drop_enumeration, \
                     expand_current_domain)"
                )));
            }
        });
    }
    Ok(out)
}

/// The values to append to an enumeration of `schema`, typed as it is.
fn extension_from_json(v: &Value, schema: &ArraySchema) -> Result<Enumeration> {
    let m = v
        .as_object()
        .ok_or_else(|| Error::invalid("expected {\"name\": NAME, \"values\": [..]}"))?;
    let name = m
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::invalid("'name' is missing"))?;
    let old = schema.loaded_enumeration(name).ok_or_else(|| {
        Error::invalid(format!(
            "Cannot extend enumeration '{name}'; it does not exist"
        ))
    })?;
    let mut full = m.clone();
    full.entry("type")
        .or_insert_with(|| old.datatype.name().into());
    full.entry("cell_val_num").or_insert_with(|| {
        if old.cell_val_num == VAR_NUM {
            "var".into()
        } else {
            old.cell_val_num.into()
        }
    });
    full.entry("ordered").or_insert(old.ordered.into());
    schema_json::enumeration_from_json(&Value::Object(full), "extend_enumeration")
}

/// Loads the newest schema of the array at `uri` (its enumerations loaded), applies the
/// changes `make` gives for it, and writes the result.
fn evolve_with(
    uri: &str,
    options: &EvolveOptions,
    make: impl FnOnce(&ArraySchema) -> Result<Vec<SchemaChange>>,
) -> Result<String> {
    let key = options.key.as_deref();
    let dir = ArrayDirectory::open(uri, &options.config)?;
    let newest_file = dir.latest_schema(u64::MAX).clone();
    let newest_t = dir
        .schemas()
        .iter()
        .filter_map(|s| s.timestamps.map(|(_, t2)| t2))
        .max()
        .unwrap_or(0);
    let mut schema = dir.load_schema(&newest_file, key)?;
    let enum_dir = dir
        .root()
        .join(names::SCHEMA_DIR)
        .join(names::ENUMERATIONS_DIR);
    for (name, file) in &schema.enumerations {
        let bytes = dir.read_file(&enum_dir.join(file))?;
        let (_, tile, _) = generic_tile::read(&bytes, key)
            .map_err(|e| e.context(format!("enumeration {name}")))?;
        let mut e = Enumeration::parse(tile.data())?;
        e.path_name = file.clone();
        schema.loaded_enumerations.push(e);
    }
    let changes = make(&schema)?;
    if changes.is_empty() {
        return Err(Error::invalid(
            "schema evolution: no changes (add or drop attributes or enumerations, or \
             expand the current domain)",
        ));
    }
    for c in &changes {
        apply(&mut schema, c)?;
    }
    let mut new_files = Vec::new();
    for (name, file) in &mut schema.enumerations {
        if file.is_empty() {
            *file = format!("__{}_0", names::random_label().0);
            let e = schema
                .loaded_enumerations
                .iter_mut()
                .find(|e| &e.name == name)
                .expect("listed enumerations are loaded");
            e.path_name = file.clone();
            new_files.push(name.clone());
        }
    }
    // TileDB keeps enumerations in a map by name and writes them in that order.
    schema.enumerations.sort();
    schema.version = FORMAT_VERSION;
    schema.check()?;
    let t = timestamp(options.timestamp, newest_t)?;
    schema.name = format!("__{t}_{t}_{}", names::random_label().0);
    let schema_tile = generic_tile::write_payload(&schema.serialize()?, key)?;
    let mut enumeration_tiles = Vec::new();
    for name in &new_files {
        let e = schema.loaded_enumeration(name).expect("loaded above");
        enumeration_tiles.push((
            e.path_name.clone(),
            generic_tile::write_payload(&e.serialize()?, key)?,
        ));
    }
    let storage = dir.storage();
    let schema_dir = dir.root().join(names::SCHEMA_DIR);
    storage.create_dir_all(&enum_dir)?;
    for (file, tile) in &enumeration_tiles {
        storage
            .write_new(&enum_dir.join(file), tile)
            .map_err(|e| e.context(format!("enumeration file {file}")))?;
    }
    storage.sync_dir(&enum_dir)?;
    // The schema file last: until it exists, the new enumeration files are unreferenced.
    storage
        .write_new(&schema_dir.join(&schema.name), &schema_tile)
        .map_err(|e| e.context(format!("schema file {}", schema.name)))?;
    storage.sync_dir(&schema_dir)?;
    Ok(schema.name)
}

/// Upgrades the array at `uri` to the current format version, as TileDB 2.30's
/// `tiledb_array_upgrade_version`: when its newest schema is older than [`FORMAT_VERSION`], it
/// is written again at the current version as a new schema file `__schema/__<t>_<t>_<label>`
/// (at `options.timestamp`, or now, later than every existing schema's), and the folders of the
/// current layout are created (`__schema/__enumerations`, `__commits`, `__fragments`,
/// `__fragment_meta`). Nothing else changes: existing fragments, metadata and the old schema
/// files stay and are read as before, new writes use the new layout. Returns the new schema's
/// file name; `None` (nothing written) when the array is current already.
pub fn upgrade_version(uri: &str, options: &EvolveOptions) -> Result<Option<String>> {
    let key = options.key.as_deref();
    let dir = ArrayDirectory::open(uri, &options.config)?;
    let newest_file = dir.latest_schema(u64::MAX).clone();
    let mut schema = dir.load_schema(&newest_file, key)?;
    if schema.version >= FORMAT_VERSION {
        return Ok(None);
    }
    let newest_t = dir
        .schemas()
        .iter()
        .filter_map(|s| s.timestamps.map(|(_, t2)| t2))
        .max()
        .unwrap_or(0);
    schema.version = FORMAT_VERSION;
    // TileDB gives a dimension without filters of its own the coords filters when it loads
    // the schema, and writes them as the dimension's.
    for d in &mut schema.dimensions {
        d.uses_coords_filters = false;
    }
    let t = timestamp(options.timestamp, newest_t)?;
    schema.name = format!("__{t}_{t}_{}", names::random_label().0);
    let schema_tile = generic_tile::write_payload(&schema.serialize()?, key)?;
    let storage = dir.storage();
    let root = dir.root();
    let schema_dir = root.join(names::SCHEMA_DIR);
    storage.create_dir_all(&schema_dir.join(names::ENUMERATIONS_DIR))?;
    for d in [
        names::COMMITS_DIR,
        names::FRAGMENTS_DIR,
        names::FRAGMENT_META_DIR,
    ] {
        storage.create_dir(&root.join(d))?;
    }
    storage.sync_dir(root)?;
    storage
        .write_new(&schema_dir.join(&schema.name), &schema_tile)
        .map_err(|e| e.context(format!("schema file {}", schema.name)))?;
    storage.sync_dir(&schema_dir)?;
    Ok(Some(schema.name))
}

/// The new schema's timestamp: `wanted` as given, or now, later than `newest` (the newest
/// schema's): without a wanted timestamp, a clock still inside `newest`'s millisecond is
/// waited out. TileDB 2.30 takes any wanted timestamp, an earlier one too: that schema is then
/// opened by the reads whose end timestamp selects it (TileDB's listing order), not by reads
/// at the current time.
fn timestamp(wanted: Option<u64>, newest: u64) -> Result<u64> {
    match wanted {
        Some(t) => Ok(t),
        None => {
            let mut now = names::now_ms();
            if now <= newest && newest - now < 1000 {
                std::thread::sleep(std::time::Duration::from_millis(newest - now + 1));
                now = names::now_ms();
            }
            if now <= newest {
                return Err(Error::invalid(format!(
                    "schema evolution: the clock ({now} ms) is not later than the array's \
                     newest schema ({newest}); give a timestamp"
                )));
            }
            Ok(now)
        }
    }
}

fn apply(schema: &mut ArraySchema, change: &SchemaChange) -> Result<()> {
    match change {
        SchemaChange::AddAttribute(a) => {
            if schema.attribute_index(&a.name).is_some()
                || schema.dimension_index(&a.name).is_some()
            {
                return Err(Error::invalid(format!(
                    "Cannot add attribute '{}'; an attribute or dimension of that name exists",
                    a.name
                )));
            }
            schema.attributes.push(a.as_ref().clone());
        }
        SchemaChange::DropAttribute(name) => {
            let i = schema.attribute_index(name).ok_or_else(|| {
                Error::invalid(format!(
                    "Cannot drop attribute '{name}'; Input attribute name refers to a dimension \
                     or does not exist"
                ))
            })?;
            schema.attributes.remove(i);
        }
        SchemaChange::AddEnumeration(e) => {
            if schema.enumerations.iter().any(|(n, _)| n == &e.name) {
                return Err(Error::invalid(format!(
                    "Cannot add enumeration '{}'; an enumeration of that name exists",
                    e.name
                )));
            }
            let mut e = e.clone();
            e.path_name = String::new();
            schema.enumerations.push((e.name.clone(), String::new()));
            schema.loaded_enumerations.push(e);
        }
        SchemaChange::ExtendEnumeration(add) => {
            let pos = schema
                .enumerations
                .iter()
                .position(|(n, _)| n == &add.name)
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "Cannot extend enumeration '{}'; it does not exist",
                        add.name
                    ))
                })?;
            let old = schema
                .loaded_enumeration(&add.name)
                .expect("enumerations are loaded")
                .clone();
            let extended = extend(&old, add)?;
            schema.enumerations[pos].1 = String::new();
            let slot = schema
                .loaded_enumerations
                .iter_mut()
                .find(|e| e.name == add.name)
                .expect("enumerations are loaded");
            *slot = extended;
        }
        SchemaChange::DropEnumeration(name) => {
            let pos = schema
                .enumerations
                .iter()
                .position(|(n, _)| n == name)
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "Cannot drop enumeration '{name}'; it does not exist"
                    ))
                })?;
            if let Some(a) = schema
                .attributes
                .iter()
                .find(|a| a.enumeration.as_deref() == Some(name))
            {
                return Err(Error::invalid(format!(
                    "Unable to drop enumeration '{name}' as it is used by attribute '{}'.",
                    a.name
                )));
            }
            schema.enumerations.remove(pos);
            schema.loaded_enumerations.retain(|e| &e.name != name);
        }
        SchemaChange::ExpandCurrentDomain(ranges) => expand(schema, ranges)?,
    }
    Ok(())
}

/// `old` followed by the values of `add`, under a new file name.
fn extend(old: &Enumeration, add: &Enumeration) -> Result<Enumeration> {
    if (add.datatype, add.cell_val_num) != (old.datatype, old.cell_val_num) {
        return Err(Error::invalid(format!(
            "Cannot extend enumeration '{}'; the new values are {} × {}, the enumeration's {} × {}",
            old.name, add.cell_val_num, add.datatype, old.cell_val_num, old.datatype
        )));
    }
    if add.data.is_empty() && add.offsets.is_empty() {
        return Err(Error::invalid(format!(
            "Cannot extend enumeration '{}'; no values to add",
            old.name
        )));
    }
    let mut e = old.clone();
    e.path_name = String::new();
    if old.cell_val_num == VAR_NUM {
        let base = e.data.len() as u64;
        e.offsets.extend(add.offsets.iter().map(|o| o + base));
    }
    e.data.extend_from_slice(&add.data);
    Ok(e)
}

fn expand(schema: &mut ArraySchema, ranges: &[Range]) -> Result<()> {
    let dims = &schema.dimensions;
    if ranges.len() != dims.len() {
        return Err(Error::invalid(format!(
            "Cannot expand the current domain: {} ranges for {} dimensions",
            ranges.len(),
            dims.len()
        )));
    }
    for (i, (r, d)) in ranges.iter().zip(dims).enumerate() {
        let cmp = |a: &[u8], b: &[u8]| match r {
            Range::Var(..) => a.cmp(b),
            Range::Fixed(..) => order::compare(d.datatype, a, b),
        };
        if matches!(r, Range::Var(..)) != d.is_var() {
            return Err(Error::invalid(format!(
                "Cannot expand the current domain: the range of dimension {} does not match its type",
                d.name
            )));
        }
        if cmp(r.lo(), r.hi()).is_gt() {
            return Err(Error::invalid(format!(
                "Cannot expand the current domain: the range of dimension {} is reversed",
                d.name
            )));
        }
        if let Some((lo, hi)) = &d.domain
            && (cmp(r.lo(), lo).is_lt() || cmp(r.hi(), hi).is_gt())
        {
            return Err(Error::invalid(format!(
                "Cannot expand the current domain: the range of dimension {} exceeds its domain",
                d.name
            )));
        }
        if let Some(cur) = schema.current_domain.as_ref().and_then(|c| c.get(i))
            && (cmp(r.lo(), cur.lo()).is_gt() || cmp(r.hi(), cur.hi()).is_lt())
        {
            return Err(Error::invalid(format!(
                "Cannot expand the current domain: the new range of dimension {} does not \
                 contain the current one (the current domain can only grow)",
                d.name
            )));
        }
    }
    schema.current_domain = Some(ranges.to_vec());
    Ok(())
}
