//! Codecs written for this crate where a C library sets the pace: each produces (or reads)
//! exactly the bytes of the library TileDB uses, and is checked against it in its tests.

pub mod bzip2;
pub mod deflate;

#[cfg(test)]
pub(crate) mod test_data;
