//! The compressors behind TileDB's compression filters, with per-thread contexts: zlib
//! (`gzip`), zstd, LZ4 and bzip2 as TileDB calls them, and the codecs written for this crate
//! where a C library sets the pace (`deflate`, `bzip2`'s native encoder and decoder): each
//! produces (or reads) exactly the bytes of the library TileDB uses, and is checked against it
//! in its tests. Nothing here knows about tiles or filters.

pub mod bzip2;
pub mod deflate;
pub mod gzip;
pub mod lz4;
pub mod zstd;

#[cfg(test)]
pub(crate) mod test_data;
