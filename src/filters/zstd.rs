//! ZSTD (2): one zstd frame per part, through the compression framework (docs/FORMAT.md §5.2, §5.4); the codec
//! itself is `crate::codecs::zstd`.

use super::compression::codec_descriptor;
use crate::filters::registry::FilterDescriptor;
use crate::format::filter_type::{Compressor, FilterType};

/// The ZSTD filter's descriptor.
pub const DESCRIPTOR: FilterDescriptor =
    codec_descriptor(FilterType::Zstd, Compressor::Zstd, None, 32768);
