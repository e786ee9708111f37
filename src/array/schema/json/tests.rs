use super::*;

fn schema(json: &str) -> ArraySchema {
    ArraySchema::from_json(json).unwrap_or_else(|e| panic!("{e}\n{json}"))
}

fn refused(json: &str) -> String {
    match ArraySchema::from_json(json) {
        Ok(_) => panic!("accepted: {json}"),
        Err(e) => e.message().to_string(),
    }
}

/// A dense 1-D INT32 schema with the given attributes JSON.
fn dense_with(attrs: &str) -> String {
    format!(
        r#"{{"dimensions":[{{"name":"d","type":"INT32","domain":[1,100],"tile":10}}],"attributes":[{attrs}]}}"#
    )
}

#[test]
fn minimal_json_takes_tiledb_defaults() {
    let s = schema(&dense_with(r#"{"name":"a","type":"INT32"}"#));
    assert!(s.is_dense());
    assert!(!s.allows_dups);
    assert_eq!(
        (s.tile_order, s.cell_order, s.capacity),
        (Layout::RowMajor, Layout::RowMajor, 10_000)
    );
    assert_eq!(spec::to_spec(&s.coords_filters), "zstd:-1");
    assert_eq!(spec::to_spec(&s.offsets_filters), "zstd:-1");
    assert_eq!(spec::to_spec(&s.validity_filters), "rle:-1");
    let d = &s.dimensions[0];
    assert!(d.uses_coords_filters);
    assert_eq!(d.tile_extent.as_deref(), Some(&10i32.to_le_bytes()[..]));
    let a = &s.attributes[0];
    assert_eq!(a.fill_value, i32::MIN.to_le_bytes());
    assert_eq!((a.cell_val_num, a.nullable, a.order), (1, false, 0));
    assert!(a.filters.filters().is_empty());
    assert_eq!(s.current_domain, None);
}

#[test]
fn null_tile_extents_become_the_domain_range_except_for_hilbert() {
    let s = schema(
        r#"{"dimensions":[{"name":"x","type":"INT8","domain":[-100,100]},
            {"name":"y","type":"FLOAT32","domain":[0.5,10.25]}],"sparse":true,
            "attributes":[{"name":"a","type":"INT32"}]}"#,
    );
    assert_eq!(
        s.dimensions[0].tile_extent,
        Some((-55i8).to_le_bytes().to_vec())
    );
    assert_eq!(
        s.dimensions[1].tile_extent,
        Some(9.75f32.to_le_bytes().to_vec())
    );
    let s = schema(
        r#"{"dimensions":[{"name":"x","type":"INT64","domain":[0,100]}],"sparse":true,
            "cell_order":"hilbert","attributes":[]}"#,
    );
    assert_eq!(s.dimensions[0].tile_extent, None);
}

#[test]
fn json_round_trips_every_member() {
    let json = r#"{
        "sparse": true, "allows_duplicates": true, "tile_order": "col-major",
        "cell_order": "hilbert", "capacity": 77,
        "coords_filters": "double_delta:-1,lz4:3",
        "offsets_filters": {"filters": "positive_delta:256,zstd:5", "max_chunk_size": 4096},
        "validity_filters": "none",
        "dimensions": [
            {"name": "s", "type": "STRING_ASCII", "var": true, "domain": null, "tile": null,
             "filters": "rle:-1"},
            {"name": "t", "type": "DATETIME_NS", "domain": [-5, 9000000000000], "tile": 1000},
            {"name": "f", "type": "FLOAT64", "domain": [-1.5, 1e300], "tile": 0.1,
             "filters": "bitshuffle,zstd:1"}
        ],
        "attributes": [
            {"name": "", "type": "FLOAT32", "cell_val_num": 3, "fill": [0.1, "NaN", "-inf"]},
            {"name": "v", "type": "INT16", "cell_val_num": "var", "fill": [1, 2, 3],
             "nullable": true, "fill_validity": 1, "filters": "delta:-1:reinterpret=int16"},
            {"name": "c", "type": "CHAR", "cell_val_num": 2, "fill": [128, 255]},
            {"name": "u", "type": "STRING_UTF8", "cell_val_num": "var", "fill": "héllo"},
            {"name": "w", "type": "STRING_UTF16", "cell_val_num": 2, "fill": ["ab", [0, 216]]},
            {"name": "e", "type": "UINT8", "enumeration": "colors"},
            {"name": "sf", "type": "FLOAT64", "filters": "scale_float:factor=0.25:offset=-3:byte_width=4,xor,checksum_sha256"}
        ],
        "enumerations": [
            {"name": "colors", "type": "STRING_UTF8", "cell_val_num": "var", "ordered": true,
             "values": ["red", "", "blue"]}
        ],
        "current_domain": [["a", "zz"], [0, 100], [-1, 2.5]]
    }"#;
    let s = schema(json);
    assert_eq!(s.enumerations, vec![("colors".to_string(), String::new())]);
    assert_eq!(s.loaded_enumerations[0].offsets, vec![0, 3, 3]);
    assert_eq!(s.attributes[1].fill_value, [1, 0, 2, 0, 3, 0]);
    assert_eq!(s.attributes[2].fill_value, [128, 255]);
    assert_eq!(s.attributes[4].fill_value, [b'a', b'b', 0, 216]);
    assert_eq!(s.offsets_filters.max_chunk_size(), 4096);
    assert!(!s.dimensions[0].uses_coords_filters);
    assert!(s.dimensions[1].uses_coords_filters);
    let out = s.to_json();
    let again = ArraySchema::from_json_value(&out).unwrap();
    assert_eq!(again.to_json(), out);
    assert_eq!(again.serialize().unwrap(), s.serialize().unwrap());
    // Lossy cases of the old printer print exactly now.
    assert_eq!(out["attributes"][2]["fill"], serde_json::json!([128, 255]));
    assert_eq!(
        out["attributes"][0]["fill"],
        serde_json::json!([0.1, "NaN", "-inf"])
    );
    assert_eq!(out["attributes"][1]["fill"], serde_json::json!([1, 2, 3]));
    assert_eq!(
        out["offsets_filters"],
        serde_json::json!({"filters": "positive_delta:256,zstd:5", "max_chunk_size": 4096})
    );
    assert_eq!(
        out["enumerations"][0]["values"],
        serde_json::json!(["red", "", "blue"])
    );
    // The whole `info --json` output is accepted as well.
    let whole = serde_json::json!({"schema": out, "schemas": 1, "fragments": []});
    assert_eq!(
        ArraySchema::from_json_value(&whole).unwrap().to_json(),
        again.to_json()
    );
}

#[test]
fn member_order_is_the_printed_order() {
    let s = schema(&dense_with(r#"{"name":"a","type":"INT32"}"#));
    let text = s.to_json().to_string();
    let keys = [
        "\"name\"",
        "\"version\"",
        "\"sparse\"",
        "\"allows_duplicates\"",
        "\"tile_order\"",
        "\"cell_order\"",
        "\"capacity\"",
        "\"coords_filters\"",
        "\"offsets_filters\"",
        "\"validity_filters\"",
        "\"dimensions\"",
        "\"attributes\"",
        "\"dimension_labels\"",
        "\"enumerations\"",
    ];
    let pos: Vec<usize> = keys.iter().map(|k| text.find(k).unwrap()).collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(text.contains(
        r#"{"name":"d","type":"INT32","var":false,"domain":[1,100],"tile":10,"filters":"zstd:-1"}"#
    ));
    assert!(text.contains(
        r#"{"name":"a","type":"INT32","cell_val_num":1,"nullable":false,"fill":-2147483648,"fill_validity":0,"filters":"none","enumeration":null}"#
    ));
}

#[test]
fn floats_print_shortest_and_read_back_exactly() {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let f = f32::from_bits(x as u32);
        let d = f64::from_bits(x);
        for (t, b) in [
            (Datatype::Float32, f.to_le_bytes().to_vec()),
            (Datatype::Float64, d.to_le_bytes().to_vec()),
        ] {
            let v = value_json(t, &b);
            let text = v.to_string();
            let parsed: Value = serde_json::from_str(&text).unwrap();
            let back = value_from_json(t, &parsed, "v").unwrap();
            let nan = |b: &[u8]| {
                if t == Datatype::Float32 {
                    f32::from_le_bytes(b.try_into().unwrap()).is_nan()
                } else {
                    f64::from_le_bytes(b.try_into().unwrap()).is_nan()
                }
            };
            if nan(&b) {
                assert!(nan(&back));
            } else {
                assert_eq!(back, b, "{t} {text}");
            }
        }
    }
    assert_eq!(value_json(Datatype::Float32, &0.1f32.to_le_bytes()), 0.1);
    assert_eq!(
        value_json(Datatype::Float64, &100f64.to_le_bytes()).to_string(),
        "100"
    );
    assert_eq!(
        value_json(Datatype::Float64, &(-0.0f64).to_le_bytes()).to_string(),
        "-0.0"
    );
}

#[test]
fn integers_are_range_checked() {
    assert!(
        refused(&dense_with(r#"{"name":"a","type":"UINT8","fill":256}"#))
            .contains("outside the range of UINT8")
    );
    assert!(
        refused(&dense_with(r#"{"name":"a","type":"INT32","fill":1.5}"#))
            .contains("is not a INT32 value")
    );
    let s = schema(&dense_with(
        r#"{"name":"a","type":"UINT64","fill":18446744073709551615}"#,
    ));
    assert_eq!(s.attributes[0].fill_value, u64::MAX.to_le_bytes());
}

#[test]
fn malformed_json_names_the_member() {
    assert!(refused("[1]").contains("not an object"));
    assert!(refused(r#"{"dimensions":[]"#).contains("schema JSON"));
    assert!(refused(r#"{"dimension":[]}"#).contains("unknown member 'dimension'"));
    assert!(
        refused(&dense_with(r#"{"name":"a","type":"INT32","fil":1}"#))
            .contains("attribute 0: unknown member 'fil'")
    );
    assert!(
        refused(&dense_with(r#"{"name":"a","type":"INT33"}"#)).contains("unknown datatype 'INT33'")
    );
    assert!(
        refused(&dense_with(
            r#"{"name":"a","type":"INT32","filters":"zstd,foo"}"#
        ))
        .contains("unknown filter 'foo'")
    );
    assert!(
        refused(r#"{"sparse":true,"dimensions":[{"name":"x","type":"INT32","domain":[0,9]}],"enumerations":["e"]}"#)
            .contains("without its values")
    );
    assert!(refused(r#"{"dimensions":[{"name":"x","type":"INT32","domain":[0,9]}],"attributes":[{"name":"a","type":"INT32"}],"dimension_labels":2}"#).contains("dimension label"));
    assert!(
        refused(r#"{"sparse":true,"dimensions":[{"name":"x","type":"INT32","domain":[0,9],"nullable":true}]}"#)
            .contains("dimensions cannot be nullable")
    );
}

/// Each case: a schema JSON TileDB refuses, and TileDB's reason (`tests/array/
/// run_create_tests.py` checks the same reasons against TileDB-Py).
#[test]
fn refuses_what_tiledb_refuses_with_its_reason() {
    let dim = |t: &str, dom: &str, tile: &str| {
        format!(r#"{{"name":"x","type":"{t}","domain":{dom},"tile":{tile}}}"#)
    };
    let arr = |sparse: bool, dims: &str, attrs: &str, extra: &str| {
        format!(r#"{{"sparse":{sparse},"dimensions":[{dims}],"attributes":[{attrs}]{extra}}}"#)
    };
    let a = r#"{"name":"a","type":"INT32"}"#;
    let cases = [
        (
            arr(false, &dim("FLOAT64", "[0,1]", "0.5"), a, ""),
            "Cannot set domain; Dense arrays do not support dimension datatype 'FLOAT64'",
        ),
        (
            arr(false, r#"{"name":"s","type":"STRING_ASCII"}"#, a, ""),
            "Cannot set domain; Dense arrays do not support dimension datatype 'STRING_ASCII'",
        ),
        (
            arr(
                false,
                &format!(
                    "{},{}",
                    dim("INT32", "[0,9]", "2"),
                    r#"{"name":"y","type":"INT64","domain":[0,9],"tile":2}"#
                ),
                a,
                "",
            ),
            "Cannot set domain; In dense arrays, all dimensions must have the same datatype",
        ),
        (
            arr(
                false,
                &dim("INT32", "[0,9]", "2"),
                a,
                r#","cell_order":"hilbert""#,
            ),
            "Cannot set cell order; Hilbert order is only applicable to sparse arrays",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                a,
                r#","tile_order":"hilbert""#,
            ),
            "Cannot set tile order; Hilbert order is not applicable to tiles",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                a,
                r#","cell_order":"unordered""#,
            ),
            "Cannot set cell order; Cannot create ArraySchema with UNORDERED cell order",
        ),
        (
            arr(
                false,
                &dim("INT32", "[0,9]", "2"),
                a,
                r#","allows_duplicates":true"#,
            ),
            "Dense arrays cannot allow coordinate duplicates",
        ),
        (
            arr(true, &dim("INT32", "[0,9]", "2"), a, r#","capacity":0"#),
            "Array schema check failed; Sparse arrays cannot have their capacity equal to zero.",
        ),
        (
            arr(false, &dim("INT32", "[0,9]", "2"), "", ""),
            "Array schema check failed; No attributes provided",
        ),
        (
            arr(true, "", a, ""),
            "Array schema check failed; No dimensions provided",
        ),
        (
            arr(true, &dim("INT32", "[0,9]", "0"), a, ""),
            "Tile extent check failed on dimension 'x'; Tile extent must not be 0",
        ),
        (
            arr(true, &dim("INT32", "[0,9]", "-2"), a, ""),
            "Tile extent check failed on dimension 'x'; Tile extent -2 exceeds range on dimension domain [0, 9]",
        ),
        (
            arr(true, &dim("INT32", "[0,9]", "11"), a, ""),
            "Tile extent check failed on dimension 'x'; Tile extent 11 exceeds range on dimension domain [0, 9]",
        ),
        (
            arr(true, &dim("FLOAT32", "[0,9]", "0"), a, ""),
            "Tile extent check failed on dimension 'x'; Tile extent must be greater than 0",
        ),
        (
            arr(true, &dim("FLOAT64", "[0,9]", "10.5"), a, ""),
            "Tile extent check failed on dimension 'x'; Tile extent 10.500000 exceeds range on dimension domain [0.000000, 9.000000]",
        ),
        (
            arr(true, &dim("INT8", "[-128,127]", "1"), a, ""),
            "Domain check failed; Domain range (upper + lower + 1) is larger than the maximum unsigned number",
        ),
        (
            arr(true, &dim("INT32", "[5,1]", "1"), a, ""),
            "Domain check failed; Upper domain bound should not be smaller than the lower one",
        ),
        (
            arr(true, &dim("FLOAT64", r#"[0,"inf"]"#, "1"), a, ""),
            "Domain check failed; domain contains NaN",
        ),
        (
            arr(false, &dim("INT64", "[0,9223372036854775806]", "10"), a, ""),
            "Tile extent check failed; domain max expanded to multiple of tile extent exceeds max value representable by domain type.",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                r#"{"name":"x","type":"INT32"}"#,
                "",
            ),
            "Array schema check failed; Attributes, dimensions and dimension labels must have unique names",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                r#"{"name":"a","type":"INT32"},{"name":"a","type":"INT8"}"#,
                "",
            ),
            "must have unique names",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                r#"{"name":"__a","type":"INT32"}"#,
                "",
            ),
            "Cannot add attribute: names starting with '__' are reserved",
        ),
        (
            arr(true, r#"{"name":"x","type":"STRING_UTF8"}"#, a, ""),
            "Datatype::STRING_UTF8 is not a valid Dimension Datatype",
        ),
        (
            arr(
                true,
                r#"{"name":"x","type":"STRING_ASCII","var":false}"#,
                a,
                "",
            ),
            "Cannot set non-variable number of values per coordinate for a string dimension",
        ),
        (
            arr(
                true,
                r#"{"name":"x","type":"INT32","var":true,"domain":[0,9],"tile":2}"#,
                a,
                "",
            ),
            "Cannot set number of values per coordinate; Currently only one value per coordinate is supported",
        ),
        (
            arr(
                true,
                r#"{"name":"x","type":"STRING_ASCII","domain":["a","b"]}"#,
                a,
                "",
            ),
            "Setting the domain to a dimension with type 'STRING_ASCII' is not supported",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                r#"{"name":"a","type":"FLOAT32","filters":"delta"}"#,
                "",
            ),
            "Filter DELTA does not accept input type FLOAT32",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                r#"{"name":"a","type":"FLOAT64","filters":"byteshuffle,double_delta"}"#,
                "",
            ),
            "Filter BYTESHUFFLE produces FLOAT64 but second filter DOUBLE_DELTA does not accept this type.",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                r#"{"name":"a","type":"STRING_ASCII","cell_val_num":"var","filters":"zstd,rle"}"#,
                "",
            ),
            "RLE filter must be the first filter to apply when used on a variable length string attribute",
        ),
        (
            arr(
                true,
                &dim("FLOAT64", "[0,9]", "2"),
                a,
                r#","coords_filters":"double_delta""#,
            ),
            "Real dimension cannot inherit coordinate filters with DOUBLE DELTA compression",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                r#"{"name":"a","type":"ANY","cell_val_num":1}"#,
                "",
            ),
            "Cannot set number of values per cell; Attribute datatype `ANY` is always variable-sized",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                r#"{"name":"a","type":"INT32","cell_val_num":0}"#,
                "",
            ),
            "Cannot set zero values per cell",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                r#"{"name":"a","type":"INT32","cell_val_num":2,"fill":5}"#,
                "",
            ),
            "Cannot set fill value; Input size is not the same as cell size",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                r#"{"name":"a","type":"INT32","fill_validity":1}"#,
                "",
            ),
            "Cannot set fill value; Attribute is not nullable",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                r#"{"name":"a","type":"UINT8","filters":"webp"}"#,
                "",
            ),
            "WebP filter can only be applied to dense arrays",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                r#"{"name":"a","type":"INT32","enumeration":"e"}"#,
                "",
            ),
            "Cannot add attribute; Attribute refers to an unknown enumeration named 'e'.",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                r#"{"name":"a","type":"FLOAT32","enumeration":"e"}"#,
                r#","enumerations":[{"name":"e","type":"INT32","values":[1,2]}]"#,
            ),
            "Unable to use enumeration with attribute 'a', attribute must have an integral data type, not FLOAT32",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                r#"{"name":"a","type":"INT8","enumeration":"e"}"#,
                &format!(
                    r#","enumerations":[{{"name":"e","type":"INT32","values":[{}]}}]"#,
                    (0..127)
                        .map(|i| i.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                ),
            ),
            "Unable to use enumeration 'e' for attribute 'a' because the attribute's type is not large enough to represent all enumeration values.",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                a,
                r#","enumerations":[{"name":"e","type":"STRING_ASCII","values":["x","y","x"]}]"#,
            ),
            "Invalid duplicated value in enumeration 'x'",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                a,
                r#","enumerations":[{"name":"e","type":"INT32","values":[1]},{"name":"e","type":"INT32","values":[2]}]"#,
            ),
            "Error adding enumeration. Enumeration with name 'e' already exists in this ArraySchema.",
        ),
        (
            arr(
                true,
                &dim("INT32", "[0,9]", "2"),
                a,
                r#","current_domain":[[0,10]]"#,
            ),
            "This array current domain has ranges past the boundaries of the array schema domain",
        ),
    ];
    for (json, reason) in &cases {
        let m = refused(json);
        assert!(m.contains(reason), "{json}\nexpected: {reason}\ngot: {m}");
    }
}

#[test]
fn dimension_filters_equal_to_the_coords_filters_are_stored_empty() {
    let s = schema(
        r#"{"sparse":true,"coords_filters":"lz4:2","dimensions":[
            {"name":"x","type":"INT32","domain":[0,9],"tile":2,"filters":"lz4:2"},
            {"name":"y","type":"INT32","domain":[0,9],"tile":2,"filters":"none"},
            {"name":"z","type":"INT32","domain":[0,9],"tile":2,"filters":"lz4:3"}],
            "attributes":[]}"#,
    );
    let uses: Vec<bool> = s.dimensions.iter().map(|d| d.uses_coords_filters).collect();
    assert_eq!(uses, [true, true, false]);
    assert_eq!(spec::to_spec(&s.dimensions[1].filters), "lz4:2");
}

#[test]
fn own_dimension_filters_equal_to_the_coords_filters_are_marked() {
    let s = schema(
        r#"{"sparse":true,"coords_filters":"lz4:2","dimensions":[
            {"name":"x","type":"INT32","domain":[0,9],"tile":2,"filters":{"filters":"lz4:2","own":true}},
            {"name":"y","type":"INT32","domain":[0,9],"tile":2}],
            "attributes":[]}"#,
    );
    assert!(!s.dimensions[0].uses_coords_filters);
    assert!(s.dimensions[1].uses_coords_filters);
    let out = s.to_json();
    assert_eq!(
        out["dimensions"][0]["filters"],
        serde_json::json!({"filters": "lz4:2", "own": true})
    );
    assert_eq!(out["dimensions"][1]["filters"], "lz4:2");
    let again = ArraySchema::from_json_value(&out).unwrap();
    assert_eq!(again.serialize().unwrap(), s.serialize().unwrap());
}
