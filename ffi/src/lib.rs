//! tdbfilter's C ABI (`libtdbfilter.so`, `libtdbfilter.a`, `include/tdbfilter.h`): opaque
//! handles, TileDB-numbered enums and `extern "C"` entry points over the safe Rust core, the
//! `tdbfilter` crate. The one crate of the workspace with `unsafe` handle code; the helpers for
//! raw handles, C strings and sized buffers are in `guard`.
//!
//! Conventions: every fallible function returns `tdb_status_t` and takes a last
//! `tdb_error_t **error` (may be NULL) that is set to NULL on success and to a new owned
//! error on failure. Outputs are written only on success. `*_free(NULL)` is a no-op.
//! Panics never cross the boundary: they become `TDB_ERR_INTERNAL`.

#![warn(missing_docs)]
#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)]

mod array;
mod config;
mod constants;
mod error;
mod generic_tile;
mod group;
mod guard;
mod lifecycle;
mod options;
mod pipeline;
mod query;
mod result;
mod tile;
mod types;
mod writer;

pub use array::*;
pub use config::*;
pub use constants::*;
pub use error::*;
pub use generic_tile::*;
pub use group::*;
pub use lifecycle::*;
pub use options::*;
pub use pipeline::*;
pub use query::*;
pub use result::*;
pub use tile::*;
pub use types::*;
pub use writer::*;

#[cfg(test)]
mod thread_pool_tests;
