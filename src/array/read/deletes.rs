//! Delete commits as sparse reads apply them (TileDB 2.30's readers): each `.del` commit of
//! the open range (standalone or embedded in a consolidated `.con`) holds the negated
//! condition of a delete, a "keep" condition. A cell is hidden when, for some delete, the
//! keep condition fails on it (a null cell fails every comparison, so it is deleted) and the
//! delete applies to it: its fragment has not processed the delete (consolidation lists the
//! processed ones in the fragment metadata), and the cell's timestamp (per-cell `t.tdb` of a
//! consolidated fragment, else the fragment's) is at or before the delete's. Deletes are
//! applied after de-duplication: a deleted newest value does not uncover an older one.

use crate::array::condition::{Condition, serialize};
use crate::array::open::{Array, Fragment};
use crate::error::{Error, Result};
use crate::pipeline::generic_tile;

/// One delete commit of the open range.
#[derive(Clone, Debug)]
pub(crate) struct Delete {
    /// The commit's name relative to the array (what fragments list as processed).
    pub marker: String,
    /// The commit's timestamp.
    pub timestamp: u64,
    /// The stored (negated) condition: cells it holds for are kept.
    pub keep: Condition,
}

/// Which cells of a fragment a delete applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// None (processed by consolidation, or every cell is newer).
    Nothing,
    /// Every cell.
    All,
    /// The cells whose per-cell timestamp is at most this.
    UpTo(u64),
}

impl Scope {
    /// Whether the delete applies to a cell of timestamp `ts` (per-cell, when the fragment
    /// has them).
    pub(crate) fn covers(self, ts: Option<u64>) -> bool {
        match self {
            Scope::Nothing => false,
            Scope::All => true,
            Scope::UpTo(d) => ts.is_none_or(|t| t <= d),
        }
    }
}

/// The delete commits of `array`'s open range, oldest first, their conditions parsed as
/// TileDB reads them. Update commits (`.upd`) are refused.
pub(crate) fn load(array: &Array) -> Result<Vec<Delete>> {
    let mut out = Vec::new();
    let mut files: Vec<(crate::storage::Uri, Vec<u8>)> = Vec::new();
    for c in array.condition_commits() {
        if c.is_update {
            return Err(Error::Unsupported(format!(
                "update commits (.upd) are not applied by this reader: {}",
                c.marker
            )));
        }
        let bytes = match files.iter().find(|(u, _)| *u == c.file) {
            Some((_, b)) => b,
            None => {
                let b = array
                    .storage()
                    .read(&c.file)
                    .map_err(|e| e.context(format!("delete commit {}", c.marker)))?;
                files.push((c.file.clone(), b));
                &files.last().expect("pushed").1
            }
        };
        let start = usize::try_from(c.offset).unwrap_or(usize::MAX);
        let end = usize::try_from(c.offset.saturating_add(c.size)).unwrap_or(usize::MAX);
        let tile_bytes = bytes.get(start..end).ok_or_else(|| {
            Error::corrupt(format!(
                "delete commit {}: bytes {start}..{end} are beyond the {} bytes of {}",
                c.marker,
                bytes.len(),
                c.file
            ))
        })?;
        let (_, tile, _) = generic_tile::read(tile_bytes, array.key())
            .map_err(|e| e.context(format!("delete commit {}", c.marker)))?;
        let keep = serialize::parse(tile.data(), &format!("delete commit {}", c.marker))?;
        out.push(Delete {
            marker: c.marker.clone(),
            timestamp: c.timestamp,
            keep,
        });
    }
    Ok(out)
}

/// The scope of each of `deletes` in fragment `frag`.
pub(crate) fn scopes(array: &Array, frag: &Fragment, deletes: &[Delete]) -> Result<Vec<Scope>> {
    let processed = if frag.meta.has_delete_meta {
        frag.meta
            .processed_conditions(array.key())
            .map_err(|e| e.context(format!("fragment {}", frag.name())))?
    } else {
        Vec::new()
    };
    let (t1, _) = frag.timestamps();
    Ok(deletes
        .iter()
        .map(|d| {
            if d.timestamp < t1 || processed.contains(&d.marker) {
                Scope::Nothing
            } else if frag.meta.has_timestamps {
                Scope::UpTo(d.timestamp)
            } else {
                Scope::All
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_covers() {
        assert!(!Scope::Nothing.covers(Some(1)));
        assert!(Scope::All.covers(Some(9)));
        assert!(Scope::UpTo(5).covers(Some(5)));
        assert!(!Scope::UpTo(5).covers(Some(6)));
        assert!(Scope::UpTo(5).covers(None));
    }
}
