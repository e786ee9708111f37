//! TileDB's on-disk vocabulary that needs no filter to read or write: datatypes, filter type
//! and option numbers, the format versions and their rules, the chunk table of a filtered
//! tile and how tiles are cut into chunks, and the little-endian reader they are parsed with
//! (docs/FORMAT.md §1–§4). The layers above (filters, pipeline, array) build on it.

pub mod byte_reader;
pub mod chunking;
pub mod datatype;
pub mod filter_type;
pub mod format_version;
pub mod tile_format;
