//! The core crate's integration tests, in one binary (one link instead of one per file). Tests
//! that need a process of their own stay apart: `allocation_bounds` (a counting global
//! allocator) and `peak_memory` (re-executes itself to measure its resident set).

mod array_condition;
mod array_deletes;
mod array_fixtures;
mod array_robustness;
mod array_writer;
mod consolidate;
mod fragment_merge;
mod generic_tile_vectors;
mod layers;
mod lifecycle;
mod old_formats;
mod schema_write;
mod tile_order;
mod writer_defects;
