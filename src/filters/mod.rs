//! One module per filter, each with its forward (write) and reverse (read) code and tests.
//! This module dispatches a configured [`Filter`] to its implementation.

pub mod bitshuffle;
pub mod byteshuffle;
pub mod bzip2;
pub mod checksum;
pub mod compression;
pub mod gzip;
pub mod lz4;
pub mod none;
pub mod zstd;

use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::filter_type::{Compressor, FilterType};
use crate::stage::{DataFlow, FwdIn, FwdOut, MdFlow, RevIn, RevOut, StageCtx};

/// True when this build implements the filter type.
pub fn is_implemented(t: FilterType) -> bool {
    matches!(
        t,
        FilterType::None
            | FilterType::Gzip
            | FilterType::Zstd
            | FilterType::Lz4
            | FilterType::Bzip2
            | FilterType::Bitshuffle
            | FilterType::Byteshuffle
            | FilterType::ChecksumMd5
            | FilterType::ChecksumSha256
    )
}

fn unsupported(filter: &Filter) -> Error {
    Error::Unsupported(format!(
        "filter {} is not supported by this version of tdbfilter",
        filter.name()
    ))
}

/// Runs one filter forward on one chunk's stage input.
pub fn forward(
    filter: &Filter,
    ctx: &mut StageCtx<'_>,
    input: FwdIn<'_>,
    out: FwdOut<'_>,
) -> Result<DataFlow> {
    match filter {
        Filter::None => Ok(none::forward(input, out)),
        Filter::Compression(c) => match c.compressor {
            Compressor::NoCompression => Ok(none::forward(input, out)),
            Compressor::Gzip | Compressor::Zstd | Compressor::Lz4 | Compressor::Bzip2 => {
                compression::forward(c, ctx, input, out)
            }
            _ => Err(unsupported(filter)),
        },
        Filter::Byteshuffle => byteshuffle::forward(ctx, input, out),
        Filter::Bitshuffle => bitshuffle::forward(ctx, input, out),
        Filter::ChecksumMd5 => Ok(checksum::forward::<md5::Md5>(input, out)),
        Filter::ChecksumSha256 => Ok(checksum::forward::<sha2::Sha256>(input, out)),
        _ => Err(unsupported(filter)),
    }
}

/// Runs one filter in reverse on one chunk's stage input.
pub fn reverse(
    filter: &Filter,
    ctx: &mut StageCtx<'_>,
    input: RevIn<'_>,
    out: RevOut<'_>,
) -> Result<(MdFlow, DataFlow)> {
    match filter {
        Filter::None => Ok(none::reverse()),
        Filter::Compression(c) => match c.compressor {
            Compressor::NoCompression => Ok(none::reverse()),
            Compressor::Gzip | Compressor::Zstd | Compressor::Lz4 | Compressor::Bzip2 => {
                compression::reverse(c, ctx, input, out)
            }
            _ => Err(unsupported(filter)),
        },
        Filter::Byteshuffle => byteshuffle::reverse(ctx, input, out),
        Filter::Bitshuffle => bitshuffle::reverse(ctx, input, out),
        Filter::ChecksumMd5 => checksum::reverse::<md5::Md5>(ctx, input),
        Filter::ChecksumSha256 => checksum::reverse::<sha2::Sha256>(ctx, input),
        _ => Err(unsupported(filter)),
    }
}

/// An upper bound on a filter's forward output (metadata + data) for `n` input bytes.
/// Used to bound what a reverse stage may produce from untrusted input.
pub fn forward_bound(filter: &Filter, n: usize) -> usize {
    let slack = 4096usize;
    let f = match filter {
        Filter::None => 1,
        Filter::Compression(c) => match c.compressor {
            Compressor::Rle => 3,
            _ => 2,
        },
        Filter::BitWidthReduction { .. } | Filter::PositiveDelta { .. } => 8,
        Filter::ScaleFloat(_) | Filter::Webp(_) => 2,
        _ => 1,
    };
    n.saturating_mul(f).saturating_add(slack)
}

/// An upper bound on how many times larger a filter's reverse output can be than its input.
pub fn reverse_max_ratio(filter: &Filter) -> u64 {
    match filter {
        Filter::Compression(c) => match c.compressor {
            Compressor::NoCompression => 1,
            Compressor::Gzip => 1032,
            Compressor::Zstd => 32768,
            Compressor::Lz4 => 256,
            Compressor::Rle => 65535,
            Compressor::DoubleDelta => 32,
            Compressor::Delta => 1,
            Compressor::Bzip2 | Compressor::Dictionary => u64::MAX,
        },
        Filter::BitWidthReduction { .. } | Filter::ScaleFloat(_) => 8,
        Filter::Webp(_) => u64::MAX,
        _ => 1,
    }
}
