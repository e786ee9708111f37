//! XOR (16): each element replaced by its XOR with the previous input element
//! (docs/FORMAT.md §5.18).
//!
//! The element width `s` is the size of the filter data type (1, 2, 4 or 8 bytes); floats are
//! processed as their bit patterns. Own metadata: `u32 num_parts`, then `u32 length` per data
//! part, followed by the forwarded input metadata. Data: one part, the encoded parts
//! concatenated, where `y_0 = x_0` and `y_j = x_j ^ x_{j-1}`.
//!
//! Because XOR acts on each byte independently, element `j` XOR element `j-1` is the same as
//! byte `i` XOR byte `i-s`; the code works on bytes and never reinterprets memory. The work is
//! done by [`kernels::xor_encode`] and [`kernels::xor_decode`] (SIMD where the CPU has it).
//!
//! Policies:
//! * A part whose length is not a multiple of `s` is refused on write. TileDB records the full
//!   length but writes only the whole elements, and its reverse neither copies nor restores the
//!   trailing bytes, so no encoding of such a part can be read back by TileDB.
//! * On read, recorded lengths that are not multiples of `s`, or that exceed the data, are
//!   reported as corrupt data.

use crate::engine::stage::{DataFlow, FwdIn, FwdOut, MdFlow, RevIn, RevOut, StageCtx};
use crate::error::{Error, Result};
use crate::filters::config::Filter;
use crate::filters::registry::{FilterDescriptor, plain_descriptor};
use crate::format::byte_reader::ByteReader;
use crate::format::filter_type::FilterType;
use crate::kernels;

/// The element width for the stage's data type, or an error when XOR cannot process it.
fn element_width(ctx: &StageCtx<'_>) -> Result<usize> {
    let s = ctx.datatype.size();
    if matches!(s, 1 | 2 | 4 | 8) {
        Ok(s)
    } else {
        Err(Error::invalid(format!(
            "XOR: datatype {} of {s} bytes cannot be processed as an integer type",
            ctx.datatype.name()
        )))
    }
}

/// Forward: own block of part lengths, then the XOR-encoded parts as one data part.
pub fn forward(ctx: &mut StageCtx<'_>, input: FwdIn<'_>, out: FwdOut<'_>) -> Result<DataFlow> {
    let s = element_width(ctx)?;
    for part in input.data.iter() {
        if part.len() % s != 0 {
            return Err(Error::invalid(format!(
                "XOR: part of {} bytes is not a multiple of the {s}-byte element; TileDB \
                 cannot read back the trailing {} bytes",
                part.len(),
                part.len() % s
            )));
        }
        if u32::try_from(part.len()).is_err() {
            return Err(Error::invalid(format!(
                "XOR: part of {} bytes exceeds the 4 GiB limit of its length field",
                part.len()
            )));
        }
    }
    let count = u32::try_from(input.data.count())
        .map_err(|_| Error::invalid("XOR: too many data parts"))?;
    let own = out.md.push_uninit(4 + 4 * input.data.count());
    own[..4].copy_from_slice(&count.to_le_bytes());
    for (k, part) in input.data.iter().enumerate() {
        own[4 + 4 * k..8 + 4 * k].copy_from_slice(&(part.len() as u32).to_le_bytes());
    }
    out.md.extend_forwarded(input.md);
    // The parts tile the output exactly: each kernel call appends one part.
    out.data.push_filled(input.data.total_len(), |dst| {
        for part in input.data.iter() {
            kernels::xor_encode_into(s, part, dst);
        }
        Ok::<_, Error>(())
    })?;
    Ok(DataFlow::Written)
}

/// Reverse: decodes each recorded part; the rest of the metadata goes to the previous stage.
pub fn reverse(
    ctx: &mut StageCtx<'_>,
    input: RevIn<'_>,
    mut out: RevOut<'_>,
) -> Result<(MdFlow, DataFlow)> {
    let s = element_width(ctx)?;
    let mut r = ByteReader::new(input.md, "XOR metadata");
    let count = r.u32()? as usize;
    let lens = r.take(
        count
            .checked_mul(4)
            .ok_or_else(|| Error::corrupt("XOR: part count overflows"))?,
    )?;
    let mut total: u64 = 0;
    for l in lens.chunks_exact(4) {
        let len = u32::from_le_bytes([l[0], l[1], l[2], l[3]]);
        if !(len as usize).is_multiple_of(s) {
            return Err(Error::corrupt(format!(
                "XOR: recorded part of {len} bytes is not a multiple of the {s}-byte element"
            )));
        }
        total += u64::from(len);
    }
    if total > input.data.len() as u64 {
        return Err(Error::corrupt(format!(
            "XOR: parts total {total} bytes but only {} bytes of data",
            input.data.len()
        )));
    }
    let mut dst = out.data.alloc(total as usize)?;
    let mut pos = 0;
    for l in lens.chunks_exact(4) {
        let len = u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize;
        kernels::xor_decode_into(s, &input.data[pos..pos + len], &mut dst);
        pos += len;
    }
    Ok((MdFlow::Rest(r.position()), DataFlow::Written))
}

/// The Xor filter's descriptor (see [`crate::filters::registry`]).
pub const DESCRIPTOR: FilterDescriptor = plain_descriptor(
    FilterType::Xor,
    Filter::Xor,
    |_, ctx, input, out| forward(ctx, input, out),
    |_, ctx, input, out| reverse(ctx, input, out),
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::parts::Parts;
    use crate::filters::config::Filter;
    use crate::filters::testing::{forward_one, forward_parts, reverse_one};
    use crate::format::datatype::Datatype;

    use crate::filters::testing::{ErrOnly, to_hex as hex, unhex};

    /// Checks our forward output against a chunk TileDB 2.30 wrote (one chunk, no other filter)
    /// and that our reverse restores the input.
    fn check_tiledb_chunk(t: Datatype, input: &str, md: &str, data: &str) {
        let input = unhex(input);
        let f = forward_one(&Filter::Xor, t, t.size() as u64, None, &input).unwrap();
        assert_eq!(hex(&f.md), md.replace(' ', ""), "{t:?} metadata");
        assert_eq!(hex(&f.data), data.replace(' ', ""), "{t:?} data");
        assert_eq!(f.data_lens, vec![input.len()]);
        let r = reverse_one(
            &Filter::Xor,
            t,
            t.size() as u64,
            &unhex(md),
            &unhex(data),
            input.len(),
            false,
        )
        .unwrap();
        assert_eq!(r.data, input);
        assert!(r.md.is_empty());
    }

    #[test]
    fn format_md_vector_int16() {
        // docs/FORMAT.md §9.2: XOR, INT16 [1,3,7,15].
        check_tiledb_chunk(
            Datatype::Int16,
            "0100 0300 0700 0f00",
            "01000000 08000000",
            "0100 0200 0400 0800",
        );
    }

    #[test]
    fn tiledb_2_30_vectors() {
        // Chunks of `a0.tdb` written by libtiledb 2.30.0 (TileDB-Py 0.36.1), filter [XOR].
        // UINT8 [5,250,3,3,0,255,17]
        check_tiledb_chunk(
            Datatype::Uint8,
            "05fa030300ff11",
            "01000000 07000000",
            "05fff90003ffee",
        );
        // INT32 [1,-1,100000,-7,0,2^31-1]
        check_tiledb_chunk(
            Datatype::Int32,
            "01000000ffffffffa0860100f9ffffff00000000ffffff7f",
            "01000000 18000000",
            "01000000feffffff5f79feff5979fefff9ffffffffffff7f",
        );
        // UINT64 [1,2^64-1,12345678901234,0,7]
        check_tiledb_chunk(
            Datatype::Uint64,
            "0100000000000000fffffffffffffffff22fce733a0b0000\
             00000000000000000700000000000000",
            "01000000 28000000",
            "0100000000000000feffffffffffffff0dd0318cc5f4ffff\
             f22fce733a0b00000700000000000000",
        );
        // FLOAT32 [1.5,-2.25,3e10,0,NaN]
        check_tiledb_chunk(
            Datatype::Float32,
            "0000c03f000010c07684df50000000000000c07f",
            "01000000 14000000",
            "0000c03f0000d0ff7684cf907684df500000c07f",
        );
        // FLOAT64 [pi,-1e300,2.5,0]
        check_tiledb_chunk(
            Datatype::Float64,
            "182d4454fb2109409c7500883ce437fe00000000000004400000000000000000",
            "01000000 20000000",
            "182d4454fb210940845844dcc7c53ebe9c7500883ce433be0000000000000440",
        );
    }

    fn reference_encode<const N: usize>(src: &[u8]) -> Vec<u8> {
        let elems: Vec<u64> = src
            .chunks_exact(N)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..N].copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect();
        let mut out = Vec::new();
        for (j, &e) in elems.iter().enumerate() {
            let v = if j == 0 { e } else { e ^ elems[j - 1] };
            out.extend_from_slice(&v.to_le_bytes()[..N]);
        }
        out
    }

    #[test]
    fn round_trip_every_size_class() {
        let types = [
            (Datatype::Int8, 1usize),
            (Datatype::Uint8, 1),
            (Datatype::Char, 1),
            (Datatype::Int16, 2),
            (Datatype::Uint16, 2),
            (Datatype::Int32, 4),
            (Datatype::Uint32, 4),
            (Datatype::Float32, 4),
            (Datatype::Int64, 8),
            (Datatype::Uint64, 8),
            (Datatype::Float64, 8),
            (Datatype::DatetimeNs, 8),
        ];
        for (t, s) in types {
            for n in [0usize, 1, 2, 3, 17, 1000] {
                let data: Vec<u8> = (0..n * s)
                    .map(|i| (i as u32).wrapping_mul(2654435761).rotate_left(7) as u8)
                    .collect();
                let f = forward_one(&Filter::Xor, t, s as u64, None, &data).unwrap();
                assert_eq!(f.flow, DataFlow::Written);
                assert_eq!(f.md_lens, vec![8]);
                assert_eq!(f.data_lens, vec![data.len()], "{t:?} n={n}");
                let expected = match s {
                    1 => reference_encode::<1>(&data),
                    2 => reference_encode::<2>(&data),
                    4 => reference_encode::<4>(&data),
                    _ => reference_encode::<8>(&data),
                };
                assert_eq!(f.data, expected, "{t:?} n={n}");
                let r = reverse_one(&Filter::Xor, t, s as u64, &f.md, &f.data, data.len(), false)
                    .unwrap();
                assert_eq!(r.data, data, "{t:?} n={n}");
            }
        }
    }

    #[test]
    fn empty_part_and_zero_parts() {
        // One empty part: length 0 recorded, one empty data part written.
        let f = forward_one(&Filter::Xor, Datatype::Int32, 4, None, &[]).unwrap();
        assert_eq!(hex(&f.md), "0100000000000000");
        assert_eq!(f.data_lens, vec![0]);
        let r = reverse_one(&Filter::Xor, Datatype::Int32, 4, &f.md, &[], 0, false).unwrap();
        assert!(r.data.is_empty());
        // Zero parts (an empty chunk forwarded by an earlier filter): count 0, one empty part.
        let f = forward_parts(
            &Filter::Xor,
            Datatype::Int32,
            4,
            None,
            Parts::EMPTY,
            Parts::EMPTY,
        )
        .unwrap();
        assert_eq!(hex(&f.md), "00000000");
        assert_eq!(f.data_lens, vec![0]);
    }

    #[test]
    fn metadata_is_stacked_and_several_parts_concatenated() {
        let md_in = [9u8, 9, 9];
        let md_lens = [3usize];
        let data = [1u8, 0, 3, 0, 7, 0, 15, 0, 1, 1];
        let data_lens = [6usize, 0, 4];
        let f = forward_parts(
            &Filter::Xor,
            Datatype::Uint16,
            2,
            None,
            Parts::new(&md_in, &md_lens),
            Parts::new(&data, &data_lens),
        )
        .unwrap();
        assert_eq!(f.md_lens, vec![16, 3]);
        assert_eq!(
            hex(&f.md),
            "0300000006000000000000000400000009 0909".replace(' ', "")
        );
        assert_eq!(hex(&f.data), "0100020004000f000e01");
        assert_eq!(f.data_lens, vec![10]);
        let r = reverse_one(&Filter::Xor, Datatype::Uint16, 2, &f.md, &f.data, 10, false).unwrap();
        assert_eq!(r.data, data);
        assert_eq!(r.md, md_in);
    }

    #[test]
    fn trailing_partial_element_is_refused() {
        let e = forward_one(&Filter::Xor, Datatype::Int32, 4, None, &[1, 2, 3, 4, 5]).err_only();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
        assert!(
            e.message()
                .contains("part of 5 bytes is not a multiple of the 4-byte element"),
            "{e}"
        );
        // Shorter than one element, too.
        assert!(forward_one(&Filter::Xor, Datatype::Int64, 8, None, &[1, 2, 3]).is_err());
    }

    #[test]
    fn tiledb_unreadable_trailing_bytes_are_corrupt() {
        // What TileDB writes for INT16 [1,3,7] + 1 trailing byte: length 7 recorded, 6 written.
        let md = unhex("01000000 07000000");
        let e = reverse_one(
            &Filter::Xor,
            Datatype::Int16,
            2,
            &md,
            &unhex("010002000400"),
            7,
            false,
        )
        .err_only();
        assert!(matches!(e, Error::CorruptData(_)), "{e:?}");
    }

    #[test]
    fn corrupt_input_never_panics() {
        let data: Vec<u8> = (0..64u8).collect();
        for t in [
            Datatype::Int8,
            Datatype::Int16,
            Datatype::Int32,
            Datatype::Int64,
        ] {
            let f = forward_one(&Filter::Xor, t, t.size() as u64, None, &data).unwrap();
            let mut state = 0x1234_5678u32;
            for i in 0..2000 {
                let mut md = f.md.clone();
                let mut d = f.data.clone();
                state = state.wrapping_mul(1664525).wrapping_add(1013904223);
                let pos = (state >> 8) as usize;
                let md_len = md.len();
                match i % 4 {
                    0 => md[pos % md_len] = (state >> 24) as u8,
                    1 => md.truncate(pos % (md.len() + 1)),
                    2 => d.truncate(pos % (d.len() + 1)),
                    _ => {
                        md[pos % md_len] ^= 0x80;
                        d.truncate(pos % (d.len() + 1));
                    }
                }
                let _ = reverse_one(&Filter::Xor, t, t.size() as u64, &md, &d, data.len(), false);
            }
        }
        // A huge part count.
        let md = unhex("ffffffff 04000000");
        assert!(matches!(
            reverse_one(&Filter::Xor, Datatype::Int32, 4, &md, &[0; 4], 4, false),
            Err(Error::CorruptData(_))
        ));
    }

    #[test]
    fn whole_tiledb_tile_through_the_pipeline() {
        // The complete `a0.tdb` tile of docs/FORMAT.md §9.2 (XOR, INT16 [1,3,7,15]).
        let tile_hex = "0100000000000000 08000000 08000000 08000000 01000000 08000000 \
                        0100 0200 0400 0800";
        let mut p = crate::pipeline::Pipeline::new();
        p.push(Filter::Xor).unwrap();
        let cells = unhex("0100 0300 0700 0f00");
        let tile = crate::engine::tile::Tile::new(Datatype::Int16, 2, cells.clone()).unwrap();
        assert_eq!(
            hex(&p.filter_tile(&tile).unwrap()),
            tile_hex.replace(' ', "")
        );
        let back = p
            .unfilter_tile(&unhex(tile_hex), Datatype::Int16, 2)
            .unwrap();
        assert_eq!(back.data(), &cells[..]);
    }
}
