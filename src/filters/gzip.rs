//! GZIP (1): one zlib stream per part, through the compression framework (docs/FORMAT.md §5.2, §5.3); the codec
//! itself is `crate::codecs::gzip`.

use super::compression::codec_descriptor;
use crate::filters::registry::FilterDescriptor;
use crate::format::filter_type::{Compressor, FilterType};

/// The GZIP filter's descriptor.
pub const DESCRIPTOR: FilterDescriptor =
    codec_descriptor(FilterType::Gzip, Compressor::Gzip, None, 1032);
