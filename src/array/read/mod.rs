//! Reading cells on top of the on-disk structures: tiles located and decoded (`tiles`), dense
//! and sparse reads as TileDB 2.30 returns them, and the integrity check of a whole array.

pub mod dense;
pub mod sparse;
pub mod tiles;
pub mod verify;
