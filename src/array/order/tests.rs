//! Tests of the orders, the Hilbert curve, the C++ emulations and the checks.

use super::check::*;
use super::cpp::*;
use super::global::*;
use super::hilbert::*;
use super::*;
use crate::array::schema::{ArraySchema, ArrayType, Dimension, Layout, VAR_NUM};
use crate::pipeline::Pipeline;

/// A fixed-size dimension of `datatype` over `[lo, hi]` with an optional extent.
pub(crate) fn dim(
    name: &str,
    datatype: Datatype,
    lo: &[u8],
    hi: &[u8],
    extent: Option<&[u8]>,
) -> Dimension {
    Dimension {
        name: name.into(),
        datatype,
        cell_val_num: 1,
        filters: Pipeline::new(),
        uses_coords_filters: true,
        domain: Some((lo.to_vec(), hi.to_vec())),
        tile_extent: extent.map(<[u8]>::to_vec),
    }
}

/// A string dimension.
pub(crate) fn str_dim(name: &str) -> Dimension {
    Dimension {
        name: name.into(),
        datatype: Datatype::StringAscii,
        cell_val_num: VAR_NUM,
        filters: Pipeline::new(),
        uses_coords_filters: true,
        domain: None,
        tile_extent: None,
    }
}

/// A sparse schema over `dims` with no attributes.
pub(crate) fn schema(dims: Vec<Dimension>, tile_order: Layout, cell_order: Layout) -> ArraySchema {
    ArraySchema {
        name: "__test".into(),
        version: 22,
        allows_dups: false,
        array_type: ArrayType::Sparse,
        tile_order,
        cell_order,
        capacity: 10_000,
        coords_filters: Pipeline::new(),
        offsets_filters: Pipeline::new(),
        validity_filters: Pipeline::new(),
        dimensions: dims,
        attributes: Vec::new(),
        labels: Vec::new(),
        enumerations: Vec::new(),
        loaded_enumerations: Vec::new(),
        current_domain: None,
    }
}

fn i32s(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn grid_2d(tile_order: Layout, cell_order: Layout) -> ArraySchema {
    let (lo, hi, e) = (0i32.to_le_bytes(), 9i32.to_le_bytes(), 5i32.to_le_bytes());
    schema(
        vec![
            dim("x", Datatype::Int32, &lo, &hi, Some(&e)),
            dim("y", Datatype::Int32, &lo, &hi, Some(&e)),
        ],
        tile_order,
        cell_order,
    )
}

#[test]
fn hilbert_values_match_tiledbs_unit_test() {
    // tiledb/sm/misc/test/unit_hilbert.cc
    for (c, want) in [
        ([2, 3], 9),
        ([0, 0], 0),
        ([0, 3], 5),
        ([3, 0], 15),
        ([5, 4], 35),
        ([4, 2], 30),
    ] {
        assert_eq!(coords_to_hilbert(&mut c.clone(), 4), want, "{c:?}");
    }
    for (c, want) in [
        ([0, 0, 0], 0),
        ([0, 0, 1], 1),
        ([0, 1, 0], 3),
        ([1, 0, 0], 7),
    ] {
        assert_eq!(coords_to_hilbert(&mut c.clone(), 4), want, "{c:?}");
    }
    assert_eq!(hilbert_bits(3).unwrap(), 21);
    assert_eq!(hilbert_bits(1).unwrap(), 63);
    assert!(hilbert_bits(16).is_err());
}

#[test]
fn hilbert_order_of_tiledbs_cppapi_example() {
    // test/src/unit-cppapi-hilbert.cc: d1 [0, 100], d2 [0, 200]; global order a = 2, 3, 4, 1.
    let s = schema(
        vec![
            dim(
                "d1",
                Datatype::Int32,
                &0i32.to_le_bytes(),
                &100i32.to_le_bytes(),
                None,
            ),
            dim(
                "d2",
                Datatype::Int32,
                &0i32.to_le_bytes(),
                &200i32.to_le_bytes(),
                None,
            ),
        ],
        Layout::RowMajor,
        Layout::Hilbert,
    );
    let (d1, d2) = (i32s(&[1, 1, 4, 5]), i32s(&[1, 3, 2, 4]));
    let coords = [DimCoords::Fixed(&d1), DimCoords::Fixed(&d2)];
    assert_eq!(global_order(&s, &coords).unwrap(), [1, 0, 3, 2]);
}

#[test]
fn row_and_col_major_orders_go_tile_by_tile() {
    let (x, y) = (i32s(&[0, 0, 6, 3]), i32s(&[7, 2, 1, 3]));
    let coords = [DimCoords::Fixed(&x), DimCoords::Fixed(&y)];
    let rr = grid_2d(Layout::RowMajor, Layout::RowMajor);
    assert_eq!(global_order(&rr, &coords).unwrap(), [1, 3, 0, 2]);
    let cc = grid_2d(Layout::ColMajor, Layout::ColMajor);
    assert_eq!(global_order(&cc, &coords).unwrap(), [1, 3, 2, 0]);
    // Without extents, only the cell order counts.
    let mut plain = grid_2d(Layout::RowMajor, Layout::ColMajor);
    for d in &mut plain.dimensions {
        d.tile_extent = None;
    }
    assert_eq!(global_order(&plain, &coords).unwrap(), [2, 1, 3, 0]);
}

#[test]
fn strings_compare_as_signed_chars() {
    // The order TileDB 2.30 wrote these in (verified with TileDB-Py 0.36.1).
    let vals: [&[u8]; 8] = [b"a", b"\x80", b"\xff", b"b", b"\x7f", b"", b"a\x90", b"ab"];
    let mut offsets = Vec::new();
    let mut data = Vec::new();
    for v in vals {
        offsets.push(data.len() as u64);
        data.extend_from_slice(v);
    }
    let s = schema(vec![str_dim("s")], Layout::RowMajor, Layout::RowMajor);
    let coords = [DimCoords::Var {
        offsets: &offsets,
        data: &data,
    }];
    assert_eq!(global_order(&s, &coords).unwrap(), [5, 1, 2, 0, 6, 7, 3, 4]);
    // Hilbert values of strings: the first 8 bytes, each sign-extended.
    let d = str_dim("s");
    assert_eq!(map_to_uint64(&d, b"a", 63).unwrap(), 0x61 << 55);
    assert_eq!(map_to_uint64(&d, b"\x80", 63).unwrap(), 1 << 62);
    // A high byte sign-extends over the bytes before it: "a\x80" maps like "\xff\x80".
    assert_eq!(map_to_uint64(&d, b"a\x80", 63).unwrap(), 0xff80 << 47);
}

#[test]
fn duplicates_and_domain_errors_use_tiledbs_words() {
    let x_dim = dim(
        "x",
        Datatype::Int32,
        &0i32.to_le_bytes(),
        &100i32.to_le_bytes(),
        Some(&10i32.to_le_bytes()),
    );
    let y_dim = dim(
        "y",
        Datatype::Float64,
        &(-5f64).to_le_bytes(),
        &5f64.to_le_bytes(),
        Some(&1f64.to_le_bytes()),
    );
    let mut s = schema(vec![x_dim, y_dim], Layout::RowMajor, Layout::RowMajor);
    let (x, y) = (i32s(&[3, 1, 3]), f64s(&[0.5, -2.25, 0.5]));
    let coords = [DimCoords::Fixed(&x), DimCoords::Fixed(&y)];
    let order = global_order(&s, &coords).unwrap();
    assert_eq!(order, [1, 0, 2]);
    let e = check_duplicates(&s, &coords, &order).unwrap_err();
    assert_eq!(
        e.message(),
        "Duplicate coordinates (3, 0.5) are not allowed"
    );
    s.allows_dups = true;
    check_duplicates(&s, &coords, &order).unwrap();

    let (x, y) = (i32s(&[3, 101]), f64s(&[0.5, -2.25]));
    let e = global_order(&s, &[DimCoords::Fixed(&x), DimCoords::Fixed(&y)]).unwrap_err();
    assert_eq!(
        e.message(),
        "Coordinate 101 is out of domain bounds [0, 100] on dimension 'x'"
    );
    let (x, y) = (i32s(&[3, 1]), f64s(&[0.1, -7.25]));
    let e = check_domain(&s, &[DimCoords::Fixed(&x), DimCoords::Fixed(&y)]).unwrap_err();
    assert_eq!(
        e.message(),
        "Coordinate -7.25 is out of domain bounds [-5, 5] on dimension 'y'"
    );
    let y = f64s(&[0.1, f64::NAN]);
    let e = check_domain(&s, &[DimCoords::Fixed(&x), DimCoords::Fixed(&y)]).unwrap_err();
    assert!(e.message().starts_with("Coordinate nan is out of"), "{e}");
}

#[test]
fn current_domain_bounds_writes() {
    use crate::array::schema::Range;
    let mut s = schema(
        vec![
            dim(
                "x",
                Datatype::Int64,
                &0i64.to_le_bytes(),
                &100i64.to_le_bytes(),
                None,
            ),
            str_dim("s"),
        ],
        Layout::RowMajor,
        Layout::RowMajor,
    );
    s.current_domain = Some(vec![
        Range::Fixed(0i64.to_le_bytes().to_vec(), 50i64.to_le_bytes().to_vec()),
        Range::Var(b"a".to_vec(), b"m".to_vec()),
    ]);
    let x: Vec<u8> = [3i64, 50].iter().flat_map(|v| v.to_le_bytes()).collect();
    let (offsets, data) = ([0u64, 1], b"ab\x7f");
    let ok = [
        DimCoords::Fixed(&x),
        DimCoords::Var {
            offsets: &offsets,
            data: &data[..2],
        },
    ];
    check_domain(&s, &ok).unwrap();
    let x2: Vec<u8> = [3i64, 70].iter().flat_map(|v| v.to_le_bytes()).collect();
    let e = check_domain(&s, &[DimCoords::Fixed(&x2), ok[1]]).unwrap_err();
    assert_eq!(
        e.message(),
        "Cells are written outside of the defined current domain: coordinate 70 is outside \
         [0, 50] on dimension 'x'"
    );
    // Strings against the current domain compare as unsigned bytes: "\x85" lies in
    // ["\x01", "\x90"] (as a signed char it would be below "\x01").
    s.current_domain.as_mut().unwrap()[1] = Range::Var(b"\x01".to_vec(), b"\x90".to_vec());
    let high = [
        DimCoords::Fixed(&x),
        DimCoords::Var {
            offsets: &[0, 1],
            data: b"\x85\x90",
        },
    ];
    check_domain(&s, &high).unwrap();
    let low = [
        DimCoords::Fixed(&x),
        DimCoords::Var {
            offsets: &[0, 1],
            data: b"\x85\x91",
        },
    ];
    assert!(check_domain(&s, &low).is_err());
}

#[test]
fn negative_zero_equals_zero_but_duplicates_stay_adjacent() {
    let y_dim = dim(
        "y",
        Datatype::Float64,
        &(-5f64).to_le_bytes(),
        &5f64.to_le_bytes(),
        None,
    );
    let x_dim = dim(
        "x",
        Datatype::Int32,
        &0i32.to_le_bytes(),
        &9i32.to_le_bytes(),
        None,
    );
    let s = schema(vec![y_dim, x_dim], Layout::RowMajor, Layout::RowMajor);
    let (y, x) = (f64s(&[0.0, -0.0, 0.0, -0.0]), i32s(&[5, 1, 5, 9]));
    let coords = [DimCoords::Fixed(&y), DimCoords::Fixed(&x)];
    // y equal everywhere, so x decides: (−0, 1), (0, 5), (0, 5), (−0, 9).
    let order = global_order(&s, &coords).unwrap();
    assert_eq!(order, [1, 0, 2, 3]);
    assert!(check_duplicates(&s, &coords, &order).is_err());
}

#[test]
fn global_order_writes_are_checked() {
    let s = grid_2d(Layout::RowMajor, Layout::RowMajor);
    let (x, y) = (i32s(&[0, 3, 0]), i32s(&[2, 3, 7]));
    let sorted = [DimCoords::Fixed(&x), DimCoords::Fixed(&y)];
    check_global_order(&s, &sorted, None).unwrap();
    let (x2, y2) = (i32s(&[0, 0]), i32s(&[7, 2]));
    let e =
        check_global_order(&s, &[DimCoords::Fixed(&x2), DimCoords::Fixed(&y2)], None).unwrap_err();
    assert_eq!(
        e.message(),
        "Write failed; Coordinates (0, 7) succeed (0, 2) in the global order due to writes across tiles"
    );
    let (px, py) = (i32s(&[1]), i32s(&[2]));
    let prev = [DimCoords::Fixed(&px), DimCoords::Fixed(&py)];
    let e = check_global_order(&s, &sorted, Some(&prev)).unwrap_err();
    assert_eq!(
        e.message(),
        "Write failed; Coordinate (0, 2) comes before last written coordinate in the global order"
    );
}

#[test]
fn shapes_are_checked() {
    let s = grid_2d(Layout::RowMajor, Layout::RowMajor);
    let (x, y) = (i32s(&[0, 3]), i32s(&[2]));
    let e = global_order(&s, &[DimCoords::Fixed(&x), DimCoords::Fixed(&y)]).unwrap_err();
    assert_eq!(e.message(), "dimension y has 1 coordinates, dimension x 2");
    let e = global_order(&s, &[DimCoords::Fixed(&x)]).unwrap_err();
    assert!(e.message().contains("1 coordinate buffers"), "{e}");
    let e = global_order(&s, &[DimCoords::Fixed(&x), DimCoords::Fixed(&x[..7])]).unwrap_err();
    assert!(e.message().contains("not whole 4-byte"), "{e}");
    let t = schema(vec![str_dim("s")], Layout::RowMajor, Layout::RowMajor);
    let e = global_order(
        &t,
        &[DimCoords::Var {
            offsets: &[0, 3, 2],
            data: b"abc",
        }],
    )
    .unwrap_err();
    assert!(e.message().contains("below the previous offset"), "{e}");
}

#[test]
fn packed_keys_sort_like_the_comparator() {
    let mut rng = crate::codecs::test_data::Rng(0x9E37_79B9_7F4A_7C15);
    let layouts = [Layout::RowMajor, Layout::ColMajor, Layout::Hilbert];
    let mut packed = 0;
    for case in 0..300 {
        let ndim = 1 + rng.below(3) as usize;
        let mut dims = Vec::new();
        let mut cols: Vec<Vec<u8>> = Vec::new();
        let n = 1 + rng.below(200) as usize;
        for j in 0..ndim {
            let name = format!("d{j}");
            let ext =
                |r: &mut crate::codecs::test_data::Rng, v: Vec<u8>| (r.below(4) > 0).then_some(v);
            match rng.below(4) {
                0 => {
                    let lo = -(rng.below(1000) as i64);
                    let hi = lo + rng.below(2000) as i64;
                    let extent = 1 + rng.below(50) as i64;
                    let e = ext(&mut rng, extent.to_le_bytes().to_vec());
                    dims.push(dim(
                        &name,
                        Datatype::Int64,
                        &lo.to_le_bytes(),
                        &hi.to_le_bytes(),
                        e.as_deref(),
                    ));
                    let span = (hi - lo + 1) as u64;
                    cols.push(
                        (0..n)
                            .flat_map(|_| (lo + rng.below(span) as i64).to_le_bytes())
                            .collect(),
                    );
                }
                1 => {
                    let e = ext(&mut rng, 7u16.to_le_bytes().to_vec());
                    dims.push(dim(
                        &name,
                        Datatype::Uint16,
                        &3u16.to_le_bytes(),
                        &u16::MAX.to_le_bytes(),
                        e.as_deref(),
                    ));
                    cols.push(
                        (0..n)
                            .flat_map(|_| (3 + rng.below(65533) as u16).to_le_bytes())
                            .collect(),
                    );
                }
                2 => {
                    let e = ext(&mut rng, 0.25f64.to_le_bytes().to_vec());
                    dims.push(dim(
                        &name,
                        Datatype::Float64,
                        &(-2f64).to_le_bytes(),
                        &2f64.to_le_bytes(),
                        e.as_deref(),
                    ));
                    let vals = [-0.0, 0.0, 1.5, -2.0, 2.0, 0.125];
                    cols.push(
                        (0..n)
                            .flat_map(|_| {
                                let v = if rng.below(2) == 0 {
                                    vals[rng.below(6) as usize]
                                } else {
                                    (rng.below(4001) as f64 - 2000.0) / 1000.0
                                };
                                v.to_le_bytes()
                            })
                            .collect(),
                    );
                }
                _ => {
                    let e = ext(&mut rng, 1.5f32.to_le_bytes().to_vec());
                    dims.push(dim(
                        &name,
                        Datatype::Float32,
                        &(-10f32).to_le_bytes(),
                        &10f32.to_le_bytes(),
                        e.as_deref(),
                    ));
                    cols.push(
                        (0..n)
                            .flat_map(|_| ((rng.below(81) as f32 - 40.0) / 4.0).to_le_bytes())
                            .collect(),
                    );
                }
            }
        }
        let tile_order = layouts[rng.below(2) as usize];
        let cell_order = layouts[rng.below(3) as usize];
        let s = schema(dims, tile_order, cell_order);
        let coords: Vec<DimCoords<'_>> = cols.iter().map(|c| DimCoords::Fixed(c)).collect();
        let cells = Cells::new(&s, &coords).unwrap();
        let order = Order::new(&cells).unwrap();
        let want = sort_compared(&order);
        let got = global_order(&s, &coords).unwrap();
        assert_eq!(got, want, "case {case}");
        if order.packed_key().is_some_and(|k| k.width <= 128) {
            packed += 1;
        }
    }
    assert!(packed > 150, "{packed} cases took the packed path");
}

#[test]
fn std_sort_and_heap_sort_arrange_ties_as_libstdcxx() {
    // Permutations g++ 12's std::sort and std::partial_sort(b, e, e) gave indices sorted
    // by these keys (many ties).
    let keys = [
        2u64, 1, 3, 0, 0, 0, 2, 0, 1, 0, 0, 3, 3, 0, 1, 0, 3, 0, 0, 1, 0, 3, 0, 1, 0, 1, 2, 3, 1,
        0, 2, 1, 0, 1, 2, 0, 0, 0, 1, 3,
    ];
    let sorted = [
        32u64, 24, 22, 20, 18, 17, 29, 15, 13, 10, 9, 35, 7, 36, 5, 4, 3, 37, 33, 1, 31, 28, 25,
        38, 23, 19, 14, 8, 26, 30, 34, 6, 0, 21, 27, 16, 12, 11, 2, 39,
    ];
    let heap_sorted = [
        35u64, 22, 4, 7, 5, 9, 20, 17, 24, 18, 13, 3, 10, 36, 29, 15, 32, 37, 31, 33, 8, 38, 1, 19,
        23, 25, 28, 14, 34, 26, 6, 0, 30, 16, 39, 21, 11, 12, 2, 27,
    ];
    let less = |a: u64, b: u64| keys[a as usize] < keys[b as usize];
    let mut v: Vec<u64> = (0..40).collect();
    std_sort(&mut v, &less);
    assert_eq!(v, sorted);
    let mut v: Vec<u64> = (0..40).collect();
    heap_sort(&mut v, &less);
    assert_eq!(v, heap_sorted);
    let keys = [
        2u64, 2, 1, 1, 1, 2, 1, 1, 1, 0, 0, 2, 0, 0, 2, 1, 2, 1, 1, 2, 1, 1, 2, 0, 0,
    ];
    let less = |a: u64, b: u64| keys[a as usize] < keys[b as usize];
    let mut v: Vec<u64> = (0..25).collect();
    std_sort(&mut v, &less);
    let want = [
        12u64, 24, 23, 13, 10, 9, 7, 2, 21, 20, 18, 17, 15, 3, 4, 8, 6, 14, 0, 16, 11, 19, 5, 22, 1,
    ];
    assert_eq!(v, want);
    let mut v: Vec<u64> = (0..25).collect();
    heap_sort(&mut v, &less);
    let want = [
        24u64, 9, 23, 10, 12, 13, 7, 8, 18, 20, 4, 21, 15, 3, 17, 2, 6, 16, 1, 19, 22, 0, 5, 11, 14,
    ];
    assert_eq!(v, want);
}

#[test]
fn tiledb_order_is_a_sorted_permutation_at_any_concurrency() {
    let mut s = grid_2d(Layout::RowMajor, Layout::RowMajor);
    s.allows_dups = true;
    let x = i32s(&[1, 1, 1, 1, 1, 1, 0, 0, 9, 9, 1, 1]);
    let y = i32s(&[2, 2, 2, 2, 2, 2, 0, 0, 9, 9, 2, 2]);
    let coords = [DimCoords::Fixed(&x), DimCoords::Fixed(&y)];
    let stable = global_order(&s, &coords).unwrap();
    assert_eq!(stable, [6, 7, 0, 1, 2, 3, 4, 5, 10, 11, 8, 9]);
    for c in [1, 2, 3, 4, 8, 64] {
        let p = global_order_as_tiledb(&s, &coords, c).unwrap();
        let key = |i: u64| (x[4 * i as usize], y[4 * i as usize]);
        assert!(p.windows(2).all(|w| key(w[0]) <= key(w[1])), "{c}: {p:?}");
        let mut sorted = p.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..12).collect::<Vec<u64>>());
    }
    // Without ties TileDB's order is the order.
    let (x, y) = (i32s(&[0, 0, 6, 3]), i32s(&[7, 2, 1, 3]));
    let coords = [DimCoords::Fixed(&x), DimCoords::Fixed(&y)];
    assert_eq!(
        global_order_as_tiledb(&s, &coords, 2).unwrap(),
        [1, 3, 0, 2]
    );
}

#[test]
fn duplicates_hidden_between_signed_zeros_are_found() {
    let y_dim = dim(
        "y",
        Datatype::Float64,
        &(-5f64).to_le_bytes(),
        &5f64.to_le_bytes(),
        None,
    );
    let s = schema(vec![y_dim], Layout::RowMajor, Layout::RowMajor);
    let y = f64s(&[0.0, -0.0, 0.0]);
    let coords = [DimCoords::Fixed(&y)];
    let e = check_duplicates(&s, &coords, &[0, 1, 2]).unwrap_err();
    assert_eq!(e.message(), "Duplicate coordinates (0) are not allowed");
}

#[test]
fn cpp_number_output() {
    assert_eq!(cpp_general(0.5, 6), "0.5");
    assert_eq!(cpp_general(1234567.5, 6), "1.23457e+06");
    assert_eq!(cpp_general(123456.0, 6), "123456");
    assert_eq!(cpp_general(0.0001, 6), "0.0001");
    assert_eq!(cpp_general(0.00001, 6), "1e-05");
    assert_eq!(cpp_general(0.1, 16), "0.1");
    assert_eq!(cpp_general(1.0 / 3.0, 16), "0.3333333333333333");
    assert_eq!(cpp_general(-5.0, 16), "-5");
    assert_eq!(cpp_general(1e100, 6), "1e+100");
    assert_eq!(cpp_f64_to_u64(f64::NAN), 1 << 63);
    assert_eq!(cpp_f64_to_u64(9.3e18), 9_300_000_000_000_000_000);
}

#[test]
fn reader_comparison_is_numeric_and_unsigned_for_strings() {
    use std::cmp::Ordering;
    assert_eq!(
        compare(Datatype::Int32, &(-1i32).to_le_bytes(), &1i32.to_le_bytes()),
        Ordering::Less
    );
    assert_eq!(
        compare(
            Datatype::Float64,
            &2.5f64.to_le_bytes(),
            &(-1f64).to_le_bytes()
        ),
        Ordering::Greater
    );
    assert_eq!(compare(Datatype::StringAscii, b"ab", b"b"), Ordering::Less);
    assert_eq!(compare(Datatype::StringAscii, b"a", b"ab"), Ordering::Less);
}

/// The comparisons of TileDB 2.30 that differ by code path, side by side.
#[test]
fn tiledb_compares_differently_by_path() {
    // Strings: the writer's sort (signed char) puts "\x80" first, the reader's merge, MBRs and
    // current domains (std::string, unsigned) put "a" first.
    assert!(cmp_strings(b"\x80", b"a", StringOrder::SignedChars).is_lt());
    assert!(cmp_strings(b"\x80", b"a", StringOrder::UnsignedBytes).is_gt());
    assert!(compare(Datatype::StringAscii, b"\x80", b"a").is_gt());
    let s = Kind::Str;
    assert!(s.cmp(b"\x80", b"a").is_lt());
    // Both take a shorter common prefix first.
    assert!(cmp_strings(b"a", b"a\x80", StringOrder::SignedChars).is_lt());
    assert!(cmp_strings(b"a", b"a\x80", StringOrder::UnsignedBytes).is_lt());
    // NaN: C++ `<` is false both ways, so the readers find NaN equal to anything ...
    let (nan, one) = (f64::NAN.to_le_bytes(), 1f64.to_le_bytes());
    assert!(compare(Datatype::Float64, &nan, &one).is_eq());
    assert!(!coord_less(Datatype::Float64, &nan, &one));
    assert!(!coord_less(Datatype::Float64, &one, &nan));
    // ... the writers' sort key would put it above +inf, but the writers refuse NaN first.
    let inf = f64::INFINITY.to_le_bytes();
    assert!(Kind::F64.cmp(&nan, &inf).is_gt());
    let s = schema(
        vec![dim("x", Datatype::Float64, &0f64.to_le_bytes(), &one, None)],
        Layout::RowMajor,
        Layout::RowMajor,
    );
    let e = check_domain(&s, &[DimCoords::Fixed(&nan)]).unwrap_err();
    assert!(e.message().contains("out of domain bounds"), "{e}");
    // -0.0 equals 0.0 on every path.
    let (nz, z) = ((-0f64).to_le_bytes(), 0f64.to_le_bytes());
    assert!(compare(Datatype::Float64, &nz, &z).is_eq());
    assert!(Kind::F64.cmp(&nz, &z).is_eq());
    assert!(!coord_less(Datatype::Float64, &nz, &z) && !coord_less(Datatype::Float64, &z, &nz));
}

/// TileDB 2.30's tile index, as TileDB-Py 0.36.1 orders cells by it (sparse arrays, 2-D with
/// a second INT32 dimension [0, 9] of extent 5, row-major; the order of the cells it stored).
#[test]
fn tile_index_is_tiledbs_dimension_tile_idx() {
    let t = |dt: Datatype, v: &[u8], lo: &[u8], e: &[u8]| tile_index(dt, v, lo, e);
    // int8 [-100, 100], extent 50: (7, 0) is stored before (6, 9), so 6 and 7 share a tile
    // (unsigned 8-bit arithmetic, no promotion to int: that would put 6 in tile -3 and 7 in
    // -2).
    let (lo, e) = ((-100i8).to_le_bytes(), 50i8.to_le_bytes());
    let i8t = |v: i8| t(Datatype::Int8, &v.to_le_bytes(), &lo, &e);
    assert_eq!(
        [-100, -51, -50, -1, 0, 6, 7, 49, 50, 100].map(i8t),
        [0, 0, 1, 1, 2, 2, 2, 2, 3, 4]
    );
    // uint64 and int64 over their whole width.
    let u = |v: u64| v.to_le_bytes();
    assert_eq!(t(Datatype::Uint64, &u(u64::MAX), &u(0), &u(1 << 62)), 3);
    let i = |v: i64| v.to_le_bytes();
    assert_eq!(
        t(Datatype::Int64, &i(i64::MAX), &i(i64::MIN), &i(1 << 62)),
        3
    );
    assert_eq!(t(Datatype::DatetimeDay, &i(-5), &i(-10), &i(2)), 2);
    // float64 [0, 1e30], extent 1: cells (1e25, 9), (3.0, 0) in one fragment, (1.0, 0),
    // (2e25, 3) in another are stored and read back (order 'G' and 'U') as 2e25, 1e25,
    // 1.0, 3.0: a quotient past 2^64 converts to tile 0, not to the largest index.
    let (lo, e) = (0f64.to_le_bytes(), 1f64.to_le_bytes());
    let f = |v: f64| t(Datatype::Float64, &v.to_le_bytes(), &lo, &e);
    assert_eq!([2e25, 1e25, 1.0, 3.0, 2.5].map(f), [0, 0, 1, 3, 2]);
    // FLOAT32 divides in f32: (0.5 - 0.1) / 0.1 is 4.0 in f32, 3.9999999 in f64.
    let tenth = 0.1f32.to_le_bytes();
    assert_eq!(
        t(Datatype::Float32, &0.5f32.to_le_bytes(), &tenth, &tenth),
        4
    );
    // Strings have no tiles.
    assert_eq!(t(Datatype::StringAscii, b"zz", b"a", b"b"), 0);
}
