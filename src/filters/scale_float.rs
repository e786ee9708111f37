//! SCALE_FLOAT (15): floats stored as scaled, rounded integers (docs/FORMAT.md §5.17).
//!
//! The input element is `f32` or `f64`, chosen by the *size* of the filter data type (4 or 8
//! bytes; a 4- or 8-byte integer type is reinterpreted as float bits). The output element is
//! `i8`, `i16`, `i32` or `i64` by `byte_width`. Own metadata: `u32 num_parts`, then per part
//! `u32 new_length = (L / float_size) · byte_width`, followed by the forwarded input metadata.
//!
//! Forward, per value: `w = round((x − offset) / scale)` in the float type (for `f32` the
//! offset and scale are first rounded to `f32`), rounding half away from zero, then converted
//! to the integer type as TileDB's x86-64 build does it (`cvttsd2si`): a NaN or out-of-range
//! value becomes `i32::MIN` / `i64::MIN`, and 1- and 2-byte outputs keep the low bits of the
//! 32-bit conversion (so 300 becomes 44 and NaN becomes 0).
//!
//! Reverse, per value: `x = F(scale · f64(F(w)) + offset)` computed in `f64`, where `F` is the
//! float type. Note the integer is first converted to `F` (this only matters for `f32` with
//! `|w| > 2^24`, which TileDB's own forward never produces).
//!
//! Policies:
//! * A part whose length is not a multiple of the float size is refused on write: TileDB
//!   drops the trailing bytes and records the shortened length, so the tile would read back
//!   with the trailing bytes missing, and no other encoding TileDB can read exists.
//! * More than one data part is refused on write: TileDB's forward corrupts every part after
//!   the first, and its reverse cannot read several parts (the second part fails when this is
//!   the first filter, and every part is decoded from the same input offset otherwise). A
//!   chunk never reaches this filter as more than one part.
//! * On read, a part count above 1, a recorded length that is not a multiple of the byte
//!   width or that exceeds the data is reported as corrupt data.

use crate::engine::stage::{DataFlow, FwdIn, FwdOut, MdFlow, RevIn, RevOut, StageCtx};
use crate::error::{Error, Result};
use crate::filters::config::Filter;
use crate::filters::config::ScaleFloatOptions;
use crate::filters::registry::{FilterDescriptor, OptionsLayout, wrong_filter};
use crate::format::byte_reader::ByteReader;
use crate::format::filter_type::FilterType;
use crate::mem::OutBuf;

/// The float size and the integer width of this stage, or an error.
fn widths(o: &ScaleFloatOptions, ctx: &StageCtx<'_>) -> Result<(usize, usize)> {
    let fs = ctx.datatype.size();
    if !matches!(fs, 4 | 8) {
        return Err(Error::invalid(format!(
            "SCALE_FLOAT: datatype {} of {fs} bytes is neither a 4- nor an 8-byte float",
            ctx.datatype.name()
        )));
    }
    match o.byte_width {
        1 | 2 | 4 | 8 => Ok((fs, o.byte_width as usize)),
        w => Err(Error::invalid(format!(
            "SCALE_FLOAT: byte width {w} is not 1, 2, 4 or 8"
        ))),
    }
}

/// x86-64 `cvttsd2si` with a 32-bit destination: truncation, or `i32::MIN` (the "integer
/// indefinite" value) for NaN and out-of-range inputs.
fn cvtt_i32(v: f64) -> i32 {
    if v > -2_147_483_649.0 && v < 2_147_483_648.0 {
        v as i32
    } else {
        i32::MIN
    }
}

/// x86-64 `cvttsd2si` with a 64-bit destination: truncation, or `i64::MIN` for NaN and
/// out-of-range inputs.
fn cvtt_i64(v: f64) -> i64 {
    // -2^63 is exactly representable; the next double below it truncates out of range.
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&v) {
        v as i64
    } else {
        i64::MIN
    }
}

/// Stores the rounded value `v` as TileDB's x86-64 build converts it to a `w`-byte integer.
fn store(w: usize, v: f64, dst: &mut [u8]) {
    match w {
        1 => dst[0] = cvtt_i32(v) as u8,
        2 => dst.copy_from_slice(&(cvtt_i32(v) as i16).to_le_bytes()),
        4 => dst.copy_from_slice(&cvtt_i32(v).to_le_bytes()),
        _ => dst.copy_from_slice(&cvtt_i64(v).to_le_bytes()),
    }
}

/// Loads a little-endian signed integer of `src.len()` (1, 2, 4 or 8) bytes.
fn load(src: &[u8]) -> i64 {
    match *src {
        [a] => i64::from(a as i8),
        [a, b] => i64::from(i16::from_le_bytes([a, b])),
        [a, b, c, d] => i64::from(i32::from_le_bytes([a, b, c, d])),
        _ => {
            let mut b = [0u8; 8];
            b.copy_from_slice(src);
            i64::from_le_bytes(b)
        }
    }
}

/// Encodes one part of floats (a multiple of `fs` bytes) into `dst`.
fn encode(o: &ScaleFloatOptions, fs: usize, w: usize, src: &[u8], dst: &mut [u8]) {
    if fs == 4 {
        let (off, scale) = (o.offset as f32, o.factor as f32);
        for (x, d) in src.chunks_exact(4).zip(dst.chunks_exact_mut(w)) {
            let x = f32::from_le_bytes([x[0], x[1], x[2], x[3]]);
            store(w, f64::from(((x - off) / scale).round()), d);
        }
    } else {
        for (x, d) in src.chunks_exact(8).zip(dst.chunks_exact_mut(w)) {
            let mut b = [0u8; 8];
            b.copy_from_slice(x);
            let x = f64::from_le_bytes(b);
            store(w, ((x - o.offset) / o.factor).round(), d);
        }
    }
}

/// Decodes one part of `w`-byte integers (a multiple of `w` bytes) into `dst`.
fn decode(o: &ScaleFloatOptions, fs: usize, w: usize, src: &[u8], dst: &mut OutBuf<'_>) {
    if fs == 4 {
        dst.put_arrays(src.chunks_exact(w).map(|v| {
            let elem = load(v) as f32;
            ((o.factor * f64::from(elem) + o.offset) as f32).to_le_bytes()
        }));
    } else {
        dst.put_arrays(src.chunks_exact(w).map(|v| {
            let elem = load(v) as f64;
            (o.factor * elem + o.offset).to_le_bytes()
        }));
    }
}

/// Forward: own block of output part lengths; one output data part per input data part.
pub fn forward(
    o: &ScaleFloatOptions,
    ctx: &mut StageCtx<'_>,
    input: FwdIn<'_>,
    out: FwdOut<'_>,
) -> Result<DataFlow> {
    let (fs, w) = widths(o, ctx)?;
    if input.data.count() > 1 {
        return Err(Error::invalid(format!(
            "SCALE_FLOAT: {} data parts cannot be encoded in a form TileDB reads back \
             (only one part is supported)",
            input.data.count()
        )));
    }
    let mut new_lens = [0u32; 1];
    for (k, part) in input.data.iter().enumerate() {
        if part.len() % fs != 0 {
            return Err(Error::invalid(format!(
                "SCALE_FLOAT: part of {} bytes is not a multiple of the {fs}-byte float; \
                 TileDB cannot read back the trailing {} bytes",
                part.len(),
                part.len() % fs
            )));
        }
        new_lens[k] = u32::try_from(part.len() / fs * w).map_err(|_| {
            Error::invalid(format!(
                "SCALE_FLOAT: output part of {} bytes exceeds the 4 GiB limit of its length field",
                part.len() / fs * w
            ))
        })?;
    }
    let count = input.data.count();
    let own = out.md.push_uninit(4 + 4 * count);
    own[..4].copy_from_slice(&(count as u32).to_le_bytes());
    for (k, len) in new_lens[..count].iter().enumerate() {
        own[4 + 4 * k..8 + 4 * k].copy_from_slice(&len.to_le_bytes());
    }
    out.md.extend_forwarded(input.md);
    for (part, &len) in input.data.iter().zip(&new_lens) {
        let dst = out.data.push_uninit(len as usize);
        encode(o, fs, w, part, dst);
    }
    Ok(DataFlow::Written)
}

/// Reverse: restores the floats of the recorded part; the rest of the metadata goes to the
/// previous stage.
pub fn reverse(
    o: &ScaleFloatOptions,
    ctx: &mut StageCtx<'_>,
    input: RevIn<'_>,
    mut out: RevOut<'_>,
) -> Result<(MdFlow, DataFlow)> {
    let (fs, w) = widths(o, ctx)?;
    let mut r = ByteReader::new(input.md, "SCALE_FLOAT metadata");
    let count = r.u32()?;
    if count > 1 {
        return Err(Error::corrupt(format!(
            "SCALE_FLOAT: {count} parts recorded; TileDB writes and reads at most one"
        )));
    }
    let len = if count == 1 { r.u32()? as usize } else { 0 };
    if len % w != 0 {
        return Err(Error::corrupt(format!(
            "SCALE_FLOAT: recorded part of {len} bytes is not a multiple of the {w}-byte integer"
        )));
    }
    if len > input.data.len() {
        return Err(Error::corrupt(format!(
            "SCALE_FLOAT: part of {len} bytes recorded but only {} bytes of data",
            input.data.len()
        )));
    }
    let mut dst = out.data.alloc(len / w * fs)?;
    decode(o, fs, w, &input.data[..len], &mut dst);
    Ok((MdFlow::Rest(r.position()), DataFlow::Written))
}

/// The ScaleFloat filter's descriptor (see [`crate::filters::registry`]).
pub const DESCRIPTOR: FilterDescriptor = FilterDescriptor {
    filter_type: FilterType::ScaleFloat,
    default: Filter::ScaleFloat(ScaleFloatOptions {
        factor: 1.0,
        offset: 0.0,
        byte_width: 8,
    }),
    positional: None,
    layout: OptionsLayout::ScaleFloat,
    forward: |f, ctx, input, out| match f {
        Filter::ScaleFloat(o) => forward(o, ctx, input, out),
        other => Err(wrong_filter(FilterType::ScaleFloat, other)),
    },
    reverse: |f, ctx, input, out| match f {
        Filter::ScaleFloat(o) => reverse(o, ctx, input, out),
        other => Err(wrong_filter(FilterType::ScaleFloat, other)),
    },
    fixed_growth: |n| n.saturating_mul(2),
    unbounded_on_strings: false,
    reverse_max_ratio: 8,
    encodes_empty_part: true,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::parts::Parts;
    use crate::filters::config::Filter;
    use crate::filters::testing::{forward_one, forward_parts, reverse_one};
    use crate::format::datatype::Datatype;

    use crate::filters::testing::{ErrOnly, to_hex as hex, unhex};

    fn sf(factor: f64, offset: f64, byte_width: u64) -> Filter {
        Filter::ScaleFloat(ScaleFloatOptions {
            factor,
            offset,
            byte_width,
        })
    }

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn f64s(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn encode_with(f: &Filter, t: Datatype, data: &[u8]) -> Vec<u8> {
        let out = forward_one(f, t, t.size() as u64, None, data).unwrap();
        assert_eq!(out.flow, DataFlow::Written);
        assert_eq!(out.data_lens.len(), 1);
        out.data
    }

    /// One filtered chunk written by TileDB 2.30: input cells, chunk metadata, chunk data, and
    /// the cells TileDB itself reads back.
    struct Vector {
        t: Datatype,
        filter: Filter,
        input: &'static str,
        md: &'static str,
        data: &'static str,
        readback: &'static str,
    }

    fn check(v: &Vector) {
        let input = unhex(v.input);
        let f = forward_one(&v.filter, v.t, v.t.size() as u64, None, &input).unwrap();
        assert_eq!(hex(&f.md), v.md.replace(' ', ""), "{} metadata", v.input);
        assert_eq!(hex(&f.data), v.data.replace(' ', ""), "{} data", v.input);
        let r = reverse_one(
            &v.filter,
            v.t,
            v.t.size() as u64,
            &unhex(v.md),
            &unhex(v.data),
            input.len(),
            false,
        )
        .unwrap();
        assert_eq!(
            hex(&r.data),
            v.readback.replace(' ', ""),
            "{} readback",
            v.input
        );
        assert!(r.md.is_empty());
    }

    #[test]
    fn format_md_vector() {
        // docs/FORMAT.md §9.2: SCALE_FLOAT(0.5, 1.0, 1), FLOAT32 [1.0,1.5,2.2,0.0].
        check(&Vector {
            t: Datatype::Float32,
            filter: sf(0.5, 1.0, 1),
            input: "0000803f 0000c03f cdcc0c40 00000000",
            md: "01000000 04000000",
            data: "00 01 02 fe",
            readback: "0000803f 0000c03f 00000040 00000000",
        });
    }

    #[test]
    fn tiledb_2_30_vectors() {
        // Single-chunk tiles written by libtiledb 2.30.0 (TileDB-Py 0.36.1, x86-64), pipeline
        // [SCALE_FLOAT(factor, offset, width)]; `readback` is what TileDB read back.
        let vectors = [
            // f32, (1,0,1): [2.5,-2.5,0.5,-0.5,128,300,-129,1e10,NaN,inf,-inf,127,-128]
            Vector {
                t: Datatype::Float32,
                filter: sf(1.0, 0.0, 1),
                input: "00002040000020c00000003f000000bf0000004300009643000001c3f9021550\
                        0000c07f0000807f000080ff0000fe42000000c3",
                md: "01000000 0d000000",
                data: "03fd01ff802c7f000000007f80",
                readback: "00004040000040c00000803f000080bf000000c3000030420000fe4200000000\
                           0000000000000000000000000000fe42000000c3",
            },
            // f32, (1,0,2): [2.5,-2.5,32768,70000,-40000,1e10,NaN,inf,32767.4]
            Vector {
                t: Datatype::Float32,
                filter: sf(1.0, 0.0, 2),
                input: "00002040000020c00000004700b8884700401cc7f90215500000c07f0000807f\
                        cdfeff46",
                md: "01000000 12000000",
                data: "0300fdff00807011c063000000000000ff7f",
                readback: "00004040000040c0000000c700808b450080c746000000000000000000000000\
                           00feff46",
            },
            // f32, (1,0,4): [2.5,-3.5,3e9,-3e9,NaN,inf,1e10,16777217,123456789]
            Vector {
                t: Datatype::Float32,
                filter: sf(1.0, 0.0, 4),
                input: "00002040000060c05ed0324f5ed032cf0000c07f0000807ff90215500000804b\
                        a379eb4c",
                md: "01000000 24000000",
                data: "03000000fcffffff000000800000008000000080000000800000008000000001\
                       18cd5b07",
                readback: "00004040000080c0000000cf000000cf000000cf000000cf000000cf0000804b\
                           a379eb4c",
            },
            // f32, (1,0,8): [2.5,-3.5,1e19,-1e19,NaN,123456789,3e15,-0.49999997]
            Vector {
                t: Datatype::Float32,
                filter: sf(1.0, 0.0, 8),
                input: "00002040000060c023c70a5f23c70adf0000c07fa379eb4cbf872a59ffffffbe",
                md: "01000000 40000000",
                data: "0300000000000000fcffffffffffffff00000000000000800000000000000080\
                       000000000000008018cd5b0700000000000000f07ba80a000000000000000000",
                readback: "00004040000080c0000000df000000df000000dfa379eb4cbf872a5900000000",
            },
            // f64, (0.1,0,1): [0.1,0.25,0.3,-12.7,100,1000]
            Vector {
                t: Datatype::Float64,
                filter: sf(0.1, 0.0, 1),
                input: "9a9999999999b93f000000000000d03f333333333333d33f66666666666629c0\
                        00000000000059400000000000408f40",
                md: "01000000 06000000",
                data: "01030381e810",
                readback: "9a9999999999b93f343333333333d33f343333333333d33f67666666666629c0\
                           34333333333303c09a9999999999f93f",
            },
            // f64, (0.1,10,2): [10,10.05,9.95,11.15,-5,3286,3287]
            Vector {
                t: Datatype::Float64,
                filter: sf(0.1, 10.0, 2),
                input: "00000000000024409a999999991924406666666666e62340cdcccccccc4c2640\
                        00000000000014c00000000000aca9400000000000aea940",
                md: "01000000 0e000000",
                data: "00000100ffff0c006afff87f0280",
                readback: "00000000000024403333333333332440cdcccccccccc23406666666666662640\
                           00000000000014c00000000000aca940343333333385a9c0",
            },
            // f64, (1e-6,-0.5,4): [1/3,2/3,-1/3,1e6,1e300,NaN]
            Vector {
                t: Datatype::Float64,
                filter: sf(1e-06, -0.5, 4),
                input: "555555555555d53f555555555555e53f555555555555d5bf0000000080842e41\
                        9c7500883ce4377e000000000000f87f",
                md: "01000000 18000000",
                data: "35b70c004bcd11000b8b0200000000800000008000000080",
                readback: "465d6bef5355d53f5c514a085655e53f465d6bef5355d5bf8dedb5a0f7c7a0c0\
                           8dedb5a0f7c7a0c08dedb5a0f7c7a0c0",
            },
            // f64, (0.001,0,8): [1/3,2/3,9.3e18,-9.3e18,NaN,2^62,12345.678]
            Vector {
                t: Datatype::Float64,
                filter: sf(0.001, 0.0, 8),
                input: "555555555555d53f555555555555e53f40643f970722e04340643f970722e0c3\
                        000000000000f87f000000000000d0435839b4c8d61cc840",
                md: "01000000 38000000",
                data: "4d010000000000009b0200000000000000000000000000800000000000000080\
                       000000000000008000000000000000804e61bc0000000000",
                readback: "1d5a643bdf4fd53ff2d24d621058e53ffca9f1d24d6240c3fca9f1d24d6240c3\
                           fca9f1d24d6240c3fca9f1d24d6240c35839b4c8d61cc840",
            },
            // f32, (1,0,4): [16777217,123456789,-987654321,2147483520]
            Vector {
                t: Datatype::Float32,
                filter: sf(1.0, 0.0, 4),
                input: "0000804ba379eb4ca3796bceffffff4e",
                md: "01000000 10000000",
                data: "0000000118cd5b07409721c580ffff7f",
                readback: "0000804ba379eb4ca3796bceffffff4e",
            },
            // f32, (1,0,8): [1e15,3e17,-7.5e12]
            Vector {
                t: Datatype::Float32,
                filter: sf(1.0, 0.0, 8),
                input: "a95f63580d3a855c5b47dad4",
                md: "01000000 18000000",
                data: "000000a47e8d03000000000068d02904000028c52df9ffff",
                readback: "a95f63580d3a855c5b47dad4",
            },
            // INT32 cells reinterpreted as f32, (0.25,0.5,2): bits of [1.0,2.5,NaN], -1 (NaN)
            Vector {
                t: Datatype::Int32,
                filter: sf(0.25, 0.5, 2),
                input: "0000803f000020400000c07fffffffff",
                md: "01000000 08000000",
                data: "0200080000000000",
                readback: "0000803f000020400000003f0000003f",
            },
            // INT64 cells reinterpreted as f64, (0.5,0,4): bits of [1.0,2.5], 1, -5
            Vector {
                t: Datatype::Int64,
                filter: sf(0.5, 0.0, 4),
                input: "000000000000f03f00000000000004400100000000000000fbffffffffffffff",
                md: "01000000 10000000",
                data: "02000000050000000000000000000080",
                readback: "000000000000f03f00000000000004400000000000000000000000000000d0c1",
            },
            // UINT32 cells reinterpreted as f32, (2,1,1): bits of [1.0,100.0]
            Vector {
                t: Datatype::Uint32,
                filter: sf(2.0, 1.0, 1),
                input: "0000803f0000c842",
                md: "01000000 02000000",
                data: "0032",
                readback: "0000803f0000ca42",
            },
        ];
        for v in &vectors {
            check(v);
        }
    }

    #[test]
    fn rounding_is_half_away_from_zero() {
        let f = sf(1.0, 0.0, 1);
        let data = f32s(&[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997]);
        let out = encode_with(&f, Datatype::Float32, &data);
        assert_eq!(out, [1, 2, 3, 0xff, 0xfe, 0xfd, 0, 0]);
        let f = sf(1.0, 0.0, 8);
        let out = encode_with(
            &f,
            Datatype::Float64,
            &f64s(&[0.5, 2.5, -2.5, 4503599627370495.5]),
        );
        let vals: Vec<i64> = out
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(vals, [1, 3, -3, 4503599627370496]);
    }

    #[test]
    fn out_of_range_and_nan_follow_x86_64() {
        let vals = [128.0, 300.0, -129.0, 1e10, f64::NAN, f64::INFINITY, -1e10];
        // i8 / i16: low bits of the 32-bit conversion.
        let out = encode_with(&sf(1.0, 0.0, 1), Datatype::Float64, &f64s(&vals));
        assert_eq!(out, [0x80, 44, 0x7f, 0, 0, 0, 0]);
        let out = encode_with(&sf(1.0, 0.0, 2), Datatype::Float64, &f64s(&vals));
        let v16: Vec<i16> = out
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(v16, [128, 300, -129, 0, 0, 0, 0]);
        let out = encode_with(
            &sf(1.0, 0.0, 2),
            Datatype::Float32,
            &f32s(&[32768.0, 70000.0, -40000.0, f32::NAN]),
        );
        assert_eq!(hex(&out), "00807011c0630000");
        // i32: i32::MIN for anything out of range.
        let out = encode_with(
            &sf(1.0, 0.0, 4),
            Datatype::Float64,
            &f64s(&[
                2147483647.0,
                2147483648.0,
                -2147483648.0,
                -2147483649.0,
                f64::NAN,
            ]),
        );
        let v32: Vec<i32> = out
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(
            v32,
            [i32::MAX, i32::MIN, i32::MIN, i32::MIN, i32::MIN],
            "{v32:?}"
        );
        // i64: i64::MIN.
        let out = encode_with(
            &sf(1.0, 0.0, 8),
            Datatype::Float64,
            &f64s(&[
                9.2e18,
                9.3e18,
                -(2f64.powi(63)),
                -9.3e18,
                f64::NAN,
                f64::NEG_INFINITY,
            ]),
        );
        let v64: Vec<i64> = out
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(
            v64,
            [
                9_200_000_000_000_000_000,
                i64::MIN,
                i64::MIN,
                i64::MIN,
                i64::MIN,
                i64::MIN
            ]
        );
    }

    #[test]
    fn f32_arithmetic_is_single_precision() {
        // (x - offset) and the division are done in f32: 0.1f32 / 0.1f32 is exactly 1, while
        // in f64 the f32 value 0.1 divided by 0.1 is not.
        let f = sf(0.1, 0.0, 8);
        let out = encode_with(&f, Datatype::Float32, &f32s(&[0.1, 16777215.0]));
        let v: Vec<i64> = out
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let expected = (16777215.0f32 / 0.1f64 as f32).round() as i64;
        assert_eq!(v, [1, expected]);
        assert_ne!(expected, (16777215.0f64 / 0.1).round() as i64);
    }

    #[test]
    fn reverse_converts_the_integer_to_the_float_type_first() {
        // w = 2^24 + 1 as i32: TileDB computes (float)(1.0 * (double)(float)w + 0.5).
        let f = sf(1.0, 0.5, 4);
        let md = unhex("01000000 04000000");
        let r = reverse_one(
            &f,
            Datatype::Float32,
            4,
            &md,
            &16777217i32.to_le_bytes(),
            4,
            false,
        )
        .unwrap();
        assert_eq!(
            f32::from_le_bytes(r.data[..4].try_into().unwrap()),
            16777216.0
        );
    }

    #[test]
    fn round_trips_for_every_width() {
        for t in [Datatype::Float32, Datatype::Float64] {
            for w in [1u64, 2, 4, 8] {
                let f = sf(0.01, -3.0, w);
                let max = match w {
                    1 => 127,
                    2 => 32767,
                    _ => 1_000_000,
                };
                let ints: Vec<i64> = (0..500i64).map(|i| (i * 7919) % (2 * max) - max).collect();
                let floats: Vec<f64> = ints.iter().map(|&i| i as f64 * 0.01 - 3.0).collect();
                let data = if t == Datatype::Float32 {
                    f32s(&floats.iter().map(|&x| x as f32).collect::<Vec<_>>())
                } else {
                    f64s(&floats)
                };
                let out = forward_one(&f, t, t.size() as u64, None, &data).unwrap();
                assert_eq!(out.data.len(), 500 * w as usize);
                assert_eq!(
                    out.md,
                    [1u32, 500 * w as u32].map(u32::to_le_bytes).concat()
                );
                let back = reverse_one(
                    &f,
                    t,
                    t.size() as u64,
                    &out.md,
                    &out.data,
                    data.len(),
                    false,
                )
                .unwrap();
                assert_eq!(back.data.len(), data.len());
                for (i, chunk) in back.data.chunks_exact(t.size()).enumerate() {
                    let got = if t == Datatype::Float32 {
                        f64::from(f32::from_le_bytes(chunk.try_into().unwrap()))
                    } else {
                        f64::from_le_bytes(chunk.try_into().unwrap())
                    };
                    assert!(
                        (got - floats[i]).abs() <= 0.005 + floats[i].abs() * 1e-6,
                        "{t:?} w={w} i={i}: {got} vs {}",
                        floats[i]
                    );
                }
            }
        }
    }

    #[test]
    fn empty_part_and_zero_parts() {
        let f = sf(1.0, 0.0, 2);
        let out = forward_one(&f, Datatype::Float32, 4, None, &[]).unwrap();
        assert_eq!(hex(&out.md), "0100000000000000");
        assert_eq!(out.data_lens, vec![0]);
        let r = reverse_one(&f, Datatype::Float32, 4, &out.md, &[], 0, false).unwrap();
        assert!(r.data.is_empty());
        // Zero parts in gives zero parts out; metadata of later stages is stacked after ours.
        let md_in = [7u8; 5];
        let md_lens = [5usize];
        let out = forward_parts(
            &f,
            Datatype::Float32,
            4,
            None,
            Parts::new(&md_in, &md_lens),
            Parts::EMPTY,
        )
        .unwrap();
        assert_eq!(out.md_lens, vec![4, 5]);
        assert_eq!(hex(&out.md[..4]), "00000000");
        assert!(out.data_lens.is_empty());
        let r = reverse_one(&f, Datatype::Float32, 4, &out.md, &[], 0, false).unwrap();
        assert_eq!(r.md, md_in);
    }

    #[test]
    fn invalid_configurations_and_inputs_are_refused() {
        let e = forward_one(&sf(1.0, 0.0, 3), Datatype::Float32, 4, None, &[0; 8]).err_only();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
        for t in [Datatype::Int16, Datatype::Uint8, Datatype::StringUtf16] {
            let e = forward_one(&sf(1.0, 0.0, 1), t, t.size() as u64, None, &[0; 8]).err_only();
            assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
            assert!(
                reverse_one(&sf(1.0, 0.0, 1), t, 1, &unhex("00000000"), &[], 0, false).is_err()
            );
        }
        // Partial trailing value.
        let e = forward_one(&sf(1.0, 0.0, 1), Datatype::Float64, 8, None, &[0; 12]).err_only();
        assert!(
            e.message().contains("not a multiple of the 8-byte float"),
            "{e}"
        );
        // Several data parts.
        let data = [0u8; 8];
        let lens = [4usize, 4];
        let e = forward_parts(
            &sf(1.0, 0.0, 1),
            Datatype::Float32,
            4,
            None,
            Parts::EMPTY,
            Parts::new(&data, &lens),
        )
        .err_only();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    }

    #[test]
    fn corrupt_input_never_panics() {
        let data = f64s(&(0..40).map(|i| i as f64 * 1.25).collect::<Vec<_>>());
        for w in [1u64, 2, 4, 8] {
            for t in [Datatype::Float64, Datatype::Float32] {
                let f = sf(0.5, 1.0, w);
                let data = &data[..data.len() / t.size() * t.size()];
                let out = forward_one(&f, t, t.size() as u64, None, data).unwrap();
                let mut state = 0x9e37_79b9u32;
                for i in 0..2000 {
                    let mut md = out.md.clone();
                    let mut d = out.data.clone();
                    state = state.wrapping_mul(1664525).wrapping_add(1013904223);
                    let pos = (state >> 8) as usize;
                    let md_len = md.len();
                    match i % 4 {
                        0 => md[pos % md_len] = (state >> 24) as u8,
                        1 => md.truncate(pos % (md.len() + 1)),
                        2 => d.truncate(pos % (d.len() + 1)),
                        _ => {
                            md[pos % md_len] ^= 1 << (state % 8);
                            d.truncate(pos % (d.len() + 1));
                        }
                    }
                    let _ = reverse_one(&f, t, t.size() as u64, &md, &d, data.len(), false);
                }
            }
        }
        // Part count and length far beyond the data.
        let f = sf(1.0, 0.0, 1);
        for md in [
            "ffffffff 01000000",
            "01000000 ffffffff",
            "02000000",
            "01000000 030000",
        ] {
            assert!(matches!(
                reverse_one(&f, Datatype::Float32, 4, &unhex(md), &[1, 2, 3], 12, false),
                Err(Error::CorruptData(_))
            ));
        }
    }

    #[test]
    fn whole_tiledb_tile_through_the_pipeline() {
        // The complete `a0.tdb` tile of docs/FORMAT.md §9.2 (SCALE_FLOAT(0.5, 1.0, 1), FLOAT32
        // [1.0,1.5,2.2,0.0]); TileDB reads back [1.0,1.5,2.0,0.0].
        let tile_hex = "0100000000000000 10000000 04000000 08000000 01000000 04000000 00 01 02 fe";
        let mut p = crate::pipeline::Pipeline::new();
        p.push(sf(0.5, 1.0, 1)).unwrap();
        let cells = f32s(&[1.0, 1.5, 2.2, 0.0]);
        let tile = crate::engine::tile::Tile::new(Datatype::Float32, 4, cells).unwrap();
        assert_eq!(
            hex(&p.filter_tile(&tile).unwrap()),
            tile_hex.replace(' ', "")
        );
        let back = p
            .unfilter_tile(&unhex(tile_hex), Datatype::Float32, 4)
            .unwrap();
        assert_eq!(back.data(), &f32s(&[1.0, 1.5, 2.0, 0.0])[..]);
    }
}
