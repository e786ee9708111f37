//! Consolidation as TileDB 2.30 does it (`tiledb_array_consolidate`, one mode per call,
//! `sm.consolidation.mode`):
//!
//! - [`fragments`]: merges fragments into `__fragments/__<tmin>_<tmax>_<uuid>_22` (TileDB's
//!   plan: amplification, steps, step sizes; or an explicit fragment list), committed last,
//!   then a `__commits/<name>.vac` listing the merged fragments for [`super::vacuum`];
//! - [`commits`]: every commit marker and delete commit into one `__commits/….con`;
//! - [`fragment_meta`]: every fragment's footer into one `__fragment_meta/….meta`;
//! - [`array_meta`]: the visible array metadata into one `__meta/__t1_t2_<uuid>`, with a
//!   `.vac` listing the merged files.
//!
//! [`consolidation_plan`] is TileDB's advisory plan by fragment size (`ConsolidationPlan`).
//!
//! Kills (tests/array/run_lifecycle_crash_tests.py kills the operation at every file-changing
//! call): the merged fragment is committed last (its `.wrt`), so a kill before that leaves an
//! uncommitted folder every reader ignores. Its `.vac` hides the merged fragments, so it must
//! not appear before that commit (readers would see neither); it is written whole as
//! `<name>.vac.tmp` before the commit and renamed after it, and a consolidation or vacuum
//! after a kill in between completes it ([`super::pending`]). Only in that window do readers
//! see the merged fragments beside the new one: the same cells for arrays without duplicates
//! (TileDB's order has the same window; arrays with duplicates read those cells twice until
//! the rename). The commits mode writes its `.con` beside and renames it into place: readers
//! see it whole or not at all. The fragment_meta and array_meta modes write their files
//! (`.meta`; the merged `__meta` file and its `.vac`) as temporary files in `__commits/` and
//! rename them into place: TileDB reads every file of `__fragment_meta/` and `__meta/`, and a
//! truncated one failed its reads.

pub mod array_meta;
pub mod commits;
pub mod consolidation_plan;
pub mod fragment_meta;
pub mod fragments;
mod merge;
mod plan;

use crate::error::{Error, Result};
use crate::storage::StorageConfig;

/// What to consolidate (TileDB's `sm.consolidation.mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConsolidateMode {
    /// Fragments into one (per step).
    Fragments,
    /// Commit markers into one `.con` file.
    Commits,
    /// Fragment footers into one `.meta` file.
    FragmentMeta,
    /// Array metadata files into one.
    ArrayMeta,
}

impl ConsolidateMode {
    /// Parses TileDB's mode name (`fragments`, `commits`, `fragment_meta`, `array_meta`).
    pub fn parse(s: &str) -> Result<ConsolidateMode> {
        Ok(match s {
            "fragments" => ConsolidateMode::Fragments,
            "commits" => ConsolidateMode::Commits,
            "fragment_meta" => ConsolidateMode::FragmentMeta,
            "array_meta" => ConsolidateMode::ArrayMeta,
            _ => {
                return Err(Error::invalid(format!(
                    "unknown consolidation mode '{s}' (fragments, commits, fragment_meta, \
                     array_meta)"
                )));
            }
        })
    }
}

/// How to consolidate: TileDB's `sm.consolidation.*` settings, with its defaults.
#[derive(Clone, Debug)]
pub struct ConsolidateOptions {
    /// `sm.consolidation.mode`.
    pub mode: ConsolidateMode,
    /// `sm.consolidation.amplification` (dense: the most the merged fragment's cells may
    /// exceed the merged fragments' cells, as a ratio; default 1.0).
    pub amplification: f32,
    /// `sm.consolidation.steps` (default: until nothing is left to merge).
    pub steps: u32,
    /// `sm.consolidation.step_min_frags`.
    pub step_min_frags: u32,
    /// `sm.consolidation.step_max_frags`.
    pub step_max_frags: u32,
    /// `sm.consolidation.step_size_ratio` (0.0 to 1.0).
    pub step_size_ratio: f32,
    /// `sm.consolidation.buffer_size`: bytes per field buffer of a merge batch (default
    /// 50 MB, as TileDB).
    pub buffer_size: u64,
    /// `sm.consolidation.timestamp_start` (fragments and array metadata modes).
    pub timestamp_start: u64,
    /// `sm.consolidation.timestamp_end`.
    pub timestamp_end: u64,
    /// `sm.consolidation.purge_deleted_cells`.
    pub purge_deleted_cells: bool,
    /// Fragments mode: merge exactly these fragments (names or `__fragments/` URIs,
    /// TileDB's `tiledb_array_consolidate_fragments`) instead of the plan.
    pub fragment_list: Option<Vec<String>>,
    /// The AES-256-GCM key of an encrypted array.
    pub key: Option<Vec<u8>>,
    /// Object-store options.
    pub config: StorageConfig,
}

impl ConsolidateOptions {
    /// Options for `mode` with TileDB's defaults.
    pub fn new(mode: ConsolidateMode) -> ConsolidateOptions {
        ConsolidateOptions {
            mode,
            amplification: 1.0,
            steps: u32::MAX,
            step_min_frags: u32::MAX,
            step_max_frags: u32::MAX,
            step_size_ratio: 0.0,
            buffer_size: 50_000_000,
            timestamp_start: 0,
            timestamp_end: u64::MAX,
            purge_deleted_cells: false,
            fragment_list: None,
            key: None,
            config: StorageConfig::new(),
        }
    }

    /// Sets one of TileDB's `sm.consolidation.*` settings by its configuration name and
    /// string value. The settings this consolidation does not implement
    /// (`max_fragment_size` below its default) are refused by name.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        fn parse<T: std::str::FromStr>(key: &str, value: &str) -> Result<T> {
            value
                .trim()
                .parse()
                .map_err(|_| Error::invalid(format!("{key}: '{value}' is not a valid value")))
        }
        match key {
            "sm.consolidation.mode" => self.mode = ConsolidateMode::parse(value)?,
            "sm.consolidation.amplification" => self.amplification = parse(key, value)?,
            "sm.consolidation.steps" => self.steps = parse(key, value)?,
            "sm.consolidation.step_min_frags" => self.step_min_frags = parse(key, value)?,
            "sm.consolidation.step_max_frags" => self.step_max_frags = parse(key, value)?,
            "sm.consolidation.step_size_ratio" => self.step_size_ratio = parse(key, value)?,
            "sm.consolidation.buffer_size" => self.buffer_size = parse(key, value)?,
            "sm.consolidation.timestamp_start" => self.timestamp_start = parse(key, value)?,
            "sm.consolidation.timestamp_end" => self.timestamp_end = parse(key, value)?,
            "sm.consolidation.purge_deleted_cells" => {
                self.purge_deleted_cells = match value {
                    "true" => true,
                    "false" => false,
                    _ => return Err(Error::invalid(format!("{key}: '{value}' is not a boolean"))),
                }
            }
            "sm.consolidation.max_fragment_size" => {
                if parse::<u64>(key, value)? != u64::MAX {
                    return Err(Error::Unsupported(
                        "sm.consolidation.max_fragment_size: splitting the consolidated \
                         fragment by size is not implemented"
                            .into(),
                    ));
                }
            }
            _ => {
                return Err(Error::invalid(format!(
                    "'{key}' is not a consolidation setting"
                )));
            }
        }
        Ok(())
    }

    /// TileDB's sanity checks of the settings.
    fn check(&self) -> Result<()> {
        if self.step_min_frags > self.step_max_frags {
            return Err(Error::invalid(
                "Invalid configuration; Minimum fragments config parameter is larger than the \
                 maximum",
            ));
        }
        if !(0.0..=1.0).contains(&self.step_size_ratio) {
            return Err(Error::invalid(
                "Invalid configuration; Step size ratio config parameter must be in [0.0, 1.0]",
            ));
        }
        if self.amplification < 0.0 {
            return Err(Error::invalid(
                "Invalid configuration; Amplification config parameter must be non-negative",
            ));
        }
        Ok(())
    }
}

/// What a consolidation wrote, as paths relative to the array folder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConsolidateReport {
    /// Files and folders written, in order (folders end with `/`).
    pub written: Vec<String>,
    /// Fragments mode: per step, the merged fragments' names.
    pub merged: Vec<Vec<String>>,
}

/// Consolidates the array at `uri` as TileDB 2.30 does for `options.mode`.
pub fn consolidate(uri: &str, options: &ConsolidateOptions) -> Result<ConsolidateReport> {
    options.check()?;
    match options.mode {
        ConsolidateMode::Fragments => fragments::consolidate(uri, options),
        ConsolidateMode::Commits => commits::consolidate(uri, options),
        ConsolidateMode::FragmentMeta => fragment_meta::consolidate(uri, options),
        ConsolidateMode::ArrayMeta => array_meta::consolidate(uri, options),
    }
}
