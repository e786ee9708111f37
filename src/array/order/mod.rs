//! The orders of cells and coordinates TileDB's bytes depend on, in one place.

pub mod global;
