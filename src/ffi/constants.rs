//! C enums and constants. Input enums are `uint32_t` typedefs with `#define` values (so an
//! out-of-range value from C is an error, not undefined behaviour); values are TileDB's.

/// Result of every fallible call.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tdb_status_t {
    /// Success.
    TDB_OK = 0,
    /// A caller-supplied argument is invalid (NULL pointer, bad option value, unknown enum).
    TDB_ERR_INVALID_ARGUMENT = 1,
    /// Filtered bytes are truncated, inconsistent or not a valid encoding.
    TDB_ERR_CORRUPT_DATA = 2,
    /// A checksum filter found a digest mismatch.
    TDB_ERR_CHECKSUM_MISMATCH = 3,
    /// Decryption failed (wrong key or tampered bytes).
    TDB_ERR_DECRYPTION_FAILED = 4,
    /// Valid TileDB input this version does not support (for example a filter not yet implemented).
    TDB_ERR_UNSUPPORTED = 5,
    /// The caller's buffer is too small; the needed size is reported.
    TDB_ERR_BUFFER_TOO_SMALL = 6,
    /// An allocation failed.
    TDB_ERR_OUT_OF_MEMORY = 7,
    /// A bug in tdbfilter (for example a caught panic).
    TDB_ERR_INTERNAL = 8,
}

/// Every status, in numeric order.
pub(crate) const STATUSES: [tdb_status_t; 9] = [
    tdb_status_t::TDB_OK,
    tdb_status_t::TDB_ERR_INVALID_ARGUMENT,
    tdb_status_t::TDB_ERR_CORRUPT_DATA,
    tdb_status_t::TDB_ERR_CHECKSUM_MISMATCH,
    tdb_status_t::TDB_ERR_DECRYPTION_FAILED,
    tdb_status_t::TDB_ERR_UNSUPPORTED,
    tdb_status_t::TDB_ERR_BUFFER_TOO_SMALL,
    tdb_status_t::TDB_ERR_OUT_OF_MEMORY,
    tdb_status_t::TDB_ERR_INTERNAL,
];

/// The name of a status as a static C string, e.g. `"TDB_ERR_CORRUPT_DATA"`.
pub(crate) fn status_c_name(status: tdb_status_t) -> &'static std::ffi::CStr {
    match status {
        tdb_status_t::TDB_OK => c"TDB_OK",
        tdb_status_t::TDB_ERR_INVALID_ARGUMENT => c"TDB_ERR_INVALID_ARGUMENT",
        tdb_status_t::TDB_ERR_CORRUPT_DATA => c"TDB_ERR_CORRUPT_DATA",
        tdb_status_t::TDB_ERR_CHECKSUM_MISMATCH => c"TDB_ERR_CHECKSUM_MISMATCH",
        tdb_status_t::TDB_ERR_DECRYPTION_FAILED => c"TDB_ERR_DECRYPTION_FAILED",
        tdb_status_t::TDB_ERR_UNSUPPORTED => c"TDB_ERR_UNSUPPORTED",
        tdb_status_t::TDB_ERR_BUFFER_TOO_SMALL => c"TDB_ERR_BUFFER_TOO_SMALL",
        tdb_status_t::TDB_ERR_OUT_OF_MEMORY => c"TDB_ERR_OUT_OF_MEMORY",
        tdb_status_t::TDB_ERR_INTERNAL => c"TDB_ERR_INTERNAL",
    }
}

/// A TileDB filter type (`tiledb_filter_type_t` values).
pub type tdb_filter_type_t = u32;
/// No-op filter.
pub const TDB_FILTER_NONE: tdb_filter_type_t = 0;
/// GZIP (zlib stream per part).
pub const TDB_FILTER_GZIP: tdb_filter_type_t = 1;
/// ZSTD (zstd frame per part).
pub const TDB_FILTER_ZSTD: tdb_filter_type_t = 2;
/// LZ4 (raw block per part).
pub const TDB_FILTER_LZ4: tdb_filter_type_t = 3;
/// Run-length encoding.
pub const TDB_FILTER_RLE: tdb_filter_type_t = 4;
/// BZIP2.
pub const TDB_FILTER_BZIP2: tdb_filter_type_t = 5;
/// Double-delta encoding.
pub const TDB_FILTER_DOUBLE_DELTA: tdb_filter_type_t = 6;
/// Bit-width reduction.
pub const TDB_FILTER_BIT_WIDTH_REDUCTION: tdb_filter_type_t = 7;
/// Bit shuffle.
pub const TDB_FILTER_BITSHUFFLE: tdb_filter_type_t = 8;
/// Byte shuffle.
pub const TDB_FILTER_BYTESHUFFLE: tdb_filter_type_t = 9;
/// Positive delta encoding.
pub const TDB_FILTER_POSITIVE_DELTA: tdb_filter_type_t = 10;
/// MD5 checksum.
pub const TDB_FILTER_CHECKSUM_MD5: tdb_filter_type_t = 12;
/// SHA-256 checksum.
pub const TDB_FILTER_CHECKSUM_SHA256: tdb_filter_type_t = 13;
/// Dictionary encoding of var-size strings.
pub const TDB_FILTER_DICTIONARY: tdb_filter_type_t = 14;
/// Float scaling.
pub const TDB_FILTER_SCALE_FLOAT: tdb_filter_type_t = 15;
/// XOR.
pub const TDB_FILTER_XOR: tdb_filter_type_t = 16;
/// WebP.
pub const TDB_FILTER_WEBP: tdb_filter_type_t = 18;
/// Delta encoding.
pub const TDB_FILTER_DELTA: tdb_filter_type_t = 19;

/// A TileDB datatype (`tiledb_datatype_t` values).
pub type tdb_datatype_t = u32;
/// 32-bit signed integer.
pub const TDB_INT32: tdb_datatype_t = 0;
/// 64-bit signed integer.
pub const TDB_INT64: tdb_datatype_t = 1;
/// 32-bit float.
pub const TDB_FLOAT32: tdb_datatype_t = 2;
/// 64-bit float.
pub const TDB_FLOAT64: tdb_datatype_t = 3;
/// Character.
pub const TDB_CHAR: tdb_datatype_t = 4;
/// 8-bit signed integer.
pub const TDB_INT8: tdb_datatype_t = 5;
/// 8-bit unsigned integer.
pub const TDB_UINT8: tdb_datatype_t = 6;
/// 16-bit signed integer.
pub const TDB_INT16: tdb_datatype_t = 7;
/// 16-bit unsigned integer.
pub const TDB_UINT16: tdb_datatype_t = 8;
/// 32-bit unsigned integer.
pub const TDB_UINT32: tdb_datatype_t = 9;
/// 64-bit unsigned integer.
pub const TDB_UINT64: tdb_datatype_t = 10;
/// ASCII string.
pub const TDB_STRING_ASCII: tdb_datatype_t = 11;
/// UTF-8 string.
pub const TDB_STRING_UTF8: tdb_datatype_t = 12;
/// UTF-16 string.
pub const TDB_STRING_UTF16: tdb_datatype_t = 13;
/// UTF-32 string.
pub const TDB_STRING_UTF32: tdb_datatype_t = 14;
/// UCS-2 string.
pub const TDB_STRING_UCS2: tdb_datatype_t = 15;
/// UCS-4 string.
pub const TDB_STRING_UCS4: tdb_datatype_t = 16;
/// Untyped.
pub const TDB_ANY: tdb_datatype_t = 17;
/// Datetime, years.
pub const TDB_DATETIME_YEAR: tdb_datatype_t = 18;
/// Datetime, months.
pub const TDB_DATETIME_MONTH: tdb_datatype_t = 19;
/// Datetime, weeks.
pub const TDB_DATETIME_WEEK: tdb_datatype_t = 20;
/// Datetime, days.
pub const TDB_DATETIME_DAY: tdb_datatype_t = 21;
/// Datetime, hours.
pub const TDB_DATETIME_HR: tdb_datatype_t = 22;
/// Datetime, minutes.
pub const TDB_DATETIME_MIN: tdb_datatype_t = 23;
/// Datetime, seconds.
pub const TDB_DATETIME_SEC: tdb_datatype_t = 24;
/// Datetime, milliseconds.
pub const TDB_DATETIME_MS: tdb_datatype_t = 25;
/// Datetime, microseconds.
pub const TDB_DATETIME_US: tdb_datatype_t = 26;
/// Datetime, nanoseconds.
pub const TDB_DATETIME_NS: tdb_datatype_t = 27;
/// Datetime, picoseconds.
pub const TDB_DATETIME_PS: tdb_datatype_t = 28;
/// Datetime, femtoseconds.
pub const TDB_DATETIME_FS: tdb_datatype_t = 29;
/// Datetime, attoseconds.
pub const TDB_DATETIME_AS: tdb_datatype_t = 30;
/// Time, hours.
pub const TDB_TIME_HR: tdb_datatype_t = 31;
/// Time, minutes.
pub const TDB_TIME_MIN: tdb_datatype_t = 32;
/// Time, seconds.
pub const TDB_TIME_SEC: tdb_datatype_t = 33;
/// Time, milliseconds.
pub const TDB_TIME_MS: tdb_datatype_t = 34;
/// Time, microseconds.
pub const TDB_TIME_US: tdb_datatype_t = 35;
/// Time, nanoseconds.
pub const TDB_TIME_NS: tdb_datatype_t = 36;
/// Time, picoseconds.
pub const TDB_TIME_PS: tdb_datatype_t = 37;
/// Time, femtoseconds.
pub const TDB_TIME_FS: tdb_datatype_t = 38;
/// Time, attoseconds.
pub const TDB_TIME_AS: tdb_datatype_t = 39;
/// Binary blob.
pub const TDB_BLOB: tdb_datatype_t = 40;
/// Boolean (one byte).
pub const TDB_BOOL: tdb_datatype_t = 41;
/// Geometry, well-known binary.
pub const TDB_GEOM_WKB: tdb_datatype_t = 42;
/// Geometry, well-known text.
pub const TDB_GEOM_WKT: tdb_datatype_t = 43;

/// A filter option (`tiledb_filter_option_t` values); the comment gives the C value type.
pub type tdb_filter_option_t = u32;
/// `int32_t`: compression level of GZIP, ZSTD, LZ4, RLE, BZIP2, DOUBLE_DELTA, DICTIONARY, DELTA.
pub const TDB_COMPRESSION_LEVEL: tdb_filter_option_t = 0;
/// `uint32_t`: BIT_WIDTH_REDUCTION window in bytes.
pub const TDB_BIT_WIDTH_MAX_WINDOW: tdb_filter_option_t = 1;
/// `uint32_t`: POSITIVE_DELTA window in bytes.
pub const TDB_POSITIVE_DELTA_MAX_WINDOW: tdb_filter_option_t = 2;
/// `uint64_t`: SCALE_FLOAT byte width (1, 2, 4, 8).
pub const TDB_SCALE_FLOAT_BYTEWIDTH: tdb_filter_option_t = 3;
/// `double`: SCALE_FLOAT factor.
pub const TDB_SCALE_FLOAT_FACTOR: tdb_filter_option_t = 4;
/// `double`: SCALE_FLOAT offset.
pub const TDB_SCALE_FLOAT_OFFSET: tdb_filter_option_t = 5;
/// `float`: WEBP quality, 0 to 100.
pub const TDB_WEBP_QUALITY: tdb_filter_option_t = 6;
/// `uint8_t`: WEBP input format, 0 to 4.
pub const TDB_WEBP_INPUT_FORMAT: tdb_filter_option_t = 7;
/// `uint8_t`: WEBP lossless flag, 0 or 1.
pub const TDB_WEBP_LOSSLESS: tdb_filter_option_t = 8;
/// `uint8_t`: datatype DELTA / DOUBLE_DELTA reinterpret their input as.
pub const TDB_COMPRESSION_REINTERPRET_DATATYPE: tdb_filter_option_t = 9;

/// The format version TileDB 2.30 writes (pass it to `tdb_pipeline_deserialize` for 2.30 schemas).
pub const TDB_FORMAT_VERSION: u32 = 22;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Datatype, FilterOption, FilterType};

    #[test]
    fn c_constants_match_core_enums() {
        for t in FilterType::ALL {
            let _ = *t as tdb_filter_type_t;
        }
        assert_eq!(TDB_FILTER_DELTA, FilterType::Delta as u32);
        assert_eq!(TDB_FILTER_WEBP, FilterType::Webp as u32);
        assert_eq!(TDB_GEOM_WKT, Datatype::GeomWkt as u32);
        assert_eq!(TDB_DATETIME_NS, Datatype::DatetimeNs as u32);
        assert_eq!(TDB_BOOL, Datatype::Bool as u32);
        assert_eq!(
            TDB_COMPRESSION_REINTERPRET_DATATYPE,
            FilterOption::CompressionReinterpretDatatype as u32
        );
        assert_eq!(TDB_FORMAT_VERSION, crate::pipeline::FORMAT_VERSION);
    }
}
