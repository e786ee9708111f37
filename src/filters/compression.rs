//! The compression-filter framework shared by GZIP, ZSTD, LZ4, BZIP2, RLE, DOUBLE_DELTA and
//! DELTA (docs/FORMAT.md §5.2).
//!
//! Every metadata part and every data part is compressed independently. Own metadata:
//! `u32 num_md_parts, u32 num_data_parts`, then `u32 uncompressed, u32 compressed` per part.
//! Output data: one part, the compressed parts concatenated (metadata parts first).

use crate::engine::stage::{DataFlow, FwdIn, FwdOut, MdFlow, RevIn, RevOut, StageCtx};
use crate::error::{Error, Result, ResultExt};
use crate::filters::config::{CompressionOptions, Filter};
use crate::filters::registry::{
    FilterDescriptor, OptionsLayout, compression_default, growth, wrong_filter,
};
use crate::format::byte_reader::ByteReader;
use crate::format::datatype::Datatype;
use crate::format::filter_type::{Compressor, FilterOption, FilterType};
use crate::mem::OutBuf;

/// The element type DELTA and DOUBLE_DELTA work on: the reinterpret type, else the stage's.
fn element_type(c: &CompressionOptions, ctx: &StageCtx<'_>) -> Datatype {
    if c.reinterpret == Datatype::Any {
        ctx.datatype
    } else {
        c.reinterpret
    }
}

fn compress_part(
    c: &CompressionOptions,
    ctx: &mut StageCtx<'_>,
    src: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    match c.compressor {
        Compressor::Gzip => crate::codecs::gzip::compress(
            &mut ctx.codecs.gzip,
            c.level,
            ctx.gzip_identical,
            src,
            out,
        ),
        Compressor::Zstd => crate::codecs::zstd::compress(&mut ctx.codecs.zstd, c.level, src, out),
        Compressor::Lz4 => crate::codecs::lz4::compress(src, out),
        Compressor::Bzip2 => {
            crate::codecs::bzip2::libbzip2::compress(&mut ctx.codecs.bzip2, c.level, src, out)
        }
        Compressor::Rle => super::rle::compress(ctx.cell_size, src, out),
        Compressor::DoubleDelta => super::double_delta::compress(element_type(c, ctx), src, out),
        Compressor::Delta => super::delta::compress(element_type(c, ctx), src, out),
        other => Err(Error::Internal(format!(
            "compressor {other:?} is not a per-part codec"
        ))),
    }
}

/// Decompresses one part into exactly the unwritten rest of `dst` (which may not be
/// initialised).
fn decompress_part(
    c: &CompressionOptions,
    ctx: &mut StageCtx<'_>,
    src: &[u8],
    dst: &mut OutBuf<'_>,
) -> Result<()> {
    match c.compressor {
        Compressor::Gzip => crate::codecs::gzip::decompress_into(&mut ctx.codecs.gzip, src, dst),
        Compressor::Zstd => crate::codecs::zstd::decompress_into(&mut ctx.codecs.zstd, src, dst),
        Compressor::Lz4 => crate::codecs::lz4::decompress_into(src, dst),
        Compressor::Bzip2 => crate::codecs::bzip2::libbzip2::decompress_into(src, dst),
        Compressor::Rle => super::rle::decompress_into(ctx.cell_size, src, dst),
        Compressor::DoubleDelta => {
            super::double_delta::decompress_into(element_type(c, ctx), src, dst)
        }
        Compressor::Delta => super::delta::decompress_into(element_type(c, ctx), src, dst),
        other => Err(Error::Internal(format!(
            "compressor {other:?} is not a per-part codec"
        ))),
    }
}

/// Forward: compresses every metadata and data part.
pub fn forward(
    c: &CompressionOptions,
    ctx: &mut StageCtx<'_>,
    input: FwdIn<'_>,
    out: FwdOut<'_>,
) -> Result<DataFlow> {
    if c.reinterpret == Datatype::Char || c.reinterpret.is_string() {
        // TileDB views the data as the reinterpret type first and has no view for these.
        return Err(Error::Unsupported(format!(
            "cannot reinterpret data as {}: unsupported datatype",
            c.reinterpret
        )));
    }
    if input.data.total_len() > u32::MAX as usize {
        return Err(Error::invalid(
            "input is too large to be compressed (over 4 GiB)",
        ));
    }
    let n_parts = input.md.count() + input.data.count();
    let own = out.md.push_uninit(8 + 8 * n_parts);
    own[0..4].copy_from_slice(&(input.md.count() as u32).to_le_bytes());
    own[4..8].copy_from_slice(&(input.data.count() as u32).to_le_bytes());
    let mut k = 0;
    out.data.push_with(|buf| {
        for (i, part) in input.md.iter().chain(input.data.iter()).enumerate() {
            let start = buf.len();
            compress_part(c, ctx, part, buf).with_context(|| {
                if i < input.md.count() {
                    format!("metadata part {i}")
                } else {
                    format!("data part {}", i - input.md.count())
                }
            })?;
            let compressed = buf.len() - start;
            let compressed = u32::try_from(compressed)
                .map_err(|_| Error::invalid("compressed part exceeds 4 GiB"))?;
            own[8 + 8 * k..12 + 8 * k].copy_from_slice(&(part.len() as u32).to_le_bytes());
            own[12 + 8 * k..16 + 8 * k].copy_from_slice(&compressed.to_le_bytes());
            k += 1;
        }
        Ok::<(), Error>(())
    })?;
    Ok(DataFlow::Written)
}

/// A compression stage's part table (its own metadata), checked against the compressed bytes
/// before anything is allocated: every part's declared size must be possible for its
/// compressed size at the codec's largest ratio, and a ZSTD frame that records its content
/// size must record the declared one.
pub struct PartTable {
    /// `(uncompressed, compressed)` of each metadata part.
    pub md: Vec<(usize, usize)>,
    /// `(uncompressed, compressed)` of each data part.
    pub data: Vec<(usize, usize)>,
}

impl PartTable {
    /// Reads and checks the part table in `md` for the compressed parts in `data`.
    pub fn read(c: &CompressionOptions, md: &[u8], data: &[u8]) -> Result<PartTable> {
        let mut r = ByteReader::new(md, "compression metadata");
        let n_md = r.u32()? as u64;
        let n_data = r.u32()? as u64;
        let table = r.take(
            usize::try_from((n_md + n_data) * 8)
                .map_err(|_| Error::corrupt("compression metadata: part count overflows"))?,
        )?;
        let sizes: Vec<(usize, usize)> = table
            .chunks_exact(8)
            .map(|e| {
                (
                    u32::from_le_bytes([e[0], e[1], e[2], e[3]]) as usize,
                    u32::from_le_bytes([e[4], e[5], e[6], e[7]]) as usize,
                )
            })
            .collect();
        let compressed_total: usize = sizes.iter().map(|s| s.1).sum();
        if compressed_total > data.len() {
            return Err(Error::corrupt(format!(
                "compressed parts total {compressed_total} bytes but only {} bytes of data",
                data.len()
            )));
        }
        let ratio = super::reverse_max_ratio(&crate::filters::config::Filter::Compression(*c));
        let mut at = 0;
        for (i, &(u, z)) in sizes.iter().enumerate() {
            let what = || {
                if (i as u64) < n_md {
                    format!("metadata part {i}")
                } else {
                    format!("data part {}", i as u64 - n_md)
                }
            };
            if u as u64 > (z as u64).saturating_mul(ratio).saturating_add(64) {
                return Err(Error::corrupt(format!(
                    "{}: {u} bytes are impossible from {z} compressed bytes",
                    what()
                )));
            }
            if c.compressor == Compressor::Zstd
                && let Some(n) = crate::codecs::zstd::frame_content_size(&data[at..at + z])
                && n != u as u64
            {
                return Err(Error::corrupt(format!(
                    "{}: the zstd frame holds {n} bytes, the part table says {u}",
                    what()
                )));
            }
            at += z;
        }
        let mut sizes = sizes;
        let data_sizes = sizes.split_off(n_md as usize);
        Ok(PartTable {
            md: sizes,
            data: data_sizes,
        })
    }

    /// Bytes of the restored data stream.
    pub fn data_total(&self) -> usize {
        self.data.iter().map(|s| s.0).sum()
    }
}

/// Reverse: decompresses every part into the restored metadata and data streams.
pub fn reverse(
    c: &CompressionOptions,
    ctx: &mut StageCtx<'_>,
    input: RevIn<'_>,
    mut out: RevOut<'_>,
) -> Result<(MdFlow, DataFlow)> {
    let table = PartTable::read(c, input.md, input.data)?;
    let (md_sizes, data_sizes) = (&table.md[..], &table.data[..]);
    let md_total: usize = md_sizes.iter().map(|s| s.0).sum();
    let data_total = table.data_total();
    // Both restored streams are bounded by what the previous stage can produce.
    out.data.check_len(data_total)?;
    if let crate::engine::stage::DataSink::Scratch { limit, .. } = &out.data
        && md_total > *limit
    {
        return Err(Error::corrupt(format!(
            "restored metadata of {md_total} bytes exceeds the {limit} bytes possible"
        )));
    }
    let mut src = ByteReader::new(input.data, "compressed data");
    out.md.clear();
    out.md.resize(md_total, 0);
    let mut md = OutBuf::from_init(&mut out.md[..]);
    for (i, &(u, z)) in md_sizes.iter().enumerate() {
        let part = src.take(z)?;
        md.sub(u, |d| decompress_part(c, ctx, part, d))
            .with_context(|| format!("metadata part {i}"))?;
    }
    let mut dst = out.data.alloc(data_total)?;
    for (i, &(u, z)) in data_sizes.iter().enumerate() {
        let part = src.take(z)?;
        dst.sub(u, |d| decompress_part(c, ctx, part, d))
            .with_context(|| format!("data part {i}"))?;
    }
    Ok((MdFlow::Written, DataFlow::Written))
}

/// Forward of any compression filter whose parts all go through its codec.
pub fn forward_filter(
    f: &Filter,
    ctx: &mut StageCtx<'_>,
    input: FwdIn<'_>,
    out: FwdOut<'_>,
) -> Result<DataFlow> {
    match f {
        Filter::Compression(c) => forward(c, ctx, input, out),
        other => Err(wrong_filter(other.filter_type(), other)),
    }
}

/// Reverse of any compression filter whose parts all go through its codec.
pub fn reverse_filter(
    f: &Filter,
    ctx: &mut StageCtx<'_>,
    input: RevIn<'_>,
    out: RevOut<'_>,
) -> Result<(MdFlow, DataFlow)> {
    match f {
        Filter::Compression(c) => reverse(c, ctx, input, out),
        other => Err(wrong_filter(other.filter_type(), other)),
    }
}

/// The descriptor of a compression filter whose every part goes through one codec
/// (`reverse_max_ratio`: the codec's largest expansion on decode).
pub const fn codec_descriptor(
    filter_type: FilterType,
    compressor: Compressor,
    reinterpret_since: Option<u32>,
    reverse_max_ratio: u64,
) -> FilterDescriptor {
    FilterDescriptor {
        filter_type,
        default: compression_default(compressor),
        positional: Some(FilterOption::CompressionLevel),
        layout: OptionsLayout::Compression { reinterpret_since },
        forward: forward_filter,
        reverse: reverse_filter,
        fixed_growth: growth::compressor,
        unbounded_on_strings: false,
        reverse_max_ratio,
        encodes_empty_part: true,
    }
}
