//! One module per filter, each with its forward (write) and reverse (read) code, its
//! descriptor ([`registry`]) and its tests; `config` holds a configured filter's options.
//! This module dispatches a configured [`Filter`] through its descriptor. Section numbers (§)
//! in this folder are those of docs/FORMAT.md.

pub mod aes256gcm;
pub mod bit_width_reduction;
pub mod bitshuffle;
pub mod byteshuffle;
pub mod bzip2;
pub mod checksum;
pub mod compression;
pub mod config;
pub mod delta;
pub mod dictionary;
pub mod double_delta;
pub mod gzip;
mod int_values;
pub mod lz4;
pub mod none;
pub mod positive_delta;
pub mod registry;
pub mod rle;
pub mod scale_float;
pub mod var_string;
pub mod webp;
pub mod xor;
pub mod zstd;

#[cfg(test)]
pub(crate) mod testing;

use crate::engine::stage::{DataFlow, FwdIn, FwdOut, MdFlow, RevIn, RevOut, StageCtx};
use crate::error::Result;
use crate::filters::config::Filter;
use crate::format::datatype::Datatype;
use checksum::DigestKind;

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
    (registry::descriptor(filter.filter_type()).forward)(filter, ctx, input, out)
}

/// Runs one filter in reverse on one chunk's stage input.
pub fn reverse(
    filter: &Filter,
    ctx: &mut StageCtx<'_>,
    input: RevIn<'_>,
    out: RevOut<'_>,
) -> Result<(MdFlow, DataFlow)> {
    (registry::descriptor(filter.filter_type()).reverse)(filter, ctx, input, out)
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
    registry::descriptor(filter.filter_type()).encodes_empty_part
}

/// An upper bound on a filter's forward output (metadata + data) for `n` input bytes of one
/// chunk. Used to bound what a reverse stage may produce from untrusted input. The var-string
/// path of RLE and DICTIONARY has no bound in bytes (many empty strings encode to runs).
pub fn forward_bound(filter: &Filter, n: usize) -> usize {
    if registry::descriptor(filter.filter_type()).unbounded_on_strings {
        usize::MAX
    } else {
        fixed_tile_bound(filter, n)
    }
}

/// An upper bound on a filter's forward output (metadata + data) for `n` input bytes of one
/// chunk of a fixed-size tile.
pub fn fixed_tile_bound(filter: &Filter, n: usize) -> usize {
    const SLACK: usize = 4096;
    (registry::descriptor(filter.filter_type()).fixed_growth)(n).saturating_add(SLACK)
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
    registry::descriptor(filter.filter_type()).reverse_max_ratio
}
