//! `tdb_array_t`: opening TileDB array folders, reading cells, schema introspection,
//! fragment listing and tile-level access (src/array/).
//! One file per concern of the handle: [`open`], [`read`], [`metadata`], [`schema`],
//! [`fragments`], [`tiles`] (declared in the order of the header's declarations).

mod open;
mod read;
mod metadata;
mod schema;
mod fragments;
mod tiles;

pub use fragments::*;
pub use metadata::*;
pub use open::*;
pub use read::*;
pub use schema::*;
#[cfg(test)]
pub(super) use tiles::tile_kind;
pub use tiles::*;

use std::ffi::CString;
use tdbfilter::array::Array;

/// An opened TileDB array: its schema and the fragments visible at the open timestamps.
/// Reading from several threads through a `const` handle is safe.
pub struct tdb_array_t {
    pub(crate) inner: Array,
    /// The array metadata with C-string keys, loaded on first use.
    metadata: std::sync::OnceLock<Vec<(CString, tdbfilter::array::metadata::MetadataEntry)>>,
    /// Field names as C strings, attributes then dimensions (valid while the array lives).
    attr_names: Vec<CString>,
    dim_names: Vec<CString>,
    frag_names: Vec<CString>,
    /// Each fragment's schema name (`__schema/` file, `__array_schema.tdb` before v10).
    frag_schema_names: Vec<CString>,
    /// Whether each fragment's footer is in a consolidated fragment metadata file, loaded on
    /// first use.
    frag_consolidated: std::sync::OnceLock<Vec<bool>>,
}
