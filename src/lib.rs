//! tdbfilter: TileDB 2.30's tile format and filter pipeline, byte-compatible, as a safe Rust
//! core ([`Pipeline`], [`Tile`], one module per filter in [`filters`]) with a C ABI in
//! [`ffi`].
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

// The layers, lowest first; a module imports only from layers below it (README "Layout",
// checked by tests/layers.rs).
pub mod error;
#[allow(unsafe_code)]
pub mod mem;
#[allow(unsafe_code)]
pub mod kernels;
pub mod codecs;
pub mod format;
pub mod engine;
pub mod filters;
pub mod pipeline;
pub mod storage;
pub mod array;
pub mod group;
#[allow(unsafe_code)]
pub mod ffi;

pub use engine::tile::Tile;
pub use error::{Error, Result};
pub use filters::config::{Filter, OptionValue};
pub use format::datatype::Datatype;
pub use format::filter_type::{Compressor, FilterOption, FilterType};
pub use pipeline::Pipeline;

/// The library version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
