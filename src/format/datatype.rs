//! TileDB datatypes (docs/FORMAT.md §1.1), with TileDB's numeric values and sizes.

use crate::error::{Error, Result};

macro_rules! datatypes {
    ($($name:ident = $value:literal, $size:literal, $text:literal;)*) => {
        /// A TileDB datatype. The discriminant is TileDB's on-disk `u8` value.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum Datatype {
            $(
                #[doc = concat!("TileDB `", $text, "`.")]
                $name = $value,
            )*
        }

        impl Datatype {
            /// Every datatype, in numeric order.
            pub const ALL: &'static [Datatype] = &[$(Datatype::$name),*];

            /// The datatype with TileDB's numeric value `value`.
            pub fn from_u8(value: u8) -> Option<Datatype> {
                match value {
                    $($value => Some(Datatype::$name),)*
                    _ => None,
                }
            }

            /// Bytes per value (`datatype_size`).
            pub fn size(self) -> usize {
                match self {
                    $(Datatype::$name => $size,)*
                }
            }

            /// TileDB's name for the datatype, e.g. `"INT32"`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Datatype::$name => $text,)*
                }
            }
        }
    };
}

datatypes! {
    Int32 = 0, 4, "INT32";
    Int64 = 1, 8, "INT64";
    Float32 = 2, 4, "FLOAT32";
    Float64 = 3, 8, "FLOAT64";
    Char = 4, 1, "CHAR";
    Int8 = 5, 1, "INT8";
    Uint8 = 6, 1, "UINT8";
    Int16 = 7, 2, "INT16";
    Uint16 = 8, 2, "UINT16";
    Uint32 = 9, 4, "UINT32";
    Uint64 = 10, 8, "UINT64";
    StringAscii = 11, 1, "STRING_ASCII";
    StringUtf8 = 12, 1, "STRING_UTF8";
    StringUtf16 = 13, 2, "STRING_UTF16";
    StringUtf32 = 14, 4, "STRING_UTF32";
    StringUcs2 = 15, 2, "STRING_UCS2";
    StringUcs4 = 16, 4, "STRING_UCS4";
    Any = 17, 1, "ANY";
    DatetimeYear = 18, 8, "DATETIME_YEAR";
    DatetimeMonth = 19, 8, "DATETIME_MONTH";
    DatetimeWeek = 20, 8, "DATETIME_WEEK";
    DatetimeDay = 21, 8, "DATETIME_DAY";
    DatetimeHr = 22, 8, "DATETIME_HR";
    DatetimeMin = 23, 8, "DATETIME_MIN";
    DatetimeSec = 24, 8, "DATETIME_SEC";
    DatetimeMs = 25, 8, "DATETIME_MS";
    DatetimeUs = 26, 8, "DATETIME_US";
    DatetimeNs = 27, 8, "DATETIME_NS";
    DatetimePs = 28, 8, "DATETIME_PS";
    DatetimeFs = 29, 8, "DATETIME_FS";
    DatetimeAs = 30, 8, "DATETIME_AS";
    TimeHr = 31, 8, "TIME_HR";
    TimeMin = 32, 8, "TIME_MIN";
    TimeSec = 33, 8, "TIME_SEC";
    TimeMs = 34, 8, "TIME_MS";
    TimeUs = 35, 8, "TIME_US";
    TimeNs = 36, 8, "TIME_NS";
    TimePs = 37, 8, "TIME_PS";
    TimeFs = 38, 8, "TIME_FS";
    TimeAs = 39, 8, "TIME_AS";
    Blob = 40, 1, "BLOB";
    Bool = 41, 1, "BOOL";
    GeomWkb = 42, 1, "GEOM_WKB";
    GeomWkt = 43, 1, "GEOM_WKT";
}

impl Datatype {
    /// Parses TileDB's numeric value, failing with `InvalidArgument` for values above 43.
    pub fn try_from_u32(value: u32) -> Result<Datatype> {
        u8::try_from(value)
            .ok()
            .and_then(Datatype::from_u8)
            .ok_or_else(|| Error::InvalidArgument(format!("unknown datatype {value}")))
    }

    /// Parses a datatype name, case-insensitively (`"int32"`, `"UINT8"`, `"datetime_ns"`),
    /// also with TileDB's C prefix (`"TILEDB_INT64"`).
    pub fn from_name(name: &str) -> Option<Datatype> {
        let name = strip_prefix_ignore_case(name, "TILEDB_");
        Datatype::ALL
            .iter()
            .copied()
            .find(|d| d.name().eq_ignore_ascii_case(name))
    }

    /// TileDB's `datatype_is_integer`: BOOL and INT8..UINT64 only.
    pub fn is_integer(self) -> bool {
        use Datatype::*;
        matches!(
            self,
            Int8 | Uint8 | Int16 | Uint16 | Int32 | Uint32 | Int64 | Uint64 | Bool
        )
    }

    /// True for FLOAT32 and FLOAT64.
    pub fn is_real(self) -> bool {
        matches!(self, Datatype::Float32 | Datatype::Float64)
    }

    /// True for the DATETIME_* types.
    pub fn is_datetime(self) -> bool {
        (18..=30).contains(&(self as u8))
    }

    /// True for the TIME_* types.
    pub fn is_time(self) -> bool {
        (31..=39).contains(&(self as u8))
    }

    /// True for the STRING_* types.
    pub fn is_string(self) -> bool {
        (11..=16).contains(&(self as u8))
    }

    /// True for the byte types BLOB, GEOM_WKB and GEOM_WKT.
    pub fn is_byte(self) -> bool {
        matches!(self, Datatype::Blob | Datatype::GeomWkb | Datatype::GeomWkt)
    }

    /// True for signed integer types (and CHAR, which TileDB treats as signed char).
    pub fn is_signed(self) -> bool {
        use Datatype::*;
        matches!(self, Int8 | Int16 | Int32 | Int64 | Char) || self.is_datetime() || self.is_time()
    }
}

/// `text` without a leading `prefix` (compared case-insensitively).
pub(crate) fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> &'a str {
    match text.get(..prefix.len()) {
        Some(head) if head.eq_ignore_ascii_case(prefix) => &text[prefix.len()..],
        _ => text,
    }
}

impl std::fmt::Display for Datatype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_sizes_match_tiledb() {
        assert_eq!(Datatype::ALL.len(), 44);
        for (i, d) in Datatype::ALL.iter().enumerate() {
            assert_eq!(*d as u8 as usize, i);
            assert_eq!(Datatype::from_u8(i as u8), Some(*d));
            assert_eq!(Datatype::from_name(d.name()), Some(*d));
            let lower = d.name().to_ascii_lowercase();
            assert_eq!(Datatype::from_name(&lower), Some(*d));
            assert_eq!(
                Datatype::from_name(&format!("TILEDB_{}", d.name())),
                Some(*d)
            );
            assert_eq!(Datatype::from_name(&format!("tiledb_{lower}")), Some(*d));
        }
        assert_eq!(Datatype::from_u8(44), None);
        assert_eq!(Datatype::Int16.size(), 2);
        assert_eq!(Datatype::StringUcs4.size(), 4);
        assert_eq!(Datatype::TimeAs.size(), 8);
        assert_eq!(Datatype::Bool.size(), 1);
        assert!(Datatype::Bool.is_integer());
        assert!(!Datatype::Char.is_integer());
        assert!(Datatype::DatetimeNs.is_datetime());
        assert!(Datatype::TimeNs.is_time());
        assert!(Datatype::try_from_u32(300).is_err());
        assert_eq!(Datatype::from_name("int"), None);
        assert_eq!(Datatype::from_name("TILEDB_"), None);
        assert_eq!(Datatype::from_name(""), None);
    }
}
