//! tdbfilter: TileDB 2.30's tile format, filter pipeline and arrays, byte-compatible, as a safe
//! Rust library ([`Pipeline`], [`Tile`], one module per filter in [`filters`], arrays in
//! [`array`], local and object storage in [`storage`]). The C ABI over it is the
//! `tdbfilter-ffi` crate of the same workspace; this crate knows nothing of C.
//!
//! ```
//! use tdbfilter::{Datatype, FilterType, Pipeline, Tile};
//! let mut p = Pipeline::new();
//! p.add_filter(FilterType::Byteshuffle).unwrap();
//! p.add_filter(FilterType::Zstd).unwrap();
//! let cells: Vec<u8> = (0..1000i64).flat_map(|v| v.to_le_bytes()).collect();
//! let tile = Tile::new(Datatype::Int64, 8, cells.clone()).unwrap();
//! let filtered = p.filter_tile(&tile).unwrap();
//! let back = p.unfilter_tile(&filtered, Datatype::Int64, 8).unwrap();
//! assert_eq!(back.data(), &cells[..]);
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

// The layers, lowest first; a module imports only from layers below it (docs/ARCHITECTURE.md,
// checked by tests/layers.rs).
pub mod error;
#[allow(unsafe_code)]
pub(crate) mod mem;
/// The SIMD kernels behind the shuffle filters and checksums. Public only for the benchmark
/// program that times every SIMD level (`bench/rust/simd_throughput.rs`); not part of the API.
#[doc(hidden)]
#[allow(unsafe_code)]
pub mod kernels;
pub mod codecs;
pub mod format;
pub(crate) mod engine;
pub mod filters;
pub mod pipeline;
pub mod storage;
pub mod array;
pub mod group;

pub use engine::tile::{Tile, check_cell_size};
pub use error::{Error, Result};
pub use filters::config::{Filter, OptionValue};
pub use format::datatype::Datatype;
pub use format::filter_type::{Compressor, FilterOption, FilterType};
pub use pipeline::Pipeline;

/// The library version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
