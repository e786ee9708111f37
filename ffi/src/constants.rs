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
    /// Valid TileDB input this version does not support, named in the message (for example a
    /// remote URI, an array feature the reader does not evaluate, or a filter on a datatype
    /// TileDB's schemas refuse).
    TDB_ERR_UNSUPPORTED = 5,
    /// The caller's buffer is too small; the needed size is reported.
    TDB_ERR_BUFFER_TOO_SMALL = 6,
    /// An allocation failed.
    TDB_ERR_OUT_OF_MEMORY = 7,
    /// A bug in tdbfilter (for example a caught panic).
    TDB_ERR_INTERNAL = 8,
    /// The operating system or object store refused a read or write (disk full, read-only
    /// file system, permission denied, missing or not a folder, network failure); the
    /// message names the path and the system's error.
    TDB_ERR_IO = 9,
}

/// Every status, in numeric order.
pub(crate) const STATUSES: [tdb_status_t; 10] = [
    tdb_status_t::TDB_OK,
    tdb_status_t::TDB_ERR_INVALID_ARGUMENT,
    tdb_status_t::TDB_ERR_CORRUPT_DATA,
    tdb_status_t::TDB_ERR_CHECKSUM_MISMATCH,
    tdb_status_t::TDB_ERR_DECRYPTION_FAILED,
    tdb_status_t::TDB_ERR_UNSUPPORTED,
    tdb_status_t::TDB_ERR_BUFFER_TOO_SMALL,
    tdb_status_t::TDB_ERR_OUT_OF_MEMORY,
    tdb_status_t::TDB_ERR_INTERNAL,
    tdb_status_t::TDB_ERR_IO,
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
        tdb_status_t::TDB_ERR_IO => c"TDB_ERR_IO",
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

/// The order of the cells a write gives (`tiledb_layout_t` values of query layouts).
pub type tdb_layout_t = u32;
/// Dense: the box's cells in row-major order (the last dimension fastest).
pub const TDB_ROW_MAJOR: tdb_layout_t = 0;
/// Dense: the box's cells in col-major order (the first dimension fastest).
pub const TDB_COL_MAJOR: tdb_layout_t = 1;
/// The array's global order (dense: whole tiles of a tile-aligned box; sparse: sorted cells).
pub const TDB_GLOBAL_ORDER: tdb_layout_t = 2;
/// Sparse: coordinates in any order.
pub const TDB_UNORDERED: tdb_layout_t = 3;

/// An aggregate operator (TileDB's channel operators: sum 0, min 1, max 2, mean 3,
/// null_count 4; and 5 for `count`, TileDB's separate count aggregate).
pub type tdb_aggregate_op_t = u32;
/// The sum of a field's valid values.
pub const TDB_AGG_SUM: tdb_aggregate_op_t = 0;
/// The smallest valid value.
pub const TDB_AGG_MIN: tdb_aggregate_op_t = 1;
/// The largest valid value.
pub const TDB_AGG_MAX: tdb_aggregate_op_t = 2;
/// The mean of the valid values.
pub const TDB_AGG_MEAN: tdb_aggregate_op_t = 3;
/// The number of null cells.
pub const TDB_AGG_NULL_COUNT: tdb_aggregate_op_t = 4;
/// The number of cells (no field).
pub const TDB_AGG_COUNT: tdb_aggregate_op_t = 5;

/// The status of a query read in batches (`tiledb_query_status_t` values).
pub type tdb_query_status_t = u32;
/// Every cell has been handed out.
pub const TDB_QUERY_COMPLETED: tdb_query_status_t = 1;
/// The last batch filled the buffers before the end: submit again for the rest.
pub const TDB_QUERY_INCOMPLETE: tdb_query_status_t = 3;
/// Nothing submitted yet (or the query changed since).
pub const TDB_QUERY_UNINITIALIZED: tdb_query_status_t = 4;

/// The write layout of a `tdb_layout_t` value.
pub(crate) fn write_layout(
    layout: tdb_layout_t,
) -> tdbfilter::Result<tdbfilter::array::WriteLayout> {
    use tdbfilter::array::WriteLayout;
    Ok(match layout {
        TDB_ROW_MAJOR => WriteLayout::RowMajor,
        TDB_COL_MAJOR => WriteLayout::ColMajor,
        TDB_GLOBAL_ORDER => WriteLayout::GlobalOrder,
        TDB_UNORDERED => WriteLayout::Unordered,
        other => {
            return Err(tdbfilter::Error::invalid(format!(
                "layout {other} is not a write layout (0 row-major, 1 col-major, 2 global \
                 order, 3 unordered)"
            )));
        }
    })
}

/// The format version TileDB 2.30 writes (pass it to `tdb_pipeline_deserialize` for 2.30 schemas).
pub const TDB_FORMAT_VERSION: u32 = 22;

/// What a group member is (`tiledb_object_t` values).
pub type tdb_object_type_t = u32;
/// Neither an array nor a group (TileDB stores it for members that did not exist).
pub const TDB_OBJECT_INVALID: tdb_object_type_t = 0;
/// A group.
pub const TDB_OBJECT_GROUP: tdb_object_type_t = 1;
/// An array.
pub const TDB_OBJECT_ARRAY: tdb_object_type_t = 2;

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::{STATUSES, status_c_name};
    use std::collections::BTreeMap;
    use tdbfilter::array::read::tiles::TileKind;
    use tdbfilter::error::Error;
    use tdbfilter::pipeline::generic_tile::EncryptionType;
    use tdbfilter::{Datatype, FilterOption, FilterType};

    /// Every constant of the C API, by group, as (name, value).
    macro_rules! named {
        ($($c:ident),* $(,)?) => { vec![$((stringify!($c), $c as u64)),*] };
    }

    fn statuses() -> Vec<(&'static str, u64)> {
        use tdb_status_t::*;
        named![
            TDB_OK,
            TDB_ERR_INVALID_ARGUMENT,
            TDB_ERR_CORRUPT_DATA,
            TDB_ERR_CHECKSUM_MISMATCH,
            TDB_ERR_DECRYPTION_FAILED,
            TDB_ERR_UNSUPPORTED,
            TDB_ERR_BUFFER_TOO_SMALL,
            TDB_ERR_OUT_OF_MEMORY,
            TDB_ERR_INTERNAL,
            TDB_ERR_IO,
        ]
    }

    fn filter_types() -> Vec<(&'static str, u64)> {
        named![
            TDB_FILTER_NONE,
            TDB_FILTER_GZIP,
            TDB_FILTER_ZSTD,
            TDB_FILTER_LZ4,
            TDB_FILTER_RLE,
            TDB_FILTER_BZIP2,
            TDB_FILTER_DOUBLE_DELTA,
            TDB_FILTER_BIT_WIDTH_REDUCTION,
            TDB_FILTER_BITSHUFFLE,
            TDB_FILTER_BYTESHUFFLE,
            TDB_FILTER_POSITIVE_DELTA,
            TDB_FILTER_AES_256_GCM,
            TDB_FILTER_CHECKSUM_MD5,
            TDB_FILTER_CHECKSUM_SHA256,
            TDB_FILTER_DICTIONARY,
            TDB_FILTER_SCALE_FLOAT,
            TDB_FILTER_XOR,
            TDB_FILTER_WEBP,
            TDB_FILTER_DELTA,
        ]
    }

    fn datatypes() -> Vec<(&'static str, u64)> {
        named![
            TDB_INT32,
            TDB_INT64,
            TDB_FLOAT32,
            TDB_FLOAT64,
            TDB_CHAR,
            TDB_INT8,
            TDB_UINT8,
            TDB_INT16,
            TDB_UINT16,
            TDB_UINT32,
            TDB_UINT64,
            TDB_STRING_ASCII,
            TDB_STRING_UTF8,
            TDB_STRING_UTF16,
            TDB_STRING_UTF32,
            TDB_STRING_UCS2,
            TDB_STRING_UCS4,
            TDB_ANY,
            TDB_DATETIME_YEAR,
            TDB_DATETIME_MONTH,
            TDB_DATETIME_WEEK,
            TDB_DATETIME_DAY,
            TDB_DATETIME_HR,
            TDB_DATETIME_MIN,
            TDB_DATETIME_SEC,
            TDB_DATETIME_MS,
            TDB_DATETIME_US,
            TDB_DATETIME_NS,
            TDB_DATETIME_PS,
            TDB_DATETIME_FS,
            TDB_DATETIME_AS,
            TDB_TIME_HR,
            TDB_TIME_MIN,
            TDB_TIME_SEC,
            TDB_TIME_MS,
            TDB_TIME_US,
            TDB_TIME_NS,
            TDB_TIME_PS,
            TDB_TIME_FS,
            TDB_TIME_AS,
            TDB_BLOB,
            TDB_BOOL,
            TDB_GEOM_WKB,
            TDB_GEOM_WKT,
        ]
    }

    fn options() -> Vec<(&'static str, u64)> {
        named![
            TDB_COMPRESSION_LEVEL,
            TDB_BIT_WIDTH_MAX_WINDOW,
            TDB_POSITIVE_DELTA_MAX_WINDOW,
            TDB_SCALE_FLOAT_BYTEWIDTH,
            TDB_SCALE_FLOAT_FACTOR,
            TDB_SCALE_FLOAT_OFFSET,
            TDB_WEBP_QUALITY,
            TDB_WEBP_INPUT_FORMAT,
            TDB_WEBP_LOSSLESS,
            TDB_COMPRESSION_REINTERPRET_DATATYPE,
        ]
    }

    fn encryption_types() -> Vec<(&'static str, u64)> {
        named![TDB_NO_ENCRYPTION, TDB_AES_256_GCM]
    }

    fn tile_kinds() -> Vec<(&'static str, u64)> {
        named![TDB_TILE_FIXED, TDB_TILE_VAR, TDB_TILE_VALIDITY]
    }

    fn pipeline_kinds() -> Vec<(&'static str, u64)> {
        named![
            TDB_ARRAY_PIPELINE_FIELD,
            TDB_ARRAY_PIPELINE_OFFSETS,
            TDB_ARRAY_PIPELINE_VALIDITY,
            TDB_ARRAY_PIPELINE_COORDS,
        ]
    }

    fn layouts() -> Vec<(&'static str, u64)> {
        named![
            TDB_ROW_MAJOR,
            TDB_COL_MAJOR,
            TDB_GLOBAL_ORDER,
            TDB_UNORDERED
        ]
    }

    fn aggregate_ops() -> Vec<(&'static str, u64)> {
        named![
            TDB_AGG_SUM,
            TDB_AGG_MIN,
            TDB_AGG_MAX,
            TDB_AGG_MEAN,
            TDB_AGG_NULL_COUNT,
            TDB_AGG_COUNT
        ]
    }

    fn query_statuses() -> Vec<(&'static str, u64)> {
        named![
            TDB_QUERY_COMPLETED,
            TDB_QUERY_INCOMPLETE,
            TDB_QUERY_UNINITIALIZED
        ]
    }

    fn object_types() -> Vec<(&'static str, u64)> {
        named![TDB_OBJECT_INVALID, TDB_OBJECT_GROUP, TDB_OBJECT_ARRAY]
    }

    fn sizes() -> Vec<(&'static str, u64)> {
        named![TDB_FORMAT_VERSION, TDB_GENERIC_TILE_HEADER_BASE_SIZE]
    }

    /// The constants of include/tdbfilter.h: every `#define TDB_*` and every member of
    /// `enum tdb_status_t`.
    fn header_constants() -> BTreeMap<String, u64> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../include/tdbfilter.h");
        let text = std::fs::read_to_string(path).expect("include/tdbfilter.h");
        let mut out = BTreeMap::new();
        for line in text.lines().map(str::trim) {
            let (name, value) = if let Some(rest) = line.strip_prefix("#define ") {
                match rest.split_once(' ') {
                    Some((n, v)) if n.starts_with("TDB_") => (n, v),
                    _ => continue,
                }
            } else if let Some(member) = line
                .strip_prefix("TDB_")
                .and_then(|_| line.strip_suffix(',').and_then(|m| m.split_once(" = ")))
            {
                member
            } else {
                continue;
            };
            let value: u64 = value.trim().parse().unwrap_or_else(|_| {
                panic!("header constant {name} has a value that is not a number: {value}")
            });
            assert!(
                out.insert(name.to_string(), value).is_none(),
                "{name} twice in the header"
            );
        }
        out
    }

    /// Looks up a header constant, failing with its name.
    fn get(header: &BTreeMap<String, u64>, name: &str) -> u64 {
        *header
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not in include/tdbfilter.h"))
    }

    #[test]
    fn header_holds_exactly_the_rust_constants() {
        let groups = [
            statuses(),
            filter_types(),
            datatypes(),
            options(),
            encryption_types(),
            tile_kinds(),
            pipeline_kinds(),
            layouts(),
            aggregate_ops(),
            query_statuses(),
            object_types(),
            sizes(),
        ];
        let mut rust = BTreeMap::new();
        for (name, value) in groups.iter().flatten() {
            assert!(
                rust.insert(name.to_string(), *value).is_none(),
                "{name} twice"
            );
        }
        let header = header_constants();
        assert_eq!(rust.len(), 110);
        assert_eq!(header, rust, "include/tdbfilter.h against ffi/src");
        // Each enum's values are distinct.
        for group in &groups[..groups.len() - 1] {
            let mut values: Vec<u64> = group.iter().map(|(_, v)| *v).collect();
            values.sort_unstable();
            values.dedup();
            assert_eq!(values.len(), group.len(), "{group:?}");
        }
    }

    #[test]
    fn constants_match_core_enums() {
        let h = header_constants();
        // Filter types: TDB_FILTER_<spec name> for every FilterType, and no other.
        assert_eq!(filter_types().len(), FilterType::ALL.len());
        for t in FilterType::ALL {
            let name = format!("TDB_FILTER_{}", t.spec_name().to_ascii_uppercase());
            assert_eq!(get(&h, &name), *t as u64, "{name}");
            assert_eq!(FilterType::from_u32(get(&h, &name) as u32).unwrap(), *t);
        }
        // Datatypes: TDB_<TileDB name> for every Datatype, and no other.
        assert_eq!(datatypes().len(), Datatype::ALL.len());
        for d in Datatype::ALL {
            let name = format!("TDB_{}", d.name());
            assert_eq!(get(&h, &name), *d as u64, "{name}");
        }
        // Filter options: TDB_<TileDB name> for every FilterOption, and no other.
        let core_options: Vec<FilterOption> = (0..)
            .map_while(|v| FilterOption::from_u32(v).ok())
            .collect();
        assert_eq!(options().len(), core_options.len());
        for o in core_options {
            let name = format!("TDB_{}", o.name());
            assert_eq!(get(&h, &name), o as u64, "{name}");
        }
        // Statuses: the names tdb_status_name gives, and each error variant's status.
        assert_eq!(statuses().len(), STATUSES.len());
        for s in STATUSES {
            let name = status_c_name(s).to_str().unwrap();
            assert_eq!(get(&h, name), s as u64, "{name}");
        }
        let variants = [
            (
                Error::InvalidArgument(String::new()),
                "TDB_ERR_INVALID_ARGUMENT",
            ),
            (Error::CorruptData(String::new()), "TDB_ERR_CORRUPT_DATA"),
            (
                Error::ChecksumMismatch(String::new()),
                "TDB_ERR_CHECKSUM_MISMATCH",
            ),
            (
                Error::DecryptionFailed(String::new()),
                "TDB_ERR_DECRYPTION_FAILED",
            ),
            (Error::Unsupported(String::new()), "TDB_ERR_UNSUPPORTED"),
            (
                Error::BufferTooSmall {
                    needed: 1,
                    message: String::new(),
                },
                "TDB_ERR_BUFFER_TOO_SMALL",
            ),
            (Error::OutOfMemory(String::new()), "TDB_ERR_OUT_OF_MEMORY"),
            (Error::Internal(String::new()), "TDB_ERR_INTERNAL"),
            (
                Error::Io {
                    path: String::new(),
                    kind: std::io::ErrorKind::Other,
                    message: String::new(),
                },
                "TDB_ERR_IO",
            ),
        ];
        assert_eq!(
            variants.len() + 1,
            STATUSES.len(),
            "every error status and TDB_OK"
        );
        for (e, name) in &variants {
            assert_eq!(
                super::super::error::status_of(e) as u64,
                get(&h, name),
                "{name}"
            );
        }
        // Encryption types: TDB_<TileDB name>.
        for (name, value) in encryption_types() {
            let e = EncryptionType::from_u8(value as u8).expect(name);
            assert_eq!(format!("TDB_{}", e.name()), name);
            assert_eq!(get(&h, name), e as u64);
        }
        assert_eq!(
            EncryptionType::from_u8(encryption_types().len() as u8),
            None
        );
        // Tile kinds: the array reader's TileKind.
        let kinds = [TileKind::Fixed, TileKind::Var, TileKind::Validity];
        assert_eq!(tile_kinds().len(), kinds.len());
        for ((name, value), kind) in tile_kinds().into_iter().zip(kinds) {
            assert_eq!(get(&h, name), kind as u64, "{name}");
            assert_eq!(super::super::array::tile_kind(value as u32).unwrap(), kind);
        }
        assert!(super::super::array::tile_kind(kinds.len() as u32).is_err());
        // Layouts: the writer's WriteLayout, in TileDB's numbering.
        use tdbfilter::array::WriteLayout;
        let core_layouts = [
            WriteLayout::RowMajor,
            WriteLayout::ColMajor,
            WriteLayout::GlobalOrder,
            WriteLayout::Unordered,
        ];
        for ((name, value), layout) in layouts().into_iter().zip(core_layouts) {
            assert_eq!(super::write_layout(get(&h, name) as u32).unwrap(), layout);
            assert_eq!(value, get(&h, name));
        }
        assert!(super::write_layout(4).is_err());
        // Format constants.
        assert_eq!(
            get(&h, "TDB_FORMAT_VERSION"),
            tdbfilter::pipeline::FORMAT_VERSION as u64
        );
        assert_eq!(
            get(&h, "TDB_GENERIC_TILE_HEADER_BASE_SIZE"),
            tdbfilter::pipeline::generic_tile::HEADER_BASE_SIZE as u64
        );
    }

    #[test]
    fn array_pipeline_kinds_select_the_schema_pipelines() {
        let h = header_constants();
        let path = std::ffi::CString::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/data/c_array/dense"
        ))
        .unwrap();
        let null_err = std::ptr::null_mut();
        // SAFETY: valid pointers for every call; the handles are freed once.
        unsafe {
            let mut a = std::ptr::null_mut();
            assert_eq!(
                tdb_array_open(path.as_ptr(), std::ptr::null(), 0, &mut a, null_err),
                tdb_status_t::TDB_OK
            );
            for (name, value) in pipeline_kinds() {
                assert_eq!(get(&h, name), value);
                let mut p = std::ptr::null_mut();
                let status = tdb_array_pipeline(a, c"a".as_ptr(), value as u32, &mut p, null_err);
                assert_eq!(status, tdb_status_t::TDB_OK, "{name}");
                tdb_pipeline_free(p);
            }
            let mut p = std::ptr::null_mut();
            let unknown = pipeline_kinds().len() as u32;
            let status = tdb_array_pipeline(a, c"a".as_ptr(), unknown, &mut p, null_err);
            assert_eq!(status, tdb_status_t::TDB_ERR_INVALID_ARGUMENT);
            assert!(p.is_null());
            tdb_array_free(a);
        }
    }
}
