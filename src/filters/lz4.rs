//! LZ4 (3): one raw LZ4 block per part, through the compression framework (docs/FORMAT.md §5.2, §5.5); the codec
//! itself is `crate::codecs::lz4`.

use super::compression::codec_descriptor;
use crate::filters::registry::FilterDescriptor;
use crate::format::filter_type::{Compressor, FilterType};

/// The LZ4 filter's descriptor.
pub const DESCRIPTOR: FilterDescriptor =
    codec_descriptor(FilterType::Lz4, Compressor::Lz4, None, 256);
