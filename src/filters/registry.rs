//! One descriptor per filter type, declared in the filter's own file and listed here once.
//! The pipeline's dispatch, the serializer's option layouts and their version rules, the spec
//! parser's positional option, TileDB's defaults and the size bounds of untrusted input all
//! read the descriptor: adding a filter is its own file plus one line in [`FILTERS`] (and its
//! id in `format::filter_type`).

use crate::engine::stage::{DataFlow, FwdIn, FwdOut, MdFlow, RevIn, RevOut, StageCtx};
use crate::error::{Error, Result};
use crate::filters::config::{CompressionOptions, Filter, ScaleFloatOptions, WebpOptions};
use crate::format::byte_reader::ByteReader;
use crate::format::datatype::Datatype;
use crate::format::filter_type::{Compressor, FilterOption, FilterType};

/// Runs a filter forward on one chunk's stage input.
pub type ForwardFn =
    for<'a, 'b> fn(&Filter, &mut StageCtx<'a>, FwdIn<'b>, FwdOut<'b>) -> Result<DataFlow>;

/// Runs a filter in reverse on one chunk's stage input.
pub type ReverseFn =
    for<'a, 'b> fn(&Filter, &mut StageCtx<'a>, RevIn<'b>, RevOut<'b>) -> Result<(MdFlow, DataFlow)>;

/// How a filter's options are stored in a serialized pipeline (docs/FORMAT.md §3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionsLayout {
    /// No option bytes.
    Empty,
    /// `u8 compressor, i32 level`, then `u8 reinterpret datatype` from format version
    /// `reinterpret_since` on (DELTA 19, DOUBLE_DELTA 20).
    Compression {
        /// The first format version that stores the reinterpret datatype.
        reinterpret_since: Option<u32>,
    },
    /// `u32 max window` (BIT_WIDTH_REDUCTION, POSITIVE_DELTA).
    Window,
    /// `f64 factor, f64 offset, u64 byte width`.
    ScaleFloat,
    /// `f32 quality, u8 input format, u8 lossless, u16 y extent, u16 x extent`, 2 padding bytes.
    Webp,
}

/// What the library knows of one filter type.
pub struct FilterDescriptor {
    /// The filter type (TileDB's id).
    pub filter_type: FilterType,
    /// The filter with TileDB's default options.
    pub default: Filter,
    /// The option a bare `:VALUE` sets in a pipeline spec (`zstd:3`, `bit_width_reduction:128`).
    pub positional: Option<FilterOption>,
    /// How the options are serialized.
    pub layout: OptionsLayout,
    /// Forward (write) on one chunk.
    pub forward: ForwardFn,
    /// Reverse (read) on one chunk.
    pub reverse: ReverseFn,
    /// An upper bound on the forward output (metadata + data, before slack) for `n` input
    /// bytes of one chunk of a fixed-size tile.
    pub fixed_growth: fn(usize) -> usize,
    /// Whether the forward output of a var-size string tile has no bound in bytes (RLE and
    /// DICTIONARY: many empty strings encode to runs).
    pub unbounded_on_strings: bool,
    /// An upper bound on how many times larger the reverse output can be than its input.
    pub reverse_max_ratio: u64,
    /// Whether the filter can write an empty data part that TileDB 2.30 reads back; where it
    /// cannot, var-size tiles are written without TileDB's trailing empty chunk.
    pub encodes_empty_part: bool,
}

/// Every filter type, in TileDB's numeric order.
pub static FILTERS: &[&FilterDescriptor] = &[
    &super::none::DESCRIPTOR,
    &super::gzip::DESCRIPTOR,
    &super::zstd::DESCRIPTOR,
    &super::lz4::DESCRIPTOR,
    &super::rle::DESCRIPTOR,
    &super::bzip2::DESCRIPTOR,
    &super::double_delta::DESCRIPTOR,
    &super::bit_width_reduction::DESCRIPTOR,
    &super::bitshuffle::DESCRIPTOR,
    &super::byteshuffle::DESCRIPTOR,
    &super::positive_delta::DESCRIPTOR,
    &super::aes256gcm::DESCRIPTOR,
    &super::checksum::MD5_DESCRIPTOR,
    &super::checksum::SHA256_DESCRIPTOR,
    &super::dictionary::DESCRIPTOR,
    &super::scale_float::DESCRIPTOR,
    &super::xor::DESCRIPTOR,
    &super::webp::DESCRIPTOR,
    &super::delta::DESCRIPTOR,
];

/// The descriptor of a filter type.
pub fn descriptor(t: FilterType) -> &'static FilterDescriptor {
    FILTERS
        .iter()
        .find(|d| d.filter_type == t)
        .expect("every FilterType has a descriptor (checked by the registry tests)")
}

/// Bounds shared by several descriptors.
pub mod growth {
    /// Output no larger than the input.
    pub fn same(n: usize) -> usize {
        n
    }
    /// Compressors stay within n + n/16 (zlib, zstd, LZ4 and bzip2 worst cases are smaller).
    pub fn compressor(n: usize) -> usize {
        n.saturating_add(n / 16)
    }
}

/// The error a descriptor's function gives when handed another filter's options (a bug).
pub fn wrong_filter(expected: FilterType, got: &Filter) -> Error {
    Error::Internal(format!(
        "{} descriptor called with a {} filter",
        expected.name(),
        got.name()
    ))
}

/// The descriptor of a filter without options whose output is no larger than its input and
/// whose reverse restores at most its input (shuffles, XOR, checksums, AES-256-GCM).
pub const fn plain_descriptor(
    filter_type: FilterType,
    default: Filter,
    forward: ForwardFn,
    reverse: ReverseFn,
) -> FilterDescriptor {
    FilterDescriptor {
        filter_type,
        default,
        positional: None,
        layout: OptionsLayout::Empty,
        forward,
        reverse,
        fixed_growth: growth::same,
        unbounded_on_strings: false,
        reverse_max_ratio: 1,
        encodes_empty_part: true,
    }
}

/// The compression options of a compression filter, or the internal error.
pub fn compression_options(t: FilterType, f: &Filter) -> Result<&CompressionOptions> {
    match f {
        Filter::Compression(c) if c.compressor.filter_type() == t => Ok(c),
        other => Err(wrong_filter(t, other)),
    }
}

/// The default options of compression filter `compressor`.
pub const fn compression_default(compressor: Compressor) -> Filter {
    Filter::Compression(CompressionOptions {
        compressor,
        level: crate::filters::config::DEFAULT_LEVEL,
        reinterpret: Datatype::Any,
    })
}

impl OptionsLayout {
    /// Bytes of the options at format version `version`.
    pub fn len(self, version: u32) -> usize {
        match self {
            OptionsLayout::Empty => 0,
            OptionsLayout::Compression { reinterpret_since } => {
                if reinterpret_since.is_some_and(|v| version >= v) {
                    6
                } else {
                    5
                }
            }
            OptionsLayout::Window => 4,
            OptionsLayout::ScaleFloat => 24,
            OptionsLayout::Webp => 12,
        }
    }

    /// Whether the layout stores nothing at any version.
    pub fn is_empty(self) -> bool {
        self == OptionsLayout::Empty
    }

    /// Appends `filter`'s options as format version `version` stores them.
    pub fn write(self, filter: &Filter, version: u32, out: &mut Vec<u8>) {
        match (self, filter) {
            (OptionsLayout::Compression { .. }, Filter::Compression(c)) => {
                out.push(c.compressor as u8);
                out.extend_from_slice(&c.level.to_le_bytes());
                if self.len(version) == 6 {
                    out.push(c.reinterpret as u8);
                }
            }
            (OptionsLayout::Window, Filter::BitWidthReduction { max_window })
            | (OptionsLayout::Window, Filter::PositiveDelta { max_window }) => {
                out.extend_from_slice(&max_window.to_le_bytes());
            }
            (OptionsLayout::ScaleFloat, Filter::ScaleFloat(o)) => {
                out.extend_from_slice(&o.factor.to_le_bytes());
                out.extend_from_slice(&o.offset.to_le_bytes());
                out.extend_from_slice(&o.byte_width.to_le_bytes());
            }
            (OptionsLayout::Webp, Filter::Webp(o)) => {
                out.extend_from_slice(&o.quality.to_le_bytes());
                out.push(o.input_format);
                out.push(o.lossless as u8);
                out.extend_from_slice(&o.y_extent.to_le_bytes());
                out.extend_from_slice(&o.x_extent.to_le_bytes());
                // TileDB writes the 10-byte struct with its 2 bytes of tail padding, as zeros.
                out.extend_from_slice(&[0, 0]);
            }
            _ => {}
        }
    }

    /// Parses the options of a filter of type `t` (exactly `self.len(version)` bytes in `r`).
    pub fn read(self, t: FilterType, r: &mut ByteReader<'_>, version: u32) -> Result<Filter> {
        let d = descriptor(t);
        Ok(match self {
            OptionsLayout::Empty => d.default,
            OptionsLayout::Compression { .. } => {
                let c = r.u8()?;
                let compressor = Compressor::from_u8(c)
                    .ok_or_else(|| Error::corrupt(format!("unknown compressor {c}")))?;
                let level = r.i32()?;
                let reinterpret = if self.len(version) == 6 {
                    let v = r.u8()?;
                    Datatype::from_u8(v).ok_or_else(|| {
                        Error::corrupt(format!("unknown reinterpret datatype {v}"))
                    })?
                } else {
                    Datatype::Any
                };
                if compressor == Compressor::NoCompression {
                    Filter::None
                } else {
                    Filter::Compression(CompressionOptions {
                        compressor,
                        level,
                        reinterpret,
                    })
                }
            }
            OptionsLayout::Window => {
                let max_window = r.u32()?;
                match d.default {
                    Filter::BitWidthReduction { .. } => Filter::BitWidthReduction { max_window },
                    Filter::PositiveDelta { .. } => Filter::PositiveDelta { max_window },
                    other => return Err(wrong_filter(t, &other)),
                }
            }
            OptionsLayout::ScaleFloat => Filter::ScaleFloat(ScaleFloatOptions {
                factor: r.f64()?,
                offset: r.f64()?,
                byte_width: r.u64()?,
            }),
            OptionsLayout::Webp => {
                let o = WebpOptions {
                    quality: r.f32()?,
                    input_format: r.u8()?,
                    lossless: r.u8()? != 0,
                    y_extent: r.u16()?,
                    x_extent: r.u16()?,
                };
                r.take(2)?; // tail padding
                Filter::Webp(o)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_descriptor_per_filter_type_in_numeric_order() {
        let types: Vec<FilterType> = FILTERS.iter().map(|d| d.filter_type).collect();
        assert_eq!(types, FilterType::ALL);
        for d in FILTERS {
            assert_eq!(d.default.filter_type(), d.filter_type, "{}", d.filter_type);
            assert!(std::ptr::eq(descriptor(d.filter_type), *d));
        }
    }

    #[test]
    fn every_default_round_trips_through_its_layout_at_every_version() {
        for d in FILTERS {
            for version in 1..=crate::format::format_version::MAX_READ_FORMAT_VERSION {
                let mut bytes = Vec::new();
                d.layout.write(&d.default, version, &mut bytes);
                assert_eq!(
                    bytes.len(),
                    d.layout.len(version),
                    "{} v{version}",
                    d.filter_type
                );
                let mut r = ByteReader::new(&bytes, "options");
                let back = d.layout.read(d.filter_type, &mut r, version).unwrap();
                assert_eq!(back, d.default, "{} v{version}", d.filter_type);
                assert_eq!(r.remaining(), 0);
            }
        }
    }

    #[test]
    fn reinterpret_datatype_is_stored_from_its_version() {
        let dd = descriptor(FilterType::DoubleDelta).layout;
        assert_eq!((dd.len(19), dd.len(20)), (5, 6));
        let delta = descriptor(FilterType::Delta).layout;
        assert_eq!((delta.len(18), delta.len(19)), (5, 6));
        assert_eq!(descriptor(FilterType::Zstd).layout.len(22), 5);
    }
}
