//! `tdbf array consolidate|vacuum|delete-fragments|remove|evolve` and `tdbf group …`: they run the built
//! binary on arrays and groups it makes.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tdbf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tdbf"))
        .args(args)
        .output()
        .expect("run tdbf")
}

/// Runs `tdbf`, asserts success and returns stdout.
fn ok(args: &[&str]) -> String {
    let o = tdbf(args);
    assert!(
        o.status.success(),
        "tdbf {args:?} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Runs `tdbf`, asserts status 1 with `needle` in the `tdbf: ` message.
fn fails(args: &[&str], needle: &str) {
    let o = tdbf(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "tdbf {args:?}: {err}");
    assert!(err.starts_with("tdbf: ") && err.contains(needle), "{err}");
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(args)).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("tdbf-life-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A sparse array with one fragment of two cells (d = t, t + 50; a = 10 t, -t) per
/// timestamp in `1..=n`.
fn array(dir: &Path, n: i32) -> PathBuf {
    let uri = dir.join("arr");
    let schema = dir.join("schema.json");
    std::fs::write(
        &schema,
        r#"{"sparse": true,
            "dimensions": [{"name": "d", "type": "INT32", "domain": [0, 99], "tile": 10}],
            "attributes": [{"name": "a", "type": "INT32"}]}"#,
    )
    .unwrap();
    ok(&["array", "create", s(&uri), "--schema", s(&schema)]);
    for t in 1..=n {
        let d = dir.join("d.bin");
        let a = dir.join("a.bin");
        std::fs::write(&d, [t, t + 50].map(i32::to_le_bytes).concat()).unwrap();
        std::fs::write(&a, [10 * t, -t].map(i32::to_le_bytes).concat()).unwrap();
        let ts = t.to_string();
        ok(&[
            "array",
            "write",
            s(&uri),
            "--field",
            &format!("d={}", s(&d)),
            "--field",
            &format!("a={}", s(&a)),
            "--layout",
            "unordered",
            "--timestamp",
            &ts,
        ]);
    }
    uri
}

fn cells(uri: &Path, field: &str) -> Vec<Value> {
    let v = json(&["array", "cat", s(uri), "--format", "json", "--field", field]);
    v["fields"][field].as_array().unwrap().clone()
}

#[test]
fn delete_fragments_and_remove() {
    let dir = scratch("delete");
    let uri = array(&dir, 3);
    let r = json(&[
        "array",
        "delete-fragments",
        s(&uri),
        "--timestamp",
        "2:2",
        "--json",
    ]);
    assert_eq!(r["fragments"].as_array().unwrap().len(), 1);
    assert_eq!(r["removed"].as_array().unwrap().len(), 2, "{r}");
    assert_eq!(cells(&uri, "a"), [10, 30, -1, -3].map(Value::from));
    fails(
        &["array", "delete-fragments", s(&uri), "--timestamp", "3:1"],
        "reversed",
    );
    fails(
        &["array", "delete-fragments", s(&uri), "--timestamp", "3"],
        "T1:T2",
    );
    std::fs::write(uri.join("notes.txt"), b"mine").unwrap();
    let text = ok(&["array", "remove", s(&uri)]);
    assert!(text.contains("removed __schema/"), "{text}");
    assert!(uri.join("notes.txt").exists() && !uri.join("__schema").exists());
    fails(&["array", "info", s(&uri)], "");
}

/// The visible fragments' names.
fn fragment_names(uri: &Path) -> Vec<String> {
    let v = json(&["array", "info", s(uri), "--json"]);
    v["fragments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn consolidate_modes() {
    let dir = scratch("consolidate");
    let uri = array(&dir, 5);
    let a = cells(&uri, "a");
    let names = fragment_names(&uri);
    assert_eq!(names.len(), 5);
    let before = std::fs::read_dir(uri.join("__fragments")).unwrap().count();
    fails(
        &["array", "consolidate", s(&uri), "--mode", "everything"],
        "unknown consolidation mode 'everything'",
    );
    fails(
        &[
            "array",
            "consolidate",
            s(&uri),
            "--config",
            "sm.consolidation.steps=many",
        ],
        "sm.consolidation.steps",
    );
    fails(
        &["array", "consolidate", s(&uri), "--timestamp", "4:2"],
        "after the end",
    );
    fails(
        &[
            "array",
            "consolidate",
            s(&uri),
            "--mode",
            "commits",
            "--fragment",
            &names[0],
        ],
        "only taken in the fragments mode",
    );
    fails(
        &[
            "array",
            "consolidate",
            s(&uri),
            "--fragment",
            &names[0],
            "--fragment",
            "__1_1_x_22",
        ],
        "Found 1 of 2",
    );
    assert_eq!(
        std::fs::read_dir(uri.join("__fragments")).unwrap().count(),
        before
    );

    // Two listed fragments, then the plan inside [3, 4], then one step of everything.
    let r = json(&[
        "array",
        "consolidate",
        s(&uri),
        "--fragment",
        &names[0],
        "--fragment",
        &names[1],
        "--json",
    ]);
    assert_eq!(
        r["merged"],
        serde_json::json!([[names[0], names[1]]]),
        "{r}"
    );
    let written = r["written"].as_array().unwrap();
    assert!(
        written
            .iter()
            .any(|w| w.as_str().unwrap().starts_with("__fragments/__1_2_")),
        "{r}"
    );
    assert_eq!(fragment_names(&uri).len(), 4);
    let r = json(&[
        "array",
        "consolidate",
        s(&uri),
        "--timestamp",
        "3:4",
        "--json",
    ]);
    assert_eq!(
        r["merged"],
        serde_json::json!([[names[2], names[3]]]),
        "{r}"
    );
    let text = ok(&[
        "array",
        "consolidate",
        s(&uri),
        "--config",
        "sm.consolidation.steps=1",
        "--config",
        "sm.consolidation.mode=fragments",
    ]);
    assert!(
        text.starts_with("merged ") && text.contains("wrote __commits/"),
        "{text}"
    );
    assert_eq!(fragment_names(&uri).len(), 1);
    assert_eq!(cells(&uri, "a"), a);

    // The other modes, from --mode or the configuration.
    let r = json(&[
        "array",
        "consolidate",
        s(&uri),
        "--mode",
        "commits",
        "--json",
    ]);
    assert!(r["written"][0].as_str().unwrap().ends_with(".con"), "{r}");
    let r = json(&[
        "array",
        "consolidate",
        s(&uri),
        "--config",
        "sm.consolidation.mode=array_meta",
        "--json",
    ]);
    assert_eq!(r["merged"], Value::Array(vec![]), "{r}");
    for mode in ["fragments", "commits"] {
        json(&["array", "vacuum", s(&uri), "--mode", mode, "--json"]);
    }
    assert_eq!(
        std::fs::read_dir(uri.join("__fragments")).unwrap().count(),
        1
    );
    assert_eq!(cells(&uri, "a"), a);
}

#[test]
fn vacuum_modes() {
    let dir = scratch("vacuum");
    let uri = array(&dir, 2);
    for mode in ["fragments", "commits", "fragment_meta", "array_meta"] {
        let r = json(&["array", "vacuum", s(&uri), "--mode", mode, "--json"]);
        assert_eq!(r["removed"], Value::Array(vec![]), "{mode}: {r}");
    }
    fails(
        &["array", "vacuum", s(&uri), "--mode", "everything"],
        "unknown vacuum mode",
    );
    // A killed writer's folder: removed once older than the grace period.
    let frags = uri.join("__fragments");
    let leftover = frags.join(format!("__9_9_{}_22", "c".repeat(32)));
    std::fs::create_dir(&leftover).unwrap();
    std::fs::write(leftover.join("a0.tdb"), b"partial").unwrap();
    let r = json(&["array", "vacuum", s(&uri), "--json"]);
    assert_eq!(r["removed"], Value::Array(vec![]), "young: {r}");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let r = json(&["array", "vacuum", s(&uri), "--grace", "0", "--json"]);
    assert_eq!(
        r["removed"][0].as_str().unwrap(),
        format!("__fragments/__9_9_{}_22/", "c".repeat(32))
    );
    assert!(!leftover.exists());
    assert_eq!(cells(&uri, "a"), [10, 20, -1, -2].map(Value::from));
}

#[test]
fn evolve_adds_drops_and_extends() {
    let dir = scratch("evolve");
    let uri = array(&dir, 1);
    let out = ok(&[
        "array",
        "evolve",
        s(&uri),
        "--add-enumeration",
        r#"{"name": "e", "type": "STRING_UTF8", "values": ["x", "y"]}"#,
        "--add-attribute",
        r#"{"name": "b", "type": "INT64", "fill": 7}"#,
        "--add-attribute",
        r#"{"name": "c", "type": "UINT8", "enumeration": "e"}"#,
    ]);
    assert!(out.starts_with("wrote __schema/__"), "{out}");
    assert_eq!(cells(&uri, "b"), [7, 7].map(Value::from));
    ok(&[
        "array",
        "evolve",
        s(&uri),
        "--extend-enumeration",
        r#"e=["z"]"#,
        "--drop-attribute",
        "a",
    ]);
    let info = json(&["array", "info", s(&uri), "--json"]);
    let schema = &info["schema"];
    let attrs: Vec<&str> = schema["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(attrs, ["b", "c"]);
    assert_eq!(
        schema["enumerations"][0]["values"],
        serde_json::json!(["x", "y", "z"])
    );
    fails(
        &["array", "evolve", s(&uri), "--drop-attribute", "nope"],
        "does not exist",
    );
    fails(
        &["array", "evolve", s(&uri), "--drop-enumeration", "e"],
        "is used by attribute 'c'",
    );
    fails(&["array", "evolve", s(&uri)], "no changes");
    fails(
        &["array", "evolve", s(&uri), "--add-attribute", "{"],
        "--add-attribute",
    );
    // An evolution stamped before the newest schema is written, as TileDB 2.30 writes it.
    let out = ok(&[
        "array",
        "evolve",
        s(&uri),
        "--drop-attribute",
        "b",
        "--timestamp",
        "5",
    ]);
    assert!(out.starts_with("wrote __schema/__5_5_"), "{out}");
}

#[test]
fn groups() {
    let dir = scratch("group");
    let uri = array(&dir, 1);
    let g = dir.join("g");
    let sub = dir.join("g").join("sub");
    ok(&["group", "create", s(&g)]);
    ok(&["group", "create", s(&sub)]);
    fails(&["group", "create", s(&g)], "already a TileDB group");
    let out = ok(&[
        "group",
        "add",
        s(&g),
        "sub",
        "--relative",
        "--timestamp",
        "5",
    ]);
    assert!(out.starts_with("wrote __group/__5_5_"), "{out}");
    ok(&["group", "add", s(&g), s(&uri), "--name", "arr"]);
    ok(&["group", "metadata", s(&g), "put", "answer", "42"]);
    ok(&[
        "group",
        "metadata",
        s(&g),
        "put",
        "who",
        "me",
        "--type",
        "STRING_UTF8",
    ]);
    let info = json(&["group", "info", s(&g), "--json"]);
    let members = info["members"].as_array().unwrap();
    assert_eq!(members.len(), 2, "{info}");
    assert_eq!(members[0]["name"], "arr");
    assert_eq!(members[0]["type"], "array");
    assert_eq!(members[1]["uri"], "sub");
    assert_eq!(members[1]["relative"], true);
    assert_eq!(members[1]["type"], "group");
    assert_eq!(info["metadata"]["answer"]["type"], "INT64");
    assert_eq!(info["metadata"]["answer"]["value"], 42);
    assert_eq!(info["metadata"]["who"]["value"], "me");
    // Time travel: at 5 only the relative member exists (the named one came later; each
    // details file holds the whole membership, as TileDB writes it).
    let at5 = json(&["group", "info", s(&g), "--timestamp", "5", "--json"]);
    assert_eq!(at5["members"].as_array().unwrap().len(), 1);
    let text = ok(&["group", "info", s(&g)]);
    assert!(text.contains("|-- arr ARRAY"), "{text}");
    ok(&["group", "remove", s(&g), "arr"]);
    ok(&["group", "metadata", s(&g), "delete", "answer"]);
    let info = json(&["group", "info", s(&g), "--json"]);
    assert_eq!(info["members"].as_array().unwrap().len(), 1);
    assert!(info["metadata"].get("answer").is_none());
    fails(&["group", "remove", s(&g), "arr"], "does not exist");
    fails(
        &["group", "add", s(&g), s(&dir.join("nothing"))],
        "not a TileDB array or group",
    );
    fails(&["group", "info", s(&uri)], "not a TileDB group");
}
