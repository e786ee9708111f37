//! Tiles written by older TileDB releases (tests/data/arrays/<libtiledb version>/, made by
//! tests/fixtures/make_old_arrays.sh with TileDB-Py 0.6–0.23): each single-tile attribute
//! data file is unfiltered with the attribute's pipeline from the array's schema, at the
//! fragment's format version, and compared with the cell values the writing TileDB-Py read
//! back (expected.json.gz). Then the same tiles with the other version's datatype rule, to
//! show the rule is what makes them right (docs/FORMAT.md §4.8, docs/format-versions.md).

use flate2::read::GzDecoder;
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use tdbfilter::format::format_version::{
    CHAINED_STAGE_TYPES_VERSION, DENSE_VALIDITY_AS_ATTRIBUTE_VERSIONS,
};
use tdbfilter::{Datatype, Pipeline, Tile, format::tile_format, pipeline::generic_tile};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/arrays")
}

/// One TileDB release's fixtures: its folder and its expected.json.gz.
struct Release {
    dir: PathBuf,
    expected: Value,
}

fn releases() -> Vec<Release> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root())
        .expect("tests/data/arrays")
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= 8,
        "fixtures of at least 8 releases, found {dirs:?}"
    );
    dirs.into_iter()
        .map(|dir| {
            let gz = std::fs::read(dir.join("expected.json.gz")).unwrap();
            let mut text = String::new();
            GzDecoder::new(&gz[..]).read_to_string(&mut text).unwrap();
            Release {
                expected: serde_json::from_str(&text).unwrap(),
                dir,
            }
        })
        .collect()
}

/// An array of a release, with its schema payload and single fragment folder.
struct Array {
    label: String,
    version: u32,
    schema: Vec<u8>,
    fragment: PathBuf,
    expected: Value,
}

impl Release {
    fn array(&self, name: &str) -> Option<Array> {
        let expected = self.expected["arrays"].get(name)?.clone();
        if expected.get("error").is_some() {
            return None;
        }
        let path = self.dir.join(name);
        let schema_file = if path.join("__schema").is_dir() {
            only_entry(&path.join("__schema"))
        } else {
            path.join("__array_schema.tdb")
        };
        let bytes = std::fs::read(&schema_file).unwrap();
        let (_, tile, _) = generic_tile::read(&bytes, None).unwrap();
        let frag_root = if path.join("__fragments").is_dir() {
            path.join("__fragments")
        } else {
            path.clone()
        };
        let fragment = std::fs::read_dir(&frag_root)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.is_dir()
                    && p.file_name()
                        .unwrap()
                        .to_str()
                        .unwrap()
                        .matches('_')
                        .count()
                        >= 5
            })
            .unwrap();
        Some(Array {
            label: format!("{}/{name}", self.dir.file_name().unwrap().to_str().unwrap()),
            version: expected["format_version"].as_u64().unwrap() as u32,
            schema: tile.data().to_vec(),
            fragment,
            expected,
        })
    }
}

fn only_entry(dir: &Path) -> PathBuf {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    assert_eq!(v.len(), 1, "{dir:?}");
    v.pop().unwrap()
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

impl Array {
    /// The schema's validity pipeline: after version, [allows_dups (v5+)], array type, tile
    /// and cell order, capacity, the coords and offsets pipelines (docs/ARRAY.md §3).
    fn validity_pipeline(&self) -> Pipeline {
        let v = u32_at(&self.schema, 0);
        assert!(
            v >= 7,
            "{}: no validity pipeline before version 7",
            self.label
        );
        let mut at = 4 + usize::from(v >= 5) + 3 + 8;
        for _ in 0..2 {
            at += Pipeline::deserialize_prefix(&self.schema[at..], v)
                .unwrap()
                .1;
        }
        Pipeline::deserialize_prefix(&self.schema[at..], self.version)
            .unwrap()
            .0
    }

    /// The schema's offsets pipeline (the second after the prelude, docs/ARRAY.md §3).
    fn offsets_pipeline(&self) -> Pipeline {
        let v = u32_at(&self.schema, 0);
        let at = 4 + usize::from(v >= 5) + 3 + 8;
        let used = Pipeline::deserialize_prefix(&self.schema[at..], v)
            .unwrap()
            .1;
        Pipeline::deserialize_prefix(&self.schema[at + used..], self.version)
            .unwrap()
            .0
    }

    /// An attribute's datatype and pipeline, found by its serialized name (`u32 length, name`,
    /// then `u8 type, u32 cell_val_num, pipeline`).
    fn attribute(&self, name: &str) -> (Datatype, Pipeline) {
        let mut needle = (name.len() as u32).to_le_bytes().to_vec();
        needle.extend_from_slice(name.as_bytes());
        let at = self
            .schema
            .windows(needle.len())
            .position(|w| w == needle.as_slice())
            .unwrap_or_else(|| panic!("{}: attribute {name} not in the schema", self.label))
            + needle.len();
        let datatype = Datatype::from_u8(self.schema[at]).unwrap();
        let (p, _) = Pipeline::deserialize_prefix(&self.schema[at + 5..], self.version).unwrap();
        (datatype, p)
    }

    /// The single filtered tile of attribute `index` (`suffix` "" or "_validity").
    fn tile(&self, index: u64, name: &str, suffix: &str) -> Vec<u8> {
        let by_index = self.fragment.join(format!("a{index}{suffix}.tdb"));
        let path = if by_index.exists() {
            by_index
        } else {
            self.fragment.join(format!("{name}{suffix}.tdb"))
        };
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let size = tile_format::filtered_tile_size(&bytes).unwrap() as usize;
        assert_eq!(size, bytes.len(), "{path:?} holds exactly one tile");
        bytes
    }

    fn attrs(&self) -> Vec<(String, Value)> {
        let mut v: Vec<(String, Value)> = self.expected["attrs"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        v.sort_by_key(|(_, e)| e["index"].as_u64());
        v
    }
}

fn unfilter(p: &Pipeline, tile: &[u8], t: Datatype) -> tdbfilter::Result<Vec<u8>> {
    Ok(p.unfilter_tile(tile, t, t.size() as u64)?.data().to_vec())
}

fn validity_bits(e: &Value) -> Vec<u8> {
    e["input_validity"]
        .as_str()
        .unwrap()
        .bytes()
        .map(|c| c - b'0')
        .collect()
}

/// SCALE_FLOAT with shuffles, XOR, BIT_WIDTH_REDUCTION, POSITIVE_DELTA (TileDB 2.11+) and
/// DATETIME_NS through BWR / POSITIVE_DELTA / DOUBLE_DELTA (every release): each tile reads
/// to the writer's values at its own format version, and our writer at that version gives
/// back the same tile bytes where no compressor is involved.
#[test]
fn attribute_tiles_read_with_their_versions_rules() {
    let mut checked = 0;
    let mut old_rule = 0;
    let mut refiltered = 0;
    for r in releases() {
        for name in ["scalefloat", "datetime"] {
            let Some(a) = r.array(name) else { continue };
            for (attr, e) in a.attrs() {
                let (t, p) = a.attribute(&attr);
                assert_eq!(p.format_version(), a.version);
                let tile = a.tile(e["index"].as_u64().unwrap(), &attr, "");
                let want = hex(e["hex"].as_str().unwrap());
                let got = unfilter(&p, &tile, t)
                    .unwrap_or_else(|err| panic!("{}/{attr}: {err}", a.label));
                assert!(got == want, "{}/{attr}: values differ", a.label);
                checked += 1;
                if name == "scalefloat" && a.version < CHAINED_STAGE_TYPES_VERSION {
                    old_rule += 1;
                }
                // Byte equality needs TileDB's output to be deterministic: no compressor, and
                // no BIT_WIDTH_REDUCTION on XOR's full-range integers (TileDB leaves the
                // offset of a window whose range overflows uninitialized, docs/FORMAT.md §8.4).
                use tdbfilter::Filter;
                let types = p.stage_datatypes(t);
                let compressed = p
                    .filters()
                    .iter()
                    .any(|f| matches!(f, Filter::Compression(_)));
                let indeterminate = p.filters().windows(2).zip(&types[1..]).any(|(w, st)| {
                    w[0] == Filter::Xor
                        && matches!(w[1], Filter::BitWidthReduction { .. })
                        && st.is_integer()
                });
                let again = p
                    .filter_tile(&Tile::new(t, t.size() as u64, want.clone()).unwrap())
                    .unwrap();
                if !compressed && !indeterminate {
                    assert!(
                        again == tile,
                        "{}/{attr}: re-filtered tile differs",
                        a.label
                    );
                    refiltered += 1;
                } else {
                    assert_eq!(unfilter(&p, &again, t).unwrap(), want, "{}/{attr}", a.label);
                }
            }
        }
    }
    println!(
        "{checked} tiles read ({old_rule} SCALE_FLOAT tiles of versions 15-19), {refiltered} re-filtered"
    );
    assert!(
        checked >= 70 && old_rule >= 30 && refiltered >= 45,
        "{checked} {old_rule} {refiltered}"
    );
}

/// Not vacuous: the SCALE_FLOAT tiles of versions 15–19 read wrong (or fail) with the rule of
/// version 20+ — what TileDB 2.17 to 2.30 do — and those of version 20+ with the old rule.
#[test]
fn scale_float_tiles_differ_under_the_other_rule() {
    let mut differ = 0;
    for r in releases() {
        let Some(a) = r.array("scalefloat") else {
            continue;
        };
        let other = if a.version < CHAINED_STAGE_TYPES_VERSION {
            22
        } else {
            19
        };
        for (attr, e) in a.attrs() {
            let (t, mut p) = a.attribute(&attr);
            p.set_format_version(other).unwrap();
            let tile = a.tile(e["index"].as_u64().unwrap(), &attr, "");
            let want = hex(e["hex"].as_str().unwrap());
            match unfilter(&p, &tile, t) {
                Ok(got) => assert!(
                    got != want,
                    "{}/{attr}: same under version {other}",
                    a.label
                ),
                Err(err) => println!("{}/{attr} as version {other}: {err}", a.label),
            }
            differ += 1;
        }
    }
    assert!(differ >= 40, "{differ}");
}

/// Validity tiles with BYTESHUFFLE, BITSHUFFLE+ZSTD or BIT_WIDTH_REDUCTION in the schema's
/// validity pipeline: dense fragments of versions 9–14 were filtered as the attribute's
/// datatype, later ones as UINT8; either way they read to the validity the writer was given.
#[test]
fn validity_tiles_read_with_their_versions_datatype() {
    let mut checked = 0;
    let mut as_attribute = 0;
    for r in releases() {
        for name in [
            "validity_byteshuffle",
            "validity_bitshuffle_zstd",
            "validity_bwr",
        ] {
            let Some(a) = r.array(name) else { continue };
            let p = a.validity_pipeline();
            for (attr, e) in a.attrs() {
                let (t, _) = a.attribute(&attr);
                let tile = a.tile(e["index"].as_u64().unwrap(), &attr, "_validity");
                let want = validity_bits(&e);
                let got = p
                    .unfilter_validity_tile(&tile, t, true)
                    .unwrap_or_else(|err| panic!("{}/{attr}: {err}", a.label));
                assert!(
                    got.data() == want.as_slice(),
                    "{}/{attr}: validity differs",
                    a.label
                );
                let mut out = vec![0u8; want.len()];
                assert_eq!(
                    p.unfilter_validity_tile_into(&tile, t, true, &mut out)
                        .unwrap(),
                    want.len()
                );
                assert_eq!(out, want);
                checked += 1;
                // Versions 9-14 read as UINT8 (what TileDB itself does, the rule for sparse
                // fragments) go wrong wherever the filter depends on the element size: BWR
                // passes floats and 1-byte types through, so those cannot differ.
                let old = DENSE_VALIDITY_AS_ATTRIBUTE_VERSIONS.contains(&a.version);
                let sensitive = t.size() > 1 && (name != "validity_bwr" || !t.is_real());
                if old && sensitive {
                    let as_uint8 = p.unfilter_validity_tile(&tile, t, false);
                    assert!(
                        as_uint8.map_or(true, |o| o.data() != want.as_slice()),
                        "{}/{attr}: same as UINT8",
                        a.label
                    );
                    as_attribute += 1;
                }
            }
        }
    }
    assert!(
        checked >= 100 && as_attribute >= 30,
        "{checked} {as_attribute}"
    );
}

/// TileDB 2.14 writing into an array of TileDB 2.13: STRING_UTF8 with RLE and DICTIONARY has
/// its offsets folded into the data tile in a fragment of version 16 (TileDB 2.15 to 2.30 fail
/// on it). The offsets tile is the 8-byte empty marker, which tells the case apart.
#[test]
fn utf8_offsets_folded_by_2_14_in_a_version_16_fragment() {
    let r = releases()
        .into_iter()
        .find(|r| r.dir.ends_with("2.14.0-into-2.13.1"))
        .expect("the 2.14-into-2.13 fixture");
    let a = r.array("utf8_folded").unwrap();
    assert_eq!(a.version, 16);
    let offsets_pipeline = a.offsets_pipeline();
    for (attr, e) in a.attrs() {
        let (t, p) = a.attribute(&attr);
        assert_eq!(t, Datatype::StringUtf8);
        assert!(
            !p.skips_offsets(t),
            "version 16 does not fold UTF8 by TileDB >= 2.15's rule"
        );
        let i = e["index"].as_u64().unwrap();
        let offsets = a.tile(i, &attr, "");
        assert_eq!(offsets, [0u8; 8], "{attr}: the empty offsets marker");
        let data = a.tile(i, &attr, "_var");
        let tile = p
            .unfilter_var(&offsets_pipeline, &offsets, &data, t)
            .unwrap_or_else(|err| panic!("{attr}: {err}"));
        let cells = tile.offsets().unwrap();
        let want: Vec<&str> = e["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(cells.len(), want.len());
        for (k, w) in want.iter().enumerate() {
            let end = cells.get(k + 1).map_or(tile.data().len(), |&o| o as usize);
            assert_eq!(
                &tile.data()[cells[k] as usize..end],
                w.as_bytes(),
                "{attr} cell {k}"
            );
        }
    }
}
