//! The var-size string path of RLE and DICTIONARY (docs/FORMAT.md §5.8): the offsets of a var-size
//! STRING_ASCII/UTF8 data tile are folded into the encoded data, and the reader rebuilds them.
//!
//! Forward metadata (one part; the input metadata is dropped):
//! `u32 0, u32 1, u32 input_length, u32 output_length, u32 8·n`, then the codec's own fields
//! ([`super::rle::encode_strings`], [`super::dictionary::encode_strings`]).
//! Forward data: one part of exactly `output_length` bytes.
//!
//! Reverse never trusts a length: every run length, string length, id and size is checked
//! against the bytes actually present, the declared cell count and the output window, and the
//! input is validated completely before any output or offset is written.

use crate::engine::stage::{DataFlow, FwdIn, FwdOut, MdFlow, RevIn, RevOut, StageCtx};
use crate::error::{Error, Result};
use crate::format::byte_reader::ByteReader;

/// Which encoding the var-string path uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarStringCodec {
    /// RLE of consecutive equal strings.
    Rle,
    /// Dictionary of distinct strings.
    Dictionary,
}

/// Bytes of the fixed part of the metadata: five u32 fields.
pub const HEADER_LEN: usize = 20;

/// The byte width TileDB picks to store `x`: 1, 2, 4 or 8.
pub fn bytesize(x: u64) -> u8 {
    if x <= u8::MAX as u64 {
        1
    } else if x <= u16::MAX as u64 {
        2
    } else if x <= u32::MAX as u64 {
        4
    } else {
        8
    }
}

/// The width in bytes TileDB's reader actually uses for a stored width byte `w`:
/// 1 → 1, 2 → 2, 3–4 → 4, 5–255 → 8. `None` for 0.
pub fn read_width(w: u8) -> Option<usize> {
    match w {
        0 => None,
        1 => Some(1),
        2 => Some(2),
        3 | 4 => Some(4),
        _ => Some(8),
    }
}

/// Appends the low `width` bytes of `value`, big-endian (`width` is 1, 2, 4 or 8).
pub fn put_be(out: &mut Vec<u8>, value: u64, width: u8) {
    let bytes = value.to_be_bytes();
    out.extend_from_slice(&bytes[8 - width as usize..]);
}

/// Reads a big-endian unsigned integer of `width` (1–8) bytes from the front of `r`.
pub fn take_be(r: &mut ByteReader<'_>, width: usize) -> Result<u64> {
    let b = r.take(width)?;
    Ok(b.iter().fold(0u64, |acc, &x| (acc << 8) | x as u64))
}

/// The cells of a var-size data tile: its bytes cut at validated start offsets.
#[derive(Clone, Copy, Debug)]
pub struct Cells<'a> {
    data: &'a [u8],
    offsets: &'a [u64],
}

impl<'a> Cells<'a> {
    /// Cuts `data` at `offsets` (one start per cell, tile-relative). The offsets must start at
    /// 0, never decrease and stay within `data`; there must be at least one cell.
    pub fn new(data: &'a [u8], offsets: &'a [u64]) -> Result<Cells<'a>> {
        let Some(&first) = offsets.first() else {
            return Err(Error::invalid(
                "a var-size tile needs at least one cell offset",
            ));
        };
        if first != 0 {
            return Err(Error::invalid(format!(
                "the first cell offset is {first}, not 0"
            )));
        }
        let mut prev = 0u64;
        for (i, &o) in offsets.iter().enumerate() {
            if o < prev || o > data.len() as u64 {
                return Err(Error::invalid(format!(
                    "cell offset {i} ({o}) is decreasing or beyond the {} data bytes",
                    data.len()
                )));
            }
            prev = o;
        }
        Ok(Cells { data, offsets })
    }

    /// Number of cells (at least 1).
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Always false: a [`Cells`] holds at least one cell.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// The bytes of cell `i`.
    pub fn get(&self, i: usize) -> &'a [u8] {
        let start = self.offsets[i] as usize;
        let end = match self.offsets.get(i + 1) {
            Some(&e) => e as usize,
            None => self.data.len(),
        };
        &self.data[start..end]
    }

    /// Iterates over the cells in order.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// The length of the longest cell.
    pub fn max_len(&self) -> u64 {
        self.iter().map(|s| s.len() as u64).max().unwrap_or(0)
    }
}

fn encode(
    codec: VarStringCodec,
    cells: &Cells<'_>,
    codec_md: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<()> {
    match codec {
        VarStringCodec::Rle => super::rle::encode_strings(cells, codec_md, out),
        VarStringCodec::Dictionary => super::dictionary::encode_strings(cells, codec_md, out),
    }
}

/// Whether a forward stage takes the var-size string path: a var-size tile (offsets given) of
/// STRING_ASCII or STRING_UTF8.
pub fn applies_forward(ctx: &StageCtx<'_>) -> bool {
    ctx.offsets.is_some() && super::is_var_string_type(ctx.datatype)
}

/// Whether a reverse stage takes the var-size string path: the reader rebuilds the tile's
/// offsets from its data.
pub fn applies_reverse(out: &RevOut<'_>) -> bool {
    out.offsets.is_some()
}

/// Forward: encodes the chunk's strings (the whole var tile) into one metadata part and one
/// data part, using the tile's cell offsets from `ctx.offsets`.
pub fn forward(
    codec: VarStringCodec,
    ctx: &mut StageCtx<'_>,
    input: FwdIn<'_>,
    out: FwdOut<'_>,
) -> Result<DataFlow> {
    let offsets = ctx.offsets.ok_or_else(|| {
        Error::Internal("var-string encoding needs the tile's cell offsets".into())
    })?;
    if input.data.count() != 1 {
        return Err(Error::invalid(format!(
            "var-size string input must be exactly one data part, got {}",
            input.data.count()
        )));
    }
    let data = input.data.bytes();
    let input_length = u32::try_from(data.len())
        .map_err(|_| Error::invalid("input is too large to be compressed (over 4 GiB)"))?;
    let cells = Cells::new(data, offsets)?;
    let offsets_bytes = u32::try_from(8 * cells.len() as u64).map_err(|_| {
        Error::invalid(format!(
            "{} cells: the offsets tile size does not fit the u32 metadata field",
            cells.len()
        ))
    })?;
    let mut codec_md = Vec::new();
    let mut output_length = 0u32;
    out.data.push_with(|buf| {
        let start = buf.len();
        encode(codec, &cells, &mut codec_md, buf)?;
        output_length = u32::try_from(buf.len() - start)
            .map_err(|_| Error::invalid("encoded strings exceed 4 GiB"))?;
        Ok::<(), Error>(())
    })?;
    let md = out.md.push_uninit(HEADER_LEN + codec_md.len());
    md[0..4].copy_from_slice(&0u32.to_le_bytes());
    md[4..8].copy_from_slice(&1u32.to_le_bytes());
    md[8..12].copy_from_slice(&input_length.to_le_bytes());
    md[12..16].copy_from_slice(&output_length.to_le_bytes());
    md[16..20].copy_from_slice(&offsets_bytes.to_le_bytes());
    md[HEADER_LEN..].copy_from_slice(&codec_md);
    Ok(DataFlow::Written)
}

/// Reverse: decodes the strings into `out.data` (exactly `input_length` bytes) and appends one
/// start offset per cell, relative to the start of this output, to `out.offsets`.
pub fn reverse(
    codec: VarStringCodec,
    _ctx: &mut StageCtx<'_>,
    input: RevIn<'_>,
    mut out: RevOut<'_>,
) -> Result<(MdFlow, DataFlow)> {
    let mut r = ByteReader::new(input.md, "var-string metadata");
    // The part counts are written as 0 and 1; TileDB reads them without checking.
    let _num_md_parts = r.u32()?;
    let _num_data_parts = r.u32()?;
    let input_length = r.u32()? as usize;
    let output_length = r.u32()? as usize;
    let offsets_bytes = r.u32()?;
    if offsets_bytes == 0 || offsets_bytes % 8 != 0 {
        return Err(Error::corrupt(format!(
            "offsets tile size {offsets_bytes} is not a positive multiple of 8"
        )));
    }
    let n_cells = (offsets_bytes / 8) as usize;
    if output_length == 0 {
        return Err(Error::corrupt("encoded strings are empty"));
    }
    if output_length > input.data.len() {
        return Err(Error::corrupt(format!(
            "encoded strings of {output_length} bytes, but only {} bytes of data",
            input.data.len()
        )));
    }
    let encoded = &input.data[..output_length];
    let offsets = out
        .offsets
        .as_deref_mut()
        .ok_or_else(|| Error::Internal("var-string decoding needs an offsets output".into()))?;
    let mut dst = out.data.alloc(input_length)?;
    let first_offset = offsets.len();
    let result = match codec {
        VarStringCodec::Rle => {
            super::rle::decode_strings(&mut r, encoded, n_cells, &mut dst, offsets)
        }
        VarStringCodec::Dictionary => {
            super::dictionary::decode_strings(&mut r, encoded, n_cells, &mut dst, offsets)
        }
    };
    if result.is_err() {
        offsets.truncate(first_offset);
    }
    result?;
    out.md.clear();
    Ok((MdFlow::Written, DataFlow::Written))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filters::config::Filter;
    use crate::filters::testing::{forward_one, reverse_one};
    use crate::format::datatype::Datatype;
    use crate::format::filter_type::FilterType;

    #[test]
    fn bytesize_and_read_width() {
        assert_eq!(bytesize(0), 1);
        assert_eq!(bytesize(255), 1);
        assert_eq!(bytesize(256), 2);
        assert_eq!(bytesize(65535), 2);
        assert_eq!(bytesize(65536), 4);
        assert_eq!(bytesize(u32::MAX as u64), 4);
        assert_eq!(bytesize(u32::MAX as u64 + 1), 8);
        assert_eq!(read_width(0), None);
        assert_eq!(
            (1..=9).map(|w| read_width(w).unwrap()).collect::<Vec<_>>(),
            vec![1, 2, 4, 4, 8, 8, 8, 8, 8]
        );
        let mut v = Vec::new();
        put_be(&mut v, 0x0102_0304, 4);
        put_be(&mut v, 0x12c, 2);
        assert_eq!(v, [1, 2, 3, 4, 1, 0x2c]);
        let mut r = ByteReader::new(&v, "t");
        assert_eq!(take_be(&mut r, 4).unwrap(), 0x0102_0304);
        assert_eq!(take_be(&mut r, 2).unwrap(), 0x12c);
        assert!(take_be(&mut r, 1).is_err());
    }

    #[test]
    fn cells_are_validated() {
        let data = b"abcd";
        let c = Cells::new(data, &[0, 1, 1, 3]).unwrap();
        assert_eq!(
            c.iter().collect::<Vec<_>>(),
            vec![&b"a"[..], b"", b"bc", b"d"]
        );
        assert_eq!(c.max_len(), 2);
        assert!(!c.is_empty());
        for bad in [&[][..], &[1][..], &[0, 2, 1][..], &[0, 5][..]] {
            assert!(matches!(
                Cells::new(data, bad),
                Err(Error::InvalidArgument(_))
            ));
        }
        assert_eq!(Cells::new(b"", &[0, 0]).unwrap().len(), 2);
    }

    #[test]
    fn forward_needs_offsets_and_one_part() {
        let rle = Filter::new(FilterType::Rle);
        // Wrong offsets are rejected instead of writing an unreadable tile.
        let e = forward_one(&rle, Datatype::StringAscii, 1, Some(&[0, 9]), b"ab")
            .err()
            .unwrap();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
        let e = forward_one(&rle, Datatype::StringAscii, 1, Some(&[]), b"ab")
            .err()
            .unwrap();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
        let mut codecs = crate::engine::thread_scratch::CodecContexts::default();
        let mut ctx = StageCtx::new(Datatype::StringAscii, 1, &mut codecs);
        let offs = [0u64];
        ctx.offsets = Some(&offs);
        let (mut md, mut data) = (
            crate::engine::parts::PartList::default(),
            crate::engine::parts::PartList::default(),
        );
        let bytes = b"abc";
        let lens = [1usize, 2];
        let e = forward(
            VarStringCodec::Rle,
            &mut ctx,
            FwdIn {
                md: crate::engine::parts::Parts::EMPTY,
                data: crate::engine::parts::Parts::new(bytes, &lens),
            },
            FwdOut {
                md: &mut md,
                data: &mut data,
            },
        )
        .unwrap_err();
        assert!(e.message().contains("exactly one data part"), "{e:?}");
    }

    #[test]
    fn input_metadata_is_dropped() {
        let mut codecs = crate::engine::thread_scratch::CodecContexts::default();
        let mut ctx = StageCtx::new(Datatype::StringUtf8, 1, &mut codecs);
        let offs = [0u64, 1];
        ctx.offsets = Some(&offs);
        let (mut md, mut data) = (
            crate::engine::parts::PartList::default(),
            crate::engine::parts::PartList::default(),
        );
        let md_in = [9u8; 5];
        let md_lens = [5usize];
        let bytes = b"xy";
        let lens = [2usize];
        forward(
            VarStringCodec::Dictionary,
            &mut ctx,
            FwdIn {
                md: crate::engine::parts::Parts::new(&md_in, &md_lens),
                data: crate::engine::parts::Parts::new(bytes, &lens),
            },
            FwdOut {
                md: &mut md,
                data: &mut data,
            },
        )
        .unwrap();
        assert_eq!(md.as_parts().count(), 1);
        assert_eq!(data.as_parts().count(), 1);
        assert!(!md.as_parts().bytes().contains(&9));
    }

    #[test]
    fn reverse_checks_header_fields() {
        let rle = Filter::new(FilterType::Rle);
        let f = forward_one(&rle, Datatype::StringAscii, 1, Some(&[0, 1]), b"ab").unwrap();
        let ok = reverse_one(&rle, Datatype::StringAscii, 1, &f.md, &f.data, 2, true).unwrap();
        assert_eq!(ok.data, b"ab");
        assert_eq!(ok.offsets, vec![0, 1]);
        assert!(ok.md.is_empty());
        // Offsets size not a multiple of 8, zero, or a different cell count.
        for v in [0u32, 12, 8, 24] {
            let mut md = f.md.clone();
            md[16..20].copy_from_slice(&v.to_le_bytes());
            let e = reverse_one(&rle, Datatype::StringAscii, 1, &md, &f.data, 2, true).err();
            assert!(matches!(e, Some(Error::CorruptData(_))), "{v}: {e:?}");
        }
        // Output length beyond the data, or zero.
        for v in [0u32, 100] {
            let mut md = f.md.clone();
            md[12..16].copy_from_slice(&v.to_le_bytes());
            let e = reverse_one(&rle, Datatype::StringAscii, 1, &md, &f.data, 2, true).err();
            assert!(matches!(e, Some(Error::CorruptData(_))), "{v}: {e:?}");
        }
        // Input length different from the window.
        let mut md = f.md.clone();
        md[8..12].copy_from_slice(&3u32.to_le_bytes());
        let e = reverse_one(&rle, Datatype::StringAscii, 1, &md, &f.data, 2, true).err();
        assert!(matches!(e, Some(Error::CorruptData(_))), "{e:?}");
        // Trailing data bytes are ignored, as by TileDB.
        let mut data = f.data.clone();
        data.push(0xee);
        assert!(reverse_one(&rle, Datatype::StringAscii, 1, &f.md, &data, 2, true).is_ok());
    }
}
