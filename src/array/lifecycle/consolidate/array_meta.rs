//! Array metadata consolidation (TileDB's `ArrayMetaConsolidator`): the metadata visible in
//! `[timestamp_start, timestamp_end]` (deleted keys left out) written as one
//! `__meta/__t1_t2_<uuid>` file named after the first merged file's start and the last one's
//! end, then `__meta/__t1_t2_<uuid>.vac` listing the merged files (`/__meta/<name>` lines,
//! relative to the array as TileDB writes them) for vacuum. Readers see the same entries
//! before and after: the new file repeats them at the newest merged timestamp. Both files
//! appear whole ([`pending::write_whole`]): TileDB reads every file of `__meta/`.

use super::super::pending;
use super::{ConsolidateOptions, ConsolidateReport};
use crate::array::directory::{ArrayDirectory, names};
use crate::array::metadata;
use crate::error::Result;

/// Consolidates the array metadata of the array at `uri`.
pub(crate) fn consolidate(uri: &str, options: &ConsolidateOptions) -> Result<ConsolidateReport> {
    let dir = ArrayDirectory::open(uri, &options.config)?;
    let end = options.timestamp_end.min(names::now_ms());
    let files = dir.metadata_files(options.timestamp_start, end)?;
    let mut report = ConsolidateReport::default();
    let storage = dir.storage();
    let Some(c) = metadata::consolidated(storage, &files, options.key.as_deref())? else {
        return Ok(report);
    };
    let meta_dir = dir.root().join(names::META_DIR);
    if let Some(file) = &c.file {
        pending::write_whole(storage, dir.root(), &meta_dir, &c.name, "array_meta", file)
            .map_err(|e| e.context(format!("consolidated array metadata {}", c.name)))?;
        report
            .written
            .push(format!("{}/{}", names::META_DIR, c.name));
    }
    pending::write_whole(
        storage,
        dir.root(),
        &meta_dir,
        &c.vac_name,
        "array_meta",
        &c.vac,
    )
    .map_err(|e| e.context(format!("array metadata vacuum file {}", c.vac_name)))?;
    report
        .written
        .push(format!("{}/{}", names::META_DIR, c.vac_name));
    Ok(report)
}
