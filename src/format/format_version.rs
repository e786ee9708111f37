//! The datatype rules that depend on the format version of the data being read
//! (docs/FORMAT.md §2.2 and §4.8; docs/format-versions.md has the audit against every TileDB
//! release).
//!
//! Two rules changed over TileDB's history without a change in the bytes that describe a tile:
//!
//! * **Which datatype each filter stage works on.** From format version 20 (TileDB 2.17) the
//!   first filter works on the pipeline's base type and every later filter on the previous
//!   filter's output type (SCALE_FLOAT and XOR produce integers, DELTA/DOUBLE_DELTA their
//!   reinterpret type). Before, every filter worked on the tile's own datatype: after
//!   SCALE_FLOAT to 4-byte integers, a BYTESHUFFLE on a FLOAT64 attribute still shuffled
//!   8-byte elements, and BIT_WIDTH_REDUCTION saw a float and passed the data through.
//!   TileDB 2.17 and later apply the new rule to old tiles too, and misread them.
//! * **The datatype of validity tiles.** Dense writes of TileDB 2.3–2.10 (format versions
//!   9–14) filtered a nullable attribute's validity tile as the attribute's datatype (cell size
//!   1), not as UINT8; the validity pipeline's shuffles and BIT_WIDTH_REDUCTION acted on
//!   elements of the attribute's size. Sparse writes used UINT8 throughout.

use crate::format::datatype::Datatype;

/// The format version TileDB 2.30 writes (array schemas, fragments, generic tiles).
pub const FORMAT_VERSION: u32 = 22;

/// The newest format version whose tiles this library reads (23 adds no tile changes).
pub const MAX_READ_FORMAT_VERSION: u32 = 23;

/// The first format version (TileDB 2.17) whose filter stages each work on the previous
/// stage's output datatype; older tiles were filtered with the tile's datatype at every stage.
pub const CHAINED_STAGE_TYPES_VERSION: u32 = 20;

/// The format versions (TileDB 2.3–2.10) whose dense writes filtered validity tiles as the
/// attribute's datatype.
pub const DENSE_VALIDITY_AS_ATTRIBUTE_VERSIONS: std::ops::RangeInclusive<u32> = 9..=14;

/// The datatype to unfilter a nullable attribute's validity tile with (the base type of the
/// validity pipeline), for a fragment of format version `version`: the attribute's datatype
/// for dense fragments of versions 9–14 (TileDB 2.3–2.10), UINT8 otherwise. The cell size is
/// always 1 and the unfiltered tile holds one byte per cell either way; use
/// [`crate::Pipeline::unfilter_validity_tile`], which applies this.
///
/// A dense fragment of those versions written in global order (C/C++ API only; TileDB-Py
/// always writes dense arrays in row- or column-major order) used UINT8; nothing on disk tells
/// the two apart. With a validity pipeline that does not depend on the datatype (the default
/// RLE, compressors, checksums) both give the same bytes.
pub fn validity_filter_datatype(version: u32, dense: bool, attribute: Datatype) -> Datatype {
    if dense && DENSE_VALIDITY_AS_ATTRIBUTE_VERSIONS.contains(&version) {
        attribute
    } else {
        Datatype::Uint8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validity_type_by_version() {
        use Datatype::*;
        assert_eq!(validity_filter_datatype(8, true, Int32), Uint8);
        assert_eq!(validity_filter_datatype(9, true, Int32), Int32);
        assert_eq!(validity_filter_datatype(14, true, Float64), Float64);
        assert_eq!(validity_filter_datatype(14, false, Float64), Uint8);
        assert_eq!(validity_filter_datatype(15, true, Float64), Uint8);
        assert_eq!(validity_filter_datatype(22, true, Int16), Uint8);
    }
}
