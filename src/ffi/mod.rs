//! The C ABI: opaque handles, TileDB-numbered enums and `extern "C"` entry points.
//!
//! Conventions: every fallible function returns `tdb_status_t` and takes a last
//! `tdb_error_t **error` (may be NULL) that is set to NULL on success and to a new owned
//! error on failure. Outputs are written only on success. `*_free(NULL)` is a no-op.
//! Panics never cross the boundary: they become `TDB_ERR_INTERNAL`.

#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)]

mod array;
mod config;
mod constants;
mod error;
mod generic_tile;
mod guard;
mod pipeline;
mod result;
mod tile;
mod types;
mod writer;

pub use array::*;
pub use config::*;
pub use constants::*;
pub use error::*;
pub use generic_tile::*;
pub use pipeline::*;
pub use result::*;
pub use tile::*;
pub use types::*;
pub use writer::*;
