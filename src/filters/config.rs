//! A configured filter: its type and options (docs/FORMAT.md §1.5, §3.3), option get/set with
//! TileDB's value types, and the filter data type it hands to the next stage (§4.8).

use crate::error::{Error, Result};
use crate::format::datatype::Datatype;
use crate::format::filter_type::{Compressor, FilterOption, FilterType};

/// Options of a compression filter (GZIP, ZSTD, LZ4, RLE, BZIP2, DOUBLE_DELTA, DICTIONARY, DELTA).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompressionOptions {
    /// Which compressor runs; it decides the behaviour, as in TileDB.
    pub compressor: Compressor,
    /// Compression level as stored (default −1); each compressor maps it as TileDB does.
    pub level: i32,
    /// Datatype DELTA / DOUBLE_DELTA reinterpret their input as (ANY = none).
    pub reinterpret: Datatype,
}

/// Options of SCALE_FLOAT.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleFloatOptions {
    /// Scale factor (default 1.0).
    pub factor: f64,
    /// Offset (default 0.0).
    pub offset: f64,
    /// Output integer width in bytes: 1, 2, 4 or 8 (default 8).
    pub byte_width: u64,
}

/// Options of WEBP.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WebpOptions {
    /// Lossy quality, 0..=100 (default 100).
    pub quality: f32,
    /// Input pixel format (0 none, 1 RGB, 2 BGR, 3 RGBA, 4 BGRA).
    pub input_format: u8,
    /// Lossless encoding.
    pub lossless: bool,
    /// Tile extent of dimension 0 (rows).
    pub y_extent: u16,
    /// Tile extent of dimension 1 in bytes (pixels × depth).
    pub x_extent: u16,
}

/// One filter of a pipeline with its options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Filter {
    /// NONE.
    None,
    /// A compression filter.
    Compression(CompressionOptions),
    /// BIT_WIDTH_REDUCTION with its maximum window in bytes.
    BitWidthReduction {
        /// Maximum window size in bytes (default 256).
        max_window: u32,
    },
    /// POSITIVE_DELTA with its maximum window in bytes.
    PositiveDelta {
        /// Maximum window size in bytes (default 1024).
        max_window: u32,
    },
    /// BITSHUFFLE.
    Bitshuffle,
    /// BYTESHUFFLE.
    Byteshuffle,
    /// CHECKSUM_MD5.
    ChecksumMd5,
    /// CHECKSUM_SHA256.
    ChecksumSha256,
    /// SCALE_FLOAT.
    ScaleFloat(ScaleFloatOptions),
    /// XOR.
    Xor,
    /// WEBP.
    Webp(WebpOptions),
    /// The internal AES-256-GCM filter.
    Aes256Gcm,
}

/// A typed option value, as TileDB's C API passes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OptionValue {
    /// `int32_t`
    I32(i32),
    /// `uint32_t`
    U32(u32),
    /// `uint64_t`
    U64(u64),
    /// `double`
    F64(f64),
    /// `float`
    F32(f32),
    /// `uint8_t`
    U8(u8),
}

impl OptionValue {
    /// The value of C type `kind` held in `bytes` (native byte order), or `None` when `bytes`
    /// is not exactly the type's size.
    pub fn from_ne_bytes(kind: OptionKind, bytes: &[u8]) -> Option<OptionValue> {
        Some(match kind {
            OptionKind::I32 => OptionValue::I32(i32::from_ne_bytes(bytes.try_into().ok()?)),
            OptionKind::U32 => OptionValue::U32(u32::from_ne_bytes(bytes.try_into().ok()?)),
            OptionKind::U64 => OptionValue::U64(u64::from_ne_bytes(bytes.try_into().ok()?)),
            OptionKind::F64 => OptionValue::F64(f64::from_ne_bytes(bytes.try_into().ok()?)),
            OptionKind::F32 => OptionValue::F32(f32::from_ne_bytes(bytes.try_into().ok()?)),
            OptionKind::U8 => OptionValue::U8(u8::from_ne_bytes(bytes.try_into().ok()?)),
        })
    }

    /// The value's bytes in native byte order (its C type's size).
    pub fn to_ne_bytes(self) -> Vec<u8> {
        match self {
            OptionValue::I32(x) => x.to_ne_bytes().to_vec(),
            OptionValue::U32(x) => x.to_ne_bytes().to_vec(),
            OptionValue::U64(x) => x.to_ne_bytes().to_vec(),
            OptionValue::F64(x) => x.to_ne_bytes().to_vec(),
            OptionValue::F32(x) => x.to_ne_bytes().to_vec(),
            OptionValue::U8(x) => x.to_ne_bytes().to_vec(),
        }
    }
}

/// The C value type TileDB uses for an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionKind {
    /// `int32_t`
    I32,
    /// `uint32_t`
    U32,
    /// `uint64_t`
    U64,
    /// `double`
    F64,
    /// `float`
    F32,
    /// `uint8_t`
    U8,
}

impl OptionKind {
    /// Bytes of the C type.
    pub fn size(self) -> usize {
        match self {
            OptionKind::U8 => 1,
            OptionKind::I32 | OptionKind::U32 | OptionKind::F32 => 4,
            OptionKind::U64 | OptionKind::F64 => 8,
        }
    }

    /// The C type's name, e.g. `"int32_t"`.
    pub fn c_type(self) -> &'static str {
        match self {
            OptionKind::I32 => "int32_t",
            OptionKind::U32 => "uint32_t",
            OptionKind::U64 => "uint64_t",
            OptionKind::F64 => "double",
            OptionKind::F32 => "float",
            OptionKind::U8 => "uint8_t",
        }
    }
}

impl FilterOption {
    /// The C type TileDB reads for this option.
    pub fn kind(self) -> OptionKind {
        use FilterOption::*;
        match self {
            CompressionLevel => OptionKind::I32,
            BitWidthMaxWindow | PositiveDeltaMaxWindow => OptionKind::U32,
            ScaleFloatBytewidth => OptionKind::U64,
            ScaleFloatFactor | ScaleFloatOffset => OptionKind::F64,
            WebpQuality => OptionKind::F32,
            WebpInputFormat | WebpLossless | CompressionReinterpretDatatype => OptionKind::U8,
        }
    }
}

/// Default compression level of every compression filter.
pub const DEFAULT_LEVEL: i32 = -1;

impl Filter {
    /// A filter of type `t` with TileDB's default options.
    pub fn new(t: FilterType) -> Filter {
        crate::filters::registry::descriptor(t).default
    }

    /// A compression filter with the given level.
    pub fn compression(t: FilterType, level: i32) -> Filter {
        let mut f = Filter::new(t);
        if let Filter::Compression(c) = &mut f {
            c.level = level;
        }
        f
    }

    /// The filter's type.
    pub fn filter_type(&self) -> FilterType {
        match self {
            Filter::None => FilterType::None,
            Filter::Compression(c) => c.compressor.filter_type(),
            Filter::BitWidthReduction { .. } => FilterType::BitWidthReduction,
            Filter::PositiveDelta { .. } => FilterType::PositiveDelta,
            Filter::Bitshuffle => FilterType::Bitshuffle,
            Filter::Byteshuffle => FilterType::Byteshuffle,
            Filter::ChecksumMd5 => FilterType::ChecksumMd5,
            Filter::ChecksumSha256 => FilterType::ChecksumSha256,
            Filter::ScaleFloat(_) => FilterType::ScaleFloat,
            Filter::Xor => FilterType::Xor,
            Filter::Webp(_) => FilterType::Webp,
            Filter::Aes256Gcm => FilterType::Aes256Gcm,
        }
    }

    /// TileDB's name of the filter, used in error messages.
    pub fn name(&self) -> &'static str {
        self.filter_type().name()
    }

    /// The filter data type handed to the next stage when this one receives `input` (§4.8).
    pub fn output_datatype(&self, input: Datatype) -> Datatype {
        let int_of_width = |w: u64| match w {
            1 => Datatype::Int8,
            2 => Datatype::Int16,
            4 => Datatype::Int32,
            _ => Datatype::Int64,
        };
        match self {
            Filter::Compression(c)
                if matches!(c.compressor, Compressor::Delta | Compressor::DoubleDelta)
                    && c.reinterpret != Datatype::Any =>
            {
                c.reinterpret
            }
            Filter::ScaleFloat(o) => int_of_width(o.byte_width),
            Filter::Xor => int_of_width(input.size() as u64),
            Filter::Aes256Gcm => Datatype::Blob,
            _ => input,
        }
    }

    /// Sets an option, validating it as TileDB does (and a little more where TileDB would
    /// only fail later, for example GZIP levels above 9 or a zero window).
    pub fn set_option(&mut self, option: FilterOption, value: OptionValue) -> Result<()> {
        if option.kind() != value_kind(value) {
            return Err(Error::invalid(format!(
                "{}: option {} takes a {:?} value",
                self.name(),
                option.name(),
                option.kind()
            )));
        }
        let name = self.name();
        let unsupported = || {
            Error::invalid(format!(
                "{name}: filter does not support option {}",
                option.name()
            ))
        };
        match (self, option, value) {
            (Filter::Compression(c), FilterOption::CompressionLevel, OptionValue::I32(level)) => {
                let max = match c.compressor {
                    Compressor::Gzip | Compressor::Bzip2 => Some(9),
                    _ => None,
                };
                if let Some(max) = max
                    && level > max
                {
                    return Err(Error::invalid(format!(
                        "{name}: invalid compression level {level} (at most {max})"
                    )));
                }
                c.level = level;
            }
            (
                Filter::Compression(c),
                FilterOption::CompressionReinterpretDatatype,
                OptionValue::U8(v),
            ) => {
                c.reinterpret = Datatype::from_u8(v).ok_or_else(|| {
                    Error::invalid(format!("{name}: unknown reinterpret datatype {v}"))
                })?;
            }
            (
                Filter::BitWidthReduction { max_window },
                FilterOption::BitWidthMaxWindow,
                OptionValue::U32(w),
            )
            | (
                Filter::PositiveDelta { max_window },
                FilterOption::PositiveDeltaMaxWindow,
                OptionValue::U32(w),
            ) => {
                if w == 0 {
                    return Err(Error::invalid(format!(
                        "{name}: {} must be greater than 0",
                        option.name()
                    )));
                }
                *max_window = w;
            }
            (Filter::ScaleFloat(o), FilterOption::ScaleFloatBytewidth, OptionValue::U64(w)) => {
                if !matches!(w, 1 | 2 | 4 | 8) {
                    return Err(Error::invalid(format!(
                        "{name}: byte width {w} is not 1, 2, 4 or 8"
                    )));
                }
                o.byte_width = w;
            }
            (Filter::ScaleFloat(o), FilterOption::ScaleFloatFactor, OptionValue::F64(f)) => {
                if !f.is_normal() {
                    return Err(Error::invalid(format!(
                        "{name}: factor {f} is not a normal floating-point number"
                    )));
                }
                o.factor = f;
            }
            (Filter::ScaleFloat(o), FilterOption::ScaleFloatOffset, OptionValue::F64(f)) => {
                if !f.is_finite() {
                    return Err(Error::invalid(format!("{name}: offset {f} is not finite")));
                }
                o.offset = f;
            }
            (Filter::Webp(o), FilterOption::WebpQuality, OptionValue::F32(q)) => {
                if !(0.0..=100.0).contains(&q) {
                    return Err(Error::invalid(format!(
                        "{name}: quality {q} is outside 0..100"
                    )));
                }
                o.quality = q;
            }
            (Filter::Webp(o), FilterOption::WebpInputFormat, OptionValue::U8(v)) => {
                if v > 4 {
                    return Err(Error::invalid(format!(
                        "{name}: input format {v} is outside 0..4"
                    )));
                }
                o.input_format = v;
            }
            (Filter::Webp(o), FilterOption::WebpLossless, OptionValue::U8(v)) => {
                if v > 1 {
                    return Err(Error::invalid(format!(
                        "{name}: lossless flag {v} is not 0 or 1"
                    )));
                }
                o.lossless = v == 1;
            }
            _ => return Err(unsupported()),
        }
        Ok(())
    }

    /// Sets a WEBP filter's tile extents: `y_extent` rows (dimension 0) and `x_extent` bytes
    /// per row (dimension 1 extent × pixel depth), as TileDB fills them from the array schema.
    pub fn set_webp_extents(&mut self, y_extent: u16, x_extent: u16) -> Result<()> {
        match self {
            Filter::Webp(o) => {
                o.y_extent = y_extent;
                o.x_extent = x_extent;
                Ok(())
            }
            other => Err(Error::invalid(format!(
                "{}: only WEBP has tile extents",
                other.name()
            ))),
        }
    }

    /// Reads an option in TileDB's value type.
    pub fn get_option(&self, option: FilterOption) -> Result<OptionValue> {
        Ok(match (self, option) {
            (Filter::Compression(c), FilterOption::CompressionLevel) => OptionValue::I32(c.level),
            (Filter::Compression(c), FilterOption::CompressionReinterpretDatatype) => {
                OptionValue::U8(c.reinterpret as u8)
            }
            (Filter::BitWidthReduction { max_window }, FilterOption::BitWidthMaxWindow)
            | (Filter::PositiveDelta { max_window }, FilterOption::PositiveDeltaMaxWindow) => {
                OptionValue::U32(*max_window)
            }
            (Filter::ScaleFloat(o), FilterOption::ScaleFloatBytewidth) => {
                OptionValue::U64(o.byte_width)
            }
            (Filter::ScaleFloat(o), FilterOption::ScaleFloatFactor) => OptionValue::F64(o.factor),
            (Filter::ScaleFloat(o), FilterOption::ScaleFloatOffset) => OptionValue::F64(o.offset),
            (Filter::Webp(o), FilterOption::WebpQuality) => OptionValue::F32(o.quality),
            (Filter::Webp(o), FilterOption::WebpInputFormat) => OptionValue::U8(o.input_format),
            (Filter::Webp(o), FilterOption::WebpLossless) => OptionValue::U8(o.lossless as u8),
            _ => {
                return Err(Error::invalid(format!(
                    "{}: filter does not support option {}",
                    self.name(),
                    option.name()
                )));
            }
        })
    }
}

fn value_kind(v: OptionValue) -> OptionKind {
    match v {
        OptionValue::I32(_) => OptionKind::I32,
        OptionValue::U32(_) => OptionKind::U32,
        OptionValue::U64(_) => OptionKind::U64,
        OptionValue::F64(_) => OptionKind::F64,
        OptionValue::F32(_) => OptionKind::F32,
        OptionValue::U8(_) => OptionKind::U8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_tiledbs() {
        assert_eq!(
            Filter::new(FilterType::Zstd).get_option(FilterOption::CompressionLevel),
            Ok(OptionValue::I32(-1))
        );
        assert_eq!(
            Filter::new(FilterType::BitWidthReduction).get_option(FilterOption::BitWidthMaxWindow),
            Ok(OptionValue::U32(256))
        );
        assert_eq!(
            Filter::new(FilterType::PositiveDelta).get_option(FilterOption::PositiveDeltaMaxWindow),
            Ok(OptionValue::U32(1024))
        );
        assert_eq!(
            Filter::new(FilterType::Delta).get_option(FilterOption::CompressionReinterpretDatatype),
            Ok(OptionValue::U8(17))
        );
    }

    #[test]
    fn option_validation() {
        let mut g = Filter::new(FilterType::Gzip);
        assert!(
            g.set_option(FilterOption::CompressionLevel, OptionValue::I32(10))
                .is_err()
        );
        assert!(
            g.set_option(FilterOption::CompressionLevel, OptionValue::I32(9))
                .is_ok()
        );
        assert!(
            g.set_option(FilterOption::CompressionLevel, OptionValue::U32(9))
                .is_err()
        );
        assert!(
            g.set_option(FilterOption::BitWidthMaxWindow, OptionValue::U32(9))
                .is_err()
        );
        let mut b = Filter::Byteshuffle;
        let e = b
            .set_option(FilterOption::CompressionLevel, OptionValue::I32(1))
            .unwrap_err();
        assert!(e.message().contains("BYTESHUFFLE"));
        let mut s = Filter::new(FilterType::ScaleFloat);
        assert!(
            s.set_option(FilterOption::ScaleFloatBytewidth, OptionValue::U64(3))
                .is_err()
        );
        assert!(
            s.set_option(FilterOption::ScaleFloatFactor, OptionValue::F64(0.0))
                .is_err()
        );
        assert!(
            s.set_option(FilterOption::ScaleFloatOffset, OptionValue::F64(f64::NAN))
                .is_err()
        );
    }

    #[test]
    fn output_datatypes() {
        let xor = Filter::Xor;
        assert_eq!(xor.output_datatype(Datatype::Float64), Datatype::Int64);
        let mut d = Filter::new(FilterType::Delta);
        assert_eq!(d.output_datatype(Datatype::Uint16), Datatype::Uint16);
        d.set_option(
            FilterOption::CompressionReinterpretDatatype,
            OptionValue::U8(0),
        )
        .unwrap();
        assert_eq!(d.output_datatype(Datatype::Float64), Datatype::Int32);
        let mut g = Filter::new(FilterType::Gzip);
        g.set_option(
            FilterOption::CompressionReinterpretDatatype,
            OptionValue::U8(0),
        )
        .unwrap();
        assert_eq!(g.output_datatype(Datatype::Float64), Datatype::Float64);
    }
}
