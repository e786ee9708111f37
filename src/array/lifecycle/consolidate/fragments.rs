//! Fragments consolidation (TileDB's `FragmentConsolidator`): in steps, TileDB's plan
//! ([`super::plan`]) picks a run of fragments; their cells are merged into one new fragment
//! `__fragments/__<first t1>_<last t2>_<uuid>_22` written by the array writer in global order
//! (committed last: until its `.wrt` exists no reader sees it), then
//! `__commits/<name>.vac` lists the merged fragments (`/__fragments/<name>` lines) for vacuum.
//!
//! Dense: the union of the merged fragments' non-empty domains, expanded to whole tiles, is
//! read from those fragments only (later ones win, fill values where none wrote) and written
//! as whole tiles; the fragment records the union as its non-empty domain. Sparse: the cells
//! of every merged fragment in global order, with per-cell timestamps ([`super::merge`]).
//!
//! Delete commits: with `sm.consolidation.purge_deleted_cells` the deleted cells are left
//! out ([`merge`]); without it, when a delete applies to the merged fragments (or a fragment
//! has delete metadata already), every cell stays and carries delete metadata (`dt.tdb`,
//! `dci.tdb`, and the flag in the fragment metadata), as TileDB writes it. Not done here
//! (refused by name): update commits.

use super::super::pending;
use super::plan::{self, Candidate, PlanConfig};
use super::{ConsolidateOptions, ConsolidateReport, merge};
use crate::array::directory::names;
use crate::array::geometry::{DimGrid, dense_grid};
use crate::array::schema::{ArraySchema, Layout, Range};
use crate::array::write::{Consolidation, Writer};
use crate::array::{Array, FieldData, Fragment, OpenOptions, value};
use crate::error::{Error, Result};

/// A fragment in the plan.
struct Info {
    name: String,
    cand: Candidate,
}

/// The array as the consolidation reads it: the fragments visible now, read with the newest
/// schema (the one the merged fragment is written with, even when an evolution is stamped
/// later than now).
fn open(uri: &str, options: &ConsolidateOptions) -> Result<Array> {
    let mut array = Array::open(
        uri,
        &OpenOptions {
            key: options.key.clone(),
            config: options.config.clone(),
            ..OpenOptions::default()
        },
    )?;
    array.use_newest_schema();
    Ok(array)
}

/// A dense fragment's non-empty domain as integers.
fn ned_of(schema: &ArraySchema, f: &Fragment) -> Result<Vec<(i128, i128)>> {
    let ned =
        f.meta.non_empty_domain.as_ref().ok_or_else(|| {
            Error::corrupt(format!("fragment {} has no non-empty domain", f.name()))
        })?;
    schema
        .dimensions
        .iter()
        .zip(ned)
        .map(|(d, r)| {
            Ok((
                value::as_i128(d.datatype, r.lo())?,
                value::as_i128(d.datatype, r.hi())?,
            ))
        })
        .collect()
}

/// `ranges` expanded to whole tiles of the dense grid (TileDB's `expand_to_tiles`).
fn expand_to_tiles(schema: &ArraySchema, ranges: &[(i128, i128)]) -> Result<Vec<(i128, i128)>> {
    schema
        .dimensions
        .iter()
        .zip(ranges)
        .map(|(d, &(lo, hi))| {
            let g = DimGrid::of(d)?;
            Ok((g.tile_lo(g.tile_of(lo)), g.tile_lo(g.tile_of(hi) + 1) - 1))
        })
        .collect()
}

/// A fragment's size as TileDB's `FragmentMetadata::fragment_size` counts it: its data files
/// plus its metadata file.
pub(crate) fn fragment_size(array: &Array, f: &Fragment) -> Result<u64> {
    let m = &f.meta;
    Ok(m.file_sizes.iter().sum::<u64>()
        + m.file_var_sizes.iter().sum::<u64>()
        + m.file_validity_sizes.iter().sum::<u64>()
        + array.storage().size(&m.metadata_path())?)
}

/// `ranges` cut to the dimensions' domains: the last tile of a domain that is not a whole
/// number of tiles reaches past it.
fn within_domain(schema: &ArraySchema, ranges: &[(i128, i128)]) -> Result<Vec<(i128, i128)>> {
    schema
        .dimensions
        .iter()
        .zip(ranges)
        .map(|(d, &(lo, hi))| {
            let (dlo, dhi) = d.domain.as_ref().ok_or_else(|| {
                Error::corrupt(format!("dense dimension {} has no domain", d.name))
            })?;
            Ok((
                lo.max(value::as_i128(d.datatype, dlo)?),
                hi.min(value::as_i128(d.datatype, dhi)?),
            ))
        })
        .collect()
}

fn info(array: &Array, f: &Fragment) -> Result<Info> {
    let size = fragment_size(array, f)?;
    let schema = array.schema();
    let (ned, expanded) = if f.meta.dense {
        let ned = ned_of(schema, f)?;
        let ex = expand_to_tiles(schema, &ned)?;
        (ned, ex)
    } else {
        (Vec::new(), Vec::new())
    };
    Ok(Info {
        name: f.name().to_string(),
        cand: Candidate {
            size,
            ned,
            expanded,
        },
    })
}

/// Consolidates the fragments of the array at `uri`.
pub(crate) fn consolidate(uri: &str, options: &ConsolidateOptions) -> Result<ConsolidateReport> {
    // A consolidation killed between its commit and its vacuum file is completed first.
    {
        let (storage, root) = crate::storage::Storage::open(uri, &options.config)?;
        pending::complete(&storage, &root)?;
    }
    let array = open(uri, options)?;
    let mut report = ConsolidateReport::default();
    if let Some(list) = &options.fragment_list {
        return explicit(uri, &array, list, options);
    }
    let dense = array.schema().is_dense();
    let mut infos = Vec::new();
    let mut anterior: Vec<(i128, i128)> = Vec::new();
    for f in array.fragments() {
        let (t1, t2) = f.timestamps();
        if t1 < options.timestamp_start {
            if f.meta.dense {
                for (i, r) in ned_of(array.schema(), f)?.into_iter().enumerate() {
                    match anterior.get_mut(i) {
                        Some(a) => *a = (a.0.min(r.0), a.1.max(r.1)),
                        None => anterior.push(r),
                    }
                }
            }
        } else if t2 <= options.timestamp_end {
            infos.push(info(&array, f)?);
        }
    }
    let config = PlanConfig {
        amplification: options.amplification,
        min_frags: options.step_min_frags,
        max_frags: options.step_max_frags,
        size_ratio: options.step_size_ratio,
    };
    let mut step = 0u32;
    loop {
        if infos.len() <= 1 {
            break;
        }
        let cands: Vec<Candidate> = infos.iter().map(|i| i.cand.clone()).collect();
        let Some(p) = plan::next(&cands, &anterior, dense, &config) else {
            break;
        };
        if p.count <= 1 {
            break;
        }
        let chosen: Vec<String> = infos[p.first..p.first + p.count]
            .iter()
            .map(|i| i.name.clone())
            .collect();
        let name = merge_fragments(uri, options, &chosen, &p.union, &mut report)?;
        let array = open(uri, options)?;
        let f = array
            .fragments()
            .iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| Error::Internal(format!("the new fragment {name} is not visible")))?;
        infos.splice(p.first..p.first + p.count, [info(&array, f)?]);
        step += 1;
        if step >= options.steps {
            break;
        }
    }
    Ok(report)
}

/// TileDB's `consolidate_fragments`: exactly the listed fragments.
fn explicit(
    uri: &str,
    array: &Array,
    list: &[String],
    options: &ConsolidateOptions,
) -> Result<ConsolidateReport> {
    let mut report = ConsolidateReport::default();
    if list.len() <= 1 {
        return Ok(report);
    }
    let wanted: Vec<&str> = list
        .iter()
        .map(|u| u.trim_end_matches('/').rsplit('/').next().unwrap_or(u))
        .collect();
    let chosen: Vec<&Fragment> = array
        .fragments()
        .iter()
        .filter(|f| wanted.contains(&f.name()))
        .collect();
    if chosen.len() != list.len() {
        return Err(Error::invalid(format!(
            "Cannot consolidate; Found {} of {} required fragments.",
            chosen.len(),
            list.len()
        )));
    }
    let schema = array.schema();
    let mut union: Vec<(i128, i128)> = Vec::new();
    if schema.is_dense() {
        for f in &chosen {
            for (i, r) in ned_of(schema, f)?.into_iter().enumerate() {
                match union.get_mut(i) {
                    Some(a) => *a = (a.0.min(r.0), a.1.max(r.1)),
                    None => union.push(r),
                }
            }
        }
        let max_t = chosen.iter().map(|f| f.timestamps().1).max().unwrap_or(0);
        let expanded = expand_to_tiles(schema, &union)?;
        for f in array.fragments() {
            if wanted.contains(&f.name()) || f.timestamps().0 > max_t {
                continue;
            }
            let ned = ned_of(schema, f)?;
            if expanded
                .iter()
                .zip(&ned)
                .all(|(a, b)| a.0 <= b.1 && b.0 <= a.1)
            {
                return Err(Error::invalid(format!(
                    "Cannot consolidate; The non-empty domain of the fragment with URI: {} \
                     overlaps with the union of the non-empty domains of the fragments \
                     selected for consolidation and was created before these fragments",
                    f.name()
                )));
            }
        }
    }
    let names: Vec<String> = chosen.iter().map(|f| f.name().to_string()).collect();
    merge_fragments(uri, options, &names, &union, &mut report)?;
    Ok(report)
}

/// Merges fragments `chosen` (in the array's order) into a new fragment; returns its name.
fn merge_fragments(
    uri: &str,
    options: &ConsolidateOptions,
    chosen: &[String],
    union: &[(i128, i128)],
    report: &mut ConsolidateReport,
) -> Result<String> {
    let mut array = open(uri, options)?;
    let any_delete_meta = array.fragments().iter().any(|f| f.meta.has_delete_meta);
    array.retain_fragments(|f| chosen.iter().any(|c| c == f.name()));
    if array.fragments().len() != chosen.len() {
        return Err(Error::Internal(format!(
            "{} of the {} fragments to merge are visible",
            array.fragments().len(),
            chosen.len()
        )));
    }
    let frags = array.fragments();
    let t1 = frags[0].timestamps().0;
    let t2 = frags[frags.len() - 1].timestamps().1;
    let conditions = array.condition_commits();
    if let Some(c) = conditions.iter().find(|c| c.is_update) {
        return Err(Error::Unsupported(format!(
            "consolidating fragments with update commits is not implemented: {}",
            c.marker
        )));
    }
    let applies = conditions.iter().any(|c| c.timestamp >= t1);
    let merged_meta = frags.iter().any(|f| f.meta.has_delete_meta);
    // Without purge, delete metadata is written when a delete applies to the merged
    // fragments or any fragment of the array has delete metadata (TileDB's
    // `with_delete_meta`); dense arrays have no deletes.
    let delete_meta =
        !options.purge_deleted_cells && !array.schema().is_dense() && (applies || any_delete_meta);
    let deletes = if (options.purge_deleted_cells && (applies || merged_meta)) || delete_meta {
        Some(crate::array::read::deletes::load(&array)?)
    } else {
        None
    };
    let schema = array.schema().clone();
    let dense = schema.is_dense();
    let ranges = |r: &[(i128, i128)]| -> Vec<Range> {
        schema
            .dimensions
            .iter()
            .zip(r)
            .map(|(d, &(lo, hi))| {
                Range::Fixed(
                    value::from_i128(d.datatype, lo),
                    value::from_i128(d.datatype, hi),
                )
            })
            .collect()
    };
    let mut writer = Writer::open(uri, array.key(), Some(names::now_ms()), &options.config)?;
    writer.set_consolidation(Consolidation {
        timestamps: (t1, t2),
        with_timestamps: !dense,
        non_empty_domain: dense.then(|| ranges(union)),
        processed_conditions: conditions.iter().map(|c| c.marker.clone()).collect(),
        delete_meta,
    })?;
    if dense {
        let bx = expand_to_tiles(&schema, union)?;
        let bytes: Vec<u8> = ranges(&bx)
            .iter()
            .flat_map(|r| [r.lo().to_vec(), r.hi().to_vec()].concat())
            .collect();
        writer.set_subarray(&bytes)?;
        dense_copy(&array, &mut writer, &bx, options.buffer_size)?;
    } else {
        let mode = match deletes.as_deref() {
            None => merge::Deletes::Ignore,
            Some(d) if delete_meta => merge::Deletes::Meta(d),
            Some(d) => merge::Deletes::Purge(d),
        };
        merge::run(&array, &mut writer, options.buffer_size, mode)?;
    }
    let mut vac = String::new();
    for c in chosen {
        vac.push_str(&format!("/{}/{c}\n", names::FRAGMENTS_DIR));
    }
    // Crash safety: the vacuum file hides the merged fragments, so it may appear only after
    // the new fragment is committed (before, a reader would see neither). Locally it is
    // written whole as `<name>.vac.tmp` before the commit and renamed after it: a kill in
    // between leaves the temporary file, which the next consolidation or vacuum completes
    // ([`pending::complete`]); until then readers see the merged fragments beside the new
    // one, which hold the same cells (arrays with duplicates read them twice meanwhile).
    let storage = array.storage().clone();
    let commits = array.root().join(names::COMMITS_DIR);
    let root = array.root().clone();
    let mut vac_tmp = None;
    let finalized = writer.finalize_with(|name| {
        if !storage.is_local() {
            return Ok(());
        }
        if storage.create_dir(&commits)? {
            storage.sync_dir(&root)?;
        }
        let tmp = commits.join(format!("{name}{}", pending::VAC_TEMP_SUFFIX));
        storage
            .write_new(&tmp, vac.as_bytes())
            .map_err(|e| e.context(format!("vacuum file of {name}")))?;
        vac_tmp = Some(tmp);
        Ok(())
    });
    let name = match finalized {
        Ok(name) => name,
        Err(e) => {
            if let Some(tmp) = &vac_tmp {
                let _ = storage.remove_file(tmp);
            }
            return Err(e);
        }
    };
    report
        .written
        .push(format!("{}/{name}/", names::FRAGMENTS_DIR));
    report.written.push(format!(
        "{}/{}",
        names::COMMITS_DIR,
        names::commit_file_name(&name)
    ));
    let vac_name = format!("{name}.vac");
    let vac_uri = commits.join(&vac_name);
    match &vac_tmp {
        Some(tmp) => storage.rename(tmp, &vac_uri),
        None => storage.write_new(&vac_uri, vac.as_bytes()),
    }
    .and_then(|()| storage.sync_dir(&commits))
    .map_err(|e| e.context(format!("vacuum file {vac_name}")))?;
    report
        .written
        .push(format!("{}/{vac_name}", names::COMMITS_DIR));
    report.merged.push(chosen.to_vec());
    Ok(name)
}

/// The index vectors of a box of `counts` per dimension in row-major (last fastest) or
/// col-major (first fastest) order.
fn odometer(counts: &[i128], col_major: bool) -> Vec<Vec<i128>> {
    let n = counts.len();
    let total: i128 = counts.iter().product();
    let mut out = Vec::with_capacity(total.max(0) as usize);
    let mut idx = vec![0i128; n];
    for _ in 0..total {
        out.push(idx.clone());
        let dims: Box<dyn Iterator<Item = usize>> = if col_major {
            Box::new(0..n)
        } else {
            Box::new((0..n).rev())
        };
        for d in dims {
            idx[d] += 1;
            if idx[d] < counts[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

/// The row-major positions (in box `bx`) of the box's cells in the global order: tiles in
/// tile order, cells in cell order inside each tile.
fn global_positions(
    schema: &ArraySchema,
    bx: &[(i128, i128)],
    read: &[(i128, i128)],
    ext: &[i128],
) -> Vec<Option<usize>> {
    let n = bx.len();
    let len: Vec<i128> = bx.iter().map(|(lo, hi)| hi - lo + 1).collect();
    let mut stride = vec![1i128; n];
    for d in (0..n.saturating_sub(1)).rev() {
        stride[d] = stride[d + 1] * (read[d + 1].1 - read[d + 1].0 + 1);
    }
    let tiles: Vec<i128> = len.iter().zip(ext).map(|(l, e)| l / e).collect();
    let tile_idx = odometer(&tiles, schema.tile_order == Layout::ColMajor);
    let cell_idx = odometer(ext, schema.cell_order == Layout::ColMajor);
    let mut out = Vec::with_capacity((len.iter().product::<i128>()).max(0) as usize);
    for t in &tile_idx {
        for c in &cell_idx {
            let mut p = Some(0i128);
            for d in 0..n {
                let x = bx[d].0 + t[d] * ext[d] + c[d];
                p = match p {
                    Some(p) if read[d].0 <= x && x <= read[d].1 => {
                        Some(p + (x - read[d].0) * stride[d])
                    }
                    _ => None,
                };
            }
            out.push(p.map(|p| p as usize));
        }
    }
    out
}

/// Field `f`'s cells at `positions` (None: the attribute's fill value, a cell outside the
/// domain).
fn gather(f: &FieldData, positions: &[Option<usize>], fill: (&[u8], u8)) -> FieldData {
    let mut data = Vec::with_capacity(f.data.len());
    let mut offsets = f
        .offsets
        .as_ref()
        .map(|_| Vec::with_capacity(positions.len()));
    for &p in positions {
        if let Some(o) = offsets.as_mut() {
            o.push(data.len() as u64);
        }
        data.extend_from_slice(p.map_or(fill.0, |p| f.cell(p)));
    }
    FieldData {
        name: f.name.clone(),
        datatype: f.datatype,
        cell_val_num: f.cell_val_num,
        data,
        offsets,
        validity: f.validity.as_ref().map(|v| {
            positions
                .iter()
                .map(|&p| p.map_or(fill.1, |p| v[p]))
                .collect()
        }),
        cell_count: positions.len() as u64,
    }
}

/// Copies the tile-aligned box `bx` from the merged fragments of `array` into `writer` in
/// global order: the whole box in one read when its cells fit in `buffer_size` bytes per
/// field, else one tile at a time.
fn dense_copy(
    array: &Array,
    writer: &mut Writer,
    bx: &[(i128, i128)],
    buffer_size: u64,
) -> Result<()> {
    let schema = array.schema();
    let ext: Vec<i128> = schema
        .dimensions
        .iter()
        .map(|d| {
            let (_, e) = dense_grid(d)?;
            Ok(value::as_u64_extent(d.datatype, e)? as i128)
        })
        .collect::<Result<_>>()?;
    let names: Vec<&str> = schema.attributes.iter().map(|a| a.name.as_str()).collect();
    let cells: i128 = bx.iter().map(|(lo, hi)| hi - lo + 1).product();
    let widest = schema
        .attributes
        .iter()
        .map(|a| a.cell_size().unwrap_or(16) as i128)
        .max()
        .unwrap_or(1);
    let whole = cells.saturating_mul(widest) <= buffer_size as i128;
    let boxes: Vec<Vec<(i128, i128)>> = if whole {
        vec![bx.to_vec()]
    } else {
        let tiles: Vec<i128> = bx
            .iter()
            .zip(&ext)
            .map(|((lo, hi), e)| (hi - lo + 1) / e)
            .collect();
        odometer(&tiles, schema.tile_order == Layout::ColMajor)
            .into_iter()
            .map(|t| {
                bx.iter()
                    .zip(&ext)
                    .zip(&t)
                    .map(|(((lo, _), e), k)| (lo + k * e, lo + (k + 1) * e - 1))
                    .collect()
            })
            .collect()
    };
    for b in boxes {
        // The last tile of a domain that is not a whole number of tiles reaches past it:
        // its cells there hold fill values, as TileDB's consolidated tiles do.
        let inside = within_domain(schema, &b)?;
        let ranges: Vec<Range> = schema
            .dimensions
            .iter()
            .zip(&inside)
            .map(|(d, &(lo, hi))| {
                Range::Fixed(
                    value::from_i128(d.datatype, lo),
                    value::from_i128(d.datatype, hi),
                )
            })
            .collect();
        let fields = array.read(&names, Some(&ranges))?;
        let positions = global_positions(schema, &b, &inside, &ext);
        for f in fields {
            let a = schema
                .attribute_index(&f.name)
                .map(|i| &schema.attributes[i])
                .ok_or_else(|| Error::Internal(format!("read an unknown attribute {}", f.name)))?;
            let g = gather(&f, &positions, (&a.fill_value, a.fill_validity));
            if let Some(o) = g.offsets {
                writer.set_offsets_owned(&g.name, o)?;
            }
            if let Some(v) = &g.validity {
                writer.set_validity(&g.name, v)?;
            }
            writer.set_data_owned(&g.name, g.data)?;
        }
        writer.submit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::WriteLayout;
    use crate::array::lifecycle::{EvolveOptions, evolve_json};
    use crate::storage::StorageConfig;

    fn le(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn ints(b: &[u8]) -> Vec<i32> {
        b.chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    /// Cells (d, a, b) read at `t` with `names`.
    fn cells(uri: &str, t: u64, names: &[&str]) -> Vec<Vec<i32>> {
        let a = Array::open(
            uri,
            &OpenOptions {
                timestamp_end: Some(t),
                ..OpenOptions::default()
            },
        )
        .unwrap();
        let f = a.read(names, None).unwrap();
        f.iter().map(|f| ints(&f.data)).collect()
    }

    /// Issue 30: an evolution stamped after `now` (writers write with it, a read at `now`
    /// does not see it) is the schema the consolidation reads with, as TileDB's: the merged
    /// fragment holds the added attribute (fill values for the older cells).
    #[test]
    fn consolidation_after_an_evolution_stamped_in_the_future() {
        let dir = std::env::temp_dir().join(format!(
            "tdbf_consolidate_future_schema_{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let uri = dir.to_str().unwrap();
        let schema = ArraySchema::from_json(
            r#"{"sparse": true, "capacity": 2,
            "dimensions": [{"name": "d", "type": "INT32", "domain": [0, 63], "tile": 8}],
            "attributes": [{"name": "a", "type": "INT32"}]}"#,
        )
        .unwrap();
        crate::array::create(uri, &schema, None, &StorageConfig::new()).unwrap();
        let now = names::now_ms();
        let write = |t: u64, d: &[i32], a: &[i32], b: Option<&[i32]>| {
            let mut w = Writer::open(uri, None, Some(t), &StorageConfig::new()).unwrap();
            w.set_layout(WriteLayout::Unordered).unwrap();
            w.set_data("d", &le(d)).unwrap();
            w.set_data("a", &le(a)).unwrap();
            if let Some(b) = b {
                w.set_data("b", &le(b)).unwrap();
            }
            w.submit().unwrap();
            w.finalize().unwrap();
        };
        write(now - 2, &[1, 2, 9], &[10, 20, 90], None);
        let future = now + 3_600_000;
        evolve_json(
            uri,
            r#"[{"add_attribute": {"name": "b", "type": "INT32", "fill": -7}}]"#,
            &EvolveOptions {
                timestamp: Some(future),
                ..EvolveOptions::default()
            },
        )
        .unwrap();
        // Written with the newest schema, before its timestamp.
        write(now - 1, &[2, 3], &[21, 30], Some(&[22, 33]));
        let want_now = vec![vec![1, 2, 3, 9], vec![10, 21, 30, 90]];
        let want_later = vec![vec![1, 2, 3, 9], vec![10, 21, 30, 90], vec![-7, 22, 33, -7]];
        assert_eq!(cells(uri, now, &["d", "a"]), want_now);
        assert_eq!(cells(uri, future, &["d", "a", "b"]), want_later);
        let r = super::super::consolidate(
            uri,
            &ConsolidateOptions::new(super::super::ConsolidateMode::Fragments),
        )
        .unwrap();
        assert_eq!(r.merged.len(), 1);
        assert_eq!(r.merged[0].len(), 2);
        let a = Array::open(uri, &OpenOptions::default()).unwrap();
        let names: Vec<&str> = a.fragments().iter().map(|f| f.name()).collect();
        assert_eq!(a.fragments().len(), 1, "{names:?}");
        let f = &a.fragments()[0];
        assert_eq!(f.timestamps(), (now - 2, now - 1));
        assert!(
            f.schema.attribute_index("b").is_some(),
            "the merged fragment is written with the newest schema"
        );
        assert_eq!(cells(uri, now, &["d", "a"]), want_now);
        assert_eq!(cells(uri, future, &["d", "a", "b"]), want_later);
        // Older reads are unchanged: the first write alone at its timestamp.
        assert_eq!(
            cells(uri, now - 2, &["d", "a"]),
            vec![vec![1, 2, 9], vec![10, 20, 90]]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn odometer_orders() {
        assert_eq!(
            odometer(&[2, 2], false),
            [vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]
        );
        assert_eq!(
            odometer(&[2, 2], true),
            [vec![0, 0], vec![1, 0], vec![0, 1], vec![1, 1]]
        );
    }
}
