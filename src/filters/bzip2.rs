//! BZIP2 (5): one bzip2 stream per part, through the compression framework (docs/FORMAT.md §5.2, §5.6); the codec
//! itself is `crate::codecs::bzip2::libbzip2`.

use super::compression::codec_descriptor;
use crate::filters::registry::FilterDescriptor;
use crate::format::filter_type::{Compressor, FilterType};

/// The BZIP2 filter's descriptor.
pub const DESCRIPTOR: FilterDescriptor =
    codec_descriptor(FilterType::Bzip2, Compressor::Bzip2, None, u64::MAX);
