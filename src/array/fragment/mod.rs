//! Fragments: the on-disk metadata of one fragment (`__fragment_metadata.tdb`).

pub mod metadata;
