//! Fragment metadata consolidation (TileDB's `FragmentMetaConsolidator`): the footers of every
//! visible fragment in one generic tile, `__fragment_meta/__t1_t2_<uuid>_22.meta` (named
//! after the first fragment's start and the last one's end): the fragment count (`u32`), per
//! fragment its name (`u64` size, bytes) and the offset of its footer in the tile, then the
//! footers. Readers use it to open arrays without reading each fragment's footer.

use super::super::pending;
use super::{ConsolidateOptions, ConsolidateReport};
use crate::array::directory::names;
use crate::array::fragment_metadata::MAX_FRAGMENT_VERSION;
use crate::array::{Array, OpenOptions};
use crate::error::{Error, Result};
use crate::pipeline::generic_tile;

/// Consolidates the fragment footers of the array at `uri`.
pub(crate) fn consolidate(uri: &str, options: &ConsolidateOptions) -> Result<ConsolidateReport> {
    let array = Array::open(
        uri,
        &OpenOptions {
            key: options.key.clone(),
            config: options.config.clone(),
            ..OpenOptions::default()
        },
    )?;
    let frags: Vec<_> = array
        .fragments()
        .iter()
        .filter(|f| f.meta.version > 2)
        .collect();
    let mut report = ConsolidateReport::default();
    if frags.len() < 2 {
        return Ok(report);
    }
    let mut footers = Vec::with_capacity(frags.len());
    for f in &frags {
        if f.meta.version != MAX_FRAGMENT_VERSION {
            return Err(Error::Unsupported(format!(
                "fragment {} has format version {}: its footer would have to be rewritten in \
                 version {MAX_FRAGMENT_VERSION}'s layout, which this consolidation does not do",
                f.name(),
                f.meta.version
            )));
        }
        let bytes = array.storage().read(&f.meta.metadata_path())?;
        let (off, size) = (f.meta.footer_offset as usize, f.meta.footer_size as usize);
        let footer = bytes.get(off..off + size).ok_or_else(|| {
            Error::corrupt(format!(
                "fragment {}: the footer [{off}, +{size}) is past the metadata file's {} bytes",
                f.name(),
                bytes.len()
            ))
        })?;
        footers.push(footer.to_vec());
    }
    let mut offset = 4u64;
    for f in &frags {
        offset += 16 + f.name().len() as u64;
    }
    let mut payload = Vec::new();
    payload.extend_from_slice(&(frags.len() as u32).to_le_bytes());
    for (f, footer) in frags.iter().zip(&footers) {
        payload.extend_from_slice(&(f.name().len() as u64).to_le_bytes());
        payload.extend_from_slice(f.name().as_bytes());
        payload.extend_from_slice(&offset.to_le_bytes());
        offset += footer.len() as u64;
    }
    for footer in &footers {
        payload.extend_from_slice(footer);
    }
    let tile = generic_tile::write_payload(&payload, array.key())?;
    let first = frags[0].timestamps().0;
    let last = frags[frags.len() - 1].timestamps().1;
    let name = format!(
        "{}.meta",
        names::new_timestamped_name(first, last, MAX_FRAGMENT_VERSION)
    );
    let storage = array.storage();
    let dir = array.root().join(names::FRAGMENT_META_DIR);
    if storage.create_dir(&dir)? {
        storage.sync_dir(array.root())?;
    }
    // Whole or not at all: TileDB reads every file of the folder, and fails on a truncated one.
    pending::write_whole(storage, array.root(), &dir, &name, "fragment_meta", &tile)
        .map_err(|e| e.context(format!("consolidated fragment metadata {name}")))?;
    report
        .written
        .push(format!("{}/{name}", names::FRAGMENT_META_DIR));
    Ok(report)
}
