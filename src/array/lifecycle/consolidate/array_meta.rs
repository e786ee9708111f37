//! Array metadata consolidation (TileDB's `ArrayMetaConsolidator`): the metadata visible in
//! `[timestamp_start, timestamp_end]` (deleted keys left out) written as one
//! `__meta/__t1_t2_<uuid>` file named after the first merged file's start and the last one's
//! end, then `__meta/__t1_t2_<uuid>.vac` listing the merged files (`/__meta/<name>` lines,
//! relative to the array as TileDB writes them) for vacuum. Readers see the same entries
//! before and after: the new file repeats them at the newest merged timestamp. Both files
//! appear whole ([`pending::write_whole`]): TileDB reads every file of `__meta/`.

use super::super::pending;
use super::{ConsolidateOptions, ConsolidateReport};
use crate::array::directory::{ArrayDirectory, TimestampedName, names};
use crate::array::metadata::{self, MetadataChange};
use crate::error::Result;
use crate::pipeline::generic_tile;

/// Consolidates the array metadata of the array at `uri`.
pub(crate) fn consolidate(uri: &str, options: &ConsolidateOptions) -> Result<ConsolidateReport> {
    let dir = ArrayDirectory::open(uri, &options.config)?;
    let end = options.timestamp_end.min(names::now_ms());
    let files = dir.metadata_files(options.timestamp_start, end)?;
    let mut report = ConsolidateReport::default();
    if files.len() <= 1 {
        return Ok(report);
    }
    let key = options.key.as_deref();
    let storage = dir.storage();
    let entries = metadata::load(storage, &files, key)?;
    let first = TimestampedName::parse(files[0].as_str())?;
    let last = TimestampedName::parse(files[files.len() - 1].as_str())?;
    let name = format!("__{}_{}_{}", first.t1, last.t2, names::random_label().0);
    let meta_dir = dir.root().join(names::META_DIR);
    if !entries.is_empty() {
        let changes: Vec<MetadataChange> = entries.into_iter().map(MetadataChange::Put).collect();
        let tile = generic_tile::write_payload(&metadata::serialize(&changes)?, key)?;
        pending::write_whole(storage, dir.root(), &meta_dir, &name, "array_meta", &tile)
            .map_err(|e| e.context(format!("consolidated array metadata {name}")))?;
        report.written.push(format!("{}/{name}", names::META_DIR));
    }
    let mut vac = String::new();
    for f in &files {
        vac.push_str(&format!("/{}/{}\n", names::META_DIR, f.name()));
    }
    let vac_name = format!("{name}.vac");
    pending::write_whole(
        storage,
        dir.root(),
        &meta_dir,
        &vac_name,
        "array_meta",
        vac.as_bytes(),
    )
    .map_err(|e| e.context(format!("array metadata vacuum file {vac_name}")))?;
    report
        .written
        .push(format!("{}/{vac_name}", names::META_DIR));
    Ok(report)
}
