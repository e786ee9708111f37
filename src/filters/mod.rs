//! One module per filter, each with its forward (write) and reverse (read) code and tests.
//! This module dispatches a configured [`Filter`] to its implementation.

pub mod aes256gcm;
pub mod bit_width_reduction;
pub mod bitshuffle;
pub mod byteshuffle;
pub mod bzip2;
pub mod checksum;
pub mod compression;
pub mod delta;
pub mod dictionary;
pub mod double_delta;
pub mod gzip;
mod int_values;
pub mod lz4;
pub mod none;
pub mod positive_delta;
pub mod rle;
pub mod scale_float;
pub mod var_string;
pub mod webp;
pub mod xor;
pub mod zstd;

#[cfg(test)]
pub(crate) mod testing;

use crate::datatype::Datatype;
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::filter_type::Compressor;
use crate::stage::{DataFlow, FwdIn, FwdOut, MdFlow, RevIn, RevOut, StageCtx};
use checksum::DigestKind;
use var_string::VarStringCodec;

/// True for the string types whose var-size tiles RLE and DICTIONARY encode with offsets
/// folded into the data (§5.8).
pub fn is_var_string_type(t: Datatype) -> bool {
    matches!(t, Datatype::StringAscii | Datatype::StringUtf8)
}

/// Runs one filter forward on one chunk's stage input.
pub fn forward(
    filter: &Filter,
    ctx: &mut StageCtx<'_>,
    input: FwdIn<'_>,
    out: FwdOut<'_>,
) -> Result<DataFlow> {
    let var_string = ctx.offsets.is_some() && is_var_string_type(ctx.datatype);
    match filter {
        Filter::None => Ok(none::forward(input, out)),
        Filter::Compression(c) => match c.compressor {
            Compressor::NoCompression => Ok(none::forward(input, out)),
            Compressor::Rle if var_string => {
                var_string::forward(VarStringCodec::Rle, ctx, input, out)
            }
            Compressor::Dictionary if var_string => {
                var_string::forward(VarStringCodec::Dictionary, ctx, input, out)
            }
            Compressor::Dictionary => Err(Error::invalid(
                "dictionary encoding only applies to variable length strings",
            )),
            _ => compression::forward(c, ctx, input, out),
        },
        Filter::Byteshuffle => byteshuffle::forward(ctx, input, out),
        Filter::Bitshuffle => bitshuffle::forward(ctx, input, out),
        Filter::ChecksumMd5 => Ok(checksum::forward(
            DigestKind::Md5,
            !ctx.defer_digests,
            input,
            out,
        )),
        Filter::ChecksumSha256 => Ok(checksum::forward(
            DigestKind::Sha256,
            !ctx.defer_digests,
            input,
            out,
        )),
        Filter::BitWidthReduction { max_window } => {
            bit_width_reduction::forward(*max_window, ctx, input, out)
        }
        Filter::PositiveDelta { max_window } => {
            positive_delta::forward(*max_window, ctx, input, out)
        }
        Filter::Xor => xor::forward(ctx, input, out),
        Filter::ScaleFloat(o) => scale_float::forward(o, ctx, input, out),
        Filter::Webp(o) => webp::forward(o, ctx, input, out),
        Filter::Aes256Gcm => aes256gcm::forward(ctx, input, out),
    }
}

/// Runs one filter in reverse on one chunk's stage input.
pub fn reverse(
    filter: &Filter,
    ctx: &mut StageCtx<'_>,
    input: RevIn<'_>,
    out: RevOut<'_>,
) -> Result<(MdFlow, DataFlow)> {
    let var_string = out.offsets.is_some();
    match filter {
        Filter::None => Ok(none::reverse()),
        Filter::Compression(c) => match c.compressor {
            Compressor::NoCompression => Ok(none::reverse()),
            Compressor::Rle if var_string => {
                var_string::reverse(VarStringCodec::Rle, ctx, input, out)
            }
            Compressor::Dictionary if var_string => {
                var_string::reverse(VarStringCodec::Dictionary, ctx, input, out)
            }
            Compressor::Dictionary => Err(Error::corrupt(
                "dictionary encoding only applies to variable length strings",
            )),
            _ => compression::reverse(c, ctx, input, out),
        },
        Filter::Byteshuffle => byteshuffle::reverse(ctx, input, out),
        Filter::Bitshuffle => bitshuffle::reverse(ctx, input, out),
        Filter::ChecksumMd5 => checksum::reverse(DigestKind::Md5, ctx, input),
        Filter::ChecksumSha256 => checksum::reverse(DigestKind::Sha256, ctx, input),
        Filter::BitWidthReduction { .. } => bit_width_reduction::reverse(ctx, input, out),
        Filter::PositiveDelta { .. } => positive_delta::reverse(ctx, input, out),
        Filter::Xor => xor::reverse(ctx, input, out),
        Filter::ScaleFloat(o) => scale_float::reverse(o, ctx, input, out),
        Filter::Webp(o) => webp::reverse(o, ctx, input, out),
        Filter::Aes256Gcm => aes256gcm::reverse(ctx, input, out),
    }
}

/// The digest of a checksum filter, `None` for every other filter.
pub fn digest_kind(filter: &Filter) -> Option<DigestKind> {
    match filter {
        Filter::ChecksumMd5 => Some(DigestKind::Md5),
        Filter::ChecksumSha256 => Some(DigestKind::Sha256),
        _ => None,
    }
}

/// Whether the filter can write an empty data part that TileDB 2.30 reads back. Where it
/// cannot, var-size tiles are written without TileDB's trailing empty chunk.
pub fn encodes_empty_part(filter: &Filter) -> bool {
    !matches!(filter, Filter::Compression(c) if c.compressor == Compressor::Delta)
}

/// An upper bound on a filter's forward output (metadata + data) for `n` input bytes of one
/// chunk. Used to bound what a reverse stage may produce from untrusted input. The var-string
/// path of RLE and DICTIONARY has no bound in bytes (many empty strings encode to runs).
pub fn forward_bound(filter: &Filter, n: usize) -> usize {
    match filter {
        Filter::Compression(c)
            if matches!(c.compressor, Compressor::Rle | Compressor::Dictionary) =>
        {
            usize::MAX
        }
        _ => fixed_tile_bound(filter, n),
    }
}

/// An upper bound on a filter's forward output (metadata + data) for `n` input bytes of one
/// chunk of a fixed-size tile.
pub fn fixed_tile_bound(filter: &Filter, n: usize) -> usize {
    let slack = 4096usize;
    let grown = match filter {
        // Fixed RLE with 1-byte cells: every byte a run of its own plus a u16 length.
        Filter::Compression(c) if c.compressor == Compressor::Rle => n.saturating_mul(3),
        // Compressors stay within n + n/16 (zlib, zstd, lz4, bzip2 worst cases are smaller).
        Filter::Compression(_) => n.saturating_add(n / 16),
        // Windows of one element: a header of up to 13 bytes per 2-byte element.
        Filter::BitWidthReduction { .. } | Filter::PositiveDelta { .. } => n.saturating_mul(8),
        // 4-byte floats to 8-byte integers.
        Filter::ScaleFloat(_) => n.saturating_mul(2),
        Filter::Webp(_) => n.saturating_add(n / 4),
        _ => n,
    };
    grown.saturating_add(slack)
}

/// An upper bound on how many times larger the reverse of a whole filter list can make its
/// input (the product of the filters' bounds, saturating).
pub fn reverse_max_ratio_of(filters: &[Filter]) -> u64 {
    filters
        .iter()
        .map(reverse_max_ratio)
        .fold(1u64, |a, r| a.saturating_mul(r))
}

/// An upper bound on how many times larger a filter's reverse output can be than its input.
pub fn reverse_max_ratio(filter: &Filter) -> u64 {
    match filter {
        Filter::Compression(c) => match c.compressor {
            Compressor::NoCompression => 1,
            Compressor::Gzip => 1032,
            Compressor::Zstd => 32768,
            Compressor::Lz4 => 256,
            // Each run is a value of v bytes and a u16 count: at most 65535·v out of v + 2 in.
            Compressor::Rle => 65536,
            Compressor::DoubleDelta => 64,
            Compressor::Delta => 1,
            Compressor::Bzip2 | Compressor::Dictionary => u64::MAX,
        },
        Filter::BitWidthReduction { .. } | Filter::ScaleFloat(_) => 8,
        Filter::Webp(_) => u64::MAX,
        _ => 1,
    }
}
