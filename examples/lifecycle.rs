//! The array lifecycle and group operations of `tdbfilter::array::lifecycle` and
//! `tdbfilter::group` as a command line, for the TileDB-Py differential suite
//! (tests/array/run_lifecycle_tests.py). Every command prints one JSON document.
//!
//! ```text
//! lifecycle create URI SCHEMA_JSON
//! lifecycle write URI TIMESTAMP SPEC_JSON      {"layout": "unordered"|"row_major"|"global_order",
//!                                              "subarray": HEX, "fields": {NAME: {"data": HEX,
//!                                              "offsets": [..], "validity": HEX}}}
//! lifecycle read URI [TIMESTAMP_END]           fields as {"type", "cell_val_num", "data" HEX,
//!                                              "offsets", "validity" HEX}
//! lifecycle fragments URI                      visible fragment names
//! lifecycle schema URI                         the newest schema as JSON
//! lifecycle vacuum URI MODE [GRACE_SECONDS|keep]
//! lifecycle consolidate URI CONFIG_JSON          {"sm.consolidation.mode": .., "sm.consolidation.*":
//!                                              VALUE, "fragments": [NAME, ..]} (values as strings)
//! lifecycle uncommitted URI
//! lifecycle delete-fragments URI T1 T2
//! lifecycle delete-array URI
//! lifecycle evolve URI CHANGES_JSON [TIMESTAMP]  [{"add_attribute": ATTR}, {"drop_attribute": NAME},
//!                                              {"add_enumeration": ENUM}, {"extend_enumeration":
//!                                              ENUM}, {"drop_enumeration": NAME},
//!                                              {"expand_current_domain": [[LO, HI], ..]}]
//! lifecycle group-create URI
//! lifecycle group-update URI CHANGES_JSON      {"add": [[URI, RELATIVE, NAME|null]], "remove": [..],
//!                                              "put": {KEY: [TYPE, HEX]}, "delete": [KEY]}
//! lifecycle group-show URI
//! ```
//!
//! ATTR and ENUM are in the schema JSON's form (`tdbf array info --json`).

use serde_json::{Value, json};
use std::time::Duration;
use tdbfilter::array::lifecycle::{self, SchemaChange, VacuumMode, VacuumOptions};
use tdbfilter::array::metadata::{MetadataChange, MetadataEntry};
use tdbfilter::array::schema::{ArraySchema, Attribute, Enumeration};
use tdbfilter::array::{Array, OpenOptions, WriteLayout, Writer};
use tdbfilter::group::{self, Group, GroupChanges, GroupOptions};
use tdbfilter::storage::StorageConfig;
use tdbfilter::{Datatype, Error, Result};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Result<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return Err(Error::invalid(format!("odd hex length {}", s.len())));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&s[i..i + 2], 16)
                .map_err(|_| Error::invalid(format!("bad hex at {i}")))
        })
        .collect()
}

fn json_arg(s: &str) -> Result<Value> {
    serde_json::from_str(s).map_err(|e| Error::invalid(format!("JSON argument: {e}")))
}

fn num(s: &str) -> Result<u64> {
    s.parse()
        .map_err(|_| Error::invalid(format!("'{s}' is not a number")))
}

/// A schema JSON holding `attrs` and `enums` on one dimension, parsed: how an attribute or
/// enumeration in the schema JSON's form becomes typed.
fn parse_parts(attrs: Vec<Value>, enums: Vec<Value>) -> Result<ArraySchema> {
    ArraySchema::from_json_value(&json!({
        "sparse": true,
        "dimensions": [{"name": "__lifecycle_dim", "type": "INT64", "domain": [0, 9], "tile": 1}],
        "attributes": attrs,
        "enumerations": enums,
    }))
}

/// The enumerations of `uri`'s newest schema in JSON form (an added attribute may use one).
fn array_enumerations(uri: &str) -> Result<Vec<Value>> {
    let array = Array::open(uri, &OpenOptions::default())?;
    let mut schema = array.schema().clone();
    for (name, _) in array.schema().enumerations.clone() {
        schema.loaded_enumerations.push(array.enumeration(&name)?);
    }
    Ok(schema.to_json()["enumerations"]
        .as_array()
        .cloned()
        .unwrap_or_default())
}

fn attribute(uri: &str, v: &Value, extra_enums: &[Value]) -> Result<Attribute> {
    let mut enums = array_enumerations(uri)?;
    enums.extend(extra_enums.iter().cloned());
    Ok(parse_parts(vec![v.clone()], enums)?.attributes.remove(0))
}

fn enumeration(v: &Value) -> Result<Enumeration> {
    Ok(parse_parts(Vec::new(), vec![v.clone()])?
        .loaded_enumerations
        .remove(0))
}

fn evolve(uri: &str, changes: &Value, timestamp: Option<u64>) -> Result<Value> {
    let list = changes
        .as_array()
        .ok_or_else(|| Error::invalid("changes: expected a list"))?;
    let added_enums: Vec<Value> = list
        .iter()
        .filter_map(|c| c.get("add_enumeration").cloned())
        .collect();
    let schema = Array::open(uri, &OpenOptions::default())?.schema().clone();
    let mut out = Vec::new();
    for c in list {
        let (kind, v) = c
            .as_object()
            .and_then(|o| o.iter().next())
            .ok_or_else(|| Error::invalid("change: expected {kind: value}"))?;
        let name = || {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| Error::invalid(format!("{kind}: expected a name")))
        };
        out.push(match kind.as_str() {
            "add_attribute" => {
                SchemaChange::AddAttribute(Box::new(attribute(uri, v, &added_enums)?))
            }
            "drop_attribute" => SchemaChange::DropAttribute(name()?),
            "add_enumeration" => SchemaChange::AddEnumeration(enumeration(v)?),
            "extend_enumeration" => SchemaChange::ExtendEnumeration(enumeration(v)?),
            "drop_enumeration" => SchemaChange::DropEnumeration(name()?),
            "expand_current_domain" => {
                let mut s = schema.to_json();
                s["current_domain"] = v.clone();
                s["name"] = Value::Null;
                s["enumerations"] = json!([]);
                for a in s["attributes"].as_array_mut().into_iter().flatten() {
                    a.as_object_mut().map(|o| o.remove("enumeration"));
                }
                let parsed = ArraySchema::from_json_value(&s)?;
                SchemaChange::ExpandCurrentDomain(parsed.current_domain.unwrap_or_default())
            }
            _ => return Err(Error::invalid(format!("unknown change '{kind}'"))),
        });
    }
    let options = lifecycle::EvolveOptions {
        timestamp,
        ..Default::default()
    };
    Ok(json!({"schema": lifecycle::evolve(uri, &out, &options)?}))
}

fn write(uri: &str, timestamp: u64, spec: &Value) -> Result<Value> {
    let mut w = Writer::open(uri, None, Some(timestamp), &StorageConfig::new())?;
    let layout = match spec["layout"].as_str().unwrap_or("unordered") {
        "unordered" => WriteLayout::Unordered,
        "row_major" => WriteLayout::RowMajor,
        "global_order" => WriteLayout::GlobalOrder,
        l => return Err(Error::invalid(format!("unknown layout {l}"))),
    };
    w.set_layout(layout)?;
    if let Some(s) = spec["subarray"].as_str() {
        w.set_subarray(&unhex(s)?)?;
    }
    let fields = spec["fields"]
        .as_object()
        .ok_or_else(|| Error::invalid("fields: expected an object"))?;
    for (name, f) in fields {
        w.set_data_owned(name, unhex(f["data"].as_str().unwrap_or(""))?)?;
        if let Some(o) = f["offsets"].as_array() {
            w.set_offsets_owned(name, o.iter().filter_map(Value::as_u64).collect())?;
        }
        if let Some(v) = f["validity"].as_str() {
            w.set_validity(name, &unhex(v)?)?;
        }
    }
    w.submit()?;
    Ok(json!({"fragment": w.finalize()?}))
}

fn read(uri: &str, end: Option<u64>) -> Result<Value> {
    let options = OpenOptions {
        timestamp_end: end,
        ..Default::default()
    };
    let array = Array::open(uri, &options)?;
    let schema = array.schema();
    let mut names: Vec<&str> = schema.dimensions.iter().map(|d| d.name.as_str()).collect();
    names.extend(schema.attributes.iter().map(|a| a.name.as_str()));
    let data = array.read(&names, None)?;
    let mut out = serde_json::Map::new();
    for f in data {
        out.insert(
            f.name.clone(),
            json!({
                "type": f.datatype.name(),
                "cell_val_num": f.cell_val_num,
                "data": hex(&f.data),
                "offsets": f.offsets,
                "validity": f.validity.as_deref().map(hex),
            }),
        );
    }
    Ok(Value::Object(out))
}

fn group_update(uri: &str, spec: &Value) -> Result<Value> {
    let mut changes = GroupChanges::default();
    for a in spec["add"].as_array().into_iter().flatten() {
        let uri = a[0]
            .as_str()
            .ok_or_else(|| Error::invalid("add: [uri, relative, name]"))?;
        changes.add(uri, a[1].as_bool().unwrap_or(false), a[2].as_str());
    }
    for r in spec["remove"].as_array().into_iter().flatten() {
        changes.remove(r.as_str().unwrap_or_default());
    }
    for (k, v) in spec["put"].as_object().into_iter().flatten() {
        let t = v[0].as_str().unwrap_or_default();
        let datatype = Datatype::from_name(t)
            .ok_or_else(|| Error::invalid(format!("unknown datatype {t}")))?;
        let bytes = unhex(v[1].as_str().unwrap_or_default())?;
        let n = (bytes.len() / datatype.size()) as u32;
        changes.metadata(MetadataChange::Put(MetadataEntry::new(
            k, datatype, n, &bytes,
        )?));
    }
    for k in spec["delete"].as_array().into_iter().flatten() {
        changes.metadata(MetadataChange::Delete(
            k.as_str().unwrap_or_default().into(),
        ));
    }
    let written = group::update(uri, &changes, &GroupOptions::default())?;
    Ok(json!({"details": written}))
}

fn group_show(uri: &str) -> Result<Value> {
    let g = Group::open(uri, &GroupOptions::default())?;
    let members: Vec<Value> = g
        .members()
        .iter()
        .map(|m| {
            json!({"uri": m.uri, "resolved": g.member_uri(m), "type": m.object_type.name(),
                   "relative": m.relative, "name": m.name})
        })
        .collect();
    let mut meta = serde_json::Map::new();
    for e in g.metadata() {
        meta.insert(e.key.clone(), json!([e.datatype.name(), hex(&e.value)]));
    }
    Ok(json!({"members": members, "metadata": meta}))
}

fn run(args: &[String]) -> Result<Value> {
    let arg = |i: usize| -> Result<&str> {
        args.get(i)
            .map(String::as_str)
            .ok_or_else(|| Error::invalid(format!("missing argument {i} (see the usage)")))
    };
    let config = StorageConfig::new();
    match arg(0)? {
        "create" => {
            tdbfilter::array::create(arg(1)?, &ArraySchema::from_json(arg(2)?)?, None, &config)?;
            Ok(json!({}))
        }
        "write" => write(arg(1)?, num(arg(2)?)?, &json_arg(arg(3)?)?),
        "read" => read(arg(1)?, args.get(2).map(|s| num(s)).transpose()?),
        "fragments" => {
            let array = Array::open(arg(1)?, &OpenOptions::default())?;
            let names: Vec<&str> = array.fragments().iter().map(|f| f.name()).collect();
            Ok(json!(names))
        }
        "schema" => {
            let array = Array::open(arg(1)?, &OpenOptions::default())?;
            let mut s = array.schema().clone();
            for (name, _) in array.schema().enumerations.clone() {
                s.loaded_enumerations.push(array.enumeration(&name)?);
            }
            Ok(s.to_json())
        }
        "consolidate" => {
            let cfg = json_arg(arg(2)?)?;
            let obj = cfg
                .as_object()
                .ok_or_else(|| Error::invalid("the configuration is not a JSON object"))?;
            let mut options =
                lifecycle::ConsolidateOptions::new(lifecycle::ConsolidateMode::Fragments);
            for (k, v) in obj {
                if k == "fragments" {
                    let list = v
                        .as_array()
                        .ok_or_else(|| Error::invalid("fragments: not a list"))?
                        .iter()
                        .map(|x| x.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| Error::invalid("fragments: not a list of names"))?;
                    options.fragment_list = Some(list);
                    continue;
                }
                let value = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                options.set(k, &value)?;
            }
            let r = lifecycle::consolidate(arg(1)?, &options)?;
            Ok(json!({"written": r.written, "merged": r.merged}))
        }
        "vacuum" => {
            let mut options = VacuumOptions::new(VacuumMode::parse(arg(2)?)?);
            options.uncommitted_grace = match args.get(3).map(String::as_str) {
                None => options.uncommitted_grace,
                Some("keep") => None,
                Some(s) => Some(Duration::from_secs(num(s)?)),
            };
            let r = lifecycle::vacuum(arg(1)?, &options)?;
            Ok(json!({"removed": r.removed, "written": r.written}))
        }
        "uncommitted" => {
            let (storage, root) = tdbfilter::storage::Storage::open(arg(1)?, &config)?;
            let list = lifecycle::uncommitted::list(&storage, &root)?;
            Ok(json!(
                list.iter().map(|u| u.name.clone()).collect::<Vec<_>>()
            ))
        }
        "delete-fragments" => {
            let r = lifecycle::delete_fragments(arg(1)?, num(arg(2)?)?, num(arg(3)?)?, &config)?;
            Ok(json!({"fragments": r.fragments, "removed": r.removed, "written": r.written}))
        }
        "delete-array" => {
            let r = lifecycle::delete_array(arg(1)?, &config)?;
            Ok(json!({"removed": r.removed}))
        }
        "evolve" => evolve(
            arg(1)?,
            &json_arg(arg(2)?)?,
            args.get(3).map(|s| num(s)).transpose()?,
        ),
        "group-create" => {
            group::create(arg(1)?, &config)?;
            Ok(json!({}))
        }
        "group-update" => group_update(arg(1)?, &json_arg(arg(2)?)?),
        "group-show" => group_show(arg(1)?),
        c => Err(Error::invalid(format!("unknown command '{c}'"))),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(v) => println!("{v}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
