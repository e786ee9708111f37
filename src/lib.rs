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

pub mod array;
pub mod byte_reader;
pub mod chunking;
pub mod codecs;
pub mod datatype;
pub mod encryption_key;
pub mod error;
pub mod filter;
pub mod filter_type;
pub mod filters;
pub mod format_version;
pub mod generic_tile;
#[allow(unsafe_code)]
pub mod kernels;
#[allow(unsafe_code)]
pub mod mem;
pub mod parts;
pub mod pipeline;
pub mod spec;
pub mod stage;
pub mod thread_scratch;
pub mod tile;
pub mod tile_format;

#[allow(unsafe_code)]
pub mod ffi;

pub use datatype::Datatype;
pub use error::{Error, Result};
pub use filter::{Filter, OptionValue};
pub use filter_type::{Compressor, FilterOption, FilterType};
pub use pipeline::Pipeline;
pub use tile::Tile;

/// The library version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
