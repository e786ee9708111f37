//! Filter types (docs/FORMAT.md §1.2), compressor bytes (§1.3) and filter options (§1.5),
//! with TileDB's numeric values.

use crate::error::{Error, Result};

/// A TileDB filter type. The discriminant is TileDB's on-disk `u8` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FilterType {
    /// No-op filter.
    None = 0,
    /// zlib stream per part.
    Gzip = 1,
    /// zstd frame per part.
    Zstd = 2,
    /// Raw LZ4 block per part.
    Lz4 = 3,
    /// Run-length encoding.
    Rle = 4,
    /// bzip2 stream per part.
    Bzip2 = 5,
    /// Double-delta encoding.
    DoubleDelta = 6,
    /// Bit-width reduction in windows.
    BitWidthReduction = 7,
    /// Bit transposition (blosc2 bitshuffle).
    Bitshuffle = 8,
    /// Byte transposition (blosc2 shuffle).
    Byteshuffle = 9,
    /// Positive delta encoding in windows.
    PositiveDelta = 10,
    /// Internal AES-256-GCM encryption filter, never in a schema pipeline.
    Aes256Gcm = 11,
    /// MD5 checksum.
    ChecksumMd5 = 12,
    /// SHA-256 checksum.
    ChecksumSha256 = 13,
    /// Dictionary encoding of var-size strings.
    Dictionary = 14,
    /// Float scaling to integers.
    ScaleFloat = 15,
    /// XOR of consecutive values.
    Xor = 16,
    /// WebP image compression.
    Webp = 18,
    /// Delta encoding.
    Delta = 19,
}

impl FilterType {
    /// Every filter type a pipeline may name, in numeric order.
    pub const ALL: &'static [FilterType] = &[
        FilterType::None,
        FilterType::Gzip,
        FilterType::Zstd,
        FilterType::Lz4,
        FilterType::Rle,
        FilterType::Bzip2,
        FilterType::DoubleDelta,
        FilterType::BitWidthReduction,
        FilterType::Bitshuffle,
        FilterType::Byteshuffle,
        FilterType::PositiveDelta,
        FilterType::Aes256Gcm,
        FilterType::ChecksumMd5,
        FilterType::ChecksumSha256,
        FilterType::Dictionary,
        FilterType::ScaleFloat,
        FilterType::Xor,
        FilterType::Webp,
        FilterType::Delta,
    ];

    /// The filter type with TileDB's numeric value, or an `InvalidArgument` error
    /// (17, the removed "bitsort", and values ≥ 20 are unknown).
    pub fn from_u32(value: u32) -> Result<FilterType> {
        FilterType::ALL
            .iter()
            .copied()
            .find(|t| *t as u32 == value)
            .ok_or_else(|| Error::invalid(format!("unknown filter type {value}")))
    }

    /// TileDB's name: `"GZIP"`, `"CHECKSUM_MD5"`, `"DICTIONARY_ENCODING"`, …
    pub fn name(self) -> &'static str {
        match self {
            FilterType::None => "NONE",
            FilterType::Gzip => "GZIP",
            FilterType::Zstd => "ZSTD",
            FilterType::Lz4 => "LZ4",
            FilterType::Rle => "RLE",
            FilterType::Bzip2 => "BZIP2",
            FilterType::DoubleDelta => "DOUBLE_DELTA",
            FilterType::BitWidthReduction => "BIT_WIDTH_REDUCTION",
            FilterType::Bitshuffle => "BITSHUFFLE",
            FilterType::Byteshuffle => "BYTESHUFFLE",
            FilterType::PositiveDelta => "POSITIVE_DELTA",
            FilterType::Aes256Gcm => "AES_256_GCM",
            FilterType::ChecksumMd5 => "CHECKSUM_MD5",
            FilterType::ChecksumSha256 => "CHECKSUM_SHA256",
            FilterType::Dictionary => "DICTIONARY_ENCODING",
            FilterType::ScaleFloat => "SCALE_FLOAT",
            FilterType::Xor => "XOR",
            FilterType::Webp => "WEBP",
            FilterType::Delta => "DELTA",
        }
    }

    /// The lower-case name used in pipeline specs (`"bitshuffle"`, `"dictionary"`).
    pub fn spec_name(self) -> &'static str {
        match self {
            FilterType::Dictionary => "dictionary",
            FilterType::Aes256Gcm => "aes_256_gcm",
            other => {
                // All other spec names are the lower-case TileDB names.
                const NAMES: [&str; 20] = [
                    "none",
                    "gzip",
                    "zstd",
                    "lz4",
                    "rle",
                    "bzip2",
                    "double_delta",
                    "bit_width_reduction",
                    "bitshuffle",
                    "byteshuffle",
                    "positive_delta",
                    "aes_256_gcm",
                    "checksum_md5",
                    "checksum_sha256",
                    "dictionary",
                    "scale_float",
                    "xor",
                    "",
                    "webp",
                    "delta",
                ];
                NAMES[other as usize]
            }
        }
    }

    /// Parses a spec name (case-insensitive; `dictionary_encoding` and `float_scale` are accepted too).
    pub fn from_spec_name(name: &str) -> Option<FilterType> {
        let lower = name.to_ascii_lowercase();
        match lower.as_str() {
            "dictionary_encoding" => return Some(FilterType::Dictionary),
            "float_scale" | "float_scaling" => return Some(FilterType::ScaleFloat),
            "md5" => return Some(FilterType::ChecksumMd5),
            "sha256" => return Some(FilterType::ChecksumSha256),
            _ => {}
        }
        FilterType::ALL
            .iter()
            .copied()
            .filter(|t| *t != FilterType::Aes256Gcm)
            .find(|t| t.spec_name() == lower)
    }

    /// Parses any spelling of a filter type, case-insensitively: the spec names
    /// ([`from_spec_name`](Self::from_spec_name), `"aes_256_gcm"` included), TileDB's names
    /// ([`name`](Self::name), e.g. `"DICTIONARY_ENCODING"`) and TileDB's C names with their
    /// prefixes (`"FILTER_GZIP"`, `"TILEDB_FILTER_GZIP"`).
    pub fn from_name(name: &str) -> Option<FilterType> {
        let name = crate::format::datatype::strip_prefix_ignore_case(name, "TILEDB_");
        let name = crate::format::datatype::strip_prefix_ignore_case(name, "FILTER_");
        FilterType::from_spec_name(name).or_else(|| {
            FilterType::ALL.iter().copied().find(|t| {
                t.name().eq_ignore_ascii_case(name) || t.spec_name().eq_ignore_ascii_case(name)
            })
        })
    }

    /// True when the filter is one of TileDB's compression filters (options: compressor byte + level).
    pub fn is_compression(self) -> bool {
        Compressor::from_filter_type(self).is_some()
    }
}

impl std::fmt::Display for FilterType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The compressor byte inside compression-filter options (docs/FORMAT.md §1.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Compressor {
    /// No compression (serialized as a NONE filter).
    NoCompression = 0,
    /// GZIP.
    Gzip = 1,
    /// ZSTD.
    Zstd = 2,
    /// LZ4.
    Lz4 = 3,
    /// RLE.
    Rle = 4,
    /// BZIP2.
    Bzip2 = 5,
    /// DOUBLE_DELTA.
    DoubleDelta = 6,
    /// DICTIONARY.
    Dictionary = 7,
    /// DELTA.
    Delta = 8,
}

impl Compressor {
    /// The compressor for a byte value.
    pub fn from_u8(value: u8) -> Option<Compressor> {
        use Compressor::*;
        Some(match value {
            0 => NoCompression,
            1 => Gzip,
            2 => Zstd,
            3 => Lz4,
            4 => Rle,
            5 => Bzip2,
            6 => DoubleDelta,
            7 => Dictionary,
            8 => Delta,
            _ => return None,
        })
    }

    /// The compressor a compression filter type uses.
    pub fn from_filter_type(t: FilterType) -> Option<Compressor> {
        Some(match t {
            FilterType::Gzip => Compressor::Gzip,
            FilterType::Zstd => Compressor::Zstd,
            FilterType::Lz4 => Compressor::Lz4,
            FilterType::Rle => Compressor::Rle,
            FilterType::Bzip2 => Compressor::Bzip2,
            FilterType::DoubleDelta => Compressor::DoubleDelta,
            FilterType::Dictionary => Compressor::Dictionary,
            FilterType::Delta => Compressor::Delta,
            _ => return None,
        })
    }

    /// The filter type this compressor maps to.
    pub fn filter_type(self) -> FilterType {
        match self {
            Compressor::NoCompression => FilterType::None,
            Compressor::Gzip => FilterType::Gzip,
            Compressor::Zstd => FilterType::Zstd,
            Compressor::Lz4 => FilterType::Lz4,
            Compressor::Rle => FilterType::Rle,
            Compressor::Bzip2 => FilterType::Bzip2,
            Compressor::DoubleDelta => FilterType::DoubleDelta,
            Compressor::Dictionary => FilterType::Dictionary,
            Compressor::Delta => FilterType::Delta,
        }
    }
}

/// A filter option of TileDB's C API (docs/FORMAT.md §1.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FilterOption {
    /// `int32_t` compression level.
    CompressionLevel = 0,
    /// `uint32_t` BIT_WIDTH_REDUCTION window in bytes.
    BitWidthMaxWindow = 1,
    /// `uint32_t` POSITIVE_DELTA window in bytes.
    PositiveDeltaMaxWindow = 2,
    /// `uint64_t` SCALE_FLOAT byte width (1, 2, 4, 8).
    ScaleFloatBytewidth = 3,
    /// `double` SCALE_FLOAT factor.
    ScaleFloatFactor = 4,
    /// `double` SCALE_FLOAT offset.
    ScaleFloatOffset = 5,
    /// `float` WEBP quality (0..=100).
    WebpQuality = 6,
    /// `uint8_t` WEBP input format (0..=4).
    WebpInputFormat = 7,
    /// `uint8_t` WEBP lossless flag (0 or 1).
    WebpLossless = 8,
    /// `uint8_t` datatype that DELTA / DOUBLE_DELTA reinterpret their input as.
    CompressionReinterpretDatatype = 9,
}

impl FilterOption {
    /// The option with TileDB's numeric value.
    pub fn from_u32(value: u32) -> Result<FilterOption> {
        use FilterOption::*;
        Ok(match value {
            0 => CompressionLevel,
            1 => BitWidthMaxWindow,
            2 => PositiveDeltaMaxWindow,
            3 => ScaleFloatBytewidth,
            4 => ScaleFloatFactor,
            5 => ScaleFloatOffset,
            6 => WebpQuality,
            7 => WebpInputFormat,
            8 => WebpLossless,
            9 => CompressionReinterpretDatatype,
            _ => return Err(Error::invalid(format!("unknown filter option {value}"))),
        })
    }

    /// TileDB's name for the option, e.g. `"COMPRESSION_LEVEL"`.
    pub fn name(self) -> &'static str {
        use FilterOption::*;
        match self {
            CompressionLevel => "COMPRESSION_LEVEL",
            BitWidthMaxWindow => "BIT_WIDTH_MAX_WINDOW",
            PositiveDeltaMaxWindow => "POSITIVE_DELTA_MAX_WINDOW",
            ScaleFloatBytewidth => "SCALE_FLOAT_BYTEWIDTH",
            ScaleFloatFactor => "SCALE_FLOAT_FACTOR",
            ScaleFloatOffset => "SCALE_FLOAT_OFFSET",
            WebpQuality => "WEBP_QUALITY",
            WebpInputFormat => "WEBP_INPUT_FORMAT",
            WebpLossless => "WEBP_LOSSLESS",
            CompressionReinterpretDatatype => "COMPRESSION_REINTERPRET_DATATYPE",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_values_match_tiledb() {
        assert_eq!(FilterType::from_u32(19).unwrap(), FilterType::Delta);
        assert_eq!(FilterType::from_u32(18).unwrap(), FilterType::Webp);
        assert!(FilterType::from_u32(17).is_err());
        assert!(FilterType::from_u32(20).is_err());
        assert_eq!(FilterType::Dictionary.name(), "DICTIONARY_ENCODING");
        for t in FilterType::ALL {
            assert_eq!(FilterType::from_u32(*t as u32).unwrap(), *t);
            if *t != FilterType::Aes256Gcm {
                assert_eq!(FilterType::from_spec_name(t.spec_name()), Some(*t));
            }
            for spelling in [
                t.spec_name().to_string(),
                t.spec_name().to_ascii_uppercase(),
                t.name().to_string(),
                format!("FILTER_{}", t.name()),
                format!("TILEDB_FILTER_{}", t.spec_name().to_ascii_uppercase()),
                format!("tiledb_filter_{}", t.spec_name()),
            ] {
                assert_eq!(FilterType::from_name(&spelling), Some(*t), "{spelling}");
            }
            if let Some(c) = Compressor::from_filter_type(*t) {
                assert_eq!(c.filter_type(), *t);
                assert_eq!(Compressor::from_u8(c as u8), Some(c));
            }
        }
        assert_eq!(FilterType::from_name("bitsort"), None);
        assert_eq!(FilterType::from_name("FILTER_"), None);
        assert_eq!(FilterType::from_name(""), None);
        assert_eq!(Compressor::Dictionary as u8, 7);
        assert_eq!(Compressor::Delta as u8, 8);
        assert_eq!(
            FilterOption::from_u32(9).unwrap(),
            FilterOption::CompressionReinterpretDatatype
        );
        assert!(FilterOption::from_u32(10).is_err());
    }
}
