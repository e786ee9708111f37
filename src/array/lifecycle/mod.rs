//! The array lifecycle operations that need no query engine, as TileDB 2.30 does them:
//! consolidation of fragments, commits and metadata ([`consolidate`]), vacuuming after it
//! ([`vacuum`]), removing the leftovers of killed writers
//! ([`uncommitted`]), deleting fragments by timestamp range and removing arrays ([`delete`]),
//! and schema evolution and format upgrades ([`evolve`]). Each works on the array folder through
//! [`crate::storage`]; none needs the array open.

pub mod consolidate;
pub mod delete;
pub mod delete_cells;
pub mod evolve;
mod listing;
mod pending;
pub mod uncommitted;
pub mod vacuum;

pub use consolidate::consolidation_plan::consolidation_plan;
pub use consolidate::{ConsolidateMode, ConsolidateOptions, ConsolidateReport, consolidate};
pub use delete::{DeleteReport, delete_array, delete_fragments};
pub use delete_cells::{DeleteCellsOptions, delete_cells};
pub use evolve::{
    EvolveOptions, SchemaChange, changes_from_json, evolve, evolve_json, upgrade_version,
};
pub use vacuum::{VacuumMode, VacuumOptions, VacuumReport, vacuum};
