//! Integrity check of a whole array (`tdbf array verify`): decodes every generic tile of every
//! fragment's metadata and every tile of every field (checksum filters verify their digests),
//! compares the data files with the sizes the metadata records, and checks the tile minimums,
//! maximums and null counts the metadata stores against the decoded integer cells.

use super::tiles::{DecodedTile, TileField, TileKind, TileReader};
use crate::array::fragment::metadata::ListKind;
use crate::array::open::{Array, Fragment};
use crate::array::value;
use crate::error::{Error, Result};
use rayon::prelude::*;
use std::fmt;

/// One damaged place.
#[derive(Clone, Debug, PartialEq)]
pub struct Damage {
    /// Fragment folder name.
    pub fragment: String,
    /// Field name (`__fragment_metadata` for the metadata file).
    pub field: String,
    /// Tile index, when one tile is damaged.
    pub tile: Option<u64>,
    /// What is wrong.
    pub error: Error,
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.tile {
            Some(t) => write!(f, "{}/{}/{}: {}", self.fragment, self.field, t, self.error),
            None => write!(f, "{}/{}: {}", self.fragment, self.field, self.error),
        }
    }
}

/// What `verify` checked and found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Fragments checked (including those whose metadata failed to load).
    pub fragments: usize,
    /// Tiles decoded.
    pub tiles: u64,
    /// Damaged places, in fragment order.
    pub damages: Vec<Damage>,
}

/// Checks every visible fragment of `array`; `broken` are the fragments whose metadata failed
/// to load ([`Array::open_tolerant`]).
pub fn verify(array: &Array, broken: Vec<(String, Error)>) -> Report {
    let mut report = Report {
        fragments: array.fragments().len() + broken.len(),
        ..Report::default()
    };
    for (fragment, error) in broken {
        report.damages.push(Damage {
            fragment,
            field: crate::array::directory::names::FRAGMENT_METADATA_FILE.into(),
            tile: None,
            error,
        });
    }
    for frag in array.fragments() {
        verify_fragment(array, frag, &mut report);
    }
    let leftovers = crate::array::directory::ArrayDirectory::open_in(
        array.storage().clone(),
        array.root().clone(),
    )
    .and_then(|d| d.uncommitted_fragments());
    match leftovers {
        Ok(names) => {
            for fragment in names {
                report.damages.push(Damage {
                    fragment,
                    field: crate::array::directory::names::FRAGMENTS_DIR.into(),
                    tile: None,
                    error: Error::corrupt(
                        "uncommitted fragment folder (no commit marker: a writer stopped before \
                         committing); every reader ignores it, it can be removed",
                    ),
                });
            }
        }
        Err(e) => report.damages.push(Damage {
            fragment: String::new(),
            field: crate::array::directory::names::FRAGMENTS_DIR.into(),
            tile: None,
            error: e,
        }),
    }
    report
}

fn verify_fragment(array: &Array, frag: &Fragment, report: &mut Report) {
    let key = array.key();
    let damage = |field: &str, tile: Option<u64>, error: Error| Damage {
        fragment: frag.name().to_string(),
        field: field.to_string(),
        tile,
        error,
    };
    for (label, offset) in frag.meta.generic_tile_offsets() {
        if let Err(e) = frag.meta.decode_generic_tile(offset, key) {
            report.damages.push(damage(
                crate::array::directory::names::FRAGMENT_METADATA_FILE,
                None,
                e.context(label),
            ));
        }
    }
    let schema = array.schema();
    let mut fields: Vec<TileField> = (0..schema.attributes.len())
        .map(TileField::Attribute)
        .collect();
    if !frag.meta.dense {
        fields.extend((0..schema.dimensions.len()).map(TileField::Dimension));
        fields.push(TileField::Timestamps);
        fields.push(TileField::DeleteTimestamps);
        fields.push(TileField::DeleteConditionIndex);
    }
    for field in fields {
        let reader = match TileReader::new(array, frag, field) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => {
                report
                    .damages
                    .push(damage(&field_name(array, field), None, e));
                continue;
            }
        };
        for e in check_file_sizes(array.storage(), &reader) {
            report.damages.push(damage(&reader.name, None, e));
        }
        let tiles: Vec<u64> = (0..reader.tile_num()).collect();
        report.tiles += tiles.len() as u64;
        // From an object store, all tiles in few requests. A failure here (a tile past the end
        // of its file) is not reported on its own: each tile's read below repeats it for that
        // tile alone and reports it with the tile's number.
        let _ = reader.prefetch(&tiles);
        let results: Vec<(u64, Result<DecodedTile>)> =
            tiles.par_iter().map(|&t| (t, reader.decode(t))).collect();
        let mut decoded = Vec::new();
        for (t, r) in results {
            match r {
                Ok(d) => decoded.push((t, d)),
                Err(e) => {
                    // The line names fragment, field and tile already.
                    let prefix =
                        format!("fragment {} field {} tile {t}: ", frag.name(), reader.name);
                    let e = match e.message().strip_prefix(&prefix) {
                        Some(rest) => with_message(&e, rest),
                        None => e,
                    };
                    report.damages.push(damage(&reader.name, Some(t), e))
                }
            }
        }
        if let TileField::Attribute(_) = field {
            for (t, e) in check_tile_metadata(array, frag, &reader, &decoded) {
                report.damages.push(damage(&reader.name, Some(t), e));
            }
        }
    }
}

/// `e` with its message replaced (same kind).
fn with_message(e: &Error, message: &str) -> Error {
    match e {
        Error::InvalidArgument(_) => Error::InvalidArgument(message.into()),
        Error::ChecksumMismatch(_) => Error::ChecksumMismatch(message.into()),
        Error::DecryptionFailed(_) => Error::DecryptionFailed(message.into()),
        Error::Unsupported(_) => Error::Unsupported(message.into()),
        Error::OutOfMemory(_) => Error::OutOfMemory(message.into()),
        Error::Internal(_) => Error::Internal(message.into()),
        Error::Io { path, kind, .. } => Error::Io {
            path: path.clone(),
            kind: *kind,
            message: message.into(),
        },
        _ => Error::CorruptData(message.into()),
    }
}

fn field_name(array: &Array, field: TileField) -> String {
    let s = array.schema();
    match field {
        TileField::Attribute(i) => s.attributes[i].name.clone(),
        TileField::Dimension(j) => s.dimensions[j].name.clone(),
        TileField::Timestamps => "__timestamps".into(),
        TileField::DeleteTimestamps => "__delete_timestamps".into(),
        TileField::DeleteConditionIndex => "__delete_condition_index".into(),
    }
}

/// The data files against the sizes in the footer.
fn check_file_sizes(storage: &crate::storage::Storage, reader: &TileReader<'_>) -> Vec<Error> {
    let mut out = Vec::new();
    for kind in [TileKind::Fixed, TileKind::Var, TileKind::Validity] {
        let Some((path, want)) = reader.file_and_size(kind) else {
            continue;
        };
        // Object stores: the reader took the recorded size; ask the store for the real one.
        let len = if storage.is_local() {
            reader.file_length(kind)
        } else {
            match storage.size(&path) {
                Ok(n) => n,
                Err(e) => {
                    out.push(e);
                    continue;
                }
            }
        };
        if len != want {
            out.push(Error::corrupt(format!(
                "{path} is {len} bytes, the fragment metadata says {want}"
            )));
        }
    }
    out
}

/// Tile minimums, maximums (integer cells) and null counts against the decoded tiles,
/// counting only written, non-null cells as TileDB does.
fn check_tile_metadata(
    array: &Array,
    frag: &Fragment,
    reader: &TileReader<'_>,
    decoded: &[(u64, DecodedTile)],
) -> Vec<(u64, Error)> {
    let key = array.key();
    let mut out = Vec::new();
    if frag.meta.version < 11 {
        return out;
    }
    let dt = reader.datatype;
    let slot = reader.slot();
    let integer = (dt.is_integer() || dt.is_datetime() || dt.is_time())
        && reader.cell_size == Some(dt.size());
    let (mins, maxs) = if integer {
        match (
            frag.meta.tile_min_max(slot, false, key),
            frag.meta.tile_min_max(slot, true, key),
        ) {
            (Ok(a), Ok(b)) => (a.fixed, b.fixed),
            _ => (Vec::new(), Vec::new()),
        }
    } else {
        (Vec::new(), Vec::new())
    };
    // TileDB's null counts are cell counts only for fields with min/max metadata; for the
    // others it counts the whole tile per written range, or nothing (write/tile_metadata.rs).
    let counted = crate::array::fragment::metadata::has_min_max(
        dt,
        false,
        reader.cell_size.is_none(),
        if reader.cell_size.is_none() {
            crate::array::schema::VAR_NUM
        } else {
            (reader.cell_size.unwrap_or(0) / dt.size().max(1)) as u32
        },
    );
    let nulls = if reader.nullable && counted {
        frag.meta
            .list(slot, ListKind::TileNullCounts, key)
            .map(|v| v.to_vec())
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let n = frag.meta.tile_num() as usize;
    let size = dt.size();
    for (t, tile) in decoded {
        let written = if frag.meta.dense {
            match super::dense::written_cells(frag, *t) {
                Ok(m) => m,
                Err(e) => {
                    out.push((*t, e));
                    continue;
                }
            }
        } else {
            vec![true; tile.cells as usize]
        };
        let valid = |c: usize| tile.validity.as_ref().is_none_or(|v| v[c] != 0);
        if nulls.len() == n {
            let count = (0..written.len())
                .filter(|&c| written[c] && !valid(c))
                .count() as u64;
            if count != nulls[*t as usize] {
                out.push((
                    *t,
                    Error::corrupt(format!(
                        "{count} null cells, the tile metadata says {}",
                        nulls[*t as usize]
                    )),
                ));
            }
        }
        if mins.len() != n * size || maxs.len() != n * size {
            continue;
        }
        let cells: Vec<i128> = (0..written.len())
            .filter(|&c| written[c] && valid(c))
            .filter_map(|c| value::as_i128(dt, tile.cell(c, size)).ok())
            .collect();
        let (Some(lo), Some(hi)) = (cells.iter().min(), cells.iter().max()) else {
            continue;
        };
        let at = *t as usize * size;
        let (want_lo, want_hi) = (
            value::as_i128(dt, &mins[at..at + size]).unwrap_or(0),
            value::as_i128(dt, &maxs[at..at + size]).unwrap_or(0),
        );
        if (*lo, *hi) != (want_lo, want_hi) {
            out.push((
                *t,
                Error::corrupt(format!(
                    "cells range over [{lo}, {hi}], the tile metadata says [{want_lo}, {want_hi}]"
                )),
            ));
        }
    }
    out
}
